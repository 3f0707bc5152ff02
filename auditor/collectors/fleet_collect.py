"""Collecting snapshots: one cluster (:func:`collect_snapshot`, what ``kafka-audit collect``
runs), and every selected cluster of an inventory concurrently (:func:`collect_fleet`, what
``kafka-audit collect --inventory`` runs).

Both collect through the same path: :func:`collect_snapshot` loads the client config, runs
auditor.collectors.collect.collect and writes the snapshot. The fleet runner adds, per
cluster, the inventory's labels (environment/tier/platform also set the manifest's cluster
fields, which FLT001/FLT003 read), the provenance of each cluster field ("declared" by the
inventory, or "discovered" from a source) and the resolved inventory entry.

Concurrency: at most ``parallel`` clusters at once, each in a daemon thread; each has a
deadline (the ``deadline:`` of its entry, else :func:`cluster_deadline`: the sum of its
sources' own deadlines plus a margin). A cluster still running at its deadline is abandoned:
its snapshot is written with a ``cluster`` source error (it never writes over it later). One
cluster's failure, whatever it is, never stops the others.

Metrics URL templates (``http://b-{broker_id}.example:11001/metrics``) are expanded over the
brokers the other sources discover (a first collect without metrics, whose result is then
handed to a second collect as ``extra`` with the expanded URLs, so nothing is read twice
but the broker config files); with no broker discovered, over the entry's ``broker_ids``;
otherwise the template is a source error.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from auditor.collectors._common import CollectResult, source_error
from auditor.errors import UsageError
from auditor.sources import Sources

DEADLINE_MARGIN = 30.0  # seconds above the sum of a cluster's source deadlines


def collect_snapshot(
    output: Path,
    fmt: str,
    sources: Sources,
    *,
    cluster=None,
    progress=None,
    extra=(),
    annotate: Callable | None = None,
    should_write: Callable[[], bool] | None = None,
    msk=None,
    msk_metrics: bool = True,
):
    """Collect ``sources`` and write the snapshot directory: (manifest, tables).
    ``annotate(manifest)`` may add to the manifest before it is written; ``should_write()``
    False: nothing is written (an abandoned cluster). UsageError for a bad client config.
    The MSK source (``sources.msk_cluster_arn``, or ``msk`` already collected) runs first and
    gives the others what it found (:func:`_apply_msk`); ``msk_metrics`` False: neither CloudWatch
    nor its open-monitoring exporters (``kafka-audit wait``)."""
    from auditor.collectors.client_config import load_client_config
    from auditor.collectors.collect import collect as run_collect
    from auditor.snapshot.io import write_snapshot

    if msk is None and sources.msk_cluster_arn:
        msk = collect_msk_source(sources, metrics_given=bool(sources.metrics) or not msk_metrics)
    # With MSK naming the listener, the client config is loaded for it (an IAM config needs its host);
    # with MSK's topic APIs instead, the brokers are not contacted unless servers were given.
    client = (
        load_client_config(sources.command_config, sources.bootstrap_servers)
        if sources.bootstrap_servers
        or (sources.command_config and not (msk and (msk.bootstrap or msk.topics_via_api)))
        else None
    )
    if msk is not None:
        extra, cluster, sources, client, annotate = _apply_msk(msk, extra, cluster, sources, client, annotate)
        if not msk_metrics:
            sources = replace(sources, metrics=())
    if client is not None and not client.config.get("bootstrap.servers"):
        raise UsageError(
            "collect: --command-config gives no bootstrap.servers: add --bootstrap-servers HOST:PORT"
        )
    manifest, tables = run_collect(
        sources, client=client, cluster=cluster or {}, extra=extra, progress=progress
    )
    if msk is not None:
        from auditor.collectors.msk_cloudwatch import settle

        settle(msk.manifest.get("cloudwatch"), tables)
    if annotate is not None:
        annotate(manifest)
    if should_write is None or should_write():
        try:
            write_snapshot(output, manifest, tables, fmt=fmt)
        except OSError as e:
            raise UsageError(f"{output}: cannot write the snapshot ({e.strerror or e})") from None
    return manifest, tables


def collect_msk_source(
    sources: Sources, *, metrics_given: bool = False, out_of_sync_only: bool = False, watch=None
):
    """The AWS MSK source (auditor/collectors/msk.py); the bootstrap listener is chosen by the
    client config's security.protocol and SASL mechanism when there is one. ``msk_topics``: auto
    (the Admin API when bootstrap servers are given or MSK's listener is reachable, else the MSK
    topic APIs), api, or admin. CloudWatch metrics when no exporter is scraped and no metrics
    source is given."""
    from auditor.collectors.msk import collect_msk, security_of

    return collect_msk(
        sources.msk_cluster_arn,
        region=sources.msk_region,
        timeout=sources.timeout,
        security=security_of(sources.command_config),
        topics="admin" if sources.msk_topics == "auto" and sources.bootstrap_servers else sources.msk_topics,
        cloudwatch=False if metrics_given else None,
        out_of_sync_only=out_of_sync_only,
        watch=watch,
    )


def _apply_msk(msk, extra, cluster, sources: Sources, client, annotate):
    """What the MSK source gives the other sources: its rows first (``extra``), the cluster
    fields it discovered (typed ones win), its name, the open-monitoring URLs when no metrics
    are given, its bootstrap listener when no client config names one (unauthenticated TLS:
    security.protocol SSL), and the manifest's ``cluster.msk`` block."""
    from auditor.collectors.client_config import load_client_config

    typed = {k: v for k, v in (cluster or {}).items() if v is not None}
    if msk.bootstrap and (client is None or not client.config.get("bootstrap.servers")):
        client = load_client_config(sources.command_config, msk.bootstrap)
        if sources.command_config is None and msk.bootstrap_protocol == "SSL":
            client.config["security.protocol"] = "SSL"
    if client is not None and not client.config.get("bootstrap.servers"):
        client = None  # no listener found (GetBootstrapBrokers failed: a source error already)

    def with_msk(manifest) -> None:
        manifest.cluster["msk"] = msk.manifest
        if annotate is not None:
            annotate(manifest)

    found = replace(
        sources,
        cluster_name=sources.cluster_name or msk.name,
        metrics=tuple(sources.metrics) or tuple(msk.metrics),
    )
    return [msk.result, *extra], {**msk.cluster_fields, **typed}, found, client, with_msk


