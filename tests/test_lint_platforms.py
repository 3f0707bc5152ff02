"""kafka-audit lint on managed platforms and what cannot be evaluated (issue 49, items 2, 3, 7, 8,
9 and 10's Terraform parts): Aiven, Confluent Cloud and Google Cloud Terraform resources, MSK's
defaults where the AZ count or the cluster is unknown, a KRaft controller's own properties
file, values lint cannot evaluate (never Kafka's defaults), ``.tf.json``,
``jsondecode(file(...))`` and module inputs named after Kafka keys.

Real public files of ../shared/real-inputs/ are read in place (their origins in SOURCES.md):
a clean file, a real problem at its file:line, an unevaluated expression reported by name,
a malformed file as one line. Where the corpus holds no real file for a case (a literal Aiven
topic below its replication minimum, a ``.tf.json`` with Kafka resources: SOURCES.md found
none, a caller of the Confluent module), the test writes its own input in tmp_path, shaped as
the provider's documentation gives it, and says so."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from auditor.lint import run_lint
from auditor.lint.inputs import read_inputs
from tests.conftest import real_input
from tests.test_lint import cli
from tests.test_lint_config_as_code import line_of, warnings, where


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def line_with(path, fragment: str) -> int:
    """The 1-based line of ``path`` holding ``fragment`` (exactly one)."""
    (n,) = [i for i, t in enumerate(Path(path).read_text().splitlines(), 1) if fragment in t]
    return n


# --- Aiven ----------------------------------------------------------------------------------------


def test_aiven_kafka_service_settings_are_read_with_underscore_keys_at_their_lines():
    f = real_input("terraform/aiven-examples-diskless-migration-main.tf")
    inputs = read_inputs([f])
    (broker,) = inputs.brokers
    assert broker.group == "aiven_kafka.destination_kafka_1" and broker.cluster.platform == "aiven"
    assert broker.cluster.kafka_version == "4.0"
    for key, value, line in (
        ("default.replication.factor", "3", 23),
        ("min.insync.replicas", "2", 24),
        ("message.max.bytes", "100001200", 25),
    ):
        assert broker.entries[key] == (value, line)
        assert line_of(f, line).startswith(key.replace(".", "_"))
    # auto.create.topics.enable is Aiven's documented default (false), not Kafka's (true)
    assert broker.entries["auto.create.topics.enable"][0] == "false"
    result = run_lint([f])
    assert result.findings == []  # RF 3 / min ISR 2, message size within Aiven's range: clean
    assert result.clusters[0]["platform"] == "aiven"
    # The diskless topics come from a data source's content: for_each not evaluated, by name
    (w,) = [w for w in warnings(result) if "aiven_kafka_topic.diskless_topics" in w]
    assert w.startswith(f"warning: {f}:123: ") and "distinct() is not evaluated statically" in w
    assert any("broker count is its plan's" in n for n in result.notes)


AIVEN = """resource "aiven_kafka" "kafka" {{
  project      = "p"
  service_name = "events"
  plan         = "business-4"
  kafka_user_config {{
    kafka_version = "3.8"
    kafka {{
{kafka}
    }}
  }}
}}

