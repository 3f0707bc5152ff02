"""The MSK topic APIs and CloudWatch (auditor/collectors/msk_topics.py, msk_cloudwatch.py).

No real MSK endpoint answers here (shared/TESTING.md): botocore's Stubber answers where the
calls are sequential (it validates every request and response against botocore's own
``kafka`` and ``monitoring`` models), and tests/msk_answers.py's ModelAnswers (the same
validation, answered by parameters) where they are concurrent. Throttling goes one level
lower (a ``before-send`` hook answering HTTP 429 with REST-JSON bodies), so that botocore's
real retry handler and response parser run. The topic example (``MyTopic``, its Base64
configs, its partitions with one replica out of the ISR) is AWS's documentation example
(shared/real-inputs/msk-api/NOTES.md, facts 6-8), not a capture of a real cluster.
"""

from __future__ import annotations

import datetime as dt
import json
import socket
import threading

import pytest

pytest.importorskip("boto3")

from botocore.awsrequest import AWSResponse  # noqa: E402
from botocore.stub import ANY, Stubber  # noqa: E402

from auditor.collectors import msk, msk_cloudwatch, msk_topics  # noqa: E402
from auditor.collectors._common import CollectResult  # noqa: E402
from auditor.collectors.aws_errors import topic_arn  # noqa: E402
from auditor.sources import Sources  # noqa: E402
from tests.msk_answers import FakeTopics, ModelAnswers, skip_retry_sleeps  # noqa: E402
from tests.test_collect_msk import (  # noqa: E402
    ARN,
    BOOTSTRAP,
    CONFIG_ARN,
    REGION,
    SERVER_PROPERTIES,
    SUBNET_CALL,
    WHEN,
    Calls,
    _Raw,
    aws_env,  # noqa: F401 (the fake-credentials fixture)
    cluster_info,
    nodes,
    operations,
    subnets_response,
)

DOC_CONFIGS = "Y29tcHJlc3Npb24udHlwZT1wcm9kdWNlcgpyZXRlbnRpb24ubXM9NjA0ODAwMDAw"  # AWS's example
DOC_PARTITIONS = [
    {"Partition": 0, "Leader": 1, "Replicas": [1, 2, 3], "Isr": [1, 2, 3]},
    {"Partition": 1, "Leader": 2, "Replicas": [2, 3, 1], "Isr": [2, 3, 1]},
    {"Partition": 2, "Leader": 3, "Replicas": [3, 1, 2], "Isr": [3, 1]},
]
TOPIC_ARN = f"arn:aws:kafka:{REGION}:123456789012:topic/payments/5f3a1c2e-2/MyTopic"
NOW = dt.datetime(2026, 11, 26, 9, 0, tzinfo=dt.UTC)


class StrictCalls(Calls):
    """Calls, and CloudWatch only GetMetricData / ListMetrics."""

    def record(self, model, **_):
        super().record(model)
        if model.service_model.service_name == "cloudwatch":
            assert model.name in ("GetMetricData", "ListMetrics"), (
                f"{model.name} is not allowed on CloudWatch"
            )


def cluster_calls(info: dict, *, config: bool):
    calls = [
        ("describe_cluster_v2", info, {"ClusterArn": ARN}),
        ("list_nodes", nodes(), {"ClusterArn": ARN}),
        ("get_bootstrap_brokers", BOOTSTRAP, {"ClusterArn": ARN}),
    ]
    if config:
        calls.append(
            (
                "describe_configuration_revision",
                {
                    "Arn": CONFIG_ARN,
                    "CreationTime": WHEN,
                    "Revision": 3,
                    "ServerProperties": SERVER_PROPERTIES,
                },
                {"Arn": CONFIG_ARN, "Revision": 3},
            )
        )
    calls.append(("list_cluster_operations_v2", operations(), {"ClusterArn": ARN}))
    return calls


def doc_topic_calls():
    """ListTopics, DescribeTopic and DescribeTopicPartitions as AWS's examples answer them."""
    return [
        (
            "list_topics",
            {
                "Topics": [
                    {
                        "TopicArn": TOPIC_ARN,
                        "TopicName": "MyTopic",
                        "PartitionCount": 3,
                        "ReplicationFactor": 3,
                        "OutOfSyncReplicaCount": 1,
                    }
                ]
            },
            {"ClusterArn": ARN, "MaxResults": 100},
        ),
        (
            "describe_topic",
            {
                "TopicArn": TOPIC_ARN,
                "TopicName": "MyTopic",
                "PartitionCount": 3,
                "ReplicationFactor": 3,
                "Configs": DOC_CONFIGS,
                "Status": "ACTIVE",
            },
            {"ClusterArn": ARN, "TopicName": "MyTopic"},
        ),
        (
            "describe_topic_partitions",
            {"Partitions": DOC_PARTITIONS},
            {"ClusterArn": ARN, "TopicName": "MyTopic", "MaxResults": 100},
        ),
    ]


def stub_clients(monkeypatch, kafka_calls, cw_calls=(), ec2_calls=SUBNET_CALL):
    clients = {s: msk.make_client(s, REGION, 5.0) for s in ("kafka", "ec2", "cloudwatch")}
    stubs = []
    for service, calls in (("kafka", kafka_calls), ("ec2", ec2_calls), ("cloudwatch", cw_calls)):
        stub = Stubber(clients[service])
        for op, response, params in calls:
            stub.add_response(op, response, params)
        stub.activate()
        stubs.append(stub)
    monkeypatch.setattr(msk, "make_client", lambda service, region, timeout=10.0: clients[service])
    return StrictCalls(*clients.values()), stubs


