"""UPG: upgrade readiness for every Kafka 4.x release (`kafka-audit preflight --target-version 4.N`,
`kafka-audit lint --target-version 4.N`).

Every fact that differs per release comes from the upgrade table, auditor/data/kafka4_upgrades.json
(tools/extract_kafka_upgrades.py: Kafka's upgrade notes, MetadataVersion and the feature versions
at each release's commit, each curated fact quoting its page), read through auditor/kafka_upgrades.py;
on MSK, auditor/data/msk_versions.json (AWS's pages). A rule names no release of its own: its
``target_version`` parameter (4.0-4.4, or ``latest``, the newest released line) selects the
table's entry, and the preflight and lint set it from ``--target-version``. Their scope is
"maintenance": `kafka-audit check` does not run them (UPG006, UPG010 are cluster rules).
"""

from auditor import kafka_upgrades as upgrades
from auditor.declarations import Category, Param, rule
from checks._api import F, Window, emit, ev, join, rows_frame, text
from checks.transforms import (
    cluster_settings,
    first_members,
    int_list,
    ranked,
    topic_settings,
    try_int,
    version_key,
)

CATEGORY = Category("UPG", "upgrade", "upgrade readiness", tuple(range(1, 13)))

TARGET = Param(
    "target_version",
    upgrades.LATEST,
    "the Kafka release line the upgrade goes to: 4.0 to 4.4, or latest (the newest released line); "
    "kafka-audit preflight and lint set it from --target-version",
)
MSK_MIGRATION = "https://docs.aws.amazon.com/msk/latest/developerguide/zk-to-kraft-migration.html"


def _target(params) -> dict:
    """The upgrade table's entry of the rule's target release line."""
    return upgrades.release(upgrades.resolve_target(params["target_version"]))


def _tv(entry: dict) -> int:
    """A release line's first release as a version number ("4.1" -> 4001000)."""
    return upgrades.vnum(entry["release"] + ".0")


def upgrade_view(tables):
    """One row per cluster: name, platform, mode (the controller table's, else the manifest's),
    software version (lowest broker version, else the cluster's kafka_version) as ``v`` and as
    text, az_count, the MSK instance type, public access and open monitoring flags, and the
    finalized metadata.version (level and name) when collected."""
    ctl = tables.controller.groupBy("cluster_id").agg(F.max(F.lower(F.col("mode"))).alias("ctl_mode"))
    brokers = (
        tables.brokers.select("cluster_id", version_key("version").alias("bv"), "version")
        .where(F.col("bv").isNotNull())
        .groupBy("cluster_id")
        .agg(F.min("bv").alias("broker_v"))
    )
    mv = (
        tables.features.where(F.col("feature") == "metadata.version")
        .groupBy("cluster_id")
        .agg(
            F.max("finalized_level").alias("mv_level"),
            F.max("version_name").alias("mv_name"),
        )
    )
    c = tables.clusters.select(
        "cluster_id",
        F.coalesce(F.col("cluster_name"), F.col("cluster_id")).alias("cluster"),
        F.lower(F.col("platform")).alias("platform"),
        F.lower(F.col("metadata_mode")).alias("manifest_mode"),
        "kafka_version",
        version_key("kafka_version").alias("cluster_v"),
        "az_count",
        "msk_instance_type",
        "msk_public_access",
        "msk_open_monitoring",
    )
    d = join(
        join(join(c, ctl, "cluster_id", "left"), brokers, "cluster_id", "left"),
        mv,
        "cluster_id",
        "left",
    )
    return d.select(
        "cluster_id",
        "cluster",
        "platform",
        F.coalesce(F.col("ctl_mode"), F.col("manifest_mode")).alias("mode"),
        F.coalesce(F.col("broker_v"), F.col("cluster_v")).alias("v"),
        F.when(F.col("broker_v").isNotNull(), _version_text(F.col("broker_v")))
        .otherwise(F.col("kafka_version"))
        .alias("version"),
        "az_count",
        "msk_instance_type",
        "msk_public_access",
        "msk_open_monitoring",
        "mv_level",
        "mv_name",
    )


def _version_text(v):
    """3006000 -> '3.6.0' (a version number as version_key encodes it)."""
    return text(
        F.floor(v / 1_000_000).cast("bigint"),
        ".",
        (F.floor(v / 1000) % 1000).cast("bigint"),
        ".",
        (v % 1000).cast("bigint"),
    )


def _line(v):
    """A version number's release line as text: 3009001 -> '3.9'."""
    return text(F.floor(v / 1_000_000).cast("bigint"), ".", (F.floor(v / 1000) % 1000).cast("bigint"))


def _view(tables):
    return tables.derived(upgrade_view)


def _msk():
    return F.coalesce(F.col("platform") == "msk", F.lit(False))


def _kraft():
    return F.coalesce(F.col("mode"), F.lit("")) != "zookeeper"


FEATURE_COLUMNS = {
    "group.version": "group_version",
    "share.version": "share_version",
    "streams.version": "streams_version",
    "eligible.leader.replicas.version": "elr_version",
    "kraft.version": "kraft_version",
}
PROTOCOLS, SHARE_ENABLE = "group.coordinator.rebalance.protocols", "group.share.enable"
MIGRATION_POLICY = "group.consumer.migration.policy"


def group_features(tables):
    """One row per cluster: its upgrade_view row with the finalized feature levels that switch
    4.x behaviour on (group_version, share_version, streams_version, elr_version, kraft_version:
    0 when the features were collected and the feature is not listed, KIP-1022; null when no
    feature was collected) and the settings that enable group protocols
    (group.coordinator.rebalance.protocols, group.share.enable, group.consumer.migration.policy;
    null when unset)."""
    feats = tables.features.groupBy("cluster_id").agg(
        *[
            F.max(F.when(F.col("feature") == name, F.col("finalized_level"))).alias("_" + col)
            for name, col in FEATURE_COLUMNS.items()
        ],
        F.count(F.lit(1)).alias("features"),
    )
    settings = (
        tables.derived(cluster_settings)
        .where(F.col("key").isin(PROTOCOLS, SHARE_ENABLE, MIGRATION_POLICY))
        .groupBy("cluster_id")
        .agg(
            F.max(F.when(F.col("key") == PROTOCOLS, F.col("value"))).alias("protocols"),
            F.max(F.when(F.col("key") == SHARE_ENABLE, F.lower(F.col("value")))).alias("share_enable"),
            F.max(F.when(F.col("key") == MIGRATION_POLICY, F.lower(F.col("value")))).alias(
                "migration_policy"
            ),
        )
    )
    d = join(join(tables.derived(upgrade_view), feats, "cluster_id", "left"), settings, "cluster_id", "left")
    known = F.coalesce(F.col("features"), F.lit(0)) > 0
    return d.select(
        "*",
        *[
            F.when(known, F.coalesce(F.col("_" + col), F.lit(0))).alias(col)
            for col in FEATURE_COLUMNS.values()
        ],
    ).drop(*["_" + col for col in FEATURE_COLUMNS.values()])


def _listed(protocols, name: str):
    """Whether a comma-separated protocol list names ``name`` (case-insensitive, spaces allowed)."""
    return F.coalesce(F.lower(protocols).rlike(f"(^|,) *{name} *(,|$)"), F.lit(False))


@rule(
    "UPG001",
    "zookeeper-mode-blocks-kafka-4",
    "critical",
    scope="maintenance",
    params=(TARGET,),
    uses=(upgrade_view,),
    runs_in=("upgrade", "lint-upgrade"),
    lint_key="metadata_mode",
)
def zookeeper_mode_blocks_kafka_4(tables, params):
    """The cluster runs in ZooKeeper mode: no Kafka 4.x release has a ZooKeeper mode, so it cannot be upgraded to 4.x before it migrates to KRaft.

    Why: every 4.x release runs only in KRaft mode; each one's upgrade notes say that clusters
    in ZooKeeper mode have to be migrated to KRaft mode before they can be upgraded (the
    upgrade table, auditor/data/kafka4_upgrades.json, change "kraft-only"). A 4.x broker has no
    ZooKeeper mode to run in (zookeeper.connect and every zookeeper.* key are gone from its
    configuration). The migration (KIP-866) runs on 3.x, 3.9 being the bridge release: Kafka's
    ZooKeeper to KRaft migration procedure, then the upgrade to the target from KRaft. On
    Amazon MSK the migration is an in-place `UpdateClusterKafkaVersion` to a `.kraft` version
    from 3.9.x in ZooKeeper mode (UPG005 checks AWS's prerequisites). The preflight prints the
    hops (auditor/kafka_upgrades.py path).

    Remediation: upgrade to 3.9.x (ZooKeeper mode), migrate to KRaft (provision
    controllers, migrate the metadata, roll the brokers into KRaft mode, finalize), then
    upgrade to the target; on MSK follow AWS's "Migrate from ZooKeeper to KRaft mode". Run
    `kafka-audit preflight --target-version 4.N` again after the migration.

    Example: ads-zk-legacy on Kafka 2.0.1 in ZooKeeper mode, target 4.1.

    References:
    - Kafka upgrade notes (4.0 to 4.4): "Clusters in ZooKeeper mode have to be migrated to KRaft mode before they can be upgraded" <https://kafka.apache.org/43/getting-started/upgrade>
    - Kafka 3.9 documentation: ZooKeeper to KRaft migration <https://kafka.apache.org/39/operations/kraft/#zookeeper-to-kraft-migration>
    - KIP-866: ZooKeeper to KRaft Migration <https://cwiki.apache.org/confluence/display/KAFKA/KIP-866+ZooKeeper+to+KRaft+Migration>
    - Amazon MSK: migrate from ZooKeeper to KRaft mode <https://docs.aws.amazon.com/msk/latest/developerguide/zk-to-kraft-migration.html>
    """
    target = _target(params)
    d = _view(tables).where(F.col("mode") == "zookeeper")
    t = target["release"]
    path = F.when(
        _msk(),
        F.lit(
            "on MSK: upgrade to 3.9.x in ZooKeeper mode, then migrate in place with UpdateClusterKafkaVersion "
            f"to a .kraft version (AWS, 'Migrate from ZooKeeper to KRaft mode'; see UPG005), then upgrade to {t}"
        ),
    ).otherwise(F.lit(f"upgrade to 3.9.x, migrate to KRaft (KIP-866), then upgrade to {t}"))
    msg = text(
        "ZooKeeper mode on Kafka ",
        F.coalesce(F.col("version"), F.lit("(version unknown)")),
        f": Kafka {t} has no ZooKeeper mode, so the cluster must migrate to KRaft on 3.x before "
        "any 4.x broker can join it; ",
        path,
    )
    return emit(
        d,
        "cluster",
        F.col("cluster"),
        msg,
        ev(
            mode=F.col("mode"),
            kafka_version=F.col("version"),
            platform=F.col("platform"),
            target=F.lit(t),
        ),
    )


