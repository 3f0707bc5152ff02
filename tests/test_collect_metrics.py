"""Prometheus metrics collector: MSK open monitoring, jmx_exporter example config, node exporter, KIP-511."""

from __future__ import annotations

import http.server
import json
import socket
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.collectors.metrics import RANGES, collect_metrics, parse_metrics, split_hint
from auditor.snapshot.schema import METRICS
from auditor.sources import Sources

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

NODE_TEXT = (
    """\
# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
# TYPE node_cpu_seconds_total counter
"""
    + "".join(
        f'node_cpu_seconds_total{{cpu="{c}",mode="{m}"}} {c * 10 + 1}.5\n'
        for c in range(48)
        for m in ("idle", "user", "system")
    )
    + """\
# TYPE node_filesystem_size_bytes gauge
node_filesystem_size_bytes{device="/dev/nvme1n1",fstype="xfs",mountpoint="/kafka"} 2e12
node_filesystem_size_bytes{device="/dev/root",fstype="ext4",mountpoint="/"} 1e11
# TYPE node_filesystem_avail_bytes gauge
node_filesystem_avail_bytes{device="/dev/nvme1n1",fstype="xfs",mountpoint="/kafka"} 5e11
node_filesystem_avail_bytes{device="/dev/root",fstype="ext4",mountpoint="/"} 6e10
"""
)


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
    assert sorted(
        (c["client_name"], c["client_version"], c["connections"]) for c in r.tables["client_software"]
    ) == [("apache-kafka-java", "3.5.1", 64), ("sarama", "1.27.0", 120)]
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
    assert c == {
        "broker_id": 1,
        "listener": "PLAINTEXT",
        "client_name": "librdkafka",
        "client_version": "2.4.0",
        "connections": 12,
    }


def test_node_exporter_cpu_and_filesystems():
    r = parse_metrics(NODE_TEXT, "node.prom", broker_hint=4)
    assert _by_name(r.tables["metrics"]) == {(4, "cpu_count", "{}"): 48.0}
    assert r.filesystems[4]["/kafka"] == {
        "device": "/dev/nvme1n1",
        "fstype": "xfs",
        "size_bytes": 2e12,
        "avail_bytes": 5e11,
    }


def test_broker_from_label_and_missing_broker():
    text = (
        'kafka_network_requestchannel_requestqueuesize{broker_id="2"} 5\n'
        'kafka_network_requestchannel_requestqueuesize{instance="x"} 7\n'
    )
    r = parse_metrics(text, "fed.prom")
    assert _by_name(r.tables["metrics"]) == {(2, "request_queue_size", "{}"): 5.0}
    (e,) = r.errors
    assert "1 samples name no broker" in e["message"]
    # The message says which forms are accepted, and names a sample that had none.
    for form in (
        "broker_id=N: prefix",
        "broker_id label",
        "`instance` label host",
        "registered broker's host",
        "MSK broker host b-N.",
    ):
        assert form in e["message"], form
    assert 'kafka_network_requestchannel_requestqueuesize{instance="x"}' in e["message"]


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
    r = collect_metrics(
        [
            f"broker_id=1:{jmx}",
            f"broker_id=1:{node}",
            str(tmp_path / "missing.prom"),
            f"broker_id=2:{bad}",
            str(tmp_path),
            "ftp://x/y",
        ]
    )
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
        r = collect_metrics(
            [
                f"broker_id=5:{base}/metrics",
                f"broker_id=5:{base}/nope",
                f"broker_id=6:http://127.0.0.1:{silent.getsockname()[1]}/metrics",
            ],
            timeout=0.5,
        )
        assert time.monotonic() - t0 < 5
        assert _by_name(r.tables["metrics"])[(5, "request_queue_size", "{}")] == 498.0
        msgs = sorted(e["message"] for e in r.errors)
        assert len(msgs) == 2
        assert any("HTTP 404" in m for m in msgs) and any("timed out" in m for m in msgs)
    finally:
        server.shutdown()
        server.server_close()
        silent.close()


