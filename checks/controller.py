"""CTL: controller and metadata (ZooKeeper and KRaft)."""

from auditor.registry import Param, rule
from checks._api import F, Window, emit, ev, join, text
from checks._transforms import (
    cluster_brokers,
    degraded_partitions,
    int_list,
    partition_name,
    registered_as,
    with_version_number,
)

PARTITION_KEYS = ["cluster_id", "topic", "partition"]
# Kafka 2.1 added controller epoch fencing of ZooKeeper writes (KAFKA-6082).
EPOCH_FENCING_SINCE = 2_001_000


def _clusters(t):
    """cluster_id, cluster (name for cluster-level resources), metadata_mode from the manifest."""
    return t.clusters.select("cluster_id", F.coalesce(F.col("cluster_name"), F.col("cluster_id")).alias("cluster"),
                             F.col("metadata_mode").alias("manifest_mode"))


def _broker_count(t):
    return cluster_brokers(t).select("cluster_id", "broker_count")


@rule("CTL001", "no-active-controller", "critical", needs=(("controller", "partitions"),))
def no_active_controller(t, p):
    """The cluster has no active controller, or the controller it names is not a registered broker (KRaft: not a quorum voter).

    Why: the controller elects partition leaders, handles broker failures and applies
    topic and config changes. Without one, a broker failure leaves its partitions
    leaderless and nothing recovers them. In ZooKeeper mode `/controller` must exist and
    name a broker that is in `/brokers/ids`; a controller id that is not registered is a
    zombie whose session expired. In KRaft mode the quorum must have a leader among the
    voters. A missing controller row is judged only when live partition state was
    collected (a snapshot of broker config files alone says nothing about the controller).

    Remediation: ZooKeeper mode: check the brokers' ZooKeeper sessions and logs; deleting
    `/controller` (`zookeeper-shell Z delete /controller`) forces a new election among
    the live brokers. KRaft: check the controller quorum with `kafka-metadata-quorum
    --bootstrap-server B describe --status`; a majority of `controller.quorum.voters` must
    be up and reachable.

    Example: `/controller` holds `{"brokerid": 5}` while `/brokers/ids` lists 1, 2, 3, 4.
    """
    ctl = t.controller.select("cluster_id", "mode", "controller_id", "controller_epoch", "voters",
                              F.lit(True).alias("has_row"))
    parts = t.partitions.groupBy("cluster_id").agg(F.count(F.lit(1)).alias("partition_count"))
    d = join(join(join(join(_clusters(t), ctl, "cluster_id", "left"), _broker_count(t), "cluster_id", "left"),
                  parts, "cluster_id", "left"),
             registered_as(t, "controller_id", "registered"), ["cluster_id", "controller_id"], "left")
    kraft = F.lower(F.coalesce(F.col("mode"), F.col("manifest_mode"), F.lit("zookeeper"))) == "kraft"
    has_voters = F.col("voters").isNotNull() & (F.size("voters") > 0)
    no_row = F.col("has_row").isNull() & (F.coalesce(F.col("partition_count"), F.lit(0)) > 0)
    none = F.col("has_row").isNotNull() & (F.col("controller_id").isNull() | (F.col("controller_id") < 0))
    not_voter = kraft & has_voters & (F.col("controller_id") >= 0) & ~F.array_contains(F.col("voters"), F.col("controller_id"))
    not_broker = ~kraft & (F.col("controller_id") >= 0) & F.col("registered").isNull() & (
        F.coalesce(F.col("broker_count"), F.lit(0)) > 0)
    d = d.where(no_row | none | not_voter | not_broker)
    msg = (
        F.when(no_row, F.lit("no controller recorded (no /controller znode, no quorum leader) while partitions are served"))
        .when(none & kraft, F.lit("the KRaft controller quorum has no leader"))
        .when(none, F.lit("no active controller: /controller is missing or names broker -1"))
        .when(not_voter, text("quorum leader ", F.col("controller_id"), " is not among the voters ",
                              int_list(F.sort_array(F.col("voters")))))
        .otherwise(text("/controller names broker ", F.col("controller_id"),
                        ", which is not registered in /brokers/ids: a zombie controller"))
    )
    evidence = ev(mode=F.when(kraft, F.lit("kraft")).otherwise(F.lit("zookeeper")), controller_id=F.col("controller_id"),
                  controller_epoch=F.col("controller_epoch"), voters=F.col("voters"),
                  controller_registered=F.when(~kraft, F.col("registered").isNotNull()))
    return emit(d, "cluster", F.col("cluster"), msg, evidence)


