"""Kafka's and ruff's conventions on the command line (issue 22, item 2): --bootstrap-server,
the report format from -o's extension, --format github, --statistics, --select/--ignore,
colour (terminals only, NO_COLOR, FORCE_COLOR) and shell completion. Real processes."""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

from auditor.findings import AuditResult, Finding, fingerprint
from auditor.render.github_render import render as render_github
from tests.conftest import ROOT, SAMPLE_FLEET, cluster_dir

CHANGE_TOPICS = ROOT / "sample_configs" / "change-review" / "topics"
ESC = "\x1b["


def run(*args, env=None, cwd=None):
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env={**environ, **(env or {})},
        timeout=300,
    )


def run_on_terminal(*args, env=None) -> str:
    """stdout of the command when it is a terminal (a pseudo-terminal)."""
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    main, child = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "auditor.cli.main", *map(str, args)],
        stdout=child,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        env={**environ, **(env or {})},
    )
    os.close(child)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=300)
    os.close(main)
    return b"".join(chunks).decode("utf-8", "replace")


# --- --bootstrap-server, Kafka's spelling ----------------------------------------------------


def test_bootstrap_server_is_accepted_where_bootstrap_servers_is():
    # Both spellings reach the same check (a source and a snapshot directory are refused together).
    for command in ("check", "preflight"):
        for spelling in ("--bootstrap-server", "--bootstrap-servers"):
            p = run(command, cluster_dir("payments-msk"), spelling, "localhost:9092")
            assert p.returncode == 2 and "not both" in p.stderr, (command, spelling, p.stderr)
    p = run("collect", "--bootstrap-server", "localhost:9092")
    assert p.returncode == 2 and "give -o SNAPSHOT_DIR" in p.stderr


# --- the format of -o FILE --------------------------------------------------------------------


def test_output_named_like_a_format_is_a_usage_error(tmp_path):
    for command, target in (
        ("check", cluster_dir("payments-msk")),
        ("lint", CHANGE_TOPICS),
        ("preflight", cluster_dir("payments-msk")),
    ):
        p = run(command, target, "-o", "json", cwd=tmp_path)
        assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--format json" in p.stderr, p.stderr
        assert not (tmp_path / "json").exists()


def test_format_is_inferred_from_the_extension(tmp_path):
    p = run("check", cluster_dir("payments-msk"), "-o", tmp_path / "r.sarif")
    assert p.returncode == 1, p.stderr
    assert json.loads((tmp_path / "r.sarif").read_text())["version"] == "2.1.0"
    p = run("lint", CHANGE_TOPICS, "-o", tmp_path / "r.md")
    assert (tmp_path / "r.md").read_text().startswith("#")
    p = run("lint", CHANGE_TOPICS, "-o", tmp_path / "r.xml")
    assert (tmp_path / "r.xml").read_text().startswith("<?xml")
    p = run("preflight", cluster_dir("payments-msk"), "-o", tmp_path / "p.json")
    assert "safe_to_roll" in json.dumps(json.loads((tmp_path / "p.json").read_text())), p.stderr
    p = run("check", cluster_dir("payments-msk"), "-o", tmp_path / "r.out")  # an unknown extension: text
    assert "cluster(s) audited" in (tmp_path / "r.out").read_text()


def test_a_format_contradicting_the_extension_is_a_usage_error(tmp_path):
    p = run("check", cluster_dir("payments-msk"), "-f", "json", "-o", tmp_path / "r.sarif")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "contradicts" in p.stderr
    p = run("preflight", cluster_dir("payments-msk"), "-o", tmp_path / "p.sarif")
    assert p.returncode == 2 and "not available" in p.stderr
    assert not list(tmp_path.iterdir())


# --- --format github ---------------------------------------------------------------------------


