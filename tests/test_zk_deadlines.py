"""Issue 16, class 1: every wait on ZooKeeper is bounded whatever the server does (killed,
frozen, silent) and the whole collection has a deadline. Real Apache ZooKeeper servers
(tests/zk_server.py), one per test that kills or freezes it; every wait here is bounded and
every process is stopped in a finally."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import threading
import time

import pytest

import auditor.collectors.zookeeper as zkc
from auditor.collectors.zookeeper import collect_zookeeper
from auditor.sources import Sources
from tests.conftest import ROOT
from tests.zk_server import SilentServer, ZkServer, available, client, kafka_layout, write_layout

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not available(), reason="needs java and ZooKeeper jars")]

TIMEOUT = 2.0
BOUND = 4 * TIMEOUT  # a dead, frozen or silent server ends the source within this


class Trip:
    """Wraps a KazooClient: calls ``action`` when the ``at``-th partition state read is issued
    (0-based), i.e. in the middle of a pipelined batch."""

    def __init__(self, inner, action, at: int):
        self._inner, self._action, self._at = inner, action, at
        self._n = itertools.count()
        self.tripped = threading.Event()

    def __getattr__(self, name):
        fn = getattr(self._inner, name)
        if name != "get_async":
            return fn

        def get_async(path, *a, **k):
            if path.endswith("/state") and next(self._n) == self._at:
                self._action()
                self.tripped.set()
            return fn(path, *a, **k)

        return get_async


def _server_with(topics: dict) -> ZkServer:
    server = ZkServer().start()
    try:
        w = client(server.hosts)
        try:
            write_layout(w, kafka_layout(topics=topics))
        finally:
            w.stop()
            w.close()
    except BaseException:
        server.stop()
        raise
    return server


def _bounded(fn, limit: float):
    """(fn(), seconds) with fn run in a daemon thread; fails the test if it runs past ``limit``."""
    box: dict = {}

    def run():
        t0 = time.monotonic()
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001
            box["error"] = e
        box["took"] = time.monotonic() - t0

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(limit)
    assert not t.is_alive(), f"still running after {limit} s"
    if "error" in box:
        raise box["error"]
    return box["value"], box["took"]


def _trip_own_client(monkeypatch, action, at: int) -> list[Trip]:
    """Make collect_zookeeper's own client (started and stopped by it) a Trip."""
    made: list[Trip] = []
    real = zkc._start_client

    def start(hosts, timeout):
        made.append(Trip(real(hosts, timeout), action, at))
        return made[-1]

    monkeypatch.setattr(zkc, "_start_client", start)
    return made


def _assert_partial(r, hosts: str, *, topics: int):
    assert len(r.errors) == 1, r.errors
    err = r.errors[0]
    assert err["source"] == "zookeeper" and err["target"] == hosts
    assert "partition states: /brokers/topics/" in err["message"]  # names what was being read
    assert r.sources[0]["status"] == "error"
    assert len(r.tables["brokers"]) == 3 and len(r.tables["topics"]) == topics  # completed stages kept
    assert "partitions" not in r.tables and "zk_state" not in r.tables  # never half a table


@pytest.mark.parametrize(("batch", "at"), [(2000, 0), (50, 300)], ids=["one-big-batch", "small-batches"])
def test_zookeeper_killed_mid_batch(monkeypatch, batch, at):
    """SIGKILL while a pipelined batch is being sent. With a big batch this used to hang for
    good: kazoo's connection thread gives up reconnecting and ends, and the next request
    blocks writing to its wake-up socket."""
    server = _server_with({f"t{i}": (100, 3) for i in range(20)})
    try:
        trips = _trip_own_client(monkeypatch, server.kill, at)
        r, took = _bounded(lambda: collect_zookeeper(server.hosts, timeout=TIMEOUT, batch=batch), BOUND + 30)
        assert trips and trips[0].tripped.is_set()
        print(f"time-to-exit, killed (batch {batch}): {took:.2f} s")
        assert took < BOUND, took
        _assert_partial(r, server.hosts, topics=20)
    finally:
        server.stop()


