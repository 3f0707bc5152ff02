"""The fleet inventory (``fleet.yaml``): which clusters, their labels, where each source is.

``kafka-audit collect --inventory fleet.yaml --out ROOT`` reads it with :func:`load_inventory`
and collects every cluster :func:`parse_selector` selects (auditor/collectors/fleet_collect.py).

Shape (README: "Collecting a fleet: the inventory")::

    defaults:            # applied to every cluster; a cluster's own key wins (labels: merged)
      timeout: 10
      command_config: client.properties
      metrics: ["http://b-{broker_id}.example:11001/metrics"]
    clusters:
      - name: payments
        labels: {environment: prod, tier: tier-1, platform: msk}
        bootstrap_servers: b-1.payments.example:9098
        zookeeper: zk-1.example:2181/payments
        metrics: ["broker_id=1:http://b-1.example:11001/metrics", "scrapes/payments.prom"]
        broker_configs: [configs/payments/]
        broker_ids: [1, 2, 3]          # what a {broker_id} template expands over if no broker is discovered
        kafka_version: "3.6.0"        # only where it cannot be discovered
        msk: {instance_type: kafka.m5.large, az_count: 3}
        # or the AWS MSK source (auditor/collectors/msk.py): everything above is then discovered
        # msk: {cluster_arn: "arn:aws:kafka:eu-west-1:123456789012:cluster/payments/abcd-1234", region: eu-west-1}
        timeout: 10                   # seconds per network call
        deadline: 600                 # seconds for the whole cluster
    msk_discovery:       # every provisioned MSK cluster of these regions (kafka:ListClustersV2);
      regions: [eu-west-1, us-east-1]        # its MSK tags become its labels, the defaults apply
      tags: {environment: prod}              # optional: only clusters with these tags
      name_prefix: payments                  # optional: only clusters whose name starts with it

Everything is checked before anything is collected: an unknown key, a duplicate name, a
cluster with no source, a missing client.properties or broker_configs path, a label that is
not a string, a key that would hold a secret, YAML that does not parse. Each is one
:class:`InventoryError` line ``FILE:LINE: ...`` (exit 2).

Secrets only by reference: a client.properties path (``command_config``), or an environment
variable for a value (``bootstrap_servers: {env: PAYMENTS_BOOTSTRAP}``; also ``zookeeper``
and ``metrics`` entries). :meth:`ClusterEntry.resolved` (what each manifest records) keeps
the reference, never the value.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from auditor import safe_io
from auditor.collectors.urls import redact_url
from auditor.errors import UsageError
from auditor.sources import Sources

MAX_INVENTORY_BYTES = 16 * 1024 * 1024
MAX_TIMEOUT = 3600.0
TOP_KEYS = ("version", "defaults", "clusters", "msk_discovery")
CLUSTER_KEYS = (
    "name",
    "labels",
    "bootstrap_servers",
    "command_config",
    "zookeeper",
    "metrics",
    "broker_configs",
    "broker_ids",
    "kafka_version",
    "msk",
    "timeout",
    "deadline",
)
DEFAULT_KEYS = tuple(k for k in CLUSTER_KEYS if k != "name")
MSK_KEYS = ("instance_type", "az_count", "cluster_arn", "region")
MSK_DISCOVERY_KEYS = ("regions", "tags", "name_prefix")
_AWS_REGION = re.compile(r"^[a-z]{2}(?:-[a-z]+)+-\d$")
LABEL_FIELDS = ("environment", "tier", "platform")  # labels that also set the manifest's cluster fields
_SECRET_KEY = re.compile(
    r"password|passwd|secret|jaas|credential|passphrase|token|api[_.-]?key|private[_.-]?key", re.IGNORECASE
)
# Every pattern here runs on inventory text: none can backtrack (no two quantified parts that
# can match the same characters), and values are bounded in length before any runs.
MAX_VALUE_CHARS = 4096  # a URL, connect string, path, name or label value
_URL_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)
_AUTHORITY = re.compile(r"[^/@\s]*")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BROKER_PREFIX = re.compile(r"^broker_id=([0-9]+):(.*)$", re.DOTALL)
MAX_BROKER_ID = 2**31 - 1  # broker.id is a Java int; ids below 0 are generated, never configured
TEMPLATE = "{broker_id}"


def _is_zookeeper(value: str) -> bool:
    """``HOST[:PORT][,HOST[:PORT]...][/chroot]`` with no space: split, not matched (the pattern
    that said it backtracked exponentially over ``a:1,a:1,...``)."""
    hosts = value.partition("/")[0]
    return not any(c.isspace() for c in value) and all(hosts.split(","))


def _has_url_password(value: str) -> bool:
    """``scheme://user:password@...``: a ``:`` in the userinfo (the text before an ``@`` that
    comes before any ``/`` or space), found in one linear scan."""
    scheme = _URL_SCHEME.match(value)
    if not scheme:
        return False
    authority = _AUTHORITY.match(value, scheme.end())
    return value[authority.end() : authority.end() + 1] == "@" and ":" in authority.group()


class InventoryError(UsageError):
    """A bad inventory: one line naming the file, the line and the key (exit 2)."""


@dataclass
class ClusterEntry:
    name: str
    line: int
    labels: dict[str, str] = field(default_factory=dict)
    bootstrap_servers: str | None = None
    command_config: str | None = None  # an absolute path
    zookeeper: str | None = None
    metrics: list[str] = field(default_factory=list)  # plain or broker_id=N:-prefixed, paths resolved
    templates: list[str] = field(default_factory=list)  # entries holding {broker_id}
    broker_configs: list[str] = field(default_factory=list)
    broker_ids: list[int] = field(default_factory=list)
    kafka_version: str | None = None
    msk_instance_type: str | None = None
    az_count: int | None = None
    msk_cluster_arn: str | None = None  # the AWS MSK source
    msk_region: str | None = None  # None: the ARN's region
    timeout: float = 10.0
    deadline: float | None = None  # None: computed from the sources (fleet_collect.cluster_deadline)
    references: dict = field(
        default_factory=dict
    )  # key -> {"env": NAME} (or a list of them, per metrics entry)
    env_values: dict[str, str] = field(default_factory=dict, repr=False)  # resolved value -> NAME

    def _env_forms(self) -> list[tuple[str, str]]:
        """(text, NAME) for every form an environment value is written in: as given, without a
        ``broker_id=N:`` prefix (a metrics target), and redacted (a URL with a token); longest first."""
        forms: dict[str, str] = {}
        for value, name in self.env_values.items():
            m = _BROKER_PREFIX.match(value)
            for v in (value, m.group(2) if m else value):
                for form in (v, redact_url(v) or v):
                    if form.strip():
                        forms.setdefault(form, name)
        return sorted(forms.items(), key=lambda kv: -len(kv[0]))

    def hide_env_values(self, value):
        """``value`` (a string, or lists and dicts of them) with every value resolved from the
        environment replaced by ``{env: NAME}``: what collecting it wrote (a source's target, an
        error quoting a connect string or URL) may name the variable, never hold its value. A
        ``{broker_id}`` template's value is hidden in each of its expansions too."""
        if isinstance(value, str):
            for secret, name in self._env_forms():
                mark = f"{{env: {name}}}"
                if TEMPLATE in secret:
                    pattern = r"\d+".join(re.escape(part) for part in secret.split(TEMPLATE))
                    value = re.sub(pattern, lambda _m, mark=mark: mark, value)
                value = value.replace(secret, mark)
            return value
        if isinstance(value, list):
            return [self.hide_env_values(v) for v in value]
        if isinstance(value, dict):
            return {k: self.hide_env_values(v) for k, v in value.items()}
        return value

    @property
    def sources(self) -> Sources:
        """What to collect this cluster from (the templates of metrics are expanded at collection)."""
        return Sources(
            bootstrap_servers=self.bootstrap_servers,
            command_config=self.command_config,
            zookeeper=self.zookeeper,
            broker_configs=tuple(self.broker_configs),
            metrics=tuple(self.metrics),
            msk_cluster_arn=self.msk_cluster_arn,
            msk_region=self.msk_region,
            cluster_name=self.name,
            timeout=self.timeout,
        )

    @property
    def discovers_brokers(self) -> bool:
        return bool(self.bootstrap_servers or self.zookeeper or self.broker_configs)

    def cluster_fields(self) -> dict:
        """Declared manifest cluster fields (environment/tier/platform from the labels)."""
        fields = {k: self.labels[k] for k in LABEL_FIELDS if k in self.labels}
        for k in ("kafka_version", "msk_instance_type", "az_count"):
            if getattr(self, k) is not None:
                fields[k] = getattr(self, k)
        return fields

    def resolved(self, inventory_file: str) -> dict:
        """This entry as the manifest records it: paths resolved, secrets only as references
        (an environment variable's name, never its value)."""
        refs = self.references
        metrics = refs.get("metrics") or [None] * (len(self.metrics) + len(self.templates))
        plain = [r or m for m, r in zip(self.metrics, metrics[: len(self.metrics)], strict=False)]
        templ = [r or t for t, r in zip(self.templates, metrics[len(self.metrics) :], strict=False)]
        out = {
            "file": inventory_file,
            "name": self.name,
            "labels": dict(self.labels),
            "bootstrap_servers": refs.get("bootstrap_servers") or self.bootstrap_servers,
            "command_config": self.command_config,
            "zookeeper": refs.get("zookeeper") or self.zookeeper,
            # a token in a query or a user name in a URL is not refused above: never recorded either
            "metrics": [m if isinstance(m, dict) else redact_url(m) for m in plain + templ],
            "broker_configs": list(self.broker_configs),
            "broker_ids": list(self.broker_ids),
            "kafka_version": self.kafka_version,
            "msk": {
                k: v
                for k, v in (
                    ("instance_type", self.msk_instance_type),
                    ("az_count", self.az_count),
                    ("cluster_arn", self.msk_cluster_arn),
                    ("region", self.msk_region),
                )
                if v is not None
            }
            or None,
            "timeout": self.timeout,
            "deadline": self.deadline,
        }
        return {k: v for k, v in out.items() if v not in (None, [], {})}


