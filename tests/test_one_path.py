"""One path for every decision (issue 21): exemptions, grades and rule documentation are
decided once, and every command and every report reads that one decision."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLE_FLEET, cluster_dir
from tests.test_cli import run

PAYMENTS = cluster_dir("payments-msk")
# payments-msk's REP002 findings (test_cli.py): four topics and the cluster default.
REP002_ON_PAYMENTS = {
    "__consumer_offsets",
    "payments.orders.v1",
    "payments.authorizations.v2",
    "payments.ledger-events",
    "min.insync.replicas",
}
TOPICS = """
- name: payments.orders.v1
  partitions: 6
  replication_factor: 3
  configs:
    min.insync.replicas: 3
- name: payments.ledger-events
  partitions: 6
  replication_factor: 3
  configs:
    min.insync.replicas: 3
"""


def _config(tmp_path: Path, resource: str) -> Path:
    path = tmp_path / "kafka-audit.toml"
    path.write_text(
        textwrap.dedent(f"""
        [[exemptions]]
        rules = ["REP002"]
        resource = '{resource}'
        reason = "migrating in CHG-1234"
    """),
        encoding="utf-8",
    )
    return path


def _every_command(tmp_path: Path, config: Path) -> dict:
    """REP002 resources reported (and exit code, stderr) by check, fleet, preflight and lint."""
    topics = tmp_path / "topics.yaml"
    topics.write_text(TOPICS.lstrip(), encoding="utf-8")
    runs = {
        "check": run("check", PAYMENTS, "--format", "json", "--config", config),
        "fleet": run(
            "fleet", PAYMENTS, "--engine", "duckdb", "--format", "json", "--top", "1000", "--config", config
        ),
        "preflight": run("preflight", PAYMENTS, "--format", "json", "--config", config),
        "lint": run("lint", topics, "--format", "json", "--config", config),
    }
    out = {}
    for command, p in runs.items():
        rep002 = None
        if p.returncode != 2:
            doc = json.loads(p.stdout)
            findings = doc["top"] if command == "fleet" else doc["findings"]
            rep002 = {f["resource"]["name"] for f in findings if f["rule"] == "REP002"}
        out[command] = (p.returncode, p.stderr.strip() if p.returncode == 2 else "", rep002)
    return out


def test_a_valid_exemption_exempts_the_same_findings_in_every_command(tmp_path):
    outcomes = _every_command(tmp_path, _config(tmp_path, r"^payments\.(orders|audit)"))
    kept = REP002_ON_PAYMENTS - {"payments.orders.v1"}
    assert {c: o[2] for c, o in outcomes.items()} == {
        "check": kept,
        "fleet": kept,
        "preflight": kept,
        "lint": {"payments.ledger-events"},
    }
    assert all(code != 2 for code, _, _ in outcomes.values()), outcomes


@pytest.mark.parametrize(
    "pattern",
    [
        r"^payments\.(?!ledger)",
        r"^(payments)\.\1",
        r"^(?P<team>payments)\.",
        r"^(payments\.[a-z]+)+$",  # issue 37: nested quantifiers (exponential on a JVM before 17)
        "^payments{" + "9" * 5000 + "}",  # issue 37: an internal error (int() of 5000 digits)
    ],
    ids=["lookahead", "backreference", "named-group", "nested-quantifiers", "5000-digit-count"],
)
def test_a_pattern_outside_the_common_dialect_is_refused_identically_by_every_command(tmp_path, pattern):
    """A lookahead is Python and Java but not RE2: once it passed validation and then killed
    `check` ("invalid perl operator") while `lint` applied it. Now the file is refused, by
    every command, with the same one line naming the file and the exemption."""
    config = _config(tmp_path, pattern)
    outcomes = _every_command(tmp_path, config)
    lines = {o[1] for o in outcomes.values()}
    assert {o[0] for o in outcomes.values()} == {2}, outcomes
    assert len(lines) == 1, lines
    (line,) = lines
    assert line.startswith(f"kafka-audit: {config}: exemption #1: resource ") and "\n" not in line
    assert "internal error" not in line and "Traceback" not in line


def test_check_and_fleet_grade_every_sample_cluster_alike():
    checked = json.loads(run("check", SAMPLE_FLEET, "--format", "json").stdout)
    fleet = json.loads(run("fleet", SAMPLE_FLEET, "--engine", "duckdb", "--format", "json").stdout)
    by_check = {c["name"]: (c["score"], c["grade"]) for c in checked["clusters"]}
    by_fleet = {c["name"]: (c["score"], c["grade"]) for c in fleet["clusters"]}
    assert len(by_check) == 8 and by_check == by_fleet
    # payments-msk has fleet findings (FLT001, FLT003): counted, not graded
    payments = next(c for c in fleet["clusters"] if c["name"] == "payments-msk")
    assert payments["counts"]["warning"] > 0 and payments["grade"] == "C"


def _imports(path: Path) -> set[str]:
    """Every module a file imports, function-level imports included."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def test_renderers_read_the_result_not_the_registry():
    renderers = sorted((ROOT / "auditor" / "render").glob("*.py"))
    assert len(renderers) >= 10
    for path in renderers:
        imported = _imports(path)
        assert not any(n == "auditor.registry" or n.startswith("auditor.registry.") for n in imported), path
        assert not any(
            n.startswith(("auditor.grading.cluster_score", "auditor.grading.grade")) for n in imported
        ), path
        assert not any(
            n.startswith(("auditor.commands.preflight", "auditor.commands.fleet", "auditor.engine"))
            for n in imported
        ), path