def metric_results(values: dict[str, float]) -> dict:
    """A GetMetricData answer: ``values`` by query id, two datapoints each (newest first)."""
    return {
        "MetricDataResults": [
            {
                "Id": qid,
                "Label": qid,
                "Timestamps": [NOW - dt.timedelta(minutes=1), NOW - dt.timedelta(minutes=2)],
                "Values": [v, v + 1000.0],
                "StatusCode": "Complete",
            }
            for qid, v in values.items()
        ]
    }


@pytest.mark.parametrize("kind", ["zookeeper", "kraft", "express"])
def test_topics_from_the_msk_api_on_each_kind_of_cluster(monkeypatch, kind):
    """Stubber, one call at a time: every request and response checked against botocore's model."""
    info = {
        "zookeeper": cluster_info(),
        "kraft": cluster_info(version="3.7.x.kraft", zookeeper=False),
        "express": cluster_info(
            instance_type="express.m7g.large", version="3.6.x", config=False, zookeeper=False
        ),
    }[kind]
    calls, stubs = stub_clients(
        monkeypatch, cluster_calls(info, config=kind != "express") + doc_topic_calls()
    )
    got = msk.collect_msk(ARN, topics="api", topic_workers=1)
    for s in stubs:
        s.assert_no_pending_responses()
    assert got.result.errors == []
    assert got.topics_via_api and got.bootstrap is None and got.metrics == []  # the brokers are not contacted
    t = got.result.tables
    assert t["topics"] == [
        {"topic": "MyTopic", "partitions": 3, "replication_factor": 3, "is_internal": False, "topic_id": None}
    ]
    assert [(p["partition"], p["leader"], p["replicas"], p["isr"]) for p in t["partitions"]] == [
        (0, 1, [1, 2, 3], [1, 2, 3]),
        (1, 2, [2, 3, 1], [2, 3, 1]),
        (2, 3, [3, 1, 2], [3, 1]),
    ]
    topic_configs = {(c["key"], c["value"], c["source"]) for c in t["configs"] if c["entity_type"] == "topic"}
    assert topic_configs == {
        ("compression.type", "producer", "TOPIC_CONFIG"),
        ("retention.ms", "604800000", "TOPIC_CONFIG"),
    }
    assert got.manifest["topics_api"] == {"calls": 3, "topics": 1, "out_of_sync_replicas": 1, "vanished": 0}
    assert (
        got.cluster_fields.get("metadata_mode")
        == {"zookeeper": "zookeeper", "kraft": "kraft", "express": None}[kind]
    )
    assert calls.names[-3:] == ["ListTopics", "DescribeTopic", "DescribeTopicPartitions"]


def test_thousands_of_topics_sequential_under_stubber(monkeypatch):
    """2,500 topics: 25 ListTopics pages, then DescribeTopic and DescribeTopicPartitions of each,
    in name order (one worker), every answer validated by Stubber."""
    fake = FakeTopics(2500, lagging={"t00007": 2}, configs={"t00003": "min.insync.replicas=2\n"})
    kafka = msk.make_client("kafka", REGION, 5.0)
    stub = Stubber(kafka)
    token = None
    for _ in range(25):
        params = {"ClusterArn": ARN, "MaxResults": 100} | ({"NextToken": token} if token else {})
        page = fake.answer("ListTopics", params)
        stub.add_response("list_topics", page, params)
        token = page.get("NextToken")
    for name in fake.names:
        stub.add_response(
            "describe_topic",
            fake.answer("DescribeTopic", {"TopicName": name}),
            {"ClusterArn": ARN, "TopicName": name},
        )
        stub.add_response(
            "describe_topic_partitions",
            fake.answer("DescribeTopicPartitions", {"TopicName": name}),
            {"ClusterArn": ARN, "TopicName": name, "MaxResults": 100},
        )
    stub.activate()
    calls = Calls(kafka)
    r = CollectResult()
    got = msk_topics.collect_topics(r, kafka, ARN, workers=1, rate=0)
    stub.assert_no_pending_responses()
    assert r.errors == [] and got.calls == 25 + 2 * 2500 == len(calls.names)
    assert len(r.tables["topics"]) == 2500 and len(r.tables["partitions"]) == 7500
    lagging = [(p["topic"], p["partition"], p["isr"]) for p in r.tables["partitions"] if len(p["isr"]) < 3]
    assert lagging == [("t00007", p, fake.isr("t00007", p)) for p in range(3)]
    assert all(2 not in isr for _, _, isr in lagging)
    assert got.out_of_sync["t00007"] == 3 and sum(got.out_of_sync.values()) == 3
    assert [(c["entity_name"], c["key"], c["value"]) for c in r.tables["configs"]] == [
        ("t00003", "min.insync.replicas", "2")
    ]


def test_thousands_of_topics_concurrently_give_the_same_rows(monkeypatch):
    fake = FakeTopics(2000, partitions=3, lagging={"t01999": 1}, configs={"t01000": "retention.ms=1\n"})
    rows = {}
    for workers in (1, 8):
        kafka = msk.make_client("kafka", REGION, 5.0)
        answers = ModelAnswers(kafka, fake.answer)
        Calls(kafka)
        r = CollectResult()
        got = msk_topics.collect_topics(r, kafka, ARN, workers=workers, rate=0)
        assert r.errors == []
        assert got.calls == len(answers.calls) == 20 + 2000 * 2
        rows[workers] = r.tables
    assert rows[1] == rows[8]
    assert len(rows[8]["partitions"]) == 2000 * 3


def test_partitions_are_paged():
    fake = FakeTopics(2, partitions=250)
    kafka = msk.make_client("kafka", REGION, 5.0)
    answers = ModelAnswers(kafka, fake.answer)
    r = CollectResult()
    got = msk_topics.collect_topics(r, kafka, ARN, workers=2, rate=0)
    assert got.calls == 1 + 2 * (1 + 3) and answers.calls.count("DescribeTopicPartitions") == 6
    assert [p["partition"] for p in r.tables["partitions"]] == list(range(250)) * 2