_lines = st.sampled_from(
    [
        'kafka_network_SocketServer_Value{name="NetworkProcessorAvgIdlePercent",} 0.5',
        'kafka_network_SocketServer_Value{name="NetworkProcessorAvgIdlePercent",instance="kafka-1:7071"} 7',
        'kafka_network_requestchannel_requestqueuesize{instance="[::1]:x"} 1',
        'node_cpu_seconds_total{cpu="0",mode="idle",instance="b-3.c.x.c2.kafka.r.amazonaws.com:11002"} 1',
        'kafka_server_socketservermetrics_connections{client_software_name="s",instance="http://[x"} 2',
        "# HELP kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent x (k<>OneMinuteRate)",
        "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent 0.3",
        "kafka_network_requestchannel_requestqueuesize 3",
        'kafka_server_socket_server_metrics_connections{clientSoftwareName="x",listener="L",} 1',
        'node_cpu_seconds_total{cpu="1",mode="idle"} NaN',
        "# TYPE x untyped",
        "# HELP x y",
        "",
        "x{",
        'a{b="',
        "}",
        "1e400",
        "\\",
        '{broker_id="9"} 1',
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.text(max_size=300), st.lists(st.one_of(_lines, st.text(max_size=20)), max_size=20).map("\n".join)
    ),
    st.one_of(st.none(), st.integers(0, 10)),
)
def test_fuzz_parser_never_raises(text, hint):
    r = parse_metrics(text, "fuzz.prom", hint, broker_hosts=[(1, "kafka-1.internal", 9092), (2, "::1", None)])
    for row in r.tables.get("metrics", []):
        assert row["name"] in METRICS and isinstance(row["value"], float)
        json.loads(row["labels"])
        if row["name"] in RANGES:
            assert RANGES[row["name"]][0] <= row["value"] <= RANGES[row["name"]][1]
    for e in r.errors:
        assert "\n" not in e["message"]
    assert r.warnings == [] and (
        r.errors or r.tables or r.filesystems or r.versions
    )  # nothing read: an error


# --- exporter spellings: label names, cumulative counts, HELP attributes ----------------------
# Confluent jmx-monitoring-stacks kafka_broker.yml: snake_case KIP-511 labels (lowercaseOutputLabelNames).
CONFLUENT_TEXT = """\
# TYPE kafka_server_socketservermetrics_connections gauge
kafka_server_socketservermetrics_connections{client_software_name="confluent-kafka-python",client_software_version="2.3.0",listener="INTERNAL",network_processor="0",} 5.0
kafka_server_socketservermetrics_connections{client_software_name="confluent-kafka-python",client_software_version="2.3.0",listener="INTERNAL",network_processor="3",} 2.0
# TYPE kafka_server_socketservermetrics_connection_count gauge
kafka_server_socketservermetrics_connection_count{listener="INTERNAL",network_processor="0",} 40.0
kafka_server_socketservermetrics_connection_count{listener="INTERNAL",network_processor="3",} 2.0
# HELP kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent Attribute exposed for management (kafka.server<type=KafkaRequestHandlerPool, name=RequestHandlerAvgIdlePercent><>Count)
# TYPE kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent untyped
kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent 7.5E13
# TYPE kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_total gauge
kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_total 0.31
kafka_network_socketserver_networkprocessoravgidlepercent 0.44
"""


def test_confluent_naming_label_names_any_case_or_separator():
    r = parse_metrics(CONFLUENT_TEXT, "confluent.prom", broker_hint=7)
    assert r.errors == [] and r.warnings == []
    assert r.tables["client_software"] == [
        {
            "broker_id": 7,
            "listener": "INTERNAL",
            "client_name": "confluent-kafka-python",
            "client_version": "2.3.0",
            "connections": 7,
        }
    ]
    assert _by_name(r.tables["metrics"]) == {
        (7, "connection_count", '{"listener":"INTERNAL"}'): 42.0,
        (7, "request_handler_avg_idle_percent", "{}"): 0.31,  # the _total gauge (OneMinuteRate), not 7.5e13
        (7, "network_processor_avg_idle_percent", "{}"): 0.44,
    }


def test_plain_request_handler_name_is_the_cumulative_count_without_help():
    # kafka-0-8-2.yml / Confluent: the plain name is the meter's Count. Without a rate spelling
    # nothing is read, and that is a source error (only cumulative counts), not a value of 9e13.
    text = "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent 9E13\n"
    r = parse_metrics(text, "count-only.prom", broker_hint=1)
    assert r.tables == {} and r.warnings == []
    (w,) = [e["message"] for e in r.errors]
    assert w.startswith("count-only.prom: only cumulative meter counts recognised")
    assert "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent" in w


def test_help_attribute_decides_what_a_spelling_is():
    text = """\
# HELP kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent Attribute exposed for management (kafka.server<type=KafkaRequestHandlerPool, name=RequestHandlerAvgIdlePercent><>FiveMinuteRate)
kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent 0.83
# HELP kafka_network_socketserver_networkprocessoravgidlepercent Attribute exposed for management (kafka.network<type=SocketServer, name=NetworkProcessorAvgIdlePercent><>Count)
kafka_network_socketserver_networkprocessoravgidlepercent 123456
"""
    r = parse_metrics(text, "help.prom", broker_hint=1)
    # The plain name whose HELP says FiveMinuteRate is that rate; a HELP saying Count is never a level.
    assert _by_name(r.tables["metrics"]) == {(1, "request_handler_avg_idle_percent", "{}"): 0.83}
    assert r.errors == []


