"""Engines: where the checks' DataFrame code runs.

Checks are written once against sqlframe's PySpark-compatible API
(``from sqlframe.base import functions as F``), which compiles to SQL for whichever session
runs it:

- ``duckdb``: DuckDB in-process through sqlframe. No JVM and no pyspark import, a
  sub-second start: the default for ``check``, ``lint`` and ``preflight``.
- ``spark``: real Spark through sqlframe's Spark session (local[*], a standalone or YARN
  master, or the session of a ``spark-submit``). pyspark is imported only here.

An engine's one job beyond that is to expose the snapshot tables as DataFrames
(``Engine.load``), reading Parquet/JSON Lines with the declared schemas.
"""

from __future__ import annotations

from auditor.engine.base import Engine
from auditor.engine.tables import Tables

ENGINES = ("duckdb", "spark")


def open_engine(name: str = "duckdb", *, master: str | None = None, spark_conf: dict | None = None) -> Engine:
    if name == "duckdb":
        from auditor.engine.duckdb_engine import DuckDBEngine

        return DuckDBEngine()
    if name == "spark":
        from auditor.engine.spark_engine import SparkEngine

        return SparkEngine(master=master, conf=spark_conf or {})
    from auditor.errors import UsageError

    raise UsageError(f"unknown engine '{name}' (choose {' or '.join(ENGINES)})")


__all__ = ["ENGINES", "Engine", "Tables", "open_engine"]
