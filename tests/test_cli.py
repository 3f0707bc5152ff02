"""The kafka-audit command as a user runs it: a real process, its output and exit code."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from auditor.findings import fingerprint
from tests.conftest import ROOT, SAMPLE_FLEET, cluster_dir

SCHEMA = json.loads((ROOT / "docs" / "report.schema.json").read_text())


def run(*args, cwd=None, env=None):
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env={**os.environ, **(env or {})},
        timeout=300,
    )


def test_sample_fleet_text_report_names_the_incidents():
    p = run("check", SAMPLE_FLEET)
    assert p.returncode == 1, p.stderr
    lines = p.stdout.splitlines()
    assert any("REP002" in line and "payments.orders.v1" in line for line in lines)
    assert any("PAR001" in line and "__consumer_offsets-17" in line for line in lines)
    assert "8 cluster(s) audited (complete" in p.stdout
    # the healthy clusters carry what healthy clusters run (short retention, a recovery in
    # progress, a generous size cap): infos only, no warning (issue 43)
    for cluster in ("inventory-prod", "notifications-msk"):
        at = next(i for i, line in enumerate(lines) if line.startswith(cluster + " ("))
        block = list(itertools.takewhile(lambda line: line.startswith("  "), lines[at + 1 :]))
        assert block and all(line.lstrip().startswith("INFO ") for line in block), block


def test_json_follows_the_contract():
    p = run("check", cluster_dir("payments-msk"), "--format", "json")
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, SCHEMA)
    rep002 = {f["resource"]["name"] for f in doc["findings"] if f["rule"] == "REP002"}
    # the four topics, and the cluster default that gives every new topic the same trap
    assert rep002 == {
        "__consumer_offsets",
        "payments.orders.v1",
        "payments.authorizations.v2",
        "payments.ledger-events",
        "min.insync.replicas",
    }
    f = next(f for f in doc["findings"] if f["resource"]["name"] == "payments.orders.v1")
    assert f["name"] == "min-isr-equals-rf" and f["severity"] == "error" and f["cluster"] == "payments-msk"
    assert (
        f["evidence"]["min_insync_replicas"] == 3
        and f["evidence"]["min_insync_replicas_source"] == "topic override"
    )
    assert f["fingerprint"] == fingerprint("REP002", "payments-msk", "topic", "payments.orders.v1")
    assert doc["summary"]["error"] == 5 and doc["summary"]["total"] == 5 and doc["incomplete"] == []


@pytest.mark.slow
def test_output_file_and_fail_on(tmp_path):
    out = tmp_path / "r" / "report.json"
    p = run("check", cluster_dir("payments-msk"), "--format", "json", "-o", out, "--fail-on", "critical")
    assert p.returncode == 0 and p.stdout == ""  # only errors: below critical
    assert json.loads(out.read_text())["summary"]["error"] == 5
    assert run("check", cluster_dir("ads-zk-legacy"), "--fail-on", "critical").returncode == 1
    assert run("check", cluster_dir("inventory-prod")).returncode == 0


def test_failed_source_makes_the_audit_incomplete_exit_3(tmp_path):
    snap = tmp_path / "snap"
    shutil.copytree(cluster_dir("inventory-prod"), snap)
    manifest = json.loads((snap / "manifest.json").read_text())
    manifest["errors"] = [{"source": "zookeeper", "target": "zk-1:2181", "message": "timed out after 10s"}]
    (snap / "manifest.json").write_text(json.dumps(manifest))
    p = run("check", snap, "--fail-on", "never", "--format", "json")
    assert p.returncode == 3
    doc = json.loads(p.stdout)
    assert doc["incomplete"] == [
        {
            "cluster": "inventory-prod",
            "source": "zookeeper",
            "target": "zk-1:2181",
            "message": "timed out after 10s",
        }
    ]
    assert [(f["rule"], f["resource"]["name"]) for f in doc["findings"] if f["severity"] != "info"] == [
        ("AUD001", "zookeeper zk-1:2181")
    ]
    assert "INCOMPLETE inventory-prod: source zookeeper zk-1:2181 failed" in run("check", snap).stdout


def test_corrupt_snapshot_is_one_line_exit_2(tmp_path):
    snap = tmp_path / "snap"
    shutil.copytree(cluster_dir("payments-msk"), snap)
    (snap / "partitions.jsonl").write_text('{"cluster_id": "MkQ9x0vRTzS2b1dPaYmT4w", "partition": [1]}\n')
    p = run("check", snap)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "Traceback" not in p.stderr
    assert "partitions.jsonl:1" in p.stderr and "'partition' = [1] is not int" in p.stderr


def test_config_file_select_severity_params_and_exemptions(tmp_path):
    (tmp_path / "kafka-audit.toml").write_text(
        'select = ["REP", "PAR001"]\nignore = ["single-replica"]\nfail_on = "critical"\n'
        '[severity]\nREP002 = "critical"\n'
        "[params.REP007]\nmax_listed = 2\n"
        '[[exemptions]]\nrules = ["REP002"]\nresource = "^payments\\\\.orders"\nreason = "migrating in CHG-1234"\n'
        '[[exemptions]]\nrules = ["PAR001"]\nreason = "expired long ago"\nexpires = 2020-01-01\n'
    )
    p = run("check", SAMPLE_FLEET, "--format", "json", cwd=tmp_path)
    doc = json.loads(p.stdout)
    rep002 = {f["resource"]["name"]: f["severity"] for f in doc["findings"] if f["rule"] == "REP002"}
    assert "payments.orders.v1" not in rep002 and set(rep002.values()) == {"critical"}
    rep007 = [
        f["evidence"] for f in doc["findings"] if f["rule"] == "REP007"
    ]  # lists 2 partitions, counts all
    assert (
        rep007
        and all(len(e["partitions"]) <= 2 for e in rep007)
        and any(e["affected_partitions"] > 2 for e in rep007)
    )
    assert doc["summary"]["exempted"] == 1
    assert any(f["rule"] == "PAR001" for f in doc["findings"])  # the expired exemption no longer applies
    assert p.returncode == 1  # critical findings, fail_on critical from the file
    assert "exemption expired on 2020-01-01" in run("check", SAMPLE_FLEET, cwd=tmp_path).stdout


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('select = ["REP999"]', "unknown rule 'REP999'"),
        ('[[exemptions]]\nrules = ["REP002"]', "exemption #1 needs a reason"),
        ("[params.REP002]\nthreshold = 3", "REP002 has no parameter 'threshold'"),
        ('[[exemptions]]\nreason = "x"\ncluster = "(["', "cluster is not a valid regular expression"),
        ('fail_on = "sometimes"', "fail_on must be one of"),
        ("select = [", "not valid TOML"),
        ('colour = "red"', "unknown setting(s) colour"),
    ],
)
def test_bad_config_is_a_usage_error(tmp_path, toml, message):
    cfg = tmp_path / "audit.toml"
    cfg.write_text(toml)
    p = run("check", cluster_dir("inventory-prod"), "--config", cfg)
    assert p.returncode == 2 and message in p.stderr and "Traceback" not in p.stderr
    assert str(cfg) in p.stderr


def test_pyproject_section_is_read(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n[tool.kafka-audit]\nignore = ["REP002"]\n'
    )
    doc = json.loads(run("check", cluster_dir("payments-msk"), "--format", "json", cwd=tmp_path).stdout)
    assert doc["findings"] == []


def test_rules_list_and_explain():
    listing = json.loads(run("rules", "list", "--format", "json").stdout)
    assert {"AUD001", "REP001", "REP002", "REP003", "PAR001"} <= {r["code"] for r in listing}
    p = run("rules", "explain", "min-isr-equals-rf")
    assert (
        p.returncode == 0 and p.stdout.startswith("REP002 min-isr-equals-rf") and "Remediation:" in p.stdout
    )
    p = run("rules", "explain", "NOPE01")
    assert p.returncode == 2 and "unknown rule" in p.stderr


def test_embedded_path_never_imports_pyspark_nor_starts_a_jvm():
    """Nor, with every plan bundled (after an install), sqlframe and sqlglot: they compile
    plans, and a run that compiles none does not pay their import (auditor/frames.py)."""
    code = (
        "import sys, runpy\n"
        "sys.argv = ['kafka-audit', 'check', %r, '--format', 'json', '-o', '/dev/null']\n"
        "try:\n    runpy.run_module('auditor.cli.main', run_name='__main__')\n"
        "except SystemExit as e:\n    code = e.code\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'py4j'))\n"
        "compilers = sorted({m.split('.')[0] for m in sys.modules} & {'sqlframe', 'sqlglot'})\n"
        "import subprocess, os\n"
        "kids = subprocess.run(['ps', '-o', 'comm=', '--ppid', str(os.getpid())], capture_output=True, text=True).stdout\n"
        "print(code, bad, compilers, 'java' in kids)\n"
    ).replace("%r", repr(str(SAMPLE_FLEET)))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert p.stdout.split("\n")[-2] == "1 [] [] False", p.stdout + p.stderr


@pytest.mark.spark
@pytest.mark.own_jvm
def test_engine_spark_gives_the_same_findings_as_the_default(tmp_path):
    """The option as a user gives it (a JVM of its own, quiet on stderr). One rule, with no
    shared transform or root cause to compute (14 s here against 20 s for REP002): the whole
    catalogue's conformance is proven in process by test_rule_cases and test_fleet."""
    (tmp_path / "kafka-audit.toml").write_text('select = ["CTL004"]\n')
    fleet = _as_parquet(SAMPLE_FLEET, tmp_path / "fleet")  # as collectors write them
    duck = json.loads(run("check", fleet, "--format", "json", cwd=tmp_path).stdout)
    p = run(
        "check",
        fleet,
        "--format",
        "json",
        "--engine",
        "spark",
        cwd=tmp_path,
        env={"SPARK_LOCAL_IP": "127.0.0.1"},
    )
    spark = json.loads(p.stdout)
    assert spark["findings"] == duck["findings"] and spark["tool"]["engine"] == "spark"
    assert {f["rule"] for f in duck["findings"]} == {"CTL004"}
    # The JVM's start-up lines (log4j, "Setting default log level", the JDK's incubator
    # warning) do not reach the user.
    assert not [
        line for line in p.stderr.splitlines() if "WARN" in line or "log level" in line or "incubator" in line
    ], p.stderr
    # ... but its stages do, one line each without a terminal (issue 22.3: progress on long work)
    stages = [
        line.split(":")[1].strip() for line in p.stderr.splitlines() if line.startswith("kafka-audit: ")
    ]
    assert [s.split(" (")[0] for s in stages][:2] == ["starting spark", "loading snapshots"], p.stderr
    assert any(s.startswith("rules (") for s in stages) and stages[-1] == "findings", p.stderr
    assert [s for s in stages if s == "findings"] == ["findings"], p.stderr  # once, however long
    # The Parquet footers were checked by DuckDB beside the JVM: nothing of it at exit
    # (duckdb's bindings warned of ~40 "leaked" objects when its connection outlived pyspark).
    assert "leaked" not in p.stderr, p.stderr


