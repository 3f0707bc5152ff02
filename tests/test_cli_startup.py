"""What a command imports and builds before it reads a byte (issue 46): only the command being run
is built (auditor/cli/main.py LazyCommands), its options are converted without pydantic
(auditor/cli/values.py), and duckdb, Spark, boto3, kazoo and the network collectors are
imported only by the commands that use them. Real processes, as a user starts them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer._click.core import Context
from typer._click.exceptions import ClickException

from auditor.cli import main as cli_main
from auditor.cli.values import TyperValues
from tests.conftest import ROOT, SAMPLE_FLEET

# A command run in a fresh interpreter: the modules it imported beyond the interpreter's own
# start-up (site, .pth files), and its exit code.
_PROBE = """
import sys, json, runpy
before = set(sys.modules)
sys.argv = ["kafka-audit"] + json.loads(sys.argv[1])
code = 0
try:
    runpy.run_module("auditor.cli.main", run_name="__main__")
except SystemExit as e:
    code = e.code
print(json.dumps([code, sorted(set(sys.modules) - before)]), file=sys.stderr)
"""

# What every command imports: the CLI framework (typer vendors click; rich formats --help).
FRAMEWORK = {"typer", "rich", "shellingham", "annotated_doc", "auditor"}
# Never on a path that does not start Spark, call AWS or read ZooKeeper, nor for options.
HEAVY = {
    "pyspark",
    "py4j",
    "boto3",
    "botocore",
    "kazoo",
    "pydantic",
    "pydantic_core",
    "jinja2",
    "mcp",
    "mcp_types",
}
NETWORK_COLLECTORS = (
    "auditor.collectors.zookeeper",
    "auditor.collectors.admin",
    "auditor.collectors.msk",
    "auditor.collectors.metrics",
    "auditor.collectors.fleet_collect",
)


def _imports(*args, cwd=ROOT, env=None) -> tuple[int, set[str], set[str]]:
    """(exit code, third-party top-level packages, our modules) that ``kafka-audit ARGS`` imported."""
    env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    p = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps([str(a) for a in args])],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=300,
    )
    code, modules = json.loads(p.stderr.strip().splitlines()[-1])
    tops = {m.split(".")[0] for m in modules} - set(sys.stdlib_module_names)
    third_party = {t for t in tops if not t.startswith("_") and t not in ("cython_runtime",)}
    ours = {m for m in modules if m.split(".")[0] in ("auditor", "checks")}
    return code, third_party, ours


def _other_commands(command: str) -> set[str]:
    return {f"auditor.cli.{name}" for name in cli_main.COMMANDS if name != command}


def test_version_builds_no_command():
    code, third_party, ours = _imports("--version")
    assert code == 0
    assert third_party <= FRAMEWORK, third_party - FRAMEWORK
    assert not {m for m in ours if m.startswith(("auditor.cli.", "auditor.engine", "checks"))} - {
        "auditor.cli.main",
        "auditor.cli.help",
        "auditor.cli.values",
    }


def test_lint_imports_what_it_uses_and_nothing_else(tmp_path):
    """lint reads files and runs its rules on the embedded engine: YAML, duckdb and the rule
    catalogue, and nothing of the other commands, of Spark, AWS, ZooKeeper or pydantic. It fails
    when a module lint does not use is imported on its path (a top-level import in a module lint
    reads, a command module imported by the CLI, an option converted through pydantic)."""
    topics = tmp_path / "topics.yaml"
    topics.write_text("- name: orders\n  partitions: 3\n  replication_factor: 3\n")
    args = ("lint", topics, "--fail-on", "never", "--select", "REP,CFG")
    # As every run after the first (or after install.sh, whose bundle holds lint's plans): the
    # plans cached. Compiling one imports sqlframe and sqlglot, once.
    cache = {"KAFKA_AUDIT_PLAN_CACHE": str(tmp_path / "plans")}
    assert _imports(*args, env=cache)[0] == 0
    code, third_party, ours = _imports(*args, env=cache)
    assert code == 0
    assert third_party <= FRAMEWORK | {"yaml", "duckdb", "checks"}, third_party
    assert not third_party & HEAVY
    assert not ours & _other_commands("lint")
    assert not {m for m in ours if m.startswith(NETWORK_COLLECTORS)}
    assert "auditor.engine.spark_engine" not in ours and "auditor.commands" not in ours
    assert not {m for m in ours if m.startswith("auditor.mcp")}


def test_check_and_rules_import_no_option_machinery_nor_what_they_do_not_run(tmp_path):
    snapshot = next(SAMPLE_FLEET.glob("dt=*/cluster=payments-msk"))
    code, third_party, ours = _imports("check", snapshot, "-o", tmp_path / "r.json", "--fail-on", "never")
    assert code == 0
    assert not third_party & HEAVY, third_party & HEAVY
    assert not ours & _other_commands("check")
    assert not {m for m in ours if m.startswith(NETWORK_COLLECTORS)}
    code, third_party, ours = _imports("rules", "list", "--format", "json")
    assert code == 0 and not third_party & (HEAVY | {"duckdb"}), third_party
    assert not ours & _other_commands("rules") and not {m for m in ours if m.startswith("auditor.engine")}


def _help_lines(*args) -> str:
    p = subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_help_lists_every_command_with_its_one_line_help():
    text = _help_lines("--help")
    for name in cli_main.COMMANDS:
        command = cli_main.build_command(name)
        first = command.get_short_help_str(limit=150).split(".")[0]
        assert any(line.split("│")[1].split()[:1] == [name] for line in text.splitlines() if "│" in line), (
            name
        )
        assert first[:40] in " ".join(text.split()), (name, first)


def _complete(words: str) -> list[str]:
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    p = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.argv[0] = 'kafka-audit'; from auditor.cli.main import main; main()",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={
            **os.environ,
            "_KAFKA_AUDIT_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(cword),
        },
        timeout=120,
    )
    return p.stdout.split()


def test_shell_completion_completes_commands_and_the_options_of_each():
    assert _complete("kafka-audit ") == list(cli_main.COMMANDS)
    assert _complete("kafka-audit li") == ["lint"]
    assert _complete("kafka-audit lint --fa") == ["--fail-on"]
    assert _complete("kafka-audit check --engine ") == ["duckdb", "spark"]
    assert _complete("kafka-audit rules ex") == ["explain"]


def _values(param) -> list:
    """Values to convert for one parameter: missing, and what a command line can give."""
    kind = param.type_descriptor.annotation
    out: list = [None]
    names = (
        [str(getattr(c, "value", c)) for c in (param.type_descriptor.choices or ())]
        if param.type_descriptor.is_choice
        else []
    )
    singles = (
        names + ["nope", "NOPE"]
        if names
        else ["", "x", str(ROOT), str(ROOT / "README.md"), "12", "1.5", "a,b", " 7 "]
    )
    if param.multiple or param.nargs == -1:
        out += [tuple(singles[:2]), tuple(singles[2:5]), ()]
    else:
        out += singles
    if param.default is not None and not callable(param.default):
        out.append(param.default)
    return out if kind is not bool else [None]


def test_option_values_convert_exactly_as_typer_converts_them():
    """TyperValues against typer's own conversion (its pydantic adapter), for every option and
    argument of every command, on missing, given, invalid and default values: the same value,
    or the same error message."""
    from typer._coercion import build_runtime_param

    compared = 0
    for name in cli_main.COMMANDS:
        todo = [cli_main.build_command(name)]
        while todo:
            command = todo.pop()
            todo.extend(getattr(command, "commands", {}).values())
            ctx = Context(command)
            for param in command.params:
                if not hasattr(param, "type_descriptor"):
                    continue
                typers = build_runtime_param(param.type_descriptor)
                for value in _values(param):
                    outcomes = []
                    for runtime in (TyperValues(param), typers):
                        try:
                            outcomes.append(("value", runtime.coerce(value, param=param, ctx=ctx)))
                        except ClickException as e:
                            outcomes.append(("error", e.format_message()))
                    assert outcomes[0] == outcomes[1], (name, param.name, value, outcomes)
                    compared += 1
    assert compared > 300


@pytest.mark.parametrize(
    "args", [("check", "--timeout", "soon"), ("lint", "--fail-on", "sometimes", "x.yaml")]
)
def test_a_bad_option_value_is_typer_s_usage_error(args):
    p = subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=120,
    )
    assert p.returncode == 2 and "Invalid value" in p.stderr and "Traceback" not in p.stderr, p.stderr


def test_a_mistyped_command_is_named_with_the_closest_ones():
    p = subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", "chek"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=120,
    )
    assert p.returncode == 2 and "No such command 'chek'. Did you mean 'check'?" in p.stderr, p.stderr
