"""Lint's text output: one ``file:line: SEVERITY CODE name: message`` line per finding,
in file and line order (what editors and CI logs link to), then a summary."""

from __future__ import annotations

from auditor.findings import AuditResult

_MARK = {"critical": "CRIT", "error": "ERR ", "warning": "WARN", "info": "INFO"}


def render_text(result: AuditResult) -> str:
    def key(f):
        loc = f.location or {}
        return (loc.get("file", ""), int(loc.get("line") or 0), f.rule, f.resource_name)

    lines = []
    for item in result.incomplete:
        target = f" {item['target']}" if item.get("target") else ""
        lines.append(f"INCOMPLETE {item['cluster']}: source {item['source']}{target} failed when the snapshot was "
                     f"collected: {item['message']}")
    for f in sorted(result.findings, key=key):
        loc = f.location or {}
        where = f"{loc.get('file', '?')}:{loc.get('line', 1)}"
        lines.append(f"{where}: {_MARK[f.severity]} {f.rule} {f.name}: {f.message} "
                     f"[{f.resource_type} {f.resource_name}]")
    s = result.summary()
    counts = ", ".join(f"{s[k]} {k}" for k in ("critical", "error", "warning", "info"))
    files = len(getattr(result, "files", []) or [])
    target = result.clusters[0]["name"] if result.clusters else "lint"
    against = f" against {target}" if target != "lint" else ""
    if lines:
        lines.append("")
    lines.append(f"{files} file(s) linted{against}: {counts}")
    lines.extend(f"note: {n}" for n in result.notes)
    return "\n".join(lines) + "\n"
