"""CFG: configuration hygiene.

CFG001 and CFG002 read the configuration entries a user or a file set (``configs`` rows;
the DEFAULT_CONFIG rows DescribeConfigs reports are Kafka's own and skipped) against the
table of keys Kafka knows, ``checks/_kafka_keys.py`` (generated from Kafka's own config
definitions of every release, ``auditor/data/kafka_configs.json``), loaded as DataFrames.
"""

import checks._kafka_keys as kafka_keys
from auditor.declarations import Category, Param, rule
from checks._api import F, Window, emit, ev, join, rows_frame, text
from checks.storage import topic_log_settings
from checks.transforms import (
    KAFKA_DEFAULT,
    LEADER_REBALANCE,
    SOURCE_NAMES,
    broker_settings,
    cluster_settings,
    cluster_versions,
    int_list,
    java_integer_sql,
    java_trim,
    kafka_defaults,
    leader_rebalance_nodes,
    registered_as,
    replica_lists,
    try_bool,
    try_int,
    version_key,
)

CATEGORY = Category("CFG", "hygiene", "configuration hygiene", (1, 2, 3, 4, 5, 6, 7, 8, 9, 900))

# Keys every broker of a cluster must agree on (CFG003): they decide topic creation,
# durability, retention and the inter-broker protocol, all cluster-wide in effect.
BROKER_UNIFORM_KEYS = (
    "min.insync.replicas",
    "default.replication.factor",
    "unclean.leader.election.enable",
    "log.retention.hours",
    "log.retention.minutes",
    "log.retention.ms",
    "log.retention.bytes",
    "log.cleanup.policy",
    "num.partitions",
    "auto.create.topics.enable",
    "delete.topic.enable",
    "inter.broker.protocol.version",
    "log.message.format.version",
    "message.max.bytes",
    "offsets.topic.replication.factor",
    "transaction.state.log.replication.factor",
    "transaction.state.log.min.isr",
    "auto.leader.rebalance.enable",
    "compression.type",
)
LISTENER_PREFIX = "^listener[.]name[.][^.]+[.]"


def kafka_key_table(tables):
    """The known-keys table (checks/_kafka_keys.py) as a DataFrame: scope, key, type."""
    return rows_frame(tables.session, kafka_keys.rows(), kafka_keys.SCHEMA)


def kafka_key_range_table(tables):
    """The releases knowing each key (checks/_kafka_keys.range_rows): scope, key, since,
    removed, since_v, removed_v, since_s, removed_s; one row per range of releases."""
    return rows_frame(tables.session, kafka_keys.range_rows(), kafka_keys.RANGE_SCHEMA)


def _flagged_nodes(node: str, total: str, listed: str) -> list:
    """Aggregates of a cluster's nodes with a ``flagged`` column (CFG004, CFG006): how many
    (``total``), how many flagged, their ids (``listed``), and the lowest ``prec`` among them."""
    flagged = F.col("flagged")
    return [
        F.count(F.lit(1)).alias(total),
        F.sum(F.when(flagged, F.lit(1)).otherwise(F.lit(0))).alias("flagged_count"),
        F.sort_array(F.array_compact(F.collect_list(F.when(flagged, F.col(node))))).alias(listed),
        F.min(F.when(flagged, F.col("prec"))).alias("prec"),
    ]


def config_entries(tables):
    """Config entries set by a user or a file (not Kafka's reported defaults), with:
    scope (broker|topic), base_key (the key without a ``listener.name.X.`` prefix),
    entity (a label: 'broker 1', 'controller 3000', 'topic orders', 'cluster default'). A KRaft
    controller's keys are KafkaConfig's too: scope broker."""
    c = tables.configs.where(
        F.col("key").isNotNull() & (F.coalesce(F.col("source"), F.lit("")) != "DEFAULT_CONFIG")
    )
    topic = F.col("entity_type") == "topic"
    entity = (
        F.when(topic, F.concat(F.lit("topic "), F.coalesce(F.col("entity_name"), F.lit(""))))
        .when(F.col("entity_type") == "cluster_default", F.lit("cluster default"))
        .when(
            F.col("entity_type") == "controller",
            F.concat(F.lit("controller "), F.coalesce(F.col("entity_name"), F.lit(""))),
        )
        .otherwise(F.concat(F.lit("broker "), F.coalesce(F.col("entity_name"), F.lit(""))))
    )
    return c.select(
        "cluster_id",
        "entity_type",
        "entity_name",
        "key",
        "value",
        "source",
        "is_sensitive",
        "file",
        "line",
        F.when(topic, F.lit("topic")).otherwise(F.lit("broker")).alias("scope"),
        F.regexp_replace(F.col("key"), LISTENER_PREFIX, "").alias("base_key"),
        entity.alias("entity"),
    )


def _valid(typ, key):
    """Does the value parse the way Kafka's ConfigDef parses ``typ`` (and, for the keys in
    CHOICES, is it one of the allowed values)? As Java does (checks/transforms.py): column
    ``_trimmed`` is the value as String.trim leaves it (every char up to U+0020 stripped at
    both ends), ``_digits`` the same with its Unicode decimal digits made ASCII (what
    Integer.parseInt reads); booleans by equalsIgnoreCase, doubles as Double.parseDouble reads
    them (hexadecimal too). No backslashes in patterns, so they read the same in Spark and
    DuckDB SQL."""
    v = F.col("_trimmed")
    integral = F.col("_digits").rlike("^[+-]?[0-9]+$")
    # try_cast: Spark's ANSI mode aborts the job on a plain cast of a malformed value
    number = F.expr("try_cast(regexp_replace(_digits, '^[+]', '') AS DECIMAL(38,0))")

    def in_range(name):
        lo, hi = kafka_keys.RANGES[name]
        return integral & number.between(
            F.lit(str(lo)).cast("decimal(38,0)"), F.lit(str(hi)).cast("decimal(38,0)")
        )

    decimal = "([0-9]+([.][0-9]*)?|[.][0-9]+)([eE][+-]?[0-9]+)?"
    hexadecimal = "0[xX]([0-9a-fA-F]+[.]?|[0-9a-fA-F]*[.][0-9a-fA-F]+)[pP][+-]?[0-9]+"
    double = v.rlike(f"^[+-]?(NaN|Infinity|({decimal}|{hexadecimal})[fFdD]?)$")
    ok = (
        F.when(
            typ.isin("short", "int", "long"),
            F.when(typ == "short", in_range("short"))
            .when(typ == "int", in_range("int"))
            .otherwise(in_range("long")),
        )
        .when(typ == "double", double)
        .when(typ == "boolean", F.lower(F.translate(v, "ſ", "s")).isin("true", "false"))
        .otherwise(F.lit(True))
    )
    # One flat CASE over the restricted keys: nesting `ok` in each branch would double the
    # expression per key (the plan grew to 600 KB of SQL and exhausted Spark's driver heap).
    allowed = None
    for name, choices in kafka_keys.CHOICES.items():
        alt = "(" + "|".join(choices) + ")"
        check = v.rlike(f"^({alt}( *, *{alt})*)?$") if _is_list(name) else v.isin(*choices)
        allowed = F.when(key == name, check) if allowed is None else allowed.when(key == name, check)
    if allowed is not None:
        ok = ok & allowed.otherwise(F.lit(True))
    return F.coalesce(ok, F.lit(False))


