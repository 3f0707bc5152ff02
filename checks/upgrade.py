"""UPG: upgrade readiness for Kafka 4.x (`kafka-audit preflight --target-version 4.0`).

Kafka 4.0 runs only in KRaft mode and upgrades only from 3.3.x through 3.9.x with a
metadata.version of at least 3.3 (Kafka documentation, "Upgrading Servers to 4.0.x from any
version 3.3.x through 3.9.x": https://kafka.apache.org/40/getting-started/upgrade). These
rules say what stands between a cluster and that hop. Their scope is "maintenance":
`kafka-audit check` does not run them; preflight runs them when given --target-version.
"""

from auditor import kafka_configs
from auditor.declarations import Category, rule
from checks._api import F, emit, ev, join, rows_frame, text
from checks.transforms import cluster_settings, first_members, ranked, version_key, version_number

CATEGORY = Category("UPG", "upgrade", "upgrade readiness", tuple(range(1, 7)))

TARGET = "4.0"
TARGET_V = 4_000_000
OLDEST_SOURCE_V = 3_003_000  # 4.0 upgrades from 3.3.x through 3.9.x
MIN_METADATA_LEVEL = 7  # MetadataVersion.IBP_3_3_IV3 (server-common MetadataVersion.java): "3.3-IV3"
MSK_MIGRATION_FROM_V = 3_009_000  # AWS: an MSK cluster migrates to KRaft from 3.9.x in ZooKeeper mode
UPGRADE_NOTES = "https://kafka.apache.org/40/getting-started/upgrade"
MSK_MIGRATION = "https://docs.amazonaws.cn/en_us/msk/latest/developerguide/zk-to-kraft-migration.html"


def upgrade_view(tables):
    """One row per cluster: name, platform, mode (the controller table's, else the manifest's),
    software version (lowest broker version, else the cluster's kafka_version) as ``v`` and as
    text, az_count, and the finalized metadata.version (level and name) when collected."""
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


def _view(tables):
    return tables.derived(upgrade_view)


def _msk():
    return F.coalesce(F.col("platform") == "msk", F.lit(False))


@rule(
    "UPG001",
    "zookeeper-mode-blocks-kafka-4",
    "critical",
    scope="maintenance",
    uses=(upgrade_view,),
    runs_in=("upgrade",),
)
def zookeeper_mode_blocks_kafka_4(tables, params):
    """The cluster runs in ZooKeeper mode: Kafka 4.0 has no ZooKeeper mode, so it cannot be upgraded to 4.x before it migrates to KRaft.

    Why: Apache Kafka 4.0 only supports KRaft mode; ZooKeeper mode has been removed, and the
    4.0 upgrade notes say that clusters in ZooKeeper mode have to be migrated to KRaft mode
    before they can be upgraded to 4.0.x. A 4.0 broker has no ZooKeeper mode to run in
    (zookeeper.connect and every zookeeper.* key are gone from its configuration). The
    migration (KIP-866) runs on 3.x: the Kafka documentation's ZooKeeper to KRaft
    migration procedure (production-ready from 3.6.0, as the 3.6 notes quoted in
    KAFKA-17457 say; the 4.0 notes point to 3.9.x as the release to come from), then the
    4.0 upgrade from KRaft.
    On Amazon MSK the migration is an in-place `UpdateClusterKafkaVersion` from 3.9.x in
    ZooKeeper mode (UPG005 checks AWS's prerequisites).

    Remediation: upgrade to 3.9.x (ZooKeeper mode), migrate to KRaft (provision
    controllers, migrate the metadata, roll the brokers into KRaft mode, finalize), then
    upgrade to 4.x; on MSK follow AWS's "Migrate from ZooKeeper to KRaft mode". Run
    `kafka-audit preflight --target-version 4.0` again after the migration.

    Example: ads-zk-legacy on Kafka 2.0.1 in ZooKeeper mode.

    References:
    - Kafka 4.0 upgrade notes: "Clusters in ZooKeeper mode have to be migrated to KRaft mode before they can be upgraded to 4.0.x" <https://kafka.apache.org/40/getting-started/upgrade>
    - KIP-866: ZooKeeper to KRaft Migration <https://cwiki.apache.org/confluence/display/KAFKA/KIP-866+ZooKeeper+to+KRaft+Migration>
    - Amazon MSK: migrate from ZooKeeper to KRaft mode <https://docs.amazonaws.cn/en_us/msk/latest/developerguide/zk-to-kraft-migration.html>
    """
    d = _view(tables).where(F.col("mode") == "zookeeper")
    path = F.when(
        _msk(),
        F.lit(
            "on MSK: upgrade to 3.9.x in ZooKeeper mode, then migrate in place with UpdateClusterKafkaVersion "
            "(AWS, 'Migrate from ZooKeeper to KRaft mode'; see UPG005), then upgrade to 4.x"
        ),
    ).otherwise(F.lit("upgrade to 3.9.x, migrate to KRaft (KIP-866), then upgrade to 4.x"))
    msg = text(
        "ZooKeeper mode on Kafka ",
        F.coalesce(F.col("version"), F.lit("(version unknown)")),
        ": Kafka 4.0 has no ZooKeeper mode, so the cluster must migrate to KRaft on 3.x before "
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
            target=F.lit(TARGET),
        ),
    )


