"""Change review: rules about a proposed change, run by ``kafka-audit lint`` (scope "change").

The lint layer (auditor/lint) applies the proposed files to the snapshot of the cluster
they will land on (``--against SNAPSHOT_DIR``). A proposed server.properties replaces its
broker's static configuration; the lines it replaces stay in ``configs`` with source
``REPLACED_STATIC_BROKER_CONFIG``, which no effective-config transform reads. So in a
change snapshot ``broker_settings`` is the configuration *after* the change, and the
replaced rows with the dynamic layers give the configuration the broker runs *now*.
"""

from auditor.declarations import Param, lint_rule, rule
from checks._api import F, Window, emit, ev, join, rows_frame, text
from checks.transforms import broker_settings, try_int

REPLACED = "REPLACED_STATIC_BROKER_CONFIG"

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
    """Per changed broker and thread pool key: the value the broker runs now. Layers, first
    wins: dynamic per-broker, dynamic cluster default, the replaced server.properties line,
    Kafka's default. Only brokers whose current server.properties is known (they have
    replaced rows) are judged: otherwise "now" would be a guess."""
    c = tables.configs.where(F.col("is_sensitive").isNull() | ~F.col("is_sensitive"))
    changed = (
        c.where(F.col("source") == REPLACED)
        .select("cluster_id", try_int("entity_name").alias("broker_id"))
        .where(F.col("broker_id").isNotNull())
        .distinct()
    )
    grid = changed.crossJoin(pools)
    broker = c.where(F.col("entity_type") == "broker").select(
        "cluster_id",
        try_int("entity_name").alias("broker_id"),
        "key",
        F.trim(F.col("value")).alias("value"),
        F.when(F.col("source") == "DYNAMIC_BROKER_CONFIG", F.lit(1))
        .when(F.col("source") == REPLACED, F.lit(3))
        .alias("prec"),
    )
    default = c.where(F.col("entity_type") == "cluster_default").select(
        "cluster_id", "key", F.trim(F.col("value")).alias("d_value")
    )
    per_broker = join(
        grid.select("cluster_id", "broker_id", "key"),
        broker.where(F.col("prec").isNotNull()),
        ["cluster_id", "broker_id", "key"],
    )
    cluster_default = join(
        grid.select("cluster_id", "broker_id", "key"), default, ["cluster_id", "key"]
    ).select("cluster_id", "broker_id", "key", F.col("d_value").alias("value"), F.lit(2).alias("prec"))
    kafka_default = grid.select(
        "cluster_id", "broker_id", "key", F.col("default_value").alias("value"), F.lit(4).alias("prec")
    ).where(F.col("value").isNotNull())
    layers = per_broker.unionByName(cluster_default).unionByName(kafka_default)
    w = Window.partitionBy("cluster_id", "broker_id", "key").orderBy(F.col("prec").asc())
    return (
        layers.withColumn("_rn", F.row_number().over(w))
        .where(F.col("_rn") == 1)
        .select(
            "cluster_id",
            "broker_id",
            "key",
            try_int("value").alias("old_value"),
            F.col("prec").alias("old_prec"),
        )
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
    """A proposed thread count is more than double or under half the current one: a restart applies a jump Kafka would refuse as one dynamic resize.

    Why: num.network.threads, num.io.threads, num.replica.fetchers, background.threads,
    log.cleaner.threads and num.recovery.threads.per.data.dir are resized live
    (`kafka-configs --alter`), and Kafka validates each resize against the pool's current
    size: a value below current/2 (integer division) or above current*2 is rejected
    ("Dynamic thread count update validation failed ... should not be greater than double
    the current value"). A change review that raises num.io.threads from 8 to 32 in one
    step therefore fails when applied dynamically, and as a static server.properties
    change it needs a rolling restart in which each broker comes back with four times the
    threads at once (a 48-core broker swamped by ~4000 extra connections was fixed by
    doubling its thread counts, one step). "Current" is the value
    the broker runs now in the cluster snapshot given with `lint --against`: a dynamic
    per-broker value, else the dynamic cluster default, else the server.properties line
    the change replaces, else Kafka's default; only brokers whose current server.properties
    is in the snapshot are judged. The boundary itself passes (8 -> 16), one more fires
    (8 -> 17). The checked keys and their defaults are the parameter `thread_pools`.

    Remediation: change the pool in steps of at most x2 (or /2): apply
    `kafka-configs --bootstrap-server B --alter --entity-type brokers --entity-default
    --add-config num.io.threads=16`, watch RequestHandlerAvgIdlePercent, then go on to 32;
    put the final value in server.properties in the same change so a restart keeps it.

    Example: broker 1 num.io.threads 8 -> 32 (accepted range 4..16).

    References:
    - Kafka documentation: updating broker configs (read-only, per-broker and cluster-wide modes) <https://kafka.apache.org/39/documentation.html#dynamicbrokerconfigs>
    - Kafka 3.9 source: DynamicBrokerConfig.scala (thread pool resize validation) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/server/DynamicBrokerConfig.scala>
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
    # The proposed value is a server.properties line, so a restart applies it, without the
    # range a dynamic resize would be held to: the message says that, not "refused". (A broker
    # running a dynamic value never gets here: the dynamic layer overrides the file, so the
    # effective value does not change.)
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
        " the current value; a restart applies it at once, past the [",
        F.col("low"),
        ", ",
        F.col("high"),
        "] Kafka holds a dynamic resize to: step it at most x2 (kafka-configs) and check the "
        "idle ratios before the final value",
    )
    evidence = ev(
        key=F.col("key"),
        current=F.col("old_value"),
        proposed=F.col("new_value"),
        accepted_min=F.col("low"),
        accepted_max=F.col("high"),
    )
    name = F.concat(F.lit("broker "), F.col("broker_id").cast("string"), F.lit(": "), F.col("key"))
    return emit(d, "config", name, msg, evidence)


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
