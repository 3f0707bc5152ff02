"""kafka-audit lint on config-as-code that teams commit (issue 33): Terraform (and its plan as
JSON), Strimzi Kafka/KafkaNodePool, Confluent for Kubernetes, Helm values, CloudFormation.

The real public files of ../shared/real-inputs/{terraform,strimzi-kafka,cfk,helm,cloudformation}
(origins in SOURCES.md) are read in place. Per format: a clean file (no false finding), a real
problem at its file:line, an expression reported as not evaluated, a malformed file giving a
one-line error. Where no real file exists for a case (a Terraform plan with Kafka resources:
SOURCES.md says none was found; comment syntaxes for suppressions), the test writes its own
input in tmp_path, shaped as the format's documentation gives it, and says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.lint import run_lint
from auditor.lint.inputs import read_inputs
from tests.conftest import real_input
from tests.test_lint import cli

SNAPSHOT = (
    Path(__file__).resolve().parent.parent
    / "sample_configs"
    / "fleet"
    / "dt=2026-11-22"
    / "cluster=search-ingest"
)


def where(result, rule=None):
    return sorted(
        (f.rule, Path(f.location["file"]).name, f.location["line"])
        for f in result.findings
        if rule is None or f.rule == rule
    )


def warnings(result):
    return [n for n in result.notes if n.startswith("warning: ")]


def line_of(path, number: int) -> str:
    return Path(path).read_text(encoding="utf-8").splitlines()[number - 1].strip()


# --- Terraform ----------------------------------------------------------------------------------


def test_terraform_mongey_topic_with_one_replica_is_found_at_its_name():
    f = real_input("terraform/craigmiller160-learn-kafka-mongey-rf1.tf")
    result = run_lint([f])
    assert where(result) == [("REP003", f.name, 16)]
    assert line_of(f, 16) == 'name               = "hello-topic"'
    assert [x.resource_name for x in result.findings] == ["hello-topic"]


def test_terraform_msk_configuration_heredoc_keys_are_at_their_own_lines():
    f = real_input("terraform/sakanof-poc-msk-cluster-config-unclean.tf")
    inputs = read_inputs([f])
    # No aws_msk_cluster in the file: judged as MSK's smallest cluster, two brokers (issue 49).
    assert [b.group for b in inputs.brokers] == ["aws_msk_configuration.this"] * 2
    broker = inputs.brokers[0]
    for key in ("unclean.leader.election.enable", "min.insync.replicas", "default.replication.factor"):
        value, line = broker.entries[key]
        assert line_of(f, line) == f"{key} = {value}"
    # min.insync.replicas = 1 on two brokers is CFG004; unclean election true is REP005.
    assert where(run_lint([f])) == [("CFG004", f.name, 8), ("REP005", f.name, 17)]
    assert line_of(f, 8) == "min.insync.replicas = 1"


def test_terraform_clean_confluent_stack_has_no_finding():
    f = real_input("terraform/confluent-basic-kafka-acls-main.tf")
    inputs = read_inputs([f])
    # Confluent Cloud fixes every topic's replication factor at 3 (issue 49: platform facts).
    assert [(t.name, t.partitions, t.replication_factor, t.configs) for t in inputs.topics] == [
        ("orders", None, 3, {})
    ]
    result = run_lint([f])
    assert result.findings == [] and warnings(result) == []


def test_terraform_expressions_are_reported_as_not_evaluated_by_name_and_line():
    f = real_input("terraform/tam-msk-kafka-cluster-module-main.tf")
    result = run_lint([f])
    lines = warnings(result)
    config = next(w for w in lines if "aws_msk_configuration.this server_properties" in w)
    assert config.startswith(f"warning: {f}:287: ") and "join(" in config and "not evaluated" in config
    topics = next(w for w in lines if "aws_msk_topic.this" in w)
    assert topics.startswith(f"warning: {f}:367: ") and "for_each" in topics
    instance = next(w for w in lines if "instance_type = var.broker_node_instance_type" in w)
    assert "MSK001" in instance  # the rules that needed it are named
    assert result.findings == []


def test_terraform_module_call_and_tfvars_given_on_the_command_line():
    main = real_input("terraform/firoz03-iamplus-msk-main.tf")
    tfvars = real_input("terraform/firoz03-iamplus-msk-terraform.tfvars")
    alone = run_lint([main])
    assert any("var.server_properties" in w and "not evaluated" in w for w in warnings(alone))
    assert alone.findings == []
    inputs = read_inputs([main, tfvars])
    assert len(inputs.brokers) == 2  # number_of_nodes = 2 from the tfvars
    assert inputs.brokers[0].entries["default.replication.factor"][0] == "2"
    assert inputs.clusters[0].instance_type == "kafka.t3.small" and inputs.clusters[0].azs == 2
    result = run_lint([main, tfvars])
    # The map sets default.replication.factor only; every other key is MSK's default for a
    # 2-AZ cluster (issue 49), not Kafka's: min.insync.replicas 1 (CFG004) and unclean leader
    # election on (REP005), both located at the module's server_properties.
    assert [(f.rule, f.resource_name) for f in result.findings] == [
        ("CFG004", "min.insync.replicas"),
        ("REP005", "unclean.leader.election.enable"),
    ]
    assert {str(f.location) for f in result.findings} == {str({"file": str(main), "line": 35})}
    assert (
        result.clusters[0]["platform"] == "msk"
        and result.clusters[0]["msk_instance_type"] == "kafka.t3.small"
    )


def test_terraform_module_example_with_literal_map_and_broker_count():
    f = real_input("terraform/tam-msk-kafka-cluster-complete-example-main.tf")
    inputs = read_inputs([f])
    assert len(inputs.brokers) == 3 and {b.group for b in inputs.brokers} == {"module.msk_cluster"}
    entries = inputs.brokers[0].entries
    assert entries["auto.create.topics.enable"][0] == "true"
    assert line_of(f, entries["auto.create.topics.enable"][1]).startswith('"auto.create.topics.enable"')


def test_terraform_invalid_hcl_is_a_one_line_warning_or_with_strict_error(capsys):
    f = real_input("terraform/travisjeffery-kafka-provider-simple-invalid-hcl.tf")
    code, out, err = cli(capsys, "lint", f)  # nothing else was linted: exit 3, never green
    (warning,) = [line for line in out.splitlines() if line.startswith("warning:")]
    assert code == 3 and warning.startswith(f"warning: {f}:2: not valid HCL: ")
    code, out, err = cli(capsys, "lint", "--strict", f)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"kafka-audit: {f}:2: not valid HCL: ")


def test_terraform_suppressions_in_every_hcl_comment_syntax(tmp_path):
    """Own input: the Mongey provider's resource with each of HCL's comment forms."""
    f = tmp_path / "topics.tf"
    f.write_text(
        '# kafka-audit: ignore[REP003] reason="scratch topic"\n'
        'resource "kafka_topic" "a" {\n  name = "a"\n  partitions = 1\n  replication_factor = 1\n}\n'
        'resource "kafka_topic" "b" {\n  name = "b" // kafka-audit: ignore[REP003] reason="scratch"\n'
        "  partitions = 1\n  replication_factor = 1\n}\n"
        'resource "kafka_topic" "c" {\n  name = "c" /* kafka-audit: ignore[REP003] reason="scratch" */\n'
        "  partitions = 1\n  replication_factor = 1\n}\n"
        'resource "kafka_topic" "d" {\n  name = "d"\n  partitions = 1\n  replication_factor = 1\n}\n'
    )
    result = run_lint([f])
    assert [(x.rule, x.resource_name) for x in result.findings] == [("REP003", "d")]
    assert "3 finding(s) suppressed inline" in result.notes


def test_terraform_against_a_snapshot(tmp_path):
    f = real_input("terraform/craigmiller160-learn-kafka-mongey-rf1.tf")
    result = run_lint([f], against=str(SNAPSHOT))
    assert ("REP003", f.name, 16) in where(result)
    assert all(x.location["file"] == str(f) for x in result.findings)


def test_terraform_plan_json(tmp_path):
    """Own input (no public plan with Kafka resources exists, SOURCES.md): the documented plan
    representation (developer.hashicorp.com/terraform/internals/json-format), as
    ``terraform show -json`` writes it, with a for_each topic resolved by Terraform."""
    plan = {
        "format_version": "1.2",
        "terraform_version": "1.9.0",
        "planned_values": {"root_module": {"resources": []}},
        "resource_changes": [
            {
                "address": 'module.topics.kafka_topic.this["orders"]',
                "module_address": "module.topics",
                "mode": "managed",
                "type": "kafka_topic",
                "name": "this",
                "index": "orders",
                "change": {
                    "actions": ["create"],
                    "after": {
                        "name": "orders",
                        "partitions": 6,
                        "replication_factor": 3,
                        "config": {"min.insync.replicas": "3"},
                    },
                    "after_unknown": {"id": True},
                },
            },
            {
                "address": "kafka_topic.gone",
                "type": "kafka_topic",
                "name": "gone",
                "change": {"actions": ["delete"], "before": {"name": "gone"}, "after": None},
            },
            {
                "address": "aws_msk_topic.t",
                "type": "aws_msk_topic",
                "name": "t",
                "change": {
                    "actions": ["create"],
                    "after": {"name": "t", "partition_count": 3},
                    "after_unknown": {"replication_factor": True},
                },
            },
        ],
    }
    f = tmp_path / "plan.json"
    f.write_text(json.dumps(plan, indent=2))
    result = run_lint([f])
    lines = f.read_text().splitlines()
    (finding,) = [x for x in result.findings if x.rule == "REP002"]
    assert finding.resource_name == "orders"
    assert 'kafka_topic.this[\\"orders\\"]' in lines[finding.location["line"] - 1]
    # The aws_msk_topic's cluster is not in the plan: it runs MSK's default configuration
    # (unclean election on: REP005 at the topics inheriting it), never Kafka's defaults.
    assert sorted(x.rule for x in result.findings) == ["REP002", "REP005"]
    assert any("aws_msk_topic.t replication_factor is known only after apply" in w for w in warnings(result))


# --- Strimzi --------------------------------------------------------------------------------------


def test_strimzi_kafka_with_min_isr_equal_to_rf_and_log4j_keys_in_config():
    f = real_input("strimzi-kafka/sahataslee-zk-2.8.0-kafka-cluster.yml")
    result = run_lint([f])
    assert ("REP002", f.name, 55) in where(result)
    assert line_of(f, 55) == "min.insync.replicas: 3"
    cfg002 = where(result, "CFG002")
    assert ("CFG002", f.name, 61) in cfg002 and line_of(f, 61).startswith("log4j.rootLogger:")
    assert all(line_of(f, line).startswith("log4j.") for _r, _f, line in cfg002)
    assert read_inputs([f]).clusters[0].kafka_version == "2.8.0"


def test_strimzi_kraft_cluster_with_its_node_pools_is_clean():
    files = [
        real_input("strimzi-kafka/sahataslee-v1beta2-kraft-3.9.1-kafka-cluster.yml"),
        real_input("strimzi-kafka/sahataslee-v1beta2-kraft-3.9.1-kafka-node-pool.yml"),
    ]
    inputs = read_inputs(files)
    assert len(inputs.brokers) == 3 and inputs.brokers[0].log_dirs == ("/var/lib/kafka/data-0",)
    result = run_lint(files)
    assert [x.rule for x in result.findings] == ["DSK005"]  # JBOD with one volume: true, info
    assert warnings(result) == []


def test_strimzi_node_pools_by_role_and_a_cluster_without_its_pools_is_reported():
    cluster = real_input("strimzi-kafka/sahataslee-v1-kraft-4.1.1-kafka-cluster.yaml")
    pools = real_input("strimzi-kafka/sahataslee-v1-kraft-4.1.1-kafka-node-pool.yaml")
    assert len(read_inputs([cluster, pools]).brokers) == 3  # the broker pool, not the controllers
    alone = run_lint([cluster])
    (line,) = [w for w in warnings(alone) if "KafkaNodePool" in w]
    assert "linted as one broker" in line and str(cluster) in line


def test_strimzi_malformed_yaml_is_a_one_line_warning_or_with_strict_error(tmp_path, capsys):
    f = tmp_path / "kafka.yaml"
    f.write_text("apiVersion: kafka.strimzi.io/v1\nkind: Kafka\nspec:\n  kafka:\n    config: [a\n")
    code, out, err = cli(capsys, "lint", f)
    assert code == 3 and [x for x in out.splitlines() if x.startswith(f"warning: {f}:")]
    code, out, err = cli(capsys, "lint", "--strict", f)
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"kafka-audit: {f}:")


# --- Confluent for Kubernetes ---------------------------------------------------------------------


def test_cfk_topic_with_three_replicas_and_default_min_isr_is_found():
    f = real_input("cfk/codejsha-kafka-topic.yaml")
    result = run_lint([f])
    assert where(result) == [("REP004", f.name, 5)] and line_of(f, 5) == "name: my-topic"


def test_cfk_clean_topic_has_no_finding():
    result = run_lint([real_input("cfk/cp-mrc-test-topic-no-replicas.yaml")])
    assert result.findings == [] and warnings(result) == []


def test_cfk_kafka_config_overrides_are_located_per_line():
    f = real_input("cfk/cp-mrc-kraft-3dc-mrc-kafka.yaml")
    inputs = read_inputs([f])
    assert len(inputs.brokers) == 9  # three Kafka CRs of 3 replicas
    value, line = inputs.brokers[0].entries["default.replication.factor"]
    assert value == "6" and line_of(f, line) == "- default.replication.factor=6"
    assert ("CFG002", f.name, 43) in where(run_lint([f]))  # offsets.topic.min.isr: no such key
    prod = real_input("cfk/codejsha-production-kafka.yaml")
    entries = read_inputs([prod]).brokers[0].entries
    assert "confluent.tier.enable" not in entries  # a '#' line inside the list is a comment


# --- Helm -------------------------------------------------------------------------------------------


def test_helm_bitnami_legacy_keys_are_read_as_kafka_keys():
    f = real_input("helm/codejsha-bitnami-kafka-legacy-values.yaml")
    (broker, *_others) = read_inputs([f]).brokers
    assert broker.entries["transaction.state.log.min.isr"][0] == "2"
    assert broker.entries["log.flush.interval.messages"][0] == "10000"  # the chart's "_10000"
    value, line = broker.entries["default.replication.factor"]
    assert value == "3" and line_of(f, line) == "defaultReplicationFactor: 3"
    result = run_lint([f])
    # min.insync.replicas is set by no key of this chart generation: Kafka's 1 on 3 brokers
    assert [(x.rule, x.resource_name) for x in result.findings if x.severity != "info"] == [
        ("CFG004", "min.insync.replicas")
    ]


def test_helm_whole_server_properties_in_config_wins_over_the_chart_keys():
    f = real_input("helm/bitnami-kafka-22.1.5-values.yaml")
    (broker, *_others) = read_inputs([f]).brokers
    value, line = broker.entries["offsets.topic.replication.factor"]
    assert value == "1" and line_of(f, line) == "offsets.topic.replication.factor=1"
    assert "default.replication.factor" not in broker.entries  # defaultReplicationFactor: 1 is not used
    out = json.dumps([x.to_dict() if hasattr(x, "to_dict") else str(x) for x in run_lint([f]).findings])
    assert "kpassword" not in out and "tpassword" not in out


def test_helm_new_chart_split_roles_and_disabled_provisioning_is_reported():
    f = real_input("helm/dwijad-bitnami-kafka-26.6.2-values.yaml")
    inputs = read_inputs([f])
    assert len(inputs.brokers) == 3 and inputs.topics == []
    result = run_lint([f])
    (line,) = [w for w in warnings(result) if "provisioning.enabled is false" in w]
    assert line.startswith(f"warning: {f}:615: ")


def test_helm_cp_kafka_configuration_overrides():
    f = real_input("helm/cp-helm-charts-cp-kafka-values.yaml")
    (broker, *_others) = read_inputs([f]).brokers
    assert broker.entries["offsets.topic.replication.factor"] == ("3", 45)
    assert "min.insync.replicas" not in broker.entries  # commented out in the file


# --- CloudFormation -------------------------------------------------------------------------------


def test_cloudformation_json_cluster_facts_and_msk_default_configuration():
    f = real_input("cloudformation/valentine-dev-msk-3az-setup.json")
    inputs = read_inputs([f])
    (facts,) = inputs.clusters
    assert (facts.brokers, facts.instance_type, facts.azs, facts.kafka_version) == (
        3,
        "kafka.m5.large",
        3,
        "2.2.1",
    )
    result = run_lint([f])
    # no custom configuration: MSK's default one, unclean.leader.election.enable=true
    assert where(result) == [("REP005", f.name, 558)]
    assert result.clusters[0]["az_count"] == 3


def test_cloudformation_yaml_tags_are_reported_as_not_evaluated():
    f = real_input("cloudformation/cfn-modules-msk-module.yml")
    result = run_lint([f])
    lines = warnings(result)
    assert any(w.startswith(f"warning: {f}:129: ") and "!Split" in w for w in lines)
    assert any(w.startswith(f"warning: {f}:137: ") and "!If" in w for w in lines)
    assert result.findings == []


def test_cloudformation_malformed_is_a_one_line_error(tmp_path, capsys):
    f = tmp_path / "msk.yaml"
    f.write_text(
        "AWSTemplateFormatVersion: '2010-09-09'\nResources:\n  C:\n    Type: AWS::MSK::Cluster\n  - x\n"
    )
    code, out, err = cli(capsys, "lint", f)
    assert code == 3 and [x for x in out.splitlines() if x.startswith(f"warning: {f}:")]
    code, out, err = cli(capsys, "lint", "--strict", f)
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"kafka-audit: {f}:")


# --- walking a directory ------------------------------------------------------------------------


def test_a_directory_of_config_as_code_is_walked_by_content(tmp_path, capsys):
    """Own tree: a real Strimzi CR and CFK topic copied by path (symlinks, not copies), a
    template lint cannot render, a README."""
    (tmp_path / "k8s").mkdir()
    (tmp_path / "k8s" / "kafka.yml").symlink_to(
        real_input("strimzi-kafka/sahataslee-zk-2.8.0-kafka-cluster.yml")
    )
    (tmp_path / "k8s" / "topic.yaml").symlink_to(real_input("cfk/codejsha-kafka-topic.yaml"))
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "server.properties.tpl").write_text("min.insync.replicas=${min_isr}\n")
    (tmp_path / "README.md").write_text("# infra\n")
    (tmp_path / ".terraform").mkdir()
    (tmp_path / ".terraform" / "x.tf").write_text("not hcl {")
    code, out, _err = cli(capsys, "lint", tmp_path)
    assert code == 1
    assert (
        f"warning: {tmp_path / 'templates' / 'server.properties.tpl'}: looks like Kafka configuration" in out
    )
    assert "1 other file(s) in the given directories passed over" in out
    assert "2 file(s) linted" in out


def test_a_directory_where_nothing_could_be_linted_is_not_green(tmp_path, capsys):
    (tmp_path / "main.tf").write_text('resource "aws_s3_bucket" "b" {\n  bucket = "x"\n}\n')
    (tmp_path / "notes.txt").write_text("hello\n")
    code, out, _err = cli(capsys, "lint", tmp_path)
    assert code == 3 and "INCOMPLETE lint: none of the 2 file(s) given could be linted" in out


@pytest.mark.parametrize(
    ("path", "line"),
    [
        ("strimzi-kafka/sahataslee-zk-2.8.0-kafka-cluster.yml", 55),
        ("cfk/codejsha-production-kafka.yaml", None),
        ("helm/codejsha-bitnami-kafka-legacy-values.yaml", None),
        ("cloudformation/valentine-dev-msk-3az-setup.json", None),
    ],
)
def test_against_a_snapshot_every_format_replaces_every_brokers_configuration(path, line):
    """A broker configuration resource is a template: against a cluster, every broker's."""
    f = real_input(path)
    result = run_lint([f], against=str(SNAPSHOT))
    assert result.findings and all(x.location["file"] == str(f) for x in result.findings)
    rules = {x.rule for x in result.findings}
    assert rules & {"THR003", "THR004", "THR006"}  # judged against the snapshot's cores and connections
    if line is not None:
        assert ("REP002", f.name, line) in where(result)


