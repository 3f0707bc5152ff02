"""The weekly fleet job: audit every snapshot under a root, on Spark (default) or DuckDB.

snapshots root (local, file://, s3a://, hdfs://)
  -> discover manifests; a corrupt or unreadable snapshot becomes an AUD001 finding for
     that cluster (the rest of the fleet is still audited)
  -> cluster rules + fleet rules (FLT) in one findings DataFrame
  -> marked new / persisting against --previous (by fingerprint), in the engine
  -> written by the engine as Parquet: OUT/run_date=YYYY-MM-DD/cluster=NAME/*.parquet
     (NAME through cluster_dir_name: safe and bounded; the real name in column cluster_name)
  -> only aggregates (per cluster, per rule, week-over-week counts) and the top rows of
     each rule reach the driver: memory does not grow with the number of findings.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from auditor import coverage
from auditor.baseline import Baseline, Entry, Outcome
from auditor.causes import Cause
from auditor.config import AuditConfig
from auditor.engine.base import Engine
from auditor.engine.root_causes import from_table as count_causes
from auditor.engine.runner import findings_table, incomplete_sources
from auditor.engine.tables import VIEW_PREFIX
from auditor.errors import SnapshotError, UsageError
from auditor.findings import SEVERITY_RANK, WORST_FIRST, AuditResult, Finding, RuleDoc, fails
from auditor.frames import F, Window, join
from auditor.grading import NOT_AUDITED, grade_clusters
from auditor.progress import NO_PROGRESS, Progress
from auditor.registry import load_rules, rule_docs
from auditor.snapshot.io import (
    FORMATS,
    MANIFEST,
    Manifest,
    SnapshotRef,
    cluster_dir_name,
    discover,
    newest_per_cluster,
    open_snapshot,
    parse_manifest,
    verify_data,
)
from auditor.snapshot.schema import Column, Table
from auditor.stderr import say

REMOTE = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


@dataclass
class FleetResult:
    run_date: str
    engine: str
    clusters: list[dict]  # per cluster: name, id, environment, tier, counts, score, grade, new, resolved
    rules: list[dict]  # per rule: code, name, severity, clusters, findings
    top: list[Finding]  # the first top_n findings of each rule, worst clusters first
    incomplete: list[dict]
    totals: dict
    out: str | None = None
    previous_run: str | None = None
    diff: dict = field(default_factory=dict)  # new / persisting / resolved totals
    hits: list[dict] = field(default_factory=list)  # per cluster and rule counts
    top_n: int = 20
    notes: list[str] = field(default_factory=list)
    # Per cluster id: the rules not evaluated and why (auditor/coverage.py).
    coverage: dict[str, list[dict]] = field(default_factory=dict)
    # The root causes, counted over every finding of the run (auditor/engine/root_causes.py).
    causes: list[Cause] = field(default_factory=list)
    # --baseline: matched and stale entries (the baselined findings are left out of every count
    # and of the Parquet rows); --write-baseline: every finding's entry.
    baseline: Outcome | None = None
    baseline_entries: list[Entry] | None = None
    # Per cluster id: its grades in the earlier runs under --previous, oldest first (grade_history).
    grade_history: dict[str, list[dict]] = field(default_factory=dict)
    # The documentation of the rules that ran (auditor.registry.rule_docs), for the reports.
    rule_docs: dict[str, RuleDoc] = field(default_factory=dict)

    def failing(self, fail_on: str) -> bool:
        return fails((r["severity"] for r in self.rules), fail_on)

    @property
    def run_dir(self) -> str | None:
        """Where this run's findings were written (OUT/run_date=...), if anywhere."""
        return _run_dir(self.out, self.run_date) if self.out else None


# --- discovery ------------------------------------------------------------------------------


def broken_snapshot(path: str, message: str) -> SnapshotRef:
    """A snapshot that could not be read still counts as a cluster of the fleet: audited as
    incomplete (AUD001), never silently dropped."""
    m = re.search(r"cluster=([^/]+)", path)
    name = m.group(1) if m else Path(path.rstrip("/")).name
    manifest = Manifest(
        cluster={"id": f"unreadable:{path}", "name": name},
        collected_at="",
        errors=[{"source": "snapshot", "target": path, "message": message}],
    )
    return SnapshotRef(path, manifest, {})


