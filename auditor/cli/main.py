"""The kafka-audit command line (typer). Exit codes live in auditor.exitcodes.

Heavy modules (sqlframe, duckdb, pyspark) are imported inside the commands that need
them, so `kafka-audit rules` and `--help` start fast and never start a JVM.
"""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from auditor import __version__, exitcodes
from auditor.errors import AuditorError, UsageError

app = typer.Typer(
    name="kafka-audit",
    help="Kafka cluster configuration linter and static auditor.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
rules_app = typer.Typer(
    help="List and explain the rules.", no_args_is_help=False, invoke_without_command=True
)
app.add_typer(rules_app, name="rules")


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    html = "html"
    sarif = "sarif"
    junit = "junit"
    markdown = "markdown"
    github = "github"


# -o FILE without --format: the format its extension names (.txt: text, or github annotations).
FORMAT_OF_SUFFIX = {
    ".json": "json",
    ".sarif": "sarif",
    ".html": "html",
    ".md": "markdown",
    ".xml": "junit",
    ".txt": "text",
}
PLAIN_TEXT_FORMATS = ("text", "github")


class FailOn(str, Enum):
    info = "info"
    warning = "warning"
    error = "error"
    critical = "critical"
    never = "never"


class EngineName(str, Enum):
    duckdb = "duckdb"
    spark = "spark"


class RulesFormat(str, Enum):
    table = "table"
    json = "json"
    markdown = "markdown"


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


def _report_format(command: str, fmt: str | None, output: Path | None, choices) -> str:
    """The report's format: --format, else -o's extension, else text. `-o json` (a file named
    after a format, meant as -f) and a --format the extension contradicts are usage errors."""
    from auditor.render import FORMATS

    if output is not None:
        if output.name in FORMATS:
            raise UsageError(
                f"{command}: -o {output} names the output file; for the format give --format {output.name}"
            )
        # results.sarif.json: the common SARIF name (GitHub's upload-sarif examples use it)
        implied = (
            "sarif"
            if output.name.lower().endswith(".sarif.json")
            else FORMAT_OF_SUFFIX.get(output.suffix.lower())
        )
        if (
            fmt is not None
            and implied is not None
            and fmt != implied
            and not (implied == "text" and fmt in PLAIN_TEXT_FORMATS)
        ):
            raise UsageError(f"{command}: --format {fmt} contradicts -o {output} (a {implied} file name)")
        fmt = fmt or implied
    fmt = fmt or "text"
    if fmt not in choices:
        raise UsageError(
            f"{command}: the {fmt} format is not available here (choose one of {', '.join(choices)})"
        )
    return fmt


def _colour_wanted(output: Path | None) -> bool:
    """Colour on stdout only: never in a file (-o); NO_COLOR (any non-empty value, no-color.org)
    turns it off, FORCE_COLOR on even in a pipe; otherwise only on a terminal."""
    if output is not None or os.environ.get("NO_COLOR"):
        return False
    return bool(os.environ.get("FORCE_COLOR")) or sys.stdout.isatty()


def _write_text_report(text: str, output: Path | None) -> None:
    """A text report, with its severities in colour where _colour_wanted says so."""
    from auditor.render.text_render import colourise

    _write(colourise(text) if _colour_wanted(output) else text, output)


def _with_rule_choice(cfg, select: list[str] | None, ignore: list[str] | None, command: str):
    """The config with --select / --ignore applied as ruff does: --select replaces the config
    file's select, --ignore adds to its ignore (ignore wins over select). Values are
    comma-separated codes, names or code prefixes, as in the config file."""
    import dataclasses

    from auditor.registry import resolve

    def refs(values):
        return tuple(r.strip() for v in values or () for r in v.split(",") if r.strip())

    chosen, dropped = refs(select), refs(ignore)
    for ref in chosen + dropped:
        resolve(ref, command)  # an unknown code or name: one usage line
    if not (chosen or dropped):
        return cfg
    return dataclasses.replace(cfg, select=chosen or cfg.select, ignore=tuple(cfg.ignore) + dropped)


def _statistics(command: str, rows: list[dict], fmt: str, output: Path | None) -> None:
    """--statistics: the per-rule counts instead of the report (text or json)."""
    from auditor.render import statistics

    if fmt not in ("text", "json"):
        raise UsageError(f"{command}: --statistics is printed as text or json, not {fmt}")
    text = statistics.render(rows, fmt)
    if fmt == "text":
        _write_text_report(text, output)
    else:
        _write(text, output)


def _baseline(path: Path | None, write: Path | None):
    """--baseline FILE read (auditor/baseline.py); not when --write-baseline refreshes it."""
    from auditor import baseline

    return baseline.read(path) if path is not None and write is None else None


def _write_baseline(entries, path: Path) -> None:
    from auditor import baseline

    entries = list(entries)
    _write(baseline.document(entries), path)
    typer.echo(baseline.written_line(path, len(entries), len(baseline.unique(entries))), err=True)


def _tell_baseline(outcome, notes: list[str], *, in_report: bool) -> None:
    """Matched and stale baselined findings: a note of the text report, else a line on stderr.
    A baseline written for another cluster is said on stderr whatever the format."""
    if outcome.foreign:
        _say(f"warning: {outcome.foreign}")
    if in_report:
        notes.append(outcome.line())
    else:
        _say(f"note: {outcome.line()}")


def _write(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UsageError(f"{output}: cannot write ({e.strerror or e})") from None


@app.command()
def check(
    target: Annotated[
        Path | None,
        typer.Argument(help="A snapshot directory, or a directory holding several (or give SOURCES)."),
    ] = None,
    fmt: FormatOpt = None,
    output: OutputOpt = None,
    fail_on: Annotated[
        FailOn | None,
        typer.Option(
            help="Lowest severity that fails the run (exit 1). Default: the config's fail_on, else error."
        ),
    ] = None,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            help="kafka-audit.toml (default: ./kafka-audit.toml or [tool.kafka-audit] in ./pyproject.toml).",
        ),
    ] = None,
    engine: Annotated[
        EngineName, typer.Option(help="duckdb (embedded, default) or spark.")
    ] = EngineName.duckdb,
    master: Annotated[str | None, typer.Option(help="Spark master URL (implies --engine spark).")] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    statistics: StatisticsOpt = False,
    baseline: BaselineOpt = None,
    write_baseline: WriteBaselineOpt = None,
    bootstrap_servers: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    zookeeper: ZookeeperOpt = None,
    broker_config: BrokerConfigOpt = None,
    metrics: MetricsOpt = None,
    cluster_name: ClusterNameOpt = None,
    timeout: TimeoutOpt = 10.0,
):
    """Audit one or more snapshots (or collect one from SOURCES first) and report findings."""
    import tempfile

    from auditor import progress
    from auditor.baseline import Entry
    from auditor.baseline import apply as apply_baseline
    from auditor.config import find_config
    from auditor.engine import open_engine
    from auditor.engine.runner import run_audit
    from auditor.render import FORMATS, render
    from auditor.render.statistics import per_rule as stats_per_rule

    fmt = _report_format("check", fmt and fmt.value, output, FORMATS)
    cfg = _with_rule_choice(find_config(config), select, ignore, "--select/--ignore")
    known = _baseline(baseline, write_baseline)
    engine_name = "spark" if master else engine.value
    with tempfile.TemporaryDirectory(prefix="kafka-audit-") as workdir:
        refs = _snapshot_refs(
            target,
            workdir,
            dict(
                bootstrap_servers=bootstrap_servers,
                command_config=command_config,
                zookeeper=zookeeper,
                broker_config=broker_config,
                metrics=metrics,
                cluster_name=cluster_name,
                timeout=timeout,
            ),
        )
        # Spark takes tens of seconds: its stages on stderr (as fleet shows them); DuckDB about a second
        with progress.for_stderr() if engine_name == "spark" else progress.NO_PROGRESS as shown:
            shown.stage(f"starting {engine_name}" + (f" ({master})" if master else ""))
            with open_engine(engine_name, master=master) as eng:
                result = run_audit(eng, refs, cfg, progress=shown)
    if write_baseline is not None:
        _write_baseline(map(Entry.of, result.findings), write_baseline)
        raise typer.Exit(exitcodes.OK)
    if known is not None:
        result.findings[:], result.baseline = apply_baseline(
            known, result.findings, {c["name"] for c in result.clusters}
        )
        _tell_baseline(result.baseline, result.notes, in_report=fmt == "text")
    if statistics:
        _statistics("check", stats_per_rule(result.cluster_rule_counts()), fmt, output)
    elif fmt == "text":
        _write_text_report(render(fmt, result), output)
    else:
        _write(render(fmt, result), output)
    threshold = fail_on.value if fail_on else cfg.fail_on
    raise typer.Exit(exitcodes.for_result(failing=result.failing(threshold), incomplete=result.is_incomplete))


