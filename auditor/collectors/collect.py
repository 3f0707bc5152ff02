"""Run the read-only collectors and assemble one snapshot (manifest + tables).

``collect(...) -> (Manifest, tables)``; ``write_snapshot(out, manifest, tables)`` writes it.
Each source that fails adds an entry to ``manifest.errors`` and the rest is still collected:
the snapshot is then incomplete (the CLI exits 3).

Merging, when several sources give the same facts (``extra`` results and the Admin API first, then ZooKeeper,
then server.properties, then metrics):

* ``brokers``: the registered brokers (ZooKeeper, or an ``extra`` source) are the rows; the
  server.properties of a broker fills its log_dirs and rack, a ``cpu_count`` metric its
  cores, the AppInfo version in its metrics its version. Without any registry source the
  brokers are those of the server.properties files.
* the manifest's ``cluster.kafka_version``: the typed one, else the version the brokers report
  (the lowest during a rolling upgrade), with ``cluster.kafka_version_source`` saying where it
  came from, or that it is unknown (auditor/collectors/versions.py).
* ``log_dirs``: a broker's log dirs (from its server.properties) with the size of the
  filesystem that holds each (node exporter, longest mountpoint prefix).
* ``controller`` on KRaft: the DescribeQuorum leader (auditor/collectors/kraft.py); without it,
  the leader the raft metrics of the scraped nodes name (:func:`raft_controller`).
* every other table: the first row per key wins (topic, partition, config key and source,
  metric name and labels, ...).

Metrics are collected last: the registered brokers' hosts (ZooKeeper, Admin API, ``extra``) and
the hosts of each server.properties' advertised.listeners are handed to the metrics collector
(:func:`broker_hosts`), so that a scrape without a ``broker_id=N:`` prefix or label is
attributed to the broker whose host its URL, or its samples' ``instance`` label, names.

Deadlines: every source runs in a daemon thread joined with an overall deadline
(:func:`source_deadline`): ZooKeeper's own bound (connect + its read deadline + stopping
the client, see auditor.collectors.zookeeper) plus ``timeout``; the metrics source
``max(MIN_SOURCE_DEADLINE, SOURCE_DEADLINE_FACTOR * timeout, 2 * timeout * URLs)``; the Admin
API and the server.properties files ``max(MIN_SOURCE_DEADLINE, SOURCE_DEADLINE_FACTOR *
timeout)`` (120 s, 40x: 400 s at the default 10 s). A source still running then is abandoned
(its thread keeps nothing it reads, and its progress calls are dropped) and recorded as a
source error: the snapshot is incomplete (exit 3), the other sources are still collected.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from auditor.collectors import admin, files, kraft, metrics, zookeeper
from auditor.collectors._common import Collector, CollectResult, Context, one_line
from auditor.collectors.admin import Progress
from auditor.collectors.metrics import MetricsResult
from auditor.collectors.urls import redact_url
from auditor.collectors.versions import APP_INFO, DECLARED, detect_kafka_version
from auditor.collectors.zookeeper import source_bound as zookeeper_bound
from auditor.errors import AuditorError
from auditor.snapshot.io import Manifest, now_iso
from auditor.sources import Sources

# The sources, in the order they run: a new source is one module with a COLLECTOR and one entry
# here. The registry sources first (their brokers name the hosts the metrics are attributed to),
# then the broker config files, then the metrics.
COLLECTORS: tuple[Collector, ...] = (
    admin.COLLECTOR,
    kraft.COLLECTOR,
    zookeeper.COLLECTOR,
    files.COLLECTOR,
    metrics.COLLECTOR,
)

SOURCE_DEADLINE_FACTOR = 40  # a source's overall deadline: this many times --timeout ...
MIN_SOURCE_DEADLINE = 120.0  # ... and never less (seconds); see source_deadline()

CLUSTER_OPTIONAL = (
    "environment",
    "tier",
    "platform",
    "kafka_version",
    "metadata_mode",
    "msk_instance_type",
    "az_count",
)

_KEYS = {
    "topics": ("topic",),
    "partitions": ("topic", "partition"),
    "zk_state": ("topic", "partition"),
    "controller": ("mode",),
    "configs": ("entity_type", "entity_name", "key", "source"),
    "metrics": ("broker_id", "name", "labels"),
    "client_software": ("broker_id", "listener", "client_name", "client_version"),
    "replica_lag": ("broker_id", "topic", "partition"),
    "log_end_offsets": ("broker_id", "topic", "partition", "scraped_at_ms"),  # each scrape's own rows
    "consumer_groups": ("group_id",),
    "log_dirs": ("broker_id", "path"),
    "log_dir_events": ("broker_id", "event"),
    "quorum": ("node_id", "role"),
    "features": ("feature",),
    "kraft_nodes": ("node_id",),
}


def collect(
    sources: Sources,
    *,
    client=None,
    cluster: dict | None = None,
    extra: Iterable[CollectResult] = (),
    progress: Progress | None = None,
) -> tuple[Manifest, dict[str, list[dict]]]:
    """Collect every source ``sources`` names, each collector of COLLECTORS in turn. ``client``:
    the Admin API's client settings (client_config.py; its bootstrap.servers names the cluster;
    default: loaded from the sources' client config and bootstrap servers);
    ``cluster``: manifest fields (environment, tier, platform, kafka_version, metadata_mode,
    msk_instance_type, az_count); ``extra``: results of other collectors merged first.
    ``progress(source, step, done, total)``: called as sources advance (the CLI's display;
    never needed)."""
    if client is None and sources.bootstrap_servers:
        from auditor.collectors.client_config import load_client_config

        client = load_client_config(sources.command_config, sources.bootstrap_servers)
    ctx = Context(sources, client, results=[("extra", r) for r in extra])
    _run_collectors(ctx, progress)
    tables, brokers = _merged_tables(ctx)
    return _manifest(ctx, tables, brokers, cluster), tables


def _run_collectors(ctx: Context, progress: Progress | None) -> None:
    """Each wanted collector in turn, in a thread of its own joined with its deadline: its result,
    or a source error once the deadline has passed (abandoned: its later progress calls are
    dropped, and nothing it reads is kept)."""
    abandoned: set[str] = set()
    if progress is not None:

        def report(source, step, done, total):
            if source not in abandoned:
                progress(source, step, done, total)

        ctx.progress = report

    def bounded(collector: Collector) -> CollectResult:
        seconds = source_deadline(collector.name, ctx.sources.timeout, urls=collector.requests(ctx))
        target = collector.target(ctx) or ""
        box: dict = {}

        def work():
            try:
                box["result"] = collector.collect(ctx)
            except BaseException as e:  # noqa: BLE001 (re-raised in the caller's thread)
                box["error"] = e

        if progress is not None:
            progress(collector.name, "start", 0, 1)
        try:
            t = threading.Thread(target=work, name=f"collect-{collector.name}", daemon=True)
            t.start()
            t.join(seconds)
        finally:
            if progress is not None:
                progress(collector.name, "done", 1, 1)
        if t.is_alive():
            abandoned.add(collector.name)
            r = MetricsResult() if collector.name == "metrics" else CollectResult()
            r.error(
                collector.name,
                target or None,
                f"{target + ': ' if target else ''}no result within {seconds:g} s "
                f"(the source's overall deadline); abandoned, nothing of it kept",
            )
            r.sources.append({"source": collector.name, "target": target, "status": "error"})
            return r
        if "error" in box:
            error = box["error"]
            if isinstance(error, AuditorError) or not isinstance(error, Exception):
                raise error  # a usage error (exit 2), an interrupt
            # Whatever else a source's answer made its collector raise: that source failed (exit 3,
            # AUD001 naming it), not the command (an internal error, exit 2).
            r = MetricsResult() if collector.name == "metrics" else CollectResult()
            what = f"{type(error).__name__}: {one_line(error, 200)}"
            r.error(
                collector.name,
                target or None,
                redact_url(f"{target + ': ' if target else ''}failed ({what})"),
            )
            r.sources.append({"source": collector.name, "target": target, "status": "error"})
            return r
        return box["result"]

    for collector in COLLECTORS:
        if collector.wanted(ctx):
            ctx.results.append((collector.name, bounded(collector)))


def _registry(ctx: Context) -> list[CollectResult]:
    """The results that register brokers (ZooKeeper, the Admin API, an ``extra`` source)."""
    return [r for name, r in ctx.results if name not in ("files", "metrics") and r.tables.get("brokers")]


def _merged_tables(ctx: Context) -> tuple[dict[str, list[dict]], list[dict]]:
    """Every table, the first row per key (see the module doc), and the merged brokers."""
    files, mets = ctx.result("files"), ctx.result("metrics")
    registry = _registry(ctx)
    tables: dict[str, list[dict]] = {}
    for _, r in ctx.results:
        for name, rows in r.tables.items():
            if name != "brokers":
                tables.setdefault(name, []).extend(rows)
    for name, key in _KEYS.items():
        if name in tables:
            tables[name] = _first_per_key(tables[name], key, fill=name == "log_dirs")

    brokers = _merge_brokers(registry, files, mets, zk_given=bool(ctx.sources.zookeeper) or bool(registry))
    if brokers:
        tables["brokers"] = brokers
    if mets is not None and files is not None:
        dirs = _log_dirs(files, mets)
        if dirs:
            tables["log_dirs"] = _first_per_key(
                tables.get("log_dirs", []) + dirs, _KEYS["log_dirs"], fill=True
            )
    if mets is not None and not ctx.sources.zookeeper and not tables.get("controller"):
        raft = raft_controller(mets.tables.get("metrics", []))  # no DescribeQuorum answer: the raft metrics
        if raft is not None:
            tables.setdefault("controller", []).append(raft)
    return {k: v for k, v in tables.items() if v}, brokers


def _manifest(
    ctx: Context, tables: dict[str, list[dict]], brokers: list[dict], cluster: dict | None
) -> Manifest:
    """The manifest: the cluster's id and name, its fields (the metadata mode and the Kafka
    version when not typed: auditor/collectors/versions.py), every source and source error."""
    results = [r for _, r in ctx.results]
    meta: dict = {}
    for r in results:
        for k, v in r.meta.items():
            meta.setdefault(k, v)
    fields = {k: v for k, v in (cluster or {}).items() if k in CLUSTER_OPTIONAL and v is not None}
    if "metadata_mode" not in fields:
        if ctx.sources.zookeeper:
            fields["metadata_mode"] = "zookeeper"
        elif (
            any(c["key"] == "process.roles" for c in tables.get("configs", []))
            or tables.get("kraft_nodes")
            or any(str(c.get("mode")).lower() == "kraft" for c in tables.get("controller", []))
        ):
            fields["metadata_mode"] = "kraft"
    reports, origins = _version_reports(brokers, _registry(ctx), ctx.result("metrics"))
    version, version_source = detect_kafka_version(
        reports,
        fields.get("kafka_version"),
        origin=origins,
        reported=(meta["kafka_version"], str(meta.get("kafka_version_source") or "reported by a collector"))
        if isinstance(meta.get("kafka_version"), str)
        else None,
    )
    if version is not None:
        fields["kafka_version"] = version
    if version_source != DECLARED:  # (a typed version needs no source)
        fields["kafka_version_source"] = version_source
    name = ctx.sources.cluster_name
    cluster_id = meta.get("cluster_id") or name or "unknown-cluster"
    return Manifest(
        cluster={"id": cluster_id, "name": name or cluster_id, **fields},
        collected_at=now_iso(),
        sources=[s for r in results for s in r.sources],
        errors=[e for r in results for e in r.errors],
    )


def raft_controller(metric_rows: list[dict]) -> dict | None:
    """A KRaft ``controller`` row from raft metrics (raft_current_leader, raft_current_epoch of
    each scraped node): the leader most nodes at the highest epoch name (-1 when none of them
    knows one); no voters (metrics do not list them). None without raft metrics."""
    import math

    nodes: dict[int, dict[str, int]] = {}
    for m in metric_rows:
        v = m.get("value")
        if (
            m.get("name") in ("raft_current_leader", "raft_current_epoch")
            and isinstance(v, float | int)
            and math.isfinite(v)
            and -1 <= v < 2**31
        ):
            nodes.setdefault(m["broker_id"], {})[m["name"]] = int(v)
    if not nodes:
        return None
    epoch = max(n.get("raft_current_epoch", -1) for n in nodes.values())
    seen = [
        n["raft_current_leader"]
        for n in nodes.values()
        if n.get("raft_current_epoch", -1) == epoch and n.get("raft_current_leader", -1) >= 0
    ]
    leader = max(sorted(set(seen)), key=seen.count) if seen else -1
    return {
        "mode": "kraft",
        "controller_id": leader,
        "controller_epoch": epoch if epoch >= 0 else None,
        "voters": None,
        "reassignment_pending": None,
    }


def source_deadline(source: str, timeout: float, *, urls: int = 0) -> float:
    """Seconds ``collect()`` waits for one source before abandoning it (see the module doc)."""
    if source == "zookeeper":
        return zookeeper_bound(timeout) + timeout  # later than the collector's own, more precise, deadline
    base = max(MIN_SOURCE_DEADLINE, SOURCE_DEADLINE_FACTOR * timeout)
    if source == "metrics":
        return max(base, 2 * timeout * urls)
    return base


def _first_per_key(rows: list[dict], key: tuple[str, ...], *, fill: bool = False) -> list[dict]:
    """The first row per key; ``fill``: its null fields taken from the later rows of that key
    (a log dir from DescribeLogDirs, its device from the node exporter)."""
    seen: dict[tuple, dict] = {}
    out = []
    for row in rows:
        k = tuple(row.get(c) for c in key)
        if k not in seen:
            seen[k] = row
            out.append(row)
        elif fill:
            first = seen[k]
            for c, v in row.items():
                if first.get(c) is None and v is not None:
                    first[c] = v
    return out


def _version_reports(
    brokers: list[dict], registry: list[CollectResult], mets: MetricsResult | None
) -> tuple[list[dict], dict[int, str]]:
    """What each broker reports as its version (the ``brokers`` rows, and the metrics of brokers
    that have no row: a metrics-only collect) and where it came from, for detect_kafka_version."""
    from_registry = {
        row["broker_id"] for r in registry for row in r.tables.get("brokers", []) if row.get("version")
    }
    reports = [{"broker_id": row["broker_id"], "version": row.get("version")} for row in brokers]
    listed = {row["broker_id"] for row in brokers}
    reports += [
        {"broker_id": b, "version": v}
        for b, v in sorted((mets.versions if mets else {}).items())
        if b not in listed
    ]
    origins = {
        r["broker_id"]: "broker registrations" if r["broker_id"] in from_registry else APP_INFO
        for r in reports
        if r["version"]
    }
    return reports, origins


def _merge_brokers(
    registry: list[CollectResult], files: CollectResult | None, mets: MetricsResult | None, *, zk_given: bool
) -> list[dict]:
    """The ``brokers`` rows (see the module docstring); ``version``: the registry row's, else the
    version the broker's metrics report (AppInfo: MetricsResult.versions)."""
    merged: dict[int, dict] = {}
    for r in registry:
        for row in r.tables.get("brokers", []):
            cur = merged.setdefault(row["broker_id"], dict(row))
            for k, v in row.items():
                if cur.get(k) is None and v is not None:
                    cur[k] = v
    from_files = {row["broker_id"]: row for row in (files.tables.get("brokers", []) if files else [])}
    if not zk_given:
        merged = {bid: dict(row) for bid, row in from_files.items()}
    for bid, row in merged.items():
        f = from_files.get(bid)
        if f:
            if row.get("log_dirs") is None:
                row["log_dirs"] = f["log_dirs"]
            if row.get("rack") is None:
                row["rack"] = f["rack"]
    if mets is not None:
        cpus = {
            m["broker_id"]: m["value"] for m in mets.tables.get("metrics", []) if m["name"] == "cpu_count"
        }
        for bid, row in merged.items():
            if row.get("cores") is None and bid in cpus:
                row["cores"] = int(cpus[bid])
            if row.get("version") is None and bid in mets.versions:  # the broker's AppInfo version
                row["version"] = mets.versions[bid]
    return [merged[b] for b in sorted(merged)]