@rule(
    "UPG002",
    "version-below-upgrade-floor",
    "critical",
    scope="maintenance",
    params=(TARGET,),
    uses=(upgrade_view,),
    runs_in=("upgrade", "lint-upgrade"),
    lint_key="kafka_version",
)
def version_below_upgrade_floor(tables, params):
    """A KRaft cluster runs a Kafka version older than the oldest the target release upgrades from (3.3 for every 4.x release).

    Why: each 4.x release's upgrade notes name the versions it upgrades from ("Upgrading Servers
    to 4.1.0 from any version 3.3.x through 4.0.x"; the upgrade table keeps each heading):
    broker upgrades require KRaft mode and a software version of at least 3.3.x, the first
    release in which KRaft was production-ready; KRaft clusters older than 3.3.x should be
    upgraded to 3.9.x first. The version judged is the lowest broker version
    (brokers.version), else the cluster's. ZooKeeper-mode clusters are UPG001.

    Remediation: upgrade the cluster to 3.9.x (a rolling upgrade, then finalize
    metadata.version with `kafka-features upgrade --metadata 3.9`), then to the target.

    Example: a KRaft cluster on Kafka 3.2.3, target 4.0.

    References:
    - Kafka upgrade notes: upgrading servers from any version 3.3.x through the previous release <https://kafka.apache.org/43/getting-started/upgrade>
    - Kafka 4.0 compatibility matrix (server compatibility by KRaft cluster version) <https://kafka.apache.org/40/getting-started/compatibility>
    """
    target = _target(params)
    notes = target["upgrade_notes"]
    d = _view(tables).where(_kraft() & (F.col("v") < F.lit(upgrades.vnum(notes["lowest"]))))
    msg = text(
        "Kafka ",
        F.col("version"),
        f": Kafka {target['release']} upgrades only from {notes['as_written']} (KRaft production-ready "
        "since 3.3); upgrade to 3.9.x first, then to " + target["release"],
    )
    return emit(
        d,
        "cluster",
        F.col("cluster"),
        msg,
        ev(
            kafka_version=F.col("version"),
            target=F.lit(target["release"]),
            upgrades_from=F.lit(notes["as_written"]),
        ),
    )


@rule(
    "UPG003",
    "metadata-version-not-finalized",
    "error",
    scope="maintenance",
    params=(TARGET,),
    uses=(upgrade_view,),
    runs_in=("upgrade", "lint-upgrade"),
    lint_key="metadata_version",
)
def metadata_version_not_finalized(tables, params):
    """The KRaft cluster's finalized metadata.version is below 3.3-IV3, which no 4.x release runs with (an error that blocks), or behind its running release (a warning).

    Why: every 4.x release requires the metadata version, not only the software, to be at
    least 3.3.x (the upgrade notes: "the software and metadata versions must be at least
    3.3.x"); the lowest level 4.x accepts is 3.3-IV3 (MetadataVersion.MINIMUM_VERSION, level 7,
    the upgrade table's minimum_metadata_version). Below it the upgrade cannot start: an error,
    and the preflight's upgrade verdict is "not ready". A metadata.version at or above 3.3-IV3
    but behind the running release is allowed by Kafka (a 3.9 cluster at 3.8-IV0 upgrades to
    4.x): the previous hop was never finalized and the features of the running release are off,
    so it is a warning, as CTL009 says outside an upgrade; finalizing first keeps the 4.x
    finalize step small. On Amazon MSK the controllers and metadata.version are AWS's: MSK
    finalizes as part of its version upgrade and documents no kafka-features step for customers.
    The release compared is the lowest broker version's (3.7-IV2 is release 3.7).

    Remediation: with every broker and controller on the running release and no rollback
    planned, finalize it: `kafka-features --bootstrap-server B upgrade --metadata 3.9`
    (`--release-version 3.9` from 3.8), check with `kafka-features describe`, then upgrade. On
    MSK, upgrade with `aws kafka update-cluster-kafka-version` (AWS finalizes); if the level
    stays behind afterwards, open an AWS support case.

    Example: brokers on 3.9.0 with metadata.version 3.2-IV0 (error); 3.9.0 at 3.8-IV0 (warning).

    References:
    - Kafka upgrade notes (software and metadata versions at least 3.3.x) <https://kafka.apache.org/43/getting-started/upgrade>
    - apache/kafka server-common/src/main/java/org/apache/kafka/server/common/MetadataVersion.java (MINIMUM_VERSION = IBP_3_3_IV3, level 7) <https://github.com/apache/kafka/blob/trunk/server-common/src/main/java/org/apache/kafka/server/common/MetadataVersion.java>
    - KIP-778: KRaft to KRaft Upgrades <https://cwiki.apache.org/confluence/display/KAFKA/KIP-778%3A+KRaft+to+KRaft+Upgrades>
    - Amazon MSK: upgrade the Apache Kafka version <https://docs.aws.amazon.com/msk/latest/developerguide/version-upgrades.html>
    """
    target = _target(params)
    floor = upgrades.floor_metadata_version()
    d = _view(tables).where(_kraft() & F.col("mv_level").isNotNull())
    release = F.floor(F.col("v") / 1000).cast("bigint") * 1000
    below_floor = F.col("mv_level") < F.lit(floor["level"])
    behind = F.coalesce(version_key(F.col("mv_name")) < release, F.lit(False))
    d = d.where(below_floor | behind)
    shown = _line(release)
    fix = F.when(
        _msk(),
        F.lit(
            "; on MSK, AWS finalizes metadata.version with its version upgrade (update-cluster-kafka-version): "
            "no kafka-features step"
        ),
    ).otherwise(
        text(
            "; finalize it (kafka-features upgrade --metadata ",
            F.when(F.col("v").isNotNull(), shown).otherwise(F.lit("RELEASE")),
            ")",
        )
    )
    msg = text(
        "finalized metadata.version ",
        F.coalesce(F.col("mv_name"), F.lit("(name unknown)")),
        " (level ",
        F.col("mv_level"),
        ")",
        F.when(
            below_floor,
            F.lit(
                f" is below {floor['name']}, the lowest Kafka {target['release']} runs with: the upgrade cannot start"
            ),
        ).otherwise(
            text(
                " is behind the running release ",
                shown,
                ": the last upgrade was never finalized and its features are off (Kafka allows the upgrade)",
            )
        ),
        fix,
        f" before upgrading to {target['release']}",
    )
    return emit(
        d,
        "cluster",
        F.col("cluster"),
        msg,
        ev(
            metadata_version=F.col("mv_name"),
            metadata_version_level=F.col("mv_level"),
            kafka_version=F.col("version"),
            below_kafka4_floor=below_floor,
            target=F.lit(target["release"]),
        ),
        severity=F.when(below_floor, F.lit("error")).otherwise(F.lit("warning")),
    )


def _removed_rows(tables, target: dict):
    """The keys removed at or before the target line (the upgrade table's removed_keys)."""
    top = _tv(target)
    rows = [
        {
            "scope": r["scope"],
            "key": r["key"],
            "removed": r["removed_in"],
            "grp": r["group"],
            "replacement": r.get("replacement"),
        }
        for r in upgrades.removed_keys()
        if upgrades.vnum(r["removed_in"]) <= top
    ]
    return rows_frame(
        tables.session, rows, "scope string, key string, removed string, grp string, replacement string"
    )


