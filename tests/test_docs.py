"""Generated artefacts stay in step with their sources."""

from __future__ import annotations

import filecmp
import subprocess
import sys

from auditor.commands.rules import markdown_reference
from tests.conftest import ROOT


def test_rule_reference_is_current():
    committed = (ROOT / "docs" / "rules.md").read_text()
    assert committed == markdown_reference(), (
        "docs/rules.md is stale: run `kafka-audit rules list --format markdown > docs/rules.md`"
    )


def test_rule_reference_links_every_rules_sources():
    from auditor.registry import load_rules, reference_parts

    sections = markdown_reference().split("\n### ")[1:]
    by_code = {section.split(" ", 1)[0]: section for section in sections}
    for r in load_rules().values():
        assert r.references, r.code
        for ref in r.references:
            title, url = reference_parts(ref)
            assert f"- [{title}]({url})" in by_code[r.code], (r.code, url)


def test_rules_explain_shows_references():
    p = subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", "rules", "explain", "REP002"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    references = p.stdout.split("References:", 1)[1]
    assert "https://kafka.apache.org/39/documentation.html#topicconfigs_min.insync.replicas" in references


def test_sample_fleet_matches_its_generator(tmp_path):
    subprocess.run(
        [sys.executable, str(ROOT / "sample_configs" / "generate.py"), str(tmp_path)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    for sub in ("fleet", "variants"):
        cmp = filecmp.dircmp(ROOT / "sample_configs" / sub, tmp_path / sub)
        stack, diffs = [cmp], []
        while stack:
            c = stack.pop()
            diffs += [f"{c.left}/{n}" for n in c.diff_files + c.left_only + c.right_only]
            stack += c.subdirs.values()
        assert not diffs, (
            f"sample_configs/{sub} is stale: run python sample_configs/generate.py ({diffs[:3]})"
        )


def test_report_schema_keeps_one_layout():
    """docs/report.schema.json is hand-edited; its layout is fixed (json.dumps, indent 2, a final
    newline) so that an edit shows as its own lines, not as a rewrite of the whole file (the
    reformat in e3d6dd1 turned a few added keys into a 300-line diff; issue 38). To restore it:
    python3 -c "import json,sys; p='docs/report.schema.json'; d=json.load(open(p));
    open(p,'w').write(json.dumps(d, indent=2, ensure_ascii=False)+'\\n')"."""
    import json

    text = (ROOT / "docs" / "report.schema.json").read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"
