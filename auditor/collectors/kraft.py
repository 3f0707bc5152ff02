"""Collector for the KRaft metadata quorum, the finalized features and the log dirs (kafka-python), read-only.

confluent-kafka-python (the Admin API collector, auditor/collectors/admin.py) exposes neither
DescribeQuorum nor DescribeLogDirs nor the finalized features of ApiVersions. kafka-python 3.x
implements all three in its ``KafkaAdminClient`` (``describe_metadata_quorum``,
``describe_log_dirs``, ``describe_features``) with its own protocol classes; this source uses only
those public read methods (READ_METHODS; tests/test_collect_kraft.py wraps the client and fails on
any request outside READ_REQUESTS). Calls, each bounded by the request timeout:

1. ``describe_cluster`` (DescribeCluster, or Metadata on old brokers) -> the cluster id and the
   broker ids to ask for log dirs. On KRaft its ``controller_id`` is an arbitrary broker (KIP-590:
   brokers forward controller requests), so it is recorded only in the source entry, never as the
   controller.
2. ``describe_features`` (ApiVersions v3+, KIP-584) -> ``features``: finalized ``metadata.version``
   (with its release name, e.g. 3.7-IV2, from METADATA_VERSIONS), ``kraft.version`` (KIP-853) and
   the others, with the supported range of the answering broker. A feature at level 0 is not
   listed as finalized (KIP-1022): it is a row with ``finalized_level`` null when supported.
3. ``describe_metadata_quorum`` (DescribeQuorum on ``__cluster_metadata``-0, KIP-595) ->
   ``controller`` (mode kraft, controller_id = the quorum leader, controller_epoch = the leader
   epoch, voters) and ``quorum`` (one row per voter and observer: log end offset, the leader's
   high watermark and the lag behind it, last fetch and last caught-up timestamps and their age
   at collection time). A broker that does not offer DescribeQuorum (ZooKeeper mode, Kafka before
   3.3, Tansu) is not an error: the source entry says so and the quorum rules are not evaluated.
4. ``describe_log_dirs`` per broker, without topics (DescribeLogDirs, KIP-113) -> ``log_dirs``:
   path, error (KAFKA_STORAGE_ERROR ... or null), total and used bytes (DescribeLogDirs v4+,
   KIP-827). Not offered: a note, as above.
5. ``api_versions`` (the bootstrap broker's ApiVersions answer, already received: no request)
   -> ``api_versions``: every API it serves with its version range; PushTelemetry (72) is only
   there when a client metrics receiver is configured (KIP-714, CLI005).
6. ``list_config_resources(CLIENT_METRICS)`` (ListClientMetricsResources, Kafka 3.7+; named
   ListConfigResources from 4.1, KIP-1142) and ``describe_configs`` of each -> ``client_metrics``:
   the KIP-714 subscriptions (metrics, interval.ms, match). Not offered (before 3.7): a note.

Failures become source errors ``{"source": "kraft", ...}``: an unreachable cluster, a denied
call (CLUSTER_AUTHORIZATION_FAILED names the call), a broker whose log dirs cannot be read.
Client settings come from the same ``--command-config`` as the Admin API (librdkafka keys,
auditor/collectors/client_config.py), translated by :func:`kafka_python_settings`.
"""

from __future__ import annotations

import logging
import time

from auditor.collectors._common import DEFAULT_TIMEOUT, Collector, CollectResult, one_line
from auditor.kafka_upgrades import metadata_versions

SOURCE = "kraft"
# The only KafkaAdminClient methods this source calls.
READ_METHODS = frozenset(
    {
        "describe_cluster",
        "describe_features",
        "describe_metadata_quorum",
        "describe_log_dirs",
        "api_versions",
        "list_config_resources",
        "describe_configs",
        "close",
    }
)
# The only requests it may send (kafka-python request class names; SASL only to authenticate).
READ_REQUESTS = frozenset(
    {
        "ApiVersionsRequest",
        "MetadataRequest",
        "DescribeClusterRequest",
        "DescribeQuorumRequest",
        "DescribeLogDirsRequest",
        "ListConfigResourcesRequest",
        "DescribeConfigsRequest",
        "SaslHandshakeRequest",
        "SaslAuthenticateRequest",
    }
)
CLIENT_ID = "kafka-audit"

