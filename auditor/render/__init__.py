"""Renderers: one module per format, each a pure function ``render(result) -> str``.

``FORMATS`` is the one list of report formats: the command line's ``--format`` choices and the
format an ``-o FILE`` name implies are derived from it (auditor/cli/output.py). A format is one
module here (``<format>_render.py``) plus one entry.
"""

from __future__ import annotations

import importlib

# format -> the file name endings that imply it (-o FILE without --format), most specific first
FORMATS: dict[str, tuple[str, ...]] = {
    "text": (".txt",),
    "json": (".json",),
    "html": (".html",),
    "sarif": (".sarif", ".sarif.json"),
    "junit": (".xml",),
    "markdown": (".md",),
    "github": (),  # annotations: printed for the CI log (a .txt file takes them as text too)
}


def format_of_name(name: str) -> str | None:
    """The format a file name's ending implies (the longest ending that matches), or None."""
    lowered = name.lower()
    endings = sorted(((e, f) for f, es in FORMATS.items() for e in es), key=lambda x: -len(x[0]))
    return next((fmt for ending, fmt in endings if lowered.endswith(ending)), None)


def render(fmt: str, result, **options) -> str:
    if fmt not in FORMATS:
        from auditor.errors import UsageError

        raise UsageError(f"unknown format '{fmt}' (choose one of {', '.join(FORMATS)})")
    return importlib.import_module(f"auditor.render.{fmt}_render").render(result, **options)
