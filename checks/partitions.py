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
    leader_rebalance_nodes,
    metric_per_node,
    min_isr_text,
    partition_name,
    registered_as,
    replica_lists,
)

CATEGORY = Category("PAR", "partitions", "live partition state", tuple(range(1, 12)))


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
    run a preferred or (accepting data loss) unclean election with `kafka-leader-election`.
    When the controller's view diverges from ZooKeeper (CTL002), a controller failover makes a
    new controller load ZooKeeper's state: do it only once ZooKeeper holds the live state, since
    a partition whose ZooKeeper ISR has no registered broker stays offline after it
    (PartitionStateMachine offlinePartitionLeaderElection, unclean election off); CTL002 and
    CTL003 say, per partition, what a failover would do and the order of steps.

    Example: `__consumer_offsets-17` with leader -1, ISR [3], replicas [3, 1, 4].

    References:
    - Kafka documentation: monitoring (OfflinePartitionsCount) <https://kafka.apache.org/39/documentation.html#monitoring>
    - Kafka documentation: unclean leader election <https://kafka.apache.org/39/documentation.html#design_uncleanleader>
    - Kafka 3.9 source: PartitionStateMachine.scala (initializePartitionState, offlinePartitionLeaderElection) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/controller/PartitionStateMachine.scala>
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
    and when ZooKeeper and the brokers disagree (CTL002) follow CTL002's order of steps: a
    controller failover forces a fresh election from ZooKeeper's state, which takes the
    partition offline when ZooKeeper's ISR holds no registered broker. Then restart the stalled
    consumers of the listed groups.

    Example: `__consumer_offsets-17` with leader -1 and ISR [3]; groups `bid-optimizer-12`
    and `budget-pacer-40` map to partition 17.

    References:
    - Kafka broker config offsets.topic.num.partitions <https://kafka.apache.org/39/documentation.html#brokerconfigs_offsets.topic.num.partitions>
    - Kafka broker config transaction.state.log.num.partitions <https://kafka.apache.org/39/documentation.html#brokerconfigs_transaction.state.log.num.partitions>
    - Kafka documentation: managing consumer groups <https://kafka.apache.org/39/documentation.html#basic_ops_consumer_group>
    - apache/kafka share-coordinator/src/main/java/org/apache/kafka/coordinator/share/ShareCoordinatorService.java (partitionFor) <https://github.com/apache/kafka/blob/trunk/share-coordinator/src/main/java/org/apache/kafka/coordinator/share/ShareCoordinatorService.java>
    - apache/kafka server/src/main/java/org/apache/kafka/server/config/ShareCoordinatorConfig.java (share.coordinator.state.topic.num.partitions) <https://github.com/apache/kafka/blob/trunk/server/src/main/java/org/apache/kafka/server/config/ShareCoordinatorConfig.java>
    - KIP-932: Queues for Kafka <https://cwiki.apache.org/confluence/display/KAFKA/KIP-932%3A+Queues+for+Kafka>
    - Kafka 3.9 source: PartitionStateMachine.scala (initializePartitionState, offlinePartitionLeaderElection) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/controller/PartitionStateMachine.scala>
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
    while the preferred one idles. What brings leadership back depends on the metadata
    mode. The ZooKeeper-mode controller measures it the way this rule does (per preferred
    broker: partitions it should lead but does not) and triggers a preferred leader
    election for that broker when the share exceeds leader.imbalance.per.broker.percentage
    (default 10) and auto.leader.rebalance.enable is true (KafkaController). The KRaft
    controller does not read that percentage: with auto.leader.rebalance.enable it
    schedules a preferred leader election whenever any partition is led by another
    replica than its preferred one, every leader.imbalance.check.interval.seconds
    (QuorumController, ReplicationControlManager.arePartitionLeadersImbalanced). So on
    KRaft an imbalance that persists means the preferred replica cannot be elected (down,
    fenced or out of the ISR) or auto.leader.rebalance.enable is false. The threshold is
    the rule parameter `max_imbalance_percent` (default 10, ZooKeeper mode's trigger);
    more than that fires, exactly 10% does not; the message says what the cluster's mode
    does about it.

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
    - Kafka 3.9 source: KafkaController.scala (ZooKeeper mode: the per-broker imbalance ratio against the percentage) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/controller/KafkaController.scala>
    - Kafka 3.9 source: QuorumController.java (KRaft: rebalance while any partition is imbalanced) <https://github.com/apache/kafka/blob/3.9/metadata/src/main/java/org/apache/kafka/controller/QuorumController.java>
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
    modes = tables.clusters.select("cluster_id", F.lower(F.col("metadata_mode")).alias("metadata_mode"))
    d = join(
        join(
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
        ),
        modes,
        "cluster_id",
        "left",
    )
    rebalance_off = F.lower(F.col("auto_rebalance")) == "false"
    by_mode = (
        F.when(rebalance_off, F.lit(""))
        .when(
            F.col("metadata_mode") == "kraft",
            F.lit(
                "; the KRaft controller re-elects preferred leaders whenever any partition is off its "
                "preferred replica, so a lasting imbalance means the preferred replica cannot be elected"
            ),
        )
        .when(
            F.col("metadata_mode") == "zookeeper",
            F.lit(
                "; the ZooKeeper controller re-elects preferred leaders for a broker above "
                "leader.imbalance.per.broker.percentage"
            ),
        )
        .otherwise(F.lit(""))
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
        F.when(rebalance_off, F.lit("; auto.leader.rebalance.enable=false")).otherwise(F.lit("")),
        by_mode,
    )
    evidence = ev(
        preferred_partitions=F.col("preferred_partitions"),
        not_led_by_preferred=F.col("not_led"),
        imbalance_percent=percent,
        threshold_percent=F.lit(threshold),
        broker_registered=F.col("registered").isNotNull(),
        auto_leader_rebalance_enable=F.col("auto_rebalance"),
        metadata_mode=F.col("metadata_mode"),
    )
    return emit(d, "broker", F.col("broker_id").cast("string"), msg, evidence)


def _racked_brokers(tables):
    """Registered brokers with a rack: cluster_id, broker_id, rack (deduplicated by id)."""
    rack = F.when(F.trim(F.col("rack")) != "", F.trim(F.col("rack")))
    return (
        tables.brokers.where(F.col("broker_id").isNotNull())
        .groupBy("cluster_id", "broker_id")
        .agg(F.max(rack).alias("rack"))
        .where(F.col("rack").isNotNull())
    )


def _percent(part, whole):
    return F.round(part.cast("double") * F.lit(100.0) / whole.cast("double"), 1)


@rule(
    "PAR008",
    "leaders-concentrated-in-one-rack",
    "warning",
    needs=("partitions", "brokers"),
    params=(
        Param(
            "max_share_ratio",
            1.5,
            "how many times its brokers' share of the cluster's brokers a rack may lead of the "
            "partitions before it fires (3 equal racks: more than half of all leaders)",
        ),
        Param(
            "min_partitions",
            100,
            "partitions with a leader in a rack a cluster needs before it is judged (fewer spread unevenly by chance)",
        ),
    ),
    uses=(replica_lists, leader_rebalance_nodes),
)
def leaders_concentrated_in_one_rack(tables, params):
    """One rack (zone) leads far more partitions than its share of the brokers: an outage of that zone moves most leaders at once (a warning when the assignment concentrates them or nothing moves them back; info for drift that automatic rebalancing heals).

    Why: every produce and every consumer fetch (without follower fetching) goes to a
    partition's leader. Kafka spreads leadership by spreading preferred leaders, the first
    replica of each partition: rack-aware assignment alternates racks in the broker list
    it assigns from (AdminUtils.getRackAlternatedBrokerList; KRaft's StripedReplicaPlacer
    starts each partition on the next rack), so each rack leads about its share. Leaders
    pile up in one rack when brokers of the other racks restart or fail and leadership is
    not moved back (auto.leader.rebalance.enable=false, CFG006; preferred replicas out of
    the ISR, PAR007), or when manual assignments put first replicas in one rack. An
    outage of that zone then makes most partitions leaderless at once: every one of them
    waits for an election (after the controller notices the brokers are gone), every
    client refreshes metadata at the same time, and the surviving racks take over most of
    the produce and fetch load in one step. The rule compares each rack's share of the
    leaders (partitions led by a registered broker with broker.rack) with its share of
    those brokers, in clusters with more than one rack: above `max_share_ratio` (default
    1.5) times it fires. 1.5 means more than half of all leaders in one of three equal
    zones (more than 75% in one of two): an outage there moves more leaders than the other
    zones hold together, far beyond the 10% per broker Kafka's own leader balancing
    tolerates (leader.imbalance.per.broker.percentage). Clusters with fewer than
    `min_partitions` (default 100) such partitions are not judged: with 100 partitions
    placed at random over 3 equal racks, the chance that one rack leads more than half of
    them is about 0.06%. The finding also gives the rack's share of preferred leaders,
    which tells the two causes apart, and that decides its severity: a warning when the
    preferred leaders themselves are concentrated (the assignment; no election fixes it) or
    when auto.leader.rebalance.enable is false on a node whose value acts (CFG006: every
    broker in ZooKeeper mode, the controllers on KRaft), since then nothing moves the
    leaders back; info when the leaders only drifted and automatic rebalancing is on
    (Kafka's default): right after a restart or a zone's roll the controller moves them back
    to their preferred replicas once those are in the ISR, at the next check
    (leader.imbalance.check.interval.seconds, default 300; PAR007 reports the same drift per
    broker at info).

    Remediation: when the rack's share of preferred leaders is near its broker share, the
    leaders only drifted: run a preferred leader election (`kafka-leader-election
    --bootstrap-server B --election-type preferred --all-topic-partitions`) and keep
    auto.leader.rebalance.enable=true. When the preferred leaders themselves are
    concentrated, the assignment is: reorder or reassign the replicas so first replicas
    alternate racks (`kafka-reassign-partitions --generate` with broker.rack on every
    broker, or Cruise Control's leader distribution goals), then run the election.

    Example: racks az-a, az-b and az-c with two brokers each; az-a's brokers lead 640 of
    the 900 partitions after brokers in az-b and az-c were restarted.

    References:
    - Kafka documentation: balancing leadership <https://kafka.apache.org/39/documentation.html#basic_ops_leader_balancing>
    - Kafka documentation: balancing replicas across racks <https://kafka.apache.org/39/documentation.html#basic_ops_racks>
    - KIP-36: Rack aware replica assignment <https://cwiki.apache.org/confluence/display/KAFKA/KIP-36+Rack+aware+replica+assignment>
    - apache/kafka server-common/src/main/java/org/apache/kafka/admin/AdminUtils.java, getRackAlternatedBrokerList <https://github.com/apache/kafka/blob/3.9/server-common/src/main/java/org/apache/kafka/admin/AdminUtils.java>
    - apache/kafka metadata/src/main/java/org/apache/kafka/metadata/placement/StripedReplicaPlacer.java <https://github.com/apache/kafka/blob/trunk/metadata/src/main/java/org/apache/kafka/metadata/placement/StripedReplicaPlacer.java>
    """
    racked = _racked_brokers(tables)
    per_rack = racked.groupBy("cluster_id", "rack").agg(F.count(F.lit(1)).alias("rack_brokers"))
    clusters = per_rack.groupBy("cluster_id").agg(
        F.count(F.lit(1)).alias("rack_count"), F.sum("rack_brokers").alias("racked_brokers")
    )
    by_broker = racked.select("cluster_id", F.col("broker_id").alias("leader"), "rack")
    led = join(
        tables.partitions.where(F.col("leader") >= 0)
        .groupBy("cluster_id", "leader")
        .agg(F.count(F.lit(1)).alias("partitions")),
        by_broker,
        ["cluster_id", "leader"],
    )
    led_by_rack = led.groupBy("cluster_id", "rack").agg(F.sum("partitions").alias("led"))
    lists = tables.derived(replica_lists).where(F.col("replicas").isNotNull() & (F.size("replicas") > 0))
    preferred = join(
        lists.select("cluster_id", F.element_at(F.col("replicas"), 1).alias("leader"), "partitions"),
        by_broker,
        ["cluster_id", "leader"],
    )
    preferred_by_rack = preferred.groupBy("cluster_id", "rack").agg(F.sum("partitions").alias("preferred"))
    totals = led_by_rack.groupBy("cluster_id").agg(F.sum("led").alias("total_led"))
    preferred_totals = preferred_by_rack.groupBy("cluster_id").agg(
        F.sum("preferred").alias("total_preferred")
    )
    d = join(
        join(
            join(
                join(join(per_rack, clusters, "cluster_id"), led_by_rack, ["cluster_id", "rack"]),
                totals,
                "cluster_id",
            ),
            preferred_by_rack,
            ["cluster_id", "rack"],
            "left",
        ),
        preferred_totals,
        "cluster_id",
        "left",
    )
    ratio = params["max_share_ratio"]
    # led / total_led > ratio * rack_brokers / racked_brokers, without dividing
    d = d.where(
        (F.col("rack_count") > 1)
        & (F.col("total_led") >= F.lit(params["min_partitions"]))
        & (
            F.col("led").cast("double") * F.col("racked_brokers").cast("double")
            > F.lit(float(ratio)) * F.col("rack_brokers").cast("double") * F.col("total_led").cast("double")
        )
    )
    preferred_count = F.coalesce(F.col("preferred"), F.lit(0))
    preferred_share = _percent(preferred_count, F.col("total_preferred"))
    broker_share = _percent(F.col("rack_brokers"), F.col("racked_brokers"))
    preferred_concentrated = preferred_count.cast("double") * F.col("racked_brokers").cast("double") > F.lit(
        float(ratio)
    ) * F.col("rack_brokers").cast("double") * F.coalesce(F.col("total_preferred"), F.lit(0)).cast("double")
    # Nodes whose auto.leader.rebalance.enable acts and have it false: drift does not heal.
    off = (
        tables.derived(leader_rebalance_nodes)
        .where(F.lower(F.col("value")) == "false")
        .groupBy("cluster_id")
        .agg(F.sort_array(F.collect_set("node_id")).alias("rebalance_off_nodes"))
    )
    d = join(d, off, "cluster_id", "left")
    rebalance_off = F.col("rebalance_off_nodes").isNotNull()
    msg = text(
        "rack ",
        F.col("rack"),
        " leads ",
        F.col("led"),
        " of ",
        F.col("total_led"),
        " partitions (",
        _percent(F.col("led"), F.col("total_led")),
        "%) with ",
        F.col("rack_brokers"),
        " of ",
        F.col("racked_brokers"),
        " brokers (",
        broker_share,
        "%, more than ",
        str(ratio),
        "x its share): an outage of that zone moves ",
        _percent(F.col("led"), F.col("total_led")),
        "% of all leaders at once; its brokers are the preferred leaders of ",
        preferred_share,
        "% of the partitions",
        F.when(
            preferred_concentrated,
            F.lit(" (the assignment concentrates them: reassign first replicas across racks)"),
        )
        .when(
            rebalance_off,
            text(
                " (leaders drifted there and auto.leader.rebalance.enable=false on node(s) ",
                int_list(F.col("rebalance_off_nodes")),
                " keeps them there: run a preferred leader election)",
            ),
        )
        .otherwise(
            F.lit(
                " (leaders drifted there, after restarts or a failover; with auto.leader.rebalance.enable on, the "
                "controller moves them back to their preferred replicas once those are in the ISR, within "
                "leader.imbalance.check.interval.seconds)"
            )
        ),
    )
    evidence = ev(
        leaders=F.col("led"),
        partitions_with_leader=F.col("total_led"),
        leader_share_percent=_percent(F.col("led"), F.col("total_led")),
        rack_brokers=F.col("rack_brokers"),
        brokers_with_rack=F.col("racked_brokers"),
        broker_share_percent=broker_share,
        preferred_leaders=preferred_count,
        preferred_share_percent=preferred_share,
        racks=F.col("rack_count"),
        max_share_ratio=F.lit(float(ratio)),
        assignment_concentrated=preferred_concentrated,
        auto_rebalance_off_on=F.col("rebalance_off_nodes"),
    )
    severity = F.when(preferred_concentrated | rebalance_off, F.lit("warning")).otherwise(F.lit("info"))
    return emit(d, "rack", F.col("rack"), msg, evidence, severity)


# -- PAR009..PAR011: broker metrics against the metadata ----------------------------


def _agreement(metric, metadata, what: str, why: str):
    """How the metric compares with the collected metadata: agrees, or shows another count and why
    the two can differ (``why``: they are read at different moments and places)."""
    return (
        F.when(metadata == metric, F.lit("; the collected metadata agrees"))
        .when(metadata == 0, F.lit(f"; the collected metadata shows none {what}: {why}"))
        .otherwise(text("; the collected metadata shows ", metadata, f" {what}: {why}"))
    )


@rule(
    "PAR009",
    "under-min-isr-reported",
    "error",
    needs=("metrics",),
    uses=(degraded_partitions,),
    runs_in=("preflight",),
)
def under_min_isr_reported(tables, params):
    """A broker reports UnderMinIsrPartitionCount above 0: partitions it leads are below their min.insync.replicas now, by its own count.

    Why: kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount is the number of
    partitions this broker leads whose ISR is smaller than their effective min.insync.replicas
    (ReplicaManager: leaderPartitionsIterator.count(_.isUnderMinIsr); Partition.isUnderMinIsr
    compares the ISR size with the leader's effective min ISR, capped at the replica count
    since 3.7). acks=all produce requests to those partitions fail with NOT_ENOUGH_REPLICAS,
    and since Kafka 3.7 their high watermark stops, so consumers get nothing new either (PAR003
    says the same from the metadata). The message compares the count with the partitions the
    collected metadata shows below min ISR with this broker as leader. They can disagree: the
    gauge is the leader's count at scrape time, the metadata what the controller had committed
    when it was described (an ISR that shrank or recovered in between, an ISR shrink the
    leader has proposed that the controller has not committed yet), and the leader judges with
    its own min.insync.replicas, which the snapshot may not hold. Filled from JMX exporter
    scrapes and from MSK's CloudWatch metric of the same name.

    Remediation: find the out-of-sync replicas of the partitions the broker leads
    (`kafka-topics --describe --under-min-isr-partitions`): brokers down, failed log dirs,
    fetchers falling behind (PAR005, DSK001); when the metadata shows none, collect again:
    a count that persists while the metadata shows full ISRs means the broker's view is
    stale (its metadata or ZooKeeper session).

    Example: broker 2 reports UnderMinIsrPartitionCount 3 while the metadata shows 3 partitions
    led by broker 2 with ISR [2] and min.insync.replicas=2.

    References:
    - apache/kafka core/src/main/scala/kafka/server/ReplicaManager.scala (UnderMinIsrPartitionCount) and core/src/main/scala/kafka/cluster/Partition.scala (isUnderMinIsr, effectiveMinIsr) <https://github.com/apache/kafka/blob/trunk/core/src/main/scala/kafka/server/ReplicaManager.scala>
    - Kafka documentation: monitoring (UnderMinIsrPartitionCount) <https://kafka.apache.org/39/documentation.html#monitoring>
    - Amazon MSK: metrics with the DEFAULT level (UnderMinIsrPartitionCount) <https://docs.aws.amazon.com/msk/latest/developerguide/metrics-details.html>
    """
    reported = metric_per_node(tables, "under_min_isr_partition_count", "reported").where(
        F.col("broker_id").isNotNull() & (F.col("reported") > 0)
    )
    shown = (
        _health(tables)
        .where((F.col("isr_size") < F.col("min_insync_replicas")) & (F.col("leader") >= 0))
        .groupBy("cluster_id", F.col("leader").alias("broker_id"))
        .agg(F.count(F.lit(1)).alias("in_metadata"))
    )
    d = join(reported, shown, ["cluster_id", "broker_id"], "left").select(
        "cluster_id",
        "broker_id",
        F.col("reported").cast("bigint").alias("reported"),
        F.coalesce(F.col("in_metadata"), F.lit(0)).cast("bigint").alias("in_metadata"),
    )
    msg = text(
        "broker ",
        F.col("broker_id"),
        " reports UnderMinIsrPartitionCount ",
        F.col("reported"),
        ": that many partitions it leads are below their min.insync.replicas, acks=all producers to them "
        "fail with NOT_ENOUGH_REPLICAS (and on Kafka 3.7+ consumers receive nothing new)",
        _agreement(
            F.col("reported"),
            F.col("in_metadata"),
            "led by it below min ISR",
            "the gauge is the leader's count when scraped, the metadata what the controller had committed "
            "when the partitions were described, so one of them is newer (an ISR that shrank or recovered in "
            "between, or a shrink the controller has not committed yet), or the leader applies a "
            "min.insync.replicas the snapshot does not hold; collect both again",
        ),
    )
    evidence = ev(reported=F.col("reported"), in_metadata=F.col("in_metadata"))
    return emit(d, "broker", F.col("broker_id").cast("string"), msg, evidence)


@rule(
    "PAR010",
    "offline-partitions-reported",
    "critical",
    needs=("metrics",),
    uses=(degraded_partitions,),
    runs_in=("preflight",),
)
def offline_partitions_reported(tables, params):
    """The controller reports OfflinePartitionsCount above 0: partitions without a live leader, which nobody can produce to or consume from.

    Why: kafka.controller:type=KafkaController,name=OfflinePartitionsCount counts the
    partitions that have no leader. In ZooKeeper mode only the active controller counts them
    (KafkaController.scala: every other broker reports 0); on KRaft every controller reports
    the count of its own metadata image (ControllerMetadataMetricsPublisher: partitions
    without a leader), and broker-only nodes do not register it. So the cluster's value is the
    highest any node reports, never a sum. Producers and consumers of those partitions fail
    until a replica is elected (PAR001 says the same from the metadata), and a
    `__consumer_offsets` partition among them stops its consumer groups (PAR002). The message
    compares the count with the leaderless partitions of the collected metadata; they can
    disagree because they are read at different moments (a leader elected or lost in
    between), and the ZooKeeper controller counts a partition whose leader broker is not live
    before the metadata shows leader -1. Filled from JMX exporter scrapes of the controller(s)
    and from MSK's CloudWatch metric (cluster-wide).

    Remediation: find the partitions (`kafka-topics --describe --unavailable-partitions`) and
    bring back a replica of each: the brokers of their replicas, failed log dirs; an unclean
    election (`kafka-leader-election --election-type UNCLEAN`) only when losing the writes
    the missing replicas had is accepted.

    Example: the controller of payments-msk reports OfflinePartitionsCount 2 while the
    metadata shows `ledger-4` and `ledger-7` at leader -1.

    References:
    - apache/kafka core/src/main/scala/kafka/controller/KafkaController.scala (OfflinePartitionsCount, ActiveControllerCount) <https://github.com/apache/kafka/blob/trunk/core/src/main/scala/kafka/controller/KafkaController.scala>
    - apache/kafka metadata/src/main/java/org/apache/kafka/controller/metrics/ControllerMetadataMetricsPublisher.java (KRaft: OfflinePartitionsCount from the metadata image) <https://github.com/apache/kafka/blob/trunk/metadata/src/main/java/org/apache/kafka/controller/metrics/ControllerMetadataMetricsPublisher.java>
    - apache/kafka core/src/main/scala/kafka/server/SharedServer.scala (ControllerMetadataMetrics created only when process.roles holds controller) <https://github.com/apache/kafka/blob/trunk/core/src/main/scala/kafka/server/SharedServer.scala>
    - Kafka documentation: monitoring (OfflinePartitionsCount) <https://kafka.apache.org/39/documentation.html#monitoring>
    - Amazon MSK: metrics with the DEFAULT level (OfflinePartitionsCount) <https://docs.aws.amazon.com/msk/latest/developerguide/metrics-details.html>
    """
    reported = (
        metric_per_node(tables, "offline_partitions_count", "reported")
        .groupBy("cluster_id")
        .agg(
            F.max("reported").alias("reported"),
            F.sort_array(F.collect_set(F.when(F.col("reported") > 0, F.col("broker_id")))).alias("nodes"),
        )
        .where(F.col("reported") > 0)
    )
    shown = (
        _health(tables)
        .where(F.col("leaderless"))
        .groupBy("cluster_id")
        .agg(F.count(F.lit(1)).alias("in_metadata"))
    )
    names = tables.clusters.select("cluster_id", F.col("cluster_name").alias("cluster"))
    d = join(join(reported, shown, "cluster_id", "left"), names, "cluster_id", "left").select(
        "cluster_id",
        "cluster",
        F.col("reported").cast("bigint").alias("reported"),
        F.coalesce(F.col("in_metadata"), F.lit(0)).cast("bigint").alias("in_metadata"),
        F.filter(F.col("nodes"), lambda x: x.isNotNull()).alias("nodes"),
    )
    msg = text(
        "the controller reports OfflinePartitionsCount ",
        F.col("reported"),
        F.when(
            F.size("nodes") > 0,
            text(" (node(s) ", F.array_join(F.col("nodes").cast("array<string>"), ", "), ")"),
        ).otherwise(F.lit(" (CloudWatch, cluster-wide)")),
        ": that many partitions have no leader, producers and consumers of them fail",
        _agreement(
            F.col("reported"),
            F.col("in_metadata"),
            "leaderless",
            "the gauge is the controller's count when scraped, the metadata what the brokers served when the "
            "partitions were described, so one of them is newer (a leader lost or elected in between; the "
            "ZooKeeper controller counts a partition whose leader's broker is gone before the metadata shows "
            "leader -1); collect both again",
        ),
    )
    evidence = ev(
        reported=F.col("reported"), in_metadata=F.col("in_metadata"), reporting_nodes=F.col("nodes")
    )
    return emit(d, "cluster", F.coalesce(F.col("cluster"), F.col("cluster_id")), msg, evidence)


@rule(
    "PAR011",
    "isr-churn",
    "warning",
    needs=("metrics",),
    params=(
        Param(
            "max_rate",
            0.05,
            "ISR shrinks or expands per second (the meters' one-minute rate) above which a broker's ISRs "
            "churn; 0.05/s is about three changes in the last minute (Kafka: the expected value is 0 "
            "outside a broker restart)",
        ),
    ),
    uses=(degraded_partitions,),
    runs_in=("preflight",),
)
def isr_churn(tables, params):
    """A broker's ISRs shrink, alone or with expands (flapping): followers are dropping out of sync (expands alone, a recovery, are info).

    Why: kafka.server:type=ReplicaManager,name=IsrShrinksPerSec and IsrExpandsPerSec count the
    ISR changes of the partitions this broker leads (ReplicaManager.scala). The Kafka
    documentation: "If a broker goes down, ISR for some of the partitions will shrink. When
    that broker is up again, ISR will be expanded once the replicas are fully caught up. Other
    than that, the expected value for both ISR shrink rate and expansion rate is 0." Both above
    0 without a restart is flapping: followers that miss replica.lag.time.max.ms (slow disks,
    GC pauses, saturated network or request threads, too few num.replica.fetchers), each
    shrink momentarily lowering the ISR toward min.insync.replicas (acks=all writes fail at
    the bottom) and making a rolling restart now a gamble. Shrinks alone: followers are
    leaving (a broker down or stuck). Both are warnings, so the rule warns only when the
    shrink rate is above the threshold. Expands alone are a recovery: the followers of a
    broker that restarted (between two restarts of a roll, say) are catching up and
    rejoining, which is how a healthy cluster returns to full ISRs; that is info, a note
    not to restart the next broker until they are back (preflight's MNT rules judge the
    ISRs themselves). The rate is the
    meters' one-minute rate (else five, else fifteen): jmx_exporter configurations that export
    only the meter's Count (kafka-2_0_0.yml, Strimzi) give no rate in one scrape, and this rule
    cannot judge them. The threshold is the parameter `max_rate` (per second, a heuristic). The
    message says how many partitions the broker leads are under-replicated in the metadata now.

    Remediation: find the followers that drop out: `kafka-topics --describe
    --under-replicated-partitions` repeatedly, the followers' ConsumerLag and fetch request
    latency; fix the load (THR001/THR002), the disks, GC; raise num.replica.fetchers; do not
    roll the cluster until the ISRs are stable.

    Example: broker 3 with IsrShrinksPerSec 0.4/s and IsrExpandsPerSec 0.35/s.

    References:
    - Kafka documentation: monitoring (IsrShrinksPerSec, IsrExpandsPerSec: expected 0) <https://kafka.apache.org/39/documentation.html#monitoring>
    - apache/kafka core/src/main/scala/kafka/server/ReplicaManager.scala (isrShrinkRate, isrExpandRate) <https://github.com/apache/kafka/blob/trunk/core/src/main/scala/kafka/server/ReplicaManager.scala>
    - Kafka broker config replica.lag.time.max.ms <https://kafka.apache.org/39/documentation.html#brokerconfigs_replica.lag.time.max.ms>
    """
    limit = params["max_rate"]
    rates = join(
        metric_per_node(tables, "isr_shrink_rate", "shrinks"),
        metric_per_node(tables, "isr_expand_rate", "expands"),
        ["cluster_id", "broker_id"],
        "full",
    ).where(
        F.col("broker_id").isNotNull()
        & (
            F.coalesce(F.col("shrinks") > limit, F.lit(False))
            | F.coalesce(F.col("expands") > limit, F.lit(False))
        )
    )
    urp = (
        _health(tables)
        .where((F.col("isr_size") < F.col("replication_factor")) & (F.col("leader") >= 0))
        .groupBy("cluster_id", F.col("leader").alias("broker_id"))
        .agg(F.count(F.lit(1)).alias("under_replicated"))
    )
    d = join(rates, urp, ["cluster_id", "broker_id"], "left").select(
        "cluster_id",
        "broker_id",
        "shrinks",
        "expands",
        F.coalesce(F.col("under_replicated"), F.lit(0)).cast("bigint").alias("under_replicated"),
    )
    high_shrinks = F.coalesce(F.col("shrinks") > limit, F.lit(False))
    high_expands = F.coalesce(F.col("expands") > limit, F.lit(False))
    what = (
        F.when(
            high_shrinks & high_expands,
            F.lit("followers keep dropping out of the ISR and rejoining it (flapping)"),
        )
        .when(high_shrinks, F.lit("followers are dropping out of the ISR (a follower down, slow or stuck)"))
        .otherwise(
            F.lit(
                "followers are rejoining the ISR while shrinks stay at or below the threshold: a recovery (e.g. "
                "after a restart); let them catch up before restarting another broker"
            )
        )
    )
    msg = text(
        "broker ",
        F.col("broker_id"),
        " reports IsrShrinksPerSec ",
        F.round(F.coalesce(F.col("shrinks"), F.lit(0.0)), 3),
        "/s and IsrExpandsPerSec ",
        F.round(F.coalesce(F.col("expands"), F.lit(0.0)), 3),
        f"/s (above {limit:g}/s): ",
        what,
        "; the collected metadata shows ",
        F.col("under_replicated"),
        " partition(s) it leads under-replicated",
    )
    evidence = ev(
        isr_shrinks_per_sec=F.col("shrinks"),
        isr_expands_per_sec=F.col("expands"),
        under_replicated_in_metadata=F.col("under_replicated"),
        max_rate=F.lit(limit),
    )
    # Followers leaving (with or without rejoining) are a warning; only rejoining is a recovery.
    severity = F.when(high_shrinks, F.lit("warning")).otherwise(F.lit("info"))
    return emit(d, "broker", F.col("broker_id").cast("string"), msg, evidence, severity)