def _is_list(key: str) -> bool:
    return kafka_keys.BROKER_KEYS.get(key, kafka_keys.TOPIC_KEYS.get(key)) == "list"


def _expected(typ, key):
    out = typ
    for name, choices in kafka_keys.CHOICES.items():
        what = ("a list of " if _is_list(name) else "one of ") + ", ".join(choices)
        out = F.when(key == name, F.lit(what)).otherwise(out)
    return out


@rule(
    "CFG001",
    "malformed-config-value",
    "error",
    needs=("configs",),
    uses=(config_entries, kafka_key_table),
    runs_in=("lint",),
)
def malformed_config_value(tables, params):
    """A configuration value does not parse for its key's type: Kafka refuses it.

    Why: Kafka parses every setting with its declared type (int, long, double, boolean, a
    fixed set of values) when the broker starts or the change is applied. A static value
    that does not parse (`num.io.threads=16 # doubled`, `log.retention.hours=7d`,
    `unclean.leader.election.enable=yes`) stops the broker from starting at its next
    restart, typically the next rolling patch. The audit itself continues: every rule
    reads such a value as unset, so its other findings may assume Kafka's default. What
    parses is what Java parses (ConfigDef.parseType): the value trimmed by String.trim(),
    which strips every character up to U+0020 at both ends (a tab, a carriage return, any
    control character); integers by Integer.parseInt / Long.parseLong / Short.parseShort,
    which take any Unicode decimal digit Character.digit reads (`٣`, fullwidth `３`) and
    an ASCII sign; booleans by equalsIgnoreCase; doubles by Double.parseDouble (`1e3`,
    `0x1p3`, `NaN`). Such a value is valid, and every rule reads it as Kafka does.

    Remediation: fix the value in server.properties (or with `kafka-configs --alter
    --entity-type brokers|topics ... --add-config KEY=VALUE`) to the type the finding names:
    integers without units or decimals, `true`/`false`, or one of the listed values. Keys
    under `listener.name.<listener>.` are checked as the key they override.

    Example: `log.retention.hours=7d` on broker 2 (expected an int).

    References:
    - Kafka documentation: broker configs (type and valid values of each key) <https://kafka.apache.org/39/documentation.html#brokerconfigs>
    - Kafka documentation: topic-level configs <https://kafka.apache.org/39/documentation.html#topicconfigs>
    - apache/kafka clients/src/main/java/org/apache/kafka/common/config/ConfigDef.java (parseType: trim, then Integer.parseInt, Long.parseLong, Short.parseShort, Double.parseDouble, equalsIgnoreCase) <https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/config/ConfigDef.java>
    - Java SE 17: Integer.parseInt (digits by Character.digit) <https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/lang/Integer.html#parseInt(java.lang.String,int)>
    - Java SE 17: String.trim (every character up to U+0020) <https://docs.oracle.com/en/java/javase/17/docs/api/java.base/java/lang/String.html#trim()>
    """
    keys = tables.derived(kafka_key_table).select(
        F.col("scope"), F.col("key").alias("base_key"), F.col("type").alias("expected_type")
    )
    c = tables.derived(config_entries).where(
        F.col("value").isNotNull() & (F.col("is_sensitive").isNull() | ~F.col("is_sensitive"))
    )
    d = join(c, keys, ["scope", "base_key"])
    d = d.withColumn("_trimmed", java_trim("value")).withColumn("_digits", F.expr(java_integer_sql("value")))
    d = d.where(~_valid(F.col("expected_type"), F.col("base_key")))
    expected = _expected(F.col("expected_type"), F.col("base_key"))
    msg = text(
        F.col("key"),
        "=",
        F.col("value"),
        " on ",
        F.col("entity"),
        " is not a valid value (expected ",
        expected,
        "): Kafka refuses it (a broker with it in server.properties does not start), and this audit reads it as unset",
    )
    evidence = ev(
        entity_type=F.col("entity_type"),
        entity_name=F.col("entity_name"),
        key=F.col("key"),
        value=F.col("value"),
        expected=expected,
        source=F.col("source"),
        file=F.col("file"),
        line=F.col("line"),
    )
    return emit(d, "config", F.concat(F.col("entity"), F.lit(": "), F.col("key")), msg, evidence)


_VERSION_TEXT = "^[0-9]+ (.*)$"  # the release in a since_s / removed_s value
_TOPIC_EFFECT = (
    "Kafka rejects it: creating or altering the topic with it fails "
    "(InvalidConfigurationException: Unknown topic config name)"
)
_BROKER_EFFECT = (
    "Kafka does not reject an unknown broker key: the broker starts, ignores it and leaves it out "
    "of the KafkaConfig values it logs at startup"
)
_RELEASES = f"no Kafka release from {kafka_keys.OLDEST_RELEASE} to {kafka_keys.NEWEST_RELEASE} defines it"


