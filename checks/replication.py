"""REP: replication and durability, from assignments and effective topic configuration."""

from auditor.declarations import Category, Inherits, Param, rule
from checks._api import F, Window, emit, ev, join, text
from checks.transforms import (
    KAFKA_DEFAULT,
    SHARE_GROUPS_SINCE,
    SHARE_STATE_TOPIC,
    SOURCE_NAMES,
    STRICT_MIN_ISR_SINCE,
    TOPIC,
    broker_counts,
    cluster_brokers,
    cluster_settings,
    cluster_versions,
    int_list,
    kafka_defaults,
    partition_name,
    replica_lists,
    replica_placement,
    topic_durability,
    topic_replication,
    try_int,
    try_long,
)

CATEGORY = Category("REP", "replication", "replication and durability", tuple(range(1, 13)))


def _durability(tables):
    return tables.derived(topic_durability)


def source_name(prec):
    """The name of a config layer (SOURCE_NAMES) as a column."""
    out = F.lit(None).cast("string")
    for code, name in SOURCE_NAMES.items():
        out = F.when(prec == code, F.lit(name)).otherwise(out)
    return out


_DEFAULT_KEYS = ("min.insync.replicas", "default.replication.factor", "unclean.leader.election.enable")


def broker_defaults(tables):
    """One row per cluster: the broker-level settings a topic created without overrides gets
    (min_isr, default_rf, unclean), each with its layer (``*_prec``). This is how a
    broker-only change (a server.properties in review, a snapshot of configs alone) is
    judged on its own, before any topic inherits it."""
    s = tables.derived(cluster_settings).where(F.col("key").isin(*_DEFAULT_KEYS))
    wide = s.groupBy("cluster_id").agg(
        *[
            agg
            for key, name in zip(_DEFAULT_KEYS, ("min_isr", "default_rf", "unclean"), strict=True)
            for agg in (
                F.max(F.when(F.col("key") == key, F.col("value"))).alias(name),
                F.max(F.when(F.col("key") == key, F.col("prec"))).alias(name + "_prec"),
            )
        ]
    )
    return wide.select(
        "cluster_id",
        try_int("min_isr").alias("min_isr"),
        "min_isr_prec",
        try_int("default_rf").alias("default_rf"),
        "default_rf_prec",
        F.lower(F.trim(F.col("unclean"))).alias("unclean"),
        "unclean_prec",
    )


def _defaults_finding(d, message):
    """A broker-level finding about the defaults new topics get: the resource is the setting
    that was set (min.insync.replicas when both were), located at its file and line by lint."""
    set_here = F.col("min_isr_prec") < KAFKA_DEFAULT
    key = F.when(set_here, F.lit("min.insync.replicas")).otherwise(F.lit("default.replication.factor"))
    return emit(
        d,
        "config",
        key,
        message,
        ev(
            min_insync_replicas=F.col("min_isr"),
            min_insync_replicas_source=source_name(F.col("min_isr_prec")),
            default_replication_factor=F.col("default_rf"),
            default_replication_factor_source=source_name(F.col("default_rf_prec")),
        ),
    )


def _explicit_defaults(tables):
    d = tables.derived(broker_defaults)
    return d.where((F.col("min_isr_prec") < KAFKA_DEFAULT) | (F.col("default_rf_prec") < KAFKA_DEFAULT))


def _evidence(**extra):
    return ev(
        replication_factor=F.col("rf_min"),
        replication_factor_max=F.col("rf_max"),
        min_insync_replicas=F.col("min_insync_replicas"),
        min_insync_replicas_source=F.col("min_insync_replicas_source"),
        partitions=F.col("partition_count"),
        **extra,
    )


def _min_isr_against_rf(tables, topics_where, topics_say, defaults_where, defaults_say):
    """REP001/REP002: the topics whose min.insync.replicas compares so with their replica
    count, and the explicit cluster defaults that give every new topic the same."""
    topic_msg = text(
        "min.insync.replicas=",
        F.col("min_insync_replicas"),
        " (",
        F.col("min_insync_replicas_source"),
        ") ",
        *topics_say,
    )
    topics = emit(
        _with_versions(tables, _durability(tables)).where(topics_where),
        "topic",
        F.col("topic"),
        topic_msg,
        _evidence(strict_min_isr=F.col("strict"), kafka_version_low=F.col("low_v")),
    )
    default_msg = text(
        "min.insync.replicas=",
        F.col("min_isr"),
        " (",
        source_name(F.col("min_isr_prec")),
        ") ",
        *defaults_say,
    )
    defaults = _defaults_finding(
        _with_versions(tables, _explicit_defaults(tables)).where(defaults_where), default_msg
    )
    return topics.unionByName(defaults)


def _with_versions(tables, d):
    """``strict``: every broker of the cluster (its lowest version, else the cluster's) runs
    Kafka 3.7+, which applies min(min.insync.replicas, replica count) (KAFKA-15583); false
    when a broker is older or the version is unknown (older brokers keep the raw value)."""
    v = tables.derived(cluster_versions).select("cluster_id", "low_v")
    return join(d, v, "cluster_id", "left").withColumn(
        "strict", F.coalesce(F.col("low_v") >= F.lit(STRICT_MIN_ISR_SINCE), F.lit(False))
    )


def _old_brokers():
    """Why a cluster is judged by the raw min.insync.replicas (a function: a column built at
    import would load sqlframe whenever the rules are registered, lint's path included)."""
    return F.when(F.col("low_v").isNull(), F.lit("the Kafka version is unknown")).otherwise(
        F.lit("a broker runs Kafka before 3.7")
    )


_CONSUMERS_STOP = " and stops consumers (Kafka 3.7+ leaders do not advance the high watermark below min ISR)"


@rule(
    "REP001",
    "min-isr-unsatisfiable",
    "critical",
    needs=(("topics", "configs"),),
    uses=(broker_defaults, topic_durability, cluster_versions),
    runs_in=("lint",),
    cause=Inherits("min.insync.replicas", "min_insync_replicas", "min_insync_replicas_source"),
)
def min_isr_unsatisfiable(tables, params):
    """min.insync.replicas is greater than the topic's replica count on brokers before Kafka 3.7: acks=all writes always fail.

    Why: a leader before Kafka 3.7 accepts an acks=all write only when at least
    min.insync.replicas replicas are in sync. With fewer replicas than that, every such
    write fails with NOT_ENOUGH_REPLICAS, even on a perfectly healthy cluster; acks=0/1
    writes still succeed and reach consumers. Since Kafka 3.7 (KAFKA-15583) the leader
    applies min(min.insync.replicas, replica count) instead, so on a cluster whose brokers
    all run 3.7+ the value acts as equal to the replica count: that is REP002 (one restart
    blocks producers and stops consumers), and this rule does not fire. A cluster with a
    broker before 3.7, or of unknown version, is judged by the raw value: partitions led
    by an older broker keep it.

    Remediation: lower the topic's min.insync.replicas to replication factor - 1
    (`kafka-configs --alter --entity-type topics --entity-name T --add-config
    min.insync.replicas=2`), or raise the replication factor with a reassignment.
    When the value comes from the broker default, fix the default instead.

    Also judged on the broker defaults alone (a server.properties in review, before any
    topic inherits them): a broker-level min.insync.replicas above default.replication.factor
    makes every topic created without an explicit factor unwritable with acks=all.

    Example: topic `audit-log` with 2 replicas and min.insync.replicas=3 on Kafka 3.6.

    References:
    - Kafka topic config min.insync.replicas <https://kafka.apache.org/39/documentation.html#topicconfigs_min.insync.replicas>
    - Kafka broker config min.insync.replicas <https://kafka.apache.org/39/documentation.html#brokerconfigs_min.insync.replicas>
    - KAFKA-15583, apache/kafka PR #14594 (first in 3.7.0): core/src/main/scala/kafka/cluster/Partition.scala effectiveMinIsr <https://github.com/apache/kafka/pull/14594>
    """
    return _min_isr_against_rf(
        tables,
        (F.col("min_insync_replicas") > F.col("rf_min")) & ~F.col("strict"),
        (
            "exceeds the replica count ",
            F.col("rf_min"),
            " and ",
            _old_brokers(),
            " (such brokers apply it as set): every acks=all write fails with NOT_ENOUGH_REPLICAS, "
            "even on a healthy cluster; acks=0/1 writes still reach consumers. Kafka 3.7+ caps it "
            "at the replica count (then REP002 applies)",
        ),
        (F.col("min_isr") > F.col("default_rf")) & ~F.col("strict"),
        (
            "exceeds default.replication.factor=",
            F.col("default_rf"),
            " (",
            source_name(F.col("default_rf_prec")),
            ") and ",
            _old_brokers(),
            ": every topic created without an explicit replication factor rejects acks=all writes",
        ),
    )