def test_throttling_goes_through_botocores_retry_handler(monkeypatch):
    """The first three DescribeTopicPartitions answers are HTTP 429: botocore's standard retry
    mode sleeps and retries them; the rows are whole and the one throttled call cost 4 sends."""
    fake = FakeTopics(4)
    kafka = msk.make_client("kafka", REGION, 5.0)
    sent = []

    def answer(request, **_):
        sent.append(request.url)
        path = request.url.split("/v1/clusters/", 1)[1].split("?")[0]
        parts = path.split("/")
        if (
            parts[-1] == "partitions"
            and sum(u.endswith("partitions") or "/partitions?" in u for u in sent) <= 3
        ):
            return AWSResponse(
                request.url,
                429,
                {"x-amzn-ErrorType": "TooManyRequestsException"},
                _Raw(b'{"message": "Too Many Requests"}'),
            )
        if parts[-1] == "topics":
            page = fake.answer("ListTopics", {})
            body = {
                "topics": [
                    {
                        "topicName": t["TopicName"],
                        "partitionCount": 3,
                        "replicationFactor": 3,
                        "outOfSyncReplicaCount": 0,
                    }
                    for t in page["Topics"]
                ]
            }
        elif parts[-1] == "partitions":
            page = fake.answer("DescribeTopicPartitions", {"TopicName": parts[-2]})
            body = {
                "partitions": [
                    {
                        "partition": p["Partition"],
                        "leader": p["Leader"],
                        "replicas": p["Replicas"],
                        "isr": p["Isr"],
                    }
                    for p in page["Partitions"]
                ]
            }
        else:
            body = {"topicName": parts[-1], "configs": "bWluLmluc3luYy5yZXBsaWNhcz0y", "status": "ACTIVE"}
        return AWSResponse(
            request.url, 200, {"Content-Type": "application/json"}, _Raw(json.dumps(body).encode())
        )

    kafka.meta.events.register("before-send.kafka.*", answer)
    slept = skip_retry_sleeps(monkeypatch)
    assert kafka.meta.config.retries["mode"] == "standard"
    r = CollectResult()
    got = msk_topics.collect_topics(r, kafka, ARN, workers=1, rate=0)
    assert r.errors == []
    assert len(slept) == 3 and all(s >= 0 for s in slept)
    assert got.calls == 1 + 4 * 2 and len(sent) == got.calls + 3
    assert len(r.tables["partitions"]) == 12
    assert {c["value"] for c in r.tables["configs"]} == {"2"}  # "min.insync.replicas=2", Base64


def test_throttled_past_the_attempts_is_one_error_and_stops(monkeypatch):
    kafka = msk.make_client("kafka", REGION, 5.0)
    fake = FakeTopics(50)
    sent = []

    def answer(request, **_):
        sent.append(request.url)
        if request.url.split("?")[0].endswith("/topics"):
            body = {
                "topics": [{"topicName": t, "partitionCount": 3, "replicationFactor": 3} for t in fake.names]
            }
            return AWSResponse(request.url, 200, {}, _Raw(json.dumps(body).encode()))
        return AWSResponse(request.url, 429, {"x-amzn-ErrorType": "TooManyRequestsException"}, _Raw(b"{}"))

    kafka.meta.events.register("before-send.kafka.*", answer)
    skip_retry_sleeps(monkeypatch)
    r = CollectResult()
    msk_topics.collect_topics(r, kafka, ARN, workers=4, rate=0)
    (error,) = r.errors  # the first topic that ran out of attempts, whichever worker had it
    resource = error["aws"]["resource"]
    assert resource in {topic_arn(ARN, t) for t in fake.names}
    assert error == {
        "source": "msk",
        "target": ARN,
        "message": f"kafka:DescribeTopic for {resource}: still throttled after {msk.MAX_ATTEMPTS} attempts "
        "(TooManyRequestsException): AWS's request rate, not a permission: collect again later, or fewer "
        "clusters at once (--parallel)",
        "aws": {"action": "kafka:DescribeTopic", "resource": resource, "kind": "throttled"},
    }
    assert len(sent) <= 1 + 4 * msk.MAX_ATTEMPTS  # the workers stop after the first failure
    assert "partitions" not in r.tables


def _full_answers(fake: FakeTopics, info: dict, denied: str | None = None):
    fixed = {
        "DescribeClusterV2": info,
        "ListNodes": nodes(),
        "GetBootstrapBrokers": BOOTSTRAP,
        "DescribeConfigurationRevision": {
            "Arn": CONFIG_ARN,
            "Revision": 3,
            "ServerProperties": SERVER_PROPERTIES,
        },
        "ListClusterOperationsV2": operations(),
        "GetCompatibleKafkaVersions": {"CompatibleKafkaVersions": []},
        "DescribeSubnets": subnets_response(),
    }

    def answer(operation, params):
        if operation == denied:
            return ("error", "AccessDeniedException", 403)
        if operation in fixed:
            return fixed[operation]
        if operation == "GetMetricData":
            return {"MetricDataResults": []}
        return fake.answer(operation, params)

    return answer


MSK_CALLS = [
    ("kafka", "DescribeClusterV2"),
    ("kafka", "ListNodes"),
    ("kafka", "GetBootstrapBrokers"),
    ("kafka", "DescribeConfigurationRevision"),
    ("kafka", "ListClusterOperationsV2"),
    ("kafka", "ListTopics"),
    ("kafka", "DescribeTopic"),
    ("kafka", "DescribeTopicPartitions"),
    ("monitoring", "GetMetricData"),
]


