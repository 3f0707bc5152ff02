"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` line per finding,
so a pull request gets inline annotations without code scanning (``--format github``).

The syntax is GitHub's (docs: "Workflow commands for GitHub Actions", setting an error
message): ``::error file={name},line={line},title={title}::{message}``. Values are escaped
as documented: ``%``, ``\\r``, ``\\n`` in the message, and also ``:`` and ``,`` in
properties, as ``%25``, ``%0D``, ``%0A``, ``%3A``, ``%2C``; other control characters are
made visible (escape.py), so no name can start a command of its own. Findings without a
file (check, fleet) have no ``file`` property: GitHub shows them on the run's summary. Every
annotation names the resource it is about (``topic T: ...``, after the cluster when it has no
file); they are sorted by file and line, then worst first; a note about an input file (lint's
warnings) carries ``file=`` (and ``line=``) too.
"""

from __future__ import annotations

import os
import re

from auditor.escape import neutralise
from auditor.findings import WARNING_PREFIX, AuditResult

COMMAND = {"critical": "error", "error": "error", "warning": "warning", "info": "notice"}


def escape_data(value) -> str:
    text = str(value).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return neutralise(text)


def escape_property(value) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def annotation(
    severity: str, message: str, *, title: str, file: str | None = None, line: int | None = None
) -> str:
    props = ([f"file={escape_property(file)}"] if file else []) + (
        [f"line={int(line)}"] if file and line else []
    )
    props.append(f"title={escape_property(title)}")
    return f"::{COMMAND[severity]} {','.join(props)}::{escape_data(message)}"


def _order(f):
    """Annotations in the order a reviewer reads them: by file and line (lint), then the findings
    in no file (check, fleet) worst first, as the text report lists them."""
    loc = f.location or {}
    return (loc.get("file") is None, loc.get("file") or "", loc.get("line") or 0, f.sort_key)


# A note about one input file starts with it: "FILE: ..." or "FILE:LINE: ..." (lint's warnings
# about a file it could not read as anything, a broker id declared twice ...).
_NOTE_FILE = re.compile(r"^(?P<file>[^\s:][^:\n]*?)(?::(?P<line>\d+))?: ")


def _note_location(note: str) -> tuple[str | None, int | None]:
    """The file (and line) a note is about, when it names an existing file first."""
    m = _NOTE_FILE.match(note)
    if m is None or not os.path.isfile(m["file"]):
        return None, None
    return m["file"], int(m["line"]) if m["line"] else None


def render(result: AuditResult, **_options) -> str:
    lines = []
    for f in sorted(result.findings, key=_order):
        loc = f.location or {}
        # the resource is named in every annotation: a file's topic, or the cluster's broker
        where = f"{f.resource_type} {f.resource_name}: "
        if not loc.get("file"):
            where = f"{f.cluster}: " + where
        lines.append(
            annotation(
                f.severity,
                where + f.message,
                title=f"{f.rule} {f.name}",
                file=loc.get("file"),
                line=loc.get("line"),
            )
        )
    for item in result.incomplete:
        lines.append(
            annotation(
                "error",
                f"source {item['source']} failed: {item['message']}",
                title=f"kafka-audit: {item['cluster']} incomplete",
            )
        )
    # The run's own notes (a topic defined twice, an expired exemption) are annotations too:
    # in a GitHub log, a plain stderr line is seen by no one. One about a file says which.
    for note in result.notes:
        warning = note.startswith(WARNING_PREFIX)
        text = note.removeprefix(WARNING_PREFIX)
        file, line = _note_location(text)
        lines.append(
            annotation("warning" if warning else "info", text, title="kafka-audit", file=file, line=line)
        )
    return "".join(line + "\n" for line in lines)