def _log_dirs(files: CollectResult, mets: MetricsResult) -> list[dict]:
    import math

    rows = []
    for b in files.tables.get("brokers", []):
        mounts = mets.filesystems.get(b["broker_id"])
        if not mounts:
            continue
        for path in b["log_dirs"] or []:
            mount = _mount_of(path, mounts)
            if mount is None:
                continue
            fs = mounts[mount]
            size, avail = fs.get("size_bytes"), fs.get("avail_bytes")
            total = int(size) if size is not None and math.isfinite(size) else None
            used = (
                int(size - avail)
                if total is not None and avail is not None and math.isfinite(avail)
                else None
            )
            for what, value in (("total_bytes", total), ("used_bytes", used)):
                if value is not None and not -(2**63) <= value < 2**63:  # bigint columns
                    # (the metrics collector refuses such samples already: never a crash here)
                    mets.error(
                        "metrics",
                        None,
                        f"filesystem {mount} of broker {b['broker_id']}: {what} "
                        f"{value:.3g} does not fit a 64-bit integer: not stored",
                    )
                    total, used = (None, None) if what == "total_bytes" else (total, None)
                    break
            rows.append(
                {
                    "broker_id": b["broker_id"],
                    "path": path,
                    "error": None,
                    "device": fs.get("device"),
                    "total_bytes": total,
                    "used_bytes": used,
                }
            )
    return rows


def _mount_of(path: str, mounts: dict[str, dict]) -> str | None:
    best = None
    p = path.rstrip("/") + "/"
    for m in mounts:
        prefix = m.rstrip("/") + "/"
        if p.startswith(prefix) and (best is None or len(prefix) > len(best.rstrip("/") + "/")):
            best = m
    return best
