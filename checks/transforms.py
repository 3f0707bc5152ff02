"""Shared DataFrame transforms: effective configuration, versions, partition views.

Every function is DataFrame-in, DataFrame-out, with no actions. Checks reach these through
``tables.derived(fn)`` so one run builds each transform once.

Effective configuration (shared/DESIGN.md) resolves, for a key:
    topic override > dynamic per-broker > dynamic cluster default > static server.properties
    > Kafka's default for the cluster's version.
A topic without an override falls back to its cluster's broker-level value. Where brokers
disagree on that value (CFG003 reports such drift), the value most brokers have is used,
ties broken by the lowest value; its source says where it came from.
"""

from __future__ import annotations

from checks._api import F, Window, join, rows_frame, text
from checks._defaults import DEFAULTS, TOPIC_FALLBACK

# Managed platforms (the clusters row's platform): the platform sets broker.rack and the tiered
# storage system itself, the user cannot (MSK; Aiven, Confluent Cloud and Google Cloud clusters
# that lint reads from Terraform: auditor/lint/formats/_tf_kinds.py).
MANAGED_PLATFORMS = ("msk", "aiven", "confluent-cloud", "gcp")

# Precedence of config layers; lower wins.
TOPIC, DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, KAFKA_DEFAULT = 0, 1, 2, 3, 4
SOURCE_NAMES = {
    TOPIC: "topic override",
    DYNAMIC_BROKER: "dynamic broker config",
    DYNAMIC_DEFAULT: "dynamic cluster default",
    STATIC: "server.properties",
    KAFKA_DEFAULT: "Kafka default",
}


_INTEGRAL = "^[+-]?[0-9]+$"

# Kafka parses a config string with Java (ConfigDef.parseType): String.trim() first, which
# strips every char up to U+0020 at both ends (tabs, newlines, any control character, not
# only spaces); then Integer.parseInt / Long.parseLong / Short.parseShort, whose digits are
# whatever Character.digit(char, 10) reads: any Unicode decimal digit of the Basic Multilingual
# Plane ('٣', '३', fullwidth '３'), ASCII '+' or '-' first; a boolean by equalsIgnoreCase,
# which compares upper-cased chars ('ſ', U+017F, upper-cases to 'S': "falſe" is false).
# The first char ('0') of each BMP block of Unicode category Nd besides ASCII, each followed
# by the nine others; checked against a JVM's Character.digit (tests/test_java_parse.py).
JAVA_DIGIT_ZEROS = (
    0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66,
    0x0DE6, 0x0E50, 0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
)  # fmt: skip
_JAVA_DIGITS = "".join(chr(zero + i) for zero in JAVA_DIGIT_ZEROS for i in range(10))
_ASCII_DIGITS = "0123456789" * len(JAVA_DIGIT_ZEROS)
# U+0001-U+0020 as a regex class, written with chr() so that no control character is in the SQL
# text (a NUL, U+0000, is made U+0001 first: DuckDB's parser ends a query at a NUL).
_TRIMMED = "concat('[', chr(1), '-', chr(32), ']+')"


def java_trim_sql(sql: str) -> str:
    """SQL for Java's ``String.trim()`` of the SQL expression ``sql``."""
    chars = f"replace({sql}, chr(0), chr(1))"
    return (
        f"regexp_replace(regexp_replace({chars}, concat('^', {_TRIMMED}), ''), concat({_TRIMMED}, '$'), '')"
    )


def java_integer_sql(sql: str) -> str:
    """SQL for the text Integer.parseInt reads from ``sql``, trimmed, its digits made ASCII: an
    integer where it matches _INTEGRAL."""
    return f"translate({java_trim_sql(sql)}, '{_JAVA_DIGITS}', '{_ASCII_DIGITS}')"


def java_trim(col_name: str):
    return F.expr(java_trim_sql(col_name))


def _java_integral(col_name: str, sql_type: str):
    # The whole text when it is an integer, else '' (null): the long expression appears once.
    whole = f"nullif(regexp_extract({java_integer_sql(col_name)}, '{_INTEGRAL}', 0), '')"
    return F.expr(f"try_cast({whole} AS {sql_type})")


def try_int(col_name: str):
    """Parse a config string as int the way Kafka does (Integer.parseInt of the trimmed
    string, above), null when malformed. Only integers: DuckDB's try_cast would turn '2.0'
    into 2 where Spark and Kafka refuse it, and Spark 4 runs with ANSI mode on, so a plain
    cast of a malformed value would abort the job."""
    return _java_integral(col_name, "INT")


def try_long(col_name: str):
    return _java_integral(col_name, "BIGINT")


def try_double(col_name: str):
    return F.expr(f"try_cast({java_trim_sql(col_name)} AS DOUBLE)")


def java_boolean_sql(sql: str) -> str:
    """SQL: 'true' or 'false' when Boolean parsing in ConfigDef (equalsIgnoreCase) reads ``sql`` as one."""
    return f"lower(translate({java_trim_sql(sql)}, 'ſ', 's'))"


def try_bool(col_name: str):
    value = F.expr(java_boolean_sql(col_name))
    return F.when(value == "true", F.lit(True)).when(value == "false", F.lit(False))


def with_version_number(df, src: str, out: str):
    """Add column ``out``: version column ``src`` as a number ('3.6.1', 'v2.8.0', '3.7-IV1',
    MSK's '3.9.x' -> 3006001, 2008000, 3007000, 3009000); null when it does not start with
    digits. The encoding of version_key (one implementation: splitting the string and reading
    its third element failed on Spark, whose ANSI element_at raises on a two-part version)."""
    return df.withColumn(out, version_key(src))


def kafka_defaults(tables):
    """Per cluster and key: Kafka's default for the cluster's version (latest when unknown)."""
    rows = [
        {"key": d.key, "value": d.value, "since": int(a) * 1_000_000 + int(b) * 1000 + int(c)}
        for d in DEFAULTS
        for a, b, c in [d.since.split(".")]
    ]
    defaults = rows_frame(tables.session, rows, "key string, value string, since int")
    clusters = with_version_number(
        tables.clusters.select("cluster_id", "kafka_version"), "kafka_version", "v"
    )
    joined = clusters.crossJoin(defaults).where(F.col("v").isNull() | (F.col("since") <= F.col("v")))
    w = Window.partitionBy("cluster_id", "key").orderBy(F.col("since").desc())
    return (
        joined.withColumn("_rn", F.row_number().over(w))
        .where(F.col("_rn") == 1)
        .select("cluster_id", "key", "value")
    )


