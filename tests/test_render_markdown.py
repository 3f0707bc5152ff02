"""Markdown pull-request comment: summary table, findings by severity, escaping."""

from __future__ import annotations

import re

from auditor.findings import AuditResult
from auditor.registry import load_rules
from auditor.render.markdown_render import md, render
from tests.test_render_support import make_finding, sample_fleet_result


def table_rows(text: str, header: str) -> list[list[str]]:
    lines = text.splitlines()
    start = lines.index(header)
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def test_sample_fleet_comment():
    result = sample_fleet_result()
    text = render(result)
    failing = {f.cluster for f in result.findings if f.severity in ("error", "critical")}
    assert text.startswith(
        f"### kafka-audit: \u274c **{len(failing)} of 8 clusters failing** (error or worse)"
    )
    summary = {r[0]: r for r in table_rows(text, "| cluster | critical | error | warning | info | status |")}
    assert set(summary) == {f.cluster for f in result.findings}
    pay = sum(1 for f in result.findings if f.cluster == "payments-msk" and f.severity == "error")
    assert summary["payments-msk"][2] == str(pay) and summary["payments-msk"][-1] == "failing"
    # the healthy clusters: infos only (short retention, a recovery in progress: issue 43), not failing
    for healthy in ("inventory-prod", "notifications-msk"):
        assert summary[healthy][1:4] == ["0", "0", "0"] and summary[healthy][-1] == "findings", summary[
            healthy
        ]
    clean = sorted({c["name"] for c in result.clusters} - {f.cluster for f in result.findings})
    if clean:
        assert f"No findings: {', '.join(clean)}." in text
    else:
        assert "No findings:" not in text
    # severity groups, worst first, each rule collapsible with its remediation
    present = [
        s for s in ("critical", "error", "warning", "info") if any(f.severity == s for f in result.findings)
    ]
    heads = re.findall(r"^#### \S+ (\w+) \(\d+\)$", text, re.M)
    assert heads == present
    block = text[text.index("<details><summary><b>REP002</b>") :]
    block = block[: block.index("</details>")]
    assert "payments-msk | topic payments.orders.v1 | min.insync.replicas=3" in block
    assert " ".join(load_rules()["REP002"].remediation.split()) in block
    assert len(text) < 65536


def test_values_cannot_break_the_table_or_inject_markup():
    assert md("a|b`c") == "a\\|b\\`c"
    assert md("<img src=x onerror=alert(1)>") == "&lt;img src=x onerror=alert(1)&gt;"
    assert md("__consumer_offsets\nline2") == "\\_\\_consumer\\_offsets line2"
    finding = make_finding(cluster="pay|ments", resource_name="or|ders`v1`", message="x | y `z` <b>bold</b>")
    text = render(AuditResult(findings=[finding], clusters=[{"id": "p", "name": "pay|ments"}], incomplete=[]))
    rows = table_rows(text, "| cluster | resource | message |")
    assert rows == [["pay\\|ments", "topic or\\|ders\\`v1\\`", "x \\| y \\`z\\` &lt;b&gt;bold&lt;/b&gt;"]]
    assert "<b>bold" not in text


def test_row_limit_size_limit_and_incomplete():
    findings = [make_finding(resource_name=f"topic-{i:05d}", message="m" * 200) for i in range(2000)]
    result = AuditResult(
        findings=findings,
        clusters=[{"id": "p", "name": "payments-msk"}],
        incomplete=[
            {"cluster": "payments-msk", "source": "metrics", "target": "http://x", "message": "refused"}
        ],
    )
    text = render(result, max_rows=5)
    assert "\u26a0\ufe0f **Incomplete audit**" in text.splitlines()[0]
    assert "> - payments-msk: source metrics http://x failed: refused" in text
    assert len(table_rows(text, "| cluster | resource | message |")) == 5
    assert "_1995 more not listed._" in text
    small = render(result, max_rows=1000, max_chars=5000)
    assert len(small) < 8000 and "comment is at its size limit" in small


def test_clean_comment():
    text = render(AuditResult(findings=[], clusters=[{"id": "a", "name": "a"}], incomplete=[]))
    assert text.splitlines()[0] == "### kafka-audit: \u2705 **clean**: no findings in 1 cluster"


def test_root_causes_are_capped_like_the_rows():
    """A fleet of many failed brokers: the first causes (most findings first), then a count."""
    from auditor.causes import describe

    findings = [make_finding(resource_name=f"t{i}") for i in range(30)]
    causes = [describe("payments-msk", f"broker-unregistered:{i}", 30 - i, ["REP008"]) for i in range(30)]
    result = AuditResult(
        findings=findings, clusters=[{"id": "p", "name": "payments-msk"}], incomplete=[], causes=causes
    )
    text = render(result, max_rows=5)
    listed = [line for line in text.splitlines() if line.startswith("- payments-msk: **broker ")]
    assert [line.split("**")[1] for line in listed] == [
        f"broker {i} is not registered (down?)" for i in range(5)
    ]
    assert "- and 25 more root cause(s) (the JSON report lists all)" in text