@rule(
    "UPG004",
    "config-removed-in-kafka-4",
    "warning",
    scope="maintenance",
    needs=("configs",),
    params=(TARGET,),
    uses=(upgrade_view,),
    runs_in=("upgrade", "lint-upgrade"),
)
def config_removed_in_kafka_4(tables, params):
    """A configuration key that the target release no longer has is still set: a warning where it still acts on the running cluster, info where KRaft already ignores it.

    Why: a 4.x broker ignores a key it does not know (it logs it as unknown), so a setting
    you rely on silently stops applying (delegation.token.master.key: tokens need
    delegation.token.secret.key; offsets.commit.required.acks; log.message.timestamp.difference
    .max.ms, replaced by KIP-937's before/after settings; auto.include.jmx.reporter): a
    warning. Keys that a KRaft cluster of 3.x already ignores change nothing when they go:
    Kafka's "Differences Between KRaft mode and ZooKeeper mode" lists the ZooKeeper-only ones
    (zookeeper.*, password.encoder.*, control.plane.listener.name, controlled.shutdown.max.retries
    and .retry.backoff.ms, broker.id.generation.enable, reserved.broker.max.id,
    inter.broker.protocol.version, leader.imbalance.per.broker.percentage), and the message format
    versions have been ignored since inter.broker.protocol.version 3.0 (KIP-724), below every
    KRaft metadata.version: info on a KRaft cluster (remove them as clean-up). On a ZooKeeper
    cluster the ZooKeeper keys go with the migration (UPG001) and are not reported; the other
    KRaft-inert keys are info there too. The keys and the release that removed them come from
    Kafka's own ConfigDef definitions at every release (auditor/data/kafka_configs.json); the
    grouping from the upgrade table (auditor/data/kafka4_upgrades.json removed_keys, each group
    quoting its page). Values Kafka or MSK set by default are not reported, only broker,
    cluster-default and topic settings someone wrote.

    Remediation: remove the key from server.properties (and the MSK configuration), or
    delete the dynamic value (`kafka-configs --alter --delete-config KEY`), and set its
    replacement where the upgrade notes name one, before the upgrade.

    Example: `offsets.commit.required.acks=-1` (warning) and `inter.broker.protocol.version=3.9` (info) in server.properties of a KRaft 3.9 cluster.

    References:
    - Kafka 4.0 upgrade notes: notable changes in 4.0.0 (removed configurations) <https://kafka.apache.org/40/getting-started/upgrade>
    - Kafka documentation: Differences Between KRaft mode and ZooKeeper mode (removed configurations) <https://kafka.apache.org/43/getting-started/zk2kraft>
    - KIP-724: Drop support for message formats v0 and v1 <https://cwiki.apache.org/confluence/display/KAFKA/KIP-724%3A+Drop+support+for+message+formats+v0+and+v1>
    - KIP-937: Improve Message Timestamp Validation <https://cwiki.apache.org/confluence/display/KAFKA/KIP-937%3A+Improve+Message+Timestamp+Validation>
    """
    target = _target(params)
    keys = _removed_rows(tables, target)
    scoped = tables.configs.where(
        F.col("key").isNotNull()
        & (F.coalesce(F.col("source"), F.lit("STATIC_BROKER_CONFIG")) != "DEFAULT_CONFIG")
        & F.col("entity_type").isin("broker", "cluster_default", "topic")
    ).select(
        "cluster_id",
        "entity_type",
        "entity_name",
        "key",
        "source",
        F.when(F.col("entity_type") == "topic", F.lit("topic")).otherwise(F.lit("broker")).alias("scope"),
    )
    d = join(scoped, keys, ["scope", "key"]).withColumn(
        "entity", F.concat_ws(" ", F.col("entity_type"), F.col("entity_name"))
    )
    group = ["cluster_id", "key", "removed", "grp", "replacement"]
    d = (
        ranked(d, group, "entity")
        .groupBy(*group)
        .agg(
            first_members("entity").alias("where"),  # the first LISTED by name, all counted
            F.count(F.lit(1)).alias("entries"),
        )
    )
    mode = _view(tables).select("cluster_id", "mode")
    d = join(d, mode, "cluster_id", "left")
    zk = F.coalesce(F.col("mode") == "zookeeper", F.lit(False))
    d = d.where(~(zk & (F.col("grp") == "zookeeper")))
    inert = F.col("grp").isin("kraft_inert", "zookeeper")
    effect = (
        F.when(
            inert & ~zk,
            F.lit(": KRaft already ignores it, so nothing changes; remove it as clean-up"),
        )
        .when(
            inert,
            F.lit(": it stops applying with the KRaft migration; remove it once migrated"),
        )
        .otherwise(
            text(
                ": a 4.x broker ignores it, so what it configures changes; remove it",
                F.when(F.col("replacement").isNotNull(), text(" and set ", F.col("replacement"))).otherwise(
                    F.lit("")
                ),
                " before the upgrade",
            )
        )
    )
    msg = text(
        F.col("key"),
        " is set on ",
        F.col("entries"),
        " entit(ies) (",
        F.element_at(F.col("where"), 1),
        F.when(F.size("where") > 1, F.lit(", ...")).otherwise(F.lit("")),
        ") but Kafka removed it in ",
        F.col("removed"),
        effect,
    )
    return emit(
        d,
        "config",
        F.col("key"),
        msg,
        ev(
            key=F.col("key"),
            removed_in=F.col("removed"),
            set_on=F.col("where"),
            entries=F.col("entries"),
            acts_today=~inert,
            replacement=F.col("replacement"),
        ),
        severity=F.when(inert, F.lit("info")),
    )


@rule(
    "UPG005",
    "msk-kraft-migration-prerequisites",
    "critical",
    scope="maintenance",
    params=(TARGET,),
    uses=(upgrade_view,),
    runs_in=("upgrade", "lint-upgrade"),
    lint_key="kafka_version",
)
def msk_kraft_migration_prerequisites(tables, params):
    """An MSK cluster in ZooKeeper mode does not meet AWS's prerequisites for migrating to KRaft in place, the step before Kafka 4.x.

    Why: AWS migrates an MSK cluster from ZooKeeper to KRaft in place with the
    UpdateClusterKafkaVersion API (a `.kraft` target version), and lists prerequisites
    (auditor/data/msk_versions.json): the cluster runs Apache Kafka 3.9.x in ZooKeeper mode
    (older versions upgrade to 3.9.x first), Standard brokers are deployed across 3
    Availability Zones, the cluster is ACTIVE with no pending operation, ZooKeeper client
    access is disabled (UpdateConnectivity, ZookeeperAccess.Enabled=false), tools and clients
    use bootstrap servers, not ZooKeeper, the cluster does not have public access and open
    monitoring both on, it does not use kafka.t3.small brokers, and advertised.listeners is not
    set dynamically on any broker. This rule checks what the snapshot holds: the version
    (lowest broker version, else the cluster's), the number of Availability Zones (az_count),
    the instance type, public access and open monitoring (DescribeClusterV2) and the brokers'
    dynamic advertised.listeners (DescribeConfigs); the cluster state is MSK004's. ZooKeeper
    access and the tools are not in the snapshot: check them by hand.

    Remediation: upgrade to 3.9.x with `aws kafka update-cluster-kafka-version`; a 2-AZ
    Standard cluster needs a new 3-AZ cluster (AWS does not move brokers across AZs); move off
    kafka.t3.small (update-broker-type); turn public access or open monitoring off; delete the
    dynamic advertised.listeners (`kafka-configs --entity-type brokers --entity-name N --alter
    --delete-config advertised.listeners`); disable ZooKeeper access; then run the migration as
    AWS documents it.

    Example: payments-msk, Standard brokers, Kafka 3.6.0 in ZooKeeper mode.

    References:
    - Amazon MSK: migrate from ZooKeeper to KRaft mode (prerequisites) <https://docs.aws.amazon.com/msk/latest/developerguide/zk-to-kraft-migration.html>
    - Amazon MSK: upgrade the Apache Kafka version (.kraft target versions) <https://docs.aws.amazon.com/msk/latest/developerguide/version-upgrades.html>
    - Kafka upgrade notes (ZooKeeper-mode clusters migrate to KRaft first) <https://kafka.apache.org/43/getting-started/upgrade>
    """
    target = _target(params)
    migration = upgrades.msk()["migration"]
    from_v = upgrades.vnum(migration["from"])
    dynamic_listeners = (
        tables.configs.where(
            (F.col("entity_type") == "broker")
            & (F.col("source") == "DYNAMIC_BROKER_CONFIG")
            & (F.col("key") == "advertised.listeners")
        )
        .groupBy("cluster_id")
        .agg(F.sort_array(F.collect_set(try_int("entity_name"))).alias("dyn_brokers"))
    )
    d = join(
        _view(tables).where(_msk() & (F.col("mode") == "zookeeper")), dynamic_listeners, "cluster_id", "left"
    )
    old = F.coalesce(F.col("v") < F.lit(from_v), F.lit(False))
    express = F.coalesce(F.lower(F.col("msk_instance_type")).startswith("express."), F.lit(False))
    azs = ~express & F.coalesce(F.col("az_count") != 3, F.lit(False))
    t3 = F.coalesce(F.lower(F.col("msk_instance_type")) == "kafka.t3.small", F.lit(False))
    public = F.coalesce(F.col("msk_public_access") & F.col("msk_open_monitoring"), F.lit(False))
    listeners = F.coalesce(F.size("dyn_brokers") > 0, F.lit(False))
    d = d.where(old | azs | t3 | public | listeners)
    reasons = F.concat_ws(
        "; ",
        F.when(
            old, text("it runs Kafka ", F.col("version"), ": AWS migrates from 3.9.x, upgrade to 3.9.x first")
        ),
        F.when(
            azs,
            text(
                "it spans ",
                F.col("az_count"),
                " Availability Zone(s): AWS requires Standard brokers across 3",
            ),
        ),
        F.when(t3, F.lit("it uses kafka.t3.small brokers, which AWS's migration excludes")),
        F.when(public, F.lit("public access and open monitoring are both on: turn one off")),
        F.when(
            listeners,
            text(
                "advertised.listeners is set dynamically on broker(s) ",
                int_list(F.col("dyn_brokers")),
                ": delete it",
            ),
        ),
    )
    msg = text(
        "MSK in ZooKeeper mode cannot migrate to KRaft (the step before Kafka ",
        target["release"],
        ") yet: ",
        reasons,
        "; also disable ZooKeeper access and move tools off ZooKeeper (not in the snapshot: check by hand)",
    )
    return emit(
        d,
        "cluster",
        F.col("cluster"),
        msg,
        ev(
            kafka_version=F.col("version"),
            az_count=F.col("az_count"),
            instance_type=F.col("msk_instance_type"),
            dynamic_advertised_listeners=F.col("dyn_brokers"),
            migration_from=F.lit(migration["from"]),
            target=F.lit(target["release"]),
        ),
    )


