"""The HTML report: content, grading, incomplete audits, escaping, size limits."""

from __future__ import annotations

import re
import time
from html.parser import HTMLParser

import pytest

from auditor import grading
from auditor.findings import SEVERITY_RANK, AuditResult, Finding
from auditor.grading import cluster_score, grade
from auditor.registry import load_rules
from auditor.render import html_render
from auditor.render.html_render import doc_html, render
from tests.test_render_support import (
    PAYLOADS,
    hostile_result,
    make_finding,
    sample_fleet_result,
    section,
    text_of,
)


class Tags(HTMLParser):
    """Every element and every event-handler attribute of a page."""

    def __init__(self):
        super().__init__()
        self.names, self.handlers = [], []

    def handle_starttag(self, tag, attrs):
        self.names.append(tag)
        self.handlers.extend((tag, k) for k, _ in attrs if k.lower().startswith("on"))


@pytest.fixture(scope="module")
def fleet_page():
    return render(sample_fleet_result())


def test_headline_counts_and_worst_findings_first(fleet_page):
    head = text_of(section(fleet_page, "headline"))
    assert "Failing." in head and "8 clusters audited" in head
    result = sample_fleet_result()
    failing = {f.cluster for f in result.findings if f.severity in ("error", "critical")}
    assert {"payments-msk", "ads-zk-legacy"} <= failing
    m = re.search(r"\b(\d+) with failures \(error or worse\): ([^;]+);", head)
    assert m and int(m.group(1)) == len(failing), head
    assert set(m.group(2).split(", ")) == failing
    assert f"{len(result.findings)} findings from {len({f.rule for f in result.findings})} rules" in head
    cards = text_of(section(fleet_page, "severity-counts"))
    for sev, n in result.summary().items():
        if sev != "total":
            assert f"{n} {sev}" in cards
    worst = section(fleet_page, "worst")
    ranks = [SEVERITY_RANK[m] for m in re.findall(r'class="badge sev-(\w+)"', worst)]
    assert len(ranks) == 5 and ranks == sorted(ranks, reverse=True) and ranks[0] == SEVERITY_RANK["critical"]
    first = result.findings[0]
    assert first.severity == "critical" and first.resource_name in worst and first.cluster in worst


def test_each_cluster_has_a_grade_and_healthy_ones_are_clean(fleet_page):
    clusters = section(fleet_page, "clusters")
    rows = {
        text_of(m.group(0)).split()[1]: m.group(0)
        for m in re.finditer(r'<tr id="cluster-\d+".*?</tr>', clusters, re.S)
    }
    assert set(rows) == {
        "payments-msk",
        "logistics-jbod",
        "ads-zk-legacy",
        "search-ingest",
        "inventory-prod",
        "notifications-msk",
        "checkout-prod",
        "sandbox-dev",
    }
    result = sample_fleet_result()
    for name, row in rows.items():
        mine = [f for f in result.findings if f.cluster == name]
        hits: dict = {}
        for f in mine:
            sev, n = hits.get(f.rule, (f.severity, 0))
            hits[f.rule] = (sev, n + 1)
        worst = mine[0].severity if mine else None
        expected = grade(cluster_score(hits), worst)
        assert f'class="grade grade-{expected}"' in row, name
    # healthy: grade A, only infos (issue 43's short retentions and recovery), below the threshold
    for healthy in ("inventory-prod", "notifications-msk"):
        assert 'class="grade grade-A"' in rows[healthy] and 'data-status="findings"' in rows[healthy]
        assert "findings below threshold" in rows[healthy]
    assert 'data-status="failing"' in rows["payments-msk"] and "grade-A" not in rows["payments-msk"]


def test_rule_sections_carry_the_rule_docs_and_the_evidence(fleet_page):
    rep = section(fleet_page, "rule-REP002")
    doc = load_rules()["REP002"]
    plain = text_of(rep)
    assert " ".join(doc.remediation.replace("`", "").split()) in plain
    assert " ".join(doc.why.replace("`", "").split()) in plain
    assert "<code>kafka-configs --alter" in rep  # backtick spans become code
    assert "payments.orders.v1" in rep and "payments-msk" in rep
    # evidence is shown as escaped JSON
    assert "&#34;min_insync_replicas&#34;: 3," in rep and "{&#34;" in rep
    # rules are ordered worst first
    assert fleet_page.index('id="rule-PAR001"') < fleet_page.index('id="rule-REP002"')


def test_charts_are_inline_svg_and_the_page_is_self_contained(fleet_page):
    chart = section(fleet_page, "chart-clusters")
    assert "<svg" in chart and 'class="bar sev-error"' in chart and "payments-msk" in chart
    assert "<svg" in section(fleet_page, "chart-severity")
    for external in (r"<link\b", r"\bsrc=", r"@import", r"url\(", r"""href=["']?(https?:)?//"""):
        assert not re.search(external, fleet_page), external
    assert fleet_page.count("<script") == 1  # the small filter script, nothing else
    assert 'id="filter"' in fleet_page


