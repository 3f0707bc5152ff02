"""Reading and writing snapshot directories.

A snapshot directory holds ``manifest.json`` and one file per table, either
``<table>.parquet`` or ``<table>.jsonl`` (JSON Lines: diffable, used by the sample fleet).
A fleet is any directory tree holding several snapshot directories, for example
``dt=2026-11-22/cluster=payments/``.

Validation here is cheap and local (manifest, Parquet footers, JSON Lines syntax and types)
so that a corrupt snapshot fails with one line naming the file, before any engine starts.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from auditor import __version__, safe_io
from auditor.errors import SnapshotError
from auditor.snapshot.schema import FILE_TABLES, SCHEMA_VERSION, TABLES, Table, arrow_schema, python_check

MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 64 * 1024 * 1024
FORMATS = ("parquet", "jsonl")
CLUSTER_FIELDS = ("id", "name", "environment", "tier", "platform", "kafka_version", "metadata_mode",
                  "msk_instance_type", "az_count")


@dataclass
class Manifest:
    cluster: dict
    collected_at: str
    sources: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    tables: dict[str, str] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION
    tool: dict = field(default_factory=lambda: {"name": "kafka-auditor", "version": __version__})

    @property
    def cluster_id(self) -> str:
        return self.cluster["id"]

    @property
    def cluster_name(self) -> str:
        return self.cluster.get("name") or self.cluster["id"]

    def to_json(self) -> dict:
        return {
            "schema_version": self.schema_version,
            "tool": self.tool,
            "cluster": self.cluster,
            "collected_at": self.collected_at,
            "sources": self.sources,
            "errors": self.errors,
            "tables": self.tables,
        }

    def cluster_row(self) -> dict:
        c = self.cluster
        return {
            "cluster_id": c["id"],
            "cluster_name": self.cluster_name,
            "environment": c.get("environment"),
            "tier": c.get("tier"),
            "platform": c.get("platform"),
            "kafka_version": c.get("kafka_version"),
            "metadata_mode": c.get("metadata_mode"),
            "msk_instance_type": c.get("msk_instance_type"),
            "az_count": c.get("az_count"),
            "collected_at": self.collected_at,
        }

    def error_rows(self) -> list[dict]:
        return [
            {"cluster_id": self.cluster_id, "source": e.get("source", "?"), "target": e.get("target"),
             "message": e.get("message", "")}
            for e in self.errors
        ]


@dataclass
class SnapshotRef:
    """A validated snapshot directory: its manifest and the file of each table present."""

    path: str  # a local path, or a URI Spark reads (s3a://, hdfs://, file://)
    manifest: Manifest
    files: dict[str, tuple[str, str]]  # table -> (file, format)


def now_iso() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def write_snapshot(directory: str | os.PathLike, manifest: Manifest, tables: Mapping[str, Iterable[dict]],
                   fmt: str = "parquet") -> Path:
    """Write a snapshot directory. Rows get the manifest's cluster_id; unknown tables or
    columns are programming errors and raise ValueError."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}")
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, rows in tables.items():
        table = TABLES.get(name)
        if table is None or table.from_manifest:
            raise ValueError(f"not a snapshot file table: {name}")
        normalised = [_normalise_row(table, row, manifest.cluster_id) for row in rows]
        filename = f"{name}.{fmt}"
        if fmt == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            pq.write_table(pa.Table.from_pylist(normalised, schema=arrow_schema(table)), out / filename)
        else:
            with open(out / filename, "w", encoding="utf-8") as fh:
                for row in normalised:
                    fh.write(json.dumps(row, separators=(",", ":"), sort_keys=False) + "\n")
        written[name] = filename
    manifest.tables = dict(sorted(written.items()))
    tmp = out / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest.to_json(), indent=2) + "\n", encoding="utf-8")
    tmp.replace(out / MANIFEST)  # the manifest last and atomically: no manifest, no snapshot
    return out


def _normalise_row(table: Table, row: dict, cluster_id: str) -> dict:
    unknown = set(row) - set(table.names)
    if unknown:
        raise ValueError(f"{table.name}: undeclared columns {sorted(unknown)}")
    out = {c: row.get(c) for c in table.names}
    out["cluster_id"] = cluster_id
    for c in table.columns:
        if not python_check(c.type, out[c.name]):
            raise ValueError(f"{table.name}.{c.name}: {out[c.name]!r} is not {c.type}")
    return out


# --- reading -------------------------------------------------------------------------------


