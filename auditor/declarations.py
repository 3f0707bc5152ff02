"""What a rule module declares: the ``@rule`` decorator, ``Param`` and ``lint_rule``.

This is the bottom of the rule dependency chain, so that it runs one way: rule modules
(checks/*.py, a plugin's modules) import this module; auditor/registry.py imports the rule
modules (its explicit catalogue plus the ``kafka_auditor.rules`` entry-point group) and
collects what they declared. Nothing here imports checks or the registry, and declaring
validates nothing: the registry validates each declaration when it collects it (code,
name, severity, docstring sections, needs), so every rule, built in or from a plugin,
passes the same checks in one place.

A declaration records:

- ``needs``: the snapshot tables without which the rule cannot judge (auditor/coverage.py);
  ``metrics``: the metrics (canonical names of the ``metrics`` table, auditor/snapshot/schema.py
  METRICS; a tuple: any of them) it cannot judge without, when the table is there: a scrape that
  lacks one, a CloudWatch metric AWS did not return; ``facts``: the cluster fields (columns of
  the ``clusters`` table) it cannot judge while they are unknown (MSK005: ``msk_iam_auth``).
  Coverage reports the rule "not evaluated" for a cluster whose snapshot lacks any of them;
- ``runs_in``: the commands that run it besides those its scope implies (a cluster rule runs
  in ``check`` and ``fleet``): ``preflight`` (a patch window's rules), ``upgrade`` (preflight
  ``--target-version``), ``lint`` (what files alone decide), ``lint-upgrade`` (lint
  ``--target-version``: what files alone decide of an upgrade), ``lint-against`` (lint with
  ``--against SNAPSHOT``); ``lint_key``: for a broker finding of lint, the setting whose line
  it points at;
- ``cause``: its role for root causes (auditor/engine/root_causes.py): ``"failure"``, a failed
  broker or log dir produces it about the resources it touches; ``"symptom"``, a partition
  symptom a failure explains when the partition's state shows it; ``Inherits(...)``, it is
  about a value a topic inherits, so one cluster default may explain many of its findings;
- ``uses``: the shared transforms (functions ``(tables) -> DataFrame``, see
  checks/transforms.py) its DataFrame reads through ``tables.derived(transform)``. The
  runner materialises them before it builds any rule's DataFrame, so building a check
  runs no engine job (a Spark checkpoint midway through a check would serialise the audit
  behind it); reading an undeclared transform while checks are built is an error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from auditor.errors import UsageError


@dataclass(frozen=True)
class Param:
    """A typed rule parameter. Its type is the type of its default."""

    name: str
    default: Any
    doc: str
    # A regular expression the engine runs: held to the dialect both engines read alike, as
    # exemption patterns are (auditor/exemptions.py).
    regex: bool = False

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
        if self.regex:
            from auditor.exemptions import refusal

            problem = refusal(value)
            if problem:
                raise UsageError(
                    f"{where}: parameter '{self.name}' {problem}: {value!r} (see auditor/exemptions.py)"
                )
        return value


# The commands a rule may run in, and those its scope implies (a maintenance rule names whether it
# runs in every preflight or only in an upgrade preflight, a change rule which lint runs it).
COMMANDS = ("check", "fleet", "preflight", "upgrade", "lint", "lint-against", "lint-upgrade")
SCOPE_COMMANDS = {"cluster": ("check", "fleet"), "fleet": ("fleet",), "maintenance": (), "change": ()}
CAUSE_ROLES = ("failure", "symptom")


@dataclass(frozen=True)
class Category:
    """A series of rule codes, declared once, in the module that holds its rules (``CATEGORY``):
    the prefix, the category's name and title, and the code numbers the series has (RULES.md;
    a new rule continues its series)."""

    prefix: str
    name: str
    title: str
    numbers: tuple[int, ...]

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(f"{self.prefix}{n:03d}" for n in self.numbers)


@dataclass(frozen=True)
class Inherits:
    """A rule whose findings are about the value of ``key`` a topic inherits: the evidence names
    the value (``value_field``) and the config layer it came from (``layer_field``)."""

    key: str
    value_field: str
    layer_field: str


@dataclass(frozen=True)
class Declaration:
    """A rule as its module declares it; auditor/registry.py turns it into a Rule.

    ``func`` is the DataFrame check ``(tables, params) -> DataFrame``, or None for a rule
    another layer produces (``produced_by``), documented by ``doc`` instead of a docstring."""

    code: str
    name: str
    severity: str
    scope: str
    params: tuple[Param, ...]
    needs: Any
    uses: tuple[Callable, ...]
    func: Callable | None = field(repr=False)
    doc: str
    module: str
    where: str
    produced_by: str = "engine"
    category: str | None = None  # a plugin's own category; built-in codes take RULES.md's
    runs_in: tuple[str, ...] = ()
    lint_key: str | None = None
    cause: str | Inherits | None = None
    metrics: tuple[str | tuple[str, ...], ...] = ()
    facts: tuple[str, ...] = ()


def rule(
    code: str,
    name: str,
    severity: str,
    *,
    params: tuple[Param, ...] = (),
    scope: str = "cluster",
    needs: tuple[str | tuple[str, ...], ...] = (),
    uses: tuple[Callable, ...] = (),
    category: str | None = None,
    runs_in: tuple[str, ...] = (),
    lint_key: str | None = None,
    cause: str | Inherits | None = None,
    metrics: tuple[str | tuple[str, ...], ...] = (),
    facts: tuple[str, ...] = (),
):
    """Declare the decorated function a DataFrame check (see the module doc for the keywords)."""

    def declare(func: Callable) -> Callable:
        func.__rule__ = Declaration(
            code,
            name,
            severity,
            scope,
            tuple(params),
            needs,
            tuple(uses),
            func,
            func.__doc__ or "",
            func.__module__,
            f"rule {code} ({func.__module__}.{func.__qualname__})",
            category=category,
            runs_in=tuple(runs_in),
            lint_key=lint_key,
            cause=cause,
            metrics=tuple(metrics),
            facts=tuple(facts),
        )
        return func

    return declare


def lint_rule(
    code: str,
    name: str,
    severity: str,
    *,
    doc: str,
    module: str,
    scope: str = "change",
    params: tuple[Param, ...] = (),
    runs_in: tuple[str, ...] = ("lint",),
) -> Declaration:
    """Declare a rule whose findings the lint layer (auditor/lint) computes, not a DataFrame:
    registered and documented like every rule, never run by the engine. Assign the result to
    a module-level name of a catalogue module (``module``: that module's ``__name__``)."""
    return Declaration(
        code,
        name,
        severity,
        scope,
        tuple(params),
        (),
        (),
        None,
        doc,
        module,
        f"rule {code} ({module})",
        produced_by="lint",
        runs_in=tuple(runs_in),
    )


def category_of(module) -> Category | None:
    """The category a rule module declares (``CATEGORY``), if any."""
    found = getattr(module, "CATEGORY", None)
    return found if isinstance(found, Category) else None


def declared_in(module) -> list[Declaration]:
    """The declarations a module made, in definition order (not those it imported)."""
    found = []
    for value in vars(module).values():
        decl = value if isinstance(value, Declaration) else getattr(value, "__rule__", None)
        if isinstance(decl, Declaration) and decl.module == module.__name__:
            found.append(decl)
    return found
