"""kafka-audit fleet: options -> auditor.commands.fleet -> the summary (and HTML) -> the exit code."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from auditor.cli.options import (
    ConfigOpt,
    EngineName,
    FailOnOpt,
    IgnoreOpt,
    RunDateOpt,
    SelectOpt,
    StatisticsOpt,
    WriteBaselineOpt,
)
from auditor.cli.output import (
    exit_with,
    read_baseline,
    rule_choice,
    statistics,
    write,
    write_baseline_and_exit,
    write_report,
)
from auditor.errors import UsageError
from auditor.stderr import say

FLEET_FORMATS = ("text", "json", "github")


def fleet(
    root: Annotated[
        str,
        typer.Argument(
            help="Root holding many snapshot directories: a path, file://, s3a:// or hdfs:// URI."
        ),
    ],
    engine: Annotated[
        EngineName, typer.Option(help="spark (default: local[*] or --master) or duckdb.")
    ] = EngineName.spark,
    master: Annotated[
        str | None, typer.Option(help="Spark master URL, e.g. spark://host:7077 or yarn.")
    ] = None,
    out: Annotated[
        str | None,
        typer.Option(
            "--out", help="Findings root: writes OUT/run_date=DATE/cluster=NAME/*.parquet and _summary.json."
        ),
    ] = None,
    previous: Annotated[
        str | None,
        typer.Option(
            "--previous",
            help="An earlier findings root (or run): mark findings new/persisting and count resolved ones.",
        ),
    ] = None,
    run_date: RunDateOpt = None,
    fmt: Annotated[
        str,
        typer.Option(
            "--format", "-f", help="text, json (the summary) or github (annotations of the findings shown)."
        ),
    ] = "text",
    top: Annotated[int, typer.Option(help="Findings per rule that reach the driver and the report.")] = 20,
    html: Annotated[
        Path | None, typer.Option("--html", help="Also write the fleet HTML report here.")
    ] = None,
    fail_on: FailOnOpt = None,
    config: ConfigOpt = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    statistics_only: StatisticsOpt = False,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            help="Leave out the findings of this baseline file (from every count and the Parquet rows); says how many matched and which are stale.",
        ),
    ] = None,
    write_baseline_to: WriteBaselineOpt = None,
):
    """The weekly fleet-wide audit: every snapshot under ROOT, cluster and fleet (FLT) rules."""
    import json

    from auditor import progress
    from auditor.commands.collect import run_date_of
    from auditor.commands.fleet import audit_result, note_replaced_run, run_fleet, summary_json, write_summary
    from auditor.config import find_config
    from auditor.engine import open_engine
    from auditor.render import fleet_text, render

    if fmt not in FLEET_FORMATS:
        raise UsageError(f"--format must be text, json or github, not '{fmt}'")
    run_date = run_date_of(run_date)
    cfg = rule_choice(find_config(config), select, ignore, "--select/--ignore")
    known = read_baseline(baseline, write_baseline_to)
    note_replaced_run(out, run_date)
    engine_name = "spark" if master else engine.value
    with progress.for_stderr() as shown:
        shown.stage(f"starting {engine_name}" + (f" ({master})" if master else ""))
        with open_engine(engine_name, master=master) as eng:
            result = run_fleet(
                eng,
                root,
                cfg,
                out=out,
                previous=previous,
                run_date=run_date,
                top_n=top,
                progress=shown,
                baseline=known,
                keep_entries=write_baseline_to is not None,
            )
    if write_baseline_to is not None:
        write_baseline_and_exit(result.baseline_entries, write_baseline_to)
    if result.baseline is not None and result.baseline.foreign:
        say(f"warning: {result.baseline.foreign}")
    write_summary(result)
    if html is not None:
        write(render("html", audit_result(result), title=f"kafka-audit fleet report {result.run_date}"), html)
        say(f"{html}: fleet HTML report of {len(result.clusters)} cluster(s) written")
    if statistics_only:
        from auditor.render.statistics import per_rule

        rows = (
            {"rule": r["rule"], "name": r["name"], "severity": r["severity"], "count": r["findings"]}
            for r in result.rules
        )
        statistics("fleet", per_rule(rows), fmt, None)
    elif fmt == "github":
        write(render("github", audit_result(result)), None)
    elif fmt == "json":
        write(json.dumps(summary_json(result), indent=2) + "\n", None)
    else:
        write_report("text", fleet_text.render(result), None)
    exit_with(
        failing=result.failing(fail_on.value if fail_on else cfg.fail_on), incomplete=bool(result.incomplete)
    )
