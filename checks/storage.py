"""DSK: storage and JBOD (one failed disk of a JBOD broker took old sarama clients down for hours).

Log directories come from DescribeLogDirs (the ``log_dirs`` table), the brokers table and
the effective log.dirs setting, merged per broker by ``broker_log_dirs`` in checks/transforms.py.
A log directory is named "<broker id>:<path>" (resource type ``log_dir``).
"""

from auditor.declarations import Category, Param, rule
from checks._api import F, Window, emit, ev, join, text
from checks.transforms import (
    MANAGED_PLATFORMS,
    broker_log_dirs,
    cluster_settings,
    failed_log_dir,
    int_list,
    metric_per_node,
    replica_lists,
    topic_replication,
    topic_settings,
    try_bool,
    try_long,
    version_key,
    version_number,
)

CATEGORY = Category("DSK", "storage", "storage and JBOD", tuple(range(1, 10)))

SARAMA_FIXED = "1.43.3"
MV_JBOD_LEVEL = 17  # metadata.version 3.7-IV2: JBOD on KRaft (KIP-858)


def _dirs(tables):
    return tables.derived(broker_log_dirs)


def _dir_name():
    return F.concat_ws(":", F.col("broker_id").cast("string"), F.col("path"))


def _paths(col="log_dir_paths"):
    return F.array_join(F.col(col), ", ")


def without_express(tables, d):
    """``d`` without the rows of MSK Express clusters (instance types express.*): their storage
    is managed by MSK, with no disk, volume or log dir for the owner to size or fill (AWS,
    "Amazon MSK Express brokers"), so the disk rules' findings and advice do not apply."""
    express = tables.clusters.where(
        (F.lower(F.col("platform")) == "msk")
        & F.lower(F.trim(F.col("msk_instance_type"))).startswith("express.")
    ).select("cluster_id")
    return join(d, express, "cluster_id", "left_anti")


def old_sarama(tables, fixed: str = SARAMA_FIXED):
    """Per broker: connected sarama clients older than ``fixed`` (KIP-511 inventory):
    sarama_versions (sorted), sarama_connections. Used by DSK002; CLI001 reads the
    inventory itself."""
    c = tables.client_software
    is_sarama = F.lower(F.trim(F.col("client_name"))).rlike("(^|/)sarama$")
    old = version_key("client_version") < F.lit(version_number(fixed))
    connected = F.coalesce(F.col("connections"), F.lit(1)) > 0
    return (
        c.where(is_sarama & old & connected)
        .groupBy("cluster_id", "broker_id")
        .agg(
            F.sort_array(F.collect_set(F.trim(F.col("client_version")))).alias("sarama_versions"),
            F.sum(F.coalesce(F.col("connections"), F.lit(0))).alias("sarama_connections"),
        )
    )


@rule(
    "DSK001",
    "offline-log-dir",
    "critical",
    needs=(("log_dirs", "metrics", "log_dir_events"),),
    cause="failure",
)
def offline_log_dir(tables, params):
    """A log directory is offline: the broker reports an error for it (a failed disk).

    Why: when a JBOD disk fails, the broker marks that log directory offline and keeps
    running; every replica on it is offline (KIP-112), those partitions run with a smaller
    ISR, and clients writing to them get KAFKA_STORAGE_ERROR. Clients that do not refresh
    metadata on that error (sarama < 1.43.3, DSK002) keep failing: after one disk of a JBOD
    broker failed, such producers failed their writes for hours.
    Sources: a DescribeLogDirs error on the directory, the broker's
    OfflineLogDirectoryCount metric above 0, or a pending ZooKeeper
    `/log_dir_event_notification` event the broker wrote (the controller deletes it once it
    has handled the failure; one still there means the failure is new or the controller is
    stuck). With the last two the directory itself is not known.

    Remediation: replace the disk (or remove the directory from log.dirs) and restart the
    broker; its replicas are re-created from the leaders. Until then, check
    `kafka-log-dirs --bootstrap-server B --describe --broker-list ID` and move leadership
    off the broker (`kafka-leader-election --election-type preferred`) if clients suffer.

    Example: broker 4, /data/kafka-3: KAFKA_STORAGE_ERROR.

    References:
    - KIP-112: Handle disk failure for JBOD <https://cwiki.apache.org/confluence/display/KAFKA/KIP-112%3A+Handle+disk+failure+for+JBOD>
    - Kafka documentation: monitoring (OfflineLogDirectoryCount) <https://kafka.apache.org/39/documentation.html#monitoring>
    """
    dirs = tables.log_dirs.where(failed_log_dir()).select(
        "cluster_id", "broker_id", "path", F.trim(F.col("error")).alias("error"), "device"
    )
    offline = metric_per_node(tables, "offline_log_directory_count", "offline_count")
    known = join(dirs, offline, ["cluster_id", "broker_id"], "left")
    by_dir = emit(
        known,
        "log_dir",
        _dir_name(),
        text(
            "log dir ",
            F.col("path"),
            " on broker ",
            F.col("broker_id"),
            " is offline: ",
            F.col("error"),
            "; its replicas are offline and writes to them fail with KAFKA_STORAGE_ERROR",
        ),
        ev(
            broker=F.col("broker_id"),
            path=F.col("path"),
            error=F.col("error"),
            device=F.col("device"),
            offline_log_directory_count=F.col("offline_count"),
        ),
    )
    # Brokers known to have a failed dir without knowing which: the metric, or a failure event
    # the broker wrote to ZooKeeper that the controller has not processed yet.
    events = (
        tables.log_dir_events.where(F.col("broker_id").isNotNull())
        .groupBy("cluster_id", "broker_id")
        .agg(F.sort_array(F.collect_set("event")).alias("events"))
    )
    brokers = (
        offline.where(F.col("offline_count") > 0)
        .select("cluster_id", "broker_id")
        .unionByName(events.select("cluster_id", "broker_id"))
        .distinct()
    )
    brokers = join(
        join(brokers, offline, ["cluster_id", "broker_id"], "left"),
        events,
        ["cluster_id", "broker_id"],
        "left",
    )
    unlocated = join(
        brokers, dirs.select("cluster_id", "broker_id").distinct(), ["cluster_id", "broker_id"], "left_anti"
    )
    metric = F.coalesce(F.col("offline_count"), F.lit(0)) > 0
    reported = F.when(
        metric, text("reports OfflineLogDirectoryCount=", F.col("offline_count").cast("bigint"))
    ).otherwise(
        text(
            "reported a log dir failure to ZooKeeper (",
            F.array_join(F.col("events"), ", "),
            ") that the controller has not processed yet",
        )
    )
    by_broker = emit(
        unlocated,
        "broker",
        F.col("broker_id").cast("string"),
        text(
            "broker ", F.col("broker_id"), " ", reported, ": a log dir has failed; its replicas are offline"
        ),
        ev(
            broker=F.col("broker_id"),
            offline_log_directory_count=F.col("offline_count").cast("bigint"),
            pending_log_dir_events=F.col("events"),
        ),
    )
    return by_dir.unionByName(by_broker)


