"""What a tool hands back: structured content (the command's JSON document and what the server
adds beside it, auditor/mcp/schemas.py) and text an assistant can quote (the command's own
text report), each within the server's size limit.

A result over the limit is cut, never dropped: the largest list is shortened first (the
findings, worst first, keep their order), then the longest string; ``truncated`` says, per key
path, how many items were kept of how many, and the text ends with a line saying what was cut
and how to ask for less (a narrower ``select``, one cluster, some brokers). Counts
(``summary``, ``totals``) are never cut, so they stay the whole run's.
"""

from __future__ import annotations

import json
import math

from mcp_types import CallToolResult, TextContent

from auditor import exitcodes

# What each exit code means here (auditor/exitcodes.py; the README's table).
MEANINGS = {
    exitcodes.OK: "nothing at or above fail_on",
    exitcodes.FINDINGS: "findings at or above fail_on",
    exitcodes.INCOMPLETE: "incomplete: a source failed or gave nothing the audit reads; never a clean audit",
    exitcodes.WAIT_TIMEOUT: "not healthy yet (kafka-audit wait keeps waiting; exit 4 when --max-wait passes)",
}
PREFLIGHT_MEANINGS = {
    exitcodes.OK: "every broker (and controller) can be restarted one at a time",
    exitcodes.FINDINGS: "a broker or controller is unsafe to restart, or something blocks the roll",
    exitcodes.INCOMPLETE: "incomplete: a source failed, or a broker could not be evaluated: never 'safe'",
}
LONG_STRING = 200  # characters: shorter strings are never cut


def exit_of(code: int, fail_on: str | None = None, meanings: dict[int, str] = MEANINGS) -> dict:
    out = {"code": code, "meaning": meanings.get(code) or MEANINGS.get(code, "")}
    if fail_on is not None:
        out["fail_on"] = fail_on
    return out


def cited(codes) -> dict:
    """The documentation of the rules ``codes`` cite: summary, remediation, references (the
    sources each rule is checked against), as `rules explain` gives them."""
    from auditor.commands.rules import rule_json
    from auditor.registry import load_rules

    rules = load_rules()
    out = {}
    for code in sorted(set(codes)):
        if code in rules:
            doc = rule_json(rules[code])
            out[code] = {
                k: doc[k]
                for k in ("code", "name", "severity", "category", "summary", "remediation", "references")
            }
    return out


def cited_lines(rules: dict) -> list[str]:
    """The text report's last part: each rule cited, its summary and its references."""
    if not rules:
        return []
    lines = ["", "rules cited (explain_rule CODE gives the whole documentation):"]
    for code, r in rules.items():
        lines.append(f"  {code} {r['name']} ({r['severity']}): {r['summary']}")
        lines.extend(f"    - {ref['title']}: {ref['url']}" for ref in r["references"])
    return lines


def size(value) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _cuttable(value, path: str, parent, key, found: list) -> int:
    """Size of ``value``; appends (size, path, parent, key) of every list of more than one item
    and every long string in it."""
    if isinstance(value, dict):
        n = sum(_cuttable(v, f"{path}.{k}" if path else str(k), value, k, found) for k, v in value.items())
        return n + 2 * len(value) + 2
    if isinstance(value, list):
        n = sum(_cuttable(v, f"{path}[{i}]", value, i, found) for i, v in enumerate(value))
        n += len(value) + 2
        if len(value) > 1 and parent is not None:
            found.append((n, path, parent, key))
        return n
    n = size(value)
    if isinstance(value, str) and len(value) > LONG_STRING and parent is not None:
        found.append((n, path, parent, key))
    return n


def fit(doc: dict, limit: int) -> tuple[dict, list[dict]]:
    """``doc`` cut to at most ``limit`` bytes of JSON (as close as cutting allows), and what was cut:
    lists first (each keeps at least its first item), long strings only when no list is left to
    cut. The rules cited by findings no longer shown are dropped with them."""
    cuts: dict[str, dict] = {}
    for _ in range(500):
        if size({**doc, "truncated": list(cuts.values())}) <= limit:
            break
        found: list = []
        total = _cuttable(doc, "", None, None, found) + size(list(cuts.values()))
        found = [f for f in found if f[1].split(".")[0].split("[")[0] not in ("summary", "totals", "exit")]
        lists = [f for f in found if isinstance(f[2][f[3]], list)]
        if not (lists or found):
            break
        n, path, parent, key = max(lists or found, key=lambda f: f[0])
        value = parent[key]
        excess = total - limit
        if isinstance(value, list):
            keep = max(1, len(value) - max(1, math.ceil(excess / max(1, n / len(value)))))
            parent[key] = value[:keep]
        else:
            keep = max(LONG_STRING // 2, len(value) - max(1, excess))
            parent[key] = value[:keep] + " ... [cut]"
        cuts.setdefault(path, {"path": path, "shown": keep, "total": len(value)})["shown"] = keep
        if path == "findings" and isinstance(doc.get("rules"), dict):
            shown = {f.get("rule") for f in doc["findings"] if isinstance(f, dict)}
            kept = {code: r for code, r in doc["rules"].items() if code in shown}
            if len(kept) < len(doc["rules"]):
                entry = cuts.setdefault("rules", {"path": "rules", "shown": 0, "total": len(doc["rules"])})
                entry["shown"] = len(kept)
                doc["rules"] = kept
    return doc, list(cuts.values())


def fit_text(text: str, limit: int, cuts: list[dict]) -> str:
    lines = text.rstrip("\n").split("\n")
    note = []
    if cuts:
        what = "; ".join(f"{c['path']}: {c['shown']} of {c['total']}" for c in cuts[:10])
        note.append(
            f"[the structured result was cut to the server's size limit ({limit} bytes): {what}; "
            "ask for less: a narrower select, one cluster or snapshot, some brokers]"
        )
    budget = limit - size("\n".join(note)) - 200
    kept, used = [], 0
    for line in lines:
        used += len(line.encode("utf-8")) + 1
        if used > budget:
            note.insert(0, f"[text cut to the size limit: {len(kept)} of {len(lines)} lines shown]")
            break
        kept.append(line)
    return "\n".join(kept + note) + "\n"


def tool_result(doc: dict, text: str, limit: int) -> CallToolResult:
    """The CallToolResult of a tool: ``doc`` as structured content, ``text`` as its text, both
    within ``limit`` bytes (what was cut said in ``truncated`` and in the text)."""
    doc, cuts = fit(doc, limit)
    if cuts:
        doc["truncated"] = cuts
    return CallToolResult(
        content=[TextContent(type="text", text=fit_text(text, limit, cuts))], structured_content=doc
    )
