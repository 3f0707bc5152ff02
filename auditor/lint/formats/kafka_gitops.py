"""kafka-gitops state files (devshawn/kafka-gitops): ``topics:`` as a mapping of name to
``partitions``, ``replication`` (default: ``settings.topics.defaults.replication``) and
``configs``."""

from __future__ import annotations

from auditor.lint.model import FileRows, TopicDef
from auditor.lint.yaml_fields import YamlDoc, line, mapping

NAME = "kafka-gitops"
UNIT = "document"


def recognise(doc: YamlDoc) -> bool:
    import yaml

    m = doc.m
    if m is None or doc.api:
        return False
    topics = m.get("topics")
    return isinstance(topics, yaml.MappingNode) and all(
        mapping(v) is not None or (isinstance(v, yaml.ScalarNode) and doc.ctx.scalar(v) is None)
        for _k, v in topics.value
    )


def read(doc: YamlDoc) -> FileRows:
    import yaml

    m, ctx = doc.m, doc.ctx
    settings = mapping(m.get("settings")) or {}
    defaults = mapping((mapping(settings.get("topics")) or {}).get("defaults")) or {}
    default_rf = ctx.int_field(defaults.get("replication"), "settings.topics.defaults.replication")
    out = []
    for key, value in m["topics"].value:
        if not isinstance(key, yaml.ScalarNode):
            continue
        name = ctx.name_of(key, line(key), "topic without a name")
        spec = mapping(value) or {}  # (a topic with nothing under it: null)
        rf = ctx.int_field(spec.get("replication"), "replication")
        out.append(
            TopicDef(
                name=name,
                file=ctx.file,
                line=line(key),
                anchors=(line(key),),
                partitions=ctx.int_field(spec.get("partitions"), "partitions"),
                replication_factor=rf if rf is not None else default_rf,
                configs=ctx.configs(spec.get("configs")),
                kind="kafka-gitops",
            )
        )
    return FileRows(topics=out)
