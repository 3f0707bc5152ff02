"""kafka-audit lint: file:line on findings, suppressions, baseline, --against, bad input, SARIF."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from auditor.cli import main as cli_main
from auditor.config import AuditConfig, parse_config
from auditor.lint import run_lint
from auditor.registry import load_rules
from auditor.snapshot.io import Manifest, write_snapshot
from tests.conftest import ROOT

SAMPLE = ROOT / "sample_configs" / "change-review"
SEARCH_INGEST = ROOT / "sample_configs" / "fleet" / "dt=2026-11-22" / "cluster=search-ingest"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def cli(capsys, *args) -> tuple[int, str, str]:
    """Run the console entry point in-process: (exit code, stdout, stderr)."""
    argv = sys.argv
    sys.argv = ["kafka-audit", *map(str, args)]
    try:
        with pytest.raises(SystemExit) as e:
            cli_main.main()
    finally:
        sys.argv = argv
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


def located(result, rule=None):
    return {(f.rule, f.resource_name, Path(f.location["file"]).name, f.location["line"])
            for f in result.findings if rule is None or f.rule == rule}


def only(*codes):
    return parse_config({"select": list(codes)}, "test")


# --- inputs and file:line -----------------------------------------------------------------------

PLAIN = """
- name: orders
  partitions: 12
  replication_factor: 3
  configs:
    min.insync.replicas: 3
    retention.msx: 1000
- name: single
  partitions: 1
  replicationFactor: 1
"""

STRIMZI = """
apiVersion: kafka.strimzi.io/v1beta2
kind: KafkaTopic
metadata:
  name: payments
spec:
  partitions: 6
  replicas: 2
  config:
    min.insync.replicas: 2
    unclean.leader.election.enable: true
"""

JIKKOU = """
---
apiVersion: kafka.jikkou.io/v1beta2
kind: KafkaTopic
metadata:
  name: clicks