resource "aiven_kafka_topic" "orders" {{
  project      = "p"
  service_name = aiven_kafka.kafka.service_name
  topic_name   = "orders"
  partitions   = 6
  replication  = {replication}
{topic_config}
}}
"""


def test_aiven_platform_limits_are_cfg009_at_the_line_and_rf_1_is_also_rep003(tmp_path):
    """Own input (no real file with these values in the corpus), shaped as the Aiven provider's
    documentation gives aiven_kafka / aiven_kafka_topic: Aiven refuses a replication factor
    below 2 and a num_partitions above its documented maximum 1000."""
    f = write(
        tmp_path / "aiven.tf",
        AIVEN.format(kafka="      num_partitions = 2000", replication="1", topic_config=""),
    )
    result = run_lint([f])
    assert where(result) == sorted(
        [
            ("CFG009", "aiven.tf", line_with(f, "num_partitions = 2000")),
            ("CFG009", "aiven.tf", line_with(f, "replication  = 1")),
            ("REP003", "aiven.tf", line_with(f, 'topic_name   = "orders"')),
        ]
    )
    by_line = {x.location["line"]: x for x in result.findings if x.rule == "CFG009"}
    refused = by_line[line_with(f, "replication  = 1")]
    assert refused.severity == "error" and "below 2" in refused.message
    assert refused.evidence["source"].startswith("https://aiven.io/docs/products/kafka/howto/best-practices")
    assert "from 1 to 1000" in by_line[line_with(f, "num_partitions = 2000")].message


def test_aiven_diskless_topic_with_replication_1_is_not_a_durability_finding(tmp_path):
    """Aiven: a diskless topic's data is replicated by the object storage; 'use 1 or -1'."""
    f = write(
        tmp_path / "aiven.tf",
        AIVEN.format(
            kafka="      min_insync_replicas = 2",
            replication="1",
            topic_config="  config {\n    diskless_enable = true\n    retention_ms = 1209600000\n  }",
        ),
    )
    inputs = read_inputs([f])
    (topic,) = inputs.topics
    assert topic.replication_factor is None and "diskless.enable" not in topic.configs
    assert topic.configs["retention.ms"] == ("1209600000", line_with(f, "retention_ms"))
    result = run_lint([f])
    assert result.findings == []
    assert any("diskless topic" in n and "not judged" in n for n in result.notes)


def test_aiven_defaults_are_aivens_and_an_unevaluated_replication_is_reported(tmp_path):
    """Aiven's documented defaults (min ISR 1, default RF 3) apply to what the service leaves
    unset: a topic of 3 replicas without min.insync.replicas inherits min ISR 1 (REP004)."""
    f = write(tmp_path / "aiven.tf", AIVEN.format(kafka="", replication="3", topic_config=""))
    result = run_lint([f])
    assert [(x.rule, x.resource_name) for x in result.findings] == [("REP004", "min.insync.replicas")]
    g = write(tmp_path / "b" / "aiven.tf", AIVEN.format(kafka="", replication="var.rf", topic_config=""))
    unevaluated = run_lint([g])
    (w,) = [w for w in warnings(unevaluated) if "replication = var.rf" in w]
    assert w.startswith(f"warning: {g}:{line_with(g, 'replication  = var.rf')}: aiven_kafka_topic.orders")
    assert "REP001-REP004" in w and unevaluated.findings == []


# --- Confluent Cloud ------------------------------------------------------------------------------


def test_confluent_cluster_config_through_variables_is_reported_not_guessed():
    f = real_input("terraform/mcolomerc-confluent-kafka-cluster-module-main.tf")
    result = run_lint([f])
    lines = warnings(result)
    count = next(w for w in lines if "confluent_kafka_cluster_config.cluster_config is made by count" in w)
    assert count.startswith(f"warning: {f}:89: ") and "read as one instance" in count
    config = next(w for w in lines if "config = var.cluster.config" in w)
    assert config.startswith(f"warning: {f}:95: ") and "not evaluated" in config
    assert result.findings == []
    assert {c["platform"] for c in result.clusters} == {"confluent-cloud"}


def test_confluent_topic_min_isr_equal_to_the_fixed_rf_is_rep002(tmp_path):
    """Own input: Confluent Cloud fixes a topic's replication factor at 3, so a topic setting
    min.insync.replicas=3 blocks acks=all writes on any broker restart (REP002)."""
    f = write(
        tmp_path / "topics.tf",
        'resource "confluent_kafka_topic" "orders" {\n  topic_name = "orders"\n  partitions_count = 6\n'
        '  config = {\n    "min.insync.replicas" = "3"\n  }\n}\n',
    )
    assert where(run_lint([f])) == [("REP002", "topics.tf", 2)]  # a topic finding: at its name
    g = write(tmp_path / "ok" / "topics.tf", f.read_text().replace('"3"', '"2"'))
    assert run_lint([g]).findings == []


