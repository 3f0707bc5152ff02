"""Root causes (auditor/causes.py): one failure or one inherited default named once, with
the findings it explains, in the engine, on both engines, in every report."""

from __future__ import annotations

import dataclasses
import json

import jsonschema
import pytest

from auditor.commands.fleet import run_fleet, summary_json
from auditor.config import AuditConfig
from auditor.engine import open_engine
from auditor.engine.runner import run_audit
from auditor.render import json_render, markdown_render, text_render
from auditor.snapshot.io import Manifest, open_snapshot, write_snapshot
from tests.conftest import ROOT, SAMPLE_FLEET, cluster_dir

SCHEMA = json.loads((ROOT / "docs" / "report.schema.json").read_text())
INCIDENTS = ("ads-zk-legacy", "logistics-jbod", "payments-msk")


def _audit(engine, dirs):
    return run_audit(engine, [open_snapshot(d) for d in dirs], AuditConfig())


@pytest.fixture(scope="module")
def incidents():
    with open_engine("duckdb") as engine:
        return _audit(engine, [cluster_dir(name) for name in INCIDENTS])


def _by_cause(result, cluster):
    out: dict[str | None, set[tuple[str, str]]] = {}
    for f in result.findings:
        if f.cluster == cluster:
            out.setdefault(f.cause, set()).add((f.rule, f.resource_name))
    return out


def _rows(cluster: str, table: str) -> list[dict]:
    path = cluster_dir(cluster) / f"{table}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _per_topic(partitions) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in partitions:
        out[p["topic"]] = out.get(p["topic"], 0) + 1
    return out


def test_unregistered_broker_explains_what_it_causes_and_nothing_else(incidents):
    down = _by_cause(incidents, "ads-zk-legacy")
    explained = down["broker-unregistered:5"]
    ads = [f for f in incidents.findings if f.cluster == "ads-zk-legacy"]
    # Broker 5 itself: REP008 (one finding for the broker, not one per partition) and PAR007 ...
    assert {(f.rule, f.resource_name) for f in ads if f.rule == "REP008"} == {("REP008", "5")}
    assert {("REP008", "5"), ("PAR007", "5")} <= explained
    # ... and the partitions whose only missing ISR member is broker 5 (an oracle from the
    # snapshot's rows), one PAR005 finding per topic under the cause, counting them.
    only_5 = [
        p
        for p in _rows("ads-zk-legacy", "partitions")
        if set(p["replicas"]) - set(p["isr"]) == {5} and p["leader"] != -1
    ]
    assert len(only_5) > 60
    par005 = {f.resource_name: f for f in ads if f.rule == "PAR005" and f.cause == "broker-unregistered:5"}
    # (A topic with one such partition would keep that partition's finding: none has one here.)
    assert {f.resource_type for f in par005.values()} == {"topic"}
    assert {t: f.evidence["affected_partitions"] for t, f in par005.items()} == _per_topic(only_5)
    for topic, f in par005.items():
        listed = f.evidence["partitions"]
        assert listed == sorted(listed) and len(listed) == min(20, f.evidence["affected_partitions"])
        assert {p["partition"] for p in only_5 if p["topic"] == topic} >= set(listed)
        assert f.evidence["example"]["out_of_sync"] == [5] and f.message.startswith(
            f"{f.evidence['affected_partitions']} partition(s) of topic {topic} ("
        )
    assert {("PAR004", t) for t in par005} >= {(r, n) for r, n in explained if r == "PAR004"}
    # No partition finding is left under the cause: each is in its topic's finding.
    assert not [f for f in ads if f.cause and f.resource_type == "partition"]
    # __consumer_offsets-17 also lost live broker 4 and its leader (the split-brain): not broker
    # 5's doing, so its findings stay on the partition, outside the cause.
    for rule in ("PAR001", "PAR002", "PAR003", "PAR005"):
        assert (rule, "__consumer_offsets-17") in down[None]
    # The controller's divergence, rack placement and clients are other problems.
    assert {rule for rule, _ in down[None]} >= {"CTL002", "CTL003", "CTL004", "REP007", "CLI001"}
    assert not {rule for rule, _ in explained} & {"CTL002", "CTL003", "CTL004", "REP007", "CLI001"}
    (cause,) = [c for c in incidents.causes if c.cluster == "ads-zk-legacy"]
    assert (cause.id, cause.kind, cause.count) == (
        "broker-unregistered:5",
        "broker-unregistered",
        len(explained),
    )
    assert cause.rules == ("PAR004", "PAR005", "PAR007", "REP008")
    assert "broker 5 is not registered" in cause.title


def test_offline_log_dir_explains_its_partitions(incidents):
    jbod = _by_cause(incidents, "logistics-jbod")
    explained = jbod["log-dir-offline:4"]
    assert {rule for rule, _ in explained} >= {"DSK001", "PAR006", "PAR005"}
    offline = [p for p in _rows("logistics-jbod", "partitions") if 4 in (p.get("offline_replicas") or [])]
    par006: dict[str, int] = {}
    for f in incidents.findings:
        if f.cluster == "logistics-jbod" and f.rule == "PAR006":
            assert (f.rule, f.resource_name) in explained
            # One finding per topic; a topic with one offline partition keeps the partition's.
            topic = f.resource_name if f.resource_type == "topic" else f.resource_name.rsplit("-", 1)[0]
            par006[topic] = par006.get(topic, 0) + f.evidence.get("affected_partitions", 1)
    assert offline and par006 == _per_topic(offline)
    assert "broker-unregistered:4" not in jbod  # registered: its disk failed, not the broker