@rule(
    "UPG002",
    "version-below-upgrade-floor",
    "critical",
    scope="maintenance",
    uses=(upgrade_view,),
    runs_in=("upgrade",),
)
def version_below_upgrade_floor(tables, params):
    """A KRaft cluster runs a Kafka version older than 3.3: Kafka 4.0 does not upgrade from it.

    Why: the Kafka 4.0 upgrade notes cover upgrades "from any version 3.3.x through 3.9.x":
    broker upgrades to 4.0 require KRaft mode and a software version of at least 3.3.x,
    the first release in which KRaft was production-ready; KRaft clusters older than 3.3.x
    should be upgraded to 3.9.x first. The version judged is the lowest broker version
    (brokers.version), else the cluster's. ZooKeeper-mode clusters are UPG001.

    Remediation: upgrade the cluster to 3.9.x (a rolling upgrade, then finalize
    metadata.version with `kafka-features upgrade --metadata 3.9`), then to 4.x.

    Example: a KRaft cluster on Kafka 3.2.3.

    References:
    - Kafka 4.0 upgrade notes: upgrading servers to 4.0 from any version 3.3.x through 3.9.x <https://kafka.apache.org/40/getting-started/upgrade>
    - Kafka 4.0 compatibility matrix (server compatibility by KRaft cluster version) <https://kafka.apache.org/40/getting-started/compatibility>
    """
    d = _view(tables).where(
        (F.coalesce(F.col("mode"), F.lit("")) != "zookeeper") & (F.col("v") < F.lit(OLDEST_SOURCE_V))
    )
    msg = text(
        "Kafka ",
        F.col("version"),
        ": Kafka 4.0 upgrades only from 3.3.x through 3.9.x (KRaft production-ready since 3.3); "
        "upgrade to 3.9.x first, then to 4.x",
    )
    return emit(
        d,
        "cluster",
        F.col("cluster"),
        msg,
        ev(kafka_version=F.col("version"), target=F.lit(TARGET)),
    )


