"""FLT: fleet rules. They compare clusters with each other, so they run in `kafka-audit fleet`
(scope "fleet"), where one DataFrame holds every cluster; they are the only joins not keyed
by cluster_id."""

from auditor.declarations import Category, Param, rule
from checks._api import F, Window, emit, ev, join, text
from checks.transforms import cluster_settings, topic_durability, with_version_number

CATEGORY = Category("FLT", "fleet", "fleet (cross-cluster)", tuple(range(1, 5)))

FLEET_COMPARED_KEYS = (
    "min.insync.replicas",
    "default.replication.factor",
    "unclean.leader.election.enable",
    "auto.create.topics.enable",
    "log.retention.hours",
    "log.retention.ms",
    "log.cleanup.policy",
    "message.max.bytes",
    "offsets.topic.replication.factor",
    "transaction.state.log.replication.factor",
    "transaction.state.log.min.isr",
    "num.partitions",
    "replica.lag.time.max.ms",
)

# Keys where one direction is safer whatever the tier (FLT001 says when the drift is the safe
# side): these booleans are safer false; these replication factors are safer higher.
SAFER_FALSE_KEYS = ("auto.create.topics.enable", "unclean.leader.election.enable")
SAFER_HIGHER_KEYS = (
    "default.replication.factor",
    "offsets.topic.replication.factor",
    "transaction.state.log.replication.factor",
)


def _drift_is_safer():
    """Whether this cluster's ``value`` is the safer side of its drift from ``majority_value``:
    null for keys with no safer direction."""
    key, value, majority = (
        F.col("key"),
        F.lower(F.trim(F.col("value"))),
        F.lower(F.trim(F.col("majority_value"))),
    )
    return F.when(key.isin(*SAFER_FALSE_KEYS), (value == F.lit("false")) & (majority == F.lit("true"))).when(
        key.isin(*SAFER_HIGHER_KEYS),
        F.expr("try_cast(trim(value) AS INT)") > F.expr("try_cast(trim(majority_value) AS INT)"),
    )


def _groups(tables):
    """cluster_id -> environment/tier group (clusters without them form the group '')."""
    return tables.clusters.select(
        "cluster_id",
        F.col("cluster_name").alias("cluster_name"),
        F.concat_ws(
            "/", F.coalesce(F.col("environment"), F.lit("")), F.coalesce(F.col("tier"), F.lit(""))
        ).alias("grp"),
    )


