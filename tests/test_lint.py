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
    return {
        (f.rule, f.resource_name, Path(f.location["file"]).name, f.location["line"])
        for f in result.findings
        if rule is None or f.rule == rule
    }


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
    files = [
        write(d / "plain.yaml", PLAIN),
        write(d / "strimzi.yaml", STRIMZI),
        write(d / "jikkou.yml", JIKKOU),
        write(d / "server.properties", BROKER),
    ]
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
    assert all(
        f.location and f.location["file"] in map(str, files) and f.location["line"] >= 1
        for f in result.findings
    )


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
    f = write(
        tmp_path / "ok.yaml",
        """
        - name: fine
          partitions: 6
          replication_factor: 3
          configs: {min.insync.replicas: 2}
    """,
    )
    code, out, _err = cli(capsys, "lint", f)
    assert code == 0, out


# --- suppressions -------------------------------------------------------------------------------


def test_suppression_on_the_line_above_and_trailing(tmp_path):
    f = write(
        tmp_path / "t.yaml",
        """
        # kafka-audit: ignore[REP002] reason="acks=1 producers only"
        - name: orders
          partitions: 3
          replication_factor: 3
          configs:
            min.insync.replicas: 3
            retention.msx: 5   # kafka-audit: ignore[CFG002] reason="read by our own tooling"
    """,
    )
    result = run_lint([f])
    assert not [x for x in result.findings if x.rule in ("REP002", "CFG002", "CFG900")]
    assert any("2 finding(s) suppressed" in n for n in result.notes)


def test_suppression_in_properties(tmp_path):
    f = write(
        tmp_path / "server.properties",
        """
        broker.id=1
        # kafka-audit: ignore[CFG002] reason="plugin key"
        num.io.thread=32
    """,
    )
    result = run_lint([f], config=only("CFG002", "CFG900"))
    assert result.findings == []


def test_unused_suppression_is_cfg900(tmp_path):
    f = write(
        tmp_path / "t.yaml",
        """
        # kafka-audit: ignore[REP003] reason="old scratch topic"
        - name: orders
          partitions: 3
          replication_factor: 3
    """,
    )
    result = run_lint([f])
    cfg900 = [x for x in result.findings if x.rule == "CFG900"]
    assert len(cfg900) == 1
    assert cfg900[0].severity == "info" and cfg900[0].location == {"file": str(f), "line": 1}
    assert "REP003" in cfg900[0].message


def test_suppression_of_another_rule_does_not_hide(tmp_path):
    f = write(
        tmp_path / "t.yaml",
        """
        # kafka-audit: ignore[REP003] reason="not this one"
        - name: orders
          partitions: 3
          replication_factor: 3
          configs: {min.insync.replicas: 3}
    """,
    )
    rules = {x.rule for x in run_lint([f]).findings}
    assert {"REP002", "CFG900"} <= rules


@pytest.mark.parametrize(
    "comment", ["# kafka-audit: ignore[REP002]", '# kafka-audit: ignore[REP002] reason=""']
)
def test_suppression_without_reason_is_a_usage_error(tmp_path, capsys, comment):
    f = write(
        tmp_path / "t.yaml",
        f"""
        - name: orders
          partitions: 3
          {comment}
          replication_factor: 3
    """,
    )
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
    assert data["version"] == 1 and {e["rule"] for e in data["findings"]} >= {"REP002", "REP003"}
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
    f = write(
        tmp_path / "bad.yaml",
        """
        - name: orders
          partitions: 3
            replication_factor: [3
    """,
    )
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


