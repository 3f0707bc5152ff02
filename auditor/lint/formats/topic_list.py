"""A plain list of topics, or a mapping with a ``topics:`` list: ``name``, ``partitions``,
``replication_factor`` (or ``replicationFactor``), ``configs`` (or ``config``)."""

from __future__ import annotations

from auditor.lint.formats._topics import is_topic_list, topic_from_item
from auditor.lint.model import FileRows
from auditor.lint.yaml_fields import YamlDoc, line

NAME = "topic list"
UNIT = "document"


def _items(doc: YamlDoc):
    """The list's items, or None when the document is no topic list."""
    import yaml

    if doc.is_sequence():
        return doc.node.value if is_topic_list(doc.node) else None
    if doc.m is None or doc.api:
        return None
    topics = doc.m.get("topics")
    if isinstance(topics, yaml.SequenceNode) and (is_topic_list(topics) or not topics.value):
        return topics.value
    return None


def recognise(doc: YamlDoc) -> bool:
    return _items(doc) is not None


def read(doc: YamlDoc) -> FileRows:
    return FileRows(topics=[topic_from_item(item, doc.ctx, line(item)) for item in _items(doc)])
