"""``kafka-audit lint``: the proposed files -> a snapshot -> the static rules -> findings at file:line.

Runs on the embedded DuckDB engine only (no JVM, no pyspark import). Steps:

1. read the files (auditor.lint.inputs), with line numbers and suppression comments; files
   that are not a broker's or topic definitions are skipped with a note (or a warning,
   ``--strict``: an error, when nothing in them is recognised);
2. build snapshot tables from them, or apply them to ``--against`` (auditor.lint.change_tables);
3. run the lint rules through the normal runner (findings_table: the same exemption match
   and fingerprint as check, fleet and preflight), config file included;
   a topic defined differently in several files gives one run per definition (and a
   warning naming each file:line), so each definition gets its own verdict;
4. map each finding back to (file, line) by its resource (every identical definition of a
   topic gets it); with ``--against``, findings about parts of the cluster the files do not
   touch are left out;
5. apply inline suppressions (unused ones become CFG900) and the baseline (auditor/baseline.py).

Files are read in sorted order and findings sorted by location, so the result does not
depend on the order of the arguments.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from pathlib import Path

from auditor.baseline import Baseline
from auditor.baseline import apply as apply_baseline
from auditor.config import AuditConfig
from auditor.engine.duckdb_engine import DuckDBEngine
from auditor.findings import WARNING_PREFIX, AuditResult, Finding, fingerprint
from auditor.lint.change_tables import (
    LINT_CLUSTER,
    against_tables,
    expand_templates,
    lint_manifest,
    proposed_tables,
)
from auditor.lint.inputs import (
    MAX_PLACES,
    LintInputError,
    LintInputs,
    TopicDef,
    definition_messages,
    definition_variants,
    read_inputs,
)
from auditor.lint.placement import (
    Placement,
    SuppressionIndex,
    default_key,
    every_inheriting,
    inherited_default,
)
from auditor.snapshot.io import SnapshotRef, open_snapshot
from auditor.snapshot.schema import TABLES

# Which rules lint runs is declared on each rule (runs_in "lint": what files alone can decide;
# "lint-against": with --against, the cluster's broker count and the change itself), and so is
# the setting a broker finding points at (lint_key): auditor/declarations.py.
SUPPRESSION_RULE = "CFG900"
PLATFORM_RULE = "CFG009"  # a value the managed platform refuses: read by the formats (Refusal)


class Locator:
    """Resources of the proposed files -> every (file, line, anchor lines) they come from.

    ``world``: the definition linted for each topic name in this run (a variant: one or more
    identical definitions); a finding about the topic is reported at each of them."""

    def __init__(self, inputs: LintInputs, world: dict[str, list[TopicDef]], keys: dict[str, str]):
        self.inputs = inputs
        self.keys = keys  # rule code -> the setting its broker findings point at
        self.topics = world
        self.brokers = {str(b.broker_id): b for b in inputs.brokers}
        self.controllers = {str(c.broker_id): c for c in inputs.controllers}
        self.by_file = sorted(inputs.brokers + inputs.controllers, key=lambda b: (b.file, b.broker_id))

    def group_of(self, f: Finding) -> str | None:
        """The configuration resource a broker finding is about, when several brokers share it."""
        name = f.resource_name
        if f.resource_type == "log_dir":
            name = name.split(":", 1)[0]
        elif f.resource_type == "config":
            entity, sep, _key = name.partition(": ")
            if not (sep and entity.startswith("broker ")):
                return None
            name = entity[7:]
        elif f.resource_type != "broker":
            return None
        broker = self.brokers.get(name)
        return broker.group if broker is not None else None

    def _broker_key(self, broker, key):
        for k in (key, "log.dir") if key == "log.dirs" else (key,):
            if k and k in broker.entries:
                line = broker.entries[k][1]
                return [(broker.file, line, (line,))]
        return [(broker.file, broker.line, (broker.line,))]

    def _cluster(self, rule: str) -> list[tuple[str, int, tuple[int, ...]]]:
        """A cluster finding (the UPG rules): the line of the field the rule is about (its lint_key:
        kafka_version, metadata_mode, metadata_version, recorded by the format), else of that
        setting in the configuration, else the cluster resource's line."""
        key = self.keys.get(rule)
        facts = next((b.cluster for b in self.by_file if b.cluster is not None), None)
        if facts is not None and key in facts.lines:
            at = facts.lines[key]
            return [(facts.file, at, (at, facts.line))]
        for b in self.by_file:
            if key and key in b.entries:
                return self._broker_key(b, key)
        if facts is not None:
            return [(facts.file, facts.line, (facts.line,))]
        return []

    def locate(self, f: Finding, topics: list[str] | None = None) -> list[tuple[str, int, tuple[int, ...]]]:
        """Where ``f`` shows in the files; ``topics``: every topic inheriting the default ``f``
        is about, when the rule listed fewer than it counted (auditor/lint/placement.py)."""
        rt, name = f.resource_type, f.resource_name
        if rt == "cluster":
            return self._cluster(f.rule)
        if rt == "topic" and name in self.topics:
            return [(t.file, t.line, t.anchors) for t in self.topics[name]]
        if rt == "broker" and name in self.brokers:
            return self._broker_key(self.brokers[name], self.keys.get(f.rule))
        if rt == "log_dir":
            bid = name.split(":", 1)[0]
            if bid in self.brokers:
                return self._broker_key(self.brokers[bid], "log.dirs")
        if rt == "config":
            entity, sep, key = name.partition(": ")
            if sep and entity.startswith("controller ") and entity[11:] in self.controllers:
                return self._broker_key(self.controllers[entity[11:]], key)
            if sep and entity.startswith("topic ") and entity[6:] in self.topics:
                out = []
                for t in self.topics[entity[6:]]:
                    if key in t.configs:
                        line = t.configs[key][1]
                        out.append((t.file, line, (line,)))
                    else:
                        out.append((t.file, t.line, t.anchors))
                return out
            if sep and entity.startswith("broker ") and entity[7:] in self.brokers:
                return self._broker_key(self.brokers[entity[7:]], key)
            if (
                not sep
            ):  # a cluster-wide key (CFG002 on brokers, CFG004): the first file (in file order) setting it
                for b in self.by_file:
                    if name in b.entries:
                        line = b.entries[name][1]
                        return [(b.file, line, (line,))]
                # A default the linted topics inherit (REP004, REP005 name them): no file sets
                # it, so the linted topics that inherit it are where the change shows.
                named = topics if topics is not None else f.evidence.get("topics") or ()
                inheriting = [t for topic in named for t in self.topics.get(str(topic), ())]
                if inheriting:
                    return [(t.file, t.line, t.anchors) for t in inheriting]
                for b in self.by_file:  # unset: where the configuration resource is
                    if b.group:
                        return [(b.file, b.line, (b.line,))]
        return []