def test_zookeeper_frozen_mid_collection(monkeypatch):
    """SIGSTOP: the connection stays open and nothing answers."""
    server = _server_with({f"t{i}": (50, 3) for i in range(20)})
    try:
        _trip_own_client(monkeypatch, server.pause, 100)
        r, took = _bounded(lambda: collect_zookeeper(server.hosts, timeout=TIMEOUT, batch=50), BOUND + 30)
        print(f"time-to-exit, frozen: {took:.2f} s")
        assert took < BOUND, took
        _assert_partial(r, server.hosts, topics=20)
        # Two clocks race here, and either ends the source within the bound: the collector's
        # wait for the answer (2 s), and kazoo's own ping, which drops the connection after
        # 2/3 of the session timeout without an answer (ConnectionLoss; seen in CI under load).
        message = r.errors[0]["message"]
        assert "no answer within 2 s" in message or "ConnectionLoss" in message, message
    finally:
        server.resume()
        server.stop()


def test_overall_deadline_keeps_completed_tables():
    """A server that answers, but too slowly for the whole read: the overall deadline ends it
    naming the stage and znode, with the tables completed before."""
    server = _server_with({f"t{i}": (50, 3) for i in range(20)})
    done = threading.Event()
    reader = client(server.hosts)
    try:

        class Slow(Trip):
            def __getattr__(self, name):
                fn = getattr(self._inner, name)
                if name != "get_async":
                    return fn

                def get_async(path, *a, **k):
                    if path.endswith("/state") and not done.is_set():
                        time.sleep(0.005)  # 1,000 state reads: 5 s, past the 1 s deadline
                    return fn(path, *a, **k)

                return get_async

        r, took = _bounded(
            lambda: collect_zookeeper(
                server.hosts, timeout=TIMEOUT, batch=100, deadline=1.0, client=Slow(reader, None, -1)
            ),
            30,
        )
        print(f"time-to-exit, overall deadline 1 s: {took:.2f} s")
        assert took < 1.0 + TIMEOUT, took
        _assert_partial(r, server.hosts, topics=20)
        assert "collection deadline of 1 s passed (" in r.errors[0]["message"]
    finally:
        done.set()
        reader.stop()
        reader.close()
        server.stop()


_CLI_KILL = """
import itertools, os, signal, sys
import auditor.collectors.zookeeper as zkc
from auditor.cli.main import main

pid, at, n = int(os.environ["ZK_PID"]), int(os.environ["KILL_AT"]), itertools.count()
real = zkc._start_client

class Trip:
    def __init__(self, inner):
        self._inner = inner
    def __getattr__(self, name):
        fn = getattr(self._inner, name)
        if name != "get_async":
            return fn
        def get_async(path, *a, **k):
            if path.endswith("/state") and next(n) == at:
                os.kill(pid, signal.SIGKILL)
            return fn(path, *a, **k)
        return get_async

zkc._start_client = lambda hosts, timeout: Trip(real(hosts, timeout))
sys.argv = ["kafka-audit", *sys.argv[1:]]
main()
"""


def _cli(args, env=None, script=None, limit=60):
    cmd = (
        [sys.executable, "-c", script, *map(str, args)]
        if script
        else [sys.executable, "-m", "auditor.cli.main", *map(str, args)]
    )
    t0 = time.monotonic()
    p = subprocess.run(
        cmd, capture_output=True, text=True, cwd=ROOT, timeout=limit, env={**os.environ, **(env or {})}
    )
    return p, time.monotonic() - t0


def _startup() -> float:
    """Seconds the CLI takes to start and exit doing nothing (added to the bounds below)."""
    _, took = _cli(["--help"])
    return took


