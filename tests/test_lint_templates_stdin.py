"""kafka-audit lint on rendered streams (`lint -`, issue 49 item 5), templates (item 6, and item
9's "*.yaml.tpl read as server.properties"), cp-helm-charts umbrella values (item 9) and the
Kafka version of Helm and CFK images (item 10).

Real files of ../shared/real-inputs/templated/ and helm/ are read in place; the stream is piped
into a real `python -m auditor.cli.main lint -` subprocess. A Strimzi KafkaTopic kept as a
Terraform templatefile with ${...} only in its metadata, a properties template and a Helm chart
template with a Kafka value templated are own inputs (SOURCES.md: no such KafkaTopic template was
found in a repository not used before)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

from auditor.lint import run_lint
from auditor.lint.inputs import read_inputs
from tests.conftest import real_input
from tests.test_lint import cli

ROOT = Path(__file__).resolve().parent.parent
STREAM = "templated/clowder-kuttl-strimzi-ephemeral-rendered-stream.yaml"


def lint_stdin(data: bytes, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", "lint", "-", *args],
        input=data,
        capture_output=True,
        cwd=ROOT,
        timeout=300,
    )


def warnings(result):
    return [n for n in result.notes if n.startswith("warning: ")]


def after_file(lines, f) -> list[str]:
    """Warnings without their file name: ["LINE: what ..."]."""
    return [w[len(str(f)) + 1 :] for w in lines]


def line_of(path, number: int) -> str:
    return Path(path).read_text(encoding="utf-8").splitlines()[number - 1].strip()


# --- lint - ----------------------------------------------------------------------------------------


def test_a_rendered_stream_on_standard_input_through_the_real_command():
    """The Clowder operator's rendered stream: a kuttl TestAssert, a Strimzi Kafka without
    metadata.name (one broker, ZooKeeper mode), a KafkaConnect and two Secrets. Only the Kafka is
    linted; the other kinds pass silently; findings name <stdin> and the document's line."""
    stream = real_input(STREAM).read_bytes()
    p = lint_stdin(stream)
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr.decode()
    assert "<stdin>:9: INFO DSK005 single-log-dir: broker 1" in out  # the Kafka document starts at line 9
    assert "1 file(s) linted" in out
    assert "Secret" not in out and "KafkaConnect" not in out
    assert not any(line.startswith("warning:") for line in out.splitlines())
    p = lint_stdin(stream, "--format", "json", "--fail-on", "info")
    report = json.loads(p.stdout)
    assert p.returncode == 1
    assert {(f["rule"], f["location"]["file"], f["location"]["line"]) for f in report["findings"]} == {
        ("DSK005", "<stdin>", 9)
    }


def test_a_stream_of_mixed_kinds_with_a_topic_problem():
    """Own stream, as `helm template` prints one: a Service, a KafkaTopic with RF 3 and min ISR 3,
    a Deployment. REP002 at the topic's min.insync.replicas line of the stream."""
    stream = (
        "---\n# Source: chart/templates/svc.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\n"
        "---\n# Source: chart/templates/topic.yaml\napiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaTopic\n"
        "metadata:\n  name: orders\n  labels:\n    strimzi.io/cluster: main\nspec:\n  partitions: 6\n"
        "  replicas: 3\n  config:\n    min.insync.replicas: 3\n"
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n"
    )
    result = run_lint(["-"], stdin=io.BytesIO(stream.encode()))
    assert [(f.rule, f.location) for f in result.findings] == [("REP002", {"file": "<stdin>", "line": 12})]
    assert stream.splitlines()[11] == "  name: orders"  # a topic's finding is at its name
    assert result.files == ["<stdin>"] and warnings(result) == []


def test_a_stream_with_nothing_kafka_is_not_green(capsys):
    p = lint_stdin(b"apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n")
    assert p.returncode == 3
    assert "INCOMPLETE lint: none of the 1 file(s) given could be linted" in p.stdout.decode()
    assert "<stdin>: no topic or broker definition recognised (found: v1 Secret)" in p.stdout.decode()


def test_standard_input_is_bounded_and_must_be_text(monkeypatch, capsys):
    from auditor.lint import yaml_fields

    p = lint_stdin(b"\xff\xfe not utf-8\n")
    assert (
        p.returncode == 2
        and p.stderr.decode().count("\n") == 1
        and "<stdin>: not UTF-8 text" in p.stderr.decode()
    )
    monkeypatch.setattr(yaml_fields, "MAX_YAML_BYTES", 64)
    try:
        run_lint(["-"], stdin=io.BytesIO(b"a: b\n" * 20))
    except Exception as e:  # noqa: BLE001
        assert str(e) == "<stdin>: larger than 64 bytes: refused"
    else:
        raise AssertionError("a stream over the limit was read")


