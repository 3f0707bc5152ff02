"""Issue 16, "hold every promise under attack": duplicated dated snapshots, foreign cluster
ids, one broken snapshot in a fleet, half-written re-collects, over-long cluster names, and
snapshots that hold nothing. Every case fails on the code before the fix."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from auditor.errors import SnapshotError
from auditor.snapshot import io as snapio
from auditor.snapshot.io import Manifest, cluster_dir_name, open_snapshot, read_manifest, write_snapshot
from auditor.snapshot.schema import TABLES, arrow_schema
from tests.conftest import ROOT, SAMPLE_FLEET


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )


def _copy_cluster(name: str, dest_root: Path, dt: str = "2026-11-22") -> Path:
    (src,) = SAMPLE_FLEET.glob(f"dt=*/cluster={name}")
    dest = dest_root / f"dt={dt}" / f"cluster={name}"
    shutil.copytree(src, dest)
    return dest


def _copy_fleet(tmp_path: Path) -> Path:
    fleet = tmp_path / "fleet"
    shutil.copytree(SAMPLE_FLEET, fleet)
    return fleet


def _jsonl_rows(file: Path) -> list[dict]:
    return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines() if line.strip()]


def _to_parquet(snapshot: Path, table: str, rows: list[dict] | None = None, **write_kw) -> Path:
    """Replace ``table``'s JSON Lines file by Parquet (optionally other rows), manifest updated."""
    src = snapshot / f"{table}.jsonl"
    rows = _jsonl_rows(src) if rows is None else rows
    target = snapshot / f"{table}.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=arrow_schema(TABLES[table])), target, **write_kw)
    src.unlink()
    manifest = json.loads((snapshot / "manifest.json").read_text())
    manifest["tables"][table] = target.name
    (snapshot / "manifest.json").write_text(json.dumps(manifest))
    return target


def _summary_clusters(out: Path) -> dict[str, dict]:
    (summary,) = out.glob("run_date=*/_summary.json")
    return {c["name"]: c for c in json.loads(summary.read_text())["clusters"]}


# --- 6: check uses the newest snapshot per cluster ------------------------------------------


def test_check_with_two_dated_snapshots_of_one_cluster_audits_the_newest_and_says_so(tmp_path):
    root = tmp_path / "fleet"
    new = _copy_cluster("inventory-prod", root, "2026-11-22")
    old = _copy_cluster("inventory-prod", root, "2026-11-15")
    manifest = json.loads((old / "manifest.json").read_text())
    manifest["collected_at"] = "2026-11-15T06:00:00Z"
    (old / "manifest.json").write_text(json.dumps(manifest))

    alone = _cli("check", new, "--format", "json", "--fail-on", "never")
    both = _cli("check", root, "--format", "json", "--fail-on", "never")
    assert alone.returncode == both.returncode == 0, both.stderr
    fingerprints = [f["fingerprint"] for f in json.loads(both.stdout)["findings"]]
    assert len(fingerprints) == len(set(fingerprints))  # no duplicated finding
    assert sorted(fingerprints) == sorted(f["fingerprint"] for f in json.loads(alone.stdout)["findings"])
    assert f"note: {old}: an older snapshot of inventory-prod than {new}; left out" in both.stderr
    assert str(new) not in both.stderr.replace(f"than {new}", "")


def test_preflight_also_uses_the_newest_snapshot_per_cluster(tmp_path):
    root = tmp_path / "fleet"
    _copy_cluster("payments-msk", root, "2026-11-22")
    old = _copy_cluster("payments-msk", root, "2026-11-15")
    manifest = json.loads((old / "manifest.json").read_text())
    manifest["collected_at"] = "2026-11-15T06:00:00Z"
    (old / "manifest.json").write_text(json.dumps(manifest))
    p = _cli("preflight", root)
    assert p.returncode in (0, 1, 3), p.stderr
    assert f"note: {old}: an older snapshot of payments-msk" in p.stderr


# --- 7: rows of another cluster ---------------------------------------------------------------


