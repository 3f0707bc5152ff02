"""Change review: rules about a proposed change, run by ``kafka-audit lint`` (scope "change").

The lint layer (auditor/lint) applies the proposed files to the snapshot of the cluster
they will land on (``--against SNAPSHOT_DIR``). A proposed server.properties replaces its
broker's static configuration; the lines it replaces stay in ``configs`` with source
``REPLACED_STATIC_BROKER_CONFIG``, which no effective-config transform reads. So in a
change snapshot ``broker_settings`` is the configuration *after* the change, and the
replaced rows with the dynamic layers give the configuration the broker runs *now*.

A change applied dynamically (`kafka-configs --alter`) keeps the dynamic value it replaces
the same way, with source ``REPLACED_DYNAMIC_BROKER_CONFIG`` (per broker) or
``REPLACED_DYNAMIC_DEFAULT_BROKER_CONFIG`` (the cluster default). No lint input format
proposes a dynamic change today: every broker configuration lint reads is applied by a
restart (see THR007), so only the static convention is produced by auditor/lint. (A dynamic
value added where the key had none replaces nothing, so it cannot be told from the current
configuration: a future dynamic input format would need its own marker for it.)
"""

from auditor.declarations import Param, lint_rule, rule
from checks._api import F, Window, emit, ev, join, rows_frame, text
from checks.transforms import broker_settings, try_int

REPLACED = "REPLACED_STATIC_BROKER_CONFIG"
REPLACED_DYNAMIC = "REPLACED_DYNAMIC_BROKER_CONFIG"
REPLACED_DYNAMIC_DEFAULT = "REPLACED_DYNAMIC_DEFAULT_BROKER_CONFIG"

# Thread pools Kafka resizes dynamically, each validated to [current/2, current*2]
# (DynamicThreadPool, SocketServer per listener, LogCleaner), with Kafka's defaults.
THREAD_POOLS = (
    "num.network.threads=3",
    "num.io.threads=8",
    "num.replica.fetchers=1",
    "background.threads=10",
    "log.cleaner.threads=1",
    "num.recovery.threads.per.data.dir=1",
)


def _pools(entries):
    out = []
    for entry in entries:
        key, _, default = str(entry).partition("=")
        out.append({"key": key.strip(), "default_value": default.strip() or None})
    return out


