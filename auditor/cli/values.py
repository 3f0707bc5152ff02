"""Option values converted the way typer converts them, without building a pydantic adapter
for each option of the command being run.

typer 0.29 converts every option's value (even one not given) through a pydantic TypeAdapter
built for that option on first use: importing pydantic and building a dozen adapters was ~1.5x
of `kafka-audit --version` on every `lint` or `check` before it read a file (bench/RESULTS.md,
issue 46). For the value kinds where those adapters only wrap typer's own conversion (a
missing value, a string, a path, a choice, a list of those, a number's default), ``TyperValues`` calls typer's
conversion functions directly, with their checks and errors. Anything else (numbers, a value
typer's conversion refuses, an annotation not listed here) goes through typer's own adapter,
so the result and every error message stay typer's (tests/test_cli_startup.py compares both
ways on every option of every command).
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

_TYPERS = object()  # "not one of ours: typer's adapter decides"


class TyperValues:
    """A typer parameter's runtime conversion (typer.core's ``_runtime_param``)."""

    def __init__(self, param):
        self.param = param
        self._typers = None

    def coerce(self, value: Any, param, ctx) -> Any:
        if value is None:  # as typer's RuntimeParam.coerce, without building the adapter first
            return () if param.multiple or param.nargs == -1 else None
        annotation = param.type_descriptor.annotation
        try:
            if get_origin(annotation) is list and isinstance(value, (list, tuple)):
                (item,) = get_args(annotation)
                done = [_leaf(item, v, param, ctx) for v in value]
                if _TYPERS not in done:
                    return done
            elif not isinstance(value, (list, tuple)):
                done = _leaf(annotation, value, param, ctx)
                if done is not _TYPERS:
                    return done
        except ValueError:
            pass  # typer's adapter raises its own error for it
        return self.typers().coerce(value, param=param, ctx=ctx)

    def typers(self):
        if self._typers is None:
            from typer._coercion import build_runtime_param

            self._typers = build_runtime_param(self.param.type_descriptor)
        return self._typers

    def __getattr__(self, name: str):  # anything else typer asks of a runtime parameter
        return getattr(self.typers(), name)


def _leaf(annotation, value, param, ctx):
    from typer._param_types import coerce_cli_choice, coerce_cli_path, routes_to_path

    info = param.type_descriptor.parameter_info
    if info.parser is not None:
        return _TYPERS
    if annotation is str:
        return value if isinstance(value, str) else _TYPERS
    if annotation in (int, float) and type(value) is annotation and info.min is None and info.max is None:
        return value  # a default as declared (a value given on the command line is a string)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return coerce_cli_choice(
            value, choices=tuple(annotation), case_sensitive=info.case_sensitive, ctx=ctx
        )
    if routes_to_path(annotation, info) and annotation is Path and info.path_type is None:
        if not isinstance(value, (str, Path)):
            return _TYPERS
        # pydantic's Path from a string is Path(string); the rest is typer's own check.
        return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
    return _TYPERS


def convert_without_adapters(command) -> None:
    """Give every typer parameter of ``command`` (and its subcommands) TyperValues."""
    from auditor.cli.help import each_parameter

    each_parameter(command, _convert)


def _convert(param) -> None:
    if hasattr(param, "get_runtime_param") and getattr(param, "_runtime_param", None) is None:
        param._runtime_param = TyperValues(param)
