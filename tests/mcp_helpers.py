"""Driving `kafka-audit mcp` with the official SDK's own client (mcp 2.x ``mcp.Client``), in
process, over a real stdio subprocess, and over HTTP, for tests/test_mcp*.py.

Every call goes through the protocol: in process the SDK connects ``Client`` to the
``MCPServer`` (``mode="legacy"``: the initialize handshake and JSON-RPC framing over memory
streams, as a v1-era client talks; ``"auto"``: the 2026 protocol's direct dispatch); the
subprocess and HTTP runs are the command a user starts. ``Client.call_tool`` validates every
successful result's structured content against the tool's output schema (the SDK's own check),
so each call below also checks the schema.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager

import anyio

from tests.conftest import ROOT

SERVER = [sys.executable, "-m", "auditor.cli.main", "mcp"]


def served(roots=(ROOT,), *, inventory=None, live=False, max_bytes=128 * 1024, config=None):
    """An in-process server (auditor.mcp.server.build_server) for these roots and inventory."""
    from auditor.collectors.inventory import load_inventory
    from auditor.config import AuditConfig
    from auditor.mcp.roots import Roots
    from auditor.mcp.server import build_server
    from auditor.mcp.tools import Served

    return build_server(
        Served(
            roots=Roots.of(list(roots)),
            config=config or AuditConfig(),
            inventory=load_inventory(inventory) if inventory else None,
            live=live,
            max_bytes=max_bytes,
        )
    )


def run(server_or_params, steps, *, mode: str = "legacy"):
    """Connect the SDK's Client to ``server_or_params`` and run ``await steps(client)``."""
    from mcp import Client

    async def main():
        async with Client(server_or_params, mode=mode) as client:
            return await steps(client)

    return anyio.run(main)


def call(server, tool: str, arguments: dict | None = None, *, mode: str = "legacy"):
    """One tool call: the CallToolResult."""

    async def steps(client):
        return await client.call_tool(tool, arguments or {})

    return run(server, steps, mode=mode)


def text_of(result) -> str:
    (block,) = result.content
    return block.text


def error_line(result) -> str:
    """The one line of a tool error (asserted to be one line)."""
    assert result.is_error, result
    line = text_of(result)
    assert "\n" not in line.strip() and "Traceback" not in line, line
    return line


def stdio_params(*args, env: dict | None = None, cwd=ROOT):
    from mcp import StdioServerParameters

    return StdioServerParameters(
        command=sys.executable,
        args=[*SERVER[1:], *map(str, args)],
        env={"PYTHONPATH": str(ROOT), **(env or {})},
        cwd=str(cwd),
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HttpServer:
    """`kafka-audit mcp --transport http` on a free loopback port, ready within a deadline,
    stopped (SIGINT, then kill) by the test that started it."""

    def __init__(self, *args, env: dict | None = None, ready_timeout: float = 60.0):
        self.port = free_port()
        self.args = ["--transport", "http", "--port", str(self.port), *map(str, args)]
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        self.ready_timeout = ready_timeout
        self.proc: subprocess.Popen | None = None
        self.log = ROOT / "test-artifacts" / f"mcp-http-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> HttpServer:
        self.log.parent.mkdir(exist_ok=True)
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [*SERVER, *self.args],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env,
            )
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.1)
        tail = self.log.read_text(errors="replace")[-3000:]
        self.stop()
        raise RuntimeError(f"kafka-audit mcp not listening within {self.ready_timeout} s:\n{tail}")

    def stop(self) -> None:
        import signal

        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    def __enter__(self) -> HttpServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


@asynccontextmanager
async def http_client(url: str, token: str | None = None):
    """The SDK's Client over Streamable HTTP, with a bearer token when given."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(120.0)) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            yield client


def cli_json(capsys, *args) -> tuple[int, dict]:
    """`kafka-audit ARGS` (in process, as tests/test_lint.py runs it): (exit code, stdout as JSON)."""
    from tests.test_lint import cli

    code, out, err = cli(capsys, *args)
    assert code in (0, 1, 3), err
    return code, json.loads(out)


def without(doc: dict, *keys: str) -> dict:
    """The CLI's part of a tool's document: the keys the server adds left out."""
    return {k: v for k, v in doc.items() if k not in keys}


SERVER_KEYS = (
    "exit",
    "rules",
    "notes",
    "truncated",
    "files",
    "skipped",
    "collected",
    "fix_plan_text",
    "change",
)
