"""Raw sources for the sample fleet: what the collectors would read on each cluster.

    python sample_configs/generate_sources.py     # rewrites sample_configs/sources/

Built from the same data as sample_configs/generate.py (its builders are imported, not
copied), so collecting these files reproduces the brokers, static broker configs, metrics
and client software rows of the committed snapshots (and, with the ZooKeeper dump loaded
into a ZooKeeper, the ZooKeeper-derived tables too: see below):

    kafka-audit collect --broker-config sample_configs/sources/payments-msk \\
                        --metrics sample_configs/sources/payments-msk/metrics.prom -o /tmp/payments

Per cluster (``sources/<cluster>/``):

* ``broker-<id>.properties``: the server.properties of every broker that has static configs
  (in ads-zk-legacy that includes broker 5, which is down: its registration is gone from
  ZooKeeper, so the snapshot's ``brokers`` table lists only 1-4).
* ``metrics.prom``: one scrape per broker in JMX exporter text (the jmx_exporter example
  config's lowercased Kafka names, the JVM's ``java_lang_OperatingSystem_*``, the
  ReplicaManager ISR meters' one-minute rates in jmx_exporter's default naming), each sample
  labelled ``broker_id`` as a Prometheus relabel rule adds it. Connection counts are split
  over the broker's network processors, as Kafka reports them. Where the snapshot has the
  replicas' log end offsets and the followers' ConsumerLag (checkout-prod), they are in it
  too, the log end offsets with the scrape's timestamp; ``metrics-2.prom`` holds the second
  scrape's log end offsets, so that collecting both files gives the two scrapes MNT006 reads.
* ``zookeeper.json`` (ZooKeeper-mode clusters only: payments-msk, logistics-jbod,
  ads-zk-legacy): the cluster's ZooKeeper tree as that Kafka version writes it, so that
  collecting it reproduces the snapshot's brokers (registration), topics, partitions,
  zk_state, controller and ZooKeeper configs (TOPIC_CONFIG, DYNAMIC_DEFAULT_BROKER_CONFIG)
  and the cluster id. ads-zk-legacy holds the incident-3 split-brain: broker 5's
  registration gone, ``__consumer_offsets-17`` at leader -1, ``ads.impressions-4``
  rewritten by a zombie controller (controller_epoch 42 > ``/controller_epoch`` 41).

The dump format (one JSON object, keys sorted)::

    {"chroot": "/ads",                       # where the cluster lives ("" = the root)
     "versions": {"/brokers/topics/ads.clicks/partitions/0/state": 7, ...},
     "znodes": {"/brokers/ids/1": "{...}",   # every znode below the chroot, sorted by
                "/brokers/seqid": null,      # path: its data as a UTF-8 string, null for
                ...}}                        # none (Kafka creates container znodes empty)

``versions`` holds each znode's data version (``stat.version``, the number of writes since
it was created) where it is not 0: the collector reports it as ``zk_state.zk_version``. The
znode data is what Kafka's ``kafka.zk.ZkData`` encoders write for that version: broker
registrations v4 (2.0) or v5 with ``features`` (2.7+), topic assignments v1 (before 2.4)
or v3 with ``topic_id``, ``adding_replicas``/``removing_replicas``, partition states,
``/controller`` v1 or v2 (3.4+, ``kraftControllerEpoch``), ``/controller_epoch``,
``/config/topics/T`` (every topic has one, empty when it has no overrides),
``/config/brokers/<default>``, ``/cluster/id`` and the empty roots a broker creates at
start. Registrations and ``/controller`` are ephemeral in Kafka; the loader creates them as
persistent znodes. Not in a dump, because ZooKeeper does not hold them: the brokers'
software version, topic ids on 2.0.1 (they came with 2.8), and the controller's own view
of leaders and offline replicas (the snapshot's ``partitions`` table, which differs from
``zk_state`` at ads.impressions-4 and knows logistics-jbod's failed log dir). The log dir
failure's ``/log_dir_event_notification`` znode is gone too: the controller deletes it once
handled.

Load a dump into a real ZooKeeper (tests/zk_server.py) and collect it:

    python -m tests.zk_server sample_configs/sources/ads-zk-legacy/zookeeper.json
        # starts a throwaway ZooKeeper on 127.0.0.1, loads the dump, prints
        # "--zookeeper 127.0.0.1:PORT/ads" and serves until Ctrl-C
    python -m tests.zk_server sample_configs/sources/ads-zk-legacy/zookeeper.json --zookeeper HOST:PORT
        # loads it into a ZooKeeper you run (under its chroot) and exits
    kafka-audit collect --zookeeper 127.0.0.1:PORT/ads \\
        --broker-config sample_configs/sources/ads-zk-legacy \\
        --metrics sample_configs/sources/ads-zk-legacy/metrics.prom --cluster-name ads-zk-legacy -o /tmp/ads

From Python: ``tests.zk_server.load_dump(kazoo_client, path_or_dict, chroot=None)``.
tests/test_sample_sources.py does exactly this and compares the collected tables with the
committed snapshot.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

import generate  # noqa: E402  (sample_configs/generate.py: the builders)

OUT = ROOT / "sources"

# canonical metric -> (sample name, type, help); values are written as the exporter would.
_SAMPLES = {
    "network_processor_avg_idle_percent": (
        "kafka_network_socketserver_networkprocessoravgidlepercent",
        "gauge",
        "Attribute exposed for management kafka.network:name="
        "NetworkProcessorAvgIdlePercent,type=SocketServer,attribute=Value",
    ),
    "request_handler_avg_idle_percent": (
        "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_oneminuterate",
        "gauge",
        "Attribute exposed for management kafka.server:name="
        "RequestHandlerAvgIdlePercent,type=KafkaRequestHandlerPool,"
        "attribute=OneMinuteRate",
    ),
    "request_queue_size": (
        "kafka_network_requestchannel_requestqueuesize",
        "gauge",
        "Attribute exposed for management kafka.network:name=RequestQueueSize,"
        "type=RequestChannel,attribute=Value",
    ),
    "offline_log_directory_count": (
        "kafka_log_logmanager_offlinelogdirectorycount",
        "gauge",
        "Attribute exposed for management kafka.log:name=OfflineLogDirectoryCount,"
        "type=LogManager,attribute=Value",
    ),
    "cpu_count": (
        "java_lang_OperatingSystem_AvailableProcessors",
        "untyped",
        "AvailableProcessors (java.lang<type=OperatingSystem><>AvailableProcessors)",
    ),
    "cpu_user_system_percent": (
        "java_lang_OperatingSystem_SystemCpuLoad",
        "untyped",
        "SystemCpuLoad (java.lang<type=OperatingSystem><>SystemCpuLoad)",
    ),
    # jmx_exporter's example config: the meter's OneMinuteRate, the bean's name as a label.
    "isr_shrink_rate": (
        "kafka_server_replicamanager_oneminuterate",
        "gauge",
        "Attribute exposed for management kafka.server:name=IsrShrinksPerSec,type=ReplicaManager,"
        "attribute=OneMinuteRate",
        {"name": "IsrShrinksPerSec"},
    ),
    "isr_expand_rate": (
        "kafka_server_replicamanager_oneminuterate",
        "gauge",
        "Attribute exposed for management kafka.server:name=IsrExpandsPerSec,type=ReplicaManager,"
        "attribute=OneMinuteRate",
        {"name": "IsrExpandsPerSec"},
    ),
    # kafka-2_0_0.yml / Strimzi's generic gauge rule (lowercased)
    "under_min_isr_partition_count": (
        "kafka_server_replicamanager_underminisrpartitioncount",
        "gauge",
        "Attribute exposed for management kafka.server:name=UnderMinIsrPartitionCount,type=ReplicaManager,"
        "attribute=Value",
    ),
    "active_controller_count": (
        "kafka_controller_kafkacontroller_activecontrollercount",
        "gauge",
        "Attribute exposed for management kafka.controller:name=ActiveControllerCount,type=KafkaController,"
        "attribute=Value",
    ),
    "offline_partitions_count": (
        "kafka_controller_kafkacontroller_offlinepartitionscount",
        "gauge",
        "Attribute exposed for management kafka.controller:name=OfflinePartitionsCount,type=KafkaController,"
        "attribute=Value",
    ),
}
# Each replica's log end offset and each follower's fetcher lag (kafka-2_0_0.yml / Strimzi naming): the
# samples carry the scrape's timestamp (ms), as a saved or federated scrape does, so that the two scrapes
# of the busy sample cluster (metrics.prom, metrics-2.prom) stay two scrapes when collected.
_LOG_END_OFFSET = (
    "kafka_log_log_logendoffset",
    "gauge",
    "Attribute exposed for management kafka.log:name=LogEndOffset,type=Log,attribute=Value",
)
_CONSUMER_LAG = (
    "kafka_server_fetcherlagmetrics_consumerlag",
    "gauge",
    "Attribute exposed for management kafka.server:name=ConsumerLag,type=FetcherLagMetrics,attribute=Value",
)
_CONNECTIONS = (
    "kafka_server_socketservermetrics_connection_count",
    "gauge",
    "The current number of active connections. kafka.server:type=socket-server-metrics",
)
_SOFTWARE = (
    "kafka_server_socketservermetrics_connections",
    "gauge",
    "The number of connections with this client and version. kafka.server:type=socket-server-metrics",
)


def _num(v: float) -> str:
    return repr(float(v))


def _labels(d: dict) -> str:
    # The JMX exporter writes a trailing comma inside the braces.
    return "{" + "".join(f'{k}="{v}",' for k, v in d.items()) + "}"


def _split(total: int, parts: int) -> list[int]:
    parts = max(1, parts)
    base, extra = divmod(int(total), parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def server_properties(cluster: str, broker: str, rows: list[dict]) -> str:
    lines = [
        f"# server.properties of broker {broker} in {cluster}",
        "# generated by sample_configs/generate_sources.py from sample_configs/generate.py",
        "",
    ]
    lines += [f"{r['key']}={r['value']}" for r in rows]
    return "\n".join(lines) + "\n"


def metrics_text(t: dict[str, list[dict]], threads: dict[int, int]) -> str:
    by_metric: dict[str, list[str]] = defaultdict(list)
    for m in t["metrics"]:
        bid, labels = m["broker_id"], json.loads(m["labels"])
        if m["name"] == "connection_count":
            for proc, n in enumerate(_split(m["value"], threads.get(bid, 1))):
                by_metric["connection_count"].append(
                    _CONNECTIONS[0]
                    + _labels({"broker_id": bid, **labels, "networkProcessor": proc})
                    + " "
                    + _num(n)
                )
            continue
        sample, _typ, _help, *extra = _SAMPLES[m["name"]]
        value = m["value"] / 100.0 if m["name"] == "cpu_user_system_percent" else m["value"]
        by_metric[m["name"]].append(
            sample + _labels({"broker_id": bid, **(extra[0] if extra else {}), **labels}) + " " + _num(value)
        )
    for c in t["client_software"]:
        bid = c["broker_id"]
        for proc, n in enumerate(_split(c["connections"], threads.get(bid, 1))):
            if n:
                by_metric["client_software"].append(
                    _SOFTWARE[0]
                    + _labels(
                        {
                            "broker_id": bid,
                            "clientSoftwareName": c["client_name"],
                            "clientSoftwareVersion": c["client_version"],
                            "listener": c["listener"],
                            "networkProcessor": proc,
                        }
                    )
                    + " "
                    + _num(n)
                )
    for r in t.get("replica_lag", []):
        by_metric["replica_lag"].append(
            _CONSUMER_LAG[0]
            + _labels(
                {
                    "broker_id": r["broker_id"],
                    "clientId": f"ReplicaFetcherThread-0-{r['leader_id']}",
                    "topic": r["topic"],
                    "partition": r["partition"],
                }
            )
            + " "
            + _num(r["lag"])
        )
    by_metric.update(log_end_offset_lines(t, first=True))
    return family_text(by_metric)


def log_end_offset_lines(t: dict[str, list[dict]], *, first: bool) -> dict[str, list[str]]:
    """The log end offset samples of each broker's first (or second) scrape, each with its timestamp."""
    scrapes: dict[int, list[int]] = defaultdict(list)
    for r in t.get("log_end_offsets", []):
        if r["scraped_at_ms"] not in scrapes[r["broker_id"]]:
            scrapes[r["broker_id"]].append(r["scraped_at_ms"])
    lines = [
        _LOG_END_OFFSET[0]
        + _labels({"broker_id": r["broker_id"], "topic": r["topic"], "partition": r["partition"]})
        + f" {_num(r['log_end_offset'])} {r['scraped_at_ms']}"
        for r in t.get("log_end_offsets", [])
        if r["scraped_at_ms"] == sorted(scrapes[r["broker_id"]])[0 if first else -1]
    ]
    return {"log_end_offsets": lines} if lines else {}