@rule(
    "DSK002",
    "jbod-client-storage-error-risk",
    "error",
    needs=("client_software", ("log_dirs", "brokers")),
    params=(
        Param("sarama_fixed_version", SARAMA_FIXED, "first sarama version that retries KAFKA_STORAGE_ERROR"),
    ),
    uses=(broker_log_dirs,),
)
def jbod_client_storage_error_risk(tables, params):
    """JBOD brokers (several log dirs) serve clients that do not retry KAFKA_STORAGE_ERROR: one finding per cluster naming the brokers.

    Why: with several log directories a single disk failure does not stop the broker: it
    answers requests for the replicas on the failed disk with KAFKA_STORAGE_ERROR and
    expects clients to refresh metadata and find the new leader. sarama before 1.43.3 did
    not treat that error as retriable: its producers kept failing writes for hours after
    one disk of a JBOD broker failed. The client inventory comes from KIP-511 (client software
    name and version per connection); sarama releases too old to send it show up as
    "unknown" and cannot be seen here. The fixed version is the parameter
    `sarama_fixed_version`. The clients are one problem however many brokers they reach
    (CLI001 names them too), so the finding is the cluster, naming the JBOD brokers that
    serve them.

    Remediation: upgrade the sarama clients to 1.43.3 or later (github.com/IBM/sarama) and
    make sure producers have retries and metadata refresh enabled
    (`config.Producer.Retry.Max`, `config.Metadata.RefreshFrequency`). Until then, treat a
    JBOD disk failure on these brokers as a broker failure: stop it so that leadership moves.

    Example: brokers [4, 5, 6] with 4 log dirs each; sarama 1.27.0 with 120 connections.

    References:
    - IBM/sarama #2939: treat ErrKafkaStorageError as retriable (producer) <https://github.com/IBM/sarama/pull/2939>
    - KIP-112: Handle disk failure for JBOD <https://cwiki.apache.org/confluence/display/KAFKA/KIP-112%3A+Handle+disk+failure+for+JBOD>
    - KIP-511: Collect and Expose Client's Name and Version in the Brokers <https://cwiki.apache.org/confluence/display/KAFKA/KIP-511%3A+Collect+and+Expose+Client%27s+Name+and+Version+in+the+Brokers>
    """
    d = join(
        _dirs(tables).where(F.col("log_dir_count") > 1),
        old_sarama(tables, params["sarama_fixed_version"]),
        ["cluster_id", "broker_id"],
    )
    per_cluster = d.groupBy("cluster_id").agg(
        F.sort_array(F.collect_set(F.col("broker_id"))).alias("brokers"),
        F.sort_array(F.array_distinct(F.flatten(F.collect_list(F.col("sarama_versions"))))).alias(
            "sarama_versions"
        ),
        F.sum("sarama_connections").alias("sarama_connections"),
        F.max("log_dir_count").alias("max_log_dirs"),
    )
    names = tables.clusters.select(
        "cluster_id", F.coalesce(F.col("cluster_name"), F.col("cluster_id")).alias("cluster")
    )
    per_cluster = join(per_cluster, names, "cluster_id", "left")
    msg = text(
        F.size("brokers"),
        " JBOD broker(s) ",
        int_list(F.col("brokers")),
        " (several log dirs) serve sarama ",
        F.array_join(F.col("sarama_versions"), ", "),
        " (",
        F.col("sarama_connections"),
        " connections), which does not retry KAFKA_STORAGE_ERROR: one failed disk on any of them fails "
        "those clients' writes until they restart",
    )
    return emit(
        per_cluster,
        "cluster",
        F.coalesce(F.col("cluster"), F.col("cluster_id")),
        msg,
        ev(
            brokers=F.col("brokers"),
            sarama_versions=F.col("sarama_versions"),
            sarama_connections=F.col("sarama_connections"),
            max_log_dirs=F.col("max_log_dirs"),
            fixed_in=F.lit(params["sarama_fixed_version"]),
        ),
    )


@rule(
    "DSK003",
    "jbod-unsupported-version",
    "error",
    needs=("brokers",),
    uses=(broker_log_dirs,),
    runs_in=("upgrade",),
)
def jbod_unsupported_version(tables, params):
    """A broker has several log dirs on a version that does not support JBOD in its metadata mode.

    Why: JBOD (several log.dirs with per-directory failure handling, KIP-112) exists since
    Kafka 1.0 in ZooKeeper mode. In KRaft mode it arrived as early access in 3.7
    (metadata.version 3.7-IV2, KIP-858; "not yet recommended for use in production") and
    is out of early access from 3.8 (the 3.8 upgrade notes). Before 3.7 a KRaft broker
    starts with several log dirs (KafkaConfig has no check; Kafka's documentation lists
    JBOD among the features not fully implemented in KRaft), but a failed directory is
    never reported to the KRaft controller, which keeps the broker as leader and in the
    ISR of the partitions on the dead disk: the failure KIP-858 was written for. From
    3.7 a KRaft broker with several log dirs refuses to start unless the finalized
    metadata.version is 3.7-IV2 or later (KafkaConfig.validateWithMetadataVersion), and
    3.7.1 warns that such brokers can become indefinitely unavailable (KAFKA-16606). The
    version is the broker's own version, else the cluster's; the mode is the manifest's
    metadata_mode, else the controller table's. When the finalized metadata.version was
    collected (ApiVersions, the features table) it is judged too: below 3.7-IV2 (level 17)
    several log dirs are not supported on KRaft, whatever the software version.

    Remediation: upgrade to Kafka 3.8 or later (KRaft) before relying on several log dirs,
    and finalize the metadata version (`kafka-features --bootstrap-server B upgrade
    --metadata 3.8`), or go back to one log dir per broker (RAID or one volume) until then.
    In ZooKeeper mode, upgrade to at least 1.0.

    Example: a KRaft cluster on 3.7.1 whose brokers list log.dirs=/data/kafka-1,/data/kafka-2.

    References:
    - KIP-858: Handle JBOD broker disk failure in KRaft <https://cwiki.apache.org/confluence/display/KAFKA/KIP-858%3A+Handle+JBOD+broker+disk+failure+in+KRaft>
    - KIP-112: Handle disk failure for JBOD <https://cwiki.apache.org/confluence/display/KAFKA/KIP-112%3A+Handle+disk+failure+for+JBOD>
    - Kafka 3.7 source: KafkaConfig.scala (validateWithMetadataVersion: several log dirs need 3.7-IV2) <https://github.com/apache/kafka/blob/3.7/core/src/main/scala/kafka/server/KafkaConfig.scala>
    - Kafka 3.8 upgrade notes (JBOD in KRaft is no longer in early access; KAFKA-16606 in 3.7.1) <https://kafka.apache.org/38/documentation.html#upgrade_3_8_0>
    """
    mode_of = tables.controller.groupBy("cluster_id").agg(
        F.max(F.lower(F.col("mode"))).alias("controller_mode")
    )
    clusters = join(
        tables.clusters.select(
            "cluster_id", F.lower(F.col("metadata_mode")).alias("manifest_mode"), "kafka_version"
        ),
        mode_of,
        "cluster_id",
        "left",
    )
    versions = tables.brokers.select("cluster_id", "broker_id", F.col("version").alias("broker_version"))
    # The finalized metadata.version (auditor/collectors/kraft.py), when collected.
    mv = (
        tables.features.where((F.col("feature") == "metadata.version") & F.col("finalized_level").isNotNull())
        .groupBy("cluster_id")
        .agg(F.max("finalized_level").alias("mv_level"), F.max("version_name").alias("mv_name"))
    )
    d = join(
        join(
            join(_dirs(tables).where(F.col("log_dir_count") > 1), clusters, "cluster_id"),
            versions,
            ["cluster_id", "broker_id"],
            "left",
        ),
        mv,
        "cluster_id",
        "left",
    )
    version = F.coalesce(F.col("broker_version"), F.col("kafka_version"))
    mode = F.coalesce(F.col("manifest_mode"), F.col("controller_mode"))
    v = version_key(version)
    kraft_early = (mode == "kraft") & (v < F.lit(version_number("3.8.0")))
    mv_early = F.coalesce((mode == "kraft") & (F.col("mv_level") < MV_JBOD_LEVEL), F.lit(False))
    zk_early = (mode == "zookeeper") & (v < F.lit(version_number("1.0.0")))
    d = d.where(F.coalesce(kraft_early | zk_early, F.lit(False)) | mv_early)
    needs = F.when(mode == "kraft", F.lit("3.8 or later in KRaft mode")).otherwise(F.lit("1.0 or later"))
    msg = F.when(
        mv_early & ~F.coalesce(kraft_early, F.lit(False)),
        text(
            "broker ",
            F.col("broker_id"),
            " has ",
            F.col("log_dir_count"),
            " log dirs, but the finalized metadata.version is ",
            F.coalesce(F.col("mv_name"), F.col("mv_level").cast("string")),
            ": KRaft brokers with several log dirs need 3.7-IV2 or later (raise it with kafka-features upgrade)",
        ),
    ).otherwise(
        text(
            "broker ",
            F.col("broker_id"),
            " has ",
            F.col("log_dir_count"),
            " log dirs on Kafka ",
            version,
            " in ",
            mode,
            " mode: JBOD needs ",
            needs,
        )
    )
    return emit(
        d,
        "broker",
        F.col("broker_id").cast("string"),
        msg,
        ev(
            log_dirs=F.col("log_dir_paths"),
            kafka_version=version,
            metadata_mode=mode,
            metadata_version=F.col("mv_name"),
        ),
    )