def test_tfvars_in_a_walk_terraform_tfvars_is_applied_as_terraform_does_others_are_not(tmp_path):
    """terraform.tfvars is loaded by Terraform itself from the module's directory; another
    .tfvars only when named (-var-file): lint does the same."""
    (tmp_path / "main.tf").symlink_to(real_input("terraform/firoz03-iamplus-msk-main.tf"))
    (tmp_path / "prod.tfvars").symlink_to(real_input("terraform/firoz03-iamplus-msk-terraform.tfvars"))
    inputs = read_inputs([tmp_path])
    assert any("prod.tfvars: skipped: Terraform variable values (name it" in n for n in inputs.notes)
    assert any("var.server_properties" in w for w in inputs.unevaluated) and inputs.brokers == []
    (tmp_path / "prod.tfvars").rename(tmp_path / "terraform.tfvars")
    inputs = read_inputs([tmp_path])
    assert any(
        "terraform.tfvars: Terraform variable values that Terraform loads by itself" in n
        for n in inputs.notes
    )
    assert inputs.unevaluated == [] and len(inputs.brokers) == 2


def test_a_walk_counts_yaml_without_kafka_and_names_kafka_looking_yaml_it_cannot_read(tmp_path, capsys):
    (tmp_path / "deploy.yaml").write_text("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")
    (tmp_path / "odd.yaml").write_text("brokers:\n  settings:\n    min.insync.replicas: 2\n")
    (tmp_path / "t.yaml").write_text("- name: a\n  partitions: 1\n  replication_factor: 3\n")
    inputs = read_inputs([tmp_path])
    assert inputs.other_files == 1  # the Deployment
    assert [u.split(":")[0] for u in inputs.unrecognised] == [str(tmp_path / "odd.yaml")]


