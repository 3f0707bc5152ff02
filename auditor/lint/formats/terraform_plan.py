"""A Terraform plan as JSON (``terraform show -json plan.out``): variables, ``for_each`` and
modules already resolved by Terraform.

Recognised by content (``format_version`` with ``resource_changes`` or ``planned_values``).
Each resource change that creates or updates (``change.after``; deletions are passed over) a
``kafka_topic``, ``confluent_kafka_topic``, ``aws_msk_topic``, ``aws_msk_configuration`` or
``aws_msk_cluster`` is read with the attributes the Terraform reader reads
(auditor/lint/formats/terraform.py). A finding is located at the line of the resource's
``"address"`` in the plan file, and names the address. A value known only after apply
(``after_unknown``) is reported as not evaluated. One ``aws_msk_configuration`` and one
``aws_msk_cluster`` in a plan are linked (the cluster's ARN reference is unknown until apply).
"""

from __future__ import annotations

import json
import re

from auditor import safe_json
from auditor.collectors.files import BROKER, parse_properties
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
from auditor.lint.versions import declare_msk_mode, declare_version

NAME = "terraform plan"
UNIT = "file"
SUFFIXES = (".json",)
MAX_BYTES = 256 * 1024 * 1024
_MARK = re.compile(r'"format_version"\s*:')
_TOPICS = {
    "kafka_topic": ("name", "partitions", "replication_factor", "config"),
    "confluent_kafka_topic": ("topic_name", "partitions_count", None, "config"),
    "aws_msk_topic": ("name", "partition_count", "replication_factor", "configs"),
}


def recognise(src: Source) -> bool:
    if src.suffix not in SUFFIXES:
        return False
    head = src.head(64 * 1024)
    return bool(_MARK.search(head)) and ("resource_changes" in head or "planned_values" in head)


def _changes(plan: dict) -> list[tuple[str, str, dict, dict]]:
    """(address, type, after, after_unknown) of every resource created or updated."""
    out = []
    for rc in plan.get("resource_changes") or []:
        change = rc.get("change") or {}
        actions = change.get("actions") or []
        if actions == ["delete"] or not isinstance(change.get("after"), dict):
            continue
        out.append(
            (rc.get("address", "?"), rc.get("type", ""), change["after"], change.get("after_unknown") or {})
        )
    if out or plan.get("resource_changes"):
        return out

    def walk(module: dict):
        for r in module.get("resources") or []:
            if r.get("mode", "managed") == "managed" and isinstance(r.get("values"), dict):
                out.append((r.get("address", "?"), r.get("type", ""), r["values"], {}))
        for child in module.get("child_modules") or []:
            walk(child)

    walk((plan.get("planned_values") or {}).get("root_module") or {})
    return out


