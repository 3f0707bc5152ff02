"""Terraform (``*.tf``, HCL): Kafka topics, MSK configurations and clusters.

Read, each value at its own line:

- ``kafka_topic`` (Mongey/kafka provider): ``name``, ``partitions``, ``replication_factor``,
  ``config``;
- ``confluent_kafka_topic``: ``topic_name``, ``partitions_count``, ``config`` (no replication
  factor: Confluent Cloud sets it);
- ``aws_msk_topic``: ``name``, ``partition_count``, ``replication_factor``, ``configs``
  (usually ``jsonencode({...})``);
- ``aws_msk_configuration``: ``server_properties``, read as a server.properties (in a heredoc
  each key at its own line) and linted as a broker's configuration;
- ``aws_msk_cluster``: ``number_of_broker_nodes``, ``broker_node_group_info.instance_type``,
  ``client_subnets`` (their count is the AZ count), ``kafka_version``, ``storage_mode``,
  ``configuration_info.arn`` (the link to an ``aws_msk_configuration`` of the same files);
- a ``module`` call whose source names MSK or Kafka, passing ``server_properties`` /
  ``configuration_server_properties`` as a map: a broker's configuration too.

Expressions are evaluated statically (auditor/lint/formats/_hcl.py): a variable's
``default`` from any ``.tf`` of the same directory, a ``.tfvars`` file named on the command
line, locals, ``merge()`` of maps. A value that stays an expression is reported as not
evaluated, by resource, attribute, expression and line, with the rules that needed it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from auditor import safe_io
from auditor.collectors.files import BROKER, parse_properties
from auditor.lint.formats import _hcl
from auditor.lint.formats._msk import msk_default_brokers
from auditor.lint.model import (
    INT32_MAX,
    INT32_MIN,
    BrokerFile,
    ClusterFacts,
    FileRows,
    LintInputError,
    Source,
    TopicDef,
)
from auditor.lint.suppressions import find_suppressions
from auditor.lint.versions import declare_msk_mode, declare_version

NAME = "terraform"
UNIT = "file"
SUFFIXES = (".tf", ".hcl")
VARS_SUFFIX = ".tfvars"
MAX_BYTES = 16 * 1024 * 1024
TOPIC_RULES = "REP001-REP004"
BROKER_RULES = "the broker rules (REP005, THR003-THR006, CFG001, CFG002, CFG004)"
_MODULE_PROPERTIES = ("server_properties", "configuration_server_properties")
_KAFKA = re.compile(r"kafka|msk|server_properties", re.IGNORECASE)
_MODULE_CLUSTER = ("number_of_broker_nodes", "broker_node_instance_type", "broker_node_client_subnets")


def recognise(src: Source) -> bool:
    return src.suffix in SUFFIXES or src.path.name.endswith(".tf.tpl")


@dataclass
class Session:
    """What a lint run knows about Terraform beyond one file: the values of .tfvars files
    named on the command line, and each directory's scope (read once)."""

    tfvars: dict[str, object] = field(default_factory=dict)
    tfvars_files: list[str] = field(default_factory=list)
    scopes: dict[Path, _hcl.Scope] = field(default_factory=dict)
    parsed: dict[str, list[_hcl.Block]] = field(default_factory=dict)


def read_text(path: Path, file: str) -> str:
    try:
        return safe_io.read_text(path, limit=MAX_BYTES)
    except safe_io.FileRefused as e:
        raise LintInputError(str(e).replace(str(path), file, 1)) from None
    except UnicodeDecodeError as e:
        raise LintInputError(f"{file}: not UTF-8 text ({e.reason})") from None
    except OSError as e:
        raise LintInputError(f"{file}: unreadable ({e.strerror or e})") from None


def parse_file(text: str, file: str) -> list[_hcl.Block]:
    try:
        return _hcl.parse(text)
    except _hcl.HclError as e:
        raise LintInputError(f"{file}:{e.line}: not valid HCL: {e.message}") from None


