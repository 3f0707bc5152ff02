"""AUD: the audit itself."""

from auditor.declarations import Category, rule
from checks._api import F, emit, ev

CATEGORY = Category("AUD", "audit", "the audit itself", (1,))


@rule("AUD001", "audit-incomplete", "critical", runs_in=("preflight",))
def audit_incomplete(tables, params):
    """A source failed or timed out while the snapshot was collected: the audit is incomplete.

    Why: an audit that silently skips a source reports a cluster as healthy without having
    looked at it. A failed ZooKeeper read hides a split-brain; a failed Admin API call hides
    every topic. The command exits 3 whenever this fires, whatever else it found.

    Remediation: fix the named source (address, credentials, timeout, ACLs for Describe on
    the cluster and topics) and collect again. Only a complete snapshot can pass.

    Example: `zookeeper zk-1.internal:2181: timed out after 10s reading /brokers/topics`.

    References:
    - Kafka documentation: operations and resources on protocols (the ACL each request needs) <https://kafka.apache.org/39/documentation.html#operations_resources_and_protocols>
    """
    e = tables.source_errors
    name = F.concat_ws(" ", F.col("source"), F.col("target"))
    msg = F.concat(
        F.lit("source "),
        name,
        F.lit(" failed: "),
        F.coalesce(F.col("message"), F.lit("unknown error")),
        F.lit("; the audit is incomplete"),
    )
    return emit(
        e, "source", name, msg, ev(source=F.col("source"), target=F.col("target"), error=F.col("message"))
    )
