"""The configuration keys Apache Kafka knows, with their types: data for CFG001 and CFG002.

Sources (key names and ConfigDef types, transcribed as data, no code copied):
- apache/kafka ``core/src/main/scala/kafka/server/KafkaConfig.scala`` (the broker
  ``configDef``: every ``define(NAME, TYPE, ...)``; 3.0 era, which also carries the older keys)
  plus the keys added in 3.1-4.1 (KRaft, group coordinator, transactions, tiered storage),
  which later releases define in ``ServerConfigs``, ``KRaftConfigs``, ``QuorumConfig``,
  ``GroupCoordinatorConfig``, ``TransactionLogConfigs`` and ``RemoteLogManagerConfig``, as
  kafka.apache.org documents them ("Broker Configs"; the tiered-storage keys checked against
  "Tiered Storage Configs" of the 3.9 and 4.1 docs). Maintained by hand: a key added by a
  newer release may be missing, which CFG002 would report; add it here;
- ``clients/src/main/java/org/apache/kafka/common/config/TopicConfig.java`` and
  ``LogConfig`` for topic keys ("Topic Configs");
- ``DynamicConfig.Broker`` for the dynamic-only broker keys (replication throttles).

The table is the union over versions 0.11 to 4.1: a key that an older or newer Kafka knows
is not a typo, so CFG002 stays quiet about it (a removed key still parses, Kafka only logs
it as unused). Types follow ``ConfigDef.Type``: int, short, long, double, boolean, list,
string, class, password. ``CHOICES`` holds the keys whose value Kafka checks against a
fixed set (``ValidString.in`` / ``ValidList.in``), case-sensitive like Kafka.

Keys that are *not* judged unknown (CFG002), by design (see ``UNCHECKED_PREFIXES``):
- ``listener.name.<listener>.*``: per-listener overrides of any security or socket key
  (KIP-103); the rest of the key is checked for its type by CFG001 when it is known;
- ``ssl.*`` and ``sasl.*``: the security families are large, version-dependent and
  extended by login modules and callback handlers;
- ``*.password`` / ``*.secret``: secrets (their values are never stored);
- plugin namespaces that reporters, authorizers and tiered-storage plugins read from the
  broker config: ``confluent.``, ``cruise.control.``, ``metrics.jmx.``, ``metrics.context.``,
  ``rlmm.config.``, ``rsm.config.``, ``client.quota.callback.``, ``config.providers`` (KIP-297
  config providers and their ``.class`` / ``.param.*`` keys), and the 4.x families still moving
  between releases: ``group.share.``, ``group.streams.``, ``share.``.
CFG002 takes the prefix list as a parameter, so a site can add its own plugin namespaces.
"""

from __future__ import annotations


def _table(spec: str) -> dict[str, str]:
    """'type: key key ...' lines -> {key: type}."""
    out: dict[str, str] = {}
    for line in spec.strip().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        typ, _, keys = line.partition(":")
        for key in keys.split():
            out[key] = typ.strip()
    return out


