"""Declared schemas of the snapshot tables: the contract between collecting and checking.

Every table is declared once here, as Spark DDL types. The Parquet writer, the JSON Lines
reader, DuckDB and Spark all derive their types from this module; nothing is inferred.
Every table carries ``cluster_id`` so that a fleet is read as one scan per table.

The ``clusters`` and ``source_errors`` tables are not files: they are derived from each
snapshot's manifest.json at load time, so the manifest stays the single source of truth
for what a snapshot is and which of its sources failed.
"""

from __future__ import annotations

from dataclasses import dataclass

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # Spark DDL type: string, int, bigint, double, boolean, array<int>, array<string>
    doc: str = ""
    # Added after its table first shipped: a Parquet file written before lacks it and is read
    # with the column null (JSON Lines rows may always leave a column out).
    optional: bool = False


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    doc: str = ""
    from_manifest: bool = False

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)


def _t(name: str, doc: str, *cols: tuple | Column, from_manifest: bool = False) -> Table:
    columns = (Column("cluster_id", "string", "cluster id from the manifest"),) + tuple(
        c if isinstance(c, Column) else Column(*c) for c in cols
    )
    return Table(name, columns, doc, from_manifest)


TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        _t(
            "clusters",
            "one row per snapshot, from manifest.json",
            ("cluster_name", "string"),
            ("environment", "string"),
            ("tier", "string"),
            ("platform", "string", "apache | msk | confluent | strimzi"),
            ("kafka_version", "string"),
            ("metadata_mode", "string", "zookeeper | kraft"),
            ("msk_instance_type", "string", "kafka.m5.large etc. when platform is msk"),
            ("az_count", "int"),
            ("collected_at", "string"),
            (
                "msk_state",
                "string",
                "MSK: the cluster state DescribeClusterV2 reported (ACTIVE, MAINTENANCE, ...)",
            ),
            (
                "msk_operations",
                "string",
                "MSK: the cluster operations in progress (ListClusterOperationsV2), '; '-separated; null: none",
            ),
            (
                "msk_iam_auth",
                "boolean",
                "MSK: IAM client authentication enabled (DescribeClusterV2 ClientAuthentication.Sasl.Iam); "
                "null: unknown",
            ),
            from_manifest=True,
        ),
        _t(
            "source_errors",
            "one row per source that failed during collection, from manifest.json",
            ("source", "string"),
            ("target", "string"),
            ("message", "string"),
            from_manifest=True,
        ),
        _t(
            "brokers",
            "registered (live) brokers",
            ("broker_id", "int"),
            ("host", "string"),
            ("port", "int"),
            ("rack", "string"),
            ("cores", "int"),
            ("log_dirs", "array<string>"),
            ("version", "string"),
        ),
        _t(
            "configs",
            "every config entry, long form; secrets are never stored (value null, is_sensitive true)",
            (
                "entity_type",
                "string",
                "broker | topic | cluster_default | controller (a KRaft controller-only node's file)",
            ),
            (
                "entity_name",
                "string",
                "broker or controller node id, topic name, or '' for the cluster default",
            ),
            ("key", "string"),
            ("value", "string"),
            (
                "source",
                "string",
                "STATIC_BROKER_CONFIG | DYNAMIC_BROKER_CONFIG | DYNAMIC_DEFAULT_BROKER_CONFIG | TOPIC_CONFIG | DEFAULT_CONFIG",
            ),
            ("is_sensitive", "boolean"),
            ("file", "string", "file the value was read from, when it came from a file"),
            ("line", "int"),
        ),
        _t(
            "topics",
            "topics",
            ("topic", "string"),
            ("partitions", "int"),
            ("replication_factor", "int"),
            ("is_internal", "boolean"),
            ("topic_id", "string"),
        ),
        _t(
            "partitions",
            "partition state as the brokers serve it in metadata",
            ("topic", "string"),
            ("partition", "int"),
            ("leader", "int", "-1 when leaderless"),
            ("leader_epoch", "int"),
            ("replicas", "array<int>"),
            ("isr", "array<int>"),
            ("offline_replicas", "array<int>"),
            ("adding_replicas", "array<int>"),
            ("removing_replicas", "array<int>"),
        ),
        _t(
            "zk_state",
            "per-partition state znodes (/brokers/topics/T/partitions/P/state) as ZooKeeper holds them",
            ("topic", "string"),
            ("partition", "int"),
            ("leader", "int"),
            ("leader_epoch", "int"),
            ("isr", "array<int>"),
            ("controller_epoch", "int"),
            ("zk_version", "int"),
        ),
        _t(
            "controller",
            "the active controller: /controller and /controller_epoch (ZooKeeper) or the quorum (KRaft)",
            ("mode", "string", "zookeeper | kraft"),
            ("controller_id", "int", "-1 when there is none"),
            ("controller_epoch", "int"),
            ("voters", "array<int>", "KRaft quorum voters"),
            ("reassignment_pending", "boolean", "/admin/reassign_partitions exists"),
        ),
        _t(
            "quorum",
            "KRaft metadata quorum replicas (DescribeQuorum on __cluster_metadata-0, KIP-595): one row per voter "
            "and observer",
            ("node_id", "int"),
            ("role", "string", "voter | observer"),
            ("is_leader", "boolean"),
            ("log_end_offset", "bigint"),
            (
                "lag",
                "bigint",
                "the leader's high watermark minus this replica's log end offset (0 at or past it)",
            ),
            ("high_watermark", "bigint", "the quorum leader's high watermark of __cluster_metadata-0"),
            ("last_fetch_timestamp", "bigint", "ms since the epoch, leader's clock; null when unknown"),
            ("last_caught_up_timestamp", "bigint", "ms since the epoch, leader's clock; null when unknown"),
            ("fetch_age_ms", "bigint", "collection time minus last_fetch_timestamp"),
            ("caught_up_age_ms", "bigint", "collection time minus last_caught_up_timestamp"),
            ("directory_id", "string", "KIP-853 replica directory id"),
            ("endpoints", "array<string>", "KIP-853 controller endpoints, LISTENER://host:port"),
            ("source", "string", "describe_quorum"),
        ),
        _t(
            "kraft_nodes",
            "KRaft nodes as their properties files configure them (process.roles set): brokers, controllers and "
            "combined nodes; controller-only nodes appear nowhere else",
            ("node_id", "int"),
            ("process_roles", "array<string>", "broker, controller (sorted)"),
            ("quorum_voters", "string", "controller.quorum.voters as written (static quorum)"),
            (
                "quorum_bootstrap_servers",
                "string",
                "controller.quorum.bootstrap.servers as written (KIP-853)",
            ),
            ("file", "string"),
            Column(
                "quorum_fetch_timeout_ms",
                "bigint",
                "controller.quorum.fetch.timeout.ms as written (null: not set, Kafka's default 2000 applies)",
                optional=True,
            ),
        ),
        _t(
            "features",
            "finalized and supported feature levels (ApiVersions v3+, KIP-584): metadata.version, kraft.version ...",
            ("feature", "string"),
            (
                "finalized_level",
                "int",
                "null when not finalized (a feature at level 0 is not listed, KIP-1022)",
            ),
            ("version_name", "string", "metadata.version only: the release of the level, e.g. 3.7-IV2"),
            ("supported_min", "int", "the answering broker's supported range"),
            ("supported_max", "int"),
            ("finalized_epoch", "bigint"),
        ),
        _t(
            "log_dirs",
            "log directories per broker",
            ("broker_id", "int"),
            ("path", "string"),
            ("error", "string", "null when healthy, else the error (KAFKA_STORAGE_ERROR ...)"),
            ("device", "string"),
            ("total_bytes", "bigint"),
            ("used_bytes", "bigint"),
        ),
        _t(
            "log_dir_events",
            "pending log directory failure notifications (ZooKeeper /log_dir_event_notification): a broker "
            "reported a failed log dir and the controller has not processed it yet",
            ("broker_id", "int"),
            ("event", "string", "the znode name, e.g. log_dir_event_0000000003"),
            ("event_type", "int", "1 = LogDirFailure"),
        ),
        _t(
            "metrics",
            "broker metrics (Prometheus/JMX exporter samples), normalised names",
            ("broker_id", "int"),
            ("name", "string"),
            ("labels", "string", "JSON object"),
            ("value", "double"),
        ),
        _t(
            "replica_lag",
            "followers' replication lag per partition: kafka.server:type=FetcherLagMetrics,name=ConsumerLag,"
            "clientId=ReplicaFetcherThread-<fetcher>-<leader>,topic=T,partition=P (JMX exporter samples of the "
            "follower broker); no file when no scrape had it",
            ("broker_id", "int", "the follower that reports it"),
            ("topic", "string"),
            ("partition", "int"),
            (
                "leader_id",
                "int",
                "the broker the follower fetches from (the clientId's last number); null when not given",
            ),
            (
                "lag",
                "bigint",
                "the leader's high watermark minus the follower's next fetch offset at its last fetch, in "
                "messages (0 at or past it; AbstractFetcherThread.processFetchRequest)",
            ),
        ),
        _t(
            "log_end_offsets",
            "each broker's own log end offset per partition replica it hosts: kafka.log:type=Log,"
            "name=LogEndOffset,topic=T,partition=P (UnifiedLog's gauge; JMX exporter samples of that broker; a "
            "future replica's is-future gauge is not kept); no file when no scrape had it",
            ("broker_id", "int", "the broker whose log it is"),
            ("topic", "string"),
            ("partition", "int"),
            (
                "log_end_offset",
                "bigint",
                "the offset the next record appended to this replica gets, at the moment of the scrape",
            ),
            Column(
                "scraped_at_ms",
                "bigint",
                "when this broker's scrape was taken (ms since the epoch: a URL's fetch, a file's modification "
                "time); two rows of one replica at different times are two scrapes (MNT006 needs both to call "
                "a follower's gap lag that persists); null: unknown, one scrape",
                optional=True,
            ),
        ),
        _t(
            "client_software",
            "KIP-511 client software inventory per broker and listener",
            ("broker_id", "int"),
            ("listener", "string"),
            ("client_name", "string"),
            ("client_version", "string"),
            ("connections", "int"),
        ),
        _t(
            "consumer_groups",
            "consumer groups and their coordinator partition of __consumer_offsets",
            ("group_id", "string"),
            ("state", "string"),
            ("members", "int"),
            ("coordinator_partition", "int", "abs(String.hashCode(group_id)) % offsets.topic.num.partitions"),
        ),
    )
}

