"""The rule catalogue: plugins add rules through an entry point, the lint layer's rule is
registered without a DataFrame, and building the checks runs no engine job (the shared
transforms the rules declare are materialised first)."""

from __future__ import annotations

import dataclasses
import re
import textwrap

import pytest

from auditor import registry
from auditor.commands.rules import render_list
from auditor.config import AuditConfig
from auditor.engine.duckdb_engine import DuckDBEngine
from auditor.engine.runner import compile_rules, run_audit
from auditor.errors import AuditorError
from auditor.registry import ENTRY_POINT_GROUP, load_rules, rule_sources
from auditor.snapshot.io import discover, open_snapshot
from tests.conftest import SAMPLE_FLEET

PLUGIN = '''
from auditor.declarations import rule
from checks._api import F, emit, ev, text
from checks.transforms import topic_settings


@rule("XMP001", "topic-count-demo", "info", category="demo", uses=(topic_settings,))
def topic_count(t, p):
    """A demo plugin rule: one finding per cluster with its topic count.

    Why: proves a plugin package adds rules through its entry point.

    Remediation: none, it is a demo.

    Example: a cluster with 3 topics.

    References:
    - Python packaging: entry points <https://packaging.python.org/en/latest/specifications/entry-points/>
    """
    counts = t.derived(topic_settings).groupBy("cluster_id").agg(F.count(F.lit(1)).alias("topics"))
    return emit(counts, "cluster", F.col("cluster_id"), text("topics: ", F.col("topics")), ev(topics=F.col("topics")))
'''


def _distribution(root, module: str, source: str | None) -> None:
    """A fake installed distribution on ``root`` whose entry point names ``module``."""
    info = root / "kafka_audit_demo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: kafka-audit-demo-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINT_GROUP}]\ndemo = {module}\n")
    if source is not None:
        (root / f"{module}.py").write_text(textwrap.dedent(source))


@pytest.fixture
def fresh_registry(monkeypatch):
    """load_rules collects afresh into an empty registry; the real one is restored after."""
    load_rules()
    monkeypatch.setattr(registry, "REGISTRY", {})
    monkeypatch.setattr(registry, "_loaded_from", ())
    monkeypatch.setenv("KAFKA_AUDIT_PLAN_CACHE", "off")  # the cached fingerprint predates the plugin


def _sample_refs():
    return [open_snapshot(d) for d in discover(SAMPLE_FLEET)][:2]


def test_a_plugin_adds_a_rule_through_its_entry_point(tmp_path, monkeypatch, fresh_registry):
    _distribution(tmp_path, "kafka_audit_demo_plugin", PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    rules = load_rules()
    assert rules["XMP001"].category == "demo" and {"REP001", "CFG900"} <= set(rules)
    assert tmp_path / "kafka_audit_demo_plugin.py" in rule_sources()  # the plan cache hashes it
    assert "XMP001" in render_list("json")
    refs = _sample_refs()
    with DuckDBEngine(plan_cache=False) as engine:
        result = run_audit(engine, refs, AuditConfig(select=("XMP001",)))
    assert sorted(f.cluster_id for f in result.findings) == sorted(r.manifest.cluster_id for r in refs)
    assert all(f.rule == "XMP001" and f.message.startswith("topics: ") for f in result.findings)


def test_a_broken_plugin_is_named_in_one_line(tmp_path, monkeypatch, fresh_registry):
    _distribution(tmp_path, "kafka_audit_missing_module", None)
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        AuditorError,
        match=r"^rule plugin 'demo' \(kafka_audit_missing_module, entry point "
        r"kafka_auditor\.rules\): ModuleNotFoundError",
    ) as raised:
        load_rules()
    assert "\n" not in str(raised.value)


