"""kafka-audit lint on Docker Compose files (issue 49 item 1): each broker service read by its
image's variable convention, as ../shared/real-inputs/SOURCES.md ("Conventions") gives them.

The eight real compose files of ../shared/real-inputs/compose/ are read in place: each must
lint (never "nothing Kafka in it"), with its broker count, version and findings at the lines
the reviewer would fix. Where no real file holds a case (a single-broker dev file, an
env_file, interpolation defaults, an image lint does not know), the test writes its own
input in tmp_path, shaped as Compose documents it, and says so."""

from __future__ import annotations

from pathlib import Path

import pytest

from auditor.lint import run_lint
from auditor.lint.formats import _envfiles, _images
from auditor.lint.inputs import read_inputs
from tests.conftest import real_input
from tests.test_lint import cli

COMPOSE = "compose/"


def at(result, rule=None):
    return sorted(
        (f.rule, f.location["line"], f.severity) for f in result.findings if rule is None or f.rule == rule
    )


def warnings(result):
    return [n for n in result.notes if n.startswith("warning: ")]


def line_of(path, number: int) -> str:
    return Path(path).read_text(encoding="utf-8").splitlines()[number - 1].strip()


# --- every real compose file lints -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "brokers", "version", "mode"),
    [
        ("hepexta-messaging-kafka-docker-compose.yml", [1, 2, 3], "3.2", "zookeeper"),  # cp-kafka 7.2.1
        ("confluentinc-cp-demo-docker-compose.yml", [1, 2], None, "kraft"),  # tag from an unset variable
        ("sinarostami75-kafka-kraft-docker-cluster-docker-compose.yml", [1, 2, 3], "3.6", "kraft"),
        ("arminshoeibi-kafkadockercompose-bitnami-3.5-cluster.yml", [0, 1, 2], "3.5.0", "kraft"),
        ("mumud-docker-bitnami-kafka-docker-compose-cluster.yaml", [0, 1, 2], "3.2", "zookeeper"),
        ("khiemdoan-kafka-kraft-cluster-docker-compose-compose.yaml", [4, 5, 6, 7], "4.2.0", "kraft"),
        ("luismr-kafka-cluster-docker-compose-docker-compose.yml", [1, 2, 3], None, "kraft"),  # :latest
        ("chenchuk77-kafka-server-docker-compose.yml", [1, 2, 3], "2.3.0", "zookeeper"),
    ],
)
def test_every_real_compose_file_lints_as_one_cluster_of_its_broker_services(name, brokers, version, mode):
    f = real_input(COMPOSE + name)
    inputs = read_inputs([f])
    assert inputs.files == [str(f)] and inputs.unrecognised == []
    assert sorted(b.broker_id for b in inputs.brokers) == brokers
    (facts,) = inputs.clusters
    assert (facts.platform, facts.kafka_version, facts.metadata_mode) == ("compose", version, mode)
    result = run_lint([f])
    assert not result.is_incomplete
    assert not any("no topic or broker definition recognised" in n for n in result.notes)


def test_confluent_cp_kafka_three_brokers_with_two_replica_offsets_topic():
    """cp-kafka 7.2.1: KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: 2 on three brokers; default RF and
    min ISR unset, so Kafka's (1 and 1): the image adds nothing of its own."""
    f = real_input(COMPOSE + "hepexta-messaging-kafka-docker-compose.yml")
    result = run_lint([f])
    assert line_of(f, 32) == "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: 2"
    assert ("REP006", 32, "error") in at(result)
    cfg004 = {f.resource_name: f.location["line"] for f in result.findings if f.rule == "CFG004"}
    assert cfg004 == {"default.replication.factor": 23, "min.insync.replicas": 23}  # kafka1's environment:
    assert line_of(f, 23) == "environment:"
    (kafka1, kafka2, _kafka3) = sorted(read_inputs([f]).brokers, key=lambda b: b.broker_id)
    # ${DOCKER_HOST_IP:-127.0.0.1}: the default; KAFKA_LOG4J_LOGGERS is the launcher's, not a key
    assert kafka1.entries["advertised.listeners"][0].startswith(
        "INTERNAL://kafka1:19092,EXTERNAL://127.0.0.1:9092"
    )
    assert "log4j.loggers" not in kafka1.entries
    assert kafka1.entries["auto.create.topics.enable"] == ("false", 33)
    assert "auto.create.topics.enable" not in kafka2.entries  # the brokers disagree, each as written
    assert kafka1.entries["log.dirs"] == ("/var/lib/kafka/data", 17)  # the image's default, at image:
    assert warnings(result) == []


