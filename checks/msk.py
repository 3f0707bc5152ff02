"""MSK: Amazon MSK limits.

These rules look only at clusters whose manifest says platform "msk". Partition limits
depend on the broker size (msk_instance_type, for example kafka.m5.large); they are the
parameters ``limits`` / ``recommended``: entries "SUFFIX=COUNT" where SUFFIX matches the end
of the instance type ("t3.small" matches kafka.t3.small, "xlarge" matches kafka.m5.xlarge and
kafka.m7g.xlarge, but not kafka.m5.2xlarge). Only standard brokers (kafka.*) are judged;
Express brokers (express.*) have other limits.
Source: AWS, "Best practices for Standard brokers: right-size your cluster, number of
partitions per broker".
"""

from auditor.declarations import Category, Param, rule
from auditor.errors import UsageError
from checks._api import F, emit, ev, join, text
from checks.transforms import broker_settings, replica_lists, try_int

CATEGORY = Category("MSK", "msk", "Amazon MSK limits", tuple(range(1, 6)))

_BIG = ("4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge")
UPDATE_LIMITS = ("t3.small=300", "large=1500", "xlarge=1500", "2xlarge=3000", *(f"{s}=6000" for s in _BIG))
RECOMMENDED = ("t3.small=300", "large=1000", "xlarge=1000", "2xlarge=2000", *(f"{s}=4000" for s in _BIG))


def _instance_type():
    return F.lower(F.trim(F.col("msk_instance_type")))


def _limit_for(entries, where: str):
    """A Column: the count for the cluster's instance type, from "SUFFIX=COUNT" entries
    (the longest matching suffix wins); null for an unknown or non-standard type."""
    parsed = []
    for entry in entries:
        suffix, sep, count = str(entry).partition("=")
        if not sep or not suffix.strip() or not (count.strip().isascii() and count.strip().isdigit()):
            raise UsageError(f"{where}: entry {entry!r} must look like 'xlarge=1500'")
        parsed.append((suffix.strip().lower().removeprefix("kafka."), int(count)))
    itype = _instance_type()
    out = None
    for suffix, count in sorted(parsed, key=lambda e: -len(e[0])):
        cond = itype.startswith("kafka.") & itype.endswith("." + suffix)
        out = F.when(cond, F.lit(count)) if out is None else out.when(cond, F.lit(count))
    return out if out is not None else F.lit(None).cast("int")


def _family_rate(entries, where: str):
    """A Column: the count for the cluster's instance family (kafka.FAMILY.SIZE), from
    "FAMILY=COUNT" entries; null for an unknown family or a non-standard type."""
    itype = _instance_type()
    out = None
    for entry in entries:
        family, sep, count = str(entry).partition("=")
        family = family.strip().lower().removeprefix("kafka.")
        if not sep or not family or not (count.strip().isascii() and count.strip().isdigit()):
            raise UsageError(f"{where}: entry {entry!r} must look like 'm5=100'")
        cond = itype.startswith("kafka." + family + ".")
        out = F.when(cond, F.lit(int(count))) if out is None else out.when(cond, F.lit(int(count)))
    return out if out is not None else F.lit(None).cast("int")


def msk_broker_partitions(tables):
    """Per broker of an MSK cluster: partition replicas it hosts (leaders and followers, as
    MSK counts them), with the cluster's instance type."""
    msk = tables.clusters.where(F.lower(F.col("platform")) == "msk").select("cluster_id", "msk_instance_type")
    # MSK clusters' distinct replica lists (replica_lists), each counted for as many partitions
    # as have it: not one row per replica of every partition (28.8M rows at 10M partitions).
    lists = join(tables.derived(replica_lists), msk.select("cluster_id"), "cluster_id")
    counts = (
        lists.select("cluster_id", F.explode(F.col("replicas")).alias("broker_id"), "partitions")
        .groupBy("cluster_id", "broker_id")
        .agg(F.sum("partitions").alias("partition_replicas"))
    )
    return join(counts, msk, "cluster_id")


