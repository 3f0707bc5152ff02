"""Compiled-plan cache: the SQL each rule and shared transform compiles to, kept on disk.

Why: a check's DataFrame code is compiled to SQL by sqlframe, which copies the whole
expression tree on every DataFrame operation. Building the plans of the full catalogue
costs seconds of pure Python while DuckDB runs them in milliseconds. A plan depends only on
the check code, its parameters and the engine's SQL dialect (not on the severity, which the
runner adds around it, nor on the data), so it is compiled once and reused, like a prepared
statement.

Key: sha256 over (the source of the rules (checks/ and any plugin's package: registry.rule_sources),
auditor/engine/ and the modules that shape the SQL
(SHAPING_MODULES: table schemas and column types, finding columns, rule parameters; the data
tables under auditor/data the rules read), sqlframe
and sqlglot versions, the dialect, the entry's name and parameters). Editing a check,
changing a column type, upgrading sqlframe or changing a parameter compiles afresh; nothing is
ever stale.

Trust: a cached plan is SQL that runs as it is found, so a disk entry is used only when it
verifies: each entry carries an HMAC-SHA256 over (its key, SQL, deps) made with a per-user secret
(``plan-cache.key``, 32 random bytes, created 0600). The secret lives outside the cache tree
($KAFKA_AUDIT_PLAN_KEY, else $XDG_STATE_HOME/kafka-auditor, else ~/.local/state/kafka-auditor)
and is used only when owned by this user and not readable or writable by others. An entry that
was edited, renamed to another key, or written by another user or machine (a cache restored in
CI, a copied directory) fails verification and is compiled afresh, never executed. Without a
usable secret the directory is neither read nor written.

Location: $KAFKA_AUDIT_PLAN_CACHE, else $XDG_CACHE_HOME/kafka-auditor/plans, else
~/.cache/kafka-auditor/plans. KAFKA_AUDIT_PLAN_CACHE=off disables it. A cache that cannot be
read or written is ignored (it only costs time), never an error.

Bundled plans: the package ships the DuckDB and Spark plans of the default configuration
(``plans_bundle.json.gz``, same keys), read before the directory. Without them the first
`check` or `lint` after an install or upgrade, which in CI is every run on a fresh runner,
spends ~6 s compiling, and the first `fleet` on Spark ~50 s. They are rebuilt from the sample configs with
``python -m auditor.engine.plan_bundle`` whenever checks/ or auditor/engine/ change (a test fails
until then); a bundle built from other code or other sqlframe/sqlglot versions never matches
a key, so it can only be unused, never wrong. It is part of the installed package and trusted
like its code. KAFKA_AUDIT_PLAN_BUNDLE=off ignores it.
"""

from __future__ import annotations

import gzip
import hashlib
import hmac
import json
import os
import secrets
import stat
import tempfile
from functools import cache
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent.parent
BUNDLE = Path(__file__).with_name("plans_bundle.json.gz")
# Modules outside checks/ and auditor/engine/ whose source shapes the compiled SQL.
SHAPING_MODULES = (
    "auditor/snapshot/schema.py",
    "auditor/findings.py",
    "auditor/registry.py",
    "auditor/declarations.py",
    "auditor/frames.py",
    "auditor/engine/root_causes.py",
    "auditor/commands/preflight.py",
    "auditor/commands/preflight_plan.py",
    "auditor/commands/preflight_upgrade.py",
    # the tables the rules turn into SQL literals (known keys, the 4.x upgrade table, MSK's versions)
    "auditor/kafka_configs.py",
    "auditor/kafka_upgrades.py",
)
SHAPING_DATA = "auditor/data"  # every *.json there: a regenerated table compiles afresh
KEY_FILE = "plan-cache.key"


