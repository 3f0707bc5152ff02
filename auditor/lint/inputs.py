"""Reading the files a change proposes: server.properties and topic definitions (YAML).

Every value keeps the file and line it came from, so a finding can be reported where the
reviewer can fix it. Topic definitions come in three shapes, mixed freely in
multi-document YAML:

- a plain list of topics (or a mapping with a ``topics:`` list): ``name``, ``partitions``,
  ``replication_factor`` (or ``replicationFactor``), ``configs`` (or ``config``);
- Strimzi ``KafkaTopic`` (apiVersion ``kafka.strimzi.io/*``): ``metadata.name`` (or
  ``spec.topicName``), ``spec.partitions``, ``spec.replicas``, ``spec.config``;
- jikkou ``KafkaTopic`` / ``KafkaTopicList`` (apiVersion ``kafka.jikkou.io/*``):
  ``metadata.name``, ``spec.partitions``, ``spec.replicas``, ``spec.configs``.

Other YAML documents (a Deployment next to the topics) are skipped. Input that does not
parse raises :class:`LintInputError`: one line, ``file:line: what``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from auditor.collectors.files import PropertiesError, parse_properties, read_text
from auditor.errors import UsageError

PROPERTIES_SUFFIXES = (".properties", ".conf", ".cfg")
YAML_SUFFIXES = (".yaml", ".yml")


class LintInputError(UsageError):
    """A lint input that cannot be read: one line naming the file and line (exit 2)."""


@dataclass
class Suppression:
    file: str
    line: int  # the comment's line
    codes: tuple[str, ...]
    reason: str
    own_line: bool  # a comment alone on its line covers the next line; a trailing one its own
    used: int = 0

    def covers(self, line: int) -> bool:
        return line == (self.line + 1 if self.own_line else self.line)


@dataclass
class BrokerFile:
    file: str
    broker_id: int
    entries: dict[str, tuple[str, int]]  # key -> (value, line)
    declared_id: bool  # broker.id / node.id was in the file


@dataclass
class TopicDef:
    name: str
    file: str
    line: int  # the topic's line (its name)
    anchors: tuple[int, ...]  # lines a suppression may sit on: the item or document start, the name
    partitions: int | None
    replication_factor: int | None
    configs: dict[str, tuple[str, int]] = field(default_factory=dict)  # key -> (value, line)
    kind: str = "list"  # list | strimzi | jikkou


@dataclass
class LintInputs:
    files: list[str] = field(default_factory=list)
    brokers: list[BrokerFile] = field(default_factory=list)
    topics: list[TopicDef] = field(default_factory=list)
    suppressions: list[Suppression] = field(default_factory=list)


# --- suppressions ----------------------------------------------------------------------------

_SUPPRESS = re.compile(r"#\s*kafka-audit\s*:\s*ignore\s*\[([^\]]*)\](.*)$")
_REASON = re.compile(r"""reason\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_CODE = re.compile(r"^[A-Z]{3}\d{3}$")


def find_suppressions(text: str, file: str, yaml_file: bool) -> list[Suppression]:
    """``# kafka-audit: ignore[CODE,...] reason="..."`` comments. In YAML a trailing comment
    covers its own line; in properties files (where ``#`` after a value is part of the
    value) only whole-line comments exist. A comment alone on its line covers the next."""
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        if "kafka-audit" not in raw:
            continue
        m = _SUPPRESS.search(raw)
        if not m:
            continue
        before = raw[: m.start()]
        own_line = not before.strip()
        if not own_line and not yaml_file:
            continue  # part of a properties value, not a comment
        codes = tuple(c.strip().upper() for c in m.group(1).split(",") if c.strip())
        if not codes:
            raise LintInputError(f"{file}:{number}: suppression names no rule: use ignore[CODE] reason=\"...\"")
        for code in codes:
            if not _CODE.match(code):
                raise LintInputError(f"{file}:{number}: suppression names '{code}', not a rule code like REP002")
        r = _REASON.search(m.group(2))
        reason = (r.group(1) if r.group(1) is not None else r.group(2)).strip() if r else ""
        if not reason:
            raise LintInputError(f"{file}:{number}: suppression of {', '.join(codes)} needs a reason: "
                                 f"# kafka-audit: ignore[{codes[0]}] reason=\"why this is acceptable\"")
        out.append(Suppression(file, number, codes, reason, own_line))
    return out


# --- server.properties -----------------------------------------------------------------------


