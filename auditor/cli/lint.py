"""kafka-audit lint: options -> auditor.lint (change review of files) -> findings at file:line -> the exit code."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from auditor.cli.options import (
    BaselineOpt,
    ConfigOpt,
    FailOnOpt,
    IgnoreOpt,
    OutputFormat,
    OutputOpt,
    SelectOpt,
    StatisticsOpt,
    WriteBaselineOpt,
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
from auditor.findings import WARNING_PREFIX
from auditor.stderr import say


def lint(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Broker properties files, topic YAML files (plain list, Strimzi or jikkou KafkaTopic, topicctl, kafka-gitops, JulieOps), Terraform (.tf, .tfvars, a plan as JSON), Strimzi Kafka/KafkaNodePool, Confluent for Kubernetes, Helm values, CloudFormation, compose files, cp-ansible inventories, templates of these (.tpl, .j2), or directories of them (recognised by content); - reads a stream of YAML documents from standard input (helm template ... | kafka-audit lint -); non-broker properties files are skipped with a note."
        ),
    ],
    against: Annotated[
        Path | None,
        typer.Option(
            "--against",
            help="Snapshot of the cluster the change lands on: adds its brokers, defaults and current thread counts (REP010, THR007).",
        ),
    ] = None,
    fmt: Annotated[
        OutputFormat | None,
        typer.Option(
            "--format",
            "-f",
            help="Output format (text: one file:line per finding; github: PR annotations). Default: from -o's extension, else text.",
        ),
    ] = None,
    output: OutputOpt = None,
    baseline: BaselineOpt = None,
    write_baseline_to: WriteBaselineOpt = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    statistics_only: StatisticsOpt = False,
    fail_on: FailOnOpt = None,
    config: ConfigOpt = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="A file in which no topic or broker definition is recognised, or that looks like Kafka configuration and could not be read, is an error (exit 2), not a warning.",
        ),
    ] = False,
):
    """Lint proposed Kafka configuration files (CI, pre-commit): findings at file:line."""
    from auditor.baseline import Entry
    from auditor.config import find_config
    from auditor.lint import run_lint
    from auditor.render import FORMATS, render

    fmt = report_format("lint", fmt and fmt.value, output, FORMATS)
    cfg = rule_choice(find_config(config), select, ignore, "--select/--ignore")
    # Writing a baseline records every current finding (a refresh drops the fixed ones).
    known = read_baseline(baseline, write_baseline_to)
    result = run_lint(
        files, against=str(against) if against else None, config=cfg, baseline=known, strict=strict
    )
    if fmt in ("json", "junit") or statistics_only or write_baseline_to is not None:
        # These reports have no place for notes: files skipped, warnings about the inputs go to
        # stderr. (The github format makes them annotations: render/github_render.py.)
        for note in result.notes:
            say(note if note.startswith(WARNING_PREFIX) else f"note: {note}")
    elif fmt != "text" and result.baseline is not None:  # the other reports may not show notes: say it here
        tell_baseline(result.baseline, [], in_report=False)
    if write_baseline_to is not None:
        write_baseline_and_exit(map(Entry.of, result.findings), write_baseline_to)
    if statistics_only:
        from auditor.render.statistics import per_rule

        statistics("lint", per_rule(result.cluster_rule_counts()), fmt, output)
    elif fmt == "text":
        from auditor.render.lint_text import render as render_lint_text

        write_report(fmt, render_lint_text(result), output)
    else:
        write_report(fmt, render(fmt, result), output)
    exit_with(
        failing=result.failing(fail_on.value if fail_on else cfg.fail_on), incomplete=result.is_incomplete
    )
