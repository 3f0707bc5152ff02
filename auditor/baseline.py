"""Baselines: findings accepted as they are, so that a run fails only on new ones (lint, check, fleet).

One format, as ruff's and semgrep's: the fingerprint of each finding (auditor.findings.fingerprint,
sha256 of rule|cluster|resource type|resource name) with what it was computed from, and for
lint the file the finding is in::

    {"version": 1, "tool": "kafka-auditor",
     "findings": [{"fingerprint", "rule", "cluster", "resource_type", "resource_name", "file"}, ...]}

An entry matches the finding it was written from: same fingerprint and, when it names a file
(lint), the same file. The same topic name in another file is another finding, not silenced
by it (issue 38). One entry per (fingerprint, file): a resource defined at two lines of one
file is one entry, and ``--write-baseline`` says so when the counts differ.

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
    file: str | None = None  # lint: the file the finding is in; None: any (check, fleet, earlier files)

    @classmethod
    def of(cls, f: Finding) -> Entry:
        return cls(f.fingerprint, f.rule, f.cluster, f.resource_type, f.resource_name, file_of(f))

    @property
    def key(self) -> tuple[str, str | None]:
        return (self.fingerprint, self.file)

    def to_json(self) -> dict:
        """As written: ``file`` only when the entry names one (lint)."""
        return {k: v for k, v in asdict(self).items() if k != "file" or v is not None}

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


def file_of(f: Finding) -> str | None:
    return (f.location or {}).get("file") or None


@dataclass
class Baseline:
    path: str
    entries: dict[tuple[str, str | None], Entry]  # by (fingerprint, file)

    def match(self, f: Finding) -> tuple[str, str | None] | None:
        """The key of the entry ``f`` matches: its own file's, else one for any file."""
        for key in ((f.fingerprint, file_of(f)), (f.fingerprint, None)):
            if key in self.entries:
                return key
        return None

    def fingerprints(self) -> list[str]:
        """The fingerprints of the entries that name no file: what matches a finding of check or
        fleet (which are in no file)."""
        return sorted({fp for fp, file in self.entries if file is None})

    def outcome(self, matched: set, clusters: set[str]) -> Outcome:
        """What a run that matched the entries ``matched`` (keys of this baseline, or bare
        fingerprints of entries naming no file) over the ``clusters`` audited makes of it."""
        matched = {k if isinstance(k, tuple) else (k, None) for k in matched}
        stale = [e for key, e in sorted(self.entries.items(), key=_order) if key not in matched]
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
            "stale": [e.to_json() for e in self.stale],
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
        entries[entry.key] = entry
    return Baseline(str(p), entries)


def _order(item):
    (fp, file), _ = item
    return (fp, file or "")


def _entry(item) -> Entry | None:
    if isinstance(item, str):
        return Entry(item)
    if not isinstance(item, dict) or not isinstance(item.get("fingerprint"), str):
        return None

    def text(key):
        return item.get(key) if isinstance(item.get(key), str) else None

    rtype, rname = text("resource_type"), text("resource_name")
    if rtype is None and isinstance(item.get("resource"), str) and ":" in item["resource"]:
        # lint's earlier "TYPE:NAME" entries matched by fingerprint alone, in any file: kept so
        rtype, _, rname = item["resource"].partition(":")
        return Entry(item["fingerprint"], text("rule"), text("cluster"), rtype, rname)
    return Entry(item["fingerprint"], text("rule"), text("cluster"), rtype, rname, text("file"))


def unique(entries) -> list[Entry]:
    """One entry per (fingerprint, file), in a stable order."""
    return sorted(
        {e.key: e for e in entries}.values(),
        key=lambda e: (
            e.cluster or "",
            e.rule or "",
            e.resource_type or "",
            e.resource_name or "",
            e.file or "",
            e.fingerprint,
        ),
    )


def document(entries) -> str:
    """The baseline file of ``entries`` (Entry objects): one per (fingerprint, file). The
    ``file`` key is written only by lint (check's and fleet's findings are in no file)."""
    rows = [e.to_json() for e in unique(entries)]
    return (
        json.dumps(
            {"version": VERSION, "tool": "kafka-auditor", "findings": rows}, indent=2, ensure_ascii=False
        )
        + "\n"
    )


def written_line(path, findings: int, entries: int) -> str:
    """What --write-baseline says: the entries the file holds, and why fewer than the findings."""
    if findings == entries:
        return f"{path}: baseline of {entries} finding(s) written"
    return (
        f"{path}: baseline of {entries} entries written for {findings} finding(s): "
        f"{findings - entries} repeat an entry's rule, resource and file at another line"
    )


def apply(baseline: Baseline, findings: list[Finding], clusters: set[str]) -> tuple[list[Finding], Outcome]:
    """The findings not in the baseline, and the outcome (matched, stale, another cluster's)."""
    keys = [baseline.match(f) for f in findings]
    kept = [f for f, k in zip(findings, keys, strict=True) if k is None]
    return kept, baseline.outcome({k for k in keys if k is not None}, clusters)
