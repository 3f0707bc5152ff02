"""Collector for the Kafka Admin API (confluent-kafka AdminClient), read-only.

Calls, each with a request timeout and a bounded wait on its future:

1. ``describe_cluster`` -> cluster id (``meta["cluster_id"]``), controller, ``brokers`` (id,
   host, port, rack)
2. ``list_topics`` (one Metadata request for every topic) -> ``topics`` and ``partitions``
   (leader, replicas, ISR). librdkafka exposes neither the leader epoch nor the broker's
   offline-replica list: ``leader_epoch`` is null and ``offline_replicas`` holds the replicas
   whose broker is not among the live brokers (a replica on a failed log dir of a live
   broker is not visible here; the log_dirs table and metrics cover that).
3. ``describe_topics`` (batched) -> ``topic_id`` and ``is_internal``
4. ``describe_configs`` (batched: one request for many resources) for every broker and
   topic -> ``configs``. A broker's entry becomes a row of that broker with its source
   (STATIC_BROKER_CONFIG, DYNAMIC_BROKER_CONFIG, DEFAULT_CONFIG); DYNAMIC_DEFAULT_BROKER_CONFIG
   entries become ``cluster_default`` rows. A topic keeps only its own overrides
   (DYNAMIC_TOPIC_CONFIG -> TOPIC_CONFIG); inherited values are resolved from the broker
   rows by the checks. Secrets (is_sensitive, sasl.jaas.config, *.password) have value null.
5. ``list_consumer_groups`` + ``describe_consumer_groups`` (batched) -> ``consumer_groups`` (with
   each group's type, classic or consumer, where the brokers report it: ListGroups v5, 4.0+),
   with the coordinator partition from auditor/coordinator_partition.py.

Failures become source errors ``{"source": "admin", "target": ..., "message": one line}``.
When the cluster or the topic list cannot be read the collection stops there (no partial
topic list is presented as complete: the error makes the snapshot incomplete).
Only the methods in READ_METHODS are ever called (tests/test_collect_admin.py proves it), and
client telemetry is off (``enable.metrics.push=false``, which no setting can turn back on): on the
wire the collection sends read requests only (tests/test_readonly_wire.py proves it).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from auditor.collectors._common import DEFAULT_TIMEOUT, Collector, CollectResult, config_row, one_line
from auditor.coordinator_partition import coordinator_partition

SOURCE = "admin"
READ_METHODS = frozenset(
    {
        "describe_cluster",
        "list_topics",
        "describe_topics",
        "describe_configs",
        "list_consumer_groups",
        "describe_consumer_groups",
        "poll",
    }
)
CONFIG_BATCH = 500  # resources per DescribeConfigs call
TOPIC_BATCH = 1000  # topics per DescribeTopics call
GROUP_BATCH = 500
STEPS = ("cluster", "topics", "topic ids", "configs", "consumer groups")
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())
log.propagate = False  # librdkafka's connection chatter never reaches stderr; failures are source errors

Progress = Callable[[str, str, int, int], None]  # (source, step, done, total)


class AdminAbort(Exception):
    """The Admin API source failed as a whole."""


def _kafka_message(e) -> str:
    if hasattr(e, "str") and callable(e.str):  # a KafkaError itself
        return e.str()
    err = e.args[0] if getattr(e, "args", None) else None
    if err is not None and hasattr(err, "str") and callable(err.str):
        return err.str()
    if isinstance(e, TimeoutError) or type(e).__name__ == "TimeoutError":
        return "timed out"
    return f"{type(e).__name__}: {one_line(e, 300)}"


def _is_local(e) -> bool:
    """A client-side failure (timeout, transport): the cluster is unreachable, not one resource refused."""
    if isinstance(e, TimeoutError) or type(e).__name__ == "TimeoutError":
        return True
    err = e.args[0] if getattr(e, "args", None) else None
    code = err.code() if err is not None and hasattr(err, "code") and callable(err.code) else None
    return code is not None and code < 0


# Settings no caller can change (they are applied after the caller's): librdkafka >= 2.5 pushes
# client metrics to a broker that offers KIP-714 telemetry (GetTelemetrySubscriptions, PushTelemetry)
# by default; a read-only collection sends only read requests (tests/test_readonly_wire.py).
FORCED_SETTINGS = {"enable.metrics.push": "false"}


def make_admin(config: dict, timeout: float):
    """The AdminClient of a collection: the caller's settings, then FORCED_SETTINGS over them."""
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient

    ms = int(max(timeout, 0.1) * 1000)
    conf = {
        "socket.timeout.ms": ms,
        "socket.connection.setup.timeout.ms": ms,
        "logger": log,
        "error_cb": lambda _err: None,
        **config,
        **FORCED_SETTINGS,
    }
    try:
        return AdminClient(conf)
    except KafkaException as e:
        if "enable.metrics.push" not in str(e):
            raise
    # A librdkafka older than 2.5 has no such setting, and no KIP-714 telemetry to turn off.
    return AdminClient({k: v for k, v in conf.items() if k not in FORCED_SETTINGS})


