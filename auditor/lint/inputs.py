"""Reading the files a change proposes: one :class:`LintInputs` of located rows.

Every value keeps the file and line it came from, so a finding can be reported where the
reviewer can fix it. Files are read in sorted order (a file named twice is read once), so
what lint says does not depend on the order of its arguments. Each format is read by its
own module in auditor/lint/formats/ (the list ``FORMATS`` there says which, in which order):

- **properties files** (``*.properties``, ``*.conf``, ``*.cfg``): brokers, told apart from
  clients, controllers and the rest by their keys (formats/properties.py);
- **topic definitions**, mixed freely in multi-document YAML: plain topic lists, Strimzi and
  jikkou ``KafkaTopic`` (and jikkou ``KafkaTopicList``), topicctl topic files, kafka-gitops
  state files, JulieOps topologies (one module each);
- **configuration as code**: Terraform (and ``.tfvars``, and a plan as JSON), Strimzi
  ``Kafka``/``KafkaNodePool``, Confluent for Kubernetes ``KafkaTopic``/``Kafka``, Helm values,
  CloudFormation, compose files, cp-ansible inventories (formats/terraform.py,
  terraform_plan.py, strimzi.py, cfk.py, helm.py, cloudformation.py, compose.py, ansible.py);
- **templates** of these (``kafka.yaml.tpl``, ``server.properties.j2``, a Helm chart's
  ``templates/kafka.yaml``): read as what they render to, placeholders reported
  (auditor/lint/templating.py);
- **standard input** (``-``): a stream of YAML documents, named ``<stdin>``.

A directory is walked whole (hidden and vendored directories left out) and each file is
recognised by its content: a file holding nothing Kafka is counted in one note; one that
looks like Kafka configuration (:func:`kafka_markers`) but that no format reads is a warning
naming it. Values a format could not evaluate (a Terraform ``var.`` without a value, a
CloudFormation ``!If``, a Helm template) are warnings naming them (``LintInputs.unevaluated``).

A topic finding points at the line of the topic's name. Other YAML documents (a Deployment
next to the topics) are passed over; a YAML file in which no document is recognised gives
the warning ``FILE: no topic or broker definition recognised`` (``--strict``: an error).
A topic defined in several files (dev/ and prod/ trees, a topic being moved) is grouped by
:func:`definition_variants`: identical definitions are one (a note names them), differing
ones are a conflict (a warning naming every ``file:line``) and each is linted on its own.

Input that does not parse raises :class:`LintInputError`: one line, ``file:line: what``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from auditor.lint import templating
from auditor.lint.formats import DOCUMENT_FORMATS, FILE_FORMATS
from auditor.lint.formats.properties import SUFFIXES as PROPERTIES_SUFFIXES
from auditor.lint.model import (
    STDIN_NAME,
    UNRECOGNISED,
    BrokerFile,
    FileRows,
    LintInputError,
    LintInputs,
    ReadSession,
    Source,
    Suppression,
    TopicDef,
)
from auditor.lint.suppressions import find_suppressions
from auditor.lint.yaml_fields import YamlDoc, YamlFile, line, mapping, source_documents

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


def read_yaml(path: Path, file: str) -> tuple[FileRows, str, list[str] | None]:
    """(rows, text, None) for a file with at least one document lint reads; (..., what the
    documents are) when none is a format lint knows (an empty file: [])."""
    return read_yaml_source(Source(path, file, True))


def read_yaml_source(src: Source) -> tuple[FileRows, str, list[str] | None]:
    """read_yaml of a Source (a file, standard input or a neutralised template). A template's
    placeholders are reported for the documents lint reads, not for a Secret beside them."""
    text, docs = source_documents(src)
    ctx = YamlFile(src.file)
    rows = FileRows()
    recognised = False
    other: list[str] = []
    for node in docs:
        if node is None:
            continue
        found, what = _read_document(node, ctx)
        if found is not None:
            _merge(rows, found)
            recognised = True
            if src.template is not None:
                rows.unevaluated.extend(src.template.notes_between(line(node), node.end_mark.line + 1))
        elif what not in other:
            other.append(what)
    return rows, text, None if recognised else other


def read_topics(path: Path, file: str) -> tuple[list[TopicDef], str, list[str] | None]:
    """(topics, text, None) for a YAML file with at least one document lint reads; (...,
    what the documents are) when none is a format lint knows (an empty file: [])."""
    rows, text, other = read_yaml(path, file)
    return rows.topics, text, other


def _merge(into: FileRows, rows: FileRows) -> None:
    into.topics.extend(rows.topics)
    into.brokers.extend(rows.brokers)
    into.clusters.extend(rows.clusters)
    into.node_pools.extend(rows.node_pools)
    into.unevaluated.extend(rows.unevaluated)
    into.notes.extend(rows.notes)


def _read_yaml(src: Source) -> FileRows:
    rows, text, other = read_yaml_source(src)
    if other is not None:
        what = f" (found: {'; '.join(other)})" if other else " (no YAML document in it)"
        return FileRows(unrecognised=f"{src.file}: {UNRECOGNISED}{what}")
    rows.suppressions = find_suppressions(text, src.file, yaml_file=True)
    return rows


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

SKIPPED_DIRS = ("node_modules", "__pycache__")  # and every directory whose name starts with "."
MAX_SNIFF_BYTES = 1024 * 1024


def _walk(root: Path):
    """Every file under ``root``, in no particular order, hidden and vendored directories
    (.git, .terraform, node_modules) left out."""
    import os

    for base, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS]
        for name in names:
            yield Path(base) / name


def expand(paths) -> list[tuple[Path, bool]]:
    """Files to look at, sorted, each once, with whether it was named (True) or found in a
    given directory (False): the given files, and every file inside given directories
    (recursively; hidden and vendored directories left out)."""
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
            for f in _walk(path):
                if f.is_file():
                    add(f, False)
        elif path.exists():
            add(path, True)
        else:
            raise LintInputError(f"{path}: no such file")
    return sorted(found.values(), key=lambda pe: str(pe[0]))


def _sniff(src: Source) -> str:
    """The start of a file as text ("" for binary, special or unreadable files)."""
    return src.head(MAX_SNIFF_BYTES)


def _not_read(src: Source, why: str) -> FileRows | None:
    """A file no format reads: a warning naming it when it looks like Kafka configuration,
    else None (a walk counts it; a named file is an error)."""
    markers = kafka_markers(_sniff(src))
    if markers:
        return FileRows(
            unrecognised=f"{src.file}: looks like Kafka configuration ({', '.join(markers)}) but {why}: not linted"
        )
    return None


def read_file(src: Source) -> FileRows | None:
    """One file, read by the first format that recognises it; None for a file met in a
    walk that holds nothing Kafka (counted, not named). A template (``kafka.yaml.tpl``, a
    Helm chart's ``templates/kafka.yaml``, ``server.properties.j2``) is read as what it
    renders to, its placeholders reported (auditor/lint/templating.py)."""
    if src.text is None:
        language = templating.language_of(src.path.suffixes)
        if language is None and src.suffix in YAML_SUFFIXES and _is_helm_template(src):
            language = templating.LANGUAGES[src.suffix]
        if language is not None:
            return _read_template(src, language)
    return _read_plain(src)


# A Helm chart template kept as .yaml: a value that starts with an action unquoted (YAML
# would read `{{ x }}` as a flow mapping), or a line of actions only where the file is not YAML
# as it stands (a values file's `config: |` block may hold such lines, and quoted "{{ }}"
# values are plain strings Helm values files use).
_HELM_VALUE = re.compile(r"^[^#\n]*?(?::|^\s*-)[ \t]+\{\{", re.MULTILINE)
_HELM_LINE = re.compile(r"^\s*\{\{.*\}\}\s*$", re.MULTILINE)
_TEMPLATE_READS = YAML_SUFFIXES + PROPERTIES_SUFFIXES


def _is_helm_template(src: Source) -> bool:
    from auditor.lint.yaml_fields import read_yaml_documents

    head = _sniff(src)
    if _HELM_VALUE.search(head):
        return True
    if not _HELM_LINE.search(head):
        return False
    try:
        read_yaml_documents(src.path, src.file)
    except LintInputError:
        return True
    return False


def _read_template(src: Source, language: tuple[str, str]) -> FileRows | None:
    from dataclasses import replace as with_fields

    from auditor.lint.yaml_fields import read_yaml_text

    text = read_yaml_text(src.path, src.file)
    neutral, template = templating.neutralise(text, language, src.file)
    inner = src.suffix if src.suffix in YAML_SUFFIXES else templating.inner_suffix(src.path.suffixes)
    kind = inner if inner in _TEMPLATE_READS else _kind_of(neutral) if inner is None else None
    if kind is None:
        return _not_read(src, "it is a template, which lint does not render")
    rendered = with_fields(src, text=neutral, as_suffix=kind, template=template)
    try:
        rows = _read_plain(rendered)
    except LintInputError as e:
        refused = _not_read(
            src, f"it is a {template.language} lint cannot read with its placeholders set aside ({e})"
        )
        if refused is None:
            raise
        return refused
    if rows is None:
        return rows
    literal = any(b.entries for b in rows.brokers) or any(
        t.partitions is not None or t.replication_factor is not None or t.configs for t in rows.topics
    )
    if template.kafka_key_notes and not literal:
        markers = kafka_markers(_sniff(src)) or ["Kafka settings"]
        keys = template.kafka_key_notes
        shown = ", ".join(f"{what} at line {at}" for at, what in keys[:3]) + (
            f", +{len(keys) - 3} more" if len(keys) > 3 else ""
        )
        return FileRows(
            unrecognised=f"{src.file}: looks like Kafka configuration ({', '.join(markers)}) but it is a template, "
            f"which lint does not render, and its Kafka settings are themselves templated ({shown}): "
            "nothing literal to lint"
        )
    return rows


def _kind_of(text: str) -> str | None:
    """What a template without an inner suffix (``zone.tpl``) renders to, by its content."""
    from auditor import safe_yaml
    from auditor.collectors.files import BROKER_KINDS, classify, parse_properties

    try:
        docs = safe_yaml.compose_all(text, "")
    except safe_yaml.YAMLInputError:
        docs = []
    if any(mapping(d) is not None for d in docs if d is not None):
        return ".yaml"
    parsed, problems = parse_properties(text)
    if not problems and parsed and classify({e.key: e.value for e in parsed}) in BROKER_KINDS:
        return ".properties"
    return None


def _read_plain(src: Source) -> FileRows | None:
    for fmt in FILE_FORMATS:
        if fmt.recognise(src):
            rows = fmt.read(src)
            if src.template is not None and rows is not None:
                rows.unevaluated.extend(note for _line, note in src.template.notes)
            return rows
    if src.suffix in YAML_SUFFIXES:
        rows = _read_yaml(src)
        if rows.unrecognised is not None and not src.explicit and not kafka_markers(_sniff(src)):
            return None  # a workflow, a Deployment met in a walk: nothing Kafka, counted
        return rows
    if src.suffix == ".tfvars":
        from auditor.lint.formats.terraform import Session, is_auto_tfvars, load_tfvars

        load_tfvars(src.path, src.file, Session())  # bad HCL in it: a one-line error here too
        if src.explicit:  # applied before anything was read (read_inputs)
            return FileRows(skipped=f"{src.file}: Terraform variable values, applied to the Terraform files")
        if is_auto_tfvars(src.path):
            return FileRows(
                skipped=f"{src.file}: Terraform variable values that Terraform loads by itself: "
                "applied to the Terraform files of its directory"
            )
        if kafka_markers(_sniff(src)):
            return FileRows(
                skipped=f"{src.file}: skipped: Terraform variable values (name it on the command line "
                "to evaluate the Terraform files with it)"
            )
        return None
    rows = _not_read(src, f"lint does not read '{src.path.suffix or src.path.name}' files")
    if rows is not None or not src.explicit:
        return rows
    raise LintInputError(
        f"{src.file}: unsupported file type '{src.path.suffix}' "
        f"(lint reads {', '.join(sorted(set(READ_SUFFIXES)))}, Terraform plans and CloudFormation templates as JSON)"
    )


READ_SUFFIXES = PROPERTIES_SUFFIXES + YAML_SUFFIXES + (".tf", ".hcl", ".tfvars")


STDIN = "-"  # `lint -`: a stream on standard input (helm template ... | kafka-audit lint -)


def read_stdin(stream=None) -> str:
    """Standard input as text, at most MAX_YAML_BYTES (the limit every lint input has); a
    terminal, a larger stream or one that is not UTF-8 is a one-line LintInputError."""
    import sys

    from auditor.lint.yaml_fields import MAX_YAML_BYTES

    if stream is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise LintInputError(
                f"{STDIN_NAME}: standard input is a terminal: pipe a stream into `lint -` "
                "(helm template ... | kafka-audit lint -)"
            )
        stream = sys.stdin.buffer
    data = stream.read(MAX_YAML_BYTES + 1)
    if len(data) > MAX_YAML_BYTES:
        raise LintInputError(f"{STDIN_NAME}: larger than {MAX_YAML_BYTES} bytes: refused")
    if b"\0" in data[:8192]:
        raise LintInputError(f"{STDIN_NAME}: binary data, not a YAML stream")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LintInputError(f"{STDIN_NAME}: not UTF-8 text ({e.reason})") from None


def read_inputs(paths, stdin=None) -> LintInputs:
    """Every file of ``paths`` (``-``: standard input, read from ``stdin`` when given, a
    binary stream, else the process's own) as located rows."""
    from auditor.lint.formats import strimzi, terraform

    inputs = LintInputs()
    paths = list(paths)
    wants_stdin = any(str(p) == STDIN for p in paths)
    paths = [p for p in paths if str(p) != STDIN]
    files = expand(paths)
    if not files and not wants_stdin:
        given = ", ".join(str(p) for p in paths) or "no path given"
        raise LintInputError(
            f"lint: no files to lint in {given} (give server.properties, topic YAML, Terraform, "
            f"CloudFormation or Helm values files, or directories holding them, or - for standard input)"
        )
    # What a file may read beside itself (a compose env_file): the directories given, and
    # those of the files given.
    roots = {Path(p).resolve() if Path(p).is_dir() else Path(p).resolve().parent for p in paths}
    session = ReadSession(terraform=terraform.Session(), roots=tuple(sorted(roots)))
    for path, explicit in files:  # variable values first: every Terraform file is read with them
        if explicit and path.suffix.lower() == ".tfvars":
            terraform.load_tfvars(path, str(path), session.terraform)
    sources = [Source(path, str(path), explicit, session) for path, explicit in files]
    if wants_stdin:
        text = read_stdin(stdin)
        sources.append(Source(Path(STDIN), STDIN_NAME, True, session, text=text, as_suffix=".yaml"))
    # Broker ids are unique within a cluster: across properties files (one cluster), within a
    # cluster resource (a compose file's services); two compose files may both have broker 1.
    by_id: dict[tuple, str] = {}
    for src in sources:
        file, explicit = src.file, src.explicit
        rows = read_file(src)
        if rows is None or (rows.nothing_kafka and not explicit):
            inputs.other_files += 1
            continue
        if rows.unrecognised is not None:
            inputs.unrecognised.append(rows.unrecognised)
            continue
        inputs.unevaluated.extend(rows.unevaluated)
        if rows.skipped is not None:
            inputs.skipped.append(file)
            inputs.notes.append(rows.skipped)
            continue
        inputs.files.append(file)
        inputs.notes.extend(rows.notes)
        inputs.topics.extend(rows.topics)
        inputs.suppressions.extend(rows.suppressions)
        inputs.clusters.extend(rows.clusters)
        inputs.node_pools.extend(rows.node_pools)
        for broker in rows.brokers:
            if broker.declared_id:
                scope = (broker.cluster.file, broker.cluster.address) if broker.cluster is not None else ()
                if (*scope, broker.broker_id) in by_id:
                    key = "broker.id" if "broker.id" in broker.entries else "node.id"
                    raise LintInputError(
                        f"{broker.file}:{broker.entries[key][1]}: broker id {broker.broker_id} "
                        f"is also declared by {by_id[(*scope, broker.broker_id)]}"
                    )
                by_id[(*scope, broker.broker_id)] = broker.file
            inputs.brokers.append(broker)
    inputs.unevaluated.extend(strimzi.link_node_pools(inputs.brokers, inputs.node_pools))
    # A template without broker.id (set at deploy time) still gets linted under an id of its
    # own: the next free ids, in file order. A configuration resource for N brokers (a
    # Strimzi CR's replicas, an MSK cluster's broker count) is N brokers.
    next_id = max((key[-1] for key in by_id), default=0) + 1
    expanded = []
    for broker in inputs.brokers:
        if broker.declared_id:
            expanded.append(broker)
            continue
        count = broker.brokers or (broker.cluster.brokers if broker.cluster is not None else None) or 1
        for _ in range(max(1, min(count, 1000))):
            expanded.append(replace(broker, broker_id=next_id))
            next_id += 1
    inputs.brokers = expanded
    if inputs.other_files:
        inputs.notes.append(
            f"{inputs.other_files} other file(s) in the given directories passed over (nothing Kafka in them)"
        )
    return inputs


_MARKERS = re.compile(
    r"(AWS::MSK::\w+|aws_msk_\w+|confluent_kafka_\w+|\"kafka_topic\"|kafka\.strimzi\.io|platform\.confluent\.io"
    r"|kafka\.jikkou\.io|\bKafkaTopic\b|\bKafkaNodePool\b"
    r"|min\.insync\.replicas|default\.replication\.factor|unclean\.leader\.election\.enable"
    r"|offsets\.topic\.replication\.factor|transaction\.state\.log\.\w+|num\.network\.threads"
    r"|num\.io\.threads|log\.retention\.\w+|zookeeper\.connect|process\.roles)"
)


def kafka_markers(text: str, limit: int = 3) -> list[str]:
    """What makes a text look like Kafka configuration: a Kafka or MSK resource type, a
    custom resource's API group or kind, a broker or topic key; at most ``limit``, in order."""
    out: list[str] = []
    for m in _MARKERS.finditer(text):
        marker = m.group(1).strip('"')
        if marker not in out:
            out.append(marker)
            if len(out) >= limit:
                break
    return out