BROKER_KEYS: dict[str, str] = _table("""
# ZooKeeper
string: zookeeper.connect zookeeper.clientCnxnSocket zookeeper.ssl.keystore.location zookeeper.ssl.keystore.type
string: zookeeper.ssl.truststore.location zookeeper.ssl.truststore.type zookeeper.ssl.protocol
string: zookeeper.ssl.endpoint.identification.algorithm
int: zookeeper.session.timeout.ms zookeeper.connection.timeout.ms zookeeper.sync.time.ms zookeeper.max.in.flight.requests
boolean: zookeeper.set.acl zookeeper.ssl.client.enable zookeeper.ssl.crl.enable zookeeper.ssl.ocsp.enable
boolean: zookeeper.metadata.migration.enable
int: zookeeper.metadata.migration.min.batch.size
password: zookeeper.ssl.keystore.password zookeeper.ssl.truststore.password
list: zookeeper.ssl.enabled.protocols zookeeper.ssl.cipher.suites
# general
boolean: broker.id.generation.enable
int: reserved.broker.max.id broker.id message.max.bytes num.network.threads num.io.threads
int: num.replica.alter.log.dirs.threads background.threads queued.max.requests request.timeout.ms
long: queued.max.request.bytes socket.connection.setup.timeout.ms socket.connection.setup.timeout.max.ms
long: server.max.startup.time.ms
# KRaft
list: process.roles controller.quorum.voters controller.quorum.bootstrap.servers
int: node.id initial.broker.registration.timeout.ms broker.heartbeat.interval.ms broker.session.timeout.ms
int: metadata.log.segment.bytes metadata.log.segment.min.bytes metadata.max.idle.interval.ms
int: controller.quorum.election.timeout.ms controller.quorum.fetch.timeout.ms controller.quorum.election.backoff.max.ms
int: controller.quorum.append.linger.ms controller.quorum.request.timeout.ms controller.quorum.retry.backoff.ms
long: metadata.log.max.record.bytes.between.snapshots metadata.log.max.snapshot.interval.ms metadata.log.segment.ms
long: metadata.max.retention.bytes metadata.max.retention.ms controller.performance.sample.period.ms
long: controller.performance.always.log.threshold.ms log.dir.failure.timeout.ms
string: controller.listener.names sasl.mechanism.controller.protocol metadata.log.dir early.start.listeners
boolean: unstable.api.versions.enable unstable.metadata.versions.enable unstable.feature.versions.enable
boolean: eligible.leader.replicas.enable controller.quorum.auto.join.enable
# authorizer (kafka.security.authorizer.AclAuthorizer / StandardAuthorizer)
string: authorizer.class.name super.users
boolean: allow.everyone.if.no.acl.found
# socket server
string: listeners advertised.listeners listener.security.protocol.map control.plane.listener.name
string: max.connections.per.ip.overrides host.name advertised.host.name
int: socket.send.buffer.bytes socket.receive.buffer.bytes socket.request.max.bytes socket.listen.backlog.size
int: max.connections.per.ip max.connections max.connection.creation.rate connection.failed.authentication.delay.ms
int: port advertised.port
long: connections.max.idle.ms
string: broker.rack
# log
int: num.partitions log.segment.bytes log.roll.hours log.roll.jitter.hours log.retention.minutes log.retention.hours
int: log.cleaner.threads log.cleaner.io.buffer.size log.index.size.max.bytes log.index.interval.bytes
int: log.flush.offset.checkpoint.interval.ms log.flush.start.offset.checkpoint.interval.ms
int: num.recovery.threads.per.data.dir min.insync.replicas log.max.id.map.snapshots
string: log.dir log.dirs log.message.format.version log.message.timestamp.type
long: log.roll.ms log.roll.jitter.ms log.retention.ms log.retention.bytes log.retention.check.interval.ms
long: log.cleaner.dedupe.buffer.size log.cleaner.backoff.ms log.cleaner.delete.retention.ms
long: log.cleaner.min.compaction.lag.ms log.cleaner.max.compaction.lag.ms log.flush.interval.messages
long: log.segment.delete.delay.ms log.flush.scheduler.interval.ms log.flush.interval.ms
long: log.message.timestamp.difference.max.ms log.message.timestamp.before.max.ms log.message.timestamp.after.max.ms
long: log.initial.task.delay.ms
double: log.cleaner.io.max.bytes.per.second log.cleaner.io.buffer.load.factor log.cleaner.min.cleanable.ratio
boolean: log.cleaner.enable log.preallocate auto.create.topics.enable log.message.downconversion.enable
list: log.cleanup.policy
class: create.topic.policy.class.name alter.config.policy.class.name
# replication
int: controller.socket.timeout.ms default.replication.factor replica.socket.timeout.ms
int: replica.socket.receive.buffer.bytes replica.fetch.max.bytes replica.fetch.wait.max.ms replica.fetch.backoff.ms
int: replica.fetch.min.bytes replica.fetch.response.max.bytes num.replica.fetchers
int: fetch.purgatory.purge.interval.requests producer.purgatory.purge.interval.requests
int: delete.records.purgatory.purge.interval.requests leader.imbalance.per.broker.percentage
int: controlled.shutdown.max.retries controller.message.queue.size
long: replica.lag.time.max.ms replica.high.watermark.checkpoint.interval.ms leader.imbalance.check.interval.seconds
long: controlled.shutdown.retry.backoff.ms
boolean: auto.leader.rebalance.enable unclean.leader.election.enable controlled.shutdown.enable
string: security.inter.broker.protocol inter.broker.protocol.version inter.broker.listener.name replica.selector.class
# dynamic-only broker configs (DynamicConfig.Broker)
long: leader.replication.throttled.rate follower.replication.throttled.rate replica.alter.log.dirs.io.max.bytes.per.second
# group coordinator
int: group.min.session.timeout.ms group.max.session.timeout.ms group.initial.rebalance.delay.ms group.max.size
int: group.coordinator.threads group.coordinator.append.linger.ms group.coordinator.append.max.bytes
int: group.consumer.session.timeout.ms group.consumer.min.session.timeout.ms group.consumer.max.session.timeout.ms
int: group.consumer.heartbeat.interval.ms group.consumer.min.heartbeat.interval.ms
int: group.consumer.max.heartbeat.interval.ms group.consumer.max.size
list: group.coordinator.rebalance.protocols group.consumer.assignors
string: group.consumer.migration.policy
boolean: group.coordinator.new.enable
# offsets
int: offset.metadata.max.bytes offsets.load.buffer.size offsets.topic.num.partitions offsets.topic.segment.bytes
int: offsets.topic.compression.codec offsets.retention.minutes offsets.commit.timeout.ms
short: offsets.topic.replication.factor offsets.commit.required.acks
long: offsets.retention.check.interval.ms
# transactions and producer ids
int: transactional.id.expiration.ms transaction.max.timeout.ms transaction.state.log.min.isr
int: transaction.state.log.load.buffer.size transaction.state.log.num.partitions transaction.state.log.segment.bytes
int: transaction.abort.timed.out.transaction.cleanup.interval.ms transaction.remove.expired.transaction.cleanup.interval.ms
int: producer.id.expiration.ms producer.id.expiration.check.interval.ms
int: add.partitions.to.txn.retry.backoff.ms add.partitions.to.txn.retry.backoff.max.ms
short: transaction.state.log.replication.factor
boolean: transaction.partition.verification.enable transaction.two.phase.commit.enable
# fetch
int: max.incremental.fetch.session.cache.slots fetch.max.bytes
# quotas
int: quota.window.num replication.quota.window.num alter.log.dirs.replication.quota.window.num controller.quota.window.num
int: quota.window.size.seconds replication.quota.window.size.seconds
int: alter.log.dirs.replication.quota.window.size.seconds controller.quota.window.size.seconds
long: quota.producer.default quota.consumer.default
class: client.quota.callback.class
# topics, compression
boolean: delete.topic.enable
string: compression.type
int: compression.gzip.level compression.lz4.level compression.zstd.level
# metrics
long: metrics.sample.window.ms
int: metrics.num.samples kafka.metrics.polling.interval.secs telemetry.max.bytes
list: metric.reporters kafka.metrics.reporters
string: metrics.recording.level
boolean: auto.include.jmx.reporter
# security (ssl.* and sasl.* are covered by prefix, see module doc)
class: principal.builder.class
long: connections.max.reauth.ms
string: security.providers
password: delegation.token.master.key delegation.token.secret.key password.encoder.secret password.encoder.old.secret
long: delegation.token.max.lifetime.ms delegation.token.expiry.time.ms delegation.token.expiry.check.interval.ms
string: password.encoder.keyfactory.algorithm password.encoder.cipher.algorithm
int: password.encoder.key.length password.encoder.iterations
string: ssl.client.auth
# tiered storage (RemoteLogManagerConfig)
boolean: remote.log.storage.system.enable
string: remote.log.storage.manager.impl.prefix remote.log.metadata.manager.impl.prefix
string: remote.log.storage.manager.class.name remote.log.storage.manager.class.path
string: remote.log.metadata.manager.class.name remote.log.metadata.manager.class.path
string: remote.log.metadata.manager.listener.name
int: remote.log.metadata.custom.metadata.max.bytes remote.log.manager.thread.pool.size
int: remote.log.manager.copier.thread.pool.size remote.log.manager.expiration.thread.pool.size
int: remote.log.manager.follower.thread.pool.size remote.log.reader.threads remote.log.reader.max.pending.tasks
int: remote.log.manager.copy.quota.window.num remote.log.manager.copy.quota.window.size.seconds
int: remote.log.manager.fetch.quota.window.num remote.log.manager.fetch.quota.window.size.seconds
int: remote.fetch.max.wait.ms
long: remote.log.index.file.cache.total.size.bytes remote.log.manager.task.interval.ms
long: log.local.retention.ms log.local.retention.bytes log.remote.copy.lag.ms log.remote.copy.lag.bytes
long: remote.log.manager.copy.max.bytes.per.second remote.log.manager.fetch.max.bytes.per.second
long: remote.list.offsets.request.timeout.ms remote.log.index.file.cache.ttl.ms
long: remote.log.manager.task.retry.backoff.ms remote.log.manager.task.retry.backoff.max.ms
double: remote.log.manager.task.retry.jitter
""")