def test_standard_input_with_files_and_a_compose_stream(tmp_path):
    """`docker compose config | kafka-audit lint -`: the rendered compose file is read as compose."""
    compose = (
        "services:\n  kafka:\n    image: apache/kafka:3.9.0\n    environment:\n      KAFKA_NODE_ID: '1'\n"
    )
    topics = tmp_path / "topics.yaml"
    topics.write_text("- name: t\n  partitions: 1\n  replication_factor: 1\n")
    inputs = read_inputs(["-", topics], stdin=io.BytesIO(compose.encode()))
    assert inputs.files == [str(topics), "<stdin>"]
    assert [(b.file, b.broker_id) for b in inputs.brokers] == [("<stdin>", 1)]
    assert inputs.clusters[0].kafka_version == "3.9.0"


# --- templates -------------------------------------------------------------------------------------


def test_an_envsubst_strimzi_template_is_yaml_not_properties():
    """sempernow kafka.yaml.tpl: read as the Strimzi resources it renders to (it was read as
    server.properties, with CFG002 on 'spec' and 'strimzi.io/cluster'); $KAFKA_CLUSTER in the
    metadata links the node pools to the Kafka as written; each placeholder is reported."""
    f = real_input("templated/sempernow-strimzi-kafka-envsubst-kafka.yaml.tpl")
    inputs = read_inputs([f])
    (broker,) = {b.group: b for b in inputs.brokers}.values()
    assert broker.group == "Kafka/$KAFKA_CLUSTER" and broker.brokers == 3  # the broker pool's replicas
    assert broker.entries["min.insync.replicas"] == ("1", 99)
    notes = [w.split(": ", 1)[1] for w in inputs.unevaluated]
    assert (
        f"{f}:49: metadata.name = $KAFKA_CLUSTER is a template placeholder: not evaluated".split(": ", 1)[1]
        in notes
    )
    assert any(w.startswith(f"{f}:55: spec.kafka.version = $KAFKA_VERSION") for w in inputs.unevaluated)
    assert inputs.clusters[0].kafka_version is None
    assert not any("KafkaUser" in w or ":111:" in w for w in inputs.unevaluated)  # not a document lint reads
    result = run_lint([f])
    assert not any(x.rule == "CFG002" for x in result.findings)
    # RF 2 internal topics (96, 97) and Kafka's transaction.state.log.min.isr=2 at the config: line
    rep006 = {(x.resource_name, x.location["line"]) for x in result.findings if x.rule == "REP006"}
    assert rep006 == {
        ("offsets.topic.replication.factor", 96),
        ("transaction.state.log.replication.factor", 97),
        ("transaction.state.log.min.isr", 90),
    }


def test_a_terraform_templatefile_of_a_cfk_stream():
    """rhbelson zone.tpl (no inner suffix: YAML by content): the CFK Kafka is linted; its
    ${broker_replicas} and the image tag ${cp_version} are reported, never guessed."""
    f = real_input("templated/rhbelson-vz-confluent-5gedge-cfk-zone.tpl")
    inputs = read_inputs([f])
    (broker,) = inputs.brokers
    assert broker.entries == {"confluent.cluster.link.enable": ("true", 42)}
    assert any(w.startswith(f"{f}:58: spec.replicas = ${{broker_replicas}}") for w in inputs.unevaluated)
    assert any(
        w.startswith(f"{f}:45: spec.image.application = confluentinc/cp-server:${{cp_version}}")
        for w in inputs.unevaluated
    )
    assert inputs.clusters[0].kafka_version is None
    assert not any(":18:" in w for w in inputs.unevaluated)  # the Zookeeper resource: not linted
    result = run_lint([f])
    assert not any(
        x.rule == "CFG002" and x.resource_name in ("nodeSelectorTerms", "-") for x in result.findings
    )


def test_a_helm_template_whose_kafka_settings_are_all_templated_is_refused(capsys):
    f = real_input("templated/theodolite-helm-strimzi-kafka-cluster.yaml")
    code, out, _err = cli(capsys, "lint", f)
    assert code == 3
    assert (
        f"warning: {f}: looks like Kafka configuration (kafka.strimzi.io) but it is a template, which lint does not "
        "render, and its Kafka settings are themselves templated (spec.kafka.config at line 22)" in out
    )
    assert line_of(f, 21) == "config:"
    code, _out, err = cli(capsys, "lint", f, "--strict")
    assert code == 2 and err.count("\n") == 1


