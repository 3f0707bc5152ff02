"""The AWS MSK source (auditor/collectors/msk.py) against botocore's Stubber.

Stubber validates every stubbed request's parameters and every stubbed response against botocore's
own service model for ``kafka`` (botocore/data/kafka/2018-11-14/service-2.json) and ``ec2``: a
parameter the API does not take, a missing required one, or a response field MSK does not return
fails the test. moto does not implement ListNodes, GetBootstrapBrokers,
DescribeConfigurationRevision or ListClusterOperationsV2, so Stubber is used for every call.
Throttling is tested one level lower (a ``before-send`` hook answering HTTP 429), so that botocore's
real retry handler, with its backoff, runs; Stubber answers before that handler.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from auditor.sources import Sources

pytest.importorskip("boto3")

from botocore.awsrequest import AWSResponse  # noqa: E402
from botocore.stub import Stubber  # noqa: E402

from auditor.collectors import msk  # noqa: E402
from auditor.collectors._common import CollectResult  # noqa: E402
from auditor.snapshot.io import Manifest  # noqa: E402
from tests.msk_answers import skip_retry_sleeps  # noqa: E402
from tests.test_collect_metrics import MSK_TEXT, NODE_TEXT  # noqa: E402

REGION = "eu-west-1"
ARN = f"arn:aws:kafka:{REGION}:123456789012:cluster/payments/5f3a1c2e-7d1b-4a8e-9c3f-2b6d8e0a1f4c-2"
CONFIG_ARN = (
    f"arn:aws:kafka:{REGION}:123456789012:configuration/payments-conf/0b1c2d3e-4f5a-6b7c-8d9e-0f1a2b3c4d5e-2"
)
SUBNETS = {
    "subnet-0a1b2c3d4e5f60001": "euw1-az1",
    "subnet-0a1b2c3d4e5f60002": "euw1-az2",
    "subnet-0a1b2c3d4e5f60003": "euw1-az3",
}
WHEN = dt.datetime(2026, 11, 20, 3, 0, tzinfo=dt.UTC)
SERVER_PROPERTIES = b"""auto.create.topics.enable=false
default.replication.factor=3
min.insync.replicas=2
num.io.threads=8
num.network.threads=5
unclean.leader.election.enable=false
"""


def host(broker_id: int, name: str = "payments") -> str:
    return f"b-{broker_id}.{name}.x7k2pq.c2.kafka.{REGION}.amazonaws.com"


def cluster_info(
    *,
    instance_type="kafka.m5.large",
    version="3.6.0",
    state="ACTIVE",
    config=True,
    brokers=3,
    storage="LOCAL",
    jmx=True,
    node=True,
    zookeeper=True,
    active_operation=None,
) -> dict:
    """DescribeClusterV2's ClusterInfo of a provisioned cluster (fields as the service model names them)."""
    group = {
        "BrokerAZDistribution": "DEFAULT",
        "ClientSubnets": list(SUBNETS),
        "InstanceType": instance_type,
        "SecurityGroups": ["sg-0123456789abcdef0"],
        "ZoneIds": list(SUBNETS.values()),
        "ConnectivityInfo": {"PublicAccess": {"Type": "DISABLED"}},
    }
    if not instance_type.startswith("express."):
        group["StorageInfo"] = {"EbsStorageInfo": {"VolumeSize": 1000}}
    software = {"KafkaVersion": version}
    if config:
        software |= {"ConfigurationArn": CONFIG_ARN, "ConfigurationRevision": 3}
    provisioned = {
        "BrokerNodeGroupInfo": group,
        "CurrentBrokerSoftwareInfo": software,
        "ClientAuthentication": {
            "Sasl": {"Iam": {"Enabled": True}, "Scram": {"Enabled": False}},
            "Tls": {"Enabled": False},
            "Unauthenticated": {"Enabled": False},
        },
        "EncryptionInfo": {"EncryptionInTransit": {"ClientBroker": "TLS", "InCluster": True}},
        "EnhancedMonitoring": "PER_BROKER",
        "OpenMonitoring": {
            "Prometheus": {"JmxExporter": {"EnabledInBroker": jmx}, "NodeExporter": {"EnabledInBroker": node}}
        },
        "NumberOfBrokerNodes": brokers,
        "StorageMode": storage,
    }
    if zookeeper:
        provisioned["ZookeeperConnectString"] = ",".join(
            f"z-{i}.payments.x7k2pq.c2.kafka.{REGION}.amazonaws.com:2181" for i in (1, 2, 3)
        )
    info = {
        "ClusterType": "PROVISIONED",
        "ClusterArn": ARN,
        "ClusterName": "payments",
        "CreationTime": WHEN,
        "CurrentVersion": "K3AEGXETSR30VB",
        "State": state,
        "Tags": {"environment": "prod"},
        "Provisioned": provisioned,
    }
    if active_operation:
        info["ActiveOperationArn"] = active_operation
    return {"ClusterInfo": info}


