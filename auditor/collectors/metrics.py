"""Collector for broker metrics in Prometheus text format (read-only).

A source is a file path or an http(s) URL, optionally prefixed with the broker it belongs to:
``broker_id=3:http://kafka-3:7071/metrics``. A URL is fetched with urllib within the timeout
*as a whole* (connect, headers and body: a server trickling bytes fails at the deadline) and at
most MAX_BYTES (a larger scrape is a source error). Credentials in a URL are never shown or
stored: ``user:pass@`` is sent as a Basic Authorization header (never part of the host looked
up), and the target recorded in the source entries, source errors and warnings is the redacted
URL (``http://***@host:7071/metrics?token=***``: auditor/collectors/urls.py).

Which broker a sample belongs to (first rule that gives one wins):

1. a ``broker_id`` label on the sample (label names are matched case- and
   separator-insensitively: ``brokerId``, ``brokerid``, ``kafka_broker_id``; or an integer
   ``broker`` label);
2. the ``broker_id=N:`` prefix of the source;
3. the URL's host, when it is the host of exactly one registered broker (``broker_hosts``:
   ``(broker_id, host, port)`` of the ZooKeeper / Admin API registrations and the
   advertised.listeners of server.properties, handed over by ``collect``);
4. the URL's host in MSK's broker form ``b-N.<cluster>.<id>.cK.kafka.<region>.amazonaws.com``
   (also ``b-N-public.``);
5. the sample's ``instance`` label (Prometheus federation output: ``kafka-2:7071``,
   ``10.0.0.5:9308``, ``[::1]:9100``): its host against the registered hosts, and as a last
   resort in MSK's ``b-N.`` form.

A host matches a registered host exactly (case-insensitively), or by its first DNS label when
one of the two is a bare name (``kafka-2`` = ``kafka-2.kafka-headless.svc``; never for IP
addresses). A host registered by several brokers matches only if the port tells them apart.
Samples the audit reads that no rule attributes fail the source, with one error naming the
accepted forms.

Samples are parsed with ``prometheus_client.parser.text_string_to_metric_families`` (which
accepts the JMX exporter's trailing ``,}`` and ``untyped``) and matched by *sample* name,
case-insensitively, and by label name case- and separator-insensitively
(``client_software_name`` = ``clientSoftwareName`` = ``clientsoftwarename``), against the
shipped mapping tables below. Spellings, per canonical name (``auditor.snapshot.schema.METRICS``):

* ``network_processor_avg_idle_percent`` (0-1): jmx_exporter default naming (what MSK open
  monitoring serves on port 11001; lowercased by ``lowercaseOutputName``)
  ``kafka_network_SocketServer_Value{name="NetworkProcessorAvgIdlePercent"}``; jmx_exporter's
  kafka-2_0_0.yml and kafka-0-8-2.yml and Confluent's jmx-monitoring-stacks kafka_broker.yml
  ``kafka_network_socketserver_networkprocessoravgidlepercent``; Strimzi's kafka-metrics.yaml
  (its ``Percent`` rule) ``kafka_network_socketserver_networkprocessoravgidle_percent``.
* ``request_handler_avg_idle_percent`` (0-1; a Yammer *meter*: its rates are the idle fraction,
  its ``Count`` is idle nanoseconds since start): default naming
  ``kafka_server_KafkaRequestHandlerPool_{OneMinuteRate,FiveMinuteRate,FifteenMinuteRate,MeanRate}
  {name="RequestHandlerAvgIdlePercent"}`` (preferred in that order); Confluent's kafka_broker.yml
  and kafka_broker_p99only.yml ``kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_total``
  (the OneMinuteRate as a GAUGE); attribute-suffixed ``..._requesthandleravgidlepercent_oneminuterate``
  (``_fiveminuterate``, ``_fifteenminuterate``, ``_meanrate``); Strimzi and older kafka-2_0_0.yml
  ``kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent`` (the MeanRate: a mean
  since the broker started, used only when no windowed rate is there).
* ``request_queue_size``: ``kafka_network_RequestChannel_Value{name="RequestQueueSize"}``,
  ``kafka_network_requestchannel_requestqueuesize``.
* ``offline_log_directory_count``: ``kafka_log_LogManager_Value{name="OfflineLogDirectoryCount"}``,
  ``kafka_log_logmanager_offlinelogdirectorycount``, and kafka-0-8-2.yml's
  ``..._offlinelogdirectorycount_value`` (``_value_total`` under jmx_exporter 1.x).
* ``connection_count`` (labels ``{listener}``, summed over network processors): default naming
  and Strimzi ``kafka_server_socket_server_metrics_connection_count``; Confluent
  ``kafka_server_socketservermetrics_connection_count``.
* ``cpu_count``: node exporter (MSK port 11002) ``node_cpu_seconds_total`` (before 0.16:
  ``node_cpu``): distinct CPUs with mode="idle"; else the JVM's
  ``java_lang_OperatingSystem_AvailableProcessors``.
* ``cpu_user_system_percent`` (0-100): ``java_lang_OperatingSystem_SystemCpuLoad`` /
  ``CpuLoad`` (0-1, times 100; a negative value is the JVM's "not available" and is skipped).
* filesystems: ``node_filesystem_size_bytes`` / ``node_filesystem_avail_bytes`` (before 0.16:
  ``node_filesystem_size`` / ``_avail``) per mountpoint (returned in
  :attr:`MetricsResult.filesystems`; the collect step turns them into ``log_dirs`` sizes by
  longest mountpoint prefix).
* the broker's Kafka version (AppInfo, a *string* attribute: jmx_exporter exports it only through a
  rule with a ``value:`` that moves it into a label; default naming, kafka-2_0_0.yml and Strimzi's
  kafka-metrics.yaml have no such rule, Confluent's kafka_broker.yml blacklists
  ``kafka.server:type=app-info,id=*``): a ``version`` label on ``kafka_server_app_info``
  (koperator's default rule ``kafka.server<type=app-info><>version: (.*)`` with ``value: 1.0``),
  ``kafka_server_app_info_version``, ``kafka_server_appinfo_version``, and any other sample whose
  name starts with ``kafka_server_app_info`` / ``kafka_server_appinfo`` (a rule moving every
  app-info attribute into a label). The broker: an ``id`` label (the MBean's ``id=N``) or
  ``broker_id``, else the rules above. Returned in :attr:`MetricsResult.versions` (the collect
  step puts it in ``brokers.version``; auditor/collectors/versions.py turns it into the
  cluster's kafka_version); a value that is not a version (``unknown``) is not kept.
* KIP-511 client software (``socket-server-metrics`` with clientSoftwareName /
  clientSoftwareVersion, attribute ``connections``) -> ``client_software`` rows, summed over
  network processors: default naming ``kafka_server_socket_server_metrics_connections``,
  Strimzi ``kafka_server_socket_server_metrics_connections_software``, Confluent
  ``kafka_server_socketservermetrics_connections{client_software_name,client_software_version,
  listener,network_processor}``. The same default-named gauge with ``cipher`` / ``protocol``
  labels (TLS connections) is not client software and is ignored.

* protocol requests by API and version (the Kafka 4.0 upgrade preflight, CLI004), from
  ``kafka.network:type=RequestMetrics,name=RequestsPerSec,request=R,version=V`` (a meter; the
  ``version`` tag exists since Kafka 2.0, samples without it are not kept): ``request_rate``
  (labels ``{request, version}``, requests/s) from the default naming
  ``kafka_network_RequestMetrics_{OneMinuteRate,FiveMinuteRate,FifteenMinuteRate,MeanRate}
  {name="RequestsPerSec"}`` (preferred in that order); ``request_count`` (the meter's Count,
  requests since the broker started) from the default naming ``kafka_network_RequestMetrics_Count``,
  Confluent's kafka_broker.yml ``kafka_network_requestmetrics_requestspersec{request,version}``
  (its generic two-tag ``Count`` rule; its RequestsPerSec-specific rate rule drops ``version``)
  and jmx_exporter's kafka-2_0_0.yml / Strimzi's kafka-metrics.yaml before RequestMetrics was
  excluded ``kafka_network_requestmetrics_requests_total`` (a counter). The KIP-896 meter of
  3.7-3.9 brokers, ``name=DeprecatedRequestsPerSec`` with ``request``, ``version``,
  ``clientSoftwareName``, ``clientSoftwareVersion`` (RequestMetrics in Kafka's
  RequestChannel.scala; gone in 4.0), in the default naming only (the configs' two-tag rules
  mangle its four tags): ``deprecated_request_rate`` / ``deprecated_request_count`` (labels
  ``{request, version, client_software_name, client_software_version}``).

Cumulative counts are recognised and never read as a value: the request-handler meter's
``Count`` is what Confluent's configs and kafka-0-8-2.yml export under the *plain* name
``kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent`` (a value like 4.2e14),
kafka-2_0_0.yml and Strimzi as ``..._requesthandleravgidlepercent_count`` (``_count_total``
under jmx_exporter 1.x). The jmx_exporter HELP text names the JMX attribute a sample came from
(``...><>Count)``, ``...><>OneMinuteRate)``): a ``Count`` is never read as a level, and a
spelling listed as cumulative whose HELP names a rate is read as that rate. A ratio spelling in
a family typed ``counter`` is cumulative too.

* broker metrics that #36's rules compare with the metadata (CTL011, PAR009-PAR011), from the
  JMX beans ``kafka.controller:type=KafkaController,name=ActiveControllerCount`` /
  ``name=OfflinePartitionsCount`` (KafkaController.scala in ZooKeeper mode; on KRaft
  QuorumControllerMetrics and ControllerMetadataMetrics, registered by controller nodes only) and
  ``kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount`` / ``IsrShrinksPerSec`` /
  ``IsrExpandsPerSec`` (ReplicaManager.scala): default naming (the real jmx_exporter 0.6 scrape in
  shared/real-inputs has them) ``kafka_controller_KafkaController_Value{name="ActiveControllerCount"}``,
  ``{name="OfflinePartitionsCount"}``, ``kafka_server_ReplicaManager_Value{name="UnderMinIsrPartitionCount"}``
  and the meters' ``kafka_server_ReplicaManager_{OneMinuteRate,FiveMinuteRate,FifteenMinuteRate}
  {name="IsrShrinksPerSec"}`` (``isr_shrink_rate``, ``isr_expand_rate``; preferred in that order; the
  MeanRate, an average since the broker started, is not a churn rate and is not read); jmx_exporter's
  kafka-2_0_0.yml and Strimzi's kafka-metrics.yaml (generic gauge rule ``kafka_$1_$2_$3``, lowercased)
  ``kafka_controller_kafkacontroller_activecontrollercount``,
  ``kafka_controller_kafkacontroller_offlinepartitionscount``,
  ``kafka_server_replicamanager_underminisrpartitioncount``. Those two configurations export the ISR
  meters only as their Count (``kafka_server_replicamanager_isrshrinks_total``, a counter): one scrape
  of a counter gives no rate, so it is recognised and not read.
* followers' replication lag -> ``replica_lag`` rows (MNT006), from
  ``kafka.server:type=FetcherLagMetrics,name=ConsumerLag,clientId=ReplicaFetcherThread-<fetcher>-<leader>,
  topic=T,partition=P`` (AbstractFetcherThread.scala; the follower's lag behind the leader's high
  watermark at its last fetch): default naming ``kafka_server_FetcherLagMetrics_Value{name="ConsumerLag",
  clientId,topic,partition}``; kafka-2_0_0.yml / Strimzi (their "clientId, topic, partition" rule)
  ``kafka_server_fetcherlagmetrics_consumerlag{clientId,topic,partition}``. The leader is the clientId's
  last number (ReplicaFetcherManager names the thread ``ReplicaFetcherThread-$fetcherId-$leaderId``); the
  same gauge of a ``ReplicaAlterLogDirsThread`` (a replica moving between log dirs of one broker) is not
  a follower's and is skipped, and so is -1 (the gauge before the first fetch).
* each broker's own log end offset per partition replica -> ``log_end_offsets`` rows (MNT006: the
  leader's log end minus the elected follower's is the acks=1 window a restart loses), from
  ``kafka.log:type=Log,name=LogEndOffset,topic=T,partition=P`` (UnifiedLog.newMetrics, tags topic and
  partition, plus ``is-future=true`` for a replica being moved between log dirs, which is skipped):
  default naming ``kafka_log_Log_Value{name="LogEndOffset",topic,partition}`` (the real jmx_exporter 0.6
  scrape in shared/real-inputs has it, lowercased); kafka-2_0_0.yml / Strimzi (their generic two-pair
  gauge rule ``kafka_$1_$2_$3``, lowercased) ``kafka_log_log_logendoffset{topic,partition}``. Duplicate
  samples (federation) give the highest. Each row carries ``scraped_at_ms``, when its scrape was taken:
  the sample's own timestamp where the text gives one (a saved or federated scrape), else a URL's fetch
  time or a file's modification time. One scrape is one moment, and scrapes of different
  brokers are seconds apart, so a follower a few records behind its leader in one scrape is only
  replication in flight; what MNT006 calls lag must persist into a second scrape. So a URL whose scrape
  had log end offsets is scraped a second time, SECOND_SCRAPE_AFTER seconds after the first round (once
  for all such URLs), and the second scrape's log end offsets are kept beside the first's (its other
  samples are not read again); a failed second scrape is a warning, the first stands. Files are
  moments already recorded: give two scrapes of a broker as two files (``broker_id=1:b1-0600.prom``,
  ``broker_id=1:b1-0601.prom``), told apart by their samples' timestamps or modification times.
* KRaft ``raft_current_leader``, ``raft_current_epoch``, ``raft_high_watermark``,
  ``raft_log_end_offset`` (kafka.server:type=raft-metrics, on controllers and brokers): default
  naming ``kafka_server_raft_metrics_current_leader`` ..., Strimzi's kafka-metrics.yaml
  ``kafka_server_raftmetrics_current_leader`` .... The collect step derives the KRaft
  ``controller`` row from them when DescribeQuorum gave none (auditor/collectors/collect.py).

Range checks: an idle fraction outside [0, 1] or a percentage outside [0, 100] is a source error
naming the sample (name, labels, value), and the value is not stored. Kafka's own meters
overshoot 1 slightly (1.0025 in a real jmx_exporter scrape), so values within 5 % of the range
beyond an end are clamped to it. Several samples of one idle ratio for one broker (duplicates in
federation output) give the lowest, CPU values the highest; counts are summed over the labels
not kept.

A source in which no sample is one the audit reads (kafka_exporter's topic and consumer-group
output, an empty scrape, only cumulative counts) is a failed source: a source error saying what
was found instead (the snapshot is incomplete: AUD001, exit 3), since the user named it for the
rules that read it, and a warning with exit 0 was a green audit of rules that never ran.

Not mapped: node exporter CPU busy time (a counter since boot); JMX ``SystemCpuLoad`` /
``CpuLoad`` gives cpu_user_system_percent when exported.
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import math
import os
import re
import socket
import threading
import time
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from auditor import safe_io
from auditor.collectors._common import DEFAULT_TIMEOUT, Collector, CollectResult, Context, one_line
from auditor.collectors.urls import redact_url, scrub, split_credentials

SOURCE = "metrics"
MAX_BYTES = 64 * 1024 * 1024  # a scrape (or file) larger than this is a source error
_CHUNK = 64 * 1024
# Seconds between the two scrapes of a URL that exports log end offsets (see the module docstring):
# long enough that an in-flight gap has been fetched (a follower fetches continuously; an idle fetch
# waits replica.fetch.wait.max.ms, 500 ms by default), short beside replica.lag.time.max.ms (30 s).
SECOND_SCRAPE_AFTER = 5.0

_HINT = re.compile(r"^broker_id=([0-9]+):(.+)$", re.DOTALL)
_MSK_HOST = re.compile(r"^b-([0-9]{1,9})(?:-public)?\.", re.IGNORECASE)
_NOT_ALNUM = re.compile(r"[^a-z0-9]")
# Normalised label names that carry the broker id (``broker`` only when an integer).
_BROKER_LABELS = ("brokerid", "kafkabrokerid", "broker")
# jmx_exporter's HELP text ends with the MBean and attribute: "(kafka.server<type=...><>Count)".
_HELP_ATTRIBUTE = re.compile(r"<>([A-Za-z][\w-]*)\)?\s*$")
# Meter attributes that are a rate (the ratio itself), with their preference.
_RATE_ATTRIBUTES = {
    "value": 0,
    "oneminuterate": 0,
    "fiveminuterate": 1,
    "fifteenminuterate": 2,
    "meanrate": 3,
}

# Ratio metrics: (low, high, what) in canonical units. Values within RANGE_SLACK of the range
# beyond an end are clamped (meter overshoot); anything further is a source error.
RANGES: dict[str, tuple[float, float, str]] = {
    "network_processor_avg_idle_percent": (0.0, 1.0, "an idle fraction"),
    "request_handler_avg_idle_percent": (0.0, 1.0, "an idle fraction"),
    "cpu_user_system_percent": (0.0, 100.0, "a percentage"),
}
RANGE_SLACK = 0.05
INT32_MAX, INT64_MAX = 2**31 - 1, 2**63 - 1
# Counts stored in (or copied to) int columns: brokers.cores, client_software.connections;
# rules cast the others to integers. A value outside [0, max] is a source error naming the sample.
COUNTS: dict[str, int] = {
    "cpu_count": INT32_MAX,
    "connection_count": INT32_MAX,
    "offline_log_directory_count": INT32_MAX,
    "request_queue_size": INT32_MAX,
    "active_controller_count": INT32_MAX,
    "offline_partitions_count": INT32_MAX,
    "under_min_isr_partition_count": INT32_MAX,
}
CONNECTIONS_MAX = INT32_MAX  # client_software.connections (int)
FS_BYTES_MAX = INT64_MAX  # log_dirs.total_bytes / used_bytes (bigint)
_BROKER_ID_TOO_LARGE = INT32_MAX + 1  # a broker id label of more digits than an int holds
MAX_RANGE_ERRORS = 5  # per source; the rest are counted in one more error


def _norm(label: str) -> str:
    """A label name compared case- and separator-insensitively: clientSoftwareName,
    client_software_name and clientsoftwarename are one name."""
    return _NOT_ALNUM.sub("", label.lower())


@dataclass(frozen=True)
class Mapping:
    """One exporter spelling of a canonical metric.

    ``sample``: the sample name, lowercased. ``where``: required label values (label names
    normalised by :func:`_norm`, values compared case-insensitively). ``keep``: labels kept in
    the row (aggregated over the others). ``priority``: lower wins when several spellings of one
    metric are present. ``aggregate``: sum, max or min over the dropped labels. ``cumulative``:
    the spelling is a meter's cumulative Count (recognised, never a value) unless the HELP text
    names a rate attribute.
    """

    sample: str
    canonical: str
    where: tuple[tuple[str, str], ...] = ()
    keep: tuple[str, ...] = ()
    priority: int = 0
    scale: float = 1.0
    aggregate: str = "sum"  # sum | max | min (over the dropped labels)
    exporter: str = ""
    cumulative: bool = False
    # A meter's Count kept as a count of its own (request_count): read unless the HELP names a rate.
    counts: bool = False
    # Store only samples that carry every ``keep`` label (a request rate without its version is useless).
    complete: bool = False


def _m(
    sample,
    canonical,
    *,
    where=(),
    keep=(),
    priority=0,
    scale=1.0,
    aggregate="sum",
    exporter="",
    cumulative=False,
    counts=False,
    complete=False,
):
    return Mapping(
        sample.lower(),
        canonical,
        tuple((_norm(k), v.lower()) for k, v in dict(where).items()),
        keep,
        priority,
        scale,
        aggregate,
        exporter,
        cumulative,
        counts,
        complete,
    )


_NPI = "network_processor_avg_idle_percent"
_RHI = "request_handler_avg_idle_percent"
_RHI_BEAN = {"name": "RequestHandlerAvgIdlePercent"}
_RHI_PREFIX = "kafka_server_kafkarequesthandlerpool_requesthandleravgidle"

# The shipped mapping tables. Names confirmed against the public exporter configurations:
# prometheus/jmx_exporter example_configs/kafka-2_0_0.yml and kafka-0-8-2.yml, Strimzi's
# packaging/examples/metrics/kafka-metrics.yaml, confluentinc/jmx-monitoring-stacks
# shared-assets/jmx-exporter/kafka_broker.yml and kafka_broker_p99only.yml, and MSK open
# monitoring scrapes (jmx_exporter's default naming: domain_type_attribute{name=...}).
_DEFAULT = "jmx_exporter default naming (MSK open monitoring)"
MSK_OPEN_MONITORING = (
    _m(
        "kafka_network_SocketServer_Value",
        _NPI,
        where={"name": "NetworkProcessorAvgIdlePercent"},
        aggregate="min",
        exporter=_DEFAULT,
    ),
    _m(
        "kafka_server_KafkaRequestHandlerPool_OneMinuteRate",
        _RHI,
        where=_RHI_BEAN,
        aggregate="min",
        exporter=_DEFAULT,
    ),
    _m(
        "kafka_server_KafkaRequestHandlerPool_FiveMinuteRate",
        _RHI,
        where=_RHI_BEAN,
        priority=1,
        aggregate="min",
        exporter=_DEFAULT,
    ),
    _m(
        "kafka_server_KafkaRequestHandlerPool_FifteenMinuteRate",
        _RHI,
        where=_RHI_BEAN,
        priority=2,
        aggregate="min",
        exporter=_DEFAULT,
    ),
    _m(
        "kafka_server_KafkaRequestHandlerPool_MeanRate",
        _RHI,
        where=_RHI_BEAN,
        priority=3,
        aggregate="min",
        exporter=_DEFAULT,
    ),
    _m(
        "kafka_server_KafkaRequestHandlerPool_Count",
        _RHI,
        where=_RHI_BEAN,
        cumulative=True,
        exporter=_DEFAULT,
    ),
    _m(
        "kafka_network_RequestChannel_Value",
        "request_queue_size",
        where={"name": "RequestQueueSize"},
        exporter=_DEFAULT,
    ),
    _m(
        "kafka_log_LogManager_Value",
        "offline_log_directory_count",
        where={"name": "OfflineLogDirectoryCount"},
        exporter=_DEFAULT,
    ),
    _m(
        "kafka_server_socket_server_metrics_connection_count",
        "connection_count",
        keep=("listener",),
        exporter=_DEFAULT + "; Strimzi kafka-metrics.yaml",
    ),
    _m(
        "java_lang_OperatingSystem_AvailableProcessors",
        "cpu_count",
        priority=1,
        aggregate="max",
        exporter=_DEFAULT,
    ),
    _m(
        "java_lang_OperatingSystem_SystemCpuLoad",
        "cpu_user_system_percent",
        scale=100.0,
        priority=1,
        aggregate="max",
        exporter=_DEFAULT,
    ),
    _m(
        "java_lang_OperatingSystem_CpuLoad",
        "cpu_user_system_percent",
        scale=100.0,
        aggregate="max",
        exporter=_DEFAULT,
    ),
)

_RULES = "jmx_exporter kafka-2_0_0.yml / kafka-0-8-2.yml, Confluent kafka_broker.yml"
JMX_EXPORTER_EXAMPLE = (
    _m("kafka_network_socketserver_networkprocessoravgidlepercent", _NPI, aggregate="min", exporter=_RULES),
    _m(
        "kafka_network_socketserver_networkprocessoravgidle_percent",
        _NPI,
        aggregate="min",
        exporter="Strimzi kafka-metrics.yaml (Percent rule)",
    ),
    # RequestHandlerAvgIdlePercent, a meter: the rates are the ratio.
    _m(
        f"{_RHI_PREFIX}percent_total",
        _RHI,
        aggregate="min",
        exporter="Confluent kafka_broker.yml / kafka_broker_p99only.yml: OneMinuteRate as a GAUGE",
    ),
    _m(f"{_RHI_PREFIX}percent_oneminuterate", _RHI, aggregate="min", exporter="attribute-suffixed rules"),
    _m(f"{_RHI_PREFIX}percent_one_minute_rate", _RHI, aggregate="min", exporter="attribute-suffixed rules"),
    _m(
        f"{_RHI_PREFIX}percent_fiveminuterate",
        _RHI,
        priority=1,
        aggregate="min",
        exporter="attribute-suffixed rules",
    ),
    _m(
        f"{_RHI_PREFIX}percent_fifteenminuterate",
        _RHI,
        priority=2,
        aggregate="min",
        exporter="attribute-suffixed rules",
    ),
    _m(
        f"{_RHI_PREFIX}percent_meanrate",
        _RHI,
        priority=3,
        aggregate="min",
        exporter="attribute-suffixed rules",
    ),
    _m(
        f"{_RHI_PREFIX}_percent",
        _RHI,
        priority=3,
        aggregate="min",
        exporter="Strimzi kafka-metrics.yaml, kafka-2_0_0.yml (Percent rule): the MeanRate",
    ),
    # ... and its cumulative Count (idle nanoseconds since start), never a ratio.
    _m(
        f"{_RHI_PREFIX}percent",
        _RHI,
        cumulative=True,
        exporter="Confluent kafka_broker.yml / kafka_broker_p99only.yml, kafka-0-8-2.yml: the Count",
    ),
    _m(f"{_RHI_PREFIX}percent_count", _RHI, cumulative=True, exporter="kafka-2_0_0.yml, Strimzi: the Count"),
    _m(
        f"{_RHI_PREFIX}percent_count_total",
        _RHI,
        cumulative=True,
        exporter="kafka-2_0_0.yml, Strimzi under jmx_exporter 1.x (counters get _total)",
    ),
    _m("kafka_network_requestchannel_requestqueuesize", "request_queue_size", exporter=_RULES + ", Strimzi"),
    _m(
        "kafka_log_logmanager_offlinelogdirectorycount",
        "offline_log_directory_count",
        exporter="kafka-2_0_0.yml, Confluent kafka_broker.yml, Strimzi",
    ),
    _m(
        "kafka_log_logmanager_offlinelogdirectorycount_value",
        "offline_log_directory_count",
        exporter="kafka-0-8-2.yml",
    ),
    _m(
        "kafka_log_logmanager_offlinelogdirectorycount_value_total",
        "offline_log_directory_count",
        exporter="kafka-0-8-2.yml under jmx_exporter 1.x",
    ),
    _m(
        "kafka_server_socketservermetrics_connection_count",
        "connection_count",
        keep=("listener",),
        exporter="Confluent kafka_broker.yml",
    ),
)

# KRaft raft-metrics (kafka.server:type=raft-metrics, every KRaft node: voters and observers):
# jmx_exporter default naming, and Strimzi's kafka-metrics.yaml rule
# "kafka.server<type=raft-metrics><>(.+):" -> kafka_server_raftmetrics_$1 (a GAUGE).
RAFT_METRICS = tuple(
    _m(f"{prefix}_{attribute}", f"raft_{attribute}", aggregate="max", exporter=exporter)
    for attribute in ("current_leader", "current_epoch", "high_watermark", "log_end_offset")
    for prefix, exporter in (
        ("kafka_server_raft_metrics", _DEFAULT),
        ("kafka_server_raftmetrics", "Strimzi kafka-metrics.yaml (KRaft rules)"),
    )
)

# Protocol requests by API and version (kafka.network:type=RequestMetrics), see the module doc.
REQUEST_KEEP = ("request", "version")
DEPRECATED_REQUEST_KEEP = (*REQUEST_KEEP, "client_software_name", "client_software_version")
_REQUEST_BEANS = (
    ("RequestsPerSec", "request", REQUEST_KEEP),
    ("DeprecatedRequestsPerSec", "deprecated_request", DEPRECATED_REQUEST_KEEP),
)
REQUEST_METRICS = (
    tuple(
        _m(
            f"kafka_network_RequestMetrics_{attribute}",
            f"{canonical}_rate",
            where={"name": bean},
            keep=keep,
            priority=priority,
            complete=True,
            exporter=_DEFAULT,
        )
        for bean, canonical, keep in _REQUEST_BEANS
        for priority, attribute in enumerate(
            ("OneMinuteRate", "FiveMinuteRate", "FifteenMinuteRate", "MeanRate")
        )
    )
    + tuple(
        _m(
            "kafka_network_RequestMetrics_Count",
            f"{canonical}_count",
            where={"name": bean},
            keep=keep,
            counts=True,
            complete=True,
            exporter=_DEFAULT,
        )
        for bean, canonical, keep in _REQUEST_BEANS
    )
    + (
        _m(
            "kafka_network_requestmetrics_requestspersec",
            "request_count",
            keep=REQUEST_KEEP,
            counts=True,
            complete=True,
            exporter="Confluent kafka_broker.yml (generic two-tag Count rule)",
        ),
        _m(
            "kafka_network_requestmetrics_requests_total",
            "request_count",
            keep=REQUEST_KEEP,
            counts=True,
            complete=True,
            exporter="jmx_exporter kafka-2_0_0.yml, Strimzi kafka-metrics.yaml (PerSec Count rule)",
        ),
    )
)

# Broker metrics that contradict the metadata or each other (CTL011, PAR009-PAR011), see the module doc.
_STATE_GAUGES = (
    ("kafka_controller_KafkaController_Value", "ActiveControllerCount", "active_controller_count"),
    ("kafka_controller_KafkaController_Value", "OfflinePartitionsCount", "offline_partitions_count"),
    ("kafka_server_ReplicaManager_Value", "UnderMinIsrPartitionCount", "under_min_isr_partition_count"),
)
_ISR_METERS = (("IsrShrinksPerSec", "isr_shrink_rate"), ("IsrExpandsPerSec", "isr_expand_rate"))
_GAUGE_RULES = "jmx_exporter kafka-2_0_0.yml, Strimzi kafka-metrics.yaml (generic gauge rule)"
STATE_METRICS = (
    tuple(
        _m(sample, canonical, where={"name": bean}, aggregate="max", exporter=_DEFAULT)
        for sample, bean, canonical in _STATE_GAUGES
    )
    + tuple(
        _m(
            f"{sample.rsplit('_', 1)[0]}_{bean}",
            canonical,
            aggregate="max",
            exporter=_GAUGE_RULES,
        )
        for sample, bean, canonical in _STATE_GAUGES
    )
    + tuple(
        _m(
            f"kafka_server_ReplicaManager_{attribute}",
            canonical,
            where={"name": bean},
            priority=priority,
            aggregate="max",
            exporter=_DEFAULT,
        )
        for bean, canonical in _ISR_METERS
        for priority, attribute in enumerate(("OneMinuteRate", "FiveMinuteRate", "FifteenMinuteRate"))
    )
    + tuple(
        _m(
            "kafka_server_ReplicaManager_Count",
            canonical,
            where={"name": bean},
            cumulative=True,
            exporter=_DEFAULT,
        )
        for bean, canonical in _ISR_METERS
    )
    + tuple(
        _m(
            f"kafka_server_replicamanager_{bean[: -len('PerSec')]}_total",
            canonical,
            cumulative=True,
            exporter="kafka-2_0_0.yml, Strimzi kafka-metrics.yaml: the meter's Count as a counter",
        )
        for bean, canonical in _ISR_METERS
    )
)

MAPPINGS: tuple[Mapping, ...] = (
    MSK_OPEN_MONITORING + JMX_EXPORTER_EXAMPLE + RAFT_METRICS + REQUEST_METRICS + STATE_METRICS
)
_BY_SAMPLE: dict[str, list[Mapping]] = defaultdict(list)
for _mp in MAPPINGS:
    _BY_SAMPLE[_mp.sample].append(_mp)
_ORDER = {mp: i for i, mp in enumerate(MAPPINGS)}

_CLIENT_SOFTWARE = frozenset(
    {
        "kafka_server_socket_server_metrics_connections",  # jmx_exporter default naming (MSK)
        "kafka_server_socket_server_metrics_connections_software",  # Strimzi's kafka-metrics.yaml
        "kafka_server_socketservermetrics_connections",  # Confluent's jmx-monitoring-stacks kafka_broker.yml
    }
)
# FetcherLagMetrics ConsumerLag (replica_lag rows): sample name -> the bean name label it needs (None: any).
_FETCHER_LAG: dict[str, str | None] = {
    "kafka_server_fetcherlagmetrics_value": "consumerlag",  # jmx_exporter default naming (MSK open monitoring)
    "kafka_server_fetcherlagmetrics_consumerlag": None,  # kafka-2_0_0.yml, Strimzi kafka-metrics.yaml
}
# Log LogEndOffset (log_end_offsets rows): sample name -> the bean name label it needs (None: any).
_LOG_END_OFFSET: dict[str, str | None] = {
    "kafka_log_log_value": "logendoffset",  # jmx_exporter default naming (MSK open monitoring)
    "kafka_log_log_logendoffset": None,  # kafka-2_0_0.yml, Strimzi kafka-metrics.yaml
}
_REPLICA_FETCHER = re.compile(r"(?:^|:)ReplicaFetcherThread-[0-9]+-([0-9]{1,10})$")
_NODE_CPU = frozenset({"node_cpu_seconds_total", "node_cpu"})
_NODE_FS_SIZE = frozenset({"node_filesystem_size_bytes", "node_filesystem_size"})
_NODE_FS_AVAIL = frozenset({"node_filesystem_avail_bytes", "node_filesystem_avail"})
_NODE = _NODE_CPU | _NODE_FS_SIZE | _NODE_FS_AVAIL
# The broker's AppInfo version, in a ``version`` label (see the module docstring): these names,
# and any sample whose name starts with one of _APP_INFO_PREFIXES.
_APP_INFO = frozenset(
    {
        "kafka_server_app_info",  # koperator's default config: kafka.server<type=app-info><>version: (.*)
        "kafka_server_app_info_version",  # a rule naming the attribute (koperator's JMX version extractor)
        "kafka_server_appinfo_version",
        "kafka_server_appinfo",
    }
)
_APP_INFO_PREFIXES = ("kafka_server_app_info_", "kafka_server_appinfo_")
_APP_INFO_VERSION = re.compile(r"^v?\d{1,3}\.\d{1,3}[\w.+~-]{0,60}$")
_KNOWN = (
    frozenset(_BY_SAMPLE) | _CLIENT_SOFTWARE | _NODE | frozenset(_FETCHER_LAG) | frozenset(_LOG_END_OFFSET)
)

# Families every Go/Python/JVM exporter serves about itself: not named in the warning.
_RUNTIME_PREFIXES = ("go_", "process_", "promhttp_", "python_", "jmx_", "jvm_")
_KAFKA_EXPORTER_PREFIXES = (
    "kafka_consumergroup_",
    "kafka_topic_partition",
    "kafka_exporter_build_info",
    "kafka_brokers",
)

ACCEPTED_BROKER_FORMS = (
    "a broker_id=N: prefix on the source, a broker_id label, a URL or `instance` label host "
    "that is one registered broker's host (ZooKeeper, Admin API, advertised.listeners), "
    "an MSK broker host b-N.<cluster>...kafka..."
)


@dataclass
class MetricsResult(CollectResult):
    # broker_id -> {mountpoint: {"device", "fstype", "size_bytes", "avail_bytes"}}
    filesystems: dict[int, dict[str, dict]] = field(default_factory=dict)
    # Not failures: a source that gave nothing the audit reads (one line each, naming it).
    warnings: list[str] = field(default_factory=list)
    # broker_id -> how it was inferred, when not from a label or a broker_id=N: prefix.
    attribution: dict[int, str] = field(default_factory=dict)
    # broker_id -> the Kafka version its AppInfo reports (as reported: "3.7.0", "7.6.0-ce").
    versions: dict[int, str] = field(default_factory=dict)


# --- which broker -----------------------------------------------------------------------------
def _host_key(host) -> str:
    return host.strip().strip("[]").rstrip(".").lower() if isinstance(host, str) else ""


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _port(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 5 else None


def _msk_broker_host(host: str) -> int | None:
    m = _MSK_HOST.match(host)
    return int(m.group(1)) if m and ".kafka." in host.lower() else None


class BrokerHosts:
    """The registered brokers' hosts: which broker (if exactly one) a host names."""

    def __init__(self, entries: Iterable[tuple[int, str | None, int | None]] = ()):
        self._by_host: dict[str, dict[int, set[int | None]]] = {}
        for bid, host, port in entries:
            h = _host_key(host)
            if not h or bid is None or isinstance(bid, bool):
                continue
            self._by_host.setdefault(h, {}).setdefault(int(bid), set()).add(port)
        self._by_first_label: dict[str, set[str]] = defaultdict(set)
        for h in self._by_host:
            if "." in h and not _is_ip(h):
                self._by_first_label[h.split(".", 1)[0]].add(h)

    def __len__(self) -> int:
        """How many brokers have a registered host."""
        return len({b for brokers in self._by_host.values() for b in brokers})

    def lookup(self, host: str | None, port: int | None = None) -> int | None:
        h = _host_key(host)
        if not h:
            return None
        candidates = self._by_host.get(h)
        if candidates is None and not _is_ip(h):
            if "." in h:  # an FQDN against a bare registered name
                names = {h.split(".", 1)[0]} & set(self._by_host)
            else:  # a bare name against registered FQDNs
                names = self._by_first_label.get(h, set())
            merged: dict[int, set[int | None]] = {}
            for name in names:
                for b, ports in self._by_host[name].items():
                    merged.setdefault(b, set()).update(ports)
            candidates = merged or None
        if not candidates:
            return None
        if len(candidates) == 1:
            return next(iter(candidates))
        if port is not None:
            by_port = [b for b, ports in candidates.items() if port in ports]
            if len(by_port) == 1:
                return by_port[0]
        return None  # one host, several brokers: ambiguous