@rule(
    "REP002",
    "min-isr-equals-rf",
    "error",
    needs=(("topics", "configs"),),
    uses=(broker_defaults, topic_durability, cluster_versions),
    runs_in=("preflight", "lint"),
    cause=Inherits("min.insync.replicas", "min_insync_replicas", "min_insync_replicas_source"),
)
def min_isr_equals_rf(tables, params):
    """min.insync.replicas equals the replica count: any single broker restart blocks acks=all producers.

    Why: with min.insync.replicas == replication factor every replica must stay in sync.
    One broker restart (an MSK monthly patch, a rolling upgrade, a crash) drops the ISR
    below the minimum and acks=all producers fail with NOT_ENOUGH_REPLICAS until it is
    back. On `__consumer_offsets` it also blocks offset commits: consumer groups stall
    (an MSK monthly patch on such topics blocked every acks=all producer while each broker
    restarted, and the consumer downstream stalled and never resumed). Since Kafka 3.7
    (KAFKA-15583) the leader also stops advancing the high watermark while the ISR is below
    min ISR, so during the restart consumers receive no new records, whatever acks the
    producers use; and a min.insync.replicas ABOVE the replica count is applied as the
    replica count, so it falls here too (on a cluster whose brokers all run 3.7+; older
    ones are REP001). Strimzi and MSK roll brokers anyway in this state. MSK recommends
    min.insync.replicas of at most RF - 1.

    Remediation: set min.insync.replicas to replication factor - 1 (RF 3: 2) on the topic,
    or on the broker default when the value is inherited:
    `kafka-configs --alter --entity-type topics --entity-name T --add-config min.insync.replicas=2`.

    Also judged on the broker defaults alone: a broker-level min.insync.replicas equal to
    default.replication.factor (above 1) gives that trap to every topic created without an
    explicit factor.

    Example: topic `orders` with RF 3 and min.insync.replicas=3.

    References:
    - Kafka topic config min.insync.replicas <https://kafka.apache.org/39/documentation.html#topicconfigs_min.insync.replicas>
    - KAFKA-15583, apache/kafka PR #14594 (first in 3.7.0): Partition.scala effectiveMinIsr and maybeIncrementLeaderHW <https://github.com/apache/kafka/pull/14594>
    - Amazon MSK: version upgrade best practices (minISR at most RF - 1) <https://docs.aws.amazon.com/msk/latest/developerguide/version-upgrades-best-practices.html>
    - AWS Knowledge Center: avoid disruption during MSK security patching <https://repost.aws/knowledge-center/msk-avoid-disruption-during-patching>
    """
    capped = F.col("strict") & (F.col("min_insync_replicas") > F.col("rf_min"))
    return _min_isr_against_rf(
        tables,
        ((F.col("min_insync_replicas") == F.col("rf_min")) | capped) & (F.col("rf_min") > 1),
        (
            F.when(
                capped,
                text(
                    "exceeds the replica count ",
                    F.col("rf_min"),
                    "; Kafka 3.7+ applies it as ",
                    F.col("rf_min"),
                    " (KAFKA-15583)",
                ),
            ).otherwise(F.lit("equals the replica count")),
            ": one broker restart blocks acks=all producers (NOT_ENOUGH_REPLICAS)",
            F.when(F.col("topic") == "__consumer_offsets", F.lit(" and consumer offset commits")).otherwise(
                F.lit("")
            ),
            F.when(F.col("strict"), F.lit(_CONSUMERS_STOP)).otherwise(F.lit("")),
        ),
        (
            (F.col("min_isr") == F.col("default_rf"))
            | (F.col("strict") & (F.col("min_isr") > F.col("default_rf")))
        )
        & (F.col("default_rf") > 1),
        (
            F.when(
                F.col("min_isr") > F.col("default_rf"), F.lit("exceeds (Kafka 3.7+ applies it as)")
            ).otherwise(F.lit("equals")),
            " default.replication.factor (",
            source_name(F.col("default_rf_prec")),
            "): every topic created without an explicit replication factor blocks acks=all producers "
            "during any single broker restart",
            F.when(F.col("strict"), F.lit(_CONSUMERS_STOP)).otherwise(F.lit("")),
        ),
    )


@rule(
    "REP003",
    "single-replica",
    "error",
    needs=("topics",),
    uses=(broker_counts, topic_durability),
    runs_in=("preflight", "lint"),
)
def single_replica(tables, params):
    """A topic has partitions with a single replica: they go offline whenever their broker restarts.

    Why: with one replica there is no other copy to lead. Every restart, patch or disk
    failure of that broker makes those partitions unavailable, and a lost disk loses data.

    Remediation: increase the replication factor to 3 with `kafka-reassign-partitions`
    (a reassignment JSON listing three replicas per partition), and set
    default.replication.factor=3 so new topics do not repeat it.

    A single-broker cluster (a development compose file, a quickstart) gets its own
    judgement, as in REP006: one replica is the most it can hold (Kafka refuses a larger
    factor with INVALID_REPLICATION_FACTOR), so the finding is `info` there, saying so, and
    does not fail a change review; the same topic on a cluster of several brokers is an
    `error`. A cluster whose brokers are unknown (topic files alone) is judged as one of
    several.

    Example: topic `clickstream-raw` created with --replication-factor 1.

    References:
    - Kafka documentation: increasing replication factor <https://kafka.apache.org/39/documentation.html#basic_ops_increase_replication_factor>
    - AWS Knowledge Center: avoid disruption during MSK security patching <https://repost.aws/knowledge-center/msk-avoid-disruption-during-patching>
    - apache/kafka server-common AdminUtils.assignReplicasToBrokers: "Replication factor: N larger than available brokers" (InvalidReplicationFactorException) <https://github.com/apache/kafka/blob/trunk/server-common/src/main/java/org/apache/kafka/admin/AdminUtils.java>
    """
    single = _durability(tables).where(F.col("rf_min") == 1)
    d = join(single, cluster_brokers(tables).select("cluster_id", "broker_count"), "cluster_id", "left")
    alone = F.coalesce(F.col("broker_count") == 1, F.lit(False))
    msg = text(
        F.col("single_replica_partitions"),
        " of ",
        F.col("partition_count"),
        " partition(s) have a single replica: offline whenever their broker restarts",
        F.when(alone, F.lit(" (a single-broker cluster: one replica is the most it can hold)")).otherwise(
            F.lit("")
        ),
    )
    severity = F.when(alone, F.lit("info"))
    return emit(d, "topic", F.col("topic"), msg, _evidence(brokers=F.col("broker_count")), severity)


# -- REP004-REP010 -------------------------------------------------------------------------

# Kafka's coordinator state topics (clients Topic.java INTERNAL_TOPICS): consumer offsets, transaction
# state and, since 4.0 (KIP-932), share-group state.
INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state", SHARE_STATE_TOPIC)
SHARE_STATE_RF = "share.coordinator.state.topic.replication.factor"


OVERRIDE = SOURCE_NAMES[TOPIC]


def _inheriting(d, source, max_listed: int):
    """The topics of ``d`` that inherit their value (``source`` is not a topic override), one
    row per cluster and source: how many (``inheriting``), the first ``max_listed`` by name
    (``listed``), their largest replica count (``rf_max``). A default is one setting: one
    finding about it, not one per topic that inherits it."""
    rows = d.withColumn("_source", source).where(F.col("_source") != OVERRIDE)
    # Capped by rank (sqlframe's DuckDB slice returns one element too many); array_compact
    # because DuckDB's collect_list keeps nulls.
    rows = rows.withColumn(
        "_rn", F.row_number().over(Window.partitionBy("cluster_id", "_source").orderBy("topic"))
    )
    return rows.groupBy("cluster_id", F.col("_source").alias("source")).agg(
        F.count(F.lit(1)).alias("inheriting"),
        F.sort_array(
            F.array_compact(F.collect_list(F.when(F.col("_rn") <= max_listed, F.col("topic"))))
        ).alias("listed"),
        F.max("rf_max").alias("rf_max"),
    )


