"""JUnit XML: a testsuite per cluster, a testcase per rule, parsed back with xml.etree."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from auditor.findings import AuditResult
from auditor.registry import load_rules, rule_docs
from auditor.render.junit_render import render
from tests.test_render_support import PAYLOADS, hostile_result, make_finding, sample_fleet_result


def test_sample_fleet_suites_cases_and_failures():
    result = sample_fleet_result()
    root = ET.fromstring(render(result))
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {c["name"] for c in result.clusters}
    cluster_rules = sorted(code for code, r in load_rules().items() if r.scope == "cluster")
    for name, suite in suites.items():
        cases = suite.findall("testcase")
        assert [c.get("name").split()[0] for c in cases] == cluster_rules
        assert all(c.get("classname") == name for c in cases)
        fired = {f.rule for f in result.findings if f.cluster == name}
        failed = {c.get("name").split()[0] for c in cases if c.find("failure") is not None}
        assert failed == fired, name
        assert int(suite.get("tests")) == len(cases) and int(suite.get("failures")) == len(fired)
    assert int(root.get("failures")) == sum(int(s.get("failures")) for s in suites.values())

    case = suites["payments-msk"].find("testcase[@name='REP002 min-isr-equals-rf']")
    failure = case.find("failure")
    n = sum(1 for f in result.findings if f.cluster == "payments-msk" and f.rule == "REP002")
    assert failure.get("type") == "error" and failure.get("message").startswith(
        f"{n} finding(s), worst error"
    )
    assert "topic payments.orders.v1: min.insync.replicas=3" in failure.text
    assert '"min_insync_replicas": 3' in failure.text
    healthy = suites["inventory-prod"]  # infos only (issue 43): each fired rule's case fails at info
    assert healthy.get("errors") == "0"
    assert {
        c.find("failure").get("type") for c in healthy.findall("testcase") if c.find("failure") is not None
    } == {"info"}
    props = {p.get("name"): p.get("value") for p in suites["payments-msk"].iter("property")}
    assert props["platform"] == "msk" and props["engine"] == "duckdb"


def test_explicit_rules_row_limit_and_incomplete_clusters():
    findings = [make_finding(resource_name=f"t{i}", message=f"msg {i}") for i in range(5)]
    result = AuditResult(
        findings=findings,
        clusters=[{"id": "p", "name": "payments-msk"}, {"id": "q", "name": "quiet"}],
        incomplete=[{"cluster": "quiet", "source": "admin", "target": "b:9092", "message": "auth failed"}],
        rule_docs=rule_docs(load_rules()[c] for c in ("REP002", "REP003")),
    )
    root = ET.fromstring(render(result, rules=["REP002", "REP003"], max_rows=2))
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    pay = suites["payments-msk"]
    assert [c.get("name") for c in pay.findall("testcase")] == [
        "REP002 min-isr-equals-rf",
        "REP003 single-replica",
    ]
    text = pay.find("testcase/failure").text
    assert "topic t0: msg 0" in text and "topic t1: msg 1" in text and "t2" not in text
    assert "... and 3 more finding(s)" in text
    quiet = suites["quiet"]
    assert quiet.get("errors") == "1" and quiet.get("failures") == "0"
    err = quiet.find("testcase[@name='audit-complete']/error")
    assert err.get("type") == "incomplete" and "admin b:9092 failed: auth failed" in err.get("message")
    assert root.get("errors") == "1"


def test_hostile_and_control_characters_round_trip():
    result = hostile_result()
    result.findings.append(make_finding(cluster="ctl", resource_name="bad\x00name\x1b", message="bell\x07"))
    xml = render(result)
    root = ET.fromstring(xml)  # parses: control characters were replaced
    names = {s.get("name") for s in root.findall("testsuite")}
    assert {f"evil{i}{p}" for i, p in enumerate(PAYLOADS)} <= names
    assert "<script>" not in xml
    texts = "".join(f.text for f in root.iter("failure"))
    assert "topic<script>window.__pwned=1</script>" in texts and "bad\ufffdname\ufffd" in texts
