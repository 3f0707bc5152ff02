"""CLI: client software seen by the brokers (KIP-511)."""

from auditor.declarations import Category, Param, rule
from checks._api import F, emit, ev, join, text
from checks.transforms import int_list, rdkafka_version_key, version_key, version_number

CATEGORY = Category("CLI", "clients", "clients seen by the brokers", tuple(range(1, 5)))

# Client names whose versions follow Apache Kafka's own numbering (the Java client) or
# librdkafka's (librdkafka and Confluent's wrappers, which release in step with it).
# sarama, franz-go, kafkajs, kafka-python, segmentio/kafka-go ... have their own version
# schemes and are never compared with the Kafka 4.0 minimum.
KAFKA_VERSIONED = (
    "apache-kafka-java",
    "librdkafka",
    "confluent-kafka-python",
    "confluent-kafka-go",
    "confluent-kafka-dotnet",
    "confluent-kafka-javascript",
)


def _tag(s: str) -> str:
    return s.strip().lower()


def _connected(tables):
    """Client software rows with connections (a row without a count is kept)."""
    return tables.client_software.where(F.coalesce(F.col("connections"), F.lit(1)) > 0)


def _client_columns():
    """The columns a client finding is grouped by: its trimmed name and version."""
    return F.trim(F.col("client_name")).alias("client"), F.trim(F.col("client_version")).alias("version")


def _connections_and_brokers():
    """Aggregates of a client group: its connections and the brokers they are on."""
    return (
        F.sum(F.coalesce(F.col("connections"), F.lit(0))).alias("total_connections"),
        F.sort_array(F.collect_set(F.col("broker_id"))).alias("brokers"),
    )


def _client_said(*rest):
    """A client finding's message: "NAME VERSION (N connections on brokers [..]) " + rest."""
    return text(
        F.col("client"),
        " ",
        F.col("version"),
        " (",
        F.col("total_connections"),
        " connections on brokers ",
        int_list(F.col("brokers")),
        ") ",
        *rest,
    )


