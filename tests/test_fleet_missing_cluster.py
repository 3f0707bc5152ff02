"""FLT004 end to end (issue 17): a cluster audited in last week's run and missing from this
week's root is reported by the fleet job, from the previous run's _summary.json."""

from __future__ import annotations

import json
import shutil

import pyarrow.parquet as pq
import pytest

from tests.conftest import SAMPLE_FLEET
from tests.test_fleet import _cli, _weekly

GONE = "search-ingest"


def _flt004(run_dir) -> list[dict]:
    rows = []
    for file in sorted(run_dir.rglob("*.parquet")):
        rows += [r for r in pq.read_table(file).to_pylist() if r["rule"] == "FLT004"]
    return rows


@pytest.mark.slow
def test_a_cluster_missing_since_the_previous_run_is_reported_by_name(tmp_path):
    fleet, out = tmp_path / "fleet", tmp_path / "findings"
    shutil.copytree(SAMPLE_FLEET, fleet)
    # FLT004 and a rule that fires on most clusters: what is proven here is the fleet job's
    # memory of its clusters, not the catalogue (test_fleet.py runs that on both engines)
    rules = ("--select", "FLT004,REP002")

    week1 = _cli("fleet", fleet, *rules, "--engine", "duckdb", "--out", out, "--run-date", "2026-11-16")
    assert week1.returncode == 1, week1.stderr
    assert _flt004(out / "run_date=2026-11-16") == []  # nothing to compare with: silent
    summary = json.loads((out / "run_date=2026-11-16" / "_summary.json").read_text())
    assert GONE in {c["name"] for c in summary["clusters"]}
    audited_week1 = len(summary["clusters"])

    # During the week the collection of search-ingest stops: its snapshot is gone.
    (gone,) = fleet.glob(f"*/cluster={GONE}")
    shutil.rmtree(gone)
    html = tmp_path / "fleet.html"
    week2 = _weekly(fleet, out, "2026-11-23", *rules, "--html", html)
    assert week2.returncode == 1, week2.stderr
    (row,) = _flt004(out / "run_date=2026-11-23")
    assert (row["cluster_name"], row["resource_type"], row["resource_name"], row["status"]) == (
        GONE,
        "cluster",
        GONE,
        "new",
    )
    assert row["message"] == (
        f"cluster {GONE} was audited in the run of 2026-11-16 and has no snapshot in this run: "
        "decommissioned, or the collection forgot it"
    )
    assert json.loads(row["evidence"])["last_audited"] == "2026-11-16"
    # Shown like every fleet finding: the text summary and the HTML report.
    assert "FLT004 cluster-missing-from-run" in week2.stdout
    assert f"{GONE}  cluster {GONE}: cluster {GONE} was audited in the run of 2026-11-16" in week2.stdout
    assert f"{GONE} was audited in the run of 2026-11-16" in html.read_text()
    assert "score None" not in html.read_text()  # a cluster without a snapshot is not graded
    # ... but it is not a cluster of this run: not graded, not counted
    graded = json.loads((out / "run_date=2026-11-23" / "_summary.json").read_text())["clusters"]
    assert GONE not in {c["name"] for c in graded} and len(graded) == audited_week1 - 1
    summary = json.loads((out / "run_date=2026-11-23" / "_summary.json").read_text())
    by_rule = sum(r["findings"] for r in summary["rules"] if r["severity"] == "warning")
    assert summary["totals"]["warning"] == by_rule  # the FLT004 finding is counted in the totals too

    # Still missing a week later: reported again (persisting), with the date it was last audited.
    week3 = _weekly(fleet, out, "2026-11-30", *rules)
    assert week3.returncode == 1, week3.stderr
    (row,) = _flt004(out / "run_date=2026-11-30")
    assert (row["cluster_name"], row["status"]) == (GONE, "persisting")
    assert json.loads(row["evidence"])["last_audited"] == "2026-11-16"

    # Its collection is fixed: back in the root, no longer reported.
    shutil.copytree(SAMPLE_FLEET / gone.parent.name / gone.name, gone)
    week4 = _weekly(fleet, out, "2026-12-07", *rules)
    assert week4.returncode == 1, week4.stderr
    assert _flt004(out / "run_date=2026-12-07") == []
    assert "FLT004" not in week4.stdout