@rule(
    "DSK004", "log-dirs-share-device", "warning", needs=("log_dirs",), runs_in=("lint",), lint_key="log.dirs"
)
def log_dirs_share_device(tables, params):
    """Several log dirs of one broker sit on the same device: JBOD without isolation.

    Why: JBOD's point is that one failed disk takes only its own log dir offline. Two log
    dirs on one device (or one mount) fail together, double-count its capacity in
    partition placement, and compete for the same I/O, while Kafka balances as if they
    were independent.

    Remediation: give each entry of log.dirs its own disk (one mount point per device),
    moving replicas away first with `kafka-reassign-partitions` and a log_dirs list in
    the reassignment JSON, or merge the directories into one log dir on that device.

    Example: broker 2: /data/kafka-1 and /data/kafka-2 both on nvme1n1.

    References:
    - Kafka broker config log.dirs <https://kafka.apache.org/39/documentation.html#brokerconfigs_log.dirs>
    - KIP-112: Handle disk failure for JBOD <https://cwiki.apache.org/confluence/display/KAFKA/KIP-112%3A+Handle+disk+failure+for+JBOD>
    """
    shared = (
        tables.log_dirs.where(F.col("device").isNotNull() & (F.trim(F.col("device")) != ""))
        .groupBy("cluster_id", "broker_id", "device")
        .agg(F.countDistinct("path").alias("n"), F.sort_array(F.collect_set("path")).alias("paths"))
        .where(F.col("n") > 1)
        .groupBy("cluster_id", "broker_id")
        .agg(
            F.sort_array(
                F.collect_list(
                    F.concat(F.col("device"), F.lit(" ("), F.array_join(F.col("paths"), ", "), F.lit(")"))
                )
            ).alias("shared"),
            F.sum("n").alias("dirs_sharing"),
        )
    )
    msg = text(
        "broker ",
        F.col("broker_id"),
        " has log dirs sharing a device: ",
        F.array_join(F.col("shared"), "; "),
        "; one disk failure takes all of them offline",
    )
    return emit(
        shared,
        "broker",
        F.col("broker_id").cast("string"),
        msg,
        ev(shared_devices=F.col("shared"), log_dirs_sharing=F.col("dirs_sharing")),
    )


@rule(
    "DSK005",
    "single-log-dir",
    "info",
    needs=(("log_dirs", "brokers"),),
    params=(
        Param(
            "acceptable_min_rf",
            3,
            "no finding when every topic of the cluster has at least this many replicas ...",
        ),
        Param("acceptable_min_racks", 2, "... and the brokers span at least this many racks"),
    ),
    uses=(broker_log_dirs, topic_replication),
    runs_in=("lint",),
    lint_key="log.dirs",
)
def single_log_dir(tables, params):
    """A broker has a single log dir: one disk failure stops the broker.

    Why: with one log directory, the broker shuts down when that disk fails (there is no
    other directory to keep serving from). That is a normal broker failure: harmless when
    every partition has enough replicas on other racks, painful otherwise. So the rule
    stays quiet when every topic of the cluster has at least `acceptable_min_rf` replicas
    (default 3) and the brokers span at least `acceptable_min_racks` racks (default 2):
    both are parameters. It is informational either way. MSK Express brokers (managed storage)
    are not judged.

    Remediation: make sure losing this broker is safe: replication factor 3 with
    min.insync.replicas 2 and broker.rack set so replicas spread over racks/AZs. If disks
    fail often, JBOD (several log.dirs, Kafka 3.8+ in KRaft) keeps the broker up on the
    remaining disks, provided clients retry KAFKA_STORAGE_ERROR (DSK002).

    Example: broker 1 with log.dirs=/var/lib/kafka/data in a cluster with RF 2 topics.

    References:
    - Kafka broker config log.dirs <https://kafka.apache.org/39/documentation.html#brokerconfigs_log.dirs>
    - KIP-112: Handle disk failure for JBOD <https://cwiki.apache.org/confluence/display/KAFKA/KIP-112%3A+Handle+disk+failure+for+JBOD>
    """
    rf = tables.derived(topic_replication).groupBy("cluster_id").agg(F.min("rf_min").alias("cluster_min_rf"))
    racks = tables.brokers.groupBy("cluster_id").agg(F.countDistinct("rack").alias("racks"))
    d = join(
        join(_dirs(tables).where(F.col("log_dir_count") == 1), rf, "cluster_id", "left"),
        racks,
        "cluster_id",
        "left",
    )
    safe = (F.col("cluster_min_rf") >= params["acceptable_min_rf"]) & (
        F.col("racks") >= params["acceptable_min_racks"]
    )
    d = without_express(tables, d.where(~F.coalesce(safe, F.lit(False))))
    msg = text(
        "broker ",
        F.col("broker_id"),
        " has a single log dir (",
        _paths(),
        "): one disk failure stops the broker (lowest replication factor in the cluster: ",
        F.col("cluster_min_rf"),
        ", racks: ",
        F.coalesce(F.col("racks"), F.lit(0)),
        ")",
    )
    return emit(
        d,
        "broker",
        F.col("broker_id").cast("string"),
        msg,
        ev(
            log_dirs=F.col("log_dir_paths"),
            cluster_min_replication_factor=F.col("cluster_min_rf"),
            racks=F.col("racks"),
        ),
    )


