"""Shared pieces of the read-only collectors: the result type, source errors, secret masking.

Every collector returns a :class:`CollectResult`: rows for the snapshot tables (declared in
auditor/snapshot/schema.py), the sources it read, and a list of source errors
(``{"source", "target", "message"}``) instead of raising. A failed source makes the
snapshot incomplete (exit 3), it never aborts the other sources.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# Network calls of every collector use this timeout (seconds) unless told otherwise.
DEFAULT_TIMEOUT = 10.0


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


# Keys whose values are secrets. Kafka declares these as type PASSWORD (ConfigDef.Type.PASSWORD)
# and reports them as sensitive in DescribeConfigs; the listener- and mechanism-prefixed forms
# (listener.name.sasl_ssl.plain.sasl.jaas.config) are matched by suffix.
_SENSITIVE_EXACT_SUFFIXES = (
    "sasl.jaas.config",
    "ssl.truststore.certificates",
    "password.encoder.secret",
    "password.encoder.old.secret",
    "delegation.token.master.key",
    "delegation.token.secret.key",
    "sasl.oauthbearer.client.credentials.client.secret",
)
_SENSITIVE_RE = re.compile(
    r"(^|\.)ssl\.key[^.]*(\.|$)"  # ssl.key.password, ssl.keystore.password, ssl.keystore.key, ssl.keystore.location ...
    r"|password$"  # *.password, zookeeper.ssl.keystore.password, ...
    r"|secret$",
    re.IGNORECASE,
)


def is_sensitive_key(key: str) -> bool:
    k = key.strip().lower()
    return k.endswith(_SENSITIVE_EXACT_SUFFIXES) or bool(_SENSITIVE_RE.search(k))


def config_row(entity_type: str, entity_name: str, key: str, value: str | None, source: str, *,
               sensitive: bool = False, file: str | None = None, line: int | None = None) -> dict:
    """A ``configs`` row; a secret's value never reaches a row."""
    secret = sensitive or is_sensitive_key(key)
    return {"entity_type": entity_type, "entity_name": entity_name, "key": key,
            "value": None if secret else value, "source": source, "is_sensitive": secret,
            "file": file, "line": line}
