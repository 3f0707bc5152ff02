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

Bundled plans: the package ships the DuckDB plans of the default configuration
(``plans_bundle.json.gz``, same keys), read before the directory. Without them the first
`check` or `lint` after an install or upgrade, which in CI is every run on a fresh runner,
spends ~6 s compiling. They are rebuilt from the sample configs with
``python -m auditor.engine.plan_bundle`` whenever checks/ or auditor/engine/ change (a test fails
until then); a bundle built from other code or other sqlframe/sqlglot versions never matches
a key, so it can only be unused, never wrong. KAFKA_AUDIT_PLAN_BUNDLE=off ignores it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
from functools import cache
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent.parent
BUNDLE = Path(__file__).with_name("plans_bundle.json.gz")


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


def _off(variable: str) -> bool:
    return os.environ.get(variable, "").lower() in ("off", "0", "false", "no")


def default_directory() -> Path | None:
    configured = os.environ.get("KAFKA_AUDIT_PLAN_CACHE")
    if configured:
        return None if _off("KAFKA_AUDIT_PLAN_CACHE") else Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafka-auditor" / "plans"


@cache
def bundled_plans(dialect: str) -> dict[str, dict]:
    """The shipped plans of ``dialect`` by key; empty when they were built from other code."""
    try:
        data = json.loads(gzip.decompress(BUNDLE.read_bytes()))
    except (OSError, ValueError, EOFError):
        return {}
    if not isinstance(data, dict) or data.get("fingerprint") != code_fingerprint():
        return {}
    plans = data.get("plans", {}).get(dialect)
    return {k: e for k, e in plans.items() if _valid(e)} if isinstance(plans, dict) else {}


def _valid(entry) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("sql"), str) and isinstance(entry.get("deps"), list)


class PlanCache:
    def __init__(self, dialect: str, directory: Path | None = None, enabled: bool = True):
        self.dialect = dialect
        self.directory = (directory or default_directory()) if enabled else None
        self.bundled = enabled and self.directory is not None and not _off("KAFKA_AUDIT_PLAN_BUNDLE")
        self.hits = 0
        self.misses = 0

    def key(self, kind: str, name: str, params: dict | None = None, severity: str | None = None) -> str:
        payload = json.dumps([code_fingerprint(), self.dialect, kind, name, params or {}, severity],
                             sort_keys=True, default=repr)
        return hashlib.sha256(payload.encode()).hexdigest()

    def get(self, key: str) -> dict | None:
        if self.directory is None:
            return None
        if self.bundled and key in bundled_plans(self.dialect):
            return bundled_plans(self.dialect)[key]
        try:
            entry = json.loads((self.directory / f"{key}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return entry if _valid(entry) else None

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
