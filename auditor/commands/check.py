"""``check``: snapshots (or sources, collected first) -> the cluster rules -> an AuditResult."""

from __future__ import annotations

import tempfile
from pathlib import Path

from auditor.commands.collect import snapshot_refs
from auditor.config import AuditConfig
from auditor.findings import AuditResult
from auditor.sources import Sources


def run_check(
    target: Path | None,
    sources: Sources,
    config: AuditConfig,
    *,
    engine_name: str = "duckdb",
    master: str | None = None,
    baseline=None,
) -> AuditResult:
    """Audit TARGET's snapshots, or a snapshot collected from ``sources``; with a ``baseline``
    (auditor/baseline.py) its findings are left out and ``result.baseline`` says what matched."""
    from auditor import progress
    from auditor.baseline import apply as apply_baseline
    from auditor.engine import open_engine
    from auditor.engine.runner import run_audit

    with tempfile.TemporaryDirectory(prefix="kafka-audit-") as workdir:
        refs = snapshot_refs(target, sources, workdir)
        # Spark takes tens of seconds: its stages on stderr (as fleet shows them); DuckDB about a second
        with progress.for_stderr() if engine_name == "spark" else progress.NO_PROGRESS as shown:
            shown.stage(f"starting {engine_name}" + (f" ({master})" if master else ""))
            with open_engine(engine_name, master=master) as eng:
                result = run_audit(eng, refs, config, progress=shown)
    if baseline is not None:
        result.findings[:], result.baseline = apply_baseline(
            baseline, result.findings, {c["name"] for c in result.clusters}
        )
    return result
