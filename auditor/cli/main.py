"""The kafka-audit command line (typer): one module per command under auditor/cli/, each a thin
layer of options over the application in auditor/commands/ (options -> command -> render ->
exit code). Exit codes live in auditor.exitcodes.

A command is one module plus one entry in COMMANDS: module ``auditor.cli.<entry>`` defines the
command as a function of the same name (``def check(...)``), or a typer app of subcommands as
``app`` (``rules``). Only the command being run is imported and built (``LazyCommands``): its
module, its options and what they import; `--help` and shell completion build them all.
Heavy modules (duckdb, sqlframe, pyspark, boto3, the collectors) are imported inside the
commands that need them, so `kafka-audit lint` never imports a collector and `rules` never
duckdb (tests/test_cli_startup.py).
"""

from __future__ import annotations

import os
import sys
from importlib import import_module
from typing import Annotated

import typer
from typer._click.exceptions import UsageError as ClickUsageError
from typer.core import TyperGroup

from auditor import __version__, exitcodes
from auditor.errors import AuditorError
from auditor.stderr import say

# The commands, in the order --help lists them.
COMMANDS = ("check", "fleet", "collect", "preflight", "wait", "lint", "mcp", "rules")


class LazyCommands(TyperGroup):
    """The root group: its commands listed from COMMANDS, each built from its module on first
    use. typer builds a click command per command with every option's parameter; doing that for
    one command instead of all (and importing one command's module) is most of what a bare
    `lint` or `check` paid before it read a byte (bench/RESULTS.md, issue 46)."""

    def list_commands(self, ctx) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx, cmd_name: str):
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            self.commands[cmd_name] = build_command(cmd_name)
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx, args):
        """click's, with typer's "Did you mean ...?" from COMMANDS (typer reads the commands
        already built)."""
        from difflib import get_close_matches

        try:
            return super().resolve_command(ctx, args)
        except ClickUsageError as e:
            unknown = args and e.message.startswith("No such command") and "Did you mean" not in e.message
            matches = get_close_matches(args[0], COMMANDS) if unknown else []
            if matches:
                e.message = f"{e.message.rstrip('.')}. Did you mean {', '.join(map(repr, matches))}?"
            raise


def build_command(name: str):
    """The click command of COMMANDS entry ``name``, built by typer from its module."""
    from auditor.cli.help import tidy
    from auditor.cli.values import convert_without_adapters

    module = import_module(f"auditor.cli.{name}")
    sub_app = getattr(module, "app", None)
    if sub_app is None:
        sub_app = typer.Typer(add_completion=False)
        sub_app.command(name=name)(getattr(module, name))
    else:
        sub_app._add_completion = False
    command = typer.main.get_command(sub_app)
    command.name = name
    convert_without_adapters(command)
    return tidy(command)


app = typer.Typer(
    name="kafka-audit",
    help="Kafka cluster configuration linter and static auditor.",
    cls=LazyCommands,
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool):
    if value:
        typer.echo(f"kafka-audit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
):
    """Collect a snapshot of a Kafka cluster, then lint it: exit 0 clean, 1 findings, 2 usage, 3 incomplete."""


def main() -> None:
    """Console entry point: one-line errors with the right exit code, never a traceback for bad input."""
    from auditor.cli.help import tidy as tidy_help
    from auditor.cli.values import convert_without_adapters

    try:
        # standalone_mode=False: click returns the exit code instead of exiting itself. tidy:
        # readable --help (metavars, choices, Rich-escaped text: auditor/cli/help.py).
        root = typer.main.get_command(app)
        convert_without_adapters(root)
        code = tidy_help(root)(standalone_mode=False)
    except AuditorError as e:  # names a file or a cluster: shown with its control characters made visible
        say(e)
        sys.exit(e.exit_code)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except typer.Abort:
        say("aborted")
        sys.exit(exitcodes.USAGE)
    except KeyboardInterrupt:
        say("interrupted")
        sys.exit(130)
    except Exception as e:  # click usage errors and anything unexpected
        if callable(getattr(e, "show", None)) and hasattr(e, "exit_code"):  # click.ClickException
            e.show()
            sys.exit(exitcodes.USAGE)
        if os.environ.get("KAFKA_AUDIT_DEBUG"):
            raise
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        say(f"internal error: {type(e).__name__}: {first} (set KAFKA_AUDIT_DEBUG=1 for details)")
        sys.exit(exitcodes.USAGE)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
