"""jikkou ``KafkaTopic`` / ``KafkaTopicList`` (apiVersion ``kafka.jikkou.io/*``):
``metadata.name``, ``spec.partitions``, ``spec.replicas``, ``spec.configs``; a
``KafkaTopicList``'s ``items``, or (the 2022 ``v1beta2`` layout) its ``spec.topics`` list of
``name``, ``partitions``, ``replication_factor``, ``configs``."""

from __future__ import annotations

from auditor.lint.formats._topics import topic_from_item, topic_from_resource
from auditor.lint.model import FileRows
from auditor.lint.yaml_fields import YamlDoc, line, mapping

NAME = "jikkou"
UNIT = "document"


def recognise(doc: YamlDoc) -> bool:
    return doc.api.startswith("kafka.jikkou.io/") and doc.kind in ("KafkaTopic", "KafkaTopicList")


def read(doc: YamlDoc) -> FileRows:
    import yaml

    m, ctx = doc.m, doc.ctx
    if doc.kind == "KafkaTopic":
        return FileRows(topics=[topic_from_resource(m, ctx, doc.line, "jikkou")])
    topics = []
    items = m.get("items")
    for item in items.value if isinstance(items, yaml.SequenceNode) else []:
        im = mapping(item)
        if im is not None:
            topics.append(topic_from_resource(im, ctx, line(item), "jikkou"))
    spec_topics = (mapping(m.get("spec")) or {}).get("topics")  # the 2022 v1beta2 layout
    for item in spec_topics.value if isinstance(spec_topics, yaml.SequenceNode) else []:
        topics.append(topic_from_item(item, ctx, line(item), "jikkou"))
    return FileRows(topics=topics)
