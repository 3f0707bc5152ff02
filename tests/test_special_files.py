"""Special files are refused, quickly and by name: a FIFO (which would block a read forever)
or a device such as /dev/zero (which never ends), also behind a symlink, given as a broker
config, a lint input, a snapshot's manifest or table, a baseline or a config file (issue 16,
class 5). Only regular files are read, with a size limit."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from auditor import safe_io
from tests.conftest import ROOT, cluster_dir

pytestmark = pytest.mark.skipif(
    not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="needs FIFOs and /dev/zero"
)


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "300"}
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *args], capture_output=True, timeout=30, env=env, cwd=ROOT
    )


def _special(tmp_path: Path, kind: str, name: str) -> Path:
    path = tmp_path / name
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    return path


def _refused(proc: subprocess.CompletedProcess, path: Path, kind: str) -> str:
    out = proc.stdout.decode() + proc.stderr.decode()
    assert str(path) in out, out
    assert "refused" in out, out
    assert ("a FIFO" if kind == "fifo" else "a character device") in out, out
    return out


KINDS = ["fifo", "dev-zero"]


# --- the helper ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_helper_refuses_special_files(tmp_path, kind):
    path = _special(tmp_path, kind, "x.json")
    with pytest.raises(safe_io.FileRefused) as e:
        safe_io.read_text(path)
    assert str(e.value).startswith(f"{path}: not a regular file (")
    assert str(e.value).endswith("): refused")


def test_helper_size_limit(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b"x" * 101)
    with pytest.raises(safe_io.FileRefused, match=r"big.json: larger than 100 bytes: refused"):
        safe_io.read_bytes(path, limit=100)
    assert safe_io.read_bytes(path, limit=101) == b"x" * 101
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(b"a\r\nb\n")
    assert safe_io.read_text(crlf) == "a\nb\n"  # as Path.read_text reads it


def test_helper_refuses_a_directory(tmp_path):
    with pytest.raises(safe_io.FileRefused, match="a directory"):
        safe_io.read_text(tmp_path)


# --- the commands ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_broker_config(tmp_path, kind):
    path = _special(tmp_path, kind, "server.properties")
    proc = _run("collect", "--broker-config", str(path), "--cluster-name", "x", "-o", str(tmp_path / "snap"))
    _refused(proc, path, kind)
    assert proc.returncode in (2, 3)


@pytest.mark.parametrize("suffix", [".properties", ".yaml"])
@pytest.mark.parametrize("kind", KINDS)
def test_lint_input(tmp_path, kind, suffix):
    """Refused, never opened for reading: a warning naming it and the run goes on (nothing else
    was given: exit 3, never green); --strict makes it the error, exit 2 (issue 49)."""
    path = _special(tmp_path, kind, f"input{suffix}")
    proc = _run("lint", str(path))
    _refused(proc, path, kind)
    assert proc.returncode == 3
    proc = _run("lint", "--strict", str(path))
    _refused(proc, path, kind)
    assert proc.returncode == 2


@pytest.mark.parametrize("kind", KINDS)
def test_lint_baseline(tmp_path, kind):
    good = tmp_path / "topics.yaml"
    good.write_text("topics:\n  - name: a\n    partitions: 1\n    replication_factor: 3\n", encoding="utf-8")
    path = _special(tmp_path, kind, "baseline.json")
    proc = _run("lint", str(good), "--baseline", str(path))
    _refused(proc, path, kind)
    assert proc.returncode == 2


@pytest.mark.parametrize("kind", KINDS)
def test_snapshot_manifest(tmp_path, kind):
    snap = tmp_path / "snap"
    shutil.copytree(cluster_dir("payments-msk"), snap)
    (snap / "manifest.json").unlink()
    path = _special(snap, kind, "manifest.json")
    proc = _run("check", str(snap), "--engine", "duckdb")
    _refused(proc, path, kind)
    assert proc.returncode == 2


@pytest.mark.parametrize("kind", KINDS)
def test_snapshot_table(tmp_path, kind):
    snap = tmp_path / "snap"
    shutil.copytree(cluster_dir("payments-msk"), snap)
    (snap / "topics.jsonl").unlink()
    path = _special(snap, kind, "topics.jsonl")
    proc = _run("check", str(snap), "--engine", "duckdb")
    _refused(proc, path, kind)
    assert proc.returncode == 2


@pytest.mark.parametrize("kind", KINDS)
def test_config_file(tmp_path, kind):
    path = _special(tmp_path, kind, "kafka-audit.toml")
    proc = _run("check", str(cluster_dir("payments-msk")), "--engine", "duckdb", "--config", str(path))
    _refused(proc, path, kind)
    assert proc.returncode == 2
