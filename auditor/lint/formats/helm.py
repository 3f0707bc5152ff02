"""Helm values of the Bitnami kafka chart (both generations) and Confluent's cp-kafka chart.

Recognised by content: a YAML mapping (no apiVersion/kind) with the charts' top-level keys.
Read, each value at its line:

- **Bitnami, older charts** (to 22.x): the top-level camelCase settings
  (``defaultReplicationFactor``, ``offsetsTopicReplicationFactor``,
  ``transactionStateLogReplicationFactor``, ``transactionStateLogMinIsr``, ``numIoThreads``,
  ``numNetworkThreads``, ``logRetentionHours`` ... see ``_BITNAMI_KEYS``), the Kafka keys the
  chart sets from them; ``replicaCount`` the broker count; a number written ``_10000`` (the
  chart's way to keep it a string) is read as ``10000``;
- **Bitnami, newer charts**: ``extraConfig`` (properties text; top level, ``broker.`` and
  ``controller.``), ``overrideConfiguration`` (a map, same places), ``broker.replicaCount`` +
  ``controller.replicaCount`` (controllers are brokers too unless ``controller.controllerOnly``);
- ``config``: a whole server.properties (both generations; the chart then uses it as is);
- ``provisioning.topics``: the topics the chart creates (``name``, ``partitions``,
  ``replicationFactor``, ``config``; a bare name gets ``provisioning.numPartitions`` and
  ``provisioning.replicationFactor``);
- **cp-helm-charts cp-kafka**: ``brokers`` (the count) and ``configurationOverrides`` (a map,
  each key as the broker gets it: formats/_images.py ``cp_helm_key``); the umbrella chart's
  values (a ``cp-kafka:`` section) the same way.

The image tag gives the Kafka version (cp-kafka ``image`` + ``imageTag``, Bitnami
``image.repository`` + ``image.tag``).

A value holding a Helm template (``{{ ... }}``) is reported as not evaluated.
"""

from __future__ import annotations

import re

from auditor.collectors.files import BROKER, parse_properties
from auditor.lint.formats import _images
from auditor.lint.model import BrokerFile, ClusterFacts, FileRows, LintInputError, Source, TopicDef
from auditor.lint.suppressions import find_suppressions
from auditor.lint.yaml_fields import YamlFile, key_line, line, mapping, source_documents

NAME = "helm"
UNIT = "file"
SUFFIXES = (".yaml", ".yml")

_BITNAMI_KEYS = {
    "deleteTopicEnable": "delete.topic.enable",
    "autoCreateTopicsEnable": "auto.create.topics.enable",
    "logFlushIntervalMessages": "log.flush.interval.messages",
    "logFlushIntervalMs": "log.flush.interval.ms",
    "logRetentionBytes": "log.retention.bytes",
    "logRetentionCheckIntervalMs": "log.retention.check.interval.ms",
    "logRetentionHours": "log.retention.hours",
    "logSegmentBytes": "log.segment.bytes",
    "logsDirs": "log.dirs",
    "maxMessageBytes": "message.max.bytes",
    "defaultReplicationFactor": "default.replication.factor",
    "offsetsTopicReplicationFactor": "offsets.topic.replication.factor",
    "transactionStateLogReplicationFactor": "transaction.state.log.replication.factor",
    "transactionStateLogMinIsr": "transaction.state.log.min.isr",
    "numIoThreads": "num.io.threads",
    "numNetworkThreads": "num.network.threads",
    "numPartitions": "num.partitions",
    "numRecoveryThreadsPerDataDir": "num.recovery.threads.per.data.dir",
    "socketReceiveBufferBytes": "socket.receive.buffer.bytes",
    "socketRequestMaxBytes": "socket.request.max.bytes",
    "socketSendBufferBytes": "socket.send.buffer.bytes",
    "zookeeperConnectionTimeoutMs": "zookeeper.connection.timeout.ms",
    "allowEveryoneIfNoAclFound": "allow.everyone.if.no.acl.found",
    "superUsers": "super.users",
    "minInsyncReplicas": "min.insync.replicas",
}
_TOP = re.compile(
    r"^(replicaCount|defaultReplicationFactor|offsetsTopicReplicationFactor|extraConfig|"
    r"overrideConfiguration|provisioning|configurationOverrides|kraft|controller|broker|cp-kafka)\s*:",
    re.MULTILINE,
)
# The charts' own top-level keys: a file with one of them is the chart's values, not an umbrella's.
_CHART_KEYS = (
    "brokers",
    "configurationOverrides",
    "replicaCount",
    "defaultReplicationFactor",
    "extraConfig",
    "config",
)
_KUBERNETES = re.compile(r"^(apiVersion|kind|AWSTemplateFormatVersion|Resources)\s*:", re.MULTILINE)


