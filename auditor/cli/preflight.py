"""kafka-audit preflight: options -> auditor.commands.preflight -> the verdicts (and a fix plan) -> the exit code."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from auditor.cli.options import ConfigOpt, EngineName, EngineOpt, OutputOpt, with_sources
from auditor.cli.output import exit_with, report_format, rule_choice, write, write_report
from auditor.sources import Sources
from auditor.stderr import say


class PreflightFormat(str, Enum):
    text = "text"
    json = "json"
    html = "html"


@with_sources
def preflight(
    target: Annotated[
        Path | None,
        typer.Argument(help="A snapshot directory (or a directory holding several), or give SOURCES."),
    ] = None,
    broker: Annotated[
        list[int] | None, typer.Option("--broker", help="Simulate only this broker id (repeatable).")
    ] = None,
    fmt: Annotated[
        PreflightFormat | None,
        typer.Option("--format", "-f", help="Output format (default: from -o's extension, else text)."),
    ] = None,
    output: OutputOpt = None,
    fix_plan: Annotated[
        Path | None,
        typer.Option(
            "--fix-plan",
            help="Write the fix plan (commands, reassignment JSON, conditions to wait for) to this file for a person to review; nothing is executed.",
        ),
    ] = None,
    target_version: Annotated[
        str | None,
        typer.Option(
            "--target-version",
            help="Upgrade preflight: also check readiness for this Kafka version (4.0: clients KIP-896 removes, unidentified clients, DSK003, CTL009).",
        ),
    ] = None,
    config: ConfigOpt = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option(
            "--ignore",
            help="Rules not to run (codes, names or prefixes, comma-separated, repeatable): added to the config file's ignore. Preflight's rules are fixed, so there is no --select.",
        ),
    ] = None,
    engine: EngineOpt = EngineName.duckdb,
    *,
    sources: Sources,
):
    """Before a rolling restart (MSK patch): can each broker be restarted now, and what breaks if it is?
    Exit 0 all safe, 1 a broker or controller is unsafe or the roll is a planned metadata outage (a KRaft
    quorum of one or two controllers), 2 usage error, 3 snapshot incomplete (or nothing to simulate)."""
    from auditor.commands.preflight import preflight_of
    from auditor.config import find_config
    from auditor.render.preflight_render import FORMATS as PREFLIGHT_FORMATS
    from auditor.render.preflight_render import fix_plan_file
    from auditor.render.preflight_render import render as render_preflight

    fmt = report_format("preflight", fmt and fmt.value, output, PREFLIGHT_FORMATS)
    cfg = rule_choice(find_config(config), None, ignore, "--ignore")
    pre = preflight_of(
        target, sources, cfg, brokers=broker or None, target_version=target_version, engine_name=engine.value
    )
    write_report(fmt, render_preflight(fmt, pre), output)
    if fix_plan is not None:
        write(fix_plan_file(pre), fix_plan)
        planned = sum(c.plan is not None for c in pre.clusters)
        say(
            f"{fix_plan}: fix plan of {planned} of {len(pre.clusters)} cluster(s) written "
            "(a script to review; nothing was executed)"
        )
    exit_with(
        failing=pre.any_unsafe or pre.any_outage or bool(pre.upgrade_blockers), incomplete=pre.incomplete
    )