def _cluster_default():
    """A dynamic cluster default in force: not one a change review replaces
    (REPLACED_DYNAMIC_DEFAULT_BROKER_CONFIG, see checks/change.py)."""
    return (F.col("entity_type") == "cluster_default") & ~F.coalesce(
        F.col("source").startswith("REPLACED_"), F.lit(False)
    )


def broker_settings(tables):
    """Effective broker-level config, long: cluster_id, broker_id, key, value, prec."""
    c = tables.configs.where(F.col("is_sensitive").isNull() | ~F.col("is_sensitive"))
    broker_id = try_int("entity_name")
    dynamic = c.where(
        (F.col("entity_type") == "broker") & (F.col("source") == "DYNAMIC_BROKER_CONFIG")
    ).select("cluster_id", broker_id.alias("broker_id"), "key", "value", F.lit(DYNAMIC_BROKER).alias("prec"))
    static = c.where(
        (F.col("entity_type") == "broker")
        & (F.coalesce(F.col("source"), F.lit("STATIC_BROKER_CONFIG")) == "STATIC_BROKER_CONFIG")
    ).select("cluster_id", broker_id.alias("broker_id"), "key", "value", F.lit(STATIC).alias("prec"))
    brokers = tables.brokers.select("cluster_id", "broker_id")
    cluster_default = join(
        c.where(_cluster_default()).select("cluster_id", "key", "value"),
        brokers,
        "cluster_id",
    ).select("cluster_id", "broker_id", "key", "value", F.lit(DYNAMIC_DEFAULT).alias("prec"))
    defaults = join(tables.derived(kafka_defaults), brokers, "cluster_id").select(
        "cluster_id", "broker_id", "key", "value", F.lit(KAFKA_DEFAULT).alias("prec")
    )
    layers = dynamic.unionByName(static).unionByName(cluster_default).unionByName(defaults)
    w = Window.partitionBy("cluster_id", "broker_id", "key").orderBy(F.col("prec").asc())
    return (
        layers.withColumn("_rn", F.row_number().over(w))
        .where(F.col("_rn") == 1)
        .select("cluster_id", "broker_id", "key", F.trim(F.col("value")).alias("value"), "prec")
    )


def cluster_settings(tables):
    """Per cluster and key: the broker-level value most brokers have (see module doc).
    Clusters without broker rows still resolve dynamic cluster defaults and Kafka defaults."""
    per_broker = (
        tables.derived(broker_settings)
        .groupBy("cluster_id", "key", "value")
        .agg(F.count(F.lit(1)).alias("weight"), F.min("prec").alias("prec"))
    )
    c = tables.configs.where(_cluster_default()).select(
        "cluster_id",
        "key",
        F.trim(F.col("value")).alias("value"),
        F.lit(0).cast("bigint").alias("weight"),
        F.lit(DYNAMIC_DEFAULT).alias("prec"),
    )
    d = tables.derived(kafka_defaults).select(
        "cluster_id",
        "key",
        "value",
        F.lit(0).cast("bigint").alias("weight"),
        F.lit(KAFKA_DEFAULT).alias("prec"),
    )
    w = Window.partitionBy("cluster_id", "key").orderBy(
        F.col("weight").desc(), F.col("prec").asc(), F.col("value").asc()
    )
    return (
        per_broker.unionByName(c)
        .unionByName(d)
        .withColumn("_rn", F.row_number().over(w))
        .where(F.col("_rn") == 1)
        .select("cluster_id", "key", "value", "prec")
    )


def topic_settings(tables):
    """One row per topic with its effective topic-level settings, typed, and their sources:
    min_insync_replicas (int), unclean_leader_election_enable (boolean), cleanup_policy.

    Topic overrides (a few per cent of topics) and the cluster-level values (one row per
    cluster) are each turned into one wide row first, then joined to the topics: the
    topics are never multiplied by the keys (a 3M-row aggregate at 1M topics). The typed
    values are parsed there too, before the join: Kafka's number and boolean parsing is a
    chain of string functions (try_int, try_bool), 11.6 s of the 10M bench fleet's audit when
    it ran once per topic (bench/RESULTS.md, issue 46)."""
    overrides = (
        tables.configs.where((F.col("entity_type") == "topic") & F.col("key").isin(*TOPIC_FALLBACK))
        .groupBy("cluster_id", F.col("entity_name").alias("topic"))
        .agg(
            *[
                agg
                for key in TOPIC_FALLBACK
                for agg in (
                    F.max(F.when(F.col("key") == key, F.trim(F.col("value")))).alias(_col(key) + "_o"),
                    # set, even to a value nobody could read (lint's unevaluated expressions:
                    # a null value): the topic's own, never the cluster's
                    F.max(F.when(F.col("key") == key, F.lit(1))).alias(_col(key) + "_set"),
                )
            ]
        )
    )
    overrides = overrides.select("*", *_parsed_settings("_o"))
    cluster = (
        tables.derived(cluster_settings)
        .where(F.col("key").isin(*sorted(set(TOPIC_FALLBACK.values()))))
        .groupBy("cluster_id")
        .agg(
            *[
                agg
                for key, fallback in TOPIC_FALLBACK.items()
                for agg in (
                    F.max(F.when(F.col("key") == fallback, F.col("value"))).alias(_col(key) + "_c"),
                    F.max(F.when(F.col("key") == fallback, F.col("prec"))).alias(_col(key) + "_prec"),
                )
            ]
        )
    )
    cluster = cluster.select("*", *_parsed_settings("_c"))
    wide = join(
        join(tables.topics.select("cluster_id", "topic"), overrides, ["cluster_id", "topic"], "left"),
        cluster,
        "cluster_id",
        "left",
    )
    columns = []
    for key in TOPIC_FALLBACK:
        col, overridden = _col(key), F.col(_col(key) + "_set").isNotNull()
        source = F.when(overridden, F.lit(SOURCE_NAMES[TOPIC]))
        for prec in (DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, KAFKA_DEFAULT):
            source = source.when(F.col(col + "_prec") == prec, F.lit(SOURCE_NAMES[prec]))
        columns += [
            F.when(overridden, F.col(col + "_o")).otherwise(F.col(col + "_c")).alias(col + "_raw"),
            source.alias(col + "_source"),
        ]
    typed = [
        F.when(F.col(_col(key) + "_set").isNotNull(), F.col(_col(key) + "_o_typed"))
        .otherwise(F.col(_col(key) + "_c_typed"))
        .alias(_col(key))
        for key in TYPED_SETTINGS
    ]
    return wide.select("cluster_id", "topic", *columns, *typed).select(
        "*", F.col("cleanup_policy_raw").alias("cleanup_policy")
    )