def test_a_plugin_rule_may_not_take_a_built_in_prefix(fresh_registry):
    def check(t, p):
        """Summary.

        Why: a reason.

        Remediation: a fix.

        Example: an example.
        """

    with pytest.raises(ValueError, match="not in the RULES.md catalogue"):
        registry.rule("REP099", "rep-lookalike", "info", category="demo")(check)


def test_the_lint_layers_rule_is_registered_and_documented_without_a_dataframe():
    cfg900 = load_rules()["CFG900"]
    assert (cfg900.func, cfg900.produced_by, cfg900.scope) == (None, "lint", "change")
    assert cfg900.summary.startswith("An inline suppression comment matched no finding")
    assert '"code": "CFG900"' in render_list("json")
    # The runner has nothing to build for it: no findings table, no error.
    with DuckDBEngine(plan_cache=False) as engine:
        tables = engine.load(_sample_refs()[:1])
        assert compile_rules(tables, [cfg900], AuditConfig()) == []


class RecordingDuckDB(DuckDBEngine):
    """DuckDB that records the engine tables it computes, in order."""

    def __init__(self):
        super().__init__(plan_cache=False)
        self.created: list[str] = []

    def create(self, name, sql, *, reuse=False, deferred=False, awaited=False):
        self.created.append(name)
        super().create(name, sql, reuse=reuse, deferred=deferred, awaited=awaited)


# Rules whose transforms read other transforms, up to four levels deep (REP001: topic_durability
# reads topic_replication and topic_settings, which reads cluster_settings, then broker_settings,
# then kafka_defaults), one reading two transforms at once (PAR006) and one of the maintenance
# scope (MNT001, restart_impact). The whole catalogue is compiled the same way, under the same
# guard (Tables.building: a check reading a transform it did not declare fails), every time the
# plan bundle is built (auditor/engine/plan_bundle.py runs every scope), and
# test_plan_cache.test_bundle_is_built_from_this_code fails unless the bundle is from this code.
NESTED = ("REP001", "PAR006", "MNT001")


def test_shared_transforms_are_materialised_before_any_check_is_built():
    """Each transform is computed once, all of them (and those they read) before the first
    rule's findings, so no check's DataFrame build ran an engine job."""
    catalogue = load_rules()
    rules = [catalogue[code] for code in NESTED]
    with RecordingDuckDB() as engine:
        compile_rules(engine.load(_sample_refs()), rules, AuditConfig())
        created = engine.created
    transforms = [n for n in created if n.startswith("derived_")]
    first_rule = next(i for i, n in enumerate(created) if n.startswith("findings_"))
    assert transforms and len(set(transforms)) == len(transforms)
    assert all(created.index(n) < first_rule for n in transforms)
    declared = {"derived_" + t.__name__ for r in rules for t in r.uses}
    # the declared ones and, before them, what they read
    assert declared < set(transforms) and {"derived_kafka_defaults", "derived_topic_settings"} <= set(
        transforms
    )
    assert created.index("derived_kafka_defaults") < created.index("derived_broker_settings")
    assert created.index("derived_topic_settings") < created.index("derived_topic_durability")


@pytest.mark.parametrize("fused", [True, False], ids=["fused", "per-rule"])
def test_a_check_reading_an_undeclared_transform_fails_while_it_is_built(fused):
    """Even when the rules planned with it (a fused plan's other members, which declare it)
    materialised the transform: the rule is not evaluated, with the reason (and the plan
    bundle's build fails on it, auditor/engine/plan_bundle.py)."""
    undeclared = dataclasses.replace(load_rules()["REP003"], uses=())  # it reads topic_durability
    with DuckDBEngine(plan_cache=False, fused=fused) as engine:
        tables = engine.load(_sample_refs()[:1])
        compile_rules(tables, [undeclared], AuditConfig())
        engine.settle()
    assert re.fullmatch(
        r"TypeError: rule REP003: reads shared transform 'topic_durability' that its "
        r"@rule\(uses=\.\.\.\) does not declare",
        tables.failed["REP003"],
    )