@rule(
    "UPG003",
    "metadata-version-not-finalized",
    "error",
    scope="maintenance",
    uses=(upgrade_view,),
    runs_in=("upgrade",),
)
def metadata_version_not_finalized(tables, params):
    """The KRaft cluster's finalized metadata.version is below its running release (or below 3.3-IV3): finalize it before the hop to 4.x.

    Why: Kafka 4.0 requires the metadata version, not only the software, to be at least
    3.3.x (the 4.0 upgrade notes: "the software and metadata versions must be at least
    3.3.x"); the lowest level 4.0 accepts is 3.3-IV3 (MetadataVersion.IBP_3_3_IV3, level 7).
    Below the running release the upgrade of the previous hop is unfinished: each release's
    upgrade ends by finalizing metadata.version (`kafka-features upgrade`), and a cluster
    that skips it carries an old metadata.version into 4.x, where it is the base every
    newer feature level (eligible leader replicas, KIP-966, among them) depends on. The
    release compared is the lowest broker version's (3.7-IV2 is release 3.7). CTL009 says
    the same outside an upgrade.

    Remediation: with every broker and controller on the running release and no rollback
    planned, finalize it: `kafka-features --bootstrap-server B upgrade --metadata 3.9`
    (`--release-version 3.9` from 3.8), check with `kafka-features describe`, then upgrade
    to 4.x.

    Example: brokers on 3.9.0 with metadata.version 3.6-IV2.

    References:
    - Kafka 4.0 upgrade notes (software and metadata versions at least 3.3.x) <https://kafka.apache.org/40/getting-started/upgrade>
    - apache/kafka server-common/src/main/java/org/apache/kafka/server/common/MetadataVersion.java (IBP_3_3_IV3 = level 7) <https://github.com/apache/kafka/blob/trunk/server-common/src/main/java/org/apache/kafka/server/common/MetadataVersion.java>
    - KIP-778: KRaft to KRaft Upgrades <https://cwiki.apache.org/confluence/display/KAFKA/KIP-778%3A+KRaft+to+KRaft+Upgrades>
    """
    d = _view(tables).where(
        (F.coalesce(F.col("mode"), F.lit("")) != "zookeeper") & F.col("mv_level").isNotNull()
    )
    release = F.floor(F.col("v") / 1000).cast("bigint") * 1000
    below_floor = F.col("mv_level") < F.lit(MIN_METADATA_LEVEL)
    behind = F.coalesce(version_key(F.col("mv_name")) < release, F.lit(False))
    d = d.where(below_floor | behind)
    shown = text(
        F.floor(release / 1_000_000).cast("bigint"),
        ".",
        (F.floor(release / 1000) % 1000).cast("bigint"),
    )
    msg = text(
        "finalized metadata.version ",
        F.coalesce(F.col("mv_name"), F.lit("(name unknown)")),
        " (level ",
        F.col("mv_level"),
        ")",
        F.when(
            below_floor,
            F.lit(" is below 3.3-IV3, the lowest Kafka 4.0 accepts: the upgrade cannot start"),
        ).otherwise(
            text(
                " is behind the running release ",
                shown,
                ": the last upgrade was never finalized",
            )
        ),
        "; finalize it (kafka-features upgrade --metadata ",
        F.when(F.col("v").isNotNull(), shown).otherwise(F.lit("RELEASE")),
        ") before upgrading to 4.x",
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
        ),
    )


def removed_keys(tables):
    """(scope, key, removed): the broker and topic keys Kafka removed at or before the target
    release and did not bring back, from auditor/data/kafka_configs.json (Kafka's own
    ConfigDef definitions at every release: KafkaConfig, DynamicConfig.Broker, LogConfig)."""
    target = version_number(TARGET)
    rows = []
    for scope in ("broker", "topic"):
        for key in kafka_configs.keys(scope):
            ranges = kafka_configs.key_info(scope, key)["ranges"]
            _since, last_removed = ranges[-1]
            removed_v = version_number(last_removed) if last_removed else None
            if removed_v is not None and removed_v <= target:
                rows.append({"scope": scope, "key": key, "removed": last_removed})
    return rows_frame(tables.session, rows, "scope string, key string, removed string")


