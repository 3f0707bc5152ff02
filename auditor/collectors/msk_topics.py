"""Topics, partitions and topic configs from the MSK topic APIs (read-only; no network path to
the brokers and no Kafka authentication needed: an IAM role with the ``kafka:`` read actions).

Three operations of botocore's ``kafka`` service model (REST paths under
``/v1/clusters/{clusterArn}/topics``; AWS: "view topic information", developer guide):

* ``ListTopics`` (paged, MaxResults 100): every topic's name, partition count and replication
  factor -> ``topics`` rows; ``OutOfSyncReplicaCount`` is kept per topic in
  :attr:`TopicsCollected.out_of_sync` (what ``kafka-audit wait`` reads first);
* ``DescribeTopic``: ``Configs``, "topic configurations encoded as a Base64 string" of
  properties text (``compression.type=producer\\nretention.ms=604800000`` in AWS's own example)
  -> ``configs`` rows (entity ``topic``, source TOPIC_CONFIG, file ``msk-api:DescribeTopic``);
  which keys AWS includes (the topic's overrides, or more) is not documented: a key the topic
  does not carry falls back to the broker's value as for any other source;
* ``DescribeTopicPartitions`` (paged): leader, replicas ("both in-sync and out-of-sync") and
  ISR per partition -> ``partitions`` rows (leader -1 when none).

AWS states that all three "reflect data that updates approximately every minute".

Many topics mean two calls or more per topic: they run on ``workers`` threads (one shared
client: botocore clients are thread-safe) under a token bucket of ``rate`` calls per second
for the whole cluster, and every call is retried with backoff on throttling by botocore's own
retry handler (the client's ``standard`` retry mode, auditor/collectors/msk.py). A denied or
failing operation is one source error naming its IAM action, recorded once (the remaining
calls of the collection are not sent); a topic deleted between ListTopics and its describe
(NotFoundException) is skipped and counted in the manifest.
"""

from __future__ import annotations

import base64
import binascii
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from auditor.collectors._common import CollectResult, config_row

DEFAULT_WORKERS = 8
DEFAULT_RATE = 50.0  # calls per second for one cluster: our bound (AWS publishes no figure for these APIs)
PAGE_SIZE = 100  # the model's maximum MaxResults for ListTopics and DescribeTopicPartitions
MAX_PAGES = 10_000  # 1,000,000 topics, or partitions of one topic
CONFIGS_FILE = "msk-api:DescribeTopic"
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
_GONE = ("NotFoundException", "ResourceNotFoundException")


class RateLimiter:
    """At most ``rate`` acquisitions per second across threads (a token bucket of one token:
    calls are spaced evenly, never burst). ``rate`` <= 0: unbounded."""

    def __init__(self, rate: float, clock=time.monotonic, sleep=time.sleep):
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self._next = 0.0
        self._lock = threading.Lock()
        self._clock, self._sleep = clock, sleep

    def acquire(self) -> None:
        if not self.interval:
            return
        with self._lock:
            now = self._clock()
            slot = max(now, self._next)
            self._next = slot + self.interval
        if slot > now:
            self._sleep(slot - now)


@dataclass
class TopicsCollected:
    calls: int = 0
    out_of_sync: dict[str, int] = field(default_factory=dict)  # ListTopics' OutOfSyncReplicaCount
    vanished: list[str] = field(default_factory=list)  # deleted between ListTopics and a describe


class _Stop(Exception):
    pass


class Watch:
    """What the caller of a topic collection learns and decides while it runs (the fleet
    collector, auditor/collectors/fleet_collect.py): ``planned(calls, rate)`` once ListTopics has
    answered (the describe calls to come, at most ``rate`` per second: its deadline grows with
    them); ``cancelled()`` true once the collection is given up (its deadline passed): no call
    is sent after that, so nothing of an abandoned cluster keeps asking AWS."""

    def planned(self, calls: int, rate: float) -> None:
        pass

    def cancelled(self) -> bool:
        return False


