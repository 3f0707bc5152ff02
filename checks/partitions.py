"""PAR: live partition state, as the brokers serve it and as ZooKeeper holds it."""

from auditor.declarations import Category, Param, rule
from checks._api import F, emit, ev, join, text
from checks.transforms import (
    SHARE_STATE_TOPIC,
    broker_counts,
    cluster_brokers,
    cluster_settings,
    degraded_partitions,
    int_list,
    min_isr_text,
    partition_name,
    registered_as,
    replica_lists,
)

CATEGORY = Category("PAR", "partitions", "live partition state", tuple(range(1, 8)))


@rule(
    "PAR001",
    "leaderless-partition",
    "critical",
    needs=("partitions",),
    uses=(degraded_partitions,),
    cause="symptom",
)
def leaderless_partition(tables, params):
    """A partition has no leader, or its leader is not a registered broker: it cannot be read or written.

    Why: without a live leader nobody serves the partition. Producers fail, consumers stop,
    and when the partition belongs to `__consumer_offsets` every consumer group mapped to
    it loses its coordinator (a ZooKeeper-mode controller split-brain once left one at
    leader -1, and the consumer groups mapped to it stopped).

    Remediation: find out why no replica could be elected: are the replicas' brokers up
    (`/brokers/ids`)? Is the ISR empty while unclean election is off? Bring a replica back,
    run a preferred or (accepting data loss) unclean election with `kafka-leader-election`,
    and when the controller's view diverges from ZooKeeper, restart the controller to
    force a new one.

    Example: `__consumer_offsets-17` with leader -1, ISR [3], replicas [3, 1, 4].

    References:
    - Kafka documentation: monitoring (OfflinePartitionsCount) <https://kafka.apache.org/39/documentation.html#monitoring>
    - Kafka documentation: unclean leader election <https://kafka.apache.org/39/documentation.html#design_uncleanleader>
    """
    d = _health(tables).where(F.col("leaderless"))
    no_leader = (F.col("leader") < 0) | (F.col("zk_leader") < 0)
    zk_differs = F.when(
        F.col("zk_leader").isNotNull() & (F.col("zk_leader") != F.col("leader")),
        text(", ZooKeeper says ", F.col("zk_leader")),
    ).otherwise(F.lit(""))
    where = text("; replicas ", int_list(F.col("replicas")), ", ISR ", int_list(F.col("isr")))
    msg = F.when(no_leader, text("no leader (leader ", F.col("leader"), zk_differs, ")", where)).otherwise(
        text("leader ", F.col("leader"), " is not a registered broker", where)
    )
    evidence = ev(
        leader=F.col("leader"),
        zookeeper_leader=F.col("zk_leader"),
        leader_epoch=F.col("leader_epoch"),
        replicas=F.col("replicas"),
        isr=F.col("isr"),
        offline_replicas=F.col("offline_replicas"),
    )
    return emit(d, "partition", partition_name(), msg, evidence)


# -- PAR002..PAR006: the same shared view ------------------------------------------

COORDINATOR_TOPICS = ("__consumer_offsets", "__transaction_state", SHARE_STATE_TOPIC)


def _health(tables):
    return tables.derived(degraded_partitions)


def _isr_evidence(**extra):
    return ev(
        isr=F.col("isr"),
        isr_size=F.col("isr_size"),
        replicas=F.col("replicas"),
        replication_factor=F.col("replication_factor"),
        min_insync_replicas=F.col("min_insync_replicas"),
        min_insync_replicas_source=F.col("min_insync_replicas_source"),
        configured_min_insync_replicas=F.col("configured_min_isr"),
        strict_min_isr=F.col("strict_min_isr"),
        leader=F.col("leader"),
        **extra,
    )


def _min_isr_text():
    return min_isr_text()


def _consumers_below_min_isr():
    """What a partition below its effective min ISR does to consumers: since 3.7 the leader
    stops the high watermark (KAFKA-15583), so nothing new is delivered whatever the acks."""
    return F.when(
        F.col("strict_min_isr"),
        F.lit(
            "; the leader (Kafka 3.7+) does not advance the high watermark: consumers receive no new "
            "records, acks=0/1 writes included"
        ),
    ).otherwise(
        F.lit(
            "; acks=0/1 writes still succeed and reach consumers (leader before Kafka 3.7, or its version "
            "unknown: since 3.7 the high watermark stops too)"
        )
    )