def upgrade_notes(inputs: LintInputs, target: str) -> list[str]:
    """One line per cluster resource the files declare: its path to ``target`` (the hops of
    auditor/kafka_upgrades.path), or what it lacks for one."""
    from auditor.kafka_upgrades import Facts, path
    from auditor.lint.versions import metadata_level_of

    out = []
    for c in inputs.clusters:
        where = f"{c.file}:{c.lines.get('kafka_version', c.line)}: {c.address}"
        if not c.kafka_version:
            out.append(f"{where}: no Kafka version declared: its path to {target} is not judged")
            continue
        hops = path(
            Facts(
                c.kafka_version,
                c.metadata_mode,
                metadata_level_of(c.metadata_version),
                platform=c.platform if c.platform == "msk" else None,
            ),
            target,
        )
        mode = c.metadata_mode or "mode not declared"
        steps = "; ".join(f"{i}. {h.title}" for i, h in enumerate(hops, 1))
        out.append(f"{where}: Kafka {c.kafka_version} ({mode}) -> {target}: {steps}")
    return out


def _check_suppression_codes(inputs: LintInputs, known: set[str]) -> None:
    for s in inputs.suppressions:
        for code in s.codes:
            if code not in known:
                raise LintInputError(
                    f"{s.file}:{s.line}: suppression names unknown rule {code} (see 'kafka-audit rules list')"
                )


