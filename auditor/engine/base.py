"""What every engine provides: a sqlframe session and the snapshot tables as DataFrames."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from typing import Any

from auditor.engine.jobs import Jobs
from auditor.engine.plans import PlanCache
from auditor.engine.tables import PREVIOUS_CLUSTERS, Tables
from auditor.errors import SnapshotError
from auditor.snapshot.io import SnapshotRef
from auditor.snapshot.schema import TABLES, Table

# sqlframe warns on every to_json() under DuckDB that nulls are kept; parse_evidence
# normalises that, so the warning is noise for users.
logging.getLogger("sqlframe").setLevel(logging.ERROR)
# sqlglot warns "Hints are not supported" when it drops a Spark join hint (F.broadcast) from
# DuckDB SQL; dropping it is intended.
logging.getLogger("sqlglot").setLevel(logging.ERROR)


def fused_by_default() -> bool:
    """Fused plans unless KAFKA_AUDIT_FUSED is off (the per-rule path: benchmarks, comparisons)."""
    return os.environ.get("KAFKA_AUDIT_FUSED", "").lower() not in ("off", "0", "false", "no")


class Engine:
    name = "base"
    session: Any
    plan_cache: PlanCache
    # How many rules' findings one engine table holds (``create(reuse=True, deferred=True)``),
    # the union of their plans; None: each rule's findings are a view that the final stage's
    # one query reads. See SparkEngine and DuckDBEngine.
    rules_per_table: int | None = None
    # Fused plans (auditor/engine/runner.py compile_rules): the rules that read the same shared
    # input are one plan and one statement. Off (``fused=False``, or KAFKA_AUDIT_FUSED=off):
    # each rule's plan alone, the path fusion is compared with and falls back to.
    fused: bool = True
    jobs: Jobs  # the statements it runs in the background (auditor/engine/jobs.py)

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

    def create(
        self, name: str, sql: str, *, reuse: bool = False, deferred: bool = False, awaited: bool = False
    ) -> None:
        """Compute ``sql`` into an engine-side table (DuckDB) or temp view (Spark, cached when
        ``reuse``) named VIEW_PREFIX + name. Materialising keeps sqlframe's plans small:
        it copies a DataFrame's whole expression tree on each operation. The engine may compute
        the table meanwhile when ``deferred`` (nothing reads it before ``settle()``) or
        ``awaited`` (read only by the engine's later tables, or after ``wait_for(name)``)."""
        raise NotImplementedError

    def wait_for(self, name: str) -> None:
        """Return once engine table ``name`` exists (an engine may compute tables meanwhile)."""
        self.jobs.wait_for(name)

    def settle(self, raise_errors: bool = True) -> dict[str, BaseException]:
        """Wait for every ``deferred`` table; raise the first failure (if ``raise_errors``), else
        return the failures by table name (auditor/engine/jobs.py)."""
        return self.jobs.settle(raise_errors)

    def drop(self, names: Iterable[str]) -> None:
        """Free engine tables (VIEW_PREFIX + name) that nothing will read again. An engine whose
        tables cost nothing to keep may ignore it (Spark's checkpoints are cut lineage, and
        its temp views are dropped with the session)."""

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
