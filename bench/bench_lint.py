"""Benchmark: `kafka-audit lint` end to end on a change of 200 files.

    python bench/bench_lint.py [--files 200] [--runs 7] [--against SNAPSHOT_DIR] [--keep DIR]

Generates a realistic repository of Kafka configuration: 20% server.properties files (one
per broker), the rest topic definitions, a third each plain YAML topic lists, Strimzi
KafkaTopic and jikkou KafkaTopic documents (5 topics per file, a few typos, min ISR equal
to replicas, a suppression here and there). Then times the console script as CI runs it:
process start to exit, `runs` times, and prints min and median. The first run also warms
the compiled-plan cache (~/.cache/kafka-auditor/plans), as a CI cache or pre-commit's
second run would.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def generate(root: Path, files: int) -> None:
    brokers = max(1, files // 5)
    for b in range(1, brokers + 1):
        typo = "num.io.thread=32\n" if b % 7 == 0 else ""
        (root / "brokers").mkdir(parents=True, exist_ok=True)
        (root / "brokers" / f"broker-{b}.properties").write_text(
            f"# broker {b}\nbroker.id={b}\nbroker.rack=az-{b % 3}\nlog.dirs=/data/a,/data/b\n"
            f"num.network.threads={6 + b % 3}\nnum.io.threads={12 + b % 5}\nqueued.max.requests=1000\n"
            f"default.replication.factor=3\nmin.insync.replicas=2\nunclean.leader.election.enable=false\n{typo}"
        )
    (root / "topics").mkdir(parents=True, exist_ok=True)
    for i in range(files - brokers):
        kind = i % 3
        topics = [f"team{i}.stream{j}" for j in range(5)]
        if kind == 0:
            body = []
            for j, t in enumerate(topics):
                isr = 3 if j == 0 and i % 4 == 0 else 2
                typo = "    retension.ms: 86400000\n" if j == 1 and i % 5 == 0 else ""
                sup = '# kafka-audit: ignore[REP003] reason="scratch"\n' if j == 4 and i % 6 == 0 else ""
                rf = 1 if sup else 3
                body.append(
                    f"{sup}- name: {t}\n  partitions: {6 + j}\n  replication_factor: {rf}\n  configs:\n"
                    f"    min.insync.replicas: {isr if rf > 1 else 1}\n    retention.ms: 604800000\n{typo}"
                )
            (root / "topics" / f"list-{i}.yaml").write_text("".join(body))
        else:
            api, cfg = (
                ("kafka.strimzi.io/v1beta2", "config")
                if kind == 1
                else ("kafka.jikkou.io/v1beta2", "configs")
            )
            docs = []
            for j, t in enumerate(topics):
                isr = 3 if j == 0 and i % 4 == 1 else 2
                docs.append(
                    f"apiVersion: {api}\nkind: KafkaTopic\nmetadata:\n  name: {t}\n  labels:\n"
                    f"    strimzi.io/cluster: prod\nspec:\n  partitions: {12 + j}\n  replicas: 3\n"
                    f"  {cfg}:\n    min.insync.replicas: {isr}\n    cleanup.policy: delete\n"
                )
            (root / "topics" / f"{'strimzi' if kind == 1 else 'jikkou'}-{i}.yaml").write_text(
                "---\n".join(docs)
            )


def time_runs(args: list[str], runs: int, env: dict) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        p = subprocess.run(args, capture_output=True, text=True, env=env)
        out.append(time.perf_counter() - start)
        if p.returncode not in (0, 1):
            raise SystemExit(f"lint failed ({p.returncode}): {p.stderr.strip()}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--against", help="also time lint --against this snapshot directory")
    ap.add_argument("--keep", help="write the generated files here and keep them")
    a = ap.parse_args()

    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="bench-lint-"))
    try:
        generate(work, a.files)
        exe = shutil.which("kafka-audit") or sys.executable
        base = [exe] if exe.endswith("kafka-audit") else [exe, "-m", "auditor.cli.main"]
        env = dict(os.environ)
        cmd = [*base, "lint", str(work)]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)  # warm-up (plan cache, page cache)
        print(p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.stderr.strip())
        results = {"lint": cmd}
        if a.against:
            results["lint --against"] = [*cmd, "--against", a.against]
        for label, args in results.items():
            times = time_runs(args, a.runs, env)
            print(
                f"{label}: {a.files} files, {a.runs} runs: min {min(times):.2f} s, "
                f"median {statistics.median(times):.2f} s (python {platform.python_version()}, "
                f"load average {os.getloadavg()[0]:.2f})"
            )
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