@pytest.mark.parametrize(("service", "operation"), MSK_CALLS)
def test_access_denied_on_each_call_names_its_iam_action(monkeypatch, service, operation):
    fake = FakeTopics(30)
    clients = {s: msk.make_client(s, REGION, 5.0) for s in ("kafka", "ec2", "cloudwatch")}
    answer = _full_answers(fake, cluster_info(), denied=operation)
    for c in clients.values():
        ModelAnswers(c, answer)
    calls = StrictCalls(*clients.values())
    monkeypatch.setattr(msk, "make_client", lambda s, region, timeout=10.0: clients[s])
    got = msk.collect_msk(ARN, topics="api", cloudwatch=True, topic_rate=0)
    action = f"{'cloudwatch' if service == 'monitoring' else 'kafka'}:{operation}"
    (error,) = got.result.errors
    resource = {
        "DescribeConfigurationRevision": CONFIG_ARN,
        "DescribeTopic": error.get("aws", {}).get("resource"),
        "DescribeTopicPartitions": error.get("aws", {}).get("resource"),
    }.get(operation, ARN)
    topics = f"arn:aws:kafka:{REGION}:123456789012:topic/payments/5f3a1c2e-7d1b-4a8e-9c3f-2b6d8e0a1f4c-2/*"
    grant = {
        "ListTopics": f"kafka-cluster:Connect and kafka-cluster:DescribeTopic on {ARN} and on {topics}",
        "DescribeTopic": f"kafka-cluster:Connect on {ARN} and kafka-cluster:DescribeTopic and "
        f"kafka-cluster:DescribeTopicDynamicConfiguration on {topics}",
        "DescribeTopicPartitions": f"kafka-cluster:Connect on {ARN} and kafka-cluster:DescribeTopic and "
        f"kafka-cluster:DescribeTopicDynamicConfiguration on {topics}",
        "GetMetricData": "cloudwatch:GetMetricData on * (it takes no resource-level permission)",
    }.get(operation, f"{action} on {resource}")
    if operation.startswith("DescribeTopic"):  # the topic the call was about, whichever came first
        assert resource.startswith(topics[:-1]) and resource[len(topics) - 1 :] in fake.names
    assert error == {
        "source": "msk",
        "target": ARN,
        "message": f"{action} denied for {resource} (AccessDeniedException): allow {grant} in the IAM policy "
        "(README: AWS MSK source)",
        "aws": {"action": action, "resource": resource, "kind": "denied"},
    }
    # A denial is not retried, nor asked again per topic: only the calls already in flight on
    # the other workers when it came back were sent.
    limit = msk_topics.DEFAULT_WORKERS if operation.startswith("DescribeTopic") else 1
    assert 1 <= calls.names.count(operation) <= limit
    assert got.result.sources[-1]["status"] == "error"


def test_a_topic_deleted_between_list_and_describe_is_skipped(monkeypatch):
    fake = FakeTopics(5)
    fake.gone.add("t00002")
    kafka = msk.make_client("kafka", REGION, 5.0)
    ModelAnswers(kafka, fake.answer)
    r = CollectResult()
    got = msk_topics.collect_topics(r, kafka, ARN, workers=2, rate=0)
    assert r.errors == [] and got.vanished == ["t00002"]
    assert [t["topic"] for t in r.tables["topics"]] == ["t00000", "t00001", "t00003", "t00004"]
    assert {p["topic"] for p in r.tables["partitions"]} == {"t00000", "t00001", "t00003", "t00004"}


def test_configs_decode_awss_example_and_refuse_what_is_not_base64():
    assert msk_topics.decode_configs(DOC_CONFIGS) == (
        {"compression.type": "producer", "retention.ms": "604800000"},
        None,
    )
    assert msk_topics.decode_configs("not base64!") == ({}, "Configs is not Base64 text")
    assert msk_topics.decode_configs(None) == ({}, None)


def test_rate_limiter_spaces_calls_evenly():
    now, slept = [100.0], []

    def sleep(s):
        slept.append(round(s, 6))
        now[0] += s

    limiter = msk_topics.RateLimiter(10.0, clock=lambda: now[0], sleep=sleep)
    for _ in range(4):
        limiter.acquire()
    assert slept == [0.1, 0.1, 0.1]
    unbounded = msk_topics.RateLimiter(0, clock=lambda: now[0], sleep=sleep)
    unbounded.acquire()
    assert len(slept) == 3


def test_reachability_probe_against_real_sockets():
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        assert msk.unreachable(f"127.0.0.1:{port}", 2.0) is None
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        free = closed.getsockname()[1]  # bound, not listening: connections are refused
        why = msk.unreachable(f"127.0.0.1:{free}", 2.0)
    assert why.startswith(f"brokers not reachable from here (127.0.0.1:{free}: ")
    assert msk.unreachable(None, 2.0).startswith("no bootstrap listener could be chosen")


def _cw_query_names(queries):
    return [
        (
            q["MetricStat"]["Metric"]["MetricName"],
            {d["Name"]: d["Value"] for d in q["MetricStat"]["Metric"]["Dimensions"]}.get("Broker ID"),
        )
        for q in queries
    ]