@rule(
    "DSK006",
    "disk-usage-high",
    "warning",
    needs=("log_dirs",),
    params=(Param("max_used", 0.85, "fraction of a log dir's capacity above which it is too full"),),
    runs_in=("preflight",),
)
def disk_usage_high(tables, params):
    """A log dir is nearly full.

    Why: when a log dir fills up, the broker marks it offline (the same failure as a dead
    disk, DSK001) or stops. Reassignments, retention changes and catch-up after a broker
    restart all need free space, so the margin has to exist before it is needed. The
    threshold is the parameter `max_used` (a fraction, default 0.85, a heuristic). MSK
    Express brokers (managed storage, nothing to grow) are not judged.

    Remediation: lower retention (`retention.ms` / `retention.bytes` on the largest
    topics), add disks or brokers and move partitions with `kafka-reassign-partitions`
    (between log dirs of one broker with a log_dirs entry), or grow the volume (MSK:
    `aws kafka update-broker-storage`, or enable storage auto-scaling).

    Example: broker 3, /data/kafka-2: 1.8 TB of 2.0 TB used (90%).

    References:
    - KIP-112: Handle disk failure for JBOD <https://cwiki.apache.org/confluence/display/KAFKA/KIP-112%3A+Handle+disk+failure+for+JBOD>
    - Kafka topic config retention.bytes <https://kafka.apache.org/39/documentation.html#topicconfigs_retention.bytes>
    """
    used = F.when(F.col("total_bytes") > 0, F.col("used_bytes") / F.col("total_bytes"))  # no division by 0
    d = without_express(tables, tables.log_dirs.where(used > params["max_used"]))
    pct = F.round(used * 100, 1)
    msg = text(
        "log dir ",
        F.col("path"),
        " on broker ",
        F.col("broker_id"),
        " is ",
        pct,
        "% full (",
        F.round(F.col("used_bytes") / F.lit(1e9), 1),
        " of ",
        F.round(F.col("total_bytes") / F.lit(1e9), 1),
        " GB; threshold " + str(round(params["max_used"] * 100, 1)) + "%)",
    )
    return emit(
        d,
        "log_dir",
        _dir_name(),
        msg,
        ev(
            broker=F.col("broker_id"),
            path=F.col("path"),
            used_bytes=F.col("used_bytes"),
            total_bytes=F.col("total_bytes"),
            used_percent=pct,
            device=F.col("device"),
        ),
    )


# -- topic log settings: retention, segments, tiered storage (DSK007-DSK009) ---------------

# Topic setting -> the broker settings it falls back to (the first one set wins, each with its
# factor to the topic setting's unit) and Kafka's default. Broker precedence as KafkaConfig
# resolves it (apache/kafka core/src/main/scala/kafka/server/KafkaConfig.scala,
# logRetentionTimeMillis: log.retention.ms > log.retention.minutes > log.retention.hours, a
# negative value is -1, unlimited; logRollTimeMillis: log.roll.ms > log.roll.hours); the
# local.retention defaults -2 mean "use retention" (LogConfig DEFAULT_LOCAL_RETENTION_MS/BYTES,
# RemoteLogManagerConfig DEFAULT_LOG_LOCAL_RETENTION_MS/BYTES).
TOPIC_LOG_KEYS = {
    "retention.ms": (
        (("log.retention.ms", 1), ("log.retention.minutes", 60_000), ("log.retention.hours", 3_600_000)),
        604_800_000,
    ),
    "retention.bytes": ((("log.retention.bytes", 1),), -1),
    "segment.ms": ((("log.roll.ms", 1), ("log.roll.hours", 3_600_000)), 604_800_000),
    "segment.bytes": ((("log.segment.bytes", 1),), 1_073_741_824),
    "local.retention.ms": ((("log.local.retention.ms", 1),), -2),
    "local.retention.bytes": ((("log.local.retention.bytes", 1),), -2),
    "max.message.bytes": ((("message.max.bytes", 1),), 1_048_588),
}
SOCKET_REQUEST_MAX_BYTES = ("socket.request.max.bytes", 104_857_600)  # SocketServerConfigs default
REMOTE_SYSTEM_KEY = "remote.log.storage.system.enable"  # broker; Kafka's default false
REMOTE_TOPIC_KEY = "remote.storage.enable"  # topic only; Kafka's default false


def _c(key: str) -> str:
    return key.replace(".", "_")


def topic_log_settings(tables):
    """Per topic: its effective retention.ms, retention.bytes, segment.ms, segment.bytes,
    local.retention.ms, local.retention.bytes and max.message.bytes (bigint, in the topic setting's unit; -1
    unlimited, -2 "use retention"), ``<key>_set`` (the topic overrides it), ``remote_storage``
    (remote.storage.enable=true on the topic), ``remote_system`` (the brokers' effective
    remote.log.storage.system.enable), ``brokers_known`` (broker-level configuration was
    collected or linted), cleanup_policy, the cluster's platform and the cluster-level values
    (``cluster_<key>``) with the broker key that decided the time settings, and the brokers'
    socket.request.max.bytes (CFG008)."""
    broker_keys = sorted(
        {k for chain, _ in TOPIC_LOG_KEYS.values() for k, _ in chain}
        | {REMOTE_SYSTEM_KEY, SOCKET_REQUEST_MAX_BYTES[0]}
    )
    cluster = (
        tables.derived(cluster_settings)
        .where(F.col("key").isin(*broker_keys))
        .groupBy("cluster_id")
        .agg(*[F.max(F.when(F.col("key") == k, F.col("value"))).alias("b_" + _c(k)) for k in broker_keys])
    )
    # Parsed once per cluster and once per topic override, not per topic: Kafka's number
    # parsing is a chain of string functions (try_long), and evaluating the brokers' chain
    # for every topic was 32 s of the 10M bench fleet's 51 s (bench/RESULTS.md, issue 46).
    cluster = cluster.select("cluster_id", *_cluster_log_values())
    overrides = (
        tables.configs.where(
            (F.col("entity_type") == "topic") & F.col("key").isin(*TOPIC_LOG_KEYS, REMOTE_TOPIC_KEY)
        )
        .groupBy("cluster_id", F.col("entity_name").alias("topic"))
        .agg(
            *[
                F.max(F.when(F.col("key") == k, F.trim(F.col("value")))).alias("t_" + _c(k))
                for k in (*TOPIC_LOG_KEYS, REMOTE_TOPIC_KEY)
            ]
        )
        .select(
            "cluster_id",
            "topic",
            *[try_long("t_" + _c(k)).alias("t_" + _c(k)) for k in TOPIC_LOG_KEYS],
            try_bool("t_" + _c(REMOTE_TOPIC_KEY)).alias("t_" + _c(REMOTE_TOPIC_KEY)),
        )
    )
    known = (
        tables.configs.where(F.col("entity_type").isin("broker", "cluster_default"))
        .select("cluster_id")
        .distinct()
        .withColumn("brokers_known", F.lit(True))
    )
    settings = tables.derived(topic_settings).select("cluster_id", "topic", "cleanup_policy")
    platform = tables.clusters.select("cluster_id", F.lower(F.col("platform")).alias("platform"))
    d = join(
        join(
            join(join(settings, overrides, ["cluster_id", "topic"], "left"), cluster, "cluster_id", "left"),
            known,
            "cluster_id",
            "left",
        ),
        platform,
        "cluster_id",
        "left",
    )
    columns = []
    for key, (_chain, default) in TOPIC_LOG_KEYS.items():
        # a cluster with none of the broker keys has no row: Kafka's default
        broker = F.coalesce(F.col("cluster_" + _c(key)), F.lit(default).cast("bigint"))
        columns += [
            F.coalesce(F.col("t_" + _c(key)), broker).alias(_c(key)),
            F.col("t_" + _c(key)).isNotNull().alias(_c(key) + "_set"),
            broker.alias("cluster_" + _c(key)),
        ]
    return d.select(
        "cluster_id",
        "topic",
        "cleanup_policy",
        "platform",
        *columns,
        F.coalesce(F.col("t_" + _c(REMOTE_TOPIC_KEY)), F.lit(False)).alias("remote_storage"),
        F.coalesce(F.col("remote_system"), F.lit(False)).alias("remote_system"),
        F.coalesce(F.col("brokers_known"), F.lit(False)).alias("brokers_known"),
        F.coalesce(F.col("retention_time_key"), F.lit(_default_key("retention.ms"))).alias(
            "retention_time_key"
        ),
        F.coalesce(F.col("roll_time_key"), F.lit(_default_key("segment.ms"))).alias("roll_time_key"),
        F.coalesce(F.col("socket_request_max_bytes"), F.lit(SOCKET_REQUEST_MAX_BYTES[1]))
        .cast("bigint")
        .alias("socket_request_max_bytes"),
    )


