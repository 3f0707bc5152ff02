"""MNT: pre-maintenance, a rolling-restart simulation per broker (run by `kafka-audit preflight`).

For every registered broker B the rules take B down and look at the CURRENT in-sync
replica sets (not only the assignment): a partition is hit when B is in its ISR and the
ISR without B is smaller than the topic's effective min.insync.replicas (acks=all writes
then fail with NOT_ENOUGH_REPLICAS), or empty (nobody can lead: the partition goes
offline). A partition that is ALREADY failing (ISR below min.insync.replicas, empty ISR,
leader -1) blocks the restart of every registered broker holding a replica of it, in the
ISR or not: each of them is one of the partition's ways back (an out-of-sync replica that
catches up restores min ISR; restarting it resets that), and Strimzi's KafkaAvailability
refuses those rolls too. A partition AT min ISR (ISR == min.insync.replicas) blocks only
its ISR members: restarting an out-of-sync replica of it changes nothing for writers.

This is the roll-safety test of Strimzi's KafkaRoller (KafkaAvailability: ISR size minus
the restarted broker, when it is in the ISR, below min.insync.replicas), with one
deliberate difference: Strimzi skips topics whose replica count is <= min.insync.replicas
("cannot roll without blocking anyway") and rolls them. We do not skip them: they block
acks=all producers during every restart: an MSK monthly patch on topics with
min.insync.replicas equal to the replication factor blocked every such producer as each broker restarted. Findings are one per broker, with the partitions, topics and
consumer groups it would hit as evidence (sorted lists, capped; counts uncapped).

The scope is "maintenance": `kafka-audit check` does not run these rules, `preflight` does.
"""

from auditor.declarations import Category, Param, rule
from checks._api import F, Window, emit, ev, join, text
from checks.transforms import (
    SHARE_STATE_TOPIC,
    UNCLEAN_IN_KRAFT_SINCE,
    cluster_versions,
    first_members,
    int_list,
    listing,
    partition_name,
    ranked,
    registered_as,
    topic_settings,
    try_int,
    try_long,
    with_effective_min_isr,
)

BROKER_KEYS = ["cluster_id", "broker_id"]  # a broker's members are ranked among its own rows

CATEGORY = Category("MNT", "maintenance", "pre-maintenance", tuple(range(1, 7)))

COORDINATOR_TOPICS = ("__consumer_offsets", "__transaction_state")
_MAX_LISTED = Param(
    "max_listed",
    20,
    "how many partitions, topics or groups the message and evidence list "
    "(sorted; the counts are never capped)",
)


def restart_impact(tables):
    """One row per (registered broker B, partition B hosts or is in the ISR of) that restarting
    B hits: cluster_id, broker_id, topic, partition, name, replicas, isr, leader,
    min_insync_replicas, replication_factor, in_isr, remaining_isr (ISR size without B),
    already_failing (the partition is already below min.insync.replicas or has no leader),
    offline (B is its last in-sync replica: the restart takes it offline), strimzi_skips
    (replicas <= min.insync.replicas: Strimzi's roller lets these through), and from
    with_effective_min_isr: configured_min_isr, strict_min_isr (the leader runs 3.7+: the
    high watermark stops below min ISR, consumers stall), min_isr_capped; unclean (the
    controller elects an out-of-sync replica when the last in-sync one goes:
    unclean.leader.election.enable in ZooKeeper mode, or on KRaft from 3.9).

    min_insync_replicas is the effective value the partition's leader applies (its own
    defaults; capped at the replica count on 3.7+, KAFKA-15583).

    A partition is hit when B is in its ISR and the ISR without B is below min.insync.replicas
    or empty, or when the partition is already failing (ISR below min.insync.replicas, empty
    ISR, leader -1): then every registered replica holder is hit, in sync or not."""
    settings = tables.derived(topic_settings).select(
        "cluster_id",
        "topic",
        "min_insync_replicas",
        "min_insync_replicas_source",
        F.coalesce(F.col("unclean_leader_election_enable"), F.lit(False)).alias("unclean"),
    )
    versions = tables.derived(cluster_versions).select(
        "cluster_id", "mode", F.col("low_v").alias("cluster_low_v")
    )
    # The leader's min ISR (with_effective_min_isr); the unclean election the controller runs
    # when the last in-sync replica goes: ZooKeeper mode, or KRaft from 3.9 (KAFKA-12670).
    base = with_effective_min_isr(
        tables,
        join(
            tables.partitions.select("cluster_id", "topic", "partition", "leader", "replicas", "isr"),
            settings,
            ["cluster_id", "topic"],
            "left",
        ),
    )
    base = join(base, versions, "cluster_id", "left").select(
        "cluster_id",
        "topic",
        "partition",
        "leader",
        "replicas",
        "isr",
        "min_insync_replicas",
        "configured_min_isr",
        "strict_min_isr",
        "min_isr_capped",
        (
            F.coalesce(F.col("unclean"), F.lit(False))
            & F.coalesce(F.size("replicas") > 1, F.lit(False))  # an out-of-sync replica to elect
            & (
                (F.coalesce(F.col("mode"), F.lit("zookeeper")) != "kraft")
                | F.coalesce(F.col("cluster_low_v") >= F.lit(UNCLEAN_IN_KRAFT_SINCE), F.lit(False))
            )
        ).alias("unclean"),
    )
    holders = (
        base.select("cluster_id", "topic", "partition", F.explode(F.col("replicas")).alias("broker_id"))
        .unionByName(
            base.select("cluster_id", "topic", "partition", F.explode(F.col("isr")).alias("broker_id"))
        )
        .distinct()
    )
    parts = join(holders, base, ["cluster_id", "topic", "partition"])
    live = registered_as(tables, "broker_id", "registered")
    d = join(parts, live, ["cluster_id", "broker_id"])
    isr_size = F.when(F.col("isr").isNull(), F.lit(0)).otherwise(F.size(F.array_distinct(F.col("isr"))))
    in_isr = F.coalesce(F.array_contains(F.col("isr"), F.col("broker_id")), F.lit(False))
    d = d.select(
        "cluster_id",
        "broker_id",
        "topic",
        "partition",
        "leader",
        "replicas",
        "isr",
        "min_insync_replicas",
        "configured_min_isr",
        "strict_min_isr",
        "min_isr_capped",
        "unclean",
        in_isr.alias("in_isr"),
        isr_size.alias("isr_size"),
        F.when(F.col("replicas").isNotNull(), F.size("replicas")).alias("replication_factor"),
    )
    d = d.select(
        "*",
        (F.col("isr_size") - F.when(F.col("in_isr"), F.lit(1)).otherwise(F.lit(0))).alias("remaining_isr"),
        (
            (F.col("isr_size") == 0)
            | F.coalesce(F.col("leader") < 0, F.lit(False))
            | F.coalesce(F.col("isr_size") < F.col("min_insync_replicas"), F.lit(False))
        ).alias("already_failing"),
    )
    restart_hits = F.col("in_isr") & (
        (F.col("remaining_isr") == 0)
        | F.coalesce(F.col("remaining_isr") < F.col("min_insync_replicas"), F.lit(False))
    )
    return d.where(restart_hits | F.col("already_failing")).select(
        "*",
        partition_name().alias("name"),
        (
            F.col("in_isr")
            & (F.col("remaining_isr") == 0)
            & (F.col("isr_size") > 0)
            & F.coalesce(F.col("leader") >= 0, F.lit(True))
        ).alias("offline"),
        F.coalesce(F.col("replication_factor") <= F.col("min_insync_replicas"), F.lit(False)).alias(
            "strimzi_skips"
        ),
    )