def test_cloudwatch_at_default_level_reports_what_needs_per_broker(monkeypatch):
    """DEFAULT monitoring: the PER_BROKER idle metrics are not requested; the rules that read
    them are not evaluated, naming the level; the others become metrics rows."""
    from auditor.coverage import cluster_coverage
    from auditor.registry import load_rules
    from auditor.snapshot.io import Manifest

    cw = msk.make_client("cloudwatch", REGION, 5.0)
    seen = {}

    def answer(operation, params):
        seen["queries"] = params["MetricDataQueries"]
        values = {}
        for q in params["MetricDataQueries"]:
            name = q["MetricStat"]["Metric"]["MetricName"]
            values[q["Id"]] = {
                "CpuUser": 30.0,
                "CpuSystem": 12.5,
                "ConnectionCount": 40.0,
                "ActiveControllerCount": 1.0,
            }.get(name, 0.0)
        return metric_results(values)

    ModelAnswers(cw, answer)
    StrictCalls(cw)
    r = CollectResult()
    block = msk_cloudwatch.collect_cloudwatch(
        r, cw, cluster_name="payments", broker_ids=[1, 2, 3], level="DEFAULT", target=ARN, now=NOW
    )
    names = {n for n, _ in _cw_query_names(seen["queries"])}
    assert "NetworkProcessorAvgIdlePercent" not in names and "RequestHandlerAvgIdlePercent" not in names
    assert ("KafkaDataLogsDiskUsed", "2") in _cw_query_names(seen["queries"])
    assert ("OfflinePartitionsCount", None) in _cw_query_names(seen["queries"])
    rows = {(m["broker_id"], m["name"]): m for m in r.tables["metrics"]}
    assert rows[(2, "cpu_user_system_percent")]["value"] == 42.5  # CpuUser + CpuSystem, the newest datapoint
    assert json.loads(rows[(2, "cpu_user_system_percent")]["labels"]) == {
        "metric": "CpuUser+CpuSystem",
        "source": "cloudwatch",
        "stat": "Average",
    }
    assert rows[(None, "active_controller_count")]["value"] == 1.0
    assert rows[(3, "under_replicated_partitions")]["value"] == 0.0
    assert block["not_collected"] == [
        {
            "metric": "network_processor_avg_idle_percent",
            "cloudwatch": "NetworkProcessorAvgIdlePercent",
            "needs": "PER_BROKER",
        },
        {
            "metric": "request_handler_avg_idle_percent",
            "cloudwatch": "RequestHandlerAvgIdlePercent",
            "needs": "PER_BROKER",
        },
        {"metric": "request_queue_size", "cloudwatch": "RequestQueueSize", "needs": None},
    ]
    manifest = Manifest(
        cluster={"id": "payments", "platform": "msk", "msk": {"cloudwatch": block}},
        collected_at="2026-11-26T09:00:00Z",
        tables={"metrics": "metrics.jsonl", "brokers": "brokers.jsonl", "configs": "configs.jsonl"},
    )
    entries = cluster_coverage(
        manifest, [r for code, r in load_rules().items() if code in ("THR001", "THR002", "THR006", "MSK003")]
    )
    reasons = {code: e["reason"] for e in entries for code in e["rules"]}
    assert reasons == {
        "THR001": "no network_processor_avg_idle_percent metric: CloudWatch NetworkProcessorAvgIdlePercent "
        "needs enhanced monitoring PER_BROKER (the cluster's level is DEFAULT)",
        "THR002": "no request_handler_avg_idle_percent metric: CloudWatch RequestHandlerAvgIdlePercent "
        "needs enhanced monitoring PER_BROKER (the cluster's level is DEFAULT)",
        "THR006": "no request_queue_size metric: CloudWatch has no RequestQueueSize (open monitoring has it)",
    }


def test_cloudwatch_per_broker_level_reads_the_idle_ratios_and_marks_missing_data():
    cw = msk.make_client("cloudwatch", REGION, 5.0)
    stub = Stubber(cw)
    queries = {}

    def capture(params, **_):
        queries["q"] = params["MetricDataQueries"]

    cw.meta.events.register("before-parameter-build.monitoring.GetMetricData", capture)
    r = CollectResult()
    # The answer is built from the queries sent: one Stubber response, parameters checked by the model.
    stub.add_response(
        "get_metric_data",
        {"MetricDataResults": []},
        {
            "MetricDataQueries": ANY,
            "StartTime": NOW - dt.timedelta(minutes=15),
            "EndTime": NOW,
            "ScanBy": "TimestampDescending",
        },
    )
    stub.activate()
    block = msk_cloudwatch.collect_cloudwatch(
        r, cw, cluster_name="payments", broker_ids=[1], level="PER_BROKER", target=ARN, now=NOW
    )
    stub.assert_no_pending_responses()
    assert {n for n, _ in _cw_query_names(queries["q"])} >= {
        "NetworkProcessorAvgIdlePercent",
        "RequestHandlerAvgIdlePercent",
    }
    assert block["not_collected"] == [
        {"metric": "request_queue_size", "cloudwatch": "RequestQueueSize", "needs": None}
    ]
    assert {m["metric"] for m in block["no_data"]} == {s.name for s in msk_cloudwatch.SPECS}
    assert "metrics" not in r.tables

    # With datapoints: a percentage idle value is stored as Kafka's 0-1 fraction.
    cw2 = msk.make_client("cloudwatch", REGION, 5.0)
    ModelAnswers(
        cw2,
        lambda op, params: metric_results(
            {
                q["Id"]: 45.0 if "Idle" in q["MetricStat"]["Metric"]["MetricName"] else 1.0
                for q in params["MetricDataQueries"]
            }
        ),
    )
    r2 = CollectResult()
    msk_cloudwatch.collect_cloudwatch(
        r2, cw2, cluster_name="payments", broker_ids=[1], level="PER_BROKER", target=ARN, now=NOW
    )
    got = {m["name"]: m["value"] for m in r2.tables["metrics"]}
    assert (
        got["network_processor_avg_idle_percent"] == 0.45 and got["request_handler_avg_idle_percent"] == 0.45
    )


def test_open_monitoring_rows_win_over_cloudwatch():
    cw_row = {
        "broker_id": 1,
        "name": "cpu_user_system_percent",
        "labels": '{"metric":"CpuUser+CpuSystem","source":"cloudwatch","stat":"Average"}',
        "value": 50.0,
    }
    scraped = {"broker_id": 1, "name": "cpu_user_system_percent", "labels": "{}", "value": 52.0}
    other = {**cw_row, "broker_id": 2}
    tables = {"metrics": [cw_row, scraped, other]}
    block = {
        "not_collected": [{"metric": "cpu_user_system_percent"}, {"metric": "request_queue_size"}],
        "no_data": [],
    }
    msk_cloudwatch.settle(block, tables)
    assert tables["metrics"] == [scraped, other]
    assert block["not_collected"] == [{"metric": "request_queue_size"}]