def test_counter_typed_total_is_cumulative_and_rates_are_preferred_in_order():
    text = """\
# TYPE kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_count_total counter
kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_count_total 8.1E12
# TYPE kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_total counter
kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_total 3.3E12
kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent 0.9
kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_fifteenminuterate 0.6
kafka_log_logmanager_offlinelogdirectorycount_value 2
"""
    r = parse_metrics(text, "strimzi.prom", broker_hint=2)
    assert r.errors == []
    # The FifteenMinuteRate wins over Strimzi's MeanRate (_percent); counters are not ratios.
    assert _by_name(r.tables["metrics"]) == {
        (2, "request_handler_avg_idle_percent", "{}"): 0.6,
        (2, "offline_log_directory_count", "{}"): 2.0,
    }
    r = parse_metrics("kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent 0.9\n", "s.prom", 2)
    assert _by_name(r.tables["metrics"]) == {(2, "request_handler_avg_idle_percent", "{}"): 0.9}
    # The OpenMetrics-style declaration (TYPE without _total) types the _total sample too.
    r = parse_metrics(
        "# TYPE kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent counter\n"
        "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_total 3.3E12\n",
        "om.prom",
        2,
    )
    assert r.tables == {} and "only cumulative" in r.errors[0]["message"]


def test_tls_connections_gauge_is_not_client_software():
    text = (
        'kafka_server_socket_server_metrics_connections{cipher="TLS_AES_256_GCM_SHA384",protocol="TLSv1.3",'
        'listener="SSL",networkProcessor="0",} 9\n'
    )
    r = parse_metrics(text, "tls.prom", broker_hint=1)
    assert "client_software" not in r.tables
    assert [e["message"].endswith("nothing read from this metrics source") for e in r.errors] == [True]


# --- range checks ----------------------------------------------------------------------------
def test_ratio_out_of_range_is_a_source_error_naming_the_sample():
    text = """\
kafka_network_SocketServer_Value{name="NetworkProcessorAvgIdlePercent",} 1.7
kafka_server_KafkaRequestHandlerPool_OneMinuteRate{name="RequestHandlerAvgIdlePercent",} 1.003
java_lang_OperatingSystem_SystemCpuLoad 1.5
kafka_network_RequestChannel_Value{name="RequestQueueSize",} 12.0
"""
    r = parse_metrics(text, "bad.prom", broker_hint=4)
    m = _by_name(r.tables["metrics"])
    # 1.7 and 150 % are not stored; 1.003 is a meter's overshoot: clamped to 1.0.
    assert m == {(4, "request_handler_avg_idle_percent", "{}"): 1.0, (4, "request_queue_size", "{}"): 12.0}
    msgs = [e["message"] for e in r.errors]
    assert len(msgs) == 2
    assert msgs[0].startswith(
        'bad.prom: kafka_network_SocketServer_Value{name="NetworkProcessorAvgIdlePercent"} = 1.7 '
        "is outside [0, 1], an idle fraction for network_processor_avg_idle_percent"
    )
    assert (
        "java_lang_OperatingSystem_SystemCpuLoad = 1.5 (150 as cpu_user_system_percent) is outside [0, 100]"
        in msgs[1]
    )
    assert all(e["source"] == "metrics" and e["target"] == "bad.prom" for e in r.errors)


def test_negative_jvm_cpu_load_is_not_available_not_an_error():
    r = parse_metrics(
        "java_lang_OperatingSystem_SystemCpuLoad -1.0\njava_lang_OperatingSystem_AvailableProcessors 4\n",
        "jvm.prom",
        broker_hint=1,
    )
    assert r.errors == [] and _by_name(r.tables["metrics"]) == {(1, "cpu_count", "{}"): 4.0}


def test_many_range_errors_are_capped():
    text = "".join(
        f'kafka_network_SocketServer_Value{{name="NetworkProcessorAvgIdlePercent",p="{i}"}} {2 + i}\n'
        for i in range(8)
    )
    r = parse_metrics(text, "many.prom", broker_hint=1)
    assert len(r.errors) == 6 and r.errors[-1]["message"] == (
        "many.prom: 3 more samples out of range for a ratio metric: not stored"
    )
    assert "metrics" not in r.tables