def _topic_list(max_listed: int):
    more = F.when(F.col("inheriting") > max_listed, F.lit(", ...")).otherwise(F.lit(""))
    return text(" (", F.array_join(F.col("listed"), ", "), more, ")")


_MAX_LISTED = Param(
    "max_listed", 20, "how many inheriting topics the cluster-level finding names (all are counted)"
)


@rule(
    "REP004",
    "min-isr-one",
    "warning",
    needs=("topics",),
    params=(_MAX_LISTED,),
    uses=(topic_durability,),
    runs_in=("lint",),
    cause=Inherits("min.insync.replicas", "min_insync_replicas", "min_insync_replicas_source"),
)
def min_isr_one(tables, params):
    """min.insync.replicas is 1 on topics with three or more replicas: an acknowledged write can live on one disk.

    Why: with min.insync.replicas=1 a leader acknowledges an acks=all write as soon as it
    alone has it whenever its followers have fallen out of the ISR (a slow disk, a network
    blip, a restart). If that leader's disk then fails, acknowledged data is gone although
    the topic has three replicas. Kafka's default is 1, so every topic without an override
    inherits it. Where the value comes from decides the finding: topics that set 1
    themselves (a topic override) get one finding each; topics that inherit it (from a
    dynamic broker or cluster default, server.properties or Kafka's default) share one
    finding per cluster about the setting (resource: min.insync.replicas), with how many
    topics inherit it and the first of them by name (a parameter): one change of the
    default fixes them all. In lint, that finding is reported where the value is set (a
    broker file), else at each linted topic that inherits it.

    Remediation: set min.insync.replicas to replication factor - 1 (RF 3: 2), on the topic
    (`kafka-configs --alter --entity-type topics --entity-name T --add-config
    min.insync.replicas=2`) or for the whole cluster (`--entity-type brokers
    --entity-default`), and produce with acks=all.

    Example: 40 topics with RF 3 inheriting Kafka's default min.insync.replicas=1 (one
    finding); topic `payments.ledger` with RF 3 and its own override min.insync.replicas=1
    (one more).

    References:
    - Kafka topic config min.insync.replicas <https://kafka.apache.org/39/documentation.html#topicconfigs_min.insync.replicas>
    - Kafka broker config min.insync.replicas (the cluster-wide default) <https://kafka.apache.org/39/documentation.html#brokerconfigs_min.insync.replicas>
    - AWS Knowledge Center: avoid disruption during MSK security patching <https://repost.aws/knowledge-center/msk-avoid-disruption-during-patching>
    """
    d = _durability(tables).where((F.col("min_insync_replicas") == 1) & (F.col("rf_max") >= 3))
    consequence = " an acks=all write can be acknowledged by the leader alone and lost with its disk"
    msg = text(
        "min.insync.replicas=1 (",
        F.col("min_insync_replicas_source"),
        ") with ",
        F.col("rf_max"),
        " replicas:",
        consequence,
    )
    overrides = emit(
        d.where(F.col("min_insync_replicas_source") == OVERRIDE), "topic", F.col("topic"), msg, _evidence()
    )
    inherited = _inheriting(d, F.col("min_insync_replicas_source"), params["max_listed"])
    inherited_msg = text(
        "min.insync.replicas=1 (",
        F.col("source"),
        ") is inherited by ",
        F.col("inheriting"),
        " topic(s) with 3 or more replicas",
        _topic_list(params["max_listed"]),
        ":",
        consequence,
        "; set it for the cluster, not per topic",
    )
    defaults = emit(
        inherited,
        "config",
        F.lit("min.insync.replicas"),
        inherited_msg,
        ev(
            min_insync_replicas=F.lit(1),
            min_insync_replicas_source=F.col("source"),
            topics_inheriting=F.col("inheriting"),
            topics=F.col("listed"),
            replication_factor_max=F.col("rf_max"),
        ),
    )
    return overrides.unionByName(defaults)


@rule(
    "REP005",
    "unclean-leader-election",
    "warning",
    needs=(("topics", "configs"),),
    params=(
        Param(
            "msk_unset_is_true",
            True,
            "on MSK Standard brokers (kafka.*), treat a value that only Kafka's default supplies as true: MSK's "
            "default configuration sets unclean.leader.election.enable=true on clusters without tiered storage",
        ),
        _MAX_LISTED,
    ),
    uses=(broker_defaults, topic_durability),
    runs_in=("lint",),
    cause=Inherits("unclean.leader.election.enable", "unclean_leader_election_enable", "source"),
)
def unclean_leader_election(tables, params):
    """Unclean leader election is enabled: an out-of-sync replica may become leader and drop acknowledged writes.

    Why: with unclean.leader.election.enable=true, when every in-sync replica is down Kafka
    elects a replica that is behind. The partition comes back sooner, but every write it
    had not replicated (acknowledged ones included) is truncated away, and consumers may
    see offsets go backwards. Kafka's default is false since 0.11.0 (KIP-106). Amazon MSK's
    default configuration for Standard brokers (a cluster created without a custom
    configuration) sets it to true for clusters without tiered storage, so on MSK Standard
    brokers (instance types kafka.*) a value that only Kafka's default supplies (the
    snapshot did not read the MSK configuration) is read as true (a parameter; turn it off
    for a tiered-storage cluster, whose column of AWS's table this rule does not read).
    That default is not read into other MSK clusters: Express brokers run
    unclean.leader.election.enable=false, read-only (AWS, Express broker read-only
    configurations), and on MSK Serverless AWS sets the broker configuration without
    documenting this value, so there (and where the broker type is unknown) only values
    the snapshot shows are judged.

    Where the value comes from decides the finding: a topic override gets one finding
    per topic; a broker-level value (server.properties, a dynamic broker or cluster
    default, MSK's or Kafka's default) is one finding per cluster about the setting
    (resource: unclean.leader.election.enable) with how many topics inherit it and the
    first of them by name (a parameter). A broker-level setting is reported even when no
    topic inherits it (a server.properties in review, a snapshot without topics); lint
    puts the finding at the line that sets it, else at each linted topic that inherits it.

    Remediation: set it to false on the topic (`kafka-configs --alter --entity-type topics
    --entity-name T --add-config unclean.leader.election.enable=false`) or cluster-wide
    (`--entity-type brokers --entity-default`, or in the MSK cluster configuration), and
    use `kafka-leader-election --election-type unclean` by hand when availability must win.

    Example: 30 topics of an MSK cluster created with the default configuration inherit
    unclean.leader.election.enable=true (one finding); topic `orders` sets it to true
    itself (one more).

    References:
    - Kafka topic config unclean.leader.election.enable <https://kafka.apache.org/39/documentation.html#topicconfigs_unclean.leader.election.enable>
    - Kafka documentation: unclean leader election <https://kafka.apache.org/39/documentation.html#design_uncleanleader>
    - KIP-106: Change default unclean.leader.election.enabled from true to false <https://cwiki.apache.org/confluence/display/KAFKA/KIP-106+-+Change+Default+unclean.leader.election.enabled+from+True+to+False>
    - Amazon MSK: default configuration ("Default value for non-tiered storage cluster") <https://docs.aws.amazon.com/msk/latest/developerguide/msk-default-configuration.html>
    - Amazon MSK: Express broker read-only configurations (unclean.leader.election.enable FALSE) <https://docs.aws.amazon.com/msk/latest/developerguide/msk-configuration-express-read-only.html>
    - Amazon MSK: configuration properties of MSK Serverless clusters (broker properties set by AWS) <https://docs.aws.amazon.com/msk/latest/developerguide/serverless-config.html>
    """
    clusters = tables.clusters.select(
        "cluster_id",
        F.lower(F.coalesce(F.col("platform"), F.lit(""))).alias("platform"),
        F.lower(F.trim(F.coalesce(F.col("msk_instance_type"), F.lit("")))).alias("instance_type"),
    )
    d = join(_durability(tables), clusters, "cluster_id", "left")
    from_default = F.col("unclean_leader_election_enable_source") == "Kafka default"
    # MSK's default configuration is the Standard brokers' (kafka.*); Express runs false, read-only.
    standard = (F.col("platform") == "msk") & F.col("instance_type").startswith("kafka.")
    msk_default = F.lit(params["msk_unset_is_true"]) & standard & from_default
    d = d.where(F.coalesce(F.col("unclean_leader_election_enable"), F.lit(False)) | msk_default)
    source = F.when(msk_default, F.lit("MSK default configuration")).otherwise(
        F.col("unclean_leader_election_enable_source")
    )
    consequence = (
        "if every in-sync replica fails, a lagging replica becomes leader and acknowledged writes are lost"
    )
    topics = emit(
        d.where(F.col("unclean_leader_election_enable_source") == OVERRIDE),
        "topic",
        F.col("topic"),
        text("unclean.leader.election.enable=true (", source, "): ", consequence),
        ev(unclean_leader_election_enable=F.lit(True), source=source, replication_factor=F.col("rf_min")),
    )
    # The broker-level value: the topics that inherit it, and the setting itself when set
    # explicitly (never Kafka's default, false), so that a server.properties in review or a
    # cluster whose topics are not in the snapshot does not pass silently.
    inherited = _inheriting(d, source, params["max_listed"])
    explicit = (
        tables.derived(broker_defaults)
        .where((F.col("unclean") == "true") & (F.col("unclean_prec") < KAFKA_DEFAULT))
        .select("cluster_id", source_name(F.col("unclean_prec")).alias("set_in"))
    )
    # The setting alone where no topic inherits it (inheriting 0, no topics listed).
    set_only = join(
        explicit.select("cluster_id", F.col("set_in").alias("source")),
        inherited.select("cluster_id", "source"),
        ["cluster_id", "source"],
        "left_anti",
    ).select(
        "cluster_id",
        "source",
        F.lit(0).cast("bigint").alias("inheriting"),
        F.array_except(F.array(F.col("source")), F.array(F.col("source"))).alias("listed"),
        F.lit(None).cast("int").alias("rf_max"),
    )
    per_cluster = inherited.unionByName(set_only)
    msg = text(
        "unclean.leader.election.enable=true (",
        F.col("source"),
        "): ",
        F.when(
            F.col("inheriting") > 0,
            text("inherited by ", F.col("inheriting"), " topic(s)", _topic_list(params["max_listed"])),
        ).otherwise(F.lit("every topic without an override inherits it")),
        "; ",
        consequence,
    )
    defaults = emit(
        per_cluster,
        "config",
        F.lit("unclean.leader.election.enable"),
        msg,
        ev(
            unclean_leader_election_enable=F.lit(True),
            source=F.col("source"),
            topics_inheriting=F.col("inheriting"),
            topics=F.col("listed"),
        ),
    )
    return topics.unionByName(defaults)