@rule(
    "CFG002",
    "unknown-config-key",
    "warning",
    needs=("configs",),
    params=(
        Param(
            "unchecked_prefixes",
            kafka_keys.UNCHECKED_PREFIXES,
            "key prefixes never reported: per-listener overrides, the ssl./sasl. families, plugin namespaces",
        ),
        Param("unchecked_suffixes", kafka_keys.UNCHECKED_SUFFIXES, "key suffixes never reported (secrets)"),
        Param(
            "suggest_distance",
            3,
            "largest edit distance at which a known key is suggested as the intended one",
        ),
    ),
    uses=(config_entries, kafka_key_range_table, kafka_key_table),
    runs_in=("lint",),
)
def unknown_config_key(tables, params):
    """A configuration key the cluster's Kafka does not know, usually a typo or a key of another release: the setting is not applied.

    Why: an unknown broker key is not an error for Kafka: the broker starts and ignores it
    (it is missing from the "KafkaConfig values" the broker logs at startup), so a typo
    such as `num.io.thread=32` silently leaves the real setting at its default, and the
    change review that approved "32 I/O threads" was never in effect. An unknown topic key
    is refused: creating or altering the topic with it fails with
    InvalidConfigurationException ("Unknown topic config name"), which breaks the
    deployment or GitOps pipeline that applies it. The known keys, their types and the
    releases that introduced and removed each are generated from Kafka's own config
    definitions (KafkaConfig, DynamicConfig.Broker, LogConfig) of every release from 0.10.0
    to the newest 4.x (auditor/data/kafka_configs.json, tools/extract_kafka_configs.py).
    When the cluster's Kafka version is known (detected or declared), a key that release
    does not have is reported with the release that introduced or removed it: a 3.8 key
    on a 3.7 cluster has no effect yet, `zookeeper.connect` on a 4.0 cluster none any more;
    with the version unknown, a key any release knows passes. Keys under
    `listener.name.<listener>.`, the `ssl.` and `sasl.` families, keys ending in
    `.password` or `.secret`, the documented key families of Confluent Server (`confluent.`,
    `kafka.rest.` for its Admin REST APIs, `ldap.` for its LDAP authorizer: the data file
    auditor/data/vendor_key_families.json, with their documentation) and plugin namespaces
    (`cruise.control.`, `metrics.jmx.`, `rlmm.config.`, ...) are never reported; the
    prefixes, suffixes and the suggestion distance are parameters.

    Remediation: correct the key to the name Kafka documents (the finding suggests the
    closest known key), in server.properties or with `kafka-configs --alter
    --delete-config WRONG --add-config RIGHT=VALUE`; for a key of a newer release, upgrade
    first or remove it; for a removed key (ZooKeeper settings on a KRaft-only 4.x
    cluster, `log.message.format.version` after 4.0), delete it; for a plugin's own
    namespace, add its prefix to this rule's `unchecked_prefixes` parameter.

    Example: `num.io.thread=32` on brokers 1-6 (did you mean num.io.threads?);
    `max.request.partition.size.limit` on a 3.7.1 cluster (introduced in 3.8.0).

    References:
    - Kafka documentation: broker configs <https://kafka.apache.org/39/documentation.html#brokerconfigs>
    - Kafka documentation: topic-level configs <https://kafka.apache.org/39/documentation.html#topicconfigs>
    - Kafka documentation: ZooKeeper deprecation (removed in 4.0) <https://kafka.apache.org/39/documentation.html#zk_depr>
    - KIP-724: Drop support for message formats v0 and v1 <https://cwiki.apache.org/confluence/display/KAFKA/KIP-724%3A+Drop+support+for+message+formats+v0+and+v1>
    - Confluent Platform: Admin REST APIs configuration options for Confluent Server (kafka.rest.*) <https://docs.confluent.io/platform/current/kafka-rest/production-deployment/confluent-server/config.html>
    - Confluent Platform: configure LDAP group-based authorization (ldap.*) <https://docs.confluent.io/platform/current/security/authorization/ldap/configure.html>
    """
    known = tables.derived(kafka_key_table)
    ranges = tables.derived(kafka_key_range_table)
    c = tables.derived(config_entries)
    skip = F.lit(False)
    for prefix in params["unchecked_prefixes"]:
        skip = skip | F.col("key").startswith(prefix)
    for suffix in params["unchecked_suffixes"]:
        skip = skip | F.col("key").endswith(suffix)
    c = c.where(~skip & (F.trim(F.col("key")) != ""))
    d = join(c, known.select("scope", "key", F.lit(True).alias("is_known")), ["scope", "key"], "left")
    resource = F.when(
        F.col("scope") == "topic", F.concat(F.col("entity"), F.lit(": "), F.col("key"))
    ).otherwise(F.col("key"))
    g = d.groupBy("cluster_id", "scope", "key", "is_known", resource.alias("resource")).agg(
        F.sort_array(F.collect_set("entity")).alias("entities"),
        # null-free (DuckDB's collect_set keeps a null where Spark's drops it)
        F.array_remove(F.sort_array(F.collect_set(F.coalesce(F.col("file"), F.lit("")))), "").alias("files"),
        F.array_remove(F.sort_array(F.collect_set(F.coalesce(F.col("source"), F.lit("")))), "").alias(
            "sources"
        ),
    )

    # Known keys the cluster's release does not have. A version older than the oldest release
    # read (or none) is not judged: any release knowing the key will do.
    oldest = kafka_keys.version_number(kafka_keys.OLDEST_RELEASE)
    versions = tables.clusters.select(
        "cluster_id", "kafka_version", version_key("kafka_version").alias("v")
    ).where(F.col("v") >= F.lit(oldest))
    keyed = join(
        g.where(F.col("is_known").isNotNull()).select("cluster_id", "scope", "key").distinct(),
        versions,
        "cluster_id",
    )
    r = join(keyed, ranges, ["scope", "key"])
    covers = (F.col("since_v").isNull() | (F.col("since_v") <= F.col("v"))) & (
        F.col("removed_v").isNull() | (F.col("v") < F.col("removed_v"))
    )
    verdict = (
        r.groupBy("cluster_id", "scope", "key", "kafka_version")
        .agg(
            F.max(F.when(covers, F.lit(1)).otherwise(F.lit(0))).alias("known_at_v"),
            F.min(F.when(F.col("since_v") > F.col("v"), F.col("since_s"))).alias("next_since_s"),
            F.max(F.when(F.col("removed_v") <= F.col("v"), F.col("removed_s"))).alias("last_removed_s"),
        )
        .where(F.col("known_at_v") == 0)
        .select(
            "cluster_id",
            "scope",
            "key",
            "kafka_version",
            F.regexp_extract(F.col("next_since_s"), _VERSION_TEXT, 1).alias("introduced_in"),
            F.regexp_extract(F.col("last_removed_s"), _VERSION_TEXT, 1).alias("removed_in"),
        )
    )
    g = join(g, verdict, ["cluster_id", "scope", "key"], "left").where(
        F.col("is_known").isNull() | F.col("kafka_version").isNotNull()
    )

    candidates = known.select(F.col("scope").alias("k_scope"), F.col("key").alias("suggestion"))
    pairs = (
        g.where(F.col("is_known").isNull())
        .select("cluster_id", "resource", F.col("scope").alias("u_scope"), F.col("key").alias("u_key"))
        .crossJoin(candidates)
        .where(F.col("u_scope") == F.col("k_scope"))
        # a broker key set on a topic ('log.retention.ms') is closest to its topic form ('retention.ms')
        .withColumn(
            "distance",
            F.least(
                F.levenshtein(F.col("u_key"), F.col("suggestion")),
                F.levenshtein(F.regexp_replace(F.col("u_key"), "^log[.]", ""), F.col("suggestion")),
            ),
        )
        .where(F.col("distance") <= params["suggest_distance"])
    )
    w = Window.partitionBy("cluster_id", "resource").orderBy(
        F.col("distance").asc(), F.col("suggestion").asc()
    )
    best = (
        pairs.withColumn("_rn", F.row_number().over(w))
        .where(F.col("_rn") == 1)
        .select("cluster_id", "resource", "suggestion")
    )
    g = join(g, best, ["cluster_id", "resource"], "left")

    topic = F.col("scope") == "topic"
    introduced = F.coalesce(F.col("introduced_in"), F.lit(""))
    removed = F.coalesce(F.col("removed_in"), F.lit(""))
    reason = (
        F.when(removed == "", text("introduced in ", introduced))
        .when(introduced == "", text("removed in ", removed))
        .otherwise(text("removed in ", removed, ", back in ", introduced))
    )
    hint = F.when(
        F.col("suggestion").isNotNull(), text(" (did you mean ", F.col("suggestion"), "?)")
    ).otherwise(F.lit(""))
    on = F.array_join(F.col("entities"), ", ")
    unknown_msg = text(
        "unknown ",
        F.col("scope"),
        " config key '",
        F.col("key"),
        "' on ",
        on,
        hint,
        ": ",
        _RELEASES,
        ". ",
        F.when(topic, F.lit(_TOPIC_EFFECT)).otherwise(
            text(_BROKER_EFFECT, ", so the setting it was meant to change keeps its default")
        ),
    )
    version_msg = text(
        F.col("scope"),
        " config key '",
        F.col("key"),
        "' on ",
        on,
        " is not known to Kafka ",
        F.col("kafka_version"),
        " (",
        reason,
        "). ",
        F.when(topic, F.lit(_TOPIC_EFFECT)).otherwise(
            text(_BROKER_EFFECT, ", so it has no effect on this cluster")
        ),
    )
    msg = F.when(F.col("is_known").isNull(), unknown_msg).otherwise(version_msg)
    evidence = ev(
        key=F.col("key"),
        scope=F.col("scope"),
        set_on=F.col("entities"),
        files=F.col("files"),
        sources=F.col("sources"),
        suggestion=F.col("suggestion"),
        kafka_version=F.col("kafka_version"),
        introduced_in=F.when(introduced != "", introduced),
        removed_in=F.when(removed != "", removed),
    )
    return emit(g, "config", F.col("resource"), msg, evidence)


