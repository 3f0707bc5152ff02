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
from pathlib import Path

from auditor.engine.plans import _ROOT, BUNDLE, code_fingerprint


def bundle_commands(samples: Path) -> list[tuple[str, list[str]]]:
    """(dialect, command): what users run with the default configuration, on the sample
    configs; each command leaves the plans it compiled in its dialect's cache directory.
    Spark's too: the README's first command is `fleet` on Spark, and compiling its plans took
    ~50 s of a ~75 s first run (bench/RESULTS.md)."""
    snapshot = str(samples / "fleet" / "dt=2026-11-22" / "cluster=search-ingest")
    change = str(samples / "change-review")
    return [
        ("duckdb", ["check", snapshot]),
        ("duckdb", ["fleet", str(samples / "fleet"), "--engine", "duckdb"]),
        ("duckdb", ["lint", change]),
        ("duckdb", ["lint", change, "--against", snapshot]),
        ("duckdb", ["preflight", snapshot]),
        ("spark", ["fleet", str(samples / "fleet"), "--engine", "spark", "--master", "local[2]"]),
        ("spark", ["check", snapshot, "--engine", "spark", "--master", "local[2]"]),
    ]


def build_bundle(samples: Path = _ROOT / "sample_configs", target: Path = BUNDLE) -> int:
    """Run ``bundle_commands`` with an empty cache per dialect (and no bundle) in an empty
    working directory (so no kafka-audit.toml is picked up) and write every plan they compiled
    to ``target``. Returns the number of plans."""
    plans: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="kafka-audit-bundle-") as work:
        for dialect, args in bundle_commands(samples):
            cache_dir = Path(work) / "plans" / dialect
            # PYTHONPATH: the code of this checkout, whatever is installed. A throwaway cache
            # secret: the plans are read back here and shipped without their MACs.
            env = {
                **os.environ,
                "KAFKA_AUDIT_PLAN_CACHE": str(cache_dir),
                "KAFKA_AUDIT_PLAN_BUNDLE": "off",
                "KAFKA_AUDIT_PLAN_KEY": str(Path(work) / "key" / "plan-cache.key"),
                "PYTHONPATH": os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")])),
            }
            argv = [sys.executable, "-m", "auditor.cli.main", *args]
            done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=900)
            # exit 1 (findings at the fail-on level) is expected; a run that compiled nothing is not
            if done.returncode not in (0, 1) or not any(cache_dir.glob("*.json")):
                raise RuntimeError(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()[-2000:]}")
        for dialect_dir in sorted((Path(work) / "plans").iterdir()):
            plans[dialect_dir.name] = {}
            for p in sorted(dialect_dir.glob("*.json")):
                entry = json.loads(p.read_text(encoding="utf-8"))
                plans[dialect_dir.name][p.stem] = {"sql": entry["sql"], "deps": entry["deps"]}
    data = {"fingerprint": code_fingerprint(), "plans": plans}
    # mtime=0: the same plans give the same bytes, so an unchanged bundle shows no git diff
    target.write_bytes(gzip.compress(json.dumps(data, sort_keys=True).encode(), mtime=0))
    return sum(len(v) for v in plans.values())


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