def read_properties(path: Path, file: str) -> tuple[dict[str, tuple[str, int]], str]:
    try:
        text = read_text(path)
    except PropertiesError as e:
        raise LintInputError(f"{file}:{max(e.line, 1)}: not a properties file: {e.message}") from None
    except OSError as e:
        raise LintInputError(f"{file}: unreadable ({e.strerror or e})") from None
    entries, problems = parse_properties(text)
    if problems:
        raise LintInputError(f"{file}:{problems[0].line}: not a valid properties file: {problems[0].message}")
    return {e.key: (e.value, e.line) for e in entries}, text


def _broker_id(entries: dict[str, tuple[str, int]], file: str) -> int | None:
    for key in ("broker.id", "node.id"):
        if key in entries:
            value, line = entries[key]
            try:
                bid = int(value.strip())
            except ValueError:
                raise LintInputError(f"{file}:{line}: {key} {value!r} is not an integer") from None
            if bid >= 0:
                return bid
    return None


# --- YAML topic definitions ------------------------------------------------------------------


def _yaml_loader():
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _mapping(node) -> dict | None:
    """A MappingNode as {key string: value node}; None for other nodes."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return None
    out = {}
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode):
            out[str(k.value)] = v
    return out


_CONSTRUCTOR = None
_FILE = None  # the file being read, for errors raised while resolving scalars


def _scalar(node):
    """A scalar node's value as YAML 1.1 reads it (int, bool, null, str)."""
    import yaml

    global _CONSTRUCTOR
    if node is None:
        return None
    if not isinstance(node, yaml.ScalarNode):
        return node  # callers reject non-scalars
    if node.tag == "tag:yaml.org,2002:str":
        return node.value
    if _CONSTRUCTOR is None:
        _CONSTRUCTOR = yaml.constructor.SafeConstructor()
    try:
        return _CONSTRUCTOR.construct_object(node)
    except yaml.YAMLError as e:  # an unknown tag (!Ref ...), a malformed timestamp
        what = " ".join(str(getattr(e, "problem", None) or e).split())
        raise LintInputError(f"{_FILE or '?'}:{_line(node)}: not valid YAML here: {what}") from None


def _line(node) -> int:
    return node.start_mark.line + 1


def _int_field(node, what: str, file: str) -> int | None:
    import yaml

    if node is None:
        return None
    value = _scalar(node)
    if value is None:
        return None
    if isinstance(value, bool) or isinstance(value, yaml.Node) or not isinstance(value, int | str):
        raise LintInputError(f"{file}:{_line(node)}: {what} must be an integer")
    try:
        return int(str(value).strip())
    except ValueError:
        raise LintInputError(f"{file}:{_line(node)}: {what} must be an integer, not {value!r}") from None


def _config_value(node, key: str, file: str) -> str | None:
    import yaml

    if isinstance(node, yaml.SequenceNode):  # cleanup.policy: [compact, delete]
        return ",".join(_config_value(n, key, file) or "" for n in node.value)
    if isinstance(node, yaml.MappingNode):
        raise LintInputError(f"{file}:{_line(node)}: config {key} must be a value, not a mapping")
    value = _scalar(node)
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _configs(node, file: str) -> dict[str, tuple[str, int]]:
    if node is None or _scalar(node) is None:
        return {}
    m = _mapping(node)
    if m is None:
        raise LintInputError(f"{file}:{_line(node)}: topic configs must be a mapping of key: value")
    out = {}
    key_lines = {str(k.value): _line(k) for k, _v in node.value}
    for key, vnode in m.items():
        value = _config_value(vnode, key, file)
        if value is not None:
            out[key] = (value, key_lines[key])
    return out


def _topic_from_item(item, file: str, start_line: int) -> TopicDef:
    m = _mapping(item)
    if m is None:
        raise LintInputError(f"{file}:{_line(item)}: a topic must be a mapping with a name")
    name_node = m.get("name") or m.get("topic")
    name = _scalar(name_node)
    if not isinstance(name, str | int) or isinstance(name, bool) or str(name) == "":
        raise LintInputError(f"{file}:{_line(item)}: topic without a name")
    rf_node = m.get("replication_factor", m.get("replicationFactor", m.get("replicas")))
    return TopicDef(
        name=str(name), file=file, line=_line(name_node), anchors=(start_line, _line(name_node)),
        partitions=_int_field(m.get("partitions"), "partitions", file),
        replication_factor=_int_field(rf_node, "replication_factor", file),
        configs=_configs(m.get("configs", m.get("config")), file), kind="list",
    )