# --- the fleet ----------------------------------------------------------------------------------


@dataclass
class ClusterOutcome:
    name: str
    directory: str
    ok: bool = False
    tables: int = 0
    rows: int = 0
    seconds: float = 0.0
    errors: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        if self.ok:
            return f"{self.name}: ok, {self.tables} tables, {self.rows} rows, {self.seconds:.1f} s"
        first = self.errors[0] if self.errors else {"source": "cluster", "message": "failed"}
        more = f" (+{len(self.errors) - 1} more in manifest.json)" if len(self.errors) > 1 else ""
        return f"{self.name}: INCOMPLETE: {first.get('source')}: {first.get('message')}{more}"


def cluster_deadline(entry) -> float:
    """Seconds the runner waits for one cluster: its entry's ``deadline``, else the sum of the
    deadlines collect() gives each of its sources (run one after the other) plus a margin."""
    if entry.deadline is not None:
        return entry.deadline
    from auditor.collectors._common import Context
    from auditor.collectors.collect import COLLECTORS, source_deadline

    ctx = Context(entry.sources)
    urls = len(entry.metrics) + len(entry.templates) * max(len(entry.broker_ids), 3)
    total = sum(
        source_deadline(c.name, entry.timeout, urls=urls)
        for c in COLLECTORS
        if c.wanted(ctx) or (c.name == "metrics" and entry.templates)
    )
    if entry.templates and entry.broker_configs:
        total += source_deadline("files", entry.timeout)  # read again by the second collect
    if entry.msk_cluster_arn:  # the MSK API calls, the Admin API (and KRaft) on its listener, its exporters
        total += source_deadline("msk", entry.timeout)
        if not entry.bootstrap_servers:
            total += source_deadline("admin", entry.timeout) + source_deadline("kraft", entry.timeout)
        if not (entry.metrics or entry.templates):
            total += source_deadline("metrics", entry.timeout, urls=2 * 6)  # (two exporters, up to 6 brokers)
    return total + DEADLINE_MARGIN


