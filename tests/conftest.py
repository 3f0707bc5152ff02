from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_FLEET = ROOT / "sample_configs" / "fleet"
ARTIFACTS = ROOT / "test-artifacts"

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
# The plans a run compiles (all but the bundled ones) go to a cache of this run's own, shared by
# its xdist workers and the commands they start: every run compiles what CI's fresh machine
# compiles, and a developer's own cache neither hides a broken compile nor fills with test plans.
os.environ.setdefault(
    "KAFKA_AUDIT_PLAN_CACHE",
    str(
        Path(tempfile.gettempdir())
        / f"kafka-audit-test-plans-{os.environ.get('PYTEST_XDIST_TESTRUNUID', os.getpid())}"
    ),
)


def cluster_dir(name: str) -> Path:
    (match,) = SAMPLE_FLEET.glob(f"dt=*/cluster={name}")
    return match


def audit_sample(rules, roots=(SAMPLE_FLEET,)):
    """Audit sample snapshots on DuckDB with only ``rules`` selected:
    ({(cluster, rule): {"type:name", ...}}, {(cluster, rule, resource name): Finding})."""
    from collections import defaultdict

    from auditor.config import AuditConfig
    from auditor.engine import open_engine
    from auditor.engine.runner import run_audit
    from auditor.snapshot.io import discover, open_snapshot

    refs = [open_snapshot(d) for root in roots for d in discover(root)]
    with open_engine("duckdb") as engine:
        result = run_audit(engine, refs, AuditConfig(select=tuple(rules)))
    fired: dict[tuple[str, str], set[str]] = defaultdict(set)
    by_key = {}
    for f in result.findings:
        fired[(f.cluster, f.rule)].add(f"{f.resource_type}:{f.resource_name}")
        by_key[(f.cluster, f.rule, f.resource_name)] = f
    assert {r for _, r in fired} <= set(rules)
    return fired, by_key


_SHARED_SPARK: dict = {}  # "engine": the Spark engine the shared-session tests use


@pytest.fixture
def spark_engine():
    """One local Spark session for the tests that share it (cold start is 5-10 s here): made by
    the first, stopped after the last (:func:`pytest_runtest_teardown`), JVM and threads too."""
    from auditor.engine.spark_engine import SparkEngine

    if "engine" not in _SHARED_SPARK:
        _SHARED_SPARK["engine"] = SparkEngine(
            master="local[2]",
            # Spark's SQL settings as a user gets them: the engine sizes them to the data.
            # 2g: every rule case of the catalogue is one run here (~700 clusters, 100+ rules),
            # and 1g ran out of heap once the catalogue grew past 100 rules (issue 43).
            conf={"spark.ui.enabled": "false", "spark.driver.memory": "2g"},
        )
    return _SHARED_SPARK["engine"]


def shares_spark(item) -> bool:
    """A test of the shared Spark session (marked spark, not own_jvm: grouped in one worker)."""
    return (
        item is not None and bool(item.get_closest_marker("spark")) and not item.get_closest_marker("own_jvm")
    )


def spark_running() -> bool:
    if "pyspark" not in sys.modules:
        return False
    from pyspark import SparkContext

    return SparkContext._gateway is not None


def stop_spark() -> None:
    """Stop this process's Spark: the shared engine, the session, py4j's gateway and the JVM.
    Without it py4j's FinalizerWorker slept in a one-second loop for the rest of the run (a later
    test that patched time.sleep counted 69,000 calls), and the JVM held its memory."""
    engine = _SHARED_SPARK.pop("engine", None)
    if engine is not None:
        engine.close()
    if "pyspark" not in sys.modules:
        return
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

    # Each step on its own: a test that failed mid-job (a timeout) can leave the gateway
    # half-answering, and the JVM must go whatever the session's state.
    for stop in (SparkSession._instantiatedSession, SparkContext._active_spark_context):
        try:
            if stop is not None:
                stop.stop()
        except Exception:  # noqa: BLE001
            pass
    SparkSession._instantiatedSession = SparkSession._activeSession = None
    SparkContext._active_spark_context = None
    gateway = SparkContext._gateway
    if gateway is None:
        return
    SparkContext._gateway = SparkContext._jvm = None
    try:
        gateway.shutdown()  # ends py4j's threads (its FinalizerWorker: on the shutdown task)
    except Exception:  # noqa: BLE001
        pass
    proc = getattr(gateway, "proc", None)  # the JVM exits when its stdin closes (PythonGatewayServer)
    if proc is not None:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def zk():
    """One real ZooKeeper (tests/zk_server.py) per test module; tests write under their own
    chroot. Per module, not per session: a live kazoo client's connection thread draws from
    the global `random` module, which Hypothesis flags in any test running meanwhile."""
    from tests.zk_server import ZkServer, available

    if not available():
        pytest.skip("needs java and ZooKeeper jars")
    server = ZkServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def writer(zk):
    """A kazoo client of ``zk`` that tests write their layouts with."""
    from tests.zk_server import client

    c = client(zk.hosts)
    try:
        yield c
    finally:
        c.stop()
        c.close()


# --- the real-input corpus (../shared/real-inputs, origins in its SOURCES.md) ------------------
# Public files nobody here wrote, used in place: the project commits none of them.
REAL_INPUTS = Path(os.environ.get("KAFKA_AUDIT_REAL_INPUTS", ROOT.parent / "shared" / "real-inputs"))


def real_input(relative: str) -> Path:
    """A file or directory of the real-input corpus. Outside CI a missing corpus skips the
    test; under CI=true that skip fails the run (pytest_runtest_makereport below), as CI always
    has ../shared beside the clone."""
    path = REAL_INPUTS / relative
    if not path.exists():
        pytest.skip(f"real-input corpus not here: {path}")
    return path


