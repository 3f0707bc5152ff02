"""The rule registry: collects what rule modules declare, validates it, and looks rules up.

A rule is one small function ``(tables, params) -> DataFrame`` of findings columns, with its
parameters declared beside it, or a rule the lint layer computes (``lint_rule``). Its
docstring is its documentation: a summary line, then ``Why:``, ``Remediation:`` and
``Example:`` sections. ``kafka-audit rules`` and docs/rules.md are generated from what is
registered here.

Dependencies run one way: rule modules import auditor/declarations.py (``@rule``, ``Param``)
and never this module; this module imports the rule modules, from the explicit catalogue
(``checks.RULE_MODULES``) and from the ``kafka_auditor.rules`` entry-point group
(ENTRY_POINT_GROUP: each entry point names a module, so an installed plugin package adds
rules), and validates each declaration as it collects it. Why: a registry that the rules
import while it imports them works only as long as one side imports lazily, and a plugin
could not add rules to an import list it does not own.

A rule declares the snapshot tables it reads with ``needs``: each entry is a table name
(auditor/snapshot/schema.py TABLES) or a tuple of alternatives ("any of"). A rule whose
needs a snapshot does not meet is reported as not evaluated (auditor/coverage.py) instead of
passing silently. It declares the shared transforms it reads with ``uses`` (see
auditor/declarations.py).
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from auditor.declarations import (
    CAUSE_ROLES,
    COMMANDS,
    SCOPE_COMMANDS,
    Category,
    Declaration,
    Inherits,
    Param,
    category_of,
    declared_in,
)
from auditor.declarations import rule as declare
from auditor.errors import AuditorError, UsageError
from auditor.findings import RuleDoc
from auditor.severity import SEVERITIES

ENTRY_POINT_GROUP = "kafka_auditor.rules"
# Built-in codes are fixed by shared/RULES.md: each series (category) is declared once, beside its
# rules (``CATEGORY`` of a rule module, auditor/declarations.py Category). A code with a built-in
# prefix outside its series is rejected; a plugin's rule has a prefix of its own and declares its
# category. Filled by load_rules from the rule modules, before any of their rules is registered.
CATEGORIES: dict[str, Category] = {}
SCOPES = ("cluster", "fleet", "maintenance", "change")  # change: lint of proposed files (THR007, CFG900)
PRODUCERS = ("engine", "lint")  # what computes a rule's findings: its DataFrame check, or auditor/lint
SECTIONS = ("Why", "Remediation", "Example", "References")
# One line under References: "- Title <https://...>": a reader sees what the source is before following it.
_REFERENCE = re.compile(r"^-[ \t]+(?P<title>\S.*?)[ \t]+<(?P<url>https://[^\s<>]+)>$")

_CODE = re.compile(r"^[A-Z]{3}\d{3}$")
_NAME = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
_PARAM = re.compile(r"^[a-z][a-z0-9_]*$")
_PARAM_TYPES = (bool, int, float, str, tuple)


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: str
    category: str
    scope: str
    params: tuple[Param, ...]
    func: Callable | None = field(repr=False)  # None: the lint layer produces the findings
    summary: str
    why: str
    remediation: str
    example: str
    # Tables the rule needs: a table name, or a tuple of alternatives (any of them will do).
    needs: tuple[str | tuple[str, ...], ...] = ()
    # Shared transforms the check reads (auditor/declarations.py); the runner materialises them first.
    uses: tuple[Callable, ...] = ()
    produced_by: str = "engine"
    # Sources behind the documentation, each "Title <https://...>" (docstring section References).
    references: tuple[str, ...] = ()
    # The commands that run it (auditor/declarations.py COMMANDS): its scope's and those it declares.
    commands: tuple[str, ...] = ()
    lint_key: str | None = None  # lint: the setting a broker finding's line points at
    cause: str | Inherits | None = None  # its role for root causes (auditor/engine/root_causes.py)
    # Metrics it needs (a canonical name, or a tuple of alternatives) and cluster fields that must
    # be known (auditor/declarations.py, auditor/coverage.py).
    metrics: tuple[str | tuple[str, ...], ...] = ()
    facts: tuple[str, ...] = ()

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
_loaded_from: tuple = ()  # the rule modules load_rules collected REGISTRY from


def rule(code: str, name: str, severity: str, **declared):
    """Declare and register a check at once (tests, a notebook): ``@rule`` of
    auditor/declarations.py followed by ``register``. Rule modules use that ``@rule``."""

    def declare_and_register(func: Callable) -> Callable:
        declare(code, name, severity, **declared)(func)
        register(func.__rule__)
        return func

    return declare_and_register


def register(decl: Declaration) -> Rule:
    """Validate a declaration (everything a user will later rely on) and add its rule."""
    code, name, severity, scope, where = decl.code, decl.name, decl.severity, decl.scope, decl.where
    series = CATEGORIES.get(code[:3])
    if not _CODE.match(code) or (code not in series.codes if series else not decl.category):
        raise ValueError(
            f"{where}: code is not in the RULES.md catalogue (a plugin's rule has a prefix "
            "of its own and declares its category)"
        )
    if series is not None and decl.category not in (None, series.name):
        raise ValueError(f"{where}: category must be {series.name!r} (RULES.md)")
    if code in REGISTRY:
        raise ValueError(f"{where}: code registered twice")
    if not _NAME.match(name) or any(r.name == name for r in REGISTRY.values()):
        raise ValueError(f"{where}: name '{name}' must be unique kebab-case")
    if severity not in SEVERITIES:
        raise ValueError(f"{where}: severity must be one of {SEVERITIES}")
    if scope not in SCOPES:
        raise ValueError(f"{where}: scope must be one of {SCOPES}")
    if decl.produced_by not in PRODUCERS or (decl.func is None) != (decl.produced_by != "engine"):
        raise ValueError(f"{where}: a DataFrame check, or a rule the lint layer produces (lint_rule)")
    for p in decl.params:
        if not _PARAM.match(p.name) or not isinstance(p.default, _PARAM_TYPES) or not p.doc:
            raise ValueError(
                f"{where}: parameter {p.name!r} needs a snake_case name, a typed default and a doc"
            )
    if not set(decl.runs_in) <= set(COMMANDS):
        raise ValueError(f"{where}: runs_in takes commands of {COMMANDS}, not {decl.runs_in}")
    if decl.cause is not None and not (decl.cause in CAUSE_ROLES or isinstance(decl.cause, Inherits)):
        raise ValueError(f"{where}: cause is one of {CAUSE_ROLES} or an Inherits")
    if not all(callable(u) and getattr(u, "__name__", "").isidentifier() for u in decl.uses):
        raise ValueError(f"{where}: uses must list shared transforms (functions of the tables)")
    summary, sections = parse_docstring(decl.doc, where)
    REGISTRY[code] = Rule(
        code,
        name,
        severity,
        series.name if series else decl.category,
        scope,
        decl.params,
        decl.func,
        summary,
        sections["Why"],
        sections["Remediation"],
        sections["Example"],
        needs=_check_needs(decl.needs, where),
        uses=decl.uses,
        produced_by=decl.produced_by,
        references=sections["References"],
        commands=tuple(c for c in COMMANDS if c in SCOPE_COMMANDS[scope] or c in decl.runs_in),
        lint_key=decl.lint_key,
        cause=decl.cause,
        metrics=_check_metrics(decl.metrics, where),
        facts=_check_facts(decl.facts, where),
    )
    return REGISTRY[code]


def _check_metrics(metrics, where: str) -> tuple[str | tuple[str, ...], ...]:
    from auditor.snapshot.schema import METRICS

    out = []
    for need in metrics:
        names = (need,) if isinstance(need, str) else tuple(need)
        if not names or any(not isinstance(n, str) or n not in METRICS for n in names):
            raise ValueError(
                f"{where}: metrics names no metric of auditor/snapshot/schema.py METRICS: {need!r}"
            )
        out.append(names[0] if len(names) == 1 else names)
    return tuple(out)


def _check_facts(facts, where: str) -> tuple[str, ...]:
    from auditor.snapshot.schema import TABLES

    known = set(TABLES["clusters"].names) - {"cluster_id", "cluster_name"}
    if any(f not in known for f in facts):
        raise ValueError(f"{where}: facts names no column of the clusters table: {facts!r}")
    return tuple(facts)


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


def parse_docstring(doc: str, where: str) -> tuple[str, dict[str, Any]]:
    """The summary and the sections of a rule docstring; ``References`` comes back as a tuple
    of ``Title <URL>`` strings (see reference_parts), every other section as text."""
    text = inspect.cleandoc(doc)
    parts = re.split(rf"^({'|'.join(SECTIONS)}):[ \t]*", text, flags=re.M)
    summary = " ".join(parts[0].split())
    sections: dict[str, Any] = {
        parts[i]: textwrap.dedent(parts[i + 1]).strip() for i in range(1, len(parts) - 1, 2)
    }
    missing = [s for s in SECTIONS if not sections.get(s)]
    if not summary or missing:
        raise ValueError(
            f"{where}: docstring needs a summary and sections {', '.join(SECTIONS)} (missing {missing})"
        )
    lines = [line.strip() for line in sections["References"].splitlines() if line.strip()]
    malformed = [line for line in lines if not _REFERENCE.match(line)]
    if malformed:
        raise ValueError(
            f"{where}: each References line must be '- Title <https://...>', not {malformed[0]!r}"
        )
    sections["References"] = tuple(line[1:].strip() for line in lines)
    return summary, sections


def reference_parts(reference: str) -> tuple[str, str]:
    """(title, url) of one entry of Rule.references."""
    match = _REFERENCE.match(f"- {reference}")
    if match is None:
        raise ValueError(f"not a reference (Title <https://...>): {reference!r}")
    return match["title"], match["url"]


def rule_modules() -> list:
    """The modules that declare rules: the built-in catalogue, then each installed plugin's
    entry point of ENTRY_POINT_GROUP (a module), by entry-point name."""
    from importlib import import_module
    from importlib.metadata import entry_points

    import checks

    modules = list(checks.RULE_MODULES)
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        try:
            modules.append(import_module(ep.module))
        except Exception as e:  # a broken plugin: name it, in one line
            raise AuditorError(
                f"rule plugin '{ep.name}' ({ep.value}, entry point {ENTRY_POINT_GROUP}): "
                f"{type(e).__name__}: {e}"
            ) from None
    return modules


def load_rules() -> dict[str, Rule]:
    """Every rule of ``rule_modules()``, collected and validated on first use."""
    global _loaded_from
    if not _loaded_from:
        modules = rule_modules()
        for module in modules:
            category = category_of(module)
            if category is not None:
                CATEGORIES.setdefault(category.prefix, category)
        for module in modules:
            for decl in declared_in(module):
                register(decl)
        _loaded_from = tuple(modules)
    return REGISTRY


def rule_sources() -> list[Path]:
    """The source files that define the registered rules' plans: the whole top-level package
    of each rule module (helpers such as checks/transforms.py shape the SQL too), or the
    module's file when it has no package. The compiled-plan cache hashes them
    (auditor/engine/plans.py): the engine gets them from here rather than importing checks."""
    import sys

    load_rules()
    sources: set[Path] = set()
    for module in _loaded_from:
        top = sys.modules[module.__name__.partition(".")[0]]
        if hasattr(top, "__path__"):
            sources.update(p for root in top.__path__ for p in Path(root).rglob("*.py"))
        else:
            sources.add(Path(top.__file__))
    return sorted(sources)


def rules_run_by(command: str) -> list[Rule]:
    """The registered rules that ``command`` (auditor/declarations.py COMMANDS) runs, in code order."""
    return [r for code, r in sorted(load_rules().items()) if command in r.commands]


def rule_docs(rules) -> dict[str, RuleDoc]:
    """The documentation of these rules, by code: what a result carries of the rules that ran."""
    return {
        r.code: RuleDoc(
            r.code, r.name, r.severity, r.category, r.scope, r.summary, r.why, r.remediation, r.example
        )
        for r in rules
    }


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
