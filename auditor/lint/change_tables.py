"""Turn lint inputs into snapshot tables, alone or merged into the cluster they will land on.

Alone, the files are a cluster of their own: one broker per broker properties file, the
topics of the YAML files (one definition of each: see run.py for topics defined in several
files), no partitions. A key set to an expression lint could not evaluate (a Terraform
``${var.x}``, a CloudFormation ``!Sub``) is a row with a null value: it hides Kafka's default,
so every rule that reads the key sees it unknown (not evaluated), never the default. With ``--against SNAPSHOT_DIR`` the files are applied to
that cluster's snapshot, as the change would be:

- a proposed server.properties replaces the static configuration of its broker; the
  replaced lines stay in ``configs`` with source ``REPLACED_STATIC_BROKER_CONFIG`` (which
  no effective-config transform reads) so that change rules (THR007) can compare the
  proposed values with what the broker runs now;
- a proposed topic replaces the topic's definition and its topic-level configs, and its
  current partition assignment (the proposed replication factor is what counts);
- everything else (brokers, dynamic configs, cluster defaults, metrics) is the cluster's.
"""

from __future__ import annotations

from dataclasses import replace

from auditor import safe_json
from auditor.collectors._common import config_row
from auditor.collectors.files import KAFKA_DEFAULT_LOG_DIR, kraft_node_row
from auditor.errors import SnapshotError
from auditor.lint.inputs import LintInputError, LintInputs, TopicDef, definition_variants
from auditor.lint.model import ClusterFacts
from auditor.snapshot.io import Manifest, SnapshotRef, now_iso
from auditor.snapshot.schema import TABLES

REPLACED = "REPLACED_STATIC_BROKER_CONFIG"
LINT_CLUSTER = "lint"


def proposed_tables(inputs: LintInputs, topic_defs: list[TopicDef] | None = None) -> dict[str, list[dict]]:
    """The files as snapshot tables. ``topic_defs``: one definition per topic (a topic defined
    differently in several files is linted once per definition, see run.py); by default the
    first in file order."""
    configs, brokers, topics = [], [], []
    for b in inputs.brokers:
        for key, (value, line) in b.entries.items():
            configs.append(
                config_row(
                    "broker", str(b.broker_id), key, value, "STATIC_BROKER_CONFIG", file=b.file, line=line
                )
            )
        for key, line in b.unevaluated.items():
            if key not in b.entries:  # set, to a value lint cannot know: never Kafka's default
                configs.append(
                    config_row(
                        "broker", str(b.broker_id), key, None, "STATIC_BROKER_CONFIG", file=b.file, line=line
                    )
                )
        dirs = b.entries.get("log.dirs") or b.entries.get("log.dir")
        log_dirs = [d.strip() for d in dirs[0].split(",") if d.strip()] if dirs else [KAFKA_DEFAULT_LOG_DIR]
        if b.log_dirs is not None:  # from the resource (Strimzi JBOD volumes; MSK: managed, unknown)
            log_dirs = list(b.log_dirs)
        rack = b.entries.get("broker.rack")
        brokers.append(
            {
                "broker_id": b.broker_id,
                "host": None,
                "port": None,
                "rack": rack[0] if rack and rack[0] else None,
                "cores": None,
                "log_dirs": log_dirs,
                "version": None,
            }
        )
    # A KRaft node's quorum settings, as the files collector reads them: every broker or combined
    # file with process.roles, every controller file (auditor/collectors/files.py)
    kraft_nodes = [
        kraft_node_row(b.broker_id, {k: _Entry(v) for k, (v, _line) in b.entries.items()}, b.file)
        for b in inputs.brokers
        if "process.roles" in b.entries and b.declared_id
    ]
    for c in inputs.controllers:  # a KRaft controller: its quorum settings and its keys, never a broker
        for key, (value, line) in c.entries.items():
            configs.append(
                config_row(
                    "controller", str(c.broker_id), key, value, "STATIC_BROKER_CONFIG", file=c.file, line=line
                )
            )
        kraft_nodes.append(
            kraft_node_row(c.broker_id, {k: _Entry(v) for k, (v, _line) in c.entries.items()}, c.file)
        )
    if topic_defs is None:
        topic_defs = [variants[0][0] for variants in definition_variants(inputs.topics).values()]
    for t in topic_defs:
        topics.append(
            {
                "topic": t.name,
                "partitions": t.partitions,
                "replication_factor": t.replication_factor,
                "is_internal": t.name.startswith("__"),
                "topic_id": None,
            }
        )
        for key, (value, line) in t.configs.items():
            configs.append(config_row("topic", t.name, key, value, "TOPIC_CONFIG", file=t.file, line=line))
        for key, line in t.unevaluated.items():
            if key not in t.configs:
                configs.append(config_row("topic", t.name, key, None, "TOPIC_CONFIG", file=t.file, line=line))
    features = []
    facts = next((b.cluster for b in inputs.brokers if b.cluster is not None), None)
    if facts is not None and facts.metadata_version:  # Strimzi spec.kafka.metadataVersion
        from auditor.lint.versions import metadata_level_of

        level = metadata_level_of(facts.metadata_version)
        if level is not None:
            from auditor.kafka_upgrades import metadata_versions

            features.append(
                {
                    "feature": "metadata.version",
                    "finalized_level": level,
                    "version_name": metadata_versions().get(level),
                    "supported_min": None,
                    "supported_max": None,
                    "finalized_epoch": None,
                }
            )
    return {
        "configs": configs,
        "brokers": brokers,
        "topics": topics,
        "kraft_nodes": kraft_nodes,
        "features": features,
    }


