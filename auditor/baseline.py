"""Baselines: findings accepted as they are, so that a run fails only on new ones (lint, check, fleet).

One format, as ruff's and semgrep's: the fingerprint of each finding (auditor.findings.fingerprint,
sha256 of rule|cluster|resource type|resource name) with what it was computed from::

    {"version": 1, "tool": "kafka-auditor",
     "findings": [{"fingerprint", "rule", "cluster", "resource_type", "resource_name"}, ...]}

Files written by lint before this format (``{"schema_version": 1, "kind": "lint-baseline",
"findings": [{"fingerprint", "rule", "resource": "TYPE:NAME", "file"}]}``, or a bare list of
fingerprints) are still read: their fingerprints match as before; they carry no cluster, so
a baseline of another cluster is recognised by recomputing the fingerprint of each entry for
the audited clusters.

A run reports how many baselined findings it matched and which entries are stale (in the
baseline, no longer found), and says loudly when the baseline was written for another
cluster (lint with ``--against`` names the cluster after the snapshot, without it "lint").
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from auditor.errors import UsageError
from auditor.findings import Finding, fingerprint

VERSION = 1
MAX_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class Entry:
    fingerprint: str
    rule: str | None = None
    cluster: str | None = None  # None: a file of the earlier lint format
    resource_type: str | None = None
    resource_name: str | None = None

    @classmethod
    def of(cls, f: Finding) -> Entry:
        return cls(f.fingerprint, f.rule, f.cluster, f.resource_type, f.resource_name)

    def written_for(self, clusters: set[str]) -> bool:
        """Could this entry be about one of ``clusters``?"""
        if self.cluster is not None:
            return self.cluster in clusters
        if self.rule is None or self.resource_type is None:
            return True  # a bare fingerprint: nothing to tell by
        return any(
            fingerprint(self.rule, c, self.resource_type, self.resource_name or "") == self.fingerprint
            for c in clusters
        )


@dataclass
class Baseline:
    path: str
    entries: dict[str, Entry]  # by fingerprint

    def __contains__(self, fp: str) -> bool:
        return fp in self.entries

    def outcome(self, matched: set[str], clusters: set[str]) -> Outcome:
        """What a run that found the fingerprints ``matched`` (of this baseline) over the
        ``clusters`` audited makes of it."""
        stale = [e for fp, e in sorted(self.entries.items()) if fp not in matched]
        foreign = None
        if self.entries and not matched and not any(e.written_for(clusters) for e in self.entries.values()):
            written = sorted({e.cluster for e in self.entries.values() if e.cluster is not None})
            foreign = (
                f"{self.path}: the baseline matched nothing: it was written for cluster "
                f"{', '.join(written) if written else 'another cluster'}, this run audits "
                f"{', '.join(sorted(clusters)) or 'no cluster'}"
            )
        return Outcome(self.path, len(matched), stale, foreign)


@dataclass
class Outcome:
    path: str
    matched: int
    stale: list[Entry]
    foreign: str | None  # the warning when the baseline is about other clusters

    def line(self) -> str:
        return (
            f"{self.matched} baselined finding(s) matched, {len(self.stale)} stale "
            "(in the baseline, no longer found)"
        )

    def to_json(self) -> dict:
        return {
            "file": self.path,
            "matched": self.matched,
            "stale": [asdict(e) for e in self.stale],
            **({"warning": self.foreign} if self.foreign else {}),
        }


def read(path: str | Path) -> Baseline:
    """A baseline file (this format or lint's earlier one); one-line UsageError naming it otherwise."""
    from auditor import safe_io, safe_json

    p = Path(path)
    try:
        raw = safe_json.loads(safe_io.read_text(p, limit=MAX_BYTES), str(p))
    except safe_json.JSONTooDeep as e:  # one line naming the file, not a RecursionError
        raise UsageError(str(e)) from None
    except FileNotFoundError:
        raise UsageError(f"{p}: baseline file not found (write one with --write-baseline)") from None
    except safe_io.FileRefused as e:  # a FIFO or a device (also behind a symlink), or huge
        raise UsageError(str(e)) from None
    except json.JSONDecodeError as e:
        raise UsageError(f"{p}:{e.lineno}: baseline is not valid JSON ({e.msg})") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{p}: unreadable baseline ({e})") from None
    if isinstance(raw, dict):  # a version this tool does not know is refused, not read as 1
        for key in ("version", "schema_version"):
            if key in raw and (type(raw[key]) is not int or raw[key] != VERSION):
                shown = json.dumps(raw[key])[:40]
                raise UsageError(f"{p}: baseline {key} {shown} is not supported (this tool reads {VERSION})")
    items = raw.get("findings") if isinstance(raw, dict) else raw
    if not isinstance(items, list):
        raise UsageError(f"{p}: baseline must hold a 'findings' list")
    entries = {}
    for item in items:
        entry = _entry(item)
        if entry is None:
            raise UsageError(f"{p}: every baseline entry needs a fingerprint")
        entries[entry.fingerprint] = entry
    return Baseline(str(p), entries)


def _entry(item) -> Entry | None:
    if isinstance(item, str):
        return Entry(item)
    if not isinstance(item, dict) or not isinstance(item.get("fingerprint"), str):
        return None

    def text(key):
        return item.get(key) if isinstance(item.get(key), str) else None

    rtype, rname = text("resource_type"), text("resource_name")
    if rtype is None and isinstance(item.get("resource"), str) and ":" in item["resource"]:
        rtype, _, rname = item["resource"].partition(":")  # lint's earlier "TYPE:NAME"
    return Entry(item["fingerprint"], text("rule"), text("cluster"), rtype, rname)


def document(entries) -> str:
    """The baseline file of ``entries`` (Entry objects): one per fingerprint, in a stable order."""
    unique = {e.fingerprint: e for e in entries}.values()
    ordered = sorted(
        unique,
        key=lambda e: (
            e.cluster or "",
            e.rule or "",
            e.resource_type or "",
            e.resource_name or "",
            e.fingerprint,
        ),
    )
    return (
        json.dumps(
            {"version": VERSION, "tool": "kafka-auditor", "findings": [asdict(e) for e in ordered]},
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )


def apply(baseline: Baseline, findings: list[Finding], clusters: set[str]) -> tuple[list[Finding], Outcome]:
    """The findings not in the baseline, and the outcome (matched, stale, another cluster's)."""
    matched = {f.fingerprint for f in findings if f.fingerprint in baseline}
    return [f for f in findings if f.fingerprint not in baseline], baseline.outcome(matched, clusters)
