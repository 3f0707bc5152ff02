"""ZooKeeper collector against a real Apache ZooKeeper (tests/zk_server.py)."""

from __future__ import annotations

import itertools
import time

import pytest

from auditor.collectors.zookeeper import READ_METHODS, collect_zookeeper
from auditor.sources import Sources
from tests.zk_server import (
    ZkServer,
    available,
    client,
    four_letter,
    incident3_layout,
    kafka_layout,
    load_dump,
    write_layout,
)

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not available(), reason="needs java and ZooKeeper jars")]

_chroots = itertools.count()


def load(writer, nodes: dict, name: str = "kafka") -> str:
    """Write a layout under a fresh chroot; return that chroot."""
    chroot = f"/{name}-{next(_chroots)}"
    writer.create(chroot)
    write_layout(writer, {chroot + p: v for p, v in nodes.items()})
    return chroot


def _tables(r):
    return {k: v for k, v in r.tables.items()}


def test_healthy_layout_with_chroot_and_configs(zk, writer):
    nodes = kafka_layout(topics={"orders": (6, 3), "__consumer_offsets": (50, 3)})
    nodes["/config/topics/orders"] = {
        "version": 1,
        "config": {"min.insync.replicas": "2", "retention.ms": "604800000"},
    }
    nodes["/config/brokers/2"] = {
        "version": 1,
        "config": {
            "num.io.threads": "16",
            "listener.name.sasl_ssl.ssl.keystore.password": "[encrypted]:c2VjcmV0",
        },
    }
    nodes["/config/brokers/<default>"] = {"version": 1, "config": {"min.insync.replicas": "2"}}
    chroot = load(writer, nodes)
    r = collect_zookeeper(zk.hosts + chroot, timeout=5)
    assert r.errors == []
    (src,) = r.sources
    assert src["status"] == "ok" and src["round_trips"] == 3 and src["znodes"] > 60  # pipelined
    t = _tables(r)
    assert [(b["broker_id"], b["host"], b["port"], b["rack"]) for b in t["brokers"]] == [
        (1, "kafka-1.test.internal", 9092, "az-a"),
        (2, "kafka-2.test.internal", 9092, "az-b"),
        (3, "kafka-3.test.internal", 9092, "az-c"),
    ]
    assert {
        (x["topic"], x["partitions"], x["replication_factor"], x["is_internal"]) for x in t["topics"]
    } == {("orders", 6, 3, False), ("__consumer_offsets", 50, 3, True)}
    assert len(t["partitions"]) == 56 and len(t["zk_state"]) == 56
    p = next(x for x in t["partitions"] if x["topic"] == "orders" and x["partition"] == 0)
    assert p["leader"] == p["replicas"][0] and p["isr"] == p["replicas"] and p["offline_replicas"] == []
    assert t["controller"] == [
        {
            "mode": "zookeeper",
            "controller_id": 1,
            "controller_epoch": 7,
            "voters": [],
            "reassignment_pending": False,
        }
    ]
    cfg = {(c["entity_type"], c["entity_name"], c["key"]): c for c in t["configs"]}
    assert cfg[("topic", "orders", "min.insync.replicas")]["source"] == "TOPIC_CONFIG"
    assert cfg[("broker", "2", "num.io.threads")]["value"] == "16"
    assert cfg[("broker", "2", "num.io.threads")]["source"] == "DYNAMIC_BROKER_CONFIG"
    secret = cfg[("broker", "2", "listener.name.sasl_ssl.ssl.keystore.password")]
    assert secret["value"] is None and secret["is_sensitive"] is True
    default = cfg[("cluster_default", "", "min.insync.replicas")]
    assert default["source"] == "DYNAMIC_DEFAULT_BROKER_CONFIG" and default["value"] == "2"