def family_text(by_metric: dict[str, list[str]]) -> str:
    out = []
    seen = set()
    for name, lines in by_metric.items():
        sample, typ, help_, *_ = (
            _CONNECTIONS
            if name == "connection_count"
            else _SOFTWARE
            if name == "client_software"
            else _CONSUMER_LAG
            if name == "replica_lag"
            else _LOG_END_OFFSET
            if name == "log_end_offsets"
            else _SAMPLES[name]
        )
        if sample not in seen:  # one HELP/TYPE per family (the two ISR meters share one)
            out += [f"# HELP {sample} {help_}", f"# TYPE {sample} {typ}"]
            seen.add(sample)
        out += lines
    return "\n".join(out) + "\n"


# -- ZooKeeper ------------------------------------------------------------------------------

# Empty znodes a ZooKeeper-mode broker creates at start (kafka.zk.ZkData.PersistentZkPaths:
# the fixed ones plus /config/<type> for every ConfigType; "ips" exists from 3.0 on).
_PERSISTENT = (
    "/consumers",
    "/brokers/ids",
    "/brokers/topics",
    "/config/changes",
    "/admin/delete_topics",
    "/brokers/seqid",
    "/isr_change_notification",
    "/latest_producer_id_block",
    "/log_dir_event_notification",
    "/config/topics",
    "/config/clients",
    "/config/users",
    "/config/brokers",
)
# metadata.version range a ZooKeeper-mode broker advertises in its registration's "features"
# (BrokerFeatures.createDefault: MINIMUM_KRAFT_VERSION IBP_3_0_IV1 = 1 .. MetadataVersion.latest()).
_METADATA_VERSION_LEVEL = {(3, 5): 11, (3, 6): 14}  # IBP_3_5_IV2, IBP_3_6_IV2
_COLLECTED_MS = int(datetime.fromisoformat(generate.COLLECTED_AT.replace("Z", "+00:00")).timestamp() * 1000)