def _url_host(target: str) -> tuple[str | None, int | None]:
    if not target.lower().startswith(("http://", "https://")):
        return None, None
    try:
        u = urlparse(target)
        return u.hostname, u.port
    except ValueError:
        return None, None


def _instance_host(value: str) -> tuple[str, int | None]:
    """``kafka-2:7071`` -> ("kafka-2", 7071); ``[::1]:9100``; a bare host; a URL."""
    v = value.strip()
    if "://" in v:
        try:
            u = urlparse(v)
            return u.hostname or "", u.port
        except ValueError:
            return "", None
    if v.startswith("["):
        host, _, rest = v[1:].partition("]")
        return host, _port(rest[1:]) if rest.startswith(":") else None
    if v.count(":") == 1:
        host, _, port = v.partition(":")
        return host, _port(port)
    return v, None


def split_hint(source: str) -> tuple[int | None, str]:
    """(the ``broker_id=N:`` prefix's id, the URL or file); ValueError for an id no broker has."""
    m = _HINT.match(source.strip())
    if not m:
        return None, source.strip()
    if len(m.group(1)) > 10 or int(m.group(1)) > INT32_MAX:  # (int() refuses 4300+ digits itself)
        raise ValueError(f"broker_id={m.group(1)[:12]}...: not a broker id (0 to {INT32_MAX})")
    return int(m.group(1)), m.group(2)


