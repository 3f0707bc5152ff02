"""``collect``: sources -> a snapshot directory (one cluster), or an inventory -> one snapshot
per cluster, concurrently. ``check``, ``preflight`` and ``wait`` collect through the same
functions when they are given sources instead of a snapshot (:func:`snapshot_refs`).

What is printed is the command line's (auditor/cli/collect.py): this layer returns outcomes
and calls back as clusters start and finish.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path

from auditor.errors import UsageError
from auditor.sources import MAX_TIMEOUT, Sources
from auditor.stderr import say


def check_msk_arn(sources: Sources, command: str) -> None:
    """A usage error for an ARN that is not an MSK cluster's, or a region that is not its region."""
    if sources.msk_cluster_arn is None:
        return
    from auditor.collectors.msk import is_cluster_arn, region_of

    arn, region = sources.msk_cluster_arn, sources.msk_region
    if not is_cluster_arn(arn):
        raise UsageError(
            f"{command}: --msk-cluster-arn {arn}: expected arn:aws:kafka:REGION:ACCOUNT:cluster/NAME/UUID"
        )
    if region and region != region_of(arn):
        raise UsageError(
            f"{command}: --msk-region {region} is not the region of --msk-cluster-arn ({region_of(arn)})"
        )


def collect_into(output: Path, fmt: str, sources: Sources, cluster: dict | None = None):
    """Collect ``sources`` into a snapshot directory: (manifest, tables, rows); the manifest's
    ``errors`` name the sources that failed. What a source skipped or found nothing in is said
    on stderr, one line each."""
    from auditor.collectors.fleet_collect import collect_snapshot
    from auditor.progress import collect_progress

    sources.checked("collect")
    check_msk_arn(sources, "collect")
    with collect_progress() as progress:
        manifest, tables = collect_snapshot(output, fmt, sources, cluster=cluster, progress=progress)
    for source in manifest.sources:  # files passed over (a client config in /etc/kafka ...): one line each
        if source.get("status") == "skipped" and source.get("reason"):
            say(f"note: {source['reason']}")
        elif source.get("status") == "warning" and source.get("reason"):  # a source that gave nothing to read
            say(f"warning: {source['reason']}")
    return manifest, len(tables), sum(len(v) for v in tables.values())


def snapshot_refs(target: Path | None, sources: Sources, workdir: str):
    """The snapshots to audit: TARGET, or a snapshot collected from SOURCES first (into workdir)."""
    from auditor.snapshot.io import SnapshotRef, discover, newest_per_cluster, open_snapshot, read_manifest

    if target is not None and sources.any:
        raise UsageError(
            "give a snapshot directory or sources (--bootstrap-servers, --zookeeper, ...), not both"
        )
    if target is None:
        if not sources.any:
            raise UsageError(
                "give a snapshot directory, or sources to collect from (--bootstrap-servers, --zookeeper, "
                "--broker-config, --metrics, --msk-cluster-arn)"
            )
        target = Path(workdir) / "snapshot"
        collect_into(target, "parquet", sources)
    # The newest snapshot per cluster, as fleet: two dated snapshots of one cluster are not
    # merged. Manifests first (cheap), then only the kept snapshots are validated.
    found = [SnapshotRef(str(p), read_manifest(p), {}) for p in discover(target)]
    kept, skipped = newest_per_cluster(found)
    for note in skipped:  # check's and preflight's reports have no place for notes
        say(f"note: {note}")
    refs = [open_snapshot(r.path) for r in kept]
    for ref in refs:
        if not ref.files:
            say(f"warning: {ref.path}: SNAPSHOT: no tables: nothing was collected")
    return refs


def run_date_of(value: str | None) -> str | None:
    """--run-date as given, if it is a calendar date written YYYY-MM-DD (fromisoformat alone also
    takes week dates like 2026-W48-1, which would name a dt= directory wrongly)."""
    import re

    if value is None:
        return None
    try:
        ok = (
            bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", value))
            and dt.date.fromisoformat(value).isoformat() == value
        )
    except ValueError:
        ok = False
    if not ok:
        raise UsageError(f"--run-date must be YYYY-MM-DD, not '{value}'")
    return value


