"""Issue 16: a metrics fetch is bounded as a whole (time and bytes), and credentials in a
metrics URL (userinfo, query values) are sent as an Authorization header / to the server only,
never shown or stored."""

from __future__ import annotations

import base64
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from auditor.collectors import metrics
from auditor.collectors.collect import collect
from auditor.collectors.metrics import collect_metrics
from auditor.collectors.urls import redact_url, scrub, split_credentials
from auditor.snapshot.io import write_snapshot
from auditor.sources import Sources

ROOT = Path(__file__).resolve().parents[1]
GOOD = "kafka_network_requestchannel_requestqueuesize 3\n"
TRICKLE_SECONDS = 0.5
TRICKLE_MAX_S = 8.0  # the server gives up on its own after this long, whatever the client does
AUTH = "Basic " + base64.b64encode(b"user:s3cret").decode()


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    seen: list[dict] = []

    def log_message(self, *args):
        pass

    def _trickle(self, data: bytes) -> None:
        end = time.monotonic() + TRICKLE_MAX_S
        for i in range(len(data)):
            if time.monotonic() > end:
                return
            try:
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
            except OSError:
                return
            time.sleep(TRICKLE_SECONDS)

    def do_GET(self):  # noqa: N802
        type(self).seen.append({"path": self.path, "authorization": self.headers.get("Authorization")})
        path = self.path.split("?", 1)[0]
        if path == "/trickle":  # headers at once, then one byte every 0.5 s
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.flush()
            self._trickle(b"# " + b"x" * 100 + b"\n")
        elif path == "/trickle-headers":  # the status line and headers themselves trickle
            self._trickle(
                b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nX-Slow: " + b"y" * 100 + b"\r\n\r\n"
            )
        elif path in ("/big", "/big-stream"):
            body = (GOOD * 200).encode()
            self.send_response(200)
            if path == "/big":
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except OSError:
                pass
        elif path == "/auth":
            if self.headers.get("Authorization") != AUTH:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="metrics"')
                self.end_headers()
                return
            body = GOOD.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_error(500)


@pytest.fixture()
def server():
    _Handler.seen = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=5)


def _closed_port() -> int:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
    finally:
        s.close()


def _everything(r) -> str:
    return json.dumps(
        {"sources": r.sources, "errors": r.errors, "tables": r.tables, "warnings": r.warnings}, default=str
    )


# --- time ------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/trickle", "/trickle-headers"])
def test_a_trickling_server_is_bounded_by_the_whole_timeout(server, path):
    t0 = time.monotonic()
    r = collect_metrics([f"broker_id=1:{server}{path}"], timeout=1.5)
    elapsed = time.monotonic() - t0
    assert elapsed < 2.5, elapsed
    assert elapsed >= 1.4  # it did wait for the data, up to the deadline
    (e,) = r.errors
    assert e["source"] == "metrics" and e["target"] == f"{server}{path}"
    assert "timed out after 1.5 s" in e["message"]
    assert r.sources == [{"source": "metrics", "target": f"{server}{path}", "status": "error"}]
    assert r.tables == {}


def test_fetch_itself_raises_timeout_error(server):
    t0 = time.monotonic()
    with pytest.raises(TimeoutError):
        metrics.fetch(f"{server}/trickle", 1.0)
    assert time.monotonic() - t0 < 2.0


# --- bytes -----------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/big", "/big-stream"])
def test_a_scrape_beyond_the_byte_limit_is_a_source_error(server, path, monkeypatch):
    monkeypatch.setattr(metrics, "MAX_BYTES", 1000)
    r = collect_metrics([f"broker_id=1:{server}{path}?token=abc123"], timeout=5)
    (e,) = r.errors
    assert e["target"] == f"{server}{path}?token=***"
    assert "limit of 1000 bytes" in e["message"] and e["message"].startswith(f"{server}{path}?token=***: ")
    assert "abc123" not in _everything(r)
    assert r.tables == {}


def test_a_file_beyond_the_byte_limit_is_a_source_error(tmp_path, monkeypatch):
    monkeypatch.setattr(metrics, "MAX_BYTES", 1000)
    f = tmp_path / "big.prom"
    f.write_text(GOOD * 200)
    r = collect_metrics([f"broker_id=1:{f}"])
    (e,) = r.errors
    assert e["target"] == str(f) and "limit of 1000 bytes" in e["message"]


def test_within_the_limit_is_read(server, monkeypatch):
    monkeypatch.setattr(metrics, "MAX_BYTES", 100_000)
    r = collect_metrics([f"broker_id=1:{server}/big-stream"], timeout=5)
    assert r.errors == []
    assert r.tables["metrics"] == [
        {"broker_id": 1, "name": "request_queue_size", "labels": "{}", "value": 600.0}
    ]


# --- credentials -----------------------------------------------------------------------------
def test_userinfo_is_sent_as_basic_auth_and_never_stored(server, tmp_path):
    url = server.replace("http://", "http://user:s3cret@") + "/auth"
    manifest, tables = collect(Sources(metrics=(f"broker_id=1:{url}",), cluster_name="c1", timeout=5))
    assert manifest.errors == []
    assert tables["metrics"][0]["value"] == 3.0
    assert _Handler.seen == [{"path": "/auth", "authorization": AUTH}]
    shown = server.replace("http://", "http://***@") + "/auth"
    assert [s["target"] for s in manifest.sources] == [shown]
    assert "s3cret" not in json.dumps(manifest.to_json(), default=str)
    assert "s3cret" not in json.dumps(tables, default=str)
    r = collect_metrics([f"broker_id=1:{url}"], timeout=5)
    assert r.errors == [] and r.tables["metrics"] and "s3cret" not in _everything(r)
    out = tmp_path / "snap"
    write_snapshot(out, manifest, tables, fmt="jsonl")
    for f in out.rglob("*"):
        if f.is_file():
            assert b"s3cret" not in f.read_bytes(), f
    assert shown in (out / "manifest.json").read_text()


