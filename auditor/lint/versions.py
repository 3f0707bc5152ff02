"""The target-version hook of change review: what a format tells lint about a cluster's Kafka version.

`kafka-audit lint --target-version 4.N` judges the clusters the files declare against the upgrade
table (the UPG rules that declare runs_in "lint-upgrade"). A format plugs in by recording, on the
:class:`~auditor.lint.model.ClusterFacts` of the cluster resource it read, what it learnt and where:

    from auditor.lint.versions import declare_version, image_version
    facts = ClusterFacts(address="compose/kafka-1", file=src.file, line=service_line, platform="compose")
    found = image_version("bitnami/kafka:3.9.0-debian-12-r4")     # ("3.9.0", "bitnami/kafka")
    if found:
        declare_version(facts, found[0], line=image_line, source=f"image {image}")
    declare_mode(facts, "kraft", line=...)        # when the resource says (KAFKA_CFG_PROCESS_ROLES ...)
    rows.clusters.append(facts)                   # and the BrokerFile of its configuration: cluster=facts

The manifest of that cluster then carries the version and mode (auditor/lint/change_tables.py
lint_manifest), and a cluster finding points at the line recorded for the rule's lint_key
(kafka_version, metadata_mode, metadata_version). Helm values (auditor/lint/formats/helm.py),
Strimzi (strimzi.py) and Terraform/CloudFormation MSK clusters use it; a compose file format only
has to do the same for each Kafka service's ``image:``.
"""

from __future__ import annotations

import re

from auditor.lint.model import ClusterFacts

# Confluent Platform release -> the Apache Kafka line it carries: confluentinc/kafka's release
# branches, each branch X.Y's gradle.properties version (2.3 -> 5.3.x-ccs ... 3.9 -> 7.9.x-ccs,
# 4.0 -> 8.0.x-ccs ... 4.4 -> 8.4.0-ccs), read at the snapshot of 2026-08.
CONFLUENT_PLATFORM = {
    **{f"5.{m}": f"2.{m}" for m in range(3, 6)},
    **{f"6.{m}": f"2.{m + 6}" for m in range(0, 3)},
    **{f"7.{m}": f"3.{m}" for m in range(0, 10)},
    **{f"8.{m}": f"4.{m}" for m in range(0, 5)},
}
_TAG = re.compile(r"^v?(\d{1,3}\.\d{1,3}(?:\.\d{1,4})?)")
_STRIMZI_TAG = re.compile(r"-kafka-(\d{1,3}\.\d{1,3}\.\d{1,4})$")
_WURSTMEISTER_TAG = re.compile(r"^\d\.\d{1,2}-(\d{1,3}\.\d{1,3}\.\d{1,4})$")


def image_version(image: str | None, tag: str | None = None) -> tuple[str, str] | None:
    """(Kafka version, image repository) of a Kafka container image, or None when the image is not
    one whose tag names the Kafka version. ``tag`` when the values give it apart (``image.tag``).

    apache/kafka[-native]:3.9.0, bitnami/kafka:3.9.0-debian-12-r4, quay.io/strimzi/kafka:
    0.45.0-kafka-3.9.0, wurstmeister/kafka:2.13-2.8.1 (Scala-Kafka), confluentinc/cp-kafka or
    cp-server:7.6.1 (Confluent Platform 7.6 = Kafka 3.6, CONFLUENT_PLATFORM)."""
    if not image:
        return None
    ref = image.strip()
    if "@" in ref and tag is None:  # pinned by digest only: no version to read
        ref = ref.split("@", 1)[0]
    name, _, own_tag = ref.rpartition(":") if ":" in ref.rsplit("/", 1)[-1] else (ref, "", "")
    tag = (tag or own_tag or "").strip()
    if not tag or "{{" in tag or "$" in tag:
        return None
    repo = name.lower().split("/")
    repo = "/".join(repo[-2:]) if len(repo) >= 2 else repo[-1]
    if repo in ("apache/kafka", "apache/kafka-native", "bitnami/kafka"):
        m = _TAG.match(tag)
        return (_three(m.group(1)), repo) if m else None
    if repo == "strimzi/kafka":
        m = _STRIMZI_TAG.search(tag)
        return (m.group(1), repo) if m else None
    if repo == "wurstmeister/kafka":
        m = _WURSTMEISTER_TAG.match(tag)
        return (m.group(1), repo) if m else None
    if repo in ("confluentinc/cp-kafka", "confluentinc/cp-server"):
        m = re.match(r"^(\d{1,2}\.\d{1,2})(?:\.(\d{1,3}))?", tag)
        if m and m.group(1) in CONFLUENT_PLATFORM:
            return f"{CONFLUENT_PLATFORM[m.group(1)]}.0", f"{repo} (Confluent Platform {m.group(1)})"
    return None


def _three(v: str) -> str:
    return v if v.count(".") == 2 else v + ".0"


def declare_version(facts: ClusterFacts, version: str | None, *, line: int, source: str) -> None:
    """Record a cluster's Kafka version and where it was read (the first declaration wins)."""
    if not version or facts.kafka_version:
        return
    facts.kafka_version = version
    facts.version_source = source
    facts.lines.setdefault("kafka_version", line)


def declare_mode(facts: ClusterFacts, mode: str | None, *, line: int) -> None:
    """Record the metadata mode (zookeeper | kraft) the resource declares, and its line."""
    if mode in ("zookeeper", "kraft") and not facts.metadata_mode:
        facts.metadata_mode = mode
        facts.lines.setdefault("metadata_mode", line)


def declare_msk_mode(facts: ClusterFacts) -> None:
    """An MSK cluster's mode from its version string, as the MSK collector reads it (``.kraft``, 4.x:
    KRaft; another version of a Standard broker: ZooKeeper): at the version's line."""
    from auditor.collectors.msk import kraft_mode

    if facts.kafka_version and not facts.metadata_mode:
        declare_mode(
            facts,
            kraft_mode(facts.kafka_version, facts.instance_type, None),
            line=facts.lines.get("kafka_version", facts.line),
        )


def metadata_level_of(name: str | None) -> int | None:
    """A declared metadata.version ("3.9-IV0", or "3.9": that release's newest level) as its
    feature level (the upgrade table's metadata versions); None when unknown."""
    from auditor.kafka_upgrades import metadata_level, metadata_versions

    if not name:
        return None
    level = metadata_level(name.strip())
    if level is None:
        same = [lv for lv, n in metadata_versions().items() if n.split("-")[0] == name.strip()]
        level = max(same) if same else None
    return level
