"""`kafka-audit mcp` in process, through the SDK's own client: every tool's schema and
annotations, parity with the command line (the same JSON as lint/check/preflight --format json),
errors and confinement to the served roots, masked secrets, the size limit, resources and
prompts, and that only `kafka-audit mcp` imports the SDK.

The server is the one `kafka-audit mcp` runs (auditor.mcp.server.build_server), connected with
``mcp.Client`` (tests/mcp_helpers.py): the legacy handshake with JSON-RPC framing by default,
the 2026 protocol's direct dispatch where a test says ``mode="auto"``. The SDK client validates
every successful result against the tool's output schema.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import jsonschema
import pytest

from tests.conftest import ROOT, SAMPLE_FLEET, cluster_dir
from tests.mcp_helpers import SERVER_KEYS, call, cli_json, error_line, run, served, text_of, without

PAYMENTS = "sample_configs/fleet/dt=2026-11-22/cluster=payments-msk"
SEARCH = "sample_configs/fleet/dt=2026-11-22/cluster=search-ingest"
FILE_TOOLS = {
    "list_rules",
    "explain_rule",
    "lint_files",
    "lint_change",
    "check_snapshot",
    "preflight",
    "fleet_summary",
    "snapshot_info",
    "list_clusters",
}
LIVE_TOOLS = {"check_cluster", "cluster_health"}
# Argument names that would let a model choose where the server connects or what credentials
# it uses: no tool takes one.
SOURCE_WORDS = re.compile(
    r"bootstrap|server|zookeeper|arn|region|command_config|credential|password|url|host", re.I
)


@pytest.fixture(scope="module")
def server():
    return served()


@pytest.fixture
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


# --- the tools: names, schemas, annotations ---------------------------------------------------------


def _tools(server, mode="legacy"):
    async def steps(client):
        return (await client.list_tools()).tools

    return run(server, steps, mode=mode)


def test_every_tool_is_read_only_snake_case_and_declares_its_output(tmp_path):
    inventory = tmp_path / "fleet.yaml"
    inventory.write_text("clusters:\n  - name: wire\n    bootstrap_servers: 127.0.0.1:9\n")
    for live, expected in ((False, FILE_TOOLS), (True, FILE_TOOLS | LIVE_TOOLS)):
        tools = _tools(served(inventory=inventory if live else None, live=live))
        assert {t.name for t in tools} == expected
        for t in tools:
            assert re.fullmatch(r"[a-z][a-z0-9_]*", t.name) and len(t.name) <= 64, t.name
            a = t.annotations
            assert (a.read_only_hint, a.destructive_hint, a.idempotent_hint) == (True, False, True), t.name
            reaches_a_cluster = t.name in LIVE_TOOLS or (t.name == "preflight" and live)
            assert a.open_world_hint is reaches_a_cluster, t.name
            assert a.title and t.description and len(t.description) > 80, t.name
            # the output schema is a JSON Schema (2020-12) of an object; the input takes nothing else
            jsonschema.Draft202012Validator.check_schema(t.output_schema)
            assert t.output_schema["type"] == "object", t.name
            jsonschema.Draft202012Validator.check_schema(t.input_schema)
            assert t.input_schema["additionalProperties"] is False, t.name
            assert not [p for p in t.input_schema.get("properties", {}) if SOURCE_WORDS.search(p)], t.name
        by_name = {t.name: t for t in tools}
        assert set(by_name["preflight"].input_schema["properties"]) >= (
            {"snapshot", "cluster"} if live else {"snapshot"}
        )
        assert ("cluster" in by_name["preflight"].input_schema["properties"]) is live


def test_an_argument_the_tool_does_not_take_is_refused_in_one_line(server):
    line = error_line(call(server, "check_snapshot", {"path": PAYMENTS, "bootstrap_servers": "evil:9092"}))
    assert line == "check_snapshot: invalid arguments: bootstrap_servers: Extra inputs are not permitted"
    line = error_line(call(server, "preflight", {"snapshot": PAYMENTS, "brokers": "one"}))
    assert line.startswith("preflight: invalid arguments: brokers")


def test_the_modern_protocol_lists_the_same_tools(server):
    assert {t.name for t in _tools(server, mode="auto")} == FILE_TOOLS


# --- parity with the command line ---------------------------------------------------------------


def test_preflight_is_the_cli_preflight_with_its_references(server, capsys, at_root):
    """The done-criterion: is payments-msk safe to patch, and what must change first? The same
    verdict, blockers, findings and fix plan as `kafka-audit preflight --format json`, the same
    exit code, and every cited rule's references as `rules explain` gives them."""
    r = call(server, "preflight", {"snapshot": PAYMENTS})
    assert not r.is_error, text_of(r)
    doc = r.structured_content
    code, expected = cli_json(capsys, "preflight", PAYMENTS, "--format", "json")
    assert without(doc, *SERVER_KEYS) == expected
    assert doc["exit"]["code"] == code == 1
    (cluster,) = doc["preflight"]["clusters"]
    assert (cluster["safe_to_roll"], cluster["unsafe_brokers"]) == (False, [1, 2, 3])
    assert [b["verdict"] for b in cluster["brokers"]] == ["unsafe"] * 3
    assert [c["summary"] for c in cluster["fix_plan"]["changes"]] == [
        "topic payments.authorizations.v2: min.insync.replicas 3 -> 2 (topic override)",
        "topic payments.orders.v1: min.insync.replicas 3 -> 2 (topic override)",
        "topic __consumer_offsets: min.insync.replicas 3 -> 2 (a new topic override: it inherits 3 from the "
        "dynamic cluster default, and an MSK configuration revision would itself roll every broker)",
        "topic payments.ledger-events: min.insync.replicas 3 -> 2 (a new topic override: it inherits 3 from the "
        "dynamic cluster default, and an MSK configuration revision would itself roll every broker)",
    ]
    assert cluster["fix_plan"]["proof"]["reached_safe"] is True
    # the references: those of `kafka-audit rules explain CODE --format json`, for each rule cited
    assert (
        set(doc["rules"]) == {f["rule"] for f in doc["findings"]} == {"MNT001", "MNT003", "MNT004", "REP002"}
    )
    for rule, cited in doc["rules"].items():
        _, explained = cli_json(capsys, "rules", "explain", rule, "--format", "json")
        assert cited["references"] == explained["references"] and cited["references"], rule
        assert cited["remediation"] == explained["remediation"]
    # the fix plan as the file --fix-plan writes, and the text report as preflight prints it
    from tests.test_lint import cli

    cli(capsys, "preflight", PAYMENTS, "--fix-plan", "/dev/stderr")
    text = text_of(r)
    _, printed, _ = cli(capsys, "preflight", PAYMENTS)
    assert text.startswith(printed.rstrip("\n"))
    assert (
        "payments-msk is unsafe to roll now" in text
        and text.count("kafka-configs.sh --bootstrap-server") == 4
    )
    assert "after these 4 change(s): 3 of 3 broker(s) safe (re-simulated on a copy of the snapshot)" in text
    assert "- Kafka documentation: min.insync.replicas" in text or "REP002 min-isr-equals-rf (error)" in text
    assert doc["fix_plan_text"].count("kafka-configs.sh") == 4 and doc["fix_plan_text"].startswith("#")


