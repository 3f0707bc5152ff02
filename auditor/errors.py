"""User-facing errors: each carries one line that names the file or source at fault.

The CLI prints ``kafka-audit: <message>`` and exits with the error's exit code; it never
shows a traceback for these.
"""

from __future__ import annotations

from auditor import exitcodes


class AuditorError(Exception):
    exit_code = exitcodes.USAGE

    def __init__(self, message: str):
        # Keep it to one line whatever the cause carried (DuckDB and Java errors span many).
        super().__init__(" ".join(str(message).split()))


class UsageError(AuditorError):
    """Bad command line or config file."""


class SnapshotError(AuditorError):
    """A snapshot that cannot be read: corrupt, incomplete on disk, wrong schema version."""


class SourceError(AuditorError):
    """A collection source failed: the audit is incomplete."""

    exit_code = exitcodes.INCOMPLETE
