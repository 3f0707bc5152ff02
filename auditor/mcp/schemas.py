"""The output schema of every tool: what its structured content holds, declared once.

The audits (check_snapshot, check_cluster, lint_files, lint_change, preflight) return the
document the command line prints with ``--format json``, so their schema is the report's own,
``docs/report.schema.json`` (shipped as ``auditor/data/report.schema.json``), extended with what
the server adds beside it: the exit code the command would give (``exit``), the documentation
and references of the rules the findings cite (``rules``), the notes the command line prints on
stderr (``notes``) and, when a result was cut to the size limit, what was cut (``truncated``).
``preflight`` keeps the command's ``preflight`` block. The other tools (rules, snapshots,
clusters, health, the fleet summary) have schemas of their own here.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources


def obj(required: tuple[str, ...] = (), *, extra: bool = True, **properties) -> dict:
    """A JSON Schema object with these properties (``extra``: other keys allowed)."""
    out = {"type": "object", "properties": properties}
    if required:
        out["required"] = list(required)
    if not extra:
        out["additionalProperties"] = False
    return out


def array(items: dict) -> dict:
    return {"type": "array", "items": items}


STRING = {"type": "string"}
INTEGER = {"type": "integer"}
BOOLEAN = {"type": "boolean"}
NULLABLE_STRING = {"type": ["string", "null"]}
CODE = {"type": "string", "pattern": "^[A-Z]{3}[0-9]{3}$"}
SEVERITY = {"enum": ["info", "warning", "error", "critical"]}

TRUNCATED = array(
    obj(
        ("path", "shown", "total"),
        path={"type": "string", "description": "Where in this result: a key path such as findings"},
        shown={"type": "integer", "description": "Items (or characters) kept"},
        total={"type": "integer", "description": "Items (or characters) there were"},
    )
)
EXIT = obj(
    ("code", "meaning"),
    code={"enum": [0, 1, 2, 3, 4], "description": "The exit code the command line gives for this result"},
    meaning=STRING,
    fail_on={"enum": ["info", "warning", "error", "critical", "never"]},
)
REFERENCE = obj(("title", "url"), title=STRING, url=STRING)
RULE_CITED = obj(
    ("code", "name", "severity", "summary", "remediation", "references"),
    code=CODE,
    name=STRING,
    severity=SEVERITY,
    category=STRING,
    summary=STRING,
    remediation=STRING,
    references=array(REFERENCE),
)
CITED = {
    "type": "object",
    "description": "The rules the findings cite, by code: summary, remediation and references (sources)",
    "additionalProperties": RULE_CITED,
}
COLLECTED = obj(
    ("cluster", "ok", "seconds", "errors"),
    cluster=STRING,
    ok=BOOLEAN,
    seconds={"type": "number"},
    errors=array(obj(("source", "message"), source=STRING, message=STRING)),
    notes=array(STRING),
)


@cache
def report() -> dict:
    """docs/report.schema.json, as the package ships it (without its $id: it is embedded here)."""
    text = (resources.files("auditor") / "data" / "report.schema.json").read_text(encoding="utf-8")
    doc = json.loads(text)
    doc.pop("$id", None)
    return doc


def report_with(**properties) -> dict:
    """The report's schema with these top-level keys allowed besides its own."""
    doc = copy.deepcopy(report())
    doc["properties"].update(properties)
    return doc


AUDIT_EXTRAS = {"exit": EXIT, "rules": CITED, "notes": array(STRING), "truncated": TRUNCATED}

CHECK = report_with(**AUDIT_EXTRAS)
CHECK_LIVE = report_with(**AUDIT_EXTRAS, collected=COLLECTED)
LINT = report_with(
    **AUDIT_EXTRAS,
    files=array(STRING),
    skipped=array(STRING),
)
LINT_CHANGE = report_with(
    **AUDIT_EXTRAS,
    files=array(STRING),
    skipped=array(STRING),
    change=obj(
        ("base_findings", "head_findings", "introduced", "fixed"),
        base_findings=INTEGER,
        head_findings=INTEGER,
        introduced={"type": "integer", "description": "Findings of head not in base: the findings listed"},
        fixed={"type": "integer", "description": "Findings of base no longer in head (baseline.stale)"},
    ),
)