_HCL_PIECES = [
    'resource "kafka_topic" "t" {',
    'resource "aws_msk_configuration" "c" {',
    'resource "aws_msk_cluster" "k" {',
    'module "m" {',
    "locals {",
    'variable "v" {',
    "}",
    "{",
    "[",
    "]",
    'name = "x"',
    "partitions = var.p",
    "replication_factor = 1",
    "replication_factor = local.a",
    'config = { "a.b" = 1 }',
    "config = merge(local.c, {x = 1})",
    "server_properties = <<EOT\nmin.insync.replicas = 1\nEOT",
    "server_properties = <<-EOT\n  a=${var.x}\n  EOT",
    "default = 3",
    "a = local.a",
    "number_of_broker_nodes = 3 * length(var.s)",
    '"quoted": 1',
    "# kafka-audit: ignore[REP003]",
    "\\u00zz",
    "${",
    "\n",
]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(_HCL_PIECES), max_size=30), st.text(max_size=20))
def test_terraform_reader_gives_rows_or_one_line_error(tmp_path, pieces, noise):
    """Any text in a .tf file: located rows, or one LintInputError line; never a traceback."""
    from auditor.lint.model import LintInputError

    f = tmp_path / "fuzz.tf"
    f.write_text("\n".join(pieces) + noise, encoding="utf-8", errors="surrogatepass")
    try:
        read_inputs([f])
    except LintInputError as e:
        assert "\n" not in str(e) and str(e).startswith(str(f))