@rule(
    "CLI001",
    "outdated-client-library",
    "warning",
    needs=("client_software",),
    params=(
        Param("sarama_fixed_version", "1.43.3", "first sarama version that retries KAFKA_STORAGE_ERROR"),
        Param(
            "kafka4_min_version", "2.1", "oldest client Kafka 4.0 still serves (KIP-896 protocol baseline)"
        ),
        Param(
            "kafka_versioned_clients",
            KAFKA_VERSIONED,
            "client software names whose versions are compared with kafka4_min_version (Java and librdkafka "
            "families); a version with '-rdkafka-X' is compared by its librdkafka part X",
        ),
    ),
)
def outdated_client_library(tables, params):
    """Connected client software with a known failure mode: sarama < 1.43.3, or any client older than Kafka 2.1.

    Why: the brokers record each connection's client software name and version (KIP-511).
    Two families of clients break in known ways:
    sarama before 1.43.3 does not retry KAFKA_STORAGE_ERROR, so one failed JBOD disk fails
    its writes for hours (this happened when one disk of a JBOD broker failed); and Kafka
    4.0 removed every protocol API version
    older than Kafka 2.1's (KIP-896), so clients older than 2.1 stop working after a 4.0
    upgrade. Only clients whose version numbers follow Kafka's are compared with 2.1: the
    Java client and librdkafka with its Confluent wrappers (a wrapper reporting
    '2.3.0-rdkafka-2.3.0' is judged by its librdkafka part). librdkafka is compared
    conservatively: KIP-896 kept the API versions librdkafka 1.8.2 uses. sarama, franz-go
    and kafkajs number their own releases and are never compared with 2.1. Versions that do
    not parse ('dev', 'unknown') never fire. The versions and the list of Kafka-versioned
    client names are parameters (`sarama_fixed_version`, `kafka4_min_version`,
    `kafka_versioned_clients`).

    Remediation: upgrade the named library in the applications that use it (the finding
    lists the brokers they connect to and how many connections): sarama to 1.43.3 or later
    (github.com/IBM/sarama), Java clients and librdkafka-based clients to 2.1 or later
    (preferably current) before upgrading the cluster to Kafka 4.0.

    Example: sarama 1.27.0 with 120 connections on brokers [1,2,3,4,5,6].

    References:
    - KIP-511: Collect and Expose Client's Name and Version in the Brokers <https://cwiki.apache.org/confluence/display/KAFKA/KIP-511%3A+Collect+and+Expose+Client%27s+Name+and+Version+in+the+Brokers>
    - KIP-896: Remove old client protocol API versions in Kafka 4.0 <https://cwiki.apache.org/confluence/display/KAFKA/KIP-896%3A+Remove+old+client+protocol+API+versions+in+Kafka+4.0>
    - IBM/sarama #2939: treat ErrKafkaStorageError as retriable (producer) <https://github.com/IBM/sarama/pull/2939>
    """
    names = [_tag(n) for n in params["kafka_versioned_clients"]]
    c = _connected(tables)
    name = F.lower(F.trim(F.col("client_name")))
    is_sarama = name.rlike("(^|/)sarama$")
    own = version_key("client_version")
    rdkafka = rdkafka_version_key("client_name", "client_version")
    kafka_scale = F.when(rdkafka.isNotNull(), rdkafka).when(name.isin(*names), own) if names else rdkafka
    sarama_old = is_sarama & (own < F.lit(version_number(params["sarama_fixed_version"])))
    pre_kafka4 = ~is_sarama & (kafka_scale < F.lit(version_number(params["kafka4_min_version"])))
    hit = c.where(F.coalesce(sarama_old, F.lit(False)) | F.coalesce(pre_kafka4, F.lit(False))).select(
        "cluster_id",
        "broker_id",
        "connections",
        *_client_columns(),
        F.when(sarama_old, F.lit("sarama")).otherwise(F.lit("kafka4")).alias("reason"),
    )
    d = hit.groupBy("cluster_id", "client", "version", "reason").agg(*_connections_and_brokers())
    why = F.when(
        F.col("reason") == "sarama",
        F.lit(
            "older than sarama "
            + params["sarama_fixed_version"]
            + ": does not retry KAFKA_STORAGE_ERROR, so one failed "
            "JBOD disk fails its writes until restarted"
        ),
    ).otherwise(
        F.lit(
            "older than Kafka "
            + params["kafka4_min_version"]
            + ": Kafka 4.0 no longer serves its protocol versions "
            "(KIP-896)"
        )
    )
    msg = _client_said("is ", why)
    return emit(
        d,
        "client",
        F.concat_ws(" ", F.col("client"), F.col("version")),
        msg,
        ev(
            client_software_name=F.col("client"),
            client_software_version=F.col("version"),
            connections=F.col("total_connections"),
            brokers=F.col("brokers"),
            reason=F.col("reason"),
        ),
    )


def kafka4_clients() -> dict:
    """The shipped table of first client releases known to work with Kafka 4.0, each row
    with its sources (auditor/data/kafka4_clients.json)."""
    import json
    from importlib import resources

    return json.loads(
        resources.files("auditor").joinpath("data/kafka4_clients.json").read_text(encoding="utf-8")
    )


def _name_matches(name, names):
    import re

    cond = None
    for n in names:
        c = name.rlike(f"(^|/){re.escape(_tag(n))}$")
        cond = c if cond is None else (cond | c)
    return cond


