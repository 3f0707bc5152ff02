"""Reading and writing snapshot directories.

A snapshot directory holds ``manifest.json`` and one file per table, either
``<table>.parquet`` or ``<table>.jsonl`` (JSON Lines: diffable, used by the sample fleet).
A fleet is any directory tree holding several snapshot directories, for example
``dt=2026-11-22/cluster=payments/``.

Validation here is cheap and local (manifest, Parquet footers, JSON Lines syntax and types)
so that a corrupt snapshot fails with one line naming the file, before any engine starts.
"""

from __future__ import annotations

import errno
import gc
import hashlib
import json
import os
import re
import secrets
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path

from auditor import __version__, safe_io, safe_json
from auditor.errors import SnapshotError
from auditor.snapshot.schema import (
    FILE_TABLES,
    SCHEMA_VERSION,
    TABLES,
    Table,
    arrow_schema,
    duckdb_type,
    python_check,
    sql_string,
)

MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 64 * 1024 * 1024
FORMATS = ("parquet", "jsonl")
NO_TABLES = "no tables: nothing was collected"
CLUSTER_FIELDS = (
    "id",
    "name",
    "environment",
    "tier",
    "platform",
    "kafka_version",
    "kafka_version_source",
    "metadata_mode",
    "msk_instance_type",
    "az_count",
    "msk",
)


def _msk_columns(msk) -> dict:
    """The manifest's ``cluster.msk`` block (state, operations_in_progress, client
    authentication) as clusters columns."""
    msk = msk if isinstance(msk, dict) else {}
    ops = [
        f"{op.get('type') or 'unknown type'} ({op.get('state') or 'state unknown'}, "
        f"started {op.get('start_time') or 'unknown'})"
        for op in msk.get("operations_in_progress") or []
        if isinstance(op, dict)
    ]
    state = msk.get("state")
    return {
        "msk_state": str(state) if state else None,
        "msk_operations": "; ".join(ops) or None,
        "msk_iam_auth": _iam_auth(msk),
    }


def _iam_auth(msk: dict) -> bool | None:
    """IAM client authentication on (DescribeClusterV2's ClientAuthentication.Sasl.Iam, as the
    collector records it in ``client_authentication``); else whether GetBootstrapBrokers named
    an IAM listener; None when neither was recorded."""
    auth = msk.get("client_authentication")
    if isinstance(auth, dict) and isinstance(auth.get("iam"), bool):
        return auth["iam"]
    bootstrap = msk.get("bootstrap")
    listeners = bootstrap.get("listeners") if isinstance(bootstrap, dict) else None
    if isinstance(listeners, list) and listeners:
        return any(isinstance(k, str) and "SaslIam" in k for k in listeners)
    return None


