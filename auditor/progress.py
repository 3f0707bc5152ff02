"""Progress of a long command: a live display on a terminal, one line per stage otherwise.

`fleet` on Spark runs for tens of seconds to minutes; a user watching a terminal sees which
stage it is in and how many rules have run, and a CI log or cron mail gets one line per
stage on stderr (never on stdout, which carries the report). Commands that finish in about a
second (`check`, `lint` on DuckDB) pass ``NO_PROGRESS``.

Collecting has a display of its own (:func:`collect_progress`): one rich progress bar per
source, shown only when stderr is a terminal and ``CI`` is not set. The collectors know
nothing of it: they call ``progress(source, step, done, total)`` (auditor/collectors/collect.py).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager


class Progress:
    """Stages with an optional count: ``stage("rules", total=65)``, then ``advance()``."""

    def stage(self, name: str, total: int | None = None) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


NO_PROGRESS = Progress()


class LineProgress(Progress):
    """One line per finished stage, with its duration: for logs and pipes."""

    def __init__(self, prefix: str = "kafka-audit: ", stream=None):
        self._prefix = prefix
        self._stream = stream or sys.stderr
        self._name: str | None = None
        self._total: int | None = None
        self._done = 0
        self._started = 0.0

    def stage(self, name: str, total: int | None = None) -> None:
        self._finish()
        self._name, self._total, self._done, self._started = name, total, 0, time.monotonic()

    def advance(self, n: int = 1) -> None:
        self._done += n

    def _finish(self) -> None:
        if self._name is None:
            return
        count = f" ({self._done}/{self._total})" if self._total else ""
        print(
            f"{self._prefix}{self._name}{count}: {time.monotonic() - self._started:.1f} s",
            file=self._stream,
            flush=True,
        )
        self._name = None

    def close(self) -> None:
        self._finish()


class LiveProgress(Progress):
    """A rich spinner and bar on stderr that disappears when the command ends."""

    def __init__(self):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, SpinnerColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as Bar

        self._bar = Bar(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._bar.start()
        self._task = None

    def stage(self, name: str, total: int | None = None) -> None:
        if self._task is not None:
            self._bar.remove_task(self._task)
        self._task = self._bar.add_task(name, total=total)

    def advance(self, n: int = 1) -> None:
        if self._task is not None:
            self._bar.advance(self._task, n)

    def close(self) -> None:
        self._bar.stop()


def for_stderr() -> Progress:
    """Live on a terminal, lines otherwise (both on stderr)."""
    return LiveProgress() if sys.stderr.isatty() else LineProgress()


# --- collecting ---------------------------------------------------------------------------------
def wanted(stream=None) -> bool:
    stream = stream if stream is not None else sys.stderr
    if os.environ.get("CI"):
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class ProgressDisplay:
    """Adapts collector callbacks onto a rich Progress (one task per source)."""

    def __init__(self, progress):
        self.progress = progress
        self.tasks: dict[str, int] = {}
        self.totals: dict[str, int] = {}

    def __call__(self, source: str, step: str, done: int, total: int) -> None:
        task = self.tasks.get(source)
        if task is None:
            task = self.tasks[source] = self.progress.add_task(source, total=max(total, 1))
            self.totals[source] = max(total, 1)
        if step not in ("start", "done"):
            self.totals[source] = max(total, 1)
        total = self.totals[source]
        if step == "done":
            done = total
        label = source if step in ("start", "done") else f"{source}: {step}"
        self.progress.update(task, description=label, completed=min(done, total), total=total)


@contextmanager
def collect_progress(enabled: bool | None = None) -> Iterator[ProgressDisplay | None]:
    if enabled is None:
        enabled = wanted()
    if not enabled:
        yield None
        return
    with bars() as p:
        yield ProgressDisplay(p)


@contextmanager
def bars():
    """A rich progress display on stderr (spinner, label, bar, time elapsed), gone once done:
    collect's sources and collect --inventory's clusters."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    ) as p:
        yield p
