"""auditor.frames.rows_frame: constant reference rows as one JSON literal, read back alike by
both engines (the known-keys tables of CFG001/CFG002 and Kafka's defaults are built with it)."""

from __future__ import annotations

import pytest

from auditor.engine.tables import VIEW_PREFIX
from auditor.frames import rows_frame

SCHEMA = "name string, number bigint, small int, flag boolean"
# What a literal could break: quotes of both kinds, backslashes (an escape in Spark's string
# literals and in JSON), a newline, non-ASCII text, a value past 32 bits, nulls.
ROWS = [
    {"name": 'it\'s "quoted"', "number": 2**40, "small": -1, "flag": True},
    {"name": 'back\\slash \\n and \\" done', "number": None, "small": 0, "flag": False},
    {"name": "line\nbreak, tab\t, é ünïcode ☃", "number": -(2**62), "small": None, "flag": None},
    {"name": None, "number": 0, "small": 2**31 - 1},  # a missing key is null
]
EXPECTED = [(r.get("name"), r.get("number"), r.get("small"), r.get("flag")) for r in ROWS]


def _rows(engine, frame) -> list[tuple]:
    engine.create("frames_probe", engine.sql_of(frame), reuse=True)
    got = engine.rows(VIEW_PREFIX + "frames_probe")
    return [(r["name"], r["number"], r["small"], r["flag"]) for r in got]


def _sorted(rows):
    return sorted(rows, key=repr)


def test_rows_come_back_with_their_types_on_duckdb():
    from auditor.engine.duckdb_engine import DuckDBEngine

    engine = DuckDBEngine()
    try:
        assert _sorted(_rows(engine, rows_frame(engine.session, ROWS, SCHEMA))) == _sorted(EXPECTED)
        types = {
            row[0]: row[1] for row in engine.conn.execute(f"DESCRIBE {VIEW_PREFIX}frames_probe").fetchall()
        }
        assert types == {"name": "VARCHAR", "number": "BIGINT", "small": "INTEGER", "flag": "BOOLEAN"}
        empty = rows_frame(engine.session, [], SCHEMA)
        assert _rows(engine, empty) == []
    finally:
        engine.close()


@pytest.mark.spark
def test_rows_come_back_with_their_types_on_spark(spark_engine):
    assert _sorted(_rows(spark_engine, rows_frame(spark_engine.session, ROWS, SCHEMA))) == _sorted(EXPECTED)
    schema = spark_engine.spark.table(VIEW_PREFIX + "frames_probe").schema.simpleString()
    assert schema == "struct<name:string,number:bigint,small:int,flag:boolean>"
    assert _rows(spark_engine, rows_frame(spark_engine.session, [], SCHEMA)) == []


# with_version_number over the versions the sources report: Kafka's own, a 'v' tag, a metadata
# version's release, MSK's two-part '3.9.x' and '3.9.x.kraft', a two-part '4.0', and what is no
# version. Spark's ANSI element_at raised on a two-part version before it shared version_key.
VERSIONS = {
    "3.6.1": 3006001,
    "v2.8.0": 2008000,
    "3.7-IV1": 3007000,
    "3.9.x": 3009000,
    "3.9.x.kraft": 3009000,
    "4.0": 4000000,
    "dev": None,
    "": None,
    None: None,
}


def _version_numbers(engine) -> dict:
    from checks.transforms import with_version_number

    frame = rows_frame(engine.session, [{"version": v} for v in VERSIONS], "version string")
    engine.create("versions_probe", engine.sql_of(with_version_number(frame, "version", "v")), reuse=True)
    return {r["version"]: r["v"] for r in engine.rows(VIEW_PREFIX + "versions_probe")}


def test_version_numbers_on_duckdb():
    from auditor.engine.duckdb_engine import DuckDBEngine

    engine = DuckDBEngine()
    try:
        assert _version_numbers(engine) == VERSIONS
    finally:
        engine.close()


@pytest.mark.spark
def test_version_numbers_on_spark(spark_engine):
    assert _version_numbers(spark_engine) == VERSIONS
