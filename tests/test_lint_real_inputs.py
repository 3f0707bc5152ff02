"""kafka-audit lint on the real-input corpus (../shared/real-inputs, origins in its SOURCES.md),
used in place: a stock Kafka config directory, KRaft controller/broker/combined files, and
topic definitions in the formats people commit (Strimzi, jikkou, topicctl, kafka-gitops,
JulieOps). Issue 15, items 1-3."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from auditor.config import parse_config
from auditor.lint import run_lint
from auditor.lint.inputs import read_inputs
from tests.conftest import real_input
from tests.test_lint import cli

STOCK_DIR = "properties/apache-kafka-3.7.0-config-dir"
UNRECOGNISED = "no topic or broker definition recognised"


def topics_of(inputs):
    return sorted(
        (
            t.name,
            Path(t.file).name,
            t.line,
            t.partitions,
            t.replication_factor,
            {k: v for k, (v, _line) in t.configs.items()},
        )
        for t in inputs.topics
    )


def where(result, rule=None):
    return sorted(
        (f.rule, f.resource_name, Path(f.location["file"]).name, f.location["line"])
        for f in result.findings
        if rule is None or f.rule == rule
    )


# --- properties: what each file is ----------------------------------------------------------------


def test_stock_config_dir_is_one_broker_and_fourteen_notes():
    d = real_input(STOCK_DIR)
    inputs = read_inputs([d])
    assert [(Path(b.file).name, b.broker_id, b.kind) for b in inputs.brokers] == [
        ("server.properties", 0, "broker")
    ]
    kinds = {Path(n.split(": skipped: ")[0]).name: n.split(": skipped: ")[1] for n in inputs.notes}
    assert len(inputs.notes) == 14
    client = "a client configuration (producer, consumer, admin, Connect or MirrorMaker), not a broker's"
    assert kinds == {
        **{
            f"connect-{n}.properties": client
            for n in (
                "console-sink",
                "console-source",
                "distributed",
                "file-sink",
                "file-source",
                "mirror-maker",
                "standalone",
            )
        },
        "consumer.properties": client,
        "producer.properties": client,
        "connect-log4j.properties": "a logging (log4j) configuration",
        "log4j.properties": "a logging (log4j) configuration",
        "tools-log4j.properties": "a logging (log4j) configuration",
        "zookeeper.properties": "a ZooKeeper server configuration, not a broker's",
        "trogdor.conf": "no broker setting recognised (a JSON document, not properties)",
    }
    assert inputs.unrecognised == []


def test_stock_config_dir_findings_are_the_brokers_only():
    result = run_lint([real_input(STOCK_DIR)])
    assert {Path(f.location["file"]).name for f in result.findings} == {"server.properties"}
    assert where(result) == [("DSK005", "0", "server.properties", 62)]  # log.dirs=/tmp/kafka-logs
    assert not [
        f for f in result.findings if f.rule == "CFG001"
    ]  # compression.type=none: a producer's, legal
    assert not [f for f in result.findings if f.rule in ("CFG002", "CFG004")]  # no 15-broker cluster
    assert result.files == [str(real_input(STOCK_DIR) / "server.properties")]


def test_stock_config_dir_text_report(capsys):
    d = real_input(STOCK_DIR)
    code, out, err = cli(capsys, "lint", d, "--strict")  # every file is recognised: strict passes
    assert code == 0 and err == ""
    assert "1 file(s) linted (14 skipped): 0 critical, 0 error, 0 warning, 1 info" in out
    assert f"note: {d / 'trogdor.conf'}: skipped: no broker setting recognised" in out
    assert f"note: {d / 'producer.properties'}: skipped: a client configuration" in out


def test_trogdor_conf_named_is_a_warning_and_strict_an_error(capsys):
    f = real_input(f"{STOCK_DIR}/trogdor.conf")
    code, out, _err = cli(capsys, "lint", f)
    assert code == 3 and f"warning: {f}: {UNRECOGNISED} (a JSON document, not properties)" in out
    code, out, err = cli(capsys, "lint", f, "--strict")
    assert (
        code == 2
        and out == ""
        and err == f"kafka-audit: {f}: {UNRECOGNISED} (a JSON document, not properties)\n"
    )


def test_named_client_file_is_noted_not_linted(capsys):
    f = real_input(f"{STOCK_DIR}/producer.properties")
    code, out, _err = cli(capsys, "lint", f)
    assert code == 3  # nothing could be linted: never green
    assert "0 file(s) linted (1 skipped)" in out and f"note: {f}: skipped: a client configuration" in out
    assert "CFG001" not in out


def test_kraft_controller_is_a_controller_broker_and_combined_are_brokers():
    files = [
        real_input(f"properties/apache-kafka-3.7.0-kraft-{n}.properties")
        for n in ("controller", "broker", "server")
    ]
    inputs = read_inputs(files)
    assert sorted((Path(b.file).name, b.broker_id, b.kind) for b in inputs.brokers) == [
        ("apache-kafka-3.7.0-kraft-broker.properties", 2, "broker"),
        ("apache-kafka-3.7.0-kraft-server.properties", 1, "combined"),
    ]
    assert inputs.notes == [
        f"{files[0]}: skipped: a KRaft controller (process.roles=controller), not a broker"
    ]
    result = run_lint(files)
    assert not [f for f in result.findings if "controller.properties" in f.location["file"]]
    cfg004 = [f for f in result.findings if f.rule == "CFG004"]
    assert cfg004 and all("cluster of 2 brokers" in f.message for f in cfg004)  # not 3


@pytest.mark.parametrize(
    ("name", "broker_id", "kind"),
    [
        ("apache-kafka-0.10.2.1-server.properties", 0, "broker"),
        ("apache-kafka-2.8.2-server.properties", 0, "broker"),
        ("apache-kafka-3.7.0-server.properties", 0, "broker"),
        ("derived/apache-kafka-3.7.0-server.syntax-variant.properties", 0, "broker"),
        ("apache-kafka-docker-ssl-broker-noid.properties", None, "broker"),
        ("helk-unclean-election.properties", 0, "broker"),
        ("kafka-auth-sasl-plain-empty-value.properties", 0, "broker"),
        ("kafka_kerberose-ssl-sasl-acl.properties", 0, "broker"),
        ("kc596-sasl-plain-acl-fragment.properties", None, "broker"),
        ("strimzi-kafka38-describe-dump.properties", 1, "broker"),
        ("strimzi-rendered-kraft-broker-jbod.properties", 1, "broker"),
        ("tiered-storage-kraft-rsm-prefix.properties", 1, "combined"),
        ("yolean-kubernetes-kafka-infinite-retention.properties", 0, "broker"),
    ],
)
def test_every_real_broker_file_is_a_broker(name, broker_id, kind):
    inputs = read_inputs([real_input(f"properties/{name}")])
    assert [(b.declared_id, b.kind) for b in inputs.brokers] == [(broker_id is not None, kind)]
    if broker_id is not None:
        assert inputs.brokers[0].broker_id == broker_id
    assert inputs.notes == [] and inputs.unrecognised == []


# --- topics: what each file defines -----------------------------------------------------------------


def test_jikkou_v1beta2_2022_spec_topics():
    inputs = read_inputs([real_input("topics/jikkou-v1beta2-2022-spec-topics-list.yaml")])
    assert topics_of(inputs) == [
        ("bench-p1-r1", "jikkou-v1beta2-2022-spec-topics-list.yaml", 13, 1, 1, {"min.insync.replicas": "1"}),
        ("bench-p3-r1", "jikkou-v1beta2-2022-spec-topics-list.yaml", 7, 3, 1, {"min.insync.replicas": "1"}),
    ]
    assert [t.configs["min.insync.replicas"][1] for t in sorted(inputs.topics, key=lambda t: t.line)] == [
        11,
        17,
    ]
    assert where(run_lint(inputs.files)) == [
        ("REP003", "bench-p1-r1", "jikkou-v1beta2-2022-spec-topics-list.yaml", 13),
        ("REP003", "bench-p3-r1", "jikkou-v1beta2-2022-spec-topics-list.yaml", 7),
    ]


def test_topicctl_topic_files():
    inputs = read_inputs(
        [real_input("topics/topicctl-topic-default.yaml"), real_input("topics/topicctl-topic-static.yaml")]
    )
    assert topics_of(inputs) == [
        (
            "topic-default",
            "topicctl-topic-default.yaml",
            2,
            3,
            2,
            {"cleanup.policy": "delete", "max.message.bytes": "5542880", "retention.ms": str(100 * 60_000)},
        ),
        ("topic-static", "topicctl-topic-static.yaml", 2, 10, 2, {"retention.ms": str(290 * 60_000)}),
    ]
    default = next(t for t in inputs.topics if t.name == "topic-default")
    assert {k: line for k, (_v, line) in default.configs.items()} == {
        "cleanup.policy": 16,
        "max.message.bytes": 17,
        "retention.ms": 12,
    }  # retentionMinutes' line
    result = run_lint(inputs.files, config=parse_config({"select": ["REP", "CFG"]}, "test"))
    assert result.findings == [] and result.notes == []  # RF 2, min.insync.replicas 1: nothing fires


def test_kafka_gitops_state_file():
    inputs = read_inputs([real_input("topics/kafka-gitops-topics.yaml")])
    assert topics_of(inputs) == [("my-test-topic", "kafka-gitops-topics.yaml", 2, 6, 3, {})]
    # min.insync.replicas is inherited (Kafka's 1): one finding about the setting, at the topic
    assert where(run_lint(inputs.files)) == [("REP004", "min.insync.replicas", "kafka-gitops-topics.yaml", 2)]


def test_julieops_descriptor():
    inputs = read_inputs([real_input("topics/julieops-descriptor.yaml")])
    prefix = "context.company.env.source"
    assert topics_of(inputs) == [
        (f"{prefix}.projectA.bar.avro", "julieops-descriptor.yaml", 51, 1, 1, {}),
        (f"{prefix}.projectA.foo", "julieops-descriptor.yaml", 47, 1, 1, {}),
        (f"{prefix}.projectB.bar.avro", "julieops-descriptor.yaml", 59, 1, 1, {}),
        (f"{prefix}.projectC.topicE", "julieops-descriptor.yaml", 73, 1, 1, {}),
        (f"{prefix}.projectC.topicF", "julieops-descriptor.yaml", 77, 1, 1, {}),
    ]
    # the streams' and connectors' read/write lists name topics, they do not define them
    assert where(run_lint(inputs.files), "REP003") == [
        ("REP003", f"{prefix}.projectA.bar.avro", "julieops-descriptor.yaml", 51),
        ("REP003", f"{prefix}.projectA.foo", "julieops-descriptor.yaml", 47),
        ("REP003", f"{prefix}.projectB.bar.avro", "julieops-descriptor.yaml", 59),
        ("REP003", f"{prefix}.projectC.topicE", "julieops-descriptor.yaml", 73),
        ("REP003", f"{prefix}.projectC.topicF", "julieops-descriptor.yaml", 77),
    ]


@pytest.mark.parametrize("name", ["strimzi-v1-kafka-jbod-cr.yaml", "strimzi-v1-kafka-persistent-cr.yaml"])
def test_strimzi_cluster_resources_are_read_as_the_brokers_configuration(name):
    """Kafka + KafkaNodePool CRs (issue 33): spec.kafka.config is every broker's configuration,
    the node pools give the broker count and (JBOD) the log dirs."""
    f = real_input(f"topics/{name}")
    inputs = read_inputs([f])
    assert inputs.unrecognised == [] and inputs.files == [str(f)]
    assert {b.group for b in inputs.brokers} == {"Kafka/my-cluster"}
    assert len(inputs.brokers) == 3  # the broker pool's replicas
    entries = inputs.brokers[0].entries
    assert entries["min.insync.replicas"][0] == "2" and entries["default.replication.factor"][0] == "3"
    assert (
        Path(f).read_text().splitlines()[entries["min.insync.replicas"][1] - 1].strip()
        == "min.insync.replicas: 2"
    )


def test_strimzi_and_jikkou_topics_still_read():
    inputs = read_inputs(
        [real_input("topics/strimzi-v1-kafka-topic.yaml"), real_input("topics/jikkou-v1-kafka-topics.yaml")]
    )
    assert topics_of(inputs) == [
        (
            "my-topic",
            "strimzi-v1-kafka-topic.yaml",
            4,
            1,
            1,
            {"retention.ms": "7200000", "segment.bytes": "1073741824"},
        ),
        (
            "my-topic-p3-r1",
            "jikkou-v1-kafka-topics.yaml",
            5,
            3,
            1,
            {"min.insync.replicas": "1", "cleanup.policy": "delete"},
        ),
        (
            "my-topic-p4-r1",
            "jikkou-v1-kafka-topics.yaml",
            18,
            4,
            1,
            {"min.insync.replicas": "1", "cleanup.policy": "delete"},
        ),
    ]


# --- one topic, several files ------------------------------------------------------------------------

STRIMZI_MY_TOPIC = [
    "strimzi-v1-kafka-topic.yaml",
    "strimzi-v1-scram-topic.yaml",
    "strimzi-v1beta2-0.45.0-kafka-topic.yaml",
    "strimzi-v1-topic-minimal.yaml",
]


def test_my_topic_in_four_strimzi_files_is_linted_per_definition():
    files = [real_input(f"topics/{n}") for n in STRIMZI_MY_TOPIC]
    result = run_lint(files)
    assert where(result) == [
        # retention.ms 2 h under the default segment.ms of 7 days (the scram file sets the same):
        # DSK008's one finding per cluster about segment.ms (info), at each definition it names
        ("DSK008", "segment.ms", "strimzi-v1-kafka-topic.yaml", 4),
        ("DSK008", "segment.ms", "strimzi-v1-scram-topic.yaml", 4),
        ("DSK008", "segment.ms", "strimzi-v1beta2-0.45.0-kafka-topic.yaml", 4),
        ("REP003", "my-topic", "strimzi-v1-kafka-topic.yaml", 4),  # replicas 1
        ("REP003", "my-topic", "strimzi-v1beta2-0.45.0-kafka-topic.yaml", 4),  # the same definition
        # replicas 3 inheriting Kafka's min.insync.replicas 1: one finding about the setting
        ("REP004", "min.insync.replicas", "strimzi-v1-scram-topic.yaml", 4),
    ]
    assert {f.severity for f in result.findings if f.rule == "DSK008"} == {"info"}
    warning = next(
        n for n in result.notes if n.startswith("warning: topic my-topic has 3 different definitions")
    )
    f = {Path(x).name: str(x) for x in files}
    assert (
        f"{f['strimzi-v1-kafka-topic.yaml']}:4 and {f['strimzi-v1beta2-0.45.0-kafka-topic.yaml']}:4: "
        "partitions 1, replication_factor 1"
    ) in warning
    assert f"{f['strimzi-v1-scram-topic.yaml']}:4: partitions 10, replication_factor 3" in warning
    assert f"{f['strimzi-v1-topic-minimal.yaml']}:4: partitions unset, replication_factor unset" in warning


def test_two_strimzi_files_in_both_orders(capsys):
    a, b = (real_input(f"topics/{n}") for n in STRIMZI_MY_TOPIC[:2])
    first = cli(capsys, "lint", a, b, "--format", "json")
    second = cli(capsys, "lint", b, a, "--format", "json")
    assert first == second
    code, out, err = first
    assert code == 1  # REP003 is an error
    got = sorted(
        (x["rule"], Path(x["location"]["file"]).name, x["location"]["line"])
        for x in json.loads(out)["findings"]
    )
    assert got == [("DSK008", a.name, 4), ("DSK008", b.name, 4), ("REP003", a.name, 4), ("REP004", b.name, 4)]
    assert err.startswith("kafka-audit: warning: topic my-topic has 2 different definitions: ")


def test_the_whole_topic_corpus_in_any_order(capsys):
    files = sorted(real_input("topics").glob("*.yaml"))
    assert len(files) == 15
    forward = cli(capsys, "lint", *files)
    backward = cli(capsys, "lint", *reversed(files))
    assert forward == backward
    code, out, _err = forward
    assert code == 1
    assert "15 file(s) linted: " in out  # the two Kafka CRs are read too (issue 33)
    warnings = [line for line in out.splitlines() if line.startswith("warning: ")]
    assert [w.split(":")[1].strip() for w in warnings if UNRECOGNISED not in w] == [
        "topic my-topic has 3 different definitions",
        "topic my-topic-p3-r1 has 2 different definitions",
        "topic my-topic-p4-r1 has 2 different definitions",
    ]
    assert [w for w in warnings if UNRECOGNISED in w] == []


# --- issue 36: racks, controlled shutdown and auto-creation on the real files ------------------------

SEARCH_INGEST = (
    Path(__file__).resolve().parent.parent / "sample_configs/fleet/dt=2026-11-22/cluster=search-ingest"
)
STOCK_SERVER = "properties/apache-kafka-3.7.0-server.properties"


def test_stock_server_properties_alone_has_no_rack_finding():
    # one broker and no zone count: nothing says the cluster spans racks
    assert where(run_lint([real_input(STOCK_SERVER)]), "REP011") == []


def test_stock_server_properties_added_to_a_racked_cluster_is_rep011():
    # Kafka's stock file sets no broker.rack: as broker 0 of search-ingest (brokers 1-6 in
    # three zones, KRaft) it is the one broker without a rack, reported at its file
    result = run_lint([real_input(STOCK_SERVER)], against=str(SEARCH_INGEST))
    assert where(result, "REP011") == [("REP011", "0", "apache-kafka-3.7.0-server.properties", 1)]
    [finding] = [f for f in result.findings if f.rule == "REP011"]
    assert finding.evidence["brokers_with_rack"] == [1, 2, 3, 4, 5, 6]
    assert "the KRaft controller places rack-less brokers as one extra rack" in finding.message


@pytest.mark.parametrize(
    ("name", "line"),
    [("tiered-storage-kraft-rsm-prefix.properties", 17), ("strimzi-kafka38-describe-dump.properties", 6)],
)
def test_auto_create_topics_true_against_a_production_cluster_is_cfg007(name, line):
    # search-ingest is labelled prod; its other brokers keep Kafka's default (true): one finding
    # for the whole cluster, at the line of the file that sets it
    result = run_lint([real_input(f"properties/{name}")], against=str(SEARCH_INGEST))
    assert where(result, "CFG007") == [("CFG007", "auto.create.topics.enable", name, line)]
    [finding] = [f for f in result.findings if f.rule == "CFG007"]
    assert finding.evidence["brokers"] == [1, 2, 3, 4, 5, 6] and finding.evidence["environment"] == "prod"


def test_auto_create_topics_false_on_one_broker_is_not_reported_at_its_line():
    # HELK's broker 0 sets it false (line 143); search-ingest's brokers 1-6 keep Kafka's true:
    # those findings are about brokers the file does not touch (left out), none points at line 143
    result = run_lint([real_input("properties/helk-unclean-election.properties")], against=str(SEARCH_INGEST))
    assert where(result, "CFG007") == []
    assert where(result, "REP011") == [("REP011", "0", "helk-unclean-election.properties", 1)]


def test_auto_create_topics_needs_the_clusters_production_label():
    # files alone name no environment: CFG007 runs only with --against
    assert (
        where(run_lint([real_input("properties/tiered-storage-kraft-rsm-prefix.properties")]), "CFG007") == []
    )


def test_strimzi_dump_keeps_controlled_shutdown_on():
    # controlled.shutdown.enable=true (line 24) and auto.leader.rebalance.enable=true (line 8)
    dump = real_input("properties/strimzi-kafka38-describe-dump.properties")
    assert where(run_lint([dump]), "CFG005") == []
    assert where(run_lint([dump], against=str(SEARCH_INGEST)), "CFG006") == []
