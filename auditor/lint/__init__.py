"""Change review: ``kafka-audit lint FILE...`` over server.properties and topic definitions.

See auditor/lint/run.py for the flow; inputs.py reads the files, snapshot.py turns them
into snapshot tables (optionally applied to ``--against SNAPSHOT_DIR``), report.py prints
findings as ``file:line`` lines.
"""

from auditor.lint.run import baseline_json, read_baseline, run_lint

__all__ = ["baseline_json", "read_baseline", "run_lint"]