def snapshot(
    root: Path, brokers=3, broker_configs=None, cluster_defaults=None, topics=(), name="prod-eu", fmt="jsonl"
):
    rows = []
    for b in range(1, brokers + 1):
        for key, value in (broker_configs or {}).items():
            rows.append(
                {
                    "entity_type": "broker",
                    "entity_name": str(b),
                    "key": key,
                    "value": value,
                    "source": "STATIC_BROKER_CONFIG",
                }
            )
    for key, value in (cluster_defaults or {}).items():
        rows.append(
            {
                "entity_type": "cluster_default",
                "entity_name": "",
                "key": key,
                "value": value,
                "source": "DYNAMIC_DEFAULT_BROKER_CONFIG",
            }
        )
    tables = {
        "brokers": [
            {"broker_id": b, "cores": 16, "log_dirs": ["/data/a", "/data/b"]} for b in range(1, brokers + 1)
        ],
        "configs": rows,
        "topics": [{"topic": t, "partitions": 3, "replication_factor": 3} for t in topics],
        "partitions": [
            {"topic": t, "partition": p, "leader": 1, "replicas": [1, 2, 3], "isr": [1, 2, 3]}
            for t in topics
            for p in range(3)
        ],
    }
    manifest = Manifest(
        cluster={"id": name + "-id", "name": name, "kafka_version": "3.7.1"},
        collected_at="2026-11-22T00:00:00Z",
    )
    return write_snapshot(root / name, manifest, tables, fmt=fmt)


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_against_rf_exceeding_the_clusters_brokers_is_rep010(tmp_path, fmt):
    snap = snapshot(tmp_path, brokers=3, topics=["existing"], fmt=fmt)
    f = write(
        tmp_path / "t.yaml",
        """
        - name: wide
          partitions: 3
          replication_factor: 4
          configs: {min.insync.replicas: 2}
        - name: existing
          partitions: 3
          replication_factor: 4
          configs: {min.insync.replicas: 2}
    """,
    )
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
    assert located(run_lint([f], against=str(dyn), config=only("REP002"))) == {
        ("REP002", "pair", "t.yaml", 1)
    }


def test_against_leaves_out_findings_about_untouched_parts(tmp_path):
    snap = snapshot(tmp_path, broker_configs={"min.insync.replicas": "3"}, topics=["legacy"])
    f = write(
        tmp_path / "t.yaml",
        "- name: new\n  partitions: 3\n  replication_factor: 3\n  configs: {min.insync.replicas: 2}\n",
    )
    result = run_lint([f], against=str(snap), config=only("REP002"))
    assert result.findings == []
    assert any("do not touch" in n for n in result.notes)


def _broker_change(tmp_path, snap, key, value, broker=1):
    f = write(tmp_path / f"b{broker}-{key}-{value}.properties", f"broker.id={broker}\n{key}={value}\n")
    return run_lint([f], against=str(snap), config=only("THR007"))


@pytest.mark.parametrize(
    ("key", "old", "new", "fires"),
    [
        ("num.io.threads", 8, 16, False),  # old*2 passes
        ("num.io.threads", 8, 17, True),  # old*2+1 fires
        ("num.io.threads", 8, 4, False),  # old/2 passes
        ("num.io.threads", 8, 3, True),
        ("num.network.threads", 3, 6, False),
        ("num.network.threads", 3, 7, True),
        ("num.network.threads", 3, 1, False),  # 3/2 = 1 in Kafka's integer division
        ("num.replica.fetchers", 2, 5, True),
        ("background.threads", 10, 20, False),
    ],
)
def test_thr007_boundaries_against_a_cluster(tmp_path, key, old, new, fires):
    snap = snapshot(tmp_path, brokers=1, broker_configs={key: str(old)})
    result = _broker_change(tmp_path, snap, key, new)
    got = located(result, "THR007")
    assert got == ({("THR007", f"broker 1: {key}", f"b1-{key}-{new}.properties", 2)} if fires else set())
    if fires:
        ev = result.findings[0].evidence
        assert (ev["current"], ev["proposed"]) == (old, new)
        # a server.properties is applied by a restart, which Kafka accepts: info, not an error
        assert (result.findings[0].severity, ev["applied"]) == ("info", "restart")


def test_thr007_uses_the_clusters_dynamic_value(tmp_path):
    snap = snapshot(
        tmp_path, brokers=1, broker_configs={"num.io.threads": "8"}, cluster_defaults={"num.io.threads": "16"}
    )
    assert (
        located(_broker_change(tmp_path, snap, "num.io.threads", 32), "THR007") == set()
    )  # dynamic wins both
    snap2 = snapshot(tmp_path / "b", brokers=1, broker_configs={"num.io.threads": "16"})
    assert located(_broker_change(tmp_path, snap2, "num.io.threads", 32), "THR007") == set()


def test_thr007_needs_against(tmp_path):
    f = write(tmp_path / "server.properties", "broker.id=1\nnum.io.threads=64\n")
    assert run_lint([f], config=only("THR007")).findings == []


def test_change_rules_are_listed_with_docs(capsys):
    rules = load_rules()
    for code in ("THR007", "CFG900"):
        r = rules[code]
        assert r.scope == "change" and r.why and r.remediation and r.example
    code, out, _err = cli(capsys, "rules", "list", "--format", "json")
    listed = (
        {r["code"]: r for r in json.loads(out)}
        if out.lstrip().startswith("[")
        else {r["code"]: r for r in json.loads(out)["rules"]}
    )
    assert listed["THR007"]["name"] == "unsafe-thread-change"
    assert listed["CFG900"]["severity"] == "info"