def test_incident_3_split_brain_layout(zk, writer):
    """ads-zk-legacy: broker 5 gone, __consumer_offsets-17 at leader -1, a state written by a
    zombie controller (controller_epoch 42 > /controller_epoch 41), a reassignment pending."""
    nodes = incident3_layout()
    off17 = nodes["/brokers/topics/__consumer_offsets"]["partitions"]["17"]
    nodes["/admin/reassign_partitions"] = {
        "version": 1,
        "partitions": [{"topic": "ads.impressions", "partition": 4, "replicas": [1, 2, 3]}],
    }
    nodes["/log_dir_event_notification/log_dir_event_0000000003"] = {"version": 1, "broker": 4, "event": 1}
    r = collect_zookeeper(zk.hosts + load(writer, nodes, "ads"), timeout=5)
    assert r.errors == []
    t = _tables(r)
    assert sorted(b["broker_id"] for b in t["brokers"]) == [1, 2, 3, 4]
    assert t["controller"][0]["controller_epoch"] == 41 and t["controller"][0]["controller_id"] == 2
    assert t["controller"][0]["reassignment_pending"] is True
    p17 = next(x for x in t["partitions"] if x["topic"] == "__consumer_offsets" and x["partition"] == 17)
    assert p17["leader"] == -1 and p17["isr"] == [off17[0]]
    zombie = next(z for z in t["zk_state"] if z["topic"] == "ads.impressions" and z["partition"] == 4)
    assert zombie["controller_epoch"] == 42 and zombie["leader"] == 5 and zombie["zk_version"] == 0
    with5 = [x for x in t["partitions"] if 5 in x["replicas"]]
    assert with5 and all(x["offline_replicas"] == [5] for x in with5)  # as Kafka's metadata reports them
    assert all(5 not in x["isr"] for x in with5 if (x["topic"], x["partition"]) != ("ads.impressions", 4))
    assert r.sources[0]["log_dir_event_brokers"] == [4]
    assert t["log_dir_events"] == [{"broker_id": 4, "event": "log_dir_event_0000000003", "event_type": 1}]


def test_pending_log_dir_event_fires_dsk001(zk, writer, tmp_path):
    """A broker's unprocessed log-dir failure event, read from a real ZooKeeper, is judged:
    DSK001 fires for that broker (and only for it) without any metrics source."""
    from auditor.collectors.collect import collect
    from auditor.config import AuditConfig
    from auditor.engine import open_engine
    from auditor.engine.runner import run_audit
    from auditor.snapshot.io import open_snapshot, write_snapshot

    nodes = kafka_layout(topics={"orders": (2, 3)})
    nodes["/log_dir_event_notification/log_dir_event_0000000009"] = {"version": 1, "broker": 2, "event": 1}
    manifest, tables = collect(
        Sources(zookeeper=zk.hosts + load(writer, nodes, "logdir"), cluster_name="logdir", timeout=5)
    )
    write_snapshot(tmp_path / "snap", manifest, tables, fmt="jsonl")
    with open_engine("duckdb") as engine:
        result = run_audit(engine, [open_snapshot(tmp_path / "snap")], AuditConfig(select=("DSK001",)))
    assert [(f.rule, f.resource_type, f.resource_name) for f in result.findings] == [
        ("DSK001", "broker", "2")
    ]
    assert "log_dir_event_0000000009" in result.findings[0].message


def test_garbage_znodes_are_reported_and_skipped(zk, writer):
    nodes = kafka_layout(topics={"good": (2, 3), "bad-assignment": (2, 3)})
    nodes["/brokers/topics/good/partitions/1/state"] = b"{not json"
    nodes["/brokers/topics/bad-assignment"] = b"\xff\xfe garbage"
    nodes["/brokers/ids/3"] = b"[1, 2]"
    nodes["/config/topics/good"] = {"version": 1, "config": "nope"}
    nodes["/controller_epoch"] = b"seven"
    r = collect_zookeeper(zk.hosts + load(writer, nodes), timeout=5)
    msgs = sorted(e["message"] for e in r.errors)
    assert len(msgs) == 5, msgs
    assert any(m.startswith("/brokers/topics/good/partitions/1/state: not valid JSON") for m in msgs)
    assert any(m.startswith("/brokers/topics/bad-assignment: not valid JSON") for m in msgs)
    assert any(m.startswith("/brokers/ids/3: expected a JSON dict") for m in msgs)
    assert any(m.startswith("/config/topics/good: 'config'") for m in msgs)
    assert any(m.startswith("/controller_epoch:") for m in msgs)
    t = _tables(r)
    assert sorted(b["broker_id"] for b in t["brokers"]) == [1, 2]
    assert [x["topic"] for x in t["topics"]] == ["good"]
    assert {(z["topic"], z["partition"]) for z in t["zk_state"]} == {("good", 0)}
    bad = next(x for x in t["partitions"] if x["partition"] == 1)
    assert bad["leader"] == -1  # no readable state
    assert t["controller"][0]["controller_epoch"] is None
    assert r.sources[0]["status"] == "error"


