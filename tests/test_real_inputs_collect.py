"""Collecting real, public configuration files (../shared/real-inputs, origins in SOURCES.md).

Files nobody here wrote, read in place: a stock Apache Kafka 3.7.0 ``config/`` directory (what
``--broker-config /etc/kafka/`` meets), KRaft broker/controller/combined files, a deployed
broker with unclean leader election on, a tiered-storage broker with plugin secrets.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from auditor.collectors.files import (
    BROKER,
    CLIENT,
    COMBINED,
    CONTROLLER,
    LOGGING,
    OTHER,
    ZOOKEEPER,
    classify,
    collect_broker_configs,
    parse_properties,
)
from tests.conftest import ROOT, real_input

STOCK_DIR = "properties/apache-kafka-3.7.0-config-dir"


def _kind(relative: str) -> str:
    entries, _ = parse_properties(real_input(relative).read_text(encoding="utf-8", errors="replace"))
    return classify({e.key: e.value for e in entries})


@pytest.mark.parametrize(
    ("relative", "kind"),
    [
        (f"{STOCK_DIR}/server.properties", BROKER),
        (f"{STOCK_DIR}/producer.properties", CLIENT),
        (f"{STOCK_DIR}/consumer.properties", CLIENT),
        (f"{STOCK_DIR}/connect-distributed.properties", CLIENT),
        (f"{STOCK_DIR}/connect-mirror-maker.properties", CLIENT),
        (f"{STOCK_DIR}/connect-file-source.properties", CLIENT),
        (f"{STOCK_DIR}/log4j.properties", LOGGING),
        (f"{STOCK_DIR}/zookeeper.properties", ZOOKEEPER),
        (f"{STOCK_DIR}/trogdor.conf", OTHER),  # JSON, not properties
        ("properties/apache-kafka-3.7.0-kraft-broker.properties", BROKER),
        ("properties/apache-kafka-3.7.0-kraft-controller.properties", CONTROLLER),
        ("properties/apache-kafka-3.7.0-kraft-server.properties", COMBINED),
        ("properties/apache-kafka-0.10.2.1-server.properties", BROKER),
        ("properties/strimzi-kafka38-describe-dump.properties", BROKER),
        ("properties/derived/apache-kafka-3.7.0-server.syntax-variant.properties", BROKER),
    ],
)
def test_files_are_classified_by_their_keys(relative, kind):
    assert _kind(relative) == kind


def test_a_stock_config_directory_is_one_broker_and_notes():
    """`--broker-config /etc/kafka/`: the 3.7.0 config dir holds 14 *.properties files and one
    broker. Before, every file became a broker (15 brokers, 121 CFG002, a permanent AUD001)."""
    r = collect_broker_configs([str(real_input(STOCK_DIR))])
    assert r.errors == []
    assert [b["broker_id"] for b in r.rows("brokers")] == [0]
    assert {c["file"] for c in r.rows("configs")} == {str(real_input(STOCK_DIR) / "server.properties")}
    skipped = {s["target"].rsplit("/", 1)[1]: s["kind"] for s in r.sources if s["status"] == "skipped"}
    assert skipped == {
        "connect-console-sink.properties": CLIENT,
        "connect-console-source.properties": CLIENT,
        "connect-distributed.properties": CLIENT,
        "connect-file-sink.properties": CLIENT,
        "connect-file-source.properties": CLIENT,
        "connect-mirror-maker.properties": CLIENT,
        "connect-standalone.properties": CLIENT,
        "consumer.properties": CLIENT,
        "producer.properties": CLIENT,
        "connect-log4j.properties": LOGGING,
        "log4j.properties": LOGGING,
        "tools-log4j.properties": LOGGING,
        "zookeeper.properties": ZOOKEEPER,
    }
    assert all(
        s["reason"].startswith(s["target"] + ": skipped: ") for s in r.sources if s["status"] == "skipped"
    )


def test_a_controller_only_node_is_never_a_broker():
    r = collect_broker_configs([str(real_input("properties/apache-kafka-3.7.0-kraft-controller.properties"))])
    assert r.errors == [] and r.rows("brokers") == []
    # its settings are a controller's (entity type controller: CFG006), never a broker's
    controller = {(c["entity_type"], c["entity_name"]) for c in r.rows("configs")}
    assert controller == {("controller", "1")}
    assert ("process.roles", "controller") in {(c["key"], c["value"]) for c in r.rows("configs")}
    (source,) = r.sources
    assert source["status"] == "ok" and source["kind"] == CONTROLLER
    assert "process.roles=controller" in source["note"]
    assert [(n["node_id"], n["quorum_voters"]) for n in r.rows("kraft_nodes")] == [(1, "1@localhost:9093")]
    combined = collect_broker_configs(
        [str(real_input("properties/apache-kafka-3.7.0-kraft-server.properties"))]
    )
    assert [b["broker_id"] for b in combined.rows("brokers")] == [1]  # node.id=1, broker and controller


def test_only_client_files_is_a_source_error_not_a_green_audit():
    producer = real_input(f"{STOCK_DIR}/producer.properties")
    r = collect_broker_configs([str(producer)])
    (error,) = r.errors
    assert error["message"] == (
        f"{producer}: no broker configuration among 1 properties file(s) "
        "(client, ZooKeeper, logging or unrecognised files only)"
    )


def _cli(*args, cwd=ROOT):
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def test_collect_and_check_of_a_stock_config_directory(tmp_path):
    """The README's collect example on a real /etc/kafka: one note line per skipped file,
    exit 0, and the single-broker quickstart is judged as one (no REP006 'below 3', no
    CFG002 on client keys, no CFG001 on a producer's compression.type=none)."""
    snap = tmp_path / "snap"
    done = _cli(
        "collect",
        "--broker-config",
        str(real_input(STOCK_DIR)),
        "--cluster-name",
        "quickstart",
        "-o",
        str(snap),
        "--format",
        "jsonl",
    )
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if line.startswith("kafka-audit: note: ")]
    assert len(notes) == 13 and any(
        "producer.properties: skipped: a client configuration" in n for n in notes
    )
    checked = _cli("check", str(snap), "--format", "json")
    assert checked.returncode == 0, checked.stderr
    fired = {
        (f["rule"], f["resource"]["type"], f["resource"]["name"])
        for f in json.loads(checked.stdout)["findings"]
    }
    assert fired == {("DSK005", "broker", "0")}


