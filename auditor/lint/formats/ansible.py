"""cp-ansible inventories (Confluent's Ansible collection, YAML inventories).

Recognised by content: a YAML inventory (groups with ``hosts:``) with a ``kafka_broker`` group.
Every host of ``kafka_broker`` (its child groups included) is a broker; its configuration is
what cp-ansible writes into server.properties (roles/variables/vars/main.yml in
confluentinc/cp-ansible: ``kafka_broker_final_properties = kafka_broker_combined_properties |
combine(kafka_broker_custom_properties)``):

- cp-ansible's own defaults (``kafka_broker_properties.defaults``: offsets and transaction-state
  topics with ``min(brokers, default_internal_replication_factor = 3)`` replicas and a min ISR of
  ``min(2, that)``, 16 I/O and 8 network threads, ``log.dirs=/var/lib/kafka/data`` ...), located at
  the ``kafka_broker`` group's line;
- then ``kafka_broker_custom_properties`` as Ansible resolves the variable for that host: the
  inventory's ``all`` vars < parent group vars < child group vars (groups of one depth in
  alphabetical order) < ``group_vars/all`` < ``group_vars/<group>`` < the inventory's host vars <
  ``host_vars/<host>`` beside the inventory (Ansible's "Understanding variable precedence" and
  "How variables are merged": docs.ansible.com/ansible/latest/playbook_guide/playbooks_variables.html#understanding-variable-precedence,
  docs.ansible.com/ansible/latest/inventory_guide/intro_inventory.html#how-variables-are-merged).
  The variable is a dictionary and Ansible's default ``hash_behaviour=replace``
  (docs.ansible.com/ansible/latest/reference_appendices/config.html#default-hash-behaviour)
  replaces it whole: a host-level ``kafka_broker_custom_properties: {broker.rack: ...}`` drops every
  key the group level set, which is said in a warning;
- ``broker_id`` (or ``node_id``) per host, else cp-ansible's position in the group + 1.

A value holding Jinja (``{{ ... }}``) is not evaluated: a warning naming it, the key left out
(as for Helm). ``kafka_broker.properties`` (the pre-5.x way) is ignored by cp-ansible, whose
role variable ``kafka_broker`` takes precedence over inventory variables: a warning says so.
The Kafka version comes from ``confluent_package_version`` (Confluent Platform -> Apache
Kafka by Confluent's interoperability table, formats/_images.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from auditor.collectors.files import BROKER
from auditor.lint.formats import _images
from auditor.lint.model import BrokerFile, ClusterFacts, FileRows, LintInputError, Source
from auditor.lint.suppressions import find_suppressions
from auditor.lint.yaml_fields import YamlFile, line, mapping, read_yaml_documents, source_documents

NAME = "cp-ansible"
UNIT = "file"
SUFFIXES = (".yaml", ".yml")
CUSTOM = "kafka_broker_custom_properties"
BROKERS = "kafka_broker"

_GROUP = re.compile(r"^(?:\s{2,})?kafka_broker\s*:\s*$", re.MULTILINE)
_HOSTS = re.compile(r"^\s+hosts\s*:", re.MULTILINE)

# roles/variables/vars/main.yml kafka_broker_properties.defaults (cp-ansible 6.2 to 8.3): the
# Apache Kafka keys; the replication ones are computed from the broker count below.
_DEFAULTS = {
    "group.initial.rebalance.delay.ms": "3000",
    "log.retention.check.interval.ms": "300000",
    "log.retention.hours": "168",
    "log.segment.bytes": "1073741824",
    "num.io.threads": "16",
    "num.network.threads": "8",
    "num.partitions": "1",
    "num.recovery.threads.per.data.dir": "2",
    "socket.receive.buffer.bytes": "102400",
    "socket.request.max.bytes": "104857600",
    "socket.send.buffer.bytes": "102400",
    "log.dirs": "/var/lib/kafka/data",
}


def recognise(src: Source) -> bool:
    if src.suffix not in SUFFIXES:
        return False
    if _var_file_kind(src) is not None:
        return True
    head = src.head()
    return bool(_GROUP.search(head) and _HOSTS.search(head))


def _var_file_kind(src: Source) -> str | None:
    """group_vars or host_vars when the file is one (``group_vars/kafka_broker.yml`` or
    ``group_vars/kafka_broker/*.yml``) that sets a cp-ansible broker variable."""
    if src.stdin:
        return None
    parents = [p.name for p in src.path.parents][:2]
    kind = next((k for k in ("group_vars", "host_vars") if k in parents), None)
    if kind is None or not re.search(r"^kafka_broker_\w+\s*:", src.head(), re.MULTILINE):
        return None
    return kind


@dataclass
class _Dict:
    """One definition of a dictionary variable: where, and its entries."""

    file: str
    line: int  # the variable's key line
    node: object
    ctx: YamlFile
    level: str  # "all vars", "group kafka_broker", "host b1", "group_vars/all.yml" ...


@dataclass
class _Inventory:
    groups: dict[str, dict] = field(default_factory=dict)  # name -> {vars, hosts, children, line, depth}
    host_vars: dict[str, dict[str, tuple]] = field(
        default_factory=dict
    )  # host -> var -> (key node, value node)


def _walk_groups(ctx: YamlFile, name: str, node, key_line: int, inv: _Inventory, depth: int, parents) -> None:
    g = inv.groups.setdefault(
        name, {"vars": {}, "hosts": [], "children": [], "line": key_line, "depth": depth, "parents": set()}
    )
    g["depth"] = max(g["depth"], depth)
    g["parents"].update(parents)
    m = mapping(node) or {}
    for k, v in getattr(node, "value", []) if m else []:
        key = str(getattr(k, "value", ""))
        if key == "vars":
            for vk, vv in getattr(v, "value", []) if mapping(v) is not None else []:
                g["vars"][str(vk.value)] = (vk, vv)
        elif key == "hosts":
            for hk, hv in getattr(v, "value", []) if mapping(v) is not None else []:
                host = str(hk.value)
                if host not in g["hosts"]:
                    g["hosts"].append(host)
                for vk, vv in getattr(hv, "value", []) if mapping(hv) is not None else []:
                    inv.host_vars.setdefault(host, {})[str(vk.value)] = (vk, vv)
        elif key == "children":
            for ck, cv in getattr(v, "value", []) if mapping(v) is not None else []:
                child = str(ck.value)
                if child not in g["children"]:
                    g["children"].append(child)
                _walk_groups(ctx, child, cv, line(ck), inv, depth + 1, {*parents, name})


def _hosts_of(inv: _Inventory, group: str, seen=()) -> list[str]:
    g = inv.groups.get(group)
    if g is None or group in seen:
        return []
    out = list(g["hosts"])
    for child in g["children"]:
        out += [h for h in _hosts_of(inv, child, (*seen, group)) if h not in out]
    return out


def _groups_of(inv: _Inventory, host: str) -> list[str]:
    """The groups a host belongs to (all included), in Ansible's merge order: by depth, then name."""
    member = [name for name in inv.groups if host in _hosts_of(inv, name)]
    if "all" not in member:
        member.append("all")
    return sorted(member, key=lambda n: (0 if n == "all" else inv.groups.get(n, {}).get("depth", 1), n))


class _VarFiles:
    """group_vars/ and host_vars/ beside the inventory (a NAME.yml file or a NAME/ directory)."""

    def __init__(self, src: Source, notes: list[str]):
        self.src, self.notes = src, notes
        self.base = None if src.stdin else src.path.parent
        self.found: dict[tuple, _Dict | None] = {}  # each file parsed once, whatever the host count

    def find(self, kind: str, name: str, var: str) -> _Dict | None:
        if (kind, name, var) not in self.found:
            self.found[(kind, name, var)] = self._find(kind, name, var)
        return self.found[(kind, name, var)]

    def _find(self, kind: str, name: str, var: str) -> _Dict | None:
        if self.base is None:
            return None
        found = None
        candidates = [self.base / kind / f"{name}{s}" for s in ("", ".yml", ".yaml")]
        directory = self.base / kind / name
        if directory.is_dir():
            candidates = sorted(p for p in directory.iterdir() if p.suffix in (".yml", ".yaml"))
        for path in candidates:
            if not path.is_file():
                continue
            session = self.src.session
            if session is None or not session.may_read(path):
                continue
            try:
                _text, docs = read_yaml_documents(path, str(path))
            except LintInputError as e:
                self.notes.append(f"{e}: its variables are not evaluated")
                continue
            ctx = YamlFile(str(path))
            for doc in docs:
                for k, v in getattr(doc, "value", []) if mapping(doc) is not None else []:
                    if str(getattr(k, "value", "")) == var:
                        found = _Dict(str(path), line(k), v, ctx, f"{kind}/{path.name}")
        return found


def _resolve(inv: _Inventory, files: _VarFiles, host: str, var: str, file: str, ctx: YamlFile) -> tuple:
    """(the definition of ``var`` Ansible uses for ``host``, the definitions it replaces)."""
    defs: list[_Dict] = []
    groups = _groups_of(inv, host)
    for g in groups:
        if var in inv.groups.get(g, {}).get("vars", {}):
            k, v = inv.groups[g]["vars"][var]
            defs.append(_Dict(file, line(k), v, ctx, f"group {g}" if g != "all" else "all vars"))
    for g in groups:
        found = files.find("group_vars", g, var)
        if found is not None:
            defs.append(found)
    if var in inv.host_vars.get(host, {}):
        k, v = inv.host_vars[host][var]
        defs.append(_Dict(file, line(k), v, ctx, f"host {host}"))
    found = files.find("host_vars", host, var)
    if found is not None:
        defs.append(found)
    return (defs[-1], defs[:-1]) if defs else (None, [])


def _host_scalar(inv: _Inventory, host: str, var: str, ctx: YamlFile):
    if var in inv.host_vars.get(host, {}):
        node = inv.host_vars[host][var][1]
        return ctx.scalar(node), line(node)
    return None, 0


def _all_var(inv: _Inventory, var: str, ctx: YamlFile) -> str | None:
    for g in ("all", *inv.groups):
        if var in inv.groups.get(g, {}).get("vars", {}):
            return ctx.text(inv.groups[g]["vars"][var][1])
    return None


def read(src: Source) -> FileRows:
    kind = _var_file_kind(src)
    if kind is not None:
        base = src.path.parent.parent if src.path.parent.name == kind else src.path.parent.parent.parent
        inventories = sorted(
            p.name
            for p in base.iterdir()
            if p.is_file() and p.suffix in SUFFIXES and recognise(Source(p, str(p), True, src.session))
        )
        where = (
            f"read with the inventory beside {kind}/ ({', '.join(inventories)})"
            if inventories
            else (f"no cp-ansible inventory beside {kind}/ in {base}: lint the inventory to lint it")
        )
        return FileRows(skipped=f"{src.file}: skipped: cp-ansible {kind} ({where})")
    text, docs = source_documents(src)
    ctx = YamlFile(src.file)
    rows = FileRows(suppressions=find_suppressions(text, src.file, syntax="yaml"))
    if len(docs) != 1 or mapping(docs[0]) is None:
        raise LintInputError(f"{src.file}:1: an Ansible inventory must be one YAML mapping of groups")
    inv = _Inventory()
    for k, v in docs[0].value:
        _walk_groups(ctx, str(k.value), v, line(k), inv, 0 if str(k.value) == "all" else 1, set())
    brokers = _hosts_of(inv, BROKERS)
    if not brokers:
        rows.skipped = f"{src.file}: skipped: an Ansible inventory without kafka_broker hosts"
        return rows
    files = _VarFiles(src, rows.unevaluated)
    internal_rf = _internal_rf(inv, ctx, len(brokers))
    group_line = inv.groups[BROKERS]["line"]
    version = _version(inv, ctx)
    facts = ClusterFacts(
        address="cp-ansible kafka_broker",
        file=src.file,
        line=group_line,
        platform="cp-ansible",
        metadata_mode="kraft"
        if "kafka_controller" in inv.groups
        else "zookeeper"
        if "zookeeper" in inv.groups
        else None,
        kafka_version=version,
    )
    rows.clusters.append(facts)
    replaced_said: set[tuple] = set()
    read_dicts: dict[tuple, dict] = {}
    for position, host in enumerate(brokers, 1):
        chosen, replaced = _resolve(inv, files, host, CUSTOM, src.file, ctx)
        for old in replaced:
            if old.node is not None and mapping(old.node) and (old.file, old.line) not in replaced_said:
                replaced_said.add((old.file, old.line))
                by = "the host's own" if chosen.level == f"host {host}" else f"the one of {chosen.level}"
                rows.unevaluated.append(
                    f"{old.file}:{old.line}: {CUSTOM} of {old.level} is replaced on host {host} by {by} "
                    f"({chosen.file}:{chosen.line}): Ansible replaces a dictionary variable whole "
                    f"(hash_behaviour=replace, its default), so its {len(mapping(old.node))} key(s) do not apply there"
                )
        file, at = (chosen.file, chosen.line) if chosen is not None else (src.file, group_line)
        entries = {k: (v, at) for k, v in _DEFAULTS.items()}
        entries["offsets.topic.replication.factor"] = (str(internal_rf), at)
        entries["transaction.state.log.replication.factor"] = (str(internal_rf), at)
        entries["transaction.state.log.min.isr"] = (str(min(2, internal_rf)), at)
        if chosen is not None:
            key = (chosen.file, chosen.line)
            if key not in read_dicts:
                read_dicts[key] = _custom(chosen, rows.unevaluated)
            entries.update(read_dicts[key])
        legacy = inv.host_vars.get(host, {}).get(BROKERS)
        if legacy is not None and "properties" in (mapping(legacy[1]) or {}):
            rows.unevaluated.append(
                f"{src.file}:{line(legacy[0])}: host {host} kafka_broker.properties is not read by cp-ansible (deprecated; "
                f"the role variable kafka_broker of roles/variables/vars/main.yml takes precedence over inventory "
                f"variables): use {CUSTOM}; not linted"
            )
        bid, declared = _broker_id(inv, host, ctx, position)
        entries.setdefault("broker.id", (str(bid), at))
        rows.brokers.append(
            BrokerFile(
                file,
                bid,
                entries,
                declared,
                BROKER,
                group=f"cp-ansible {file}:{at}",
                line=at,
                cluster=facts,
                log_dirs=None,
            )
        )
    return rows


def _custom(d: _Dict, notes: list[str]) -> dict[str, tuple[str, int]]:
    """The entries of one kafka_broker_custom_properties definition, Jinja left out (noted)."""
    import yaml

    out = {}
    if not isinstance(d.node, yaml.MappingNode):
        if d.ctx.scalar(d.node) is not None:
            notes.append(
                f"{d.file}:{d.line}: {CUSTOM} ({d.level}) = {d.ctx.text(d.node)!s:.60} is not a dictionary"
                + (
                    " (a Jinja expression): not evaluated"
                    if "{{" in (d.ctx.text(d.node) or "")
                    else ": not read"
                )
            )
        return out
    for k, v in d.node.value:
        key = str(getattr(k, "value", ""))
        if isinstance(v, yaml.ScalarNode):
            value = d.ctx.scalar(v)
            text = "None" if value is None else d.ctx.text(v)  # Jinja renders a null as None
        else:
            text = None
        if text is None or "{{" in key:
            notes.append(f"{d.file}:{line(k)}: {CUSTOM} {key} ({d.level}) is not a value: not read")
            continue
        if "{{" in text or "{%" in text:
            from auditor.collectors._common import is_sensitive_key

            shown = " ".join(text.split())[:60]
            if is_sensitive_key(key):  # the Jinja only, never the literal part of a secret
                shown = (
                    " ".join(re.findall(r"\{\{.*?\}\}|\{%.*?%\}", text))
                    + " (the rest of a secret's value not shown)"
                )
            notes.append(
                f"{d.file}:{line(k)}: {CUSTOM} {key} = {shown} ({d.level}) is a Jinja expression: "
                "not evaluated, the rules on this key not applied to it"
            )
            continue
        out[key] = (text.rstrip("\n") if v.style in ("|", ">") else text, line(k))
    return out


def _broker_id(inv: _Inventory, host: str, ctx: YamlFile, position: int) -> tuple[int, bool]:
    for var in ("node_id", "broker_id"):
        value, _where = _host_scalar(inv, host, var, ctx)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31:
            return value, True
    return position, True  # cp-ansible: groups.kafka_broker.index(inventory_hostname) + 1


def _internal_rf(inv: _Inventory, ctx: YamlFile, brokers: int) -> int:
    for var, cap in (
        ("kafka_broker_default_internal_replication_factor", None),
        ("default_internal_replication_factor", 3),
    ):
        text = _all_var(inv, var, ctx)
        if text is not None and text.strip().isdigit():
            return int(text) if cap is None else min(brokers, int(text))
    return min(brokers, 3)


def _version(inv: _Inventory, ctx: YamlFile) -> str | None:
    text = _all_var(inv, "confluent_package_version", ctx)
    if text is None:
        archive = _all_var(inv, "confluent_archive_file_source", ctx) or ""
        m = re.search(r"confluent-(\d+\.\d+\.\d+)", archive)
        text = m.group(1) if m else None
    if text is None or "{{" in text:
        return None
    return _images.kafka_version(
        _images.Image(text, "confluentinc/cp-server", text), _images.CONFLUENT_SERVER
    )
