"""MSK clusters declared in Terraform or CloudFormation: the broker configuration they run.

A cluster without a custom configuration runs MSK's documented default configuration, and a
custom configuration inherits it for every key it does not set (the same decision as the MSK
API collector's: auditor/collectors/msk.py ``msk_default_values``). Two defaults depend on the
cluster's AZ count (default.replication.factor, min.insync.replicas): when the client subnets
cannot be evaluated, the broker count decides it where only one AZ count divides it (MSK's
broker count is a multiple of its 2 or 3 AZs); otherwise both are possible and the two keys are
not evaluated, never Kafka's defaults. A configuration no cluster of the files uses is judged as
MSK's smallest cluster: two brokers, in two AZs.
"""

from __future__ import annotations

from auditor.collectors.files import BROKER
from auditor.lint.key_rules import rules_reading
from auditor.lint.model import BrokerFile, ClusterFacts

SMALLEST_CLUSTER_BROKERS = 2  # two subnets in two AZs, one broker each (msk-create-cluster.md)


def _defaults(facts: ClusterFacts) -> tuple[dict[str, str], dict[str, tuple[str, ...]], tuple[int, ...]]:
    from auditor.collectors.msk import msk_default_values, possible_az_counts

    azs = possible_az_counts(facts.azs, facts.brokers)
    tiered = (facts.storage_mode or "").upper() == "TIERED"
    kraft = (facts.kafka_version or "").startswith(("4.", "3.7.x.kraft"))
    values, undetermined = msk_default_values(azs, tiered=tiered, kraft=kraft)
    return values, undetermined, azs


def _undetermined_note(
    facts: ClusterFacts, undetermined: dict[str, tuple[str, ...]], azs: tuple[int, ...], line: int
) -> list[str]:
    if not undetermined:
        return []
    why = (
        f"{facts.brokers} brokers fit {' or '.join(map(str, azs))} AZs"
        if facts.brokers
        else "its broker count is not known either"
    )
    keys = ", ".join(f"{k} ({' or '.join(v)})" for k, v in sorted(undetermined.items()))
    rules = "; ".join(f"{k}: {rules_reading(k)}" for k in sorted(undetermined))
    return [
        f"{facts.file}:{line}: {facts.address}: its AZ count is not evaluated (client subnets) and {why}: "
        f"MSK's default {keys} depends on it and is not evaluated: {rules} not applied to it"
    ]


def msk_default_brokers(facts: ClusterFacts) -> tuple[BrokerFile, list[str]]:
    """The brokers of a cluster without a custom configuration, and the warnings about
    defaults that could not be decided. Standard brokers: MSK's documented default
    configuration (auditor/data/msk_defaults.json); Express brokers: the values MSK fixes for
    them (auditor/collectors/msk.py EXPRESS_READ_ONLY). Each key at the cluster resource's line."""
    from auditor.collectors.msk import EXPRESS_READ_ONLY, is_express

    if is_express(facts.instance_type):  # Express: only what MSK fixes (its defaults differ)
        entries = {k: (v, facts.line) for k, v in EXPRESS_READ_ONLY.items()}
        return _brokers(facts, entries, {}, "Express read-only"), []
    values, undetermined, azs = _defaults(facts)
    entries = {k: (v, facts.line) for k, v in values.items()}
    broker = _brokers(facts, entries, dict.fromkeys(undetermined, facts.line), "MSK default configuration")
    return broker, _undetermined_note(facts, undetermined, azs, facts.line)


def inherit_defaults(broker: BrokerFile, facts: ClusterFacts | None) -> list[str]:
    """A custom configuration's brokers get MSK's default for every key the configuration does
    not set, at the configuration's line. Without a cluster (``facts`` None) it is judged as
    MSK's smallest cluster (two brokers in two AZs). Returns the warnings about defaults that
    could not be decided."""
    from auditor.collectors.msk import is_express

    if facts is None:
        facts = ClusterFacts(
            address=broker.group or "aws_msk_configuration",
            file=broker.file,
            line=broker.line,
            brokers=SMALLEST_CLUSTER_BROKERS,
            azs=SMALLEST_CLUSTER_BROKERS,
        )
        broker.brokers = broker.brokers or SMALLEST_CLUSTER_BROKERS
    if is_express(facts.instance_type):
        return []
    values, undetermined, azs = _defaults(facts)
    for key, value in values.items():
        if key not in broker.entries and key not in broker.unevaluated:
            broker.entries[key] = (value, broker.line)
    open_keys = {
        k: v for k, v in undetermined.items() if k not in broker.entries and k not in broker.unevaluated
    }
    for key in open_keys:
        broker.unevaluated[key] = broker.line
    return _undetermined_note(facts, open_keys, azs, broker.line)


def _brokers(facts: ClusterFacts, entries: dict, unevaluated: dict, what: str) -> BrokerFile:
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
        unevaluated=unevaluated,
    )