# --- a source that gives nothing to read: a failed source (issue 37) ----------------------------
def test_nothing_recognised_is_a_failed_source(tmp_path):
    lag = tmp_path / "lag.prom"
    lag.write_text(
        "# TYPE kafka_consumergroup_lag gauge\n"
        'kafka_consumergroup_lag{consumergroup="billing",partition="0",topic="orders"} 17\n'
        "# TYPE go_goroutines gauge\ngo_goroutines 9\n"
    )
    empty = tmp_path / "empty.prom"
    empty.write_text("")
    r = collect_metrics([str(lag), str(empty), f"broker_id=1:{tmp_path / 'missing.prom'}"])
    assert [e["target"] for e in r.errors] == [str(lag), str(empty), str(tmp_path / "missing.prom")]
    assert [s["status"] for s in r.sources] == ["error", "error", "error"]
    assert r.errors[0]["message"] == (
        f"{lag}: no Kafka broker (JMX exporter) or node exporter metric recognised in 2 samples (kafka_consumergroup_lag) "
        "(kafka_exporter output: topic and consumer-group metrics, which no check reads): nothing read from this "
        "metrics source"
    )
    assert r.errors[1]["message"] == f"{empty}: no samples: nothing read from this metrics source"
    assert r.warnings == []


# --- which broker: registered hosts, instance labels, MSK host names ---------------------------
HOSTS = [
    (1, "kafka-1.kafka-headless.svc", 9092),
    (2, "kafka-2.kafka-headless.svc", 9092),
    (3, "10.0.0.5", 9092),
    (4, "docker-host", 9092),
    (5, "docker-host", 9093),
]
_QUEUE = "kafka_network_requestchannel_requestqueuesize"


def test_url_host_of_one_registered_broker():
    r = collect_metrics(
        [
            "http://10.0.0.5:7071/metrics",
            "http://KAFKA-2.kafka-headless.svc.:7071/metrics",
            "broker_id=9:http://10.0.0.5:7071/metrics",
        ],
        fetcher=lambda target, timeout: f"{_QUEUE} 3\n",
        broker_hosts=HOSTS,
    )
    assert r.errors == []
    assert sorted((row["broker_id"], row["value"]) for row in r.tables["metrics"]) == [
        (2, 3.0),
        (3, 3.0),
        (9, 3.0),
    ]
    assert r.sources[0]["attribution"] == {"3": "URL host 10.0.0.5 is broker 3's registered host"}
    assert "attribution" not in r.sources[2]  # the prefix wins over the URL host


def test_instance_label_federation_output():
    text = (
        f'{_QUEUE}{{instance="kafka-1:7071",job="kafka"}} 11\n'  # a bare name against a registered FQDN
        f'{_QUEUE}{{instance="10.0.0.5:7071",job="kafka"}} 13\n'
        f'{_QUEUE}{{instance="b-6.payments.x7k2qp.c3.kafka.us-east-1.amazonaws.com:11001"}} 15\n'
        'node_cpu_seconds_total{cpu="0",instance="10.0.0.5:9100",mode="idle"} 5\n'
        'node_cpu_seconds_total{cpu="1",instance="10.0.0.5:9100",mode="idle"} 5\n'
    )
    r = parse_metrics(text, "http://prometheus:9090/federate", broker_hosts=HOSTS)
    assert r.errors == []
    assert _by_name(r.tables["metrics"]) == {
        (1, "request_queue_size", "{}"): 11.0,
        (3, "request_queue_size", "{}"): 13.0,
        (6, "request_queue_size", "{}"): 15.0,
        (3, "cpu_count", "{}"): 2.0,
    }
    assert (
        r.attribution[6]
        == "instance b-6.payments.x7k2qp.c3.kafka.us-east-1.amazonaws.com:11001 is MSK broker b-6"
    )


def test_ambiguous_or_unknown_host_fails_with_the_accepted_forms():
    # Two brokers registered on one host: the exporter port (7071) cannot tell them apart.
    r = parse_metrics(f"{_QUEUE} 1\n", "http://docker-host:7071/metrics", broker_hosts=HOSTS)
    (e,) = r.errors
    assert "1 samples name no broker" in e["message"] and "5 brokers with a registered host" in e["message"]
    assert "metrics" not in r.tables
    # ... the port can, when it is a registered one.
    r = parse_metrics(f"{_QUEUE} 1\n", "http://docker-host:9093/metrics", broker_hosts=HOSTS)
    assert _by_name(r.tables["metrics"]) == {(5, "request_queue_size", "{}"): 1.0}
    # An IP address never matches by its first label; b-N. needs MSK's .kafka. host.
    for inst in ("10.0.0.6:7071", "10:7071", "b-2.example.com:7071"):
        r = parse_metrics(f'{_QUEUE}{{instance="{inst}"}} 1\n', "fed.prom", broker_hosts=HOSTS)
        assert len(r.errors) == 1 and "metrics" not in r.tables, inst