@app.command()
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
    run_date: Annotated[
        str | None, typer.Option(help="Date of this run (YYYY-MM-DD); default today.")
    ] = None,
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
    fail_on: Annotated[
        FailOn | None, typer.Option(help="Lowest severity that fails the run (exit 1).")
    ] = None,
    config: Annotated[str | None, typer.Option("--config", help="kafka-audit.toml.")] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    statistics: StatisticsOpt = False,
    baseline: Annotated[
        Path | None,
        typer.Option(
            "--baseline",
            help="Leave out the findings of this baseline file (from every count and the Parquet rows); says how many matched and which are stale.",
        ),
    ] = None,
    write_baseline: WriteBaselineOpt = None,
):
    """The weekly fleet-wide audit: every snapshot under ROOT, cluster and fleet (FLT) rules."""
    import json

    from auditor import progress
    from auditor.config import find_config
    from auditor.engine import open_engine
    from auditor.fleet import run_fleet, summary_json, write_summary
    from auditor.render import fleet_text

    if fmt not in ("text", "json", "github"):
        raise UsageError(f"--format must be text, json or github, not '{fmt}'")
    run_date = _run_date(run_date)
    cfg = _with_rule_choice(find_config(config), select, ignore, "--select/--ignore")
    known = _baseline(baseline, write_baseline)
    _note_replaced_run(out, run_date)
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
                keep_entries=write_baseline is not None,
            )
    if write_baseline is not None:
        _write_baseline(result.baseline_entries, write_baseline)
        raise typer.Exit(exitcodes.OK)
    if result.baseline is not None and result.baseline.foreign:
        _say(f"warning: {result.baseline.foreign}")
    write_summary(result)
    if html is not None:
        from auditor.fleet import audit_result
        from auditor.render import render

        _write(
            render("html", audit_result(result), title=f"kafka-audit fleet report {result.run_date}"), html
        )
        _say(f"{html}: fleet HTML report of {len(result.clusters)} cluster(s) written")
    if statistics:
        from auditor.render.statistics import per_rule

        _statistics(
            "fleet",
            per_rule(
                {"rule": r["rule"], "name": r["name"], "severity": r["severity"], "count": r["findings"]}
                for r in result.rules
            ),
            fmt,
            None,
        )
    elif fmt == "github":
        from auditor.fleet import audit_result
        from auditor.render import render

        _write(render("github", audit_result(result)), None)
    elif fmt == "json":
        _write(json.dumps(summary_json(result), indent=2) + "\n", None)
    else:
        _write_text_report(fleet_text.render(result), None)
    threshold = fail_on.value if fail_on else cfg.fail_on
    raise typer.Exit(
        exitcodes.for_result(failing=result.failing(threshold), incomplete=bool(result.incomplete))
    )