def collect_admin(
    bootstrap: str | None,
    *,
    client_config: dict | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    admin=None,
    progress: Progress | None = None,
    extra_source: dict | None = None,
) -> CollectResult:
    """Collect from the Admin API. ``client_config``: librdkafka settings (see client_config.py);
    ``admin``: an AdminClient to use (tests); ``progress``: called after each step."""
    result = CollectResult()
    config = dict(client_config or {})
    if bootstrap:
        config["bootstrap.servers"] = bootstrap
    target = config.get("bootstrap.servers") or "?"
    extra: dict = dict(extra_source or {})
    status = "error"

    def step(i: int) -> None:
        if progress is not None:
            progress(SOURCE, STEPS[i] if i < len(STEPS) else "done", i, len(STEPS))

    started = time.monotonic()
    try:
        if admin is None:
            if not config.get("bootstrap.servers"):
                raise AdminAbort("no bootstrap servers given (--bootstrap-servers HOST:PORT)")
            admin = make_admin(config, timeout)
            if "oauth_cb" in config:
                admin.poll(0)  # serve the first token request (oauth_cb runs on poll)
        _Reader(admin, timeout, result, target, extra, step).run()
        status = "error" if result.errors else "ok"
    except AdminAbort as e:
        result.error(SOURCE, target, f"{target}: {e}")
    except Exception as e:  # never let one source crash the collection
        result.error(SOURCE, target, f"{target}: {type(e).__name__}: {one_line(e, 300)}")
    extra["seconds"] = round(time.monotonic() - started, 3)
    result.sources.append({"source": SOURCE, "target": target, "status": status, **extra})
    return result