# Canonical metric names in the ``metrics`` table. Collectors map each exporter's names
# (JMX exporter, MSK open monitoring, node exporter) onto these; rules read only these.
METRICS: dict[str, str] = {
    "cpu_count": "logical CPUs of the broker host (node exporter: count of node_cpu_seconds_total{mode=idle})",
    "cpu_user_system_percent": "CPU user + system, percent of all cores (0-100)",
    "network_processor_avg_idle_percent": "kafka.network:type=SocketServer,name=NetworkProcessorAvgIdlePercent (0-1)",
    "request_handler_avg_idle_percent": "kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent (0-1)",
    "request_queue_size": "kafka.network:type=RequestChannel,name=RequestQueueSize",
    "connection_count": "kafka.server:type=socket-server-metrics,listener=L,name=connection-count; labels {listener}",
    "offline_log_directory_count": "kafka.log:type=LogManager,name=OfflineLogDirectoryCount",
    "raft_current_leader": "kafka.server:type=raft-metrics current-leader: the quorum leader this node sees (-1: none)",
    "raft_current_epoch": "kafka.server:type=raft-metrics current-epoch",
    "raft_high_watermark": "kafka.server:type=raft-metrics high-watermark of __cluster_metadata (-1: unknown)",
    "raft_log_end_offset": "kafka.server:type=raft-metrics log-end-offset of __cluster_metadata",
    "request_rate": "kafka.network:type=RequestMetrics,name=RequestsPerSec recent rate (req/s); labels {request, version}",
    "request_count": "the same meter's Count since the broker started; labels {request, version}",
    "deprecated_request_rate": "kafka.network:type=RequestMetrics,name=DeprecatedRequestsPerSec recent rate (Kafka 3.7-3.9); "
    "labels {request, version, client_software_name, client_software_version}",
    "deprecated_request_count": "the same meter's Count since the broker started; labels as deprecated_request_rate",
    # From CloudWatch (AWS/Kafka, auditor/collectors/msk_cloudwatch.py): labels {source, metric, stat}.
    "data_logs_disk_used_percent": "CloudWatch KafkaDataLogsDiskUsed: percent of the data-log disk used (0-100)",
    "under_replicated_partitions": "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions (CloudWatch)",
    "under_min_isr_partition_count": "kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount: partitions "
    "this broker leads with an ISR below their effective min.insync.replicas (JMX exporter per broker; CloudWatch)",
    "offline_partitions_count": "kafka.controller:type=KafkaController,name=OfflinePartitionsCount: JMX exporter per "
    "node (ZooKeeper: non-zero only on the active controller; KRaft: every controller, from its metadata image); "
    "CloudWatch cluster-wide (broker_id null)",
    "active_controller_count": "kafka.controller:type=KafkaController,name=ActiveControllerCount: 1 on the active "
    "controller (ZooKeeper: a broker; KRaft: the quorum leader, a controller node), else 0; JMX exporter per node; "
    "CloudWatch summed over the cluster (broker_id null)",
    "isr_shrink_rate": "kafka.server:type=ReplicaManager,name=IsrShrinksPerSec recent rate (ISR shrinks/s of the "
    "partitions this broker leads; the meter's one-minute rate, else five, else fifteen)",
    "isr_expand_rate": "kafka.server:type=ReplicaManager,name=IsrExpandsPerSec recent rate (as isr_shrink_rate)",
}