spec:
  partitions: 3
  replicas: 3
  configs:
    min.insync.replicas: 4
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: not-a-topic
"""

BROKER = """
broker.id=7
num.network.threads=3
num.io.threads=8
num.io.thread=32
log.retention.hours=7d
log.dirs=/data/a
"""


@pytest.fixture(scope="module")
def formats(tmp_path_factory):
    d = tmp_path_factory.mktemp("formats")
    files = [write(d / "plain.yaml", PLAIN), write(d / "strimzi.yaml", STRIMZI), write(d / "jikkou.yml", JIKKOU),
             write(d / "server.properties", BROKER)]
    return files, run_lint(files)


def test_plain_yaml_topics_carry_file_and_line(formats):
    _files, result = formats
    got = located(result)
    assert ("REP002", "orders", "plain.yaml", 1) in got
    assert ("CFG002", "topic orders: retention.msx", "plain.yaml", 6) in got
    assert ("REP003", "single", "plain.yaml", 7) in got


def test_strimzi_topic_carries_file_and_line(formats):
    got = located(formats[1])
    assert ("REP002", "payments", "strimzi.yaml", 4) in got
    assert ("REP005", "payments", "strimzi.yaml", 4) in got


def test_jikkou_topic_carries_file_and_line_and_other_kinds_are_skipped(formats):
    got = located(formats[1])
    assert ("REP001", "clicks", "jikkou.yml", 5) in got
    assert not any(r[1] == "not-a-topic" for r in got)


def test_properties_findings_point_at_the_key_line(formats):
    got = located(formats[1])
    assert ("CFG002", "num.io.thread", "server.properties", 4) in got
    assert ("CFG001", "broker 7: log.retention.hours", "server.properties", 5) in got
    assert ("DSK005", "7", "server.properties", 6) in got


def test_every_finding_has_a_location(formats):
    files, result = formats
    assert result.findings
    assert all(f.location and f.location["file"] in map(str, files) and f.location["line"] >= 1
               for f in result.findings)


def test_json_output_carries_location(tmp_path, capsys):
    f = write(tmp_path / "t.yaml", PLAIN)
    code, out, _err = cli(capsys, "lint", f, "--format", "json")
    assert code == 1
    findings = json.loads(out)["findings"]
    rep002 = next(x for x in findings if x["rule"] == "REP002")
    assert rep002["location"] == {"file": str(f), "line": 1}


def test_sarif_has_physical_locations(tmp_path, capsys):
    f = write(tmp_path / "server.properties", BROKER)
    code, out, _err = cli(capsys, "lint", f, "--format", "sarif")
    assert code == 1
    results = json.loads(out)["runs"][0]["results"]
    cfg001 = next(r for r in results if r["ruleId"] == "CFG001")
    phys = next(loc["physicalLocation"] for loc in cfg001["locations"] if "physicalLocation" in loc)
    assert phys["artifactLocation"]["uri"].endswith("server.properties")
    assert phys["region"]["startLine"] == 5


def test_text_output_is_file_colon_line(tmp_path, capsys):
    f = write(tmp_path / "t.yaml", PLAIN)
    code, out, _err = cli(capsys, "lint", f)
    assert code == 1
    assert f"{f}:1: ERR  REP002 min-isr-equals-rf:" in out


def test_clean_files_exit_zero(tmp_path, capsys):
    f = write(tmp_path / "ok.yaml", """
        - name: fine
          partitions: 6
          replication_factor: 3
          configs: {min.insync.replicas: 2}
    """)
    code, out, _err = cli(capsys, "lint", f)
    assert code == 0, out


# --- suppressions -------------------------------------------------------------------------------


def test_suppression_on_the_line_above_and_trailing(tmp_path):
    f = write(tmp_path / "t.yaml", """
        # kafka-audit: ignore[REP002] reason="acks=1 producers only"
        - name: orders
          partitions: 3
          replication_factor: 3
          configs:
            min.insync.replicas: 3
            retention.msx: 5   # kafka-audit: ignore[CFG002] reason="read by our own tooling"
    """)
    result = run_lint([f])
    assert not [x for x in result.findings if x.rule in ("REP002", "CFG002", "CFG900")]
    assert any("2 finding(s) suppressed" in n for n in result.notes)


def test_suppression_in_properties(tmp_path):
    f = write(tmp_path / "server.properties", """
        broker.id=1
        # kafka-audit: ignore[CFG002] reason="plugin key"
        num.io.thread=32
    """)
    result = run_lint([f], config=only("CFG002", "CFG900"))
    assert result.findings == []


def test_unused_suppression_is_cfg900(tmp_path):
    f = write(tmp_path / "t.yaml", """
        # kafka-audit: ignore[REP003] reason="old scratch topic"
        - name: orders
          partitions: 3
          replication_factor: 3
    """)
    result = run_lint([f])
    cfg900 = [x for x in result.findings if x.rule == "CFG900"]
    assert len(cfg900) == 1
    assert cfg900[0].severity == "info" and cfg900[0].location == {"file": str(f), "line": 1}
    assert "REP003" in cfg900[0].message


def test_suppression_of_another_rule_does_not_hide(tmp_path):
    f = write(tmp_path / "t.yaml", """
        # kafka-audit: ignore[REP003] reason="not this one"
        - name: orders
          partitions: 3
          replication_factor: 3
          configs: {min.insync.replicas: 3}
    """)
    rules = {x.rule for x in run_lint([f]).findings}
    assert {"REP002", "CFG900"} <= rules


@pytest.mark.parametrize("comment", ['# kafka-audit: ignore[REP002]', '# kafka-audit: ignore[REP002] reason=""'])
def test_suppression_without_reason_is_a_usage_error(tmp_path, capsys, comment):
    f = write(tmp_path / "t.yaml", f"""
        - name: orders
          partitions: 3
          {comment}
          replication_factor: 3
    """)
    code, out, err = cli(capsys, "lint", f)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"{f}:3:" in err and "reason" in err


def test_suppression_of_unknown_rule_is_a_usage_error(tmp_path, capsys):
    f = write(tmp_path / "server.properties", '# kafka-audit: ignore[XYZ999] reason="x"\nbroker.id=1\n')
    code, _out, err = cli(capsys, "lint", f)
    assert code == 2 and f"{f}:1:" in err and "XYZ999" in err


# --- baseline -----------------------------------------------------------------------------------


def test_baseline_fails_only_on_new_findings(tmp_path, capsys):
    f = write(tmp_path / "t.yaml", PLAIN)
    base = tmp_path / "baseline.json"
    code, _out, _err = cli(capsys, "lint", f, "--write-baseline", base)
    assert code == 0
    data = json.loads(base.read_text())
    assert data["schema_version"] == 1 and {e["rule"] for e in data["findings"]} >= {"REP002", "REP003"}
    code, out, _err = cli(capsys, "lint", f, "--baseline", base)
    assert code == 0, out
    assert "in the baseline" in out
    write(f, PLAIN + "- name: fresh\n  partitions: 1\n  replication_factor: 1\n")
    code, out, _err = cli(capsys, "lint", f, "--baseline", base, "--format", "json")
    assert code == 1
    assert [(x["rule"], x["resource"]["name"]) for x in json.loads(out)["findings"]] == [("REP003", "fresh")]


def test_corrupt_baseline_is_a_usage_error(tmp_path, capsys):
    f = write(tmp_path / "t.yaml", PLAIN)
    base = write(tmp_path / "b.json", "{not json")
    code, _out, err = cli(capsys, "lint", f, "--baseline", base)
    assert code == 2 and str(base) in err and err.count("\n") == 1


# --- bad input ----------------------------------------------------------------------------------


def test_invalid_yaml_is_one_line_with_file_and_line(tmp_path, capsys):
    f = write(tmp_path / "bad.yaml", """
        - name: orders
          partitions: 3
            replication_factor: [3
    """)
    code, out, err = cli(capsys, "lint", f)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"kafka-audit: {f}:") and "not valid YAML" in err
    assert "Traceback" not in err


def test_invalid_properties_is_one_line_with_file_and_line(tmp_path, capsys):
    f = write(tmp_path / "server.properties", "broker.id=1\nnum.io.threads=8\nlistener.x=\\u12G4\n")
    code, out, err = cli(capsys, "lint", f)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and f"{f}:3:" in err


def test_binary_properties_is_a_usage_error(tmp_path, capsys):
    f = tmp_path / "server.properties"
    f.write_bytes(b"broker.id=1\n\x00\x01")
    code, _out, err = cli(capsys, "lint", f)
    assert code == 2 and f"{f}:2:" in err


def test_bad_field_type_and_missing_file(tmp_path, capsys):
    f = write(tmp_path / "t.yaml", "- name: orders\n  partitions: many\n")
    code, _out, err = cli(capsys, "lint", f)
    assert code == 2 and f"{f}:2:" in err and "partitions" in err
    code, _out, err = cli(capsys, "lint", tmp_path / "nope.yaml")
    assert code == 2 and "no such file" in err


# --- --against ----------------------------------------------------------------------------------


def snapshot(root: Path, brokers=3, broker_configs=None, cluster_defaults=None, topics=(), name="prod-eu", fmt="jsonl"):
    rows = []
    for b in range(1, brokers + 1):
        for key, value in (broker_configs or {}).items():
            rows.append({"entity_type": "broker", "entity_name": str(b), "key": key, "value": value,
                         "source": "STATIC_BROKER_CONFIG"})
    for key, value in (cluster_defaults or {}).items():
        rows.append({"entity_type": "cluster_default", "entity_name": "", "key": key, "value": value,
                     "source": "DYNAMIC_DEFAULT_BROKER_CONFIG"})
    tables = {
        "brokers": [{"broker_id": b, "cores": 16, "log_dirs": ["/data/a", "/data/b"]} for b in range(1, brokers + 1)],
        "configs": rows,
        "topics": [{"topic": t, "partitions": 3, "replication_factor": 3} for t in topics],
        "partitions": [{"topic": t, "partition": p, "leader": 1, "replicas": [1, 2, 3], "isr": [1, 2, 3]}
                       for t in topics for p in range(3)],
    }
    manifest = Manifest(cluster={"id": name + "-id", "name": name, "kafka_version": "3.7.1"},
                        collected_at="2026-11-22T00:00:00Z")
    return write_snapshot(root / name, manifest, tables, fmt=fmt)


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_against_rf_exceeding_the_clusters_brokers_is_rep010(tmp_path, fmt):
    snap = snapshot(tmp_path, brokers=3, topics=["existing"], fmt=fmt)
    f = write(tmp_path / "t.yaml", """
        - name: wide
          partitions: 3
          replication_factor: 4
          configs: {min.insync.replicas: 2}
        - name: existing
          partitions: 3
          replication_factor: 4
          configs: {min.insync.replicas: 2}
    """)
    result = run_lint([f], against=str(snap), config=only("REP010"))
    assert located(result) == {("REP010", "wide", "t.yaml", 1), ("REP010", "existing", "t.yaml", 5)}
    assert run_lint([f], config=only("REP010")).findings == []  # no cluster, no broker count


def test_against_min_isr_is_inherited_from_the_cluster(tmp_path):
    snap = snapshot(tmp_path, broker_configs={"min.insync.replicas": "2"})
    f = write(tmp_path / "t.yaml", "- name: pair\n  partitions: 3\n  replication_factor: 2\n")
    alone = run_lint([f], config=only("REP002"))
    assert alone.findings == []  # alone, min.insync.replicas is Kafka's default 1
    result = run_lint([f], against=str(snap), config=only("REP002"))
    assert located(result) == {("REP002", "pair", "t.yaml", 1)}
    assert "server.properties" in result.findings[0].message
    dyn = snapshot(tmp_path / "dyn", cluster_defaults={"min.insync.replicas": "2"})
    assert located(run_lint([f], against=str(dyn), config=only("REP002"))) == {("REP002", "pair", "t.yaml", 1)}


def test_against_leaves_out_findings_about_untouched_parts(tmp_path):
    snap = snapshot(tmp_path, broker_configs={"min.insync.replicas": "3"}, topics=["legacy"])
    f = write(tmp_path / "t.yaml", "- name: new\n  partitions: 3\n  replication_factor: 3\n"
                                   "  configs: {min.insync.replicas: 2}\n")
    result = run_lint([f], against=str(snap), config=only("REP002"))
    assert result.findings == []
    assert any("do not touch" in n for n in result.notes)


def _broker_change(tmp_path, snap, key, value, broker=1):
    f = write(tmp_path / f"b{broker}-{key}-{value}.properties", f"broker.id={broker}\n{key}={value}\n")
    return run_lint([f], against=str(snap), config=only("THR007"))


@pytest.mark.parametrize(("key", "old", "new", "fires"), [
    ("num.io.threads", 8, 16, False),  # old*2 passes
    ("num.io.threads", 8, 17, True),  # old*2+1 fires
    ("num.io.threads", 8, 4, False),  # old/2 passes
    ("num.io.threads", 8, 3, True),
    ("num.network.threads", 3, 6, False),
    ("num.network.threads", 3, 7, True),
    ("num.network.threads", 3, 1, False),  # 3/2 = 1 in Kafka's integer division
    ("num.replica.fetchers", 2, 5, True),
    ("background.threads", 10, 20, False),
])
def test_thr007_boundaries_against_a_cluster(tmp_path, key, old, new, fires):
    snap = snapshot(tmp_path, brokers=1, broker_configs={key: str(old)})
    result = _broker_change(tmp_path, snap, key, new)
    got = located(result, "THR007")
    assert got == ({("THR007", f"broker 1: {key}", f"b1-{key}-{new}.properties", 2)} if fires else set())
    if fires:
        ev = result.findings[0].evidence
        assert (ev["current"], ev["proposed"]) == (old, new)


def test_thr007_uses_the_clusters_dynamic_value(tmp_path):
    snap = snapshot(tmp_path, brokers=1, broker_configs={"num.io.threads": "8"},
                    cluster_defaults={"num.io.threads": "16"})
    assert located(_broker_change(tmp_path, snap, "num.io.threads", 32), "THR007") == set()  # dynamic wins both
    snap2 = snapshot(tmp_path / "b", brokers=1, broker_configs={"num.io.threads": "16"})
    assert located(_broker_change(tmp_path, snap2, "num.io.threads", 32), "THR007")  == set()


def test_thr007_needs_against(tmp_path):
    f = write(tmp_path / "server.properties", "broker.id=1\nnum.io.threads=64\n")
    assert run_lint([f], config=only("THR007")).findings == []


def test_change_rules_are_listed_with_docs(capsys):
    rules = load_rules()
    for code in ("THR007", "CFG900"):
        r = rules[code]
        assert r.scope == "change" and r.why and r.remediation and r.example
    code, out, _err = cli(capsys, "rules", "list", "--format", "json")
    listed = {r["code"]: r for r in json.loads(out)} if out.lstrip().startswith("[") else {
        r["code"]: r for r in json.loads(out)["rules"]}
    assert listed["THR007"]["name"] == "unsafe-thread-change"
    assert listed["CFG900"]["severity"] == "info"


def test_change_rules_do_not_run_in_check():
    assert not [r for r in AuditConfig().rules() if r.code in ("THR007", "CFG900")]


# --- the sample change review and the embedded path ------------------------------------------------


def test_sample_change_review(capsys):
    code, out, _err = cli(capsys, "lint", SAMPLE, "--against", SEARCH_INGEST, "--format", "json")
    assert code == 1
    got = {(x["rule"], Path(x["location"]["file"]).name, x["location"]["line"]) for x in json.loads(out)["findings"]}
    assert got == {
        ("THR007", "broker-1.properties", 8), ("THR007", "broker-1.properties", 9),
        ("DSK005", "broker-1.properties", 5), ("DSK005", "broker-2.properties", 5),
        ("REP002", "strimzi-topics.yaml", 5), ("CFG002", "topics.yaml", 7), ("REP002", "topics.yaml", 13),
    }


def test_lint_never_imports_pyspark(tmp_path):
    f = write(tmp_path / "t.yaml", PLAIN)
    code = (
        "import sys\n"
        "from auditor.cli import main as m\n"
        f"sys.argv = ['kafka-audit', 'lint', {str(f)!r}]\n"
        "try:\n    m.main()\nexcept SystemExit as e:\n    code = e.code\n"
        "print(code, sorted(k for k in sys.modules if k.split('.')[0] in ('pyspark', 'py4j')))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert p.stdout.strip().splitlines()[-1] == "1 []", p.stdout + p.stderr


def test_config_file_selects_and_overrides(tmp_path, capsys):
    f = write(tmp_path / "t.yaml", """
        # kafka-audit: ignore[REP003] reason="nothing to hide"
        - name: orders
          partitions: 3
          replication_factor: 3
          configs: {min.insync.replicas: 3}
    """)
    cfg = write(tmp_path / "kafka-audit.toml", 'ignore = ["CFG900"]\n[severity]\nREP002 = "warning"\n')
    code, out, _err = cli(capsys, "lint", f, "--config", cfg, "--format", "json")
    findings = json.loads(out)["findings"]
    assert code == 0 and [(x["rule"], x["severity"]) for x in findings] == [("REP002", "warning")]


def test_against_a_missing_snapshot_is_a_usage_error(tmp_path, capsys):
    f = write(tmp_path / "t.yaml", PLAIN)
    code, _out, err = cli(capsys, "lint", f, "--against", tmp_path / "nowhere")
    assert code == 2 and "manifest.json" in err and err.count("\n") == 1


def test_suppression_of_a_rule_that_did_not_run_is_not_unused(tmp_path):
    f = write(tmp_path / "server.properties", """
        broker.id=1
        # kafka-audit: ignore[THR007] reason="doubling twice during the maintenance window"
        num.io.threads=32
    """)
    assert [x.rule for x in run_lint([f]).findings if x.rule == "CFG900"] == []  # THR007 needs --against


def test_properties_without_broker_id_is_a_template_for_every_broker(tmp_path):
    snap = snapshot(tmp_path, brokers=3, broker_configs={"num.io.threads": "8"})
    own = write(tmp_path / "b2.properties", "broker.id=2\nnum.io.threads=16\n")
    template = write(tmp_path / "server.properties", "# rendered per broker at deploy time\nnum.io.threads=32\n")
    result = run_lint([own, template], against=str(snap), config=only("THR007"))
    assert located(result) == {("THR007", "broker 1: num.io.threads", "server.properties", 2),
                               ("THR007", "broker 3: num.io.threads", "server.properties", 2)}
    alone = run_lint([template], config=only("THR004"))  # without a cluster: a broker of its own
    assert all(f.location["file"] == str(template) for f in alone.findings)


def test_against_an_incomplete_snapshot_exits_3(tmp_path, capsys):
    snap = snapshot(tmp_path, brokers=3)
    manifest = json.loads((snap / "manifest.json").read_text())
    manifest["errors"] = [{"source": "zookeeper", "target": "zk:2181", "message": "timed out"}]
    (snap / "manifest.json").write_text(json.dumps(manifest))
    f = write(tmp_path / "t.yaml", "- name: ok\n  partitions: 3\n  replication_factor: 3\n"
                                   "  configs: {min.insync.replicas: 2}\n")
    code, out, _err = cli(capsys, "lint", f, "--against", snap)
    assert code == 3 and "INCOMPLETE prod-eu: source zookeeper zk:2181" in out


def test_unknown_yaml_tag_is_a_usage_error(tmp_path, capsys):
    f = write(tmp_path / "t.yaml", "- name: x\n  partitions: !Ref count\n")
    code, _out, err = cli(capsys, "lint", f)
    assert code == 2 and f"{f}:2:" in err and err.count("\n") == 1
