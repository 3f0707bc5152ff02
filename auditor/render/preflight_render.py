"""Renderers of `kafka-audit preflight`: text, JSON, Markdown (auditor/render/preflight_markdown.py)
and a self-contained HTML page.

JSON (schema_version 2) is check's document (auditor/render/json_render.py: schema_version,
tool, clusters, incomplete, summary, findings, same finding shape) plus a ``preflight`` key:

    "preflight": {
      "selected_brokers": [1, 2] | null,        # --broker, null = every broker
      "safe_to_roll": false,                    # every broker is safe and the snapshot is complete
      "verdict": "unsafe",                      # unsafe > unknown > outage > safe (exit 1, 3, 1, 0)
      "clusters": [{
        "cluster": "payments-msk", "cluster_id": "...", "controller_id": 2, "metadata_mode": "zookeeper",
        "simulated": true,                      # false: no brokers or no partition state in the snapshot
        "missing": [],                          # what the snapshot lacks, said precisely
        "not_evaluated_brokers": [],            # min.insync.replicas unknown: never "safe"
        "safe_to_roll": false, "unsafe_brokers": [1, 2, 3],
        "verdict": "unsafe",                    # safe | unsafe | outage (a KRaft quorum of 1-2 voters) | unknown
        "incomplete": false,                    # a source of this cluster failed (never safe then)
        "blockers": ["..."],                    # why the cluster cannot be rolled whatever the order
        "degraded": {"leaderless": [...], "under_min_isr": [...], "offline_replicas": [...]},  # capped
        "degraded_counts": {"leaderless": 0, ...},
        "order": [1, 3, 2],                     # safe brokers only; [] when blocked
        "controllers": [{"node_id", "is_leader", "is_broker", "safe", "reason", "outage",
                         "verdict"}],           # KRaft voters (MNT005); verdict safe | unsafe | outage
        "unsafe_controllers": [...], "controller_order": [...],   # safe voters, the quorum leader last
        "outage_controllers": [...],            # a quorum of one or two voters: restart = metadata outage
        "outage_note": null | "...",            # what that means and the fix (more controllers, KIP-853)
        "controllers_managed_by_aws": false,    # MSK KRaft: AWS runs the controllers (not simulated)
        "procedure": ["..."],                   # the order holds one restart at a time: what to check
        "acks1_loss_brokers": [...],            # MNT006 (warning, blocks nothing): lagging followers take over
        "acks1_loss_not_evaluated": null | "...",  # why MNT006 could not be judged (no lag, one scrape)
        "fix_plan": null | {"changes": [{"kind", "summary", "commands", "topics", "value", "brokers"}],
                            "waits": [{"what", "recheck"}], "followups": [...], "reassignment": {...} | null,
                            "proof": {"brokers", "safe", "unsafe", "blockers", "reached_safe", "order_after"}},
        "brokers": [{"cluster": ..., "broker_id": 1, "host": ..., "rack": ..., "leaders": 32, "replicas": 98,
                     "is_controller": false, "safe": false,
                     "verdict": "unsafe",       # "safe" | "unsafe" | "not evaluated" (min ISR unknown)
                     "unknown_min_isr_partitions": 0,
                     "blocked_partitions": 98,  # MNT001
                     "offline_partitions": 0,   # MNT002
                     "acks1_loss_partitions": 0,  # MNT006 (a warning): handed to a follower that lags
                     "topic_count": 4, "topics": [...], "partitions": [...],   # sorted, capped
                     "coordinator_partitions": 50, "consumer_group_count": 5, "consumer_groups": [...],
                     "reasons": ["MNT001", "MNT003"]}]
      }],
      "target_version": "4.1" | null,           # --target-version, as its release line
      "upgrade_ready": true | false | null,     # null: not asked, or the snapshot cannot say
      "upgrade_blockers": [fingerprint],        # upgrade rules' findings at error or above
      "upgrade": null | {"target", "target_status": "released" | "unreleased", "target_release",
                         "upgrade_notes", "upgrades_from",
                         "ready": true | false | null,
                         "clusters": [{"cluster", "cluster_id", "target", "running_version", "metadata_mode",
                                       "metadata_version", "platform",
                                       "status": "ready" | "not ready" | "unknown",
                                       "hops": [{"number", "kind", "to", "title", "steps", "cite", "blocked",
                                                 "blocking": [finding], "notes": [finding]}],
                                       "now": ["..."],          # what can be done now
                                       "other": [finding], "notes": ["..."]}]}
    }

``pre`` is an auditor.commands.preflight.PreflightResult, not imported: the preflight modules may use
render/ (escape.py), never the other way round.

HTML goes through jinja2 with autoescape on (templates/preflight.html.j2); no script, no
external resources.
"""

