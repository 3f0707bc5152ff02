"""Prometheus metrics collector: MSK open monitoring, jmx_exporter example config, node exporter, KIP-511."""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.collectors.metrics import collect_metrics, parse_metrics, split_hint
from auditor.snapshot.schema import METRICS

# What the MSK open-monitoring JMX exporter (port 11001) serves: jmx_exporter default naming,
# mixed case, trailing ",}" and untyped.
MSK_TEXT = """\
# HELP kafka_network_SocketServer_Value Attribute exposed for management (kafka.network<type=SocketServer, name=NetworkProcessorAvgIdlePercent><>Value)
# TYPE kafka_network_SocketServer_Value untyped
kafka_network_SocketServer_Value{name="NetworkProcessorAvgIdlePercent",} 0.02
kafka_network_SocketServer_Value{name="ExpiredConnectionsKilledCount",} 0.0
# TYPE kafka_server_KafkaRequestHandlerPool_OneMinuteRate untyped
kafka_server_KafkaRequestHandlerPool_OneMinuteRate{name="RequestHandlerAvgIdlePercent",} 0.14
# TYPE kafka_server_KafkaRequestHandlerPool_FiveMinuteRate untyped
kafka_server_KafkaRequestHandlerPool_FiveMinuteRate{name="RequestHandlerAvgIdlePercent",} 0.2
# TYPE kafka_server_KafkaRequestHandlerPool_Count untyped
kafka_server_KafkaRequestHandlerPool_Count{name="RequestHandlerAvgIdlePercent",} 1.2E12
# TYPE kafka_network_RequestChannel_Value untyped
kafka_network_RequestChannel_Value{name="RequestQueueSize",} 498.0
kafka_network_RequestChannel_Value{name="ResponseQueueSize",} 3.0
# TYPE kafka_log_LogManager_Value untyped
kafka_log_LogManager_Value{name="OfflineLogDirectoryCount",} 0.0
# TYPE kafka_server_socket_server_metrics_connection_count untyped
kafka_server_socket_server_metrics_connection_count{listener="CLIENT",networkProcessor="0",} 2300.0
kafka_server_socket_server_metrics_connection_count{listener="CLIENT",networkProcessor="1",} 2300.0
kafka_server_socket_server_metrics_connection_count{listener="REPLICATION",networkProcessor="2",} 10.0
# TYPE kafka_server_socket_server_metrics_connections untyped
kafka_server_socket_server_metrics_connections{clientSoftwareName="sarama",clientSoftwareVersion="1.27.0",listener="CLIENT",networkProcessor="0",} 70.0
kafka_server_socket_server_metrics_connections{clientSoftwareName="sarama",clientSoftwareVersion="1.27.0",listener="CLIENT",networkProcessor="1",} 50.0
kafka_server_socket_server_metrics_connections{clientSoftwareName="apache-kafka-java",clientSoftwareVersion="3.5.1",listener="CLIENT",networkProcessor="0",} 64.0
# TYPE java_lang_OperatingSystem_AvailableProcessors untyped
java_lang_OperatingSystem_AvailableProcessors 2.0
# TYPE java_lang_OperatingSystem_SystemCpuLoad untyped
java_lang_OperatingSystem_SystemCpuLoad 0.52
"""

# The jmx_exporter example config (example_configs/kafka-2_0_0.yml: lowercaseOutputName).
JMX_EXAMPLE_TEXT = """\
# TYPE kafka_network_socketserver_networkprocessoravgidlepercent gauge
kafka_network_socketserver_networkprocessoravgidlepercent 0.71
# TYPE kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_count counter
kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_count 9.9E13
# TYPE kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_oneminuterate gauge
kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_oneminuterate 0.64
# TYPE kafka_network_requestchannel_requestqueuesize gauge
kafka_network_requestchannel_requestqueuesize 3
# TYPE kafka_log_logmanager_offlinelogdirectorycount gauge
kafka_log_logmanager_offlinelogdirectorycount 1
kafka_server_socket_server_metrics_connection_count{listener="PLAINTEXT",networkprocessor="0",} 90
kafka_server_socket_server_metrics_connections_software{clientsoftwarename="librdkafka",clientsoftwareversion="2.4.0",listener="PLAINTEXT",networkprocessor="0",} 12
kafka_server_brokertopicmetrics_bytesin_total 123
"""