def open_fleet(root: str, engine: Engine) -> tuple[list[SnapshotRef], list[str]]:
    if REMOTE.match(root):
        return _open_remote(root, engine)
    refs = []
    for directory in discover(root):
        try:
            refs.append(open_snapshot(directory))
        except SnapshotError as e:
            refs.append(broken_snapshot(str(directory), str(e)))
        except (RecursionError, MemoryError, ValueError) as e:  # e.g. a 100,000-deep JSON line
            refs.append(
                broken_snapshot(
                    str(directory),
                    f"{directory}: unreadable ({type(e).__name__}: "
                    f"{str(e).splitlines()[0][:200] if str(e) else ''})",
                )
            )
    return _dedupe(refs)


def _open_remote(root: str, engine: Engine) -> tuple[list[SnapshotRef], list[str]]:
    """Find manifests on any filesystem Spark reads. Table files are checked by Spark itself
    when read (FAILFAST), not here: deep local validation would mean downloading them."""
    spark = getattr(engine, "spark", None)
    if spark is None:
        raise SnapshotError(f"{root}: a remote fleet root needs --engine spark")
    try:
        rows = (
            spark.read.format("binaryFile")
            .option("pathGlobFilter", MANIFEST)
            .option("recursiveFileLookup", "true")
            .load(root)
            .select("path", "content")
            .collect()
        )
    except Exception as e:
        raise SnapshotError(f"{root}: cannot list snapshots ({str(e).splitlines()[0][:300]})") from None
    if not rows:
        raise SnapshotError(f"{root}: no snapshot found (no manifest.json at or below it)")
    refs = []
    for row in sorted(rows, key=lambda r: r["path"]):
        directory = row["path"][: -len(MANIFEST) - 1]
        try:
            manifest = parse_manifest(bytes(row["content"]).decode("utf-8"), row["path"])
            files = {}
            for table, filename in manifest.tables.items():
                fmt = filename.rsplit(".", 1)[-1]
                if fmt not in FORMATS or "/" in filename:
                    raise SnapshotError(f"{directory}/{filename}: unknown table file")
                files[table] = (f"{directory}/{filename}", fmt)
            refs.append(SnapshotRef(directory, manifest, files))
        except (SnapshotError, UnicodeDecodeError) as e:
            refs.append(broken_snapshot(directory, str(e)))
    return _dedupe(refs)


def _dedupe(refs: list[SnapshotRef]) -> tuple[list[SnapshotRef], list[str]]:
    """Two snapshots of one cluster id (two dates under one root): keep the newest, and say
    which were left out (the notes of the run). One implementation with check's."""
    kept, notes = newest_per_cluster(refs)
    return sorted(kept, key=lambda r: r.manifest.cluster_name), notes


# --- the job --------------------------------------------------------------------------------


def run_fleet(
    engine: Engine,
    root: str,
    config: AuditConfig,
    *,
    out: str | None = None,
    previous: str | None = None,
    run_date: str | None = None,
    top_n: int = 20,
    progress: Progress = NO_PROGRESS,
    baseline: Baseline | None = None,
    keep_entries: bool = False,
) -> FleetResult:
    run_date = run_date or dt.date.today().isoformat()
    progress.stage("opening snapshots")
    refs, notes = open_fleet(root, engine)
    try:
        return _run(
            engine,
            refs,
            list(notes),
            config,
            out,
            previous,
            run_date,
            top_n,
            progress,
            baseline,
            keep_entries,
        )
    except UsageError:
        raise
    except Exception as e:
        # Opening checks footers, statistics and JSON Lines rows, not Parquet data pages:
        # decoding every page of every snapshot up front would double the read of a fleet
        # (10M partitions). Only when the engine failed: find the snapshots whose data does
        # not decode, audit them as AUD001, and run again over the rest.
        broken = {id(r): problem for r in refs if (problem := verify_data(r))}
        if not broken:
            raise
        refs = [broken_snapshot(r.path, broken[id(r)]) if id(r) in broken else r for r in refs]
        first = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
        notes.append(
            f"the engine failed to read the fleet ({first}); audited again without "
            f"{len(broken)} snapshot(s) whose data is unreadable"
        )
        return _run(
            engine, refs, notes, config, out, previous, run_date, top_n, progress, baseline, keep_entries
        )


