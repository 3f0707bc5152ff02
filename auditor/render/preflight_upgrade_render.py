"""The upgrade path of `kafka-audit preflight --target-version` in JSON and text, shared by the
text, JSON, Markdown and HTML renderers of the preflight (its own module: the roll's renderers
change apart from it).

``pre`` is an auditor.commands.preflight.PreflightResult, not imported (render/ never imports the
commands).
"""

from __future__ import annotations

from auditor.render.text_render import MARK


def upgrade_document(pre) -> dict | None:
    """The JSON of the upgrade paths: the target release's facts and each cluster's hops."""
    if not pre.target_version:
        return None
    from auditor import kafka_upgrades

    entry = kafka_upgrades.release(pre.target_version)
    return {
        "target": pre.target_version,
        "target_status": entry["status"],
        "target_release": entry["newest"],
        "upgrade_notes": entry["upgrade_notes"]["url"],
        "upgrades_from": entry["upgrade_notes"]["as_written"],
        "ready": pre.upgrade_ready,
        "clusters": [u.to_json() for u in pre.upgrades],
    }


def upgrade_headline(pre) -> str:
    from auditor import kafka_upgrades

    entry = kafka_upgrades.release(pre.target_version)
    ready = pre.upgrade_ready
    state = "NOT ready" if ready is False else ("unknown" if ready is None else "ready")
    blocking = pre.upgrade_blockers
    release = entry["newest"] + ("" if entry["status"] == "released" else ", unreleased: its release branch")
    return (
        f"upgrade to Kafka {pre.target_version} ({release}): {state}: {len(blocking)} blocking finding(s), "
        f"{sum(u.status == 'not ready' for u in pre.upgrades)} of {len(pre.upgrades)} cluster(s) not ready"
    )


def upgrade_lines(pre) -> list[str]:
    """The text of each cluster's path: hops, what blocks each, what can be done now."""
    if not pre.target_version:
        return []
    from auditor import kafka_upgrades

    entry = kafka_upgrades.release(pre.target_version)
    out = [
        f"upgrade path to Kafka {pre.target_version} (upgrade notes: {entry['upgrade_notes']['heading']}; "
        f"{entry['upgrade_notes']['url']})"
    ]
    for u in pre.upgrades:
        running = u.running or "version unknown"
        where = f"{running}, {u.mode or 'mode unknown'}" + (f", {u.platform}" if u.platform else "")
        mv = f", metadata.version {u.metadata_version}" if u.metadata_version else ""
        out.append(
            f"  {u.cluster} ({where}{mv}) -> {u.target}: {u.status.upper() if u.status != 'ready' else 'ready'}"
        )
        for h in u.hops:
            mark = (
                "BLOCKED"
                if h.blocking
                else {"none": "n/a", "unknown": "n/a", "unavailable": "NOT OFFERED"}.get(h.kind, "to do")
            )
            out.append(f"    hop {h.number} [{mark}] {h.title}")
            for f in h.reasons:
                out.append(f"        because {f.rule} ({f.severity}): {f.message}")
            out.extend(f"        $ {step}" if _is_command(step) else f"        - {step}" for step in h.steps)
            for f in h.blocking:
                out.append(f"        BLOCKS {f.rule} ({f.severity}) {f.resource_name}: {f.message}")
            for f in h.notes:
                out.append(
                    f"        {MARK[f.severity]} {f.rule} ({f.severity}) {f.resource_name}: {f.message}"
                )
        for f in u.other:
            out.append(f"    {MARK[f.severity]} {f.rule} ({f.severity}) {f.resource_name}: {f.message}")
        if u.now:
            out.append("    now:")
            out.extend(f"      {line}" for line in u.now)
        out.extend(f"    note: {n}" for n in u.notes)
    return out


def _is_command(step: str) -> bool:
    return step.startswith(("aws ", "kafka-", "bin/"))