def _as_parquet(fleet: Path, out: Path) -> Path:
    """A copy of a fleet of JSON Lines snapshots, each table written as Parquet."""
    from auditor.snapshot.io import discover, read_manifest, write_snapshot

    for directory in discover(fleet):
        tables = {
            file.stem: [json.loads(line) for line in file.read_text().splitlines() if line.strip()]
            for file in directory.glob("*.jsonl")
        }
        write_snapshot(out / directory.relative_to(fleet), read_manifest(directory), tables, fmt="parquet")
    assert list(out.rglob("partitions.parquet"))
    return out


def test_console_script_is_installed():
    exe = Path(sys.executable).parent / "kafka-audit"
    assert exe.exists() or shutil.which("kafka-audit"), "pip install -e . provides the kafka-audit command"


def test_check_collects_from_sources_first():
    src = ROOT / "sample_configs" / "sources" / "search-ingest"
    p = run(
        "check",
        "--broker-config",
        src,
        "--metrics",
        src / "metrics.prom",
        "--cluster-name",
        "search-ingest",
        "--format",
        "json",
    )
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    thr003 = {f["resource"]["name"] for f in doc["findings"] if f["rule"] == "THR003"}
    assert thr003 == {"1", "2", "3", "4", "5", "6"}
    assert doc["clusters"][0]["name"] == "search-ingest" and doc["incomplete"] == []


def test_check_of_an_unreachable_source_is_incomplete_exit_3():
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    p = run(
        "check",
        "--zookeeper",
        f"127.0.0.1:{port}",
        "--cluster-name",
        "gone",
        "--timeout",
        "2",
        "--format",
        "json",
    )
    assert p.returncode == 3, p.stderr
    doc = json.loads(p.stdout)
    assert [i["source"] for i in doc["incomplete"]] == ["zookeeper"]
    assert [f["rule"] for f in doc["findings"] if f["severity"] == "critical"][:1] == ["AUD001"]
    assert "Traceback" not in p.stderr


def test_snapshot_and_sources_together_is_a_usage_error():
    p = run("check", SAMPLE_FLEET, "--zookeeper", "127.0.0.1:1")
    assert p.returncode == 2 and "not both" in p.stderr
