"""MSK clusters declared in Terraform or CloudFormation: the broker configuration a cluster
without a custom configuration runs."""

from __future__ import annotations

from auditor.collectors.files import BROKER
from auditor.lint.model import BrokerFile, ClusterFacts


def msk_default_brokers(facts: ClusterFacts) -> BrokerFile:
    """MSK's documented default configuration (auditor/data/msk_defaults.json), standard
    brokers; Express brokers: the values MSK fixes for them (auditor/collectors/msk.py
    EXPRESS_READ_ONLY). Each key at the cluster resource's line."""
    from auditor.collectors.msk import EXPRESS_READ_ONLY, is_express, msk_defaults

    if is_express(facts.instance_type):  # Express: only what MSK fixes (its defaults differ)
        return _brokers(
            facts, {k: (v, facts.line) for k, v in EXPRESS_READ_ONLY.items()}, "Express read-only"
        )
    table = msk_defaults()
    tiered = (facts.storage_mode or "").upper() == "TIERED"
    entries = {}
    for key, spec in table["properties"].items():
        if spec.get("zookeeper_only") and (facts.kafka_version or "").startswith(("4.", "3.7.x.kraft")):
            continue
        value = spec.get("tiered", spec.get("value")) if tiered else spec.get("value")
        if isinstance(spec.get("by_az_count"), dict):
            value = spec["by_az_count"].get(str(facts.azs))
        if value is not None:
            entries[key] = (str(value), facts.line)
    return _brokers(facts, entries, "MSK default configuration")


def _brokers(facts: ClusterFacts, entries: dict, what: str) -> BrokerFile:
    return BrokerFile(
        facts.file,
        -1,
        entries,
        False,
        BROKER,
        group=f"{facts.address} ({what})",
        line=facts.line,
        log_dirs=(),
        cluster=facts,
    )