# metadata.version feature levels -> release name (Apache Kafka server-common MetadataVersion.java:
# IBP_3_0_IV1(1, "3.0", "IV1") ... IBP_4_4_IV2(33, "4.4", "IV2")), read from the upgrade table
# (auditor/data/kafka4_upgrades.json, tools/extract_kafka_upgrades.py). Level 17 (3.7-IV2) adds
# JBOD to KRaft (KIP-858); level 21 (3.9-IV0) dynamic quorums (KIP-853).
METADATA_VERSIONS: dict[int, str] = metadata_versions()
METADATA_TOPIC = "__cluster_metadata"

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())
log.propagate = False  # kafka-python's connection chatter never reaches stderr; failures are source errors
for _name in ("kafka", "kafka.net", "kafka.admin", "kafka.conn"):
    logging.getLogger(_name).addHandler(logging.NullHandler())
    logging.getLogger(_name).propagate = False


class KRaftConfigError(ValueError):
    """A client setting kafka-python cannot use (the source fails with one line, the others continue)."""


class _Abort(Exception):
    """The source failed as a whole."""


# --- client settings ------------------------------------------------------------------------------


def kafka_python_settings(config: dict, timeout: float) -> dict:
    """librdkafka settings (auditor/collectors/client_config.py) -> KafkaAdminClient keyword arguments.

    PLAINTEXT, SSL with PEM files (CA, certificate, key, key password, CRL; the CA may also be PEM
    text), SASL PLAIN / SCRAM-SHA-256 / SCRAM-SHA-512, and AWS MSK IAM (the same ``oauth_cb`` token
    signer, as kafka-python's OAUTHBEARER token provider). A PKCS12 keystore or a client certificate
    given as PEM text: KRaftConfigError (kafka-python reads PEM files only)."""
    import ssl

    ms = int(max(timeout, 0.1) * 1000)
    out: dict = {
        "bootstrap_servers": [
            s.strip() for s in str(config.get("bootstrap.servers") or "").split(",") if s.strip()
        ],
        "client_id": config.get("client.id") or CLIENT_ID,
        "request_timeout_ms": ms,
        "bootstrap_timeout_ms": ms,
        "reconnect_backoff_max_ms": 1000,
        "security_protocol": str(config.get("security.protocol") or "PLAINTEXT").upper(),
    }
    for key in ("ssl.keystore.location", "ssl.certificate.pem", "ssl.key.pem"):
        if config.get(key):
            raise KRaftConfigError(
                f"{key}: kafka-python reads client certificates from PEM files only "
                "(ssl.keystore.type=PEM or ssl.certificate.location + ssl.key.location)"
            )
    files = {
        "ssl.ca.location": "ssl_cafile",
        "ssl.certificate.location": "ssl_certfile",
        "ssl.key.location": "ssl_keyfile",
        "ssl.key.password": "ssl_password",
        "ssl.crl.location": "ssl_crlfile",
    }
    for key, name in files.items():
        if config.get(key):
            out[name] = config[key]
    if str(config.get("ssl.endpoint.identification.algorithm", "https")).lower() == "none":
        out["ssl_check_hostname"] = False
    if config.get("ssl.ca.pem"):
        try:
            ctx = ssl.create_default_context(cadata=config["ssl.ca.pem"])
            ctx.check_hostname = out.get("ssl_check_hostname", True)
            if out.get("ssl_certfile"):
                ctx.load_cert_chain(out["ssl_certfile"], out.get("ssl_keyfile"), out.get("ssl_password"))
        except (ssl.SSLError, OSError, ValueError) as e:
            raise KRaftConfigError(
                f"ssl.ca.pem: not a usable PEM CA certificate ({one_line(e, 200)})"
            ) from None
        out["ssl_context"] = ctx
    if str(config.get("enable.ssl.certificate.verification", "true")).lower() == "false":
        raise KRaftConfigError("enable.ssl.certificate.verification=false: not supported by the KRaft source")
    mechanism = config.get("sasl.mechanisms")
    if out["security_protocol"].startswith("SASL") and mechanism:
        out["sasl_mechanism"] = str(mechanism).upper()
        if "oauth_cb" in config:
            out["sasl_oauth_token_provider"] = _token_provider(config["oauth_cb"])
        else:
            out["sasl_plain_username"] = config.get("sasl.username")
            out["sasl_plain_password"] = config.get("sasl.password")
    return out