def _kafka_version(v: str) -> tuple[int, int]:
    major, minor = v.split(".")[:2]
    return int(major), int(minor)


def _enc(obj) -> str:
    # Kafka's Json.encodeAsBytes (Jackson): compact, no spaces.
    return json.dumps(obj, separators=(",", ":"))


def _registration(b: dict, version: tuple[int, int], msk: bool, timestamp_ms: int) -> str:
    """/brokers/ids/N as BrokerIdZNode.encode writes it: v4 before 2.7, v5 (with features) after.
    The top-level host/port are those of the first PLAINTEXT listener (CLIENT here, the
    listener the sample metrics and client software rows name)."""
    host, port = b["host"], b["port"]
    listeners = [("CLIENT", "PLAINTEXT", port)]
    if msk:
        listeners.append(("CLIENT_IAM", "SASL_SSL", 9098))  # the admin source's port in generate.py
    listeners.append(("REPLICATION", "PLAINTEXT", 9093))
    reg = {
        "listener_security_protocol_map": {name: proto for name, proto, _ in listeners},
        "endpoints": [f"{name}://{host}:{p}" for name, _, p in listeners],
    }
    if b["rack"] is not None:
        reg["rack"] = b["rack"]
    reg["jmx_port"] = -1
    if version >= (2, 7):
        if version >= (3, 3):
            level = _METADATA_VERSION_LEVEL[version]  # KeyError: add the release's MetadataVersion.latest()
            reg["features"] = {"metadata.version": {"min_version": 1, "max_version": level}}
        else:
            reg["features"] = {}
    reg.update(host=host, timestamp=str(timestamp_ms), port=port, version=5 if version >= (2, 7) else 4)
    return _enc(reg)


