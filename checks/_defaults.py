"""Kafka's own defaults for every key a rule reads: the last layer of effective config.

Each entry: key, default value (as Kafka's config string), type, the first Kafka version
the default applies to, and where it is documented. A key whose default changed across
versions has one entry per era; the newest era not after the cluster's version wins.
Sources: Apache Kafka documentation, "Broker Configs" and "Topic Configs" (docs/configuration),
and the KIPs named per entry.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Default:
    key: str
    value: str | None
    type: str  # int | long | double | boolean | string | list
    since: str = "0.0.0"
    source: str = "Kafka docs: Broker Configs"


DEFAULTS: tuple[Default, ...] = (
    Default("min.insync.replicas", "1", "int"),
    Default(
        "unclean.leader.election.enable", "true", "boolean", "0.0.0", "Kafka docs (before 0.11.0, KAFKA-5326)"
    ),
    Default(
        "unclean.leader.election.enable", "false", "boolean", "0.11.0", "Kafka docs, since 0.11.0 (KIP-106)"
    ),
    Default("default.replication.factor", "1", "int"),
    Default("num.partitions", "1", "int"),
    Default("num.network.threads", "3", "int"),
    Default("num.io.threads", "8", "int"),
    Default("queued.max.requests", "500", "int"),
    Default("num.replica.fetchers", "1", "int"),
    Default("offsets.topic.replication.factor", "3", "int"),
    Default("offsets.topic.num.partitions", "50", "int"),
    Default("transaction.state.log.replication.factor", "3", "int"),
    Default("transaction.state.log.min.isr", "2", "int"),
    Default("transaction.state.log.num.partitions", "50", "int"),
    Default("leader.imbalance.per.broker.percentage", "10", "int"),
    Default(
        "auto.leader.rebalance.enable", "false", "boolean", "0.0.0", "Kafka 0.8.1 KafkaConfig (before 0.8.2)"
    ),
    Default("auto.leader.rebalance.enable", "true", "boolean", "0.8.2", "Kafka docs, since 0.8.2"),
    # CFG005: false until 0.8.2 (KafkaConfig.scala at tags 0.8.1.1 and 0.8.2.0).
    Default(
        "controlled.shutdown.enable", "false", "boolean", "0.0.0", "Kafka 0.8.1 KafkaConfig (before 0.8.2)"
    ),
    Default("controlled.shutdown.enable", "true", "boolean", "0.8.2", "Kafka docs, since 0.8.2"),
    Default("auto.create.topics.enable", "true", "boolean"),
    Default("log.cleanup.policy", "delete", "list"),
    Default("cleanup.policy", "delete", "list", source="Kafka docs: Topic Configs"),
    Default("replica.lag.time.max.ms", "10000", "long", "0.0.0", "Kafka docs (before 2.5)"),
    Default("replica.lag.time.max.ms", "30000", "long", "2.5.0", "Kafka docs, since 2.5 (KIP-537)"),
    Default("replica.fetch.wait.max.ms", "500", "int"),
    Default("max.connections", "2147483647", "int"),
    Default("log.dirs", None, "list"),
    Default("log.dir", "/tmp/kafka-logs", "string"),
    Default("broker.rack", None, "string"),
    # CFG003 (broker-config-drift) compares these across brokers; an unset key counts as its default.
    Default("log.retention.hours", "168", "int"),
    Default("log.retention.bytes", "-1", "long"),
    Default("message.max.bytes", "1000012", "int", "0.0.0", "Kafka docs (before 0.11.0)"),
    Default("message.max.bytes", "1048588", "int", "0.11.0", "Kafka docs, since 0.11.0"),
    Default("delete.topic.enable", "false", "boolean", "0.0.0", "Kafka docs (before 1.0.0)"),
    Default("delete.topic.enable", "true", "boolean", "1.0.0", "Kafka docs, since 1.0.0 (KIP-162)"),
    Default("compression.type", "producer", "string"),
)

# Topic-level settings and the broker setting a topic falls back to when it has no override.
TOPIC_FALLBACK: dict[str, str] = {
    "min.insync.replicas": "min.insync.replicas",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
    "cleanup.policy": "log.cleanup.policy",
}

DEFAULT_KEYS = frozenset(d.key for d in DEFAULTS)
