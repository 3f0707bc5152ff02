"""Build the sample fleet: one snapshot per production incident plus healthy clusters.

    python sample_configs/generate.py            # rewrites sample_configs/fleet/

Deterministic (seeded), so the committed JSON Lines only change when this file does;
tests/test_sample_fleet.py fails if they drift apart. Cluster names, broker counts, racks,
versions and topic layouts follow what the incidents in shared/DESIGN.md describe.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))

from auditor.coordinator_partition import coordinator_partition  # noqa: E402
from auditor.snapshot.io import Manifest, write_snapshot  # noqa: E402

DATE = "2026-11-22"
COLLECTED_AT = f"{DATE}T06:00:00Z"


class ClusterBuilder:
    def __init__(self, cid: str, name: str, *, seed: int, **cluster):
        self.rng = random.Random(seed)
        self.cluster = {"id": cid, "name": name, **cluster}
        self.t: dict[str, list[dict]] = {
            k: []
            for k in (
                "brokers",
                "configs",
                "topics",
                "partitions",
                "zk_state",
                "controller",
                "log_dirs",
                "metrics",
                "client_software",
                "consumer_groups",
                "quorum",
                "features",
                "replica_lag",
                "log_end_offsets",
            )
        }
        self.sources = []

    # -- brokers -------------------------------------------------------------------------
    def brokers(
        self,
        ids,
        *,
        racks,
        cores,
        version,
        dirs=1,
        host_fmt="b-{id}.{name}.internal",
        static=None,
        registered=None,
    ):
        registered = set(ids if registered is None else registered)
        self.assignable = list(ids)  # replicas may sit on brokers that are down now
        for i, bid in enumerate(ids):
            log_dirs = (
                [f"/data/kafka-{d}" for d in range(1, dirs + 1)] if dirs > 1 else ["/var/lib/kafka/data"]
            )
            if bid in registered:
                self.t["brokers"].append(
                    {
                        "broker_id": bid,
                        "host": host_fmt.format(id=bid, name=self.cluster["name"]),
                        "port": 9092,
                        "rack": racks[i % len(racks)] if racks else None,
                        "cores": cores,
                        "log_dirs": log_dirs,
                        "version": version,
                    }
                )
            for d, path in enumerate(log_dirs, 1):
                total = 2_000_000_000_000 if dirs > 1 else 1_000_000_000_000
                self.t["log_dirs"].append(
                    {
                        "broker_id": bid,
                        "path": path,
                        "error": None,
                        "device": f"nvme{d}n1",
                        "total_bytes": total,
                        "used_bytes": int(total * self.rng.uniform(0.35, 0.6)),
                    }
                )
            for key, value in {
                "broker.id": str(bid),
                "log.dirs": ",".join(log_dirs),
                "broker.rack": racks[i % len(racks)] if racks else None,
                **(static or {}),
            }.items():
                if value is not None:
                    self.config("broker", str(bid), key, value, "STATIC_BROKER_CONFIG")
        return self

    def config(self, entity_type, entity_name, key, value, source):
        self.t["configs"].append(
            {
                "entity_type": entity_type,
                "entity_name": entity_name,
                "key": key,
                "value": value,
                "source": source,
                "is_sensitive": False,
            }
        )

    # -- topics --------------------------------------------------------------------------
    def topic(self, name, partitions, rf, *, configs=None, internal=False):
        ids = self.assignable
        topic_id = hashlib.sha1(f"{self.cluster['id']}/{name}".encode()).hexdigest()[:22]
        self.t["topics"].append(
            {
                "topic": name,
                "partitions": partitions,
                "replication_factor": rf,
                "is_internal": internal,
                "topic_id": topic_id,
            }
        )
        start = self.rng.randrange(len(ids))
        for p in range(partitions):
            replicas = [ids[(start + p + k) % len(ids)] for k in range(rf)]
            self.t["partitions"].append(
                {
                    "topic": name,
                    "partition": p,
                    "leader": replicas[0],
                    "leader_epoch": self.rng.randrange(1, 30),
                    "replicas": replicas,
                    "isr": list(replicas),
                    "offline_replicas": [],
                    "adding_replicas": [],
                    "removing_replicas": [],
                }
            )
        for key, value in (configs or {}).items():
            self.config("topic", name, key, value, "TOPIC_CONFIG")
        return self

    def partition(self, topic, p):
        return next(r for r in self.t["partitions"] if r["topic"] == topic and r["partition"] == p)

    def mirror_zk_state(self, controller_epoch):
        for r in self.t["partitions"]:
            self.t["zk_state"].append(
                {
                    "topic": r["topic"],
                    "partition": r["partition"],
                    "leader": r["leader"],
                    "leader_epoch": r["leader_epoch"],
                    "isr": list(r["isr"]),
                    "controller_epoch": controller_epoch,
                    "zk_version": r["leader_epoch"],
                }
            )

    # -- groups, clients, metrics --------------------------------------------------------
    def groups(self, names, partitions=50):
        for g in names:
            self.t["consumer_groups"].append(
                {
                    "group_id": g,
                    "state": "Stable",
                    "members": self.rng.randrange(1, 13),
                    "coordinator_partition": coordinator_partition(g, partitions),
                }
            )
        return self

    def clients(self, software, listener="CLIENT"):
        for bid in [b["broker_id"] for b in self.t["brokers"]]:
            for name, version, conns in software:
                self.t["client_software"].append(
                    {
                        "broker_id": bid,
                        "listener": listener,
                        "client_name": name,
                        "client_version": version,
                        "connections": conns,
                    }
                )
        return self

    def metrics(self, per_broker):
        for b in self.t["brokers"]:
            for name, value, labels in per_broker(b["broker_id"]):
                self.t["metrics"].append(
                    {"broker_id": b["broker_id"], "name": name, "labels": labels, "value": float(value)}
                )
        return self

    def quorum(self, *, leader, voters, observers, high_watermark, behind=None):
        """DescribeQuorum rows (auditor/collectors/kraft.py): every replica fetched within the last
        second of the collection, ``behind`` records lagging (node -> records)."""
        collected_ms = 1795327200000  # COLLECTED_AT, ms since the epoch
        for role, nodes in (("voter", voters), ("observer", observers)):
            for node in nodes:
                lag = (behind or {}).get(node, 0)
                age = None if node == leader else 100 + 50 * lag
                self.t["quorum"].append(
                    {
                        "node_id": node,
                        "role": role,
                        "is_leader": node == leader,
                        "log_end_offset": high_watermark - lag,
                        "lag": lag,
                        "high_watermark": high_watermark,
                        "last_fetch_timestamp": None if age is None else collected_ms - age,
                        "last_caught_up_timestamp": None if age is None else collected_ms - age,
                        "fetch_age_ms": age,
                        "caught_up_age_ms": age,
                        "directory_id": None,
                        "endpoints": None,
                        "source": "describe_quorum",
                    }
                )
        return self

    def features(self, *, metadata_level, metadata_name, epoch):
        """ApiVersions' finalized features (auditor/collectors/kraft.py): metadata.version at
        ``metadata_level`` (= ``metadata_name``, its release's latest when supported_max equals
        it). kraft.version is not listed: a 3.7 broker has no such feature (KIP-853 came in 3.9)
        and a finalized level 0 is never listed, so CTL008 reads it as 0, a static quorum."""
        self.t["features"].append(
            {
                "feature": "metadata.version",
                "finalized_level": metadata_level,
                "version_name": metadata_name,
                "supported_min": 1,
                "supported_max": metadata_level,
                "finalized_epoch": epoch,
            }
        )
        return self

    def write(self, root: Path, sources):
        out = root / f"dt={DATE}" / f"cluster={self.cluster['name']}"
        manifest = Manifest(
            cluster=self.cluster,
            collected_at=COLLECTED_AT,
            sources=[{"source": s, "target": t, "status": "ok"} for s, t in sources],
        )
        write_snapshot(out, manifest, {k: v for k, v in self.t.items() if v}, fmt="jsonl")
        return out


def std_metrics(cores, net_idle, io_idle, queue, connections, cpu=25.0):
    def per_broker(bid):
        return [
            ("cpu_count", cores, "{}"),
            ("cpu_user_system_percent", cpu, "{}"),
            ("network_processor_avg_idle_percent", net_idle, "{}"),
            ("request_handler_avg_idle_percent", io_idle, "{}"),
            ("request_queue_size", queue, "{}"),
            ("connection_count", connections, '{"listener":"CLIENT"}'),
            ("offline_log_directory_count", 0, "{}"),
        ]

    return per_broker


def groups_on_partition(prefixes, target, partitions=50, want=3):
    """Realistic group names that Kafka maps to coordinator partition ``target``."""
    found = []
    for n in range(1, 10_000):
        for prefix in prefixes:
            g = f"{prefix}-{n}"
            if coordinator_partition(g, partitions) == target:
                found.append(g)
                if len(found) == want:
                    return found
    raise RuntimeError("no group found")


def payments_msk():
    """Incident 1: MSK rolling patch; min.insync.replicas == RF blocked every acks=all producer."""
    b = ClusterBuilder(
        "MkQ9x0vRTzS2b1dPaYmT4w",
        "payments-msk",
        seed=1,
        environment="prod",
        tier="tier-1",
        platform="msk",
        kafka_version="3.6.0",
        metadata_mode="zookeeper",
        msk_instance_type="kafka.m5.large",
        az_count=3,
    )
    b.brokers(
        [1, 2, 3],
        racks=["use1-az1", "use1-az2", "use1-az4"],
        cores=2,
        version="3.6.0",
        host_fmt="b-{id}.payments.x7k2qp.c3.kafka.us-east-1.amazonaws.com",
        static={
            "num.network.threads": "5",
            "num.io.threads": "8",
            "default.replication.factor": "3",
            "min.insync.replicas": "2",
            "unclean.leader.election.enable": "false",
            "auto.create.topics.enable": "false",
        },
    )
    # Someone raised the cluster-wide default "for durability": every topic without an
    # override, __consumer_offsets included, now needs all three replicas in sync.
    b.config("cluster_default", "", "min.insync.replicas", "3", "DYNAMIC_DEFAULT_BROKER_CONFIG")
    b.topic("__consumer_offsets", 50, 3, internal=True, configs={"cleanup.policy": "compact"})
    b.topic("payments.orders.v1", 12, 3, configs={"min.insync.replicas": "3", "retention.ms": "604800000"})
    b.topic("payments.authorizations.v2", 12, 3, configs={"min.insync.replicas": "3"})
    b.topic("payments.ledger-events", 24, 3)
    b.topic("payments.refunds", 6, 3, configs={"min.insync.replicas": "2"})
    b.topic("payments.fraud-scores", 12, 3, configs={"min.insync.replicas": "2"})
    b.groups(["ledger-writer", "fraud-scorer", "orders-projector", "refunds-notifier", "settlement-batch"])
    b.clients([("apache-kafka-java", "3.6.1", 40), ("confluent-kafka-python", "2.3.0", 12)])
    b.t["controller"].append(
        {
            "mode": "zookeeper",
            "controller_id": 2,
            "controller_epoch": 7,
            "voters": [],
            "reassignment_pending": False,
        }
    )
    b.mirror_zk_state(7)
    b.metrics(std_metrics(2, 0.71, 0.64, 3, 180, cpu=38.0))
    return b, [
        ("admin", "b-1.payments.x7k2qp.c3.kafka.us-east-1.amazonaws.com:9098"),
        ("metrics", "open-monitoring:11001"),
    ]


def logistics_jbod():
    """Incident 2: JBOD broker with one failed disk; sarama < 1.43.3 clients never recovered."""
    b = ClusterBuilder(
        "Lg7vR2mXQ0uYc4HnJd8s1A",
        "logistics-jbod",
        seed=2,
        environment="prod",
        tier="tier-1",
        platform="apache",
        kafka_version="3.5.1",
        metadata_mode="zookeeper",
        az_count=3,
    )
    b.brokers(
        [1, 2, 3, 4, 5, 6],
        racks=["eu-west-1a", "eu-west-1b", "eu-west-1c"],
        cores=16,
        version="3.5.1",
        dirs=4,
        host_fmt="kafka-{id}.logistics.eu-west-1.internal",
        static={
            "num.network.threads": "8",
            "num.io.threads": "16",
            "default.replication.factor": "3",
            "min.insync.replicas": "2",
            "queued.max.requests": "500",
        },
    )
    for name, parts in (
        ("shipments.events", 24),
        ("tracking.positions", 48),
        ("routes.plans", 12),
        ("warehouse.inventory-changes", 24),
        ("carriers.status", 6),
    ):
        b.topic(name, parts, 3)
    b.topic("__consumer_offsets", 50, 3, internal=True, configs={"cleanup.policy": "compact"})
    failed = next(d for d in b.t["log_dirs"] if d["broker_id"] == 4 and d["path"] == "/data/kafka-3")
    failed["error"] = "KAFKA_STORAGE_ERROR"
    hit = [r for r in b.t["partitions"] if 4 in r["replicas"]][::4]  # the share on the failed disk
    for r in hit:
        r["offline_replicas"] = [4]
        r["isr"] = [x for x in r["isr"] if x != 4]
        if r["leader"] == 4:
            r["leader"] = r["isr"][0]
            r["leader_epoch"] += 1
    b.groups(["shipment-router", "eta-calculator", "tracking-archiver", "dock-scheduler"])
    b.clients(
        [("sarama", "1.27.0", 120), ("apache-kafka-java", "3.5.1", 64), ("confluent-kafka-go", "2.3.0", 18)]
    )
    b.t["controller"].append(
        {
            "mode": "zookeeper",
            "controller_id": 1,
            "controller_epoch": 23,
            "voters": [],
            "reassignment_pending": False,
        }
    )
    b.mirror_zk_state(23)

    def per_broker(bid):
        rows = std_metrics(16, 0.62, 0.58, 4, 900)(bid)
        return [
            (n, 1 if (n == "offline_log_directory_count" and bid == 4) else v, labels)
            for n, v, labels in rows
        ]

    b.metrics(per_broker)
    return b, [
        ("admin", "kafka-1.logistics.eu-west-1.internal:9092"),
        ("zookeeper", "zk-1.logistics:2181/kafka"),
        ("metrics", "jmx-exporter:7071"),
    ]


def ads_zk_legacy():
    """Incident 3: ZooKeeper-mode controller split-brain; __consumer_offsets-17 left at leader -1."""
    b = ClusterBuilder(
        "AdZk2x0LegacyQ5Tq3pWnA",
        "ads-zk-legacy",
        seed=3,
        environment="prod",
        tier="tier-2",
        platform="apache",
        kafka_version="2.0.1",
        metadata_mode="zookeeper",
        az_count=3,
    )
    b.brokers(
        [1, 2, 3, 4, 5],
        racks=["r1", "r2", "r3"],
        cores=8,
        version="2.0.1",
        registered=[1, 2, 3, 4],
        host_fmt="ads-kafka-{id}.dc1.internal",
        static={
            "num.network.threads": "4",
            "num.io.threads": "8",
            "default.replication.factor": "3",
            "min.insync.replicas": "2",
            "unclean.leader.election.enable": "false",
        },
    )
    # Replicas are assigned over all five brokers; broker 5 is down, its registration gone.
    b.topic("__consumer_offsets", 50, 3, internal=True, configs={"cleanup.policy": "compact"})
    b.topic("ads.impressions", 24, 3)
    b.topic("ads.clicks", 12, 3)
    b.topic("ads.bids", 24, 3)
    b.topic("ads.budget-updates", 6, 3)
    for r in b.t["partitions"]:  # broker 5 is down: out of every ISR, leadership moved
        if 5 in r["isr"]:
            r["isr"] = [x for x in r["isr"] if x != 5]
            if r["leader"] == 5:
                r["leader"], r["leader_epoch"] = r["isr"][0], r["leader_epoch"] + 1
    b.mirror_zk_state(41)
    # The split-brain: the controller's view and ZooKeeper disagree.
    off = b.partition("__consumer_offsets", 17)
    off.update(leader=-1, isr=[off["replicas"][0]])
    zk17 = next(z for z in b.t["zk_state"] if z["topic"] == "__consumer_offsets" and z["partition"] == 17)
    zk17.update(leader=-1, isr=[off["replicas"][0]])
    imp = b.partition("ads.impressions", 4)
    zk4 = next(z for z in b.t["zk_state"] if z["topic"] == "ads.impressions" and z["partition"] == 4)
    zk4.update(
        leader=5, isr=[5], controller_epoch=42, leader_epoch=imp["leader_epoch"] + 1
    )  # zombie controller write
    b.t["controller"].append(
        {
            "mode": "zookeeper",
            "controller_id": 2,
            "controller_epoch": 41,
            "voters": [],
            "reassignment_pending": False,
        }
    )
    b.groups(
        groups_on_partition(["bid-optimizer", "impression-aggregator", "budget-pacer"], 17)
        + ["click-attribution", "report-exporter"]
    )
    b.clients([("apache-kafka-java", "2.0.1", 80), ("sarama", "1.45.0", 20)])
    b.metrics(std_metrics(8, 0.55, 0.5, 2, 600))
    return b, [("admin", "ads-kafka-1.dc1.internal:9092"), ("zookeeper", "zk1.dc1.internal:2181/ads")]


def search_ingest(fixed=False):
    """Incident 4: 48-core brokers on 6 network / 16 I/O threads took ~4000 extra connections."""
    net, io, queue = ("12", "32", "1000") if fixed else ("6", "16", "500")
    name = "search-ingest"
    b = ClusterBuilder(
        "Se4rchIng3st0Xq1ZpL2kA",
        name,
        seed=4,
        environment="prod",
        tier="tier-1",
        platform="apache",
        kafka_version="3.7.1",
        metadata_mode="kraft",
        az_count=3,
    )
    b.brokers(
        [1, 2, 3, 4, 5, 6],
        racks=["us-central1-a", "us-central1-b", "us-central1-c"],
        cores=48,
        version="3.7.1",
        host_fmt="kafka-{id}.search.gcp.internal",
        static={
            "num.network.threads": net,
            "num.io.threads": io,
            "queued.max.requests": queue,
            "default.replication.factor": "3",
            "min.insync.replicas": "2",
        },
    )
    for tname, parts in (
        ("search.documents", 96),
        ("search.index-requests", 48),
        ("search.query-log", 24),
        ("search.click-feedback", 12),
    ):
        # the query log keeps a day (a short retention under the 7-day segment.ms: DSK008 info)
        b.topic(
            tname, parts, 3, configs={"retention.ms": "86400000"} if tname == "search.query-log" else None
        )
    b.topic("__consumer_offsets", 50, 3, internal=True, configs={"cleanup.policy": "compact"})
    b.groups(["indexer", "query-log-sink", "feedback-trainer"])
    # ~3900 connections per broker (RULES.md: "~4000 connections"): 500 queue slots are too
    # few (THR006 fires below connections/4 = 975), the fix's 1000 are enough.
    b.clients([("apache-kafka-java", "3.7.0", 2800), ("librdkafka", "2.4.0", 1100)])
    b.t["controller"].append(
        {
            "mode": "kraft",
            "controller_id": 1001,
            "controller_epoch": 12,
            "voters": [1001, 1002, 1003],
            "reassignment_pending": False,
        }
    )
    b.quorum(
        leader=1001,
        voters=[1001, 1002, 1003],
        observers=[1, 2, 3, 4, 5, 6],
        high_watermark=1843221,
        behind={1003: 3},
    )
    b.t["features"].append(
        {
            "feature": "metadata.version",
            "finalized_level": 19,
            "version_name": "3.7-IV4",
            "supported_min": 1,
            "supported_max": 19,
            "finalized_epoch": 4211,
        }
    )
    if fixed:
        b.metrics(std_metrics(48, 0.58, 0.61, 35, 3900, cpu=41.0))
    else:
        b.metrics(std_metrics(48, 0.02, 0.14, 498, 3900, cpu=52.0))
    return b, [
        ("admin", "kafka-1.search.gcp.internal:9092"),
        ("kraft", "kafka-1.search.gcp.internal:9092"),
        ("metrics", "kafka-1.search.gcp.internal:7071"),
    ]


def inventory_prod():
    """Healthy: KRaft, 6 brokers over 3 racks, RF 3, min.insync.replicas 2."""
    b = ClusterBuilder(
        "Inv3nt0ryPr0dKr4ftA1Bw",
        "inventory-prod",
        seed=5,
        environment="prod",
        tier="tier-1",
        platform="apache",
        kafka_version="3.7.1",
        metadata_mode="kraft",
        az_count=3,
    )
    b.brokers(
        [1, 2, 3, 4, 5, 6],
        racks=["az-a", "az-b", "az-c"],
        cores=16,
        version="3.7.1",
        host_fmt="kafka-{id}.inventory.internal",
        static={
            "num.network.threads": "8",
            "num.io.threads": "16",
            "queued.max.requests": "500",
            "default.replication.factor": "3",
            "min.insync.replicas": "2",
            # topics are created by the platform team's pipeline, never by a client (CFG007)
            "auto.create.topics.enable": "false",
        },
    )
    for tname, parts in (
        ("inventory.stock-levels", 24),
        ("inventory.reservations", 12),
        ("inventory.sku-catalog", 6),
        ("inventory.replenishment-orders", 12),
    ):
        # reservations expire within a day: a short retention, as healthy clusters carry (issue 43)
        b.topic(
            tname,
            parts,
            3,
            configs={"retention.ms": "86400000"} if tname == "inventory.reservations" else None,
        )
    b.topic("__consumer_offsets", 50, 3, internal=True, configs={"cleanup.policy": "compact"})
    b.topic("__transaction_state", 50, 3, internal=True, configs={"cleanup.policy": "compact"})
    b.groups(["stock-projector", "reservation-expirer", "replenishment-planner"])
    b.clients([("apache-kafka-java", "3.7.1", 90), ("librdkafka", "2.4.0", 30)])
    b.t["controller"].append(
        {
            "mode": "kraft",
            "controller_id": 3001,
            "controller_epoch": 4,
            "voters": [3001, 3002, 3003],
            "reassignment_pending": False,
        }
    )
    # The KRaft source (DescribeQuorum, ApiVersions' finalized features): a healthy quorum, every
    # voter caught up, metadata.version at its release's latest, a static quorum (kraft.version 0),
    # so that CTL008-CTL010 are evaluated in the quick start, not "not evaluated".
    b.quorum(leader=3001, voters=[3001, 3002, 3003], observers=[1, 2, 3, 4, 5, 6], high_watermark=912044)
    b.features(metadata_level=19, metadata_name="3.7-IV4", epoch=1180)
    # A recovery in progress: broker 4 restarted minutes ago (a rolling patch). Its replicas are
    # back in every ISR, the leaders they rejoined report ISR expands (one-minute rate, no
    # shrinks), and the controller has not yet moved leadership back to it (auto leader
    # rebalancing runs every leader.imbalance.check.interval.seconds).
    for r in b.t["partitions"]:
        if r["leader"] == 4:
            r["leader"], r["leader_epoch"] = r["replicas"][1], r["leader_epoch"] + 1
    rejoined = {r["leader"] for r in b.t["partitions"] if 4 in r["replicas"]}
    expands = [("isr_expand_rate", 0.4, "{}"), ("isr_shrink_rate", 0.0, "{}")]
    base = std_metrics(16, 0.74, 0.7, 2, 700)
    b.metrics(lambda bid: base(bid) + (expands if bid in rejoined else []))
    return b, [
        ("admin", "kafka-1.inventory.internal:9092"),
        ("kraft", "kafka-1.inventory.internal:9092"),
        ("metrics", "kafka-1.inventory.internal:7071"),
    ]


def notifications_msk():
    """Healthy: MSK KRaft on m7g.xlarge, 3 brokers in 3 AZs, RF 3, min.insync.replicas 2."""
    b = ClusterBuilder(
        "N0tifMskKr4ft7Yp2Qx9Vw",
        "notifications-msk",
        seed=6,
        environment="prod",
        tier="tier-2",
        platform="msk",
        kafka_version="3.7.1",
        metadata_mode="kraft",
        msk_instance_type="kafka.m7g.xlarge",
        az_count=3,
    )
    b.brokers(
        [1, 2, 3],
        racks=["use1-az1", "use1-az2", "use1-az6"],
        cores=4,
        version="3.7.1",
        host_fmt="b-{id}.notifications.k3p9s1.c2.kafka.us-east-1.amazonaws.com",
        static={
            "num.network.threads": "2",
            "num.io.threads": "4",
            "default.replication.factor": "3",
            "min.insync.replicas": "2",
            "unclean.leader.election.enable": "false",
        },
    )
    # push notifications are stale after 3 hours; email keeps a generous 100 GB size cap per
    # partition under its 7-day retention (a guard, more than the disk: DSK009 info)
    topic_configs = {
        "notifications.push": {"retention.ms": "10800000"},
        "notifications.email": {"retention.bytes": "100000000000"},
    }
    for tname, parts in (("notifications.email", 12), ("notifications.push", 24), ("notifications.sms", 6)):
        b.topic(tname, parts, 3, configs=topic_configs.get(tname))
    b.topic("__consumer_offsets", 50, 3, internal=True, configs={"cleanup.policy": "compact"})
    b.groups(["email-sender", "push-dispatcher", "sms-gateway"])
    b.clients([("apache-kafka-java", "3.7.1", 45)])
    # MSK KRaft: dedicated controllers AWS runs (never brokers), read through the brokers'
    # DescribeQuorum and ApiVersions like any KRaft cluster.
    b.t["controller"].append(
        {
            "mode": "kraft",
            "controller_id": 3000,
            "controller_epoch": 3,
            "voters": [3000, 3001, 3002],
            "reassignment_pending": False,
        }
    )
    b.quorum(leader=3000, voters=[3000, 3001, 3002], observers=[1, 2, 3], high_watermark=288310)
    b.features(metadata_level=19, metadata_name="3.7-IV4", epoch=402)
    b.metrics(std_metrics(4, 0.8, 0.77, 1, 150, cpu=22.0))
    return b, [
        ("admin", "b-1.notifications.k3p9s1.c2.kafka.us-east-1.amazonaws.com:9098"),
        ("kraft", "b-1.notifications.k3p9s1.c2.kafka.us-east-1.amazonaws.com:9098"),
    ]


# When the busy cluster's brokers were scraped twice (collect scrapes a URL that exports log end
# offsets a second time, SECOND_SCRAPE_AFTER seconds later): broker b's scrapes are taken 0.8 s after
# broker b-1's, as a scraper works through the brokers.
SCRAPES_MS = (1795327195000, 1795327200000)


def replication_in_flight(b, rates, *, lag=None, scrapes=SCRAPES_MS, skew_ms=800):
    """Each replica's log end offset in two scrapes (log_end_offsets rows) and each follower's
    ConsumerLag (replica_lag rows) of a busy, healthy cluster: every partition appends
    ``rates[topic]`` records/s; the leader's log end is where the partition is at its broker's scrape
    time; a follower is 0-5 records behind it at its own (later) scrape: replication in flight, the
    records of its last fetch round trip. ``lag``: {(topic, partition, follower): records} behind for
    good (none in a healthy cluster). Every in-sync follower's ConsumerLag is 0: the leader's high
    watermark never passes it (Partition.maybeIncrementLeaderHW)."""
    lag = lag or {}
    for r in b.t["partitions"]:
        rate = rates[r["topic"]]
        base = b.rng.randrange(50_000, 5_000_000)
        for start in scrapes:
            for n, bid in enumerate(r["replicas"]):
                at = start + skew_ms * (bid - 1)
                leo = base + int(rate * (at - scrapes[0]) / 1000)  # the partition's log end at that moment
                behind = (
                    0 if n == 0 else b.rng.randrange(0, 6) + lag.get((r["topic"], r["partition"], bid), 0)
                )
                b.t["log_end_offsets"].append(
                    {
                        "broker_id": bid,
                        "topic": r["topic"],
                        "partition": r["partition"],
                        "log_end_offset": max(leo - behind, 0),
                        "scraped_at_ms": at,
                    }
                )
        for bid in r["replicas"][1:]:
            b.t["replica_lag"].append(
                {
                    "broker_id": bid,
                    "topic": r["topic"],
                    "partition": r["partition"],
                    "leader_id": r["leader"],
                    "lag": lag.get((r["topic"], r["partition"], bid), 0),
                }
            )


def checkout_prod():
    """Healthy and busy: KRaft 3.7, 6 brokers over 3 racks, 3 dedicated controllers caught up; every
    follower a few records behind its leader in two scrapes seconds apart (replication in flight);
    broker 6 restarted minutes ago and is back in every ISR (its leaders' ISRs expanded, none shrank);
    busy threads (idle near 0.4, still above saturation); short-retention topics; transactions."""
    b = ClusterBuilder(
        "Ch3ck0utPr0dKr4ftBusyQ",
        "checkout-prod",
        seed=7,
        environment="prod",
        tier="tier-1",
        platform="apache",
        kafka_version="3.7.1",
        metadata_mode="kraft",
        az_count=3,
    )
    b.brokers(
        [1, 2, 3, 4, 5, 6],
        racks=["euw1-az1", "euw1-az2", "euw1-az3"],
        cores=16,
        version="3.7.1",
        host_fmt="kafka-{id}.checkout.internal",
        static={
            "num.network.threads": "8",
            "num.io.threads": "16",
            "queued.max.requests": "500",
            "num.replica.fetchers": "4",
            "default.replication.factor": "3",
            "min.insync.replicas": "2",
            "auto.create.topics.enable": "false",
            "offsets.topic.replication.factor": "3",
            "transaction.state.log.replication.factor": "3",
            "transaction.state.log.min.isr": "2",
        },
    )
    rates = {  # records per second per partition
        "checkout.orders": 40,
        "checkout.payments": 25,
        "checkout.cart-events": 220,  # a 1 h replay buffer for the cart service
        "checkout.clickstream": 450,
        "checkout.order-state": 30,  # compacted: the latest state per order id
        "__consumer_offsets": 12,  # offset commits
        "__transaction_state": 3,
    }
    b.topic("checkout.orders", 24, 3, configs={"retention.ms": "604800000"})
    b.topic("checkout.payments", 12, 3, configs={"retention.ms": "1209600000"})
    b.topic("checkout.cart-events", 24, 3, configs={"retention.ms": "3600000", "segment.ms": "600000"})
    b.topic("checkout.clickstream", 24, 3, configs={"retention.ms": "21600000", "segment.ms": "3600000"})
    b.topic(
        "checkout.order-state", 12, 3, configs={"cleanup.policy": "compact", "min.compaction.lag.ms": "60000"}
    )
    b.topic("__consumer_offsets", 50, 3, internal=True, configs={"cleanup.policy": "compact"})
    b.topic("__transaction_state", 50, 3, internal=True, configs={"cleanup.policy": "compact"})
    b.groups(
        [
            "order-fulfilment",
            "payment-reconciler",
            "cart-abandonment",
            "clickstream-sessionizer",
            "order-state-api",
        ]
    )
    b.clients([("apache-kafka-java", "3.7.1", 260), ("librdkafka", "2.6.1", 140)])
    b.t["controller"].append(
        {
            "mode": "kraft",
            "controller_id": 4001,
            "controller_epoch": 9,
            "voters": [4001, 4002, 4003],
            "reassignment_pending": False,
        }
    )
    # Three dedicated controllers, all caught up: the followers a few records behind the high watermark.
    b.quorum(
        leader=4001,
        voters=[4001, 4002, 4003],
        observers=[1, 2, 3, 4, 5, 6],
        high_watermark=2413920,
        behind={4002: 2, 4003: 4, 6: 9},
    )
    b.features(metadata_level=19, metadata_name="3.7-IV4", epoch=2204)
    replication_in_flight(b, rates)
    # Broker 6 restarted a few minutes ago and rejoined every ISR it belongs to: the leaders of the
    # partitions it follows expanded their ISRs (the meters' one-minute rate, decaying), none shrank.
    follows_6 = {r["leader"] for r in b.t["partitions"] if 6 in r["replicas"] and r["leader"] != 6}
    busy = std_metrics(16, 0.41, 0.37, 9, 1400, cpu=48.0)

    def per_broker(bid):
        return [
            *busy(bid),
            ("isr_shrink_rate", 0.0, "{}"),
            ("isr_expand_rate", 0.11 if bid in follows_6 else 0.0, "{}"),
            ("under_min_isr_partition_count", 0, "{}"),
        ]

    b.metrics(per_broker)
    # The controllers' own gauges (QuorumControllerMetrics): 1 on the quorum leader, 0 on the others.
    for node in (4001, 4002, 4003):
        for name, value in (
            ("active_controller_count", 1 if node == 4001 else 0),
            ("offline_partitions_count", 0),
        ):
            b.t["metrics"].append({"broker_id": node, "name": name, "labels": "{}", "value": float(value)})
    return b, [
        ("admin", "kafka-1.checkout.internal:9092"),
        ("kraft", "kafka-1.checkout.internal:9092"),
        ("metrics", "kafka-1.checkout.internal:7071"),
    ]


def sandbox_dev():
    """A dev KRaft cluster with one controller (node 9990) and three brokers: the brokers can restart
    one at a time, the controller only as a metadata outage (MNT005 at warning, preflight "outage")."""
    b = ClusterBuilder(
        "S4ndb0xD3vKr4ft1Ctl0Az",
        "sandbox-dev",
        seed=8,
        environment="dev",
        tier="tier-3",
        platform="apache",
        kafka_version="3.9.0",
        metadata_mode="kraft",
        az_count=1,
    )
    b.brokers(
        [1, 2, 3],
        racks=[],
        cores=4,
        version="3.9.0",
        host_fmt="sandbox-kafka-{id}.dev.internal",
        static={
            "num.network.threads": "3",
            "num.io.threads": "8",
            "default.replication.factor": "3",
            "min.insync.replicas": "2",
        },
    )
    b.topic("sandbox.orders", 6, 3)
    b.topic("sandbox.events", 6, 3)
    b.topic("__consumer_offsets", 50, 3, internal=True, configs={"cleanup.policy": "compact"})
    b.groups(["sandbox-orders-dev", "sandbox-events-dev"])
    b.clients([("apache-kafka-java", "3.9.0", 8)])
    b.t["controller"].append(
        {
            "mode": "kraft",
            "controller_id": 9990,
            "controller_epoch": 2,
            "voters": [9990],
            "reassignment_pending": False,
        }
    )
    b.quorum(leader=9990, voters=[9990], observers=[1, 2, 3], high_watermark=48211)
    b.features(metadata_level=21, metadata_name="3.9-IV0", epoch=31)
    b.metrics(std_metrics(4, 0.92, 0.9, 0, 12, cpu=6.0))
    return b, [
        ("admin", "sandbox-kafka-1.dev.internal:9092"),
        ("kraft", "sandbox-kafka-1.dev.internal:9092"),
        ("metrics", "sandbox-kafka-1.dev.internal:7071"),
    ]


BUILDERS = (
    payments_msk,
    logistics_jbod,
    ads_zk_legacy,
    search_ingest,
    inventory_prod,
    notifications_msk,
    checkout_prod,
    sandbox_dev,
)


def main(root: Path = ROOT) -> None:
    for sub in ("fleet", "variants"):
        if (root / sub).exists():
            shutil.rmtree(root / sub)
    for build in BUILDERS:
        builder, sources = build()
        print(builder.write(root / "fleet", sources))
    # Fixed variants: the same clusters after the remediation (not part of the fleet).
    fixed, sources = search_ingest(fixed=True)
    fixed.cluster.update(id="Se4rchIng3st0Xq1ZpL2kB", name="search-ingest-fixed")
    print(fixed.write(root / "variants", sources))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT)