def read_manifest(directory: Path) -> Manifest:
    path = directory / MANIFEST
    try:
        text = safe_io.read_text(path, limit=MAX_MANIFEST_BYTES)
    except FileNotFoundError:
        raise SnapshotError(f"{path}: no manifest.json: not a snapshot directory") from None
    except safe_io.FileRefused as e:  # a FIFO or a device (also behind a symlink), or huge
        raise SnapshotError(str(e)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise SnapshotError(f"{path}: unreadable: {e}") from None
    return parse_manifest(text, str(path))


def parse_manifest(text: str, path: str) -> Manifest:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise SnapshotError(f"{path}: not valid JSON (line {e.lineno}: {e.msg})") from None
    if not isinstance(raw, dict):
        raise SnapshotError(f"{path}: expected a JSON object")
    version = raw.get("schema_version")
    if version != SCHEMA_VERSION:
        raise SnapshotError(f"{path}: schema_version {version!r} is not supported (this tool reads {SCHEMA_VERSION})")
    cluster = raw.get("cluster")
    if not isinstance(cluster, dict) or not isinstance(cluster.get("id"), str) or not cluster["id"]:
        raise SnapshotError(f"{path}: cluster.id is missing")
    tables = raw.get("tables") or {}
    if not isinstance(tables, dict) or not all(isinstance(v, str) for v in tables.values()):
        raise SnapshotError(f"{path}: 'tables' must map table names to file names")
    for key in ("sources", "errors"):
        if not isinstance(raw.get(key, []), list) or not all(isinstance(x, dict) for x in raw.get(key, [])):
            raise SnapshotError(f"{path}: '{key}' must be a list of objects")
    return Manifest(
        cluster={k: cluster.get(k) for k in CLUSTER_FIELDS if cluster.get(k) is not None},
        collected_at=str(raw.get("collected_at") or ""),
        sources=raw.get("sources", []),
        errors=raw.get("errors", []),
        tables=tables,
        schema_version=version,
        tool=raw.get("tool") or {},
    )


def open_snapshot(directory: str | os.PathLike, *, deep: bool = True) -> SnapshotRef:
    """Validate a snapshot directory. ``deep`` also checks every JSON Lines row against the
    declared types (Parquet is checked from its footer, which is cheap at any size)."""
    path = Path(directory)
    manifest = read_manifest(path)
    files: dict[str, tuple[Path, str]] = {}
    for name, filename in manifest.tables.items():
        table = TABLES.get(name)
        if table is None or table.from_manifest:
            raise SnapshotError(f"{path / MANIFEST}: unknown table '{name}'")
        file = path / filename
        if "/" in filename or filename.startswith(".") or not file.exists():
            raise SnapshotError(f"{file}: listed in the manifest but missing: the snapshot is incomplete")
        try:
            safe_io.check_regular(file, limit=None)  # engines read it later: a FIFO would hang them
        except safe_io.FileRefused as e:
            raise SnapshotError(str(e)) from None
        except OSError as e:
            raise SnapshotError(f"{file}: unreadable: {e}") from None
        fmt = file.suffix.lstrip(".")
        if fmt not in FORMATS:
            raise SnapshotError(f"{file}: unknown table format '{fmt}' (expected .parquet or .jsonl)")
        if fmt == "parquet":
            _check_parquet(table, file)
        elif deep:
            _check_jsonl(table, file, manifest.cluster_id)
        files[name] = (str(file), fmt)
    return SnapshotRef(str(path), manifest, files)


def _check_parquet(table: Table, file: Path) -> None:
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(file)
    except Exception as e:  # pyarrow raises several types for corrupt footers
        raise SnapshotError(f"{file}: not a readable Parquet file ({e})") from None
    expected = arrow_schema(table)
    for f in expected:
        idx = schema.get_field_index(f.name)
        if idx < 0:
            raise SnapshotError(f"{file}: column '{f.name}' is missing")
        if not schema.field(idx).type.equals(f.type):
            raise SnapshotError(f"{file}: column '{f.name}' is {schema.field(idx).type}, expected {f.type}")


def _check_jsonl(table: Table, file: Path, cluster_id: str) -> None:
    declared = {c.name: c.type for c in table.columns}
    try:
        with safe_io.open_text(file, limit=None) as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as e:
                    raise SnapshotError(f"{file}:{lineno}: not valid JSON ({e.msg})") from None
                if not isinstance(row, dict):
                    raise SnapshotError(f"{file}:{lineno}: expected a JSON object")
                for key, value in row.items():
                    ddl = declared.get(key)
                    if ddl is None:
                        raise SnapshotError(f"{file}:{lineno}: undeclared column '{key}'")
                    if not python_check(ddl, value):
                        raise SnapshotError(f"{file}:{lineno}: '{key}' = {value!r} is not {ddl}")
                if row.get("cluster_id") != cluster_id:
                    raise SnapshotError(f"{file}:{lineno}: cluster_id {row.get('cluster_id')!r} does not match the manifest ({cluster_id!r})")
    except UnicodeDecodeError:
        raise SnapshotError(f"{file}: not UTF-8 text") from None
    except safe_io.FileRefused as e:
        raise SnapshotError(str(e)) from None
    except OSError as e:
        raise SnapshotError(f"{file}: unreadable: {e}") from None


def discover(root: str | os.PathLike) -> list[Path]:
    """Snapshot directories at or below root, sorted. A file path is an error."""
    base = Path(root)
    if not base.exists():
        raise SnapshotError(f"{base}: no such file or directory")
    if not base.is_dir():
        raise SnapshotError(f"{base}: not a snapshot directory")
    if (base / MANIFEST).exists():
        return [base]
    found = sorted(Path(dirpath) for dirpath, _dirs, names in os.walk(base) if MANIFEST in names)
    if not found:
        raise SnapshotError(f"{base}: no snapshot found (no manifest.json at or below it)")
    return found


def all_file_tables() -> list[str]:
    return [t.name for t in FILE_TABLES]
