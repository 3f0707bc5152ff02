"""Neutralising user-derived strings before they reach a terminal or a PR comment.

Cluster, topic, group and host names, messages and file names come from snapshots, brokers
and files the user does not necessarily control. Written raw to a terminal, an ESC starts a
control sequence: ``ESC ] 52 ; c ; ... BEL`` (OSC 52) writes the clipboard, ``ESC [ 31 m``
(CSI) recolours or moves the cursor, ``\\r`` and backspace overwrite what was printed.

:func:`neutralise` is the one function every text renderer (check, lint, preflight, fleet)
applies to what it writes. It replaces

* every C0 control character (U+0000-U+001F: NUL, BEL, backspace, tab, line feed, ``\\r``,
  ESC...), DEL (U+007F) and every C1 control character (U+0080-U+009F, CSI U+009B and OSC
  U+009D among them) by a visible ``\\xNN`` (``"\\x1b]52;c;...\\x07"`` prints as
  ``\\x1b]52;c;...\\x07``: the characters backslash, x, 1, b);
* the invisible Unicode characters that reorder or break lines (bidi embeddings, overrides
  and isolates U+202A-U+202E, U+2066-U+2069, marks U+200E, U+200F, U+061C, separators
  U+2028, U+2029) by ``\\uNNNN``.

A line feed inside a value is escaped too, so a value can never forge an output line; the
renderers neutralise each line and only then join lines with real line feeds. Backslashes
already in a value are left as they are. Everything else (any printable Unicode) is kept.

:func:`no_mentions` is for Markdown read by GitHub: ``@name`` and ``@org/team`` would notify
people or teams, so a zero-width space entity (``@&#8203;org/team``, rendered as
``@org/team``) goes after each ``@`` that precedes a name character.
"""

from __future__ import annotations

import re

_UNICODE_FORMAT = "\u061c\u200e\u200f\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f{_UNICODE_FORMAT}]")
_MENTION = re.compile(r"@(?=[A-Za-z0-9_\-])")


def _visible(m: re.Match) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def neutralise(value) -> str:
    """``value`` as a string with no control character left: each one as ``\\xNN`` (C0, DEL,
    C1) or ``\\uNNNN`` (bidi controls, line/paragraph separators). ``None`` gives ``""``."""
    text = "" if value is None else str(value)
    return _CONTROL.sub(_visible, text)


def neutralise_lines(lines) -> str:
    """Lines of text output joined by line feeds, each neutralised, with a final line feed."""
    return "\n".join(neutralise(line) for line in lines) + "\n"


def no_mentions(markdown: str) -> str:
    """Markdown in which no ``@user`` / ``@org/team`` pings anyone on GitHub."""
    return _MENTION.sub("@&#8203;", markdown)