def load_tfvars(path: Path, file: str, session: Session) -> None:
    """A .tfvars named on the command line: its values win over every variable default."""
    text = read_text(path, file)
    top = parse_file(text, file)[0]
    scope = _hcl.Scope(text={file: text})
    ev = _hcl.Evaluator(scope, file)
    for name, attr in top.attributes.items():
        value = ev.value(attr.expr)
        if isinstance(value, _hcl.Unevaluated):
            raise LintInputError(
                f"{file}:{attr.line}: {name} = {value.text}: a .tfvars value must be a literal"
            )
        session.tfvars[name] = value
    session.tfvars_files.append(file)


def is_auto_tfvars(path: Path) -> bool:
    """A variable file Terraform loads by itself from the module's directory."""
    return path.name in ("terraform.tfvars",) or path.name.endswith(".auto.tfvars")


def _scope(src: Source, session: Session, own_text: str, own_blocks) -> _hcl.Scope:
    """Variables and locals of the directory ``src`` is in (Terraform's module)."""
    directory = src.path.parent
    if directory in session.scopes:
        scope = session.scopes[directory]
        scope.text.setdefault(src.file, own_text)
        return scope
    scope = _hcl.Scope()
    siblings = sorted(p for p in directory.glob("*.tf") if p.is_file())
    for path in siblings:
        file = src.file if path.resolve() == src.path.resolve() else str(path)
        if file == src.file:
            text, blocks = own_text, own_blocks
        else:
            try:
                text = read_text(path, file)
                if "variable" not in text and "locals" not in text:
                    continue  # nothing for the scope in it
                blocks = _hcl.parse(text)
            except (LintInputError, _hcl.HclError):
                continue  # its own read says what is wrong with it
            session.parsed[str(path.resolve())] = blocks
        scope.text[file] = text
        for block in blocks[1:]:
            if block.type == "variable" and block.labels:
                name = block.labels[0]
                default = block.attributes.get("default")
                if default is not None:
                    value = _hcl.Evaluator(scope, file).value(default.expr)
                    if not isinstance(value, _hcl.Unevaluated):
                        scope.variables[name] = value
                        continue
                scope.undefined.add(name)
            elif block.type == "locals":
                for name, attr in block.attributes.items():
                    scope.locals[name] = attr
                    scope.local_files[name] = file
    scope.text.setdefault(src.file, own_text)
    # terraform.tfvars and *.auto.tfvars are loaded by Terraform itself, before -var-file ones
    # (developer.hashicorp.com/terraform/language/values/variables#variable-definition-precedence)
    for path in sorted(p for p in directory.iterdir() if is_auto_tfvars(p) and p.is_file()):
        auto = Session()
        try:
            load_tfvars(path, str(path), auto)
        except LintInputError:
            continue  # its own read says what is wrong with it
        for name, value in auto.tfvars.items():
            scope.variables[name] = value
            scope.undefined.discard(name)
    for name, value in session.tfvars.items():
        scope.variables[name] = value
        scope.undefined.discard(name)
    session.scopes[directory] = scope
    return scope


