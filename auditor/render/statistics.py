"""``--statistics``: findings counted per rule (code, name, severity, count), most first, as
ruff's ``--statistics``; text or JSON, in place of the report."""

from __future__ import annotations

import json

from auditor.escape import neutralise_lines
from auditor.findings import SEVERITY_RANK


def per_rule(counts) -> list[dict]:
    """Per-rule totals from per cluster-and-rule counts ({"rule", "name", "severity", "count"})."""
    rows: dict[str, dict] = {}
    for c in counts:
        row = rows.setdefault(
            c["rule"], {"code": c["rule"], "name": c["name"], "severity": c["severity"], "count": 0}
        )
        row["count"] += c["count"]
    return sorted(rows.values(), key=lambda r: (-r["count"], -SEVERITY_RANK[r["severity"]], r["code"]))


def render(rows: list[dict], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(rows, indent=2) + "\n"
    width = max([len(str(r["count"])) for r in rows] + [5])
    lines = [f"{r['count']:>{width}}  {r['code']}  {r['severity']:8}  {r['name']}" for r in rows]
    lines.append(f"{sum(r['count'] for r in rows)} finding(s), {len(rows)} rule(s)")
    return neutralise_lines(lines)