class _Deadline:
    """One overall deadline for a fetch: every socket the fetch opens is recorded; each read
    gets the remaining time as its socket timeout, and when the deadline passes a timer shuts
    the sockets down (a server trickling its status line, headers or body wakes up then)."""

    def __init__(self, timeout: float):
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.expired = False
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(timeout, 0.0), self._expire)
        self._timer.daemon = True

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def start(self) -> None:
        self._timer.start()

    def cancel(self) -> None:
        self._timer.cancel()

    def add(self, sock):
        with self._lock:
            self._socks.append(sock)
            expired = self.expired
        if expired:
            _shutdown(sock)
        return sock

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            socks = list(self._socks)
        for sock in socks:
            _shutdown(sock)

    def before_read(self) -> None:
        """Set every socket's timeout to the time left; TimeoutError when none is left."""
        left = self.remaining()
        if left <= 0 or self.expired:
            raise TimeoutError(f"timed out after {self.timeout:g} s")
        with self._lock:
            socks = list(self._socks)
        for sock in socks:
            try:
                sock.settimeout(left)
            except OSError:
                pass


def _shutdown(sock) -> None:
    try:  # socket.socket's own shutdown (an SSLSocket's would drop its SSL object under a reader)
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except (OSError, ValueError, TypeError):
        pass


