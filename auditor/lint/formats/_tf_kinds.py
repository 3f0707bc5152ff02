"""Terraform resource kinds lint reads, in one table: a new kind is one entry in :data:`KINDS`.

The same readers serve HCL (``.tf``), Terraform's JSON syntax (``.tf.json``) and a plan as JSON
(``terraform show -json``): each reads a resource through a :class:`Body` (terraform.py's
``HclBody`` evaluates expressions; terraform_plan.py's ``PlanBody`` reads ``change.after``),
and hands what it read to an :class:`Out`, which :func:`finish` turns into clusters:

- topics: ``kafka_topic`` (Mongey), ``confluent_kafka_topic``, ``aws_msk_topic``,
  ``aiven_kafka_topic`` (``config { ... }`` with underscore keys), ``google_managed_kafka_topic``;
- broker configurations: ``aws_msk_configuration`` (``server_properties``),
  ``confluent_kafka_cluster_config`` (``config``), ``aiven_kafka``
  (``kafka_user_config { kafka { ... } }``, underscore keys);
- clusters: ``aws_msk_cluster``, ``confluent_kafka_cluster``, ``google_managed_kafka_cluster``.

A managed platform's cluster runs its documented defaults for what a resource leaves unset
(auditor/data/platforms.json; MSK: auditor/data/msk_defaults.json through _msk.py), never
Kafka's: a topic of such a platform without its cluster in the file is linted with them too.
A default the platform does not document is not evaluated. A value the platform refuses (an
Aiven topic below its replication minimum, a setting outside Aiven's range, a Google Cloud
cluster below its minimum capacity) is a CFG009 finding (auditor/lint/run.py).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Protocol

from auditor.collectors.files import BROKER
from auditor.lint.formats._msk import inherit_defaults, msk_default_brokers
from auditor.lint.key_rules import rules_reading
from auditor.lint.model import BrokerFile, ClusterFacts, FileRows, Refusal, TopicDef
from auditor.lint.versions import declare_msk_mode, declare_version

TOPIC_RULES = "REP001-REP004"
GIB = 1024**3


@lru_cache(maxsize=1)
def platforms() -> dict:
    from importlib import resources

    text = resources.files("auditor").joinpath("data/platforms.json").read_text(encoding="utf-8")
    return json.loads(text)["platforms"]


class Body(Protocol):
    """One resource (or nested block) as a kind reader sees it. Values it cannot evaluate are
    reported by the body (``needed``: the rules that needed them) and returned as None."""

    address: str
    file: str
    line: int

    def has(self, attr: str) -> bool: ...
    def attr_line(self, attr: str) -> int: ...
    def value(self, attr: str, needed: str): ...
    def integer(self, attr: str, needed: str) -> int | None: ...
    def text(self, attr: str, needed: str) -> str | None: ...
    def entries(
        self, attr: str, scope: str, underscore: bool = False
    ) -> tuple[dict[str, tuple[str, int]], dict[str, int]]: ...
    def block(self, name: str) -> Body | None: ...
    def properties(self, attr: str) -> tuple[dict[str, tuple[str, int]], dict[str, int]] | None: ...
    def reference(self, block: str, attr: str) -> str | None: ...


@dataclass
class Out:
    """What the readers of one file found, before :func:`finish` links it into clusters."""

    file: str
    rows: FileRows
    kind: str = "terraform"  # TopicDef.kind: terraform | terraform-plan
    # address -> its brokers (None: its server_properties are not evaluated)
    msk_configurations: dict[str, BrokerFile | None] = field(default_factory=dict)
    msk_clusters: list[ClusterFacts] = field(default_factory=list)
    platform_brokers: dict[str, list[BrokerFile]] = field(default_factory=dict)
    platform_topics: dict[str, list[TopicDef]] = field(default_factory=dict)

    def warn(self, line: int, text: str) -> None:
        self.rows.unevaluated.append(f"{self.file}:{line}: {text}")

    def refuse(self, line: int, anchor: int, resource: str, what: str, why: str, source: str) -> None:
        self.rows.refusals.append(Refusal(self.file, line, (anchor, line), resource, what, why, source))


def _underscored(key: str) -> str:
    """An Aiven setting name (``min_insync_replicas``) as Kafka's key (``min.insync.replicas``):
    Aiven's documented parameters are each Kafka key with its dots as underscores."""
    return key.replace("_", ".")