@dataclass
class Manifest:
    cluster: dict
    collected_at: str
    sources: list[dict] = field(default_factory=list)
    errors: list[dict] = field(default_factory=list)
    tables: dict[str, str] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION
    tool: dict = field(default_factory=lambda: {"name": "kafka-auditor", "version": __version__})
    # Optional (written only when set; older manifests have none): the inventory's labels of
    # the cluster, where each cluster field came from ("declared" by the inventory or
    # "discovered" from a source), and the resolved inventory entry (secrets only by reference).
    labels: dict[str, str] | None = None
    provenance: dict[str, str] | None = None
    inventory: dict | None = None

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
        } | {
            k: v
            for k, v in (
                ("labels", self.labels),
                ("provenance", self.provenance),
                ("inventory", self.inventory),
            )
            if v is not None
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
            **_msk_columns(c.get("msk")),
        }

    def error_rows(self) -> list[dict]:
        return [
            {
                "cluster_id": self.cluster_id,
                "source": e.get("source", "?"),
                "target": e.get("target"),
                "message": e.get("message", ""),
            }
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


def write_snapshot(
    directory: str | os.PathLike,
    manifest: Manifest,
    tables: Mapping[str, Iterable[dict]],
    fmt: str = "parquet",
) -> Path:
    """Write a snapshot directory. Rows get the manifest's cluster_id; unknown tables or
    columns are programming errors and raise ValueError.

    All or nothing: the snapshot is written into a sibling temporary directory, synced, and
    only then moved into place (an existing snapshot there is renamed away first and removed
    after). A failure half-way leaves the old snapshot, if any, exactly as it was, and no
    partial directory behind: never new tables under an old manifest."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}")
    out = Path(directory)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(errno.ENOTDIR, "exists and is not a directory", str(out))
    if out.is_dir() and not _replaceable(out):  # never delete a directory that is not a snapshot
        raise FileExistsError(
            errno.EEXIST, "exists and is not a snapshot directory (no manifest.json)", str(out)
        )
    staging = _sibling(out, "writing")
    staging.mkdir()  # (not mkdtemp: its 0700 would become the snapshot's mode; this honours the umask)
    try:
        _write_tables(staging, manifest, tables, fmt)
        _fsync_tree(staging)
        _replace_dir(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out


def _write_tables(out: Path, manifest: Manifest, tables: Mapping[str, Iterable[dict]], fmt: str) -> None:
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
    (out / MANIFEST).write_text(json.dumps(manifest.to_json(), indent=2) + "\n", encoding="utf-8")


def _replaceable(directory: Path) -> bool:
    """An existing directory that write_snapshot may replace: empty, a snapshot, or what an
    interrupted older writer left (table files, a manifest.json.tmp)."""
    names = {p.name for p in directory.iterdir()}
    if not names or MANIFEST in names:
        return True
    tables = {f"{t}.{fmt}" for t in TABLES for fmt in FORMATS}
    return names <= tables | {MANIFEST + ".tmp"}


def _fsync_tree(directory: Path) -> None:
    """Every file of a freshly written snapshot, then the directory itself, on disk before
    the rename that publishes it."""
    for path in directory.iterdir():
        with open(path, "rb") as fh:
            os.fsync(fh.fileno())
    _fsync_dir(directory)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # a platform without directory descriptors
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _sibling(target: Path, tag: str) -> Path:
    """A fresh hidden name beside ``target`` (discover() does not look in hidden directories)."""
    return target.parent / f".{target.name[:100]}.{tag}-{os.getpid()}-{secrets.token_hex(6)}"


def _replace_dir(new: Path, target: Path) -> None:
    """Move ``new`` to ``target``; an existing ``target`` is renamed away first and removed
    once the new one is in place (put back if the second rename fails)."""
    old = None
    if target.exists():
        old = _sibling(target, "old")
        os.rename(target, old)
    try:
        os.rename(new, target)
    except BaseException:
        if old is not None:
            os.rename(old, target)
        raise
    _fsync_dir(target.parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


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
        raw = safe_json.loads(text, path)
    except safe_json.JSONTooDeep as e:  # json.loads would die of RecursionError, naming nothing
        raise SnapshotError(str(e)) from None
    except json.JSONDecodeError as e:
        raise SnapshotError(f"{path}: not valid JSON (line {e.lineno}: {e.msg})") from None
    if not isinstance(raw, dict):
        raise SnapshotError(f"{path}: expected a JSON object")
    version = raw.get("schema_version")
    if version != SCHEMA_VERSION:
        raise SnapshotError(
            f"{path}: schema_version {version!r} is not supported (this tool reads {SCHEMA_VERSION})"
        )
    cluster = raw.get("cluster")
    if not isinstance(cluster, dict) or not isinstance(cluster.get("id"), str) or not cluster["id"]:
        raise SnapshotError(f"{path}: cluster.id is missing")
    if not isinstance(cluster.get("msk", {}), dict):  # what the MSK API said (auditor/collectors/msk.py)
        raise SnapshotError(f"{path}: cluster.msk must be an object")
    for key in CLUSTER_FIELDS:  # the clusters table's columns: a value of another type broke the engine
        value = cluster.get(key)
        if value is None or key == "msk":
            continue
        if key == "az_count":
            if type(value) is not int or not 0 <= value <= 2**31 - 1:
                raise SnapshotError(
                    f"{path}: cluster.az_count must be a number of zones, not {str(value)[:40]!r}"
                )
        elif not isinstance(value, str):
            raise SnapshotError(f"{path}: cluster.{key} must be a string, not {type(value).__name__}")
    tables = raw.get("tables") or {}
    if not isinstance(tables, dict) or not all(isinstance(v, str) for v in tables.values()):
        raise SnapshotError(f"{path}: 'tables' must map table names to file names")
    for key in ("sources", "errors"):
        if not isinstance(raw.get(key, []), list) or not all(isinstance(x, dict) for x in raw.get(key, [])):
            raise SnapshotError(f"{path}: '{key}' must be a list of objects")
    optional = {}
    for key in ("labels", "provenance", "inventory"):
        value = raw.get(key)
        if value is None:
            continue
        if not isinstance(value, dict) or (
            key != "inventory"
            and not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
        ):
            raise SnapshotError(
                f"{path}: '{key}' must be an object" + ("" if key == "inventory" else " of strings")
            )
        optional[key] = value
    return Manifest(
        **optional,
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
    parquet: list[tuple[Table, Path]] = []
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
            parquet.append((table, file))
        elif deep:
            _check_jsonl(table, file, manifest.cluster_id)
        files[name] = (str(file), fmt)
    _check_parquet_files(parquet, manifest.cluster_id)
    read = [s for s in manifest.sources if s.get("status") == "ok"]
    if not manifest.tables and not manifest.errors and read:
        # Sources read "ok" and yet no table: the tables were lost (removed, never written).
        # Nothing to audit is never a clean audit: incomplete (AUD001, exit 3). A manifest
        # with no tables and no sources at all (a hand-made or test snapshot) is only
        # warned about, by check and preflight.
        manifest.errors.append(
            {
                "source": "snapshot",
                "target": str(path),
                "message": f"{NO_TABLES}, although {len(read)} source(s) were read",
            }
        )
    return SnapshotRef(str(path), manifest, files)


def _check_parquet_files(files: list[tuple[Table, Path]], cluster_id: str | None) -> None:
    """A snapshot's Parquet files checked from their footers: the column types against the
    declared ones, and every row's cluster_id against the manifest's. Read by DuckDB (which
    check, lint and preflight load anyway; pyarrow's Parquet module and the numpy it imports
    took ~0.2 s of every `check` to start), all of a snapshot's files in one pair of queries:
    a query per file cost 1.2 ms, 2.4 s of a 200-cluster fleet job. Anything the batch cannot
    vouch for (an unreadable footer, a type that differs) is judged file by file, which names
    the file and what is wrong with it."""
    if not files:
        return
    listed = "[" + ", ".join(sql_string(file) for _table, file in files) + "]"
    with _parquet_reader() as reader:
        try:
            schema = reader.execute(
                f"SELECT file_name, name, duckdb_type, num_children FROM parquet_schema({listed}) "
                "ORDER BY file_name, column_id"
            ).fetchall()
            stats = reader.execute(
                "SELECT file_name, row_group_num_rows, stats_min_value, stats_max_value, stats_null_count "
                f"FROM parquet_metadata({listed}) WHERE path_in_schema = 'cluster_id'"
            ).fetchall()
        except Exception:  # duckdb raises several types for corrupt footers
            schema = stats = None
        types = _top_level_types(schema or [])
        for table, file in files:
            declared = {c.name: duckdb_type(c.type) for c in table.columns}
            optional = {c.name for c in table.columns if c.optional}
            found = types.get(str(file), {})
            if schema is None or any(
                found.get(name) != kind
                for name, kind in declared.items()
                if name in found or name not in optional
            ):
                _check_parquet(reader, table, file, cluster_id)
            elif cluster_id is not None:
                groups = [row[1:] for row in stats if row[0] == str(file)]
                _check_parquet_cluster_id(reader, groups, file, cluster_id)


def _top_level_types(schema: list[tuple]) -> dict[str, dict[str, str]]:
    """file -> {column: DuckDB type} from parquet_schema's rows (each file's schema elements
    in order: the root, then each column followed by its nested elements). A file whose
    elements do not add up is left out (and so judged on its own)."""
    rows_of: dict[str, list[tuple]] = {}
    for file, *rest in schema:
        rows_of.setdefault(file, []).append(rest)
    out: dict[str, dict[str, str]] = {}
    for file, rows in rows_of.items():
        columns, i = {}, 1
        try:
            for _ in range(rows[0][2] or 0):
                columns[rows[i][0]] = rows[i][1]
                i = _past_subtree(rows, i)
        except (IndexError, RecursionError):
            continue
        out[file] = columns
    return out


def _past_subtree(rows: list[tuple], i: int) -> int:
    """The index of the schema element after element ``i`` and its nested elements."""
    children = rows[i][2] or 0
    i += 1
    for _ in range(children):
        i = _past_subtree(rows, i)
    return i


def _check_parquet(reader, table: Table, file: Path, cluster_id: str | None = None) -> None:
    """One Parquet file's footer against the declared column types (and its cluster ids)."""
    quoted = sql_string(file)
    try:
        columns = reader.execute(f"DESCRIBE SELECT * FROM read_parquet({quoted})").fetchall()
    except Exception as e:  # duckdb raises several types for corrupt footers
        raise SnapshotError(f"{file}: not a readable Parquet file ({_one_line(e)})") from None
    types = {name: kind for name, kind, *_ in columns}
    for c in table.columns:
        if c.name not in types and c.optional:
            continue  # written before the column was added: read as null
        if c.name not in types:
            raise SnapshotError(f"{file}: column '{c.name}' is missing")
        if types[c.name] != duckdb_type(c.type):
            raise SnapshotError(
                f"{file}: column '{c.name}' is {types[c.name]}, expected {duckdb_type(c.type)}"
            )
    if cluster_id is not None:
        groups = reader.execute(
            "SELECT row_group_num_rows, stats_min_value, stats_max_value, stats_null_count "
            f"FROM parquet_metadata({quoted}) WHERE path_in_schema = 'cluster_id'"
        ).fetchall()
        _check_parquet_cluster_id(reader, groups, file, cluster_id)


