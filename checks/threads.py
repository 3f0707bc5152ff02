"""THR: broker request threads and queues (a 48-core broker on 6 network threads fell over under 4,000 new connections).

All rules here read one per-broker view (``broker_threads``): the effective thread and
queue settings, the broker's cores, its log directory count and its request metrics.
"""

from auditor.declarations import Category, Param, rule
from checks._api import F, Window, emit, ev, join, text
from checks.transforms import broker_log_dirs, broker_settings, try_double, try_int

CATEGORY = Category("THR", "threads", "request threads and queues", tuple(range(1, 9)))

NETWORK, IO, QUEUE = "num.network.threads", "num.io.threads", "queued.max.requests"
CONNECTIONS = "connection_count"
# listener.name.<listener>.num.network.threads (KIP-788): a listener's own processor count.
_LISTENER_NETWORK = r"^listener\.name\.([^.]+)\.num\.network\.threads$"
_METRICS = (
    "cpu_count",
    "network_processor_avg_idle_percent",
    "request_handler_avg_idle_percent",
    "request_queue_size",
    CONNECTIONS,
)


def _listener(labels):
    """The "listener" member of a metric's JSON labels ('' when absent). A regular expression
    rather than get_json_object, which sqlframe's DuckDB translation cannot bind."""
    return F.coalesce(F.regexp_extract(labels, '"listener" *: *"([^"]*)"', 1), F.lit(""))


def broker_threads(tables):
    """Per broker: network_threads, io_threads, queued_max_requests (effective settings),
    cores (brokers.cores, else the cpu_count metric), log_dir_count, the metrics
    net_idle, io_idle, queue_size, connections (summed over listeners) and
    busiest_listener_connections (the listener with the most connections), listeners
    (listener labels seen). Each listener has its own pool of network processors:
    num.network.threads, or its `listener.name.<listener>.num.network.threads` override
    (KIP-788); connections_per_network_thread is the busiest listener's connections per
    processor of its own pool, max_listener_network_threads the largest pool."""
    effective = tables.derived(broker_settings)
    settings = effective.where(F.col("key").isin(NETWORK, IO, QUEUE)).select(
        "cluster_id",
        "broker_id",
        "key",
        F.lit(None).cast("string").alias("listener"),
        try_double("value").alias("v"),
    )
    cores = tables.brokers.select(
        "cluster_id",
        "broker_id",
        F.lit("cores").alias("key"),
        F.lit(None).cast("string").alias("listener"),
        F.col("cores").cast("double").alias("v"),
    )
    dirs = tables.derived(broker_log_dirs).select(
        "cluster_id",
        "broker_id",
        F.lit("log_dir_count").alias("key"),
        F.lit(None).cast("string").alias("listener"),
        F.col("log_dir_count").cast("double").alias("v"),
    )
    metrics = tables.metrics.where(F.col("name").isin(*_METRICS)).select(
        "cluster_id",
        "broker_id",
        F.col("name").alias("key"),
        F.when(F.col("name") == CONNECTIONS, _listener(F.col("labels"))).alias("listener"),
        F.col("value").alias("v"),
    )
    per_key = (
        settings.unionByName(cores)
        .unionByName(dirs)
        .unionByName(metrics)
        .where(F.col("broker_id").isNotNull())
        .groupBy("cluster_id", "broker_id", "key", "listener")
        .agg(F.sum("v").alias("total"), F.avg("v").alias("mean"))
    )

    def mean(key):
        return F.max(F.when(F.col("key") == key, F.col("mean")))

    conn = F.when(F.col("key") == CONNECTIONS, F.col("total"))
    wide = per_key.groupBy("cluster_id", "broker_id").agg(
        mean(NETWORK).alias("network_threads"),
        mean(IO).alias("io_threads"),
        mean(QUEUE).alias("queued_max_requests"),
        mean("cores").alias("broker_cores"),
        mean("cpu_count").alias("cpu_count"),
        mean("log_dir_count").alias("log_dir_count"),
        mean("network_processor_avg_idle_percent").alias("net_idle"),
        mean("request_handler_avg_idle_percent").alias("io_idle"),
        mean("request_queue_size").alias("queue_size"),
        F.sum(conn).alias("connections"),
        F.max(conn).alias("busiest_listener_connections"),
        F.count(conn).alias("listeners"),
    )
    positive = F.when(F.col("broker_cores") > 0, F.col("broker_cores")).otherwise(
        F.when(F.col("cpu_count") > 0, F.col("cpu_count"))
    )
    wide = wide.withColumn("cores", positive)
    # Per listener: its connections and its own processors (the override, else the broker's).
    overrides = effective.where(F.col("key").rlike(_LISTENER_NETWORK)).select(
        "cluster_id",
        "broker_id",
        F.lower(F.regexp_extract(F.col("key"), _LISTENER_NETWORK, 1)).alias("listener_key"),
        F.lit(None).cast("double").alias("total"),
        try_double("value").alias("listener_threads"),
    )
    per_listener = per_key.where(F.col("key") == CONNECTIONS).select(
        "cluster_id",
        "broker_id",
        F.lower(F.col("listener")).alias("listener_key"),
        "total",
        F.lit(None).cast("double").alias("listener_threads"),
    )
    listeners = (
        per_listener.unionByName(overrides)
        .groupBy("cluster_id", "broker_id", "listener_key")
        .agg(F.max("total").alias("total"), F.max("listener_threads").alias("listener_threads"))
    )
    pools = join(
        listeners, wide.select("cluster_id", "broker_id", "network_threads"), ["cluster_id", "broker_id"]
    )
    threads = F.coalesce(
        F.when(F.col("listener_threads") > 0, F.col("listener_threads")), F.col("network_threads")
    )
    listener_view = pools.groupBy("cluster_id", "broker_id").agg(
        F.max(F.when(threads > 0, F.col("total") / threads)).alias("connections_per_network_thread"),
        F.max(threads).alias("max_listener_network_threads"),
    )
    return join(wide, listener_view, ["cluster_id", "broker_id"], "left")


