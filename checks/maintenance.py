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
from checks.transforms import partition_name, registered_as, topic_settings

CATEGORY = Category("MNT", "maintenance", "pre-maintenance", tuple(range(1, 5)))

COORDINATOR_TOPICS = ("__consumer_offsets", "__transaction_state")
_MAX_LISTED = Param(
    "max_listed",
    20,
    "how many partitions, topics or groups the message and evidence list "
    "(sorted; the counts are never capped)",
)


def restart_impact(t):
    """One row per (registered broker B, partition B hosts or is in the ISR of) that restarting
    B hits: cluster_id, broker_id, topic, partition, name, replicas, isr, leader,
    min_insync_replicas, replication_factor, in_isr, remaining_isr (ISR size without B),
    already_failing (the partition is already below min.insync.replicas or has no leader),
    offline (B is its last in-sync replica: the restart takes it offline), strimzi_skips
    (replicas <= min.insync.replicas: Strimzi's roller lets these through).

    A partition is hit when B is in its ISR and the ISR without B is below min.insync.replicas
    or empty, or when the partition is already failing (ISR below min.insync.replicas, empty
    ISR, leader -1): then every registered replica holder is hit, in sync or not."""
    settings = t.derived(topic_settings).select("cluster_id", "topic", "min_insync_replicas")
    base = t.partitions.select("cluster_id", "topic", "partition", "leader", "replicas", "isr")
    holders = (
        base.select("cluster_id", "topic", "partition", F.explode(F.col("replicas")).alias("broker_id"))
        .unionByName(
            base.select("cluster_id", "topic", "partition", F.explode(F.col("isr")).alias("broker_id"))
        )
        .distinct()
    )
    parts = join(holders, base, ["cluster_id", "topic", "partition"])
    live = registered_as(t, "broker_id", "registered")
    d = join(join(parts, live, ["cluster_id", "broker_id"]), settings, ["cluster_id", "topic"], "left")
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


def _impact(t):
    return t.derived(restart_impact)


def _ranked(d, col: str, alias: str):
    """Add ``alias``: the dense rank of ``col`` among the rows of one (cluster, broker)."""
    w = Window.partitionBy("cluster_id", "broker_id").orderBy(F.col(col).asc_nulls_last())
    return d.withColumn(alias, F.dense_rank().over(w))


def _capped(col: str, rank: str, n: int):
    """Aggregate: the first n distinct values of ``col`` (by ``rank``), sorted, nulls dropped.
    Capping by rank, not F.slice: sqlframe's DuckDB slice returns one element too many, and
    DuckDB's collect_set keeps a null where Spark's drops it."""
    chosen = F.collect_set(F.when(F.col(rank) <= F.lit(n), F.col(col)))
    return F.sort_array(F.filter(chosen, lambda x: x.isNotNull()))


def _listing(col, count, n: int):
    """'a, b, c' (+ ' ... and K more' past n), from a sorted capped array and its full count."""
    more = F.when(count > F.lit(n), text(" ... and ", (count - F.lit(n)).cast("string"), " more")).otherwise(
        F.lit("")
    )
    return text(F.array_join(col, ", "), more)