@dataclass
class MskDiscovery:
    """The inventory's ``msk_discovery:`` block; ``template``: the defaults every discovered
    cluster takes (labels, timeout, command_config, metrics templates ...)."""

    regions: list[str]
    tags: dict[str, str]
    name_prefix: str | None
    template: ClusterEntry
    line: int


@dataclass
class Inventory:
    path: str
    clusters: list[ClusterEntry]
    msk_discovery: MskDiscovery | None = None

    def with_discovered(self, found) -> list[ClusterEntry]:
        """The clusters plus those MSK discovery found (auditor.collectors.msk.discover): named
        after the MSK cluster (``NAME-REGION`` when the name is taken), MSK tags as labels over
        the defaults' labels; a cluster the inventory already names by ARN is not added twice."""
        import dataclasses

        out = list(self.clusters)
        known_arns = {c.msk_cluster_arn for c in out if c.msk_cluster_arn}
        names = {c.name for c in out}
        for d in found:
            if d.arn in known_arns or self.msk_discovery is None:
                continue
            name = d.name if d.name not in names else f"{d.name}-{d.region}"
            names.add(name)
            known_arns.add(d.arn)
            t = self.msk_discovery.template
            labels = {**t.labels, "platform": "msk", **{str(k): str(v) for k, v in d.tags.items()}}
            out.append(
                dataclasses.replace(
                    t,
                    name=name,
                    labels=labels,
                    msk_cluster_arn=d.arn,
                    msk_region=d.region,
                    metrics=list(t.metrics),
                    templates=list(t.templates),
                    references=dict(t.references),
                )
            )
        return out