def _tracked(base: type, deadline: _Deadline) -> type:
    """``base`` (HTTPConnection / HTTPSConnection) whose sockets ``deadline`` knows of: the
    TCP socket as soon as it is connected (before a TLS handshake), and the TLS socket."""

    class Tracked(base):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            create = self._create_connection
            self._create_connection = lambda *a, **k: deadline.add(create(*a, **k))

        def connect(self):
            super().connect()
            deadline.add(self.sock)

    return Tracked


class _DeadlineHandlerMixin:
    def __init__(self, deadline: _Deadline, **kwargs):
        super().__init__(**kwargs)
        self._deadline = deadline

    def do_open(self, http_class, req, **kwargs):
        if self._deadline.remaining() <= 0:
            raise TimeoutError(f"timed out after {self._deadline.timeout:g} s")
        req.timeout = max(self._deadline.remaining(), 0.001)  # a redirect gets what is left
        return super().do_open(_tracked(http_class, self._deadline), req, **kwargs)


class _HTTPHandler(_DeadlineHandlerMixin, urllib.request.HTTPHandler):
    pass


class _HTTPSHandler(_DeadlineHandlerMixin, urllib.request.HTTPSHandler):
    pass


class _NoFTPHandler(urllib.request.FTPHandler):
    def ftp_open(self, req):
        raise urllib.error.URLError("redirected to an ftp:// URL: not followed")