# --- collect (auditor/collectors) -----------------------------------------------------------
class SnapshotFormat(str, Enum):
    parquet = "parquet"
    jsonl = "jsonl"


BootstrapOpt = Annotated[
    str | None,
    typer.Option(
        "--bootstrap-servers",
        "--bootstrap-server",
        help="HOST:PORT[,HOST:PORT] of the Kafka Admin API (read-only calls).",
    ),
]
FormatOpt = Annotated[
    OutputFormat | None,
    typer.Option(
        "--format",
        "-f",
        help="Output format (default: from -o's extension .json .sarif .html .md .xml .txt, else text).",
    ),
]
OutputOpt = Annotated[
    Path | None, typer.Option("--output", "-o", help="Write the report here instead of stdout.")
]
SelectOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--select",
        help="Rules to run (codes, names or prefixes, comma-separated, repeatable): replaces the config file's select.",
    ),
]
IgnoreOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--ignore",
        help="Rules not to run (codes, names or prefixes, comma-separated, repeatable): added to the config file's ignore.",
    ),
]
StatisticsOpt = Annotated[
    bool,
    typer.Option(
        "--statistics", help="Print the number of findings per rule (most first) instead of the report."
    ),
]
BaselineOpt = Annotated[
    Path | None,
    typer.Option(
        "--baseline",
        help="Fail only on findings not in this baseline file; says how many matched and which are stale.",
    ),
]
WriteBaselineOpt = Annotated[
    Path | None,
    typer.Option("--write-baseline", help="Write the current findings as a baseline file and exit 0."),
]
CommandConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--command-config",
        help="Kafka CLI client.properties: security.protocol, SSL, SASL (PLAIN, SCRAM, AWS MSK IAM).",
    ),
]
ZookeeperOpt = Annotated[
    str | None,
    typer.Option(
        "--zookeeper",
        help="HOST:PORT (comma-separated for an ensemble, optional /chroot) of a ZooKeeper-mode cluster.",
    ),
]
BrokerConfigOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--broker-config", help="server.properties file or a directory of *.properties (repeatable)."
    ),
]
MetricsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--metrics",
        help="Prometheus text: file or http(s) URL, optionally 'broker_id=N:' first (repeatable).",
    ),
]
ClusterNameOpt = Annotated[
    str | None, typer.Option("--cluster-name", help="Cluster name (also the id when ZooKeeper gives none).")
]
TimeoutOpt = Annotated[float, typer.Option(help="Timeout of every network call, seconds.")]
MAX_TIMEOUT = 3600.0  # --timeout: an hour per call at most (inf would overflow socket and thread timeouts)


def _note_replaced_run(out: str | None, run_date: str | None) -> None:
    """fleet --out: a run of the same date is replaced, and says so (local roots)."""
    import datetime as dt

    from auditor.fleet import REMOTE

    if out is None or REMOTE.match(out):
        return
    day = run_date or dt.date.today().isoformat()
    run_dir = Path(out) / f"run_date={day}"
    if run_dir.is_dir() and any(run_dir.iterdir()):
        _say(f"note: replacing the findings of run_date={day} under {out}")