def _token_provider(oauth_cb):
    """kafka-python's OAUTHBEARER token provider over librdkafka's ``oauth_cb`` (the MSK IAM signer)."""
    from kafka.net.sasl.oauth import AbstractTokenProvider

    class Provider(AbstractTokenProvider):
        def token(self):
            token, _expiry = oauth_cb(None)
            return token

    return Provider()


def make_admin(config: dict, timeout: float):
    return _admin_class()(**kafka_python_settings(config, timeout))


_ADMIN_CLASS = None


def _admin_class():
    """KafkaAdminClient with one fix: its DescribeQuorum parsing pops the partition's
    ``error_message``, a field of DescribeQuorum v2 only, so every answer of a Kafka 3.3 to 3.8
    controller (v0/v1) raised KeyError. The same request, read with a default here."""
    global _ADMIN_CLASS
    if _ADMIN_CLASS is not None:
        return _ADMIN_CLASS
    import kafka.errors as Errors
    from kafka import KafkaAdminClient
    from kafka.protocol.admin import DescribeQuorumRequest

    class AuditAdminClient(KafkaAdminClient):
        def __init__(self, **configs):
            # kafka-python starts its IO thread ("kafka-io-CLIENT") before it bootstraps, and a
            # bootstrap that fails (unreachable, TLS, SASL) raised past it: the thread ran on,
            # once per failed collection (a `wait` loop, a fleet of unreachable clusters).
            try:
                super().__init__(**configs)
            except BaseException:
                client, net = getattr(self, "_client", None), getattr(self, "_net", None)
                for stop in (getattr(client, "close", None), getattr(net, "stop", None)):
                    try:
                        if stop is not None:
                            stop()
                    except Exception:  # noqa: BLE001 (best effort: the bootstrap error is the one reported)
                        pass
                raise

        async def _async_describe_quorum(self, topic, partition):
            _topic = DescribeQuorumRequest.TopicData
            request = DescribeQuorumRequest(
                topics=[
                    _topic(topic_name=topic, partitions=[_topic.PartitionData(partition_index=partition)])
                ]
            )
            response = await self._manager.send(request)
            top_error = Errors.for_code(response.error_code)
            if top_error is not Errors.NoError:
                raise top_error(getattr(response, "error_message", None) or "")
            result = response.to_dict()
            for key in ("throttle_time_ms", "error_code", "error_message"):
                result.pop(key, None)
            for t in result.get("topics") or []:
                for part in t.get("partitions") or []:
                    error = Errors.for_code(part.pop("error_code", 0))(part.pop("error_message", None) or "")
                    part["error"] = None if isinstance(error, Errors.NoError) else str(error)
            return result

    _ADMIN_CLASS = AuditAdminClient
    return _ADMIN_CLASS


# --- the collection -------------------------------------------------------------------------------


def collect_kraft(
    bootstrap: str | None,
    *,
    client_config: dict | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    admin=None,
    now_ms: int | None = None,
) -> CollectResult:
    """Collect the quorum, the finalized features and the log dirs. ``client_config``: librdkafka
    settings (client_config.py); ``admin``: a KafkaAdminClient to use (tests; not closed here);
    ``now_ms``: the collection time the fetch ages are computed against (default: now)."""
    result = CollectResult()
    config = dict(client_config or {})
    if bootstrap:
        config["bootstrap.servers"] = bootstrap
    target = str(config.get("bootstrap.servers") or "?")
    extra: dict = {}
    started = time.monotonic()
    own = admin is None
    try:
        if admin is None:
            if not config.get("bootstrap.servers"):
                raise _Abort("no bootstrap servers given (--bootstrap-servers HOST:PORT)")
            try:
                admin = make_admin(config, timeout)
            except KRaftConfigError as e:
                raise _Abort(str(e)) from None
            except Exception as e:  # noqa: BLE001 (bootstrap failed: unreachable, TLS, SASL)
                raise _Abort(f"cannot connect within {timeout:g} s: {_message(e)}") from None
        _Reader(admin, result, target, extra, now_ms if now_ms is not None else int(time.time() * 1000)).run()
    except _Abort as e:
        result.error(SOURCE, target, f"{target}: {e}")
    except Exception as e:  # never let one source crash the collection
        result.error(SOURCE, target, f"{target}: {type(e).__name__}: {one_line(e, 300)}")
    finally:
        if own and admin is not None:
            try:
                admin.close()
            except Exception:  # noqa: BLE001 (closing is best effort)
                pass
    extra["seconds"] = round(time.monotonic() - started, 3)
    status = "error" if result.errors else "ok"
    result.sources.append({"source": SOURCE, "target": target, "status": status, **extra})
    return result


