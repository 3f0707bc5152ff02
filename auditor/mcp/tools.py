"""The tools: each a thin call into auditor/commands/ (or the lint layer) returning what the
command line returns with ``--format json`` (auditor/render/json_render.py,
preflight_render.py) as structured content and the command's own text report as text.

Nothing here decides anything about Kafka: which rules run, what a finding says, whether a
broker is safe to restart, what the exit code is, all come from the commands the CLI runs.
What is added here is only what a server needs: paths confined to the served roots
(auditor/mcp/roots.py), live clusters taken by name from the inventory the server was started
with (never an address, a credential file or an ARN from the model), the size limit
(auditor/mcp/results.py), and one-line errors.

``TOOLS`` is the one list of tools, in the order clients list them: each method's docstring is
the tool's description, its signature the input schema (no other argument is accepted), its
``@tool`` declaration the name, the output schema (auditor/mcp/schemas.py) and whether it
reaches a live cluster (it then exists only with ``--allow-live``). Every tool is annotated
read-only, non-destructive and idempotent; none runs a shell or a fix plan.
"""

from __future__ import annotations

import contextlib
import functools
import tempfile
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from auditor.config import AuditConfig, with_rule_choice
from auditor.errors import AuditorError, UsageError
from auditor.escape import neutralise
from auditor.mcp import schemas
from auditor.mcp.results import PREFLIGHT_MEANINGS, cited, cited_lines, exit_of, tool_result
from auditor.mcp.roots import Roots, displayed, relative, staged
from auditor.sources import Sources

FailOn = Literal["info", "warning", "error", "critical", "never"]

PathArg = Annotated[
    str,
    Field(
        description="A path under the server's roots: relative to a root (as list_clusters shows it) or absolute"
    ),
]
SelectArg = Annotated[
    list[str] | None,
    Field(
        description="Rules to run: codes, names or code prefixes (REP, PAR001, min-isr-equals-rf); replaces the config's select"
    ),
]
IgnoreArg = Annotated[
    list[str] | None,
    Field(description="Rules not to run (codes, names or prefixes); added to the config's ignore"),
]
FailOnArg = Annotated[
    FailOn | None,
    Field(
        description="Lowest severity that makes the run fail (exit 1), as --fail-on; default: the config's, else error"
    ),
]
ClusterArg = Annotated[
    str, Field(description="A cluster of the server's inventory, by name (list_clusters lists them)")
]


class InlineFile(BaseModel):
    """A file given by its contents: linted under its name, never written anywhere but a private
    temporary directory."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(
        description="Its file name, relative (topics/orders.yaml, broker-1.properties, main.tf)"
    )
    content: str = Field(description="The whole file")


FilesArg = Annotated[
    list[InlineFile] | None,
    Field(
        description="Files given by their contents instead of paths (the format is recognised by name and content)"
    ),
]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    output: dict
    # True: reaches a live cluster, offered only with --allow-live; False: offered only without it
    # (the variant a live one replaces); None: always.
    live: bool | None = None
    method: str = ""


TOOLS: list[ToolSpec] = []


def tool(name: str, title: str, output: dict, *, live: bool | None = None):
    """Declare a method of :class:`Tools` a tool (registered in ``TOOLS``, in this order)."""

    def mark(method):
        TOOLS.append(ToolSpec(name, title, output, live, method.__name__))
        return method

    return mark


@dataclass
class Served:
    """What the server was started with: the only sources a tool reads."""

    roots: Roots
    config: AuditConfig = field(default_factory=AuditConfig)
    inventory: object | None = None  # auditor.collectors.inventory.Inventory
    live: bool = False
    max_bytes: int = 128 * 1024


class ToolFailure(Exception):
    """A tool's one-line error (the file or source it names, never a traceback)."""


def one_line(text) -> str:
    return neutralise(" ".join(str(text).split()))


