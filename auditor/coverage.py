"""Coverage: which selected rules a cluster's snapshot could not feed, and why.

A rule whose inputs were not collected (no metrics, no ZooKeeper state, no client
inventory) finds nothing, and "nothing" must not read as healthy. Every rule declares the
snapshot tables it needs (``@rule(..., needs=...)``, auditor/registry.py); a snapshot's
manifest lists the tables it holds (the collector writes no file for an empty table). A
selected rule with an unmet need is *not evaluated* on that cluster. This module is the one
place that decides it, for every command (check, fleet, preflight) and every report.

Per cluster, the result is a list of entries grouped by reason and category::

    {"rules": ["THR001", "THR002", "THR006"], "category": "threads",
     "reason": "no broker metrics", "category_not_evaluated": False}

``category_not_evaluated`` is true when no selected rule of that category was evaluated on
the cluster: such a cluster is never graded A (auditor/grading.py).

Needs that cannot apply are met: ZooKeeper state on a KRaft cluster, and the MSK rules on
a cluster that is not on MSK (those rules have nothing to judge there). An empty answer is not a
missing one where the source says it asked: the KIP-714 subscriptions (``client_metrics``) are
there when the KRaft source recorded how many it read (0: none; ``not offered``: a broker before
3.7), or when the cluster runs a version before 3.7, which has no client metrics at all.

A table can be there and still lack the one metric a rule reads, and a cluster field a rule
judges by can be unknown: a rule declares both (``metrics=``, ``facts=``, auditor/declarations.py)
and is not evaluated where they are missing, rule by rule:

- each source that collected metrics records their canonical names in its manifest entry
  (``"metrics": [...]``: the metrics collector per scrape, the MSK source for CloudWatch); a
  metric no source recorded is absent. A snapshot from before that record (no source entry has
  it) is judged by its tables alone, as it always was;
- an MSK cluster's metrics from CloudWatch hold only what its EnhancedMonitoring level publishes:
  the manifest's ``cluster.msk.cloudwatch`` lists the metrics not collected (with the level each
  needs) and those that gave no datapoint, once no other source gave them
  (auditor/collectors/msk_cloudwatch.py); the reason names the level;
- a fact is a column of the clusters table (auditor/snapshot/io.py Manifest.cluster_row): null
  is unknown (MSK005's ``msk_iam_auth`` without ClientAuthentication or bootstrap listeners).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

# Why a rule was not evaluated, per missing table (the first unmet need names the reason).
REASONS = {
    "metrics": "no broker metrics",
    "client_software": "no client inventory (KIP-511 metrics)",
    "controller": "no ZooKeeper or KRaft controller state",
    "zk_state": "no ZooKeeper or KRaft controller state",
    "partitions": "no partition state",
    "log_dirs": "no log dir information",
    "log_dir_events": "no log dir information",
    "consumer_groups": "no consumer groups",
    "brokers": "no broker registrations",
    "configs": "no broker or topic configs",
    "topics": "no topic metadata",
    "quorum": "no KRaft quorum state (DescribeQuorum)",
    "features": "no finalized feature levels (ApiVersions)",
    "kraft_nodes": "no KRaft node configuration",
    "replica_lag": "no followers' replication lag (FetcherLagMetrics ConsumerLag or Log LogEndOffset in the broker "
    "metrics)",
    "log_end_offsets": "no replicas' log end offsets (Log LogEndOffset in the broker metrics)",
}


FACT_REASONS = {
    "msk_iam_auth": "the cluster's client authentication is unknown (the MSK API's DescribeClusterV2 "
    "ClientAuthentication was not read)",
}


def metric_gaps(manifest, rules: Iterable = ()) -> dict[str, str]:
    """Rule code -> why a metric it declares is missing, from the manifest's CloudWatch block
    (its shape checked when read: auditor/snapshot/manifest_shape.py; an entry without a metric
    name says nothing)."""
    msk = manifest.cluster.get("msk") or {}
    cw = msk.get("cloudwatch") or {}
    level = cw.get("enhanced_monitoring") or "DEFAULT"
    why: dict[str, str] = {}
    for m in cw.get("not_collected") or []:
        if not (m or {}).get("metric"):
            continue
        name, cloudwatch = m["metric"], m.get("cloudwatch") or "?"
        if m.get("needs"):
            reason = (
                f"no {name} metric: CloudWatch {cloudwatch} needs enhanced monitoring {m['needs']} "
                f"(the cluster's level is {level})"
            )
        else:
            reason = f"no {name} metric: CloudWatch has no {cloudwatch} (open monitoring has it)"
        why.setdefault(name, reason)
    for m in cw.get("no_data") or []:
        if (m or {}).get("metric"):
            why.setdefault(
                m["metric"],
                f"no {m['metric']} metric: CloudWatch {m.get('cloudwatch') or '?'} gave no datapoint",
            )
    out: dict[str, str] = {}
    for rule in rules:
        for need in rule.metrics:
            options = (need,) if isinstance(need, str) else need
            missing = [why[o] for o in options if o in why]
            if len(missing) == len(options):
                out.setdefault(rule.code, missing[0])
    return out


def collected_metrics(manifest) -> set[str] | None:
    """The metric names the snapshot's sources recorded collecting; None when none recorded any
    (a snapshot from before the record: judged by its tables alone)."""
    recorded = [s["metrics"] for s in manifest.sources if isinstance(s.get("metrics"), list)]
    return {str(m) for names in recorded for m in names} if recorded else None


def unmet_metric(rule, collected: set[str] | None) -> str | None:
    if collected is None:
        return None
    for need in rule.metrics:
        options = (need,) if isinstance(need, str) else tuple(need)
        if not collected.intersection(options):
            return f"no {' or '.join(options)} metric in what the metrics sources collected"
    return None


def unknown_fact(rule, manifest) -> str | None:
    row = manifest.cluster_row()
    for fact in rule.facts:
        if row.get(fact) is None:
            return FACT_REASONS.get(fact, f"the cluster's {fact} is unknown")
    return None


def reason_for(table: str) -> str:
    return REASONS.get(table, f"no {table}")


def available_tables(manifest) -> set[str]:
    """The tables a snapshot holds, plus those that cannot apply to the cluster."""
    present = {name for name, filename in (manifest.tables or {}).items() if filename}
    mode = str(manifest.cluster.get("metadata_mode") or "").lower()
    if mode == "kraft":
        present.add("zk_state")  # KRaft has no ZooKeeper: nothing is missing
    elif mode == "zookeeper":
        present |= {
            "quorum",
            "kraft_nodes",
            "features",
        }  # no KRaft quorum, no metadata.version: nothing missing
    if "client_metrics" not in present and _client_metrics_read(manifest):
        present.add("client_metrics")
    return present


def _client_metrics_read(manifest) -> bool:
    """The KRaft source asked for the KIP-714 subscriptions (and found none, or a broker without
    the API), or the cluster's version predates KIP-714 (3.7): nothing is missing."""
    from auditor.kafka_configs import parse_version

    if any(isinstance(s, dict) and "client_metrics" in s for s in manifest.sources or []):
        return True
    v = parse_version(manifest.cluster.get("kafka_version"))
    return v is not None and (v + (0, 0))[:2] < (3, 7)