def _message(e: BaseException) -> str:
    name = getattr(e, "message", None)  # kafka-python's error classes carry Kafka's error name
    text = one_line(str(e), 300)
    if isinstance(name, str) and name and name not in text:
        return f"{name}: {text}" if text else name
    return text or type(e).__name__


def _not_offered(e: BaseException) -> bool:
    import kafka.errors as Errors

    return isinstance(e, Errors.UnsupportedVersionError)


class _Reader:
    def __init__(self, admin, result: CollectResult, target: str, extra: dict, now_ms: int):
        self.admin = admin
        self.result = result
        self.target = target
        self.extra = extra
        self.now_ms = now_ms

    def error(self, message: str) -> None:
        self.result.error(SOURCE, self.target, message)

    def run(self) -> None:
        brokers = self.cluster()
        self.features()
        self.apis()
        self.quorum()
        self.log_dirs(brokers)
        self.client_metrics()

    def apis(self) -> None:
        try:
            got = self.admin.api_versions()
        except Exception as e:  # noqa: BLE001 (an API key newer than kafka-python's ApiKey: a note, and
            # CLI005 falls back to metric.reporters; the answer itself was read without error)
            self.extra["api_versions"] = f"not read: {_message(e)}"
            return
        rows = api_version_rows(got)
        self.result.rows("api_versions").extend(rows)
        self.extra["api_versions"] = len(rows)

    def client_metrics(self) -> None:
        from kafka.admin import ConfigResource, ConfigResourceType

        try:
            names = (
                self.admin.list_config_resources([ConfigResourceType.CLIENT_METRICS]).get("client_metrics")
                or []
            )
        except Exception as e:  # noqa: BLE001
            if _not_offered(e):
                self.extra["client_metrics"] = "ListClientMetricsResources not offered (Kafka before 3.7)"
                return
            self.error(f"list_config_resources(CLIENT_METRICS): {_message(e)}")
            return
        if not names:
            self.extra["client_metrics"] = 0
            return
        try:
            got = self.admin.describe_configs(
                [ConfigResource(ConfigResourceType.CLIENT_METRICS, name) for name in sorted(names)],
                config_filter="all",
            )
        except Exception as e:  # noqa: BLE001
            self.error(f"describe_configs(CLIENT_METRICS): {_message(e)}")
            return
        rows = client_metrics_rows(got.get("client_metrics") or {})
        self.result.rows("client_metrics").extend(rows)
        self.extra["client_metrics"] = len(rows)

    def cluster(self) -> list[int]:
        try:
            desc = self.admin.describe_cluster()
        except Exception as e:  # noqa: BLE001
            raise _Abort(f"describe_cluster: {_message(e)}") from None
        if desc.get("cluster_id"):
            self.result.meta["cluster_id"] = desc["cluster_id"]
        # On KRaft an arbitrary broker: recorded for the reader, never as the controller.
        self.extra["describe_cluster_controller_id"] = desc.get("controller_id")
        ids = sorted(b["broker_id"] for b in desc.get("brokers") or [] if isinstance(b.get("broker_id"), int))
        self.extra["brokers"] = len(ids)
        return ids

    def features(self) -> None:
        try:
            got = self.admin.describe_features()
        except Exception as e:  # noqa: BLE001
            if _not_offered(e):
                self.extra["features"] = "not offered (ApiVersions v3+, Kafka 2.4+)"
                return
            self.error(f"describe_features: {_message(e)}")
            return
        rows = feature_rows(got)
        self.result.rows("features").extend(rows)
        self.extra["features"] = len(rows)

    def quorum(self) -> None:
        try:
            got = self.admin.describe_metadata_quorum()
        except Exception as e:  # noqa: BLE001
            if _not_offered(e):
                self.extra["quorum"] = "DescribeQuorum not offered (ZooKeeper mode, or Kafka before 3.3)"
                return
            self.error(f"describe_metadata_quorum: {_message(e)}")
            return
        controller, members, problem = quorum_rows(got, self.now_ms)
        if problem:
            self.error(f"describe_metadata_quorum: {problem}")
        if controller is not None:
            self.result.rows("controller").append(controller)
            self.result.meta.setdefault("metadata_mode", "kraft")
        self.result.rows("quorum").extend(members)
        self.extra["quorum_leader"] = controller["controller_id"] if controller else None

    def log_dirs(self, brokers: list[int]) -> None:
        failed: list[str] = []
        dirs = 0
        for broker in brokers:
            try:
                got = self.admin.describe_log_dirs(topic_partitions={}, brokers=[broker])
            except Exception as e:  # noqa: BLE001
                if _not_offered(e):
                    self.extra["log_dirs"] = "DescribeLogDirs not offered by the brokers"
                    return
                failed.append(f"broker {broker} ({_message(e)})")
                continue
            for answer in got:
                rows = log_dir_rows(answer.get("broker", broker), answer.get("log_dirs") or [])
                self.result.rows("log_dirs").extend(rows)
                dirs += len(rows)
        self.extra["log_dirs"] = dirs
        if failed:
            more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
            self.error(f"describe_log_dirs failed for {', '.join(failed[:3])}{more}")