# --- topics ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: str | None
    replication: str | None
    config: str | None
    config_block: bool = False  # Aiven: a `config { ... }` block of underscore keys
    legacy: tuple[tuple[str, str, int], ...] = ()  # (attribute, Kafka key, factor): Aiven's old fields


def read_topic(spec: TopicSpec, platform: str | None, body: Body, out: Out) -> None:
    name = body.text(spec.name, "")
    if name is None:
        return
    partitions = body.integer(spec.partitions, "the partition rules") if spec.partitions else None
    rf = body.integer(spec.replication, f"{TOPIC_RULES}, REP009") if spec.replication else None
    configs: dict[str, tuple[str, int]] = {}
    unevaluated: dict[str, int] = {}
    if spec.config_block:
        block = body.block(spec.config) if spec.config else None
        if block is not None:
            configs, unevaluated = block.entries("", "topic", underscore=True)
    elif spec.config:
        configs, unevaluated = body.entries(spec.config, "topic")
    for attr, key, factor in spec.legacy:
        if body.has(attr) and key not in configs and key not in unevaluated:
            v = body.integer(attr, rules_reading(key, "topic"))
            if v is not None:
                configs[key] = (str(v * factor if v >= 0 else v), body.attr_line(attr))
    name_line = body.attr_line(spec.name)
    topic = TopicDef(
        name=name,
        file=body.file,
        line=name_line,
        anchors=(body.line, name_line),
        partitions=partitions,
        replication_factor=rf,
        configs=configs,
        kind=out.kind,
        unevaluated=unevaluated,
    )
    facts = platforms().get(platform or "", {})
    if platform == "confluent-cloud" and topic.replication_factor is None:
        topic.replication_factor = facts["topic_replication_factor"]  # fixed by Confluent Cloud
    if platform == "aiven":
        _aiven_topic(topic, body, spec, facts, out)
    out.rows.topics.append(topic)
    if platform is not None:
        out.platform_topics.setdefault(platform, []).append(topic)


def _aiven_topic(topic: TopicDef, body: Body, spec: TopicSpec, facts: dict, out: Out) -> None:
    diskless = [k for k in facts["diskless_topic_keys"] if topic.configs.get(k, ("",))[0].lower() == "true"]
    for key in facts["diskless_topic_keys"]:  # Aiven's own topic settings, not Kafka keys (CFG002)
        topic.configs.pop(key, None)
        topic.unevaluated.pop(key, None)
    if diskless:
        # A diskless topic's data is in object storage, replicated by the storage provider:
        # Aiven asks for no replication factor (1 or -1 if one must be given). Not judged.
        if topic.replication_factor is not None:
            out.rows.notes.append(
                f"{topic.where}: {body.address} is a diskless topic ({diskless[0]}=true): its data is "
                "replicated by the object storage, so its replication factor is not judged"
            )
        topic.replication_factor = None
        return
    minimum = facts["topic_replication_minimum"]
    if topic.replication_factor is not None and 0 < topic.replication_factor < minimum:
        line = body.attr_line(spec.replication)
        out.refuse(
            line,
            body.line,
            f"topic {topic.name}",
            f"{spec.replication} = {topic.replication_factor}",
            f"Aiven does not allow a replication factor below {minimum} (to prevent data loss when a "
            "node is terminated): creating the topic fails",
            facts["sources"]["replication_minimum"],
        )


TOPIC_SPECS = {
    "kafka_topic": TopicSpec("name", "partitions", "replication_factor", "config"),
    "confluent_kafka_topic": TopicSpec("topic_name", "partitions_count", None, "config"),
    "aws_msk_topic": TopicSpec("name", "partition_count", "replication_factor", "configs"),
    "google_managed_kafka_topic": TopicSpec("topic_id", "partition_count", "replication_factor", "configs"),
    "aiven_kafka_topic": TopicSpec(
        "topic_name",
        "partitions",
        "replication",
        "config",
        config_block=True,
        legacy=(
            ("retention_hours", "retention.ms", 3_600_000),
            ("retention_bytes", "retention.bytes", 1),
            ("minimum_in_sync_replicas", "min.insync.replicas", 1),
        ),
    ),
}


# --- broker configurations and clusters -----------------------------------------------------------


