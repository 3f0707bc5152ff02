"""The compiled-plan cache: a warm run compiles nothing and gives the same findings; the
bundled plans make the first run warm and are exactly what this code compiles."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from auditor.config import AuditConfig
from auditor.engine import plans
from auditor.engine.duckdb_engine import DuckDBEngine
from auditor.engine.runner import run_audit
from auditor.registry import REGISTRY, load_rules
from auditor.snapshot.io import discover, open_snapshot
from tests.conftest import ROOT, SAMPLE_FLEET


@pytest.fixture(autouse=True)
def plan_key(tmp_path_factory, monkeypatch):
    """This test's own cache secret (outside the cache directory), not the user's."""
    path = tmp_path_factory.mktemp("state") / "plan-cache.key"
    monkeypatch.setenv("KAFKA_AUDIT_PLAN_KEY", str(path))
    return path


@pytest.fixture
def no_bundle(monkeypatch):
    """The user's cache directory alone, as on a version without bundled plans."""
    monkeypatch.setenv("KAFKA_AUDIT_PLAN_BUNDLE", "off")


# The cache's mechanics hold per plan: three rules that fire on the sample fleet, with the
# shared transforms they read (DSK002's broker_log_dirs reads two more), prove them at a small
# part of the compile time of the whole catalogue. Six tests compile them cold: rules no root
# cause explains (auditor/causes.py), whose final stage has no joins to compile, take ~1 s
# (REP002, REP007 and PAR001, with the causes' joins, took ~3.5 s).
# The bundle tests use the default configuration, which is what the bundle holds.
MECHANICS = AuditConfig(select=("DSK002", "REP007", "CLI001"))


def _audit(config=None):
    refs = [open_snapshot(p) for p in discover(SAMPLE_FLEET)]
    engine = DuckDBEngine()
    try:
        result = run_audit(engine, refs, config or MECHANICS)
        return result, engine.plan_cache
    finally:
        engine.close()


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """One cold run of MECHANICS without the bundle: its cache directory (entries MAC'd with
    the module's own secret) and its result. Compiling is what costs here (seconds per plan);
    each test starts from a copy instead of compiling the same plans again."""
    work = tmp_path_factory.mktemp("compiled")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KAFKA_AUDIT_PLAN_KEY", str(work / "state" / "plan-cache.key"))
        mp.setenv("KAFKA_AUDIT_PLAN_CACHE", str(work / "plans"))
        mp.setenv("KAFKA_AUDIT_PLAN_BUNDLE", "off")
        result, cache = _audit()
    assert cache.hits == 0 and cache.misses > 0 and result.findings
    return work, result


def _cold_copy(compiled, into, monkeypatch):
    """``into``: a copy of the cold run's cache directory, the module's secret in use. Returns
    the cold run's result."""
    work, result = compiled
    shutil.copytree(work / "plans", into)
    monkeypatch.setenv("KAFKA_AUDIT_PLAN_KEY", str(work / "state" / "plan-cache.key"))
    monkeypatch.setenv("KAFKA_AUDIT_PLAN_CACHE", str(into))
    return result


@pytest.mark.slow
def test_warm_run_uses_compiled_plans_and_matches(tmp_path, monkeypatch, no_bundle, compiled):
    cold = _cold_copy(compiled, tmp_path / "plans", monkeypatch)
    assert list((tmp_path / "plans").glob("*.json"))

    # A warm run must not call any check: replace every check with one that fails.
    def boom(*_args):
        raise AssertionError("check code ran although its compiled plan was cached")

    rules = load_rules()
    for code, rule in list(rules.items()):
        monkeypatch.setitem(REGISTRY, code, dataclasses.replace(rule, func=boom))
    warm, cache = _audit()
    assert cache.misses == 0 and cache.hits > 0
    assert warm.findings == cold.findings and warm.findings


@pytest.mark.slow
def test_changed_params_compile_afresh_and_a_changed_severity_does_not(
    tmp_path, monkeypatch, no_bundle, compiled
):
    default = _cold_copy(compiled, tmp_path / "plans", monkeypatch)
    # the severity is a literal the runner puts around the plan: nothing to compile
    cfg = dataclasses.replace(MECHANICS, severity={"DSK002": "critical"})
    result, cache = _audit(cfg)
    assert cache.misses == 0
    assert {f.severity for f in result.findings if f.rule == "DSK002"} == {"critical"}
    assert {f.severity for f in default.findings if f.rule == "DSK002"} == {"error"}

    # a parameter is part of the key too: REP007 listing at most 1 partition is a new plan
    cfg = dataclasses.replace(MECHANICS, params={"REP007": {"max_listed": 1}})
    result, cache = _audit(cfg)
    assert cache.misses == 1  # only REP007's plan: its derived transforms come from the cache
    listed = [len(f.evidence["partitions"]) for f in result.findings if f.rule == "REP007"]
    assert listed and max(listed) == 1
    assert max(len(f.evidence["partitions"]) for f in default.findings if f.rule == "REP007") > 1


