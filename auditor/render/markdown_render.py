"""A concise GitHub-flavoured Markdown pull-request comment.

A status line, a summary table (clusters with findings or an incomplete audit; clean ones
named on one line), then findings grouped by severity, worst first: one collapsible
``<details>`` per rule with a table of the resources hit and the rule's remediation.

Every value taken from a snapshot (cluster and resource names, messages) is escaped: ``|``
and backticks and the other Markdown punctuation get a backslash, ``<``, ``>`` and ``&``
become entities, line breaks become spaces, so a value can neither break a table nor
inject markup; other control characters are shown as ``\\xNN`` (auditor/escape.py)
and ``@name`` / ``@org/team`` get a zero-width space after the ``@`` (``@&#8203;org/team``)
so that the comment pings nobody. Rule documentation is ours and is kept as Markdown.

Options: ``max_rows`` (default 10) rows per rule, ``max_chars`` (default 60000) after which
finding tables are left out, ``fail_on`` (default ``error``) for the status line, ``title``.
Whatever the options, the whole comment (status, summary table, clean-cluster line, notes
included) stays within GitHub's limit of 65536 characters (counted in UTF-16 code units,
which is never fewer than Python's ``len``): past it, lines are dropped and the comment
ends with TRUNCATION_LINE.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from auditor import coverage
from auditor.causes import headline
from auditor.escape import neutralise, no_mentions
from auditor.findings import SEVERITIES, SEVERITY_RANK, WORST_FIRST, AuditResult, Finding

DEFAULT_MAX_ROWS = 10
DEFAULT_MAX_CHARS = 60000
GITHUB_COMMENT_LIMIT = 65536
TRUNCATION_LINE = (
    "_Comment truncated: it reached GitHub's limit of 65536 characters; "
    "see the full report (`--format text` or `--format json`)._"
)
MAX_CLEAN_NAMES = 30
ICON = {"critical": "\U0001f534", "error": "\U0001f7e0", "warning": "\U0001f7e1", "info": "\U0001f535"}

_MD_PUNCT = re.compile(r"([\\`*_\[\]|~#])")


def md(value) -> str:
    """Escape a value for inline Markdown, safe inside a table cell."""
    text = "" if value is None else str(value)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MD_PUNCT.sub(r"\\\1", text)
    return no_mentions(neutralise(" ".join(text.split())))


def _units(text: str) -> int:
    """Length in UTF-16 code units, as GitHub counts a comment (>= len(text))."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def cap_comment(lines: list[str], limit: int = GITHUB_COMMENT_LIMIT) -> str:
    """The lines joined, ending in one line feed; within ``limit`` UTF-16 units. Past it the
    lines that fit are kept, an open ``<details>`` is closed and TRUNCATION_LINE ends it."""
    text = "\n".join(lines).rstrip("\n") + "\n"
    if _units(text) <= limit:
        return text
    closing = ["", "</details>"]
    tail = ["", TRUNCATION_LINE]
    budget = limit - _units("\n".join(closing + tail)) - 2
    kept: list[str] = []
    used = 0
    open_details = 0
    for line in lines:
        n = _units(line) + 1
        if used + n > budget:
            if not kept:  # a single line too long by itself: cut it
                cut = line[: max(budget - 1, 0)]
                while cut and _units(cut) + 1 > budget:
                    cut = cut[:-1]
                kept.append(cut)
            break
        kept.append(line)
        used += n
        open_details += line.count("<details>") - line.count("</details>")
    while kept and not kept[-1].strip():
        kept.pop()
    if open_details > 0:
        kept.extend(closing)
    kept.extend(tail)
    return "\n".join(kept) + "\n"


def _one_paragraph(text: str) -> str:
    return " ".join((text or "").split())