class _Reader:
    def __init__(self, src: Source, ev: _hcl.Evaluator, rows: FileRows, unevaluated: list[str]):
        self.src, self.ev, self.rows, self.unevaluated = src, ev, rows, unevaluated

    def note(self, address: str, attr: str, v: _hcl.Unevaluated, line: int, needed: str) -> None:
        consequence = f"{needed} not applied to it" if needed else "the resource is not linted"
        self.unevaluated.append(
            f"{self.src.file}:{v.line or line}: {address} {attr} = {v.describe()} is not evaluated: {consequence}"
        )

    def value(self, block: _hcl.Block, attr: str, address: str, needed: str):
        a = block.attributes.get(attr)
        if a is None:
            return None
        v = self.ev.value(a.expr)
        if isinstance(v, _hcl.Unevaluated):
            self.note(address, attr, v, a.line, needed)
            return None
        return v

    def integer(self, block: _hcl.Block, attr: str, address: str, needed: str) -> int | None:
        v = self.value(block, attr, address, needed)
        if v is None:
            return None
        line = block.attributes[attr].line
        try:
            number = int(str(v).strip()) if not isinstance(v, bool) else None
        except ValueError:
            number = None
        if number is None or not INT32_MIN <= number <= INT32_MAX:
            raise LintInputError(f"{self.src.file}:{line}: {address} {attr} must be an integer, not {v!r}")
        return number

    def configs(self, block: _hcl.Block, attr: str, address: str) -> dict[str, tuple[str, int]]:
        """A map attribute as key -> (value, line): each key at its own line when the map is
        written out, else at the attribute's line."""
        a = block.attributes.get(attr)
        if a is None:
            return {}
        out: dict[str, tuple[str, int]] = {}
        for key, value, line in self.entries(a, address):
            if value is not None:
                out[key] = (_text(value), line)
        return out

    def entries(self, a: _hcl.Attribute, address: str):
        """(key, value, line) of a map attribute; values not evaluated are reported (None)."""
        literal = _object_elements(a.expr)
        if literal is not None:
            for key_tree, val_tree, line in literal:
                key = self.ev._key(key_tree, 0)
                if isinstance(key, _hcl.Unevaluated):
                    self.note(address, a.name, key, line, "the rules on its configuration")
                    continue
                v = self.ev.value(val_tree)
                if isinstance(v, _hcl.Unevaluated):
                    self.note(address, f'{a.name}["{key}"]', v, line, "the rules on this key")
                    yield key, None, line
                else:
                    yield key, v, line
            return
        v = self.ev.value(a.expr)
        if isinstance(v, _hcl.Unevaluated):
            self.note(address, a.name, v, a.line, "the rules on its configuration")
            return
        if isinstance(v, str) and v.strip().startswith("{"):  # jsonencode({...}) already evaluated
            try:
                v = json.loads(v)
            except ValueError:
                pass
        if not isinstance(v, dict):
            if v is not None:
                raise LintInputError(f"{self.src.file}:{a.line}: {address} {a.name} must be a map")
            return
        for key, value in v.items():
            yield str(key), value, a.line


def _text(v) -> str:
    return _hcl._as_text(v)


def _object_elements(expr):
    """[(key tree, value tree, line)] when ``expr`` is a map written out, else None."""
    from lark import Tree

    node = expr
    while isinstance(node, Tree) and node.data == "expr_term" and len(node.children) == 1:
        node = node.children[0]
    if not (isinstance(node, Tree) and node.data == "object"):
        return None
    out = []
    for elem in node.children:
        if isinstance(elem, Tree) and elem.data == "object_elem":
            parts = [c for c in elem.children if isinstance(c, Tree)]
            out.append((parts[0], parts[-1], elem.meta.line))
    return out


def _properties(reader: _Reader, a: _hcl.Attribute, address: str) -> dict[str, tuple[str, int]] | None:
    """server_properties: a heredoc (each key at its line), a string, or a map."""
    file = reader.src.file
    heredoc = _hcl.heredoc_token(a.expr)
    if heredoc is not None:
        token, trim = heredoc
        body = _hcl.heredoc_body(str(token), trim)
        first = token.line + 1  # the body starts on the line after <<EOT
        entries, problems = parse_properties(body)
        if problems:
            p = problems[0]
            raise LintInputError(f"{file}:{first + p.line - 1}: {address} {a.name}: {p.message}")
        out = {}
        for e in entries:
            if "${" in e.value or "%{" in e.value:
                line = first + e.line - 1
                reader.unevaluated.append(
                    f"{file}:{line}: {address} {a.name} {e.key} = {e.value.strip()} is not evaluated: "
                    "the rules on this key not applied to it"
                )
                continue
            out[e.key] = (e.value, first + e.line - 1)
        return out
    literal = _object_elements(a.expr)
    if literal is not None:
        return reader.configs(_Wrap(a), a.name, address)
    v = reader.ev.value(a.expr)
    if isinstance(v, _hcl.Unevaluated):
        reader.note(address, a.name, v, a.line, BROKER_RULES)
        return None
    if isinstance(v, dict):
        return {str(k): (_text(val), a.line) for k, val in v.items() if val is not None}
    if isinstance(v, str):
        entries, problems = parse_properties(v)
        if problems:
            raise LintInputError(f"{file}:{a.line}: {address} {a.name}: {problems[0].message}")
        return {e.key: (e.value, a.line) for e in entries}
    raise LintInputError(f"{file}:{a.line}: {address} {a.name} must be a string or a map")


