"""The fix plan of `kafka-audit preflight`: what to change so that every broker can be restarted.

Read-only: the plan is text (commands, a reassignment JSON, conditions to wait for) for a
person to review and run; nothing here talks to a cluster.

Algorithm, per cluster that is not safe to roll (auditor/commands/preflight.py), from the partitions
that matter (``partition_state``: leaderless, short ISR, offline replicas, replicas <=
min.insync.replicas):

1. Config causes: a partition with replication factor RF and effective min.insync.replicas
   M blocks a restart even with a full ISR when RF - 1 < M. Per topic (r = the smallest RF
   of its such partitions, n = registered brokers):
   * r >= 3: min.insync.replicas = r - 1 (one change);
   * else, n >= 3: raise those partitions' RF to 3 (a rack-aware `kafka-reassign-partitions.sh`
     JSON: new replicas on brokers of racks the partition does not use yet, least-loaded
     first, then broker id), and min.insync.replicas = 2 when M > 2;
   * else r == 2: min.insync.replicas = 1 (said to be weak); r == 1 and n == 2: RF 2;
   * else nothing fixes it but more brokers (a wait).
   One change per place the value comes from, which is what makes the set small: a topic
   override is one `--entity-type topics` command per topic; a dynamic cluster default or a
   server.properties value is one `--entity-type brokers --entity-default` command (a dynamic
   default wins over server.properties; it applies to every topic inheriting it, and only
   lowers); per-broker dynamic values one command per broker. On MSK a configuration
   revision is applied by a rolling update that restarts every broker (AWS: "Update the
   configuration of an Amazon MSK cluster"), i.e. the very roll that is unsafe now: there,
   topics that inherit the value get topic overrides (applied at once, no restart) and the
   revision line is a follow-up, to apply once the overrides are in place.
2. What no change fixes becomes a "wait for ...", with the condition to re-check: replicas
   out of the ISR (by broker; "broker N is not registered": it is down), partitions without
   a leader or with offline replicas, an MSK cluster not ACTIVE or with an operation in
   progress, an incomplete snapshot.
3. Proof: the changes are applied to a copy of the snapshot (configs; reassigned partitions
   get their new replicas in replicas and in the ISR, i.e. the reassignment has completed)
   and the whole preflight runs again on it. The plan says "after these N changes: K of M
   brokers safe", and why not all when waits remain.
"""

from __future__ import annotations

import copy
import json
import shlex
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

MSK_REVISION_SOURCE = "https://docs.aws.amazon.com/msk/latest/developerguide/msk-update-cluster-config.html"
MAX_LISTED = 20
REASSIGNMENT_FILE = "increase-replication-factor.json"  # what the reassign commands read


@dataclass
class Change:
    kind: str  # topic_config | default_config | broker_config | reassign
    summary: str
    commands: list[str]
    topics: list[str] = field(default_factory=list)
    value: int | None = None  # min.insync.replicas for config changes
    brokers: list[int] = field(default_factory=list)  # broker_config


@dataclass
class Wait:
    what: str
    recheck: str


@dataclass
class FixPlan:
    cluster: str
    bootstrap: str
    changes: list[Change] = field(default_factory=list)
    waits: list[Wait] = field(default_factory=list)
    followups: list[str] = field(default_factory=list)  # not counted: after the roll (MSK revision lines)
    notes: list[str] = field(
        default_factory=list
    )  # not counted: what no change or wait fixes (a small quorum)
    reassignment: dict | None = None  # kafka-reassign-partitions.sh JSON
    reassignment_file: str = REASSIGNMENT_FILE  # what the reassign commands read (written first)
    proof: dict = field(default_factory=dict)  # brokers, safe, unsafe, blockers, reached_safe, error

    def to_json(self) -> dict:
        return {
            "cluster": self.cluster,
            "bootstrap": self.bootstrap,
            "changes": [asdict(c) for c in self.changes],
            "waits": [asdict(w) for w in self.waits],
            "followups": self.followups,
            "notes": self.notes,
            "reassignment": self.reassignment,
            "proof": self.proof,
        }

    @property
    def proof_line(self) -> str:
        p = self.proof
        if p.get("error"):
            return f"not proven: {p['error']}"
        counts = f"{p.get('safe', 0)} of {p.get('brokers', 0)} broker(s) safe"
        head = (
            f"after these {len(self.changes)} change(s): {counts}"
            if self.changes
            else f"no configuration change helps: {counts} as is"
        )
        if p.get("reached_safe"):
            return head + " (re-simulated on a copy of the snapshot)"
        if p.get("outage_only"):
            return (
                head
                + " (re-simulated on a copy of the snapshot); restarting controller(s) "
                + ", ".join(map(str, p.get("outage_controllers") or []))
                + " stays a planned metadata outage (see the note)"
            )
        why = "; ".join(p.get("blockers", []) or [])
        unsafe = p.get("unsafe") or []
        still = f"; still unsafe: broker(s) {', '.join(map(str, unsafe))}" if unsafe else ""
        return (
            head
            + still
            + (f"; still blocked: {why}" if why else "")
            + " (no config change fixes that: see the waits)"
        )


