"""Benchmark: `kafka-audit collect --inventory` over many clusters, sequential vs concurrent.

    python bench/bench_inventory_collect.py [--clusters 50] [--parallel 8] [--topics 5] [--latency-ms 0]

Starts one real ZooKeeper on 127.0.0.1 (tests/zk_server.py), writes ``clusters`` small
Kafka layouts under as many chroots (3 brokers, ``topics`` topics of 6 partitions RF 3, plus
__consumer_offsets of 10), writes an inventory of them, and times the console command end to
end (process start to exit) with ``--parallel 1`` and with ``--parallel N``, in the same run,
each into its own fresh root. Prints a Markdown table.

``--latency-ms L`` puts a TCP proxy delaying every chunk by L ms each way in front of the
ZooKeeper (as bench_zk_collect.py does): a ZooKeeper one network hop away, where collecting
clusters concurrently pays off most.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_fleet import machine  # noqa: E402

from tests.zk_server import ZkServer, client, free_port, kafka_layout, write_layout  # noqa: E402


def run(inventory: Path, out: Path, parallel: int) -> tuple[float, int, str]:
    t0 = time.perf_counter()
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "auditor.cli.main",
            "collect",
            "--inventory",
            str(inventory),
            "--out",
            str(out),
            "--run-date",
            "2026-11-23",
            "--parallel",
            str(parallel),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=3600,
        env={**os.environ, "CI": "1"},
    )
    return (
        time.perf_counter() - t0,
        p.returncode,
        p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.stderr,
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clusters", type=int, default=50)
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--topics", type=int, default=5)
    ap.add_argument("--latency-ms", type=float, default=0.0)
    args = ap.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="bench-inventory-"))
    server = ZkServer()
    server.start()
    proxy = None
    try:
        zk = client(server.hosts)
        try:
            t0 = time.perf_counter()
            for i in range(args.clusters):
                topics = {f"t{j}": (6, 3) for j in range(args.topics)} | {"__consumer_offsets": (10, 3)}
                layout = kafka_layout(
                    brokers=(1, 2, 3), topics=topics, cluster_id=f"BenchCluster{i:05d}000000A"
                )
                write_layout(zk, {f"/c{i:03d}{k}": v for k, v in layout.items()})
            setup = time.perf_counter() - t0
        finally:
            zk.stop()
            zk.close()
        hosts = server.hosts
        if args.latency_ms > 0:
            port = free_port()
            proxy = subprocess.Popen(
                [
                    sys.executable,
                    str(ROOT / "bench" / "bench_zk_collect.py"),
                    "--proxy",
                    str(port),
                    str(server.port),
                    str(args.latency_ms / 1000),
                ]
            )
            time.sleep(1.0)
            hosts = f"127.0.0.1:{port}"
        inv = work / "fleet.yaml"
        lines = ["defaults:", "  timeout: 10", "clusters:"]
        for i in range(args.clusters):
            lines += [
                f"  - name: c{i:03d}",
                f"    labels: {{environment: bench, tier: t{i % 3}}}",
                f"    zookeeper: {hosts}/c{i:03d}",
            ]
        inv.write_text("\n".join(lines) + "\n")
        results = []
        for parallel in (1, args.parallel):
            seconds, rc, last = run(inv, work / f"root-{parallel}", parallel)
            results.append((parallel, seconds, rc, last))
        znodes = args.clusters * (
            len(
                kafka_layout(
                    brokers=(1, 2, 3),
                    topics={f"t{j}": (6, 3) for j in range(args.topics)} | {"__consumer_offsets": (10, 3)},
                )
            )
        )
        print(f"machine: {machine()}")
        print(
            f"{args.clusters} clusters in one ZooKeeper ({znodes} znodes written in {setup:.1f} s), "
            f"latency {args.latency_ms:g} ms each way\n"
        )
        print("| --parallel | wall time (s) | clusters/s | exit | last line |")
        print("|---:|---:|---:|---:|---|")
        for parallel, seconds, rc, last in results:
            print(f"| {parallel} | {seconds:.1f} | {args.clusters / seconds:.1f} | {rc} | {last} |")
        base = results[0][1]
        print(f"\nspeed-up --parallel {args.parallel} vs 1: {base / results[1][1]:.2f}x")
        return 0 if all(rc == 0 for _, _, rc, _ in results) else 1
    finally:
        if proxy is not None:
            proxy.terminate()
            proxy.wait(timeout=10)
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
