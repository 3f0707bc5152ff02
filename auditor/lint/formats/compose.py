"""Docker Compose files: the Kafka brokers their services run, by each image's convention.

Recognised by content: a YAML mapping with ``services:`` whose services have ``image:``,
``build:``, ``environment:`` or ``env_file:``. Each service whose image is a Kafka broker image
(auditor/lint/formats/_images.py: Confluent cp-kafka/cp-server, apache/kafka, Bitnami,
wurstmeister) is read as its image reads its environment:

- ``environment:`` as a map (``KEY: value``) or a list (``- KEY=value``), over the ``env_file:``
  entries (a path or a list, each resolved against the compose file's directory, read only
  inside the directories lint was given; later files win); YAML anchors and ``<<:`` merges, and
  ``extends:`` of a service of the same file;
- values interpolated as Compose does (formats/_envfiles.py) with the ``.env`` file beside the
  compose file; a variable that is not set and has no default leaves the value not evaluated
  (a warning naming it), never replaced by a default;
- each variable -> the broker key of the image's convention, at the line of its entry; keys
  the environment leaves unset get the values the image itself gives them (Bitnami and
  wurstmeister keep the stock server.properties: offsets and transaction-state topics with one
  replica), located at the service's ``image:`` line; wurstmeister's ``KAFKA_CREATE_TOPICS``
  gives topics.

The file is one cluster. Its broker count is its broker services (``deploy.replicas`` /
``scale`` counted): a KRaft controller-only service (``process.roles=controller``) runs no
partitions and is not a broker, a combined node is. The Kafka version is the lowest its brokers'
image tags imply (cp-kafka 7.2.1 -> 3.2, Confluent's interoperability table). A service whose
image lint does not know but whose environment looks like a broker's is a warning naming it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from auditor import safe_io
from auditor.collectors.files import BROKER
from auditor.lint.formats import _envfiles, _images
from auditor.lint.formats.properties import broker_id
from auditor.lint.model import BrokerFile, ClusterFacts, FileRows, LintInputError, Source, TopicDef
from auditor.lint.suppressions import find_suppressions
from auditor.lint.yaml_fields import YamlFile, line, mapping, source_documents

NAME = "compose"
UNIT = "file"
SUFFIXES = (".yaml", ".yml")
MAX_ENV_FILE_BYTES = 1024 * 1024

_SERVICES = re.compile(r"^services\s*:", re.MULTILINE)
_SERVICE_KEYS = re.compile(r"^[ \t]+(image|build|environment|env_file)\s*:", re.MULTILINE)
# Variables only a Kafka broker's environment has, whatever the image: a service with one of
# these and an image lint does not know is named in a warning rather than passed over.
_BROKER_MARKERS = re.compile(
    r"^KAFKA_(CFG_\w+|BROKER_ID|NODE_ID|ZOOKEEPER_CONNECT|ADVERTISED_LISTENERS|ADVERTISED_HOST_NAME|"
    r"PROCESS_ROLES|CONTROLLER_QUORUM_VOTERS|LOG_DIRS|OFFSETS_TOPIC_REPLICATION_FACTOR|MIN_INSYNC_REPLICAS|"
    r"DEFAULT_REPLICATION_FACTOR)$"
)


def recognise(src: Source) -> bool:
    if src.suffix not in SUFFIXES:
        return False
    head = src.head()
    return bool(_SERVICES.search(head) and _SERVICE_KEYS.search(head))


@dataclass
class _Env:
    value: str | None  # None: not evaluated
    line: int
    raw: str  # as written, for messages
    missing: list[str] = field(default_factory=list)
    bare: bool = False  # `- NAME` or `NAME:` without a value: Compose takes it from its own environment


@dataclass
class _Service:
    name: str
    line: int
    image: str | None = None
    image_line: int = 0
    env: dict[str, _Env] = field(default_factory=dict)
    env_line: int = 0
    replicas: int = 1
    notes: list[str] = field(default_factory=list)  # env_file problems: said only for a broker


def _merged(node) -> dict:
    """A mapping node's {key: (key node, value node)}, ``<<:`` merges applied (own keys win;
    of several merged mappings, the first wins, as YAML's merge key specifies)."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return {}
    own, merged = {}, {}
    for k, v in node.value:
        key = str(getattr(k, "value", ""))
        if key == "<<" and k.tag == "tag:yaml.org,2002:merge":
            sources = v.value if isinstance(v, yaml.SequenceNode) else [v]
            for s in sources:
                for mk, mv in _merged(s).items():
                    merged.setdefault(mk, mv)
        elif isinstance(k, yaml.ScalarNode):
            own[key] = (k, v)
    return {**merged, **own}