@rule(
    "PAR002",
    "coordinator-unavailable",
    "critical",
    needs=("partitions",),
    uses=(degraded_partitions,),
    cause="symptom",
)
def coordinator_unavailable(tables, params):
    """A `__consumer_offsets`, `__transaction_state` or `__share_group_state` partition is leaderless or under min ISR: the groups mapped to it have no working coordinator.

    Why: every consumer group is coordinated by the leader of one `__consumer_offsets`
    partition, abs(Java String.hashCode(group.id)) % offsets.topic.num.partitions (default
    50); transactional ids map the same way onto `__transaction_state`
    (transaction.state.log.num.partitions). When that partition has no leader, its groups
    cannot join, rebalance or commit offsets (COORDINATOR_NOT_AVAILABLE) and stop consuming,
    while every other group looks fine (a ZooKeeper-mode controller split-brain once left a
    `__consumer_offsets` partition at leader -1 and stopped exactly the groups mapped to
    it). Below min.insync.replicas offset commits and
    transaction markers fail with NOT_ENOUGH_REPLICAS. The finding lists the consumer
    groups whose coordinator partition it is (computed by the collector).
    Share groups (KIP-932, Kafka 4.0+) keep their delivery state in `__share_group_state`,
    mapped per share-partition, not per group: the share coordinator leading partition
    abs(hashCode("groupId:topicId:partition")) % share.coordinator.state.topic.num.partitions
    (default 50) holds the state of that group's consumption of that topic partition
    (ShareCoordinatorService.partitionFor, SharePartitionKey.asCoordinatorKey). When it is
    leaderless, or below its min ISR (the coordinator runtime completes a write only once
    the high watermark passes it, which a 3.7+ leader does not advance below min ISR,
    KAFKA-15583), share consumers of the share-partitions mapped to it cannot acknowledge
    or be given records. One share group spans many state partitions, so none is listed.

    Remediation: restore a leader first: check that the replicas' brokers are registered
    (`/brokers/ids`), run `kafka-leader-election --election-type preferred --topic
    __consumer_offsets --partition 17` (unclean only when no in-sync replica can come back),
    and when ZooKeeper and the brokers disagree (CTL002) restart the active controller to
    force a fresh election. Then restart the stalled consumers of the listed groups.

    Example: `__consumer_offsets-17` with leader -1 and ISR [3]; groups `bid-optimizer-12`
    and `budget-pacer-40` map to partition 17.

    References:
    - Kafka broker config offsets.topic.num.partitions <https://kafka.apache.org/39/documentation.html#brokerconfigs_offsets.topic.num.partitions>
    - Kafka broker config transaction.state.log.num.partitions <https://kafka.apache.org/39/documentation.html#brokerconfigs_transaction.state.log.num.partitions>
    - Kafka documentation: managing consumer groups <https://kafka.apache.org/39/documentation.html#basic_ops_consumer_group>
    - apache/kafka share-coordinator/src/main/java/org/apache/kafka/coordinator/share/ShareCoordinatorService.java (partitionFor) <https://github.com/apache/kafka/blob/trunk/share-coordinator/src/main/java/org/apache/kafka/coordinator/share/ShareCoordinatorService.java>
    - apache/kafka server/src/main/java/org/apache/kafka/server/config/ShareCoordinatorConfig.java (share.coordinator.state.topic.num.partitions) <https://github.com/apache/kafka/blob/trunk/server/src/main/java/org/apache/kafka/server/config/ShareCoordinatorConfig.java>
    - KIP-932: Queues for Kafka <https://cwiki.apache.org/confluence/display/KAFKA/KIP-932%3A+Queues+for+Kafka>
    """
    h = _health(tables).where(
        F.col("topic").isin(*COORDINATOR_TOPICS)
        & (F.col("leaderless") | (F.col("isr_size") < F.col("min_insync_replicas")))
    )
    groups = (
        tables.consumer_groups.where(
            F.col("group_id").isNotNull() & F.col("coordinator_partition").isNotNull()
        )
        .groupBy("cluster_id", F.col("coordinator_partition").alias("partition"))
        .agg(
            F.sort_array(F.collect_set("group_id")).alias("groups"),
            # groups with members now (state and member count as the coordinator last reported them)
            F.countDistinct(F.when(F.col("members") > 0, F.col("group_id"))).alias("active_groups"),
        )
        .withColumn("topic", F.lit("__consumer_offsets"))
    )
    d = join(h, groups, ["cluster_id", "topic", "partition"], "left")
    group_count = F.when(F.col("groups").isNotNull(), F.size("groups")).otherwise(F.lit(0))
    isr = int_list(F.col("isr"))
    state = (
        F.when(F.col("leader") < 0, text("no leader (leader ", F.col("leader"), ", ISR ", isr, ")"))
        .when(
            F.col("zk_leader") < 0,
            text(
                "no leader in ZooKeeper (the brokers still serve leader ", F.col("leader"), ", ISR ", isr, ")"
            ),
        )
        .when(
            F.col("leaderless"),
            text("leader ", F.col("leader"), " is not a registered broker (ISR ", isr, ")"),
        )
        .otherwise(text("ISR ", isr, " below ", _min_isr_text()))
    )
    who = (
        F.when(
            F.col("topic") == "__transaction_state",
            F.lit(": transactional ids mapped to it cannot begin, commit or abort transactions"),
        )
        .when(
            F.col("topic") == SHARE_STATE_TOPIC,
            F.lit(
                ": share groups whose share-partitions map to it (groupId:topicId:partition) cannot "
                "read or write their delivery state, so their consumers cannot acknowledge or get those records"
            ),
        )
        .when(
            group_count > 0,
            text(
                ": ",
                group_count.cast("string"),
                " consumer group(s) lost their coordinator (",
                F.coalesce(F.col("active_groups"), F.lit(0)).cast("string"),
                " with members): ",
                F.array_join(F.col("groups"), ", "),
            ),
        )
        .otherwise(
            F.lit(
                ": consumer groups mapped to it lose their coordinator (none of the collected groups maps here)"
            )
        )
    )
    msg = text(state, who)
    evidence = _isr_evidence(
        zookeeper_leader=F.col("zk_leader"),
        leaderless=F.col("leaderless"),
        consumer_groups=F.col("groups"),
        consumer_group_count=group_count,
        consumer_groups_with_members=F.coalesce(F.col("active_groups"), F.lit(0)),
    )
    return emit(d, "partition", partition_name(), msg, evidence)