class ReadOnlyGuard:
    """Wraps a KazooClient: any call outside get/get_children/exists fails the test."""

    def __init__(self, inner):
        self._inner = inner
        self.calls: list[str] = []

    def __getattr__(self, name):
        attr = getattr(self._inner, name)
        if callable(attr):
            if name not in READ_METHODS:
                raise AssertionError(f"collector called KazooClient.{name}: not a read")

            def wrapped(*a, **k):
                self.calls.append(name)
                return attr(*a, **k)

            return wrapped
        return attr


def _zxid(port: int) -> str:
    return next(line for line in four_letter(port).splitlines() if line.startswith("Zxid"))


def test_collector_only_reads(zk, writer):
    nodes = kafka_layout()
    nodes["/config/brokers/<default>"] = {"version": 1, "config": {"log.retention.hours": "72"}}
    chroot = load(writer, nodes)
    reader = client(zk.hosts + chroot)
    try:
        guard = ReadOnlyGuard(reader)
        before = _zxid(zk.port)
        r = collect_zookeeper(zk.hosts + chroot, timeout=5, client=guard)
        assert _zxid(zk.port) == before  # no transaction reached the server
    finally:
        reader.stop()
        reader.close()
    assert r.errors == []
    assert guard.calls and set(guard.calls) <= READ_METHODS
    for forbidden in (
        "create",
        "set",
        "delete",
        "ensure_path",
        "transaction",
        "create_async",
        "set_async",
        "delete_async",
        "set_acls",
    ):
        with pytest.raises(AssertionError):
            getattr(guard, forbidden)


def test_wrong_chroot_and_unreachable_server(zk):
    r = collect_zookeeper(zk.hosts + "/no-such-chroot", timeout=5)
    assert len(r.errors) == 1 and "no /brokers znode" in r.errors[0]["message"]
    from tests.zk_server import free_port

    t0 = time.monotonic()
    r = collect_zookeeper(f"127.0.0.1:{free_port()}", timeout=1)
    assert time.monotonic() - t0 < 10
    assert len(r.errors) == 1 and "cannot connect" in r.errors[0]["message"]
    assert r.tables == {} and r.sources[0]["status"] == "error"


def test_server_stopped_mid_collection_is_a_source_error():
    with ZkServer() as server:
        w = client(server.hosts)
        try:
            write_layout(w, kafka_layout(topics={f"t{i}": (50, 3) for i in range(20)}))
        finally:
            w.stop()
            w.close()
        reader = client(server.hosts)
        try:
            state_reads = itertools.count()

            class KillMidway(ReadOnlyGuard):
                def __getattr__(self, name):
                    fn = super().__getattr__(name)
                    if name != "get_async":
                        return fn

                    def get_async(path, *a, **k):
                        if path.endswith("/state") and next(state_reads) == 300:
                            server.stop()  # the server dies in the middle of the partition reads
                        return fn(path, *a, **k)

                    return get_async

            t0 = time.monotonic()
            r = collect_zookeeper(server.hosts, timeout=2, batch=100, client=KillMidway(reader))
            assert time.monotonic() - t0 < 30
        finally:
            reader.stop()
            reader.close()
    assert len(r.errors) == 1, r.errors
    assert r.errors[0]["source"] == "zookeeper" and r.errors[0]["target"] == server.hosts
    assert r.sources[0]["status"] == "error"
    t = _tables(r)
    assert len(t["brokers"]) == 3 and len(t["topics"]) == 20  # stages that completed
    assert "partitions" not in t and "zk_state" not in t  # never half a table