@rule(
    "FLT001",
    "fleet-config-drift",
    "warning",
    needs=("configs",),
    scope="fleet",
    params=(
        Param(
            "keys",
            FLEET_COMPARED_KEYS,
            "broker settings compared across clusters (hardware-dependent ones such as thread counts are left out on purpose)",
        ),
        Param("min_clusters", 3, "smallest environment/tier group in which a majority means anything"),
    ),
    uses=(cluster_settings,),
)
def fleet_config_drift(tables, params):
    """A broker setting differs from the value the majority of clusters in the same environment and tier use.

    Why: clusters of one tier are meant to be operated alike. A setting that differs on one
    of them is usually a forgotten experiment or an incident fix never rolled back (a
    `min.insync.replicas=3` set on one cluster as a "durability" tweak is exactly the
    setting that blocked every acks=all producer during an MSK rolling patch), and it makes
    runbooks wrong for that cluster.

    Remediation: bring the setting in line with the rest of the tier (`kafka-configs
    --alter --entity-type brokers --entity-default --add-config KEY=VALUE` for dynamic
    settings, server.properties and a rolling restart for static ones), or move the
    cluster to its own tier in its snapshot manifest when the difference is deliberate.
    Where one side is safer whatever the tier (`auto.create.topics.enable` and
    `unclean.leader.election.enable` false, higher internal and default replication
    factors), a cluster on the safer side is still reported, but the message says the
    majority is the less safe side (evidence `safer_here`). The keys compared and the
    minimum group size are parameters.

    Example: min.insync.replicas=3 on payments-msk while 3 of 4 prod/tier-1 clusters use 2.

    References:
    - Kafka documentation: updating broker configs (read-only, per-broker and cluster-wide modes) <https://kafka.apache.org/39/documentation.html#dynamicbrokerconfigs>
    - Kafka documentation: broker configs <https://kafka.apache.org/39/documentation.html#brokerconfigs>
    """
    settings = (
        tables.derived(cluster_settings)
        .select("cluster_id", "key", "value")
        .where(F.col("key").isin(*params["keys"]))
    )
    s = join(settings, _groups(tables), "cluster_id")
    counts = s.groupBy("grp", "key", "value").agg(F.count(F.lit(1)).alias("n"))
    sizes = s.groupBy("grp", "key").agg(F.count(F.lit(1)).alias("size"))
    w = Window.partitionBy("grp", "key").orderBy(F.col("n").desc(), F.col("value").asc())
    majority = (
        join(counts.withColumn("_rn", F.row_number().over(w)).where(F.col("_rn") == 1), sizes, ["grp", "key"])
        .where((F.col("size") >= params["min_clusters"]) & (F.col("n") * 2 > F.col("size")))
        .select("grp", "key", F.col("value").alias("majority_value"), "n", "size")
    )
    d = join(s, majority, ["grp", "key"]).where(F.col("value") != F.col("majority_value"))
    d = d.withColumn("safer_here", F.coalesce(_drift_is_safer(), F.lit(False)))
    drift = text(
        F.col("key"),
        "=",
        F.col("value"),
        " here, while ",
        F.col("n"),
        " of ",
        F.col("size"),
        " ",
        F.col("grp"),
        " clusters use ",
        F.col("majority_value"),
    )
    msg = F.when(
        F.col("safer_here"),
        F.concat(
            drift,
            F.lit(
                ": this cluster has the safer setting and the majority is less safe; align the others, not this one"
            ),
        ),
    ).otherwise(drift)
    return emit(
        d,
        "config",
        F.col("key"),
        msg,
        ev(
            value=F.col("value"),
            majority_value=F.col("majority_value"),
            clusters_with_majority=F.col("n"),
            clusters_in_group=F.col("size"),
            group=F.col("grp"),
            safer_here=F.col("safer_here"),
        ),
    )


