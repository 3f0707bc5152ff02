"""CloudFormation templates (YAML with short-form tags such as ``!Ref``/``!Sub``, or JSON).

Recognised by content (``AWSTemplateFormatVersion``, or ``Resources`` with an ``AWS::`` type).
Both forms are composed to located nodes by the safe YAML reader (auditor/safe_yaml.py): a
tag is only a name on a node there, never constructed, so CloudFormation's tags need no
loader of their own and cannot run anything. Read:

- ``AWS::MSK::Configuration``: ``ServerProperties`` (a literal block: each key at its own
  line), linted as the brokers' configuration of the cluster using it;
- ``AWS::MSK::Cluster``: ``NumberOfBrokerNodes``, ``BrokerNodeGroupInfo.InstanceType``,
  ``BrokerNodeGroupInfo.ClientSubnets`` (their count: the AZ count), ``KafkaVersion``,
  ``StorageMode``, ``ConfigurationInfo.Arn`` (``!Ref``/``!GetAtt`` of a configuration of the
  same template links it; none: MSK's default configuration).

``Ref`` of a parameter is its ``Default``; ``!Sub`` of a literal is the literal. Any other
intrinsic function (``!If``, ``!Split``, ``Fn::ImportValue``, ``!GetAtt`` ...) is reported as
not evaluated, by function and line.
"""

from __future__ import annotations

import re

from auditor.collectors.files import BROKER, parse_properties
from auditor.lint.formats._msk import inherit_defaults, msk_default_brokers
from auditor.lint.key_rules import rules_reading
from auditor.lint.model import BrokerFile, ClusterFacts, FileRows, LintInputError, Source
from auditor.lint.suppressions import find_suppressions
from auditor.lint.versions import declare_msk_mode, declare_version
from auditor.lint.yaml_fields import YamlFile, line, mapping, read_yaml_documents

NAME = "cloudformation"
UNIT = "file"
SUFFIXES = (".yaml", ".yml", ".json", ".template")
_MARK = re.compile(r"AWSTemplateFormatVersion|[\"']?Type[\"']?\s*:\s*[\"']?AWS::")


def recognise(src: Source) -> bool:
    if src.suffix not in SUFFIXES:
        return False
    head = src.head()
    return bool(_MARK.search(head)) and "Resources" in head


class Unevaluated(Exception):
    def __init__(self, text: str, line_no: int):
        super().__init__(text)
        self.text, self.line = text, line_no


class _Template:
    def __init__(self, ctx: YamlFile, root):
        self.ctx = ctx
        m = mapping(root) or {}
        self.parameters = {k: mapping(v) or {} for k, v in (mapping(m.get("Parameters")) or {}).items()}
        self.resources = mapping(m.get("Resources")) or {}

    def value(self, node):
        """A property's value: scalars, lists, maps; Ref to a parameter with a Default; Sub of
        a literal. Unevaluated for anything else."""
        import yaml

        if node is None:
            return None
        tag = node.tag or ""
        if tag.startswith("!"):
            fn = tag[1:]
            arg = node
            if fn == "Ref" and isinstance(node, yaml.ScalarNode):
                return self._ref(node.value, node)
            if fn == "Sub" and isinstance(node, yaml.ScalarNode) and "${" not in node.value:
                return node.value
            raise Unevaluated(f"!{fn} {_shown(arg)}", line(node))
        if isinstance(node, yaml.ScalarNode):
            return self.ctx.scalar(node)
        if isinstance(node, yaml.SequenceNode):
            return [self.value(n) for n in node.value]
        m = mapping(node) or {}
        if len(m) == 1:
            (key,) = m
            if key == "Ref":
                target = self.ctx.text(m[key]) or ""
                return self._ref(target, node)
            if key == "Fn::Sub" and isinstance(m[key], yaml.ScalarNode) and "${" not in m[key].value:
                return m[key].value
            if key.startswith("Fn::"):
                raise Unevaluated(f"{key} {_shown(m[key])}", line(node))
        return {k: self.value(v) for k, v in m.items()}

    def _ref(self, name: str, node):
        p = self.parameters.get(name)
        if p is not None and "Default" in p:
            return self.ctx.scalar(p["Default"])
        raise Unevaluated(f"Ref {name}", line(node))