def _run_date(value: str | None) -> str | None:
    """--run-date as given, if it is a calendar date written YYYY-MM-DD (fromisoformat alone also
    takes week dates like 2026-W48-1, which would name a dt= directory wrongly)."""
    import datetime as dt
    import re

    if value is None:
        return None
    try:
        ok = (
            bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", value))
            and dt.date.fromisoformat(value).isoformat() == value
        )
    except ValueError:
        ok = False
    if not ok:
        raise UsageError(f"--run-date must be YYYY-MM-DD, not '{value}'")
    return value


def _say(message: str) -> None:
    """One line on stderr; file, cluster and host names in it may hold control characters."""
    from auditor.render.escape import neutralise

    typer.echo(f"kafka-audit: {neutralise(message)}", err=True)


def _collect_into(
    output: Path,
    fmt: str = "parquet",
    *,
    bootstrap_servers=None,
    command_config=None,
    zookeeper=None,
    broker_config=None,
    metrics=None,
    cluster_name=None,
    cluster=None,
    timeout: float = 10.0,
    msk_cluster_arn=None,
    msk_region=None,
):
    """Collect the given sources into a snapshot directory: (manifest, tables, rows); the
    manifest's ``errors`` name the sources that failed. Shared by collect, check and preflight;
    the collecting itself (auditor.collectors.fleet_collect.collect_snapshot) is shared with
    ``collect --inventory``."""
    from auditor.cli.progress import collect_progress
    from auditor.collectors.fleet_collect import collect_snapshot

    if not (bootstrap_servers or command_config or zookeeper or broker_config or metrics or msk_cluster_arn):
        raise UsageError(
            "collect: give at least one source (--bootstrap-servers, --zookeeper, --broker-config, --metrics, "
            "--msk-cluster-arn)"
        )
    if not (0 < timeout <= MAX_TIMEOUT):  # also nan (no comparison holds) and inf
        raise UsageError(
            f"collect: --timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}, "
            f"not {timeout:g}"
        )
    with collect_progress() as progress:
        manifest, tables = collect_snapshot(
            output,
            fmt,
            bootstrap_servers=bootstrap_servers,
            command_config=command_config,
            zookeeper=zookeeper,
            broker_config=broker_config,
            metrics=metrics,
            cluster_name=cluster_name,
            cluster=cluster,
            timeout=timeout,
            progress=progress,
            msk_cluster_arn=msk_cluster_arn,
            msk_region=msk_region,
        )
    for source in manifest.sources:  # files passed over (a client config in /etc/kafka ...): one line each
        if source.get("status") == "skipped" and source.get("reason"):
            _say(f"note: {source['reason']}")
        elif source.get("status") == "warning" and source.get("reason"):  # a source that gave nothing to read
            _say(f"warning: {source['reason']}")
    return manifest, len(tables), sum(len(v) for v in tables.values())


def _snapshot_refs(target: Path | None, workdir: str, sources: dict):
    """The snapshots to audit: TARGET, or a snapshot collected from SOURCES first."""
    from auditor.snapshot.io import SnapshotRef, discover, newest_per_cluster, open_snapshot, read_manifest

    given = {k: v for k, v in sources.items() if v and k not in ("timeout",)}
    if target is not None and given:
        raise UsageError(
            "give a snapshot directory or sources (--bootstrap-servers, --zookeeper, ...), not both"
        )
    if target is None:
        if not given:
            raise UsageError(
                "give a snapshot directory, or sources to collect from (--bootstrap-servers, --zookeeper, "
                "--broker-config, --metrics)"
            )
        directory = Path(workdir) / "snapshot"
        _collect_into(directory, "parquet", **sources)
        target = directory
    # The newest snapshot per cluster, as fleet: two dated snapshots of one cluster are not
    # merged. Manifests first (cheap), then only the kept snapshots are validated.
    found = [SnapshotRef(str(p), read_manifest(p), {}) for p in discover(target)]
    kept, skipped = newest_per_cluster(found)
    for note in skipped:  # check's and preflight's reports have no place for notes
        typer.echo(f"kafka-audit: note: {note}", err=True)
    refs = [open_snapshot(r.path) for r in kept]
    for ref in refs:
        if not ref.files:
            typer.echo(
                f"kafka-audit: warning: {ref.path}: SNAPSHOT: no tables: nothing was collected", err=True
            )
    return refs


