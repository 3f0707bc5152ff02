"""constraints.txt: the tested versions install.sh installs, and the check that what is installed
is what was tested (tools/lock.py; issue 38)."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import lock  # noqa: E402  (tools/lock.py: a script, not a package)


def test_installed_versions_are_the_tested_ones():
    """Under CI (install.sh installed with -c constraints.txt) any drift fails the run (the
    skip becomes a failure, tests/conftest.py); on a developer's machine it is a skip that
    names every package to update."""
    lines = lock.drift(lock.read_lock(), lock.closure())
    if lines:
        pytest.skip("installed versions differ from constraints.txt (run ./install.sh): " + "; ".join(lines))


def test_the_lock_pins_every_requirement_of_the_project_and_its_dev_extra():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    from packaging.requirements import Requirement

    wanted = [Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["dev"]]
    locked = lock.read_lock()
    assert {lock.canonical(r.name) for r in wanted} <= locked.keys()
    # each pinned version is one the project's own ranges admit
    for r in wanted:
        assert r.specifier.contains(locked[lock.canonical(r.name)], prereleases=True), r
    assert not lock.NOT_LOCKED & locked.keys()  # not pip's tools, not the project itself


def test_drift_names_each_kind_of_difference():
    lines = lock.drift(
        {"pytest": "9.2.0", "pyyaml": "6.0.4", "gone": "1.0", "same": "2"},
        {"pytest": "9.0.3", "pyyaml": "6.0.4", "new-dep": "0.1", "same": "2"},
    )
    assert lines == [
        "gone==1.0 is in constraints.txt but nothing installed needs it (regenerate it)",
        "new-dep 0.1 is installed and needed but not in constraints.txt (regenerate it)",
        "pytest: 9.0.3 installed, 9.2.0 tested (constraints.txt)",
    ]
    assert lock.drift({"a": "1"}, {"a": "1"}) == []


def test_names_are_compared_normalised_and_bad_lines_are_refused(tmp_path):
    f = tmp_path / "c.txt"
    f.write_text("# comment\nPyYAML==6.0.4  # why\ntyping_extensions==4.16.0\n\n")
    assert lock.read_lock(f) == {"pyyaml": "6.0.4", "typing-extensions": "4.16.0"}
    f.write_text("pytest>=8\n")
    with pytest.raises(SystemExit, match=r"c.txt:1: expected name==version"):
        lock.read_lock(f)


def test_the_check_command_reports_drift_and_exits_1(tmp_path, monkeypatch):
    lines = lock.drift(lock.read_lock(), lock.closure())
    p = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "lock.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == (1 if lines else 0), p.stdout + p.stderr
    if lines:
        assert f"{len(lines)} package(s) differ" in p.stdout and lines[0] in p.stdout
    else:
        assert "the installed versions are the tested ones" in p.stdout


def test_install_sh_installs_the_locked_versions_and_checks_them():
    text = (ROOT / "install.sh").read_text()
    assert "pip install -q --disable-pip-version-check -c constraints.txt -e '.[dev]'" in text
    assert text.index("-c constraints.txt") < text.index("python3 tools/lock.py --check")
    # the file is what tools/lock.py writes: its header, then sorted name==version lines
    body = (ROOT / "constraints.txt").read_text()
    assert body.startswith(lock.HEADER)
    assert lock.render(lock.read_lock()) == body


def test_the_projects_own_requirements_come_from_the_checkout():
    """Not from an installed copy's metadata, which keeps what it was installed with: a dependency
    added to pyproject.toml (mcp, issue 44) is in the closure before anyone reinstalls."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = lock.project_requirements()
    assert reqs[: len(project["dependencies"])] == project["dependencies"]
    assert 'pytest>=8; extra == "dev"' in reqs
    assert {"mcp", "mcp-types", "starlette", "uvicorn"} <= lock.closure().keys()
