"""`kafka-audit preflight --target-version 4.N`: the upgrade table, each cluster's path, its formats.

The four clusters the issue names, judged at every 4.x target in one engine run each:

* a ZooKeeper 3.9 cluster: it must migrate to KRaft first (the upgrade notes of every 4.x release);
* a KRaft 3.9 cluster at an old metadata.version (3.6-IV2): Kafka allows the upgrade, the finalize
  first is recommended, not blocking (UPG003 a warning, issue 42 item 4);
* a 4.0 cluster with min.insync.replicas set per broker: going to 4.1 or later turns ELR on at the
  finalize step (ELRV_1 at 4.1-IV0): UPG007 blocks; going to 4.0 does not;
* an MSK 3.6 cluster (ZooKeeper): AWS's path, 3.9.x first, then the in-place migration, and no 4.2+
  offered (the shipped AWS table).

Each version boundary is the upgrade table's, which quotes its source (tools/extract_kafka_upgrades.py).
"""

from __future__ import annotations

import json
import re

import pytest

from auditor import kafka_upgrades as upgrades
from auditor.commands.preflight import run_preflight
from auditor.config import AuditConfig
from auditor.engine import open_engine
from auditor.errors import UsageError
from auditor.render.preflight_render import render
from auditor.snapshot.io import Manifest, open_snapshot, write_snapshot
from tests.test_preflight import cli, rotation, snapshot

TARGETS = ("4.0", "4.1", "4.2", "4.3", "4.4")


def _brokers(version, ids=(1, 2, 3)):
    return [{"broker_id": b, "host": f"kafka-{b}.test", "rack": f"az-{b}", "version": version} for b in ids]


@pytest.fixture(scope="module")
def clusters(tmp_path_factory):
    root = tmp_path_factory.mktemp("upgrade")
    zk = snapshot(
        root, "zk-39", rotation(6), cluster={"kafka_version": "3.9.0"}, extra={"brokers": _brokers("3.9.0")}
    )
    old_mv = snapshot(
        root,
        "kraft-39-old-mv",
        rotation(6),
        mode="kraft",
        cluster={"kafka_version": "3.9.0"},
        extra={
            "brokers": _brokers("3.9.0"),
            "features": [
                {"feature": "metadata.version", "finalized_level": 14, "version_name": "3.6-IV2"},
                {"feature": "kraft.version", "finalized_level": 1},
            ],
        },
    )
    per_broker = [
        {
            "entity_type": "broker",
            "entity_name": str(b),
            "key": "min.insync.replicas",
            "value": "2",
            "source": "DYNAMIC_BROKER_CONFIG",
            "is_sensitive": False,
        }
        for b in (1, 2, 3)
    ]
    v40 = snapshot(
        root,
        "kraft-40-broker-min-isr",
        rotation(6),
        mode="kraft",
        cluster={"kafka_version": "4.0.0"},
        configs=per_broker,
        extra={
            "brokers": _brokers("4.0.0"),
            "features": [
                {"feature": "metadata.version", "finalized_level": 25, "version_name": "4.0-IV3"},
                {"feature": "group.version", "finalized_level": 1},
                {"feature": "kraft.version", "finalized_level": 1},
            ],
        },
    )
    msk = snapshot(
        root,
        "msk-36",
        rotation(6),
        cluster={
            "kafka_version": "3.6.0",
            "platform": "msk",
            "az_count": 3,
            "msk_instance_type": "kafka.m5.large",
            "msk": {
                "cluster_arn": "arn:aws:kafka:eu-west-1:123456789012:cluster/pay/5f3a1c2e-1",
                "current_version": "K3AEGXETSR30VB",
                "compatible_versions": ["3.7.x", "3.8.x", "3.9.x"],
                "state": "ACTIVE",
            },
        },
    )
    return {"zk": zk, "old_mv": old_mv, "v40": v40, "msk": msk}


@pytest.fixture(scope="module")
def runs(clusters):
    """run_preflight at every target, all four clusters at once (one engine)."""
    refs = [open_snapshot(d) for d in clusters.values()]
    with open_engine("duckdb") as engine:
        return {t: run_preflight(engine, refs, AuditConfig(), target_version=t) for t in TARGETS}


def _path(pre, name):
    return next(u for u in pre.upgrades if u.cluster == name)


