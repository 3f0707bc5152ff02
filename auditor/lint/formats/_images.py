"""Kafka container images: which variable convention an image follows, the broker keys its
environment gives, the values its image supplies for keys left unset, and the Kafka version
its tag implies. Shared by compose files (formats/compose.py), Helm values and CFK resources.

Each convention is read from the image's own scripts (../shared/real-inputs/SOURCES.md,
"Conventions", gives every source and commit):

- **Confluent** ``confluentinc/cp-kafka``, ``cp-server`` (and ``cp-enterprise-kafka``, the
  5.x name of cp-server): every ``KAFKA_*`` variable minus an exclude list; the prefix is
  dropped, the rest lower-cased, ``_`` -> ``.``, then ``...`` -> ``-`` and ``..`` -> ``_``
  (confluentinc/confluent-docker-utils ``dub.py`` ``env_to_props``; the image's
  ``kafka.properties.template``); ``CONFLUENT_SUPPORT_*`` -> ``confluent.support.*`` and, in
  cp-server, ``CONFLUENT_METRICS_*`` -> ``confluent.metrics.*``. kafka.properties holds only
  what the environment gives: every other key is Kafka's default; ``log.dirs`` defaults to
  ``/var/lib/kafka/data`` (the image's ``configure``).
- **Apache** ``apache/kafka`` (and ``apache/kafka-native``): every ``KAFKA_*`` variable
  minus an exclude list, *every* ``KAFKA_`` removed, lower-cased, ``_`` -> ``.``, then
  ``...`` -> ``-`` and ``..`` -> ``_`` (apache/kafka ``KafkaDockerWrapper.getServerConfigsFromEnv``);
  the properties file holds only what the environment gives: other keys are Kafka's defaults.
- **Bitnami** ``bitnami/kafka``: only ``KAFKA_CFG_*`` (prefix dropped, ``_`` -> ``.``,
  lower-cased, then ``sasl.ssl`` -> ``sasl_ssl`` and ``sasl.plaintext`` -> ``sasl_plaintext``),
  plus a fixed list of legacy ``KAFKA_*`` aliases (libkafka.sh
  ``kafka_create_alias_environment_variables``), written over the Kafka distribution's stock
  server.properties: keys left unset keep the stock file's values (``STOCK_SERVER_PROPERTIES``:
  internal topics with one replica however many brokers there are).
- **wurstmeister** ``wurstmeister/kafka``: every ``KAFKA_*`` minus an exclude list, the first
  ``_``-separated field dropped, lower-cased, ``_`` -> ``.`` (``start-kafka.sh``), edited into
  the stock server.properties (same stock values); ``KAFKA_CREATE_TOPICS`` lists topics as
  ``name:partitions:replicas[:cleanup.policy]`` (``create-topics.sh``).

Variables that set the JVM or the launcher (``KAFKA_HEAP_OPTS``, ``KAFKA_OPTS``, ``KAFKA_JMX_PORT``,
log4j levels ...) are never broker keys here, whatever the image's template writes for them: the
start scripts read them from the environment, and a broker ignores them as properties.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CONFLUENT, CONFLUENT_SERVER = "confluent", "confluent-server"
APACHE, BITNAMI, WURSTMEISTER = "apache", "bitnami", "wurstmeister"

# The JVM and launcher settings every image reads from the environment (kafka-run-class.sh,
# the images' launch scripts), and image-only settings: never broker keys.
_LAUNCHER = {
    "KAFKA_VERSION",
    "KAFKA_HOME",
    "KAFKA_DEBUG",
    "KAFKA_LOG",
    "KAFKA_OPTS",
    "KAFKA_HEAP_OPTS",
    "KAFKA_JMX_OPTS",
    "KAFKA_JMX_PORT",
    "KAFKA_JMX_HOSTNAME",
    "KAFKA_JVM_PERFORMANCE_OPTS",
    "KAFKA_GC_LOG_OPTS",
    "KAFKA_LOG4J_OPTS",
    "KAFKA_LOG4J_ROOT_LOGLEVEL",
    "KAFKA_LOG4J_LOGGERS",
    "KAFKA_TOOLS_LOG4J_LOGLEVEL",
}
# Confluent: the SSL file names the configure script turns into ssl.*.location and passwords
# (kafka-images kafka/include/etc/confluent/docker/configure), not keys of their own.
_CONFLUENT_IMAGE_ONLY = {
    "KAFKA_SSL_KEYSTORE_FILENAME",
    "KAFKA_SSL_KEYSTORE_CREDENTIALS",
    "KAFKA_SSL_KEY_CREDENTIALS",
    "KAFKA_SSL_TRUSTSTORE_FILENAME",
    "KAFKA_SSL_TRUSTSTORE_CREDENTIALS",
    "KAFKA_ZOOKEEPER_CLIENT_CNXN_SOCKET",  # mapped on its own, below
}
# wurstmeister: the variables start-kafka.sh reads itself.
_WURSTMEISTER_IMAGE_ONLY = {"KAFKA_CREATE_TOPICS", "KAFKA_CREATE_TOPICS_SEPARATOR", "KAFKA_PORT_COMMAND"}
# Bitnami: legacy KAFKA_<suffix> copied to KAFKA_CFG_<suffix> (libkafka.sh
# kafka_create_alias_environment_variables), and the renamed ones.
_BITNAMI_ALIASES = {
    f"KAFKA_{s}": f"KAFKA_CFG_{s}"
    for s in (
        "ADVERTISED_LISTENERS BROKER_ID NODE_ID CONTROLLER_QUORUM_VOTERS PROCESS_ROLES "
        "DEFAULT_REPLICATION_FACTOR DELETE_TOPIC_ENABLE INTER_BROKER_LISTENER_NAME LISTENERS "
        "LISTENER_SECURITY_PROTOCOL_MAP LOG_DIRS LOG_FLUSH_INTERVAL_MESSAGES LOG_FLUSH_INTERVAL_MS "
        "LOG_MESSAGE_FORMAT_VERSION LOG_RETENTION_BYTES LOG_RETENTION_CHECK_INTERVALS_MS "
        "LOG_RETENTION_HOURS LOG_SEGMENT_BYTES MESSAGE_MAX_BYTES NUM_IO_THREADS NUM_NETWORK_THREADS "
        "NUM_PARTITIONS NUM_RECOVERY_THREADS_PER_DATA_DIR OFFSETS_TOPIC_REPLICATION_FACTOR "
        "SOCKET_RECEIVE_BUFFER_BYTES SOCKET_REQUEST_MAX_BYTES SOCKET_SEND_BUFFER_BYTES "
        "SSL_ENDPOINT_IDENTIFICATION_ALGORITHM TRANSACTION_STATE_LOG_MIN_ISR "
        "TRANSACTION_STATE_LOG_REPLICATION_FACTOR ZOOKEEPER_CONNECT ZOOKEEPER_CONNECTION_TIMEOUT_MS"
    ).split()
} | {
    "KAFKA_LOGS_DIRS": "KAFKA_CFG_LOG_DIRS",
    "KAFKA_SEGMENT_BYTES": "KAFKA_CFG_LOG_SEGMENT_BYTES",
    "KAFKA_MAX_MESSAGE_BYTES": "KAFKA_CFG_MESSAGE_MAX_BYTES",
    "KAFKA_ZOOKEEPER_CONNECT_TIMEOUT_MS": "KAFKA_CFG_ZOOKEEPER_CONNECTION_TIMEOUT_MS",
    "KAFKA_AUTO_CREATE_TOPICS_ENABLE": "KAFKA_CFG_AUTO_CREATE_TOPICS_ENABLE",
}

# The Kafka distribution's config/server.properties (apache/kafka, the same lines from 1.0 to
# 3.9; ../shared/real-inputs/properties/apache-kafka-3.7.0-server.properties): what Bitnami and
# wurstmeister keep for every key their environment leaves unset. Bitnami comments out the
# zookeeper.*, group.initial*, broker.*, listener and controller lines and sets log.dirs
# (libkafka.sh kafka_server_unify_conf); wurstmeister replaces the keys it is given.
STOCK_SERVER_PROPERTIES = {
    "num.network.threads": "3",
    "num.io.threads": "8",
    "socket.send.buffer.bytes": "102400",
    "socket.receive.buffer.bytes": "102400",
    "socket.request.max.bytes": "104857600",
    "num.partitions": "1",
    "num.recovery.threads.per.data.dir": "1",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "log.retention.hours": "168",
    "log.segment.bytes": "1073741824",
    "log.retention.check.interval.ms": "300000",
}
_IMAGE_DEFAULTS = {
    CONFLUENT: {"log.dirs": "/var/lib/kafka/data"},  # configure: KAFKA_LOG_DIRS default
    CONFLUENT_SERVER: {"log.dirs": "/var/lib/kafka/data"},
    APACHE: {},
    BITNAMI: {**STOCK_SERVER_PROPERTIES, "log.dirs": "/bitnami/kafka/data"},
    WURSTMEISTER: {
        **STOCK_SERVER_PROPERTIES,
        "group.initial.rebalance.delay.ms": "0",
        "log.dirs": "/kafka/kafka-logs-$HOSTNAME",  # start-kafka.sh KAFKA_LOG_DIRS default
    },
}
CONVENTION_NAMES = {
    CONFLUENT: "Confluent (confluentinc/cp-kafka)",
    CONFLUENT_SERVER: "Confluent Server (confluentinc/cp-server)",
    APACHE: "Apache (apache/kafka)",
    BITNAMI: "Bitnami (bitnami/kafka)",
    WURSTMEISTER: "wurstmeister (wurstmeister/kafka)",
}
KNOWN_IMAGES = (
    "confluentinc/cp-kafka, confluentinc/cp-server, apache/kafka, bitnami/kafka, wurstmeister/kafka"
)

# Confluent Platform minor -> Apache Kafka minor: Confluent's "Supported Versions and
# Interoperability" table (docs.confluent.io/platform/current/installation/versions-interoperability.html;
# 3.0-5.5: docs.confluent.io/legacy/platform/5.5.15/installation/versions-interoperability.html;
# 6.x-7.x: the Kafka Streams upgrade guide's "7.6.x / 3.6.x" matrix; 8.x: "Confluent Platform
# 8.4.1 (Kafka Streams 4.4.0)"). A cp-kafka/cp-server tag is the Confluent Platform version.
_CP_TO_AK = {
    (3, 0): "0.10.0",
    (3, 1): "0.10.1",
    (3, 2): "0.10.2",
    (3, 3): "0.11.0",
    (4, 0): "1.0",
    (4, 1): "1.1",
    **{(5, m): f"2.{m}" for m in range(6)},
    **{(6, m): f"2.{6 + m}" for m in range(3)},
    **{(7, m): f"3.{m}" for m in range(10)},
    **{(8, m): f"4.{m}" for m in range(5)},
}

_REF = re.compile(r"^(?P<name>[^@]+?)(?::(?P<tag>[^:/@]*))?(?:@(?P<digest>.+))?$")
_SEMVER = re.compile(r"^v?(\d{1,6})\.(\d{1,6})(?:\.(\d{1,6}))?")


@dataclass(frozen=True)
class Image:
    """An image reference as written: repository (registry and namespace kept) and tag."""

    ref: str
    repository: str
    tag: str | None

    @property
    def basename(self) -> str:
        return self.repository.rsplit("/", 1)[-1].lower()

    @property
    def namespace(self) -> str:
        parts = self.repository.lower().split("/")
        return parts[-2] if len(parts) > 1 else ""


def parse_image(ref: str) -> Image:
    m = _REF.match(ref.strip())
    if m is None:
        return Image(ref, ref.strip(), None)
    return Image(ref, m.group("name"), m.group("tag") or None)


def convention(image: Image) -> str | None:
    """The environment convention of the image, by its repository's last two parts (any
    registry: docker.io/bitnami/kafka, a mirror's .../confluentinc/cp-server); None when unknown."""
    name, ns = image.basename, image.namespace
    if name == "cp-kafka":
        return CONFLUENT
    if name in ("cp-server", "cp-enterprise-kafka"):
        return CONFLUENT_SERVER
    if name in ("kafka", "kafka-native") and ns == "apache":
        return APACHE
    if name == "kafka" and "bitnami" in ns:
        return BITNAMI
    if name == "kafka" and ns == "wurstmeister":
        return WURSTMEISTER
    return None


