"""The root-cause stage: which findings one failure or one cluster-wide setting explains.

One unregistered broker produces hundreds of symptoms (PAR004/PAR005 on every partition it
dropped out of the ISR of, besides REP008 and PAR007 on the broker itself): the report must
say "broker 5 is not registered: that explains these findings" first, and say it per topic.

Everything is computed in the engine, as one more stage after the runner's final stage
(``attach``): the fleet job writes ``cause`` with its Parquet findings and `check` reads it
with them; no Python loop sees more than one row per cause (``summarise``). Why not from
the findings alone: whether a partition's ISR loss is *only* the failed broker's doing needs
the partition's replicas, ISR and leader, which are in the snapshot, not in every finding.

The causes, most specific first (a finding gets at most one; the first that matches):

1. ``log-dir-offline:B``: broker B has a failed log dir (a log_dirs error, or a pending
   log_dir_event). Its findings: DSK001 and PAR006 about B, its dirs and the partitions
   whose offline replicas include B, and the partition symptoms (the rules that declare
   cause="symptom") of those partitions when the failures explain them.
2. ``broker-unregistered:B``: B holds replicas but is not in the brokers table (down, or
   removed without reassigning). Its findings: REP008 and PAR007 about B (the broker),
   and the partition symptoms of the partitions with a replica on B when the failures
   explain them. Only in
   clusters with registered brokers (a snapshot without the brokers table names no one).
   A partition on several failed brokers is attributed to the lowest id.
3. ``cluster-default:KEY=VALUE (SOURCE)``: a finding about the value itself (the rules that
   declare cause=Inherits(...): REP001/REP002/REP004 for min.insync.replicas, REP005 for
   unclean leader election) whose
   evidence says it came from a cluster-level layer (server.properties, the dynamic cluster
   default or Kafka's default), when at least MIN_INHERITED findings of the cluster share it:
   one change of the default fixes them all.

"Explained" for a partition: every replica out of the ISR is on a failed broker (down, or
listed offline), and it has a leader unless its whole ISR is on failed brokers. A partition
that also lost a live replica (a split-brain's leaderless partition) has another problem
too, and keeps its symptoms unattributed; REP008's own finding is still the broker's.

Per topic under a failure: a partition finding a failure explains (the rule declares
cause="failure" or "symptom", and the partition's state is explained) is not reported per
partition but once per (rule, cause, topic) when the topic has two or more of them: "N
partition(s) of topic T (0,3,7, ...), e.g. T-0: <that partition's message>", resource the
topic, evidence the count, the first MAX_LISTED partitions and the example's own evidence
(``_per_topic``). One down broker was 70 REP008 errors plus 139 PAR004/PAR005 warnings on
the sample fleet; it is now 1 + 10 (a topic with one such partition keeps its finding).
How those count: each is one finding at its rule's severity, in totals, grades and exit
codes alike. An SRE wants one finding per problem, and CI gates must keep failing on the
same clusters: a cluster with a partition finding at a severity still has a topic finding
at that severity (the grouping never drops the last one, nor changes a severity), so
`--fail-on` and the exit code are unchanged; grades charge a rule's weight once plus a
tenth per further finding up to the weight again (auditor/grading.py), so a rule that
fired keeps at least its weight and grades move only where hundreds of partition findings
had added the second weight. Exempted findings stay per partition (an exemption names
partitions), and a partition the failure does not explain keeps its own finding. A topic
finding's fingerprint is its rule, cluster and topic: a baseline or `--previous` run taken
before sees them as new, and the partition ones as resolved.

The data (``Cause``, the kinds' words, the summaries) is auditor/causes.py, which every layer
reads; this stage is the engine's.
"""

from __future__ import annotations

from collections.abc import Iterable

