"""Cluster scores and letter grades, one definition for every report.

Each cluster starts at 100 points. Each rule that fired on it costs its severity weight
(critical 40, error 20, warning 8, info 2), and every further finding of the same rule a
tenth of that weight more, at most the weight again (so one rule costs at most twice its
weight: one bad default hitting 500 topics is one problem, not 500). Score =
max(0, 100 - penalty). Letter: A >= 90, B >= 80, C >= 70, D >= 60, else F, capped by the
worst severity found: a warning caps the grade at B, an error at C, a critical at D. A
cluster whose audit is incomplete is not graded ("?") and is never shown as healthy.

Coverage (auditor/coverage.py): grades are per cluster, not per category. A cluster on
which some category had no rule evaluated at all (its inputs were not collected: no
metrics for THR, no client inventory for CLI...) is graded at most B, whatever its score,
and the reports say why ("not graded A: THR not evaluated"). A category only partly
evaluated does not cap the grade; its missing rules are listed as not evaluated.

What is graded: a cluster by itself. Fleet rules (FLT: drift from the rest of the fleet,
version skew) are reported and counted, but do not change a cluster's grade: `check` and
`fleet` give a cluster the same grade, whatever clusters it is audited with.

Grades are computed here only (``grade_clusters``), by the command that audits: the result
carries them (AuditResult.cluster_grades(), FleetResult.clusters); renderers only show them.
"""

from __future__ import annotations

from collections.abc import Iterable

from auditor import coverage
from auditor.severity import SEVERITY_RANK

SEVERITY_WEIGHT = {"critical": 40, "error": 20, "warning": 8, "info": 2}
GRADE_CAP = {"critical": "D", "error": "C", "warning": "B", "info": "A"}
GRADE_THRESHOLDS = (("A", 90), ("B", 80), ("C", 70), ("D", 60), ("F", 0))
GRADES = tuple(g for g, _ in GRADE_THRESHOLDS)


def cluster_score(rule_hits: dict[str, tuple[str, int]]) -> int:
    """Score 0..100 from {rule code: (severity, number of findings)}."""
    penalty = 0.0
    for severity, count in rule_hits.values():
        weight = SEVERITY_WEIGHT[severity]
        penalty += weight + min(weight, (count - 1) * weight / 10)
    return max(0, round(100 - penalty))


COVERAGE_CAP = "B"  # the best grade of a cluster with a category entirely not evaluated


def grade(score: int, worst: str | None, incomplete: bool = False, not_evaluated=()) -> str:
    """Letter grade from a score, capped by the worst severity and at COVERAGE_CAP when
    ``not_evaluated`` names a category of which no rule was evaluated; "?" when incomplete."""
    if incomplete:
        return "?"
    letter = next(g for g, floor in GRADE_THRESHOLDS if score >= floor)
    if worst is not None:
        letter = max(letter, GRADE_CAP[worst], key=GRADES.index)
    if not_evaluated:
        letter = max(letter, COVERAGE_CAP, key=GRADES.index)
    return letter


def worst_severity(severities) -> str | None:
    present = [s for s in severities if s]
    return max(present, key=SEVERITY_RANK.__getitem__) if present else None


# A cluster a fleet report names only through a fleet finding about it (FLT004: missing
# from this run): not audited, so not graded.
NOT_AUDITED = {"score": None, "grade": "?", "grade_note": "not audited in this run"}


def grade_clusters(
    clusters: Iterable[dict],
    hits: Iterable[dict],
    incomplete: set[str],
    covered: dict[str, list[dict]] | None = None,
    ungraded_rules: frozenset[str] = frozenset(),
) -> dict[str, dict]:
    """Per cluster name: {"score", "grade", "grade_note"}. ``clusters``: {"id", "name"} of
    the clusters audited; ``hits``: per cluster and rule {"cluster", "rule", "severity",
    "count"} (a cluster only they name is graded too); ``incomplete``: names of clusters
    whose audit is incomplete; ``covered``: coverage entries per cluster id;
    ``ungraded_rules``: codes that do not count (the fleet rules)."""
    ids: dict[str, str | None] = {}
    for c in clusters:
        ids.setdefault(str(c.get("name") or c.get("id")), c.get("id"))
    rule_hits: dict[str, dict[str, tuple[str, int]]] = {name: {} for name in ids}
    for h in hits:
        per_rule = rule_hits.setdefault(h["cluster"], {})
        if h["rule"] in ungraded_rules:
            continue
        severity, count = per_rule.get(h["rule"], (h["severity"], 0))
        worst = max(severity, h["severity"], key=SEVERITY_RANK.__getitem__)
        per_rule[h["rule"]] = (worst, count + h["count"])
    for name in incomplete:
        rule_hits.setdefault(name, {})
    out = {}
    for name, per_rule in rule_hits.items():
        gaps = (covered or {}).get(ids.get(name), []) if ids.get(name) is not None else []
        score = cluster_score(per_rule)
        out[name] = {
            "score": score,
            "grade": grade(
                score,
                worst_severity(s for s, _ in per_rule.values()),
                name in incomplete,
                coverage.missing_categories(gaps),
            ),
            "grade_note": coverage.grade_note(gaps),
        }
    return out