def test_a_helm_template_in_values_is_reported_not_guessed(tmp_path):
    """Own input: Bitnami-style values with a Helm template where a number should be."""
    f = tmp_path / "values.yaml"
    f.write_text(
        "replicaCount: 3\ndefaultReplicationFactor: '{{ .Values.global.rf }}'\n"
        "offsetsTopicReplicationFactor: 3\nextraConfig: |\n  min.insync.replicas=2\n"
    )
    inputs = read_inputs([f])
    assert "default.replication.factor" not in inputs.brokers[0].entries
    assert inputs.brokers[0].entries["min.insync.replicas"] == ("2", 5)
    (line,) = inputs.unevaluated
    assert line.startswith(
        f"{f}:2: defaultReplicationFactor = {{{{ .Values.global.rf }}}} is a Helm template"
    )


def test_strict_makes_a_kafka_looking_file_lint_cannot_read_an_error(tmp_path, capsys):
    f = tmp_path / "server.properties.j2"
    f.write_text("broker.id={{ id }}\nmin.insync.replicas={{ isr }}\n")
    code, out, _err = cli(capsys, "lint", f)
    assert code == 3 and "looks like Kafka configuration (min.insync.replicas)" in out
    code, out, err = cli(capsys, "lint", f, "--strict")
    assert code == 2 and err.count("\n") == 1 and "it is a template, which lint does not render" in err