class LintEngine(DuckDBEngine):
    """The embedded DuckDB engine, loaded from the rows lint read out of a change's files
    instead of a snapshot directory: each table written as JSON Lines to ``workdir`` and
    read with the declared column types. A change is always small data (its statements run
    two at a time). Everything else, plans and their cache included, is DuckDBEngine's."""

    def __init__(self, workdir: str):
        super().__init__()
        self.workdir = Path(workdir)
        self.small_data = True  # a change's files: always small

    def register(self, manifest, tables: dict[str, list[dict]]) -> None:
        """Load rows as the snapshot tables, typed as declared in auditor/snapshot/schema.py."""
        self.register_clusters([(manifest, tables)])

    def register_clusters(self, parts: list[tuple]) -> None:
        """Load several clusters' rows (manifest, tables) at once, each under its manifest's
        cluster id: one engine run for every cluster the files describe."""
        from auditor.engine.tables import VIEW_PREFIX

        self.register_previous_clusters([])  # the final stage reads it (empty outside fleet --previous)
        for name, table in TABLES.items():
            if name == "clusters":
                rows = [manifest.cluster_row() for manifest, _tables in parts]
            elif name == "source_errors":
                rows = []
            else:
                rows = [
                    {**{c: r.get(c) for c in table.names}, "cluster_id": manifest.cluster_id}
                    for manifest, tables in parts
                    for r in tables.get(name, [])
                ]
            if not rows:
                self._register_rows(table, [])
                continue
            path = self.workdir / f"{name}.jsonl"
            with open(path, "w", encoding="utf-8") as fh:
                for r in rows:
                    fh.write(json.dumps(r, separators=(",", ":")) + "\n")
            # A table, not DuckDBEngine's view over the files: lint's rules read each many times.
            self.conn.execute(
                f"CREATE OR REPLACE TABLE {VIEW_PREFIX}{name} AS {self._jsonl_select(table, [path])}"
            )


def _run_rules(tables, rules, cfg: AuditConfig) -> tuple[list[Finding], list[str]]:
    """The findings of the rules and the fingerprints of those exempted: the runner's final
    stage, as for check, fleet and preflight (one exemption match, one fingerprint)."""
    from auditor.engine.runner import findings_table, read_findings

    return read_findings(tables.engine, findings_table(tables, rules, cfg))


def _worlds(variants: dict[str, list[list[TopicDef]]]) -> list[dict[str, list[TopicDef]]]:
    """The runs a lint needs: one, unless a topic is defined differently in several files;
    then run k lints the k-th definition of each such topic (the first of the others), so
    each definition gets its own verdict at its own file:line."""
    runs = min(max((len(vs) for vs in variants.values()), default=1), MAX_PLACES)  # bounded: inputs.py
    return [{name: vs[k] if k < len(vs) else vs[0] for name, vs in variants.items()} for k in range(runs)]


def _partitions(inputs: LintInputs, against: SnapshotRef | None, manifest):
    """The clusters the files describe, each linted on its own: [(inputs of one cluster,
    its manifest)]. Every broker configuration resource (a Strimzi or CFK Kafka resource,
    Helm values, an MSK cluster with its configuration) is a cluster of its own; broker
    properties files together are one (as they always were). A topic goes with the cluster
    resource it names (Strimzi's strimzi.io/cluster label, CFK's kafkaClusterRef) when exactly
    one in the files has that name, else with the resource cluster of its own file (a Terraform
    file's MSK cluster), else with the properties files' cluster. With --against everything
    lands on the one snapshot's cluster."""
    groups: dict[tuple, list] = {}
    for b in inputs.brokers:
        if against is not None or not b.group:
            key = ("",)
        elif b.cluster is not None:
            key = (b.cluster.file, b.cluster.address)
        else:
            key = (b.file, b.group)
        groups.setdefault(key, []).append(b)
    elsewhere = [  # topics naming a cluster resource that is not the one in the files
        t for t in inputs.topics if t.cluster_ref and not any(k[1:] == (t.cluster_ref,) for k in groups)
    ]
    only_files = all(k == ("",) for k in groups)  # properties files alone: one cluster, as always
    if against is not None or only_files or (len(groups) == 1 and not elsewhere):
        return [(inputs, manifest)]
    keys = list(groups)
    files_of = {k: {b.file for b in groups[k]} for k in keys}
    topics: dict[tuple, list] = {k: [] for k in keys}
    plain = ("",)
    for t in inputs.topics:
        named = [k for k in keys if k != plain and t.cluster_ref and k[1] == t.cluster_ref]
        own = named or [k for k in keys if k != plain and t.file in files_of[k]]
        topics.setdefault(own[0] if len(own) == 1 else plain, []).append(t)
    out = []
    extra = [plain] if plain not in keys and (topics.get(plain) or inputs.controllers) else []
    for n, key in enumerate([*keys, *extra]):
        brokers = groups.get(key, [])
        facts = [b.cluster for b in brokers[:1] if b.cluster is not None]
        part = LintInputs(
            files=inputs.files,
            brokers=brokers,
            topics=topics.get(key, []),
            suppressions=inputs.suppressions,
            controllers=inputs.controllers if key == plain else [],  # with the properties files
        )
        # the same cluster name (fingerprints and baselines as for one cluster), an id of its own
        out.append((part, lint_manifest(None, facts, cluster_id=f"{LINT_CLUSTER}#{n}", brokers=brokers)))
    return out