def inventory_of_regions(regions: list[str], command_config: str | None, timeout: float):
    """collect --msk-region R ... --out ROOT: every MSK cluster of the regions, as an inventory
    with only an msk_discovery block would (auditor.collectors.inventory.MskDiscovery)."""
    import os

    from auditor.collectors.inventory import ClusterEntry, Inventory, MskDiscovery

    if not (0 < timeout <= MAX_TIMEOUT):
        raise UsageError(
            f"collect: --timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}"
        )
    template = ClusterEntry(
        name="",
        line=0,
        timeout=timeout,
        command_config=os.path.abspath(command_config) if command_config else None,
    )
    return Inventory("--msk-region", [], MskDiscovery(list(regions), {}, None, template, 0))


def plan_inventory(
    inventory, path: Path | None, out: Path, select: str | None, parallel: int, run_date: str | None
):
    """collect --inventory, validated before anything is collected (usage errors, exit 2):
    (inventory, the selected entries, the run date, the discovery errors)."""
    from auditor.collectors.inventory import load_inventory, parse_selector

    if not 1 <= parallel <= 256:
        raise UsageError(f"collect: --parallel must be between 1 and 256, not {parallel}")
    run_date = run_date_of(run_date) or dt.date.today().isoformat()
    if out.exists() and not out.is_dir():
        raise UsageError(f"collect: --out {out} exists and is not a directory")
    chooser = parse_selector(select) if select is not None else None
    inv = inventory or load_inventory(path)
    clusters, discovery_errors = _discover_msk(inv)
    entries = [e for e in clusters if chooser is None or chooser(e)]
    if not entries and not discovery_errors:
        raise UsageError(
            f"collect: --select '{select}' selects none of the {len(clusters)} clusters of {inv.path}"
            if clusters
            else f"collect: {inv.path}: MSK discovery found no cluster"
        )
    return inv, entries, run_date, discovery_errors


def inventory_clusters(inv):
    """(the inventory's clusters with those its msk_discovery finds, the discovery errors)."""
    return _discover_msk(inv)


def inventory_entry(inv, name: str):
    """The inventory's cluster called ``name`` (among those its msk_discovery finds too); a usage
    error naming the inventory and its clusters otherwise."""
    clusters, _errors = _discover_msk(inv)
    for entry in clusters:
        if entry.name == name:
            return entry
    known = ", ".join(sorted(e.name for e in clusters)[:20]) or "none"
    raise UsageError(f"{inv.path}: no cluster named '{name}' (its clusters: {known})")


def collect_named(inv, name: str, root: Path):
    """Collect the inventory's cluster ``name`` now, as `collect --inventory` does (its sources, its
    declared fields and labels, its timeouts and deadline), into ``ROOT/dt=TODAY/cluster=NAME/``:
    the ClusterOutcome (its ``directory``; ``errors`` when a source failed, the snapshot is then
    incomplete and audits say so)."""
    entry = inventory_entry(inv, name)
    (outcome,) = collect_inventory(inv, [entry], root, dt.date.today().isoformat(), 1, "parquet")
    return outcome


def _discover_msk(inv):
    """The inventory's clusters plus those its msk_discovery finds; a region that cannot be
    listed is one line on stderr and makes the run incomplete (exit 3)."""
    if inv.msk_discovery is None:
        return inv.clusters, []
    from auditor.collectors.msk import discover

    d = inv.msk_discovery
    found, errors = discover(d.regions, tags=d.tags, name_prefix=d.name_prefix, timeout=d.template.timeout)
    for e in errors:
        say(f"collect incomplete: msk discovery: {e['message']}")
    return inv.with_discovered(found), errors


def collect_inventory(
    inv,
    entries,
    out: Path,
    run_date: str,
    parallel: int,
    fmt: str,
    *,
    on_start: Callable | None = None,
    on_done: Callable | None = None,
):
    """Every selected cluster into ``OUT/dt=RUN_DATE/cluster=NAME/``: the outcomes, in order."""
    from auditor.collectors.fleet_collect import collect_fleet

    return collect_fleet(
        inv, entries, out, run_date, parallel=parallel, fmt=fmt, on_start=on_start, on_done=on_done
    )
