"""`kafka-audit preflight`: can each broker be restarted now, and what breaks if it is?

One pass over the snapshot runs the maintenance rules (MNT001-MNT004: a restart simulated
per broker on the current ISR, see checks/maintenance.py) together with the static rules
that matter for a patch window (PATCH_RULES), and reads a few facts per broker (host,
rack, partitions it leads now, the active controller). From those it builds, per cluster:

* a broker table: safe to restart or not, partitions / topics / consumer groups hit,
  leaders that move (partitions the broker leads now);
* a suggested restart order: safe brokers first, the active controller last (so that
  the controller moves once), fewest leaders first, then broker id.

A broker is safe when no (non-exempted) MNT001 or MNT002 finding names it. The
configuration file's ignore, severity, params and exemptions apply; its ``select`` does
not (preflight always runs its own rule set). ``brokers`` limits the simulation's output
to those broker ids (MNT001-MNT003 findings of other brokers are dropped; MNT004 stays a
statement about the whole cluster).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from auditor.config import AuditConfig
from auditor.engine.base import Engine, Tables
from auditor.engine.runner import run_audit
from auditor.errors import UsageError
from auditor.findings import AuditResult, Finding
from auditor.snapshot.io import SnapshotRef

MAINTENANCE_RULES = ("MNT001", "MNT002", "MNT003", "MNT004")
PATCH_RULES = ("AUD001", "REP002", "REP003", "REP009", "PAR003", "PAR004", "PAR005", "MSK001", "MSK002", "MSK003")
UNSAFE_RULES = ("MNT001", "MNT002")
PER_BROKER_RULES = ("MNT001", "MNT002", "MNT003")


@dataclass
class BrokerView:
    cluster: str
    broker_id: int
    host: str | None = None
    rack: str | None = None
    leaders: int = 0  # partitions the broker leads now: their leadership moves on restart
    replicas: int = 0  # partition replicas it hosts
    is_controller: bool = False
    safe: bool = True
    blocked_partitions: int = 0  # MNT001: ISR minus the broker below min.insync.replicas
    offline_partitions: int = 0  # MNT002: the broker is the only in-sync replica
    topic_count: int = 0
    topics: list[str] = field(default_factory=list)  # sorted, capped (see the MNT rules' max_listed)
    partitions: list[str] = field(default_factory=list)  # sorted, capped
    consumer_group_count: int = 0
    consumer_groups: list[str] = field(default_factory=list)
    coordinator_partitions: int = 0  # MNT003
    reasons: list[str] = field(default_factory=list)  # rule codes that made it unsafe or hit groups

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class ClusterPreflight:
    cluster: str
    cluster_id: str
    controller_id: int | None
    metadata_mode: str | None
    brokers: list[BrokerView]
    order: list[int]
    unknown: bool = False  # nothing to simulate: no brokers or no partition state collected

    @property
    def unsafe(self) -> list[int]:
        return [b.broker_id for b in self.brokers if not b.safe]

    def to_json(self) -> dict:
        return {"cluster": self.cluster, "cluster_id": self.cluster_id, "controller_id": self.controller_id,
                "metadata_mode": self.metadata_mode, "safe_to_roll": not self.unsafe and not self.unknown,
                "unsafe_brokers": self.unsafe, "simulated": not self.unknown,
                "brokers": [b.to_json() for b in self.brokers], "order": self.order}


@dataclass
class PreflightResult:
    result: AuditResult
    clusters: list[ClusterPreflight]
    selected_brokers: list[int] | None = None

    @property
    def any_unsafe(self) -> bool:
        return any(c.unsafe for c in self.clusters)

    @property
    def incomplete(self) -> bool:
        """A source failed, or a cluster has no brokers or partition state to simulate: the
        preflight cannot say "safe" (exit 3)."""
        return self.result.is_incomplete or any(c.unknown for c in self.clusters)


def preflight_config(config: AuditConfig) -> AuditConfig:
    """The user's config with preflight's fixed rule selection."""
    return dataclasses.replace(config, select=MAINTENANCE_RULES + PATCH_RULES)


def broker_facts(tables: Tables):
    """Per registered broker: host, rack, partitions it leads, replicas it hosts, and the
    cluster's controller id and mode. DataFrame only; the caller collects it."""
    from checks._api import F, join

    leaders = tables.partitions.groupBy("cluster_id", F.col("leader").alias("broker_id")).agg(
        F.count(F.lit(1)).alias("leaders"))
    replicas = tables.partitions.select("cluster_id", F.explode(F.col("replicas")).alias("broker_id")).groupBy(
        "cluster_id", "broker_id").agg(F.count(F.lit(1)).alias("replicas_hosted"))
    ctl = tables.controller.groupBy("cluster_id").agg(F.max("controller_id").alias("controller_id"),
                                                      F.max("mode").alias("mode"))
    parts = tables.partitions.groupBy("cluster_id").agg(F.count(F.lit(1)).alias("partition_count"))
    d = join(join(join(join(tables.brokers.select("cluster_id", "broker_id", "host", "rack"), leaders,
                            ["cluster_id", "broker_id"], "left"), replicas, ["cluster_id", "broker_id"], "left"),
                  ctl, "cluster_id", "left"), parts, "cluster_id", "left")
    return d.select("cluster_id", "broker_id", "host", "rack", F.coalesce(F.col("leaders"), F.lit(0)).alias("leaders"),
                    F.coalesce(F.col("replicas_hosted"), F.lit(0)).alias("replicas_hosted"), "controller_id", "mode",
                    F.coalesce(F.col("partition_count"), F.lit(0)).alias("partition_count"))