def _over(tables, entries, where):
    d = tables.derived(msk_broker_partitions).withColumn("partition_limit", _limit_for(entries, where))
    return d.where(F.col("partition_replicas") > F.col("partition_limit"))


def _evidence():
    return ev(
        partitions=F.col("partition_replicas"),
        limit=F.col("partition_limit"),
        instance_type=F.col("msk_instance_type"),
    )


@rule(
    "MSK001",
    "partitions-over-update-limit",
    "error",
    needs=("partitions",),
    params=(
        Param(
            "limits",
            UPDATE_LIMITS,
            "maximum partitions (replicas) per broker for updates, per broker size "
            "('SUFFIX=COUNT' entries matched against the end of msk_instance_type)",
        ),
    ),
    uses=(msk_broker_partitions,),
    runs_in=("preflight", "lint"),
)
def partitions_over_update_limit(tables, params):
    """A broker of an MSK cluster hosts more partitions than AWS lists as supporting update operations at its size.

    Why: AWS's best practices for Standard brokers list, per broker size, a recommended
    number of partitions per broker (MSK002) and a maximum number of partitions that
    support update operations (t3.small 300, m5/m7g large and xlarge 1500, 2xlarge 3000,
    4xlarge and larger 6000). AWS words the consequence as a risk, not a certainty: if
    the partitions per broker exceed it *and* the cluster becomes overloaded, you may be
    prevented from updating the cluster configuration, updating the Apache Kafka version,
    moving to a smaller broker size, or associating a Secrets Manager secret with a
    SASL/SCRAM cluster (AWS's configuration-update page puts it more bluntly: you cannot
    update the configuration of a cluster that exceeds these limits). So the change you
    need may be refused exactly when the cluster is in trouble. Partitions count every
    replica (leaders and followers). The limits per size are the parameter `limits`.

    Remediation: bring the broker below the limit before the next maintenance: delete
    unused topics, reduce partition counts of new topics (existing ones cannot shrink:
    recreate them), add brokers and rebalance with `kafka-reassign-partitions` (or
    Cruise Control), or move to a larger broker size (`aws kafka update-broker-type`;
    scaling up stays allowed above the limit, scaling down does not).

    Example: kafka.m5.large broker with 1700 partition replicas (limit 1500).

    References:
    - Amazon MSK: best practices for Standard brokers, right-size your cluster: number of partitions per broker <https://docs.aws.amazon.com/msk/latest/developerguide/bestpractices.html#partitions-per-broker>
    - Amazon MSK: update the configuration of a cluster (partitions per broker under the limits) <https://docs.aws.amazon.com/msk/latest/developerguide/msk-update-cluster-config.html>
    """
    d = _over(tables, params["limits"], "MSK001 limits")
    msg = text(
        "broker ",
        F.col("broker_id"),
        " hosts ",
        F.col("partition_replicas"),
        " partitions, above the ",
        F.col("partition_limit"),
        " AWS lists as supporting update operations on ",
        F.col("msk_instance_type"),
        ": if the cluster also becomes overloaded, AWS may prevent configuration updates, "
        "Kafka version updates and moves to a smaller broker size",
    )
    return emit(d, "broker", F.col("broker_id").cast("string"), msg, _evidence())


@rule(
    "MSK002",
    "partitions-over-recommended",
    "warning",
    needs=("partitions",),
    params=(
        Param(
            "recommended",
            RECOMMENDED,
            "recommended maximum partitions (replicas) per broker, per broker size "
            "('SUFFIX=COUNT' entries matched against the end of msk_instance_type)",
        ),
    ),
    uses=(msk_broker_partitions,),
    runs_in=("preflight", "lint"),
)
def partitions_over_recommended(tables, params):
    """A broker of an MSK cluster hosts more partitions than AWS recommends for its size.

    Why: AWS recommends at most 300 partitions per broker on t3.small, 1000 on
    large/xlarge, 2000 on 2xlarge and 4000 on 4xlarge and larger. Above that, CPU and
    memory go to partition overhead, restarts and leader elections take longer (every
    MSK patch restarts each broker) and the update limit (MSK001) is close. The counts
    per size are the parameter `recommended`. Above the hard limit MSK001 fires as well.

    Remediation: delete unused topics, create new topics with fewer partitions, add
    brokers and rebalance (`kafka-reassign-partitions`, Cruise Control), or move to a
    larger broker size (`aws kafka update-broker-type`).

    Example: kafka.m5.large broker with 1200 partition replicas (recommended 1000).

    References:
    - Amazon MSK: best practices for Standard brokers <https://docs.aws.amazon.com/msk/latest/developerguide/bestpractices.html>
    """
    d = _over(tables, params["recommended"], "MSK002 recommended")
    msg = text(
        "broker ",
        F.col("broker_id"),
        " hosts ",
        F.col("partition_replicas"),
        " partitions, above the ",
        F.col("partition_limit"),
        " AWS recommends for ",
        F.col("msk_instance_type"),
    )
    return emit(d, "broker", F.col("broker_id").cast("string"), msg, _evidence())