@rule(
    "PAR003",
    "under-min-isr",
    "critical",
    needs=("partitions",),
    uses=(degraded_partitions,),
    runs_in=("preflight",),
    cause="symptom",
)
def under_min_isr(tables, params):
    """A partition's ISR is smaller than its effective min.insync.replicas: acks=all writes to it fail now.

    Why: the leader rejects every acks=all produce request with NOT_ENOUGH_REPLICAS while
    fewer than min.insync.replicas replicas are in sync. Producers retry and then fail,
    and on `__consumer_offsets` offset commits fail too. Since Kafka 3.7 (KAFKA-15583) the
    leader also stops advancing the high watermark while the ISR is below its effective
    min ISR: consumers receive no new records at all, whatever acks the producers used
    (acks=0/1 writes are appended but stay invisible). Before 3.7 those writes were
    delivered. This is the live state, not a risk: writes are failing while it lasts.

    The effective min ISR is the one the partition's leader applies: the topic override,
    else the leading broker's own broker-level value (where brokers disagree, the leader's,
    not the majority's; per-broker values are ignored once eligible leader replicas,
    KIP-966, are enabled), capped at the replica count when the leader runs 3.7 or newer.
    An older or unknown leader version keeps the raw value.

    Remediation: bring the out-of-sync replicas back: check the brokers missing from the
    ISR (down? offline log dir? replica fetcher lag, `kafka-replica-verification`). Do not
    lower min.insync.replicas to make writes pass unless you accept that an acknowledged
    write may then live on fewer disks.

    Example: `orders-3` with replicas [1, 2, 3], ISR [1] and min.insync.replicas=2.

    References:
    - Kafka topic config min.insync.replicas <https://kafka.apache.org/39/documentation.html#topicconfigs_min.insync.replicas>
    - Kafka documentation: monitoring (UnderMinIsrPartitionCount) <https://kafka.apache.org/39/documentation.html#monitoring>
    - KAFKA-15583, apache/kafka PR #14594 (3.7.0): core/src/main/scala/kafka/cluster/Partition.scala effectiveMinIsr and maybeIncrementLeaderHW <https://github.com/apache/kafka/pull/14594>
    - Kafka documentation: Eligible Leader Replicas (broker-level min.insync.replicas removed when enabled) <https://kafka.apache.org/41/operations/eligible-leader-replicas>
    """
    h = _health(tables).where(F.col("isr_size") < F.col("min_insync_replicas"))
    msg = text(
        "ISR ",
        int_list(F.col("isr")),
        " has ",
        F.col("isr_size"),
        " replica(s), below ",
        _min_isr_text(),
        ": acks=all producers fail with NOT_ENOUGH_REPLICAS",
        _consumers_below_min_isr(),
        "; replicas ",
        int_list(F.col("replicas")),
    )
    return emit(h, "partition", partition_name(), msg, _isr_evidence())


