"""Kafka 4.0 readiness from the brokers' request metrics by API version (issue 18, CLI004).

The shipped table of 4.0 minimum versions (auditor/data/kafka4_api_versions.json) and the tool
that derives it from Kafka's message definitions; the metrics collector on scrapes in the
exporters' real naming; and `kafka-audit preflight --target-version 4.0` on the snapshot
collected from them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from auditor.collectors.metrics import collect_metrics, parse_metrics
from auditor.snapshot.io import Manifest, write_snapshot
from tests.conftest import ROOT, real_input

sys.path.insert(0, str(ROOT / "tools"))
import extract_kafka_api_versions as tool  # noqa: E402


def cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *map(str, args)], capture_output=True, text=True, cwd=ROOT
    )


def _apis() -> dict[str, dict]:
    from checks.clients import kafka4_api_versions

    return {a["request"]: a for a in kafka4_api_versions()["apis"]}


# -- the shipped table -----------------------------------------------------------------------------


def test_table_spot_values_agree_with_kip896_and_the_40_protocol_guide():
    apis = _apis()
    # KIP-896 (as amended for 4.0.0, KAFKA-18659) and kafka.apache.org/40/protocol.html, whose first
    # Produce request is version 3.
    expected = {
        "Produce": (0, 3, [0, 2]),
        "Fetch": (1, 4, [0, 3]),
        "ListOffsets": (2, 1, [0, 0]),
        "Metadata": (3, 0, None),
        "OffsetCommit": (8, 2, [0, 1]),
        "OffsetFetch": (9, 1, [0, 0]),
        "JoinGroup": (11, 2, [0, 1]),
        "ApiVersions": (18, 0, None),
    }
    for name, (key, low, removed) in expected.items():
        assert (apis[name]["api_key"], apis[name]["min_version"], apis[name]["removed_versions"]) == (
            key,
            low,
            removed,
        )
    # 3.9 deprecated Produce v0-v6, 4.0 kept v3-v6: the table keeps both facts apart
    assert apis["Produce"]["deprecated_versions_3_9"] == [0, 6]
    assert apis["Fetch"]["request_tags"] == ["Fetch", "FetchConsumer", "FetchFollower"]
    assert apis["LeaderAndIsr"]["min_version"] is None and apis["LeaderAndIsr"]["removed_versions"] == [0, 7]


def test_table_structure_cites_its_source_for_every_api():
    from checks.clients import kafka4_api_versions

    table = kafka4_api_versions()
    assert table["target"] == "4.0" and set(table["releases"]) == {"3.9.0", "4.0.0"}
    commits = {r["commit"] for r in table["releases"].values()}
    keys = [a["api_key"] for a in table["apis"]]
    assert keys == sorted(set(keys)) and len(keys) > 80
    for a in table["apis"]:
        assert a["source"]["commit"] in commits and a["source"]["path"].endswith(
            a["request"] + "Request.json"
        )
        assert a["request_tags"][0] == a["request"]
        if a["min_version"] is not None:
            assert 0 <= a["min_version"] <= a["max_version"]
        if a["removed_versions"] is not None and a["min_version"] is not None:
            assert a["removed_versions"][1] == a["min_version"] - 1
    # the file is the tool's rendering (indentation and key order included)
    path = ROOT / "auditor" / "data" / "kafka4_api_versions.json"
    assert tool.render(json.loads(path.read_text())) == path.read_text()


def _commit(repo: Path, files: dict[str, str]) -> str:
    message_dir = repo / tool.MESSAGE_DIR
    message_dir.mkdir(parents=True, exist_ok=True)
    for old in message_dir.glob("*.json"):
        old.unlink()
    for name, body in files.items():
        (message_dir / name).write_text(body)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "-A"], check=True, capture_output=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True, capture_output=True)
    return subprocess.run(
        [*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()


def test_tool_derives_minimums_removals_and_deprecations_from_message_definitions(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    # message definitions in Kafka's format (// comments, "none" for a removed request)
    v39 = _commit(
        tmp_path,
        {
            "ProduceRequest.json": '// header\n{ "apiKey": 0, "type": "request", "listeners": ["broker"],\n'
            '  "name": "ProduceRequest", // the name\n  "validVersions": "0-11",\n'
            '  "deprecatedVersions": "0-6", "about": "see http://x//y" }',
            "StopReplicaRequest.json": '{ "apiKey": 5, "type": "request", "listeners": ["zkBroker"],'
            ' "name": "StopReplicaRequest", "validVersions": "0-4" }',
            "ProduceResponse.json": '{ "apiKey": 0, "type": "response", "name": "ProduceResponse", "validVersions": "0-11" }',
        },
    )
    v40 = _commit(
        tmp_path,
        {
            "ProduceRequest.json": '{ "apiKey": 0, "type": "request", "listeners": ["broker"],'
            ' "name": "ProduceRequest", "validVersions": "3-12" }',
            "StopReplicaRequest.json": '{ "apiKey": 5, "type": "request", "name": "StopReplicaRequest",'
            ' // removed\n "validVersions": "none" }',
        },
    )
    out = tool.extract(str(tmp_path), {"3.9.0": v39, "4.0.0": v40})
    produce, stop = out["apis"]
    assert (produce["request"], produce["min_version"], produce["max_version"]) == ("Produce", 3, 12)
    assert produce["removed_versions"] == [0, 2] and produce["deprecated_versions_3_9"] == [0, 6]
    assert produce["source"] == {"path": tool.MESSAGE_DIR + "/ProduceRequest.json", "commit": v40}
    assert (stop["request"], stop["min_version"], stop["removed_versions"]) == ("StopReplica", None, [0, 4])


# -- the collector -----------------------------------------------------------------------------------

# jmx_exporter default naming (what MSK open monitoring serves): HELP/TYPE lines and the trailing ",}"
# as jmx_prometheus_httpserver writes them; a 3.9 broker with old Produce/Fetch clients.
_HELP = "# HELP kafka_network_RequestMetrics_{a} Attribute exposed for management (kafka.network<type=RequestMetrics, name={n}, request=Produce, version=2><>{a})\n# TYPE kafka_network_RequestMetrics_{a} untyped\n"  # noqa: E501
OLD_CLIENTS_SCRAPE = (
    _HELP.format(a="OneMinuteRate", n="RequestsPerSec")
    + 'kafka_network_RequestMetrics_OneMinuteRate{name="RequestsPerSec",request="Produce",version="2",} 1.5\n'
    'kafka_network_RequestMetrics_OneMinuteRate{name="RequestsPerSec",request="Produce",version="9",} 40.25\n'
    'kafka_network_RequestMetrics_OneMinuteRate{name="RequestsPerSec",request="FetchConsumer",version="3",} 0.5\n'
    'kafka_network_RequestMetrics_OneMinuteRate{name="RequestsPerSec",request="Fetch",version="3",} 0.5\n'
    'kafka_network_RequestMetrics_OneMinuteRate{name="RequestsPerSec",request="Fetch",version="12",} 80.0\n'
    'kafka_network_RequestMetrics_OneMinuteRate{name="ErrorsPerSec",request="Produce",error="NONE",} 41.75\n'
    'kafka_network_RequestMetrics_OneMinuteRate{name="DeprecatedRequestsPerSec",request="Produce",version="2",'
    'clientSoftwareName="sarama",clientSoftwareVersion="1.27.0",} 1.5\n'
    'kafka_network_RequestMetrics_OneMinuteRate{name="DeprecatedRequestsPerSec",request="Produce",version="5",'
    'clientSoftwareName="librdkafka",clientSoftwareVersion="1.9.2",} 3.0\n'
    + _HELP.format(a="Count", n="RequestsPerSec")
    + 'kafka_network_RequestMetrics_Count{name="RequestsPerSec",request="Produce",version="2",} 5400.0\n'
)
# Only versions Kafka 4.0 accepts, in Confluent's kafka_broker.yml naming (Count, version label kept) and
# jmx_exporter's kafka-2_0_0.yml / Strimzi PerSec naming (a counter).
CURRENT_CLIENTS_SCRAPE = """\
# TYPE kafka_network_requestmetrics_requestspersec untyped
kafka_network_requestmetrics_requestspersec{request="Produce",version="9",} 91000.0
kafka_network_requestmetrics_requestspersec{request="Fetch",version="4",} 12.0
# TYPE kafka_network_requestmetrics_requests counter
kafka_network_requestmetrics_requests_total{request="ListOffsets",version="1",} 30.0
kafka_network_requestmetrics_requests_total{request="Produce",version="2",} 0.0
"""


REQUEST_METRICS = ("request_rate", "request_count", "deprecated_request_rate", "deprecated_request_count")


def _rows(result, names=None):
    return {
        (r["name"], r["labels"]): r["value"]
        for r in result.tables.get("metrics", [])
        if names is None or r["name"] in names
    }


def test_collector_keeps_request_rates_counts_and_deprecated_requests_by_version():
    r = parse_metrics(OLD_CLIENTS_SCRAPE, "b1.prom", 1)
    assert r.errors == [] and r.warnings == []
    assert _rows(r) == {
        ("request_rate", '{"request":"Produce","version":"2"}'): 1.5,
        ("request_rate", '{"request":"Produce","version":"9"}'): 40.25,
        ("request_rate", '{"request":"FetchConsumer","version":"3"}'): 0.5,
        ("request_rate", '{"request":"Fetch","version":"3"}'): 0.5,
        ("request_rate", '{"request":"Fetch","version":"12"}'): 80.0,
        ("request_count", '{"request":"Produce","version":"2"}'): 5400.0,
        (
            "deprecated_request_rate",
            '{"client_software_name":"sarama","client_software_version":"1.27.0",'
            '"request":"Produce","version":"2"}',
        ): 1.5,
        (
            "deprecated_request_rate",
            '{"client_software_name":"librdkafka","client_software_version":"1.9.2",'
            '"request":"Produce","version":"5"}',
        ): 3.0,
    }
    r = parse_metrics(CURRENT_CLIENTS_SCRAPE, "b1.prom", 1)
    assert r.errors == [] and _rows(r) == {
        ("request_count", '{"request":"Produce","version":"9"}'): 91000.0,
        ("request_count", '{"request":"Fetch","version":"4"}'): 12.0,
        ("request_count", '{"request":"ListOffsets","version":"1"}'): 30.0,
        ("request_count", '{"request":"Produce","version":"2"}'): 0.0,
    }


def test_real_kafka_010_scrape_has_requests_per_sec_without_version_and_still_reads():
    # jmx_exporter 0.6 before a Kafka 0.10 broker: RequestsPerSec by request only (the version
    # tag came with Kafka 2.0, KIP-272): nothing to judge by version, the rest is read as before.
    path = real_input("metrics/jmx-exporter-0.6-kafka0.10-lowercase-scrape.prom")
    text = path.read_text()
    assert 'kafka_network_requestmetrics_oneminuterate{name="RequestsPerSec",request="Produce",}' in text
    r = parse_metrics(text, str(path), 1)
    assert r.errors == [] and _rows(r, REQUEST_METRICS) == {}
    assert ("network_processor_avg_idle_percent", "{}") in _rows(r)


def test_real_scrapes_without_request_metrics_give_no_request_rows():
    for name in (
        "msk-open-monitoring-jmx-excerpt.prom",
        "derived/confluent-jmx-monitoring-stacks-kip511-probe.prom",
    ):
        path = real_input(f"metrics/{name}")
        r = parse_metrics(path.read_text(), str(path), 1)
        assert r.errors == [] and r.tables and _rows(r, REQUEST_METRICS) == {}


# -- CLI004 in the upgrade preflight ----------------------------------------------------------------


def _collect(tmp_path, scrapes: dict[int, str], name: str, clients=()) -> Path:
    """A healthy 2-broker cluster (one topic, RF 2, full ISR: safe to roll) whose metrics are what the
    collector reads from ``scrapes`` ({broker_id: Prometheus text}), with ``clients`` ((broker, name,
    version, connections)) as its KIP-511 client inventory."""
    sources = []
    for broker, text in scrapes.items():
        scrape = tmp_path / f"{name}-{broker}.prom"
        scrape.write_text(text)
        sources.append(f"broker_id={broker}:{scrape}")
    collected = collect_metrics(sources)
    assert collected.errors == []
    partitions = [
        {
            "topic": "orders",
            "partition": p,
            "leader": 1 + p % 2,
            "leader_epoch": 1,
            "replicas": [1, 2],
            "isr": [1, 2],
            "offline_replicas": [],
            "adding_replicas": [],
            "removing_replicas": [],
        }
        for p in range(4)
    ]
    tables = {
        "brokers": [{"broker_id": b, "host": f"kafka-{b}.test", "rack": f"az-{b}"} for b in (1, 2)],
        "topics": [{"topic": "orders", "partitions": 4, "replication_factor": 2, "is_internal": False}],
        "partitions": partitions,
        "metrics": collected.tables["metrics"],
        # the brokers' server.properties were read (without min.insync.replicas: Kafka's default 1 is
        # their value), so the restart simulation knows each topic's effective min ISR (issue 38)
        "configs": [
            {
                "entity_type": "broker",
                "entity_name": str(b),
                "key": "broker.id",
                "value": str(b),
                "source": "STATIC_BROKER_CONFIG",
                "is_sensitive": False,
            }
            for b in (1, 2)
        ],
    }
    if clients:
        tables["client_software"] = [
            {"broker_id": b, "listener": "CLIENT", "client_name": n, "client_version": v, "connections": c}
            for b, n, v, c in clients
        ]
    manifest = Manifest(
        cluster={"id": name, "name": name, "metadata_mode": "kraft"}, collected_at="2026-11-22T00:00:00Z"
    )
    return write_snapshot(tmp_path / name, manifest, tables, fmt="jsonl")


def test_preflight_target_40_is_not_ready_on_old_protocol_versions(tmp_path):
    snap = _collect(tmp_path, {1: OLD_CLIENTS_SCRAPE, 2: CURRENT_CLIENTS_SCRAPE}, "old-clients")
    r = cli("preflight", snap, "--target-version", "4.0", "-f", "json")
    assert r.returncode == 1, r.stderr
    doc = json.loads(r.stdout)
    assert doc["preflight"]["upgrade_ready"] is False
    found = {f["resource"]["name"]: f for f in doc["findings"] if f["rule"] == "CLI004"}
    assert set(found) == {"Produce on broker 1", "Fetch on broker 1", "sarama 1.27.0"}
    produce = found["Produce on broker 1"]["message"]
    assert "Produce requests at versions [2]" in produce and "accepts Produce from v3" in produce
    assert "1.5 requests/s" in produce
    fetch = found["Fetch on broker 1"]  # counted under Fetch and FetchConsumer: one finding, counted once
    assert fetch["evidence"]["versions"] == [3] and fetch["evidence"]["requests_per_sec"] == 0.5
    sarama = found["sarama 1.27.0"]["message"]
    assert "sent Produce v2 to brokers [1]" in sarama and "Produce v3+" in sarama
    # librdkafka's Produce v5 is deprecated in 3.9 but accepted by 4.0: no finding
    assert not any("librdkafka" in name for name in found)
    text = cli("preflight", snap, "--target-version", "4.0")
    assert text.returncode == 1 and "NOT ready" in text.stdout and "Produce" in text.stdout


def test_preflight_target_40_is_ready_when_only_current_versions_are_seen(tmp_path):
    snap = _collect(tmp_path, {1: CURRENT_CLIENTS_SCRAPE}, "current-clients")
    r = cli("preflight", snap, "--target-version", "4.0", "-f", "json")
    doc = json.loads(r.stdout)
    assert not [f for f in doc["findings"] if f["rule"] == "CLI004"]
    assert doc["preflight"]["upgrade_ready"] is True, r.stdout


# librdkafka 1.6.0 is older than the first release KIP-896 analysed as safe (1.8.2), but the
# brokers' KIP-896 meter (3.7-3.9) shows it sending only Produce v5, which Kafka 4.0 accepts.
RDKAFKA_ACCEPTED_SCRAPE = (
    _HELP.format(a="OneMinuteRate", n="DeprecatedRequestsPerSec")
    + 'kafka_network_RequestMetrics_OneMinuteRate{name="DeprecatedRequestsPerSec",request="Produce",version="5",'
    'clientSoftwareName="librdkafka",clientSoftwareVersion="1.6.0",} 3.0\n'
)


def test_cli002_at_info_does_not_block_the_upgrade_and_at_error_does(tmp_path):
    """CLI002's info finding (the brokers saw the old client send only versions 4.0 accepts) is advice:
    the upgrade preflight is ready (exit 0). Without the meter the release table judges it: an error that
    blocks (exit 1)."""
    clients = [(1, "librdkafka", "1.6.0", 12)]
    seen = _collect(tmp_path, {1: RDKAFKA_ACCEPTED_SCRAPE}, "rdkafka-seen", clients)
    r = cli("preflight", seen, "--target-version", "4.0", "-f", "json")
    doc = json.loads(r.stdout)
    (cli002,) = [f for f in doc["findings"] if f["rule"] == "CLI002"]
    assert cli002["severity"] == "info" and cli002["resource"]["name"] == "librdkafka 1.6.0"
    assert "does not block the upgrade" in cli002["message"]
    assert doc["preflight"]["upgrade_ready"] is True and r.returncode == 0, r.stdout + r.stderr
    unseen = _collect(tmp_path, {1: CURRENT_CLIENTS_SCRAPE}, "rdkafka-unseen", clients)
    r = cli("preflight", unseen, "--target-version", "4.0", "-f", "json")
    doc = json.loads(r.stdout)
    (cli002,) = [f for f in doc["findings"] if f["rule"] == "CLI002"]
    assert cli002["severity"] == "error" and cli002["fingerprint"] in doc["preflight"]["upgrade_blockers"]
    assert doc["preflight"]["upgrade_ready"] is False and r.returncode == 1
