"""Compiling a plan without copying what cannot change.

sqlframe copies the whole sqlglot expression tree on every DataFrame operation, and sqlglot's
node copy deep-copies each node's ``meta`` dict (source positions, sqlframe's display names)
with ``copy.deepcopy``: about 4.4 million small dicts of ints and strings for the catalogue's
plans, nearly half of all compile time (cProfile of `check` with no plans, bench/RESULTS.md
issue 46). A deep copy of a dict or list whose items are all immutable scalars is a new
container with the same items, so ``fast_deepcopy`` makes exactly that and hands everything
else to ``copy.deepcopy``. ``install`` puts it in place of the name sqlglot's expression module
copies with; with any other sqlglot, where that name is not ``copy.deepcopy``, it does
nothing (compiling is only slower). The SQL is the same byte for byte either way
(tests/test_plan_cache.py), and plans are keyed by sqlglot's version (auditor/engine/plans.py).
"""

from __future__ import annotations

import copy

_SCALARS = frozenset({str, int, float, bool, type(None)})


def fast_deepcopy(value, memo=None):
    """``copy.deepcopy(value, memo)``, without its per-item work for a dict or list of scalars."""
    kind = type(value)
    # (the type tests run in C: a generator over the items was a third of this function's time)
    if kind is dict:
        if _SCALARS.issuperset(map(type, value)) and _SCALARS.issuperset(map(type, value.values())):
            return dict(value)
    elif kind is list and _SCALARS.issuperset(map(type, value)):
        return list(value)
    return copy.deepcopy(value, memo)


def install() -> bool:
    """Use ``fast_deepcopy`` in sqlglot's expression module; whether it is in place."""
    try:
        from sqlglot.expressions import core
    except ImportError:
        return False
    if core.__dict__.get("deepcopy") is copy.deepcopy:
        core.deepcopy = fast_deepcopy
    return core.__dict__.get("deepcopy") is fast_deepcopy
