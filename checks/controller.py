"""CTL: controller and metadata (ZooKeeper and KRaft)."""

from auditor.declarations import Category, Param, rule
from checks._api import F, Window, emit, ev, join, text
from checks.transforms import (
    broker_counts,
    cluster_brokers,
    controller_nodes,
    degraded_partitions,
    int_list,
    kraft_settings,
    metric_per_node,
    partition_name,
    registered_as,
    replica_lists,
    topic_settings,
    version_key,
    with_version_number,
)

CATEGORY = Category("CTL", "controller", "controller and metadata", tuple(range(1, 12)))

PARTITION_KEYS = ["cluster_id", "topic", "partition"]
# Kafka 2.1 added controller epoch fencing of ZooKeeper writes (KAFKA-6082).
EPOCH_FENCING_SINCE = 2_001_000


def _clusters(tables):
    """cluster_id, cluster (name for cluster-level resources), metadata_mode from the manifest."""
    return tables.clusters.select(
        "cluster_id",
        F.coalesce(F.col("cluster_name"), F.col("cluster_id")).alias("cluster"),
        F.col("metadata_mode").alias("manifest_mode"),
    )


def _broker_count(tables):
    return cluster_brokers(tables).select("cluster_id", "broker_count")


@rule(
    "CTL001",
    "no-active-controller",
    "critical",
    needs=(("controller", "partitions"),),
    uses=(broker_counts, replica_lists),
)
def no_active_controller(tables, params):
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
    the live brokers, and the new controller loads every partition's state from ZooKeeper:
    first check CTL002 and CTL003, since a partition whose ZooKeeper ISR holds no registered
    broker goes offline on that reload (PartitionStateMachine offlinePartitionLeaderElection,
    unclean election off) even while a broker serves it. KRaft: check the controller quorum with `kafka-metadata-quorum
    --bootstrap-server B describe --status`; a majority of `controller.quorum.voters` must
    be up and reachable. On KRaft the leader is read from DescribeQuorum (KIP-595), not
    from DescribeCluster, whose "controller" is an arbitrary broker there (KIP-590).

    Example: `/controller` holds `{"brokerid": 5}` while `/brokers/ids` lists 1, 2, 3, 4.

    References:
    - Kafka documentation: ZooKeeper broker node registry <https://kafka.apache.org/39/documentation.html#impl_zkbroker>
    - Kafka documentation: KRaft controllers <https://kafka.apache.org/39/documentation.html#kraft_voter>
    - KIP-595: A Raft Protocol for the Metadata Quorum <https://cwiki.apache.org/confluence/display/KAFKA/KIP-595%3A+A+Raft+Protocol+for+the+Metadata+Quorum>
    - KIP-590: Redirect Zookeeper Mutation Protocols to The Controller <https://cwiki.apache.org/confluence/display/KAFKA/KIP-590%3A+Redirect+Zookeeper+Mutation+Protocols+to+The+Controller>
    - Kafka 3.9 source: PartitionStateMachine.scala (initializePartitionState, offlinePartitionLeaderElection) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/controller/PartitionStateMachine.scala>
    """
    # On KRaft the controller is the quorum leader (DescribeQuorum, auditor/collectors/kraft.py), never
    # DescribeCluster's controller id (an arbitrary broker there): only rows of the cluster's own
    # metadata mode count (a ZooKeeper row left over from a migration does not).
    modes = _clusters(tables).select("cluster_id", F.lower(F.col("manifest_mode")).alias("_mode"))
    ctl = (
        join(tables.controller, modes, "cluster_id", "left")
        .where(
            F.col("_mode").isNull() | (F.lower(F.coalesce(F.col("mode"), F.col("_mode"))) == F.col("_mode"))
        )
        .select(
            "cluster_id", "mode", "controller_id", "controller_epoch", "voters", F.lit(True).alias("has_row")
        )
    )
    parts = (
        tables.derived(replica_lists).groupBy("cluster_id").agg(F.sum("partitions").alias("partition_count"))
    )
    d = join(
        join(
            join(
                join(_clusters(tables), ctl, "cluster_id", "left"),
                _broker_count(tables),
                "cluster_id",
                "left",
            ),
            parts,
            "cluster_id",
            "left",
        ),
        registered_as(tables, "controller_id", "registered"),
        ["cluster_id", "controller_id"],
        "left",
    )
    kraft = F.lower(F.coalesce(F.col("mode"), F.col("manifest_mode"), F.lit("zookeeper"))) == "kraft"
    has_voters = F.col("voters").isNotNull() & (F.size("voters") > 0)
    # No row on KRaft: the quorum was not read (a broker before 3.3 does not offer DescribeQuorum),
    # which says nothing about its leader; in ZooKeeper mode no /controller is a finding.
    no_row = (
        F.col("has_row").isNull()
        & (F.coalesce(F.col("partition_count"), F.lit(0)) > 0)
        & ~F.coalesce(F.lower(F.col("manifest_mode")) == "kraft", F.lit(False))
    )
    none = F.col("has_row").isNotNull() & (F.col("controller_id").isNull() | (F.col("controller_id") < 0))
    not_voter = (
        kraft
        & has_voters
        & (F.col("controller_id") >= 0)
        & ~F.array_contains(F.col("voters"), F.col("controller_id"))
    )
    not_broker = (
        ~kraft
        & (F.col("controller_id") >= 0)
        & F.col("registered").isNull()
        & (F.coalesce(F.col("broker_count"), F.lit(0)) > 0)
    )
    d = d.where(no_row | none | not_voter | not_broker)
    msg = (
        F.when(
            no_row,
            F.lit(
                "no controller recorded (no /controller znode, no quorum leader) while partitions are served"
            ),
        )
        .when(none & kraft, F.lit("the KRaft controller quorum has no leader"))
        .when(none, F.lit("no active controller: /controller is missing or names broker -1"))
        .when(
            not_voter,
            text(
                "quorum leader ",
                F.col("controller_id"),
                " is not among the voters ",
                int_list(F.sort_array(F.col("voters"))),
            ),
        )
        .otherwise(
            text(
                "/controller names broker ",
                F.col("controller_id"),
                ", which is not registered in /brokers/ids: a zombie controller",
            )
        )
    )
    evidence = ev(
        mode=F.when(kraft, F.lit("kraft")).otherwise(F.lit("zookeeper")),
        controller_id=F.col("controller_id"),
        controller_epoch=F.col("controller_epoch"),
        voters=F.col("voters"),
        controller_registered=F.when(~kraft, F.col("registered").isNotNull()),
    )
    return emit(d, "cluster", F.col("cluster"), msg, evidence)


def failover_outcome(tables, d):
    """What a controller failover does to each partition of ``d`` (cluster_id, topic, partition,
    zk_leader, zk_isr): a new ZooKeeper-mode controller loads every partition's state from ZooKeeper
    (KafkaController.onControllerFailover, initializeControllerContext), marks a partition whose
    leader is not a live broker OfflinePartition (PartitionStateMachine.initializePartitionState), and
    elects its leader with offlinePartitionLeaderElection: the first replica of the assignment that
    is live and in ZooKeeper's ISR, else, only with unclean.leader.election.enable on for the topic,
    the first live replica, else none: the partition stays offline, and the metadata every broker is
    sent names the dead leader (clients get LEADER_NOT_AVAILABLE).

    Adds: zk_isr_live (ZooKeeper's ISR members that are registered brokers, sorted), failover
    ("keeps" ZooKeeper's live leader, "elects" a live ISR member, "unclean" an out-of-sync live
    replica, "offline"; null when no broker registrations were collected) and failover_leader (the
    leader it ends with; null when offline)."""
    keys = PARTITION_KEYS
    live = tables.brokers.groupBy("cluster_id").agg(F.collect_set("broker_id").alias("_live"))
    unclean = tables.derived(topic_settings).select(
        "cluster_id",
        "topic",
        F.coalesce(F.col("unclean_leader_election_enable"), F.lit(False)).alias("_unclean"),
    )
    assignment = tables.partitions.select(*keys, F.col("replicas").alias("_assignment"))
    base = join(
        join(join(d, assignment, keys, "left"), unclean, ["cluster_id", "topic"], "left"),
        live,
        "cluster_id",
        "left",
    )
    # The assignment's live replicas, by position; whether each is in ZooKeeper's ISR.
    cand = base.select(*keys, "zk_isr", "_live", "_assignment", F.explode("_assignment").alias("_c"))
    cand = (
        cand.where(F.array_contains(F.col("_live"), F.col("_c")))
        .select(
            *keys,
            F.array_position(F.col("_assignment"), F.col("_c")).alias("_pos"),
            F.coalesce(F.array_contains(F.col("zk_isr"), F.col("_c")), F.lit(False)).alias("_in_isr"),
            "_c",
        )
        .groupBy(*keys)
        .agg(
            F.min(F.when(F.col("_in_isr"), F.col("_pos"))).alias("_isr_pos"),
            F.min("_pos").alias("_any_pos"),
            F.sort_array(F.collect_set(F.when(F.col("_in_isr"), F.col("_c")))).alias("_isr_live"),
        )
    )
    d = join(base, cand, keys, "left")
    zk_leader_live = F.coalesce(F.array_contains(F.col("_live"), F.col("zk_leader")), F.lit(False)) & (
        F.col("zk_leader") >= 0
    )
    outcome = (
        F.when(F.col("_live").isNull(), F.lit(None).cast("string"))
        .when(zk_leader_live, F.lit("keeps"))
        .when(F.col("_isr_pos").isNotNull(), F.lit("elects"))
        .when(F.col("_unclean") & F.col("_any_pos").isNotNull(), F.lit("unclean"))
        .otherwise(F.lit("offline"))
    )
    leader = (
        F.when(zk_leader_live, F.col("zk_leader"))
        .when(
            F.col("_isr_pos").isNotNull(), F.element_at(F.col("_assignment"), F.col("_isr_pos").cast("int"))
        )
        .when(
            F.col("_unclean") & F.col("_any_pos").isNotNull(),
            F.element_at(F.col("_assignment"), F.col("_any_pos").cast("int")),
        )
    )
    return d.select(
        *[c for c in d.columns if not c.startswith("_")],
        F.coalesce(
            F.filter(F.col("_isr_live"), lambda x: x.isNotNull()),
            F.filter(F.array(F.lit(-1)), lambda x: x >= 0),  # no live replica: an empty list, not null
        ).alias("zk_isr_live"),
        outcome.alias("failover"),
        leader.alias("failover_leader"),
    )


def failover_consequence():
    """What a controller failover would do, as a phrase (after "a controller failover now"), from
    failover_outcome's columns and the leader the brokers serve (``leader``)."""
    zk_isr = int_list(F.sort_array(F.col("zk_isr")))
    return (
        F.when(
            F.col("failover") == "offline",
            text(
                "takes the partition offline: the new controller loads leader ",
                F.col("zk_leader"),
                " and ISR ",
                zk_isr,
                " from ZooKeeper, none of whose ISR is a registered broker, and with unclean leader election "
                "off elects no one (PartitionStateMachine initializePartitionState, offlinePartitionLeaderElection); "
                "the metadata it sends every broker names the dead leader, so clients get LEADER_NOT_AVAILABLE",
                F.when(
                    F.col("leader") >= 0, text(" and broker ", F.col("leader"), " stops serving it")
                ).otherwise(F.lit("")),
            ),
        )
        .when(
            F.col("failover") == "unclean",
            text(
                "elects broker ",
                F.col("failover_leader"),
                ", an out-of-sync replica (unclean.leader.election.enable is on and ZooKeeper's ISR ",
                zk_isr,
                " has no registered broker): acknowledged writes are lost",
            ),
        )
        .when(
            (F.col("failover_leader") != F.col("leader")) & (F.col("leader") >= 0),
            text(
                "makes broker ",
                F.col("failover_leader"),
                " the leader (from ZooKeeper's ISR ",
                zk_isr,
                ") instead of broker ",
                F.col("leader"),
                ", which serves it now: what broker ",
                F.col("leader"),
                " accepted that broker ",
                F.col("failover_leader"),
                " lacks is truncated",
            ),
        )
        .otherwise(text("keeps broker ", F.col("failover_leader"), " as the leader"))
    )


def state_znode_command(leader_col, isr_col, leader_epoch_col, controller_epoch_col):
    """The zookeeper-shell line that writes a partition's state znode (ZkData TopicPartitionStateZNode,
    version 1) as given: the step that makes ZooKeeper hold what the brokers serve."""
    return text(
        "`zookeeper-shell ZK set /brokers/topics/",
        F.col("topic"),
        "/partitions/",
        F.col("partition"),
        '/state \'{"controller_epoch":',
        controller_epoch_col,
        ',"leader":',
        leader_col,
        ',"version":1,"leader_epoch":',
        leader_epoch_col,
        ',"isr":',
        int_list(F.sort_array(isr_col)),
        "}'`",
    )


@rule(
    "CTL002",
    "partition-state-divergence",
    "critical",
    needs=("partitions", "zk_state"),
    uses=(degraded_partitions, topic_settings),
)
def partition_state_divergence(tables, params):
    """The leader or ISR that ZooKeeper holds for a partition differs from what the brokers serve in metadata.

    Why: in ZooKeeper mode the controller writes each partition's leader and ISR to
    `/brokers/topics/T/partitions/P/state` (with its own controller epoch) and then pushes the same
    state to the brokers (LeaderAndIsr, UpdateMetadata). When the leaders disagree, some controller
    acted on a stale view: after a session expiry two brokers may both believe they are controller
    (a split-brain), and clients, brokers and the real controller then act on different leaders
    (one such split-brain left a `__consumer_offsets` partition at leader -1 and stopped the consumer
    groups mapped to it). Which view is stale is decided by controller epochs first: the brokers
    follow the current controller (they refuse requests of an older controller epoch), and a
    controller that changes a leader writes the znode at its own epoch, so a znode whose controller
    epoch is not the current `/controller_epoch` was not written by the current controller: a write
    from another controller's timeline (a zombie; before Kafka 2.1 ZooKeeper writes were not fenced
    by controller epoch, KAFKA-6082; CTL004 names an epoch above the current one). Then ZooKeeper's
    is the stale view. When the znode was written at the current epoch (or the epochs are unknown),
    the leader epochs decide: every election bumps it (LeaderAndIsr), so the lower one is the stale
    view. Critical when the stale view is known; a different leader at the same (or an unknown)
    leader epoch is an error (snapshot again); an ISR-only difference (same leader) is what an ISR
    shrink or expand looks like between the znode write and the metadata update (the leader itself
    writes ISR changes, keeping the controller epoch it was elected at): a warning that matters only
    when it persists.

    Remediation: the usual fix, a controller failover (delete `/controller` or restart the active
    controller), makes a new controller reload every partition from ZooKeeper. That is right only
    when ZooKeeper holds the live state. Each finding says what a failover would do to its partition
    (the same decision Kafka makes: a live ZooKeeper leader stays; else the first live replica of
    ZooKeeper's ISR; else, with unclean election on, any live replica; else none, and the partition
    goes offline) and gives the order of steps that keeps it served. ZooKeeper stale: never fail the
    controller over first: rewrite the state znode to what the brokers serve (leader, ISR, a leader
    epoch above both views, the current controller epoch: the finding gives the `zookeeper-shell set`
    line), check it with `get`, then fail the controller over so one controller reloads it, and
    check `kafka-topics --describe --unavailable-partitions`. Brokers stale, ZooKeeper's ISR holding
    a registered broker: a failover makes the controller resend ZooKeeper's state. Brokers stale and
    no registered broker in ZooKeeper's ISR: a failover takes the partition offline; bring a broker of
    that ISR back first (once registered the controller can elect it), or decide on an unclean
    election (`kafka-leader-election --election-type unclean`, loses data). Snapshot again first in
    every case: a divergence seen once can be a race with an ongoing election.

    Example: `ads.impressions-4`: ZooKeeper says leader 5 (not registered) with ISR [5] at controller
    epoch 42, `/controller_epoch` is 41, the brokers serve leader 4 with ISR [1, 4]: ZooKeeper's
    view is stale (a write from another controller's timeline), and a failover now would take the
    partition offline, so the finding gives the znode write first. Leader 1 in both with ISR
    [1, 2] against [1, 2, 3] is a warning.

    References:
    - Kafka documentation: ZooKeeper broker topic registry (partition state znode) <https://kafka.apache.org/39/documentation.html#impl_zktopic>
    - Kafka 3.9 source: ZkData.scala (TopicPartitionStateZNode: version, leader, leader_epoch, controller_epoch, isr) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/zk/ZkData.scala>
    - Kafka 3.9 source: LeaderAndIsr.java (each new leader bumps the leader epoch) <https://github.com/apache/kafka/blob/3.9/metadata/src/main/java/org/apache/kafka/metadata/LeaderAndIsr.java>
    - KAFKA-6082: consider fencing zookeeper updates with controller epoch zkVersion <https://issues.apache.org/jira/browse/KAFKA-6082>
    - Kafka 3.9 source: PartitionStateMachine.scala (initializePartitionState: a leader that is not live is OfflinePartition; triggerOnlinePartitionStateChange, offlinePartitionLeaderElection: the first live replica in the ISR, else unclean only if enabled for the topic) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/controller/PartitionStateMachine.scala>
    - Kafka 3.9 source: KafkaController.scala (onControllerFailover: initializeControllerContext from ZooKeeper, then UpdateMetadata to every broker) and ZkMetadataCache.scala (a leader that is not alive: LEADER_NOT_AVAILABLE, leader -1) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/controller/KafkaController.scala>
    """
    # degraded_partitions joins the brokers' view with ZooKeeper's once, for PAR001 too.
    current = (
        tables.controller.where(
            (F.lower(F.coalesce(F.col("mode"), F.lit("zookeeper"))) == "zookeeper")
            & F.col("controller_epoch").isNotNull()
        )
        .groupBy("cluster_id")
        .agg(F.max("controller_epoch").alias("current_epoch"), F.max("controller_id").alias("controller_id"))
    )
    d = join(tables.derived(degraded_partitions).where(F.col("zk_diverged")), current, "cluster_id", "left")
    d = failover_outcome(tables, d)
    isr, zk_isr = int_list(F.sort_array(F.col("isr"))), int_list(F.sort_array(F.col("zk_isr")))
    leader_differs = F.coalesce(F.col("leader"), F.lit(-2)) != F.coalesce(F.col("zk_leader"), F.lit(-2))
    foreign = leader_differs & F.coalesce(
        F.col("zk_controller_epoch") != F.col("current_epoch"), F.lit(False)
    )
    epochs_differ = F.coalesce(F.col("leader_epoch") != F.col("zk_leader_epoch"), F.lit(False))
    stale = F.when(foreign, F.lit("zookeeper")).when(
        leader_differs & epochs_differ,
        F.when(F.col("zk_leader_epoch") < F.col("leader_epoch"), F.lit("zookeeper")).otherwise(
            F.lit("brokers")
        ),
    )
    stale_by = F.when(foreign, F.lit("controller_epoch")).when(stale.isNotNull(), F.lit("leader_epoch"))
    d = d.select(
        "*", leader_differs.alias("leader_differs"), stale.alias("stale"), stale_by.alias("stale_by")
    )
    new_epoch = (
        F.greatest(
            F.coalesce(F.col("leader_epoch"), F.lit(0)), F.coalesce(F.col("zk_leader_epoch"), F.lit(0))
        )
        + 1
    )
    controller = F.coalesce(F.col("controller_id").cast("string"), F.lit("?"))
    failover_ok = F.col("failover").isin("keeps", "elects") & (F.col("failover_leader") == F.col("leader"))
    failover_now = text(
        "a controller failover now (deleting /controller or restarting controller ", controller, ") "
    )
    verdict = (
        F.when(
            F.col("stale") == "zookeeper",
            text(
                ": ZooKeeper's state is the stale view (",
                F.when(
                    F.col("stale_by") == "controller_epoch",
                    text(
                        "written at controller epoch ",
                        F.col("zk_controller_epoch"),
                        ", not by the current controller: /controller_epoch is ",
                        F.col("current_epoch"),
                        "; a write from another controller's timeline, which the brokers, following the current "
                        "controller, never applied",
                    ),
                ).otherwise(F.lit("lower leader epoch: a controller acted on a stale view")),
                "). Do not fail the controller over first: ",
                failover_now,
                failover_consequence(),
                ". Safe order: 1. make ZooKeeper hold what the brokers serve: ",
                state_znode_command(
                    F.col("leader"),
                    F.col("isr"),
                    new_epoch,
                    F.coalesce(F.col("current_epoch"), F.col("zk_controller_epoch")),
                ),
                " (leader ",
                F.col("leader"),
                ", ISR ",
                isr,
                ", a leader epoch above both views, the current controller epoch), and check it with `get`; "
                "2. then fail the controller over so that one controller reloads it; 3. check "
                "`kafka-topics --describe --unavailable-partitions` prints nothing",
            ),
        )
        .when(
            F.col("stale") == "brokers",
            text(
                ": the brokers serve a stale leader (lower leader epoch, ZooKeeper written by the current "
                "controller): they missed its update. ",
                F.when(
                    F.col("failover") == "offline",
                    text(
                        "But ",
                        failover_now,
                        failover_consequence(),
                        ". First bring back a broker of ZooKeeper's ISR ",
                        zk_isr,
                        " (once registered the controller can elect it), or, if none can return, decide on an "
                        "unclean election (`kafka-leader-election --election-type unclean`, loses data); fail the "
                        "controller over only then",
                    ),
                )
                .when(
                    F.col("failover").isNotNull(),
                    text(
                        "Snapshot again; if it persists, ",
                        failover_now,
                        failover_consequence(),
                        " and resends that state to every broker",
                    ),
                )
                .otherwise(
                    F.lit("Snapshot again; no broker registrations were collected to judge a failover")
                ),
            ),
        )
        .when(
            F.col("leader_differs"),
            text(
                ": the leaders differ and the epochs do not tell which view is stale; snapshot again. Before any "
                "controller failover: it ",
                F.when(F.col("failover").isNotNull(), failover_consequence()).otherwise(
                    F.lit("cannot be judged (no broker registrations collected)")
                ),
                F.when(
                    ~failover_ok, F.lit(", so make ZooKeeper hold the leader the brokers serve first")
                ).otherwise(F.lit("")),
            ),
        )
        .otherwise(
            F.lit(
                ": only the ISR differs (same leader), as between an ISR change and the metadata update; "
                "it matters if it persists"
            )
        )
    )
    msg = text(
        "ZooKeeper state says leader ",
        F.col("zk_leader"),
        " ISR ",
        zk_isr,
        " (leader epoch ",
        F.col("zk_leader_epoch"),
        ", controller epoch ",
        F.col("zk_controller_epoch"),
        "), the brokers serve leader ",
        F.col("leader"),
        " ISR ",
        isr,
        " (leader epoch ",
        F.col("leader_epoch"),
        ")",
        verdict,
    )
    evidence = ev(
        leader=F.col("leader"),
        isr=F.sort_array(F.col("isr")),
        leader_epoch=F.col("leader_epoch"),
        zookeeper_leader=F.col("zk_leader"),
        zookeeper_isr=F.sort_array(F.col("zk_isr")),
        zookeeper_leader_epoch=F.col("zk_leader_epoch"),
        zookeeper_controller_epoch=F.col("zk_controller_epoch"),
        controller_epoch=F.col("current_epoch"),
        leader_differs=F.col("leader_differs"),
        stale_view=F.col("stale"),
        stale_by=F.col("stale_by"),
        zookeeper_isr_registered=F.col("zk_isr_live"),
        failover=F.when(F.col("leader_differs"), F.col("failover")),
        failover_leader=F.when(F.col("leader_differs"), F.col("failover_leader")),
    )
    severity = (
        F.when(F.col("stale").isNotNull(), F.lit("critical"))
        .when(F.col("leader_differs"), F.lit("error"))
        .otherwise(F.lit("warning"))
    )
    return emit(d, "partition", partition_name(), msg, evidence, severity)


@rule(
    "CTL003",
    "leader-not-registered",
    "critical",
    needs=("zk_state", "brokers"),
    uses=(broker_counts, degraded_partitions, topic_settings),
)
def leader_not_registered(tables, params):
    """ZooKeeper's partition state names a leader that is not a registered broker, and no re-election happened.

    Why: when a broker's ZooKeeper session ends, the controller must move leadership of
    its partitions to another in-sync replica and rewrite their state znodes. A state
    that still names the departed broker means the controller missed the broker change
    (a stale or zombie controller, as in a split-brain that left a `__consumer_offsets`
    partition at leader -1 and stopped its consumer groups) or had no in-sync replica to
    elect. Clients
    sent to that leader fail with NOT_LEADER_OR_FOLLOWER or cannot connect. Judged only
    when the registered brokers were collected.

    Remediation: bring the named broker back, or fail the controller over (delete `/controller`)
    so a fresh controller re-elects leaders for the partitions of the dead broker, but only where
    ZooKeeper's ISR holds a registered broker: the new controller elects the first live replica of
    ZooKeeper's ISR (PartitionStateMachine offlinePartitionLeaderElection), and with none, and
    unclean election off, the partition goes offline, even while the brokers still serve another
    leader. The finding says which: where the failover would take a served partition offline, make
    ZooKeeper hold the state the brokers serve first (CTL002 gives the znode write), or bring a
    broker of ZooKeeper's ISR back; decide on an unclean election (`kafka-leader-election
    --election-type unclean`, loses data) only when no in-sync replica can come back.

    Example: `/brokers/topics/ads.impressions/partitions/4/state` says leader 5, and
    `/brokers/ids` lists 1, 2, 3, 4.

    References:
    - Kafka documentation: ZooKeeper broker node registry <https://kafka.apache.org/39/documentation.html#impl_zkbroker>
    - Kafka documentation: ZooKeeper broker topic registry (partition state znode) <https://kafka.apache.org/39/documentation.html#impl_zktopic>
    - Kafka 3.9 source: PartitionStateMachine.scala (initializePartitionState, offlinePartitionLeaderElection) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/controller/PartitionStateMachine.scala>
    """
    zk = tables.zk_state.where(F.col("leader") >= 0).select(
        "cluster_id",
        "topic",
        "partition",
        F.col("leader").alias("zk_leader"),
        F.col("isr").alias("zk_isr"),
        F.col("controller_epoch").alias("zk_controller_epoch"),
    )
    zk = join(
        join(zk, registered_as(tables, "zk_leader", "registered"), ["cluster_id", "zk_leader"], "left"),
        _broker_count(tables),
        "cluster_id",
        "left",
    )
    zk = zk.where(F.col("registered").isNull() & (F.coalesce(F.col("broker_count"), F.lit(0)) > 0))
    # The leader the brokers serve, from degraded_partitions rather than all partitions: a
    # partition ZooKeeper gives an unregistered leader is there whenever the brokers serve it
    # (leaderless when they serve that same leader, zk_diverged when another), so the few
    # partitions that fire never wait on a join of every partition of the fleet.
    served = (
        tables.derived(degraded_partitions)
        .where(F.col("zk_leader") >= 0)
        .select(*PARTITION_KEYS, F.col("leader").alias("served_leader"))
        .distinct()
    )
    d = failover_outcome(tables, join(zk, served, PARTITION_KEYS, "left"))
    d = d.withColumn("leader", F.coalesce(F.col("served_leader"), F.lit(-1)))
    msg = text(
        "ZooKeeper state names leader ",
        F.col("zk_leader"),
        " (ISR ",
        int_list(F.col("zk_isr")),
        "), which is not registered in /brokers/ids; the brokers serve leader ",
        F.col("served_leader"),
        "; a controller failover now ",
        failover_consequence(),
        F.when(
            (F.col("failover") == "offline") & (F.col("served_leader") >= 0),
            F.lit(": make ZooKeeper hold the state the brokers serve first (CTL002), then fail over"),
        )
        .when(
            F.col("failover") == "offline",
            F.lit(": bring a broker of ZooKeeper's ISR back first (an unclean election loses data)"),
        )
        .otherwise(F.lit("")),
    )
    evidence = ev(
        zookeeper_leader=F.col("zk_leader"),
        zookeeper_isr=F.col("zk_isr"),
        zookeeper_controller_epoch=F.col("zk_controller_epoch"),
        served_leader=F.col("served_leader"),
        zookeeper_isr_registered=F.col("zk_isr_live"),
        failover=F.col("failover"),
        failover_leader=F.col("failover_leader"),
    )
    return emit(d, "partition", partition_name(), msg, evidence)


@rule("CTL004", "controller-epoch-anomaly", "error", needs=("controller", "zk_state"), uses=(topic_settings,))
def controller_epoch_anomaly(tables, params):
    """A partition state was written with a controller epoch greater than the current `/controller_epoch`: a write from a zombie controller.

    Why: every controller election increments `/controller_epoch`, and each partition
    state znode records the epoch of the controller that wrote it. An epoch above the
    current one cannot come from the legitimate controller: a controller that lost its
    session kept writing, or `/controller_epoch` was reset. Brokers before Kafka 2.1 do
    not fence ZooKeeper writes by controller epoch (KAFKA-6082), so a zombie controller
    can overwrite partition state; the message says when such brokers are present.

    Remediation: the state in that znode is not the current controller's: a controller failover
    (delete `/controller`) would make a new controller load it as the truth
    (KafkaController.onControllerFailover reads every partition's state from ZooKeeper). Where the
    brokers serve another leader, make the znode hold what they serve first (CTL002 gives the
    `zookeeper-shell set` line); the finding says what a failover would do now (where ZooKeeper's
    ISR holds no registered broker: the partition goes offline, PartitionStateMachine
    offlinePartitionLeaderElection). Then fail the controller over, check for brokers with long GC
    pauses or expired ZooKeeper sessions, and upgrade brokers older than 2.1 (controller epoch
    fencing, KAFKA-6082).

    Example: `/brokers/topics/ads.impressions/partitions/4/state` has controller_epoch 42,
    `/controller_epoch` is 41, brokers run 2.0.1.

    References:
    - KAFKA-6082: consider fencing zookeeper updates with controller epoch zkVersion <https://issues.apache.org/jira/browse/KAFKA-6082>
    - Kafka 3.9 source: ZkData.scala (ZooKeeper znode layout) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/zk/ZkData.scala>
    - Kafka 3.9 source: PartitionStateMachine.scala (initializePartitionState, offlinePartitionLeaderElection) <https://github.com/apache/kafka/blob/3.9/core/src/main/scala/kafka/controller/PartitionStateMachine.scala>
    """
    ctl = tables.controller.where(F.col("controller_epoch").isNotNull()).select(
        "cluster_id", F.col("controller_epoch").alias("current_epoch")
    )
    zk = tables.zk_state.select(
        "cluster_id",
        "topic",
        "partition",
        F.col("controller_epoch").alias("state_epoch"),
        F.col("leader").alias("zk_leader"),
        F.col("isr").alias("zk_isr"),
    )
    versions = tables.brokers.select("cluster_id", "version").unionByName(
        tables.clusters.select("cluster_id", F.col("kafka_version").alias("version"))
    )
    old = (
        with_version_number(versions.where(F.col("version").isNotNull()), "version", "v")
        .where(F.col("v") < EPOCH_FENCING_SINCE)
        .groupBy("cluster_id")
        .agg(F.sort_array(F.collect_set("version")).alias("unfenced_versions"))
    )
    d = join(join(zk, ctl, "cluster_id"), old, "cluster_id", "left").where(
        F.col("state_epoch") > F.col("current_epoch")
    )
    served = tables.partitions.select(*PARTITION_KEYS, F.col("leader").alias("served_leader"))
    d = failover_outcome(tables, join(d, served, PARTITION_KEYS, "left"))
    d = d.withColumn("leader", F.coalesce(F.col("served_leader"), F.lit(-1)))
    unfenced = F.col("unfenced_versions").isNotNull()
    diverged = F.coalesce(F.col("served_leader") != F.col("zk_leader"), F.lit(False))
    msg = text(
        "partition state written at controller epoch ",
        F.col("state_epoch"),
        ", but /controller_epoch is ",
        F.col("current_epoch"),
        ": a write from a zombie controller",
        F.when(
            unfenced,
            text(
                "; brokers run ",
                F.array_join(F.col("unfenced_versions"), ", "),
                ", before 2.1 there is no controller epoch fencing (KAFKA-6082)",
            ),
        ).otherwise(F.lit("")),
        F.when(
            F.col("failover").isNotNull(),
            text(
                "; a controller failover now would load it: it ",
                failover_consequence(),
                F.when(
                    diverged,
                    text(
                        " (the brokers serve leader ",
                        F.col("served_leader"),
                        "): make ZooKeeper hold what they serve first (CTL002)",
                    ),
                ).otherwise(F.lit("")),
            ),
        ).otherwise(F.lit("")),
    )
    evidence = ev(
        state_controller_epoch=F.col("state_epoch"),
        controller_epoch=F.col("current_epoch"),
        zookeeper_leader=F.col("zk_leader"),
        served_leader=F.col("served_leader"),
        epoch_fencing=~unfenced,
        versions_without_fencing=F.col("unfenced_versions"),
        failover=F.col("failover"),
        failover_leader=F.col("failover_leader"),
    )
    return emit(d, "partition", partition_name(), msg, evidence)


@rule(
    "CTL005",
    "stuck-reassignment",
    "warning",
    needs=(("controller", "partitions"),),
    params=(
        Param("max_listed", 20, "how many moving partitions the finding lists by name (all are counted)"),
    ),
)
def stuck_reassignment(tables, params):
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

    References:
    - KIP-455: Create an Administrative API for Replica Reassignment <https://cwiki.apache.org/confluence/display/KAFKA/KIP-455%3A+Create+an+Administrative+API+for+Replica+Reassignment>
    - Kafka documentation: custom partition assignment and migration <https://kafka.apache.org/39/documentation.html#basic_ops_partitionassignment>
    """
    moving = tables.partitions.where(
        (F.col("adding_replicas").isNotNull() & (F.size("adding_replicas") > 0))
        | (F.col("removing_replicas").isNotNull() & (F.size("removing_replicas") > 0))
    ).select("cluster_id", partition_name().alias("name"))
    w = Window.partitionBy("cluster_id").orderBy(F.col("name").asc())
    listed = (
        moving.withColumn("_rn", F.row_number().over(w))
        .withColumn("_n", F.count(F.lit(1)).over(Window.partitionBy("cluster_id")))
        .where(F.col("_rn") <= params["max_listed"])
        .groupBy("cluster_id")
        .agg(F.max("_n").alias("moving_count"), F.sort_array(F.collect_set("name")).alias("moving"))
    )
    pending = tables.controller.groupBy("cluster_id").agg(
        F.max(F.coalesce(F.col("reassignment_pending"), F.lit(False)).cast("int")).alias("pending")
    )
    d = join(join(_clusters(tables), pending, "cluster_id", "left"), listed, "cluster_id", "left")
    is_pending = F.coalesce(F.col("pending"), F.lit(0)) > 0
    count = F.coalesce(F.col("moving_count"), F.lit(0))
    d = d.where(is_pending | (count > 0))
    listing = F.when(
        count > 0,
        text(
            count,
            " partition(s) carry adding/removing replicas: ",
            F.array_join(F.col("moving"), ", "),
            F.when(count > params["max_listed"], F.lit(", ...")).otherwise(F.lit("")),
        ),
    )
    msg = (
        F.when(is_pending & (count > 0), text("/admin/reassign_partitions exists; ", listing))
        .when(is_pending, F.lit("/admin/reassign_partitions exists: a reassignment is pending"))
        .otherwise(text("a reassignment is in progress: ", listing))
    )
    evidence = ev(reassignment_pending=is_pending, moving_partitions=count, partitions=F.col("moving"))
    return emit(d, "cluster", F.col("cluster"), msg, evidence)


@rule(
    "CTL006",
    "kraft-quorum-size",
    "warning",
    needs=("controller",),
    params=(Param("min_voters", 3, "smallest acceptable number of KRaft controller voters"),),
)
def kraft_quorum_size(tables, params):
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

    References:
    - Kafka documentation: KRaft controllers (3 or 5; a majority must be alive) <https://kafka.apache.org/39/documentation.html#kraft_voter>
    - KIP-595: A Raft Protocol for the Metadata Quorum <https://cwiki.apache.org/confluence/display/KAFKA/KIP-595%3A+A+Raft+Protocol+for+the+Metadata+Quorum>
    """
    kraft = F.lower(F.coalesce(F.col("mode"), F.col("manifest_mode"), F.lit(""))) == "kraft"
    d = join(
        tables.controller.select("cluster_id", "mode", "voters", "controller_id"),
        _clusters(tables),
        "cluster_id",
    )
    size = F.size("voters")
    d = d.where(
        kraft & F.col("voters").isNotNull() & (size > 0) & (((size % 2) == 0) | (size < params["min_voters"]))
    )
    why = F.when(size < params["min_voters"], text("fewer than ", str(params["min_voters"]))).otherwise(
        F.lit("an even number")
    )
    tolerated = F.floor((size - 1) / 2).cast("int")
    msg = text(
        "the KRaft quorum has ",
        size.cast("string"),
        " voter(s) ",
        int_list(F.sort_array(F.col("voters"))),
        ", ",
        why,
        ": it survives only ",
        tolerated.cast("string"),
        " controller failure(s)",
    )
    evidence = ev(
        voters=F.sort_array(F.col("voters")),
        voter_count=size,
        tolerated_failures=tolerated,
        min_voters=F.lit(params["min_voters"]),
        controller_id=F.col("controller_id"),
    )
    return emit(d, "cluster", F.col("cluster"), msg, evidence)


# --- KRaft (auditor/collectors/kraft.py, the kraft_nodes rows of properties files) -------------------

# metadata.version level 17 (3.7-IV2) adds JBOD to KRaft (KIP-858): DSK003 reads it too.
MV_JBOD_LEVEL = 17


def _features(tables):
    """Per cluster whose features were read: mv_level / mv_name (finalized metadata.version) and
    kraft_level (finalized kraft.version; 0 when not listed: a feature at level 0 is not
    finalized, KIP-1022)."""
    f = tables.features
    return f.groupBy("cluster_id").agg(
        F.max(F.when(F.col("feature") == "metadata.version", F.col("finalized_level"))).alias("mv_level"),
        F.max(F.when(F.col("feature") == "metadata.version", F.col("version_name"))).alias("mv_name"),
        F.coalesce(
            F.max(F.when(F.col("feature") == "kraft.version", F.col("finalized_level"))), F.lit(0)
        ).alias("kraft_level"),
    )


@rule(
    "CTL007",
    "kraft-combined-mode",
    "warning",
    needs=(("kraft_nodes", "configs", "quorum"),),
    params=(
        Param(
            "production_environments",
            "prod,production",
            "comma-separated environment labels (case-insensitive) that mark a production cluster",
        ),
    ),
    uses=(controller_nodes,),
)
def kraft_combined_mode(tables, params):
    """KRaft controllers run in combined mode, on the same nodes as brokers (`process.roles=broker,controller`), in a production cluster.

    Why: a combined node runs the controller quorum and a broker in one JVM. Broker load
    (a connection surge, a GC pause, a full disk, a partition reassignment) then delays the
    controller's fetches and heartbeats, and restarting the broker for a patch also restarts
    a voter: a rolling restart takes a quorum member down with every broker. Apache Kafka
    documents combined mode as not recommended for critical deployments (KIP-500, KIP-595
    quorum; the operations guide's "Deploying Considerations"): controllers cannot be
    rolled, scaled or isolated independently of brokers. Production is the cluster's
    environment label, among the parameter `production_environments` (default prod,
    production). A combined node is one whose process.roles lists both roles (its properties
    file or DescribeConfigs), or a quorum voter that is also a registered broker (node ids
    are unique across a KRaft cluster).

    Remediation: run 3 (or 5) dedicated controllers (`process.roles=controller`) and move
    the brokers to `process.roles=broker`. Kafka cannot change a node's roles in place: add
    dedicated controllers (a dynamic quorum, Kafka 3.9+, KIP-853: `kafka-metadata-quorum
    add-controller`, then `remove-controller` for the combined ones), or build a new
    quorum and migrate. Check with `kafka-metadata-quorum --bootstrap-server B describe --status`.

    Example: the cluster `payments` (environment prod) whose nodes 1, 2 and 3 have
    `process.roles=broker,controller`.

    References:
    - Kafka documentation: KRaft deploying considerations (no combined mode in critical deployments) <https://kafka.apache.org/39/documentation.html#kraft_deployment>
    - Kafka documentation: KRaft process roles <https://kafka.apache.org/39/documentation.html#kraft_role>
    """
    prod = [e.strip().lower() for e in str(params["production_environments"]).split(",") if e.strip()]
    nodes = (
        tables.derived(controller_nodes)
        .where(F.col("combined"))
        .groupBy("cluster_id")
        .agg(F.sort_array(F.collect_set("node_id")).alias("nodes"))
    )
    clusters = tables.clusters.select(
        "cluster_id",
        F.coalesce(F.col("cluster_name"), F.col("cluster_id")).alias("cluster"),
        F.lower(F.trim(F.col("environment"))).alias("env"),
    )
    d = join(
        clusters.where(F.col("env").isin(*prod)) if prod else clusters.where(F.lit(False)),
        nodes,
        "cluster_id",
    )
    msg = text(
        "KRaft controllers run combined with brokers (process.roles=broker,controller) on node(s) ",
        int_list(F.col("nodes")),
        " of a production cluster (environment ",
        F.col("env"),
        "): broker load and every broker restart also hit the controller quorum",
    )
    return emit(
        d, "cluster", F.col("cluster"), msg, ev(combined_nodes=F.col("nodes"), environment=F.col("env"))
    )


@rule(
    "CTL008",
    "kraft-version-mismatch",
    "warning",
    needs=("features", ("kraft_nodes", "configs")),
    uses=(kraft_settings,),
)
def kraft_version_mismatch(tables, params):
    """The KRaft quorum's finalized `kraft.version` does not match how a node is configured to find it: a static quorum (`kraft.version` 0) with `controller.quorum.bootstrap.servers`, or a dynamic one with `controller.quorum.voters`.

    Why: Kafka 3.9 added dynamic quorums (KIP-853): with `kraft.version` 1 the voter set is
    stored in the metadata log and changed with `kafka-metadata-quorum add-controller` /
    `remove-controller`; nodes discover it through `controller.quorum.bootstrap.servers`.
    A static quorum (`kraft.version` 0, every cluster formatted before 3.9 or without
    `--standalone` / `--initial-controllers`) has its voters fixed by
    `controller.quorum.voters` on every node. A node configured for the other form does
    not see the quorum as it is: on a static quorum, bootstrap servers give no voter set
    (add-controller is refused, KIP-853 needs kraft.version 1), and on a dynamic quorum a
    static voters list goes stale at the first add or remove of a controller. The
    finalized level comes from ApiVersions (KIP-584); `kraft.version` missing from the
    finalized features means level 0 (KIP-1022).

    Remediation: on a static quorum, set `controller.quorum.voters` (id@host:port of every
    controller) on every node; to move to a dynamic quorum, upgrade to 3.9+ and run
    `kafka-features --bootstrap-server B upgrade --feature kraft.version=1` (Kafka 4.1+;
    before, a dynamic quorum needs a re-format), then switch the nodes to
    `controller.quorum.bootstrap.servers`. On a dynamic quorum, replace
    `controller.quorum.voters` with `controller.quorum.bootstrap.servers` on each node.

    Example: finalized kraft.version 0, while controller 3001's properties set
    `controller.quorum.bootstrap.servers=c1:9093,c2:9093,c3:9093` and no voters.

    References:
    - KIP-853: KRaft Controller Membership Changes <https://cwiki.apache.org/confluence/display/KAFKA/KIP-853%3A+KRaft+Controller+Membership+Changes>
    - Kafka documentation: controller membership changes <https://kafka.apache.org/39/documentation.html#kraft_reconfig>
    - KIP-584: Versioning scheme for features <https://cwiki.apache.org/confluence/display/KAFKA/KIP-584%3A+Versioning+scheme+for+features>
    """
    f = _features(tables).where(F.col("mv_level").isNotNull() | (F.col("kraft_level") > 0))  # a KRaft cluster
    d = join(tables.derived(kraft_settings), f, "cluster_id")
    static_with_bootstrap = (
        (F.col("kraft_level") == 0)
        & F.col("quorum_bootstrap_servers").isNotNull()
        & F.col("quorum_voters").isNull()
    )
    dynamic_with_voters = (F.col("kraft_level") >= 1) & F.col("quorum_voters").isNotNull()
    d = d.where(static_with_bootstrap | dynamic_with_voters)
    msg = F.when(
        static_with_bootstrap,
        text(
            "node ",
            F.col("node_id"),
            " finds the quorum through controller.quorum.bootstrap.servers=",
            F.col("quorum_bootstrap_servers"),
            ", but the quorum is static (kraft.version 0): the voter set is "
            "fixed by controller.quorum.voters, which this node does not set",
        ),
    ).otherwise(
        text(
            "node ",
            F.col("node_id"),
            " sets controller.quorum.voters=",
            F.col("quorum_voters"),
            ", but the quorum is dynamic (kraft.version ",
            F.col("kraft_level"),
            "): that static list goes stale at the next add-controller or remove-controller; use "
            "controller.quorum.bootstrap.servers",
        )
    )
    return emit(
        d,
        "node",
        F.col("node_id").cast("string"),
        msg,
        ev(
            node=F.col("node_id"),
            kraft_version=F.col("kraft_level"),
            roles=F.col("roles"),
            quorum_voters=F.col("quorum_voters"),
            quorum_bootstrap_servers=F.col("quorum_bootstrap_servers"),
            metadata_version=F.col("mv_name"),
        ),
    )


@rule("CTL009", "metadata-version-behind", "warning", needs=("features",), runs_in=("upgrade",))
def metadata_version_behind(tables, params):
    """The finalized `metadata.version` is from an older release than the software the brokers run.

    Why: on KRaft, upgrading the binaries is half an upgrade. The cluster keeps the
    finalized `metadata.version` (KIP-778) it had until an operator raises it, and every
    feature gated on a newer level stays off: JBOD needs 3.7-IV2 (KIP-858), dynamic
    quorums 3.9-IV0 (KIP-853), eligible leader replicas a later level still (KIP-966). A
    metadata.version too far behind also blocks the next upgrade: Kafka 4.0 requires at
    least 3.3-IV3. Keeping the old level for a while is how a rollback of the binaries stays
    possible; keeping it for months leaves the cluster half-upgraded. The software version
    is the lowest broker
    version (else the cluster's); only the release is compared (3.7-IV2 is release 3.7),
    so a level left within the brokers' own release is not judged.

    Remediation: once every broker and controller runs the new version and the upgrade is
    not going to be rolled back, finalize it: `kafka-features --bootstrap-server B upgrade
    --metadata 3.9` (3.3+; `--release-version 3.9` on 3.8+), then check with
    `kafka-features --bootstrap-server B describe`. Raising metadata.version cannot always
    be undone (downgrades across metadata changes are refused).

    Example: brokers on Kafka 3.9.0 with finalized metadata.version 3.6-IV2 (level 14).

    References:
    - KIP-778: KRaft to KRaft Upgrades <https://cwiki.apache.org/confluence/display/KAFKA/KIP-778%3A+KRaft+to+KRaft+Upgrades>
    - KIP-584: Versioning scheme for features <https://cwiki.apache.org/confluence/display/KAFKA/KIP-584%3A+Versioning+scheme+for+features>
    - KIP-858: Handle JBOD broker disk failure in KRaft <https://cwiki.apache.org/confluence/display/KAFKA/KIP-858%3A+Handle+JBOD+broker+disk+failure+in+KRaft>
    """
    f = _features(tables).where(F.col("mv_name").isNotNull())
    broker_v = (
        tables.brokers.select("cluster_id", version_key("version").alias("v"))
        .where(F.col("v").isNotNull())
        .groupBy("cluster_id")
        .agg(F.min("v").alias("broker_v"), F.max("v").alias("broker_v_max"))
    )
    clusters = tables.clusters.select(
        "cluster_id",
        F.coalesce(F.col("cluster_name"), F.col("cluster_id")).alias("cluster"),
        version_key("kafka_version").alias("cluster_v"),
        "kafka_version",
    )
    d = join(join(clusters, f, "cluster_id"), broker_v, "cluster_id", "left")
    software = F.coalesce(F.col("broker_v"), F.col("cluster_v"))
    release = F.floor(software / 1000).cast("bigint") * 1000
    mv_release = version_key(F.col("mv_name"))
    d = d.where(mv_release < release)
    shown = text(
        F.floor(release / 1_000_000).cast("bigint"), ".", (F.floor(release / 1000) % 1000).cast("bigint")
    )
    msg = text(
        "finalized metadata.version is ",
        F.col("mv_name"),
        " (level ",
        F.col("mv_level"),
        ") while the brokers run release ",
        shown,
        ": the features of the newer releases stay off until it "
        "is raised (kafka-features upgrade --metadata ",
        shown,
        ")",
    )
    return emit(
        d,
        "cluster",
        F.col("cluster"),
        msg,
        ev(
            metadata_version=F.col("mv_name"),
            metadata_version_level=F.col("mv_level"),
            software_release=shown,
            kafka_version=F.col("kafka_version"),
        ),
    )


@rule(
    "CTL010",
    "quorum-voter-lagging",
    "error",
    needs=("quorum",),
    params=(
        Param("max_lag", 10000, "records a voter may be behind the leader's high watermark (a heuristic)"),
        Param(
            "max_fetch_age_ms",
            30000,
            "milliseconds since a voter's last fetch from the leader, at collection time",
        ),
    ),
)
def quorum_voter_lagging(tables, params):
    """A KRaft quorum voter lags the leader: its log end offset is far behind the high watermark, or it has not fetched recently.

    Why: the metadata quorum commits a record once a majority of voters has it (KIP-595).
    A voter that lags or stopped fetching (down, partitioned, a full disk, long GC pauses)
    no longer counts towards that majority: with 3 voters one more failure stops every
    metadata change (no leader election for partitions, no topic or config change, no
    broker registration), and if the leader fails a lagging voter cannot be elected. The
    lag is the leader's high watermark minus the voter's log end offset, as DescribeQuorum
    reports them (parameter `max_lag`, default 10000 records, a heuristic); the fetch age
    is the collection time minus the voter's last fetch as the leader timed it (parameter
    `max_fetch_age_ms`, default 30 s; the controller's fetch timeout,
    controller.quorum.fetch.timeout.ms, is 2 s, so clock skew between the leader and the
    collecting host should not matter at this threshold).

    Remediation: check the voter with `kafka-metadata-quorum --bootstrap-server B describe
    --replication` (its LogEndOffset, Lag, LastFetchTimestamp), then the controller
    process itself: its logs, disk (metadata.log.dir), GC and network path to the leader.
    Restart or replace it before another voter is touched (no rolling restart meanwhile).

    Example: voter 3003 with log end offset 10 while the leader's high watermark is 52000,
    last fetch 5 minutes before the collection.

    References:
    - KIP-595: A Raft Protocol for the Metadata Quorum <https://cwiki.apache.org/confluence/display/KAFKA/KIP-595%3A+A+Raft+Protocol+for+the+Metadata+Quorum>
    - Kafka documentation: KRaft quorum monitoring metrics <https://kafka.apache.org/39/documentation.html#kraft_quorum_monitoring>
    - Kafka broker config controller.quorum.fetch.timeout.ms <https://kafka.apache.org/39/documentation.html#brokerconfigs_controller.quorum.fetch.timeout.ms>
    """
    voters = tables.quorum.where((F.col("role") == "voter") & ~F.coalesce(F.col("is_leader"), F.lit(False)))
    lagging = F.coalesce(F.col("lag") > params["max_lag"], F.lit(False))
    stale = F.coalesce(F.col("fetch_age_ms") > params["max_fetch_age_ms"], F.lit(False))
    d = voters.where(lagging | stale)
    why = F.when(
        lagging & stale,
        text(
            "is ",
            F.col("lag"),
            " records behind the leader's high watermark (",
            F.col("high_watermark"),
            ") and last fetched ",
            F.floor(F.col("fetch_age_ms") / 1000).cast("bigint"),
            " s before collection",
        ),
    )
    why = why.when(
        lagging,
        text(
            "is ", F.col("lag"), " records behind the leader's high watermark (", F.col("high_watermark"), ")"
        ),
    ).otherwise(
        text(
            "last fetched from the leader ",
            F.floor(F.col("fetch_age_ms") / 1000).cast("bigint"),
            " s before collection",
        )
    )
    msg = text(
        "quorum voter ",
        F.col("node_id"),
        " ",
        why,
        ": it does not count towards the majority that commits metadata",
    )
    return emit(
        d,
        "node",
        F.col("node_id").cast("string"),
        msg,
        ev(
            node=F.col("node_id"),
            log_end_offset=F.col("log_end_offset"),
            high_watermark=F.col("high_watermark"),
            lag=F.col("lag"),
            fetch_age_ms=F.col("fetch_age_ms"),
            caught_up_age_ms=F.col("caught_up_age_ms"),
            max_lag=F.lit(params["max_lag"]),
            max_fetch_age_ms=F.lit(params["max_fetch_age_ms"]),
        ),
    )


@rule(
    "CTL011",
    "active-controller-count-not-one",
    "critical",
    needs=("metrics",),
    uses=(broker_counts,),
    runs_in=("preflight",),
)
def active_controller_count_not_one(tables, params):
    """The nodes' ActiveControllerCount does not sum to 1: no node, or more than one, believes it is the active controller.

    Why: kafka.controller:type=KafkaController,name=ActiveControllerCount is 1 on the active
    controller and 0 elsewhere, so over a cluster it sums to exactly 1. In ZooKeeper mode
    every broker registers it (KafkaController.scala: `if (isActive) 1 else 0`): 0 everywhere
    means no controller (nobody elects leaders when a broker fails), 2 means a second broker
    still acts as controller (a zombie whose ZooKeeper session expired: the split-brain that
    left partitions leaderless). On KRaft it is registered by the controller nodes only
    (QuorumControllerMetrics, created by ControllerServer; broker-only nodes do not have it):
    1 on the quorum leader. So a sum of 0 is judged only when every node that reports it was
    scraped (every registered broker in ZooKeeper mode, every quorum voter on KRaft) or when
    MSK's CloudWatch gives the cluster's sum (ZooKeeper mode only: on MSK KRaft the
    controllers are AWS's); a sum above 1 is judged from whatever was scraped. The message
    names the controller the metadata shows (`/controller`, or the KRaft quorum leader from
    DescribeQuorum) where the metric contradicts it: the two are read at different moments
    (a controller election in between), or the reporting node's view is stale.

    Remediation: more than one: find the nodes reporting 1; in ZooKeeper mode restart the
    one that is not `/controller` (its session expired), on KRaft check
    `kafka-metadata-quorum describe --status` for the leader and epoch. None: ZooKeeper mode,
    check the brokers' ZooKeeper sessions (deleting `/controller` forces an election); KRaft,
    a majority of voters must be up and reachable (CTL001, CTL010). Collect again to confirm:
    a metric read during an election is transient.

    Example: brokers 1 and 3 both report ActiveControllerCount 1 while `/controller` names 3.

    References:
    - apache/kafka core/src/main/scala/kafka/controller/KafkaController.scala (ActiveControllerCount, ZooKeeper mode) <https://github.com/apache/kafka/blob/trunk/core/src/main/scala/kafka/controller/KafkaController.scala>
    - apache/kafka metadata/src/main/java/org/apache/kafka/controller/metrics/QuorumControllerMetrics.java (KRaft: active ? 1 : 0) and core/src/main/scala/kafka/server/ControllerServer.scala (created on controller nodes) <https://github.com/apache/kafka/blob/trunk/metadata/src/main/java/org/apache/kafka/controller/metrics/QuorumControllerMetrics.java>
    - Kafka documentation: monitoring (ActiveControllerCount: only one controller per cluster should be active) <https://kafka.apache.org/39/documentation.html#monitoring>
    - Amazon MSK: metrics with the DEFAULT level (ActiveControllerCount) <https://docs.aws.amazon.com/msk/latest/developerguide/metrics-details.html>
    """
    nodes = metric_per_node(tables, "active_controller_count", "v")
    per_cluster = nodes.groupBy("cluster_id").agg(
        F.sum(F.when(F.col("broker_id").isNotNull(), F.round(F.col("v")))).alias("node_sum"),
        F.max(F.when(F.col("broker_id").isNull(), F.round(F.col("v")))).alias("cloudwatch_sum"),
        F.collect_set("broker_id").alias("reporters"),
        F.sort_array(F.collect_set(F.when(F.col("v") >= 1, F.col("broker_id")))).alias("claimants"),
    )
    ctl = tables.controller.groupBy("cluster_id").agg(
        F.max("mode").alias("mode"),
        F.max("controller_id").alias("controller_id"),
        F.max("voters").alias("voters"),
    )
    brokers = _clusters(tables).select("cluster_id", "cluster", "manifest_mode")
    d = join(
        join(join(per_cluster, ctl, "cluster_id", "left"), brokers, "cluster_id", "left"),
        tables.derived(broker_counts).select("cluster_id", "broker_ids"),
        "cluster_id",
        "left",
    )
    kraft = F.lower(F.coalesce(F.col("mode"), F.col("manifest_mode"), F.lit("zookeeper"))) == "kraft"
    expected = F.when(kraft, F.col("voters")).otherwise(F.col("broker_ids"))
    scraped_all = (
        expected.isNotNull()
        & (F.size(expected) > 0)
        & (F.size(F.array_except(expected, F.filter(F.col("reporters"), lambda x: x.isNotNull()))) == 0)
    )
    total = F.coalesce(F.col("node_sum"), F.col("cloudwatch_sum"))
    d = d.select(
        "*",
        total.cast("bigint").alias("total"),
        F.col("node_sum").isNull().alias("from_cloudwatch"),
        F.when(kraft, F.lit("kraft")).otherwise(F.lit("zookeeper")).alias("judged_mode"),
        scraped_all.alias("scraped_all"),
    )
    none_judged = (F.col("total") == 0) & (
        (~F.col("from_cloudwatch") & F.col("scraped_all"))
        | (F.col("from_cloudwatch") & (F.col("judged_mode") == "zookeeper"))
    )
    d = d.where((F.col("total") > 1) | none_judged)
    claimants = F.array_join(
        F.filter(F.col("claimants"), lambda x: x.isNotNull()).cast("array<string>"), ", "
    )
    metadata = F.when(
        F.col("controller_id").isNotNull() & (F.col("controller_id") >= 0),
        text(
            "; the metadata names ",
            F.col("controller_id"),
            F.when(F.col("judged_mode") == "kraft", F.lit(" (the quorum leader)")).otherwise(
                F.lit(" (/controller)")
            ),
            " as the active controller: the metric and the metadata were read at different moments (an "
            "election in between) or a node's view is stale",
        ),
    ).otherwise(F.lit(""))
    source = F.when(F.col("from_cloudwatch"), F.lit(" (CloudWatch, summed over the cluster)")).otherwise(
        text(" (node(s) ", claimants, ")")
    )
    msg = F.when(
        F.col("total") > 1,
        text(
            "ActiveControllerCount sums to ",
            F.col("total"),
            source,
            ": more than one node acts as the active controller",
            F.when(
                F.col("judged_mode") == "kraft",
                F.lit(" (two quorum leaders of different epochs: the older one has not stepped down)"),
            ).otherwise(
                F.lit(" (a zombie controller whose ZooKeeper session expired has not resigned: split-brain)")
            ),
            metadata,
        ),
    ).otherwise(
        text(
            "ActiveControllerCount sums to 0",
            F.when(F.col("from_cloudwatch"), F.lit(" (CloudWatch, summed over the cluster)")).otherwise(
                F.when(
                    F.col("judged_mode") == "kraft",
                    F.lit(" over every quorum voter"),
                ).otherwise(F.lit(" over every registered broker"))
            ),
            ": no node acts as the active controller, so no leader is elected when a broker fails and no "
            "metadata change is applied",
            metadata,
        )
    )
    evidence = ev(
        total=F.col("total"),
        claimants=F.filter(F.col("claimants"), lambda x: x.isNotNull()),
        metadata_controller=F.col("controller_id"),
        mode=F.col("judged_mode"),
        from_cloudwatch=F.col("from_cloudwatch"),
    )
    return emit(d, "cluster", F.coalesce(F.col("cluster"), F.col("cluster_id")), msg, evidence)
