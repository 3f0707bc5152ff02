"""The generated table of Kafka's config keys (auditor/data/kafka_configs.json) and its loader.

The facts asserted here were checked against Kafka's sources at the release tags (see
tools/extract_kafka_configs.py for how the table is generated)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from auditor import kafka_configs as kc
from checks import _kafka_keys


def test_releases_read():
    versions = kc.versions()
    assert versions[0] == "0.10.0.0"
    for v in ("0.10.2.1", "0.11.0.0", "1.1.0", "2.8.2", "3.7.0", "3.8.0", "3.9.0", "4.0.0", "4.1.0"):
        assert v in versions
    assert all("rc" not in v and "-" not in v for v in versions)
    assert versions == sorted(versions, key=kc.parse_version)


@pytest.mark.parametrize(
    "scope,key,version,expected",
    [
        # 3.8 (ServerConfigs.MAX_REQUEST_PARTITION_SIZE_LIMIT_CONFIG)
        ("broker", "max.request.partition.size.limit", "3.7.1", False),
        ("broker", "max.request.partition.size.limit", "3.8.0", True),
        ("broker", "max.request.partition.size.limit", "4.1.0", True),
        # 3.9 (ReplicationConfigs, defineInternal)
        ("broker", "unclean.leader.election.interval.ms", "3.8.1", False),
        ("broker", "unclean.leader.election.interval.ms", "3.9.0", True),
        # removed by 4.0 (ZooKeeper, message format v0/v1)
        ("broker", "zookeeper.connect", "3.9.0", True),
        ("broker", "zookeeper.connect", "4.0.0", False),
        ("broker", "log.message.format.version", "4.0.0", False),
        ("broker", "delegation.token.master.key", "3.9.0", True),
        ("broker", "delegation.token.master.key", "4.0.0", False),
        ("topic", "message.format.version", "3.9.2", True),
        ("topic", "message.format.version", "4.0.0", False),
        # removed by 3.0 with the other deprecated pre-listeners keys
        ("broker", "host.name", "2.8.2", True),
        ("broker", "port", "3.0.0", False),
        # introduced
        ("topic", "message.timestamp.after.max.ms", "3.5.2", False),
        ("topic", "message.timestamp.after.max.ms", "3.6.0", True),
        ("topic", "remote.log.copy.disable", "3.9.0", True),
        ("broker", "sasl.jaas.config", "1.0.2", False),
        ("broker", "sasl.jaas.config", "1.1.0", True),
        # dynamic-only broker keys (DynamicConfig.Broker)
        ("broker", "leader.replication.throttled.rate", "0.10.0.1", False),
        ("broker", "leader.replication.throttled.rate", "0.10.1.0", True),
        ("broker", "replica.alter.log.dirs.io.max.bytes.per.second", "1.1.0", True),
        # backported to patch releases only: 2.8.2, 3.0.2, 3.1.2, 3.2.2 and later (ranges)
        ("broker", "sasl.server.max.receive.size", "2.8.2", True),
        ("broker", "sasl.server.max.receive.size", "3.0.1", False),
        ("broker", "sasl.server.max.receive.size", "3.0.2", True),
        ("broker", "sasl.server.max.receive.size", "3.2.3", True),
        # a topic key is not a broker key and vice versa
        ("topic", "log.retention.ms", None, False),
        ("broker", "retention.ms", None, False),
    ],
)
def test_known_by_release(scope, key, version, expected):
    assert kc.known(scope, key, version) is expected


def test_key_facts():
    info = kc.key_info("broker", "max.request.partition.size.limit")
    assert (info["type"], info["default"], info["since"], info["removed"]) == ("int", 2000, "3.8.0", None)
    info = kc.key_info("broker", "unclean.leader.election.interval.ms")
    assert (info["type"], info["default"], info["since"], info["internal"]) == ("long", 300000, "3.9.0", True)
    info = kc.key_info("broker", "zookeeper.connect")
    assert (info["since"], info["removed"]) == ("0.10.0.0", "4.0.0")
    assert kc.key_info("broker", "log.message.format.version")["removed"] == "4.0.0"
    assert kc.key_info("broker", "leader.replication.throttled.rate")["dynamic_only"] is True
    assert kc.key_info("broker", "sasl.server.max.receive.size")["ranges"][:2] == [
        ["2.8.2", "3.0.0"],
        ["3.0.2", "3.1.0"],
    ]
    assert kc.key_info("broker", "num.io.thread") is None


@pytest.mark.parametrize(
    "scope,key,typ",
    [
        ("broker", "ssl.keystore.password", "password"),
        ("broker", "ssl.key.password", "password"),
        ("broker", "sasl.jaas.config", "password"),
        ("broker", "zookeeper.ssl.keystore.password", "password"),
        ("broker", "delegation.token.secret.key", "password"),
        ("broker", "num.io.threads", "int"),
        ("broker", "offsets.topic.replication.factor", "short"),
        ("broker", "log.retention.bytes", "long"),
        ("broker", "log.cleaner.min.cleanable.ratio", "double"),
        ("broker", "auto.create.topics.enable", "boolean"),
        ("broker", "log.cleanup.policy", "list"),
        ("broker", "create.topic.policy.class.name", "class"),
        ("broker", "inter.broker.listener.name", "string"),
        ("topic", "retention.ms", "long"),
        ("topic", "min.cleanable.dirty.ratio", "double"),
        ("topic", "cleanup.policy", "list"),
        ("topic", "no.such.key", None),
    ],
)
def test_types(scope, key, typ):
    assert kc.config_type(scope, key) == typ


def test_defaults():
    assert kc.key_info("broker", "num.io.threads")["default"] == 8
    assert kc.key_info("broker", "log.retention.hours")["default"] == 168
    assert kc.key_info("broker", "message.max.bytes")["default"] == 1048588
    assert kc.key_info("broker", "compression.type")["default"] == "producer"
    assert kc.key_info("topic", "retention.ms")["default"] == 604800000
    assert kc.key_info("topic", "cleanup.policy")["default"] == "delete"
    assert kc.key_info("topic", "unclean.leader.election.enable")["default"] is False


def test_counts_per_release():
    data = kc._data()
    counts = data["counts"]
    # documented keys + internal + dynamic-only; Kafka's own 3.7 docs list 285 broker keys
    assert 290 <= counts["3.7.0"]["broker"] <= 320
    assert counts["0.10.0.0"]["broker"] >= 130
    assert counts["4.0.0"]["broker"] < counts["3.9.0"]["broker"]  # ZooKeeper keys removed
    assert counts["3.9.0"]["topic"] == 36 and counts["4.0.0"]["topic"] == 33
    for scope in kc.SCOPES:
        for key in kc.keys(scope):
            assert any(kc.known(scope, key, v) for v in kc.versions()), key


@pytest.mark.parametrize(
    "text,parsed",
    [
        ("3.7.0", (3, 7, 0)),
        ("3.7", (3, 7)),
        ("2.8.2", (2, 8, 2)),
        ("0.10.2.1", (0, 10, 2, 1)),
        ("3.6.0.1", (3, 6, 0, 1)),
        ("3.7.x.kraft", (3, 7)),
        ("v2.8.0", (2, 8, 0)),
        ("3.7-IV1", (3, 7)),
        ("7.6.0-ccs", (7, 6, 0)),
        (" 4.0.0 ", (4, 0, 0)),
        ("dev", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_version(text, parsed):
    assert kc.parse_version(text) == parsed


def test_compare_versions():
    assert kc.compare_versions("3.7", "3.7.0") == 0
    assert kc.compare_versions("3.7.x.kraft", "3.7.0") == 0
    assert kc.compare_versions("0.10.2.1", "0.10.2.0") == 1
    assert kc.compare_versions("3.6.0.1", "3.6.0") == 1
    assert kc.compare_versions("3.6.0.1", "3.6.1") == -1
    assert kc.compare_versions("2.8.2", "3.0.0") == -1
    with pytest.raises(ValueError):
        kc.compare_versions("dev", "3.0.0")


def test_known_with_odd_versions():
    key = "max.request.partition.size.limit"
    assert kc.known("broker", key, "3.8") is True
    assert kc.known("broker", key, "3.7.x.kraft") is False  # MSK
    assert kc.known("broker", key, "3.6.0.1") is False  # MSK
    assert kc.known("broker", key, "dev") is True  # not a version: any release
    assert kc.known("broker", key, "0.9.0.1") is True  # older than the table: not judged
    assert kc.known("broker", key, "9.0.0") is True  # newer than the table: as the newest release
    assert kc.known("broker", "zookeeper.connect", "9.0.0") is False
    with pytest.raises(ValueError):
        kc.known("cluster", key)


def test_loader_imports_no_engine():
    code = (
        "import sys, auditor.kafka_configs as k; k.config_type('broker', 'ssl.key.password'); "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'sqlframe', 'duckdb', 'checks')]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_rule_table_uses_the_generated_data():
    assert _kafka_keys.BROKER_KEYS["max.request.partition.size.limit"] == "int"
    assert _kafka_keys.BROKER_KEYS["ssl.keystore.password"] == "password"
    assert set(kc.keys("broker")) <= set(_kafka_keys.BROKER_KEYS)
    assert set(_kafka_keys.BROKER_KEYS) - set(kc.keys("broker")) == set(_kafka_keys.EXTRA_BROKER_KEYS)
    assert _kafka_keys.TOPIC_KEYS == {k: v["type"] for k, v in kc.keys("topic").items()}
    for key in _kafka_keys.CHOICES:
        assert key in _kafka_keys.BROKER_KEYS or key in _kafka_keys.TOPIC_KEYS, key
    rows = _kafka_keys.range_rows()
    zk = [r for r in rows if r["key"] == "zookeeper.connect"]
    assert zk == [
        {
            "scope": "broker",
            "key": "zookeeper.connect",
            "since": "0.10.0.0",
            "removed": "4.0.0",
            "since_v": 10000,
            "removed_v": 4000000,
            "since_s": "000000010000 0.10.0.0",
            "removed_s": "000004000000 4.0.0",
        }
    ]
    assert len([r for r in rows if r["key"] == "sasl.server.max.receive.size"]) == 4