class Tools:
    def __init__(self, served: Served):
        self.served = served
        self.roots = served.roots

    # --- the tools, in the order they are listed ---------------------------------------------------

    @tool("list_rules", "List the audit rules", schemas.RULES)
    def list_rules(
        self,
        category: Annotated[
            str | None, Field(description="Only this category: a prefix (REP) or name")
        ] = None,
        command: Annotated[
            Literal["check", "fleet", "preflight", "upgrade", "lint", "lint-against"] | None,
            Field(description="Only the rules this command runs"),
        ] = None,
    ):
        """Every rule kafka-audit judges a Kafka cluster or change by: code, name, default severity,
        category, the commands that run it, its one-line summary (kafka-audit rules list). A rule
        encodes Kafka's or AWS's documented behaviour with its sources: cite it by code, and get its
        whole documentation and references with explain_rule."""
        from auditor.commands.rules import rule_json
        from auditor.registry import load_rules

        rules = sorted(load_rules().values(), key=lambda r: r.code)
        if category:
            wanted = category.strip().upper()
            rules = [r for r in rules if r.code.startswith(wanted) or r.category.upper() == wanted]
        if command:
            rules = [r for r in rules if command in r.commands]
        keys = ("code", "name", "severity", "category", "scope", "commands", "summary")
        listed = [{k: rule_json(r)[k] for k in keys} for r in rules]
        text = [f"{r['code']} {r['name']} ({r['severity']}, {r['category']}): {r['summary']}" for r in listed]
        text.append(f"{len(listed)} rule(s)")
        return {"rules": listed}, "\n".join(text)

    @tool("explain_rule", "Explain one rule, with its references", schemas.RULE)
    def explain_rule(
        self, rule: Annotated[str, Field(description="A rule code (REP002) or name (min-isr-equals-rf)")]
    ):
        """A rule's whole documentation, as kafka-audit rules explain prints it: what it checks, why
        (the incident or Kafka behaviour behind it), the remediation, an example, its parameters and
        its references (Kafka source files, KIPs, AWS documentation). Quote these references when
        citing the rule; do not substitute thresholds of your own."""
        from auditor.commands.rules import render_one, rule_json
        from auditor.registry import resolve

        matches = resolve(rule, "explain_rule")
        if len(matches) != 1:
            raise UsageError(f"explain_rule: '{rule}' names {len(matches)} rules; give one code or name")
        return rule_json(matches[0]), render_one(matches[0], "text")

    @tool("lint_files", "Lint Kafka configuration files (change review)", schemas.LINT)
    def lint_files(
        self,
        paths: Annotated[
            list[str] | None,
            Field(
                description="Files or directories under the roots (directories are walked, as kafka-audit lint does)"
            ),
        ] = None,
        files: FilesArg = None,
        against: Annotated[
            str | None,
            Field(
                description="A snapshot directory under the roots: lint the change against the cluster it lands on"
            ),
        ] = None,
        select: SelectArg = None,
        ignore: IgnoreArg = None,
        fail_on: FailOnArg = None,
        strict: Annotated[
            bool,
            Field(
                description="A file nothing is recognised in, or that cannot be read, is an error (--strict)"
            ),
        ] = False,
    ):
        """kafka-audit lint on proposed Kafka configuration: server.properties, topic files (plain,
        Strimzi, jikkou, topicctl, kafka-gitops, JulieOps), Terraform (HCL and plan JSON),
        CloudFormation, Strimzi/CFK resources, Helm values. Give paths under the roots, or files by
        their contents. Returns the same JSON as lint --format json (every finding at its file:line
        with rule, severity, message, evidence), whether the run fails at fail_on (exit), the notes
        lint prints, and the cited rules' references."""
        cfg = self._rules(select, ignore)
        if not paths and not files:
            raise UsageError("lint_files: give paths (under the roots) or files (name and content)")
        with self._inputs(paths or [], files or []) as (targets, extra, shown):
            snapshot = self.roots.directory(against) if against else None
            with self.roots.confined(*extra):
                result = self._lint(targets, snapshot, cfg, strict)
        return self._audit(result, fail_on or cfg.fail_on, lint=True, schema_extra={}, display=shown)

    @tool("lint_change", "Lint a change: only the findings it introduces", schemas.LINT_CHANGE)
    def lint_change(
        self,
        base: Annotated[
            str | None,
            Field(description="The configuration before the change: a file or directory under the roots"),
        ] = None,
        head: Annotated[
            str | None,
            Field(description="The configuration after the change: a file or directory under the roots"),
        ] = None,
        base_files: Annotated[
            list[InlineFile] | None, Field(description="The files before the change, by contents")
        ] = None,
        head_files: Annotated[
            list[InlineFile] | None, Field(description="The files after the change, by contents")
        ] = None,
        against: Annotated[
            str | None,
            Field(description="A snapshot directory under the roots: the cluster the change lands on"),
        ] = None,
        select: SelectArg = None,
        ignore: IgnoreArg = None,
        fail_on: FailOnArg = None,
    ):
        """Lint base and head and return only the findings the change introduces: head's findings
        whose fingerprint (rule, cluster, resource) and file are not among base's, as
        `lint BASE --write-baseline b.json` then `lint HEAD --baseline b.json` gives them. Files are
        compared by their names relative to base and head. baseline.stale lists what the change
        fixes. exit says whether the introduced findings fail at fail_on."""
        from auditor.baseline import Baseline, Entry
        from auditor.baseline import apply as apply_baseline
        from auditor.causes import from_findings

        cfg = self._rules(select, ignore)
        if not (base or base_files) or not (head or head_files):
            raise UsageError("lint_change: give base (or base_files) and head (or head_files)")
        snapshot = self.roots.directory(against) if against else None
        runs = []
        for given, inline in ((base, base_files), (head, head_files)):
            with self._inputs([given] if given else [], inline or [], relative_to_input=True) as (
                targets,
                extra,
                shown,
            ):
                with self.roots.confined(*extra):
                    result = self._lint(targets, snapshot, cfg, False)
                runs.append(self._relocated(result, shown))
        old, new = runs
        entries = {Entry.of(f).key: Entry.of(f) for f in old.findings}
        before = len(new.findings)
        new.findings, outcome = apply_baseline(
            Baseline("base", entries), new.findings, {c["name"] for c in new.clusters}
        )
        new.baseline = outcome
        new.causes = from_findings(new.findings)  # the root causes of the findings kept
        new.notes.append(
            f"the change introduces {len(new.findings)} finding(s) and fixes {len(outcome.stale)}"
        )
        change = {
            "base_findings": len(old.findings),
            "head_findings": before,
            "introduced": len(new.findings),
            "fixed": len(outcome.stale),
        }
        return self._audit(
            new, fail_on or cfg.fail_on, lint=True, schema_extra={"change": change}, display=lambda t: t
        )

    @tool("check_snapshot", "Audit a snapshot (or a fleet of them)", schemas.CHECK)
    def check_snapshot(
        self,
        path: Annotated[
            str,
            Field(
                description="A snapshot directory under the roots, or a directory holding several (dt=.../cluster=.../)"
            ),
        ],
        select: SelectArg = None,
        ignore: IgnoreArg = None,
        fail_on: FailOnArg = None,
    ):
        """kafka-audit check on collected snapshots (embedded DuckDB): every cluster rule, the same
        JSON as check --format json (clusters with grades and what was not evaluated, findings worst
        first with evidence and fingerprint, root causes), the exit code check gives, and the cited
        rules' references. An incomplete snapshot (a source failed) is exit 3, never clean."""
        from auditor.commands.check import run_check

        cfg = self._rules(select, ignore)
        target = self.roots.directory(path)
        with self.roots.confined():
            result = run_check(target, Sources(), cfg)
        return self._audit(result, fail_on or cfg.fail_on)

    @tool(
        "preflight",
        "Can each broker be restarted now (an MSK patch, a rolling restart)?",
        schemas.PREFLIGHT,
        live=False,
    )
    def preflight(
        self,
        snapshot: Annotated[
            str, Field(description="A snapshot directory under the roots (list_clusters lists them)")
        ],
        brokers: Annotated[
            list[int] | None, Field(description="Simulate only these broker ids (--broker)")
        ] = None,
        target_version: Annotated[
            str | None,
            Field(
                description="Also judge readiness to upgrade to this Kafka version (--target-version: 4.0)"
            ),
        ] = None,
        ignore: IgnoreArg = None,
    ):
        """kafka-audit preflight: simulates each broker's restart against the current ISR and says
        per broker (and KRaft controller) safe, unsafe or not evaluated; what blocks the roll of the
        whole cluster; what the snapshot lacks; a fix plan (exact commands, for a person to review:
        this server never runs them) proven by re-simulating it; the patch-relevant findings with
        their rules and references. Same JSON as preflight --format json, plus fix_plan_text
        (preflight --fix-plan) and exit (0 safe, 1 unsafe, 3 incomplete: never call that safe)."""
        return self._preflight(self.roots.directory(snapshot), brokers, target_version, ignore)

    @tool(
        "preflight",
        "Can each broker be restarted now (an MSK patch, a rolling restart)?",
        schemas.PREFLIGHT,
        live=True,
    )
    def preflight_live(
        self,
        snapshot: Annotated[
            str | None, Field(description="A snapshot directory under the roots (list_clusters lists them)")
        ] = None,
        cluster: Annotated[
            str | None,
            Field(
                description="Or a cluster of the server's inventory, by name: collected now (read-only), then simulated"
            ),
        ] = None,
        brokers: Annotated[
            list[int] | None, Field(description="Simulate only these broker ids (--broker)")
        ] = None,
        target_version: Annotated[
            str | None,
            Field(
                description="Also judge readiness to upgrade to this Kafka version (--target-version: 4.0)"
            ),
        ] = None,
        ignore: IgnoreArg = None,
    ):
        """kafka-audit preflight on a snapshot under the roots, or on a cluster of the server's
        inventory collected now, read-only, through the sources the inventory names (as
        kafka-audit collect --inventory, with its timeouts; collected says how that went). It
        simulates each broker's restart against the current ISR and says per broker (and KRaft
        controller) safe, unsafe or not evaluated; what blocks the roll of the whole cluster; what
        the snapshot lacks; a fix plan (exact commands, for a person to review: this server never
        runs them) proven by re-simulating it; the patch-relevant findings with their rules and
        references. Same JSON as preflight --format json, plus fix_plan_text (preflight --fix-plan)
        and exit (0 safe, 1 unsafe, 3 incomplete: never call that safe)."""
        if (snapshot is None) == (cluster is None):
            raise UsageError(
                "preflight: give snapshot (a path under the roots) or cluster (a name of the inventory), one of them"
            )
        if snapshot is not None:
            return self.preflight(snapshot, brokers, target_version, ignore)
        entry, directory, collected, workdir = self._collect(cluster)
        try:
            doc, text = self._preflight(directory, brokers, target_version, ignore, confined=False)
        finally:
            workdir.cleanup()
        doc["collected"] = collected
        return entry.hide_env_values(doc), entry.hide_env_values(text)

    @tool(
        "check_cluster",
        "Collect a live cluster of the inventory now, then audit it",
        schemas.CHECK_LIVE,
        live=True,
    )
    def check_cluster(
        self,
        cluster: ClusterArg,
        select: SelectArg = None,
        ignore: IgnoreArg = None,
        fail_on: FailOnArg = None,
    ):
        """kafka-audit check on a cluster of the server's inventory, collected now, read-only,
        through the sources the inventory names (with its timeouts and deadline). Same JSON as
        check --format json, plus collected (sources that failed: the audit is then incomplete,
        exit 3)."""
        from auditor.commands.check import run_check

        cfg = self._rules(select, ignore)
        entry, directory, collected, workdir = self._collect(cluster)
        try:
            result = run_check(directory, Sources(), cfg)
        finally:
            workdir.cleanup()
        doc, text = self._audit(result, fail_on or cfg.fail_on)
        doc["collected"] = collected
        return entry.hide_env_values(doc), entry.hide_env_values(text)

    @tool("cluster_health", "Is a live cluster healthy again (one round of wait)?", schemas.HEALTH, live=True)
    def cluster_health(
        self,
        cluster: ClusterArg,
        broker_id: Annotated[
            int | None, Field(description="The broker just restarted: registered and back in every ISR?")
        ] = None,
        leadership: Annotated[
            bool,
            Field(description="With broker_id: also leading every partition it is the preferred replica of"),
        ] = False,
    ):
        """One round of kafka-audit wait, never blocking: collects the live partition state once
        (read-only) and says whether the cluster is healthy: no under-replicated, under-min-ISR or
        offline partition; with broker_id, that broker registered and back in every ISR. What a
        rolling restart checks before the next broker; call it again to poll."""
        from auditor.collectors.fleet_collect import cluster_deadline
        from auditor.commands.collect import inventory_entry
        from auditor.commands.wait import collect_state, health_round, partition_state_sources

        if leadership and broker_id is None:
            raise UsageError("cluster_health: leadership needs broker_id")
        entry = inventory_entry(self._inventory(), cluster)
        sources = partition_state_sources(entry.sources)
        if sources is None:
            raise UsageError(
                f"cluster_health: {cluster}: the inventory gives it no source of live partition state "
                "(bootstrap_servers, zookeeper or msk)"
            )
        done: dict = {}

        def one_round():
            done["health"] = health_round(
                lambda: collect_state(sources, leadership=leadership), broker=broker_id, leadership=leadership
            )

        worker = threading.Thread(target=one_round, name=f"mcp-health-{cluster[:40]}", daemon=True)
        worker.start()
        deadline = cluster_deadline(entry)
        worker.join(deadline)
        if "health" in done:
            health = done["health"]
        else:
            from auditor.commands.wait import Health

            health = Health(errors=[f"collect: no answer within the cluster's deadline ({deadline:g} s)"])
        from auditor import exitcodes

        code = exitcodes.OK if health.healthy else exitcodes.WAIT_TIMEOUT
        doc = {"cluster": cluster, "health": health.to_json(broker_id), "exit": exit_of(code)}
        return entry.hide_env_values(doc), entry.hide_env_values(f"{cluster}: {health.describe(broker_id)}")

    @tool("fleet_summary", "The summary of a weekly fleet run", schemas.FLEET_SUMMARY)
    def fleet_summary(
        self,
        path: Annotated[
            str,
            Field(
                description="A findings directory under the roots (fleet --out), or one run_date=... directory"
            ),
        ],
        run_date: Annotated[
            str | None, Field(description="The run (YYYY-MM-DD); default: the latest")
        ] = None,
        cluster: Annotated[str | None, Field(description="Only this cluster's row and findings")] = None,
        fail_on: Annotated[
            FailOn, Field(description="Lowest severity that makes the run fail (exit 1), as --fail-on")
        ] = "error",
    ):
        """A fleet run's summary as kafka-audit fleet --format json printed it (read from the
        _summary.json fleet --out wrote; no engine, no Spark started): per cluster counts, score and
        grade, per rule the clusters affected, the first findings of each rule, the root causes,
        week-over-week new/resolved counts."""
        from auditor.commands.fleet import read_summary

        directory = self.roots.directory(path)
        with self.roots.confined():
            summary_path, doc, runs = read_summary(directory, run_date)
        if cluster is not None:
            names = [c.get("name") for c in doc["clusters"] if isinstance(c, dict)]
            if cluster not in names:
                raise UsageError(f"{self.roots.shown(summary_path)}: no cluster '{cluster}' in this run")
            doc["clusters"] = [c for c in doc["clusters"] if c.get("name") == cluster]
            doc["top"] = [
                f for f in doc.get("top") or [] if isinstance(f, dict) and f.get("cluster") == cluster
            ]
        totals = doc["totals"]
        lines = [f"fleet run {doc.get('run_date')} ({doc.get('engine')}): {len(doc['clusters'])} cluster(s)"]
        if isinstance(totals, dict):
            lines.append(
                "totals: "
                + ", ".join(f"{totals.get(k)} {k}" for k in ("critical", "error", "warning", "info"))
            )
        for c in doc["clusters"]:
            if isinstance(c, dict):
                counts = c.get("counts") or {}
                lines.append(
                    f"  {c.get('grade')} {c.get('score')}  {c.get('name')}: "
                    + ", ".join(f"{counts.get(k, 0)} {k}" for k in ("critical", "error", "warning", "info"))
                )
        for f in doc.get("top") or []:
            if isinstance(f, dict):
                res = f.get("resource") or {}
                lines.append(
                    f"  {f.get('severity')} {f.get('rule')} {f.get('name')} {f.get('cluster')} "
                    f"{res.get('type')} {res.get('name')}: {f.get('message')}"
                )
        from auditor import exitcodes
        from auditor.severity import fails

        fail_on = fail_on or self.served.config.fail_on
        # As FleetResult.failing: a rule of the run at or above fail_on.
        failing = fails(
            (r["severity"] for r in doc["rules"] if isinstance(r, dict) and "severity" in r), fail_on
        )
        code = exitcodes.for_result(failing=failing, incomplete=bool(doc.get("incomplete")))
        codes = {f.get("rule") for f in doc.get("top") or [] if isinstance(f, dict)}
        rules = cited(c for c in codes if isinstance(c, str))
        out = {
            "path": self.roots.shown(summary_path),
            "runs": runs,
            "summary": doc,
            "exit": exit_of(code, fail_on),
            "rules": rules,
        }
        return out, "\n".join(lines + cited_lines(rules))

    @tool("snapshot_info", "What a snapshot holds: cluster, sources, errors, tables", schemas.SNAPSHOT_INFO)
    def snapshot_info(
        self,
        path: Annotated[
            str, Field(description="A snapshot directory under the roots, or a directory holding several")
        ],
    ):
        """Each snapshot at or below path: its manifest (cluster identity and fields, when and by
        what it was collected, every source with its status, the errors of failed sources, labels,
        provenance), its tables with their row counts, and whether it is incomplete (a failed source:
        every audit of it is exit 3, AUD001)."""
        from auditor.snapshot.io import discover, open_snapshot

        directory = self.roots.directory(path)
        out, lines = [], []
        with self.roots.confined():
            for found in discover(directory):
                ref = open_snapshot(found, deep=False)
                tables = {
                    name: {"file": Path(file).name, "rows": _rows(file, fmt)}
                    for name, (file, fmt) in ref.files.items()
                }
                manifest = ref.manifest.to_json()
                incomplete = bool(ref.manifest.errors)
                out.append(
                    {
                        "path": self.roots.shown(found),
                        "manifest": manifest,
                        "tables": tables,
                        "incomplete": incomplete,
                    }
                )
                lines.append(
                    f"{self.roots.shown(found)}: {ref.manifest.cluster_name} collected {ref.manifest.collected_at}"
                    f"{' INCOMPLETE' if incomplete else ''}: "
                    + ", ".join(f"{n} {t['rows']}" for n, t in sorted(tables.items()))
                )
                lines.extend(f"  error: {e.get('source')}: {e.get('message')}" for e in ref.manifest.errors)
        return {"snapshots": out}, "\n".join(lines)

    @tool("list_clusters", "The clusters this server can audit", schemas.CLUSTERS)
    def list_clusters(self):
        """The clusters this server can audit: the snapshots under its roots (path, cluster, when
        collected, whether incomplete, the newest of each cluster marked) for check_snapshot,
        preflight and snapshot_info; and, when it was started with an inventory, the inventory's
        clusters by name (their labels and which kinds of source they have, never addresses or
        credentials) for the live tools, which exist only when live is true."""
        from auditor.snapshot.io import SnapshotRef, discover, newest_per_cluster, read_manifest

        notes, refs = [], []
        with self.roots.confined():
            for root in self.roots.directories:
                try:
                    found = discover(root)
                except AuditorError:
                    continue  # no snapshot under this root
                for d in found[:MAX_SNAPSHOTS_LISTED]:
                    try:
                        refs.append(SnapshotRef(str(d), read_manifest(d), {}))
                    except AuditorError as e:
                        notes.append(self.roots.display(str(e)))
        newest = {id(r) for r in newest_per_cluster(refs)[0]}
        snapshots = [
            {
                "path": self.roots.shown(Path(r.path)),
                "cluster": r.manifest.cluster_name,
                "cluster_id": r.manifest.cluster_id,
                "collected_at": r.manifest.collected_at,
                "incomplete": bool(r.manifest.errors),
                "newest": id(r) in newest,
                "platform": r.manifest.cluster.get("platform"),
                "environment": r.manifest.cluster.get("environment"),
            }
            for r in refs
        ]
        inventory = None
        if self.served.inventory is not None:
            inv = self.served.inventory
            errors = []
            clusters = inv.clusters
            if inv.msk_discovery is not None and self.served.live:
                from auditor.commands.collect import inventory_clusters

                clusters, found_errors = inventory_clusters(inv)
                errors = [str(e.get("message", "")) for e in found_errors]
            inventory = {
                "file": Path(inv.path).name,
                "clusters": [
                    {
                        "name": e.name,
                        "labels": dict(e.labels),
                        "sources": _source_kinds(e),
                        "kafka_version": e.kafka_version,
                    }
                    for e in clusters
                ],
                "errors": errors,
            }
        roots = [Path(d).name or d for d in self.roots.directories]
        lines = [
            f"roots: {', '.join(roots)} (paths are relative to a root); "
            f"live tools: {'on' if self.served.live else 'off'}"
        ]
        lines += [
            f"snapshot {s['path']}: {s['cluster']} ({s['collected_at']}{', incomplete' if s['incomplete'] else ''}"
            f"{'' if s['newest'] else ', older'})"
            for s in snapshots
        ]
        if inventory is not None:
            lines += [
                f"inventory {inventory['file']}: {c['name']} ({', '.join(c['sources'])})"
                for c in inventory["clusters"]
            ]
        doc = {
            "live": self.served.live,
            "roots": roots,
            "inventory": inventory,
            "snapshots": snapshots,
            "notes": notes,
        }
        return doc, "\n".join(lines + [f"note: {n}" for n in notes])

    # --- helpers -------------------------------------------------------------------------------------

    def _rules(self, select, ignore) -> AuditConfig:
        return with_rule_choice(self.served.config, select, ignore, "select/ignore")

    def _inventory(self):
        if self.served.inventory is None:  # (the live tools exist only with one)
            raise UsageError("this server was started without --inventory: no live cluster to read")
        return self.served.inventory

    def _inputs(self, paths: list[str], files: list, *, relative_to_input: bool = False):
        """The lint targets of paths (under the roots, walked files checked) and inline files
        (staged): (targets, extra directories reads may use, how paths are shown)."""
        roots = self.roots
        return _Inputs(roots, paths, files, relative_to_input)

    def _lint(self, targets: list[Path], against: Path | None, cfg: AuditConfig, strict: bool):
        from auditor.lint import run_lint

        return run_lint(targets, against=str(against) if against else None, config=cfg, strict=strict)

    def _relocated(self, result, shown):
        """``result`` with each finding's file shown as ``shown`` shows it (lint_change compares
        base's and head's files by these names)."""
        import dataclasses

        result.findings = [
            dataclasses.replace(f, location={**f.location, "file": shown(f.location["file"])})
            if f.location and f.location.get("file")
            else f
            for f in result.findings
        ]
        result.files = [shown(f) for f in result.files]
        result.skipped = [shown(f) for f in result.skipped]
        result.notes = [shown(n) for n in result.notes]
        return result

    def _audit(
        self, result, fail_on: str, *, lint: bool = False, schema_extra: dict | None = None, display=None
    ):
        """An AuditResult as check/lint --format json and their text reports give it, with exit,
        notes and the cited rules."""
        from auditor import exitcodes
        from auditor.render import json_render

        doc = json_render.document(result)
        code = exitcodes.for_result(failing=result.failing(fail_on), incomplete=result.is_incomplete)
        rules = cited(f.rule for f in result.findings)
        doc["exit"] = exit_of(code, fail_on)
        doc["rules"] = rules
        doc["notes"] = list(result.notes)
        if lint:
            from auditor.render.lint_text import render as render_lint_text

            doc["files"] = list(result.files)
            doc["skipped"] = list(result.skipped)
            text = render_lint_text(result)
        else:
            from auditor.render.text_render import render as render_text

            text = render_text(result)
        doc.update(schema_extra or {})
        text = text.rstrip("\n") + "\n" + "\n".join(cited_lines(rules))
        if display is not None:
            doc, text = displayed(doc, display), display(text)
        return doc, text

    def _preflight(self, directory: Path, brokers, target_version, ignore, confined: bool = True):
        from auditor import exitcodes
        from auditor.commands.preflight import preflight_of
        from auditor.render.preflight_render import document, fix_plan_file, render_text

        cfg = self._rules(None, ignore)
        with self.roots.confined() if confined else contextlib.nullcontext():
            pre = preflight_of(
                directory, Sources(), cfg, brokers=brokers or None, target_version=target_version
            )
        doc = document(pre)
        code = exitcodes.for_result(
            failing=pre.any_unsafe or bool(pre.upgrade_blockers), incomplete=pre.incomplete
        )
        rules = cited(f.rule for f in pre.result.findings)
        doc["exit"] = exit_of(code, meanings=PREFLIGHT_MEANINGS)
        doc["rules"] = rules
        doc["notes"] = list(pre.result.notes)
        planned = any(c.plan is not None for c in pre.clusters)
        doc["fix_plan_text"] = fix_plan_file(pre) if planned else None
        text = render_text(pre).rstrip("\n") + "\n" + "\n".join(cited_lines(rules))
        return doc, text

    def _collect(self, cluster: str):
        """A cluster of the inventory collected now into a private directory, as `collect
        --inventory` does: (entry, its snapshot directory, what the collection says, the directory
        to clean up)."""
        from auditor.commands.collect import collect_named, inventory_entry

        inv = self._inventory()
        entry = inventory_entry(inv, cluster)
        workdir = tempfile.TemporaryDirectory(prefix="kafka-audit-mcp-")
        try:
            outcome = collect_named(inv, cluster, Path(workdir.name))
        except BaseException:
            workdir.cleanup()
            raise
        collected = {
            "cluster": cluster,
            "ok": outcome.ok,
            "seconds": round(outcome.seconds, 1),
            "errors": [
                {"source": str(e.get("source")), "message": str(e.get("message"))} for e in outcome.errors
            ],
            "notes": list(outcome.notes),
        }
        return entry, Path(outcome.directory), collected, workdir


