"""Shared pieces of the read-only collectors: the result type, source errors, secret masking.

Every collector returns a :class:`CollectResult`: rows for the snapshot tables (declared in
auditor/snapshot/schema.py), the sources it read, and a list of source errors
(``{"source", "target", "message"}``) instead of raising. A failed source makes the
snapshot incomplete (exit 3), it never aborts the other sources.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from auditor.sources import DEFAULT_TIMEOUT  # noqa: F401  (every collector's default, seconds)


@dataclass
class CollectResult:
    tables: dict[str, list[dict]] = field(default_factory=dict)
    errors: list[dict] = field(default_factory=list)
    sources: list[dict] = field(default_factory=list)
    meta: dict = field(default_factory=dict)  # facts about the cluster (cluster_id from ZooKeeper, ...)

    def rows(self, table: str) -> list[dict]:
        return self.tables.setdefault(table, [])

    def error(self, source: str, target: str | None, message: str) -> None:
        self.errors.append(source_error(source, target, message))

    def merge(self, other: CollectResult) -> CollectResult:
        for name, rows in other.tables.items():
            self.rows(name).extend(rows)
        self.errors.extend(other.errors)
        self.sources.extend(other.sources)
        for k, v in other.meta.items():
            self.meta.setdefault(k, v)
        return self


def one_line(message: object, limit: int = 500) -> str:
    text = " ".join(str(message).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def source_error(source: str, target: str | None, message: object) -> dict:
    return {"source": source, "target": target, "message": one_line(message)}


# Secrets, by Kafka's own rule (KafkaConfig.maybeSensitive, used by DescribeConfigs): a
# value is sensitive when its key is PASSWORD-typed, or when Kafka has no type for the key
# at all (a plugin's, a typo, a key of a newer release): nobody can vouch that it is not a
# secret (a tiered-storage plugin's rsm.config.storage.aws.secret.access.key, an LDAP
# login module's credentials). Per-listener overrides take the type of the key they
# override (listener.name.L.[mechanism.]KEY -> KEY), as Kafka's broker config synonyms do.
# The types come from Kafka's own config definitions (auditor/kafka_configs.py). The
# name patterns below are a safety net only: they mask, they never unmask.
_ALWAYS_SECRET = re.compile(r"(password|secret|jaas\.config|credentials|passphrase)$", re.IGNORECASE)
_LISTENER_PREFIX = re.compile(r"^listener\.name\.[^.]+\.", re.IGNORECASE)
# Listener configs that carry a SASL mechanism between the listener and the key.
_MECHANISM_KEYS = (
    "sasl.jaas.config",
    "sasl.login.class",
    "sasl.login.callback.handler.class",
    "sasl.server.callback.handler.class",
    "connections.max.reauth.ms",
    "sasl.server.max.receive.size",
)


def _kafka_type(scope: str, key: str) -> str | None:
    from auditor.kafka_configs import config_type

    found = config_type(scope, key)
    if found is None and scope == "broker":
        base = _LISTENER_PREFIX.sub("", key, count=1)
        if base != key:
            base = next((m for m in _MECHANISM_KEYS if base.endswith("." + m)), base)
            found = config_type(scope, base)
    return found


def is_sensitive_key(key: str, scope: str = "broker") -> bool:
    """Would Kafka mask this key's value? ``scope``: broker (also the cluster default) or topic."""
    k = key.strip()
    if _ALWAYS_SECRET.search(k):
        return True
    found = _kafka_type(scope, k)
    return found is None or found.lower() == "password"


def config_row(
    entity_type: str,
    entity_name: str,
    key: str,
    value: str | None,
    source: str,
    *,
    sensitive: bool = False,
    file: str | None = None,
    line: int | None = None,
) -> dict:
    """A ``configs`` row; a secret's value never reaches a row."""
    secret = sensitive or is_sensitive_key(key, "topic" if entity_type == "topic" else "broker")
    return {
        "entity_type": entity_type,
        "entity_name": entity_name,
        "key": key,
        "value": None if secret else value,
        "source": source,
        "is_sensitive": secret,
        "file": file,
        "line": line,
    }


# --- the collector protocol ----------------------------------------------------------------------
@dataclass
class Context:
    """What a collector is handed: the sources, the Admin API client settings (loaded once from
    the client config, auditor/collectors/client_config.py), the progress callback, and the
    results of the collectors that ran before it (a later one may read an earlier one's rows:
    metrics are attributed to the brokers the registry sources found)."""

    sources: Any  # auditor.sources.Sources
    client: Any = None  # ClientSettings, when a bootstrap server is known
    progress: Callable | None = None  # progress(source, step, done, total)
    # (collector name, result): ``extra`` results first (named "extra"), then the earlier collectors'
    results: list[tuple[str, CollectResult]] = field(default_factory=list)

    def result(self, name: str) -> CollectResult | None:
        return next((r for n, r in self.results if n == name), None)

    @property
    def bootstrap(self) -> str | None:
        """The Admin API's bootstrap servers: the loaded client's (a client config may name them),
        else the sources' (before a client is loaded: estimating deadlines)."""
        if self.client is not None:
            return self.client.config.get("bootstrap.servers") or None
        return self.sources.bootstrap_servers


@dataclass(frozen=True)
class Collector:
    """One read-only source of snapshot rows (auditor/collectors/collect.py ``COLLECTORS`` lists
    them in the order they run). ``wanted(ctx)``: whether the sources name it; ``target(ctx)``:
    what it reads, for messages (never a secret); ``collect(ctx)``: its rows and source errors,
    never raising for a failing source; ``requests(ctx)``: how many requests it makes at most
    (the orchestrator's deadline for it grows with them: collect.source_deadline)."""

    name: str
    wanted: Callable[[Context], bool]
    target: Callable[[Context], str]
    collect: Callable[[Context], CollectResult]
    requests: Callable[[Context], int] = lambda ctx: 0
