"""The server's prompts: what an assistant is asked to do with the tools, and how to report it.

Both tell the model the same things: the verdict is the tool's, not the model's; rule codes and
their references are cited as the tools give them; thresholds are not re-judged (a rule's value
comes from Kafka's or AWS's documented behaviour, cited in its references); "incomplete" and
"not evaluated" are never reported as safe or clean; a fix plan is for a person to review.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

REPORTING = """\
How to report:
- Give the verdict exactly as the tool gives it (safe_to_roll, each broker's verdict, exit code and its
  meaning). "incomplete" (exit 3) or a broker "not evaluated" is never "safe": say what is missing.
- Cite every finding by its rule code and name (REP002 min-isr-equals-rf), with the references the
  result's "rules" (or explain_rule) gives; quote messages and evidence rather than paraphrasing numbers.
- Do not re-judge thresholds or substitute rules of thumb (RF 3 / min ISR 2, CPU 60%): each rule's value
  comes from Kafka's or AWS's documented behaviour, cited in its references. If you think a rule does not
  apply, say so separately and say why, next to the tool's verdict, not instead of it.
- Commands in a fix plan are for a person to review and run; nothing has been changed. Do not claim
  anything was applied.
"""


def msk_patch_readiness(
    cluster: Annotated[str, Field(description="The cluster's name (as list_clusters shows it)")],
) -> str:
    """Is this Kafka/MSK cluster safe to patch (a rolling restart of every broker), and what
    must change first?"""
    return f"""\
Is the Kafka cluster "{cluster}" safe to patch now (an AWS MSK patch restarts every broker, one at a
time), and what must change first?

Use the kafka-audit tools:
1. list_clusters: find "{cluster}": the newest snapshot under the roots (its path), or, when live tools
   are on, the inventory's cluster of that name.
2. preflight on it (snapshot=PATH, or cluster="{cluster}" for a live collection).
3. Answer: safe to roll or not; which brokers (and KRaft controllers) are unsafe and why (their rules:
   MNT001 blocked writes, MNT002 offline partitions, MNT003 stalled consumer groups ...); what blocks the
   whole cluster (blockers); what is not evaluated and what to collect for it.
4. What must change first: the fix plan's changes in order, each with its command and the rule whose
   finding it resolves (the REP002 findings when min.insync.replicas equals the replica count), and the
   re-simulated proof ("after these N change(s): ... safe"). Then the procedure for the roll itself.

{REPORTING}"""


def review_kafka_change(
    base: Annotated[
        str, Field(description="The configuration before the change: a path under the roots")
    ] = "",
    head: Annotated[
        str, Field(description="The configuration after the change: a path under the roots")
    ] = "",
    against: Annotated[
        str, Field(description="Optional: the snapshot of the cluster the change lands on")
    ] = "",
) -> str:
    """Review a Kafka configuration change (broker properties, topics, Terraform, Strimzi, Helm):
    what it introduces, what it fixes, whether CI would fail."""
    paths = (
        f'lint_change with base="{base}" and head="{head}"'
        if base and head
        else "lint_change with base and head (paths under the roots, or base_files/head_files by contents); "
        "for new files only, lint_files"
    )
    target = (
        f' and against="{against}"' if against else " (add against=SNAPSHOT to lint it against its cluster)"
    )
    return f"""\
Review this Kafka configuration change with the kafka-audit tools: call {paths}{target}.

Report:
1. Each finding the change introduces, at its file:line, with severity, rule code and name, the message,
   and the rule's remediation and references.
2. What the change fixes (baseline.stale: findings of base no longer in head).
3. Whether CI would fail (exit code and its meaning at fail_on), and the notes (files skipped or not
   recognised, values not evaluated: never treat those as clean).

{REPORTING}"""


PROMPTS = (msk_patch_readiness, review_kafka_change)