def test_change_rules_do_not_run_in_check():
    assert not [r for r in AuditConfig().rules() if r.code in ("THR007", "CFG900")]


# --- the sample change review and the embedded path ------------------------------------------------


def test_sample_change_review(capsys):
    code, out, _err = cli(capsys, "lint", SAMPLE, "--against", SEARCH_INGEST, "--format", "json")
    assert code == 1
    findings = json.loads(out)["findings"]
    got = {(x["rule"], Path(x["location"]["file"]).name, x["location"]["line"]) for x in findings}
    # the 1 h replay buffer under the 7-day segment.ms: info (issue 43), no segment.ms advice
    (dsk008,) = [x for x in findings if x["rule"] == "DSK008"]
    assert dsk008["severity"] == "info" and dsk008["resource"] == {"type": "config", "name": "segment.ms"}
    assert "segment.ms <=" not in dsk008["message"] and "~1.8 KB/s" in dsk008["message"]
    assert got == {
        ("THR007", "broker-1.properties", 8),
        ("THR007", "broker-1.properties", 9),
        ("DSK005", "broker-1.properties", 5),
        ("DSK005", "broker-2.properties", 5),
        ("REP002", "strimzi-topics.yaml", 5),
        ("CFG002", "topics.yaml", 7),
        ("REP002", "topics.yaml", 13),
        ("REP009", "topics.yaml", 13),  # RF 2 and RF 1 in search-ingest's 3 AZs
        ("REP009", "topics.yaml", 17),
        ("DSK008", "topics.yaml", 17),  # retention.ms 1 h under the 7-day default segment.ms
    }


