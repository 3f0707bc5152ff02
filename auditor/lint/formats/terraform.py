"""Terraform (``*.tf``, ``*.hcl``, and the JSON syntax ``*.tf.json``): the Kafka resources of
the kinds table (auditor/lint/formats/_tf_kinds.py: Kafka topics of every provider, MSK,
Aiven, Confluent Cloud and Google Cloud configurations and clusters), and ``module`` calls.

Each resource is read through :class:`HclBody`, every value at its own line: in a heredoc
(``server_properties = <<EOT``) each key at its line, in a map written out each key at its
line. A resource made by ``for_each`` or ``count`` is read once per instance when the
collection evaluates (``for_each = jsondecode(file("topics.json"))``: each topic at its
resource's lines, named ``TYPE.NAME["KEY"]``); otherwise it is reported as not evaluated.

Module calls: a module whose source names MSK or Kafka, passing ``server_properties`` /
``configuration_server_properties`` as a map, is a broker configuration (with its
``number_of_broker_nodes``, instance type and client subnets). An input named after a Kafka
key (``min_insync_replicas = 2``, ``kafka_custom_config_unclean_leader_election_enable``) is
reported as not judged: what a module does with an input is in the module's code.

Expressions are evaluated statically (auditor/lint/formats/_hcl.py): a variable's
``default`` from any ``.tf``/``.tf.json`` of the same directory, a ``.tfvars`` file named on
the command line or loaded by Terraform itself (``terraform.tfvars``, ``*.auto.tfvars``),
locals, ``path.module``, ``file()`` inside the directories given to lint, ``jsondecode``,
``for`` expressions. A value that stays an expression is reported as not evaluated, by
resource, attribute, expression and line, with the rules that needed it; a Kafka key set to it
is unknown to those rules (never Kafka's default).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from auditor import safe_io
from auditor.collectors.files import BROKER, parse_properties
from auditor.lint.formats import _hcl
from auditor.lint.formats._msk import inherit_defaults
from auditor.lint.formats._tf_kinds import KINDS, Out, finish
from auditor.lint.key_rules import rules_reading
from auditor.lint.model import (
    INT32_MAX,
    INT32_MIN,
    BrokerFile,
    ClusterFacts,
    FileRows,
    LintInputError,
    Source,
)
from auditor.lint.suppressions import find_suppressions
from auditor.lint.versions import declare_msk_mode, declare_version

NAME = "terraform"
UNIT = "file"
SUFFIXES = (".tf", ".hcl")
JSON_SUFFIX = ".tf.json"
VARS_SUFFIX = ".tfvars"
MAX_BYTES = 16 * 1024 * 1024
BROKER_RULES = "the broker rules (REP005, THR003-THR006, CFG001, CFG002, CFG004)"
_MODULE_PROPERTIES = ("server_properties", "configuration_server_properties")
# Worth parsing: a resource kind of the table, an MSK module's argument, a Kafka key.
_KAFKA = re.compile(r"kafka|msk|server_properties", re.IGNORECASE)
_MODULE_CLUSTER = ("number_of_broker_nodes", "broker_node_instance_type", "broker_node_client_subnets")
_RESOURCE_TYPE = re.compile(r'resource\s+"?([A-Za-z0-9_]+)"?|"([a-z0-9]+_[a-z0-9_]*kafka[a-z0-9_]*)"\s*:')
MAX_INSTANCES = 10_000  # for_each/count instances read per resource


def recognise(src: Source) -> bool:
    name = src.path.name.lower()
    return src.suffix in SUFFIXES or name.endswith((JSON_SUFFIX, ".tf.tpl"))


def is_json(path: Path) -> bool:
    return path.name.lower().endswith(JSON_SUFFIX)


@dataclass
class Session:
    """What a lint run knows about Terraform beyond one file: the values of .tfvars files
    named on the command line, each directory's scope (read once), and the directories
    ``file()`` may read in (those given to lint)."""

    tfvars: dict[str, object] = field(default_factory=dict)
    tfvars_files: list[str] = field(default_factory=list)
    scopes: dict[Path, _hcl.Scope] = field(default_factory=dict)
    parsed: dict[str, list[_hcl.Block]] = field(default_factory=dict)
    roots: tuple[str, ...] = ()
    # Directories a Terraform file of the run calls as a local module (dir -> "module.X of FILE"):
    # their files are read with the values the caller passes, not on their own.
    called: dict[Path, str] = field(default_factory=dict)


_MODULE_CALL = re.compile(r'module\s+"([^"]+)"\s*\{[^{}]*?\bsource\s*=\s*"(\.\.?/[^"]*)"', re.DOTALL)
MAX_MODULE_DEPTH = 8


def local_modules(files) -> dict[Path, str]:
    """The directories the given Terraform files call as local modules (``source = "./x"``):
    resolved directory -> "module.NAME of FILE" (the first caller in file order)."""
    out: dict[Path, str] = {}
    for path in files:
        path = Path(path)
        if path.suffix.lower() != ".tf" or not path.is_file():
            continue
        try:
            text = safe_io.read_text(path, limit=MAX_BYTES)
        except (OSError, UnicodeDecodeError):
            continue  # its own read says what is wrong with it
        if "module" not in text:
            continue
        for m in _MODULE_CALL.finditer(text):
            target = (path.parent / m.group(2)).resolve()
            if target.is_dir() and target != path.parent.resolve():
                out.setdefault(target, f"module.{m.group(1)} of {path}")
    return out


def read_text(path: Path, file: str) -> str:
    try:
        return safe_io.read_text(path, limit=MAX_BYTES)
    except safe_io.FileRefused as e:
        raise LintInputError(str(e).replace(str(path), file, 1)) from None
    except UnicodeDecodeError as e:
        raise LintInputError(f"{file}: not UTF-8 text ({e.reason})") from None
    except OSError as e:
        raise LintInputError(f"{file}: unreadable ({e.strerror or e})") from None


def parse_file(text: str, file: str, json_syntax: bool = False) -> list[_hcl.Block]:
    if json_syntax:
        return _parse_json(text, file)
    try:
        return _hcl.parse(text)
    except _hcl.HclError as e:
        raise LintInputError(f"{file}:{e.line}: not valid HCL: {e.message}") from None


def _parse_json(text: str, file: str) -> list[_hcl.Block]:
    from auditor import safe_yaml
    from auditor.lint.yaml_fields import YamlFile

    try:
        docs = safe_yaml.compose_all(text, file)
    except safe_yaml.YAMLInputError as e:
        raise LintInputError(f"{e} (not valid JSON)") from None
    docs = [d for d in docs if d is not None]
    if len(docs) != 1:
        raise LintInputError(f"{file}:1: not valid Terraform JSON: one JSON object expected")
    try:
        return _hcl.parse_json(docs[0], YamlFile(file))
    except _hcl.HclError as e:
        raise LintInputError(f"{file}:{e.line}: not valid Terraform JSON: {e.message}") from None


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
    here = os.path.dirname(src.file) or "."
    scope = _hcl.Scope(module_dir=here, cwd=here, roots=session.roots)
    siblings = sorted(p for p in directory.iterdir() if p.is_file() and (p.suffix == ".tf" or is_json(p)))
    for path in siblings:
        file = src.file if path.resolve() == src.path.resolve() else str(path)
        if file == src.file:
            text, blocks = own_text, own_blocks
        else:
            try:
                text = read_text(path, file)
                if "variable" not in text and "locals" not in text:
                    continue  # nothing for the scope in it
                blocks = parse_file(text, file, is_json(path))
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


def _text(v) -> str:
    if isinstance(v, list):  # cleanup.policy = ["compact", "delete"]
        return ",".join(_hcl._as_text(x) for x in v)
    return _hcl._as_text(v)


def _object_elements(expr):
    """[(key tree, value tree, line)] when ``expr`` is a map written out, else None."""
    import yaml
    from lark import Tree

    if isinstance(expr, _hcl.JsonExpr):
        if not isinstance(expr.node, yaml.MappingNode):
            return None
        return [
            (_hcl.JsonExpr(k, expr.ctx), _hcl.JsonExpr(v, expr.ctx), k.start_mark.line + 1)
            for k, v in expr.node.value
        ]
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


class HclBody:
    """A resource (or a nested block) of HCL or Terraform JSON, read for the kinds table
    (_tf_kinds.Body): expressions evaluated, what cannot be reported by name and line."""

    def __init__(self, file: str, block: _hcl.Block, address: str, ev: _hcl.Evaluator, out: Out):
        self.file, self.block_, self.address, self.ev, self.out = file, block, address, ev, out
        self.line = block.line

    def has(self, attr: str) -> bool:
        return attr in self.block_.attributes

    def attr_line(self, attr: str) -> int:
        a = self.block_.attributes.get(attr)
        return a.line if a is not None else self.line

    def note(self, what: str, v: _hcl.Unevaluated, line: int, needed: str) -> None:
        consequence = f"{needed} not applied to it" if needed else "the resource is not linted"
        self.out.warn(
            v.line or line, f"{self.address} {what} = {v.describe()} is not evaluated: {consequence}"
        )

    def value(self, attr: str, needed: str):
        a = self.block_.attributes.get(attr)
        if a is None:
            return None
        v = self.ev.value(a.expr)
        if isinstance(v, _hcl.Unevaluated):
            self.note(attr, v, a.line, needed)
            return None
        return v

    def integer(self, attr: str, needed: str) -> int | None:
        v = self.value(attr, needed)
        if v is None:
            return None
        try:
            number = int(str(v).strip()) if not isinstance(v, bool | list | dict) else None
        except ValueError:
            number = None
        if number is None or not INT32_MIN <= number <= INT32_MAX:
            raise LintInputError(
                f"{self.file}:{self.attr_line(attr)}: {self.address} {attr} must be an integer, not {v!r}"[
                    :300
                ]
            )
        return number

    def text(self, attr: str, needed: str) -> str | None:
        v = self.value(attr, needed)
        return None if v is None else _text(v)

    def block(self, name: str) -> HclBody | None:
        b = self.block_.block(name)
        return HclBody(self.file, b, self.address, self.ev, self.out) if b is not None else None

    def reference(self, block: str, attr: str) -> str | None:
        b = self.block_.block(block)
        if b is None or attr not in b.attributes:
            return None
        return self.ev.source(b.attributes[attr].expr)

    def entries(self, attr: str, scope: str, underscore: bool = False):
        """A map attribute (or, with ``attr`` "", the block's own attributes: Aiven's
        ``config {}`` and ``kafka {}``) as (key -> (value, line), unevaluated key -> line)."""
        out: dict[str, tuple[str, int]] = {}
        unevaluated: dict[str, int] = {}

        def put(key: str, v, line: int, shown: str) -> None:
            key = key.replace("_", ".") if underscore else key
            if isinstance(v, _hcl.Unevaluated):
                self.note(shown, v, line, rules_reading(key, scope))
                unevaluated[key] = line
            elif v is not None:
                out[key] = (_text(v), line)

        if attr == "":
            for name, a in self.block_.attributes.items():
                put(name, self.ev.value(a.expr), a.line, name)
            return out, unevaluated
        a = self.block_.attributes.get(attr)
        if a is None:
            return out, unevaluated
        literal = _object_elements(a.expr)
        if literal is not None:
            for key_tree, val_tree, line in literal:
                key = self.ev._key(key_tree, 0)
                if isinstance(key, _hcl.Unevaluated):
                    self.note(attr, key, line, f"the rules on its {scope} configuration")
                    continue
                put(key, self.ev.value(val_tree), line, f'{attr}["{key}"]')
            return out, unevaluated
        v = self.ev.value(a.expr)
        if isinstance(v, _hcl.Unevaluated):
            self.note(attr, v, a.line, f"the rules on its {scope} configuration")
            return out, unevaluated
        if isinstance(v, str) and v.strip().startswith("{"):  # jsonencode({...}) already evaluated
            try:
                v = json.loads(v)
            except ValueError:
                pass
        if v is None:
            return out, unevaluated
        if not isinstance(v, dict):
            raise LintInputError(f"{self.file}:{a.line}: {self.address} {attr} must be a map")
        for key, value in v.items():
            put(str(key), value, a.line, f'{attr}["{key}"]')
        return out, unevaluated

    def properties(self, attr: str):
        """server_properties: a heredoc (each key at its line), a string, or a map; None when
        absent or not evaluated as a whole."""
        a = self.block_.attributes.get(attr)
        if a is None:
            return None
        heredoc = _hcl.heredoc_token(a.expr)
        if heredoc is not None:
            token, trim = heredoc
            first = token.line + 1  # the body starts on the line after <<EOT
            return self._properties_text(_hcl.heredoc_body(str(token), trim), first, a, per_line=True)
        if _object_elements(a.expr) is not None:
            return self.entries(attr, "broker")
        v = self.ev.value(a.expr)
        if isinstance(v, _hcl.Unevaluated):
            self.note(attr, v, a.line, BROKER_RULES)
            return None
        if isinstance(v, dict):
            return {str(k): (_text(val), a.line) for k, val in v.items() if val is not None}, {}
        if isinstance(v, str):
            return self._properties_text(v, a.line, a, per_line=False)
        raise LintInputError(f"{self.file}:{a.line}: {self.address} {attr} must be a string or a map")

    def _properties_text(self, body: str, first: int, a: _hcl.Attribute, per_line: bool):
        entries, problems = parse_properties(body)
        if problems:
            p = problems[0]
            at = first + p.line - 1 if per_line else a.line
            raise LintInputError(f"{self.file}:{at}: {self.address} {a.name}: {p.message}")
        out: dict[str, tuple[str, int]] = {}
        unevaluated: dict[str, int] = {}
        for e in entries:
            line = first + e.line - 1 if per_line else a.line
            if "${" in e.value or "%{" in e.value:  # a template: each value on its own
                v = self.ev.template(e.value.strip(), a.expr)
                if isinstance(v, _hcl.Unevaluated):
                    shown = _hcl.Unevaluated(e.value.strip()[:80], line, v.why)
                    self.note(f"{a.name} {e.key}", shown, line, rules_reading(e.key))
                    unevaluated[e.key] = line
                    continue
                out[e.key] = (_text(v), line)
                continue
            out[e.key] = (e.value, line)
        return out, unevaluated


def _instances(block: _hcl.Block, address: str, ev: _hcl.Evaluator, out: Out):
    """(address, evaluator) of each instance Terraform makes of a resource: one without
    ``for_each``/``count``; one per element when the collection evaluates; none (reported)
    when it does not."""
    meta = "for_each" if "for_each" in block.attributes else "count" if "count" in block.attributes else None
    if meta is None:
        return [(address, ev)]
    v = ev.value(block.attributes[meta].expr)
    if isinstance(v, _hcl.Unevaluated) and meta == "count":
        # count = var.enabled ? 1 : 0 and the like: the resource's own values are read once;
        # what depends on count.index is not evaluated
        out.warn(
            block.line,
            f"{address} is made by count = {v.describe()}, known only when Terraform runs: "
            "read as one instance",
        )
        return [(address, ev)]
    if isinstance(v, _hcl.Unevaluated):
        out.warn(
            block.line,
            f"{address} is made by {meta} = {v.describe()}, known only when Terraform runs: "
            "it is not linted (lint the plan: terraform show -json)",
        )
        return []
    if meta == "count":
        n = v if isinstance(v, int) and not isinstance(v, bool) else None
        if n is None or n < 0:
            raise LintInputError(
                f"{out.file}:{block.attributes['count'].line}: {address} count must be a whole number"
            )
        return [(f"{address}[{i}]", ev.bound(count={"index": i})) for i in range(min(n, MAX_INSTANCES))]
    if isinstance(v, dict):
        pairs = list(v.items())
    elif isinstance(v, list) and all(isinstance(x, str) for x in v):
        pairs = [(x, x) for x in dict.fromkeys(v)]
    else:
        raise LintInputError(
            f"{out.file}:{block.attributes['for_each'].line}: {address} for_each must be a map or a set of strings"
        )
    return [
        (f'{address}["{k}"]', ev.bound(each={"key": k, "value": val})) for k, val in pairs[:MAX_INSTANCES]
    ]


def _resource_types(blocks) -> list[str]:
    return sorted({b.labels[0] for b in blocks[1:] if b.type == "resource" and b.labels})


def read(src: Source) -> FileRows:
    session: Session = src.session.terraform
    text = read_text(src.path, src.file)
    if not _KAFKA.search(text):  # no Kafka resource can be in it: not parsed
        return FileRows(
            skipped=f"{src.file}: skipped: Terraform without a Kafka resource lint reads "
            "(no Kafka, MSK, Aiven, Confluent or Google Cloud Kafka resource in it)",
            nothing_kafka=True,
        )
    caller = session.called.get(src.path.parent.resolve())
    if caller is not None:
        return FileRows(
            skipped=f"{src.file}: read as part of {caller}: a module's files are linted with the values "
            "its caller passes, not on their own"
        )
    json_syntax = is_json(src.path)
    blocks = session.parsed.pop(str(src.path.resolve()), None) or parse_file(text, src.file, json_syntax)
    scope = _scope(src, session, text, blocks)
    rows = FileRows(suppressions=[] if json_syntax else find_suppressions(text, src.file, syntax="hcl"))
    out = Out(src.file, rows)
    ev = _hcl.Evaluator(scope, src.file)
    kafka_seen = False
    for block in blocks[1:]:
        if block.type == "resource" and len(block.labels) >= 2:
            rtype, rname = block.labels[0], block.labels[1]
            kind = KINDS.get(rtype)
            if kind is None:
                continue
            kafka_seen = True
            for address, iev in _instances(block, f"{rtype}.{rname}", ev, out):
                kind.read(HclBody(src.file, block, address, iev, out), out)
        elif block.type == "module" and block.labels:
            kafka_seen = _module(src, block, ev, out) or kafka_seen
    finish(out)
    if not kafka_seen:
        kafkaish = [t for t in _resource_types(blocks) if "kafka" in t or "msk" in t]
        what = (
            f"Terraform whose Kafka resources ({', '.join(kafkaish[:4])}) configure no topic, broker or "
            "cluster setting lint judges"
            if kafkaish
            else "Terraform without a Kafka resource lint reads (no Kafka, MSK, Aiven, Confluent or "
            "Google Cloud Kafka resource in it)"
        )
        rows.skipped = f"{src.file}: skipped: {what}"
        rows.nothing_kafka = not kafkaish
    return rows


# Broker keys a module input may be named after (its underscore form, alone or at the end of a
# longer name: kafka_custom_config_min_insync_replicas): the keys lint's rules judge.
def _kafka_key_of(name: str) -> str | None:
    from auditor.lint.key_rules import BROKER_KEY_RULES

    lowered = name.lower()
    for key in sorted(BROKER_KEY_RULES, key=len, reverse=True):
        flat = key.replace(".", "_")
        if lowered == flat or lowered.endswith("_" + flat):
            return key
    return None


def kafka_named(values) -> list[tuple[str, str]]:
    """(variable, Kafka key) of the names that are a Kafka key lint judges, in underscore form."""
    return [(n, k) for n in values if (k := _kafka_key_of(n)) is not None]


def _module(src: Source, block: _hcl.Block, ev: _hcl.Evaluator, out: Out, depth: int = 0) -> bool:
    """A module call. A local module (``source = "./x"`` inside what lint was given) is read
    with the values the call passes: its Kafka resources at their own files and lines. Any
    other: an MSK/Kafka module's broker configuration and cluster facts; inputs named after
    Kafka keys reported as not judged. True when it is about Kafka."""
    source = ev.value(block.attributes["source"].expr) if "source" in block.attributes else ""
    source = "" if isinstance(source, _hcl.Unevaluated) else _text(source)
    address = f"module.{block.labels[0]}"
    if source.startswith(("./", "../")):
        directory = Path(os.path.normpath(os.path.join(os.path.dirname(out.file) or ".", source)))
        if _inside(directory, ev.scope.roots) and directory.is_dir() and depth < MAX_MODULE_DEPTH:
            return _instantiate(src, block, directory, address, ev, out, depth)
    named_after = [(attr, _kafka_key_of(attr)) for attr in block.attributes]
    named_after = [(a, k) for a, k in named_after if k is not None and a not in _MODULE_PROPERTIES]
    msk_args = set(block.attributes) & set(_MODULE_PROPERTIES + _MODULE_CLUSTER)
    if not msk_args and not named_after and not any(w in source.lower() for w in ("msk", "kafka")):
        return False
    body = HclBody(src.file, block, address, ev, out)
    for attr, key in named_after:
        out.warn(
            block.attributes[attr].line,
            f"{address} input {attr} is named after Kafka's {key}, but what the module does with an input "
            f"is in its own code ({source or 'its source'}): not judged ({rules_reading(key)} not applied "
            "to it); lint the module's files with these values, or the plan (terraform show -json)",
        )
    facts = ClusterFacts(address=address, file=src.file, line=block.line)
    for attr, setter in (
        ("number_of_broker_nodes", "brokers"),
        ("number_of_nodes", "brokers"),
        ("broker_node_instance_type", "instance_type"),
        ("instance_type", "instance_type"),
        ("kafka_version", "kafka_version"),
    ):
        if attr in block.attributes:
            v = ev.value(block.attributes[attr].expr)
            if not isinstance(v, _hcl.Unevaluated) and v is not None:
                if setter == "brokers":
                    try:
                        setattr(facts, setter, int(v))
                    except (TypeError, ValueError):
                        raise LintInputError(
                            f"{src.file}:{block.attributes[attr].line}: {address} {attr} must be an integer"
                        ) from None
                elif setter == "kafka_version":
                    line = block.attributes[attr].line
                    declare_version(facts, _text(v), line=line, source=f"{address} kafka_version")
                else:
                    setattr(facts, setter, _text(v))
    for attr in ("broker_node_client_subnets", "client_subnets"):
        if attr in block.attributes:
            v = ev.value(block.attributes[attr].expr)
            if isinstance(v, list):
                facts.azs = len(v)
    msk = "msk" in source.lower() or bool(msk_args & set(_MODULE_CLUSTER))
    if msk:
        declare_msk_mode(facts)
    for attr in _MODULE_PROPERTIES:
        props = body.properties(attr) if attr in block.attributes else None
        if props is None:
            continue
        entries, unevaluated = props
        broker = BrokerFile(
            src.file,
            -1,
            entries,
            False,
            BROKER,
            group=address,
            log_dirs=(),
            brokers=facts.brokers,
            line=block.attributes[attr].line,
            unevaluated=unevaluated,
        )
        out.rows.brokers.append(broker)
        if msk:  # an MSK custom configuration: MSK's defaults for what it leaves unset
            out.rows.unevaluated.extend(
                inherit_defaults(broker, facts if facts.brokers or facts.azs else None)
            )
            if facts.brokers or facts.azs:
                broker.cluster = facts
    if facts.brokers or facts.instance_type:
        out.rows.clusters.append(facts)
    return True


def _inside(directory: Path, roots) -> bool:
    d = os.path.abspath(directory)
    return any(d == r or d.startswith(r.rstrip(os.sep) + os.sep) for r in map(os.path.abspath, roots))


_META_ARGS = ("source", "version", "count", "for_each", "providers", "depends_on")


def _instantiate(
    src: Source, block: _hcl.Block, directory: Path, address: str, ev: _hcl.Evaluator, out: Out, depth: int
) -> bool:
    """Read a local module's files as Terraform would for this call: its variables are the
    call's inputs (evaluated in the caller), else their defaults; each resource of the kinds
    table at its own file and line, named ``module.NAME.TYPE.NAME``. True when the module
    holds a Kafka resource."""
    scope = _hcl.Scope(
        module_dir=str(directory), cwd=ev.scope.cwd or ev.scope.module_dir, roots=ev.scope.roots
    )
    given: dict[str, object] = {}
    for name, attr in block.attributes.items():
        if name in _META_ARGS:
            continue
        v = ev.value(attr.expr)
        if isinstance(v, _hcl.Unevaluated):
            scope.why[name] = f"{address} input {name} = {v.describe()} is not evaluated"
        else:
            given[name] = v
    scope.variables.update(given)  # (a module's variables.tf may be outside what lint was given)
    files = sorted(p for p in directory.iterdir() if p.is_file() and (p.suffix == ".tf" or is_json(p)))
    parsed = []
    for path in files:
        file = str(path)
        try:
            text = read_text(path, file)
            blocks = parse_file(text, file, is_json(path))
        except LintInputError as e:
            out.warn(block.line, f"{address}: its file {e} (that part of the module is not linted)")
            continue
        scope.text[file] = text
        parsed.append((file, text, blocks))
        for b in blocks[1:]:
            if b.type == "variable" and b.labels:
                name = b.labels[0]
                default = b.attributes.get("default")
                value = _hcl.Evaluator(scope, file).value(default.expr) if default is not None else None
                if name in given:
                    scope.variables[name] = given[name]
                elif default is not None and not isinstance(value, _hcl.Unevaluated):
                    scope.variables[name] = value
                elif name not in scope.why:
                    scope.why[name] = f"{address} passes no {name} and var.{name} has no default"
                    scope.undefined.add(name)
            elif b.type == "locals":
                for name, attr in b.attributes.items():
                    scope.locals[name] = attr
                    scope.local_files[name] = file
    kafka = False
    for file, text, blocks in parsed:
        inner = Out(file, out.rows.__class__(), kind=out.kind)
        if not is_json(Path(file)):
            inner.rows.suppressions = find_suppressions(text, file, syntax="hcl")
        mev = _hcl.Evaluator(scope, file)
        for b in blocks[1:]:
            if b.type == "resource" and len(b.labels) >= 2:
                kind = KINDS.get(b.labels[0])
                if kind is None:
                    continue
                kafka = True
                for name, iev in _instances(b, f"{address}.{b.labels[0]}.{b.labels[1]}", mev, inner):
                    kind.read(HclBody(file, b, name, iev, inner), inner)
            elif b.type == "module" and b.labels:
                kafka = _module(src, b, mev, inner, depth + 1) or kafka
        finish(inner)
        _merge_rows(out.rows, inner.rows)
    return kafka


def _merge_rows(into: FileRows, rows: FileRows) -> None:
    for name in ("brokers", "topics", "clusters", "unevaluated", "refusals", "notes", "suppressions"):
        getattr(into, name).extend(getattr(rows, name))
