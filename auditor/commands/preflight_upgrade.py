"""`kafka-audit preflight --target-version 4.N`: the upgrade path of each cluster.

The rules of the upgrade preflight (those that declare runs_in "upgrade": CLI002-CLI004, CTL009,
DSK003, UPG001-UPG012) judge the cluster against the target release's entry of the upgrade table
(auditor/data/kafka4_upgrades.json; their ``target_version`` parameter, set here). This module adds
the answer an engineer reads first, per cluster:

* the hops from the running version to the target (auditor/kafka_upgrades.py ``path``: Kafka's
  upgrade notes; on MSK, AWS's update-cluster-kafka-version and in-place KRaft migration), each
  with the commands it takes;
* the findings that block each hop (an upgrade rule's finding at error or above: ``blocks``),
  and those to know about;
* what can be done now: the first hop's steps when nothing blocks it, else the fixes of its
  blockers.

A cluster is "ready" when no finding blocks and the target is one hop away, "not ready" when a
finding blocks or more hops come first, "unknown" when its snapshot is incomplete or its version
is not known. The exit code follows: 1 when a cluster is not ready (as an unsafe roll), 3 when
the snapshot is incomplete.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from auditor import kafka_upgrades as upgrades
from auditor.config import AuditConfig
from auditor.findings import Finding
from auditor.severity import SEVERITY_RANK

TARGET_PARAM = "target_version"
REQUIRED_HOPS = ("bridge", "migrate", "floor", "unavailable")
# Where a rule's finding belongs on the path: the hop kind it blocks or informs (the target hop,
# "upgrade", for every other upgrade rule); "now" for what is not tied to a hop.
HOP_OF = {
    "UPG001": "migrate",
    "UPG005": "migrate",
    "UPG002": "floor",
    "UPG003": "finalize",
    "CTL009": "finalize",
    "UPG006": "now",
    "UPG010": "now",
}


# The findings that are a hop's reason (the migration is the answer to UPG001): shown as "why" on
# it, and they keep the cluster "not ready"; "what can be done now" does not list them as fixes.
HOP_REASON = {"UPG001": "migrate", "UPG002": "floor"}


def blocks(f: Finding, upgrade_rules: set[str]) -> bool:
    """An upgrade rule's finding at error or above blocks the upgrade (UPG003 below 3.3-IV3,
    UPG007's per-broker min.insync.replicas, UPG008's used early-access share groups, UPG012's
    refused values; UPG001, UPG002, UPG005, CLI002, CLI004, DSK003 always): a severity set in
    kafka-audit.toml moves it."""
    return f.rule in upgrade_rules and SEVERITY_RANK[f.severity] >= SEVERITY_RANK["error"]


def upgrade_rule_codes() -> set[str]:
    from auditor.registry import rules_run_by

    return {r.code for r in rules_run_by("upgrade")}


def with_target(config: AuditConfig, line: str) -> AuditConfig:
    """The config with every rule that has a ``target_version`` parameter set to ``line``."""
    from auditor.registry import rules_run_by

    return dataclasses.replace(
        config, params=upgrades.target_params(config.params, line, rules_run_by("upgrade"))
    )


@dataclass
class HopView:
    number: int
    kind: str
    to: str
    title: str
    steps: list[str]
    cite: str | None
    blocking: list[Finding] = field(default_factory=list)
    notes: list[Finding] = field(default_factory=list)
    reasons: list[Finding] = field(default_factory=list)  # why this hop exists (HOP_REASON)

    def to_json(self) -> dict:
        return {
            "number": self.number,
            "kind": self.kind,
            "to": self.to,
            "title": self.title,
            "steps": self.steps,
            "cite": self.cite,
            "blocked": bool(self.blocking),
            "because": [_finding_json(f) for f in self.reasons],
            "blocking": [_finding_json(f) for f in self.blocking],
            "notes": [_finding_json(f) for f in self.notes],
        }


@dataclass
class ClusterUpgrade:
    cluster: str
    cluster_id: str
    target: str
    running: str | None
    mode: str | None
    metadata_version: str | None
    platform: str | None
    status: str  # ready | not ready | unknown
    hops: list[HopView]
    now: list[str]
    other: list[Finding] = field(default_factory=list)  # findings tied to no hop (UPG006, UPG010)
    notes: list[str] = field(default_factory=list)  # the unreleased target, MSK end of support ...

    @property
    def blocking(self) -> list[Finding]:
        return [f for h in self.hops for f in h.reasons + h.blocking]

    def to_json(self) -> dict:
        return {
            "cluster": self.cluster,
            "cluster_id": self.cluster_id,
            "target": self.target,
            "running_version": self.running,
            "metadata_mode": self.mode,
            "metadata_version": self.metadata_version,
            "platform": self.platform,
            "status": self.status,
            "hops": [h.to_json() for h in self.hops],
            "now": self.now,
            "other": [_finding_json(f) for f in self.other],
            "notes": self.notes,
        }


def _finding_json(f: Finding) -> dict:
    return {
        "rule": f.rule,
        "severity": f.severity,
        "resource": f.resource_name,
        "message": f.message,
        "fingerprint": f.fingerprint,
    }


def upgrade_facts(tables):
    """Per cluster, what the path is computed from: version, mode, metadata.version level and
    name, platform, kraft.version (checks.upgrade.group_features). DataFrame only."""
    from checks.upgrade import group_features

    return tables.derived(group_features).select(
        "cluster_id", "cluster", "platform", "mode", "version", "mv_level", "mv_name", "kraft_version"
    )


def plan_upgrades(
    target: str, facts: list[dict], findings: list[Finding], refs, incomplete_clusters: set[str]
) -> list[ClusterUpgrade]:
    """Each cluster's path to ``target`` with the upgrade findings placed on its hops."""
    codes = upgrade_rule_codes()
    by_id = {f["cluster_id"]: f for f in facts}
    entry = upgrades.release(target)
    out = []
    for ref in refs:
        cid = ref.manifest.cluster_id
        fact = by_id.get(cid) or {}
        msk_block = (
            ref.manifest.cluster.get("msk") if isinstance(ref.manifest.cluster.get("msk"), dict) else {}
        )
        compatible = (
            msk_block.get("compatible_versions")
            if isinstance(msk_block.get("compatible_versions"), list)
            else None
        )
        path = upgrades.path(
            upgrades.Facts(
                version=fact.get("version") or ref.manifest.cluster.get("kafka_version"),
                mode=fact.get("mode"),
                metadata_level=fact.get("mv_level"),
                platform=fact.get("platform"),
                compatible=compatible,
                kraft_version=fact.get("kraft_version"),
                msk_arn=msk_block.get("cluster_arn")
                if isinstance(msk_block.get("cluster_arn"), str)
                else None,
                msk_current_version=msk_block.get("current_version")
                if isinstance(msk_block.get("current_version"), str)
                else None,
            ),
            target,
        )
        hops = [HopView(i, h.kind, h.to, h.title, h.steps, h.cite) for i, h in enumerate(path, 1)]
        mine = [f for f in findings if f.cluster_id == cid and f.rule in codes]
        other: list[Finding] = []
        for f in mine:
            kind = HOP_OF.get(f.rule, "upgrade")
            hop = next((h for h in hops if h.kind == kind), None)
            if hop is None and kind != "now":  # the kind is not on this path: the target hop
                hop = next(
                    (h for h in hops if h.kind in ("upgrade", "unavailable")), hops[-1] if hops else None
                )
            if hop is None:
                other.append(f)
            elif HOP_REASON.get(f.rule) == hop.kind:
                hop.reasons.append(f)
            elif blocks(f, codes):
                hop.blocking.append(f)
            else:
                hop.notes.append(f)
        unknown = cid in incomplete_clusters or any(h.kind == "unknown" for h in hops)
        blocked = any(h.blocking or h.reasons for h in hops)
        # hops that must come first (the finalize of a metadata.version behind the running release
        # is recommended, not required: Kafka allows the upgrade, UPG003 warns)
        required = any(h.kind in REQUIRED_HOPS for h in hops)
        if blocked:
            status = "not ready"
        elif unknown:
            status = "unknown"
        elif required:
            status = "not ready"
        else:
            status = "ready"
        notes = []
        if entry["status"] != "released":
            notes.append(
                f"Kafka {target} is not released: judged from its release branch "
                f"({entry.get('source_note') or entry['commit']})"
            )
        notes += _msk_notes(fact, ref)
        out.append(
            ClusterUpgrade(
                cluster=ref.manifest.cluster_name,
                cluster_id=cid,
                target=target,
                running=fact.get("version") or ref.manifest.cluster.get("kafka_version"),
                mode=fact.get("mode"),
                metadata_version=fact.get("mv_name"),
                platform=fact.get("platform"),
                status=status,
                hops=hops,
                now=_now(hops),
                other=other,
                notes=notes,
            )
        )
    return out