def _run(
    engine: Engine,
    refs: list[SnapshotRef],
    notes: list[str],
    config: AuditConfig,
    out: str | None,
    previous: str | None,
    run_date: str,
    top_n: int,
    progress: Progress = NO_PROGRESS,
    baseline: Baseline | None = None,
    keep_entries: bool = False,
) -> FleetResult:
    progress.stage(f"loading {len(refs)} snapshot(s)")
    tables = engine.load(refs)
    previous, previous_run = _earlier_run(engine, previous, out, run_date, notes)
    # The findings are stored once: without an earlier run, the final stage is the table and
    # fleet_findings a filtering view over it; with one, fleet_findings (joined with the
    # earlier fingerprints once, not on every read) is the table.
    selected = config.rules(("cluster", "fleet"))
    table = findings_table(tables, selected, config, materialize=not previous_run, progress=progress)
    current = engine.session.table(table).where(F.col("exempted_by").isNull()).drop("exempted_by")
    outcome = None
    baselined_now: set[str] = set()  # found in this run but left out by --baseline
    if baseline is not None:
        current, matched = _without_baseline(engine, current, baseline)
        baselined_now = matched
        outcome = baseline.outcome(matched, {r.manifest.cluster_name for r in refs})
        notes.extend(([f"warning: {outcome.foreign}"] if outcome.foreign else []) + [outcome.line()])
    engine.create(
        "fleet_findings", engine.sql_of(_with_status(engine, current, previous_run)), reuse=bool(previous_run)
    )
    # From here on only fleet_findings is read, and a table holds its rows (the root causes'
    # stage, or fleet_findings itself): the rules' tables and the transforms can go.
    tables.release(rule_tables=True)
    findings = engine.session.table(VIEW_PREFIX + "fleet_findings")

    hits = _hits(findings)
    explained = count_causes(findings)  # an aggregate, one row per cause
    if out:
        progress.stage("writing findings")
        _write_findings(
            engine,
            findings,
            {h["cluster"] for h in hits} | {r.manifest.cluster_name for r in refs},
            _run_dir(out, run_date),
        )

    progress.stage("summarising")
    covered = coverage.compute(refs, selected, tables.failed)
    clusters = _cluster_summary(tables, hits, previous_run is not None, covered)
    rules = _per_rule(hits)
    top = _top(findings, hits, top_n)
    diff = _diff(engine, findings, baselined_now) if previous_run else {}
    incomplete = incomplete_sources(refs)
    # From every finding, not the graded clusters: a FLT004 finding is about a cluster absent from this run.
    totals = {s: sum(h["count"] for h in hits if h["severity"] == s) for s in WORST_FIRST}
    totals["total"] = sum(totals.values())
    entries = None
    if keep_entries:  # --write-baseline: every finding's entry reaches the driver (one small row each)
        entries = [
            Entry(**r.asDict())
            for r in findings.select(
                "fingerprint", "rule", "cluster", "resource_type", "resource_name"
            ).collect()
        ]
    return FleetResult(
        run_date,
        engine.name,
        clusters,
        rules,
        top,
        incomplete,
        totals,
        out,
        previous_run,
        diff,
        hits=hits,
        top_n=top_n,
        notes=notes,
        coverage=covered,
        causes=explained,
        baseline=outcome,
        baseline_entries=entries,
        grade_history=grade_history(previous, run_date),
        rule_docs=rule_docs(selected),
    )


def _earlier_run(engine: Engine, previous: str | None, out: str | None, run_date: str, notes: list[str]):
    """(previous, the earlier run read as previous_findings, or None): --previous, when it holds
    a run before this one. The usual weekly schedule passes its own --out as --previous: its
    first run has nothing to compare with; any other path without findings is a mistake."""
    if previous and not REMOTE.match(previous) and not any(Path(previous).glob("**/*.parquet")):
        if previous.rstrip("/") != (out or "").rstrip("/"):
            raise UsageError(f"{previous}: no findings of an earlier run (expected run_date=.../*.parquet)")
        notes.append(f"no earlier run under {previous} yet: every finding counts as new")
        return None, None
    if not previous:
        return previous, None
    previous_run = engine.read_findings(previous, "previous_findings", exclude_run_date=run_date)
    if previous_run is None:
        notes.append(f"no run before {run_date} under {previous}: every finding counts as new")
    else:  # FLT004's input: the clusters that run audited (empty otherwise)
        engine.register_previous_clusters(previous_clusters(previous, previous_run, notes))
    return previous, previous_run