# --- responses -> rows (kafka-python's dict forms of the protocol responses) --------------------


def feature_rows(features: dict) -> list[dict]:
    """``describe_features()`` -> ``features`` rows (sorted by feature)."""
    rows = []
    for name in sorted(features):
        f = features[name] or {}
        finalized = f.get("finalized")
        supported = f.get("supported")
        level = int(finalized[1]) if finalized else None
        if level is not None and level <= 0:
            level = None
        rows.append(
            {
                "feature": name,
                "finalized_level": level,
                "version_name": METADATA_VERSIONS.get(level)
                if name == "metadata.version" and level
                else None,
                "supported_min": int(supported[0]) if supported else None,
                "supported_max": int(supported[1]) if supported else None,
                "finalized_epoch": f.get("finalized_epoch"),
            }
        )
    return rows


def _ts(value) -> int | None:
    return int(value) if isinstance(value, int) and value >= 0 else None


def quorum_rows(quorum: dict, now_ms: int) -> tuple[dict | None, list[dict], str | None]:
    """``describe_metadata_quorum()`` -> (the ``controller`` row, the ``quorum`` rows, a problem or None)."""
    part = None
    for topic in quorum.get("topics") or []:
        if topic.get("topic_name") in (METADATA_TOPIC, None):
            for p in topic.get("partitions") or []:
                if p.get("partition_index", 0) == 0:
                    part = p
    if part is None:
        return None, [], f"no {METADATA_TOPIC}-0 in the answer"
    if part.get("error"):
        return None, [], f"{METADATA_TOPIC}-0: {part['error']}"
    leader = part.get("leader_id")
    leader = leader if isinstance(leader, int) and leader >= 0 else -1
    hw = part.get("high_watermark")
    hw = hw if isinstance(hw, int) and hw >= 0 else None
    endpoints: dict[int, list[str]] = {}
    for node in quorum.get("nodes") or []:  # KIP-853 (DescribeQuorum v2)
        endpoints[node["node_id"]] = sorted(
            f"{li['name']}://{li['host']}:{li['port']}" for li in node.get("listeners") or []
        )
    voters = part.get("current_voters") or []
    members = []
    for role, replicas in (("voter", voters), ("observer", part.get("observers") or [])):
        for r in replicas:
            node = r.get("replica_id")
            leo = r.get("log_end_offset")
            leo = leo if isinstance(leo, int) and leo >= 0 else None
            fetched, caught_up = _ts(r.get("last_fetch_timestamp")), _ts(r.get("last_caught_up_timestamp"))
            members.append(
                {
                    "node_id": node,
                    "role": role,
                    "is_leader": role == "voter" and node == leader,
                    "log_end_offset": leo,
                    "lag": max(0, hw - leo) if hw is not None and leo is not None else None,
                    "high_watermark": hw,
                    "last_fetch_timestamp": fetched,
                    "last_caught_up_timestamp": caught_up,
                    "fetch_age_ms": max(0, now_ms - fetched) if fetched is not None else None,
                    "caught_up_age_ms": max(0, now_ms - caught_up) if caught_up is not None else None,
                    "directory_id": str(r["replica_directory_id"]) if r.get("replica_directory_id") else None,
                    "endpoints": endpoints.get(node),
                    "source": "describe_quorum",
                }
            )
    controller = {
        "mode": "kraft",
        "controller_id": leader,
        "controller_epoch": part.get("leader_epoch"),
        "voters": sorted(r["replica_id"] for r in voters),
        "reassignment_pending": None,
    }
    return controller, members, None


