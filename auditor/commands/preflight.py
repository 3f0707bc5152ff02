"""`kafka-audit preflight`: can each broker be restarted now, and what breaks if it is?

One pass over the snapshot runs the maintenance rules (MNT001-MNT004 and MNT006: a restart
simulated per broker on the current ISR and, where scraped, the followers' lag, see
checks/maintenance.py) together with the static rules
that matter for a patch window (the rules that declare runs_in "preflight"), and reads a few
facts per broker (host, rack, partitions it leads now, the active controller). From those it builds, per cluster:

* a broker table: safe to restart or not, partitions / topics / consumer groups hit,
  leaders that move (partitions the broker leads now);
* what blocks the roll of the whole cluster, whatever one more restart does (``blockers``,
  printed first): partitions already leaderless, with offline replicas or below
  their effective min.insync.replicas (the leader's, capped at the replica count on Kafka
  3.7+: checks.transforms.with_effective_min_isr); an MSK cluster not ACTIVE or with an
  operation in progress (the manifest's ``cluster.msk`` block, also rule MSK004); saturated
  brokers; a KRaft quorum without a leader; a source that failed (an incomplete snapshot: a
  topic whose description failed would fall back to min.insync.replicas 1);
* a suggested restart order, only of the brokers that are safe and only when nothing
  blocks the cluster: fewest leaders first, then broker id, and in ZooKeeper mode the active
  controller last (so that the controller moves once; on KRaft DescribeCluster's
  "controller" is an arbitrary broker, so no broker is ordered last for it). A safe broker
  never takes a partition offline, so the broker whose restart takes ``__consumer_offsets``
  offline is never in it;
* on KRaft, the controllers (the quorum table's voters): each safe unless MNT005 (its
  restart leaves no caught-up majority, Strimzi's KafkaQuorumCheck) names it, ordered
  followers first and the quorum leader last; a quorum of one or two voters cannot lose one
  however caught up it is, so its controllers' verdict is "outage" (no order and no wait
  makes the restart safe; the fix is more controllers, KIP-853), not "unsafe"; on MSK KRaft
  AWS runs them, and the report says so instead of simulating them;
* load headroom: saturated brokers (SATURATION_RULES) block the roll of the whole cluster,
  since each restart moves leadership and connections onto the others;
* the procedure: the order holds one restart at a time; before the next, the restarted
  broker must be back in every ISR (the condition and the commands to check it);
* when the roll is not safe, a fix plan (auditor/commands/preflight_plan.py): the smallest set of
  changes that makes every broker safe, proven by re-running this simulation on a copy of
  the snapshot with the changes applied.

A broker is safe when no (non-exempted) MNT001 or MNT002 finding names it; MNT006 (a lagging follower
takes over its partitions: acks=1 writes lost) is a warning shown beside it and blocks nothing. A
controller is safe when no MNT005 finding names it, "outage" when the finding is a planned outage (its
evidence ``planned_outage``), else unsafe. The cluster's verdict: "unsafe" (a broker or controller
unsafe, or a blocker), "outage" (only a small quorum's planned metadata outage stands between it and a
roll), "unknown" (not simulated, incomplete, not evaluated), else "safe"; exit 1 for unsafe and outage
(auditor/exitcodes.py), 3 for unknown. A partition
already below min.insync.replicas (or leaderless) makes every broker holding a replica of
it unsafe, in the ISR or not (checks/maintenance.py). A cluster is safe to roll when every
broker is safe and nothing blocks it. The
configuration file's ignore, severity, params and exemptions apply; its ``select`` does
not (preflight always runs its own rule set). ``brokers`` limits the simulation's output
to those broker ids (MNT001-MNT003 findings of other brokers are dropped; MNT004 stays a
statement about the whole cluster).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from auditor.config import AuditConfig
from auditor.engine.base import Engine
from auditor.engine.runner import run_audit
from auditor.engine.tables import Tables
from auditor.errors import UsageError
from auditor.findings import AuditResult, Finding
from auditor.snapshot.io import SnapshotRef
from auditor.sources import Sources

# What makes a broker's restart unsafe: writes blocked (MNT001), partitions offline (MNT002).
UNSAFE_RULES = ("MNT001", "MNT002")
# The follower elected on the broker's shutdown lags it persistently: acks=1 writes it lacks are lost.
# A warning beside the broker, never a block: losing acks=1 writes on a leader change is what acks=1
# means (issue 42), and the rule fires only where the loss exceeds the writes in flight.
ACKS1_RULE = "MNT006"
CONTROLLER_RULE = "MNT005"  # a KRaft voter whose restart leaves no caught-up majority
# Load headroom: findings that make the whole cluster unsafe to roll. Restarting one broker
# moves its partition leadership and its client connections onto the others; when those are
# already saturated they tip over (the connection-surge incident). THR006 counts only for a
# request queue nearly full (RequestQueueSize above SATURATED_QUEUE_FILL of queued.max.requests),
# not for a small queued.max.requests alone.
SATURATION_RULES = ("THR001", "THR002", "THR006", "MSK003", "DSK006")
SATURATED_QUEUE_FILL = 0.8
# --target-version 4.0: the upgrade preflight adds the rules that declare runs_in "upgrade" (the
# Kafka 4.0 readiness rules: KIP-896 clients, requests at removed protocol versions, unidentified
# clients; the version rules; the UPG rules of the 4.x path). Of those these block the upgrade:
# UPG001 ZooKeeper mode, UPG002 a version 4.x does not upgrade from, UPG003 metadata.version not
# finalized, UPG005 MSK's migration prerequisites unmet; UPG004 (removed configs) only warns.
UPGRADE_BLOCKING = ("CLI002", "CLI004", "DSK003", "UPG001", "UPG002", "UPG003", "UPG005")
TARGET_VERSIONS = ("4.0",)
PER_BROKER_RULES = ("MNT001", "MNT002", "MNT003", "MNT006")


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
    acks1_loss_partitions: int = 0  # MNT006: partitions it leads handed to a lagging follower
    topic_count: int = 0
    topics: list[str] = field(default_factory=list)  # sorted, capped (see the MNT rules' max_listed)
    partitions: list[str] = field(default_factory=list)  # sorted, capped
    consumer_group_count: int = 0
    consumer_groups: list[str] = field(default_factory=list)
    coordinator_partitions: int = 0  # MNT003
    reasons: list[str] = field(default_factory=list)  # rule codes that made it unsafe or hit groups
    # Partitions it hosts whose topic's effective min.insync.replicas is not known (Kafka's default
    # stood in because no broker configuration was collected): not "safe", "not evaluated".
    unknown_min_isr_partitions: int = 0

    @property
    def acks1_at_risk(self) -> bool:
        """MNT006 names it: a warning, not a block."""
        return ACKS1_RULE in self.reasons

    @property
    def verdict(self) -> str:
        """ "unsafe" holds whatever min.insync.replicas is (unsafe at 1 is unsafe at any higher
        value); "safe" only when every partition it hosts has a known min.insync.replicas."""
        if not self.safe:
            return "unsafe"
        return "not evaluated" if self.unknown_min_isr_partitions else "safe"

    def to_json(self) -> dict:
        return {**dataclasses.asdict(self), "verdict": self.verdict}


@dataclass
class ControllerView:
    """A KRaft quorum voter (DescribeQuorum), simulated by MNT005."""

    node_id: int
    is_leader: bool = False
    is_broker: bool = False  # combined mode: the node is also a registered broker
    safe: bool = True
    reason: str = ""  # MNT005's message when unsafe
    # A quorum of one or two voters: its restart is a metadata outage whatever the order or the
    # wait (MNT005's planned_outage); the fix is more controllers, not waiting.
    outage: bool = False

    @property
    def verdict(self) -> str:
        return "safe" if self.safe else "outage" if self.outage else "unsafe"

    def to_json(self) -> dict:
        return {**dataclasses.asdict(self), "verdict": self.verdict}


@dataclass
class ClusterPreflight:
    cluster: str
    cluster_id: str
    controller_id: int | None
    metadata_mode: str | None
    brokers: list[BrokerView]
    order: list[int]
    unknown: bool = False  # nothing to simulate: no brokers or no partition state collected
    missing: list[str] = field(
        default_factory=list
    )  # what the snapshot lacks (nothing to simulate, or min ISR)
    blockers: list[str] = field(default_factory=list)  # why the whole cluster cannot be rolled now
    degraded: dict = field(default_factory=dict)  # {"leaderless"|"under_min_isr"|"offline_replicas": [names]}
    degraded_counts: dict = field(default_factory=dict)  # the same, uncapped counts
    incomplete: bool = False  # a source of this cluster failed
    selected: bool = False  # --broker: only some brokers were simulated
    plan: object | None = None  # auditor.commands.preflight_plan.FixPlan when the roll is not safe
    controllers: list[ControllerView] = field(default_factory=list)  # KRaft voters (empty: ZooKeeper, MSK)
    controller_order: list[int] = field(default_factory=list)  # safe voters, the quorum leader last
    controllers_managed: bool = False  # MSK KRaft: AWS runs the controllers; not in the snapshot
    procedure: list[str] = field(default_factory=list)  # how to roll: the order holds one step at a time
    # Why MNT006 (a restart handing partitions to a lagging follower) could not be judged, e.g. no
    # followers' lag in the metrics; "" when it was. Its column then says so instead of 0.
    acks1_not_evaluated: str = ""

    @property
    def outage_note(self) -> str:
        """What a quorum of one or two voters means for the roll ("" when it is not one)."""
        from auditor.commands.preflight_plan import outage_note

        return outage_note(self, self.outage_controllers) if self.outage_controllers else ""

    @property
    def unsafe(self) -> list[int]:
        return [b.broker_id for b in self.brokers if not b.safe]

    @property
    def unsafe_controllers(self) -> list[int]:
        return [c.node_id for c in self.controllers if c.verdict == "unsafe"]

    @property
    def outage_controllers(self) -> list[int]:
        """Controllers whose restart is a planned metadata outage (a quorum of one or two voters)."""
        return [c.node_id for c in self.controllers if c.verdict == "outage"]

    @property
    def acks1_at_risk(self) -> list[int]:
        """Brokers MNT006 names (a warning: a lagging follower takes over, acks=1 writes lost)."""
        return [b.broker_id for b in self.brokers if b.acks1_at_risk]

    @property
    def verdict(self) -> str:
        """safe | unsafe | outage | unknown: what the report says first, per cluster."""
        if self.unsafe or self.unsafe_controllers or self.blockers:
            return "unsafe"
        if self.unknown or self.incomplete or self.not_evaluated:
            return "unknown"
        return "outage" if self.outage_controllers else "safe"

    @property
    def not_evaluated(self) -> list[int]:
        """Brokers no simulated restart makes unsafe, but on partitions whose min.insync.replicas
        is not known: never called safe."""
        return [b.broker_id for b in self.brokers if b.verdict == "not evaluated"]

    @property
    def safe_to_roll(self) -> bool:
        return (
            not self.unsafe
            and not self.unsafe_controllers
            and not self.outage_controllers
            and not self.unknown
            and not self.blockers
            and not self.incomplete
            and not self.not_evaluated
        )

    @property
    def top_reasons(self) -> list[str]:
        """What the report says first: the blockers, and an incomplete snapshot (exit 3, not 1)."""
        return self.blockers + ([INCOMPLETE_REASON] if self.incomplete else [])

    def to_json(self) -> dict:
        return {
            "cluster": self.cluster,
            "cluster_id": self.cluster_id,
            "controller_id": self.controller_id,
            "metadata_mode": self.metadata_mode,
            "safe_to_roll": self.safe_to_roll,
            "verdict": self.verdict,
            "unsafe_brokers": self.unsafe,
            "not_evaluated_brokers": self.not_evaluated,
            "simulated": not self.unknown,
            "missing": self.missing,
            "incomplete": self.incomplete,
            "blockers": self.top_reasons,
            "degraded": self.degraded,
            "degraded_counts": self.degraded_counts,
            "brokers": [b.to_json() for b in self.brokers],
            "order": self.order,
            "controllers": [c.to_json() for c in self.controllers],
            "unsafe_controllers": self.unsafe_controllers,
            "outage_controllers": self.outage_controllers,
            "outage_note": self.outage_note or None,
            "controller_order": self.controller_order,
            "controllers_managed_by_aws": self.controllers_managed,
            "procedure": self.procedure,
            "acks1_loss_brokers": self.acks1_at_risk,
            "acks1_loss_not_evaluated": self.acks1_not_evaluated or None,
            "fix_plan": self.plan.to_json() if self.plan is not None else None,
        }


@dataclass
class PreflightResult:
    result: AuditResult
    clusters: list[ClusterPreflight]
    selected_brokers: list[int] | None = None
    target_version: str | None = None  # --target-version: an upgrade preflight

    @property
    def patch_rules(self) -> tuple[str, ...]:
        """The static and load rules preflight runs with the simulation (the report's footer):
        those that declare runs_in "preflight", besides the maintenance rules."""
        from auditor.registry import rules_run_by

        return tuple(r.code for r in rules_run_by("preflight") if r.scope != "maintenance")

    @property
    def upgrade_blockers(self) -> list[Finding]:
        """--target-version: the findings that make the upgrade unsafe (clients that stop
        working, JBOD on an unsupported version). A finding at info is advice, never a
        blocker (CLI002 for a client the brokers saw sending only versions 4.0 accepts)."""
        if not self.target_version:
            return []
        return [f for f in self.result.findings if f.rule in UPGRADE_BLOCKING and f.severity != "info"]

    @property
    def any_unsafe(self) -> bool:
        """A broker or controller is unsafe, or something blocks a cluster's roll (exit 1)."""
        return any(c.unsafe or c.unsafe_controllers or c.blockers for c in self.clusters)

    @property
    def any_outage(self) -> bool:
        """A cluster's roll is a planned metadata outage: a KRaft quorum of one or two voters (exit 1,
        as unsafe: the roll cannot go ahead as if it were safe; the verdict says which)."""
        return any(c.outage_controllers for c in self.clusters)

    @property
    def verdict(self) -> str:
        """The run's verdict line: unsafe > unknown (incomplete) > outage > safe."""
        if self.any_unsafe:
            return "unsafe"
        if self.incomplete:
            return "unknown"
        return "outage" if self.any_outage else "safe"

    @property
    def safe_to_roll(self) -> bool:
        return (
            not self.any_unsafe
            and not self.any_outage
            and not self.incomplete
            and all(c.safe_to_roll for c in self.clusters)
        )

    @property
    def incomplete(self) -> bool:
        """A source failed, a cluster has no brokers or partition state to simulate, or a
        broker's verdict needs a min.insync.replicas that was not collected: the preflight
        cannot say "safe" (exit 3)."""
        return self.result.is_incomplete or any(c.unknown or c.not_evaluated for c in self.clusters)


def preflight_config(config: AuditConfig, target_version: str | None = None) -> AuditConfig:
    """The user's config with preflight's fixed rule selection: the rules that declare they run in
    a preflight (auditor/declarations.py runs_in), and in an upgrade preflight those of "upgrade"."""
    from auditor.registry import rules_run_by

    commands = ("preflight", "upgrade") if target_version else ("preflight",)
    return dataclasses.replace(config, select=tuple(r.code for c in commands for r in rules_run_by(c)))


def check_target_version(target_version: str | None) -> str | None:
    if target_version is None:
        return None
    v = target_version.strip()
    if v in ("4", "4.0", "4.0.0"):
        return "4.0"
    raise UsageError(
        f"--target-version {target_version}: only {', '.join(TARGET_VERSIONS)} is known (the shipped "
        "Kafka 4.0 client table, auditor/data/kafka4_clients.json)"
    )


def broker_facts(tables: Tables):
    """Per registered broker: host, rack, partitions it leads, replicas it hosts, and the
    cluster's controller id and mode. DataFrame only; the caller collects it."""
    from checks._api import F, join

    leaders = tables.partitions.groupBy("cluster_id", F.col("leader").alias("broker_id")).agg(
        F.count(F.lit(1)).alias("leaders")
    )
    replicas = (
        tables.partitions.select("cluster_id", F.explode(F.col("replicas")).alias("broker_id"))
        .groupBy("cluster_id", "broker_id")
        .agg(F.count(F.lit(1)).alias("replicas_hosted"))
    )
    ctl = tables.controller.groupBy("cluster_id").agg(
        F.max("controller_id").alias("controller_id"), F.max("mode").alias("mode")
    )
    parts = tables.partitions.groupBy("cluster_id").agg(F.count(F.lit(1)).alias("partition_count"))
    d = join(
        join(
            join(
                join(
                    tables.brokers.select("cluster_id", "broker_id", "host", "rack"),
                    leaders,
                    ["cluster_id", "broker_id"],
                    "left",
                ),
                replicas,
                ["cluster_id", "broker_id"],
                "left",
            ),
            ctl,
            "cluster_id",
            "left",
        ),
        parts,
        "cluster_id",
        "left",
    )
    return d.select(
        "cluster_id",
        "broker_id",
        "host",
        "rack",
        F.coalesce(F.col("leaders"), F.lit(0)).alias("leaders"),
        F.coalesce(F.col("replicas_hosted"), F.lit(0)).alias("replicas_hosted"),
        "controller_id",
        "mode",
        F.coalesce(F.col("partition_count"), F.lit(0)).alias("partition_count"),
    )


def partition_state(tables: Tables):
    """The partitions that matter for a roll (not the healthy majority): leaderless, empty or
    short ISR, offline replicas, or fewer replicas than min.insync.replicas + 1; with the
    effective min.insync.replicas (the leader's, capped at the replica count on Kafka 3.7+:
    checks.transforms.with_effective_min_isr), the configured one (configured_min_isr) and
    where it comes from. DataFrame only."""
    from checks._api import F, join
    from checks.transforms import topic_settings, with_effective_min_isr

    settings = topic_settings(tables).select(
        "cluster_id", "topic", "min_insync_replicas", "min_insync_replicas_source"
    )
    # The min ISR the partition's leader applies (capped at the replica count on 3.7+).
    p = with_effective_min_isr(
        tables,
        join(
            tables.partitions.select(
                "cluster_id", "topic", "partition", "leader", "replicas", "isr", "offline_replicas"
            ),
            settings,
            ["cluster_id", "topic"],
            "left",
        ),
    ).drop("leader_v")
    isr = F.when(F.col("isr").isNull(), F.lit(0)).otherwise(F.size("isr"))
    reps = F.when(F.col("replicas").isNull(), F.lit(0)).otherwise(F.size("replicas"))
    off = F.when(F.col("offline_replicas").isNull(), F.lit(0)).otherwise(F.size("offline_replicas"))
    risky = (
        (isr == 0)
        | F.coalesce(F.col("leader") < 0, F.lit(False))
        | (off > 0)
        | (isr < reps)
        | F.coalesce(reps - F.lit(1) < F.col("min_insync_replicas"), F.lit(False))
    )
    return p.where(risky)


def lag_inputs(tables: Tables):
    """Per cluster, what MNT006 can judge from: followers' ConsumerLag rows (lag_rows), log end offset
    rows (leo_rows) and the most timed scrapes of one broker's log end offsets (leo_scrapes: a gap is
    lag only when it persists into a second scrape). DataFrame only."""
    from checks._api import F

    zero = F.lit(0).cast("bigint")
    lag = tables.replica_lag.groupBy("cluster_id").agg(
        F.count(F.lit(1)).alias("lag_rows"), zero.alias("leo_rows"), zero.alias("leo_scrapes")
    )
    per_broker = tables.log_end_offsets.groupBy("cluster_id", "broker_id").agg(
        F.count(F.lit(1)).alias("rows"), F.countDistinct("scraped_at_ms").alias("scrapes")
    )
    leo = per_broker.groupBy("cluster_id").agg(
        zero.alias("lag_rows"), F.sum("rows").alias("leo_rows"), F.max("scrapes").alias("leo_scrapes")
    )
    return (
        lag.unionByName(leo)
        .groupBy("cluster_id")
        .agg(
            F.max("lag_rows").alias("lag_rows"),
            F.max("leo_rows").alias("leo_rows"),
            F.max("leo_scrapes").alias("leo_scrapes"),
        )
    )


ONE_SCRAPE_REASON = (
    "the log end offsets are of one scrape only and no follower's ConsumerLag was collected: a follower a "
    "few records behind in one scrape is replication in flight as often as lag (collect scrapes a metrics "
    "URL twice, seconds apart; from files, give two scrapes of each broker)"
)


def _acks1_not_evaluated(cid: str, coverage: dict, inputs: list[dict]) -> str:
    """Why MNT006 could not judge this cluster ("": it could)."""
    reason = next((e["reason"] for e in (coverage or {}).get(cid, []) if "MNT006" in e["rules"]), "")
    if reason:
        return reason
    row = next((r for r in inputs if r["cluster_id"] == cid), None)
    if row and not row["lag_rows"] and row["leo_rows"] and row["leo_scrapes"] < 2:
        return ONE_SCRAPE_REASON
    return ""


def quorum_voters(tables: Tables):
    """The KRaft quorum voters (DescribeQuorum): cluster_id, node_id, is_leader. DataFrame only."""
    from checks._api import F

    return tables.quorum.where(F.col("role") == "voter").select(
        "cluster_id", "node_id", F.coalesce(F.col("is_leader"), F.lit(False)).alias("is_leader")
    )


# Where a broker's own configuration comes from: server.properties files (no source column),
# or DescribeConfigs (the Admin API, MSK), which also lists the defaults it applies. ZooKeeper
# holds only the dynamic overrides, so a ZooKeeper-only snapshot lacks it.
BROKER_CONFIG_SOURCES = ("STATIC_BROKER_CONFIG", "DEFAULT_CONFIG")


def unknown_min_isr(tables: Tables):
    """Per (cluster, broker): the replicas it hosts of topics whose effective min.insync.replicas
    is only Kafka's default because the brokers' configuration was not collected (no topic
    override, no dynamic broker or cluster default, no server.properties or DescribeConfigs
    row of any broker): the real value may be higher, so a restart cannot be judged safe.
    Columns: cluster_id, broker_id, partitions, topic (the first, by name). DataFrame only."""
    from checks._api import F, join
    from checks.transforms import KAFKA_DEFAULT, SOURCE_NAMES, topic_settings

    configured = (
        tables.configs.where(
            (F.col("entity_type") == "broker")
            & F.coalesce(F.col("source"), F.lit("STATIC_BROKER_CONFIG")).isin(*BROKER_CONFIG_SOURCES)
        )
        .groupBy("cluster_id")
        .agg(F.count(F.lit(1)).alias("broker_config_rows"))
    )
    defaulted = join(
        topic_settings(tables)
        .where(F.col("min_insync_replicas_source") == SOURCE_NAMES[KAFKA_DEFAULT])
        .select("cluster_id", "topic"),
        configured,
        "cluster_id",
        "left",
    ).where(F.col("broker_config_rows").isNull())
    hosted = tables.partitions.select("cluster_id", "topic", F.explode(F.col("replicas")).alias("broker_id"))
    return (
        join(hosted, defaulted.select("cluster_id", "topic"), ["cluster_id", "topic"])
        .groupBy("cluster_id", "broker_id")
        .agg(
            F.count(F.lit(1)).alias("partitions"),
            F.min("topic").alias("topic"),
        )
    )


def _msk_blockers(ref: SnapshotRef) -> list[str]:
    """What the MSK source recorded (manifest ``cluster.msk``) that makes a roll unsafe now. The
    manifest is outside input: a value of the wrong shape is itself a blocker (whether AWS is
    changing the cluster is then unknown), never a crash; check and fleet do not read it."""
    msk = ref.manifest.cluster.get("msk") or {}
    out = []
    state = msk.get("state")
    if state and str(state).upper() != "ACTIVE":
        out.append(f"the MSK cluster is in state {_short(state)} (not ACTIVE): AWS is changing it now")
    ops = msk.get("operations_in_progress") or []
    if not isinstance(ops, list):
        return [
            *out,
            "MSK operation in progress unknown: manifest.json's cluster.msk.operations_in_progress is "
            f"not a list ({_short(ops)})",
        ]
    for op in ops:
        if not isinstance(op, dict):
            out.append(f"MSK operation in progress: unreadable entry ({_short(op)}) in manifest.json")
            continue
        out.append(
            f"MSK operation in progress: {_short(op.get('type') or 'unknown type')} "
            f"({_short(op.get('state') or 'state unknown')}, started {_short(op.get('start_time') or 'unknown')})"
        )
    return out


def _short(value, width: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= width else text[: width - 3] + "..."


def run_preflight(
    engine: Engine,
    refs: Sequence[SnapshotRef],
    config: AuditConfig,
    brokers: Sequence[int] | None = None,
    plan: bool = True,
    target_version: str | None = None,
) -> PreflightResult:
    """``plan``: compute a fix plan for clusters that are not safe (and prove it by re-running
    this function on a copy of the snapshot with the plan applied). ``target_version``
    ("4.0"): an upgrade preflight, which also runs the rules of "upgrade"."""
    target_version = check_target_version(target_version)
    result = run_audit(
        engine, refs, preflight_config(config, target_version), scopes=("cluster", "maintenance")
    )
    tables = Tables(engine, refs)
    # Through the plan cache like the rules' plans (the bundle holds them): building these
    # DataFrames is sqlframe work, ~1 s per cluster and again for each plan's re-simulation.
    facts = engine.rows(tables.compile("preflight_broker_facts", lambda: broker_facts(tables)))
    states = engine.rows(tables.compile("preflight_partition_state", lambda: partition_state(tables)))
    voters = engine.rows(tables.compile("preflight_quorum_voters", lambda: quorum_voters(tables)))
    defaulted = engine.rows(tables.compile("preflight_unknown_min_isr", lambda: unknown_min_isr(tables)))
    inputs = engine.rows(tables.compile("preflight_lag_inputs", lambda: lag_inputs(tables)))
    selected = sorted(set(brokers)) if brokers else None
    if selected:
        known = {f["broker_id"] for f in facts}
        missing = [b for b in selected if b not in known]
        if missing:
            listed = ", ".join(map(str, sorted(known))) or "none"
            raise UsageError(
                f"--broker {', '.join(map(str, missing))}: not a registered broker of the snapshot "
                f"(brokers: {listed})"
            )
        result.findings = [
            f
            for f in result.findings
            if not (f.rule in PER_BROKER_RULES and _int(f.resource_name) not in selected)
        ]
    clusters = []
    for ref in refs:
        cid = ref.manifest.cluster_id
        name = ref.manifest.cluster_name
        rows = [f for f in facts if f["cluster_id"] == cid]
        if selected:
            rows = [f for f in rows if f["broker_id"] in selected]
        findings = [f for f in result.findings if f.cluster_id == cid]
        view = _cluster_view(ref, name, rows, findings)
        view.selected = bool(selected)
        view.acks1_not_evaluated = _acks1_not_evaluated(cid, result.coverage, inputs)
        _controllers(
            view, ref, [v for v in voters if v["cluster_id"] == cid], findings, {r["broker_id"] for r in rows}
        )
        _not_evaluated(view, [d for d in defaulted if d["cluster_id"] == cid], ref)
        _blockers(
            view,
            ref,
            [s for s in states if s["cluster_id"] == cid],
            any(i.get("cluster") in (name, cid) for i in result.incomplete) or bool(ref.manifest.errors),
            findings,
        )
        view.procedure = _procedure(view, ref)
        clusters.append(view)
    pre = PreflightResult(result, clusters, selected, target_version)
    if plan:
        from auditor.commands.preflight_plan import attach_plans

        attach_plans(engine, refs, config, pre, facts, states, simulate=run_preflight)
    return pre


MAX_LISTED = 20
INCOMPLETE_REASON = (
    "the snapshot is incomplete (a source failed): a topic whose description failed would be "
    "simulated with min.insync.replicas 1; collect again"
)


def _is_msk(ref: SnapshotRef) -> bool:
    c = ref.manifest.cluster
    return str(c.get("platform") or "").lower() == "msk" or bool(c.get("msk"))


def _controllers(
    view: ClusterPreflight, ref: SnapshotRef, voters: list[dict], findings: list[Finding], brokers: set[int]
) -> None:
    """The KRaft controllers: each voter safe unless MNT005 names it; their order (followers
    first, the quorum leader last, as Strimzi's KafkaRoller defers the active controller). On
    MSK KRaft the controllers are AWS's and absent from the snapshot: said instead."""
    mode = (view.metadata_mode or "").lower()
    if mode == "kraft" and _is_msk(ref) and not voters:
        view.controllers_managed = True
        return
    hits = {
        _int(f.resource_name): f
        for f in findings
        if f.rule == CONTROLLER_RULE and f.resource_type == "node" and _int(f.resource_name) is not None
    }
    for v in sorted(voters, key=lambda v: v["node_id"]):
        hit = hits.get(v["node_id"])
        view.controllers.append(
            ControllerView(
                v["node_id"],
                bool(v["is_leader"]),
                v["node_id"] in brokers,
                hit is None,
                hit.message if hit else "",
                bool(hit and (hit.evidence or {}).get("planned_outage") is True),
            )
        )
    view.controller_order = [
        c.node_id for c in sorted(view.controllers, key=lambda c: (c.is_leader, c.node_id)) if c.safe
    ]


def _saturation(findings: list[Finding]) -> list[str]:
    """Per broker, what is saturated (SATURATION_RULES findings), as short phrases."""
    by_broker: dict[str, list[str]] = {}
    for f in findings:
        if f.rule not in SATURATION_RULES:
            continue
        e = f.evidence or {}
        if f.rule == "THR001":
            what = f"network threads {_pct(e.get('network_processor_avg_idle'))} idle (THR001)"
        elif f.rule == "THR002":
            what = f"request handlers {_pct(e.get('request_handler_avg_idle'))} idle (THR002)"
        elif f.rule == "THR006":
            size, cap = e.get("request_queue_size"), e.get("queued_max_requests")
            if not isinstance(size, int | float) or not isinstance(cap, int | float) or cap <= 0:
                continue
            if size <= SATURATED_QUEUE_FILL * cap:
                continue  # queued.max.requests small for the connections, but the queue is not full now
            what = f"request queue {size:g} of queued.max.requests={cap:g} (THR006)"
        elif f.rule == "MSK003":
            what = f"CPU {e.get('cpu_user_system_percent')}% (MSK003, AWS: keep it under 60%)"
        else:
            what = f"log dir above its disk-usage threshold ({f.resource_type} {f.resource_name}, DSK006)"
        name = f.resource_name if f.resource_type == "broker" else f"{f.resource_type} {f.resource_name}"
        by_broker.setdefault(name, []).append(what)
    # Brokers in the same state share one line: "broker(s) 1, 2, 3: ...".
    by_state: dict[str, list[str]] = {}
    for b, w in by_broker.items():
        by_state.setdefault(", ".join(w), []).append(b)
    return [
        f"broker(s) {', '.join(sorted(names, key=lambda n: (len(n), n)))}: {state}"
        for state, names in sorted(by_state.items(), key=lambda kv: min(kv[1]))
    ]


def _pct(value) -> str:
    return f"{value * 100:.0f}%" if isinstance(value, int | float) else "?"


def _blockers(
    view: ClusterPreflight,
    ref: SnapshotRef,
    states: list[dict],
    incomplete: bool,
    findings: list[Finding] = (),
) -> None:
    """What blocks the roll of the whole cluster, whatever one more restart does. Orders are
    only given for clusters nothing blocks."""
    groups: dict[str, list[str]] = {"leaderless": [], "under_min_isr": [], "offline_replicas": []}
    for s in states:
        name = f"{s['topic']}-{s['partition']}"
        isr = s["isr"] or []
        if not isr or (s["leader"] is not None and s["leader"] < 0):
            groups["leaderless"].append(name)
        elif s["min_insync_replicas"] is not None and len(set(isr)) < s["min_insync_replicas"]:
            groups["under_min_isr"].append(name)
        if s["offline_replicas"]:
            groups["offline_replicas"].append(name)
    view.degraded_counts = {k: len(v) for k, v in groups.items()}
    view.degraded = {k: sorted(v)[:MAX_LISTED] for k, v in groups.items()}
    labels = {
        "leaderless": "without a leader (offline)",
        "under_min_isr": "already below min.insync.replicas (acks=all writes already fail)",
        "offline_replicas": "with offline replicas (a failed broker or log dir)",
    }
    for key, names in groups.items():
        if names:
            more = f" ... and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else ""
            view.blockers.append(
                f"{len(names)} partition(s) {labels[key]}: {', '.join(sorted(names)[:MAX_LISTED])}{more}"
            )
    view.blockers.extend(_msk_blockers(ref))
    saturated = _saturation(list(findings))
    if saturated:
        view.blockers.append(
            f"brokers without load headroom: {'; '.join(saturated[:MAX_LISTED])}"
            f"{' ... and more' if len(saturated) > MAX_LISTED else ''}: each restart moves the restarted "
            "broker's partition leadership and client connections onto the others, which are already "
            "saturated (a connection surge onto starving brokers); relieve the load (threads, queue, "
            "capacity) first"
        )
    if view.controllers and not any(c.is_leader for c in view.controllers):
        view.blockers.append("the KRaft quorum has no leader: no metadata change can commit now")
    view.incomplete = incomplete
    if view.blockers or incomplete:
        view.order = []
        view.controller_order = []


def _procedure(view: ClusterPreflight, ref: SnapshotRef) -> list[str]:
    """How to use the order: it holds at collection time only. After each restart the next
    node is safe only once the restarted one is back in every ISR (and, for a controller,
    caught up with the quorum leader): the condition to check and the command to re-run."""
    if view.unknown or view.not_evaluated:
        return []  # first what the snapshot lacks, then a preflight that can say "safe"
    bootstrap = next(
        (
            str(s["target"]).split(",")[0]
            for s in ref.manifest.sources
            if s.get("source") == "admin" and s.get("target")
        ),
        "BOOTSTRAP:9092",
    )
    steps = [
        "the order holds at collection time only: restart one node at a time, and before the next one "
        "wait until the restarted node is back in the ISR of every partition it replicates",
        f"condition: `kafka-topics.sh --bootstrap-server {bootstrap} --describe --under-replicated-partitions` "
        "prints nothing (URP back to 0; UnderReplicatedPartitions 0 on every broker) and the broker is listed "
        "in every ISR again",
    ]
    if view.outage_controllers:
        steps.append(
            f"controller(s) {', '.join(map(str, view.outage_controllers))}: each restart stops metadata commits "
            f"until it is back (a quorum of {len(view.controllers)}): announce it as a metadata outage, restart "
            "no broker while it is down, and before anything else wait until "
            f"`kafka-metadata-quorum.sh --bootstrap-server {bootstrap} describe --status` shows a leader again"
        )
    elif view.controllers:
        steps.append(
            "controllers first, the quorum leader last; after each controller restart wait until "
            f"`kafka-metadata-quorum.sh --bootstrap-server {bootstrap} describe --replication` shows it caught "
            "up (Lag near 0, LastCaughtUpTimestamp recent)"
        )
    steps.append(
        "then collect a new snapshot and run `kafka-audit preflight` on it again before the next restart: "
        "a broker that was safe may no longer be (an ISR that has not recovered, a partition newly at min ISR)"
    )
    return steps


def _not_evaluated(view: ClusterPreflight, defaulted: list[dict], ref: SnapshotRef) -> None:
    """Say precisely what the snapshot lacks: nothing to simulate (no registered brokers, no
    partition state), or the min.insync.replicas a broker's verdict needs."""
    if view.unknown:
        view.missing = _nothing_to_simulate(view, ref)
        return
    by_broker = {d["broker_id"]: d for d in defaulted}
    for b in view.brokers:
        if b.broker_id in by_broker:
            b.unknown_min_isr_partitions = int(by_broker[b.broker_id]["partitions"])
    if view.not_evaluated:
        first = min(d["topic"] for d in defaulted)
        view.missing.append(
            f"the effective min.insync.replicas of topics such as {first}: no topic override or dynamic "
            "default sets it and no broker configuration was collected (server.properties via "
            "--broker-config, or DescribeConfigs via --bootstrap-servers); Kafka's default 1 may not be "
            f"what the brokers use, so broker(s) {', '.join(map(str, view.not_evaluated))} are not evaluated"
        )
        view.order = []


def _nothing_to_simulate(view: ClusterPreflight, ref: SnapshotRef) -> list[str]:
    sources = sorted({s.get("source") for s in ref.manifest.sources if s.get("status") == "ok"} - {None})
    had = f" (this snapshot's sources: {', '.join(sources)})" if sources else ""
    out = []
    if not view.brokers:
        out.append(
            "no registered brokers: they come from ZooKeeper (--zookeeper), the Admin API "
            f"(--bootstrap-servers) or MSK (--msk-cluster-arn){had}"
        )
    out.append(
        "no partition state (replicas, ISR, leaders): it comes from ZooKeeper (--zookeeper), the Admin "
        f"API (--bootstrap-servers) or MSK; broker configuration files hold none{had}"
    )
    return out


def _int(text: str) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def _cluster_view(ref: SnapshotRef, name: str, rows: list[dict], findings: list[Finding]) -> ClusterPreflight:
    controller = next((r["controller_id"] for r in rows if r["controller_id"] is not None), None)
    mode = next((r["mode"] for r in rows if r["mode"]), None) or ref.manifest.cluster.get("metadata_mode")
    zookeeper = (mode or "").lower() == "zookeeper"
    if not zookeeper:
        controller = None  # DescribeCluster's pick on KRaft, not the active controller
    by_broker: dict[int, dict[str, Finding]] = {}
    for f in findings:
        if f.rule in PER_BROKER_RULES and f.resource_type == "broker" and _int(f.resource_name) is not None:
            by_broker.setdefault(_int(f.resource_name), {})[f.rule] = f
    views = []
    for r in sorted(rows, key=lambda r: r["broker_id"]):
        hits = by_broker.get(r["broker_id"], {})
        v = BrokerView(
            cluster=name,
            broker_id=r["broker_id"],
            host=r["host"],
            rack=r["rack"],
            leaders=r["leaders"],
            replicas=r["replicas_hosted"],
            # ZooKeeper mode only: on KRaft DescribeCluster's "controller" is an arbitrary broker
            # (the active controller is the quorum leader, see ControllerView).
            is_controller=zookeeper
            and controller is not None
            and controller >= 0
            and r["broker_id"] == controller,
        )
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
        if ACKS1_RULE in hits:  # a warning beside the broker: not "hit", not unsafe
            v.acks1_loss_partitions = int(hits[ACKS1_RULE].evidence.get("partition_count", 0))
            v.reasons.append(ACKS1_RULE)
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
    order = [
        v.broker_id
        for v in sorted((v for v in views if v.safe), key=lambda v: (v.is_controller, v.leaders, v.broker_id))
    ]
    unknown = not rows or all(r["partition_count"] == 0 for r in rows)
    return ClusterPreflight(name, ref.manifest.cluster_id, controller, mode, views, order, unknown)


def preflight_of(
    target: Path | None,
    sources: Sources,
    config: AuditConfig,
    *,
    brokers=None,
    target_version: str | None = None,
    engine_name: str = "duckdb",
) -> PreflightResult:
    """``preflight``: TARGET's snapshots, or a snapshot collected from ``sources`` first, simulated."""
    import tempfile

    from auditor.commands.collect import snapshot_refs
    from auditor.engine import open_engine

    with tempfile.TemporaryDirectory(prefix="kafka-audit-") as workdir:
        refs = snapshot_refs(target, sources, workdir)
        with open_engine(engine_name) as eng:
            return run_preflight(eng, refs, config, brokers=brokers, target_version=target_version)