def test_confluent_kraft_cluster_with_rf3_min_isr2_is_clean():
    f = real_input(COMPOSE + "sinarostami75-kafka-kraft-docker-cluster-docker-compose.yml")
    result = run_lint([f])
    assert {x.severity for x in result.findings} == {"info"}  # DSK005 only: one log dir each
    assert warnings(result) == []
    broker = read_inputs([f]).brokers[0]
    assert broker.entries["min.insync.replicas"] == ("2", 36)
    # a CLUSTER_ID without prefix and KAFKA_JMX_PORT / KAFKA_OPTS are not broker keys
    assert not {"cluster.id", "jmx.port", "opts"} & set(broker.entries)


def test_confluent_server_image_behind_unset_variables_and_its_prefixes():
    """cp-demo: image ${REPOSITORY}/cp-server:${CONFLUENT_DOCKER_TAG} is still cp-server; its
    version is unknown and said; KAFKA_KAFKA_REST_* loses only the prefix; CONFLUENT_METRICS_*
    becomes confluent.metrics.* (cp-server only)."""
    f = real_input(COMPOSE + "confluentinc-cp-demo-docker-compose.yml")
    inputs = read_inputs([f])
    kafka1 = next(b for b in inputs.brokers if b.broker_id == 1)
    assert kafka1.entries["kafka.rest.bootstrap.servers"][1] == 210
    assert kafka1.entries["confluent.metrics.reporter.topic.replicas"] == ("2", 125)
    assert kafka1.entries["sasl.enabled.mechanisms"][0] == "PLAIN, OAUTHBEARER"
    assert kafka1.entries["process.roles"][0] == "broker,controller"
    assert any(
        w.startswith(
            f"{f}:41: service kafka1 image ${{REPOSITORY}}/cp-server:${{CONFLUENT_DOCKER_TAG}} is not evaluated"
        )
        and "the Kafka version its tag implies is unknown" in w
        for w in inputs.unevaluated
    )
    # ${SSL_CIPHER_SUITES} unset, no default: not evaluated, never a default
    assert any(w.startswith(f"{f}:156: service kafka1 KAFKA_SSL_CIPHER_SUITES") for w in inputs.unevaluated)
    assert "ssl.cipher.suites" not in kafka1.entries
    # env_file of a service that is no broker (streams-demo) is not Kafka's business
    assert not any("streams-demo" in w for w in inputs.unevaluated)
    result = run_lint([f])
    assert ("REP006", 101, "error") in at(result)  # offsets RF 2


def test_bitnami_keeps_the_stock_server_properties_for_unset_keys():
    """Bitnami 3.5: only KAFKA_CFG_* are keys, written over the stock file whose internal topics
    have one replica: on three brokers that is REP006, located at the image: line."""
    f = real_input(COMPOSE + "arminshoeibi-kafkadockercompose-bitnami-3.5-cluster.yml")
    inputs = read_inputs([f])
    broker = next(b for b in inputs.brokers if b.broker_id == 0)
    assert broker.entries["offsets.topic.replication.factor"] == ("3", 30)  # the `# https://...` is a comment
    assert broker.entries["transaction.state.log.replication.factor"] == ("1", 15)
    assert line_of(f, 15) == "image: bitnami/kafka:3.5.0-debian-11-r5"
    assert "kraft.cluster.id" not in broker.entries and "cluster.id" not in broker.entries
    result = run_lint([f])
    rep006 = {(x.resource_name, x.location["line"]) for x in result.findings if x.rule == "REP006"}
    assert rep006 == {("transaction.state.log.replication.factor", 15), ("transaction.state.log.min.isr", 15)}
    assert any("keep the image's stock server.properties values" in n for n in result.notes)


def test_bitnami_legacy_alias_and_image_only_variables():
    f = real_input(COMPOSE + "mumud-docker-bitnami-kafka-docker-compose-cluster.yaml")
    broker = next(b for b in read_inputs([f]).brokers if b.broker_id == 0)
    assert broker.entries["inter.broker.listener.name"] == ("INTERNAL", 32)  # KAFKA_ alias of KAFKA_CFG_
    assert not any(k.startswith(("client.", "zookeeper.user", "zookeeper.protocol")) for k in broker.entries)
    result = run_lint([f])
    assert ("REP006", 17, "error") in at(result)  # offsets RF 1 from the stock file