def read_msk_configuration(body: Body, out: Out) -> None:
    props = body.properties("server_properties")
    if props is None:  # not evaluated (reported): a cluster using it is not judged by defaults
        out.msk_configurations[body.address] = None
        return
    entries, unevaluated = props
    line = body.attr_line("server_properties")
    broker = BrokerFile(
        body.file,
        -1,
        entries,
        False,
        BROKER,
        group=body.address,
        log_dirs=(),
        line=line,
        unevaluated=unevaluated,
    )
    out.msk_configurations[body.address] = broker
    out.rows.brokers.append(broker)


def read_msk_cluster(body: Body, out: Out) -> None:
    facts = ClusterFacts(address=body.address, file=body.file, line=body.line)
    facts.brokers = body.integer("number_of_broker_nodes", "the broker-count rules (CFG004)")
    if body.has("kafka_version"):  # where lint --target-version points (auditor/lint/versions.py)
        declare_version(
            facts,
            body.text("kafka_version", "the version-aware rules"),
            line=body.attr_line("kafka_version"),
            source="kafka_version",
        )
    facts.storage_mode = body.text("storage_mode", "the storage rules")
    group = body.block("broker_node_group_info")
    if group is not None:
        facts.instance_type = group.text("instance_type", "the MSK size rules (MSK001, MSK002)")
        subnets = group.value("client_subnets", "the AZ rule (REP009)")
        if isinstance(subnets, list):
            facts.azs = len(subnets)
    facts.configuration = body.reference("configuration_info", "arn")
    declare_msk_mode(facts)  # MSK's version string says the mode (``.kraft``, 4.x)
    out.msk_clusters.append(facts)
    out.rows.clusters.append(facts)


def _platform_broker(
    platform: str,
    body: Body,
    entries: dict[str, tuple[str, int]],
    unevaluated: dict[str, int],
    facts: ClusterFacts,
    out: Out,
    at: int,
) -> BrokerFile:
    """A managed platform's brokers: what the resource sets, and the platform's documented
    default for every other key it documents (at ``at``); a default it does not document is
    not evaluated, with a warning."""
    defaults = platforms()[platform]["defaults"]
    undocumented = []
    for key, value in defaults.items():
        if key in entries or key in unevaluated:
            continue
        if value is None:
            unevaluated[key] = at
            undocumented.append(key)
        else:
            entries[key] = (value, at)
    if undocumented:
        out.warn(
            at,
            f"{body.address}: {platforms()[platform]['name']} does not document its clusters' "
            f"{' and '.join(undocumented)}: not evaluated: "
            + "; ".join(f"{k}: {rules_reading(k)}" for k in undocumented)
            + " not applied to it",
        )
    broker = BrokerFile(
        body.file,
        -1,
        entries,
        False,
        BROKER,
        group=body.address,
        line=at,
        log_dirs=(),
        cluster=facts,
        brokers=facts.brokers,
        unevaluated=unevaluated,
    )
    out.rows.brokers.append(broker)
    out.platform_brokers.setdefault(platform, []).append(broker)
    return broker


def read_aiven_kafka(body: Body, out: Out) -> None:
    facts = ClusterFacts(address=body.address, file=body.file, line=body.line, platform="aiven")
    user_config = body.block("kafka_user_config")
    entries: dict[str, tuple[str, int]] = {}
    unevaluated: dict[str, int] = {}
    at = body.line
    if user_config is not None:
        if user_config.has("kafka_version"):
            declare_version(
                facts,
                user_config.text("kafka_version", "the version-aware rules (CFG002)"),
                line=user_config.attr_line("kafka_version"),
                source="kafka_user_config.kafka_version",
            )
        kafka = user_config.block("kafka")
        if kafka is not None:
            entries, unevaluated = kafka.entries("", "broker", underscore=True)
            at = kafka.line
    out.rows.clusters.append(facts)
    out.rows.notes.append(
        f"{body.file}:{body.attr_line('plan') if body.has('plan') else body.line}: {body.address}: an Aiven "
        "service's broker count is its plan's, which lint does not know: CFG004 (needs it) is not applied"
    )
    _check_ranges("aiven", body, entries, out)
    _platform_broker("aiven", body, entries, unevaluated, facts, out, at)


def _check_ranges(platform: str, body: Body, entries: dict[str, tuple[str, int]], out: Out) -> None:
    facts = platforms()[platform]
    for key, (value, line) in entries.items():
        allowed = facts["broker_ranges"].get(key)
        if allowed is None:
            continue
        try:
            number = float(value)
        except ValueError:
            continue  # not a number: CFG001 says so
        low, high = allowed.get("min"), allowed.get("max")
        if (low is not None and number < float(low)) or (high is not None and number > float(high)):
            span = f"from {low or 'any'} to {high or 'any'}"
            out.refuse(
                line,
                body.line,
                key,
                f"{key} = {value}",
                f"{facts['name']} accepts {key} {span} only: the service update is refused",
                facts["sources"]["defaults_and_ranges"],
            )


