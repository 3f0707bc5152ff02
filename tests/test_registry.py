"""The rule decorator rejects what users would later trip over."""

from __future__ import annotations

import pytest

from auditor.errors import UsageError
from auditor.registry import REGISTRY, Param, load_rules, resolve, rule

GOOD_DOC = """Summary line.

    Why: because.

    Remediation: change it.

    Example: an example.
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
        ({"doc": "Only a summary."}, "missing ['Why', 'Remediation', 'Example']"),
        ({"doc": GOOD_DOC.replace("Example: an example.", "")}, "missing ['Example']"),
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
    assert (r.summary, r.why, r.remediation, r.example) == ("Summary line.", "because.", "change it.", "an example.")


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
