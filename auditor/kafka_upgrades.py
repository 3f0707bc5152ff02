"""The Kafka 4.x upgrade table and the path a cluster takes to a target release.

Data: ``auditor/data/kafka4_upgrades.json`` (tools/extract_kafka_upgrades.py: one entry per release
line 4.0-4.4, read from Kafka's sources, each curated fact quoting its page) and
``auditor/data/msk_versions.json`` (AWS's versions and documented upgrade paths). Loaded lazily,
once; no Spark, no sqlframe: the rules (checks/upgrade.py), the preflight and lint all read it here.

    resolve_target("latest")          -> "4.3" (the newest released line; 4.4 is a release branch)
    release("4.1")["upgrade_notes"]   -> {"lowest": "3.3", "highest": "4.0", ...}
    path(Facts("2.0.1", "zookeeper"), "4.1") -> the hops: 3.9.x (ZooKeeper), KRaft migration, 4.1
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from auditor.errors import UsageError
from auditor.kafka_configs import parse_version

LATEST = "latest"


@lru_cache(maxsize=1)
def table() -> dict:
    return json.loads(resources.files("auditor").joinpath("data/kafka4_upgrades.json").read_text("utf-8"))


@lru_cache(maxsize=1)
def msk() -> dict:
    return json.loads(resources.files("auditor").joinpath("data/msk_versions.json").read_text("utf-8"))


def lines() -> tuple[str, ...]:
    """Every release line of the table, oldest first ("4.0" ... "4.4")."""
    return tuple(r["release"] for r in table()["releases"])


def latest() -> str:
    """The newest released line (an unreleased one, read from its release branch, is not "latest")."""
    return [r["release"] for r in table()["releases"] if r["status"] == "released"][-1]


def release(line: str) -> dict:
    for r in table()["releases"]:
        if r["release"] == line:
            return r
    raise KeyError(line)


def resolve_target(text: str | None) -> str:
    """A --target-version as given ("4", "4.1", "4.1.2", "latest") -> its release line ("4.1").
    Anything else is a usage error naming the known lines."""
    value = (text or "").strip().lower()
    if value == LATEST:
        return latest()
    parts = parse_version(value)
    if parts is not None and value[:1].isdigit():
        line = f"{parts[0]}.{parts[1] if len(parts) > 1 else 0}"
        if line in lines() and len(parts) <= 3:
            return line
    known = ", ".join(lines())
    raise UsageError(
        f"--target-version {text}: not a Kafka release this tool knows (known: {known}, or latest = "
        f"{latest()}; auditor/data/kafka4_upgrades.json)"
    )


def target_params(params: dict, line: str, rules) -> dict:
    """Rule params with ``target_version`` set to ``line`` for every rule (of ``rules``, the
    registry's) that has that parameter: how the preflight and lint set a target."""
    out = dict(params)
    for r in rules:
        if any(p.name == "target_version" for p in r.params):
            out[r.code] = {**(out.get(r.code) or {}), "target_version": line}
    return out


def vnum(version: str | None) -> int | None:
    """'3.9.0' / '3.7.x.kraft' / '3.9-IV0' -> 3009000 (as checks.transforms.version_key encodes it)."""
    p = parse_version(version)
    if p is None:
        return None
    p = (p + (0, 0, 0))[:3]
    return p[0] * 1_000_000 + p[1] * 1000 + p[2]


def line_of(version: str | None) -> str | None:
    p = parse_version(version)
    return f"{p[0]}.{p[1] if len(p) > 1 else 0}" if p else None


def metadata_versions() -> dict[int, str]:
    """metadata.version feature level -> its name ("3.7-IV2"), every level Kafka 3.0-4.4 defined."""
    return {m["level"]: m["name"] for m in table()["metadata_versions"]}


def metadata_level(name: str | None) -> int | None:
    for m in table()["metadata_versions"]:
        if m["name"] == name:
            return m["level"]
    return None


def floor_metadata_version() -> dict:
    """The lowest metadata.version every 4.x release runs with (MetadataVersion.MINIMUM_VERSION)."""
    return table()["releases"][0]["minimum_metadata_version"]


def removed_keys() -> list[dict]:
    """Every broker/topic key a 4.x release removed: scope, key, removed_in, group (zookeeper |
    kraft_inert | acts), internal, why, replacement, cite."""
    return table()["removed_keys"]


def first_line_where(predicate) -> str | None:
    """The first release line whose entry satisfies ``predicate`` (oldest first)."""
    return next((r["release"] for r in table()["releases"] if predicate(r)), None)


def feature_on_at_finalize(feature: str, level: int = 1) -> str | None:
    """The first line whose finalize step (`--release-version`) sets ``feature`` to ``level`` or more."""
    return first_line_where(
        lambda r: (r["features"].get(feature) or {}).get("release_version_level", 0) >= level
    )


def change(line: str, change_id: str) -> dict | None:
    return next((c for c in release(line)["changes"] if c["id"] == change_id), None)


def changes_up_to(target: str) -> list[tuple[str, dict]]:
    """(line, change) of every line up to and including ``target``."""
    out = []
    for r in table()["releases"]:
        out.append(r)
        if r["release"] == target:
            break
    return [(r["release"], c) for r in out for c in r["changes"]]


def msk_version(version: str | None) -> dict | None:
    """The shipped MSK version entry for a cluster's version string ('3.6.0', '3.9.x.kraft')."""
    v = (version or "").strip().lower()
    for entry in msk()["versions"]:
        if entry["version"] == v:
            return entry
    # '3.9.1' on a cluster whose table entry is '3.9.x'
    for entry in msk()["versions"]:
        e = entry["version"]
        if ".x" in e and line_of(e) == line_of(v) and (v.endswith(".kraft") == e.endswith(".kraft")):
            return entry
    return None


def msk_offers(line: str) -> str | None:
    """The MSK version string of a 4.x line AWS offers (KRaft), or None."""
    for entry in msk()["versions"]:
        if line_of(entry["version"]) == line and entry["mode"] == "kraft":
            return entry["version"]
    return None


# -- the path ----------------------------------------------------------------------------------


@dataclass
class Facts:
    """What the path is computed from: the running version, the metadata mode, the finalized
    metadata.version level (None: not collected), the platform and, on MSK, the versions AWS
    lists for the cluster (GetCompatibleKafkaVersions; None: not collected)."""

    version: str | None
    mode: str | None
    metadata_level: int | None = None
    platform: str | None = None
    compatible: list[str] | None = None
    kraft_version: int | None = None  # finalized kraft.version (0: static quorum); None: not known
    msk_arn: str | None = None  # MSK: the cluster ARN and its current cluster version (DescribeClusterV2
    msk_current_version: str | None = None  # CurrentVersion, which UpdateClusterKafkaVersion requires)


@dataclass
class Hop:
    kind: str  # bridge | migrate | floor | finalize | upgrade | none | unknown | unavailable
    to: str  # the version after the hop ("3.9.x", "KRaft 3.9.x", "4.1.x", "metadata.version 3.9-IV0")
    title: str
    steps: list[str] = field(default_factory=list)
    cite: str | None = None

    def to_json(self) -> dict:
        return {"kind": self.kind, "to": self.to, "title": self.title, "steps": self.steps, "cite": self.cite}


BRIDGE = "3.9"
MIGRATION_URL = "https://kafka.apache.org/39/operations/kraft/#zookeeper-to-kraft-migration"
UPGRADE_39_URL = "https://kafka.apache.org/39/documentation.html#upgrade"


def path(facts: Facts, target: str) -> list[Hop]:
    """The hops from the running version to ``target`` (a release line), each with what to run.
    Kafka's own path (upgrade notes); on MSK, AWS's (update-cluster-kafka-version, the in-place
    ZooKeeper-to-KRaft migration)."""
    on_msk = (facts.platform or "").lower() == "msk"
    v = vnum(facts.version)
    mode = (facts.mode or "").lower() or None
    entry = release(target)
    if v is None:
        return [
            Hop("unknown", f"{target}.x", "the running Kafka version is not known: no path can be computed")
        ]
    if line_of(facts.version) == target or v >= vnum(f"{target}.0") and mode != "zookeeper":
        if line_of(facts.version) == target:
            return [Hop("none", f"{target}.x", f"already on {target}: nothing to upgrade")]
        return [
            Hop("none", facts.version, f"already past {target} ({facts.version}): Kafka does not downgrade")
        ]
    hops: list[Hop] = []
    low = vnum(entry["upgrade_notes"]["lowest"])
    if mode == "zookeeper":
        if v < vnum(BRIDGE):
            hops.append(_bridge(on_msk, facts))
        hops.append(_migrate(on_msk, facts))
    elif v < low:
        hops.append(_floor(on_msk, facts))
    else:
        hops.extend(_finalize(on_msk, facts))
    hops.append(_upgrade(on_msk, facts, target))
    return hops


def _msk_target(facts: Facts, wanted: str) -> str:
    """The MSK version to name for a hop: one the cluster's compatible list has when collected."""
    if facts.compatible:
        for t in facts.compatible:
            if line_of(t) == line_of(wanted) and t.endswith(".kraft") == wanted.endswith(".kraft"):
                return t
    return wanted


def _update(facts: Facts, target: str) -> str:
    """AWS's in-place upgrade command, with the cluster's ARN and current version where known."""
    return (
        msk()["upgrade"]["in_place"]
        .replace("TARGET", target)
        .replace("ARN", facts.msk_arn or "ARN")
        .replace("CLUSTER_VERSION", facts.msk_current_version or "CLUSTER_VERSION")
    )


def _bridge(on_msk: bool, facts: Facts) -> Hop:
    if on_msk:
        t = _msk_target(facts, "3.9.x")
        return Hop(
            "bridge",
            "3.9.x",
            f"upgrade to {t} (ZooKeeper mode): AWS migrates to KRaft only from 3.9.x",
            [_update(facts, t)],
            msk()["pages"]["zk_to_kraft_migration"],
        )
    return Hop(
        "bridge",
        "3.9.x",
        "upgrade to 3.9.x in ZooKeeper mode, the bridge release of the KRaft migration",
        [
            "roll every broker to 3.9.x (inter.broker.protocol.version pinned to the running release)",
            "then set inter.broker.protocol.version=3.9 and roll again (3.9 upgrade notes)",
        ],
        UPGRADE_39_URL,
    )


def _migrate(on_msk: bool, facts: Facts) -> Hop:
    if on_msk:
        t = _msk_target(facts, "3.9.x.kraft")
        return Hop(
            "migrate",
            "KRaft 3.9.x",
            "migrate to KRaft in place (AWS's ZooKeeper-to-KRaft migration), once its prerequisites hold (UPG005)",
            [
                "disable ZooKeeper access: aws kafka update-connectivity (ZookeeperAccess.Enabled=false)",
                _update(facts, t) + "   (a KRaft-based target version: the .kraft suffix)",
            ],
            msk()["pages"]["zk_to_kraft_migration"],
        )
    return Hop(
        "migrate",
        "KRaft 3.9.x",
        "migrate to KRaft on 3.9.x (KIP-866): Kafka 4.x has no ZooKeeper mode",
        [
            "provision a KRaft controller quorum on 3.9.x with zookeeper.metadata.migration.enable=true",
            "enable the migration on the brokers and roll them; wait until the metadata migration completes",
            "roll the brokers into KRaft mode, then take the controllers out of migration mode",
        ],
        MIGRATION_URL,
    )


def _floor(on_msk: bool, facts: Facts) -> Hop:
    steps = (
        [_update(facts, _msk_target(facts, "3.9.x.kraft"))]
        if on_msk
        else [
            "roll the controllers, then the brokers, to 3.9.x",
            "finalize: kafka-features.sh --bootstrap-server HOST:PORT upgrade --metadata 3.9",
        ]
    )
    return Hop(
        "floor",
        "3.9.x",
        f"upgrade to 3.9.x first: 4.x upgrades only from 3.3.x (running {facts.version})",
        steps,
    )


def _finalize(on_msk: bool, facts: Facts) -> list[Hop]:
    """metadata.version below the floor (blocks) or behind the running release (finalize first)."""
    level = facts.metadata_level
    if level is None:
        return []
    names = metadata_versions()
    floor = floor_metadata_version()
    running = line_of(facts.version)
    current = names.get(level, f"level {level}")
    if level >= floor["level"] and line_of(current) is not None and vnum(current) >= vnum(running):
        return []
    below = level < floor["level"]
    title = (
        f"finalize metadata.version (now {current}): 4.x needs at least {floor['name']}"
        if below
        else (
            f"finalize metadata.version {current} at the running release {running} (recommended: the last "
            "upgrade was not finalized; Kafka allows the upgrade without it)"
        )
    )
    if on_msk:
        steps = [
            "MSK finalizes metadata.version as part of its version upgrade: if it stays behind, open an AWS support case"
        ]
    else:
        steps = [f"kafka-features.sh --bootstrap-server HOST:PORT upgrade --metadata {running}"]
    return [Hop("finalize", f"metadata.version {running}", title, steps)]


def _upgrade(on_msk: bool, facts: Facts, target: str) -> Hop:
    entry = release(target)
    on = [
        f"{name}={f['release_version_level']}"
        for name, f in entry["features"].items()
        if f["release_version_level"] > 0 and name != "kraft.version"
    ]
    if entry["kraft_version_upgradable"] and facts.kraft_version == 0:
        on.append(
            "kraft.version=1 (the quorum becomes dynamic: swap controller.quorum.voters for controller.quorum.bootstrap.servers on every node)"
        )
    unreleased = entry["status"] != "released"
    if on_msk:
        offered = msk_offers(target)
        if offered is None:
            newest = [e["version"] for e in msk()["versions"] if e["mode"] == "kraft"][-1]
            return Hop(
                "unavailable",
                f"{target}.x",
                f"AWS does not offer Kafka {target} on MSK (newest in the shipped table: {newest}; "
                "`aws kafka list-kafka-versions` lists what your region offers)",
                [_update(facts, _msk_target(facts, newest))],
                msk()["pages"]["supported_versions"],
            )
        t = _msk_target(facts, offered)
        return Hop(
            "upgrade",
            t,
            f"upgrade to {t}: MSK rolls the brokers one at a time and finalizes the release",
            [_update(facts, t)],
            msk()["pages"]["version_upgrades"],
        )
    steps = [
        f"roll the controllers, then the brokers, to {target}.x one at a time (kafka-audit preflight gives the safe order)",
        f"verify, then finalize: {entry['finalize']}" + (f"   (sets {', '.join(on)})" if on else ""),
    ]
    if unreleased:
        steps.append(
            f"{target} is not released yet: this hop is read from its release branch "
            f"({entry.get('source_note') or entry['commit']})"
        )
    return Hop(
        "upgrade",
        f"{target}.x",
        f"upgrade to {target} ({entry['upgrade_notes']['heading']})",
        steps,
        entry["upgrade_notes"]["url"],
    )