def nodes(count=3, *, controllers=0, version="3.6.0") -> dict:
    subnets = list(SUBNETS)
    out = [
        {
            "AddedToClusterTime": "2026-01-05T10:00:00.000Z",
            "InstanceType": "m5.large",
            "NodeType": "BROKER",
            "NodeARN": f"arn:aws:kafka:{REGION}:123456789012:broker/payments/5f3a1c2e/{b}",
            "BrokerNodeInfo": {
                "AttachedENIId": f"eni-0{b}",
                "BrokerId": float(b),
                "ClientSubnet": subnets[(b - 1) % 3],
                "ClientVpcIpAddress": f"10.0.{b}.10",
                "Endpoints": [host(b)],
                "CurrentBrokerSoftwareInfo": {"KafkaVersion": version},
            },
        }
        for b in range(1, count + 1)
    ]
    out += [
        {
            "NodeARN": f"arn:aws:kafka:{REGION}:123456789012:controller/payments/5f3a1c2e/{c}",
            "ControllerNodeInfo": {"Endpoints": [f"c-{c}.payments.x7k2pq.c2.kafka.{REGION}.amazonaws.com"]},
        }
        for c in range(10000, 10000 + controllers)
    ]
    return {"NodeInfoList": out}


BOOTSTRAP = {
    "BootstrapBrokerStringTls": ",".join(f"{host(b)}:9094" for b in (1, 2, 3)),
    "BootstrapBrokerStringSaslIam": ",".join(f"{host(b)}:9098" for b in (1, 2, 3)),
    "BootstrapBrokerStringSaslScram": ",".join(f"{host(b)}:9096" for b in (1, 2, 3)),
}


def subnets_response() -> dict:
    return {
        "Subnets": [
            {
                "SubnetId": s,
                "AvailabilityZone": f"{REGION}{'abc'[i]}",
                "AvailabilityZoneId": az,
                "VpcId": "vpc-0123456789abcdef0",
                "CidrBlock": f"10.0.{i + 1}.0/24",
                "State": "available",
            }
            for i, (s, az) in enumerate(SUBNETS.items())
        ]
    }


def operations(*running) -> dict:
    done = {
        "ClusterArn": ARN,
        "ClusterType": "PROVISIONED",
        "StartTime": WHEN - dt.timedelta(days=30),
        "EndTime": WHEN - dt.timedelta(days=30, hours=-1),
        "OperationState": "UPDATE_COMPLETE",
        "OperationArn": f"arn:aws:kafka:{REGION}:123456789012:cluster-operation/payments/5f3a1c2e/old",
        "OperationType": "UPDATE_CLUSTER_CONFIGURATION",
    }
    return {"ClusterOperationInfoList": [*running, done]}


@pytest.fixture(autouse=True)
def aws_env(monkeypatch):
    """Fake credentials (never a real account): the standard chain finds these first."""
    for key, value in (
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_DEFAULT_REGION", REGION),
    ):
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


class Calls:
    """Wraps a client: records every operation and fails the test on one that is not a read."""

    def __init__(self, *clients):
        self.names: list[str] = []
        for client in clients:
            client.meta.events.register("before-parameter-build.*.*", self.record)

    def record(self, model, **_):
        self.names.append(model.name)
        assert model.name.startswith(("Describe", "List", "Get")), f"{model.name} is not read-only"


def stubbed(monkeypatch, kafka_calls, ec2_calls=()):
    """make_client -> real clients (the collector's own config and read-only guard) with Stubber
    answering ``(operation, response, expected params)`` in order; returns (Calls, stubbers)."""
    kafka, ec2 = msk.make_client("kafka", REGION, 5.0), msk.make_client("ec2", REGION, 5.0)
    stubs = []
    for client, calls in ((kafka, kafka_calls), (ec2, ec2_calls)):
        stub = Stubber(client)
        for call in calls:
            if call[0] == "error":
                _, operation, code, status = call
                stub.add_client_error(
                    operation,
                    service_error_code=code,
                    service_message="denied by policy",
                    http_status_code=status,
                )
            else:
                operation, response, params = call
                stub.add_response(operation, response, params)
        stub.activate()
        stubs.append(stub)
    monkeypatch.setattr(
        msk, "make_client", lambda service, region, timeout=10.0: kafka if service == "kafka" else ec2
    )
    return Calls(kafka, ec2), stubs


def zookeeper_calls(**info):
    return [
        ("describe_cluster_v2", cluster_info(**info), {"ClusterArn": ARN}),
        ("list_nodes", nodes(), {"ClusterArn": ARN}),
        ("get_bootstrap_brokers", BOOTSTRAP, {"ClusterArn": ARN}),
        (
            "describe_configuration_revision",
            {
                "Arn": CONFIG_ARN,
                "CreationTime": WHEN,
                "Description": "payments",
                "Revision": 3,
                "ServerProperties": SERVER_PROPERTIES,
            },
            {"Arn": CONFIG_ARN, "Revision": 3},
        ),
        ("list_cluster_operations_v2", operations(), {"ClusterArn": ARN}),
        ("get_compatible_kafka_versions", COMPATIBLE, {"ClusterArn": ARN}),
    ]


# GetCompatibleKafkaVersions, shaped as boto3's documented response (the API reference's
# CompatibleKafkaVersion: SourceVersion, TargetVersions): what a 3.6.0 cluster may move to.
COMPATIBLE = {
    "CompatibleKafkaVersions": [
        {"SourceVersion": "3.6.0", "TargetVersions": ["3.7.x", "3.8.x", "3.9.x"]},
    ]
}
SUBNET_CALL = [("describe_subnets", subnets_response(), {"SubnetIds": sorted(SUBNETS)})]


