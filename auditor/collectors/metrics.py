"""Collector for broker metrics in Prometheus text format (read-only).

A source is a file path or an http(s) URL (fetched with urllib, with a timeout), optionally
prefixed with the broker it belongs to: ``broker_id=3:http://kafka-3:7071/metrics``. Without a
prefix the broker comes from a ``broker_id`` (or ``brokerid``, or integer ``broker``) label on
each sample, or from an MSK broker host name (``b-3.<cluster>...:11001``).

Samples are parsed with ``prometheus_client.parser.text_string_to_metric_families`` (which
accepts the JMX exporter's trailing ``,}`` and ``untyped``) and matched by *sample* name,
case-insensitively, against shipped mapping tables for:

* the AWS MSK open-monitoring JMX exporter (port 11001; the jmx_exporter default naming
  ``kafka_network_SocketServer_Value{name="NetworkProcessorAvgIdlePercent"}``),
* the jmx_exporter example config for Kafka (``lowercaseOutputName``, e.g.
  ``kafka_network_socketserver_networkprocessoravgidlepercent``) and common variants of it,
* the node exporter (MSK port 11002): ``node_cpu_seconds_total`` (distinct CPUs with
  mode="idle" -> cpu_count) and ``node_filesystem_size_bytes`` / ``node_filesystem_avail_bytes``
  per mountpoint (returned in :attr:`MetricsResult.filesystems`; the collect step turns them
  into ``log_dirs`` sizes by longest mountpoint prefix).

Rows use the canonical names of ``auditor.snapshot.schema.METRICS``. KIP-511 client software
gauges (``socket-server-metrics`` with clientSoftwareName/clientSoftwareVersion, attribute
``connections``) become ``client_software`` rows, summed over network processors.

Not mapped: RequestHandlerAvgIdlePercent exported only as its cumulative ``_count`` /
``_total`` (idle nanoseconds since start: one scrape cannot give a ratio), and node exporter
CPU busy time (a counter since boot); JMX ``SystemCpuLoad``/``CpuLoad`` gives
cpu_user_system_percent when exported.
"""

from __future__ import annotations

import json
import math
import re
import urllib.error
import urllib.request
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

from auditor.collectors._common import DEFAULT_TIMEOUT, CollectResult, one_line

SOURCE = "metrics"
MAX_BYTES = 64 * 1024 * 1024

_HINT = re.compile(r"^broker_id=(\d+):(.+)$", re.DOTALL)
_MSK_HOST = re.compile(r"^b-(\d+)\.", re.IGNORECASE)
_BROKER_LABELS = ("broker_id", "brokerid", "broker", "kafka_broker_id")


@dataclass(frozen=True)
class Mapping:
    """One exporter spelling of a canonical metric.

    ``sample``: the sample name, lowercased. ``where``: required label values (label names
    and values compared case-insensitively). ``keep``: labels kept in the row (summed over the
    others). ``priority``: lower wins when several spellings of one metric are present.
    """

    sample: str
    canonical: str
    where: tuple[tuple[str, str], ...] = ()
    keep: tuple[str, ...] = ()
    priority: int = 0
    scale: float = 1.0
    aggregate: str = "sum"  # sum | max (over the dropped labels)
    exporter: str = ""


def _m(sample, canonical, *, where=(), keep=(), priority=0, scale=1.0, aggregate="sum", exporter=""):
    return Mapping(sample.lower(), canonical, tuple((k.lower(), v.lower()) for k, v in dict(where).items()),
                   keep, priority, scale, aggregate, exporter)


# The shipped mapping tables. Names confirmed against public jmx_exporter configs
# (prometheus/jmx_exporter example_configs/kafka-2_0_0.yml, Strimzi's kafka-metrics config)
# and MSK open monitoring dashboards.
MSK_OPEN_MONITORING = (
    _m("kafka_network_SocketServer_Value", "network_processor_avg_idle_percent",
       where={"name": "NetworkProcessorAvgIdlePercent"}, exporter="msk"),
    _m("kafka_server_KafkaRequestHandlerPool_OneMinuteRate", "request_handler_avg_idle_percent",
       where={"name": "RequestHandlerAvgIdlePercent"}, exporter="msk"),
    _m("kafka_server_KafkaRequestHandlerPool_FiveMinuteRate", "request_handler_avg_idle_percent",
       where={"name": "RequestHandlerAvgIdlePercent"}, priority=1, exporter="msk"),
    _m("kafka_server_KafkaRequestHandlerPool_MeanRate", "request_handler_avg_idle_percent",
       where={"name": "RequestHandlerAvgIdlePercent"}, priority=2, exporter="msk"),
    _m("kafka_network_RequestChannel_Value", "request_queue_size", where={"name": "RequestQueueSize"},
       exporter="msk"),
    _m("kafka_log_LogManager_Value", "offline_log_directory_count", where={"name": "OfflineLogDirectoryCount"},
       exporter="msk"),
    _m("kafka_server_socket_server_metrics_connection_count", "connection_count", keep=("listener",),
       exporter="msk"),
    _m("java_lang_OperatingSystem_AvailableProcessors", "cpu_count", priority=1, aggregate="max", exporter="msk"),
    _m("java_lang_OperatingSystem_SystemCpuLoad", "cpu_user_system_percent", scale=100.0, priority=1,
       aggregate="max", exporter="msk"),
    _m("java_lang_OperatingSystem_CpuLoad", "cpu_user_system_percent", scale=100.0, aggregate="max",
       exporter="msk"),
)