# The topic settings topic_settings reads as Kafka types them (the rest stay text).
TYPED_SETTINGS = {"min.insync.replicas": try_int, "unclean.leader.election.enable": try_bool}


def _parsed_settings(suffix: str) -> list:
    """TYPED_SETTINGS' columns ``<key><suffix>`` parsed, as ``<key><suffix>_typed``."""
    return [
        parse(_col(key) + suffix).alias(_col(key) + suffix + "_typed")
        for key, parse in TYPED_SETTINGS.items()
    ]


# -- effective min.insync.replicas, by the version of the broker leading the partition --------

# Since Kafka 3.7 (KAFKA-15583, apache/kafka PR #14594, core/src/main/scala/kafka/cluster/
# Partition.scala effectiveMinIsr) the leader uses min(min.insync.replicas, replica count) for
# acks=all produce requests and for its under/at-min-ISR checks, and does not advance the high
# watermark while the ISR is below that value. Older leaders use the raw value and advance the
# high watermark whatever the ISR size.
STRICT_MIN_ISR_SINCE = 3_007_000
# unclean.leader.election.enable is honoured by the KRaft controller only since 3.9.0
# (KAFKA-12670, apache/kafka PR #16866; docs/upgrade.html "Notable changes in 3.9.0").
UNCLEAN_IN_KRAFT_SINCE = 3_009_000
ELR_FEATURE = "eligible.leader.replicas.version"
# KIP-932 share groups keep their delivery state in this internal topic (clients
# common/internals/Topic.java SHARE_GROUP_STATE_TOPIC_NAME), first in Kafka 4.0 (early access).
SHARE_STATE_TOPIC = "__share_group_state"
SHARE_GROUPS_SINCE = 4_000_000


def cluster_versions(tables):
    """Per cluster: ``low_v``, the lowest broker software version (brokers.version, else the
    cluster's kafka_version) as a version number (version_key), null when unknown; ``mode``
    (zookeeper | kraft | null); ``elr`` (the eligible.leader.replicas.version feature is
    finalized at level 1 or above, KIP-966)."""
    brokers = (
        tables.brokers.select("cluster_id", version_key("version").alias("v"))
        .groupBy("cluster_id")
        .agg(F.min("v").alias("broker_low_v"))
    )
    elr = (
        tables.features.where((F.col("feature") == ELR_FEATURE) & (F.col("finalized_level") >= 1))
        .select("cluster_id")
        .distinct()
        .withColumn("elr", F.lit(True))
    )
    clusters = tables.clusters.select(
        "cluster_id",
        version_key("kafka_version").alias("cluster_v"),
        F.lower(F.col("metadata_mode")).alias("mode"),
    )
    d = join(join(clusters, brokers, "cluster_id", "left"), elr, "cluster_id", "left")
    return d.select(
        "cluster_id",
        F.coalesce(F.col("broker_low_v"), F.col("cluster_v")).alias("low_v"),
        "mode",
        F.coalesce(F.col("elr"), F.lit(False)).alias("elr"),
    )


def leader_min_isr(tables):
    """Per registered broker, as ``leader``: the broker-level min.insync.replicas a partition it
    leads inherits (``leader_min_isr``, its layer ``leader_min_isr_prec``) and the broker's
    version (``leader_v``, version_key of brokers.version, else the cluster's kafka_version).

    A partition's log config is built on the broker holding it from that broker's own
    defaults (topic override > dynamic per-broker > dynamic cluster default >
    server.properties > Kafka default), and the leader's log config is the one acks=all
    produce requests are checked against (Partition.scala, leaderLog.config): where brokers
    disagree on the default, a partition follows its leader's, not the majority's. With
    eligible leader replicas enabled (KIP-966, feature eligible.leader.replicas.version >= 1)
    per-broker min.insync.replicas overrides are removed and no longer allowed (Kafka
    documentation, "Eligible Leader Replicas"): the dynamic per-broker layer is skipped."""
    key = "min.insync.replicas"
    c = tables.configs.where(
        (F.col("key") == key) & (F.col("is_sensitive").isNull() | ~F.col("is_sensitive"))
    )
    broker_id = try_int("entity_name")
    brokers = tables.brokers.select("cluster_id", "broker_id", version_key("version").alias("v"))
    dynamic = c.where(
        (F.col("entity_type") == "broker") & (F.col("source") == "DYNAMIC_BROKER_CONFIG")
    ).select("cluster_id", broker_id.alias("broker_id"), "value", F.lit(DYNAMIC_BROKER).alias("prec"))
    static = c.where(
        (F.col("entity_type") == "broker")
        & (F.coalesce(F.col("source"), F.lit("STATIC_BROKER_CONFIG")) == "STATIC_BROKER_CONFIG")
    ).select("cluster_id", broker_id.alias("broker_id"), "value", F.lit(STATIC).alias("prec"))
    ids = brokers.select("cluster_id", "broker_id")
    cluster_default = join(
        c.where(F.col("entity_type") == "cluster_default").select("cluster_id", "value"), ids, "cluster_id"
    ).select("cluster_id", "broker_id", "value", F.lit(DYNAMIC_DEFAULT).alias("prec"))
    defaults = join(
        tables.derived(kafka_defaults).where(F.col("key") == key).select("cluster_id", "value"),
        ids,
        "cluster_id",
    ).select("cluster_id", "broker_id", "value", F.lit(KAFKA_DEFAULT).alias("prec"))
    versions = tables.derived(cluster_versions).select("cluster_id", "elr")
    layers = join(
        dynamic.unionByName(static).unionByName(cluster_default).unionByName(defaults),
        versions,
        "cluster_id",
        "left",
    ).where(~((F.col("prec") == DYNAMIC_BROKER) & F.coalesce(F.col("elr"), F.lit(False))))
    w = Window.partitionBy("cluster_id", "broker_id").orderBy(F.col("prec").asc())
    chosen = layers.withColumn("_rn", F.row_number().over(w)).where(F.col("_rn") == 1)
    cluster_v = tables.clusters.select("cluster_id", version_key("kafka_version").alias("cluster_v"))
    # A broker whose own configuration was not collected (no broker-level row at all) is not
    # judged by Kafka's default: its partitions fall back to the cluster's value.
    described = (
        tables.configs.where(F.col("entity_type") == "broker")
        .select("cluster_id", broker_id.alias("broker_id"))
        .distinct()
        .withColumn("described", F.lit(True))
    )
    d = join(
        join(join(brokers, chosen, ["cluster_id", "broker_id"], "left"), cluster_v, "cluster_id", "left"),
        described,
        ["cluster_id", "broker_id"],
        "left",
    )
    own = F.col("described").isNotNull() | (F.col("prec") < F.lit(KAFKA_DEFAULT))
    return d.select(
        "cluster_id",
        F.col("broker_id").alias("leader"),
        F.when(own, try_int("value")).alias("leader_min_isr"),
        F.when(own, F.col("prec")).alias("leader_min_isr_prec"),
        F.coalesce(F.col("v"), F.col("cluster_v")).alias("leader_v"),
    )


