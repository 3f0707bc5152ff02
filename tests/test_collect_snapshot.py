"""collect(): merging the collectors into one snapshot; the `kafka-audit collect` command."""

from __future__ import annotations

import json
import subprocess
import sys

from auditor.collectors.collect import collect
from auditor.snapshot.io import open_snapshot, write_snapshot
from auditor.sources import Sources
from tests.conftest import ROOT
from tests.test_collect_metrics import MSK_TEXT, NODE_TEXT


def _write_fixture(tmp_path):
    conf = tmp_path / "conf"
    conf.mkdir()
    for b in (1, 2):
        (conf / f"broker-{b}.properties").write_text(
            f"broker.id={b}\nlog.dirs=/kafka/data-1,/kafka/data-2\nbroker.rack=az-{b}\nnum.io.threads=8\n"
            "ssl.keystore.password=hunter2\n"
        )
    prom = tmp_path / "b1.prom"
    prom.write_text(MSK_TEXT)
    node = tmp_path / "n1.prom"
    node.write_text(NODE_TEXT)
    return conf, prom, node


def test_collect_files_and_metrics_into_a_valid_snapshot(tmp_path):
    conf, prom, node = _write_fixture(tmp_path)
    manifest, tables = collect(
        Sources(
            broker_configs=(str(conf),),
            metrics=(f"broker_id=1:{prom}", f"broker_id=1:{node}"),
            cluster_name="search-ingest",
        ),
        cluster={"kafka_version": "3.7.1", "tier": None},
    )
    assert manifest.errors == []
    assert manifest.cluster == {"id": "search-ingest", "name": "search-ingest", "kafka_version": "3.7.1"}
    b = {r["broker_id"]: r for r in tables["brokers"]}
    assert b[1]["cores"] == 48 and b[2]["cores"] is None  # node exporter for broker 1 only
    assert b[1]["log_dirs"] == ["/kafka/data-1", "/kafka/data-2"] and b[2]["rack"] == "az-2"
    assert [
        (d["broker_id"], d["path"], d["device"], d["total_bytes"], d["used_bytes"])
        for d in tables["log_dirs"]
    ] == [
        (1, "/kafka/data-1", "/dev/nvme1n1", 2_000_000_000_000, 1_500_000_000_000),
        (1, "/kafka/data-2", "/dev/nvme1n1", 2_000_000_000_000, 1_500_000_000_000),
    ]
    assert {c["client_name"] for c in tables["client_software"]} == {"sarama", "apache-kafka-java"}
    out = write_snapshot(tmp_path / "snap", manifest, tables, fmt="jsonl")
    ref = open_snapshot(out)
    assert set(ref.files) == set(tables)
    assert "hunter2" not in "".join(p.read_text() for p in out.iterdir())


def _run(*args):
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_collect_command_incomplete_exit_3_still_writes(tmp_path):
    conf, prom, _node = _write_fixture(tmp_path)
    out = tmp_path / "snap"
    p = _run(
        "collect",
        "--broker-config",
        conf,
        "--metrics",
        f"broker_id=1:{prom}",
        "--metrics",
        tmp_path / "missing.prom",
        "--cluster-name",
        "c1",
        "-o",
        out,
        "--format",
        "jsonl",
    )
    assert p.returncode == 3, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "missing.prom" in p.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["errors"][0]["source"] == "metrics"
    assert {"brokers", "configs", "metrics"} <= set(manifest["tables"])
    open_snapshot(out)


def test_collect_command_usage_errors(tmp_path):
    p = _run("collect", "-o", tmp_path / "x")
    assert p.returncode == 2 and "at least one source" in p.stderr
    good = tmp_path / "s.properties"
    good.write_text("broker.id=1\n")
    p = _run("collect", "--broker-config", good, "-o", tmp_path / "ok")
    assert p.returncode == 0, p.stderr
    assert json.loads((tmp_path / "ok" / "manifest.json").read_text())["cluster"]["id"] == "unknown-cluster"