TOPIC_TPL = """\
apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaTopic
metadata:
  name: ${topic_name}
  namespace: ${namespace}
  labels:
    strimzi.io/cluster: ${cluster}
spec:
  partitions: 12
  replicas: 3
  config:
    min.insync.replicas: 3
    retention.ms: 604800000
    ssl.truststore.password: ${file:/opt/secrets.properties:truststore}
"""


def test_a_strimzi_topic_kept_as_a_terraform_templatefile(tmp_path):
    """Own input (the issue's case): ${...} only in the metadata. The topic is linted with its
    literal spec (REP002 at its line), each placeholder named; Kafka's own ${file:...:...}
    config-provider reference is not a placeholder."""
    f = tmp_path / "topic.yaml.tpl"
    f.write_text(TOPIC_TPL)
    inputs = read_inputs([f])
    (topic,) = inputs.topics
    assert (topic.name, topic.partitions, topic.replication_factor) == ("${topic_name}", 12, 3)
    assert topic.configs["ssl.truststore.password"][0] == "${file:/opt/secrets.properties:truststore}"
    assert after_file(inputs.unevaluated, f) == [
        "4: metadata.name = ${topic_name} is a template placeholder: not evaluated",
        "5: metadata.namespace = ${namespace} is a template placeholder: not evaluated",
        "7: metadata.labels.strimzi.io/cluster = ${cluster} is a template placeholder: not evaluated",
    ]
    result = run_lint([f])
    assert [(x.rule, x.location["line"]) for x in result.findings] == [("REP002", 4)]  # at the topic's name


def test_a_properties_template_lints_its_literal_keys(tmp_path, capsys):
    """Own input: an Ansible server.properties.j2; literal keys linted, templated ones reported.
    The same file with every Kafka value templated is refused (the existing walk test)."""
    f = tmp_path / "server.properties.j2"
    f.write_text(
        "{# managed by ansible #}\nbroker.id={{ broker_id }}\n{% if tiered %}\nremote.log.storage.system.enable=true\n"
        "{% endif %}\nunclean.leader.election.enable=true\nmin.insync.replicas={{ min_isr }}\n"
    )
    inputs = read_inputs([f])
    (broker,) = inputs.brokers
    assert broker.entries == {
        "remote.log.storage.system.enable": ("true", 4),
        "unclean.leader.election.enable": ("true", 6),
    }
    assert after_file(inputs.unevaluated, f) == [
        "2: broker.id = {{ broker_id }} is a Jinja template placeholder: not evaluated",
        "7: min.insync.replicas = {{ min_isr }} is a Jinja template placeholder: not evaluated",
    ]
    assert [(x.rule, x.location["line"]) for x in run_lint([f]).findings if x.rule == "REP005"] == [
        ("REP005", 6)
    ]


def test_a_helm_chart_template_with_a_templated_kafka_value(tmp_path):
    """Own input: a chart's templates/kafka.yaml (not YAML as it stands); the literal keys are
    linted, the templated one reported by its path, the wrapping if/end passed over."""
    f = tmp_path / "kafka.yaml"
    f.write_text(
        "{{- if .Values.kafka.enabled }}\napiVersion: kafka.strimzi.io/v1beta2\nkind: Kafka\nmetadata:\n"
        "  name: {{ .Release.Name }}-kafka\nspec:\n  kafka:\n    replicas: 3\n    config:\n"
        "      default.replication.factor: 3\n      min.insync.replicas: 3\n"
        "      num.io.threads: {{ .Values.kafka.ioThreads }}\n  zookeeper:\n    replicas: 3\n{{- end }}\n"
    )
    inputs = read_inputs([f])
    (broker,) = {b.group: b for b in inputs.brokers}.values()
    assert broker.group == "Kafka/{{ .Release.Name }}-kafka" and broker.brokers == 3
    assert "num.io.threads" not in broker.entries
    assert after_file(inputs.unevaluated, f) == [
        "5: metadata.name = {{ .Release.Name }}-kafka is a Helm template placeholder: not evaluated",
        "12: spec.kafka.config.num.io.threads = {{ .Values.kafka.ioThreads }} is a Helm template placeholder: "
        "not evaluated",
    ]
    assert ("REP002", 11) in [(x.rule, x.location["line"]) for x in run_lint([f]).findings]


# --- Helm umbrella values, image versions -------------------------------------------------------------


