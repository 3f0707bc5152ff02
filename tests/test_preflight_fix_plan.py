"""`kafka-audit preflight`: the fix plan, applied to a copy of the snapshot and re-simulated."""

from __future__ import annotations

import json

import pytest

from auditor.preflight_plan import apply_plan
from auditor.render.preflight_render import fix_plan_file, render
from auditor.snapshot.io import open_snapshot
from tests.conftest import cluster_dir
from tests.test_preflight import cli, preflight, rotation, snapshot


def _resimulate(tmp_path, snap, plan):
    """Apply the plan to a copy ourselves (not through the plan's own proof) and re-run."""
    copy_ref = apply_plan(open_snapshot(snap), plan, tmp_path / "applied")
    return preflight(copy_ref.path)


def test_payments_msk_plan_is_four_topic_overrides_and_resimulates_safe(tmp_path):
    pre = preflight(cluster_dir("payments-msk"))
    (c,) = pre.clusters
    plan = c.plan
    four = [
        "__consumer_offsets",
        "payments.authorizations.v2",
        "payments.ledger-events",
        "payments.orders.v1",
    ]
    assert sorted(t for ch in plan.changes for t in ch.topics) == four
    assert [ch.kind for ch in plan.changes] == ["topic_config"] * 4 and {ch.value for ch in plan.changes} == {
        2
    }
    cmd = next(ch.commands[0] for ch in plan.changes if ch.topics == ["payments.orders.v1"])
    assert cmd == (
        "kafka-configs.sh --bootstrap-server b-1.payments.x7k2qp.c3.kafka.us-east-1.amazonaws.com:9098 "
        "--alter --entity-type topics --entity-name payments.orders.v1 --add-config min.insync.replicas=2"
    )
    # MSK: the inherited default goes to a new configuration revision only afterwards (it is itself a roll)
    assert plan.followups and "min.insync.replicas=2" in plan.followups[0] and "revision" in plan.followups[0]
    assert plan.proof == {
        "brokers": 3,
        "safe": 3,
        "unsafe": [],
        "blockers": [],
        "reached_safe": True,
        "order_after": plan.proof["order_after"],
    }
    assert plan.proof["order_after"][-1] == 2  # the controller last once safe
    assert plan.proof_line.startswith("after these 4 change(s): 3 of 3 broker(s) safe")
    # independently: apply and re-run
    after = _resimulate(tmp_path, cluster_dir("payments-msk"), plan)
    (a,) = after.clusters
    assert (
        a.safe_to_roll
        and a.unsafe == []
        and not [f for f in after.result.findings if f.rule.startswith("MNT")]
    )
    # the original snapshot is untouched
    assert preflight(cluster_dir("payments-msk")).clusters[0].unsafe == [1, 2, 3]


def test_issue_18_done_condition_on_the_cli(tmp_path):
    out = tmp_path / "plan.sh"
    p = cli("preflight", cluster_dir("payments-msk"), "--fix-plan", out)
    assert p.returncode == 1, p.stderr
    # issue 38: it says what it wrote, as --write-baseline does
    assert f"kafka-audit: {out}: fix plan of 1 of 1 cluster(s) written" in p.stderr, p.stderr
    assert "unsafe" in p.stdout and "preflight unsafe" in p.stdout
    for topic in (
        "__consumer_offsets",
        "payments.authorizations.v2",
        "payments.ledger-events",
        "payments.orders.v1",
    ):
        assert f"--entity-name {topic} --add-config min.insync.replicas=2" in p.stdout
    assert "after these 4 change(s): 3 of 3 broker(s) safe" in p.stdout
    script = out.read_text()
    assert script.startswith("# kafka-audit preflight fix plan for cluster payments-msk")
    assert script.count("kafka-configs.sh") == 4 and "executed none of this" in script
    doc = json.loads(cli("preflight", cluster_dir("payments-msk"), "-f", "json").stdout)
    fp = doc["preflight"]["clusters"][0]["fix_plan"]
    assert len(fp["changes"]) == 4 and fp["proof"]["reached_safe"] is True
    html = tmp_path / "p.html"
    assert cli("preflight", cluster_dir("payments-msk"), "-f", "html", "-o", html).returncode == 1
    page = html.read_text()
    assert 'class="fix-plan"' in page and "after these 4 change(s): 3 of 3 broker(s) safe" in page


def test_self_managed_default_is_one_entity_default_change(tmp_path):
    parts = rotation(6)  # RF 3, min.insync.replicas 3 from the dynamic cluster default
    pre = preflight(snapshot(tmp_path, "selfm", parts, min_isr="3"))
    (c,) = pre.clusters
    assert c.unsafe == [1, 2, 3]
    (ch,) = c.plan.changes
    assert ch.kind == "default_config" and ch.value == 2
    assert ch.commands == [
        "kafka-configs.sh --bootstrap-server kafka-1.test:9092 --alter --entity-type brokers "
        "--entity-default --add-config min.insync.replicas=2"
    ]
    assert c.plan.proof["reached_safe"] and c.plan.proof["safe"] == 3


