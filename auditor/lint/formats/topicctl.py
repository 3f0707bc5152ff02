"""topicctl topic files (segmentio/topicctl pkg/config/topic.go; ``meta``/``spec``, no
apiVersion): ``meta.name``, ``spec.partitions``, ``spec.replicationFactor``,
``spec.settings`` (a list value such as ``cleanup.policy: [compact, delete]`` is joined with
commas) and ``spec.retentionMinutes`` (read as ``retention.ms``, as topicctl applies it)."""

from __future__ import annotations

from auditor.lint.model import FileRows, TopicDef
from auditor.lint.yaml_fields import YamlDoc, line, mapping

NAME = "topicctl"
UNIT = "document"
# a topic's spec has these (a cluster, ACL or user file has other specs)
_TOPIC_SPEC = ("partitions", "replicationFactor", "settings", "retentionMinutes", "placement")


def recognise(doc: YamlDoc) -> bool:
    m = doc.m
    return (
        m is not None
        and not doc.api
        and mapping(m.get("meta")) is not None
        and "name" in mapping(m["meta"])
        and any(k in (mapping(m.get("spec")) or {}) for k in _TOPIC_SPEC)
    )


def read(doc: YamlDoc) -> FileRows:
    m, ctx, start_line = doc.m, doc.ctx, doc.line
    meta = mapping(m["meta"]) or {}
    spec = mapping(m["spec"]) or {}
    name_node = meta.get("name")
    name = ctx.name_of(name_node, start_line, "topicctl topic without meta.name")
    configs = ctx.configs(spec.get("settings"))
    minutes_node = spec.get("retentionMinutes")
    minutes = ctx.int_field(minutes_node, "spec.retentionMinutes")
    if minutes and minutes > 0 and "retention.ms" not in configs:  # what topicctl applies
        configs["retention.ms"] = (str(minutes * 60 * 1000), line(minutes_node))
    topic = TopicDef(
        name=name,
        file=ctx.file,
        line=line(name_node),
        anchors=(start_line, line(name_node)),
        partitions=ctx.int_field(spec.get("partitions"), "spec.partitions"),
        replication_factor=ctx.int_field(spec.get("replicationFactor"), "spec.replicationFactor"),
        configs=configs,
        kind="topicctl",
    )
    return FileRows(topics=[topic])