def with_effective_min_isr(tables, d):
    """``d`` (cluster_id, leader, replicas and topic_settings' min_insync_replicas and
    min_insync_replicas_source) with the partition's min.insync.replicas as its leader applies it:

    * ``configured_min_isr``: the topic override, else the leading broker's own broker-level
      value (leader_min_isr), else the cluster's (a partition without a registered leader);
      ``min_insync_replicas_source`` says which layer it came from;
    * ``strict_min_isr``: the leader (else the cluster's lowest broker) runs Kafka 3.7 or
      newer: acks=all is checked against min(configured, replica count) and the high
      watermark stops while the ISR is below it (consumers get nothing new, whatever the
      producers' acks). False when the version is unknown: the raw value is kept, which never
      judges a partition safer than it is;
    * ``min_insync_replicas``: the effective value the rules compare the ISR with;
    * ``min_isr_capped``: the effective value is the replica count, below the configured one."""
    # One row per broker and per cluster: broadcast on Spark, so that the partitions (10M in the
    # bench) are not shuffled again by leader after degraded_partitions' joins by topic.
    leaders = F.broadcast(tables.derived(leader_min_isr))
    versions = F.broadcast(tables.derived(cluster_versions).select("cluster_id", "low_v"))
    d = join(join(d, leaders, ["cluster_id", "leader"], "left"), versions, "cluster_id", "left")
    override = F.coalesce(F.col("min_insync_replicas_source") == SOURCE_NAMES[TOPIC], F.lit(False))
    configured = F.when(override, F.col("min_insync_replicas")).otherwise(
        F.coalesce(F.col("leader_min_isr"), F.col("min_insync_replicas"))
    )
    source = F.when(override, F.col("min_insync_replicas_source"))
    for prec in (DYNAMIC_BROKER, DYNAMIC_DEFAULT, STATIC, KAFKA_DEFAULT):
        source = source.when(F.col("leader_min_isr_prec") == prec, F.lit(SOURCE_NAMES[prec]))
    source = source.otherwise(F.col("min_insync_replicas_source"))
    strict = F.coalesce(
        F.coalesce(F.col("leader_v"), F.col("low_v")) >= F.lit(STRICT_MIN_ISR_SINCE), F.lit(False)
    )
    d = d.withColumn("configured_min_isr", configured).withColumn("strict_min_isr", strict)
    rf = F.when(F.col("replicas").isNotNull() & (F.size("replicas") > 0), F.size("replicas"))
    effective = F.when(
        F.col("strict_min_isr") & rf.isNotNull(), F.least(F.col("configured_min_isr"), rf)
    ).otherwise(F.col("configured_min_isr"))
    return (
        d.withColumn("min_insync_replicas_source", source)
        .withColumn("min_insync_replicas", effective)
        .withColumn(
            "min_isr_capped",
            F.coalesce(F.col("min_insync_replicas") < F.col("configured_min_isr"), F.lit(False)),
        )
        .drop("leader_min_isr", "leader_min_isr_prec", "low_v")
    )


def min_isr_text():
    """'min.insync.replicas=2 (topic override)', with ', capped at the 2 replicas (Kafka 3.7+)'
    when the configured value exceeds the replica count on a 3.7+ leader."""
    capped = F.when(
        F.col("min_isr_capped"),
        text(
            "; configured ",
            F.col("configured_min_isr"),
            ", applied as the replica count since Kafka 3.7",
        ),
    ).otherwise(F.lit(""))
    return text(
        "min.insync.replicas=",
        F.col("min_insync_replicas"),
        " (",
        F.col("min_insync_replicas_source"),
        capped,
        ")",
    )


def _col(key: str) -> str:
    return key.replace(".", "_")


def replica_lists(tables):
    """Per cluster and distinct replica list (null and empty lists too): how many partitions
    have it (``partitions``), and how many of those are not led by the list's first replica,
    their preferred leader (``not_led``). One pass over the partitions for what several rules
    count per cluster or per broker (CTL001, PAR007, MSK001/MSK002, REP007/REP008's placement):
    assignments repeat a few patterns (5,265 distinct lists over the bench's 10M partitions),
    so each of them reads thousands of rows instead of scanning every partition again."""
    first = F.when(F.size("replicas") > 0, F.element_at(F.col("replicas"), 1))
    not_led = F.when(F.col("leader").isNull() | (F.col("leader") != first), F.lit(1)).otherwise(F.lit(0))
    return tables.partitions.groupBy("cluster_id", "replicas").agg(
        F.count(F.lit(1)).alias("partitions"), F.sum(not_led).alias("not_led")
    )


