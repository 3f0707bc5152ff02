"""``kafka-audit wait``: the command line of auditor/wait.py (registered in auditor/cli/main.py)."""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from auditor.errors import UsageError

MAX_TIMEOUT = 3600.0  # seconds: the per-call network timeout's bound, as collect's


def wait_command(
    bootstrap_servers: Annotated[
        str | None,
        typer.Option(
            "--bootstrap-servers",
            "--bootstrap-server",
            help="HOST:PORT[,HOST:PORT] of the Kafka Admin API (read-only calls).",
        ),
    ] = None,
    command_config: Annotated[
        Path | None,
        typer.Option(
            "--command-config",
            help="Kafka CLI client.properties: security.protocol, SSL, SASL (PLAIN, SCRAM, AWS MSK IAM).",
        ),
    ] = None,
    zookeeper: Annotated[
        str | None,
        typer.Option(
            "--zookeeper",
            help="HOST:PORT (comma-separated for an ensemble, optional /chroot) of a ZooKeeper-mode cluster.",
        ),
    ] = None,
    msk_cluster_arn: Annotated[
        str | None,
        typer.Option("--msk-cluster-arn", help="AWS MSK source: the cluster's ARN (read-only API calls)."),
    ] = None,
    msk_region: Annotated[
        str | None, typer.Option("--msk-region", help="AWS region of --msk-cluster-arn (default: the ARN's).")
    ] = None,
    msk_topics: Annotated[
        str,
        typer.Option(
            "--msk-topics",
            help="With --msk-cluster-arn: auto (the Admin API when MSK's listener is reachable, else the MSK "
            "topic APIs), api or admin.",
        ),
    ] = "auto",
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
            "--leadership/--no-leadership",
            help="With --broker-id: also wait until it leads every partition it is the preferred replica of.",
        ),
    ] = False,
    interval: Annotated[
        float, typer.Option("--interval", help="Seconds between two collections of the live state.")
    ] = 10.0,
    max_wait: Annotated[
        float,
        typer.Option("--max-wait", help="Seconds to wait in all before giving up (exit 4)."),
    ] = 1800.0,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Network timeout per source call (seconds).")
    ] = 10.0,
) -> None:
    """Wait between two broker restarts until the cluster is healthy again (read-only): no
    under-replicated, under-min-ISR or offline partition, --broker-id back in every ISR
    (--leadership: leading its preferred partitions). Exit 0 healthy, 4 when --max-wait passed first."""
    from auditor.wait import WaitSources, collect_state, wait_until_healthy

    if not (bootstrap_servers or command_config or zookeeper or msk_cluster_arn):
        raise UsageError("wait: give a source: --bootstrap-servers, --zookeeper or --msk-cluster-arn")
    for name, value, low in (("--interval", interval, 0.0), ("--max-wait", max_wait, 0.0)):
        if not (math.isfinite(value) and value > low):
            raise UsageError(f"wait: {name} must be a number of seconds above 0, not {value:g}")
    if not (0 < timeout <= MAX_TIMEOUT):
        raise UsageError(
            f"wait: --timeout must be above 0 and at most {MAX_TIMEOUT:g} seconds, not {timeout:g}"
        )
    if leadership and broker_id is None:
        raise UsageError("wait: --leadership needs --broker-id")
    if msk_topics not in ("auto", "api", "admin"):
        raise UsageError(f"wait: --msk-topics is auto, api or admin, not {msk_topics}")
    if msk_topics != "auto" and not msk_cluster_arn:
        raise UsageError("wait: --msk-topics only with --msk-cluster-arn")
    if msk_cluster_arn:
        from auditor.collectors.msk import is_cluster_arn, region_of

        if not is_cluster_arn(msk_cluster_arn):
            raise UsageError(
                f"wait: --msk-cluster-arn {msk_cluster_arn}: expected arn:aws:kafka:REGION:ACCOUNT:cluster/NAME/UUID"
            )
        if msk_region and msk_region != region_of(msk_cluster_arn):
            raise UsageError(f"wait: --msk-region {msk_region} is not the region of --msk-cluster-arn")
    sources = WaitSources(
        bootstrap_servers=bootstrap_servers,
        command_config=command_config,
        zookeeper=zookeeper,
        msk_cluster_arn=msk_cluster_arn,
        msk_region=msk_region,
        msk_topics=msk_topics,
        timeout=timeout,
    )

    def say(line: str) -> None:
        from auditor.render.escape import neutralise

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