def test_collect_hands_registered_and_advertised_hosts_to_metrics(tmp_path):
    from auditor.collectors._common import CollectResult
    from auditor.collectors.collect import collect
    from auditor.collectors.metrics import broker_hosts

    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "b7.properties").write_text(
        "broker.id=7\nlog.dirs=/data\nadvertised.listeners=PLAINTEXT://kafka-7.corp:9092,SSL://${HOST}:9093\n"
    )
    (conf / "b8.properties").write_text("broker.id=8\nlog.dirs=/data\nlisteners=PLAINTEXT://0.0.0.0:9092\n")
    registry = CollectResult()
    registry.rows("brokers").append(
        {
            "broker_id": 2,
            "host": "kafka-2.corp",
            "port": 9092,
            "rack": None,
            "cores": None,
            "log_dirs": None,
            "version": None,
        }
    )
    fed = tmp_path / "federate.prom"
    fed.write_text(
        f'{_QUEUE}{{instance="kafka-2.corp:7071"}} 21\n{_QUEUE}{{instance="kafka-7.corp:7071"}} 27\n'
    )
    manifest, tables = collect(
        Sources(broker_configs=(str(conf),), metrics=(str(fed),), cluster_name="c"),
        extra=[registry],
    )
    assert manifest.errors == []
    assert sorted((m["broker_id"], m["value"]) for m in tables["metrics"]) == [(2, 21.0), (7, 27.0)]
    (src,) = [s for s in manifest.sources if s["source"] == "metrics"]
    assert src["status"] == "ok" and set(src["attribution"]) == {"2", "7"}
    from auditor.collectors.files import collect_broker_configs

    assert broker_hosts([registry], collect_broker_configs([str(conf)])) == [
        (2, "kafka-2.corp", 9092),
        (7, "kafka-7.corp", 9092),
    ]


def _serve_once(body: bytes):
    """A real HTTP exporter on loopback answering ``body`` (200, text/plain) to every scrape."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.mark.parametrize("scrape", ["empty-http", "wrong-exporter-file"])
def test_a_named_metrics_source_that_gives_nothing_fails_check_and_collect_alike(tmp_path, scrape):
    """Issue 37, class 6: --metrics at the wrong exporter, or an empty scrape, was a warning and
    exit 0 (a green audit of rules that never ran). It is a failed source on every path: collect
    exits 3, check on the sources exits 3 with AUD001 naming it, and the metrics rules are still
    listed as not evaluated."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    server = None
    if scrape == "empty-http":
        server = _serve_once(b"")
        source = f"broker_id=1:http://127.0.0.1:{server.server_address[1]}/metrics"
        shown = f"http://127.0.0.1:{server.server_address[1]}/metrics"
    else:
        lag = tmp_path / "lag.prom"
        lag.write_text('kafka_consumergroup_lag{consumergroup="billing",partition="0",topic="orders"} 17\n')
        source = shown = str(lag)
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "server.properties").write_text(
        "broker.id=1\nlog.dirs=/data\nzookeeper.connect=zk:2181\n"
    )
    common = ["--broker-config", str(tmp_path / "conf"), "--metrics", source, "--cluster-name", "c1"]

    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "auditor.cli.main", *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=300,
            env={**os.environ, "NO_COLOR": "1"},
        )

    try:
        collected = run("collect", *common, "-o", str(tmp_path / "snap"))
        checked = run("check", *common, "--format", "json")
    finally:
        if server is not None:
            server.shutdown()
    assert collected.returncode == 3, collected.stderr
    assert (
        f"collect incomplete: metrics: {shown}: " in collected.stderr and "nothing read" in collected.stderr
    )
    assert "warning:" not in collected.stderr
    assert checked.returncode == 3, checked.stderr
    doc = json.loads(checked.stdout)
    (aud,) = [f for f in doc["findings"] if f["rule"] == "AUD001"]
    assert shown in aud["message"] and "nothing read from this metrics source" in aud["message"]
    (cluster,) = doc["clusters"]
    assert any("THR001" in g["rules"] for g in cluster["not_evaluated"]), cluster["not_evaluated"]