def test_pre_commit_hooks_cover_the_formats():
    import re

    import yaml

    root = Path(__file__).resolve().parent.parent
    hooks = {h["id"]: h for h in yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text())}
    lint = hooks["kafka-audit-lint"]
    assert lint["entry"] == "kafka-audit lint" and lint["language"] == "python"
    for name in ("server.properties", "topics.yaml", "main.tf", "kafka.yml", "msk.json", "values.yaml"):
        assert re.search(lint["files"], name), name
    assert re.search(hooks["kafka-audit-lint-terraform-plan"]["files"], "infra/tfplan.json")


def test_a_named_broker_file_with_another_suffix_is_recognised_by_its_keys(tmp_path):
    f = tmp_path / "broker-1.props"
    f.symlink_to(real_input("properties/helk-unclean-election.properties"))  # read in place
    inputs = read_inputs([f])
    assert [b.file for b in inputs.brokers] == [str(f)]
    other = tmp_path / "notes.cfgx"
    other.write_text("hello world\n")
    (warning,) = read_inputs([other]).unreadable  # a warning naming it; --strict: exit 2
    assert warning.startswith(f"{other}: unsupported file type '.cfgx'")


def test_each_broker_configuration_resource_is_a_cluster_of_its_own():
    """Four unrelated Helm releases in one directory are four 3-broker clusters, not one of
    12: a key one release sets is not reported where another leaves it unset."""
    d = real_input("helm")
    result = run_lint([d])
    cfg004 = [x for x in result.findings if x.rule == "CFG004"]
    assert cfg004 and all("on a cluster of 3 brokers" in x.message for x in cfg004)
    by_file = {(Path(x.location["file"]).name, x.resource_name) for x in cfg004}
    assert ("codejsha-bitnami-kafka-legacy-values.yaml", "default.replication.factor") not in by_file
    assert ("cp-helm-charts-cp-kafka-values.yaml", "default.replication.factor") in by_file


