"""MSK broker metrics from CloudWatch (``cloudwatch:GetMetricData``, read-only; namespace ``AWS/Kafka``).

For a runner with no network path to the brokers' open-monitoring exporters. Each metric the
rules (and ``kafka-audit wait``) read is mapped onto its canonical name in the ``metrics`` table
(auditor/snapshot/schema.py METRICS), its labels recording where it came from:
``{"source":"cloudwatch","metric":"CpuUser+CpuSystem","stat":"Average"}``. The value is the
newest datapoint of the last WINDOW minutes at a one-minute period (MSK pushes its metrics
"at 1 minute intervals").

The monitoring level each metric needs, from AWS's metrics tables for Standard brokers
(https://docs.aws.amazon.com/msk/latest/developerguide/metrics-details.html; the archived
copy awsdocs/amazon-msk-developer-guide doc_source/metrics-details.md, commit 7054277b):
``DEFAULT`` (free): CpuUser, CpuSystem, ConnectionCount, KafkaDataLogsDiskUsed (Cluster Name,
Broker ID), UnderReplicatedPartitions, UnderMinIsrPartitionCount (Cluster Name, Broker ID),
OfflinePartitionsCount, ActiveControllerCount (Cluster Name); ``PER_BROKER``:
NetworkProcessorAvgIdlePercent, RequestHandlerAvgIdlePercent. A metric above the cluster's
``EnhancedMonitoring`` level is not requested: it is listed in the manifest
(``cluster.msk.cloudwatch.not_collected``, with the level it needs) and the rules that read it
are reported "not evaluated" naming that level (auditor/coverage.py), never as healthy. Kafka's
``RequestQueueSize`` is in none of AWS's tables: from CloudWatch it is never available (open
monitoring has it). Express brokers: AWS's Express table lists CpuUser, CpuSystem,
ConnectionCount and ActiveControllerCount at DEFAULT; the others are requested and, when no
datapoint comes back, listed as ``no_data`` (not claimed either way).

Open monitoring stays the richer source: when the exporters were scraped, a CloudWatch row is
dropped for every broker and metric the scrape gave (:func:`settle`).

The idle ratios: Kafka's gauges are fractions (0-1) and the rules read them so; AWS describes
the CloudWatch metrics as "the average percentage of the time ... idle": a value above 1 is read
as a percentage and divided by 100.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass

from auditor.collectors._common import CollectResult

NAMESPACE = "AWS/Kafka"
LEVELS = ("DEFAULT", "PER_BROKER", "PER_TOPIC_PER_BROKER", "PER_TOPIC_PER_PARTITION")
WINDOW_MINUTES = 15
PERIOD = 60
MAX_QUERIES = 500  # GetMetricData's limit of metric data queries per call
MAX_PAGES = 100
LEVELS_PAGE = "https://docs.aws.amazon.com/msk/latest/developerguide/metrics-details.html"


@dataclass(frozen=True)
class Spec:
    name: str  # canonical name in the metrics table
    cloudwatch: tuple[str, ...]  # summed when more than one
    stat: str
    level: str
    per_broker: bool = True
    ratio: bool = False  # an idle fraction: a percentage is divided by 100


SPECS: tuple[Spec, ...] = (
    Spec("cpu_user_system_percent", ("CpuUser", "CpuSystem"), "Average", "DEFAULT"),
    Spec(
        "network_processor_avg_idle_percent",
        ("NetworkProcessorAvgIdlePercent",),
        "Average",
        "PER_BROKER",
        ratio=True,
    ),
    Spec(
        "request_handler_avg_idle_percent",
        ("RequestHandlerAvgIdlePercent",),
        "Average",
        "PER_BROKER",
        ratio=True,
    ),
    Spec("connection_count", ("ConnectionCount",), "Average", "DEFAULT"),
    Spec("data_logs_disk_used_percent", ("KafkaDataLogsDiskUsed",), "Average", "DEFAULT"),
    Spec("under_replicated_partitions", ("UnderReplicatedPartitions",), "Maximum", "DEFAULT"),
    Spec("under_min_isr_partition_count", ("UnderMinIsrPartitionCount",), "Maximum", "DEFAULT"),
    Spec("offline_partitions_count", ("OfflinePartitionsCount",), "Maximum", "DEFAULT", per_broker=False),
    Spec("active_controller_count", ("ActiveControllerCount",), "Sum", "DEFAULT", per_broker=False),
)
# Canonical metrics the rules read that CloudWatch never has (AWS's tables list none of them).
NEVER_IN_CLOUDWATCH = {"request_queue_size": "RequestQueueSize"}


def level_index(level: str | None) -> int:
    """DEFAULT 0 ... PER_TOPIC_PER_PARTITION 3; an unknown or absent level counts as DEFAULT."""
    return LEVELS.index(level) if level in LEVELS else 0


def collect_cloudwatch(
    result: CollectResult,
    cloudwatch,
    *,
    cluster_name: str,
    broker_ids: list[int],
    level: str | None,
    target: str,
    now: dt.datetime | None = None,
) -> dict:
    """``metrics`` rows into ``result``; returns the manifest block ``cluster.msk.cloudwatch``.
    A failed call is one source error naming cloudwatch:GetMetricData."""
    from auditor.collectors.aws_errors import failure

    have = level_index(level)
    block: dict = {
        "enhanced_monitoring": level or "DEFAULT",
        "levels_source": LEVELS_PAGE,
        "not_collected": [],
        "no_data": [],
    }
    queries: list[dict] = []
    wanted: list[tuple[Spec, int | None, str, str]] = []  # (spec, broker, cloudwatch name, query id)
    for spec in SPECS:
        if level_index(spec.level) > have:
            block["not_collected"].append(
                {"metric": spec.name, "cloudwatch": "+".join(spec.cloudwatch), "needs": spec.level}
            )
            continue
        for broker in broker_ids if spec.per_broker else [None]:
            for cw in spec.cloudwatch:
                qid = f"q{len(queries)}"
                dims = [{"Name": "Cluster Name", "Value": cluster_name}]
                if broker is not None:
                    dims.append({"Name": "Broker ID", "Value": str(broker)})
                queries.append(
                    {
                        "Id": qid,
                        "MetricStat": {
                            "Metric": {"Namespace": NAMESPACE, "MetricName": cw, "Dimensions": dims},
                            "Period": PERIOD,
                            "Stat": spec.stat,
                        },
                        "ReturnData": True,
                    }
                )
                wanted.append((spec, broker, cw, qid))
    for name, cw in NEVER_IN_CLOUDWATCH.items():
        block["not_collected"].append({"metric": name, "cloudwatch": cw, "needs": None})
    end = (now or dt.datetime.now(dt.UTC)).replace(second=0, microsecond=0)
    start = end - dt.timedelta(minutes=WINDOW_MINUTES)
    newest: dict[str, float] = {}
    calls = 0
    try:
        for i in range(0, len(queries), MAX_QUERIES):
            token = None
            for _ in range(MAX_PAGES):
                page = cloudwatch.get_metric_data(
                    MetricDataQueries=queries[i : i + MAX_QUERIES],
                    StartTime=start,
                    EndTime=end,
                    ScanBy="TimestampDescending",
                    **({"NextToken": token} if token else {}),
                )
                calls += 1
                for r in page.get("MetricDataResults") or []:
                    pairs = sorted(zip(r.get("Timestamps") or [], r.get("Values") or [], strict=False))
                    if pairs and r["Id"] not in newest:
                        newest[r["Id"]] = float(pairs[-1][1])
                token = page.get("NextToken")
                if not token:
                    break
    except Exception as e:  # noqa: BLE001 (a source error, never a traceback)
        result.errors.append(failure(e, "cloudwatch:GetMetricData", target))
        block["calls"] = calls
        return block
    block["calls"] = calls
    values: dict[tuple[str, int | None], list[float | None]] = {}
    for spec, broker, _cw, qid in wanted:
        values.setdefault((spec.name, broker), []).append(newest.get(qid))
    by_name = {s.name: s for s in SPECS}
    missing: dict[str, list] = {}
    for (name, broker), parts in values.items():
        spec = by_name[name]
        if any(v is None for v in parts):
            missing.setdefault(name, []).append(broker)
            continue
        value = sum(parts)
        if spec.ratio and value > 1:
            value /= 100.0
        labels = {"metric": "+".join(spec.cloudwatch), "source": "cloudwatch", "stat": spec.stat}
        result.rows("metrics").append(
            {
                "broker_id": broker,
                "name": name,
                "labels": json.dumps(labels, sort_keys=True, separators=(",", ":")),
                "value": value,
            }
        )
    for name, brokers in missing.items():
        spec = by_name[name]
        block["no_data"].append(
            {
                "metric": name,
                "cloudwatch": "+".join(spec.cloudwatch),
                "brokers": sorted(b for b in brokers if b is not None) if spec.per_broker else None,
            }
        )
    return block


def is_cloudwatch_row(row: dict) -> bool:
    return '"source":"cloudwatch"' in (row.get("labels") or "")


def settle(block: dict | None, tables: dict[str, list[dict]]) -> None:
    """After every source is merged: drop the CloudWatch rows of (broker, metric) pairs that a
    scrape gave (open monitoring is the richer source), and keep in ``not_collected`` only
    the metrics no other source gave either."""
    rows = tables.get("metrics")
    if rows:
        scraped = {(r["broker_id"], r["name"]) for r in rows if not is_cloudwatch_row(r)}
        kept = [r for r in rows if not (is_cloudwatch_row(r) and (r["broker_id"], r["name"]) in scraped)]
        if len(kept) != len(rows):
            tables["metrics"] = kept
    if block:
        present = {r["name"] for r in tables.get("metrics", [])}
        for key in ("not_collected", "no_data"):
            block[key] = [m for m in block.get(key, []) if m["metric"] not in present]