@rule(
    "REP006",
    "internal-topic-durability",
    "error",
    needs=(("topics", "configs"),),
    uses=(broker_counts, cluster_settings, cluster_versions, topic_replication),
    runs_in=("lint",),
)
def internal_topic_durability(tables, params):
    """Kafka's internal topics (consumer offsets, transaction state, share-group state) are less durable than the data they protect.

    Why: `__consumer_offsets` holds every consumer group's position, `__transaction_state`
    every transaction's outcome and, since Kafka 4.0 (KIP-932), `__share_group_state` every
    share group's delivery state (which records are acknowledged, how often each was
    delivered). With fewer than 3 replicas one broker failure makes part of them
    unavailable: groups mapped to a partition lose their coordinator, transactions hang,
    share consumers cannot acknowledge. offsets.topic.replication.factor,
    transaction.state.log.replication.factor and
    share.coordinator.state.topic.replication.factor (default 3) decide the factor when the
    topic is created (often by the first client, on a young cluster);
    transaction.state.log.min.isr at or above the factor blocks every transaction commit as
    soon as one replica is out of sync. Fires on the topics' actual replica counts and on
    the settings that will create them; the share-group setting only on clusters that may
    run 4.x (version 4.0 or later, or unknown): before 4.0 no broker reads it.
    share.coordinator.state.topic.min.isr (default 2) is not judged: Kafka documents it as
    the topic's min.insync.replicas override, but the share coordinator's topic configs
    (ShareCoordinatorService.shareGroupStateTopicConfigs) create the topic with
    cleanup.policy, compression.type and segment.bytes only, so the topic's effective
    min.insync.replicas is the cluster's (REP001/REP002/PAR002 judge that).

    Remediation: raise the internal topic's replication factor with
    `kafka-reassign-partitions` (a JSON listing 3 replicas per partition), and set
    offsets.topic.replication.factor=3, transaction.state.log.replication.factor=3,
    transaction.state.log.min.isr=2 and (4.x) share.coordinator.state.topic.replication.factor=3
    in server.properties (static settings: rolling restart).

    A single-broker cluster (a development quickstart) gets its own judgement: 3 replicas are
    impossible there and factor 1 is what Kafka's quickstart sets, so only a setting that
    cannot work is reported: transaction.state.log.min.isr above the factor. (Lint judges
    the files it is given as the cluster: lint one broker's file of a larger cluster with
    `--against` its snapshot.)

    Example: `__consumer_offsets` created with replication factor 1 on a cluster that began with one broker.

    References:
    - Kafka broker config offsets.topic.replication.factor <https://kafka.apache.org/39/documentation.html#brokerconfigs_offsets.topic.replication.factor>
    - Kafka broker config transaction.state.log.replication.factor <https://kafka.apache.org/39/documentation.html#brokerconfigs_transaction.state.log.replication.factor>
    - Kafka broker config transaction.state.log.min.isr <https://kafka.apache.org/39/documentation.html#brokerconfigs_transaction.state.log.min.isr>
    - apache/kafka server/src/main/java/org/apache/kafka/server/config/ShareCoordinatorConfig.java (share.coordinator.state.topic.replication.factor 3, .min.isr 2, .num.partitions 50) <https://github.com/apache/kafka/blob/trunk/server/src/main/java/org/apache/kafka/server/config/ShareCoordinatorConfig.java>
    - apache/kafka share-coordinator/src/main/java/org/apache/kafka/coordinator/share/ShareCoordinatorService.java (shareGroupStateTopicConfigs) <https://github.com/apache/kafka/blob/trunk/share-coordinator/src/main/java/org/apache/kafka/coordinator/share/ShareCoordinatorService.java>
    - KIP-932: Queues for Kafka (the share-group state topic) <https://cwiki.apache.org/confluence/display/KAFKA/KIP-932%3A+Queues+for+Kafka>
    """
    rep = tables.derived(topic_replication)
    # Brokers known to the snapshot; a cluster with none known is judged as a multi-broker one.
    counts = cluster_brokers(tables).select("cluster_id", "broker_count")
    topics = join(
        rep.where(F.col("topic").isin(*INTERNAL_TOPICS) & (F.col("rf_min") < 3)), counts, "cluster_id", "left"
    ).where(F.coalesce(F.col("broker_count"), F.lit(2)) > 1)
    topic_findings = emit(
        topics,
        "topic",
        F.col("topic"),
        text(
            F.col("topic"),
            " has ",
            F.col("rf_min"),
            " replica(s) (fewer than 3): one broker failure makes part of it unavailable and stalls the ",
            F.when(F.col("topic") == SHARE_STATE_TOPIC, F.lit("share groups")).otherwise(
                F.lit("consumer groups or transactions")
            ),
            " mapped there",
        ),
        ev(
            replication_factor=F.col("rf_min"),
            replication_factor_max=F.col("rf_max"),
            partitions=F.col("partition_count"),
        ),
    )

    keys = (
        "offsets.topic.replication.factor",
        "transaction.state.log.replication.factor",
        "transaction.state.log.min.isr",
        SHARE_STATE_RF,
    )
    s = tables.derived(cluster_settings).where(F.col("key").isin(*keys))
    wide = s.groupBy("cluster_id").agg(
        *[F.max(F.when(F.col("key") == k, F.col("value"))).alias(k.replace(".", "_")) for k in keys]
    )
    ts = rep.where(F.col("topic") == "__transaction_state").select(
        "cluster_id", F.col("rf_min").alias("ts_rf")
    )
    w = join(wide, ts, "cluster_id", "left").select(
        "cluster_id",
        "ts_rf",
        try_int("offsets_topic_replication_factor").alias("otrf"),
        try_int("transaction_state_log_replication_factor").alias("tsrf"),
        try_int("transaction_state_log_min_isr").alias("tsmin"),
        try_int(SHARE_STATE_RF.replace(".", "_")).alias("ssrf"),
    )
    w = w.withColumn("ts_effective_rf", F.coalesce(F.col("ts_rf"), F.col("tsrf")))
    w = join(w, counts, "cluster_id", "left").withColumn(
        "several", F.coalesce(F.col("broker_count"), F.lit(2)) > 1
    )
    versions = tables.derived(cluster_versions).select("cluster_id", "low_v")
    w = join(w, versions, "cluster_id", "left")
    evidence = ev(
        offsets_topic_replication_factor=F.col("otrf"),
        transaction_state_log_replication_factor=F.col("tsrf"),
        transaction_state_log_min_isr=F.col("tsmin"),
        transaction_state_replicas=F.col("ts_rf"),
        share_coordinator_state_topic_replication_factor=F.col("ssrf"),
    )
    otrf = emit(
        w.where((F.col("otrf") < 3) & F.col("several")),
        "config",
        F.lit("offsets.topic.replication.factor"),
        text(
            "offsets.topic.replication.factor=",
            F.col("otrf"),
            " (below 3): __consumer_offsets is created with that many replicas",
        ),
        evidence,
    )
    tsrf = emit(
        w.where((F.col("tsrf") < 3) & F.col("several")),
        "config",
        F.lit("transaction.state.log.replication.factor"),
        text(
            "transaction.state.log.replication.factor=",
            F.col("tsrf"),
            " (below 3): __transaction_state is created with that many replicas",
        ),
        evidence,
    )
    # min.isr equal to the factor blocks commits when a replica lags; above it, always (any cluster size).
    tsmin = emit(
        w.where(
            (F.col("tsmin") > F.col("ts_effective_rf"))
            | ((F.col("tsmin") == F.col("ts_effective_rf")) & F.col("several"))
        ),
        "config",
        F.lit("transaction.state.log.min.isr"),
        text(
            "transaction.state.log.min.isr=",
            F.col("tsmin"),
            " is not below the ",
            F.when(F.col("ts_rf").isNotNull(), F.lit("replica count of __transaction_state (")).otherwise(
                F.lit("transaction.state.log.replication.factor (")
            ),
            F.col("ts_effective_rf"),
            "): ",
            F.when(
                F.col("tsmin") > F.col("ts_effective_rf"), F.lit("every transaction commit fails")
            ).otherwise(F.lit("one replica out of sync blocks every transaction commit")),
        ),
        evidence,
    )
    # Read only by 4.x brokers (KIP-932): judged where the cluster may run 4.x.
    may_run_4 = F.coalesce(F.col("low_v") >= F.lit(SHARE_GROUPS_SINCE), F.lit(True))
    ssrf = emit(
        w.where((F.col("ssrf") < 3) & F.col("several") & may_run_4),
        "config",
        F.lit(SHARE_STATE_RF),
        text(
            SHARE_STATE_RF + "=",
            F.col("ssrf"),
            " (below 3): "
            + SHARE_STATE_TOPIC
            + " (share groups' delivery state) is created with that many replicas",
        ),
        evidence,
    )
    return topic_findings.unionByName(otrf).unionByName(tsrf).unionByName(tsmin).unionByName(ssrf)