# Broker-state metrics and followers' lag (CTL011, PAR009-PAR011, MNT006). No public scrape holding
# FetcherLagMetrics or UnderMinIsrPartitionCount was found (the real jmx_exporter 0.6 scrape in
# shared/real-inputs, tests/test_real_metrics.py, has ActiveControllerCount, OfflinePartitionsCount
# and the ISR meters): these lines are written in the exporters' own formats, the default naming's
# HELP/TYPE lines and label order as jmx_exporter prints them (MSK open monitoring), and the names
# that jmx_exporter's kafka-2_0_0.yml and Strimzi's kafka-metrics.yaml rules produce (their
# "clientId, topic, partition" rule for FetcherLagMetrics, their generic gauge and PerSec-Count rules).
STATE_DEFAULT_NAMING = """\
# HELP kafka_server_FetcherLagMetrics_Value Attribute exposed for management (kafka.server<type=FetcherLagMetrics, name=ConsumerLag, clientId=ReplicaFetcherThread-0-1, topic=orders, partition=0><>Value)
# TYPE kafka_server_FetcherLagMetrics_Value untyped
kafka_server_FetcherLagMetrics_Value{name="ConsumerLag",clientId="ReplicaFetcherThread-0-1",topic="orders",partition="0",} 1250.0
kafka_server_FetcherLagMetrics_Value{name="ConsumerLag",clientId="ReplicaFetcherThread-1-3",topic="orders",partition="1",} 0.0
kafka_server_FetcherLagMetrics_Value{name="ConsumerLag",clientId="ReplicaFetcherThread-0-3",topic="orders",partition="2",} -1.0
kafka_server_FetcherLagMetrics_Value{name="ConsumerLag",clientId="ReplicaAlterLogDirsThread-0",topic="orders",partition="3",} 99.0
# HELP kafka_controller_KafkaController_Value Attribute exposed for management (kafka.controller<type=KafkaController, name=ActiveControllerCount><>Value)
# TYPE kafka_controller_KafkaController_Value untyped
kafka_controller_KafkaController_Value{name="ActiveControllerCount",} 1.0
kafka_controller_KafkaController_Value{name="OfflinePartitionsCount",} 2.0
kafka_controller_KafkaController_Value{name="GlobalTopicCount",} 12.0
# HELP kafka_server_ReplicaManager_Value Attribute exposed for management (kafka.server<type=ReplicaManager, name=UnderMinIsrPartitionCount><>Value)
# TYPE kafka_server_ReplicaManager_Value untyped
kafka_server_ReplicaManager_Value{name="UnderMinIsrPartitionCount",} 3.0
kafka_server_ReplicaManager_Value{name="LeaderCount",} 40.0
# HELP kafka_server_ReplicaManager_OneMinuteRate Attribute exposed for management (kafka.server<type=ReplicaManager, name=IsrShrinksPerSec><>OneMinuteRate)
# TYPE kafka_server_ReplicaManager_OneMinuteRate untyped
kafka_server_ReplicaManager_OneMinuteRate{name="IsrShrinksPerSec",} 0.4
kafka_server_ReplicaManager_OneMinuteRate{name="IsrExpandsPerSec",} 0.35
# HELP kafka_server_ReplicaManager_FiveMinuteRate Attribute exposed for management (kafka.server<type=ReplicaManager, name=IsrShrinksPerSec><>FiveMinuteRate)
# TYPE kafka_server_ReplicaManager_FiveMinuteRate untyped
kafka_server_ReplicaManager_FiveMinuteRate{name="IsrShrinksPerSec",} 0.1
# HELP kafka_server_ReplicaManager_Count Attribute exposed for management (kafka.server<type=ReplicaManager, name=IsrShrinksPerSec><>Count)
# TYPE kafka_server_ReplicaManager_Count untyped
kafka_server_ReplicaManager_Count{name="IsrShrinksPerSec",} 5000.0
"""

STATE_STRIMZI_NAMING = """\
# TYPE kafka_server_fetcherlagmetrics_consumerlag gauge
kafka_server_fetcherlagmetrics_consumerlag{clientId="ReplicaFetcherThread-0-2",topic="payments",partition="7",} 40.0
# TYPE kafka_controller_kafkacontroller_activecontrollercount gauge
kafka_controller_kafkacontroller_activecontrollercount 0.0
# TYPE kafka_controller_kafkacontroller_offlinepartitionscount gauge
kafka_controller_kafkacontroller_offlinepartitionscount 0.0
# TYPE kafka_server_replicamanager_underminisrpartitioncount gauge
kafka_server_replicamanager_underminisrpartitioncount 1.0
# TYPE kafka_server_replicamanager_isrshrinks_total counter
kafka_server_replicamanager_isrshrinks_total 812.0
"""


def _rows(result, table):
    return result.tables.get(table, [])


def test_state_metrics_and_follower_lag_in_default_naming():
    r = parse_metrics(STATE_DEFAULT_NAMING, "broker-2.prom", broker_hint=2)
    assert r.errors == []
    got = {(m["name"], m["labels"]): m["value"] for m in _rows(r, "metrics")}
    assert got == {
        ("active_controller_count", "{}"): 1.0,
        ("offline_partitions_count", "{}"): 2.0,
        ("under_min_isr_partition_count", "{}"): 3.0,
        ("isr_shrink_rate", "{}"): 0.4,  # the OneMinuteRate over the FiveMinuteRate; the Count never
        ("isr_expand_rate", "{}"): 0.35,
    }
    # Leader from the clientId (ReplicaFetcherThread-<fetcher>-<leader>); -1 (no fetch yet) and the
    # log-dir mover's gauge are not a follower's lag.
    assert _rows(r, "replica_lag") == [
        {"broker_id": 2, "topic": "orders", "partition": 0, "leader_id": 1, "lag": 1250},
        {"broker_id": 2, "topic": "orders", "partition": 1, "leader_id": 3, "lag": 0},
    ]