def test_a_strimzi_topic_is_linted_with_the_kafka_cluster_it_names(tmp_path):
    """The Strimzi Kafka CR (min.insync.replicas 2) and an own KafkaTopic labelled with its
    name, RF 2: the topic inherits the cluster's min ISR (REP002); unlabelled, it does not."""
    (tmp_path / "kafka.yaml").symlink_to(
        real_input("strimzi-kafka/sahataslee-v1beta2-kraft-3.9.1-kafka-cluster.yml")
    )
    (tmp_path / "pool.yaml").symlink_to(
        real_input("strimzi-kafka/sahataslee-v1beta2-kraft-3.9.1-kafka-node-pool.yml")
    )
    name = read_inputs([tmp_path / "kafka.yaml"]).brokers[0].group.split("/", 1)[1]
    topic = tmp_path / "topic.yaml"
    topic.write_text(
        "apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaTopic\nmetadata:\n  name: orders\n"
        f"  labels:\n    strimzi.io/cluster: {name}\nspec:\n  partitions: 3\n  replicas: 2\n"
    )
    assert ("REP002", "topic.yaml", 4) in where(run_lint([tmp_path]))
    topic.write_text(topic.read_text().replace(f"strimzi.io/cluster: {name}", "strimzi.io/cluster: other"))
    assert ("REP002", "topic.yaml", 4) not in where(run_lint([tmp_path]))


