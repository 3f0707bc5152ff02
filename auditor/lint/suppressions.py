"""Inline suppressions: ``# kafka-audit: ignore[CODE,...] reason="..."`` comments."""

from __future__ import annotations

import re

from auditor.lint.model import LintUsageError, Suppression

# The codes list is bounded: unbounded, a line of many "ignore[" without "]" was scanned to its
# end from each of them (quadratic).
_SUPPRESS = re.compile(r"#\s*kafka-audit\s*:\s*ignore\s*\[([^\]]{0,1000})\](.*)$")
_SUPPRESS_HCL = re.compile(r"(?:#|//|/\*)\s*kafka-audit\s*:\s*ignore\s*\[([^\]]*)\](.*?)(?:\*/\s*)?$")
_REASON = re.compile(r"""reason\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_CODE = re.compile(r"^[A-Z]{3}\d{3}$")


def find_suppressions(
    text: str, file: str, yaml_file: bool | None = None, syntax: str | None = None
) -> list[Suppression]:
    """``# kafka-audit: ignore[CODE,...] reason="..."`` comments. ``syntax``: "yaml" (a
    trailing comment covers its own line), "properties" (where ``#`` after a value is part of
    the value, only whole-line comments exist) or "hcl" (``#``, ``//`` or ``/* ... */``,
    trailing or alone; JSON has no comments). A comment alone on its line covers the next."""
    if syntax is None:
        syntax = "yaml" if yaml_file else "properties"
    pattern = _SUPPRESS_HCL if syntax == "hcl" else _SUPPRESS
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        if "kafka-audit" not in raw:
            continue
        m = pattern.search(raw)
        if not m:
            continue
        before = raw[: m.start()]
        own_line = not before.strip()
        if not own_line and syntax == "properties":
            continue  # part of a properties value, not a comment
        codes = tuple(c.strip().upper() for c in m.group(1).split(",") if c.strip())
        if not codes:
            raise LintUsageError(f'{file}:{number}: suppression names no rule: use ignore[CODE] reason="..."')
        for code in codes:
            if not _CODE.match(code):
                raise LintUsageError(
                    f"{file}:{number}: suppression names '{code}', not a rule code like REP002"
                )
        r = _REASON.search(m.group(2))
        reason = (r.group(1) if r.group(1) is not None else r.group(2)).strip() if r else ""
        if not reason:
            raise LintUsageError(
                f"{file}:{number}: suppression of {', '.join(codes)} needs a reason: "
                f'# kafka-audit: ignore[{codes[0]}] reason="why this is acceptable"'
            )
        out.append(Suppression(file, number, codes, reason, own_line))
    return out