def _default_key(setting: str) -> str:
    """The broker key Kafka's default of ``setting`` is stated in: the last of its chain."""
    chain, _default = TOPIC_LOG_KEYS[setting]
    return chain[-1][0]


def _cluster_log_values() -> list:
    """From one cluster's broker values (``b_<key>``, text): the effective cluster-level value
    of each TOPIC_LOG_KEYS setting (``cluster_<key>``), the broker keys that decided the
    retention and roll times, remote.log.storage.system.enable and socket.request.max.bytes."""
    values = []
    for key, (chain, default) in TOPIC_LOG_KEYS.items():
        broker = None
        for bkey, factor in chain:
            value = try_long("b_" + _c(bkey)) * F.lit(factor)
            broker = value if broker is None else F.coalesce(broker, value)
        broker = F.coalesce(broker, F.lit(default).cast("bigint"))
        if key == "retention.ms":  # KafkaConfig: a negative broker retention time is -1, unlimited
            broker = F.when(broker < 0, F.lit(-1).cast("bigint")).otherwise(broker)
        values.append(broker.alias("cluster_" + _c(key)))
    time_key = F.lit(_default_key("retention.ms"))
    for bkey in ("log.retention.minutes", "log.retention.ms"):
        time_key = F.when(try_long("b_" + _c(bkey)).isNotNull(), F.lit(bkey)).otherwise(time_key)
    roll_key = F.when(try_long("b_log_roll_ms").isNotNull(), F.lit("log.roll.ms")).otherwise(
        F.lit(_default_key("segment.ms"))
    )
    return [
        *values,
        time_key.alias("retention_time_key"),
        roll_key.alias("roll_time_key"),
        F.coalesce(try_bool("b_" + _c(REMOTE_SYSTEM_KEY)), F.lit(False)).alias("remote_system"),
        F.coalesce(try_long("b_" + _c(SOCKET_REQUEST_MAX_BYTES[0])), F.lit(SOCKET_REQUEST_MAX_BYTES[1]))
        .cast("bigint")
        .alias("socket_request_max_bytes"),
    ]


def _has_policy(policy: str):
    return F.coalesce(F.lower(F.col("cleanup_policy")).contains(policy), F.lit(policy == "delete"))


def _duration(col):
    """A duration in ms as readable text: '7200000 ms (2.0 h)'."""
    return text(col, " ms (", F.round(col / F.lit(3_600_000.0), 1), " h)")


@rule(
    "DSK007",
    "tiered-storage-misconfigured",
    "error",
    needs=(("topics", "configs"),),
    uses=(topic_log_settings,),
    runs_in=("lint",),
)
def tiered_storage_misconfigured(tables, params):
    """A topic enables tiered storage (remote.storage.enable=true) in a way Kafka rejects.

    Why: Kafka validates a tiered topic's configuration when it is created or altered
    (LogConfig.validateTopicLogConfigValues, KIP-405) and refuses it when: the brokers do not
    enable tiered storage (`remote.log.storage.system.enable` false, Kafka's default:
    "Tiered Storage functionality is disabled in the broker"; a broker applying such a
    topic's configuration refuses it too, LogManager.updateTopicConfig: "You have to delete
    all topics with the property remote.storage.enable=true before disabling tiered storage
    cluster-wide");
    `cleanup.policy` contains `compact` ("Remote log storage is unsupported for the
    compacted topics"); `local.retention.ms` is -1 or above a finite `retention.ms`, or
    `local.retention.bytes` is -1 or above a finite `retention.bytes` (-2, the default,
    means "use retention" and always passes). The topic create or config change in the
    file fails when it is applied; on a cluster, the topic does not tier as configured.
    The brokers' setting is judged only where broker configuration was collected or
    linted, and never on a managed platform (MSK sets it for clusters with tiered storage
    mode; Aiven, Confluent Cloud and Google Cloud run their own tiered storage, which their
    users do not configure on the brokers).

    Remediation: enable `remote.log.storage.system.enable=true` (with a remote storage
    manager) on every broker before creating tiered topics; keep compacted topics local
    (`remote.storage.enable=false`); set `local.retention.ms` / `local.retention.bytes` at
    or below `retention.ms` / `retention.bytes`, or leave them at -2.

    Example: topic `events` with remote.storage.enable=true and local.retention.ms=604800000
    above retention.ms=86400000.

    References:
    - apache/kafka storage/src/main/java/org/apache/kafka/storage/internals/log/LogConfig.java (validateTopicLogConfigValues, validateRemoteStorageOnlyIfSystemEnabled, validateNoRemoteStorageForCompactedTopic, validateRemoteStorageRetentionSize/Time) <https://github.com/apache/kafka/blob/trunk/storage/src/main/java/org/apache/kafka/storage/internals/log/LogConfig.java>
    - apache/kafka core/src/main/scala/kafka/log/LogManager.scala (updateTopicConfig) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/log/LogManager.scala>
    - KIP-405: Kafka Tiered Storage <https://cwiki.apache.org/confluence/display/KAFKA/KIP-405%3A+Kafka+Tiered+Storage>
    - Kafka topic config local.retention.ms <https://kafka.apache.org/39/documentation.html#topicconfigs_local.retention.ms>
    """
    d = tables.derived(topic_log_settings).where(F.col("remote_storage"))

    def too_long(local, limit):
        return (
            (F.col(limit) != -1)
            & (F.col(local) != -2)
            & ((F.col(local) == -1) | (F.col(local) > F.col(limit)))
        )

    def too_big(local, limit):
        return (
            (F.col(limit) > -1)
            & (F.col(local) != -2)
            & ((F.col(local) == -1) | (F.col(local) > F.col(limit)))
        )

    system_off = (
        F.col("brokers_known")
        & ~F.col("remote_system")
        & ~F.coalesce(F.col("platform"), F.lit("")).isin(*MANAGED_PLATFORMS)
    )
    compacted = F.coalesce(F.lower(F.col("cleanup_policy")).contains("compact"), F.lit(False))
    ms_bad, bytes_bad = (
        too_long("local_retention_ms", "retention_ms"),
        too_big("local_retention_bytes", "retention_bytes"),
    )
    reasons = F.array_compact(
        F.array(
            F.when(
                system_off,
                F.lit("the brokers do not enable tiered storage (remote.log.storage.system.enable=false)"),
            ),
            F.when(
                compacted, text("cleanup.policy=", F.col("cleanup_policy"), " (compacted topics cannot tier)")
            ),
            F.when(
                ms_bad,
                text(
                    "local.retention.ms=",
                    F.col("local_retention_ms"),
                    " above retention.ms=",
                    F.col("retention_ms"),
                ),
            ),
            F.when(
                bytes_bad,
                text(
                    "local.retention.bytes=",
                    F.col("local_retention_bytes"),
                    " above retention.bytes=",
                    F.col("retention_bytes"),
                ),
            ),
        )
    )
    d = d.withColumn("reasons", reasons).where(F.size("reasons") > 0)
    msg = text(
        "remote.storage.enable=true but ",
        F.array_join(F.col("reasons"), "; "),
        ": Kafka rejects this tiered storage configuration",
    )
    return emit(
        d,
        "topic",
        F.col("topic"),
        msg,
        ev(
            problems=F.col("reasons"),
            cleanup_policy=F.col("cleanup_policy"),
            retention_ms=F.col("retention_ms"),
            local_retention_ms=F.col("local_retention_ms"),
            retention_bytes=F.col("retention_bytes"),
            local_retention_bytes=F.col("local_retention_bytes"),
        ),
    )


