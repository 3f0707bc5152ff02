"""The compiled-plan cache: a warm run compiles nothing and gives the same findings."""

from __future__ import annotations

import dataclasses

from auditor.config import AuditConfig
from auditor.engine.duckdb_engine import DuckDBEngine
from auditor.engine.runner import run_audit
from auditor.registry import REGISTRY, load_rules
from auditor.snapshot.io import discover, open_snapshot
from tests.conftest import SAMPLE_FLEET


def _audit(config=None):
    refs = [open_snapshot(p) for p in discover(SAMPLE_FLEET)]
    engine = DuckDBEngine()
    try:
        result = run_audit(engine, refs, config or AuditConfig())
        return result, engine.plan_cache
    finally:
        engine.close()


def test_warm_run_uses_compiled_plans_and_matches(tmp_path, monkeypatch):
    monkeypatch.setenv("KAFKA_AUDIT_PLAN_CACHE", str(tmp_path))
    cold, cache = _audit()
    assert cache.hits == 0 and cache.misses > 0
    assert list(tmp_path.glob("*.json"))

    # A warm run must not call any check: replace every check with one that fails.
    def boom(*_args):
        raise AssertionError("check code ran although its compiled plan was cached")

    rules = load_rules()
    for code, rule in list(rules.items()):
        monkeypatch.setitem(REGISTRY, code, dataclasses.replace(rule, func=boom))
    warm, cache = _audit()
    assert cache.misses == 0 and cache.hits > 0
    assert warm.findings == cold.findings and warm.findings


def test_changed_params_or_severity_compile_afresh(tmp_path, monkeypatch):
    monkeypatch.setenv("KAFKA_AUDIT_PLAN_CACHE", str(tmp_path))
    _audit()
    cfg = AuditConfig(severity={"REP002": "critical"})
    result, cache = _audit(cfg)
    assert cache.misses == 1  # only REP002's plan: its derived transforms come from the cache
    assert {f.severity for f in result.findings if f.rule == "REP002"} == {"critical"}


def test_corrupt_cache_entries_are_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv("KAFKA_AUDIT_PLAN_CACHE", str(tmp_path))
    cold, _ = _audit()
    for entry in tmp_path.glob("*.json"):
        entry.write_text("{ not json")
    again, cache = _audit()
    assert cache.hits == 0 and again.findings == cold.findings


def test_cache_can_be_disabled(tmp_path, monkeypatch):
    monkeypatch.setenv("KAFKA_AUDIT_PLAN_CACHE", "off")
    _result, cache = _audit()
    assert cache.directory is None and cache.hits == 0
