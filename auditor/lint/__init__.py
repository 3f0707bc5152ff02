"""Change review: ``kafka-audit lint FILE...`` over server.properties and topic definitions.

See auditor/lint/run.py for the flow; inputs.py reads the files, change_tables.py turns them
into snapshot tables (optionally applied to ``--against SNAPSHOT_DIR``);
auditor/render/lint_text.py prints findings as ``file:line`` lines and auditor/baseline.py
reads and writes baselines.
"""

from auditor.lint.run import run_lint

__all__ = ["run_lint"]