def test_jsondecode_of_a_file_feeds_a_local_modules_for_each(tmp_path, capsys):
    """The Confluent provider's manage-topics-via-json example: the module and topics.json are
    the real files (read in place through symlinks); the caller is our own, as upstream's
    examples/configurations/manage-topics-via-json/main.tf writes it."""
    module = tmp_path / "confluent_kafka_topics_module"
    module.mkdir()
    (module / "main.tf").symlink_to(real_input("terraform/confluent-manage-topics-via-json-module-main.tf"))
    (tmp_path / "topics.json").symlink_to(
        real_input("terraform/confluent-manage-topics-via-json-topics.json")
    )
    write(
        tmp_path / "main.tf",
        'module "confluent_kafka_topics" {\n  source = "./confluent_kafka_topics_module"\n'
        "  kafka_id = var.kafka_id\n"
        '  topics   = jsondecode(file("topics.json"))\n}\n',
    )
    inputs = read_inputs([tmp_path])
    module_file = str(module / "main.tf")
    got = sorted((t.name, t.file, t.line, t.partitions, t.replication_factor) for t in inputs.topics)
    assert got == [
        ("clicks", module_file, 20, None, 3),  # "config": null, "partitions_count": null: not set
        ("orders", module_file, 20, 6, 3),
        ("players", module_file, 20, 3, 3),
    ]
    orders = next(t for t in inputs.topics if t.name == "orders")
    assert orders.configs == {"cleanup.policy": ("delete", 22), "retention.ms": ("259200000", 22)}
    # the module's file is read with its caller's values, not on its own
    assert any(
        n.startswith(f"{module_file}: read as part of module.confluent_kafka_topics") for n in inputs.notes
    )
    assert not [w for w in inputs.unevaluated if "for_each" in w]
    # a path outside what lint was given is not read, and says so
    outside = write(
        tmp_path / "o" / "main.tf",
        'locals {\n  t = jsondecode(file("../../../etc/passwd"))\n}\n'
        'resource "kafka_topic" "x" {\n  for_each = local.t\n  name = each.key\n'
        "  partitions = 1\n  replication_factor = 3\n}\n",
    )
    result = run_lint([outside])
    assert any("outside the files and directories given to lint: not read" in w for w in warnings(result))


# --- Google Cloud ---------------------------------------------------------------------------------


def test_google_managed_kafka_below_minimum_capacity_is_cfg009_at_its_line():
    f = real_input("terraform/sorupujara92-google-managed-kafka-vcpu1.tf")
    inputs = read_inputs([f])
    (topic,) = inputs.topics
    assert (topic.name, topic.partitions, topic.replication_factor) == ("my-topic", 2, 3)
    assert topic.configs == {"cleanup.policy": ("compact", 33)}
    (cluster,) = inputs.clusters
    assert (cluster.platform, cluster.azs, cluster.brokers) == ("gcp", 3, 3)
    result = run_lint([f])
    assert where(result) == [("CFG009", f.name, 5)]  # vcpu_count = 1; 3 GiB for 1 vCPU is within 1-8
    assert line_of(f, 5) == "vcpu_count = 1"
    # Google documents no broker defaults: the two the topic rules need are not evaluated
    (w,) = [w for w in warnings(result) if "does not document" in w]
    assert "min.insync.replicas" in w and "REP001-REP004" in w
    assert not [x for x in result.findings if x.rule == "REP011"]  # Google places the brokers


def test_google_managed_kafka_clean_capacity(tmp_path):
    f = write(
        tmp_path / "gmk.tf",
        real_input("terraform/sorupujara92-google-managed-kafka-vcpu1.tf")
        .read_text()
        .replace("vcpu_count = 1", "vcpu_count = 3"),
    )
    assert run_lint([f]).findings == []


# --- MSK: never Kafka's defaults ---------------------------------------------------------------------


MSK = """variable "subnets" {{}}
variable "rf" {{}}

resource "aws_msk_configuration" "this" {{
  name = "c"
  server_properties = <<EOT
{properties}
EOT
}}

resource "aws_msk_cluster" "this" {{
  cluster_name           = "c"
  kafka_version          = "3.6.0"
  number_of_broker_nodes = {brokers}
  broker_node_group_info {{
    instance_type  = "kafka.m5.large"
    client_subnets = var.subnets
  }}
  configuration_info {{
    arn      = aws_msk_configuration.this.arn
    revision = 1
  }}
}}
"""