def configured_brokers(tables):
    """Brokers whose configuration was collected: broker ids of the broker config entries."""
    return (
        tables.configs.where(F.col("entity_type") == "broker")
        .select("cluster_id", try_int("entity_name").alias("broker_id"))
        .where(F.col("broker_id").isNotNull())
        .distinct()
    )


@rule(
    "CFG003",
    "broker-config-drift",
    "warning",
    needs=("configs",),
    params=(
        Param(
            "keys", BROKER_UNIFORM_KEYS, "broker settings that must be identical on every broker of a cluster"
        ),
    ),
    uses=(broker_settings, configured_brokers, kafka_defaults),
)
def broker_config_drift(tables, params):
    """Brokers of one cluster disagree on a setting that must be cluster-wide.

    Why: settings such as min.insync.replicas, default.replication.factor,
    unclean.leader.election.enable, log retention or inter.broker.protocol.version act
    cluster-wide: which broker creates a topic, leads a partition or coordinates a group
    decides which value applies. A value that differs on one broker (a forgotten dynamic
    per-broker override, a server.properties not rolled out everywhere) makes behaviour
    depend on leadership and changes silently when leaders move. Only brokers whose
    configuration was collected are compared; an unset key counts as Kafka's default for
    the cluster's version, or as "(not set)" when Kafka's default depends on the broker.
    The compared keys are a parameter.

    Remediation: set the key once for the cluster, as a dynamic cluster default
    (`kafka-configs --alter --entity-type brokers --entity-default --add-config KEY=VALUE`)
    and remove per-broker overrides (`kafka-configs --alter --entity-type brokers
    --entity-name ID --delete-config KEY`), or make server.properties identical and roll
    the brokers (static keys such as inter.broker.protocol.version).

    Example: log.retention.hours=168 on brokers 1, 2, 3 and 72 on broker 4.

    References:
    - Kafka documentation: updating broker configs (read-only, per-broker and cluster-wide modes) <https://kafka.apache.org/39/documentation.html#dynamicbrokerconfigs>
    """
    keys = rows_frame(tables.session, [{"key": k} for k in params["keys"]], "key string")
    grid = tables.derived(configured_brokers).crossJoin(keys)
    bs = tables.derived(broker_settings).select(
        "cluster_id", "broker_id", "key", F.col("value").alias("b_value")
    )
    cd = (
        tables.configs.where(F.col("entity_type") == "cluster_default")
        .groupBy("cluster_id", "key")
        .agg(F.max(F.trim(F.col("value"))).alias("d_value"))
    )
    kd = tables.derived(kafka_defaults).select("cluster_id", "key", F.col("value").alias("k_value"))
    g = join(
        join(join(grid, bs, ["cluster_id", "broker_id", "key"], "left"), cd, ["cluster_id", "key"], "left"),
        kd,
        ["cluster_id", "key"],
        "left",
    )
    value = F.lower(
        F.trim(F.coalesce(F.col("b_value"), F.col("d_value"), F.col("k_value"), F.lit("(not set)")))
    )
    per_value = g.groupBy("cluster_id", "key", value.alias("value")).agg(
        F.sort_array(F.collect_list("broker_id")).alias("brokers")
    )
    per_key = (
        per_value.groupBy("cluster_id", "key")
        .agg(
            F.count(F.lit(1)).alias("n_values"),
            F.sort_array(
                F.collect_list(text(F.col("value"), " on brokers ", int_list(F.col("brokers"))))
            ).alias("parts"),
            F.sort_array(
                F.collect_list(F.struct(F.col("value").alias("value"), F.col("brokers").alias("brokers")))
            ).alias("values"),
        )
        .where(F.col("n_values") > 1)
    )
    msg = text("brokers disagree on ", F.col("key"), ": ", F.array_join(F.col("parts"), "; "))
    return emit(per_key, "config", F.col("key"), msg, ev(key=F.col("key"), values=F.col("values")))


def _source_name(prec):
    out = F.lit(None).cast("string")
    for code, name in SOURCE_NAMES.items():
        out = F.when(prec == code, F.lit(name)).otherwise(out)
    return out