def test_apache_image_keys_and_controllers_are_not_brokers():
    """apache/kafka 4.2.0: three controller-only services and four brokers built from <<: merges;
    KAFKA_CLUSTER_ID becomes cluster.id (this image formats storage with CLUSTER_ID); its unset
    ${KAFKA_CLUSTER_ID} is reported for the brokers only."""
    f = real_input(COMPOSE + "khiemdoan-kafka-kraft-cluster-docker-compose-compose.yaml")
    inputs = read_inputs([f])
    assert [w.split(": service ")[0] for w in inputs.unevaluated if "KAFKA_CLUSTER_ID" in w] == [
        f"{f}:{n}" for n in (130, 155, 180, 205)
    ]
    assert all(
        "(cluster.id) is not evaluated (KAFKA_CLUSTER_ID is not set" in w for w in inputs.unevaluated[:1]
    )
    assert {b.entries["process.roles"][0] for b in inputs.brokers} == {"broker"}
    result = run_lint([f])
    assert {(x.rule, x.resource_name) for x in result.findings if x.severity != "info"} == {
        ("CFG004", "default.replication.factor"),
        ("CFG004", "min.insync.replicas"),
    }


def test_apache_latest_has_no_version_and_kraft_cluster_id_is_a_key_of_its_own():
    f = real_input(COMPOSE + "luismr-kafka-cluster-docker-compose-docker-compose.yml")
    inputs = read_inputs([f])
    assert inputs.clusters[0].kafka_version is None
    assert inputs.unevaluated[0].startswith(
        f"{f}:6: service broker1 KAFKA_KRAFT_CLUSTER_ID = ${{KAFKA_CLUSTER_ID}}"
    )
    assert "(kraft.cluster.id)" in inputs.unevaluated[0]


def test_wurstmeister_topics_and_stock_values():
    f = real_input(COMPOSE + "chenchuk77-kafka-server-docker-compose.yml")
    inputs = read_inputs([f])
    assert [(t.name, t.partitions, t.replication_factor, t.line) for t in inputs.topics] == [
        ("test-topic-1", 1, 2, 16),
        ("test-topic-2", 1, 2, 16),
        ("test-topic-3", 1, 2, 16),
    ]
    broker = next(b for b in inputs.brokers if b.broker_id == 1)
    assert broker.entries["num.partitions"] == ("40", 27)
    assert broker.entries["transaction.state.log.min.isr"] == ("1", 6)  # the stock file's, at image:
    assert "create.topics" not in broker.entries
    result = run_lint([f])
    assert ("DSK008", 24, "warning") in at(result)  # retention.bytes 100 MB below a 1 GiB segment
    assert ("REP006", 6, "error") in at(result)


# --- own inputs -----------------------------------------------------------------------------------


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


DEV = """\
services:
  zookeeper:
    image: confluentinc/cp-zookeeper:7.5.0
  broker:
    image: confluentinc/cp-kafka:7.5.0
    environment:
      KAFKA_BROKER_ID: 1
      KAFKA_ZOOKEEPER_CONNECT: zookeeper:2181
      KAFKA_ADVERTISED_LISTENERS: PLAINTEXT://broker:29092
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: 1
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: 1
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: 1
"""


def test_a_single_broker_dev_compose_file_does_not_fail_review(tmp_path, capsys):
    """Own input: the single-broker quickstart shape Confluent's docs use. One broker: RF 1 is
    all it can hold (REP006, CFG004 and REP003 judge a single-broker cluster as such)."""
    f = write(tmp_path / "docker-compose.yml", DEV)
    result = run_lint([f])
    assert {x.severity for x in result.findings} <= {"info"}
    code, out, _err = cli(capsys, "lint", f)
    assert code == 0 and "1 file(s) linted" in out
    dev_topics = write(
        tmp_path / "wm.yml",
        "services:\n  kafka:\n    image: wurstmeister/kafka:2.13-2.8.1\n    environment:\n"
        "      KAFKA_BROKER_ID: 1\n      KAFKA_ZOOKEEPER_CONNECT: zk:2181\n"
        "      KAFKA_CREATE_TOPICS: events:3:1\n",
    )
    result = run_lint([dev_topics])
    assert at(result, "REP003") == [("REP003", 7, "info")]
    assert "single-broker cluster" in next(x.message for x in result.findings if x.rule == "REP003")


