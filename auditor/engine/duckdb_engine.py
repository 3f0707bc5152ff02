"""DuckDB in-process through sqlframe: the embedded engine. Never imports pyspark."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from auditor.engine.base import Engine, fused_by_default
from auditor.engine.jobs import SMALL_DATA_PARTITIONS, Jobs
from auditor.engine.plans import PlanCache
from auditor.engine.tables import VIEW_PREFIX
from auditor.errors import UsageError
from auditor.snapshot.schema import Table, duckdb_type, sql_string


@cache
def _session_class():
    """sqlframe's DuckDB session without the one thing its constructor adds to its base's: a
    Python SOUNDEX function, which no rule calls. Registering a Python function makes duckdb
    import numpy: 0.2 s of every `lint` and `check` (bench/bench_startup.py)."""
    from sqlframe.base.session import _BaseSession
    from sqlframe.duckdb import DuckDBSession

    class _Session(DuckDBSession):
        def __init__(self, conn=None, *args, **kwargs):  # sqlframe calls it again on the active session
            if not hasattr(self, "_conn"):  # sqlframe's sessions are one per process, as there
                self.eager_validation = False
                _BaseSession.__init__(self, conn, *args, **kwargs)
                self._last_result = None

    return _Session


class DuckDBEngine(Engine):
    name = "duckdb"
    # Each rule's findings are a table of their own, computed by a query of their own. Why: as
    # views read by one final query, DuckDB binds and optimises the union of every rule's plan
    # at once, ~0.35-0.45 s whatever the data (most of a small cluster's `check`). Measured in
    # one process, the whole catalogue (bench/RESULTS.md, session 9): one sample cluster
    # 0.83 -> 0.49 s, 50,000 partitions 0.90 -> 0.57 s, the 1M fleet job 5.55 -> 4.66 s with
    # peak RSS 872 -> 694 MiB. Tables of 4 or 16 rules were within 3% of one.
    rules_per_table = 1

    def __init__(self, threads: int | None = None, plan_cache: bool = True, fused: bool | None = None):
        import duckdb

        self.fused = fused_by_default() if fused is None else fused
        self.conn = duckdb.connect(database=":memory:")
        if threads:
            self.conn.execute(f"SET threads = {int(threads)}")
        # Snapshots are local files; never let DuckDB fetch extensions from the network.
        self.conn.execute("SET autoinstall_known_extensions = false")
        self._session = None
        self.plan_cache = PlanCache("duckdb", enabled=plan_cache)
        self.jobs = Jobs()
        # Small data (decided when the partitions are registered): the rules' statements and
        # the shared transforms two at a time, each on a cursor of its worker thread. A
        # statement on a few thousand rows is mostly binding and optimising, which one thread
        # does: `check` of 50,000 partitions 0.83 -> 0.65 s in process (bench/RESULTS.md).
        self.small_data = False
        self._worker = threading.local()
        self._cursors: list = []

    @property
    def session(self):
        """The sqlframe session, made on first use: a run whose plans all come from the bundle
        or the cache builds no DataFrame and never imports sqlframe (auditor/frames.py)."""
        if self._session is None:
            self._session = _session_class()(self.conn)
        return self._session

    def create(
        self, name: str, sql: str, *, reuse: bool = False, deferred: bool = False, awaited: bool = False
    ) -> None:
        # Shared transforms and each rule's findings (reuse) are computed once into a table;
        # what one later statement reads once (the final stage of `check`, its inputs) is a view.
        kind = "TABLE" if reuse else "VIEW"
        statement = f"CREATE OR REPLACE {kind} {VIEW_PREFIX}{name} AS {sql}"
        if self.small_data and (deferred or awaited):
            self.jobs.submit(name, sql, self._in_worker, statement, deferred=deferred)
        else:
            self.jobs.run(sql, self.conn.execute, statement)

    def _in_worker(self, statement: str) -> None:
        cursor = getattr(self._worker, "cursor", None)
        if cursor is None:  # a DuckDB connection is not for concurrent use: one per thread
            cursor = self._worker.cursor = self.conn.cursor()
            self._cursors.append(cursor)
        cursor.execute(statement)

    def drop(self, names: Iterable[str]) -> None:
        for name in names:
            self.conn.execute(f"DROP TABLE IF EXISTS {VIEW_PREFIX}{name}")

    def rows(self, table: str) -> list[dict]:
        cursor = self.conn.execute(f"SELECT * FROM {table}")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def write_findings(self, table: str, directory: str) -> None:
        Path(directory).parent.mkdir(parents=True, exist_ok=True)  # the embedded engine writes local paths
        self.conn.execute(
            f"COPY (SELECT * FROM {table}) TO {sql_string(directory)} "
            "(FORMAT PARQUET, PARTITION_BY (cluster), OVERWRITE)"
        )

    def read_findings(self, path: str, name: str, exclude_run_date: str | None = None) -> str | None:
        pattern = path.rstrip("/") + "/**/*.parquet"
        try:
            self.conn.execute(
                f"CREATE OR REPLACE TABLE {VIEW_PREFIX}{name}_all AS SELECT * FROM "
                f"read_parquet({sql_string(pattern)}, hive_partitioning = true, union_by_name = true)"
            )
        except Exception as e:
            raise UsageError(f"{path}: no readable findings ({str(e).splitlines()[0]})") from None
        return self._pick_previous_run(name, exclude_run_date, path)

    def _pick_previous_run(self, name: str, exclude_run_date: str | None, path: str) -> str | None:
        table = f"{VIEW_PREFIX}{name}_all"
        cols = [r[0] for r in self.conn.execute(f"DESCRIBE {table}").fetchall()]
        if "run_date" not in cols:
            self.conn.execute(
                f"CREATE OR REPLACE TABLE {VIEW_PREFIX}{name} AS SELECT fingerprint FROM {table}"
            )
            return path
        dates = sorted(
            str(r[0]) for r in self.conn.execute(f"SELECT DISTINCT run_date FROM {table}").fetchall()
        )
        earlier = [d for d in dates if d != exclude_run_date]
        if not earlier:
            return None
        chosen = earlier[-1]
        self.conn.execute(
            f"CREATE OR REPLACE TABLE {VIEW_PREFIX}{name} AS SELECT fingerprint FROM {table} "
            f"WHERE CAST(run_date AS VARCHAR) = {sql_string(chosen)}"
        )
        return chosen

    def _columns(self, table: Table, missing: frozenset[str] = frozenset()) -> str:
        """The declared columns, each cast to its type; ``missing``: optional columns the files lack
        (written before the column was added), read as null."""
        return ", ".join(
            f"CAST({'NULL' if c.name in missing else c.name} AS {duckdb_type(c.type)}) AS {c.name}"
            for c in table.columns
        )

    def _missing_optional(self, table: Table, source: str) -> frozenset[str]:
        optional = {c.name for c in table.columns if c.optional}
        if not optional:
            return frozenset()
        present = {r[0] for r in self.conn.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()}
        return frozenset(optional - present)

    def _register_rows(self, table: Table, rows: list[dict]) -> None:
        view = VIEW_PREFIX + table.name
        cols = ", ".join(f"{c.name} {duckdb_type(c.type)}" for c in table.columns)
        self.conn.execute(f"CREATE OR REPLACE TABLE {view} ({cols})")
        if rows:
            marks = ", ".join("?" for _ in table.columns)
            self.conn.executemany(
                f"INSERT INTO {view} VALUES ({marks})", [[r.get(c.name) for c in table.columns] for r in rows]
            )

    def _jsonl_select(self, table: Table, files: list) -> str:
        """A SELECT of JSON Lines files as ``table``, every column read as its declared type."""
        listed = ", ".join(sql_string(f) for f in files)
        columns = ", ".join(f"{sql_string(c.name)}: {sql_string(duckdb_type(c.type))}" for c in table.columns)
        return (
            f"SELECT {self._columns(table)} FROM read_json([{listed}], format = 'newline_delimited', "
            f"columns = {{{columns}}})"
        )

    def _register_files(self, table: Table, parquet: list[str], jsonl: list[str]) -> None:
        selects = []
        if parquet:
            files = ", ".join(sql_string(f) for f in parquet)
            source = f"read_parquet([{files}], union_by_name = true)"
            selects.append(
                f"SELECT {self._columns(table, self._missing_optional(table, source))} FROM {source}"
            )
        if jsonl:
            selects.append(self._jsonl_select(table, jsonl))
        if not selects:
            selects.append(
                f"SELECT {self._columns(table)} FROM (SELECT {', '.join('NULL AS ' + c.name for c in table.columns)}) WHERE false"
            )
        self.conn.execute(
            f"CREATE OR REPLACE VIEW {VIEW_PREFIX}{table.name} AS " + " UNION ALL ".join(selects)
        )
        # Surface unreadable files now, with their names, rather than mid-check.
        ((rows,),) = self.conn.execute(f"SELECT count(*) FROM {VIEW_PREFIX}{table.name}").fetchall()
        if table.name == "partitions":
            self.small_data = rows <= SMALL_DATA_PARTITIONS

    def close(self) -> None:
        self.jobs.close()
        for cursor in self._cursors:
            cursor.close()
        # sqlframe keeps one active session per process; stop() closes the connection and
        # clears it. Closing explicitly also keeps duckdb's binding quiet at exit.
        if self._session is not None:
            self._session.stop()
        else:
            self.conn.close()
