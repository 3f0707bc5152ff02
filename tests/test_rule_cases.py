"""Every rule's YAML cases, run by one generic test on both engines."""

from __future__ import annotations

import re

import pytest

from auditor.config import AuditConfig
from auditor.engine import open_engine
from auditor.engine.runner import run_audit
from auditor.errors import UsageError
from auditor.registry import load_rules
from tests.rulecases import (
    check_findings,
    load_cases,
    load_fleet_cases,
    override_runs,
    validated_overrides,
    write_cases,
)

CASES = load_cases()
# One run of every rule at its defaults, then the few runs of the cases that override their
# rule's parameters or severity (see tests/rulecases.py).
RUNS = [(AuditConfig(), [c for c in CASES if c.overrides is None]), *override_runs(CASES)]
# Maintenance (MNT, run by preflight) and change (THR007, run by lint) cases run here too.
SCOPES = ("cluster", "maintenance", "change")
# CFG900 (unused suppression) is produced by the lint layer, not by a DataFrame check:
# tests/test_lint.py covers it.
# Rules the lint layer computes (CFG900, CFG009): no DataFrame, so no engine cases; their tests
# are tests/test_lint.py's and tests/test_lint_platforms.py's.
NOT_DATAFRAME_RULES = {r.code for r in load_rules().values() if r.produced_by != "engine"}


def _run(engine, case_refs):
    """The findings of every run; each case is its own cluster, so one list serves all."""
    return [
        f
        for config, cases in RUNS
        for f in run_audit(engine, [case_refs[c.cluster_id] for c in cases], config, scopes=SCOPES).findings
    ]


@pytest.fixture(scope="module")
def case_refs(tmp_path_factory):
    refs = write_cases(CASES, tmp_path_factory.mktemp("cases"))
    return {c.cluster_id: ref for c, ref in zip(CASES, refs, strict=True)}


@pytest.fixture(scope="module")
def duckdb_findings(case_refs):
    with open_engine("duckdb") as engine:
        return _run(engine, case_refs)


@pytest.mark.parametrize("case", CASES, ids=[f"{c.rule}-{c.name}" for c in CASES])
def test_case_on_duckdb(case, duckdb_findings):
    check_findings(
        case,
        {
            f"{f.resource_type}:{f.resource_name}": f
            for f in duckdb_findings
            if f.rule == case.rule and f.cluster_id == case.cluster_id
        },
    )


def test_every_rule_parameter_is_set_by_a_case():
    """A parameter no case sets is a parameter nothing proves (fleet rules' cases, under
    `clusters:`, run in test_fleet.py)."""
    declared = {(r.code, p.name) for r in load_rules().values() for p in r.params}
    set_by_cases = {(c.rule, name) for c in [*CASES, *load_fleet_cases()] for name in c.params or {}}
    assert not declared - set_by_cases, f"parameters no case sets: {sorted(declared - set_by_cases)}"


def test_override_runs_hold_each_rules_kth_override_set():
    """As many extra runs as the most override sets of one rule, each case in exactly one run."""
    per_rule = {}
    for c in CASES:
        if c.overrides is not None:
            per_rule.setdefault(c.rule, set()).add(c.overrides)
    assert len(RUNS) - 1 == max(map(len, per_rule.values()))
    in_runs = [c.cluster_id for _config, cases in RUNS for c in cases]
    assert sorted(in_runs) == sorted(c.cluster_id for c in CASES)


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
# Every case of the catalogue (96 rules, ~700 clusters) on Spark in one test: ~230 s alone on
# this 2-core machine under load, past the suite's 300 s default with its fixtures' 70 s.
@pytest.mark.timeout(900)
def test_spark_gives_identical_findings(case_refs, duckdb_findings, spark_engine, monkeypatch):
    # Every rule's cases with the settings of a large fleet (adaptive execution, broadcast
    # joins, code generation, several shuffle partitions), the runs that override parameters
    # with those of a small one (the sample fleet's test in test_fleet.py runs the whole
    # catalogue with them too): both settings are proven on every rule.
    from auditor.engine import spark_engine as module

    spark, sized, small = [], [], module.SMALL_DATA_PARTITIONS
    for i, (config, cases) in enumerate(RUNS):
        monkeypatch.setattr(module, "SMALL_DATA_PARTITIONS", -1 if i == 0 else small)
        refs = [case_refs[c.cluster_id] for c in cases]
        spark += run_audit(spark_engine, refs, config, scopes=SCOPES).findings
        sized.append(spark_engine.small_data)
    assert sized[0] is False and all(sized[1:])

    def key(f):
        return (
            f.rule,
            f.name,
            f.severity,
            f.cluster_id,
            f.resource_type,
            f.resource_name,
            f.message,
            tuple(sorted((k, repr(v)) for k, v in f.evidence.items())),
            f.fingerprint,
        )

    only_spark = sorted(set(map(key, spark)) - set(map(key, duckdb_findings)))
    only_duckdb = sorted(set(map(key, duckdb_findings)) - set(map(key, spark)))
    assert not only_spark and not only_duckdb, (
        f"only on Spark: {only_spark[:5]}\nonly on DuckDB: {only_duckdb[:5]}"
    )
    assert len(spark) == len(duckdb_findings)
    assert duckdb_findings, "the cases must produce findings for the comparison to mean anything"


@pytest.mark.parametrize(
    ("case", "message"),
    [
        (
            {"name": "typo", "params": {"min_idel": 0.1}},
            "THR001 has no parameter 'min_idel' (parameters: min_idle)",
        ),
        ({"name": "mistyped", "params": {"min_idle": "low"}}, "parameter 'min_idle' must be float"),
    ],
)
def test_a_misspelt_or_mistyped_case_parameter_fails_loudly(case, message):
    with pytest.raises(UsageError, match=re.escape(message)) as raised:
        validated_overrides({"rule": "THR001"}, case)
    assert "THR001.yaml: case " + case["name"] in str(raised.value)


def test_an_unknown_case_severity_fails():
    with pytest.raises(AssertionError, match="severity must be one of"):
        validated_overrides({"rule": "THR001"}, {"name": "loud", "severity": "fatal"})