@rule(
    "MSK003",
    "cpu-headroom",
    "warning",
    needs=("metrics",),
    params=(
        Param("max_cpu_percent", 60.0, "CPU user + system (percent) above which a broker lacks headroom"),
    ),
    runs_in=("preflight",),
)
def cpu_headroom(tables, params):
    """A broker of an MSK cluster uses more CPU (user + system) than leaves headroom for a rolling restart.

    Why: during an MSK patch or a broker failure the remaining brokers take over the
    restarted broker's leaders and clients. AWS recommends keeping CPU user + system below
    60% so that they can; above it, latency climbs and the ISR shrinks exactly during the
    maintenance window. The threshold is the parameter `max_cpu_percent` (a heuristic).

    Remediation: reduce load (fewer partitions, batching and compression on producers,
    fewer connection storms), add brokers and rebalance, or move to a larger broker size
    (`aws kafka update-broker-type`), before the next maintenance window.

    Example: broker 2 of kafka.m5.large at 72% CPU user + system.

    References:
    - Amazon MSK: best practices for Standard brokers <https://docs.aws.amazon.com/msk/latest/developerguide/bestpractices.html>
    """
    cpu = (
        tables.metrics.where(F.col("name") == "cpu_user_system_percent")
        .groupBy("cluster_id", "broker_id")
        .agg(F.avg("value").alias("cpu"))
    )
    msk = tables.clusters.where(F.lower(F.col("platform")) == "msk").select("cluster_id", "msk_instance_type")
    d = join(cpu.where(F.col("cpu") > params["max_cpu_percent"]), msk, "cluster_id")
    pct = F.round(F.col("cpu"), 1)
    msg = text(
        "broker ",
        F.col("broker_id"),
        " runs at ",
        pct,
        "% CPU user + system (above ",
        str(params["max_cpu_percent"]).removesuffix(".0"),
        "%): no headroom to take over a restarting broker's load",
    )
    return emit(
        d,
        "broker",
        F.col("broker_id").cast("string"),
        msg,
        ev(cpu_user_system_percent=pct, instance_type=F.col("msk_instance_type")),
    )