def _with_status(engine: Engine, current, previous_run):
    """The findings with ``status``: persisting when the earlier run had the fingerprint, else new."""
    if not previous_run:
        return current.withColumn("status", F.lit("new"))
    prev = (
        engine.session.table(VIEW_PREFIX + "previous_findings")
        .select(F.col("fingerprint").alias("prev_fingerprint"))
        .distinct()
    )
    marked = join(
        current,
        prev.select(F.col("prev_fingerprint").alias("fingerprint"), F.lit(True).alias("seen")),
        "fingerprint",
        "left",
    )
    return marked.withColumn(
        "status", F.when(F.col("seen"), F.lit("persisting")).otherwise(F.lit("new"))
    ).drop("seen")


def _per_rule(hits: list[dict]) -> list[dict]:
    """Per rule: clusters, findings and new findings, worst first. A rule whose findings
    carry severities of their own (ROW_SEVERITY) has a hit per severity in a cluster: its
    severity here is the worst, and each cluster counts once."""
    by_rule: dict[str, dict] = {}
    clusters: dict[str, set] = {}
    for h in hits:
        r = by_rule.setdefault(
            h["rule"],
            {
                "rule": h["rule"],
                "name": h["name"],
                "severity": h["severity"],
                "clusters": 0,
                "findings": 0,
                "new": 0,
            },
        )
        r["severity"] = max(r["severity"], h["severity"], key=SEVERITY_RANK.__getitem__)
        clusters.setdefault(h["rule"], set()).add(h["cluster"])
        r["clusters"] = len(clusters[h["rule"]])
        r["findings"] += h["count"]
        r["new"] += h["new"]
    return sorted(by_rule.values(), key=lambda r: (-SEVERITY_RANK[r["severity"]], -r["clusters"], r["rule"]))


def _diff(engine: Engine, findings, baselined_now: set[str]) -> dict:
    """New, persisting and resolved against the earlier run. A finding still found but left out
    by --baseline is not resolved (issue 38)."""
    counts = {
        r["status"]: r["n"] for r in findings.groupBy("status").agg(F.count(F.lit(1)).alias("n")).collect()
    }
    resolved = join(
        engine.session.table(VIEW_PREFIX + "previous_findings").select("fingerprint").distinct(),
        findings.select(F.col("fingerprint"), F.lit(True).alias("still")),
        "fingerprint",
        "left",
    ).where(F.col("still").isNull())
    if baselined_now:
        engine._register_rows(BASELINED_TABLE, [{"fingerprint": fp} for fp in sorted(baselined_now)])
        resolved = join(
            resolved.drop("still"),
            engine.session.table(VIEW_PREFIX + BASELINED_TABLE.name).select(
                F.col("fingerprint"), F.lit(True).alias("still")
            ),
            "fingerprint",
            "left",
        ).where(F.col("still").isNull())
    return {
        "new": counts.get("new", 0),
        "persisting": counts.get("persisting", 0),
        "resolved": resolved.count(),
    }


BASELINE_TABLE = Table("baseline", (Column("fingerprint", "string", "fingerprint of a baselined finding"),))
BASELINED_TABLE = Table(
    "baselined_now", (Column("fingerprint", "string", "a finding of this run left out by the baseline"),)
)


def _without_baseline(engine: Engine, current, baseline: Baseline):
    """``current`` without the baselined findings (an anti-join in the engine), and the
    baseline's fingerprints it held (at most the baseline's size reaches the driver)."""
    engine._register_rows(BASELINE_TABLE, [{"fingerprint": fp} for fp in baseline.fingerprints()])
    known = engine.session.table(VIEW_PREFIX + BASELINE_TABLE.name).select(
        F.col("fingerprint"), F.lit(True).alias("baselined")
    )
    marked = join(current, known, "fingerprint", "left")
    matched = {
        r["fingerprint"] for r in marked.where(F.col("baselined")).select("fingerprint").distinct().collect()
    }
    return marked.where(F.col("baselined").isNull()).drop("baselined"), matched


