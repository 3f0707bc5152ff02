"""Strimzi custom resources (apiVersion ``kafka.strimzi.io/*``).

- ``KafkaTopic``: ``metadata.name`` (or ``spec.topicName``), ``spec.partitions``,
  ``spec.replicas``, ``spec.config``;
- ``Kafka``: ``spec.kafka.config`` is the brokers' configuration (each key at its line),
  linted as every broker's; ``spec.kafka.replicas`` the broker count (ZooKeeper mode; with
  node pools, the ``KafkaNodePool`` resources labelled ``strimzi.io/cluster: NAME`` with the
  ``broker`` role, in any file of the run), ``spec.kafka.storage`` (JBOD ``volumes``: one log
  dir each) the log dirs, ``spec.kafka.version`` / ``metadataVersion`` the version and
  ``spec.zookeeper`` (or the KRaft annotations and node pools) the metadata mode;
- ``KafkaNodePool``: ``spec.replicas``, ``spec.roles``, ``spec.storage``.

Strimzi mounts volume ``ID`` of a JBOD storage at ``/var/lib/kafka/data-ID`` and a single
volume at ``/var/lib/kafka/data`` (strimzi-kafka-operator VolumeUtils: ``DATA_VOLUME_MOUNT_PATH``).
"""

from __future__ import annotations

from auditor.collectors.files import BROKER
from auditor.lint.formats._topics import topic_from_resource
from auditor.lint.model import BrokerFile, ClusterFacts, FileRows, NodePool
from auditor.lint.versions import declare_mode, declare_version
from auditor.lint.yaml_fields import YamlDoc, YamlFile, key_line, mapping

NAME = "strimzi"
UNIT = "document"
KINDS = ("KafkaTopic", "Kafka", "KafkaNodePool")


def recognise(doc: YamlDoc) -> bool:
    return doc.api.startswith("kafka.strimzi.io/") and doc.kind in KINDS


def log_dirs(storage, ctx: YamlFile) -> tuple[str, ...] | None:
    """The log dirs a storage spec gives each broker (None: not said)."""
    import yaml

    s = mapping(storage)
    if s is None:
        return None
    kind = ctx.text(s.get("type"))
    if kind == "jbod":
        volumes = s.get("volumes")
        ids = []
        for v in volumes.value if isinstance(volumes, yaml.SequenceNode) else []:
            vid = ctx.int_field((mapping(v) or {}).get("id"), "storage volume id")
            ids.append(0 if vid is None else vid)
        return tuple(f"/var/lib/kafka/data-{i}" for i in ids) or None
    if kind in ("persistent-claim", "ephemeral"):
        return ("/var/lib/kafka/data",)
    return None


def _kafka(doc: YamlDoc) -> FileRows:
    m, ctx = doc.m, doc.ctx
    meta = mapping(m.get("metadata")) or {}
    name = ctx.text(meta.get("name")) or "?"
    spec = mapping(m.get("spec")) or {}
    kafka = mapping(spec.get("kafka")) or {}
    config = kafka.get("config")
    entries = ctx.configs(config)
    annotations = mapping(meta.get("annotations")) or {}
    kraft_marks = (
        ctx.text(annotations.get("strimzi.io/kraft")) == "enabled"
        or "metadataVersion" in kafka
        or doc.api.endswith("/v1")
    )
    mode = "zookeeper" if "zookeeper" in spec else "kraft" if kraft_marks else None
    address = f"Kafka/{name}"
    facts = ClusterFacts(address=address, file=ctx.file, line=doc.line, platform="strimzi")
    kafka_node = spec.get("kafka")
    declare_version(
        facts,
        ctx.text(kafka.get("version")),
        line=key_line(kafka_node, "version", doc.line),
        source="spec.kafka.version",
    )
    mode_line = (
        key_line(m.get("spec"), "zookeeper", doc.line)
        if mode == "zookeeper"
        else key_line(kafka_node, "metadataVersion", doc.line)
        if "metadataVersion" in kafka
        else doc.line
    )
    declare_mode(facts, mode, line=mode_line)
    if ctx.text(kafka.get("metadataVersion")):
        facts.metadata_version = ctx.text(kafka.get("metadataVersion"))
        facts.lines["metadata_version"] = key_line(kafka_node, "metadataVersion", doc.line)
    broker = BrokerFile(
        ctx.file,
        -1,
        entries,
        False,
        BROKER,
        group=address,
        line=key_line(spec.get("kafka"), "config", doc.line),
        brokers=ctx.int_field(kafka.get("replicas"), "spec.kafka.replicas"),
        log_dirs=log_dirs(kafka.get("storage"), ctx),
        cluster=facts,
    )
    return FileRows(brokers=[broker], clusters=[facts])


def _pool(doc: YamlDoc) -> FileRows:
    import yaml

    m, ctx = doc.m, doc.ctx
    meta = mapping(m.get("metadata")) or {}
    labels = mapping(meta.get("labels")) or {}
    spec = mapping(m.get("spec")) or {}
    roles = spec.get("roles")
    pool = NodePool(
        cluster=ctx.text(labels.get("strimzi.io/cluster")) or "",
        name=ctx.text(meta.get("name")) or "?",
        replicas=ctx.int_field(spec.get("replicas"), "spec.replicas"),
        roles=tuple(ctx.text(r) or "" for r in roles.value) if isinstance(roles, yaml.SequenceNode) else (),
        log_dirs=log_dirs(spec.get("storage"), ctx),
        file=ctx.file,
        line=doc.line,
    )
    return FileRows(node_pools=[pool])


def read(doc: YamlDoc) -> FileRows:
    if doc.kind == "Kafka":
        return _kafka(doc)
    if doc.kind == "KafkaNodePool":
        return _pool(doc)
    topic = topic_from_resource(doc.m, doc.ctx, doc.line, "strimzi")
    labels = mapping((mapping(doc.m.get("metadata")) or {}).get("labels")) or {}
    cluster = doc.ctx.text(labels.get("strimzi.io/cluster"))
    topic.cluster_ref = f"Kafka/{cluster}" if cluster else None
    return FileRows(topics=[topic])


def link_node_pools(brokers: list[BrokerFile], pools: list[NodePool]) -> list[str]:
    """A Kafka resource without ``replicas`` has the brokers of its node pools (role
    ``broker``; their log dirs when the resource says none). What could not be linked is
    returned, one line each."""
    out = []
    for b in brokers:
        if not (b.group or "").startswith("Kafka/") or b.cluster is None or b.cluster.platform != "strimzi":
            continue
        name = b.group[len("Kafka/") :]
        mine = [p for p in pools if p.cluster == name and "broker" in p.roles]
        linked = [p for p in pools if p.cluster == name]
        if linked and not any("controller" in p.roles for p in linked) and b.cluster.metadata_mode is None:
            # Node pools with the broker role only: Strimzi's node pools of a ZooKeeper-based
            # cluster (0.36-0.45); KRaft needs a pool with the controller role.
            declare_mode(b.cluster, "zookeeper", line=b.cluster.line)
        if b.brokers is None and mine:
            b.brokers = sum(p.replicas or 0 for p in mine) or None
        if b.log_dirs is None and mine and mine[0].log_dirs:
            b.log_dirs = mine[0].log_dirs
        if b.brokers is None:
            out.append(
                f"{b.file}:{b.cluster.line}: {b.group} has no spec.kafka.replicas and no KafkaNodePool with "
                f"the broker role and strimzi.io/cluster: {name} among the files: linted as one broker"
            )
    return out
