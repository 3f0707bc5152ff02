"""Parsing user-given JSON with a nesting limit.

``json.loads`` recurses once per ``[`` or ``{``: a manifest, a JSON Lines row, a baseline or
a fleet summary of a few hundred kilobytes of brackets makes it raise ``RecursionError``,
which names no file. :func:`loads` measures the nesting first (a scan of the brackets outside
strings, without building anything) and refuses a document nested deeper than
:data:`MAX_DEPTH` with :class:`JSONTooDeep`, whose message is one line naming the file and
line::

    FILE:LINE: nesting deeper than 100 levels: refused

No snapshot, baseline or summary this tool writes comes anywhere near that depth.
``JSONTooDeep`` is a ``ValueError`` (as ``json.JSONDecodeError`` is), so a reader that
already treats undecodable JSON as damaged treats a too-deep document the same way.
"""

from __future__ import annotations

import json
import re

MAX_DEPTH = 100

# A JSON string (escapes included; an unterminated one runs to the end) or a bracket.
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.S)


class JSONTooDeep(ValueError):
    """A JSON document nested deeper than the limit; ``str(e)`` names the file and line."""

    def __init__(self, file: str, line: int, limit: int):
        self.file = str(file)
        self.line = line
        self.limit = limit
        self.message = f"{self.file}:{line}: nesting deeper than {limit} levels: refused"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


def too_deep_at(text: str, limit: int = MAX_DEPTH) -> int | None:
    """The offset of the first bracket that opens level ``limit + 1`` (strings skipped), or
    None if ``text`` nests at most ``limit`` deep. Iterative: any depth is safe to measure."""
    if text.count("[") + text.count("{") <= limit:
        return None  # cannot nest deeper than it has brackets
    depth = 0
    for m in _TOKEN.finditer(text):
        c = m.group()
        if c == "[" or c == "{":
            depth += 1
            if depth > limit:
                return m.start()
        elif c == "]" or c == "}":
            depth -= 1  # unbalanced input is json.loads's to report
    return None


def check_depth(text: str, file: str, *, first_line: int = 1, limit: int = MAX_DEPTH) -> None:
    """Raise JSONTooDeep (naming ``file`` and the line, counted from ``first_line``) if
    ``text`` nests deeper than ``limit``."""
    at = too_deep_at(text, limit)
    if at is not None:
        raise JSONTooDeep(file, first_line + text.count("\n", 0, at), limit)


def loads(text, file: str, *, first_line: int = 1, limit: int = MAX_DEPTH):
    """``json.loads(text)`` after :func:`check_depth`. ``json.JSONDecodeError`` as json.loads
    raises it; JSONTooDeep for a document nested deeper than ``limit`` (also if json.loads
    should run out of stack anyway)."""
    check_depth(text, file, first_line=first_line, limit=limit)
    try:
        return json.loads(text)
    except RecursionError:  # not expected after the check; never an unnamed crash
        raise JSONTooDeep(file, first_line, limit) from None
