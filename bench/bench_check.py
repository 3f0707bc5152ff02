"""Single-cluster `kafka-audit check SNAPSHOT` end to end: plan cache warm, first run, nothing compiled.

    python bench/bench_check.py --runs 5 [--partitions 50000] [--engine duckdb]

Generates one synthetic cluster (bench/fleetgen.py: 5,000 topics x 10 partitions) under
bench/data/ if missing, then times the console script from process start to exit:
  first: KAFKA_AUDIT_PLAN_CACHE pointed at a new empty directory each run, with the bundled plans
         (the first run after an install, e.g. every CI run on a fresh runner),
  cold: the same without the bundled plans (KAFKA_AUDIT_PLAN_BUNDLE=off: every plan compiled),
  warm: a plan cache filled by one untimed run first (what every later run of the same version sees),
  floor: `kafka-audit rules list` (imports, no engine).
Prints a Markdown table with min / median and peak RSS of the process.
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

from bench_fleet import load, machine, run_measured, versions  # noqa: E402


def ensure_cluster(partitions: int) -> Path:
    topics = partitions // 10
    root = HERE / "data" / f"single-{partitions // 1000}k"
    snap = root / "dt=2026-11-22" / "cluster=c0000"
    if not (snap / "manifest.json").exists():
        import fleetgen

        shutil.rmtree(root, ignore_errors=True)
        fleetgen.generate(root, 1, topics, 10, seed=1)
    return snap


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--partitions", type=int, default=50_000)
    ap.add_argument("--engine", default="duckdb")
    a = ap.parse_args()
    snap = ensure_cluster(a.partitions)
    exe = shutil.which("kafka-audit") or "kafka-audit"
    cmd = [exe, "check", str(snap), "--engine", a.engine, "-f", "json", "--fail-on", "never"]
    print(
        f"<!-- {machine()}; {versions()}; start {time.strftime('%H:%M', time.gmtime())} UTC, {load()} -->",
        file=sys.stderr,
    )
    results: dict[str, list[dict]] = {"first": [], "cold": [], "warm": [], "floor": []}
    with tempfile.TemporaryDirectory(prefix="bench-plans-warm-") as warm_dir:
        warm_env = dict(os.environ, KAFKA_AUDIT_PLAN_CACHE=warm_dir)
        run_measured(cmd, env=warm_env)  # fills the warm cache
        for i in range(a.runs):
            for kind, bundle in (("first", "on"), ("cold", "off")):
                with tempfile.TemporaryDirectory(prefix="bench-plans-empty-") as empty_dir:
                    env = dict(os.environ, KAFKA_AUDIT_PLAN_CACHE=empty_dir, KAFKA_AUDIT_PLAN_BUNDLE=bundle)
                    results[kind].append(run_measured(cmd, env=env))
            results["warm"].append(run_measured(cmd, env=warm_env))
            results["floor"].append(run_measured([exe, "rules", "list"], env=warm_env))
            print(
                f"run {i + 1}: "
                + ", ".join(f"{k} {v[-1]['wall']:.2f} s (exit {v[-1]['rc']})" for k, v in results.items())
                + f", {load()}",
                file=sys.stderr,
            )
    print(
        f"| `kafka-audit check` {a.partitions:,}-partition snapshot ({a.engine}) | runs | min | median | peak RSS |"
    )
    print("|---|---:|---:|---:|---:|")
    labels = {
        "first": "first run after an install (empty plan cache, bundled plans)",
        "cold": "no bundled plans (empty plan cache, KAFKA_AUDIT_PLAN_BUNDLE=off: every plan compiled)",
        "warm": "warm plan cache",
        "floor": "floor: `kafka-audit rules list`",
    }
    for k, rs in results.items():
        w = [r["wall"] for r in rs]
        print(
            f"| {labels[k]} | {len(rs)} | {min(w):.2f} s | {statistics.median(w):.2f} s | "
            f"{max(r['py_mib'] for r in rs):,.0f} MiB |"
        )
    print(f"\n{machine()}; {versions()}; end {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, {load()}")


if __name__ == "__main__":
    main()