def _check_parquet_cluster_id(reader, groups: list[tuple], file: Path, cluster_id: str) -> None:
    """Every row's cluster_id is the manifest's (as _check_jsonl requires of JSON Lines): from
    each row group's column statistics (``groups``: rows, min, max, null count; min == max ==
    the id, no nulls: footer only, cheap at any size), else by reading the column."""
    unproven = False
    for rows, low, high, nulls in groups:
        if rows == 0 or (low == high == cluster_id and nulls == 0):
            continue
        if low is not None and high is not None and low != high:
            found = high if low == cluster_id else low
            raise SnapshotError(f"{file}: cluster_id {found!r} does not match the manifest ({cluster_id!r})")
        unproven = True
    if not unproven:
        return
    try:
        values = reader.execute(
            f"SELECT DISTINCT cluster_id FROM read_parquet({sql_string(file)})"
        ).fetchall()
    except Exception as e:
        raise SnapshotError(f"{file}: Parquet data unreadable ({_one_line(e)})") from None
    for (value,) in values:
        if value != cluster_id:
            raise SnapshotError(f"{file}: cluster_id {value!r} does not match the manifest ({cluster_id!r})")


@cache
def _footer_database():
    """The process's in-memory DuckDB for the footer checks, made on first use."""
    import atexit

    import duckdb

    atexit.register(_close_footer_database)
    return duckdb.connect(":memory:")