# --- skips that would hide a missing real component ---------------------------------------------
# A developer's machine may lack Chromium, the ZooKeeper jars, a JDK or the corpus, and those
# tests skip there. CI installs all of them (install.sh), so under CI=true a skip means a real
# component is missing and the guarantee it proves is silently gone: it fails the run instead.
# Only skips that no installation can remove (the platform) stay skips.
SKIPS_ALLOWED_IN_CI = ("POSIX permissions",)


def under_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and under_ci() and not hasattr(report, "wasxfail"):
        reason = (
            report.longrepr[2].removeprefix("Skipped: ")
            if isinstance(report.longrepr, tuple)
            else str(report.longrepr)
        )
        if not any(allowed in reason for allowed in SKIPS_ALLOWED_IN_CI):
            report.outcome = "failed"
            report.longrepr = f"skipped under CI=true, where every real component must be present: {reason}"


@pytest.hookimpl(tryfirst=True)  # before xdist reads the group into the node id
def pytest_collection_modifyitems(items):
    """Under pytest-xdist (`-n 2 --dist loadgroup`, pyproject's addopts), every test of the
    shared Spark session (``spark_engine``) runs in one worker, while the other workers take
    the rest, including the Spark tests that start JVMs of their own (marked ``own_jvm``: the
    CLI's, spark-submit's standalone cluster): the session's worker is the suite's critical
    path. They run one after the other (last, in a run of one process), so the session starts
    once and stops after the last of them."""
    for item in items:
        if shares_spark(item):
            item.add_marker(pytest.mark.xdist_group("spark"))
    items[:] = [i for i in items if not shares_spark(i)] + [i for i in items if shares_spark(i)]


# --- threads a test leaves running ------------------------------------------------------------
# A thread a test (or the code it runs) starts must be gone when it ends: a leftover one runs
# into later tests (the py4j loop above), holds sockets and memory, and a non-daemon one keeps
# the process from exiting. Checked after every test, its fixtures torn down: every new thread
# still alive that is not a daemon, or that the project names (its collectors' and engines'), or
# that belongs to Spark once the shared session is stopped, fails the test. Library daemon
# threads of fixtures that outlive the test (a module's ZooKeeper client) pass.
PROJECT_THREADS = (
    "collect-",
    "zk-issue",
    "zk-stop",
    "msk-topics",
    "kafka-audit",
    "kafka-io-",
    "spark-stderr",
)
THREAD_GRACE_SECONDS = 10.0  # for a thread that is ending (a source abandoned at its deadline)


def _spark_owned(t: threading.Thread) -> bool:
    target = getattr(t, "_target", None)
    owners = {type(t).__module__, getattr(target, "__module__", None) or ""}
    owners.add(type(getattr(target, "__self__", None)).__module__)
    return (
        t.name in ("spark-stderr",)
        or t.name.startswith("kafka-audit-job")
        or any(m.startswith(("py4j", "pyspark")) for m in owners)
    )


def leftover_threads(before: set, *, spark_up: bool, grace: float = THREAD_GRACE_SECONDS) -> list[str]:
    """The threads started since ``before`` that must not outlive a test (see above), after
    waiting up to ``grace`` seconds for them to end: their descriptions."""

    def offends(t: threading.Thread) -> bool:
        if spark_up and _spark_owned(t):
            return False  # the shared session's, for the next test
        return not t.daemon or t.name.startswith(PROJECT_THREADS) or _spark_owned(t)

    deadline = time.monotonic() + grace
    suspects = [t for t in threading.enumerate() if t not in before and offends(t)]
    for t in suspects:
        t.join(max(0.0, deadline - time.monotonic()))
    return [
        f"{t.name} ({'daemon' if t.daemon else 'not a daemon'}, {type(t).__module__})"
        for t in suspects
        if t.is_alive()
    ]


_THREADS_BEFORE = pytest.StashKey[set]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    item.stash[_THREADS_BEFORE] = set(threading.enumerate())
    yield


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item, nextitem):
    result = yield  # this test's fixtures are torn down
    if spark_running() and not shares_spark(nextitem):
        stop_spark()
    before = item.stash.get(_THREADS_BEFORE, None)
    left = leftover_threads(before, spark_up=spark_running()) if before is not None else []
    if left:
        pytest.fail(f"threads left running after the test: {'; '.join(left)}", pytrace=False)
    return result


class _GroupSuffix:
    """pytest-xdist's loadgroup sends a group to one worker by the ``@GROUP`` suffix it adds to
    each grouped test's node id, writing ``item._nodeid``. From pytest 9.1 a node id is derived
    from ``item._id`` (a NodeId) and that write changes nothing (xdist 3.8.0, the newest, still
    does it): the shared Spark session's tests spread over both workers, each starting a JVM
    (tests/test_ci_skips.py caught it on pytest 9.2.0, issue 38). After xdist's hook, give the
    suffix to the ids it missed; on older pytest it is already there and nothing changes."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config, items):
        if not config.getoption("loadgroup", default=False):
            return
        for item in items:
            groups = sorted(
                {
                    str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                    for m in item.iter_markers("xdist_group")
                }
            )
            suffix = "@" + "_".join(groups)
            if groups and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
                from _pytest.nodeid import coerce_node_id

                item._id = coerce_node_id(item.nodeid + suffix)


def pytest_configure(config):
    config.pluginmanager.register(_GroupSuffix(), "kafka-audit-xdist-group-suffix")