@rule("CTL002", "partition-state-divergence", "critical", needs=("partitions", "zk_state"))
def partition_state_divergence(t, p):
    """The leader or ISR that ZooKeeper holds for a partition differs from what the brokers serve in metadata.

    Why: in ZooKeeper mode the controller writes each partition's leader and ISR to
    `/brokers/topics/T/partitions/P/state` and pushes the same state to the brokers.
    When the two disagree, some controller acted on a stale view: after a session expiry
    two brokers may both believe they are controller (a split-brain), and clients, brokers
    and the real controller then act on different leaders (incident 3). Such state does
    not heal by itself until a new controller reloads everything from ZooKeeper.

    Remediation: force a controller failover so a single controller reloads the state
    from ZooKeeper: delete `/controller` (`zookeeper-shell Z delete /controller`) or
    restart the active controller broker. Then verify with `kafka-topics --describe
    --unavailable-partitions` and compare `get /brokers/topics/T/partitions/P/state`.
    Snapshot both sources again: a divergence seen once can be a race with an ongoing
    election; one that persists is not.

    Example: `ads.impressions-4`: ZooKeeper says leader 5 with ISR [5], the brokers serve
    leader 1 with ISR [1, 2].
    """
    # degraded_partitions joins the brokers' view with ZooKeeper's once, for PAR001 too.
    d = t.derived("degraded_partitions", degraded_partitions).where(F.col("zk_diverged"))
    isr, zk_isr = int_list(F.sort_array(F.col("isr"))), int_list(F.sort_array(F.col("zk_isr")))
    msg = text("ZooKeeper state says leader ", F.col("zk_leader"), " ISR ", zk_isr, " (leader epoch ",
               F.col("zk_leader_epoch"), ", controller epoch ", F.col("zk_controller_epoch"),
               "), the brokers serve leader ", F.col("leader"), " ISR ", isr, " (leader epoch ", F.col("leader_epoch"),
               "): the controller's view diverged (split-brain or stale controller)")
    evidence = ev(leader=F.col("leader"), isr=F.sort_array(F.col("isr")), leader_epoch=F.col("leader_epoch"),
                  zookeeper_leader=F.col("zk_leader"), zookeeper_isr=F.sort_array(F.col("zk_isr")),
                  zookeeper_leader_epoch=F.col("zk_leader_epoch"),
                  zookeeper_controller_epoch=F.col("zk_controller_epoch"))
    return emit(d, "partition", partition_name(), msg, evidence)


@rule("CTL003", "leader-not-registered", "critical", needs=("zk_state", "brokers"))
def leader_notregistered_as(t, p):
    """ZooKeeper's partition state names a leader that is not a registered broker, and no re-election happened.

    Why: when a broker's ZooKeeper session ends, the controller must move leadership of
    its partitions to another in-sync replica and rewrite their state znodes. A state
    that still names the departed broker means the controller missed the broker change
    (a stale or zombie controller, incident 3) or had no in-sync replica to elect. Clients
    sent to that leader fail with NOT_LEADER_OR_FOLLOWER or cannot connect. Judged only
    when the registered brokers were collected.

    Remediation: bring the named broker back, or force a controller failover (delete
    `/controller`) so a fresh controller re-elects leaders for the partitions of the dead
    broker; if no other replica is in sync, decide between waiting for the broker and an
    unclean election (`kafka-leader-election --election-type unclean`, loses data).

    Example: `/brokers/topics/ads.impressions/partitions/4/state` says leader 5, and
    `/brokers/ids` lists 1, 2, 3, 4.
    """
    zk = t.zk_state.where(F.col("leader") >= 0).select(
        "cluster_id", "topic", "partition", F.col("leader").alias("zk_leader"), F.col("isr").alias("zk_isr"),
        F.col("controller_epoch").alias("zk_controller_epoch"))
    zk = join(join(zk, registered_as(t, "zk_leader", "registered"), ["cluster_id", "zk_leader"], "left"),
              _broker_count(t), "cluster_id", "left")
    zk = zk.where(F.col("registered").isNull() & (F.coalesce(F.col("broker_count"), F.lit(0)) > 0))
    # The leader the brokers serve, from degraded_partitions rather than all partitions: a
    # partition ZooKeeper gives an unregistered leader is there whenever the brokers serve it
    # (leaderless when they serve that same leader, zk_diverged when another), so the few
    # partitions that fire never wait on a join of every partition of the fleet.
    served = t.derived("degraded_partitions", degraded_partitions).where(F.col("zk_leader") >= 0).select(
        *PARTITION_KEYS, F.col("leader").alias("served_leader")).distinct()
    d = join(zk, served, PARTITION_KEYS, "left")
    msg = text("ZooKeeper state names leader ", F.col("zk_leader"), " (ISR ", int_list(F.col("zk_isr")),
               "), which is not registered in /brokers/ids; the brokers serve leader ", F.col("served_leader"))
    evidence = ev(zookeeper_leader=F.col("zk_leader"), zookeeper_isr=F.col("zk_isr"),
                  zookeeper_controller_epoch=F.col("zk_controller_epoch"), served_leader=F.col("served_leader"))
    return emit(d, "partition", partition_name(), msg, evidence)