def _too_large() -> ValueError:
    return ValueError(f"larger than the limit of {MAX_BYTES} bytes for a metrics scrape")


def _fetch_url(target: str, timeout: float) -> bytes:
    """GET ``target`` within ``timeout`` seconds *overall* (connect, headers and body: measured
    with time.monotonic) and at most MAX_BYTES; ``user:pass@`` is sent as a Basic
    Authorization header, never as part of the host. TimeoutError / ValueError / OSError."""
    url, authorization = split_credentials(target)
    deadline = _Deadline(timeout)
    opener = urllib.request.build_opener(_HTTPHandler(deadline), _HTTPSHandler(deadline), _NoFTPHandler())
    req = urllib.request.Request(
        url, headers={"Accept": "text/plain;version=0.0.4, */*;q=0.1", "User-Agent": "kafka-auditor"}
    )
    if authorization is not None:
        req.add_unredirected_header("Authorization", authorization)  # not sent on to a redirect
    chunks: list[bytes] = []
    total = 0
    deadline.start()
    try:
        with opener.open(req, timeout=timeout) as resp:  # noqa: S310 (scheme checked by the caller)
            length = (resp.headers.get("Content-Length") or "").strip()
            if length.isascii() and length.isdigit() and int(length) > MAX_BYTES:
                raise _too_large()
            while True:
                deadline.before_read()
                chunk = resp.read1(_CHUNK)
                if not chunk:
                    break
                total += len(chunk)
                if total > MAX_BYTES:
                    raise _too_large()
                chunks.append(chunk)
        if deadline.expired:  # the timer shut the socket: an end of data that is not the end
            raise TimeoutError(f"timed out after {timeout:g} s")
    except urllib.error.HTTPError as e:
        e.close()
        raise
    except Exception:
        if deadline.expired:
            raise TimeoutError(f"timed out after {timeout:g} s") from None
        raise
    finally:
        deadline.cancel()
    return b"".join(chunks)


def fetch(target: str, timeout: float = DEFAULT_TIMEOUT) -> str:
    """Read a file or GET an http(s) URL; raise OSError/ValueError on failure (TimeoutError when
    the whole fetch takes longer than ``timeout``; ValueError beyond MAX_BYTES)."""
    if target.lower().startswith(("http://", "https://")):
        data = _fetch_url(target, timeout)
    elif "://" in target:
        raise ValueError(
            f"unsupported URL scheme (expected a file, http:// or https://): {redact_url(target)}"
        )
    else:
        path = Path(target)
        if path.is_dir():
            raise ValueError("is a directory, expected a Prometheus text file")
        try:  # a regular file only: a FIFO would block, /dev/zero never end
            data = safe_io.read_bytes(path, limit=MAX_BYTES)
        except safe_io.FileRefused as e:
            raise _too_large() if e.reason.startswith("larger") else ValueError(e.reason) from None
    if b"\x00" in data:
        raise ValueError("binary data, not Prometheus text")
    return data.decode("utf-8", errors="replace")


def _label(labels: dict[str, str], name: str) -> str | None:
    """The value of label ``name`` (given normalised), matched case- and separator-insensitively."""
    for k, v in labels.items():
        if _norm(k) == name:
            return v
    return None


def _sample_broker(labels: dict[str, str]) -> int | None:
    for name in _BROKER_LABELS:
        v = _label(labels, name)
        if v is not None and v.strip().isascii() and v.strip().isdigit():
            # (int() of thousands of digits raises; anything above INT32_MAX is refused anyway)
            return int(v) if len(v.strip()) <= 12 else _BROKER_ID_TOO_LARGE
    return None


def _show(name: str, labels: dict[str, str], value: float | None = None) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    text = f"{name}{{{inner}}}" if labels else name
    return text if value is None else f"{text} = {value:g}"


def _help_attribute(documentation: str | None) -> str | None:
    m = _HELP_ATTRIBUTE.search(documentation or "")
    return m.group(1).lower() if m else None


def _use(mp: Mapping, attribute: str | None, counter: bool) -> int | None:
    """The priority a sample of ``mp`` is read with, or None when it is a cumulative count
    (``counter``: the sample is declared a counter)."""
    if mp.counts:  # kept as a count: anything but a rate
        return mp.priority if attribute in (None, "count") else None
    if attribute == "count":
        return None  # a meter's Count (the HELP text says so), whatever the name
    if mp.cumulative:
        return _RATE_ATTRIBUTES.get(attribute) if attribute is not None else None
    if mp.canonical in RANGES and counter:
        return None
    return mp.priority


