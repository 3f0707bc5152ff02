"""Fused plans (issue 46): the rules that read the same shared input are one cached plan and one
engine statement (auditor/engine/runner.py). Every comparison runs the fused path and the
per-rule path on the SAME code in the same test, so it holds whatever rules are added or
changed: the findings JSON is byte for byte the same, with the selection, parameters,
severities and exemptions of the configuration; a rule that cannot be compiled or run is
reported as not evaluated and takes no other rule down."""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest

from auditor.collectors.fleet_collect import collect_snapshot
from auditor.config import AuditConfig, Exemption
from auditor.engine.duckdb_engine import DuckDBEngine
from auditor.engine.runner import fusion_groups, run_audit
from auditor.registry import REGISTRY, load_rules
from auditor.render import render
from auditor.snapshot.io import discover, open_snapshot
from auditor.sources import Sources
from tests.conftest import SAMPLE_FLEET, real_input

SCOPES = ("cluster", "fleet")
# Real server.properties files nobody here wrote, each with a real scrape: the clusters they
# describe (Kafka 3.7 KRaft, 0.10, Strimzi's rendered JBOD broker, HELK), as `collect` writes them.
REAL = (
    ("apache-kafka-3.7.0-kraft-server.properties", "msk-open-monitoring-jmx-excerpt.prom"),
    ("apache-kafka-0.10.2.1-server.properties", "jmx-exporter-0.6-kafka0.10-lowercase-scrape.prom"),
    ("strimzi-rendered-kraft-broker-jbod.properties", "jmx-exporter-0.6-kafka0.10-lowercase-scrape.prom"),
    ("helk-unclean-election.properties", "msk-open-monitoring-jmx-excerpt.prom"),
)
# The configuration a team would have: a selection, an ignore, a severity, a parameter (its
# rule planned alone) and an exemption.
CONFIG = AuditConfig(
    ignore=("REP004", "CTL"),
    severity={"PAR005": "error", "DSK005": "warning"},
    params={"REP007": {"max_listed": 1}, "THR003": {"max_connections_per_thread": 50.0}},
    exemptions=[Exemption(reason="known", rules=("REP003",), cluster="^search", resource="^(logs|metrics)")],
)


@pytest.fixture(scope="module")
def refs(tmp_path_factory):
    """The sample fleet's snapshots and the real-input ones, audited together."""
    out = [open_snapshot(p) for p in discover(SAMPLE_FLEET)]
    root = tmp_path_factory.mktemp("real")
    for n, (properties, scrape) in enumerate(REAL):
        sources = Sources(
            broker_configs=(str(real_input(f"properties/{properties}")),),
            metrics=(f"broker_id=1:{real_input(f'metrics/{scrape}')}",),
            cluster_name=f"real-{n}",
        )
        collect_snapshot(root / f"real-{n}", "parquet", sources)
        out.append(open_snapshot(root / f"real-{n}"))
    return out


def _json(engine, refs, config) -> str:
    result = run_audit(engine, refs, config, scopes=SCOPES)
    return render("json", result).replace(f'"engine": "{engine.name}"', '"engine": "-"')


@pytest.mark.parametrize("config", [AuditConfig(), CONFIG], ids=["defaults", "configured"])
def test_fused_and_per_rule_findings_are_byte_identical_on_duckdb(refs, config):
    with DuckDBEngine(fused=True) as fused, DuckDBEngine(fused=False) as per_rule:
        assert _json(fused, refs, config) == _json(per_rule, refs, config)


@pytest.mark.spark
def test_fused_and_per_rule_findings_are_byte_identical_on_spark(refs, spark_engine):
    """The sample fleet and the real snapshots, both ways in the shared session (small-data
    settings), and the same as DuckDB's. The fused run compiles nothing: the bundle, built
    without running a Spark job (plan_bundle.py), holds every plan a real run reads."""
    config = AuditConfig()
    try:
        spark_engine.fused = True
        misses = spark_engine.plan_cache.misses
        fused = _json(spark_engine, refs, config)
        assert spark_engine.plan_cache.misses == misses
        spark_engine.fused = False
        per_rule = _json(spark_engine, refs, config)
    finally:
        spark_engine.fused = True
    with DuckDBEngine(fused=False) as duckdb:
        assert fused == per_rule == _json(duckdb, refs, config)


