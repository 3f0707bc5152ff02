"""Topic definitions shared by several formats: a list item, a KafkaTopic-like resource."""

from __future__ import annotations

from auditor.lint.model import LintInputError, TopicDef
from auditor.lint.yaml_fields import YamlFile, line, mapping


def topic_from_item(item, ctx: YamlFile, start_line: int, kind: str = "list") -> TopicDef:
    """``name`` (or ``topic``), ``partitions``, ``replication_factor`` (or
    ``replicationFactor``, ``replicas``), ``configs`` (or ``config``)."""
    file = ctx.file
    m = mapping(item)
    if m is None:
        raise LintInputError(f"{file}:{line(item)}: a topic must be a mapping with a name")
    name_node = m.get("name") or m.get("topic")
    name = ctx.name_of(name_node, line(item), "topic without a name")
    rf_node = m.get("replication_factor", m.get("replicationFactor", m.get("replicas")))
    return TopicDef(
        name=name,
        file=file,
        line=line(name_node),
        anchors=(start_line, line(name_node)),
        partitions=ctx.int_field(m.get("partitions"), "partitions"),
        replication_factor=ctx.int_field(rf_node, "replication_factor"),
        configs=ctx.configs(m.get("configs", m.get("config"))),
        kind=kind,
    )


def topic_from_resource(doc: dict, ctx: YamlFile, start_line: int, kind: str) -> TopicDef:
    """A KafkaTopic resource: ``metadata.name`` (Strimzi: or ``spec.topicName``),
    ``spec.partitions``, ``spec.replicas``, ``spec.config`` (jikkou: ``spec.configs``)."""
    meta = mapping(doc.get("metadata")) or {}
    spec = mapping(doc.get("spec")) or {}
    name_node = (
        spec.get("topicName") if kind == "strimzi" and spec.get("topicName") is not None else meta.get("name")
    )
    name = ctx.scalar(name_node)
    if not isinstance(name, str) or not name:
        raise LintInputError(f"{ctx.file}:{start_line}: KafkaTopic without metadata.name")
    cfg_node = spec.get("config") if kind == "strimzi" else spec.get("configs", spec.get("config"))
    return TopicDef(
        name=name,
        file=ctx.file,
        line=line(name_node),
        anchors=(start_line, line(name_node)),
        partitions=ctx.int_field(spec.get("partitions"), "spec.partitions"),
        replication_factor=ctx.int_field(spec.get("replicas"), "spec.replicas"),
        configs=ctx.configs(cfg_node),
        kind=kind,
    )


def is_topic_list(node) -> bool:
    """A YAML sequence that is a plain topic list: some item is a mapping with a name."""
    import yaml

    return isinstance(node, yaml.SequenceNode) and any(
        "name" in (mapping(i) or {}) or "topic" in (mapping(i) or {}) for i in node.value
    )