# -- UPG006: KIP-848 (consumer rebalance protocol) and KIP-932 (share groups) on 4.x --------


def _stage_line(change_id: str) -> str:
    """The release line whose upgrade notes carry ``change_id`` (the upgrade table's changes)."""
    return upgrades.first_line_where(lambda r: any(c["id"] == change_id for c in r["changes"]))


@rule(
    "UPG006",
    "consumer-rebalance-protocol",
    "info",
    uses=(upgrade_view, cluster_settings, group_features),
    runs_in=("upgrade",),
)
def consumer_rebalance_protocol(tables, params):
    """On Kafka 4.x the KIP-848 consumer rebalance protocol is off, or share groups (KIP-932) are on before they are production-ready.

    Why: Kafka 4.0 makes the consumer rebalance protocol of KIP-848 generally available:
    a broker serves ConsumerGroupHeartbeat only when group.coordinator.rebalance.protocols
    lists `consumer` (4.0's default: classic,consumer) and the finalized feature
    group.version is at least 1 (GroupVersion.GV_1, "enables the consumer rebalance
    protocol"); otherwise consumers configured with group.protocol=consumer fail with
    UNSUPPORTED_VERSION while classic groups keep working (KafkaApis
    isConsumerGroupProtocolEnabled). group.version=1 is the default of a cluster formatted
    at 4.0 (its bootstrap metadata version is 4.0-IV0); a feature level is raised only by
    `kafka-features upgrade`, so a cluster upgraded from 3.x keeps level 0 until someone
    finalizes it. Share groups (KIP-932, the `__share_group_state` topic) ship in 4.0 as
    early access, switched on by group.share.enable=true ("must not be enabled on
    production clusters"; a cluster on which it was used cannot be upgraded), in 4.1 as a
    preview switched on by the share.version feature, and are production-ready in 4.2: the
    finding says when they are on before that. The releases come from the upgrade table
    (changes share-groups-early-access, share-groups-preview; share.version's level at the
    finalize step). Judged for clusters whose lowest broker version is 4.0 or later; the
    group.version part only where the features were collected (ApiVersions, KIP-584).
    Informational: nothing breaks for classic consumers.

    Remediation: to offer the new protocol, finalize it: `kafka-features --bootstrap-server B
    upgrade --feature group.version=1` (or `--release-version 4.0`, every feature at its 4.0
    level) and leave `consumer` in group.coordinator.rebalance.protocols; then move
    consumers over with group.protocol=consumer (the consumer rebalance protocol guide
    lists the client-side changes). Turn share groups off on production clusters before
    4.2 (group.share.enable=false on 4.0; `kafka-features downgrade --feature
    share.version=0` on 4.1).

    Example: a cluster upgraded from 3.9 to 4.0.0 whose finalized features list metadata.version 4.0-IV3 but no group.version.

    References:
    - Kafka 4.0 documentation: consumer rebalance protocol ("automatically enabled on the server since Apache Kafka 4.0 ... controlled by the group.version feature flag") <https://kafka.apache.org/40/operations/consumer-rebalance-protocol>
    - apache/kafka server-common/src/main/java/org/apache/kafka/server/common/GroupVersion.java (GV_1, bootstrap IBP_4_0_IV0) <https://github.com/apache/kafka/blob/trunk/server-common/src/main/java/org/apache/kafka/server/common/GroupVersion.java>
    - apache/kafka group-coordinator/src/main/java/org/apache/kafka/coordinator/group/GroupCoordinatorConfig.java (group.coordinator.rebalance.protocols, default classic,consumer in 4.0) <https://github.com/apache/kafka/blob/trunk/group-coordinator/src/main/java/org/apache/kafka/coordinator/group/GroupCoordinatorConfig.java>
    - apache/kafka core/src/main/scala/kafka/server/KafkaApis.scala (isConsumerGroupProtocolEnabled, UNSUPPORTED_VERSION) <https://github.com/apache/kafka/blob/trunk/core/src/main/scala/kafka/server/KafkaApis.scala>
    - KIP-584: Versioning scheme for features (finalized feature levels change only through UpdateFeatures, the kafka-features tool) <https://cwiki.apache.org/confluence/display/KAFKA/KIP-584%3A+Versioning+scheme+for+features>
    - KIP-848: The Next Generation of the Consumer Rebalance Protocol <https://cwiki.apache.org/confluence/display/KAFKA/KIP-848%3A+The+Next+Generation+of+the+Consumer+Rebalance+Protocol>
    - Queues for Kafka (KIP-932) early access release notes (Kafka 4.0) <https://cwiki.apache.org/confluence/spaces/KAFKA/pages/337676939/Queues+for+Kafka+KIP-932+-+Early+Access+Release+Notes>
    - Kafka 4.1 upgrade notes (share groups preview, share.version=1) <https://kafka.apache.org/41/getting-started/upgrade>
    - Kafka 4.2 upgrade notes (share groups production-ready) <https://kafka.apache.org/42/getting-started/upgrade/>
    """
    first = upgrades.vnum(upgrades.lines()[0] + ".0")
    preview = upgrades.vnum(_stage_line("share-groups-preview") + ".0")
    production_line = upgrades.feature_on_at_finalize("share.version")
    production = upgrades.vnum(production_line + ".0")
    d = tables.derived(group_features).where(F.col("v") >= F.lit(first))
    listed = F.col("protocols").isNull() | _listed(F.col("protocols"), "consumer")
    feature_off = F.coalesce(F.col("group_version") < 1, F.lit(False))
    consumer_off = feature_off | ~listed
    share_on = (
        F.coalesce(F.col("share_enable") == "true", F.lit(False))
        | F.coalesce(F.col("share_version") >= 1, F.lit(False))
        | _listed(F.col("protocols"), "share")
    )
    share_early = share_on & (F.col("v") < F.lit(production))
    d = d.where(consumer_off | share_early)
    why_off = F.concat_ws(
        " and ",
        F.when(feature_off, text("the finalized group.version is ", F.col("group_version"), " (needs 1)")),
        F.when(~listed, text(PROTOCOLS + "=", F.col("protocols"), " does not list consumer")),
    )
    consumer_part = F.when(
        consumer_off,
        text(
            "the KIP-848 consumer rebalance protocol is off: ",
            why_off,
            "; consumers with group.protocol=consumer get UNSUPPORTED_VERSION (classic groups keep working)",
        ),
    ).otherwise(F.lit("the KIP-848 consumer rebalance protocol is on"))
    stage = F.when(
        F.col("v") < F.lit(preview),
        F.lit(f"early access in {upgrades.lines()[0]}, not for production and not upgradable"),
    ).otherwise(
        F.lit(f"a preview in {_stage_line('share-groups-preview')}, production-ready from {production_line}")
    )
    share_part = F.when(share_early, text("; share groups (KIP-932) are on, ", stage)).otherwise(F.lit(""))
    msg = text("Kafka ", F.col("version"), ": ", consumer_part, share_part)
    return emit(
        d,
        "cluster",
        F.col("cluster"),
        msg,
        ev(
            kafka_version=F.col("version"),
            group_version=F.col("group_version"),
            rebalance_protocols=F.col("protocols"),
            consumer_protocol_enabled=~consumer_off,
            share_version=F.col("share_version"),
            share_groups_enabled=share_on,
        ),
    )