@rule("MSK004", "cluster-operation-in-progress", "warning", runs_in=("preflight",))
def cluster_operation_in_progress(tables, params):
    """The MSK API reports the cluster not ACTIVE, or a cluster operation in progress: AWS is changing it now.

    Why: while an MSK cluster is in MAINTENANCE (AWS applying security patches: a rolling
    restart of every broker), REBOOTING_BROKER, UPDATING (a configuration, version or size
    change: also rolling restarts) or HEALING (AWS replacing an unhealthy broker), brokers
    are restarting under you, one at a time: the ISR of their partitions is short, a second
    restart of your own can take partitions below min.insync.replicas or offline, and AWS
    refuses other update operations until the cluster is ACTIVE again. The state comes from
    DescribeClusterV2 and the operations from ListClusterOperationsV2, as the collector
    recorded them in the manifest (`cluster.msk`). `kafka-audit check` reports it; preflight
    also refuses to call the cluster safe to roll meanwhile.

    Remediation: wait until `aws kafka describe-cluster-v2 --cluster-arn ARN` shows State
    ACTIVE and `aws kafka list-cluster-operations-v2 --cluster-arn ARN` shows no operation
    in progress, collect again, then plan your own maintenance (or make sure the patch in
    progress does not block writers: MNT001/REP002).

    Example: payments-msk in state MAINTENANCE with an operation of type
    UPDATE_BROKER_PATCHING in progress.

    References:
    - Amazon MSK: understand MSK Provisioned cluster states <https://docs.aws.amazon.com/msk/latest/developerguide/msk-cluster-states.html>
    - Amazon MSK API: DescribeClusterV2 <https://docs.aws.amazon.com/MSK/2.0/APIReference/v2-clusters-clusterarn.html>
    - AWS Knowledge Center: avoid disruption during MSK security patching <https://repost.aws/knowledge-center/msk-avoid-disruption-during-patching>
    """
    c = tables.clusters.select(
        "cluster_id",
        F.coalesce(F.col("cluster_name"), F.col("cluster_id")).alias("cluster"),
        F.upper(F.trim(F.col("msk_state"))).alias("state"),
        "msk_operations",
    )
    not_active = F.coalesce((F.col("state") != "ACTIVE") & (F.col("state") != ""), F.lit(False))
    busy = F.col("msk_operations").isNotNull() & (F.trim(F.col("msk_operations")) != "")
    d = c.where(not_active | busy)
    msg = text(
        F.when(not_active, text("the MSK cluster is in state ", F.col("state"), " (not ACTIVE)")).otherwise(
            F.lit("the MSK cluster is ACTIVE")
        ),
        F.when(busy, text("; operation(s) in progress: ", F.col("msk_operations"))).otherwise(F.lit("")),
        ": AWS is changing it now (brokers may be restarting); wait for ACTIVE with no operation in "
        "progress before any maintenance of your own",
    )
    return emit(
        d,
        "cluster",
        F.col("cluster"),
        msg,
        ev(state=F.col("state"), operations_in_progress=F.col("msk_operations")),
    )


# MSK005: the IAM listeners (listener names CLIENT_IAM, CLIENT_IAM_PUBLIC) and their settings.
IAM_LISTENER = "(?i)^client_iam(_public)?$"
IAM_MAX_CONNECTIONS_KEYS = (
    "listener.name.client_iam.max.connections",
    "listener.name.client_iam_public.max.connections",
)
# AWS's Amazon MSK quota page, Standard brokers: "Maximum TCP connection rate per broker (IAM)",
# 100 per second on M5 and M7g brokers, 4 per second on T3 (an archived copy of the page said 20
# and 4). Per instance family: "FAMILY=COUNT" entries matched against kafka.FAMILY.SIZE.
CONNECTION_RATES = ("t3=4", "m5=100", "m7g=100")