def _impact(tables):
    return tables.derived(restart_impact)


def _per_broker(d, n: int):
    d = ranked(ranked(d, BROKER_KEYS, "name", "_pr"), BROKER_KEYS, "topic", "_tr")
    return d.groupBy("cluster_id", "broker_id").agg(
        F.count(F.lit(1)).alias("partition_count"),
        first_members("name", "_pr", n).alias("partitions"),
        F.countDistinct("topic").alias("topic_count"),
        first_members("topic", "_tr", n).alias("topics"),
        F.sum(F.when(F.col("strimzi_skips"), F.lit(1)).otherwise(F.lit(0))).alias("strimzi_skipped"),
        F.sum(F.when(F.col("leader") == F.col("broker_id"), F.lit(1)).otherwise(F.lit(0))).alias(
            "led_by_broker"
        ),
        F.min("remaining_isr").alias("min_remaining_isr"),
        F.sum(F.when(F.col("already_failing"), F.lit(1)).otherwise(F.lit(0))).alias("already_failing"),
        F.sum(F.when(F.col("strict_min_isr"), F.lit(1)).otherwise(F.lit(0))).alias("strict_count"),
        F.sum(F.when(F.col("unclean"), F.lit(1)).otherwise(F.lit(0))).alias("unclean_count"),
    )


@rule(
    "MNT001",
    "restart-blocks-writes",
    "error",
    scope="maintenance",
    params=(_MAX_LISTED,),
    needs=("partitions",),
    uses=(restart_impact,),
    runs_in=("preflight",),
)
def restart_blocks_writes(tables, params):
    """Restarting this broker now would drop partitions below their effective min.insync.replicas: acks=all writes to them block while it is down.

    Why: a restarted broker leaves the ISR of every partition it replicates until it is
    back and caught up. Where the ISR without it is smaller than min.insync.replicas, the
    leader rejects acks=all produce requests (NOT_ENOUGH_REPLICAS) for the whole restart
    and catch-up, and, when the leader runs Kafka 3.7 or newer, stops advancing the high
    watermark (KAFKA-15583): consumers receive no new records, acks=0/1 writes included,
    until the ISR is back at min ISR (the message says which: producers only, or producers
    and consumers). The min ISR is the effective one the partition's leader applies: the
    topic override, else the leading broker's own default, capped at the replica count on
    3.7+ (so min.insync.replicas above the replica count acts as equal to it there).
    Offset commits fail when the partition is `__consumer_offsets`
    (an MSK monthly patch on topics with min.insync.replicas equal to RF blocked every
    acks=all producer while each broker restarted). The simulation uses the current ISR, so a partition that is already at
    min ISR because another replica is out of sync blocks too. Strimzi's roller skips
    topics whose replica count is <= min.insync.replicas and restarts anyway; this rule
    counts them (evidence `replicas_at_or_below_min_isr`), because writes block all the same.
    Partitions the restart takes offline entirely are MNT002, not repeated here. A partition
    that is already below min.insync.replicas or leaderless blocks every broker holding a
    replica of it, in sync or not (Strimzi refuses those rolls too): its writes already
    fail (the message says so, evidence `already_failing`) and the restart takes away one
    of its ways back.

    Remediation: before the maintenance window, bring out-of-sync replicas back into the
    ISR (PAR004/PAR005), and lower min.insync.replicas to at most RF-1 on topics where it
    equals the replication factor (`kafka-configs --alter --entity-type topics
    --entity-name T --add-config min.insync.replicas=2`), or raise their replication
    factor. Restart only brokers that `kafka-audit preflight` reports as safe.

    Example: broker 2 of payments-msk replicates `payments.orders.v1-0` with replicas
    [1, 2, 3], ISR [1, 2, 3] and min.insync.replicas=3: without broker 2 the ISR is 2.

    References:
    - Kafka topic config min.insync.replicas <https://kafka.apache.org/39/documentation.html#topicconfigs_min.insync.replicas>
    - Kafka documentation: graceful shutdown <https://kafka.apache.org/39/documentation.html#basic_ops_restarting>
    - KAFKA-15583, apache/kafka PR #14594 (3.7.0): core/src/main/scala/kafka/cluster/Partition.scala effectiveMinIsr, maybeIncrementLeaderHW <https://github.com/apache/kafka/pull/14594>
    - Amazon MSK: version upgrade best practices (minISR at most RF - 1) <https://docs.aws.amazon.com/msk/latest/developerguide/version-upgrades-best-practices.html>
    - AWS Knowledge Center: avoid disruption during MSK security patching <https://repost.aws/knowledge-center/msk-avoid-disruption-during-patching>
    """
    n = params["max_listed"]
    d = _per_broker(_impact(tables).where(~F.col("offline")), n)
    listed = listing(F.col("partitions"), F.col("partition_count"), n)
    newly = F.col("partition_count") - F.col("already_failing")
    strimzi = F.when(
        F.col("strimzi_skipped") > 0,
        text(
            "; ",
            F.col("strimzi_skipped"),
            " of them have replicas <= min.insync.replicas (Strimzi's roll check lets "
            "those through; they block all the same)",
        ),
    ).otherwise(F.lit(""))
    blocks = F.when(
        newly > 0,
        text(
            "restarting broker ",
            F.col("broker_id"),
            " leaves ",
            newly,
            " partition(s) with an ISR below "
            "their effective min.insync.replicas: acks=all producers fail with NOT_ENOUGH_REPLICAS",
            F.when(
                F.col("strict_count") == F.col("partition_count"),
                F.lit(" and consumers receive no new records (Kafka 3.7+ leaders stop the high watermark)"),
            )
            .when(
                F.col("strict_count") > 0,
                text(
                    "; consumers of the ",
                    F.col("strict_count"),
                    " led by Kafka 3.7+ brokers receive no new records (the high watermark stops)",
                ),
            )
            .otherwise(F.lit("; consumers keep receiving acks=0/1 writes (leaders before Kafka 3.7)")),
            ", until it is back in sync",
        ),
    ).otherwise(F.lit(""))
    failing = F.when(
        F.col("already_failing") > 0,
        text(
            F.when(newly > 0, F.lit("; ")).otherwise(F.lit("")),
            "broker ",
            F.col("broker_id"),
            " holds a replica of ",
            F.col("already_failing"),
            " partition(s) already below min.insync.replicas or without a leader: acks=all "
            "writes to them already fail, and restarting it takes away one of their ways back",
        ),
    ).otherwise(F.lit(""))
    msg = text(
        blocks,
        failing,
        " (",
        F.col("partition_count"),
        " partition(s) of ",
        F.col("topic_count"),
        " topic(s)): ",
        listed,
        strimzi,
    )
    evidence = ev(
        partition_count=F.col("partition_count"),
        partitions=F.col("partitions"),
        topic_count=F.col("topic_count"),
        topics=F.col("topics"),
        replicas_at_or_below_min_isr=F.col("strimzi_skipped"),
        led_by_broker=F.col("led_by_broker"),
        min_remaining_isr=F.col("min_remaining_isr"),
        already_failing=F.col("already_failing"),
        consumers_stall=F.col("strict_count"),
    )
    return emit(d, "broker", F.col("broker_id").cast("string"), msg, evidence)


