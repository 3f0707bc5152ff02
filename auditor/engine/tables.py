"""The tables of one audit run as the checks see them: snapshot tables as DataFrames, and the
shared transforms, compiled once (through the plan cache) and materialised by the engine."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from typing import Any

from auditor.engine import copy_speed
from auditor.snapshot.io import SnapshotRef
from auditor.snapshot.schema import TABLES, Column, Table

# Every engine table and view the audit creates is named with this prefix.
VIEW_PREFIX = "kafka_audit_"

# Not a snapshot table: an input of the fleet job. Every load registers it empty; run_fleet
# fills it from the previous run's _summary.json when --previous is given (FLT004 reads it).
PREVIOUS_CLUSTERS = Table(
    "previous_clusters",
    (
        Column("cluster_id", "string", "cluster id in the previous run"),
        Column("cluster_name", "string", "cluster name in the previous run"),
        Column("run_date", "string", "date of the last run whose snapshot of the cluster was audited"),
    ),
    "the clusters audited in the previous fleet run (empty without --previous)",
)


class Tables:
    """The snapshot tables of one run, as DataFrames, plus compiled shared transforms.

    Checks receive this. ``tables.partitions`` or ``tables["partitions"]`` is the partitions
    table across every loaded cluster. ``tables.derived(transform)`` is a shared transform
    (effective configs, ...) compiled once, materialised by the engine, and read by every
    rule that declares it (``@rule(uses=...)``) from a table reference instead of its whole
    plan. The runner materialises the declared transforms (``materialise``) before it builds
    any check, and builds checks inside ``building``: there, reading a transform that is not
    materialised yet raises instead of running an engine job (a Spark checkpoint) midway
    through a check.
    """

    def __init__(self, engine, refs: Sequence[SnapshotRef]):
        # engine: the auditor.engine.base.Engine that runs the plans (not imported: base imports this)
        self._engine = engine
        self.refs = list(refs)
        self._frames: dict[str, Any] = {}
        self._built: dict[str, Any] = {}
        self._deps: list[list[str]] = []  # the derived names each plan under compilation reads
        self._building: str | None = None  # the check being built, while one is
        self.rule_tables: list[str] = []  # the engine tables of the rules' findings (names)
        # Rules that could not be compiled or run: code -> why, one line (auditor/coverage.py
        # reports them as not evaluated); a statement's failure raised when it was created.
        self.failed: dict[str, str] = {}
        self.statement_errors: dict[str, BaseException] = {}

    @property
    def session(self):
        return self._engine.session

    @property
    def engine(self):
        return self._engine

    def __getitem__(self, name: str):
        if name not in TABLES:
            raise KeyError(f"no snapshot table '{name}'")
        if name not in self._frames:
            self._frames[name] = self._engine.session.table(VIEW_PREFIX + name)
        return self._frames[name]

    def __getattr__(self, name: str):
        if name.startswith("_") or name not in TABLES:
            raise AttributeError(name)
        return self[name]

    @property
    def previous_clusters(self):
        """The clusters of the previous fleet run (PREVIOUS_CLUSTERS): empty unless the
        fleet job was given --previous."""
        return self._engine.session.table(VIEW_PREFIX + PREVIOUS_CLUSTERS.name)

    def derived(self, build: Callable[[Tables], Any]):
        """A shared transform, named after its function (engine table ``derived_<name>``).
        ``build`` must depend on the snapshot only (not on rule params)."""
        name = self._ensure(build)
        if self._built[name] is None:  # looked up lazily: a catalog lookup costs ~50 ms
            self._engine.wait_for("derived_" + name)  # an engine may be computing it meanwhile
            self._built[name] = self._engine.session.table(VIEW_PREFIX + "derived_" + name)
        return self._built[name]

    def _ensure(self, build: Callable[[Tables], Any]) -> str:
        """Create the engine table of a shared transform if it is not there yet; its name."""
        name = build.__name__
        if self._deps and name not in self._deps[-1]:
            self._deps[-1].append(name)
        if name not in self._built:
            if self._building is not None:
                raise TypeError(
                    f"{self._building}: reads shared transform '{name}' that its @rule(uses=...) "
                    "does not declare"
                )
            self.compile("derived_" + name, lambda: build(self), reuse=True, awaited=True)
            self._built[name] = None
        return name

    def materialise(self, transforms: Iterable[Callable[[Tables], Any]]) -> None:
        """Materialise shared transforms (and the transforms they read), each once. No
        DataFrame is looked up: with every plan cached, no check reads one."""
        for build in dict.fromkeys(transforms):
            self._ensure(build)

    def release(self, keep: Iterable[Callable[[Tables], Any]] = (), *, rule_tables: bool = False) -> None:
        """Drop the shared transforms' engine tables but ``keep``'s (and, with ``rule_tables``,
        the rules' findings tables): for an engine whose rules' findings are tables of their
        own, once every rule ran, only the later stages read a transform (the root causes
        read ``keep``), and once a stage copied the findings, nothing reads the rules' tables.
        At 10M partitions they hold ~1.3 GiB of DuckDB's memory."""
        kept = {build.__name__ for build in keep}
        gone = [name for name in self._built if name not in kept]
        self._engine.drop(["derived_" + name for name in gone] + (self.rule_tables if rule_tables else []))
        for name in gone:
            del self._built[name]
        if rule_tables:
            self.rule_tables = []

    @contextmanager
    def building(self, what: str):
        """While ``what`` (a check) builds its DataFrame: no shared transform is materialised."""
        self._building = what
        try:
            yield
        finally:
            self._building = None

    def compile(
        self,
        table: str,
        build: Callable[[], Any],
        *,
        params: dict | None = None,
        reuse: bool = False,
        inputs: dict[str, str] | None = None,
        deferred: bool = False,
        awaited: bool = False,
    ) -> str:
        """Materialise ``build()`` as engine table ``table``, from the plan cache when it holds
        the compiled SQL of this exact code, dialect and params.

        ``inputs``: tables the plan reads that are given as SQL (name -> SQL). A cached plan
        gets them inlined as CTEs of the same names; only compiling creates them as views
        (sqlframe reads their schema from the catalog). Why: creating a view binds its whole
        definition, and the union of every rule's findings is a large one (0.2 s per binding
        at 200 clusters, once for the view and again for each statement that reads it)."""
        self._engine.create(
            table,
            self.plan(table, build, params=params, inputs=inputs),
            reuse=reuse,
            deferred=deferred,
            awaited=awaited,
        )
        return VIEW_PREFIX + table

    def plan(
        self,
        table: str,
        build: Callable[[], Any],
        *,
        params: dict | None = None,
        inputs: dict[str, str] | None = None,
    ) -> str:
        """The SQL ``compile`` materialises as ``table``, without materialising it: from the
        plan cache, else compiled from ``build()`` and cached."""
        cache = self._engine.plan_cache
        key = cache.key("plan", table, params)
        entry = cache.get(key)
        if entry is not None and self._restore(entry["deps"]):
            cache.hits += 1
            return with_inputs(entry["sql"], inputs or {})
        cache.misses += 1
        copy_speed.install()
        for name, sql in (inputs or {}).items():
            self._engine.create(name, sql)
        self._deps.append([])
        try:
            df = build()
        finally:
            deps = self._deps.pop()
        sql = self._engine.sql_of(df)
        cache.put(key, sql, deps)
        return sql

    def plan_group(
        self,
        name: str,
        builds: dict[str, Callable[[], Any]],
        wanted: Iterable[str],
        *,
        params: dict,
        prepare: Callable[[], None] = lambda: None,
    ) -> tuple[dict[str, str], dict[str, BaseException]]:
        """The SQL of several plans compiled and cached as one entry (a fused plan: the rules
        that read the same shared input, auditor/engine/runner.py): (SQL by member for the
        ``wanted`` members, the exception of each wanted member that could not be compiled).

        The entry holds every member of ``builds`` (with ``params``, the key), each with the
        shared transforms it reads, so one entry serves any selection of its members: only
        the wanted members' transforms are created. On a miss, ``prepare()`` first (it
        materialises the members' transforms), then each member is built on its own; a member
        that fails is left out of the entry and reported, the others are cached and returned."""
        cache = self._engine.plan_cache
        key = cache.key("fused", name, params)
        wanted = [code for code in wanted if code in builds]
        entry = cache.get(key)
        members = _members(entry)
        if members is not None and all(
            self._restore(members[code]["deps"]) for code in wanted if code in members
        ):
            cache.hits += 1
            found = {code: members[code]["sql"] for code in wanted if code in members}
            # a member the entry lacks (it failed to compile when the entry was made): alone
            failed = {}
            for code in wanted:
                if code not in members:
                    try:
                        found[code] = self.plan(f"{name}_{code}", builds[code], params=params.get(code))
                    except Exception as e:  # noqa: BLE001 (a rule's own error: reported, not fatal)
                        failed[code] = e
            return found, failed
        cache.misses += 1
        copy_speed.install()
        prepare()
        compiled: dict[str, dict] = {}
        failed = {}
        for code, build in builds.items():
            self._deps.append([])
            try:
                df = build()
                compiled[code] = {"sql": self._engine.sql_of(df), "deps": list(self._deps[-1])}
            except Exception as e:  # noqa: BLE001 (a rule's own error: reported, not fatal)
                failed[code] = e
            finally:
                self._deps.pop()
        deps = sorted({dep for member in compiled.values() for dep in member["deps"]})
        cache.put(key, json.dumps(compiled, sort_keys=True), deps)
        return (
            {code: compiled[code]["sql"] for code in wanted if code in compiled},
            {code: e for code, e in failed.items() if code in wanted},
        )

    def _restore(self, deps: list[str]) -> bool:
        """Create the derived tables a cached plan reads, from the cache; False if one is gone."""
        cache = self._engine.plan_cache
        for name in deps:
            if name in self._built:
                continue
            entry = cache.get(cache.key("plan", "derived_" + name))
            if entry is None or not self._restore(entry["deps"]):
                return False
            self._engine.create("derived_" + name, entry["sql"], reuse=True, awaited=True)
            self._built[name] = None
        return True


def with_inputs(sql: str, inputs: dict[str, str]) -> str:
    """``sql`` reading each of ``inputs`` (name -> SQL) as a CTE named VIEW_PREFIX + name,
    which shadows any table of that name (DuckDB and Spark SQL alike)."""
    if not inputs:
        return sql
    ctes = ", ".join(f"{VIEW_PREFIX}{name} AS ({body})" for name, body in inputs.items())
    return f"WITH {ctes} SELECT * FROM ({sql}) AS {VIEW_PREFIX}q"


def _members(entry: dict | None) -> dict[str, dict] | None:
    """A fused entry's members ({code: {"sql", "deps"}}), or None when ``entry`` is not one."""
    if entry is None:
        return None
    try:
        members = json.loads(entry["sql"])
    except ValueError:
        return None
    ok = isinstance(members, dict) and all(
        isinstance(m, dict) and isinstance(m.get("sql"), str) and isinstance(m.get("deps"), list)
        for m in members.values()
    )
    return members if ok else None
