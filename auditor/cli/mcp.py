"""kafka-audit mcp: options -> auditor.mcp.server (the Model Context Protocol server) until stopped."""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from auditor.cli.options import ConfigOpt

TOKEN_ENV = "KAFKA_AUDIT_MCP_TOKEN"


class Transport(str, Enum):
    stdio = "stdio"
    http = "http"


def mcp(
    root: Annotated[
        list[Path] | None,
        typer.Option(
            "--root",
            help="A directory whose files and snapshots tools may read (repeatable; default: the current directory). "
            "Paths must resolve under one, symlinks included.",
        ),
    ] = None,
    inventory: Annotated[
        Path | None,
        typer.Option(
            "--inventory",
            help="A fleet inventory (collect --inventory's fleet.yaml): the clusters tools name. Only their names "
            "reach the model, never addresses or credentials.",
        ),
    ] = None,
    allow_live: Annotated[
        bool,
        typer.Option(
            "--allow-live",
            help="Offer the live tools (check_cluster, cluster_health, preflight of a cluster): read-only "
            "collection from the inventory's clusters. Off by default.",
        ),
    ] = False,
    transport: Annotated[
        Transport,
        typer.Option("--transport", help="stdio (a client starts the server) or http (Streamable HTTP)."),
    ] = Transport.stdio,
    host: Annotated[
        str,
        typer.Option(
            "--host", help="http: the address to bind; anything but loopback needs a token (--token-file)."
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="http: the port.")] = 8000,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            help=f"http: a file holding the bearer token clients must send (or {TOKEN_ENV}).",
        ),
    ] = None,
    config: ConfigOpt = None,
    max_result_bytes: Annotated[
        int,
        typer.Option(
            "--max-result-bytes",
            help="Size limit of a tool's structured result and of its text, each; longer results are cut and say what was cut.",
        ),
    ] = 128 * 1024,
) -> None:
    """Serve the audit to MCP clients (IDE assistants, agent platforms), read-only: rules, lint,
    check, preflight, the fleet summary; live clusters of an --inventory only with --allow-live."""
    from auditor import safe_io
    from auditor.config import find_config
    from auditor.errors import UsageError
    from auditor.mcp.roots import Roots
    from auditor.mcp.server import serve
    from auditor.mcp.tools import Served

    if allow_live and inventory is None:
        raise UsageError("mcp: --allow-live needs --inventory (the clusters live tools may read)")
    if transport == Transport.stdio and (host != "127.0.0.1" or port != 8000 or token_file is not None):
        raise UsageError("mcp: --host, --port and --token-file are for --transport http")
    if not 1024 <= max_result_bytes <= 64 * 1024 * 1024:
        raise UsageError("mcp: --max-result-bytes must be between 1024 and 67108864")
    if not 0 < port < 65536:
        raise UsageError(f"mcp: --port {port} is not a port")
    token = os.environ.get(TOKEN_ENV) or None
    if token_file is not None:
        try:
            token = safe_io.read_text(token_file, limit=4096).strip()
        except (OSError, UnicodeDecodeError) as e:
            raise UsageError(
                f"{token_file}: cannot read the token ({getattr(e, 'strerror', None) or e})"
            ) from None
    loaded = None
    if inventory is not None:
        from auditor.collectors.inventory import load_inventory

        loaded = load_inventory(inventory)
    served = Served(
        roots=Roots.of(root or [Path.cwd()]),
        config=find_config(config),
        inventory=loaded,
        live=allow_live,
        max_bytes=max_result_bytes,
    )
    serve(served, transport=transport.value, host=host, port=port, token=token)