from auditor.causes import BROKER_DOWN, DEFAULT, LOG_DIR, Cause, summarise
from auditor.declarations import Inherits
from auditor.engine.tables import VIEW_PREFIX
from auditor.frames import F, Window, join
from auditor.registry import load_rules
from checks.transforms import (
    DYNAMIC_DEFAULT,
    KAFKA_DEFAULT,
    SOURCE_NAMES,
    STATIC,
    failed_log_dir,
    partition_name,
    replica_placement,
)


def roles() -> tuple[tuple[str, ...], tuple[str, ...], tuple[tuple[tuple[str, ...], Inherits], ...]]:
    """What each registered rule declares it is for root causes (auditor/declarations.py cause):
    (failure rules: a failed broker or log dir produces them about the resources it touches,
    whatever else is wrong; symptom rules: partition symptoms, attributed only when the
    failures explain the partition's state; (rules, Inherits) per inherited key)."""
    rules = sorted(load_rules().items())
    failure = tuple(code for code, r in rules if r.cause == "failure")
    symptom = tuple(code for code, r in rules if r.cause == "symptom")
    inherited: dict[Inherits, list[str]] = {}
    for code, r in rules:
        if isinstance(r.cause, Inherits):
            inherited.setdefault(r.cause, []).append(code)
    return failure, symptom, tuple((tuple(codes), how) for how, codes in inherited.items())


def explainable() -> frozenset[str]:
    """Every rule a cause may explain."""
    failure, symptom, inherited = roles()
    return frozenset((*failure, *symptom, *(code for codes, _ in inherited for code in codes)))


CLUSTER_LAYERS = tuple(SOURCE_NAMES[layer] for layer in (DYNAMIC_DEFAULT, STATIC, KAFKA_DEFAULT))
MIN_INHERITED = 2  # one topic inheriting a value is fixed as well on the topic
MAX_LISTED = 20  # partitions a per-topic finding names (all are counted)
MIN_GROUPED = 2  # a topic with one explained partition keeps that partition's finding

# The shared transforms this stage reads (the runner keeps them until it ran).
READS = (replica_placement,)


def from_table(findings_df) -> list[Cause]:
    """The causes of an engine table of findings (the fleet job): one aggregate row each."""
    rows = (
        findings_df.where(F.col("cause").isNotNull())
        .groupBy("cluster", "cause")
        .agg(F.count(F.lit(1)).alias("n"), F.collect_set("rule").alias("rules"))
        .collect()
    )
    return summarise((r["cluster"], r["cause"], r["n"], r["rules"]) for r in rows)


def attach(tables, findings: str, rules: Iterable[str], *, reuse: bool) -> str:
    """The engine table ``findings`` (the runner's final stage, of ``rules``) with a ``cause``
    column (a cause id or null); returns its name."""
    # Its plan is cached like a rule's: this module is one of the plan cache's SHAPING_MODULES.
    if explainable().isdisjoint(rules):
        # No selected rule is one a cause explains (`fleet --select FLT`, a lint of topic files):
        # no joins with the snapshot to find causes no finding can have. Plain SQL both engines
        # read alike, so no selection compiles a plan here (the bundle holds the default's).
        tables.engine.create(
            "findings_caused", f"SELECT *, CAST(NULL AS STRING) AS cause FROM {findings}", reuse=reuse
        )
        return VIEW_PREFIX + "findings_caused"
    return tables.compile("findings_caused", lambda: _with_causes(tables, findings), reuse=reuse)