class _Wrap:
    """One attribute as a block, for _Reader.configs."""

    def __init__(self, a: _hcl.Attribute):
        self.attributes = {a.name: a}


def _topic(reader: _Reader, block: _hcl.Block, address: str, kind: str) -> TopicDef | None:
    fields = {
        "kafka_topic": ("name", "partitions", "replication_factor", "config"),
        "confluent_kafka_topic": ("topic_name", "partitions_count", None, "config"),
        "aws_msk_topic": ("name", "partition_count", "replication_factor", "configs"),
    }[kind]
    name_attr, partitions_attr, rf_attr, config_attr = fields
    a = block.attributes.get(name_attr)
    if a is None:
        raise LintInputError(f"{reader.src.file}:{block.line}: {address} has no {name_attr}")
    name = reader.ev.value(a.expr)
    if isinstance(name, _hcl.Unevaluated):
        reader.note(address, name_attr, name, a.line, "")
        return None
    partitions = reader.integer(block, partitions_attr, address, "the partition rules")
    rf = reader.integer(block, rf_attr, address, TOPIC_RULES) if rf_attr else None
    configs = reader.configs(block, config_attr, address)
    return TopicDef(
        name=_text(name),
        file=reader.src.file,
        line=a.line,
        anchors=(block.line, a.line),
        partitions=partitions,
        replication_factor=rf,
        configs=configs,
        kind="terraform",
    )


def _cluster(reader: _Reader, block: _hcl.Block, address: str) -> ClusterFacts:
    group = block.block("broker_node_group_info")
    facts = ClusterFacts(address=address, file=reader.src.file, line=block.line)
    facts.brokers = reader.integer(
        block, "number_of_broker_nodes", address, "the broker-count rules (CFG004)"
    )
    version = _opt_text(reader.value(block, "kafka_version", address, "the version-aware rules"))
    if "kafka_version" in block.attributes:
        declare_version(facts, version, line=block.attributes["kafka_version"].line, source="kafka_version")
    facts.storage_mode = _opt_text(reader.value(block, "storage_mode", address, "the storage rules"))
    if group is not None:
        facts.instance_type = _opt_text(
            reader.value(group, "instance_type", address, "the MSK size rules (MSK001, MSK002)")
        )
        subnets = reader.value(group, "client_subnets", address, "the AZ rule (REP009)")
        if isinstance(subnets, list):
            facts.azs = len(subnets)
    declare_msk_mode(facts)
    info = block.block("configuration_info")
    if info is not None and "arn" in info.attributes:
        facts.configuration = reader.ev.source(info.attributes["arn"].expr)
    return facts


def _opt_text(v) -> str | None:
    return None if v is None else _text(v)


