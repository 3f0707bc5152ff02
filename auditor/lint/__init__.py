"""Change review: ``kafka-audit lint FILE...`` over Kafka configuration as teams commit it.

See auditor/lint/run.py for the flow; inputs.py reads the files (one module per format in
formats/, the list FORMATS there), change_tables.py turns them
into snapshot tables (optionally applied to ``--against SNAPSHOT_DIR``);
auditor/render/lint_text.py prints findings as ``file:line`` lines and auditor/baseline.py
reads and writes baselines.
"""

from auditor.lint.run import run_lint

__all__ = ["run_lint"]