@rule(
    "UPG004",
    "config-removed-in-kafka-4",
    "warning",
    scope="maintenance",
    needs=("configs",),
    uses=(removed_keys,),
    runs_in=("upgrade",),
)
def config_removed_in_kafka_4(tables, params):
    """A configuration key that Kafka 4.0 no longer has is still set: on 4.x it is ignored, so what it configured changes.

    Why: Kafka 4.0 removed deprecated configurations (the 4.0 upgrade notes list among
    them delegation.token.master.key, offsets.commit.required.acks, auto.include.jmx.reporter,
    and with ZooKeeper mode every zookeeper.* key; message.format.version and
    log.message.format.version went with the old message formats, KIP-724). A 4.x broker
    ignores a key it does not know (it logs it as unknown): a setting you rely on silently
    stops applying (delegation.token.master.key: tokens need delegation.token.secret.key;
    log.message.timestamp.difference.max.ms: KIP-937's before/after settings). The keys and
    the release that removed them come from Kafka's own ConfigDef definitions at every
    release (auditor/data/kafka_configs.json, tools/extract_kafka_configs.py): a key
    defined in 3.9 and not in 4.0. Values Kafka or MSK set by default are not reported, only
    broker, cluster-default and topic settings someone wrote.

    Remediation: remove the key from server.properties (and the MSK configuration), or
    delete the dynamic value (`kafka-configs --alter --delete-config KEY`), and set its
    replacement where the upgrade notes name one, before the upgrade.

    Example: `log.message.format.version=2.8` in server.properties of a 3.9 cluster.

    References:
    - Kafka 4.0 upgrade notes: notable changes in 4.0.0 (removed configurations) <https://kafka.apache.org/40/getting-started/upgrade>
    - KIP-724: Drop support for message formats v0 and v1 <https://cwiki.apache.org/confluence/display/KAFKA/KIP-724%3A+Drop+support+for+message+formats+v0+and+v1>
    - apache/kafka docs/upgrade.html (4.0.0 notable changes: the delegation.token.master.key and offsets.commit.required.acks removals) <https://github.com/apache/kafka/blob/trunk/docs/upgrade.html>
    """
    keys = tables.derived(removed_keys)
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
    d = (
        ranked(d, ["cluster_id", "key", "removed"], "entity")
        .groupBy("cluster_id", "key", "removed")
        .agg(
            first_members("entity").alias("where"),  # the first LISTED by name, all counted
            F.count(F.lit(1)).alias("entries"),
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
        ": a 4.x broker ignores it; remove it (and set its replacement) before the upgrade",
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
        ),
    )


@rule(
    "UPG005",
    "msk-kraft-migration-prerequisites",
    "critical",
    scope="maintenance",
    uses=(upgrade_view,),
    runs_in=("upgrade",),
)
def msk_kraft_migration_prerequisites(tables, params):
    """An MSK cluster in ZooKeeper mode does not meet AWS's prerequisites for migrating to KRaft, the step before Kafka 4.x.

    Why: AWS migrates an MSK cluster from ZooKeeper to KRaft in place with the
    UpdateClusterKafkaVersion API, and lists prerequisites: the cluster runs Apache Kafka
    3.9.x in ZooKeeper mode (older versions upgrade to 3.9.x first), Standard brokers are
    deployed across 3 Availability Zones, the cluster is ACTIVE with no pending operation,
    ZooKeeper client access is disabled (UpdateConnectivity, ZookeeperAccess.Enabled=false),
    and clients and tools use bootstrap servers, not ZooKeeper. This rule checks what the
    snapshot holds: the version (lowest broker version, else the cluster's) and the
    number of Availability Zones (az_count); the cluster state is MSK004's. The others
    (ZooKeeper access, tools) are not in the snapshot: check them by hand.

    Remediation: upgrade to 3.9.x with `aws kafka update-cluster-kafka-version`; a 2-AZ
    Standard cluster needs a new 3-AZ cluster (AWS does not move brokers across AZs); disable
    ZooKeeper access; then run the migration as AWS documents it.

    Example: payments-msk, Standard brokers, Kafka 3.6.0 in ZooKeeper mode.

    References:
    - Amazon MSK: migrate from ZooKeeper to KRaft mode (prerequisites) <https://docs.amazonaws.cn/en_us/msk/latest/developerguide/zk-to-kraft-migration.html>
    - Kafka 4.0 upgrade notes (ZooKeeper-mode clusters migrate to KRaft first) <https://kafka.apache.org/40/getting-started/upgrade>
    """
    d = _view(tables).where(_msk() & (F.col("mode") == "zookeeper"))
    old = F.coalesce(F.col("v") < F.lit(MSK_MIGRATION_FROM_V), F.lit(False))
    azs = F.coalesce(F.col("az_count") != 3, F.lit(False))
    d = d.where(old | azs)
    reasons = F.concat_ws(
        "; ",
        F.when(
            old,
            text(
                "it runs Kafka ",
                F.col("version"),
                ": AWS migrates from 3.9.x, upgrade to 3.9.x first",
            ),
        ),
        F.when(
            azs,
            text(
                "it spans ",
                F.col("az_count"),
                " Availability Zone(s): AWS requires Standard brokers across 3",
            ),
        ),
    )
    msg = text(
        "MSK in ZooKeeper mode cannot migrate to KRaft (the step before Kafka 4.x) yet: ",
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
            migration_from=F.lit("3.9.x"),
        ),
    )


