"""Hostile sizes and numbers are refused by name, never a crash (issue 16, classes 3 and 4).

Class 3: nesting and alias expansion are limited before Python objects are built: a YAML
topic file of deeply nested brackets (a segfault in the composer), a billion-laughs alias
bomb, and deeply nested JSON in a snapshot manifest, a JSON Lines row, a baseline, a lint
``--against`` table or a fleet summary each give one line naming the file (and line).

Class 4: numbers out of the range of their column are reported at the boundary, naming the
file and key or the sample: metrics labels and values, node-exporter filesystem sizes, topic
partitions, rule parameters, ``--timeout`` and exemption ``expires`` values.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from auditor import safe_json
from auditor.errors import SnapshotError, UsageError
from tests.conftest import ROOT, cluster_dir

DEEP = 100_000


def _run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "300"}
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )


def _clean(proc: subprocess.CompletedProcess) -> str:
    """stderr, after checking it is no crash (no traceback, no internal error)."""
    err = proc.stderr
    assert "internal error" not in err and "Traceback" not in err, err
    assert proc.returncode not in (-11, 139), (proc.returncode, err)  # SIGSEGV
    return err


def _snapshot(tmp_path: Path) -> Path:
    snap = tmp_path / "snap"
    shutil.copytree(cluster_dir("ads-zk-legacy"), snap)
    return snap


def _deep_json(depth: int = DEEP) -> str:
    return "[" * depth + "]" * depth


# --- class 3: JSON --------------------------------------------------------------------------


def test_safe_json_measures_depth_without_recursing():
    with pytest.raises(safe_json.JSONTooDeep) as e:
        safe_json.loads('{"a": 1,\n "b":\n ' + _deep_json(), "f.json")
    assert str(e.value) == "f.json:3: nesting deeper than 100 levels: refused"
    with pytest.raises(safe_json.JSONTooDeep) as e:
        safe_json.loads(_deep_json(), "t.jsonl", first_line=7)
    assert str(e.value).startswith("t.jsonl:7: ")
    # brackets inside strings do not nest; 100 levels are fine
    assert safe_json.loads('["' + "[" * 500 + '\\"{"]', "f") == ["[" * 500 + '"{']
    assert safe_json.loads(_deep_json(100), "f") is not None
    with pytest.raises(safe_json.JSONTooDeep):
        safe_json.loads(_deep_json(101), "f")
    with pytest.raises(json.JSONDecodeError):  # plain syntax errors are json's, as before
        safe_json.loads("[1,", "f")


def test_deep_json_line_in_a_snapshot_table_names_file_and_line(tmp_path):
    snap = _snapshot(tmp_path)
    table = snap / "topics.jsonl"
    lines = table.read_text().splitlines()
    table.write_text("\n".join([lines[0], _deep_json(), *lines[1:]]) + "\n")
    proc = _run("check", str(snap), "--engine", "duckdb")
    err = _clean(proc)
    assert proc.returncode == 2, err
    assert f"{table}:2: nesting deeper than 100 levels: refused" in err
    assert len(err.strip().splitlines()) == 1, err


def test_deep_json_manifest_names_the_file(tmp_path):
    snap = _snapshot(tmp_path)
    manifest = snap / "manifest.json"
    raw = json.loads(manifest.read_text())
    text = json.dumps(raw, indent=2)
    manifest.write_text(text[:-1] + ', "extra":\n' + _deep_json() + "}")
    proc = _run("check", str(snap), "--engine", "duckdb")
    err = _clean(proc)
    assert proc.returncode == 2, err
    assert f"{manifest}:" in err and "nesting deeper than 100 levels: refused" in err


def test_deep_json_manifest_in_a_remote_fleet_listing_is_a_broken_snapshot():
    from auditor.snapshot.io import parse_manifest

    with pytest.raises(SnapshotError, match=r"^s3a://b/c/manifest.json:1: nesting deeper than 100 levels"):
        parse_manifest(_deep_json(), "s3a://b/c/manifest.json")


def test_deep_json_baseline_names_the_file(tmp_path):
    topics = tmp_path / "topics.yaml"
    topics.write_text("- name: orders\n  partitions: 3\n  replication_factor: 3\n")
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"findings":\n' + _deep_json() + "}")
    proc = _run("lint", str(topics), "--baseline", str(baseline))
    err = _clean(proc)
    assert proc.returncode == 2, err
    assert f"{baseline}:2: nesting deeper than 100 levels: refused" in err


def test_deep_json_in_against_rows_names_file_and_line(tmp_path):
    from auditor.lint.change_tables import _read_rows
    from auditor.snapshot.io import open_snapshot

    snap = _snapshot(tmp_path)
    ref = open_snapshot(snap)
    path = ref.files["topics"][0]
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(_deep_json() + "\n")
    n = len(Path(path).read_text().splitlines())
    with pytest.raises(SnapshotError, match=rf"^{path}:{n}: nesting deeper than 100 levels: refused$"):
        _read_rows(ref, "topics")


def test_deep_fleet_summary_only_loses_a_point_of_the_chart(tmp_path):
    from auditor.commands.fleet import FleetResult, run_history

    run = tmp_path / "run_date=2026-01-01"
    run.mkdir()
    (run / "_summary.json").write_text(_deep_json())
    ok = tmp_path / "run_date=2026-01-08"
    ok.mkdir()
    (ok / "_summary.json").write_text(
        json.dumps({"run_date": "2026-01-08", "totals": {"total": 3}, "diff": {"new": 1, "resolved": 0}})
    )
    result = FleetResult("2026-01-15", "duckdb", [], [], [], [], {"total": 0}, out=str(tmp_path))
    assert [r["run_date"] for r in run_history(result)] == ["2026-01-08"]


def test_deep_json_properties_input_is_not_a_crash(tmp_path):
    f = tmp_path / "server.properties"
    f.write_text(_deep_json())
    proc = _run("lint", str(f))
    _clean(proc)
    assert str(f) in proc.stderr + proc.stdout


# --- class 3: YAML --------------------------------------------------------------------------


def test_deeply_nested_yaml_is_refused_before_composing(tmp_path):
    """Refused in one line naming file:line: with --strict the error (exit 2); without it the
    same line as a warning, and the run goes on (here nothing else: exit 3)."""
    f = tmp_path / "deep.yaml"
    f.write_text("- name: t\n  configs:\n    x: " + "[" * 30_000 + "]" * 30_000 + "\n")  # 60 KB
    warned = _run("lint", str(f))
    assert warned.returncode == 3 and warned.stderr == ""
    assert f"warning: {f}:3: nesting deeper than 100 levels: refused (not linted)" in warned.stdout
    proc = _run("lint", "--strict", str(f))
    err = _clean(proc)
    assert proc.returncode == 2, err
    assert err.strip() == f"kafka-audit: {f}:3: nesting deeper than 100 levels: refused"


def test_deep_block_yaml_is_refused_too(tmp_path):
    f = tmp_path / "deep.yaml"
    f.write_text("".join("  " * i + f"k{i}:\n" for i in range(150)))
    proc = _run("lint", "--strict", str(f))
    err = _clean(proc)
    assert proc.returncode == 2, err
    assert f"{f}:101: nesting deeper than 100 levels: refused" in err


def test_billion_laughs_is_refused_quickly(tmp_path):
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    f = tmp_path / "bomb.yaml"
    f.write_text(
        "\n".join(lines) + "\n---\n- name: t1\n  partitions: 3\n  configs:\n    cleanup.policy: *a9\n"
    )
    started = time.monotonic()
    proc = _run("lint", "--strict", str(f), timeout=30)
    err = _clean(proc)
    assert time.monotonic() - started < 20
    assert proc.returncode == 2, err
    assert f"{f}:" in err and "aliases expand to more than 100000 values: refused" in err


def test_ordinary_aliases_still_work(tmp_path):
    f = tmp_path / "topics.yaml"
    f.write_text(
        "- name: t1\n  partitions: 3\n  replication_factor: 3\n  configs: &c\n    min.insync.replicas: 2\n"
        "- name: t2\n  partitions: 3\n  replication_factor: 3\n  configs: *c\n"
    )
    from auditor.lint.inputs import read_topics

    topics, _text, other = read_topics(f, str(f))
    assert other is None
    assert [t.configs["min.insync.replicas"][0] for t in topics] == ["2", "2"]


def _depth(text: str) -> int:
    """The deepest nesting of YAML text, from its events (what the scan measures)."""
    import yaml

    depth = deepest = 0
    for ev in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(ev, yaml.CollectionStartEvent):
            depth += 1
            deepest = max(deepest, depth)
        elif isinstance(ev, yaml.CollectionEndEvent):
            depth -= 1
    return deepest


def _nested(depth: int, kinds: str) -> object:
    value: object = "x"
    for i in range(depth):
        value = {f"k{i}": value} if kinds[i % len(kinds)] == "m" else [value, "y"]
    return value


def test_the_shape_scan_is_skipped_only_where_the_text_bounds_the_nesting():
    """Most topic files skip the event scan (safe_yaml.plainly_shallow): its bound must never let a
    document at or over MAX_YAML_DEPTH through, in any of YAML's ways of nesting."""
    import yaml

    from auditor.safe_yaml import MAX_YAML_DEPTH
    from auditor.safe_yaml import plainly_shallow as _plainly_shallow

    skipped = 0
    for depth in (1, 5, 20, 40, 60, 99, 100, 101, 150):
        for kinds in ("m", "s", "ms", "mss", "sm"):
            data = _nested(depth, kinds)
            for style in (False, True, None):  # block, flow, mixed
                for indent in (2, 4):
                    text = yaml.safe_dump(data, default_flow_style=style, indent=indent, width=10**6)
                    if _plainly_shallow(text):
                        skipped += 1
                        assert _depth(text) < MAX_YAML_DEPTH, (depth, kinds, style, indent)
        # compact collections on one line: a sequence per dash, a mapping per explicit key
        for opener in ("- ", "? ", "? - ", "- ? ", "a: ? "):
            compact = opener * depth + "x\n"
            try:
                deep = _depth(compact)
            except yaml.YAMLError:
                continue  # not YAML: composing refuses it anyway
            assert not _plainly_shallow(compact) or deep < MAX_YAML_DEPTH, (opener, depth)
            if depth >= MAX_YAML_DEPTH:
                assert deep >= MAX_YAML_DEPTH, (opener, depth)  # the case is a real deep one
    assert skipped > 0  # ordinary shallow files do skip it
    assert not _plainly_shallow("a: &a [1]\nb: *a\n")  # an anchor: always scanned
    topics = (ROOT / "sample_configs" / "change-review").rglob("*.yaml")
    assert all(_plainly_shallow(f.read_text()) for f in topics)