@app.command()
def collect(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Snapshot directory to write (one cluster).")
    ] = None,
    bootstrap_servers: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    zookeeper: ZookeeperOpt = None,
    broker_config: BrokerConfigOpt = None,
    metrics: MetricsOpt = None,
    cluster_name: ClusterNameOpt = None,
    environment: Annotated[
        str | None, typer.Option(help="Manifest: environment (prod, staging ...).")
    ] = None,
    tier: Annotated[str | None, typer.Option(help="Manifest: tier.")] = None,
    platform: Annotated[
        str | None, typer.Option(help="Manifest: apache | msk | confluent | strimzi.")
    ] = None,
    kafka_version: Annotated[
        str | None, typer.Option("--kafka-version", help="Manifest: Kafka version of the brokers.")
    ] = None,
    msk_instance_type: Annotated[
        str | None, typer.Option("--msk-instance-type", help="Manifest: kafka.m5.large etc.")
    ] = None,
    az_count: Annotated[int | None, typer.Option("--az-count", help="Manifest: availability zones.")] = None,
    timeout: TimeoutOpt = 10.0,
    fmt: Annotated[
        SnapshotFormat, typer.Option("--format", "-f", help="Table files: parquet or jsonl.")
    ] = SnapshotFormat.parquet,
    inventory: Annotated[
        Path | None,
        typer.Option(
            "--inventory", help="Fleet inventory (fleet.yaml): collect every selected cluster into --out."
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="With --inventory: root to write ROOT/dt=DATE/cluster=NAME/ into."),
    ] = None,
    select: Annotated[
        str | None,
        typer.Option(
            "--select",
            help="With --inventory: label selector, e.g. 'environment=prod,tier in (tier-1,tier-2)'.",
        ),
    ] = None,
    parallel: Annotated[
        int, typer.Option("--parallel", help="With --inventory: clusters collected at once.")
    ] = 4,
    run_date: Annotated[
        str | None,
        typer.Option("--run-date", help="With --inventory: the dt= date (YYYY-MM-DD); default today."),
    ] = None,
    msk_cluster_arn: Annotated[
        str | None,
        typer.Option(
            "--msk-cluster-arn",
            help="AWS MSK source: the cluster's ARN (read-only API calls; boto3, the msk extra).",
        ),
    ] = None,
    msk_region: Annotated[
        list[str] | None,
        typer.Option(
            "--msk-region",
            help="AWS region: of --msk-cluster-arn (default: the ARN's), or, without it, discover every MSK cluster of the region(s) into --out.",
        ),
    ] = None,
):
    """Collect a snapshot (read-only): exit 0 complete, 3 when a source failed (what was read is still written).
    With --inventory: every selected cluster of a fleet.yaml, concurrently, into --out."""
    if inventory is not None:
        single = {
            "--output": output,
            "--bootstrap-servers": bootstrap_servers,
            "--command-config": command_config,
            "--zookeeper": zookeeper,
            "--broker-config": broker_config,
            "--metrics": metrics,
            "--cluster-name": cluster_name,
            "--environment": environment,
            "--tier": tier,
            "--platform": platform,
            "--kafka-version": kafka_version,
            "--msk-instance-type": msk_instance_type,
            "--az-count": az_count,
            "--msk-cluster-arn": msk_cluster_arn,
            "--msk-region": msk_region,
        }
        given = [k for k, v in single.items() if v]
        if given:
            raise UsageError(
                f"collect: --inventory takes its sources from the inventory: drop {', '.join(given)}"
            )
        if out is None:
            raise UsageError("collect: --inventory needs --out ROOT")
        raise typer.Exit(_collect_inventory(inventory, out, select, parallel, run_date, fmt.value, timeout))
    if msk_region and not msk_cluster_arn:  # discovery: every MSK cluster of the region(s), as a fleet
        raise typer.Exit(
            _collect_msk_regions(
                msk_region, out, select, parallel, run_date, fmt.value, timeout, command_config, output
            )
        )
    if msk_region and len(msk_region) > 1:
        raise UsageError("collect: --msk-cluster-arn takes one --msk-region")
    _check_msk_arn(msk_cluster_arn, msk_region[0] if msk_region else None)
    fleet_only = [k for k, v in (("--out", out), ("--select", select), ("--run-date", run_date)) if v]
    if fleet_only or parallel != 4:
        raise UsageError(f"collect: {', '.join(fleet_only) or '--parallel'} only with --inventory")
    if output is None:
        raise UsageError("collect: give -o SNAPSHOT_DIR (or --inventory fleet.yaml --out ROOT)")
    cluster = {
        "environment": environment,
        "tier": tier,
        "platform": platform,
        "kafka_version": kafka_version,
        "msk_instance_type": msk_instance_type,
        "az_count": az_count,
    }
    manifest, table_count, row_count = _collect_into(
        output,
        fmt.value,
        bootstrap_servers=bootstrap_servers,
        command_config=command_config,
        zookeeper=zookeeper,
        broker_config=broker_config,
        metrics=metrics,
        cluster_name=cluster_name,
        cluster=cluster,
        timeout=timeout,
        msk_cluster_arn=msk_cluster_arn,
        msk_region=msk_region[0] if msk_region else None,
    )
    typer.echo(
        f"{output}: snapshot of {manifest.cluster_name}: {table_count} tables, {row_count} rows, "
        f"{len(manifest.sources)} sources"
    )
    if manifest.errors:
        first = manifest.errors[0]
        more = f" (+{len(manifest.errors) - 1} more in manifest.json)" if len(manifest.errors) > 1 else ""
        _say(f"collect incomplete: {first.get('source')}: {first.get('message')}{more}")
        raise typer.Exit(exitcodes.INCOMPLETE)