# -- UPG007: eligible leader replicas (KIP-966) and broker-level min.insync.replicas --------

MIN_ISR = "min.insync.replicas"
ELR = "eligible.leader.replicas.version"


@rule(
    "UPG007",
    "elr-broker-min-isr",
    "error",
    scope="maintenance",
    needs=("configs",),
    params=(TARGET,),
    uses=(upgrade_view, group_features),
    runs_in=("upgrade", "lint-upgrade"),
    lint_key=MIN_ISR,
)
def elr_broker_min_isr(tables, params):
    """min.insync.replicas is set per broker on a cluster going to a release that turns eligible leader replicas (KIP-966) on: the controller deletes the broker-level values and refuses new ones.

    Why: from Kafka 4.1 eligible leader replicas are on for new clusters, and the documented
    finalize step of an upgrade, `kafka-features upgrade --release-version 4.1` (or later),
    sets eligible.leader.replicas.version=1 (Feature.defaultVersion: ELRV_1's bootstrap
    metadata version is 4.1-IV0; the upgrade table's release_version_level). When ELR is
    turned on the controller removes every broker-level min.insync.replicas and creates the
    cluster-level one, if there is none, from the active controller's own static
    min.insync.replicas (ConfigurationControlManager.maybeGenerateElrSafetyRecords); afterwards
    a broker-level value is refused ("Broker-level min.insync.replicas cannot be altered while
    ELR is enabled", isDisallowedBrokerMinIsrTransition). Two consequences, each a finding:
    a dynamic per-broker value (what Strimzi sets from spec.kafka.config, per broker) is
    deleted, and Strimzi's KafkaRoller, refused on every reconcile, restarted brokers in a loop
    (strimzi-kafka-operator#11685; later Strimzi releases skip the change, so the value stops
    applying instead): an error; and without a cluster-level value, the brokers' static
    min.insync.replicas in server.properties stops counting (a dynamic cluster default
    overrides it) and the cluster-level value becomes whatever the active controller's own
    properties say (Kafka's default 1 unless set there): a warning. Judged when the target
    line turns ELR on at its finalize step and the cluster has not finalized ELR yet (its
    eligible.leader.replicas.version is 0, or not collected).

    Remediation: before the finalize step, set the value at cluster level and delete the
    per-broker ones: `kafka-configs --bootstrap-server B --alter --entity-type brokers
    --entity-default --add-config min.insync.replicas=N`, then `--entity-name ID
    --delete-config min.insync.replicas` for each broker; on Strimzi, set it once at cluster
    level and keep it out of per-broker changes (Strimzi's guidance for ELR), or finalize
    with `--metadata 4.1` and leave eligible.leader.replicas.version at 0 until then.

    Example: a 4.0 cluster whose brokers have min.insync.replicas=2 as a dynamic per-broker config, target 4.1.

    References:
    - Kafka 4.1 upgrade notes: ELR enabled by default; broker-level min.insync.replicas removed <https://kafka.apache.org/41/getting-started/upgrade>
    - Kafka documentation: Eligible Leader Replicas (upgrade and tool notes) <https://kafka.apache.org/43/operations/eligible-leader-replicas>
    - apache/kafka metadata/src/main/java/org/apache/kafka/controller/ConfigurationControlManager.java (maybeGenerateElrSafetyRecords, isDisallowedBrokerMinIsrTransition) <https://github.com/apache/kafka/blob/4.1/metadata/src/main/java/org/apache/kafka/controller/ConfigurationControlManager.java>
    - apache/kafka server-common/src/main/java/org/apache/kafka/server/common/EligibleLeaderReplicasVersion.java (ELRV_1 at IBP_4_1_IV0) <https://github.com/apache/kafka/blob/4.1/server-common/src/main/java/org/apache/kafka/server/common/EligibleLeaderReplicasVersion.java>
    - strimzi-kafka-operator#11685: endless broker restarts when changing min.insync.replicas with ELR enabled <https://github.com/strimzi/strimzi-kafka-operator/issues/11685>
    - KIP-966: Eligible Leader Replicas <https://cwiki.apache.org/confluence/display/KAFKA/KIP-966%3A+Eligible+Leader+Replicas>
    """
    target = _target(params)
    on_line = upgrades.feature_on_at_finalize(ELR)
    level = target["features"].get(ELR, {}).get("release_version_level", 0)
    platform = tables.clusters.select("cluster_id", F.lower(F.col("platform")).alias("_platform"))
    c = join(
        tables.configs.where(
            (F.col("key") == MIN_ISR) & (F.col("entity_type").isin("broker", "cluster_default"))
        ),
        platform,
        "cluster_id",
        "left",
    )
    # Strimzi applies spec.kafka.config to each broker as a dynamic per-broker config (KafkaRoller,
    # incrementalAlterConfigs per broker id): what lint reads from a Kafka resource is per broker.
    on_strimzi = F.coalesce(F.col("_platform") == "strimzi", F.lit(False))
    per_broker = (
        c.where(
            (F.col("entity_type") == "broker")
            & ((F.col("source") == "DYNAMIC_BROKER_CONFIG") | (on_strimzi & (F.trim(F.col("value")) != "1")))
        )
        .groupBy("cluster_id")
        .agg(
            F.sort_array(F.collect_set(try_int("entity_name"))).alias("dyn_brokers"),
            F.sort_array(F.collect_set(F.trim(F.col("value")))).alias("dyn_values"),
        )
    )
    static = (
        c.where(
            (F.col("entity_type") == "broker")
            & ~on_strimzi
            & (F.coalesce(F.col("source"), F.lit("STATIC_BROKER_CONFIG")) == "STATIC_BROKER_CONFIG")
        )
        .groupBy("cluster_id")
        .agg(F.sort_array(F.collect_set(F.trim(F.col("value")))).alias("static_values"))
    )
    cluster_level = (
        c.where(F.col("entity_type") == "cluster_default")
        .groupBy("cluster_id")
        .agg(F.max(F.trim(F.col("value"))).alias("cluster_value"))
    )
    view = tables.derived(group_features).select(
        "cluster_id", "cluster", "platform", "version", "v", "elr_version"
    )
    d = join(
        join(join(view, per_broker, "cluster_id", "left"), static, "cluster_id", "left"),
        cluster_level,
        "cluster_id",
        "left",
    )
    pending = F.coalesce(F.col("elr_version") < 1, F.lit(True)) & F.lit(level >= 1)
    dynamic = F.coalesce(F.size("dyn_brokers") > 0, F.lit(False))
    statics = F.col("cluster_value").isNull() & F.coalesce(
        F.size(F.filter(F.col("static_values"), lambda x: x != F.lit("1"))) > 0, F.lit(False)
    )
    d = d.where(pending & (dynamic | statics))
    strimzi = F.coalesce(F.col("platform") == "strimzi", F.lit(False))
    what = F.when(
        dynamic,
        text(
            "min.insync.replicas is set per broker (",
            F.concat_ws("/", F.col("dyn_values")),
            " on broker(s) ",
            int_list(F.col("dyn_brokers")),
            F.when(strimzi, F.lit(") in spec.kafka.config, which Strimzi applies to each broker")).otherwise(
                F.lit(") as a dynamic broker config")
            ),
            ": turning ELR on deletes it and refuses it afterwards",
            F.when(
                strimzi,
                F.lit(
                    "; Strimzi's roller, refused, restarted brokers in a loop (strimzi-kafka-operator#11685)"
                ),
            ).otherwise(F.lit("")),
        ),
    ).otherwise(
        text(
            "no cluster-level min.insync.replicas while server.properties sets ",
            F.concat_ws("/", F.col("static_values")),
            ": turning ELR on creates the cluster-level value from the active controller's own static "
            "min.insync.replicas (1 unless set there), which then overrides the brokers'",
        )
    )
    msg = text(
        what,
        f"; Kafka {target['release']}'s finalize step (--release-version {target['release']}) turns eligible leader "
        f"replicas on (KIP-966, from {on_line}): set min.insync.replicas at cluster level "
        "(kafka-configs --entity-default) and delete the per-broker values first",
    )
    return emit(
        d,
        "cluster",
        F.col("cluster"),
        msg,
        ev(
            target=F.lit(target["release"]),
            per_broker_brokers=F.col("dyn_brokers"),
            per_broker_values=F.col("dyn_values"),
            static_values=F.col("static_values"),
            cluster_level=F.col("cluster_value"),
            elr_version=F.col("elr_version"),
        ),
        severity=F.when(~dynamic, F.lit("warning")),
    )


# -- UPG008: share groups (KIP-932) and streams groups (KIP-1071) by release ----------------

SHARE_STATE_RF = "share.coordinator.state.topic.replication.factor"