def _now(hops: list[HopView]) -> list[str]:
    """What can be done now: start the first hop unless something blocks it, and fix what blocks
    the later hops (client upgrades, a cluster-level min.insync.replicas ... need not wait)."""
    todo = [h for h in hops if h.kind != "none"]
    if not todo:
        return [hops[0].title] if hops else []
    first = todo[0]
    out = []
    if first.blocking:
        out.append(f"fix what blocks hop {first.number} ({first.to}):")
    else:
        out.append(f"start hop {first.number}: {first.title}")
        out += [f"  {s}" for s in first.steps]
    for h in todo:
        if h.blocking:
            if h is not first:
                out.append(f"fix now what would block hop {h.number} ({h.to}):")
            out += [f"  {f.rule}: {f.message}" for f in h.blocking]
    return out


def _msk_notes(fact: dict, ref) -> list[str]:
    """MSK: the running version's end of support (AWS auto-upgrades past it)."""
    if (fact.get("platform") or "").lower() != "msk":
        return []
    entry = upgrades.msk_version(ref.manifest.cluster.get("kafka_version") or fact.get("version"))
    if entry and entry.get("end_of_support"):
        return [
            f"MSK supports {entry['version']} until {entry['end_of_support']}; after that AWS may upgrade "
            "the cluster to its recommended version at any time, without notice (AWS: version support policy)"
        ]
    return []