@rule(
    "PAR004",
    "at-min-isr",
    "warning",
    needs=("partitions",),
    uses=(degraded_partitions,),
    runs_in=("preflight",),
    cause="symptom",
)
def at_min_isr(tables, params):
    """A partition's ISR is exactly at its effective min.insync.replicas, below its replication factor: one more failure blocks writes.

    Why: a replica is already out of sync. The next broker restart or failure among the
    remaining in-sync replicas drops the ISR below min.insync.replicas and acks=all writes
    start failing; on a Kafka 3.7+ leader consumers stop too, because the high watermark
    does not advance below the effective min ISR (KAFKA-15583). A rolling restart (an MSK
    patch) in this state blocks producers. The effective min ISR is the leader's, capped
    at the replica count on 3.7+ (see PAR003).

    Remediation: find why the missing replicas left the ISR (broker down, disk failure,
    fetcher lag: `kafka-topics --describe --at-min-isr-partitions`) and restore them
    before any maintenance; postpone rolling restarts until the ISR is full again.

    Example: `orders-5` with replicas [2, 3, 1], ISR [2, 3] and min.insync.replicas=2.

    References:
    - Kafka topic config min.insync.replicas <https://kafka.apache.org/39/documentation.html#topicconfigs_min.insync.replicas>
    - Kafka documentation: monitoring (AtMinIsrPartitionCount) <https://kafka.apache.org/39/documentation.html#monitoring>
    - KAFKA-15583, apache/kafka PR #14594 (3.7.0): Partition.scala isAtMinIsr uses effectiveMinIsr <https://github.com/apache/kafka/pull/14594>
    """
    h = _health(tables).where(
        (F.col("isr_size") == F.col("min_insync_replicas"))
        & (F.col("min_insync_replicas") < F.col("replication_factor"))
    )
    msg = text(
        "ISR ",
        int_list(F.col("isr")),
        " of replicas ",
        int_list(F.col("replicas")),
        " is at ",
        _min_isr_text(),
        ": one more replica failure or restart blocks acks=all producers",
        F.when(
            F.col("strict_min_isr"),
            F.lit(" and stops consumers (Kafka 3.7+: the high watermark stops below min ISR)"),
        ).otherwise(F.lit("")),
    )
    return emit(h, "partition", partition_name(), msg, _isr_evidence())