class _Reader:
    def __init__(self, src: Source, ctx: YamlFile, rows: FileRows):
        self.src, self.ctx, self.rows = src, ctx, rows
        self.file = src.file
        self.variables, self.dotenv = self._dotenv()

    # --- values ---------------------------------------------------------------------------

    def _dotenv(self) -> tuple[dict[str, str], str]:
        """The variables of the .env file beside the compose file (Compose reads it for
        interpolation), and how to say where unset variables were looked for."""
        if self.src.stdin:
            return {}, "standard input has no .env beside it"
        path = self.src.path.parent / ".env"
        if not path.exists():
            return {}, "no .env beside the file"
        text = self._read_beside(path, ".env", self.rows.unevaluated)
        if text is None:
            return {}, ".env not read"
        variables = {}
        for name, value, _line in _envfiles.parse_env_file(text):
            if value is not None:
                resolved, _missing = _envfiles.interpolate(value, variables)
                if resolved is not None:
                    variables[name] = resolved
        return variables, "not in .env"

    def _read_beside(self, path, what: str, notes: list[str]) -> str | None:
        """A file the compose file names (.env, env_file), read only inside the directories
        lint was given; None with a warning otherwise."""
        session = self.src.session
        if session is None or not session.may_read(path):
            notes.append(
                f"{self.file}: {what} {path} is outside the directories given to lint: not read, "
                "its variables are not evaluated"
            )
            return None
        try:
            return safe_io.read_text(path, limit=MAX_ENV_FILE_BYTES)
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as e:
            notes.append(
                f"{self.file}: {what} {path}: unreadable ({getattr(e, 'strerror', None) or e}): "
                "its variables are not evaluated"
            )
            return None

    def value(self, raw: str, where: int) -> _Env:
        value, missing = _envfiles.interpolate(raw, self.variables)
        return _Env(value, where, raw, missing)

    # --- services -------------------------------------------------------------------------

    def service(self, name: str, key_node, node, services: dict, seen: tuple = ()) -> _Service:
        fields = _merged(node)
        svc = _Service(name, line(key_node))
        base_of = fields.get("extends")
        if base_of is not None and name not in seen:
            base_node = base_of[1]
            base = self.ctx.text(base_node) if mapping(base_node) is None else None
            if base is None:
                ext = _merged(base_node)
                if "file" in ext:
                    svc.notes.append(
                        f"{self.file}:{line(base_node)}: service {name} extends a service of another file "
                        f"({self.ctx.text(ext['file'][1])}): what it inherits is not evaluated"
                    )
                base = self.ctx.text(ext["service"][1]) if "service" in ext else None
            if base in services:
                inherited = self.service(base, *services[base], services, (*seen, name))
                svc.image, svc.image_line, svc.env = (
                    inherited.image,
                    inherited.image_line,
                    dict(inherited.env),
                )
                svc.notes.extend(inherited.notes)
        if "image" in fields:
            svc.image, svc.image_line = self.ctx.text(fields["image"][1]), line(fields["image"][1])
        svc.env_line = line(fields["environment"][0]) if "environment" in fields else svc.line
        if "env_file" in fields:
            svc.env.update(self.env_files(name, fields["env_file"][1], svc.notes))
        if "environment" in fields:
            svc.env.update(self.environment(fields["environment"][1]))
        svc.replicas = self.replicas(fields)
        return svc

    def environment(self, node) -> dict[str, _Env]:
        import yaml

        out = {}
        if isinstance(node, yaml.SequenceNode):
            for item in node.value:
                text = self.ctx.text(item)
                if not text:
                    continue
                var, sep, raw = text.partition("=")
                var = var.strip()
                out[var] = self.value(raw, line(item)) if sep else _Env(None, line(item), var, bare=True)
        else:
            for var, (k, v) in _merged(node).items():
                raw = self.ctx.text(v)
                out[var] = (
                    self.value(raw, line(k)) if raw is not None else _Env(None, line(k), var, bare=True)
                )
        return out

    def env_files(self, service: str, node, notes: list[str]) -> dict[str, _Env]:
        import yaml

        items = node.value if isinstance(node, yaml.SequenceNode) else [node]
        out: dict[str, _Env] = {}
        for item in items:
            spec = _merged(item)
            path_node = spec["path"][1] if spec else item
            required = self.ctx.scalar(spec["required"][1]) is not False if "required" in spec else True
            written = self.ctx.text(path_node) or ""
            resolved, missing = _envfiles.interpolate(written, self.variables)
            where = line(path_node)
            if resolved is None or self.src.stdin:
                why = f"{', '.join(missing)} not set" if resolved is None else "relative to standard input"
                notes.append(
                    f"{self.file}:{where}: service {service} env_file {written} ({why}): not read, "
                    "its variables are not evaluated"
                )
                continue
            path = self.src.path.parent / resolved
            if not path.exists():
                if required:
                    notes.append(
                        f"{self.file}:{where}: service {service} env_file {written}: no such file: "
                        "its variables are not evaluated"
                    )
                continue
            text = self._read_beside(path, f"service {service} env_file", notes)
            if text is None:
                continue
            for var, raw, _n in _envfiles.parse_env_file(text):
                # Located at the env_file entry of the compose file: where the reviewer sees it.
                out[var] = self.value(raw, where) if raw is not None else _Env(None, where, var, bare=True)
        return out

    def replicas(self, fields: dict) -> int:
        deploy = _merged(fields["deploy"][1]) if "deploy" in fields else {}
        for node in (deploy.get("replicas", (None, None))[1], fields.get("scale", (None, None))[1]):
            if node is None:
                continue
            text = self.ctx.text(node)
            value, _missing = _envfiles.interpolate(text or "", self.variables)
            if value is not None and value.isdigit() and 0 < int(value) <= 1000:
                return int(value)
        return 1