def _refusal_findings(inputs: LintInputs, rule, cfg: AuditConfig, manifest):
    """CFG009: each value a managed platform refuses (a Refusal the formats read), at its line,
    with the key and anchors suppressions match on."""
    for r in inputs.refusals:
        name = f"{r.resource}: {r.what.split(' =')[0]}"
        f = _file_finding(
            rule,
            cfg,
            manifest,
            ("config", name),
            f"{r.what}: {r.why}",
            {"setting": r.what, "source": r.source},
            (r.file, r.line),
        )
        yield (f.fingerprint, r.file, r.line), f, r.anchors


def _file_finding(rule, cfg: AuditConfig, manifest, resource, message, evidence, at) -> Finding:
    """A finding lint itself makes about a line of a file (not from the engine: CFG009's
    refusals, CFG900's unused suppressions), fingerprinted as the engine's are."""
    resource_type, name = resource
    return Finding(
        rule=rule.code,
        name=rule.name,
        severity=cfg.severity_of(rule),
        cluster=manifest.cluster_name,
        cluster_id=manifest.cluster_id,
        resource_type=resource_type,
        resource_name=name,
        message=message,
        evidence=evidence,
        fingerprint=fingerprint(rule.code, manifest.cluster_name, resource_type, name),
        location={"file": at[0], "line": at[1]},
    )


