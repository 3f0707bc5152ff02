"""PAR002-PAR007 and CTL001-CTL006 on the sample fleet: exactly which resources fire where.

The fleet is audited once (DuckDB in-process). Large expected sets (under-replicated
partitions) are recomputed here in plain Python from the snapshot's JSON Lines, an
oracle independent of the DataFrame code.
"""

from __future__ import annotations

import json

import pytest

from auditor.coordinator_partition import coordinator_partition
from tests.conftest import audit_sample, cluster_dir

RULES = (
    "PAR001",
    "PAR002",
    "PAR003",
    "PAR004",
    "PAR005",
    "PAR006",
    "PAR007",
    "CTL001",
    "CTL002",
    "CTL003",
    "CTL004",
    "CTL005",
    "CTL006",
)
MINE = RULES[1:]  # PAR001 is checked here only where incident 3 needs it
CLUSTERS = (
    "payments-msk",
    "logistics-jbod",
    "ads-zk-legacy",
    "search-ingest",
    "inventory-prod",
    "notifications-msk",
    "checkout-prod",
    "sandbox-dev",
)


@pytest.fixture(scope="module")
def audit():
    fired, by_key = audit_sample(RULES)
    assert {c for c, _ in fired} <= set(CLUSTERS)
    return fired, by_key