@pytest.mark.slow
def test_corrupt_cache_entries_are_ignored(tmp_path, monkeypatch, no_bundle, compiled):
    cold = _cold_copy(compiled, tmp_path / "plans", monkeypatch)
    for entry in (tmp_path / "plans").glob("*.json"):
        entry.write_text("{ not json")
    again, cache = _audit()
    assert cache.hits == 0 and again.findings == cold.findings


@pytest.mark.slow
def test_cache_can_be_disabled(tmp_path, monkeypatch):
    monkeypatch.setenv("KAFKA_AUDIT_PLAN_CACHE", "off")
    _result, cache = _audit()
    assert cache.directory is None and cache.hits == 0


def test_bundle_is_built_from_this_code():
    """install.sh builds the bundle (it is not committed); CI runs install.sh, so a bundle
    missing or built from other code there means the first run of a user would compile."""
    assert plans.BUNDLE.exists(), (
        "no bundled plans: run ./install.sh or `python -m auditor.engine.plan_bundle`"
    )
    data = json.loads(gzip.decompress(plans.BUNDLE.read_bytes()))
    assert data["fingerprint"] == plans.code_fingerprint(), (
        "checks/, auditor/engine/ or sqlframe/sqlglot changed since the bundled plans were built: "
        "run ./install.sh or `python -m auditor.engine.plan_bundle`"
    )


@pytest.mark.slow
def test_first_run_after_install_compiles_nothing_and_matches(tmp_path, monkeypatch, compiled):
    """A new user's first run of the whole catalogue compiles nothing; the bundled plans are
    what this code compiles (the fingerprint says so for every plan; MECHANICS' plans, compiled
    in this process, are compared statement for statement) and give the same findings."""
    monkeypatch.setenv("KAFKA_AUDIT_PLAN_CACHE", str(tmp_path / "fresh"))  # a new user's empty cache
    bundled, cache = _audit(AuditConfig())
    assert cache.misses == 0 and cache.hits > 0
    assert not (tmp_path / "fresh").exists()  # nothing compiled, nothing written
    work, fresh_result = compiled
    selected = set(MECHANICS.select)
    assert [f for f in bundled.findings if f.rule in selected] == fresh_result.findings
    # a selection of rules (`--select`, a config file's `ignore`) compiles nothing either
    chosen, cache = _audit()
    assert cache.misses == 0 and chosen.findings == fresh_result.findings
    assert not (tmp_path / "fresh").exists()

    shipped = plans.bundled_plans("duckdb")
    # every plan MECHANICS reads, as this code compiles it, the final stage's too: its plan
    # takes the union of the selected rules' findings as an input, so one serves every selection
    entries = list((work / "plans").glob("*.json"))
    assert len(entries) > len(selected)
    for entry in entries:
        fresh = json.loads(entry.read_text())
        assert _canonical(shipped[entry.stem]["sql"]) == _canonical(fresh["sql"]), entry.stem
        assert shipped[entry.stem]["deps"] == fresh["deps"]


def _canonical(sql: str) -> str:
    """sqlframe names its CTEs ("t42906244") and table aliases ("a3") from counters of the
    process: numbered in order of first appearance instead, the same plan compiled after other
    plans, or in another process, reads the same."""
    names: dict[str, str] = {}
    # (a fused plan's members are SQL inside a JSON object: their quotes are escaped)
    return re.sub(
        r'(\\?")((?:t|a)\d+)\1',
        lambda m: m.group(1) + names.setdefault(m.group(2), f"n{len(names)}") + m.group(1),
        sql,
    )


@pytest.mark.parametrize(
    "content",
    [
        gzip.compress(
            json.dumps(
                {"fingerprint": "other code", "plans": {"duckdb": {"k": {"sql": "x", "deps": []}}}}
            ).encode(),
            mtime=0,
        ),
        b"not gzip at all",
        gzip.compress(b"[1, 2]", mtime=0),
    ],
    ids=["other-code", "not-gzip", "not-an-object"],
)
def test_bundle_of_other_code_or_corrupt_is_unused(tmp_path, monkeypatch, content):
    bundle = tmp_path / "plans_bundle.json.gz"
    bundle.write_bytes(content)
    monkeypatch.setattr(plans, "BUNDLE", bundle)
    plans.bundled_plans.cache_clear()
    try:
        assert plans.bundled_plans("duckdb") == {}
        assert plans.PlanCache("duckdb", directory=tmp_path).get("k") is None
    finally:
        plans.bundled_plans.cache_clear()


