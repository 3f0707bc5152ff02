"""Renderers: one module per format, each a pure function ``render(result) -> str``."""

from __future__ import annotations

import importlib

FORMATS = ("text", "json", "html", "sarif", "junit", "markdown", "github")


def render(fmt: str, result, **options) -> str:
    if fmt not in FORMATS:
        from auditor.errors import UsageError

        raise UsageError(f"unknown format '{fmt}' (choose one of {', '.join(FORMATS)})")
    return importlib.import_module(f"auditor.render.{fmt}_render").render(result, **options)
