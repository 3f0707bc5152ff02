"""DSK: storage and JBOD (one failed disk of a JBOD broker took old sarama clients down for hours).

Log directories come from DescribeLogDirs (the ``log_dirs`` table), the brokers table and
the effective log.dirs setting, merged per broker by ``broker_log_dirs`` in checks/transforms.py.
A log directory is named "<broker id>:<path>" (resource type ``log_dir``).
"""

from auditor.declarations import Category, Param, rule
from checks._api import F, emit, ev, join, text
from checks.transforms import (
    MANAGED_PLATFORMS,
    broker_log_dirs,
    cluster_settings,
    failed_log_dir,
    int_list,
    metric_per_node,
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
    for key, (chain, default) in TOPIC_LOG_KEYS.items():
        broker = None
        for bkey, factor in chain:
            value = try_long("b_" + _c(bkey)) * F.lit(factor)
            broker = value if broker is None else F.coalesce(broker, value)
        broker = F.coalesce(broker, F.lit(default).cast("bigint"))
        if key == "retention.ms":  # KafkaConfig: a negative broker retention time is -1, unlimited
            broker = F.when(broker < 0, F.lit(-1).cast("bigint")).otherwise(broker)
        columns += [
            F.coalesce(try_long("t_" + _c(key)), broker).alias(_c(key)),
            try_long("t_" + _c(key)).isNotNull().alias(_c(key) + "_set"),
            broker.alias("cluster_" + _c(key)),
        ]
    time_key = F.lit("log.retention.hours")
    for bkey in ("log.retention.minutes", "log.retention.ms"):
        time_key = F.when(try_long("b_" + _c(bkey)).isNotNull(), F.lit(bkey)).otherwise(time_key)
    roll_key = F.when(try_long("b_log_roll_ms").isNotNull(), F.lit("log.roll.ms")).otherwise(
        F.lit("log.roll.hours")
    )
    return d.select(
        "cluster_id",
        "topic",
        "cleanup_policy",
        "platform",
        *columns,
        F.coalesce(try_bool("t_" + _c(REMOTE_TOPIC_KEY)), F.lit(False)).alias("remote_storage"),
        F.coalesce(try_bool("b_" + _c(REMOTE_SYSTEM_KEY)), F.lit(False)).alias("remote_system"),
        F.coalesce(F.col("brokers_known"), F.lit(False)).alias("brokers_known"),
        time_key.alias("retention_time_key"),
        roll_key.alias("roll_time_key"),
        F.coalesce(try_long("b_" + _c(SOCKET_REQUEST_MAX_BYTES[0])), F.lit(SOCKET_REQUEST_MAX_BYTES[1]))
        .cast("bigint")
        .alias("socket_request_max_bytes"),
    )


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


@rule(
    "DSK008",
    "segment-vs-retention",
    "warning",
    needs=(("topics", "configs"),),
    uses=(topic_log_settings,),
    runs_in=("lint",),
)
def segment_vs_retention(tables, params):
    """A topic's segments outlast its retention: segment.ms above retention.ms, or segment.bytes above retention.bytes.

    Why: Kafka deletes whole segments, never part of one. Time retention deletes a segment
    once its newest record is older than `retention.ms`; a partition written continuously
    keeps its newest record in the active segment, which rolls only after `segment.ms` or
    at `segment.bytes` (UnifiedLog.deleteRetentionMsBreachedSegments / deletableSegments).
    So with `segment.ms` above `retention.ms`, a record can stay up to segment.ms +
    retention.ms, far beyond the retention a team set for disk or data-protection reasons.
    (A partition that stops receiving writes is not held: once its active segment's newest
    record is past retention, Kafka rolls a new segment and deletes it: deleteSegments.)
    Size retention deletes the oldest segments only while what is left stays at or above
    `retention.bytes`, and never the active segment (deleteRetentionSizeBreachedSegments):
    with `segment.bytes` above `retention.bytes`, a partition holds up to retention.bytes +
    segment.bytes, more than twice its limit. Only topics with the delete policy are judged;
    per topic where the topic overrides one of the four settings, and once per cluster
    (resource: the broker retention setting) where the brokers' own defaults conflict.

    Remediation: set `segment.ms` at or below `retention.ms` (Kafka's docs: segment.ms
    forces a roll "to ensure that retention can delete or compact old data"), and
    `segment.bytes` well below `retention.bytes`, on the topic (or `log.roll.ms` /
    `log.segment.bytes` on the brokers).

    Example: topic `audit` with retention.ms=7200000 (2 h) and the default segment.ms of 7
    days: a partition that receives a few records a minute (never filling segment.bytes)
    keeps its records for up to 7 days and 2 h.

    References:
    - apache/kafka core/src/main/scala/kafka/log/UnifiedLog.scala (deletableSegments, deleteRetentionMsBreachedSegments, deleteRetentionSizeBreachedSegments) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/log/UnifiedLog.scala>
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

    def reasons(p=""):
        return F.array_compact(
            F.array(
                F.when(
                    time_conflict(p),
                    text(
                        "segment.ms=",
                        _duration(F.col(p + "segment_ms")),
                        " above retention.ms=",
                        _duration(F.col(p + "retention_ms")),
                        ": records can stay up to segment.ms + retention.ms",
                    ),
                ),
                F.when(
                    size_conflict(p),
                    text(
                        "segment.bytes=",
                        F.col(p + "segment_bytes"),
                        " above retention.bytes=",
                        F.col(p + "retention_bytes"),
                        ": a partition holds up to retention.bytes + segment.bytes",
                    ),
                ),
            )
        )

    own_time = F.col("retention_ms_set") | F.col("segment_ms_set")
    own_size = F.col("retention_bytes_set") | F.col("segment_bytes_set")
    topics = d.where((time_conflict() & own_time) | (size_conflict() & own_size)).withColumn(
        "reasons", reasons()
    )
    topic_findings = emit(
        topics,
        "topic",
        F.col("topic"),
        F.array_join(F.col("reasons"), "; "),
        ev(
            problems=F.col("reasons"),
            retention_ms=F.col("retention_ms"),
            segment_ms=F.col("segment_ms"),
            retention_bytes=F.col("retention_bytes"),
            segment_bytes=F.col("segment_bytes"),
        ),
    )
    cluster = (
        d.groupBy("cluster_id")
        .agg(
            *[
                F.first(F.col(c)).alias(c)
                for c in (
                    "cluster_retention_ms",
                    "cluster_segment_ms",
                    "cluster_retention_bytes",
                    "cluster_segment_bytes",
                    "retention_time_key",
                    "roll_time_key",
                )
            ],
            F.sum(
                F.when(~(F.col("retention_ms_set") | F.col("segment_ms_set")), F.lit(1)).otherwise(F.lit(0))
            ).alias("inheriting_time"),
            F.sum(
                F.when(~(F.col("retention_bytes_set") | F.col("segment_bytes_set")), F.lit(1)).otherwise(
                    F.lit(0)
                )
            ).alias("inheriting_size"),
        )
        .where(
            (time_conflict("cluster_") & (F.col("inheriting_time") > 0))
            | (size_conflict("cluster_") & (F.col("inheriting_size") > 0))
        )
        .withColumn("reasons", reasons("cluster_"))
        .withColumn(
            "key",
            F.when(time_conflict("cluster_"), F.col("retention_time_key")).otherwise(
                F.lit("log.retention.bytes")
            ),
        )
    )
    cluster_findings = emit(
        cluster,
        "config",
        F.col("key"),
        text(
            "the brokers' defaults: ",
            F.array_join(F.col("reasons"), "; "),
            " (topics inheriting them: ",
            F.greatest(F.col("inheriting_time"), F.col("inheriting_size")),
            ")",
        ),
        ev(
            problems=F.col("reasons"),
            retention_ms=F.col("cluster_retention_ms"),
            segment_ms=F.col("cluster_segment_ms"),
            retention_bytes=F.col("cluster_retention_bytes"),
            segment_bytes=F.col("cluster_segment_bytes"),
            topics_inheriting=F.greatest(F.col("inheriting_time"), F.col("inheriting_size")),
        ),
    )
    return topic_findings.unionByName(cluster_findings)


def broker_retention_bytes(tables):
    """Per broker of a cluster whose log-dir capacities are known (log_dirs.total_bytes,
    DescribeLogDirs v4+ since KIP-827): ``capacity`` (the sum over its log dirs),
    ``bounded_bytes``, the most its replicas of topics with a finite retention.bytes can hold
    (per replica retention.bytes + segment.bytes: size retention never deletes the active
    segment, see DSK008), ``bounded_replicas`` and ``topics`` (how many such topics)."""
    capacity = (
        tables.log_dirs.where(F.col("total_bytes") > 0)
        .groupBy("cluster_id", "broker_id")
        .agg(F.sum("total_bytes").alias("capacity"), F.sum("used_bytes").alias("used"))
    )
    bounded = (
        tables.derived(topic_log_settings)
        .where((F.col("retention_bytes") >= 0) & _has_policy("delete"))
        .select(
            "cluster_id",
            "topic",
            (F.col("retention_bytes") + F.greatest(F.col("segment_bytes"), F.lit(0))).alias("per_replica"),
        )
    )
    clusters = capacity.select("cluster_id").distinct()
    parts = join(
        tables.partitions.select("cluster_id", "topic", "replicas"), clusters, "cluster_id", "left_semi"
    )
    # Assignments repeat: count partitions per (topic, replica list) before exploding replicas.
    per_list = (
        join(parts, bounded, ["cluster_id", "topic"])
        .groupBy("cluster_id", "topic", "replicas", "per_replica")
        .agg(F.count(F.lit(1)).alias("n"))
    )
    per_broker = (
        per_list.select(
            "cluster_id", "topic", "per_replica", "n", F.explode(F.col("replicas")).alias("broker_id")
        )
        .groupBy("cluster_id", "broker_id")
        .agg(
            F.sum(F.col("per_replica") * F.col("n")).alias("bounded_bytes"),
            F.sum("n").alias("bounded_replicas"),
            F.countDistinct("topic").alias("topics"),
        )
    )
    return join(per_broker, capacity, ["cluster_id", "broker_id"])


@rule(
    "DSK009",
    "retention-exceeds-disk",
    "warning",
    needs=("log_dirs",),
    params=(
        Param(
            "headroom",
            0.15,
            "fraction of a broker's log-dir capacity to keep free (reassignments, catch-up, "
            "compaction); the retained bytes may use the rest",
        ),
    ),
    uses=(broker_retention_bytes,),
    runs_in=("preflight",),
)
def retention_exceeds_disk(tables, params):
    """The topics a broker hosts may retain more bytes than its log dirs hold.

    Why: a topic with a finite `retention.bytes` may keep that much per partition replica,
    plus its active segment (size retention never deletes the active segment:
    UnifiedLog.deleteRetentionSizeBreachedSegments), so a broker's replicas of such topics
    can grow to sum(retention.bytes + segment.bytes) over them. When that sum exceeds the
    capacity of the broker's log dirs (DescribeLogDirs total bytes, KIP-827) minus the
    headroom `headroom` (a fraction, default 0.15, a heuristic matching DSK006's 85%),
    retention will not stop the disk from filling: a full log dir goes offline (DSK001).
    Only topics with the delete policy and a finite retention.bytes are counted (time-only
    retention has no byte bound), so the real need can be higher; where capacities are
    unknown (older brokers, MSK without DescribeLogDirs) the rule is not evaluated; MSK
    Express brokers (managed storage) are not judged.

    Remediation: lower `retention.bytes` of the largest topics, spread their partitions
    over more brokers (`kafka-reassign-partitions`), or add disk (MSK: `aws kafka
    update-broker-storage` or storage auto-scaling).

    Example: broker 2 with 1 TB of log dirs hosting 400 replicas of topics with
    retention.bytes=5 GB (2 TB at most).

    References:
    - KIP-827: Expose log dirs total and usable space via Kafka API <https://cwiki.apache.org/confluence/display/KAFKA/KIP-827%3A+Expose+log+dirs+total+and+usable+space+via+Kafka+API>
    - apache/kafka core/src/main/scala/kafka/log/UnifiedLog.scala (deleteRetentionSizeBreachedSegments) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/log/UnifiedLog.scala>
    - Kafka topic config retention.bytes <https://kafka.apache.org/39/documentation.html#topicconfigs_retention.bytes>
    """
    usable = F.col("capacity") * F.lit(1.0 - params["headroom"])
    d = without_express(tables, tables.derived(broker_retention_bytes).where(F.col("bounded_bytes") > usable))
    gb = lambda c: F.round(c / F.lit(1e9), 1)  # noqa: E731
    msg = text(
        "broker ",
        F.col("broker_id"),
        " hosts ",
        F.col("bounded_replicas"),
        " replicas of ",
        F.col("topics"),
        " topic(s) whose retention.bytes (+ one segment each) add up to ",
        gb(F.col("bounded_bytes")),
        " GB, above the ",
        gb(usable),
        " GB its log dirs give after "
        + str(round(params["headroom"] * 100, 1)).removesuffix(".0")
        + "% headroom (",
        gb(F.col("capacity")),
        " GB): retention cannot keep the disk from filling",
    )
    return emit(
        d,
        "broker",
        F.col("broker_id").cast("string"),
        msg,
        ev(
            retained_bytes_bound=F.col("bounded_bytes"),
            capacity_bytes=F.col("capacity"),
            used_bytes=F.col("used"),
            replicas=F.col("bounded_replicas"),
            topics=F.col("topics"),
        ),
    )