@rule(
    "CFG004",
    "replication-defaults-unset",
    "warning",
    needs=("configs",),
    uses=(cluster_settings, configured_brokers),
    runs_in=("lint",),
)
def replication_defaults_unset(tables, params):
    """default.replication.factor or min.insync.replicas is 1 on a cluster of several brokers.

    Why: both default to 1 in Apache Kafka. With default.replication.factor=1 every topic
    created without an explicit factor (auto-created topics, tools, frameworks) gets one
    replica: it goes offline at each restart of its broker and a lost disk loses it. With
    min.insync.replicas=1 an acks=all write is acknowledged once the leader alone has it.
    Both are fine on a single-broker development cluster, hence the broker count condition.

    Remediation: set default.replication.factor=3 and min.insync.replicas=2 (RF - 1) as
    cluster defaults: `kafka-configs --alter --entity-type brokers --entity-default
    --add-config default.replication.factor=3,min.insync.replicas=2` (both are dynamic),
    and in server.properties so new brokers agree. Existing topics keep their factor:
    REP003 lists those with a single replica.

    Example: a 6-broker cluster with no default.replication.factor in server.properties.

    References:
    - Kafka broker config default.replication.factor <https://kafka.apache.org/39/documentation.html#brokerconfigs_default.replication.factor>
    - Kafka broker config min.insync.replicas <https://kafka.apache.org/39/documentation.html#brokerconfigs_min.insync.replicas>
    """
    s = tables.derived(cluster_settings).where(
        F.col("key").isin("default.replication.factor", "min.insync.replicas") & (try_int("value") == 1)
    )
    ids = tables.brokers.select("cluster_id", "broker_id").unionByName(tables.derived(configured_brokers))
    counts = ids.groupBy("cluster_id").agg(F.countDistinct("broker_id").alias("broker_count"))
    d = join(s, counts, "cluster_id").where(F.col("broker_count") > 1)
    source = _source_name(F.col("prec"))
    effect = F.when(
        F.col("key") == "default.replication.factor",
        F.lit("topics created without an explicit replication factor get a single replica"),
    ).otherwise(F.lit("acks=all writes are acknowledged by the leader alone"))
    msg = text(
        F.col("key"), "=1 (", source, ") on a cluster of ", F.col("broker_count"), " brokers: ", effect
    )
    return emit(
        d,
        "config",
        F.col("key"),
        msg,
        ev(key=F.col("key"), value=F.col("value"), source=source, brokers=F.col("broker_count")),
    )


def _brokers_with(tables, key, flagged):
    """The brokers whose effective ``key`` (broker_settings: dynamic per-broker >
    dynamic cluster default > server.properties > Kafka's default for the version) is
    ``flagged`` (a Column over ``value``, ``prec`` and the cluster's ``platform``), as
    finding rows: one per cluster (``resource`` the key) when every broker of the
    cluster has it, else one per such broker (``resource`` "broker N: key"). lint then
    points at the line that sets it, and never at a broker the change does not touch.
    Columns: cluster_id, resource, brokers (array), prec (the lowest layer among them),
    broker_total."""
    platform = tables.clusters.select(
        "cluster_id", F.lower(F.coalesce(F.col("platform"), F.lit(""))).alias("platform")
    )
    s = join(
        tables.derived(broker_settings).where((F.col("key") == key) & F.col("broker_id").isNotNull()),
        platform,
        "cluster_id",
        "left",
    ).withColumn("flagged", F.coalesce(flagged, F.lit(False)))
    per_cluster = (
        s.groupBy("cluster_id")
        .agg(*_flagged_nodes("broker_id", "broker_total", "brokers"))
        .where(F.col("flagged_count") > 0)
    )
    whole = per_cluster.where(F.col("flagged_count") == F.col("broker_total")).select(
        "cluster_id", F.lit(key).alias("resource"), "brokers", "prec", "broker_total"
    )
    some = join(
        per_cluster.where(F.col("flagged_count") < F.col("broker_total")).select(
            "cluster_id", "broker_total"
        ),
        s.where(F.col("flagged")).select("cluster_id", "broker_id", "prec"),
        "cluster_id",
    ).select(
        "cluster_id",
        text("broker ", F.col("broker_id"), ": " + key).alias("resource"),
        F.array(F.col("broker_id")).alias("brokers"),
        "prec",
        "broker_total",
    )
    return whole.unionByName(some)


def _on_brokers():
    """'every broker ([1,2,3])' or 'broker 2 (of 3 brokers)', for a _brokers_with row."""
    return F.when(
        F.size("brokers") == F.col("broker_total"), text("every broker (", int_list(F.col("brokers")), ")")
    ).otherwise(
        text("broker ", F.element_at(F.col("brokers"), 1), " (of ", F.col("broker_total"), " brokers)")
    )


def _production(tables, params):
    """The clusters labelled production (environment among the parameter
    `production_environments`, as CTL007 decides): cluster_id, cluster, env."""
    prod = [e.strip().lower() for e in str(params["production_environments"]).split(",") if e.strip()]
    clusters = tables.clusters.select(
        "cluster_id",
        F.coalesce(F.col("cluster_name"), F.col("cluster_id")).alias("cluster"),
        F.lower(F.trim(F.col("environment"))).alias("env"),
        F.lower(F.coalesce(F.col("platform"), F.lit(""))).alias("platform"),
    )
    return clusters.where(F.col("env").isin(*prod)) if prod else clusters.where(F.lit(False))