def test_state_metrics_and_follower_lag_in_strimzi_naming():
    r = parse_metrics(STATE_STRIMZI_NAMING, "broker-5.prom", broker_hint=5)
    assert r.errors == []
    got = {m["name"]: m["value"] for m in _rows(r, "metrics")}
    # isrshrinks_total is a counter: one scrape gives no rate, so no isr_shrink_rate.
    assert got == {
        "active_controller_count": 0.0,
        "offline_partitions_count": 0.0,
        "under_min_isr_partition_count": 1.0,
    }
    assert _rows(r, "replica_lag") == [
        {"broker_id": 5, "topic": "payments", "partition": 7, "leader_id": 2, "lag": 40}
    ]


def test_a_scrape_of_only_isr_counters_is_a_failed_source_naming_them():
    text = "# TYPE kafka_server_replicamanager_isrshrinks_total counter\nkafka_server_replicamanager_isrshrinks_total 3.0\n"
    r = parse_metrics(text, "b.prom", broker_hint=1)
    (e,) = r.errors
    assert (
        "only cumulative meter counts recognised (kafka_server_replicamanager_isrshrinks_total"
        in e["message"]
    )


def test_new_canonical_metrics_are_declared():
    for name in (
        "isr_shrink_rate",
        "isr_expand_rate",
        "active_controller_count",
        "under_min_isr_partition_count",
    ):
        assert name in METRICS


# Each broker's own log end offsets (MNT006's acks=1 window). The default naming is what the real
# jmx_exporter 0.6 scrape in shared/real-inputs carries (lowercased there; tests/test_real_metrics.py):
# these lines add the HELP/TYPE lines jmx_exporter prints, the is-future gauge UnifiedLog registers
# for a replica moving between log dirs (label name sanitised to is_future) and a federation duplicate.
# No public scrape in the kafka-2_0_0.yml / Strimzi naming was found: those lines are the name their
# generic two-pair gauge rule produces (kafka_$1_$2_$3 with topic and partition labels, lowercased).
LEO_DEFAULT_NAMING = """\
# HELP kafka_log_Log_Value Attribute exposed for management (kafka.log<type=Log, name=LogEndOffset, topic=orders, partition=0><>Value)
# TYPE kafka_log_Log_Value untyped
kafka_log_Log_Value{name="LogEndOffset",topic="orders",partition="0",} 5120.0
kafka_log_Log_Value{name="LogEndOffset",topic="orders",partition="0",} 5125.0
kafka_log_Log_Value{name="LogStartOffset",topic="orders",partition="0",} 100.0
kafka_log_Log_Value{name="Size",topic="orders",partition="0",} 1048576.0
kafka_log_Log_Value{name="LogEndOffset",topic="orders",partition="1",} 0.0
kafka_log_Log_Value{name="LogEndOffset",topic="orders",partition="2",is_future="true",} 77.0
"""

LEO_STRIMZI_NAMING = """\
# TYPE kafka_log_log_logendoffset gauge
kafka_log_log_logendoffset{topic="payments",partition="7",} 9001.0
# TYPE kafka_log_log_size gauge
kafka_log_log_size{topic="payments",partition="7",} 2048.0
"""


def test_log_end_offsets_in_default_naming():
    r = parse_metrics(LEO_DEFAULT_NAMING, "broker-1.prom", broker_hint=1)
    assert r.errors == [] and r.warnings == []
    # Only LogEndOffset; the duplicate gives the highest; the future log (is-future) is skipped.
    assert _rows(r, "log_end_offsets") == [
        {"broker_id": 1, "topic": "orders", "partition": 0, "log_end_offset": 5125},
        {"broker_id": 1, "topic": "orders", "partition": 1, "log_end_offset": 0},
    ]
    assert _rows(r, "metrics") == [] and _rows(r, "replica_lag") == []


def test_log_end_offsets_in_strimzi_naming():
    r = parse_metrics(LEO_STRIMZI_NAMING, "broker-5.prom", broker_hint=5)
    assert r.errors == [] and r.warnings == []
    assert _rows(r, "log_end_offsets") == [
        {"broker_id": 5, "topic": "payments", "partition": 7, "log_end_offset": 9001}
    ]


def test_log_sizes_alone_are_not_a_usable_scrape():
    text = (
        '# TYPE kafka_log_Log_Value untyped\nkafka_log_Log_Value{name="Size",topic="t",partition="0",} 5.0\n'
    )
    r = parse_metrics(text, "b.prom", broker_hint=1)
    assert "log_end_offsets" not in r.tables and len(r.errors) == 1