@rule(
    "CLI002",
    "kafka4-incompatible-client",
    "error",
    scope="maintenance",
    needs=("client_software",),
    runs_in=("upgrade",),
)
def kafka4_incompatible_client(tables, params):
    """(Upgrade preflight, `kafka-audit preflight --target-version 4.0`) Connected client software older than the first release known to work with Kafka 4.0.

    Why: Kafka 4.0 removed every protocol API version older than the ones Kafka 2.1 uses
    (KIP-896), with exceptions kept for the releases of the main non-Java clients current at
    the end of 2021. A client that sends a removed version gets UNSUPPORTED_VERSION (or a
    closed connection) after the brokers are upgraded: producers and consumers stop. The
    brokers record each connection's client software (KIP-511); this rule compares it with
    a shipped table of first-safe releases per library, each row citing its source
    (auditor/data/kafka4_clients.json): the Java client 2.1.0 (KIP-896; Kafka's 4.0
    compatibility matrix: 0.x, 1.x and 2.0 clients are not compatible), librdkafka 1.8.2
    (also the librdkafka part of a wrapper version such as `2.3.0-rdkafka-1.6.0`), Sarama
    1.30.1, kafka-python 2.0.2 and KafkaJS 1.15.0 (the releases KIP-896 analysed and kept
    working; older ones were not analysed). Libraries not in the table (franz-go,
    segmentio/kafka-go, ...) and versions that do not parse are not judged here; software
    reported as `unknown` is CLI003. Sarama picks its request versions from its configured
    `Config.Version`: a recent sarama configured for a version older than 2.1 still breaks,
    which only the brokers' request metrics by API version can show. Those outrank the
    table: where the KIP-896 DeprecatedRequestsPerSec meter (Kafka 3.7-3.9, tagged with the
    client software) names this client, a request at a version 4.0 removed is CLI004's
    finding and this one is not repeated, and requests only at versions 4.0 accepts make
    it info, with the requests seen as evidence (a client absent from the meter is judged
    by the table alone). What the brokers saw it send then outranks its release number, so
    the info finding does not block the upgrade (preflight blocks on CLI002 at warning or
    above, never at info): it is advice to upgrade the library, since a request the client
    did not make while the meter counted (an admin call, a rarely used API) may still use
    a removed version. The rule runs in the upgrade preflight, not in `check`.

    Remediation: upgrade the listed library in the applications that use it (the finding
    names the brokers they connect to and how many connections) to at least the listed
    release, preferably a current one, before upgrading the cluster to Kafka 4.0; for
    sarama also set `Config.Version` to at least `sarama.V2_1_0_0`. Upgrade the cluster
    only when `kafka-audit preflight --target-version 4.0` reports none above info.

    Example: sarama 1.27.0 with 120 connections on brokers [1,2] (first safe: 1.30.1,
    https://cwiki.apache.org/confluence/display/KAFKA/KIP-896), apache-kafka-java 2.0.1
    (first safe: 2.1.0).

    References:
    - KIP-896: Remove old client protocol API versions in Kafka 4.0 <https://cwiki.apache.org/confluence/display/KAFKA/KIP-896%3A+Remove+old+client+protocol+API+versions+in+Kafka+4.0>
    - KIP-511: Collect and Expose Client's Name and Version in the Brokers <https://cwiki.apache.org/confluence/display/KAFKA/KIP-511%3A+Collect+and+Expose+Client%27s+Name+and+Version+in+the+Brokers>
    - Kafka documentation: 3.7 notable changes (client APIs older than 2.1 removed in 4.0) <https://kafka.apache.org/39/documentation.html#upgrade_370_notable>
    """
    rows = kafka4_clients()["clients"]
    c = _connected(tables)
    name = F.lower(F.trim(F.col("client_name")))
    rdkafka = rdkafka_version_key("client_name", "client_version")
    library = first_safe = source = None
    for row in rows:
        if row["scheme"] == "librdkafka":
            match, key = rdkafka.isNotNull(), rdkafka
        else:
            match, key = _name_matches(name, row["names"]), version_key("client_version")
        old = F.coalesce(match & (key < F.lit(version_number(row["first_safe"]))), F.lit(False))
        cite = row["sources"][0].split(" ")[0]
        if library is None:
            library, first_safe, source = (
                F.when(old, F.lit(row["library"])),
                F.when(old, F.lit(row["first_safe"])),
                F.when(old, F.lit(cite)),
            )
        else:
            library, first_safe, source = (
                library.when(old, F.lit(row["library"])),
                first_safe.when(old, F.lit(row["first_safe"])),
                source.when(old, F.lit(cite)),
            )
    hit = c.select(
        "cluster_id",
        "broker_id",
        "connections",
        *_client_columns(),
        library.alias("library"),
        first_safe.alias("first_safe"),
        source.alias("source"),
    ).where(F.col("library").isNotNull())
    d = hit.groupBy("cluster_id", "client", "version", "library", "first_safe", "source").agg(
        *_connections_and_brokers()
    )
    # What the client was seen sending outranks the table: removed versions are CLI004's
    # finding (not repeated here); only accepted ones make this one info, with the evidence.
    d = join(d, _requests_per_client(tables), ["cluster_id", "client", "version"], "left").where(
        F.coalesce(F.col("removed"), F.lit(0)) == 0
    )
    observed = F.col("sent").isNotNull()
    msg = _client_said(
        "is older than ",
        F.col("first_safe"),
        ", the first ",
        F.col("library"),
        " release known to work with Kafka 4.0 (",
        F.col("source"),
        ")",
        F.when(
            observed,
            text(
                ", but the brokers' DeprecatedRequestsPerSec shows it sending only versions Kafka 4.0 accepts (",
                F.array_join(F.col("sent"), ", "),
                "): what it sent does not block the upgrade; upgrade the library when you can, since a request "
                "it did not make while counted may still use a removed version",
            ),
        ).otherwise(
            F.lit(
                ": it may send protocol versions Kafka 4.0 removed (KIP-896) and stop working after the upgrade"
            )
        ),
    )
    return emit(
        d,
        "client",
        F.concat_ws(" ", F.col("client"), F.col("version")),
        msg,
        ev(
            client_software_name=F.col("client"),
            client_software_version=F.col("version"),
            library=F.col("library"),
            first_safe_version=F.col("first_safe"),
            source=F.col("source"),
            connections=F.col("total_connections"),
            brokers=F.col("brokers"),
            requests_seen=F.col("sent"),
        ),
        F.when(observed, F.lit("info")),
    )


