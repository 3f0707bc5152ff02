"""Fleet audit benchmark: `kafka-audit fleet ROOT` on DuckDB and Spark, side by side.

    python bench/bench_fleet.py --partitions 1M --engines duckdb,spark --runs 3
    python bench/bench_fleet.py --partitions 10M --engines duckdb,spark --runs 2
    python bench/bench_fleet.py --partitions 10M --engines floor,duckdb,spark-floor,spark --runs 1
    git worktree add /tmp/before REV && python bench/bench_fleet.py --code before=/tmp/before ...

Generates the synthetic fleet under bench/data/ if it is missing (bench/fleetgen.py, seeded:
200 clusters x 500 or 5,000 topics x 10 partitions), then runs the console script once per run
and engine (engines interleaved, so both see the same machine load), from process start to exit.
Spark runs with `--master local[2]`. Memory is sampled every 50 ms over the whole process tree
(psutil if installed, else /proc): the peak RSS of the Python driver, of the JVM (Spark), and of
the tree's sum; VmHWM of each process is read too, so a short peak between samples still counts.
Prints a Markdown table (min / median of the runs) and the machine, versions and load average.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
SIZES = {"1M": (200, 500, 10), "10M": (200, 5000, 10), "100k": (20, 500, 10)}
RUN_DATE = "2026-11-22"


# --- process tree memory ------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out += [int(x) for x in fh.read().split()]
    except OSError:
        pass
    return out


def _tree(pid: int) -> list[int]:
    seen, todo = [], [pid]
    while todo:
        p = todo.pop()
        seen.append(p)
        todo += _children(p)
    return seen


def _status(pid: int) -> tuple[str, int, int]:
    """(name, VmRSS kB, VmHWM kB)"""
    name, rss, hwm = "?", 0, 0
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("Name:"):
                    name = line.split()[1]
                elif line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
    except OSError:
        pass
    return name, rss, hwm


def run_measured(
    cmd: list[str], env: dict | None = None, interval: float = 0.05, cwd: str | None = None
) -> dict:
    """Run cmd; wall time and peak memory (MiB) of the Python root, of java descendants, of the tree."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True, cwd=cwd)
    py_peak = java_peak = tree_peak = 0
    import threading

    out_chunks: dict[str, str] = {}

    def drain(name, stream):
        out_chunks[name] = stream.read()

    threads = [
        threading.Thread(target=drain, args=(n, s)) for n, s in (("out", proc.stdout), ("err", proc.stderr))
    ]
    ended: list[float] = []

    def wait():  # the exit's time, not the next sample's: start-up is 0.1 s, a sample 0.05 s
        proc.wait()
        ended.append(time.perf_counter())

    waiter = threading.Thread(target=wait)
    for th in (*threads, waiter):
        th.start()
    while waiter.is_alive():
        total = 0
        for p in _tree(proc.pid):
            name, rss, hwm = _status(p)
            total += rss
            if p == proc.pid:
                py_peak = max(py_peak, hwm, rss)
            elif name == "java":
                java_peak = max(java_peak, hwm, rss)
        tree_peak = max(tree_peak, total)
        waiter.join(interval)
    wall = ended[0] - t0
    for th in threads:
        th.join()
    return {
        "wall": wall,
        "rc": proc.returncode,
        "py_mib": py_peak / 1024,
        "java_mib": java_peak / 1024,
        "tree_mib": tree_peak / 1024,
        "stdout": out_chunks.get("out", ""),
        "stderr": out_chunks.get("err", ""),
    }


# --- environment ---------------------------------------------------------------------------------


def machine() -> str:
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        mem = next(int(x.split()[1]) for x in open("/proc/meminfo") if x.startswith("MemTotal"))
    except (OSError, StopIteration):
        mem = 0
    return f"{os.cpu_count()} CPUs ({cpu}), {mem / 1024 / 1024:.1f} GiB RAM, {platform.system()} {platform.machine()}"


def versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = [f"Python {platform.python_version()}"]
    for pkg in ("duckdb", "pyspark", "sqlframe", "sqlglot", "pyarrow"):
        try:
            parts.append(f"{pkg} {version(pkg)}")
        except PackageNotFoundError:
            pass
    java = shutil.which("java")
    if java:
        r = subprocess.run([java, "-version"], capture_output=True, text=True)
        parts.append((r.stderr.splitlines() or ["java ?"])[0].replace('"', ""))
    return ", ".join(parts)


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


# --- fleet -----------------------------------------------------------------------------------------


