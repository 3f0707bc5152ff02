"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` line per finding,
so a pull request gets inline annotations without code scanning (``--format github``).

The syntax is GitHub's (docs: "Workflow commands for GitHub Actions", setting an error
message): ``::error file={name},line={line},title={title}::{message}``. Values are escaped
as documented: ``%``, ``\\r``, ``\\n`` in the message, and also ``:`` and ``,`` in
properties, as ``%25``, ``%0D``, ``%0A``, ``%3A``, ``%2C``; other control characters are
made visible (escape.py), so no name can start a command of its own. Findings without a
file (check, fleet) have no ``file`` property: GitHub shows them on the run's summary.
"""

from __future__ import annotations

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


def render(result: AuditResult, **_options) -> str:
    lines = []
    for f in result.findings:
        loc = f.location or {}
        where = "" if loc.get("file") else f"{f.cluster}: {f.resource_type} {f.resource_name}: "
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
    # in a GitHub log, a plain stderr line is seen by no one.
    for note in result.notes:
        warning = note.startswith(WARNING_PREFIX)
        lines.append(
            annotation(
                "warning" if warning else "info",
                note.removeprefix(WARNING_PREFIX),
                title="kafka-audit",
            )
        )
    return "".join(line + "\n" for line in lines)