@rule(
    "CLI003",
    "unidentified-client-software",
    "warning",
    scope="maintenance",
    needs=("client_software",),
    runs_in=("upgrade",),
)
def unidentified_client_software(tables, params):
    """(Upgrade preflight) Connections whose client software is `unknown`: the group a Kafka 4.0 upgrade cannot judge.

    Why: brokers learn a connection's client software name and version from its
    ApiVersions request (KIP-511, Kafka 2.4). Clients that do not send them (releases from
    before KIP-511, and libraries that never implemented it) are reported as `unknown`.
    Those are exactly the clients most likely to use protocol versions Kafka 4.0 removed
    (KIP-896), and the only ones CLI002 cannot compare with its table: an upgrade
    preflight that says nothing about them would read as "all clients fine". The finding
    counts their connections and names the brokers and listeners they use, so that their
    owners can be found (by host, from the brokers' connection logs or the listener).

    Remediation: identify the applications behind these connections (the brokers'
    `kafka.server:type=socket-server-metrics` per listener, connection logs, network
    flows) and upgrade their client library to a release that reports itself (KIP-511) and
    is on CLI002's table, before upgrading the cluster to Kafka 4.0.

    Example: 37 connections with client software `unknown` on brokers [1,2,3], listener
    CLIENT.

    References:
    - KIP-511: Collect and Expose Client's Name and Version in the Brokers <https://cwiki.apache.org/confluence/display/KAFKA/KIP-511%3A+Collect+and+Expose+Client%27s+Name+and+Version+in+the+Brokers>
    - KIP-896: Remove old client protocol API versions in Kafka 4.0 <https://cwiki.apache.org/confluence/display/KAFKA/KIP-896%3A+Remove+old+client+protocol+API+versions+in+Kafka+4.0>
    """
    name = F.lower(F.trim(F.coalesce(F.col("client_name"), F.lit(""))))
    version = F.lower(F.trim(F.coalesce(F.col("client_version"), F.lit(""))))
    unknown = name.isin("", "unknown") | version.isin("", "unknown")
    c = _connected(tables).where(unknown)
    d = c.groupBy("cluster_id").agg(
        *_connections_and_brokers(),
        F.sort_array(F.collect_set(F.col("listener"))).alias("listeners"),
        F.sort_array(
            F.collect_set(
                F.concat_ws(
                    " ",
                    F.coalesce(F.trim(F.col("client_name")), F.lit("(none)")),
                    F.coalesce(F.trim(F.col("client_version")), F.lit("(none)")),
                )
            )
        ).alias("software"),
    )
    msg = text(
        F.col("total_connections"),
        " connection(s) on brokers ",
        int_list(F.col("brokers")),
        " (listeners ",
        F.array_join(F.col("listeners"), ", "),
        ") report their client software as ",
        F.array_join(F.col("software"), ", "),
        ": a Kafka 4.0 upgrade cannot judge them (KIP-511 clients "
        "report a name and version; these do not, and may predate the protocol baseline of KIP-896)",
    )
    return emit(
        d,
        "clients",
        F.lit("unknown"),
        msg,
        ev(
            connections=F.col("total_connections"),
            brokers=F.col("brokers"),
            listeners=F.col("listeners"),
            software=F.col("software"),
        ),
    )


