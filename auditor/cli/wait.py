"""kafka-audit wait: options -> auditor.commands.wait (re-collect until healthy) -> the exit code."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated

import typer

from auditor.cli.options import with_sources
from auditor.errors import UsageError
from auditor.escape import neutralise
from auditor.sources import Sources


@with_sources
def wait(
    broker_id: Annotated[
        int | None,
        typer.Option(
            "--broker-id",
            help="The broker just restarted: wait until it is registered and back in every ISR.",
        ),
    ] = None,
    leadership: Annotated[
        bool,
        typer.Option(
            "--leadership",
            help="With --broker-id: also wait until it leads every partition it is the preferred replica of.",
        ),
    ] = False,
    interval: Annotated[
        float, typer.Option("--interval", help="Seconds between two collections of the live state.")
    ] = 10.0,
    max_wait: Annotated[
        float, typer.Option("--max-wait", help="Seconds to wait in all before giving up (exit 4).")
    ] = 1800.0,
    *,
    sources: Sources,
) -> None:
    """Wait between two broker restarts until the cluster is healthy again (read-only): no
    under-replicated, under-min-ISR or offline partition, --broker-id back in every ISR
    (--leadership: leading its preferred partitions). Exit 0 healthy, 4 when --max-wait passed first."""
    from auditor.commands.collect import check_msk_arn
    from auditor.commands.wait import collect_state, wait_until_healthy

    if not (
        sources.bootstrap_servers or sources.command_config or sources.zookeeper or sources.msk_cluster_arn
    ):
        raise UsageError("wait: give a source: --bootstrap-servers, --zookeeper or --msk-cluster-arn")
    if sources.broker_configs or sources.metrics:
        raise UsageError(
            "wait: it waits on the live partition state: --broker-config and --metrics give none"
        )
    sources.checked("wait")
    check_msk_arn(sources, "wait")
    for name, value in (("--interval", interval), ("--max-wait", max_wait)):
        if not (math.isfinite(value) and value > 0):
            raise UsageError(f"wait: {name} must be a number of seconds above 0, not {value:g}")
    if leadership and broker_id is None:
        raise UsageError("wait: --leadership needs --broker-id")

    def say(line: str) -> None:
        typer.echo(f"kafka-audit: wait: {datetime.now().strftime('%H:%M:%S')} {neutralise(line)}", err=True)

    raise typer.Exit(
        wait_until_healthy(
            lambda: collect_state(sources, leadership=leadership),
            broker=broker_id,
            leadership=leadership,
            interval=interval,
            max_wait=max_wait,
            say=say,
        )
    )
