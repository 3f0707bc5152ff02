"""Engine statements run beside each other, each after the tables it reads: one implementation
for both engines (``Engine.create(deferred=...)`` / ``awaited``).

Why: on small data a statement is mostly single-threaded work outside the data (Spark's
driver parsing, analysing and planning; DuckDB's binder and optimiser on a few thousand
rows), so two at once use both cores. A statement waits for the statements computing the
tables its SQL names, and statements start in the order they are created; a table is always
created after the tables it reads, so a statement waits only for statements already running
or done (no deadlock with a bounded pool).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

from auditor.engine.tables import VIEW_PREFIX

WORKERS = 2  # this machine's cores; measured in bench/RESULTS.md (Spark: more gained nothing)
# An audit of at most this many partitions is small data: its statements run two at a time. A
# larger one runs them one after another: each already keeps every core busy, and two at once
# would hold two statements' hash tables (DuckDB) or shuffles (Spark) in memory.
SMALL_DATA_PARTITIONS = 100_000


class Jobs:
    """The statements an engine runs in the background, by the table each computes."""

    def __init__(self, workers: int = WORKERS):
        self._workers = workers
        self._pool: ThreadPoolExecutor | None = None
        self._computing: dict[str, Future] = {}  # by table name: read by later statements
        self._pending: list[tuple[str, Future]] = []  # read by nothing before settle()

    def reads(self, sql: str) -> list[Future]:
        """The running statements computing a table ``sql`` names."""
        return [job for name, job in self._computing.items() if VIEW_PREFIX + name in sql]

    def run(self, sql: str, run: Callable, *args) -> None:
        """``run(*args)`` here and now, once the tables ``sql`` reads are computed."""
        _after(self.reads(sql), run, *args)

    def submit(self, name: str, sql: str, run: Callable, *args, deferred: bool) -> None:
        """``run(*args)`` in the background once the tables ``sql`` reads are computed. A
        ``deferred`` statement is waited for by ``settle()``; another by ``wait_for(name)``
        and by the statements that name its table."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="kafka-audit-job")
        job = self._pool.submit(_after, self.reads(sql), run, *args)
        if deferred:
            self._pending.append((name, job))
        else:
            self._computing[name] = job

    def wait_for(self, name: str) -> None:
        job = self._computing.get(name)
        if job is not None:
            job.result()

    def settle(self, raise_errors: bool = True) -> dict[str, BaseException]:
        """Wait for every statement (even after one failed); raise the first failure, or (not
        ``raise_errors``) return the failures by the name of the table each was to compute."""
        pending, self._pending = [*self._computing.items(), *self._pending], []
        self._computing = {}
        failures = {name: job.exception() for name, job in pending if job.exception() is not None}
        if failures and raise_errors:
            raise next(iter(failures.values()))
        return failures

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _after(jobs: list[Future], run: Callable, *args) -> None:
    for job in jobs:
        job.result()  # a failed input fails this statement with the input's error
    run(*args)
