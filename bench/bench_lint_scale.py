"""Benchmark (issue 47): `kafka-audit lint` as the number of topics grows, in one file and in 1,000.

    python bench/bench_lint_scale.py [--topics 1000,10000,100000] [--layouts one,many] [--code DIR]

Every topic has 3 replicas and no min.insync.replicas of its own: each inherits Kafka's default
1, what made REP004 one finding per topic naming every topic (a report quadratic in the topics:
1,000 topics 14-30 MB of JSON, 4,000 250 MB, 25,000 killed at 23 GB). Per size and layout (one
file of N topics, or 1,000 files of N/1,000), one run of the console script as CI runs it
(`lint DIR --format json -o report.json`, the plan cache warmed first), measured from process
start to exit; peak memory is the lint process's own maximum resident set size
(resource.getrusage(RUSAGE_CHILDREN) in a wrapper process of its own). ``--code DIR`` measures
another checkout's code (PYTHONPATH), e.g. a worktree of main before the change. Prints a
Markdown table: wall time, peak RSS, report bytes and bytes per topic, findings.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = 1000

# Runs the command given as JSON in argv[1]; prints its wall time and peak RSS (KiB, Linux).
WRAPPER = (
    "import json, resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(json.loads(sys.argv[1]), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)\n"
    "print(json.dumps({'seconds': time.perf_counter() - t, 'code': p.returncode,\n"
    "    'max_rss_kib': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, 'stderr': p.stderr[-300:]}))\n"
)


def topic(i: int) -> str:
    return f"- name: team{i // 100:04d}.stream{i % 100:02d}\n  partitions: 6\n  replication_factor: 3\n"


def generate(directory: Path, topics: int, layout: str) -> None:
    directory.mkdir(parents=True)
    if layout == "one":
        (directory / "topics.yaml").write_text("".join(topic(i) for i in range(topics)))
        return
    per_file = max(1, topics // FILES)
    for f in range(FILES):
        start = f * per_file
        (directory / f"topics-{f:04d}.yaml").write_text(
            "".join(topic(i) for i in range(start, start + per_file))
        )


def measure(directory: Path, code: Path) -> dict:
    report = directory.parent / f"{directory.name}.json"
    cmd = [
        sys.executable,
        "-m",
        "auditor.cli.main",
        "lint",
        str(directory),
        "--format",
        "json",
        "-o",
        str(report),
    ]
    env = {**os.environ, "PYTHONPATH": str(code), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-c", WRAPPER, json.dumps(cmd)], capture_output=True, text=True, env=env, cwd=code
    )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if out["code"] not in (0, 1):
        raise RuntimeError(f"lint exited {out['code']}: {out['stderr']}")
    data = report.read_bytes()
    out["report_bytes"] = len(data)
    out["findings"] = len(json.loads(data)["findings"])
    report.unlink()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", default="1000,10000,100000")
    ap.add_argument("--layouts", default="one,many")
    ap.add_argument("--code", type=Path, default=ROOT, help="the checkout whose code runs (PYTHONPATH)")
    args = ap.parse_args()
    sizes = [int(x) for x in args.topics.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-lint-scale-") as work:
        warm = Path(work) / "warm"
        generate(warm, 25, "one")  # the plans (the locating query's too), compiled once
        measure(warm, args.code)
        print(f"code: {args.code}; {time.strftime('%Y-%m-%d %H:%M')}; load {os.getloadavg()[0]:.2f}")
        print("| topics | layout | wall s | peak RSS MiB | report bytes | bytes/topic | findings |")
        print("|---:|---|---:|---:|---:|---:|---:|")
        for n in sizes:
            for layout in args.layouts.split(","):
                d = Path(work) / f"{layout}-{n}"
                generate(d, n, layout)
                m = measure(d, args.code)
                where = "1 file" if layout == "one" else f"{FILES} files"
                print(
                    f"| {n:,} | {where} | {m['seconds']:.1f} | {m['max_rss_kib'] / 1024:.0f} | "
                    f"{m['report_bytes']:,} | {m['report_bytes'] / n:.1f} | {m['findings']} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
