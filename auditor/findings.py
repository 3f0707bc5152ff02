"""Findings: what a rule says about one resource of one cluster.

Findings are produced as DataFrame rows by the engine (auditor/engine/runner.py, the final
stage's columns) and turned into ``Finding`` objects only for what reaches the driver.

The severities and their order are defined once, in auditor/severity.py (re-exported here).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from auditor.causes import Cause, from_findings
from auditor.severity import FAIL_ON, SEVERITIES, SEVERITY_RANK, WORST_FIRST, fails  # noqa: F401  (re-exported)

# What a check returns (CHECK_COLUMNS) and what the runner adds to it.
CHECK_COLUMNS = ("cluster_id", "resource_type", "resource_name", "message", "evidence")

# A result note that is a warning (a file nothing was recognised in, a topic defined differently
# in two files) starts with this; the text reports print it as is, the other notes after "note: ".
WARNING_PREFIX = "warning: "


def fingerprint(rule: str, cluster: str, resource_type: str, resource_name: str) -> str:
    """Reference implementation of the fingerprint the engine computes (sha256, 32 hex)."""
    key = "|".join((rule, cluster, resource_type, resource_name))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class Finding:
    rule: str
    name: str
    severity: str
    cluster: str
    cluster_id: str
    resource_type: str
    resource_name: str
    message: str
    evidence: dict = field(default_factory=dict, hash=False, compare=True)
    fingerprint: str = ""
    location: dict | None = field(default=None, hash=False)  # {"file":..., "line":...} for file findings
    cause: str | None = None  # the id of the root cause that explains it (auditor/causes.py), if one does

    @classmethod
    def from_row(cls, row: dict) -> Finding:
        return cls(
            rule=row["rule"],
            name=row["name"],
            severity=row["severity"],
            cluster=row["cluster"] or row["cluster_id"],
            cluster_id=row["cluster_id"],
            resource_type=row["resource_type"],
            resource_name=row["resource_name"],
            message=row["message"],
            evidence=parse_evidence(row.get("evidence")),
            fingerprint=row["fingerprint"],
            cause=row.get("cause"),
        )

    @property
    def sort_key(self):
        return (
            -SEVERITY_RANK[self.severity],
            self.cluster,
            self.rule,
            self.resource_type,
            self.resource_name,
        )

    def to_json(self) -> dict:
        out = {
            "rule": self.rule,
            "name": self.name,
            "severity": self.severity,
            "cluster": self.cluster,
            "resource": {"type": self.resource_type, "name": self.resource_name},
            "message": self.message,
            "evidence": self.evidence,
            "fingerprint": self.fingerprint,
            "cause": self.cause,
        }
        if self.location:
            out["location"] = self.location
        return out


def parse_evidence(raw) -> dict:
    """Evidence JSON with null members dropped: DuckDB's to_json keeps nulls, Spark's drops
    them, and the two engines must give identical findings."""
    if raw is None or raw == "":
        return {}
    value = json.loads(raw) if isinstance(raw, str) else raw
    return _drop_nulls(value) if isinstance(value, dict) else {"value": value}


def _drop_nulls(value):
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value


@dataclass(frozen=True)
class RuleDoc:
    """What reports show of a rule (its documentation), carried by the result so that
    renderers never read the registry."""

    code: str
    name: str
    severity: str  # the default severity
    category: str
    scope: str
    summary: str
    why: str
    remediation: str
    example: str


@dataclass
class AuditResult:
    """Everything a renderer needs: findings, clusters audited, incomplete sources."""

    findings: list[Finding]
    clusters: list[dict]  # {"id", "name", "environment", ...}
    incomplete: list[dict]  # {"cluster", "source", "target", "message"}
    engine: str = "duckdb"
    exempted: int = 0
    notes: list[str] = field(default_factory=list)
    # Per cluster and rule: {"cluster","rule","name","severity","count"}. Set when
    # ``findings`` holds only a sample (the fleet job's top rows); derived otherwise.
    hits: list[dict] | None = None
    # Fleet runs with --previous: one {"run_date", "total", "new", "resolved"} per run, oldest first.
    history: list[dict] | None = None
    # Per cluster id: the selected rules it could not evaluate and why (auditor/coverage.py):
    # [{"rules": [codes], "category", "reason", "category_not_evaluated"}]. Empty: all evaluated.
    coverage: dict[str, list[dict]] = field(default_factory=dict)
    # Per cluster name: {"score", "grade", "grade_note"}, set by the fleet job (which grades
    # every finding, not only the sample in ``findings``); see cluster_grades().
    grades: dict[str, dict] | None = None
    # The documentation of the rules that ran, by code (what SARIF, JUnit, Markdown and HTML
    # show of a rule; auditor.registry.rule_docs): renderers read it here, never the registry.
    rule_docs: dict[str, RuleDoc] = field(default_factory=dict)
    # The root causes the findings' ``cause`` ids name, each once, most findings first
    # (auditor/causes.py). Given by the fleet job (counted over every finding, not the
    # sample in ``findings``); derived from the findings otherwise.
    causes: list[Cause] | None = None
    # --baseline: the entries matched and stale (auditor/baseline.py Outcome), for the reports.
    baseline: Any = None
    # lint: the files read and those skipped, for its text report.
    files: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    # When ``findings`` holds only some rows of each rule (the fleet job's top rows): how many per
    # rule, and where every finding is, for the reports' "not listed" notes to be true.
    rows_per_rule: int | None = None
    complete_in: str | None = None

    def __post_init__(self):
        self.findings.sort(key=lambda f: f.sort_key)
        if self.causes is None:
            self.causes = from_findings(self.findings)

    def cluster_rule_counts(self) -> list[dict]:
        if self.hits is not None:
            return self.hits
        counts = Counter((f.cluster, f.rule, f.name, f.severity) for f in self.findings)
        return [
            {"cluster": c, "rule": r, "name": n, "severity": s, "count": k}
            for (c, r, n, s), k in counts.items()
        ]

    def summary(self) -> dict:
        counts = Counter()
        for h in self.cluster_rule_counts():
            counts[h["severity"]] += h["count"]
        return {s: counts.get(s, 0) for s in WORST_FIRST} | {"total": sum(counts.values())}

    def failing(self, fail_on: str) -> bool:
        return fails((h["severity"] for h in self.cluster_rule_counts()), fail_on)

    def cluster_grades(self) -> dict[str, dict]:
        """Per cluster name: {"score", "grade", "grade_note"} (auditor/grading.py). Given by
        the fleet job (``grades``), computed from the findings otherwise."""
        if self.grades is not None:
            return self.grades
        from auditor.grading import grade_clusters

        return grade_clusters(
            self.clusters,
            self.cluster_rule_counts(),
            {str(i.get("cluster")) for i in self.incomplete},
            self.coverage,
        )

    @property
    def is_incomplete(self) -> bool:
        return bool(self.incomplete)