def _shown(node) -> str:
    import yaml

    if isinstance(node, yaml.ScalarNode):
        return node.value[:60]
    if isinstance(node, yaml.SequenceNode):
        return "[...]"
    return "{...}"


def read(src: Source) -> FileRows:
    text, docs = read_yaml_documents(src.path, src.file)
    ctx = YamlFile(src.file)
    syntax = "json" if text.lstrip().startswith("{") else "yaml"
    rows = FileRows(suppressions=find_suppressions(text, src.file, syntax="yaml") if syntax == "yaml" else [])
    if len(docs) != 1:
        rows.unrecognised = f"{src.file}: a CloudFormation template must be one document"
        return rows
    tpl = _Template(ctx, docs[0])
    configurations: dict[str, BrokerFile] = {}
    kafka_seen = False
    for logical, node in tpl.resources.items():
        r = mapping(node) or {}
        rtype = ctx.text(r.get("Type"))
        props_node = r.get("Properties")
        props = mapping(props_node) or {}
        if rtype == "AWS::MSK::Configuration":
            kafka_seen = True
            broker = _configuration(tpl, rows, logical, props, line(node))
            if broker is not None:
                configurations[logical] = broker
                rows.brokers.append(broker)
        elif rtype == "AWS::MSK::Cluster":
            kafka_seen = True
            rows.clusters.append(_cluster(tpl, rows, logical, props, line(node)))
    used = set()
    for facts in rows.clusters:
        ref = facts.configuration
        if ref is None:
            broker, warnings = msk_default_brokers(facts)
            rows.brokers.append(broker)
            rows.unevaluated.extend(warnings)
        elif ref in configurations:
            configurations[ref].cluster = facts
            used.add(ref)
            rows.unevaluated.extend(inherit_defaults(configurations[ref], facts))
    for logical, broker in configurations.items():
        if logical not in used:  # no cluster of the template uses it: MSK's smallest cluster
            rows.unevaluated.extend(inherit_defaults(broker, None))
            rows.notes.append(
                f"{broker.file}:{broker.line}: {broker.group} is used by no AWS::MSK::Cluster of this "
                "template: judged as MSK's smallest cluster (two brokers in two Availability Zones)"
            )
    if not kafka_seen:
        rows.skipped = f"{src.file}: skipped: a CloudFormation template without an MSK resource"
        rows.nothing_kafka = True
    return rows


def _note(rows: FileRows, file: str, address: str, what: str, e: Unevaluated, needed: str) -> None:
    rows.unevaluated.append(
        f"{file}:{e.line}: {address} {what} = {e.text} is not evaluated: {needed} not applied to it"
    )


def _configuration(tpl: _Template, rows: FileRows, logical: str, props: dict, at: int) -> BrokerFile | None:
    import yaml

    ctx = tpl.ctx
    node = props.get("ServerProperties")
    if node is None:
        return None
    address = f"{logical} (AWS::MSK::Configuration)"
    entries: dict[str, tuple[str, int]] = {}
    unevaluated: dict[str, int] = {}
    if isinstance(node, yaml.ScalarNode) and node.tag in ("!Sub", "tag:yaml.org,2002:str"):
        body = node.value
        first = line(node) + (1 if node.style in ("|", ">") else 0)
        parsed, problems = parse_properties(body)
        if problems:
            raise LintInputError(
                f"{ctx.file}:{first + problems[0].line - 1}: {address}: {problems[0].message}"
            )
        for e in parsed:
            where = first + e.line - 1 if node.style == "|" else line(node)
            if "${" in e.value and node.tag == "!Sub":
                rows.unevaluated.append(
                    f"{ctx.file}:{where}: {address} {e.key} = {e.value} is not evaluated (!Sub): "
                    f"{rules_reading(e.key)} not applied to it"
                )
                unevaluated[e.key] = where
                continue
            entries[e.key] = (e.value, where)
    else:
        try:
            value = tpl.value(node)
        except Unevaluated as e:
            _note(rows, ctx.file, address, "ServerProperties", e, "the broker rules")
            return None
        parsed, problems = parse_properties(str(value))
        if problems:
            raise LintInputError(f"{ctx.file}:{line(node)}: {address}: {problems[0].message}")
        entries = {e.key: (e.value, line(node)) for e in parsed}
    return BrokerFile(
        ctx.file, -1, entries, False, BROKER, group=address, line=at, log_dirs=(), unevaluated=unevaluated
    )


