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

from auditor.lint.formats import _images
from auditor.lint.model import ClusterFacts

# Confluent Platform release -> the Apache Kafka line it carries (formats/_images.py's table,
# the one place it is kept), as "7.6" -> "3.6".
CONFLUENT_PLATFORM = {f"{cp[0]}.{cp[1]}": ak for cp, ak in _images.CP_TO_AK.items()}


def image_version(image: str | None, tag: str | None = None) -> tuple[str, str] | None:
    """(Kafka version, image repository) of a Kafka container image, or None when the image is not
    one whose tag names the Kafka version. ``tag`` when the values give it apart (``image.tag``).
    The reading of the tag is formats/_images.py's, the one every format uses: apache/kafka[-native]
    :3.9.0, bitnami/kafka:3.9.0-debian-12-r4, quay.io/strimzi/kafka:0.45.0-kafka-3.9.0,
    wurstmeister/kafka:2.13-2.8.1 (Scala-Kafka), confluentinc/cp-kafka or cp-server:7.6.1
    (Confluent Platform 7.6 = Kafka 3.6)."""
    if not image:
        return None
    parsed = _images.parse_image(image)
    if tag:
        parsed = _images.Image(parsed.ref, parsed.repository, tag.strip())
    if not parsed.tag or "{{" in parsed.tag or "$" in parsed.tag:
        return None
    conv = _images.convention(parsed)
    version = _images.kafka_version(parsed, conv)
    if version is None:
        return None
    repo = "/".join(parsed.repository.lower().split("/")[-2:])
    if conv in (_images.CONFLUENT, _images.CONFLUENT_SERVER):
        # Confluent Platform X.Y carries Kafka's line, not a patch: "3.6", as every format says
        cp = ".".join(parsed.tag.split(".")[:2])
        return version, f"{repo} (Confluent Platform {cp})"
    return _three(version), repo


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