_MAX_LISTED = Param(
    "max_listed", 20, "how many topics the cluster's time-retention finding names (all are counted)"
)
# The rate below which a partition rolls its segments by time (segment.ms) rather than by size
# (segment.bytes), at Kafka's defaults: 1 GiB per 7 days, ~1.8 KB/s.
_KB = 1000.0


def _declared():
    """A finding at the rule's declared severity, in a check that gives others their own."""
    return F.lit(None).cast("string")


@rule(
    "DSK008",
    "segment-vs-retention",
    "warning",
    needs=(("topics", "configs"),),
    params=(_MAX_LISTED,),
    uses=(topic_log_settings,),
    runs_in=("lint",),
)
def segment_vs_retention(tables, params):
    """A topic's segments outlast its retention: segment.bytes above retention.bytes (a warning), or segment.ms above retention.ms (info, once per cluster).

    Why: Kafka deletes whole segments, never part of one, and never the active segment.
    Size retention deletes the oldest segments only while what is left stays at or above
    `retention.bytes` (UnifiedLog.deleteRetentionSizeBreachedSegments): with `segment.bytes`
    above `retention.bytes`, a partition holds up to retention.bytes + segment.bytes, more
    than twice its limit, however fast it is written. That is a warning, per topic where
    the topic overrides one of the two settings, and once per cluster (resource:
    log.retention.bytes) where the brokers' defaults conflict.
    Time retention deletes a segment once its newest record is older than `retention.ms`
    (deleteRetentionMsBreachedSegments / deletableSegments); the active segment rolls after
    `segment.ms` or when it reaches `segment.bytes`, whichever comes first. A partition
    writing more than segment.bytes per segment.ms (Kafka's defaults: 1 GiB per 7 days,
    about 1.8 KB/s) rolls by size, within hours on a busy topic, and holds at most one
    segment more than its retention. Only a slower partition that keeps receiving writes
    rolls by time, and there a record can stay up to segment.ms + retention.ms (a partition
    that stops receiving writes is not held: once its active segment's newest record is
    past retention, Kafka rolls a new segment and deletes it: deleteSegments). A
    `retention.ms` below the 7-day default `segment.ms` is one of the most common topic
    overrides and harmless on busy topics, so this branch is info: one finding per cluster
    (resource: segment.ms) with how many topics have it, the first of them by name (a
    parameter) and how many inherit both settings from the brokers. Only topics with the
    delete policy are judged.

    Remediation: for segment.bytes above retention.bytes, set `segment.bytes` well below
    `retention.bytes` on the topic (or `log.segment.bytes` on the brokers). For segment.ms
    above retention.ms, nothing is needed unless the time bound itself matters (data
    protection, a disk sized by time) on partitions that receive few writes: then lower
    `segment.ms` on those topics towards `retention.ms`. Not for a very short retention (an
    hour or less): each segment is a log file with its index files, opened and memory-mapped
    by the broker, and rolling every few minutes multiplies them; accept the longer bound
    there.

    Example: topic `audit` with retention.ms=7200000 (2 h) and the default segment.ms of 7
    days: a partition receiving a few records a minute (never filling segment.bytes) keeps
    its records for up to 7 days and 2 h (info); topic `replay` with retention.bytes=100 MB
    and the default segment.bytes of 1 GiB holds up to 1.1 GB per partition (a warning).

    References:
    - apache/kafka core/src/main/scala/kafka/log/UnifiedLog.scala (deletableSegments, deleteRetentionMsBreachedSegments, deleteRetentionSizeBreachedSegments) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/log/UnifiedLog.scala>
    - apache/kafka storage/src/main/java/org/apache/kafka/storage/internals/log/LogSegment.java (shouldRoll: segment.bytes or segment.ms, whichever first) <https://github.com/apache/kafka/blob/3.9/storage/src/main/java/org/apache/kafka/storage/internals/log/LogSegment.java>
    - Kafka topic config segment.ms <https://kafka.apache.org/39/documentation.html#topicconfigs_segment.ms>
    - Kafka topic config retention.bytes <https://kafka.apache.org/39/documentation.html#topicconfigs_retention.bytes>
    """
    d = tables.derived(topic_log_settings).where(_has_policy("delete"))

    def time_conflict(p=""):
        return (F.col(p + "retention_ms") > 0) & (F.col(p + "segment_ms") > F.col(p + "retention_ms"))

    def size_conflict(p=""):
        return (F.col(p + "retention_bytes") >= 0) & (
            F.col(p + "segment_bytes") > F.col(p + "retention_bytes")
        )

    def size_reason(p=""):
        return text(
            "segment.bytes=",
            F.col(p + "segment_bytes"),
            " above retention.bytes=",
            F.col(p + "retention_bytes"),
            ": a partition holds up to retention.bytes + segment.bytes",
        )

    own_size = F.col("retention_bytes_set") | F.col("segment_bytes_set")
    topic_findings = emit(
        d.where(size_conflict() & own_size),
        "topic",
        F.col("topic"),
        size_reason(),
        ev(
            problems=F.array(size_reason()),
            retention_ms=F.col("retention_ms"),
            segment_ms=F.col("segment_ms"),
            retention_bytes=F.col("retention_bytes"),
            segment_bytes=F.col("segment_bytes"),
        ),
        _declared(),
    )
    size_default = (
        d.groupBy("cluster_id")
        .agg(
            F.first(F.col("cluster_retention_bytes")).alias("cluster_retention_bytes"),
            F.first(F.col("cluster_segment_bytes")).alias("cluster_segment_bytes"),
            F.sum(F.when(~own_size, F.lit(1)).otherwise(F.lit(0))).alias("inheriting"),
        )
        .where(size_conflict("cluster_") & (F.col("inheriting") > 0))
    )
    cluster_findings = emit(
        size_default,
        "config",
        F.lit("log.retention.bytes"),
        text(
            "the brokers' defaults: ",
            size_reason("cluster_"),
            " (topics inheriting them: ",
            F.col("inheriting"),
            ")",
        ),
        ev(
            problems=F.array(size_reason("cluster_")),
            retention_bytes=F.col("cluster_retention_bytes"),
            segment_bytes=F.col("cluster_segment_bytes"),
            topics_inheriting=F.col("inheriting"),
        ),
        _declared(),
    )
    return topic_findings.unionByName(cluster_findings).unionByName(
        _time_retention_by_cluster(d.where(time_conflict()), params["max_listed"])
    )


