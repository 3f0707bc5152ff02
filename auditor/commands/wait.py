"""``kafka-audit wait``: between two broker restarts, wait until the cluster is healthy again.

What a rolling restart waits for before it takes down the next broker (the model: Redpanda's
``rpk cluster health --watch --exit-when-healthy``; for Kafka, its own
kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions and UnderMinIsrPartitionCount,
which a roll script otherwise polls through JMX): the live state is collected again every
``interval`` seconds, read-only, through the same collectors as ``collect`` (the Kafka Admin
API, ZooKeeper, or the AWS MSK API: auditor/collectors/fleet_collect.py ``collect_snapshot``,
nothing written), until

* no partition is under-replicated (ISR smaller than its replicas) or offline (no leader);
* no partition is under min ISR (ISR smaller than its topic's ``min.insync.replicas``: the
  topic's own value, else a broker's, else Kafka's default 1);
* with ``broker``: that broker is registered and back in the ISR of every partition it holds a
  replica of; with ``leadership`` also the leader of every partition whose preferred (first)
  replica it is (what ``auto.leader.rebalance.enable`` or
  ``kafka-leader-election --election-type preferred`` gives back).

A round whose collection failed (a source error) is not healthy: it is shown, and waited past
like any other unhealthy round. The MSK topic APIs "reflect data that updates approximately
every minute" (AWS): an interval below that only reads the same state again; without
``leadership`` only the topics ListTopics reports with replicas out of sync are described (the
others have their whole ISR, so no replica of theirs is out of it and none is under min ISR).

:func:`wait_until_healthy` returns :data:`auditor.exitcodes.OK` when healthy, and
:data:`auditor.exitcodes.WAIT_TIMEOUT` when ``max_wait`` passed first.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from auditor import exitcodes
from auditor.sources import Sources

MAX_EXAMPLES = 3  # partitions named per problem in a progress line
MAX_LISTED = 100  # partitions named per problem in to_json


@dataclass
class Health:
    partitions: int = 0
    under_replicated: list[str] = field(default_factory=list)
    under_min_isr: list[str] = field(default_factory=list)
    offline: list[str] = field(default_factory=list)
    broker_out_of_isr: list[str] = field(default_factory=list)
    broker_not_leader: list[str] = field(default_factory=list)
    broker_missing: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def healthy(self) -> bool:
        return not (
            self.under_replicated
            or self.under_min_isr
            or self.offline
            or self.broker_out_of_isr
            or self.broker_not_leader
            or self.broker_missing
            or self.errors
        )

    def to_json(self, broker: int | None = None) -> dict:
        """The round as data: healthy, the partition counts and names of each problem, and the
        progress line ``wait`` prints for it."""
        return {
            "healthy": self.healthy,
            "summary": self.describe(broker),
            "partitions": self.partitions,
            "broker_id": broker,
            **{
                key: {"count": len(names), "partitions": names[:MAX_LISTED]}
                for key, names in (
                    ("under_replicated", self.under_replicated),
                    ("under_min_isr", self.under_min_isr),
                    ("offline", self.offline),
                    ("broker_out_of_isr", self.broker_out_of_isr),
                    ("broker_not_leader", self.broker_not_leader),
                )
            },
            "broker_missing": self.broker_missing,
            "errors": self.errors,
        }

    def describe(self, broker: int | None) -> str:
        if self.errors:
            more = f" (+{len(self.errors) - 1} more)" if len(self.errors) > 1 else ""
            return f"not collected: {self.errors[0]}{more}"
        parts = [
            f"{len(self.under_replicated)} under-replicated{_examples(self.under_replicated)}",
            f"{len(self.under_min_isr)} under min ISR{_examples(self.under_min_isr)}",
            f"{len(self.offline)} offline{_examples(self.offline)}",
        ]
        if broker is not None:
            if self.broker_missing:
                parts.append(f"broker {broker} not registered")
            else:
                parts.append(
                    f"broker {broker} out of the ISR of {len(self.broker_out_of_isr)}"
                    f"{_examples(self.broker_out_of_isr)}"
                )
            if self.broker_not_leader:
                parts.append(
                    f"broker {broker} not leading {len(self.broker_not_leader)} of its preferred partitions"
                    f"{_examples(self.broker_not_leader)}"
                )
        state = "healthy" if self.healthy else "not healthy"
        return f"{state}: {self.partitions} partitions; " + ", ".join(parts)


def _examples(names: list[str]) -> str:
    if not names:
        return ""
    shown = ", ".join(names[:MAX_EXAMPLES])
    return f" ({shown}{', ...' if len(names) > MAX_EXAMPLES else ''})"


def _int(value) -> int | None:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        return None


def min_isr_by_topic(configs: list[dict]) -> tuple[dict[str, int], int]:
    """({topic: its min.insync.replicas}, the brokers' value, else Kafka's default 1)."""
    topics: dict[str, int] = {}
    broker_values: list[int] = []
    for c in configs:
        if c.get("key") != "min.insync.replicas":
            continue
        v = _int(c.get("value"))
        if v is None:
            continue
        if c.get("entity_type") == "topic" and c.get("source") == "TOPIC_CONFIG":
            topics[c["entity_name"]] = v
        elif c.get("entity_type") in ("broker", "cluster_default"):
            broker_values.append(v)
    return topics, (max(broker_values) if broker_values else 1)


def assess(
    tables: dict[str, list[dict]], errors: list[dict], *, broker: int | None, leadership: bool
) -> Health:
    """The health of one collected state (see the module doc)."""
    h = Health(errors=[f"{e.get('source')}: {e.get('message')}" for e in errors])
    topic_min_isr, default_min_isr = min_isr_by_topic(tables.get("configs", []))
    rows = sorted(tables.get("partitions", []), key=lambda p: (p["topic"], p["partition"]))
    counts = [t.get("partitions") for t in tables.get("topics", [])]  # (MSK: only some topics described)
    h.partitions = max(len(rows), sum(c for c in counts if isinstance(c, int)))
    for p in rows:
        name = f"{p['topic']}-{p['partition']}"
        replicas, isr = list(p.get("replicas") or []), list(p.get("isr") or [])
        if p.get("leader") is None or p["leader"] < 0:
            h.offline.append(name)
        if len(isr) < len(replicas):
            h.under_replicated.append(name)
        if len(isr) < min(topic_min_isr.get(p["topic"], default_min_isr), len(replicas) or 1):
            h.under_min_isr.append(name)
        if broker is not None and broker in replicas and broker not in isr:
            h.broker_out_of_isr.append(name)
        if (
            broker is not None
            and leadership
            and replicas
            and replicas[0] == broker
            and p.get("leader") != broker
        ):
            h.broker_not_leader.append(name)
    if broker is not None and "brokers" in tables:
        h.broker_missing = broker not in {b.get("broker_id") for b in tables["brokers"]}
    if not rows and not h.partitions and not h.errors:
        h.errors.append(
            "no partition state was collected (give --bootstrap-servers, --zookeeper or --msk-cluster-arn)"
        )
    return h


def partition_state_sources(sources: Sources) -> Sources | None:
    """What ``wait`` reads of ``sources``: the live partition state (the Admin API, ZooKeeper,
    the MSK API), without broker files or metrics, which hold none; None when there is none."""
    if not (sources.bootstrap_servers or sources.zookeeper or sources.msk_cluster_arn):
        return None
    return replace(sources, broker_configs=(), metrics=())


def collect_state(sources: Sources, *, leadership: bool = False) -> tuple[dict[str, list[dict]], list[dict]]:
    """One read-only collection of the live state: (tables, source errors). Nothing is written.
    From the MSK topic APIs, without ``leadership``: the partitions only of the topics ListTopics
    reports with replicas out of sync (every other topic has its whole ISR)."""
    from pathlib import Path

    from auditor.collectors.fleet_collect import collect_msk_source, collect_snapshot

    msk = None
    if sources.msk_cluster_arn:
        msk = collect_msk_source(sources, metrics_given=True, out_of_sync_only=not leadership)
        if msk.topics_via_api and not (sources.bootstrap_servers or sources.zookeeper):
            return msk.result.tables, msk.result.errors
    manifest, tables = collect_snapshot(
        Path("unused"), "parquet", sources, should_write=lambda: False, msk=msk, msk_metrics=False
    )
    return tables, manifest.errors


def health_round(
    collect: Callable[[], tuple[dict, list[dict]]], *, broker: int | None = None, leadership: bool = False
) -> Health:
    """One round of ``wait``: collect once and assess. A collection that raised is a round that
    was not collected (shown, never healthy). The MCP server's cluster_health is one round."""
    try:
        tables, errors = collect()
    except Exception as e:  # noqa: BLE001 (a failed round is shown and waited past)
        tables, errors = {}, [{"source": "collect", "message": " ".join(str(e).split())}]
    return assess(tables, errors, broker=broker, leadership=leadership)


def wait_until_healthy(
    collect: Callable[[], tuple[dict, list[dict]]],
    *,
    broker: int | None = None,
    leadership: bool = False,
    interval: float = 10.0,
    max_wait: float = 1800.0,
    say: Callable[[str], None] = print,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Collect and assess until healthy (exitcodes.OK) or ``max_wait`` seconds have passed
    (exitcodes.WAIT_TIMEOUT). One progress line per round through ``say``."""
    start = clock()
    round_ = 0
    while True:
        round_ += 1
        health = health_round(collect, broker=broker, leadership=leadership)
        elapsed = clock() - start
        say(f"round {round_} ({elapsed:.0f} s): {health.describe(broker)}")
        if health.healthy:
            say(f"healthy after {round_} round{'s' if round_ > 1 else ''} ({elapsed:.1f} s)")
            return exitcodes.OK
        if elapsed + interval > max_wait:
            say(f"not healthy after {elapsed:.0f} s (--max-wait {max_wait:g}): giving up")
            return exitcodes.WAIT_TIMEOUT
        sleep(interval)
