"""The fleet job's text summary (``kafka-audit fleet``): grades, coverage gaps, the rules
that fired with their first findings, the week-over-week diff. Grades come with the result
(auditor/grading.py computes them in the job); names are neutralised (escape.py)."""

from __future__ import annotations

from auditor import coverage
from auditor.escape import neutralise, neutralise_lines
from auditor.findings import Finding
from auditor.render.text_render import counts_line, shorten


def render(result, per_rule: int = 3) -> str:
    """``result``: an auditor.commands.fleet.FleetResult (not imported: the fleet job imports the engines)."""
    lines = [f"fleet audit {result.run_date} on {result.engine}: {len(result.clusters)} cluster(s)"]
    for item in result.incomplete:
        lines.append(
            f"  INCOMPLETE {item['cluster']}: {item['source']} {item.get('target') or ''}: {item['message']}"
        )
    lines.append("")
    lines.append(
        f"  {'grade':5} {'score':>5}  {'cluster':28} {'crit':>5} {'err':>5} {'warn':>5} {'info':>5}"
        + ("   new" if result.previous_run else "")
    )
    for c in result.clusters:
        n = c["counts"]
        lines.append(
            f"  {c['grade']:5} {c['score']:>5}  {neutralise(c['name'])[:28]:28} {n['critical']:>5} {n['error']:>5} "
            f"{n['warning']:>5} {n['info']:>5}" + (f" {c.get('new', 0):>5}" if result.previous_run else "")
        )
    gaps = [(c, result.coverage.get(c["id"])) for c in result.clusters if result.coverage.get(c["id"])]
    if gaps:
        lines.append("")
        lines.append("not evaluated (inputs not collected):")
        for c, entries in gaps:
            note = c.get("grade_note")
            lines.append(
                f"  {neutralise(c['name'])}: {coverage.describe(entries)}" + (f" ({note})" if note else "")
            )
    lines.append("")
    lines.append("rules that fired (clusters affected / findings), with their first findings:")
    by_rule: dict[str, list[Finding]] = {}
    for f in result.top:
        by_rule.setdefault(f.rule, []).append(f)
    for r in result.rules:
        lines.append(f"  {r['rule']} {r['name']:34} {r['severity']:8} {r['clusters']:>4} / {r['findings']}")
        shown = sorted(
            by_rule.get(r["rule"], []), key=lambda f: (f.cluster, f.resource_type, f.resource_name)
        )
        for f in shown[:per_rule]:
            lines.append(
                f"      {f.cluster}  {f.resource_type} {f.resource_name}: {shorten(neutralise(f.message))}"
            )
        if r["findings"] > min(per_rule, len(shown)):
            lines.append(f"      ... {r['findings'] - min(per_rule, len(shown))} more")
    if result.previous_run:
        d = result.diff
        lines.append("")
        lines.append(
            f"since {result.previous_run}: {d['new']} new, {d['persisting']} persisting, {d['resolved']} resolved"
        )
    if result.out:
        lines.append("")
        lines.append(f"findings written to {result.run_dir}")
    lines.extend(f"note: {n}" for n in result.notes)
    lines.append(f"totals: {counts_line(result.totals)}")
    return neutralise_lines(lines)  # no control character of a name reaches the terminal