def read(src: Source) -> FileRows:
    from auditor import safe_io

    try:
        text = safe_io.read_text(src.path, limit=MAX_BYTES)
    except safe_io.FileRefused as e:
        raise LintInputError(str(e).replace(str(src.path), src.file, 1)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise LintInputError(f"{src.file}: unreadable ({getattr(e, 'strerror', None) or e})") from None
    try:
        plan = safe_json.loads(text, src.file)
    except safe_json.JSONTooDeep as e:
        raise LintInputError(str(e)) from None
    except json.JSONDecodeError as e:
        raise LintInputError(f"{src.file}:{e.lineno}: not valid JSON: {e.msg}") from None
    if not isinstance(plan, dict):
        raise LintInputError(f"{src.file}:1: a Terraform plan is a JSON object")
    rows = FileRows()
    lines = _address_lines(text)
    configurations, clusters = [], []
    kafka_seen = False
    for address, rtype, after, unknown in _changes(plan):
        at = lines.get(address, 1)

        def known(attr, needed, address=address, after=after, unknown=unknown, at=at):
            if attr is None:
                return None
            if unknown.get(attr) is True:
                rows.unevaluated.append(
                    f"{src.file}:{at}: {address} {attr} is known only after apply: {needed} not applied to it"
                )
                return None
            return after.get(attr)

        if rtype in _TOPICS:
            kafka_seen = True
            name_attr, part_attr, rf_attr, cfg_attr = _TOPICS[rtype]
            name = known(name_attr, "every topic rule")
            if name is None:
                continue
            configs = known(cfg_attr, "the topic configuration rules")
            if isinstance(configs, str):  # aws_msk_topic: jsonencode({...})
                try:
                    configs = json.loads(configs)
                except ValueError:
                    configs = None
            rows.topics.append(
                TopicDef(
                    name=str(name),
                    file=src.file,
                    line=at,
                    anchors=(at,),
                    partitions=_int(known(part_attr, "the partition rules"), src.file, at, address),
                    replication_factor=_int(known(rf_attr, "REP001-REP004"), src.file, at, address),
                    configs={str(k): (_text(v), at) for k, v in (configs or {}).items() if v is not None},
                    kind="terraform-plan",
                )
            )
        elif rtype == "aws_msk_configuration":
            kafka_seen = True
            props = known("server_properties", "the broker rules")
            if props is None:
                continue
            entries, problems = parse_properties(str(props))
            if problems:
                raise LintInputError(f"{src.file}:{at}: {address} server_properties: {problems[0].message}")
            broker = BrokerFile(
                src.file,
                -1,
                {e.key: (e.value, at) for e in entries},
                False,
                BROKER,
                group=address,
                line=at,
                log_dirs=(),
            )
            configurations.append(broker)
            rows.brokers.append(broker)
        elif rtype == "aws_msk_cluster":
            kafka_seen = True
            facts = ClusterFacts(address=address, file=src.file, line=at)
            facts.brokers = _int(
                known("number_of_broker_nodes", "the broker-count rules (CFG004)"), src.file, at, address
            )
            declare_version(
                facts,
                _opt(known("kafka_version", "the version-aware rules")),
                line=at,
                source="kafka_version",
            )
            facts.storage_mode = _opt(known("storage_mode", "the storage rules"))
            group = after.get("broker_node_group_info") or [{}]
            group = group[0] if isinstance(group, list) and group else {}
            facts.instance_type = _opt(group.get("instance_type"))
            subnets = group.get("client_subnets")
            facts.azs = len(subnets) if isinstance(subnets, list) else None
            info = after.get("configuration_info") or []
            facts.configuration = "linked" if info or (unknown.get("configuration_info")) else None
            declare_msk_mode(facts)
            clusters.append(facts)
            rows.clusters.append(facts)
    for facts in clusters:
        if facts.configuration is None:
            rows.brokers.append(msk_default_brokers(facts))
    if len(configurations) == 1 and len(clusters) == 1 and clusters[0].configuration:
        configurations[0].cluster = clusters[0]
    if not kafka_seen:
        rows.skipped = f"{src.file}: skipped: a Terraform plan without a Kafka or MSK resource"
        rows.nothing_kafka = True
    return rows


def _address_lines(text: str) -> dict[str, int]:
    """address -> the line of its first ``"address": "..."`` (resource_changes come after
    planned_values in Terraform's output, so the planned value's line is the one given)."""
    out: dict[str, int] = {}
    for m in re.finditer(r'"address"\s*:\s*"((?:[^"\\]|\\.)*)"', text):
        address = json.loads(f'"{m.group(1)}"')
        out.setdefault(address, text.count("\n", 0, m.start()) + 1)
    return out


def _text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _opt(v) -> str | None:
    return None if v is None else str(v)


def _int(v, file: str, at: int, address: str) -> int | None:
    if v is None:
        return None
    try:
        number = int(str(v))
    except ValueError:
        raise LintInputError(f"{file}:{at}: {address}: {v!r} is not an integer") from None
    if not INT32_MIN <= number <= INT32_MAX:
        raise LintInputError(f"{file}:{at}: {address}: {number} is out of range")
    return number