def test_three_brokers_with_min_isr_equal_to_rf_get_rep002(tmp_path):
    """Own input: the same quickstart scaled to three brokers with min ISR = default RF = 3."""
    services = "services:\n"
    for n in (1, 2, 3):
        services += (
            f"  kafka{n}:\n    image: confluentinc/cp-kafka:7.5.0\n    environment:\n"
            f"      KAFKA_BROKER_ID: {n}\n      KAFKA_ZOOKEEPER_CONNECT: zookeeper:2181\n"
            "      KAFKA_DEFAULT_REPLICATION_FACTOR: 3\n      KAFKA_MIN_INSYNC_REPLICAS: 3\n"
        )
    f = write(tmp_path / "compose.yaml", services)
    result = run_lint([f])
    assert ("REP002", 8, "error") in at(result)  # kafka1's KAFKA_MIN_INSYNC_REPLICAS line
    assert line_of(f, 8) == "KAFKA_MIN_INSYNC_REPLICAS: 3"


def test_interpolation_env_files_and_list_form(tmp_path):
    """Own input: list-form environment over two env_files (the later wins, environment wins
    over both), ${VAR:-default}, ${VAR-default} with an empty .env value, $VAR, $$."""
    (tmp_path / ".env").write_text("EMPTY=\nRF=3\n")
    (tmp_path / "base.env").write_text("# shared\nKAFKA_NUM_PARTITIONS=6\nKAFKA_LOG_RETENTION_HOURS=24\n")
    (tmp_path / "prod.env").write_text(
        'export KAFKA_LOG_RETENTION_HOURS="48"  \nKAFKA_NUM_IO_THREADS=16 # tuned\n'
    )
    f = write(
        tmp_path / "docker-compose.yml",
        "services:\n"
        "  kafka:\n"
        "    image: bitnami/kafka:3.7.0\n"
        "    env_file: [base.env, prod.env]\n"
        "    environment:\n"
        "      - KAFKA_CFG_NODE_ID=1\n"
        "      - KAFKA_CFG_DEFAULT_REPLICATION_FACTOR=${RF}\n"
        "      - KAFKA_CFG_MIN_INSYNC_REPLICAS=${MIN_ISR:-2}\n"
        "      - KAFKA_CFG_NUM_NETWORK_THREADS=${EMPTY-9}\n"
        "      - KAFKA_CFG_SASL_JAAS=a$$b\n"
        "      - KAFKA_CFG_UNCLEAN_LEADER_ELECTION_ENABLE=$UNCLEAN\n"
        "      - KAFKA_CFG_NUM_PARTITIONS=12\n",
    )
    inputs = read_inputs([f])
    (broker,) = inputs.brokers
    e = broker.entries
    assert e["default.replication.factor"] == ("3", 7)  # from .env
    assert e["min.insync.replicas"] == ("2", 8)  # the default
    assert e["num.network.threads"] == ("", 9)  # set but empty: `-` keeps it
    assert e["sasl.jaas"] == ("a$b", 10)
    assert "unclean.leader.election.enable" not in e
    assert inputs.unevaluated == [
        f"{f}:11: service kafka KAFKA_CFG_UNCLEAN_LEADER_ELECTION_ENABLE = $UNCLEAN "
        "(unclean.leader.election.enable) is not evaluated (UNCLEAN is not set and has no default, not in .env): "
        "the rules on this key not applied to it"
    ]
    assert e["num.partitions"] == ("12", 12)  # environment over env_file
    assert e["log.retention.hours"] == ("48", 4)  # the later env_file, at the env_file: line
    assert e["num.io.threads"] == ("16", 4)
    # not the stock file's RF 1 for keys the environment sets; the stock value where it does not
    assert e["offsets.topic.replication.factor"] == ("1", 3)


def test_an_env_file_missing_or_outside_the_linted_tree_is_a_warning(tmp_path):
    (tmp_path / "outside.env").write_text("KAFKA_MIN_INSYNC_REPLICAS=2\n")
    project = tmp_path / "project"
    project.mkdir()
    f = write(
        project / "compose.yml",
        "services:\n  kafka:\n    image: apache/kafka:3.9.0\n    env_file:\n"
        "      - ../outside.env\n      - path: ./missing.env\n        required: true\n"
        "      - path: ./optional.env\n        required: false\n"
        "    environment:\n      KAFKA_NODE_ID: 1\n      KAFKA_PROCESS_ROLES: broker,controller\n",
    )
    inputs = read_inputs([f])
    assert len(inputs.unevaluated) == 2
    assert "outside.env is outside the directories given to lint: not read" in inputs.unevaluated[0]
    assert inputs.unevaluated[1] == (
        f"{f}:6: service kafka env_file ./missing.env: no such file: its variables are not evaluated"
    )
    assert "min.insync.replicas" not in inputs.brokers[0].entries
    # given the parent directory, the same env_file is inside the tree and read
    assert read_inputs([tmp_path]).brokers[0].entries["min.insync.replicas"] == ("2", 5)