def _check_msk_arn(arn: str | None, region: str | None) -> None:
    from auditor.collectors.msk import is_cluster_arn, region_of

    if arn is None:
        return
    if not is_cluster_arn(arn):
        raise UsageError(
            f"collect: --msk-cluster-arn {arn}: expected arn:aws:kafka:REGION:ACCOUNT:cluster/NAME/UUID"
        )
    if region and region != region_of(arn):
        raise UsageError(
            f"collect: --msk-region {region} is not the region of --msk-cluster-arn ({region_of(arn)})"
        )


def _collect_msk_regions(
    regions: list[str],
    out: Path | None,
    select: str | None,
    parallel: int,
    run_date: str | None,
    fmt: str,
    timeout: float,
    command_config: Path | None,
    output: Path | None,
) -> int:
    """collect --msk-region R ... --out ROOT: every MSK cluster of the regions, as an inventory
    with only an msk_discovery block would (auditor.inventory.MskDiscovery)."""
    from auditor.inventory import ClusterEntry, Inventory, MskDiscovery

    if out is None or output is not None:
        raise UsageError(
            "collect: --msk-region without --msk-cluster-arn discovers every cluster: give --out ROOT "
            "(not -o)"
        )
    if not (0 < timeout <= MAX_TIMEOUT):
        raise UsageError(
            f"collect: --timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}"
        )
    template = ClusterEntry(
        name="",
        line=0,
        timeout=timeout,
        command_config=os.path.abspath(command_config) if command_config else None,
    )
    inv = Inventory("--msk-region", [], MskDiscovery(list(regions), {}, None, template, 0))
    return _collect_inventory(None, out, select, parallel, run_date, fmt, 10.0, inv=inv)


def _collect_inventory(
    path: Path | None,
    out: Path,
    select: str | None,
    parallel: int,
    run_date: str | None,
    fmt: str,
    timeout: float,
    inv=None,
) -> int:
    """collect --inventory: validate everything first (exit 2), then collect the selected
    clusters concurrently; one line per cluster as each finishes (a rich display on a
    terminal), a summary table, exit 3 if any source failed."""
    import datetime as dt

    from auditor.cli.progress import wanted
    from auditor.collectors.fleet_collect import collect_fleet
    from auditor.inventory import load_inventory, parse_selector
    from auditor.render.escape import neutralise

    if not 1 <= parallel <= 256:
        raise UsageError(f"collect: --parallel must be between 1 and 256, not {parallel}")
    if timeout != 10.0:
        raise UsageError(
            "collect: with --inventory, give timeout: in the inventory (defaults: or per cluster)"
        )
    run_date = _run_date(run_date) or dt.date.today().isoformat()
    if out.exists() and not out.is_dir():
        raise UsageError(f"collect: --out {out} exists and is not a directory")
    chooser = parse_selector(select) if select is not None else None
    inv = inv or load_inventory(path)
    clusters, discovery_errors = _discover_msk(inv)
    entries = [e for e in clusters if chooser is None or chooser(e)]
    if not entries and discovery_errors:
        return exitcodes.INCOMPLETE
    if not entries:
        raise UsageError(
            f"collect: --select '{select}' selects none of the {len(clusters)} clusters of {inv.path}"
            if clusters
            else f"collect: {inv.path}: MSK discovery found no cluster"
        )

    def emit(line: str) -> None:
        typer.echo(neutralise(line))

    if wanted() and not os.environ.get("NO_COLOR"):
        outcomes = _collect_inventory_rich(inv, entries, out, run_date, parallel, fmt)
    else:

        def done(o):
            for note in o.notes:
                _say(note)
            emit(o.line())

        outcomes = collect_fleet(inv, entries, out, run_date, parallel=parallel, fmt=fmt, on_done=done)
    failed = [o for o in outcomes if not o.ok]
    width = max(len(o.name) for o in outcomes)
    emit("")
    emit(f"{'cluster':<{width}}  {'status':<10}  {'tables':>6}  {'rows':>9}  {'seconds':>7}")
    for o in outcomes:
        emit(
            f"{o.name:<{width}}  {'ok' if o.ok else 'INCOMPLETE':<10}  {o.tables:>6}  {o.rows:>9}  {o.seconds:>7.1f}"
        )
    emit(
        f"{out}/dt={run_date}: {len(outcomes)} clusters, {len(outcomes) - len(failed)} complete, "
        f"{len(failed)} incomplete"
    )
    return exitcodes.INCOMPLETE if failed or discovery_errors else exitcodes.OK


def _discover_msk(inv):
    """The inventory's clusters plus those its msk_discovery finds; a region that cannot be
    listed is one line on stderr and makes the run incomplete (exit 3)."""
    if inv.msk_discovery is None:
        return inv.clusters, []
    from auditor.collectors.msk import discover

    d = inv.msk_discovery
    found, errors = discover(d.regions, tags=d.tags, name_prefix=d.name_prefix, timeout=d.template.timeout)
    for e in errors:
        _say(f"collect incomplete: msk discovery: {e['message']}")
    return inv.with_discovered(found), errors


