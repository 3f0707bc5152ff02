"""The Kafka version of a cluster: declared, or detected from what the brokers report.

:func:`detect_kafka_version` gives ``(version | None, source)``:

1. a *declared* version (``--kafka-version``, an inventory) wins: ``(declared, "declared")``;
2. else the versions the brokers report (``brokers.version``, filled by ``collect`` from the
   metrics' AppInfo samples, or by an ``extra`` collector's broker rows): all agree -> that
   version, source ``"metrics: app-info"`` (the origin of the rows); they differ (a rolling
   upgrade) -> the *lowest*, source ``"metrics: app-info: brokers report 3.6.1, 3.7.0 (lowest
   used)"``;
3. else a cluster-level version a collector reported (``reported``: e.g. an MSK collector's
   ``CurrentBrokerSoftwareInfo.KafkaVersion``);
4. else ``(None, UNKNOWN)``: the rules that depend on the version (DSK003, FLT003, CTL004,
   CLI001) use their version-free judgement.

What each source can and cannot tell:

* **Metrics** (the JMX exporter): the broker's ``kafka.server:type=app-info,id=N`` MBean (and the
  ``kafka.server:type=app-info`` metrics-registry MBean) hold the version as a *string*
  attribute. jmx_exporter exports a string only through a rule with a ``value:`` that moves it
  into a label; its default naming (what MSK open monitoring serves) exports only the numeric
  ``kafka_server_app_info_starttimems{id="N"}``, and the public example configs do not export it
  either (prometheus/jmx_exporter kafka-2_0_0.yml and Strimzi's kafka-metrics.yaml have no
  app-info rule; Confluent's jmx-monitoring-stacks kafka_broker.yml blacklists
  ``kafka.server:type=app-info,id=*``). What is read: a ``version`` label on
  ``kafka_server_app_info`` (koperator's default rule ``kafka.server<type=app-info><>version:
  (.*)``), ``kafka_server_app_info_version`` / ``kafka_server_appinfo_version`` and any other
  ``kafka_server_app_info_*`` / ``kafka_server_appinfo*`` sample; see auditor/collectors/metrics.py.
* **ZooKeeper**: the ``version`` of a ``/brokers/ids/N`` registration is the *registration
  schema* version (1-5), not the Kafka version; its ``features`` (v5, Kafka 2.7+) and the
  ``/feature`` znode (KIP-584) hold supported / finalized *feature levels* (``metadata.version``,
  ...), which bound the inter-broker protocol, not the software release. Nothing there maps
  reliably to the running Kafka version: nothing is taken from ZooKeeper.
* **Admin API** (confluent-kafka / librdkafka): the ApiVersions a broker advertises would bound
  its release from below (the highest Fetch / ApiVersions versions appear in known releases),
  but neither confluent-kafka (AdminClient: describe_cluster gives nodes, controller and
  cluster id only) nor librdkafka's public API exposes a broker's ApiVersions response. Not
  used (nothing to read).
* **MSK API**: ``DescribeCluster(V2)``'s ``CurrentBrokerSoftwareInfo.KafkaVersion`` (``3.6.0``,
  ``2.8.2.tiered``) is the cluster's configured version; a collector that reads it passes it as
  ``reported``.

Version strings: the leading ``MAJOR.MINOR[.PATCH]`` of a report (``3.7.0``,
``3.7.0-SNAPSHOT`` -> ``3.7.0``, MSK's ``2.8.2.tiered`` -> ``2.8.2``). Confluent Platform builds
report their own release (``7.6.0-ce`` Confluent Server, ``7.6.0-ccs`` community): mapped by
Confluent's interoperability table to the Apache Kafka minor release (``7.6`` -> ``3.6``); a
Confluent release not in the table, or a version with a major above 4 without a Confluent
suffix (a vendor's own numbering), does not map reliably and is not used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

# Rules whose judgement depends on the Kafka version.
VERSION_RULES = ("DSK003", "FLT003", "CTL004", "CLI001")
UNKNOWN = (
    f"kafka version unknown: rules depending on it ({', '.join(VERSION_RULES)}) use their "
    "version-free judgement"
)
DECLARED = "declared"
APP_INFO = "metrics: app-info"

_VERSION = re.compile(r"^\s*v?(\d{1,3})\.(\d{1,3})(?:\.(\d{1,4}))?(.*)$", re.DOTALL)
_CONFLUENT = re.compile(r"^-(ce|ccs)\b", re.IGNORECASE)
# Confluent Platform major.minor -> Apache Kafka major.minor (Confluent's "Supported Versions and
# Interoperability" table).
CONFLUENT_TO_KAFKA: dict[tuple[int, int], str] = {
    (5, 0): "2.0",
    (5, 1): "2.1",
    (5, 2): "2.2",
    (5, 3): "2.3",
    (5, 4): "2.4",
    (5, 5): "2.5",
    (6, 0): "2.6",
    (6, 1): "2.7",
    (6, 2): "2.8",
    (7, 0): "3.0",
    (7, 1): "3.1",
    (7, 2): "3.2",
    (7, 3): "3.3",
    (7, 4): "3.4",
    (7, 5): "3.5",
    (7, 6): "3.6",
    (7, 7): "3.7",
    (7, 8): "3.8",
    (7, 9): "3.9",
    (8, 0): "4.0",
    (8, 1): "4.1",
}
MAX_KAFKA_MAJOR = 4  # an unsuffixed version above this is not an Apache Kafka release (yet)


def kafka_version(reported: object) -> str | None:
    """The Apache Kafka version a broker's reported version string stands for, or None when it
    does not map reliably (see the module docstring)."""
    if not isinstance(reported, str) or len(reported) > 100:
        return None
    m = _VERSION.match(reported)
    if not m:
        return None
    major, minor, patch, rest = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4)
    if _CONFLUENT.match(rest):
        return CONFLUENT_TO_KAFKA.get((major, minor))
    if major > MAX_KAFKA_MAJOR or (rest and rest[0].isdigit()):
        return None
    return f"{major}.{minor}" + (f".{int(patch)}" if patch is not None else "")


def version_key(version: str) -> tuple[int, ...]:
    """Sort key of a normalised version (``3.6`` sorts before ``3.6.0``)."""
    return tuple(int(p) for p in version.split("."))


def _shown(reported: str, kafka: str) -> str:
    return reported if reported == kafka else f"{reported} (Kafka {kafka})"


def detect_kafka_version(
    brokers: Iterable[Mapping],
    declared: object = None,
    *,
    origin: str | Mapping[int, str] = APP_INFO,
    reported: tuple[str, str] | None = None,
) -> tuple[str | None, str]:
    """``(version | None, source)`` of a cluster (see the module docstring).

    ``brokers``: ``brokers`` rows (``broker_id``, ``version``: what the broker reports).
    ``declared``: a typed version (wins). ``origin``: where the rows' versions came from (one
    name, or per broker id). ``reported``: a cluster-level ``(version, source)`` used when no
    broker reports one."""
    if isinstance(declared, str) and declared.strip():
        return declared.strip(), DECLARED
    by_kafka: dict[str, set[str]] = {}
    origins: set[str] = set()
    unmapped: list[str] = []
    silent: list[str] = []
    for row in brokers:
        raw = row.get("version")
        bid = row.get("broker_id")
        if not isinstance(raw, str) or not raw.strip():
            silent.append(str(bid))
            continue
        kafka = kafka_version(raw.strip())
        if kafka is None:
            unmapped.append(raw.strip())
            continue
        by_kafka.setdefault(kafka, set()).add(raw.strip())
        origins.add(origin.get(bid, APP_INFO) if isinstance(origin, Mapping) else origin)
    if by_kafka:
        where = ", ".join(sorted(origins))
        lowest = min(by_kafka, key=version_key)
        notes = []
        if len(by_kafka) > 1:
            shown = ", ".join(
                _shown(r, k) for k in sorted(by_kafka, key=version_key) for r in sorted(by_kafka[k])
            )
            notes.append(f"brokers report {shown} (lowest used)")
        elif any(r != lowest for r in by_kafka[lowest]):
            notes.append(f"brokers report {', '.join(sorted(by_kafka[lowest]))}")
        if silent:
            notes.append(
                f"broker{'s' if len(silent) > 1 else ''} {', '.join(silent)} "
                f"report{'' if len(silent) > 1 else 's'} none"
            )
        if unmapped:
            notes.append(f"not mapped to a Kafka release: {', '.join(sorted(set(unmapped)))}")
        return lowest, where + (": " + "; ".join(notes) if notes else "")
    if reported is not None:
        version = kafka_version(reported[0])
        if version is not None:
            return version, reported[1]
    if unmapped:
        return (
            None,
            f"{UNKNOWN} (reported, not mapped to a Kafka release: {', '.join(sorted(set(unmapped)))})",
        )
    return None, UNKNOWN