def test_an_unevaluated_heredoc_value_is_not_evaluated_never_kafkas_default(tmp_path):
    """The case found on a real file: default.replication.factor = ${var} beside
    min.insync.replicas = 2 was a critical REP001 (2 > Kafka's default 1). Own input."""
    f = write(
        tmp_path / "msk.tf",
        MSK.format(
            properties="default.replication.factor = ${var.rf}\nmin.insync.replicas = 2\n"
            "unclean.leader.election.enable = false",
            brokers=9,
        ),
    )
    result = run_lint([f])
    assert result.findings == []  # no REP001/REP002 against a guessed replication factor
    rf_line = line_with(f, "default.replication.factor = ${var.rf}")
    (w,) = [w for w in warnings(result) if "default.replication.factor" in w]
    assert w.startswith(f"warning: {f}:{rf_line}: aws_msk_configuration.this server_properties ")
    assert "var.rf has no default" in w and "REP001, REP002" in w
    # a ${...} that evaluates is read as its value
    g = write(tmp_path / "b" / "msk.tf", f.read_text().replace("${var.rf}", "${1 + 1}"))
    assert [(x.rule, x.resource_name) for x in run_lint([g]).findings] == [("REP002", "min.insync.replicas")]


@pytest.mark.parametrize(
    ("brokers", "rules"),
    [
        (4, ["CFG004", "REP005"]),  # 4 brokers: 2 AZs, MSK's min ISR 1 (CFG004), unclean on (REP005)
        (9, ["REP005"]),  # 9 brokers: 3 AZs, MSK's RF 3 / min ISR 2
        (6, ["REP005"]),  # 2 or 3 AZs: the two AZ-dependent defaults are not evaluated
    ],
)
def test_msk_cluster_without_evaluable_subnets_uses_what_its_broker_count_implies(tmp_path, brokers, rules):
    """A custom configuration inherits MSK's default configuration (unclean election included)
    for what it leaves unset, by the AZ count the broker count implies (AWS: a multiple of the
    AZ count, two or three subnets), never Kafka's defaults (RF 1, min ISR 1)."""
    f = write(
        tmp_path / "msk.tf", MSK.format(properties="auto.create.topics.enable = false", brokers=brokers)
    )
    inputs = read_inputs([f])
    entries = inputs.brokers[0].entries
    assert len(inputs.brokers) == brokers and entries["unclean.leader.election.enable"][0] == "true"
    result = run_lint([f])
    assert sorted(x.rule for x in result.findings) == rules
    assert {x.location["line"] for x in result.findings} <= {line_with(f, "server_properties = <<EOT")}
    if brokers == 6:
        assert "min.insync.replicas" in inputs.brokers[0].unevaluated
        (w,) = [w for w in warnings(result) if "AZ count is not evaluated" in w]
        assert "6 brokers fit 2 or 3 AZs" in w and "default.replication.factor (2 or 3)" in w
    else:
        assert entries["min.insync.replicas"][0] == {4: "1", 9: "2"}[brokers]


def test_a_cloudformation_configuration_inherits_msks_defaults():
    f = real_input("cloudformation/valentine-dev-msk-3az-setup.json")
    inputs = read_inputs([f])
    entries = inputs.brokers[0].entries  # 3 subnets: a 3-AZ cluster's defaults
    assert entries["default.replication.factor"][0] == "3" and entries["min.insync.replicas"][0] == "2"
    assert [x.rule for x in run_lint([f]).findings] == ["REP005"]  # MSK's unclean election default


# --- a KRaft controller's own file --------------------------------------------------------------------