def _applies(rule, manifest) -> bool:
    if rule.category == "msk":
        return str(manifest.cluster.get("platform") or "").lower() == "msk"
    return True


def unmet(rule, tables: set[str]) -> str | None:
    """The reason a rule cannot be evaluated on these tables, or None."""
    for need in rule.needs:
        options = (need,) if isinstance(need, str) else tuple(need)
        if not any(o in tables for o in options):
            return reason_for(options[0])
    return None


def cluster_coverage(manifest, rules: Iterable, failed: dict[str, str] | None = None) -> list[dict]:
    """The not-evaluated entries of one snapshot for the selected rules (empty when every
    rule could be evaluated), ordered by category then first rule code. ``failed``: rules the
    engine could not compile or run (code -> the error, auditor/engine/runner.py), not
    evaluated on any cluster."""
    rules = sorted(rules, key=lambda r: r.code)
    tables = available_tables(manifest)
    gaps = {
        **metric_gaps(manifest, rules),
        **{code: f"could not be evaluated ({why})" for code, why in (failed or {}).items()},
    }
    collected = collected_metrics(manifest)
    groups: dict[tuple[str, str], list[str]] = {}
    evaluated: set[str] = set()
    for rule in rules:
        if not _applies(rule, manifest):
            continue
        reason = (
            unmet(rule, tables)
            or gaps.get(rule.code)
            or unmet_metric(rule, collected)
            or unknown_fact(rule, manifest)
        )
        if reason is None:
            evaluated.add(rule.category)
        else:
            groups.setdefault((rule.category, reason), []).append(rule.code)
    out = [
        {
            "rules": codes,
            "category": category,
            "reason": reason,
            "category_not_evaluated": category not in evaluated,
        }
        for (category, reason), codes in groups.items()
    ]
    out.sort(key=lambda e: (e["category"], e["rules"][0]))
    return out