def kafka4_api_versions() -> dict:
    """The shipped table of the lowest protocol version of each API a Kafka 4.0 broker
    accepts, generated from Kafka's message definitions (auditor/data/kafka4_api_versions.json,
    tools/extract_kafka_api_versions.py)."""
    import json
    from importlib import resources

    return json.loads(
        resources.files("auditor").joinpath("data/kafka4_api_versions.json").read_text(encoding="utf-8")
    )


def _label_value(name: str, value_pattern: str = '[^"]*'):
    """One member of a metric's JSON labels ('' when absent), by regular expression as in
    checks/threads.py (sqlframe's DuckDB translation cannot bind get_json_object)."""
    return F.regexp_extract(F.col("labels"), f'"{name}" *: *"({value_pattern})"', 1)


def _versioned_requests(tables):
    """The brokers' request meters by API version with a non-zero value: cluster_id,
    broker_id, name, value, request (the meter's tag), version, the client software that
    sent it (client, client_version: tagged on the KIP-896 DeprecatedRequestsPerSec meter
    only), and for the APIs Kafka 4.0 removed versions of, ``api`` and ``min_version`` (the
    lowest version 4.0 accepts; null for the other APIs)."""
    removed = [
        a for a in kafka4_api_versions()["apis"] if a["removed_versions"] and a["min_version"] is not None
    ]
    request = _label_value("request")
    api = min_version = None
    for a in removed:  # request tag -> the API and the lowest version 4.0 accepts
        hit = request.isin(*a["request_tags"])
        api = F.when(hit, F.lit(a["request"])) if api is None else api.when(hit, F.lit(a["request"]))
        min_version = (
            F.when(hit, F.lit(a["min_version"]))
            if min_version is None
            else min_version.when(hit, F.lit(a["min_version"]))
        )
    version_text = _label_value("version", "[0-9]{1,4}")
    version = F.when(F.length(version_text) > 0, version_text).cast("int")
    names = ("request_rate", "request_count", "deprecated_request_rate", "deprecated_request_count")
    return tables.metrics.where(F.col("name").isin(*names) & (F.col("value") > 0)).select(
        "cluster_id",
        "broker_id",
        "name",
        "value",
        request.alias("request"),
        api.alias("api"),
        min_version.alias("min_version"),
        version.alias("version"),
        F.trim(_label_value("client_software_name")).alias("client"),
        F.trim(_label_value("client_software_version")).alias("client_version"),
    )


