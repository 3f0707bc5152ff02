"""Reading user-given files safely: regular files only, with a size limit.

A path the user names (``--broker-config``, a lint input, a snapshot's ``manifest.json`` or
tables, a baseline, a config file) may be a FIFO (reading blocks until a writer comes,
possibly forever), a device (``/dev/zero`` never ends; a symlink to it is followed) or a
socket. Every reader of such a path goes through :func:`open_regular`:

* the path is ``stat``-ed and refused unless it is a regular file (before any ``open``, so a
  device is never opened);
* it is then opened with ``O_NONBLOCK`` (so a FIFO swapped in after the ``stat`` cannot
  block the ``open``) and ``fstat``-ed again: what was opened must be a regular file too;
* a file larger than the limit is refused, and reading stops at the limit even if the file
  grows meanwhile.

* inside :func:`confined_to` (the MCP server reading paths a model named), the path must
  resolve, symlinks followed, under one of the given directories: a symlink leading out of
  them, or a Terraform sibling file that is one, is refused like a FIFO is.

A refusal raises :class:`FileRefused` (an ``OSError``, so a generic ``except OSError`` still
catches it), whose message names the file::

    FILE: not a regular file (a FIFO): refused
    FILE: larger than N bytes: refused
    FILE: outside the directories this server reads: refused
"""

from __future__ import annotations

import contextvars
import io
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager

DEFAULT_LIMIT = 64 * 1024 * 1024

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


class FileRefused(OSError):
    """A path that is not a regular file, or is too large; ``str(e)`` is the whole message
    (naming the file), ``e.reason`` the part after ``FILE: ``."""

    def __init__(self, path, reason: str):
        self.path = str(path)
        self.reason = reason
        self.message = f"{self.path}: {reason}"
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


# The directories reads are confined to (real paths), in this thread's context; None: anywhere.
_CONFINED: contextvars.ContextVar[tuple[str, ...] | None] = contextvars.ContextVar(
    "kafka_audit_confined_to", default=None
)
OUTSIDE = "outside the directories this server reads: refused"


def is_within(real: str, directories) -> bool:
    """Whether the real path ``real`` is one of ``directories`` (real paths) or below one."""
    return any(real == d or real.startswith(d.rstrip(os.sep) + os.sep) for d in directories)


@contextmanager
def confined_to(directories) -> Iterator[None]:
    """Within the block (this thread and context only), every path checked here must resolve,
    symlinks followed, under one of ``directories``."""
    token = _CONFINED.set(tuple(os.path.realpath(d) for d in directories))
    try:
        yield
    finally:
        _CONFINED.reset(token)


@contextmanager
def own_directory(path) -> Iterator[None]:
    """Within a confined block, ``path`` (a directory this process just made: a temporary copy of
    a snapshot) is readable too."""
    confined = _CONFINED.get()
    if confined is None:
        yield
        return
    token = _CONFINED.set((*confined, os.path.realpath(path)))
    try:
        yield
    finally:
        _CONFINED.reset(token)


def _check(path, st: os.stat_result, limit: int | None) -> None:
    confined = _CONFINED.get()
    if confined is not None and not is_within(os.path.realpath(path), confined):
        raise FileRefused(path, OUTSIDE)
    if not stat.S_ISREG(st.st_mode):
        raise FileRefused(path, f"not a regular file ({_kind(st.st_mode)}): refused")
    if limit is not None and st.st_size > limit:
        raise FileRefused(path, f"larger than {limit} bytes: refused")


def check_regular(path, *, limit: int | None = DEFAULT_LIMIT) -> None:
    """Raise FileRefused unless ``path`` (symlinks followed) is a regular file within the limit.
    OSError (FileNotFoundError, PermissionError...) as os.stat raises it."""
    _check(path, os.stat(path), limit)


def open_regular(path, *, limit: int | None = DEFAULT_LIMIT) -> io.BufferedReader:
    """A binary file object for ``path`` if it is a regular file of at most ``limit`` bytes."""
    check_regular(path, limit=limit)
    flags = (
        os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    )
    fd = os.open(path, flags)
    try:
        _check(path, os.fstat(fd), limit)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path, *, limit: int | None = DEFAULT_LIMIT) -> bytes:
    """The content of a regular file; FileRefused if it is not one or exceeds ``limit``."""
    with open_regular(path, limit=limit) as fh:
        if limit is None:
            return fh.read()
        data = fh.read(limit + 1)
    if len(data) > limit:  # it grew after the fstat
        raise FileRefused(path, f"larger than {limit} bytes: refused")
    return data


def read_text(path, *, limit: int | None = DEFAULT_LIMIT, encoding: str = "utf-8") -> str:
    """read_bytes decoded with universal newlines, as ``Path.read_text`` reads (UnicodeDecodeError
    as decoding raises it)."""
    return io.TextIOWrapper(io.BytesIO(read_bytes(path, limit=limit)), encoding=encoding).read()


def open_text(path, *, limit: int | None = DEFAULT_LIMIT, encoding: str = "utf-8") -> io.TextIOWrapper:
    """A text file object for streaming a regular file (the limit is checked at open)."""
    return io.TextIOWrapper(open_regular(path, limit=limit), encoding=encoding)
