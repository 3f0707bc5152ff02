"""Every command in the README's ```bash blocks works as written.

Each command is run with bash in a scratch directory holding the sample configs, in README
order (the week-over-week pair depends on it). A command that needs something only a user
has (their brokers, AWS, a Spark cluster, a snapshot collected from their cluster) is listed
in EXTERNAL with the reason, and the test fails on a command that is neither run nor listed:
a new README example cannot go unchecked by accident.

Commands on Spark are run here with `--engine duckdb` appended (the last --engine wins): the
same command on Spark is proven by tests/test_cli.py's Spark test and tests/test_fleet.py's
engine conformance, which keeps this test out of the Spark worker (the suite's critical path).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"

pytestmark = pytest.mark.slow

# substring of a command -> why it cannot run here
EXTERNAL = {
    "python3 -m pytest": "the test command itself",
    ".internal": "a user's brokers or ZooKeeper",
    "arn:aws:": "the AWS MSK API",
    "--msk-region": "the AWS MSK API",
    "--inventory fleet.yaml": "a user's inventory of real clusters",
    "snapshots/": "a snapshot collected from a user's cluster by the command before it",
    "spark-submit --master spark://": "a Spark cluster (tests/test_fleet.py submits to a real standalone one)",
    "kafka-audit mcp": "a server that runs until stopped (tests/test_mcp_transports.py starts it over stdio and HTTP)",
}
SPARK_COMMANDS = ("kafka-audit fleet", "--engine spark")


def readme_commands() -> list[str]:
    """Commands of the ```bash blocks, continuation lines joined, comments kept (bash ignores them)."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                commands.append(" ".join(line.split()))
    return commands


INSTALL = "./install.sh && "  # the quick start: .ci/run has installed the machine; the job part runs here


def external_reason(command: str) -> str | None:
    return next((why for key, why in EXTERNAL.items() if key in command), None)


def on_duckdb(command: str) -> str:
    """The command with --engine duckdb appended when it would run on Spark (fleet's default)."""
    command = command.removeprefix(INSTALL)
    if "kafka-audit fleet" in command and "--engine duckdb" not in command or "--engine spark" in command:
        code, _, comment = command.partition(" #")
        return f"{code} --engine duckdb" + (f" #{comment}" if comment else "")
    return command


def test_every_readme_command_is_run_or_explained():
    commands = readme_commands()
    assert len(commands) >= 20, "README code blocks not found"
    runnable = [c for c in commands if not external_reason(c)]
    assert all(c.removeprefix(INSTALL).startswith(("kafka-audit ", "HADOOP_VERSION=")) for c in runnable), (
        runnable
    )
    assert any(external_reason(c) for c in commands)  # the table is used, not dead


def test_readme_commands_work_as_written(tmp_path):
    (tmp_path / "sample_configs").symlink_to(ROOT / "sample_configs")
    (tmp_path / "docs").mkdir()  # `rules list --format markdown > docs/rules.md` writes here, not in the repo
    env = {
        **os.environ,
        "CI": "1",
        "NO_COLOR": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    ran = []
    for command in readme_commands():
        if external_reason(command):
            continue
        started = time.monotonic()
        done = subprocess.run(
            ["bash", "-c", on_duckdb(command)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        print(f"{time.monotonic() - started:5.1f} s  {command[:100]}")
        # 0 or 1 (findings at --fail-on): what the README promises for the sample configs; never a
        # usage error, an incomplete audit or a traceback
        assert done.returncode in (0, 1), f"{command}: exit {done.returncode}\n{done.stderr[-2000:]}"
        assert "Traceback" not in done.stderr and "internal error" not in done.stderr, command
        ran.append((command, done))
    by_command = {c: d for c, d in ran}

    second_week = next(c for c in by_command if "--previous weekly/" in c)
    assert "since 2026-11-15:" in by_command[second_week].stdout  # the earlier run was found
    assert (tmp_path / "weekly" / "run_date=2026-11-15").is_dir() and (
        tmp_path / "weekly" / "run_date=2026-11-22"
    ).is_dir()

    assert (tmp_path / "docs" / "rules.md").read_text() == (ROOT / "docs" / "rules.md").read_text()
    assert (tmp_path / "payments-fix.sh").read_text().count("kafka-configs.sh") == 4
    assert (tmp_path / "fleet-report.html").stat().st_size > 10_000

    hadoop = next(d for c, d in ran if c.startswith("HADOOP_VERSION="))
    assert hadoop.returncode == 0
    import pyspark

    jars = {p.name for p in (Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar")}
    version = subprocess.run(
        [sys.executable, "-c", "import auditor.cli.spark_submit as m; print(m.hadoop_version())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert jars == {f"hadoop-client-api-{version}.jar"}
