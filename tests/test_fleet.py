"""The weekly fleet job: fleet rules, Parquet output, week-over-week status, broken
snapshots, both engines, and a real Spark standalone cluster."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from auditor.commands.fleet import run_fleet
from auditor.config import AuditConfig, parse_config
from auditor.engine import open_engine
from auditor.registry import load_rules
from tests.conftest import ROOT, SAMPLE_FLEET, cluster_dir
from tests.rulecases import (
    check_findings,
    load_fleet_cases,
    rules_config,
    write_fleet_case,
    write_previous_run,
)

FLEET_CASES = load_fleet_cases()


def _run_case(engine, case, root):
    cfg = rules_config({case.rule: case})  # the rule alone, with the case's params/severity
    previous = write_previous_run(case, root / ".previous")  # hidden: not a snapshot of the fleet
    return run_fleet(
        engine,
        str(write_fleet_case(case, root)),
        cfg,
        top_n=1000,
        previous=str(previous) if previous else None,
    )


@pytest.mark.parametrize("case", FLEET_CASES, ids=[f"{c.rule}-{c.name}" for c in FLEET_CASES])
def test_fleet_rule_case_on_duckdb(case, tmp_path):
    with open_engine("duckdb") as engine:
        result = _run_case(engine, case, tmp_path)
    check_findings(
        case,
        {f"{f.resource_type}:{f.resource_name}@{f.cluster}": f for f in result.top if f.rule == case.rule},
    )


def test_flt002_names_at_most_max_listed_clusters_and_counts_the_rest(tmp_path):
    """A topic mirrored to many clusters: each finding names the first clusters by name
    and counts the others (the message stays bounded however large the fleet)."""
    from tests.rulecases import FleetCase

    members = tuple(
        {
            "cluster": {"name": f"dc{i}"},
            "tables": {
                "topics": [{"topic": "orders", "partitions": 12, "replication_factor": 3 if i else 2}]
            },
        }
        for i in range(5)
    )
    case = FleetCase("FLT002", "many", members, frozenset())
    cfg = parse_config({"select": ["FLT002"], "params": {"FLT002": {"max_listed": 2}}}, "test")
    with open_engine("duckdb") as engine:
        result = run_fleet(engine, str(write_fleet_case(case, tmp_path)), cfg, top_n=1000)
    by_cluster = {f.cluster: f for f in result.top}
    assert set(by_cluster) == {f"dc{i}" for i in range(5)}
    f = by_cluster["dc3"]
    assert "differs across 5 clusters (dc0, dc1 and 3 more) in replication factor" in f.message
    assert f.evidence["clusters"] == 5 and f.evidence["mirrored_in"] == ["dc0", "dc1"]


def test_every_fleet_rule_has_passing_and_failing_cases():
    fleet_rules = {r.code for r in load_rules().values() if r.scope == "fleet"}
    kinds = {}
    for c in FLEET_CASES:
        kinds.setdefault(c.rule, set()).add(bool(c.expect))
    assert fleet_rules == {"FLT001", "FLT002", "FLT003", "FLT004"}
    assert all(kinds.get(code) == {True, False} for code in fleet_rules), kinds


def _read_findings(directory: Path) -> list[tuple]:
    rows = []
    for file in sorted(directory.rglob("*.parquet")):
        cluster = file.parent.name.split("=", 1)[1]
        for r in pq.read_table(file).to_pylist():
            rows.append(
                (
                    cluster,
                    r["rule"],
                    r["resource_type"],
                    r["resource_name"],
                    r["message"],
                    r["fingerprint"],
                    r["status"],
                    r["cause"],
                )
            )
    return sorted(rows)


def _cli(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


def _weekly(fleet, out, run_date, *args):
    """The weekly fleet job on DuckDB: findings written under ``out``, compared with the run
    before it there."""
    return _cli(
        "fleet", fleet, *args, "--engine", "duckdb", "--out", out, "--previous", out, "--run-date", run_date
    )


def test_sample_fleet_on_duckdb_writes_partitioned_findings_and_summary(tmp_path):
    out = tmp_path / "findings"
    p = _cli("fleet", SAMPLE_FLEET, "--engine", "duckdb", "--out", out, "--run-date", "2026-11-15")
    assert p.returncode == 1, p.stderr
    run_dir = out / "run_date=2026-11-15"
    clusters = sorted(d.name for d in run_dir.iterdir() if d.is_dir())
    assert "cluster=payments-msk" in clusters and "cluster=ads-zk-legacy" in clusters
    rows = _read_findings(run_dir)
    assert ("payments-msk", "REP002", "topic", "payments.orders.v1") in {r[:4] for r in rows}
    assert ("payments-msk", "FLT001", "config", "min.insync.replicas") in {r[:4] for r in rows}
    assert {r[6] for r in rows} == {"new"}
    summary = json.loads((run_dir / "_summary.json").read_text())
    by_name = {c["name"]: c for c in summary["clusters"]}
    assert by_name["inventory-prod"]["grade"] == "A" and by_name["ads-zk-legacy"]["counts"]["critical"] >= 1
    assert summary["totals"]["total"] == len(rows)
    assert "fleet audit 2026-11-15 on duckdb: 8 cluster(s)" in p.stdout
    # The text summary names the first findings of each rule (the README's main job).
    assert "payments-msk  topic __consumer_offsets: min.insync.replicas=3" in p.stdout
    assert "ads-zk-legacy  partition __consumer_offsets-17: no leader" in p.stdout


def test_fleet_html_report_counts_every_finding_but_lists_the_top(tmp_path):
    html = tmp_path / "fleet.html"
    p = _cli("fleet", SAMPLE_FLEET, "--engine", "duckdb", "--top", "2", "--html", html, "--format", "json")
    assert p.returncode == 1, p.stderr
    assert f"kafka-audit: {html}: fleet HTML report of 8 cluster(s) written" in p.stderr  # issue 38
    doc = json.loads(p.stdout)
    page = html.read_text()
    # PAR005 is 12 findings (6 topics of ads-zk-legacy under broker 5, 6 of logistics-jbod under
    # its failed disk, one per topic): only 2 rows reach the page, the count is true.
    par005 = next(r for r in doc["rules"] if r["rule"] == "PAR005")
    assert par005["findings"] == 12 and sum(f["rule"] == "PAR005" for f in doc["top"]) == 2
    assert "Showing at most 2 findings per rule" in page and "ads-zk-legacy" in page
    assert "12" in page


@pytest.mark.parametrize("engine_name", ["duckdb", pytest.param("spark", marks=pytest.mark.spark)])
def test_week_over_week_new_persisting_resolved(tmp_path, engine_name, request):
    def engine_of():  # the shared Spark session's engine stays open for later tests
        if engine_name == "spark":
            return contextlib.nullcontext(request.getfixturevalue("spark_engine"))
        return open_engine("duckdb")

    fleet = tmp_path / "fleet"
    shutil.copytree(SAMPLE_FLEET, fleet)
    out = tmp_path / "findings"
    # The two rules that change below; the whole catalogue's conformance between the engines
    # is test_fleet_cases_and_sample_fleet_identical_on_spark's.
    cfg = AuditConfig(select=("REP002", "REP003"))
    with engine_of() as engine:
        run_fleet(engine, str(fleet), cfg, out=str(out), run_date="2026-11-15")
    # During the week payments-msk drops its cluster-wide min.insync.replicas=3 ...
    (payments,) = fleet.glob("*/cluster=payments-msk")
    configs = payments / "configs.jsonl"
    configs.write_text(
        "".join(line for line in configs.read_text().splitlines(True) if '"cluster_default"' not in line)
    )
    # ... and a new single-replica topic appears on inventory-prod.
    (inventory,) = fleet.glob("*/cluster=inventory-prod")
    with open(inventory / "topics.jsonl", "a") as fh:
        fh.write(
            json.dumps(
                {
                    "cluster_id": "Inv3nt0ryPr0dKr4ftA1Bw",
                    "topic": "inventory.scratch",
                    "partitions": 1,
                    "replication_factor": 1,
                    "is_internal": False,
                }
            )
            + "\n"
        )
    with engine_of() as engine:
        week2 = run_fleet(engine, str(fleet), cfg, out=str(out), previous=str(out), run_date="2026-11-22")
    assert week2.previous_run == "2026-11-15"
    assert week2.diff["resolved"] >= 2  # REP002 on __consumer_offsets and payments.ledger-events
    status = {(f[0], f[1], f[3]): f[6] for f in _read_findings(out / "run_date=2026-11-22")}
    assert status[("inventory-prod", "REP003", "inventory.scratch")] == "new"
    assert status[("payments-msk", "REP002", "payments.orders.v1")] == "persisting"
    assert ("payments-msk", "REP002", "payments.ledger-events") not in status
    assert {c["name"]: c["new"] for c in week2.clusters}["inventory-prod"] >= 1


def test_fleet_frees_the_rules_and_transforms_tables_once_the_findings_are_copied(tmp_path):
    """At 10M partitions the transforms and the rules' findings hold ~1.3 GiB of DuckDB's
    memory: once a table holds the fleet's findings (the root causes' stage, or fleet_findings
    with --previous), only that table is read, and the rest is dropped."""

    def left(engine):
        names = [n for (n,) in engine.conn.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        return sorted(n for n in names if n.startswith(("kafka_audit_derived_", "kafka_audit_findings_")))

    out = tmp_path / "findings"
    cfg = AuditConfig(select=("REP008", "PAR004", "REP002", "CTL003"))  # transforms, causes, both paths
    with open_engine("duckdb") as engine:
        first = run_fleet(engine, str(SAMPLE_FLEET), cfg, out=str(out), run_date="2026-11-15")
        assert left(engine) == ["kafka_audit_findings_caused"]
    with open_engine("duckdb") as engine:
        second = run_fleet(
            engine, str(SAMPLE_FLEET), cfg, out=str(out), previous=str(out), run_date="2026-11-22"
        )
        assert left(engine) == []  # findings_caused is a view there: fleet_findings holds the rows
    assert first.totals["total"] == second.totals["total"] > 0
    assert second.diff["persisting"] == second.totals["total"]
    assert {c.id for c in first.causes} == {c.id for c in second.causes} >= {"broker-unregistered:5"}


@pytest.mark.slow
def test_a_corrupt_cluster_is_reported_and_the_rest_audited(tmp_path):
    fleet = tmp_path / "fleet"
    shutil.copytree(SAMPLE_FLEET, fleet)
    (broken,) = fleet.glob("*/cluster=search-ingest")
    (broken / "manifest.json").write_text('{"schema_version": 1, "cluster": ')
    (other,) = fleet.glob("*/cluster=logistics-jbod")
    (other / "partitions.jsonl").write_text("not json\n")
    p = _cli("fleet", fleet, "--engine", "duckdb", "--format", "json")
    assert p.returncode == 3, p.stderr
    doc = json.loads(p.stdout)
    incomplete = {i["cluster"]: i["message"] for i in doc["incomplete"]}
    assert set(incomplete) == {"search-ingest", "logistics-jbod"}
    assert "manifest.json: not valid JSON" in incomplete["search-ingest"]
    assert "partitions.jsonl:1: not valid JSON" in incomplete["logistics-jbod"]
    aud = {(f["cluster"], f["rule"]) for f in doc["top"] if f["rule"] == "AUD001"}
    assert aud == {("search-ingest", "AUD001"), ("logistics-jbod", "AUD001")}
    assert any(f["rule"] == "REP002" and f["cluster"] == "payments-msk" for f in doc["top"])
    assert {c["name"]: c["grade"] for c in doc["clusters"]}[
        "search-ingest"
    ] == "?"  # never graded when incomplete


@pytest.mark.spark
@pytest.mark.timeout(1200)
def test_fleet_cases_and_sample_fleet_identical_on_spark(tmp_path, spark_engine):
    for i, case in enumerate(FLEET_CASES):
        with open_engine("duckdb") as duck:
            expected = _run_case(duck, case, tmp_path / f"d{i}")
        got = _run_case(spark_engine, case, tmp_path / f"s{i}")
        assert [f.to_json() for f in got.top] == [f.to_json() for f in expected.top], case.name
    # The whole sample tree: the incident clusters and their fixed variants, every rule, and
    # the root cause of each finding (_read_findings reads `cause`).
    everything = str(ROOT / "sample_configs")
    with open_engine("duckdb") as duck:
        run_fleet(duck, everything, AuditConfig(), out=str(tmp_path / "duck"), run_date="2026-11-22")
    run_fleet(spark_engine, everything, AuditConfig(), out=str(tmp_path / "spark"), run_date="2026-11-22")
    # ... with the small-data settings (test_rule_cases runs every rule's cases with the others)
    assert spark_engine.small_data is True
    assert spark_engine.spark.conf.get("spark.sql.adaptive.enabled") == "false"
    duck_rows = _read_findings(tmp_path / "duck")
    assert {r[0] for r in duck_rows} >= {"payments-msk", "logistics-jbod", "ads-zk-legacy", "search-ingest"}
    assert {r[7].split(":")[0] for r in duck_rows if r[7]} == {
        "broker-unregistered",
        "log-dir-offline",
        "cluster-default",
    }
    assert duck_rows == _read_findings(tmp_path / "spark")


@pytest.mark.spark
def test_spark_settings_are_sized_to_the_data_unless_the_user_set_them(spark_engine, monkeypatch):
    from auditor.engine import spark_engine as module
    from auditor.snapshot.io import discover, open_snapshot

    refs = [open_snapshot(d) for d in discover(SAMPLE_FLEET)]

    def settings():
        conf = spark_engine.spark.conf
        return conf.get("spark.sql.adaptive.enabled"), conf.get("spark.sql.shuffle.partitions")

    spark_engine.load(refs)  # the sample fleet's 872 partitions (~180 KB of JSON Lines)
    assert spark_engine.small_data is True and settings() == ("false", "1")
    monkeypatch.setattr(module, "SMALL_DATA_PARTITIONS", 500)
    spark_engine.load(refs)
    assert spark_engine.small_data is False and settings() == ("true", "16")  # ours for large data
    # A setting the user gave is theirs whatever the size (the same session: conf as --conf gives it)
    users = module.SparkEngine(master="local[2]", conf={"spark.sql.shuffle.partitions": "3"})
    monkeypatch.setattr(module, "SMALL_DATA_PARTITIONS", 100_000)
    users.load(refs)
    assert users.small_data is True and settings() == ("false", "3")
    users.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, deadline: float, proc) -> None:
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"port {port} not listening")


@pytest.mark.spark
@pytest.mark.own_jvm
@pytest.mark.timeout(1200)
def test_fleet_job_on_a_standalone_spark_cluster_via_spark_submit(tmp_path):
    """A real master and worker started from pyspark's own launcher on loopback ports; the
    fleet job is submitted with spark-submit and reads the fleet through a file:// URI
    (the same code path as s3a:// or hdfs://)."""
    import pyspark

    spark_home = Path(pyspark.__file__).parent
    env = {
        **os.environ,
        "SPARK_HOME": str(spark_home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(tmp_path / "logs"),
        "SPARK_WORKER_DIR": str(tmp_path / "work"),
    }
    master_port, worker_port = _free_port(), _free_port()
    master_url = f"spark://127.0.0.1:{master_port}"
    logs = open(tmp_path / "cluster.log", "w")
    master = subprocess.Popen(
        [
            str(spark_home / "bin" / "spark-class"),
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(master_port),
            "--webui-port",
            str(_free_port()),
        ],
        env=env,
        stdout=logs,
        stderr=subprocess.STDOUT,
    )
    worker = None
    try:
        _wait_port(master_port, time.time() + 60, master)
        worker = subprocess.Popen(
            [
                str(spark_home / "bin" / "spark-class"),
                "org.apache.spark.deploy.worker.Worker",
                master_url,
                "--host",
                "127.0.0.1",
                "--port",
                str(worker_port),
                "--webui-port",
                str(_free_port()),
                "--cores",
                "1",
                "--memory",
                "1g",
            ],
            env=env,
            stdout=logs,
            stderr=subprocess.STDOUT,
        )
        _wait_port(worker_port, time.time() + 60, worker)
        out = tmp_path / "findings"
        # One rule with joins, a union and an aggregate (shuffles between the executor's
        # tasks): the deployment is what is tested; the whole catalogue's conformance is
        # proven in process (test_rule_cases, the test above). REP002 and PAR001, whose
        # shared transforms and root causes are a dozen jobs on a cold executor, took 36 s
        # of spark-submit's run against 24 s for this one.
        config = tmp_path / "kafka-audit.toml"
        config.write_text('select = ["CTL004"]\n')
        job = Path(__import__("auditor.cli.spark_submit", fromlist=["x"]).__file__)
        p = subprocess.run(
            [
                str(spark_home / "bin" / "spark-submit"),
                "--master",
                master_url,
                "--conf",
                "spark.ui.enabled=false",
                "--conf",
                "spark.executor.memory=512m",
                "--conf",
                "spark.sql.shuffle.partitions=2",
                str(job),
                SAMPLE_FLEET.as_uri(),
                "--out",
                out.as_uri(),
                "--run-date",
                "2026-11-22",
                "--config",
                str(config),
            ],
            env={**env, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert p.returncode == 1, p.stdout[-2000:] + p.stderr[-4000:]
        assert "fleet audit 2026-11-22 on spark: 8 cluster(s)" in p.stdout
        rows = _read_findings(out / "run_date=2026-11-22")
        assert {r[:4] for r in rows} == {("ads-zk-legacy", "CTL004", "partition", "ads.impressions-4")}
        # The job ran on the cluster: the worker launched an executor for it.
        assert any((tmp_path / "work").rglob("stderr")), "no executor ran on the standalone worker"
    finally:
        for proc in (worker, master):
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
        logs.close()


def test_cluster_dir_helper_points_at_the_sample():
    assert (cluster_dir("payments-msk") / "manifest.json").exists()


@pytest.mark.slow
def test_fleet_html_charts_new_and_resolved_over_time(tmp_path):
    fleet, out = tmp_path / "fleet", tmp_path / "findings"
    shutil.copytree(SAMPLE_FLEET, fleet)
    rules = ("--select", "REP")  # REP002's findings are what the fix below resolves
    for day in ("2026-11-08", "2026-11-15"):
        assert _weekly(fleet, out, day, *rules).returncode == 1
    (payments,) = fleet.glob("*/cluster=payments-msk")
    configs = payments / "configs.jsonl"
    configs.write_text(
        "".join(line for line in configs.read_text().splitlines(True) if '"cluster_default"' not in line)
    )
    html = tmp_path / "fleet.html"
    p = _weekly(fleet, out, "2026-11-22", *rules, "--html", html)
    assert p.returncode == 1, p.stderr
    page = html.read_text()
    assert 'id="chart-history"' in page
    for day in ("2026-11-15", "2026-11-22"):
        assert f">{day}</text>" in page
    # The week the cluster default was fixed resolves findings; the week before resolved none.
    assert "0 resolved</text>" in page and "since 2026-11-15" in p.stdout


def test_previous_without_findings_is_a_usage_error_unless_it_is_our_own_output(tmp_path):
    p = _cli("fleet", SAMPLE_FLEET, "--engine", "duckdb", "--previous", tmp_path / "typo")
    assert p.returncode == 2 and "no findings of an earlier run" in p.stderr
    out = tmp_path / "findings"
    p = _cli("fleet", SAMPLE_FLEET, "--engine", "duckdb", "--out", out, "--previous", out)
    assert p.returncode == 1 and "no earlier run under" in p.stdout


def test_an_older_snapshot_of_the_same_cluster_is_left_out_and_said(tmp_path):
    fleet = tmp_path / "fleet"
    (src,) = SAMPLE_FLEET.glob("*/cluster=inventory-prod")
    shutil.copytree(src, fleet / "dt=2026-11-22" / "cluster=inventory-prod")
    old = fleet / "dt=2026-11-15" / "cluster=inventory-prod"
    shutil.copytree(src, old)
    manifest = json.loads((old / "manifest.json").read_text())
    manifest["collected_at"] = "2026-11-15T06:00:00Z"
    (old / "manifest.json").write_text(json.dumps(manifest))
    p = _cli("fleet", fleet, "--engine", "duckdb")
    assert "1 cluster(s)" in p.stdout
    assert f"note: {old}: an older snapshot of inventory-prod" in p.stdout


def test_top_findings_per_rule_are_the_first_by_cluster_and_resource():
    """The report's rows per rule are the first ``top_n`` of all its findings in
    (cluster, resource type, resource name) order, although only the clusters that can
    hold them are windowed: here ``top_n`` needs a rule's first two clusters."""
    with open_engine("duckdb") as engine:
        every = run_fleet(engine, str(SAMPLE_FLEET), AuditConfig(), top_n=100_000).top
    by_rule: dict[str, list] = {}
    for f in sorted(every, key=lambda f: (f.cluster, f.resource_type, f.resource_name)):
        by_rule.setdefault(f.rule, []).append(f)
    # a rule whose first cluster holds fewer findings than top_n, with more clusters after it
    spread = [
        (sum(f.cluster == fs[0].cluster for f in fs), r)
        for r, fs in by_rule.items()
        if len({f.cluster for f in fs}) > 1
    ]
    top_n = max(spread)[0] + 1
    with open_engine("duckdb") as engine:
        top = run_fleet(engine, str(SAMPLE_FLEET), AuditConfig(), top_n=top_n).top
    expected = [f for fs in by_rule.values() for f in fs[:top_n]]
    assert sorted(top, key=lambda f: f.sort_key) == sorted(expected, key=lambda f: f.sort_key)


def test_per_rule_summary_of_a_rule_with_severities_per_finding():
    """A rule whose findings carry their own severity (CTL002: critical and warning in one
    cluster) has a hit per severity: the summary counts each cluster once and shows the worst."""
    from auditor.commands.fleet import _per_rule

    hit = {"rule": "CTL002", "name": "partition-state-divergence"}
    rows = _per_rule(
        [
            {**hit, "cluster": "a", "severity": "warning", "count": 3, "new": 0},
            {**hit, "cluster": "a", "severity": "critical", "count": 1, "new": 1},
            {**hit, "cluster": "b", "severity": "warning", "count": 2, "new": 2},
        ]
    )
    assert rows == [{**hit, "severity": "critical", "clusters": 2, "findings": 6, "new": 3}]