def msk_iam_connections(tables):
    """Per broker of an MSK cluster with IAM client authentication on (clusters.msk_iam_auth):
    ``connections``, on its IAM listeners when the metric names listeners (else on all
    listeners, ``scope``), ``broker_count`` and ``moved`` (the busiest other broker's
    connections spread over the brokers that stay up while it restarts: what a roll moves
    onto this broker at most), the configured IAM listener limit (``configured_limit``,
    the lowest listener.name.client_iam[_public].max.connections set), the instance type."""
    msk = tables.clusters.where(
        (F.lower(F.col("platform")) == "msk") & F.coalesce(F.col("msk_iam_auth"), F.lit(False))
    ).select("cluster_id", "msk_instance_type")
    samples = join(
        tables.metrics.where((F.col("name") == "connection_count") & F.col("broker_id").isNotNull()),
        msk.select("cluster_id"),
        "cluster_id",
        "left_semi",
    ).select(
        "cluster_id",
        "broker_id",
        F.coalesce(F.regexp_extract(F.col("labels"), '"listener" *: *"([^"]*)"', 1), F.lit("")).alias(
            "listener"
        ),
        "value",
    )
    iam = F.col("listener").rlike(IAM_LISTENER)
    per_broker = (
        samples.groupBy("cluster_id", "broker_id")
        .agg(
            F.sum(F.when(iam, F.col("value"))).alias("iam_connections"),
            F.sum("value").alias("all_connections"),
        )
        .select(
            "cluster_id",
            "broker_id",
            F.coalesce(F.col("iam_connections"), F.col("all_connections")).alias("connections"),
            F.when(F.col("iam_connections").isNotNull(), F.lit("IAM listeners"))
            .otherwise(F.lit("all listeners"))
            .alias("scope"),
        )
    )
    totals = per_broker.groupBy("cluster_id").agg(
        F.sort_array(F.collect_list("connections"), asc=False).alias("ranked"),
        F.count(F.lit(1)).alias("broker_count"),
    )
    limit = (
        tables.derived(broker_settings)
        .where(F.col("key").isin(*IAM_MAX_CONNECTIONS_KEYS))
        .select("cluster_id", "broker_id", try_int("value").alias("v"))
        .groupBy("cluster_id", "broker_id")
        .agg(F.min("v").alias("configured_limit"))
    )
    d = join(
        join(join(per_broker, totals, "cluster_id"), msk, "cluster_id"),
        limit,
        ["cluster_id", "broker_id"],
        "left",
    )
    # When broker X restarts, its clients reconnect to the brokers left up: each takes about
    # X's connections / (brokers - 1). The most this broker takes is that share of the busiest
    # other broker (the first of the ranked counts, or the second when this broker is the first).
    busiest_other = F.when(
        F.col("connections") >= F.element_at(F.col("ranked"), 1), F.element_at(F.col("ranked"), 2)
    ).otherwise(F.element_at(F.col("ranked"), 1))
    moved = F.when(F.col("broker_count") > 1, busiest_other / (F.col("broker_count") - F.lit(1))).otherwise(
        F.lit(0.0)
    )
    return d.withColumn("moved", moved)