# Tables stored as files inside a snapshot directory.
FILE_TABLES = [t for t in TABLES.values() if not t.from_manifest]

_SCALARS = {"string", "int", "bigint", "double", "boolean"}


def element_type(ddl: str) -> str | None:
    if ddl.startswith("array<") and ddl.endswith(">"):
        return ddl[len("array<") : -1]
    return None


def spark_ddl(table: Table) -> str:
    return ", ".join(f"`{c.name}` {c.type}" for c in table.columns)


_DUCK = {"string": "VARCHAR", "int": "INTEGER", "bigint": "BIGINT", "double": "DOUBLE", "boolean": "BOOLEAN"}


def sql_string(value) -> str:
    """``value`` (a path, a name) as a SQL string literal, quotes doubled (DuckDB and Spark SQL)."""
    return "'" + str(value).replace("'", "''") + "'"


def duckdb_type(ddl: str) -> str:
    inner = element_type(ddl)
    return f"{_DUCK[inner]}[]" if inner else _DUCK[ddl]


def arrow_schema(table: Table):
    import pyarrow as pa

    scalar = {
        "string": pa.string(),
        "int": pa.int32(),
        "bigint": pa.int64(),
        "double": pa.float64(),
        "boolean": pa.bool_(),
    }

    def typ(ddl: str):
        inner = element_type(ddl)
        return pa.list_(scalar[inner]) if inner else scalar[ddl]

    return pa.schema([pa.field(c.name, typ(c.type)) for c in table.columns])


def python_check(ddl: str, value) -> bool:
    """Does a JSON value fit a declared type? (null always fits)"""
    if value is None:
        return True
    inner = element_type(ddl)
    if inner:
        return isinstance(value, list) and all(python_check(inner, v) for v in value)
    if ddl == "string":
        return isinstance(value, str)
    if ddl in ("int", "bigint"):
        if isinstance(value, bool) or not isinstance(value, int):
            return False
        limit = 2**31 if ddl == "int" else 2**63
        return -limit <= value < limit
    if ddl == "double":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if ddl == "boolean":
        return isinstance(value, bool)
    raise ValueError(f"undeclared type {ddl}")


assert all((element_type(c.type) or c.type) in _SCALARS for t in TABLES.values() for c in t.columns)