def test_cli_collect_exits_3_when_zookeeper_is_killed_mid_batch(tmp_path):
    server = _server_with({f"t{i}": (100, 3) for i in range(20)})
    try:
        startup = _startup()
        out = tmp_path / "snap"
        p, took = _cli(
            ["collect", "--zookeeper", server.hosts, "-o", out, "--timeout", TIMEOUT, "--format", "jsonl"],
            env={"ZK_PID": str(server.proc.pid), "KILL_AT": "0"},
            script=_CLI_KILL,
        )
        print(f"time-to-exit, CLI, killed: {took:.2f} s (CLI start-up {startup:.2f} s)")
        assert server.proc.poll() is not None  # it was killed
        assert p.returncode == 3, (p.returncode, p.stderr[-2000:])
        assert took < BOUND + startup, (took, startup)
        assert (out / "brokers.jsonl").exists() and not (out / "partitions.jsonl").exists()
    finally:
        server.stop()


def test_cli_collect_exits_3_on_a_server_that_never_answers(tmp_path):
    startup = _startup()
    with SilentServer() as silent:
        p, took = _cli(
            ["collect", "--zookeeper", silent.hosts + "/kafka", "-o", tmp_path / "snap", "--timeout", TIMEOUT]
        )
        print(f"time-to-exit, CLI, silent server: {took:.2f} s (CLI start-up {startup:.2f} s)")
        assert silent.accepted  # it did connect: the wait was on the answer
    assert p.returncode == 3, (p.returncode, p.stderr[-2000:])
    assert took < BOUND + startup, (took, startup)
    assert "cannot connect within 2 s" in p.stderr + p.stdout


def test_collect_abandons_a_source_past_its_deadline(monkeypatch):
    """collect() guards every source with an overall deadline (here a files source that
    never returns), records it as a source error and goes on."""
    import auditor.collectors.collect as collect_mod
    import auditor.collectors.files as files_mod

    release = threading.Event()

    def hang(paths):
        release.wait(30)
        raise AssertionError("not reached")

    monkeypatch.setattr(files_mod, "collect_broker_configs", hang)
    monkeypatch.setattr(collect_mod, "MIN_SOURCE_DEADLINE", 0.5)
    monkeypatch.setattr(collect_mod, "SOURCE_DEADLINE_FACTOR", 1)
    seen = []
    try:
        (manifest, tables), took = _bounded(
            lambda: collect_mod.collect(
                Sources(broker_configs=("/nonexistent/server.properties",), cluster_name="c", timeout=0.2),
                progress=lambda *a: seen.append(a),
            ),
            10,
        )
    finally:
        release.set()
    print(f"time-to-exit, collect() source guard 0.5 s: {took:.2f} s")
    assert took < 3, took
    (err,) = manifest.errors
    assert err["source"] == "files" and "no result within 0.5 s" in err["message"]
    assert [s["status"] for s in manifest.sources] == ["error"]
    assert ("files", "done", 1, 1) in seen


# -- issue 38: the hand-run server (README) never leaves its JVM behind ---------------------------


def _serve_by_hand():
    """`python -m tests.zk_server DUMP` as the README runs it: (process, the JVM's pid)."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.zk_server",
            str(ROOT / "sample_configs/sources/ads-zk-legacy/zookeeper.json"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    for line in proc.stdout:
        if line.startswith("serving") or time.monotonic() > deadline:
            break
    children = subprocess.run(
        ["ps", "-o", "pid=,comm=", "--ppid", str(proc.pid)], capture_output=True, text=True
    )
    (jvm,) = [int(x.split()[0]) for x in children.stdout.splitlines() if "java" in x]
    return proc, jvm


def _gone(pid: int, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # a zombie (exited, not yet reaped by its parent) is gone too
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().split(")")[-1].split()[0] == "Z":
                    return True
        except OSError:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.2)


@pytest.mark.parametrize("signum", ["SIGTERM", "SIGKILL"])
def test_hand_run_server_stops_its_jvm_when_python_is_terminated_or_killed(signum):
    import signal

    proc, jvm = _serve_by_hand()
    try:
        os.kill(proc.pid, getattr(signal, signum))
        proc.wait(timeout=30)
        assert _gone(jvm), f"the ZooKeeper JVM {jvm} outlived its Python process ({signum})"
    finally:
        if proc.poll() is None:
            proc.kill()
        if not _gone(jvm, 0):
            os.kill(jvm, 9)
