"""Reading the files a change proposes: broker properties files and topic definitions (YAML).

Every value keeps the file and line it came from, so a finding can be reported where the
reviewer can fix it. Files are read in sorted order (a file named twice is read once), so
what lint says does not depend on the order of its arguments.

**Properties files** (``*.properties``, ``*.conf``, ``*.cfg``) are told apart by their keys,
not their names (:func:`auditor.collectors.files.classify`): a broker (ZooKeeper mode or
KRaft ``process.roles=broker``) or a combined KRaft node (``broker,controller``) is linted as
a broker; a KRaft controller-only node, a client (producer, consumer, Connect, MirrorMaker),
ZooKeeper or log4j configuration is skipped with one note line (``FILE: skipped: ...``), so
a stock Kafka ``config/`` directory is one broker, not fifteen. A file with nothing
recognised (a JSON ``trogdor.conf``, a connector definition) is skipped with a note when a
directory brought it in, and is a warning (``--strict``: an error) when it was named.
A ``.conf``/``.cfg`` file from a directory that is not properties text is skipped too.

**Topic definitions**, mixed freely in multi-document YAML:

- a plain list of topics (or a mapping with a ``topics:`` list): ``name``, ``partitions``,
  ``replication_factor`` (or ``replicationFactor``), ``configs`` (or ``config``);
- Strimzi ``KafkaTopic`` (apiVersion ``kafka.strimzi.io/*``): ``metadata.name`` (or
  ``spec.topicName``), ``spec.partitions``, ``spec.replicas``, ``spec.config``;
- jikkou ``KafkaTopic`` / ``KafkaTopicList`` (apiVersion ``kafka.jikkou.io/*``):
  ``metadata.name``, ``spec.partitions``, ``spec.replicas``, ``spec.configs``; a
  ``KafkaTopicList``'s ``items``, or (the 2022 ``v1beta2`` layout) its ``spec.topics`` list
  of ``name``, ``partitions``, ``replication_factor``, ``configs``;
- topicctl topic files (``meta``/``spec``, no apiVersion): ``meta.name``,
  ``spec.partitions``, ``spec.replicationFactor``, ``spec.settings`` (a list value such as
  ``cleanup.policy: [compact, delete]`` is joined with commas) and ``spec.retentionMinutes``
  (read as ``retention.ms``, as topicctl applies it);
- kafka-gitops state files: ``topics:`` as a mapping of name to ``partitions``,
  ``replication`` (default: ``settings.topics.defaults.replication``) and ``configs``;
- JulieOps topologies (``context`` and ``projects``): each project's ``topics`` (and
  ``special_topics``), named as JulieOps names them by default: the context, the other
  top-level fields (``company``, ``env``, ``source``...) in file order, the project and the
  topic name (and its ``dataType``), joined by ``.``; the partitions and replication factor
  are the ``num.partitions`` and ``replication.factor`` entries of ``config``, the rest of
  ``config`` is the topic's configuration.

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
from dataclasses import dataclass, field
from pathlib import Path

from auditor import safe_io, safe_json
from auditor.collectors.files import (
    BROKER,
    BROKER_KINDS,
    OTHER,
    PropertiesError,
    classify,
    kind_note,
    parse_properties,
    read_text,
)
from auditor.errors import UsageError

PROPERTIES_SUFFIXES = (".properties", ".conf", ".cfg")
YAML_SUFFIXES = (".yaml", ".yml")
UNRECOGNISED = "no topic or broker definition recognised"
MAX_YAML_BYTES = 64 * 1024 * 1024
MAX_YAML_DEPTH = 100  # nested sequences/mappings: composing deeper ones recurses (libyaml: a segfault)
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1  # partitions, replication factor: int columns
MAX_ALIAS_VALUES = 100_000  # values aliases stand for, all expanded: a billion-laughs bomb is refused


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
    kind: str = BROKER  # BROKER or COMBINED (auditor.collectors.files.classify)


@dataclass
class TopicDef:
    name: str
    file: str
    line: int  # the topic's line (its name)
    anchors: tuple[int, ...]  # lines a suppression may sit on: the item or document start, the name
    partitions: int | None
    replication_factor: int | None
    configs: dict[str, tuple[str, int]] = field(default_factory=dict)  # key -> (value, line)
    kind: str = "list"  # list | strimzi | jikkou | topicctl | kafka-gitops | julieops

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def content(self) -> tuple:
        """What the definition asks for, locations aside: equal contents are one definition."""
        return (
            self.partitions,
            self.replication_factor,
            tuple(sorted((k, v) for k, (v, _line) in self.configs.items())),
        )


@dataclass
class LintInputs:
    files: list[str] = field(default_factory=list)  # the files linted (a broker or topic definitions)
    brokers: list[BrokerFile] = field(default_factory=list)
    topics: list[TopicDef] = field(default_factory=list)
    suppressions: list[Suppression] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # files read and passed over (a client config ...)
    notes: list[str] = field(default_factory=list)  # one line each: why a file was skipped
    # 'FILE: no topic or broker definition recognised ...': a warning, an error under --strict
    unrecognised: list[str] = field(default_factory=list)


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
            raise LintInputError(f'{file}:{number}: suppression names no rule: use ignore[CODE] reason="..."')
        for code in codes:
            if not _CODE.match(code):
                raise LintInputError(
                    f"{file}:{number}: suppression names '{code}', not a rule code like REP002"
                )
        r = _REASON.search(m.group(2))
        reason = (r.group(1) if r.group(1) is not None else r.group(2)).strip() if r else ""
        if not reason:
            raise LintInputError(
                f"{file}:{number}: suppression of {', '.join(codes)} needs a reason: "
                f'# kafka-audit: ignore[{codes[0]}] reason="why this is acceptable"'
            )
        out.append(Suppression(file, number, codes, reason, own_line))
    return out


# --- properties files: brokers, and what is not a broker -------------------------------------


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


def _read_properties_file(path: Path, file: str, explicit: bool, inputs: LintInputs) -> BrokerFile | None:
    """A broker (or combined KRaft node) file as a BrokerFile; anything else is noted (or, named
    on the command line with nothing recognised in it, a warning) and gives None."""
    # A .conf/.cfg that a directory brought in may be another format altogether (trogdor.conf
    # is JSON): passed over with a note. A .properties file, or a file named, must parse.
    lenient = not explicit and path.suffix.lower() != ".properties"
    try:
        safe_io.check_regular(path, limit=None)  # read_text refuses it too, as a parse problem
    except safe_io.FileRefused as e:
        raise LintInputError(f"{file}: {e.reason}") from None
    except OSError:
        pass  # read_text says it
    try:
        text = read_text(path)
    except PropertiesError as e:
        if not lenient:
            raise LintInputError(f"{file}:{max(e.line, 1)}: not a properties file: {e.message}") from None
        _skip(inputs, file, f"{kind_note(file, OTHER)} (not properties text: {e.message})")
        return None
    except OSError as e:
        raise LintInputError(f"{file}: unreadable ({e.strerror or e})") from None
    if _is_json(text):
        if explicit:
            inputs.unrecognised.append(f"{file}: {UNRECOGNISED} (a JSON document, not properties)")
        else:
            _skip(inputs, file, f"{kind_note(file, OTHER)} (a JSON document, not properties)")
        return None
    parsed, problems = parse_properties(text)
    if problems:
        if not lenient:
            raise LintInputError(
                f"{file}:{problems[0].line}: not a valid properties file: {problems[0].message}"
            )
        _skip(
            inputs,
            file,
            f"{kind_note(file, OTHER)} (not properties text: line {problems[0].line}: {problems[0].message})",
        )
        return None
    entries = {e.key: (e.value, e.line) for e in parsed}
    kind = classify({k: v for k, (v, _line) in entries.items()})
    if kind not in BROKER_KINDS:
        if kind == OTHER and explicit:
            inputs.unrecognised.append(f"{file}: {UNRECOGNISED}")
        else:
            _skip(inputs, file, kind_note(file, kind, entries.get("process.roles", (None, 0))[0]))
        return None
    bid = _broker_id(entries, file)
    inputs.files.append(file)
    inputs.suppressions.extend(find_suppressions(text, file, yaml_file=False))
    return BrokerFile(file, bid if bid is not None else -1, entries, bid is not None, kind)


def _skip(inputs: LintInputs, file: str, note: str) -> None:
    inputs.skipped.append(file)
    inputs.notes.append(note)


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


def _check_yaml_shape(text: str, file: str) -> None:
    """Refuse, from the YAML events (the parser is iterative: any depth is safe to scan), a
    document nested deeper than MAX_YAML_DEPTH and aliases that stand for more than
    MAX_ALIAS_VALUES values in all (counting what an alias of an alias expands to): composing
    the first overflows the stack, walking the second (a billion laughs) never ends."""
    if _plainly_shallow(text):
        return
    import yaml

    sizes: dict[str, int] = {}  # anchor -> how many values the anchored node holds, expanded
    stack: list[list] = []  # open collections: [anchor, values so far]
    expanded = 0
    try:
        for ev in yaml.parse(text, Loader=_yaml_loader()):
            if isinstance(ev, yaml.CollectionStartEvent):
                if len(stack) >= MAX_YAML_DEPTH:
                    raise LintInputError(
                        f"{file}:{ev.start_mark.line + 1}: nesting deeper than {MAX_YAML_DEPTH} levels: refused"
                    )
                stack.append([ev.anchor, 1])
                continue
            if isinstance(ev, yaml.CollectionEndEvent):
                anchor, size = stack.pop()
            elif isinstance(ev, yaml.ScalarEvent):
                anchor, size = ev.anchor, 1
            elif isinstance(ev, yaml.AliasEvent):
                anchor, size = None, sizes.get(ev.anchor, 1)
                expanded += size
                if expanded > MAX_ALIAS_VALUES:
                    raise LintInputError(
                        f"{file}:{ev.start_mark.line + 1}: aliases expand to more than "
                        f"{MAX_ALIAS_VALUES} values: refused"
                    )
            else:
                continue  # stream and document events
            if anchor is not None:
                sizes[anchor] = size
            if stack:
                stack[-1][1] = min(stack[-1][1] + size, 1 << 62)
    except yaml.MarkedYAMLError as e:
        # PyYAML 6.0.4's libyaml has a nesting limit of its own (1000) that its scanner hits while
        # reading ahead, before the events reach the check above (MAX_YAML_DEPTH, lower): the same
        # refusal, said the same way whichever PyYAML parses.
        if "nesting depth" not in str(e.problem or ""):
            raise
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 1
        raise LintInputError(f"{file}:{line}: nesting deeper than {MAX_YAML_DEPTH} levels: refused") from None


def _plainly_shallow(text: str) -> bool:
    """True when the text alone shows it holds no alias bomb and no nesting near
    MAX_YAML_DEPTH, so the event scan (as long as composing: lint's YAML read twice) is not
    needed. No anchor (``&``): nothing an alias can expand. Depth, bounded from above: a block
    collection nests in a more indented one, or a sequence in a mapping at the same indent
    (2 levels per column at most); on one line, a compact collection opens at each ``- ``,
    ``? `` or ``: `` (``? ? ? a`` nests three mappings without a dash or an indent), so every
    such character counts; and a flow collection opens at each bracket anywhere. Anything
    over the bound is scanned, never refused here."""
    if "&" in text:
        return False
    flows = text.count("[") + text.count("{")
    if flows >= MAX_YAML_DEPTH:
        return False
    deepest = 0
    for line in text.splitlines():
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        compact = body.count("-") + body.count("?") + body.count(":")
        deepest = max(deepest, 2 * (indent + 1) + compact + 1)
        if deepest + flows >= MAX_YAML_DEPTH:
            return False
    return True


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
    except (ValueError, OverflowError) as e:  # an int of 5000 digits, a date like 2026-02-30
        shown = node.value if len(node.value) <= 40 else node.value[:40] + "..."
        what = "more than 4300 digits" if "digits" in str(e) else " ".join(str(e).split())[:120]
        raise LintInputError(
            f"{_FILE or '?'}:{_line(node)}: value {shown!r} cannot be read ({what})"
        ) from None


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
    text = str(value).strip() if isinstance(value, str) else None
    if text is not None and len(text) > 40:  # (int() refuses 4300+ digits with a ValueError of its own)
        raise LintInputError(
            f"{file}:{_line(node)}: {what} must be an integer from {INT32_MIN} to {INT32_MAX}, "
            f"not {text[:40] + '...'!r}"
        )
    try:
        number = int(text) if text is not None else value
    except ValueError:
        raise LintInputError(f"{file}:{_line(node)}: {what} must be an integer, not {value!r}") from None
    if not INT32_MIN <= number <= INT32_MAX:  # the snapshot column is an int (Kafka's: an int32 too)
        shown = str(number) if len(str(number)) <= 40 else str(number)[:40] + "..."
        raise LintInputError(
            f"{file}:{_line(node)}: {what} {shown} is out of range "
            f"(an integer from {INT32_MIN} to {INT32_MAX})"
        )
    return number


def _config_value(node, key: str, file: str) -> str | None:
    import yaml

    if isinstance(node, yaml.SequenceNode):  # cleanup.policy: [compact, delete]
        return ",".join(_config_value(n, key, file) or "" for n in node.value)
    if isinstance(node, yaml.MappingNode):
        raise LintInputError(f"{file}:{_line(node)}: config {key} must be a value, not a mapping")
    return _text(node)


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


def _text(node) -> str | None:
    """A scalar as the tools' Java and Go readers see it as text (true, 3, 0.5); None if absent."""
    import yaml

    if node is None or not isinstance(node, yaml.ScalarNode):
        return None
    value = _scalar(node)
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _name_of(node, file: str, where_line: int, what: str) -> str:
    name = _scalar(node)
    if not isinstance(name, str | int) or isinstance(name, bool) or str(name) == "":
        raise LintInputError(f"{file}:{where_line}: {what}")
    return str(name)


def _topic_from_item(item, file: str, start_line: int, kind: str = "list") -> TopicDef:
    m = _mapping(item)
    if m is None:
        raise LintInputError(f"{file}:{_line(item)}: a topic must be a mapping with a name")
    name_node = m.get("name") or m.get("topic")
    name = _name_of(name_node, file, _line(item), "topic without a name")
    rf_node = m.get("replication_factor", m.get("replicationFactor", m.get("replicas")))
    return TopicDef(
        name=name,
        file=file,
        line=_line(name_node),
        anchors=(start_line, _line(name_node)),
        partitions=_int_field(m.get("partitions"), "partitions", file),
        replication_factor=_int_field(rf_node, "replication_factor", file),
        configs=_configs(m.get("configs", m.get("config")), file),
        kind=kind,
    )


def _topic_from_resource(doc: dict, file: str, start_line: int, kind: str) -> TopicDef | None:
    meta = _mapping(doc.get("metadata")) or {}
    spec = _mapping(doc.get("spec")) or {}
    name_node = (
        spec.get("topicName") if kind == "strimzi" and spec.get("topicName") is not None else meta.get("name")
    )
    name = _scalar(name_node)
    if not isinstance(name, str) or not name:
        raise LintInputError(f"{file}:{start_line}: KafkaTopic without metadata.name")
    cfg_node = spec.get("config") if kind == "strimzi" else spec.get("configs", spec.get("config"))
    return TopicDef(
        name=name,
        file=file,
        line=_line(name_node),
        anchors=(start_line, _line(name_node)),
        partitions=_int_field(spec.get("partitions"), "spec.partitions", file),
        replication_factor=_int_field(spec.get("replicas"), "spec.replicas", file),
        configs=_configs(cfg_node, file),
        kind=kind,
    )


# topicctl: a topic's spec has these (a cluster, ACL or user file has other specs)
_TOPICCTL_SPEC = ("partitions", "replicationFactor", "settings", "retentionMinutes", "placement")


def _topicctl_topic(m: dict, file: str, start_line: int) -> TopicDef:
    """A topicctl topic file (segmentio/topicctl pkg/config/topic.go): meta.name,
    spec.partitions, spec.replicationFactor, spec.settings, spec.retentionMinutes."""
    meta = _mapping(m["meta"]) or {}
    spec = _mapping(m["spec"]) or {}
    name_node = meta.get("name")
    name = _name_of(name_node, file, start_line, "topicctl topic without meta.name")
    configs = _configs(spec.get("settings"), file)
    minutes_node = spec.get("retentionMinutes")
    minutes = _int_field(minutes_node, "spec.retentionMinutes", file)
    if minutes and minutes > 0 and "retention.ms" not in configs:  # what topicctl applies
        configs["retention.ms"] = (str(minutes * 60 * 1000), _line(minutes_node))
    return TopicDef(
        name=name,
        file=file,
        line=_line(name_node),
        anchors=(start_line, _line(name_node)),
        partitions=_int_field(spec.get("partitions"), "spec.partitions", file),
        replication_factor=_int_field(spec.get("replicationFactor"), "spec.replicationFactor", file),
        configs=configs,
        kind="topicctl",
    )


def _gitops_topics(m: dict, file: str) -> list[TopicDef]:
    """kafka-gitops (devshawn/kafka-gitops): ``topics: {NAME: {partitions, replication,
    configs}}``; a topic without ``replication`` gets ``settings.topics.defaults.replication``."""
    import yaml

    settings = _mapping(m.get("settings")) or {}
    defaults = _mapping((_mapping(settings.get("topics")) or {}).get("defaults")) or {}
    default_rf = _int_field(defaults.get("replication"), "settings.topics.defaults.replication", file)
    out = []
    for key, value in m["topics"].value:
        if not isinstance(key, yaml.ScalarNode):
            continue
        name = _name_of(key, file, _line(key), "topic without a name")
        spec = _mapping(value) or {}  # (a topic with nothing under it: null)
        rf = _int_field(spec.get("replication"), "replication", file)
        out.append(
            TopicDef(
                name=name,
                file=file,
                line=_line(key),
                anchors=(_line(key),),
                partitions=_int_field(spec.get("partitions"), "partitions", file),
                replication_factor=rf if rf is not None else default_rf,
                configs=_configs(spec.get("configs"), file),
                kind="kafka-gitops",
            )
        )
    return out


# JulieOps: top-level fields that are not part of a topic's name (TopologyCustomDeserializer)
_JULIE_NOT_IN_NAME = ("projects", "context", "platform", "special_topics")


def _julie_topic(item, file: str, prefix: list[str]) -> TopicDef:
    m = _mapping(item)
    if m is None:
        raise LintInputError(f"{file}:{_line(item)}: a JulieOps topic must be a mapping with a name")
    name_node = m.get("name")
    short = _name_of(name_node, file, _line(item), "JulieOps topic without a name")
    data_type = _text(m.get("dataType"))
    name = ".".join([*prefix, short, *([data_type] if data_type else [])])
    configs = _configs(m.get("config"), file)
    cfg = _mapping(m.get("config")) or {}
    # Not topic configs: JulieOps takes them out (Topic.getRawConfig) and creates the topic with them.
    configs.pop("num.partitions", None)
    configs.pop("replication.factor", None)
    return TopicDef(
        name=name,
        file=file,
        line=_line(name_node),
        anchors=(_line(item), _line(name_node)),
        partitions=_int_field(cfg.get("num.partitions"), "config num.partitions", file),
        replication_factor=_int_field(cfg.get("replication.factor"), "config replication.factor", file),
        configs=configs,
        kind="julieops",
    )


def _julie_topics(doc, m: dict, file: str) -> list[TopicDef]:
    """A JulieOps topology (kafka-ops/julie): each project's topics, named by JulieOps's
    default scheme context.<other top-level fields>.project.topic[.dataType]; special_topics
    by their own name."""
    import yaml

    context = _text(m.get("context")) or ""
    others = []
    for key, value in doc.value:  # file order, as JulieOps keeps it
        k = str(key.value) if isinstance(key, yaml.ScalarNode) else None
        if k is not None and k not in _JULIE_NOT_IN_NAME:  # Jackson's asText(): null -> "null", a tree -> ""
            text = _text(value) if isinstance(value, yaml.ScalarNode) else ""
            others.append("null" if text is None else text)
    out = []
    projects = m.get("projects")
    for project in projects.value if isinstance(projects, yaml.SequenceNode) else []:
        pm = _mapping(project) or {}
        pname = _text(pm.get("name")) or ""
        topics = pm.get("topics")
        for item in topics.value if isinstance(topics, yaml.SequenceNode) else []:
            out.append(_julie_topic(item, file, [context, *others, pname]))
    special = m.get("special_topics")
    for item in special.value if isinstance(special, yaml.SequenceNode) else []:
        out.append(_julie_topic(item, file, []))
    return out


def _topic_list(node) -> bool:
    """A YAML sequence that is a plain topic list: some item is a mapping with a name."""
    import yaml

    return isinstance(node, yaml.SequenceNode) and any(
        "name" in (_mapping(i) or {}) or "topic" in (_mapping(i) or {}) for i in node.value
    )


def _describe(doc, m: dict | None) -> str:
    """A few words on a YAML document lint does not read, for the 'not recognised' warning."""
    import yaml

    if m is None:
        return "a list" if isinstance(doc, yaml.SequenceNode) else "a scalar"
    api, kind = _text(m.get("apiVersion")), _text(m.get("kind"))
    if api or kind:
        return " ".join(x for x in (api, kind) if x)
    keys = list(m)[:4]
    return (
        "top-level keys " + ", ".join(keys) + (", ..." if len(m) > 4 else "") if keys else "an empty mapping"
    )


def _doc_topics(doc, file: str) -> tuple[list[TopicDef], str | None]:
    """The topics of one YAML document, and None; or [] and what the document is when it is
    no topic format lint knows."""
    import yaml

    if isinstance(doc, yaml.SequenceNode):
        if _topic_list(doc):
            return [_topic_from_item(item, file, _line(item)) for item in doc.value], None
        return [], _describe(doc, None)
    m = _mapping(doc)
    if m is None:
        return [], _describe(doc, None)
    api = str(_scalar(m.get("apiVersion")) or "")
    kind = str(_scalar(m.get("kind")) or "")
    if api.startswith("kafka.strimzi.io/") and kind == "KafkaTopic":
        return [_topic_from_resource(m, file, _line(doc), "strimzi")], None
    if api.startswith("kafka.jikkou.io/") and kind == "KafkaTopic":
        return [_topic_from_resource(m, file, _line(doc), "jikkou")], None
    if api.startswith("kafka.jikkou.io/") and kind == "KafkaTopicList":
        topics = []
        items = m.get("items")
        for item in items.value if isinstance(items, yaml.SequenceNode) else []:
            im = _mapping(item)
            if im is not None:
                topics.append(_topic_from_resource(im, file, _line(item), "jikkou"))
        spec_topics = (_mapping(m.get("spec")) or {}).get("topics")  # the 2022 v1beta2 layout
        for item in spec_topics.value if isinstance(spec_topics, yaml.SequenceNode) else []:
            topics.append(_topic_from_item(item, file, _line(item), "jikkou"))
        return topics, None
    if not api and "context" in m and isinstance(m.get("projects"), yaml.SequenceNode):
        return _julie_topics(doc, m, file), None
    if (
        not api
        and _mapping(m.get("meta")) is not None
        and "name" in _mapping(m["meta"])
        and any(k in (_mapping(m.get("spec")) or {}) for k in _TOPICCTL_SPEC)
    ):
        return [_topicctl_topic(m, file, _line(doc))], None
    topics_node = m.get("topics")
    if (
        not api
        and isinstance(topics_node, yaml.SequenceNode)
        and (_topic_list(topics_node) or not topics_node.value)
    ):
        return [_topic_from_item(item, file, _line(item)) for item in topics_node.value], None
    if (
        not api
        and isinstance(topics_node, yaml.MappingNode)
        and all(
            _mapping(v) is not None or (isinstance(v, yaml.ScalarNode) and _scalar(v) is None)
            for _k, v in topics_node.value
        )
    ):
        return _gitops_topics(m, file), None
    # anything else (another Kubernetes resource, an unrelated mapping) is not ours
    return [], _describe(doc, m)


def read_topics(path: Path, file: str) -> tuple[list[TopicDef], str, list[str] | None]:
    """(topics, text, None) for a file with at least one document lint reads; (..., what the
    documents are) when none is a topic format lint knows (an empty file: [])."""
    import yaml

    try:
        text = safe_io.read_text(path, limit=MAX_YAML_BYTES)
    except safe_io.FileRefused as e:  # a FIFO or a device (also behind a symlink), or huge
        raise LintInputError(str(e).replace(str(path), file, 1)) from None
    except UnicodeDecodeError as e:
        raise LintInputError(f"{file}: not UTF-8 text ({e.reason})") from None
    except OSError as e:
        raise LintInputError(f"{file}: unreadable ({e.strerror or e})") from None
    global _FILE
    _FILE = file
    try:
        _check_yaml_shape(text, file)  # before composing: the composer recurses per level
        docs = list(yaml.compose_all(text, Loader=_yaml_loader()))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 1
        what = " ".join(str(e.problem or e.context or "syntax error").split())
        raise LintInputError(f"{file}:{line}: not valid YAML: {what}") from None
    except yaml.YAMLError as e:
        raise LintInputError(f"{file}:1: not valid YAML: {' '.join(str(e).split())}") from None
    topics: list[TopicDef] = []
    recognised = False
    other: list[str] = []
    for doc in docs:
        if doc is None:
            continue
        found, what = _doc_topics(doc, file)
        topics.extend(found)
        if what is None:
            recognised = True
        elif what not in other:
            other.append(what)
    return topics, text, None if recognised else other


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
        suffix = path.suffix.lower()
        if suffix in YAML_SUFFIXES:
            topics, text, other = read_topics(path, file)
            if other is not None:
                what = f" (found: {'; '.join(other)})" if other else " (no YAML document in it)"
                inputs.unrecognised.append(f"{file}: {UNRECOGNISED}{what}")
                continue
            inputs.files.append(file)
            inputs.topics.extend(topics)
            inputs.suppressions.extend(find_suppressions(text, file, yaml_file=True))
        elif suffix in PROPERTIES_SUFFIXES:
            broker = _read_properties_file(path, file, explicit, inputs)
            if broker is None:
                continue
            if broker.declared_id:
                if broker.broker_id in by_id:
                    key = "broker.id" if "broker.id" in broker.entries else "node.id"
                    raise LintInputError(
                        f"{file}:{broker.entries[key][1]}: broker id {broker.broker_id} "
                        f"is also declared by {by_id[broker.broker_id]}"
                    )
                by_id[broker.broker_id] = file
            inputs.brokers.append(broker)
        else:
            raise LintInputError(
                f"{file}: unsupported file type '{path.suffix}' "
                f"(lint reads {', '.join(PROPERTIES_SUFFIXES + YAML_SUFFIXES)})"
            )
    # A template without broker.id (set at deploy time) still gets linted under an id of its
    # own: the next free ids, in file order.
    next_id = max(by_id, default=0) + 1
    for broker in inputs.brokers:
        if not broker.declared_id:
            broker.broker_id = next_id
            next_id += 1
    return inputs