@rule(
    "MSK005",
    "iam-connection-limit",
    "warning",
    needs=("metrics",),
    params=(
        Param(
            "max_connections",
            3000,
            "TCP connections per broker MSK accepts with IAM access control (AWS quota; "
            "listener.name.client_iam.max.connections on the broker overrides it)",
        ),
        Param(
            "near_fraction",
            0.8,
            "fraction of the limit at which a broker is near it: a warning (a heuristic)",
        ),
        Param(
            "connection_rates",
            CONNECTION_RATES,
            "new IAM connections per second per broker MSK accepts, per instance family ('FAMILY=COUNT' "
            "entries matched against kafka.FAMILY.SIZE): for the reconnect estimate",
        ),
    ),
    uses=(msk_iam_connections, broker_settings),
    runs_in=("preflight",),
)
def iam_connection_limit(tables, params):
    """A broker of an MSK cluster with IAM authentication is near its IAM connection limit (a warning), or a rolling restart could push it over (info: an upper bound).

    Why: with IAM access control MSK accepts at most 3000 TCP connections per broker
    (AWS's quota page; parameter `max_connections`; a broker's
    `listener.name.client_iam.max.connections` override wins) and a limited number of new
    connections per second per broker: 100 on M5 and M7g brokers, 4 on T3 (parameter
    `connection_rates`, per instance family). Connections above the limit are refused. A
    broker holding `near_fraction` (default 0.8) of its limit is a warning: little growth,
    or a reconnect storm, takes it over. During a rolling restart (every MSK patch) each
    restarting broker's clients reconnect to the brokers left up; the rule estimates what
    this broker takes as the busiest other broker's connections divided by the brokers left
    up (`moved_by_roll` in the evidence). That is an upper bound: a client keeps one
    connection per broker it talks to, and producers and consumers of many partitions
    already hold one to nearly every broker (the leaders of their partitions move there),
    so most of the restarting broker's clients open nothing new. When only that upper bound
    goes over the limit, the finding is info. The counts are the connection_count metric
    (open monitoring, per listener: the IAM listeners CLIENT_IAM / CLIENT_IAM_PUBLIC when
    named, else all listeners, which overstates; CloudWatch ConnectionCount has no
    listener). Only Standard brokers (kafka.*) of clusters whose DescribeClusterV2 shows IAM
    client authentication enabled are judged; Express brokers are not.

    Remediation: reduce connections (share one producer per process, pool consumers,
    close idle clients: `connections.max.idle.ms`), spread clients over more brokers
    (add brokers), set `reconnect.backoff.ms` / `reconnect.backoff.max.ms` on clients so
    a roll does not turn into a reconnect storm, or raise
    `listener.name.client_iam.max.connections` with care (AWS: a high value can make the
    broker unavailable).

    Example: kafka.m5.large broker 2 with 2,700 IAM connections (90% of 3,000: a warning);
    broker 1 with 2,000 in a 3-broker cluster whose busiest other broker holds 2,650: a
    roll moves at most about 1,325 onto it (3,325, above 3,000 at most: info).

    References:
    - Amazon MSK quota: Standard broker quota (maximum TCP connections and connection rate per broker with IAM access control) <https://docs.aws.amazon.com/msk/latest/developerguide/limits.html#msk-provisioned-quota>
    - KIP-612: limit connection creation rate on brokers <https://cwiki.apache.org/confluence/display/KAFKA/KIP-612%3A+Ability+to+Limit+Connection+Creation+Rate+on+Brokers>
    - Kafka client config reconnect.backoff.max.ms <https://kafka.apache.org/39/documentation.html#producerconfigs_reconnect.backoff.max.ms>
    """
    base = tables.derived(msk_iam_connections).where(F.col("msk_instance_type").startswith("kafka."))
    d = (
        base.withColumn("limit", F.coalesce(F.col("configured_limit"), F.lit(params["max_connections"])))
        .withColumn("rate", _family_rate(params["connection_rates"], "MSK005 connection_rates"))
        .withColumn("peak", F.col("connections") + F.col("moved"))
    )
    near = F.col("connections") >= F.col("limit") * F.lit(params["near_fraction"])
    d = d.where(near | (F.col("peak") > F.col("limit")))
    # bigint: ceil gives a double on DuckDB and a bigint on Spark (the message must read alike)
    reconnect = F.when(F.col("rate") > 0, F.ceil(F.col("moved") / F.col("rate")).cast("bigint"))
    msg = text(
        "broker ",
        F.col("broker_id"),
        " holds ",
        F.round(F.col("connections"), 0).cast("bigint"),
        " connections (",
        F.col("scope"),
        ") of the ",
        F.col("limit"),
        " MSK accepts per broker with IAM authentication on ",
        F.col("msk_instance_type"),
        F.when(
            near,
            text(
                " (",
                F.round(F.col("connections") * F.lit(100.0) / F.col("limit"), 0).cast("bigint"),
                "%, near it)",
            ),
        ).otherwise(F.lit("")),
        "; a rolling restart moves at most ",
        F.round(F.col("moved"), 0).cast("bigint"),
        " more onto it (up to ",
        F.round(F.col("peak"), 0).cast("bigint"),
        F.when(
            F.col("peak") > F.col("limit"), F.lit(", above the limit: connections may be refused")
        ).otherwise(F.lit(", within the limit")),
        "; an upper bound: clients that already hold a connection to it, as producers and consumers of many "
        "partitions do, open none)",
        F.when(
            reconnect.isNotNull(),
            text(
                "; at ",
                F.col("rate"),
                " new connections/s they need up to ",
                reconnect,
                " s to reconnect",
            ),
        ).otherwise(F.lit("")),
    )
    return emit(
        d,
        "broker",
        F.col("broker_id").cast("string"),
        msg,
        ev(
            connections=F.round(F.col("connections"), 0).cast("bigint"),
            counted_on=F.col("scope"),
            limit=F.col("limit"),
            moved_by_roll=F.round(F.col("moved"), 0).cast("bigint"),
            peak_during_roll=F.round(F.col("peak"), 0).cast("bigint"),
            new_connections_per_second=F.col("rate"),
            instance_type=F.col("msk_instance_type"),
            near_limit=near,
        ),
        F.when(near, F.lit("warning")).otherwise(F.lit("info")),
    )
