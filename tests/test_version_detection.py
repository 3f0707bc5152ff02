"""Kafka version detection (issue 17): AppInfo in the metrics -> brokers.version -> the manifest's
cluster.kafka_version and cluster.kafka_version_source (auditor/collectors/versions.py).

The scrapes below are shaped like what jmx_exporter writes for the named configurations
(``# HELP`` text "<description> (<bean><><attribute>)", ``untyped`` without a rule type, the
trailing ``,}`` of jmx_exporter 0.x): the AppInfo version is a string attribute, exported only
through a rule with ``value:`` that moves it into a label."""

from __future__ import annotations

import json
import subprocess
import sys

from auditor.collectors.collect import collect
from auditor.collectors.metrics import parse_metrics
from auditor.collectors.versions import UNKNOWN, detect_kafka_version, kafka_version
from auditor.sources import Sources
from tests.conftest import ROOT, real_input

# koperator's default Kafka JMX exporter config: the rule
#   - pattern : 'kafka.server<type=app-info><>version: (.*)'
#     name: kafka_server_app_info
#     value: 1.0
#     labels: {version: "$1"}
# on the metrics-registry bean kafka.server:type=app-info (no broker id: one scrape per pod).
KOPERATOR = """\
# HELP kafka_server_app_info Metric indicating version (kafka.server<type=app-info><>version)
# TYPE kafka_server_app_info untyped
kafka_server_app_info{{version="{version}",}} 1.0
# HELP kafka_network_socketserver_networkprocessoravgidlepercent Attribute exposed for management (kafka.network<type=SocketServer, name=NetworkProcessorAvgIdlePercent><>Value)
# TYPE kafka_network_socketserver_networkprocessoravgidlepercent gauge
kafka_network_socketserver_networkprocessoravgidlepercent 0.93
"""

# A rule naming the attribute, on kafka.server:type=app-info,id=N (the form koperator's JMX
# version extractor reads: kafka_server_app_info_version{broker_id="N",version="x.y.z"}).
APP_INFO_VERSION = """\
# HELP kafka_server_app_info_version Attribute exposed for management (kafka.server<type=app-info, id={broker}><>Version)
# TYPE kafka_server_app_info_version gauge
kafka_server_app_info_version{{broker_id="{broker}",version="{version}",}} 1.0
"""

# Every app-info attribute moved into a label (lowercaseOutputLabelNames), the MBean's id=N kept:
# the version of Confluent Server is Confluent Platform's (7.6.0-ce = Apache Kafka 3.6).
APP_INFO_LABELS = """\
# HELP kafka_server_app_info Attribute exposed for management (kafka.server<type=app-info, id={broker}><>Version)
# TYPE kafka_server_app_info untyped
kafka_server_app_info{{id="{broker}",version="{version}",}} 1.0
kafka_server_app_info{{id="{broker}",commitid="3a1c1e8f7d3b2a90",}} 1.0
"""

# jmx_exporter's default naming (MSK open monitoring): only the numeric StartTimeMs is exported.
DEFAULT_NAMING = """\
# HELP kafka_server_app_info_StartTimeMs Attribute exposed for management (kafka.server<type=app-info, id=1><>StartTimeMs)
# TYPE kafka_server_app_info_StartTimeMs untyped
kafka_server_app_info_StartTimeMs{id="1",} 1.700000000123E12
"""


def test_koperator_app_info_label_gives_the_version_of_the_prefixed_broker():
    r = parse_metrics(KOPERATOR.format(version="3.7.0"), "b1.prom", broker_hint=1)
    assert r.errors == [] and r.warnings == []
    assert r.versions == {1: "3.7.0"}
    assert [m["name"] for m in r.tables["metrics"]] == ["network_processor_avg_idle_percent"]


def test_app_info_version_sample_names_its_broker_by_label():
    r = parse_metrics(APP_INFO_VERSION.format(broker=2, version="3.6.1"), "x.prom")
    assert r.errors == [] and r.warnings == []  # only a version: no "nothing read" warning
    assert r.versions == {2: "3.6.1"} and r.tables == {}


def test_appinfo_spelling_and_id_label():
    text = 'kafka_server_appinfo_version{id="4",version="3.8.1",} 1.0\n'
    assert parse_metrics(text, "x.prom").versions == {4: "3.8.1"}
    r = parse_metrics(APP_INFO_LABELS.format(broker=3, version="7.6.0-ce"), "x.prom")
    assert r.errors == [] and r.versions == {3: "7.6.0-ce"}  # commitid label: not a version


def test_default_naming_has_no_version_and_unknown_says_so():
    r = parse_metrics(DEFAULT_NAMING, "b1.prom", broker_hint=1)
    assert r.versions == {}  # (and nothing else read either: a failed source, issue 37)
    assert [e["message"].endswith("nothing read from this metrics source") for e in r.errors] == [True]
    assert detect_kafka_version([{"broker_id": 1, "version": None}], None) == (None, UNKNOWN)
    msk = real_input("metrics/msk-open-monitoring-jmx-excerpt.prom")
    assert parse_metrics(msk.read_text(), str(msk), broker_hint=1).versions == {}


def test_app_info_without_a_broker_is_a_source_error():
    r = parse_metrics(KOPERATOR.format(version="3.7.0"), "x.prom")
    assert r.versions == {} and len(r.errors) == 1 and "name no broker" in r.errors[0]["message"]


def test_not_a_version_is_not_kept():
    assert parse_metrics('kafka_server_app_info{version="unknown",} 1.0\n', "x", broker_hint=1).versions == {}


