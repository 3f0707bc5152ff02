"""Lint's text output: warnings about the inputs first (``warning: FILE: no topic or broker
definition recognised``, topics defined differently in two files), then one
``file:line: SEVERITY CODE name: message`` line per finding, in file and line order (what
editors and CI logs link to), then a summary and the notes (files skipped, and why).
Control characters in names are shown escaped (``\\x1b``): see auditor/escape.py."""

from __future__ import annotations

from auditor.escape import neutralise_lines
from auditor.findings import WARNING_PREFIX, AuditResult
from auditor.render.text_render import MARK, counts_line


def render(result: AuditResult) -> str:
    def key(f):
        loc = f.location or {}
        return (loc.get("file") or "", int(loc.get("line") or 0), f.rule, f.resource_name)

    warnings = [n for n in result.notes if n.startswith(WARNING_PREFIX)]
    notes = [n for n in result.notes if not n.startswith(WARNING_PREFIX)]
    lines = []
    for item in result.incomplete:
        target = f" {item['target']}" if item.get("target") else ""
        if item.get("source") == "lint":  # lint's own: the files given held nothing it could check
            lines.append(f"INCOMPLETE {item['cluster']}: {item['message']}")
            continue
        lines.append(
            f"INCOMPLETE {item['cluster']}: source {item['source']}{target} failed when the snapshot was "
            f"collected: {item['message']}"
        )
    lines.extend(warnings)
    for f in sorted(result.findings, key=key):
        loc = f.location or {}
        where = f"{loc.get('file') or '?'}:{loc.get('line') or 1}"
        lines.append(
            f"{where}: {MARK[f.severity]} {f.rule} {f.name}: {f.message} "
            f"[{f.resource_type} {f.resource_name}]"
        )
    s = result.summary()
    counts = counts_line(s)
    files = len(result.files)
    skipped = len(result.skipped)
    unrecognised = sum(1 for w in warnings if "no topic or broker definition recognised" in w)
    extra = [f"{skipped} skipped"] if skipped else []
    extra += [f"{unrecognised} not recognised"] if unrecognised else []
    target = result.clusters[0]["name"] if result.clusters else "lint"
    against = f" against {target}" if target != "lint" else ""
    if lines:
        lines.append("")
    lines.append(f"{files} file(s) linted{' (' + ', '.join(extra) + ')' if extra else ''}{against}: {counts}")
    lines.extend(f"note: {n}" for n in notes)
    return neutralise_lines(lines)  # no control character of a file or topic name reaches the terminal