@rule(
    "REP007",
    "replicas-share-rack",
    "warning",
    needs=("partitions", "brokers"),
    params=(
        Param("max_listed", 20, "how many affected partitions the finding lists by number (all are counted)"),
    ),
    uses=(replica_placement,),
)
def replicas_share_rack(tables, params):
    """A topic has partitions whose replicas sit in fewer racks than they could: one rack (AZ) outage takes them offline.

    Why: with broker.rack set, Kafka spreads a new topic's replicas over racks, but manual
    reassignments, tools that ignore racks, brokers added without broker.rack or racks
    added later leave partitions with two replicas in one rack. When that rack (an
    availability zone) fails, those partitions lose more replicas than needed: below
    min.insync.replicas they refuse acks=all writes, with all replicas in it they go
    offline. A partition fires when it spans fewer distinct racks than min(replication
    factor, racks in the cluster). A replica on a registered broker without broker.rack
    counts as no rack at all: nothing shows that it adds one (Kafka's KRaft placer puts
    every rack-less broker in one pseudo-rack, so it may share a real zone with another
    replica), and counting it as a distinct rack, as this rule did, hid exactly the
    partitions REP011's brokers put at risk. A replica on a broker that is not registered
    (REP008) still counts as a rack of its own: its rack is unknown, not missing. Only
    clusters with more than one rack are judged. One finding per topic; how many of its
    partitions it lists by number is a parameter (all are counted).

    Remediation: reassign the listed partitions so each replica is in a different rack:
    `kafka-reassign-partitions --generate` with rack-aware placement (the default when
    brokers have broker.rack), or Cruise Control's RackAwareGoal; set broker.rack on every
    broker.

    Example: `orders-3` with replicas [1, 4, 2] where brokers 1 and 4 are both in use1-az1.

    References:
    - Kafka documentation: balancing replicas across racks <https://kafka.apache.org/39/documentation.html#basic_ops_racks>
    - Kafka broker config broker.rack <https://kafka.apache.org/39/documentation.html#brokerconfigs_broker.rack>
    - apache/kafka metadata/src/main/java/org/apache/kafka/metadata/placement/StripedReplicaPlacer.java, RackList (rack-less brokers are one rack, Optional.empty()) <https://github.com/apache/kafka/blob/trunk/metadata/src/main/java/org/apache/kafka/metadata/placement/StripedReplicaPlacer.java>
    """
    d = tables.derived(replica_placement).where(F.col("rack_short"))
    # Cap the listed partitions by rank, not F.slice (sqlframe's DuckDB slice returns one
    # element too many); array_compact because DuckDB's collect_list keeps nulls.
    d = d.withColumn(
        "_rn", F.row_number().over(Window.partitionBy("cluster_id", "topic").orderBy("partition"))
    )
    per_topic = d.groupBy("cluster_id", "topic").agg(
        F.count(F.lit(1)).alias("affected"),
        F.sort_array(
            F.array_compact(F.collect_list(F.when(F.col("_rn") <= params["max_listed"], F.col("partition"))))
        ).alias("listed"),
        F.min("racks_used").alias("min_racks_used"),
        F.max("rf").alias("rf"),
        F.max("rack_count").alias("rack_count"),
        F.sum(F.when(F.col("rackless") > 0, F.lit(1)).otherwise(F.lit(0))).alias("on_rackless"),
    )
    listed = F.col("listed")
    more = F.when(F.col("affected") > params["max_listed"], F.lit(", ...")).otherwise(F.lit(""))
    msg = text(
        F.col("affected"),
        " partition(s) keep replicas in fewer racks than min(RF ",
        F.col("rf"),
        ", ",
        F.col("rack_count"),
        " racks) (partitions ",
        F.array_join(listed.cast("array<string>"), ","),
        more,
        "): one rack outage takes more replicas than necessary",
        F.when(
            F.col("on_rackless") > 0,
            text(
                "; ",
                F.col("on_rackless"),
                " of them have a replica on a broker without broker.rack, counted as no rack (REP011)",
            ),
        ).otherwise(F.lit("")),
    )
    return emit(
        per_topic,
        "topic",
        F.col("topic"),
        msg,
        ev(
            affected_partitions=F.col("affected"),
            partitions=listed,
            min_racks_used=F.col("min_racks_used"),
            replication_factor=F.col("rf"),
            racks_in_cluster=F.col("rack_count"),
            partitions_on_rackless_brokers=F.col("on_rackless"),
        ),
    )


