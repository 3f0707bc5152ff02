"""The rule registry: a plain decorator that validates a rule's identity and documentation.

A rule is one small function ``(tables, params) -> DataFrame`` of findings columns, with its
parameters declared beside it. Its docstring is its documentation: a summary line, then
``Why:``, ``Remediation:`` and ``Example:`` sections. ``kafka-audit rules`` and
docs/rules.md are generated from what is registered here.

A rule declares the snapshot tables it reads with ``needs``: each entry is a table name
(auditor/snapshot/schema.py TABLES) or a tuple of alternatives ("any of"). A rule whose
needs a snapshot does not meet is reported as not evaluated (auditor/coverage.py) instead of
passing silently.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from auditor.errors import UsageError
from auditor.findings import SEVERITIES

# Codes are fixed by shared/RULES.md; a rule outside this list is rejected at import time.
CATALOGUE: dict[str, str] = {
    **{f"AUD00{i}": "audit" for i in (1,)},
    **{f"REP{i:03d}": "replication" for i in range(1, 11)},
    **{f"PAR{i:03d}": "partitions" for i in range(1, 8)},
    **{f"CTL{i:03d}": "controller" for i in range(1, 11)},
    **{f"THR{i:03d}": "threads" for i in range(1, 8)},
    **{f"DSK{i:03d}": "storage" for i in range(1, 7)},
    **{f"CLI{i:03d}": "clients" for i in range(1, 4)},
    **{f"MSK{i:03d}": "msk" for i in range(1, 4)},
    **{f"CFG{i:03d}": "hygiene" for i in (1, 2, 3, 4, 900)},
    **{f"FLT{i:03d}": "fleet" for i in range(1, 5)},
    **{f"MNT{i:03d}": "maintenance" for i in range(1, 5)},
}
SCOPES = ("cluster", "fleet", "maintenance", "change")  # change: lint of proposed files (THR007, CFG900)
SECTIONS = ("Why", "Remediation", "Example")

_CODE = re.compile(r"^[A-Z]{3}\d{3}$")
_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
_PARAM = re.compile(r"^[a-z][a-z0-9_]*$")
_PARAM_TYPES = (bool, int, float, str, tuple)


@dataclass(frozen=True)
class Param:
    """A typed rule parameter. Its type is the type of its default."""

    name: str
    default: Any
    doc: str

    @property
    def type(self) -> type:
        return type(self.default)

    def coerce(self, value: Any, where: str) -> Any:
        t = self.type
        if t is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if t is tuple and isinstance(value, list):
            return tuple(value)
        if not isinstance(value, t) or (t is int and isinstance(value, bool)):
            raise UsageError(f"{where}: parameter '{self.name}' must be {t.__name__}, got {value!r}")
        return value


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    category: str
    scope: str
    params: tuple[Param, ...]
    func: Callable = field(repr=False)
    summary: str
    why: str
    remediation: str
    example: str
    # Tables the rule needs: a table name, or a tuple of alternatives (any of them will do).
    needs: tuple[str | tuple[str, ...], ...] = ()

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def bind(self, overrides: dict[str, Any] | None = None, where: str = "config") -> MappingProxyType:
        """Parameters for one run: declared defaults with validated overrides."""
        values = self.defaults()
        by_name = {p.name: p for p in self.params}
        for key, value in (overrides or {}).items():
            if key not in by_name:
                known = ", ".join(by_name) or "none"
                raise UsageError(f"{where}: {self.code} has no parameter '{key}' (parameters: {known})")
            values[key] = by_name[key].coerce(value, f"{where}: {self.code}")
        return MappingProxyType(values)


REGISTRY: dict[str, Rule] = {}


def rule(code: str, name: str, severity: str, *, params: tuple[Param, ...] = (), scope: str = "cluster",
         needs: tuple[str | tuple[str, ...], ...] = ()):
    """Register a check. Validates everything a user will later rely on. ``needs``: the
    snapshot tables without which the rule cannot judge (see the module doc)."""

    def register(func: Callable) -> Callable:
        where = f"rule {code} ({func.__module__}.{func.__qualname__})"
        if not _CODE.match(code) or code not in CATALOGUE:
            raise ValueError(f"{where}: code is not in the RULES.md catalogue")
        if code in REGISTRY:
            raise ValueError(f"{where}: code registered twice")
        if not _NAME.match(name) or any(r.name == name for r in REGISTRY.values()):
            raise ValueError(f"{where}: name '{name}' must be unique kebab-case")
        if severity not in SEVERITIES:
            raise ValueError(f"{where}: severity must be one of {SEVERITIES}")
        if scope not in SCOPES:
            raise ValueError(f"{where}: scope must be one of {SCOPES}")
        for p in params:
            if not _PARAM.match(p.name) or not isinstance(p.default, _PARAM_TYPES) or not p.doc:
                raise ValueError(f"{where}: parameter {p.name!r} needs a snake_case name, a typed default and a doc")
        summary, sections = parse_docstring(func.__doc__ or "", where)
        REGISTRY[code] = Rule(code, name, severity, CATALOGUE[code], scope, tuple(params), func, summary,
                              sections["Why"], sections["Remediation"], sections["Example"],
                              needs=_check_needs(needs, where))
        return func

    return register


def _check_needs(needs, where: str) -> tuple[str | tuple[str, ...], ...]:
    from auditor.snapshot.schema import TABLES

    if isinstance(needs, str):
        needs = (needs,)
    out = []
    for need in needs:
        names = (need,) if isinstance(need, str) else tuple(need)
        unknown = [n for n in names if not isinstance(n, str) or n not in TABLES or TABLES[n].from_manifest]
        if not names or unknown:
            raise ValueError(f"{where}: needs names no snapshot table: {need!r}")
        out.append(names[0] if len(names) == 1 else names)
    return tuple(out)


def parse_docstring(doc: str, where: str) -> tuple[str, dict[str, str]]:
    text = inspect.cleandoc(doc)
    parts = re.split(r"^(Why|Remediation|Example):[ \t]*", text, flags=re.M)
    summary = " ".join(parts[0].split())
    sections = {parts[i]: textwrap.dedent(parts[i + 1]).strip() for i in range(1, len(parts) - 1, 2)}
    missing = [s for s in SECTIONS if not sections.get(s)]
    if not summary or missing:
        raise ValueError(f"{where}: docstring needs a summary and sections {', '.join(SECTIONS)} (missing {missing})")
    return summary, sections


def load_rules() -> dict[str, Rule]:
    """Import the checks package, which registers every rule."""
    import checks  # noqa: F401  (import registers)

    return REGISTRY


def resolve(ref: str, where: str = "config") -> list[Rule]:
    """Rules matching a code, a name, or a code prefix (``REP``, ``PAR00``) like ruff's select."""
    rules = load_rules()
    key = ref.strip()
    if key.upper() in rules:
        return [rules[key.upper()]]
    by_name = [r for r in rules.values() if r.name == key.lower()]
    if by_name:
        return by_name
    if key and re.fullmatch(r"[A-Za-z]{1,3}\d{0,2}", key):
        hits = [r for c, r in sorted(rules.items()) if c.startswith(key.upper())]
        if hits:
            return hits
    raise UsageError(f"{where}: unknown rule '{ref}' (see 'kafka-audit rules list')")
