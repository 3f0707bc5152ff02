"""`kafka-audit preflight --format markdown`: the preflight as a GitHub-flavoured Markdown page (a
change ticket, a pull-request comment before a maintenance or an upgrade).

The verdict first, then per cluster the roll (what blocks it whatever the order, the brokers'
verdicts, the suggested order), then, with --target-version, each cluster's upgrade path (hops,
what blocks each, what can be done now), then the findings. Every value taken from a snapshot is
escaped as in the check report (auditor/render/markdown_render.py ``md``), and the page stays
within GitHub's comment limit (``cap_comment``).

``pre`` is an auditor.commands.preflight.PreflightResult, not imported (render/ never imports the
commands).
"""

from __future__ import annotations

from auditor.render.markdown_render import ICON, cap_comment, md


def render_markdown(pre) -> str:
    res = pre.result
    if pre.any_unsafe:
        verdict = "\u274c **Not safe to roll**"
    elif pre.incomplete:
        verdict = "\u26a0\ufe0f **Unknown**: the snapshot is incomplete or holds nothing to simulate"
    else:
        verdict = "\u2705 every simulated broker can be restarted one at a time"
    out = [f"### kafka-audit preflight: {verdict}", ""]
    if pre.target_version:
        from auditor.render.preflight_upgrade_render import upgrade_headline

        ready = pre.upgrade_ready
        icon = "\u274c" if ready is False else ("\u26a0\ufe0f" if ready is None else "\u2705")
        out += [f"{icon} {md(upgrade_headline(pre))}", ""]
    for item in res.incomplete:
        target = f" {md(item['target'])}" if item.get("target") else ""
        out.append(
            f"> {md(item['cluster'])}: source {md(item['source'])}{target} failed: {md(item['message'])}"
        )
    if res.incomplete:
        out.append("")
    for c in pre.clusters:
        out += _cluster(c)
    if pre.target_version:
        out += upgrade_markdown(pre)
    out += _findings(res)
    return cap_comment(out)


def _cluster(c) -> list[str]:
    out = [f"#### {md(c.cluster)} ({md(c.metadata_mode or 'mode unknown')})", ""]
    if c.unknown:
        return out + [
            "Restarts cannot be simulated: the snapshot lacks",
            *[f"- {md(m)}" for m in c.missing],
            "",
        ]
    if c.top_reasons:
        out += ["**Unsafe to roll now, whatever the order:**", *[f"- {md(b)}" for b in c.top_reasons], ""]
    out += [
        "| broker | restart | leaders | writes blocked | offline | topics hit |",
        "|--:|---|--:|--:|--:|---|",
    ]
    for b in c.brokers:
        topics = f"{b.topic_count}: {', '.join(b.topics)}" if b.topic_count else "-"
        out.append(
            f"| {b.broker_id} | {md(b.verdict)} | {b.leaders} | {b.blocked_partitions} | {b.offline_partitions} "
            f"| {md(topics)} |"
        )
    out.append("")
    if c.order:
        order = " \u2192 ".join(map(str, c.order))
        out.append(f"Suggested order of the safe brokers: {order}")
    elif c.brokers:
        out.append("No restart order: the cluster is not safe to roll.")
    if c.procedure:
        out += ["", *[f"{i}. {md(step)}" for i, step in enumerate(c.procedure, 1)]]
    return out + [""]


def upgrade_markdown(pre) -> list[str]:
    """Each cluster's path to the target: its hops as a numbered list, the blockers under each."""
    from auditor import kafka_upgrades

    entry = kafka_upgrades.release(pre.target_version)
    out = [
        f"#### Upgrade path to Kafka {md(pre.target_version)}",
        "",
        f"{md(entry['upgrade_notes']['heading'])} ([upgrade notes]({entry['upgrade_notes']['url']}))",
        "",
    ]
    for u in pre.upgrades:
        status = {"ready": "\u2705 ready", "not ready": "\u274c **not ready**"}.get(
            u.status, "\u26a0\ufe0f unknown"
        )
        running = f"{u.running or 'version unknown'}, {u.mode or 'mode unknown'}"
        out += [f"**{md(u.cluster)}** ({md(running)}) \u2192 {md(u.target)}: {status}", ""]
        for h in u.hops:
            mark = " **blocked**" if h.blocking else ""
            out.append(f"{h.number}. {md(h.title)}{mark}")
            out += [f"   - {md(step)}" for step in h.steps]
            out += [f"   - because **{f.rule}**: {md(f.message)}" for f in h.reasons]
            out += [f"   - {ICON[f.severity]} **{f.rule}** {md(f.message)}" for f in h.blocking + h.notes]
        out += [f"- {ICON[f.severity]} {f.rule} {md(f.message)}" for f in u.other]
        if u.now:
            out += ["", "Now:", *[f"- {md(line.strip())}" for line in u.now if line.strip()]]
        out += [f"> {md(n)}" for n in u.notes]
        out.append("")
    return out


def _findings(res) -> list[str]:
    if not res.findings:
        return ["No findings."]
    out = [
        f"#### Findings ({len(res.findings)})",
        "",
        "| severity | rule | cluster | resource | message |",
        "|---|---|---|---|---|",
    ]
    for f in res.findings:
        out.append(
            f"| {ICON[f.severity]} {f.severity} | {f.rule} | {md(f.cluster)} | {md(f.resource_type)} {md(f.resource_name)} "
            f"| {md(f.message)} |"
        )
    return out