def _write_findings(engine: Engine, findings, names: set, directory: str) -> None:
    """OUT/run_date=.../cluster=DIR/: DIR is cluster_dir_name(cluster) (bounded, safe; the
    same as the name for plain names), and every row keeps the real name in cluster_name."""
    renamed = {n: cluster_dir_name(n) for n in names if n is not None and cluster_dir_name(n) != n}
    directory_of = F.col("cluster")
    if renamed:
        expr = None
        for name, safe in sorted(renamed.items()):
            cond = F.col("cluster") == F.lit(name)
            expr = F.when(cond, F.lit(safe)) if expr is None else expr.when(cond, F.lit(safe))
        directory_of = expr.otherwise(F.col("cluster"))
    frame = findings.withColumn("cluster_name", F.col("cluster")).withColumn("cluster", directory_of)
    engine.create("fleet_findings_out", engine.sql_of(frame))
    engine.write_findings(VIEW_PREFIX + "fleet_findings_out", directory)


def _run_dir(out: str, run_date: str) -> str:
    return f"{out.rstrip('/')}/run_date={run_date}"


def _hits(findings) -> list[dict]:
    """Per cluster and rule: counts (an aggregate: at most clusters x rules rows)."""
    rows = (
        findings.groupBy("cluster_id", "cluster", "rule", "name", "severity")
        .agg(
            F.count(F.lit(1)).alias("count"),
            F.sum(F.when(F.col("status") == "new", F.lit(1)).otherwise(F.lit(0))).alias("new"),
        )
        .collect()
    )
    return sorted((r.asDict() for r in rows), key=lambda h: (h["cluster"], h["rule"]))


def _top(findings, hits: list[dict], top_n: int) -> list[Finding]:
    """The first ``top_n`` findings of each rule by cluster name, resource type and name.

    The window runs only over the clusters that can hold them: per rule, its clusters in
    name order until their counts (from ``hits``) cover ``top_n``. A window over every
    finding sorted all of them (0.5 s for 736k findings on DuckDB, a full shuffle on Spark)
    to keep a few thousand."""
    if top_n <= 0 or not hits:
        return []
    wanted: dict[str, list[str]] = {}
    covered: dict[str, int] = {}
    for h in sorted(hits, key=lambda h: (h["rule"], h["cluster"])):  # code point order, as the engines sort
        if covered.get(h["rule"], 0) < top_n:
            wanted.setdefault(h["rule"], []).append(h["cluster"])
            covered[h["rule"]] = covered.get(h["rule"], 0) + h["count"]
    needed = F.lit(False)
    for rule, clusters in wanted.items():
        needed = needed | ((F.col("rule") == F.lit(rule)) & F.col("cluster").isin(*clusters))
    w = Window.partitionBy("rule").orderBy(
        F.col("cluster").asc(), F.col("resource_type").asc(), F.col("resource_name").asc()
    )
    rows = (
        findings.where(needed)
        .withColumn("_rn", F.row_number().over(w))
        .where(F.col("_rn") <= top_n)
        .drop("_rn")
        .collect()
    )
    top = [Finding.from_row({k: v for k, v in r.asDict().items() if k != "status"}) for r in rows]
    top.sort(key=lambda f: f.sort_key)
    return top