def _view(tables):
    return tables.derived(broker_threads)


def _num(name):
    """A whole number for messages (settings, counts), identical on both engines."""
    return F.round(F.col(name)).cast("bigint")


def _fmt(x) -> str:
    """A parameter for messages: 4.0 -> '4', 0.3 -> '0.3'."""
    return str(int(x)) if float(x).is_integer() else str(x)


def _per(a, b):
    """a / b, null unless b > 0: Spark in ANSI mode aborts on a division by zero."""
    if isinstance(b, int | float):
        return a / F.lit(float(b)) if b > 0 else F.lit(None).cast("double")
    return F.when(b > 0, a / b)


def _ratio(col, digits=2):
    return F.round(col, digits)


def _evidence(**extra):
    return ev(
        num_network_threads=_num("network_threads"),
        num_io_threads=_num("io_threads"),
        queued_max_requests=_num("queued_max_requests"),
        cores=_num("cores"),
        log_dirs=_num("log_dir_count"),
        network_processor_avg_idle=_ratio(F.col("net_idle"), 3),
        request_handler_avg_idle=_ratio(F.col("io_idle"), 3),
        request_queue_size=_ratio(F.col("queue_size"), 1),
        connections=_num("connections"),
        busiest_listener_connections=_num("busiest_listener_connections"),
        **extra,
    )


def _broker(df, message, **extra):
    return emit(df, "broker", F.col("broker_id").cast("string"), message, _evidence(**extra))


@rule(
    "THR001",
    "network-threads-saturated",
    "error",
    needs=("metrics",),
    params=(
        Param(
            "min_idle",
            0.3,
            "NetworkProcessorAvgIdlePercent (0-1) below which the network threads are saturated "
            "(Kafka docs: ideally above 0.3)",
        ),
    ),
    uses=(broker_threads,),
    runs_in=("preflight",),
)
def network_threads_saturated(tables, params):
    """The broker's network threads are saturated: NetworkProcessorAvgIdlePercent is below the threshold.

    Why: the network processors read requests from and write responses to every client
    socket. When they are almost never idle, requests wait in socket buffers, produce and
    fetch latency rises, followers fall behind and the ISR shrinks and expands (a 48-core
    broker on 6 network threads took ~4000 extra connections and network idle fell to ~0). The Kafka documentation says this metric should ideally stay above 0.3
    (30%). The threshold is the parameter `min_idle` (a heuristic, 0-1).

    Remediation: raise num.network.threads (see THR003 for a size: about cores/4, and at
    most ~500 connections per network thread per listener). It is a dynamic setting:
    `kafka-configs --bootstrap-server B --alter --entity-type brokers --entity-default
    --add-config num.network.threads=12`, but Kafka accepts a new value only within
    [old/2, old*2], so double at most per step. Also look for connection storms (clients
    reconnecting, too many producers) and enable connection quotas (max.connections).

    Example: broker 3 with NetworkProcessorAvgIdlePercent 0.02 on num.network.threads=6.

    References:
    - Kafka documentation: monitoring (NetworkProcessorAvgIdlePercent ideally > 0.3) <https://kafka.apache.org/39/documentation.html#monitoring>
    - Kafka broker config num.network.threads <https://kafka.apache.org/39/documentation.html#brokerconfigs_num.network.threads>
    - Kafka documentation: updating broker configs (read-only, per-broker and cluster-wide modes) <https://kafka.apache.org/39/documentation.html#dynamicbrokerconfigs>
    """
    d = _view(tables).where(F.col("net_idle") < params["min_idle"])
    msg = text(
        "NetworkProcessorAvgIdlePercent is ",
        _ratio(F.col("net_idle")),
        " (below " + _fmt(params["min_idle"]),
        ") with num.network.threads=",
        _num("network_threads"),
        " and ",
        _num("connections"),
        " connections: the network threads are saturated",
    )
    return _broker(d, msg, min_idle=F.lit(params["min_idle"]))


