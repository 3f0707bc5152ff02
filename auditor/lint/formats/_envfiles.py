"""Environment files and variable interpolation as Docker Compose reads them.

- ``interpolate``: ``$$`` is a literal ``$``; ``${NAME}``, ``$NAME``, ``${NAME:-default}`` (unset
  or empty), ``${NAME-default}`` (unset), ``${NAME:+alt}`` / ``${NAME+alt}``, ``${NAME:?err}`` /
  ``${NAME?err}``; defaults may hold interpolations themselves (the Compose specification,
  "Interpolation": https://github.com/compose-spec/compose-spec/blob/main/spec.md#interpolation).
  A variable that is not set and has no default is not evaluated: the value is None and the
  names are returned, never replaced by "" (which Compose would do, with a warning) or by
  Kafka's default.
- ``parse_env_file``: ``NAME=value`` lines, ``#`` comments and blank lines, an optional
  ``export``, single- or double-quoted values, `` #`` starting a comment after an unquoted value
  (Compose's env_file format, https://docs.docker.com/compose/how-tos/environment-variables/set-environment-variables/#use-the-env_file-attribute).
"""

from __future__ import annotations

import re

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def interpolate(text: str, variables: dict[str, str]) -> tuple[str | None, list[str]]:
    """(value, []) or (None, the variables that are not set and have no default)."""
    out, missing, i = [], [], 0
    while i < len(text):
        c = text[i]
        if c != "$":
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1 : i + 2]
        if nxt == "$":
            out.append("$")
            i += 2
            continue
        if nxt == "{":
            end = _closing(text, i + 2)
            if end is None:  # "${" never closed: Compose refuses it; kept as written, not evaluated
                return None, [text[i:][:40]]
            value, names = _braced(text[i + 2 : end], variables)
            if value is None:
                missing.extend(names)
            else:
                out.append(value)
            i = end + 1
            continue
        m = _NAME.match(text, i + 1)
        if m is None:
            out.append(c)
            i += 1
            continue
        if m.group(0) in variables:
            out.append(variables[m.group(0)])
        else:
            missing.append(m.group(0))
        i = m.end()
    return (None, list(dict.fromkeys(missing))) if missing else ("".join(out), [])


def _closing(text: str, start: int) -> int | None:
    depth = 1
    for j in range(start, len(text)):
        if text[j] == "{" and text[j - 1] == "$":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return None


def _braced(inner: str, variables: dict[str, str]) -> tuple[str | None, list[str]]:
    m = _NAME.match(inner)
    if m is None:
        return None, ["${" + inner + "}"]
    name, rest = m.group(0), inner[m.end() :]
    value = variables.get(name)
    if rest == "":
        return (value, []) if value is not None else (None, [name])
    for op in (":-", "-", ":+", "+", ":?", "?"):
        if rest.startswith(op):
            word = rest[len(op) :]
            empty_counts = op.startswith(":")
            present = value is not None and (value != "" or not empty_counts)
            if op.endswith("-"):
                return (value, []) if present else interpolate(word, variables)
            if op.endswith("+"):
                return interpolate(word, variables) if present else ("", [])
            return (value, []) if present else (None, [name])
    return None, ["${" + inner + "}"]


def parse_env_file(text: str) -> list[tuple[str, str | None, int]]:
    """(name, value or None for a bare NAME, line) per variable line, in order."""
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        body = raw.strip()
        if not body or body.startswith("#"):
            continue
        if body.startswith("export "):
            body = body[len("export ") :].lstrip()
        name, sep, value = body.partition("=")
        name = name.strip()
        if not _NAME.fullmatch(name):
            continue
        if not sep:
            out.append((name, None, number))
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        out.append((name, value, number))
    return out