def zookeeper_dump(builder, sources) -> dict:
    """The ZooKeeper tree of a ZooKeeper-mode sample cluster (format: module docstring)."""
    t, cluster = builder.t, builder.cluster
    version = _kafka_version(cluster["kafka_version"])
    target = next((tgt for src, tgt in sources if src == "zookeeper"), "")
    chroot = "/" + target.split("/", 1)[1].strip("/") if "/" in target else ""  # MSK: no chroot
    nodes: dict[str, str | None] = {p: None for p in _PERSISTENT}
    if version >= (3, 0):
        nodes["/config/ips"] = None
    nodes["/cluster/id"] = _enc({"version": "1", "id": cluster["id"]})

    # Registrations: brokers restarted one after another nine days before the collection.
    started = _COLLECTED_MS - 9 * 86_400_000
    registered_at = {}
    for i, b in enumerate(sorted(t["brokers"], key=lambda r: r["broker_id"])):
        registered_at[b["broker_id"]] = started + i * 97_000
        nodes[f"/brokers/ids/{b['broker_id']}"] = _registration(
            b, version, cluster.get("platform") == "msk", registered_at[b["broker_id"]]
        )
    (ctl,) = t["controller"]
    controller = {
        "version": 2 if version >= (3, 4) else 1,
        "brokerid": ctl["controller_id"],
        "timestamp": str(registered_at.get(ctl["controller_id"], started) + 31_000),
    }
    if version >= (3, 4):
        controller["kraftControllerEpoch"] = -1  # -1: not a KRaft controller (no migration)
    nodes["/controller"] = _enc(controller)
    nodes["/controller_epoch"] = str(ctl["controller_epoch"])
    # A pending reassignment would be /admin/reassign_partitions; the samples have none.
    assert not ctl["reassignment_pending"]

    # Topics: the assignment, every partition's state, the topic's config znode (always there).
    by_topic: dict[str, list[dict]] = defaultdict(list)
    for r in t["partitions"]:
        by_topic[r["topic"]].append(r)
    zk_configs: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)  # (source, entity) -> config
    for c in t["configs"]:
        if c["source"] in ("TOPIC_CONFIG", "DYNAMIC_BROKER_CONFIG", "DYNAMIC_DEFAULT_BROKER_CONFIG"):
            zk_configs[(c["source"], c["entity_name"])][c["key"]] = c["value"]
    for topic in t["topics"]:
        name = topic["topic"]
        parts = sorted(by_topic[name], key=lambda r: r["partition"])
        assignment = {str(r["partition"]): r["replicas"] for r in parts}
        # The fleet has 2.0.1, 3.5.1 and 3.6.0: v1 before KIP-455 (2.4), v3 with topic_id in 3.x.
        if version < (2, 4):
            doc = {"version": 1, "partitions": assignment}
        else:
            doc = {
                "partitions": assignment,
                "topic_id": topic["topic_id"],
                "adding_replicas": {
                    str(r["partition"]): r["adding_replicas"] for r in parts if r["adding_replicas"]
                },
                "removing_replicas": {
                    str(r["partition"]): r["removing_replicas"] for r in parts if r["removing_replicas"]
                },
                "version": 3,
            }
        nodes[f"/brokers/topics/{name}"] = _enc(doc)
        nodes[f"/config/topics/{name}"] = _enc(
            {"version": 1, "config": zk_configs.get(("TOPIC_CONFIG", name), {})}
        )
    versions = {}
    for z in t["zk_state"]:
        path = f"/brokers/topics/{z['topic']}/partitions/{z['partition']}/state"
        nodes[path] = _enc(
            {
                "controller_epoch": z["controller_epoch"],
                "leader": z["leader"],
                "version": 1,
                "leader_epoch": z["leader_epoch"],
                "isr": z["isr"],
            }
        )
        if z["zk_version"]:
            versions[path] = z["zk_version"]

    # Dynamic broker configs (kafka-configs --alter --entity-type brokers --entity-name N | --entity-default).
    for (source, entity), cfg in zk_configs.items():
        if source == "DYNAMIC_BROKER_CONFIG":
            nodes[f"/config/brokers/{entity}"] = _enc({"version": 1, "config": cfg})
        elif source == "DYNAMIC_DEFAULT_BROKER_CONFIG":
            nodes["/config/brokers/<default>"] = _enc({"version": 1, "config": cfg})

    for path in list(nodes):  # container znodes (/brokers, .../partitions, .../partitions/P): no data
        parts = path.strip("/").split("/")
        for i in range(1, len(parts)):
            nodes.setdefault("/" + "/".join(parts[:i]), None)
    return {"chroot": chroot, "versions": versions, "znodes": nodes}