def test_the_table_has_every_4x_line_with_its_upgrade_notes_heading():
    assert upgrades.lines() == TARGETS
    headings = {line: upgrades.release(line)["upgrade_notes"]["as_written"] for line in TARGETS}
    # Kafka's upgrade notes (docs/getting-started/upgrade.md of the 4.4 branch), as written
    assert headings == {
        "4.0": "3.3.x through 3.9.x",
        "4.1": "3.3.x through 4.0.x",
        "4.2": "3.3.x through 4.1.x",
        "4.3": "3.3.x through 4.2.0",
        "4.4": "3.3.x through 4.3.0",
    }
    assert {upgrades.release(t)["minimum_metadata_version"]["name"] for t in TARGETS} == {"3.3-IV3"}
    # latest is the newest released line; 4.4 is read from its release branch and says so
    assert upgrades.resolve_target("latest") == "4.3" and upgrades.release("4.4")["status"] == "unreleased"
    assert "not tagged" in upgrades.release("4.4")["source_note"]
    # what each finalize step turns on (Feature.defaultVersion at the line's latest production MV)
    level = {
        t: {f: v["release_version_level"] for f, v in upgrades.release(t)["features"].items()}
        for t in TARGETS
    }
    assert (
        level["4.0"]["eligible.leader.replicas.version"] == 0
        and level["4.1"]["eligible.leader.replicas.version"] == 1
    )
    assert level["4.1"]["share.version"] == 0 and level["4.2"]["share.version"] == 1
    assert level["4.1"]["streams.version"] == 0 and level["4.2"]["streams.version"] == 1
    assert [upgrades.release(t)["kraft_version_upgradable"] for t in TARGETS] == [
        False,
        True,
        True,
        True,
        True,
    ]
    for t in TARGETS:
        for change in upgrades.release(t)["changes"]:
            assert change["cite"].get("quote") and (change["cite"].get("source") or change["cite"].get("url"))


@pytest.mark.parametrize("text", ["4", "4.1", "4.1.2", " latest ", "LATEST"])
def test_target_spellings_resolve(text):
    assert upgrades.resolve_target(text) in TARGETS


@pytest.mark.parametrize("text", ["5.0", "3.9", "4.5", "banana", "", "4.1.2.3"])
def test_unknown_targets_are_usage_errors(text):
    with pytest.raises(UsageError, match="not a Kafka release this tool knows"):
        upgrades.resolve_target(text)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_zookeeper_3_9_migrates_first(runs, target):
    u = _path(runs[target], "zk-39")
    assert u.status == "not ready"
    assert [h.kind for h in u.hops] == ["migrate", "upgrade"]
    assert [f.rule for f in u.hops[0].reasons] == ["UPG001"]
    assert f"Kafka {target} has no ZooKeeper mode" in u.hops[0].reasons[0].message
    assert u.now[0].startswith("start hop 1: migrate to KRaft on 3.9.x")


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_kraft_3_9_at_an_old_metadata_version_warns_and_stays_ready(runs, target):
    u = _path(runs[target], "kraft-39-old-mv")
    (finalize, hop) = u.hops
    assert (finalize.kind, hop.kind) == ("finalize", "upgrade")
    assert (
        "recommended" in finalize.title
        and "kafka-features.sh --bootstrap-server HOST:PORT upgrade --metadata 3.9" in finalize.steps
    )
    (upg003,) = [f for f in finalize.notes if f.rule == "UPG003"]
    assert upg003.severity == "warning" and {f.rule for f in finalize.notes} <= {"UPG003", "CTL009"}
    assert not finalize.blocking and u.status == "ready"
    assert f"--release-version {target}" in hop.steps[1]


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_kafka_4_0_with_broker_level_min_isr(runs, target):
    u = _path(runs[target], "kraft-40-broker-min-isr")
    if target == "4.0":
        assert [h.kind for h in u.hops] == ["none"] and u.status == "ready"
        return
    (hop,) = u.hops
    blocking = [f.rule for f in hop.blocking]
    assert blocking == ["UPG007"] and u.status == "not ready"
    assert "eligible.leader.replicas.version=1" in hop.steps[1]
    assert any(line.startswith("  UPG007:") for line in u.now)


@pytest.mark.slow
@pytest.mark.parametrize("target", TARGETS)
def test_msk_3_6_gets_aws_path_not_kafka_features(runs, target):
    u = _path(runs[target], "msk-36")
    assert [h.kind for h in u.hops][:2] == ["bridge", "migrate"]
    first = u.hops[0].steps[0]
    assert first == (
        "aws kafka update-cluster-kafka-version --cluster-arn arn:aws:kafka:eu-west-1:123456789012:cluster/pay/"
        "5f3a1c2e-1 --current-version K3AEGXETSR30VB --target-kafka-version 3.9.x"
    )
    assert "3.9.x.kraft" in u.hops[1].steps[1] and [f.rule for f in u.hops[1].blocking] == ["UPG005"]
    last = u.hops[-1]
    offered = upgrades.msk_offers(target)
    if offered:  # 4.0.x.kraft, 4.1.x.kraft (AWS's table)
        assert last.kind == "upgrade" and last.to == offered
    else:
        assert last.kind == "unavailable" and "AWS does not offer" in last.title
    assert not any("kafka-features" in s for h in u.hops for s in h.steps)
    assert any("until 2026-06-01" in n for n in u.notes)  # 3.6.0's end of support (AWS)


