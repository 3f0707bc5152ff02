"""``kafka-audit lint``: the proposed files -> a snapshot -> the static rules -> findings at file:line.

Runs on the embedded DuckDB engine only (no JVM, no pyspark import). Steps:

1. read the files (auditor.lint.inputs), with line numbers and suppression comments;
2. build snapshot tables from them, or apply them to ``--against`` (auditor.lint.snapshot);
3. run the lint rules through the normal runner (compile_rules), config file included;
4. map each finding back to (file, line) by its resource; with ``--against``, findings about
   parts of the cluster the files do not touch are left out;
5. apply inline suppressions (unused ones become CFG900) and the baseline.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from pathlib import Path

from auditor.config import AuditConfig
from auditor.engine.duckdb_engine import DuckDBEngine
from auditor.engine.plans import PlanCache
from auditor.errors import UsageError
from auditor.findings import AuditResult, Finding, fingerprint
from auditor.lint.inputs import LintInputError, LintInputs, read_inputs
from auditor.lint.snapshot import against_tables, expand_templates, lint_manifest, proposed_tables
from auditor.snapshot.io import SnapshotRef, open_snapshot
from auditor.snapshot.schema import TABLES

# The static rules: what files alone can decide.
STATIC_RULES = ("REP001", "REP002", "REP003", "REP004", "REP005", "THR003", "THR004", "THR005", "THR006",
                "DSK004", "DSK005", "CFG001", "CFG002", "CFG004", "MSK001", "MSK002")
# With --against: the cluster's broker count and the change itself.
AGAINST_RULES = ("REP010", "THR007")
SUPPRESSION_RULE = "CFG900"

# For broker findings: the line of the setting the rule is about.
BROKER_KEY = {"THR003": "num.network.threads", "THR004": "num.io.threads", "THR005": "num.network.threads",
              "THR006": "queued.max.requests", "DSK004": "log.dirs", "DSK005": "log.dirs"}

BASELINE_VERSION = 1


class Locator:
    """Resources of the proposed files -> (file, line, anchor lines)."""

    def __init__(self, inputs: LintInputs):
        self.inputs = inputs
        self.topics = {}
        for t in inputs.topics:
            self.topics.setdefault(t.name, t)
        self.brokers = {str(b.broker_id): b for b in inputs.brokers}

    def _broker_key(self, broker, key):
        for k in (key, "log.dir") if key == "log.dirs" else (key,):
            if k and k in broker.entries:
                line = broker.entries[k][1]
                return broker.file, line, (line,)
        return broker.file, 1, (1,)

    def locate(self, f: Finding):
        rt, name = f.resource_type, f.resource_name
        if rt == "topic" and name in self.topics:
            t = self.topics[name]
            return t.file, t.line, t.anchors
        if rt == "broker" and name in self.brokers:
            return self._broker_key(self.brokers[name], BROKER_KEY.get(f.rule))
        if rt == "log_dir":
            bid = name.split(":", 1)[0]
            if bid in self.brokers:
                return self._broker_key(self.brokers[bid], "log.dirs")
        if rt == "config":
            entity, sep, key = name.partition(": ")
            if sep and entity.startswith("topic ") and entity[6:] in self.topics:
                t = self.topics[entity[6:]]
                if key in t.configs:
                    line = t.configs[key][1]
                    return t.file, line, (line,)
                return t.file, t.line, t.anchors
            if sep and entity.startswith("broker ") and entity[7:] in self.brokers:
                return self._broker_key(self.brokers[entity[7:]], key)
            if not sep:  # a cluster-wide key (CFG002 on brokers, CFG004): the first file setting it
                for b in self.inputs.brokers:
                    if name in b.entries:
                        line = b.entries[name][1]
                        return b.file, line, (line,)
        return None


def _check_suppression_codes(inputs: LintInputs, known: set[str]) -> None:
    for s in inputs.suppressions:
        for code in s.codes:
            if code not in known:
                raise LintInputError(f"{s.file}:{s.line}: suppression names unknown rule {code} "
                                     "(see 'kafka-audit rules list')")


class LintEngine(DuckDBEngine):
    """The embedded DuckDB engine, minus the cost of what lint rarely needs.

    The rules' compiled SQL normally comes from the plan cache (auditor/engine/plans.py), so
    sqlframe's session (and sqlglot's dialects, ~1 s to import and set up) is created only
    when a plan has to be compiled. Rows are loaded from JSON Lines, like snapshots, with the
    declared column types; findings are read back with plain SQL. Tables and views are
    created as DuckDBEngine does (``create``)."""

    def __init__(self, workdir: str):
        # Not super().__init__(): that would set up sqlframe's session now.
        import duckdb

        self.conn = duckdb.connect(database=":memory:")
        self.conn.execute("SET autoinstall_known_extensions = false")
        self.plan_cache = PlanCache("duckdb")
        self.workdir = Path(workdir)
        self._session = None

    @property
    def session(self):
        if self._session is None:
            from sqlframe.duckdb import DuckDBSession

            self._session = DuckDBSession(conn=self.conn)
        return self._session

    def register(self, manifest, tables: dict[str, list[dict]]) -> None:
        """Load rows as the snapshot tables, typed as declared in auditor/snapshot/schema.py."""
        from auditor.engine.base import VIEW_PREFIX
        from auditor.snapshot.schema import duckdb_type

        cid = manifest.cluster_id
        for name, table in TABLES.items():
            if name == "clusters":
                rows = [manifest.cluster_row()]
            elif name == "source_errors":
                rows = []
            else:
                rows = [{**{c: r.get(c) for c in table.names}, "cluster_id": cid} for r in tables.get(name, [])]
            decl = ", ".join(f"{c.name} {duckdb_type(c.type)}" for c in table.columns)
            if not rows:
                self.conn.execute(f"CREATE OR REPLACE TABLE {VIEW_PREFIX}{name} ({decl})")
                continue
            path = self.workdir / f"{name}.jsonl"
            with open(path, "w", encoding="utf-8") as fh:
                for r in rows:
                    fh.write(json.dumps(r, separators=(",", ":")) + "\n")
            columns = ", ".join(f"'{c.name}': '{duckdb_type(c.type)}'" for c in table.columns)
            quoted = "'" + str(path).replace("'", "''") + "'"
            self.conn.execute(f"CREATE OR REPLACE TABLE {VIEW_PREFIX}{name} AS SELECT * FROM "
                              f"read_json({quoted}, format = 'newline_delimited', columns = {{{columns}}})")

    def close(self) -> None:
        if self._session is not None:
            self._session.stop()
        else:
            self.conn.close()


def _run_rules(engine: LintEngine, tables, rules, cfg: AuditConfig, cluster_name: str) -> tuple[list[Finding], int]:
    """Each rule's findings as an engine table (from the plan cache when it has them), then
    one plain SQL union read back; exemptions of the config file applied like check does."""
    from auditor.engine.runner import FINDINGS_SQL_COLUMNS, compile_rules
    from auditor.findings import parse_evidence

    names = compile_rules(tables, rules, cfg)
    if not names:
        return [], 0
    sql = " UNION ALL ".join(f"SELECT {FINDINGS_SQL_COLUMNS} FROM {n}" for n in names)
    active, _expired = cfg.active_exemptions()
    out, exempted = [], 0
    for rule, name, severity, cid, rtype, rname, message, evidence in engine.conn.execute(sql).fetchall():
        if any(ex.matches(rule, cluster_name, rname) for ex in active):
            exempted += 1
            continue
        out.append(Finding(rule=rule, name=name, severity=severity, cluster=cluster_name, cluster_id=cid,
                           resource_type=rtype, resource_name=rname, message=message,
                           evidence=parse_evidence(evidence),
                           fingerprint=fingerprint(rule, cluster_name, rtype, rname)))
    return out, exempted


def read_baseline(path: str) -> set[str]:
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{p}: baseline file not found (write one with --write-baseline)") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"{p}:{e.lineno}: baseline is not valid JSON ({e.msg})") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{p}: unreadable baseline ({e})") from None
    items = raw.get("findings") if isinstance(raw, dict) else raw
    if not isinstance(items, list):
        raise UsageError(f"{p}: baseline must hold a 'findings' list")
    out = set()
    for item in items:
        fp = item.get("fingerprint") if isinstance(item, dict) else item
        if not isinstance(fp, str):
            raise UsageError(f"{p}: every baseline entry needs a fingerprint")
        out.add(fp)
    return out


def baseline_json(findings: list[Finding]) -> str:
    entries = sorted(
        ({"fingerprint": f.fingerprint, "rule": f.rule, "resource": f"{f.resource_type}:{f.resource_name}",
          **({"file": f.location["file"]} if f.location else {})} for f in findings),
        key=lambda e: (e["rule"], e["resource"], e["fingerprint"]))
    unique = list({e["fingerprint"]: e for e in entries}.values())
    return json.dumps({"schema_version": BASELINE_VERSION, "tool": "kafka-auditor", "kind": "lint-baseline",
                       "findings": unique}, indent=2) + "\n"


def run_lint(paths, *, against: str | None = None, config: AuditConfig | None = None,
             baseline: set[str] | None = None) -> AuditResult:
    from auditor.engine.base import Tables
    from auditor.engine.runner import incomplete_sources
    from auditor.registry import load_rules

    cfg = config or AuditConfig()
    rules = load_rules()
    inputs = read_inputs(paths)
    _check_suppression_codes(inputs, set(rules))

    ref_against: SnapshotRef | None = open_snapshot(against) if against else None
    if ref_against is not None:
        expand_templates(inputs, ref_against)
    manifest = lint_manifest(ref_against)
    proposed = proposed_tables(inputs)
    tables = against_tables(ref_against, proposed) if ref_against else proposed

    wanted = set(STATIC_RULES) | (set(AGAINST_RULES) if ref_against else set())
    selected = cfg.rules(("cluster", "change"))
    engine_rules = [r for r in selected if r.code in wanted]
    report_unused = any(r.code == SUPPRESSION_RULE for r in selected)

    with tempfile.TemporaryDirectory(prefix="kafka-audit-lint-") as workdir:
        engine = LintEngine(workdir)
        try:
            engine.register(manifest, tables)
            ref = SnapshotRef(path=str(against or "lint"), manifest=manifest, files={})
            raw, exempted = _run_rules(engine, Tables(engine, [ref]), engine_rules, cfg, manifest.cluster_name)
        finally:
            engine.close()

    locator = Locator(inputs)
    findings: dict[str, Finding] = {}
    anchors: dict[str, tuple] = {}
    outside = 0
    first_file = inputs.files[0]
    for f in raw:
        where = locator.locate(f)
        if where is None:
            if ref_against is not None:
                outside += 1  # about the cluster as it is, not about these files
                continue
            where = (first_file, 1, (1,))
        file, line, lines = where
        if f.fingerprint not in findings:
            findings[f.fingerprint] = replace(f, location={"file": file, "line": line})
            anchors[f.fingerprint] = (file, lines)

    kept, suppressed = [], 0
    for fp, f in findings.items():
        file, lines = anchors[fp]
        hit = next((s for s in inputs.suppressions
                    if s.file == file and f.rule in s.codes and any(s.covers(n) for n in lines)), None)
        if hit is not None:
            hit.used += 1
            suppressed += 1
        else:
            kept.append(f)

    if report_unused:
        rule = rules[SUPPRESSION_RULE]
        severity = cfg.severity_of(rule)
        ran = {r.code for r in engine_rules}
        for s in inputs.suppressions:
            if s.used or not ran.intersection(s.codes):
                continue  # used, or about rules this run did not apply (deselected, THR007 without --against)
            name = f"{s.file}:{s.line}"
            kept.append(Finding(
                rule=rule.code, name=rule.name, severity=severity, cluster=manifest.cluster_name,
                cluster_id=manifest.cluster_id, resource_type="suppression", resource_name=name,
                message=f"suppression of {', '.join(s.codes)} matched no finding (reason was: {s.reason}); remove it",
                evidence={"codes": list(s.codes), "reason": s.reason},
                fingerprint=fingerprint(rule.code, manifest.cluster_name, "suppression", name),
                location={"file": s.file, "line": s.line}))

    baselined = 0
    if baseline:
        before = len(kept)
        kept = [f for f in kept if f.fingerprint not in baseline]
        baselined = before - len(kept)

    notes = []
    if suppressed:
        notes.append(f"{suppressed} finding(s) suppressed inline")
    if baselined:
        notes.append(f"{baselined} finding(s) in the baseline")
    if outside:
        notes.append(f"{outside} finding(s) about parts of {manifest.cluster_name} these files do not touch "
                     "left out (see kafka-audit check)")
    cluster = {"id": manifest.cluster_id, "name": manifest.cluster_name,
               **{k: v for k, v in manifest.cluster.items() if k not in ("id", "name")}}
    # A snapshot whose collection failed somewhere cannot vouch for a clean lint (exit 3).
    incomplete = incomplete_sources([ref_against]) if ref_against is not None else []
    result = AuditResult(findings=kept, clusters=[cluster], incomplete=incomplete, engine="duckdb",
                         exempted=exempted, notes=notes)
    result.files = list(inputs.files)  # for the text report
    return result