def test_zookeeper_mode_cluster(monkeypatch):
    calls, stubs = stubbed(monkeypatch, zookeeper_calls(), SUBNET_CALL)
    got = msk.collect_msk(ARN)
    for s in stubs:
        s.assert_no_pending_responses()
    assert got.result.errors == []
    assert got.cluster_fields == {
        "platform": "msk",
        "msk_instance_type": "kafka.m5.large",
        "az_count": 3,
        "metadata_mode": "zookeeper",
    }
    assert got.result.meta == {"kafka_version": "3.6.0", "kafka_version_source": "msk-api"}
    assert [(b["broker_id"], b["host"], b["port"], b["rack"]) for b in got.result.tables["brokers"]] == [
        (1, host(1), 9094, "euw1-az1"),
        (2, host(2), 9094, "euw1-az2"),
        (3, host(3), 9094, "euw1-az3"),
    ]
    # No client config: unauthenticated TLS is the listener (IAM would need one).
    assert got.bootstrap == BOOTSTRAP["BootstrapBrokerStringTls"] and got.bootstrap_protocol == "SSL"
    configs = {(c["entity_name"], c["key"]): c for c in got.result.tables["configs"]}
    # The revision's 6 keys, and MSK's default configuration for every key it leaves unset
    # (AWS: "Properties that you don't set explicitly get the values they have in the default
    # Amazon MSK configuration"), never Kafka's default.
    from_revision = {k for (b, k), c in configs.items() if c["file"] == f"{CONFIG_ARN}:3"}
    inherited = {k: c["value"] for (b, k), c in configs.items() if c["file"] == "msk-default-configuration"}
    assert len(from_revision) == 6 and len(configs) == 3 * (6 + len(inherited))
    assert inherited["auto.leader.rebalance.enable"] == "true" and inherited["num.replica.fetchers"] == "2"
    assert not from_revision & set(inherited)  # the revision's own values are never overridden
    row = configs[("2", "min.insync.replicas")]
    assert (row["value"], row["source"], row["file"], row["line"]) == (
        "2",
        "STATIC_BROKER_CONFIG",
        f"{CONFIG_ARN}:3",
        3,
    )
    assert got.metrics == [
        f"broker_id={b}:http://{host(b)}:{p}/metrics" for b in (1, 2, 3) for p in (11001, 11002)
    ]
    m = got.manifest
    assert (m["state"], m["storage_mode"], m["operations_in_progress"]) == ("ACTIVE", "LOCAL", [])
    assert m["configuration"] == {"arn": CONFIG_ARN, "revision": 3}
    assert m["zookeeper_connect"].startswith("z-1.payments.")
    # ClientAuthentication as DescribeClusterV2 gave it; the clusters column MSK005 reads.
    assert m["client_authentication"] == {"iam": True, "scram": False, "tls": False, "unauthenticated": False}
    assert Manifest(cluster={"id": "c", "msk": m}, collected_at="x").cluster_row()["msk_iam_auth"] is True
    assert got.result.sources == [{"source": "msk", "target": ARN, "status": "ok"}]
    assert calls.names == [
        "DescribeClusterV2",
        "ListNodes",
        "DescribeSubnets",
        "GetBootstrapBrokers",
        "DescribeConfigurationRevision",
        "ListClusterOperationsV2",
        "GetCompatibleKafkaVersions",
    ]
    # The upgrade preflight's next MSK hop, and AWS's migration prerequisites (UPG005)
    assert m["compatible_versions"] == ["3.7.x", "3.8.x", "3.9.x"]
    row = Manifest(cluster={"id": "c", "msk": m}, collected_at="x").cluster_row()
    assert row["msk_compatible_versions"] == "3.7.x,3.8.x,3.9.x" and row["msk_open_monitoring"] is True
    assert row["msk_public_access"] is False  # ConnectivityInfo.PublicAccess.Type DISABLED


def test_compatible_versions_denied_is_a_note_not_an_error(monkeypatch):
    calls_ = zookeeper_calls()
    calls_[-1] = ("error", "get_compatible_kafka_versions", "ForbiddenException", 403)
    stubbed(monkeypatch, calls_, SUBNET_CALL)
    got = msk.collect_msk(ARN)
    assert got.result.errors == []
    assert got.manifest["compatible_versions"] is None
    assert got.manifest["compatible_versions_note"].startswith(
        "unknown: kafka:GetCompatibleKafkaVersions denied"
    )