def _current_threads(tables, pools):
    """Per changed broker and thread pool key: the value the broker runs now, and how the
    change reaches it (``applied``: "dynamic" when a dynamic value of the key is replaced,
    else "restart"). Layers, first wins: dynamic per-broker, dynamic cluster default,
    server.properties, Kafka's default; within a layer the replaced row (what runs now)
    before the proposed one. Only brokers whose current configuration is known (they have
    replaced rows) are judged: otherwise "now" would be a guess."""
    c = tables.configs.where(F.col("is_sensitive").isNull() | ~F.col("is_sensitive"))
    broker_id = try_int("entity_name")
    per_broker = c.where(F.col("source").isin(REPLACED, REPLACED_DYNAMIC)).select(
        "cluster_id", broker_id.alias("broker_id")
    )
    # A replaced cluster default concerns every broker of the cluster.
    every_broker = join(
        c.where(F.col("source") == REPLACED_DYNAMIC_DEFAULT).select("cluster_id").distinct(),
        tables.brokers.select("cluster_id", "broker_id"),
        "cluster_id",
    )
    changed = per_broker.unionByName(every_broker).where(F.col("broker_id").isNotNull()).distinct()
    grid = changed.crossJoin(pools)
    replaced = F.col("source").isin(REPLACED, REPLACED_DYNAMIC, REPLACED_DYNAMIC_DEFAULT)
    broker = c.where(F.col("entity_type") == "broker").select(
        "cluster_id",
        broker_id.alias("broker_id"),
        "key",
        F.trim(F.col("value")).alias("value"),
        F.when(F.col("source").isin("DYNAMIC_BROKER_CONFIG", REPLACED_DYNAMIC), F.lit(1))
        .when(F.col("source").isin("STATIC_BROKER_CONFIG", REPLACED), F.lit(3))
        .alias("prec"),
        replaced.alias("replaced"),
        (F.col("source") == REPLACED_DYNAMIC).alias("dynamic_change"),
    )
    default = c.where(
        (F.col("entity_type") == "cluster_default")
        & F.col("source").isin("DYNAMIC_DEFAULT_BROKER_CONFIG", REPLACED_DYNAMIC_DEFAULT)
    ).select(
        "cluster_id",
        "key",
        F.trim(F.col("value")).alias("value"),
        replaced.alias("replaced"),
        (F.col("source") == REPLACED_DYNAMIC_DEFAULT).alias("dynamic_change"),
    )
    # A broker whose server.properties the change replaces: its STATIC rows are the proposed
    # file, not what runs now.
    new_file = (
        c.where(F.col("source") == REPLACED)
        .select("cluster_id", broker_id.alias("broker_id"), F.lit(True).alias("new_file"))
        .distinct()
    )
    broker = join(broker, new_file, ["cluster_id", "broker_id"], "left").where(
        F.col("prec").isNotNull()
        & ~(F.coalesce(F.col("new_file"), F.lit(False)) & (F.col("prec") == 3) & ~F.col("replaced"))
    )
    keys = grid.select("cluster_id", "broker_id", "key")
    broker_layer = join(keys, broker.drop("new_file"), ["cluster_id", "broker_id", "key"])
    default_layer = join(keys, default, ["cluster_id", "key"]).withColumn("prec", F.lit(2))
    kafka_default = grid.select(
        "cluster_id",
        "broker_id",
        "key",
        F.col("default_value").alias("value"),
        F.lit(4).alias("prec"),
        F.lit(False).alias("replaced"),
        F.lit(False).alias("dynamic_change"),
    ).where(F.col("value").isNotNull())
    layers = broker_layer.unionByName(default_layer).unionByName(kafka_default)
    dynamic = layers.groupBy("cluster_id", "broker_id", "key").agg(
        F.max(F.col("dynamic_change").cast("int")).alias("dynamic_change")
    )
    w = Window.partitionBy("cluster_id", "broker_id", "key").orderBy(
        F.col("prec").asc(), F.col("replaced").cast("int").desc()
    )
    now = (
        layers.withColumn("_rn", F.row_number().over(w))
        .where(F.col("_rn") == 1)
        .select("cluster_id", "broker_id", "key", try_int("value").alias("old_value"))
    )
    return join(now, dynamic, ["cluster_id", "broker_id", "key"]).select(
        "cluster_id",
        "broker_id",
        "key",
        "old_value",
        F.when(F.col("dynamic_change") == 1, F.lit("dynamic")).otherwise(F.lit("restart")).alias("applied"),
    )


