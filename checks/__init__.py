"""The built-in rule catalogue: one module per category, each declaring its category once
(``CATEGORY``) and its rules with auditor/declarations.py; auditor/registry.py collects them
(and plugins' rules). ``change`` holds the rules about a proposed change, of several categories.

A check is ``(tables, params) -> DataFrame`` with the columns of
``auditor.findings.CHECK_COLUMNS``: DataFrame in, DataFrame out, no actions, no UDFs.
"""

from importlib import import_module

# The catalogue, in the order of shared/RULES.md (the order the docs list the categories in).
NAMES = (
    "audit",
    "replication",
    "partitions",
    "controller",
    "threads",
    "storage",
    "clients",
    "msk",
    "hygiene",
    "change",
    "fleet",
    "maintenance",
    "upgrade",
)
RULE_MODULES = tuple(import_module(f"checks.{name}") for name in NAMES)