@rule(
    "UPG008",
    "early-access-groups-by-release",
    "warning",
    scope="maintenance",
    params=(TARGET,),
    uses=(upgrade_view, cluster_settings, group_features),
    runs_in=("upgrade", "lint-upgrade"),
)
def early_access_groups_by_release(tables, params):
    """Share groups (KIP-932) or streams groups (KIP-1071) are on at a stage their release does not support upgrading or production use, or the target's finalize step turns share groups on in a cluster too small for their state topic.

    Why: the upgrade table says, per release, what each group type is. Share groups are early
    access in 4.0 (group.share.enable): "It is not possible to upgrade clusters on which this
    early access feature has been enabled and used" (the 4.0 early access release notes): an
    error that blocks the upgrade. The streams rebalance protocol is early access in 4.1
    ("disabled by default, and not for production use-cases"): a warning on a 4.1 cluster
    that enables it (streams.version, or streams in group.coordinator.rebalance.protocols).
    From 4.2 both are production-ready, and the finalize step `--release-version 4.2` (or
    later) sets share.version=1 and streams.version=1 (the features' bootstrap metadata
    versions 4.2-IV0 and 4.2-IV1). Share groups then create the internal topic
    `__share_group_state` with share.coordinator.state.topic.replication.factor (default 3)
    replicas: "If you wish to use share groups in a cluster with fewer than 3 brokers, you must
    set ... to 1" (4.2 upgrade notes): a warning when the target turns share groups on and the
    cluster has fewer brokers than that factor. Migrating classic groups to streams groups
    needs 4.2.1 (KAFKA-20254).

    Remediation: on 4.0, turn share groups off and do not upgrade a cluster that used them
    (build a new one); on 4.1, keep streams groups to throw-away clusters until 4.2; before
    finalizing 4.2+ on a small cluster, set share.coordinator.state.topic.replication.factor
    and share.coordinator.state.topic.min.isr to what it can hold, or finalize with
    `--feature` levels that leave share.version at 0.

    Example: a 2-broker 4.1 cluster, target 4.2.

    References:
    - Queues for Kafka (KIP-932) early access release notes (Kafka 4.0) <https://cwiki.apache.org/confluence/display/KAFKA/Queues+for+Kafka+%28KIP-932%29+-+Early+Access+Release+Notes>
    - Kafka 4.1 upgrade notes (streams rebalance protocol early access; share groups preview) <https://kafka.apache.org/41/getting-started/upgrade>
    - Kafka 4.2 upgrade notes (share groups and the streams rebalance protocol production-ready; share groups with fewer than 3 brokers) <https://kafka.apache.org/42/getting-started/upgrade>
    - apache/kafka server-common/src/main/java/org/apache/kafka/server/common/ShareVersion.java and StreamsVersion.java (SV_1 at IBP_4_2_IV0, IBP_4_2_IV1) <https://github.com/apache/kafka/blob/4.2/server-common/src/main/java/org/apache/kafka/server/common/ShareVersion.java>
    - KIP-1071: Streams Rebalance Protocol <https://cwiki.apache.org/confluence/display/KAFKA/KIP-1071%3A+Streams+Rebalance+Protocol>
    """
    target = _target(params)
    tv = _tv(target)
    share_ea = upgrades.vnum(_stage_line("share-groups-early-access") + ".0")
    streams_ea_line = _stage_line("streams-protocol-early-access")
    streams_ea = upgrades.vnum(streams_ea_line + ".0")
    share_finalize = target["features"].get("share.version", {}).get("release_version_level", 0) >= 1
    counts = tables.brokers.groupBy("cluster_id").agg(F.count(F.lit(1)).alias("broker_count"))
    rf = (
        tables.derived(cluster_settings)
        .where(F.col("key") == SHARE_STATE_RF)
        .select("cluster_id", try_int("value").alias("state_rf"))
    )
    d = join(join(tables.derived(group_features), counts, "cluster_id", "left"), rf, "cluster_id", "left")
    running_line = F.floor(F.col("v") / 1000) * 1000
    share_on = (
        F.coalesce(F.col("share_enable") == "true", F.lit(False))
        | F.coalesce(F.col("share_version") >= 1, F.lit(False))
        | _listed(F.col("protocols"), "share")
    )
    streams_on = F.coalesce(F.col("streams_version") >= 1, F.lit(False)) | _listed(
        F.col("protocols"), "streams"
    )
    share_blocked = share_on & (running_line == F.lit(share_ea)) & F.lit(tv > share_ea)
    streams_early = streams_on & (running_line == F.lit(streams_ea))
    state_rf = F.coalesce(F.col("state_rf"), F.lit(3))
    small = (
        F.lit(share_finalize)
        & F.coalesce(F.col("share_version") < 1, F.lit(True))
        & F.coalesce(F.col("broker_count") < state_rf, F.lit(False))
        & F.coalesce(F.col("v") < F.lit(tv), F.lit(True))
    )
    d = d.where(share_blocked | streams_early | small)
    parts = F.concat_ws(
        "; ",
        F.when(
            share_blocked,
            F.lit(
                f"share groups are on in {upgrades.lines()[0]}'s early access: a cluster that used them cannot be "
                "upgraded (KIP-932 early access release notes); build a new cluster for the target"
            ),
        ),
        F.when(
            streams_early,
            F.lit(
                f"streams groups (KIP-1071) are on in {streams_ea_line}'s early access, not for production; "
                "production-ready from 4.2 (classic-to-streams migration from 4.2.1, KAFKA-20254)"
            ),
        ),
        F.when(
            small,
            text(
                f"finalizing {target['release']} turns share groups on (share.version=1), and their state topic "
                "__share_group_state needs ",
                state_rf,
                " brokers (" + SHARE_STATE_RF + ") where the cluster has ",
                F.col("broker_count"),
                ": lower it and share.coordinator.state.topic.min.isr first",
            ),
        ),
    )
    return emit(
        d,
        "cluster",
        F.col("cluster"),
        text("Kafka ", F.coalesce(F.col("version"), F.lit("(version unknown)")), ": ", parts),
        ev(
            target=F.lit(target["release"]),
            share_groups_on=share_on,
            streams_groups_on=streams_on,
            broker_count=F.col("broker_count"),
            share_state_replication_factor=state_rf,
        ),
        severity=F.when(share_blocked, F.lit("error")),
    )


# -- UPG009: consumer groups still on the classic protocol (KIP-848) ------------------------


@rule(
    "UPG009",
    "classic-consumer-groups",
    "info",
    scope="maintenance",
    needs=("consumer_groups",),
    params=(TARGET, Param("max_listed", 10, "how many classic groups the finding names (all are counted)")),
    uses=(upgrade_view, cluster_settings, group_features),
    runs_in=("upgrade",),
)
def classic_consumer_groups(tables, params):
    """Active consumer groups still use the classic rebalance protocol on a cluster going to 4.x, where the KIP-848 consumer protocol is generally available.

    Why: Kafka 4.0 makes the KIP-848 protocol generally available and turns it on when the
    upgrade is finalized (group.version=1, 4.0 upgrade notes); classic groups keep working, so
    this is information for planning: each group moves when its consumers restart with
    group.protocol=consumer. A non-empty classic group converts online to a consumer group
    only as group.consumer.migration.policy allows (default bidirectional; `upgrade` also
    converts up; `disabled` or `downgrade` refuse the upgrade of a non-empty group:
    GroupCoordinatorConfig, ConsumerGroupMigrationPolicy): a warning then, since each group
    would have to be emptied first. A group's type comes from ListGroups v5 (KIP-848: classic
    or consumer); a cluster before 4.0 reports none, and there every group is classic unless
    the KIP-848 preview was switched on. Empty and dead groups (offsets only) are left out.

    Remediation: keep group.consumer.migration.policy at bidirectional (or upgrade) during the
    move; roll each group's consumers with group.protocol=consumer (and the client-side
    changes the consumer rebalance protocol guide lists: no partition.assignment.strategy,
    server-side assignors) after the finalize step.

    Example: a 3.9 cluster with 40 active consumer groups, target 4.0.

    References:
    - Kafka 4.0 upgrade notes (KIP-848 generally available, enabled when the upgrade is finalized) <https://kafka.apache.org/40/getting-started/upgrade>
    - Kafka documentation: consumer rebalance protocol (upgrade and downgrade of groups) <https://kafka.apache.org/43/operations/consumer-rebalance-protocol>
    - apache/kafka group-coordinator/src/main/java/org/apache/kafka/coordinator/group/GroupCoordinatorConfig.java (group.consumer.migration.policy) <https://github.com/apache/kafka/blob/4.1/group-coordinator/src/main/java/org/apache/kafka/coordinator/group/GroupCoordinatorConfig.java>
    - KIP-848: The Next Generation of the Consumer Rebalance Protocol <https://cwiki.apache.org/confluence/display/KAFKA/KIP-848%3A+The+Next+Generation+of+the+Consumer+Rebalance+Protocol>
    """
    target = _target(params)
    ga = upgrades.vnum(upgrades.feature_on_at_finalize("group.version") + ".0")
    view = tables.derived(group_features).select("cluster_id", "cluster", "version", "v", "migration_policy")
    g = join(tables.consumer_groups, view, "cluster_id")
    active = ~F.coalesce(F.col("state").isin("Empty", "Dead"), F.lit(False)) | F.coalesce(
        F.col("members") > 0, F.lit(False)
    )
    classic = F.coalesce(F.lower(F.col("group_type")) == "classic", F.lit(False)) | (
        F.col("group_type").isNull() & F.coalesce(F.col("v") < F.lit(ga), F.lit(False))
    )
    rank = F.row_number().over(Window.partitionBy("cluster_id").orderBy(F.col("group_id")))
    d = (
        g.where(active & classic & F.lit(_tv(target) >= ga))
        .withColumn("_rank", rank)
        .groupBy("cluster_id", "cluster", "version", "migration_policy")
        .agg(
            F.count(F.lit(1)).alias("groups"),
            F.sort_array(
                F.filter(  # DuckDB's list aggregate keeps the nulls Spark's drops
                    F.collect_list(F.when(F.col("_rank") <= params["max_listed"], F.col("group_id"))),
                    lambda x: x.isNotNull(),
                )
            ).alias("names"),
        )
    )
    refused = F.coalesce(F.col("migration_policy").isin("disabled", "downgrade"), F.lit(False))
    shown = F.col("names")
    msg = text(
        F.col("groups"),
        " active consumer group(s) on the classic protocol (",
        F.array_join(shown, ", "),
        F.when(F.col("groups") > params["max_listed"], F.lit(", ...")).otherwise(F.lit("")),
        f"): Kafka {target['release']} serves them, and the KIP-848 consumer protocol once finalized; each moves "
        "when its consumers restart with group.protocol=consumer",
        F.when(
            refused,
            text(
                "; " + MIGRATION_POLICY + "=",
                F.col("migration_policy"),
                " refuses the online upgrade of a non-empty classic group: set it to bidirectional first",
            ),
        ).otherwise(F.lit("")),
    )
    return emit(
        d,
        "cluster",
        F.col("cluster"),
        msg,
        ev(
            classic_groups=F.col("groups"),
            groups=shown,
            migration_policy=F.col("migration_policy"),
            target=F.lit(target["release"]),
        ),
        severity=F.when(refused, F.lit("warning")),
    )