@pytest.mark.slow
def test_every_format_prints_the_path_and_json_carries_it(runs):
    pre = runs["4.1"]
    doc = json.loads(render("json", pre))["preflight"]
    assert doc["target_version"] == "4.1" and doc["upgrade_ready"] is False
    up = doc["upgrade"]
    assert up["target_release"] == "4.1.2" and up["upgrades_from"] == "3.3.x through 4.0.x"
    status = {c["cluster"]: c["status"] for c in up["clusters"]}
    assert status == {
        "zk-39": "not ready",
        "kraft-39-old-mv": "ready",
        "kraft-40-broker-min-isr": "not ready",
        "msk-36": "not ready",
    }
    zk = next(c for c in up["clusters"] if c["cluster"] == "zk-39")
    assert zk["hops"][0]["because"][0]["rule"] == "UPG001" and zk["now"]
    text = render("text", pre)
    assert "upgrade path to Kafka 4.1" in text and "  zk-39 (3.9.0, zookeeper) -> 4.1: NOT READY" in text
    assert re.search(r"hop 1 \[BLOCKED\] upgrade to 4\.1", text)  # the 4.0 cluster's UPG007
    md = render("markdown", pre)
    assert "#### Upgrade path to Kafka 4.1" in md and "\u274c **not ready**" in md
    html = render("html", pre)
    assert 'id="upgrade-paths"' in html and 'data-status="not ready"' in html and "UPG007" in html
    assert "upgrade to Kafka 4.1 (4.1.2): NOT ready" in html


@pytest.mark.slow
def test_unreleased_target_says_where_it_was_read(runs):
    u = _path(runs["4.4"], "kraft-39-old-mv")
    assert any("4.4 is not released" in n for n in u.notes)
    assert "release branch" in u.hops[-1].steps[-1]


@pytest.mark.slow
def test_cli_exit_codes_follow_the_upgrade_verdict(clusters, tmp_path):
    # A KRaft 3.9 cluster at an old metadata.version: ready (UPG003 warns), exit 0.
    r = cli("preflight", clusters["old_mv"], "--target-version", "4.1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ready" in r.stdout and "NOT ready" not in r.stdout
    # The 4.0 cluster with per-broker min ISR: ready for 4.0, not for latest (exit 1).
    assert cli("preflight", clusters["v40"], "--target-version", "4.0").returncode == 0
    r = cli("preflight", clusters["v40"], "--target-version", "latest", "-o", tmp_path / "up.md")
    assert r.returncode == 1
    assert "UPG007" in (tmp_path / "up.md").read_text()


def test_help_names_the_rules_it_runs_and_those_that_block():
    """issue 42 item 8: --target-version's help says which rules run and which block, as the
    registry declares them (runs_in "upgrade") and as their severities make them block."""
    from auditor.cli.preflight import TARGET_HELP
    from auditor.registry import rules_run_by

    codes = [r.code for r in rules_run_by("upgrade")]
    ranges = {
        "UPG001-UPG012": [f"UPG{n:03d}" for n in range(1, 13)],
        "CLI002-CLI004": ["CLI002", "CLI003", "CLI004"],
    }
    named = set(re.findall(r"\b[A-Z]{3}\d{3}\b", TARGET_HELP))
    for span, members in ranges.items():
        if span in TARGET_HELP:
            named |= set(members)
    assert set(codes) <= named, set(codes) - named
    blocking_part = TARGET_HELP.split("Blocking")[1].split("Only warn")[0]
    always = [r.code for r in rules_run_by("upgrade") if r.severity in ("error", "critical")]
    for code in always:
        assert code in blocking_part, code
    for line in TARGETS:
        assert line in TARGET_HELP
    assert "latest (4.3" in TARGET_HELP and upgrades.latest() == "4.3"


def test_path_for_versions_below_the_floor_and_already_there():
    floor = upgrades.path(upgrades.Facts("3.2.3", "kraft"), "4.2")
    assert [h.kind for h in floor] == ["floor", "upgrade"]
    assert [h.kind for h in upgrades.path(upgrades.Facts("4.3.1", "kraft"), "4.2")] == ["none"]
    assert [h.kind for h in upgrades.path(upgrades.Facts(None, "kraft"), "4.2")] == ["unknown"]
    zk = upgrades.path(upgrades.Facts("2.0.1", "zookeeper"), "4.0")
    assert [h.kind for h in zk] == ["bridge", "migrate", "upgrade"]
    # a static quorum's finalize from 4.1 upgrades kraft.version: the config swap is a step
    static = upgrades.path(upgrades.Facts("3.9.0", "kraft", 21, kraft_version=0), "4.1")
    assert "kraft.version=1" in static[-1].steps[1]
    assert (
        "kraft.version=1"
        not in upgrades.path(upgrades.Facts("3.9.0", "kraft", 21, kraft_version=0), "4.0")[-1].steps[1]
    )


def test_manifest_without_version_is_unknown_not_ready(tmp_path):
    manifest = Manifest(
        cluster={"id": "x", "name": "x", "metadata_mode": "kraft"}, collected_at="2026-11-22T00:00:00Z"
    )
    snap = write_snapshot(tmp_path / "x", manifest, {"brokers": _brokers(None)}, fmt="jsonl")
    with open_engine("duckdb") as engine:
        pre = run_preflight(engine, [open_snapshot(snap)], AuditConfig(), target_version="4.2")
    (u,) = pre.upgrades
    assert u.status == "unknown" and pre.upgrade_ready is None
    assert "no path can be computed" in u.hops[0].title