def test_kraft_cluster_in_maintenance_with_default_configuration(monkeypatch):
    op_arn = f"arn:aws:kafka:{REGION}:123456789012:cluster-operation/payments/5f3a1c2e/patch"
    running = {
        "ClusterArn": ARN,
        "ClusterType": "PROVISIONED",
        "StartTime": WHEN,
        "OperationArn": op_arn,
        "OperationState": "UPDATE_IN_PROGRESS",
        "OperationType": "UPDATE_BROKER_TYPE",
    }
    calls, _ = stubbed(
        monkeypatch,
        [
            (
                "describe_cluster_v2",
                cluster_info(
                    version="3.7.x.kraft",
                    state="MAINTENANCE",
                    config=False,
                    storage="TIERED",
                    zookeeper=False,
                    active_operation=op_arn,
                ),
                {"ClusterArn": ARN},
            ),
            ("list_nodes", nodes(controllers=3, version="3.7.x.kraft"), {"ClusterArn": ARN}),
            ("get_bootstrap_brokers", BOOTSTRAP, {"ClusterArn": ARN}),
            ("list_cluster_operations_v2", operations(running), {"ClusterArn": ARN}),
        ],
        SUBNET_CALL,
    )
    got = msk.collect_msk(ARN, security=("SASL_SSL", "AWS_MSK_IAM"))
    assert got.result.errors == []
    assert got.cluster_fields["metadata_mode"] == "kraft"
    assert got.result.meta["kafka_version"] == "3.7.x.kraft"
    assert got.bootstrap == BOOTSTRAP["BootstrapBrokerStringSaslIam"]  # the client config's mechanism
    m = got.manifest
    assert m["state"] == "MAINTENANCE" and m["active_operation_arn"] == op_arn
    assert m["operations_in_progress"] == [
        {
            "arn": op_arn,
            "type": "UPDATE_BROKER_TYPE",
            "state": "UPDATE_IN_PROGRESS",
            "start_time": WHEN.isoformat(),
        }
    ]
    assert len(m["controller_endpoints"]) == 3 and m["controller_endpoints"][0].startswith("c-10000.")
    # No custom configuration: MSK's documented defaults, for 3 AZs; no ZooKeeper keys on KRaft,
    # no unclean.leader.election.enable on tiered storage (not verified there).
    values = {c["key"]: c["value"] for c in got.result.tables["configs"] if c["entity_name"] == "1"}
    assert values["min.insync.replicas"] == "2" and values["default.replication.factor"] == "3"
    assert values["num.network.threads"] == "5" and values["auto.create.topics.enable"] == "false"
    assert (
        not any(k.startswith("zookeeper.") for k in values) and "unclean.leader.election.enable" not in values
    )
    assert {c["file"] for c in got.result.tables["configs"]} == {"msk-default-configuration"}
    assert m["configuration"]["source"].startswith("https://docs.aws.amazon.com/msk/")
    assert "DescribeConfigurationRevision" not in calls.names


def test_express_broker_cluster(monkeypatch):
    _, _ = stubbed(
        monkeypatch,
        [
            (
                "describe_cluster_v2",
                cluster_info(
                    instance_type="express.m7g.large",
                    version="3.6.x",
                    config=False,
                    node=False,
                    zookeeper=False,
                ),
                {"ClusterArn": ARN},
            ),
            ("list_nodes", nodes(), {"ClusterArn": ARN}),
            ("get_bootstrap_brokers", BOOTSTRAP, {"ClusterArn": ARN}),
            ("list_cluster_operations_v2", operations(), {"ClusterArn": ARN}),
        ],
        SUBNET_CALL,
    )
    got = msk.collect_msk(ARN)
    assert got.result.errors == []
    # Express: the instance type as MSK names it; not Standard's default configuration but the
    # two values MSK fixes on Express brokers (AWS's read-only table); without a .kraft marker
    # the metadata mode is not claimed; JMX exporter only.
    assert got.cluster_fields == {"platform": "msk", "msk_instance_type": "express.m7g.large", "az_count": 3}
    assert sorted(
        (c["entity_name"], c["key"], c["value"], c["file"]) for c in got.result.tables["configs"]
    ) == [
        (str(b), key, value, "msk-express-read-only-configuration")
        for b in (1, 2, 3)
        for key, value in (("default.replication.factor", "3"), ("min.insync.replicas", "2"))
    ]
    assert got.manifest["express_read_only"]["source"].endswith("msk-configuration-express-read-only.html")
    assert got.metrics == [f"broker_id={b}:http://{host(b)}:11001/metrics" for b in (1, 2, 3)]


def test_access_denied_is_one_line_naming_the_call_and_action(monkeypatch):
    calls, _ = stubbed(monkeypatch, [("error", "describe_cluster_v2", "AccessDeniedException", 403)])
    got = msk.collect_msk(ARN)
    assert got.result.errors == [
        {
            "source": "msk",
            "target": ARN,
            "message": f"kafka:DescribeClusterV2 denied for {ARN} (AccessDeniedException): allow "
            f"kafka:DescribeClusterV2 on {ARN} in the IAM policy (README: AWS MSK source)",
            "aws": {"action": "kafka:DescribeClusterV2", "resource": ARN, "kind": "denied"},
        }
    ]
    assert got.result.sources == [{"source": "msk", "target": ARN, "status": "error"}]
    assert calls.names == ["DescribeClusterV2"] and got.cluster_fields == {}


def test_a_later_denial_keeps_what_was_read(monkeypatch):
    calls_ = zookeeper_calls()
    calls_[2] = ("error", "get_bootstrap_brokers", "ForbiddenException", 403)
    stubbed(monkeypatch, calls_, SUBNET_CALL)
    got = msk.collect_msk(ARN)
    assert [e["message"].split(" for ")[0] for e in got.result.errors] == ["kafka:GetBootstrapBrokers denied"]
    assert len(got.result.tables["brokers"]) == 3 and got.bootstrap is None
    assert got.result.sources[-1]["status"] == "error"


def test_ec2_denied_leaves_racks_unknown_without_an_error(monkeypatch):
    stubbed(monkeypatch, zookeeper_calls(), [("error", "describe_subnets", "UnauthorizedOperation", 403)])
    got = msk.collect_msk(ARN)
    assert got.result.errors == []
    assert {b["rack"] for b in got.result.tables["brokers"]} == {None}
    assert got.manifest["racks"].startswith("unknown: ec2:DescribeSubnets denied")
    assert got.cluster_fields["az_count"] == 3  # from the client subnets, not from EC2


class _Raw:
    def __init__(self, body: bytes):
        self.body = body

    def stream(self, **_):
        yield self.body