def read(src: Source) -> FileRows:
    text, docs = source_documents(src)
    ctx = YamlFile(src.file)
    rows = FileRows(suppressions=find_suppressions(text, src.file, syntax="yaml"))
    if len(docs) != 1 or mapping(docs[0]) is None:
        raise LintInputError(f"{src.file}:1: a compose file must be one YAML mapping")
    services_node = _merged(docs[0]).get("services", (None, None))[1]
    services = _merged(services_node)
    reader = _Reader(src, ctx, rows)
    brokers, controllers, unknown, topics = [], [], [], {}
    versions: list[str] = []
    modes = set()
    for name, (key_node, node) in services.items():
        svc = reader.service(name, key_node, node, services)
        image = _images.parse_image(_literal_parts(svc.image or ""))
        conv = _images.convention(image)
        if conv is None:
            if any(_BROKER_MARKERS.match(v) for v in svc.env):
                unknown.append(svc)
            continue
        entries, topic_defs, notes = _entries(reader, svc, conv)
        roles = {r.strip() for r in entries.get("process.roles", ("", 0))[0].split(",") if r.strip()}
        if roles or "controller.quorum.voters" in entries or "controller.quorum.bootstrap.servers" in entries:
            modes.add("kraft")
        elif "zookeeper.connect" in entries:
            modes.add("zookeeper")
        if roles == {"controller"}:
            controllers.append(name)  # not a broker: nothing of it is linted, nothing to warn about
            continue
        rows.unevaluated.extend(svc.notes + notes)
        version = _version(reader, svc, conv)
        if version:
            versions.append(version)
        bid = broker_id(entries, src.file)
        brokers.append((svc, conv, entries, bid))
        for t in topic_defs:
            topics.setdefault(t.name, t)
    for svc in unknown:
        rows.unevaluated.append(
            f"{src.file}:{svc.image_line or svc.line}: service {svc.name}: image {svc.image or '(none: built here)'} "
            f"is not one whose variable convention lint knows ({_images.KNOWN_IMAGES}): its KAFKA_* variables "
            "are not linted"
        )
    if not brokers:
        if unknown:
            rows.unrecognised = (
                f"{src.file}: looks like Kafka configuration (service {unknown[0].name}) but no service runs an "
                f"image whose variable convention lint knows ({_images.KNOWN_IMAGES}): not linted"
            )
        elif controllers:
            rows.skipped = (
                f"{src.file}: skipped: KRaft controllers only ({', '.join(controllers)}), no broker service"
            )
        else:
            rows.skipped = f"{src.file}: skipped: a compose file without a Kafka broker service"
            rows.nothing_kafka = True
        return rows
    facts = ClusterFacts(
        address="compose",
        file=src.file,
        line=line(services_node) if services_node is not None else 1,
        platform="compose",
        metadata_mode=modes.pop() if len(modes) == 1 else None,
        kafka_version=min(versions, key=_version_order) if versions else None,
    )
    rows.clusters.append(facts)
    for svc, _conv, entries, bid in brokers:
        rows.brokers.append(
            BrokerFile(
                src.file,
                bid if bid is not None else -1,
                entries,
                bid is not None,
                BROKER,
                # one group per file: brokers sharing a line (an anchor's image:) get one finding there
                group=f"compose {src.file}",
                line=svc.env_line,
                cluster=facts,
                brokers=1 if bid is not None else svc.replicas,
            )
        )
    rows.topics.extend(topics.values())
    convs = sorted({conv for _s, conv, _e, _b in brokers if _images.image_defaults(conv)})
    for conv in convs:
        if conv in (_images.BITNAMI, _images.WURSTMEISTER):
            rows.notes.append(
                f"{src.file}: {_images.CONVENTION_NAMES[conv]}: keys the environment leaves unset keep the image's "
                "stock server.properties values (offsets.topic.replication.factor=1, "
                "transaction.state.log.replication.factor=1, transaction.state.log.min.isr=1, ...), located at "
                "each service's image: line"
            )
    return rows