def render(
    result: AuditResult,
    *,
    max_rows: int = DEFAULT_MAX_ROWS,
    max_chars: int = DEFAULT_MAX_CHARS,
    fail_on: str = "error",
    title: str = "kafka-audit",
    **_options,
) -> str:
    threshold = SEVERITY_RANK.get(fail_on, SEVERITY_RANK["error"])
    summary = result.summary()
    clusters = [str(c.get("name") or c.get("id")) for c in result.clusters]
    counts: dict[str, Counter] = defaultdict(Counter)
    by_rule: dict[str, list[Finding]] = {}
    for f in result.findings:
        counts[f.cluster][f.severity] += 1
        by_rule.setdefault(f.rule, []).append(f)
        if f.cluster not in clusters:
            clusters.append(f.cluster)
    incomplete: dict[str, list[dict]] = defaultdict(list)
    for item in result.incomplete:
        incomplete[str(item.get("cluster"))].append(item)
        if str(item.get("cluster")) not in clusters:
            clusters.append(str(item.get("cluster")))

    failing = [c for c in clusters if any(counts[c][s] for s in SEVERITIES if SEVERITY_RANK[s] >= threshold)]
    status = _status(result, clusters, incomplete, failing, summary["total"], fail_on)
    sev_line = " \u00b7 ".join(f"{summary[s]} {s}" for s in WORST_FIRST)
    out = [
        f"### {md(title)}: {status}",
        "",
        f"{summary['total']} finding{'s' if summary['total'] != 1 else ''}: {sev_line}"
        + (f" \u00b7 {result.exempted} exempted" if result.exempted else ""),
        "",
    ]
    out += _cause_lines(result, summary["total"], max_rows)
    out += _incomplete_lines(incomplete)
    out += _cluster_table(result, clusters, counts, incomplete, failing)

    size = sum(len(line) + 1 for line in out)
    sections, truncated = _finding_sections(by_rule, result.rule_docs, max_rows, max_chars, size)
    out += sections
    if truncated:
        out.append("_Some finding tables were left out to keep this comment under GitHub's size limit._")
        out.append("")
    out.extend(f"_note: {md(note)}_" for note in result.notes)
    return cap_comment(out)


def _status(result, clusters, incomplete, failing, total, fail_on) -> str:
    n = len(clusters)
    plural = "s" if n != 1 else ""
    if result.is_incomplete:
        return f"\u26a0\ufe0f **Incomplete audit**: {len(incomplete)} of {n} cluster{plural} could not be fully read"
    if failing:
        return f"\u274c **{len(failing)} of {n} cluster{plural} failing** ({fail_on} or worse)"
    if total:
        return f"\u2705 no {fail_on} or worse in {n} cluster{plural}"
    return f"\u2705 **clean**: no findings in {n} cluster{plural}"


def _cause_lines(result: AuditResult, total: int, max_rows: int) -> list[str]:
    """Root causes first (auditor/causes.py)."""
    if not result.causes:
        return []
    out = [f"**{headline(result.causes, total)}**", ""]
    out += [
        f"- {md(c.cluster)}: **{md(c.title)}**: {c.count} finding(s) ({md(', '.join(c.rules))}); "
        f"fix: {md(c.remediation)}"
        for c in result.causes[:max_rows]
    ]
    if len(result.causes) > max_rows:  # most findings first: the rest explain fewer
        out.append(f"- and {len(result.causes) - max_rows} more root cause(s) (the JSON report lists all)")
    out.append("")
    return out


def _incomplete_lines(incomplete: dict[str, list[dict]]) -> list[str]:
    if not incomplete:
        return []
    out = ["> **The audit is incomplete; these results are partial.**"]
    for cluster, items in incomplete.items():
        for item in items:
            target = f" {md(item['target'])}" if item.get("target") else ""
            out.append(
                f"> - {md(cluster)}: source {md(item.get('source'))}{target} failed: {md(item.get('message'))}"
            )
    out.append("")
    return out