# --- class 4: topic files -------------------------------------------------------------------


@pytest.mark.parametrize("value", ["99999999999999999999999", "2147483648", "-2147483649"])
def test_out_of_range_partitions_name_file_line_and_field(tmp_path, value):
    f = tmp_path / "topics.yaml"
    f.write_text(f"- name: t1\n  partitions: {value}\n  replication_factor: 3\n")
    proc = _run("lint", "--strict", str(f))
    err = _clean(proc)
    assert proc.returncode == 2, err
    assert err.strip() == (
        f"kafka-audit: {f}:2: partitions {value} is out of range (an integer from -2147483648 to 2147483647)"
    )
    assert "/tmp/kafka-audit-lint" not in err


def test_thousands_of_digits_name_file_and_line(tmp_path):
    f = tmp_path / "topics.yaml"
    f.write_text("- name: t1\n  partitions: 3\n  replication_factor: " + "9" * 5000 + "\n")
    proc = _run("lint", "--strict", str(f))
    err = _clean(proc)
    assert proc.returncode == 2, err
    assert err.startswith(f"kafka-audit: {f}:3: ") and len(err) < 300, err


def test_int32_partitions_still_accepted(tmp_path):
    from auditor.lint.inputs import read_topics

    f = tmp_path / "topics.yaml"
    f.write_text("- name: t1\n  partitions: 2147483647\n  replication_factor: '3'\n")
    (t,), _text, _other = read_topics(f, str(f))
    assert (t.partitions, t.replication_factor) == (2147483647, 3)