def _per_broker(d, n: int):
    d = _ranked(_ranked(d, "name", "_pr"), "topic", "_tr")
    return d.groupBy("cluster_id", "broker_id").agg(
        F.count(F.lit(1)).alias("partition_count"),
        _capped("name", "_pr", n).alias("partitions"),
        F.countDistinct("topic").alias("topic_count"),
        _capped("topic", "_tr", n).alias("topics"),
        F.sum(F.when(F.col("strimzi_skips"), F.lit(1)).otherwise(F.lit(0))).alias("strimzi_skipped"),
        F.sum(F.when(F.col("leader") == F.col("broker_id"), F.lit(1)).otherwise(F.lit(0))).alias(
            "led_by_broker"
        ),
        F.min("remaining_isr").alias("min_remaining_isr"),
        F.sum(F.when(F.col("already_failing"), F.lit(1)).otherwise(F.lit(0))).alias("already_failing"),
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
def restart_blocks_writes(t, p):
    """Restarting this broker now would drop partitions below their effective min.insync.replicas: acks=all writes to them block while it is down.

    Why: a restarted broker leaves the ISR of every partition it replicates until it is
    back and caught up. Where the ISR without it is smaller than min.insync.replicas, the
    leader rejects acks=all produce requests (NOT_ENOUGH_REPLICAS) for the whole restart
    and catch-up, and offset commits fail when the partition is `__consumer_offsets`
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
    - Amazon MSK: version upgrade best practices (minISR at most RF - 1) <https://docs.aws.amazon.com/msk/latest/developerguide/version-upgrades-best-practices.html>
    - AWS Knowledge Center: avoid disruption during MSK security patching <https://repost.aws/knowledge-center/msk-avoid-disruption-during-patching>
    """
    n = p["max_listed"]
    d = _per_broker(_impact(t).where(~F.col("offline")), n)
    listed = _listing(F.col("partitions"), F.col("partition_count"), n)
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
            "min.insync.replicas: acks=all writes block until it is back in sync",
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
def restart_takes_offline(t, p):
    """This broker is the only in-sync replica of some partitions: restarting it takes them offline.

    Why: when the last in-sync replica goes down nobody can take over leadership (with
    unclean.leader.election.enable=false, the default): the partition cannot be read or
    written until that broker is back, and when it is a `__consumer_offsets` partition its
    consumer groups lose their coordinator (MNT003). With unclean election on, an
    out-of-sync replica takes over and acknowledged writes are lost instead. This covers
    single-replica partitions (REP003) and partitions whose other replicas fell out of
    the ISR.

    Remediation: do not restart the broker until the partitions have another in-sync
    replica: find why the other replicas are out of sync (PAR005: broker down, failed log
    dir, fetcher lag), and give single-replica topics a replication factor of 3 with
    `kafka-reassign-partitions` before any maintenance.

    Example: `ads.clicks-3` with replicas [4, 1, 2] and ISR [4]: restarting broker 4 takes
    it offline.

    References:
    - Kafka documentation: unclean leader election <https://kafka.apache.org/39/documentation.html#design_uncleanleader>
    - Kafka documentation: graceful shutdown <https://kafka.apache.org/39/documentation.html#basic_ops_restarting>
    - AWS Knowledge Center: avoid disruption during MSK security patching <https://repost.aws/knowledge-center/msk-avoid-disruption-during-patching>
    """
    n = p["max_listed"]
    d = _per_broker(_impact(t).where(F.col("offline")), n)
    msg = text(
        "broker ",
        F.col("broker_id"),
        " is the only in-sync replica of ",
        F.col("partition_count"),
        " partition(s) of ",
        F.col("topic_count"),
        " topic(s): restarting it takes them offline: ",
        _listing(F.col("partitions"), F.col("partition_count"), n),
    )
    evidence = ev(
        partition_count=F.col("partition_count"),
        partitions=F.col("partitions"),
        topic_count=F.col("topic_count"),
        topics=F.col("topics"),
        led_by_broker=F.col("led_by_broker"),
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
def restart_stalls_consumer_groups(t, p):
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
    n = p["max_listed"]
    hit = (
        _impact(t)
        .where(F.col("topic").isin(*COORDINATOR_TOPICS))
        .select("cluster_id", "broker_id", "topic", "partition", "name", "offline")
    )
    groups = t.consumer_groups.where(
        F.col("group_id").isNotNull() & F.col("coordinator_partition").isNotNull()
    ).select(
        "cluster_id",
        F.col("coordinator_partition").alias("partition"),
        "group_id",
        F.lit("__consumer_offsets").alias("topic"),
    )
    d = _ranked(
        _ranked(join(hit, groups, ["cluster_id", "topic", "partition"], "left"), "name", "_pr"),
        "group_id",
        "_gr",
    )
    d = d.groupBy("cluster_id", "broker_id").agg(
        F.countDistinct("name").alias("partition_count"),
        _capped("name", "_pr", n).alias("partitions"),
        F.countDistinct(F.when(F.col("offline"), F.col("name"))).alias("offline_count"),
        F.countDistinct("group_id").alias("group_count"),
        _capped("group_id", "_gr", n).alias("groups"),
        F.max(F.when(F.col("topic") == "__transaction_state", F.lit(1)).otherwise(F.lit(0))).alias("txn"),
    )
    groups_text = F.when(
        F.col("group_count") > 0,
        text(
            "; ",
            F.col("group_count"),
            " consumer group(s) mapped to them stall: ",
            _listing(F.col("groups"), F.col("group_count"), n),
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
        _listing(F.col("partitions"), F.col("partition_count"), n),
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
def no_safe_roll(t, p):
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
        _impact(t)
        .select("cluster_id", "broker_id")
        .distinct()
        .groupBy("cluster_id")
        .agg(F.count(F.lit(1)).alias("unsafe_count"))
    )
    brokers = t.brokers.groupBy("cluster_id").agg(
        F.count(F.lit(1)).alias("broker_count"), F.sort_array(F.collect_list("broker_id")).alias("broker_ids")
    )
    names = t.clusters.select("cluster_id", F.col("cluster_name").alias("cluster"))
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