def test_preflight_plan_and_render_depend_one_way():
    """auditor.render -> auditor.commands.preflight -> auditor.commands.preflight_plan, never back: the plan is
    data, its text and --fix-plan script are rendered under render/."""

    def deps(module: str) -> set[str]:
        path = ROOT / (module.replace(".", "/") + ".py")
        return _imports(path)

    render_modules = [f"auditor.render.{p.stem}" for p in (ROOT / "auditor" / "render").glob("*.py")]
    for module in render_modules:
        assert not any(
            n.startswith(("auditor.commands.preflight", "auditor.commands.preflight_plan"))
            for n in deps(module)
        ), module
    assert not any(
        n.startswith(("auditor.commands.preflight", "auditor.render"))
        and not n.startswith("auditor.commands.preflight_plan")
        for n in deps("auditor.commands.preflight_plan")
    )
    assert not any(n.startswith("auditor.render") for n in deps("auditor.commands.preflight"))
    assert "auditor.commands.preflight_plan" in deps("auditor.commands.preflight")


@pytest.mark.spark
def test_patterns_of_the_common_dialect_exempt_the_same_findings_on_both_engines(spark_engine):
    """Java regexes (Spark) and RE2 (DuckDB) read every accepted pattern alike: the same
    findings exempted, the same left, whatever the engine."""
    from auditor.config import parse_config
    from auditor.engine import open_engine
    from auditor.engine.runner import run_audit
    from auditor.snapshot.io import discover, open_snapshot

    cfg = parse_config(
        {
            "select": ["REP", "PAR"],
            "exemptions": [
                {
                    "rules": ["REP002"],
                    "resource": r"(?i)^PAYMENTS\.(orders|ledger)[-.]\w+$",
                    "reason": "case-insensitive",
                },
                {
                    "cluster": r"^(ads|search)-[a-z]{2,8}",
                    "resource": r"[0-9]{1,2}$",
                    "reason": "numbered partitions",
                },
                {"rules": ["PAR005"], "resource": r"^[^_][a-z]*?\x2e", "reason": r"dotted names"},
            ],
        },
        "test",
    )
    refs = [open_snapshot(d) for d in discover(SAMPLE_FLEET)]
    with open_engine("duckdb") as duck:
        on_duckdb = run_audit(duck, refs, cfg)
    on_spark = run_audit(spark_engine, refs, cfg)
    assert on_duckdb.exempted > 10 and on_spark.exempted == on_duckdb.exempted
    assert [f.fingerprint for f in on_spark.findings] == [f.fingerprint for f in on_duckdb.findings]


def test_regex_rule_parameters_are_held_to_the_same_dialect(tmp_path):
    """A rule parameter the engine runs as a regex (FLT002 ignore_pattern) is refused like an
    exemption pattern, with one line naming the file and the parameter."""
    config = tmp_path / "kafka-audit.toml"
    config.write_text('[params.FLT002]\nignore_pattern = "^(?!keep)"\n')
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "auditor.cli.main",
            "fleet",
            str(SAMPLE_FLEET),
            "--engine",
            "duckdb",
            "--config",
            str(config),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert (
        len(lines) == 1
        and str(config) in lines[0]
        and "ignore_pattern" in lines[0]
        and "lookaround" in lines[0]
    )