def test_an_image_lint_does_not_know_is_named_not_guessed(tmp_path, capsys):
    f = write(
        tmp_path / "docker-compose.yml",
        "services:\n  kafka:\n    image: registry.example.com/platform/kafka:1.0.1\n    environment:\n"
        "      KAFKA_BROKER_ID: 1\n      KAFKA_MIN_INSYNC_REPLICAS: 1\n",
    )
    code, out, _err = cli(capsys, "lint", f)
    assert code == 3
    assert f"warning: {f}: looks like Kafka configuration (service kafka) but no service runs an image" in out
    code, _out, err = cli(capsys, "lint", f, "--strict")
    assert code == 2 and err.count("\n") == 1


def test_a_compose_file_without_kafka_is_counted_in_a_walk_and_noted_when_named(tmp_path, capsys):
    web = write(tmp_path / "docker-compose.yml", "services:\n  web:\n    image: nginx:1.27\n")
    write(tmp_path / "kafka.yml", DEV)
    code, out, _err = cli(capsys, "lint", tmp_path)
    assert code == 0 and "1 other file(s) in the given directories passed over" in out
    code, out, _err = cli(capsys, "lint", web)
    assert code == 3 and "skipped: a compose file without a Kafka broker service" in out


def test_malformed_compose_file_is_one_line(tmp_path, capsys):
    f = write(
        tmp_path / "docker-compose.yml", "services:\n  kafka:\n    image: [unclosed\n    environment: {}\n"
    )
    code, _out, err = cli(capsys, "lint", f)
    assert code == 2 and err.count("\n") == 1 and str(f) in err


def test_two_compose_files_in_one_tree_are_two_clusters_with_their_own_broker_ids(tmp_path):
    """Own inputs: dev/ and prod/ both with broker 1 (a properties tree would be one cluster)."""
    (tmp_path / "dev").mkdir()
    (tmp_path / "prod").mkdir()
    write(tmp_path / "dev" / "docker-compose.yml", DEV)
    write(tmp_path / "prod" / "docker-compose.yml", DEV.replace("7.5.0", "7.6.1"))
    inputs = read_inputs([tmp_path])
    assert sorted(c.kafka_version for c in inputs.clusters) == ["3.5", "3.6"]
    assert [b.broker_id for b in inputs.brokers] == [1, 1]
    assert {x.severity for x in run_lint([tmp_path]).findings} <= {"info"}


# --- the conventions themselves ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("image", "variable", "key"),
    [  # SOURCES.md "Conventions", each from the image's own scripts
        (
            "confluentinc/cp-kafka:7.9.0",
            "KAFKA_LISTENER_NAME_INTERNAL_PLAIN_SASL_JAAS_CONFIG",
            "listener.name.internal.plain.sasl.jaas.config",
        ),
        (
            "confluentinc/cp-server:7.9.0",
            "KAFKA_KAFKA_REST_CLIENT_SSL_KEYSTORE_LOCATION",
            "kafka.rest.client.ssl.keystore.location",
        ),
        (
            "apache/kafka:3.7.0",
            "KAFKA_KAFKA_REST_CLIENT_SSL_KEYSTORE_LOCATION",
            "rest.client.ssl.keystore.location",
        ),
        (
            "confluentinc/cp-kafka:7.9.0",
            "KAFKA_LISTENER_NAME_SASL__PLAINTEXT_X___Y",
            "listener.name.sasl_plaintext.x-y",
        ),
        (
            "apache/kafka:3.7.0",
            "KAFKA_LISTENER_NAME_SASL__PLAINTEXT_X___Y",
            "listener.name.sasl_plaintext.x-y",
        ),
        (
            "confluentinc/cp-server:7.9.0",
            "CONFLUENT_METRICS_REPORTER_TOPIC_REPLICAS",
            "confluent.metrics.reporter.topic.replicas",
        ),
        ("confluentinc/cp-kafka:7.9.0", "CONFLUENT_METRICS_REPORTER_TOPIC_REPLICAS", None),  # cp-server only
        ("confluentinc/cp-kafka:7.9.0", "KAFKA_HEAP_OPTS", None),
        ("confluentinc/cp-kafka:7.9.0", "KAFKA_SSL_KEYSTORE_FILENAME", None),
        ("confluentinc/cp-kafka:7.9.0", "KAFKA_ZOOKEEPER_CLIENT_CNXN_SOCKET", "zookeeper.clientCnxnSocket"),
        ("bitnami/kafka:3.7.0", "KAFKA_CFG_LISTENER_NAME_SASL_SSL_X", "listener.name.sasl_ssl.x"),
        ("bitnami/kafka:3.7.0", "KAFKA_MIN_INSYNC_REPLICAS", None),  # not an alias: an image setting
        ("bitnami/kafka:3.7.0", "KAFKA_NUM_IO_THREADS", "num.io.threads"),  # an alias
        ("bitnami/kafka:3.7.0", "KAFKA_CFG_ZOOKEEPER_CLIENTCNXNSOCKET", "zookeeper.clientCnxnSocket"),
        ("wurstmeister/kafka:2.12-2.3.0", "KAFKA_LOG_RETENTION_HOURS", "log.retention.hours"),
        ("wurstmeister/kafka:2.12-2.3.0", "KAFKA_CREATE_TOPICS", None),
    ],
)
def test_variable_to_key_by_convention(image, variable, key):
    parsed = _images.parse_image(image)
    assert _images.broker_key(_images.convention(parsed), variable) == key