def _close_footer_database() -> None:
    """Closed and let go of before the interpreter shuts down: otherwise duckdb's bindings
    print ~40 lines of "leaked instance" warnings at exit when pyspark ran too
    (`check --engine spark` of a Parquet snapshot)."""
    if _footer_database.cache_info().currsize:
        database = _footer_database()
        _footer_database.cache_clear()
        database.close()
        gc.collect()


def _parquet_reader():
    """A cursor of the footer-checking DuckDB, its own per call: collectors open snapshots from
    several threads, and one DuckDB connection is not for concurrent use."""
    return _footer_database().cursor()


def verify_data(ref: SnapshotRef) -> str | None:
    """Decode every data page of the snapshot's local Parquet files (row group by row group:
    memory bounded by one row group), which the open-time check does not (it reads footers
    and statistics). Returns the first problem, naming the file, or None. Costly (a full read),
    so only run when an engine failed to read a fleet: to find which snapshot broke it."""
    import pyarrow.parquet as pq

    for file, fmt in ref.files.values():
        if fmt != "parquet" or "://" in str(file):
            continue
        try:
            pf = pq.ParquetFile(file)
            for rg in range(pf.metadata.num_row_groups):
                pf.read_row_group(rg)
        except Exception as e:
            return f"{file}: Parquet data unreadable ({_one_line(e)})"
    return None


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return (text[0] if text else type(e).__name__)[:300]


