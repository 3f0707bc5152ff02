"""JulieOps topologies (kafka-ops/julie; ``context`` and ``projects``): each project's
``topics`` (and ``special_topics``), named as JulieOps names them by default: the context,
the other top-level fields (``company``, ``env``, ``source``...) in file order, the project
and the topic name (and its ``dataType``), joined by ``.``; the partitions and replication
factor are the ``num.partitions`` and ``replication.factor`` entries of ``config``, the rest
of ``config`` is the topic's configuration."""

from __future__ import annotations

from auditor.lint.model import FileRows, LintInputError, TopicDef
from auditor.lint.yaml_fields import YamlDoc, YamlFile, line, mapping

NAME = "julieops"
UNIT = "document"
# top-level fields that are not part of a topic's name (TopologyCustomDeserializer)
_NOT_IN_NAME = ("projects", "context", "platform", "special_topics")


def recognise(doc: YamlDoc) -> bool:
    import yaml

    m = doc.m
    return (
        m is not None and not doc.api and "context" in m and isinstance(m.get("projects"), yaml.SequenceNode)
    )


def _topic(item, ctx: YamlFile, prefix: list[str]) -> TopicDef:
    file = ctx.file
    m = mapping(item)
    if m is None:
        raise LintInputError(f"{file}:{line(item)}: a JulieOps topic must be a mapping with a name")
    name_node = m.get("name")
    short = ctx.name_of(name_node, line(item), "JulieOps topic without a name")
    data_type = ctx.text(m.get("dataType"))
    name = ".".join([*prefix, short, *([data_type] if data_type else [])])
    configs = ctx.configs(m.get("config"))
    cfg = mapping(m.get("config")) or {}
    # Not topic configs: JulieOps takes them out (Topic.getRawConfig) and creates the topic with them.
    configs.pop("num.partitions", None)
    configs.pop("replication.factor", None)
    return TopicDef(
        name=name,
        file=file,
        line=line(name_node),
        anchors=(line(item), line(name_node)),
        partitions=ctx.int_field(cfg.get("num.partitions"), "config num.partitions"),
        replication_factor=ctx.int_field(cfg.get("replication.factor"), "config replication.factor"),
        configs=configs,
        kind="julieops",
    )


def read(doc: YamlDoc) -> FileRows:
    """Each project's topics, named by JulieOps's default scheme
    context.<other top-level fields>.project.topic[.dataType]; special_topics by their own name."""
    import yaml

    m, ctx = doc.m, doc.ctx
    context = ctx.text(m.get("context")) or ""
    others = []
    for key, value in doc.node.value:  # file order, as JulieOps keeps it
        k = str(key.value) if isinstance(key, yaml.ScalarNode) else None
        if k is not None and k not in _NOT_IN_NAME:  # Jackson's asText(): null -> "null", a tree -> ""
            text = ctx.text(value) if isinstance(value, yaml.ScalarNode) else ""
            others.append("null" if text is None else text)
    out = []
    projects = m.get("projects")
    for project in projects.value if isinstance(projects, yaml.SequenceNode) else []:
        pm = mapping(project) or {}
        pname = ctx.text(pm.get("name")) or ""
        topics = pm.get("topics")
        for item in topics.value if isinstance(topics, yaml.SequenceNode) else []:
            out.append(_topic(item, ctx, [context, *others, pname]))
    special = m.get("special_topics")
    for item in special.value if isinstance(special, yaml.SequenceNode) else []:
        out.append(_topic(item, ctx, []))
    return FileRows(topics=out)
