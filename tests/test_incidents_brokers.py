"""The broker-level rules (THR001-THR006, DSK, CLI001, MSK) on the sample fleet: exactly the
resources each incident cluster should be flagged for, and nothing on the healthy clusters
or on search-ingest after its fix. DuckDB in-process; the fleet is audited once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.snapshot.io import discover
from tests.conftest import audit_sample

ROOT = Path(__file__).resolve().parent.parent / "sample_configs"
THR = tuple(f"THR00{i}" for i in range(1, 7))
DSK = tuple(f"DSK00{i}" for i in range(1, 7))
MSK = ("MSK001", "MSK002", "MSK003")
RULES = (*THR, *DSK, "CLI001", *MSK)
BROKERS_1_TO_6 = {f"broker:{i}" for i in range(1, 7)}


@pytest.fixture(scope="module")
def fired():
    """{cluster name: {rule: {"type:name", ...}}} over the fleet and the fixed variant."""
    roots = (ROOT / "fleet", ROOT / "variants")
    found, _ = audit_sample(RULES, roots)
    out: dict[str, dict[str, set[str]]] = {
        json.loads((d / "manifest.json").read_text())["cluster"]["name"]: {}
        for r in roots
        for d in discover(r)
    }
    for (cluster, rule), resources in found.items():
        out[cluster][rule] = resources
    return out


def test_the_fleet_and_variant_are_all_there(fired):
    assert set(fired) == {
        "payments-msk",
        "logistics-jbod",
        "ads-zk-legacy",
        "search-ingest",
        "inventory-prod",
        "notifications-msk",
        "checkout-prod",
        "sandbox-dev",
        "search-ingest-fixed",
    }


def test_incident_4_search_ingest(fired):
    """6/16 threads and a 500 queue on 48 cores with ~3900 connections per broker: every broker."""
    assert fired["search-ingest"] == {
        code: BROKERS_1_TO_6 for code in ("THR001", "THR002", "THR003", "THR004", "THR006")
    }


def test_incident_4_fixed_fires_no_thread_rule(fired):
    """12/32 threads and a 1000 queue: RULES.md says none of THR001-THR006 fire."""
    assert fired["search-ingest-fixed"] == {}


def test_incident_2_logistics_jbod(fired):
    """Broker 4's /data/kafka-3 failed; every JBOD broker serves sarama 1.27.0: one DSK002
    finding for the cluster, naming the six brokers (it was one per broker)."""
    assert fired["logistics-jbod"] == {
        "DSK001": {"log_dir:4:/data/kafka-3"},
        "DSK002": {"cluster:logistics-jbod"},
        "CLI001": {"client:sarama 1.27.0"},
    }


def test_incident_3_ads_zk_legacy_old_java_client(fired):
    """The 2.0.1 Java clients cannot talk to Kafka 4.0 (KIP-896); sarama 1.45.0 is fine.
    Single log dirs are acceptable there (RF 3 everywhere, three racks): no DSK005."""
    assert fired["ads-zk-legacy"] == {"CLI001": {"client:apache-kafka-java 2.0.1"}}


def test_incident_1_payments_msk_is_not_a_broker_problem(fired):
    """m5.large with 116 partition replicas per broker and 38% CPU: within every MSK limit."""
    assert fired["payments-msk"] == {}


@pytest.mark.parametrize("cluster", ["inventory-prod", "notifications-msk", "checkout-prod"])
def test_healthy_clusters_fire_none(fired, cluster):
    """Healthy clusters have single log dirs too, but DSK005 stays quiet when every topic has
    RF >= 3 and the brokers span several racks (RULES.md: acceptable then)."""
    assert fired[cluster] == {}