def log_dir_rows(broker: int, results: list[dict]) -> list[dict]:
    """One broker's ``describe_log_dirs()`` results -> ``log_dirs`` rows."""
    import kafka.errors as Errors

    rows = []
    for d in results:
        code = d.get("error_code") or 0
        error = (
            None if code == 0 else (getattr(Errors.for_code(code), "message", None) or f"error code {code}")
        )
        total, usable = d.get("total_bytes"), d.get("usable_bytes")
        total = total if isinstance(total, int) and total >= 0 else None
        usable = usable if isinstance(usable, int) and usable >= 0 else None
        rows.append(
            {
                "broker_id": broker,
                "path": d.get("log_dir"),
                "error": error,
                "device": None,
                "total_bytes": total,
                "used_bytes": total - usable if total is not None and usable is not None else None,
            }
        )
    return rows


def api_version_rows(versions: dict) -> list[dict]:
    """``api_versions()`` ({ApiKey or int: (min, max)}) -> ``api_versions`` rows (by key)."""
    rows = []
    for key, span in versions.items():
        code = int(getattr(key, "value", key))
        lo, hi = span if isinstance(span, tuple | list) and len(span) == 2 else (None, None)
        rows.append(
            {
                "api_key": code,
                "name": _api_name(key),
                "min_version": int(lo) if isinstance(lo, int) else None,
                "max_version": int(hi) if isinstance(hi, int) else None,
            }
        )
    return sorted(rows, key=lambda r: r["api_key"])


def _api_name(key) -> str | None:
    """ApiKey.PUSH_TELEMETRY -> 'PushTelemetry' (Kafka's ApiKeys name)."""
    name = getattr(key, "name", None)
    if not isinstance(name, str):
        return None
    return "".join(part.capitalize() for part in name.split("_")) if name.isupper() else name


def _list(value) -> list[str]:
    return [v.strip() for v in str(value or "").split(",") if v.strip()]


def client_metrics_rows(resources: dict) -> list[dict]:
    """``describe_configs`` of CLIENT_METRICS resources ({name: {key: {"value": ...}}}) ->
    ``client_metrics`` rows: the KIP-714 subscription's metrics, interval.ms and match
    (ClientMetricsConfigs; an interval that is not a number is kept as null)."""
    rows = []
    for name in sorted(resources):
        cfg = resources[name] or {}

        def value(key, cfg=cfg):
            entry = cfg.get(key)
            return entry.get("value") if isinstance(entry, dict) else entry

        interval = str(value("interval.ms") or "").strip()
        rows.append(
            {
                "name": name,
                "metrics": _list(value("metrics")),
                "interval_ms": int(interval) if interval.isascii() and interval.isdigit() else None,
                "match": _list(value("match")),
            }
        )
    return rows


# The KRaft quorum, finalized features and log dirs: the same cluster and settings as the Admin API.
COLLECTOR = Collector(
    name="kraft",
    wanted=lambda ctx: bool(ctx.bootstrap),
    target=lambda ctx: ctx.bootstrap or "",
    collect=lambda ctx: collect_kraft(
        ctx.bootstrap, client_config=ctx.client.config, timeout=ctx.sources.timeout
    ),
)
