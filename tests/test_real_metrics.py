"""The metrics collector on real exporter output (the real-input corpus, used in place).

Every file is read where it lies (../shared/real-inputs/metrics/, origins in its SOURCES.md);
the derived probes hold only the lines the named exporter configurations produce."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from auditor.collectors.metrics import collect_metrics, parse_metrics
from tests.conftest import ROOT, real_input


def _read(relative: str) -> tuple[str, str]:
    path = real_input(f"metrics/{relative}")
    return path.read_text(encoding="utf-8"), str(path)


def _metrics(result) -> dict[tuple[int, str, str], float]:
    return {(r["broker_id"], r["name"], r["labels"]): r["value"] for r in result.tables.get("metrics", [])}


def _software(result) -> list[tuple]:
    return sorted(
        (c["broker_id"], c["listener"], c["client_name"], c["client_version"], c["connections"])
        for c in result.tables.get("client_software", [])
    )


KIP511_ROWS = [(1, "PLAINTEXT", "apache-kafka-java", "3.6.1", 4), (1, "PLAINTEXT", "sarama", "1.27.0", 12)]


def test_confluent_jmx_monitoring_stacks_kip511_labels_become_client_software():
    # client_software_name / client_software_version / network_processor: snake_case label names.
    text, path = _read("derived/confluent-jmx-monitoring-stacks-kip511-probe.prom")
    r = parse_metrics(text, path, broker_hint=1)
    assert r.errors == [] and r.warnings == []
    assert _software(r) == KIP511_ROWS  # sarama 1.27.0 with 12 connections, apache-kafka-java 3.6.1 with 4


def test_strimzi_kip511_naming_gives_the_same_rows():
    text, path = _read("derived/strimzi-kafka-metrics-kip511-probe.prom")
    r = parse_metrics(text, path, broker_hint=1)
    assert r.errors == [] and _software(r) == KIP511_ROWS


def test_confluent_p99only_request_handler_idle_is_the_one_minute_rate():
    # The plain name holds the meter's Count (4.2E14), the _total gauge its OneMinuteRate (0.12).
    text, path = _read("derived/confluent-p99only-request-handler-probe.prom")
    r = parse_metrics(text, path, broker_hint=1)
    assert r.errors == [] and r.warnings == []
    assert _metrics(r) == {(1, "request_handler_avg_idle_percent", "{}"): 0.12}


def test_jmx_exporter_06_lowercase_scrape():
    text, path = _read("jmx-exporter-0.6-kafka0.10-lowercase-scrape.prom")
    r = parse_metrics(text, path, broker_hint=0)
    assert r.errors == [] and r.warnings == []
    assert _metrics(r) == {
        # NetworkProcessorAvgIdlePercent is 1.0024901782565627 in this scrape: a meter's overshoot, clamped.
        (0, "network_processor_avg_idle_percent", "{}"): 1.0,
        (0, "request_handler_avg_idle_percent", "{}"): pytest.approx(0.9996590142663573),
        (0, "connection_count", "{}"): 2.0,  # networkProcessor 0, 1, 2: 0 + 1 + 1, no listener label in 0.10
        (0, "cpu_count", "{}"): 2.0,
        (0, "cpu_user_system_percent", "{}"): pytest.approx(18.297315655739768),
        # kafka_controller_kafkacontroller_value{name="ActiveControllerCount"} 1.0 (this broker is the
        # ZooKeeper-mode controller) and {name="OfflinePartitionsCount"} 0.0: CTL011, PAR010.
        (0, "active_controller_count", "{}"): 1.0,
        (0, "offline_partitions_count", "{}"): 0.0,
        # kafka_server_replicamanager_oneminuterate{name="IsrShrinksPerSec"} / IsrExpandsPerSec: the
        # meters' decayed one-minute rates (~1e-20/s: no churn), PAR011. (Kafka 0.10 has no
        # UnderMinIsrPartitionCount, and this scrape no FetcherLagMetrics: no replica_lag rows.)
        (0, "isr_shrink_rate", "{}"): pytest.approx(1.1320500212670665e-20),
        (0, "isr_expand_rate", "{}"): pytest.approx(2.1131600396985195e-20),
    }
    assert "replica_lag" not in r.tables
    # kafka_log_log_value{name="LogEndOffset",topic,partition}: UnifiedLog's gauge per replica (51 of
    # them, 3 not 0), the broker's own log end offsets that MNT006 compares leader against follower.
    leos = {
        (row["broker_id"], row["topic"], row["partition"]): row["log_end_offset"]
        for row in r.tables["log_end_offsets"]
    }
    assert len(leos) == 51 and {k: v for k, v in leos.items() if v} == {
        (0, "__consumer_offsets", 4): 8,
        (0, "__consumer_offsets", 16): 3,
        (0, "__consumer_offsets", 41): 12,
    }
    assert leos[(0, "test1", 0)] == 0
    # Its controller-channel samples carry broker_id labels of *other* brokers; none is a mapped metric.
    assert {row["broker_id"] for row in r.tables["metrics"]} == {0}


def test_jmx_exporter_06_scrape_without_a_broker_fails_naming_the_accepted_forms():
    text, path = _read("jmx-exporter-0.6-kafka0.10-lowercase-scrape.prom")
    r = parse_metrics(text, path)
    (e,) = r.errors
    assert e["message"].startswith(f"{path}: 62 samples name no broker; accepted: a broker_id=N: prefix")
    assert "`instance` label host" in e["message"] and "b-N." in e["message"]
    assert "metrics" not in r.tables and r.warnings == []


def test_msk_open_monitoring_excerpt_attributed_by_its_msk_url():
    text, _path = _read("msk-open-monitoring-jmx-excerpt.prom")
    url = "http://b-2.payments.x7k2qp.c3.kafka.us-east-1.amazonaws.com:11001/metrics"
    r = collect_metrics([url], fetcher=lambda target, timeout: text)
    assert r.errors == []
    # Only the FiveMinuteRate of RequestHandlerAvgIdlePercent is in the excerpt.
    assert _metrics(r) == {(2, "request_handler_avg_idle_percent", "{}"): pytest.approx(0.9985297500708785)}
    assert r.sources == [
        {
            "source": "metrics",
            "target": url,
            "status": "ok",
            "attribution": {
                "2": "URL host b-2.payments.x7k2qp.c3.kafka.us-east-1.amazonaws.com is MSK broker b-2"
            },
            "metrics": ["request_handler_avg_idle_percent"],  # what the excerpt held (issue 47)
        }
    ]


def test_node_exporter_attributed_by_registered_host():
    text, _path = _read("node-exporter-1.2.2-sample.prom")
    url = "http://10.0.0.5:9100/metrics"
    r = collect_metrics(
        [url],
        fetcher=lambda target, timeout: text,
        broker_hosts=[(3, "10.0.0.5", 9092), (4, "10.0.0.6", 9092)],
    )
    assert r.errors == []
    assert _metrics(r) == {(3, "cpu_count", "{}"): 2.0}
    assert r.filesystems[3]["/"] == {
        "device": "/dev/nvme0n1p1",
        "fstype": "xfs",
        "size_bytes": 64411906048.0,
        "avail_bytes": 54311260160.0,
    }
    assert r.sources[0]["attribution"] == {"3": "URL host 10.0.0.5 is broker 3's registered host"}


def test_kafka_exporter_output_is_a_failed_source_naming_the_file():
    text, path = _read("kafka-exporter-1.3.1-sample.prom")
    r = collect_metrics([path])
    assert r.tables == {} and r.warnings == []
    (w,) = [e["message"] for e in r.errors]
    assert w.startswith(
        f"{path}: no Kafka broker (JMX exporter) or node exporter metric recognised in 471 samples"
    )
    assert "kafka_consumergroup_lag" in w and "kafka_exporter output" in w
    assert r.sources == [{"source": "metrics", "target": path, "status": "error"}]


def test_collect_command_reports_the_failed_source_and_exits_3(tmp_path):
    """Issue 37: --metrics pointed at the wrong exporter was a warning and exit 0, a green audit
    of rules that never ran; it is a failed source, and every check of the snapshot says so."""
    _text, path = _read("kafka-exporter-1.3.1-sample.prom")
    out = tmp_path / "snap"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "auditor.cli.main",
            "collect",
            "--metrics",
            path,
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
    assert p.returncode == 3, p.stderr
    (line,) = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert line.startswith(
        f"kafka-audit: collect incomplete: metrics: {path}: no Kafka broker (JMX exporter) or node exporter metric"
    )
    manifest = json.loads((out / "manifest.json").read_text())
    assert [(e["source"], e["target"]) for e in manifest["errors"]] == [("metrics", path)]
    assert [(s["source"], s["status"]) for s in manifest["sources"]] == [("metrics", "error")]
    assert manifest["errors"][0]["message"] in line
