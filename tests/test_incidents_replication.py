"""REP004-REP010 and CFG001-CFG004 on the sample fleet: exactly which resources fire where.

The fleet is audited once (DuckDB in-process, only these rules). Expected sets that depend
on the generated assignments (replicas on the unregistered broker, replicas sharing a
rack) are recomputed here in plain Python from the snapshot's JSON Lines, an oracle
independent of the DataFrame code.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import audit_sample, cluster_dir

RULES = (
    "REP004",
    "REP005",
    "REP006",
    "REP007",
    "REP008",
    "REP009",
    "REP010",
    "CFG001",
    "CFG002",
    "CFG003",
    "CFG004",
)
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
HEALTHY = ("inventory-prod", "notifications-msk")


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


# ---- REP008: incident 3, broker 5 is down and no longer registered -----------------------


def _on_unregistered(cluster):
    """{unregistered broker id: the partitions holding a replica on it} (plain Python)."""
    registered = {b["broker_id"] for b in _rows(cluster, "brokers")}
    out: dict[int, set[str]] = {}
    for r in _rows(cluster, "partitions"):
        for broker in set(r["replicas"]) - registered:
            out.setdefault(broker, set()).add(f"{r['topic']}-{r['partition']}")
    return out


def test_rep008_is_one_finding_for_broker_5_counting_its_partitions(audit):
    fired, by_key = audit
    expected = _on_unregistered("ads-zk-legacy")
    assert set(expected) == {5} and len(expected[5]) == 70, "the sample assigns 70 replicas to broker 5"
    assert fired[("ads-zk-legacy", "REP008")] == {"broker:5"}
    f = by_key[("ads-zk-legacy", "REP008", "5")]
    assert f.evidence["broker_id"] == 5 and f.evidence["affected_partitions"] == 70
    assert f.evidence["topics"] == len({p.rsplit("-", 1)[0] for p in expected[5]})
    # The first 20 (a parameter) by topic and partition number, each one of broker 5's.
    listed = f.evidence["partitions"]
    assert len(listed) == 20 and set(listed) <= expected[5] and listed == sorted(listed)
    assert "broker 5 is not registered" in f.message and "70 partition(s)" in f.message
    assert f.severity == "error"


def test_rep008_fires_nowhere_else(audit):
    fired, _ = audit
    assert {c for (c, r), v in fired.items() if r == "REP008" and v} == {"ads-zk-legacy"}


# ---- REP007: ads-zk-legacy assigns over 5 brokers in 3 racks without rack awareness ------


def _sharing_rack(cluster):
    """Topics with a partition whose replicas span fewer racks than min(RF, racks); a replica
    on a broker without a known rack counts as a rack of its own (the rule's reading)."""
    rack = {b["broker_id"]: b.get("rack") for b in _rows(cluster, "brokers")}
    racks = {r for r in rack.values() if r}
    if len(racks) < 2:
        return set()
    out = set()
    for p in _rows(cluster, "partitions"):
        known = {rack[b] for b in p["replicas"] if rack.get(b)}
        unknown = sum(1 for b in p["replicas"] if not rack.get(b))
        if len(known) + unknown < min(len(p["replicas"]), len(racks)):
            out.add(f"topic:{p['topic']}")
    return out


def test_rep007_on_the_rack_unaware_legacy_cluster(audit):
    fired, by_key = audit
    expected = _sharing_rack("ads-zk-legacy")
    # [4, 5, 1]: brokers 4 and 1 are both in rack r1 (broker 5's rack is unknown: not registered)
    assert "topic:__consumer_offsets" in expected
    assert fired[("ads-zk-legacy", "REP007")] == expected
    f = by_key[("ads-zk-legacy", "REP007", "__consumer_offsets")]
    assert f.evidence["racks_in_cluster"] == 3 and f.evidence["affected_partitions"] == 10
    assert f.evidence["partitions"] == sorted(f.evidence["partitions"])
    assert {c for (c, r), v in fired.items() if r == "REP007" and v} == {"ads-zk-legacy"}
    for cluster in CLUSTERS:
        assert fired[(cluster, "REP007")] == _sharing_rack(cluster)


# ---- the rest: the sample fleet is durable by these measures -----------------------------


@pytest.mark.parametrize("rule", ["REP004", "REP005", "REP006", "REP009", "REP010"])
def test_replication_rules_find_nothing_on_the_sample_fleet(audit, rule):
    """Every sample cluster uses RF 3 over >= 3 AZs, min.insync.replicas >= 2, unclean
    election off (explicitly on both MSK clusters) and default internal-topic settings."""
    fired, _ = audit
    assert {c for (c, r), v in fired.items() if r == rule and v} == set()


@pytest.mark.parametrize("rule", ["CFG001", "CFG002", "CFG003", "CFG004"])
def test_config_hygiene_rules_find_nothing_on_the_sample_fleet(audit, rule):
    """Every key the sample sets is a known Kafka key with a well-formed value, brokers of a
    cluster share one server.properties, and all set default.replication.factor=3 and
    min.insync.replicas >= 2."""
    fired, _ = audit
    assert {c for (c, r), v in fired.items() if r == rule and v} == set()


def test_healthy_clusters_fire_none_of_these_rules(audit):
    fired, _ = audit
    assert not {k: v for k, v in fired.items() if k[0] in HEALTHY and v}


def test_incident1_payments_is_not_blamed_on_these_rules(audit):
    """payments-msk's problem is min.insync.replicas == RF (REP002), not a low minimum:
    REP004 stays quiet, and unclean election is explicitly off, so REP005 does not read
    MSK's default configuration as true."""
    fired, _ = audit
    assert not fired[("payments-msk", "REP004")]
    assert not fired[("payments-msk", "REP005")]