_TYPE_COUNTER = re.compile(r"^[ \t]*#[ \t]+TYPE[ \t]+(\S+)[ \t]+counter[ \t]*$", re.MULTILINE | re.IGNORECASE)


def _counters(text: str) -> frozenset[str]:
    """Sample names declared counters: ``# TYPE x counter`` declares ``x`` and ``x_total`` (the
    text parser keeps only the former in its family when the sample is the latter)."""
    names = {m.group(1).lower() for m in _TYPE_COUNTER.finditer(text)}
    return frozenset(names | {n + "_total" for n in names})


def _in_range(canonical: str, value: float) -> float | None:
    """The value, clamped within the slack; None when outside the range of a ratio metric."""
    if canonical not in RANGES:
        return value
    lo, hi, _what = RANGES[canonical]
    slack = (hi - lo) * RANGE_SLACK
    if lo - slack <= value <= hi + slack:
        return min(max(value, lo), hi)
    return None


def _iter_families(text: str):
    from prometheus_client.parser import text_string_to_metric_families

    yield from text_string_to_metric_families(text)


def _version_order(version: str) -> tuple:
    """Sort key of a reported version: numerically by its leading numbers, then as text."""
    nums = re.match(r"v?([0-9.]*)", version).group(1)
    return tuple(int(p[:18]) for p in nums.split(".") if p), version


_AGGREGATE = {"sum": lambda a, b: a + b, "max": max, "min": min}


def parse_metrics(
    text: str,
    target: str,
    broker_hint: int | None = None,
    *,
    broker_hosts: BrokerHosts | Iterable[tuple[int, str | None, int | None]] | None = None,
    scraped_at_ms: int | None = None,
) -> MetricsResult:
    """Map one scrape's samples to ``metrics`` and ``client_software`` rows; never raises.

    ``broker_hint``: the source's ``broker_id=N:`` prefix. ``broker_hosts``: the registered
    brokers' ``(broker_id, host, port)``, to attribute a scrape by its URL host or its samples'
    ``instance`` label (see the module docstring). ``scraped_at_ms``: when the scrape was taken,
    stored with its log end offsets (None: not stored)."""
    target = redact_url(target)  # credentials in a URL are never shown or stored
    hosts = broker_hosts if isinstance(broker_hosts, BrokerHosts) else BrokerHosts(broker_hosts or ())
    scrape = _Scrape(target, broker_hint, hosts, _counters(text) if "counter" in text else frozenset())
    scrape.scraped_at_ms = scraped_at_ms
    try:
        for family in _iter_families(text):
            scrape.read_family(family)
    except Exception as e:  # the parser raises ValueError, and others on odd input
        scrape.result.error(SOURCE, target, f"{target}: not valid Prometheus text: {one_line(e, 200)}")
    scrape.write_rows()
    scrape.report_problems()
    return scrape.result