@rule(
    "REP008",
    "replica-on-unknown-broker",
    "error",
    needs=("partitions", "brokers"),
    params=(
        Param(
            "max_listed",
            20,
            "how many of the broker's partitions the finding lists by name (all are counted)",
        ),
    ),
    uses=(broker_counts, replica_placement),
    cause="failure",
)
def replica_on_unknown_broker(tables, params):
    """Partitions have replicas assigned to a broker id that is not registered: one finding per such broker.

    Why: a replica on a broker that is not registered (decommissioned without a
    reassignment, a typo in a reassignment plan, a broker down long enough to lose its
    registration) is a copy that does not exist: each partition it holds runs with fewer
    replicas than its replication factor claims, and cannot regain them until the broker
    comes back. One broker down touches every partition it held, so the finding is the
    broker (resource: its id), with how many partitions it holds and the first of them by
    name (a parameter). Only judged for clusters whose brokers were collected.

    Remediation: bring the broker back with the same broker.id, or move its replicas to
    live brokers with `kafka-reassign-partitions --execute` (a plan that lists live
    brokers only), then verify with `--verify`.

    Example: broker 5 is not in `/brokers/ids` and holds replicas of 70 partitions, among
    them `ads.clicks-7` with replicas [4, 5, 1].

    References:
    - Kafka documentation: custom partition assignment and migration <https://kafka.apache.org/39/documentation.html#basic_ops_partitionassignment>
    - Kafka documentation: ZooKeeper broker node registry <https://kafka.apache.org/39/documentation.html#impl_zkbroker>
    """
    d = join(
        tables.derived(replica_placement).where(F.col("unregistered") > 0),
        cluster_brokers(tables).select("cluster_id", "broker_ids"),
        "cluster_id",
    )
    unknown = F.array_except(F.array_compact(F.col("replicas")), F.col("broker_ids"))
    d = d.select("cluster_id", "topic", "partition", F.explode(unknown).alias("broker_id"))
    # Cap the listed partitions by rank, not F.slice (sqlframe's DuckDB slice returns one
    # element too many); array_compact because DuckDB's collect_list keeps nulls.
    d = d.withColumn(
        "_rn",
        F.row_number().over(Window.partitionBy("cluster_id", "broker_id").orderBy("topic", "partition")),
    )
    name = partition_name()
    per_broker = d.groupBy("cluster_id", "broker_id").agg(
        F.count(F.lit(1)).alias("affected"),
        F.countDistinct("topic").alias("topics"),
        F.array_compact(F.collect_list(F.when(F.col("_rn") <= params["max_listed"], name))).alias("listed"),
    )
    more = F.when(F.col("affected") > params["max_listed"], F.lit(", ...")).otherwise(F.lit(""))
    msg = text(
        "broker ",
        F.col("broker_id"),
        " is not registered but holds replicas of ",
        F.col("affected"),
        " partition(s) of ",
        F.col("topics"),
        " topic(s) (",
        F.array_join(F.sort_array(F.col("listed")), ", "),
        more,
        "): each has fewer live replicas than its replication factor",
    )
    return emit(
        per_broker,
        "broker",
        F.col("broker_id").cast("string"),
        msg,
        ev(
            broker_id=F.col("broker_id"),
            affected_partitions=F.col("affected"),
            topics=F.col("topics"),
            partitions=F.sort_array(F.col("listed")),
        ),
    )


@rule(
    "REP009",
    "rf-below-az-count",
    "warning",
    needs=("topics",),
    uses=(broker_counts, topic_durability),
    runs_in=("preflight", "lint"),
)
def rf_below_az_count(tables, params):
    """A topic's replication factor is below the number of availability zones (up to 3): a zone outage during a restart can take it offline.

    Why: in a multi-AZ cluster each replica can sit in its own zone. With RF 2 in a 3-AZ
    cluster (or RF 1 in a 2-AZ cluster) a partition cannot survive the loss of one zone
    plus a broker restart, and an MSK patch of the surviving zone's broker during a zone
    event leaves it offline. AWS recommends RF 3 for 3-AZ MSK clusters (RF 2 for 2-AZ).
    The zone count is the manifest's az_count; on MSK without it, the number of distinct
    broker racks (MSK sets broker.rack to the AZ id).

    Remediation: raise the replication factor to min(AZs, 3) with `kafka-reassign-partitions`
    (one replica per zone), and set default.replication.factor accordingly.

    Example: topic `clickstream` with RF 2 on a 3-AZ MSK cluster.

    References:
    - AWS Knowledge Center: avoid disruption during MSK security patching <https://repost.aws/knowledge-center/msk-avoid-disruption-during-patching>
    - Amazon MSK: default configuration <https://docs.aws.amazon.com/msk/latest/developerguide/msk-default-configuration.html>
    """
    clusters = tables.clusters.select(
        "cluster_id", "az_count", F.lower(F.coalesce(F.col("platform"), F.lit(""))).alias("platform")
    )
    c = join(
        clusters, cluster_brokers(tables).select("cluster_id", "rack_count"), "cluster_id", "left"
    ).select(
        "cluster_id",
        F.coalesce(F.col("az_count"), F.when(F.col("platform") == "msk", F.col("rack_count"))).alias("azs"),
    )
    d = join(_durability(tables), c, "cluster_id").where(
        (F.col("azs") >= 2) & (F.col("rf_min") < F.least(F.col("azs"), F.lit(3)))
    )
    msg = text(
        "replication factor ",
        F.col("rf_min"),
        " in a ",
        F.col("azs"),
        "-AZ cluster (needs ",
        F.least(F.col("azs"), F.lit(3)),
        "): a zone outage during a broker restart (an MSK patch) can take partitions offline",
    )
    return emit(
        d,
        "topic",
        F.col("topic"),
        msg,
        ev(
            replication_factor=F.col("rf_min"),
            availability_zones=F.col("azs"),
            required=F.least(F.col("azs"), F.lit(3)),
        ),
    )


@rule(
    "REP010",
    "rf-exceeds-brokers",
    "error",
    needs=("topics", "brokers"),
    uses=(broker_counts, cluster_versions, replica_lists, topic_replication),
    runs_in=("lint-against",),
)
def rf_exceeds_brokers(tables, params):
    """A topic's replication factor is greater than the number of live brokers (registered; on KRaft, registered and unfenced): it cannot be fully replicated now.

    Why: each replica needs its own broker. With fewer registered brokers than replicas the
    partitions stay under-replicated, min.insync.replicas may be unreachable, and a
    reassignment or a new topic with that factor fails with INVALID_REPLICATION_FACTOR
    (the controller places replicas on registered brokers only). What it means depends on
    what the snapshot knows: the live brokers the metadata lists, and the broker ids the
    cluster's assignments name. When replicas are assigned to brokers that are not listed,
    those brokers are down or were removed without a reassignment (REP008 names them): the
    topic is fully replicated again when they rejoin. In ZooKeeper mode a broker that is down
    is not registered (its /brokers/ids znode is ephemeral); on KRaft a broker stays
    registered with the controller when it stops and is fenced once its heartbeats stop
    (broker.session.timeout.ms), and the metadata the brokers serve lists unfenced brokers
    only (KRaftMetadataCache.getAliveBrokerNodes), so the message says "not registered or
    fenced" there. When no other
    broker holds a replica, the cluster is smaller than the factor: it stays so until
    brokers are added or the factor is lowered. It follows from shrinking a cluster,
    losing brokers, or copying topic definitions from a bigger cluster. Only judged for
    clusters whose brokers were collected.

    Remediation: bring the missing brokers back, or lower the replication factor with
    `kafka-reassign-partitions` to at most the registered broker count (and
    min.insync.replicas below it).

    Example: topic `events` with RF 3 on a cluster where only 2 brokers are registered.

    References:
    - Kafka documentation: custom partition assignment and migration <https://kafka.apache.org/39/documentation.html#basic_ops_partitionassignment>
    - Kafka broker config default.replication.factor <https://kafka.apache.org/39/documentation.html#brokerconfigs_default.replication.factor>
    - apache/kafka core/src/main/scala/kafka/server/metadata/KRaftMetadataCache.scala (getAliveBrokerNodes: unfenced brokers only) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/server/metadata/KRaftMetadataCache.scala>
    - Kafka broker config broker.session.timeout.ms (KRaft: fenced when heartbeats stop) <https://kafka.apache.org/39/documentation.html#brokerconfigs_broker.session.timeout.ms>
    """
    brokers = join(
        cluster_brokers(tables).select("cluster_id", "broker_count", "broker_ids"),
        tables.derived(cluster_versions).select("cluster_id", "mode"),
        "cluster_id",
        "left",
    )
    kraft = F.coalesce(F.col("mode") == "kraft", F.lit(False))
    live = F.when(kraft, F.lit(" live (unfenced) broker(s)")).otherwise(F.lit(" registered broker(s)"))
    missing_words = F.when(
        kraft,
        F.lit(" hold replicas but are not registered or fenced (down, or removed without a reassignment)"),
    ).otherwise(F.lit(" hold replicas but are not registered (down, or removed without a reassignment)"))
    # The broker ids the cluster's assignments name (its distinct replica lists), and of
    # them those not registered: down, or removed without a reassignment.
    assigned = (
        tables.derived(replica_lists)
        .select("cluster_id", F.explode(F.array_compact(F.col("replicas"))).alias("broker_id"))
        .distinct()
    )
    assigned = (
        join(assigned, brokers, "cluster_id")
        .groupBy("cluster_id")
        .agg(
            F.count(F.lit(1)).alias("assigned_count"),
            F.sort_array(
                F.collect_list(
                    F.when(~F.array_contains(F.col("broker_ids"), F.col("broker_id")), F.col("broker_id"))
                )
            ).alias("missing"),
        )
    )
    d = join(
        join(tables.derived(topic_replication), brokers, "cluster_id"), assigned, "cluster_id", "left"
    ).where((F.col("broker_count") > 0) & (F.col("rf_max") > F.col("broker_count")))
    # No assignments known (topics only): an empty list of the ids' type.
    none = F.array_except(F.col("broker_ids"), F.col("broker_ids"))
    missing = F.coalesce(F.array_compact(F.col("missing")), none)
    known = F.col("broker_count") + F.size(missing)
    msg = text(
        "replication factor ",
        F.col("rf_max"),
        " exceeds the ",
        F.col("broker_count"),
        live,
        F.when(
            F.size(missing) > 0,
            text(
                "; broker(s) ",
                int_list(missing),
                missing_words,
                F.when(
                    known >= F.col("rf_max"),
                    F.lit(": the topic is under-replicated until they rejoin"),
                ).otherwise(
                    F.lit(": even with them back the cluster has too few brokers for this factor"),
                ),
            ),
        ).otherwise(
            F.lit(
                " and no other broker holds a replica: the cluster is smaller than the factor "
                "until brokers are added or the factor is lowered"
            )
        ),
    )
    return emit(
        d,
        "topic",
        F.col("topic"),
        msg,
        ev(
            replication_factor=F.col("rf_max"),
            registered_brokers=F.col("broker_count"),
            assigned_brokers=F.col("assigned_count"),
            unregistered_assigned_brokers=missing,
            partitions=F.col("partition_count"),
            metadata_mode=F.col("mode"),
        ),
    )