@rule(
    "CFG005",
    "controlled-shutdown-disabled",
    "warning",
    needs=("configs",),
    uses=(broker_settings, cluster_versions),
    runs_in=("preflight", "lint"),
)
def controlled_shutdown_disabled(tables, params):
    """controlled.shutdown.enable=false on a broker: every restart leaves its partitions without a leader until the controller notices it is gone.

    Why: with controlled shutdown (the default since Kafka 0.8.2) a stopping broker first
    asks the controller to move the leadership of its partitions to other in-sync
    replicas, so each partition is unavailable for milliseconds. With it disabled the
    broker just stops: in ZooKeeper mode the controller elects new leaders only once the
    broker's registration disappears at the end of its shutdown (KafkaServer.shutdown
    skips controlledShutdown()); in KRaft mode it is honoured too (BrokerServer.shutdown
    skips BrokerLifecycleManager.beginControlledShutdown, in every release from 2.8 to
    4.x), and the controller moves the leaders only when it fences the broker,
    broker.session.timeout.ms (default 9 s) after its last heartbeat. Every rolling
    restart or patch then makes all partitions the broker leads unavailable for seconds,
    and producers with few retries fail. The setting is read-only (server.properties).
    One finding per cluster when every broker disables it, else one per broker that does
    (lint points at the line that sets it).

    Remediation: remove the line (the default is true) or set
    `controlled.shutdown.enable=true` in server.properties and restart the brokers one at
    a time, each after the previous one is back in every ISR. preflight runs this rule:
    the restart that fixes it is itself one of the restarts it is about, so before a patch
    window move the leaders off each such broker by hand before stopping it: reorder the
    replica lists of the partitions it leads with `kafka-reassign-partitions` so another
    in-sync replica comes first, then run `kafka-leader-election --election-type preferred`.

    Example: brokers 1-3 with `controlled.shutdown.enable=false` copied from a test setup
    (Kafka's own integration tests disable it to shut down faster).

    References:
    - Kafka documentation: graceful shutdown (controlled.shutdown.enable) <https://kafka.apache.org/39/documentation.html#basic_ops_restarting>
    - Kafka broker config controlled.shutdown.enable <https://kafka.apache.org/39/documentation.html#brokerconfigs_controlled.shutdown.enable>
    - apache/kafka core/src/main/scala/kafka/server/BrokerServer.scala, shutdown (KRaft: `if (config.controlledShutdownEnable)`) <https://github.com/apache/kafka/blob/trunk/core/src/main/scala/kafka/server/BrokerServer.scala>
    - apache/kafka core/src/main/scala/kafka/server/KafkaServer.scala, controlledShutdown (ZooKeeper mode) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/server/KafkaServer.scala>
    - Kafka broker config broker.session.timeout.ms (KRaft) <https://kafka.apache.org/39/documentation.html#brokerconfigs_broker.session.timeout.ms>
    """
    off = _brokers_with(tables, "controlled.shutdown.enable", try_bool("value") == F.lit(False))
    mode = tables.derived(cluster_versions).select("cluster_id", "mode")
    d = join(off, mode, "cluster_id", "left")
    after = (
        F.when(
            F.col("mode") == "zookeeper",
            F.lit(
                "until its ZooKeeper registration disappears at the end of its shutdown and the controller "
                "elects new leaders"
            ),
        )
        .when(
            F.col("mode") == "kraft",
            F.lit(
                "until the KRaft controller fences it, broker.session.timeout.ms (default 9 s) after its last "
                "heartbeat"
            ),
        )
        .otherwise(F.lit("until the controller notices the broker is gone"))
    )
    source = _source_name(F.col("prec"))
    msg = text(
        "controlled.shutdown.enable=false (",
        source,
        ") on ",
        _on_brokers(),
        ": a stopping broker does not hand over its leaders first, so every restart leaves the partitions "
        "it leads unavailable ",
        after,
    )
    return emit(
        d,
        "config",
        F.col("resource"),
        msg,
        ev(brokers=F.col("brokers"), source=source, metadata_mode=F.col("mode")),
    )


