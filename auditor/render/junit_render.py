"""JUnit XML for CI test-report views (GitLab, Jenkins, GitHub test reporters).

One ``<testsuite>`` per cluster, one ``<testcase>`` per rule in it (``classname`` the
cluster, ``name`` "CODE rule-name"). A rule that fired has a ``<failure>`` whose text
lists its findings (at most ``max_rows``, default 1000, then a count of the rest); a rule
that did not fire passes. A cluster whose audit is incomplete gets an extra
``audit-complete`` testcase with an ``<error>`` per failed source, so it is never green.

Which rules were run is not part of an AuditResult: by default the test cases are every
rule of scope ``cluster`` the result documents (``rule_docs``: every registered one) plus
any rule a finding names; pass ``rules=[codes]``
to give the exact list (for example the rules a config selected).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections import defaultdict

from auditor.findings import SEVERITY_RANK, AuditResult, Finding

DEFAULT_MAX_ROWS = 1000
# Characters XML 1.0 cannot carry, even escaped.
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def clean(text) -> str:
    return _INVALID_XML.sub("\ufffd", "" if text is None else str(text))


def _finding_line(f: Finding) -> str:
    where = ""
    if f.location and f.location.get("file"):
        where = f" ({f.location['file']}{':' + str(f.location['line']) if f.location.get('line') else ''})"
    line = f"[{f.severity}] {f.resource_type} {f.resource_name}{where}: {f.message}"
    if f.evidence:
        line += "\n    evidence: " + json.dumps(f.evidence, sort_keys=True, ensure_ascii=False, default=str)
    return line


def render(result: AuditResult, *, rules=None, max_rows: int = DEFAULT_MAX_ROWS, **_options) -> str:
    docs = {code: r for code, r in result.rule_docs.items() if r.scope == "cluster"}
    names = {code: r.name for code, r in docs.items()}
    for f in result.findings:
        names.setdefault(f.rule, f.name)
    codes = sorted(set(rules) if rules is not None else set(names) | {f.rule for f in result.findings})
    for code in codes:
        names.setdefault(code, code)

    by_cluster: dict[str, dict[str, list[Finding]]] = defaultdict(lambda: defaultdict(list))
    for f in result.findings:
        by_cluster[f.cluster][f.rule].append(f)
    incomplete: dict[str, list[dict]] = defaultdict(list)
    for item in result.incomplete:
        incomplete[str(item.get("cluster"))].append(item)

    clusters = [str(c.get("name") or c.get("id")) for c in result.clusters]
    for name in list(by_cluster) + list(incomplete):
        if name not in clusters:
            clusters.append(name)

    root = ET.Element("testsuites", name="kafka-audit")
    total_tests = total_failures = total_errors = 0
    meta = {str(c.get("name") or c.get("id")): c for c in result.clusters}
    for cluster in clusters:
        fired = by_cluster.get(cluster, {})
        suite = ET.SubElement(root, "testsuite", name=clean(cluster))
        props = ET.SubElement(suite, "properties")
        for key, value in sorted(meta.get(cluster, {}).items()):
            if value is not None:
                ET.SubElement(props, "property", name=clean(key), value=clean(value))
        ET.SubElement(props, "property", name="engine", value=clean(result.engine))
        tests = failures = errors = 0
        suite_codes = codes + sorted(set(fired) - set(codes))
        for code in suite_codes:
            tests += 1
            case = ET.SubElement(
                suite, "testcase", classname=clean(cluster), name=clean(f"{code} {names.get(code, code)}")
            )
            items = fired.get(code)
            if not items:
                continue
            failures += 1
            worst = max(items, key=lambda f: SEVERITY_RANK[f.severity]).severity
            shown = items[:max_rows]
            lines = [_finding_line(f) for f in shown]
            if len(items) > len(shown):
                lines.append(f"... and {len(items) - len(shown)} more finding(s)")
            first = items[0]
            summary = f"{len(items)} finding(s), worst {worst}: {first.resource_type} {first.resource_name}: {first.message}"
            failure = ET.SubElement(case, "failure", message=clean(summary), type=clean(worst))
            failure.text = clean("\n".join(lines))
        if cluster in incomplete:
            tests += 1
            errors += 1
            case = ET.SubElement(suite, "testcase", classname=clean(cluster), name="audit-complete")
            for item in incomplete[cluster]:
                target = f" {item['target']}" if item.get("target") else ""
                msg = f"source {item.get('source')}{target} failed: {item.get('message')}; the audit is incomplete"
                err = ET.SubElement(case, "error", message=clean(msg), type="incomplete")
                err.text = clean(msg)
        suite.set("tests", str(tests))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
        suite.set("skipped", "0")
        total_tests += tests
        total_failures += failures
        total_errors += errors
    root.set("tests", str(total_tests))
    root.set("failures", str(total_failures))
    root.set("errors", str(total_errors))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
