"""Load every checks/cases/<CODE>.yaml and turn each named case into a snapshot directory.

One generic test (test_rule_cases.py) runs all of them, on both engines, in one run per
engine: each case is its own cluster, so a case that leaked into another (a join not keyed
by cluster_id) would show up as a wrong finding.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from auditor.snapshot.io import Manifest, open_snapshot, write_snapshot

CASES_DIR = Path(__file__).resolve().parent.parent / "checks" / "cases"


@dataclass(frozen=True)
class Case:
    rule: str
    name: str
    tables: dict
    cluster: dict
    errors: tuple
    expect: frozenset

    @property
    def cluster_id(self) -> str:
        return f"{self.rule}.{self.name}"


def load_cases() -> list[Case]:
    cases = []
    for path in sorted(CASES_DIR.glob("*.yaml")):
        doc = yaml.safe_load(path.read_text())
        assert doc["rule"] == path.stem, f"{path}: rule must match the file name"
        names = [c["name"] for c in doc["cases"]]
        assert len(names) == len(set(names)), f"{path}: case names must be unique"
        for c in doc["cases"]:
            cases.append(Case(doc["rule"], c["name"], c.get("tables") or {}, c.get("cluster") or {},
                              tuple(c.get("errors") or ()), frozenset(c["expect"])))
    return cases


def write_cases(cases: list[Case], root: Path, fmt: str = "jsonl") -> list:
    refs = []
    for i, case in enumerate(cases):
        cluster = {"id": case.cluster_id, "name": case.cluster_id, **case.cluster}
        manifest = Manifest(cluster=cluster, collected_at="2026-11-22T00:00:00Z", errors=list(case.errors))
        directory = write_snapshot(root / f"{i:04d}", manifest, case.tables, fmt=fmt)
        refs.append(open_snapshot(directory))
    return refs
