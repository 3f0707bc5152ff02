"""Benchmark: the MSK topic APIs (auditor/collectors/msk_topics.py), concurrent vs sequential.

    python bench/bench_msk_topics.py [--topics 10000] [--partitions 3] [--latency-ms 5] [--workers 8 16]

A cluster of ``topics`` topics answered through botocore's own client (request validation,
the read-only guard, the retry handler) by tests/msk_answers.py's ModelAnswers, which validates
every answer against botocore's ``kafka`` model as Stubber does and sleeps ``latency`` ms per
call (the simulated round trip to the MSK API). Stubber itself answers from a queue in call
order, which concurrent calls cannot follow: ModelAnswers is its mechanism (the ``before-call``
event), answering by parameters. Runs the collection with one worker (sequential: what a loop
over the topics costs) and with each ``--workers`` count, the rate bound off (``rate=0``: the
bench measures the concurrency, not our bound), in the same run; prints calls and wall time,
and the ratio of each to the sequential run. Checks that every run gives the same rows.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

for key, value in (("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
    os.environ.setdefault(key, value)  # fake credentials: nothing leaves this process

from auditor.collectors import msk, msk_topics  # noqa: E402
from auditor.collectors._common import CollectResult  # noqa: E402
from tests.msk_answers import FakeTopics, ModelAnswers  # noqa: E402

ARN = "arn:aws:kafka:eu-west-1:123456789012:cluster/payments/5f3a1c2e-7d1b-4a8e-9c3f-2b6d8e0a1f4c-2"


def run(fake: FakeTopics, workers: int, latency: float) -> tuple[int, float, dict]:
    client = msk.make_client("kafka", "eu-west-1", 10.0)
    answers = ModelAnswers(client, fake.answer, latency=latency)
    r = CollectResult()
    start, cpu = time.perf_counter(), time.process_time()
    got = msk_topics.collect_topics(r, client, ARN, workers=workers, rate=0)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert not r.errors, r.errors
    assert got.calls == len(answers.calls)
    print(f"  (process CPU {cpu:.1f} s: {1000 * cpu / got.calls:.2f} ms per call)")
    return got.calls, seconds, r.tables


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topics", type=int, default=10_000)
    ap.add_argument("--partitions", type=int, default=3)
    ap.add_argument("--latency-ms", type=float, default=5.0)
    ap.add_argument("--workers", type=int, nargs="+", default=[8, 16])
    args = ap.parse_args(argv)
    configs = {f"t{i:05d}": "min.insync.replicas=2\n" for i in range(0, args.topics, 7)}
    fake = FakeTopics(args.topics, partitions=args.partitions, lagging={"t00042": 2}, configs=configs)
    latency = args.latency_ms / 1000
    print(
        f"# {args.topics} topics x {args.partitions} partitions, {args.latency_ms:g} ms per call; "
        f"python {platform.python_version()}, {os.cpu_count()} CPUs"
    )
    calls0, seconds0, rows0 = run(fake, 1, latency)
    print(f"workers=1 (sequential): {calls0} calls, {seconds0:.1f} s, {calls0 / seconds0:.0f} calls/s")
    for w in args.workers:
        calls, seconds, rows = run(fake, w, latency)
        assert rows == rows0, "a concurrent run gave other rows"
        print(
            f"workers={w}: {calls} calls ({calls / calls0:.2f}x), {seconds:.1f} s "
            f"({seconds / seconds0:.3f}x of sequential, {seconds0 / seconds:.1f}x faster), "
            f"{calls / seconds:.0f} calls/s"
        )
    default = msk_topics.DEFAULT_RATE
    print(
        f"at the default bound of {default:g} calls/s the {calls0} calls take at least "
        f"{calls0 / default:.0f} s (rate-bound, whatever the workers)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