def test_unclean_election_in_a_broker_file_alone_is_reported_at_its_line():
    """A deployed server.properties (HELK) with unclean.leader.election.enable=true and no
    topic file: REP005 names the file and line 149, not silence."""
    helk = real_input("properties/helk-unclean-election.properties")
    done = _cli("lint", str(helk), "--format", "json")
    findings = json.loads(done.stdout)["findings"]
    rep005 = [f for f in findings if f["rule"] == "REP005"]
    assert [(f["resource"]["name"], f["location"]) for f in rep005] == [
        ("unclean.leader.election.enable", {"file": str(helk), "line": 149})
    ]
    assert not [f for f in findings if f["rule"] == "REP006"]  # one broker: factor 1 is the quickstart's


@pytest.mark.parametrize(
    ("relative", "secrets"),
    [
        # a KIP-405 plugin key Kafka has no type for (it was written in clear before)
        ("properties/tiered-storage-kraft-rsm-prefix.properties", ("minioadmin123",)),
        ("properties/kafka_kerberose-ssl-sasl-acl.properties", ("test1234",)),
        # a backslash-continued, listener- and mechanism-prefixed sasl.jaas.config
        (
            "properties/kc596-sasl-plain-acl-fragment.properties",
            ("admin-secret", "alice-secret", "bob-secret"),
        ),
    ],
)
def test_secrets_never_reach_a_snapshot_or_lint_output(relative, secrets, tmp_path):
    path = real_input(relative)
    snap = tmp_path / "snap"
    done = _cli(
        "collect",
        "--broker-config",
        str(path),
        "--cluster-name",
        "secrets",
        "-o",
        str(snap),
        "--format",
        "jsonl",
    )
    assert done.returncode in (0, 3), done.stderr
    written = "".join(f.read_text() for f in snap.iterdir()) + done.stdout + done.stderr
    linted = _cli("lint", str(path), "--format", "json")
    for secret in secrets:
        assert secret not in written and secret not in linted.stdout + linted.stderr
    configs = snap / "configs.jsonl"  # the kc596 fragment has no broker.id: collect refuses it, lint reads it
    rows = [json.loads(line) for line in configs.read_text().splitlines()] if configs.exists() else []
    masked = {r["key"] for r in rows if r["is_sensitive"]}
    assert all(r["value"] is None for r in rows if r["is_sensitive"])
    kept = {r["key"]: r["value"] for r in rows if not r["is_sensitive"]}
    if "tiered-storage" in relative:
        assert {"rsm.config.storage.aws.secret.access.key", "rsm.config.storage.aws.access.key.id"} <= masked
        assert kept["remote.log.storage.manager.impl.prefix"] == "rsm.config."  # a known STRING key stays