def _cluster_summary(
    tables, hits: list[dict], with_previous: bool, covered: dict | None = None
) -> list[dict]:
    errors = {r["cluster_id"] for r in tables.source_errors.select("cluster_id").distinct().collect()}
    out = {}
    for c in tables.clusters.collect():
        out[c["cluster_id"]] = {
            "id": c["cluster_id"],
            "name": c["cluster_name"],
            "environment": c["environment"],
            "tier": c["tier"],
            "platform": c["platform"],
            "kafka_version": c["kafka_version"],
            "counts": {s: 0 for s in WORST_FIRST},
            "new": 0,
            "incomplete": c["cluster_id"] in errors,
        }
    fleet_rules = frozenset(code for code, r in load_rules().items() if r.scope == "fleet")
    for h in hits:
        entry = out.get(h["cluster_id"])
        if entry is None and h["rule"] in fleet_rules:
            continue  # about a cluster absent from this run (FLT004): a fleet finding, not a cluster to grade
        if entry is None:  # rows of a cluster no manifest names (a remote snapshot read unchecked)
            entry = out[h["cluster_id"]] = {
                "id": h["cluster_id"],
                "name": h["cluster"] or h["cluster_id"],
                "environment": None,
                "tier": None,
                "platform": None,
                "kafka_version": None,
                "counts": {s: 0 for s in WORST_FIRST},
                "new": 0,
                "incomplete": True,
            }
        entry["counts"][h["severity"]] += h["count"]
        entry["new"] += h["new"]
    graded = {e["id"] for e in out.values()}
    grades = grade_clusters(
        out.values(),
        [h for h in hits if h["cluster_id"] in graded],
        {e["name"] for e in out.values() if e["incomplete"]},
        covered,
        ungraded_rules=fleet_rules,
    )
    for entry in out.values():
        gaps = (covered or {}).get(entry["id"], [])
        grading = grades[entry["name"]]
        entry["score"], entry["grade"] = grading["score"], grading["grade"]
        entry["not_evaluated"] = [{"rules": e["rules"], "reason": e["reason"]} for e in gaps]
        if grading["grade_note"]:
            entry["grade_note"] = grading["grade_note"]
        if not with_previous:
            entry.pop("new")
    return sorted(out.values(), key=lambda e: (not e["incomplete"], e["score"], e["name"]))


def audit_result(result: FleetResult) -> AuditResult:
    """The fleet run as the renderers' input: true counts (hits), the top rows as findings."""
    notes = [
        f"Showing at most {result.top_n} findings per rule; all {result.totals['total']} are in "
        f"{result.run_dir or 'the engine (run with --out to keep them)'}."
    ]
    if result.previous_run:
        d = result.diff
        notes.append(
            f"Since {result.previous_run}: {d['new']} new, {d['persisting']} persisting, {d['resolved']} resolved."
        )
    clusters = [
        {
            k: v
            for k, v in c.items()
            if k not in ("counts", "score", "grade", "new", "incomplete", "not_evaluated", "grade_note")
            and v is not None
        }
        for c in result.clusters
    ]
    return AuditResult(
        findings=list(result.top),
        clusters=clusters,
        incomplete=result.incomplete,
        engine=result.engine,
        notes=notes,
        rows_per_rule=result.top_n,
        complete_in=(
            f"the Parquet findings under {result.run_dir} hold them all"
            if result.run_dir
            else "`kafka-audit check` on these snapshots, or fleet with --out, lists them all"
        ),
        history=run_history(result) or None,
        hits=[{k: h[k] for k in ("cluster", "rule", "name", "severity", "count")} for h in result.hits],
        coverage=result.coverage,
        causes=result.causes,
        rule_docs=result.rule_docs,
        grades={h["cluster"]: NOT_AUDITED for h in result.hits}
        | {
            c["name"]: {
                "score": c["score"],
                "grade": c["grade"],
                "grade_note": c.get("grade_note", ""),
                "trend": result.grade_history.get(c["id"], []),
            }
            for c in result.clusters
        },
    )


def previous_clusters(previous: str, previous_run: str, notes: list[str] | None = None) -> list[dict]:
    """The clusters audited in the previous run (FLT004's input, table previous_clusters):
    from that run's _summary.json, which lists every cluster, clean ones included (its
    findings do not). run_date is the date of the last run that audited the cluster: one the
    previous run already reported missing (FLT004) keeps the date its finding gave. Local
    directories only, like the summary itself; without it FLT004 is silent (and a note says
    so). The clusters of that run's FLT004 findings are included whether or not its summary
    lists them: a missing cluster stays reported until it is back or exempted."""
    from auditor import safe_io, safe_json

    base = Path(previous) if not REMOTE.match(previous) else None
    candidates = [base / f"run_date={previous_run}", base] if base is not None else []
    run_dir = next((d for d in candidates if (d / "_summary.json").is_file()), None)
    doc = None
    if run_dir is not None:
        try:
            doc = safe_json.loads(
                safe_io.read_text(run_dir / "_summary.json"), str(run_dir / "_summary.json")
            )
        except (OSError, ValueError):
            doc = None
    if not isinstance(doc, dict) or not isinstance(doc.get("clusters"), list):
        if notes is not None:
            notes.append(
                f"no readable _summary.json for the run of {previous_run} under {previous}: "
                "clusters missing from this run are not reported (FLT004)"
            )
        return []
    audited_on = str(doc.get("run_date") or previous_run)
    still_missing = _reported_missing(run_dir)
    rows: dict[str, dict] = {}
    for c in doc["clusters"]:
        if not isinstance(c, dict):
            continue
        cid = c.get("id") if isinstance(c.get("id"), str) else None
        name = c.get("name") if isinstance(c.get("name"), str) else None
        if cid is None and name is None:
            continue
        key = cid if cid is not None else name
        rows.setdefault(
            key,
            {
                "cluster_id": cid,
                "cluster_name": name,
                "run_date": still_missing.get(key, (None, audited_on))[1],
            },
        )
    for cid, (name, day) in still_missing.items():
        rows.setdefault(cid, {"cluster_id": cid, "cluster_name": name, "run_date": day})
    return list(rows.values())