# Two scrapes (MNT006: a follower's gap is lag only when it persists into a second scrape).
def test_a_url_with_log_end_offsets_is_scraped_twice_and_both_are_kept():
    """A real HTTP server whose log end offset advances between requests: the first round scrapes
    every URL once, then the URLs that had log end offsets are scraped once more after
    SECOND_SCRAPE_AFTER seconds (here a recorded sleep), and both scrapes' rows are kept, each
    with its own time. A URL without log end offsets is not scraped again."""
    served = {"/leo": 0, "/plain": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            served[self.path] += 1
            leo = 5000 + 40 * served[self.path]
            body = (
                f'kafka_log_Log_Value{{name="LogEndOffset",topic="orders",partition="0",}} {leo}.0\n'
                if self.path == "/leo"
                else "kafka_network_requestchannel_requestqueuesize{} 3\n"
            ).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    slept = []
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        r = collect_metrics(
            [f"broker_id=1:{base}/leo", f"broker_id=2:{base}/plain"], timeout=5, sleep=slept.append
        )
    finally:
        server.shutdown()
        server.server_close()
    assert served == {"/leo": 2, "/plain": 1} and slept == [5.0]
    rows = sorted(r.tables["log_end_offsets"], key=lambda x: x["scraped_at_ms"])
    assert [x["log_end_offset"] for x in rows] == [5040, 5080]
    assert rows[0]["scraped_at_ms"] <= rows[1]["scraped_at_ms"]
    assert len(_rows(r, "metrics")) == 1  # the second scrape's other samples are not read again
    (leo_source,) = [s for s in r.sources if s["target"].endswith("/leo")]
    assert leo_source["status"] == "ok" and leo_source["scrapes"] == 2


def test_a_failed_second_scrape_is_a_warning_and_the_first_stands():
    calls = []

    def fetcher(url, timeout):
        calls.append(url)
        if len(calls) > 1:
            raise TimeoutError("slow")
        return 'kafka_log_Log_Value{name="LogEndOffset",topic="t",partition="0",} 9.0\n'

    r = collect_metrics(
        ["broker_id=3:http://kafka-3.test:7071/metrics"], fetcher=fetcher, sleep=lambda s: None
    )
    assert len(calls) == 2 and r.errors == []
    assert [x["log_end_offset"] for x in r.tables["log_end_offsets"]] == [9]
    assert "second scrape failed (timed out" in r.warnings[0] and r.sources[0]["status"] == "warning"


def test_two_files_of_one_broker_are_two_scrapes_by_their_modification_times(tmp_path):
    import os

    first, second = tmp_path / "b1-0600.prom", tmp_path / "b1-0601.prom"
    first.write_text('kafka_log_Log_Value{name="LogEndOffset",topic="t",partition="0",} 100.0\n')
    second.write_text('kafka_log_Log_Value{name="LogEndOffset",topic="t",partition="0",} 160.0\n')
    os.utime(first, ns=(1_795_327_200_000_000_000, 1_795_327_200_000_000_000))
    os.utime(second, ns=(1_795_327_260_000_000_000, 1_795_327_260_000_000_000))
    slept = []
    r = collect_metrics([f"broker_id=1:{first}", f"broker_id=1:{second}"], sleep=slept.append)
    assert slept == []  # files are never scraped again
    assert sorted((x["scraped_at_ms"], x["log_end_offset"]) for x in r.tables["log_end_offsets"]) == [
        (1_795_327_200_000, 100),
        (1_795_327_260_000, 160),
    ]
    # The collect step keeps each scrape's rows (its key includes the scrape time).
    from auditor.collectors.collect import collect

    _manifest, tables = collect(Sources(metrics=(f"broker_id=1:{first}", f"broker_id=1:{second}")))
    assert sorted(x["log_end_offset"] for x in tables["log_end_offsets"]) == [100, 160]


def test_a_log_end_offsets_own_timestamp_is_its_scrape_time(tmp_path):
    """A saved or federated scrape carries each sample's timestamp (ms in the text format): it wins
    over the file's modification time, so two saved scrapes of a broker stay two scrapes."""
    first, second = tmp_path / "a.prom", tmp_path / "b.prom"
    first.write_text('kafka_log_log_logendoffset{topic="t",partition="0",} 100.0 1795327200000\n')
    second.write_text('kafka_log_log_logendoffset{topic="t",partition="0",} 160.0 1795327205000\n')
    r = collect_metrics([f"broker_id=4:{first}", f"broker_id=4:{second}"])
    assert sorted((x["scraped_at_ms"], x["log_end_offset"]) for x in r.tables["log_end_offsets"]) == [
        (1_795_327_200_000, 100),
        (1_795_327_205_000, 160),
    ]