class _Entry:
    """A value as auditor.collectors.files.kraft_node_row reads an entry."""

    def __init__(self, value: str):
        self.value = value


def _read_rows(ref: SnapshotRef, table: str) -> list[dict]:
    if table not in ref.files:
        return []
    path, fmt = ref.files[table]
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            return pq.read_table(path).to_pylist()
        with open(path, encoding="utf-8") as fh:
            return [safe_json.loads(line, path, first_line=n) for n, line in enumerate(fh, 1) if line.strip()]
    except safe_json.JSONTooDeep as e:  # FILE:LINE: nesting deeper than ...
        raise SnapshotError(str(e)) from None
    except Exception as e:  # noqa: BLE001  one line naming the file
        raise SnapshotError(f"{path}: unreadable: {' '.join(str(e).split())[:200]}") from None


def against_tables(ref: SnapshotRef, proposed: dict[str, list[dict]]) -> dict[str, list[dict]]:
    """The cluster of ``ref`` with the proposed files applied."""
    new_brokers = {b["broker_id"]: b for b in proposed["brokers"]}
    new_topics = {t["topic"] for t in proposed["topics"]}
    out: dict[str, list[dict]] = {}
    for name, table in TABLES.items():
        if not table.from_manifest:
            out[name] = _read_rows(ref, name)

    configs = []
    for row in out["configs"]:
        if row.get("entity_type") == "topic" and row.get("entity_name") in new_topics:
            continue
        if (
            row.get("entity_type") == "broker"
            and (row.get("source") or "STATIC_BROKER_CONFIG") == "STATIC_BROKER_CONFIG"
        ):
            try:
                bid = int(str(row.get("entity_name")))
            except ValueError:
                bid = None
            if bid in new_brokers:
                row = {**row, "source": REPLACED}
        configs.append(row)
    out["configs"] = configs + proposed["configs"]

    brokers = []
    for row in out["brokers"]:
        if row.get("broker_id") in new_brokers:
            new = new_brokers.pop(row["broker_id"])
            row = {**row, "log_dirs": new["log_dirs"], "rack": new["rack"] or row.get("rack")}
        brokers.append(row)
    out["brokers"] = brokers + list(new_brokers.values())
    proposed_dirs = {b["broker_id"]: set(b["log_dirs"]) for b in proposed["brokers"]}
    out["log_dirs"] = [
        r
        for r in out["log_dirs"]
        if r.get("broker_id") not in proposed_dirs or r.get("path") in proposed_dirs[r["broker_id"]]
    ]

    out["topics"] = [r for r in out["topics"] if r.get("topic") not in new_topics] + proposed["topics"]
    new_nodes = {r["node_id"] for r in proposed.get("kraft_nodes", [])}
    out["kraft_nodes"] = [
        r for r in out.get("kraft_nodes", []) if r.get("node_id") not in new_nodes
    ] + proposed.get("kraft_nodes", [])
    out["partitions"] = [r for r in out["partitions"] if r.get("topic") not in new_topics]
    return out


