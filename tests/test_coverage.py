"""Coverage (issue 17): rules whose inputs were not collected are reported as not evaluated,
never as a healthy result, in every report, and such a cluster is never graded A."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import jsonschema
import pytest

from auditor import coverage
from auditor.config import AuditConfig
from auditor.engine import open_engine
from auditor.engine.runner import run_audit
from auditor.grading import grade
from auditor.registry import load_rules
from auditor.render import html_render, json_render, markdown_render, text_render
from auditor.snapshot.io import Manifest, discover, open_snapshot, write_snapshot
from auditor.snapshot.schema import TABLES
from tests.conftest import ROOT, cluster_dir

SCHEMA = json.loads((ROOT / "docs" / "report.schema.json").read_text())
METRIC_RULES = {"THR001", "THR002", "THR006", "MSK003"}


def configs_only(directory, name="configs-only", mode="zookeeper"):
    """A snapshot of broker registrations and broker configs only: no metrics, no controller,
    no partitions, no client inventory."""
    manifest = Manifest(
        cluster={
            "id": f"{name}-id",
            "name": name,
            "environment": "prod",
            "tier": "tier-2",
            "platform": "apache",
            "kafka_version": "3.6.1",
            "metadata_mode": mode,
        },
        collected_at="2026-11-22T06:00:00Z",
    )
    tables = {
        "brokers": [
            {
                "broker_id": 1,
                "host": "kafka-1",
                "port": 9092,
                "rack": "a",
                "log_dirs": ["/data/1", "/data/2"],
                "version": "3.6.1",
            }
        ],
        "configs": [
            {
                "entity_type": "broker",
                "entity_name": "1",
                "key": k,
                "value": v,
                "source": "STATIC_BROKER_CONFIG",
            }
            for k, v in (
                ("num.network.threads", "8"),
                ("num.io.threads", "16"),
                ("log.dirs", "/data/1,/data/2"),
                ("auto.create.topics.enable", "false"),
            )
        ],
    }
    return write_snapshot(directory, manifest, tables, fmt="jsonl")


@pytest.fixture(scope="module")
def sparse(tmp_path_factory):
    directory = configs_only(tmp_path_factory.mktemp("cov") / "cluster=configs-only")
    with open_engine("duckdb") as engine:
        return run_audit(engine, [open_snapshot(directory)], AuditConfig())


def test_every_declared_need_names_a_real_table():
    file_tables = {name for name, t in TABLES.items() if not t.from_manifest}
    declared = 0
    for rule in load_rules().values():
        for need in rule.needs:
            options = (need,) if isinstance(need, str) else need
            assert options and set(options) <= file_tables, (rule.code, need)
            declared += 1
    assert declared >= 40
    # the rules the issue names
    rules = load_rules()
    for code in ("THR001", "THR002", "THR006", "MSK003"):
        assert "metrics" in rules[code].needs, code
    assert "client_software" in rules["CLI001"].needs and "client_software" in rules["DSK002"].needs
    assert ("log_dirs", "metrics", "log_dir_events") in rules["DSK001"].needs
    assert all("partitions" in rules[f"PAR00{i}"].needs for i in range(1, 8))


def test_registry_rejects_an_unknown_table():
    from auditor.registry import _check_needs

    with pytest.raises(ValueError, match="no snapshot table"):
        _check_needs(("metric",), "rule X")
    with pytest.raises(ValueError, match="no snapshot table"):
        _check_needs(("clusters",), "rule X")  # from the manifest: always there
    assert _check_needs(("metrics", ("log_dirs", "metrics")), "rule X") == (
        "metrics",
        ("log_dirs", "metrics"),
    )


def test_compact_code_ranges():
    assert coverage.compact(["THR006", "THR001", "THR002"]) == "THR001-THR002, THR006"
    assert (
        coverage.compact(["CLI001", "DSK002", "PAR001", "PAR002", "PAR003"])
        == "CLI001, DSK002, PAR001-PAR003"
    )


def test_configs_only_snapshot_lists_rules_not_evaluated_in_json(sparse):
    doc = json_render.document(sparse)
    assert doc["schema_version"] == 2
    jsonschema.validate(doc, SCHEMA)
    (cluster,) = doc["clusters"]
    entries = cluster["not_evaluated"]
    by_reason = {}
    for e in entries:
        by_reason.setdefault(e["reason"], set()).update(e["rules"])
    assert {"THR001", "THR002", "THR006"} <= by_reason["no broker metrics"]
    assert "MSK003" not in by_reason["no broker metrics"]  # not an MSK cluster: nothing to judge
    assert {"CLI001", "DSK002"} <= by_reason["no client inventory (KIP-511 metrics)"]
    assert {"PAR001", "PAR007"} <= by_reason["no partition state"]
    assert {"CTL001", "CTL002", "CTL003", "CTL004", "CTL005", "CTL006"} <= by_reason[
        "no ZooKeeper or KRaft controller state"
    ] | by_reason["no partition state"]
    not_evaluated = set().union(*by_reason.values())
    # config rules had their inputs
    assert not not_evaluated & {"CFG001", "CFG002", "CFG003", "THR003", "THR004", "THR005", "DSK005"}


def test_configs_only_cluster_is_not_graded_a(sparse):
    view = html_render.context(sparse)["clusters"][0]
    assert view["grade"] != "A" and not view["incomplete"]
    assert "not graded A:" in view["grade_note"] and "PAR" in view["grade_note"]
    # the same score without gaps would be an A: the cap is what made the difference
    assert grade(view["score"], view["worst"]) == "A"
    assert grade(100, None, not_evaluated=["partitions"]) == "B"
    assert grade(100, "error", not_evaluated=["partitions"]) == "C"
    html = html_render.render(sparse)
    assert "not evaluated:" in html and "no broker metrics" in html and "not graded A:" in html


def test_text_and_markdown_show_the_not_evaluated_line(sparse):
    text = text_render.render(sparse)
    line = next(x for x in text.splitlines() if x.startswith("configs-only not evaluated:"))
    assert "THR001-THR002, THR006" in line and "no broker metrics" in line
    md = markdown_render.render(sparse)
    line = next(x for x in md.splitlines() if x.startswith("**Not evaluated**"))
    assert "configs-only" in line and "no broker metrics" in line and "THR001-THR002, THR006" in line


def test_kraft_cluster_does_not_miss_zookeeper_state(tmp_path):
    directory = configs_only(tmp_path / "k", name="kraft-only", mode="kraft")
    entries = coverage.cluster_coverage(open_snapshot(directory).manifest, load_rules().values())
    reason = {c: e["reason"] for e in entries for c in e["rules"]}
    assert "CTL003" not in reason  # no ZooKeeper to miss
    assert reason["CTL002"] == "no partition state"  # its other input
    assert reason["CTL004"] == "no ZooKeeper or KRaft controller state"  # still needs the controller state


def test_full_sample_snapshot_evaluates_every_metrics_rule():
    ref = open_snapshot(cluster_dir("search-ingest"))
    with open_engine("duckdb") as engine:
        result = run_audit(engine, [ref], AuditConfig(select=("THR", "CLI", "DSK", "PAR", "CTL", "MSK")))
    doc = json_render.document(result)
    jsonschema.validate(doc, SCHEMA)
    (cluster,) = doc["clusters"]
    assert not {c for e in cluster["not_evaluated"] for c in e["rules"]} & METRIC_RULES
    assert cluster["not_evaluated"] == []
    assert "not evaluated" not in text_render.render(result)


def test_fleet_html_and_text_show_coverage(tmp_path):
    root = tmp_path / "fleet" / "dt=2026-11-22"
    shutil.copytree(cluster_dir("search-ingest"), root / "cluster=search-ingest")
    configs_only(root / "cluster=configs-only")
    html = tmp_path / "fleet.html"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "auditor.cli.main",
            "fleet",
            str(tmp_path / "fleet"),
            "--engine",
            "duckdb",
            "--html",
            str(html),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert p.returncode in (0, 1), p.stderr
    assert "not evaluated (inputs not collected):" in p.stdout
    line = next(x for x in p.stdout.splitlines() if x.strip().startswith("configs-only:"))
    assert "THR001-THR002, THR006: no broker metrics" in line and "not graded A" in line
    grades = {
        x.split()[2]: x.split()[0]
        for x in p.stdout.splitlines()
        if x.startswith("  ") and len(x.split()) > 6 and x.split()[0] in ("A", "B", "C", "D", "F", "?")
    }
    assert grades["configs-only"] != "A"
    page = html.read_text()
    assert '<section id="coverage">' in page and '<table class="coverage">' in page
    section = page[page.index('<section id="coverage">') : page.index('<section id="findings">')]
    assert "configs-only" in section and "search-ingest" in section
    assert "not evaluated" in section and "evaluated" in section and "no partition state" in section
    assert "PAR" in section and "partitions" in section


def test_rules_that_judge_broker_settings_alone_are_evaluated_without_topics():
    """REP006 fires on offsets.topic.replication.factor from configs alone (a server.properties in
    review): it must not be listed as not evaluated at the same time."""
    from auditor.coverage import unmet
    from auditor.registry import load_rules

    rules = load_rules()
    have = {"brokers", "configs"}
    for code in ("REP001", "REP002", "REP005", "REP006"):
        assert unmet(rules[code], have) is None, code
    assert unmet(rules["PAR003"], have) is not None  # partition state really is missing


def test_issue_38_the_sample_fleet_evaluates_the_whole_catalogue():
    """The quick start demonstrates every rule: each sample cluster has the inputs of every rule
    that applies to it (the KRaft clusters their quorum and feature rows: CTL008-CTL010)."""
    from tests.conftest import SAMPLE_FLEET

    refs = [open_snapshot(d) for d in discover(str(SAMPLE_FLEET))]
    assert len(refs) == 8
    with open_engine("duckdb") as engine:
        result = run_audit(engine, refs, AuditConfig())
    doc = json_render.document(result)
    assert {c["name"]: c["not_evaluated"] for c in doc["clusters"]} == {
        r.manifest.cluster_name: [] for r in refs
    }
    kraft = {r.manifest.cluster_name for r in refs if r.manifest.cluster.get("metadata_mode") == "kraft"}
    assert kraft == {"search-ingest", "inventory-prod", "notifications-msk", "checkout-prod", "sandbox-dev"}
    for ref in refs:
        if ref.manifest.cluster_name in kraft:
            assert {"quorum", "features"} <= set(ref.files), ref.manifest.cluster_name
    # the healthy KRaft clusters stay healthy with their quorum evaluated: infos at most (the
    # short retentions, the size cap and the recovery in progress they carry: issue 43)
    healthy = {
        (f.cluster, f.rule, f.severity)
        for f in result.findings
        if f.cluster in ("inventory-prod", "notifications-msk")
    }
    assert healthy == {
        ("inventory-prod", "DSK008", "info"),
        ("inventory-prod", "PAR007", "info"),
        ("inventory-prod", "PAR011", "info"),
        ("notifications-msk", "DSK008", "info"),
        ("notifications-msk", "DSK009", "info"),
    }
