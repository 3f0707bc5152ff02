"""Collector for static broker configuration: server.properties files (read-only).

The parser follows ``java.util.Properties.load`` (which Kafka uses to read server.properties):
``key=value``, ``key: value`` and ``key value``; comment lines starting with ``#`` or ``!``;
logical lines continued by an odd number of trailing backslashes (leading whitespace of the
next line dropped); escapes ``\\t \\n \\r \\f \\uXXXX`` and ``\\x -> x``; the last duplicate
wins. Values are trimmed as Kafka's ConfigDef does. Each key keeps the line number where
its logical line starts. Checked against java.util.Properties itself by a differential test
(tests/test_collect_files.py), quirks included: a line that is still empty after a
continuation may start a comment. Files are decoded as UTF-8 (ISO-8859-1, what
Properties.load(InputStream) reads, when they are not valid UTF-8).

Output: one ``configs`` row per setting (entity_type broker, entity_name the broker id,
source STATIC_BROKER_CONFIG, file, line; secrets masked) and one partial ``brokers`` row per
file (broker_id, rack, log_dirs) that :mod:`auditor.collectors.collect` merges with the
brokers registered in ZooKeeper. A malformed file gives one source error naming the file and
line; it never raises.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from auditor.collectors._common import CollectResult, config_row, one_line

SOURCE = "broker-config"
MAX_FILE_BYTES = 16 * 1024 * 1024
KAFKA_DEFAULT_LOG_DIR = "/tmp/kafka-logs"  # Kafka's default log.dir when neither log.dirs nor log.dir is set

_WS = " \t\f"
_JAVA_TRIM = "".join(map(chr, range(33)))  # String.trim(): every char <= U+0020
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


class PropertiesError(ValueError):
    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


@dataclass(frozen=True)
class Entry:
    key: str
    value: str
    line: int


def _unescape(s: str, line: int) -> str:
    if "\\" not in s:
        return s
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        i += 1
        if c != "\\":
            out.append(c)
            continue
        if i >= n:  # a lone trailing backslash: Java drops it
            break
        c = s[i]
        i += 1
        if c == "u":
            digits = s[i : i + 4]
            if len(digits) != 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise PropertiesError(line, "malformed \\uxxxx encoding")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_ESCAPES.get(c, c))
    return "".join(out)


def iter_logical_lines(text: str):
    """(line number, logical line) pairs, as ``java.util.Properties.LineReader`` (Java 9+)
    reads them: leading whitespace skipped, a line whose logical content is still empty
    starting with # or ! is a comment (also right after a continuation), an odd number of
    trailing backslashes continues the line, blank lines are skipped. The line number is
    that of the logical line's first character."""
    n = len(text)
    i = 0
    buf: list[str] = []
    first_line = line = 1
    skip_ws, appended_begin, preceding_backslash, skip_lf = True, False, False, False
    while True:
        if i >= n:
            if buf:
                if preceding_backslash:
                    buf.pop()
                yield first_line, "".join(buf)
            return
        c = text[i]
        i += 1
        if skip_lf:
            skip_lf = False
            if c == "\n":
                continue
        if c in "\r\n":
            line += 1
            if c == "\r" and i < n and text[i] == "\n":
                skip_lf = True  # counted once
        if skip_ws:
            if c in _WS:
                continue
            if not appended_begin and c in "\r\n":
                continue
            skip_ws = appended_begin = False
        if not buf and c in "#!":
            j = i
            while j < n and text[j] not in "\r\n":
                j += 1
            i = j
            skip_ws = True
            continue
        if c not in "\r\n":
            if not buf:
                first_line = line
            buf.append(c)
            if c == "\\":
                preceding_backslash = not preceding_backslash
            else:
                # a run of plain characters: copy it at once (keeps long lines fast)
                j = i
                while j < n and text[j] not in "\\\r\n":
                    j += 1
                if j > i:
                    buf.append(text[i:j])
                    i = j
                preceding_backslash = False
            continue
        # end of a natural line
        if not buf:
            skip_ws = True
            continue
        if i >= n:  # the newline is the last character (Java yields the line, even if empty now)
            if preceding_backslash:
                buf.pop()
            yield first_line, "".join(buf)
            return
        if preceding_backslash:
            buf.pop()  # the backslash at the end of the line is not part of it
            skip_ws = appended_begin = True
            preceding_backslash = False
        else:
            yield first_line, "".join(buf)
            buf = []
            skip_ws, appended_begin = True, False