class _Scrape:
    """One scrape being read: the samples kept so far, by broker, and what could not be kept."""

    def __init__(self, target: str, broker_hint: int | None, hosts: BrokerHosts, counters: frozenset):
        self.result = MetricsResult()
        self.target, self.broker_hint, self.hosts, self.counters = target, broker_hint, hosts, counters
        self.url_broker: tuple[int, str] | None = None
        url_host, url_port = _url_host(target)
        if url_host:
            b = hosts.lookup(url_host, url_port)
            if b is not None:
                self.url_broker = (b, f"URL host {url_host} is broker {b}'s registered host")
            elif (b := _msk_broker_host(url_host)) is not None:
                self.url_broker = (b, f"URL host {url_host} is MSK broker b-{b}")
        self.by_instance: dict[str, tuple[int, str] | None] = {}
        # (broker, canonical, labels json, mapping, priority) -> aggregated value
        self.agg: dict[tuple[int, str, str, Mapping, int], float] = {}
        self.clients: dict[tuple[int, str, str, str], float] = defaultdict(float)
        # (follower, topic, partition) -> (leader from the clientId or None, lag)
        self.lags: dict[tuple[int, str, int], tuple[int | None, float]] = {}
        self.leos: dict[tuple[int, str, int, int | None], float] = {}  # + the sample's own time (ms)
        self.scraped_at_ms: int | None = None  # when the scrape was taken (its log end offsets carry it)
        self.cpus: dict[int, set[str]] = defaultdict(set)
        self.versions: dict[int, set[str]] = defaultdict(set)
        self.samples = self.usable = 0
        self.families: list[str] = []  # a few family names, for the warning
        self.cumulative: list[str] = []  # recognised cumulative spellings
        self.kafka_exporter = False
        self.no_broker, self.no_broker_example = 0, ""
        self.out_of_range: list[str] = []

    # --- which broker a sample is about -------------------------------------------------------
    def broker_of(self, labels: dict[str, str]) -> int | None:
        b = _sample_broker(labels)
        if b is not None:
            return b
        if self.broker_hint is not None:
            return self.broker_hint
        found = self.url_broker
        instance = _label(labels, "instance") if found is None else None
        if instance is not None:
            if instance not in self.by_instance:
                host, port = _instance_host(instance)
                b = self.hosts.lookup(host, port)
                if b is not None:
                    self.by_instance[instance] = (b, f"instance {instance} is broker {b}'s registered host")
                elif (b := _msk_broker_host(host)) is not None:
                    self.by_instance[instance] = (b, f"instance {instance} is MSK broker b-{b}")
                else:
                    self.by_instance[instance] = None
            found = self.by_instance[instance]
        if found is None:
            return None
        self.result.attribution.setdefault(found[0], found[1])
        return found[0]

    def _nameless(self, name: str, labels: dict) -> None:
        self.no_broker += 1
        self.no_broker_example = self.no_broker_example or _show(name, labels)

    # --- reading the samples ------------------------------------------------------------------
    def read_family(self, family) -> None:
        if family.samples and len(self.families) < 6 and not family.name.startswith(_RUNTIME_PREFIXES):
            self.families.append(family.name)
        attribute = _help_attribute(family.documentation)
        for s in family.samples:
            self.samples += 1
            name = s.name.lower()
            if name in _APP_INFO or name.startswith(_APP_INFO_PREFIXES):
                self._app_info(s)
            elif name not in _KNOWN:
                if not self.kafka_exporter and name.startswith(_KAFKA_EXPORTER_PREFIXES):
                    self.kafka_exporter = True
            else:
                self._known(s, name, attribute, family.type == "counter" or name in self.counters)

    def _app_info(self, s) -> None:
        """AppInfo: the Kafka version a broker reports."""
        labels = dict(s.labels)
        version = (_label(labels, "version") or "").strip()
        if not _APP_INFO_VERSION.match(version):
            return  # no version label, or "unknown" (AppInfoParser's default)
        self.usable += 1
        app_id = (_label(labels, "id") or "").strip()
        broker = (
            int(app_id)
            if app_id.isascii() and app_id.isdigit() and len(app_id) <= 9
            else self.broker_of(labels)
        )
        if broker is None:
            self._nameless(s.name, labels)
        elif 0 <= broker <= INT32_MAX:
            self.versions[broker].add(version)

    def _uses(self, s, name: str, labels: dict, attribute, counter: bool) -> list[tuple[Mapping, int]] | None:
        """The mappings a known sample feeds, with their priority (None: it feeds none)."""
        if name not in _BY_SAMPLE:
            if name in _CLIENT_SOFTWARE and _label(labels, "clientsoftwarename") is None:
                return None  # the same gauge per TLS cipher/protocol: not client software
            if name in _FETCHER_LAG and _FETCHER_LAG[name] not in (
                None,
                (_label(labels, "name") or "").lower(),
            ):
                return None  # another FetcherLagMetrics gauge
            if name in _LOG_END_OFFSET and _LOG_END_OFFSET[name] not in (
                None,
                (_label(labels, "name") or "").lower(),
            ):
                return None  # another Log gauge (Size, NumLogSegments, LogStartOffset)
            return []
        uses = []
        for mp in _BY_SAMPLE[name]:
            if any((_label(labels, k) or "").lower() != v for k, v in mp.where):
                continue
            if mp.complete and any(_label(labels, _norm(k)) is None for k in mp.keep):
                continue  # RequestsPerSec of a broker before 2.0: no version tag, nothing to judge
            prio = _use(mp, attribute, counter)
            if prio is None:
                if s.name not in self.cumulative:
                    self.cumulative.append(s.name)
            else:
                uses.append((mp, prio))
        return uses or None

    def _known(self, s, name: str, attribute, counter: bool) -> None:
        labels = dict(s.labels)
        uses = self._uses(s, name, labels, attribute, counter)
        if uses is None:
            return
        self.usable += 1
        value = float(s.value)
        if not math.isfinite(value):
            return
        broker = self.broker_of(labels)
        if broker is None:
            self._nameless(s.name, labels)
        elif not 0 <= broker <= INT32_MAX:  # broker_id is an int column
            shown = {k: v if len(v) <= 40 else v[:40] + "..." for k, v in labels.items()}
            self.out_of_range.append(
                f"{_show(s.name, shown, value)}: broker id "
                f"{broker if broker != _BROKER_ID_TOO_LARGE else '(a label of 13+ digits)'} "
                f"is outside [0, {INT32_MAX}]: not stored"
            )
        elif name in _NODE_CPU:
            if (_label(labels, "mode") or "").lower() == "idle":
                self.cpus[broker].add(_label(labels, "cpu") or "")
        elif name in _NODE_FS_SIZE or name in _NODE_FS_AVAIL:
            self._filesystem(s, name, labels, value, broker)
        elif name in _CLIENT_SOFTWARE:
            self._client_software(s, labels, value, broker)
        elif name in _FETCHER_LAG:
            self._replica_lag(labels, value, broker)
        elif name in _LOG_END_OFFSET:
            self._log_end_offset(labels, value, broker, s.timestamp)
        else:
            self._mapped(s, labels, value, broker, uses)

    def _filesystem(self, s, name: str, labels: dict, value: float, broker: int) -> None:
        """node exporter: the size and free bytes of each mount."""
        mount = _label(labels, "mountpoint")
        if not mount:
            return
        fs = self.result.filesystems.setdefault(broker, {}).setdefault(
            mount, {"device": _label(labels, "device"), "fstype": _label(labels, "fstype")}
        )
        if not 0 <= value <= FS_BYTES_MAX:  # log_dirs bytes are bigint
            self.out_of_range.append(
                f"{_show(s.name, labels, value)} is outside [0, {FS_BYTES_MAX}], a size in bytes: not stored"
            )
            return
        fs["size_bytes" if name in _NODE_FS_SIZE else "avail_bytes"] = value

    def _client_software(self, s, labels: dict, value: float, broker: int) -> None:
        """KIP-511: connections per client name and version."""
        if not 0 <= value <= CONNECTIONS_MAX:  # client_software.connections is an int
            self.out_of_range.append(
                f"{_show(s.name, labels, value)} is outside [0, {CONNECTIONS_MAX}], a connection count: not stored"
            )
            return
        key = (
            broker,
            _label(labels, "listener") or "",
            _label(labels, "clientsoftwarename"),
            _label(labels, "clientsoftwareversion") or "",
        )
        self.clients[key] += value

    def _replica_lag(self, labels: dict, value: float, broker: int) -> None:
        """FetcherLagMetrics ConsumerLag: the follower ``broker``'s lag on one partition."""
        client = (_label(labels, "clientid") or "").strip()
        topic = _label(labels, "topic")
        partition = (_label(labels, "partition") or "").strip()
        if client.split(":")[-1].startswith("ReplicaAlterLogDirsThread") or not topic:
            return  # a replica moving between this broker's log dirs: not a follower of a leader
        if (
            not (partition.isascii() and partition.isdigit() and len(partition) <= 9)
            or not 0 <= value <= INT64_MAX
        ):
            return  # -1: the gauge before the first fetch (no lag known yet)
        m = _REPLICA_FETCHER.search(client)
        leader = int(m.group(1)) if m and int(m.group(1)) <= INT32_MAX else None
        key = (broker, topic, int(partition))
        previous = self.lags.get(key)
        self.lags[key] = (leader, max(value, previous[1]) if previous else value)

    def _log_end_offset(self, labels: dict, value: float, broker: int, timestamp=None) -> None:
        """Log LogEndOffset: broker ``broker``'s own log end on one partition replica; ``timestamp``:
        the sample's own (seconds, a saved or federated scrape carries it), else the scrape's time."""
        topic = _label(labels, "topic")
        partition = (_label(labels, "partition") or "").strip()
        if (_label(labels, "isfuture") or "").lower() == "true" or not topic:
            return  # the future log of a replica moving between log dirs: not the replica's log end
        if (
            not (partition.isascii() and partition.isdigit() and len(partition) <= 9)
            or not 0 <= value <= INT64_MAX
        ):
            return
        at = None
        if isinstance(timestamp, int | float) and math.isfinite(timestamp) and 0 < timestamp < 1e11:
            at = int(round(timestamp * 1000))
        key = (broker, topic, int(partition), at)
        self.leos[key] = max(value, self.leos.get(key, value))

    def _mapped(self, s, labels: dict, value: float, broker: int, uses: list[tuple[Mapping, int]]) -> None:
        """A sample a mapping reads: aggregated per broker, metric and kept labels."""
        for mp, prio in uses:
            if mp.canonical == "cpu_user_system_percent" and value < 0:
                continue  # the JVM reports a negative load when it cannot read it
            v = _in_range(mp.canonical, value * mp.scale)
            if v is not None and mp.canonical in COUNTS and not 0 <= v <= COUNTS[mp.canonical]:
                self.out_of_range.append(
                    f"{_show(s.name, labels, value)} is outside [0, {COUNTS[mp.canonical]}], "
                    f"a count for {mp.canonical}: not stored"
                )
                continue
            if v is None:
                lo, hi, what = RANGES[mp.canonical]
                scaled = f" ({value * mp.scale:g} as {mp.canonical})" if mp.scale != 1 else ""
                self.out_of_range.append(
                    f"{_show(s.name, labels, value)}{scaled} is outside [{lo:g}, {hi:g}], "
                    f"{what} for {mp.canonical}: not stored"
                )
                continue
            kept = {k: _label(labels, _norm(k)) for k in mp.keep if _label(labels, _norm(k)) is not None}
            key = (broker, mp.canonical, json.dumps(kept, sort_keys=True, separators=(",", ":")), mp, prio)
            self.agg[key] = _AGGREGATE[mp.aggregate](self.agg[key], v) if key in self.agg else v

    # --- the rows -----------------------------------------------------------------------------
    def write_rows(self) -> None:
        """The best mapping per broker, metric and labels; the client software; the versions."""
        result = self.result
        for broker, found in sorted(self.versions.items()):
            result.versions[broker] = min(found, key=_version_order)  # (federation duplicates: the lowest)
        best: dict[tuple[int, str, str], tuple[tuple[int, int], float]] = {}
        for (broker, canonical, labels_json, mp, prio), v in self.agg.items():
            key, rank = (broker, canonical, labels_json), (prio, _ORDER[mp])
            if key not in best or rank < best[key][0]:
                best[key] = (rank, v)
        for broker, ids in self.cpus.items():
            best[(broker, "cpu_count", "{}")] = (
                (-1, -1),
                float(len(ids)),
            )  # node exporter over the JVM's view
        for (broker, canonical, labels_json), (_rank, v) in sorted(best.items(), key=lambda kv: kv[0]):
            if canonical in COUNTS and not 0 <= v <= COUNTS[canonical]:  # a sum of samples that each fit
                self.out_of_range.append(
                    f"{canonical}{labels_json} of broker {broker} sums to {v:g}, outside "
                    f"[0, {COUNTS[canonical]}]: not stored"
                )
                continue
            result.rows("metrics").append(
                {"broker_id": broker, "name": canonical, "labels": labels_json, "value": float(v)}
            )
        for (broker, topic, partition), (leader, lag) in sorted(self.lags.items()):
            result.rows("replica_lag").append(
                {
                    "broker_id": broker,
                    "topic": topic,
                    "partition": partition,
                    "leader_id": leader,
                    "lag": int(lag),
                }
            )
        for (broker, topic, partition, at), leo in sorted(
            self.leos.items(), key=lambda kv: (kv[0][:3], kv[0][3] or 0)
        ):
            when = at if at is not None else self.scraped_at_ms
            result.rows("log_end_offsets").append(
                {"broker_id": broker, "topic": topic, "partition": partition, "log_end_offset": int(leo)}
                | ({} if when is None else {"scraped_at_ms": when})
            )
        for (broker, listener, sw, version), conns in sorted(self.clients.items()):
            if not 0 <= conns <= CONNECTIONS_MAX:  # a sum of samples that each fit
                self.out_of_range.append(
                    f"connections of {sw} {version} on broker {broker}{' ' + listener if listener else ''} "
                    f"sum to {conns:g}, outside [0, {CONNECTIONS_MAX}]: not stored"
                )
                continue
            result.rows("client_software").append(
                {
                    "broker_id": broker,
                    "listener": listener or None,
                    "client_name": sw,
                    "client_version": version or None,
                    "connections": int(round(conns)),
                }
            )

    def report_problems(self) -> None:
        """Samples out of range, samples naming no broker, and a scrape that gave nothing."""
        result, target = self.result, self.target
        for message in self.out_of_range[:MAX_RANGE_ERRORS]:
            result.error(SOURCE, target, f"{target}: {message}")
        if len(self.out_of_range) > MAX_RANGE_ERRORS:
            result.error(
                SOURCE,
                target,
                f"{target}: {len(self.out_of_range) - MAX_RANGE_ERRORS} more samples out of "
                "range for a ratio metric: not stored",
            )
        if self.no_broker:
            result.error(
                SOURCE,
                target,
                f"{target}: {self.no_broker} samples name no broker; accepted: {ACCEPTED_BROKER_FORMS} "
                f"({len(self.hosts)} brokers with a registered host; e.g. {one_line(self.no_broker_example, 100)})",
            )
        if not result.errors and not result.tables and not result.filesystems and not result.versions:
            # A source the user named that gives the audit nothing is a failed source: a warning and
            # exit 0 were a green audit of rules that never ran (issue 37).
            result.error(
                SOURCE,
                target,
                _nothing_read(
                    target, self.samples, self.usable, self.families, self.cumulative, self.kafka_exporter
                ),
            )


