"""Progress display of ``kafka-audit collect``: one rich progress bar per source, on stderr.

The collectors know nothing of it: they call ``progress(source, step, done, total)`` (see
auditor/collectors/collect.py). The display is shown only when stderr is a terminal and
``CI`` is not set; otherwise :func:`collect_progress` yields None and nothing is printed.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


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
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as p:
        yield ProgressDisplay(p)
