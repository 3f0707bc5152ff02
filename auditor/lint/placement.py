"""Where lint reports a default the linted topics inherit, and which suppression covers a line.

A default the topics inherit (the rules that declare ``cause=Inherits(...)`` and report the
setting itself, resource ``config`` named after the key: REP004's min.insync.replicas=1,
REP005's unclean leader election) is ONE finding, in lint as in check: one setting, one change
fixes every topic that inherits it. Where it is reported:

1. at the line that sets the key, when a linted file sets it (Locator in run.py);
2. else at the first linted topic (in file and line order) that inherits it: the place a
   reviewer of the change sees it, and what SARIF/GitHub annotate. The other linted topics that
   inherit it are its related locations: the first MAX_RELATED of them, and how many there are
   (JSON ``location.related`` / ``related_count``, SARIF ``relatedLocations``);
3. else where the configuration resource is (a Strimzi ``Kafka``, an MSK configuration).

Why not one finding per inheriting topic (what lint did before issue 47): every copy named
every inheriting topic, so N topics gave N findings of N names each, a report quadratic in the
input (4,000 topics: 250 MB). Copies of one capped message would be linear but are still N
annotations of one problem (GitHub shows 10 annotations of a kind per step and drops the rest);
one finding with related locations is constant in size whatever the number of topics, keeps
the one fingerprint check and baselines use, and still puts the first affected topic of the
change under the reviewer's eyes.

A suppression on an inheriting topic's line silences the finding there: that location is
dropped (and the suppression counts as used); the finding is suppressed when every location
it had is. The rule lists the first ``max_listed`` topics by name (the report's cap); with
``--against`` a cluster whose other topics sort before the change's, lint asks the rule once
more for every inheriting topic (:func:`every_inheriting`), so a proposed topic past the cap is
still found. That listing only locates; the report keeps the rule's capped message.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from auditor.declarations import Inherits
from auditor.findings import Finding
from auditor.lint.model import Suppression

MAX_RELATED = 20  # related locations a finding names (all are counted)
LIST_ALL = 1_000_000  # max_listed for the locating query: every inheriting topic


def inherited_default(f: Finding, rules) -> Inherits | None:
    """The Inherits declaration of a finding about the inherited setting itself, else None."""
    rule = rules.get(f.rule)
    how = getattr(rule, "cause", None)
    if isinstance(how, Inherits) and f.resource_type == "config" and f.resource_name == how.key:
        return how
    return None


def default_key(f: Finding, how: Inherits) -> tuple:
    """One default per rule, cluster and config layer (a rule may report the value of two layers)."""
    return (f.rule, f.fingerprint, str(f.evidence.get(how.layer_field)))


def needs_every_topic(f: Finding) -> bool:
    """The rule counted more inheriting topics than it listed."""
    listed = f.evidence.get("topics") or []
    count = f.evidence.get("topics_inheriting")
    return isinstance(count, int) and isinstance(listed, list) and count > len(listed)


def every_inheriting(run, findings: Iterable[Finding], rules, cfg) -> dict[tuple, list[str]]:
    """For the inherited defaults among ``findings`` whose rule listed fewer topics than it
    counted: every inheriting topic, from one more run of those rules with ``max_listed``
    lifted. ``run(rules, cfg)`` runs rules on the loaded engine and returns their findings."""
    wanted = {}
    for f in findings:
        how = inherited_default(f, rules)
        if how is not None and needs_every_topic(f):
            wanted[default_key(f, how)] = how
    if not wanted:
        return {}
    codes = sorted({key[0] for key in wanted})
    params = dict(cfg.params)
    for code in codes:
        params[code] = {**(params.get(code) or {}), "max_listed": LIST_ALL}
    found = run([rules[c] for c in codes], replace(cfg, params=params))
    out = {}
    for f in found:
        how = inherited_default(f, rules)
        if how is not None and default_key(f, how) in wanted:
            out[default_key(f, how)] = [str(t) for t in f.evidence.get("topics") or []]
    return out


class SuppressionIndex:
    """Suppressions by (file, code): which one covers a finding's lines, in constant time per
    line (a scan of every suppression per finding was quadratic: 10,000 topics, each with a
    suppression and a finding)."""

    def __init__(self, suppressions: Iterable[Suppression]):
        self._by: dict[tuple[str, str, int], Suppression] = {}
        for s in suppressions:
            covered = s.line + 1 if s.own_line else s.line
            for code in s.codes:
                self._by.setdefault((s.file, code, covered), s)

    def covering(self, file, rule: str, lines: Iterable[int]) -> Suppression | None:
        for n in lines:
            hit = self._by.get((file, rule, n))
            if hit is not None:
                return hit
        return None


@dataclass
class Placement:
    """The inherited defaults of a lint run, one per default, with every location seen in any
    of the run's engine runs (a topic defined differently in two files is linted twice)."""

    found: dict[tuple, Finding] = field(default_factory=dict)
    where: dict[tuple, dict[tuple, tuple]] = field(default_factory=dict)  # key -> (file, line) -> anchors

    def add(self, key: tuple, f: Finding, locations: list[tuple]) -> None:
        self.found.setdefault(key, f)
        seen = self.where.setdefault(key, {})
        for file, line, anchors in locations:
            seen.setdefault((file, line), anchors)

    def findings(self, suppressions: SuppressionIndex) -> tuple[list[Finding], int]:
        """(one finding per default at its first unsuppressed location, with the next ones as
        related locations; how many defaults every location of which is suppressed)."""
        out, suppressed = [], 0
        for key, f in self.found.items():
            places = []
            for (file, line), anchors in sorted(
                self.where[key].items(), key=lambda item: (item[0][0] or "", item[0][1] or 0)
            ):
                hit = suppressions.covering(file, f.rule, anchors)
                if hit is not None:
                    hit.used += 1
                else:
                    places.append((file, line))
            if not places:
                suppressed += 1
                continue
            (file, line), others = places[0], places[1:]
            location = {"file": file, "line": line} if file else None
            if location is not None and others:
                location["related"] = [{"file": o[0], "line": o[1]} for o in others[:MAX_RELATED]]
                location["related_count"] = len(others)
            out.append(replace(f, location=location))
        return out, suppressed
