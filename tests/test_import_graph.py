"""The import graph of auditor/ and checks/ has no cycle, imports inside functions included.

A cycle works only while one side imports lazily, and breaks as soon as someone moves an
import; auditor/registry.py and auditor/declarations.py say how the rules avoid one."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("auditor", "checks")


def module_files() -> dict[str, Path]:
    files = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return files


def import_graph() -> dict[str, set[str]]:
    """module -> the modules of auditor/ and checks/ it imports, at any depth of its code.
    ``from X import n`` is an import of module X.n when there is one, else of X."""
    files = module_files()
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in node.names:
                    targets.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in files else base)
        graph[module] = {t for t in targets if t in files and t != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            nxt = next(successors, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_imports_inside_functions():
    graph = import_graph()
    assert "checks" in graph["auditor.registry"]  # rule_modules imports it inside the function
    assert "auditor.declarations" in graph["checks.replication"]


def test_no_import_cycle_in_auditor_and_checks():
    assert cycles(import_graph()) == []


# The shared transforms are the rules' public library: the engine's root-cause stage reads them
# (as the rules do), never a rule module.
SHARED_TRANSFORMS = {"checks.transforms", "checks._api", "checks._defaults", "checks._kafka_keys"}


def reached(graph: dict[str, set[str]], module: str) -> set[str]:
    """Every module ``module`` imports, directly or through others."""
    seen: set[str] = set()
    todo = [module]
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def test_rules_and_engine_do_not_import_the_registry_or_the_checks():
    """The one-way direction: rule modules import declarations, never the registry; the engine
    never imports a rule module (it gets the rule sources from the registry)."""
    graph = import_graph()
    for module, targets in graph.items():
        if module.startswith("checks"):
            assert "auditor.registry" not in targets, module
        if module.startswith("auditor.engine"):
            assert not {t for t in targets if t.startswith("checks")} - SHARED_TRANSFORMS, module


def test_findings_and_reports_never_reach_the_engine_or_the_rules():
    """Data flows down: collectors -> snapshot -> engine/checks -> findings -> render. The
    result types and the renderers are read by every layer above them, so importing them must
    not load the engine, the rules, the collectors or a command."""
    graph = import_graph()
    above = (
        "auditor.engine",
        "checks",
        "auditor.registry",
        "auditor.collectors",
        "auditor.cli",
        "auditor.mcp",
        "auditor.commands",
        "auditor.lint",
        "auditor.commands.preflight",
        "auditor.commands.fleet",
        "auditor.collectors.inventory",
    )
    for module in graph:
        if module.startswith(("auditor.findings", "auditor.causes", "auditor.render")):
            upward = sorted(t for t in reached(graph, module) if t.startswith(above))
            assert not upward, f"{module} reaches {upward}"


# The floors above the engine, top to bottom: a module may import its own floor and those below,
# never one above (commands on top; collectors -> snapshot -> engine/checks -> findings -> render).
ABOVE = {
    # the two faces of the commands, side by side: neither imports the other
    "auditor.mcp": ("auditor.cli",),
    "auditor.commands": ("auditor.cli", "auditor.mcp"),
    "auditor.lint": ("auditor.cli", "auditor.mcp", "auditor.commands"),
    "auditor.engine": (
        "auditor.cli",
        "auditor.mcp",
        "auditor.commands",
        "auditor.lint",
        "auditor.collectors",
        "auditor.render",
    ),
    "auditor.collectors": (
        "auditor.cli",
        "auditor.mcp",
        "auditor.commands",
        "auditor.lint",
        "auditor.engine",
        "auditor.render",
        "auditor.registry",
        "checks",
    ),
    "auditor.snapshot": (
        "auditor.cli",
        "auditor.mcp",
        "auditor.commands",
        "auditor.lint",
        "auditor.engine",
        "auditor.collectors",
    ),
    "checks": (
        "auditor.cli",
        "auditor.mcp",
        "auditor.commands",
        "auditor.lint",
        "auditor.engine",
        "auditor.collectors",
    ),
}


def test_no_import_runs_upward():
    graph = import_graph()
    upward = []
    for module, targets in graph.items():
        for floor, above in ABOVE.items():
            if module == floor or module.startswith(floor + "."):
                upward += [f"{module} -> {t}" for t in targets if t.startswith(above)]
        if not module.startswith("auditor.cli"):
            upward += [f"{module} -> {t}" for t in targets if t.startswith("auditor.cli")]
    assert upward == []
