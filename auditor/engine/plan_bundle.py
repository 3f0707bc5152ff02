"""Build the bundled plans (``plans_bundle.json.gz``, see auditor/engine/plans.py) from a checkout:

    python -m auditor.engine.plan_bundle

Run it after changing anything under checks/, auditor/engine/ or the SHAPING_MODULES of
auditor/engine/plans.py (tests/test_plan_cache.py fails until then). It runs the CLI on sample_configs/, so it needs the checkout, not a wheel.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from auditor.engine.plans import _ROOT, BUNDLE, code_fingerprint


def bundle_commands(samples: Path) -> list[tuple[str, list[str]]]:
    """(dialect, command): what users run with the default configuration, on the sample
    configs; each command leaves the plans it compiled in its dialect's cache directory.
    Spark's too: the README's first command is `fleet` on Spark, and compiling its plans took
    ~50 s of a ~75 s first run (bench/RESULTS.md). `check --engine spark` reads the same plans
    as `fleet` (a fused plan holds every rule of its group, whatever the command), so it is
    not run: it compiled none of its own (98 of 98 before fusion, bench/RESULTS.md issue 46)."""
    snapshot = str(samples / "fleet" / "dt=2026-11-22" / "cluster=search-ingest")
    change = str(samples / "change-review")
    return [
        ("duckdb", ["check", snapshot]),
        ("duckdb", ["fleet", str(samples / "fleet"), "--engine", "duckdb"]),
        ("duckdb", ["lint", change]),
        ("duckdb", ["lint", change, "--against", snapshot]),
        # more inheriting topics than REP004/REP005 list: lint's locating query (auditor/lint/placement.py)
        ("duckdb", ["lint", str(samples / "lint" / "inheriting-topics.yaml")]),
        ("duckdb", ["preflight", snapshot]),
        ("spark", ["fleet", str(samples / "fleet"), "--engine", "spark", "--master", "local[2]"]),
    ]


def _previous_counts(target: Path) -> dict[str, int]:
    """Plans per dialect of the bundle already there (any code): what a rebuild roughly compiles."""
    try:
        plans = json.loads(gzip.decompress(target.read_bytes())).get("plans", {})
        return {d: len(v) for d, v in plans.items() if isinstance(v, dict)}
    except (OSError, ValueError, EOFError, AttributeError):
        return {}


def _say(line: str) -> None:
    print(f"plan_bundle: {line}", file=sys.stderr, flush=True)


def build_bundle(
    samples: Path = _ROOT / "sample_configs", target: Path = BUNDLE, heartbeat: float = 15.0
) -> int:
    """Run ``bundle_commands`` with an empty cache per dialect (and no bundle) in an empty
    working directory (so no kafka-audit.toml is picked up) and write every plan they compiled
    to ``target``. Returns the number of plans.

    Progress on stderr (install.sh shows it): per engine, the command k of n and the plans
    compiled so far (of the previous bundle's count, when there is one), every ``heartbeat``
    seconds while a command runs and when it ends. A whole build is ~2 min on 2 cores, the two
    dialects side by side (bench/RESULTS.md, issue 46: 118 s for 128 plans, 150 s of CPU)."""
    plans: dict[str, dict] = {}
    commands = bundle_commands(samples)
    by_dialect: dict[str, list[list[str]]] = {}
    for dialect, args in commands:
        by_dialect.setdefault(dialect, []).append(args)
    previous = _previous_counts(target)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="kafka-audit-bundle-") as work:
        # One thread per dialect, its commands in order (they share its cache directory).
        # Why: DuckDB's compile is pure Python (sqlframe) and Spark's is mostly its own
        # process's Python and JVM; side by side on two cores the build takes about as long
        # as Spark's part alone (bench/RESULTS.md, issue 46).
        with ThreadPoolExecutor(max_workers=len(by_dialect)) as pool:
            runs = [
                pool.submit(_compile_dialect, dialect, argvs, Path(work), previous.get(dialect), heartbeat)
                for dialect, argvs in by_dialect.items()
            ]
            for run in runs:
                run.result()  # the first failure, after every dialect has finished
        for dialect_dir in sorted((Path(work) / "plans").iterdir()):
            plans[dialect_dir.name] = {}
            for p in sorted(dialect_dir.glob("*.json")):
                entry = json.loads(p.read_text(encoding="utf-8"))
                plans[dialect_dir.name][p.stem] = {"sql": entry["sql"], "deps": entry["deps"]}
    data = {"fingerprint": code_fingerprint(), "plans": plans}
    # mtime=0: the same plans give the same bytes, so an unchanged bundle shows no git diff
    target.write_bytes(gzip.compress(json.dumps(data, sort_keys=True).encode(), mtime=0))
    counts = ", ".join(f"{d} {len(v)}" for d, v in plans.items())
    _say(f"{sum(len(v) for v in plans.values())} plans ({counts}) in {time.monotonic() - started:.0f} s")
    return sum(len(v) for v in plans.values())


def _compile_dialect(
    dialect: str, argvs: list[list[str]], work: Path, previous: int | None, heartbeat: float
) -> None:
    """Run ``argvs`` (CLI argument lists) one after another with ``dialect``'s plan cache under
    ``work``; raise RuntimeError for a command that failed or compiled nothing."""
    cache_dir = work / "plans" / dialect
    of = f"/{previous}" if previous else ""

    def compiled() -> int:
        return sum(1 for _ in cache_dir.glob("*.json")) if cache_dir.is_dir() else 0

    for k, args in enumerate(argvs, 1):
        # PYTHONPATH: the code of this checkout, whatever is installed. A throwaway cache
        # secret: the plans are read back here and shipped without their MACs.
        env = {
            **os.environ,
            "KAFKA_AUDIT_PLAN_CACHE": str(cache_dir),
            "KAFKA_AUDIT_PLAN_BUNDLE": "off",
            "KAFKA_AUDIT_PLAN_KEY": str(work / "key" / dialect / "plan-cache.key"),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")])),
            # Spark: compile every plan, run none (each statement's table an empty one of its
            # columns): running the sample fleet on a cold JVM was most of the build (~200 s of
            # 252 s under load, bench/RESULTS.md issue 46), and the plans do not depend on the data.
            **({"KAFKA_AUDIT_PLAN_ONLY": "1"} if dialect == "spark" else {}),
        }
        argv = [sys.executable, "-m", "auditor.cli.main", *args]
        label = f"{dialect} {k}/{len(argvs)} ({args[0]})"
        t0 = time.monotonic()
        with tempfile.TemporaryFile(mode="w+") as err:
            proc = subprocess.Popen(argv, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=err, text=True)
            try:
                while True:
                    try:
                        proc.wait(timeout=heartbeat)
                        break
                    except subprocess.TimeoutExpired:
                        if time.monotonic() - t0 > 900:
                            proc.kill()
                            proc.wait()
                            break
                        _say(
                            f"{label}: {compiled()}{of} {dialect} plans compiled so far, {time.monotonic() - t0:.0f} s"
                        )
            finally:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            err.seek(0)
            stderr = err.read()
        # exit 1 (findings at the fail-on level) is expected; a run that compiled nothing is not
        if proc.returncode not in (0, 1) or not any(cache_dir.glob("*.json")):
            raise RuntimeError(f"{' '.join(argv)}: exit {proc.returncode}: {stderr.strip()[-2000:]}")
        _say(f"{label}: {compiled()}{of} {dialect} plans compiled ({time.monotonic() - t0:.1f} s)")


def bundle_is_current(target: Path = BUNDLE) -> bool:
    """Whether ``target`` holds plans built from this code (same fingerprint as code_fingerprint)."""
    try:
        return json.loads(gzip.decompress(target.read_bytes())).get("fingerprint") == code_fingerprint()
    except (OSError, ValueError, EOFError, AttributeError):
        return False


if __name__ == "__main__":
    # --check: exit 1 when the bundle is missing or stale, build nothing (install.sh asks first)
    if "--check" in sys.argv[1:]:
        current = bundle_is_current()
        print(f"{BUNDLE}: {'up to date' if current else 'missing or built from other code'}")
        sys.exit(0 if current else 1)
    print(f"{BUNDLE}: {build_bundle()} plans")