def test_incomplete_audit_is_shown_at_the_top_and_never_green():
    result = AuditResult(
        findings=[],
        clusters=[{"id": "a", "name": "alpha"}, {"id": "b", "name": "beta"}],
        incomplete=[{"cluster": "alpha", "source": "zookeeper", "target": "zk:2181", "message": "timed out"}],
    )
    page = render(result)
    banner = section(page, "incomplete")
    assert page.index('id="incomplete"') < page.index('id="headline"')
    assert "alpha" in text_of(banner) and "timed out" in text_of(banner)
    assert 'class="headline status-incomplete"' in page and "status-clean" not in section(page, "headline")
    rows = section(page, "clusters")
    alpha = re.search(
        r'<tr id="cluster-\d+" class="cluster-row incomplete" data-status="incomplete">.*?</tr>', rows, re.S
    )
    assert alpha and "alpha" in alpha.group(0) and "grade-incomplete" in alpha.group(0)
    assert "grade-A" not in alpha.group(0)
    assert "not a clean bill of health" in page


def test_clean_single_cluster_report():
    page = render(AuditResult(findings=[], clusters=[{"id": "x", "name": "solo"}], incomplete=[]))
    assert "kafka-audit report: solo" in page
    assert 'class="headline status-clean"' in page and 'id="no-findings"' in page
    assert "1 cluster audited" in text_of(section(page, "headline"))


def test_scoring_is_documented_and_monotonic():
    assert cluster_score({}) == 100 and grade(100, None) == "A"
    one_error = cluster_score({"REP002": ("error", 1)})
    assert one_error == 80 and grade(one_error, "error") == "C"  # capped by the error
    many = cluster_score({"REP002": ("error", 1000)})
    assert many == 60  # one rule costs at most twice its weight
    assert grade(cluster_score({"PAR001": ("critical", 1)}), "critical") == "D"
    assert grade(cluster_score({"A": ("critical", 5), "B": ("error", 3)}), "critical") == "F"
    assert grade(95, "info") == "A" and grade(95, "warning") == "B"
    assert grade(100, None, incomplete=True) == "?"
    assert "critical 40" in grading.__doc__ and "auditor/grading.py" in html_render.__doc__


def test_doc_html_escapes_and_marks_code():
    out = str(doc_html("use `a<b>` and <i>\n\n- one\n  more\n- two"))
    assert out == "<p>use <code>a&lt;b&gt;</code> and &lt;i&gt;</p><ul><li>one more</li><li>two</li></ul>"


def test_payloads_are_escaped_in_the_markup():
    page = render(hostile_result())
    for payload in PAYLOADS:
        assert payload not in page
    tags = Tags()
    tags.feed(page)
    assert tags.handlers == [] and "img" not in tags.names
    assert tags.names.count("script") == 1
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page
    assert "&#34; onmouseover=&#34;window.__pwned=1" in page


@pytest.mark.slow
def test_a_million_findings_give_a_bounded_page():
    n = 1_000_000
    proto = make_finding()
    clusters = [f"c{i}" for i in range(7)]
    findings = [
        Finding(
            rule=("REP002", "PAR001", "REP003")[i % 3],
            name=("a", "b", "c")[i % 3],
            severity=("error", "critical", "warning")[i % 3],
            cluster=clusters[i % 7],
            cluster_id=clusters[i % 7],
            resource_type="partition",
            resource_name=f"t.{i}",
            message="m",
            evidence=proto.evidence,
            fingerprint=str(i),
        )
        for i in range(n)
    ]
    result = AuditResult(findings=findings, clusters=[{"id": c, "name": c} for c in clusters], incomplete=[])
    started = time.perf_counter()
    page = render(result, max_rows=50)
    elapsed = time.perf_counter() - started
    assert elapsed < 30, elapsed
    assert len(page) < 500_000
    assert page.count('<tr class="f"') == 3 * 50
    rep = section(page, "rule-REP002")
    assert "Showing 50 of 333,334 findings for REP002" in text_of(rep)
    # the 50 rows are shared between the 7 clusters the rule hit
    assert len(re.findall(r'<div class="group"', rep)) == 7
    assert "1,000,000 findings" in text_of(section(page, "headline"))


def test_row_budget_is_shared_fairly():
    share = html_render._share({"a": 1000, "b": 3, "c": 10}, 20)
    assert share == {"a": 9, "b": 3, "c": 8}
    assert html_render._share({"a": 2, "b": 1}, 200) == {"a": 2, "b": 1}