@rule(
    "MNT002",
    "restart-takes-offline",
    "critical",
    scope="maintenance",
    params=(_MAX_LISTED,),
    needs=("partitions",),
    uses=(restart_impact,),
    runs_in=("preflight",),
)
def restart_takes_offline(tables, params):
    """This broker is the only in-sync replica of some partitions: restarting it takes them offline, or with unclean leader election on loses acknowledged data.

    Why: when the last in-sync replica goes down nobody can take over leadership (with
    unclean.leader.election.enable=false, Kafka's default since 0.11): the partition cannot
    be read or written until that broker is back, and when it is a `__consumer_offsets`
    partition its consumer groups lose their coordinator (MNT003). With unclean election on
    (MSK's default configuration sets it true), the controller elects an out-of-sync replica
    instead: the partition stays available, but the writes only the restarted broker had,
    acknowledged ones included, are truncated from its log when it rejoins as a follower:
    the message says "loses acknowledged data" for those partitions (evidence
    `loses_acknowledged_data`). The KRaft controller honours the setting only from Kafka 3.9
    (KAFKA-12670); before that a KRaft cluster takes the partition offline. This covers
    single-replica partitions (REP003: no other replica to elect, so offline whatever the
    setting) and partitions whose other replicas fell out of the ISR.

    Remediation: do not restart the broker until the partitions have another in-sync
    replica: find why the other replicas are out of sync (PAR005: broker down, failed log
    dir, fetcher lag), and give single-replica topics a replication factor of 3 with
    `kafka-reassign-partitions` before any maintenance.

    Example: `ads.clicks-3` with replicas [4, 1, 2] and ISR [4]: restarting broker 4 takes
    it offline.

    References:
    - Kafka documentation: unclean leader election <https://kafka.apache.org/39/documentation.html#design_uncleanleader>
    - Kafka documentation: graceful shutdown <https://kafka.apache.org/39/documentation.html#basic_ops_restarting>
    - KAFKA-12670, apache/kafka PR #16866: unclean.leader.election.enable in KRaft (docs/upgrade.html, notable changes in 3.9.0) <https://github.com/apache/kafka/pull/16866>
    - Amazon MSK default configuration (unclean.leader.election.enable true for clusters without tiered storage) <https://docs.aws.amazon.com/msk/latest/developerguide/msk-default-configuration.html>
    - AWS Knowledge Center: avoid disruption during MSK security patching <https://repost.aws/knowledge-center/msk-avoid-disruption-during-patching>
    """
    n = params["max_listed"]
    d = _per_broker(_impact(tables).where(F.col("offline")), n)
    msg = text(
        "broker ",
        F.col("broker_id"),
        " is the only in-sync replica of ",
        F.col("partition_count"),
        " partition(s) of ",
        F.col("topic_count"),
        " topic(s): ",
        F.when(
            F.col("unclean_count") == F.col("partition_count"),
            F.lit(
                "restarting it loses acknowledged data: with unclean.leader.election.enable=true the "
                "controller elects an out-of-sync replica, and the writes only this broker had are "
                "truncated when it rejoins"
            ),
        )
        .when(
            F.col("unclean_count") > 0,
            text(
                "restarting it loses acknowledged data on ",
                F.col("unclean_count"),
                " of them (unclean.leader.election.enable=true: an out-of-sync replica is elected and "
                "the writes only this broker had are truncated) and takes the others offline "
                "(no producer or consumer can use them until it is back)",
            ),
        )
        .otherwise(
            F.lit("restarting it takes them offline: no producer or consumer can use them until it is back")
        ),
        ": ",
        listing(F.col("partitions"), F.col("partition_count"), n),
    )
    evidence = ev(
        partition_count=F.col("partition_count"),
        partitions=F.col("partitions"),
        topic_count=F.col("topic_count"),
        topics=F.col("topics"),
        led_by_broker=F.col("led_by_broker"),
        loses_acknowledged_data=F.col("unclean_count"),
    )
    return emit(d, "broker", F.col("broker_id").cast("string"), msg, evidence)


@rule(
    "MNT003",
    "restart-stalls-consumer-groups",
    "error",
    scope="maintenance",
    params=(_MAX_LISTED,),
    needs=("partitions",),
    uses=(restart_impact,),
    runs_in=("preflight",),
)
def restart_stalls_consumer_groups(tables, params):
    """Restarting this broker hits `__consumer_offsets` or `__transaction_state` partitions (MNT001/MNT002): the consumer groups they coordinate stall.

    Why: each consumer group is coordinated by the leader of one `__consumer_offsets`
    partition (abs(Java String.hashCode(group.id)) % offsets.topic.num.partitions). When
    the restart leaves that partition below min.insync.replicas, offset commits fail;
    when it leaves it without an in-sync replica, the group has no coordinator at all and
    stops (a controller split-brain that left a `__consumer_offsets` partition at leader -1
    stopped every group mapped to it; during an MSK patch on topics with min.insync.replicas
    equal to RF a consumer stalled and never resumed). Transactional
    ids map onto `__transaction_state` the same way and cannot commit or abort. The
    finding lists the collected consumer groups mapped to the partitions hit.

    Remediation: fix the internal topic first: `__consumer_offsets` should have RF 3 and
    min.insync.replicas at most 2 (REP002, REP006), with a full ISR before the window.
    Tell the owners of the listed groups, and after the restart check that the groups
    resumed (`kafka-consumer-groups --describe --group G`).

    Example: restarting broker 1 of payments-msk leaves `__consumer_offsets-12` at ISR
    [2, 3] below min.insync.replicas=3; group `ledger-writer` maps to partition 12.

    References:
    - Kafka broker config offsets.topic.num.partitions <https://kafka.apache.org/39/documentation.html#brokerconfigs_offsets.topic.num.partitions>
    - Kafka documentation: managing consumer groups <https://kafka.apache.org/39/documentation.html#basic_ops_consumer_group>
    - Amazon MSK: version upgrade best practices (minISR at most RF - 1) <https://docs.aws.amazon.com/msk/latest/developerguide/version-upgrades-best-practices.html>
    """
    n = params["max_listed"]
    hit = (
        _impact(tables)
        .where(F.col("topic").isin(*COORDINATOR_TOPICS))
        .select("cluster_id", "broker_id", "topic", "partition", "name", "offline")
    )
    groups = tables.consumer_groups.where(
        F.col("group_id").isNotNull() & F.col("coordinator_partition").isNotNull()
    ).select(
        "cluster_id",
        F.col("coordinator_partition").alias("partition"),
        "group_id",
        F.lit("__consumer_offsets").alias("topic"),
    )
    d = ranked(
        ranked(join(hit, groups, ["cluster_id", "topic", "partition"], "left"), BROKER_KEYS, "name", "_pr"),
        BROKER_KEYS,
        "group_id",
        "_gr",
    )
    d = d.groupBy("cluster_id", "broker_id").agg(
        F.countDistinct("name").alias("partition_count"),
        first_members("name", "_pr", n).alias("partitions"),
        F.countDistinct(F.when(F.col("offline"), F.col("name"))).alias("offline_count"),
        F.countDistinct("group_id").alias("group_count"),
        first_members("group_id", "_gr", n).alias("groups"),
        F.max(F.when(F.col("topic") == "__transaction_state", F.lit(1)).otherwise(F.lit(0))).alias("txn"),
    )
    groups_text = F.when(
        F.col("group_count") > 0,
        text(
            "; ",
            F.col("group_count"),
            " consumer group(s) mapped to them stall: ",
            listing(F.col("groups"), F.col("group_count"), n),
        ),
    ).otherwise(F.lit("; none of the collected consumer groups maps to them"))
    txn = F.when(
        F.col("txn") > 0,
        F.lit("; transactional ids mapped to the __transaction_state partitions cannot commit or abort"),
    ).otherwise(F.lit(""))
    msg = text(
        "restarting broker ",
        F.col("broker_id"),
        " hits ",
        F.col("partition_count"),
        " coordinator partition(s) (",
        F.col("offline_count"),
        " taken offline): ",
        listing(F.col("partitions"), F.col("partition_count"), n),
        groups_text,
        txn,
    )
    evidence = ev(
        partition_count=F.col("partition_count"),
        partitions=F.col("partitions"),
        offline_count=F.col("offline_count"),
        consumer_group_count=F.col("group_count"),
        consumer_groups=F.col("groups"),
    )
    return emit(d, "broker", F.col("broker_id").cast("string"), msg, evidence)