# --- reading ----------------------------------------------------------------------------------


def load_inventory(path: str | os.PathLike, *, environ: dict | None = None) -> Inventory:
    """Parse and validate an inventory file; InventoryError (``FILE:LINE: ...``) on any problem."""

    from auditor import safe_yaml

    file = str(path)
    try:
        text = safe_io.read_text(path, limit=MAX_INVENTORY_BYTES)
    except safe_io.FileRefused as e:
        raise InventoryError(str(e)) from None
    except FileNotFoundError:
        raise InventoryError(f"{file}: no such file") from None
    except UnicodeDecodeError as e:
        raise InventoryError(f"{file}: not UTF-8 text ({e.reason})") from None
    except OSError as e:
        raise InventoryError(f"{file}: unreadable ({e.strerror or e})") from None
    try:  # the depth and alias guard, then composing: located nodes
        docs = [d for d in safe_yaml.compose_all(text, file) if d is not None]
    except safe_yaml.YAMLInputError as e:
        raise InventoryError(str(e)) from None
    if len(docs) != 1:
        raise InventoryError(
            f"{file}:1: expected one YAML document (a mapping with 'clusters'), found {len(docs)}"
        )
    return _Parser(
        file, Path(os.path.abspath(file)).parent, os.environ if environ is None else environ
    ).inventory(docs[0])