def test_explanations_are_collapsed_and_the_verdict_is_the_first_cell(fleet_page):
    rep = section(fleet_page, "rule-REP002")
    doc = re.search(r'<details class="doc">(.*?)</details>', rep, re.S)
    assert doc, "no collapsible explanation"
    assert "<summary>" in doc.group(1) and "Remediation" in doc.group(1) and "Why" in doc.group(1)
    head, table = rep.index('class="rule-head"'), rep.index('<table class="findings')
    assert head < rep.index("<details") < table  # the headline above, the finding table below, both outside
    assert "payments.orders.v1" not in doc.group(1)
    assert not re.search(r"<details[^>]*\bopen\b", fleet_page)
    for row in re.findall(r'<tr class="f".*?</tr>', fleet_page, re.S):
        assert re.match(r'<tr class="f"[^>]*>\s*<td class="sev verdict"><span class="badge sev-', row), row
    for row in re.findall(r'<tr id="cluster-\d+".*?</tr>', section(fleet_page, "clusters"), re.S):
        assert re.match(r'<tr [^>]*>\s*<td class="verdict"><span class="grade grade-', row), row
    # a check report carries no grade history: no trend column
    assert "<th>trend</th>" not in fleet_page and "first run" not in fleet_page


def _fleet_result(tmp_path, history: dict[str, str | None]):
    """A FleetResult of 2026-11-22 for clusters a and b, with earlier _summary.json files under
    tmp_path: run date -> grade of a (None: a damaged summary)."""
    import json

    from auditor.commands.fleet import FleetResult, grade_history

    for day, grade_of_a in history.items():
        run = tmp_path / f"run_date={day}"
        run.mkdir()
        doc = {
            "run_date": day,
            "clusters": [
                {"id": "a", "name": "alpha", "grade": grade_of_a, "score": 75},
                {"id": "b", "name": "beta", "grade": "<b>X</b>", "score": 1},
            ],
        }
        (run / "_summary.json").write_text("{" if grade_of_a is None else json.dumps(doc))
    clusters = [
        {"id": cid, "name": name, "counts": {}, "score": 100, "grade": "A", "incomplete": False}
        for cid, name in (("a", "alpha"), ("b", "beta"))
    ]
    return FleetResult(
        "2026-11-22",
        "duckdb",
        clusters,
        [],
        [],
        [],
        {"total": 0},
        top_n=20,
        grade_history=grade_history(str(tmp_path), "2026-11-22"),
    )


def test_fleet_page_shows_each_clusters_grades_of_the_last_runs(tmp_path):
    from auditor.commands.fleet import GRADE_HISTORY_RUNS, audit_result

    grades = "FDCBAFDCB"
    days = {f"2026-09-{i + 10:02d}": g for i, g in enumerate(grades)}
    days["2026-10-01"] = None  # damaged: skipped
    days["2026-11-22"] = "F"  # this run's own directory: not history
    result = _fleet_result(tmp_path, days)
    assert [t["grade"] for t in result.grade_history["a"]] == list(grades[-GRADE_HISTORY_RUNS:])
    assert result.grade_history["a"][0]["run_date"] == "2026-09-11" and "b" not in result.grade_history
    page = render(audit_result(result))
    assert "<th>trend</th>" in page
    alpha = re.search(r'<tr id="cluster-\d+".*?alpha.*?</tr>', section(page, "clusters"), re.S).group(0)
    trend = re.search(r'<span class="trend".*?</span></span>', alpha, re.S).group(0)
    assert re.findall(r'class="grade (?:mini )?grade-(\w)"', trend) == [*grades[-GRADE_HISTORY_RUNS:], "A"]
    assert 'title="2026-09-11: score 75"' in trend
    beta = re.search(r'<tr id="cluster-\d+".*?beta.*?</tr>', section(page, "clusters"), re.S).group(0)
    assert "first run" in text_of(beta)  # its earlier grades were not grades


def test_first_fleet_run_says_so(tmp_path):
    from auditor.commands.fleet import audit_result

    page = render(audit_result(_fleet_result(tmp_path, {})))
    assert "<th>trend</th>" in page and text_of(section(page, "clusters")).count("first run") == 2


def test_fix_first_lists_the_root_causes_escaped():
    from auditor.causes import Cause

    causes = [
        Cause(
            f"broker-unregistered:{p}",
            "payments-msk",
            "broker-unregistered",
            f"broker {p} is not registered",
            "bring it back",
            40 - i,
            ("PAR004", "REP008"),
        )
        for i, p in enumerate(PAYLOADS)
    ]
    result = AuditResult(
        findings=[make_finding()],
        clusters=[{"id": "payments-msk", "name": "payments-msk"}],
        incomplete=[],
        causes=causes,
    )
    page = render(result)
    box = section(page, "fix-first")
    assert page.index('id="fix-first"') < page.index('id="findings"')
    items = re.findall(r"<li>.*?</li>", box, re.S)
    assert len(items) == 3 and "explains 40 findings ( PAR004, REP008)" in text_of(items[0])
    for payload in PAYLOADS:
        assert payload not in page and f"broker {payload} is not registered" in text_of(box)
    assert 'id="fix-first"' not in render(
        AuditResult(findings=[], clusters=[{"id": "x", "name": "x"}], incomplete=[], causes=[])
    )