def run_lint(
    paths,
    *,
    against: str | None = None,
    config: AuditConfig | None = None,
    baseline: Baseline | None = None,
    strict: bool = False,
    stdin=None,
    target_version: str | None = None,
) -> AuditResult:
    """Lint ``paths`` (``-``: standard input, read from ``stdin`` when given, a binary stream).
    ``target_version`` (4.0-4.4, latest): also run the rules that declare runs_in "lint-upgrade"
    (what the files alone decide of an upgrade to that release: the clusters' declared version,
    metadata mode and metadata.version, removed keys, ELR and per-broker min.insync.replicas ...),
    each set to the target's entry of the upgrade table; a note per cluster gives its path."""
    from auditor.engine.runner import failure_notes, incomplete_sources
    from auditor.engine.tables import Tables
    from auditor.registry import load_rules, rule_docs

    cfg = config or AuditConfig()
    rules = load_rules()
    target = None
    if target_version is not None:
        from auditor.kafka_upgrades import resolve_target, target_params

        target = resolve_target(target_version)
        cfg = replace(cfg, params=target_params(cfg.params, target, rules.values()))
    inputs = read_inputs(paths, stdin=stdin)
    refused = inputs.unreadable + inputs.unrecognised  # --strict: the first is the error
    if strict and refused:
        more = f" (and {len(refused) - 1} more file(s))" if len(refused) > 1 else ""
        raise LintInputError(f"{refused[0]}{more}")
    _check_suppression_codes(inputs, set(rules))
    conflicts, duplicate_notes = definition_messages(definition_variants(inputs.topics))

    ref_against: SnapshotRef | None = open_snapshot(against) if against else None
    if ref_against is not None:
        expand_templates(inputs, ref_against)
    manifest = lint_manifest(ref_against, inputs.clusters, brokers=inputs.brokers)

    commands = ("lint", "lint-against") if ref_against else ("lint",)
    if target is not None:
        commands += ("lint-upgrade",)
    wanted = {
        code for code, r in rules.items() if r.produced_by == "engine" and set(commands) & set(r.commands)
    }
    # The upgrade rules are "maintenance" rules (preflight's): lint --target-version runs those of them
    # that declare "lint-upgrade".
    selected = cfg.rules(
        ("cluster", "change", "maintenance") if target is not None else ("cluster", "change")
    )
    engine_rules = [r for r in selected if r.code in wanted]
    report_unused = any(r.code == SUPPRESSION_RULE for r in selected)
    keys = {
        code: r.lint_key for code, r in rules.items() if r.lint_key
    }  # the settings broker findings point at

    # Files alone with nowhere better to point (no --against): the first broker file, else the first file.
    fallback = (
        min(b.file for b in inputs.brokers) if inputs.brokers else min(inputs.files) if inputs.files else None
    )
    findings: dict[tuple, Finding] = {}
    anchors: dict[tuple, tuple] = {}
    defaults = Placement()  # the defaults the topics inherit: one finding each (auditor/lint/placement.py)
    exempted: set[str] = set()
    outside: set[str] = set()
    failed: set[str] = set()
    # Every cluster the files describe, in one engine run (each under a cluster id of its own,
    # all named as lint names its cluster); one run more per extra definition of a topic.
    parts = _partitions(inputs, ref_against, manifest)
    worlds = [_worlds(definition_variants(part.topics)) for part, _m in parts]
    # no file could be linted: nothing to run the rules on (the run is incomplete, below)
    runs = max(len(w) for w in worlds) if inputs.files else 0
    with tempfile.TemporaryDirectory(prefix="kafka-audit-lint-") as workdir:
        for k in range(runs):
            loaded, locators = [], {}
            for (part, part_manifest), part_worlds in zip(parts, worlds, strict=True):
                world = part_worlds[k] if k < len(part_worlds) else part_worlds[0]
                proposed = proposed_tables(part, [defs[0] for defs in world.values()])
                tables = against_tables(ref_against, proposed) if ref_against else proposed
                loaded.append((part_manifest, tables))
                locators[part_manifest.cluster_id] = Locator(part, world, keys)
            run_dir = Path(workdir) / str(k)
            run_dir.mkdir()
            engine = LintEngine(str(run_dir))
            try:
                engine.register_clusters(loaded)
                ref = SnapshotRef(path=str(against or "lint"), manifest=manifest, files={})
                run_tables = Tables(engine, [ref])
                raw, run_exempted = _run_rules(run_tables, engine_rules, cfg)
                failed.update(failure_notes(run_tables))
                locating = lambda rs, c, engine=engine, ref=ref: _run_rules(Tables(engine, [ref]), rs, c)[0]  # noqa: E731
                every = every_inheriting(locating, raw, rules, cfg)
            finally:
                engine.close()
            exempted.update(run_exempted)
            # In a stable order: the first finding of a configuration resource's brokers stands
            # for all of them (below), and the engine's row order is not stable.
            for f in sorted(
                raw, key=lambda f: (f.rule, f.resource_type, f.resource_name or "", f.fingerprint)
            ):
                locator = locators.get(f.cluster_id) or next(iter(locators.values()))
                how = inherited_default(f, rules)
                where = locator.locate(f, every.get(default_key(f, how)) if how else None)
                if how is not None and where:
                    defaults.add(default_key(f, how), replace(f, cluster_id=manifest.cluster_id), where)
                    continue
                group = locator.group_of(f)
                if not where:
                    if ref_against is not None:
                        outside.add(f.fingerprint)  # about the cluster as it is, not about these files
                        continue
                    where = [(fallback, 1, (1,))] if fallback else [(None, None, ())]
                for file, line, lines in where:
                    # The brokers of one configuration resource (N replicas of a Kafka CR, an MSK
                    # cluster's brokers) share its lines: one finding there, not N.
                    key = (f.rule, group, file, line) if group else (f.fingerprint, file, line)
                    if key not in findings:
                        findings[key] = replace(
                            f,
                            location={"file": file, "line": line} if file else None,
                            cluster_id=manifest.cluster_id,  # one cluster in the report, as before
                        )
                        anchors[key] = (file, lines)

    if any(r.code == PLATFORM_RULE for r in selected):
        for key, f, lines in _refusal_findings(inputs, rules[PLATFORM_RULE], cfg, manifest):
            findings.setdefault(key, f)
            anchors.setdefault(key, (f.location["file"], lines))

    index = SuppressionIndex(inputs.suppressions)
    kept, suppressed = defaults.findings(index)
    for key, f in findings.items():
        file, lines = anchors[key]
        hit = index.covering(file, f.rule, lines)
        if hit is not None:
            hit.used += 1
            suppressed += 1
        else:
            kept.append(f)

    if report_unused:
        rule = rules[SUPPRESSION_RULE]
        ran = {r.code for r in engine_rules}
        for s in inputs.suppressions:
            if s.used or not ran.intersection(s.codes):
                continue  # used, or about rules this run did not apply (deselected, THR007 without --against)
            kept.append(
                _file_finding(
                    rule,
                    cfg,
                    manifest,
                    ("suppression", f"{s.file}:{s.line}"),
                    f"suppression of {', '.join(s.codes)} matched no finding (reason was: {s.reason}); remove it",
                    {"codes": list(s.codes), "reason": s.reason},
                    (s.file, s.line),
                )
            )

    outcome = None
    if baseline is not None:
        kept, outcome = apply_baseline(baseline, kept, {manifest.cluster_name})

    # Warnings first (files lint could not read as anything, topics defined differently), then
    # the notes: files passed over, identical duplicates, what was suppressed or left out.
    unreadable = [f"{w} (not linted)" for w in inputs.unreadable]
    notes = [
        f"{WARNING_PREFIX}{w}" for w in unreadable + inputs.unrecognised + inputs.unevaluated + conflicts
    ]
    notes += sorted(failed)  # rules the engine could not compile or run
    if outcome is not None and outcome.foreign:  # loud: every finding would fail otherwise, unexplained
        notes.append(f"{WARNING_PREFIX}{outcome.foreign}")
    notes += inputs.notes + duplicate_notes
    if suppressed:
        notes.append(f"{suppressed} finding(s) suppressed inline")
    if outcome is not None:
        notes.append(outcome.line())
    if target is not None:
        notes += upgrade_notes(inputs, target)
    if outside:
        notes.append(
            f"{len(outside)} finding(s) about parts of {manifest.cluster_name} these files do not touch "
            "left out (see kafka-audit check)"
        )
    cluster = {
        "id": manifest.cluster_id,
        "name": manifest.cluster_name,
        **{k: v for k, v in manifest.cluster.items() if k not in ("id", "name")},
    }
    # A snapshot whose collection failed somewhere cannot vouch for a clean lint (exit 3).
    incomplete = incomplete_sources([ref_against]) if ref_against is not None else []
    if not inputs.files:  # files were given and none could be linted: never a green run (exit 3)
        looked = len(inputs.unreadable) + len(inputs.unrecognised) + len(inputs.skipped) + inputs.other_files
        incomplete.append(
            {
                "cluster": manifest.cluster_name,
                "source": "lint",
                "target": None,
                "message": f"none of the {looked} file(s) given could be linted: nothing was checked",
            }
        )
    # The same order whatever the order of the files given (AuditResult's sort is stable).
    kept.sort(
        key=lambda f: (
            (f.location or {}).get("file") or "",
            (f.location or {}).get("line") or 0,
            f.rule,
            f.resource_name,
            f.message,
        )
    )
    result = AuditResult(
        findings=kept,
        clusters=[cluster],
        incomplete=incomplete,
        engine="duckdb",
        exempted=len(exempted),
        notes=notes,
        rule_docs=rule_docs(r for r in selected if r.code in wanted or r.produced_by == "lint"),
        baseline=outcome,
        files=list(inputs.files),
        skipped=list(inputs.skipped),
    )
    return result