def _brokers_by_rack(tables):
    """One row per registered broker: cluster_id, broker_id, rack (null when broker.rack is
    unset or blank), deduplicated by id as broker_counts does."""
    rack = F.when(F.trim(F.col("rack")) != "", F.trim(F.col("rack")))
    return (
        tables.brokers.where(F.col("broker_id").isNotNull())
        .groupBy("cluster_id", "broker_id")
        .agg(F.max(rack).alias("rack"))
    )


@rule(
    "REP011",
    "broker-without-rack",
    "warning",
    needs=("brokers",),
    uses=(cluster_versions,),
    runs_in=("lint",),
    lint_key="broker.rack",
)
def broker_without_rack(tables, params):
    """A broker has no broker.rack in a cluster whose other brokers have one (an error in ZooKeeper mode, where topic creation then fails), or in a multi-AZ cluster none of whose brokers has one.

    Why: Kafka spreads a partition's replicas over racks only as far as it knows them.
    In ZooKeeper mode a cluster whose brokers are partly rack-aware refuses rack-aware
    placement: creating a topic without an explicit assignment (CreateTopics, and
    auto-creation, which goes through it) fails with "Not all brokers have rack information
    for replica rack aware assignment" (ZkAdminManager.createTopics passes the live brokers
    and their racks to AdminUtils.assignReplicasToBrokers, which goes rack-aware as soon as
    one broker has a rack and then throws for a broker without), and adding partitions with
    "Not all brokers have rack information. Add --disable-rack-aware ..."
    (ZkAdminManager.createPartitions, AdminZkClient.getBrokerMetadatas in its default
    Enforced mode). New topics and partitions fail until the broker has a rack: an error.
    The KRaft controller's placer puts every broker without broker.rack into one rack of
    its own (StripedReplicaPlacer.RackList keys racks by Optional<String>; every rack-less
    broker shares the empty one), so creation works but a replica on such a broker can sit
    in the same zone as another replica of its partition: a warning (also where the mode is
    unknown). REP007 judges partitions only by the racks brokers declare: it counts a
    replica on a rack-less broker as in no rack (so it flags such partitions without
    knowing whether they really share a zone), and it judges nothing in a cluster with
    no racks at all; this rule reports the cause, the broker. In a cluster of several zones (the
    manifest's az_count, e.g. from the inventory) where no broker has broker.rack,
    placement ignores zones altogether and a zone outage can take every replica of a
    partition. MSK sets broker.rack to each broker's AZ id itself, so an MSK cluster is
    not judged: a missing rack there is a gap in the collected data, not the broker's
    configuration. One finding per rack-less broker where other brokers have racks; one
    per cluster (resource: broker.rack) where none has.

    Remediation: set broker.rack in each broker's server.properties to its zone (on
    Kubernetes, Strimzi's `spec.kafka.rack.topologyKey: topology.kubernetes.io/zone`)
    and restart it (broker.rack is read-only), then move the replicas the old placement
    put in one zone (REP007 lists them once every broker has a rack):
    `kafka-reassign-partitions --generate` is rack-aware when all brokers have racks.

    Example: brokers 1-6 with broker.rack use1-az1..az3 and broker 7, added later, without it.

    References:
    - Kafka documentation: balancing replicas across racks <https://kafka.apache.org/39/documentation.html#basic_ops_racks>
    - Kafka broker config broker.rack <https://kafka.apache.org/39/documentation.html#brokerconfigs_broker.rack>
    - apache/kafka server-common/src/main/java/org/apache/kafka/admin/AdminUtils.java, assignReplicasToBrokersRackAware ("Not all brokers have rack information") <https://github.com/apache/kafka/blob/3.9/server-common/src/main/java/org/apache/kafka/admin/AdminUtils.java>
    - apache/kafka core/src/main/scala/kafka/server/ZkAdminManager.scala, createTopics and createPartitions (ZooKeeper mode) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/server/ZkAdminManager.scala>
    - apache/kafka core/src/main/scala/kafka/zk/AdminZkClient.scala, getBrokerMetadatas ("Not all brokers have rack information. Add --disable-rack-aware") <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/zk/AdminZkClient.scala>
    - apache/kafka metadata/src/main/java/org/apache/kafka/metadata/placement/StripedReplicaPlacer.java, RackList (KRaft: rack-less brokers are one rack) <https://github.com/apache/kafka/blob/trunk/metadata/src/main/java/org/apache/kafka/metadata/placement/StripedReplicaPlacer.java>
    - AWS Big Data Blog: reduce network traffic costs of your Amazon MSK consumers with rack awareness (MSK sets broker.rack to the AZ id) <https://aws.amazon.com/blogs/big-data/reduce-network-traffic-costs-of-your-amazon-msk-consumers-with-rack-awareness/>
    """
    b = _brokers_by_rack(tables)
    per_cluster = b.groupBy("cluster_id").agg(
        # array_compact: DuckDB's lists keep the nulls Spark's collect_set drops.
        F.sort_array(
            F.array_compact(F.collect_set(F.when(F.col("rack").isNull(), F.col("broker_id"))))
        ).alias("rackless"),
        F.sort_array(
            F.array_compact(F.collect_set(F.when(F.col("rack").isNotNull(), F.col("broker_id"))))
        ).alias("racked"),
        F.sort_array(F.array_compact(F.collect_set("rack"))).alias("racks"),
    )
    clusters = tables.clusters.select(
        "cluster_id",
        F.coalesce(F.col("cluster_name"), F.col("cluster_id")).alias("cluster"),
        "az_count",
        F.lower(F.coalesce(F.col("platform"), F.lit(""))).alias("platform"),
    )
    mode = tables.derived(cluster_versions).select("cluster_id", "mode")
    c = join(join(per_cluster, clusters, "cluster_id"), mode, "cluster_id", "left").where(
        (F.col("platform") != "msk") & (F.size("rackless") > 0)
    )
    effect = (
        F.when(
            F.col("mode") == "zookeeper",
            F.lit(
                "ZooKeeper mode then refuses rack-aware placement: creating topics or adding partitions "
                "without an explicit assignment fails"
            ),
        )
        .when(
            F.col("mode") == "kraft",
            F.lit(
                "the KRaft controller places rack-less brokers as one extra rack, so their replicas can share "
                "a zone with another replica"
            ),
        )
        .otherwise(
            F.lit(
                "topic creation fails in ZooKeeper mode (not all brokers have rack information) and KRaft "
                "places rack-less brokers as one extra rack"
            )
        )
    )
    mixed = c.where(F.size("racked") > 0).select(
        "cluster_id", "racked", "racks", "mode", F.explode("rackless").alias("broker_id")
    )
    per_broker = emit(
        mixed,
        "broker",
        F.col("broker_id").cast("string"),
        text(
            "broker ",
            F.col("broker_id"),
            " has no broker.rack while brokers ",
            int_list(F.col("racked")),
            " are in racks ",
            F.array_join(F.col("racks"), ", "),
            ": ",
            effect,
            "; REP007 counts its replicas as in no rack",
        ),
        ev(
            broker_rack=F.lit(None).cast("string"),
            brokers_with_rack=F.col("racked"),
            racks=F.col("racks"),
            metadata_mode=F.col("mode"),
        ),
        F.when(F.col("mode") == "zookeeper", F.lit("error")),
    )
    none = c.where((F.size("racked") == 0) & (F.col("az_count") >= 2))
    whole = emit(
        none,
        "config",
        F.lit("broker.rack"),
        text(
            "no broker of this ",
            F.col("az_count"),
            "-AZ cluster sets broker.rack (brokers ",
            int_list(F.col("rackless")),
            "): replica placement ignores zones, so one zone outage can take every replica of a partition",
        ),
        ev(
            brokers_without_rack=F.col("rackless"),
            availability_zones=F.col("az_count"),
            metadata_mode=F.col("mode"),
        ),
        F.lit(None).cast("string"),
    )
    return per_broker.unionByName(whole)