def _finding(severity, resource_name, message, location=None):
    return Finding(
        rule="REP002",
        name="min-isr-equals-rf",
        severity=severity,
        cluster="c1",
        cluster_id="c1",
        resource_type="topic",
        resource_name=resource_name,
        message=message,
        fingerprint=fingerprint("REP002", "c1", "topic", resource_name),
        location=location,
    )


def test_github_annotations_follow_the_documented_syntax():
    result = AuditResult(
        findings=[
            _finding("critical", "t", "bad", {"file": "topics.yaml", "line": 7}),
            _finding("warning", "u", "meh"),
            _finding("info", "v", "fyi", {"file": "dir/a,b:c%.yaml", "line": 2}),
        ],
        clusters=[{"id": "c1", "name": "c1"}],
        incomplete=[],
    )
    lines = render_github(result).splitlines()
    # sorted by file and line, the findings in no file last; each names its topic (issue 38)
    assert lines == [
        "::notice file=dir/a%2Cb%3Ac%25.yaml,line=2,title=REP002 min-isr-equals-rf::topic v: fyi",
        "::error file=topics.yaml,line=7,title=REP002 min-isr-equals-rf::topic t: bad",
        "::warning title=REP002 min-isr-equals-rf::c1: topic u: meh",
    ]


def test_github_annotations_escape_hostile_topic_names():
    hostile = "x%\r\n::error file=evil::pwned,\x1b[31m"
    result = AuditResult(
        findings=[
            _finding("error", hostile, f"topic {hostile} is bad", {"file": f"{hostile}.yaml", "line": 1})
        ],
        clusters=[{"id": "c1", "name": "c1"}],
        incomplete=[],
    )
    out = render_github(result)
    assert out.count("\n") == 1 and out.startswith("::error ")  # one command: no name starts another
    assert "\x1b" not in out and "\r" not in out
    props, _, message = out.rstrip("\n")[2:].partition("::")
    assert (
        props == "error file=x%25%0D%0A%3A%3Aerror file=evil%3A%3Apwned%2C\\x1b[31m.yaml,line=1,"
        "title=REP002 min-isr-equals-rf"
    )
    hostile_shown = "x%25%0D%0A::error file=evil::pwned,\\x1b[31m"
    assert message == f"topic {hostile_shown}: topic {hostile_shown} is bad"


def test_lint_and_check_write_github_annotations():
    p = run("lint", CHANGE_TOPICS, "--format", "github")
    lines = [x for x in p.stdout.splitlines() if "title=kafka-audit::" not in x]  # the run's notes
    assert p.returncode == 1 and lines, p.stderr
    assert all(
        re.match(r"::(error|warning|notice) file=[^,]+,line=\d+,title=[A-Z]{3}\d{3} ", x) for x in lines
    ), lines
    p = run("check", cluster_dir("payments-msk"), "--format", "github")
    assert p.stdout.startswith("::error title=REP002 min-isr-equals-rf::payments-msk: ")
    assert "file=" not in p.stdout


def test_lint_warnings_are_github_annotations_too(tmp_path):
    """A warning about the inputs (a file with nothing recognised) is an annotation in the
    GitHub log, not a plain stderr line nobody sees."""
    (tmp_path / "values.yaml").write_text("replicaCount: 3\n")
    p = run("lint", CHANGE_TOPICS, tmp_path / "values.yaml", "--format", "github")
    notes = [x for x in p.stdout.splitlines() if "title=kafka-audit::" in x and "values.yaml" in x]
    assert len(notes) == 1, p.stdout
    # a warning about one file carries file= (issue 38): GitHub shows it on that file
    file = str(tmp_path / "values.yaml").replace(":", "%3A").replace(",", "%2C")
    assert notes[0].startswith(f"::warning file={file},title=kafka-audit::"), notes[0]
    assert "values.yaml" not in p.stderr, p.stderr
    assert p.returncode == 1  # the findings of the topic files still fail the run