@rule(
    "THR002",
    "io-threads-saturated",
    "error",
    needs=("metrics",),
    params=(
        Param(
            "min_idle",
            0.3,
            "RequestHandlerAvgIdlePercent (0-1) below which the I/O (request handler) threads are saturated",
        ),
    ),
    uses=(broker_threads,),
    runs_in=("preflight",),
)
def io_threads_saturated(tables, params):
    """The broker's I/O (request handler) threads are saturated: RequestHandlerAvgIdlePercent is below the threshold.

    Why: the request handler threads execute every request (appends to the log, fetches,
    metadata, offset commits). When they are rarely idle, the request queue fills up,
    the network threads block on it, and every client and follower sees latency; ISR
    churn follows. Like the network processors, they should ideally stay above 30% idle.
    The threshold is the parameter `min_idle` (a heuristic, 0-1).

    Remediation: raise num.io.threads (at least cores/2, and at least the number of log
    dirs; see THR004). It is dynamic: `kafka-configs --bootstrap-server B --alter
    --entity-type brokers --entity-default --add-config num.io.threads=32`, within
    [old/2, old*2] per change. If disks are the bottleneck (high I/O wait), more threads
    will not help: add brokers or faster disks.

    Example: broker 2 with RequestHandlerAvgIdlePercent 0.14 on num.io.threads=16.

    References:
    - Kafka documentation: monitoring (RequestHandlerAvgIdlePercent ideally > 0.3) <https://kafka.apache.org/39/documentation.html#monitoring>
    - Kafka broker config num.io.threads <https://kafka.apache.org/39/documentation.html#brokerconfigs_num.io.threads>
    - Kafka documentation: updating broker configs (read-only, per-broker and cluster-wide modes) <https://kafka.apache.org/39/documentation.html#dynamicbrokerconfigs>
    """
    d = _view(tables).where(F.col("io_idle") < params["min_idle"])
    msg = text(
        "RequestHandlerAvgIdlePercent is ",
        _ratio(F.col("io_idle")),
        " (below " + _fmt(params["min_idle"]),
        ") with num.io.threads=",
        _num("io_threads"),
        ": the request handler threads are saturated",
    )
    return _broker(d, msg, min_idle=F.lit(params["min_idle"]))


_BUSY_IDLE = Param(
    "busy_idle",
    0.5,
    "idle ratio (0-1) below which the pool counts as loaded: the load signal that turns a "
    "finding from info into a warning (Kafka's documentation wants it above 0.3)",
)


def _load(idle_col, busy_idle, metric):
    """(is the pool loaded, the words that say why or why not) from its idle ratio."""
    loaded = F.coalesce(F.col(idle_col) < F.lit(busy_idle), F.lit(False))
    words = F.when(
        loaded,
        text(metric + " ", _ratio(F.col(idle_col)), " (below " + _fmt(busy_idle) + ")"),
    ).otherwise(
        F.when(
            F.col(idle_col).isNull(),
            F.lit("no load signal (" + metric + " not collected): sizing advice only"),
        ).otherwise(text("no load signal (" + metric + " ", _ratio(F.col(idle_col)), "): sizing advice only"))
    )
    return loaded, words