def test_wrong_credentials_fail_without_showing_them(server):
    url = server.replace("http://", "http://user:wr0ngpass@") + "/auth"
    r = collect_metrics([url], timeout=5)
    (e,) = r.errors
    assert "HTTP 401" in e["message"] and "wr0ngpass" not in _everything(r)


def test_the_host_lookup_never_sees_the_userinfo(monkeypatch):
    looked_up: list = []
    real = socket.getaddrinfo

    def spy(host, *args, **kwargs):
        looked_up.append(host)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", spy)
    port = _closed_port()
    r = collect_metrics([f"http://user:s3cret@127.0.0.1:{port}/metrics"], timeout=2)
    assert looked_up and all("s3cret" not in str(h) and "@" not in str(h) for h in looked_up), looked_up
    (e,) = r.errors
    assert e["target"] == f"http://***@127.0.0.1:{port}/metrics"
    assert "s3cret" not in _everything(r)


@pytest.mark.parametrize("how", ["http-500", "refused", "trickle"])
def test_a_token_in_a_failing_url_is_never_shown(server, how):
    base = {
        "http-500": f"{server}/fail",
        "refused": f"http://127.0.0.1:{_closed_port()}/metrics",
        "trickle": f"{server}/trickle",
    }[how]
    r = collect_metrics([f"broker_id=2:{base}?token=abc123&name=x"], timeout=1.0)
    (e,) = r.errors
    assert e["target"] == f"{base}?token=***&name=***"
    assert r.sources[0]["target"] == e["target"]
    assert "abc123" not in _everything(r)


def test_parse_metrics_redacts_the_target_it_is_given():
    r = metrics.parse_metrics("nonsense{", "http://u:s3cret@h:1/m?token=abc123")
    assert r.errors and "s3cret" not in _everything(r) and "abc123" not in _everything(r)


def _run_cli(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["CI"] = "1"  # no progress display
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=180,
        env=env,
    )


@pytest.mark.slow
def test_cli_collect_and_check_never_show_the_token(server, tmp_path):
    url = f"{server}/fail?token=abc123"
    out = tmp_path / "snap"
    p = _run_cli("collect", "--metrics", url, "--cluster-name", "c1", "-o", str(out), "--timeout", "5")
    assert p.returncode != 0 or (out / "manifest.json").exists()
    assert "abc123" not in p.stdout + p.stderr
    manifest = (out / "manifest.json").read_text()
    assert "abc123" not in manifest and f"{server}/fail?token=***" in manifest
    for f in out.rglob("*"):
        if f.is_file():
            assert b"abc123" not in f.read_bytes(), f

    p = _run_cli(
        "check",
        "--metrics",
        url,
        "--cluster-name",
        "c1",
        "--format",
        "json",
        "--engine",
        "duckdb",
        "--timeout",
        "5",
    )
    assert "abc123" not in p.stdout + p.stderr
    assert f"{server}/fail?token=***" in p.stdout, (p.stdout[-2000:], p.stderr[-2000:])

    for fmt in ("text", "sarif", "junit", "markdown", "html"):  # the other report formats, from the snapshot
        p = _run_cli("check", str(out), "--format", fmt, "--engine", "duckdb")
        assert "abc123" not in p.stdout + p.stderr, fmt
        assert "/fail?token=" in p.stdout, (fmt, p.stdout[-1000:], p.stderr[-1000:])


# --- the redaction itself --------------------------------------------------------------------
@pytest.mark.parametrize(
    "url, shown",
    [
        ("http://user:pass@host:7071/metrics", "http://***@host:7071/metrics"),
        ("https://tok3n@host/metrics", "https://***@host/metrics"),
        ("http://host/metrics?token=abc&x=1", "http://host/metrics?token=***&x=***"),
        ("http://host/metrics?abc123", "http://host/metrics?***"),
        ("http://u:p@host/m?a=b#frag", "http://***@host/m?a=***#***"),
        ("http://u:pa/ss@host:1/m", "http://***@host:1/m"),  # an unescaped "/" in a password
        ("http://[::1]:9100/metrics", "http://[::1]:9100/metrics"),
        ("/var/metrics/broker-1.prom", "/var/metrics/broker-1.prom"),
        ("cannot reach http://u:p@h/m?k=v: refused", "cannot reach http://***@h/m?k=***: refused"),
    ],
)
def test_redact_url(url, shown):
    assert redact_url(url) == shown


def test_split_credentials_and_scrub():
    assert split_credentials("http://us%40r:p%3Ass@h:1/m?q=1#f") == (
        "http://h:1/m?q=1",
        "Basic " + base64.b64encode(b"us@r:p:ss").decode(),
    )
    assert split_credentials("http://h/m") == ("http://h/m", None)
    assert (
        scrub("nonnumeric port: 'p%3Ass' / p:ss", "http://us%40r:p%3Ass@h:1/m")
        == "nonnumeric port: '***' / ***"
    )