def test_the_cloudwatch_guard_refuses_anything_but_its_two_reads():
    cw = msk.make_client("cloudwatch", REGION, 5.0)
    sent = []
    cw.meta.events.register("before-send.monitoring.*", lambda request, **_: sent.append(request.url))
    with pytest.raises(PermissionError, match="GetDashboard is not a read-only call"):
        cw.get_dashboard(DashboardName="x")  # a Get, but not one the audit needs
    with pytest.raises(PermissionError, match="PutMetricData is not a read-only call"):
        cw.put_metric_data(Namespace="AWS/Kafka", MetricData=[{"MetricName": "x", "Value": 1.0}])
    assert sent == []


def test_snapshot_from_the_arn_alone_feeds_the_rules(monkeypatch, tmp_path, capsys):
    """collect_snapshot with only the ARN, the brokers unreachable: topics, partitions and topic
    configs from the MSK API, metrics from CloudWatch; REP002 fires on the topic whose
    DescribeTopic configs set min.insync.replicas to its replication factor, and the coverage
    names the monitoring level the idle metrics need."""
    from auditor.collectors.fleet_collect import collect_snapshot
    from auditor.snapshot.io import read_manifest
    from tests.conftest import audit_sample

    fake = FakeTopics(40, lagging={"t00005": 3}, configs={"t00011": "min.insync.replicas=3\n"})
    info = cluster_info()
    info["ClusterInfo"]["Provisioned"]["EnhancedMonitoring"] = "DEFAULT"
    clients = {s: msk.make_client(s, REGION, 5.0) for s in ("kafka", "ec2", "cloudwatch")}
    base = _full_answers(fake, info)

    def answer(operation, params):
        if operation != "GetMetricData":
            return base(operation, params)
        values = {}  # broker 2 at 55 + 17 = 72% CPU user + system, the others at 30%
        for q in params["MetricDataQueries"]:
            metric = q["MetricStat"]["Metric"]
            broker = {d["Name"]: d["Value"] for d in metric["Dimensions"]}.get("Broker ID")
            if metric["MetricName"] in ("CpuUser", "CpuSystem"):
                values[q["Id"]] = {"2": 55.0 if metric["MetricName"] == "CpuUser" else 17.0}.get(broker, 15.0)
            else:
                values[q["Id"]] = 1.0 if metric["MetricName"] == "ActiveControllerCount" else 0.0
        return metric_results(values)

    for c in clients.values():
        ModelAnswers(c, answer)
    calls = StrictCalls(*clients.values())
    monkeypatch.setattr(msk, "make_client", lambda s, region, timeout=10.0: clients[s])
    monkeypatch.setattr(
        msk, "unreachable", lambda servers, timeout: f"brokers not reachable from here ({servers}: timed out)"
    )

    def no_admin(*a, **k):
        raise AssertionError("the Admin API must not be called")

    monkeypatch.setattr("auditor.collectors.admin.collect_admin", no_admin)
    out = tmp_path / "snap"
    manifest, tables = collect_snapshot(out, "jsonl", Sources(msk_cluster_arn=ARN))
    assert manifest.errors == []
    assert len(tables["topics"]) == 40 and len(tables["partitions"]) == 120
    assert "GetMetricData" in calls.names and not any(
        n.startswith(("Update", "Create", "Delete")) for n in calls.names
    )
    skipped = [s for s in manifest.sources if s["status"] == "skipped"]
    assert skipped and skipped[0]["reason"].startswith("brokers not reachable from here")
    block = read_manifest(out).cluster["msk"]
    assert block["topics_source"] == "msk-api" and block["cloudwatch"]["enhanced_monitoring"] == "DEFAULT"
    # the MSK source records which metrics CloudWatch gave, by name (auditor/coverage.py, issue 47)
    (entry,) = [s for s in read_manifest(out).sources if s["source"] == "msk"]
    assert entry["metrics"] == sorted({r["name"] for r in tables["metrics"]}) and entry["metrics"]
    fired, _ = audit_sample(("REP002", "MSK003"), roots=(out,))
    assert fired == {("payments", "REP002"): {"topic:t00011"}, ("payments", "MSK003"): {"broker:2"}}
    # The same snapshot is the patch preflight's whole input: restarting any broker takes
    # t00011 (min.insync.replicas 3 on RF 3) below its min ISR.
    from tests.test_lint import cli

    code, text, err = cli(capsys, "preflight", str(out))
    assert code == 1, err
    assert "t00011" in text and "unsafe" in text
    # The idle ratios need PER_BROKER monitoring: not evaluated, naming the level, not healthy.
    code, text, err = cli(capsys, "check", str(out), "--select", "THR001,THR002,MSK003", "--format", "json")
    report = json.loads(text)
    gaps = {code: e["reason"] for e in report["clusters"][0]["not_evaluated"] for code in e["rules"]}
    assert gaps == {
        "THR001": "no network_processor_avg_idle_percent metric: CloudWatch NetworkProcessorAvgIdlePercent "
        "needs enhanced monitoring PER_BROKER (the cluster's level is DEFAULT)",
        "THR002": "no request_handler_avg_idle_percent metric: CloudWatch RequestHandlerAvgIdlePercent "
        "needs enhanced monitoring PER_BROKER (the cluster's level is DEFAULT)",
    }