@rule(
    "THR003",
    "network-threads-low",
    "warning",
    needs=("brokers", "configs"),
    params=(
        Param("cores_per_network_thread", 4.0, "fires when num.network.threads < cores / this"),
        Param(
            "max_connections_per_thread",
            500.0,
            "fires when a listener's connections per network thread exceed this",
        ),
        _BUSY_IDLE,
    ),
    uses=(broker_threads,),
    runs_in=("lint",),
    lint_key="num.network.threads",
)
def network_threads_low(tables, params):
    """num.network.threads is low for the broker's connections, or for its cores (a warning only when the network threads are loaded).

    Why: every listener has its own pool of network processors, num.network.threads of
    them unless `listener.name.<listener>.num.network.threads` overrides it for that
    listener (KIP-788); each processor multiplexes its share of the listener's
    connections. With few processors on a large host, a surge of connections saturates
    them long before the CPU is busy (a broker with 6 network threads on 48 cores took
    ~4000 extra connections, and its network-processor idle fell to ~0). The rule fires
    when the busiest listener has more than `max_connections_per_thread` (default 500)
    connections per processor of its own pool, or when num.network.threads < cores /
    `cores_per_network_thread` (default 4). Neither count says whether the processors keep
    up (idle connections cost a processor little), so either is a warning only when
    NetworkProcessorAvgIdlePercent is below `busy_idle` (default 0.5; Kafka's monitoring
    documentation wants it above 0.3), and info otherwise (no metrics, as in lint, or idle
    processors). All three are heuristic parameters. Kafka publishes no per-core rule.
    AWS sizes the network threads of its Express brokers by instance size (Express broker
    read-only configurations: num.network.threads = max(8, vCPUs), 8 on m7g.large up to 64
    on m7g.16xlarge), while MSK's default configuration for Standard brokers sets 5 whatever
    the size: the rule's cores/4 asks for less than Express runs.

    Remediation: raise num.network.threads (or the busy listener's
    `listener.name.<listener>.num.network.threads`) towards the suggested value (the
    message gives it). It can be changed dynamically with `kafka-configs --alter
    --entity-type brokers --entity-default --add-config num.network.threads=N`, but Kafka
    accepts a dynamic value only within [old/2, old*2]: from 6, go to 12 first (a restart
    with a new server.properties has no such bound). Check queued.max.requests (THR006),
    which needs a restart.

    Example: 48 cores, num.network.threads=6 (below 48/4 = 12), 4000 connections on one
    listener (667 per network thread).

    References:
    - Kafka broker config num.network.threads <https://kafka.apache.org/39/documentation.html#brokerconfigs_num.network.threads>
    - KIP-788: Allow configuring num.network.threads per listener <https://cwiki.apache.org/confluence/display/KAFKA/KIP-788%3A+Allow+configuring+num.network.threads+per+listener>
    - Kafka documentation: monitoring (NetworkProcessorAvgIdlePercent ideally > 0.3) <https://kafka.apache.org/39/documentation.html#monitoring>
    - Kafka documentation: updating broker configs (read-only, per-broker and cluster-wide modes) <https://kafka.apache.org/39/documentation.html#dynamicbrokerconfigs>
    - Amazon MSK: Express broker read-only configurations (num.io.threads and num.network.threads by instance size) <https://docs.aws.amazon.com/msk/latest/developerguide/msk-configuration-express-read-only.html>
    - Amazon MSK default configuration (num.io.threads 8, num.network.threads 5, whatever the broker size) <https://docs.aws.amazon.com/msk/latest/developerguide/msk-default-configuration.html>
    """
    per_core, per_thread = params["cores_per_network_thread"], params["max_connections_per_thread"]
    d = _view(tables).where(F.col("network_threads") > 0)
    few_for_cores = F.coalesce(F.col("network_threads") < _per(F.col("cores"), per_core), F.lit(False))
    per_net = F.col("connections_per_network_thread")
    few_for_conns = F.coalesce(per_net > F.lit(per_thread), F.lit(False))
    loaded, load_words = _load("net_idle", params["busy_idle"], "NetworkProcessorAvgIdlePercent")
    d = d.where(few_for_cores | few_for_conns)
    target = F.greatest(
        F.coalesce(F.ceil(_per(F.col("cores"), per_core)), F.lit(0)),
        F.coalesce(F.ceil(_per(F.col("busiest_listener_connections"), per_thread)), F.lit(0)),
    )
    step = F.least(target, F.col("network_threads") * F.lit(2))
    reasons = F.concat_ws(
        "; ",
        F.when(
            few_for_cores,
            text("below cores/" + _fmt(per_core) + " = ", _ratio(_per(F.col("cores"), per_core), 1)),
        ),
        F.when(
            few_for_conns,
            text(
                _ratio(per_net, 0).cast("bigint"),
                " connections per network thread on the busiest listener (above ",
                _fmt(per_thread) + ")",
            ),
        ),
        load_words,
    )
    msg = text(
        "num.network.threads=",
        _num("network_threads"),
        " on ",
        _num("cores"),
        " cores: ",
        reasons,
        "; raise it to about ",
        target.cast("bigint"),
        " (dynamically at most doubling per change: ",
        step.cast("bigint"),
        " first)",
    )
    severity = F.when(loaded, F.lit("warning")).otherwise(F.lit("info"))
    return emit(
        d,
        "broker",
        F.col("broker_id").cast("string"),
        msg,
        _evidence(
            suggested_network_threads=target.cast("bigint"),
            connections_per_network_thread=_ratio(per_net, 1),
            load_signal=loaded,
        ),
        severity,
    )