def kafka_version(image: Image, conv: str | None) -> str | None:
    """The Apache Kafka version the image's tag implies: cp-kafka/cp-server 7.2.1 -> 3.2
    (Confluent's table above); apache/kafka 3.7.0 and Bitnami 3.5.0-debian-11-r5 -> the tag's
    version; wurstmeister 2.12-2.3.0 (Scala-Kafka) -> 2.3.0. None for latest, a digest or a tag
    that names no version."""
    tag = image.tag or ""
    if conv in (CONFLUENT, CONFLUENT_SERVER):
        m = _SEMVER.match(tag)
        return _CP_TO_AK.get((int(m.group(1)), int(m.group(2)))) if m else None
    if conv == WURSTMEISTER:
        tag = tag.split("-", 1)[1] if "-" in tag else tag
    if conv in (APACHE, BITNAMI, WURSTMEISTER):
        m = _SEMVER.match(tag)
        return m.group(0).lstrip("v") if m else None
    return None


def _dots(rest: str) -> str:
    """Lower-cased, ``_`` -> ``.``, then ``...`` -> ``-`` and ``..`` -> ``_``."""
    return rest.lower().replace("_", ".").replace("...", "-").replace("..", "_")


def broker_key(conv: str, name: str) -> str | None:
    """The broker key a variable becomes under the convention; None when it is not one."""
    if name in _LAUNCHER:
        return None
    if conv in (CONFLUENT, CONFLUENT_SERVER):
        if name in _CONFLUENT_IMAGE_ONLY:
            return "zookeeper.clientCnxnSocket" if name == "KAFKA_ZOOKEEPER_CLIENT_CNXN_SOCKET" else None
        if name.startswith("KAFKA_"):
            return _dots(name[len("KAFKA_") :])
        prefixes = [("CONFLUENT_SUPPORT_", "confluent.support.")]
        if conv == CONFLUENT_SERVER:  # server/.../kafka.properties.template only
            prefixes.append(("CONFLUENT_METRICS_", "confluent.metrics."))
        for prefix, into in prefixes:
            if name.startswith(prefix):
                return into + _dots(name[len(prefix) :])
        return None
    if conv == APACHE:
        return _dots(name.replace("KAFKA_", "")) if name.startswith("KAFKA_") else None
    if conv == BITNAMI:
        name = _BITNAMI_ALIASES.get(name, name)
        if not name.startswith("KAFKA_CFG_"):
            return None
        if name == "KAFKA_CFG_ZOOKEEPER_CLIENTCNXNSOCKET":
            return "zookeeper.clientCnxnSocket"
        key = name[len("KAFKA_CFG_") :].lower().replace("_", ".")
        return key.replace("sasl.ssl", "sasl_ssl").replace("sasl.plaintext", "sasl_plaintext")
    if conv == WURSTMEISTER:
        if not name.startswith("KAFKA_") or name in _WURSTMEISTER_IMAGE_ONLY:
            return None
        return name.split("_", 1)[1].lower().replace("_", ".")
    return None


