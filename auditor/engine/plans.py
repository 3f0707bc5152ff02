"""Compiled-plan cache: the SQL each rule and shared transform compiles to, kept on disk.

Why: a check's DataFrame code is compiled to SQL by sqlframe, which copies the whole
expression tree on every DataFrame operation. Building the plans of the full catalogue
costs seconds of pure Python while DuckDB runs them in milliseconds. A plan depends only on
the check code, its parameters and severity, and the engine's SQL dialect, never on the
data, so it is compiled once and reused, like a prepared statement.

Key: sha256 over (the source of checks/ and auditor/engine/, sqlframe and sqlglot versions,
the dialect, the entry's name, parameters and severity). Editing a check, upgrading
sqlframe or changing a parameter compiles afresh; nothing is ever stale.

Location: $KAFKA_AUDIT_PLAN_CACHE, else $XDG_CACHE_HOME/kafka-auditor/plans, else
~/.cache/kafka-auditor/plans. KAFKA_AUDIT_PLAN_CACHE=off disables it. A cache that cannot be
read or written is ignored (it only costs time), never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from functools import cache
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent.parent


@cache
def code_fingerprint() -> str:
    from importlib.metadata import PackageNotFoundError, version

    h = hashlib.sha256()
    for pkg in ("sqlframe", "sqlglot"):
        try:
            h.update(f"{pkg}={version(pkg)};".encode())
        except PackageNotFoundError:
            h.update(f"{pkg}=?;".encode())
    import auditor.engine as engine_pkg
    import checks

    for base in (Path(checks.__file__).parent, Path(engine_pkg.__file__).parent):
        for path in sorted(base.rglob("*.py")):
            h.update(path.name.encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def default_directory() -> Path | None:
    configured = os.environ.get("KAFKA_AUDIT_PLAN_CACHE")
    if configured:
        return None if configured.lower() in ("off", "0", "false", "no") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafka-auditor" / "plans"


class PlanCache:
    def __init__(self, dialect: str, directory: Path | None = None, enabled: bool = True):
        self.dialect = dialect
        self.directory = (directory or default_directory()) if enabled else None
        self.hits = 0
        self.misses = 0

    def key(self, kind: str, name: str, params: dict | None = None, severity: str | None = None) -> str:
        payload = json.dumps([code_fingerprint(), self.dialect, kind, name, params or {}, severity],
                             sort_keys=True, default=repr)
        return hashlib.sha256(payload.encode()).hexdigest()

    def get(self, key: str) -> dict | None:
        if self.directory is None:
            return None
        try:
            entry = json.loads((self.directory / f"{key}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or not isinstance(entry.get("sql"), str) or not isinstance(entry.get("deps"), list):
            return None
        return entry

    def put(self, key: str, sql: str, deps: list[str]) -> None:
        if self.directory is None:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"sql": sql, "deps": deps}, fh)
            os.replace(tmp, self.directory / f"{key}.json")
        except OSError:
            pass