def test_cp_helm_charts_umbrella_values_are_read():
    """Zenatix's umbrella values: cp-kafka: brokers: 3, cp-kafka 5.3.1 (Apache Kafka 2.3), no
    configurationOverrides: the subchart's Kafka defaults, judged on three brokers."""
    f = real_input("helm/zenatix-cp-helm-charts-fork-umbrella-values.yaml")
    inputs = read_inputs([f])
    assert len(inputs.brokers) == 3 and inputs.unrecognised == []
    assert (inputs.clusters[0].platform, inputs.clusters[0].kafka_version) == ("helm", "2.3")
    result = run_lint([f])
    cfg004 = {x.resource_name: x.location["line"] for x in result.findings if x.rule == "CFG004"}
    assert cfg004 == {"default.replication.factor": 41, "min.insync.replicas": 41}
    assert line_of(f, 41) == "brokers: 3"


def test_umbrella_configuration_overrides_become_the_keys_the_broker_gets():
    """Ihjaz's fork: keys written with '..' reach the broker with '_' (the chart's KAFKA_ + '.' -> '_',
    the image's '__' -> '_'); a private image: no version."""
    f = real_input("helm/ihjaz-cp-helm-charts-fork-umbrella-values.yaml")
    inputs = read_inputs([f])
    entries = inputs.brokers[0].entries
    assert inputs.clusters[0].kafka_version is None
    assert all(".." not in k for k in entries)
    assert inputs.brokers[0].brokers == 3


def test_cp_kafka_override_with_an_underscore_is_said(tmp_path):
    f = tmp_path / "values.yaml"
    f.write_text(
        "brokers: 3\nimage: confluentinc/cp-server\nimageTag: 7.6.1\nconfigurationOverrides:\n"
        '  "listener.name.sasl_plaintext.plain.sasl.jaas.config": x\n  "min.insync.replicas": 2\n'
    )
    inputs = read_inputs([f])
    assert inputs.clusters[0].kafka_version == "3.6"
    assert "listener.name.sasl.plaintext.plain.sasl.jaas.config" in inputs.brokers[0].entries
    assert inputs.unevaluated == [
        f"{f}:5: configurationOverrides.listener.name.sasl_plaintext.plain.sasl.jaas.config reaches the broker as "
        "listener.name.sasl.plaintext.plain.sasl.jaas.config: cp-kafka turns each '.' into '_' in "
        "KAFKA_LISTENER_NAME_SASL_PLAINTEXT_PLAIN_SASL_JAAS_CONFIG and the image each '_' back into '.' "
        "(write 'listener.name.sasl..plaintext.plain.sasl.jaas.config' for a key with '_')"
    ]


def test_versions_of_helm_and_cfk_images():
    cases = {
        "helm/codejsha-bitnami-kafka-legacy-values.yaml": "3.2.1",  # Bitnami image.tag 3.2.1-debian-11-r...
        "helm/cp-helm-charts-cp-kafka-values.yaml": "2.7",  # confluentinc/cp-server 6.1.0
        "cfk/codejsha-production-kafka.yaml": "3.0",  # spec.image.application confluentinc/cp-server:7.0.0
    }
    for path, version in cases.items():
        assert [c.kafka_version for c in read_inputs([real_input(path)]).clusters] == [version], path


# --- the README's examples --------------------------------------------------------------------------

PLATFORMS = ROOT / "sample_configs" / "platforms"


def test_the_readme_platform_examples_say_what_lint_finds():
    stream = (PLATFORMS / "rendered-stream.yaml").read_bytes()
    result = run_lint(["-"], stdin=io.BytesIO(stream))
    assert sorted((f.rule, f.location["line"], f.severity) for f in result.findings) == [
        ("DSK005", 28, "info"),
        ("REP002", 57, "error"),
    ]
    compose = PLATFORMS / "docker-compose.yml"
    result = run_lint([compose])
    assert sorted((f.rule, f.location["line"]) for f in result.findings if f.severity != "info") == [
        ("REP006", 4),
        ("REP006", 4),
        ("REP006", 4),
    ]
    assert line_of(compose, 4) == "image: bitnami/kafka:3.7.0"
    hosts = PLATFORMS / "cp-ansible" / "hosts.yml"
    result = run_lint([hosts])
    assert [(f.rule, f.location["line"]) for f in result.findings if f.severity != "info"] == [("REP011", 12)]
    assert [n[:60] for n in warnings(result)] == [
        f"warning: {hosts}:12: kafka_broker_custom_properties of group"[:60]
    ]
    assert not result.failing("error")


def test_pre_commit_hook_covers_the_new_formats():
    import re

    import yaml

    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    for name in ("docker-compose.yml", "compose.yaml", "hosts.yml", "kafka.yaml.tpl", "server.properties.j2"):
        assert re.search(hooks["kafka-audit-lint"]["files"], name), name