def topic_replication(tables):
    """Per topic: replica counts from partition assignments (min and max over partitions),
    falling back to the topics table's replication factor when partitions were not collected."""
    per_topic = tables.partitions.groupBy("cluster_id", "topic").agg(
        F.min(F.size("replicas")).alias("rf_min"),
        F.max(F.size("replicas")).alias("rf_max"),
        F.count(F.lit(1)).alias("partition_count"),
        F.sum(F.when(F.size("replicas") == 1, F.lit(1)).otherwise(F.lit(0))).alias(
            "single_replica_partitions"
        ),
    )
    topics = tables.topics.select("cluster_id", "topic", "replication_factor", "partitions", "is_internal")
    return join(topics, per_topic, ["cluster_id", "topic"], "left").select(
        "cluster_id",
        "topic",
        F.coalesce(F.col("is_internal"), F.col("topic").startswith("__")).alias("is_internal"),
        F.coalesce(F.col("rf_min"), F.col("replication_factor")).alias("rf_min"),
        F.coalesce(F.col("rf_max"), F.col("replication_factor")).alias("rf_max"),
        F.coalesce(F.col("partition_count"), F.col("partitions")).alias("partition_count"),
        F.coalesce(
            F.col("single_replica_partitions"),
            F.when(F.col("replication_factor") == 1, F.col("partitions")).otherwise(F.lit(0)),
        ).alias("single_replica_partitions"),
    )


def topic_durability(tables):
    """topic_replication joined with topic_settings: what replication rules read."""
    return join(tables.derived(topic_replication), tables.derived(topic_settings), ["cluster_id", "topic"])


def degraded_partitions(tables):
    """The partitions that are not fully healthy, with what PAR001-PAR006 and CTL002 judge.

    One row per partition (as the brokers serve it) with ZooKeeper's state for it, the
    ISR size, the replication factor (replicas minus replicas being added, as Kafka counts
    it during a reassignment), the partition's effective min.insync.replicas as its leader
    applies it (with_effective_min_isr: its own defaults, capped at the replica count on
    3.7+, with ``strict_min_isr``, ``configured_min_isr``, ``min_isr_capped``), ``leaderless``
    (leader -1 in metadata or ZooKeeper, or a leader that is not a registered broker,
    judged only when brokers were collected) and ``zk_diverged`` (ZooKeeper holds another
    leader or ISR than the brokers serve).

    Only partitions some health rule can report are kept: a partition with a live leader,
    a full ISR above min.insync.replicas, no offline replica and (in ZooKeeper mode) the
    same state in ZooKeeper fires none of them. Healthy partitions are nearly all of a
    fleet, so filtering here keeps the materialised table (and the engine's memory) at the
    size of the problems instead of the size of the fleet."""
    keys = ["cluster_id", "topic", "partition"]
    live = registered_as(tables, "leader", "leader_live")
    known = cluster_brokers(tables).select("cluster_id", "broker_count")
    zk = tables.zk_state.select(
        "cluster_id",
        "topic",
        "partition",
        F.lit(True).alias("in_zk"),
        F.col("leader").alias("zk_leader"),
        F.col("isr").alias("zk_isr"),
        F.col("leader_epoch").alias("zk_leader_epoch"),
        F.col("controller_epoch").alias("zk_controller_epoch"),
    )
    settings = tables.derived(topic_settings).select(
        "cluster_id", "topic", "min_insync_replicas", "min_insync_replicas_source"
    )
    # The topic's settings first, then ZooKeeper's state: on Spark both joins then need the
    # partitions clustered by (cluster_id, topic) only, so 10M partitions are shuffled once
    # (with spark.sql.requireAllClusterKeysForCoPartition off, see auditor/engine/spark_engine.py).
    d = join(
        join(
            join(join(tables.partitions, settings, ["cluster_id", "topic"], "left"), zk, keys, "left"),
            live,
            ["cluster_id", "leader"],
            "left",
        ),
        known,
        "cluster_id",
        "left",
    )
    d = with_effective_min_isr(tables, d)
    adding = F.when(F.col("adding_replicas").isNotNull(), F.size("adding_replicas")).otherwise(F.lit(0))
    unregistered = (
        (F.col("leader") >= 0)
        & F.col("leader_live").isNull()
        & (F.coalesce(F.col("broker_count"), F.lit(0)) > 0)
    )
    leaderless = (F.col("leader") < 0) | (F.col("zk_leader") < 0) | unregistered
    leader_differs = F.coalesce(F.col("leader"), F.lit(-2)) != F.coalesce(F.col("zk_leader"), F.lit(-2))
    # Sorted arrays compared as arrays (formatting both as text cost more than the joins), and
    # only when the lists differ as given: nearly always they are in the same order, and
    # skipping the sorts of millions of equal pairs saved 0.3 s at 10M partitions.
    # A missing ISR on one side only is a difference, on both sides none.
    isr_differs = F.coalesce(
        F.when(F.col("isr") == F.col("zk_isr"), F.lit(False)).otherwise(
            F.sort_array(F.col("isr")) != F.sort_array(F.col("zk_isr"))
        ),
        F.when(F.col("isr").isNull(), F.col("zk_isr").isNotNull()).otherwise(F.col("zk_isr").isNull()),
    )
    d = d.select(
        "cluster_id",
        "topic",
        "partition",
        "leader",
        "zk_leader",
        "leader_epoch",
        "replicas",
        "isr",
        "offline_replicas",
        "min_insync_replicas",
        "min_insync_replicas_source",
        "configured_min_isr",
        "strict_min_isr",
        "min_isr_capped",
        "leader_v",
        "zk_isr",
        "zk_leader_epoch",
        "zk_controller_epoch",
        F.when(F.col("isr").isNotNull(), F.size("isr")).alias("isr_size"),
        F.when(F.col("replicas").isNotNull(), F.size("replicas") - adding).alias("replication_factor"),
        F.coalesce(leaderless, F.lit(False)).alias("leaderless"),
        # CASE first: the ISRs are only compared for partitions ZooKeeper holds.
        F.coalesce(F.when(F.col("in_zk"), leader_differs | isr_differs), F.lit(False)).alias("zk_diverged"),
    )
    healthy = (
        ~F.col("leaderless")
        & ~F.col("zk_diverged")
        & (F.col("isr_size") >= F.col("replication_factor"))
        & (F.col("min_insync_replicas").isNull() | (F.col("isr_size") > F.col("min_insync_replicas")))
        & (F.col("offline_replicas").isNull() | (F.size("offline_replicas") == 0))
    )
    return d.where(~F.coalesce(healthy, F.lit(False)))