def test_check_snapshot_is_check_json_on_the_sample_fleet(server, capsys, at_root):
    r = call(server, "check_snapshot", {"path": "sample_configs/fleet"})
    code, expected = cli_json(capsys, "check", "sample_configs/fleet", "--format", "json")
    assert without(r.structured_content, *SERVER_KEYS) == expected
    assert r.structured_content["exit"] == {
        "code": code,
        "meaning": "findings at or above fail_on",
        "fail_on": "error",
    }
    assert len(expected["findings"]) > 50  # the whole fleet, under the default size limit
    # select / ignore / fail_on as check's options
    r = call(server, "check_snapshot", {"path": PAYMENTS, "select": ["REP002"], "fail_on": "critical"})
    code, expected = cli_json(
        capsys, "check", PAYMENTS, "--select", "REP002", "--fail-on", "critical", "--format", "json"
    )
    assert without(r.structured_content, *SERVER_KEYS) == expected and code == 0
    assert r.structured_content["exit"]["code"] == 0 and {f["rule"] for f in expected["findings"]} == {
        "REP002"
    }


def test_lint_files_is_lint_json_against_a_snapshot(server, capsys, at_root):
    r = call(server, "lint_files", {"paths": ["sample_configs/change-review"], "against": SEARCH})
    code, expected = cli_json(
        capsys, "lint", "sample_configs/change-review", "--against", SEARCH, "--format", "json"
    )
    doc = r.structured_content
    assert without(doc, *SERVER_KEYS) == expected and doc["exit"]["code"] == code == 1
    assert {(f["rule"], f["location"]["file"], f["location"]["line"]) for f in doc["findings"]} >= {
        ("REP002", "sample_configs/change-review/topics/strimzi-topics.yaml", 5),
        ("CFG002", "sample_configs/change-review/topics/topics.yaml", 7),
    }
    assert "note: 1 finding(s) suppressed inline" in text_of(r)
    assert "1 finding(s) suppressed inline" in doc["notes"]


