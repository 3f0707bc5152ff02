"""Start-up cost of the commands CI runs, as ratios to `kafka-audit --version` in the same run.

    python bench/bench_startup.py [--runs 7] [--files 200] [--partitions 50000] [--code start=/tmp/start]

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
    ap.add_argument(
        "--code",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="also run another revision's code from DIR (`git worktree add /tmp/old REV`, its plan "
        "bundle built), as `python -m auditor.cli.main` from inside it, interleaved with the installed one; "
        "its ratios are to its own --version run the same way",
    )
    a = ap.parse_args()
    exe = shutil.which("kafka-audit") or "kafka-audit"
    snap = ensure_cluster(a.partitions)
    print(
        f"<!-- {machine()}; {versions()}; start {time.strftime('%H:%M', time.gmtime())} UTC, {load()} -->",
        file=sys.stderr,
    )
    trees = [("", None)] + [tuple(c.split("=", 1)) for c in a.code]
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as work:
        repo = Path(work) / "repo"
        generate(repo, a.files)
        variants = {}
        for label, code in trees:
            env = dict(os.environ, KAFKA_AUDIT_PLAN_CACHE=str(Path(work) / f"plans-{label}"), NO_COLOR="1")
            cli = [exe] if code is None else [sys.executable, "-m", "auditor.cli.main"]
            for name, args in (
                ("version", ["--version"]),
                ("lint", ["lint", str(repo), "--fail-on", "never"]),
                ("check", ["check", str(snap), "-f", "json", "--fail-on", "never"]),
            ):
                variants[(label, name)] = (cli + args, env, code)
        for cmd, env, code in variants.values():  # warm the plan caches and the OS page cache
            run_measured(cmd, env=env, cwd=code)
        walls: dict[tuple[str, str], list[float]] = {k: [] for k in variants}
        for i in range(a.runs):
            for key, (cmd, env, code) in variants.items():
                r = run_measured(cmd, env=env, cwd=code)
                if r["rc"] not in (0, 1):
                    raise SystemExit(f"{key}: exit {r['rc']}: {r['stderr'][-500:]}")
                walls[key].append(r["wall"])
            print(
                f"run {i + 1}: "
                + ", ".join(f"{' '.join(filter(None, k))} {v[-1]:.3f} s" for k, v in walls.items())
                + f", {load()}",
                file=sys.stderr,
            )
    print("| command (warm plan cache) | runs | min | median | median / --version | target |")
    print("|---|---:|---:|---:|---:|---:|")
    labels = {
        "version": "`kafka-audit --version`",
        "lint": f"`lint` of {a.files} files",
        "check": f"`check` of one {a.partitions:,}-partition cluster",
    }
    for (label, name), w in walls.items():
        ratio = statistics.median(w) / statistics.median(walls[(label, "version")])
        target = f"{TARGETS[name]:.0f}x" if name in TARGETS else ""
        print(
            f"| {labels[name]}{', ' + label if label else ''} | {len(w)} | {min(w):.3f} s | "
            f"{statistics.median(w):.3f} s | {ratio:.1f}x | {target} |"
        )
    print(f"\n{machine()}; {versions()}; end {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, {load()}")


if __name__ == "__main__":
    main()