def bootstrap_of(ref, brokers: list[dict]) -> str:
    for s in ref.manifest.sources:
        if s.get("source") == "admin" and s.get("target"):
            return str(s["target"]).split(",")[0]
    for b in sorted(brokers, key=lambda b: b["broker_id"]):
        if b.get("host"):
            return f"{b['host']}:9092"
    return "BOOTSTRAP:9092"


def _configs_cmd(bootstrap: str, entity: str, value: int) -> str:
    return (
        f"kafka-configs.sh --bootstrap-server {shlex.quote(bootstrap)} --alter {entity} "
        f"--add-config min.insync.replicas={value}"
    )


def _listed(names) -> str:
    names = sorted(names)
    more = f" ... and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else ""
    return ", ".join(names[:MAX_LISTED]) + more


def compute_plan(view, ref, states: list[dict], facts: list[dict], broker_configs: list[dict]) -> FixPlan:
    """The plan for one cluster (no proof yet). ``states``: partition_state rows of the cluster;
    ``facts``: broker_facts rows of every registered broker; ``broker_configs``: its per-broker
    dynamic min.insync.replicas rows."""
    registered = {f["broker_id"]: f for f in facts}
    bootstrap = bootstrap_of(ref, facts)
    plan = FixPlan(view.cluster, bootstrap)
    msk = str(ref.manifest.cluster.get("platform") or "").lower() == "msk" or bool(
        ref.manifest.cluster.get("msk")
    )
    selected = {b.broker_id for b in view.brokers} if view.selected else None

    def concerns(s) -> bool:
        return selected is None or bool((set(s["replicas"] or []) | set(s["isr"] or [])) & selected)

    target, new_rf = _config_causes(plan, states, registered, concerns, msk, broker_configs)
    _isr_waits(plan, states, registered, concerns, target, new_rf)
    _blocker_waits(plan, view)
    # then the quorum: the plan lists its waits in this order
    # MNT006 (a lagging follower takes over: acks=1 writes lost) is a warning, never a wait: it blocks
    # nothing. A quorum of one or two voters is no wait either: waiting never gives it a voter to spare.
    lagging = sorted(c.node_id for c in getattr(view, "controllers", []) if c.verdict == "unsafe")
    outage = sorted(c.node_id for c in getattr(view, "controllers", []) if c.verdict == "outage")
    if outage:
        plan.notes.append(outage_note(view, outage))
    if lagging:
        plan.waits.append(
            Wait(
                f"the KRaft quorum to have a caught-up majority without each controller it restarts (MNT005: "
                f"controller(s) {', '.join(map(str, lagging))} cannot restart now)",
                f"kafka-metadata-quorum.sh --bootstrap-server {shlex.quote(bootstrap)} describe --replication "
                "shows every voter caught up (Lag near 0, LastCaughtUpTimestamp within "
                "controller.quorum.fetch.timeout.ms of the leader's); collect again",
            )
        )
    return plan


