"""`kafka-audit mcp`: the audit behind the Model Context Protocol, on the official SDK's
``MCPServer`` (mcp 2.x), over stdio (the default) or Streamable HTTP.

What it serves:

* the tools of auditor/mcp/tools.py (``TOOLS``), every one annotated read-only,
  non-destructive and idempotent (``openWorldHint`` only on those that reach a live cluster,
  which exist only with ``--allow-live``); unknown arguments are refused, and a bad argument is
  one line naming it;
* resources: the rule catalogue (``kafka-audit://rules``, as `rules list --format json`), each
  rule's documentation (``kafka-audit://rules/CODE``, as `rules explain CODE --format markdown`)
  and the JSON report's schema (``kafka-audit://schema/report``);
* two prompts (auditor/mcp/prompts.py): MSK patch readiness, and a review of a Kafka change.

stdout is the protocol's over stdio: the SDK points file descriptor 1 at stderr while it serves
(its ``stdio_server``), so a stray print, the stage progress or a library's output reaches
stderr, never the JSON-RPC stream. Over HTTP the server binds 127.0.0.1 unless told otherwise,
and a bind to any other address needs a bearer token (the SDK's auth settings with a static
token verifier): clients send ``Authorization: Bearer TOKEN``.
"""

from __future__ import annotations

import hmac
import inspect
import ipaddress
import sys
from typing import Any

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts.base import Prompt
from mcp.server.mcpserver.resources import FunctionResource
from mcp.server.mcpserver.tools import Tool
from mcp_types import ToolAnnotations
from pydantic import ConfigDict, ValidationError

from auditor import __version__
from auditor.errors import UsageError
from auditor.mcp import prompts
from auditor.mcp.tools import TOOLS, Served, Tools, bound, one_line

NAME = "kafka-audit"
HTTP_PATH = "/mcp"
LOOPBACK_NAMES = ("localhost",)
MIN_TOKEN_LENGTH = 16
INSTRUCTIONS = """\
kafka-audit judges Apache Kafka and AWS MSK clusters and configuration changes with a fixed
catalogue of rules, each encoding Kafka's or AWS's documented behaviour with its sources.
Every tool is read-only: nothing is changed on any cluster, no fix plan is ever run.
- Find what can be audited with list_clusters (snapshots under the server's roots; inventory
  clusters by name when live tools are on).
- Before a rolling restart or an MSK patch: preflight. Change review: lint_files, lint_change.
  A whole cluster: check_snapshot (check_cluster live). A weekly fleet run: fleet_summary.
- Report verdicts, findings and exit codes as the tools give them; cite rule codes and their
  references (explain_rule); do not re-judge thresholds. "incomplete" (exit 3) and
  "not evaluated" are never "safe" or "clean".
"""


class AuditServer(MCPServer):
    """MCPServer whose argument errors are one line (pydantic's span several)."""

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as e:
            if isinstance(e.__cause__, ValidationError):
                parts = [
                    f"{'.'.join(str(x) for x in err['loc']) or 'arguments'}: {err['msg']}"
                    for err in e.__cause__.errors()
                ]
                raise ToolError(one_line(f"{name}: invalid arguments: {'; '.join(parts)}")) from None
            raise


def tool_annotations(title: str, live: bool) -> ToolAnnotations:
    return ToolAnnotations(
        title=title,
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=live,  # a live cluster is outside the server; files under the roots are not
    )


def build_tools(served: Served) -> list[Tool]:
    """The tools this configuration offers, from TOOLS: the live ones only with --allow-live (a
    live variant then replaces the tool of the same name)."""
    tools = Tools(served)
    out: list[Tool] = []
    for spec in TOOLS:
        if spec.live is True and not served.live or spec.live is False and served.live:
            continue
        method = getattr(tools, spec.method)
        t = Tool.from_function(
            bound(tools, spec),
            name=spec.name,
            title=spec.title,
            description=inspect.cleandoc(method.__doc__ or ""),
            annotations=tool_annotations(spec.title, bool(spec.live)),
            structured_output=False,
        )
        # No argument beyond the signature's (no address, credential or ARN slips through).
        base = t.fn_metadata.arg_model
        strict = type(
            base.__name__,
            (base,),
            {
                "model_config": ConfigDict(extra="forbid", arbitrary_types_allowed=True),
                "__module__": base.__module__,
            },
        )
        t.fn_metadata.arg_model = strict
        t.parameters = strict.model_json_schema(by_alias=True)
        t.fn_metadata.output_schema = spec.output  # the result is built by auditor/mcp/results.py
        out.append(t)
    return out


