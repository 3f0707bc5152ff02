"""REP: replication and durability, from assignments and effective topic configuration."""

from auditor.registry import rule
from checks._api import F, emit, ev, text
from checks._transforms import topic_durability


def _durability(t):
    return t.derived("topic_durability", topic_durability)


def _evidence():
    return ev(
        replication_factor=F.col("rf_min"),
        replication_factor_max=F.col("rf_max"),
        min_insync_replicas=F.col("min_insync_replicas"),
        min_insync_replicas_source=F.col("min_insync_replicas_source"),
        partitions=F.col("partition_count"),
    )


@rule("REP001", "min-isr-unsatisfiable", "critical")
def min_isr_unsatisfiable(t, p):
    """min.insync.replicas is greater than the topic's replica count: acks=all writes always fail.

    Why: a leader accepts an acks=all write only when at least min.insync.replicas replicas
    are in sync. With fewer replicas than that, every such write fails with
    NOT_ENOUGH_REPLICAS, even on a perfectly healthy cluster.

    Remediation: lower the topic's min.insync.replicas to replication factor - 1
    (`kafka-configs --alter --entity-type topics --entity-name T --add-config
    min.insync.replicas=2`), or raise the replication factor with a reassignment.
    When the value comes from the broker default, fix the default instead.

    Example: topic `audit-log` with 2 replicas and min.insync.replicas=3.
    """
    d = _durability(t).where(F.col("min_insync_replicas") > F.col("rf_min"))
    msg = text("min.insync.replicas=", F.col("min_insync_replicas"), " (", F.col("min_insync_replicas_source"),
               ") exceeds the replica count ", F.col("rf_min"), ": every acks=all write fails")
    return emit(d, "topic", F.col("topic"), msg, _evidence())


@rule("REP002", "min-isr-equals-rf", "error")
def min_isr_equals_rf(t, p):
    """min.insync.replicas equals the replica count: any single broker restart blocks acks=all producers.

    Why: with min.insync.replicas == replication factor every replica must stay in sync.
    One broker restart (an MSK monthly patch, a rolling upgrade, a crash) drops the ISR
    below the minimum and acks=all producers fail with NOT_ENOUGH_REPLICAS until it is
    back. On `__consumer_offsets` it also blocks offset commits: consumer groups stall
    (incident 1). Strimzi and MSK roll brokers anyway in this state. MSK recommends
    min.insync.replicas of at most RF - 1.

    Remediation: set min.insync.replicas to replication factor - 1 (RF 3: 2) on the topic,
    or on the broker default when the value is inherited:
    `kafka-configs --alter --entity-type topics --entity-name T --add-config min.insync.replicas=2`.

    Example: topic `orders` with RF 3 and min.insync.replicas=3.
    """
    d = _durability(t).where((F.col("min_insync_replicas") == F.col("rf_min")) & (F.col("rf_min") > 1))
    msg = text("min.insync.replicas=", F.col("min_insync_replicas"), " (", F.col("min_insync_replicas_source"),
               ") equals the replica count: one broker restart blocks acks=all writes",
               F.when(F.col("topic") == "__consumer_offsets", F.lit(" and consumer offset commits")).otherwise(F.lit("")))
    return emit(d, "topic", F.col("topic"), msg, _evidence())


@rule("REP003", "single-replica", "error")
def single_replica(t, p):
    """A topic has partitions with a single replica: they go offline whenever their broker restarts.

    Why: with one replica there is no other copy to lead. Every restart, patch or disk
    failure of that broker makes those partitions unavailable, and a lost disk loses data.

    Remediation: increase the replication factor to 3 with `kafka-reassign-partitions`
    (a reassignment JSON listing three replicas per partition), and set
    default.replication.factor=3 so new topics do not repeat it.

    Example: topic `clickstream-raw` created with --replication-factor 1.
    """
    d = _durability(t).where(F.col("rf_min") == 1)
    msg = text(F.col("single_replica_partitions"), " of ", F.col("partition_count"),
               " partition(s) have a single replica: offline whenever their broker restarts")
    return emit(d, "topic", F.col("topic"), msg, _evidence())