# --- class 4: metrics -----------------------------------------------------------------------


def _collect(
    tmp_path: Path, prom: str, *, broker_config: bool = False
) -> tuple[subprocess.CompletedProcess, Path]:
    src = tmp_path / "m.prom"
    src.write_text(prom)
    out = tmp_path / "out"
    args = ["collect", "--metrics", f"broker_id=1:{src}", "-o", str(out)]
    if broker_config:
        props = tmp_path / "server.properties"
        props.write_text("broker.id=1\nlog.dirs=/data/kafka\nzookeeper.connect=zk:2181\n")
        args += ["--broker-config", str(props)]
    return _run(*args), src


@pytest.mark.parametrize(
    "prom, what",
    [
        ('java_lang_OperatingSystem_AvailableProcessors{broker_id="99999999999999999999"} 8\n', "broker id"),
        ('java_lang_OperatingSystem_AvailableProcessors{broker_id="' + "9" * 5000 + '"} 8\n', "broker id"),
        ("java_lang_OperatingSystem_AvailableProcessors 1e12\n", "a count for cpu_count"),
        (
            'kafka_server_socket_server_metrics_connection_count{listener="PLAIN",networkProcessor="0"} 1e30\n',
            "a count for connection_count",
        ),
        (
            'kafka_server_socket_server_metrics_connections{clientSoftwareName="x",clientSoftwareVersion="1",'
            'listener="PLAIN",networkProcessor="0"} 1e30\n',
            "a connection count",
        ),
    ],
    ids=[
        "broker-id-20-digits",
        "broker-id-5000-digits",
        "cpu-count",
        "connection-count",
        "client-connections",
    ],
)
def test_out_of_range_metrics_are_source_errors_naming_the_sample(tmp_path, prom, what):
    proc, src = _collect(tmp_path, prom, broker_config=True)
    err = _clean(proc)
    assert proc.returncode == 3, err
    assert f"{src}: " in err and what in err and "not stored" in err, err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert any(what in e["message"] for e in manifest["errors"])
    proc = _run("check", str(tmp_path / "out"), "--engine", "duckdb")  # and the snapshot audits
    _clean(proc)
    assert proc.returncode in (0, 1, 3), proc.stderr