@pytest.mark.parametrize(
    ("image", "version"),
    [  # Confluent Platform -> Apache Kafka: Confluent's "Supported Versions and Interoperability"
        ("confluentinc/cp-kafka:7.2.1", "3.2"),
        ("confluentinc/cp-server:8.0.0", "4.0"),
        ("confluentinc/cp-enterprise-kafka:5.3.1", "2.3"),
        ("confluentinc/cp-kafka:6.2.4", "2.8"),
        ("confluentinc/cp-kafka:4.1.0", "1.1"),
        ("confluentinc/cp-kafka:3.3.0", "0.11.0"),
        ("confluentinc/cp-kafka:latest", None),
        ("docker.io/bitnami/kafka:3.5.0-debian-11-r5", "3.5.0"),
        ("bitnami/kafka:3.2", "3.2"),
        ("apache/kafka:4.2.0", "4.2.0"),
        ("apache/kafka-native:3.8.0", "3.8.0"),
        ("wurstmeister/kafka:2.12-2.3.0", "2.3.0"),
        ("my.registry/kafka:1.0.1", None),
    ],
)
def test_kafka_version_from_image_tag(image, version):
    parsed = _images.parse_image(image)
    assert _images.kafka_version(parsed, _images.convention(parsed)) == version


@pytest.mark.parametrize(
    ("text", "variables", "expected"),
    [
        ("${A:-x}", {}, ("x", [])),
        ("${A:-x}", {"A": ""}, ("x", [])),
        ("${A-x}", {"A": ""}, ("", [])),
        ("${A:+y}", {"A": "1"}, ("y", [])),
        ("${A:+y}", {}, ("", [])),
        ("${A:?required}", {}, (None, ["A"])),
        ("$A/$B", {"A": "1"}, (None, ["B"])),
        ("${A:-${B:-z}}", {}, ("z", [])),
        ("$$HOME", {}, ("$HOME", [])),
        ("price: 5$", {}, ("price: 5$", [])),
    ],
)
def test_compose_interpolation(text, variables, expected):
    assert _envfiles.interpolate(text, variables) == expected


def test_a_secret_in_a_value_that_is_not_evaluated_is_never_shown(tmp_path):
    """Own input: a keystore password mixing a literal secret with an unset variable; the
    warning names the variable, never the literal part (Kafka masks the key's value)."""
    f = write(
        tmp_path / "docker-compose.yml",
        "services:\n  kafka:\n    image: confluentinc/cp-kafka:7.6.1\n    environment:\n"
        "      KAFKA_BROKER_ID: 1\n      KAFKA_SSL_KEYSTORE_PASSWORD: hunter2-${SUFFIX}\n",
    )
    inputs = read_inputs([f])
    (warning,) = inputs.unevaluated
    assert "hunter2" not in warning and "${SUFFIX}" in warning and "(ssl.keystore.password)" in warning
    result = run_lint([f])
    assert "hunter2" not in repr(result)
