"""Shared inputs for the renderer tests (sample fleet result, hostile result, Chromium), and
the CLI wiring of the report formats."""

from __future__ import annotations

import html as htmllib
import os
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

from auditor.findings import AuditResult, Finding, fingerprint
from tests.conftest import ROOT, SAMPLE_FLEET, cluster_dir

CHROMIUM = "/usr/bin/chromium"
SCRIPT = "<script>window.__pwned=1</script>"
ATTR = '" onmouseover="window.__pwned=1'
IMG = "<img src=x onerror=window.__pwned=1>"
PAYLOADS = (SCRIPT, ATTR, IMG)


@lru_cache(maxsize=1)
def _sample_fleet() -> AuditResult:
    from auditor.config import AuditConfig
    from auditor.engine import open_engine
    from auditor.engine.runner import run_audit
    from auditor.snapshot.io import discover, open_snapshot

    refs = [open_snapshot(p) for p in discover(SAMPLE_FLEET)]
    with open_engine("duckdb") as eng:
        return run_audit(eng, refs, AuditConfig())


def sample_fleet_result() -> AuditResult:
    """The sample fleet audited on DuckDB in-process (once per test run); a fresh copy."""
    base = _sample_fleet()
    return AuditResult(
        findings=list(base.findings),
        clusters=[dict(c) for c in base.clusters],
        incomplete=[dict(i) for i in base.incomplete],
        engine=base.engine,
        exempted=base.exempted,
        notes=list(base.notes),
        rule_docs=dict(base.rule_docs),
    )


def make_finding(
    rule="REP002",
    name="min-isr-equals-rf",
    severity="error",
    cluster="payments-msk",
    resource_type="topic",
    resource_name="orders",
    message="m",
    evidence=None,
    location=None,
    cluster_id=None,
) -> Finding:
    return Finding(
        rule=rule,
        name=name,
        severity=severity,
        cluster=cluster,
        cluster_id=cluster_id or cluster,
        resource_type=resource_type,
        resource_name=resource_name,
        message=message,
        evidence=evidence or {},
        fingerprint=fingerprint(rule, cluster, resource_type, resource_name),
        location=location,
    )


def hostile_result() -> AuditResult:
    """Every snapshot-controlled string carries a script-injection payload."""
    findings = []
    for i, payload in enumerate(PAYLOADS):
        cluster = f"evil{i}{payload}"
        findings.append(
            make_finding(
                cluster=cluster,
                resource_name=f"topic{payload}",
                message=f"message {payload} | `tick`",
                evidence={"value": payload, payload: [payload], "nested": {"k": payload}},
                location={"file": f"server{payload}.properties", "line": 3},
            )
        )
        findings.append(
            make_finding(
                rule="PAR001",
                name="leaderless-partition",
                severity="critical",
                cluster=cluster,
                resource_type="partition",
                resource_name=f"{payload}-0",
                message=payload,
                evidence={"leader": -1, "note": payload},
            )
        )
        findings.append(
            make_finding(
                rule="XYZ999",
                name=f"made-up{payload}",
                severity="warning",
                cluster=cluster,
                resource_type=f"type{payload}",
                resource_name=payload,
                message=payload,
            )
        )
    clusters = [
        {"id": f"id{i}{p}", "name": f"evil{i}{p}", "environment": p, "platform": p, "kafka_version": p}
        for i, p in enumerate(PAYLOADS)
    ]
    incomplete = [
        {"cluster": f"evil{i}{p}", "source": f"zookeeper{p}", "target": p, "message": p}
        for i, p in enumerate(PAYLOADS)
    ]
    return AuditResult(findings=findings, clusters=clusters, incomplete=incomplete, notes=[f"note {SCRIPT}"])


def chromium_available() -> bool:
    return os.path.exists(CHROMIUM) and os.access(CHROMIUM, os.X_OK)


def run_chromium(url: str, profile: Path, *args: str, timeout: int = 60) -> subprocess.CompletedProcess:
    """Headless Chromium on a local file, no network services, a fresh profile."""
    cmd = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        *args,
        url,
    ]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


# ---------------------------------------------------------------- CLI wiring


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def test_every_report_format_is_wired_into_the_cli():
    from auditor.cli.options import OutputFormat
    from auditor.render import FORMATS, render

    assert (
        {f.value for f in OutputFormat}
        == set(FORMATS)
        >= {"text", "json", "html", "sarif", "junit", "markdown"}
    )
    result = sample_fleet_result()
    for fmt in FORMATS:
        out = render(fmt, result)
        assert "payments-msk" in out, fmt


def test_check_writes_an_html_report(tmp_path):
    out = tmp_path / "report.html"
    p = _cli("check", cluster_dir("payments-msk"), "--format", "html", "-o", out)
    assert p.returncode == 1, p.stderr
    assert p.stdout == ""
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>") and 'id="rule-REP002"' in html
    assert "<title>kafka-audit report: payments-msk</title>" in html
    assert "payments.orders.v1" in html


def text_of(fragment: str) -> str:
    """The visible text of an HTML fragment, whitespace folded."""
    text = " ".join(htmllib.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())
    return re.sub(r" ([,;.:)])", r"\1", text)


def section(page: str, element_id: str) -> str:
    """The element with this id, from its opening tag to its matching closing tag."""
    m = re.search(rf'<(\w+)[^>]*\bid="{re.escape(element_id)}"[^>]*>', page)
    assert m, element_id
    tag, start, depth = m.group(1), m.start(), 0
    for t in re.finditer(rf"<(/?){tag}\b[^>]*>", page[start:]):
        depth += -1 if t.group(1) else 1
        if depth == 0:
            return page[start : start + t.end()]
    raise AssertionError(f"unclosed {element_id}")


def test_fleet_text_cuts_long_messages_with_an_ellipsis():
    from auditor.render.text_render import shorten

    assert shorten("x" * 160) == "x" * 160
    cut = shorten("word " * 60)
    assert len(cut) <= 160 and cut.endswith("…") and not cut.endswith(" …")
