#!/usr/bin/env python3
"""Build the Kafka 4.x upgrade table, ``auditor/data/kafka4_upgrades.json``, from Kafka's own sources.

One entry per release line (4.0 to 4.4): the versions it upgrades from, the metadata mode and
the lowest metadata.version it runs with, the metadata versions and feature levels it brings, what
its finalize step (``kafka-features upgrade --release-version R``) switches on, and the behaviour
changes of its upgrade notes, each with its citation. The UPG rules (checks/upgrade.py), the
preflight's upgrade path and lint's ``--target-version`` read it through auditor/kafka_upgrades.py;
no rule holds a per-release fact of its own.

What it reads
-------------
At each release's commit (the newest patch of the line, tools/extract_kafka_configs.py's
``PINNED_RELEASES`` / ``PRERELEASES``; 4.4 is not released: its release branch), without building
or running anything:

- ``server-common/.../MetadataVersion.java``: every ``IBP_X_Y_IVn(level, "X.Y", "IVn",
  metadataChanged)``, ``MINIMUM_VERSION`` and ``LATEST_PRODUCTION`` (levels 1-6, the 3.0-3.3 ones
  4.x no longer has, are read at 3.9.0);
- ``server-common/.../{EligibleLeaderReplicas,Group,Share,Streams,Transaction,KRaft}Version.java``:
  each feature's levels with their bootstrap metadata version and ``LATEST_PRODUCTION``. The level
  ``kafka-features upgrade --release-version R`` sets (and a cluster formatted at R starts with) is
  the highest whose bootstrap metadata version is at or below R's latest production metadata
  version (``Feature.defaultVersion``; tools FeatureCommand ``--release-version``);
- ``metadata/.../FeatureControlManager.java``: whether ``kraft.version`` can be upgraded
  (``upgradeKRaftVersion``, 4.1+: a static quorum can become dynamic) or is skipped (4.0,
  KAFKA-18979);
- the upgrade notes, ``docs/getting-started/upgrade.md`` of the 4.4 release branch (every 4.x
  section, as kafka.apache.org/44 publishes them): the heading "Upgrading Servers to X from any
  version A through B" of each release gives the versions it upgrades from;
- ``auditor/data/kafka_configs.json`` (tools/extract_kafka_configs.py): the configuration keys each
  release removed and the defaults it changed.

What a reading adds (``CHANGES``, ``REMOVED_KEYS``, ``CONFIG_CHANGES`` below): each entry quotes the
page it comes from, and the quote is checked against that page at the commit given (the run fails
when a quote is not there); KIPs and AWS pages are cited by address.

Rerun
-----
::

    python tools/extract_kafka_upgrades.py /path/to/kafka.git [--out auditor/data/kafka4_upgrades.json] [--check]

The git dir must hold apache/kafka's release commits (confluentinc/kafka's snapshot does, with
Apache's own SHAs; see tools/extract_kafka_configs.py).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from extract_kafka_configs import PINNED_RELEASES, PRERELEASES  # noqa: E402

DEFAULT_OUT = ROOT / "auditor" / "data" / "kafka4_upgrades.json"
CONFIGS = ROOT / "auditor" / "data" / "kafka_configs.json"
COMMON = "server-common/src/main/java/org/apache/kafka/server/common"
FEATURE_CONTROL = "metadata/src/main/java/org/apache/kafka/controller/FeatureControlManager.java"
NOTES = "docs/getting-started/upgrade.md"
BRANCH_44 = PRERELEASES["4.4.0"][0]
RELEASE_39 = PINNED_RELEASES["3.9.0"]
LINES = ("4.0", "4.1", "4.2", "4.3", "4.4")
FEATURES = {
    "eligible.leader.replicas.version": "EligibleLeaderReplicasVersion",
    "group.version": "GroupVersion",
    "share.version": "ShareVersion",
    "streams.version": "StreamsVersion",
    "transaction.version": "TransactionVersion",
    "kraft.version": "KRaftVersion",
}
UPGRADE_URL = "https://kafka.apache.org/{nn}/getting-started/upgrade"
NOTES_44 = {"commit": BRANCH_44, "path": NOTES}


def _doc(commit: str, path: str) -> dict:
    return {"commit": commit, "path": path}


ZK2KRAFT_44 = _doc(BRANCH_44, "docs/getting-started/zk2kraft.md")
KRAFT_OPS_44 = _doc(BRANCH_44, "docs/operations/kraft.md")
ELR_OPS_44 = _doc(BRANCH_44, "docs/operations/eligible-leader-replicas.md")
OPS_40 = _doc(PINNED_RELEASES["4.0.0"], "docs/ops.html")

# Behaviour changes per release line, from the upgrade notes and the operations docs: id -> what
# it is, with the quote that says it (checked at the commit named).
CHANGES: dict[str, list[dict]] = {
    "4.0": [
        {
            "id": "kraft-only",
            "summary": "ZooKeeper mode is removed: a ZooKeeper-mode cluster migrates to KRaft on 3.x first",
            "quote": "Clusters in ZooKeeper mode have to be [migrated to KRaft mode]",
            "source": NOTES_44,
        },
        {
            "id": "kip-896-clients",
            "summary": "protocol API versions older than Kafka 2.1's are removed (KIP-896): clients before 2.1 stop working",
            "quote": "Old protocol API versions have been removed.",
            "source": NOTES_44,
        },
        {
            "id": "kip-848-ga",
            "summary": "the KIP-848 consumer rebalance protocol is generally available; finalizing 4.0 turns it on (group.version=1)",
            "quote": "The protocol is automatically enabled on the server when the upgrade to 4.0 is finalized.",
            "source": NOTES_44,
        },
        {
            "id": "kip-890-transactions",
            "summary": "transactions server-side defense (KIP-890) is enabled by the finalize step (transaction.version=2)",
            "quote": "The new and improved transactional protocol is enabled when the upgrade to 4.0 is finalized.",
            "source": NOTES_44,
        },
        {
            "id": "elr-available",
            "summary": "eligible leader replicas (KIP-966) ship, off: eligible.leader.replicas.version=1 turns them on",
            "quote": "The ELR is not enabled by default for 4.0.",
            "source": ELR_OPS_44,
        },
        {
            "id": "share-groups-early-access",
            "summary": "share groups (KIP-932) are early access (group.share.enable): a cluster that used them cannot be upgraded",
            "quote": "It is not possible to upgrade clusters on which this early access feature has been enabled and used.",
            "url": "https://cwiki.apache.org/confluence/display/KAFKA/Queues+for+Kafka+%28KIP-932%29+-+Early+Access+Release+Notes",
        },
        {
            "id": "static-quorum-stays-static",
            "summary": "a static KRaft quorum (controller.quorum.voters, kraft.version 0) cannot be converted to a dynamic one",
            "quote": "Currently it is <b>not</b> possible to convert clusters using a static controller quorum to",
            "source": OPS_40,
        },
        {
            "id": "jmx-reporter-default",
            "summary": "auto.include.jmx.reporter is removed; metric.reporters defaults to JmxReporter: a metric.reporters list without it turns JMX off",
            "quote": "The `metric.reporters` configuration is now set to `org.apache.kafka.common.metrics.JmxReporter` by default.",
            "source": NOTES_44,
        },
    ],
    "4.1": [
        {
            "id": "elr-default",
            "summary": "eligible leader replicas are on for new clusters and after `--release-version 4.1`; broker-level min.insync.replicas is then removed and refused",
            "quote": "After the ELR feature enabled, the previously set `min.insync.replicas` value at the broker-level config will be removed.",
            "source": NOTES_44,
        },
        {
            "id": "share-groups-preview",
            "summary": "share groups are a preview, enabled explicitly with share.version=1",
            "quote": "To enable share groups, use the `kafka-features.sh` tool to upgrade to `share.version=1`.",
            "source": NOTES_44,
        },
        {
            "id": "streams-protocol-early-access",
            "summary": "the streams rebalance protocol (KIP-1071) is early access, disabled by default, not for production",
            "quote": "This feature is in Early Access, disabled by default, and not for production use-cases.",
            "source": NOTES_44,
        },
        {
            "id": "static-quorum-upgradable",
            "summary": "a static quorum can become dynamic: `kafka-features upgrade --feature kraft.version=1`, then controller.quorum.bootstrap.servers on every node",
            "quote": "Apache Kafka 4.1 added support for upgrading a cluster from a static controller configuration to a dynamic controller configuration.",
            "source": KRAFT_OPS_44,
        },
    ],
    "4.2": [
        {
            "id": "share-groups-production",
            "summary": "share groups (KIP-932) are production-ready; `--release-version 4.2` sets share.version=1",
            "quote": "Queues for Kafka ([KIP-932](https://cwiki.apache.org/confluence/x/4hA0Dw)) is production-ready in Apache Kafka 4.2.",
            "source": NOTES_44,
        },
        {
            "id": "streams-protocol-production",
            "summary": "the streams rebalance protocol (KIP-1071) is production-ready for its core feature set; migrating classic groups to it needs 4.2.1 (KAFKA-20254)",
            "quote": "we recommend against doing migrations from classic to streams groups in 4.2.0.",
            "source": NOTES_44,
        },
        {
            "id": "share-state-topic-three-brokers",
            "summary": "share groups need 3 brokers for __share_group_state unless share.coordinator.state.topic.replication.factor and .min.isr are lowered",
            "quote": "you must set the broker configurations `share.coordinator.state.topic.replication.factor` and `share.coordinator.state.topic.min.isr` to 1",
            "source": NOTES_44,
        },
    ],
    "4.3": [
        {
            "id": "remote-log-metadata-min-isr",
            "summary": "__remote_log_metadata is created with min.insync.replicas 2 (remote.log.metadata.topic.min.isr, KIP-1235); an existing topic keeps what it has",
            "quote": "You can correct the min.insync.replicas for the existed __remote_log_metadata topic via kafka-configs.sh if needed.",
            "source": NOTES_44,
        },
        {
            "id": "rebalance-protocols-deprecated",
            "summary": "group.coordinator.rebalance.protocols is deprecated (KIP-1237): in 5.0 the feature versions alone enable the protocols",
            "quote": "The `group.coordinator.rebalance.protocols` configuration is deprecated and will be removed in Kafka 5.0.",
            "source": NOTES_44,
        },
    ],
    "4.4": [
        {
            "id": "oauthbearer-audience-required",
            "summary": "a broker validating OAUTHBEARER tokens against a JWKS endpoint fails to start without an expected audience and issuer (or the new allow.unverified flags)",
            "quote": "Brokers that previously started without these settings will now fail to start until they are configured.",
            "source": NOTES_44,
        },
        {
            "id": "storage-format-not-forward-compatible",
            "summary": "a broker must be at least the version of the kafka-storage tool that formatted its directories (KIP-1170)",
            "quote": "A Kafka broker must be the same version as, or newer than, the `kafka-storage` tool that formatted its directory",
            "source": NOTES_44,
        },
        {
            "id": "broker-id-deprecated",
            "summary": "broker.id is deprecated (KIP-1232): node.id replaces it in 5.0",
            "quote": "The `broker.id` configuration is deprecated and will be removed in Kafka 5.0.",
            "source": NOTES_44,
        },
    ],
}

# Keys 4.x removed, grouped by what they did on 3.x: "kraft_inert" keys a KRaft cluster of 3.x
# already ignores (Kafka's "Differences Between KRaft mode and ZooKeeper mode" page; the message
# format versions since IBP 3.0, KIP-724), "zookeeper" the ZooKeeper connection itself (gone with
# the migration). Every other removed key still acts on 3.x (the default, "acts").
REMOVED_KEYS: dict[str, dict] = {
    "zookeeper.": {
        "group": "zookeeper",
        "why": "ZooKeeper connection settings: KRaft has no ZooKeeper",
        "quote": "Removed ZooKeeper related configurations.",
        "source": ZK2KRAFT_44,
    },
    "password.encoder.": {
        "group": "kraft_inert",
        "why": "encrypted dynamic passwords stored in ZooKeeper; KRaft keeps them in its metadata records",
        "quote": "In KRaft mode, Kafka stores sensitive data in records, and the data is not encrypted in Kafka.",
        "source": ZK2KRAFT_44,
    },
    "control.plane.listener.name": {
        "group": "kraft_inert",
        "why": "the ZooKeeper controller's channel; KRaft uses controller.listener.names",
        "quote": "Removed `control.plane.listener.name`.",
        "source": ZK2KRAFT_44,
        "replacement": "controller.listener.names",
    },
    "controlled.shutdown.max.retries": {
        "group": "kraft_inert",
        "why": "ZooKeeper-mode controlled shutdown retries; the KRaft controller manages shutdowns",
        "quote": "Removed graceful broker shutdowns-related configurations.",
        "source": ZK2KRAFT_44,
    },
    "controlled.shutdown.retry.backoff.ms": {
        "group": "kraft_inert",
        "why": "ZooKeeper-mode controlled shutdown retries; the KRaft controller manages shutdowns",
        "quote": "Removed graceful broker shutdowns-related configurations.",
        "source": ZK2KRAFT_44,
    },
    "reserved.broker.max.id": {
        "group": "kraft_inert",
        "why": "ZooKeeper broker id generation; KRaft nodes have node.id",
        "quote": "Removed the broker id generation-related configurations.",
        "source": ZK2KRAFT_44,
        "replacement": "node.id",
    },
    "broker.id.generation.enable": {
        "group": "kraft_inert",
        "why": "ZooKeeper broker id generation; KRaft nodes have node.id",
        "quote": "Removed the broker id generation-related configurations.",
        "source": ZK2KRAFT_44,
        "replacement": "node.id",
    },
    "inter.broker.protocol.version": {
        "group": "kraft_inert",
        "why": "KRaft uses metadata.version (kafka-features) instead",
        "quote": "In KRaft mode, Kafka uses `metadata.version` to control the feature level of the cluster",
        "source": ZK2KRAFT_44,
        "replacement": "metadata.version (kafka-features)",
    },
    "leader.imbalance.per.broker.percentage": {
        "group": "kraft_inert",
        "why": "used only by the ZooKeeper controller's preferred leader elections",
        "quote": "Removed the leader imbalance configuration used only in ZooKeeper.",
        "source": ZK2KRAFT_44,
    },
    "log.message.format.version": {
        "group": "kraft_inert",
        "why": "ignored since inter.broker.protocol.version 3.0 (KIP-724): every KRaft metadata.version is 3.0 or later",
        "url": "https://cwiki.apache.org/confluence/display/KAFKA/KIP-724%3A+Drop+support+for+message+formats+v0+and+v1",
    },
    "message.format.version": {
        "group": "kraft_inert",
        "why": "ignored since inter.broker.protocol.version 3.0 (KIP-724): every KRaft metadata.version is 3.0 or later",
        "url": "https://cwiki.apache.org/confluence/display/KAFKA/KIP-724%3A+Drop+support+for+message+formats+v0+and+v1",
    },
    "delegation.token.master.key": {
        "group": "acts",
        "why": "the delegation token secret under its old name",
        "quote": "The `delegation.token.master.key` configuration was removed. Please use `delegation.token.secret.key` instead.",
        "source": NOTES_44,
        "replacement": "delegation.token.secret.key",
    },
    "offsets.commit.required.acks": {
        "group": "acts",
        "why": "the acks the group coordinator writes offset commits with",
        "quote": "The `offsets.commit.required.acks` configuration was removed.",
        "source": NOTES_44,
    },
    "log.message.timestamp.difference.max.ms": {
        "group": "acts",
        "why": "the accepted record timestamp skew",
        "quote": "Please use `log.message.timestamp.before.max.ms` and `log.message.timestamp.after.max.ms` instead.",
        "source": NOTES_44,
        "replacement": "log.message.timestamp.before.max.ms / log.message.timestamp.after.max.ms",
    },
    "message.timestamp.difference.max.ms": {
        "group": "acts",
        "why": "the topic's accepted record timestamp skew (KIP-937)",
        "quote": "The `log.message.timestamp.difference.max.ms` configuration was removed.",
        "source": NOTES_44,
        "replacement": "message.timestamp.before.max.ms / message.timestamp.after.max.ms",
    },
    "auto.include.jmx.reporter": {
        "group": "acts",
        "why": "adds JmxReporter to metric.reporters; 4.0 has JmxReporter as metric.reporters' default instead",
        "quote": "The `auto.include.jmx.reporter` configuration was removed.",
        "source": NOTES_44,
        "replacement": "metric.reporters (list org.apache.kafka.common.metrics.JmxReporter)",
    },
}

# Configuration whose meaning changes at a release: kind "default" (a key left unset takes the
# new default), "minimum" (a value below it is refused at startup), "requires" (setting ``key``
# without one of ``with`` makes the broker fail to start), "jmx" (metric.reporters set without
# JmxReporter loses JMX). severity: what the finding is; "error" ones block the hop.
CONFIG_CHANGES: list[dict] = [
    {
        "release": "4.0",
        "scope": "broker",
        "key": "log.message.timestamp.after.max.ms",
        "kind": "default",
        "severity": "info",
        "effect": "records timestamped more than 1 hour ahead are rejected (CreateTime topics)",
        "quote": "The default value of `message.timestamp.after.max.ms` has been changed from Long.Max to 1 hour.",
        "source": NOTES_44,
    },
    {
        "release": "4.0",
        "scope": "broker",
        "key": "num.recovery.threads.per.data.dir",
        "kind": "default",
        "severity": "info",
        "effect": "log recovery after an unclean shutdown uses 2 threads per log dir (more I/O at startup)",
        "quote": "The default value of `num.recovery.threads.per.data.dir` has been changed from 1 to 2.",
        "source": NOTES_44,
    },
    {
        "release": "4.0",
        "scope": "broker",
        "key": "log.segment.bytes",
        "kind": "minimum",
        "minimum": 1048576,
        "severity": "error",
        "effect": "a value below 1 MiB is refused: the broker does not start",
        "quote": "The minimum `segment.bytes/log.segment.bytes` has changed from 14 bytes to 1MB.",
        "source": NOTES_44,
    },
    {
        "release": "4.0",
        "scope": "topic",
        "key": "segment.bytes",
        "kind": "minimum",
        "minimum": 1048576,
        "severity": "error",
        "effect": "a value below 1 MiB is refused",
        "quote": "The minimum `segment.bytes/log.segment.bytes` has changed from 14 bytes to 1MB.",
        "source": NOTES_44,
    },
    {
        "release": "4.0",
        "scope": "broker",
        "key": "remote.log.manager.copier.thread.pool.size",
        "kind": "minimum",
        "minimum": 1,
        "severity": "error",
        "effect": "-1 is no longer valid: the broker does not start",
        "quote": "Values of -1 are no longer valid; a minimum value of 1 or higher is required.",
        "source": NOTES_44,
    },
    {
        "release": "4.0",
        "scope": "broker",
        "key": "remote.log.manager.expiration.thread.pool.size",
        "kind": "minimum",
        "minimum": 1,
        "severity": "error",
        "effect": "-1 is no longer valid: the broker does not start",
        "quote": "Values of -1 are no longer valid; a minimum value of 1 or higher is required.",
        "source": NOTES_44,
    },
    {
        "release": "4.0",
        "scope": "broker",
        "key": "metric.reporters",
        "kind": "jmx",
        "severity": "warning",
        "effect": "auto.include.jmx.reporter is gone: a metric.reporters list without JmxReporter turns JMX (and the JMX exporter's scrape) off",
        "quote": "The `auto.include.jmx.reporter` configuration was removed.",
        "source": NOTES_44,
    },
    {
        "release": "4.2",
        "scope": "broker",
        "key": "num.replica.fetchers",
        "kind": "minimum",
        "minimum": 1,
        "severity": "error",
        "effect": "a value below 1 is refused",
        "quote": "The `num.replica.fetchers` config has a new lower bound of 1.",
        "source": NOTES_44,
    },
    {
        "release": "4.4",
        "scope": "broker",
        "key": "sasl.oauthbearer.jwks.endpoint.url",
        "kind": "requires",
        "with": [
            "sasl.oauthbearer.expected.audience|sasl.oauthbearer.allow.unverified.audience",
            "sasl.oauthbearer.expected.issuer|sasl.oauthbearer.allow.unverified.issuer",
        ],
        "severity": "error",
        "effect": "the broker fails to start until an expected audience and issuer (or the allow.unverified flags) are set",
        "quote": "Brokers that previously started without these settings will now fail to start until they are configured.",
        "source": NOTES_44,
    },
]


def git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "-C", git_dir, *args], check=True, capture_output=True, text=True).stdout


def show(git_dir: str, commit: str, path: str) -> str | None:
    r = subprocess.run(["git", "-C", git_dir, "show", f"{commit}:{path}"], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


_IBP = re.compile(r"^\s+IBP_(\d+)_(\d+)_IV(\d+)\((\d+), \"([\d.]+)\", \"(IV\d+)\", (true|false)\)", re.M)


def metadata_versions(text: str) -> tuple[list[dict], str, str]:
    """(every IBP version with a feature level, MINIMUM_VERSION's name, LATEST_PRODUCTION's name)."""
    out = []
    for m in _IBP.finditer(text):
        level, release, iv, changed = int(m.group(4)), m.group(5), m.group(6), m.group(7) == "true"
        out.append(
            {"level": level, "name": f"{release}-{iv}", "release": release, "metadata_changes": changed}
        )
    low = re.search(r"MINIMUM_VERSION = IBP_(\d+)_(\d+)_IV(\d+)", text)
    top = re.search(r"LATEST_PRODUCTION = IBP_(\d+)_(\d+)_IV(\d+)", text)
    name = lambda m: f"{m.group(1)}.{m.group(2)}-IV{m.group(3)}"  # noqa: E731
    return out, name(low) if low else None, name(top)


_LEVEL = re.compile(r"^\s+[A-Z0-9_]+\(\(?(?:short\)\s*)?(\d+)\)?, MetadataVersion\.(\w+)", re.M)


def feature_levels(text: str) -> tuple[dict[int, str], int]:
    """({level: bootstrap metadata version name}, LATEST_PRODUCTION's level)."""
    levels = {}
    for m in _LEVEL.finditer(text):
        mv = m.group(2)
        name = "minimum" if mv == "MINIMUM_VERSION" else re.sub(r"IBP_(\d+)_(\d+)_IV(\d+)", r"\1.\2-IV\3", mv)
        levels[int(m.group(1))] = name
    enum = re.search(r"LATEST_PRODUCTION = (\w+);", text).group(1)
    const = re.search(rf"^\s+{enum}\(\(?(?:short\)\s*)?(\d+)", text, re.M)
    return levels, int(const.group(1))


def _key(name: str) -> tuple[int, int, int]:
    rel, iv = name.split("-IV")
    a, b = rel.split(".")
    return int(a), int(b), int(iv)


def default_level(levels: dict[int, str], latest_production: int, mv: str, minimum: str) -> int:
    """Feature.defaultVersion: the highest level whose bootstrap metadata version is at or below mv."""
    out = 0
    for level in sorted(levels):
        boot = minimum if levels[level] == "minimum" else levels[level]
        if _key(boot) <= _key(mv):
            out = level
        else:
            break
    return out


_HEADING = re.compile(r"^### Upgrading Servers to (\d+\.\d+\.\d+) from any version (\S+) through (\S+)", re.M)


def upgrade_headings(notes: str) -> dict[str, dict]:
    """release line -> the heading's versions (the first, newest heading of each line)."""
    out: dict[str, dict] = {}
    for m in _HEADING.finditer(notes):
        line = ".".join(m.group(1).split(".")[:2])
        if line not in out:
            low, high = m.group(2), m.group(3)
            out[line] = {
                "heading": m.group(0).lstrip("# ").strip(),
                "as_written": f"{low} through {high}",
                "lowest": ".".join(low.split(".")[:2]),
                "highest": ".".join(high.split(".")[:2]),
            }
    return out


def release_commits() -> dict[str, list[tuple[str, str, str]]]:
    """line -> [(version, commit, how)] of its releases, oldest first."""
    out: dict[str, list] = {line: [] for line in LINES}
    for version, commit in PINNED_RELEASES.items():
        line = ".".join(version.split(".")[:2])
        if line in out:
            out[line].append((version, commit, "release"))
    for version, (commit, _note) in PRERELEASES.items():
        line = ".".join(version.split(".")[:2])
        if line in out and not out[line]:
            out[line].append((version, commit, "release branch (unreleased)"))
    return out


def check_quotes(git_dir: str, entries) -> None:
    cache: dict[tuple[str, str], str] = {}
    for e in entries:
        src = e.get("source")
        if not src or "quote" not in e:
            continue
        key = (src["commit"], src["path"])
        if key not in cache:
            cache[key] = show(git_dir, *key) or ""
        text = " ".join(cache[key].split())
        if " ".join(e["quote"].split()) not in text:
            raise SystemExit(f"quote not found in {src['path']} at {src['commit'][:12]}: {e['quote']!r}")


def _cite(e: dict) -> dict:
    """A curated entry's citation as written to the data file."""
    out = {k: e[k] for k in ("quote", "url") if k in e}
    if "source" in e:
        out["source"] = {"repository": "apache/kafka", **e["source"]}
    return out


def removed_keys(configs: dict) -> list[dict]:
    """Every broker/topic key a 4.x release removed (and did not bring back), with its group."""
    out = []
    for scope in ("broker", "topic"):
        for key, info in sorted(configs[scope].items()):
            ranges = info.get("ranges") or [[info["since"], info.get("removed")]]
            removed = ranges[-1][1]
            if not removed or not removed.startswith("4."):
                continue
            rule = REMOVED_KEYS.get(key) or next(
                (v for k, v in REMOVED_KEYS.items() if k.endswith(".") and key.startswith(k)), None
            )
            entry = {
                "scope": scope,
                "key": key,
                "removed_in": removed,
                "group": rule["group"] if rule else "acts",
                "internal": bool(info.get("internal")),
            }
            if rule:
                entry["why"] = rule["why"]
                if rule.get("replacement"):
                    entry["replacement"] = rule["replacement"]
                entry["cite"] = _cite(rule)
            out.append(entry)
    return out


def default_changes(configs: dict, line: str) -> list[dict]:
    """Keys whose default (a literal on both sides) changed in the line's first release."""
    first = f"{line}.0"
    out = []
    for scope in ("broker", "topic"):
        for key, info in sorted(configs[scope].items()):
            hist = info.get("defaults") or []
            for i, (version, value) in enumerate(hist):
                if version == first and i > 0 and hist[i - 1][1] is not None and value is not None:
                    out.append({"scope": scope, "key": key, "from": hist[i - 1][1], "to": value})
    return out


def build(git_dir: str) -> dict:
    configs = json.loads(CONFIGS.read_text(encoding="utf-8"))
    check_quotes(git_dir, [e for items in CHANGES.values() for e in items])
    check_quotes(git_dir, REMOVED_KEYS.values())
    check_quotes(git_dir, CONFIG_CHANGES)
    notes = show(git_dir, BRANCH_44, NOTES)
    headings = upgrade_headings(notes)
    old_mv, _low, _top = metadata_versions(show(git_dir, RELEASE_39, f"{COMMON}/MetadataVersion.java"))
    every_mv = {m["level"]: m for m in old_mv}
    releases = []
    removed = removed_keys(configs)
    for line in LINES:
        commits = release_commits()[line]
        version, commit, how = commits[-1]
        mvs, minimum, latest = metadata_versions(show(git_dir, commit, f"{COMMON}/MetadataVersion.java"))
        for m in mvs:
            every_mv[m["level"]] = m
        by_name = {m["name"]: m for m in mvs}
        features = {}
        for feature, cls in FEATURES.items():
            text = show(git_dir, commit, f"{COMMON}/{cls}.java")
            if text is None:
                continue
            levels, top = feature_levels(text)
            features[feature] = {
                "levels": {str(k): ("3.3-IV3" if v == "minimum" else v) for k, v in sorted(levels.items())},
                "latest_production": top,
                "release_version_level": default_level(levels, top, latest, minimum),
            }
        control = show(git_dir, commit, FEATURE_CONTROL) or ""
        nn = line.replace(".", "")
        entry = {
            "release": line,
            "status": "released" if how == "release" else "unreleased",
            "releases": [v for v, _c, _h in commits],
            "newest": version,
            "commit": commit,
            "source_note": PRERELEASES[version][1] if how != "release" else None,
            "upgrade_notes": {
                "url": UPGRADE_URL.format(nn=nn),
                "source": {"repository": "apache/kafka", **NOTES_44},
                **headings[line],
            },
            "metadata_mode": "kraft",
            "minimum_metadata_version": {"level": by_name[minimum]["level"], "name": minimum},
            "latest_production_metadata_version": {"level": by_name[latest]["level"], "name": latest},
            "new_metadata_versions": [m for m in mvs if m["release"] == line],
            "finalize": f"kafka-features.sh --bootstrap-server HOST:PORT upgrade --release-version {line}",
            "features": features,
            "kraft_version_upgradable": "upgradeKRaftVersion" in control,
            "changes": [{"id": e["id"], "summary": e["summary"], "cite": _cite(e)} for e in CHANGES[line]],
            "removed_keys": [r["key"] for r in removed if r["removed_in"] == f"{line}.0"],
            "default_changes": default_changes(configs, line),
            "config_changes": [
                {k: v for k, v in c.items() if k not in ("quote", "source", "url")} | {"cite": _cite(c)}
                for c in CONFIG_CHANGES
                if c["release"] == line
            ],
        }
        if not entry["source_note"]:
            del entry["source_note"]
        releases.append(entry)
    return {
        "about": (
            "Kafka 4.x upgrade facts per release line, read from Apache Kafka's sources at each release's "
            "commit (MetadataVersion, the feature versions, FeatureControlManager, the upgrade notes) and "
            "from auditor/data/kafka_configs.json; curated entries quote the page they come from. "
            "Generated by tools/extract_kafka_upgrades.py."
        ),
        "zookeeper_bridge": {
            "release": "3.9",
            "why": "the last release with ZooKeeper mode and the ZooKeeper-to-KRaft migration (KIP-866)",
            "url": "https://kafka.apache.org/39/operations/kraft/#zookeeper-to-kraft-migration",
        },
        "metadata_versions": [every_mv[k] for k in sorted(every_mv)],
        "removed_keys": removed,
        "releases": releases,
    }


def render(data: dict) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("git_dir", help="a Kafka git directory holding the release commits")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = ap.parse_args(argv)
    text = render(build(args.git_dir))
    if args.check:
        if args.out.read_text(encoding="utf-8") != text:
            print(f"{args.out}: differs from what the sources give; rerun without --check", file=sys.stderr)
            return 1
        print(f"{args.out}: up to date")
        return 0
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(json.loads(text)['releases'])} release lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