def test_lint_never_imports_pyspark(tmp_path):
    f = write(tmp_path / "t.yaml", PLAIN)
    code = (
        "import sys\n"
        "from auditor.cli import main as m\n"
        f"sys.argv = ['kafka-audit', 'lint', {str(f)!r}]\n"
        "try:\n    m.main()\nexcept SystemExit as e:\n    code = e.code\n"
        "print(code, sorted(k for k in sys.modules if k.split('.')[0] in ('pyspark', 'py4j', 'sqlframe', 'sqlglot')))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    # nor sqlframe and sqlglot: every plan lint runs is bundled (auditor/frames.py)
    assert p.stdout.strip().splitlines()[-1] == "1 []", p.stdout + p.stderr


def test_config_file_selects_and_overrides(tmp_path, capsys):
    f = write(
        tmp_path / "t.yaml",
        """
        # kafka-audit: ignore[REP003] reason="nothing to hide"
        - name: orders
          partitions: 3
          replication_factor: 3
          configs: {min.insync.replicas: 3}
    """,
    )
    cfg = write(tmp_path / "kafka-audit.toml", 'ignore = ["CFG900"]\n[severity]\nREP002 = "warning"\n')
    code, out, _err = cli(capsys, "lint", f, "--config", cfg, "--format", "json")
    findings = json.loads(out)["findings"]
    assert code == 0 and [(x["rule"], x["severity"]) for x in findings] == [("REP002", "warning")]


def test_against_a_missing_snapshot_is_a_usage_error(tmp_path, capsys):
    f = write(tmp_path / "t.yaml", PLAIN)
    code, _out, err = cli(capsys, "lint", f, "--against", tmp_path / "nowhere")
    assert code == 2 and "manifest.json" in err and err.count("\n") == 1


def test_suppression_of_a_rule_that_did_not_run_is_not_unused(tmp_path):
    f = write(
        tmp_path / "server.properties",
        """
        broker.id=1
        # kafka-audit: ignore[THR007] reason="doubling twice during the maintenance window"
        num.io.threads=32
    """,
    )
    assert [x.rule for x in run_lint([f]).findings if x.rule == "CFG900"] == []  # THR007 needs --against


def test_properties_without_broker_id_is_a_template_for_every_broker(tmp_path):
    snap = snapshot(tmp_path, brokers=3, broker_configs={"num.io.threads": "8"})
    own = write(tmp_path / "b2.properties", "broker.id=2\nnum.io.threads=16\n")
    template = write(
        tmp_path / "server.properties", "# rendered per broker at deploy time\nnum.io.threads=32\n"
    )
    result = run_lint([own, template], against=str(snap), config=only("THR007"))
    assert located(result) == {
        ("THR007", "broker 1: num.io.threads", "server.properties", 2),
        ("THR007", "broker 3: num.io.threads", "server.properties", 2),
    }
    alone = run_lint([template], config=only("THR004"))  # without a cluster: a broker of its own
    assert all(f.location["file"] == str(template) for f in alone.findings)


def test_against_an_incomplete_snapshot_exits_3(tmp_path, capsys):
    snap = snapshot(tmp_path, brokers=3)
    manifest = json.loads((snap / "manifest.json").read_text())
    manifest["errors"] = [{"source": "zookeeper", "target": "zk:2181", "message": "timed out"}]
    (snap / "manifest.json").write_text(json.dumps(manifest))
    f = write(
        tmp_path / "t.yaml",
        "- name: ok\n  partitions: 3\n  replication_factor: 3\n  configs: {min.insync.replicas: 2}\n",
    )
    code, out, _err = cli(capsys, "lint", f, "--against", snap)
    assert code == 3 and "INCOMPLETE prod-eu: source zookeeper zk:2181" in out


def test_unknown_yaml_tag_is_a_usage_error(tmp_path, capsys):
    f = write(tmp_path / "t.yaml", "- name: x\n  partitions: !Ref count\n")
    code, _out, err = cli(capsys, "lint", f)
    assert code == 2 and f"{f}:2:" in err and err.count("\n") == 1


# --- what a file is: broker, controller, client... (issue 15, item 1) -----------------------------


def read(paths):
    from auditor.lint.inputs import read_inputs

    return read_inputs(paths)


def topics_of(inputs):
    """(name, file name, line, partitions, RF, {key: (value, line)}) per definition read."""
    return sorted(
        (t.name, Path(t.file).name, t.line, t.partitions, t.replication_factor, t.configs)
        for t in inputs.topics
    )


@pytest.fixture
def config_dir(tmp_path):
    d = tmp_path / "etc-kafka"
    write(d / "server.properties", "broker.id=0\nlog.dirs=/data/a,/data/b\nnum.io.threads=8\n")
    write(d / "producer.properties", "bootstrap.servers=localhost:9092\ncompression.type=none\n")
    write(d / "connect-standalone.properties", "bootstrap.servers=localhost:9092\nkey.converter=x.Json\n")
    write(d / "log4j.properties", "log4j.rootLogger=INFO, stdout\n")
    write(d / "zookeeper.properties", "dataDir=/tmp/zookeeper\nclientPort=2181\n")
    write(
        d / "controller.properties",
        "process.roles=controller\nnode.id=9\ncontroller.quorum.voters=9@h:9093\n",
    )
    write(
        d / "trogdor.conf",
        '{\n  "_comment": ["a JSON file"],\n  "nodes": {"node0": {"hostname": "localhost"}}\n}\n',
    )
    write(
        d / "connector.properties", "name=local-file-source\nfile=/tmp/x\n"
    )  # nothing a broker or client has
    return d


def test_a_config_directory_is_one_broker_and_notes_for_the_rest(config_dir):
    inputs = read([config_dir])
    assert [(Path(b.file).name, b.broker_id, b.kind) for b in inputs.brokers] == [
        ("server.properties", 0, "broker")
    ]
    assert [Path(f).name for f in inputs.files] == ["server.properties"]
    notes = {Path(n.split(":", 1)[0]).name: n.split(": skipped: ", 1)[1] for n in inputs.notes}
    assert set(notes) == {
        "producer.properties",
        "connect-standalone.properties",
        "log4j.properties",
        "zookeeper.properties",
        "controller.properties",
        "trogdor.conf",
        "connector.properties",
    }
    assert notes["controller.properties"].startswith(
        "a KRaft controller (process.roles=controller), not a broker"
    )
    assert notes["producer.properties"].startswith("a client configuration")
    assert notes["zookeeper.properties"].startswith("a ZooKeeper server configuration")
    assert notes["log4j.properties"].startswith("a logging (log4j) configuration")
    assert "JSON" in notes["trogdor.conf"]
    assert inputs.unrecognised == []
    result = run_lint([config_dir])
    assert {Path(f.location["file"]).name for f in result.findings} <= {"server.properties"}
    assert not [f for f in result.findings if "compression.type" in f.resource_name]  # legal for a producer
    assert not [f for f in result.findings if f.rule == "CFG004"]  # one broker, not eight
    assert len([n for n in result.notes if ": skipped: " in n]) == 7


def test_text_report_counts_and_prints_the_skipped_files(config_dir, capsys):
    code, out, _err = cli(capsys, "lint", config_dir)
    assert code == 0, out
    assert "1 file(s) linted (7 skipped): " in out
    assert f"note: {config_dir / 'producer.properties'}: skipped: a client configuration" in out
    assert f"note: {config_dir / 'controller.properties'}: skipped: a KRaft controller" in out


def test_a_named_non_broker_file_is_still_noted(config_dir):
    inputs = read([config_dir / "producer.properties", config_dir / "controller.properties"])
    assert inputs.brokers == [] and inputs.unrecognised == []
    assert sorted(Path(n.split(":", 1)[0]).name for n in inputs.notes) == [
        "controller.properties",
        "producer.properties",
    ]


@pytest.mark.parametrize("name", ["trogdor.conf", "connector.properties"])
def test_a_named_file_with_nothing_recognised_is_a_warning_and_strict_an_error(config_dir, capsys, name):
    f = config_dir / name
    code, out, _err = cli(capsys, "lint", f)
    assert code == 3  # files given and none linted: never a green run (issue 33)
    assert f"warning: {f}: no topic or broker definition recognised" in out
    assert "0 file(s) linted (1 not recognised)" in out
    assert "INCOMPLETE lint: none of the 1 file(s) given could be linted" in out
    code, out, err = cli(capsys, "lint", f, "--strict")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(
        f"kafka-audit: {f}: no topic or broker definition recognised"
    )


def test_combined_kraft_node_is_a_broker(tmp_path):
    f = write(
        tmp_path / "server.properties",
        "process.roles=broker,controller\nnode.id=1\n"
        "controller.quorum.voters=1@localhost:9093\nlog.dirs=/data/a\n",
    )
    inputs = read([f])
    assert [(b.broker_id, b.kind) for b in inputs.brokers] == [(1, "combined")]
    assert located(run_lint([f], config=only("DSK005"))) == {("DSK005", "1", "server.properties", 4)}


def test_a_conf_from_a_directory_that_is_not_properties_is_skipped(tmp_path):
    d = tmp_path / "conf"
    write(d / "server.properties", "broker.id=1\n")
    (d / "weird.conf").write_text("key=\\u12G4\n", encoding="utf-8")  # not valid properties text
    inputs = read([d])
    assert [Path(b.file).name for b in inputs.brokers] == ["server.properties"]
    assert len(inputs.notes) == 1 and "weird.conf: skipped:" in inputs.notes[0]
    from auditor.lint.inputs import LintInputError

    with pytest.raises(LintInputError, match="weird.conf:1"):  # named, it must parse
        read([d / "weird.conf"])


def test_a_file_given_twice_is_read_once(tmp_path):
    f = write(tmp_path / "t" / "topics.yaml", PLAIN)
    b = write(tmp_path / "t" / "server.properties", "broker.id=3\n")
    inputs = read([f, tmp_path / "t", b, f])
    assert [Path(x).name for x in inputs.files] == ["server.properties", "topics.yaml"]
    assert [t.name for t in inputs.topics] == ["orders", "single"]


def test_json_report_sends_the_notes_to_stderr(config_dir, capsys):
    code, out, err = cli(capsys, "lint", config_dir, "--format", "json")
    assert code == 0
    assert json.loads(out)["summary"]["total"] == len(json.loads(out)["findings"])
    assert f"kafka-audit: note: {config_dir / 'zookeeper.properties'}: skipped: a ZooKeeper" in err


# --- the same topic in two files (issue 15, item 2) ----------------------------------------------------


def monorepo(tmp_path, prod_rf=3):
    dev = write(
        tmp_path / "dev" / "topics.yaml",
        """
        - name: shared.audit
          partitions: 3
          replication_factor: 3
          configs: {min.insync.replicas: 2}
        - name: orders
          partitions: 3
          replication_factor: 1
    """,
    )
    prod = write(
        tmp_path / "prod" / "topics.yaml",
        f"""
        - name: orders
          partitions: 12
          replication_factor: {prod_rf}
          configs:
            min.insync.replicas: {prod_rf}
        - name: shared.audit
          partitions: 3
          replication_factor: 3
          configs: {{min.insync.replicas: 2}}
    """,
    )
    return dev, prod


def verdict(result):
    return (
        sorted(
            (f.rule, f.resource_name, f.location["file"], f.location["line"], f.message)
            for f in result.findings
        ),
        result.notes,
    )


def test_each_definition_of_a_topic_is_linted_at_its_own_line(tmp_path):
    dev, prod = monorepo(tmp_path)
    result = run_lint([dev, prod], config=only("REP002", "REP003"))
    got = {(f.rule, f.resource_name, f.location["file"], f.location["line"]) for f in result.findings}
    assert got == {
        ("REP003", "orders", str(dev), 5),  # dev: RF 1
        ("REP002", "orders", str(prod), 1),
    }  # prod: RF 3 with min.insync.replicas 3
    warning = next(n for n in result.notes if n.startswith("warning: topic orders"))
    assert f"{dev}:5: partitions 3, replication_factor 1" in warning
    assert f"{prod}:1: partitions 12, replication_factor 3" in warning
    assert "min.insync.replicas unset" in warning and "min.insync.replicas 3" in warning
    # identical definitions are one: a note, no warning
    assert f"topic shared.audit is defined identically in {dev}:1 and {prod}:6" in result.notes
    assert not [n for n in result.notes if n.startswith("warning: topic shared.audit")]


@pytest.mark.parametrize("prod_rf", [3, 1])
def test_the_result_does_not_depend_on_the_order_of_the_files(tmp_path, capsys, prod_rf):
    dev, prod = monorepo(tmp_path, prod_rf)
    assert verdict(run_lint([dev, prod])) == verdict(run_lint([prod, dev]))
    runs = [cli(capsys, "lint", *files) for files in ([dev, prod], [prod, dev], [tmp_path])]
    assert runs[0] == runs[1] == runs[2]
    assert runs[0][0] == 1


def test_an_identical_duplicate_is_reported_at_both_and_suppressed_per_file(tmp_path):
    body = "  partitions: 3\n  replication_factor: 1\n"
    a = write(tmp_path / "a.yaml", "- name: scratch\n" + body)
    b = write(
        tmp_path / "b.yaml", '# kafka-audit: ignore[REP003] reason="scratch in dev"\n- name: scratch\n' + body
    )
    result = run_lint([b, a], config=only("REP003", "CFG900"))
    assert located(result) == {("REP003", "scratch", "a.yaml", 1)}
    assert "1 finding(s) suppressed inline" in result.notes
    assert run_lint([a, b], config=only("REP003", "CFG900")).findings == result.findings


def test_conflicting_definitions_against_a_cluster(tmp_path):
    snap = snapshot(tmp_path, brokers=3, topics=["orders"])
    dev, prod = monorepo(tmp_path, prod_rf=4)
    result = run_lint([dev, prod], against=str(snap), config=only("REP010", "REP003"))
    assert {(f.rule, f.location["file"], f.location["line"]) for f in result.findings} == {
        ("REP003", str(dev), 5),
        ("REP010", str(prod), 1),
    }


def test_the_text_report_prints_the_conflict_first(tmp_path, capsys):
    dev, prod = monorepo(tmp_path)
    code, out, _err = cli(capsys, "lint", prod, dev)
    lines = out.splitlines()
    assert lines[0].startswith("warning: topic orders has 2 different definitions: ")
    assert lines[1].startswith(f"{dev}:5: ERR  REP003 single-replica:")
    assert f"note: topic shared.audit is defined identically in {dev}:1 and {prod}:6" in lines


# --- topic formats: topicctl, kafka-gitops, JulieOps, jikkou 2022 (issue 15, item 3) ---------------------

TOPICCTL = """
# an empty document first, as topicctl's own examples have
---
meta:
  name: events.clicks   # kafka-audit: ignore[REP002] reason="acks=1 producers only"
  cluster: c1
  environment: prod
  region: eu
spec:
  partitions: 6
  replicationFactor: 3
  retentionMinutes: 60
  placement:
    strategy: in-rack
  settings:
    cleanup.policy: [compact, delete]
    min.insync.replicas: 3
    retention.msx: 1
---
meta:
  name: events.views
spec:
  partitions: 1
  replicationFactor: 1
"""

GITOPS = """
settings:
  topics:
    defaults:
      replication: 2
topics:
  # kafka-audit: ignore[REP003] reason="throwaway"
  scratch:
    partitions: 1
    replication: 1
  orders:
    partitions: 6
    configs:
      cleanup.policy: compact
      min.insync.replicas: 2
services:
  my-app:
    type: application
    produces: [orders]
"""

JULIE = """
---
context: "ctx"
company: "acme"
env: "prod"
projects:
  - name: "billing"
    consumers:
      - principal: "User:App0"
    topics:
      - name: "invoices"
        config:
          replication.factor: "3"
          num.partitions: "6"
          min.insync.replicas: "3"
      - dataType: "avro"
        name: "payments"
        config:
          replication.factor: "1"
special_topics:
  - name: "dlq"
platform:
  schema_registry:
    instances:
      - principal: "User:SchemaRegistry01"
"""

JIKKOU_2022 = """
apiVersion: "kafka.jikkou.io/v1beta2"
kind: KafkaTopicList
metadata:
  labels: {}
spec:
  topics:
    - name: 'bench'
      partitions: 3
      replication_factor: 3
      configs:
        min.insync.replicas: 3
"""


def test_topicctl_topics(tmp_path):
    f = write(tmp_path / "topicctl.yaml", TOPICCTL)
    assert topics_of(read([f])) == [
        (
            "events.clicks",
            "topicctl.yaml",
            4,
            6,
            3,
            {
                "cleanup.policy": ("compact,delete", 15),
                "min.insync.replicas": ("3", 16),
                "retention.msx": ("1", 17),
                "retention.ms": ("3600000", 11),
            },
        ),
        ("events.views", "topicctl.yaml", 20, 1, 1, {}),
    ]
    result = run_lint([f], config=only("REP002", "REP003", "CFG002", "CFG900"))
    assert located(result) == {
        ("CFG002", "topic events.clicks: retention.msx", "topicctl.yaml", 17),
        ("REP003", "events.views", "topicctl.yaml", 20),
    }
    assert "1 finding(s) suppressed inline" in result.notes  # the trailing comment on the name line


def test_kafka_gitops_topics(tmp_path):
    f = write(tmp_path / "state.yaml", GITOPS)
    assert topics_of(read([f])) == [
        (
            "orders",
            "state.yaml",
            10,
            6,
            2,
            {"cleanup.policy": ("compact", 13), "min.insync.replicas": ("2", 14)},
        ),
        ("scratch", "state.yaml", 7, 1, 1, {}),
    ]
    result = run_lint([f], config=only("REP002", "REP003", "CFG900"))
    assert located(result) == {("REP002", "orders", "state.yaml", 10)}  # RF 2 from the defaults
    assert "1 finding(s) suppressed inline" in result.notes  # the comment above scratch


def test_julieops_topology(tmp_path):
    f = write(tmp_path / "descriptor.yaml", JULIE)
    assert topics_of(read([f])) == [
        ("ctx.acme.prod.billing.invoices", "descriptor.yaml", 10, 6, 3, {"min.insync.replicas": ("3", 14)}),
        ("ctx.acme.prod.billing.payments.avro", "descriptor.yaml", 16, None, 1, {}),
        ("dlq", "descriptor.yaml", 20, None, None, {}),
    ]
    result = run_lint([f], config=only("REP002", "REP003"))
    assert located(result) == {
        ("REP002", "ctx.acme.prod.billing.invoices", "descriptor.yaml", 10),
        ("REP003", "ctx.acme.prod.billing.payments.avro", "descriptor.yaml", 16),
    }


def test_jikkou_2022_spec_topics(tmp_path):
    f = write(tmp_path / "jikkou.yaml", JIKKOU_2022)
    assert topics_of(read([f])) == [("bench", "jikkou.yaml", 7, 3, 3, {"min.insync.replicas": ("3", 11)})]
    assert located(run_lint([f], config=only("REP002"))) == {("REP002", "bench", "jikkou.yaml", 7)}


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n", "apps/v1 Deployment"),
        ("services:\n  web: {image: nginx}\nversion: '3'\n", "top-level keys services, version"),
        ("# only a comment\n", None),
        ("topics:\n  create: true\n", "top-level keys topics"),  # a Helm values file, not kafka-gitops
        ("- just\n- strings\n", "a list"),
    ],
)
def test_a_yaml_file_with_nothing_recognised(tmp_path, capsys, text, found):
    f = write(tmp_path / "other.yaml", text)
    inputs = read([f])
    assert inputs.topics == [] and inputs.files == []
    assert len(inputs.unrecognised) == 1
    line = inputs.unrecognised[0]
    assert line.startswith(f"{f}: no topic or broker definition recognised")
    assert (f"(found: {found})" in line) if found else "(no YAML document in it)" in line
    code, out, _err = cli(capsys, "lint", f)
    assert code == 3 and f"warning: {line}" in out.splitlines()  # nothing linted: incomplete
    code, out, err = cli(capsys, "lint", f, "--strict")
    assert code == 2 and out == "" and err == f"kafka-audit: {line}\n"