MAX_SNAPSHOTS_LISTED = 1000


class _Inputs:
    """lint's targets for one call: paths resolved under the roots (their walk checked), inline
    files staged; how the result shows paths (relative to their root, or to the given base/head)."""

    def __init__(self, roots: Roots, paths: list[str], files: list, relative_to_input: bool):
        self.roots, self.paths, self.files, self.relative_to_input = roots, paths, files, relative_to_input
        self._stage = None

    def __enter__(self):
        targets = [self.roots.file_or_directory(p) for p in self.paths]
        self.roots.check_lint_walk(targets)
        shown_from = list(self.roots.directories)
        extra: list[Path] = []
        if self.relative_to_input:
            shown_from = [str(t if t.is_dir() else t.parent) for t in targets]
        if self.files:
            self._stage = staged([{"name": f.name, "content": f.content} for f in self.files])
            directory, staged_paths = self._stage.__enter__()
            targets += staged_paths
            extra.append(directory)
            shown_from.append(str(directory))
        return targets, extra, lambda text: relative(text, shown_from)

    def __exit__(self, *exc):
        if self._stage is not None:
            self._stage.__exit__(*exc)
        return False


def _rows(file: str, fmt: str) -> int:
    from auditor import safe_io

    if fmt == "parquet":
        import pyarrow.parquet as pq

        return int(pq.ParquetFile(file).metadata.num_rows)
    with safe_io.open_text(file, limit=None) as fh:
        return sum(1 for line in fh if line.strip())