@rule(
    "CFG006",
    "auto-leader-rebalance-disabled",
    "warning",
    needs=("configs", "partitions", "brokers"),
    params=(
        Param(
            "max_imbalance_percent",
            10,
            "largest share (percent) of a live broker's preferred partitions it may not lead, as PAR007 "
            "(Kafka's leader.imbalance.per.broker.percentage default)",
        ),
    ),
    uses=(leader_rebalance_nodes, replica_lists),
    runs_in=("lint-against",),
)
def auto_leader_rebalance_disabled(tables, params):
    """auto.leader.rebalance.enable=false on the nodes that balance leadership while live brokers do not lead the partitions they are preferred for: the imbalance stays until someone runs an election.

    Why: after a broker restarts it leads none of its partitions; the controller moves
    leadership back to preferred replicas (the first in each replica list) only when
    auto.leader.rebalance.enable is true, checking every
    leader.imbalance.check.interval.seconds (default 300). With it false, every restart
    or failover leaves leadership, and the produce and fetch load with it, on fewer
    brokers until an operator runs a preferred leader election, and the next restart of
    an overloaded broker moves even more. The rule fires when the setting is false and at
    least one registered broker does not lead more than `max_imbalance_percent` (default
    10, as PAR007) of the partitions it is the preferred leader of: the imbalance a
    snapshot shows then persists, because nothing will correct it. Whose value counts
    depends on the mode. In ZooKeeper mode the active controller is a broker and reads its
    own setting (KafkaController.onControllerFailover schedules the balancing only when it
    is true), so a broker with it false stops the balancing whenever it is the controller.
    On KRaft only the controllers read it (ControllerServer gives the QuorumController a
    leader imbalance check interval only when it is true): a broker-only node's value is
    inert and not judged; a combined node's (process.roles=broker,controller, or a quorum
    voter that is a registered broker) and a controller-only node's from its collected
    properties file are. A KRaft cluster whose controllers' configuration was not collected
    (MSK, or brokers read through the Admin API only) is not judged. Down brokers are not
    counted: an election cannot move leadership to them. One finding per cluster when
    every such node has it false, else one per node that has.

    Remediation: set auto.leader.rebalance.enable=true (ZooKeeper mode: on every broker;
    KRaft: in the controllers' configuration; it is read-only, so restart them one at a
    time), and run a preferred leader election now: `kafka-leader-election
    --bootstrap-server B --election-type preferred --all-topic-partitions`. If it is off
    on purpose (a tool such as Cruise Control balances leaders), run that tool.

    Example: auto.leader.rebalance.enable=false on the three KRaft controllers of a cluster
    where broker 4 leads 2 of the 60 partitions it is the preferred leader of, a day after
    its restart.

    References:
    - Kafka documentation: balancing leadership <https://kafka.apache.org/39/documentation.html#basic_ops_leader_balancing>
    - Kafka broker config auto.leader.rebalance.enable <https://kafka.apache.org/39/documentation.html#brokerconfigs_auto.leader.rebalance.enable>
    - apache/kafka core/src/main/scala/kafka/controller/KafkaController.scala, onControllerFailover (ZooKeeper mode: the balancing task only when the setting is true) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/controller/KafkaController.scala>
    - apache/kafka core/src/main/scala/kafka/server/ControllerServer.scala, setLeaderImbalanceCheckIntervalNs (KRaft: empty when false) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/server/ControllerServer.scala>
    - apache/kafka metadata/src/main/java/org/apache/kafka/controller/QuorumController.java, maybeScheduleNextBalancePartitionLeaders (KRaft: no balancing without the interval) <https://github.com/apache/kafka/blob/3.9/metadata/src/main/java/org/apache/kafka/controller/QuorumController.java>
    """
    nodes = tables.derived(leader_rebalance_nodes).withColumn(
        "flagged", F.coalesce(try_bool("value") == F.lit(False), F.lit(False))
    )
    per_cluster = (
        nodes.groupBy("cluster_id")
        .agg(
            *_flagged_nodes("node_id", "node_total", "nodes"),
            F.max(F.when(F.col("role") == "broker", F.lit("brokers")).otherwise(F.lit("controllers"))).alias(
                "kind"
            ),
        )
        .where(F.col("flagged_count") > 0)
    )
    whole = per_cluster.where(F.col("flagged_count") == F.col("node_total")).select(
        "cluster_id",
        F.lit(LEADER_REBALANCE).alias("resource"),
        F.lit(None).cast("string").alias("label"),
        "nodes",
        "prec",
        "node_total",
        "kind",
    )
    some = join(
        per_cluster.where(F.col("flagged_count") < F.col("node_total")).select(
            "cluster_id", "node_total", "kind"
        ),
        nodes.where(F.col("flagged")).select("cluster_id", "node_id", "role", "prec"),
        "cluster_id",
    ).select(
        "cluster_id",
        text(
            F.when(F.col("role") == "controller", F.lit("controller ")).otherwise(F.lit("broker ")),
            F.col("node_id"),
            ": " + LEADER_REBALANCE,
        ).alias("resource"),
        text(
            F.when(F.col("role") == "combined", F.lit("node "))
            .when(F.col("role") == "controller", F.lit("controller "))
            .otherwise(F.lit("broker ")),
            F.col("node_id"),
        ).alias("label"),
        F.array(F.col("node_id")).alias("nodes"),
        "prec",
        "node_total",
        "kind",
    )
    lists = tables.derived(replica_lists).where(F.col("replicas").isNotNull() & (F.size("replicas") > 0))
    per_broker = (
        lists.select(
            "cluster_id", F.element_at(F.col("replicas"), 1).alias("broker_id"), "partitions", "not_led"
        )
        .groupBy("cluster_id", "broker_id")
        .agg(F.sum("partitions").alias("preferred"), F.sum("not_led").alias("not_led"))
    )
    threshold = params["max_imbalance_percent"]
    live = join(per_broker, registered_as(tables, "broker_id", "registered"), ["cluster_id", "broker_id"])
    imbalanced = (
        live.where(F.col("not_led") * F.lit(100) > F.col("preferred") * F.lit(threshold))
        .groupBy("cluster_id")
        .agg(
            F.sort_array(F.collect_list("broker_id")).alias("imbalanced"),
            F.sum("not_led").alias("not_led"),
            F.sum("preferred").alias("preferred"),
        )
    )
    d = join(whole.unionByName(some), imbalanced, "cluster_id")
    source = _source_name(F.col("prec"))
    on_nodes = F.when(
        F.size("nodes") == F.col("node_total"),
        text("every one of the ", F.col("kind"), " that balance leadership (", int_list(F.col("nodes")), ")"),
    ).otherwise(
        text(
            F.col("label"),
            " (of ",
            F.col("node_total"),
            " ",
            F.col("kind"),
            " that balance leadership)",
        )
    )
    msg = text(
        "auto.leader.rebalance.enable=false (",
        source,
        ") on ",
        on_nodes,
        " while live broker(s) ",
        int_list(F.col("imbalanced")),
        " do not lead ",
        F.col("not_led"),
        " of the ",
        F.col("preferred"),
        " partitions they are the preferred leaders of (more than ",
        str(threshold),
        "% each): ",
        F.when(
            F.size("nodes") == F.col("node_total"),
            F.lit(
                "nothing moves leadership back, so the imbalance persists until a preferred leader election"
            ),
        ).otherwise(F.lit("while that node is the active controller, nothing moves leadership back")),
        F.when(
            F.col("kind") == "controllers",
            F.lit(" (KRaft: only the controllers' setting acts; the brokers' is inert)"),
        ).otherwise(F.lit("")),
    )
    return emit(
        d,
        "config",
        F.col("resource"),
        msg,
        ev(
            source=source,
            nodes=F.col("nodes"),
            balancing_by=F.col("kind"),
            imbalanced_brokers=F.col("imbalanced"),
            not_led_by_preferred=F.col("not_led"),
            preferred_partitions=F.col("preferred"),
            threshold_percent=F.lit(threshold),
        ),
    )


@rule(
    "CFG007",
    "auto-create-topics-in-production",
    "warning",
    needs=("configs",),
    params=(
        Param(
            "production_environments",
            "prod,production",
            "comma-separated environment labels (case-insensitive) that mark a production cluster, as CTL007",
        ),
    ),
    uses=(broker_settings, cluster_settings, configured_brokers),
    runs_in=("lint-against",),
)
def auto_create_topics_in_production(tables, params):
    """auto.create.topics.enable is true (Kafka's default) in a production cluster: any client naming a missing topic creates it.

    Why: with auto.create.topics.enable=true a broker creates a topic that does not exist
    when a client's metadata request asks for it with auto-creation allowed (KafkaApis
    handleTopicMetadataRequest): producers always allow it, consumers unless they set
    allow.auto.create.topics=false (KIP-361, Kafka 2.3). A typo in a topic name, a stale
    configuration or a test pointed at production then creates a topic silently, with
    the broker defaults num.partitions and default.replication.factor (both 1 unless set:
    CFG004), outside whatever review creates the real ones, and writes that should have
    failed land there. Apache Kafka's default is true in every release (0.8 to 4.x);
    Amazon MSK's default configuration sets it to false, so on MSK a value only Kafka's
    default supplies is not judged, nor is a cluster whose brokers' configuration was not
    collected (topic configs alone). Any broker with it true creates topics (clients send
    metadata requests to any broker): one finding per cluster when every broker has it,
    else one per broker that has. Production is the cluster's environment label, among
    the parameter `production_environments` (default prod, production), as CTL007 decides.

    Remediation: set `auto.create.topics.enable=false` in server.properties (read-only:
    restart the brokers one at a time) or in the MSK cluster configuration, create topics
    explicitly (`kafka-topics --create`, an operator's KafkaTopic, Terraform), and set
    allow.auto.create.topics=false on consumers.

    Example: the production cluster `orders` with no auto.create.topics.enable in
    server.properties (Kafka's default, true).

    References:
    - Kafka broker config auto.create.topics.enable <https://kafka.apache.org/39/documentation.html#brokerconfigs_auto.create.topics.enable>
    - apache/kafka core/src/main/scala/kafka/server/KafkaApis.scala, handleTopicMetadataRequest (`config.autoCreateTopicsEnable && metadataRequest.allowAutoTopicCreation`) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/server/KafkaApis.scala>
    - KIP-361: Add consumer configuration to disable auto topic creation <https://cwiki.apache.org/confluence/display/KAFKA/KIP-361%3A+Add+Consumer+Configuration+to+Disable+Auto+Topic+Creation>
    - Amazon MSK: default configuration (auto.create.topics.enable false) <https://docs.aws.amazon.com/msk/latest/developerguide/msk-default-configuration.html>
    """
    # On MSK a value only Kafka's default supplies is MSK's default configuration's: false.
    on = (try_bool("value") == F.lit(True)) & ~(
        (F.col("platform") == "msk") & (F.col("prec") == F.lit(KAFKA_DEFAULT))
    )
    keys = ("num.partitions", "default.replication.factor")
    s = tables.derived(cluster_settings).where(F.col("key").isin(*keys))
    defaults = s.groupBy("cluster_id").agg(
        F.max(F.when(F.col("key") == keys[0], F.col("value"))).alias("num_partitions"),
        F.max(F.when(F.col("key") == keys[1], F.col("value"))).alias("default_rf"),
    )
    # Only clusters whose broker configuration was read: elsewhere Kafka's default is a guess.
    described = tables.derived(configured_brokers).select("cluster_id").distinct()
    d = join(
        join(
            join(_production(tables, params), described, "cluster_id"),
            _brokers_with(tables, "auto.create.topics.enable", on),
            "cluster_id",
        ),
        defaults,
        "cluster_id",
        "left",
    )
    source = _source_name(F.col("prec"))
    msg = text(
        "auto.create.topics.enable=true (",
        source,
        ") on ",
        _on_brokers(),
        " of a production cluster (environment ",
        F.col("env"),
        "): a client naming a missing topic creates it, with num.partitions=",
        F.col("num_partitions"),
        " and default.replication.factor=",
        F.col("default_rf"),
    )
    return emit(
        d,
        "config",
        F.col("resource"),
        msg,
        ev(
            source=source,
            brokers=F.col("brokers"),
            environment=F.col("env"),
            num_partitions=try_int("num_partitions"),
            default_replication_factor=try_int("default_rf"),
        ),
    )


