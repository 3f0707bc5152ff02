"""Start-up cost of the commands CI runs, as ratios to `kafka-audit --version` in the same run.

    python bench/bench_startup.py [--runs 7] [--files 200] [--partitions 50000]

Issue 20's target 3: `lint` of a 200-file change within 4x and `check` of one 50,000-partition
cluster within 8x of `kafka-audit --version` (the interpreter and the console script alone),
measured in the same run, alternating, with a warm plan cache (what every run after the first
of an installed version sees). A command that imports what it does not use shows up here.
Prints a Markdown table: min and median per command and the median ratio to --version.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_check import ensure_cluster  # noqa: E402
from bench_fleet import load, machine, run_measured, versions  # noqa: E402
from bench_lint import generate  # noqa: E402

TARGETS = {"lint": 4.0, "check": 8.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--partitions", type=int, default=50_000)
    a = ap.parse_args()
    exe = shutil.which("kafka-audit") or "kafka-audit"
    snap = ensure_cluster(a.partitions)
    print(
        f"<!-- {machine()}; {versions()}; start {time.strftime('%H:%M', time.gmtime())} UTC, {load()} -->",
        file=sys.stderr,
    )
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as work:
        repo = Path(work) / "repo"
        generate(repo, a.files)
        env = dict(os.environ, KAFKA_AUDIT_PLAN_CACHE=str(Path(work) / "plans"), NO_COLOR="1")
        commands = {
            "version": [exe, "--version"],
            "lint": [exe, "lint", str(repo), "--fail-on", "never"],
            "check": [exe, "check", str(snap), "-f", "json", "--fail-on", "never"],
        }
        for cmd in commands.values():  # warm the plan cache and the OS page cache
            run_measured(cmd, env=env)
        walls: dict[str, list[float]] = {k: [] for k in commands}
        for i in range(a.runs):
            for name, cmd in commands.items():
                r = run_measured(cmd, env=env)
                if r["rc"] not in (0, 1):
                    raise SystemExit(f"{name}: exit {r['rc']}")
                walls[name].append(r["wall"])
            print(
                f"run {i + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in walls.items()) + f", {load()}",
                file=sys.stderr,
            )
    base = statistics.median(walls["version"])
    print("| command (warm plan cache) | runs | min | median | median / --version | target |")
    print("|---|---:|---:|---:|---:|---:|")
    labels = {
        "version": "`kafka-audit --version`",
        "lint": f"`lint` of {a.files} files",
        "check": f"`check` of one {a.partitions:,}-partition cluster",
    }
    for name, w in walls.items():
        ratio = statistics.median(w) / base
        target = f"{TARGETS[name]:.0f}x" if name in TARGETS else ""
        print(
            f"| {labels[name]} | {len(w)} | {min(w):.2f} s | {statistics.median(w):.2f} s | {ratio:.1f}x | {target} |"
        )
    print(f"\n{machine()}; {versions()}; end {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, {load()}")


if __name__ == "__main__":
    main()