def ensure_fleet(size: str, mirror_every: int = 50) -> Path:
    clusters, topics, parts = SIZES[size]
    root = DATA / (f"fleet-{size}" if mirror_every == 50 else f"fleet-{size}-mirror{mirror_every}")
    meta = root / "_fleetgen.json"
    if meta.exists():
        m = json.loads(meta.read_text())
        if (m["clusters"], m["topics"], m["partitions"], m.get("mirror_every", 50)) == (
            clusters,
            topics,
            parts,
            mirror_every,
        ):
            return root
    sys.path.insert(0, str(HERE))
    import fleetgen

    shutil.rmtree(root, ignore_errors=True)
    t0 = time.perf_counter()
    n = fleetgen.generate(root, clusters, topics, parts, seed=1, mirror_every=mirror_every)
    print(f"generated {root}: {n:,} partitions in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return root


# Issue 20's "floor": one pass over every partition of the fleet with the core partition
# predicates (leaderless, under min.insync.replicas, under-replicated), the min.insync.replicas
# join (topic override, else the cluster's value) and the ZooKeeper state join (leader and ISR
# as ZooKeeper has them). One query text, which DuckDB and Spark SQL both read, over views of
# the fleet's Parquet files; each engine runs it in a process of its own like the fleet job's.
# The full rule set is measured against it: `--engines floor,duckdb` and `spark-floor,spark`.
FLOOR_SQL = """
WITH topic_min_isr AS (
  SELECT cluster_id, entity_name AS topic, max(try_cast(value AS INT)) AS min_isr FROM configs
  WHERE key = 'min.insync.replicas' AND entity_type = 'topic' GROUP BY cluster_id, entity_name),
cluster_min_isr AS (
  SELECT cluster_id, max(try_cast(value AS INT)) AS min_isr FROM configs
  WHERE key = 'min.insync.replicas' AND entity_type <> 'topic' GROUP BY cluster_id),
zk AS (SELECT cluster_id, topic, partition, leader AS zk_leader, isr AS zk_isr FROM zk_state)
SELECT count(*) AS partitions,
  count_if(p.leader = -1) AS leaderless,
  count_if(cardinality(p.isr) < coalesce(t.min_isr, c.min_isr, 1)) AS under_min_isr,
  count_if(cardinality(p.isr) < cardinality(p.replicas)) AS under_replicated,
  count_if(zk.zk_leader IS DISTINCT FROM p.leader OR zk.zk_isr IS DISTINCT FROM p.isr) AS zk_differs
FROM partitions AS p
LEFT JOIN topic_min_isr AS t USING (cluster_id, topic)
LEFT JOIN cluster_min_isr AS c USING (cluster_id)
LEFT JOIN zk USING (cluster_id, topic, partition)
"""
# argv: the fleet root, the query (and for Spark the master); prints the totals as the CLI does.
FLOOR = """
import json, sys, duckdb
root, sql = sys.argv[1].rstrip("/"), sys.argv[2]
for t in ("partitions", "configs", "zk_state"):
    duckdb.sql(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{root}/dt=*/cluster=*/{t}.parquet', union_by_name = true)")
(row,) = duckdb.sql(sql).fetchall()
print(json.dumps({"totals": {"total": sum(row[1:])}, "partitions": row[0]}))
"""
# Spark with the fleet job's master and the settings it gives a large fleet
# (auditor/engine/spark_engine.py).
SPARK_FLOOR = """
import json, sys
from pyspark.sql import SparkSession
root, sql, master = sys.argv[1].rstrip("/"), sys.argv[2], sys.argv[3]
spark = (
    SparkSession.builder.master(master)
    .config("spark.sql.shuffle.partitions", "16")
    .config("spark.sql.adaptive.enabled", "true")
    .config("spark.ui.showConsoleProgress", "false")
    .config("spark.sql.sources.parallelPartitionDiscovery.threshold", "4096")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
for t in ("partitions", "configs", "zk_state"):
    spark.read.parquet(f"{root}/dt=*/cluster=*/{t}.parquet").createOrReplaceTempView(t)
(row,) = spark.sql(sql).collect()
print(json.dumps({"totals": {"total": sum(row[1:])}, "partitions": row[0]}))
"""


def fleet_cmd(root: Path, engine: str, out: str, master: str, code: str | None = None) -> list[str]:
    """The installed console script, or (``code``: a checkout of another revision, e.g. a
    `git worktree`) that tree's CLI module run from inside it; for ``floor`` and
    ``spark-floor``, the FLOOR query on DuckDB or on Spark."""
    if engine == "floor":
        return [sys.executable, "-c", FLOOR, str(root.resolve()), FLOOR_SQL]
    if engine == "spark-floor":
        return [sys.executable, "-c", SPARK_FLOOR, str(root.resolve()), FLOOR_SQL, master]
    exe = (
        [shutil.which("kafka-audit") or "kafka-audit"]
        if code is None
        else [sys.executable, "-m", "auditor.cli.main"]
    )
    cmd = [
        *exe,
        "fleet",
        str(root.resolve()),
        "--engine",
        engine,
        "--out",
        out,
        "--run-date",
        RUN_DATE,
        "-f",
        "json",
        "--fail-on",
        "never",
    ]
    if engine == "spark":
        cmd += ["--master", master]
    return cmd


def fmt_row(label: str, runs: list[dict]) -> str:
    def mm(key, f):
        xs = [r[key] for r in runs]
        return f"{f(min(xs))} / {f(statistics.median(xs))}"

    s = lambda x: f"{x:.1f} s"  # noqa: E731
    m = lambda x: f"{x:,.0f} MiB" if x else "-"  # noqa: E731
    findings = runs[0].get("findings", "?")
    return (
        f"| {label} | {len(runs)} | {mm('wall', s)} | {max(r['py_mib'] for r in runs):,.0f} MiB | "
        f"{m(max(r['java_mib'] for r in runs))} | {max(r['tree_mib'] for r in runs):,.0f} MiB | {findings:,} |"
        if isinstance(findings, int)
        else f"| {label} | {len(runs)} | {mm('wall', s)} | ? | ? | ? | ? |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--partitions", default="1M", help=f"fleet size: {', '.join(SIZES)} (comma-separated for several)"
    )
    ap.add_argument("--engines", default="duckdb,spark")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument(
        "--mirror-every", type=int, default=50, help="fleetgen --mirror-every (1: a finding per topic)"
    )
    ap.add_argument("--json", help="also write the raw figures here")
    ap.add_argument(
        "--warmup", action="store_true", help="one untimed run of each variant first (plan caches warm)"
    )
    ap.add_argument(
        "--code",
        action="append",
        default=[],
        metavar="LABEL=DIR",
        help="also run another revision's code from DIR (e.g. `git worktree add /tmp/old REV`), "
        "interleaved with the installed one, for a before/after in the same run",
    )
    a = ap.parse_args()
    engines = a.engines.split(",")
    print(
        f"<!-- {machine()}; {versions()}; start {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC, {load()} -->",
        file=sys.stderr,
    )
    rows, raw = [], {}
    for size in a.partitions.split(","):
        root = ensure_fleet(size, a.mirror_every)
        trees = [("", None)] + [tuple(c.split("=", 1)) for c in a.code]
        variants = [(engine, label, code) for engine in engines for label, code in trees]
        results: dict[tuple, list[dict]] = {v: [] for v in variants}
        loads = []
        for engine, label, code in variants if a.warmup else ():  # fills each code tree's plan cache
            with tempfile.TemporaryDirectory(prefix="bench-fleet-") as out:
                r = run_measured(fleet_cmd(root, engine, out, a.master, code), cwd=code)
                print(
                    f"{size} {engine}{' ' + label if label else ''} warm-up: {r['wall']:.1f} s (not counted)",
                    file=sys.stderr,
                )
        for i in range(a.runs):
            for engine, label, code in variants:
                with tempfile.TemporaryDirectory(prefix="bench-fleet-") as out:
                    loads.append(os.getloadavg()[0])
                    r = run_measured(fleet_cmd(root, engine, out, a.master, code), cwd=code)
                    try:
                        r["findings"] = json.loads(r["stdout"])["totals"]["total"]
                    except (ValueError, KeyError, TypeError):
                        r["findings"] = None
                        print(
                            f"{engine} run {i + 1} failed (exit {r['rc']}): {r['stderr'][-2000:]}",
                            file=sys.stderr,
                        )
                    print(
                        f"{size} {engine}{' ' + label if label else ''} run {i + 1}: {r['wall']:.1f} s, "
                        f"python {r['py_mib']:.0f} MiB, java {r['java_mib']:.0f} MiB, tree {r['tree_mib']:.0f} MiB, "
                        f"findings {r['findings']}, {load()}",
                        file=sys.stderr,
                    )
                    r.pop("stdout"), r.pop("stderr")
                    results[(engine, label, code)].append(r)
        for engine, label, code in variants:
            name = f"{size} ({SIZES[size][0]} clusters)" + (
                f" mirror-every {a.mirror_every}" if a.mirror_every != 50 else ""
            )
            rows.append(
                fmt_row(
                    f"{name}, {engine}"
                    + (f" {a.master}" if engine.startswith("spark") else "")
                    + (f", {label}" if label else ""),
                    results[(engine, label, code)],
                )
            )
        raw[size] = {
            "results": {" ".join(filter(None, (e, lb))): v for (e, lb, _), v in results.items()},
            "load_1min_at_start_of_runs": loads,
        }
    print(
        "| fleet, engine | runs | wall min / median | peak RSS python | peak RSS JVM | peak RSS tree | findings |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    for size, figures in raw.items():  # issue 20, target 3: the full rule set against the floor
        medians = {k: statistics.median(r["wall"] for r in v) for k, v in figures["results"].items()}
        if "floor" in medians and "duckdb" in medians:
            print(
                f"\n{size}: duckdb / floor = {medians['duckdb'] / medians['floor']:.2f}x (target: at most 3x)"
            )
        if "spark-floor" in medians and "spark" in medians:
            print(f"\n{size}: spark / spark-floor = {medians['spark'] / medians['spark-floor']:.2f}x")
    print(f"\n{machine()}; {versions()}; end {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, {load()}")
    if a.json:
        Path(a.json).write_text(json.dumps(raw, indent=1) + "\n")


if __name__ == "__main__":
    main()