# --- a cached plan is executed only when it verifies -------------------------------------------


def _hide_everything(sql: str) -> str:
    """The entry's SQL rewritten to return nothing; a fused entry's (a JSON object of its
    members, auditor/engine/tables.py plan_group) member by member."""
    try:
        members = json.loads(sql)
    except ValueError:
        members = None
    if isinstance(members, dict):
        return json.dumps(
            {code: {**m, "sql": _hide_everything(m["sql"])} for code, m in members.items()}, sort_keys=True
        )
    return f"SELECT * FROM ({sql}) AS tampered WHERE FALSE"


@pytest.mark.slow
def test_tampered_cache_entries_are_not_executed(tmp_path, monkeypatch, no_bundle, compiled):
    cold = _cold_copy(compiled, tmp_path / "plans", monkeypatch)
    assert {f.rule for f in cold.findings} == set(MECHANICS.select)
    entries = sorted((tmp_path / "plans").glob("*.json"))
    original = {p: p.read_text() for p in entries}
    for p in entries:  # an attacker without the secret: SQL rewritten, MAC kept
        e = json.loads(p.read_text())
        p.write_text(json.dumps({**e, "sql": _hide_everything(e["sql"])}))
    again, cache = _audit()
    assert cache.hits == 0 and cache.rejected == len(entries)
    assert again.findings == cold.findings
    # Control: the same rewrite with a valid MAC (the owner's secret) does hide the findings, so it
    # is the verification that protects above.
    secret = plans.load_secret(compiled[0] / "state" / "plan-cache.key", create=False)
    for p, text in original.items():
        e = json.loads(text)
        sql = _hide_everything(e["sql"])
        p.write_text(
            json.dumps({"sql": sql, "deps": e["deps"], "mac": plans._mac(secret, p.stem, sql, e["deps"])})
        )
    hidden, cache = _audit()
    assert cache.misses == 0 and cache.rejected == 0 and not hidden.findings


@pytest.mark.slow
def test_entries_copied_from_another_key_or_user_are_rejected(tmp_path, monkeypatch, no_bundle, compiled):
    cold = _cold_copy(compiled, tmp_path / "mine", monkeypatch)
    mine = sorted((tmp_path / "mine").glob("*.json"))
    a, b = mine[0], mine[1]
    b.write_text(a.read_text())  # a valid entry under another key's name
    cache = plans.PlanCache("duckdb", directory=tmp_path / "mine")
    assert cache.get(a.stem) is not None and cache.get(b.stem) is None and cache.rejected == 1

    # another user's (or machine's) cache: valid entries made with a different secret (the
    # module's), read with mine
    monkeypatch.setenv("KAFKA_AUDIT_PLAN_KEY", str(tmp_path / "me" / "plan-cache.key"))
    monkeypatch.setenv("KAFKA_AUDIT_PLAN_CACHE", str(tmp_path / "theirs"))
    shutil.copytree(compiled[0] / "plans", tmp_path / "theirs")
    copied, cache = _audit()
    assert cache.hits == 0 and cache.rejected > 0 and copied.findings == cold.findings


@pytest.mark.slow
@pytest.mark.skipif(os.name == "nt" or not hasattr(os, "getuid"), reason="POSIX permissions")
def test_a_secret_others_can_read_or_write_is_not_used(tmp_path, monkeypatch, no_bundle, plan_key):
    monkeypatch.setenv("KAFKA_AUDIT_PLAN_CACHE", str(tmp_path / "plans"))
    assert plans.load_secret() is not None
    assert plan_key.stat().st_mode & 0o777 == 0o600
    plan_key.chmod(0o644)
    assert plans.load_secret() is None
    result, cache = _audit()  # the directory is neither read nor written; the audit still runs
    assert cache.hits == 0 and result.findings and not list((tmp_path / "plans").glob("*.json"))
    plan_key.unlink()
    plan_key.symlink_to(tmp_path / "elsewhere")
    (tmp_path / "elsewhere").write_text("00" * 32)
    (tmp_path / "elsewhere").chmod(0o600)
    assert plans.load_secret() is None  # not followed


