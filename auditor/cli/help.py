"""What `--help` shows for each option's value: a name a person reads (``FILE``, ``CODES``,
``HOST:PORT``), never a Python type (``<list[str]>``, ``<bool>``); flags show none; a choice
shows its values in the help text, so the option column keeps its full names. Help texts are
escaped for Rich, which would otherwise take ``[tool.kafka-audit]`` for markup and drop it.

Applied to the click command typer builds from the app (``tidy``, in auditor/cli/main.py's
``main``), to the options that do not name a metavar of their own.
"""

from __future__ import annotations

import typing
from pathlib import Path

# By option name: what its value is.
METAVARS = {
    "--config": "FILE",
    "--baseline": "FILE",
    "--write-baseline": "FILE",
    "--html": "FILE",
    "--fix-plan": "FILE",
    "--command-config": "FILE",
    "--inventory": "FILE",
    "--out": "DIR",
    "--previous": "DIR",
    "--against": "SNAPSHOT_DIR",
    "--select": "CODES",
    "--ignore": "CODES",
    "--bootstrap-servers": "HOST:PORT",
    "--zookeeper": "HOST:PORT",
    "--broker-config": "FILE|DIR",
    "--metrics": "URL|FILE",
    "--master": "URL",
    "--cluster-name": "NAME",
    "--msk-cluster-arn": "ARN",
    "--msk-region": "REGION",
    "--kafka-version": "VERSION",
    "--target-version": "VERSION",
    "--run-date": "DATE",
    "--timeout": "SECONDS",
    "--deadline": "SECONDS",
    "--broker": "ID",
    "--top": "N",
    "--parallel": "N",
    "--msk-topics": "MODE",
    "--broker-id": "ID",
    "--interval": "SECONDS",
    "--max-wait": "SECONDS",
}
# By type, for the rest.
BY_TYPE = {str: "TEXT", Path: "PATH", int: "N", float: "NUMBER"}


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)


def _tidy_parameter(param) -> None:
    if getattr(param, "_kafka_audit_tidy", False):
        return  # shared by several commands, or tidied on an earlier call
    param._kafka_audit_tidy = True
    if getattr(param, "help", None):
        param.help = _escape(param.help)
    _alias_out_of_column(param)
    desc = getattr(param, "type_descriptor", None)
    if desc is None or param.metavar is not None:
        return
    if not param.opts[0].startswith("-"):  # an argument: its name is shown; its type in words
        inner = typing.get_args(desc.annotation)[0] if desc.is_list else desc.annotation
        label = BY_TYPE.get(inner, "TEXT") + ("..." if desc.is_list else "")
        param.display_type_rich = lambda ctx, label=label: label
        return
    if getattr(param, "is_flag", False):
        param.metavar = ""  # a flag takes no value
        return
    names = [o for o in param.opts if o.startswith("--")]
    if desc.is_choice:
        values = ", ".join(str(getattr(c, "value", c)) for c in desc.choices or ())
        named = next((METAVARS[n] for n in names if n in METAVARS), None)
        param.metavar = named or (
            names[0].removeprefix("--").upper().replace("-", "_") if names else "CHOICE"
        )
        param.help = f"{param.help or ''} One of: {values}.".strip()
        return
    named = next((METAVARS[n] for n in names if n in METAVARS), None)
    if named is None and desc.annotation is Path:  # -o: a report file, or collect's snapshot directory
        named = "DIR" if "directory" in (param.help or "").lower() else "FILE"
    inner = typing.get_args(desc.annotation)[0] if desc.is_list else desc.annotation
    param.metavar = named or BY_TYPE.get(inner, "TEXT") + ("..." if desc.is_list else "")


def _alias_out_of_column(param) -> None:
    """A second long name (``--bootstrap-server``, Kafka's own spelling) is named in the help text,
    not in the option column, which Rich truncates at 80 columns; the parser still takes it."""
    longs = [o for o in param.opts if o.startswith("--")]
    aliases = longs[1:]
    if not aliases:
        return
    shown = [o for o in param.opts if o not in aliases]
    param.opts = shown
    param.help = f"{param.help or ''} Also: {', '.join(aliases)}.".strip()
    add = param.add_to_parser

    def add_to_parser(parser, ctx):
        param.opts = shown + aliases  # parsed under every name, shown under the first
        try:
            return add(parser, ctx)
        finally:
            param.opts = shown

    param.add_to_parser = add_to_parser


def each_parameter(command, apply) -> None:
    """``apply(param)`` on every parameter of ``command`` and its subcommands, and on each
    --help option click makes anew per context, as it is made (tidy; cli/values.py)."""
    todo = [command]
    while todo:
        current = todo.pop()
        for param in current.params:
            apply(param)
        _on_help_option(current, apply)
        todo.extend(getattr(current, "commands", {}).values())


def _on_help_option(command, apply) -> None:
    make = command.get_help_option

    def get_help_option(ctx):
        option = make(ctx)
        if option is not None:
            apply(option)
        return option

    command.get_help_option = get_help_option


def tidy(command):
    """``command`` (a click command or group built by typer) with every option tidied; returned."""
    each_parameter(command, _tidy_parameter)
    return command