# -- UPG006: KIP-848 (consumer rebalance protocol) and KIP-932 (share groups) on 4.x --------

GROUP_VERSION, SHARE_VERSION = "group.version", "share.version"
PROTOCOLS, SHARE_ENABLE = "group.coordinator.rebalance.protocols", "group.share.enable"
SHARE_PREVIEW_V = 4_001_000  # 4.0: early access (group.share.enable); 4.1: preview (share.version=1)
SHARE_GA_V = 4_002_000  # 4.2: production-ready


def _listed(protocols, name: str):
    """Whether a comma-separated protocol list names ``name`` (case-insensitive, spaces allowed)."""
    return F.lower(protocols).rlike(f"(^|,) *{name} *(,|$)")


def group_protocols(tables):
    """One row per cluster on Kafka 4.x (lowest broker version, else the cluster's): the
    finalized group.version and share.version (0 when the features were collected and the
    feature is not listed, KIP-1022; null when no feature was collected), the
    group.coordinator.rebalance.protocols and group.share.enable settings (null when unset)."""
    view = tables.derived(upgrade_view).where(F.col("v") >= F.lit(TARGET_V))
    feats = tables.features.groupBy("cluster_id").agg(
        F.max(F.when(F.col("feature") == GROUP_VERSION, F.col("finalized_level"))).alias("gv"),
        F.max(F.when(F.col("feature") == SHARE_VERSION, F.col("finalized_level"))).alias("sv"),
        F.count(F.lit(1)).alias("features"),
    )
    settings = (
        tables.derived(cluster_settings)
        .where(F.col("key").isin(PROTOCOLS, SHARE_ENABLE))
        .groupBy("cluster_id")
        .agg(
            F.max(F.when(F.col("key") == PROTOCOLS, F.col("value"))).alias("protocols"),
            F.max(F.when(F.col("key") == SHARE_ENABLE, F.lower(F.col("value")))).alias("share_enable"),
        )
    )
    d = join(join(view, feats, "cluster_id", "left"), settings, "cluster_id", "left")
    known = F.coalesce(F.col("features"), F.lit(0)) > 0
    return d.select(
        "cluster_id",
        "cluster",
        "v",
        "version",
        F.when(known, F.coalesce(F.col("gv"), F.lit(0))).alias("group_version"),
        F.when(known, F.coalesce(F.col("sv"), F.lit(0))).alias("share_version"),
        "protocols",
        "share_enable",
    )


@rule(
    "UPG006",
    "consumer-rebalance-protocol",
    "info",
    uses=(upgrade_view, cluster_settings, group_protocols),
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
    finding says when they are on in 4.0 or 4.1. Judged for clusters whose lowest broker
    version is 4.0 or later; the group.version part only where the features were
    collected (ApiVersions, KIP-584). Informational: nothing breaks for classic consumers.

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
    d = tables.derived(group_protocols)
    listed = F.col("protocols").isNull() | _listed(F.col("protocols"), "consumer")
    feature_off = F.coalesce(F.col("group_version") < 1, F.lit(False))
    consumer_off = feature_off | ~listed
    share_on = (
        F.coalesce(F.col("share_enable") == "true", F.lit(False))
        | F.coalesce(F.col("share_version") >= 1, F.lit(False))
        | F.coalesce(_listed(F.col("protocols"), "share"), F.lit(False))
    )
    share_early = share_on & (F.col("v") < F.lit(SHARE_GA_V))
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
        F.col("v") < F.lit(SHARE_PREVIEW_V),
        F.lit("early access in 4.0, not for production and not upgradable"),
    ).otherwise(F.lit("a preview in 4.1, production-ready from 4.2"))
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