# -- UPG010: __remote_log_metadata's min.insync.replicas (KIP-1235) -------------------------

REMOTE_LOG_METADATA = "__remote_log_metadata"


@rule(
    "UPG010",
    "remote-log-metadata-min-isr",
    "warning",
    needs=("topics",),
    params=(TARGET,),
    uses=(cluster_settings, topic_settings, upgrade_view),
    runs_in=("upgrade",),
)
def remote_log_metadata_min_isr(tables, params):
    """A tiered-storage cluster's `__remote_log_metadata` topic accepts writes acknowledged by one replica: Kafka 4.3 creates it with min.insync.replicas 2, an existing topic keeps its own.

    Why: the topic-based remote log metadata manager stores every remote segment's metadata in
    `__remote_log_metadata`; losing an acknowledged record there loses track of tiered data.
    Before 4.3 the manager created the topic with retention, cleanup and remote-storage
    settings only, so it inherited the brokers' min.insync.replicas (Kafka's default 1):
    with acks=all one replica is enough. Kafka 4.3 (KIP-1235) adds
    remote.log.metadata.topic.min.isr, default 2, applied when the topic is created
    (TopicBasedRemoteLogMetadataManager.newRemoteLogMetadataTopic), and its upgrade notes say
    to correct the existing topic by hand: an upgrade does not change it. Fires for a cluster
    with remote.log.storage.system.enable=true whose `__remote_log_metadata` has at least 2
    replicas and an effective min.insync.replicas of 1, whatever the target (the target only
    changes what a new topic would get).

    Remediation: `kafka-configs --bootstrap-server B --alter --entity-type topics --entity-name
    __remote_log_metadata --add-config min.insync.replicas=2` (on 4.3+ also set
    rlmm.config.remote.log.metadata.topic.min.isr where you override the manager's settings).

    Example: a 3.9 tiered-storage cluster, `__remote_log_metadata` with 3 replicas, no override.

    References:
    - Kafka 4.3 upgrade notes: remote.log.metadata.topic.min.isr, default 2 (KIP-1235) <https://kafka.apache.org/43/getting-started/upgrade>
    - apache/kafka storage/src/main/java/org/apache/kafka/server/log/remote/metadata/storage/TopicBasedRemoteLogMetadataManager.java (newRemoteLogMetadataTopic) <https://github.com/apache/kafka/blob/4.3/storage/src/main/java/org/apache/kafka/server/log/remote/metadata/storage/TopicBasedRemoteLogMetadataManager.java>
    - KIP-1235 <https://cwiki.apache.org/confluence/x/yommFw>
    - KIP-405: Kafka Tiered Storage <https://cwiki.apache.org/confluence/display/KAFKA/KIP-405%3A+Kafka+Tiered+Storage>
    """
    target = _target(params)
    kip = upgrades.first_line_where(
        lambda r: any(c["id"] == "remote-log-metadata-min-isr" for c in r["changes"])
    )
    tiered = (
        tables.derived(cluster_settings)
        .where((F.col("key") == "remote.log.storage.system.enable") & (F.lower(F.col("value")) == "true"))
        .select("cluster_id")
    )
    topic = join(
        tables.topics.where(F.col("topic") == REMOTE_LOG_METADATA).select(
            "cluster_id", "topic", "replication_factor"
        ),
        tables.derived(topic_settings).select(
            "cluster_id", "topic", "min_insync_replicas", "min_insync_replicas_source"
        ),
        ["cluster_id", "topic"],
        "left",
    )
    names = _view(tables).select("cluster_id", "cluster")
    d = join(join(topic, tiered, "cluster_id"), names, "cluster_id", "left").where(
        (F.coalesce(F.col("replication_factor"), F.lit(0)) >= 2)
        & (F.coalesce(F.col("min_insync_replicas"), F.lit(1)) <= 1)
    )
    msg = text(
        REMOTE_LOG_METADATA + " has ",
        F.col("replication_factor"),
        " replicas and min.insync.replicas=",
        F.coalesce(F.col("min_insync_replicas"), F.lit(1)),
        " (",
        F.coalesce(F.col("min_insync_replicas_source"), F.lit("Kafka default")),
        f"): a tiered-storage metadata record is acknowledged by one replica; Kafka {kip} creates the topic with 2 "
        f"(KIP-1235) but an upgrade to {target['release']} leaves an existing topic as it is: set it to 2",
    )
    return emit(
        d,
        "topic",
        F.col("topic"),
        msg,
        ev(
            replication_factor=F.col("replication_factor"),
            min_insync_replicas=F.coalesce(F.col("min_insync_replicas"), F.lit(1)),
            source=F.col("min_insync_replicas_source"),
            created_with_two_from=F.lit(kip),
        ),
    )


# -- UPG011: static versus dynamic KRaft quorums (KIP-853) --------------------------------


@rule(
    "UPG011",
    "static-kraft-quorum",
    "info",
    scope="maintenance",
    params=(TARGET,),
    uses=(upgrade_view, group_features),
    runs_in=("upgrade",),
)
def static_kraft_quorum(tables, params):
    """The KRaft quorum is static (controller.quorum.voters, kraft.version 0): controllers cannot be added or removed, and whether the target can make it dynamic depends on the release.

    Why: a static quorum is fixed at format time (KIP-853): its voters are the
    controller.quorum.voters of every node, and kafka-metadata-quorum add-controller /
    remove-controller need a dynamic one (kraft.version 1). Kafka 4.0 cannot convert a static
    quorum ("Currently it is not possible to convert clusters using a static controller quorum
    to use a dynamic controller quorum", 4.0 operations docs; its controller skips kraft.version
    updates, KAFKA-18979). From 4.1 it can ("Apache Kafka 4.1 added support for upgrading a
    cluster from a static controller configuration to a dynamic controller configuration";
    FeatureControlManager upgradeKRaftVersion): `kafka-features upgrade --release-version 4.1`
    (or `--feature kraft.version=1`) upgrades it, and then every node must replace
    controller.quorum.voters with controller.quorum.bootstrap.servers (CTL008 checks that
    pairing). The upgrade table says per release whether the controller can upgrade
    kraft.version (kraft_version_upgradable). Judged where the finalized kraft.version is 0
    (features collected; level 0 is not listed, KIP-1022) or a KRaft node's properties file
    sets controller.quorum.voters. Information: the quorum keeps working either way.

    Remediation: to go dynamic, upgrade to 4.1 or later, finalize (kraft.version=1), then swap
    controller.quorum.voters for controller.quorum.bootstrap.servers on every broker and
    controller (a rolling restart). On 4.0, plan controller replacements as a static quorum
    does (same node ids and directories).

    Example: a 3.9 cluster formatted with controller.quorum.voters, target 4.0.

    References:
    - KIP-853: KRaft Controller Membership Changes <https://cwiki.apache.org/confluence/display/KAFKA/KIP-853%3A+KRaft+Controller+Membership+Changes>
    - Kafka documentation: KRaft upgrade (static to dynamic quorum from 4.1) <https://kafka.apache.org/43/operations/kraft/>
    - Kafka 4.0 compatibility matrix (static and dynamic voters; KAFKA-16538) <https://kafka.apache.org/40/getting-started/compatibility>
    - KAFKA-18979: kraft.version wrongly upgraded to 1 after upgrading to 4.0 <https://issues.apache.org/jira/browse/KAFKA-18979>
    """
    target = _target(params)
    can = target["kraft_version_upgradable"]
    files = (
        tables.kraft_nodes.where(F.coalesce(F.trim(F.col("quorum_voters")), F.lit("")) != "")
        .groupBy("cluster_id")
        .agg(F.count(F.lit(1)).alias("voters_files"))
    )
    d = join(tables.derived(group_features), files, "cluster_id", "left").where(
        _kraft() & (F.coalesce(F.col("kraft_version") == 0, F.lit(False)) | F.col("voters_files").isNotNull())
    )
    if can:
        plan = (
            f"Kafka {target['release']} can make it dynamic: its finalize step (--release-version "
            f"{target['release']}, or --feature kraft.version=1) upgrades kraft.version, then replace "
            "controller.quorum.voters with controller.quorum.bootstrap.servers on every node"
        )
    else:
        plan = (
            f"Kafka {target['release']} cannot make it dynamic (from 4.1 a static quorum can be upgraded): "
            "controllers stay fixed, replace a failed one with the same node id"
        )
    msg = text(
        "static KRaft quorum (",
        F.when(F.col("kraft_version").isNotNull(), text("kraft.version ", F.col("kraft_version"))).otherwise(
            text("controller.quorum.voters in ", F.col("voters_files"), " file(s)")
        ),
        "): controllers cannot be added or removed (KIP-853); ",
        plan,
    )
    return emit(
        d,
        "cluster",
        F.col("cluster"),
        msg,
        ev(kraft_version=F.col("kraft_version"), target=F.lit(target["release"]), convertible=F.lit(can)),
    )