def _reported_missing(run_dir: Path) -> dict[str, tuple[str | None, str]]:
    """cluster id -> (name, last audited date), of the clusters a run reported missing (FLT004)."""
    try:
        import pyarrow.dataset as ds

        data = ds.dataset(str(run_dir), format="parquet", exclude_invalid_files=True)
        if not {"rule", "cluster_id", "resource_name", "evidence"} <= set(data.schema.names):
            return {}
        table = data.to_table(
            columns=["cluster_id", "resource_name", "evidence"], filter=ds.field("rule") == "FLT004"
        )
    except Exception:  # a damaged earlier run only loses the carried date
        return {}
    out = {}
    for row in table.to_pylist():
        try:
            day = json.loads(row["evidence"] or "{}").get("last_audited")
        except (ValueError, AttributeError, RecursionError):  # (an earlier run's file: outside input)
            day = None
        if row["cluster_id"] and isinstance(day, str):
            out[row["cluster_id"]] = (row["resource_name"], day)
    return out


def run_history(result: FleetResult) -> list[dict]:
    """This run and the earlier ones recorded under --out (their _summary.json), oldest
    first, for runs that were compared with a previous one (new and resolved counts)."""
    from auditor import safe_io, safe_json

    runs = {}
    if result.out and not REMOTE.match(result.out):
        for path in sorted(Path(result.out).glob("run_date=*/_summary.json")):
            try:
                doc = safe_json.loads(safe_io.read_text(path), str(path))
            except (OSError, ValueError):  # (JSONTooDeep is a ValueError)
                continue  # a damaged summary only loses a point of the chart
            if (  # an earlier run's file: read only what has the shape this tool writes
                isinstance(doc, dict)
                and isinstance(doc.get("diff"), dict)
                and doc["diff"]
                and isinstance(doc.get("run_date"), str)
                and doc["run_date"] != result.run_date
            ):
                totals = doc.get("totals") if isinstance(doc.get("totals"), dict) else {}
                runs[doc["run_date"]] = {
                    "run_date": doc["run_date"],
                    "total": _count(totals.get("total")),
                    "new": _count(doc["diff"].get("new")),
                    "resolved": _count(doc["diff"].get("resolved")),
                }
    if result.diff:
        runs[result.run_date] = {
            "run_date": result.run_date,
            "total": result.totals["total"],
            "new": result.diff["new"],
            "resolved": result.diff["resolved"],
        }
    return [runs[k] for k in sorted(runs)]


def _count(value) -> int | None:
    return value if type(value) is int and 0 <= value < 2**53 else None


GRADE_HISTORY_RUNS = 8