def test_a_cluster_before_kafka_3_6_gets_one_clear_error_and_no_topic_call(monkeypatch):
    """AWS: the topic APIs need Kafka 3.6.0 or later; a 2.8 cluster is told so, not called."""
    info = cluster_info(version="2.8.1")
    calls, stubs = stub_clients(monkeypatch, cluster_calls(info, config=True))
    got = msk.collect_msk(ARN, topics="api")
    for s in stubs:
        s.assert_no_pending_responses()
    assert [e["message"] for e in got.result.errors] == [
        f"{ARN}: the MSK topic APIs need Kafka 3.6.0 or later and the cluster runs 2.8.1: no topics read "
        "(give --command-config or --bootstrap-servers to read them through the Kafka Admin API)"
    ]
    assert not any(n.endswith(("Topics", "Topic", "Partitions")) for n in calls.names)
    assert got.bootstrap is None


def test_cli_collect_with_msk_topics_api(monkeypatch, capsys, tmp_path):
    """kafka-audit collect --msk-cluster-arn ARN --msk-topics api: no probe, no Admin API; the
    topics and partitions are in the snapshot, CloudWatch was asked; exit 0."""
    from tests.test_lint import cli

    fake = FakeTopics(12, lagging={"t00003": 1})
    clients = {s: msk.make_client(s, REGION, 5.0) for s in ("kafka", "ec2", "cloudwatch")}
    answer = _full_answers(fake, cluster_info())
    for c in clients.values():
        ModelAnswers(c, answer)
    StrictCalls(*clients.values())
    monkeypatch.setattr(msk, "make_client", lambda s, region, timeout=10.0: clients[s])

    def no_probe(servers, timeout):
        raise AssertionError("--msk-topics api does not probe the brokers")

    monkeypatch.setattr(msk, "unreachable", no_probe)
    out = tmp_path / "snap"
    code, text, err = cli(
        capsys, "collect", "--msk-cluster-arn", ARN, "--msk-topics", "api", "-o", out, "--format", "jsonl"
    )
    assert code == 0, err
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["cluster"]["msk"]["topics_api"]["out_of_sync_replicas"] == 3
    assert manifest["tables"]["partitions"] and "metrics" not in manifest["tables"]
    cw = manifest["cluster"]["msk"]["cloudwatch"]  # asked, but no datapoint came back
    assert cw["enhanced_monitoring"] == "PER_BROKER" and cw["no_data"]
    code, _, err = cli(capsys, "collect", "--zookeeper", "zk.internal:2181", "--msk-topics", "api", "-o", out)
    assert code == 2 and "--msk-topics only with --msk-cluster-arn" in err


def test_out_of_sync_only_describes_just_the_topics_listtopics_flags():
    fake = FakeTopics(450, lagging={"t00100": 3, "t00400": 1})
    kafka = msk.make_client("kafka", REGION, 5.0)
    answers = ModelAnswers(kafka, fake.answer)
    r = CollectResult()
    got = msk_topics.collect_topics(r, kafka, ARN, workers=4, rate=0, out_of_sync_only=True)
    assert r.errors == [] and len(r.tables["topics"]) == 450
    assert {p["topic"] for p in r.tables["partitions"]} == {"t00100", "t00400"}
    assert got.calls == len(answers.calls) == 5 + 2 * 2  # five ListTopics pages, two topics described


def test_preflight_and_check_take_the_arn_alone(monkeypatch, capsys):
    """`kafka-audit preflight --msk-cluster-arn ARN` is the whole patch preflight (the MSK API
    answers through botocore's model-validating stand-in, the brokers unreachable): it
    collects first, then simulates; `check` takes the same source."""
    from tests.test_lint import cli

    fake = FakeTopics(20, configs={"t00007": "min.insync.replicas=3\n"})
    clients = {s: msk.make_client(s, REGION, 5.0) for s in ("kafka", "ec2", "cloudwatch")}
    for c in clients.values():
        ModelAnswers(c, _full_answers(fake, cluster_info()))
    calls = StrictCalls(*clients.values())
    monkeypatch.setattr(msk, "make_client", lambda s, region, timeout=10.0: clients[s])
    monkeypatch.setattr(
        msk, "unreachable", lambda servers, timeout: f"brokers not reachable from here ({servers}: timed out)"
    )
    code, text, err = cli(capsys, "preflight", "--msk-cluster-arn", ARN)
    assert code == 1, err
    assert "t00007" in text and "unsafe" in text
    code, text, err = cli(capsys, "check", "--msk-cluster-arn", ARN, "--select", "REP002", "--format", "json")
    assert code == 1, err
    assert {f["resource"]["name"] for f in json.loads(text)["findings"]} == {"t00007"}
    assert not any(n.startswith(("Update", "Create", "Delete", "Put")) for n in calls.names)
    code, _, err = cli(capsys, "preflight", "--msk-cluster-arn", "arn:aws:kafka:x", "--msk-topics", "api")
    assert code == 2 and "expected arn:aws:kafka:REGION:ACCOUNT:cluster/NAME/UUID" in err


@pytest.mark.parametrize("command", ["collect", "check", "preflight"])
def test_a_denied_topic_call_is_one_stderr_line_in_every_command(monkeypatch, capsys, tmp_path, command):
    """Issue 47: a denied DescribeTopicPartitions made the run incomplete (exit 3) but check and
    preflight said nowhere which call was denied. Every command that collects prints the same
    line: the action, the resource (the topic's ARN) and the permission to grant (botocore's
    model-validating stand-in answers; no real MSK endpoint here)."""
    from tests.test_lint import cli

    fake = FakeTopics(12)
    clients = {s: msk.make_client(s, REGION, 5.0) for s in ("kafka", "ec2", "cloudwatch")}
    for c in clients.values():
        ModelAnswers(c, _full_answers(fake, cluster_info(), denied="DescribeTopicPartitions"))
    monkeypatch.setattr(msk, "make_client", lambda s, region, timeout=10.0: clients[s])
    monkeypatch.setattr(msk, "unreachable", lambda servers, timeout: "brokers not reachable from here")
    args = ["--msk-cluster-arn", ARN, *(["-o", tmp_path / "snap"] if command == "collect" else [])]
    code, _out, err = cli(capsys, command, *args)
    assert code == 3, err
    lines = [x for x in err.splitlines() if "kafka:DescribeTopicPartitions denied for" in x]
    topics = f"arn:aws:kafka:{REGION}:123456789012:topic/payments/5f3a1c2e-7d1b-4a8e-9c3f-2b6d8e0a1f4c-2/"
    assert len(lines) == 1 and lines[0].startswith(
        f"kafka-audit: msk: kafka:DescribeTopicPartitions denied for {topics}t000"
    )
    assert lines[0].endswith(
        f"(AccessDeniedException): allow kafka-cluster:Connect on {ARN} and kafka-cluster:DescribeTopic and "
        f"kafka-cluster:DescribeTopicDynamicConfiguration on {topics}* in the IAM policy (README: AWS MSK source)"
    )