def recognise(src: Source) -> bool:
    if src.suffix not in SUFFIXES:
        return False
    head = src.head()
    if _KUBERNETES.search(head):
        return False
    keys = set(_TOP.findall(head))
    chart = keys & {
        "defaultReplicationFactor",
        "offsetsTopicReplicationFactor",
        "configurationOverrides",
        "cp-kafka",
    }
    new_chart = {"extraConfig", "overrideConfiguration"} & keys and keys & {"controller", "broker", "kraft"}
    return bool(chart or new_chart or {"provisioning", "replicaCount"} <= keys)


def _value(ctx: YamlFile, node, what: str, unevaluated: list[str]) -> str | None:
    text = ctx.text(node)
    if text is None:
        return None
    if "{{" in text:
        unevaluated.append(
            f"{ctx.file}:{line(node)}: {what} = {text.strip()[:60]} is a Helm template: not evaluated"
        )
        return None
    if text.startswith("_") and text[1:].isdigit():  # the chart's way of keeping a number a string
        return text[1:]
    return text


def _properties_text(ctx: YamlFile, node, what: str, entries: dict, unevaluated: list[str]) -> None:
    """Properties text in a block scalar: each key at its own line of the file."""
    text = ctx.text(node)
    if not text or not text.strip():
        return
    first = line(node) + (1 if node.style in ("|", ">") else 0)
    parsed, problems = parse_properties(text)
    if problems:
        raise LintInputError(f"{ctx.file}:{first + problems[0].line - 1}: {what}: {problems[0].message}")
    for e in parsed:
        where = first + e.line - 1 if node.style == "|" else line(node)
        if "{{" in e.value:
            unevaluated.append(f"{ctx.file}:{where}: {what} {e.key} is a Helm template: not evaluated")
            continue
        entries[e.key] = (e.value, where)


def _map(
    ctx: YamlFile, node, what: str, entries: dict, unevaluated: list[str], cp_kafka: bool = False
) -> None:
    m = mapping(node)
    if m is None:
        return
    key_lines = {str(k.value): line(k) for k, _v in node.value}
    for key, vnode in m.items():
        value = _value(ctx, vnode, f"{what}.{key}", unevaluated)
        if value is None:
            continue
        kafka_key = _images.cp_helm_key(key) if cp_kafka else key
        if kafka_key != key and "_" in key:
            unevaluated.append(
                f"{ctx.file}:{key_lines[key]}: {what}.{key} reaches the broker as {kafka_key}: cp-kafka turns "
                f"each '.' into '_' in KAFKA_{key.replace('.', '_').upper()} and the image each '_' back into '.' "
                f"(write '{key.replace('_', '..')}' for a key with '_')"
            )
        entries[kafka_key] = (value, key_lines[key])


def _count(ctx: YamlFile, node, what: str) -> int | None:
    if node is None:
        return None
    text = ctx.text(node)
    if text is not None and "{{" in text:
        return None
    return ctx.int_field(node, what)