def test_summed_connections_beyond_int_are_a_source_error():
    from auditor.collectors.metrics import parse_metrics

    prom = "".join(
        'kafka_server_socket_server_metrics_connections{clientSoftwareName="x",clientSoftwareVersion="1",'
        f'listener="PLAIN",networkProcessor="{i}"}} 2000000000\n'
        for i in range(2)
    )
    result = parse_metrics(prom, "m.prom", 1)
    assert not result.tables.get("client_software")
    assert any("sum to 4e+09" in e["message"] for e in result.errors), result.errors


def test_huge_filesystem_size_is_a_source_error(tmp_path):
    prom = (
        'node_filesystem_size_bytes{device="/dev/sda",fstype="ext4",mountpoint="/"} 1e300\n'
        'node_filesystem_avail_bytes{device="/dev/sda",fstype="ext4",mountpoint="/"} 1e10\n'
    )
    proc, src = _collect(tmp_path, prom, broker_config=True)
    err = _clean(proc)
    assert proc.returncode == 3, err
    assert f"{src}: node_filesystem_size_bytes" in err and "a size in bytes: not stored" in err


def test_log_dirs_never_casts_an_unfit_size():
    from auditor.collectors._common import CollectResult
    from auditor.collectors.collect import _log_dirs
    from auditor.collectors.metrics import MetricsResult

    files = CollectResult()
    files.rows("brokers").append({"broker_id": 1, "log_dirs": ["/data/kafka"]})
    mets = MetricsResult()
    mets.filesystems = {1: {"/data": {"device": "d", "size_bytes": 1e300, "avail_bytes": 1.0}}}
    (row,) = _log_dirs(files, mets)
    assert (row["total_bytes"], row["used_bytes"]) == (None, None)
    assert "total_bytes" in mets.errors[0]["message"]