def _time_retention_by_cluster(d, max_listed: int):
    """DSK008's time branch: one info finding per cluster over the topics ``d`` (segment.ms
    above retention.ms), the first ``max_listed`` by name. The rate below which a partition
    rolls by time is segment.bytes per segment.ms; the message gives the highest among the
    topics (the most partitions it can concern)."""
    inheriting = ~(F.col("retention_ms_set") | F.col("segment_ms_set"))
    rows = d.withColumn("_rn", F.row_number().over(Window.partitionBy("cluster_id").orderBy("topic")))
    per_cluster = rows.groupBy("cluster_id").agg(
        F.count(F.lit(1)).alias("topics"),
        # array_compact: DuckDB's collect_list keeps the nulls Spark's drops.
        F.sort_array(
            F.array_compact(F.collect_list(F.when(F.col("_rn") <= max_listed, F.col("topic"))))
        ).alias("listed"),
        F.sum(F.when(inheriting, F.lit(1)).otherwise(F.lit(0))).alias("inheriting"),
        F.max(F.col("segment_ms") + F.col("retention_ms")).alias("longest_ms"),
        F.max(
            F.col("segment_bytes").cast("double") * F.lit(1000.0) / F.col("segment_ms").cast("double")
        ).alias("roll_rate"),
        F.first(F.col("retention_time_key")).alias("retention_time_key"),
    )
    more = F.when(F.col("topics") > max_listed, F.lit(", ...")).otherwise(F.lit(""))
    kb = F.round(F.col("roll_rate") / F.lit(_KB), 1)
    msg = text(
        F.col("topics"),
        " topic(s) keep records for less time than a segment lasts (segment.ms above retention.ms: ",
        F.array_join(F.col("listed"), ", "),
        more,
        F.when(
            F.col("inheriting") > 0,
            text("; ", F.col("inheriting"), " inherit both from the brokers' ", F.col("retention_time_key")),
        ).otherwise(F.lit("")),
        "): on partitions writing less than ~",
        kb,
        " KB/s (segment.bytes per segment.ms), records can stay up to segment.ms + retention.ms (at most ",
        _duration(F.col("longest_ms")),
        "); faster partitions roll by size and keep at most one segment more than their retention",
    )
    return emit(
        per_cluster,
        "config",
        F.lit("segment.ms"),
        msg,
        ev(
            topics_affected=F.col("topics"),
            topics=F.col("listed"),
            topics_inheriting=F.col("inheriting"),
            longest_retention_ms=F.col("longest_ms"),
            rolls_by_time_below_bytes_per_second=F.round(F.col("roll_rate"), 0).cast("bigint"),
        ),
        F.lit("info"),
    )


def log_dir_retention_bytes(tables):
    """Per live log dir of known capacity (log_dirs.total_bytes, DescribeLogDirs v4+ since
    KIP-827; no error): ``capacity``, ``used``, and the most the broker's replicas placed in it
    can retain (``bounded_bytes``). Per replica of a delete-policy topic with a finite size
    bound: retention.bytes + segment.bytes (size retention never deletes the active segment,
    see DSK008), local.retention.bytes in place of retention.bytes for a tiered topic
    (UnifiedLog.localRetentionSize; -2 means retention.bytes: LogConfig.localRetentionBytes).
    Kafka puts each new replica in the broker's live log dir holding the fewest
    (LogManager.nextLogDirs), so a dir holds about ``per_dir`` = ceil(replicas / log dirs) of
    them; ``bounded_bytes`` sums the ``per_dir`` largest bounds among the broker's replicas.
    Also ``log_dir_count``, ``replicas`` (all of the broker's), ``bounded_replicas``, ``topics``
    (with a bound)."""
    dirs = tables.log_dirs.where(
        F.col("broker_id").isNotNull() & (F.col("error").isNull() | (F.trim(F.col("error")) == ""))
    )
    capacity = dirs.where(F.col("total_bytes") > 0).select(
        "cluster_id",
        "broker_id",
        "path",
        F.col("total_bytes").alias("capacity"),
        F.col("used_bytes").alias("used"),
    )
    dir_count = dirs.groupBy("cluster_id", "broker_id").agg(F.countDistinct("path").alias("log_dir_count"))
    tiered = F.col("remote_storage") & (
        F.col("remote_system") | (F.coalesce(F.col("platform"), F.lit("")) == "msk")
    )
    local = F.when(tiered & (F.col("local_retention_bytes") != -2), F.col("local_retention_bytes")).otherwise(
        F.col("retention_bytes")
    )
    bounded = (
        tables.derived(topic_log_settings)
        .where(_has_policy("delete"))
        .select("cluster_id", "topic", local.alias("bound"), "segment_bytes")
        .where(F.col("bound") >= 0)
        .select(
            "cluster_id",
            "topic",
            (F.col("bound") + F.greatest(F.col("segment_bytes"), F.lit(0))).alias("per_replica"),
        )
    )
    clusters = capacity.select("cluster_id").distinct()
    lists = join(tables.derived(replica_lists), clusters, "cluster_id", "left_semi")
    all_replicas = (
        lists.select("cluster_id", "partitions", F.explode(F.col("replicas")).alias("broker_id"))
        .groupBy("cluster_id", "broker_id")
        .agg(F.sum("partitions").alias("replicas"))
    )
    parts = join(
        tables.partitions.select("cluster_id", "topic", "replicas"), clusters, "cluster_id", "left_semi"
    )
    # Assignments repeat: count partitions per (topic, replica list) before exploding replicas.
    per_list = (
        join(parts, bounded, ["cluster_id", "topic"])
        .groupBy("cluster_id", "topic", "replicas", "per_replica")
        .agg(F.count(F.lit(1)).alias("n"))
        .select("cluster_id", "topic", "per_replica", "n", F.explode(F.col("replicas")).alias("broker_id"))
    )
    per_broker = per_list.groupBy("cluster_id", "broker_id").agg(
        F.sum("n").alias("bounded_replicas"), F.countDistinct("topic").alias("topics")
    )
    by_bound = per_list.groupBy("cluster_id", "broker_id", "per_replica").agg(F.sum("n").alias("n"))
    brokers = join(
        join(all_replicas, dir_count, ["cluster_id", "broker_id"]), per_broker, ["cluster_id", "broker_id"]
    )
    per_dir = F.ceil(F.col("replicas").cast("double") / F.col("log_dir_count").cast("double")).cast("bigint")
    ranked = join(by_bound, brokers.withColumn("per_dir", per_dir), ["cluster_id", "broker_id"])
    before = F.coalesce(
        F.sum("n").over(
            Window.partitionBy("cluster_id", "broker_id")
            .orderBy(F.col("per_replica").desc())
            .rowsBetween(Window.unboundedPreceding, -1)
        ),
        F.lit(0),
    )
    taken = F.least(F.col("n"), F.greatest(F.col("per_dir") - F.col("_before"), F.lit(0)))
    top = (
        ranked.withColumn("_before", before)
        .groupBy(
            "cluster_id", "broker_id", "per_dir", "log_dir_count", "replicas", "bounded_replicas", "topics"
        )
        .agg(F.sum(F.col("per_replica") * taken).alias("bounded_bytes"))
    )
    return join(top, capacity, ["cluster_id", "broker_id"])


