"""DataFrame helpers shared by the engine and the checks: outside auditor/engine, so that
the checks (which the engine's callers load through the registry) never import the engine.

``F`` and ``Window`` are sqlframe's ``functions`` module and ``Window`` class, imported on
first use. Why: with every plan from the bundle or the cache (any run after an install) no
DataFrame is built, and sqlframe with sqlglot is ~0.1 s of every `lint` and `check`
(bench/bench_startup.py); only a plan that must be compiled imports them.
"""

from __future__ import annotations

import importlib
from typing import Any


class _OnFirstUse:
    """Stands for ``module`` (or its attribute ``attr``), imported at the first attribute looked up."""

    def __init__(self, module: str, attr: str | None = None):
        self._where = (module, attr)
        self._target: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._target is None:
            if name.startswith("__"):  # a probe (the registry looks for __rule__), not a use
                raise AttributeError(name)
            module, attr = self._where
            target = importlib.import_module(module)
            self._target = getattr(target, attr) if attr else target
        return getattr(self._target, name)


F: Any = _OnFirstUse("sqlframe.base.functions")
Window: Any = _OnFirstUse("sqlframe.base.window", "Window")


def join(left, right, on, how: str = "inner"):
    """Join on equal key columns, keeping exactly one copy of each key (the left one).

    Use this instead of DataFrame.join(on=[...]): after a USING-style join sqlframe may
    resolve a key name to the right-hand table, which is null on unmatched rows of a left
    join. Here the right keys are renamed, compared explicitly and dropped, so no column
    name is ever ambiguous. Non-key columns must not collide (a ValueError says which).
    """
    keys = [on] if isinstance(on, str) else list(on)
    clash = (set(left.columns) & set(right.columns)) - set(keys)
    if clash:
        raise ValueError(f"join: columns on both sides besides the keys: {sorted(clash)}")
    left = left.select(*left.columns)  # one source for left[k], even after a crossJoin
    renamed = right.select(*[F.col(c).alias(f"__r_{c}") if c in keys else F.col(c) for c in right.columns])
    cond = None
    for k in keys:
        c = left[k] == renamed[f"__r_{k}"]
        cond = c if cond is None else cond & c
    return left.join(renamed, on=cond, how=how).drop(*[f"__r_{k}" for k in keys])


def rows_frame(session, rows: list[dict], schema: str):
    """A DataFrame of ``rows`` (dicts) with ``schema`` ("name type, ..."), for constant
    reference tables the checks join with (Kafka's known keys, its defaults).

    One JSON literal parsed into typed rows, not ``session.createDataFrame``'s VALUES list:
    DuckDB binds a VALUES list row by row, and the known-key ranges (463 rows of 8 columns)
    took 47-84 ms of every `lint` and `check` that way, against 3-4 ms from one literal
    (bench/RESULTS.md, session 12). Spark reads it as ``from_json`` of the literal; both
    engines give the declared types, nulls included."""
    import json

    fields = [part.strip().split(" ", 1) for part in schema.split(",")]
    names = [name for name, _ in fields]
    struct = "array<struct<" + ",".join(f"{name}:{typ.strip()}" for name, typ in fields) + ">>"
    text = json.dumps([{name: row.get(name) for name in names} for row in rows], separators=(",", ":"))
    parsed = session.range(1).select(F.explode(F.from_json(F.lit(text), struct)).alias("row"))
    return parsed.select(*[F.col("row").getField(name).alias(name) for name in names])