def test_lint_inline_files_and_a_change(server):
    topics = (
        "- name: orders\n  partitions: 6\n  replication_factor: 3\n  configs:\n    min.insync.replicas: 3\n"
    )
    r = call(server, "lint_files", {"files": [{"name": "kafka/topics.yaml", "content": topics}]})
    (finding,) = r.structured_content["findings"]
    assert (finding["rule"], finding["location"]) == ("REP002", {"file": "kafka/topics.yaml", "line": 1})
    assert "kafka-audit-mcp-" not in json.dumps(r.structured_content) + text_of(
        r
    )  # the staging dir is not shown
    fixed = topics.replace("min.insync.replicas: 3", "min.insync.replicas: 2") + (
        "- name: replay\n  partitions: 1\n  replication_factor: 1\n"
    )
    r = call(
        server,
        "lint_change",
        {
            "base_files": [{"name": "topics.yaml", "content": topics}],
            "head_files": [{"name": "topics.yaml", "content": fixed}],
        },
    )
    doc = r.structured_content
    assert [(f["rule"], f["resource"]["name"]) for f in doc["findings"]] == [("REP003", "replay")]
    assert doc["change"] == {"base_findings": 1, "head_findings": 1, "introduced": 1, "fixed": 1}
    assert [(e["rule"], e["resource_name"]) for e in doc["baseline"]["stale"]] == [("REP002", "orders")]
    assert doc["exit"]["code"] == 1 and "REP003" in doc["rules"]


def test_lint_change_between_two_directories_compares_files_by_their_relative_names(tmp_path):
    for side, rf in (("base", 3), ("head", 1)):
        (tmp_path / side / "kafka").mkdir(parents=True)
        (tmp_path / side / "kafka" / "topics.yaml").write_text(
            f"- name: clicks\n  partitions: 3\n  replication_factor: {rf}\n"
        )
        (tmp_path / side / "kafka" / "other.yaml").write_text(
            "- name: same\n  partitions: 1\n  replication_factor: 1\n"
        )
    r = call(served([tmp_path]), "lint_change", {"base": "base/kafka", "head": "head/kafka"})
    doc = r.structured_content
    assert [(f["rule"], f["location"]["file"]) for f in doc["findings"]] == [("REP003", "topics.yaml")]
    assert doc["baseline"]["matched"] == 1  # other.yaml's REP003 is in both: not introduced


# --- errors and confinement ------------------------------------------------------------------------


