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
from collections import Counter
from collections.abc import Sequence

from auditor.config import AuditConfig
from auditor.engine import root_causes
from auditor.engine.base import Engine
from auditor.engine.tables import VIEW_PREFIX, Tables
from auditor.errors import AuditorError, SnapshotError
from auditor.findings import CHECK_COLUMNS, WARNING_PREFIX, AuditResult, Finding
from auditor.frames import F, join
from auditor.progress import NO_PROGRESS, Progress
from auditor.registry import Rule, load_rules, rule_docs
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


def fusion_groups(catalogue: Sequence[Rule]) -> dict[str, str]:
    """Rule code -> its fused plan's name, for the DataFrame checks of ``catalogue`` (the whole
    registry). The rules that read the same shared input are one plan: a rule goes with the
    shared transform it declares (``uses``) that the most rules of the catalogue read (ties by
    name), a rule without one with the first snapshot table it needs. Derived from the
    declarations alone, so a rule added or changed regroups itself; which group a rule is in
    changes how many statements run, never what a rule finds."""
    readers = Counter(u.__name__ for r in catalogue for u in dict.fromkeys(r.uses))
    groups = {}
    for rule in catalogue:
        if rule.uses:
            key = min((u.__name__ for u in rule.uses), key=lambda name: (-readers[name], name))
        else:
            need = rule.needs[0] if rule.needs else "none"
            key = "table_" + (need if isinstance(need, str) else need[0])
        groups[rule.code] = key
    return groups


def compile_rules(
    tables: Tables, rules: Sequence[Rule], config: AuditConfig, progress: Progress = NO_PROGRESS
) -> list[str]:
    """The selected rules' findings as engine tables (or views, ``Engine.rules_per_table``
    None); returns the names the final stage unions. Each rule's findings are a branch
    ``SELECT 'CODE' AS rule, 'name' AS name, <severity> AS severity, <columns> FROM (<plan>)``;
    the branches are unioned into a few statements.

    Fused (``Engine.fused``, the default): the rules that read the same shared input
    (``fusion_groups``) are one cached plan and one statement (several groups per statement
    up to ``rules_per_table`` rules on Spark); a rule whose parameters differ from its
    defaults is planned alone (its parameters are its plan's key). Per rule (fused off, the
    path fusion is compared with): each rule's plan cached alone, ``rules_per_table`` rules per
    statement. Either way every plan comes from the plan cache when it holds it, the shared
    transforms the rules declare (``uses``) are materialised before any check is built (so
    building one runs no engine job), and a rule that cannot be compiled or run is left out
    and recorded in ``tables.failed`` (reported as not evaluated, auditor/coverage.py): the
    other rules are not taken down with it. Rules the lint layer produces have no DataFrame
    and are skipped."""
    checks = [r for r in rules if r.func is not None]
    progress.stage("rules", total=len(checks))
    engine = tables.engine
    branches: dict[str, str] = {}  # code -> its branch's SQL
    units: list[list[str]] = []  # the codes each statement unions, in order
    if engine.fused:
        registry = load_rules()
        catalogue = [r for r in registry.values() if r.func is not None]
        group_of = fusion_groups(catalogue)
        by_group: dict[str, list[Rule]] = {}
        alone = []
        for rule in checks:
            if registry.get(rule.code) == rule and dict(config.params_of(rule)) == rule.defaults():
                by_group.setdefault(group_of[rule.code], []).append(rule)
            else:
                # its parameters change its plan, or it is not the registry's rule of that
                # code (a test's, a tool's): the fused plan is built from the registry's
                alone.append(rule)
        for group, selected in by_group.items():
            members = [r for r in catalogue if group_of[r.code] == group]
            sqls, failed = tables.plan_group(
                "fused_" + group,
                {r.code: (lambda r=r: shape_findings(tables, r, r.bind())) for r in members},
                [r.code for r in selected],
                params={r.code: r.defaults() for r in members},
                prepare=lambda members=members: tables.materialise(u for r in members for u in r.uses),
            )
            for rule in selected:
                if rule.code in sqls:
                    tables.materialise(rule.uses)  # (created by the plan's restore already)
                    branches[rule.code] = _branch(rule, config, sqls[rule.code])
                else:
                    _fail(tables, rule.code, failed[rule.code])
                progress.advance()
            units.append([r.code for r in selected if r.code in branches])
        checks = alone
    tables.materialise(transform for rule in checks for transform in rule.uses)
    for rule in checks:
        params = config.params_of(rule)
        try:
            plan = tables.plan(
                "findings_" + rule.code.lower(),
                lambda r=rule, p=params: shape_findings(tables, r, p),
                params=dict(params),
            )
        except AuditorError:
            raise
        except Exception as e:  # noqa: BLE001 (a rule's own error: reported, not fatal)
            _fail(tables, rule.code, e)
        else:
            branches[rule.code] = _branch(rule, config, plan)
            units.append([rule.code])
        progress.advance()
    return _run_branches(tables, branches, [u for u in units if u])