# -- UPG012: configuration whose meaning changes at the target ------------------------------

JMX_REPORTER = "org.apache.kafka.common.metrics.JmxReporter"


def _set_values(tables, scope: str, key: str):
    """Values someone set for ``key`` (not Kafka's defaults): cluster_id, entity, value."""
    types = ("topic",) if scope == "topic" else ("broker", "cluster_default")
    return tables.configs.where(
        (F.col("key") == key)
        & F.col("entity_type").isin(*types)
        & (F.coalesce(F.col("source"), F.lit("STATIC_BROKER_CONFIG")) != "DEFAULT_CONFIG")
        & F.col("value").isNotNull()
    ).select(
        "cluster_id",
        F.concat_ws(" ", F.col("entity_type"), F.col("entity_name")).alias("entity"),
        F.trim(F.col("value")).alias("value"),
    )


def _changed(tables, change: dict):
    """One config change of the upgrade table -> (cluster_id, entities, values) where it applies."""
    key, scope, kind = change["key"], change["scope"], change["kind"]
    values = _set_values(tables, scope, key)
    clusters = tables.clusters.select("cluster_id")
    if kind == "default":  # left unset: the new default applies
        set_somewhere = values.select("cluster_id").distinct().withColumn("_set", F.lit(True))
        return (
            join(clusters, set_somewhere, "cluster_id", "left")
            .where(F.col("_set").isNull())
            .select(
                "cluster_id",
                F.lit(None).cast("array<string>").alias("entities"),
                F.lit(None).cast("string").alias("shown"),
            )
        )
    if kind == "minimum":
        low = values.where(F.expr("try_cast(value AS BIGINT)") < F.lit(change["minimum"]))
    elif kind == "requires":  # set, and some group of alternatives has none set
        missing = None
        for group in change["with"]:
            have = (
                tables.configs.where(F.col("key").isin(*group.split("|")) & F.col("value").isNotNull())
                .select("cluster_id")
                .distinct()
                .withColumn("_have", F.lit(True))
            )
            m = join(values, have, "cluster_id", "left").where(F.col("_have").isNull()).drop("_have")
            missing = m if missing is None else missing.unionByName(m)
        low = missing
    else:  # "jmx": metric.reporters set without JmxReporter, and JMX not turned off on purpose
        off = (
            _set_values(tables, "broker", "auto.include.jmx.reporter")
            .where(F.lower(F.col("value")) == "false")
            .select("cluster_id")
            .distinct()
            .withColumn("_off", F.lit(True))
        )
        low = (
            join(
                values.where((F.col("value") != "") & ~F.col("value").contains("JmxReporter")),
                off,
                "cluster_id",
                "left",
            )
            .where(F.col("_off").isNull())
            .drop("_off")
        )
    return low.groupBy("cluster_id").agg(
        F.sort_array(F.collect_set(F.col("entity"))).alias("entities"),
        F.max(F.col("value")).alias("shown"),
    )


@rule(
    "UPG012",
    "config-meaning-changes-in-target",
    "warning",
    scope="maintenance",
    needs=("configs",),
    params=(TARGET,),
    uses=(upgrade_view,),
    runs_in=("upgrade", "lint-upgrade"),
)
def config_meaning_changes_in_target(tables, params):
    """A setting changes meaning between the running release and the target: a new default applies to a key left unset, a value below a new minimum is refused, a new requirement is unmet, or JMX turns off.

    Why: each entry of the upgrade table's config_changes quotes the release's upgrade notes:
    4.0 rejects records timestamped more than 1 hour ahead by default
    (log.message.timestamp.after.max.ms, message.timestamp.after.max.ms were Long.MAX),
    recovers logs with 2 threads per log dir, refuses log.segment.bytes / segment.bytes below
    1 MiB and remote.log.manager.copier/expiration.thread.pool.size of -1 (KIP-1030), and,
    with auto.include.jmx.reporter gone, a metric.reporters list without JmxReporter turns JMX
    off (and with it every JMX exporter scrape); 4.2 refuses num.replica.fetchers below 1;
    4.4 stops a broker that validates OAUTHBEARER tokens against a JWKS endpoint without an
    expected audience and issuer (or the new allow.unverified flags). The changes applied are
    those of the lines after the running one (all up to the target when the version is
    unknown); each finding carries the table's severity: error where the broker refuses to
    start or the value is refused (the hop is blocked), warning where behaviour changes, info
    where it is only a new default to know about.

    Remediation: set the key explicitly to the value you rely on (the old default, or the new
    one on purpose), raise values to the new minimum, add the required settings, or list
    org.apache.kafka.common.metrics.JmxReporter in metric.reporters, before the upgrade.

    Example: log.segment.bytes=524288 in server.properties, target 4.0 (error).

    References:
    - Kafka 4.0 upgrade notes: notable changes (defaults and minimums changed by KIP-1030; auto.include.jmx.reporter removed) <https://kafka.apache.org/40/getting-started/upgrade>
    - KIP-1030: Change constraints and default values for various configurations <https://cwiki.apache.org/confluence/x/FAqpEQ>
    - Kafka 4.2 upgrade notes (num.replica.fetchers lower bound) <https://kafka.apache.org/42/getting-started/upgrade>
    - Kafka 4.4 upgrade notes (OAUTHBEARER JWKS audience and issuer required; from the unreleased 4.4 branch) <https://github.com/apache/kafka/blob/4.4/docs/getting-started/upgrade.md>
    """
    target = _target(params)
    view = _view(tables).select("cluster_id", "cluster", "version", "v")
    parts = []
    for entry in upgrades.table()["releases"]:
        line_v = _tv(entry)
        if line_v > _tv(target):
            break
        for change in entry["config_changes"]:
            found = join(_changed(tables, change), view, "cluster_id").where(
                F.col("v").isNull() | (F.col("v") < F.lit(line_v))
            )
            detail = {
                "default": f"left unset, it takes {entry['release']}'s new default",
                "minimum": f"set below {change.get('minimum')}, which {entry['release']} refuses",
                "requires": f"set without what {entry['release']} requires with it",
                "jmx": "set without JmxReporter",
            }[change["kind"]]
            parts.append(
                found.select(
                    "cluster_id",
                    "cluster",
                    "version",
                    F.lit(change["key"]).alias("key"),
                    F.lit(entry["release"]).alias("release"),
                    F.lit(change["kind"]).alias("kind"),
                    F.lit(change["severity"]).alias("sev"),
                    F.lit(f"{change['key']} {detail}: {change['effect']}").alias("what"),
                    "entities",
                    "shown",
                )
            )
    if not parts:
        return emit(view.where(F.lit(False)), "config", F.col("cluster"), F.lit(""), ev(x=F.lit(None)))
    d = parts[0]
    for p in parts[1:]:
        d = d.unionByName(p)
    msg = text(
        F.col("what"),
        F.when(
            F.size("entities") > 0,
            text(" (", F.array_join(F.col("entities"), ", "), ": ", F.col("shown"), ")"),
        ).otherwise(F.lit("")),
        f"; changes with the upgrade to {target['release']} (",
        F.col("release"),
        " upgrade notes)",
    )
    return emit(
        d,
        "config",
        F.col("key"),
        msg,
        ev(
            key=F.col("key"),
            changed_in=F.col("release"),
            kind=F.col("kind"),
            set_on=F.col("entities"),
            value=F.col("shown"),
            target=F.lit(target["release"]),
        ),
        severity=F.col("sev"),
    )