TOPIC_KEYS: dict[str, str] = _table("""
list: cleanup.policy follower.replication.throttled.replicas leader.replication.throttled.replicas
string: compression.type message.format.version message.timestamp.type
int: compression.gzip.level compression.lz4.level compression.zstd.level index.interval.bytes max.message.bytes
int: min.insync.replicas segment.bytes segment.index.bytes
long: delete.retention.ms file.delete.delay.ms flush.messages flush.ms local.retention.bytes local.retention.ms
long: max.compaction.lag.ms message.timestamp.after.max.ms message.timestamp.before.max.ms
long: message.timestamp.difference.max.ms min.compaction.lag.ms retention.bytes retention.ms segment.jitter.ms
long: segment.ms
double: min.cleanable.dirty.ratio
boolean: message.downconversion.enable preallocate remote.storage.enable remote.log.copy.disable
boolean: remote.log.delete.on.disable unclean.leader.election.enable
""")

# Values Kafka checks against a fixed set (ConfigDef.ValidString.in / ValidList.in).
_POLICIES = ("compact", "delete")
_COMPRESSION = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
_TIMESTAMP = ("CreateTime", "LogAppendTime")
CHOICES: dict[str, tuple[str, ...]] = {
    "cleanup.policy": _POLICIES,
    "log.cleanup.policy": _POLICIES,
    "compression.type": _COMPRESSION,
    "message.timestamp.type": _TIMESTAMP,
    "log.message.timestamp.type": _TIMESTAMP,
    "ssl.client.auth": ("required", "requested", "none"),
    "security.inter.broker.protocol": ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"),
    "metrics.recording.level": ("INFO", "DEBUG", "TRACE"),
    "process.roles": ("broker", "controller"),
}

UNCHECKED_PREFIXES: tuple[str, ...] = (
    "listener.name.", "ssl.", "sasl.", "confluent.", "cruise.control.", "metrics.jmx.", "metrics.context.",
    "rlmm.config.", "rsm.config.", "client.quota.callback.", "config.providers", "group.share.", "group.streams.",
    "share.",
)
UNCHECKED_SUFFIXES: tuple[str, ...] = (".password", ".secret")

# Java's integer ranges (ConfigDef parses with Short/Integer/Long.parseX).
RANGES: dict[str, tuple[int, int]] = {
    "short": (-(2**15), 2**15 - 1),
    "int": (-(2**31), 2**31 - 1),
    "long": (-(2**63), 2**63 - 1),
}


def rows() -> list[dict]:
    """The table as rows for session.createDataFrame: scope (broker|topic), key, type."""
    out = [{"scope": "broker", "key": k, "type": t} for k, t in sorted(BROKER_KEYS.items())]
    out += [{"scope": "topic", "key": k, "type": t} for k, t in sorted(TOPIC_KEYS.items())]
    return out


SCHEMA = "scope string, key string, type string"
