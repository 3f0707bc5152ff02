"""Baselines beyond lint (issue 22, item 7): one format for lint, check and fleet, matched and
stale entries reported, a baseline of another cluster said loudly, lint's earlier files read."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from auditor import baseline
from auditor.errors import UsageError
from auditor.findings import fingerprint
from tests.conftest import ROOT, SAMPLE_FLEET, cluster_dir

CHANGE_TOPICS = ROOT / "sample_configs" / "change-review" / "topics"


def run(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )


def test_check_baseline_round_trip_with_stale_entries(tmp_path):
    base = tmp_path / "b.json"
    p = run("check", cluster_dir("payments-msk"), "--write-baseline", base)
    assert p.returncode == 0 and "baseline of 5 finding(s) written" in p.stderr, p.stderr
    doc = json.loads(base.read_text())
    assert doc["version"] == 1 and doc["tool"] == "kafka-auditor"
    entry = doc["findings"][0]
    assert set(entry) == {"fingerprint", "rule", "cluster", "resource_type", "resource_name"}
    assert entry["fingerprint"] == fingerprint(
        entry["rule"], entry["cluster"], entry["resource_type"], entry["resource_name"]
    )
    gone = {
        "fingerprint": fingerprint("REP002", "payments-msk", "topic", "gone"),
        "rule": "REP002",
        "cluster": "payments-msk",
        "resource_type": "topic",
        "resource_name": "gone",
    }
    base.write_text(json.dumps({**doc, "findings": doc["findings"] + [gone]}))
    p = run("check", cluster_dir("payments-msk"), "--baseline", base)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "note: 5 baselined finding(s) matched, 1 stale (in the baseline, no longer found)" in p.stdout
    p = run("check", cluster_dir("payments-msk"), "--baseline", base, "--format", "json")
    report = json.loads(p.stdout)
    assert report["findings"] == [] and report["baseline"]["matched"] == 5
    assert report["baseline"]["stale"] == [gone]
    assert "5 baselined finding(s) matched, 1 stale" in p.stderr  # JSON has no notes: stderr says it


def test_check_on_more_clusters_fails_only_on_new_findings(tmp_path):
    base = tmp_path / "b.json"
    run("check", cluster_dir("payments-msk"), "--write-baseline", base)
    p = run("check", SAMPLE_FLEET, "--baseline", base, "--format", "json")
    report = json.loads(p.stdout)
    assert p.returncode == 1 and report["baseline"]["matched"] == 5 and report["baseline"]["stale"] == []
    assert report["findings"] and "payments-msk" not in {f["cluster"] for f in report["findings"]}


def test_lint_baseline_of_against_run_says_it_matched_nothing(tmp_path):
    base = tmp_path / "b.json"
    p = run("lint", CHANGE_TOPICS, "--against", cluster_dir("payments-msk"), "--write-baseline", base)
    assert p.returncode == 0, p.stderr
    assert {e["cluster"] for e in json.loads(base.read_text())["findings"]} == {"payments-msk"}
    p = run("lint", CHANGE_TOPICS, "--baseline", base)
    assert p.returncode == 1
    assert (
        f"warning: {base}: the baseline matched nothing: it was written for cluster payments-msk, "
        "this run audits lint"
    ) in p.stdout
    p = run("lint", CHANGE_TOPICS, "--against", cluster_dir("payments-msk"), "--baseline", base)
    assert p.returncode == 0 and "matched nothing" not in p.stdout + p.stderr


def test_lint_reads_its_earlier_baseline_format(tmp_path):
    current = tmp_path / "now.json"
    run("lint", CHANGE_TOPICS, "--write-baseline", current)
    entries = json.loads(current.read_text())["findings"]
    legacy = tmp_path / "legacy.json"
    legacy.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "tool": "kafka-auditor",
                "kind": "lint-baseline",
                "findings": [
                    {
                        "fingerprint": e["fingerprint"],
                        "rule": e["rule"],
                        "resource": f"{e['resource_type']}:{e['resource_name']}",
                        "file": "topics.yaml",
                    }
                    for e in entries
                ],
            }
        )
    )
    p = run("lint", CHANGE_TOPICS, "--baseline", legacy)
    assert p.returncode == 0, p.stdout
    assert f"{len(entries)} baselined finding(s) matched, 0 stale" in p.stdout
    read = baseline.read(legacy)
    assert all(e.cluster is None and e.resource_type for e in read.entries.values())
    # An earlier-format entry of another cluster is recognised from its fingerprint.
    assert read.outcome(set(), {"other"}).foreign and read.outcome(set(), {"lint"}).foreign is None


def test_bad_baselines_are_one_line_usage_errors(tmp_path):
    for text in ('{"findings": [{"rule": "REP002"}]}', '{"findings": 3}', "[1]"):
        path = tmp_path / "b.json"
        path.write_text(text)
        with pytest.raises(UsageError, match=str(path)):
            baseline.read(path)


def test_fleet_baseline_counts_matched_and_stale_and_leaves_the_rest(tmp_path):
    base, out = tmp_path / "b.json", tmp_path / "findings"
    # the series that fire on most sample clusters: the counting is what is proven, not the catalogue
    common = ("fleet", SAMPLE_FLEET, "--engine", "duckdb", "--run-date", "2026-11-22", "--select", "REP,PAR")
    p = run(*common, "--write-baseline", base)
    assert p.returncode == 0, p.stderr
    written = json.loads(base.read_text())["findings"]
    full = json.loads(run(*common, "--format", "json").stdout)
    assert len(written) == full["totals"]["total"] > 0
    kept = [e for e in written if e["cluster"] != "payments-msk"]
    gone = {
        "fingerprint": "0" * 32,
        "rule": "REP002",
        "cluster": "x",
        "resource_type": "topic",
        "resource_name": "y",
    }
    base.write_text(json.dumps({"version": 1, "tool": "kafka-auditor", "findings": kept + [gone]}))
    p = run(*common, "--baseline", base, "--out", out, "--format", "json")
    summary = json.loads(p.stdout)
    assert summary["baseline"]["matched"] == len(kept) and summary["baseline"]["stale"] == [gone]
    assert summary["totals"]["total"] == len(written) - len(kept)
    assert {c["name"] for c in summary["clusters"] if sum(c["counts"].values())} == {"payments-msk"}
    assert json.loads((out / "run_date=2026-11-22" / "_summary.json").read_text())["baseline"][
        "matched"
    ] == len(kept)
    text = run(*common, "--baseline", base).stdout
    assert (
        f"note: {len(kept)} baselined finding(s) matched, 1 stale (in the baseline, no longer found)" in text
    )


@pytest.mark.parametrize("version", [99, 2, 0, "1", 1.0, True, None])
def test_a_baseline_of_an_unknown_version_is_refused(tmp_path, version):
    """Issue 37: {"version": 99} was read as version 1."""
    from auditor.baseline import read
    from auditor.errors import UsageError

    f = tmp_path / "b.json"
    f.write_text(json.dumps({"version": version, "tool": "kafka-auditor", "findings": []}))
    with pytest.raises(
        UsageError, match=rf"^{f}: baseline version .* is not supported \(this tool reads 1\)$"
    ):
        read(f)
    f.write_text(json.dumps({"schema_version": version, "kind": "lint-baseline", "findings": []}))
    with pytest.raises(UsageError, match="baseline schema_version .* is not supported"):
        read(f)


# -- issue 38, item 4: an entry matches the finding it was written from; the counts agree ------------

SCRATCH = """\
- name: shared.scratch
  partitions: 3
  replication_factor: 1