def _expand(templates: list[str], broker_ids) -> list[str]:
    return [
        f"broker_id={b}:{t.replace('{broker_id}', str(b))}"
        for t in templates
        for b in sorted(set(broker_ids))
    ]


def _annotator(entry, inventory_file: str):
    declared = entry.cluster_fields()

    def annotate(manifest) -> None:
        manifest.labels = dict(entry.labels) if entry.labels else None
        provenance = {"name": "declared"}
        for key, value in manifest.cluster.items():
            if key == "name":
                continue
            if key == "id":
                provenance[key] = "declared" if value == entry.name else "discovered"
            else:
                provenance[key] = "declared" if key in declared and declared[key] == value else "discovered"
        manifest.provenance = provenance
        manifest.inventory = entry.resolved(inventory_file)
        # What the sources wrote (targets, errors quoting a connect string or URL) names an
        # {env: NAME} value by its name only (README: secrets only by reference).
        manifest.sources = entry.hide_env_values(manifest.sources)
        manifest.errors = entry.hide_env_values(manifest.errors)
        manifest.cluster = entry.hide_env_values(manifest.cluster)

    return annotate


def collect_cluster(
    entry,
    output: Path,
    *,
    inventory_file: str,
    fmt: str = "parquet",
    should_write: Callable[[], bool] | None = None,
    watch=None,
):
    """One inventory cluster into ``output`` through :func:`collect_snapshot`: (manifest, tables).
    ``watch``: a msk_topics.Watch of its MSK topic calls."""
    from auditor.collectors.collect import collect as run_collect

    fields = entry.cluster_fields()
    sources = entry.sources
    msk = (
        collect_msk_source(sources, metrics_given=bool(entry.metrics or entry.templates), watch=watch)
        if sources.msk_cluster_arn
        else None
    )
    extra: list[CollectResult] = []
    if entry.templates and entry.discovers_brokers and not (msk and msk.broker_ids):
        # First pass: the sources that discover brokers, without metrics.
        from auditor.collectors.client_config import load_client_config

        client = (
            load_client_config(sources.command_config, sources.bootstrap_servers)
            if (sources.bootstrap_servers or sources.command_config)
            else None
        )
        first, tables = run_collect(replace(sources, metrics=()), client=client, cluster=fields)
        found = [b["broker_id"] for b in tables.get("brokers", []) if isinstance(b.get("broker_id"), int)]
        keep = lambda items: [x for x in items if x.get("source") != "files"]  # noqa: E731 (files: read again)
        meta = {"cluster_id": first.cluster_id} if first.cluster_id != entry.name else {}
        extra.append(
            CollectResult(tables=tables, errors=keep(first.errors), sources=keep(first.sources), meta=meta)
        )
        if "metadata_mode" in first.cluster:  # the second collect has no ZooKeeper source to tell it
            fields = {
                **fields,
                "metadata_mode": first.cluster["metadata_mode"],
            }  # (versions: the brokers rows)
        ids = found or entry.broker_ids
        # The second pass: the files (read again) and the metrics, over what the first found.
        sources = replace(sources, bootstrap_servers=None, command_config=None, zookeeper=None)
    else:
        ids = (msk.broker_ids if msk else []) or entry.broker_ids
    if entry.templates:
        if ids:
            sources = replace(sources, metrics=(*sources.metrics, *_expand(entry.templates, ids)))
        else:
            r = CollectResult()
            for t in entry.templates:
                r.errors.append(
                    source_error(
                        "metrics",
                        t,
                        f"{t}: template not expanded: no broker was discovered "
                        "and the inventory gives no broker_ids",
                    )
                )
                r.sources.append({"source": "metrics", "target": t, "status": "error"})
            extra.append(r)
    return collect_snapshot(
        output,
        fmt,
        sources,
        cluster=fields,
        extra=extra,
        annotate=_annotator(entry, inventory_file),
        should_write=should_write,
        msk=msk,
    )