class _Reader:
    def __init__(self, admin, timeout: float, result: CollectResult, target: str, extra: dict, step):
        self.admin = admin
        self.timeout = timeout
        self.result = result
        self.target = target
        self.extra = extra
        self.step = step
        self.requests = 0

    def wait(self, future, what: str):
        try:
            return future.result(timeout=self.timeout + 1.0)
        except Exception as e:
            raise AdminAbort(f"{what}: {_kafka_message(e)} (timeout {self.timeout:g} s)") from None

    def settle(self, futures: dict) -> None:
        """Wait for a batch's futures together: one deadline for the batch, not one per future."""
        import concurrent.futures

        if futures:
            concurrent.futures.wait(list(futures.values()), timeout=self.timeout + 1.0)

    @staticmethod
    def outcome(fut):
        """The future's result now (TimeoutError when it has not completed by the batch deadline)."""
        if not fut.done():
            raise TimeoutError("timed out")
        return fut.result(timeout=0)

    def run(self) -> None:
        self.step(0)
        live = self.cluster()
        self.step(1)
        topics = self.topics(live)
        self.step(2)
        self.topic_details(topics)
        self.step(3)
        self.configs(sorted(live), topics)
        self.step(4)
        self.groups(topics)
        self.step(5)
        self.extra["requests"] = self.requests

    # 1. cluster ---------------------------------------------------------------------------
    def cluster(self) -> set[int]:
        self.requests += 1
        try:
            fut = self.admin.describe_cluster(request_timeout=self.timeout)
        except Exception as e:
            raise AdminAbort(f"describe_cluster: {_kafka_message(e)}") from None
        desc = self.wait(fut, f"cannot describe the cluster within {self.timeout:g} s")
        if desc.cluster_id:
            self.result.meta["cluster_id"] = desc.cluster_id
        ctl = desc.controller
        self.extra["controller_id"] = ctl.id if ctl is not None else -1
        live = set()
        for node in sorted(desc.nodes or [], key=lambda n: n.id):
            live.add(node.id)
            self.result.rows("brokers").append(
                {
                    "broker_id": node.id,
                    "host": node.host,
                    "port": node.port,
                    "rack": node.rack or None,
                    "cores": None,
                    "log_dirs": None,
                    "version": None,
                }
            )
        self.extra["brokers"] = len(live)
        return live

    # 2. topics and partitions ----------------------------------------------------------------
    def topics(self, live: set[int]) -> dict[str, int]:
        self.requests += 1
        try:
            md = self.admin.list_topics(timeout=self.timeout)
        except Exception as e:
            raise AdminAbort(f"cannot list topics within {self.timeout:g} s: {_kafka_message(e)}") from None
        counts: dict[str, int] = {}
        failed: list[str] = []
        for name in sorted(md.topics):
            tm = md.topics[name]
            if tm.error is not None:
                failed.append(f"{name} ({tm.error.str()})")
                continue
            parts = sorted(tm.partitions.values(), key=lambda p: p.id)
            counts[name] = len(parts)
            rf = max((len(p.replicas) for p in parts), default=0)
            self.result.rows("topics").append(
                {
                    "topic": name,
                    "partitions": len(parts),
                    "replication_factor": rf,
                    "is_internal": name in INTERNAL_TOPICS or name.startswith("__"),
                    "topic_id": None,
                }
            )
            for p in parts:
                replicas = list(p.replicas)
                self.result.rows("partitions").append(
                    {
                        "topic": name,
                        "partition": p.id,
                        "leader": p.leader if p.leader is not None else -1,
                        "leader_epoch": None,
                        "replicas": replicas,
                        "isr": list(p.isrs),
                        "offline_replicas": [r for r in replicas if r not in live] if live else None,
                        "adding_replicas": None,
                        "removing_replicas": None,
                    }
                )
        if failed:
            more = f" and {len(failed) - 5} more" if len(failed) > 5 else ""
            self.result.error(
                SOURCE,
                self.target,
                f"metadata error for topic(s) {', '.join(failed[:5])}{more}: the topic list is incomplete",
            )
        self.extra["topics"] = len(counts)
        return counts

    # 3. topic ids ----------------------------------------------------------------------------
    def topic_details(self, topics: dict[str, int]) -> None:
        from confluent_kafka import TopicCollection

        rows = {r["topic"]: r for r in self.result.rows("topics")}
        names = sorted(topics)
        failed = []
        for i in range(0, len(names), TOPIC_BATCH):
            chunk = names[i : i + TOPIC_BATCH]
            self.requests += 1
            try:
                futures = self.admin.describe_topics(TopicCollection(chunk), request_timeout=self.timeout)
            except Exception as e:
                raise AdminAbort(f"describe_topics: {_kafka_message(e)}") from None
            self.settle(futures)
            before, local = len(failed), 0
            for name, fut in futures.items():
                try:
                    d = self.outcome(fut)
                except Exception as e:
                    failed.append(f"{name} ({_kafka_message(e)})")
                    local += _is_local(e)
                    continue
                row = rows.get(name)
                if row is not None:
                    row["topic_id"] = str(d.topic_id) if d.topic_id is not None else None
                    row["is_internal"] = bool(d.is_internal) or row["is_internal"]
            if futures and local == len(futures):
                raise AdminAbort(f"describe_topics: no answer for any topic of the batch: {failed[before]}")
        if failed:
            self.result.error(
                SOURCE, self.target, f"describe_topics failed for {len(failed)} topic(s): {failed[0]}"
            )

    # 4. configs ------------------------------------------------------------------------------
    def configs(self, brokers: list[int], topics: dict[str, int]) -> None:
        from confluent_kafka.admin import ConfigResource, ResourceType

        resources = [ConfigResource(ResourceType.BROKER, str(b)) for b in brokers]
        resources += [ConfigResource(ResourceType.TOPIC, t) for t in sorted(topics)]
        failed: list[str] = []
        entries = 0
        for i in range(0, len(resources), CONFIG_BATCH):
            chunk = resources[i : i + CONFIG_BATCH]
            self.requests += 1
            try:
                futures = self.admin.describe_configs(chunk, request_timeout=self.timeout)
            except Exception as e:
                raise AdminAbort(f"describe_configs: {_kafka_message(e)}") from None
            self.settle(futures)
            before, local = len(failed), 0
            for res, fut in futures.items():
                kind = "broker" if res.restype == ResourceType.BROKER else "topic"
                try:
                    got = self.outcome(fut)
                except Exception as e:
                    failed.append(f"{kind} {res.name} ({_kafka_message(e)})")
                    local += _is_local(e)
                    continue
                for entry in got.values():
                    entries += 1
                    row = config_entry_row(kind, res.name, entry)
                    if row is not None:
                        self.result.rows("configs").append(row)
            if futures and local == len(futures):
                raise AdminAbort(
                    f"describe_configs: no answer for any resource of the batch: {failed[before]}"
                )
        self.extra["config_entries"] = entries
        if failed:
            more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
            self.result.error(
                SOURCE, self.target, f"describe_configs failed for {', '.join(failed[:3])}{more}"
            )

    # 5. consumer groups ----------------------------------------------------------------------
    def groups(self, topics: dict[str, int]) -> None:
        self.requests += 1
        try:
            listed = self.wait(
                self.admin.list_consumer_groups(request_timeout=self.timeout), "list_consumer_groups"
            )
        except AdminAbort as e:
            self.result.error(SOURCE, self.target, str(e))
            return
        if listed.errors:
            self.result.error(
                SOURCE,
                self.target,
                f"list_consumer_groups: {len(listed.errors)} coordinator(s) "
                f"failed: {_kafka_message(listed.errors[0])}",
            )
        count = topics.get("__consumer_offsets") or self._offsets_partitions() or 50
        states = {g.group_id: group_state(getattr(g, "state", None)) for g in listed.valid}
        kinds = {g.group_id: group_type(getattr(g, "type", None)) for g in listed.valid}
        members: dict[str, int | None] = {}
        ids = sorted(states)
        failed = []
        for i in range(0, len(ids), GROUP_BATCH):
            chunk = ids[i : i + GROUP_BATCH]
            self.requests += 1
            try:
                futures = self.admin.describe_consumer_groups(chunk, request_timeout=self.timeout)
            except Exception as e:
                failed.append(f"the batch ({_kafka_message(e)})")
                break
            self.settle(futures)
            for gid, fut in futures.items():
                try:
                    d = self.outcome(fut)
                except Exception as e:
                    failed.append(f"{gid} ({_kafka_message(e)})")
                    continue
                members[gid] = len(d.members or [])
                states[gid] = group_state(d.state) or states.get(gid)
                kinds[gid] = group_type(getattr(d, "type", None)) or kinds.get(gid)
        if failed:
            self.result.error(SOURCE, self.target, f"describe_consumer_groups failed for {failed[0]}")
        for gid in ids:
            self.result.rows("consumer_groups").append(
                {
                    "group_id": gid,
                    "state": states[gid],
                    "members": members.get(gid),
                    "coordinator_partition": coordinator_partition(gid, count),
                    "group_type": kinds.get(gid),
                }
            )
        self.extra["consumer_groups"] = len(ids)

    def _offsets_partitions(self) -> int | None:
        for row in self.result.rows("configs"):
            if row["key"] == "offsets.topic.num.partitions" and row["value"]:
                try:
                    return int(row["value"])
                except ValueError:
                    return None
        return None