def test_version_strings():
    assert kafka_version("3.7.0") == "3.7.0"
    assert kafka_version("2.8.2.tiered") == "2.8.2"  # MSK
    assert kafka_version("3.8.0-SNAPSHOT") == "3.8.0"
    assert kafka_version("7.6.0-ce") == "3.6" and kafka_version("7.9.1-ccs") == "3.9"  # Confluent Platform
    assert kafka_version("9.9.0-ce") is None  # a Confluent release not in the table
    assert kafka_version("7.6.0") is None  # above Kafka 4.x without a Confluent suffix: not guessed
    assert kafka_version("unknown") is None and kafka_version(None) is None


def test_detect_agreeing_rolling_declared_unknown():
    rows = [{"broker_id": 1, "version": "3.7.0"}, {"broker_id": 2, "version": "3.7.0"}]
    assert detect_kafka_version(rows, None) == ("3.7.0", "metrics: app-info")
    rolling = [{"broker_id": 1, "version": "3.7.0"}, {"broker_id": 2, "version": "3.6.1"}]
    assert detect_kafka_version(rolling, None) == (
        "3.6.1",
        "metrics: app-info: brokers report 3.6.1, 3.7.0 (lowest used)",
    )
    assert detect_kafka_version(rolling, "3.5.2") == ("3.5.2", "declared")
    assert detect_kafka_version([], None) == (None, UNKNOWN)
    assert "DSK003, FLT003, CTL004, CLI001" in UNKNOWN
    partial = [{"broker_id": 1, "version": "3.7.0"}, {"broker_id": 2, "version": None}]
    assert detect_kafka_version(partial, None) == ("3.7.0", "metrics: app-info: broker 2 reports none")
    confluent = [{"broker_id": 1, "version": "7.6.0-ce"}]
    assert detect_kafka_version(confluent, None) == ("3.6", "metrics: app-info: brokers report 7.6.0-ce")
    assert detect_kafka_version([], None, reported=("3.6.0", "msk: CurrentBrokerSoftwareInfo")) == (
        "3.6.0",
        "msk: CurrentBrokerSoftwareInfo",
    )


def _props(tmp_path, *ids):
    conf = tmp_path / "conf"
    conf.mkdir()
    for b in ids:
        (conf / f"broker-{b}.properties").write_text(f"broker.id={b}\nlog.dirs=/kafka/data\n")
    return conf


def test_collect_rolling_upgrade_two_exporter_configs(tmp_path):
    conf = _props(tmp_path, 1, 2)
    (tmp_path / "b1.prom").write_text(KOPERATOR.format(version="3.7.0"))
    (tmp_path / "b2.prom").write_text(APP_INFO_VERSION.format(broker=2, version="3.6.1"))
    manifest, tables = collect(
        Sources(
            broker_configs=(str(conf),),
            metrics=(f"broker_id=1:{tmp_path / 'b1.prom'}", str(tmp_path / "b2.prom")),
            cluster_name="c1",
        )
    )
    assert manifest.errors == []
    assert {b["broker_id"]: b["version"] for b in tables["brokers"]} == {1: "3.7.0", 2: "3.6.1"}
    assert manifest.cluster["kafka_version"] == "3.6.1"
    assert (
        manifest.cluster["kafka_version_source"]
        == "metrics: app-info: brokers report 3.6.1, 3.7.0 (lowest used)"
    )


def test_collect_declared_wins(tmp_path):
    (tmp_path / "b1.prom").write_text(KOPERATOR.format(version="3.7.0"))
    manifest, tables = collect(
        Sources(metrics=(f"broker_id=1:{tmp_path / 'b1.prom'}",), cluster_name="c1"),
        cluster={"kafka_version": "3.5.2"},
    )
    assert manifest.cluster["kafka_version"] == "3.5.2"
    assert "kafka_version_source" not in manifest.cluster  # typed: its source needs no saying


def test_collect_metrics_only_still_detects(tmp_path):
    # No registry and no server.properties: no brokers rows, the metrics' versions still count.
    (tmp_path / "b3.prom").write_text(APP_INFO_LABELS.format(broker=3, version="7.7.1-ccs"))
    manifest, tables = collect(Sources(metrics=(str(tmp_path / "b3.prom"),), cluster_name="c1"))
    assert "brokers" not in tables
    assert manifest.cluster["kafka_version"] == "3.7"
    assert manifest.cluster["kafka_version_source"] == "metrics: app-info: brokers report 7.7.1-ccs"


def test_collect_unknown_says_so(tmp_path):
    msk = real_input("metrics/msk-open-monitoring-jmx-excerpt.prom")
    conf = _props(tmp_path, 1)
    manifest, tables = collect(
        Sources(broker_configs=(str(conf),), metrics=(f"broker_id=1:{msk}",), cluster_name="c1")
    )
    assert "kafka_version" not in manifest.cluster
    assert manifest.cluster["kafka_version_source"] == UNKNOWN
    assert tables["brokers"][0]["version"] is None


def test_collect_command_records_the_version_and_its_source(tmp_path):
    conf = _props(tmp_path, 1)
    prom = tmp_path / "b1.prom"
    prom.write_text(KOPERATOR.format(version="3.7.0"))
    out = tmp_path / "snap"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "auditor.cli.main",
            "collect",
            "--metrics",
            f"broker_id=1:{prom}",
            "--broker-config",
            str(conf / "broker-1.properties"),
            "--cluster-name",
            "c1",
            "-o",
            str(out),
            "--format",
            "jsonl",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["errors"] == []
    assert manifest["cluster"]["kafka_version"] == "3.7.0"
    assert manifest["cluster"]["kafka_version_source"] == "metrics: app-info"
    (broker,) = [
        json.loads(line) for line in (out / "brokers.jsonl").read_text().splitlines() if line.strip()
    ]
    assert broker["broker_id"] == 1 and broker["version"] == "3.7.0"