def _rows(cluster: str, table: str) -> list[dict]:
    path = cluster_dir(cluster) / f"{table}.jsonl"
    return (
        [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    )


def _partitions(cluster, pred):
    return {f"partition:{r['topic']}-{r['partition']}" for r in _rows(cluster, "partitions") if pred(r)}


def _rf(r):
    return len(r["replicas"]) - len(r.get("adding_replicas") or [])


def _per_topic(fired, by_key, cluster, rule) -> dict[str, int]:
    """A rule's findings as partitions per topic: a partition finding counts 1, a topic finding
    (the partitions a root cause explains, grouped: auditor/engine/root_causes.py) counts the
    partitions it reports, whose listed ones must be partitions of that topic."""
    counts: dict[str, int] = {}
    for resource in fired[(cluster, rule)]:
        kind, name = resource.split(":", 1)
        if kind == "partition":
            topic = name.rsplit("-", 1)[0]
            counts[topic] = counts.get(topic, 0) + 1
        else:
            f = by_key[(cluster, rule, name)]
            assert kind == "topic" and f.cause and f.evidence["affected_partitions"] >= 2
            assert f.evidence["example_partition"].rsplit("-", 1)[0] == name
            counts[name] = counts.get(name, 0) + f.evidence["affected_partitions"]
    return counts


def _topics_of(partitions: set[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for p in partitions:
        topic = p.split(":", 1)[1].rsplit("-", 1)[0]
        counts[topic] = counts.get(topic, 0) + 1
    return counts


# ---- incident 3: ZooKeeper controller split-brain ----------------------------------------


def test_incident3_fires_the_split_brain_rules(audit):
    fired, _ = audit
    c = "ads-zk-legacy"
    assert fired[(c, "PAR001")] == {"partition:__consumer_offsets-17"}
    assert fired[(c, "PAR002")] == {"partition:__consumer_offsets-17"}
    assert fired[(c, "PAR003")] == {"partition:__consumer_offsets-17"}
    assert fired[(c, "CTL002")] == {"partition:ads.impressions-4"}
    assert fired[(c, "CTL003")] == {"partition:ads.impressions-4"}
    assert fired[(c, "CTL004")] == {"partition:ads.impressions-4"}
    # broker 5 is down: it is the preferred leader of partitions it no longer leads
    assert fired[(c, "PAR007")] == {"broker:5"}
    for rule in ("PAR006", "CTL001", "CTL005", "CTL006"):
        assert not fired[(c, rule)], rule


def test_incident3_zookeeper_is_the_stale_view_and_no_failover_comes_first(audit):
    """Issue 42's named case: ZooKeeper holds leader 5 (not registered), ISR [5], written at
    controller epoch 42 while /controller_epoch is 41; the brokers serve leader 4, ISR [1, 4]. The
    znode was not written by the current controller, so ZooKeeper is the stale view (its higher
    leader epoch does not make the brokers stale). A controller failover would load ISR [5], find
    no live member and, unclean election off, take the partition offline: CTL002, CTL003 and CTL004
    each say so, and none recommends a failover before the znode holds what the brokers serve."""
    _, by_key = audit
    finding = by_key[("ads-zk-legacy", "CTL002", "ads.impressions-4")]
    assert finding.severity == "critical"
    e = finding.evidence
    assert (e["stale_view"], e["stale_by"], e["zookeeper_controller_epoch"], e["controller_epoch"]) == (
        "zookeeper",
        "controller_epoch",
        42,
        41,
    )
    assert e["zookeeper_isr_registered"] == [] and e["failover"] == "offline"
    m = finding.message
    assert "ZooKeeper's state is the stale view" in m and "the brokers serve a stale leader" not in m
    assert "Do not fail the controller over first" in m and "takes the partition offline" in m
    # The safe order: the znode first (the served leader 4 and ISR [1,4], current controller epoch 41),
    # the failover only after it.
    write = m.index(
        'set /brokers/topics/ads.impressions/partitions/4/state \'{"controller_epoch":41,"leader":4,'
    )
    assert '"isr":[1,4]}' in m and write < m.index("2. then fail the controller over")
    for rule in ("CTL003", "CTL004"):
        f = by_key[("ads-zk-legacy", rule, "ads.impressions-4")]
        assert f.evidence["failover"] == "offline" and "takes the partition offline" in f.message, rule
        assert "first (CTL002)" in f.message, rule


def test_incident3_lists_the_groups_that_lost_their_coordinator(audit):
    _, by_key = audit
    finding = by_key[("ads-zk-legacy", "PAR002", "__consumer_offsets-17")]
    groups = sorted(
        g["group_id"] for g in _rows("ads-zk-legacy", "consumer_groups") if g["coordinator_partition"] == 17
    )
    assert len(groups) >= 3
    assert all(coordinator_partition(g, 50) == 17 for g in groups)
    assert finding.evidence["consumer_groups"] == groups
    assert finding.evidence["consumer_group_count"] == len(groups)
    for g in groups:
        assert g in finding.message
    assert "click-attribution" not in finding.message  # a group coordinated elsewhere
    assert finding.severity == "critical"


def test_incident3_epoch_anomaly_names_the_missing_fencing(audit):
    _, by_key = audit
    finding = by_key[("ads-zk-legacy", "CTL004", "ads.impressions-4")]
    assert finding.evidence["state_controller_epoch"] == 42
    assert finding.evidence["controller_epoch"] == 41
    assert finding.evidence["versions_without_fencing"] == ["2.0.1"]
    assert "KAFKA-6082" in finding.message


def test_incident3_under_replication_matches_the_snapshot(audit):
    fired, by_key = audit
    c = "ads-zk-legacy"  # broker 5 is down: out of every ISR; min.insync.replicas=2 in server.properties
    # Broker 5 explains them: one finding per topic under its cause, the partitions counted.
    under = _partitions(c, lambda r: len(r["isr"]) < _rf(r))
    assert _per_topic(fired, by_key, c, "PAR005") == _topics_of(under)
    assert _per_topic(fired, by_key, c, "PAR004") == _topics_of(
        _partitions(c, lambda r: len(r["isr"]) == 2 < _rf(r))
    )
    assert len(under) > 50 and len(fired[(c, "PAR005")]) < 10


# ---- incident 2: failed JBOD disk -------------------------------------------------------


def test_incident2_failed_disk_shows_offline_and_under_replicated_partitions(audit):
    fired, by_key = audit
    c = "logistics-jbod"
    offline = _partitions(c, lambda r: bool(r.get("offline_replicas")))
    assert offline
    # The failed disk explains them: one finding per topic under its cause (a topic with one
    # such partition keeps the partition's finding), the partitions counted.
    assert _per_topic(fired, by_key, c, "PAR006") == _topics_of(offline)
    # broker 4 is registered: its replicas are offline because of the disk, not the broker
    for (cluster, rule, _), f in by_key.items():
        if (cluster, rule) == (c, "PAR006"):
            own = f.evidence.get("example", f.evidence)
            assert "offline (failed log dir on a live broker)" in f.message and own["brokers_down"] == []
    assert _partitions(c, lambda r: len(r["isr"]) < _rf(r)) == offline
    assert _per_topic(fired, by_key, c, "PAR005") == _topics_of(offline)
    assert _per_topic(fired, by_key, c, "PAR004") == _topics_of(
        offline
    )  # ISR 2 == min.insync.replicas 2 < RF 3
    assert fired[(c, "PAR007")] == {"broker:4"}  # leadership moved off the broker with the failed disk
    assert by_key[(c, "PAR007", "4")].evidence["not_led_by_preferred"] > 0
    for rule in ("PAR002", "PAR003", "CTL001", "CTL002", "CTL003", "CTL004", "CTL005", "CTL006"):
        assert not fired[(c, rule)], rule


# ---- everything else stays quiet --------------------------------------------------------


@pytest.mark.parametrize("cluster", ["notifications-msk", "payments-msk", "search-ingest"])
def test_other_clusters_fire_none_of_these_rules(audit, cluster):
    fired, _ = audit
    assert {rule: fired[(cluster, rule)] for rule in RULES if fired[(cluster, rule)]} == {}


def test_inventory_prod_recovering_from_a_restart_is_only_told_about_leadership(audit):
    """Healthy, with a recovery in progress: broker 4 restarted minutes ago, its replicas are back
    in every ISR and the controller has not moved leadership back yet. PAR007 says so at info
    (Kafka's default auto.leader.rebalance.enable heals it); nothing else of these rules fires."""
    fired, by_key = audit
    c = "inventory-prod"
    assert {rule: fired[(c, rule)] for rule in RULES if fired[(c, rule)]} == {"PAR007": {"broker:4"}}
    par007 = by_key[(c, "PAR007", "4")]
    assert par007.severity == "info" and par007.evidence["not_led_by_preferred"] == 26


def test_only_the_incident_clusters_fire(audit):
    fired, _ = audit
    assert {
        c
        for (c, rule), hits in fired.items()
        if hits and rule in MINE and (c, rule) != ("inventory-prod", "PAR007")
    } == {
        "ads-zk-legacy",
        "logistics-jbod",
        "sandbox-dev",  # CTL006: its quorum is one controller (a dev cluster, the planned outage of issue 42)
    }
    assert {rule for (c, rule), hits in fired.items() if hits and c == "sandbox-dev"} == {"CTL006"}


def test_par006_says_when_an_offline_replica_is_on_a_down_broker(tmp_path):
    from auditor.config import AuditConfig
    from auditor.engine import open_engine
    from auditor.engine.runner import run_audit
    from tests.rulecases import load_cases, write_cases

    case = next(c for c in load_cases() if (c.rule, c.name) == ("PAR006", "replica-on-a-down-broker-fires"))
    with open_engine("duckdb") as engine:
        result = run_audit(engine, write_cases([case], tmp_path), AuditConfig(select=("PAR006",)))
    [f] = result.findings
    assert f.message.startswith("replica(s) [4] offline (their broker is not registered: down);")
    assert f.evidence["brokers_down"] == [4]