def run_preflight(engine: Engine, refs: Sequence[SnapshotRef], config: AuditConfig,
                  brokers: Sequence[int] | None = None) -> PreflightResult:
    result = run_audit(engine, refs, preflight_config(config), scopes=("cluster", "maintenance"))
    facts = [r.asDict() for r in broker_facts(Tables(engine, refs)).collect()]
    selected = sorted(set(brokers)) if brokers else None
    if selected:
        known = {f["broker_id"] for f in facts}
        missing = [b for b in selected if b not in known]
        if missing:
            listed = ", ".join(map(str, sorted(known))) or "none"
            raise UsageError(f"--broker {', '.join(map(str, missing))}: not a registered broker of the snapshot "
                             f"(brokers: {listed})")
        result.findings = [f for f in result.findings
                           if not (f.rule in PER_BROKER_RULES and _int(f.resource_name) not in selected)]
    clusters = []
    for ref in refs:
        cid = ref.manifest.cluster_id
        name = ref.manifest.cluster_name
        rows = [f for f in facts if f["cluster_id"] == cid]
        if selected:
            rows = [f for f in rows if f["broker_id"] in selected]
        findings = [f for f in result.findings if f.cluster_id == cid]
        clusters.append(_cluster_view(ref, name, rows, findings))
    return PreflightResult(result, clusters, selected)


def _int(text: str) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def _cluster_view(ref: SnapshotRef, name: str, rows: list[dict], findings: list[Finding]) -> ClusterPreflight:
    controller = next((r["controller_id"] for r in rows if r["controller_id"] is not None), None)
    mode = next((r["mode"] for r in rows if r["mode"]), None) or ref.manifest.cluster.get("metadata_mode")
    by_broker: dict[int, dict[str, Finding]] = {}
    for f in findings:
        if f.rule in PER_BROKER_RULES and f.resource_type == "broker" and _int(f.resource_name) is not None:
            by_broker.setdefault(_int(f.resource_name), {})[f.rule] = f
    views = []
    for r in sorted(rows, key=lambda r: r["broker_id"]):
        hits = by_broker.get(r["broker_id"], {})
        v = BrokerView(cluster=name, broker_id=r["broker_id"], host=r["host"], rack=r["rack"], leaders=r["leaders"],
                       replicas=r["replicas_hosted"],
                       is_controller=controller is not None and controller >= 0 and r["broker_id"] == controller)
        topics: set[str] = set()
        partitions: set[str] = set()
        for code in UNSAFE_RULES:
            if code in hits:
                ev = hits[code].evidence
                count = int(ev.get("partition_count", 0))
                if code == "MNT001":
                    v.blocked_partitions = count
                else:
                    v.offline_partitions = count
                v.topic_count = max(v.topic_count, int(ev.get("topic_count", 0)))
                topics.update(ev.get("topics", []))
                partitions.update(ev.get("partitions", []))
                v.reasons.append(code)
        if "MNT003" in hits:
            ev = hits["MNT003"].evidence
            v.coordinator_partitions = int(ev.get("partition_count", 0))
            v.consumer_group_count = int(ev.get("consumer_group_count", 0))
            v.consumer_groups = sorted(ev.get("consumer_groups", []))
            v.reasons.append("MNT003")
        v.safe = not any(c in hits for c in UNSAFE_RULES)
        v.topics, v.partitions = sorted(topics), sorted(partitions)
        v.topic_count = max(v.topic_count, len(topics))
        views.append(v)
    order = [v.broker_id for v in sorted(views, key=lambda v: (not v.safe, v.is_controller, v.leaders, v.broker_id))]
    unknown = not rows or all(r["partition_count"] == 0 for r in rows)
    return ClusterPreflight(name, ref.manifest.cluster_id, controller, mode, views, order, unknown)
