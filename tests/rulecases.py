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


@dataclass(frozen=True)
class FleetCase:
    """A fleet rule's case: a small fleet of its own (`clusters:`); `expect` names
    "resource_type:resource_name@cluster"."""

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


def load_cases() -> list[Case]:
    return [
        Case(doc["rule"], c["name"], c.get("tables") or {}, c.get("cluster") or {}, tuple(c.get("errors") or ()),
             frozenset(c["expect"]))
        for doc in _docs() for c in doc["cases"] if "clusters" not in c
    ]


def load_fleet_cases() -> list[FleetCase]:
    return [FleetCase(doc["rule"], c["name"], tuple(c["clusters"]), frozenset(c["expect"]),
                      tuple(c["previous_clusters"]) if "previous_clusters" in c else None,
                      str(c.get("previous_run", "2026-11-15")))
            for doc in _docs() for c in doc["cases"] if "clusters" in c]


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
    clusters = [{"id": c.get("id", f"{case.rule}.{case.name}.{c['name']}"), "name": c["name"]}
                for c in case.previous_clusters]
    (run / "cluster=_").mkdir(parents=True, exist_ok=True)
    (run / "_summary.json").write_text(json.dumps({"schema_version": 1, "run_date": case.previous_run,
                                                   "clusters": clusters}))
    row = {"rule": "CASE", "name": "case", "severity": "info", "cluster_id": "_", "resource_type": "none",
           "resource_name": "none", "message": "", "evidence": "{}", "fingerprint": "0" * 32, "status": "new",
           "cluster_name": "_"}
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