def _failed_brokers(t):
    """(cluster_id, broker_id, kind): brokers with an offline log dir, and unregistered
    brokers that hold replicas (in clusters with registered brokers)."""
    registered = t.brokers.where(F.col("broker_id").isNotNull()).select("cluster_id", "broker_id").distinct()
    # The replica lists naming an unregistered broker are replica_placement's (judged once per
    # distinct list, in clusters with registered brokers): reading them, and not every
    # partition's replicas, keeps the partitions table to one scan in this statement. Read
    # twice, DuckDB materialises it (1.1 GiB at 10M partitions) to explode every replica list.
    lists = (
        t.derived(replica_placement)
        .where(F.col("unregistered") > 0)
        .select("cluster_id", "replicas")
        .distinct()
    )
    referenced = (
        lists.select("cluster_id", F.explode("replicas").alias("broker_id"))
        .where(F.col("broker_id").isNotNull())
        .distinct()
    )
    down = join(referenced, registered, ["cluster_id", "broker_id"], "left_anti")
    # DSK001's failed dirs, and the brokers with a pending failure event.
    bad_dir = t.log_dirs.where(failed_log_dir())
    dirs = (
        bad_dir.select("cluster_id", "broker_id")
        .unionByName(t.log_dir_events.where(F.col("broker_id").isNotNull()).select("cluster_id", "broker_id"))
        .distinct()
    )
    # An unregistered broker is down as a whole: that is its cause, not a dir it reported.
    dirs = join(dirs, down, ["cluster_id", "broker_id"], "left_anti")
    return down.select("*", F.lit(BROKER_DOWN).alias("kind")).unionByName(
        dirs.select("*", F.lit(LOG_DIR).alias("kind"))
    )


def _cause_id(kind: str, detail):
    return F.concat(F.lit(kind + ":"), detail.cast("string"))


def _targets(t):
    """(cluster_id, resource_type, resource_name, cause, explained): the resources a failed
    broker touches, one row each."""
    failed = _failed_brokers(t)
    brokers = failed.select(
        "cluster_id",
        F.lit("broker").alias("resource_type"),
        F.col("broker_id").cast("string").alias("resource_name"),
        F.concat(F.col("kind"), F.lit(":"), F.col("broker_id").cast("string")).alias("cause"),
        F.lit(True).alias("explained"),
    )
    dir_names = t.log_dirs.select("cluster_id", "broker_id", "path")
    dirs = join(dir_names, failed.where(F.col("kind") == LOG_DIR), ["cluster_id", "broker_id"]).select(
        "cluster_id",
        F.lit("log_dir").alias("resource_type"),
        F.concat_ws(":", F.col("broker_id").cast("string"), F.col("path")).alias(
            "resource_name"
        ),  # DSK001's name
        _cause_id(LOG_DIR, F.col("broker_id")).alias("cause"),
        F.lit(True).alias("explained"),
    )
    # Per replica of the partitions of clusters with a failure: is it in the ISR, offline,
    # on a failed broker. Plain explode and aggregates: array set functions become nested
    # lambdas on DuckDB.
    hit = failed.select("cluster_id", F.col("broker_id").alias("replica"), "kind")
    # Only partitions a failure can touch: a replica on a down broker, or an offline replica.
    down_ids = (
        failed.where(F.col("kind") == BROKER_DOWN)
        .groupBy("cluster_id")
        .agg(F.collect_list("broker_id").alias("down"))
    )
    # Both broadcast (a hint for Spark; DuckDB has none): planned from size estimates, Spark
    # shuffled all 10M partitions by cluster before its adaptive execution saw that the other
    # side was a few rows (10M partitions: 13.3 s for these targets, bench/RESULTS.md session 12).
    affected = join(
        join(t.partitions, F.broadcast(failed.select("cluster_id").distinct()), "cluster_id"),
        F.broadcast(down_ids),
        "cluster_id",
        "left",
    ).where(
        (F.coalesce(F.size("offline_replicas"), F.lit(0)) > 0)
        | F.coalesce(F.arrays_overlap(F.col("replicas"), F.col("down")), F.lit(False))
    )
    replicas = join(
        affected.select(
            "cluster_id",
            "topic",
            "partition",
            "leader",
            "isr",
            "offline_replicas",
            F.explode("replicas").alias("replica"),
        ),
        hit,
        ["cluster_id", "replica"],
        "left",
    )
    in_isr = F.coalesce(F.array_contains(F.col("isr"), F.col("replica")), F.lit(False))
    offline = F.coalesce(F.array_contains(F.col("offline_replicas"), F.col("replica")), F.lit(False))
    lost = offline | (F.col("kind") == BROKER_DOWN)
    per_partition = replicas.groupBy("cluster_id", "topic", "partition").agg(
        F.min(F.when(F.col("kind") == BROKER_DOWN, F.col("replica"))).alias("down"),
        F.min(F.when((F.col("kind") == LOG_DIR) & offline, F.col("replica"))).alias("dir"),
        F.sum(F.when(~in_isr & ~F.coalesce(lost, F.lit(False)), F.lit(1)).otherwise(F.lit(0))).alias(
            "unexplained"
        ),
        F.sum(F.when(in_isr & ~F.coalesce(lost, F.lit(False)), F.lit(1)).otherwise(F.lit(0))).alias(
            "live_isr"
        ),
        F.max("leader").alias("leader"),
    )
    explained = (F.col("unexplained") == 0) & ((F.col("leader") != -1) | (F.col("live_isr") == 0))
    cause = F.when(F.col("dir").isNotNull(), _cause_id(LOG_DIR, F.col("dir"))).otherwise(
        _cause_id(BROKER_DOWN, F.col("down"))
    )
    partitions = per_partition.where(F.col("down").isNotNull() | F.col("dir").isNotNull()).select(
        "cluster_id",
        F.lit("partition").alias("resource_type"),
        partition_name().alias("resource_name"),
        cause.alias("cause"),
        F.coalesce(explained, F.lit(False)).alias("explained"),
        F.col("topic").alias("target_topic"),
        F.col("partition").alias("target_partition"),
    )
    no_partition = (
        F.lit(None).cast("string").alias("target_topic"),
        F.lit(None).cast("int").alias("target_partition"),
    )
    return (
        partitions.unionByName(brokers.select("*", *no_partition))
        .unionByName(dirs.select("*", *no_partition))
        .groupBy("cluster_id", "resource_type", "resource_name")
        .agg(
            F.min("cause").alias("target_cause"),
            F.max("explained").alias("explained"),
            F.min("target_topic").alias("target_topic"),
            F.min("target_partition").alias("target_partition"),
        )
    )