def _literal_parts(image: str) -> str:
    """An image reference with its unset ``${...}`` parts left out, so that
    ``${REPOSITORY}/cp-server:${TAG}`` is still recognised as cp-server (its tag unknown)."""
    return re.sub(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*", "", image)


def _entries(reader: _Reader, svc: _Service, conv: str) -> tuple[dict, list[TopicDef], list[str]]:
    """The broker keys of a service: the image's own values, then its environment's; and one
    warning per value that is not evaluated."""
    entries = {k: (v, svc.image_line or svc.line) for k, v in _images.image_defaults(conv).items()}
    topics: list[TopicDef] = []
    notes: list[str] = []
    for var, env in svc.env.items():
        if conv == _images.BITNAMI and not _images.bitnami_alias_wins(var, svc.env):
            continue
        if conv == _images.WURSTMEISTER and var == "KAFKA_CREATE_TOPICS" and env.value is not None:
            topics = _create_topics(reader, svc, env)
            continue
        key = _images.broker_key(conv, var)
        if key is None:
            continue
        if env.value is None:
            why = (
                "its value comes from the environment docker compose runs in"
                if env.bare
                else f"{', '.join(env.missing)} {'is' if len(env.missing) == 1 else 'are'} not set and "
                f"{'has' if len(env.missing) == 1 else 'have'} no default, {reader.dotenv}"
            )
            notes.append(
                f"{reader.file}:{env.line}: service {svc.name} {var} = {_shown(key, env.raw)} ({key}) is not "
                f"evaluated ({why}): the rules on this key not applied to it"
            )
            entries.pop(key, None)
            continue
        entries[key] = (env.value, env.line)
    return entries, topics, notes


_REFERENCES = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*")


def _shown(key: str, raw: str) -> str:
    """A value as a warning may show it: a secret's (a key Kafka masks) only by its variables."""
    from auditor.collectors._common import is_sensitive_key

    if not is_sensitive_key(key):
        text = " ".join(raw.split())
        return text if len(text) <= 60 else text[:57] + "..."
    return " ".join(dict.fromkeys(_REFERENCES.findall(raw))) + " (the rest of a secret's value not shown)"


def _create_topics(reader: _Reader, svc: _Service, env: _Env) -> list[TopicDef]:
    separator = svc.env.get("KAFKA_CREATE_TOPICS_SEPARATOR")
    sep = separator.value if separator is not None and separator.value else ","
    out = []
    for name, partitions, replicas, policy in _images.create_topics(env.value or "", sep):
        configs = {"cleanup.policy": (policy, env.line)} if policy else {}
        out.append(
            TopicDef(name, reader.file, env.line, (env.line,), partitions, replicas, configs, kind="compose")
        )
    return out


def _version(reader: _Reader, svc: _Service, conv: str) -> str | None:
    written = svc.image or ""
    resolved, missing = _envfiles.interpolate(written, reader.variables)
    if resolved is None:
        reader.rows.unevaluated.append(
            f"{reader.file}:{svc.image_line}: service {svc.name} image {written} is not evaluated "
            f"({', '.join(missing)} not set, {reader.dotenv}): the Kafka version its tag implies is unknown"
        )
        return None
    return _images.kafka_version(_images.parse_image(resolved), conv)


def _version_order(v: str) -> tuple:
    return tuple(int(p) for p in re.findall(r"\d+", v)[:3])