from __future__ import annotations

import json
import shlex

from auditor.escape import neutralise, neutralise_lines
from auditor.render import json_render
from auditor.render.preflight_upgrade_render import upgrade_document, upgrade_headline, upgrade_lines
from auditor.render.text_render import MARK, counts_line

FORMATS = ("text", "json", "markdown", "html")


def render(fmt: str, pre) -> str:
    if fmt == "json":
        return json.dumps(document(pre), indent=2, ensure_ascii=False) + "\n"
    if fmt == "html":
        return render_html(pre)
    if fmt == "markdown":
        from auditor.render.preflight_markdown import render_markdown

        return render_markdown(pre)
    return render_text(pre)


def document(pre) -> dict:
    doc = json_render.document(pre.result)
    doc["preflight"] = {
        "selected_brokers": pre.selected_brokers,
        "safe_to_roll": pre.safe_to_roll,
        "verdict": pre.verdict,
        "target_version": pre.target_version,
        "upgrade_ready": pre.upgrade_ready,
        "upgrade_blockers": [f.fingerprint for f in pre.upgrade_blockers],
        "clusters": [c.to_json() for c in pre.clusters],
        "upgrade": upgrade_document(pre),
    }
    return doc


def fix_plan_file(pre) -> str:
    """``--fix-plan FILE``: every cluster's plan as a commented shell script (never executed)."""
    parts = []
    for c in pre.clusters:
        if c.plan is not None:
            script = plan_script(c.plan)
            if c.procedure:  # once the plan has made the roll safe
                script += "# then roll, one node at a time:\n" + "".join(
                    f"#   {i}. {neutralise(step)}\n" for i, step in enumerate(c.procedure, 1)
                )
            parts.append(script)
        elif c.safe_to_roll:
            parts.append(f"# {neutralise(c.cluster)}: safe to roll, nothing to change\n")
        elif c.verdict == "outage":
            parts.append(f"# {neutralise(c.cluster)}: no plan: {neutralise(c.outage_note)}\n")
        else:
            why = "; ".join(c.missing) or "nothing to simulate"
            parts.append(f"# {neutralise(c.cluster)}: no plan ({neutralise(why)})\n")
    return "\n".join(parts)


def plan_lines(plan) -> list[str]:
    """A fix plan (auditor.commands.preflight_plan.FixPlan) in the text report."""
    out = []
    for i, c in enumerate(plan.changes, 1):
        out.append(f"{i}. {c.summary}")
        if c.kind == "reassign" and plan.reassignment:  # the file its commands read: written first
            out.append(f"     write {plan.reassignment_file}:")
            out.extend("       " + line for line in json.dumps(plan.reassignment, indent=2).splitlines())
        out.extend(f"     {cmd}" for cmd in c.commands)
    for w in plan.waits:
        out.append(f"wait for {w.what}")
        out.append(f"     re-check: {w.recheck}")
    for f in plan.followups:
        out.append(f"afterwards: {f}")
    for n in plan.notes:
        out.append(f"note: {n}")
    out.append(plan.proof_line)
    return out


def plan_script(plan) -> str:
    """The --fix-plan file of one cluster: a commented shell script for a person to review
    (never run by us); every line neutralised."""
    out = [
        f"# kafka-audit preflight fix plan for cluster {plan.cluster}",
        "# Review before running anything: kafka-audit executed none of this.",
        "# Add --command-config FILE to each command for TLS/SASL/IAM listeners.",
        "# Run top to bottom (sh or bash); it stops at the first command that fails.",
        f"# {plan.proof_line}",
        "set -eu",
        "",
    ]
    for i, c in enumerate(plan.changes, 1):
        out.append(f"# {i}. {c.summary}")
        if c.kind == "reassign" and plan.reassignment:
            out.extend(_reassignment_file_lines(plan.reassignment, plan.reassignment_file))
        for cmd in c.commands:  # shown escaped, a name with control characters would name another entity
            out.append(
                cmd if neutralise(cmd) == cmd else f"# not run (a name holds control characters): {cmd}"
            )
        out.append("")
    for w in plan.waits:
        out.append(f"# wait for {w.what}")
        out.append(f"#   re-check: {w.recheck}")
    for f in plan.followups:
        out.append(f"# afterwards: {f}")
    for n in plan.notes:
        out.append(f"# note: {n}")
    return "\n".join(neutralise(x) for x in out) + "\n"