def _config_causes(plan, states, registered, concerns, msk, broker_configs) -> tuple[dict, dict]:
    """Config causes, per topic: the min.insync.replicas or replication factor that lets a
    restart keep every partition writable. Returns the new min.insync.replicas per topic and the
    new replication factor per (topic, partition)."""
    n = len(registered)
    bootstrap = plan.bootstrap
    by_topic: dict[str, list[dict]] = {}
    for s in states:
        m = s["min_insync_replicas"] or 1
        if len(s["replicas"] or []) - 1 < m and concerns(s):
            by_topic.setdefault(s["topic"], []).append(s)
    target: dict[str, int] = {}  # topic -> new min.insync.replicas
    grow: list[dict] = []  # partitions whose RF goes to new_rf
    new_rf: dict[tuple, int] = {}
    for topic, parts in sorted(by_topic.items()):
        m = _configured(parts[0]) or 1  # a 3.7+ leader caps it at RF: a larger RF lifts the cap
        r = min(len(s["replicas"] or []) for s in parts)
        if r >= 3:
            target[topic] = r - 1
        elif n >= 3:
            for s in parts:
                if len(s["replicas"] or []) < 3:
                    grow.append(s)
                    new_rf[(s["topic"], s["partition"])] = 3
            if m > 2:
                target[topic] = 2
        elif r == 2:
            target[topic] = 1
        elif r == 1 and n == 2 and m == 1:
            for s in parts:
                grow.append(s)
                new_rf[(s["topic"], s["partition"])] = 2
        else:
            plan.waits.append(
                Wait(
                    f"more brokers: {topic} has {r} replica(s) and the cluster {n} broker(s), so no "
                    "replication factor or min.insync.replicas survives a restart",
                    "the cluster has at least 3 registered brokers; run kafka-audit preflight again",
                )
            )
    _config_changes(plan, target, by_topic, msk, bootstrap, broker_configs)
    if grow:
        _reassignment(plan, grow, new_rf, registered, bootstrap)
    return target, new_rf


def _isr_waits(plan, states, registered, concerns, target, new_rf) -> None:
    """Waits: replicas out of the ISR that still block once the config is changed."""
    bootstrap = plan.bootstrap
    missing: dict[int, set[str]] = {}
    offline: set[int] = set()
    leaderless: list[str] = []
    for s in states:
        if not concerns(s):
            continue
        name = f"{s['topic']}-{s['partition']}"
        isr = set(s["isr"] or [])
        reps = list(s["replicas"] or [])
        m = target.get(s["topic"], s["min_insync_replicas"] or 1)
        key = (s["topic"], s["partition"])
        if key in new_rf:
            continue  # the reassignment (once complete) gives it a full, larger ISR
        leaderless_now = not isr or (s["leader"] is not None and s["leader"] < 0)
        blocks = leaderless_now or len(isr) < m or len(isr) - 1 < m or bool(s["offline_replicas"])
        if leaderless_now:
            leaderless.append(name)
        if blocks:
            offline.update(s["offline_replicas"] or [])
            for b in set(reps) - isr | set(s["offline_replicas"] or []):
                missing.setdefault(b, set()).add(name)
    for b, names in sorted(missing.items()):
        if b not in registered:
            state = "to come back (it is not registered: down) and"
        elif b in offline:
            state = "to get its offline replicas back (a failed log dir or disk) and"
        else:
            state = "to"
        plan.waits.append(
            Wait(
                f"broker {b} {state} rejoin the ISR of {len(names)} partition(s): {_listed(names)}",
                f"kafka-topics.sh --bootstrap-server {shlex.quote(bootstrap)} --describe --under-replicated-partitions "
                f"lists none of them (ISR == replicas), then run kafka-audit preflight again",
            )
        )
    if leaderless:
        plan.waits.append(
            Wait(
                f"{len(leaderless)} partition(s) to elect a leader: {_listed(leaderless)}",
                f"kafka-topics.sh --bootstrap-server {shlex.quote(bootstrap)} --describe "
                "--unavailable-partitions prints nothing",
            )
        )