def test_two_broker_configurations_against_one_snapshot_is_a_one_line_error(capsys):
    files = [
        real_input("topics/strimzi-v1-kafka-jbod-cr.yaml"),
        real_input("topics/strimzi-v1-kafka-persistent-cr.yaml"),
    ]
    code, out, err = cli(capsys, "lint", *files, "--against", SNAPSHOT)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "a second broker configuration (Kafka/my-cluster; the first is Kafka/my-cluster in" in err


def test_cloudformation_configuration_server_properties_linked_to_its_cluster(tmp_path):
    """Own input (SOURCES.md: no attributable template with inline ServerProperties was found),
    shaped as the AWS::MSK::Configuration and AWS::MSK::Cluster documentation gives them."""
    f = tmp_path / "msk.yaml"
    f.write_text(
        "AWSTemplateFormatVersion: '2010-09-09'\n"
        "Resources:\n"
        "  Config:\n"
        "    Type: AWS::MSK::Configuration\n"
        "    Properties:\n"
        "      Name: c\n"
        "      ServerProperties: |\n"
        "        default.replication.factor=3\n"
        "        min.insync.replicas=3\n"
        "        unclean.leader.election.enable=true\n"
        "  Cluster:\n"
        "    Type: AWS::MSK::Cluster\n"
        "    Properties:\n"
        "      ClusterName: !Sub '${AWS::StackName}'\n"
        "      KafkaVersion: 3.6.0\n"
        "      NumberOfBrokerNodes: 3\n"
        "      BrokerNodeGroupInfo:\n"
        "        InstanceType: kafka.m5.large\n"
        "        ClientSubnets: [!Ref A, !Ref B, !Ref C]\n"
        "      ConfigurationInfo:\n"
        "        Arn: !GetAtt Config.Arn\n"
        "        Revision: 1\n"
    )
    inputs = read_inputs([f])
    assert len(inputs.brokers) == 3 and inputs.brokers[0].cluster.azs == 3
    assert inputs.brokers[0].entries["min.insync.replicas"] == ("3", 9)
    result = run_lint([f])
    assert where(result) == [
        ("REP002", "msk.yaml", 9),
        ("REP005", "msk.yaml", 10),
    ]  # the rolling-restart stall
    assert result.clusters[0]["msk_instance_type"] == "kafka.m5.large"


