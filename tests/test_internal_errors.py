"""Issue 37, class 3: inputs that parse but hold what the code indexed, converted or recursed
into without looking give one line naming the source (exit 2 for a file or option, exit 3 for
a source that answers garbage), never ``internal error`` or a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from auditor.errors import UsageError
from tests.conftest import ROOT, cluster_dir


def _cli(*args, cwd=ROOT, env=None):
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
        timeout=300,
    )


def _one_line(proc, code: int, *names: str) -> str:
    err = proc.stderr
    assert "internal error" not in err and "Traceback" not in err, err
    assert proc.returncode == code, (proc.returncode, err)
    for name in names:
        assert name in err, err
    return err


# --- TOML nested 50,000 deep -----------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "select = " + "[" * 50_000 + "]" * 50_000 + "\n",
        "[params.PAR007]\nx = " + "{a = " * 50_000 + "1" + "}" * 50_000 + "\n",
        "select = " + "[" * 40 + "]" * 40 + "\n",  # parses, but deeper than any configuration
    ],
    ids=["arrays-50000", "inline-tables-50000", "arrays-40"],
)
def test_a_deeply_nested_toml_config_is_one_line_naming_the_file(tmp_path, text):
    from auditor.config import load_config

    f = tmp_path / "kafka-audit.toml"
    f.write_text(text)
    with pytest.raises(UsageError, match=rf"^{f}: arrays or tables nested more than 32 deep: refused$"):
        load_config(f)
    if text.startswith("select = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["):
        _one_line(_cli("check", cluster_dir("ads-zk-legacy"), "--config", f), 2, str(f), "nested")


# --- a Unicode digit where a number is expected ----------------------------------------------


def test_unicode_digits_are_not_numbers_anywhere_they_were_converted():
    """'²'.isdigit() is True and int('²') raises: each place that tested isdigit() then
    converted now tests ASCII digits."""
    from auditor.collectors import msk, zookeeper

    assert "²".isdigit()
    assert zookeeper._int("²") is None and zookeeper._int("-²") is None and zookeeper._int("7") == 7
    assert msk._hosts("b-1.example:²,b-2.example:9098") == {"b-2.example": 9098}


def test_msk_limit_param_with_a_unicode_digit_is_a_usage_error(tmp_path):
    f = tmp_path / "kafka-audit.toml"
    f.write_text('[params.MSK001]\nlimits = ["xlarge=²"]\n')
    proc = _cli("check", cluster_dir("payments-msk"), "--config", f, "--select", "MSK001")
    _one_line(proc, 2, "xlarge=²", "must look like")


def test_html_report_orders_a_resource_named_with_a_unicode_digit():
    from auditor.render.html_render import _natural_key

    names = ["t-²", "t-10", "t-2"]
    assert sorted(names, key=lambda n: _natural_key(_F(n))) == ["t-2", "t-10", "t-²"]


class _F:
    """What _natural_key reads of a Finding."""

    severity = "error"
    resource_type = "topic"

    def __init__(self, name):
        self.resource_name = name


# --- numbers at the inventory and --metrics boundary -----------------------------------------


@pytest.mark.parametrize(
    "yaml_line, message",
    [
        ("    broker_ids: [-1]\n", "broker_ids: -1 is not a broker id (0 to 2147483647)"),
        ("    broker_ids: [100000000000000000000000]\n", "broker_ids: 100000000000000000000000 is not"),
        ("    broker_ids: [1, 2147483648]\n", "broker_ids: 2147483648 is not a broker id"),
        ("    msk: {az_count: 100000000000000000000000}\n", "msk.az_count: expected a number of zones"),
        ("    metrics: ['broker_id=" + "9" * 4000 + ":m.prom']\n", "broker_id= takes a broker id"),
        ("    metrics: ['broker_id=2147483648:m.prom']\n", "broker_id= takes a broker id"),
    ],
    ids=["minus-one", "10^23", "int32+1", "az-count", "4000-digit-prefix", "prefix-int32+1"],
)
def test_inventory_numbers_out_of_range_name_file_and_line(tmp_path, yaml_line, message):
    from auditor.collectors.inventory import load_inventory

    (tmp_path / "m.prom").write_text("kafka_server_x 1\n")
    f = tmp_path / "fleet.yaml"
    f.write_text("clusters:\n  - name: a\n" + yaml_line + "    broker_configs: [.]\n")
    with pytest.raises(UsageError, match=rf"^{f}:3: cluster 'a': ") as e:
        load_inventory(f)
    assert message in str(e.value)


@pytest.mark.parametrize("broker_id", ["9" * 5000, "2147483648"])
def test_metrics_prefix_beyond_a_broker_id_is_a_source_error(tmp_path, broker_id):
    (tmp_path / "m.prom").write_text("kafka_server_x 1\n")
    proc = _cli(
        "collect", "--metrics", f"broker_id={broker_id}:m.prom", "-o", tmp_path / "snap", cwd=tmp_path
    )
    err = _one_line(proc, 3, "metrics", "not a broker id (0 to 2147483647)")
    assert len(err) < 600


def test_versions_of_thousands_of_digits_are_no_version():
    from auditor.kafka_configs import parse_version

    assert parse_version("9" * 5000) is None and parse_version("3.7.x.kraft") == (3, 7)
    assert parse_version("3.7.1234567890") == (3, 7)


# --- a manifest field of the wrong shape: one line naming the file and the field --------------
# (issue 47: an MSK operations_in_progress that is an integer was "internal error: TypeError" in
# check, preflight and fleet). check and preflight: a corrupt snapshot, exit 2; fleet: that
# snapshot incomplete (AUD001, exit 3), the rest of the fleet audited.


def _with_msk(block):
    return lambda m: m["cluster"].__setitem__("msk", block)


MANIFEST_FIELDS = [
    # the MSK block, field by field class: a list, an object, an entry of a list, a scalar
    (
        "msk-list-an-integer",
        _with_msk({"operations_in_progress": 5}),
        "cluster.msk.operations_in_progress must be a list, not an integer",
    ),
    (
        "msk-list-a-string",
        _with_msk({"operations_in_progress": "patching"}),
        "cluster.msk.operations_in_progress must be a list, not a string",
    ),
    (
        "msk-list-an-object",
        _with_msk({"operations_in_progress": {"type": "PATCH"}}),
        "must be a list, not an object",
    ),
    (
        "msk-list-entry",
        _with_msk({"operations_in_progress": [1]}),
        "cluster.msk.operations_in_progress[0] must be an object, not an integer",
    ),
    (
        "msk-entry-field",
        _with_msk({"operations_in_progress": [{"type": ["a"]}]}),
        "cluster.msk.operations_in_progress[0].type must be a string, not a list",
    ),
    ("msk-scalar", _with_msk({"state": ["ACTIVE"]}), "cluster.msk.state must be a string, not a list"),
    (
        "msk-flag",
        _with_msk({"client_authentication": {"iam": "yes"}}),
        "cluster.msk.client_authentication.iam must be true or false, not a string",
    ),
    ("msk-object", _with_msk({"bootstrap": ["x"]}), "cluster.msk.bootstrap must be an object, not a list"),
    (
        "msk-cloudwatch",
        _with_msk({"cloudwatch": {"not_collected": [{"metric": 7}]}}),
        "cluster.msk.cloudwatch.not_collected[0].metric must be a string",
    ),
    (
        "msk-map",
        _with_msk({"broker_subnets": {"1": 2}}),
        "cluster.msk.broker_subnets.1 must be a string, not an integer",
    ),
    (
        "msk-count",
        _with_msk({"topics_api": {"calls": "many"}}),
        "cluster.msk.topics_api.calls must be an integer, not a string",
    ),
    # the rest of the manifest
    (
        "source-field",
        lambda m: m["sources"].append({"source": "admin", "status": ["ok"]}),
        "sources[2].status must be a string, not a list",
    ),
    (
        "source-metrics",
        lambda m: m["sources"].append({"source": "metrics", "metrics": "cpu"}),
        "sources[2].metrics must be a list, not a string",
    ),
    (
        "error-field",
        lambda m: m["errors"].append({"source": "zookeeper", "message": {"x": 1}}),
        "errors[0].message must be a string, not an object",
    ),
    ("tool", lambda m: m.__setitem__("tool", "kafka-auditor"), "tool must be an object, not a string"),
    (
        "collected-at",
        lambda m: m.__setitem__("collected_at", 20261122),
        "collected_at must be a string, not an integer",
    ),
    (
        "cluster-field",
        lambda m: m["cluster"].__setitem__("tier", 1),
        "cluster.tier must be a string, not int",
    ),
]


@pytest.mark.parametrize(
    ("edit", "field"), [c[1:] for c in MANIFEST_FIELDS], ids=[c[0] for c in MANIFEST_FIELDS]
)
def test_a_manifest_field_of_the_wrong_shape_is_one_line_naming_the_file_and_field(tmp_path, edit, field):
    import shutil

    snap = tmp_path / "dt=2026-11-22" / "cluster=payments-msk"
    shutil.copytree(cluster_dir("payments-msk"), snap)
    path = snap / "manifest.json"
    manifest = json.loads(path.read_text())
    edit(manifest)
    path.write_text(json.dumps(manifest))
    for command in ("check", "preflight"):
        err = _one_line(_cli(command, snap), 2, str(path), field)
        assert len(err.strip().splitlines()) == 1, err
    proc = _cli("fleet", tmp_path, "--engine", "duckdb", "--format", "json")
    _one_line(proc, 3)
    doc = json.loads(proc.stdout)
    assert any(field in item["message"] for item in doc["incomplete"]), doc["incomplete"]


def test_a_well_formed_msk_block_still_blocks_the_roll(tmp_path):
    """The shape check refuses only what is malformed: an operation in progress and a state
    other than ACTIVE are still preflight blockers."""
    import shutil

    snap = tmp_path / "snap"
    shutil.copytree(cluster_dir("inventory-prod"), snap)
    manifest = json.loads((snap / "manifest.json").read_text())
    manifest["cluster"]["msk"] = {
        "state": "MAINTENANCE",
        "operations_in_progress": [None, {"type": "PATCH", "state": "PENDING", "start_time": None}],
    }
    (snap / "manifest.json").write_text(json.dumps(manifest))
    pre = _cli("preflight", snap, "--format", "json")
    _one_line(pre, 1)
    (c,) = json.loads(pre.stdout)["preflight"]["clusters"]
    assert c["safe_to_roll"] is False
    assert [b for b in c["blockers"] if "MSK" in b] == [
        "the MSK cluster is in state MAINTENANCE (not ACTIVE): AWS is changing it now",
        "MSK operation in progress: PATCH (PENDING, started unknown)",
    ]


# --- lint: a YAML file of a Python tag ------------------------------------------------------------


@pytest.mark.parametrize(
    "text, line, tag",
    [
        ('!!python/object/apply:os.system ["echo owned"]\n', 1, "!!python/object/apply:os.system"),
        ("--- !!python/name:os.system\n", 1, "!!python/name:os.system"),
        (
            "- name: orders\n  partitions: 3\n  configs: !!python/object:foo.Bar {}\n",
            3,
            "!!python/object:foo.Bar",
        ),
    ],
    ids=["apply", "name", "nested"],
)
def test_lint_refuses_a_python_tag_with_one_line(tmp_path, text, line, tag):
    f = tmp_path / "topics.yaml"
    f.write_text(text)
    proc = _cli("lint", "--strict", f)  # without --strict: this line as a warning (issue 49)
    err = _one_line(proc, 2)
    assert err.strip() == f"kafka-audit: {f}:{line}: a Python tag ({tag}) is not configuration: refused"
    assert "owned" not in proc.stdout


# --- the exemption dialect: nested quantifiers ------------------------------------------------------


@pytest.mark.parametrize(
    "pattern, refused",
    [
        (r"^(a+)+$", True),
        (r"((a+)b)*", True),
        (r"(a*){2,3}", True),
        (r"(?i:a+)+", True),
        (r"(?:x|y+)*", True),
        (r"^(a|aa)+$", True),  # overlapping alternatives: as exponential
        (r"^(dev|test)-", False),  # alternatives not repeated
        (r"(a+)?", False),  # at most once: nothing to backtrack over
        (r"(a+){1}", False),
        (r"(ab)*", False),
        (r"(?:dev|test)-.*", False),  # (?: is in the dialect, as documented
        (r"\(a+\)+", False),  # escaped parentheses are literals
        (r"[(a+)]+", False),  # ... and so are those in a class
    ],
)
def test_exemption_dialect_refuses_nested_quantifiers(pattern, refused):
    from auditor.exemptions import refusal

    problem = refusal(pattern)
    assert (problem is not None and "nests quantifiers" in problem) if refused else problem is None, problem


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("az_count", "x", "cluster.az_count must be a number of zones"),
        ("az_count", 10**30, "cluster.az_count must be a number of zones"),
        ("name", 5, "cluster.name must be a string, not int"),
        ("environment", ["prod"], "cluster.environment must be a string, not list"),
    ],
    ids=["az-text", "az-10^30", "name-number", "environment-list"],
)
def test_manifest_cluster_fields_of_another_type_are_a_corrupt_snapshot(tmp_path, key, value, message):
    """These reached the engine (a DuckDB ConversionException, a TypeError joining names): now the
    manifest is refused with one line naming it; fleet audits the rest and reports it (AUD001)."""
    import shutil

    snap = tmp_path / "dt=2026-11-22" / "cluster=payments-msk"
    shutil.copytree(cluster_dir("payments-msk"), snap)
    manifest = json.loads((snap / "manifest.json").read_text())
    manifest["cluster"][key] = value
    (snap / "manifest.json").write_text(json.dumps(manifest))
    err = _one_line(_cli("check", snap), 2, str(snap / "manifest.json"), message)
    assert len(err.strip().splitlines()) == 1
    fleet = _cli("fleet", tmp_path, "--engine", "duckdb")
    _one_line(fleet, 3)
    assert message in fleet.stdout


@pytest.mark.parametrize(
    "summary",
    [
        {"run_date": "2026-11-01", "diff": [1], "totals": "x", "clusters": "x"},
        {"run_date": ["2026-11-01"], "diff": {"new": 1}, "clusters": []},
        {"run_date": "2026-11-01", "diff": {"new": "9" * 50, "resolved": [1]}, "totals": [], "clusters": [5]},
    ],
    ids=["diff-list", "run-date-list", "counts-of-other-types"],
)
def test_an_earlier_runs_damaged_summary_only_loses_its_point(tmp_path, summary):
    """--out's earlier _summary.json files are read for the HTML trend: outside input."""
    out = tmp_path / "findings"
    (out / "run_date=2026-11-01").mkdir(parents=True)
    (out / "run_date=2026-11-01" / "_summary.json").write_text(json.dumps(summary))
    p = _cli(
        "fleet",
        cluster_dir("inventory-prod"),
        "--engine",
        "duckdb",
        "--out",
        out,
        "--html",
        tmp_path / "f.html",
        "--previous",
        out,
        "--run-date",
        "2026-11-22",
    )
    _one_line(p, 0)
    assert (tmp_path / "f.html").read_text().startswith("<!DOCTYPE html>")