def test_collect_then_check_finds_incident_3(zk, writer, tmp_path):
    """kafka-audit collect --zookeeper ... then check: the split-brain findings come out of
    the incident-3 cluster (the sample fleet's ZooKeeper dump of ads-zk-legacy), nothing at
    error or above out of a healthy one."""
    import json
    import subprocess
    import sys

    from auditor.collectors.collect import collect
    from auditor.snapshot.io import write_snapshot
    from tests.conftest import ROOT

    def run(*args):
        return subprocess.run(
            [sys.executable, "-m", "auditor.cli.main", *map(str, args)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=240,
        )

    dump = ROOT / "sample_configs" / "sources" / "ads-zk-legacy" / "zookeeper.json"
    chroot = load_dump(writer, dump, chroot=f"/ads-{next(_chroots)}")
    p = run(
        "collect",
        "--zookeeper",
        zk.hosts + chroot,
        "--cluster-name",
        "ads-zk-legacy",
        "--kafka-version",
        "2.0.1",
        "--timeout",
        "5",
        "-o",
        tmp_path / "fleet" / "ads",
    )
    assert p.returncode == 0, p.stderr
    conf = tmp_path / "conf"
    conf.mkdir()
    for b in (1, 2, 3):
        (conf / f"{b}.properties").write_text(
            f"broker.id={b}\nlog.dirs=/var/lib/kafka/data\nbroker.rack=az-{b}\ndefault.replication.factor=3\n"
            "min.insync.replicas=2\nunclean.leader.election.enable=false\nnum.network.threads=8\n"
            "num.io.threads=16\n"
        )
    manifest, tables = collect(
        Sources(
            zookeeper=zk.hosts + load(writer, kafka_layout(), "healthy"),
            broker_configs=(str(conf),),
            cluster_name="healthy",
        ),
        cluster={"kafka_version": "3.6.0"},
    )
    assert manifest.errors == []
    assert {c["source"] for c in tables["configs"]} == {"STATIC_BROKER_CONFIG"}
    assert all(b["log_dirs"] == ["/var/lib/kafka/data"] and b["host"] for b in tables["brokers"])
    write_snapshot(tmp_path / "fleet" / "healthy", manifest, tables)

    p = run("check", tmp_path / "fleet", "--format", "json", "--fail-on", "never")
    assert p.returncode == 0, p.stderr
    findings = json.loads(p.stdout)["findings"]
    ads = {(f["rule"], f["resource"]["name"]) for f in findings if f["cluster"] == "ads-zk-legacy"}
    assert {("PAR001", "__consumer_offsets-17"), ("CTL004", "ads.impressions-4")} <= ads
    healthy = [f for f in findings if f["cluster"] == "healthy" and f["severity"] in ("error", "critical")]
    assert healthy == []


def test_znode_hidden_by_acl_is_reported_and_skipped(zk, writer):
    from kazoo.security import make_digest_acl

    nodes = kafka_layout(topics={"orders": (3, 3)})
    chroot = load(writer, nodes)
    admin = client(zk.hosts)
    try:
        admin.add_auth("digest", "admin:secret")
        admin.ensure_path(f"{chroot}/config/topics")
        admin.create(
            f"{chroot}/config/topics/orders",
            b'{"version":1,"config":{"retention.ms":"1"}}',
            acl=[make_digest_acl("admin", "secret", all=True)],
            makepath=True,
        )
    finally:
        admin.stop()
        admin.close()
    r = collect_zookeeper(zk.hosts + chroot, timeout=5)
    assert [e["message"] for e in r.errors] == [
        "not authorized to read /config/topics/orders (ZooKeeper ACL); skipped"
    ]
    assert len(r.tables["partitions"]) == 3 and "configs" not in r.tables


def test_unicode_digit_broker_ids_are_reported_not_a_crash(zk, writer, tmp_path):
    """Issue 37: '²'.isdigit() is True but int('²') raises. A znode /brokers/ids/², a controller
    naming broker "²" and dynamic configs of broker ² are reported and skipped, and the snapshot
    checks and preflights with one line per problem, never an internal error."""
    nodes = kafka_layout(topics={"orders": (3, 3)})
    nodes["/brokers/ids/²"] = {"host": "kafka-9.test", "port": 9092, "version": 4}
    nodes["/config/brokers/²"] = {"version": 1, "config": {"min.insync.replicas": "3"}}
    nodes["/controller"] = {"version": 1, "brokerid": "²", "timestamp": "1"}
    r = collect_zookeeper(zk.hosts + load(writer, nodes), timeout=5)
    msgs = [e["message"] for e in r.errors]
    assert any(m.startswith("/brokers/ids/²: broker id is not an integer") for m in msgs), msgs
    assert sorted(b["broker_id"] for b in r.tables["brokers"]) == [1, 2, 3]
    assert r.tables["controller"][0]["controller_id"] == -1  # (what an unreadable controller gives)
    from auditor.snapshot.io import Manifest, write_snapshot
    from tests.test_preflight import cli

    snap = write_snapshot(
        tmp_path / "snap",
        Manifest(cluster={"id": "uni", "name": "uni"}, collected_at="2026-11-22T00:00:00Z", errors=r.errors),
        dict(r.tables),
        fmt="jsonl",
    )
    for command in ("check", "preflight"):
        p = cli(command, snap)
        assert p.returncode == 3 and "internal error" not in p.stderr and "Traceback" not in p.stderr, (
            p.stderr
        )
