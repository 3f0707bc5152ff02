"""What every engine provides: a sqlframe session and the snapshot tables as DataFrames."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from auditor.errors import SnapshotError
from auditor.snapshot.io import SnapshotRef
from auditor.snapshot.schema import TABLES, Table

# sqlframe warns on every to_json() under DuckDB that nulls are kept; parse_evidence
# normalises that, so the warning is noise for users.
logging.getLogger("sqlframe").setLevel(logging.ERROR)

VIEW_PREFIX = "kafka_audit_"


class Tables:
    """The snapshot tables of one run, as DataFrames, plus memoised derived DataFrames.

    Checks receive this. ``tables.partitions`` or ``tables["partitions"]`` is the partitions
    table across every loaded cluster; ``tables.derived(name, build)`` builds a shared
    transform once per run (effective configs, ...), so the engine can reuse its plan.
    """

    def __init__(self, engine: Engine, refs: Sequence[SnapshotRef]):
        self._engine = engine
        self.refs = list(refs)
        self._frames: dict[str, Any] = {}
        self._derived: dict[str, Any] = {}

    @property
    def session(self):
        return self._engine.session

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

    def materialize(self, df, name: str):
        return self._engine.materialize(df, name)

    def derived(self, name: str, build: Callable[[Tables], Any]):
        """A shared transform, built once per run and materialised by the engine: every rule
        that reads it starts from a table reference, not from the transform's whole plan."""
        if name not in self._derived:
            self._derived[name] = self._engine.materialize(build(self), "derived_" + name, reuse=True)
        return self._derived[name]


class Engine:
    name = "base"
    session: Any

    def load(self, refs: Sequence[SnapshotRef]) -> Tables:
        """Register every snapshot table as a view over all refs, with declared types."""
        for table in TABLES.values():
            if table.from_manifest:
                rows = [r.manifest.cluster_row() for r in refs] if table.name == "clusters" else [
                    row for r in refs for row in r.manifest.error_rows()
                ]
                self._register_rows(table, rows)
            else:
                parts = [(ref.files[table.name][0], ref.files[table.name][1]) for ref in refs if table.name in ref.files]
                try:
                    self._register_files(table, [str(p) for p, f in parts if f == "parquet"],
                                         [str(p) for p, f in parts if f == "jsonl"])
                except SnapshotError:
                    raise
                except Exception as e:  # engine errors: name the files, one line
                    files = ", ".join(str(p) for p, _ in parts[:3]) + (" ..." if len(parts) > 3 else "")
                    raise SnapshotError(f"{files}: table '{table.name}' could not be read: {_first_line(e)}") from None
        return Tables(self, refs)

    def materialize(self, df, name: str, *, reuse: bool = False):
        """Compute ``df`` into an engine-side table (or cached view) and return a DataFrame
        reading it. Keeps sqlframe's plans small: sqlframe copies a DataFrame's whole
        expression tree on each operation, so building on top of deep plans is quadratic.
        ``reuse``: read by several rules, worth caching on Spark."""
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