@rule(
    "THR004",
    "io-threads-low",
    "warning",
    needs=("brokers", "configs"),
    params=(Param("cores_per_io_thread", 2.0, "fires when num.io.threads < cores / this"), _BUSY_IDLE),
    uses=(broker_threads,),
    runs_in=("lint",),
    lint_key="num.io.threads",
)
def io_threads_low(tables, params):
    """num.io.threads is below half the broker's cores, or below its number of log directories (a warning only when the I/O threads are loaded).

    Why: the request handler (I/O) threads execute every request, disk work included.
    Fewer than cores / `cores_per_io_thread` (default 2) can leave a large host idle while
    requests queue (a 48-core broker on 16 I/O threads saturated under ~4000 extra
    connections until both thread counts were doubled), and fewer threads than log
    directories cannot keep every disk busy. A core or directory count alone says nothing
    of the load, so the finding is a warning only when RequestHandlerAvgIdlePercent is
    below `busy_idle` (default 0.5; Kafka's monitoring documentation wants it above 0.3),
    and info otherwise (no metrics, as in lint, or idle handlers). Both are heuristic
    parameters. Kafka publishes no per-core rule. AWS sizes the I/O threads of its Express
    brokers by instance size (Express broker read-only configurations: num.io.threads =
    max(8, 2 x vCPUs), 8 on m7g.large up to 128 on m7g.16xlarge), while MSK's default
    configuration for Standard brokers sets 8 whatever the size: the rule's cores/2 asks
    for a quarter of what Express runs.

    Remediation: raise num.io.threads to at least max(cores/2, log dirs): `kafka-configs
    --bootstrap-server B --alter --entity-type brokers --entity-default --add-config
    num.io.threads=N`. It is dynamic, but Kafka accepts a dynamic value only within
    [old/2, old*2] per change (from 16: 32 at most). queued.max.requests, by contrast,
    needs a restart (THR006).

    Example: 48 cores, num.io.threads=16 (below 48/2 = 24), RequestHandlerAvgIdlePercent 0.2.

    References:
    - Kafka broker config num.io.threads <https://kafka.apache.org/39/documentation.html#brokerconfigs_num.io.threads>
    - Kafka documentation: monitoring (RequestHandlerAvgIdlePercent ideally > 0.3) <https://kafka.apache.org/39/documentation.html#monitoring>
    - Amazon MSK: Express broker read-only configurations (num.io.threads and num.network.threads by instance size) <https://docs.aws.amazon.com/msk/latest/developerguide/msk-configuration-express-read-only.html>
    - Amazon MSK default configuration (num.io.threads 8, num.network.threads 5, whatever the broker size) <https://docs.aws.amazon.com/msk/latest/developerguide/msk-default-configuration.html>
    """
    per_core = params["cores_per_io_thread"]
    d = _view(tables).where(F.col("io_threads") > 0)
    few_for_cores = F.col("io_threads") < _per(F.col("cores"), per_core)
    few_for_dirs = F.col("io_threads") < F.col("log_dir_count")
    loaded, load_words = _load("io_idle", params["busy_idle"], "RequestHandlerAvgIdlePercent")
    d = d.where(F.coalesce(few_for_cores, F.lit(False)) | F.coalesce(few_for_dirs, F.lit(False)))
    target = F.greatest(
        F.coalesce(F.ceil(_per(F.col("cores"), per_core)), F.lit(0)),
        F.coalesce(F.col("log_dir_count").cast("bigint"), F.lit(0)),
    )
    step = F.least(target, F.col("io_threads") * F.lit(2))
    reasons = F.concat_ws(
        "; ",
        F.when(
            few_for_cores,
            text("below cores/" + _fmt(per_core) + " = ", _ratio(_per(F.col("cores"), per_core), 1)),
        ),
        F.when(few_for_dirs, text("below its ", _num("log_dir_count"), " log dirs")),
        load_words,
    )
    msg = text(
        "num.io.threads=",
        _num("io_threads"),
        " on ",
        _num("cores"),
        " cores: ",
        reasons,
        "; raise it to about ",
        target.cast("bigint"),
        " (dynamically at most doubling per change: ",
        step.cast("bigint"),
        " first)",
    )
    severity = F.when(loaded, F.lit("warning")).otherwise(F.lit("info"))
    return emit(
        d,
        "broker",
        F.col("broker_id").cast("string"),
        msg,
        _evidence(suggested_io_threads=target.cast("bigint"), load_signal=loaded),
        severity,
    )