"""


def test_issue_38_a_lint_entry_matches_its_own_file_only_and_the_counts_agree(tmp_path):
    a, b = tmp_path / "team-a", tmp_path / "team-b"
    a.mkdir(), b.mkdir()
    (a / "topics.yaml").write_text(SCRATCH)
    (b / "topics.yaml").write_text(SCRATCH)  # the same topic name, another team's file
    base = tmp_path / "bl.json"
    p = run("lint", a, "--write-baseline", base)
    assert p.returncode == 0, p.stderr
    entries = json.loads(base.read_text())["findings"]
    written = int(p.stderr.split("baseline of ")[1].split()[0])
    assert (
        written == len(entries) > 0 and f"{base}: baseline of {len(entries)} finding(s) written" in p.stderr
    )
    assert {e["file"] for e in entries} == {str(a / "topics.yaml")}
    # team-b's file is not silenced by team-a's entry: its findings are reported, team-a's are not
    p = run("lint", a, b, "--baseline", base, "--format", "json")
    report = json.loads(p.stdout)
    files = {f["location"]["file"] for f in report["findings"]}
    assert files == {str(b / "topics.yaml")} and report["baseline"]["matched"] == len(entries)
    assert report["baseline"]["stale"] == [] and len(report["findings"]) == len(entries)
    # both files baselined: one entry per finding, the counts agree
    p = run("lint", a, b, "--write-baseline", base)
    both = json.loads(base.read_text())["findings"]
    assert len(both) == 2 * len(entries) and f"baseline of {len(both)} finding(s) written" in p.stderr
    assert run("lint", a, b, "--baseline", base).returncode == 0


def test_issue_38_written_line_says_why_entries_are_fewer_than_findings():
    f = baseline.Entry("f" * 32, "REP003", "lint", "topic", "t", "x.yaml")
    assert baseline.unique([f, f]) == [f]
    assert baseline.written_line("bl.json", 2, 1) == (
        "bl.json: baseline of 1 entries written for 2 finding(s): 1 repeat an entry's rule, "
        "resource and file at another line"
    )
    assert baseline.written_line("bl.json", 3, 3) == "bl.json: baseline of 3 finding(s) written"


def test_issue_38_entries_without_a_file_match_any_file_and_check_entries_have_none(tmp_path):
    fp = fingerprint("REP003", "lint", "topic", "shared.scratch")
    path = tmp_path / "any.json"
    path.write_text(json.dumps({"version": 1, "findings": [{"fingerprint": fp, "rule": "REP003"}]}))
    read = baseline.read(path)
    assert list(read.entries) == [(fp, None)] and read.fingerprints() == [fp]
    base = tmp_path / "check.json"
    run("check", cluster_dir("payments-msk"), "--write-baseline", base)
    assert all("file" not in e for e in json.loads(base.read_text())["findings"])


def test_issue_38_a_finding_baselined_now_but_found_before_is_not_resolved(tmp_path):
    base, out = tmp_path / "b.json", tmp_path / "findings"
    common = ("fleet", SAMPLE_FLEET, "--engine", "duckdb", "--select", "REP,PAR", "--out", out)
    week1 = run(*common, "--run-date", "2026-11-15", "--format", "json")
    assert week1.returncode == 1, week1.stderr
    p = run(*common, "--run-date", "2026-11-22", "--write-baseline", base)
    assert p.returncode == 0, p.stderr
    entries = json.loads(base.read_text())["findings"]
    kept = [e for e in entries if e["cluster"] == "ads-zk-legacy"]  # accepted from now on
    base.write_text(json.dumps({"version": 1, "findings": kept}))
    week2 = run(
        *common, "--run-date", "2026-11-22", "--previous", out, "--baseline", base, "--format", "json"
    )
    doc = json.loads(week2.stdout)
    # nothing was fixed between the weeks: the baselined findings are still there, only not counted
    assert doc["baseline"]["matched"] == len(kept) > 0
    assert doc["diff"]["resolved"] == 0, doc["diff"]
    assert doc["diff"]["persisting"] == len(entries) - len(kept) and doc["diff"]["new"] == 0