@pytest.mark.parametrize(
    "source,kind,entities",
    [
        ("STATIC_BROKER_CONFIG", "default_config", ["--entity-default"]),
        ("DYNAMIC_BROKER_CONFIG", "broker_config", ["--entity-name 1", "--entity-name 2", "--entity-name 3"]),
    ],
)
def test_broker_level_values_are_changed_where_they_come_from(tmp_path, source, kind, entities):
    snap = snapshot(tmp_path, "brokerlevel", rotation(6))
    rows = [
        {
            "cluster_id": "brokerlevel",
            "entity_type": "broker",
            "entity_name": str(b),
            "key": "min.insync.replicas",
            "value": "3",
            "source": source,
            "is_sensitive": False,
        }
        for b in (1, 2, 3)
    ]
    (snap / "configs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (c,) = preflight(snap).clusters
    assert c.unsafe == [1, 2, 3]
    (ch,) = c.plan.changes
    assert ch.kind == kind and ch.value == 2 and len(ch.commands) == len(entities)
    for cmd, entity in zip(ch.commands, entities, strict=True):
        assert f"--entity-type brokers {entity} --add-config min.insync.replicas=2" in cmd
    assert c.plan.proof["reached_safe"] and c.plan.proof["safe"] == 3


def test_config_change_plus_a_replica_to_wait_for(tmp_path):
    # min ISR 3 on RF 3 (a config cause) and orders-0's replica on broker 3 out of sync
    pre = preflight(snapshot(tmp_path, "both", [([1, 2, 3], [1, 2])] + rotation(3), min_isr="3"))
    (c,) = pre.clusters
    assert [ch.kind for ch in c.plan.changes] == ["default_config"] and c.plan.changes[0].value == 2
    (w,) = c.plan.waits
    assert w.what == "broker 3 to rejoin the ISR of 1 partition(s): orders-0"
    assert c.plan.proof["unsafe"] == [1, 2] and c.plan.proof["safe"] == 1 and not c.plan.proof["reached_safe"]
    assert c.plan.proof_line.startswith(
        "after these 1 change(s): 1 of 3 broker(s) safe; still unsafe: broker(s) 1, 2"
    )


def test_replication_factor_too_low_gets_a_rack_aware_reassignment(tmp_path):
    # RF 2 with min.insync.replicas 2 on 4 brokers in 3 racks: raise RF to 3
    parts = [([1, 2], [1, 2]), ([2, 3], [2, 3]), ([3, 1], [3, 1])]
    snap = snapshot(tmp_path, "rf2", parts, brokers=(1, 2, 3, 4), min_isr="2")
    pre = preflight(snap)
    (c,) = pre.clusters
    assert set(c.unsafe) == {1, 2, 3}
    (ch,) = c.plan.changes
    assert (
        ch.kind == "reassign"
        and "--reassignment-json-file increase-replication-factor.json --execute" in ch.commands[0]
    )
    racks = {b: f"az-{b % 3}" for b in (1, 2, 3, 4)}  # 1: az-1, 2: az-2, 3: az-0, 4: az-1
    new = {p["partition"]: p["replicas"] for p in c.plan.reassignment["partitions"]}
    assert all(len(r) == 3 and len(set(r)) == 3 for r in new.values())
    for p, reps in new.items():
        assert reps[:2] == list(parts[p][0])  # existing replicas kept, in order
        assert len({racks[b] for b in reps}) == 3  # one replica per rack
    assert new[0][2] == 3  # orders-0 on az-1, az-2: needs az-0, which only broker 3 has
    assert c.plan.proof["reached_safe"] and c.plan.proof["safe"] == 4
    after = _resimulate(tmp_path, snap, c.plan)
    assert after.clusters[0].safe_to_roll


def test_a_broker_down_cannot_be_planned_away_and_the_plan_says_why(tmp_path):
    # broker 3 is down (not registered): its replicas are out of every ISR; min ISR 2 with RF 3 is fine
    parts = [([1, 2, 3], [1, 2]), ([2, 3, 1], [2, 1]), ([3, 1, 2], [1, 2])]
    pre = preflight(snapshot(tmp_path, "down", parts, brokers=(1, 2), min_isr="2"))
    (c,) = pre.clusters
    assert c.unsafe == [1, 2] and not c.safe_to_roll
    plan = c.plan
    assert plan.changes == []  # lowering min.insync.replicas to 1 is not a fix: no change proposed
    (w,) = plan.waits
    assert w.what.startswith("broker 3 to come back (it is not registered: down) and rejoin the ISR of 3")
    assert "orders-0, orders-1, orders-2" in w.what
    assert "--under-replicated-partitions" in w.recheck
    assert plan.proof["reached_safe"] is False and plan.proof["unsafe"] == [1, 2]
    assert plan.proof_line.startswith("no configuration change helps: 0 of 2 broker(s) safe as is")
    assert "no config change fixes that" in plan.proof_line
    text = render("text", pre)
    assert "wait for broker 3 to come back (it is not registered: down)" in text and "re-check:" in text
    assert "# wait for broker 3" in fix_plan_file(pre)


def test_plan_output_escapes_what_it_shows(tmp_path):
    topic = "evil\x1b]52;c;x\x07\n<b>name"
    pre = preflight(snapshot(tmp_path, "evil", [([1, 2, 3], [1, 2, 3])], min_isr="3", topic=topic))
    (c,) = pre.clusters
    assert c.plan.changes and c.plan.proof["reached_safe"]
    for text in (render("text", pre), fix_plan_file(pre)):
        assert "\x1b" not in text and "\x07" not in text and "evil\\x1b]52" in text
        assert not any(line.startswith("<b>name") for line in text.splitlines())  # no forged line
    page = render("html", pre)
    plan_html = page[page.index('class="fix-plan"') :]
    assert "<b>name" not in page and "&lt;b&gt;name" in plan_html


def test_safe_cluster_has_no_plan_and_fix_plan_file_says_so(tmp_path):
    out = tmp_path / "plan.txt"
    p = cli("preflight", cluster_dir("inventory-prod"), "--fix-plan", out)
    assert p.returncode == 0, p.stderr
    assert "fix plan" not in p.stdout and "safe to roll, nothing to change" in out.read_text()
