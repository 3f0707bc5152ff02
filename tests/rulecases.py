"""Load every checks/cases/<CODE>.yaml and turn each named case into a snapshot directory.

One generic test (test_rule_cases.py) runs all of them, on both engines: each case is its
own cluster, so a case that leaked into another (a join not keyed by cluster_id) would show
up as a wrong finding.

A case may configure its rule as a config file would (sqlfluff's rule-test YAML does the same):

    - name: min-idle-param-lowered-silences
      params: {min_idle: 0.25}   # the rule's parameters, validated by Rule.bind: a misspelt one fails
      severity: warning          # a severity override: every finding of the case must carry it
      tables: *just-below        # the input of its default-config partner, shared by a YAML anchor
      expect: []

The cases without `params:`/`severity:` run in one run per engine, every rule at its
defaults. The others run in `override_runs`: run k holds, for each rule, its k-th distinct
override set and only the cases that use it, so the extra runs number the most override
sets any one rule has. Every parameter has a pair of cases named after it
(`<param>-param-...`): the same input, one verdict at the default, the other at the
non-default value (test_every_rule_parameter_is_set_by_a_case keeps it so). For parameters
that shape what a finding lists rather than whether it fires (max_listed, suggest_distance),
the pair differs in `expect_evidence:` ({"type:name": {evidence key: value}}; a fleet case
names "type:name@cluster").

A rule whose findings carry a severity of their own (auditor/severity.py ROW_SEVERITY) names
the severity of each finding that differs from the rule's in `expect_severity:`
({"type:name": severity}); every other finding must carry the rule's (or the override's).

Fleet rules' cases (`clusters:`) take the same keys; test_fleet.py runs each on its own
with `rules_config` and `check_findings`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from auditor.config import AuditConfig
from auditor.findings import SEVERITIES
from auditor.registry import load_rules
from auditor.snapshot.io import Manifest, open_snapshot, write_snapshot

CASES_DIR = Path(__file__).resolve().parent.parent / "checks" / "cases"


@dataclass(frozen=True, kw_only=True)  # keyword-only: Case(rule, name, ...) keeps its positions
class _Configurable:
    """What a case may set of its rule's configuration, and the part of the findings'
    evidence it checks; shared by cluster cases and fleet cases."""

    params: dict | None = None  # overrides of the rule's parameters (`params:`)
    severity: str | None = None  # a severity override (`severity:`)
    expect_evidence: dict | None = None  # {"type:name": {evidence key: value}} (`expect_evidence:`)
    expect_severity: dict | None = (
        None  # {"type:name": severity} where a finding's differs (`expect_severity:`)
    )

    @property
    def overrides(self) -> tuple | None:
        """What sets this case's configuration apart (None: the rule's defaults)."""
        if self.params is None and self.severity is None:
            return None
        return repr(sorted((self.params or {}).items())), self.severity


@dataclass(frozen=True)
class Case(_Configurable):
    rule: str
    name: str
    tables: dict
    cluster: dict
    errors: tuple
    expect: frozenset

    @property
    def cluster_id(self) -> str:
        return f"{self.rule}.{self.name}"


@dataclass(frozen=True)
class FleetCase(_Configurable):
    """A fleet rule's case: a small fleet of its own (`clusters:`); `expect` (and
    `expect_evidence`) name "resource_type:resource_name@cluster"."""

    rule: str
    name: str
    clusters: tuple
    expect: frozenset
    # The clusters of the previous run (`previous_clusters:`, each {name, id}; ids default as
    # in write_fleet_case): the case then runs with --previous (write_previous_run).
    previous_clusters: tuple | None = None
    previous_run: str = "2026-11-15"


def _docs():
    for path in sorted(CASES_DIR.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        assert doc["rule"] == path.stem, f"{path}: rule must match the file name"
        names = [c["name"] for c in doc["cases"]]
        assert len(names) == len(set(names)), f"{path}: case names must be unique"
        yield doc


def validated_overrides(doc: dict, case: dict) -> tuple[dict | None, str | None]:
    """A case's `params:` and `severity:`, validated as a config file's would be."""
    where = f"{CASES_DIR / doc['rule']}.yaml: case {case['name']}"
    params, severity = case.get("params"), case.get("severity")
    if params is not None:
        assert isinstance(params, dict) and params, f"{where}: params must be a non-empty mapping"
        load_rules()[doc["rule"]].bind(params, where)  # raises on a misspelt or mistyped parameter
    assert severity is None or severity in SEVERITIES, f"{where}: severity must be one of {SEVERITIES}"
    return params, severity


def _configurable(doc: dict, case: dict) -> dict:
    params, severity = validated_overrides(doc, case)
    return {
        "rule": doc["rule"],
        "name": case["name"],
        "expect": frozenset(case["expect"]),
        "params": params,
        "severity": severity,
        "expect_evidence": case.get("expect_evidence"),
        "expect_severity": case.get("expect_severity"),
    }


def load_cases() -> list[Case]:
    return [
        Case(
            **_configurable(doc, c),
            tables=c.get("tables") or {},
            cluster=c.get("cluster") or {},
            errors=tuple(c.get("errors") or ()),
        )
        for doc in _docs()
        for c in doc["cases"]
        if "clusters" not in c
    ]


def rules_config(overrides: dict[str, _Configurable]) -> AuditConfig:
    """The configuration that runs only these rules, each as its case sets it."""
    return AuditConfig(
        source="rule cases",
        select=tuple(overrides),
        params={rule: c.params for rule, c in overrides.items() if c.params},
        severity={rule: c.severity for rule, c in overrides.items() if c.severity},
    )


def check_findings(case: _Configurable, fired: dict) -> None:
    """Assert a case's findings ({"type:name" or "type:name@cluster": Finding}): the resources
    that fire, their severity (the case's override, else the rule's) and the expected evidence."""
    assert set(fired) == set(case.expect)
    severity = case.severity or load_rules()[case.rule].severity
    expected = {resource: severity for resource in fired} | (case.expect_severity or {})
    assert set(case.expect_severity or {}) <= set(case.expect), "expect_severity names a finding not expected"
    assert {r: f.severity for r, f in fired.items()} == expected
    for resource, evidence in (case.expect_evidence or {}).items():
        assert {k: fired[resource].evidence.get(k) for k in evidence} == evidence, resource


def override_runs(cases: list[Case]) -> list[tuple[AuditConfig, list[Case]]]:
    """The runs for the cases that override their rule's configuration: run k holds each
    rule's k-th distinct override set (and only those rules), so there are as many runs as
    the most override sets one rule has."""
    by_rule: dict[str, dict[tuple, list[Case]]] = {}
    for case in cases:
        if case.overrides is not None:
            by_rule.setdefault(case.rule, {}).setdefault(case.overrides, []).append(case)
    runs = []
    for k in range(max((len(sets) for sets in by_rule.values()), default=0)):
        groups = {rule: list(sets.values())[k] for rule, sets in by_rule.items() if len(sets) > k}
        runs.append(
            (
                rules_config({rule: g[0] for rule, g in groups.items()}),
                [case for g in groups.values() for case in g],
            )
        )
    return runs


def load_fleet_cases() -> list[FleetCase]:
    return [
        FleetCase(
            **_configurable(doc, c),
            clusters=tuple(c["clusters"]),
            previous_clusters=tuple(c["previous_clusters"]) if "previous_clusters" in c else None,
            previous_run=str(c.get("previous_run", "2026-11-15")),
        )
        for doc in _docs()
        for c in doc["cases"]
        if "clusters" in c
    ]


def write_previous_run(case: FleetCase, out: Path) -> Path | None:
    """The previous run of a case that declares one, as `fleet --out` leaves it: OUT/
    run_date=DATE/_summary.json listing its clusters, and one findings file (a row that
    matches nothing: --previous needs an earlier run's Parquet). None without one."""
    if case.previous_clusters is None:
        return None
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    run = out / f"run_date={case.previous_run}"
    clusters = [
        {"id": c.get("id", f"{case.rule}.{case.name}.{c['name']}"), "name": c["name"]}
        for c in case.previous_clusters
    ]
    (run / "cluster=_").mkdir(parents=True, exist_ok=True)
    (run / "_summary.json").write_text(
        json.dumps({"schema_version": 1, "run_date": case.previous_run, "clusters": clusters})
    )
    row = {
        "rule": "CASE",
        "name": "case",
        "severity": "info",
        "cluster_id": "_",
        "resource_type": "none",
        "resource_name": "none",
        "message": "",
        "evidence": "{}",
        "fingerprint": "0" * 32,
        "status": "new",
        "cluster_name": "_",
    }
    pq.write_table(pa.table({k: [v] for k, v in row.items()}), run / "cluster=_" / "part-0.parquet")
    return out


def write_fleet_case(case: FleetCase, root: Path, fmt: str = "jsonl") -> Path:
    for i, member in enumerate(case.clusters):
        info = dict(member.get("cluster") or {})
        info.setdefault("name", f"c{i}")
        info.setdefault("id", f"{case.rule}.{case.name}.{info['name']}")
        manifest = Manifest(cluster=info, collected_at="2026-11-22T00:00:00Z")
        write_snapshot(root / f"cluster={info['name']}", manifest, member.get("tables") or {}, fmt=fmt)
    return root


def write_cases(cases: list[Case], root: Path, fmt: str = "jsonl") -> list:
    refs = []
    for i, case in enumerate(cases):
        cluster = {"id": case.cluster_id, "name": case.cluster_id, **case.cluster}
        manifest = Manifest(cluster=cluster, collected_at="2026-11-22T00:00:00Z", errors=list(case.errors))
        directory = write_snapshot(root / f"{i:04d}", manifest, case.tables, fmt=fmt)
        refs.append(open_snapshot(directory))
    return refs