def test_github_annotations_are_sorted_and_name_their_resource():
    p = run("lint", CHANGE_TOPICS, "--format", "github")
    located = [x for x in p.stdout.splitlines() if " file=" in x and "title=kafka-audit" not in x]
    keys = [(re.search(r"file=(?P<file>[^,]+),line=(?P<line>\d+)", x).groupdict()) for x in located]
    pairs = [(k["file"], int(k["line"])) for k in keys]
    assert pairs == sorted(pairs) and len(pairs) > 1
    assert all(re.search(r"::(topic|broker|config) [^:]+: ", x) for x in located), located
    # an inherited default is one finding about the setting, naming the topics that inherit it
    assert any("::config min.insync.replicas: " in x and "(search.ranking-features)" in x for x in located)
    p = run("check", SAMPLE_FLEET, "--format", "github")
    found = [x for x in p.stdout.splitlines() if "title=kafka-audit" not in x]
    rank = {"error": 0, "warning": 1, "notice": 2}
    severities = [rank[x[2:].split(" ", 1)[0]] for x in found]
    assert severities == sorted(severities)  # worst first (critical and error are both ::error)
    assert all(re.search(r"::[a-z0-9-]+: (topic|broker|partition|cluster|[a-z_]+) ", x) for x in found), (
        found[:3]
    )


def test_sarif_json_output_name_is_sarif(tmp_path):
    out = tmp_path / "results.sarif.json"
    p = run("check", cluster_dir("payments-msk"), "--format", "sarif", "-o", out)
    assert p.returncode == 1, p.stderr
    assert json.loads(out.read_text())["version"] == "2.1.0"
    out.unlink()
    p = run("check", cluster_dir("payments-msk"), "-o", out)  # inferred from the name too
    assert json.loads(out.read_text())["version"] == "2.1.0"
    p = run("check", cluster_dir("payments-msk"), "--format", "json", "-o", out)
    assert p.returncode == 2 and "contradicts" in p.stderr


# --- --statistics --------------------------------------------------------------------------------


def test_statistics_count_findings_per_rule_most_first():
    p = run("check", SAMPLE_FLEET, "--statistics", "--format", "json")
    rows = json.loads(p.stdout)
    total = json.loads(run("check", SAMPLE_FLEET, "--format", "json").stdout)["summary"]["total"]
    assert sum(r["count"] for r in rows) == total > 0
    assert [r["count"] for r in rows] == sorted((r["count"] for r in rows), reverse=True)
    assert set(rows[0]) == {"code", "name", "severity", "count"}
    text = run("check", SAMPLE_FLEET, "--statistics").stdout.splitlines()
    assert text[0].split()[:2] == [str(rows[0]["count"]), rows[0]["code"]]
    assert text[-1] == f"{total} finding(s), {len(rows)} rule(s)"
    p = run("check", SAMPLE_FLEET, "--statistics", "--format", "sarif")
    assert p.returncode == 2


# --- --select / --ignore ---------------------------------------------------------------------------


def _rules(*args):
    p = run("check", SAMPLE_FLEET, "--format", "json", *args)
    assert p.returncode in (0, 1), p.stderr
    return {f["rule"] for f in json.loads(p.stdout)["findings"]}


def test_select_replaces_and_ignore_extends_the_config_file(tmp_path):
    everything = _rules()
    assert {"REP002", "PAR001"} <= everything
    assert _rules("--select", "REP002,PAR001") == {"REP002", "PAR001"}
    assert _rules("--select", "REP", "--select", "PAR001", "--ignore", "REP002") == (
        {r for r in everything if r.startswith("REP") or r == "PAR001"} - {"REP002"}
    )
    assert _rules("--ignore", "min-isr-equals-rf") == everything - {"REP002"}
    config = tmp_path / "kafka-audit.toml"
    config.write_text('select = ["PAR"]\nignore = ["PAR001"]\n')
    assert _rules("--config", config, "--select", "REP002,PAR001") == {
        "REP002"
    }  # the file's ignore still applies
    p = run("check", SAMPLE_FLEET, "--select", "NOPE999")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "NOPE999" in p.stderr