def read_confluent_cluster_config(body: Body, out: Out) -> None:
    facts = ClusterFacts(address=body.address, file=body.file, line=body.line, platform="confluent-cloud")
    entries, unevaluated = body.entries("config", "broker")
    out.rows.clusters.append(facts)
    at = body.attr_line("config") if body.has("config") else body.line
    _platform_broker("confluent-cloud", body, entries, unevaluated, facts, out, at)


def read_confluent_cluster(body: Body, out: Out) -> None:
    facts = ClusterFacts(address=body.address, file=body.file, line=body.line, platform="confluent-cloud")
    out.rows.clusters.append(facts)
    out.platform_brokers.setdefault("confluent-cloud", [])  # a cluster_config of the file wins (finish)
    _platform_broker("confluent-cloud", body, {}, {}, facts, out, body.line)


def read_gcp_cluster(body: Body, out: Out) -> None:
    spec = platforms()["gcp"]
    facts = ClusterFacts(address=body.address, file=body.file, line=body.line, platform="gcp")
    facts.azs = spec["zones"]
    capacity = body.block("capacity_config")
    if capacity is not None:
        needed = "the broker count (CFG004) and Google's capacity limits (CFG009)"
        vcpu = capacity.integer("vcpu_count", needed)
        memory = _whole(capacity, "memory_bytes", needed)
        source = spec["sources"]["capacity_api"]
        if vcpu is not None and vcpu < spec["min_vcpu"]:
            out.refuse(
                capacity.attr_line("vcpu_count"),
                body.line,
                body.address,
                f"vcpu_count = {vcpu}",
                f"Google Cloud requires at least {spec['min_vcpu']} vCPUs (the cluster spans three zones): "
                "creating the cluster fails",
                source,
            )
        if memory is not None:
            low, high = spec["memory_gib_per_vcpu"]
            gib = memory / GIB
            if gib < spec["min_memory_gib"] or (vcpu and not low <= gib / vcpu <= high):
                out.refuse(
                    capacity.attr_line("memory_bytes"),
                    body.line,
                    body.address,
                    f"memory_bytes = {memory}",
                    f"Google Cloud requires at least {spec['min_memory_gib']} GiB and {low} to {high} GiB per "
                    "vCPU: creating the cluster fails",
                    source,
                )
        if vcpu is not None and vcpu > 0:
            by_memory = math.ceil(memory / GIB / spec["gib_per_broker"]) if memory else 0
            facts.brokers = max(spec["min_brokers"], math.ceil(vcpu / spec["vcpu_per_broker"]), by_memory)
    out.rows.clusters.append(facts)
    _platform_broker("gcp", body, {}, {}, facts, out, body.line)


def _whole(body: Body, attr: str, needed: str) -> int | None:
    """A whole number of any size (a byte count): None when absent or not evaluated."""
    from auditor.lint.model import LintInputError

    v = body.value(attr, needed)
    if v is None:
        return None
    try:
        if isinstance(v, bool) or not str(v).strip().lstrip("-").isdigit():
            raise ValueError(v)
        return int(str(v).strip())
    except ValueError:
        raise LintInputError(
            f"{body.file}:{body.attr_line(attr)}: {body.address} {attr} must be a whole number, not {v!r}"[
                :300
            ]
        ) from None


@dataclass(frozen=True)
class Kind:
    read: Callable[[Body, Out], None]
    platform: str | None = None


KINDS: dict[str, Kind] = {
    **{
        name: Kind(partial(read_topic, spec, platform), platform)
        for name, spec, platform in (
            ("kafka_topic", TOPIC_SPECS["kafka_topic"], None),
            ("confluent_kafka_topic", TOPIC_SPECS["confluent_kafka_topic"], "confluent-cloud"),
            ("aws_msk_topic", TOPIC_SPECS["aws_msk_topic"], "msk"),
            ("aiven_kafka_topic", TOPIC_SPECS["aiven_kafka_topic"], "aiven"),
            ("google_managed_kafka_topic", TOPIC_SPECS["google_managed_kafka_topic"], "gcp"),
        )
    },
    "aws_msk_configuration": Kind(read_msk_configuration, "msk"),
    "aws_msk_cluster": Kind(read_msk_cluster, "msk"),
    "aiven_kafka": Kind(read_aiven_kafka, "aiven"),
    "confluent_kafka_cluster_config": Kind(read_confluent_cluster_config, "confluent-cloud"),
    "confluent_kafka_cluster": Kind(read_confluent_cluster, "confluent-cloud"),
    "google_managed_kafka_cluster": Kind(read_gcp_cluster, "gcp"),
}