def _json_text(field: str):
    """A scalar evidence member as text, alike on both engines: DuckDB's get_json_object keeps
    a string's quotes, and its ``->`` operator is read as a lambda inside a function call
    unless the CASE around it gets it parenthesised."""
    member = F.when(F.lit(True), F.get_json_object(F.col("evidence"), "$." + field))
    return F.regexp_replace(member.cast("string"), '^"|"$', "")


def _inherited_default():
    """The cluster-default key of a finding about an inherited value (null otherwise)."""
    key = F.lit(None).cast("string")
    for rules, how in roles()[2]:
        config, value_field, layer_field = how.key, how.value_field, how.layer_field
        layer = _json_text(layer_field)
        key = F.when(
            F.col("rule").isin(*rules) & layer.isin(*CLUSTER_LAYERS),
            F.concat(F.lit(f"{DEFAULT}:{config}="), _json_text(value_field), F.lit(" ("), layer, F.lit(")")),
        ).otherwise(key)
    return key


def _with_causes(tables, findings: str):
    df = tables.session.table(findings)
    columns = list(df.columns)
    joined = join(df, _targets(tables), ["cluster_id", "resource_type", "resource_name"], "left")
    failure, symptom, _ = roles()
    direct = F.col("rule").isin(*failure) | (F.col("rule").isin(*symptom) & F.col("explained"))
    failure = F.when(F.col("target_cause").isNotNull() & direct, F.col("target_cause"))
    inherited = joined.withColumn("default_cause", _inherited_default())
    shared = F.count(F.col("default_cause")).over(Window.partitionBy("cluster_id", "default_cause"))
    default = F.when(F.col("default_cause").isNotNull() & (shared >= MIN_INHERITED), F.col("default_cause"))
    caused = inherited.select(
        *columns, F.coalesce(failure, default).alias("cause"), "target_topic", "target_partition"
    )
    return _per_topic(caused, columns)