@rule(
    "DSK009",
    "retention-exceeds-disk",
    "info",
    needs=("log_dirs",),
    params=(
        Param(
            "headroom",
            0.15,
            "fraction of a log dir's capacity to keep free (reassignments, catch-up, compaction); "
            "the retained bytes may use the rest",
        ),
        Param(
            "high_usage",
            0.85,
            "fraction of a log dir used now at or above which the finding is a warning (DSK006's max_used)",
        ),
    ),
    uses=(log_dir_retention_bytes,),
)
def retention_exceeds_disk(tables, params):
    """The size bounds of the replicas a log dir holds add up to more than the dir can take (a warning only when the dir is also nearly full).

    Why: a topic with a finite `retention.bytes` may keep that much per partition replica,
    plus its active segment (size retention never deletes the active segment:
    UnifiedLog.deleteRetentionSizeBreachedSegments); a tiered topic keeps its
    `local.retention.bytes` on the broker (UnifiedLog.localRetentionSize; -2, the default,
    means retention.bytes). Each replica lives in one log dir, and Kafka puts each new
    replica in the live log dir holding the fewest (LogManager.nextLogDirs), so with JBOD a
    dir holds about its share of the broker's replicas, not all of them: the rule sums, per
    log dir, the largest bounds among as many of the broker's replicas as the dir holds
    (ceil(replicas / log dirs)), and compares that with the dir's capacity (DescribeLogDirs
    total bytes, KIP-827) minus the headroom `headroom` (a fraction, default 0.15, matching
    DSK006's 85%). Above it, size retention alone does not keep the dir from filling, and a
    full log dir goes offline (DSK001). But a `retention.bytes` is often a generous safety
    cap under a time retention that binds first, so a sum above the disk is a plan, not a
    fault: the finding is info, and a warning only when the dir is also at or above
    `high_usage` (default 0.85) used now. Only delete-policy topics with a size bound are
    counted (time-only retention has no byte bound); where capacities are unknown (older
    brokers, MSK without DescribeLogDirs) the rule is not evaluated; MSK Express brokers
    (managed storage) are not judged. It says nothing about a restart and is not a
    preflight rule.

    Remediation: when the dir is filling (a warning), act now: lower `retention.bytes` (or
    `local.retention.bytes`) of the largest topics, move partitions to other brokers or log
    dirs (`kafka-reassign-partitions`, with log dirs in the reassignment JSON), or add disk
    (MSK: `aws kafka update-broker-storage` or storage auto-scaling). As info, check that
    the time retention keeps the topics well below their size caps, or size the caps to the
    disk.

    Example: broker 2's single 1 TB log dir hosts 400 replicas of topics with
    retention.bytes=5 GB (2 TB at most) while it is 40% used (info; a warning at 85%).

    References:
    - KIP-827: Expose log dirs total and usable space via Kafka API <https://cwiki.apache.org/confluence/display/KAFKA/KIP-827%3A+Expose+log+dirs+total+and+usable+space+via+Kafka+API>
    - apache/kafka core/src/main/scala/kafka/log/UnifiedLog.scala (deleteRetentionSizeBreachedSegments, localRetentionSize) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/log/UnifiedLog.scala>
    - apache/kafka core/src/main/scala/kafka/log/LogManager.scala (nextLogDirs: the live log dir with the fewest logs first) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/log/LogManager.scala>
    - apache/kafka storage/src/main/java/org/apache/kafka/storage/internals/log/LogConfig.java (localRetentionBytes: -2 is retention.bytes) <https://github.com/apache/kafka/blob/3.9/storage/src/main/java/org/apache/kafka/storage/internals/log/LogConfig.java>
    - Kafka topic config retention.bytes <https://kafka.apache.org/39/documentation.html#topicconfigs_retention.bytes>
    - Kafka topic config local.retention.bytes <https://kafka.apache.org/39/documentation.html#topicconfigs_local.retention.bytes>
    """
    # floor, not round: a value on a rounding tie (0.85 GB) rounds apart on Spark and DuckDB
    usable = F.floor(F.col("capacity") * F.lit(1.0 - params["headroom"]))
    d = without_express(
        tables, tables.derived(log_dir_retention_bytes).where(F.col("bounded_bytes") > usable)
    )
    used_fraction = F.col("used").cast("double") / F.col("capacity").cast("double")
    filling = F.coalesce(used_fraction >= F.lit(params["high_usage"]), F.lit(False))
    # GB with one decimal, floored; a double on both engines (Spark reads 10.0 as a decimal)
    gb = lambda c: (F.floor(c / F.lit(1e8)).cast("double") / F.lit(10.0)).cast("double")  # noqa: E731
    whose = F.when(
        F.col("log_dir_count") > 1,
        text(
            "the ",
            F.col("per_dir"),
            " largest of the broker's ",
            F.col("replicas"),
            " replicas (",
            F.col("bounded_replicas"),
            " with a size bound), as many as the dir holds (Kafka puts each new replica in the live log dir "
            "holding the fewest, of ",
            F.col("log_dir_count"),
            ")",
        ),
    ).otherwise(
        text(
            "the broker's ",
            F.col("replicas"),
            " replicas (",
            F.col("bounded_replicas"),
            " with a size bound)",
        )
    )
    msg = text(
        "log dir ",
        F.col("path"),
        " of broker ",
        F.col("broker_id"),
        " may retain up to ",
        gb(F.col("bounded_bytes")),
        " GB, above the ",
        gb(usable),
        " GB it gives after " + str(round(params["headroom"] * 100, 1)).removesuffix(".0") + "% headroom (",
        gb(F.col("capacity")),
        " GB): the size bounds (retention.bytes, or local.retention.bytes for tiered topics, + one segment "
        "each) of ",
        whose,
        "; it is ",
        F.floor(used_fraction * F.lit(100.0)).cast("bigint"),
        "% used",
        F.when(
            filling,
            F.lit(" now: size retention does not stop it filling, and a full log dir goes offline"),
        ).otherwise(
            F.lit(": a plan, not a fault, while time retention keeps the topics below their size caps")
        ),
    )
    return emit(
        d,
        "log_dir",
        _dir_name(),
        msg,
        ev(
            retained_bytes_bound=F.col("bounded_bytes"),
            capacity_bytes=F.col("capacity"),
            used_bytes=F.col("used"),
            used_percent=F.round(used_fraction * F.lit(100.0), 1),
            log_dirs=F.col("log_dir_count"),
            replicas=F.col("replicas"),
            replicas_per_dir=F.col("per_dir"),
            bounded_replicas=F.col("bounded_replicas"),
            topics=F.col("topics"),
        ),
        F.when(filling, F.lit("warning")),
    )