def _branch(rule: Rule, config: AuditConfig, plan: str) -> str:
    """A rule's findings with its code, name and severity: literals around the plan, not in it,
    so a severity set in kafka-audit.toml compiles nothing."""
    labels = ", ".join(
        f"{_literal(value)} AS {column}" for column, value in (("rule", rule.code), ("name", rule.name))
    )
    severity = _severity_sql(rule, config)
    alias = rule.code.lower()
    return f"SELECT {labels}, {severity} AS severity, {CHECK_SQL_COLUMNS} FROM ({plan}) AS {alias}"


def _run_branches(tables: Tables, branches: dict[str, str], units: list[list[str]]) -> list[str]:
    """Create the statements: each unit (a fused group, or one rule) alone on DuckDB, units packed
    up to ``rules_per_table`` rules per statement on Spark, never split. A statement that fails
    runs again rule by rule; a rule whose own statement fails is recorded as failed. Returns
    the names of the tables created."""
    engine = tables.engine
    size = engine.rules_per_table or 1
    statements: list[list[str]] = []
    for unit in units:
        if statements and len(statements[-1]) + len(unit) <= size:
            statements[-1] += unit
        else:
            statements.append(list(unit))
    names = _create(tables, {_statement_name(codes): codes for codes in statements}, branches)
    # (a failed shared transform fails the statements that read it: they are the ones rerun)
    failed = [name for name in _settled(tables) if name in names]
    again = {f"findings_{code.lower()}": [code] for name in failed for code in names.pop(name)}
    if again:
        names.update(_create(tables, again, branches))
        for name, error in _settled(tables).items():
            if name in again:
                _fail(tables, names.pop(name)[0], error)
    if engine.rules_per_table is not None:
        tables.rule_tables.extend(names)
    return [VIEW_PREFIX + name for name in names]


def _statement_name(codes: list[str]) -> str:
    return "findings_" + "_".join(dict.fromkeys((codes[0].lower(), codes[-1].lower())))


def _create(
    tables: Tables, statements: dict[str, list[str]], branches: dict[str, str]
) -> dict[str, list[str]]:
    """Create each statement (deferred); a statement the engine runs at once and that fails is
    run again by the caller like one that failed in the background. Returns name -> codes of
    the statements created or under way; the synchronous failures are kept for ``_settled``."""
    engine = tables.engine
    created = {}
    for name, codes in statements.items():
        union = " UNION ALL ".join(branches[code] for code in codes)
        created[name] = codes
        try:
            engine.create(name, union, reuse=engine.rules_per_table is not None, deferred=True)
        except AuditorError:
            raise
        except Exception as e:  # noqa: BLE001 (settled below, with the background failures)
            tables.statement_errors[name] = e
    return created


def _settled(tables: Tables) -> dict[str, BaseException]:
    """Wait for the rules' statements; their failures by table name. Snapshot data that does
    not decode fails whatever reads it: that is the snapshot's error (named by run_audit), not
    a rule's."""
    failures = {**tables.statement_errors, **tables.engine.settle(raise_errors=False)}
    tables.statement_errors.clear()
    if failures:
        from auditor.snapshot.io import verify_data

        problem = next((p for p in map(verify_data, tables.refs) if p), None)
        if problem is not None:
            raise SnapshotError(problem)
    return failures


def failure_notes(tables: Tables) -> list[str]:
    """A warning per rule that could not be evaluated (``tables.failed``): what every command says."""
    return [
        f"{WARNING_PREFIX}rule {code} could not be evaluated: {why}"
        for code, why in sorted(tables.failed.items())
    ]


def _fail(tables: Tables, code: str, error: BaseException) -> None:
    """Record that rule ``code`` could not be evaluated, and why (one line)."""
    text = (str(error).strip().splitlines() or [type(error).__name__])[0]
    tables.failed[code] = f"{type(error).__name__}: {text[:300]}"


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
    notes = [f"exemption expired on {e.expires}: {e.reason}" for e in expired] + failure_notes(tables)
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
        coverage=coverage.compute(refs, rules, tables.failed),
        rule_docs=rule_docs(rules),
    )