def _per_topic(caused, columns: list[str]):
    """The partition findings a failure explains, one per (rule, cause, topic) where the
    topic has MIN_GROUPED or more: ``N partition(s) of T`` with the first MAX_LISTED
    partitions, the first partition's message as the example and its evidence under
    ``example``. Exempted findings stay per partition (an exemption names partitions).
    Other findings pass as they are."""
    grouped = (
        (F.col("resource_type") == "partition")
        & F.col("target_topic").isNotNull()
        & F.col("cause").isNotNull()
        & ~F.col("cause").startswith(DEFAULT + ":")
        & F.col("exempted_by").isNull()
    )
    keys = ("rule", "name", "severity", "cluster_id", "cluster", "cause", "target_topic")
    # A topic with one such partition keeps that partition's own finding (it names it better).
    siblings = F.count(F.lit(1)).over(Window.partitionBy(*keys))
    caused = caused.withColumn("_grouped", F.coalesce(grouped, F.lit(False)) & (siblings >= MIN_GROUPED))
    single = caused.where(~F.col("_grouped")).select(*columns, "cause")
    rows = caused.where(F.col("_grouped")).withColumn(
        "_rn", F.row_number().over(Window.partitionBy(*keys).orderBy("target_partition"))
    )
    first = F.col("_rn") == 1
    topics = rows.groupBy(*keys).agg(
        F.count(F.lit(1)).alias("affected"),
        # Capped by rank (sqlframe's DuckDB slice returns one element too many);
        # array_compact because DuckDB's collect_list keeps nulls.
        F.sort_array(
            F.array_compact(F.collect_list(F.when(F.col("_rn") <= MAX_LISTED, F.col("target_partition"))))
        ).alias("listed"),
        F.max(F.when(first, F.col("resource_name"))).alias("example_name"),
        F.max(F.when(first, F.col("message"))).alias("example_message"),
        F.max(F.when(first, F.col("evidence"))).alias("example_evidence"),
    )
    more = F.when(F.col("affected") > MAX_LISTED, F.lit(", ...")).otherwise(F.lit(""))
    message = F.concat(
        F.col("affected").cast("string"),
        F.lit(" partition(s) of topic "),
        F.col("target_topic"),
        F.lit(" ("),
        F.array_join(F.col("listed").cast("array<string>"), ","),
        more,
        F.lit("), e.g. "),
        F.col("example_name"),
        F.lit(": "),
        F.coalesce(F.col("example_message"), F.lit("")),
    )
    counts = F.to_json(
        F.struct(
            F.col("affected").alias("affected_partitions"),
            F.col("listed").alias("partitions"),
            F.col("example_name").alias("example_partition"),
        )
    )
    # The example's evidence is JSON already: spliced in as an object, not quoted as a string.
    evidence = F.concat(
        F.regexp_replace(counts, "[}]$", ""),
        F.lit(',"example":'),
        F.coalesce(F.col("example_evidence"), F.lit("null")),
        F.lit("}"),
    )
    key = F.concat_ws("|", F.col("rule"), F.col("cluster"), F.lit("topic"), F.col("target_topic"))
    per_topic = topics.select(
        "rule",
        "name",
        "severity",
        "cluster_id",
        "cluster",
        F.lit("topic").alias("resource_type"),
        F.col("target_topic").alias("resource_name"),
        message.alias("message"),
        evidence.alias("evidence"),
        F.substring(F.sha2(key, 256), 1, 32).alias("fingerprint"),
        F.lit(None).cast("string").alias("exempted_by"),
        "cause",
    )
    return single.unionByName(per_topic.select(*columns, "cause"))
