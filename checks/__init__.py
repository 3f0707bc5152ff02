"""The rule catalogue. Importing this package registers every rule (one module per category).

A check is ``(tables, params) -> DataFrame`` with the columns of
``auditor.findings.CHECK_COLUMNS``: DataFrame in, DataFrame out, no actions, no UDFs.
"""

from checks import (  # noqa: F401
    audit,
    change,
    clients,
    controller,
    fleet,
    hygiene,
    maintenance,
    msk,
    partitions,
    replication,
    storage,
    threads,
)