def registered_as(tables, as_name: str, flag: str):
    """The registered brokers as (cluster_id, ``as_name`` = broker id, ``flag`` = true), to
    left-join onto a column holding a broker id: ``flag`` is null where it is not registered."""
    return tables.brokers.select("cluster_id", F.col("broker_id").alias(as_name), F.lit(True).alias(flag))


# KRaft: the settings that say what a node runs and how it finds the quorum.
QUORUM_KEYS = ("process.roles", "controller.quorum.voters", "controller.quorum.bootstrap.servers")


def kraft_settings(tables):
    """Per KRaft node (cluster_id, node_id): roles (comma-separated, lowercase), quorum_voters and
    quorum_bootstrap_servers as configured; from kraft_nodes (properties files, controllers
    included) and from the brokers' configs (DescribeConfigs or files). Unset or empty values
    (DescribeConfigs reports unset keys as DEFAULT_CONFIG "") are null."""
    files = tables.kraft_nodes.select(
        "cluster_id",
        "node_id",
        F.array_join(F.col("process_roles"), ",").alias("roles"),
        "quorum_voters",
        "quorum_bootstrap_servers",
    )
    c = tables.configs.where(
        (F.col("entity_type") == "broker")
        & F.col("key").isin(*QUORUM_KEYS)
        & (F.coalesce(F.col("source"), F.lit("")) != "DEFAULT_CONFIG")
        & (F.trim(F.coalesce(F.col("value"), F.lit(""))) != "")
    )
    cfg = (
        c.groupBy("cluster_id", "entity_name")
        .agg(
            *[
                F.max(F.when(F.col("key") == k, F.trim(F.col("value")))).alias(a)
                for k, a in zip(
                    QUORUM_KEYS, ("roles", "quorum_voters", "quorum_bootstrap_servers"), strict=True
                )
            ]
        )
        .select(
            "cluster_id",
            try_int("entity_name").alias("node_id"),
            F.lower(F.regexp_replace(F.col("roles"), " ", "")).alias("roles"),
            "quorum_voters",
            "quorum_bootstrap_servers",
        )
    )
    both = files.unionByName(cfg).where(F.col("node_id").isNotNull())
    empty = lambda c: F.when(F.trim(F.col(c)) != "", F.col(c))  # noqa: E731
    return both.groupBy("cluster_id", "node_id").agg(
        F.max(empty("roles")).alias("roles"),
        F.max(empty("quorum_voters")).alias("quorum_voters"),
        F.max(empty("quorum_bootstrap_servers")).alias("quorum_bootstrap_servers"),
    )


def controller_nodes(tables):
    """Per KRaft node that runs the controller: cluster_id, node_id, ``combined`` (it is a
    broker too). From process.roles (kraft_settings: properties files and DescribeConfigs) and
    the quorum's voters (DescribeQuorum): a voter that is a registered broker is a combined
    node (node ids are unique across a KRaft cluster), any other voter a controller-only one."""
    roles = F.split(F.coalesce(F.col("roles"), F.lit("")), ",")
    by_roles = (
        tables.derived(kraft_settings)
        .where(F.array_contains(roles, "controller"))
        .select("cluster_id", "node_id", F.array_contains(roles, "broker").alias("combined"))
    )
    voters = join(
        tables.quorum.where(F.col("role") == "voter").select("cluster_id", "node_id"),
        registered_as(tables, "node_id", "registered"),
        ["cluster_id", "node_id"],
        "left",
    ).select("cluster_id", "node_id", F.col("registered").isNotNull().alias("combined"))
    return (
        by_roles.unionByName(voters)
        .where(F.col("node_id").isNotNull())
        .groupBy("cluster_id", "node_id")
        .agg(F.max(F.col("combined").cast("int")).alias("_combined"))
        .select("cluster_id", "node_id", (F.col("_combined") == 1).alias("combined"))
    )


LEADER_REBALANCE = "auto.leader.rebalance.enable"