def test_throttling_is_retried_with_backoff_then_succeeds(monkeypatch):
    """Two HTTP 429 TooManyRequestsException answers, then the real response: botocore's
    standard retry mode (the collector's client config) retries, sleeping in between."""
    client = msk.make_client("kafka", REGION, 5.0)
    sent = []
    body = json.dumps(
        {
            "clusterInfo": {
                "clusterArn": ARN,
                "clusterName": "payments",
                "clusterType": "PROVISIONED",
                "state": "ACTIVE",
            }
        }
    ).encode()

    def answer(request, **_):
        sent.append(request.url)
        if len(sent) <= 2:  # the first call, DescribeClusterV2, twice
            return AWSResponse(
                request.url,
                429,
                {"x-amzn-ErrorType": "TooManyRequestsException"},
                _Raw(b'{"message": "Too Many Requests"}'),
            )
        return AWSResponse(request.url, 200, {"Content-Type": "application/json"}, _Raw(body))

    client.meta.events.register("before-send.kafka.*", answer)
    slept = skip_retry_sleeps(monkeypatch)
    monkeypatch.setattr(msk, "make_client", lambda service, region, timeout=10.0: client)
    assert client.meta.config.retries["mode"] == "standard" and client.meta.config.connect_timeout == 5.0
    got = msk.collect_msk(ARN)
    describes = [u for u in sent if "/api/v2/clusters/" in u and not u.endswith("/operations")]
    assert len(describes) == 3 and sent[:3] == describes and len(slept) == 2 and all(s >= 0 for s in slept)
    assert got.name == "payments" and got.manifest["state"] == "ACTIVE"


def test_throttled_past_the_attempts_is_a_source_error(monkeypatch):
    client = msk.make_client("kafka", REGION, 5.0)
    sent = []

    def answer(request, **_):
        sent.append(1)
        return AWSResponse(
            request.url,
            429,
            {"x-amzn-ErrorType": "TooManyRequestsException"},
            _Raw(b'{"message": "Too Many Requests"}'),
        )

    client.meta.events.register("before-send.kafka.*", answer)
    skip_retry_sleeps(monkeypatch)
    monkeypatch.setattr(msk, "make_client", lambda service, region, timeout=10.0: client)
    got = msk.collect_msk(ARN)
    assert len(sent) == msk.MAX_ATTEMPTS
    assert got.result.errors[0]["message"] == (
        f"kafka:DescribeClusterV2 for {ARN}: still throttled after {msk.MAX_ATTEMPTS} attempts "
        "(TooManyRequestsException): AWS's request rate, not a permission: collect again later, or fewer "
        "clusters at once (--parallel)"
    )
    assert got.result.errors[0]["aws"] == {
        "action": "kafka:DescribeClusterV2",
        "resource": ARN,
        "kind": "throttled",
    }


def test_the_read_only_guard_refuses_a_mutating_call_before_sending():
    client = msk.make_client("kafka", REGION, 5.0)
    sent = []
    client.meta.events.register("before-send.kafka.*", lambda request, **_: sent.append(request.url))
    stub = Stubber(client)  # (the guard runs before Stubber's own hooks: nothing queued, nothing asked)
    stub.activate()
    with pytest.raises(PermissionError, match="UpdateBrokerCount is not a read-only call"):
        client.update_broker_count(
            ClusterArn=ARN, CurrentVersion="K3AEGXETSR30VB", TargetNumberOfBrokerNodes=6
        )
    assert sent == []


def test_discovery_across_regions_filters_by_tags(monkeypatch):
    infos = [
        cluster_info()["ClusterInfo"],
        {
            **cluster_info()["ClusterInfo"],
            "ClusterName": "search",
            "ClusterArn": ARN.replace("payments", "search"),
            "Tags": {},
        },
    ]
    clients = {}
    for region, answer in (("eu-west-1", {"ClusterInfoList": infos}), ("us-east-1", "denied")):
        client = msk.make_client("kafka", region, 5.0)
        stub = Stubber(client)
        if answer == "denied":
            stub.add_client_error(
                "list_clusters_v2", service_error_code="AccessDeniedException", http_status_code=403
            )
        else:
            stub.add_response("list_clusters_v2", answer, {"ClusterTypeFilter": "PROVISIONED"})
        stub.activate()
        clients[region] = client
    found, errors = msk.discover(["eu-west-1", "us-east-1"], tags={"environment": "prod"}, clients=clients)
    assert [(d.name, d.region, d.tags) for d in found] == [("payments", "eu-west-1", {"environment": "prod"})]
    assert [e["message"] for e in errors] == [
        "kafka:ListClustersV2 denied for region us-east-1 (AccessDeniedException): allow kafka:ListClustersV2 "
        "on * (it takes no resource-level permission) in the IAM policy (README: AWS MSK source)"
    ]


# --- through collect: the snapshot and the rules --------------------------------------------------


def _admin_partitions(seen):
    """The Admin API collector as MSK's bootstrap listener would answer it: one RF 2 topic of
    2400 partitions over brokers 1-3 (1600 replicas each: above kafka.m5.large's 1500)."""

    def collect_admin(bootstrap, *, client_config=None, **_):
        seen.update(bootstrap=bootstrap, protocol=client_config.get("security.protocol"))
        partitions = [
            {
                "topic": "clicks",
                "partition": p,
                "leader": p % 3 + 1,
                "leader_epoch": 0,
                "replicas": [p % 3 + 1, (p + 1) % 3 + 1],
                "isr": [p % 3 + 1, (p + 1) % 3 + 1],
                "offline_replicas": [],
                "adding_replicas": [],
                "removing_replicas": [],
            }
            for p in range(2400)
        ]
        return CollectResult(
            tables={
                "topics": [
                    {
                        "topic": "clicks",
                        "partitions": 2400,
                        "replication_factor": 2,
                        "is_internal": False,
                        "topic_id": None,
                    }
                ],
                "partitions": partitions,
            },
            sources=[{"source": "admin", "target": bootstrap, "status": "ok"}],
        )

    return collect_admin