def _requests_per_client(tables):
    """Per client software the KIP-896 DeprecatedRequestsPerSec meter names (cluster_id,
    client, version): the requests it was seen sending (``sent``, "Request vN") and how
    many of them are at a version Kafka 4.0 removed (``removed``). The meter counts every
    request at a version 3.7-3.9 deprecate, which is wider than what 4.0 removed (Produce
    v3-v6 are deprecated and kept)."""
    r = _versioned_requests(tables).where(F.col("name").startswith("deprecated_") & (F.length("client") > 0))
    removed = F.coalesce(F.col("version") < F.col("min_version"), F.lit(False))
    return r.groupBy("cluster_id", F.col("client"), F.col("client_version").alias("version")).agg(
        F.sort_array(
            F.collect_set(F.concat(F.col("request"), F.lit(" v"), F.col("version").cast("string")))
        ).alias("sent"),
        F.sum(F.when(removed, F.lit(1)).otherwise(F.lit(0))).alias("removed"),
    )


@rule(
    "CLI004",
    "removed-protocol-versions-in-use",
    "error",
    scope="maintenance",
    needs=("metrics",),
    runs_in=("upgrade",),
)
def removed_protocol_versions_in_use(tables, params):
    """(Upgrade preflight, `kafka-audit preflight --target-version 4.0`) Requests the brokers received at protocol API versions Kafka 4.0 no longer accepts.

    Why: Kafka 4.0 rejects the protocol API versions KIP-896 removed (Produce v0-v2, Fetch
    v0-v3, ListOffsets v0, OffsetCommit v0-v1, JoinGroup v0-v1 ...): a client that still
    sends one gets UNSUPPORTED_VERSION after the upgrade and stops. CLI002 judges client
    software by name and version; this rule looks at what was actually sent, which also
    catches a recent library configured for an old protocol (sarama's `Config.Version`) and
    clients that report no software name. It reads the brokers' request meters by API and
    version (`kafka.network:type=RequestMetrics,name=RequestsPerSec,request=R,version=V`,
    exported by a JMX exporter since Kafka 2.0) and, on 3.7-3.9 brokers, the KIP-896 meter
    `name=DeprecatedRequestsPerSec`, tagged with the client software that sent the request.
    Each version is compared with the lowest version Kafka 4.0 accepts for that API, read
    from Kafka's 4.0 message definitions (auditor/data/kafka4_api_versions.json; 3.9's
    `deprecatedVersions` is wider: Produce v3-v6 are counted as deprecated but kept in 4.0,
    so they do not fire). A non-zero recent rate fires, and so does a non-zero count since
    the broker started when only the count is exported (Strimzi and jmx_exporter's example
    configs): such a client may be gone, which only a later scrape shows. The ZooKeeper-mode
    inter-broker APIs 4.0 removed whole (LeaderAndIsr, UpdateMetadata ...) are the KRaft
    migration's business, not judged here. The rule runs in the upgrade preflight, not in
    `check`.

    Remediation: find the applications behind the requests (the finding names the API, the
    versions and, with the deprecated-request meter, the client software; the brokers'
    request log at DEBUG lists the clients' addresses) and upgrade their client library, or
    raise its configured protocol version (sarama: `Config.Version` at least
    `sarama.V2_1_0_0`), then check that the meter stays at zero before upgrading the cluster
    to Kafka 4.0.

    Example: broker 1 received Produce requests at versions [2] (1.5 requests/s) but Kafka
    4.0 accepts Produce from v3; client software sarama 1.27.0 sent Produce v2 to brokers
    [1,2].

    References:
    - KIP-896: Remove old client protocol API versions in Kafka 4.0 <https://cwiki.apache.org/confluence/display/KAFKA/KIP-896%3A+Remove+old+client+protocol+API+versions+in+Kafka+4.0>
    - KIP-272: Add API version tag to broker's RequestsPerSec metric <https://cwiki.apache.org/confluence/display/KAFKA/KIP-272%3A+Add+API+version+tag+to+broker%27s+RequestsPerSec+metric>
    - Kafka documentation: monitoring, request rate by API version <https://kafka.apache.org/documentation/#monitoring>
    """
    m = _versioned_requests(tables).where(F.col("version") < F.col("min_version"))
    rate = F.when(F.col("name").endswith("_rate"), F.col("value"))
    count = F.when(F.col("name").endswith("_count"), F.col("value"))
    seen = text(
        F.when(F.col("rate").isNotNull(), text(F.round(F.col("rate"), 3), " requests/s")).otherwise(
            text(F.col("count").cast("bigint"), " requests since the broker started")
        )
    )

    # A consumer's Fetch is counted under both Fetch and FetchConsumer: per version, the largest tag.
    per_version = (
        m.where(F.col("name").startswith("request_"))
        .groupBy("cluster_id", "broker_id", "api", "min_version", "version")
        .agg(F.max(rate).alias("rate"), F.max(count).alias("count"))
    )
    per_broker = per_version.groupBy("cluster_id", "broker_id", "api", "min_version").agg(
        F.sort_array(F.collect_set(F.col("version"))).alias("versions"),
        F.sum(F.col("rate")).alias("rate"),
        F.sum(F.col("count")).alias("count"),
    )
    broker_findings = emit(
        per_broker,
        "api",
        F.concat_ws(" ", F.col("api"), F.lit("on broker"), F.col("broker_id").cast("string")),
        text(
            "broker ",
            F.col("broker_id"),
            " received ",
            F.col("api"),
            " requests at versions ",
            int_list(F.col("versions")),
            " (",
            seen,
            ") but Kafka 4.0 accepts ",
            F.col("api"),
            " from v",
            F.col("min_version"),
            " (KIP-896): the clients sending them stop working after the upgrade",
        ),
        ev(
            broker_id=F.col("broker_id"),
            api=F.col("api"),
            versions=F.col("versions"),
            min_version=F.col("min_version"),
            requests_per_sec=F.col("rate"),
            requests_since_start=F.col("count"),
        ),
    )

    software = F.concat_ws(" ", F.col("client"), F.col("client_version"))
    per_client = (
        m.where(F.col("name").startswith("deprecated_"))
        .withColumn("software", software)
        .groupBy("cluster_id", "software")
        .agg(
            F.sort_array(
                F.collect_set(F.concat(F.col("api"), F.lit(" v"), F.col("version").cast("string")))
            ).alias("requests"),
            F.sort_array(
                F.collect_set(
                    F.concat(F.col("api"), F.lit(" v"), F.col("min_version").cast("string"), F.lit("+"))
                )
            ).alias("accepted"),
            F.sort_array(F.collect_set(F.col("broker_id"))).alias("brokers"),
        )
    )
    client_findings = emit(
        per_client,
        "client",
        F.col("software"),
        text(
            "client software ",
            F.col("software"),
            " sent ",
            F.array_join(F.col("requests"), ", "),
            " to brokers ",
            int_list(F.col("brokers")),
            " (DeprecatedRequestsPerSec) but Kafka 4.0 accepts only ",
            F.array_join(F.col("accepted"), ", "),
            " (KIP-896): it stops working after the upgrade",
        ),
        ev(
            client_software=F.col("software"),
            requests=F.col("requests"),
            accepted=F.col("accepted"),
            brokers=F.col("brokers"),
        ),
    )
    return broker_findings.unionByName(client_findings)
