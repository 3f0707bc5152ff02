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
brokers registered in ZooKeeper; for a KRaft file (process.roles set) one ``kraft_nodes`` row
(node.id, roles, controller.quorum.voters / controller.quorum.bootstrap.servers,
controller.quorum.fetch.timeout.ms). A controller-only file gives that row and its settings as
``configs`` rows of entity_type controller (never a broker's). A malformed file gives one source
error naming the file and line; it
never raises.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from auditor.collectors._common import Collector, CollectResult, config_row, one_line

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


# --- what a properties file is ----------------------------------------------------------------
# A config directory (/etc/kafka, Kafka's own config/) holds far more than broker files:
# producer/consumer/connect client configs, log4j, ZooKeeper's own zoo.cfg-style file,
# connector definitions. Files are told apart by their keys, never by their names.

BROKER = "broker"  # a broker: ZooKeeper mode, or KRaft process.roles=broker
COMBINED = "combined"  # KRaft process.roles=broker,controller: a broker and a controller
CONTROLLER = "controller"  # KRaft process.roles=controller: a controller, never a broker
CLIENT = "client"  # producer, consumer, admin, Connect worker or MirrorMaker configuration
ZOOKEEPER = "zookeeper"  # a ZooKeeper server's own configuration
LOGGING = "logging"  # log4j / log4j2 properties
OTHER = "other"  # nothing recognised (a connector definition, an empty file, a JSON file)
BROKER_KINDS = (BROKER, COMBINED)

# Keys only a Kafka server (broker or controller) is configured with.
_SERVER_KEYS = frozenset(
    (
        "broker.id",
        "node.id",
        "process.roles",
        "log.dirs",
        "log.dir",
        "zookeeper.connect",
        "listeners",
        "advertised.listeners",
        "controller.quorum.voters",
        "controller.quorum.bootstrap.servers",
        "controller.listener.names",
        "inter.broker.listener.name",
        "security.inter.broker.protocol",
        "num.network.threads",
        "num.io.threads",
        "num.partitions",
        "num.recovery.threads.per.data.dir",
        "default.replication.factor",
        "offsets.topic.replication.factor",
        "transaction.state.log.replication.factor",
        "transaction.state.log.min.isr",
        "log.retention.hours",
        "log.retention.ms",
        "log.retention.minutes",
        "log.retention.bytes",
        "log.segment.bytes",
        "log.retention.check.interval.ms",
        "broker.rack",
        "auto.create.topics.enable",
        "unclean.leader.election.enable",
        "queued.max.requests",
        "socket.send.buffer.bytes",
        "socket.receive.buffer.bytes",
        "socket.request.max.bytes",
        "group.initial.rebalance.delay.ms",
        "log.flush.interval.messages",
        "log.flush.interval.ms",
        "listener.security.protocol.map",
        "authorizer.class.name",
        "super.users",
        "delete.topic.enable",
        "replica.lag.time.max.ms",
        "num.replica.fetchers",
        "metadata.log.dir",
    )
)
# Keys of client-side configurations (producer, consumer, admin, Connect, MirrorMaker 2).
_CLIENT_KEYS = frozenset(
    (
        "bootstrap.servers",
        "group.id",
        "key.serializer",
        "value.serializer",
        "key.deserializer",
        "value.deserializer",
        "acks",
        "enable.auto.commit",
        "auto.offset.reset",
        "key.converter",
        "value.converter",
        "connector.class",
        "clusters",
        "plugin.path",
        "offset.storage.topic",
        "config.storage.topic",
        "status.storage.topic",
        "offset.storage.file.filename",
        "tasks.max",
    )
)
# A ZooKeeper server's zoo.cfg keys (Kafka ships config/zookeeper.properties).
_ZOOKEEPER_KEYS = frozenset(
    (
        "dataDir",
        "dataLogDir",
        "clientPort",
        "tickTime",
        "initLimit",
        "syncLimit",
        "maxClientCnxns",
        "admin.enableServer",
        "clientPortAddress",
    )
)


def roles_of(value: str) -> set[str]:
    return {r.strip().lower() for r in value.split(",") if r.strip()}


def classify(keys) -> str:
    """What a properties file configures, from its keys: BROKER, COMBINED, CONTROLLER,
    CLIENT, ZOOKEEPER, LOGGING or OTHER. ``keys`` maps key -> value (or is a set of keys,
    then process.roles is read as absent)."""
    keys = keys if isinstance(keys, dict) else {k: "" for k in keys}
    if "process.roles" in keys:
        roles = roles_of(str(keys["process.roles"]))
        if "broker" in roles:
            return COMBINED if "controller" in roles else BROKER
        if "controller" in roles:
            return CONTROLLER
    names = set(keys)
    if names & _SERVER_KEYS:
        return BROKER
    if names & _CLIENT_KEYS or any(k.endswith(".bootstrap.servers") for k in names):
        return CLIENT
    if names & _ZOOKEEPER_KEYS or any(k.startswith("server.") and k[7:].isdigit() for k in names):
        return ZOOKEEPER
    if any(k.startswith(("log4j.", "log4j2.", "appender.", "logger.", "rootLogger")) for k in names):
        return LOGGING
    return OTHER


def kind_note(file: str, kind: str, roles: str | None = None) -> str:
    """The one line said about a properties file that is not a broker's."""
    what = {
        CONTROLLER: f"a KRaft controller (process.roles={roles or 'controller'}), not a broker",
        CLIENT: "a client configuration (producer, consumer, admin, Connect or MirrorMaker), not a broker's",
        ZOOKEEPER: "a ZooKeeper server configuration, not a broker's",
        LOGGING: "a logging (log4j) configuration",
        OTHER: "no broker setting recognised",
    }[kind]
    return f"{file}: skipped: {what}"


def kraft_node_row(node_id: int, by_key: dict[str, Entry], file: str) -> dict:
    """A ``kraft_nodes`` row: what a KRaft node's properties file says about the quorum."""

    def value(key: str) -> str | None:
        e = by_key.get(key)
        return e.value if e is not None and e.value else None

    timeout = (value("controller.quorum.fetch.timeout.ms") or "").strip()
    return {
        "node_id": node_id,
        "process_roles": sorted(roles_of(value("process.roles") or "")),
        "quorum_voters": value("controller.quorum.voters"),
        "quorum_bootstrap_servers": value("controller.quorum.bootstrap.servers"),
        "file": file,
        # The node's own fetch timeout (MNT005 judges its restart with it, as Strimzi's roller does);
        # not a plain number (a placeholder, a typo): unknown, as if not set.
        "quorum_fetch_timeout_ms": int(timeout)
        if timeout.isascii() and timeout.isdigit() and len(timeout) < 12
        else None,
    }


def _expand(paths) -> tuple[list[Path], list[tuple[str, str]]]:
    files: list[Path] = []
    problems: list[tuple[str, str]] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            try:
                found = sorted(f for f in path.iterdir() if f.is_file() and f.suffix == ".properties")
            except OSError as e:  # unreadable directory: a source error naming it, not a traceback
                problems.append((str(path), f"{path}: unreadable directory ({e.strerror or e})"))
                continue
            if not found:
                problems.append((str(path), f"{path}: no *.properties file in the directory"))
            files.extend(found)
        else:
            files.append(path)
    return files, problems


def read_text(path: Path) -> str:
    """A properties file's text. Only a regular file is read (a FIFO or a device, also behind
    a symlink, is refused before any read: PropertiesError(0, "not a regular file (a FIFO):
    refused")), and at most MAX_FILE_BYTES of it."""
    from auditor.safe_io import FileRefused, read_bytes

    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise PropertiesError(0, f"{size} bytes: too large for a server.properties")
    try:
        data = read_bytes(path, limit=MAX_FILE_BYTES)
    except FileRefused as e:
        raise PropertiesError(0, e.reason) from None
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
            if "_" in e.value:  # Python's int() reads 1_0 as 10; Java's Integer.parseInt refuses it
                raise ValueError(e.value)
            bid = int(e.value)
        except ValueError:
            return None, f"{file}:{e.line}: {key} {e.value[:40]!r} is not an integer"
        if bid >= 2**31:
            return None, f"{file}:{e.line}: {key}={e.value.strip()[:40]} is out of range (at most 2147483647)"
        if bid < 0:
            if key == "broker.id" and bid == -1 and "node.id" in entries:
                continue
            return (
                None,
                f"{file}:{e.line}: {key}={bid}: the broker id is generated at start-up and cannot be read from the file",
            )
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
    """Read server.properties files (or directories of *.properties).

    Every file is classified by its keys (:func:`classify`): broker and combined-mode files
    become broker configs; a KRaft controller-only file becomes a ``kraft_nodes`` row only
    (node.id, process.roles, controller.quorum.voters / controller.quorum.bootstrap.servers;
    every KRaft broker or combined file gives one too); client, ZooKeeper and logging
    configurations and unrecognised files are skipped, each with one note (a ``skipped``
    source entry with its ``reason``). When not one given file configures a Kafka server,
    that is a source error: the audit would otherwise be a green audit of nothing."""
    result = CollectResult()
    given = paths if isinstance(paths, list | tuple) else [paths]
    files, problems = _expand(given)
    for target, message in problems:
        result.error(SOURCE, target, message)
        result.sources.append({"source": SOURCE, "target": target, "status": "error"})
    seen: dict[int, str] = {}
    servers = 0
    for path in files:
        file = str(path)
        bid, entries, err = read_broker_config(path)
        by_key = {e.key: e for e in entries}
        kind = classify({k: e.value for k, e in by_key.items()})
        if err is not None and not entries:  # unreadable, binary, too large: not a file to classify
            result.error(SOURCE, file, one_line(err))
            result.sources.append({"source": SOURCE, "target": file, "status": "error"})
            continue
        if kind == CONTROLLER:  # a KRaft controller: its quorum settings, never a broker
            servers += 1
            if err is not None:
                result.error(SOURCE, file, one_line(err))
                result.sources.append({"source": SOURCE, "target": file, "status": "error"})
                continue
            result.rows("kraft_nodes").append(kraft_node_row(bid, by_key, file))
            # Its settings as a controller (auto.leader.rebalance.enable acts on the controllers
            # of a KRaft cluster: CFG006), never as a broker's.
            for e in entries:
                result.rows("configs").append(
                    config_row(
                        CONTROLLER, str(bid), e.key, e.value, "STATIC_BROKER_CONFIG", file=file, line=e.line
                    )
                )
            result.sources.append(
                {
                    "source": SOURCE,
                    "target": file,
                    "status": "ok",
                    "kind": kind,
                    "note": f"{file}: a KRaft controller (process.roles="
                    f"{by_key['process.roles'].value}), not a broker: read for its "
                    "quorum settings (kraft_nodes) and its controller settings (configs of entity type "
                    "controller)",
                }
            )
            continue
        if kind not in BROKER_KINDS:
            roles = by_key["process.roles"].value if "process.roles" in by_key else None
            result.sources.append(
                {
                    "source": SOURCE,
                    "target": file,
                    "status": "skipped",
                    "kind": kind,
                    "reason": kind_note(file, kind, roles),
                }
            )
            continue
        servers += 1
        if err is None and bid in seen:
            err = f"{file}: broker id {bid} is also declared by {seen[bid]}"
        if err is not None:
            result.error(SOURCE, file, one_line(err))
            result.sources.append({"source": SOURCE, "target": file, "status": "error"})
            continue
        seen[bid] = file
        for e in entries:
            result.rows("configs").append(
                config_row("broker", str(bid), e.key, e.value, "STATIC_BROKER_CONFIG", file=file, line=e.line)
            )
        dirs = by_key.get("log.dirs") or by_key.get("log.dir")
        log_dirs = (
            [d.strip() for d in dirs.value.split(",") if d.strip()] if dirs else [KAFKA_DEFAULT_LOG_DIR]
        )
        rack = by_key.get("broker.rack")
        if "process.roles" in by_key:
            result.rows("kraft_nodes").append(kraft_node_row(bid, by_key, file))
        result.rows("brokers").append(
            {
                "broker_id": bid,
                "host": None,
                "port": None,
                "rack": rack.value if rack and rack.value else None,
                "cores": None,
                "log_dirs": log_dirs,
                "version": None,
            }
        )
        result.sources.append({"source": SOURCE, "target": file, "status": "ok", "kind": kind})
    if files and not servers and not result.errors:  # (an unreadable file already made it an error)
        where = ", ".join(str(p) for p in given)
        result.error(
            SOURCE,
            where,
            f"{where}: no broker configuration among {len(files)} properties file(s) "
            "(client, ZooKeeper, logging or unrecognised files only)",
        )
    return result


COLLECTOR = Collector(
    name="files",
    wanted=lambda ctx: bool(ctx.sources.broker_configs),
    target=lambda ctx: ", ".join(map(str, ctx.sources.broker_configs)),
    collect=lambda ctx: collect_broker_configs(list(ctx.sources.broker_configs)),
)