def _failed_snapshot(entry, output: Path, message: str, *, inventory_file: str, fmt: str):
    from auditor.snapshot.io import Manifest, now_iso, write_snapshot

    manifest = Manifest(
        cluster={"id": entry.name, "name": entry.name, **entry.cluster_fields()},
        collected_at=now_iso(),
        sources=[{"source": "cluster", "target": entry.name, "status": "error"}],
        errors=[source_error("cluster", entry.name, message)],
    )
    _annotator(entry, inventory_file)(manifest)
    write_snapshot(output, manifest, {}, fmt=fmt)
    return manifest


# The MSK topic APIs: two calls or more per topic at DEFAULT_RATE per second at most
# (msk_topics.py); a cluster's computed deadline grows by this many times their rate-bound
# time once ListTopics has said how many topics there are (retries after throttling, latency).
TOPIC_CALLS_FACTOR = 2.0


class _Slot:
    """One cluster's run: the worker writes its snapshot only if the runner has not abandoned it.
    It is also the Watch (auditor/collectors/msk_topics.py) of its MSK topic calls: their count
    grows a computed deadline, and no call is sent once the cluster is abandoned."""

    def __init__(self, entry, output: Path):
        self.entry, self.output = entry, output
        self.lock = threading.Lock()
        self.abandoned = False
        self.writing = False
        self.written = threading.Event()
        self.started = time.monotonic()
        self.base = cluster_deadline(entry)
        self.topic_calls = 0
        self.topic_seconds = 0.0  # the topic calls' time at their rate bound

    def planned(self, calls: int, rate: float) -> None:
        with self.lock:
            self.topic_calls += calls
            self.topic_seconds += calls / rate if rate > 0 else 0.0

    def cancelled(self) -> bool:
        return self.abandoned

    def deadline(self) -> float:
        """When the runner gives the cluster up: its deadline, grown with its MSK topic calls
        unless the inventory set ``deadline:`` (a bound the user chose is kept)."""
        grown = 0.0 if self.entry.deadline is not None else TOPIC_CALLS_FACTOR * self.topic_seconds
        return self.started + self.base + grown

    def missed(self) -> str:
        """Why the cluster was given up, and what to set."""
        seconds = self.deadline() - self.started
        if not self.topic_calls:
            return f"no result within {seconds:g} s (the cluster's deadline); abandoned, nothing of it kept"
        need = self.base + 3 * self.topic_seconds
        suggest = 60 * int(-(-max(need, 2 * seconds) // 60))
        grown = "" if self.entry.deadline is not None else ", grown with them"
        return (
            f"no result within {seconds:g} s (the cluster's deadline{grown}; its MSK topic APIs needed "
            f"{self.topic_calls} calls, at least {self.topic_seconds:.0f} s at their rate); abandoned, nothing "
            f"of it kept: set 'deadline: {suggest}' for it in the inventory"
        )

    def may_write(self) -> bool:
        with self.lock:
            if self.abandoned:
                return False
            self.writing = True
            return True


def collect_fleet(
    inventory,
    entries,
    root: str | os.PathLike,
    run_date: str,
    *,
    parallel: int = 4,
    fmt: str = "parquet",
    on_start: Callable | None = None,
    on_done: Callable[[ClusterOutcome], None] | None = None,
) -> list[ClusterOutcome]:
    """Collect every entry into ``ROOT/dt=RUN_DATE/cluster=DIR/``, at most ``parallel`` at once;
    ``on_start(name)`` / ``on_done(outcome)`` are called in the caller's thread as clusters
    start and finish. Returns the outcomes in the order of ``entries``."""
    from auditor.snapshot.io import cluster_dir_name

    base = Path(root) / f"dt={run_date}"
    pending = list(entries)
    running: dict[str, _Slot] = {}
    finished: queue.Queue = queue.Queue()
    outcomes: dict[str, ClusterOutcome] = {}

    def work(slot: _Slot):
        try:
            manifest, tables = collect_cluster(
                slot.entry,
                slot.output,
                inventory_file=inventory.path,
                fmt=fmt,
                should_write=slot.may_write,
                watch=slot,
            )
            result = ("ok", manifest, tables)
        except BaseException as e:  # noqa: BLE001 (one cluster's failure never stops the others)
            result = ("error", f"{type(e).__name__}: {e}" if not isinstance(e, UsageError) else str(e), None)
        finished.put((slot, result))

    def finish(slot: _Slot, result) -> ClusterOutcome:
        entry = slot.entry
        out = ClusterOutcome(entry.name, str(slot.output), seconds=time.monotonic() - slot.started)
        kind, manifest, tables = result
        if kind == "ok" and slot.writing:
            out.tables, out.rows = len(tables), sum(len(v) for v in tables.values())
            out.errors = list(manifest.errors)
            out.ok = not manifest.errors
            for source in manifest.sources:
                if source.get("status") == "skipped" and source.get("reason"):
                    out.notes.append(f"note: {entry.name}: {source['reason']}")
                elif source.get("status") == "warning" and source.get("reason"):
                    out.notes.append(f"warning: {entry.name}: {source['reason']}")
            from auditor.collectors.aws_errors import aws_lines

            # every AWS call denied or throttled out, not only the first error line() shows
            out.notes += [f"{entry.name}: {line}" for line in aws_lines(manifest.errors[1:])]
            return out
        message = manifest if kind == "error" else "collected but not written"
        try:
            failed = _failed_snapshot(entry, slot.output, message, inventory_file=inventory.path, fmt=fmt)
            out.errors = list(failed.errors)
        except OSError as e:
            out.errors = [
                source_error(
                    "cluster",
                    entry.name,
                    entry.hide_env_values(
                        f"{message}; and the snapshot could not be written ({e.strerror or e})"
                    ),
                )
            ]
        return out

    while pending or running:
        while pending and len(running) < max(1, parallel):
            entry = pending.pop(0)
            slot = _Slot(entry, base / f"cluster={cluster_dir_name(entry.name)}")
            running[entry.name] = slot
            if on_start:
                on_start(entry.name)
            threading.Thread(
                target=work, args=(slot,), name=f"collect-cluster-{entry.name[:40]}", daemon=True
            ).start()
        now = time.monotonic()
        wait = max(0.0, min(r.deadline() for r in running.values()) - now)
        try:
            slot, result = finished.get(timeout=min(wait, 1.0) if wait > 0 else 0.01)
        except queue.Empty:
            for name, slot in list(running.items()):
                if time.monotonic() < slot.deadline():
                    continue
                with slot.lock:
                    writing = slot.writing
                    if not writing:
                        slot.abandoned = True
                if writing:  # it is writing its snapshot now (local disk): let it finish
                    continue
                del running[name]
                outcomes[name] = finish(slot, ("error", slot.missed(), None))
                if on_done:
                    on_done(outcomes[name])
            continue
        if running.get(slot.entry.name) is not slot:
            continue  # abandoned already: its failure snapshot is written
        del running[slot.entry.name]
        outcomes[slot.entry.name] = finish(slot, result)
        if on_done:
            on_done(outcomes[slot.entry.name])
    return [outcomes[e.name] for e in entries]
