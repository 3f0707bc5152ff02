"""`kafka-audit preflight`: the rolling-restart simulation (MNT rules) and its report."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import jsonschema
import pytest

from auditor.commands.preflight import run_preflight
from auditor.config import AuditConfig
from auditor.engine import open_engine
from auditor.errors import UsageError
from auditor.render.preflight_render import render
from auditor.snapshot.io import Manifest, open_snapshot, write_snapshot
from tests.conftest import ROOT, cluster_dir


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=dict(os.environ),
        timeout=300,
    )


def preflight(*dirs, brokers=None, config=None):
    refs = [open_snapshot(d) for d in dirs]
    with open_engine("duckdb") as engine:
        return run_preflight(engine, refs, config or AuditConfig(), brokers)


def snapshot(
    root,
    name,
    partitions,
    *,
    brokers=(1, 2, 3),
    min_isr="2",
    controller=None,
    mode="zookeeper",
    groups=(),
    errors=(),
    topic="orders",
    clients=(),
    extra=None,
    cluster=None,
    configs=None,
):
    """A small cluster: ``partitions`` are (replicas, isr[, leader]) of one topic; min.insync.replicas
    as the cluster default (``configs``: these config rows instead)."""
    rows = []
    for i, p in enumerate(partitions):
        replicas, isr = p[0], p[1]
        leader = p[2] if len(p) > 2 else (isr[0] if isr else -1)
        rows.append(
            {
                "topic": topic,
                "partition": i,
                "leader": leader,
                "leader_epoch": 1,
                "replicas": replicas,
                "isr": isr,
                "offline_replicas": [],
                "adding_replicas": [],
                "removing_replicas": [],
            }
        )
    topics = {r["topic"] for r in rows}
    rf = {t: max(len(r["replicas"]) for r in rows if r["topic"] == t) for t in topics}
    tables = {
        "brokers": [{"broker_id": b, "host": f"kafka-{b}.test", "rack": f"az-{b % 3}"} for b in brokers],
        "topics": [
            {
                "topic": t,
                "partitions": sum(r["topic"] == t for r in rows),
                "replication_factor": rf[t],
                "is_internal": t.startswith("__"),
            }
            for t in sorted(topics)
        ],
        "partitions": rows,
        "configs": [
            {
                "entity_type": "cluster_default",
                "entity_name": "",
                "key": "min.insync.replicas",
                "value": min_isr,
                "source": "DYNAMIC_DEFAULT_BROKER_CONFIG",
                "is_sensitive": False,
            }
        ]
        if configs is None
        else configs,
        "consumer_groups": [
            {"group_id": g, "state": "Stable", "members": 1, "coordinator_partition": p} for g, p in groups
        ],
        "client_software": [
            {"broker_id": b, "listener": "CLIENT", "client_name": n, "client_version": v, "connections": k}
            for b, n, v, k in clients
        ],
    }
    if controller is not None:
        tables["controller"] = [
            {
                "mode": mode,
                "controller_id": controller,
                "controller_epoch": 3,
                "voters": [],
                "reassignment_pending": False,
            }
        ]
    tables.update(extra or {})
    manifest = Manifest(
        cluster={"id": name, "name": name, "metadata_mode": mode, **(cluster or {})},
        collected_at="2026-11-22T00:00:00Z",
        errors=list(errors),
    )
    return write_snapshot(root / name, manifest, tables, fmt="jsonl")


def rotation(n=12, brokers=(1, 2, 3), rf=3):
    """n healthy partitions, replicas rotating over the brokers, full ISR."""
    out = []
    for p in range(n):
        reps = [brokers[(p + k) % len(brokers)] for k in range(rf)]
        out.append((reps, list(reps)))
    return out


def by_id(cluster):
    return {b.broker_id: b for b in cluster.brokers}


# -- the sample fleet ------------------------------------------------------------------------


def test_payments_msk_incident_1_is_unsafe_for_every_broker():
    pre = preflight(cluster_dir("payments-msk"))
    (c,) = pre.clusters
    assert c.unsafe == [1, 2, 3] and pre.any_unsafe
    b = by_id(c)
    for broker in b.values():
        assert not broker.safe and "MNT001" in broker.reasons and "MNT003" in broker.reasons
        assert broker.blocked_partitions == 98 and broker.offline_partitions == 0  # 50 offsets + 12 + 12 + 24
        assert (
            "__consumer_offsets" in broker.topics and "payments.refunds" not in broker.topics
        )  # min ISR 2 there
        assert broker.consumer_groups == sorted(
            ["ledger-writer", "fraud-scorer", "orders-projector", "refunds-notifier", "settlement-batch"]
        )
    assert c.controller_id == 2 and b[2].is_controller and c.order == []  # no order: no broker is safe
    assert not c.safe_to_roll and not c.blockers  # nothing degraded: the restarts themselves are the problem
    codes = {f.rule for f in pre.result.findings}
    assert {"MNT001", "MNT003", "MNT004", "REP002"} <= codes and "MNT002" not in codes
    mnt001 = next(f for f in pre.result.findings if f.rule == "MNT001" and f.resource_name == "1")
    # all of them are the topics Strimzi's roller would let through (replicas <= min ISR)
    assert mnt001.evidence["replicas_at_or_below_min_isr"] == 98
    assert len(mnt001.evidence["partitions"]) == 20 and "and 78 more" in mnt001.message


def test_inventory_prod_is_safe_for_every_broker():
    pre = preflight(cluster_dir("inventory-prod"))
    (c,) = pre.clusters
    assert c.unsafe == [] and not pre.any_unsafe and not c.unknown
    assert all(b.safe for b in c.brokers) and len(c.brokers) == 6
    # broker 4 restarted minutes ago (a recovery in progress): back in every ISR, leading nothing
    # until the controller's next leader rebalance, so it is safe and first in the order
    leaders = {b.broker_id: b.leaders for b in c.brokers}
    assert leaders[4] == 0 and all(n > 0 for b, n in leaders.items() if b != 4)
    assert not [f for f in pre.result.findings if f.rule.startswith("MNT")]
    assert {f.severity for f in pre.result.findings} <= {"info"}  # the recovery's notes, no warning
    assert c.order == sorted(leaders, key=lambda i: (leaders[i], i))  # KRaft controller 3001 is not a broker


# -- built clusters ------------------------------------------------------------------------------


def test_partition_already_at_min_isr_is_unsafe_exactly_for_its_isr(tmp_path):
    parts = rotation(12, brokers=(1, 2, 3, 4)) + [([1, 2, 3], [2, 3])]
    pre = preflight(snapshot(tmp_path, "one-at-min", parts, brokers=(1, 2, 3, 4)))
    (c,) = pre.clusters
    assert c.unsafe == [2, 3]
    b = by_id(c)
    assert b[2].partitions == ["orders-12"] and b[2].blocked_partitions == 1 and b[2].topics == ["orders"]
    assert (
        b[1].safe and b[4].safe
    )  # broker 1 is a replica of orders-12 but not in its ISR: AT min ISR, not below
    assert set(c.order) == {1, 4}  # safe brokers only
    assert {(f.rule, f.resource_name) for f in pre.result.findings if f.rule.startswith("MNT")} == {
        ("MNT001", "2"),
        ("MNT001", "3"),
    }
    assert any(f.rule == "PAR004" and f.resource_name == "orders-12" for f in pre.result.findings)


# Strimzi's KafkaAvailability: a partition blocks a broker's roll when the broker is in the
# ISR and ISR size - 1 < min.insync.replicas; Strimzi skips topics with replicas <=
# min.insync.replicas, we do not.
STRIMZI_CASES = {
    "replicas-at-or-below-min-isr-still-blocks": ([([1, 2], [1, 2])], "2", {1: "MNT001", 2: "MNT001"}),
    "min-isr-equals-rf-3": ([([1, 2, 3], [1, 2, 3])], "3", {1: "MNT001", 2: "MNT001", 3: "MNT001"}),
    "isr-already-at-min-isr": ([([1, 2, 3], [3, 1])], "2", {1: "MNT001", 3: "MNT001"}),
    "broker-not-in-isr-is-safe-for-it": ([([1, 2, 3], [1, 2])], "1", {}),
    "single-isr-goes-offline": ([([1, 2, 3], [2])], "1", {2: "MNT002"}),
    # already below min ISR: every replica holder is blocked (Strimzi: "under min ISR blocks every broker
    # hosting a replica"); the last in-sync one takes it offline
    "single-isr-under-min-isr-goes-offline": (
        [([1, 2, 3], [2])],
        "2",
        {1: "MNT001", 2: "MNT002", 3: "MNT001"},
    ),
    "leaderless-blocks-every-replica-holder": (
        [([1, 2, 3], [1, 2, 3], -1)],
        "1",
        {1: "MNT001", 2: "MNT001", 3: "MNT001"},
    ),
    "empty-isr-blocks-every-replica-holder": (
        [([1, 2, 3], [])],
        "1",
        {1: "MNT001", 2: "MNT001", 3: "MNT001"},
    ),
    "headroom-above-min-isr-is-safe": ([([1, 2, 3], [1, 2, 3])], "2", {}),
    # Strimzi's KafkaAvailabilityTest.testNoLeader: two leaderless partitions, min ISR 1, one with ISR
    # [2, 3], one with ISR [1]. Strimzi rolls 2 and 3 (only 1 would take B below min ISR); we block
    # every replica holder of a leaderless partition (deliberate difference, README "preflight").
    "strimzi-test-no-leader-deliberate-difference": (
        [([1, 2, 3], [2, 3], -1), ([1, 2, 3], [1], -1)],
        "1",
        {1: "MNT001", 2: "MNT001", 3: "MNT001"},
    ),
}


@pytest.mark.parametrize("name", STRIMZI_CASES)
def test_strimzi_roll_safety_conditions(tmp_path, name):
    parts, min_isr, expected = STRIMZI_CASES[name]
    pre = preflight(snapshot(tmp_path, name, parts, min_isr=min_isr))
    (c,) = pre.clusters
    assert c.unsafe == sorted(expected)
    fired = {int(f.resource_name): f.rule for f in pre.result.findings if f.rule in ("MNT001", "MNT002")}
    assert fired == expected
    if name.startswith("replicas-at-or-below"):
        f = next(f for f in pre.result.findings if f.rule == "MNT001")
        assert f.evidence["replicas_at_or_below_min_isr"] == 1 and "Strimzi" in f.message


def test_issue_18_out_of_sync_replica_of_a_partition_below_min_isr_blocks_its_broker(tmp_path):
    # replicas [0, 1, 3], ISR [1], min.insync.replicas 2: Strimzi refuses to roll broker 3 (and 0)
    parts = [([0, 1, 3], [1])] + rotation(3, brokers=(0, 1, 3))
    pre = preflight(snapshot(tmp_path, "degraded", parts, brokers=(0, 1, 3)))
    (c,) = pre.clusters
    assert c.unsafe == [0, 1, 3] and pre.any_unsafe and not c.safe_to_roll
    fired = {(f.rule, f.resource_name) for f in pre.result.findings if f.rule in ("MNT001", "MNT002")}
    assert fired == {("MNT001", "0"), ("MNT002", "1"), ("MNT001", "3")}
    mnt001 = next(f for f in pre.result.findings if f.rule == "MNT001" and f.resource_name == "3")
    assert "already fail" in mnt001.message and "block until" not in mnt001.message  # no "makes writes block"
    assert mnt001.evidence["already_failing"] == 1 and mnt001.evidence["partitions"] == ["orders-0"]
    # the cluster is already degraded: that partition is listed at the top, and no order is given
    assert c.degraded["under_min_isr"] == ["orders-0"] and c.order == []
    assert c.blockers and "orders-0" in c.blockers[0] and "below min.insync.replicas" in c.blockers[0]
    text = render("text", pre)
    lines = text.splitlines()
    assert "unsafe to roll now, whatever the order" in lines[1] and "orders-0" in lines[2]
    doc = json.loads(render("json", pre))
    assert (
        doc["preflight"]["clusters"][0]["safe_to_roll"] is False and doc["preflight"]["safe_to_roll"] is False
    )


def test_mixed_message_separates_new_blocks_from_writes_that_already_fail(tmp_path):
    # orders-0 at min ISR (broker 1's restart newly blocks it), orders-1 already below it
    parts = [([1, 2, 3], [1, 2]), ([1, 2, 3], [2])]
    pre = preflight(snapshot(tmp_path, "mixed", parts))
    f = next(f for f in pre.result.findings if f.rule == "MNT001" and f.resource_name == "1")
    assert (
        "leaves 1 partition(s) with an ISR below their effective min.insync.replicas: acks=all producers fail"
        in f.message
    )
    assert (
        "holds a replica of 1 partition(s) already below" in f.message and f.evidence["already_failing"] == 1
    )


def test_leaderless_and_offline_replicas_block_the_roll_and_are_listed_first(tmp_path):
    parts = rotation(6) + [([1, 2, 3], [2, 3], -1)]
    snap = snapshot(tmp_path, "leaderless", parts, min_isr="1")
    rows = [json.loads(line) for line in (snap / "partitions.jsonl").read_text().splitlines()]
    rows[0]["offline_replicas"] = [1]
    (snap / "partitions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pre = preflight(snap)
    (c,) = pre.clusters
    assert c.degraded["leaderless"] == ["orders-6"] and c.degraded["offline_replicas"] == ["orders-0"]
    assert c.degraded_counts == {"leaderless": 1, "under_min_isr": 0, "offline_replicas": 1}
    assert not c.safe_to_roll and c.order == [] and c.unsafe == [1, 2, 3]
    assert c.to_json()["safe_to_roll"] is False


def test_msk_maintenance_or_operation_in_progress_makes_preflight_unsafe(tmp_path):
    snap = snapshot(tmp_path, "msk-maint", rotation(6))
    manifest = json.loads((snap / "manifest.json").read_text())
    manifest["cluster"]["msk"] = {
        "state": "MAINTENANCE",
        "operations_in_progress": [
            {
                "arn": "arn:op",
                "type": "UPDATE_SECURITY",
                "state": "UPDATE_IN_PROGRESS",
                "start_time": "2026-11-22T05:00:00",
            }
        ],
    }
    (snap / "manifest.json").write_text(json.dumps(manifest))
    pre = preflight(snap)
    (c,) = pre.clusters
    assert c.unsafe == [] and pre.any_unsafe and not c.safe_to_roll and c.order == []
    assert "MAINTENANCE" in c.blockers[0] and "UPDATE_SECURITY" in c.blockers[1]
    lines = render("text", pre).splitlines()
    assert "whatever the order" in lines[1] and "MAINTENANCE" in lines[2]
    assert "every broker can be restarted" not in render("text", pre)
    assert any("AWS to finish" in w.what for w in c.plan.waits) and not c.plan.proof["reached_safe"]
    r = cli("preflight", snap)
    assert r.returncode == 1 and "MAINTENANCE" in r.stdout


def test_incomplete_cluster_is_never_safe_in_the_per_cluster_json(tmp_path):
    # a topic whose describe failed: the simulation would use min.insync.replicas 1 for it
    snap = snapshot(
        tmp_path,
        "describe-failed",
        rotation(6),
        errors=[{"source": "admin", "target": "describe_configs topic orders", "message": "TimeoutError"}],
    )
    pre = preflight(snap)
    (c,) = pre.clusters
    assert c.unsafe == [] and c.incomplete and not c.safe_to_roll and c.order == []
    doc = json.loads(render("json", pre))
    assert (
        doc["preflight"]["clusters"][0]["safe_to_roll"] is False and doc["preflight"]["safe_to_roll"] is False
    )
    assert doc["preflight"]["clusters"][0]["incomplete"] is True
    r = cli("preflight", snap)
    assert r.returncode == 3 and "incomplete" in r.stdout


def _config(entity_type, name, key, value, source):
    return {
        "entity_type": entity_type,
        "entity_name": name,
        "key": key,
        "value": value,
        "source": source,
        "is_sensitive": False,
    }


# What ZooKeeper alone gives: the dynamic overrides (here one per broker, not min.insync.replicas),
# never the brokers' server.properties.
ZK_ONLY = [_config("broker", str(b), "log.cleaner.threads", "2", "DYNAMIC_BROKER_CONFIG") for b in (1, 2, 3)]
# ISR [1, 2] of replicas [1, 2, 3]: safe with min.insync.replicas 1, unsafe for 1 and 2 with 2.
SHORT_ISR = [([1, 2, 3], [1, 2])] + rotation(5)


def test_issue_38_without_the_effective_min_isr_no_broker_is_called_safe(tmp_path):
    snap = snapshot(tmp_path, "zk-only", SHORT_ISR, configs=ZK_ONLY)
    pre = preflight(snap)
    (c,) = pre.clusters
    # Kafka's default 1 stood in: nothing is unsafe at 1, but nothing may be called safe either
    assert c.unsafe == [] and c.not_evaluated == [1, 2, 3] and not c.safe_to_roll and c.order == []
    assert {b.verdict for b in c.brokers} == {"not evaluated"} and pre.incomplete and c.plan is None
    assert len(c.missing) == 1 and "min.insync.replicas of topics such as orders" in c.missing[0]
    assert "--broker-config" in c.missing[0] and "--bootstrap-servers" in c.missing[0]
    doc = json.loads(render("json", pre))["preflight"]["clusters"][0]
    assert doc["not_evaluated_brokers"] == [1, 2, 3] and doc["safe_to_roll"] is False
    assert [b["verdict"] for b in doc["brokers"]] == ["not evaluated"] * 3
    r = cli("preflight", snap)
    assert r.returncode == 3, r.stderr
    assert "not evaluated" in r.stdout and "preflight unknown" in r.stdout and " safe " not in r.stdout
    assert "every broker can be restarted" not in r.stdout
    page = render("html", pre)
    assert "not evaluated" in page and "Unknown:" in page


def test_issue_38_the_same_cluster_with_its_broker_configs_is_judged(tmp_path):
    # server.properties with min.insync.replicas=2: the short ISR makes brokers 1 and 2 unsafe
    static = [_config("broker", str(b), "min.insync.replicas", "2", None) for b in (1, 2, 3)]
    (c,) = preflight(snapshot(tmp_path, "with-files", SHORT_ISR, configs=ZK_ONLY + static)).clusters
    assert c.unsafe == [1, 2] and c.not_evaluated == [] and by_id(c)[3].verdict == "safe"
    # server.properties without the key: Kafka's default 1 IS the brokers' value, so it is judged
    other = [_config("broker", str(b), "num.io.threads", "8", None) for b in (1, 2, 3)]
    (c,) = preflight(snapshot(tmp_path, "files-no-key", SHORT_ISR, configs=ZK_ONLY + other)).clusters
    assert c.unsafe == [] and c.not_evaluated == [] and c.safe_to_roll
    # DescribeConfigs (Admin API) lists the defaults it applies: judged too
    admin = [_config("broker", str(b), "min.insync.replicas", "1", "DEFAULT_CONFIG") for b in (1, 2, 3)]
    (c,) = preflight(snapshot(tmp_path, "admin", SHORT_ISR, configs=admin)).clusters
    assert c.not_evaluated == [] and c.safe_to_roll


def test_issue_38_a_topic_override_or_dynamic_default_is_enough(tmp_path):
    override = [_config("topic", "orders", "min.insync.replicas", "2", "DYNAMIC_TOPIC_CONFIG")]
    (c,) = preflight(snapshot(tmp_path, "override", SHORT_ISR, configs=ZK_ONLY + override)).clusters
    assert c.unsafe == [1, 2] and c.not_evaluated == []
    # only the brokers hosting a topic whose min ISR is unknown are not evaluated: 4 hosts none
    rows = [([1, 2, 3], [1, 2, 3])] * 3
    (c,) = preflight(snapshot(tmp_path, "spare", rows, brokers=(1, 2, 3, 4), configs=ZK_ONLY)).clusters
    assert c.not_evaluated == [1, 2, 3] and by_id(c)[4].verdict == "safe"


def test_issue_38_a_files_only_snapshot_says_what_it_lacks(tmp_path):
    snap = tmp_path / "files-only"
    p = cli(
        "collect",
        "--broker-config",
        ROOT / "sample_configs" / "change-review" / "brokers",
        "--cluster-name",
        "files-only",
        "-o",
        snap,
    )
    assert p.returncode == 0, p.stderr
    pre = preflight(snap)
    (c,) = pre.clusters
    assert c.unknown and [b.broker_id for b in c.brokers] == [1, 2]
    # a broker is there: only the partition state is missing, and where it would come from
    assert len(c.missing) == 1 and c.missing[0].startswith("no partition state")
    assert "--zookeeper" in c.missing[0] and "this snapshot's sources: broker-config" in c.missing[0]
    r = cli("preflight", snap)
    assert r.returncode == 3 and "no partition state" in r.stdout and "no registered brokers" not in r.stdout


def test_broker_option_says_only_those_brokers_were_simulated(tmp_path):
    snap = snapshot(tmp_path, "only-two", rotation(6))
    text = render("text", preflight(snap, brokers=[2]))
    assert "every broker can be restarted" not in text
    assert "broker(s) 2 can be restarted one at a time (only these were simulated)" in text


def order_rules_hold(c) -> list[str]:
    """The stated rules of the suggested order; returns the violations."""
    bad = []
    safe = {b.broker_id for b in c.brokers if b.safe}
    views = {b.broker_id: b for b in c.brokers}
    if not set(c.order) <= safe:
        bad.append(f"unsafe broker in the order {c.order}")
    if c.top_reasons and c.order:
        bad.append("an order for a blocked cluster")
    if c.order and set(c.order) != safe and not c.top_reasons:
        bad.append("a safe broker missing from the order")
    ctl = [i for i in c.order if views[i].is_controller]
    if ctl and c.order[-1] != ctl[0]:
        bad.append(f"controller {ctl[0]} not last in {c.order}")
    rest = [views[i] for i in c.order if not views[i].is_controller]
    if [(v.leaders, v.broker_id) for v in rest] != sorted((v.leaders, v.broker_id) for v in rest):
        bad.append("not fewest leaders first")
    if c.order and (views[c.order[0]].offline_partitions or "MNT003" in views[c.order[0]].reasons):
        bad.append("first broker hits __consumer_offsets")
    return bad


SAMPLES = [
    "ads-zk-legacy",
    "checkout-prod",
    "inventory-prod",
    "logistics-jbod",
    "notifications-msk",
    "payments-msk",
    "sandbox-dev",
    "search-ingest",
]


@pytest.mark.parametrize("name", SAMPLES)
def test_order_rules_hold_on_every_sample_cluster(name):
    pre = preflight(cluster_dir(name))
    for c in pre.clusters:
        assert order_rules_hold(c) == []
        assert c.safe_to_roll == (
            not c.unsafe
            and not c.unsafe_controllers
            and not c.outage_controllers
            and not c.blockers
            and not c.incomplete
            and not c.unknown
        )
        if not c.safe_to_roll and not c.unknown and c.verdict != "outage":
            assert c.plan is not None and c.plan.proof
        if c.verdict == "outage":  # a small quorum: no change or wait fixes it, so no plan, and said why
            assert c.plan is None and "add controllers" in c.outage_note


def test_order_rule_checker_catches_violations(tmp_path):
    parts = [(r, i, r[0] if r[0] != 2 else r[1]) for r, i in rotation(9)]
    (c,) = preflight(snapshot(tmp_path, "healthy", parts, controller=2)).clusters
    assert order_rules_hold(c) == []
    c.order = [2, 1, 3]
    assert any("controller 2 not last" in v for v in order_rules_hold(c))
    c.order = [3, 1, 2]
    assert any("fewest leaders" in v for v in order_rules_hold(c))


def test_offsets_partition_lists_its_groups_and_the_controller_goes_last(tmp_path):
    parts = rotation(6) + [([3, 1, 2], [3], 3)]
    snap = snapshot(
        tmp_path,
        "offsets",
        parts,
        topic="__consumer_offsets",
        controller=1,
        min_isr="1",
        groups=[("ledger-writer", 6), ("fraud-scorer", 6), ("elsewhere", 0)],
    )
    pre = preflight(snap)
    (c,) = pre.clusters
    b = by_id(c)
    assert (
        c.unsafe == [3]
        and b[3].offline_partitions == 1
        and b[3].consumer_groups == ["fraud-scorer", "ledger-writer"]
    )
    assert b[3].leaders == 3 and b[1].leaders == 2 and b[1].is_controller
    assert c.order == [2, 1]  # safe brokers only (3 takes __consumer_offsets-6 offline); the controller last
    mnt003 = next(f for f in pre.result.findings if f.rule == "MNT003")
    assert mnt003.resource_name == "3" and mnt003.evidence["offline_count"] == 1


def test_active_controller_is_ordered_last_in_a_healthy_cluster(tmp_path):
    # broker 2 leads the fewest partitions, so it would go first if it were not the controller
    parts = [(r, i, r[0] if r[0] != 2 else r[1]) for r, i in rotation(9)]
    pre = preflight(snapshot(tmp_path, "healthy", parts, controller=2))
    (c,) = pre.clusters
    assert c.unsafe == [] and by_id(c)[2].leaders == 0
    assert c.order[-1] == 2 and c.order == [1, 3, 2]


def test_broker_option_limits_the_simulation(tmp_path):
    parts = rotation(12, brokers=(1, 2, 3, 4)) + [([1, 2, 3], [2, 3])]
    snap = snapshot(tmp_path, "limited", parts, brokers=(1, 2, 3, 4))
    pre = preflight(snap, brokers=[1, 3])
    (c,) = pre.clusters
    assert [b.broker_id for b in c.brokers] == [1, 3] and c.unsafe == [3] and c.order == [1]  # safe ones only
    assert {f.resource_name for f in pre.result.findings if f.rule == "MNT001"} == {"3"}
    with pytest.raises(UsageError, match="--broker 9"):
        preflight(snap, brokers=[9])


def test_exemptions_and_severity_from_the_config_apply(tmp_path):
    from auditor.config import Exemption

    snap = snapshot(tmp_path, "exempt", [([1, 2, 3], [2, 3])])
    cfg = AuditConfig(
        select=("CFG",), exemptions=[Exemption(reason="known", rules=("MNT001",), resource="^2$")]
    )
    pre = preflight(snap, config=cfg)  # the config's select does not narrow preflight's rules
    (c,) = pre.clusters
    assert c.unsafe == [3] and pre.result.exempted == 1


# -- the command ------------------------------------------------------------------------------------

SCHEMA = json.loads((ROOT / "docs" / "report.schema.json").read_text())


@pytest.mark.slow
def test_cli_json_contract_and_exit_codes(tmp_path):
    p = cli("preflight", cluster_dir("payments-msk"), "--format", "json")
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    jsonschema.validate({k: v for k, v in doc.items() if k != "preflight"}, SCHEMA)  # check's shape
    (c,) = doc["preflight"]["clusters"]
    assert doc["preflight"]["safe_to_roll"] is False and c["unsafe_brokers"] == [1, 2, 3] and c["order"] == []
    assert c["brokers"][0]["blocked_partitions"] == 98 and c["brokers"][0]["reasons"] == ["MNT001", "MNT003"]
    assert {f["rule"] for f in doc["findings"]} >= {"MNT001", "MNT003", "MNT004", "REP002"}

    p = cli("preflight", cluster_dir("inventory-prod"))
    assert p.returncode == 0, p.stderr
    assert "every broker can be restarted one at a time" in p.stdout and "preflight safe" in p.stdout

    out = tmp_path / "pf.html"
    p = cli(
        "preflight", cluster_dir("payments-msk"), "--broker", "1", "--broker", "2", "-f", "html", "-o", out
    )
    assert p.returncode == 1 and p.stdout == ""
    page = out.read_text()
    assert 'data-broker="1"' in page and 'data-broker="3"' not in page and "Not safe to roll" in page

    assert cli("preflight", cluster_dir("payments-msk"), "--broker", "7").returncode == 2
    assert cli("preflight", cluster_dir("payments-msk"), "--format", "sarif").returncode == 2
    assert cli("preflight", tmp_path / "missing").returncode == 2


def test_cli_incomplete_snapshot_exits_3_even_when_safe(tmp_path):
    snap = snapshot(
        tmp_path,
        "partial",
        rotation(6),
        errors=[{"source": "zookeeper", "target": "zk:2181", "message": "connection lost"}],
    )
    p = cli("preflight", snap)
    assert p.returncode == 3, p.stderr
    assert (
        "INCOMPLETE partial: source zookeeper zk:2181 failed" in p.stdout and "preflight unknown" in p.stdout
    )
    doc = json.loads(cli("preflight", snap, "-f", "json").stdout)
    assert (
        doc["preflight"]["safe_to_roll"] is False and doc["preflight"]["clusters"][0]["unsafe_brokers"] == []
    )


def test_cli_nothing_to_simulate_is_never_safe(tmp_path):
    manifest = Manifest(
        cluster={"id": "configs-only", "name": "configs-only"}, collected_at="2026-11-22T00:00:00Z"
    )
    snap = write_snapshot(
        tmp_path / "c",
        manifest,
        {
            "configs": [
                {"entity_type": "broker", "entity_name": "1", "key": "min.insync.replicas", "value": "2"}
            ]
        },
        fmt="jsonl",
    )
    p = cli("preflight", snap)
    assert p.returncode == 3, p.stderr
    assert "cannot simulate restarts" in p.stdout and "preflight unknown" in p.stdout
    # issue 38: what is missing, said precisely (no broker is registered, no partition state)
    assert "- no registered brokers" in p.stdout and "- no partition state" in p.stdout
    page = render("html", preflight(snap))
    assert "Restarts cannot be simulated" in page and "Unknown:" in page and "no partition state" in page


def test_html_escapes_snapshot_values(tmp_path):
    hostile = '<script>alert("x")</script>'
    snap = snapshot(tmp_path, "hostile", [([1, 2, 3], [1])], topic=hostile)
    page = render("html", preflight(snap))
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "http://" not in page.replace("http://www.w3.org", "") and "<link" not in page


# -- against a real ZooKeeper holding the incident-3 layout ---------------------------------------------


@pytest.mark.slow
def test_preflight_on_a_snapshot_collected_from_zookeeper(tmp_path):
    from tests.zk_server import available

    if not available():
        pytest.skip("needs java and ZooKeeper jars")
    from tests.test_collect_zookeeper import load
    from tests.zk_server import ZkServer, client, incident3_layout

    layout = incident3_layout()
    sole = layout["/brokers/topics/__consumer_offsets/partitions/17/state"]["isr"][0]
    with ZkServer() as zk:
        writer = client(zk.hosts)
        try:
            chroot = load(writer, layout, "ads")
        finally:
            writer.stop()
            writer.close()
        snap = tmp_path / "ads"
        p = cli(
            "collect",
            "--zookeeper",
            zk.hosts + chroot,
            "--cluster-name",
            "ads-zk-legacy",
            "--kafka-version",
            "2.0.1",
            "--timeout",
            "5",
            "-o",
            snap,
        )
        assert p.returncode == 0, p.stderr
    p = cli("preflight", snap, "--format", "json")
    # issue 38: ZooKeeper alone holds no broker configuration, so the effective min.insync.replicas
    # of topics without an override is not known: exit 3 (unknown), never a "safe" broker
    assert p.returncode == 3, p.stderr
    doc = json.loads(p.stdout)
    (c,) = doc["preflight"]["clusters"]
    # Unsafe at Kafka's default 1 is unsafe at any higher value: the partition the split-brain left
    # without a leader (leader -1, ISR [sole]) blocks every registered broker holding a replica of it
    # (it is already offline: MNT001 "already fail", not MNT002). The others are not evaluated.
    holders = sorted({*layout["/brokers/topics/__consumer_offsets"]["partitions"]["17"], sole} & {1, 2, 3, 4})
    assert c["unsafe_brokers"] == holders and sole in holders and c["controller_id"] == 2
    assert c["not_evaluated_brokers"] == sorted({1, 2, 3, 4} - set(holders))
    assert {b["verdict"] for b in c["brokers"]} <= {"unsafe", "not evaluated"}
    assert any("--broker-config" in m for m in c["missing"])
    assert sorted(b["broker_id"] for b in c["brokers"]) == [1, 2, 3, 4]  # broker 5 is not registered
    mnt = {(f["rule"], f["resource"]["name"]) for f in doc["findings"] if f["rule"].startswith("MNT")}
    assert {("MNT001", str(b)) for b in holders} <= mnt and not any(r == "MNT002" for r, _ in mnt)
    # the cluster is already degraded: the leaderless partition is listed first and no order is given
    assert c["degraded"]["leaderless"] == ["__consumer_offsets-17"] and c["order"] == []
    assert c["safe_to_roll"] is False and "__consumer_offsets-17" in c["blockers"][0]


# -- Kafka 4.0 readiness (--target-version 4.0: CLI002, CLI003 with DSK003, CTL009) -------------------

KIP511_SCRAPE = """\
# TYPE kafka_server_socket_server_metrics_connections untyped
kafka_server_socket_server_metrics_connections{clientSoftwareName="sarama",clientSoftwareVersion="1.27.0",listener="CLIENT",networkProcessor="0",} 70.0
kafka_server_socket_server_metrics_connections{clientSoftwareName="sarama",clientSoftwareVersion="1.27.0",listener="CLIENT",networkProcessor="1",} 50.0
kafka_server_socket_server_metrics_connections{clientSoftwareName="apache-kafka-java",clientSoftwareVersion="2.0.1",listener="CLIENT",networkProcessor="1",} 12.0
kafka_server_socket_server_metrics_connections{clientSoftwareName="unknown",clientSoftwareVersion="unknown",listener="CLIENT",networkProcessor="0",} 9.0
kafka_server_socket_server_metrics_connections{clientSoftwareName="apache-kafka-java",clientSoftwareVersion="3.7.1",listener="CLIENT",networkProcessor="0",} 64.0
kafka_server_socket_server_metrics_connections{clientSoftwareName="IBM/sarama",clientSoftwareVersion="1.45.0",listener="CLIENT",networkProcessor="0",} 3.0
"""


def test_kafka4_readiness_on_a_real_format_kip511_scrape(tmp_path):
    scrape = tmp_path / "broker1.prom"
    scrape.write_text(KIP511_SCRAPE)
    snap = tmp_path / "snap"
    r = cli("collect", "--metrics", f"broker_id=1:{scrape}", "--cluster-name", "upgrade-me", "-o", snap)
    assert r.returncode == 0, r.stderr
    refs = [open_snapshot(snap)]
    with open_engine("duckdb") as engine:
        pre = run_preflight(engine, refs, AuditConfig(), target_version="4.0")
    fired = {(f.rule, f.resource_name) for f in pre.result.findings if f.rule.startswith("CLI")}
    assert fired == {
        ("CLI002", "sarama 1.27.0"),
        ("CLI002", "apache-kafka-java 2.0.1"),
        ("CLI003", "unknown"),
    }
    sarama = next(f for f in pre.result.findings if f.resource_name == "sarama 1.27.0")
    assert sarama.evidence["connections"] == 120 and sarama.evidence["first_safe_version"] == "1.30.1"
    assert sarama.evidence["source"] == "https://cwiki.apache.org/confluence/display/KAFKA/KIP-896"
    unknown = next(f for f in pre.result.findings if f.rule == "CLI003")
    assert unknown.evidence["connections"] == 9 and "cannot judge" in unknown.message
    assert {f.rule for f in pre.upgrade_blockers} == {"CLI002"}
    text = render("text", pre)
    assert "upgrade to Kafka 4.0: NOT ready: 2 blocking finding(s)" in text
    # without --target-version the upgrade rules do not run
    with open_engine("duckdb") as engine:
        plain = run_preflight(engine, refs, AuditConfig())
    assert (
        not [f for f in plain.result.findings if f.rule in ("CLI002", "CLI003")]
        and not plain.upgrade_blockers
    )


def test_target_version_fails_a_safe_roll_on_incompatible_clients_and_rejects_unknown_targets(tmp_path):
    snap = snapshot(
        tmp_path,
        "roll-ok",
        rotation(6),
        mode="kraft",  # in ZooKeeper mode UPG001 would block the upgrade too
        clients=[(1, "kafkajs", "1.14.0", 4), (2, "apache-kafka-java", "3.7.1", 9)],
    )
    assert cli("preflight", snap).returncode == 0
    r = cli("preflight", snap, "--target-version", "4.0", "-f", "json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["preflight"]["target_version"] == "4.0" and doc["preflight"]["upgrade_ready"] is False
    assert [f["resource"]["name"] for f in doc["findings"] if f["rule"] == "CLI002"] == ["kafkajs 1.14.0"]
    page = tmp_path / "up.html"
    assert cli("preflight", snap, "--target-version", "4.0", "-f", "html", "-o", page).returncode == 1
    assert "Upgrade to Kafka 4.0:\n<strong>not ready</strong>: 1 blocking finding(s)" in page.read_text()
    r = cli("preflight", snap, "--target-version", "5.1")
    assert r.returncode == 2 and "--target-version 5.1: only 4.0 is known" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_kafka4_client_table_rows_all_cite_a_source():
    from checks.clients import kafka4_clients

    table = kafka4_clients()
    assert table["target"] == "4.0" and len(table["clients"]) == 5
    for row in table["clients"]:
        assert row["names"] and row["first_safe"] and row["sources"]
        assert all(s.startswith("https://") for s in row["sources"])
        assert any("KIP-896" in s for s in row["sources"])


# -- issue 34: roll and upgrade safety by today's Kafka ----------------------------------------


def _quorum(lagging_age_ms=100):
    """Voters 3001 (leader), 3002, 3003; 3003 last caught up ``lagging_age_ms`` before collection."""
    return [
        {
            "node_id": 3001,
            "role": "voter",
            "is_leader": True,
            "log_end_offset": 900,
            "lag": 0,
            "high_watermark": 900,
        },
        {"node_id": 3002, "role": "voter", "is_leader": False, "lag": 0, "caught_up_age_ms": 100},
        {
            "node_id": 3003,
            "role": "voter",
            "is_leader": False,
            "lag": 800,
            "caught_up_age_ms": lagging_age_ms,
        },
        {"node_id": 1, "role": "observer", "is_leader": False, "lag": 0, "caught_up_age_ms": 100},
    ]


def test_kraft_quorum_with_a_lagging_voter_is_not_safe_to_roll(tmp_path):
    # Brokers all safe; controller 3003 lags 5 minutes: restarting 3001 or 3002 leaves one caught-up voter.
    snap = snapshot(
        tmp_path, "kraft-lag", rotation(6), mode="kraft", controller=2, extra={"quorum": _quorum(300_000)}
    )
    pre = preflight(snap)
    (c,) = pre.clusters
    assert c.unsafe == [] and c.unsafe_controllers == [3001, 3002] and not c.safe_to_roll and pre.any_unsafe
    assert c.controller_order == [3003]  # restarting the lagging voter itself leaves the leader and 3002
    assert not any(b.is_controller for b in c.brokers)  # DescribeCluster's pick on KRaft is no controller
    mnt005 = {f.resource_name for f in pre.result.findings if f.rule == "MNT005"}
    assert mnt005 == {"3001", "3002"}
    text = render("text", pre)
    assert (
        "quorum leader 3001" in text
        and "UNSAFE: restarting controller 3002" in text
        and "(controller)" not in text
    )
    doc = json.loads(render("json", pre))["preflight"]["clusters"][0]
    assert doc["unsafe_controllers"] == [3001, 3002] and doc["safe_to_roll"] is False
    assert any(w.what.startswith("the KRaft quorum") for w in c.plan.waits)


def test_kraft_quorum_caught_up_orders_the_quorum_leader_last(tmp_path):
    snap = snapshot(
        tmp_path, "kraft-ok", rotation(6), mode="kraft", controller=2, extra={"quorum": _quorum()}
    )
    (c,) = preflight(snap).clusters
    assert c.safe_to_roll and c.unsafe_controllers == [] and c.controller_order == [3002, 3003, 3001]
    assert c.order == [1, 2, 3]  # no "active controller last" for brokers on KRaft


def test_msk_kraft_says_aws_runs_the_controllers(tmp_path):
    snap = snapshot(
        tmp_path, "msk-kraft", rotation(6), mode="kraft", controller=1, cluster={"platform": "msk"}
    )
    pre = preflight(snap)
    (c,) = pre.clusters
    text = render("text", pre)
    assert c.controllers_managed and "managed by AWS" in text and "(controller)" not in text
    assert json.loads(render("json", pre))["preflight"]["clusters"][0]["controllers_managed_by_aws"] is True
    assert "managed by AWS" in render("html", pre)


def test_saturated_cluster_is_not_safe_to_roll_and_says_why(tmp_path):
    metrics = [
        {"broker_id": b, "name": n, "labels": "{}", "value": v}
        for b in (1, 2, 3)
        for n, v in (("network_processor_avg_idle_percent", 0.02), ("request_handler_avg_idle_percent", 0.5))
    ]
    snap = snapshot(tmp_path, "saturated", rotation(6), extra={"metrics": metrics})
    pre = preflight(snap)
    (c,) = pre.clusters
    assert c.unsafe == [] and not c.safe_to_roll and c.order == []
    (blocker,) = [b for b in c.blockers if "load headroom" in b]
    assert "broker(s) 1, 2, 3: network threads 2% idle (THR001)" in blocker and "THR002" not in blocker
    assert any("the load to drop" in w.what for w in c.plan.waits)
    r = cli("preflight", snap)
    assert r.returncode == 1 and "without load headroom" in r.stdout


def test_headroom_keeps_a_healthy_cluster_safe(tmp_path):
    metrics = [
        {"broker_id": b, "name": "network_processor_avg_idle_percent", "labels": "{}", "value": 0.7}
        for b in (1, 2, 3)
    ]
    (c,) = preflight(snapshot(tmp_path, "headroom", rotation(6), extra={"metrics": metrics})).clusters
    assert c.safe_to_roll and c.blockers == []


def test_procedure_says_the_order_holds_one_restart_at_a_time_in_every_format(tmp_path):
    pre = preflight(snapshot(tmp_path, "procedure", rotation(6)))
    (c,) = pre.clusters
    assert c.safe_to_roll and c.procedure
    assert any("--under-replicated-partitions" in step for step in c.procedure)
    assert any("kafka-audit preflight" in step for step in c.procedure)
    assert "back in the ISR of every partition" in render("text", pre)
    assert json.loads(render("json", pre))["preflight"]["clusters"][0]["procedure"] == c.procedure
    assert "URP back to 0" in render("html", pre)


def _versioned(tmp_path, name, version):
    """RF 2 topic with min.insync.replicas 3 (above the replica count) on brokers of ``version``."""
    return snapshot(
        tmp_path,
        name,
        [([1, 2], [1, 2], 1), ([2, 3], [2, 3], 2)],
        min_isr="3",
        extra={
            "brokers": [{"broker_id": b, "host": f"kafka-{b}.test", "version": version} for b in (1, 2, 3)]
        },
        cluster={"kafka_version": version},
    )


def test_min_isr_above_replica_count_on_either_side_of_kafka_3_7(tmp_path):
    # 3.6: min ISR 3 on 2 replicas rejects acks=all now (PAR003, a blocker); 3.7 caps it at 2
    # (KAFKA-15583): writes work, but each restart blocks producers and stops consumers.
    old = preflight(_versioned(tmp_path, "kafka-3-6", "3.6.2"))
    (c,) = old.clusters
    assert c.degraded_counts["under_min_isr"] == 2 and not c.safe_to_roll
    par003 = [f for f in old.result.findings if f.rule == "PAR003"]
    assert len(par003) == 2 and all("acks=0/1 writes still succeed" in f.message for f in par003)
    new = preflight(_versioned(tmp_path, "kafka-3-7", "3.7.1"))
    (c,) = new.clusters
    assert c.degraded_counts["under_min_isr"] == 0 and not any(
        f.rule == "PAR003" for f in new.result.findings
    )
    assert c.unsafe == [1, 2, 3]
    f = next(f for f in new.result.findings if f.rule == "MNT001" and f.resource_name == "2")
    assert "consumers receive no new records" in f.message and f.evidence["consumers_stall"] == 2
    rep002 = [f for f in new.result.findings if f.rule == "REP002" and f.resource_type == "topic"]
    assert rep002 and "Kafka 3.7+ applies it as 2" in rep002[0].message


def test_unclean_election_on_says_acknowledged_data_is_lost(tmp_path):
    unclean = {
        "entity_type": "cluster_default",
        "entity_name": "",
        "key": "unclean.leader.election.enable",
        "value": "true",
        "source": "DYNAMIC_DEFAULT_BROKER_CONFIG",
        "is_sensitive": False,
    }
    snap = snapshot(tmp_path, "unclean", rotation(3) + [([1, 2, 3], [2], 2)], min_isr="1")
    rows = [json.loads(line) for line in (snap / "configs.jsonl").read_text().splitlines() if line.strip()]
    (snap / "configs.jsonl").write_text(
        "\n".join(json.dumps(r) for r in [*rows, {**unclean, "cluster_id": rows[0]["cluster_id"]}]) + "\n"
    )
    pre = preflight(snap)
    f = next(f for f in pre.result.findings if f.rule == "MNT002")
    assert f.resource_name == "2" and "loses acknowledged data" in f.message
    assert f.evidence["loses_acknowledged_data"] == 1


def test_upgrade_to_4_0_is_not_ready_in_zookeeper_mode(tmp_path):
    snap = snapshot(tmp_path, "zk-39", rotation(6), cluster={"kafka_version": "3.9.0"})
    pre = run_preflight_target(snap)
    assert {f.rule for f in pre.upgrade_blockers} >= {"UPG001"}
    assert "upgrade to Kafka 4.0: NOT ready" in render("text", pre)
    kraft = run_preflight_target(
        snapshot(tmp_path, "kraft-39", rotation(6), mode="kraft", cluster={"kafka_version": "3.9.0"})
    )
    assert not any(f.rule.startswith("UPG") for f in kraft.upgrade_blockers)


def run_preflight_target(snap):
    with open_engine("duckdb") as engine:
        return run_preflight(engine, [open_snapshot(snap)], AuditConfig(), target_version="4.0")


def test_lagging_successor_warns_on_its_leader_and_blocks_nothing(tmp_path):
    """MNT006 (issue 42): in rotation(6) broker 1 leads orders-0 ([1, 2, 3]); the follower the
    controller would elect (broker 2) reports ConsumerLag 1250 from broker 1, every other follower
    0. Broker 1 gets a warning (acks=1 writes it alone holds would be lost) and stays safe: the
    cluster rolls, exit 0, no fix plan. Without the lag table the same cluster rolls too, and MNT006
    is reported not evaluated (no followers' lag), never as 0 partitions at risk."""
    parts = rotation(6)
    lag = [
        {"broker_id": b, "topic": "orders", "partition": i, "leader_id": reps[0], "lag": 0}
        for i, (reps, _isr) in enumerate(parts)
        for b in reps[1:]
    ]
    next(r for r in lag if r["partition"] == 0 and r["broker_id"] == 2)["lag"] = 1250
    snap = snapshot(tmp_path, "acks1", parts, extra={"replica_lag": lag})
    pre = preflight(snap)
    (c,) = pre.clusters
    views = {b.broker_id: b for b in c.brokers}
    assert c.unsafe == [] and c.safe_to_roll and c.verdict == "safe" and c.plan is None
    assert c.acks1_at_risk == [1] and views[1].safe and views[1].verdict == "safe"
    assert views[1].acks1_loss_partitions == 1 and views[1].reasons == ["MNT006"]
    assert views[1].partitions == [] and views[1].topics == []  # not "hit": nothing blocks
    assert c.order == sorted(views, key=lambda b: (views[b].leaders, b))  # broker 1 is in the order
    (finding,) = [f for f in pre.result.findings if f.rule == "MNT006"]
    assert finding.severity == "warning" and finding.resource_name == "1"
    assert "acks=1 writes acknowledged beyond them are lost" in finding.message
    assert "blocks nothing else" in finding.message and finding.evidence["max_consumer_lag"] == 1250
    text = render("text", pre)
    assert "acks=1 writes at risk (MNT006, warning, blocks nothing): restarting broker(s) 1" in text
    assert "every broker can be restarted one at a time" in text and "preflight safe" in text
    assert "MNT006" in render("html", pre) and "acks=1 writes at risk" in render("html", pre)
    doc = json.loads(render("json", pre))["preflight"]["clusters"][0]
    assert [b["acks1_loss_partitions"] for b in doc["brokers"]] == [1, 0, 0]
    assert doc["acks1_loss_brokers"] == [1] and doc["verdict"] == "safe" and doc["safe_to_roll"] is True
    assert c.acks1_not_evaluated == ""
    assert cli("preflight", snap).returncode == 0
    pre = preflight(snapshot(tmp_path, "acks1-no-lag", parts))
    (c,) = pre.clusters
    assert c.safe_to_roll
    (entries,) = pre.result.coverage.values()
    assert any("MNT006" in e["rules"] for e in entries)
    assert "FetcherLagMetrics ConsumerLag" in c.acks1_not_evaluated
    text = render("text", pre)
    assert "acks=1 loss (MNT006) not evaluated (n/e): no followers' replication lag" in text
    assert "n/e" in render("html", pre)
    doc = json.loads(render("json", pre))["preflight"]["clusters"][0]
    assert "FetcherLagMetrics" in doc["acks1_loss_not_evaluated"]


def test_upgrade_preflight_on_kafka_4_says_the_consumer_protocol_is_off_without_blocking(tmp_path):
    # A cluster upgraded to 4.0 whose group.version was never finalized (level 0 is not listed,
    # KIP-1022): UPG006 reports it at info; it is no upgrade blocker.
    features = [{"feature": "metadata.version", "finalized_level": 25, "version_name": "4.0-IV3"}]
    snap = snapshot(
        tmp_path,
        "kraft-40",
        rotation(6),
        mode="kraft",
        cluster={"kafka_version": "4.0.0"},
        extra={"features": features},
    )
    pre = run_preflight_target(snap)
    (f,) = [f for f in pre.result.findings if f.rule == "UPG006"]
    assert f.severity == "info" and f.resource_name == "kraft-40"
    assert "group.version is 0" in f.message and f.evidence["consumer_protocol_enabled"] is False
    assert "UPG006" not in {b.rule for b in pre.upgrade_blockers}
    finalized = features + [{"feature": "group.version", "finalized_level": 1}]
    snap = snapshot(
        tmp_path,
        "kraft-40-gv1",
        rotation(6),
        mode="kraft",
        cluster={"kafka_version": "4.0.0"},
        extra={"features": finalized},
    )
    assert not [f for f in run_preflight_target(snap).result.findings if f.rule == "UPG006"]


def _leos(parts, behind=(), *, at=1_795_327_200_000, rate_per_s=200, step_s=5, skew_ms=700):
    """Two scrapes of every replica's log end offset, ``step_s`` apart, broker b scraped
    ``skew_ms`` x (b - 1) after broker 1 (one time per broker and scrape, as a collector takes
    them), every partition appending ``rate_per_s``; followers 0-5 records behind (in flight),
    except ``behind``: {(partition, broker): records} that persist."""
    rows = []
    for j, (replicas, _isr) in enumerate(parts):
        for k, ts in enumerate((at, at + step_s * 1000)):
            leo = 100_000 * (j + 1) + rate_per_s * step_s * k
            for n, b in enumerate(replicas):
                gap = 0 if n == 0 else (j + n + k) % 6  # 0-5 records in flight
                rows.append(
                    {
                        "broker_id": b,
                        "topic": "orders",
                        "partition": j,
                        "log_end_offset": leo - gap - dict(behind).get((j, b), 0),
                        "scraped_at_ms": ts + skew_ms * (b - 1),
                    }
                )
    return rows


def test_log_end_offsets_judge_acks1_loss_only_when_the_gap_persists(tmp_path):
    """MNT006 from each broker's own LogEndOffset (issue 42): followers 0-5 records behind their
    leaders in one scrape are replication in flight, never a finding; with a single scrape the
    column says the rule could not judge (never 0). A gap that persists over two scrapes, far above
    what the leader appends in the in-flight allowance, is a warning on the leader, which stays
    safe."""
    parts = rotation(6)
    one = [r for r in _leos(parts) if r["scraped_at_ms"] < 1_795_327_205_000]
    for r in one:
        del r["scraped_at_ms"]
    pre = preflight(snapshot(tmp_path, "leo-one-scrape", parts, extra={"log_end_offsets": one}))
    (c,) = pre.clusters
    assert c.safe_to_roll and not [f for f in pre.result.findings if f.rule == "MNT006"]
    assert "of one scrape only" in c.acks1_not_evaluated and "n/e" in render("text", pre)

    in_flight = _leos(parts)
    pre = preflight(snapshot(tmp_path, "leo-in-flight", parts, extra={"log_end_offsets": in_flight}))
    (c,) = pre.clusters
    assert c.safe_to_roll and c.acks1_not_evaluated == "" and c.acks1_at_risk == []
    assert not [f for f in pre.result.findings if f.rule == "MNT006"]

    i, reps = next((i, reps) for i, (reps, _isr) in enumerate(parts) if reps[0] == 2)
    lagging = _leos(parts, behind={(i, reps[1]): 20_000})
    pre = preflight(snapshot(tmp_path, "leo-lagging", parts, extra={"log_end_offsets": lagging}))
    (c,) = pre.clusters
    assert c.safe_to_roll and c.unsafe == [] and c.acks1_at_risk == [2]
    (finding,) = [f for f in pre.result.findings if f.rule == "MNT006"]
    assert finding.severity == "warning" and finding.evidence["sources"] == ["LogEndOffset"]
    assert finding.evidence["partitions"] == [f"orders-{i}"] and finding.evidence["lagging_successors"] == [
        reps[1]
    ]
    # the allowance: 0.2 records/ms x (5000 ms in flight + 700 ms between the two brokers' scrapes)
    assert finding.evidence["max_window"] >= 20_000 and finding.evidence["in_flight_allowance"] == 1140


def test_issue_42_a_busy_copy_of_inventory_prod_rolls(tmp_path):
    """Issue 42's named case: inventory-prod with its followers 0-5 records behind their leaders in
    the scrapes (brokers scraped seconds apart, twice), and the internal topics' followers reporting
    ConsumerLag from a burst of offset commits: every broker and controller safe, no MNT finding,
    exit 0. Before, MNT006 called 6 of 6 brokers unsafe and named __consumer_offsets and
    __transaction_state, which Kafka writes with acks=-1."""
    import shutil

    snap = tmp_path / "inventory-busy"
    shutil.copytree(cluster_dir("inventory-prod"), snap)
    partitions = [json.loads(x) for x in (snap / "partitions.jsonl").read_text().splitlines() if x.strip()]
    cid = partitions[0]["cluster_id"]
    leos, lags = [], []
    for j, p in enumerate(partitions):
        for k, at in enumerate((1_795_327_200_000, 1_795_327_205_000)):
            leo = 50_000 + 1_000 * j + 400 * k
            for n, b in enumerate(p["replicas"]):
                gap = 0 if n == 0 else (j + n + k) % 6
                skew = 900 * (b - 1)  # broker b scraped 0.9 s after broker b-1
                leos.append(
                    {
                        "cluster_id": cid,
                        "broker_id": b,
                        "topic": p["topic"],
                        "partition": p["partition"],
                        "log_end_offset": leo - gap,
                        "scraped_at_ms": at + skew,
                    }
                )
        for b in p["replicas"][1:]:
            lag = 7 if p["topic"].startswith("__") else 0  # commits in flight, acks=-1 anyway
            lags.append(
                {
                    "cluster_id": cid,
                    "broker_id": b,
                    "topic": p["topic"],
                    "partition": p["partition"],
                    "leader_id": p["leader"],
                    "lag": lag,
                }
            )
    for name, rows in (("log_end_offsets", leos), ("replica_lag", lags)):
        (snap / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = json.loads((snap / "manifest.json").read_text())
    manifest["tables"].update(
        {"log_end_offsets": "log_end_offsets.jsonl", "replica_lag": "replica_lag.jsonl"}
    )
    (snap / "manifest.json").write_text(json.dumps(manifest))
    pre = preflight(snap)
    (c,) = pre.clusters
    assert c.safe_to_roll and c.verdict == "safe" and c.unsafe == [] and c.acks1_not_evaluated == ""
    assert [b.verdict for b in c.brokers] == ["safe"] * 6 and len(c.order) == 6
    assert [v.verdict for v in c.controllers] == ["safe"] * 3
    assert not [f for f in pre.result.findings if f.rule.startswith("MNT")]
    assert cli("preflight", snap).returncode == 0


# -- issue 42 items 2 and 6: a quorum of one or two controllers is a planned outage, not "wait" --------


def _small_quorum(n, lagging=()):
    voters = [
        {"node_id": 9000 + i, "role": "voter", "is_leader": i == 1, "lag": 0, "caught_up_age_ms": 60}
        for i in range(1, n + 1)
    ]
    for v in voters:
        if v["node_id"] in lagging:
            v.update(lag=900, caught_up_age_ms=120_000)
    return voters


@pytest.mark.parametrize("voters", [1, 2])
def test_a_quorum_of_one_or_two_controllers_is_a_planned_outage(tmp_path, voters):
    """Strimzi rolls single-node and two-node quorums (with a warning). No order and no wait
    makes their restart safe: preflight says "outage" (exit 1, as for unsafe: the roll must not
    proceed as if safe), names the fix (more controllers, KIP-853, CTL006) and never says wait; the
    brokers keep their verdicts and order."""
    snap = snapshot(
        tmp_path,
        f"dev-{voters}",
        rotation(6),
        mode="kraft",
        controller=1,
        extra={"quorum": _small_quorum(voters)},
    )
    pre = preflight(snap)
    (c,) = pre.clusters
    ids = [9000 + i for i in range(1, voters + 1)]
    assert c.verdict == "outage" and pre.verdict == "outage" and not c.safe_to_roll and not pre.any_unsafe
    assert c.outage_controllers == ids and c.unsafe_controllers == [] and c.controller_order == []
    assert [v.verdict for v in c.controllers] == ["outage"] * voters and c.order == [1, 2, 3]
    assert c.plan is None and c.blockers == []
    findings = [f for f in pre.result.findings if f.rule == "MNT005"]
    assert sorted(int(f.resource_name) for f in findings) == ids
    assert all(f.severity == "warning" and f.evidence["planned_outage"] is True for f in findings)
    assert all(
        "KIP-853" in f.message and "CTL006" in f.message and "wait" not in f.message.replace("no wait", "")
        for f in findings
    )
    text = render("text", pre)
    assert (
        f"can be rolled only as a planned outage: restarting controller(s) {', '.join(map(str, ids))}" in text
    )
    assert "OUTAGE: restarting controller" in text and "preflight outage" in text
    assert "no controller order avoids the outage" in text and "wait for" not in text
    doc = json.loads(render("json", pre))["preflight"]
    assert doc["verdict"] == "outage" and doc["clusters"][0]["outage_controllers"] == ids
    assert "add controllers to reach 3" in doc["clusters"][0]["outage_note"]
    assert "Only as a planned metadata outage" in render("html", pre)
    out = tmp_path / "plan.sh"
    r = cli("preflight", snap, "--fix-plan", out)
    assert r.returncode == 1 and "preflight outage" in r.stdout
    assert "no plan: restarting controller(s)" in out.read_text() and "wait for" not in out.read_text()


def test_a_voter_behind_in_a_quorum_of_three_is_unsafe_and_waits(tmp_path):
    """The wait, and critical, stay for voters that are behind: waiting gives the quorum its voter
    to spare back."""
    snap = snapshot(
        tmp_path,
        "three-behind",
        rotation(6),
        mode="kraft",
        controller=1,
        extra={"quorum": _small_quorum(3, [9003])},
    )
    pre = preflight(snap)
    (c,) = pre.clusters
    assert c.verdict == "unsafe" and c.unsafe_controllers == [9001, 9002] and c.outage_controllers == []
    assert {f.severity for f in pre.result.findings if f.rule == "MNT005"} == {"critical"}
    (wait,) = [w for w in c.plan.waits if w.what.startswith("the KRaft quorum")]
    assert "controller(s) 9001, 9002" in wait.what and c.plan.notes == []


def test_an_unsafe_broker_in_a_small_quorum_cluster_plans_the_broker_and_notes_the_outage(tmp_path):
    """min.insync.replicas 3 on RF 3 (every broker unsafe) with one controller: the plan fixes the
    topics (proven on a copy), notes the controller outage and adds no wait for it."""
    snap = snapshot(
        tmp_path,
        "dev-unsafe",
        rotation(6),
        min_isr="3",
        mode="kraft",
        controller=1,
        extra={"quorum": _small_quorum(1)},
    )
    pre = preflight(snap)
    (c,) = pre.clusters
    assert c.verdict == "unsafe" and c.unsafe == [1, 2, 3] and c.outage_controllers == [9001]
    assert not [w for w in c.plan.waits if "KRaft quorum" in w.what]
    (note,) = c.plan.notes
    assert "controller(s) 9001 is a metadata outage whatever the order or the wait" in note
    assert c.plan.proof["outage_only"] is True and c.plan.proof["safe"] == 3
    assert "stays a planned metadata outage" in c.plan.proof_line
    assert "note: restarting controller(s) 9001" in render("text", pre)


# Strimzi's KafkaQuorumCheckTest, case for case: (lastCaughtUpTimestamp per voter, the leader, the
# controller considered, Strimzi's canRollController) -> our verdict for that controller. Strimzi's
# timestamps are the leader's clock; ours are ages at collection (20000 - timestamp). A timestamp Strimzi
# gives as -1 or empty is unknown to us too (no age): the leader then reports the voter's log end as
# unknown, a lag above 0 (KIP-595), which is how we judge it. Deliberate differences (issue 42): a
# quorum of one or two voters, which Strimzi rolls with a warning ("It is recommended that a minimum of
# three controllers are used"), is a planned metadata outage here, whatever its voters' state.
STRIMZI_QUORUM_CASES = {
    "canRollActiveControllerOddSizedCluster": ({1: 10000, 2: 9500, 3: 9700}, 1, 1, True, "safe"),
    "canRollActiveControllerEvenSizedCluster": ({1: 10000, 2: 9500, 3: 9700, 4: 9600}, 1, 1, True, "safe"),
    "cannotRollActiveControllerWith1FollowerBehindOddSizedCluster": (
        {1: 10000, 2: 7000, 3: 8200},
        1,
        1,
        False,
        "unsafe",
    ),
    "cannotRollActiveControllerWith1FollowerBehindEvenSizedCluster": (
        {1: 10000, 2: 7000, 3: 8200, 4: 9000},
        1,
        1,
        False,
        "unsafe",
    ),
    "canRollControllerWhenItselfIsBehind": ({1: 10000, 2: 7000, 3: 10000}, 1, 2, True, "safe"),
    "cannotRollControllerWhenAnotherFollowerBehind": ({1: 10000, 2: 7000, 3: 10000}, 1, 3, False, "unsafe"),
    "cannotRollControllerWhenTimestampInvalid": ({1: 10000, 2: None, 3: None}, 1, 3, False, "unsafe"),
    "shouldHandlePartiallyIncompleteQuorumData": ({1: 10000, 2: None, 3: 9500}, 1, 1, False, "unsafe"),
    "shouldHandleNoLeaderQuorumScenario": ({1: 10000, 2: 12000, 3: 11000}, -1, 1, False, "unsafe"),
    "canRollControllerSingleNodeQuorum": ({1: 10000}, 1, 1, True, "outage"),
    "canRollController2NodesQuorum": ({1: 10000, 2: 9500}, 1, 1, True, "outage"),
    "cannotRollController2NodeQuorumFollowerBehind": ({1: 10000, 2: 7000}, 1, 1, False, "outage"),
}


@pytest.mark.parametrize("name", STRIMZI_QUORUM_CASES)
def test_strimzi_quorum_check_cases(tmp_path, name):
    stamps, leader, considered, strimzi_rolls, ours = STRIMZI_QUORUM_CASES[name]
    quorum = [
        {
            "node_id": node,
            "role": "voter",
            "is_leader": node == leader,
            "lag": 0 if ts is not None else 40,
            "caught_up_age_ms": None if ts is None else 20000 - ts,
        }
        for node, ts in stamps.items()
    ]
    snap = snapshot(tmp_path, name.lower(), rotation(6), mode="kraft", controller=1, extra={"quorum": quorum})
    (c,) = preflight(snap).clusters
    verdict = next(v.verdict for v in c.controllers if v.node_id == considered)
    assert verdict == ours
    assert (verdict == "safe") == strimzi_rolls or verdict == "outage"  # agree, but for the small quorums


def test_strimzi_dynamic_timeout_is_the_restarted_controllers_own(tmp_path):
    """Strimzi's shouldTestDynamicTimeoutValue: the controller considered runs with
    controller.quorum.fetch.timeout.ms=100 (KafkaRoller.quorumCheck reads the rolled node's
    configuration). In a quorum of three, a voter 50 ms behind counts as caught up with it and one
    150 ms behind does not."""
    quorum = [
        {"node_id": 1, "role": "voter", "is_leader": True, "lag": 0, "caught_up_age_ms": 0},
        {"node_id": 2, "role": "voter", "is_leader": False, "lag": 0, "caught_up_age_ms": 50},
        {"node_id": 3, "role": "voter", "is_leader": False, "lag": 2, "caught_up_age_ms": 150},
    ]
    nodes = [
        {"node_id": n, "process_roles": ["controller"], "quorum_voters": "1@c1:9093,2@c2:9093,3@c3:9093"}
        for n in (1, 2, 3)
    ]
    nodes[0]["quorum_fetch_timeout_ms"] = 100
    snap = snapshot(
        tmp_path,
        "dynamic-timeout",
        rotation(6),
        mode="kraft",
        controller=1,
        extra={"quorum": quorum, "kraft_nodes": nodes},
    )
    pre = preflight(snap)
    (c,) = pre.clusters
    # Restarting 1 (timeout 100): 2 is caught up, 3 is not: 1 of 2 needed. Restarting 2 or 3 (2000 ms):
    # every other voter is caught up.
    assert [(v.node_id, v.verdict) for v in c.controllers] == [(1, "unsafe"), (2, "safe"), (3, "safe")]
    (f,) = [f for f in pre.result.findings if f.rule == "MNT005"]
    assert (
        f.evidence["fetch_timeout_ms"] == 100
        and f.evidence["fetch_timeout_source"] == "controller properties file"
    )