@rule(
    "THR005",
    "network-above-io",
    "warning",
    needs=("brokers", "configs"),
    params=(_BUSY_IDLE,),
    uses=(broker_threads,),
    runs_in=("lint",),
    lint_key="num.network.threads",
)
def network_above_io(tables, params):
    """A listener has more network threads than the broker has I/O threads (a warning only when the I/O threads are loaded).

    Why: every listener's network processors hand their requests to one shared request
    queue, served by the num.io.threads request handlers. A listener with more processors
    (num.network.threads, or its `listener.name.<listener>.num.network.threads`) than there
    are handlers can read requests faster than they are executed: the queue fills, the
    processors block on it, and latency rises for everyone. Kafka's own defaults keep the
    handlers ahead (3 network, 8 I/O threads). Whether it matters depends on the load, so
    the finding is a warning only when RequestHandlerAvgIdlePercent is below `busy_idle`
    (default 0.5, a heuristic; Kafka's monitoring documentation wants it above 0.3), and
    info otherwise. No AWS page states a rule on the ratio that we could find.

    Remediation: raise num.io.threads to at least the largest network thread count (or
    lower that listener's network threads): `kafka-configs --alter --entity-type brokers
    --entity-default --add-config num.io.threads=N`. Both thread counts are dynamic, but
    Kafka accepts a dynamic value only within [old/2, old*2] per change;
    queued.max.requests, if it must grow too, needs a restart.

    Example: num.network.threads=16 with num.io.threads=8.

    References:
    - Kafka broker config num.network.threads <https://kafka.apache.org/39/documentation.html#brokerconfigs_num.network.threads>
    - Kafka broker config num.io.threads <https://kafka.apache.org/39/documentation.html#brokerconfigs_num.io.threads>
    - KIP-788: Allow configuring num.network.threads per listener <https://cwiki.apache.org/confluence/display/KAFKA/KIP-788%3A+Allow+configuring+num.network.threads+per+listener>
    - Kafka documentation: monitoring (RequestHandlerAvgIdlePercent ideally > 0.3) <https://kafka.apache.org/39/documentation.html#monitoring>
    """
    network = F.greatest(
        F.col("network_threads"), F.coalesce(F.col("max_listener_network_threads"), F.lit(0))
    )
    d = _view(tables).withColumn("largest_pool", network).where(F.col("largest_pool") > F.col("io_threads"))
    loaded, load_words = _load("io_idle", params["busy_idle"], "RequestHandlerAvgIdlePercent")
    msg = text(
        "a listener has ",
        _num("largest_pool"),
        " network threads, above num.io.threads=",
        _num("io_threads"),
        ": requests can pile up in the request queue (",
        load_words,
        "); raise num.io.threads to at least ",
        _num("largest_pool"),
    )
    severity = F.when(loaded, F.lit("warning")).otherwise(F.lit("info"))
    return emit(
        d,
        "broker",
        F.col("broker_id").cast("string"),
        msg,
        _evidence(largest_network_pool=_num("largest_pool"), load_signal=loaded),
        severity,
    )