def test_strict_passes_when_everything_is_recognised(tmp_path, capsys):
    f = write(tmp_path / "state.yaml", GITOPS)
    code, out, _err = cli(capsys, "lint", f, "--strict")
    assert code == 1 and "warning:" not in out  # REP002 on orders, nothing unrecognised


def test_an_empty_topic_list_is_recognised(tmp_path):
    f = write(tmp_path / "t.yaml", "topics: []\n")
    inputs = read([f])
    assert inputs.unrecognised == [] and inputs.files == [str(f)]


# --- issue 36: broker.rack and controlled.shutdown.enable in lint ---------------------------------


def test_a_broker_file_without_broker_rack_among_racked_ones_is_rep011(tmp_path):
    racked = write(tmp_path / "b1.properties", "broker.id=1\nbroker.rack=use1-az1\n")
    write(tmp_path / "b2.properties", "broker.id=2\nbroker.rack=use1-az2\n")
    bare = write(tmp_path / "b3.properties", "# added later\nbroker.id=3\nnum.io.threads=8\n")
    result = run_lint([tmp_path], config=only("REP011"))
    assert located(result) == {("REP011", "3", "b3.properties", 1)}
    assert run_lint([racked, bare.parent / "b2.properties"], config=only("REP011")).findings == []


def test_controlled_shutdown_disabled_points_at_each_line_or_the_first_file(tmp_path):
    write(tmp_path / "b1.properties", "broker.id=1\ncontrolled.shutdown.enable=false\n")
    write(tmp_path / "b2.properties", "broker.id=2\nnum.io.threads=8\ncontrolled.shutdown.enable=true\n")
    result = run_lint([tmp_path], config=only("CFG005"))
    assert located(result) == {("CFG005", "broker 1: controlled.shutdown.enable", "b1.properties", 2)}
    write(tmp_path / "b2.properties", "broker.id=2\nnum.io.threads=8\ncontrolled.shutdown.enable=false\n")
    result = run_lint([tmp_path], config=only("CFG005"))
    # every broker disables it: one finding for the cluster, at the first file that sets it
    assert located(result) == {("CFG005", "controlled.shutdown.enable", "b1.properties", 2)}