@pytest.fixture
def rooted(tmp_path):
    """A root holding a topic file, beside an outside directory holding a secret-looking file."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "topics.yaml").write_text("- name: t\n  partitions: 1\n  replication_factor: 1\n")
    (outside / "secret.properties").write_text("broker.id=1\nmin.insync.replicas=1\n")
    return root, outside


def test_paths_outside_the_roots_are_refused_in_one_line_naming_them(rooted):
    root, outside = rooted
    server = served([root])
    assert error_line(call(server, "lint_files", {"paths": [str(outside / "secret.properties")]})) == (
        f"Error executing tool lint_files: {outside / 'secret.properties'}: outside the directories this server reads: refused"
    )
    assert error_line(call(server, "lint_files", {"paths": ["../outside/secret.properties"]})).endswith(
        "../outside/secret.properties: outside the directories this server reads: refused"
    )
    assert error_line(call(server, "check_snapshot", {"path": "/"})).endswith(
        "/: outside the directories this server reads: refused"
    )
    assert error_line(call(server, "lint_files", {"paths": ["nope.yaml"]})).endswith(
        "nope.yaml: no such file or directory under the served roots"
    )
    assert error_line(call(server, "lint_files", {"paths": []})).endswith(
        "give paths (under the roots) or files (name and content)"
    )


def test_a_symlink_escape_is_refused_named_and_walked_ones_too(rooted):
    root, outside = rooted
    (root / "link.properties").symlink_to(outside / "secret.properties")
    (root / "dir").mkdir()
    (root / "dir" / "topics.yaml").write_text("- name: u\n  partitions: 1\n  replication_factor: 1\n")
    (root / "dir" / "escape.properties").symlink_to(outside / "secret.properties")
    (root / "outlink").symlink_to(outside, target_is_directory=True)
    server = served([root])
    assert error_line(call(server, "lint_files", {"paths": ["link.properties"]})).endswith(
        "link.properties: outside the directories this server reads: refused"
    )
    assert error_line(call(server, "lint_files", {"paths": ["outlink/secret.properties"]})).endswith(
        "outlink/secret.properties: outside the directories this server reads: refused"
    )
    # a directory walk meeting a symlink out of the root: named, not silently read or skipped
    assert error_line(call(server, "lint_files", {"paths": ["dir"]})).endswith(
        "dir/escape.properties: outside the directories this server reads: refused"
    )


def test_a_snapshot_whose_table_leads_out_of_the_root_is_refused(tmp_path):
    import shutil

    root = tmp_path / "root"
    shutil.copytree(cluster_dir("payments-msk"), root / "payments")
    (tmp_path / "configs.jsonl").write_bytes((root / "payments" / "configs.jsonl").read_bytes())
    (root / "payments" / "configs.jsonl").unlink()
    (root / "payments" / "configs.jsonl").symlink_to(tmp_path / "configs.jsonl")
    for tool, args in (("check_snapshot", {"path": "payments"}), ("preflight", {"snapshot": "payments"})):
        line = error_line(call(served([root]), tool, args))
        assert line.endswith("payments/configs.jsonl: outside the directories this server reads: refused"), (
            line
        )


def test_a_terraform_sibling_outside_the_root_is_not_read(tmp_path):
    """Terraform's module scope reads the other .tf files of a file's directory: one that is a
    symlink out of the root is not read (its variable stays unresolved, said as not evaluated)."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "main.tf").write_text(
        'resource "kafka_topic" "t" {\n  name = "t"\n  partitions = 3\n  replication_factor = var.rf\n}\n'
    )
    (tmp_path / "variables.tf").write_text('variable "rf" {\n  default = 1\n}\n')
    (root / "variables.tf").symlink_to(tmp_path / "variables.tf")
    r = call(served([root]), "lint_files", {"paths": ["main.tf"]})
    assert not r.is_error and r.structured_content["findings"] == []  # RF 1 from outside would be REP003
    assert any("var.rf" in n and "not evaluated" in n for n in r.structured_content["notes"])
    (root / "variables.tf").unlink()
    (root / "variables.tf").write_text('variable "rf" {\n  default = 1\n}\n')  # the same file inside: read
    r = call(served([root]), "lint_files", {"paths": ["main.tf"]})
    assert [f["rule"] for f in r.structured_content["findings"]] == ["REP003"]


def test_a_fifo_and_a_device_are_refused(rooted, tmp_path):
    root, _ = rooted
    os.mkfifo(root / "pipe.yaml")
    (root / "zero.properties").symlink_to("/dev/zero")
    server = served([root])
    assert error_line(call(server, "lint_files", {"paths": ["pipe.yaml"]})).endswith(
        "pipe.yaml: not a regular file (a FIFO): refused"
    )
    assert error_line(call(server, "lint_files", {"paths": ["zero.properties"]})).endswith(
        "zero.properties: outside the directories this server reads: refused"
    )
    assert error_line(call(server, "check_snapshot", {"path": "pipe.yaml"})).endswith(
        "pipe.yaml: not a directory"
    )
    # with /dev itself served, /dev/zero is still not read: not a regular file
    line = error_line(call(served([root, "/dev"]), "lint_files", {"paths": ["/dev/zero"]}))
    assert line.endswith(": zero: not a regular file (a character device): refused"), line