def test_controller_settings_kafka_refuses_are_ctl012_at_their_lines(tmp_path):
    """Own input: what KafkaConfig.validateValues refuses for a controller-only node."""
    f = write(
        tmp_path / "controller.properties",
        "process.roles=controller\nnode.id=4\n"
        "controller.quorum.voters=1@c1:9093,2@c2:9093,3@c3:9093\n"
        "listeners=PLAINTEXT://:9092,CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER,OTHER\n"
        "num.io.threads=eight\n",
    )
    result = run_lint([f])
    assert where(result) == [
        ("CFG001", "controller.properties", 6),
        ("CTL012", "controller.properties", 3),
        ("CTL012", "controller.properties", 4),
        ("CTL012", "controller.properties", 5),
    ]
    msg = {x.location["line"]: x.message for x in result.findings}
    assert "node 4 has the controller role but is not among the voters [1,2,3]" in msg[3]
    assert "PLAINTEXT is not" in msg[4] and "names OTHER" in msg[5]
    assert "num.io.threads=eight on controller 4" in msg[6]
    fixed = write(
        tmp_path / "ok" / "controller.properties",
        "process.roles=controller\nnode.id=3\ncontroller.quorum.voters=1@c1:9093,2@c2:9093,3@c3:9093\n"
        "listeners=CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER\n",
    )
    assert run_lint([fixed]).findings == []


def test_a_malformed_controller_file_is_a_one_line_warning(tmp_path, capsys):
    f = write(tmp_path / "controller.properties", "process.roles=controller\nnode.id=1\nbad=\\u12G4\n")
    code, out, _err = cli(capsys, "lint", f)
    (w,) = [x for x in out.splitlines() if x.startswith("warning:")]
    assert code == 3 and w.startswith(f"warning: {f}:3:")


# --- .tf.json and module inputs -------------------------------------------------------------------


def test_terraform_json_syntax_is_read_like_hcl(tmp_path):
    """Own input: SOURCES.md found no public .tf.json with Kafka resources; the syntax is
    Terraform's (developer.hashicorp.com/terraform/language/syntax/json)."""
    f = write(
        tmp_path / "main.tf.json",
        '{\n  "variable": {"rf": {"default": 1}},\n  "resource": {\n    "kafka_topic": {\n'
        '      "events": {\n        "name": "events",\n        "partitions": 3,\n'
        '        "replication_factor": "${var.rf}",\n        "config": {\n'
        '          "min.insync.replicas": "${var.nope}"\n        }\n      }\n    }\n  }\n}\n',
    )
    result = run_lint([f])
    assert where(result) == [("REP003", "main.tf.json", 6)]  # at "events": { (the resource's name)
    (w,) = warnings(result)
    assert w.startswith(f"warning: {f}:10: kafka_topic.events config") and "var.nope" in w
    bad = write(tmp_path / "bad" / "main.tf.json", '{"resource": {"kafka_topic": }\n')
    assert any(w.startswith(f"warning: {bad}:") for w in warnings(run_lint([bad, f])))


def test_module_inputs_named_after_kafka_keys_are_reported_as_not_judged(tmp_path):
    f = write(
        tmp_path / "main.tf",
        'module "msk" {\n  source = "terraform-aws-modules/msk-kafka-cluster/aws"\n'
        "  number_of_broker_nodes = 3\n  kafka_custom_config_min_insync_replicas = 1\n}\n",
    )
    (w,) = [w for w in warnings(run_lint([f])) if "named after Kafka's" in w]
    assert w.startswith(f"warning: {f}:4: module.msk input kafka_custom_config_min_insync_replicas")
    assert "min.insync.replicas" in w and "not judged" in w
    tfvars = real_input("terraform/opstree-msk-module-vars-unclean.tfvars")
    (note,) = read_inputs([tfvars]).notes
    assert "kafka_custom_config_min_insync_replicas: min.insync.replicas" in note


def test_a_skipped_terraform_file_says_truthfully_what_it_is(tmp_path):
    acls = write(
        tmp_path / "acls.tf",
        'resource "kafka_acl" "a" {\n  resource_name = "orders"\n  resource_type = "Topic"\n}\n',
    )
    (note,) = read_inputs([acls]).notes
    assert re.search(r"Kafka resources \(kafka_acl\) configure no topic, broker or cluster setting", note)
    s3 = write(tmp_path / "s3.tf", 'resource "aws_s3_bucket" "b" {\n  bucket = "kafka-backups"\n}\n')
    (note,) = read_inputs([s3]).notes
    assert "without a Kafka resource lint reads" in note