@rule(
    "PAR005",
    "under-replicated",
    "warning",
    needs=("partitions",),
    uses=(degraded_partitions,),
    runs_in=("preflight",),
    cause="symptom",
)
def under_replicated(tables, params):
    """A partition has fewer in-sync replicas than replicas: it is under-replicated.

    Why: a replica that is not in the ISR does not hold the latest writes. Until it catches
    up the partition survives fewer failures than its replication factor promises, and a
    rolling restart can take it below min.insync.replicas or offline. Replicas being added
    by a reassignment are not counted, as in `kafka-topics --under-replicated-partitions`.

    Remediation: find the missing brokers (`kafka-topics --describe
    --under-replicated-partitions`): restart a stopped broker, replace a failed disk
    (offline log dir), or look at replica fetcher lag (num.replica.fetchers,
    replica.lag.time.max.ms) when the broker is up but cannot keep up.

    Example: `shipments.events-7` with replicas [4, 5, 6] and ISR [5, 6] after a disk of
    broker 4 failed.

    References:
    - Kafka documentation: replication <https://kafka.apache.org/39/documentation.html#replication>
    - Kafka documentation: monitoring (UnderReplicatedPartitions) <https://kafka.apache.org/39/documentation.html#monitoring>
    """
    h = _health(tables).where(F.col("isr_size") < F.col("replication_factor"))
    missing = F.array_except(F.col("replicas"), F.coalesce(F.col("isr"), F.col("replicas")))
    msg = text(
        "ISR ",
        int_list(F.col("isr")),
        " has ",
        F.col("isr_size"),
        " of ",
        F.col("replication_factor"),
        " replicas; replicas ",
        int_list(F.col("replicas")),
    )
    return emit(
        h,
        "partition",
        partition_name(),
        msg,
        _isr_evidence(out_of_sync=F.sort_array(missing), offline_replicas=F.col("offline_replicas")),
    )


@rule(
    "PAR006",
    "offline-replicas",
    "error",
    needs=("partitions",),
    uses=(broker_counts, degraded_partitions),
    cause="failure",
)
def offline_replicas(tables, params):
    """Metadata reports offline replicas for a partition: a log directory holding it failed, or its broker is down.

    Why: since KIP-112 a broker with several log dirs (JBOD) keeps running when one disk
    fails, and reports the replicas on that disk as offline. Those replicas are gone until
    the disk is replaced; clients that do not retry KAFKA_STORAGE_ERROR can keep failing
    (after one disk of a JBOD broker failed, producers on sarama older than 1.43.3 failed
    their writes for hours), and the partition runs with less redundancy. A replica whose broker is not
    registered is offline too (the broker is down); the message says which case it is.

    Remediation: find the failed log dir (`kafka-log-dirs --describe`, the broker's log
    for "Stopping serving logs in dir"), replace the disk or remove it from log.dirs, and
    restart the broker so the replicas are rebuilt; or move the replicas to healthy
    disks or brokers with `kafka-reassign-partitions`.

    Example: `tracking.positions-12` with replicas [4, 5, 6] and offline replicas [4].

    References:
    - KIP-112: Handle disk failure for JBOD <https://cwiki.apache.org/confluence/display/KAFKA/KIP-112%3A+Handle+disk+failure+for+JBOD>
    - Kafka documentation: monitoring (OfflineLogDirectoryCount) <https://kafka.apache.org/39/documentation.html#monitoring>
    """
    h = _health(tables).where(F.col("offline_replicas").isNotNull() & (F.size("offline_replicas") > 0))
    # Why they are offline: on a registered broker a failed log dir, else the broker is down
    # (unknown when the brokers were not collected).
    h = join(h, cluster_brokers(tables).select("cluster_id", "broker_ids"), "cluster_id", "left")
    down = F.array_except(
        F.col("offline_replicas"), F.coalesce(F.col("broker_ids"), F.col("offline_replicas"))
    )
    cause = (
        F.when(F.col("broker_ids").isNull(), F.lit(""))
        .when(F.size(down) == 0, F.lit(" (failed log dir on a live broker)"))
        .when(
            F.size(down) == F.size(F.array_distinct(F.col("offline_replicas"))),
            F.lit(" (their broker is not registered: down)"),
        )
        .otherwise(text(" (broker(s) ", int_list(F.sort_array(down)), " down, the rest on failed log dirs)"))
    )
    msg = text(
        "replica(s) ",
        int_list(F.sort_array(F.col("offline_replicas"))),
        " offline",
        cause,
        "; replicas ",
        int_list(F.col("replicas")),
        ", ISR ",
        int_list(F.col("isr")),
    )
    return emit(
        h,
        "partition",
        partition_name(),
        msg,
        _isr_evidence(
            offline_replicas=F.col("offline_replicas"),
            brokers_down=F.when(F.col("broker_ids").isNotNull(), F.sort_array(down)),
        ),
    )