NODE_TEXT = """\
# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
# TYPE node_cpu_seconds_total counter
""" + "".join(
    f'node_cpu_seconds_total{{cpu="{c}",mode="{m}"}} {c * 10 + 1}.5\n' for c in range(48) for m in ("idle", "user", "system")
) + """\
# TYPE node_filesystem_size_bytes gauge
node_filesystem_size_bytes{device="/dev/nvme1n1",fstype="xfs",mountpoint="/kafka"} 2e12
node_filesystem_size_bytes{device="/dev/root",fstype="ext4",mountpoint="/"} 1e11
# TYPE node_filesystem_avail_bytes gauge
node_filesystem_avail_bytes{device="/dev/nvme1n1",fstype="xfs",mountpoint="/kafka"} 5e11
node_filesystem_avail_bytes{device="/dev/root",fstype="ext4",mountpoint="/"} 6e10
"""


def _by_name(rows):
    return {(r["broker_id"], r["name"], r["labels"]): r["value"] for r in rows}


def test_msk_open_monitoring():
    r = parse_metrics(MSK_TEXT, "http://b-3.payments.x7k2qp.c3.kafka.us-east-1.amazonaws.com:11001/metrics")
    assert r.errors == []
    m = _by_name(r.tables["metrics"])
    assert m == {
        (3, "network_processor_avg_idle_percent", "{}"): 0.02,
        (3, "request_handler_avg_idle_percent", "{}"): 0.14,  # OneMinuteRate wins over FiveMinuteRate
        (3, "request_queue_size", "{}"): 498.0,
        (3, "offline_log_directory_count", "{}"): 0.0,
        (3, "connection_count", '{"listener":"CLIENT"}'): 4600.0,  # summed over network processors
        (3, "connection_count", '{"listener":"REPLICATION"}'): 10.0,
        (3, "cpu_count", "{}"): 2.0,
        (3, "cpu_user_system_percent", "{}"): 52.0,
    }
    assert all(name in METRICS for _b, name, _l in m)
    assert sorted((c["client_name"], c["client_version"], c["connections"]) for c in r.tables["client_software"]) == [
        ("apache-kafka-java", "3.5.1", 64), ("sarama", "1.27.0", 120)]
    assert {c["listener"] for c in r.tables["client_software"]} == {"CLIENT"}


def test_jmx_exporter_example_config_with_hint():
    r = parse_metrics(JMX_EXAMPLE_TEXT, "/tmp/b1.prom", broker_hint=1)
    assert r.errors == []
    m = _by_name(r.tables["metrics"])
    assert m == {
        (1, "network_processor_avg_idle_percent", "{}"): 0.71,
        (1, "request_handler_avg_idle_percent", "{}"): 0.64,  # the _count (cumulative) is not a ratio
        (1, "request_queue_size", "{}"): 3.0,
        (1, "offline_log_directory_count", "{}"): 1.0,
        (1, "connection_count", '{"listener":"PLAINTEXT"}'): 90.0,
    }
    (c,) = r.tables["client_software"]
    assert c == {"broker_id": 1, "listener": "PLAINTEXT", "client_name": "librdkafka", "client_version": "2.4.0",
                 "connections": 12}


def test_node_exporter_cpu_and_filesystems():
    r = parse_metrics(NODE_TEXT, "node.prom", broker_hint=4)
    assert _by_name(r.tables["metrics"]) == {(4, "cpu_count", "{}"): 48.0}
    assert r.filesystems[4]["/kafka"] == {"device": "/dev/nvme1n1", "fstype": "xfs", "size_bytes": 2e12,
                                          "avail_bytes": 5e11}