@rule("CTL004", "controller-epoch-anomaly", "error", needs=("controller", "zk_state"))
def controller_epoch_anomaly(t, p):
    """A partition state was written with a controller epoch greater than the current `/controller_epoch`: a write from a zombie controller.

    Why: every controller election increments `/controller_epoch`, and each partition
    state znode records the epoch of the controller that wrote it. An epoch above the
    current one cannot come from the legitimate controller: a controller that lost its
    session kept writing, or `/controller_epoch` was reset. Brokers before Kafka 2.1 do
    not fence ZooKeeper writes by controller epoch (KAFKA-6082), so a zombie controller
    can overwrite partition state; the message says when such brokers are present.

    Remediation: force a controller failover (delete `/controller`) so one controller
    reloads and rewrites the state, check for brokers with long GC pauses or expired
    ZooKeeper sessions, and upgrade brokers older than 2.1 (controller epoch fencing,
    KAFKA-6082).

    Example: `/brokers/topics/ads.impressions/partitions/4/state` has controller_epoch 42,
    `/controller_epoch` is 41, brokers run 2.0.1.
    """
    ctl = t.controller.where(F.col("controller_epoch").isNotNull()).select(
        "cluster_id", F.col("controller_epoch").alias("current_epoch"))
    zk = t.zk_state.select("cluster_id", "topic", "partition", F.col("controller_epoch").alias("state_epoch"),
                           F.col("leader").alias("zk_leader"))
    versions = t.brokers.select("cluster_id", "version").unionByName(
        t.clusters.select("cluster_id", F.col("kafka_version").alias("version")))
    old = (
        with_version_number(versions.where(F.col("version").isNotNull()), "version", "v")
        .where(F.col("v") < EPOCH_FENCING_SINCE)
        .groupBy("cluster_id").agg(F.sort_array(F.collect_set("version")).alias("unfenced_versions"))
    )
    d = join(join(zk, ctl, "cluster_id"), old, "cluster_id", "left").where(
        F.col("state_epoch") > F.col("current_epoch"))
    unfenced = F.col("unfenced_versions").isNotNull()
    msg = text("partition state written at controller epoch ", F.col("state_epoch"), ", but /controller_epoch is ",
               F.col("current_epoch"), ": a write from a zombie controller",
               F.when(unfenced, text("; brokers run ", F.array_join(F.col("unfenced_versions"), ", "),
                                     ", before 2.1 there is no controller epoch fencing (KAFKA-6082)")).otherwise(F.lit("")))
    evidence = ev(state_controller_epoch=F.col("state_epoch"), controller_epoch=F.col("current_epoch"),
                  zookeeper_leader=F.col("zk_leader"), epoch_fencing=~unfenced,
                  versions_without_fencing=F.col("unfenced_versions"))
    return emit(d, "partition", partition_name(), msg, evidence)


@rule("CTL005", "stuck-reassignment", "warning", needs=(("controller", "partitions"),),
      params=(Param("max_listed", 20, "how many moving partitions the finding lists by name (all are counted)"),))
