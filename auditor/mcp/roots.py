"""Where the server may read files: the roots it was started with (``--root DIR``), and
nowhere else.

A model names files and snapshots by path. Every path is resolved before anything is read:
absolute, or relative to the first root that holds it; the real path (every symlink followed)
must be a root or lie below one, and exist. Then the command runs inside
:func:`auditor.safe_io.confined_to` the roots, so every file it opens through the project's
readers (lint's inputs and the Terraform files beside them, a snapshot's manifest and tables,
a baseline) is checked again, and only regular files within the CLI's size limits are read
(auditor/safe_io.py): a symlink out of a root, a FIFO, ``/dev/zero`` are refused with one line
naming the file. A directory lint walks is checked file by file before the run, so a symlink
leading out of a root is an error naming it rather than a file silently left out.

Inline contents (lint_files ``files``) are written to a private temporary directory, linted
there under their given names, and shown under those names.

Paths in results are shown relative to their root (what the tools take back).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from auditor import safe_io
from auditor.errors import UsageError
from auditor.escape import neutralise

MAX_INLINE_BYTES = 16 * 1024 * 1024  # all inline files of one call together
MAX_INLINE_FILES = 1000


@dataclass(frozen=True)
class Roots:
    directories: tuple[str, ...]  # real paths

    @classmethod
    def of(cls, given) -> Roots:
        """The roots as given at start: each an existing directory (a usage error otherwise)."""
        out = []
        for d in given:
            real = os.path.realpath(d)
            if not os.path.isdir(real):
                raise UsageError(f"mcp: --root {d}: not a directory")
            if real not in out:
                out.append(real)
        return cls(tuple(out))

    def find(self, given: str) -> Path:
        """The real path of a path the model named (absolute, or relative to the first root holding
        it): within a root once every symlink is followed, and existing."""
        text = str(given)
        if not text.strip() or "\0" in text:
            raise UsageError(f"'{neutralise(text)}': not a path")
        p = Path(text)
        candidates = [p] if p.is_absolute() else [Path(d) / p for d in self.directories]
        found = next((c for c in candidates if os.path.lexists(c)), None)
        if found is None:
            raise UsageError(f"{neutralise(text)}: no such file or directory under the served roots")
        real = os.path.realpath(found)
        if not safe_io.is_within(real, self.directories):
            raise UsageError(f"{neutralise(text)}: {safe_io.OUTSIDE}")
        if not os.path.exists(real):
            raise UsageError(f"{neutralise(text)}: a symlink to nothing")
        return Path(real)

    def file(self, given: str) -> Path:
        """A regular file (a FIFO, a device or a directory refused), within the CLI's size limit."""
        real = self.find(given)
        try:
            safe_io.check_regular(real)
        except OSError as e:
            raise UsageError(self.display(str(e))) from None
        return real

    def directory(self, given: str) -> Path:
        real = self.find(given)
        if not real.is_dir():
            raise UsageError(f"{neutralise(given)}: not a directory")
        return real

    def file_or_directory(self, given: str) -> Path:
        real = self.find(given)
        return real if real.is_dir() else self.file(given)

    def check_lint_walk(self, paths: list[Path]) -> None:
        """Every file lint's own walk of ``paths`` reads (auditor.lint.inputs.expand) lies within
        the roots; the first that does not is an error naming it."""
        from auditor.lint.inputs import expand

        for path, _named in expand(paths):
            if not safe_io.is_within(os.path.realpath(path), self.directories):
                raise UsageError(f"{self.display(str(path))}: {safe_io.OUTSIDE}")

    def confined(self, *extra: str | Path):
        """Reads inside the block are confined to the roots (and ``extra``: a staging directory)."""
        return safe_io.confined_to((*self.directories, *map(str, extra)))

    def display(self, text: str) -> str:
        """``text`` with every root's path shown relative to it (a root itself as ``.``)."""
        return relative(text, self.directories)

    def shown(self, real: Path) -> str:
        return self.display(str(real))


def relative(text: str, directories) -> str:
    """``text`` with ``DIR/`` removed for each of ``directories`` (longest first) and a bare
    ``DIR`` (at the end of a path) shown as ``.``."""
    for d in sorted(directories, key=len, reverse=True):
        if d == "/":
            continue  # a root of / keeps paths absolute
        prefix = d.rstrip("/") + "/"
        text = text.replace(prefix, "")
        text = re.sub(re.escape(d.rstrip("/")) + r"(?![\w./-])", ".", text)
    return text


def displayed(value, show):
    """``value`` (a JSON document: dicts, lists, strings) with ``show`` applied to every string."""
    if isinstance(value, str):
        return show(value)
    if isinstance(value, list):
        return [displayed(v, show) for v in value]
    if isinstance(value, dict):
        return {k: displayed(v, show) for k, v in value.items()}
    return value


@contextmanager
def staged(files: list[dict]) -> Iterator[tuple[Path, list[Path]]]:
    """Inline files (``{"name": "topics/orders.yaml", "content": "..."}``) written to a private
    temporary directory: (the directory, each file's path). Names are relative paths without
    ``..``; the directory is removed afterwards."""
    if len(files) > MAX_INLINE_FILES:
        raise UsageError(f"files: {len(files)} inline files (at most {MAX_INLINE_FILES})")
    total = sum(len(f["content"].encode("utf-8", "replace")) for f in files)
    if total > MAX_INLINE_BYTES:
        raise UsageError(f"files: {total} bytes of inline contents (at most {MAX_INLINE_BYTES})")
    names = []
    for f in files:
        name = str(f["name"])
        parts = PurePosixPath(name).parts
        if (
            not name.strip()
            or "\0" in name
            or "\\" in name
            or name.startswith("/")
            or not parts
            or any(p in ("..", ".") for p in parts)
        ):
            raise UsageError(
                f"files: '{neutralise(name)}' is not a relative file name (no '..', not absolute)"
            )
        if name in names:
            raise UsageError(f"files: '{neutralise(name)}' given twice")
        names.append(name)
    directory = tempfile.mkdtemp(prefix="kafka-audit-mcp-")
    try:
        paths = []
        for f, name in zip(files, names, strict=True):
            path = Path(directory, *PurePosixPath(name).parts)
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(f["content"])
            paths.append(path)
        yield Path(os.path.realpath(directory)), [Path(os.path.realpath(p)) for p in paths]
    finally:
        shutil.rmtree(directory, ignore_errors=True)