class _Parser:
    def __init__(self, file: str, base: Path, environ):
        self.file, self.base, self.environ = file, base, environ

    def fail(self, node, message: str):
        raise InventoryError(f"{self.file}:{node.start_mark.line + 1}: {message}")

    # node helpers
    def mapping(self, node, what: str) -> dict:
        import yaml

        if not isinstance(node, yaml.MappingNode):
            self.fail(node, f"{what}: expected a mapping")
        out: dict = {}
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode):
                self.fail(k, f"{what}: keys must be plain strings")
            key = k.value
            if _SECRET_KEY.search(key):
                self.fail(
                    k,
                    f"{what}: key '{key}': secrets are never written in an inventory: reference a "
                    "client.properties file (command_config) or an environment variable ({env: NAME})",
                )
            if key in out:
                self.fail(k, f"{what}: key '{key}' given twice")
            out[key] = (k, v)
        return out

    def string(self, node, what: str, *, env: bool = False) -> tuple[str, dict | None]:
        """A string scalar (or, if ``env``, ``{env: NAME}``): (value, the reference or None)."""
        import yaml

        if env and isinstance(node, yaml.MappingNode):
            m = self.mapping(node, what)
            if set(m) != {"env"}:
                self.fail(node, f"{what}: expected a string or {{env: NAME}}")
            knode, vnode = m["env"]
            name, _ = self.string(vnode, f"{what}.env")
            if not _ENV_NAME.match(name):
                self.fail(vnode, f"{what}: env: '{name}' is not an environment variable name")
            value = self.environ.get(name)
            if not value:
                self.fail(vnode, f"{what}: environment variable {name} is not set")
            return value, {"env": name}
        if (
            not isinstance(node, yaml.ScalarNode)
            or node.tag != "tag:yaml.org,2002:str"
            or not node.value.strip()
        ):
            self.fail(
                node,
                f"{what}: expected a non-empty string"
                + (" (quote it)" if isinstance(node, yaml.ScalarNode) and node.value else ""),
            )
        if len(node.value) > MAX_VALUE_CHARS:
            self.fail(node, f"{what}: longer than {MAX_VALUE_CHARS} characters")
        prefixed = _BROKER_PREFIX.match(node.value)
        if _has_url_password(prefixed.group(2) if prefixed else node.value):
            self.fail(node, f"{what}: a password in a URL: give it by environment variable ({{env: NAME}})")
        return node.value, None

    def number(self, node, what: str, *, integer: bool = False) -> float | int:
        import yaml

        tags = ("tag:yaml.org,2002:int",) if integer else ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
        if not isinstance(node, yaml.ScalarNode) or node.tag not in tags:
            self.fail(node, f"{what}: expected {'an integer' if integer else 'a number'}")
        try:
            return int(node.value.replace("_", ""), 0) if integer else float(node.value.replace("_", ""))
        except ValueError:
            self.fail(node, f"{what}: expected {'an integer' if integer else 'a number'}")

    def strings(self, node, what: str, *, env: bool = False) -> list[tuple[str, dict | None, object]]:
        import yaml

        items = node.value if isinstance(node, yaml.SequenceNode) else [node]
        return [(*self.string(n, what, env=env), n) for n in items]

    def path(self, value: str) -> str:
        p = Path(os.path.expanduser(value))
        return os.path.normpath(p if p.is_absolute() else self.base / p)

    # the document
    def inventory(self, root) -> Inventory:
        top = self.mapping(root, "inventory")
        for key, (knode, _) in top.items():
            if key not in TOP_KEYS:
                self.fail(knode, f"unknown key '{key}' (expected {', '.join(TOP_KEYS)})")
        if "version" in top and self.number(top["version"][1], "version", integer=True) != 1:
            self.fail(top["version"][1], "version: only 1 is known")
        defaults = {}
        if "defaults" in top:
            defaults = self.mapping(top["defaults"][1], "defaults")
            for key, (knode, _) in defaults.items():
                if key not in DEFAULT_KEYS:
                    self.fail(knode, f"defaults: unknown key '{key}' (expected {', '.join(DEFAULT_KEYS)})")
        if "clusters" not in top and "msk_discovery" not in top:
            self.fail(root, "no 'clusters' list (nor msk_discovery)")
        import yaml

        discovery = self.msk_discovery(top["msk_discovery"][1], defaults) if "msk_discovery" in top else None
        cnode = top["clusters"][1] if "clusters" in top else yaml.SequenceNode("tag:yaml.org,2002:seq", [])
        if not isinstance(cnode, yaml.SequenceNode) or not (cnode.value or discovery):
            self.fail(cnode, "clusters: expected a non-empty list of clusters")
        clusters: list[ClusterEntry] = []
        seen: dict[str, int] = {}
        for node in cnode.value:
            entry = self.cluster(node, defaults)
            if entry.name in seen:
                self.fail(
                    self.mapping(node, "cluster")["name"][1],
                    f"name: duplicate cluster name '{entry.name}' (first at line {seen[entry.name]})",
                )
            seen[entry.name] = entry.line
            clusters.append(entry)
        return Inventory(self.file, clusters, discovery)

    def msk_discovery(self, node, defaults: dict) -> MskDiscovery:
        import yaml

        block = self.mapping(node, "msk_discovery")
        for key, (knode, _) in block.items():
            if key not in MSK_DISCOVERY_KEYS:
                self.fail(
                    knode, f"msk_discovery: unknown key '{key}' (expected {', '.join(MSK_DISCOVERY_KEYS)})"
                )
        if "regions" not in block:
            self.fail(node, "msk_discovery: no 'regions' (a list of AWS regions, e.g. [eu-west-1])")
        regions = []
        for value, _, vnode in self.strings(block["regions"][1], "msk_discovery: regions"):
            if not _AWS_REGION.match(value):
                self.fail(vnode, f"msk_discovery: regions: '{value}' is not an AWS region (e.g. eu-west-1)")
            regions.append(value)
        tags = {}
        if "tags" in block:
            for key, (_k, v) in self.mapping(block["tags"][1], "msk_discovery: tags").items():
                tags[key], _ = self.string(v, f"msk_discovery: tag '{key}'")
        prefix = (
            self.string(block["name_prefix"][1], "msk_discovery: name_prefix")[0]
            if "name_prefix" in block
            else None
        )
        # The defaults every discovered cluster takes, checked now: parsed as a cluster of its own.
        str_tag, mark = "tag:yaml.org,2002:str", node.start_mark
        scalar = lambda v: yaml.ScalarNode(str_tag, v, start_mark=mark)  # noqa: E731
        probe = yaml.MappingNode(
            "tag:yaml.org,2002:map",
            [
                (scalar("name"), scalar("msk_discovery")),
                (
                    scalar("msk"),
                    yaml.MappingNode(
                        "tag:yaml.org,2002:map",
                        [
                            (
                                scalar("cluster_arn"),
                                scalar("arn:aws:kafka:us-east-1:000000000000:cluster/discovered/0"),
                            )
                        ],
                        start_mark=mark,
                    ),
                ),
            ],
            start_mark=mark,
        )
        template = self.cluster(probe, {k: v for k, v in defaults.items() if k != "msk"})
        template.msk_cluster_arn = template.msk_region = None
        return MskDiscovery(regions, tags, prefix, template, mark.line + 1)

    def cluster(self, node, defaults: dict) -> ClusterEntry:
        own = self.mapping(node, "cluster")
        for key, (knode, _) in own.items():
            if key not in CLUSTER_KEYS:
                self.fail(knode, f"cluster: unknown key '{key}' (expected {', '.join(CLUSTER_KEYS)})")
        if "name" not in own:
            self.fail(node, "cluster: no 'name'")
        name, _ = self.string(own["name"][1], "name")
        what = f"cluster '{name}'"
        entry = ClusterEntry(name=name, line=node.start_mark.line + 1)
        merged = {**defaults, **own}
        labels: dict[str, str] = {}
        for src in (defaults, own):
            if "labels" in src:
                for key, (_k, v) in self.mapping(src["labels"][1], f"{what}: labels").items():
                    labels[key], _ = self.string(v, f"{what}: label '{key}'")
        entry.labels = labels
        if "bootstrap_servers" in merged:
            values = self.strings(merged["bootstrap_servers"][1], f"{what}: bootstrap_servers", env=True)
            entry.bootstrap_servers = ",".join(v for v, _, _ in values)
            refs = [r for _, r, _ in values]
            if any(refs):
                entry.references["bootstrap_servers"] = [r or v for v, r, _ in values]
            entry.env_values.update({v: r["env"] for v, r, _ in values if r})
        if "zookeeper" in merged:
            vnode = merged["zookeeper"][1]
            entry.zookeeper, ref = self.string(vnode, f"{what}: zookeeper", env=True)
            if ref:
                entry.references["zookeeper"] = ref
                entry.env_values[entry.zookeeper] = ref["env"]
            if not _is_zookeeper(entry.zookeeper):
                self.fail(vnode, f"{what}: zookeeper: expected HOST:PORT[,HOST:PORT...][/chroot]")
        if "command_config" in merged:
            vnode = merged["command_config"][1]
            value, _ = self.string(vnode, f"{what}: command_config")
            entry.command_config = self.path(value)
            self.client_config(
                entry, vnode, what, inherited="command_config" not in own, msk=self.names_msk_cluster(merged)
            )
        if "broker_configs" in merged:
            for value, _, vnode in self.strings(merged["broker_configs"][1], f"{what}: broker_configs"):
                path = self.path(value)
                if not os.path.exists(path):
                    self.fail(vnode, f"{what}: broker_configs: {path}: no such file or directory")
                entry.broker_configs.append(path)
        if "metrics" in merged:
            self.cluster_metrics(entry, merged["metrics"][1], what)
        if "broker_ids" in merged:
            import yaml

            bnode = merged["broker_ids"][1]
            if not isinstance(bnode, yaml.SequenceNode):
                self.fail(bnode, f"{what}: broker_ids: expected a list of integers")
            entry.broker_ids = [self.number(n, f"{what}: broker_ids", integer=True) for n in bnode.value]
            for n, bid in zip(bnode.value, entry.broker_ids, strict=True):
                if not 0 <= bid <= MAX_BROKER_ID:
                    self.fail(
                        n, f"{what}: broker_ids: {n.value[:24]} is not a broker id (0 to {MAX_BROKER_ID})"
                    )
        if "kafka_version" in merged:
            entry.kafka_version, _ = self.string(merged["kafka_version"][1], f"{what}: kafka_version")
        if "msk" in merged:
            self.cluster_msk(entry, merged["msk"][1], what)
        for key in ("timeout", "deadline"):
            if key in merged:
                vnode = merged[key][1]
                value = self.number(vnode, f"{what}: {key}")
                if not (0 < value <= (MAX_TIMEOUT if key == "timeout" else 7 * 24 * 3600)):
                    self.fail(
                        vnode,
                        f"{what}: {key}: expected seconds above 0"
                        + (f" and at most {MAX_TIMEOUT:g}" if key == "timeout" else ""),
                    )
                setattr(entry, key, float(value))
        if not (
            entry.discovers_brokers
            or entry.msk_cluster_arn
            or entry.metrics
            or (entry.templates and entry.broker_ids)
        ):
            hint = (
                " (a {broker_id} metrics template needs broker_ids or a source that discovers brokers)"
                if entry.templates
                else ""
            )
            self.fail(
                node,
                f"{what}: no source: give bootstrap_servers, zookeeper, broker_configs, metrics or "
                f"msk.cluster_arn{hint}",
            )
        return entry

    def cluster_metrics(self, entry: ClusterEntry, value_node, what: str) -> None:
        """The metrics endpoints and files: plain ones, and {broker_id} templates apart."""
        plain, templ = [], []
        for value, ref, vnode in self.strings(value_node, f"{what}: metrics", env=True):
            if ref:
                entry.env_values[value] = ref["env"]
            m = _BROKER_PREFIX.match(value)
            if m and (len(m.group(1)) > 10 or int(m.group(1)) > MAX_BROKER_ID):
                self.fail(vnode, f"{what}: metrics: broker_id= takes a broker id (0 to {MAX_BROKER_ID})")
            target = m.group(2) if m else value
            if not re.match(r"^https?://", target, re.IGNORECASE) and ref is None:
                target = self.path(target)
            value = f"broker_id={m.group(1)}:{target}" if m else target
            if TEMPLATE in value:
                if m:
                    self.fail(vnode, f"{what}: metrics: a {TEMPLATE} template takes no broker_id= prefix")
                templ.append((value, ref))
            else:
                plain.append((value, ref))
        entry.metrics = [v for v, _ in plain]
        entry.templates = [v for v, _ in templ]
        metric_refs = [r for _, r in plain + templ]
        if any(metric_refs):
            entry.references["metrics"] = metric_refs

    def cluster_msk(self, entry: ClusterEntry, value_node, what: str) -> None:
        """The msk block: its keys, the instance type and zone count, and the MSK source."""
        msk = self.mapping(value_node, f"{what}: msk")
        for key, (knode, _v) in msk.items():
            if key not in MSK_KEYS:
                self.fail(knode, f"{what}: msk: unknown key '{key}' (expected {', '.join(MSK_KEYS)})")
        if "instance_type" in msk:
            entry.msk_instance_type, _ = self.string(msk["instance_type"][1], f"{what}: msk.instance_type")
        if "az_count" in msk:
            entry.az_count = int(self.number(msk["az_count"][1], f"{what}: msk.az_count", integer=True))
            if not 1 <= entry.az_count <= 32:  # (an AWS region has at most 6 zones)
                self.fail(msk["az_count"][1], f"{what}: msk.az_count: expected a number of zones (1 to 32)")
        self.msk_source(entry, msk, what)

    @staticmethod
    def names_msk_cluster(merged: dict) -> str | None:
        """The ``msk.cluster_arn`` of a cluster (checked later, with the rest of its msk block)."""
        import yaml

        node = merged["msk"][1] if "msk" in merged else None
        if not isinstance(node, yaml.MappingNode):
            return None
        return next(
            (v.value for k, v in node.value if k.value == "cluster_arn" and isinstance(v, yaml.ScalarNode)),
            None,
        )

    def msk_source(self, entry: ClusterEntry, msk: dict, what: str) -> None:
        """``msk: {cluster_arn, region}``: the AWS MSK source (region: the ARN's by default)."""
        from auditor.collectors.msk import is_cluster_arn, region_of

        if "cluster_arn" in msk:
            vnode = msk["cluster_arn"][1]
            entry.msk_cluster_arn, _ = self.string(vnode, f"{what}: msk.cluster_arn")
            if not is_cluster_arn(entry.msk_cluster_arn):
                self.fail(
                    vnode, f"{what}: msk.cluster_arn: expected arn:aws:kafka:REGION:ACCOUNT:cluster/NAME/UUID"
                )
        if "region" in msk:
            vnode = msk["region"][1]
            entry.msk_region, _ = self.string(vnode, f"{what}: msk.region")
            if not _AWS_REGION.match(entry.msk_region):
                self.fail(
                    vnode, f"{what}: msk.region: '{entry.msk_region}' is not an AWS region (e.g. eu-west-1)"
                )
            if entry.msk_cluster_arn and region_of(entry.msk_cluster_arn) != entry.msk_region:
                self.fail(
                    vnode,
                    f"{what}: msk.region {entry.msk_region} is not the region of msk.cluster_arn "
                    f"({region_of(entry.msk_cluster_arn)})",
                )
            if not entry.msk_cluster_arn:
                self.fail(
                    vnode,
                    f"{what}: msk.region needs msk.cluster_arn (for every cluster of a region: "
                    "msk_discovery)",
                )

    def client_config(
        self, entry: ClusterEntry, vnode, what: str, *, inherited: bool, msk: str | None = None
    ) -> None:
        """Check a command_config now (exit 2 before collecting). One from ``defaults:`` applies
        only to the clusters with a Kafka Admin API source (bootstrap_servers here or in it)."""
        from auditor.collectors.client_config import ClientConfigError, load_client_config

        path = entry.command_config
        try:
            safe_io.check_regular(path)
        except FileNotFoundError:
            self.fail(vnode, f"{what}: command_config: {path}: no such file")
        except OSError as e:
            self.fail(vnode, f"{what}: command_config: {e}")
        bootstrap = entry.bootstrap_servers
        if msk and not bootstrap:  # checked as it will be used: on an MSK broker host of the ARN's region
            from auditor.collectors.msk import region_of

            bootstrap = f"b-1.cluster.id.c1.kafka.{region_of(msk) or 'us-east-1'}.amazonaws.com:9098"
        try:
            client = load_client_config(path, bootstrap)
        except ClientConfigError as e:
            self.fail(vnode, f"{what}: command_config: {e}")
        if msk:  # an MSK entry: the listener comes from kafka:GetBootstrapBrokers
            return
        if not client.config.get("bootstrap.servers"):
            if inherited:
                entry.command_config = None
                return
            self.fail(vnode, f"{what}: command_config gives no bootstrap.servers: add bootstrap_servers")