BROKER = obj(
    ("broker_id", "verdict", "safe", "reasons"),
    broker_id=INTEGER,
    verdict={"enum": ["safe", "unsafe", "not evaluated"]},
    safe=BOOLEAN,
    reasons=array(CODE),
    blocked_partitions=INTEGER,
    offline_partitions=INTEGER,
    topics=array(STRING),
    consumer_groups=array(STRING),
)
PREFLIGHT_CLUSTER = obj(
    ("cluster", "safe_to_roll", "unsafe_brokers", "blockers", "brokers", "order", "fix_plan"),
    cluster=STRING,
    cluster_id=STRING,
    safe_to_roll=BOOLEAN,
    unsafe_brokers=array(INTEGER),
    not_evaluated_brokers=array(INTEGER),
    simulated=BOOLEAN,
    missing=array(STRING),
    incomplete=BOOLEAN,
    blockers=array(STRING),
    brokers=array(BROKER),
    order=array(INTEGER),
    controllers=array(obj(("node_id", "safe"), node_id=INTEGER, safe=BOOLEAN, is_leader=BOOLEAN)),
    unsafe_controllers=array(INTEGER),
    procedure=array(STRING),
    fix_plan={"type": ["object", "null"]},
)
PREFLIGHT = report_with(
    **AUDIT_EXTRAS,
    collected=COLLECTED,
    preflight=obj(
        ("safe_to_roll", "clusters"),
        selected_brokers={"type": ["array", "null"], "items": INTEGER},
        safe_to_roll=BOOLEAN,
        target_version=NULLABLE_STRING,
        upgrade_ready={"type": ["boolean", "null"]},
        upgrade_blockers=array(STRING),
        clusters=array(PREFLIGHT_CLUSTER),
    ),
    fix_plan_text={
        "type": ["string", "null"],
        "description": "The fix plan as `preflight --fix-plan FILE` writes it: a commented script for a person "
        "to review; this server never runs it",
    },
)

PARTITIONS = obj(("count", "partitions"), count=INTEGER, partitions=array(STRING))
HEALTH = obj(
    ("cluster", "health", "exit"),
    cluster=STRING,
    health=obj(
        ("healthy", "summary", "partitions", "errors"),
        healthy=BOOLEAN,
        summary=STRING,
        partitions=INTEGER,
        broker_id={"type": ["integer", "null"]},
        under_replicated=PARTITIONS,
        under_min_isr=PARTITIONS,
        offline=PARTITIONS,
        broker_out_of_isr=PARTITIONS,
        broker_not_leader=PARTITIONS,
        broker_missing=BOOLEAN,
        errors=array(STRING),
    ),
    exit=EXIT,
    truncated=TRUNCATED,
)

RULE_LISTED = obj(
    ("code", "name", "severity", "category", "commands", "summary"),
    code=CODE,
    name=STRING,
    severity=SEVERITY,
    category=STRING,
    scope=STRING,
    commands=array(STRING),
    summary=STRING,
)
RULES = obj(("rules",), rules=array(RULE_LISTED), truncated=TRUNCATED)
RULE = obj(
    ("code", "name", "severity", "category", "commands", "summary", "why", "remediation", "references"),
    code=CODE,
    name=STRING,
    severity=SEVERITY,
    category=STRING,
    scope=STRING,
    commands=array(STRING),
    summary=STRING,
    why=STRING,
    remediation=STRING,
    example=STRING,
    params=array(obj(("name", "type", "doc"), name=STRING, type=STRING, doc=STRING)),
    references=array(REFERENCE),
    truncated=TRUNCATED,
)

SNAPSHOT = obj(
    ("path", "cluster", "cluster_id", "collected_at", "incomplete"),
    path=STRING,
    cluster=STRING,
    cluster_id=STRING,
    collected_at=STRING,
    incomplete=BOOLEAN,
    newest=BOOLEAN,
    platform=NULLABLE_STRING,
    environment=NULLABLE_STRING,
)
SNAPSHOT_INFO = obj(
    ("snapshots",),
    snapshots=array(
        obj(
            ("path", "manifest", "tables", "incomplete"),
            path=STRING,
            manifest={"type": "object"},
            tables={
                "type": "object",
                "additionalProperties": obj(("file", "rows"), file=STRING, rows=INTEGER),
            },
            incomplete=BOOLEAN,
        )
    ),
    notes=array(STRING),
    truncated=TRUNCATED,
)
CLUSTERS = obj(
    ("live", "inventory", "snapshots", "roots"),
    live={
        "type": "boolean",
        "description": "Live tools (check_cluster, cluster_health, preflight on cluster) on",
    },
    roots={"type": "array", "items": STRING, "description": "The served roots, by their directory names"},
    inventory={
        "type": ["object", "null"],
        "properties": {
            "file": STRING,
            "clusters": array(
                obj(
                    ("name", "labels", "sources"),
                    name=STRING,
                    labels={"type": "object"},
                    sources=array(STRING),
                    kafka_version=NULLABLE_STRING,
                )
            ),
            "errors": array(STRING),
        },
    },
    snapshots=array(SNAPSHOT),
    notes=array(STRING),
    truncated=TRUNCATED,
)
FLEET_SUMMARY = obj(
    ("path", "runs", "summary"),
    path=STRING,
    runs=array(STRING),
    summary=obj(
        ("schema_version", "run_date", "totals", "clusters", "rules"),
        schema_version={"const": 1},
        run_date=STRING,
        totals={"type": "object"},
        clusters=array({"type": "object"}),
        rules=array({"type": "object"}),
        top=array({"type": "object"}),
        causes=array({"type": "object"}),
        incomplete=array({"type": "object"}),
    ),
    exit=EXIT,
    rules=CITED,
    truncated=TRUNCATED,
)