JMX_EXPORTER_EXAMPLE = (
    _m("kafka_network_socketserver_networkprocessoravgidlepercent", "network_processor_avg_idle_percent",
       exporter="jmx_exporter"),
    _m("kafka_network_socketserver_networkprocessoravgidle_percent", "network_processor_avg_idle_percent",
       exporter="jmx_exporter"),
    _m("kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_oneminuterate",
       "request_handler_avg_idle_percent", exporter="jmx_exporter"),
    _m("kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_one_minute_rate",
       "request_handler_avg_idle_percent", exporter="jmx_exporter"),
    # Configs that export the meter's OneMinuteRate as a plain gauge.
    _m("kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent", "request_handler_avg_idle_percent",
       priority=1, exporter="jmx_exporter"),
    _m("kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent", "request_handler_avg_idle_percent",
       priority=1, exporter="jmx_exporter"),
    _m("kafka_network_requestchannel_requestqueuesize", "request_queue_size", exporter="jmx_exporter"),
    _m("kafka_log_logmanager_offlinelogdirectorycount", "offline_log_directory_count", exporter="jmx_exporter"),
    _m("kafka_server_socketservermetrics_connection_count", "connection_count", keep=("listener",),
       exporter="jmx_exporter"),
)

# Cumulative spellings recognised on purpose and not mapped (see the module docstring).
NOT_MAPPABLE = frozenset({
    "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_count",
    "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_total",
    "kafka_server_kafkarequesthandlerpool_count",
})

MAPPINGS: tuple[Mapping, ...] = MSK_OPEN_MONITORING + JMX_EXPORTER_EXAMPLE
_BY_SAMPLE: dict[str, list[Mapping]] = defaultdict(list)
for _mp in MAPPINGS:
    _BY_SAMPLE[_mp.sample].append(_mp)

_CLIENT_SOFTWARE = frozenset({
    "kafka_server_socket_server_metrics_connections",  # jmx_exporter default naming (MSK)
    "kafka_server_socket_server_metrics_connections_software",  # Strimzi's example config
    "kafka_server_socketservermetrics_connections",
})


@dataclass
class MetricsResult(CollectResult):
    # broker_id -> {mountpoint: {"device", "fstype", "size_bytes", "avail_bytes"}}
    filesystems: dict[int, dict[str, dict]] = field(default_factory=dict)


def split_hint(source: str) -> tuple[int | None, str]:
    m = _HINT.match(source.strip())
    return (int(m.group(1)), m.group(2)) if m else (None, source.strip())


def _msk_broker(target: str) -> int | None:
    if not target.lower().startswith(("http://", "https://")):
        return None
    host = urlparse(target).hostname or ""
    m = _MSK_HOST.match(host)
    return int(m.group(1)) if m and ".kafka." in host else None


def fetch(target: str, timeout: float = DEFAULT_TIMEOUT) -> str:
    """Read a file or GET an http(s) URL (with a timeout); raise OSError/ValueError on failure."""
    if target.lower().startswith(("http://", "https://")):
        req = urllib.request.Request(target, headers={"Accept": "text/plain;version=0.0.4, */*;q=0.1",
                                                      "User-Agent": "kafka-auditor"})
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 (scheme checked above)
            data = resp.read(MAX_BYTES + 1)
    elif "://" in target:
        raise ValueError(f"unsupported URL scheme (expected a file, http:// or https://): {target}")
    else:
        path = Path(target)
        if path.is_dir():
            raise ValueError("is a directory, expected a Prometheus text file")
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"more than {MAX_BYTES} bytes")
    if b"\x00" in data:
        raise ValueError("binary data, not Prometheus text")
    return data.decode("utf-8", errors="replace")


def _label(labels: dict[str, str], name: str) -> str | None:
    for k, v in labels.items():
        if k.lower() == name:
            return v
    return None


def _sample_broker(labels: dict[str, str]) -> int | None:
    for name in _BROKER_LABELS:
        v = _label(labels, name)
        if v is not None and v.strip().isdigit():
            return int(v)
    return None


def _iter_samples(text: str):
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(text):
        yield from family.samples


