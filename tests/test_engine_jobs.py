"""Statements run beside each other (auditor/engine/jobs.py): on small data DuckDB runs the
rules' statements and the shared transforms two at a time, each after the tables it reads;
on large data one after another. Both give the same findings, and a failure is not lost."""

from __future__ import annotations

import threading

import duckdb
import pytest

from auditor.config import AuditConfig
from auditor.engine import duckdb_engine
from auditor.engine.duckdb_engine import DuckDBEngine
from auditor.engine.runner import run_audit
from auditor.snapshot.io import discover, open_snapshot
from tests.conftest import SAMPLE_FLEET


def _audit():
    """(small data?, the threads that ran statements in the background, the tables those
    statements created, the findings)."""
    refs = [open_snapshot(d) for d in discover(SAMPLE_FLEET)]
    with DuckDBEngine() as engine:
        threads: set[str] = set()
        tables: set[str] = set()
        ran: list[str] = []
        run = engine._in_worker

        def in_worker(statement):
            threads.add(threading.current_thread().name)
            tables.add(statement.split(" AS ", 1)[0].split()[-1])  # CREATE OR REPLACE TABLE name AS ...
            ran.append(statement)
            run(statement)

        engine._in_worker = in_worker
        result = run_audit(engine, refs, AuditConfig())
        small = engine.small_data
    findings = sorted(
        (f.cluster, f.rule, f.resource_type, f.resource_name, f.message, f.cause) for f in result.findings
    )
    # the rules whose findings a statement run in the background computed (fused: several each)
    in_background = {
        code for code in {f.rule for f in result.findings} if any(f"'{code}' AS rule" in x for x in ran)
    }
    return small, threads, tables, findings, {f.rule for f in result.findings}, in_background


def test_small_data_runs_two_statements_at_a_time_large_data_in_order_with_the_same_findings(monkeypatch):
    small, threads, tables, findings, rules, in_background = _audit()
    assert small is True
    # Every rule's findings and the shared transforms ran on the pool's (at most two) threads.
    assert 1 <= len(threads) <= 2 and all(name.startswith("kafka-audit-job") for name in threads)
    assert in_background == rules and any(t.startswith("kafka_audit_findings_") for t in tables)
    assert {"kafka_audit_derived_degraded_partitions", "kafka_audit_derived_replica_lists"} <= tables
    monkeypatch.setattr(duckdb_engine, "SMALL_DATA_PARTITIONS", 0)  # every audit is large now
    large, none, no_tables, same, _, _ = _audit()
    assert large is False and none == set() and no_tables == set()
    assert same == findings and len(findings) > 60  # (one finding per cause since issue 36: 85)


def test_a_failed_statement_fails_the_statements_that_read_it_and_settle():
    with DuckDBEngine() as engine:
        engine.small_data = True
        engine.create("t_bad", "SELECT * FROM no_such_table", reuse=True, awaited=True)
        engine.create("t_reader", "SELECT * FROM kafka_audit_t_bad", reuse=True, deferred=True)
        engine.create("t_fine", "SELECT 1 AS x", reuse=True, deferred=True)
        with pytest.raises(duckdb.CatalogException, match="no_such_table"):
            engine.settle()
        # settle waited for every statement: the one that could run did
        assert engine.conn.execute("SELECT x FROM kafka_audit_t_fine").fetchall() == [(1,)]
        # settled: nothing waits for the failed statement any more, nothing hangs
        with pytest.raises(duckdb.CatalogException, match="kafka_audit_t_bad does not exist"):
            engine.create("t_view", "SELECT * FROM kafka_audit_t_bad")
