"""Run the selected rules over loaded tables, inside the engine.

Every rule's DataFrame gets its code, name and (possibly overridden) severity and becomes
an engine table; the tables are unioned in plain SQL, cluster names joined in, exemptions
marked and the fingerprint computed, again as an engine table (``findings_table``). `check`
then reads that one small table (``collect_findings``, its only action); the fleet job
aggregates it and writes it to Parquet instead.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence

from auditor.config import AuditConfig
from auditor.engine import root_causes
from auditor.engine.base import Engine
from auditor.engine.tables import VIEW_PREFIX, Tables
from auditor.errors import AuditorError, SnapshotError
from auditor.findings import CHECK_COLUMNS, AuditResult, Finding
from auditor.frames import F, join
from auditor.progress import NO_PROGRESS, Progress
from auditor.registry import Rule, rule_docs
from auditor.severity import ROW_SEVERITY, SEVERITIES
from auditor.snapshot.io import SnapshotRef

FINDINGS_SQL_COLUMNS = ", ".join(("rule", "name", "severity", *CHECK_COLUMNS))
CHECK_SQL_COLUMNS = ", ".join(CHECK_COLUMNS)


def _literal(word: str) -> str:
    """A rule's code, name or severity as a SQL string literal. The registry admits only plain
    words for them (auditor/registry.py), which both engines quote alike; anything else
    would be read differently (DuckDB doubles a quote, Spark SQL escapes it), so it is refused."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", word):
        raise ValueError(f"not a plain word for a SQL literal: {word!r}")
    return f"'{word}'"


def _severity_sql(rule: Rule, config: AuditConfig) -> str:
    """A finding's severity: the one kafka-audit.toml sets for the rule, else the row's own
    (``ROW_SEVERITY``, when it is a severity), else the rule's declared one."""
    if rule.code in config.severity:
        return _literal(config.severity[rule.code])
    known = ", ".join(_literal(s) for s in SEVERITIES)
    return f"CASE WHEN {ROW_SEVERITY} IN ({known}) THEN {ROW_SEVERITY} ELSE {_literal(rule.severity)} END"


def compile_rules(
    tables: Tables, rules: Sequence[Rule], config: AuditConfig, progress: Progress = NO_PROGRESS
) -> list[str]:
    """Each rule's findings as an engine view, or, where the engine runs rules as jobs of
    their own (``Engine.rules_per_table``), the union of a few rules' findings as a table;
    every rule's plan from the plan cache when it holds it. Returns the names the final stage
    unions. The shared transforms the rules declare (``uses``) are materialised first, so
    building a rule's DataFrame runs no engine job. Rules the lint layer produces have no
    DataFrame and are skipped."""
    checks = [r for r in rules if r.func is not None]
    progress.stage("rules", total=len(checks))
    tables.materialise(transform for rule in checks for transform in rule.uses)
    engine = tables.engine
    plans = []
    for rule in checks:
        params = config.params_of(rule)
        plan = tables.plan(
            "findings_" + rule.code.lower(),
            lambda r=rule, p=params: shape_findings(tables, r, p),
            params=dict(params),
        )
        # Code, name and severity are literals around the plan, not in it: a severity set in
        # kafka-audit.toml compiles nothing.
        labels = ", ".join(
            f"{_literal(value)} AS {column}" for column, value in (("rule", rule.code), ("name", rule.name))
        )
        severity = _severity_sql(rule, config)
        plans.append(
            (
                rule.code.lower(),
                f"SELECT {labels}, {severity} AS severity, {CHECK_SQL_COLUMNS} FROM ({plan}) AS {rule.code.lower()}",
            )
        )
        progress.advance()
    size = engine.rules_per_table or 1
    names = []
    for group in (plans[i : i + size] for i in range(0, len(plans), size)):
        name = "findings_" + "_".join(dict.fromkeys((group[0][0], group[-1][0])))
        union = " UNION ALL ".join(sql for _code, sql in group)
        engine.create(name, union, reuse=engine.rules_per_table is not None, deferred=True)
        names.append(VIEW_PREFIX + name)
        if engine.rules_per_table is not None:
            tables.rule_tables.append(name)
    return names


def findings_table(
    tables: Tables,
    rules: Sequence[Rule],
    config: AuditConfig,
    today: dt.date | None = None,
    *,
    materialize: bool = False,
    progress: Progress = NO_PROGRESS,
) -> str:
    """Run the rules; returns the engine table of every finding, with cluster names, the
    fingerprint, ``exempted_by`` (the reason of the first matching exemption, or null) and
    ``cause`` (the id of the root cause that explains it, or null: auditor/engine/root_causes.py).
    The one place exemptions are matched, for check, fleet, lint and preflight alike; their
    patterns are in the dialect both engines read alike (auditor/exemptions.py). The final stage goes through the plan cache too: its plan depends only on the
    active exemptions. It is a view (read once, by `check`) unless
    ``materialize`` (the fleet job reads it several times)."""
    try:
        compiled = compile_rules(tables, rules, config, progress)
    except BaseException:
        tables.engine.settle(raise_errors=False)  # no job of this audit outlives it
        raise
    tables.engine.settle()
    if tables.engine.rules_per_table is not None:
        # Every rule's findings are a table now: the shared transforms are read by the root
        # causes at most (their memory is the stages' after this, at 10M partitions).
        tables.release(keep=root_causes.READS)
    progress.stage("findings")
    columns = FINDINGS_SQL_COLUMNS
    union = " UNION ALL ".join(f"SELECT {columns} FROM {name}" for name in compiled)
    if not compiled:  # no rule selected: an empty result with the same columns
        union = f"SELECT {', '.join('CAST(NULL AS STRING) AS ' + c for c in columns.split(', '))} WHERE 1 = 0"
    active, _expired = config.active_exemptions(today)
    # The union is the plan's input, not part of it: one plan serves every selection of rules
    # (`--select`, `ignore` in kafka-audit.toml), so the bundle holds it for all of them.
    key = {"exemptions": [[e.reason, list(e.rules), e.cluster, e.resource] for e in active]}
    final = tables.compile(
        "findings_final", lambda: _final_stage(tables, active), params=key, inputs={"findings_all": union}
    )
    # read once, by the stage that adds `cause`
    return root_causes.attach(tables, final, [r.code for r in rules], reuse=materialize)