_SOURCES = {
    "DYNAMIC_TOPIC_CONFIG": ("topic", "TOPIC_CONFIG"),
    "DYNAMIC_BROKER_CONFIG": ("broker", "DYNAMIC_BROKER_CONFIG"),
    "DYNAMIC_DEFAULT_BROKER_CONFIG": ("cluster_default", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
    "STATIC_BROKER_CONFIG": ("broker", "STATIC_BROKER_CONFIG"),
    "DEFAULT_CONFIG": ("broker", "DEFAULT_CONFIG"),
}


_GROUP_STATES = {
    "PREPARING_REBALANCING": "PREPARING_REBALANCE",
    "COMPLETING_REBALANCING": "COMPLETING_REBALANCE",
}


def group_state(v) -> str | None:
    """ConsumerGroupState.PREPARING_REBALANCE -> "PreparingRebalance" (Kafka's own spelling)."""
    name = _enum_name(v)
    if name is None:
        return None
    name = _GROUP_STATES.get(name, name)
    return "".join(w.capitalize() for w in name.split("_")) if name.isupper() else name


def group_type(v) -> str | None:
    """ConsumerGroupType.CLASSIC -> "classic", CONSUMER -> "consumer" (ListGroups v5, KIP-848);
    UNKNOWN (a broker before 4.0 reports no type) and anything else -> None."""
    name = (_enum_name(v) or "").lower()
    return name if name in ("classic", "consumer") else None


def _enum_name(v) -> str | None:
    if v is None:
        return None
    name = getattr(v, "name", None)
    return name if name is not None else str(v)


def config_entry_row(kind: str, name: str, entry) -> dict | None:
    """One DescribeConfigs entry -> a ``configs`` row (None when it does not belong to the entity)."""
    source = entry.source
    if isinstance(source, int) and not hasattr(source, "name"):
        from confluent_kafka.admin import ConfigSource

        source = ConfigSource(source)
    mapped = _SOURCES.get(_enum_name(source) or "UNKNOWN_CONFIG")
    if mapped is None:
        return None
    entity, out_source = mapped
    if kind == "topic":
        if entity != "topic":
            return None  # inherited: resolved from the broker rows
    elif entity == "topic":
        return None
    if entity == "cluster_default":
        return config_row(
            "cluster_default", "", entry.name, entry.value, out_source, sensitive=bool(entry.is_sensitive)
        )
    return config_row(kind, name, entry.name, entry.value, out_source, sensitive=bool(entry.is_sensitive))


# The Kafka Admin API, when a bootstrap server is known (--bootstrap-servers, the client
# config's bootstrap.servers, or the listener the MSK source found).
COLLECTOR = Collector(
    name="admin",
    wanted=lambda ctx: bool(ctx.bootstrap),
    target=lambda ctx: ctx.bootstrap or "",
    collect=lambda ctx: collect_admin(
        ctx.bootstrap,
        client_config=ctx.client.config,
        timeout=ctx.sources.timeout,
        progress=ctx.progress,
        extra_source=ctx.client.describe(),
    ),
)