def test_bad_input_is_one_line_naming_the_file(rooted):
    root, _ = rooted
    (root / "broken.yaml").write_text("- name: [unclosed\n")
    (root / "snap").mkdir()
    (root / "snap" / "manifest.json").write_text("{not json")
    server = served([root])
    # as kafka-audit lint: an unreadable file is a warning and the run incomplete (exit 3),
    # the one-line error under strict
    r = call(server, "lint_files", {"paths": ["broken.yaml"]})
    assert r.structured_content["exit"]["code"] == 3 and r.structured_content["incomplete"]
    assert any(re.search(r"broken\.yaml:\d+: ", n) for n in r.structured_content["notes"])
    assert re.search(
        r"broken\.yaml:\d+: ",
        error_line(call(server, "lint_files", {"paths": ["broken.yaml"], "strict": True})),
    )
    assert error_line(call(server, "check_snapshot", {"path": "snap"})).endswith(
        "snap/manifest.json: not valid JSON (line 1: Expecting property name enclosed in double quotes)"
    )
    assert "unknown rule 'NOPE999'" in error_line(
        call(server, "check_snapshot", {"path": "snap", "select": ["NOPE999"]})
    )
    assert error_line(call(server, "explain_rule", {"rule": "nope"})).endswith(
        "explain_rule: unknown rule 'nope' (see 'kafka-audit rules list')"
    )
    assert "not a relative file name" in error_line(
        call(server, "lint_files", {"files": [{"name": "../escape.yaml", "content": "x"}]})
    )


# --- secrets ---------------------------------------------------------------------------------------

SECRETS = ("Sup3r-Keystore-Secret", "Jaas-Secret-42", "Plugin-Token-99")
BROKER = f"""broker.id=1
log.dirs=/var/lib/kafka/data
listeners=SASL_SSL://:9093
ssl.keystore.password={SECRETS[0]}
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="{SECRETS[1]}";
my.plugin.token={SECRETS[2]}
min.insync.replicas=1
"""


def test_secrets_never_reach_a_result(tmp_path):
    (tmp_path / "server.properties").write_text(BROKER)
    server = served([tmp_path])
    results = [
        call(server, "lint_files", {"paths": ["server.properties"]}),
        call(server, "lint_files", {"files": [{"name": "server.properties", "content": BROKER}]}),
        call(
            server,
            "lint_change",
            {
                "base_files": [{"name": "s.properties", "content": "broker.id=1\n"}],
                "head_files": [{"name": "s.properties", "content": BROKER}],
            },
        ),
    ]
    for r in results:
        assert not r.is_error, text_of(r)
        seen = json.dumps(r.structured_content) + text_of(r)
        assert r.structured_content["findings"]  # something was judged (REP004 at least)
        assert not [s for s in SECRETS if s in seen]


# --- the size limit ----------------------------------------------------------------------------------


def test_a_result_over_the_limit_is_cut_and_says_what_was_cut():
    server = served(max_bytes=16 * 1024)
    r = call(server, "check_snapshot", {"path": "sample_configs/fleet"})
    doc = r.structured_content
    assert len(json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()) <= 16 * 1024
    (cut,) = [c for c in doc["truncated"] if c["path"] == "findings"]
    assert cut["total"] == doc["summary"]["total"] > cut["shown"] == len(doc["findings"]) >= 1
    assert doc["findings"][0]["severity"] == "critical"  # worst first, as check orders them
    text = text_of(r)
    assert len(text.encode()) <= 16 * 1024
    assert f"findings: {cut['shown']} of {cut['total']}" in text and "ask for less" in text


# --- rules, resources, prompts -----------------------------------------------------------------------


def test_rules_tools_and_resources_are_the_rule_catalogue(server, capsys):
    from tests.test_lint import cli

    _, catalogue = cli_json(capsys, "rules", "list", "--format", "json")
    r = call(server, "list_rules")
    assert [x["code"] for x in r.structured_content["rules"]] == [x["code"] for x in catalogue]
    r = call(server, "list_rules", {"category": "MNT", "command": "preflight"})
    assert [x["code"] for x in r.structured_content["rules"]] == [
        "MNT001",
        "MNT002",
        "MNT003",
        "MNT004",
        "MNT005",
        "MNT006",
    ]
    r = call(server, "explain_rule", {"rule": "min-isr-equals-rf"})
    _, explained = cli_json(capsys, "rules", "explain", "REP002", "--format", "json")
    assert r.structured_content == explained
    _, printed, _ = cli(capsys, "rules", "explain", "REP002")
    assert text_of(r).rstrip() == printed.rstrip()

    async def steps(client):
        listed = (await client.list_resources()).resources
        rule = (await client.read_resource("kafka-audit://rules/REP002")).contents[0].text
        whole = (await client.read_resource("kafka-audit://rules")).contents[0].text
        schema = (await client.read_resource("kafka-audit://schema/report")).contents[0].text
        return listed, rule, whole, schema

    listed, rule, whole, schema = run(server, steps)
    uris = {str(x.uri) for x in listed}
    assert uris == {"kafka-audit://rules", "kafka-audit://schema/report"} | {
        f"kafka-audit://rules/{x['code']}" for x in catalogue
    }
    _, markdown, _ = cli(capsys, "rules", "explain", "REP002", "--format", "markdown")
    assert rule == markdown and json.loads(whole) == catalogue
    on_disk = json.loads((ROOT / "docs" / "report.schema.json").read_text())
    on_disk.pop("$id")
    assert json.loads(schema) == on_disk