def _cluster_table(result, clusters, counts, incomplete, failing) -> list[str]:
    """The summary table (clusters with findings or an incomplete audit), the clean ones on one
    line, and the clusters whose rules could not be evaluated."""
    out: list[str] = []
    hit = [c for c in clusters if sum(counts[c].values())]
    table_clusters = [c for c in clusters if c in incomplete or c in hit]
    table_clusters.sort(key=lambda c: (c not in incomplete, [-counts[c][s] for s in WORST_FIRST], c))
    if table_clusters:
        out.append("| cluster | " + " | ".join(WORST_FIRST) + " | status |")
        out.append("|---|" + "--:|" * len(WORST_FIRST) + "---|")
        for c in table_clusters:
            state = "incomplete" if c in incomplete else ("failing" if c in failing else "findings")
            out.append(f"| {md(c)} | " + " | ".join(str(counts[c][s]) for s in WORST_FIRST) + f" | {state} |")
        out.append("")
    clean = [c for c in clusters if c not in table_clusters]
    if clean:
        names = ", ".join(md(c) for c in clean[:MAX_CLEAN_NAMES])
        more = f" and {len(clean) - MAX_CLEAN_NAMES} more" if len(clean) > MAX_CLEAN_NAMES else ""
        out.append(f"No findings: {names}{more}.")
        out.append("")
    gaps = coverage.per_cluster(result)
    if gaps:  # one line: rules whose inputs were not collected found nothing, which is not "clean"
        listed = "; ".join(
            f"{md(name)}: "
            + ", ".join(f"{md(codes)} ({md(reason)})" for codes, reason in coverage.by_reason(entries))
            for name, entries in gaps[:MAX_CLEAN_NAMES]
        )
        more = f"; and {len(gaps) - MAX_CLEAN_NAMES} more cluster(s)" if len(gaps) > MAX_CLEAN_NAMES else ""
        out.append(f"**Not evaluated** (inputs not collected): {listed}{more}.")
        out.append("")
    return out


def _finding_sections(
    by_rule: dict[str, list[Finding]], docs: dict, max_rows: int, max_chars: int, size: int
) -> tuple[list[str], bool]:
    """One collapsible block per rule, grouped by severity, worst first. `size` is what the
    comment already holds: a rule's finding table is left out once it would pass `max_chars`.
    Returns the lines and whether any table was left out."""
    out: list[str] = []
    truncated = False
    for sev in WORST_FIRST:
        rules = [(code, items) for code, items in by_rule.items() if items[0].severity == sev]
        if not rules:
            continue
        rules.sort(key=lambda kv: (-len(kv[1]), kv[0]))
        total = sum(len(items) for _, items in rules)
        block = [f"#### {ICON[sev]} {sev} ({total})", ""]
        for code, items in rules:
            doc = docs.get(code)
            in_clusters = len({f.cluster for f in items})
            block.append(
                f"<details><summary><b>{md(code)}</b> {md(items[0].name)}: {len(items)} finding"
                f"{'s' if len(items) != 1 else ''} in {in_clusters} cluster{'s' if in_clusters != 1 else ''}"
                "</summary>"
            )
            block.append("")
            if doc:
                block.append(f"{_one_paragraph(doc.summary)}")
                block.append("")
            rows = ["| cluster | resource | message |", "|---|---|---|"]
            for f in items[:max_rows]:
                rows.append(
                    f"| {md(f.cluster)} | {md(f.resource_type)} {md(f.resource_name)} | {md(f.message)} |"
                )
            rows.append("")
            if len(items) > max_rows:
                rows.append(f"_{len(items) - max_rows} more not listed._")
                rows.append("")
            if size + sum(len(r) + 1 for r in rows) > max_chars:
                truncated = True
                block.append("_Findings not listed: the comment is at its size limit; see the full report._")
                block.append("")
            else:
                block.extend(rows)
            if doc:
                block.append(f"**Remediation:** {_one_paragraph(doc.remediation)}")
                block.append("")
            block.append("</details>")
            block.append("")
            size += sum(len(line) + 1 for line in block)
            out.extend(block)
            block = []
    return out, truncated