@rule(
    "CFG008",
    "max-message-bytes-chain",
    "warning",
    needs=(("topics", "configs"),),
    uses=(topic_log_settings,),
    runs_in=("lint",),
)
def max_message_bytes_chain(tables, params):
    """A topic's max.message.bytes is at or above the brokers' socket.request.max.bytes: no producer can send a batch that large.

    Why: `max.message.bytes` (topic; the brokers' `message.max.bytes` when not overridden) is
    the largest record batch the broker accepts, but every produce request must first fit
    in `socket.request.max.bytes` (default 100 MiB): a request announcing a larger size is
    refused by the broker's network layer before it is read (NetworkReceive throws
    InvalidReceiveException "larger than" the maximum, and the connection is closed). A
    batch at the topic's limit plus the request's headers never arrives, so the limit is a
    promise producers cannot use, and a producer that tries sees disconnections, not a
    clear error. The rest of the chain does not break on large batches since KIP-74 (Kafka
    0.10.1): `replica.fetch.max.bytes`, `replica.fetch.response.max.bytes` and the
    consumers' `fetch.max.bytes` / `max.partition.fetch.bytes` are not absolute maximums (the
    first batch is returned even when larger), so they are not judged; consumers older than
    0.10.2 are (Kafka's max.message.bytes documentation) but are not visible in a snapshot.
    Per topic where the topic overrides max.message.bytes; once per cluster (resource:
    message.max.bytes) where the brokers' own value is at or above it.

    Remediation: keep `max.message.bytes` well below `socket.request.max.bytes` (or raise
    the latter on every broker, a static setting: a rolling restart), and the producers'
    `max.request.size` in between; for very large payloads, store them outside Kafka and
    send references.

    Example: topic `blobs` with max.message.bytes=209715200 (200 MiB) on brokers with the
    default socket.request.max.bytes of 104857600.

    References:
    - apache/kafka clients/src/main/java/org/apache/kafka/common/network/NetworkReceive.java (readFrom: InvalidReceiveException) and core/src/main/scala/kafka/network/SocketServer.scala (Processor built with socketRequestMaxBytes) <https://github.com/apache/kafka/blob/trunk/clients/src/main/java/org/apache/kafka/common/network/NetworkReceive.java>
    - apache/kafka server/src/main/java/org/apache/kafka/server/config/ReplicationConfigs.java (replica.fetch.max.bytes: "not an absolute maximum") <https://github.com/apache/kafka/blob/trunk/server/src/main/java/org/apache/kafka/server/config/ReplicationConfigs.java>
    - KIP-74: Add Fetch Response Size Limit in Bytes <https://cwiki.apache.org/confluence/display/KAFKA/KIP-74%3A+Add+Fetch+Response+Size+Limit+in+Bytes>
    - Kafka topic config max.message.bytes <https://kafka.apache.org/39/documentation.html#topicconfigs_max.message.bytes>
    """
    d = tables.derived(topic_log_settings)
    too_big = F.col("max_message_bytes") >= F.col("socket_request_max_bytes")
    topics = d.where(F.col("max_message_bytes_set") & too_big)
    topic_findings = emit(
        topics,
        "topic",
        F.col("topic"),
        text(
            "record batches of max.message.bytes=",
            F.col("max_message_bytes"),
            ", at or above the brokers' socket.request.max.bytes=",
            F.col("socket_request_max_bytes"),
            ": a produce request carrying such a batch is refused before it is read",
        ),
        ev(
            max_message_bytes=F.col("max_message_bytes"),
            socket_request_max_bytes=F.col("socket_request_max_bytes"),
        ),
    )
    cluster = (
        d.where(~F.col("max_message_bytes_set"))
        .groupBy("cluster_id")
        .agg(
            F.first(F.col("cluster_max_message_bytes")).alias("cluster_max_message_bytes"),
            F.first(F.col("socket_request_max_bytes")).alias("socket_request_max_bytes"),
            F.count(F.lit(1)).alias("inheriting"),
        )
        .where(F.col("cluster_max_message_bytes") >= F.col("socket_request_max_bytes"))
    )
    cluster_findings = emit(
        cluster,
        "config",
        F.lit("message.max.bytes"),
        text(
            "the brokers' message.max.bytes=",
            F.col("cluster_max_message_bytes"),
            " is at or above their socket.request.max.bytes=",
            F.col("socket_request_max_bytes"),
            ": no producer can send a batch that large (topics inheriting it: ",
            F.col("inheriting"),
            ")",
        ),
        ev(
            max_message_bytes=F.col("cluster_max_message_bytes"),
            socket_request_max_bytes=F.col("socket_request_max_bytes"),
            topics_inheriting=F.col("inheriting"),
        ),
    )
    return topic_findings.unionByName(cluster_findings)
