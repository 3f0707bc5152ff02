"""The built-in rule catalogue: RULE_MODULES, one module per category, each declaring its
rules with auditor/declarations.py; auditor/registry.py collects them (and plugins' rules).

A check is ``(tables, params) -> DataFrame`` with the columns of
``auditor.findings.CHECK_COLUMNS``: DataFrame in, DataFrame out, no actions, no UDFs.
"""

from checks import (
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
    upgrade,
)

RULE_MODULES = (
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
    upgrade,
)