@rule(
    "MNT004",
    "no-safe-roll",
    "critical",
    needs=("partitions", "brokers"),
    scope="maintenance",
    uses=(restart_impact,),
    runs_in=("preflight",),
)
def no_safe_roll(tables, params):
    """No broker of the cluster can be restarted without blocking writes or taking partitions offline (MNT001/MNT002 on every broker).

    Why: a rolling restart (an MSK patch, a Kafka upgrade, a config change that needs a
    restart) takes every broker down in turn. When each one of them hits partitions, the
    roll cannot proceed without an outage for acks=all producers, whatever the order:
    typically min.insync.replicas equals the replication factor (which blocked every
    acks=all producer through an MSK monthly patch) or the
    cluster runs with one broker or RF 1.

    Remediation: fix the causes listed by MNT001/MNT002 before the window (min.insync.replicas
    at most RF-1, RF 3, full ISRs); for MSK, where AWS patches on its own schedule, do it
    now. If the window cannot move, announce a write outage for acks=all producers.

    Example: payments-msk: 3 brokers, min.insync.replicas=3 on RF 3 topics: every broker
    restart blocks writes.

    References:
    - AWS Knowledge Center: avoid disruption during MSK security patching <https://repost.aws/knowledge-center/msk-avoid-disruption-during-patching>
    - Amazon MSK: version upgrade best practices (minISR at most RF - 1) <https://docs.aws.amazon.com/msk/latest/developerguide/version-upgrades-best-practices.html>
    """
    unsafe = (
        _impact(tables)
        .select("cluster_id", "broker_id")
        .distinct()
        .groupBy("cluster_id")
        .agg(F.count(F.lit(1)).alias("unsafe_count"))
    )
    brokers = tables.brokers.groupBy("cluster_id").agg(
        F.count(F.lit(1)).alias("broker_count"), F.sort_array(F.collect_list("broker_id")).alias("broker_ids")
    )
    names = tables.clusters.select("cluster_id", F.col("cluster_name").alias("cluster"))
    d = join(join(brokers, unsafe, "cluster_id"), names, "cluster_id", "left").where(
        (F.col("broker_count") > 0) & (F.col("unsafe_count") >= F.col("broker_count"))
    )
    msg = text(
        "none of the ",
        F.col("broker_count"),
        " brokers can be restarted without blocking acks=all writes or "
        "taking partitions offline: a rolling restart now means an outage",
    )
    evidence = ev(broker_count=F.col("broker_count"), unsafe_brokers=F.col("broker_ids"))
    return emit(d, "cluster", F.coalesce(F.col("cluster"), F.col("cluster_id")), msg, evidence)


_FETCH_TIMEOUT = Param(
    "fetch_timeout_ms",
    2000,
    "controller.quorum.fetch.timeout.ms where the restarted controller's own is not known: a voter counts as "
    "caught up when its last caught-up time is within this many ms of the leader's (Strimzi's KafkaQuorumCheck; "
    "Kafka's default 2000)",
)
# A quorum smaller than this cannot lose a voter: every restart of one of its controllers is a metadata
# outage, whatever the order (KIP-595: a majority of voters must fetch for anything to commit).
SMALLEST_SAFE_QUORUM = 3


def quorum_restart_impact(tables):
    """One row per KRaft quorum voter (the quorum table, DescribeQuorum): cluster_id, node_id,
    is_leader, voters (count), majority (voters // 2 + 1), caught_up (this voter),
    others_caught_up (caught-up voters other than it), leader_count (0: no quorum leader), lag,
    caught_up_age_ms and its lag behind the leader's last caught-up time (behind_leader_ms).

    A voter is caught up when it is the leader, or when its last caught-up time is within
    fetch_timeout_ms of the leader's (Strimzi's KafkaQuorumCheck: leader's lastCaughtUpTimestamp
    minus the voter's); both ages are measured from the same collection time, so their
    difference is that of the leader's own timestamps. A voter without a last caught-up
    time (an older DescribeQuorum) counts as caught up only when its lag is 0."""
    q = tables.quorum.where(F.col("role") == "voter").select(
        "cluster_id",
        "node_id",
        F.coalesce(F.col("is_leader"), F.lit(False)).alias("is_leader"),
        "lag",
        "caught_up_age_ms",
    )
    leader = (
        q.where(F.col("is_leader"))
        .groupBy("cluster_id")
        .agg(F.count(F.lit(1)).alias("leader_count"), F.max("caught_up_age_ms").alias("leader_age"))
    )
    d = join(q, leader, "cluster_id", "left")
    behind = F.col("caught_up_age_ms") - F.coalesce(F.col("leader_age"), F.lit(0))
    return d.select(
        "cluster_id",
        "node_id",
        "is_leader",
        "lag",
        "caught_up_age_ms",
        F.coalesce(F.col("leader_count"), F.lit(0)).alias("leader_count"),
        behind.alias("behind_leader_ms"),
    )


def controller_fetch_timeouts(tables):
    """Per KRaft node (cluster_id, node_id): its own controller.quorum.fetch.timeout.ms where a
    source says it (fetch_timeout_ms) and where from (fetch_timeout_source): its controller
    properties file (kraft_nodes), else its broker configuration (a combined node: server.properties
    or DescribeConfigs)."""
    files = tables.kraft_nodes.where(F.col("quorum_fetch_timeout_ms").isNotNull()).select(
        "cluster_id",
        "node_id",
        F.col("quorum_fetch_timeout_ms").cast("bigint").alias("file_ms"),
        F.lit(None).cast("bigint").alias("config_ms"),
    )
    configs = (
        tables.configs.where(
            (F.col("entity_type") == "broker") & (F.col("key") == "controller.quorum.fetch.timeout.ms")
        )
        .select(
            "cluster_id",
            try_int("entity_name").alias("node_id"),
            F.lit(None).cast("bigint").alias("file_ms"),
            try_long("value").alias("config_ms"),
        )
        .where(F.col("node_id").isNotNull() & F.col("config_ms").isNotNull())
    )
    d = (
        files.unionByName(configs)
        .groupBy("cluster_id", "node_id")
        .agg(F.max("file_ms").alias("file_ms"), F.max("config_ms").alias("config_ms"))
    )
    return d.select(
        "cluster_id",
        "node_id",
        F.coalesce(F.col("file_ms"), F.col("config_ms")).alias("fetch_timeout_ms"),
        F.when(F.col("file_ms").isNotNull(), F.lit("controller properties file"))
        .otherwise(F.lit("broker configuration"))
        .alias("fetch_timeout_source"),
    )


