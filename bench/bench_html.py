"""HTML report at fleet scale: 500 clusters, 1,000,000 findings.

    python bench/bench_html.py [--clusters 500] [--findings 1000000] [--runs 3]

Two inputs, the two ways the page is produced:
- full: an AuditResult holding every Finding (what `check --format html` passes; the page
  lists at most --max-rows rows per rule and counts the rest);
- fleet: what `kafka-audit fleet --html` passes: per cluster and rule counts (hits) plus the
  first 20 findings of each rule; the other findings stay in Parquet.
Prints page size, render time (min / median) and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import time

from auditor.findings import AuditResult, Finding
from auditor.registry import load_rules
from auditor.render import render


def synthetic(clusters: int, findings: int, seed: int = 7) -> tuple[list[Finding], list[dict]]:
    rng = random.Random(seed)
    rules = [r for r in load_rules().values() if r.scope == "cluster"]
    names = [f"cluster-{i:03d}" for i in range(clusters)]
    out = []
    for i in range(findings):
        r = rules[rng.randrange(len(rules))]
        c = names[rng.randrange(clusters)]
        out.append(
            Finding(
                rule=r.code,
                name=r.name,
                severity=r.severity,
                cluster=c,
                cluster_id=c,
                resource_type="partition",
                resource_name=f"topic-{i % 5000}-{i % 10}",
                message=f"{r.summary} <b>#{i}</b>",
                evidence={"n": i, "isr": [1, 2]},
                fingerprint=f"{i:032x}",
            )
        )
    return out, [{"id": n, "name": n, "environment": "prod", "tier": "tier-1"} for n in names]


def timed(fn, runs: int) -> tuple[list[float], str]:
    times, page = [], ""
    for _ in range(runs):
        start = time.perf_counter()
        page = fn()
        times.append(time.perf_counter() - start)
    return times, page


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--clusters", type=int, default=500)
    ap.add_argument("--findings", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    findings, clusters = synthetic(args.clusters, args.findings)
    full = AuditResult(findings=list(findings), clusters=clusters, incomplete=[])
    hits = full.cluster_rule_counts()
    top: dict[str, list[Finding]] = {}
    for f in full.findings:
        if len(top.setdefault(f.rule, [])) < 20:
            top[f.rule].append(f)
    fleet = AuditResult(
        findings=[f for fs in top.values() for f in fs], clusters=clusters, incomplete=[], hits=hits
    )
    print("| input | findings | page size | render min | render median |\n|---|---:|---:|---:|---:|")
    for label, result in (("full list", full), ("fleet (hits + top 20 per rule)", fleet)):
        times, page = timed(lambda r=result: render("html", r), args.runs)
        print(
            f"| {label} | {args.findings:,} | {len(page.encode()) / 1e6:.2f} MB | {min(times):.2f} s | "
            f"{statistics.median(times):.2f} s |"
        )
    print(f"\npeak RSS of the process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