def _topic_from_resource(doc: dict, file: str, start_line: int, kind: str) -> TopicDef | None:
    meta = _mapping(doc.get("metadata")) or {}
    spec = _mapping(doc.get("spec")) or {}
    name_node = spec.get("topicName") if kind == "strimzi" and spec.get("topicName") is not None else meta.get("name")
    name = _scalar(name_node)
    if not isinstance(name, str) or not name:
        raise LintInputError(f"{file}:{start_line}: KafkaTopic without metadata.name")
    cfg_node = spec.get("config") if kind == "strimzi" else spec.get("configs", spec.get("config"))
    return TopicDef(
        name=name, file=file, line=_line(name_node), anchors=(start_line, _line(name_node)),
        partitions=_int_field(spec.get("partitions"), "spec.partitions", file),
        replication_factor=_int_field(spec.get("replicas"), "spec.replicas", file),
        configs=_configs(cfg_node, file), kind=kind,
    )




def read_topics(path: Path, file: str) -> tuple[list[TopicDef], str]:
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise LintInputError(f"{file}: not UTF-8 text ({e.reason})") from None
    except OSError as e:
        raise LintInputError(f"{file}: unreadable ({e.strerror or e})") from None
    global _FILE
    _FILE = file
    try:
        docs = list(yaml.compose_all(text, Loader=_yaml_loader()))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 1
        what = " ".join(str(e.problem or e.context or "syntax error").split())
        raise LintInputError(f"{file}:{line}: not valid YAML: {what}") from None
    except yaml.YAMLError as e:
        raise LintInputError(f"{file}:1: not valid YAML: {' '.join(str(e).split())}") from None
    topics: list[TopicDef] = []
    for doc in docs:
        if doc is None:
            continue
        if isinstance(doc, yaml.SequenceNode):
            topics.extend(_topic_from_item(item, file, _line(item)) for item in doc.value)
            continue
        m = _mapping(doc)
        if m is None:
            continue
        api = str(_scalar(m.get("apiVersion")) or "")
        kind = str(_scalar(m.get("kind")) or "")
        if api.startswith("kafka.strimzi.io/") and kind == "KafkaTopic":
            topics.append(_topic_from_resource(m, file, _line(doc), "strimzi"))
        elif api.startswith("kafka.jikkou.io/") and kind == "KafkaTopic":
            topics.append(_topic_from_resource(m, file, _line(doc), "jikkou"))
        elif api.startswith("kafka.jikkou.io/") and kind == "KafkaTopicList":
            items = m.get("items")
            for item in (items.value if isinstance(items, yaml.SequenceNode) else []):
                im = _mapping(item)
                if im is not None:
                    topics.append(_topic_from_resource(im, file, _line(item), "jikkou"))
        elif "topics" in m and isinstance(m["topics"], yaml.SequenceNode):
            topics.extend(_topic_from_item(item, file, _line(item)) for item in m["topics"].value)
        # anything else (another Kubernetes resource, an unrelated mapping) is not ours
    return topics, text


# --- everything ------------------------------------------------------------------------------


def expand(paths) -> list[Path]:
    """Files to lint: the given files, and the *.properties / *.yaml / *.yml inside given
    directories (recursively, sorted)."""
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out.extend(sorted(f for f in path.rglob("*") if f.is_file()
                              and f.suffix.lower() in PROPERTIES_SUFFIXES + YAML_SUFFIXES))
        elif path.exists():
            out.append(path)
        else:
            raise LintInputError(f"{path}: no such file")
    return out


def read_inputs(paths) -> LintInputs:
    inputs = LintInputs()
    files = expand(paths)
    if not files:
        raise LintInputError("lint: no files to lint (give server.properties or topic YAML files)")
    undeclared: list[BrokerFile] = []
    by_id: dict[int, str] = {}
    for path in files:
        file = str(path)
        suffix = path.suffix.lower()
        inputs.files.append(file)
        if suffix in YAML_SUFFIXES:
            topics, text = read_topics(path, file)
            inputs.topics.extend(topics)
            inputs.suppressions.extend(find_suppressions(text, file, yaml_file=True))
        elif suffix in PROPERTIES_SUFFIXES:
            entries, text = read_properties(path, file)
            bid = _broker_id(entries, file)
            broker = BrokerFile(file, bid if bid is not None else -1, entries, bid is not None)
            if bid is not None:
                if bid in by_id:
                    raise LintInputError(f"{file}:{entries.get('broker.id', entries.get('node.id'))[1]}: "
                                         f"broker id {bid} is also declared by {by_id[bid]}")
                by_id[bid] = file
            else:
                undeclared.append(broker)
            inputs.brokers.append(broker)
            inputs.suppressions.extend(find_suppressions(text, file, yaml_file=False))
        else:
            raise LintInputError(f"{file}: unsupported file type '{path.suffix}' "
                                 f"(lint reads {', '.join(PROPERTIES_SUFFIXES + YAML_SUFFIXES)})")
    # A template without broker.id (set at deploy time) still gets linted under an id of its own.
    next_id = max(by_id, default=0) + 1
    for broker in undeclared:
        broker.broker_id = next_id
        next_id += 1
    return inputs