def test_secrets_in_templated_values_are_never_shown(tmp_path):
    f = tmp_path / "server.properties.j2"
    f.write_text("broker.id=1\nssl.keystore.password=hunter2{{ suffix }}\n")
    inputs = read_inputs([f])
    assert not any("hunter2" in w for w in inputs.unevaluated)
    assert any(
        "ssl.keystore.password = {{ suffix }} (the rest of a secret's value not shown)" in w
        for w in inputs.unevaluated
    )
    g = tmp_path / "hosts.yml"
    g.write_text(
        "kafka_broker:\n  vars:\n    kafka_broker_custom_properties:\n"
        '      ssl.key.password: "hunter2{{ x }}"\n  hosts:\n    b1:\n'
    )
    assert not any("hunter2" in w for w in read_inputs([g]).unevaluated)


CP_KAFKA_STATEFULSET = """\
---
# Source: cp-helm-charts/charts/cp-kafka/templates/statefulset.yaml
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: release-cp-kafka
spec:
  serviceName: release-cp-kafka-headless
  replicas: 3
  template:
    spec:
      containers:
      - name: prometheus-jmx-exporter
        image: "solsson/kafka-prometheus-jmx-exporter@sha256:6f82e2b0464f50da8104acd7363fb9b995001ddff77d248379f8788e78946143"
      - name: cp-kafka-broker
        image: "confluentinc/cp-kafka:7.6.1"
        env:
        - name: POD_IP
          valueFrom:
            fieldRef:
              fieldPath: status.podIP
        - name: KAFKA_HEAP_OPTS
          value: -Xms512M -Xmx512M
        - name: KAFKA_ZOOKEEPER_CONNECT
          value: "release-cp-zookeeper-headless:2181"
        - name: KAFKA_ADVERTISED_LISTENERS
          value: "PLAINTEXT://$(POD_IP):9092"
        - name: "KAFKA_DEFAULT_REPLICATION_FACTOR"
          value: "3"
        - name: "KAFKA_MIN_INSYNC_REPLICAS"
          value: "3"
        - name: "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR"
          value: "3"
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
spec:
  template:
    spec:
      containers:
      - name: app
        image: example/app:1.0
        env:
        - name: KAFKA_BOOTSTRAP_SERVERS
          value: release-cp-kafka:9092
"""


def test_a_rendered_cp_kafka_statefulset_is_read_by_its_image_convention():
    """Own stream, shaped as cp-helm-charts' cp-kafka statefulset renders (the chart's template,
    charts/cp-kafka/templates/statefulset.yaml): the broker's environment by the Confluent
    image's convention, three replicas; $(POD_IP) and valueFrom are not evaluated; the
    application Deployment beside it is passed over."""
    result = run_lint(["-"], stdin=io.BytesIO(CP_KAFKA_STATEFULSET.encode()))
    assert [(f.rule, f.location["line"]) for f in result.findings if f.severity != "info"] == [("REP002", 30)]
    assert CP_KAFKA_STATEFULSET.splitlines()[29] == '        - name: "KAFKA_MIN_INSYNC_REPLICAS"'
    assert result.clusters[0]["kafka_version"] == "3.6"
    (warning,) = warnings(result)
    assert warning.startswith(
        "warning: <stdin>:26: StatefulSet/release-cp-kafka container cp-kafka-broker env KAFKA_ADVERTISED_LISTENERS"
    )
    inputs = read_inputs(["-"], stdin=io.BytesIO(CP_KAFKA_STATEFULSET.encode()))
    assert len(inputs.brokers) == 3 and "heap.opts" not in inputs.brokers[0].entries


def test_an_unquoted_helm_action_in_a_strimzi_resource_is_a_placeholder_not_a_mapping(tmp_path):
    """Own input: `replicas: {{ .Values.replicas }}` composes as a YAML flow mapping, so it is
    read as a template: the replica count not evaluated (never 'must be an integer', exit 2)."""
    f = tmp_path / "kafka.yaml"
    f.write_text(
        "apiVersion: kafka.strimzi.io/v1beta2\nkind: Kafka\nmetadata:\n  name: main\nspec:\n  kafka:\n"
        "    replicas: {{ .Values.replicas }}\n    config:\n      min.insync.replicas: 2\n  zookeeper:\n"
        "    replicas: 3\n"
    )
    inputs = read_inputs([f])
    assert inputs.brokers[0].entries == {"min.insync.replicas": ("2", 9)}
    assert after_file(inputs.unevaluated, f)[0] == (
        "7: spec.kafka.replicas = {{ .Values.replicas }} is a Helm template placeholder: not evaluated"
    )