def test_broker_from_label_and_missing_broker():
    text = ('kafka_network_requestchannel_requestqueuesize{broker_id="2"} 5\n'
            'kafka_network_requestchannel_requestqueuesize{instance="x"} 7\n')
    r = parse_metrics(text, "fed.prom")
    assert _by_name(r.tables["metrics"]) == {(2, "request_queue_size", "{}"): 5.0}
    assert len(r.errors) == 1 and "1 samples name no broker" in r.errors[0]["message"]


def test_split_hint():
    assert split_hint("broker_id=3:http://h:7071/metrics") == (3, "http://h:7071/metrics")
    assert split_hint("/x/y.prom") == (None, "/x/y.prom")


def test_files_errors_and_merge(tmp_path):
    jmx = tmp_path / "b1.prom"
    jmx.write_text(MSK_TEXT)
    node = tmp_path / "n1.prom"
    node.write_text(NODE_TEXT)
    bad = tmp_path / "bad.prom"
    bad.write_text("this is { not prometheus\n")
    r = collect_metrics([f"broker_id=1:{jmx}", f"broker_id=1:{node}", str(tmp_path / "missing.prom"),
                         f"broker_id=2:{bad}", str(tmp_path), "ftp://x/y"])
    m = _by_name(r.tables["metrics"])
    assert m[(1, "cpu_count", "{}")] == 48.0  # node exporter over the JVM's 2
    assert len([k for k in m if k[1] == "cpu_count"]) == 1
    targets = {e["target"]: e["message"] for e in r.errors}
    assert set(targets) == {str(tmp_path / "missing.prom"), str(bad), str(tmp_path), "ftp://x/y"}
    assert "not valid Prometheus text" in targets[str(bad)]
    assert [s["status"] for s in r.sources] == ["ok", "ok", "error", "error", "error", "error"]
    assert 1 in r.filesystems


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        if self.path == "/metrics":
            body = MSK_TEXT.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_error(404)

    def log_message(self, *args):
        pass


def test_http_fetch_404_and_timeout():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)  # accepts the TCP connection, never answers
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        t0 = time.monotonic()
        r = collect_metrics([f"broker_id=5:{base}/metrics", f"broker_id=5:{base}/nope",
                             f"broker_id=6:http://127.0.0.1:{silent.getsockname()[1]}/metrics"], timeout=0.5)
        assert time.monotonic() - t0 < 5
        assert _by_name(r.tables["metrics"])[(5, "request_queue_size", "{}")] == 498.0
        msgs = sorted(e["message"] for e in r.errors)
        assert len(msgs) == 2
        assert any("HTTP 404" in m for m in msgs) and any("timed out" in m for m in msgs)
    finally:
        server.shutdown()
        server.server_close()
        silent.close()


_lines = st.sampled_from([
    'kafka_network_SocketServer_Value{name="NetworkProcessorAvgIdlePercent",} 0.5',
    "kafka_network_requestchannel_requestqueuesize 3",
    'kafka_server_socket_server_metrics_connections{clientSoftwareName="x",listener="L",} 1',
    'node_cpu_seconds_total{cpu="1",mode="idle"} NaN',
    "# TYPE x untyped", "# HELP x y", "", "x{", 'a{b="', "}", "1e400", "\\", '{broker_id="9"} 1',
])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=300), st.lists(st.one_of(_lines, st.text(max_size=20)), max_size=20).map("\n".join)),
       st.one_of(st.none(), st.integers(0, 10)))
def test_fuzz_parser_never_raises(text, hint):
    r = parse_metrics(text, "fuzz.prom", hint)
    for row in r.tables.get("metrics", []):
        assert row["name"] in METRICS and isinstance(row["value"], float)
        json.loads(row["labels"])
    for e in r.errors:
        assert "\n" not in e["message"]