def test_prompts_ask_for_the_tools_verdict_rule_codes_and_references(server):
    async def steps(client):
        prompts = (await client.list_prompts()).prompts
        patch = await client.get_prompt("msk_patch_readiness", {"cluster": "payments-msk"})
        review = await client.get_prompt("review_kafka_change", {"base": "a", "head": "b"})
        return prompts, patch, review

    prompts, patch, review = run(server, steps)
    assert {p.name for p in prompts} == {"msk_patch_readiness", "review_kafka_change"}
    for message in (patch.messages[0].content.text, review.messages[0].content.text):
        assert "Do not re-judge thresholds" in message and "references" in message and "rule code" in message
    assert "payments-msk" in patch.messages[0].content.text and "preflight" in patch.messages[0].content.text
    assert 'lint_change with base="a" and head="b"' in review.messages[0].content.text


# --- what the tools list ---------------------------------------------------------------------------


def test_list_clusters_and_snapshot_info_on_the_sample_fleet():
    server = served([SAMPLE_FLEET])
    r = call(server, "list_clusters")
    doc = r.structured_content
    assert doc["live"] is False and doc["inventory"] is None
    assert {s["cluster"]: s["path"] for s in doc["snapshots"]}[
        "payments-msk"
    ] == "dt=2026-11-22/cluster=payments-msk"
    on_disk = {p.parent.name for p in SAMPLE_FLEET.glob("*/cluster=*/manifest.json")}
    assert {f"cluster={s['cluster']}" for s in doc["snapshots"]} == on_disk
    assert all(s["newest"] and not s["incomplete"] for s in doc["snapshots"])
    r = call(server, "snapshot_info", {"path": "dt=2026-11-22/cluster=payments-msk"})
    (snap,) = r.structured_content["snapshots"]
    assert snap["manifest"]["cluster"]["name"] == "payments-msk" and snap["incomplete"] is False
    assert snap["tables"]["partitions"] == {"file": "partitions.jsonl", "rows": 116}


def test_list_clusters_names_the_inventory_without_its_addresses(tmp_path):
    os.environ["MCP_TEST_BOOTSTRAP"] = "kafka-1.secret.internal:9092"
    try:
        (tmp_path / "fleet.yaml").write_text(
            "clusters:\n  - name: payments\n    labels: {environment: prod}\n"
            "    bootstrap_servers: {env: MCP_TEST_BOOTSTRAP}\n  - name: ads\n    zookeeper: zk-7.internal:2181/ads\n"
        )
        r = call(served([tmp_path], inventory=tmp_path / "fleet.yaml"), "list_clusters")
    finally:
        del os.environ["MCP_TEST_BOOTSTRAP"]
    inv = r.structured_content["inventory"]
    assert [(c["name"], c["sources"], c["labels"]) for c in inv["clusters"]] == [
        ("payments", ["bootstrap_servers"], {"environment": "prod"}),
        ("ads", ["zookeeper"], {}),
    ]
    seen = json.dumps(r.structured_content) + text_of(r)
    assert "secret.internal" not in seen and "zk-7" not in seen


# --- only `kafka-audit mcp` loads the SDK ------------------------------------------------------------

PROBE = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('SDK-LOADED\\n' if any(m == 'mcp' or m.startswith(('mcp.', 'mcp_types'))"
    " for m in sys.modules) else 'SDK-NOT-LOADED\\n'))\n"
    "sys.argv = ['kafka-audit', *sys.argv[1:]]\n"
    "from auditor.cli.main import main\n"
    "main()\n"
)


@pytest.mark.parametrize("args", [["--version"], ["rules", "list"], ["lint", "sample_configs/change-review"]])
def test_other_commands_do_not_import_the_sdk(args):
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    assert done.stderr.strip().splitlines()[-1] == "SDK-NOT-LOADED"