def resources() -> list[FunctionResource]:
    import json

    from auditor.commands.rules import render_list, render_one
    from auditor.mcp import schemas
    from auditor.registry import load_rules

    out = [
        FunctionResource(
            uri="kafka-audit://rules",
            name="rules",
            title="The rule catalogue",
            description="Every rule with its documentation, parameters and references (rules list --format json)",
            mime_type="application/json",
            fn=lambda: render_list("json"),
        ),
        FunctionResource(
            uri="kafka-audit://schema/report",
            name="report-schema",
            title="The JSON report's schema",
            description="JSON Schema of check/lint/preflight --format json (docs/report.schema.json)",
            mime_type="application/schema+json",
            fn=lambda: json.dumps(schemas.report(), indent=2) + "\n",
        ),
    ]
    for code, rule in sorted(load_rules().items()):
        out.append(
            FunctionResource(
                uri=f"kafka-audit://rules/{code}",
                name=f"{code} {rule.name}",
                title=f"{code} {rule.name}",
                description=rule.summary,
                mime_type="text/markdown",
                fn=lambda rule=rule: render_one(rule, "markdown"),
            )
        )
    return out


def build_server(served: Served, *, auth: AuthSettings | None = None, token_verifier=None) -> AuditServer:
    server = AuditServer(
        NAME,
        title="kafka-audit",
        description="Read-only Kafka and AWS MSK audit: the rules, evidence and references of kafka-audit",
        instructions=INSTRUCTIONS,
        version=__version__,
        tools=build_tools(served),
        auth=auth,
        token_verifier=token_verifier,
        log_level="WARNING",
    )
    for resource in resources():
        server.add_resource(resource)
    for fn in prompts.PROMPTS:
        server.add_prompt(Prompt.from_function(fn, description=inspect.cleandoc(fn.__doc__ or "")))
    return server


class StaticToken:
    """The SDK's TokenVerifier for one shared bearer token (compared in constant time)."""

    def __init__(self, token: str):
        self._token = token.encode("utf-8")

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode("utf-8"), self._token):
            return AccessToken(token="static", client_id="kafka-audit-mcp", scopes=[])
        return None


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def checked_token(host: str, token: str | None) -> str | None:
    """The token to require: a non-loopback bind needs one; a token is long enough to matter."""
    if token is not None:
        token = token.strip()
        if len(token) < MIN_TOKEN_LENGTH or any(c.isspace() for c in token):
            raise UsageError(f"mcp: the token must be at least {MIN_TOKEN_LENGTH} characters, without spaces")
        return token
    if not is_loopback(host):
        raise UsageError(
            f"mcp: --host {host} is not a loopback address: give a token (--token-file FILE or the "
            "KAFKA_AUDIT_MCP_TOKEN environment variable); clients then send Authorization: Bearer TOKEN"
        )
    return None


def url_of(host: str, port: int) -> str:
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    return f"http://{shown}:{port}{HTTP_PATH}"


def serve(served: Served, *, transport: str = "stdio", host: str = "127.0.0.1", port: int = 8000, token=None):
    """Run the server until the client goes (stdio) or the process is stopped (HTTP)."""
    import anyio

    from auditor.stderr import say

    tools = [t.name for t in build_tools(served)]
    where = ", ".join(served.roots.directories) or "none"
    live = "on" if served.live else "off"
    if transport == "stdio":
        server = build_server(served)
        say(f"mcp: serving {len(tools)} tools over stdio (roots: {where}; live tools: {live})")
        anyio.run(server.run_stdio_async)
        return
    token = checked_token(host, token)
    auth = verifier = None
    if token is not None:
        auth = AuthSettings(issuer_url=url_of(host, port).removesuffix(HTTP_PATH), resource_server_url=None)
        verifier = StaticToken(token)
    server = build_server(served, auth=auth, token_verifier=verifier)
    say(
        f"mcp: serving {len(tools)} tools on {url_of(host, port)} (roots: {where}; live tools: {live}; "
        f"token: {'required' if token else 'none, loopback only'})"
    )
    sys.stderr.flush()
    anyio.run(lambda: server.run_streamable_http_async(host=host, port=port, streamable_http_path=HTTP_PATH))
