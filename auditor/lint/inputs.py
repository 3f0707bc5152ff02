"""Reading the files a change proposes: one :class:`LintInputs` of located rows.

Every value keeps the file and line it came from, so a finding can be reported where the
reviewer can fix it. Files are read in sorted order (a file named twice is read once), so
what lint says does not depend on the order of its arguments. Each format is read by its
own module in auditor/lint/formats/ (the list ``FORMATS`` there says which, in which order):

- **properties files** (``*.properties``, ``*.conf``, ``*.cfg``): brokers, told apart from
  clients, controllers and the rest by their keys (formats/properties.py);
- **topic definitions**, mixed freely in multi-document YAML: plain topic lists, Strimzi and
  jikkou ``KafkaTopic`` (and jikkou ``KafkaTopicList``), topicctl topic files, kafka-gitops
  state files, JulieOps topologies (one module each).

A topic finding points at the line of the topic's name. Other YAML documents (a Deployment
next to the topics) are passed over; a YAML file in which no document is recognised gives
the warning ``FILE: no topic or broker definition recognised`` (``--strict``: an error).
A topic defined in several files (dev/ and prod/ trees, a topic being moved) is grouped by
:func:`definition_variants`: identical definitions are one (a note names them), differing
ones are a conflict (a warning naming every ``file:line``) and each is linted on its own.

Input that does not parse raises :class:`LintInputError`: one line, ``file:line: what``.
"""

from __future__ import annotations

from pathlib import Path

from auditor import safe_io, safe_yaml
from auditor.lint.formats import DOCUMENT_FORMATS, FILE_FORMATS
from auditor.lint.formats.properties import SUFFIXES as PROPERTIES_SUFFIXES
from auditor.lint.model import (
    UNRECOGNISED,
    BrokerFile,
    FileRows,
    LintInputError,
    LintInputs,
    Source,
    Suppression,
    TopicDef,
)
from auditor.lint.suppressions import find_suppressions
from auditor.lint.yaml_fields import YamlDoc, YamlFile

__all__ = [
    "BrokerFile",
    "LintInputError",
    "LintInputs",
    "Suppression",
    "TopicDef",
    "definition_messages",
    "definition_variants",
    "expand",
    "find_suppressions",
    "read_inputs",
    "read_topics",
]

YAML_SUFFIXES = (".yaml", ".yml")
MAX_YAML_BYTES = 64 * 1024 * 1024


# --- YAML documents ----------------------------------------------------------------------------


def _describe(doc: YamlDoc) -> str:
    """A few words on a YAML document lint does not read, for the 'not recognised' warning."""
    m = doc.m
    if m is None:
        return "a list" if doc.is_sequence() else "a scalar"
    api, kind = doc.ctx.text(m.get("apiVersion")), doc.ctx.text(m.get("kind"))
    if api or kind:
        return " ".join(x for x in (api, kind) if x)
    keys = list(m)[:4]
    return (
        "top-level keys " + ", ".join(keys) + (", ..." if len(m) > 4 else "") if keys else "an empty mapping"
    )


def _read_document(node, ctx: YamlFile) -> tuple[FileRows | None, str | None]:
    """(what the first format recognising the document read, None); or (None, what the
    document is) when no format knows it."""
    doc = YamlDoc(node, ctx)
    for fmt in DOCUMENT_FORMATS:
        if fmt.recognise(doc):
            return fmt.read(doc), None
    return None, _describe(doc)  # another Kubernetes resource, an unrelated mapping


def read_topics(path: Path, file: str) -> tuple[list[TopicDef], str, list[str] | None]:
    """(topics, text, None) for a file with at least one document lint reads; (..., what the
    documents are) when none is a topic format lint knows (an empty file: [])."""
    try:
        text = safe_io.read_text(path, limit=MAX_YAML_BYTES)
    except safe_io.FileRefused as e:  # a FIFO or a device (also behind a symlink), or huge
        raise LintInputError(str(e).replace(str(path), file, 1)) from None
    except UnicodeDecodeError as e:
        raise LintInputError(f"{file}: not UTF-8 text ({e.reason})") from None
    except OSError as e:
        raise LintInputError(f"{file}: unreadable ({e.strerror or e})") from None
    try:
        docs = safe_yaml.compose_all(text, file)
    except safe_yaml.YAMLInputError as e:
        raise LintInputError(str(e)) from None
    ctx = YamlFile(file)
    topics: list[TopicDef] = []
    recognised = False
    other: list[str] = []
    for node in docs:
        if node is None:
            continue
        rows, what = _read_document(node, ctx)
        if rows is not None:
            topics.extend(rows.topics)
            recognised = True
        elif what not in other:
            other.append(what)
    return topics, text, None if recognised else other


def _read_yaml(src: Source) -> FileRows:
    topics, text, other = read_topics(src.path, src.file)
    if other is not None:
        what = f" (found: {'; '.join(other)})" if other else " (no YAML document in it)"
        return FileRows(unrecognised=f"{src.file}: {UNRECOGNISED}{what}")
    return FileRows(topics=topics, suppressions=find_suppressions(text, src.file, yaml_file=True))


# --- several definitions of one topic -------------------------------------------------------------