def _nothing_read(
    target: str, samples: int, usable: int, families: list[str], cumulative: list[str], kafka_exporter: bool
) -> str:
    """The source error of a source that gave no row (and no other error)."""
    if samples == 0:
        return f"{target}: no samples: nothing read from this metrics source"
    if usable:
        return (
            f"{target}: {usable} recognised samples gave no value (not finite, or 'not available'): "
            "nothing read from this metrics source"
        )
    if cumulative:
        return (
            f"{target}: only cumulative meter counts recognised ({', '.join(cumulative[:3])}), no gauge or "
            "rate the audit reads: nothing read from this metrics source"
        )
    shown = f" ({', '.join(families[:5])}{', ...' if len(families) > 5 else ''})" if families else ""
    what = (
        " (kafka_exporter output: topic and consumer-group metrics, which no check reads)"
        if kafka_exporter
        else ""
    )
    return (
        f"{target}: no Kafka broker (JMX exporter) or node exporter metric recognised in {samples} samples"
        f"{shown}{what}: nothing read from this metrics source"
    )


def _is_url(target: str) -> bool:
    return target.lower().startswith(("http://", "https://"))


def _scrape_time_ms(raw: str) -> int:
    """When a scrape was taken: now for a URL (just fetched), a file's modification time."""
    if not _is_url(raw):
        try:
            return os.stat(raw).st_mtime_ns // 1_000_000
        except (OSError, ValueError):
            pass
    return time.time_ns() // 1_000_000


def _fetch_error(e: BaseException, timeout: float) -> str:
    if isinstance(e, urllib.error.HTTPError):
        return f"HTTP {e.code} {one_line(e.reason, 200)}"
    if isinstance(e, urllib.error.URLError):
        return f"cannot fetch ({one_line(e.reason, 200)})"
    if isinstance(e, TimeoutError):
        return f"timed out after {timeout:g} s (the whole fetch)"
    if isinstance(e, OSError):
        return f"unreadable ({e.strerror or one_line(e, 200)})"
    return one_line(e, 200) or type(e).__name__


_FETCH_ERRORS = (
    OSError,
    ValueError,
    http.client.HTTPException,
)  # URLError, HTTPError, TimeoutError: OSErrors


def collect_metrics(
    sources,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    fetcher: Callable[[str, float], str] = fetch,
    broker_hosts: Iterable[tuple[int, str | None, int | None]] = (),
    second_scrape_after: float = SECOND_SCRAPE_AFTER,
    sleep: Callable[[float], None] = time.sleep,
) -> MetricsResult:
    """Collect every metrics source (``[broker_id=N:]FILE_OR_URL``); failures become source
    errors, and so is a source that gives nothing the audit reads.
    ``broker_hosts``: the registered brokers' ``(broker_id, host, port)`` (see parse_metrics).
    A URL whose scrape had log end offsets is scraped again ``second_scrape_after`` seconds after
    the first round (0: never): its second log end offsets are kept (see the module docstring)."""
    result = MetricsResult()
    hosts = BrokerHosts(broker_hosts)
    again: list[tuple[str, str, int | None, dict]] = []  # (raw, target, hint, source entry)
    for source in [sources] if isinstance(sources, str) else sources:
        try:
            hint, raw = split_hint(source)
        except ValueError as e:
            target = redact_url(source.strip())[:200]
            result.error(SOURCE, target, str(e))
            result.sources.append({"source": SOURCE, "target": target, "status": "error"})
            continue
        # What is shown and stored: the URL without its credentials. The fetcher gets the raw
        # one (it sends user:pass as an Authorization header).
        target = redact_url(raw)
        try:
            text = fetcher(raw, timeout)
        except _FETCH_ERRORS as e:  # the exception's text may quote the URL or pieces of it
            result.error(SOURCE, target, f"{target}: {scrub(_fetch_error(e, timeout), raw)}")
            result.sources.append({"source": SOURCE, "target": target, "status": "error"})
            continue
        one = parse_metrics(text, target, hint, broker_hosts=hosts, scraped_at_ms=_scrape_time_ms(raw))
        result.merge(one)
        for b, mounts in one.filesystems.items():
            result.filesystems.setdefault(b, {}).update(mounts)
        for b, version in one.versions.items():
            result.versions.setdefault(b, version)  # two sources for one broker: the first seen
        result.warnings.extend(one.warnings)
        entry = {
            "source": SOURCE,
            "target": target,
            "status": "error" if one.errors else "warning" if one.warnings else "ok",
        }
        if one.warnings:
            entry["reason"] = one_line("; ".join(one.warnings))
        if one.attribution:
            entry["attribution"] = {str(b): how for b, how in sorted(one.attribution.items())}
        result.sources.append(entry)
        if _is_url(raw) and one.tables.get("log_end_offsets") and not one.errors:
            again.append((raw, target, hint, entry))
    if again and second_scrape_after > 0:
        _second_scrape(result, again, hosts, timeout, fetcher, second_scrape_after, sleep)
    _dedupe(result)
    return result


def _second_scrape(result: MetricsResult, again, hosts, timeout, fetcher, after: float, sleep) -> None:
    """Scrape the URLs whose first scrape had log end offsets once more, ``after`` seconds later,
    and keep only their log end offsets (each row with the second scrape's time)."""
    sleep(after)
    for raw, target, hint, entry in again:
        try:
            text = fetcher(raw, timeout)
        except _FETCH_ERRORS as e:
            problem = f"{target}: second scrape failed ({scrub(_fetch_error(e, timeout), raw)}): its log end offsets are of one scrape only"
        else:
            one = parse_metrics(text, target, hint, broker_hosts=hosts, scraped_at_ms=_scrape_time_ms(raw))
            rows = one.tables.get("log_end_offsets", [])
            if rows and not one.errors:
                result.rows("log_end_offsets").extend(rows)
                entry["scrapes"] = 2
                continue
            problem = f"{target}: the second scrape gave no log end offsets: they are of one scrape only"
        result.warnings.append(problem)
        entry["status"] = "warning" if entry["status"] == "ok" else entry["status"]
        entry["reason"] = one_line("; ".join(filter(None, [entry.get("reason"), problem])))


def _dedupe(result: MetricsResult) -> None:
    """Two sources for the same broker and metric: keep the first seen (for cpu_count, the
    larger: a JMX and a node exporter both give it)."""
    kept: dict[tuple, dict] = {}
    for r in result.tables.get("metrics", []):
        key = (r["broker_id"], r["name"], r["labels"])
        if key not in kept:
            kept[key] = r
        elif r["name"] == "cpu_count" and r["value"] > kept[key]["value"]:
            kept[key] = r  # the host's CPUs (node exporter) over a container-limited JVM view
    if "metrics" in result.tables:
        result.tables["metrics"] = list(kept.values())


# --- the metrics source -------------------------------------------------------------------------
def broker_hosts(
    registry: list[CollectResult], files: CollectResult | None
) -> list[tuple[int, str, int | None]]:
    """``(broker_id, host, port)`` of every broker: its registration (ZooKeeper, Admin API,
    ``extra``) and the hosts of its server.properties ``advertised.listeners`` (else
    ``listeners``). Handed to the metrics collector, which attributes a scrape whose URL host or
    ``instance`` label names exactly one broker."""
    out: list[tuple[int, str, int | None]] = []
    for r in registry:
        for row in r.tables.get("brokers", []):
            if isinstance(row.get("broker_id"), int) and isinstance(row.get("host"), str) and row["host"]:
                out.append((row["broker_id"], row["host"], row.get("port")))
    listeners: dict[tuple[str, str], str] = {}
    for row in files.tables.get("configs", []) if files else []:
        if row.get("entity_type") == "broker" and row.get("key") in ("advertised.listeners", "listeners"):
            listeners[(row["entity_name"], row["key"])] = row.get("value") or ""
    for (entity, key), value in sorted(listeners.items()):
        if not (entity.isascii() and entity.isdigit()) or (
            key == "listeners" and (entity, "advertised.listeners") in listeners
        ):
            continue
        for host, port in _listener_hosts(value):
            out.append((int(entity), host, port))
    return out


def _listener_hosts(value: str) -> list[tuple[str, int | None]]:
    """``PLAINTEXT://kafka-1.internal:9092,SSL://[::1]:9093`` -> the named hosts (a listener
    bound to every interface, or a ``${...}`` placeholder, names none)."""
    out = []
    for listener in value.split(","):
        rest = listener.strip().split("://", 1)[-1]
        host, _, port = rest.rpartition(":")
        host = host.strip().strip("[]")
        if not host or host in ("0.0.0.0", "::") or any(c in host for c in "${}"):
            continue
        out.append((host, int(port) if port.isascii() and port.isdigit() else None))
    return out


def _collect_source(ctx: Context) -> MetricsResult:
    """The scrapes, attributed to the brokers that the registry sources (ZooKeeper, the Admin API,
    an MSK or first-pass result) and the broker config files, which ran before, name."""
    registry = [r for name, r in ctx.results if name != "files" and r.tables.get("brokers")]
    return collect_metrics(
        list(ctx.sources.metrics),
        timeout=ctx.sources.timeout,
        broker_hosts=broker_hosts(registry, ctx.result("files")),
    )


COLLECTOR = Collector(
    name="metrics",
    wanted=lambda ctx: bool(ctx.sources.metrics),
    target=lambda ctx: ", ".join(redact_url(str(m)) for m in ctx.sources.metrics),
    collect=_collect_source,
    requests=lambda ctx: len(ctx.sources.metrics),
)
