"""The JSON contract (shared/DESIGN.md), schema_version 1."""

from __future__ import annotations

import json

from auditor import __version__
from auditor.findings import AuditResult

SCHEMA_VERSION = 1


def document(result: AuditResult) -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "kafka-auditor", "version": __version__, "engine": result.engine},
        "clusters": result.clusters,
        "incomplete": result.incomplete,
        "summary": result.summary() | {"exempted": result.exempted},
        "findings": [f.to_json() for f in result.findings],
    }


def render(result: AuditResult, **_options) -> str:
    return json.dumps(document(result), indent=2, ensure_ascii=False) + "\n"
