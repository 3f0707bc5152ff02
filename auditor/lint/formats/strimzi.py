"""Strimzi ``KafkaTopic`` (apiVersion ``kafka.strimzi.io/*``): ``metadata.name`` (or
``spec.topicName``), ``spec.partitions``, ``spec.replicas``, ``spec.config``."""

from __future__ import annotations

from auditor.lint.formats._topics import topic_from_resource
from auditor.lint.model import FileRows
from auditor.lint.yaml_fields import YamlDoc

NAME = "strimzi"
UNIT = "document"


def recognise(doc: YamlDoc) -> bool:
    return doc.api.startswith("kafka.strimzi.io/") and doc.kind == "KafkaTopic"


def read(doc: YamlDoc) -> FileRows:
    return FileRows(topics=[topic_from_resource(doc.m, doc.ctx, doc.line, "strimzi")])
