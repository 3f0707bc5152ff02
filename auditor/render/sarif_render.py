"""SARIF 2.1.0 (OASIS) for code-scanning tools such as GitHub code scanning.

* ``tool.driver.rules``: every registered rule (plus any code a finding names that is not
  registered), with ``shortDescription`` (summary), ``fullDescription`` (why), ``help``
  (remediation, and a markdown version with why/remediation/example) and the default level.
* ``results``: one per finding: ``ruleId``/``ruleIndex``, ``level`` (critical and error ->
  ``error``, warning -> ``warning``, info -> ``note``), ``message``, ``partialFingerprints``
  (the finding fingerprint), a logical location for the resource (fully qualified as
  ``cluster/resource_type/resource_name``) and one for the cluster, and a physical location
  with the line number when the finding has ``location`` ``{"file", "line"}`` (lint of
  static files); its ``related`` lines (the other linted topics inheriting a default, the
  first 20: auditor/lint/placement.py) are ``relatedLocations``. Evidence, cluster and
  severity go to ``properties``.
* An incomplete audit is ``invocations[0].executionSuccessful = false`` with one error
  notification per failed source.

Options: ``indent`` (default 2).
"""

from __future__ import annotations

import json
from pathlib import PurePosixPath, PureWindowsPath
from urllib.parse import quote

from auditor import __version__
from auditor.findings import AuditResult, Finding

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
FINGERPRINT_KEY = "kafkaAuditFingerprint/v1"
MAX_RELATED = 20  # related locations per result (bounded whatever the finding carries)

LEVELS = {"critical": "error", "error": "error", "warning": "warning", "info": "note"}
# GitHub code scanning orders alerts by this property (0.1-10).
SECURITY_SEVERITY = {"critical": "9.0", "error": "7.0", "warning": "4.0", "info": "1.0"}


def level(severity: str) -> str:
    return LEVELS.get(severity, "warning")


def rule_descriptor(code: str, doc, fallback: Finding | None = None) -> dict:
    if doc is None:
        name = fallback.name if fallback else code
        severity = fallback.severity if fallback else "warning"
        return {
            "id": code,
            "name": name,
            "shortDescription": {"text": name},
            "defaultConfiguration": {"level": level(severity)},
            "properties": {"severity": severity},
        }
    markdown = (
        f"**{doc.summary}**\n\n**Why:** {doc.why}\n\n**Remediation:** {doc.remediation}\n\n"
        f"**Example:** {doc.example}"
    )
    return {
        "id": doc.code,
        "name": doc.name,
        "shortDescription": {"text": doc.summary},
        "fullDescription": {"text": doc.why},
        "help": {"text": f"{doc.remediation}\n\nWhy: {doc.why}", "markdown": markdown},
        "defaultConfiguration": {"level": level(doc.severity)},
        "properties": {
            "severity": doc.severity,
            "category": doc.category,
            "scope": doc.scope,
            "tags": ["kafka", doc.category],
            "security-severity": SECURITY_SEVERITY.get(doc.severity, "4.0"),
        },
    }


def artifact_uri(file: str) -> str:
    """A SARIF artifactLocation uri: relative paths stay relative (POSIX separators)."""
    text = str(file)
    if PureWindowsPath(text).drive:
        return PureWindowsPath(text).as_uri()
    path = PurePosixPath(text.replace("\\", "/"))
    if path.is_absolute():
        return path.as_uri()
    return quote(str(path), safe="/:@-._~!$&'()*+,;=")


def physical_location(location: dict | None) -> dict | None:
    if not location or not location.get("file"):
        return None
    out: dict = {"artifactLocation": {"uri": artifact_uri(location["file"])}}
    try:
        line = int(location.get("line"))
    except (TypeError, ValueError):
        line = 0
    if line >= 1:
        out["region"] = {"startLine": line}
    return out


def result_entry(f: Finding, rule_index: int) -> dict:
    loc: dict = {
        "logicalLocations": [
            {
                "name": f.resource_name,
                "fullyQualifiedName": f"{f.cluster}/{f.resource_type}/{f.resource_name}",
                "kind": "resource",
            },
            {"name": f.cluster, "fullyQualifiedName": f.cluster, "kind": "namespace"},
        ],
    }
    phys = physical_location(f.location)
    if phys:
        loc["physicalLocation"] = phys
    related = [
        {"id": n, "physicalLocation": p}
        for n, p in enumerate(
            (physical_location(r) for r in ((f.location or {}).get("related") or [])[:MAX_RELATED]), 1
        )
        if p
    ]
    return {
        "ruleId": f.rule,
        "ruleIndex": rule_index,
        "level": level(f.severity),
        "message": {"text": f.message or f"{f.rule} {f.name}: {f.resource_type} {f.resource_name}"},
        "locations": [loc],
        **({"relatedLocations": related} if related else {}),
        "partialFingerprints": {FINGERPRINT_KEY: f.fingerprint},
        "properties": {
            "severity": f.severity,
            "cluster": f.cluster,
            "clusterId": f.cluster_id,
            "resourceType": f.resource_type,
            "resourceName": f.resource_name,
            "evidence": f.evidence,
        },
    }


def document(result: AuditResult) -> dict:
    docs = result.rule_docs
    first_seen: dict[str, Finding] = {}
    for f in result.findings:
        first_seen.setdefault(f.rule, f)
    codes = sorted(set(docs) | set(first_seen))
    rules = [rule_descriptor(code, docs.get(code), first_seen.get(code)) for code in codes]
    index = {code: i for i, code in enumerate(codes)}
    notifications = [
        {
            "level": "error",
            "message": {
                "text": f"{item.get('cluster')}: source {item.get('source')}"
                f"{' ' + str(item['target']) if item.get('target') else ''} failed: {item.get('message')}"
                "; the audit is incomplete"
            },
            "descriptor": {"id": "AUD001"},
            "properties": {k: item.get(k) for k in ("cluster", "source", "target", "message")},
        }
        for item in result.incomplete
    ]
    invocation: dict = {"executionSuccessful": not result.is_incomplete}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    return {
        "$schema": SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "kafka-audit",
                        "fullName": "kafka-auditor",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": rules,
                    }
                },
                "invocations": [invocation],
                "results": [result_entry(f, index[f.rule]) for f in result.findings],
                "properties": {
                    "engine": result.engine,
                    "clusters": [c.get("name") for c in result.clusters],
                    "exempted": result.exempted,
                    "incomplete": result.incomplete,
                    "notes": result.notes,
                },
            }
        ],
    }


def render(result: AuditResult, indent: int | None = 2, **_options) -> str:
    return json.dumps(document(result), indent=indent, ensure_ascii=False, default=str) + "\n"
