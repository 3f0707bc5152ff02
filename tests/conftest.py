from __future__ import annotations

import os
import tempfile
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


@pytest.fixture(scope="session")
def spark_engine():
    """One local Spark session for the whole run (cold start is 5-10 s here)."""
    from auditor.engine.spark_engine import SparkEngine

    engine = SparkEngine(
        master="local[2]",
        # Spark's SQL settings as a user gets them: the engine sizes them to the data.
        conf={"spark.ui.enabled": "false", "spark.driver.memory": "1g"},
    )
    yield engine
    engine.close()


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
    path."""
    for item in items:
        if item.get_closest_marker("spark") and not item.get_closest_marker("own_jvm"):
            item.add_marker(pytest.mark.xdist_group("spark"))


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