def test_a_denied_subnet_lookup_is_a_note_naming_the_permission(monkeypatch, capsys, tmp_path):
    """ec2:DescribeSubnets only gives the racks: denied, it is no source error, but its line says
    what to allow all the same."""
    from tests.test_lint import cli

    fake = FakeTopics(3)
    clients = {s: msk.make_client(s, REGION, 5.0) for s in ("kafka", "ec2", "cloudwatch")}
    for c in clients.values():
        ModelAnswers(c, _full_answers(fake, cluster_info(), denied="DescribeSubnets"))
    monkeypatch.setattr(msk, "make_client", lambda s, region, timeout=10.0: clients[s])
    monkeypatch.setattr(msk, "unreachable", lambda servers, timeout: "brokers not reachable from here")
    code, _out, err = cli(capsys, "collect", "--msk-cluster-arn", ARN, "-o", tmp_path / "snap")
    assert code == 0, err
    (line,) = [x for x in err.splitlines() if "ec2:DescribeSubnets" in x]
    assert line.startswith("kafka-audit: note: ec2:DescribeSubnets denied for subnet-") and line.endswith(
        "allow ec2:DescribeSubnets on * (it takes no resource-level permission) in the IAM policy "
        "(README: AWS MSK source): racks unknown"
    )


def _inventory_of_one_msk_cluster(tmp_path, monkeypatch, topics: int, deadline: str = ""):
    from auditor.collectors.inventory import load_inventory

    fake = FakeTopics(topics)
    clients = {s: msk.make_client(s, REGION, 5.0) for s in ("kafka", "ec2", "cloudwatch")}
    for c in clients.values():
        ModelAnswers(c, _full_answers(fake, cluster_info()))
    monkeypatch.setattr(msk, "make_client", lambda s, region, timeout=10.0: clients[s])
    monkeypatch.setattr(msk, "unreachable", lambda servers, timeout: "brokers not reachable from here")
    f = tmp_path / "fleet.yaml"
    f.write_text(f"clusters:\n  - name: payments\n    msk: {{cluster_arn: '{ARN}'}}\n{deadline}")
    inv = load_inventory(f)
    return inv


@pytest.mark.parametrize("topics", [40])
def test_a_clusters_deadline_grows_with_its_msk_topic_calls(tmp_path, monkeypatch, topics):
    """Issue 47: the fleet collector's per-cluster deadline did not count the MSK topic APIs' calls
    (two or more per topic at their rate): a cluster with thousands of topics timed out unless
    `deadline:` was set. Once ListTopics has answered, a computed deadline grows by twice their
    time at the rate bound. Scaled down here: a 1 s base, 40 topics at 20 calls/s (4 s)."""
    from auditor.collectors import fleet_collect, msk_topics

    monkeypatch.setattr(fleet_collect, "cluster_deadline", lambda entry: entry.deadline or 1.0)
    monkeypatch.setattr(msk_topics, "DEFAULT_RATE", 20.0)
    inv = _inventory_of_one_msk_cluster(tmp_path, monkeypatch, topics)
    (out,) = fleet_collect.collect_fleet(inv, inv.clusters, tmp_path / "root", "2026-11-23")
    assert out.ok, out.errors
    assert out.seconds > 2 * topics / 20.0 * 0.9  # it ran well past the 1 s base
    manifest = json.loads(
        (tmp_path / "root" / "dt=2026-11-23" / "cluster=payments" / "manifest.json").read_text()
    )
    assert manifest["cluster"]["msk"]["topics_api"]["topics"] == topics


def test_a_deadline_the_inventory_sets_is_kept_and_the_error_says_what_to_set(tmp_path, monkeypatch):
    """A `deadline:` the user set is a bound they chose: not grown; the cluster is given up at
    it, its topic calls stop, and the error says how many there were and what to set."""
    from auditor.collectors import fleet_collect, msk_topics

    monkeypatch.setattr(msk_topics, "DEFAULT_RATE", 20.0)
    inv = _inventory_of_one_msk_cluster(tmp_path, monkeypatch, 40, deadline="    deadline: 2\n")
    before = set(threading.enumerate())
    (out,) = fleet_collect.collect_fleet(inv, inv.clusters, tmp_path / "root", "2026-11-23")
    assert not out.ok
    (error,) = out.errors
    assert error["source"] == "cluster" and error["message"].startswith(
        "no result within 2 s (the cluster's deadline; its MSK topic APIs needed 80 calls, at least 4 s at "
        "their rate); abandoned, nothing of it kept: set 'deadline: "
    )
    suggested = int(error["message"].rsplit("'deadline: ", 1)[1].split("'")[0])
    assert suggested >= 2 + 3 * 4 and suggested % 60 == 0
    # no topic call is sent once the cluster is given up: its threads end
    for t in [t for t in threading.enumerate() if t not in before]:
        t.join(10)
        assert not t.is_alive(), t.name
