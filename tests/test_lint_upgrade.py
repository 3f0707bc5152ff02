"""`kafka-audit lint --target-version 4.N`: change review for an upgrade, on real public files.

The Strimzi, Terraform and Helm files of ../shared/real-inputs are read in place. Each finding is
asserted at its file:line (the field it is about: spec.zookeeper, spec.kafka.version, kafka_version,
the image tag), per target where the verdict changes with the release.
"""

from __future__ import annotations

import pytest

from auditor.kafka_upgrades import resolve_target
from auditor.lint import run_lint
from auditor.lint.model import ClusterFacts
from auditor.lint.versions import CONFLUENT_PLATFORM, declare_mode, declare_version, image_version
from tests.conftest import real_input

STRIMZI_ZK = "strimzi-kafka/sahataslee-zk-2.8.0-kafka-cluster.yml"
STRIMZI_39 = "strimzi-kafka/sahataslee-v1beta2-kraft-3.9.1-kafka-cluster.yml"
STRIMZI_39_POOL = "strimzi-kafka/sahataslee-v1beta2-kraft-3.9.1-kafka-node-pool.yml"
STRIMZI_41 = "strimzi-kafka/sahataslee-v1-kraft-4.1.1-kafka-cluster.yaml"
STRIMZI_41_POOL = "strimzi-kafka/sahataslee-v1-kraft-4.1.1-kafka-node-pool.yaml"
TF_FIROZ = ("terraform/firoz03-iamplus-msk-main.tf", "terraform/firoz03-iamplus-msk-terraform.tfvars")
TF_TAM = "terraform/tam-msk-kafka-cluster-complete-example-main.tf"


def _upg(result, prefix=("UPG",)):
    return {
        (
            f.rule,
            (f.location or {}).get("file", "").rsplit("/", 1)[-1],
            (f.location or {}).get("line"),
            f.severity,
        )
        for f in result.findings
        if f.rule.startswith(prefix)
    }


@pytest.mark.slow
@pytest.mark.parametrize("target", ["4.0", "4.1", "4.2", "4.3", "4.4"])
def test_strimzi_zookeeper_cluster_at_every_target(target):
    result = run_lint([real_input(STRIMZI_ZK)], target_version=target)
    found = _upg(result)
    name = STRIMZI_ZK.rsplit("/", 1)[-1]
    # spec.zookeeper (line 122): every 4.x release has no ZooKeeper mode
    assert ("UPG001", name, 122, "critical") in found
    upg001 = next(f for f in result.findings if f.rule == "UPG001")
    assert f"Kafka {target} has no ZooKeeper mode" in upg001.message
    # min.insync.replicas: 3 in spec.kafka.config (line 55), which Strimzi applies per broker: from 4.1
    # the finalize step turns ELR on and the controller refuses it (strimzi-kafka-operator#11685)
    assert (("UPG007", name, 55, "error") in found) == (target != "4.0")
    # inter.broker.protocol.version / log.message.format.version go with the KRaft migration: info
    assert ("UPG004", name, 60, "info") in found
    note = next(n for n in result.notes if "Kafka/kafka-cluster-poc-2-8-0" in n)
    assert "Kafka 2.8.0 (zookeeper)" in note and "migrate to KRaft" in note


@pytest.mark.slow
def test_strimzi_kraft_clusters_with_their_node_pools():
    files = [real_input(f) for f in (STRIMZI_39, STRIMZI_39_POOL, STRIMZI_41, STRIMZI_41_POOL)]
    result = run_lint(files, target_version="4.1")
    found = _upg(result)
    assert not any(rule == "UPG001" for rule, *_ in found)
    # both set min.insync.replicas: 2 in spec.kafka.config (Strimzi applies it per broker)
    assert ("UPG007", STRIMZI_39.rsplit("/", 1)[-1], 42, "error") in found
    assert ("UPG007", STRIMZI_41.rsplit("/", 1)[-1], 45, "error") in found
    # metadataVersion 3.9-IV0 on 3.9.1: finalized at its release, no UPG003
    assert not any(rule == "UPG003" for rule, *_ in found)
    notes = [n for n in result.notes if " -> 4.1: " in n]
    assert any("Kafka 3.9.1 (kraft) -> 4.1: 1. upgrade to 4.1" in n for n in notes)
    assert any("Kafka 4.1.1 (kraft) -> 4.1: 1. already on 4.1" in n for n in notes)
    # the same files without --target-version: no upgrade rule runs
    plain = run_lint(files)
    assert not _upg(plain) and not any(" -> " in n for n in plain.notes)


@pytest.mark.slow
def test_strimzi_metadata_version_behind_its_release_warns_at_its_line(tmp_path):
    text = real_input(STRIMZI_39).read_text().replace("metadataVersion: 3.9-IV0", "metadataVersion: 3.6-IV2")
    cr = tmp_path / "kafka.yaml"
    cr.write_text(text)
    result = run_lint([cr], target_version="4.0")
    (f,) = [f for f in result.findings if f.rule == "UPG003"]
    assert f.severity == "warning" and f.location["line"] == 11 and "3.6-IV2" in f.message