# --- --select ---------------------------------------------------------------------------------

_TERM_EQ = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s*(==|!=|=)\s*([^\s,()!=]*)\s*$")
_TERM_SET = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s+(in|notin)\s*\(([^()]*)\)\s*$")
_TERM_EXISTS = re.compile(r"^(!?)\s*([A-Za-z0-9_./-]+)$")  # on a stripped term: "\s*(!?)\s*" was quadratic
MAX_SELECTOR_CHARS = 4096


def _split_terms(text: str) -> list[str]:
    terms, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise UsageError(f"--select: unbalanced ')' in '{text}'")
        if ch == "," and depth == 0:
            terms.append(cur)
            cur = ""
        else:
            cur += ch
    if depth:
        raise UsageError(f"--select: unbalanced '(' in '{text}'")
    return terms + [cur]


def parse_selector(text: str) -> Callable[[ClusterEntry], bool]:
    """A kubectl-style label selector over the labels and ``name``: comma-separated terms, all
    of which must hold: ``key=value`` (also ``==``), ``key!=value``, ``key in (a,b)``,
    ``key notin (a,b)``, ``key`` (has the label), ``!key`` (has not). UsageError if malformed."""
    tests: list[Callable[[dict], bool]] = []
    if not text.strip():
        raise UsageError("--select: empty selector")
    if len(text) > MAX_SELECTOR_CHARS:
        raise UsageError(f"--select: longer than {MAX_SELECTOR_CHARS} characters")
    for term in (t.strip() for t in _split_terms(text)):
        if m := _TERM_SET.match(term):
            key, op, values = m.group(1), m.group(2), {v.strip() for v in m.group(3).split(",")}
            if "" in values:
                raise UsageError(f"--select: '{term.strip()}': empty value in the list")
            tests.append(
                (lambda lab, k=key, vs=values: lab.get(k) in vs)
                if op == "in"
                else (lambda lab, k=key, vs=values: lab.get(k) not in vs)
            )
        elif m := _TERM_EQ.match(term):
            key, op, value = m.groups()
            tests.append(
                (lambda lab, k=key, v=value: lab.get(k) != v)
                if op == "!="
                else (lambda lab, k=key, v=value: lab.get(k) == v)
            )
        elif m := _TERM_EXISTS.match(term):
            neg, key = m.groups()
            tests.append((lambda lab, k=key: k not in lab) if neg else (lambda lab, k=key: k in lab))
        else:
            raise UsageError(
                f"--select: cannot parse '{term.strip()}' (terms: key=value, key!=value, "
                "key in (a,b), key notin (a,b), key, !key; comma-separated)"
            )

    def select(entry: ClusterEntry) -> bool:
        labels = {**entry.labels, "name": entry.name}
        return all(t(labels) for t in tests)

    return select