def _check_jsonl(table: Table, file: Path, cluster_id: str) -> None:
    declared = {c.name: c.type for c in table.columns}
    try:
        with safe_io.open_text(file, limit=None) as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = safe_json.loads(line, str(file), first_line=lineno)
                except safe_json.JSONTooDeep as e:
                    raise SnapshotError(str(e)) from None
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
                    raise SnapshotError(
                        f"{file}:{lineno}: cluster_id {row.get('cluster_id')!r} does not match the manifest ({cluster_id!r})"
                    )
    except UnicodeDecodeError:
        raise SnapshotError(f"{file}: not UTF-8 text") from None
    except safe_io.FileRefused as e:
        raise SnapshotError(str(e)) from None
    except OSError as e:
        raise SnapshotError(f"{file}: unreadable: {e}") from None


def discover(root: str | os.PathLike) -> list[Path]:
    """Snapshot directories at or below root, sorted. A file path is an error. Hidden
    directories (a write_snapshot still in progress, ``.old-`` leftovers) are not looked in."""
    base = Path(root)
    if not base.exists():
        raise SnapshotError(f"{base}: no such file or directory")
    if not base.is_dir():
        raise SnapshotError(f"{base}: not a snapshot directory")
    if (base / MANIFEST).exists():
        return [base]
    found = []
    for dirpath, dirs, names in os.walk(base):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        if MANIFEST in names:
            found.append(Path(dirpath))
    if not found:
        raise SnapshotError(f"{base}: no snapshot found (no manifest.json at or below it)")
    return sorted(found)


def newest_per_cluster(refs: Iterable[SnapshotRef]) -> tuple[list[SnapshotRef], list[str]]:
    """Two snapshots of one cluster id (two dates under one root): keep the newest (by
    collected_at, then by path: ``dt=`` sorts by date), in the order given, and say which
    were left out, one note each. ``check``, ``preflight`` and ``fleet`` all use this."""
    refs = list(refs)
    by_id: dict[str, SnapshotRef] = {}
    notes = []
    for ref in sorted(refs, key=lambda r: (r.manifest.collected_at, str(r.path)), reverse=True):
        kept = by_id.setdefault(ref.manifest.cluster_id, ref)
        if kept is not ref:
            notes.append(
                f"{ref.path}: an older snapshot of {ref.manifest.cluster_name} than {kept.path}; left out"
            )
    keep = {id(r) for r in by_id.values()}
    return [r for r in refs if id(r) in keep], sorted(notes)


MAX_DIR_NAME_BYTES = 200
_DIR_SAFE = re.compile(r"[A-Za-z0-9._-]")


def cluster_dir_name(name: str) -> str:
    """A cluster name as one bounded, safe, injective directory component (the value of
    ``cluster=VALUE``): ASCII letters, digits, ``.``, ``_`` and ``-`` are kept, every other
    character is ``~XX`` per UTF-8 byte (``~`` included, so decoding is unambiguous).
    Neither DuckDB nor Spark escapes any of these characters again. Longer than
    MAX_DIR_NAME_BYTES: truncated, then ``~h`` and 16 hex digits of the full name's SHA-256
    (``~h`` never occurs in an untruncated encoding). The real name stays in the data."""
    encoded = "".join(
        ch if _DIR_SAFE.fullmatch(ch) else "".join(f"~{b:02X}" for b in ch.encode("utf-8")) for ch in name
    )
    if encoded in (".", ".."):
        encoded = "".join(f"~{b:02X}" for b in encoded.encode())
    if len(encoded) <= MAX_DIR_NAME_BYTES:
        return encoded
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:16]
    head = encoded[: MAX_DIR_NAME_BYTES - 18]
    head = re.sub(r"~[0-9A-F]?$", "", head)  # never cut an escape in half
    return f"{head}~h{digest}"


def all_file_tables() -> list[str]:
    return [t.name for t in FILE_TABLES]