@rule(
    "THR006",
    "request-queue-small",
    "warning",
    needs=("metrics",),
    params=(
        Param("connections_per_slot", 4.0, "fires when queued.max.requests < connections / this"),
        Param(
            "max_queue_fill", 0.8, "fires when RequestQueueSize is above this fraction of queued.max.requests"
        ),
        _BUSY_IDLE,
    ),
    uses=(broker_threads,),
    runs_in=("preflight", "lint"),
    lint_key="queued.max.requests",
)
def request_queue_small(tables, params):
    """queued.max.requests is small for the broker's connections (a warning only under load), or the request queue is nearly full.

    Why: queued.max.requests bounds the request queue between the network and I/O
    threads. Each connection has at most one request in it at a time, so with many
    connections a small queue fills and the network threads stop reading sockets: the
    symptom looks like network saturation (a broker at queued.max.requests=500 took ~4000
    extra connections; raising it to 1000 along with doubled thread counts fixed it). The
    rule fires when queued.max.requests < connections /
    `connections_per_slot` (default 4), or when the RequestQueueSize metric is above
    `max_queue_fill` (default 0.8) of it. A nearly full queue is a warning. A connection
    count alone says nothing of how many requests are in flight (a busy cluster's idle
    connections queue nothing), so a small queue for many connections is a warning only
    with a load signal, the request handlers' RequestHandlerAvgIdlePercent below
    `busy_idle` (default 0.5, as THR003/THR004), and info otherwise. All are heuristic
    parameters.

    Remediation: raise queued.max.requests in server.properties (for example 500 -> 1000)
    and do a rolling restart: it is a static (read-only) setting and cannot be changed with
    kafka-configs. Check num.io.threads too (THR004): a full queue often means too few
    I/O threads; thread counts are dynamic, within [old/2, old*2] per change.

    Example: queued.max.requests=500 on a broker with 3900 connections (3900 / 4 = 975).

    References:
    - Kafka broker config queued.max.requests <https://kafka.apache.org/39/documentation.html#brokerconfigs_queued.max.requests>
    - Kafka documentation: monitoring (RequestQueueSize) <https://kafka.apache.org/39/documentation.html#monitoring>
    """
    slot, fill = params["connections_per_slot"], params["max_queue_fill"]
    d = _view(tables).where(F.col("queued_max_requests") > 0)
    small = F.col("queued_max_requests") < _per(F.col("connections"), slot)
    full = F.col("queue_size") > F.col("queued_max_requests") * F.lit(fill)
    d = d.where(F.coalesce(small, F.lit(False)) | F.coalesce(full, F.lit(False)))
    reasons = F.concat_ws(
        "; ",
        F.when(
            small,
            text(
                "below ",
                _num("connections"),
                " connections / " + _fmt(slot) + " = ",
                F.ceil(_per(F.col("connections"), slot)).cast("bigint"),
            ),
        ),
        F.when(
            full,
            text(
                "RequestQueueSize ",
                _ratio(F.col("queue_size"), 0).cast("bigint"),
                " is above ",
                F.lit(round(fill * 100)),
                "% of it",
            ),
        ),
    )
    target = F.greatest(
        F.ceil(_per(F.coalesce(F.col("connections"), F.lit(0)), slot)),
        F.col("queued_max_requests") * F.lit(2),
    ).cast("bigint")
    msg = text(
        "queued.max.requests=",
        _num("queued_max_requests"),
        ": ",
        reasons,
        "; raise it to ",
        target,
        " in server.properties (static setting: a rolling restart is needed)",
    )
    loaded, _words = _load("io_idle", params["busy_idle"], "RequestHandlerAvgIdlePercent")
    filling = F.coalesce(full, F.lit(False))
    return emit(
        d,
        "broker",
        F.col("broker_id").cast("string"),
        msg,
        _evidence(suggested_queued_max_requests=target, queue_filling=filling, load_signal=loaded),
        F.when(filling | loaded, F.lit("warning")).otherwise(F.lit("info")),
    )


# -- THR008: replica fetcher threads against the partitions they fetch -----------------------

FETCHERS = "num.replica.fetchers"


def follower_load(tables):
    """Per follower broker (``broker_id``): the partitions it follows (``follower_partitions``),
    the leaders it fetches from (``source_brokers``) and, for the leader it follows most, that
    count (``busiest_source_partitions``, from ``busiest_source``). Partitions are first counted
    per (replica list, leader), a few thousand rows however many partitions, then exploded."""
    per_leader = (
        tables.partitions.where(F.col("leader") >= 0)
        .groupBy("cluster_id", "replicas", "leader")
        .agg(F.count(F.lit(1)).alias("n"))
    )
    pairs = (
        per_leader.select("cluster_id", "leader", "n", F.explode(F.col("replicas")).alias("broker_id"))
        .where(F.col("broker_id") != F.col("leader"))
        .groupBy("cluster_id", "broker_id", "leader")
        .agg(F.sum("n").alias("n"))
    )
    totals = pairs.groupBy("cluster_id", "broker_id").agg(
        F.sum("n").alias("follower_partitions"), F.count(F.lit(1)).alias("source_brokers")
    )
    w = Window.partitionBy("cluster_id", "broker_id").orderBy(F.col("n").desc(), F.col("leader").asc())
    busiest = (
        pairs.withColumn("_rn", F.row_number().over(w))
        .where(F.col("_rn") == 1)
        .select(
            "cluster_id",
            "broker_id",
            F.col("n").alias("busiest_source_partitions"),
            F.col("leader").alias("busiest_source"),
        )
    )
    return join(totals, busiest, ["cluster_id", "broker_id"])