@pytest.mark.slow
def test_cli_with_a_tampered_cache_still_reports(tmp_path):
    snapshot = ROOT / "sample_configs" / "fleet" / "dt=2026-11-22" / "cluster=ads-zk-legacy"
    env = {
        **os.environ,
        "KAFKA_AUDIT_PLAN_CACHE": str(tmp_path / "plans"),
        "KAFKA_AUDIT_PLAN_BUNDLE": "off",
        "KAFKA_AUDIT_PLAN_KEY": str(tmp_path / "state" / "plan-cache.key"),
        "CI": "1",
    }

    def check():
        done = subprocess.run(
            [sys.executable, "-m", "auditor.cli.main", "check", str(snapshot), "--format", "json"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=300,
        )
        assert done.returncode in (0, 1), done.stderr
        return done.stdout

    # The CLI's path, one rule whose plan compiles in a fraction of a second (the in-process
    # tests above tamper with shared transforms' plans too).
    (tmp_path / "kafka-audit.toml").write_text('select = ["CLI001"]\n')
    assert '"CLI001"' in check()
    entries = list((tmp_path / "plans").glob("*.json"))
    assert entries
    for p in entries:
        e = json.loads(p.read_text())
        p.write_text(json.dumps({**e, "sql": _hide_everything(e["sql"])}))
    assert '"CLI001"' in check()


def test_bundle_build_shows_progress_per_engine(tmp_path, monkeypatch, capsys):
    """issue 38: install.sh's compile is not silent: per engine the command k of n, the plans
    compiled so far (of the previous bundle's count), a heartbeat while a command runs, a total."""
    from auditor.engine import plan_bundle

    change = str(ROOT / "sample_configs" / "change-review")
    monkeypatch.setattr(
        plan_bundle,
        "bundle_commands",
        lambda samples: [("duckdb", ["lint", change]), ("duckdb", ["rules", "list"])],
    )
    target = tmp_path / "bundle.json.gz"
    target.write_bytes(gzip.compress(json.dumps({"plans": {"duckdb": {"a": {}, "b": {}}}}).encode()))
    count = plan_bundle.build_bundle(target=target, heartbeat=0.5)
    err = capsys.readouterr().err.splitlines()
    written = json.loads(gzip.decompress(target.read_bytes()))["plans"]["duckdb"]
    assert count == len(written) > 0
    first = [x for x in err if x.startswith("plan_bundle: duckdb 1/2 (lint): ")]
    assert first and re.fullmatch(
        r"plan_bundle: duckdb 1/2 \(lint\): \d+/2 duckdb plans compiled \(\d+\.\d s\)", first[-1]
    )
    heartbeats = [x for x in first if "so far" in x]
    assert heartbeats, err  # linting takes seconds: at least one line while it ran
    assert any(x.startswith("plan_bundle: duckdb 2/2 (rules): ") for x in err)
    assert err[-1].startswith(f"plan_bundle: {count} plans (duckdb {count}) in ")


def test_compiling_with_the_fast_copy_gives_the_same_sql(tmp_path, monkeypatch, no_bundle, compiled):
    """auditor/engine/copy_speed.py: the plans compiled with sqlglot's own deep copy are the
    ones compiled with ours (which `compiled` used), statement for statement."""
    import copy

    from sqlglot.expressions import core

    from auditor.engine import copy_speed

    assert core.deepcopy is copy_speed.fast_deepcopy  # in place since `compiled` compiled
    monkeypatch.setattr(core, "deepcopy", copy.deepcopy)
    monkeypatch.setattr(copy_speed, "install", lambda: False)
    monkeypatch.setenv("KAFKA_AUDIT_PLAN_CACHE", str(tmp_path / "plain"))
    result, cache = _audit()
    assert cache.hits == 0 and cache.misses > 0
    work, fast_result = compiled
    assert result.findings == fast_result.findings
    fast = {p.stem: json.loads(p.read_text()) for p in (work / "plans").glob("*.json")}
    plain = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "plain").glob("*.json")}
    assert plain.keys() == fast.keys() and len(plain) > 3
    for key, entry in plain.items():
        assert _canonical(entry["sql"]) == _canonical(fast[key]["sql"]), key
        assert entry["deps"] == fast[key]["deps"], key


def test_fast_copy_is_a_deep_copy():
    """A dict or list of scalars: a new container of the same items; anything else (a nested
    container, an expression) is copy.deepcopy's, so nothing mutable is ever shared."""
    from sqlglot import exp

    from auditor.engine.copy_speed import fast_deepcopy

    meta = {"line": 1, "col": 4, "display_name": "x", "nonnull": True, "w": 0.5, "n": None}
    copied = fast_deepcopy(meta)
    assert copied == meta and copied is not meta
    words = ["a comment", "another"]
    assert fast_deepcopy(words) == words and fast_deepcopy(words) is not words
    nested = {"dot_parts": [exp.to_identifier("a")], "inner": {"k": 1}}
    deep = fast_deepcopy(nested)
    assert deep == nested
    assert deep["dot_parts"][0] is not nested["dot_parts"][0] and deep["inner"] is not nested["inner"]
    column = exp.column("c", "t")
    assert fast_deepcopy(column) == column and fast_deepcopy(column) is not column
