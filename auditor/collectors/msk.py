"""Collector for the AWS MSK API (read-only, boto3: the optional extra ``kafka-auditor[msk]``).

What one provisioned cluster gives (``collect_msk(cluster_arn)``):

* ``kafka:DescribeClusterV2``: instance type (``kafka.m5.large``, Express ``express.m7g.large``),
  broker count, AZ count (distinct client subnets: MSK puts each in its own zone), Kafka version
  (``3.7.x.kraft``: the KRaft marker; 4.x is KRaft only), storage mode (LOCAL | TIERED), the
  current configuration ARN and revision, open-monitoring flags, state and active operation,
  client authentication (IAM, SCRAM, TLS, unauthenticated: the manifest's
  ``client_authentication``; the clusters column msk_iam_auth, read by MSK005);
* ``kafka:ListNodes``: broker ids and endpoints (``brokers`` rows), client subnet per broker
  (rack = the subnet's AZ id, as MSK sets broker.rack, when ``ec2:DescribeSubnets`` is allowed:
  optional, a denial only leaves racks unknown), controller endpoints on KRaft;
* ``kafka:GetBootstrapBrokers``: the listener the Admin API collector uses when nothing else
  names one (chosen by the client config's security.protocol / sasl.mechanism: see
  :func:`choose_bootstrap`);
* ``kafka:DescribeConfigurationRevision``: the active revision's server.properties, parsed
  like a server.properties file (auditor/collectors/files.py) into ``configs`` rows of every
  broker (source STATIC_BROKER_CONFIG, file ``<configuration ARN>:<revision>``, its line). A
  cluster without a custom configuration runs MSK's documented default configuration: those
  values (auditor/data/msk_defaults.json, with its source) are its rows instead (file
  ``msk-default-configuration``), standard brokers only; Express brokers get the values MSK
  fixes for them (EXPRESS_READ_ONLY, file ``msk-express-read-only-configuration``);
* ``kafka:ListClusterOperationsV2``: operations still running (a patch, an upgrade).
* ``kafka:GetCompatibleKafkaVersions``: the versions AWS offers this cluster for an in-place
  upgrade (``msk.compatible_versions``: the upgrade preflight's next MSK hop); optional, as
  ``ec2:DescribeSubnets``: a denial leaves it unknown with a note.
* open monitoring: per broker ``http://<endpoint>:11001/metrics`` (JMX exporter) and ``:11002``
  (node exporter) when enabled, scraped by the metrics collector with no inventory entry.

Topics, partitions and topic configs (``topics=``): ``admin`` (the Kafka Admin API on the chosen
bootstrap listener, run by auditor/collectors/collect.py: the richer source), ``api`` (the MSK
topic APIs ListTopics / DescribeTopic / DescribeTopicPartitions, auditor/collectors/msk_topics.py:
no network path to the brokers and no Kafka authentication needed; the brokers are then not
contacted at all, neither the Admin API nor the open-monitoring exporters), or ``auto``: ``api``
when no listener could be chosen or none of its first addresses accepts a TCP connection within
the timeout (:func:`unreachable`: a connect, nothing sent), else ``admin``.

Metrics from CloudWatch (``cloudwatch=``, auditor/collectors/msk_cloudwatch.py): GetMetricData
for the per-broker metrics the rules read, checked against the cluster's EnhancedMonitoring
level; ``None``: only when the open-monitoring exporters are not scraped (disabled, or the
``api`` mode), open monitoring being the richer source.

Everything that is not a table row goes to the manifest's ``cluster.msk`` block
(:attr:`MskCollected.manifest`): ARN, region, state, active operation, operations in progress,
storage mode, configuration, open monitoring, bootstrap listener, controller endpoints. A
cluster in MAINTENANCE (or any state but ACTIVE) or with an operation in progress is visible
there (``state``, ``operations_in_progress``) for the preflight.

Every call has a connect and read timeout and is retried with backoff on throttling (botocore's
``standard`` retry mode, MAX_ATTEMPTS). A failed call is one source error naming the API call and
the IAM action (``kafka:DescribeClusterV2 denied for arn:...``), never a traceback. Only
Describe/List/Get operations are ever called (:func:`read_only`). Secrets: nothing secret is
returned by these calls; SASL/SCRAM secret ARNs (ListScramSecrets) are never read.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from auditor.collectors._common import DEFAULT_TIMEOUT, CollectResult, config_row, one_line
from auditor.collectors.aws_errors import MAX_ATTEMPTS, SOURCE, describe_failure, failure

JMX_EXPORTER_PORT = 11001
NODE_EXPORTER_PORT = 11002
READ_PREFIXES = ("Describe", "List", "Get")
CLOUDWATCH_READS = frozenset({"GetMetricData", "ListMetrics"})
MAX_OPERATION_PAGES = 3  # in-progress operations are the newest: no need for years of history
DEFAULTS_FILE = "msk-default-configuration"
_ARN = re.compile(r"^arn:aws[\w-]*:kafka:([a-z0-9-]+):\d{12}:cluster/([^/]+)/[\w-]+$")
_FINISHED = ("COMPLETE", "FAILED", "CANCELLED", "CANCELED")
# GetBootstrapBrokers keys per (security.protocol, SASL mechanism) of the client config.
_LISTENERS = {
    ("PLAINTEXT", None): "BootstrapBrokerString",
    ("SSL", None): "BootstrapBrokerStringTls",
    ("SASL_SSL", "SCRAM-SHA-512"): "BootstrapBrokerStringSaslScram",
    ("SASL_SSL", "AWS_MSK_IAM"): "BootstrapBrokerStringSaslIam",
    ("SASL_SSL", "OAUTHBEARER"): "BootstrapBrokerStringSaslIam",
}


TOPIC_MODES = ("auto", "api", "admin")
TOPIC_APIS_SINCE = (3, 6)  # AWS: the topic APIs need "Apache Kafka version 3.6.0 or later"
PROBE_ADDRESSES = 3  # bootstrap addresses tried by the reachability probe
MAX_PROBE_SECONDS = 5.0


class MskUnavailable(RuntimeError):
    """boto3 is not installed (the ``msk`` extra)."""


@dataclass
class MskCollected:
    result: CollectResult = field(default_factory=CollectResult)
    name: str | None = None  # the MSK cluster name
    cluster_fields: dict = field(default_factory=dict)  # platform, msk_instance_type, az_count, metadata_mode
    manifest: dict = field(default_factory=dict)  # the manifest's cluster.msk block
    bootstrap: str | None = None  # the listener the Admin API collector should use
    bootstrap_protocol: str | None = None  # its security.protocol
    metrics: list[str] = field(default_factory=list)  # broker_id=N:URL of the open-monitoring exporters
    topics_via_api: bool = False  # topics, partitions and topic configs came from the MSK topic APIs

    @property
    def broker_ids(self) -> list[int]:
        return sorted(r["broker_id"] for r in self.result.tables.get("brokers", []))


def region_of(cluster_arn: str) -> str | None:
    m = _ARN.match(cluster_arn.strip())
    return m.group(1) if m else None


def is_cluster_arn(value: str) -> bool:
    return bool(_ARN.match(value.strip()))


def security_of(command_config) -> tuple[str | None, str | None]:
    """(security.protocol, SASL mechanism) a client.properties asks for, read without building
    its client (an IAM one needs the bootstrap host's region, which MSK gives only later)."""
    if not command_config:
        return None, None
    from auditor.collectors.files import parse_properties, read_text

    try:
        props = {e.key: e.value for e in parse_properties(read_text(Path(command_config)))[0]}
    except (OSError, ValueError):
        return None, None  # (loading it later reports the problem)
    protocol = props.get("security.protocol", "PLAINTEXT").strip().upper()
    mechanism = (props.get("sasl.mechanism") or "").strip().upper() or None
    if mechanism == "OAUTHBEARER" and "IAMLoginModule" in props.get("sasl.jaas.config", ""):
        mechanism = "AWS_MSK_IAM"
    return protocol, mechanism if protocol.startswith("SASL") else None


def read_only(client) -> None:
    """Refuse, before anything is sent, any operation that does not only read (CloudWatch:
    only GetMetricData and ListMetrics)."""
    only = CLOUDWATCH_READS if client.meta.service_model.service_name == "cloudwatch" else None

    def guard(model, **_):
        if not model.name.startswith(READ_PREFIXES) or (only is not None and model.name not in only):
            raise PermissionError(f"msk: {model.name} is not a read-only call: refused")

    client.meta.events.register("provide-client-params.*.*", guard)


def make_client(service: str, region: str | None, timeout: float = DEFAULT_TIMEOUT):
    """A boto3 client with the standard credential chain, timeouts and retries on throttling."""
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise MskUnavailable("the AWS MSK source needs boto3: pip install 'kafka-auditor[msk]'") from None
    config = Config(
        connect_timeout=timeout,
        read_timeout=timeout,
        retries={"mode": "standard", "total_max_attempts": MAX_ATTEMPTS},
    )
    client = boto3.session.Session().client(service, region_name=region, config=config)
    read_only(client)
    return client


class _CallFailed(Exception):
    pass


# What each answer must hold (botocore parses an HTML page or a JSON answer of another service
# into an empty dict): without it, the endpoint is not the MSK API (a proxy's login page, a
# wrong AWS_ENDPOINT_URL), and the source has failed.
_REQUIRED = {
    "DescribeClusterV2": "ClusterInfo",
    "ListNodes": "NodeInfoList",
    "DescribeConfigurationRevision": "ServerProperties",
    "ListClustersV2": "ClusterInfoList",
}
# What reading an answer of the right shape but wrong content raises (a field missing, a list
# where an object belongs, a number that is not one): a source error too, never a traceback.
GARBAGE = (KeyError, TypeError, ValueError, AttributeError, OverflowError, IndexError)


def _call(
    result: CollectResult, target: str, client, operation: str, resource: str | None = None, **params
) -> dict:
    """One API call on ``resource`` (default ``target``, the cluster); a failure, or an answer
    that is not the MSK API's, becomes one source error and raises _CallFailed."""
    service = client.meta.service_model.endpoint_prefix
    try:
        answer = getattr(client, _snake(operation))(**params)
    except GARBAGE as e:  # botocore could not read the answer as the service model's
        why = f"{type(e).__name__}: {one_line(e, 120)}"
        result.error(SOURCE, target, garbage_message(f"{service}:{operation}", target, why))
        raise _CallFailed from None
    except Exception as e:  # noqa: BLE001 (every failure is a source error, never a traceback)
        arn = target if is_cluster_arn(target) else None
        result.errors.append(failure(e, f"{service}:{operation}", resource or target, cluster_arn=arn))
        result.errors[-1]["target"] = target
        raise _CallFailed from None
    headers = (answer.get("ResponseMetadata") or {}).get("HTTPHeaders") or {}
    ctype = str(headers.get("content-type") or "application/json").lower()
    required = _REQUIRED.get(operation)
    if "json" not in ctype or (required and not isinstance(answer.get(required), dict | list | str | bytes)):
        why = f"Content-Type {ctype[:60]}" if "json" not in ctype else f"no {required}"
        result.error(SOURCE, target, garbage_message(f"{service}:{operation}", target, why))
        raise _CallFailed
    return answer


def garbage_message(action: str, target: str, why: str) -> str:
    return (
        f"{action} for {target}: the answer is not an MSK API response ({why}): a proxy or a wrong "
        "endpoint answered"
    )


def _snake(operation: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", operation).lower()


# --- one cluster ------------------------------------------------------------------------------


def collect_msk(
    cluster_arn: str,
    *,
    region: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    security: tuple[str | None, str | None] = (None, None),
    kafka=None,
    ec2=None,
    topics: str = "admin",
    cloudwatch: bool | None = False,
    topic_workers: int | None = None,
    topic_rate: float | None = None,
    out_of_sync_only: bool = False,
    watch=None,
) -> MskCollected:
    """Read one MSK cluster (see the module docstring). ``security``: the client config's
    (security.protocol, SASL mechanism), to choose the bootstrap listener. ``kafka`` / ``ec2``:
    clients to use (tests); else made here. ``topics``: admin | api | auto; ``cloudwatch``:
    True, False, or None (when the exporters are not scraped); ``topic_workers`` /
    ``topic_rate``: concurrency and calls per second of the topic APIs; ``out_of_sync_only``:
    partitions only of the topics with replicas out of sync (msk_topics.collect_topics); ``watch``:
    a msk_topics.Watch of the topic calls. Never raises: failures are source errors."""
    if topics not in TOPIC_MODES:
        raise ValueError(f"topics: one of {', '.join(TOPIC_MODES)}, not {topics!r}")
    out = MskCollected(name=_ARN.match(cluster_arn.strip()).group(2) if is_cluster_arn(cluster_arn) else None)
    r = out.result
    region = region or region_of(cluster_arn)
    out.manifest = {"cluster_arn": cluster_arn, "region": region}
    try:
        kafka = kafka or make_client("kafka", region, timeout)
    except MskUnavailable as e:
        r.error(SOURCE, cluster_arn, str(e))
        r.sources.append({"source": SOURCE, "target": cluster_arn, "status": "error"})
        return out
    try:
        info = _call(r, cluster_arn, kafka, "DescribeClusterV2", ClusterArn=cluster_arn)["ClusterInfo"]
        if not isinstance(info, dict):
            raise TypeError("ClusterInfo is not an object")
        _describe(out, info)
    except _CallFailed:
        r.sources.append({"source": SOURCE, "target": cluster_arn, "status": "error"})
        return out
    except GARBAGE as e:
        r.error(
            SOURCE, cluster_arn, garbage_message("kafka:DescribeClusterV2", cluster_arn, one_line(e, 120))
        )
        r.sources.append({"source": SOURCE, "target": cluster_arn, "status": "error"})
        return out
    if info.get("ClusterType") == "SERVERLESS":
        r.sources.append(
            {
                "source": SOURCE,
                "target": cluster_arn,
                "status": "warning",
                "reason": f"{cluster_arn}: MSK Serverless: no brokers, configuration or metrics to read",
            }
        )
        return out
    steps = (
        lambda: _nodes(out, kafka, ec2, cluster_arn, region, timeout),
        lambda: _bootstrap(out, kafka, cluster_arn, security),
        lambda: _configuration(out, kafka, info, cluster_arn),
        lambda: _operations(out, kafka, cluster_arn),
        lambda: _compatible_versions(out, kafka, cluster_arn),
    )
    names = ("kafka:ListNodes", "kafka:GetBootstrapBrokers", "kafka:DescribeConfigurationRevision")
    actions = (*names, "kafka:ListClusterOperationsV2", "kafka:GetCompatibleKafkaVersions")
    for step, action in zip(steps, actions, strict=True):
        try:  # each failure is recorded; the others still run
            step()
        except _CallFailed:
            pass
        except GARBAGE as e:
            r.error(
                SOURCE,
                cluster_arn,
                garbage_message(action, cluster_arn, f"{type(e).__name__}: {one_line(e, 120)}"),
            )
    if topics == "api" or (topics == "auto" and _brokers_unreachable(out, timeout)):
        out.topics_via_api = True
        out.manifest["topics_source"] = "msk-api"
        _topic_apis(out, kafka, cluster_arn, topic_workers, topic_rate, out_of_sync_only, watch)
    else:
        _open_monitoring(out, info)
    if cloudwatch or (cloudwatch is None and not out.metrics):
        _cloudwatch(out, info, cluster_arn, region, timeout)
    status = "error" if r.errors else "ok"
    entry = {"source": SOURCE, "target": cluster_arn, "status": status}
    if "cloudwatch" in out.manifest:  # the metrics CloudWatch gave, by name (auditor/coverage.py)
        entry["metrics"] = sorted({row["name"] for row in r.tables.get("metrics", [])})
    r.sources.append(entry)
    return out


def kraft_mode(version: str | None, instance_type: str | None, zookeeper: str | None) -> str | None:
    """zookeeper | kraft from what MSK says: the ``.kraft`` marker (``3.7.x.kraft``), 4.x (KRaft
    only), a ZooKeeper connect string; an Express cluster without a marker: not known."""
    v = (version or "").lower()
    if v.endswith(".kraft") or re.match(r"^[4-9]\.", v):
        return "kraft"
    if zookeeper or (v and not (instance_type or "").startswith("express.")):
        return "zookeeper"
    return None


def _describe(out: MskCollected, info: dict) -> None:
    prov = info.get("Provisioned") or {}
    group = prov.get("BrokerNodeGroupInfo") or {}
    software = prov.get("CurrentBrokerSoftwareInfo") or {}
    version = software.get("KafkaVersion") or info.get("CurrentVersion")
    instance_type = group.get("InstanceType")
    subnets = group.get("ClientSubnets") or []
    out.name = info.get("ClusterName") or out.name
    fields = {
        "platform": "msk",
        "msk_instance_type": instance_type,
        "az_count": len(set(subnets)) or None,
        "metadata_mode": kraft_mode(
            software.get("KafkaVersion"), instance_type, prov.get("ZookeeperConnectString")
        ),
    }
    out.cluster_fields = {k: v for k, v in fields.items() if v is not None}
    if version:  # a cluster-level version: used when no broker reports its own (versions.py)
        out.result.meta.update(kafka_version=version, kafka_version_source="msk-api")
    monitoring = (prov.get("OpenMonitoring") or {}).get("Prometheus") or {}
    public = ((group.get("ConnectivityInfo") or {}).get("PublicAccess") or {}).get("Type")
    auth = prov.get("ClientAuthentication") or {}
    sasl = auth.get("Sasl") or {}
    out.manifest.update(
        {
            "cluster_name": out.name,
            "cluster_type": info.get("ClusterType"),
            "state": info.get("State"),
            "state_code": (info.get("StateInfo") or {}).get("Code"),
            "active_operation_arn": info.get("ActiveOperationArn"),
            "kafka_version": version,
            # the cluster's version string UpdateClusterKafkaVersion needs (--current-version)
            "current_version": info.get("CurrentVersion"),
            "instance_type": instance_type,
            "broker_count": prov.get("NumberOfBrokerNodes"),
            "client_subnets": subnets,
            "storage_mode": prov.get("StorageMode"),
            "configuration": {
                "arn": software.get("ConfigurationArn"),
                "revision": software.get("ConfigurationRevision"),
            }
            if software.get("ConfigurationArn")
            else None,
            "open_monitoring": {
                "jmx_exporter": bool((monitoring.get("JmxExporter") or {}).get("EnabledInBroker")),
                "node_exporter": bool((monitoring.get("NodeExporter") or {}).get("EnabledInBroker")),
            },
            "client_authentication": {
                "iam": _enabled(sasl.get("Iam")),
                "scram": _enabled(sasl.get("Scram")),
                "tls": _enabled(auth.get("Tls")),
                "unauthenticated": _enabled(auth.get("Unauthenticated")),
            }
            if auth
            else None,
            "zookeeper_connect": prov.get("ZookeeperConnectString"),
            # AWS's KRaft migration refuses public access together with open monitoring (UPG005)
            "public_access": (public == "SERVICE_PROVIDED_EIPS") if isinstance(public, str) else None,
            "enhanced_monitoring": prov.get("EnhancedMonitoring"),
            "customer_action_status": prov.get("CustomerActionStatus"),
        }
    )


def _enabled(block) -> bool | None:
    """A ClientAuthentication member's ``Enabled`` flag; None when absent."""
    flag = block.get("Enabled") if isinstance(block, dict) else None
    return flag if isinstance(flag, bool) else None


def _pages(r: CollectResult, target: str, client, operation: str, key: str, max_pages: int = 1000, **params):
    token = None
    for _ in range(max_pages):
        page = _call(r, target, client, operation, **params, **({"NextToken": token} if token else {}))
        yield from page.get(key) or []
        token = page.get("NextToken")
        if not token:
            return


def _nodes(out: MskCollected, kafka, ec2, arn: str, region: str | None, timeout: float) -> None:
    r = out.result
    nodes = list(_pages(r, arn, kafka, "ListNodes", "NodeInfoList", ClusterArn=arn))
    brokers = [n["BrokerNodeInfo"] for n in nodes if n.get("BrokerNodeInfo")]
    for b in brokers:  # a double in the service model: a broker id is a whole number Kafka can hold
        bid = b.get("BrokerId")
        if not isinstance(bid, int | float) or bid != int(bid) or not 0 <= bid <= 2**31 - 1:
            raise ValueError(f"BrokerId {str(bid)[:30]} is not a broker id")
    zones = _subnet_zones(out, ec2, {b.get("ClientSubnet") for b in brokers} - {None}, region, timeout)
    for b in sorted(brokers, key=lambda b: b.get("BrokerId", 0)):
        endpoints = b.get("Endpoints") or []
        r.rows("brokers").append(
            {
                "broker_id": int(b["BrokerId"]),
                "host": endpoints[0] if endpoints else None,
                "port": None,
                "rack": zones.get(b.get("ClientSubnet")),
                "cores": None,
                "log_dirs": None,
                "version": None,
            }
        )
    controllers = [e for n in nodes for e in ((n.get("ControllerNodeInfo") or {}).get("Endpoints") or [])]
    out.manifest["broker_subnets"] = {str(int(b["BrokerId"])): b.get("ClientSubnet") for b in brokers}
    if controllers:
        out.manifest["controller_endpoints"] = controllers


def _subnet_zones(
    out: MskCollected, ec2, subnets: set[str], region: str | None, timeout: float
) -> dict[str, str]:
    """subnet -> AZ id (what MSK sets broker.rack to). Optional: ec2:DescribeSubnets denied or
    unreachable leaves the racks unknown, with a note; never a source error."""
    if not subnets:
        return {}
    try:
        ec2 = ec2 or make_client("ec2", region, timeout)
        found = ec2.describe_subnets(SubnetIds=sorted(subnets)).get("Subnets") or []
    except Exception as e:  # noqa: BLE001 (optional: racks stay unknown)
        why = describe_failure(e, "ec2:DescribeSubnets", ", ".join(sorted(subnets)))
        out.manifest["racks"] = f"unknown: {why}"
        # not a source error, but a denied call all the same: said where the user looks
        out.result.sources.append(
            {
                "source": SOURCE,
                "target": "ec2:DescribeSubnets",
                "status": "skipped",
                "reason": f"{why}: racks unknown",
            }
        )
        return {}
    return {s["SubnetId"]: s.get("AvailabilityZoneId") or s.get("AvailabilityZone") for s in found}


def choose_bootstrap(
    brokers: dict, protocol: str | None, mechanism: str | None
) -> tuple[str | None, str | None]:
    """(listener key, servers) the Admin API collector should use. With a client config: the
    listener of its security.protocol / SASL mechanism. Without one: plaintext, else TLS
    (unauthenticated TLS needs no client config); IAM and SCRAM listeners need one."""
    if protocol:
        key = _LISTENERS.get((protocol.upper(), mechanism.upper() if mechanism else None))
        return (key, brokers.get(key)) if key and brokers.get(key) else (None, None)
    for key in ("BootstrapBrokerString", "BootstrapBrokerStringTls"):
        if brokers.get(key):
            return key, brokers[key]
    return None, None


def _bootstrap(out: MskCollected, kafka, arn: str, security: tuple[str | None, str | None]) -> None:
    brokers = _call(out.result, arn, kafka, "GetBootstrapBrokers", ClusterArn=arn)
    listeners = sorted(k for k, v in brokers.items() if k.startswith("BootstrapBroker") and v)
    key, servers = choose_bootstrap(brokers, *security)
    out.bootstrap = servers
    out.bootstrap_protocol = next((p for (p, _), k in _LISTENERS.items() if k == key), None) if key else None
    out.manifest["bootstrap"] = {"listeners": listeners, "chosen": key, "servers": servers}
    hosts = _hosts(servers)
    for row in out.result.tables.get("brokers", []):
        row["port"] = hosts.get(row["host"])


def _hosts(servers: str | None) -> dict[str, int]:
    out = {}
    for hp in (servers or "").split(","):
        host, _, port = hp.strip().rpartition(":")
        if host and port.isascii() and port.isdigit():
            out[host] = int(port)
    return out


# Express brokers: settings MSK fixes and no configuration can change (AWS, "Express brokers
# read-only configurations": default.replication.factor 3, min.insync.replicas 2). Rows of every
# Express cluster, custom configuration or not, so that rules judge the values the brokers run.
EXPRESS_READ_ONLY = {"default.replication.factor": "3", "min.insync.replicas": "2"}
EXPRESS_READ_ONLY_FILE = "msk-express-read-only-configuration"
EXPRESS_READ_ONLY_SOURCE = (
    "https://docs.aws.amazon.com/msk/latest/developerguide/msk-configuration-express-read-only.html"
)


def is_express(instance_type: str | None) -> bool:
    return (instance_type or "").strip().lower().startswith("express.")


def _express_read_only(out: MskCollected, ids: list[int]) -> None:
    for bid in ids:
        for key, value in EXPRESS_READ_ONLY.items():
            out.result.rows("configs").append(
                config_row(
                    "broker", str(bid), key, value, "STATIC_BROKER_CONFIG", file=EXPRESS_READ_ONLY_FILE
                )
            )
    out.manifest["express_read_only"] = {"values": EXPRESS_READ_ONLY, "source": EXPRESS_READ_ONLY_SOURCE}


def _configuration(out: MskCollected, kafka, info: dict, arn: str) -> None:
    software = ((info.get("Provisioned") or {}).get("CurrentBrokerSoftwareInfo")) or {}
    config_arn, revision = software.get("ConfigurationArn"), software.get("ConfigurationRevision")
    ids = out.broker_ids
    express = is_express(out.cluster_fields.get("msk_instance_type"))
    if express:  # first: a revision cannot set these keys (a key it repeats would be the same)
        _express_read_only(out, ids)
    if not config_arn:
        if not express:
            _default_configuration(out, ids)
        return
    found = _call(
        out.result, arn, kafka, "DescribeConfigurationRevision", config_arn, Arn=config_arn, Revision=revision
    )
    from auditor.collectors.files import parse_properties

    raw = found.get("ServerProperties") or b""
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else str(raw)
    entries, problems = parse_properties(text)
    where = f"{config_arn}:{revision}"
    if problems:
        out.result.error(SOURCE, where, f"{where}: line {problems[0].line}: {problems[0].message}")
    if express:
        entries = [e for e in entries if e.key not in EXPRESS_READ_ONLY]
    for bid in ids:
        for e in entries:
            out.result.rows("configs").append(
                config_row(
                    "broker", str(bid), e.key, e.value, "STATIC_BROKER_CONFIG", file=where, line=e.line
                )
            )
    if not express:  # a key the configuration leaves unset has MSK's default, not Kafka's
        _default_configuration(out, ids, skip={e.key for e in entries}, custom=True)


def msk_defaults() -> dict:
    return json.loads(
        resources.files("auditor").joinpath("data/msk_defaults.json").read_text(encoding="utf-8")
    )


# A provisioned cluster has two or three client subnets, each in its own Availability Zone, and
# its broker count is a multiple of the AZ count (AWS MSK developer guide: msk-create-cluster.md,
# "you can specify either two or three subnets"; msk-update-broker-count.md, "It must also be a
# multiple of the number of Availability Zones").
AZ_COUNTS = (2, 3)


def possible_az_counts(azs: int | None, brokers: int | None) -> tuple[int, ...]:
    """The AZ counts an MSK cluster can have: its own when known, else those its broker count
    is a multiple of (4 brokers: 2 AZs; 9: 3), else both."""
    if azs:
        return (azs,)
    fits = tuple(a for a in AZ_COUNTS if brokers and brokers % a == 0)
    return fits or AZ_COUNTS


def msk_default_values(
    azs: tuple[int, ...], *, tiered: bool = False, kraft: bool = False
) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """MSK's default configuration (standard brokers) for a cluster that may have any of the
    AZ counts ``azs``: (values, undetermined), a key whose default differs between those AZ
    counts (default.replication.factor, min.insync.replicas) in ``undetermined`` with its
    possible values, never guessed. Every key MSK's table does not list takes Apache Kafka's
    default for the cluster's version."""
    values: dict[str, str] = {}
    undetermined: dict[str, tuple[str, ...]] = {}
    for key, spec in msk_defaults()["properties"].items():
        if kraft and spec.get("zookeeper_only"):
            continue
        if isinstance(spec.get("by_az_count"), dict):
            choices = tuple(dict.fromkeys(str(spec["by_az_count"].get(str(a))) for a in azs))
            if len(choices) == 1 and choices[0] != "None":
                values[key] = choices[0]
            else:
                undetermined[key] = choices
            continue
        value = spec.get("tiered", spec.get("value")) if tiered else spec.get("value")
        if value is not None:
            values[key] = str(value)
    return values, undetermined


def _default_configuration(
    out: MskCollected, ids: list[int], skip: set[str] = frozenset(), custom: bool = False
) -> None:
    """MSK's documented default configuration: a cluster created without a custom one runs it,
    and a custom configuration inherits it for every key it does not set (AWS MSK developer
    guide, msk-configuration-properties.md: "Properties that you don't set explicitly get the
    values they have in The Default Amazon MSK Configuration")."""
    table = msk_defaults()
    tiered = (out.manifest.get("storage_mode") or "").upper() == "TIERED"
    azs = out.cluster_fields.get("az_count")
    kraft = out.cluster_fields.get("metadata_mode") == "kraft"
    values, _unknown = msk_default_values(
        possible_az_counts(azs, len(ids) or None), tiered=tiered, kraft=kraft
    )
    for bid in ids:
        for key, value in values.items():
            if key in skip:
                continue
            out.result.rows("configs").append(
                config_row("broker", str(bid), key, value, "STATIC_BROKER_CONFIG", file=DEFAULTS_FILE)
            )
    if not custom:
        out.manifest["configuration"] = {"default": True, "source": table["source"]}


def _operations(out: MskCollected, kafka, arn: str) -> None:
    running = []
    for op in _pages(
        out.result,
        arn,
        kafka,
        "ListClusterOperationsV2",
        "ClusterOperationInfoList",
        max_pages=MAX_OPERATION_PAGES,
        ClusterArn=arn,
    ):
        state = (op.get("OperationState") or "").upper()
        if op.get("EndTime") is None and not any(word in state for word in _FINISHED):
            running.append(
                {
                    "arn": op.get("OperationArn"),
                    "type": op.get("OperationType"),
                    "state": op.get("OperationState"),
                    "start_time": op["StartTime"].isoformat() if op.get("StartTime") else None,
                }
            )
    out.manifest["operations_in_progress"] = running


def _compatible_versions(out: MskCollected, kafka, arn: str) -> None:
    """The versions AWS offers this cluster for an in-place upgrade (GetCompatibleKafkaVersions):
    the upgrade preflight's next MSK hop. Optional: a denial or failure leaves the list unknown
    with a note (the shipped table, auditor/data/msk_versions.json, stands in); never a source
    error."""
    try:
        answer = kafka.get_compatible_kafka_versions(ClusterArn=arn)
    except Exception as e:  # noqa: BLE001 (optional: a note, as ec2:DescribeSubnets)
        out.manifest["compatible_versions"] = None
        out.manifest["compatible_versions_note"] = (
            "unknown: " + describe_failure(e, "kafka:GetCompatibleKafkaVersions", arn)[:300]
        )
        return
    targets = []
    for entry in answer.get("CompatibleKafkaVersions") or []:
        if isinstance(entry, dict):
            targets += [t for t in entry.get("TargetVersions") or [] if isinstance(t, str)]
    out.manifest["compatible_versions"] = sorted(set(targets))


def _open_monitoring(out: MskCollected, info: dict) -> None:
    flags = out.manifest.get("open_monitoring") or {}
    ports = [
        p
        for p, on in (
            (JMX_EXPORTER_PORT, flags.get("jmx_exporter")),
            (NODE_EXPORTER_PORT, flags.get("node_exporter")),
        )
        if on
    ]
    for row in out.result.tables.get("brokers", []):
        if row["host"]:
            out.metrics += [f"broker_id={row['broker_id']}:http://{row['host']}:{p}/metrics" for p in ports]


def unreachable(servers: str | None, timeout: float) -> str | None:
    """None when one of the first bootstrap addresses accepts a TCP connection (closed at once,
    nothing sent); else why not, in one line."""
    import socket

    if not servers:
        return "no bootstrap listener could be chosen (an IAM or SCRAM listener needs --command-config)"
    reasons = []
    for hp in [s.strip() for s in servers.split(",") if s.strip()][:PROBE_ADDRESSES]:
        host, _, port = hp.rpartition(":")
        try:
            with socket.create_connection(
                (host.strip("[]"), int(port)), timeout=min(timeout, MAX_PROBE_SECONDS)
            ):
                return None
        except (OSError, ValueError) as e:
            reasons.append(f"{hp}: {one_line(e, 120)}")
    return "brokers not reachable from here (" + "; ".join(reasons) + ")"


def _brokers_unreachable(out: MskCollected, timeout: float) -> bool:
    why = unreachable(out.bootstrap, timeout)
    if why is None:
        return False
    out.result.sources.append(
        {
            "source": "admin",
            "target": out.bootstrap or out.manifest.get("cluster_arn"),
            "status": "skipped",
            "reason": f"{why}: topics, partitions and topic configs from the MSK topic APIs instead",
        }
    )
    return True


def _topic_apis(
    out: MskCollected,
    kafka,
    arn: str,
    workers: int | None,
    rate: float | None,
    out_of_sync_only: bool,
    watch=None,
) -> None:
    from auditor.collectors.msk_topics import DEFAULT_RATE, DEFAULT_WORKERS, collect_topics

    out.bootstrap = out.bootstrap_protocol = None  # the brokers are not contacted
    version = str(out.manifest.get("kafka_version") or "")
    m = re.match(r"^(\d+)\.(\d+)", version)
    if m and (int(m.group(1)), int(m.group(2))) < TOPIC_APIS_SINCE:
        out.result.error(
            SOURCE,
            arn,
            f"{arn}: the MSK topic APIs need Kafka 3.6.0 or later and the cluster runs {version}: no topics "
            "read (give --command-config or --bootstrap-servers to read them through the Kafka Admin API)",
        )
        return
    got = collect_topics(
        out.result,
        kafka,
        arn,
        workers=workers or DEFAULT_WORKERS,
        rate=DEFAULT_RATE if rate is None else rate,
        out_of_sync_only=out_of_sync_only,
        watch=watch,
    )
    out.manifest["topics_api"] = {
        "calls": got.calls,
        "topics": len(got.out_of_sync),
        "out_of_sync_replicas": sum(got.out_of_sync.values()),
        "vanished": len(got.vanished),
    }


def _cloudwatch(out: MskCollected, info: dict, arn: str, region: str | None, timeout: float) -> None:
    from auditor.collectors.msk_cloudwatch import collect_cloudwatch

    try:
        client = make_client("cloudwatch", region, timeout)
    except MskUnavailable as e:
        out.result.error(SOURCE, arn, str(e))
        return
    out.manifest["cloudwatch"] = collect_cloudwatch(
        out.result,
        client,
        cluster_name=out.name or "",
        broker_ids=out.broker_ids,
        level=(info.get("Provisioned") or {}).get("EnhancedMonitoring"),
        target=arn,
    )


# --- discovery --------------------------------------------------------------------------------


@dataclass
class Discovered:
    name: str
    arn: str
    region: str
    tags: dict[str, str]


def discover(
    regions,
    *,
    tags: dict[str, str] | None = None,
    name_prefix: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    clients: dict | None = None,
) -> tuple[list[Discovered], list[dict]]:
    """Every provisioned cluster of the given regions (``kafka:ListClustersV2``) whose tags hold
    ``tags`` and whose name starts with ``name_prefix``: (clusters, source errors)."""
    found: list[Discovered] = []
    errors: list[dict] = []
    for region in regions:
        r = CollectResult()
        try:
            client = (clients or {}).get(region) or make_client("kafka", region, timeout)
            params = {"ClusterTypeFilter": "PROVISIONED"} | (
                {"ClusterNameFilter": name_prefix} if name_prefix else {}
            )
            for info in _pages(r, f"region {region}", client, "ListClustersV2", "ClusterInfoList", **params):
                cluster_tags = info.get("Tags") or {}
                if all(cluster_tags.get(k) == v for k, v in (tags or {}).items()):
                    found.append(
                        Discovered(info["ClusterName"], info["ClusterArn"], region, dict(cluster_tags))
                    )
        except MskUnavailable as e:
            r.error(SOURCE, f"region {region}", str(e))
        except _CallFailed:
            pass
        except GARBAGE as e:
            what = f"region {region}"
            r.error(
                SOURCE,
                what,
                garbage_message("kafka:ListClustersV2", what, f"{type(e).__name__}: {one_line(e, 120)}"),
            )
        errors += r.errors
    return found, errors
