"""Where does a fleet audit spend its time? Per materialised table, in process.

    python bench/bench_profile.py bench/data/fleet-1M --engine duckdb [--explain 3]
    python bench/bench_profile.py bench/data/fleet-1M --engine spark --master 'local[2]' [--conf KEY=VALUE]

Runs auditor.commands.fleet.run_fleet (what `kafka-audit fleet` runs) with the engine's ``create`` wrapped
to time every table it materialises (each rule's findings, each shared transform ``derived_*``,
the fleet findings), plus load, write and summary phases, and (Spark) the JVM's CPU time.
Prints the tables by time, the sum, and the rest. With --explain N or --explain-table NAME
(DuckDB), re-runs the N slowest statements (or NAME's) with DuckDB's profiler and prints their
operators, a line each, with their time and the bytes they passed on.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _hwm_mib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _children_cpu_seconds() -> float:
    """user + system CPU of this process's live children (Spark's JVM), from /proc."""
    tick, total = os.sysconf("SC_CLK_TCK"), 0.0
    me = str(os.getpid())
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:  # ppid
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root")
    ap.add_argument("--engine", default="duckdb")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--explain", type=int, default=0, help="profile the N slowest statements again (DuckDB)")
    ap.add_argument(
        "--explain-table", action="append", default=[], help="profile this table's statement again"
    )
    ap.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a Spark setting for this run (repeatable), e.g. spark.sql.shuffle.partitions=4",
    )
    ap.add_argument(
        "--per-rule",
        action="store_true",
        help="materialise every rule's findings as a table (DuckDB keeps them as views, which run "
        "inside the final query), so each rule's own cost shows",
    )
    a = ap.parse_args()

    t_start = time.perf_counter()
    from auditor.commands.fleet import run_fleet
    from auditor.config import find_config
    from auditor.engine import open_engine

    t_import = time.perf_counter() - t_start
    timings: list[tuple[float, str, str]] = []
    peaks: dict[str, float] = {}  # process peak RSS (VmHWM) right after each table
    conf = dict(c.split("=", 1) for c in a.conf)
    eng = open_engine(a.engine, master=a.master if a.engine == "spark" else None, spark_conf=conf)
    t_open = time.perf_counter() - t_start - t_import
    orig = eng.create

    def create(name, sql, *, reuse=False, **kw):  # on Spark, a job run meanwhile is timed as 0
        t0 = time.perf_counter()
        orig(name, sql, reuse=reuse or a.per_rule, **kw)
        timings.append((time.perf_counter() - t0, name, sql))
        peaks[name] = _hwm_mib()

    eng.create = create
    phases: dict[str, float] = {}

    def wrap(f, m):
        def inner(*args, **kw):
            t0 = time.perf_counter()
            try:
                return f(*args, **kw)
            finally:
                phases[m] = phases.get(m, 0.0) + time.perf_counter() - t0

        return inner

    for meth in ("load", "write_findings", "rows"):
        setattr(eng, meth, wrap(getattr(eng, meth), meth))
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        result = run_fleet(eng, a.root, find_config(None), out=out, run_date="2026-11-22")
        t_run = time.perf_counter() - t0
    total = sum(x[0] for x in timings)
    n_find = (
        sum(r["findings"] for r in result.rules)
        if hasattr(result, "rules") and isinstance(result.rules, list)
        else "?"
    )
    print(
        f"engine {a.engine}: imports {t_import:.2f} s, engine start {t_open:.2f} s, run_fleet {t_run:.2f} s "
        f"(of which {len(timings)} engine tables/views {total:.2f} s), findings {n_find}"
    )
    print("phases outside create: " + ", ".join(f"{k} {v:.2f} s" for k, v in phases.items()))
    cpu = _children_cpu_seconds()
    if cpu:
        print(
            f"CPU time: this process {time.process_time():.1f} s, child processes (the JVM) {cpu:.1f} s "
            f"(of {t_run:.1f} s x {os.cpu_count()} cores in run_fleet)"
        )
    if a.engine == "duckdb":
        mem = eng.conn.execute(
            "SELECT tag, memory_usage_bytes FROM duckdb_memory() WHERE memory_usage_bytes > 0 ORDER BY 2 DESC"
        ).fetchall()
        print("DuckDB memory after the run: " + ", ".join(f"{t} {b / 2**20:,.0f} MiB" for t, b in mem))
        big = eng.conn.execute(
            "SELECT table_name, estimated_size FROM duckdb_tables() ORDER BY 2 DESC LIMIT 6"
        ).fetchall()
        print("largest materialised tables (rows): " + ", ".join(f"{t} {n:,}" for t, n in big))
    print("\n| table | s | share | peak RSS after |\n|---|---:|---:|---:|")
    for dt, name, _ in sorted(timings, reverse=True)[: a.top]:
        print(f"| {name} | {dt:.2f} | {dt / t_run:.0%} | {peaks.get(name, 0):,.0f} MiB |")
    if (a.explain or a.explain_table) and a.engine == "duckdb":
        chosen = sorted(timings, reverse=True)[: a.explain] + [x for x in timings if x[1] in a.explain_table]
        for dt, name, sql in chosen:
            print(f"\n### {name} ({dt:.2f} s when materialised): operators over 10 ms or 50 MiB\n")
            # DuckDB's JSON profile, flattened: one line per operator, indented by depth, with
            # its own time and the bytes it passed on (the box-drawn tree is too wide to read)
            out = Path(tempfile.gettempdir()) / "kafka-audit-profile.json"
            eng.conn.execute(f"PRAGMA enable_profiling='json'; PRAGMA profiling_output='{out}'")
            eng.conn.execute(sql).fetchall()
            eng.conn.execute("PRAGMA disable_profiling")
            profile = json.loads(out.read_text())
            peak = profile.get("system", {}).get("peak_buffer_memory", 0)
            print(f"peak buffer memory {peak / 2**20:,.0f} MiB")
            for depth, op in _operators(profile.get("operator", [])):
                size = op.get("intermediate_size_bytes", 0)
                if op.get("timing", 0) < 0.01 and size < 50 * 2**20:
                    continue
                info = op.get("extra_info") or {}
                hint = " ".join(
                    f"{k}={v}" for k, v in info.items() if k in ("Join Type", "Conditions", "Groups", "Table")
                )
                print(
                    f"{op.get('timing', 0):7.3f} s {size / 2**20:7,.0f} MiB {'  ' * depth}{op.get('type')} {hint[:140]}"
                )
    eng.close()


def _operators(ops, depth=0):
    """(depth, operator) of a DuckDB JSON profile's operator list, depth first."""
    for op in ops:
        yield depth, op
        yield from _operators(op.get("children", []), depth + 1)


if __name__ == "__main__":
    main()
