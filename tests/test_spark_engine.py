"""SparkEngine builds checkpointed tables in worker threads: order, reads and errors."""

import threading

import pytest

from auditor.engine.base import VIEW_PREFIX

pytestmark = pytest.mark.spark


def test_tables_are_built_after_the_tables_they_read(spark_engine):
    eng = spark_engine
    eng.create("t_async_a", "SELECT id FROM range(5)", reuse=True, background=True)
    eng.create("t_async_b", f"SELECT id * 10 AS v FROM {VIEW_PREFIX}t_async_a", reuse=True, background=True)
    # A view (built at once, by the caller) over a table still being built waits for it.
    eng.create("t_async_c", f"SELECT sum(v) AS total FROM {VIEW_PREFIX}t_async_b")
    # Without background (what callers outside Tables get) a table exists on return, even
    # one over a table still being built.
    eng.create("t_async_e", f"SELECT count(*) AS n FROM {VIEW_PREFIX}t_async_b", reuse=True)
    assert eng.session.table(VIEW_PREFIX + "t_async_e").collect()[0]["n"] == 5
    eng.sync()
    assert eng.rows(VIEW_PREFIX + "t_async_c") == [{"total": 100}]
    assert sorted(r["v"] for r in eng.rows(VIEW_PREFIX + "t_async_b")) == [0, 10, 20, 30, 40]


def test_jobs_run_in_worker_threads_and_ready_waits_for_one(spark_engine):
    eng = spark_engine
    seen = []
    original = eng._create

    def record(name, sql, *, reuse):
        seen.append((name, threading.current_thread().name))
        original(name, sql, reuse=reuse)

    eng._create = record
    try:
        eng.create("t_async_d", "SELECT 1 AS one", reuse=True, background=True)
        eng.ready(VIEW_PREFIX + "t_async_d")
        assert eng.session.table(VIEW_PREFIX + "t_async_d").collect()[0]["one"] == 1
    finally:
        del eng._create
        eng.sync()
    assert seen and seen[0][0] == "t_async_d" and seen[0][1].startswith("kafka-audit-job")


def test_a_failed_build_is_raised_at_sync_after_every_job_ended(spark_engine):
    eng = spark_engine
    eng.create("t_async_bad", f"SELECT * FROM {VIEW_PREFIX}no_such_table", reuse=True, background=True)
    eng.create("t_async_after_bad", f"SELECT * FROM {VIEW_PREFIX}t_async_bad", reuse=True, background=True)
    eng.create("t_async_fine", "SELECT 2 AS two", reuse=True, background=True)
    with pytest.raises(Exception, match="no_such_table"):
        eng.sync()
    # Nothing is left pending, the independent job completed, and the engine still works.
    assert eng.rows(VIEW_PREFIX + "t_async_fine") == [{"two": 2}]
    eng.sync()