@rule(
    "THR007",
    "unsafe-thread-change",
    "error",
    scope="change",
    params=(
        Param(
            "thread_pools",
            THREAD_POOLS,
            "thread pool settings checked, as KEY=KAFKA_DEFAULT: the pools Kafka "
            "resizes dynamically and only within [current/2, current*2]",
        ),
    ),
    uses=(broker_settings,),
    runs_in=("lint-against",),
)
def unsafe_thread_change(tables, params):
    """A proposed thread count is more than double or under half the current one: Kafka refuses it as a dynamic update; a restart applies it at once.

    Why: num.network.threads, num.io.threads, num.replica.fetchers, background.threads,
    log.cleaner.threads and num.recovery.threads.per.data.dir can be resized live
    (`kafka-configs --alter`), and Kafka validates such a *dynamic* update against the
    pool's current size: a value below current/2 (integer division) or above current*2 is
    rejected ("Dynamic thread count update validation failed ... should not be greater than
    double the current value": DynamicThreadPool.validateReconfiguration,
    DataPlaneAcceptor.validateReconfiguration per listener, LogCleaner.validateReconfiguration).
    The bound is checked only there: a broker that restarts with a new server.properties
    builds its pools at the configured size, whatever it ran before. So the severity
    follows how the change is applied. Applied dynamically (the change replaces a dynamic
    value, per broker or the cluster default), Kafka refuses it: an error. Applied by a
    restart, Kafka accepts it: info, kept because the pool jumps at once (a 48-core broker
    swamped by ~4000 extra connections was fixed by doubling its thread counts, one step)
    with no chance to watch the idle ratios in between. Every broker configuration lint
    reads is applied by a restart: a server.properties, Helm values and a CFK
    configOverrides roll the brokers; an MSK configuration (Terraform, CloudFormation) is
    applied by a rolling update that restarts each broker; the Strimzi operator tries a
    dynamic update first and, when Kafka refuses it, restarts the broker instead (its
    KafkaRoller), so the jump lands with a roll. "Current" is the value the broker runs now
    in the cluster snapshot given with `lint --against`: a dynamic per-broker value, else
    the dynamic cluster default, else the server.properties line the change replaces, else
    Kafka's default; only brokers whose replaced configuration is in the snapshot are
    judged. The boundary itself passes (8 -> 16), one more fires (8 -> 17). The checked
    keys and their defaults are the parameter `thread_pools`.

    Remediation: dynamically, change the pool in steps of at most x2 (or /2): apply
    `kafka-configs --bootstrap-server B --alter --entity-type brokers --entity-default
    --add-config num.io.threads=16`, watch RequestHandlerAvgIdlePercent, then go on to 32;
    put the final value in server.properties in the same change so a restart keeps it. By
    restart nothing is refused: roll one broker first and watch its idle ratios.

    Example: broker 1 num.io.threads 8 -> 32 (a dynamic update accepts 4..16).

    References:
    - Kafka documentation: updating broker configs, thread configs (updates restricted to currentSize / 2 .. currentSize * 2) <https://kafka.apache.org/39/documentation.html#dynamicbrokerconfigs>
    - Kafka 3.9 source: DynamicBrokerConfig.scala (DynamicThreadPool.validateReconfiguration) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/server/DynamicBrokerConfig.scala>
    - Kafka 3.9 source: SocketServer.scala (DataPlaneAcceptor.validateReconfiguration, num.network.threads per listener) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/network/SocketServer.scala>
    - Kafka 3.9 source: LogCleaner.scala (log.cleaner.threads resize bound) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/log/LogCleaner.scala>
    - Amazon MSK: broker availability during configuration updates (rolling update, each broker restarts) <https://docs.aws.amazon.com/msk/latest/developerguide/msk-update-cluster-config.html>
    - Strimzi KafkaRoller (dynamic update, else restart) <https://github.com/strimzi/strimzi-kafka-operator/blob/main/cluster-operator/src/main/java/io/strimzi/operator/cluster/operator/resource/KafkaRoller.java>
    """
    pools = rows_frame(tables.session, _pools(params["thread_pools"]), "key string, default_value string")
    old = _current_threads(tables, pools)
    new = (
        tables.derived(broker_settings)
        .where(F.col("key").isin(*[r["key"] for r in _pools(params["thread_pools"])]))
        .select("cluster_id", "broker_id", "key", try_int("value").alias("new_value"))
    )
    d = join(old, new, ["cluster_id", "broker_id", "key"]).where(
        F.col("old_value").isNotNull()
        & F.col("new_value").isNotNull()
        & (F.col("new_value") != F.col("old_value"))
    )
    low = F.floor(F.col("old_value") / F.lit(2)).cast("int")
    high = F.col("old_value") * F.lit(2)
    d = (
        d.withColumn("low", F.greatest(low, F.lit(1)))
        .withColumn("high", high)
        .where((F.col("new_value") < F.col("low")) | (F.col("new_value") > F.col("high")))
    )
    direction = F.when(F.col("new_value") > F.col("high"), F.lit("more than double")).otherwise(
        F.lit("less than half")
    )
    dynamic = F.col("applied") == "dynamic"
    # A broker running a dynamic value that a static change does not touch never gets here:
    # the dynamic layer overrides the file, so the effective value does not change.
    verdict = F.when(
        dynamic,
        text(
            ": Kafka refuses this dynamic update (it accepts [",
            F.col("low"),
            ", ",
            F.col("high"),
            "]): step it at most x2 and check the idle ratios before the next step",
        ),
    ).otherwise(
        text(
            ": applied by a restart, which Kafka accepts (the [",
            F.col("low"),
            ", ",
            F.col("high"),
            "] bound holds for dynamic updates only), but the pool jumps at once: roll one broker "
            "first and check its idle ratios",
        )
    )
    msg = text(
        F.col("key"),
        " ",
        F.col("old_value"),
        " -> ",
        F.col("new_value"),
        " on broker ",
        F.col("broker_id"),
        ": ",
        direction,
        " the current value",
        verdict,
    )
    evidence = ev(
        key=F.col("key"),
        current=F.col("old_value"),
        proposed=F.col("new_value"),
        accepted_min=F.col("low"),
        accepted_max=F.col("high"),
        applied=F.col("applied"),
    )
    name = F.concat(F.lit("broker "), F.col("broker_id").cast("string"), F.lit(": "), F.col("key"))
    severity = F.when(dynamic, F.lit("error")).otherwise(F.lit("info"))
    return emit(d, "config", name, msg, evidence, severity)


