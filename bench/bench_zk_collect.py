"""Benchmark: ZooKeeper collection, pipelined (async batches) vs one read at a time.

    python bench/bench_zk_collect.py [--partitions 10000] [--batch 1000] [--repeat 3] [--latency-ms 0.5]

Starts a real ZooKeeper on 127.0.0.1 (tests/zk_server.py), writes a Kafka layout with the
given number of partitions (topics of 100 partitions, RF 3, 6 brokers, a topic config per
topic), then runs the collector with ``batch`` (pipelined) and with batch=1 (every read
waits for its answer before the next is sent). Prints znodes/s for both; the best of
``repeat`` runs is reported.

``--latency-ms L`` also measures both through a TCP proxy (a separate process) that delays
every chunk by L ms each way, as a ZooKeeper one network hop away would: one-at-a-time then
pays the round trip per znode, pipelined once per batch.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from auditor.collectors.zookeeper import collect_zookeeper  # noqa: E402
from tests.zk_server import ZkServer, client, kafka_layout, write_layout  # noqa: E402


def proxy_main(listen_port: int, target_port: int, delay: float) -> None:
    """A TCP proxy that forwards every chunk after ``delay`` seconds, in order."""

    async def pipe(reader, writer):
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()

        async def sender():
            while True:
                due, data = await queue.get()
                if data is None:
                    writer.close()
                    return
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                writer.write(data)
                await writer.drain()

        task = asyncio.create_task(sender())
        try:
            while data := await reader.read(65536):
                queue.put_nowait((loop.time() + delay, data))
        finally:
            queue.put_nowait((0, None))
            await task

    async def handle(cr, cw):
        sr, sw = await asyncio.open_connection("127.0.0.1", target_port)
        await asyncio.gather(pipe(cr, sw), pipe(sr, cw), return_exceptions=True)

    async def serve():
        server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
        print("ready", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(serve())


def measure(hosts: str, args, label_suffix: str = "") -> dict:
    reader = client(hosts, timeout=30)
    results = {}
    try:
        for label, batch in (("pipelined", args.batch), ("one-at-a-time", 1)):
            best = None
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                r = collect_zookeeper(hosts, timeout=30, batch=batch, client=reader)
                elapsed = time.perf_counter() - t0
                assert not r.errors, r.errors
                assert len(r.tables["partitions"]) == args.partitions
                best = elapsed if best is None else min(best, elapsed)
            src = r.sources[0]
            results[label] = best
            print(
                f"{label + label_suffix:28s} batch={batch:<5d} {src['znodes']} znodes, {src['round_trips']:>5d} "
                f"round trips: {best:6.2f} s, {src['znodes'] / best:8,.0f} znodes/s",
                flush=True,
            )
    finally:
        reader.stop()
        reader.close()
    print(f"speed-up{label_suffix}: {results['one-at-a-time'] / results['pipelined']:.1f}x", flush=True)
    return results


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--proxy":
        proxy_main(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--per-topic", type=int, default=100)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--latency-ms", type=float, default=0.5, help="one-way delay of the proxy run (0: skip it)"
    )
    args = ap.parse_args()

    topics = {f"bench.topic-{i:04d}": (args.per_topic, 3) for i in range(args.partitions // args.per_topic)}
    nodes = kafka_layout(brokers=(1, 2, 3, 4, 5, 6), topics=topics)
    for t in topics:
        nodes[f"/config/topics/{t}"] = {"version": 1, "config": {"retention.ms": "604800000"}}
    with ZkServer() as zk:
        w = client(zk.hosts, timeout=30)
        t0 = time.perf_counter()
        try:
            write_layout(w, nodes)
        finally:
            w.stop()
            w.close()
        print(f"layout: {len(nodes)} znodes written in {time.perf_counter() - t0:.1f} s")
        print(f"python {platform.python_version()}, {platform.machine()}, {args.partitions} partitions")
        measure(zk.hosts, args, " (loopback)")
        if args.latency_ms > 0:
            from tests.zk_server import free_port

            port = free_port()
            proxy = subprocess.Popen(
                [sys.executable, __file__, "--proxy", str(port), str(zk.port), str(args.latency_ms / 1000)],
                stdout=subprocess.PIPE,
                text=True,
            )
            try:
                assert proxy.stdout.readline().strip() == "ready"
                measure(f"127.0.0.1:{port}", args, f" (+{args.latency_ms:g} ms each way)")
            finally:
                proxy.terminate()
                proxy.wait(timeout=10)


if __name__ == "__main__":
    main()