def leader_rebalance_nodes(tables):
    """The nodes whose auto.leader.rebalance.enable acts, with their effective value: cluster_id,
    node_id, role (broker | combined | controller), value, prec (the config layer, SOURCE_NAMES).
    In ZooKeeper mode (and where the mode is unknown) every broker: the active controller is a
    broker and reads its own value (KafkaController.onControllerFailover). On KRaft only the
    controllers read it (ControllerServer: no leader balancing is scheduled in the
    QuorumController when it is false); a broker-only node's value is inert and left out: a
    combined node's effective broker-level value, and a controller-only node's value from its
    collected properties file (configs of entity_type controller), else Kafka's default; a
    controller known only from the quorum or its roles has value null (not collected)."""
    mode = tables.derived(cluster_versions).select("cluster_id", "mode")
    controllers = tables.derived(controller_nodes)
    kraft = (
        mode.where(F.col("mode") == "kraft")
        .select("cluster_id")
        .unionByName(controllers.select("cluster_id"))
        .distinct()
        .withColumn("kraft", F.lit(True))
    )
    brokers = join(
        tables.derived(broker_settings).where(
            (F.col("key") == LEADER_REBALANCE) & F.col("broker_id").isNotNull()
        ),
        kraft,
        "cluster_id",
        "left",
    )
    zookeeper = brokers.where(F.col("kraft").isNull()).select(
        "cluster_id", F.col("broker_id").alias("node_id"), F.lit("broker").alias("role"), "value", "prec"
    )
    combined = join(
        brokers.where(F.col("kraft")).select(
            "cluster_id", F.col("broker_id").alias("node_id"), "value", "prec"
        ),
        controllers.where(F.col("combined")).select("cluster_id", "node_id"),
        ["cluster_id", "node_id"],
        "left_semi",
    ).select("cluster_id", "node_id", F.lit("combined").alias("role"), "value", "prec")
    files = tables.configs.where(F.col("entity_type") == "controller").select(
        "cluster_id", try_int("entity_name").alias("node_id"), "key", F.trim(F.col("value")).alias("value")
    )
    collected = files.select("cluster_id", "node_id").distinct()
    own = files.where(F.col("key") == LEADER_REBALANCE).select(
        "cluster_id", "node_id", F.col("value").alias("own")
    )
    default = (
        tables.derived(kafka_defaults)
        .where(F.col("key") == LEADER_REBALANCE)
        .select("cluster_id", F.col("value").alias("default"))
    )
    controller_only = join(
        join(collected, own, ["cluster_id", "node_id"], "left"), default, "cluster_id", "left"
    ).select(
        "cluster_id",
        "node_id",
        F.lit("controller").alias("role"),
        F.coalesce(F.col("own"), F.col("default"), F.lit("true")).alias("value"),
        F.when(F.col("own").isNotNull(), F.lit(STATIC)).otherwise(F.lit(KAFKA_DEFAULT)).alias("prec"),
    )
    # Controllers known from the quorum or their roles whose configuration was not collected:
    # counted (value unknown), so a finding never calls the ones it read "every controller".
    unknown = join(
        controllers.where(~F.col("combined")).select("cluster_id", "node_id"),
        collected,
        ["cluster_id", "node_id"],
        "left_anti",
    ).select(
        "cluster_id",
        "node_id",
        F.lit("controller").alias("role"),
        F.lit(None).cast("string").alias("value"),
        F.lit(None).cast("int").alias("prec"),
    )
    return (
        zookeeper.unionByName(combined)
        .unionByName(controller_only)
        .unionByName(unknown)
        .where(F.col("node_id").isNotNull())
    )


def cluster_brokers(tables):
    """``broker_counts``, the shared transform (built once per run)."""
    return tables.derived(broker_counts)


def broker_counts(tables):
    """Per cluster with registered brokers: how many (broker_count), their distinct racks
    (rack_count), their ids (broker_ids) and a map broker id -> struct(rack) (registered;
    rack is null when broker.rack is unset). Brokers are deduplicated by id first, so a snapshot
    with a repeated registration cannot build a map with duplicate keys (an error on Spark)."""
    brokers = (
        tables.brokers.where(F.col("broker_id").isNotNull())
        .groupBy("cluster_id", "broker_id")
        .agg(F.max("rack").alias("rack"))
    )
    return brokers.groupBy("cluster_id").agg(
        F.count(F.lit(1)).alias("broker_count"),
        F.countDistinct("rack").alias("rack_count"),
        F.collect_list("broker_id").alias("broker_ids"),
        # A struct, not the bare rack: a lookup that misses (null) then means "not registered",
        # told apart from a registered broker without broker.rack (a struct with a null rack).
        F.map_from_entries(F.collect_list(F.struct("broker_id", F.struct("rack").alias("broker")))).alias(
            "registered"
        ),
    )


def replica_placement(tables):
    """Partitions placed worse than their cluster allows, in clusters whose brokers were
    collected: ``rack_short`` (fewer distinct racks than min(replicas, racks in the
    cluster), in clusters with more than one rack; a replica on a broker that is not
    registered counts as a rack of its own, one on a registered broker without broker.rack
    as no rack: ``rackless`` counts those) or ``unregistered`` > 0 (replicas on broker ids
    that are not registered). Other partitions are left out: REP007 and REP008 report no others.

    Judged per distinct replica list of a cluster, not per partition: assignments repeat a
    few patterns (5,265 distinct lists over a 10M-partition fleet), so the per-replica
    rack lookups run on thousands of rows, and the partitions are then matched against
    the few bad lists."""
    brokers = F.transform(F.col("replicas"), lambda r: F.element_at(F.col("registered"), r))
    racks = F.transform(brokers, lambda b: b.getField("rack"))
    parts = tables.partitions.where(F.col("replicas").isNotNull() & (F.size("replicas") > 0)).select(
        "cluster_id", "topic", "partition", "replicas"
    )
    lists = (
        tables.derived(replica_lists)
        .where(F.col("replicas").isNotNull() & (F.size("replicas") > 0))
        .select("cluster_id", "replicas")
    )
    judged = join(
        lists, cluster_brokers(tables).select("cluster_id", "rack_count", "registered"), "cluster_id"
    ).select(
        "cluster_id",
        "replicas",
        "rack_count",
        F.size("replicas").alias("rf"),
        F.size(F.array_distinct(F.array_compact(racks))).alias("racks_used"),
        (F.size(F.array_compact(brokers)) - F.size(F.array_compact(racks))).alias("rackless"),
        (F.size(F.array_compact(F.col("replicas"))) - F.size(F.array_compact(brokers))).alias("unregistered"),
    )
    # A replica on a broker that is not registered may be in any rack (REP008 reports it): it
    # counts as a rack of its own. One on a registered broker without broker.rack counts as no
    # rack (REP011 reports the broker): it cannot be shown to add a rack.
    rack_short = (F.col("rack_count") > 1) & (
        F.col("racks_used") + F.col("unregistered") < F.least(F.col("rf"), F.col("rack_count"))
    )
    bad = judged.withColumn("rack_short", rack_short).where(F.col("rack_short") | (F.col("unregistered") > 0))
    # A semi join first: its hash table holds the few bad lists, never the partitions. On
    # Spark the bad lists are broadcast (the hint; DuckDB has none): planned from the size of
    # the partitions scan they came from, they would be joined by shuffling every partition.
    keys = ["cluster_id", "replicas"]
    return join(join(parts, F.broadcast(bad.select(*keys)), keys, "left_semi"), F.broadcast(bad), keys)