def bitnami_alias_wins(name: str, env: dict) -> bool:
    """A legacy Bitnami alias applies only when its KAFKA_CFG_ name is not set itself."""
    target = _BITNAMI_ALIASES.get(name)
    return target is None or target not in env


def image_defaults(conv: str) -> dict[str, str]:
    """The values the image gives the keys its environment leaves unset (beyond Kafka's own)."""
    return dict(_IMAGE_DEFAULTS.get(conv, {}))


def cp_helm_key(key: str) -> str:
    """The broker key a cp-helm-charts ``configurationOverrides`` key ends up as: the chart
    writes ``KAFKA_`` + the key with ``.`` -> ``_``, upper-cased (charts/cp-kafka/templates/
    statefulset.yaml), which the Confluent image reads back (so ``a..b`` gives ``a_b``, and a
    ``_`` written in the key becomes ``.``)."""
    return _dots(key.replace(".", "_"))


def create_topics(value: str, separator: str = ",") -> list[tuple[str, int | None, int | None, str | None]]:
    """wurstmeister ``KAFKA_CREATE_TOPICS``: (name, partitions, replicas, cleanup.policy) per
    ``name:partitions:replicas[:cleanup.policy]`` item; a number that is not one is None."""

    def number(parts: list[str], i: int) -> int | None:
        text = parts[i].strip() if len(parts) > i else ""
        return int(text) if text.isdigit() and len(text) <= 9 else None

    out = []
    for item in value.split(separator or ","):
        parts = item.strip().split(":")
        if parts[0]:
            policy = parts[3].strip() if len(parts) > 3 and parts[3].strip() else None
            out.append((parts[0], number(parts, 1), number(parts, 2), policy))
    return out