def _reassignment_file_lines(reassignment: dict, name: str) -> list[str]:
    """Shell lines that write the reassignment JSON afresh, before the commands that read it: a
    file of that name left by an earlier plan (or a symlink in its place) is removed first, and
    a directory there stops the script (``rm`` fails under ``set -e``) before anything runs."""
    return [
        f"# {name}: written here, never a copy left by an earlier plan",
        f"rm -f -- {shlex.quote(name)}",
        f"cat > {shlex.quote(name)} <<'JSON'",
        *json.dumps(reassignment, indent=2).splitlines(),
        "JSON",
    ]


def _cell(values: list, count: int, width: int = 60) -> str:
    if not count:
        return "-"
    text = ", ".join(map(neutralise, values))
    if len(text) > width:
        text = text[: width - 3].rstrip(", ") + "..."
    more = count - len(values)
    return f"{count}: {text}" + (f" (+{more})" if more > 0 and not text.endswith("...") else "")


def controller_label(c) -> str:
    """The header's controller part: ZooKeeper's active controller, the KRaft quorum leader,
    or, on MSK KRaft, AWS's controllers (never a broker picked by DescribeCluster)."""
    if c.controllers_managed:
        return "KRaft controllers managed by AWS (MSK): not in the snapshot, not simulated"
    leader = next((v.node_id for v in c.controllers if v.is_leader), None)
    if c.controllers:
        return f"quorum leader {leader if leader is not None else 'none'}, {len(c.controllers)} voter(s)"
    if (c.metadata_mode or "").lower() == "kraft":
        return "quorum not collected: controllers not simulated"
    return f"controller {c.controller_id}" if c.controller_id is not None else "controller unknown"


def broker_role(b, voters: dict) -> str:
    if b.is_controller:
        return " (controller)"
    v = voters.get(b.broker_id)
    if v is not None:
        return " (quorum leader)" if v.is_leader else " (voter)"
    return ""


def outage_phrase(c) -> str:
    voters = len(c.controllers)
    return (
        f"restarting controller(s) {', '.join(map(str, c.outage_controllers))} is a planned metadata outage: a "
        f"KRaft quorum of {voters} voter(s) cannot lose one, so no order and no wait avoids it (MNT005); add "
        "controllers to reach 3 (KIP-853, CTL006) or announce the outage"
    )


def unsafe_phrase(c) -> str:
    parts = []
    if c.unsafe:
        parts.append(
            f"restarting broker(s) {', '.join(map(str, c.unsafe))} blocks acks=all producers (and, on Kafka "
            "3.7+, consumers), loses acknowledged data or takes partitions offline"
        )
    if c.unsafe_controllers:
        parts.append(
            f"restarting controller(s) {', '.join(map(str, c.unsafe_controllers))} leaves the KRaft quorum "
            "without a caught-up majority (MNT005)"
        )
    return "; ".join(parts)


def controller_lines(c) -> list[str]:
    if c.controllers_managed:
        return ["controllers: run by AWS on MSK KRaft (not part of this roll, not simulated)"]
    if not c.controllers:
        return []
    out = ["controllers (KRaft quorum voters):"]
    for v in c.controllers:
        role = "quorum leader" if v.is_leader else "voter"
        state = {"safe": "safe", "outage": f"OUTAGE: {v.reason}"}.get(v.verdict, f"UNSAFE: {v.reason}")
        out.append(f"  {v.node_id} ({role}{', also a broker' if v.is_broker else ''}): {state}")
    if c.controller_order:
        out.append(
            f"suggested controller order: {' -> '.join(map(str, c.controller_order))}  (quorum leader last)"
        )
    elif c.outage_controllers and not c.unsafe_controllers:
        out.append(
            "no controller order avoids the outage: each controller restart stops metadata until it is back"
        )
    return out


