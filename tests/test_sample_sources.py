"""The sample fleet's raw sources (sample_configs/sources/) collect back into the committed snapshots."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from auditor.collectors.collect import collect
from tests.conftest import ROOT, cluster_dir

SOURCES = ROOT / "sample_configs" / "sources"
CLUSTERS = ["payments-msk", "logistics-jbod", "ads-zk-legacy", "search-ingest", "inventory-prod", "notifications-msk"]


def _jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _snapshot(name):
    d = cluster_dir(name)
    return {t: _jsonl(d / f"{t}.jsonl") for t in ("brokers", "configs", "metrics", "client_software")}


def _collect(name):
    d = SOURCES / name
    manifest, tables = collect(broker_configs=[str(d)], metrics=[str(d / "metrics.prom")], cluster_name=name)
    assert manifest.errors == []
    return tables


def _static(rows):
    return sorted((r["entity_name"], r["key"], r["value"], bool(r["is_sensitive"])) for r in rows
                  if r["entity_type"] == "broker" and r["source"] == "STATIC_BROKER_CONFIG")


def _metrics(rows):
    return sorted((r["broker_id"], r["name"], r["labels"], r["value"]) for r in rows)


def _software(rows):
    return sorted((r["broker_id"], r["listener"], r["client_name"], r["client_version"], r["connections"])
                  for r in rows)


@pytest.mark.parametrize("name", CLUSTERS)
def test_sources_reproduce_the_snapshot_rows(name):
    want, got = _snapshot(name), _collect(name)
    assert _static(got["configs"]) == _static(want["configs"])
    assert _metrics(got["metrics"]) == _metrics(want["metrics"])
    assert _software(got["client_software"]) == _software(want["client_software"])
    brokers = {b["broker_id"]: b for b in got["brokers"]}
    for b in want["brokers"]:
        g = brokers.pop(b["broker_id"])
        assert (g["rack"], g["cores"], g["log_dirs"]) == (b["rack"], b["cores"], b["log_dirs"])
    # Only ads-zk-legacy has a broker that is down (configured, no longer registered).
    assert sorted(brokers) == ([5] if name == "ads-zk-legacy" else [])


def test_cli_collect_of_the_sources(tmp_path):
    d = SOURCES / "payments-msk"
    p = subprocess.run([sys.executable, "-m", "auditor.cli.main", "collect", "--broker-config", str(d),
                        "--metrics", str(d / "metrics.prom"), "--cluster-name", "payments-msk", "-f", "jsonl",
                        "-o", str(tmp_path / "snap")], capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env={**os.environ, "CI": "1"})
    assert p.returncode == 0, p.stderr
    want = _snapshot("payments-msk")
    got = {t: _jsonl(tmp_path / "snap" / f"{t}.jsonl") for t in ("configs", "metrics")}
    assert _static(got["configs"]) == _static(want["configs"])
    assert _metrics(got["metrics"]) == _metrics(want["metrics"])


def test_committed_sources_match_the_generator(tmp_path):
    spec = importlib.util.spec_from_file_location("generate_sources", ROOT / "sample_configs" / "generate_sources.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(tmp_path / "sources")
    for cluster in CLUSTERS:
        fresh = {p.name: p.read_text() for p in (tmp_path / "sources" / cluster).iterdir()}
        committed = {p.name: p.read_text() for p in (SOURCES / cluster).iterdir()}
        assert fresh == committed, f"sample_configs/sources/{cluster} is stale: run sample_configs/generate_sources.py"
