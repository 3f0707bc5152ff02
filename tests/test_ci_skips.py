"""Under CI=true a skipped test fails the run: CI installs every real component (install.sh),
so a skip there means a guarantee silently went missing (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).with_name("conftest.py").read_text()

SKIPPING = """
import pytest

def test_needs_chromium():
    pytest.skip("needs Chromium at /usr/bin/chromium")

@pytest.mark.skipif(True, reason="needs java and ZooKeeper jars")
def test_needs_zookeeper():
    pass

@pytest.mark.skipif(True, reason="POSIX permissions")
def test_platform_only():
    pass

@pytest.mark.xfail(reason="known")
def test_expected_failure():
    assert False

def test_passes():
    pass
"""


def _run(pytester, monkeypatch, ci: str | None):
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_components=SKIPPING)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "0", "-q")


def test_missing_components_fail_under_ci(pytester, monkeypatch):
    result = _run(pytester, monkeypatch, "true")
    # a skip in the test body fails it; a skipif mark (decided at setup) makes it an error
    result.assert_outcomes(passed=1, failed=1, errors=1, skipped=1, xfailed=1)
    assert result.ret != 0
    result.stdout.fnmatch_lines(
        [
            "*every real component must be present: *needs Chromium*",
            "*every real component must be present: *needs java and ZooKeeper jars*",
        ]
    )


def test_missing_components_skip_outside_ci(pytester, monkeypatch):
    _run(pytester, monkeypatch, None).assert_outcomes(passed=1, skipped=3, xfailed=1)


def test_the_shared_spark_sessions_tests_share_one_worker(request):
    """Under `--dist loadgroup` (pyproject's addopts) xdist sends the tests whose node id ends
    in '@spark' to one worker, so one JVM serves them all. The group must be marked before
    xdist reads it into the node id (tests/conftest.py, tryfirst): marked after, every worker
    started a Spark session of its own and the suite took a minute longer."""
    spark = [i for i in request.session.items if i.get_closest_marker("spark")]
    shared = [i for i in spark if not i.get_closest_marker("own_jvm")]
    if request.config.getvalue("loadgroup"):  # the whole suite's run, or any part of it
        assert all(i.nodeid.endswith("@spark") for i in shared)
        assert not any(i.nodeid.endswith("@spark") for i in spark if i not in shared)