@rule(
    "THR008",
    "replica-fetchers-low",
    "info",
    needs=("partitions",),
    params=(
        Param(
            "max_partitions_per_fetcher",
            2000,
            "follower partitions one replica fetcher thread may carry before the rule fires (a heuristic)",
        ),
    ),
    uses=(broker_settings,),
)
def replica_fetchers_low(tables, params):
    """A broker fetches thousands of follower partitions per replica fetcher thread: replication lags under load.

    Why: a follower broker replicates with num.replica.fetchers threads (default 1) per
    leader broker it follows ("the number of fetcher threads used to replicate records from
    each source broker"); each partition goes to one thread, Utils.abs(31 *
    topic.hashCode() + partition) % num.replica.fetchers (AbstractFetcherManager.getFetcherId).
    One thread sends one fetch request at a time for all its partitions, so a thread
    carrying thousands of partitions builds large requests and falls behind when the
    leaders take writes: followers lag, leave the ISR after replica.lag.time.max.ms, and
    partitions go under min.insync.replicas. Kafka documents the trade-off (more threads:
    more I/O parallelism, more CPU and memory) but gives no number; the threshold, follower
    partitions per thread for the leader broker a follower fetches most from, is a heuristic
    parameter, which is why the rule reports at info.

    Remediation: raise num.replica.fetchers (for example to 2 or 4) on the busy brokers; it
    is a dynamic setting (`kafka-configs --bootstrap-server B --alter --entity-type brokers
    --entity-default --add-config num.replica.fetchers=4`, or per broker with
    `--entity-name ID`), and watch the ReplicaFetcherManager MaxLag metric and the ISR
    shrink rate before and after. Spreading partitions over more brokers lowers the load too.

    Example: broker 3 follows 7,400 partitions, 3,700 of them led by broker 1, with
    num.replica.fetchers=1: one thread fetches 3,700 partitions from broker 1.

    References:
    - Kafka broker config num.replica.fetchers <https://kafka.apache.org/39/documentation.html#brokerconfigs_num.replica.fetchers>
    - apache/kafka core/src/main/scala/kafka/server/AbstractFetcherManager.scala (getFetcherId) <https://github.com/apache/kafka/blob/trunk/core/src/main/scala/kafka/server/AbstractFetcherManager.scala>
    - apache/kafka core/src/main/scala/kafka/server/DynamicBrokerConfig.scala (num.replica.fetchers is dynamically updatable) <https://github.com/apache/kafka/blob/trunk/core/src/main/scala/kafka/server/DynamicBrokerConfig.scala>
    - Kafka documentation: monitoring (ReplicaFetcherManager MaxLag, IsrShrinksPerSec) <https://kafka.apache.org/39/documentation.html#monitoring>
    """
    fetchers = (
        tables.derived(broker_settings)
        .where(F.col("key") == FETCHERS)
        .select("cluster_id", "broker_id", try_int("value").alias("fetchers"))
    )
    d = join(follower_load(tables), fetchers, ["cluster_id", "broker_id"], "left").withColumn(
        "fetchers", F.coalesce(F.col("fetchers"), F.lit(1))
    )
    per_thread = F.ceil(F.col("busiest_source_partitions") / F.greatest(F.col("fetchers"), F.lit(1)))
    d = d.withColumn("per_thread", per_thread.cast("bigint")).where(
        F.col("per_thread") > F.lit(params["max_partitions_per_fetcher"])
    )
    suggested = F.ceil(F.col("busiest_source_partitions") / F.lit(params["max_partitions_per_fetcher"]))
    msg = text(
        "follows ",
        F.col("follower_partitions"),
        " partition(s) from ",
        F.col("source_brokers"),
        " leader broker(s) with num.replica.fetchers=",
        F.col("fetchers"),
        ": about ",
        F.col("per_thread"),
        " partitions per fetcher thread for broker ",
        F.col("busiest_source"),
        " (above ",
        F.lit(params["max_partitions_per_fetcher"]),
        "); followers may lag and leave the ISR under load; consider num.replica.fetchers=",
        suggested.cast("bigint"),
    )
    return emit(
        d,
        "broker",
        F.col("broker_id").cast("string"),
        msg,
        ev(
            num_replica_fetchers=F.col("fetchers"),
            follower_partitions=F.col("follower_partitions"),
            source_brokers=F.col("source_brokers"),
            busiest_source_broker=F.col("busiest_source"),
            busiest_source_partitions=F.col("busiest_source_partitions"),
            partitions_per_fetcher=F.col("per_thread"),
            max_partitions_per_fetcher=F.lit(params["max_partitions_per_fetcher"]),
        ),
    )
