"""Severities and their order, defined once (least severe first).

Its own module, below everything that uses it: the registry validates rule severities and
the findings module orders findings, and neither may import the other's side of the
catalogue (tests/test_import_graph.py).
"""

from __future__ import annotations

SEVERITIES = ("info", "warning", "error", "critical")
SEVERITY_RANK = {s: i for i, s in enumerate(SEVERITIES)}
WORST_FIRST = tuple(reversed(SEVERITIES))
FAIL_ON = (*SEVERITIES, "never")
# A check may return this column besides the findings columns: the severity of that one
# finding, where the facts of the row decide it (CTL002: a stale leader is critical, ISR lag a
# warning). Null, absent or not a severity: the rule's declared severity. A severity set for
# the rule in kafka-audit.toml overrides both (auditor/engine/runner.py).
ROW_SEVERITY = "row_severity"


def fails(severities, fail_on: str) -> bool:
    """Whether any of ``severities`` is at or above ``fail_on`` ("never": none is)."""
    return fail_on != "never" and any(SEVERITY_RANK[s] >= SEVERITY_RANK[fail_on] for s in severities)
