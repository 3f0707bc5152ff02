"""Every rule's YAML cases, run by one generic test on both engines."""

from __future__ import annotations

import pytest

from auditor.config import AuditConfig
from auditor.engine import open_engine
from auditor.engine.runner import run_audit
from auditor.registry import load_rules
from tests.rulecases import load_cases, write_cases

CASES = load_cases()
# Maintenance (MNT, run by preflight) and change (THR007, run by lint) cases run here too.
SCOPES = ("cluster", "maintenance", "change")
# CFG900 (unused suppression) is produced by the lint layer, not by a DataFrame check:
# tests/test_lint.py covers it.
NOT_DATAFRAME_RULES = {"CFG900"}


def _run(engine, refs):
    result = run_audit(engine, refs, AuditConfig(), scopes=SCOPES)
    return result.findings


@pytest.fixture(scope="module")
def case_refs(tmp_path_factory):
    return write_cases(CASES, tmp_path_factory.mktemp("cases"))


@pytest.fixture(scope="module")
def duckdb_findings(case_refs):
    with open_engine("duckdb") as engine:
        return _run(engine, case_refs)


def _fired(findings, case):
    return {f"{f.resource_type}:{f.resource_name}" for f in findings if f.rule == case.rule and f.cluster_id == case.cluster_id}


@pytest.mark.parametrize("case", CASES, ids=[f"{c.rule}-{c.name}" for c in CASES])
def test_case_on_duckdb(case, duckdb_findings):
    assert _fired(duckdb_findings, case) == set(case.expect)


def test_every_registered_rule_has_passing_and_failing_cases():
    rules = {r.code for r in load_rules().values() if r.scope in SCOPES} - NOT_DATAFRAME_RULES
    with_cases = {}
    for c in CASES:
        with_cases.setdefault(c.rule, set()).add(bool(c.expect))
    missing = sorted(code for code in rules if with_cases.get(code) != {True, False})
    assert not missing, f"rules without both a passing and a failing case: {missing}"


def test_case_files_name_registered_rules():
    assert {c.rule for c in CASES} <= set(load_rules())


@pytest.mark.spark
def test_spark_gives_identical_findings(case_refs, duckdb_findings, spark_engine):
    spark = _run(spark_engine, case_refs)

    def key(f):
        return (f.rule, f.name, f.severity, f.cluster_id, f.resource_type, f.resource_name, f.message,
                tuple(sorted((k, repr(v)) for k, v in f.evidence.items())), f.fingerprint)

    only_spark = sorted(set(map(key, spark)) - set(map(key, duckdb_findings)))
    only_duckdb = sorted(set(map(key, duckdb_findings)) - set(map(key, spark)))
    assert not only_spark and not only_duckdb, f"only on Spark: {only_spark[:5]}\nonly on DuckDB: {only_duckdb[:5]}"
    assert len(spark) == len(duckdb_findings)
    assert duckdb_findings, "the cases must produce findings for the comparison to mean anything"