def _jbod_snapshot(directory, *, error):
    """Two brokers, a topic on both; broker 2's /data/b failed when ``error`` is set."""
    manifest = Manifest(
        cluster={
            "id": "c1",
            "name": "disk",
            "environment": "prod",
            "tier": "tier-2",
            "platform": "apache",
            "kafka_version": "3.7.0",
            "metadata_mode": "kraft",
        },
        collected_at="2026-11-22T06:00:00Z",
    )
    offline = [2] if error else []
    tables = {
        "brokers": [
            {
                "broker_id": b,
                "host": f"k{b}",
                "port": 9092,
                "rack": f"r{b}",
                "log_dirs": ["/data/a", "/data/b"],
            }
            for b in (1, 2, 3)
        ],
        "log_dirs": [
            {"broker_id": b, "path": p, "error": error if (b, p) == (2, "/data/b") else None}
            for b in (1, 2, 3)
            for p in ("/data/a", "/data/b")
        ],
        "topics": [{"topic": "t", "partitions": 2, "replication_factor": 3, "is_internal": False}],
        "partitions": [
            {
                "topic": "t",
                "partition": 0,
                "leader": 1,
                "replicas": [1, 2, 3],
                "isr": [1, 3],
                "offline_replicas": offline,
            },
            {
                "topic": "t",
                "partition": 1,
                "leader": 3,
                "replicas": [3, 1, 2],
                "isr": [3, 1, 2],
                "offline_replicas": [],
            },
        ],
    }
    return write_snapshot(directory, manifest, tables)


def test_offline_log_dir_on_a_built_snapshot(tmp_path):
    with open_engine("duckdb") as engine:
        failed = _audit(engine, [_jbod_snapshot(tmp_path / "failed", error="KAFKA_STORAGE_ERROR")])
        healthy = _audit(engine, [_jbod_snapshot(tmp_path / "healthy", error=None)])
    caused = {(f.rule, f.resource_name): f.cause for f in failed.findings}
    assert caused[("DSK001", "2:/data/b")] == "log-dir-offline:2"
    # t-0 is t's only partition the failed dir explains: its findings stay its own.
    assert caused[("PAR006", "t-0")] == "log-dir-offline:2"
    assert caused[("PAR005", "t-0")] == "log-dir-offline:2"
    assert [c.id for c in failed.causes] == ["log-dir-offline:2"]
    assert healthy.causes == [] and all(f.cause is None for f in healthy.findings)


def test_reports_put_causes_first_and_json_validates(incidents):
    text = text_render.render(incidents)
    assert text.startswith("Fix first: 3 root cause(s) explain ")
    # Most findings first: the failed disk explains 20 (PAR004-PAR006 per topic, DSK001, PAR007),
    # broker 5 12 (REP008, PAR007, PAR004/PAR005 per topic).
    causes = [line for line in text.splitlines()[1:] if line.startswith("  ") and not line.startswith("   ")]
    assert causes[0].startswith("  logistics-jbod: broker 4 has an offline log dir: 20 finding(s)")
    assert causes[1].startswith("  ads-zk-legacy: broker 5 is not registered (down?): 12 finding(s)")
    assert "**Fix first: 3 root cause(s)" in markdown_render.render(incidents)
    doc = json.loads(json_render.render(incidents))
    jsonschema.validate(doc, SCHEMA)
    ids = {(c["cluster"], c["id"]) for c in doc["causes"]}
    assert {(f["cluster"], f["cause"]) for f in doc["findings"] if f["cause"]} == ids
    assert [c["count"] for c in doc["causes"]] == sorted((c["count"] for c in doc["causes"]), reverse=True)


def test_json_report_is_the_document_with_a_finding_per_line(incidents):
    """Each finding is one line of the JSON report (it greps as one); the text parses to the
    same document, whatever a finding holds (a newline, quotes, text like the row marker)."""
    odd = 'two\nlines, "quoted", "kafka-audit-row-0" and \u2028'
    result = dataclasses.replace(
        incidents, findings=[dataclasses.replace(incidents.findings[0], message=odd), *incidents.findings[1:]]
    )
    text = json_render.render(result)
    assert json.loads(text) == json.loads(json.dumps(json_render.document(result)))
    assert json.loads(text)["findings"][0]["message"] == odd
    rows = [line for line in text.split("\n") if line.startswith('    {"rule": ')]
    assert len(rows) == len(result.findings) > 1
    assert [json.loads(line.rstrip(","))["fingerprint"] for line in rows] == [
        f.fingerprint for f in result.findings
    ]


def test_no_causes_no_section():
    with open_engine("duckdb") as engine:
        clean = _audit(engine, [cluster_dir("inventory-prod")])
    assert clean.causes == [] and not text_render.render(clean).startswith("Fix first")


def test_fleet_writes_cause_and_counts_causes(tmp_path, incidents):
    with open_engine("duckdb") as engine:
        result = run_fleet(engine, str(SAMPLE_FLEET), AuditConfig(), out=str(tmp_path), run_date="2026-11-22")
    assert [c.to_json() for c in result.causes] == [c.to_json() for c in incidents.causes]
    assert summary_json(result)["causes"] == [c.to_json() for c in incidents.causes]
    import duckdb

    rows = duckdb.sql(
        f"SELECT cluster_name, cause, count(*) FROM read_parquet('{tmp_path}/**/*.parquet', "
        "hive_partitioning = true) WHERE cause IS NOT NULL GROUP BY ALL"
    ).fetchall()
    assert sorted(rows) == sorted((c.cluster, c.id, c.count) for c in incidents.causes)


# Causes on Spark: tests/test_fleet.py's sample tree test compares every finding's cause on both
# engines (the sample tree holds these incident clusters), in the same engine stage `check` uses.