def parse_properties(text: str) -> tuple[list[Entry], list[PropertiesError]]:
    """Parse Java properties text. Never raises: malformed entries are returned as problems
    and skipped. Duplicate keys: the last one wins (one entry per key, in first-seen order)."""
    entries: dict[str, Entry] = {}
    problems: list[PropertiesError] = []
    for line, logical in iter_logical_lines(text):
        n = len(logical)
        key_len, value_start, has_sep, escaped = 0, n, False, False
        while key_len < n:
            c = logical[key_len]
            if not escaped and c in "=:":
                value_start, has_sep = key_len + 1, True
                break
            if not escaped and c in _WS:
                value_start = key_len + 1
                break
            escaped = (c == "\\") and not escaped
            key_len += 1
        while value_start < n:
            c = logical[value_start]
            if c not in _WS:
                if not has_sep and c in "=:":
                    has_sep = True
                else:
                    break
            value_start += 1
        try:
            key = _unescape(logical[:key_len], line)
            value = _unescape(logical[value_start:], line)
        except PropertiesError as e:
            problems.append(e)
            continue
        entries.pop(key, None)
        entries[key] = Entry(key, value.strip(_JAVA_TRIM), line)
    return list(entries.values()), problems


def _expand(paths) -> tuple[list[Path], list[tuple[str, str]]]:
    files: list[Path] = []
    problems: list[tuple[str, str]] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found = sorted(f for f in path.iterdir() if f.is_file() and f.suffix == ".properties")
            if not found:
                problems.append((str(path), f"{path}: no *.properties file in the directory"))
            files.extend(found)
        else:
            files.append(path)
    return files, problems


def read_text(path: Path) -> str:
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise PropertiesError(0, f"{size} bytes: too large for a server.properties")
    data = path.read_bytes()
    nul = data.find(b"\x00")
    if nul >= 0:
        raise PropertiesError(data.count(b"\n", 0, nul) + 1, "binary file (NUL byte), not a properties file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")  # what java.util.Properties.load(InputStream) reads


def _broker_id(entries: dict[str, Entry], file: str) -> tuple[int | None, str | None]:
    for key in ("broker.id", "node.id"):  # node.id: KRaft
        e = entries.get(key)
        if e is None:
            continue
        try:
            bid = int(e.value)
        except ValueError:
            return None, f"{file}:{e.line}: {key} {e.value!r} is not an integer"
        if bid < 0 or bid >= 2**31:
            if key == "broker.id" and bid == -1 and "node.id" in entries:
                continue
            return None, f"{file}:{e.line}: {key}={bid}: the broker id is generated at start-up and cannot be read from the file"
        return bid, None
    return None, f"{file}: no broker.id (or node.id for KRaft) set"


def read_broker_config(path: str | os.PathLike) -> tuple[int | None, list[Entry], str | None]:
    """(broker id, entries, error) for one server.properties file; never raises."""
    file = str(path)
    try:
        text = read_text(Path(path))
    except PropertiesError as e:
        return None, [], f"{file}:{e.line}: {e.message}" if e.line else f"{file}: {e.message}"
    except OSError as e:
        return None, [], f"{file}: unreadable ({e.strerror or e})"
    entries, problems = parse_properties(text)
    if problems:
        return None, entries, f"{file}:{problems[0].line}: {problems[0].message}"
    bid, err = _broker_id({e.key: e for e in entries}, file)
    return bid, entries, err


def collect_broker_configs(paths) -> CollectResult:
    """Read server.properties files (or directories of *.properties)."""
    result = CollectResult()
    files, problems = _expand(paths if isinstance(paths, list | tuple) else [paths])
    for target, message in problems:
        result.error(SOURCE, target, message)
        result.sources.append({"source": SOURCE, "target": target, "status": "error"})
    seen: dict[int, str] = {}
    for path in files:
        file = str(path)
        bid, entries, err = read_broker_config(path)
        if err is None and bid in seen:
            err = f"{file}: broker id {bid} is also declared by {seen[bid]}"
        if err is not None:
            result.error(SOURCE, file, one_line(err))
            result.sources.append({"source": SOURCE, "target": file, "status": "error"})
            continue
        seen[bid] = file
        by_key = {e.key: e for e in entries}
        roles = {r.strip() for r in by_key["process.roles"].value.split(",")} if "process.roles" in by_key else None
        if roles is not None and "broker" not in roles:
            # A KRaft controller-only node: no broker configs to lint here.
            result.sources.append({"source": SOURCE, "target": file, "status": "skipped",
                                   "reason": f"process.roles={by_key['process.roles'].value}: not a broker"})
            continue
        for e in entries:
            result.rows("configs").append(
                config_row("broker", str(bid), e.key, e.value, "STATIC_BROKER_CONFIG", file=file, line=e.line))
        dirs = by_key.get("log.dirs") or by_key.get("log.dir")
        log_dirs = [d.strip() for d in dirs.value.split(",") if d.strip()] if dirs else [KAFKA_DEFAULT_LOG_DIR]
        rack = by_key.get("broker.rack")
        result.rows("brokers").append({"broker_id": bid, "host": None, "port": None,
                                       "rack": rack.value if rack and rack.value else None, "cores": None,
                                       "log_dirs": log_dirs, "version": None})
        result.sources.append({"source": SOURCE, "target": file, "status": "ok"})
    return result
