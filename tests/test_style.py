"""The tree stays formatted by ruff format and clean under ruff check (pyproject's settings)."""

from __future__ import annotations

import shutil
import subprocess
import sys

from tests.conftest import ROOT

PATHS = ["auditor", "checks", "tests", "tools", "bench", "sample_configs"]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("ruff") or "ruff"
    return subprocess.run([exe, *args, *PATHS], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_ruff_format_leaves_nothing_to_change():
    done = _ruff("format", "--check")
    assert done.returncode == 0, f"run `ruff format {' '.join(PATHS)}`:\n{done.stdout}{done.stderr}"


def test_ruff_check_is_clean():
    done = _ruff("check")
    assert done.returncode == 0, done.stdout + done.stderr


if __name__ == "__main__":  # pragma: no cover
    sys.exit(subprocess.call(["ruff", "format", *PATHS], cwd=ROOT))
