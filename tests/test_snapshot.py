"""Snapshot read/write and the one-line errors for corrupt or incomplete snapshots."""

from __future__ import annotations

import json
import shutil

import pytest

from auditor.errors import SnapshotError
from auditor.snapshot.io import Manifest, discover, open_snapshot, write_snapshot
from auditor.snapshot.schema import TABLES, arrow_schema, spark_ddl
from tests.conftest import cluster_dir

ROWS = {
    "brokers": [{"broker_id": 1, "host": "b1", "rack": "a", "log_dirs": ["/d1", "/d2"]}],
    "partitions": [{"topic": "t", "partition": 0, "leader": 1, "replicas": [1, 2], "isr": [1]}],
    "configs": [{"entity_type": "topic", "entity_name": "t", "key": "min.insync.replicas", "value": "2"}],
}


def _manifest(**errors):
    return Manifest(cluster={"id": "c1", "name": "payments"}, collected_at="2026-11-22T00:00:00Z", **errors)


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_round_trip_through_both_engines_readers(tmp_path, fmt):
    from auditor.engine import open_engine

    ref = open_snapshot(write_snapshot(tmp_path / "s", _manifest(), ROWS, fmt=fmt))
    assert set(ref.files) == set(ROWS) and all(f == fmt for _, f in ref.files.values())
    with open_engine("duckdb") as engine:
        tables = engine.load([ref])
        (row,) = tables.partitions.collect()
        assert (row["cluster_id"], row["replicas"], row["isr"], row["leader"]) == ("c1", [1, 2], [1], 1)
        assert tables.topics.collect() == []  # absent tables are empty, with their declared columns
        assert tables.topics.columns == TABLES["topics"].names
        (cluster,) = tables.clusters.collect()
        assert cluster["cluster_name"] == "payments"


def test_parquet_footers_of_every_table_are_vouched_for_in_one_batch(tmp_path, monkeypatch):
    """open_snapshot checks a snapshot's Parquet footers with one query for all its files
    (parquet_schema's DuckDB types), and only falls back to a query per file (DESCRIBE, which
    names what is wrong) when the batch cannot vouch for a file. Every declared table,
    nested types included, must pass the batch: else every fleet job pays a query per file."""
    from auditor.snapshot import io

    rows = {name: [] for name in TABLES if not TABLES[name].from_manifest}
    rows.update(ROWS)
    directory = write_snapshot(tmp_path / "s", _manifest(), rows, fmt="parquet")
    judged_alone = []
    monkeypatch.setattr(io, "_check_parquet", lambda reader, table, file, cid=None: judged_alone.append(file))
    ref = open_snapshot(directory)
    assert len(ref.files) == len(rows) and judged_alone == []
    # and what the batch read is each file's DESCRIBE, column for column
    listed = ", ".join(f"'{file}'" for file, _fmt in ref.files.values())
    with io._parquet_reader() as reader:
        batch = io._top_level_types(
            reader.execute(
                f"SELECT file_name, name, duckdb_type, num_children FROM parquet_schema([{listed}]) "
                "ORDER BY file_name, column_id"
            ).fetchall()
        )
        for name, (file, _fmt) in ref.files.items():
            described = reader.execute(f"DESCRIBE SELECT * FROM read_parquet('{file}')").fetchall()
            assert batch[file] == {column: kind for column, kind, *_ in described}, name
            assert batch[file] == {c.name: io.duckdb_type(c.type) for c in TABLES[name].columns}, name


def test_schemas_are_declared_for_every_engine():
    for table in TABLES.values():
        assert table.names[0] == "cluster_id"
        assert len(arrow_schema(table)) == len(table.columns)
        assert spark_ddl(table).count("`") == 2 * len(table.columns)


def test_writer_rejects_undeclared_columns_and_wrong_types(tmp_path):
    with pytest.raises(ValueError, match="undeclared"):
        write_snapshot(tmp_path / "a", _manifest(), {"brokers": [{"broker_id": 1, "colour": "red"}]})
    with pytest.raises(ValueError, match="broker_id"):
        write_snapshot(tmp_path / "b", _manifest(), {"brokers": [{"broker_id": "one"}]})


