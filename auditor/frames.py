"""DataFrame helpers shared by the engine and the checks: outside auditor/engine, so that
the checks (which the engine's callers load through the registry) never import the engine."""

from __future__ import annotations

from sqlframe.base import functions as F


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