def _scrapes(fetched):
    def fetch(url, timeout):
        fetched.append(url)
        if url.endswith(":11002/metrics"):
            return NODE_TEXT.encode()
        busy = url.startswith(f"http://{host(2)}")
        return MSK_TEXT.replace(
            "SystemCpuLoad 0.52", "SystemCpuLoad 0.75" if busy else "SystemCpuLoad 0.41"
        ).encode()

    return fetch


def test_rules_fire_on_a_snapshot_collected_from_msk_alone(monkeypatch, tmp_path):
    """MSK001/MSK002/MSK003 and REP009 fire with nothing typed: platform, instance type and AZ
    count come from the MSK API, the partitions from the Admin API on MSK's bootstrap listener,
    the CPU from the open-monitoring URLs the MSK source derived."""
    from auditor.collectors.fleet_collect import collect_snapshot
    from auditor.snapshot.io import read_manifest
    from tests.conftest import audit_sample

    stubbed(monkeypatch, zookeeper_calls(), SUBNET_CALL)
    seen, fetched = {}, []
    monkeypatch.setattr("auditor.collectors.admin.collect_admin", _admin_partitions(seen))
    # The KRaft source (when present) reads the same listener: nothing to answer it here.
    monkeypatch.setattr(
        "auditor.collectors.kraft.collect_kraft", lambda *a, **k: CollectResult(), raising=False
    )
    monkeypatch.setattr("auditor.collectors.metrics._fetch_url", _scrapes(fetched))
    # MSK's listener counts as reachable (the Admin API is stood in for above): --msk-topics auto
    # keeps the Admin API and the exporters.
    monkeypatch.setattr(msk, "unreachable", lambda servers, timeout: None)
    out = tmp_path / "snap"
    manifest, tables = collect_snapshot(out, "jsonl", Sources(msk_cluster_arn=ARN))
    assert manifest.errors == [], manifest.errors
    assert seen == {"bootstrap": BOOTSTRAP["BootstrapBrokerStringTls"], "protocol": "SSL"}
    assert len(fetched) == 6
    c = read_manifest(out).cluster
    assert {
        k: c.get(k)
        for k in (
            "name",
            "platform",
            "msk_instance_type",
            "az_count",
            "metadata_mode",
            "kafka_version",
            "kafka_version_source",
        )
    } == {
        "name": "payments",
        "platform": "msk",
        "msk_instance_type": "kafka.m5.large",
        "az_count": 3,
        "metadata_mode": "zookeeper",
        "kafka_version": "3.6.0",
        "kafka_version_source": "msk-api",
    }
    on_disk = json.loads((out / "manifest.json").read_text())
    assert on_disk["cluster"]["msk"]["cluster_arn"] == ARN and on_disk["cluster"]["msk"]["state"] == "ACTIVE"
    fired, _ = audit_sample(("MSK001", "MSK002", "MSK003", "REP009"), roots=(out,))
    assert fired == {
        ("payments", "MSK001"): {"broker:1", "broker:2", "broker:3"},
        ("payments", "MSK002"): {"broker:1", "broker:2", "broker:3"},
        ("payments", "MSK003"): {"broker:2"},
        ("payments", "REP009"): {"topic:clicks"},
    }


def test_cli_collect_msk_access_denied_exits_3_with_one_line(monkeypatch, capsys, tmp_path):
    from tests.test_lint import cli

    stubbed(monkeypatch, [("error", "describe_cluster_v2", "AccessDeniedException", 403)])
    code, _out, err = cli(
        capsys, "collect", "--msk-cluster-arn", ARN, "-o", tmp_path / "snap", "--format", "jsonl"
    )
    assert code == 3
    assert err.strip().splitlines() == [
        f"kafka-audit: msk: kafka:DescribeClusterV2 denied for {ARN} (AccessDeniedException): allow "
        f"kafka:DescribeClusterV2 on {ARN} in the IAM policy (README: AWS MSK source)",
        "kafka-audit: collect incomplete: 1 source error(s), above (and in manifest.json)",
    ]
    assert "Traceback" not in err
    manifest = json.loads((tmp_path / "snap" / "manifest.json").read_text())
    assert manifest["errors"][0]["source"] == "msk"
    assert manifest["cluster"]["name"] == "payments"  # the ARN's name when DescribeClusterV2 is denied


def test_cli_rejects_a_region_that_is_not_the_arns(capsys, tmp_path):
    from tests.test_lint import cli

    code, _out, err = cli(
        capsys, "collect", "--msk-cluster-arn", ARN, "--msk-region", "us-east-1", "-o", tmp_path / "snap"
    )
    assert code == 2 and "--msk-region us-east-1 is not the region of --msk-cluster-arn (eu-west-1)" in err