def _final_stage(tables: Tables, active):
    findings = tables.session.table(VIEW_PREFIX + "findings_all")
    clusters = tables.clusters.select("cluster_id", F.col("cluster_name").alias("cluster"))
    # A finding about a cluster of the previous fleet run that has no snapshot now (FLT004)
    # is named as that run named it (the table is empty outside `fleet --previous`).
    earlier = tables.previous_clusters.select("cluster_id", F.col("cluster_name").alias("earlier_name"))
    out = (
        join(join(findings, clusters, "cluster_id", "left"), earlier, "cluster_id", "left")
        .withColumn("cluster", F.coalesce(F.col("cluster"), F.col("earlier_name"), F.col("cluster_id")))
        .drop("earlier_name")
    )
    exempted = F.lit(None).cast("string")
    for ex in reversed(active):  # the first matching exemption names the reason
        cond = F.lit(True)
        if ex.rules:
            cond = cond & F.col("rule").isin(*ex.rules)
        if ex.cluster:
            cond = cond & F.col("cluster").rlike(ex.cluster)
        if ex.resource:
            cond = cond & F.col("resource_name").rlike(ex.resource)
        exempted = F.when(cond, F.lit(ex.reason)).otherwise(exempted)
    key = F.concat_ws("|", F.col("rule"), F.col("cluster"), F.col("resource_type"), F.col("resource_name"))
    return out.select(
        "rule",
        "name",
        "severity",
        "cluster_id",
        "cluster",
        "resource_type",
        "resource_name",
        "message",
        "evidence",
        F.substring(F.sha2(key, 256), 1, 32).alias("fingerprint"),
        exempted.alias("exempted_by"),
    )


def shape_findings(tables: Tables, rule: Rule, params):
    """A rule's DataFrame as the columns every check returns, each a string, and the row's
    severity (null unless the check returns ``ROW_SEVERITY``; compile_rules adds the rule's
    code, name and severity)."""
    with tables.building(f"rule {rule.code}"):
        df = rule.func(tables, params)
    missing = [c for c in CHECK_COLUMNS if c not in df.columns]
    if missing:
        raise TypeError(f"rule {rule.code} returned a DataFrame without {missing}")
    row_severity = F.col(ROW_SEVERITY) if ROW_SEVERITY in df.columns else F.lit(None)
    return df.select(
        *[F.col(c).cast("string") for c in CHECK_COLUMNS], row_severity.cast("string").alias(ROW_SEVERITY)
    )


def collect_findings(engine: Engine, table: str) -> tuple[list[Finding], int]:
    """(findings that are not exempted, how many were exempted). The one action of `check`."""
    findings, exempted = read_findings(engine, table)
    return findings, len(exempted)


def read_findings(engine: Engine, table: str) -> tuple[list[Finding], list[str]]:
    """(findings that are not exempted, the fingerprints of those exempted): lint counts
    the exempted across its runs by fingerprint."""
    findings, exempted = [], []
    for data in engine.rows(table):
        if data.pop("exempted_by"):
            exempted.append(data["fingerprint"])
        else:
            findings.append(Finding.from_row(data))
    return findings, exempted


def incomplete_sources(refs: Sequence[SnapshotRef]) -> list[dict]:
    return [
        {"cluster": r.manifest.cluster_name, **{k: e.get(k) for k in ("source", "target", "message")}}
        for r in refs
        for e in r.manifest.errors
    ]


def run_audit(
    engine: Engine,
    refs: Sequence[SnapshotRef],
    config: AuditConfig,
    scopes: tuple[str, ...] = ("cluster",),
    progress: Progress = NO_PROGRESS,
) -> AuditResult:
    from auditor import coverage

    rules = config.rules(scopes)
    try:
        progress.stage("loading snapshots")
        tables = engine.load(refs)
        table = findings_table(tables, rules, config, progress=progress)
        findings, exempted = collect_findings(engine, table)  # still the "findings" stage
    except AuditorError:
        raise
    except Exception:
        # Corrupt Parquet pages surface only when the engine reads them: name the file.
        from auditor.snapshot.io import verify_data

        problem = next((p for p in map(verify_data, refs) if p), None)
        if problem is not None:
            raise SnapshotError(problem) from None
        raise
    _active, expired = config.active_exemptions()
    notes = [f"exemption expired on {e.expires}: {e.reason}" for e in expired]
    return AuditResult(
        findings=findings,
        clusters=[
            {
                "id": r.manifest.cluster_id,
                "name": r.manifest.cluster_name,
                **{k: v for k, v in r.manifest.cluster.items() if k not in ("id", "name")},
            }
            for r in refs
        ],
        incomplete=incomplete_sources(refs),
        engine=engine.name,
        exempted=exempted,
        notes=notes,
        coverage=coverage.compute(refs, rules),
        rule_docs=rule_docs(rules),
    )