def test_an_express_msk_cluster_without_configuration_runs_the_values_msk_fixes(tmp_path):
    """Own input: a three-AZ Express cluster in Terraform with no configuration_info, and a
    topic. Express brokers do not run Standard's default configuration: their broker rows are
    the values MSK fixes (AWS's Express read-only table), and nothing judges a min ISR of 1."""
    f = tmp_path / "msk.tf"
    f.write_text(
        'resource "aws_msk_cluster" "k" {\n'
        '  cluster_name           = "k"\n'
        '  kafka_version          = "3.6.0"\n'
        "  number_of_broker_nodes = 3\n"
        "  broker_node_group_info {\n"
        '    instance_type  = "express.m7g.large"\n'
        '    client_subnets = ["a", "b", "c"]\n'
        "  }\n"
        "}\n"
        'resource "kafka_topic" "t" {\n'
        '  name               = "orders"\n'
        "  partitions         = 3\n"
        "  replication_factor = 3\n"
        "}\n"
    )
    inputs = read_inputs([f])
    assert {k: v for k, (v, _line) in inputs.brokers[0].entries.items()} == {
        "default.replication.factor": "3",
        "min.insync.replicas": "2",
    }
    assert "Express read-only" in inputs.brokers[0].group
    assert not [r for r, _f, _l in where(run_lint([f])) if r in ("REP004", "CFG004", "REP002")]