def collect_topics(
    result: CollectResult,
    kafka,
    cluster_arn: str,
    *,
    workers: int = DEFAULT_WORKERS,
    rate: float = DEFAULT_RATE,
    configs: bool = True,
    out_of_sync_only: bool = False,
    watch: Watch | None = None,
) -> TopicsCollected:
    """Add ``topics``, ``partitions`` and (``configs``) topic ``configs`` rows of the cluster
    to ``result`` (``configs`` False: no DescribeTopic calls; ``out_of_sync_only``: describe only
    the topics whose OutOfSyncReplicaCount ListTopics reports above 0, what ``kafka-audit wait``
    needs when the leaders are not asked for: one call per 100 topics while healthy). Failures are source errors in ``result`` (see the module doc); never raises."""
    from auditor.collectors.aws_errors import failure, topic_arn

    got = TopicsCollected()
    watch = watch or Watch()
    limiter = RateLimiter(rate)
    lock = threading.Lock()
    failed: dict[str, dict] = {}  # IAM action -> its source error (the first failure only)

    def call(operation: str, **params) -> dict | None:
        """One call; None when the topic is gone; _Stop after a failure or once given up."""
        if failed or watch.cancelled():
            raise _Stop
        limiter.acquire()
        with lock:
            got.calls += 1
        try:
            return getattr(kafka, _SNAKE[operation])(ClusterArn=cluster_arn, **params)
        except Exception as e:  # noqa: BLE001 (every failure is a source error, never a traceback)
            code = getattr(e, "response", {}).get("Error", {}).get("Code")
            if code in _GONE and "TopicName" in params:
                return None
            resource = topic_arn(cluster_arn, params["TopicName"]) if "TopicName" in params else cluster_arn
            with lock:
                failed.setdefault(
                    operation, failure(e, f"kafka:{operation}", resource, cluster_arn=cluster_arn)
                )
            raise _Stop from None

    listed: list[dict] = []
    token = None
    try:
        for _ in range(MAX_PAGES):
            page = call("ListTopics", MaxResults=PAGE_SIZE, **({"NextToken": token} if token else {}))
            listed += page.get("Topics") or []
            token = page.get("NextToken")
            if not token:
                break
    except _Stop:
        pass
    seen: set[str] = set()
    for t in listed:
        name = t.get("TopicName")
        if not name or name in seen:
            continue
        seen.add(name)
        got.out_of_sync[name] = int(t.get("OutOfSyncReplicaCount") or 0)
        result.rows("topics").append(
            {
                "topic": name,
                "partitions": t.get("PartitionCount"),
                "replication_factor": t.get("ReplicationFactor"),
                "is_internal": name in INTERNAL_TOPICS or name.startswith("__"),
                "topic_id": None,
            }
        )

    def describe(name: str) -> tuple[str, list[dict], list[dict], bool]:
        config_rows: list[dict] = []
        if configs:
            found = call("DescribeTopic", TopicName=name)
            if found is None:
                return name, [], [], True
            config_rows = _config_rows(result, name, found.get("Configs"))
        parts: list[dict] = []
        token = None
        for _ in range(MAX_PAGES):
            page = call(
                "DescribeTopicPartitions",
                TopicName=name,
                MaxResults=PAGE_SIZE,
                **({"NextToken": token} if token else {}),
            )
            if page is None:
                return name, [], [], True
            parts += page.get("Partitions") or []
            token = page.get("NextToken")
            if not token:
                break
        return name, config_rows, [_partition_row(name, p) for p in parts], False

    names = sorted(n for n in seen if not out_of_sync_only or got.out_of_sync[n] > 0)
    watch.planned(len(names) * (2 if configs else 1), rate)  # a page of partitions and DescribeTopic each
    out: dict[str, tuple[list[dict], list[dict]]] = {}
    if not failed and names:

        def guarded(name):
            try:
                return describe(name)
            except _Stop:
                return None

        with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="msk-topics") as pool:
            for done in pool.map(guarded, names):
                if done is None:
                    continue
                name, config_rows, partition_rows, gone = done
                if gone:
                    got.vanished.append(name)
                else:
                    out[name] = (config_rows, partition_rows)
    for name in names:  # (sorted: the same rows whatever order the threads finished in)
        if name in out:
            result.rows("configs").extend(out[name][0])
            result.rows("partitions").extend(out[name][1])
    if got.vanished:
        gone = set(got.vanished)
        result.tables["topics"] = [r for r in result.tables.get("topics", []) if r["topic"] not in gone]
    result.errors.extend(failed.values())
    return got


_SNAKE = {
    "ListTopics": "list_topics",
    "DescribeTopic": "describe_topic",
    "DescribeTopicPartitions": "describe_topic_partitions",
}


def _partition_row(topic: str, p: dict) -> dict:
    leader = p.get("Leader")
    return {
        "topic": topic,
        "partition": int(p.get("Partition", -1)),
        "leader": int(leader) if isinstance(leader, int) and leader >= 0 else -1,
        "leader_epoch": None,
        "replicas": [int(r) for r in p.get("Replicas") or []],
        "isr": [int(r) for r in p.get("Isr") or []],
        "offline_replicas": None,
        "adding_replicas": None,
        "removing_replicas": None,
    }


def decode_configs(encoded: str | None) -> tuple[dict[str, str], str | None]:
    """DescribeTopic's Base64 ``Configs`` -> ({key: value}, problem or None)."""
    from auditor.collectors.files import parse_properties

    if not encoded:
        return {}, None
    try:
        text = base64.b64decode(encoded, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return {}, "Configs is not Base64 text"
    entries, problems = parse_properties(text)
    problem = f"line {problems[0].line}: {problems[0].message}" if problems else None
    return {e.key: e.value for e in entries}, problem


def _config_rows(result: CollectResult, topic: str, encoded: str | None) -> list[dict]:
    from auditor.collectors.aws_errors import SOURCE

    values, problem = decode_configs(encoded)
    if problem:
        result.error(SOURCE, topic, f"{CONFIGS_FILE} of topic {topic}: {problem}")
    return [config_row("topic", topic, k, v, "TOPIC_CONFIG", file=CONFIGS_FILE) for k, v in values.items()]
