"""The one way a command speaks on stderr: one line, ``kafka-audit: MESSAGE``.

File, cluster, host and topic names in a message come from inputs the user does not
necessarily control, so the line is neutralised (auditor/escape.py): a name can neither
colour the terminal nor forge a second line.
"""

from __future__ import annotations

import sys

from auditor.escape import neutralise

PREFIX = "kafka-audit: "


def say(message: object) -> None:
    """``kafka-audit: MESSAGE`` on stderr (sys.stderr as it is at the call: a test may swap it)."""
    stream = sys.stderr
    stream.write(f"{PREFIX}{neutralise(message)}\n")
    stream.flush()