def _blocker_waits(plan, view) -> None:
    """Waits for the cluster-wide blockers: an MSK operation, load, a leaderless quorum, an
    incomplete snapshot."""
    bootstrap = plan.bootstrap
    for reason in view.top_reasons:
        if reason.startswith("the MSK cluster") or reason.startswith("MSK operation"):
            plan.waits.append(
                Wait(
                    f"AWS to finish: {reason}",
                    "aws kafka describe-cluster-v2 shows State ACTIVE and "
                    "aws kafka list-cluster-operations-v2 shows no operation in progress; collect "
                    "again",
                )
            )
        elif "without load headroom" in reason:
            plan.waits.append(
                Wait(
                    f"the load to drop (no configuration change of min ISR or RF helps): {reason}",
                    "NetworkProcessorAvgIdlePercent and RequestHandlerAvgIdlePercent above 0.3, RequestQueueSize "
                    "well below queued.max.requests, MSK CPU (user + system) below 60% and disks below 85% on "
                    "every broker; collect again and run kafka-audit preflight",
                )
            )
        elif reason.startswith("the KRaft quorum has no leader"):
            plan.waits.append(
                Wait(
                    "the KRaft quorum to elect a leader",
                    f"kafka-metadata-quorum.sh --bootstrap-server {shlex.quote(bootstrap)} describe --status "
                    "shows a LeaderId; collect again",
                )
            )
        elif reason.startswith("the snapshot is incomplete"):
            plan.waits.append(
                Wait(
                    "a complete snapshot: a source failed",
                    "kafka-audit collect reports no source "
                    "error; run kafka-audit preflight on the new snapshot",
                )
            )


def outage_note(view, controllers: list[int]) -> str:
    """What a quorum of one or two voters means for the roll: no order or wait avoids the outage."""
    voters = len(view.controllers)
    return (
        f"restarting controller(s) {', '.join(map(str, controllers))} is a metadata outage whatever the order or "
        f"the wait: a KRaft quorum of {voters} voter(s) cannot lose one (MNT005). No configuration change of "
        "this plan helps: add controllers to reach 3 (CTL006; KIP-853 on a dynamic quorum, Kafka 3.9+: "
        "`kafka-storage format --no-initial-controllers` on each new controller, then `kafka-metadata-quorum "
        "--bootstrap-controller C add-controller`; a static controller.quorum.voters quorum is changed by "
        "reconfiguring every node), or announce each controller restart as a metadata outage and restart no "
        "broker while a controller is down"
    )


def _config_changes(
    plan: FixPlan,
    target: dict[str, int],
    by_topic: dict[str, list[dict]],
    msk: bool,
    bootstrap: str,
    broker_configs: list[dict],
) -> None:
    overrides = sorted(t for t in target if by_topic[t][0]["min_insync_replicas_source"] == "topic override")
    inherited: dict[str, list[str]] = {}
    for t in sorted(target):
        if t not in overrides:
            inherited.setdefault(by_topic[t][0]["min_insync_replicas_source"] or "Kafka default", []).append(
                t
            )
    for t in overrides:
        plan.changes.append(
            Change(
                "topic_config",
                f"topic {t}: min.insync.replicas "
                f"{_configured(by_topic[t][0])} -> {target[t]} (topic override)",
                [_configs_cmd(bootstrap, f"--entity-type topics --entity-name {shlex.quote(t)}", target[t])],
                [t],
                target[t],
            )
        )
    for source, topics in sorted(inherited.items()):
        value = min(target[t] for t in topics)
        old = _configured(by_topic[topics[0]][0])
        if msk:
            for t in topics:
                plan.changes.append(
                    Change(
                        "topic_config",
                        f"topic {t}: min.insync.replicas {old} -> {target[t]} (a new topic override: "
                        f"it inherits {old} from the {source}, and an MSK configuration revision would itself roll "
                        "every broker)",
                        [
                            _configs_cmd(
                                bootstrap, f"--entity-type topics --entity-name {shlex.quote(t)}", target[t]
                            )
                        ],
                        [t],
                        target[t],
                    )
                )
            plan.followups.append(
                f"once the overrides are in place, put `min.insync.replicas={value}` in a new revision of the MSK "
                f"configuration (it applies as a rolling update: {MSK_REVISION_SOURCE}) so that new topics do not "
                f"inherit {old}"
            )
        elif source == "dynamic broker config":
            ids = sorted(
                {
                    int(r["entity_name"])
                    for r in broker_configs
                    if str(r["entity_name"]).isascii() and str(r["entity_name"]).isdigit()
                }
            )
            plan.changes.append(
                Change(
                    "broker_config",
                    f"per-broker dynamic min.insync.replicas {old} -> {value} on broker(s) "
                    f"{', '.join(map(str, ids))} (inherited by {_listed(topics)})",
                    [_configs_cmd(bootstrap, f"--entity-type brokers --entity-name {b}", value) for b in ids],
                    topics,
                    value,
                    ids,
                )
            )
        else:
            extra = (
                (
                    " (a dynamic default wins over server.properties; update server.properties too, so that the "
                    "files say what the cluster does)"
                )
                if source == "server.properties"
                else ""
            )
            plan.changes.append(
                Change(
                    "default_config",
                    f"cluster-wide default min.insync.replicas {old} -> {value} ({source}; inherited "
                    f"by {_listed(topics)} and every topic without an override){extra}",
                    [_configs_cmd(bootstrap, "--entity-type brokers --entity-default", value)],
                    topics,
                    value,
                )
            )