def int_list(col):
    """'[1,2,3]'-style text of an int array, for messages (identical on both engines)."""
    return F.concat(
        F.lit("["), F.coalesce(F.array_join(col.cast("array<string>"), ","), F.lit("")), F.lit("]")
    )


def partition_name(topic="topic", partition="partition"):
    return F.concat_ws("-", F.col(topic), F.col(partition).cast("string"))


def failed_log_dir():
    """A log_dirs row of a failed dir: an error other than blank or NONE (DSK001, and the
    root causes' offline log dirs)."""
    error = F.trim(F.col("error"))
    return F.col("error").isNotNull() & (error != "") & (F.upper(error) != "NONE")


# -- versions as numbers, broker log directories (threads, storage, clients, msk) ---------

# Leading "major.minor[.patch]" with an optional "v"; no backslashes, so the pattern reads
# the same in Spark and DuckDB SQL; at most 6 digits per part, so the number cannot overflow.
_VERSION_RE = r"^[vV]?([0-9]{1,6})[.]([0-9]{1,6})([.]([0-9]{1,6}))?"


def version_key(col):
    """A version string column as a comparable number, like with_version_number but as a
    Column and safe on any input: 'v1.43.3' -> 1043003, '1.27.0' -> 1027000,
    '2.16.1-rdkafka-2.16.0' -> 2016001, '3.7-IV2' -> 3007000; null for 'dev', 'unknown', ''
    or null. Never fails: every cast reads at most 7 digits."""
    c = F.trim(F.col(col) if isinstance(col, str) else col)

    def part(i):
        return F.concat(F.lit("0"), F.regexp_extract(c, _VERSION_RE, i)).cast("bigint")

    return F.when(c.rlike(_VERSION_RE), part(1) * F.lit(1_000_000) + part(2) * F.lit(1000) + part(4))


def version_number(version: str) -> int | None:
    """A version literal (a rule parameter such as '1.43.3' or '2.1') encoded like
    version_key, so that columns and parameters compare as plain integers."""
    import re

    m = re.match(_VERSION_RE, version.strip())
    if not m:
        return None
    return int(m.group(1)) * 1_000_000 + int(m.group(2)) * 1000 + int(m.group(4) or 0)


def rdkafka_version_key(name, version):
    """The librdkafka version of a librdkafka-based client as a number: the part after
    '-rdkafka-' ('2.16.1-rdkafka-2.16.0' -> 2016000), or the version itself for a client
    named 'librdkafka'; null otherwise."""
    v = F.col(version)
    suffix = F.regexp_extract(v, "-rdkafka-(v?[0-9]{1,6}[.][0-9]{1,6}([.][0-9]{1,6})?)", 1)
    return F.when(suffix != "", version_key(suffix)).when(
        F.lower(F.trim(F.col(name))) == "librdkafka", version_key(v)
    )


def broker_log_dirs(tables):
    """Per broker: its log directories, from DescribeLogDirs (log_dirs table), the brokers
    table and the effective log.dirs setting, paths normalised (trailing '/' removed).
    Columns: cluster_id, broker_id, log_dir_count, log_dir_paths (sorted)."""
    table = tables.log_dirs.select("cluster_id", "broker_id", F.col("path").alias("p"))
    registered = tables.brokers.select("cluster_id", "broker_id", F.explode(F.col("log_dirs")).alias("p"))
    configured = (
        tables.derived(broker_settings)
        .where((F.col("key") == "log.dirs") & F.col("value").isNotNull())
        .select("cluster_id", "broker_id", F.explode(F.split(F.col("value"), ",")).alias("p"))
    )
    paths = (
        table.unionByName(registered)
        .unionByName(configured)
        .select("cluster_id", "broker_id", F.regexp_replace(F.trim(F.col("p")), "/+$", "").alias("p"))
        .where(F.col("broker_id").isNotNull() & F.col("p").isNotNull() & (F.col("p") != ""))
    )
    return paths.groupBy("cluster_id", "broker_id").agg(
        F.countDistinct("p").alias("log_dir_count"),
        F.sort_array(F.collect_set("p")).alias("log_dir_paths"),
    )


def metric_per_node(tables, name: str, as_name: str = "value"):
    """One canonical broker metric (auditor/snapshot/schema.py METRICS) per (cluster_id, broker_id):
    the highest of its rows (a source gives one row per node; the labels are not kept here).
    broker_id is null for a cluster-wide value (CloudWatch)."""
    return (
        tables.metrics.where((F.col("name") == name) & F.col("value").isNotNull())
        .groupBy("cluster_id", "broker_id")
        .agg(F.max("value").alias(as_name))
    )


# -- the members a finding names ---------------------------------------------------------------
# A finding that names its members (the consumer groups of a partition, the entities setting a
# key) names the first LISTED of them and counts them all: a list as long as the input made one
# finding, and N such findings, as large as the input squared (issue 47).
LISTED = 20


def ranked(df, keys: list[str], member: str, alias: str = "_member_rank"):
    """``df`` with ``alias``: the dense rank of ``member`` among the rows of one ``keys``."""
    # nulls last: a null member (dropped from the list) never takes one of the first places
    return df.withColumn(
        alias, F.dense_rank().over(Window.partitionBy(*keys).orderBy(F.col(member).asc_nulls_last()))
    )


def first_members(member: str, rank: str = "_member_rank", n: int = LISTED):
    """Aggregate: the first ``n`` distinct values of ``member`` (by ``rank``, from :func:`ranked`),
    sorted, nulls dropped. By rank, not F.slice: sqlframe's DuckDB slice returns one element too
    many, and DuckDB's collect_set keeps a null where Spark's drops it."""
    chosen = F.collect_set(F.when(F.col(rank) <= F.lit(n), F.col(member)))
    return F.sort_array(F.filter(chosen, lambda x: x.isNotNull()))


def listing(col, count, n: int = LISTED):
    """'a, b, c' (+ ' ... and K more' past n), from :func:`first_members` and the full count."""
    more = F.when(count > F.lit(n), text(" ... and ", (count - F.lit(n)).cast("string"), " more")).otherwise(
        F.lit("")
    )
    return text(F.array_join(col, ", "), more)
