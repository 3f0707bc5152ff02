"""What every engine provides: a sqlframe session and the snapshot tables as DataFrames."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from typing import Any

from auditor.engine.plans import PlanCache
from auditor.errors import SnapshotError
from auditor.snapshot.io import SnapshotRef
from auditor.snapshot.schema import TABLES, Column, Table

# sqlframe warns on every to_json() under DuckDB that nulls are kept; parse_evidence
# normalises that, so the warning is noise for users.
logging.getLogger("sqlframe").setLevel(logging.ERROR)
# sqlglot warns "Hints are not supported" when it drops a Spark join hint (F.broadcast) from
# DuckDB SQL; dropping it is intended.
logging.getLogger("sqlglot").setLevel(logging.ERROR)

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

    def __init__(self, engine: Engine, refs: Sequence[SnapshotRef]):
        self._engine = engine
        self.refs = list(refs)
        self._frames: dict[str, Any] = {}
        self._built: dict[str, Any] = {}
        self._deps: list[list[str]] = []  # the derived names each plan under compilation reads
        self._building: str | None = None  # the check being built, while one is

    @property
    def session(self):
        return self._engine.session

    @property
    def engine(self) -> Engine:
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
            self.compile("derived_" + name, lambda: build(self), reuse=True)
            self._built[name] = None
        return name

    def materialise(self, transforms: Iterable[Callable[[Tables], Any]]) -> None:
        """Materialise shared transforms (and the transforms they read), each once. No
        DataFrame is looked up: with every plan cached, no check reads one."""
        for build in dict.fromkeys(transforms):
            self._ensure(build)

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
        severity: str | None = None,
        reuse: bool = False,
        inputs: dict[str, str] | None = None,
        deferred: bool = False,
    ) -> str:
        """Materialise ``build()`` as engine table ``table``, from the plan cache when it holds
        the compiled SQL of this exact code, dialect, params and severity.

        ``inputs``: tables the plan reads that are given as SQL (name -> SQL). A cached plan
        gets them inlined as CTEs of the same names; only compiling creates them as views
        (sqlframe reads their schema from the catalog). Why: creating a view binds its whole
        definition, and the union of every rule's findings is a large one (0.2 s per binding
        at 200 clusters, once for the view and again for each statement that reads it)."""
        self._engine.create(
            table,
            self.plan(table, build, params=params, severity=severity, inputs=inputs),
            reuse=reuse,
            deferred=deferred,
        )
        return VIEW_PREFIX + table

    def plan(
        self,
        table: str,
        build: Callable[[], Any],
        *,
        params: dict | None = None,
        severity: str | None = None,
        inputs: dict[str, str] | None = None,
    ) -> str:
        """The SQL ``compile`` materialises as ``table``, without materialising it: from the
        plan cache, else compiled from ``build()`` and cached."""
        cache = self._engine.plan_cache
        key = cache.key("plan", table, params, severity)
        entry = cache.get(key)
        if entry is not None and self._restore(entry["deps"]):
            cache.hits += 1
            return with_inputs(entry["sql"], inputs or {})
        cache.misses += 1
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

    def _restore(self, deps: list[str]) -> bool:
        """Create the derived tables a cached plan reads, from the cache; False if one is gone."""
        cache = self._engine.plan_cache
        for name in deps:
            if name in self._built:
                continue
            entry = cache.get(cache.key("plan", "derived_" + name, None, None))
            if entry is None or not self._restore(entry["deps"]):
                return False
            self._engine.create("derived_" + name, entry["sql"], reuse=True)
            self._built[name] = None
        return True


def with_inputs(sql: str, inputs: dict[str, str]) -> str:
    """``sql`` reading each of ``inputs`` (name -> SQL) as a CTE named VIEW_PREFIX + name,
    which shadows any table of that name (DuckDB and Spark SQL alike)."""
    if not inputs:
        return sql
    ctes = ", ".join(f"{VIEW_PREFIX}{name} AS ({body})" for name, body in inputs.items())
    return f"WITH {ctes} SELECT * FROM ({sql}) AS {VIEW_PREFIX}q"


class Engine:
    name = "base"
    session: Any
    plan_cache: PlanCache
    # How many rules' findings one engine table holds (``create(reuse=True, deferred=True)``),
    # the union of their plans; None: each rule's findings are a view that the final stage's
    # one query reads. See SparkEngine.
    rules_per_table: int | None = None

    def load(self, refs: Sequence[SnapshotRef]) -> Tables:
        """Register every snapshot table as a view over all refs, with declared types."""
        for table in TABLES.values():
            if table.from_manifest:
                rows = (
                    [r.manifest.cluster_row() for r in refs]
                    if table.name == "clusters"
                    else [row for r in refs for row in r.manifest.error_rows()]
                )
                self._register_rows(table, rows)
            else:
                parts = [
                    (ref.files[table.name][0], ref.files[table.name][1])
                    for ref in refs
                    if table.name in ref.files
                ]
                try:
                    self._register_files(
                        table,
                        [str(p) for p, f in parts if f == "parquet"],
                        [str(p) for p, f in parts if f == "jsonl"],
                    )
                except SnapshotError:
                    raise
                except Exception as e:  # engine errors: name the files, one line
                    from auditor.snapshot.io import verify_data

                    # The file(s) whose data does not decode, when pyarrow can tell (local
                    # Parquet); else the first files of the table.
                    bad = [
                        p
                        for ref in refs
                        if table.name in ref.files
                        and verify_data(
                            SnapshotRef(ref.path, ref.manifest, {table.name: ref.files[table.name]})
                        )
                        for p in [ref.files[table.name][0]]
                    ]
                    named = bad or [p for p, _ in parts]
                    files = ", ".join(str(p) for p in named[:3]) + (" ..." if len(named) > 3 else "")
                    raise SnapshotError(
                        f"{files}: table '{table.name}' could not be read: {_first_line(e)}"
                    ) from None
        self.register_previous_clusters([])
        return Tables(self, refs)

    def register_previous_clusters(self, rows: list[dict]) -> None:
        """(Re)register PREVIOUS_CLUSTERS with ``rows`` (cluster_id, cluster_name, run_date)."""
        self._register_rows(PREVIOUS_CLUSTERS, rows)

    def create(self, name: str, sql: str, *, reuse: bool = False, deferred: bool = False) -> None:
        """Compute ``sql`` into an engine-side table (DuckDB) or temp view (Spark, cached when
        ``reuse``) named VIEW_PREFIX + name. Materialising keeps sqlframe's plans small:
        it copies a DataFrame's whole expression tree on each operation. ``deferred``: nothing
        reads the table before ``settle()``, so the engine may compute it meanwhile."""
        raise NotImplementedError

    def settle(self, raise_errors: bool = True) -> None:
        """Wait for every ``deferred`` table; raise the first failure (if ``raise_errors``)."""

    def rows(self, table: str) -> list[dict]:
        """Every row of an engine table, as dicts (an action: for small results only)."""
        raise NotImplementedError

    def write_findings(self, table: str, directory: str) -> None:
        """Write a findings table as Parquet partitioned by cluster, replacing ``directory``."""
        raise NotImplementedError

    def read_findings(self, path: str, name: str, exclude_run_date: str | None = None) -> str | None:
        """Register the findings of the latest earlier run under ``path`` (a findings root of
        run_date=... directories, or one run's directory) as table ``name``. Returns that
        run's date (or the path when the files carry none); raises UsageError when ``path``
        holds no findings."""
        raise NotImplementedError

    def sql_of(self, df) -> str:
        """The SQL sqlframe would run for ``df``, in this engine's dialect."""
        return df.sql(dialect=self.session.execution_dialect, optimize=False, pretty=False)

    def _register_rows(self, table: Table, rows: list[dict]) -> None:
        raise NotImplementedError

    def _register_files(self, table: Table, parquet: list[str], jsonl: list[str]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _first_line(e: Exception) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