def _collect_inventory_rich(inv, entries, out: Path, run_date: str, parallel: int, fmt: str):
    """collect --inventory on a terminal: a progress bar of clusters done/failed/running."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
    from rich.text import Text

    from auditor.collectors.fleet_collect import collect_fleet

    state = {"done": 0, "failed": 0, "running": set()}
    console = Console(stderr=True)
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as p:
        task = p.add_task("clusters", total=len(entries))

        def describe():
            running = sorted(state["running"])
            shown = ", ".join(running[:3]) + (f" +{len(running) - 3}" if len(running) > 3 else "")
            p.update(
                task,
                description=f"clusters: {state['done']} done, {state['failed']} failed, "
                f"{len(running)} running" + (f" ({shown})" if shown else ""),
                completed=state["done"] + state["failed"],
            )

        def start(name):
            state["running"].add(name)
            describe()

        def done(o):
            state["running"].discard(o.name)
            state["done" if o.ok else "failed"] += 1
            for note in o.notes:
                p.console.print(Text(f"kafka-audit: {note}"))
            p.console.print(Text(o.line(), style=None if o.ok else "bold red"))
            describe()

        describe()
        return collect_fleet(
            inv, entries, out, run_date, parallel=parallel, fmt=fmt, on_start=start, on_done=done
        )


# --- preflight (auditor/preflight.py) --------------------------------------------------------
class PreflightFormat(str, Enum):
    text = "text"
    json = "json"
    html = "html"


@app.command()
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
    config: Annotated[
        str | None,
        typer.Option("--config", help="kafka-audit.toml (ignore, severity, params, exemptions apply)."),
    ] = None,
    ignore: Annotated[
        list[str] | None,
        typer.Option(
            "--ignore",
            help="Rules not to run (codes, names or prefixes, comma-separated, repeatable): added to the config file's ignore. Preflight's rules are fixed, so there is no --select.",
        ),
    ] = None,
    engine: Annotated[
        EngineName, typer.Option(help="duckdb (embedded, default) or spark.")
    ] = EngineName.duckdb,
    bootstrap_servers: BootstrapOpt = None,
    command_config: CommandConfigOpt = None,
    zookeeper: ZookeeperOpt = None,
    broker_config: BrokerConfigOpt = None,
    metrics: MetricsOpt = None,
    cluster_name: ClusterNameOpt = None,
    timeout: TimeoutOpt = 10.0,
):
    """Before a rolling restart (MSK patch): can each broker be restarted now, and what breaks if it is?
    Exit 0 all safe, 1 a broker is unsafe, 2 usage error, 3 snapshot incomplete (or nothing to simulate)."""
    import tempfile

    from auditor.config import find_config
    from auditor.engine import open_engine
    from auditor.preflight import run_preflight
    from auditor.render.preflight_render import FORMATS as PREFLIGHT_FORMATS
    from auditor.render.preflight_render import render as render_preflight

    fmt = _report_format("preflight", fmt and fmt.value, output, PREFLIGHT_FORMATS)
    cfg = _with_rule_choice(find_config(config), None, ignore, "--ignore")
    with tempfile.TemporaryDirectory(prefix="kafka-audit-") as workdir:
        refs = _snapshot_refs(
            target,
            workdir,
            dict(
                bootstrap_servers=bootstrap_servers,
                command_config=command_config,
                zookeeper=zookeeper,
                broker_config=broker_config,
                metrics=metrics,
                cluster_name=cluster_name,
                timeout=timeout,
            ),
        )
        with open_engine(engine.value) as eng:
            pre = run_preflight(eng, refs, cfg, brokers=broker or None, target_version=target_version)
    report = render_preflight(fmt, pre)
    if fmt == "text":
        _write_text_report(report, output)
    else:
        _write(report, output)
    if fix_plan is not None:
        from auditor.render.preflight_render import fix_plan_file

        _write(fix_plan_file(pre), fix_plan)
        planned = sum(c.plan is not None for c in pre.clusters)
        _say(
            f"{fix_plan}: fix plan of {planned} of {len(pre.clusters)} cluster(s) written "
            "(a script to review; nothing was executed)"
        )
    raise typer.Exit(
        exitcodes.for_result(failing=pre.any_unsafe or bool(pre.upgrade_blockers), incomplete=pre.incomplete)
    )


# --- lint (auditor/lint): change review of server.properties and topic files -------------------
@app.command()
def lint(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Broker properties files and topic YAML files (plain list, Strimzi or jikkou KafkaTopic, topicctl, kafka-gitops, JulieOps), or directories of them; non-broker properties files are skipped with a note."
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
    write_baseline: WriteBaselineOpt = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    statistics: StatisticsOpt = False,
    fail_on: Annotated[
        FailOn | None,
        typer.Option(
            help="Lowest severity that fails the run (exit 1). Default: the config's fail_on, else error."
        ),
    ] = None,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            help="kafka-audit.toml (default: ./kafka-audit.toml or [tool.kafka-audit] in ./pyproject.toml).",
        ),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="A file in which no topic or broker definition is recognised is an error (exit 2), not a warning.",
        ),
    ] = False,
):
    """Lint proposed Kafka configuration files (CI, pre-commit): findings at file:line."""
    from auditor.baseline import Entry
    from auditor.config import find_config
    from auditor.lint import run_lint
    from auditor.render import FORMATS

    fmt = _report_format("lint", fmt and fmt.value, output, FORMATS)
    cfg = _with_rule_choice(find_config(config), select, ignore, "--select/--ignore")
    # Writing a baseline records every current finding (a refresh drops the fixed ones).
    known = _baseline(baseline, write_baseline)
    result = run_lint(
        files, against=str(against) if against else None, config=cfg, baseline=known, strict=strict
    )
    report_only = statistics or write_baseline is not None
    if fmt in ("json", "junit") or report_only:
        # These reports have no place for notes: files skipped, warnings about the inputs go to
        # stderr. (The github format makes them annotations: render/github_render.py.)
        for note in result.notes:
            typer.echo(f"kafka-audit: {note if note.startswith('warning: ') else 'note: ' + note}", err=True)
    elif fmt != "text" and result.baseline is not None:  # the other reports may not show notes: say it here
        _tell_baseline(result.baseline, [], in_report=False)
    if write_baseline is not None:
        _write_baseline(map(Entry.of, result.findings), write_baseline)
        raise typer.Exit(exitcodes.OK)
    if statistics:
        from auditor.render.statistics import per_rule

        _statistics("lint", per_rule(result.cluster_rule_counts()), fmt, output)
    elif fmt == "text":
        from auditor.render.lint_text import render as render_lint_text

        _write_text_report(render_lint_text(result), output)
    else:
        from auditor.render import render

        _write(render(fmt, result), output)
    threshold = fail_on.value if fail_on else cfg.fail_on
    raise typer.Exit(exitcodes.for_result(failing=result.failing(threshold), incomplete=result.is_incomplete))


@rules_app.callback()
def rules_default(
    ctx: typer.Context, fmt: Annotated[RulesFormat, typer.Option("--format", "-f")] = RulesFormat.table
):
    """With no subcommand: the same as `rules list`."""
    if ctx.invoked_subcommand is None:
        rules_list(fmt)


@rules_app.command("list")
def rules_list(fmt: Annotated[RulesFormat, typer.Option("--format", "-f")] = RulesFormat.table):
    """Every rule: code, name, severity, category, summary."""
    from auditor import rulesdoc

    sys.stdout.write(rulesdoc.render_list(fmt.value))


@rules_app.command("explain")
def rules_explain(
    rule: Annotated[str, typer.Argument(help="A rule code (REP002) or name (min-isr-equals-rf).")],
    fmt: Annotated[RulesFormat, typer.Option("--format", "-f")] = RulesFormat.table,
):
    """A rule's full documentation: why, remediation, example, parameters."""
    from auditor import rulesdoc
    from auditor.registry import load_rules, resolve

    load_rules()
    matches = resolve(rule, "rules explain")
    if len(matches) != 1:
        raise UsageError(f"rules explain: '{rule}' names {len(matches)} rules; give one code or name")
    sys.stdout.write(rulesdoc.render_one(matches[0], fmt.value))


