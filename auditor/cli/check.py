"""kafka-audit check: options -> auditor.commands.check -> a report -> the exit code."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from auditor.cli.options import (
    BaselineOpt,
    ConfigOpt,
    EngineName,
    EngineOpt,
    FailOnOpt,
    FormatOpt,
    IgnoreOpt,
    OutputOpt,
    SelectOpt,
    StatisticsOpt,
    WriteBaselineOpt,
    with_sources,
)
from auditor.cli.output import (
    exit_with,
    read_baseline,
    report_format,
    rule_choice,
    statistics,
    tell_baseline,
    write_baseline_and_exit,
    write_report,
)
from auditor.sources import Sources


@with_sources
def check(
    target: Annotated[
        Path | None,
        typer.Argument(help="A snapshot directory, or a directory holding several (or give SOURCES)."),
    ] = None,
    fmt: FormatOpt = None,
    output: OutputOpt = None,
    fail_on: FailOnOpt = None,
    config: ConfigOpt = None,
    engine: EngineOpt = EngineName.duckdb,
    master: Annotated[str | None, typer.Option(help="Spark master URL (implies --engine spark).")] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    statistics_only: StatisticsOpt = False,
    baseline: BaselineOpt = None,
    write_baseline_to: WriteBaselineOpt = None,
    *,
    sources: Sources,
):
    """Audit one or more snapshots (or collect one from SOURCES first) and report findings."""
    from auditor.baseline import Entry
    from auditor.commands.check import run_check
    from auditor.config import find_config
    from auditor.render import FORMATS, render
    from auditor.render.statistics import per_rule

    fmt = report_format("check", fmt and fmt.value, output, FORMATS)
    cfg = rule_choice(find_config(config), select, ignore, "--select/--ignore")
    known = read_baseline(baseline, write_baseline_to)
    result = run_check(
        target, sources, cfg, engine_name="spark" if master else engine.value, master=master, baseline=known
    )
    if write_baseline_to is not None:
        write_baseline_and_exit(map(Entry.of, result.findings), write_baseline_to)
    if result.baseline is not None:
        tell_baseline(result.baseline, result.notes, in_report=fmt == "text")
    if statistics_only:
        statistics("check", per_rule(result.cluster_rule_counts()), fmt, output)
    else:
        write_report(fmt, render(fmt, result), output)
    exit_with(
        failing=result.failing(fail_on.value if fail_on else cfg.fail_on), incomplete=result.is_incomplete
    )
