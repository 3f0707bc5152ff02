"""The sample fleet's raw sources (sample_configs/sources/) collect back into the committed snapshots."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from auditor.collectors.collect import collect
from auditor.sources import Sources
from tests.conftest import ROOT, cluster_dir

SOURCES = ROOT / "sample_configs" / "sources"
CLUSTERS = [
    "payments-msk",
    "logistics-jbod",
    "ads-zk-legacy",
    "search-ingest",
    "inventory-prod",
    "notifications-msk",
    "checkout-prod",
    "sandbox-dev",
]


def _jsonl(path):
    return (
        [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    )


def _snapshot(name):
    d = cluster_dir(name)
    return {t: _jsonl(d / f"{t}.jsonl") for t in ("brokers", "configs", "metrics", "client_software")}


def _collect(name):
    d = SOURCES / name
    manifest, tables = collect(
        Sources(broker_configs=(str(d),), metrics=(str(d / "metrics.prom"),), cluster_name=name)
    )
    assert manifest.errors == []
    return tables


def _static(rows):
    return sorted(
        (r["entity_name"], r["key"], r["value"], bool(r["is_sensitive"]))
        for r in rows
        if r["entity_type"] == "broker" and r["source"] == "STATIC_BROKER_CONFIG"
    )


def _metrics(rows):
    return sorted((r["broker_id"], r["name"], r["labels"], r["value"]) for r in rows)


def _software(rows):
    return sorted(
        (r["broker_id"], r["listener"], r["client_name"], r["client_version"], r["connections"]) for r in rows
    )


ZK_CLUSTERS = [
    "payments-msk",
    "logistics-jbod",
    "ads-zk-legacy",
]  # metadata_mode zookeeper: a zookeeper.json each
_ZK_TABLES = ("brokers", "topics", "partitions", "zk_state", "controller", "configs")


def _rows(rows, drop=()):
    """Rows as sorted canonical JSON, without the columns in ``drop`` (and cluster_id,
    which the snapshot writer adds)."""
    drop = {"cluster_id", *drop}
    return sorted(json.dumps({k: v for k, v in r.items() if k not in drop}, sort_keys=True) for r in rows)


def test_only_the_zookeeper_mode_clusters_have_a_dump():
    have = sorted(c for c in CLUSTERS if (SOURCES / c / "zookeeper.json").exists())
    modes = {
        c: json.loads((cluster_dir(c) / "manifest.json").read_text())["cluster"]["metadata_mode"]
        for c in CLUSTERS
    }
    assert have == sorted(ZK_CLUSTERS) == sorted(c for c, m in modes.items() if m == "zookeeper")


@pytest.mark.slow
@pytest.mark.parametrize("name", ZK_CLUSTERS)
def test_zookeeper_dump_collects_into_the_snapshot(name, zk, writer):
    """Load the dump into a real ZooKeeper, collect it with the broker configs and metrics of
    the same cluster, and get the committed snapshot's ZooKeeper-derived rows back."""
    from tests.zk_server import load_dump

    d = SOURCES / name
    chroot = load_dump(writer, d / "zookeeper.json", chroot=f"/sample-{name}")
    manifest, got = collect(
        Sources(
            zookeeper=zk.hosts + chroot,
            broker_configs=(str(d),),
            metrics=(str(d / "metrics.prom"),),
            cluster_name=name,
            timeout=10,
        )
    )
    assert manifest.errors == []
    snap = cluster_dir(name)
    want = {t: _jsonl(snap / f"{t}.jsonl") for t in _ZK_TABLES}
    want_manifest = json.loads((snap / "manifest.json").read_text())
    assert manifest.cluster["id"] == want_manifest["cluster"]["id"]  # from /cluster/id
    assert manifest.cluster["metadata_mode"] == "zookeeper"
    (src,) = [s for s in manifest.sources if s["source"] == "zookeeper"]
    assert src["status"] == "ok" and "log_dir_event_brokers" not in src

    assert _rows(got["zk_state"]) == _rows(want["zk_state"])  # incl. zk_version: the znode's data version
    assert _rows(got["controller"]) == _rows(want["controller"])
    # Every config row: TOPIC_CONFIG and DYNAMIC_DEFAULT_BROKER_CONFIG from ZooKeeper, the
    # static ones from server.properties (file/line: where a row was read, not in the snapshot).
    assert _rows(got["configs"], drop=("file", "line")) == _rows(want["configs"], drop=("file", "line"))
    # Brokers: the registrations (host, port, rack) filled in with log_dirs from server.properties
    # and cores from the metrics. "version" (the broker's software version) is in no source the
    # collectors read (ZooKeeper registrations do not hold it), so it is left out.
    assert _rows(got["brokers"], drop=("version",)) == _rows(want["brokers"], drop=("version",))
    assert all(b["version"] is None for b in got["brokers"])
    # Topics: topic ids exist from Kafka 2.8 on (KIP-516); a 2.0.1 cluster's assignment znode
    # has none, while the committed ads-zk-legacy snapshot gives every topic one.
    legacy = want_manifest["cluster"]["kafka_version"].startswith("2.0.")
    assert _rows(got["topics"], drop=("topic_id",) if legacy else ()) == _rows(
        want["topics"], drop=("topic_id",) if legacy else ()
    )
    if legacy:
        assert all(t["topic_id"] is None for t in got["topics"])

    # Partitions: replicas (and adding/removing) from the assignment znodes; leader,
    # leader_epoch and isr from the state znodes, i.e. ZooKeeper's view. The snapshot's
    # partitions table is the controller's view (Admin API); the two differ only where
    # incident 3's zombie controller rewrote ads.impressions-4 in ZooKeeper.
    zk_view = {(z["topic"], z["partition"]): z for z in want["zk_state"]}
    differ = {
        k
        for k, z in zk_view.items()
        if next(
            (p["leader"], p["leader_epoch"], p["isr"])
            for p in want["partitions"]
            if (p["topic"], p["partition"]) == k
        )
        != (z["leader"], z["leader_epoch"], z["isr"])
    }
    assert differ == ({("ads.impressions", 4)} if name == "ads-zk-legacy" else set())
    expected = [
        {**p, **{c: zk_view[(p["topic"], p["partition"])][c] for c in ("leader", "leader_epoch", "isr")}}
        for p in want["partitions"]
    ]
    # offline_replicas is left out: from ZooKeeper it can only be "the replicas whose broker is
    # not registered" (asserted below), whereas the snapshot has the Admin API's view, which
    # also knows replicas on a failed log dir (logistics-jbod: [4] on broker 4's failed disk,
    # though broker 4 is registered) and, for ads-zk-legacy, lists no offline replicas at all
    # although broker 5 is down.
    assert _rows(got["partitions"], drop=("offline_replicas",)) == _rows(expected, drop=("offline_replicas",))
    live = {b["broker_id"] for b in got["brokers"]}
    assert all(
        p["offline_replicas"] == [r for r in p["replicas"] if r not in live] for p in got["partitions"]
    )


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
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "auditor.cli.main",
            "collect",
            "--broker-config",
            str(d),
            "--metrics",
            str(d / "metrics.prom"),
            "--cluster-name",
            "payments-msk",
            "-f",
            "jsonl",
            "-o",
            str(tmp_path / "snap"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**os.environ, "CI": "1"},
    )
    assert p.returncode == 0, p.stderr
    want = _snapshot("payments-msk")
    got = {t: _jsonl(tmp_path / "snap" / f"{t}.jsonl") for t in ("configs", "metrics")}
    assert _static(got["configs"]) == _static(want["configs"])
    assert _metrics(got["metrics"]) == _metrics(want["metrics"])


def test_committed_sources_match_the_generator(tmp_path):
    spec = importlib.util.spec_from_file_location(
        "generate_sources", ROOT / "sample_configs" / "generate_sources.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(tmp_path / "sources")
    for cluster in CLUSTERS:
        fresh = {p.name: p.read_text() for p in (tmp_path / "sources" / cluster).iterdir()}
        committed = {p.name: p.read_text() for p in (SOURCES / cluster).iterdir()}
        assert fresh == committed, (
            f"sample_configs/sources/{cluster} is stale: run sample_configs/generate_sources.py"
        )