def per_cluster(result) -> list[tuple[str, list[dict]]]:
    """(cluster name, entries) of an AuditResult's clusters with rules not evaluated, by name."""
    names = {c.get("id"): str(c.get("name") or c.get("id")) for c in result.clusters}
    return sorted(
        ((names.get(cid, cid), entries) for cid, entries in (result.coverage or {}).items() if entries),
        key=lambda item: item[0],
    )


def compute(refs: Sequence, rules: Iterable, failed: dict[str, str] | None = None) -> dict[str, list[dict]]:
    """Per cluster id: its not-evaluated entries (clusters with full coverage are omitted);
    ``failed`` as for cluster_coverage."""
    rules = list(rules)
    out = {}
    for ref in refs:
        entries = cluster_coverage(ref.manifest, rules, failed)
        if entries:
            out[ref.manifest.cluster_id] = entries
    return out


_CODE = re.compile(r"^([A-Z]{3})(\d{3})$")


def compact(codes: Iterable[str]) -> str:
    """'THR001, THR002, THR003, THR006' -> 'THR001-THR003, THR006' (consecutive codes of one
    prefix become a range)."""
    parts: list[list] = []  # [prefix, first, last]
    for code in sorted(set(codes)):
        m = _CODE.match(code)
        if m and parts and parts[-1][0] == m.group(1) and parts[-1][2] + 1 == int(m.group(2)):
            parts[-1][2] += 1
            continue
        parts.append([m.group(1), int(m.group(2)), int(m.group(2))] if m else [code, None, None])
    text = []
    for prefix, first, last in parts:
        if first is None:
            text.append(prefix)
        elif first == last:
            text.append(f"{prefix}{first:03d}")
        else:
            text.append(f"{prefix}{first:03d}-{prefix}{last:03d}")
    return ", ".join(text)


def by_reason(entries: Iterable[dict]) -> list[tuple[str, str]]:
    """[(compact codes, reason)], one per reason, in the entries' order."""
    merged: dict[str, list[str]] = {}
    for e in entries:
        merged.setdefault(e["reason"], []).extend(e["rules"])
    return [(compact(codes), reason) for reason, codes in merged.items()]


def describe(entries: Iterable[dict]) -> str:
    """'THR001-THR002, THR006: no broker metrics; CLI001: no client inventory (KIP-511 metrics)'."""
    return "; ".join(f"{codes}: {reason}" for codes, reason in by_reason(entries))


def missing_categories(entries: Iterable[dict]) -> list[str]:
    """The categories of which no selected rule was evaluated on the cluster."""
    return sorted({e["category"] for e in entries if e.get("category_not_evaluated")})


def category_label(entries: Iterable[dict], category: str) -> str:
    """A category by its rule-code prefix ('THR'), as reports name it."""
    for e in entries:
        if e["category"] == category and e["rules"]:
            return e["rules"][0][:3]
    return category


def grade_note(entries: Sequence[dict]) -> str:
    """'not graded A: THR, CLI not evaluated', or '' when every category was evaluated."""
    missing = missing_categories(entries)
    if not missing:
        return ""
    labels = sorted({category_label(entries, c) for c in missing})
    return f"not graded A: {', '.join(labels)} not evaluated"
