"""The rule decorator rejects what users would later trip over."""

from __future__ import annotations

import re

import pytest

from auditor.errors import UsageError
from auditor.registry import REGISTRY, Param, load_rules, reference_parts, resolve, rule

GOOD_DOC = """Summary line.

    Why: because.

    Remediation: change it.

    Example: an example.

    References:
    - KIP-1: A title <https://example.org/kip-1>
    """


def _define(code="CTL006", name="a-fresh-name", severity="warning", doc=GOOD_DOC, params=()):
    def check(t, p):
        return None

    check.__doc__ = doc
    return rule(code, name, severity, params=params)(check)


@pytest.fixture
def clean_registry(monkeypatch):
    load_rules()
    monkeypatch.setattr("auditor.registry.REGISTRY", {k: v for k, v in REGISTRY.items() if k != "CTL006"})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"code": "XYZ001"}, "not in the RULES.md catalogue"),
        ({"code": "rep002"}, "not in the RULES.md catalogue"),
        ({"name": "Not_Kebab"}, "kebab-case"),
        ({"severity": "fatal"}, "severity must be one of"),
        ({"doc": "Only a summary."}, "missing ['Why', 'Remediation', 'Example', 'References']"),
        ({"doc": GOOD_DOC.replace("Example: an example.", "")}, "missing ['Example']"),
        ({"doc": GOOD_DOC.split("References:")[0]}, "missing ['References']"),
        ({"doc": GOOD_DOC.replace("<https://example.org/kip-1>", "")}, "must be '- Title <https://...>'"),
        ({"doc": GOOD_DOC.replace("- KIP-1: A title ", "- ")}, "must be '- Title <https://...>'"),
        (
            {"doc": GOOD_DOC.replace("https://example.org", "http://example.org")},
            "must be '- Title <https://...>'",
        ),
        ({"doc": GOOD_DOC.replace("- KIP-1", "KIP-1")}, "must be '- Title <https://...>'"),
        ({"params": (Param("Threshold", 1, "doc"),)}, "snake_case"),
        ({"params": (Param("threshold", None, "doc"),)}, "typed default"),
        ({"params": (Param("threshold", 1, ""),)}, "a doc"),
    ],
)
def test_decorator_rejects(clean_registry, kwargs, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        _define(**kwargs)


def test_duplicate_code_and_name_rejected():
    load_rules()
    with pytest.raises(ValueError, match="registered twice"):
        _define(code="REP002", name="another-name")


def test_docstring_sections_are_parsed(clean_registry):
    _define()
    from auditor import registry

    r = registry.REGISTRY["CTL006"]
    assert (r.summary, r.why, r.remediation, r.example) == (
        "Summary line.",
        "because.",
        "change it.",
        "an example.",
    )
    assert r.references == ("KIP-1: A title <https://example.org/kip-1>",)
    assert reference_parts(r.references[0]) == ("KIP-1: A title", "https://example.org/kip-1")


def test_params_bind_with_type_checks():
    p = Param("max_percent", 10.0, "doc")
    assert p.coerce(12, "cfg") == 12.0
    with pytest.raises(UsageError, match="must be float"):
        p.coerce("12", "cfg")
    with pytest.raises(UsageError, match="must be int"):
        Param("n", 3, "doc").coerce(True, "cfg")


def test_resolve_by_code_name_and_prefix():
    assert [r.code for r in resolve("rep002")] == ["REP002"]
    assert [r.code for r in resolve("min-isr-equals-rf")] == ["REP002"]
    assert {"REP001", "REP002", "REP003"} <= {r.code for r in resolve("REP")}
    with pytest.raises(UsageError, match="unknown rule"):
        resolve("REP9")


def test_every_rule_documents_itself():
    for r in load_rules().values():
        assert r.summary.endswith(".") and len(r.why) > 40 and len(r.remediation) > 20, r.code


def test_every_rule_cites_its_sources():
    for r in load_rules().values():
        urls = [reference_parts(ref)[1] for ref in r.references]
        assert urls and all(url.startswith("https://") for url in urls), r.code


def test_rule_docs_say_what_happened_not_which_incident():
    # "incident 3" means something only to readers of the design document: say what happened.
    for r in load_rules().values():
        text = " ".join((r.summary, r.why, r.remediation, r.example))
        assert not re.search(r"\bincidents?\s+\d", text, flags=re.I), r.code


def test_a_findings_own_severity_is_used_when_valid_and_the_config_wins():
    """The severity the runner gives each finding (auditor/engine/runner.py _severity_sql),
    evaluated by DuckDB: the row's own when it is a severity, else the rule's declared one;
    a severity set in kafka-audit.toml replaces both."""
    import duckdb

    from auditor.config import AuditConfig
    from auditor.engine.runner import _severity_sql

    ctl002 = load_rules()["CTL002"]  # declared critical; its findings carry their own
    rows = "(VALUES ('warning'), ('error'), ('bogus'), (NULL)) AS t(row_severity)"

    def severities(config):
        return [r[0] for r in duckdb.sql(f"SELECT {_severity_sql(ctl002, config)} FROM {rows}").fetchall()]

    assert severities(AuditConfig()) == ["warning", "error", "critical", "critical"]
    assert severities(AuditConfig(severity={"CTL002": "info"})) == ["info"] * 4