@rule(
    "MNT005",
    "restart-breaks-controller-quorum",
    "critical",
    scope="maintenance",
    params=(_FETCH_TIMEOUT,),
    needs=("quorum",),
    uses=(quorum_restart_impact, controller_fetch_timeouts),
    runs_in=("preflight",),
)
def restart_breaks_controller_quorum(tables, params):
    """Restarting this KRaft controller now would leave fewer caught-up voters than a majority: the metadata quorum stops committing.

    Why: the KRaft metadata quorum commits a record once a majority of its voters
    (voters // 2 + 1) has it (KIP-595). While a controller restarts it is not one of them;
    if the other voters that are caught up with the leader are fewer than a majority, no
    metadata change commits until it is back: no partition leader election (a broker that
    fails meanwhile leaves its partitions leaderless), no ISR change, no topic or config
    change, no broker registration (a broker restarted meanwhile cannot rejoin). Restarting
    the quorum leader itself also triggers an election, which needs a caught-up majority too.
    This is Strimzi's KafkaQuorumCheck: a controller is rolled only when a majority of the
    voters, excluding it, have caught up with the leader within controller.quorum.fetch.timeout.ms,
    the restarted controller's own value (KafkaRoller.quorumCheck reads the configuration of the
    node it rolls; from its controller properties file, or for a combined node its broker
    configuration), else the parameter `fetch_timeout_ms` (Kafka's default 2000).

    Two cases, two severities. A voter that is behind (critical): some voter has not caught up
    within that timeout, so the quorum cannot lose another one now; waiting helps, since once
    the voter catches up every controller can restart in turn. A quorum of one or two voters
    (warning): it cannot lose a voter however caught up it is (one voter is its own majority;
    two need both), so no order and no wait makes a restart safe: each controller restart is a
    planned metadata outage for as long as it is down. Strimzi rolls such quorums anyway, with a
    warning ("It is recommended that a minimum of three controllers are used"); preflight
    reports the outage (its verdict "outage", exit 1) and names the fix: more controllers
    (KIP-853 dynamic quorums, Kafka 3.9+; CTL006). With no quorum leader every voter is reported
    (critical). On MSK KRaft the controllers are AWS's ("included at no additional cost ... and
    require no additional setup or management from you"): they are not in the snapshot and
    preflight says so.

    Remediation: a voter behind: find why it lags (CTL010: `kafka-metadata-quorum
    --bootstrap-server B describe --replication`, its disk, GC and network), restart no other
    controller until every voter is caught up, and restart the lagging one first. A quorum of
    one or two voters: add controllers to reach three (or five) before the roll (CTL006):
    on a dynamic quorum (kraft.version 1, Kafka 3.9+, KIP-853) format each new controller with
    `kafka-storage format --no-initial-controllers`, start it, and add it with
    `kafka-metadata-quorum --bootstrap-controller C add-controller`; a static quorum
    (controller.quorum.voters) changes only by reconfiguring every node. Until then, announce
    each controller restart as a metadata outage: keep it short and restart no broker meanwhile.
    Restart the quorum leader last (Strimzi's roller defers the active controller, which it takes
    from DescribeQuorum's leader id, not from DescribeCluster, whose "controller" is an arbitrary
    broker on KRaft).

    Example: voters 3001 (leader), 3002 and 3003, where 3003 last caught up 5 minutes before
    the leader: restarting 3002 leaves only the leader caught up, 1 of the 2 needed (critical).
    A dev cluster with the one controller 9990: restarting it stops metadata until it is back
    (warning: a planned outage; add controllers).

    References:
    - KIP-595: A Raft Protocol for the Metadata Quorum <https://cwiki.apache.org/confluence/display/KAFKA/KIP-595%3A+A+Raft+Protocol+for+the+Metadata+Quorum>
    - KIP-853: KRaft Controller Membership Changes (add-controller, remove-controller) <https://cwiki.apache.org/confluence/display/KAFKA/KIP-853%3A+KRaft+Controller+Membership+Changes>
    - Strimzi KafkaQuorumCheck (strimzi/strimzi-kafka-operator, cluster-operator/src/main/java/io/strimzi/operator/cluster/operator/resource/KafkaQuorumCheck.java: isQuorumHealthyWithoutNode, the one- and two-controller warnings) <https://github.com/strimzi/strimzi-kafka-operator/blob/main/cluster-operator/src/main/java/io/strimzi/operator/cluster/operator/resource/KafkaQuorumCheck.java>
    - Strimzi KafkaRoller quorumCheck (controller.quorum.fetch.timeout.ms of the node rolled, default 2000), deferController (the KRaft active controller from DescribeQuorum, restarted last) <https://github.com/strimzi/strimzi-kafka-operator/blob/main/cluster-operator/src/main/java/io/strimzi/operator/cluster/operator/resource/KafkaRoller.java>
    - Kafka broker config controller.quorum.fetch.timeout.ms <https://kafka.apache.org/39/documentation.html#brokerconfigs_controller.quorum.fetch.timeout.ms>
    - Kafka documentation: KRaft controller membership changes (kafka-metadata-quorum add-controller) <https://kafka.apache.org/39/documentation.html#kraft_reconfig>
    - Amazon MSK: metadata management, KRaft mode (controllers managed by AWS) <https://docs.aws.amazon.com/msk/latest/developerguide/metadata-management.html>
    """
    default_ms = params["fetch_timeout_ms"]
    q = tables.derived(quorum_restart_impact)
    timeouts = tables.derived(controller_fetch_timeouts)
    # The restarted controller C (with its own fetch timeout) against every other voter V.
    c = join(
        q.select("cluster_id", "node_id", "is_leader", "leader_count"),
        timeouts,
        ["cluster_id", "node_id"],
        "left",
    ).select(
        "cluster_id",
        "node_id",
        "is_leader",
        "leader_count",
        F.coalesce(F.col("fetch_timeout_ms"), F.lit(default_ms)).alias("timeout_ms"),
        F.coalesce(F.col("fetch_timeout_source"), F.lit("default")).alias("timeout_source"),
    )
    v = q.select(
        "cluster_id",
        F.col("node_id").alias("voter"),
        F.col("is_leader").alias("voter_is_leader"),
        F.col("lag").alias("voter_lag"),
        F.col("caught_up_age_ms").alias("voter_age"),
        F.col("behind_leader_ms").alias("voter_behind_ms"),
    )
    pairs = join(c, v, "cluster_id")
    caught = (F.col("leader_count") > 0) & (
        F.col("voter_is_leader")
        | F.when(F.col("voter_age").isNotNull(), F.col("voter_behind_ms") < F.col("timeout_ms")).otherwise(
            F.coalesce(F.col("voter_lag") <= 0, F.lit(False))
        )
    )
    pairs = pairs.withColumn("voter_caught_up", caught)
    d = pairs.groupBy(
        "cluster_id", "node_id", "is_leader", "leader_count", "timeout_ms", "timeout_source"
    ).agg(
        F.count(F.lit(1)).alias("voters"),
        F.sum(
            F.when(F.col("voter_caught_up") & (F.col("voter") != F.col("node_id")), F.lit(1)).otherwise(
                F.lit(0)
            )
        ).alias("others"),
        F.sort_array(F.collect_list(F.when(~F.col("voter_caught_up"), F.col("voter")))).alias("lagging"),
    )
    d = d.withColumn("majority", (F.floor(F.col("voters") / 2) + 1).cast("int")).where(
        F.col("others") < F.col("majority")
    )
    lagging = F.filter(F.col("lagging"), lambda x: x.isNotNull())
    outage = (F.col("voters") < F.lit(SMALLEST_SAFE_QUORUM)) & (F.col("leader_count") > 0)
    behind = text(
        "voter(s) ",
        F.array_join(lagging.cast("array<string>"), ", "),
        " have not caught up with the leader within controller.quorum.fetch.timeout.ms ",
        F.col("timeout_ms"),
        " ms",
    )
    planned = text(
        "restarting controller ",
        F.col("node_id"),
        F.when(F.col("is_leader"), F.lit(" (the quorum leader)")).otherwise(F.lit("")),
        " stops metadata commits until it is back: a quorum of ",
        F.col("voters"),
        " voter(s) needs ",
        F.when(F.col("voters") == 1, F.lit("its only voter")).otherwise(text("all ", F.col("voters"))),
        " for a majority, so no restart order and no wait avoids it",
        F.when(F.size(lagging) > 0, text(" (", behind, ")")).otherwise(F.lit("")),
        ": plan each controller restart as a metadata outage (no partition leader election for a broker "
        "that fails meanwhile, no ISR, topic or config change, no broker registration), or first add "
        "controllers to reach 3 (KIP-853 `kafka-metadata-quorum add-controller` on a dynamic quorum, Kafka "
        "3.9+; CTL006)",
    )
    why = (
        F.when(F.col("leader_count") == 0, F.lit("the quorum has no leader now"))
        .when(F.size(lagging) > 0, behind)
        .otherwise(text("a quorum of ", F.col("voters"), " cannot lose a voter"))
    )
    blocked = text(
        "restarting controller ",
        F.col("node_id"),
        F.when(F.col("is_leader"), F.lit(" (the quorum leader)")).otherwise(F.lit("")),
        " leaves ",
        F.col("others"),
        " caught-up voter(s) of ",
        F.col("voters"),
        ", below the majority of ",
        F.col("majority"),
        " (",
        why,
        "): no metadata change commits while it is down (no leader election for partitions of a "
        "failed broker, no ISR change, no topic or config change, no broker registration); wait until "
        "every voter has caught up, then restart one controller at a time",
    )
    evidence = ev(
        voters=F.col("voters"),
        majority=F.col("majority"),
        caught_up_without_it=F.col("others"),
        lagging_voters=lagging,
        is_leader=F.col("is_leader"),
        fetch_timeout_ms=F.col("timeout_ms"),
        fetch_timeout_source=F.col("timeout_source"),
        planned_outage=outage,
    )
    severity = F.when(outage, F.lit("warning")).otherwise(F.lit("critical"))
    return emit(
        d,
        "node",
        F.col("node_id").cast("string"),
        F.when(outage, planned).otherwise(blocked),
        evidence,
        severity,
    )