# -- REP012 ----------------------------------------------------------------------------------

LAG_TIME, FETCH_WAIT = "replica.lag.time.max.ms", "replica.fetch.wait.max.ms"


@rule(
    "REP012",
    "replica-lag-time-far-from-default",
    "warning",
    needs=("configs",),
    params=(
        Param(
            "min_ratio",
            0.25,
            "below this fraction of Kafka's default for the cluster's version the value is too low (a heuristic)",
        ),
        Param(
            "max_ratio",
            4.0,
            "above this multiple of Kafka's default for the cluster's version the value is too high (a heuristic)",
        ),
    ),
    uses=(cluster_settings, kafka_defaults),
    runs_in=("lint",),
)
def replica_lag_time_far_from_default(tables, params):
    """replica.lag.time.max.ms is set far from Kafka's default: too low churns the ISR, too high keeps a dead follower in it.

    Why: a leader removes a follower from the ISR when the follower has not fetched, or not
    caught up to the leader's log end, for replica.lag.time.max.ms. Kafka's default is
    30000 ms since 2.5 (raised from 10000 ms "for improved resiliency in typical network
    environments", KIP-537); the default compared is the one of the cluster's version
    (10000 before 2.5). Too low, and a follower that pauses briefly (a GC pause, a network
    blip, a busy leader) drops out of the ISR and rejoins: ISR shrink/expand churn,
    partitions under min.insync.replicas refusing acks=all writes, more leader-election
    candidates lost. At or below replica.fetch.wait.max.ms (default 500) followers of
    low-throughput partitions can be dropped from the ISR, which Kafka's documentation of
    that setting warns against: the leader keeps a follower in sync while its log end
    matches the leader's, or while it caught up within replica.lag.time.max.ms
    (Replica.isCaughtUp). A follower's fetch with nothing to return waits up to
    replica.fetch.wait.max.ms, and it last caught up when that fetch arrived; when a record
    arrives and the leader's ISR check runs before the follower fetches it, its log end is
    behind and its last catch-up can be older than the limit: it is removed. A partition
    that receives no writes keeps its followers in the ISR (their log ends match), and a
    busy one's followers catch up at every fetch. Too high, and a follower that died or
    stopped fetching stays in the ISR that long: the high watermark waits for it, so
    acks=all writes are not acknowledged and consumers see nothing new until it is
    removed, and the ISR claims a copy that is not there. Only an explicitly set value is
    judged; how far is "far" (a fraction and a multiple of the default) is a heuristic,
    a parameter.

    Remediation: remove the override from server.properties (or the MSK configuration) to
    return to Kafka's default (30000 ms since 2.5), or set a value within the bounds, well
    above replica.fetch.wait.max.ms. It is a static broker setting (not among the
    dynamically updatable ones): a rolling restart applies it.

    Example: replica.lag.time.max.ms=2000 on a Kafka 3.6 cluster (default 30000).

    References:
    - Kafka broker config replica.lag.time.max.ms <https://kafka.apache.org/39/documentation.html#brokerconfigs_replica.lag.time.max.ms>
    - Kafka broker config replica.fetch.wait.max.ms ("should always be less than the replica.lag.time.max.ms") <https://kafka.apache.org/39/documentation.html#brokerconfigs_replica.fetch.wait.max.ms>
    - Kafka upgrade notes, notable changes in 2.5.0 (replica.lag.time.max.ms from 10s to 30s) <https://kafka.apache.org/25/documentation.html#upgrade_250_notable>
    - KIP-537: Increase default zookeeper session timeout (and replica.lag.time.max.ms) <https://cwiki.apache.org/confluence/display/KAFKA/KIP-537%3A+Increase+default+zookeeper+session+timeout>
    - apache/kafka server/src/main/java/org/apache/kafka/server/config/ReplicationConfigs.java (defaults and docs) <https://github.com/apache/kafka/blob/trunk/server/src/main/java/org/apache/kafka/server/config/ReplicationConfigs.java>
    - apache/kafka core/src/main/scala/kafka/server/DynamicBrokerConfig.scala (the dynamic broker settings; this is not one) <https://github.com/apache/kafka/blob/trunk/core/src/main/scala/kafka/server/DynamicBrokerConfig.scala>
    - apache/kafka core/src/main/scala/kafka/cluster/Replica.scala (isCaughtUp: log ends equal, or caught up within replica.lag.time.max.ms; updateFetchStateOrThrow sets lastCaughtUpTimeMs) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/cluster/Replica.scala>
    """
    s = tables.derived(cluster_settings).where(F.col("key").isin(LAG_TIME, FETCH_WAIT))
    wide = s.groupBy("cluster_id").agg(
        F.max(F.when(F.col("key") == LAG_TIME, F.col("value"))).alias("lag"),
        F.max(F.when(F.col("key") == LAG_TIME, F.col("prec"))).alias("lag_prec"),
        F.max(F.when(F.col("key") == FETCH_WAIT, F.col("value"))).alias("wait"),
    )
    defaults = (
        tables.derived(kafka_defaults)
        .where(F.col("key") == LAG_TIME)
        .select("cluster_id", F.col("value").alias("default_lag"))
    )
    d = join(wide, defaults, "cluster_id", "left").select(
        "cluster_id",
        try_long("lag").alias("lag"),
        "lag_prec",
        try_long("wait").alias("wait"),
        try_long("default_lag").alias("default_lag"),
    )
    low_bound = F.col("default_lag") * F.lit(params["min_ratio"])
    high_bound = F.col("default_lag") * F.lit(params["max_ratio"])
    below_wait = F.coalesce(F.col("lag") <= F.col("wait"), F.lit(False))
    too_low = below_wait | F.coalesce(F.col("lag") < low_bound, F.lit(False))
    too_high = F.coalesce(F.col("lag") > high_bound, F.lit(False))
    d = d.where((F.col("lag_prec") < KAFKA_DEFAULT) & (too_low | too_high))
    source = source_name(F.col("lag_prec"))
    effect = (
        F.when(
            below_wait,
            text(
                ": not above replica.fetch.wait.max.ms (",
                F.col("wait"),
                " ms): a follower of a low-throughput partition that waited that long in a fetch with nothing "
                "to return is dropped from the ISR when a record arrives before it fetches again (a partition "
                "with no new writes keeps its followers: their log ends match, Replica.isCaughtUp)",
            ),
        )
        .when(
            too_low,
            F.lit(
                ": a follower that pauses briefly (GC, network blip, busy leader) leaves the ISR; ISR churn and "
                "partitions under min.insync.replicas refusing acks=all writes"
            ),
        )
        .otherwise(
            F.lit(
                ": a follower that died or stopped fetching stays in the ISR that long, holding the high "
                "watermark: acks=all writes wait and consumers see nothing new until it is removed"
            )
        )
    )
    msg = text(
        LAG_TIME + "=",
        F.col("lag"),
        " (",
        source,
        ") is ",
        F.when(too_low, F.lit("far below")).otherwise(F.lit("far above")),
        " Kafka's default of ",
        F.col("default_lag"),
        " ms for this version",
        effect,
    )
    return emit(
        d,
        "config",
        F.lit(LAG_TIME),
        msg,
        ev(
            replica_lag_time_max_ms=F.col("lag"),
            source=source,
            kafka_default=F.col("default_lag"),
            replica_fetch_wait_max_ms=F.col("wait"),
            too_low=too_low,
            min_ratio=F.lit(params["min_ratio"]),
            max_ratio=F.lit(params["max_ratio"]),
        ),
    )