def dump_text(dump: dict) -> str:
    return json.dumps(dump, indent=1, sort_keys=True) + "\n"


def cluster_files(build) -> tuple[str, dict[str, str]]:
    builder, sources = build()
    t = builder.t
    name = builder.cluster["name"]
    static: dict[str, list[dict]] = defaultdict(list)
    for r in t["configs"]:
        if r["entity_type"] == "broker" and r["source"] == "STATIC_BROKER_CONFIG":
            static[r["entity_name"]].append(r)
    files = {
        f"broker-{b}.properties": server_properties(name, b, rows)
        for b, rows in sorted(static.items(), key=lambda kv: int(kv[0]))
    }
    threads = {
        int(b): int(next((r["value"] for r in rows if r["key"] == "num.network.threads"), 3))
        for b, rows in static.items()
    }
    if t["metrics"]:
        files["metrics.prom"] = metrics_text(t, threads)
    if t.get("log_end_offsets"):  # the second scrape of each broker: its log end offsets (MNT006)
        files["metrics-2.prom"] = family_text(log_end_offset_lines(t, first=False))
    if builder.cluster.get("metadata_mode") == "zookeeper":
        files["zookeeper.json"] = dump_text(zookeeper_dump(builder, sources))
    return name, files


def main(out: Path = OUT) -> None:
    if out.exists():
        shutil.rmtree(out)
    for build in generate.BUILDERS:
        name, files = cluster_files(build)
        d = out / name
        d.mkdir(parents=True)
        for fname, text in files.items():
            (d / fname).write_text(text)
        print(d)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
