"""Root causes, the data: one failure or one cluster-wide setting that explains many findings.

A cause's id is ``KIND:DETAIL``, unique within its cluster (a finding carries its cluster and
its cause id; ``Cause`` carries both). Which findings a cause explains is computed in the
engine, as one more stage after the rules (auditor/engine/root_causes.py); this module holds
what every layer reads (findings, the fleet job, the renderers): the kinds, the words of
each, and the summaries. It imports nothing of the engine or the rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

BROKER_DOWN, LOG_DIR, DEFAULT = "broker-unregistered", "log-dir-offline", "cluster-default"


@dataclass(frozen=True)
class Cause:
    """One root cause, listed once per report (``AuditResult.causes``)."""

    id: str
    cluster: str
    kind: str
    title: str
    remediation: str
    count: int  # findings it explains (not exempted)
    rules: tuple[str, ...]

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "cluster": self.cluster,
            "kind": self.kind,
            "title": self.title,
            "remediation": self.remediation,
            "count": self.count,
            "rules": list(self.rules),
        }


def describe(cluster: str, cause_id: str, count: int, rules: Iterable[str]) -> Cause:
    """The Cause of a cause id (the words of each kind are here only)."""
    kind, _, detail = cause_id.partition(":")
    if kind == BROKER_DOWN:
        title = f"broker {detail} is not registered (down?)"
        fix = (
            f"bring broker {detail} back (or, if it was removed, reassign its replicas): "
            "these findings clear when it rejoins the ISR"
        )
    elif kind == LOG_DIR:
        title = f"broker {detail} has an offline log dir"
        fix = f"replace the failed disk of broker {detail} (or drop the dir from log.dirs) and restart it"
    else:
        title = f"{detail} inherited by {count} finding(s)"
        fix = "change the cluster default, not each topic"
    return Cause(cause_id, cluster, kind, title, fix, count, tuple(sorted(set(rules))))


def summarise(groups: Iterable[tuple[str, str, int, Iterable[str]]]) -> list[Cause]:
    """Causes from (cluster, cause id, findings, rules) groups: most findings first."""
    causes = [describe(cluster, cause, count, rules) for cluster, cause, count, rules in groups]
    return sorted(causes, key=lambda c: (-c.count, c.cluster, c.id))


def headline(causes: list[Cause], total: int) -> str:
    """The first line of a report's "Fix first" section."""
    explained = sum(c.count for c in causes)
    return f"Fix first: {len(causes)} root cause(s) explain {explained} of {total} finding(s)"


def from_findings(findings) -> list[Cause]:
    """The causes of findings held in memory (`check`: every finding is there)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for f in findings:
        if f.cause:
            groups.setdefault((f.cluster, f.cause), []).append(f.rule)
    return summarise((cluster, cause, len(rules), rules) for (cluster, cause), rules in groups.items())