def acks1_line(c) -> str:
    """MNT006 beside the table: a warning, never a block."""
    return (
        f"acks=1 writes at risk (MNT006, warning, blocks nothing): restarting broker(s) "
        f"{', '.join(map(str, c.acks1_at_risk))} hands partitions to followers that lag persistently; the "
        "acks=1 writes they lack are lost (restart them once the followers catch up, or accept that loss)"
    )


def render_text(pre) -> str:
    lines: list[str] = []
    res = pre.result
    for item in res.incomplete:
        target = f" {item['target']}" if item.get("target") else ""
        lines.append(
            f"INCOMPLETE {item['cluster']}: source {item['source']}{target} failed: {item['message']}"
        )
    if res.incomplete:
        lines.append("")
    for c in pre.clusters:
        lines.extend(_cluster_lines(c))
    by_cluster: dict[str, list] = {}
    for f in res.findings:
        by_cluster.setdefault(f.cluster, []).append(f)
    for cluster, items in by_cluster.items():
        lines.append(f"{cluster} findings ({len(items)})")
        for f in items:
            lines.append(
                f"  {MARK[f.severity]} {f.rule} {f.name}  {f.resource_type} {f.resource_name}: {f.message}"
            )
        lines.append("")
    if pre.target_version:
        lines.extend(upgrade_lines(pre))
        lines.append("")
        unknown = {f.cluster for f in res.findings if f.rule == "CLI003"}
        lines.append(f"{upgrade_headline(pre)}, {len(unknown)} cluster(s) with unidentified clients (CLI003)")
    s = res.summary()
    counts = counts_line(s)
    status = "INCOMPLETE" if res.is_incomplete else "complete"
    verdict = pre.verdict
    extra = f", {res.exempted} exempted" if res.exempted else ""
    lines.append(
        f"preflight {verdict}: {len(pre.clusters)} cluster(s) ({status}, engine {res.engine}): {counts}{extra}"
    )
    lines.extend(f"note: {n}" for n in res.notes)
    return neutralise_lines(lines)  # no control character of a name reaches the terminal


def _cluster_lines(c) -> list[str]:
    """One cluster's block: its state, the broker table, the order, its verdict, the fix plan and the
    procedure; a blank line ends it."""
    lines: list[str] = []
    lines.append(
        f"{c.cluster}: restart preflight ({c.metadata_mode or 'mode unknown'}, {controller_label(c)})"
    )
    if c.unknown:
        lines.append("  cannot simulate restarts: the snapshot lacks")
        lines.extend(f"    - {m}" for m in c.missing)
        lines.append("")
        return lines
    if c.not_evaluated:
        lines.append('  not evaluated (never "safe"): the snapshot lacks')
        lines.extend(f"    - {m}" for m in c.missing)
    if c.top_reasons:
        lines.append(f"  {c.cluster} is unsafe to roll now, whatever the order:")
        lines.extend(f"    - {b}" for b in c.top_reasons)
    elif c.unsafe or c.unsafe_controllers:
        lines.append(f"  {c.cluster} is unsafe to roll now: {unsafe_phrase(c)}")
    elif c.outage_controllers:
        lines.append(f"  {c.cluster} can be rolled only as a planned outage: {outage_phrase(c)}")
    lines.extend(_broker_table(c))
    if c.acks1_not_evaluated:
        lines.append(f"  acks=1 loss (MNT006) not evaluated (n/e): {neutralise(c.acks1_not_evaluated)}")
    elif c.acks1_at_risk:
        lines.append(f"  {acks1_line(c)}")
    lines.extend(f"  {line}" for line in controller_lines(c))
    lines.append(_order_line(c))
    lines.append(_cluster_verdict_line(c))
    if c.plan is not None:
        lines.append("  fix plan (nothing was executed; review, then run):")
        lines.extend(f"    {line}" for line in plan_lines(c.plan))
    if c.procedure:
        head = (
            "procedure (the order is a snapshot, not a plan for the whole roll):"
            if c.safe_to_roll
            else "procedure, the controllers as a planned outage (the order is a snapshot, not a plan for the whole roll):"
            if c.verdict == "outage"
            else "procedure, once preflight says safe (the order is a snapshot, not a plan for the whole roll):"
        )
        lines.append(f"  {head}")
        lines.extend(f"    {i}. {step}" for i, step in enumerate(c.procedure, 1))
    lines.append("")
    return lines


