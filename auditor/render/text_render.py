"""Plain text for terminals and CI logs: findings grouped by cluster, worst first.

Control characters in names and messages are shown escaped (``\\x1b``), never sent raw:
see auditor/escape.py."""

from __future__ import annotations

import re
from itertools import groupby

from auditor import coverage
from auditor.causes import headline
from auditor.escape import neutralise_lines
from auditor.findings import SEVERITY_RANK, WORST_FIRST, AuditResult


def shorten(text: str, width: int = 160) -> str:
    """``text`` cut to ``width`` characters with an ellipsis when it was longer (a summary
    line; the full message is in every other format)."""
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def counts_line(summary: dict) -> str:
    """'0 critical, 5 error, 2 warning, 1 info' from AuditResult.summary() (or fleet totals)."""
    return ", ".join(f"{summary[k]} {k}" for k in WORST_FIRST)


# The severity as four columns, in every text report (check, lint, preflight).
MARK = {"critical": "CRIT", "error": "ERR ", "warning": "WARN", "info": "INFO"}


def fix_first(result: AuditResult) -> list[str]:
    """The root causes, first (auditor/causes.py): what to fix before reading every finding."""
    if not result.causes:
        return []
    lines = [headline(result.causes, result.summary()["total"])]
    for c in result.causes:
        lines.append(f"  {c.cluster}: {c.title}: {c.count} finding(s) ({', '.join(c.rules)})")
        lines.append(f"    fix: {c.remediation}")
    return [*lines, ""]


def render(result: AuditResult, **_options) -> str:
    lines: list[str] = fix_first(result)
    for item in result.incomplete:
        target = f" {item['target']}" if item.get("target") else ""
        lines.append(
            f"INCOMPLETE {item['cluster']}: source {item['source']}{target} failed: {item['message']}"
        )
    if result.incomplete:
        lines.append("")
    by_cluster = sorted(
        result.findings, key=lambda f: (f.cluster, -SEVERITY_RANK[f.severity], f.rule, f.resource_name)
    )
    for cluster, items in groupby(by_cluster, key=lambda f: f.cluster):
        items = list(items)
        lines.append(f"{cluster} ({len(items)} finding{'s' if len(items) != 1 else ''})")
        for f in items:
            lines.append(
                f"  {MARK[f.severity]} {f.rule} {f.name}  {f.resource_type} {f.resource_name}: {f.message}"
            )
        lines.append("")
    clean = sorted({c["name"] for c in result.clusters} - {f.cluster for f in result.findings})
    if clean:
        lines.append(f"no findings: {', '.join(clean)}")
    for name, entries in coverage.per_cluster(result):
        lines.append(f"{name} not evaluated: {coverage.describe(entries)}")
    s = result.summary()
    counts = counts_line(s)
    status = "INCOMPLETE" if result.is_incomplete else "complete"
    extra = f", {result.exempted} exempted" if result.exempted else ""
    lines.append(
        f"{len(result.clusters)} cluster(s) audited ({status}, engine {result.engine}): {counts}{extra}"
    )
    lines.extend(f"note: {n}" for n in result.notes)
    return neutralise_lines(lines)  # no control character of a name reaches the terminal


# Colour for terminals (the CLI decides when: a terminal, NO_COLOR unset; never in files).
# Applied to a rendered, neutralised report, so the only escape sequences in it are these.
ANSI = {"critical": "\x1b[1;31m", "error": "\x1b[31m", "warning": "\x1b[33m", "info": "\x1b[36m"}
_RESET = "\x1b[0m"
_MARKED = re.compile(
    r"(?<=[ :])(CRIT|ERR |WARN|INFO)(?= [A-Z]{2,4}\d{3} )|(?<= )(critical|error|warning|info)(?=\s+\d+ / )"
)


def colourise(text: str) -> str:
    """``text`` with the severity marks (CRIT, ERR, ...) and the fleet report's severity column in colour."""
    by_word = {**{v: k for k, v in MARK.items()}, **{s: s for s in ANSI}}
    return _MARKED.sub(lambda m: f"{ANSI[by_word[m.group()]]}{m.group()}{_RESET}", text)
