"""Generated artefacts stay in step with their sources."""

from __future__ import annotations

import filecmp
import subprocess
import sys

from auditor.rulesdoc import markdown_reference
from tests.conftest import ROOT


def test_rule_reference_is_current():
    committed = (ROOT / "docs" / "rules.md").read_text()
    assert committed == markdown_reference(), (
        "docs/rules.md is stale: run `kafka-audit rules list --format markdown > docs/rules.md`"
    )


def test_sample_fleet_matches_its_generator(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "sample_configs" / "generate.py"), str(tmp_path)], check=True,
                   capture_output=True, timeout=120)
    for sub in ("fleet", "variants"):
        cmp = filecmp.dircmp(ROOT / "sample_configs" / sub, tmp_path / sub)
        stack, diffs = [cmp], []
        while stack:
            c = stack.pop()
            diffs += [f"{c.left}/{n}" for n in c.diff_files + c.left_only + c.right_only]
            stack += c.subdirs.values()
        assert not diffs, f"sample_configs/{sub} is stale: run python sample_configs/generate.py ({diffs[:3]})"