def _broker_table(c) -> list[str]:
    """One row per broker: what restarting it would do."""
    lines: list[str] = []
    header = (
        "broker",
        "restart",
        "leaders",
        "blocked",
        "offline",
        "acks=1 loss",
        "topics hit",
        "groups hit",
    )
    rows = []
    voters = {v.node_id: v for v in c.controllers}
    for b in c.brokers:
        name = f"{b.broker_id}{broker_role(b, voters)}"
        rows.append(
            (
                name,
                b.verdict.upper() if b.verdict == "unsafe" else b.verdict,
                str(b.leaders),
                str(b.blocked_partitions),
                str(b.offline_partitions),
                "n/e" if c.acks1_not_evaluated else str(b.acks1_loss_partitions),
                _cell(b.topics, b.topic_count, 48),
                _cell(b.consumer_groups, b.consumer_group_count, 48),
            )
        )
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for r in [header, *rows]:
        lines.append("  " + "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
    return lines


def _order_line(c) -> str:
    """The suggested restart order, or why there is none."""
    if c.order:
        last = ", active controller last" if any(b.is_controller for b in c.brokers) else ""
        return (
            f"  suggested order of the {len(c.order)} safe broker(s): {' -> '.join(map(str, c.order))}"
            f"  (fewest leaders first{last})"
        )
    elif c.top_reasons:
        return "  no restart order: the cluster is not safe to roll (see above)"
    elif c.not_evaluated:
        return f"  no restart order: broker(s) {', '.join(map(str, c.not_evaluated))} could not be evaluated"
    else:
        return "  no restart order: no broker is safe to restart"


def _cluster_verdict_line(c) -> str:
    """The cluster's verdict for the brokers that were simulated."""
    scope = f"broker(s) {', '.join(str(b.broker_id) for b in c.brokers)}" if c.selected else "every broker"
    if c.unsafe or c.unsafe_controllers:
        return f"  NOT SAFE: {unsafe_phrase(c)} (see MNT findings)"
    elif c.outage_controllers and not c.top_reasons and not c.not_evaluated:
        return (
            f"  OUTAGE: {scope} can be restarted one at a time; the controllers only with a metadata outage"
        )
    elif c.top_reasons:
        return f"  {scope}: no restart hits a partition, but the cluster is not safe to roll (see above)"
    elif c.not_evaluated:
        return f"  UNKNOWN: broker(s) {', '.join(map(str, c.not_evaluated))} not evaluated (see above)"
    elif c.selected:
        return f"  {scope} can be restarted one at a time (only these were simulated)"
    else:
        return "  every broker can be restarted one at a time"


def render_html(pre) -> str:
    from auditor import __version__
    from auditor.render.html_render import environment

    template = environment().get_template("preflight.html.j2")
    title = (
        f"kafka-audit preflight: {pre.clusters[0].cluster}"
        if len(pre.clusters) == 1
        else "kafka-audit preflight"
    )
    return template.render(
        title=title,
        version=__version__,
        engine=pre.result.engine,
        clusters=pre.clusters,
        incomplete=pre.result.incomplete,
        findings=pre.result.findings,
        summary=pre.result.summary(),
        any_unsafe=pre.any_unsafe,
        any_outage=pre.any_outage,
        outage_phrase=outage_phrase,
        acks1_line=acks1_line,
        not_simulated=pre.incomplete,
        selected=pre.selected_brokers,
        target_version=pre.target_version,
        upgrade_blockers=pre.upgrade_blockers,
        upgrade_ready=pre.upgrade_ready,
        upgrade_headline=upgrade_headline(pre) if pre.target_version else None,
        upgrade_paths=pre.upgrades,
        upgrade_notes=upgrade_document(pre),
        patch_rules=[r for r in pre.patch_rules if r != "AUD001"],
        controller_label=controller_label,
        controller_lines=controller_lines,
        broker_role=broker_role,
        voter_map=lambda c: {v.node_id: v for v in c.controllers},
        findings_json=[
            json.dumps(f.evidence, sort_keys=True, ensure_ascii=False) for f in pre.result.findings
        ],
    )
