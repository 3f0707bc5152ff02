"""`kafka-audit preflight`: the fix plan, applied to a copy of the snapshot and re-simulated."""

from __future__ import annotations

import json

import pytest

from auditor.commands.preflight_plan import apply_plan
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
        "outage_only": False,
        "outage_controllers": [],
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


# --- issue 37: the --fix-plan script, run as written -------------------------------------------

FAKE_TOOL = """#!{python}
import json, os, sys
args = sys.argv[1:]
read = None
if "--reassignment-json-file" in args:
    path = args[args.index("--reassignment-json-file") + 1]
    try:
        with open(path, encoding="utf-8") as fh:
            read = fh.read()
    except OSError as e:
        read = "unreadable: " + type(e).__name__
with open(os.environ["FAKE_KAFKA_LOG"], "a", encoding="utf-8") as log:
    log.write(json.dumps({{"tool": os.path.basename(sys.argv[0]), "args": args, "read": read}}) + "\\n")
"""
TOOLS = ("kafka-configs.sh", "kafka-reassign-partitions.sh", "kafka-topics.sh", "aws")
STALE = (
    '{"version": 1, "partitions": [{"topic": "stale-from-an-earlier-plan", "partition": 0, "replicas": [9]}]}'
)


def _fake_tools(tmp_path):
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in TOOLS:
        tool = bin_dir / name
        tool.write_text(FAKE_TOOL.format(python=sys.executable))
        tool.chmod(0o755)
    return bin_dir


def _run_plan(script, workdir, bin_dir, log):
    import os
    import subprocess

    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_KAFKA_LOG": str(log)}
    p = subprocess.run(
        ["bash", str(script)], cwd=workdir, env=env, capture_output=True, text=True, timeout=60
    )
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return p, calls


def _expected_calls(pre):
    """Every command of every plan, in order, as argv; the reassignment JSON each reassign call must read."""
    import shlex

    out = []
    for c in pre.clusters:
        for ch in c.plan.changes if c.plan else []:
            for cmd in ch.commands:
                argv = shlex.split(cmd, comments=True)
                out.append((argv[0], argv[1:], c.plan.reassignment if ch.kind == "reassign" else None))
    return out


def _every_sample_and_a_reassignment(tmp_path):
    from tests.conftest import ROOT

    samples = sorted(
        [
            *(ROOT / "sample_configs" / "fleet").glob("dt=*/cluster=*"),
            *(ROOT / "sample_configs" / "variants").glob("dt=*/cluster=*"),
        ]
    )
    rf2 = snapshot(
        tmp_path,
        "rf2",
        [([1, 2], [1, 2]), ([2, 3], [2, 3]), ([3, 1], [3, 1])],
        brokers=(1, 2, 3, 4),
        min_isr="2",
    )
    return preflight(*samples, rf2)


@pytest.mark.parametrize("directory", ["fresh", "stale file", "stale symlink"])
def test_every_samples_fix_plan_runs_top_to_bottom_against_fake_kafka_tools(tmp_path, directory):
    pre = _every_sample_and_a_reassignment(tmp_path)
    expected = _expected_calls(pre)
    assert any(ch.kind == "reassign" for c in pre.clusters if c.plan for ch in c.plan.changes)
    assert sum(c.plan is not None for c in pre.clusters) >= 2  # payments-msk and the RF 2 cluster at least
    script = tmp_path / "plan.sh"
    script.write_text(fix_plan_file(pre))
    work = tmp_path / "work"
    work.mkdir()
    victim = tmp_path / "victim.json"
    victim.write_text(STALE)
    if directory == "stale file":
        (work / "increase-replication-factor.json").write_text(STALE)
    elif directory == "stale symlink":
        (work / "increase-replication-factor.json").symlink_to(victim)
    p, calls = _run_plan(script, work, _fake_tools(tmp_path), tmp_path / "calls.jsonl")
    assert p.returncode == 0, p.stderr
    assert [(c["tool"], c["args"]) for c in calls] == [(tool, args) for tool, args, _ in expected]
    for call, (_tool, _args, reassignment) in zip(calls, expected, strict=True):
        if reassignment is not None:  # the plan's own JSON, written before the command ran
            assert json.loads(call["read"]) == reassignment, call
    assert victim.read_text() == STALE  # the symlink was replaced, not written through


def test_fix_plan_stops_before_the_reassignment_when_its_file_cannot_be_written(tmp_path):
    pre = _every_sample_and_a_reassignment(tmp_path)
    script = tmp_path / "plan.sh"
    script.write_text(fix_plan_file(pre))
    work = tmp_path / "work"
    (work / "increase-replication-factor.json").mkdir(parents=True)  # a directory in the way
    p, calls = _run_plan(script, work, _fake_tools(tmp_path), tmp_path / "calls.jsonl")
    assert p.returncode != 0
    assert calls and not [c for c in calls if c["tool"] == "kafka-reassign-partitions.sh"]
    assert [c["tool"] for c in calls] == ["kafka-configs.sh"] * len(calls)  # what came before it ran


def test_a_command_naming_control_characters_is_commented_out_not_run_escaped(tmp_path):
    topic = "evil\x1b]52;c;x\x07"
    snap = snapshot(tmp_path, "evil", [([1, 2, 3], [1, 2, 3])], topic=topic)
    row = {"entity_type": "topic", "entity_name": topic, "key": "min.insync.replicas", "value": "3"}
    row |= {"cluster_id": "evil", "source": "TOPIC_CONFIG", "is_sensitive": False}
    with (snap / "configs.jsonl").open("a") as fh:
        fh.write(json.dumps(row) + "\n")
    pre = preflight(snap)
    assert [ch.kind for ch in pre.clusters[0].plan.changes] == ["topic_config"]
    script = tmp_path / "plan.sh"
    script.write_text(fix_plan_file(pre))
    p, calls = _run_plan(script, tmp_path, _fake_tools(tmp_path), tmp_path / "calls.jsonl")
    assert p.returncode == 0, p.stderr
    assert calls == []  # escaped, the name would be "evil\\x1b]52..." (another topic): not run
    assert "# not run (a name holds control characters): kafka-configs.sh" in script.read_text()