@cache
def code_fingerprint() -> str:
    from importlib.metadata import PackageNotFoundError, version

    h = hashlib.sha256()
    for pkg in ("sqlframe", "sqlglot"):
        try:
            h.update(f"{pkg}={version(pkg)};".encode())
        except PackageNotFoundError:
            h.update(f"{pkg}=?;".encode())
    # The rule sources come from the registry, which loads the catalogue (checks/ and any
    # plugin): the engine itself never imports the checks.
    from auditor.registry import rule_sources

    for path in [*rule_sources(), *sorted(Path(__file__).parent.rglob("*.py"))]:
        h.update(path.name.encode())
        h.update(path.read_bytes())
    for name in SHAPING_MODULES:
        h.update(name.encode())
        h.update((_ROOT / name).read_bytes())
    for path in sorted((_ROOT / SHAPING_DATA).glob("*.json")):
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


def key_path() -> Path:
    configured = os.environ.get("KAFKA_AUDIT_PLAN_KEY")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "kafka-auditor" / KEY_FILE


def _private(st: os.stat_result) -> bool:
    """Owned by this user, a regular file, and nobody else can read or write it."""
    if not stat.S_ISREG(st.st_mode):
        return False
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return False
    return os.name == "nt" or not st.st_mode & 0o077


def load_secret(path: Path | None = None, create: bool = True) -> bytes | None:
    """The per-user HMAC secret (created on first use), or None when it is missing or not private."""
    path = path or key_path()
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            if not create or not _create_secret(path):
                return None
            continue
        except OSError:
            return None
        try:
            with os.fdopen(fd, "rb") as fh:
                if not _private(os.fstat(fh.fileno())):
                    return None
                data = fh.read(4096).strip()
        except OSError:
            return None
        try:
            secret = bytes.fromhex(data.decode("ascii"))
        except ValueError:
            return None
        return secret if len(secret) >= 32 else None
    return None


def _create_secret(path: Path) -> bool:
    """Write a new secret atomically (first writer wins); True when one exists afterwards."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".key-")  # mode 0600
        try:
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(secrets.token_hex(32) + "\n")
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
    except OSError:
        return False
    return True


def _mac(secret: bytes, key: str, sql: str, deps: list) -> str:
    payload = json.dumps([key, sql, deps], sort_keys=True, ensure_ascii=True).encode()
    return hmac.new(secret, payload, hashlib.sha256).hexdigest()


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
    return (
        isinstance(entry, dict) and isinstance(entry.get("sql"), str) and isinstance(entry.get("deps"), list)
    )


class PlanCache:
    def __init__(self, dialect: str, directory: Path | None = None, enabled: bool = True):
        self.dialect = dialect
        self.directory = (directory or default_directory()) if enabled else None
        self.bundled = enabled and self.directory is not None and not _off("KAFKA_AUDIT_PLAN_BUNDLE")
        self.hits = 0
        self.misses = 0
        self.rejected = 0  # disk entries that failed verification
        self._secret: bytes | None | bool = False  # False: not loaded yet

    def secret(self) -> bytes | None:
        if self._secret is False:
            self._secret = load_secret() if self.directory is not None else None
        return self._secret

    def key(self, kind: str, name: str, params: dict | None = None) -> str:
        payload = json.dumps(
            [code_fingerprint(), self.dialect, kind, name, params or {}],
            sort_keys=True,
            default=repr,
        )
        return hashlib.sha256(payload.encode()).hexdigest()

    def get(self, key: str) -> dict | None:
        if self.directory is None:
            return None
        if self.bundled and key in bundled_plans(self.dialect):
            return bundled_plans(self.dialect)[key]
        path = self.directory / f"{key}.json"
        if not path.exists():
            return None
        secret = self.secret()
        if secret is None:
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if (
            not _valid(entry)
            or not isinstance(entry.get("mac"), str)
            or not hmac.compare_digest(entry["mac"], _mac(secret, key, entry["sql"], entry["deps"]))
        ):
            self.rejected += 1
            return None
        return {"sql": entry["sql"], "deps": entry["deps"]}

    def put(self, key: str, sql: str, deps: list[str]) -> None:
        if self.directory is None:
            return
        secret = self.secret()
        if secret is None:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(dir=self.directory, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"sql": sql, "deps": deps, "mac": _mac(secret, key, sql, deps)}, fh)
            os.replace(tmp, self.directory / f"{key}.json")
        except OSError:
            pass