def _configured(state: dict):
    """The min.insync.replicas as configured (partition_state's configured_min_isr), not the
    effective value a 3.7+ leader caps at the replica count: what the change replaces."""
    value = state.get("configured_min_isr")
    return value if value is not None else state["min_insync_replicas"]


def _reassignment(plan: FixPlan, grow: list[dict], new_rf: dict, registered: dict, bootstrap: str) -> None:
    load = {b: int(f.get("replicas_hosted") or 0) for b, f in registered.items()}
    rack = {b: f.get("rack") for b, f in registered.items()}
    parts = []
    for s in sorted(grow, key=lambda s: (s["topic"], s["partition"])):
        reps = list(s["replicas"] or [])
        want = new_rf[(s["topic"], s["partition"])]
        while len(reps) < want:
            used = {rack[b] for b in reps if b in rack and rack[b] is not None}
            cands = [b for b in registered if b not in reps]
            if not cands:
                break
            pick = min(cands, key=lambda b: (rack[b] is not None and rack[b] in used, load[b], b))
            reps.append(pick)
            load[pick] += 1
        parts.append({"topic": s["topic"], "partition": s["partition"], "replicas": reps})
    plan.reassignment = {"version": 1, "partitions": parts}
    topics = sorted({p["topic"] for p in parts})
    q = shlex.quote(bootstrap)
    plan.changes.append(
        Change(
            "reassign",
            f"raise the replication factor of {len(parts)} partition(s) of {_listed(topics)} (rack-aware, new "
            "replicas on the least-loaded brokers)",
            [
                f"kafka-reassign-partitions.sh --bootstrap-server {q} --reassignment-json-file "
                f"{REASSIGNMENT_FILE} --execute",
                f"kafka-reassign-partitions.sh --bootstrap-server {q} --reassignment-json-file "
                f"{REASSIGNMENT_FILE} --verify   # until every reassignment is complete",
            ],
            topics,
        )
    )


# --- the proof ---------------------------------------------------------------------------------