def stuck_reassignment(t, p):
    """A partition reassignment is in progress: `/admin/reassign_partitions` exists or partitions carry adding/removing replicas.

    Why: a reassignment copies replicas to new brokers and then drops the old ones. While
    it runs, partitions carry extra replicas and replication traffic; one that never
    completes (a target broker down, a throttle left too low, a deleted topic) blocks
    every later reassignment and leaves partitions over-replicated. A snapshot cannot tell
    how long it has been running: compare with the previous snapshot or the start time.

    Remediation: inspect it with `kafka-reassign-partitions --bootstrap-server B --verify
    --reassignment-json-file plan.json` (which also removes throttles when done), check
    the target brokers and the replication throttle (leader/follower.replication.throttled.rate);
    cancel with `--cancel` (Kafka 2.4+, KIP-455). Before 2.4, a stuck
    `/admin/reassign_partitions` znode is removed by hand, then the controller is failed over.

    Example: `/admin/reassign_partitions` exists and `orders-3` has adding replicas [6] and
    removing replicas [1].
    """
    moving = t.partitions.where(
        (F.col("adding_replicas").isNotNull() & (F.size("adding_replicas") > 0))
        | (F.col("removing_replicas").isNotNull() & (F.size("removing_replicas") > 0))
    ).select("cluster_id", partition_name().alias("name"))
    w = Window.partitionBy("cluster_id").orderBy(F.col("name").asc())
    listed = (
        moving.withColumn("_rn", F.row_number().over(w))
        .withColumn("_n", F.count(F.lit(1)).over(Window.partitionBy("cluster_id")))
        .where(F.col("_rn") <= p["max_listed"])
        .groupBy("cluster_id")
        .agg(F.max("_n").alias("moving_count"), F.sort_array(F.collect_set("name")).alias("moving"))
    )
    pending = t.controller.groupBy("cluster_id").agg(
        F.max(F.coalesce(F.col("reassignment_pending"), F.lit(False)).cast("int")).alias("pending"))
    d = join(join(_clusters(t), pending, "cluster_id", "left"), listed, "cluster_id", "left")
    is_pending = F.coalesce(F.col("pending"), F.lit(0)) > 0
    count = F.coalesce(F.col("moving_count"), F.lit(0))
    d = d.where(is_pending | (count > 0))
    listing = F.when(count > 0, text(count, " partition(s) carry adding/removing replicas: ",
                                     F.array_join(F.col("moving"), ", "),
                                     F.when(count > p["max_listed"], F.lit(", ...")).otherwise(F.lit(""))))
    msg = F.when(is_pending & (count > 0), text("/admin/reassign_partitions exists; ", listing)).when(
        is_pending, F.lit("/admin/reassign_partitions exists: a reassignment is pending")).otherwise(
        text("a reassignment is in progress: ", listing))
    evidence = ev(reassignment_pending=is_pending, moving_partitions=count, partitions=F.col("moving"))
    return emit(d, "cluster", F.col("cluster"), msg, evidence)


@rule("CTL006", "kraft-quorum-size", "warning", needs=("controller",),
      params=(Param("min_voters", 3, "smallest acceptable number of KRaft controller voters"),))
def kraft_quorum_size(t, p):
    """The KRaft controller quorum has an even number of voters, or fewer than 3 (a parameter).

    Why: the quorum needs a majority of voters to elect a leader and commit metadata.
    One voter tolerates no failure (restarting it stops all metadata changes); two voters
    tolerate none either, since both are needed for a majority. An even count adds a
    machine without adding tolerance: 4 voters survive one failure, like 3. Three voters
    survive one failure, five survive two. The minimum is the rule parameter `min_voters`
    (default 3).

    Remediation: run 3 (or 5 for large clusters) dedicated controllers: set
    `controller.quorum.voters` (or `controller.quorum.bootstrap.servers` with dynamic
    quorums, Kafka 3.9+, KIP-853 `kafka-metadata-quorum add-controller`) on every node, and
    check with `kafka-metadata-quorum --bootstrap-server B describe --status`.

    Example: a KRaft cluster whose quorum has voters [1, 2].
    """
    kraft = F.lower(F.coalesce(F.col("mode"), F.col("manifest_mode"), F.lit(""))) == "kraft"
    d = join(t.controller.select("cluster_id", "mode", "voters", "controller_id"), _clusters(t), "cluster_id")
    size = F.size("voters")
    d = d.where(kraft & F.col("voters").isNotNull() & (size > 0) & (((size % 2) == 0) | (size < p["min_voters"])))
    why = F.when(size < p["min_voters"], text("fewer than ", str(p["min_voters"]))).otherwise(F.lit("an even number"))
    tolerated = F.floor((size - 1) / 2).cast("int")
    msg = text("the KRaft quorum has ", size.cast("string"), " voter(s) ", int_list(F.sort_array(F.col("voters"))),
               ", ", why, ": it survives only ", tolerated.cast("string"), " controller failure(s)")
    evidence = ev(voters=F.sort_array(F.col("voters")), voter_count=size, tolerated_failures=tolerated,
                  min_voters=F.lit(p["min_voters"]), controller_id=F.col("controller_id"))
    return emit(d, "cluster", F.col("cluster"), msg, evidence)