def main() -> None:
    """Console entry point: one-line errors with the right exit code, never a traceback for bad input."""
    from auditor.cli.help import tidy as tidy_help
    from auditor.render.escape import neutralise

    try:
        # standalone_mode=False: click returns the exit code instead of exiting itself. tidy:
        # readable --help (metavars, choices, Rich-escaped text: auditor/cli/help.py).
        code = tidy_help(typer.main.get_command(app))(standalone_mode=False)
    except AuditorError as e:  # names a file or a cluster: shown with its control characters made visible
        typer.echo(f"kafka-audit: {neutralise(e)}", err=True)
        sys.exit(e.exit_code)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except typer.Abort:
        typer.echo("kafka-audit: aborted", err=True)
        sys.exit(exitcodes.USAGE)
    except KeyboardInterrupt:
        typer.echo("kafka-audit: interrupted", err=True)
        sys.exit(130)
    except Exception as e:  # click usage errors and anything unexpected
        if callable(getattr(e, "show", None)) and hasattr(e, "exit_code"):  # click.ClickException
            e.show()
            sys.exit(exitcodes.USAGE)
        if os.environ.get("KAFKA_AUDIT_DEBUG"):
            raise
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        typer.echo(
            f"kafka-audit: internal error: {type(e).__name__}: {neutralise(first)} "
            "(set KAFKA_AUDIT_DEBUG=1 for details)",
            err=True,
        )
        sys.exit(exitcodes.USAGE)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