_MAX_LAG = Param(
    "max_lag",
    0,
    "messages a follower may lack beyond the in-flight allowance and still count as caught up: its ConsumerLag "
    "above this fires; so does a log end gap above this plus the records appended in `in_flight_ms` (and in the "
    "time between the two brokers' scrapes), in both of two scrapes",
)
_IN_FLIGHT_MS = Param(
    "in_flight_ms",
    5000,
    "ms of the leader's appends an in-sync follower may trail by in a scrape without lagging: a follower fetches "
    "continuously (an idle fetch waits replica.fetch.wait.max.ms, 500 ms by default), and a JMX exporter reads "
    "a busy broker's per-partition gauges over seconds, so one scrape is not one instant; 5 s covers both and "
    "stays well below replica.lag.time.max.ms (30 s), past which the leader drops the follower from the ISR. "
    "The gap allowed is this times the leader's append rate measured between its two scrapes",
)
# Internal topics whose writes Kafka never acknowledges before the whole ISR has them, so a leader
# change cannot lose an acknowledged write there: __consumer_offsets (GroupMetadataManager appends with
# offsets.commit.required.acks, default -1 and fixed at -1 in 4.0; the KIP-848 coordinator runtime
# completes a write only once the high watermark passes it), __transaction_state
# (TransactionLog.EnforcedRequiredAcks = -1), __share_group_state (the share coordinator runs on that
# runtime) and __remote_log_metadata (TopicBasedRemoteLogMetadataManager's producer, acks=all).
ACKS_ALL_INTERNAL_TOPICS = (
    "__consumer_offsets",
    "__transaction_state",
    SHARE_STATE_TOPIC,
    "__remote_log_metadata",
)


def leadership_successors(tables):
    """One row per partition with a live leader B and more than one replica: cluster_id, topic,
    partition, leader, replicas, isr, and successor: the replica the controller elects when B
    shuts down (controlled or not), i.e. the first replica in replica order that is not B, is
    in the ISR and is a registered broker (ZooKeeper: PartitionLeaderElectionAlgorithms
    controlledShutdownPartitionLeaderElection, ``assignment.find(live && isr && !shuttingDown)``;
    KRaft: PartitionChangeBuilder.electAnyLeader, the first target replica in the ISR that is
    an acceptable leader). Without registered brokers for the cluster, every ISR member counts
    as live. successor is null when no other replica is in the ISR (MNT002's case)."""
    parts = tables.partitions.where(
        F.col("leader").isNotNull() & (F.col("leader") >= 0) & (F.size("replicas") > 1)
    ).select("cluster_id", "topic", "partition", "leader", "replicas", "isr")
    registered = registered_as(tables, "candidate", "registered")
    known = (
        tables.brokers.select("cluster_id").distinct().select("cluster_id", F.lit(True).alias("has_brokers"))
    )
    cand = parts.select(
        "cluster_id",
        "topic",
        "partition",
        "leader",
        "isr",
        "replicas",
        F.explode("replicas").alias("candidate"),
    )
    cand = join(join(cand, registered, ["cluster_id", "candidate"], "left"), known, "cluster_id", "left")
    cand = cand.where(
        (F.col("candidate") != F.col("leader"))
        & F.coalesce(F.array_contains(F.col("isr"), F.col("candidate")), F.lit(False))
        & (F.col("registered").isNotNull() | F.col("has_brokers").isNull())
    ).select(
        "cluster_id",
        "topic",
        "partition",
        "candidate",
        F.array_position(F.col("replicas"), F.col("candidate")).alias("position"),
    )
    first = cand.groupBy("cluster_id", "topic", "partition").agg(F.min("position").alias("position"))
    chosen = join(cand, first, ["cluster_id", "topic", "partition", "position"]).select(
        "cluster_id", "topic", "partition", F.col("candidate").alias("successor")
    )
    return join(parts, chosen, ["cluster_id", "topic", "partition"], "left")


def _log_ends_per_scrape(tables, role: str):
    """Per (cluster, broker as ``role``, topic, partition): the broker's log end offset in its last
    two scrapes (``{role}_leo_1`` the latest, ``_2`` the one before) and when each was taken
    (``{role}_at_1``, ``{role}_at_2``). A scrape is one distinct scraped_at_ms of the broker; rows
    without a time (one scrape, or a snapshot from before the column) are left out."""
    leo = tables.log_end_offsets.where(F.col("scraped_at_ms").isNotNull())
    w = Window.partitionBy("cluster_id", "broker_id").orderBy(F.col("scraped_at_ms").desc())
    leo = leo.withColumn("_scrape", F.dense_rank().over(w)).where(F.col("_scrape") <= 2)

    def at(k: int, col: str):
        return F.max(F.when(F.col("_scrape") == k, F.col(col)))

    return leo.groupBy("cluster_id", F.col("broker_id").alias(role), "topic", "partition").agg(
        at(1, "log_end_offset").alias(f"{role}_leo_1"),
        at(1, "scraped_at_ms").alias(f"{role}_at_1"),
        at(2, "log_end_offset").alias(f"{role}_leo_2"),
        at(2, "scraped_at_ms").alias(f"{role}_at_2"),
    )