def test_inventory_entry_and_discovery_block(tmp_path):
    from auditor.collectors.inventory import InventoryError, load_inventory

    inv = tmp_path / "fleet.yaml"
    inv.write_text(
        f"defaults:\n  timeout: 7\n  labels: {{team: data}}\nclusters:\n  - name: payments\n"
        f'    msk: {{cluster_arn: "{ARN}"}}\nmsk_discovery:\n  regions: [eu-west-1, us-east-1]\n'
        "  tags: {environment: prod}\n"
    )
    loaded = load_inventory(inv)
    entry = loaded.clusters[0]
    assert (entry.msk_cluster_arn, entry.msk_region) == (ARN, None)
    assert entry.resolved(str(inv))["msk"] == {"cluster_arn": ARN}
    d = loaded.msk_discovery
    assert (d.regions, d.tags, d.template.timeout) == (
        ["eu-west-1", "us-east-1"],
        {"environment": "prod"},
        7.0,
    )
    found = [
        msk.Discovered("payments", ARN, REGION, {"environment": "prod"}),  # already listed: not twice
        msk.Discovered("search", ARN.replace("payments", "search"), REGION, {"environment": "prod"}),
    ]
    all_ = loaded.with_discovered(found)
    assert [(e.name, e.labels, e.timeout) for e in all_[1:]] == [
        ("search", {"team": "data", "platform": "msk", "environment": "prod"}, 7.0)
    ]
    inv.write_text(f'clusters:\n  - name: payments\n    msk: {{cluster_arn: "{ARN}", region: us-east-1}}\n')
    with pytest.raises(
        InventoryError,
        match=r"fleet.yaml:3: cluster 'payments': msk.region us-east-1 is not the "
        r"region of msk.cluster_arn \(eu-west-1\)",
    ):
        load_inventory(inv)
    inv.write_text("msk_discovery:\n  regions: [eu-west]\n")
    with pytest.raises(
        InventoryError, match="fleet.yaml:2: msk_discovery: regions: 'eu-west' is not an AWS region"
    ):
        load_inventory(inv)


def test_inventory_discovery_alone_collects_a_cluster(monkeypatch, capsys, tmp_path):
    """An inventory with only an msk_discovery block: the cluster is found (ListClustersV2), its
    tags become labels, the SCRAM listener of the defaults' client config is chosen, and its
    snapshot carries the MSK facts: nothing about the cluster is typed."""
    from tests.test_lint import cli

    calls = [
        (
            "list_clusters_v2",
            {"ClusterInfoList": [cluster_info()["ClusterInfo"]]},
            {"ClusterTypeFilter": "PROVISIONED"},
        ),
        *zookeeper_calls(),
    ]
    stubbed(monkeypatch, calls, SUBNET_CALL)
    seen, fetched = {}, []
    monkeypatch.setattr("auditor.collectors.admin.collect_admin", _admin_partitions(seen))
    monkeypatch.setattr(
        "auditor.collectors.kraft.collect_kraft", lambda *a, **k: CollectResult(), raising=False
    )
    monkeypatch.setattr("auditor.collectors.metrics._fetch_url", _scrapes(fetched))
    # MSK's listener counts as reachable (the Admin API is stood in for above): --msk-topics auto
    # keeps the Admin API and the exporters.
    monkeypatch.setattr(msk, "unreachable", lambda servers, timeout: None)
    (tmp_path / "scram.properties").write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\nsasl.jaas.config=org.apache.kafka.common."
        'security.scram.ScramLoginModule required username="auditor" password="not-in-any-snapshot";\n'
    )
    inv = tmp_path / "fleet.yaml"
    inv.write_text(
        "defaults:\n  command_config: scram.properties\n  labels: {owner: data}\n"
        "msk_discovery:\n  regions: [eu-west-1]\n  tags: {environment: prod}\n"
    )
    code, out, err = cli(
        capsys, "collect", "--inventory", inv, "--out", tmp_path / "root", "--run-date", "2026-11-23"
    )
    assert code == 0, err
    assert "payments: ok" in out
    assert seen == {"bootstrap": BOOTSTRAP["BootstrapBrokerStringSaslScram"], "protocol": "SASL_SSL"}
    snap = tmp_path / "root" / "dt=2026-11-23" / "cluster=payments"
    manifest = json.loads((snap / "manifest.json").read_text())
    assert manifest["labels"] == {"owner": "data", "platform": "msk", "environment": "prod"}
    assert (
        manifest["cluster"]["msk_instance_type"] == "kafka.m5.large" and manifest["cluster"]["az_count"] == 3
    )
    assert manifest["provenance"]["msk_instance_type"] == "discovered"
    assert manifest["inventory"]["msk"] == {"cluster_arn": ARN, "region": REGION}
    assert not any(b"not-in-any-snapshot" in f.read_bytes() for f in snap.iterdir())


# --- issue 37: an endpoint that answers garbage is a failed source (exit 3), not a crash ----------


def _answering(monkeypatch, body: bytes, content_type: str, only: str | None = None):
    """A real client whose HTTP answers are ``body`` (botocore parses them as it would a real
    endpoint's); ``only``: just this operation's URL suffix, the others get an HTTP 403."""
    client = msk.make_client("kafka", REGION, 5.0)

    def answer(request, **_):
        if only is None or request.url.endswith(only):
            return AWSResponse(request.url, 200, {"Content-Type": content_type}, _Raw(body))
        return AWSResponse(
            request.url, 403, {"x-amzn-ErrorType": "AccessDeniedException"}, _Raw(b'{"message": "no"}')
        )

    client.meta.events.register("before-send.kafka.*", answer)
    monkeypatch.setattr(msk, "make_client", lambda service, region, timeout=10.0: client)
    return client