def _read_rows(file: str, fmt: str) -> list[dict]:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.read_table(file).to_pylist()
    with open(file, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def apply_plan(ref, plan: FixPlan, directory: Path):
    """Write a copy of the snapshot with the plan's changes applied; return its SnapshotRef."""
    from auditor.snapshot.io import open_snapshot, write_snapshot

    tables = {name: _read_rows(file, fmt) for name, (file, fmt) in ref.files.items()}
    configs = tables.setdefault("configs", [])
    cid = ref.manifest.cluster_id
    for c in plan.changes:
        if c.kind == "topic_config":
            for t in c.topics:
                configs[:] = [
                    r
                    for r in configs
                    if not (
                        r["entity_type"] == "topic"
                        and r["entity_name"] == t
                        and r["key"] == "min.insync.replicas"
                    )
                ]
                configs.append(
                    {
                        "cluster_id": cid,
                        "entity_type": "topic",
                        "entity_name": t,
                        "key": "min.insync.replicas",
                        "value": str(c.value),
                        "source": "TOPIC_CONFIG",
                        "is_sensitive": False,
                    }
                )
        elif c.kind == "default_config":
            configs[:] = [
                r
                for r in configs
                if not (r["entity_type"] == "cluster_default" and r["key"] == "min.insync.replicas")
            ]
            configs.append(
                {
                    "cluster_id": cid,
                    "entity_type": "cluster_default",
                    "entity_name": "",
                    "key": "min.insync.replicas",
                    "value": str(c.value),
                    "source": "DYNAMIC_DEFAULT_BROKER_CONFIG",
                    "is_sensitive": False,
                }
            )
        elif c.kind == "broker_config":
            for r in configs:
                if (
                    r["entity_type"] == "broker"
                    and r["key"] == "min.insync.replicas"
                    and r.get("source") == "DYNAMIC_BROKER_CONFIG"
                ):
                    r["value"] = str(c.value)
    if plan.reassignment:
        new = {(p["topic"], p["partition"]): p["replicas"] for p in plan.reassignment["partitions"]}
        for r in tables.get("partitions", []):
            reps = new.get((r["topic"], r["partition"]))
            if reps:
                added = [b for b in reps if b not in (r["replicas"] or [])]
                r["replicas"] = reps
                r["isr"] = list(r["isr"] or []) + added  # the reassignment has completed
        grown = {t for t, _ in new}
        for r in tables.get("topics", []):
            if r["topic"] in grown:
                r["replication_factor"] = max(len(v) for (t, _), v in new.items() if t == r["topic"])
    manifest = copy.deepcopy(ref.manifest)
    return open_snapshot(write_snapshot(directory, manifest, tables, fmt="jsonl"))


def prove(engine, ref, config, plan: FixPlan, selected, simulate) -> None:
    """Re-run ``simulate`` (auditor.commands.preflight.run_preflight, passed in: this module is used
    by preflight and never imports it) on a copy of the snapshot with ``plan`` applied."""
    if not ref.files or any("://" in f for f, _ in ref.files.values()):
        plan.proof = {"error": "the snapshot is not a local directory: cannot copy it to re-simulate"}
        return
    from auditor import safe_io

    with tempfile.TemporaryDirectory(prefix="kafka-audit-plan-") as tmp, safe_io.own_directory(tmp):
        try:
            copy_ref = apply_plan(ref, plan, Path(tmp) / "snapshot")
            after = simulate(engine, [copy_ref], config, brokers=selected, plan=False)
        except Exception as e:  # noqa: BLE001 - the proof failing must not lose the report
            plan.proof = {
                "error": f"re-simulation failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
            }
            return
    (c,) = after.clusters
    plan.proof = {
        "brokers": len(c.brokers),
        "safe": len(c.brokers) - len(c.unsafe),
        "unsafe": c.unsafe,
        "blockers": c.blockers,
        "reached_safe": c.safe_to_roll,
        "outage_only": c.verdict == "outage",  # only a small quorum's planned outage remains
        "outage_controllers": c.outage_controllers,
        "order_after": c.order,
    }


def attach_plans(engine, refs, config, pre, facts: list[dict], states: list[dict], simulate) -> None:
    configs_by_cluster = _dynamic_broker_rows(engine, refs)
    for ref, view in zip(refs, pre.clusters, strict=True):
        if (
            view.safe_to_roll
            or view.unknown
            or not (view.unsafe or view.unsafe_controllers or view.blockers or view.incomplete)
        ):
            continue  # nothing a change could fix (only brokers not evaluated: a missing input)
        cid = ref.manifest.cluster_id
        plan = compute_plan(
            view,
            ref,
            [s for s in states if s["cluster_id"] == cid],
            [f for f in facts if f["cluster_id"] == cid],
            configs_by_cluster.get(cid, []),
        )
        prove(engine, ref, config, plan, pre.selected_brokers, simulate)
        view.plan = plan


def _dynamic_broker_rows(engine, refs) -> dict[str, list[dict]]:
    from auditor.engine.tables import Tables

    tables = Tables(engine, refs)
    rows = engine.rows(tables.compile("preflight_dynamic_min_isr", lambda: _dynamic_min_isr(tables)))
    out: dict[str, list[dict]] = {}
    for r in rows:
        out.setdefault(r["cluster_id"], []).append(r)
    return out


def _dynamic_min_isr(tables):
    """(cluster_id, entity_name): the brokers with a dynamic min.insync.replicas of their own."""
    from checks._api import F

    return tables.configs.where(
        (F.col("entity_type") == "broker")
        & (F.col("key") == "min.insync.replicas")
        & (F.col("source") == "DYNAMIC_BROKER_CONFIG")
    ).select("cluster_id", "entity_name")
