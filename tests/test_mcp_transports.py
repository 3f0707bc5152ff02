"""`kafka-audit mcp` as a user starts it: over a real stdio subprocess (raw JSON-RPC and the SDK's
own stdio client, in both its handshake and its 2026 modes) and over Streamable HTTP under a
real server on a free loopback port (ready within a deadline, stopped in a finally), with and
without a bearer token.

stdout over stdio carries only JSON-RPC: a tool that prints to stdout (Python's print and a raw
write to file descriptor 1, patched into lint for this test) still leaves every stdout line a
JSON-RPC message; what it printed reaches stderr.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time

import anyio
import pytest

from tests.conftest import ROOT
from tests.mcp_helpers import HttpServer, error_line, http_client, run, stdio_params, text_of

pytestmark = pytest.mark.slow

PAYMENTS = "dt=2026-11-22/cluster=payments-msk"
FLEET = "sample_configs/fleet"

# The server, with lint patched to print to stdout (both ways) before it runs.
NOISY = """
import os, sys
import auditor.lint as lint
real = lint.run_lint
def noisy(*args, **kwargs):
    print("STRAY-PRINT")
    os.write(1, b"STRAY-FD1\\n")
    return real(*args, **kwargs)
lint.run_lint = noisy
sys.argv = ["kafka-audit", "mcp", *sys.argv[1:]]
from auditor.cli.main import main
main()
"""


class Lines:
    """A subprocess's stdout read line by line on a thread, each read with a deadline."""

    def __init__(self, stream):
        self.q: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream):
        for line in iter(stream.readline, b""):
            self.q.put(line)
        self.q.put(None)

    def next(self, timeout: float = 300.0) -> bytes | None:
        return self.q.get(timeout=timeout)

    def rest(self) -> list[bytes]:
        out = []
        while (line := self.q.get(timeout=60)) is not None:
            out.append(line)
        return out


def test_stdout_carries_only_json_rpc_over_stdio():
    proc = subprocess.Popen(
        [sys.executable, "-c", NOISY, "--root", "sample_configs"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    lines, errors, seen = Lines(proc.stdout), Lines(proc.stderr), []
    try:

        def ask(message: dict) -> dict | None:
            proc.stdin.write((json.dumps(message) + "\n").encode())
            proc.stdin.flush()
            if "id" not in message:
                return None
            line = lines.next()
            seen.append(line)
            return json.loads(line)

        init = ask(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
        )
        assert init["result"]["serverInfo"]["name"] == "kafka-audit"
        ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = ask({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert "preflight" in {t["name"] for t in listed["result"]["tools"]}
        called = ask(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "lint_files", "arguments": {"paths": ["change-review"]}},
            }
        )
        assert called["result"]["isError"] is False
        assert "REP002" in {f["rule"] for f in called["result"]["structuredContent"]["findings"]}
        failed = ask(
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "tools/call",
                "params": {"name": "lint_files", "arguments": {"paths": ["/etc/passwd"]}},
            }
        )
        assert failed["result"]["isError"] is True
        proc.stdin.close()
        proc.wait(timeout=60)
        seen += lines.rest()
        err = b"".join(errors.rest())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    for line in seen:
        message = json.loads(line)
        assert message["jsonrpc"] == "2.0" and (
            "result" in message or "error" in message or "method" in message
        )
    stderr = err.decode()
    assert "STRAY-PRINT" in stderr and "STRAY-FD1" in stderr
    assert "kafka-audit: mcp: serving 9 tools over stdio" in stderr and "Traceback" not in stderr
    assert proc.returncode == 0


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_sdk_stdio_client_gets_the_preflight_verdict(mode):
    params = stdio_params("--root", FLEET)

    async def steps(client):
        tools = (await client.list_tools()).tools
        result = await client.call_tool("preflight", {"snapshot": PAYMENTS})
        missing = await client.call_tool("preflight", {"snapshot": "dt=2026-11-22/cluster=nope"})
        return tools, result, missing

    tools, result, missing = run(params, steps, mode=mode)
    assert len(tools) == 9
    doc = result.structured_content
    (cluster,) = doc["preflight"]["clusters"]
    assert (doc["exit"]["code"], cluster["safe_to_roll"], cluster["unsafe_brokers"]) == (1, False, [1, 2, 3])
    assert "payments-msk is unsafe to roll now" in text_of(result)
    assert error_line(missing).endswith(
        "dt=2026-11-22/cluster=nope: no such file or directory under the served roots"
    )


def test_http_on_loopback_without_a_token():
    with HttpServer("--root", FLEET, env={"KAFKA_AUDIT_MCP_TOKEN": ""}) as server:

        async def main():
            async with http_client(server.url) as client:
                tools = (await client.list_tools()).tools
                result = await client.call_tool("preflight", {"snapshot": PAYMENTS})
                return tools, result

        tools, result = anyio.run(main)
    assert {t.name for t in tools} >= {"preflight", "lint_files", "list_clusters"}
    (cluster,) = result.structured_content["preflight"]["clusters"]
    assert (cluster["safe_to_roll"], cluster["unsafe_brokers"]) == (False, [1, 2, 3])


TOKEN = "t0ken-for-the-test-0123456789"


def test_http_with_a_token_refuses_requests_without_it(tmp_path):
    import httpx2

    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    with HttpServer("--root", FLEET, "--token-file", token_file) as server:
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        }
        headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
        for sent in ({}, {"Authorization": "Bearer not-the-token-at-all-000"}):
            answer = httpx2.post(server.url, json=hello, headers={**headers, **sent}, timeout=30)
            assert answer.status_code == 401, answer.text

        async def main():
            async with http_client(server.url, TOKEN) as client:
                return await client.call_tool("list_clusters", {})

        listed = anyio.run(main)
    assert {s["cluster"] for s in listed.structured_content["snapshots"]} >= {"payments-msk"}


