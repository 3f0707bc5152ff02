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


def bundle_commands(samples: Path) -> list[list[str]]:
    """What users run on the embedded engine with the default configuration, on the sample
    configs; each command leaves the plans it compiled in the cache directory. DuckDB only:
    a Spark run takes minutes, and compiling its plans costs it little."""
    snapshot = str(samples / "fleet" / "dt=2026-11-22" / "cluster=search-ingest")
    change = str(samples / "change-review")
    return [
        ["check", snapshot],
        ["fleet", str(samples / "fleet"), "--engine", "duckdb"],
        ["lint", change],
        ["lint", change, "--against", snapshot],
        ["preflight", snapshot],
    ]


def build_bundle(samples: Path = _ROOT / "sample_configs", target: Path = BUNDLE) -> int:
    """Run ``bundle_commands`` with an empty cache (and no bundle) in an empty working directory
    (so no kafka-audit.toml is picked up) and write every plan they compiled to ``target``.
    Returns the number of plans."""
    with tempfile.TemporaryDirectory(prefix="kafka-audit-bundle-") as work:
        cache_dir = Path(work) / "plans"
        # PYTHONPATH: the code of this checkout, whatever is installed. A throwaway cache secret:
        # the plans are read back here and shipped without their MACs.
        env = {**os.environ, "KAFKA_AUDIT_PLAN_CACHE": str(cache_dir), "KAFKA_AUDIT_PLAN_BUNDLE": "off",
               "KAFKA_AUDIT_PLAN_KEY": str(Path(work) / "key" / "plan-cache.key"),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")]))}
        for args in bundle_commands(samples):
            argv = [sys.executable, "-m", "auditor.cli.main", *args]
            done = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True, timeout=600)
            # exit 1 (findings at the fail-on level) is expected; a run that compiled nothing is not
            if done.returncode not in (0, 1) or not any(cache_dir.glob("*.json")):
                raise RuntimeError(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip()[-2000:]}")
        plans = {}
        for p in sorted(cache_dir.glob("*.json")):
            entry = json.loads(p.read_text(encoding="utf-8"))
            plans[p.stem] = {"sql": entry["sql"], "deps": entry["deps"]}
    data = {"fingerprint": code_fingerprint(), "plans": {"duckdb": plans}}
    # mtime=0: the same plans give the same bytes, so an unchanged bundle shows no git diff
    target.write_bytes(gzip.compress(json.dumps(data, sort_keys=True).encode(), mtime=0))
    return len(plans)


if __name__ == "__main__":
    print(f"{BUNDLE}: {build_bundle()} plans")
