"""Seeded synthetic fleet generator: snapshot directories in the project's own format.

    python bench/fleetgen.py OUT --clusters 200 --topics 500 --partitions 10 [--seed 1] [--down-every N]

writes OUT/dt=2026-11-22/cluster=cNNN/{manifest.json,<table>.parquet} for N clusters x T topics
x P partitions. Rows are built per table with numpy and pyarrow (vectorised; no per-row Python)
and written with pyarrow.parquet against auditor.snapshot.schema.arrow_schema; the manifest is
written last and atomically, exactly as auditor.snapshot.io.write_snapshot does (whose per-row
Python validation would take minutes at 10M partitions).

Shares (per cluster, seeded): ~10% of topics with overrides (min.insync.replicas, retention.ms,
cleanup.policy; a few min.insync.replicas == RF), ~1% under-replicated partitions (one replica out
of the ISR, half of them also offline), ~0.1% leaderless, 6-12 brokers over 3 racks, ~20% JBOD
clusters (4 log dirs per broker, now and then one with KAFKA_STORAGE_ERROR), ~30% ZooKeeper
clusters (with zk_state), ~25% MSK, client inventories per broker (including old sarama and old
Java clients), 7 metrics per broker, one controller row per cluster, environment/tier in manifests.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from auditor.snapshot.io import MANIFEST, Manifest  # noqa: E402
from auditor.snapshot.schema import TABLES, arrow_schema  # noqa: E402

RUN_DATE = "2026-11-22"
ENVS = np.array(["prod", "staging", "dev"])
TIERS = np.array(["tier-1", "tier-2", "tier-3"])
VERSIONS = ["3.7.1", "3.6.1", "3.5.1", "3.4.0", "2.8.2", "2.0.1"]
PREFIXES = np.array(["orders", "payments", "shipments", "clicks", "search", "inventory", "users", "audit"])
SUFFIXES = np.array(["events", "commands", "changelog", "dlq", "snapshots"])
CLIENTS = [  # (name, version, weight)
    ("apache-kafka-java", "3.7.1", 5),
    ("apache-kafka-java", "3.5.1", 3),
    ("apache-kafka-java", "2.0.1", 1),
    ("librdkafka", "2.4.0", 4),
    ("confluent-kafka-go", "2.3.0", 2),
    ("confluent-kafka-python", "2.3.0", 2),
    ("sarama", "1.27.0", 1),
    ("sarama", "1.45.0", 2),
]


def _list(values: np.ndarray, lengths: np.ndarray) -> pa.ListArray:
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.ListArray.from_arrays(
        pa.array(offsets, pa.int32()), pa.array(values.astype(np.int32), pa.int32())
    )


def _write(out: Path, name: str, cols: dict, n: int, cluster_id: str) -> str:
    schema = arrow_schema(TABLES[name])
    arrays = []
    for f in schema:
        if f.name == "cluster_id":
            arrays.append(pa.array(np.full(n, cluster_id, dtype=object), pa.string()))
        else:
            v = cols.get(f.name)
            if v is None:
                arrays.append(pa.nulls(n, f.type))
            elif isinstance(v, pa.Array | pa.ChunkedArray):
                arrays.append(v.cast(f.type) if not v.type.equals(f.type) else v)
            else:
                arrays.append(pa.array(v, f.type))
    pq.write_table(pa.Table.from_arrays(arrays, schema=schema), out / f"{name}.parquet")
    return f"{name}.parquet"


def gen_cluster(
    out: Path, idx: int, topics: int, parts: int, rng: np.random.Generator, mirror_every: int = 50
) -> int:
    cid = f"bench-{idx:04d}-{rng.integers(1 << 40):010x}"
    platform = "msk" if rng.random() < 0.25 else "apache"
    mode = "kraft" if platform == "apache" and rng.random() < 0.6 else "zookeeper"
    version = (
        VERSIONS[int(rng.integers(0, 4))]
        if mode == "kraft"
        else VERSIONS[int(rng.integers(0, len(VERSIONS)))]
    )
    jbod = platform == "apache" and rng.random() < 0.2
    nb = int(rng.integers(6, 13))
    out.mkdir(parents=True, exist_ok=True)
    files = {}

    # brokers
    bids = np.arange(1, nb + 1, dtype=np.int32)
    racks = np.array(["az-a", "az-b", "az-c"])[(bids - 1) % 3]
    dirs_per = 4 if jbod else 1
    paths = [f"/data/kafka-{j + 1}" for j in range(dirs_per)]
    cores = int(rng.choice([4, 8, 16]))
    files["brokers"] = _write(
        out,
        "brokers",
        {
            "broker_id": bids,
            "host": [f"kafka-{b}.{cid}.internal" for b in bids],
            "port": np.full(nb, 9092),
            "rack": racks,
            "cores": np.full(nb, cores),
            "log_dirs": [paths] * nb,
            "version": [version] * nb,
        },
        nb,
        cid,
    )

    # topics: RF 3 mostly, some 2, a few 1
    rf = rng.choice(np.array([3, 2, 1], dtype=np.int32), size=topics, p=[0.9, 0.08, 0.02])
    # names are per cluster, except ~2% mirrored topics whose names recur across the fleet
    base = np.char.add(
        np.char.add(PREFIXES[np.arange(topics) % len(PREFIXES)], "."),
        SUFFIXES[(np.arange(topics) // len(PREFIXES)) % len(SUFFIXES)],
    )
    own = np.char.add(np.char.add(f"c{idx}.", base), np.char.add("-", np.arange(topics).astype(str)))
    mirrored = np.char.add("mirror.", np.char.add(base, np.char.add("-", np.arange(topics).astype(str))))
    tnames = np.where(np.arange(topics) % mirror_every == 0, mirrored, own)
    tname_arr = pa.array(tnames.astype(object), pa.string())
    files["topics"] = _write(
        out,
        "topics",
        {
            "topic": tname_arr,
            "partitions": np.full(topics, parts, dtype=np.int32),
            "replication_factor": rf,
            "is_internal": np.zeros(topics, dtype=bool),
            "topic_id": pa.array([f"{cid[-10:]}{i:012x}" for i in range(topics)], pa.string()),
        },
        topics,
        cid,
    )

    # partitions: replicas round-robin from a random start broker
    n = topics * parts
    tix = np.repeat(np.arange(topics), parts)
    pno = np.tile(np.arange(parts, dtype=np.int32), topics)
    prf = rf[tix]
    # rack-aware (consecutive brokers span the 3 racks) except ~2% of partitions, which wrap around
    start = np.where(rng.random(n) < 0.98, rng.integers(0, nb - 2, size=n), rng.integers(0, nb, size=n))
    k = np.arange(3)
    rep_full = (start[:, None] + k[None, :]) % nb + 1  # n x 3
    mask = k[None, :] < prf[:, None]
    replicas_vals = rep_full[mask]
    under = (rng.random(n) < 0.01) & (prf > 1)
    leaderless = rng.random(n) < 0.001
    isr_len = prf - under.astype(np.int32)
    isr_len = np.where(leaderless, 0, isr_len)
    isr_mask = k[None, :] < isr_len[:, None]
    isr_vals = rep_full[isr_mask]
    offline = under & (rng.random(n) < 0.5)
    last = rep_full[np.arange(n), np.maximum(prf - 1, 0)]
    leader = np.where(leaderless, -1, rep_full[:, 0]).astype(np.int32)
    epoch = rng.integers(0, 60, size=n).astype(np.int32)
    empty = _list(np.zeros(0), np.zeros(n, dtype=np.int32))
    topic_col = tname_arr.take(pa.array(tix))
    files["partitions"] = _write(
        out,
        "partitions",
        {
            "topic": topic_col,
            "partition": pno,
            "leader": leader,
            "leader_epoch": epoch,
            "replicas": _list(replicas_vals, prf),
            "isr": _list(isr_vals, isr_len),
            "offline_replicas": _list(last[offline], offline.astype(np.int32)),
            "adding_replicas": empty,
            "removing_replicas": empty,
        },
        n,
        cid,
    )
    if mode == "zookeeper":
        files["zk_state"] = _write(
            out,
            "zk_state",
            {
                "topic": topic_col,
                "partition": pno,
                "leader": leader,
                "leader_epoch": epoch,
                "isr": _list(isr_vals, isr_len),
                "controller_epoch": np.full(n, 7, dtype=np.int32),
                "zk_version": epoch,
            },
            n,
            cid,
        )

    # configs: broker static configs, a cluster default, ~10% topics with 1-3 overrides
    bkeys = [
        ("broker.rack", None),
        ("default.replication.factor", "3"),
        ("min.insync.replicas", "2"),
        ("num.io.threads", "8"),
        ("num.network.threads", "3"),
        ("unclean.leader.election.enable", "false"),
        ("auto.create.topics.enable", "false"),
        ("log.dirs", ",".join(paths)),
    ]
    rows = [
        ("broker", str(b), kk, r if vv is None else vv, "STATIC_BROKER_CONFIG")
        for b, r in zip(bids, racks, strict=True)
        for kk, vv in bkeys
    ]
    rows.append(("cluster_default", "", "log.retention.hours", "168", "DYNAMIC_DEFAULT_BROKER_CONFIG"))
    over = np.flatnonzero(rng.random(topics) < 0.10)
    ok = rng.random((len(over), 3)) < np.array([0.6, 0.5, 0.3])
    ok[~ok.any(axis=1), 1] = True
    mir = np.where(rng.random(len(over)) < 0.05, rf[over], np.minimum(2, rf[over]))  # a few min.isr == RF
    ret = rng.choice(np.array(["86400000", "604800000", "-1", "259200000"]), size=len(over))
    pol = rng.choice(np.array(["compact", "delete", "compact,delete"]), size=len(over))
    for j, t in enumerate(over):
        for c, (kk, vv) in enumerate(
            (("min.insync.replicas", str(mir[j])), ("retention.ms", ret[j]), ("cleanup.policy", pol[j]))
        ):
            if ok[j, c]:
                rows.append(("topic", str(tnames[t]), kk, str(vv), "TOPIC_CONFIG"))
    e_type, e_name, key, value, source = (list(x) for x in zip(*rows, strict=True))
    m = len(key)
    files["configs"] = _write(
        out,
        "configs",
        {
            "entity_type": e_type,
            "entity_name": e_name,
            "key": key,
            "value": value,
            "source": source,
            "is_sensitive": np.zeros(m, dtype=bool),
        },
        m,
        cid,
    )

    # log_dirs: one per broker, 4 on JBOD, an error now and then
    ld_b = np.repeat(bids, dirs_per)
    ld_p = paths * nb
    nd = len(ld_b)
    err = np.where(rng.random(nd) < (0.02 if jbod else 0.002), "KAFKA_STORAGE_ERROR", None)
    total = np.full(nd, 2_000_000_000_000, dtype=np.int64)
    files["log_dirs"] = _write(
        out,
        "log_dirs",
        {
            "broker_id": ld_b,
            "path": ld_p,
            "error": err.tolist(),
            "device": [f"nvme{j + 1}n1" for j in range(dirs_per)] * nb,
            "total_bytes": total,
            "used_bytes": (total * rng.uniform(0.2, 0.95, nd)).astype(np.int64),
        },
        nd,
        cid,
    )

    # metrics: 7 canonical names per broker
    names = [
        "cpu_count",
        "cpu_user_system_percent",
        "network_processor_avg_idle_percent",
        "request_handler_avg_idle_percent",
        "request_queue_size",
        "connection_count",
        "offline_log_directory_count",
    ]
    mb = np.repeat(bids, len(names))
    mn = names * nb
    vals = (
        np.column_stack(
            [
                np.full(nb, cores),
                rng.uniform(5, 95, nb),
                rng.uniform(0.05, 0.9, nb),
                rng.uniform(0.05, 0.9, nb),
                rng.integers(0, 600, nb),
                rng.integers(50, 3000, nb),
                (err.reshape(nb, dirs_per) != None).sum(axis=1),  # noqa: E711  (numpy: element-wise)
            ]
        )
        .ravel()
        .astype(float)
    )
    labels = ['{"listener":"CLIENT"}' if x == "connection_count" else "{}" for x in mn]
    files["metrics"] = _write(
        out, "metrics", {"broker_id": mb, "name": mn, "labels": labels, "value": vals}, len(mb), cid
    )

    # client_software: 3-6 clients per broker
    w = np.array([c[2] for c in CLIENTS], dtype=float)
    cb, cl = [], []
    for b in bids:
        for c in rng.choice(len(CLIENTS), size=int(rng.integers(3, 7)), replace=False, p=w / w.sum()):
            cb.append(b)
            cl.append(c)
    nc = len(cb)
    files["client_software"] = _write(
        out,
        "client_software",
        {
            "broker_id": cb,
            "listener": ["CLIENT"] * nc,
            "client_name": [CLIENTS[c][0] for c in cl],
            "client_version": [CLIENTS[c][1] for c in cl],
            "connections": rng.integers(1, 300, nc).astype(np.int32),
        },
        nc,
        cid,
    )

    # consumer groups
    ng = max(5, topics // 20)
    files["consumer_groups"] = _write(
        out,
        "consumer_groups",
        {
            "group_id": [f"group-{g}" for g in range(ng)],
            "state": rng.choice(np.array(["Stable", "Stable", "Stable", "Empty", "PreparingRebalance"]), ng),
            "members": rng.integers(0, 24, ng).astype(np.int32),
            "coordinator_partition": rng.integers(0, 50, ng).astype(np.int32),
        },
        ng,
        cid,
    )

    # controller
    files["controller"] = _write(
        out,
        "controller",
        {
            "mode": [mode],
            "controller_id": [-1 if rng.random() < 0.01 else int(rng.integers(1, 4))],
            "controller_epoch": [7],
            "voters": [[1, 2, 3] if mode == "kraft" else []],
            "reassignment_pending": [False],
        },
        1,
        cid,
    )

    errors = []
    if rng.random() < 0.02:
        errors.append({"source": "metrics", "target": "jmx-exporter:7071", "message": "connection refused"})
    manifest = Manifest(
        cluster={
            "id": cid,
            "name": f"cluster-{idx:04d}",
            "environment": str(ENVS[idx % 3]),
            "tier": str(TIERS[int(rng.integers(0, 3))]),
            "platform": platform,
            "kafka_version": version,
            "metadata_mode": mode,
            "az_count": 3,
            **({"msk_instance_type": "kafka.m5.large"} if platform == "msk" else {}),
        },
        collected_at=f"{RUN_DATE}T06:00:00Z",
        sources=[{"source": "admin", "target": f"kafka-1.{cid}.internal:9092", "status": "ok"}],
        errors=errors,
        tables=dict(sorted(files.items())),
    )
    tmp = out / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest.to_json(), indent=2) + "\n", encoding="utf-8")
    tmp.replace(out / MANIFEST)
    return n


def generate(
    root: str | Path, clusters: int, topics: int, partitions: int, seed: int = 1, mirror_every: int = 50
) -> int:
    root = Path(root)
    total = 0
    for i in range(clusters):
        rng = np.random.default_rng([seed, i])
        total += gen_cluster(
            root / f"dt={RUN_DATE}" / f"cluster=c{i:04d}", i, topics, partitions, rng, mirror_every
        )
    (root / "_fleetgen.json").write_text(
        json.dumps(
            {
                "clusters": clusters,
                "topics": topics,
                "partitions": partitions,
                "seed": seed,
                "mirror_every": mirror_every,
                "total_partitions": total,
            }
        )
        + "\n"
    )
    return total


def take_broker_down(cluster: Path) -> int:
    """Make a generated cluster's highest broker id unregistered, as a broker that is down:
    gone from the brokers table and from every ISR (a partition it led moves to the first
    replica left in its ISR, or has none), its own rows (configs, metrics, log dirs, clients)
    gone with it. Its replica assignments stay: REP008, PAR004/PAR005 and the root causes
    see what one down broker does. Deterministic (no random draw), so ``--down-every`` leaves
    every other cluster byte-identical. Returns the broker id."""
    brokers = pq.read_table(cluster / "brokers.parquet")
    down = max(brokers.column("broker_id").to_pylist())
    for name in ("partitions", "zk_state"):
        path = cluster / f"{name}.parquet"
        if not path.exists():
            continue
        t = pq.read_table(path)
        isr = [[b for b in (i or []) if b != down] for i in t.column("isr").to_pylist()]
        leader = [
            (i[0] if i else -1) if old == down else old
            for old, i in zip(t.column("leader").to_pylist(), isr, strict=True)
        ]
        t = t.set_column(t.schema.get_field_index("isr"), "isr", pa.array(isr, t.schema.field("isr").type))
        t = t.set_column(
            t.schema.get_field_index("leader"), "leader", pa.array(leader, t.schema.field("leader").type)
        )
        pq.write_table(t, path)
    for name in ("brokers", "metrics", "log_dirs", "client_software", "configs"):
        path = cluster / f"{name}.parquet"
        if not path.exists():
            continue
        t = pq.read_table(path)
        if name == "configs":
            keep = [
                not (e == "broker" and n == str(down))
                for e, n in zip(
                    t.column("entity_type").to_pylist(), t.column("entity_name").to_pylist(), strict=True
                )
            ]
        else:
            keep = [b != down for b in t.column("broker_id").to_pylist()]
        pq.write_table(t.filter(pa.array(keep)), path)
    return down


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--clusters", type=int, default=200)
    ap.add_argument("--topics", type=int, default=500)
    ap.add_argument("--partitions", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--mirror-every",
        type=int,
        default=50,
        help="every Nth topic name recurs in every cluster (1: all, many FLT002 findings)",
    )
    ap.add_argument(
        "--down-every",
        type=int,
        default=0,
        help="every Nth cluster (0, N, 2N, ...) has its highest broker id down (take_broker_down); 0: none",
    )
    a = ap.parse_args()
    t0 = time.perf_counter()
    n = generate(a.out, a.clusters, a.topics, a.partitions, a.seed, a.mirror_every)
    print(f"{a.out}: {a.clusters} clusters, {n:,} partitions in {time.perf_counter() - t0:.1f} s")
    if a.down_every > 0:
        for i in range(0, a.clusters, a.down_every):
            take_broker_down(Path(a.out) / f"dt={RUN_DATE}" / f"cluster=c{i:04d}")
        print(f"{a.out}: a broker down in every {a.down_every}th cluster")


if __name__ == "__main__":
    main()
