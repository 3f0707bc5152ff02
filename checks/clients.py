"""CLI: client software seen by the brokers (KIP-511)."""

from auditor.registry import Param, rule
from checks._api import F, emit, ev, text
from checks._transforms import int_list, rdkafka_version_key, version_key, version_number

# Client names whose versions follow Apache Kafka's own numbering (the Java client) or
# librdkafka's (librdkafka and Confluent's wrappers, which release in step with it).
# sarama, franz-go, kafkajs, kafka-python, segmentio/kafka-go ... have their own version
# schemes and are never compared with the Kafka 4.0 minimum.
KAFKA_VERSIONED = ("apache-kafka-java", "librdkafka", "confluent-kafka-python", "confluent-kafka-go",
                   "confluent-kafka-dotnet", "confluent-kafka-javascript")


def _tag(s: str) -> str:
    return s.strip().lower()


@rule("CLI001", "outdated-client-library", "warning", needs=("client_software",), params=(
    Param("sarama_fixed_version", "1.43.3", "first sarama version that retries KAFKA_STORAGE_ERROR"),
    Param("kafka4_min_version", "2.1", "oldest client Kafka 4.0 still serves (KIP-896 protocol baseline)"),
    Param("kafka_versioned_clients", KAFKA_VERSIONED,
          "client software names whose versions are compared with kafka4_min_version (Java and librdkafka "
          "families); a version with '-rdkafka-X' is compared by its librdkafka part X"),
))
def outdated_client_library(t, p):
    """Connected client software with a known failure mode: sarama < 1.43.3, or any client older than Kafka 2.1.

    Why: the brokers record each connection's client software name and version (KIP-511).
    Two families of clients break in known ways:
    sarama before 1.43.3 does not retry KAFKA_STORAGE_ERROR, so one failed JBOD disk fails
    its writes for hours (incident 2); and Kafka 4.0 removed every protocol API version
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
    """
    names = [_tag(n) for n in p["kafka_versioned_clients"]]
    c = t.client_software.where(F.coalesce(F.col("connections"), F.lit(1)) > 0)
    name = F.lower(F.trim(F.col("client_name")))
    is_sarama = name.rlike("(^|/)sarama$")
    own = version_key("client_version")
    rdkafka = rdkafka_version_key("client_name", "client_version")
    kafka_scale = F.when(rdkafka.isNotNull(), rdkafka).when(name.isin(*names), own) if names else rdkafka
    sarama_old = is_sarama & (own < F.lit(version_number(p["sarama_fixed_version"])))
    pre_kafka4 = ~is_sarama & (kafka_scale < F.lit(version_number(p["kafka4_min_version"])))
    hit = c.where(F.coalesce(sarama_old, F.lit(False)) | F.coalesce(pre_kafka4, F.lit(False))).select(
        "cluster_id", "broker_id", "connections", F.trim(F.col("client_name")).alias("client"),
        F.trim(F.col("client_version")).alias("version"),
        F.when(sarama_old, F.lit("sarama")).otherwise(F.lit("kafka4")).alias("reason"),
    )
    d = hit.groupBy("cluster_id", "client", "version", "reason").agg(
        F.sum(F.coalesce(F.col("connections"), F.lit(0))).alias("total_connections"),
        F.sort_array(F.collect_set(F.col("broker_id"))).alias("brokers"),
    )
    why = F.when(F.col("reason") == "sarama", F.lit(
        "older than sarama " + p["sarama_fixed_version"] + ": does not retry KAFKA_STORAGE_ERROR, so one failed "
        "JBOD disk fails its writes until restarted")).otherwise(F.lit(
            "older than Kafka " + p["kafka4_min_version"] + ": Kafka 4.0 no longer serves its protocol versions "
            "(KIP-896)"))
    msg = text(F.col("client"), " ", F.col("version"), " (", F.col("total_connections"), " connections on brokers ",
               int_list(F.col("brokers")), ") is ",
               why)
    return emit(d, "client", F.concat_ws(" ", F.col("client"), F.col("version")), msg,
                ev(client_software_name=F.col("client"), client_software_version=F.col("version"),
                   connections=F.col("total_connections"), brokers=F.col("brokers"), reason=F.col("reason")))