# --- the rules named in 'not evaluated' warnings ---------------------------------------------------


def test_every_declared_key_of_a_lint_rule_is_named_for_that_key():
    """auditor/lint/key_rules.py names, per key, the rules a value lint cannot evaluate leaves
    not evaluated: each rule's declared lint_key / Inherits key must be among them."""
    from auditor.declarations import Inherits
    from auditor.lint.key_rules import BROKER_KEY_RULES, TOPIC_KEY_RULES
    from auditor.registry import load_rules

    def named(text: str, code: str) -> bool:
        spans = re.findall(r"([A-Z]{3})(\d{3})(?:-[A-Z]{3}(\d{3}))?", text)
        return any(p == code[:3] and int(a) <= int(code[3:]) <= int(b or a) for p, a, b in spans)

    for code, rule in load_rules().items():
        if "lint" not in rule.commands:
            continue
        keys = [rule.lint_key] if rule.lint_key else []
        if isinstance(rule.cause, Inherits):
            keys.append(rule.cause.key)
        for key in keys:
            assert named(BROKER_KEY_RULES.get(key, ""), code) or named(TOPIC_KEY_RULES.get(key, ""), code), (
                code,
                key,
            )


def test_the_help_promises_what_an_unreadable_file_does(capsys):
    """Issue 49: `lint --help` promises a warning naming the file and the run going on without
    --strict, and exit 2 with it: what tests/test_lint.py::unreadable checks lint does."""
    code, out, _err = cli(capsys, "lint", "--help")
    text = " ".join(re.sub(r"[│╭╮╰╯─]", " ", out).split())
    assert code == 0
    assert "could not be read, is an error (exit 2)" in text
    assert "Without --strict it is a warning naming it, and the other files are linted" in text


def test_confluent_server_key_families_are_not_unknown_keys(tmp_path):
    """Confluent Server's documented families (confluent., kafka.rest., ldap.: the data file
    auditor/data/vendor_key_families.json) are not CFG002 findings; a real typo still is."""
    f = write(
        tmp_path / "server.properties",
        "broker.id=1\nkafka.rest.bootstrap.servers=SASL_SSL://kafka-1:9092\n"
        "ldap.java.naming.provider.url=ldap://ldap:389\nconfluent.balancer.enable=true\n"
        "offsets.topic.min.isr=2\n",
    )
    result = run_lint([f])
    assert [(x.rule, x.location["line"]) for x in result.findings if x.rule == "CFG002"] == [("CFG002", 5)]


def test_a_plan_reads_the_same_kinds_as_hcl(tmp_path):
    """Own input (no public plan with these resources, SOURCES.md): the documented plan
    representation, nested blocks as lists of one object, read through the same kinds table."""
    import json

    plan = {
        "format_version": "1.2",
        "resource_changes": [
            {
                "address": "aiven_kafka.kafka",
                "type": "aiven_kafka",
                "change": {
                    "actions": ["create"],
                    "after": {
                        "plan": "business-4",
                        "kafka_user_config": [
                            {
                                "kafka_version": "3.8",
                                "kafka": [{"min_insync_replicas": 2, "num_partitions": 2000}],
                            }
                        ],
                    },
                    "after_unknown": {"id": True},
                },
            },
            {
                "address": 'aiven_kafka_topic.t["orders"]',
                "type": "aiven_kafka_topic",
                "change": {
                    "actions": ["create"],
                    "after": {"topic_name": "orders", "partitions": 6, "replication": 1, "config": [{}]},
                    "after_unknown": {},
                },
            },
        ],
    }
    f = write(tmp_path / "plan.json", json.dumps(plan, indent=2))
    result = run_lint([f])
    lines = f.read_text().splitlines()
    got = sorted((x.rule, lines[x.location["line"] - 1].strip()) for x in result.findings)
    assert got == [
        ("CFG009", '"address": "aiven_kafka.kafka",'),  # num_partitions 2000 above Aiven's 1000
        ("CFG009", '"address": "aiven_kafka_topic.t[\\"orders\\"]",'),  # replication 1
        ("REP003", '"address": "aiven_kafka_topic.t[\\"orders\\"]",'),
    ]