@pytest.mark.parametrize(
    "body, content_type, why",
    [
        (b"<html><body><h1>Sign in</h1></body></html>", "text/html; charset=utf-8", "Content-Type text/html"),
        (b'{"message": "hello from another service"}', "application/json", "no ClusterInfo"),
        (b'{"clusterInfo": "yes"}', "application/json", "AttributeError"),
    ],
    ids=["html", "json-of-something-else", "wrong-shape"],
)
def test_an_endpoint_answering_garbage_is_a_failed_source(monkeypatch, body, content_type, why):
    _answering(monkeypatch, body, content_type)
    got = msk.collect_msk(ARN)
    (err,) = got.result.errors
    assert err["source"] == "msk" and err["message"].startswith(
        f"kafka:DescribeClusterV2 for {ARN}: the answer is not an MSK API response ("
    )
    assert why in err["message"] and got.result.sources[-1]["status"] == "error"


def test_list_nodes_answering_garbage_is_a_source_error_not_no_brokers(monkeypatch):
    calls = [
        ("describe_cluster_v2", cluster_info(), {"ClusterArn": ARN}),
        (
            "list_nodes",
            {"NodeInfoList": [{"BrokerNodeInfo": {"ClientSubnet": "subnet-1"}}]},
            {"ClusterArn": ARN},
        ),
    ]
    stubbed(monkeypatch, calls)
    got = msk.collect_msk(ARN)
    msgs = [e["message"] for e in got.result.errors]
    assert any(
        m.startswith(
            f"kafka:ListNodes for {ARN}: the answer is not an MSK API response (ValueError: BrokerId None"
        )
        for m in msgs
    ), msgs


def test_list_nodes_answering_html_is_a_source_error_not_no_brokers(monkeypatch):
    client = msk.make_client("kafka", REGION, 5.0)
    described = json.dumps({"clusterInfo": {"clusterName": "payments", "state": "ACTIVE"}}).encode()

    def answer(request, **_):
        if request.url.endswith("/nodes"):
            return AWSResponse(
                request.url, 200, {"Content-Type": "text/html"}, _Raw(b"<html>maintenance</html>")
            )
        if "/api/v2/clusters/" in request.url and not request.url.endswith("/operations"):
            return AWSResponse(request.url, 200, {"Content-Type": "application/json"}, _Raw(described))
        return AWSResponse(request.url, 200, {"Content-Type": "application/json"}, _Raw(b"{}"))

    client.meta.events.register("before-send.kafka.*", answer)
    monkeypatch.setattr(msk, "make_client", lambda service, region, timeout=10.0: client)
    got = msk.collect_msk(ARN)
    msgs = [e["message"] for e in got.result.errors]
    assert (
        f"kafka:ListNodes for {ARN}: the answer is not an MSK API response (Content-Type text/html): a proxy "
        "or a wrong endpoint answered"
    ) in msgs, msgs
    assert got.name == "payments" and not got.result.tables.get("brokers")


def test_cli_collect_from_an_endpoint_answering_html_exits_3_with_one_line(monkeypatch, capsys, tmp_path):
    from tests.test_lint import cli

    _answering(monkeypatch, b"<html><body>Sign in</body></html>", "text/html")
    code, _out, err = cli(
        capsys, "collect", "--msk-cluster-arn", ARN, "-o", tmp_path / "snap", "--format", "jsonl"
    )
    assert code == 3 and "internal error" not in err and "Traceback" not in err, err
    assert err.strip().splitlines() == [
        f"kafka-audit: collect incomplete: msk: kafka:DescribeClusterV2 for {ARN}: the answer is not an MSK API "
        "response (Content-Type text/html): a proxy or a wrong endpoint answered"
    ]


@pytest.mark.parametrize("broker_id", [1e30, 1.5, -1])
def test_list_nodes_with_a_broker_id_kafka_cannot_hold_is_a_source_error(monkeypatch, broker_id):
    node = {"BrokerNodeInfo": {"BrokerId": broker_id, "ClientSubnet": "subnet-1", "Endpoints": ["b-1.x"]}}
    calls = [
        ("describe_cluster_v2", cluster_info(), {"ClusterArn": ARN}),
        ("list_nodes", {"NodeInfoList": [node]}, {"ClusterArn": ARN}),
    ]
    stubbed(monkeypatch, calls)
    got = msk.collect_msk(ARN)
    msgs = [e["message"] for e in got.result.errors]
    assert any(
        f"kafka:ListNodes for {ARN}: the answer is not an MSK API response (ValueError: BrokerId" in m
        for m in msgs
    ), msgs
    assert not got.result.tables.get("brokers")


def test_iam_auth_column_from_bootstrap_listeners_when_authentication_was_not_recorded():
    """Older manifests have no client_authentication: GetBootstrapBrokers' listeners tell."""

    def row(msk_block):
        return Manifest(cluster={"id": "c", "msk": msk_block}, collected_at="x").cluster_row()["msk_iam_auth"]

    assert (
        row({"bootstrap": {"listeners": ["BootstrapBrokerStringSaslIam", "BootstrapBrokerStringTls"]}})
        is True
    )
    assert row({"bootstrap": {"listeners": ["BootstrapBrokerStringTls"]}}) is False
    assert row({"client_authentication": {"iam": False}, "bootstrap": {"listeners": ["X_SaslIam"]}}) is False
    assert row({}) is None and row(None) is None