# --- linking --------------------------------------------------------------------------------------


def finish(out: Out, *, plan: bool = False) -> None:
    """Link what one file holds into clusters.

    MSK: a cluster whose ``configuration_info.arn`` names an ``aws_msk_configuration`` of the
    file (in a plan: the one configuration, when the file has one cluster) runs it, with MSK's
    defaults for what it leaves unset; a cluster without one runs MSK's default configuration;
    a configuration no cluster uses is judged as MSK's smallest cluster; ``aws_msk_topic``s
    without a cluster get MSK's defaults. Other platforms: one configuration per file (a
    ``confluent_kafka_cluster_config`` over its ``confluent_kafka_cluster``), and topics of a
    platform without it get the platform's defaults."""
    linked: set[str] = set()
    for facts in out.msk_clusters:
        ref = facts.configuration
        target = None
        if plan and ref and len(out.msk_configurations) == 1 and len(out.msk_clusters) == 1:
            target = next(iter(out.msk_configurations))
        elif ref and ref.startswith("aws_msk_configuration."):
            target = ref[: -len(".arn")] if ref.endswith(".arn") else ref
            if target not in out.msk_configurations:  # this.arn of a configuration made by count/for_each
                same = [a for a in out.msk_configurations if a.split("[")[0] == target.split("[")[0]]
                target = same[0] if len(same) == 1 else target
        if ref is None:
            broker, warnings = msk_default_brokers(facts)
            out.rows.brokers.append(broker)
            out.rows.unevaluated.extend(warnings)
        elif target in out.msk_configurations:
            linked.add(target)
            broker = out.msk_configurations[target]
            if broker is not None:
                broker.cluster = facts
                out.rows.unevaluated.extend(inherit_defaults(broker, facts))
        else:
            what = (
                "no aws_msk_configuration of this file"
                if target
                else "not evaluated to a configuration of this file"
            )
            out.warn(
                facts.line,
                f"{facts.address} configuration_info.arn = {ref} is {what}: the cluster's broker "
                "configuration is not linted",
            )
    for address, broker in out.msk_configurations.items():
        if address not in linked and broker is not None:
            out.rows.unevaluated.extend(inherit_defaults(broker, None))
            out.rows.notes.append(
                f"{broker.file}:{broker.line}: {address} is used by no aws_msk_cluster of this file: judged "
                "as MSK's smallest cluster (two brokers in two Availability Zones)"
            )
    if out.platform_topics.get("msk") and not out.msk_clusters and not out.msk_configurations:
        first = out.platform_topics["msk"][0]
        facts = ClusterFacts(address=f"the MSK cluster of {first.name}", file=first.file, line=first.line)
        broker, warnings = msk_default_brokers(facts)
        out.rows.brokers.append(broker)
        out.rows.unevaluated.extend(warnings)
    confluent = out.platform_brokers.get("confluent-cloud", [])
    configured = [b for b in confluent if b.group and b.group.startswith("confluent_kafka_cluster_config")]
    if configured and len(confluent) > len(configured):  # the cluster_config is the cluster's configuration
        dropped = [b for b in confluent if b not in configured]
        out.rows.brokers = [b for b in out.rows.brokers if not any(b is d for d in dropped)]
        out.rows.clusters = [c for c in out.rows.clusters if not any(c is d.cluster for d in dropped)]
        out.platform_brokers["confluent-cloud"] = configured
    for platform, topics in out.platform_topics.items():
        if platform == "msk" or out.platform_brokers.get(platform):
            continue
        first = topics[0]
        facts = ClusterFacts(
            address=f"the {platforms()[platform]['name']} cluster",
            file=first.file,
            line=first.line,
            platform=platform,
        )
        if platform == "gcp":
            facts.azs = platforms()["gcp"]["zones"]

        class _At:  # the synthetic cluster's "resource": where its topics are
            address, file, line = facts.address, first.file, first.line

        _platform_broker(platform, _At, {}, {}, facts, out, first.line)