def read(src: Source) -> FileRows:
    session: Session = src.session.terraform
    text = read_text(src.path, src.file)
    if not _KAFKA.search(text):  # no Kafka or MSK resource can be in it: not parsed
        return FileRows(
            skipped=f"{src.file}: skipped: Terraform without a Kafka or MSK resource", nothing_kafka=True
        )
    blocks = session.parsed.pop(str(src.path.resolve()), None) or parse_file(text, src.file)
    scope = _scope(src, session, text, blocks)
    rows = FileRows(suppressions=find_suppressions(text, src.file, syntax="hcl"))
    reader = _Reader(src, _hcl.Evaluator(scope, src.file), rows, rows.unevaluated)
    configurations: dict[str, BrokerFile] = {}
    kafka_seen = False
    for block in blocks[1:]:
        if block.type == "resource" and len(block.labels) >= 2:
            rtype, rname = block.labels[0], block.labels[1]
            address = f"{rtype}.{rname}"
            if rtype in ("kafka_topic", "confluent_kafka_topic", "aws_msk_topic"):
                kafka_seen = True
                if "for_each" in block.attributes or "count" in block.attributes:
                    meta = "for_each" if "for_each" in block.attributes else "count"
                    rows.unevaluated.append(
                        f"{src.file}:{block.line}: {address} is made by {meta} = "
                        f"{reader.ev.source(block.attributes[meta].expr)}, known only when Terraform "
                        "runs: its topics are not linted (lint the plan: terraform show -json)"
                    )
                    continue
                topic = _topic(reader, block, address, rtype)
                if topic is not None:
                    rows.topics.append(topic)
            elif rtype == "aws_msk_configuration":
                kafka_seen = True
                a = block.attributes.get("server_properties")
                entries = _properties(reader, a, address) if a is not None else None
                if entries is not None:
                    broker = BrokerFile(
                        src.file, -1, entries, False, BROKER, group=address, log_dirs=(), line=a.line
                    )
                    configurations[rname] = broker
                    rows.brokers.append(broker)
            elif rtype == "aws_msk_cluster":
                kafka_seen = True
                rows.clusters.append(_cluster(reader, block, address))
        elif block.type == "module" and block.labels:
            source = (
                _text(reader.ev.value(block.attributes["source"].expr))
                if "source" in block.attributes
                else ""
            )
            msk_args = set(block.attributes) & set(_MODULE_PROPERTIES + _MODULE_CLUSTER)
            if not msk_args and not any(w in source.lower() for w in ("msk", "kafka")):
                continue
            kafka_seen = True
            address = f"module.{block.labels[0]}"
            facts = ClusterFacts(address=address, file=src.file, line=block.line)
            for attr, setter in (
                ("number_of_broker_nodes", "brokers"),
                ("broker_node_instance_type", "instance_type"),
                ("number_of_nodes", "brokers"),
                ("broker_node_instance_type", "instance_type"),
                ("instance_type", "instance_type"),
                ("kafka_version", "kafka_version"),
            ):
                if attr in block.attributes:
                    v = reader.ev.value(block.attributes[attr].expr)
                    if not isinstance(v, _hcl.Unevaluated) and v is not None:
                        if setter == "kafka_version":
                            where = block.attributes[attr].line
                            declare_version(facts, _text(v), line=where, source=f"{address} kafka_version")
                            continue
                        setattr(facts, setter, int(v) if setter == "brokers" else _text(v))
            for attr in ("broker_node_client_subnets", "client_subnets"):
                if attr in block.attributes:
                    v = reader.ev.value(block.attributes[attr].expr)
                    if isinstance(v, list):
                        facts.azs = len(v)
            declare_msk_mode(facts)
            for attr in _MODULE_PROPERTIES:
                a = block.attributes.get(attr)
                if a is None:
                    continue
                entries = _properties(reader, a, address)
                if entries is not None:
                    rows.brokers.append(
                        BrokerFile(
                            src.file,
                            -1,
                            entries,
                            False,
                            BROKER,
                            group=address,
                            log_dirs=(),
                            brokers=facts.brokers,
                            line=a.line,
                            cluster=facts,
                        )
                    )
            if facts.brokers or facts.instance_type:
                rows.clusters.append(facts)
    _link(rows, configurations)
    if not kafka_seen:
        rows.skipped = f"{src.file}: skipped: Terraform without a Kafka or MSK resource"
        rows.nothing_kafka = True
    return rows


def _link(rows: FileRows, configurations: dict[str, BrokerFile]) -> None:
    """A cluster whose configuration_info.arn is aws_msk_configuration.NAME.arn runs that
    configuration: its broker count and facts go with it. A cluster without
    configuration_info runs MSK's default configuration (as the MSK API collector reads it)."""
    for facts in rows.clusters:
        ref = facts.configuration
        if ref is None and not facts.address.startswith("module."):
            rows.brokers.append(msk_default_brokers(facts))
        elif ref and ref.startswith("aws_msk_configuration."):
            name = ref.split(".")[1].split("[")[0]
            broker = configurations.get(name)
            if broker is not None:
                broker.cluster = facts
        elif ref:
            rows.unevaluated.append(
                f"{facts.file}:{facts.line}: {facts.address} configuration_info.arn = {ref} is no "
                "aws_msk_configuration of this file: the cluster's broker configuration is not linted with it"
            )
