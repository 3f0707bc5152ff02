"""Issue 47: no test leaves threads running (tests/conftest.py checks it after every test).

The thread found: py4j's FinalizerWorker (pyspark's gateway, ``py4j/clientserver.py``) sleeps in a
one-second loop for as long as the gateway lives; the shared Spark session's gateway lived for the
rest of the run, into every later test of its worker (one that patched time.sleep counted 69,000
calls). The session now stops after the last test sharing it, JVM and threads included."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from tests.conftest import ROOT, leftover_threads, spark_running, stop_spark


def test_a_project_or_non_daemon_thread_left_running_is_named():
    before = set(threading.enumerate())
    release = threading.Event()
    project = threading.Thread(target=release.wait, name="collect-zookeeper", daemon=True)
    other = threading.Thread(target=release.wait, name="a-worker", daemon=False)
    library = threading.Thread(target=release.wait, name="Thread-9 (zk_loop)", daemon=True)
    for t in (project, other, library):
        t.start()
    try:
        left = leftover_threads(before, spark_up=False, grace=0.2)
        assert left == [
            "collect-zookeeper (daemon, threading)",
            "a-worker (not a daemon, threading)",
        ]  # a library's daemon thread (a module fixture's ZooKeeper client) passes
    finally:
        release.set()
    for t in (project, other, library):
        t.join(5)
    assert leftover_threads(before, spark_up=False, grace=0.2) == []


def test_a_thread_that_ends_within_the_grace_passes():
    before = set(threading.enumerate())
    threading.Thread(target=time.sleep, args=(0.3,), name="collect-metrics", daemon=True).start()
    assert leftover_threads(before, spark_up=False, grace=5) == []


def test_the_check_fails_a_test_that_leaves_a_thread(tmp_path):
    """The hook itself, in a pytest run of its own with this suite's conftest."""
    (tmp_path / "test_leaks.py").write_text(
        "import threading\n"
        "release = threading.Event()\n"
        "def test_leaks():\n"
        "    threading.Thread(target=release.wait, args=(60,), name='msk-topics_0', daemon=True).start()\n"
        "def test_then_release():\n"
        "    release.set()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "tests.conftest", "-p", "no:cacheprovider"]
        + ["--rootdir", str(tmp_path), str(tmp_path / "test_leaks.py")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert "2 passed, 1 error" in proc.stdout, proc.stdout + proc.stderr
    assert "threads left running after the test: msk-topics_0 (daemon, threading)" in proc.stdout


@pytest.mark.slow
@pytest.mark.spark
@pytest.mark.own_jvm  # it starts (and stops) the process's Spark itself
def test_stopping_spark_ends_its_jvm_and_py4js_sleeping_thread(spark_engine):
    from pyspark import SparkContext

    assert spark_engine.spark.range(3).count() == 3
    gateway = SparkContext._gateway
    proc = gateway.proc
    finalizers = [t for t in threading.enumerate() if type(t).__name__ == "FinalizerWorker"]
    assert finalizers and all(t.is_alive() for t in finalizers)  # the one-second sleeper
    stop_spark()
    assert not spark_running() and proc.poll() is not None  # the JVM exited
    for t in finalizers:
        t.join(5)
    assert not [t for t in threading.enumerate() if type(t).__module__.startswith(("py4j", "pyspark"))]