def test_parquet_rows_of_another_cluster_are_rejected_naming_the_file(tmp_path):
    snap = _copy_cluster("inventory-prod", tmp_path)
    rows = _jsonl_rows(snap / "configs.jsonl")
    rows[len(rows) // 2]["cluster_id"] = "phantom"
    target = _to_parquet(snap, "configs", rows)
    with pytest.raises(
        SnapshotError, match=r"configs\.parquet: cluster_id 'phantom' does not match the manifest"
    ):
        open_snapshot(snap)
    p = _cli("check", snap)
    assert p.returncode == 2 and str(target) in p.stderr and "phantom" in p.stderr


def test_parquet_foreign_cluster_id_is_found_without_statistics(tmp_path):
    """No column statistics: the one column is read instead."""
    snap = _copy_cluster("inventory-prod", tmp_path)
    rows = _jsonl_rows(snap / "topics.jsonl")
    for row in rows:
        row["cluster_id"] = "phantom"
    _to_parquet(snap, "topics", rows, write_statistics=False)
    assert not pq.ParquetFile(snap / "topics.parquet").metadata.row_group(0).column(0).is_stats_set
    with pytest.raises(SnapshotError, match=r"topics\.parquet: cluster_id 'phantom'"):
        open_snapshot(snap)


def test_parquet_with_the_manifest_cluster_id_still_opens(tmp_path):
    snap = _copy_cluster("inventory-prod", tmp_path)
    _to_parquet(snap, "configs")
    _to_parquet(snap, "topics", write_statistics=False)
    ref = open_snapshot(snap)
    assert ref.files["configs"][1] == "parquet" and ref.files["topics"][1] == "parquet"


def test_jsonl_foreign_cluster_id_is_still_rejected(tmp_path):
    snap = _copy_cluster("inventory-prod", tmp_path)
    rows = _jsonl_rows(snap / "topics.jsonl")
    rows[0]["cluster_id"] = "phantom"
    (snap / "topics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(SnapshotError, match=r"topics\.jsonl:1: cluster_id 'phantom'"):
        open_snapshot(snap)


# --- 8: one broken snapshot never stops the fleet -------------------------------------------


def _corrupt_pages(file: Path) -> None:
    """Overwrite bytes in the middle of a Parquet file, keeping its footer intact."""
    data = bytearray(file.read_bytes())
    footer = int.from_bytes(data[-8:-4], "little") + 8
    for i in range(4, len(data) - footer):
        data[i] = 0x55
    file.write_bytes(bytes(data))
    pq.read_schema(file)  # the footer still reads


def test_fleet_audits_the_rest_when_one_snapshot_has_corrupt_pages_and_another_a_foreign_id(tmp_path):
    fleet = _copy_fleet(tmp_path)
    (logistics,) = fleet.glob("*/cluster=logistics-jbod")
    rows = _jsonl_rows(logistics / "partitions.jsonl")
    corrupt = _to_parquet(logistics, "partitions", rows * 200, compression="snappy")  # pages to corrupt
    _corrupt_pages(corrupt)
    (payments,) = fleet.glob("*/cluster=payments-msk")
    rows = _jsonl_rows(payments / "topics.jsonl")
    rows[-1]["cluster_id"] = "phantom"
    foreign = _to_parquet(payments, "topics", rows)

    out = tmp_path / "findings"
    p = _cli("fleet", fleet, "--engine", "duckdb", "--out", out)
    assert p.returncode == 3, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    assert f"INCOMPLETE logistics-jbod: snapshot {logistics}: {corrupt}: Parquet data unreadable" in p.stdout
    assert f"INCOMPLETE payments-msk: snapshot {payments}: {foreign}: cluster_id 'phantom'" in p.stdout
    clusters = _summary_clusters(out)
    assert set(clusters) == {
        "ads-zk-legacy",
        "checkout-prod",
        "inventory-prod",
        "logistics-jbod",
        "notifications-msk",
        "payments-msk",
        "sandbox-dev",
        "search-ingest",
    }
    assert clusters["logistics-jbod"]["incomplete"] and clusters["payments-msk"]["incomplete"]
    for healthy in ("ads-zk-legacy", "inventory-prod", "notifications-msk", "search-ingest"):
        assert not clusters[healthy]["incomplete"], healthy
    assert sum(clusters["ads-zk-legacy"]["counts"].values()) > 0  # audited, not just listed
    # no other file is blamed
    assert str(fleet / "dt=2026-11-22" / "cluster=inventory-prod") not in p.stdout


def test_check_of_a_snapshot_with_corrupt_pages_names_the_file(tmp_path):
    """check (not only fleet): pages that do not decode are a one-line error naming the file,
    never an internal error."""
    fleet = _copy_fleet(tmp_path)
    (logistics,) = fleet.glob("*/cluster=logistics-jbod")
    corrupt = _to_parquet(
        logistics, "partitions", _jsonl_rows(logistics / "partitions.jsonl") * 200, compression="snappy"
    )
    _corrupt_pages(corrupt)
    p = _cli("check", logistics)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.startswith(f"kafka-audit: {corrupt}: Parquet data unreadable")
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr


def test_load_error_names_the_file_whose_pages_are_corrupt(tmp_path, monkeypatch):
    """An engine that fails reading a table (Spark fills its cache at load) blames the file
    whose pages do not decode, not the first files of the table."""
    fleet = _copy_fleet(tmp_path)
    for snap in sorted(fleet.glob("*/cluster=*")):
        _to_parquet(snap, "partitions", _jsonl_rows(snap / "partitions.jsonl") * 200)
    (bad,) = fleet.glob("*/cluster=search-ingest")
    _corrupt_pages(bad / "partitions.parquet")
    from auditor.engine import open_engine
    from auditor.engine.duckdb_engine import DuckDBEngine

    original = DuckDBEngine._register_files

    def full_scan(self, table, parquet, jsonl):  # as Spark's cache fill: every page read at load
        original(self, table, parquet, jsonl)
        self.conn.execute(f"SELECT * FROM kafka_audit_{table.name}").fetchall()

    monkeypatch.setattr(DuckDBEngine, "_register_files", full_scan)
    refs = [open_snapshot(d) for d in snapio.discover(fleet)]
    with open_engine("duckdb") as engine, pytest.raises(SnapshotError) as info:
        engine.load(refs)
    message = str(info.value)
    assert message.startswith(f"{bad / 'partitions.parquet'}: table 'partitions' could not be read")
    assert "cluster=ads-zk-legacy" not in message


def test_fleet_with_a_100000_deep_json_line_audits_the_rest(tmp_path):
    fleet = _copy_fleet(tmp_path)
    (inventory,) = fleet.glob("*/cluster=inventory-prod")
    with open(inventory / "topics.jsonl", "a", encoding="utf-8") as fh:
        fh.write("[" * 100_000 + "]" * 100_000 + "\n")
    out = tmp_path / "findings"
    p = _cli("fleet", fleet, "--engine", "duckdb", "--out", out)
    assert p.returncode == 3, p.stdout + p.stderr
    assert f"INCOMPLETE inventory-prod: snapshot {inventory}" in p.stdout and "topics.jsonl" in p.stdout
    clusters = _summary_clusters(out)
    assert len(clusters) == 8 and clusters["inventory-prod"]["incomplete"]
    assert not clusters["ads-zk-legacy"]["incomplete"]


# --- 10: a failed re-collect leaves the old snapshot --------------------------------------


def _small_manifest(cluster_id: str = "c1") -> Manifest:
    return Manifest(
        cluster={"id": cluster_id, "name": cluster_id},
        collected_at="2026-11-22T06:00:00Z",
        sources=[{"source": "files", "status": "ok"}],
    )


def _topic(name: str) -> dict:
    return {"topic": name, "partitions": 3, "replication_factor": 3}


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_a_write_failing_half_way_leaves_the_old_snapshot_intact(tmp_path, monkeypatch, fmt):
    target = tmp_path / "snap"
    write_snapshot(target, _small_manifest(), {"topics": [_topic("old")]}, fmt=fmt)
    before = {p.name: p.read_bytes() for p in target.iterdir()}

    def broken(table, row, cluster_id):  # the brokers table fails after topics was written
        if table.name == "brokers":
            raise OSError("disk full")
        return original(table, row, cluster_id)

    original = snapio._normalise_row
    monkeypatch.setattr(snapio, "_normalise_row", broken)
    with pytest.raises(OSError, match="disk full"):
        write_snapshot(
            target, _small_manifest(), {"topics": [_topic("new")], "brokers": [{"broker_id": 1}]}, fmt=fmt
        )
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap"]  # nothing partial left behind
    ref = open_snapshot(target)
    assert set(ref.files) == {"topics"}
    assert "old" in Path(ref.files["topics"][0]).read_bytes().decode("utf-8", "replace")


def test_a_rewrite_replaces_the_old_snapshot_entirely(tmp_path):
    target = tmp_path / "snap"
    write_snapshot(
        target, _small_manifest(), {"topics": [_topic("old")], "brokers": [{"broker_id": 1}]}, fmt="jsonl"
    )
    write_snapshot(target, _small_manifest(), {"topics": [_topic("new")]}, fmt="parquet")
    assert sorted(p.name for p in target.iterdir()) == ["manifest.json", "topics.parquet"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap"]
    assert read_manifest(target).tables == {"topics": "topics.parquet"}
    (tmp_path / "plain").mkdir()
    assert target.stat().st_mode == (tmp_path / "plain").stat().st_mode  # the umask's mode, not 0700


def test_write_snapshot_never_replaces_a_directory_that_is_not_a_snapshot(tmp_path):
    target = tmp_path / "home"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        write_snapshot(target, _small_manifest(), {"topics": [_topic("t")]}, fmt="jsonl")
    assert (target / "notes.txt").read_text() == "mine"


def test_discover_ignores_a_write_in_progress(tmp_path):
    write_snapshot(tmp_path / "root" / "a", _small_manifest("a"), {"topics": [_topic("t")]}, fmt="jsonl")
    staging = tmp_path / "root" / ".b.writing-x"
    write_snapshot(staging, _small_manifest("b"), {"topics": [_topic("t")]}, fmt="jsonl")
    assert snapio.discover(tmp_path / "root") == [tmp_path / "root" / "a"]


# --- 11: cluster names too long for a directory name ---------------------------------------


def test_cluster_dir_name_is_safe_bounded_and_injective():
    names = [
        "payments-msk",
        "a b",
        "a~20b",
        "a~b",
        "x" * 300,
        "x" * 299 + "y",
        "数" * 34,
        "数" * 35,
        ".",
        "..",
        "a/b",
        "a%2Fb",
        "~h0123456789abcdef",
    ]
    encoded = [cluster_dir_name(n) for n in names]
    assert len(set(encoded)) == len(names)
    assert cluster_dir_name("payments-msk") == "payments-msk"
    for e in encoded:
        assert len(e.encode("utf-8")) <= 200 and e not in (".", "..")
        assert all(c.isascii() and (c.isalnum() or c in "._-~") for c in e), e


def _rename_cluster(snapshot: Path, name: str) -> None:
    manifest = json.loads((snapshot / "manifest.json").read_text())
    manifest["cluster"]["name"] = name
    (snapshot / "manifest.json").write_text(json.dumps(manifest))


def test_fleet_out_with_over_long_cluster_names_writes_every_cluster(tmp_path):
    plain, fleet = tmp_path / "plain", tmp_path / "fleet"
    for name in ("inventory-prod", "payments-msk", "search-ingest"):
        _copy_cluster(name, plain)
        _copy_cluster(name, fleet)
    long_ascii, long_cjk = "p" * 300, "集群" * 17  # 300 bytes; 102 bytes, 306 once percent-encoded
    _rename_cluster(next(fleet.glob("*/cluster=payments-msk")), long_ascii)
    _rename_cluster(next(fleet.glob("*/cluster=search-ingest")), long_cjk)
    reference = _cli("fleet", plain, "--engine", "duckdb", "--out", tmp_path / "plain-findings")
    out = tmp_path / "findings"
    p = _cli("fleet", fleet, "--engine", "duckdb", "--out", out)
    assert p.returncode == reference.returncode == 1, p.stdout + p.stderr
    assert "Traceback" not in p.stderr
    clusters = _summary_clusters(out)
    assert set(clusters) == {"inventory-prod", long_ascii, long_cjk}
    (run,) = out.glob("run_date=*")
    dirs = sorted(d.name for d in run.iterdir() if d.is_dir())
    with_findings = {n for n, c in clusters.items() if sum(c["counts"].values())}
    assert {long_ascii, long_cjk} <= with_findings
    assert dirs == sorted(f"cluster={cluster_dir_name(n)}" for n in with_findings)
    names = set()
    for d in run.iterdir():
        if d.is_dir():
            for f in d.glob("*.parquet"):
                names |= set(pq.read_table(f, columns=["cluster_name"]).column(0).to_pylist())
    assert names == with_findings  # the real names, in the data
    renamed = {"payments-msk": long_ascii, "search-ingest": long_cjk, "inventory-prod": "inventory-prod"}
    assert {renamed[n]: c["counts"] for n, c in _summary_clusters(tmp_path / "plain-findings").items()} == {
        n: c["counts"] for n, c in clusters.items()
    }
    for name in (long_ascii, long_cjk):
        n_findings = sum(clusters[name]["counts"].values())
        (d,) = run.glob(f"cluster={cluster_dir_name(name)}")
        assert n_findings > 0 and sum(pq.read_metadata(f).num_rows for f in d.glob("*.parquet")) == n_findings


def test_fleet_out_with_plain_names_keeps_cluster_equals_name(tmp_path):
    out = tmp_path / "findings"
    p = _cli("fleet", SAMPLE_FLEET, "--engine", "duckdb", "--out", out, "--run-date", "2026-11-22")
    assert p.returncode == 1, p.stderr
    dirs = {d.name for d in (out / "run_date=2026-11-22").iterdir() if d.is_dir()}
    assert "cluster=payments-msk" in dirs and "cluster=search-ingest" in dirs


# --- 9: a snapshot that holds nothing ---------------------------------------------------------


def test_a_snapshot_with_every_table_removed_is_not_a_green_audit(tmp_path):
    snap = _copy_cluster("inventory-prod", tmp_path)
    manifest = json.loads((snap / "manifest.json").read_text())
    for filename in manifest["tables"].values():
        (snap / filename).unlink()
    manifest["tables"] = {}
    (snap / "manifest.json").write_text(json.dumps(manifest))
    p = _cli("check", snap, "--format", "json")
    assert p.returncode == 3, p.stdout + p.stderr
    doc = json.loads(p.stdout)
    assert [i["cluster"] for i in doc["incomplete"]] == ["inventory-prod"]
    assert "no tables" in doc["incomplete"][0]["message"]
    assert f"{snap}" in p.stderr and "no tables: nothing was collected" in p.stderr


def test_an_empty_manifest_without_sources_is_at_least_a_warning(tmp_path):
    """No tables and no sources (hand-made, the rule cases): a warning, the exit code of the rules."""
    snap = tmp_path / "empty"
    write_snapshot(
        snap,
        Manifest(cluster={"id": "e", "name": "empty"}, collected_at="2026-11-22T06:00:00Z"),
        {},
        fmt="jsonl",
    )
    p = _cli("check", snap)
    assert f"warning: {snap}: SNAPSHOT: no tables: nothing was collected" in p.stderr
    assert open_snapshot(snap).manifest.errors == []


@pytest.mark.spark
def test_fleet_out_with_over_long_cluster_names_on_spark(tmp_path, spark_engine):
    from auditor.commands.fleet import run_fleet
    from auditor.config import AuditConfig

    fleet = tmp_path / "fleet"
    for name in ("inventory-prod", "payments-msk", "search-ingest"):
        _copy_cluster(name, fleet)
    long_ascii, long_cjk = "p" * 300, "集群" * 17
    _rename_cluster(next(fleet.glob("*/cluster=payments-msk")), long_ascii)
    _rename_cluster(next(fleet.glob("*/cluster=search-ingest")), long_cjk)
    out = tmp_path / "findings"
    # Spark's writer is what is tested: a few rules that fire on every one of these clusters.
    result = run_fleet(
        spark_engine,
        str(fleet),
        AuditConfig(select=("REP", "PAR", "THR")),
        out=str(out),
        run_date="2026-11-22",
    )
    counts = {c["name"]: sum(c["counts"].values()) for c in result.clusters}
    assert set(counts) == {"inventory-prod", long_ascii, long_cjk} and counts[long_ascii] and counts[long_cjk]
    run = out / "run_date=2026-11-22"
    for name in (long_ascii, long_cjk):
        (d,) = run.glob(f"cluster={cluster_dir_name(name)}")
        table = pq.read_table(list(d.glob("*.parquet")), columns=["cluster_name"])
        assert set(table.column(0).to_pylist()) == {name} and table.num_rows == counts[name]


@pytest.mark.spark
@pytest.mark.own_jvm
def test_fleet_on_spark_names_a_corrupt_file_in_one_line_not_a_java_stack(tmp_path):
    """Issue 37, class 5: the exit code (3) and the per-cluster report were right, but Spark's
    executor logged ~100 lines of Java stack frames per job that read the file (318 lines for
    one file). Now stderr has one line per broken file, and the report is DuckDB's."""
    fleet = _copy_fleet(tmp_path)
    (logistics,) = fleet.glob("*/cluster=logistics-jbod")
    rows = _jsonl_rows(logistics / "partitions.jsonl")
    corrupt = _to_parquet(logistics, "partitions", rows * 200, compression="snappy")
    _corrupt_pages(corrupt)
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "auditor.cli.main",
            "fleet",
            str(fleet),
            "--engine",
            "spark",
            "--select",
            "CTL002",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=900,
        env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "NO_COLOR": "1"},
    )
    assert p.returncode == 3, p.stdout + p.stderr
    err = p.stderr.splitlines()
    assert [line for line in err if str(corrupt) in line] == [f"kafka-audit: spark: cannot read {corrupt}"]
    assert not [line for line in err if not line.startswith("kafka-audit: ")], p.stderr  # no Java frames
    assert "Exception" not in p.stderr and len(err) < 20, p.stderr
    assert f"INCOMPLETE logistics-jbod: snapshot {logistics}: {corrupt}: Parquet data unreadable" in p.stdout


def test_spark_stderr_filter_keeps_one_line_per_unreadable_file_and_the_jvms_own_words():
    """The filter the real-Spark test above goes through, on the record shapes LOG_CONFIG gives."""
    from auditor.engine.spark_engine import StderrFilter

    trace = [
        b"kafka-audit: spark: ERROR Executor: Exception in task 0.0 in stage 35.0 (TID 49)\n",
        b"org.apache.spark.SparkException: [FAILED_READ_FILE.NO_HINT] Encountered error while reading file "
        b"file:///data/cluster=a/partitions.parquet.  SQLSTATE: KD001\n",
        b"\tat org.apache.spark.sql.errors.QueryExecutionErrors$.cannotReadFilesError(QueryExecutionErrors.scala:920)\n",
        b"Caused by: java.io.IOException: can not read class org.apache.parquet.format.PageHeader\n",
        b"\t... 23 more\n",
        b"kafka-audit: spark: ERROR TaskSetManager: Task 0 in stage 35.0 failed 1 times; aborting job\n",
    ]
    f = StderrFilter()
    out = [x for line in [b"Error: could not find java.lang.Object\n", *trace, *trace] for x in f.feed(line)]
    out += f.feed(b"kafka-audit: spark: WARN Something: a warning of its own\n")
    out += f.feed(b"\tat some.Frame(Frame.java:1)\n") + f.finish()
    assert out == [
        b"Error: could not find java.lang.Object\n",  # before any record: the JVM's own words
        b"kafka-audit: spark: cannot read /data/cluster=a/partitions.parquet\n",  # once, for two jobs
        b"kafka-audit: spark: WARN Something: a warning of its own\n",
    ]
    debug = StderrFilter(debug=True)
    assert [x for line in trace for x in debug.feed(line)] == trace  # KAFKA_AUDIT_DEBUG=1: everything