def _refused(*args, env=None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", "mcp", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "KAFKA_AUDIT_MCP_TOKEN": "", **(env or {})},
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    return line


def test_a_bind_beyond_loopback_needs_a_token(tmp_path):
    started = time.monotonic()
    assert _refused("--transport", "http", "--host", "0.0.0.0") == (
        "kafka-audit: mcp: --host 0.0.0.0 is not a loopback address: give a token (--token-file FILE or the "
        "KAFKA_AUDIT_MCP_TOKEN environment variable); clients then send Authorization: Bearer TOKEN"
    )
    assert time.monotonic() - started < 60
    (tmp_path / "short").write_text("abc")
    assert _refused("--transport", "http", "--token-file", tmp_path / "short").endswith(
        "the token must be at least 16 characters, without spaces"
    )
    assert _refused("--host", "127.0.0.1", "--token-file", tmp_path / "short") == (
        "kafka-audit: mcp: --host, --port and --token-file are for --transport http"
    )
    assert (
        _refused("--allow-live")
        == "kafka-audit: mcp: --allow-live needs --inventory (the clusters live tools may read)"
    )
    assert (
        _refused("--root", tmp_path / "nope")
        == f"kafka-audit: mcp: --root {tmp_path / 'nope'}: not a directory"
    )


# --- the README: the config block a user pastes, and the transcript ---------------------------------


def test_the_readmes_client_config_block_starts_a_working_server(tmp_path):
    """The `mcpServers` block of the README, as a client runs it (its command and arguments; the
    example roots replaced by directories that exist here)."""
    from tests.mcp_helpers import stdio_params

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```json\n(.*?)```", readme, re.S) if "mcpServers" in b]
    (entry,) = json.loads(block)["mcpServers"].values()
    assert entry["command"] == "kafka-audit" and entry["args"][0] == "mcp"
    args, roots = list(entry["args"][1:]), iter([ROOT / "sample_configs" / "fleet", tmp_path])
    args = [str(next(roots)) if i and args[i - 1] == "--root" else a for i, a in enumerate(args)]

    async def steps(client):
        return await client.call_tool("list_clusters", {})

    listed = run(stdio_params(*args), steps)
    assert {s["cluster"] for s in listed.structured_content["snapshots"]} >= {"payments-msk"}


def test_the_readme_transcript_is_what_the_server_answers():
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import mcp_transcript
    finally:
        sys.path.remove(str(ROOT / "tools"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert mcp_transcript.in_readme(readme) == mcp_transcript.transcript(), (
        "README's MCP transcript is stale: python3 tools/mcp_transcript.py --write"
    )