def test_an_inherited_default_is_one_finding_located_at_each_linted_topic(tmp_path):
    """REP004 (issue 36): topics inheriting min.insync.replicas=1 share one finding about the
    setting, reported at each linted topic that inherits it (Kafka's default: no file sets it);
    a topic that sets 1 itself gets its own; with a server.properties setting it, the finding
    is at that line. With --against a cluster whose 30 topics inherit it too (past the report's
    cap of 20 listed), the proposed topic is still located."""
    topics = write(
        tmp_path / "t.yaml",
        """
        - name: a
          partitions: 3
          replication_factor: 3
        - name: b
          partitions: 3
          replication_factor: 3
        - name: own
          partitions: 3
          replication_factor: 3
          configs: {min.insync.replicas: 1}
    """,
    )
    result = run_lint([topics], config=only("REP004"))
    assert located(result) == {
        ("REP004", "min.insync.replicas", "t.yaml", 1),
        ("REP004", "min.insync.replicas", "t.yaml", 4),
        ("REP004", "own", "t.yaml", 7),
    }
    inherited = next(f for f in result.findings if f.resource_name == "min.insync.replicas")
    assert inherited.evidence["topics_inheriting"] == 2 and inherited.evidence["topics"] == ["a", "b"]
    broker = write(tmp_path / "server.properties", "broker.id=1\nmin.insync.replicas=1\n")
    assert located(run_lint([topics, broker], config=only("REP004"))) == {
        ("REP004", "min.insync.replicas", "server.properties", 2),
        ("REP004", "own", "t.yaml", 7),
    }
    snap = snapshot(tmp_path / "snap", topics=[f"existing-{i:02d}" for i in range(30)])
    new = write(tmp_path / "new.yaml", "- name: zz-new\n  partitions: 3\n  replication_factor: 3\n")
    assert located(run_lint([new], against=str(snap), config=only("REP004"))) == {
        ("REP004", "min.insync.replicas", "new.yaml", 1)
    }