@rule(
    "FLT002",
    "mirrored-topic-mismatch",
    "warning",
    needs=("topics",),
    scope="fleet",
    params=(
        Param(
            "ignore_pattern",
            r"^(__|_confluent|_schemas$|connect-)",
            "regex of topic names never compared (internal and framework topics)",
            regex=True,
        ),
        Param(
            "max_listed",
            10,
            "how many of the clusters holding the topic are named (by name order); all are counted",
        ),
    ),
    uses=(topic_durability,),
)
def mirrored_topic_mismatch(tables, params):
    """The same topic exists in several clusters with different replication factor, min.insync.replicas, partitions or cleanup.policy.

    Why: a topic mirrored between clusters (MirrorMaker, active-active regions, a DR copy)
    is expected to behave the same on both sides. A lower replication factor or
    min.insync.replicas on one side means the failover target is less durable than the
    primary; a different partition count breaks key ordering for consumers that fail over;
    a different cleanup.policy silently deletes or compacts data on one side only.

    Remediation: align the topic's settings on every cluster (`kafka-configs --alter
    --entity-type topics`, `kafka-reassign-partitions` for the replication factor,
    `kafka-topics --alter --partitions` for partitions, which can only grow). Topic names
    matching the `ignore_pattern` parameter are not compared. Each finding names the first
    `max_listed` clusters that hold the topic and counts the rest.

    Example: `orders` has 12 partitions and min.insync.replicas=2 on payments-east but
    6 partitions and min.insync.replicas=1 on payments-west.

    References:
    - Kafka documentation: geo-replication (cross-cluster data mirroring) <https://kafka.apache.org/39/documentation.html#georeplication>
    - Kafka documentation: topic-level configs <https://kafka.apache.org/39/documentation.html#topicconfigs>
    """
    d = tables.derived(topic_durability).where(~F.col("topic").rlike(params["ignore_pattern"]))
    d = join(
        d.select("cluster_id", "topic", "rf_min", "min_insync_replicas", "partition_count", "cleanup_policy"),
        _groups(tables).select("cluster_id", "cluster_name"),
        "cluster_id",
    )
    # Most topics live in one cluster: a plain count finds the shared ones, and only those
    # pay for the distinct counts (the expensive aggregate).
    shared = d.groupBy("topic").agg(F.count(F.lit(1)).alias("clusters")).where(F.col("clusters") > 1)
    d = join(d, shared, "topic").withColumn(
        "_rn", F.row_number().over(Window.partitionBy("topic").orderBy("cluster_name", "cluster_id"))
    )
    per_topic = (
        d.groupBy("topic")
        .agg(
            F.max("clusters").alias("clusters"),
            F.countDistinct(F.coalesce(F.col("rf_min").cast("string"), F.lit("?"))).alias("rf_variants"),
            F.countDistinct(F.coalesce(F.col("min_insync_replicas").cast("string"), F.lit("?"))).alias(
                "min_isr_variants"
            ),
            F.countDistinct(F.coalesce(F.col("partition_count").cast("string"), F.lit("?"))).alias(
                "partition_variants"
            ),
            F.countDistinct(F.coalesce(F.col("cleanup_policy"), F.lit("?"))).alias("cleanup_variants"),
            # At most max_listed names: a topic mirrored to all of 200 clusters would otherwise
            # repeat 200 names in each of its 200 findings.
            F.sort_array(
                F.array_compact(
                    F.collect_list(F.when(F.col("_rn") <= params["max_listed"], F.col("cluster_name")))
                )
            ).alias("mirrored_in"),
        )
        .where(
            (F.col("rf_variants") > 1)
            | (F.col("min_isr_variants") > 1)
            | (F.col("partition_variants") > 1)
            | (F.col("cleanup_variants") > 1)
        )
    )
    hit = join(d.drop("clusters", "_rn"), per_topic, "topic")
    differs = F.concat_ws(
        ", ",
        *[
            F.when(F.col(c) > 1, F.lit(label))
            for c, label in (
                ("rf_variants", "replication factor"),
                ("min_isr_variants", "min.insync.replicas"),
                ("partition_variants", "partitions"),
                ("cleanup_variants", "cleanup.policy"),
            )
        ],
    )
    more = F.when(
        F.col("clusters") > params["max_listed"],
        text(" and ", F.col("clusters") - F.lit(params["max_listed"]), " more"),
    ).otherwise(F.lit(""))
    msg = text(
        "differs across ",
        F.col("clusters"),
        " clusters (",
        F.array_join(F.col("mirrored_in"), ", "),
        more,
        ") in ",
        differs,
        "; here: replication factor ",
        F.col("rf_min"),
        ", min.insync.replicas ",
        F.col("min_insync_replicas"),
        ", ",
        F.col("partition_count"),
        " partitions, cleanup.policy ",
        F.col("cleanup_policy"),
    )
    return emit(
        hit,
        "topic",
        F.col("topic"),
        msg,
        ev(
            replication_factor=F.col("rf_min"),
            min_insync_replicas=F.col("min_insync_replicas"),
            partitions=F.col("partition_count"),
            cleanup_policy=F.col("cleanup_policy"),
            clusters=F.col("clusters"),
            mirrored_in=F.col("mirrored_in"),
        ),
    )