def test_a_collector_that_trips_on_an_answer_fails_its_source_not_the_command(tmp_path, monkeypatch):
    """The safety net under every source: what an answer makes a collector raise (here the
    KeyError a garbage answer gave the MSK collector, raised by the files collector in place of
    a real bad answer, which each collector now handles itself) is that source's error, exit 3."""
    from auditor.collectors import collect as collect_module
    from auditor.collectors import files as files_module
    from auditor.errors import UsageError as Usage
    from auditor.sources import Sources

    def trips(paths):
        raise KeyError("ClusterInfo")

    monkeypatch.setattr(files_module, "collect_broker_configs", trips)
    manifest, _tables = collect_module.collect(Sources(broker_configs=("x.properties",), cluster_name="c"))
    (err,) = manifest.errors
    assert err["source"] == "files" and err["message"] == "x.properties: failed (KeyError: 'ClusterInfo')"

    def usage(paths):
        raise Usage("x.properties: a usage error stays one")

    monkeypatch.setattr(files_module, "collect_broker_configs", usage)
    with pytest.raises(Usage):
        collect_module.collect(Sources(broker_configs=("x.properties",), cluster_name="c"))


@pytest.mark.parametrize(
    "value", ["99999999999", "1" + "0" * 23, "1_0"], ids=["int32+", "10^23", "underscore"]
)
def test_a_broker_id_java_cannot_read_is_one_line_in_lint_and_collect(tmp_path, value):
    f = tmp_path / "server.properties"
    f.write_text(f"broker.id={value}\nzookeeper.connect=localhost:2181\nlog.dirs=/data\n")
    err = _one_line(_cli("lint", "--strict", f), 2, f"{f}:1: broker.id")
    assert len(err.strip().splitlines()) == 1
    _one_line(_cli("collect", "--broker-config", f, "-o", tmp_path / "snap"), 3, f"{f}:1: broker.id")