def expand_templates(inputs: LintInputs, ref: SnapshotRef) -> None:
    """A server.properties without broker.id is a template (the id is filled in at deploy
    time): against a cluster it is every broker's file, except brokers that have a file of
    their own in the change."""
    templates = [b for b in inputs.brokers if not b.declared_id]
    if not templates:
        return
    # The brokers of one configuration resource (a Kafka CR, an MSK configuration) are one template.
    templates = list({(b.file, b.group or id(b)): b for b in templates}.values())
    if len(templates) > 1 and any(t.group for t in templates):
        first, second = templates[0], templates[1]
        raise LintInputError(
            f"{second.file}:{second.line}: a second broker configuration "
            f"({second.group or 'a server.properties without broker.id'}; the first is "
            f"{first.group or 'a server.properties without broker.id'} in {first.file}): with --against "
            "one configuration applies to every broker of the snapshot's cluster: lint each against its own"
        )
    if len(templates) > 1:
        raise LintInputError(
            f"{templates[1].file}: a second server.properties without broker.id "
            f"(the first is {templates[0].file}): with --against a file without an id "
            "applies to every broker, so give each file its broker.id"
        )
    declared = {b.broker_id for b in inputs.brokers if b.declared_id}
    ids = sorted(
        {r["broker_id"] for r in _read_rows(ref, "brokers") if r.get("broker_id") is not None} - declared
    )
    if not ids:
        return
    t = templates[0]
    inputs.brokers = [b for b in inputs.brokers if b.declared_id] + [replace(t, broker_id=i) for i in ids]


def lint_manifest(
    against: SnapshotRef | None,
    clusters: list[ClusterFacts] | None = None,
    cluster_id: str = LINT_CLUSTER,
    brokers=(),
) -> Manifest:
    """The snapshot's manifest with --against; else a cluster named ``lint``, with what the
    files say of it when they declare one MSK cluster (platform, instance type, AZ count,
    version: the fields the MSK API collector fills, auditor/collectors/msk.py)."""
    if against is not None:
        return against.manifest
    cluster = {"id": cluster_id, "name": LINT_CLUSTER}
    if clusters and len(clusters) == 1:
        facts = clusters[0]
        fields = {
            "platform": facts.platform,
            "msk_instance_type": facts.instance_type,
            "az_count": facts.azs,
            "kafka_version": facts.kafka_version,
            "metadata_mode": facts.metadata_mode,
        }
        cluster.update({k: v for k, v in fields.items() if v is not None})
    elif brokers:  # broker properties files: the mode their keys say (process.roles, zookeeper.connect)
        mode = mode_of_files(brokers)
        if mode:
            cluster["metadata_mode"] = mode
    return Manifest(
        cluster=cluster,
        collected_at=now_iso(),
        sources=[{"source": "lint", "status": "ok"}],
    )


def mode_of_files(brokers) -> str | None:
    """kraft when a broker file sets process.roles, zookeeper when one sets zookeeper.connect (and
    none sets process.roles: a 3.x broker in migration has both), else None."""
    keys = {k for b in brokers if b.group is None for k in b.entries}
    if "process.roles" in keys:
        return "kraft"
    return "zookeeper" if "zookeeper.connect" in keys else None