def test_lint_takes_select_and_ignore():
    p = run("lint", CHANGE_TOPICS, "--select", "CFG002", "--format", "json")
    assert {f["rule"] for f in json.loads(p.stdout)["findings"]} == {"CFG002"}


# --- colour ------------------------------------------------------------------------------------------


def test_no_colour_in_a_pipe():
    p = run("check", cluster_dir("payments-msk"))
    assert "ERR " in p.stdout and ESC not in p.stdout


def test_force_color_colours_a_pipe_unless_no_color():
    assert (
        "\x1b[31mERR \x1b[0m REP002"
        in run("check", cluster_dir("payments-msk"), env={"FORCE_COLOR": "1"}).stdout
    )
    assert (
        ESC not in run("check", cluster_dir("payments-msk"), env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout
    )


def test_never_colour_in_a_file(tmp_path):
    run("check", cluster_dir("payments-msk"), "-o", tmp_path / "r.txt", env={"FORCE_COLOR": "1"})
    text = (tmp_path / "r.txt").read_text()
    assert "REP002" in text and ESC not in text


def test_colour_on_a_terminal_unless_no_color():
    assert "\x1b[33mWARN\x1b[0m" in run_on_terminal("lint", CHANGE_TOPICS)
    plain = run_on_terminal("lint", CHANGE_TOPICS, env={"NO_COLOR": "1"})
    assert "WARN" in plain and ESC not in plain
    assert ESC in run_on_terminal(
        "lint", CHANGE_TOPICS, env={"NO_COLOR": ""}
    )  # empty: not set (no-color.org)


# --- shell completion ----------------------------------------------------------------------------------


def test_show_completion_prints_a_script():
    p = run("--show-completion", "bash")
    assert p.returncode == 0 and "complete -o" in p.stdout and "COMP_WORDS" in p.stdout


def test_fleet_says_it_replaces_a_run_of_the_same_date(tmp_path):
    out = tmp_path / "findings"
    args = (
        "fleet",
        SAMPLE_FLEET,
        "--engine",
        "duckdb",
        "--out",
        out,
        "--run-date",
        "2026-11-22",
        "--select",
        "REP002",
    )
    first = run(*args)
    assert first.returncode == 1 and "replacing" not in first.stderr, first.stderr
    second = run(*args)
    assert f"note: replacing the findings of run_date=2026-11-22 under {out}" in second.stderr
    assert Path(out / "run_date=2026-11-22" / "_summary.json").is_file()


# --- --help (issue 38): readable metavars, every option name whole, the config text kept ---------


def test_help_shows_readable_metavars_and_whole_option_names():
    for command in ("collect", "check", "preflight", "wait", "lint", "fleet"):
        p = run(command, "--help", env={"COLUMNS": "100", "TERM": "dumb"})
        assert p.returncode == 0, p.stderr
        out = p.stdout
        for python_type in ("<bool>", "<str>", "<list[str]>", "<path>", "<float>", "<int>"):
            assert python_type not in out, (command, python_type)
        assert "…" not in out, (command, [x for x in out.splitlines() if "…" in x])
        if command in ("check", "lint"):
            assert "[tool.kafka-audit]" in out, command  # Rich took it for markup and dropped it
            assert "CODES" in out and "FILE" in out
    out = run("check", "--help", env={"COLUMNS": "100", "TERM": "dumb"}).stdout
    assert "--bootstrap-servers " in out and "HOST:PORT" in out
    assert "Also: --bootstrap-server." in out  # Kafka's spelling, named in the help text
    narrow = run("check", "--help", env={"COLUMNS": "80", "TERM": "dumb"}).stdout
    assert "--bootstrap-servers " in narrow and "--boots…" not in narrow
    assert "One of: text, json," in out  # the choices, in the help text
