"""The README's first command against Spark's own floor, in the same run (issue 20, target 1).

    python bench/bench_small_fleet.py --runs 5 [--code before=/tmp/before]

Times, from process start to exit, interleaved run by run so that both see the same load:
  trivial: a plain pyspark session on local[2] running one tiny query (`SELECT 1`), the floor
           of anything that uses Spark on this machine;
  fleet:   `kafka-audit fleet sample_configs/fleet --out DIR` on local[2] (the README's first
           command after the install), with an empty plan cache each run: the first run after
           an install, as a new user sees it (the bundled plans, no compiled plan of its own);
  fleet warm: the same with a plan cache filled by an untimed run first.
With --code LABEL=DIR the fleet runs are repeated with another revision's tree, interleaved;
--env LABEL:KEY=VALUE gives that label's runs an environment variable (a trivial job's label
too: --trivial LABEL adds one more trivial job, e.g. with a class-data-sharing archive), and
--no-warm leaves the warm-cache runs out.
Prints a Markdown table (min / median) and the ratios of the medians to the trivial job's.
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
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_fleet import load, machine, run_measured, versions  # noqa: E402

TRIVIAL = (
    "from pyspark.sql import SparkSession\n"
    "s = SparkSession.builder.master('local[2]').config('spark.ui.enabled', 'false').getOrCreate()\n"
    "assert s.sql('SELECT 1 AS x').collect()[0].x == 1\n"
)


def fleet_cmd(out: str, code: str | None = None) -> list[str]:
    """The installed console script, or (``code``: another revision's tree) its CLI module."""
    exe = (
        [shutil.which("kafka-audit") or "kafka-audit"]
        if code is None
        else [sys.executable, "-m", "auditor.cli.main"]
    )
    return [
        *exe,
        "fleet",
        str(ROOT / "sample_configs" / "fleet"),
        "--out",
        out,
        "--master",
        "local[2]",
        "--fail-on",
        "never",
        "-f",
        "json",
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument(
        "--code",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="also run another revision's code from DIR (its plan bundle built), as `python -m "
        "auditor.cli.main` from inside it, interleaved with the installed one",
    )
    ap.add_argument("--env", action="append", default=[], metavar="LABEL:KEY=VALUE")
    ap.add_argument("--trivial", action="append", default=[], metavar="LABEL")
    ap.add_argument("--no-warm", action="store_true")
    a = ap.parse_args()
    trees = [("", None)] + [tuple(c.split("=", 1)) for c in a.code]
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    extra: dict[str, dict[str, str]] = {}
    for item in a.env:
        label, assignment = item.split(":", 1)
        key, value = assignment.split("=", 1)
        extra.setdefault(label, {})[key] = value
    trivials = [("trivial", "")] + [(f"trivial {t}", t) for t in a.trivial]
    print(
        f"<!-- {machine()}; {versions()}; start {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, "
        f"{load()} -->",
        file=sys.stderr,
    )
    kinds = ("fleet",) if a.no_warm else ("fleet", "fleet warm")
    times: dict[str, list[float]] = {label: [] for label, _t in trivials}
    for tree, _code in trees:
        for kind in kinds:
            times[" ".join(filter(None, (kind, tree)))] = []
    with tempfile.TemporaryDirectory(prefix="bench-small-") as work:
        for tree, code in trees:
            if a.no_warm:
                break
            warm_cache = Path(work) / f"warm-plans-{tree}"
            run_measured(
                fleet_cmd(str(Path(work) / f"w-{tree}"), code),
                env={**env, **extra.get(tree, {}), "KAFKA_AUDIT_PLAN_CACHE": str(warm_cache)},
                cwd=code,
            )
        for i in range(a.runs):
            for label, tree in trivials:
                r = run_measured([sys.executable, "-c", TRIVIAL], env={**env, **extra.get(tree, {})})
                assert r["rc"] == 0, r["stderr"][-2000:]
                times[label].append(r["wall"])
            for tree, code in trees:
                for kind, cache in (
                    ("fleet", Path(work) / f"cold-{tree}-{i}"),
                    ("fleet warm", Path(work) / f"warm-plans-{tree}"),
                )[: len(kinds)]:
                    label = " ".join(filter(None, (kind, tree)))
                    out = Path(work) / f"out-{label.replace(' ', '-')}-{i}"
                    r = run_measured(
                        fleet_cmd(str(out), code),
                        env={**env, **extra.get(tree, {}), "KAFKA_AUDIT_PLAN_CACHE": str(cache)},
                        cwd=code,
                    )
                    assert r["rc"] == 0, r["stderr"][-2000:]
                    times[label].append(r["wall"])
            print(
                f"run {i + 1}: " + ", ".join(f"{k} {v[-1]:.1f} s" for k, v in times.items()) + f", {load()}",
                file=sys.stderr,
            )
    floor = statistics.median(times["trivial"])
    print("| run | runs | wall min / median | median / trivial |")
    print("|---|---:|---:|---:|")
    for label, xs in times.items():
        print(
            f"| {label} | {len(xs)} | {min(xs):.1f} s / {statistics.median(xs):.1f} s | "
            f"{statistics.median(xs) / floor:.2f}x |"
        )
    print(f"\n{machine()}; {versions()}; end {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, {load()}")


if __name__ == "__main__":
    main()