# --- class 4: configuration and options -----------------------------------------------------


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0", "1e9"])
def test_timeout_out_of_range_is_a_usage_error(tmp_path, value):
    props = tmp_path / "server.properties"
    props.write_text("broker.id=1\nzookeeper.connect=zk:2181\n")
    proc = _run("collect", "--broker-config", str(props), f"--timeout={value}", "-o", str(tmp_path / "o"))
    err = _clean(proc)
    assert proc.returncode == 2, err
    assert "--timeout must be a number of seconds above 0 and at most 3600" in err


@pytest.mark.parametrize(
    "value, message",
    [
        ("99999999999999999999", "max_listed = 99999999999999999999 is out of range"),
        ("9999999999", "max_listed = 9999999999 is out of range"),
    ],
)
def test_huge_int_rule_parameter_names_file_and_key(tmp_path, value, message):
    from auditor.config import load_config

    f = tmp_path / "kafka-audit.toml"
    f.write_text(f"[params.CTL005]\nmax_listed = {value}\n")
    with pytest.raises(UsageError) as e:
        load_config(f)
    assert str(e.value).startswith(f"{f}: [params.CTL005] {message}")


def test_non_finite_float_rule_parameter_is_refused(tmp_path):
    from auditor.config import load_config

    f = tmp_path / "kafka-audit.toml"
    f.write_text("[params.THR003]\ncores_per_network_thread = inf\n")
    with pytest.raises(UsageError, match=r"cores_per_network_thread = inf must be a finite number"):
        load_config(f)


def test_huge_int_parameter_via_the_cli(tmp_path):
    f = tmp_path / "kafka-audit.toml"
    f.write_text("[params.CTL005]\nmax_listed = 99999999999999999999\n")
    proc = _run("check", str(cluster_dir("ads-zk-legacy")), "--engine", "duckdb", "--config", str(f))
    err = _clean(proc)
    assert proc.returncode == 2, err
    assert f"{f}: [params.CTL005] max_listed" in err


@pytest.mark.parametrize(
    "literal, expected",
    [
        ("2027-01-31", dt.date(2027, 1, 31)),
        ('"2027-01-31"', dt.date(2027, 1, 31)),
    ],
)
def test_toml_dates_in_expires(tmp_path, literal, expected):
    from auditor.config import load_config

    f = tmp_path / "kafka-audit.toml"
    f.write_text(f'[[exemptions]]\nreason = "x"\nexpires = {literal}\n')
    (e,) = load_config(f).exemptions
    assert e.expires == expected and type(e.expires) is dt.date
    assert e.active(dt.date(2027, 1, 31)) and not e.active(dt.date(2027, 2, 1))


@pytest.mark.parametrize(
    "literal",
    # issue 37: a date and time is refused (the README documents a date; which day is 23:30-05:00?)
    ["10:00:00", "20270131", "true", "[2027]", "2027-01-31T10:00:00", "2027-01-31T10:00:00Z", '"20270131"'],
)
def test_non_date_expires_is_a_usage_error_naming_the_exemption(tmp_path, literal):
    from auditor.config import load_config

    f = tmp_path / "kafka-audit.toml"
    f.write_text(f'[[exemptions]]\nreason = "x"\nexpires = {literal}\n')
    with pytest.raises(UsageError, match=rf"^{f}: exemption #1: expires must be a date \(YYYY-MM-DD\)"):
        load_config(f)


def test_datetime_expires_via_the_cli_is_one_line_exit_2(tmp_path):
    f = tmp_path / "kafka-audit.toml"
    f.write_text('[[exemptions]]\nreason = "x"\nexpires = 2027-01-31T10:00:00\n')
    proc = _run("check", str(cluster_dir("ads-zk-legacy")), "--engine", "duckdb", "--config", str(f))
    assert proc.returncode == 2 and proc.stderr.strip().splitlines() == [
        f"kafka-audit: {f}: exemption #1: expires must be a date (YYYY-MM-DD), not a date and time "
        "(2027-01-31T10:00:00)"
    ]