@rule(
    "FLT003",
    "version-skew",
    "info",
    scope="fleet",
    params=(
        Param(
            "supported_from",
            "3.7",
            "oldest Kafka minor version your organisation still considers supported; set it to your policy",
        ),
    ),
)
def version_skew(tables, params):
    """A cluster runs an older Kafka minor version than others of its environment and tier, or an end-of-life version.

    Why: a tier on mixed versions behaves differently under the same runbook (defaults such
    as replica.lag.time.max.ms and unclean leader election changed across releases), and
    an end-of-life version gets no security or bug fixes. Brokers before 2.1 also lack
    controller epoch fencing (KAFKA-6082), so a zombie controller can overwrite partition
    state after a split-brain (one such split-brain left a `__consumer_offsets` partition at
    leader -1 and stopped the consumer groups mapped to it).

    Remediation: plan the upgrade of the clusters behind (inter.broker.protocol.version
    first held at the old version, rolled, then raised; on MSK, `aws kafka
    update-cluster-kafka-version`). `supported_from` is a parameter: set it to the oldest
    release your organisation supports.

    Example: logistics-jbod on 3.5.1 while the rest of prod/tier-1 runs 3.7.1.

    References:
    - Kafka documentation: upgrading from previous versions <https://kafka.apache.org/39/documentation.html#upgrade>
    - KAFKA-6082: consider fencing zookeeper updates with controller epoch zkVersion <https://issues.apache.org/jira/browse/KAFKA-6082>
    """
    c = with_version_number(tables.clusters.select("cluster_id", "kafka_version"), "kafka_version", "v")
    c = join(
        c.where(F.col("v").isNotNull()).withColumn("minor", F.floor(F.col("v") / 1000).cast("int")),
        _groups(tables),
        "cluster_id",
    )
    newest = c.groupBy("grp").agg(F.max("minor").alias("newest_minor"), F.count(F.lit(1)).alias("size"))
    major, minor = (int(x) for x in params["supported_from"].split(".")[:2])
    floor = major * 1000 + minor
    d = join(c, newest, "grp")
    behind = (F.col("minor") < F.col("newest_minor")) & (F.col("size") > 1)
    eol = F.col("minor") < F.lit(floor)
    newest_text = F.concat(
        F.floor(F.col("newest_minor") / 1000).cast("int").cast("string"),
        F.lit("."),
        (F.col("newest_minor") % 1000).cast("int").cast("string"),
    )
    msg = text(
        "Kafka ",
        F.col("kafka_version"),
        F.when(
            behind, F.concat(F.lit(", behind "), newest_text, F.lit(" elsewhere in "), F.col("grp"))
        ).otherwise(F.lit("")),
        F.when(eol, F.lit(", older than the supported " + params["supported_from"])).otherwise(F.lit("")),
    )
    return emit(
        d.where(behind | eol),
        "cluster",
        F.col("cluster_name"),
        msg,
        ev(
            kafka_version=F.col("kafka_version"),
            newest_in_group=newest_text,
            group=F.col("grp"),
            end_of_life=eol,
        ),
    )


@rule("FLT004", "cluster-missing-from-run", "warning", scope="fleet")
def cluster_missing_from_run(tables, params):
    """A cluster audited in the previous run has no snapshot in this one: decommissioned, or forgotten by the collection.

    Why: a fleet report only speaks about the snapshots it was given. A cluster whose
    collection silently stopped (credentials rotated, a bootstrap address changed, the
    inventory entry deleted by mistake) simply vanishes from the next report, and every
    problem it has vanishes with it: a fleet that looks healthier because it is smaller.
    A decommissioned cluster vanishes the same way, so the difference needs a human.

    Remediation: if the cluster still exists, fix its collection (`kafka-audit collect` for
    that inventory entry, and read the collector's errors). If it was decommissioned on
    purpose, exempt this finding for it (`exemptions:` with `rules: [FLT004]` and
    `resource: ^NAME$`). The finding repeats every run (with the date of the last run that
    audited the cluster) until the cluster is back or exempted. It needs `kafka-audit fleet
    --previous FINDINGS_DIR` (the previous run's `_summary.json`, which lists every cluster
    audited, clean ones included); without it the rule is silent. A cluster counts as
    present when its id or its name is in this run.

    Example: search-ingest was audited in the run of 2026-11-16 and has no snapshot under
    the root of 2026-11-23.

    References:
    - Prometheus: absent(), alerting on a series that disappeared <https://prometheus.io/docs/prometheus/latest/querying/functions/#absent>
    """
    prev = tables.previous_clusters.select(
        F.coalesce(F.col("cluster_id"), F.col("cluster_name")).alias("cluster_id"),
        F.coalesce(F.col("cluster_name"), F.col("cluster_id")).alias("missing_name"),
        F.col("run_date").alias("last_audited"),
    )
    ids = tables.clusters.select("cluster_id", F.lit(True).alias("_by_id"))
    names = (
        tables.clusters.where(F.col("cluster_name").isNotNull())
        .select(F.col("cluster_name").alias("missing_name"), F.lit(True).alias("_by_name"))
        .distinct()
    )
    gone = join(join(prev, ids, "cluster_id", "left"), names, "missing_name", "left").where(
        F.col("_by_id").isNull() & F.col("_by_name").isNull()
    )
    msg = text(
        "cluster ",
        F.col("missing_name"),
        " was audited in the run of ",
        F.col("last_audited"),
        " and has no snapshot in this run: decommissioned, or the collection forgot it",
    )
    return emit(
        gone,
        "cluster",
        F.col("missing_name"),
        msg,
        ev(last_audited=F.col("last_audited"), previous_cluster_id=F.col("cluster_id")),
    )
