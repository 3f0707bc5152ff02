"""kafka-audit collect: options -> auditor.commands.collect -> one line per snapshot -> the exit code."""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from auditor import exitcodes
from auditor.cli.options import RunDateOpt, with_sources
from auditor.errors import UsageError
from auditor.escape import neutralise
from auditor.sources import DEFAULT_TIMEOUT, Sources
from auditor.stderr import say


class SnapshotFormat(str, Enum):
    parquet = "parquet"
    jsonl = "jsonl"


@with_sources
def collect(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Snapshot directory to write (one cluster).")
    ] = None,
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
    run_date: RunDateOpt = None,
    *,
    sources: Sources,
    msk_regions: list[str],
):
    """Collect a snapshot (read-only): exit 0 complete, 3 when a source failed (what was read is still written).
    With --inventory: every selected cluster of a fleet.yaml, concurrently, into --out."""
    from auditor.commands.collect import collect_into, inventory_of_regions

    manifest_fields = {
        "--environment": environment,
        "--tier": tier,
        "--platform": platform,
        "--kafka-version": kafka_version,
        "--msk-instance-type": msk_instance_type,
        "--az-count": az_count,
    }
    if inventory is not None:
        given = [o for o, v in {"--output": output, "--cluster-name": sources.cluster_name}.items() if v]
        given += sources.given() + [o for o, v in manifest_fields.items() if v]
        if given:
            raise UsageError(
                f"collect: --inventory takes its sources from the inventory: drop {', '.join(given)}"
            )
        if out is None:
            raise UsageError("collect: --inventory needs --out ROOT")
        if sources.timeout != DEFAULT_TIMEOUT:
            raise UsageError(
                "collect: with --inventory, give timeout: in the inventory (defaults: or per cluster)"
            )
        raise typer.Exit(_collect_inventory(inventory, None, out, select, parallel, run_date, fmt.value))
    if (
        msk_regions and not sources.msk_cluster_arn
    ):  # discovery: every MSK cluster of the region(s), as a fleet
        if out is None or output is not None:
            raise UsageError(
                "collect: --msk-region without --msk-cluster-arn discovers every cluster: give --out ROOT (not -o)"
            )
        inv = inventory_of_regions(msk_regions, sources.command_config, sources.timeout)
        raise typer.Exit(_collect_inventory(None, inv, out, select, parallel, run_date, fmt.value))
    if len(msk_regions) > 1:
        raise UsageError("collect: --msk-cluster-arn takes one --msk-region")
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
    manifest, table_count, row_count = collect_into(output, fmt.value, sources, cluster)
    typer.echo(
        f"{output}: snapshot of {manifest.cluster_name}: {table_count} tables, {row_count} rows, "
        f"{len(manifest.sources)} sources"
    )
    if manifest.errors:
        # The first error not already said (an AWS call denied or throttled out is, by collect_into)
        unsaid = [e for e in manifest.errors if not isinstance(e.get("aws"), dict)]
        first = unsaid[0] if unsaid else None
        more = len(manifest.errors) - (1 if first else 0)
        extra = (
            f" (+{more} more {'above and ' if len(unsaid) < len(manifest.errors) else ''}in manifest.json)"
        )
        if first is None:
            say(f"collect incomplete: {len(manifest.errors)} source error(s), above (and in manifest.json)")
        else:
            say(f"collect incomplete: {first.get('source')}: {first.get('message')}{extra if more else ''}")
        raise typer.Exit(exitcodes.INCOMPLETE)


def _collect_inventory(path, inv, out: Path, select, parallel: int, run_date, fmt: str) -> int:
    """collect --inventory: validate everything first (exit 2), then collect the selected
    clusters concurrently; one line per cluster as each finishes (a rich display on a
    terminal), a summary table, exit 3 if any source failed."""
    from auditor.commands.collect import collect_inventory, plan_inventory
    from auditor.progress import wanted

    inv, entries, run_date, discovery_errors = plan_inventory(inv, path, out, select, parallel, run_date)
    if not entries:
        return exitcodes.INCOMPLETE

    def emit(line: str) -> None:
        typer.echo(neutralise(line))

    if wanted() and not os.environ.get("NO_COLOR"):
        outcomes = _collect_inventory_rich(inv, entries, out, run_date, parallel, fmt)
    else:

        def done(o):
            for note in o.notes:
                say(note)
            emit(o.line())

        outcomes = collect_inventory(inv, entries, out, run_date, parallel, fmt, on_done=done)
    failed = [o for o in outcomes if not o.ok]
    width = max(len(o.name) for o in outcomes)
    emit("")
    emit(f"{'cluster':<{width}}  {'status':<10}  {'tables':>6}  {'rows':>9}  {'seconds':>7}")
    for o in outcomes:
        emit(
            f"{o.name:<{width}}  {'ok' if o.ok else 'INCOMPLETE':<10}  {o.tables:>6}  {o.rows:>9}  {o.seconds:>7.1f}"
        )
    emit(
        f"{out}/dt={run_date}: {len(outcomes)} clusters, {len(outcomes) - len(failed)} complete, {len(failed)} incomplete"
    )
    return exitcodes.INCOMPLETE if failed or discovery_errors else exitcodes.OK


def _collect_inventory_rich(inv, entries, out: Path, run_date: str, parallel: int, fmt: str):
    """collect --inventory on a terminal: a progress bar of clusters done/failed/running."""
    from rich.text import Text

    from auditor.commands.collect import collect_inventory
    from auditor.progress import bars

    state = {"done": 0, "failed": 0, "running": set()}
    with bars() as p:
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
        return collect_inventory(inv, entries, out, run_date, parallel, fmt, on_start=start, on_done=done)