def definition_variants(topics: list[TopicDef]) -> dict[str, list[list[TopicDef]]]:
    """name -> its distinct definitions (variants), each a list of identical definitions.
    Everything is sorted by file and line, so the result does not depend on the order the
    files were given in: variant 0 is the one that comes first in file order."""
    by_name: dict[str, dict[tuple, list[TopicDef]]] = {}
    for t in topics:
        by_name.setdefault(t.name, {}).setdefault(t.content(), []).append(t)
    out = {}
    for name in sorted(by_name):
        variants = [sorted(defs, key=lambda d: (d.file, d.line)) for defs in by_name[name].values()]
        out[name] = sorted(variants, key=lambda v: (v[0].file, v[0].line))
    return out


def _fmt(value) -> str:
    return "unset" if value is None else str(value)


def _places(defs: list[TopicDef]) -> str:
    where = [d.where for d in defs]
    return where[0] if len(where) == 1 else ", ".join(where[:-1]) + " and " + where[-1]


def definition_messages(variants: dict[str, list[list[TopicDef]]]) -> tuple[list[str], list[str]]:
    """(conflicts, notes): one warning line per topic defined differently in several places
    (every file:line, with what differs), one note per topic defined identically twice."""
    conflicts, notes = [], []
    for name, vs in variants.items():
        if len(vs) == 1:
            if len(vs[0]) > 1:
                notes.append(f"topic {name} is defined identically in {_places(vs[0])}")
            continue
        fields = [
            ("partitions", lambda d: d.partitions),
            ("replication_factor", lambda d: d.replication_factor),
        ]
        keys = sorted({k for v in vs for k in v[0].configs})
        fields += [(k, lambda d, k=k: d.configs[k][0] if k in d.configs else None) for k in keys]
        differing = [(label, get) for label, get in fields if len({get(v[0]) for v in vs}) > 1]
        shown = differing[:4]
        more = f", +{len(differing) - len(shown)} more" if len(differing) > len(shown) else ""
        parts = [
            f"{_places(v)}: " + ", ".join(f"{label} {_fmt(get(v[0]))}" for label, get in shown) + more
            for v in vs
        ]
        conflicts.append(
            f"topic {name} has {len(vs)} different definitions: "
            + "; ".join(parts)
            + " (each is linted on its own)"
        )
    return conflicts, notes


# --- everything ------------------------------------------------------------------------------


def expand(paths) -> list[tuple[Path, bool]]:
    """Files to lint, sorted, each once, with whether it was named (True) or found in a
    given directory (False): the given files, and the *.properties / *.conf / *.cfg / *.yaml
    / *.yml inside given directories (recursively)."""
    found: dict[Path, tuple[Path, bool]] = {}

    def add(path: Path, explicit: bool) -> None:
        key = path.resolve()
        if key in found:
            old, was_explicit = found[key]
            path = min(old, path, key=str)
            explicit = explicit or was_explicit
        found[key] = (path, explicit)

    for p in paths:
        path = Path(p)
        if path.is_dir():
            for f in path.rglob("*"):
                if f.is_file() and f.suffix.lower() in PROPERTIES_SUFFIXES + YAML_SUFFIXES:
                    add(f, False)
        elif path.exists():
            add(path, True)
        else:
            raise LintInputError(f"{path}: no such file")
    return sorted(found.values(), key=lambda pe: str(pe[0]))


def read_file(src: Source) -> FileRows:
    """One file, read by the first format that recognises it."""
    for fmt in FILE_FORMATS:
        if fmt.recognise(src):
            return fmt.read(src)
    if src.suffix in YAML_SUFFIXES:
        return _read_yaml(src)
    raise LintInputError(
        f"{src.file}: unsupported file type '{src.path.suffix}' "
        f"(lint reads {', '.join(PROPERTIES_SUFFIXES + YAML_SUFFIXES)})"
    )


def read_inputs(paths) -> LintInputs:
    inputs = LintInputs()
    paths = list(paths)
    files = expand(paths)
    if not files:
        given = ", ".join(str(p) for p in paths) or "no path given"
        raise LintInputError(
            f"lint: no files to lint in {given} (give server.properties or topic YAML files, "
            f"or directories holding {', '.join(PROPERTIES_SUFFIXES + YAML_SUFFIXES)} files)"
        )
    by_id: dict[int, str] = {}
    for path, explicit in files:
        file = str(path)
        rows = read_file(Source(path, file, explicit))
        if rows.unrecognised is not None:
            inputs.unrecognised.append(rows.unrecognised)
            continue
        if rows.skipped is not None:
            inputs.skipped.append(file)
            inputs.notes.append(rows.skipped)
            continue
        inputs.files.append(file)
        inputs.topics.extend(rows.topics)
        inputs.suppressions.extend(rows.suppressions)
        for broker in rows.brokers:
            if broker.declared_id:
                if broker.broker_id in by_id:
                    key = "broker.id" if "broker.id" in broker.entries else "node.id"
                    raise LintInputError(
                        f"{broker.file}:{broker.entries[key][1]}: broker id {broker.broker_id} "
                        f"is also declared by {by_id[broker.broker_id]}"
                    )
                by_id[broker.broker_id] = broker.file
            inputs.brokers.append(broker)
    # A template without broker.id (set at deploy time) still gets linted under an id of its
    # own: the next free ids, in file order.
    next_id = max(by_id, default=0) + 1
    for broker in inputs.brokers:
        if not broker.declared_id:
            broker.broker_id = next_id
            next_id += 1
    return inputs
