"""The HTML templates live in templates/ at the top of the repository (the design card's layout)
and one lookup, ``importlib.resources.files("templates")``, finds them in each way the tool is
installed or run: a wheel installed into a fresh virtual environment, an editable install, and a
source checkout (``python -m auditor.cli.main`` in the clone). Each renders the sample fleet's
HTML report, which headless Chromium then checks as tests/test_browser.py does.

The fresh environment has no system site packages and no kafka-auditor of this machine: the
project's dependencies are made importable by a plain path line in a .pth file (a path line does
not run the .pth hooks of the directory it names, so this machine's own editable install of the
project stays out), and what imports ``auditor`` and ``templates`` is only what the mode under
test installed. Each run asserts where both came from.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLE_FLEET
from tests.test_browser import dump_dom, probe, with_probe
from tests.test_render_support import chromium_available, section, text_of

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not chromium_available(), reason="needs Chromium at /usr/bin/chromium"),
]

WHERE = (
    "import json, auditor, templates, checks\n"
    "from auditor.render.html_render import TEMPLATES\n"
    "print(json.dumps({'auditor': auditor.__file__, 'templates': templates.__file__,"
    " 'checks': checks.__file__, 'lookup': str(TEMPLATES)}))"
)


def _env() -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONNOUSERSITE"] = "1"
    return env


def _fresh_venv(path: Path) -> Path:
    """A virtual environment without system site packages whose only way to the project's
    dependencies is a path line to this interpreter's site-packages."""
    venv.EnvBuilder(with_pip=False, system_site_packages=False, clear=True).create(path)
    python = path / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(purelib) / "project-dependencies.pth").write_text("\n".join(sorted(deps)) + "\n")
    return python


def _pip(*args: str, cwd: Path) -> None:
    """This interpreter's pip, installing into another environment's site-packages."""
    p = subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr[-3000:]


def _render(python: Path, cwd: Path, out: Path) -> dict:
    """The sample fleet's HTML report from ``python`` run in ``cwd``; where its modules came from."""
    where = subprocess.run(
        [python, "-c", WHERE], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=120
    )
    assert where.returncode == 0, where.stderr[-3000:]
    p = subprocess.run(
        [python, "-m", "auditor.cli.main", "check", str(SAMPLE_FLEET), "--engine", "duckdb", "-o", str(out)],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    # exit 1: the sample fleet has findings at error or above (README)
    assert p.returncode == 1, p.stderr[-3000:]
    assert out.stat().st_size > 10_000
    return json.loads(where.stdout)


def _check_in_chromium(page: str, tmp_path: Path, name: str) -> None:
    dom = dump_dom(with_probe(page), tmp_path, name)
    seen = probe(dom)
    assert seen["js"] == "ready" and seen["pwned"] == "0" and seen["scripts"] == "2"
    assert text_of(section(dom, "headline")).startswith("Failing.")
    assert "payments.orders.v1" in text_of(section(dom, "rule-REP002"))


def _wheel(tmp_path: Path) -> Path:
    dist = tmp_path / "dist"
    # built in pip's isolated build environment, as install.sh's `pip install -e` builds it
    _pip("wheel", "--no-deps", "-w", str(dist), str(ROOT), cwd=tmp_path)
    (wheel,) = dist.glob("kafka_auditor-*.whl")
    return wheel


def test_wheel_ships_the_templates_and_renders_the_report(tmp_path):
    wheel = _wheel(tmp_path)
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    assert {"templates/__init__.py", "templates/report.html.j2", "templates/preflight.html.j2"} <= names
    assert not any(n.startswith("auditor/render/templates/") for n in names)

    python = _fresh_venv(tmp_path / "venv")
    _pip("install", "--no-deps", "--target", _site(python), str(wheel), cwd=tmp_path)
    run = tmp_path / "run"
    run.mkdir()
    where = _render(python, run, run / "report.html")
    venv_root = str((tmp_path / "venv").resolve())
    for module in ("auditor", "templates", "checks"):
        assert where[module].startswith(venv_root), where
    assert where["lookup"].startswith(venv_root)
    _check_in_chromium((run / "report.html").read_text(encoding="utf-8"), tmp_path, "wheel")


def test_editable_install_renders_the_report_from_the_checkout(tmp_path):
    python = _fresh_venv(tmp_path / "venv")
    # An editable install of this checkout into the fresh environment only (egg-info is ignored
    # by git, as the machine's own editable install writes it too). --ignore-installed: without
    # it pip uninstalls the running interpreter's own install of the project first, wherever
    # --prefix points, and every later test of the run loses `kafka-audit`.
    before = _installed_here()
    _pip(
        "install",
        "--no-deps",
        "--ignore-installed",
        "--prefix",
        str(tmp_path / "venv"),
        "-e",
        str(ROOT),
        cwd=tmp_path,
    )
    run = tmp_path / "run"
    run.mkdir()
    where = _render(python, run, run / "report.html")
    assert Path(where["templates"]).parent == ROOT / "templates", where
    assert Path(where["auditor"]).parent == ROOT / "auditor", where
    assert Path(where["lookup"]) == ROOT / "templates"
    _check_in_chromium((run / "report.html").read_text(encoding="utf-8"), tmp_path, "editable")
    assert _installed_here() == before, "the machine's own install of kafka-auditor was changed"


def test_source_checkout_renders_the_report(tmp_path):
    # Nothing of the project installed: `python -m` in the clone finds auditor/, checks/ and
    # templates/ through the current directory, as the tests' own subprocesses do.
    python = _fresh_venv(tmp_path / "venv")
    out = tmp_path / "report.html"
    where = _render(python, ROOT, out)
    assert Path(where["templates"]).parent == ROOT / "templates", where
    assert Path(where["lookup"]) == ROOT / "templates"
    _check_in_chromium(out.read_text(encoding="utf-8"), tmp_path, "checkout")


def _site(python: Path) -> str:
    return subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def _installed_here() -> str | None:
    """Where this interpreter's own kafka-auditor is installed from (None: not installed)."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("kafka-auditor")
    except PackageNotFoundError:
        return None
    return str(dist._path)  # noqa: SLF001 (the dist-info directory: changes on a reinstall)
