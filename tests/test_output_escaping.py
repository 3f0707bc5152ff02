"""Names from snapshots and files never reach a terminal or a PR comment live: control
characters (ESC, BEL, ...) are neutralised in every text output (check, lint, preflight,
fleet), ``@org/team`` mentions are escaped in Markdown, and the Markdown comment stays within
GitHub's 65536-character limit (issue 16, class 14)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.escape import neutralise, no_mentions
from auditor.findings import AuditResult, Finding
from auditor.render import markdown_render
from auditor.snapshot.io import Manifest, read_manifest, write_snapshot
from tests.conftest import ROOT, cluster_dir

OSC52 = "\x1b]52;c;ZXZpbA==\x07"
CSI = "\x1b[31m"
MENTION = "@org/team"
EVIL = f"{OSC52}{CSI}{MENTION}-"
SOURCE = "ads-zk-legacy"
RAW_BYTES = (b"\x1b", b"\x07", b"\x9b", b"\x9d")


def _json_inner(text: str) -> str:
    return json.dumps(text)[1:-1]


def _evil_snapshot(directory: Path) -> Path:
    """The ads-zk-legacy sample with the attack in its cluster name, every non-internal topic
    name and every broker host."""
    src = cluster_dir(SOURCE)
    manifest = read_manifest(src)
    topics = [
        json.loads(line)["topic"] for line in (src / "topics.jsonl").read_text().splitlines() if line.strip()
    ]
    renames = {f'"{t}"': f'"{_json_inner(EVIL + t)}"' for t in topics if not t.startswith("_")}
    tables = {}
    for name, filename in manifest.tables.items():
        rows = []
        for line in (src / filename).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            for old, new in renames.items():
                line = line.replace(old, new)
            line = line.replace("ads-kafka-", _json_inner(EVIL) + "ads-kafka-")
            row = json.loads(line)
            row.pop("cluster_id", None)
            rows.append(row)
        tables[name] = rows
    cluster = dict(manifest.cluster, name=f"{EVIL}ads")
    evil = Manifest(
        cluster=cluster,
        collected_at=manifest.collected_at,
        sources=manifest.sources,
        errors=[{"source": "admin", "target": f"{EVIL}host:9092", "message": f"{EVIL} failed"}],
        tables={},
    )
    return write_snapshot(directory, evil, tables, fmt="jsonl")


def _run(*args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *args],
        capture_output=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )


def _assert_clean(out: bytes) -> None:
    for b in RAW_BYTES:
        assert b not in out, f"raw control byte {b!r} in the output"
    text = out.decode("utf-8")
    assert not any(ord(ch) < 0x20 and ch != "\n" or 0x7F <= ord(ch) <= 0x9F for ch in text)


@pytest.fixture(scope="module")
def evil_snapshot(tmp_path_factory) -> Path:
    return _evil_snapshot(tmp_path_factory.mktemp("evil") / "snap")


# --- the one function ------------------------------------------------------------------------


def test_neutralise_escapes_every_control_character():
    assert neutralise(OSC52) == "\\x1b]52;c;ZXZpbA==\\x07"
    assert neutralise(CSI) == "\\x1b[31m"
    assert neutralise("a\rb\bc\nd\te\x00\x7f\x9b\x9d") == "a\\x0db\\x08c\\x0ad\\x09e\\x00\\x7f\\x9b\\x9d"
    assert neutralise("abc\u202eevil") == "abc\\u202eevil"
    assert (
        neutralise("caf\u00e9 \u00e0 \U0001f534 topic.name-1") == "caf\u00e9 \u00e0 \U0001f534 topic.name-1"
    )
    assert neutralise(None) == ""
    assert (
        no_mentions("cc @org/team and @user, mail a@b")
        == "cc @&#8203;org/team and @&#8203;user, mail a@&#8203;b"
    )


# --- check -----------------------------------------------------------------------------------


def test_check_text_has_no_control_bytes(evil_snapshot):
    proc = _run("check", str(evil_snapshot), "--engine", "duckdb")
    assert proc.returncode in (0, 1, 3), proc.stderr.decode()
    _assert_clean(proc.stdout)
    text = proc.stdout.decode()
    assert "\\x1b]52;c;ZXZpbA==\\x07\\x1b[31m@org/team-ads" in text  # the cluster name, visible
    assert "\\x1b]52;c;ZXZpbA==\\x07\\x1b[31m@org/team-ads." in text  # a topic name, visible
    assert "host:9092" in text  # the incomplete source's target


@pytest.mark.slow
def test_check_markdown_has_no_live_mention_nor_control_bytes(evil_snapshot):
    proc = _run("check", str(evil_snapshot), "--engine", "duckdb", "--format", "markdown")
    assert proc.returncode in (0, 1, 3), proc.stderr.decode()
    _assert_clean(proc.stdout)
    text = proc.stdout.decode()
    assert "@org/team" not in text and "@&#8203;org/team" in text


# --- markdown size cap -----------------------------------------------------------------------


def _finding(i: int, cluster: str, msg_len: int = 200) -> Finding:
    return Finding(
        rule=f"T{i % 400:03d}",
        name="many-rules",
        severity="warning",
        cluster=cluster,
        cluster_id=cluster,
        resource_type="topic",
        resource_name=f"topic-{i}",
        message="x" * msg_len,
        evidence={},
        fingerprint=f"fp{i}",
    )


def _result(findings, clusters, incomplete=(), notes=()):
    return AuditResult(
        clusters=[{"id": c, "name": c} for c in clusters],
        findings=list(findings),
        incomplete=list(incomplete),
        engine="duckdb",
        notes=list(notes),
    )


@pytest.mark.parametrize(
    "shape", ["many-rules", "many-clusters", "clean-clusters", "huge-incomplete", "huge-notes"]
)
def test_markdown_comment_is_capped_whole(shape):
    if shape == "many-rules":  # 400 rules: the <details> blocks alone exceed the limit
        result = _result([_finding(i, f"c{i % 7}") for i in range(4000)], [f"c{i}" for i in range(7)])
    elif shape == "many-clusters":  # the summary table alone exceeds it
        clusters = [f"cluster-{i:05d}-{'y' * 40}" for i in range(3000)]
        result = _result([_finding(i, c, 10) for i, c in enumerate(clusters)], clusters)
    elif shape == "clean-clusters":  # clean-cluster names 200 KB long
        clusters = [("z" * 7000) + str(i) for i in range(40)]
        result = _result([], clusters)
    elif shape == "huge-incomplete":
        result = _result(
            [],
            ["a"],
            incomplete=[
                {
                    "cluster": "a",
                    "source": "admin",
                    "target": "t",
                    "message": "m" * 100 + "\n" + ("@org/team " * 20000),
                }
            ],
        )
    else:
        result = _result([_finding(1, "a")], ["a"], notes=["n" * 30000, "o" * 30000, "p" * 30000])
    out = markdown_render.render(result)
    assert len(out) <= 65536
    assert len(out.encode("utf-16-le")) // 2 <= 65536
    assert out.rstrip("\n").endswith(markdown_render.TRUNCATION_LINE)
    assert out.count("<details>") == out.count("</details>")
    assert "@org/team" not in out


def test_markdown_under_the_limit_is_not_truncated():
    out = markdown_render.render(_result([_finding(i, "a") for i in range(5)], ["a", "b"]))
    assert markdown_render.TRUNCATION_LINE not in out
    assert "No findings: b." in out


# --- lint ------------------------------------------------------------------------------------


def test_lint_text_has_no_control_bytes(tmp_path):
    name = json.dumps(f"{EVIL}orders")  # a YAML double-quoted scalar takes JSON escapes
    (tmp_path / "topics.yaml").write_text(
        f"topics:\n  - name: {name}\n    partitions: 1\n    replication_factor: 1\n"
        f"    config:\n      min.insync.replicas: 2\n",
        encoding="utf-8",
    )
    proc = _run("lint", str(tmp_path / "topics.yaml"))
    assert proc.returncode in (0, 1), proc.stderr.decode()
    _assert_clean(proc.stdout)
    assert "\\x1b]52;c;ZXZpbA==\\x07\\x1b[31m@org/team-orders" in proc.stdout.decode()


def test_lint_empty_directory_is_named(tmp_path):
    empty = tmp_path / "nothing-here"
    empty.mkdir()
    proc = _run("lint", str(empty))
    assert proc.returncode == 2
    assert "no files to lint" in proc.stderr.decode() and str(empty) in proc.stderr.decode()


# --- preflight and fleet ---------------------------------------------------------------------


def test_preflight_text_has_no_control_bytes(evil_snapshot):
    proc = _run("preflight", str(evil_snapshot))
    assert proc.returncode in (0, 1, 3), proc.stderr.decode()
    _assert_clean(proc.stdout)
    assert "\\x1b]52;c;ZXZpbA==\\x07" in proc.stdout.decode()


def test_fleet_text_has_no_control_bytes(tmp_path):
    root = tmp_path / "fleet"
    _evil_snapshot(root / "dt=2026-11-22" / "cluster=x")
    proc = _run("fleet", str(root), "--engine", "duckdb")
    assert proc.returncode in (0, 1, 3), proc.stderr.decode()
    _assert_clean(proc.stdout)
    assert "\\x1b]52;c;" in proc.stdout.decode()
