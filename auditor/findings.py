"""Findings: what a rule says about one resource of one cluster.

Findings are produced as DataFrame rows by the engine (columns in FINDING_COLUMNS) and
turned into ``Finding`` objects only for what reaches the driver.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field

SEVERITIES = ("info", "warning", "error", "critical")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}
FAIL_ON = (*SEVERITIES, "never")

# What a check returns (CHECK_COLUMNS) and what the runner adds to it.
CHECK_COLUMNS = ("cluster_id", "resource_type", "resource_name", "message", "evidence")
FINDING_COLUMNS = ("rule", "name", "severity", "cluster_id", "cluster", "resource_type", "resource_name",
                   "message", "evidence", "fingerprint")


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

    @classmethod
    def from_row(cls, row: dict) -> Finding:
        return cls(
            rule=row["rule"], name=row["name"], severity=row["severity"], cluster=row["cluster"] or row["cluster_id"],
            cluster_id=row["cluster_id"], resource_type=row["resource_type"], resource_name=row["resource_name"],
            message=row["message"], evidence=parse_evidence(row.get("evidence")), fingerprint=row["fingerprint"],
        )

    @property
    def sort_key(self):
        return (-SEVERITY_RANK[self.severity], self.cluster, self.rule, self.resource_type, self.resource_name)

    def to_json(self) -> dict:
        out = {
            "rule": self.rule, "name": self.name, "severity": self.severity, "cluster": self.cluster,
            "resource": {"type": self.resource_type, "name": self.resource_name},
            "message": self.message, "evidence": self.evidence, "fingerprint": self.fingerprint,
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

    def __post_init__(self):
        self.findings.sort(key=lambda f: f.sort_key)

    def cluster_rule_counts(self) -> list[dict]:
        if self.hits is not None:
            return self.hits
        counts = Counter((f.cluster, f.rule, f.name, f.severity) for f in self.findings)
        return [{"cluster": c, "rule": r, "name": n, "severity": s, "count": k} for (c, r, n, s), k in counts.items()]

    def summary(self) -> dict:
        counts = Counter()
        for h in self.cluster_rule_counts():
            counts[h["severity"]] += h["count"]
        return {s: counts.get(s, 0) for s in reversed(SEVERITIES)} | {"total": sum(counts.values())}

    def failing(self, fail_on: str) -> bool:
        if fail_on == "never":
            return False
        threshold = SEVERITY_RANK[fail_on]
        return any(SEVERITY_RANK[h["severity"]] >= threshold for h in self.cluster_rule_counts())

    @property
    def is_incomplete(self) -> bool:
        return bool(self.incomplete)