def _copy_sample(tmp_path):
    dst = tmp_path / "snap"
    shutil.copytree(cluster_dir("payments-msk"), dst)
    return dst


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda d: (d / "manifest.json").write_text("{not json"), r"manifest.json: not valid JSON \(line 1"),
        (lambda d: (d / "manifest.json").unlink(), r"no manifest.json"),
        (
            lambda d: (d / "partitions.jsonl").unlink(),
            r"partitions.jsonl: listed in the manifest but missing",
        ),
        (lambda d: _edit_manifest(d, schema_version=99), r"schema_version 99 is not supported"),
        (lambda d: _edit_manifest(d, cluster={}), r"cluster.id is missing"),
        (lambda d: _append(d / "topics.jsonl", "{broken\n"), r"topics.jsonl:\d+: not valid JSON"),
        (
            lambda d: _append(
                d / "topics.jsonl", '{"cluster_id":"MkQ9x0vRTzS2b1dPaYmT4w","partitions":"many"}\n'
            ),
            r"topics.jsonl:\d+: 'partitions' = 'many' is not int",
        ),
        (
            lambda d: _append(d / "topics.jsonl", '{"cluster_id":"other","topic":"x"}\n'),
            r"does not match the manifest",
        ),
        (lambda d: (d / "brokers.jsonl").write_bytes(b"\xff\xfe\x00garbage"), r"brokers.jsonl: not UTF-8"),
    ],
    ids=[
        "bad-manifest-json",
        "no-manifest",
        "missing-table",
        "schema-version",
        "no-cluster-id",
        "bad-jsonl",
        "wrong-type",
        "foreign-cluster-id",
        "binary-garbage",
    ],
)
def test_corrupt_snapshot_gives_one_line_naming_the_file(tmp_path, damage, expected):
    snap = _copy_sample(tmp_path)
    damage(snap)
    with pytest.raises(SnapshotError, match=expected) as exc:
        open_snapshot(snap)
    assert "\n" not in str(exc.value) and str(snap) in str(exc.value)


def test_corrupt_parquet_is_named(tmp_path):
    snap = write_snapshot(tmp_path / "p", _manifest(), ROWS, fmt="parquet")
    (snap / "partitions.parquet").write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(SnapshotError, match=r"partitions.parquet: not a readable Parquet file"):
        open_snapshot(snap)


def test_parquet_with_wrong_column_type_is_named(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    snap = write_snapshot(tmp_path / "p", _manifest(), ROWS, fmt="parquet")
    pq.write_table(pa.table({"cluster_id": ["c1"], "broker_id": ["1"]}), snap / "brokers.parquet")
    with pytest.raises(
        SnapshotError, match=r"brokers.parquet: column 'broker_id' is VARCHAR, expected INTEGER"
    ):
        open_snapshot(snap)


@pytest.mark.parametrize("engine_name", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def test_parquet_written_before_an_optional_column_was_added_reads_it_as_null(tmp_path, engine_name):
    """log_end_offsets.scraped_at_ms came after the table first shipped: a Parquet file of an older
    snapshot lacks it and is read with the column null (on both engines), where a missing required
    column is still refused."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from auditor.engine import open_engine

    rows = {
        **ROWS,
        "log_end_offsets": [{"broker_id": 1, "topic": "orders", "partition": 0, "log_end_offset": 7}],
    }
    snap = write_snapshot(tmp_path / "p", _manifest(), rows, fmt="parquet")
    old = pa.table(
        {
            "cluster_id": ["c1"],
            "broker_id": pa.array([1], pa.int32()),
            "topic": ["orders"],
            "partition": pa.array([0], pa.int32()),
            "log_end_offset": pa.array([7], pa.int64()),
        }
    )
    pq.write_table(old, snap / "log_end_offsets.parquet")
    with open_engine(engine_name) as engine:
        (row,) = engine.load([open_snapshot(snap)]).log_end_offsets.collect()
    assert (row["log_end_offset"], row["scraped_at_ms"]) == (7, None)
    pq.write_table(old.drop_columns(["log_end_offset"]), snap / "log_end_offsets.parquet")
    with pytest.raises(SnapshotError, match=r"log_end_offsets.parquet: column 'log_end_offset' is missing"):
        open_snapshot(snap)


def test_discover_finds_every_cluster_of_the_sample_fleet():
    names = [
        json.loads((p / "manifest.json").read_text())["cluster"]["name"]
        for p in discover(cluster_dir("payments-msk").parent.parent)
    ]
    assert sorted(names) == [
        "ads-zk-legacy",
        "checkout-prod",
        "inventory-prod",
        "logistics-jbod",
        "notifications-msk",
        "payments-msk",
        "sandbox-dev",
        "search-ingest",
    ]


def test_discover_errors(tmp_path):
    with pytest.raises(SnapshotError, match="no such file"):
        discover(tmp_path / "nope")
    with pytest.raises(SnapshotError, match="no snapshot found"):
        discover(tmp_path)


def _edit_manifest(d, **changes):
    data = json.loads((d / "manifest.json").read_text())
    data.update(changes)
    (d / "manifest.json").write_text(json.dumps(data))


def _append(path, line):
    with open(path, "a") as fh:
        fh.write(line)