def _source_kinds(entry) -> list[str]:
    kinds = [
        kind
        for kind, present in (
            ("bootstrap_servers", entry.bootstrap_servers),
            ("zookeeper", entry.zookeeper),
            ("msk", entry.msk_cluster_arn),
            ("broker_configs", entry.broker_configs),
            ("metrics", entry.metrics or entry.templates),
        )
        if present
    ]
    return kinds


def bound(tools: Tools, spec: ToolSpec):
    """The tool's callable: the method, its result made a CallToolResult within the size limit,
    shown relative to the roots, and every failure one line (a traceback only on stderr)."""
    from mcp.server.mcpserver.exceptions import ToolError

    method = getattr(tools, spec.method)

    @functools.wraps(method)
    def call(**arguments):
        try:
            doc, text = method(**arguments)
            doc = displayed(doc, tools.roots.display)
            text = tools.roots.display(text)
        except ToolError:
            raise
        except AuditorError as e:  # a usage or input error: names the file or source
            raise ToolError(tools.roots.display(one_line(e))) from None
        except OSError as e:  # a read that failed outside the project's own messages
            where = f"{e.filename}: " if getattr(e, "filename", None) else ""
            raise ToolError(tools.roots.display(one_line(f"{where}{e.strerror or e}"))) from None
        except Exception as e:  # noqa: BLE001 (a bug: one line to the model, the stack on stderr)
            traceback.print_exc()
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise ToolError(
                one_line(
                    f"internal error: {type(e).__name__}: {tools.roots.display(first)} (the server's stderr has details)"
                )
            ) from None
        return tool_result(doc, text, tools.served.max_bytes)

    return call