def grade_history(previous: str | None, run_date: str) -> dict[str, list[dict]]:
    """Per cluster id: {"run_date", "grade", "score"} of the last GRADE_HISTORY_RUNS runs
    before run_date under the --previous root (their _summary.json), oldest first. Local
    directories only, like the summaries; a damaged summary only loses its run."""
    from auditor import safe_io, safe_json
    from auditor.grading import GRADES

    if not previous or REMOTE.match(previous):
        return {}
    runs = []
    for path in sorted(Path(previous).glob("run_date=*/_summary.json")):
        try:
            doc = safe_json.loads(safe_io.read_text(path), str(path))
        except (OSError, ValueError):
            continue
        if (
            isinstance(doc, dict)
            and isinstance(doc.get("clusters"), list)
            and str(doc.get("run_date")) < run_date
        ):
            runs.append(doc)
    out: dict[str, list[dict]] = {}
    for doc in sorted(runs, key=lambda d: str(d["run_date"]))[-GRADE_HISTORY_RUNS:]:
        for c in doc["clusters"]:
            if isinstance(c, dict) and isinstance(c.get("id"), str) and c.get("grade") in (*GRADES, "?"):
                score = c.get("score") if isinstance(c.get("score"), int) else None
                out.setdefault(c["id"], []).append(
                    {"run_date": str(doc["run_date"]), "grade": c["grade"], "score": score}
                )
    return out


def summary_json(result: FleetResult) -> dict:
    return {
        "schema_version": 1,
        "run_date": result.run_date,
        "engine": result.engine,
        "findings_dir": result.out,
        "previous_run": result.previous_run,
        "diff": result.diff,
        "notes": result.notes,
        "totals": result.totals,
        "incomplete": result.incomplete,
        "clusters": result.clusters,
        "rules": result.rules,
        "causes": [c.to_json() for c in result.causes],
        "top": [f.to_json() for f in result.top],
        **({"baseline": result.baseline.to_json()} if result.baseline else {}),
    }


SUMMARY = "_summary.json"


def read_summary(findings: Path, run_date: str | None = None) -> tuple[Path, dict, list[str]]:
    """A fleet run's summary as `fleet --format json` printed it and `fleet --out` wrote it beside
    the findings (``_summary.json``), read without an engine: (its path, the document, the run
    dates found). ``findings`` is a findings directory (``OUT``: the run of ``run_date``, else the
    latest) or one run's directory (``OUT/run_date=...``). A usage error naming the file or
    directory when there is no such run or the file is not a summary this tool writes."""
    from auditor import safe_io, safe_json

    if (findings / SUMMARY).is_file():
        runs = [findings.name.removeprefix("run_date=")]
        path = findings / SUMMARY
    else:
        by_date = {p.parent.name.removeprefix("run_date="): p for p in findings.glob(f"run_date=*/{SUMMARY}")}
        runs = sorted(by_date)
        if not runs:
            raise UsageError(
                f"{findings}: no fleet run here (expected run_date=YYYY-MM-DD/{SUMMARY}, written by fleet --out)"
            )
        if run_date is not None and run_date not in by_date:
            raise UsageError(f"{findings}: no run of {run_date} (runs: {', '.join(runs)})")
        path = by_date[run_date or runs[-1]]
    try:
        doc = safe_json.loads(safe_io.read_text(path), str(path))
    except (OSError, ValueError) as e:  # FileRefused, JSONTooDeep, a decode error: one line naming it
        raise UsageError(f"{path}: unreadable fleet summary ({' '.join(str(e).split())})") from None
    if not (
        isinstance(doc, dict)
        and doc.get("schema_version") == 1
        and isinstance(doc.get("clusters"), list)
        and isinstance(doc.get("rules"), list)
        and isinstance(doc.get("totals"), dict)
    ):
        raise UsageError(
            f"{path}: not a fleet summary this tool writes (schema_version 1, clusters, rules, totals)"
        )
    return path, doc, runs


def write_summary(result: FleetResult) -> None:
    """summary.json beside the findings (local output directories only; Spark-side paths get
    the Parquet findings, and the summary is printed)."""
    if result.out and not REMOTE.match(result.out):
        # A leading underscore: Spark's and Hive's Parquet readers skip the file.
        path = Path(_run_dir(result.out, result.run_date)) / SUMMARY
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(summary_json(result), indent=2) + "\n", encoding="utf-8")


def note_replaced_run(out: str | None, run_date: str | None) -> None:
    """fleet --out: a run of the same date is replaced, and says so (local roots)."""
    if out is None or REMOTE.match(out):
        return
    day = run_date or dt.date.today().isoformat()
    run_dir = Path(out) / f"run_date={day}"
    if run_dir.is_dir() and any(run_dir.iterdir()):
        say(f"note: replacing the findings of run_date={day} under {out}")
