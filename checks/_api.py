"""What checks import: the PySpark DataFrame API as sqlframe exposes it for every engine.

``F`` and ``Window`` behave like ``pyspark.sql.functions`` and ``pyspark.sql.Window``; the
same expressions compile to DuckDB SQL or run on Spark. Keeping the import in one place
means a check never imports pyspark (which would start a JVM on the embedded path).
"""

from auditor.frames import F, Window, join, rows_frame  # sqlframe's, imported when a plan is compiled
from auditor.severity import ROW_SEVERITY

__all__ = ["F", "Window", "emit", "ev", "join", "rows_frame", "text"]


def text(*parts):
    """A message from literal strings and columns, null-safe on both engines.

    F.format_string is not used: sqlframe's DuckDB translation drops adjacent specifiers,
    and DuckDB's concat skips nulls where Spark's returns null. Here every column part is
    cast to string and a null shows as "none"."""
    cols = [F.lit(p) if isinstance(p, str) else F.coalesce(p.cast("string"), F.lit("none")) for p in parts]
    return F.concat(*cols)


def ev(**columns):
    """Evidence: a JSON object built in the engine from named columns."""
    return F.to_json(F.struct(*[col.alias(name) for name, col in columns.items()]))


def emit(df, resource_type: str, resource_name, message, evidence, severity=None):
    """Shape a DataFrame into the findings columns every check returns. ``severity``, a
    column, gives each finding its own severity where the row's facts decide it (null: the
    rule's declared one; auditor/findings.py ROW_SEVERITY)."""
    columns = [
        F.col("cluster_id"),
        F.lit(resource_type).alias("resource_type"),
        resource_name.alias("resource_name"),
        message.alias("message"),
        evidence.alias("evidence"),
    ]
    if severity is not None:
        columns.append(severity.alias(ROW_SEVERITY))
    return df.select(*columns)