def _cluster(tpl: _Template, rows: FileRows, logical: str, props: dict, at: int) -> ClusterFacts:
    import yaml

    ctx = tpl.ctx
    address = f"{logical} (AWS::MSK::Cluster)"
    facts = ClusterFacts(address=address, file=ctx.file, line=at)

    def get(node, what: str, needed: str):
        if node is None:
            return None
        try:
            return tpl.value(node)
        except Unevaluated as e:
            _note(rows, ctx.file, address, what, e, needed)
            return None

    n = get(props.get("NumberOfBrokerNodes"), "NumberOfBrokerNodes", "the broker-count rules (CFG004)")
    try:
        facts.brokers = int(n) if n is not None else None
    except (TypeError, ValueError):
        raise LintInputError(
            f"{ctx.file}:{line(props['NumberOfBrokerNodes'])}: NumberOfBrokerNodes must be an integer"
        ) from None
    version = get(props.get("KafkaVersion"), "KafkaVersion", "the version-aware rules")
    if version is not None:
        declare_version(facts, str(version), line=line(props["KafkaVersion"]), source="KafkaVersion")
    mode = get(props.get("StorageMode"), "StorageMode", "the storage rules")
    facts.storage_mode = None if mode is None else str(mode)
    group = mapping(props.get("BrokerNodeGroupInfo")) or {}
    itype = get(group.get("InstanceType"), "InstanceType", "the MSK size rules (MSK001, MSK002)")
    facts.instance_type = None if itype is None else str(itype)
    subnets = group.get("ClientSubnets")
    if isinstance(subnets, yaml.SequenceNode) and not (subnets.tag or "").startswith("!"):
        facts.azs = len(subnets.value)  # the count is known even when each id is a Ref
    elif subnets is not None:
        get(subnets, "ClientSubnets", "the AZ rule (REP009)")
    declare_msk_mode(facts)
    info = props.get("ConfigurationInfo")
    if info is not None:
        im = mapping(info)
        arn = im.get("Arn") if im is not None and not (info.tag or "").startswith("!") else None
        target = None
        if arn is not None:
            am = mapping(arn) or {}
            if arn.tag == "!Ref":
                target = arn.value
            elif arn.tag == "!GetAtt":
                target = str(arn.value).split(".")[0] if isinstance(arn, yaml.ScalarNode) else None
            elif "Ref" in am:
                target = ctx.text(am["Ref"])
            elif "Fn::GetAtt" in am:
                ga = am["Fn::GetAtt"]
                target = ctx.text(ga.value[0]) if isinstance(ga, yaml.SequenceNode) and ga.value else None
        if target is not None and target in tpl.resources:
            facts.configuration = target
        else:
            facts.configuration = "?"
            shown = f"!{info.tag[1:]}" if (info.tag or "").startswith("!") else "ConfigurationInfo.Arn"
            rows.unevaluated.append(
                f"{ctx.file}:{line(info)}: {address} ConfigurationInfo ({shown}) names no "
                "AWS::MSK::Configuration of this template: the cluster's broker configuration is not linted"
            )
    return facts