@rule(
    "MNT006",
    "restart-loses-acks1-writes",
    "warning",
    scope="maintenance",
    params=(_MAX_LAG, _IN_FLIGHT_MS, _MAX_LISTED),
    needs=("partitions", ("replica_lag", "log_end_offsets")),
    uses=(leadership_successors,),
    runs_in=("preflight",),
)
def restart_loses_acks1_writes(tables, params):
    """Restarting this broker hands partitions it leads to a follower that lags it persistently: the records that follower lacks, acks=1 writes among them, are truncated.

    Why: when a broker B shuts down (controlled or not) the controller moves the leadership
    of every partition B leads to the first replica in replica order that is alive and in the
    ISR (ZooKeeper: controlledShutdownPartitionLeaderElection; KRaft: PartitionChangeBuilder).
    That replica becomes the log of record: whatever B holds beyond its log end is truncated
    from B when B rejoins as its follower (the leader-epoch truncation of KIP-101/KIP-279). A
    producer using acks=1 was acknowledged as soon as B appended its records, before any
    follower had them; acks=all producers are acknowledged only once the whole ISR has a record
    (Partition.checkEnoughReplicasReachOffset) and retry the rest. On a busy, healthy cluster
    every follower trails its leader by the records of the last fetch round trip: losing those
    on a leader change is what acks=1 means (the producer documentation: "the record will be
    lost" if the leader fails before followers replicate it), on every leader change, so it is
    not reported. This rule reports a follower that lags beyond that, persistently, because
    then a restart loses far more than the writes in flight. Redpanda's pre-restart probe has
    the same class (`acks1_data_loss`). Warning, not blocking: the loss is of acks=1 writes,
    which their producers accepted; preflight reports it beside the broker and restarts it
    anyway.

    What counts as persistent lag of the follower the controller would elect, F:
    - F's own fetcher from B reports ConsumerLag above `max_lag` (default 0):
      kafka.server:type=FetcherLagMetrics,name=ConsumerLag,clientId=ReplicaFetcherThread-<fetcher>-<B>
      is B's high watermark minus F's next fetch offset at F's last fetch
      (AbstractFetcherThread.processFetchRequest). B's high watermark never passes the log end
      of a follower B counts in sync (Partition.maybeIncrementLeaderHW), so an in-sync follower
      reads 0; above 0, F is not keeping up: B is about to drop it from the ISR, or the metadata
      collected is older than the metric. A gauge of a fetcher from another broker is about an
      older leadership and is not read.
    - or F's log end is behind B's by more than the in-flight allowance in each of two scrapes:
      each broker's own gauge kafka.log:type=Log,name=LogEndOffset,topic=T,partition=P
      (UnifiedLog.newMetrics; a future replica's is-future gauge is not read), B's minus F's, in
      B's and F's latest scrapes and again in the scrapes before (log_end_offsets rows told
      apart by scraped_at_ms: the collector scrapes a metrics URL twice, seconds apart, or two
      files of a broker are given). The allowance of a scrape is `max_lag` plus B's append rate
      (its log end's rise between its two scrapes, per ms) times `in_flight_ms` (default 5000)
      plus the time between B's and F's scrapes. One scrape alone never fires: a gap in it is
      replication in flight as often as lag.
    DescribeLogDirs' OffsetLag cannot serve: for a replica that is not a future one it is
    max(HW - LEO, 0) on the broker holding it (ReplicaManager.getLogEndOffsetLag), about 0
    everywhere. Internal topics whose writes are never acknowledged before the whole ISR has
    them are skipped: `__consumer_offsets` (GroupMetadataManager appends with
    offsets.commit.required.acks, default -1, fixed at -1 in Kafka 4.0; the KIP-848 coordinator
    runtime completes a write only once the high watermark passes it), `__transaction_state`
    (TransactionLog.EnforcedRequiredAcks = -1), `__share_group_state` (the share coordinator runs
    on the same runtime) and `__remote_log_metadata` (TopicBasedRemoteLogMetadataManager's
    producer, acks=all). Partitions with neither signal for F are not judged; with neither
    table collected the rule is reported not evaluated, and preflight says when the log end
    offsets are of one scrape only.

    Remediation: before restarting B, let its followers catch up: look at the followers'
    fetchers (kafka.server:type=FetcherLagMetrics, ReplicaFetcherManager MaxLag), their
    disks and network, num.replica.fetchers; or move leadership off B first with
    `kafka-leader-election --election-type PREFERRED` (or a reassignment) only to caught-up
    replicas. Producers that cannot lose data use acks=all (with enable.idempotence, the
    default since Kafka 3.0) and min.insync.replicas >= 2. Restarting B anyway loses the acks=1
    writes the follower lacks, no more: it blocks nothing else.

    Example: broker 1 leads `orders-0` with replicas [1, 2, 3] and ISR [1, 2, 3]; broker 2, the
    replica the controller elects, reports ConsumerLag 1250 fetching from broker 1; or broker 1's
    log end is 90,000 and 96,000 in two scrapes 5 s apart (1.2 records/ms) while broker 2's is
    60,000 and 61,000: 30,000 and 35,000 behind, far above the 6,000 or so in flight.

    References:
    - apache/kafka core/src/main/scala/kafka/server/AbstractFetcherThread.scala (FetcherLagMetrics ConsumerLag: max(0, highWatermark - nextOffset)) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/server/AbstractFetcherThread.scala>
    - apache/kafka core/src/main/scala/kafka/log/UnifiedLog.scala (3.x newMetrics: gauge LogEndOffset, tags topic, partition, is-future) and storage/src/main/java/org/apache/kafka/storage/internals/log/UnifiedLog.java (4.x: KafkaMetricsGroup("kafka.log", "Log"), kept under `Log` for compatibility) <https://github.com/apache/kafka/blob/trunk/storage/src/main/java/org/apache/kafka/storage/internals/log/UnifiedLog.java>
    - prometheus/jmx_exporter example_configs/kafka-2_0_0.yml and strimzi/strimzi-kafka-operator packaging/examples/metrics/kafka-metrics.yaml (generic two-pair gauge rule: kafka_log_log_logendoffset{topic,partition}) <https://github.com/prometheus/jmx_exporter/blob/main/example_configs/kafka-2_0_0.yml>
    - apache/kafka core/src/main/scala/kafka/server/ReplicaFetcherManager.scala (thread name ReplicaFetcherThread-fetcherId-leaderId, the gauge's clientId) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/server/ReplicaFetcherManager.scala>
    - apache/kafka core/src/main/scala/kafka/cluster/Partition.scala (maybeIncrementLeaderHW, checkEnoughReplicasReachOffset, getOutOfSyncReplicas) and Replica.scala (isCaughtUp: replica.lag.time.max.ms) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/cluster/Partition.scala>
    - apache/kafka core/src/main/scala/kafka/controller/PartitionStateMachine.scala (controlledShutdownPartitionLeaderElection) and metadata/src/main/java/org/apache/kafka/controller/PartitionChangeBuilder.java (electAnyLeader) <https://github.com/apache/kafka/blob/3.9/metadata/src/main/java/org/apache/kafka/controller/PartitionChangeBuilder.java>
    - apache/kafka core/src/main/scala/kafka/coordinator/group/GroupMetadataManager.scala (appendForGroup: requiredAcks = offsetCommitRequiredAcks, default -1) and core/src/main/scala/kafka/coordinator/transaction/TransactionLog.scala (EnforcedRequiredAcks = -1) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/coordinator/group/GroupMetadataManager.scala>
    - apache/kafka coordinator-common/src/main/java/org/apache/kafka/coordinator/common/runtime/CoordinatorRuntime.java (HighWatermarkListener: deferred writes complete once the high watermark passes them; the group and share coordinators run on it) <https://github.com/apache/kafka/blob/trunk/coordinator-common/src/main/java/org/apache/kafka/coordinator/common/runtime/CoordinatorRuntime.java>
    - apache/kafka storage/src/main/java/org/apache/kafka/server/log/remote/metadata/storage/TopicBasedRemoteLogMetadataManagerConfig.java (the __remote_log_metadata producer: acks=all) <https://github.com/apache/kafka/blob/3.9/storage/src/main/java/org/apache/kafka/server/log/remote/metadata/storage/TopicBasedRemoteLogMetadataManagerConfig.java>
    - Kafka broker configs replica.fetch.wait.max.ms and replica.lag.time.max.ms (30 s since Kafka 2.5) <https://kafka.apache.org/39/documentation.html#brokerconfigs_replica.lag.time.max.ms>
    - Kafka documentation: producer config acks (acks=1: the record is lost if the leader fails before the followers replicate it) <https://kafka.apache.org/39/documentation.html#producerconfigs_acks>
    - KIP-101: leader epoch for log truncation <https://cwiki.apache.org/confluence/display/KAFKA/KIP-101+-+Alter+Replication+Protocol+to+use+Leader+Epoch+rather+than+High+Watermark+for+Truncation>
    - Redpanda health_monitor_backend.cc record_risks_in_report (acks1_data_loss) <https://github.com/redpanda-data/redpanda/blob/dev/src/v/cluster/health_monitor_backend.cc>
    """
    n, max_lag, in_flight = params["max_listed"], params["max_lag"], params["in_flight_ms"]
    lag = tables.replica_lag.select(
        "cluster_id",
        F.col("broker_id").alias("successor"),
        "topic",
        "partition",
        F.col("leader_id").alias("fetches_from"),
        "lag",
    )
    d = (
        tables.derived(leadership_successors)
        .where(F.col("successor").isNotNull())
        .where(~F.col("topic").isin(*ACKS_ALL_INTERNAL_TOPICS))
    )
    d = join(
        d, _log_ends_per_scrape(tables, "leader"), ["cluster_id", "leader", "topic", "partition"], "left"
    )
    d = join(
        d,
        _log_ends_per_scrape(tables, "successor"),
        ["cluster_id", "successor", "topic", "partition"],
        "left",
    )
    d = join(d, lag, ["cluster_id", "topic", "partition", "successor"], "left")
    # The successor's own fetcher from this leader (a gauge of a fetcher from another broker is about an
    # older leadership: not this one).
    consumer_lag = F.when(
        F.col("fetches_from").isNull() | (F.col("fetches_from") == F.col("leader")), F.col("lag")
    )
    # The leader's append rate between its two scrapes (records per ms), and per scrape k the gap and
    # what is in flight: the rate times in_flight_ms plus the time between the two brokers' scrapes.
    rate = F.greatest(
        (F.col("leader_leo_1") - F.col("leader_leo_2")) / (F.col("leader_at_1") - F.col("leader_at_2")),
        F.lit(0.0),
    )

    def allowed(k: int):
        skew = F.abs(F.col(f"leader_at_{k}") - F.col(f"successor_at_{k}"))
        return F.lit(max_lag) + rate * (F.lit(in_flight) + skew)

    gap_1 = F.col("leader_leo_1") - F.col("successor_leo_1")
    gap_2 = F.col("leader_leo_2") - F.col("successor_leo_2")
    persists = F.coalesce((gap_1 > allowed(1)) & (gap_2 > allowed(2)), F.lit(False))
    fetcher_lags = F.coalesce(consumer_lag > F.lit(max_lag), F.lit(False))
    d = d.where(persists | fetcher_lags).select(
        "cluster_id",
        F.col("leader").alias("broker_id"),
        "topic",
        "successor",
        F.when(persists, F.least(gap_1, gap_2)).alias("window"),
        F.when(fetcher_lags, consumer_lag).alias("consumer_lag"),
        F.when(persists, F.ceil(allowed(1)).cast("long")).alias(
            "allowance"
        ),  # a whole count on both engines (DuckDB's ceil is a double)
        partition_name().alias("name"),
    )
    d = d.withColumn(
        "behind", F.greatest(F.coalesce("window", F.lit(0)), F.coalesce("consumer_lag", F.lit(0)))
    )
    d = ranked(ranked(d, BROKER_KEYS, "name", "_pr"), BROKER_KEYS, "topic", "_tr")
    d = d.groupBy("cluster_id", "broker_id").agg(
        F.count(F.lit(1)).alias("partition_count"),
        first_members("name", "_pr", n).alias("partitions"),
        F.countDistinct("topic").alias("topic_count"),
        first_members("topic", "_tr", n).alias("topics"),
        F.max("behind").alias("max_lag"),
        F.max("window").alias("max_window"),
        F.max("consumer_lag").alias("max_consumer_lag"),
        F.max("allowance").alias("max_allowance"),
        F.sort_array(F.collect_set("successor")).alias("successors"),
    )
    sources = F.filter(
        F.array(
            F.when(F.col("max_consumer_lag").isNotNull(), F.lit("ConsumerLag")),
            F.when(F.col("max_window").isNotNull(), F.lit("LogEndOffset")),
        ),
        lambda x: x.isNotNull(),
    )
    how = F.array_join(
        F.filter(
            F.array(
                F.when(
                    F.col("max_consumer_lag").isNotNull(),
                    text("the follower's own fetcher reports ConsumerLag up to ", F.col("max_consumer_lag")),
                ),
                F.when(
                    F.col("max_window").isNotNull(),
                    text(
                        "its log end is behind by up to ",
                        F.col("max_window"),
                        " record(s) in each of two scrapes, above the ",
                        F.col("max_allowance"),
                        " in flight at the leader's append rate",
                    ),
                ),
            ),
            lambda x: x.isNotNull(),
        ),
        "; ",
    )
    msg = text(
        "restarting broker ",
        F.col("broker_id"),
        " hands ",
        F.col("partition_count"),
        " partition(s) it leads to a follower that lags persistently (",
        how,
        "): the records that follower lacks when the controller elects it are truncated from broker ",
        F.col("broker_id"),
        " when it rejoins, so acks=1 writes acknowledged beyond them are lost (acks=all writes are not; "
        "the few acks=1 writes in flight on a healthy follower are lost on any leader change and are not "
        "counted here); it blocks nothing else: restart it once the followers ",
        int_list(F.col("successors")),
        " catch up, or accept that loss: ",
        listing(F.col("partitions"), F.col("partition_count"), n),
    )
    evidence = ev(
        partition_count=F.col("partition_count"),
        partitions=F.col("partitions"),
        topic_count=F.col("topic_count"),
        topics=F.col("topics"),
        max_lag=F.col("max_lag"),
        max_window=F.col("max_window"),
        max_consumer_lag=F.col("max_consumer_lag"),
        in_flight_allowance=F.col("max_allowance"),
        sources=sources,
        lagging_successors=F.col("successors"),
        lag_threshold=F.lit(max_lag),
        in_flight_ms=F.lit(in_flight),
    )
    return emit(d, "broker", F.col("broker_id").cast("string"), msg, evidence)