def test_fusion_groups_come_from_the_declarations():
    """Each rule goes with the shared input of its declarations that most rules read; every
    group of several rules shares that input; groups are far fewer than rules."""
    catalogue = [r for r in load_rules().values() if r.func is not None]
    groups = fusion_groups(catalogue)
    assert set(groups) == {r.code for r in catalogue}
    for rule in catalogue:
        inputs = {u.__name__ for u in rule.uses} or {
            "table_" + (n if isinstance(n, str) else n[0]) for n in rule.needs[:1]
        }
        assert groups[rule.code] in inputs | {"table_none"}, rule.code
    assert len(set(groups.values())) < len(catalogue) / 2
    assert groups["PAR001"] == groups["PAR003"] == "degraded_partitions"
    assert fusion_groups(catalogue) == groups  # the same every time


def _sample():
    return [open_snapshot(p) for p in discover(SAMPLE_FLEET)]


@pytest.fixture
def no_plan_cache(monkeypatch):
    """Every plan compiled in the test (a replaced check is not the code the cache was built from)."""
    monkeypatch.setenv("KAFKA_AUDIT_PLAN_CACHE", "off")


def _with_check(monkeypatch, code, func):
    load_rules()
    monkeypatch.setitem(REGISTRY, code, dataclasses.replace(REGISTRY[code], func=func))


SELECTION = AuditConfig(select=("PAR00", "REP007"))  # PAR001-PAR009: one fused group, and a rule alone


def _expected(without: str):
    with DuckDBEngine(fused=False) as engine:
        return run_audit(engine, _sample(), dataclasses.replace(SELECTION, ignore=(without,)))


def _failed_alone(result, code: str, expected, message: str):
    """``code`` not evaluated on every cluster and said once in the notes (every report shows
    them), every other finding as without it."""
    assert [f for f in result.findings if f.rule != code] == expected.findings and expected.findings
    assert not any(f.rule == code for f in result.findings)
    for ref in _sample():
        entries = result.coverage[ref.manifest.cluster_id]
        (entry,) = [e for e in entries if code in e["rules"]]
        assert entry["reason"].startswith("could not be evaluated (") and message in entry["reason"]
    (said,) = [note for note in result.notes if code in note]
    assert said.startswith(f"warning: rule {code} could not be evaluated: ") and message in said


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "per-rule"])
def test_a_rule_that_cannot_be_compiled_is_not_evaluated_and_takes_no_other_down(
    monkeypatch, no_plan_cache, fused
):
    expected = _expected("PAR003")

    def broken(tables, params):
        raise RuntimeError("a bug in PAR003's check")

    _with_check(monkeypatch, "PAR003", broken)
    with DuckDBEngine(fused=fused) as engine:
        result = run_audit(engine, _sample(), SELECTION)
    _failed_alone(result, "PAR003", expected, "RuntimeError: a bug in PAR003's check")


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "per-rule"])
def test_a_rule_whose_statement_fails_is_run_again_alone_and_not_evaluated(monkeypatch, no_plan_cache, fused):
    """A statement of several rules fails at run time (here PAR004's: a value the engine cannot
    cast): its rules run again one by one; the one that fails again is not evaluated."""
    from checks._api import F

    expected = _expected("PAR004")
    original = REGISTRY["PAR004"].func

    def fails_when_run(tables, params):
        df = original(tables, params)
        return df.withColumn("message", F.concat(F.col("message"), F.lit("x").cast("int").cast("string")))

    _with_check(monkeypatch, "PAR004", fails_when_run)
    with DuckDBEngine(fused=fused) as engine:
        result = run_audit(engine, _sample(), SELECTION)
    _failed_alone(result, "PAR004", expected, "ConversionException")


def test_exempted_and_selected_alike_on_both_paths():
    """An exemption names rules of a fused group, a --select takes part of a group."""
    today = dt.date.today()
    config = AuditConfig(
        select=("PAR001", "PAR004", "PAR005", "DSK"),
        exemptions=[
            Exemption(
                reason="planned", rules=("PAR004",), cluster="^ads", expires=today + dt.timedelta(days=1)
            )
        ],
    )
    with DuckDBEngine(fused=True) as fused, DuckDBEngine(fused=False) as per_rule:
        a, b = run_audit(fused, _sample(), config), run_audit(per_rule, _sample(), config)
    assert a.findings == b.findings and a.exempted == b.exempted > 0
    assert {f.rule for f in a.findings} <= {"PAR001", "PAR004", "PAR005"} | {
        c for c in REGISTRY if c.startswith("DSK")
    }