@pytest.mark.slow
def test_terraform_msk_clusters_in_zookeeper_mode():
    result = run_lint([real_input(p) for p in (*TF_FIROZ, TF_TAM)], target_version="4.0")
    found = _upg(result)
    # kafka_version = var.kafka_version = "2.6.2" (the tfvars), line 14 of the module call; t3.small,
    # 2 subnets: AWS's migration prerequisites fail on three counts
    assert ("UPG001", "firoz03-iamplus-msk-main.tf", 14, "critical") in found
    assert ("UPG005", "firoz03-iamplus-msk-main.tf", 14, "critical") in found
    upg005 = next(f for f in result.findings if f.rule == "UPG005")
    for why in ("runs Kafka 2.6.2", "2 Availability Zone(s)", "kafka.t3.small"):
        assert why in upg005.message
    # kafka_version = "3.9.x" (ZooKeeper on MSK): migrate in place; its prerequisites hold as far as read
    assert ("UPG001", "tam-msk-kafka-cluster-complete-example-main.tf", 34, "critical") in found
    assert not any(r == "UPG005" and file.startswith("tam") for r, file, *_ in found)
    tam = next(n for n in result.notes if "module.msk_cluster" in n)
    assert "1. migrate to KRaft in place" in tam and "4.0.x.kraft" in tam


@pytest.mark.slow
def test_helm_values_judged_by_their_image_tag():
    result = run_lint(
        [
            real_input("helm/codejsha-bitnami-kafka-legacy-values.yaml"),
            real_input("helm/cp-helm-charts-cp-kafka-values.yaml"),
            real_input("helm/bitnami-kafka-22.1.5-values.yaml"),
        ],
        target_version="latest",
    )
    found = _upg(result)
    # zookeeper.enabled: true (line 1664) of a Bitnami chart running bitnami/kafka:3.2.1
    assert ("UPG001", "codejsha-bitnami-kafka-legacy-values.yaml", 1664, "critical") in found
    # cp-helm-charts: confluentinc/cp-server 6.1.0 = Kafka 2.7, always on cp-zookeeper (image, line 14)
    assert ("UPG001", "cp-helm-charts-cp-kafka-values.yaml", 14, "critical") in found
    # kraft.enabled: true with bitnami/kafka:3.4.1: KRaft, no UPG001; its leftover zookeeper.* keys: info
    assert not any(r == "UPG001" and f.startswith("bitnami-kafka-22") for r, f, *_ in found)
    assert ("UPG004", "bitnami-kafka-22.1.5-values.yaml", 128, "info") in found
    assert any("Kafka 2.7 (zookeeper) -> 4.3" in n for n in result.notes)  # a CP line, no patch


def test_unknown_target_is_a_usage_error(tmp_path):
    from auditor.errors import UsageError

    props = tmp_path / "server.properties"
    props.write_text("broker.id=1\n")
    with pytest.raises(UsageError, match="not a Kafka release this tool knows"):
        run_lint([props], target_version="3.9")


@pytest.mark.slow
def test_broker_properties_files_say_their_mode(tmp_path):
    """Plain server.properties: zookeeper.connect is a ZooKeeper broker (UPG001 at the first file),
    and without a declared version the path is not judged (a note says so)."""
    props = tmp_path / "server.properties"
    props.write_text(
        "broker.id=1\nzookeeper.connect=zk:2181\nmin.insync.replicas=2\nlog.segment.bytes=524288\n"
    )
    result = run_lint([props], target_version="4.0")
    rules = {(f.rule, f.severity, f.location["line"]) for f in result.findings if f.rule.startswith("UPG")}
    assert ("UPG001", "critical", 1) in rules
    assert ("UPG012", "error", 4) in rules  # 4.0 refuses log.segment.bytes below 1 MiB (KIP-1030)
    assert not any(r == "UPG004" for r, *_ in rules)  # zookeeper.connect goes with the migration


def test_image_versions_and_the_hook():
    assert image_version("apache/kafka:4.1.0") == ("4.1.0", "apache/kafka")
    assert image_version("docker.io/bitnami/kafka:3.6.1-debian-11-r0") == ("3.6.1", "bitnami/kafka")
    assert image_version("quay.io/strimzi/kafka:0.45.0-kafka-3.9.0") == ("3.9.0", "strimzi/kafka")
    assert image_version("wurstmeister/kafka:2.13-2.8.1") == ("2.8.1", "wurstmeister/kafka")
    assert image_version("confluentinc/cp-kafka", "7.9.1")[0] == "3.9"  # a line: CP carries no patch
    assert image_version("confluentinc/cp-server:8.1.0")[0] == "4.1"
    for unknown in (
        "bitnami/kafka",
        "bitnami/kafka@sha256:0a1b",
        "bitnami/kafka:{{ .Values.tag }}",
        "redis:7",
    ):
        assert image_version(unknown) is None
    # Confluent Platform -> Apache Kafka, as confluentinc/kafka's release branches number them
    assert (
        CONFLUENT_PLATFORM["6.2"] == "2.8"
        and CONFLUENT_PLATFORM["7.0"] == "3.0"
        and CONFLUENT_PLATFORM["8.4"] == "4.4"
    )
    # a format records what it learnt, at its line: the first declaration wins
    facts = ClusterFacts(address="compose/kafka-1", file="compose.yaml", line=3, platform="compose")
    declare_version(facts, "3.7.0", line=5, source="image apache/kafka:3.7.0")
    declare_version(facts, "9.9.9", line=9, source="later")
    declare_mode(facts, "kraft", line=7)
    assert (facts.kafka_version, facts.metadata_mode, facts.lines) == (
        "3.7.0",
        "kraft",
        {"kafka_version": 5, "metadata_mode": 7},
    )
    assert resolve_target("latest") == "4.3"