def parse_metrics(text: str, target: str, broker_hint: int | None = None) -> MetricsResult:
    """Map one scrape's samples to ``metrics`` and ``client_software`` rows; never raises."""
    result = MetricsResult()
    default_broker = broker_hint if broker_hint is not None else _msk_broker(target)
    # (broker, canonical, labels json) -> (priority, mapping, value)
    best: dict[tuple[int, str, str], tuple[int, Mapping, float]] = {}
    sums: dict[tuple[int, str, str, Mapping], float] = defaultdict(float)
    clients: dict[tuple[int, str, str, str], float] = defaultdict(float)
    cpus: dict[int, set[str]] = defaultdict(set)
    no_broker = 0
    try:
        for s in _iter_samples(text):
            value = float(s.value)
            if not math.isfinite(value):
                continue
            name = s.name.lower()
            labels = dict(s.labels)
            broker = _sample_broker(labels)
            if broker is None:
                broker = default_broker
            if name in _BY_SAMPLE or name in _CLIENT_SOFTWARE or name.startswith("node_"):
                if broker is None:
                    no_broker += 1
                    continue
            else:
                continue
            if name == "node_cpu_seconds_total":
                if (_label(labels, "mode") or "").lower() == "idle":
                    cpus[broker].add(_label(labels, "cpu") or "")
                continue
            if name in ("node_filesystem_size_bytes", "node_filesystem_avail_bytes"):
                mount = _label(labels, "mountpoint")
                if mount:
                    fs = result.filesystems.setdefault(broker, {}).setdefault(
                        mount, {"device": _label(labels, "device"), "fstype": _label(labels, "fstype")})
                    fs["size_bytes" if name.endswith("size_bytes") else "avail_bytes"] = value
                continue
            if name in _CLIENT_SOFTWARE:
                sw = _label(labels, "clientsoftwarename")
                if sw is None:
                    continue
                clients[(broker, _label(labels, "listener") or "", sw,
                         _label(labels, "clientsoftwareversion") or "")] += value
                continue
            for mp in _BY_SAMPLE.get(name, ()):
                if any((_label(labels, k) or "").lower() != v for k, v in mp.where):
                    continue
                kept = {k: _label(labels, k) for k in mp.keep if _label(labels, k) is not None}
                key_labels = json.dumps(kept, sort_keys=True, separators=(",", ":"))
                agg_key = (broker, mp.canonical, key_labels, mp)
                v = value * mp.scale
                if mp.aggregate == "max":
                    sums[agg_key] = max(sums.get(agg_key, v), v)
                else:
                    sums[agg_key] += v
    except Exception as e:  # the parser raises ValueError, and others on odd input
        result.error(SOURCE, target, f"{target}: not valid Prometheus text: {one_line(e, 200)}")
    for (broker, canonical, labels_json, mp), v in sums.items():
        key = (broker, canonical, labels_json)
        if key not in best or mp.priority < best[key][0]:
            best[key] = (mp.priority, mp, v)
    for broker, ids in cpus.items():
        key = (broker, "cpu_count", "{}")
        best[key] = (-1, None, float(len(ids)))  # node exporter wins over the JVM's view
    for (broker, canonical, labels_json), (_p, _mp, v) in sorted(best.items(), key=lambda kv: kv[0]):
        if canonical == "cpu_user_system_percent" and v < 0:
            continue  # the JVM reports a negative load when it cannot read it
        result.rows("metrics").append({"broker_id": broker, "name": canonical, "labels": labels_json,
                                       "value": float(v)})
    for (broker, listener, sw, version), conns in sorted(clients.items()):
        result.rows("client_software").append({"broker_id": broker, "listener": listener or None,
                                               "client_name": sw, "client_version": version or None,
                                               "connections": int(round(conns))})
    if no_broker:
        result.error(SOURCE, target, f"{target}: {no_broker} samples name no broker: prefix the source with "
                                     f"broker_id=N: or add a broker_id label")
    return result


def collect_metrics(sources, *, timeout: float = DEFAULT_TIMEOUT,
                    fetcher: Callable[[str, float], str] = fetch) -> MetricsResult:
    """Collect every metrics source (``[broker_id=N:]FILE_OR_URL``); failures become source errors."""
    result = MetricsResult()
    for source in ([sources] if isinstance(sources, str) else sources):
        hint, target = split_hint(source)
        try:
            text = fetcher(target, timeout)
        except urllib.error.HTTPError as e:
            err = f"{target}: HTTP {e.code} {e.reason}"
        except urllib.error.URLError as e:
            err = f"{target}: cannot fetch ({one_line(e.reason, 200)})"
        except TimeoutError:
            err = f"{target}: timed out after {timeout:g} s"
        except OSError as e:
            err = f"{target}: unreadable ({e.strerror or one_line(e, 200)})"
        except ValueError as e:
            err = f"{target}: {one_line(e, 200)}"
        else:
            err = None
        if err is not None:
            result.error(SOURCE, target, err)
            result.sources.append({"source": SOURCE, "target": target, "status": "error"})
            continue
        one = parse_metrics(text, target, hint)
        result.merge(one)
        for b, mounts in one.filesystems.items():
            result.filesystems.setdefault(b, {}).update(mounts)
        result.sources.append({"source": SOURCE, "target": target, "status": "error" if one.errors else "ok"})
    _dedupe(result)
    return result


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
