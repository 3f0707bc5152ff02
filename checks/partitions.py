"""PAR: live partition state, as the brokers serve it and as ZooKeeper holds it."""

from auditor.registry import rule
from checks._api import F, emit, ev, join, text
from checks._transforms import int_list, partition_name


@rule("PAR001", "leaderless-partition", "critical")
def leaderless_partition(t, p):
    """A partition has no leader, or its leader is not a registered broker: it cannot be read or written.

    Why: without a live leader nobody serves the partition. Producers fail, consumers stop,
    and when the partition belongs to `__consumer_offsets` every consumer group mapped to
    it loses its coordinator (incident 3: a controller split-brain left one at leader -1).

    Remediation: find out why no replica could be elected: are the replicas' brokers up
    (`/brokers/ids`)? Is the ISR empty while unclean election is off? Bring a replica back,
    run a preferred or (accepting data loss) unclean election with `kafka-leader-election`,
    and when the controller's view diverges from ZooKeeper, restart the controller to
    force a new one.

    Example: `__consumer_offsets-17` with leader -1, ISR [3], replicas [3, 1, 4].
    """
    live = t.brokers.select("cluster_id", F.col("broker_id").alias("leader"), F.lit(True).alias("leader_live"))
    known = t.brokers.groupBy("cluster_id").agg(F.count(F.lit(1)).alias("broker_count"))
    zk = t.zk_state.select("cluster_id", "topic", "partition", F.col("leader").alias("zk_leader"))
    d = join(join(join(t.partitions, zk, ["cluster_id", "topic", "partition"], "left"),
                  live, ["cluster_id", "leader"], "left"), known, "cluster_id", "left")
    no_leader = (F.col("leader") < 0) | (F.col("zk_leader") < 0)
    # Only judge "not registered" when the brokers were collected for that cluster.
    unregistered = (F.col("leader") >= 0) & F.col("leader_live").isNull() & (F.coalesce(F.col("broker_count"), F.lit(0)) > 0)
    d = d.where(no_leader | unregistered)
    zk_differs = F.when(F.col("zk_leader").isNotNull() & (F.col("zk_leader") != F.col("leader")),
                        text(", ZooKeeper says ", F.col("zk_leader"))).otherwise(F.lit(""))
    where = text("; replicas ", int_list(F.col("replicas")), ", ISR ", int_list(F.col("isr")))
    msg = F.when(no_leader, text("no leader (leader ", F.col("leader"), zk_differs, ")", where)).otherwise(
        text("leader ", F.col("leader"), " is not a registered broker", where))
    evidence = ev(leader=F.col("leader"), zookeeper_leader=F.col("zk_leader"), leader_epoch=F.col("leader_epoch"),
                  replicas=F.col("replicas"), isr=F.col("isr"), offline_replicas=F.col("offline_replicas"))
    return emit(d, "partition", partition_name(), msg, evidence)