@rule(
    "PAR007",
    "preferred-leader-imbalance",
    "info",
    needs=("partitions",),
    params=(
        Param(
            "max_imbalance_percent",
            10,
            "largest share (percent) of a broker's preferred partitions it may not lead; "
            "Kafka's leader.imbalance.per.broker.percentage default",
        ),
    ),
    uses=(cluster_settings, replica_lists),
    cause="failure",
)
def preferred_leader_imbalance(tables, params):
    """A broker does not lead more than 10% (a parameter) of the partitions it is the preferred leader of.

    Why: the first replica of each partition is its preferred leader, and assignments
    spread preferred leaders evenly over brokers. After restarts or failures leadership
    moves to other replicas; the brokers that took over carry more produce and fetch load
    while the preferred one idles. Kafka's controller measures it the same way (per
    preferred broker: partitions it should lead but does not) and moves leadership back
    when the share exceeds leader.imbalance.per.broker.percentage (default 10) and
    auto.leader.rebalance.enable is true. The threshold is the rule parameter
    `max_imbalance_percent` (default 10); more than that fires, exactly 10% does not.

    Remediation: if the broker is up and in the ISR, run a preferred leader election:
    `kafka-leader-election --bootstrap-server B --election-type preferred
    --all-topic-partitions`, and keep auto.leader.rebalance.enable=true. If the broker is
    down (not registered), bring it back first. Persistent imbalance with a live broker
    means its replicas do not stay in sync.

    Example: broker 5 is the preferred leader of 23 partitions and leads none of them
    after a restart.

    References:
    - Kafka documentation: balancing leadership <https://kafka.apache.org/39/documentation.html#basic_ops_leader_balancing>
    - Kafka broker config leader.imbalance.per.broker.percentage <https://kafka.apache.org/39/documentation.html#brokerconfigs_leader.imbalance.per.broker.percentage>
    """
    # Counted per distinct replica list (replica_lists), then per preferred leader.
    lists = tables.derived(replica_lists).where(F.col("replicas").isNotNull() & (F.size("replicas") > 0))
    per_broker = (
        lists.select(
            "cluster_id", F.element_at(F.col("replicas"), 1).alias("broker_id"), "partitions", "not_led"
        )
        .groupBy("cluster_id", "broker_id")
        .agg(F.sum("partitions").alias("preferred_partitions"), F.sum("not_led").alias("not_led"))
    )
    live = registered_as(tables, "broker_id", "registered")
    rebalance = (
        tables.derived(cluster_settings)
        .where(F.col("key") == "auto.leader.rebalance.enable")
        .select("cluster_id", F.col("value").alias("auto_rebalance"))
    )
    threshold = params["max_imbalance_percent"]
    d = join(
        join(
            per_broker.where(
                F.col("not_led") * F.lit(100) > F.col("preferred_partitions") * F.lit(threshold)
            ),
            live,
            ["cluster_id", "broker_id"],
            "left",
        ),
        rebalance,
        "cluster_id",
        "left",
    )
    percent = F.round(
        F.col("not_led").cast("double")
        * F.lit(100).cast("double")
        / F.col("preferred_partitions").cast("double"),
        1,
    )
    msg = text(
        "broker ",
        F.col("broker_id"),
        " is the preferred leader of ",
        F.col("preferred_partitions"),
        " partition(s) but does not lead ",
        F.col("not_led"),
        " of them (",
        percent,
        "% > ",
        str(threshold),
        "%)",
        F.when(F.col("registered").isNull(), F.lit("; the broker is not registered (down)")).otherwise(
            F.lit("")
        ),
        F.when(
            F.lower(F.col("auto_rebalance")) == "false", F.lit("; auto.leader.rebalance.enable=false")
        ).otherwise(F.lit("")),
    )
    evidence = ev(
        preferred_partitions=F.col("preferred_partitions"),
        not_led_by_preferred=F.col("not_led"),
        imbalance_percent=percent,
        threshold_percent=F.lit(threshold),
        broker_registered=F.col("registered").isNotNull(),
        auto_leader_rebalance_enable=F.col("auto_rebalance"),
    )
    return emit(d, "broker", F.col("broker_id").cast("string"), msg, evidence)
