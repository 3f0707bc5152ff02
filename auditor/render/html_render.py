"""Self-contained HTML report (one file, no CDN, no external fonts or scripts).

The page is rendered by jinja2 with autoescape on from ``templates/report.html.j2``; every
value that comes from a snapshot (cluster and topic names, messages, evidence) reaches the
page only through autoescaped expressions, never inside the inline script. The same page
serves one cluster and a fleet.

Options (``render(result, **options)``):

* ``max_rows`` (default: the result's ``rows_per_rule``, else 200): at most this many
  finding rows per rule, shared fairly between the clusters the rule hit; the rest are
  counted, not listed, and the note says where they all are (``result.complete_in``). A
  result with a million findings still gives a page of a few MB. Of each rule's rows per
  cluster, VISIBLE_ROWS are shown and the rest are one click away, so the page's height is
  bounded by the rules, not the findings.
* ``max_chart_clusters`` (default 40): the chart of findings by cluster shows the worst
  clusters only and says how many it left out.
* ``fail_on`` (default ``error``): the lowest severity counted as a failure in the headline.
* ``title``: the page title.

Grades: computed by auditor/grading.py and carried by the result (``cluster_grades()``);
the page shows them and documents the scale in its footer. Rule documentation comes with
the result too (``rule_docs``): no renderer reads the registry.

Layout: each rule's explanation (why, remediation, example) is a collapsed <details>; the
filter box searches it too and opens the ones it matches. Below 640 px every table becomes
one card per row with its verdict (grade, severity) first; charts are drawn at most CHART_W
px wide, so they are never scaled below their 12 px text on a phone. The fleet job's grades
carry each cluster's earlier grades (``trend``, auditor/commands/fleet.py grade_history), shown as a
letter sequence; the root causes (``result.causes``) head the page as "Fix first".

Counts come from ``result.cluster_rule_counts()``, so a fleet result that carries only the
top rows of each rule (the rest stay in Parquet) still shows true totals and grades.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from auditor import __version__, coverage
from auditor.findings import SEVERITIES, SEVERITY_RANK, WORST_FIRST, AuditResult, Finding
from auditor.grading import COVERAGE_CAP, GRADE_CAP, GRADE_THRESHOLDS, SEVERITY_WEIGHT

# The top-level templates/ package (templates/__init__.py): the same lookup in a wheel, an editable
# install and a checkout, as for checks/.
TEMPLATES = Path(str(files("templates")))

DEFAULT_MAX_ROWS = 200
# Rows of each rule and cluster shown before "Show N more": the page's height grows with the
# rules (and the clusters they hit), not with the findings (issue 38; tests/test_browser.py).
VISIBLE_ROWS = 3
COMPLETE_IN = "--format json or --format sarif lists them all"
DEFAULT_MAX_CHART_CLUSTERS = 40
WORST_FINDINGS = 5
FIX_FIRST = 10  # root causes listed in the "Fix first" box; the rest are counted
HEADLINE_NAMES = 5

# ---------------------------------------------------------------- rule docs

_CODE_SPAN = re.compile(r"`([^`]+)`")
_BULLET = re.compile(r"^\s*[-*]\s+")


def _inline(text: str) -> str:
    return _CODE_SPAN.sub(r"<code>\1</code>", str(escape(text)))


def doc_html(text: str) -> Markup:
    """Rule documentation (plain text with `code` spans and - bullets) as safe HTML."""
    out = []
    for para in re.split(r"\n\s*\n", (text or "").strip()):
        lines = [line.rstrip() for line in para.splitlines() if line.strip()]
        if not lines:
            continue
        if _BULLET.match(lines[0]):
            items: list[str] = []
            for line in lines:
                if _BULLET.match(line):
                    items.append(_BULLET.sub("", line))
                else:
                    items[-1] += " " + line.strip()
            out.append("<ul>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul>")
        else:
            out.append(f"<p>{_inline(' '.join(line.strip() for line in lines))}</p>")
    return Markup("".join(out))


# ---------------------------------------------------------------- view model


def evidence_json(evidence) -> str:
    if not evidence:
        return ""
    return json.dumps(evidence, sort_keys=True, ensure_ascii=False, default=str)


def _share(counts: dict[str, int], budget: int) -> dict[str, int]:
    """Split a row budget fairly between clusters (water filling, smallest first)."""
    out: dict[str, int] = {}
    remaining = budget
    order = sorted(counts, key=lambda k: counts[k])
    for i, key in enumerate(order):
        fair = remaining // (len(order) - i) if remaining > 0 else 0
        out[key] = min(counts[key], fair)
        remaining -= out[key]
    # hand out what rounding left, in display order
    for key in counts:
        if remaining <= 0:
            break
        extra = min(counts[key] - out[key], remaining)
        out[key] += extra
        remaining -= extra
    return out


def _cluster_views(result: AuditResult, threshold: int):
    incomplete_by_cluster: dict[str, list[dict]] = {}
    for item in result.incomplete:
        incomplete_by_cluster.setdefault(str(item.get("cluster")), []).append(item)

    clusters: dict[str, dict] = {}
    for c in result.clusters:
        name = str(c.get("name") or c.get("id"))
        clusters[name] = {"name": name, "id": c.get("id"), "meta": c}
    hits = result.cluster_rule_counts()
    for h in hits:
        if h["cluster"] not in clusters:
            clusters[h["cluster"]] = {"name": h["cluster"], "id": None, "meta": {}}
    for name in incomplete_by_cluster:
        if name not in clusters:
            clusters[name] = {"name": name, "id": None, "meta": {}}

    counts: dict[str, Counter] = {name: Counter() for name in clusters}
    rules_hit: dict[str, set[str]] = {name: set() for name in clusters}
    for h in hits:
        counts[h["cluster"]][h["severity"]] += h["count"]
        rules_hit[h["cluster"]].add(h["rule"])
    grades = result.cluster_grades()

    views = []
    for index, (name, c) in enumerate(clusters.items()):
        cnt = counts[name]
        worst = next((s for s in WORST_FIRST if cnt[s]), None)
        graded = grades[name]
        errors = incomplete_by_cluster.get(name, [])
        incomplete = bool(errors)
        gaps = (result.coverage or {}).get(c["id"], []) if c["id"] is not None else []
        failing = any(cnt[s] for s in SEVERITIES if SEVERITY_RANK[s] >= threshold)
        total = sum(cnt.values())
        if incomplete:
            status = "incomplete"
        elif failing:
            status = "failing"
        elif total:
            status = "findings"
        else:
            status = "clean"
        meta = c["meta"]
        details = [
            str(meta[k])
            for k in (
                "environment",
                "tier",
                "platform",
                "msk_instance_type",
                "kafka_version",
                "metadata_mode",
            )
            if meta.get(k) not in (None, "")
        ]
        views.append(
            {
                "anchor": f"cluster-{index}",
                "name": name,
                "id": c["id"],
                "details": details,
                "counts": {s: cnt[s] for s in WORST_FIRST},
                "total": total,
                "worst": worst,
                "rules": len(rules_hit[name]),
                "score": graded["score"],
                "grade": graded["grade"],
                "not_evaluated": [
                    {"rules": codes, "reason": reason} for codes, reason in coverage.by_reason(gaps)
                ],
                "grade_note": graded["grade_note"],
                "coverage": gaps,
                # Earlier grades, oldest first: given by the fleet job only (None: no trend column).
                "trend": graded.get("trend"),
                "incomplete": incomplete,
                "errors": errors,
                "failing": failing,
                "status": status,
                "weight": (incomplete, sum(SEVERITY_WEIGHT[s] * cnt[s] for s in SEVERITIES), total),
            }
        )
    return views


def coverage_table(result: AuditResult, clusters: list[dict]) -> dict:
    """The fleet's coverage: one row per cluster, one column per category some cluster could
    not (fully) evaluate; a cell is evaluated, partly (the codes not evaluated) or not
    evaluated (the reason). Categories evaluated everywhere are only named as such."""
    docs = result.rule_docs
    categories = sorted({e["category"] for c in clusters for e in c["coverage"]})
    labels = {}
    for cat in categories:
        codes = sorted(r.code for r in docs.values() if r.category == cat)
        labels[cat] = codes[0][:3] if codes else cat
    rows = []
    for c in sorted(clusters, key=lambda c: c["name"]):
        cells = []
        for cat in categories:
            entries = [e for e in c["coverage"] if e["category"] == cat]
            if not entries:
                cells.append({"state": "evaluated", "text": "evaluated", "title": ""})
            elif any(e["category_not_evaluated"] for e in entries):
                cells.append(
                    {"state": "not-evaluated", "text": "not evaluated", "title": coverage.describe(entries)}
                )
            else:
                cells.append(
                    {
                        "state": "partly",
                        "text": "partly: "
                        + coverage.compact(code for e in entries for code in e["rules"])
                        + " not evaluated",
                        "title": coverage.describe(entries),
                    }
                )
        rows.append(
            {
                "name": c["name"],
                "anchor": c["anchor"],
                "cells": cells,
                "gaps": sum(1 for cell in cells if cell["state"] != "evaluated"),
            }
        )
    return {
        "categories": [{"name": cat, "label": labels[cat]} for cat in categories],
        "rows": rows,
        "complete": not categories,
    }


def _rule_sections(result: AuditResult, max_rows: int, cluster_anchor: dict[str, str]):
    docs = result.rule_docs
    sections: dict[str, dict] = {}
    for h in result.cluster_rule_counts():
        sec = sections.get(h["rule"])
        if sec is None:
            sec = sections[h["rule"]] = {
                "code": h["rule"],
                "name": h["name"],
                "severity": h["severity"],
                "count": 0,
                "counts": Counter(),
                "clusters": {},
            }
        sec["count"] += h["count"]
        sec["counts"][h["severity"]] += h["count"]
        if SEVERITY_RANK[h["severity"]] > SEVERITY_RANK[sec["severity"]]:
            sec["severity"] = h["severity"]
        group = sec["clusters"].setdefault(
            h["cluster"],
            {"name": h["cluster"], "anchor": cluster_anchor.get(h["cluster"], ""), "count": 0, "rows": []},
        )
        group["count"] += h["count"]
    for f in result.findings:  # the rows: all of them for `check`, the top rows per rule for `fleet`
        group = sections[f.rule]["clusters"][f.cluster]
        if len(group["rows"]) < max_rows:
            group["rows"].append(f)

    out = []
    for sec in sections.values():
        doc = docs.get(sec["code"])
        share = _share({k: g["count"] for k, g in sec["clusters"].items()}, max_rows)
        groups = []
        for key, g in sec["clusters"].items():
            rows = [_row(f) for f in sorted(g["rows"][: share[key]], key=_natural_key)]
            groups.append(
                {
                    **g,
                    "rows": rows[:VISIBLE_ROWS],
                    "more_rows": rows[VISIBLE_ROWS:],  # one click away (a collapsed <details>)
                    "hidden": g["count"] - len(rows),  # not in the page at all
                }
            )
        shown = sum(len(g["rows"]) + len(g["more_rows"]) for g in groups)
        out.append(
            {
                **sec,
                "anchor": _rule_anchor(sec["code"]),
                "counts": {s: sec["counts"][s] for s in WORST_FIRST if sec["counts"][s]},
                "groups": groups,
                "shown": shown,
                "hidden": sec["count"] - shown,
                "summary": doc.summary if doc else "",
                "why": doc_html(doc.why) if doc else None,
                "remediation": doc_html(doc.remediation) if doc else None,
                "example": doc_html(doc.example) if doc else None,
                "category": doc.category if doc else "",
                "documented": doc is not None,
            }
        )
    out.sort(key=lambda s: (-SEVERITY_RANK[s["severity"]], -s["count"], s["code"]))
    return out


_DIGITS = re.compile(r"([0-9]{1,18})")  # ASCII, and never more digits than int() reads fast


def _natural_key(f: Finding):
    """partition t-2 before t-10: numbers in names compare as numbers."""
    parts = _DIGITS.split(f.resource_name or "")
    return (
        -SEVERITY_RANK[f.severity],
        f.resource_type,
        [(0, int(p), "") if p.isascii() and p.isdigit() else (1, 0, p) for p in parts if p],
    )


def _rule_anchor(code: str) -> str:
    return "rule-" + re.sub(r"[^A-Za-z0-9_-]", "_", code)


def _row(f: Finding) -> dict:
    loc = f.location or {}
    where = ""
    if loc.get("file"):
        where = f"{loc['file']}:{loc['line']}" if loc.get("line") else str(loc["file"])
    return {
        "severity": f.severity,
        "resource_type": f.resource_type,
        "resource_name": f.resource_name,
        "message": f.message,
        "evidence": evidence_json(f.evidence),
        "location": where,
        "fingerprint": f.fingerprint,
    }


# ---------------------------------------------------------------- charts (inline SVG geometry)

# Every chart is at most CHART_W user units wide and drawn at that size in pixels when it
# fits: a 390 px phone (366 px of content) shows its 12 px labels unscaled. The cluster chart
# puts each name above its bar so that long names need no label column.
CHART_W = 350
CHART_LABEL_W = 76  # the severity and run-date labels
CHART_VALUE_W = 80
CHART_ROW_H = 24
CHART_BAR_H = 14
CHART_STACKED_ROW_H = 36


def _truncate(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "\u2026"


def cluster_chart(clusters: list[dict], limit: int) -> dict:
    """Stacked bars, the cluster's name above each: findings per cluster by severity, worst
    clusters first."""
    hit = sorted((c for c in clusters if c["total"]), key=lambda c: (-c["weight"][1], -c["total"], c["name"]))
    shown, rest = hit[:limit], len(hit) - min(len(hit), limit)
    top = max((c["total"] for c in shown), default=0)
    bar_w = CHART_W - CHART_VALUE_W
    rows = []
    for i, c in enumerate(shown):
        x = 0.0
        segments = []
        for sev in WORST_FIRST:
            n = c["counts"][sev]
            if not n:
                continue
            w = max(2.0, bar_w * n / top)
            segments.append({"severity": sev, "x": round(x, 1), "w": round(w, 1), "n": n})
            x += w
        rows.append(
            {
                "label": _truncate(c["name"], 52),
                "name": c["name"],
                "y": i * CHART_STACKED_ROW_H,
                "segments": segments,
                "end": round(x + 6, 1),
                "total": c["total"],
            }
        )
    return {
        "rows": rows,
        "rest": rest,
        "width": CHART_W,
        "height": max(1, len(rows)) * CHART_STACKED_ROW_H + 4,
        "bar_h": CHART_BAR_H,
        "bar_y": 17,
    }


def severity_chart(summary: dict) -> dict:
    top = max((summary[s] for s in SEVERITIES), default=0) or 1
    bar_w = CHART_W - CHART_LABEL_W - CHART_VALUE_W
    rows = []
    for i, sev in enumerate(WORST_FIRST):
        n = summary[sev]
        rows.append(
            {
                "severity": sev,
                "y": i * CHART_ROW_H,
                "n": n,
                "w": round(max(2.0, bar_w * n / top) if n else 0, 1),
            }
        )
    return {
        "rows": rows,
        "width": CHART_W,
        "height": len(rows) * CHART_ROW_H + 4,
        "bar_h": CHART_BAR_H,
        "label_w": CHART_LABEL_W,
    }


def history_chart(history: list[dict] | None) -> dict | None:
    """New vs resolved findings per fleet run (runs made with --previous), oldest first."""
    if not history:
        return None
    top = max([max(h.get("new") or 0, h.get("resolved") or 0) for h in history] + [1])
    bar_w = CHART_W - CHART_LABEL_W - CHART_VALUE_W
    rows = []
    for i, h in enumerate(history[-12:]):
        new, resolved = h.get("new") or 0, h.get("resolved") or 0
        rows.append(
            {
                "label": str(h["run_date"]),
                "y": i * (2 * CHART_BAR_H + 8),
                "new": new,
                "resolved": resolved,
                "total": h.get("total") or 0,
                "w_new": round(max(2.0, bar_w * new / top) if new else 0, 1),
                "w_resolved": round(max(2.0, bar_w * resolved / top) if resolved else 0, 1),
            }
        )
    return {
        "rows": rows,
        "width": CHART_W,
        "height": len(rows) * (2 * CHART_BAR_H + 8) + 4,
        "bar_h": CHART_BAR_H,
        "label_w": CHART_LABEL_W,
    }


# ---------------------------------------------------------------- render


@lru_cache(maxsize=4)
def environment(template_dir: str = str(TEMPLATES)) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(template_dir),
        autoescape=True,  # always on: every snapshot value is untrusted text
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = lambda n: f"{n:,}"
    return env


def context(
    result: AuditResult,
    *,
    max_rows: int | None = None,
    max_chart_clusters: int = DEFAULT_MAX_CHART_CLUSTERS,
    fail_on: str = "error",
    title: str | None = None,
) -> dict:
    """Everything the template shows, computed in one pass over the findings per view."""
    if max_rows is None:  # the fleet job's result holds its top rows per rule only
        max_rows = result.rows_per_rule if result.rows_per_rule is not None else DEFAULT_MAX_ROWS
    if max_rows < 0:
        raise ValueError("max_rows must be >= 0")
    threshold = SEVERITY_RANK.get(fail_on, SEVERITY_RANK["error"])
    clusters = _cluster_views(result, threshold)
    anchors = {c["name"]: c["anchor"] for c in clusters}
    summary = result.summary()
    failing = [c for c in clusters if c["failing"]]
    incomplete = [c for c in clusters if c["incomplete"]]
    if result.is_incomplete:
        status = "incomplete"
    elif failing:
        status = "failing"
    elif summary["total"]:
        status = "findings"
    else:
        status = "clean"
    worst = [
        {
            "rule": f.rule,
            "rule_anchor": _rule_anchor(f.rule),
            "name": f.name,
            "severity": f.severity,
            "cluster": f.cluster,
            "cluster_anchor": anchors.get(f.cluster, ""),
            "resource_type": f.resource_type,
            "resource_name": f.resource_name,
            "message": f.message,
        }
        for f in result.findings[:WORST_FINDINGS]
    ]
    causes = [
        {
            "title": c.title,
            "cluster": c.cluster,
            "cluster_anchor": anchors.get(c.cluster, ""),
            "count": c.count,
            "rules": ", ".join(c.rules),
            "remediation": c.remediation,
        }
        for c in result.causes or []
    ]
    if title is None:
        title = (
            f"kafka-audit report: {clusters[0]['name']}" if len(clusters) == 1 else "kafka-audit fleet report"
        )
    return {
        "title": title,
        "version": __version__,
        "engine": result.engine,
        "status": status,
        "fail_on": fail_on if fail_on in SEVERITY_RANK else "error",
        "severities": WORST_FIRST,
        "summary": summary,
        "clusters": sorted(
            clusters, key=lambda c: (not c["weight"][0], -c["weight"][1], -c["total"], c["name"])
        ),
        "show_trend": any(c["trend"] is not None for c in clusters),
        "cluster_count": len(clusters),
        "failing_count": len(failing),
        "failing_names": [c["name"] for c in sorted(failing, key=lambda c: (-c["weight"][1], c["name"]))][
            :HEADLINE_NAMES
        ],
        "incomplete_clusters": incomplete,
        "incomplete": result.incomplete,
        "worst": worst,
        "causes": causes[:FIX_FIRST],
        "causes_more": len(causes) - len(causes[:FIX_FIRST]),
        "rules": _rule_sections(result, max_rows, anchors),
        "max_rows": max_rows,
        "complete_in": result.complete_in or COMPLETE_IN,
        "visible_rows": VISIBLE_ROWS,
        "exempted": result.exempted,
        "notes": result.notes,
        "cluster_chart": cluster_chart(clusters, max_chart_clusters),
        "coverage": coverage_table(result, clusters),
        "not_evaluated_count": sum(1 for c in clusters if c["not_evaluated"]),
        "coverage_cap": COVERAGE_CAP,
        "severity_chart": severity_chart(summary),
        "history_chart": history_chart(result.history),
        "weights": SEVERITY_WEIGHT,
        "caps": GRADE_CAP,
        "thresholds": GRADE_THRESHOLDS,
    }


_OPTIONS = ("max_rows", "max_chart_clusters", "fail_on", "title")


def render(result: AuditResult, **options) -> str:
    """The report page. Options other renderers take (``rules``, ``indent``...) are ignored."""
    template = environment().get_template("report.html.j2")
    return template.render(**context(result, **{k: v for k, v in options.items() if k in _OPTIONS}))