# The lint layer (auditor/lint/run.py) computes CFG900: only it knows the comments. Declared
# here, with the other change rules, so it is registered and documented like every rule.
UNUSED_SUPPRESSION = lint_rule(
    "CFG900",
    "unused-suppression",
    "info",
    module=__name__,
    doc="""An inline suppression comment matched no finding: remove it, or it will hide a future one.

    Why: `# kafka-audit: ignore[CODE] reason="..."` in a server.properties or topic YAML
    file silences CODE on its own line (a trailing YAML comment) or on the line below (a
    comment alone on its line). Once the setting is fixed, or moved, the comment keeps
    silencing whatever lands there next, with a reason that no longer applies. `kafka-audit
    lint` reports every suppression that matched nothing in the run; the finding is
    computed by the lint layer (auditor/lint), which knows the comments.

    Remediation: delete the comment, or move it onto the line of the finding it was meant
    for (the finding's file:line is in the lint output).

    Example: `# kafka-audit: ignore[REP002] reason="..."` above a topic whose
    min.insync.replicas is now RF-1.

    References:
    - Ruff: unused-noqa (RUF100), the same check for Python suppression comments <https://docs.astral.sh/ruff/rules/unused-noqa/>
    """,
)


# The lint layer computes CFG009 while it reads a managed platform's resources: the limits are
# the platform's (auditor/data/platforms.json), the values the resource's, at their lines.
PLATFORM_REFUSES_SETTING = lint_rule(
    "CFG009",
    "platform-refuses-setting",
    "error",
    module=__name__,
    doc="""A managed Kafka platform refuses the setting as written: applying the change fails.

    Why: a managed platform (Aiven, Google Cloud Managed Service for Apache Kafka) validates a
    topic or cluster against limits of its own before Kafka sees it, so a value Kafka itself
    would accept is refused by the platform's API and `terraform apply` stops half way
    through the change. Aiven does not allow a topic replication factor below 2 (a diskless
    topic, whose data the object storage replicates, is exempt and asks for none) and accepts
    each broker setting of `kafka_user_config.kafka` only within its documented range;
    Google Cloud requires at least 3 vCPUs and 3 GiB for a cluster (it always spans three
    zones), and 1 to 8 GiB of memory per vCPU. The limits are data with their sources
    (auditor/data/platforms.json), checked on the values lint reads from Terraform
    (`aiven_kafka`, `aiven_kafka_topic`, `google_managed_kafka_cluster`), at their lines.

    Remediation: change the value to one the platform accepts: a replication factor of 3 for
    an Aiven topic (or make it a diskless topic), a setting within Aiven's range (see Aiven's
    advanced parameters for Kafka), at least 3 vCPUs and 1-8 GiB per vCPU for a Google Cloud
    cluster.

    Example: `aiven_kafka_topic` with `replication = 1` and no diskless config; a
    `google_managed_kafka_cluster` with `capacity_config { vcpu_count = 1 }`.

    References:
    - Aiven: Optimize Apache Kafka performance ("Replication factors below 2 are not allowed") <https://aiven.io/docs/products/kafka/howto/best-practices>
    - Aiven: advanced parameters for Aiven for Apache Kafka (each setting's minimum and maximum) <https://aiven.io/docs/products/kafka/reference/advanced-params>
    - Aiven: create diskless topics (no replication factor) <https://aiven.io/docs/products/kafka/diskless/howto/create-diskless-topics-automatically>
    - Google Cloud: Managed Service for Apache Kafka overview (minimum 3 vCPU and 3 GiB, three zones) <https://cloud.google.com/managed-service-for-apache-kafka/docs/overview>
    - Google Cloud: CapacityConfig (vcpuCount, memoryBytes) <https://cloud.google.com/managed-service-for-apache-kafka/docs/reference/rest/v1/CapacityConfig>
    """,
)
