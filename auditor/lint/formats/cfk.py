"""Confluent for Kubernetes (apiVersion ``platform.confluent.io/*``).

- ``KafkaTopic``: ``metadata.name`` (or ``spec.name``), ``spec.partitionCount``,
  ``spec.replicas``, ``spec.configs``;
- ``Kafka``: ``spec.replicas`` (the broker count) and ``spec.configOverrides.server``, a
  list of ``key=value`` lines (each at its own line; ``#`` items and blank ones are passed
  over), linted as every broker's configuration; ``spec.image.application``
  (``confluentinc/cp-server:7.0.0``) gives the Kafka version (3.0).
"""

from __future__ import annotations

from auditor.collectors.files import BROKER, parse_properties
from auditor.lint.formats import _images
from auditor.lint.model import BrokerFile, ClusterFacts, FileRows, LintInputError, TopicDef
from auditor.lint.yaml_fields import YamlDoc, key_line, line, mapping

NAME = "cfk"
UNIT = "document"


def recognise(doc: YamlDoc) -> bool:
    return doc.api.startswith("platform.confluent.io/") and doc.kind in ("KafkaTopic", "Kafka")


def _topic(doc: YamlDoc) -> TopicDef:
    m, ctx = doc.m, doc.ctx
    meta = mapping(m.get("metadata")) or {}
    spec = mapping(m.get("spec")) or {}
    name_node = spec.get("name") if spec.get("name") is not None else meta.get("name")
    name = ctx.name_of(name_node, doc.line, "KafkaTopic without metadata.name")
    ref = mapping(spec.get("kafkaClusterRef")) or {}
    ref_name = ctx.text(ref.get("name"))
    ref_namespace = ctx.text(ref.get("namespace")) or ctx.text(meta.get("namespace"))
    return TopicDef(
        name=name,
        file=ctx.file,
        line=line(name_node),
        anchors=(doc.line, line(name_node)),
        partitions=ctx.int_field(spec.get("partitionCount"), "spec.partitionCount"),
        replication_factor=ctx.int_field(spec.get("replicas"), "spec.replicas"),
        configs=ctx.configs(spec.get("configs")),
        kind="cfk",
        cluster_ref=f"Kafka/{ref_namespace + '/' if ref_namespace else ''}{ref_name}" if ref_name else None,
    )


def _kafka(doc: YamlDoc) -> FileRows:
    import yaml

    m, ctx = doc.m, doc.ctx
    meta = mapping(m.get("metadata")) or {}
    name = ctx.text(meta.get("name")) or "?"
    namespace = ctx.text(meta.get("namespace"))
    spec = mapping(m.get("spec")) or {}
    overrides = mapping(spec.get("configOverrides")) or {}
    server = overrides.get("server")
    entries: dict[str, tuple[str, int]] = {}
    for item in server.value if isinstance(server, yaml.SequenceNode) else []:
        text = ctx.text(item)
        if text is None or not text.strip() or text.lstrip().startswith(("#", "!")):
            continue
        parsed, problems = parse_properties(text)
        if problems:
            raise LintInputError(f"{ctx.file}:{line(item)}: configOverrides.server: {problems[0].message}")
        for e in parsed:
            entries[e.key] = (e.value, line(item))
    address = f"Kafka/{namespace + '/' if namespace else ''}{name}"
    facts = ClusterFacts(
        address=address, file=ctx.file, line=doc.line, platform="cfk", kafka_version=_version(ctx, spec)
    )
    broker = BrokerFile(
        ctx.file,
        -1,
        entries,
        False,
        BROKER,
        group=address,
        line=key_line(spec.get("configOverrides"), "server", doc.line),
        brokers=ctx.int_field(spec.get("replicas"), "spec.replicas"),
        log_dirs=(),  # the operator's volume layout: not in the resource
        cluster=facts,
    )
    return FileRows(brokers=[broker], clusters=[facts])


def _version(ctx, spec: dict) -> str | None:
    """The Kafka version ``spec.image.application`` implies (confluentinc/cp-server:7.0.0 ->
    3.0: Confluent's interoperability table, formats/_images.py)."""
    application = ctx.text((mapping(spec.get("image")) or {}).get("application"))
    if not application:
        return None
    image = _images.parse_image(application)
    return _images.kafka_version(image, _images.convention(image))


def read(doc: YamlDoc) -> FileRows:
    if doc.kind == "Kafka":
        return _kafka(doc)
    return FileRows(topics=[_topic(doc)])
