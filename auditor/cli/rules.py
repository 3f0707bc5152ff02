"""kafka-audit rules: list and explain the rules (auditor/commands/rules.py renders them)."""

from __future__ import annotations

import sys
from enum import Enum
from typing import Annotated

import typer

from auditor.errors import UsageError

app = typer.Typer(help="List and explain the rules.", no_args_is_help=False, invoke_without_command=True)


class RulesFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


FormatOpt = Annotated[RulesFormat, typer.Option("--format", "-f")]


@app.callback()
def rules_default(ctx: typer.Context, fmt: FormatOpt = RulesFormat.table):
    """With no subcommand: the same as `rules list`."""
    if ctx.invoked_subcommand is None:
        rules_list(fmt)


@app.command("list")
def rules_list(fmt: FormatOpt = RulesFormat.table):
    """Every rule: code, name, severity, category, summary."""
    from auditor.commands import rules

    sys.stdout.write(rules.render_list(fmt.value))


@app.command("explain")
def rules_explain(
    rule: Annotated[str, typer.Argument(help="A rule code (REP002) or name (min-isr-equals-rf).")],
    fmt: FormatOpt = RulesFormat.table,
):
    """A rule's full documentation: why, remediation, example, parameters."""
    from auditor.commands import rules
    from auditor.registry import load_rules, resolve

    load_rules()
    matches = resolve(rule, "rules explain")
    if len(matches) != 1:
        raise UsageError(f"rules explain: '{rule}' names {len(matches)} rules; give one code or name")
    sys.stdout.write(rules.render_one(matches[0], fmt.value))
