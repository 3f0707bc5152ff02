"""Broker properties files (``*.properties``, ``*.conf``, ``*.cfg``).

Told apart by their keys, not their names (:func:`auditor.collectors.files.classify`): a
broker (ZooKeeper mode or KRaft ``process.roles=broker``) or a combined KRaft node
(``broker,controller``) is linted as a broker; a KRaft controller-only node, a client
(producer, consumer, Connect, MirrorMaker), ZooKeeper or log4j configuration is skipped with
one note line (``FILE: skipped: ...``), so a stock Kafka ``config/`` directory is one
broker, not fifteen. A file with nothing recognised (a JSON ``trogdor.conf``, a connector
definition) is skipped with a note when a directory brought it in, and is a warning
(``--strict``: an error) when it was named. A ``.conf``/``.cfg`` file from a directory that
is not properties text is skipped too.
"""

from __future__ import annotations

from auditor import safe_io, safe_json
from auditor.collectors._common import is_sensitive_key
from auditor.collectors.files import (
    BROKER_KINDS,
    OTHER,
    PropertiesError,
    classify,
    kind_note,
    parse_properties,
    read_text,
)
from auditor.lint.model import UNRECOGNISED, BrokerFile, FileRows, LintInputError, Source
from auditor.lint.suppressions import find_suppressions

NAME = "properties"
UNIT = "file"
SUFFIXES = (".properties", ".conf", ".cfg")


# Suffixes of the other formats and of templates: never taken for properties text by content.
_NOT_PROPERTIES = (".yaml", ".yml", ".json", ".tf", ".hcl", ".tfvars", ".template", ".md", ".txt")
_TEMPLATE_MARKS = ("{{", "{%", "<%")


def recognise(src: Source) -> bool:
    """By suffix; or, for a file named on the command line with another suffix (``broker-1.props``,
    ``server.properties.prod``), by content: properties text that parses cleanly and is a
    broker's by its keys. (Not in a walk: a ``.bak`` or ``.orig`` copy would be a second broker.)"""
    if src.suffix in SUFFIXES:
        return True
    if not src.explicit or src.suffix in _NOT_PROPERTIES:
        return False
    text = src.head(1024 * 1024)
    if not text.strip() or any(m in text for m in _TEMPLATE_MARKS) or _is_json(text):
        return False
    parsed, problems = parse_properties(text)
    return not problems and classify({e.key: e.value for e in parsed}) in BROKER_KINDS


def _is_json(text: str) -> bool:
    head = text.lstrip()[:1]
    if head not in ("{", "["):
        return False
    try:
        safe_json.loads(text, "")
    except safe_json.JSONTooDeep:
        return True  # brackets nested 100 deep: JSON (or nothing), never properties text
    except ValueError:
        return False
    return True


def read(src: Source) -> FileRows:
    """A broker (or combined KRaft node) file as a BrokerFile; anything else is a note (or,
    named on the command line with nothing recognised in it, a warning)."""
    file, explicit = src.file, src.explicit
    # A .conf/.cfg that a directory brought in may be another format altogether (trogdor.conf
    # is JSON): passed over with a note. A .properties file, or a file named, must parse.
    lenient = not explicit and src.suffix != ".properties"
    text = src.text if src.text is not None else _read(src, lenient)
    if isinstance(text, FileRows):
        return text
    if _is_json(text):
        if explicit:
            return FileRows(unrecognised=f"{file}: {UNRECOGNISED} (a JSON document, not properties)")
        return FileRows(skipped=f"{kind_note(file, OTHER)} (a JSON document, not properties)")
    parsed, problems = parse_properties(text)
    if problems:
        if not lenient:
            raise LintInputError(
                f"{file}:{problems[0].line}: not a valid properties file: {problems[0].message}"
            )
        return FileRows(
            skipped=f"{kind_note(file, OTHER)} (not properties text: line {problems[0].line}: {problems[0].message})"
        )
    # A template is classified by all its keys (broker.id={{ id }} still makes it a broker's)
    # and linted by its literal entries.
    kind = classify({e.key: e.value for e in parsed})
    if src.template is not None:
        parsed = _literal(parsed, src.template, file)
    entries = {e.key: (e.value, e.line) for e in parsed}
    if kind not in BROKER_KINDS:
        if kind == OTHER and explicit:
            return FileRows(unrecognised=f"{file}: {UNRECOGNISED}")
        return FileRows(skipped=kind_note(file, kind, entries.get("process.roles", (None, 0))[0]))
    bid = broker_id(entries, file)
    return FileRows(
        brokers=[BrokerFile(file, bid if bid is not None else -1, entries, bid is not None, kind)],
        suppressions=find_suppressions(text, file, yaml_file=False),
    )


def _read(src: Source, lenient: bool) -> str | FileRows:
    path, file = src.path, src.file
    try:
        safe_io.check_regular(path, limit=None)  # read_text refuses it too, as a parse problem
    except safe_io.FileRefused as e:
        raise LintInputError(f"{file}: {e.reason}") from None
    except OSError:
        pass  # read_text says it
    try:
        return read_text(path)
    except PropertiesError as e:
        if not lenient:
            raise LintInputError(f"{file}:{max(e.line, 1)}: not a properties file: {e.message}") from None
        return FileRows(skipped=f"{kind_note(file, OTHER)} (not properties text: {e.message})")
    except OSError as e:
        raise LintInputError(f"{file}: unreadable ({e.strerror or e})") from None


def _literal(parsed, template, file: str) -> list:
    """The entries of a properties template whose key and value are literal; each other one
    is reported as not evaluated (auditor/lint/templating.py)."""
    out = []
    for e in parsed:
        if template.has_token(e.key) or template.has_token(e.value):
            what = f"{template.restore(e.key)} (a templated key)" if template.has_token(e.key) else e.key
            template.note(file, e.line, what, e.value, is_sensitive_key(e.key))
            template.kafka_key_notes.append((e.line, what))
        else:
            out.append(e)
    return out


def broker_id(entries: dict[str, tuple[str, int]], file: str) -> int | None:
    for key in ("broker.id", "node.id"):
        if key in entries:
            value, line = entries[key]
            try:
                if "_" in value:  # Python's int() reads 1_0 as 10; Java's Integer.parseInt refuses it
                    raise ValueError(value)
                bid = int(value.strip())
            except ValueError:
                raise LintInputError(f"{file}:{line}: {key} {value[:40]!r} is not an integer") from None
            if bid > 2**31 - 1:  # a Java int in Kafka; a larger one reached the engine and crashed it
                raise LintInputError(
                    f"{file}:{line}: {key}={value.strip()[:40]} is out of range (at most 2147483647)"
                )
            if bid >= 0:
                return bid
    return None