def read(src: Source) -> FileRows:
    text, docs = source_documents(src)
    ctx = YamlFile(src.file)
    rows = FileRows(suppressions=find_suppressions(text, src.file, syntax="yaml"))
    if len(docs) != 1 or mapping(docs[0]) is None:
        rows.unrecognised = f"{src.file}: Helm values must be one YAML mapping"
        return rows
    root = docs[0]
    m = mapping(root)
    umbrella = mapping(m.get("cp-kafka")) is not None and not set(m) & set(_CHART_KEYS)
    if umbrella:  # cp-helm-charts' umbrella chart: the cp-kafka subchart's values under cp-kafka:
        if ctx.scalar(mapping(m["cp-kafka"]).get("enabled")) is False:
            return FileRows(
                skipped=f"{src.file}: skipped: cp-helm-charts umbrella values with cp-kafka.enabled: false"
            )
        root = m["cp-kafka"]
        m = mapping(root)
    cp_kafka = "configurationOverrides" in m or "brokers" in m
    entries: dict[str, tuple[str, int]] = {}
    unevaluated = rows.unevaluated
    config = ctx.text(m.get("config"))
    whole = bool(config and config.strip())  # the chart then uses it as server.properties, as is
    for key, kafka_key in _BITNAMI_KEYS.items():
        if key in m and not whole:
            value = _value(ctx, m[key], key, unevaluated)
            if value is not None and value != "":
                entries[kafka_key] = (value, key_line(root, key, 1))
    _properties_text(ctx, m.get("config"), "config", entries, unevaluated)
    prefix = "cp-kafka." if umbrella else ""
    _map(
        ctx,
        m.get("configurationOverrides"),
        f"{prefix}configurationOverrides",
        entries,
        unevaluated,
        cp_kafka,
    )
    brokers = _count(ctx, m.get("replicaCount"), "replicaCount")
    if brokers is None:
        brokers = _count(ctx, m.get("brokers"), "brokers")
    _properties_text(ctx, m.get("extraConfig"), "extraConfig", entries, unevaluated)
    _map(ctx, m.get("overrideConfiguration"), "overrideConfiguration", entries, unevaluated)
    split = None
    for role in ("controller", "broker"):
        r = mapping(m.get(role))
        if r is None:
            continue
        _properties_text(ctx, r.get("extraConfig"), f"{role}.extraConfig", entries, unevaluated)
        _map(ctx, r.get("overrideConfiguration"), f"{role}.overrideConfiguration", entries, unevaluated)
        count = _count(ctx, r.get("replicaCount"), f"{role}.replicaCount")
        if role == "controller" and ctx.scalar(r.get("controllerOnly")) is True:
            count = 0
        if count is not None:
            split = (split or 0) + count
    if split is not None and "replicaCount" not in m:
        brokers = split
    count_line = next(
        (key_line(root, k, 0) for k in ("replicaCount", "brokers") if k in m),
        key_line(m.get("broker"), "replicaCount", 0) if mapping(m.get("broker")) is not None else 0,
    )
    group = f"Helm values {src.file}"
    facts = ClusterFacts(
        address=group,
        file=src.file,
        line=count_line or 1,
        platform="helm",
        kafka_version=_version(ctx, m, cp_kafka),
    )
    rows.brokers.append(
        BrokerFile(
            src.file,
            -1,
            entries,
            False,
            BROKER,
            group=group,
            line=count_line or 1,
            brokers=brokers,
            log_dirs=None if "log.dirs" in entries else (),
            cluster=facts,
        )
    )
    rows.clusters.append(facts)
    provisioning = mapping(m.get("provisioning")) or {}
    topics = _provisioning(ctx, provisioning)
    if topics and ctx.scalar(provisioning.get("enabled")) is False:
        where = key_line(m.get("provisioning"), "enabled", 1)
        rows.unevaluated.append(
            f"{src.file}:{where}: provisioning.enabled is false: the chart creates none of its "
            f"{len(topics)} topic(s), so they are not linted"
        )
    else:
        rows.topics.extend(topics)
    return rows


def _version(ctx: YamlFile, m: dict, cp_kafka: bool) -> str | None:
    """The Kafka version the chart's image implies: cp-kafka's ``image`` + ``imageTag``,
    Bitnami's ``image.repository`` + ``image.tag`` (formats/_images.py)."""
    image = m.get("image")
    if cp_kafka and mapping(image) is None:
        ref = f"{ctx.text(image) or 'confluentinc/cp-kafka'}:{ctx.text(m.get('imageTag')) or ''}"
    else:
        spec = mapping(image) or {}
        ref = f"{ctx.text(spec.get('repository')) or 'bitnami/kafka'}:{ctx.text(spec.get('tag')) or ''}"
    if "{{" in ref:
        return None
    parsed = _images.parse_image(ref)
    return _images.kafka_version(parsed, _images.convention(parsed))


def _provisioning(ctx: YamlFile, p: dict) -> list[TopicDef]:
    import yaml

    topics = p.get("topics")
    if not isinstance(topics, yaml.SequenceNode):
        return []
    default_partitions = ctx.int_field(p.get("numPartitions"), "provisioning.numPartitions")
    default_rf = ctx.int_field(p.get("replicationFactor"), "provisioning.replicationFactor")
    out = []
    for item in topics.value:
        if isinstance(item, yaml.ScalarNode):
            name = ctx.name_of(item, line(item), "provisioning topic without a name")
            out.append(
                TopicDef(
                    name, ctx.file, line(item), (line(item),), default_partitions, default_rf, {}, "helm"
                )
            )
            continue
        t = mapping(item) or {}
        name_node = t.get("name")
        name = ctx.name_of(name_node, line(item), "provisioning topic without a name")
        partitions = ctx.int_field(t.get("partitions"), "partitions")
        rf = ctx.int_field(t.get("replicationFactor"), "replicationFactor")
        out.append(
            TopicDef(
                name,
                ctx.file,
                line(name_node),
                (line(item), line(name_node)),
                default_partitions if partitions is None else partitions,
                default_rf if rf is None else rf,
                ctx.configs(t.get("config")),
                "helm",
            )
        )
    return out
