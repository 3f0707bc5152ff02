"""A Terraform plan as JSON (``terraform show -json plan.out``): variables, ``for_each`` and
modules already resolved by Terraform.

Recognised by content (``format_version`` with ``resource_changes`` or ``planned_values``).
Each resource change that creates or updates (``change.after``; deletions are passed over) a
resource of the kinds table (auditor/lint/formats/_tf_kinds.py: the same readers as for HCL)
is read through :class:`PlanBody`. A finding is located at the line of the resource's
``"address"`` in the plan file, and names the address. A value known only after apply
(``after_unknown``) is reported as not evaluated. One ``aws_msk_configuration`` and one
``aws_msk_cluster`` in a plan are linked (the cluster's ARN reference is unknown until apply).
"""

from __future__ import annotations

import json
import re

from auditor import safe_json
from auditor.collectors.files import parse_properties
from auditor.lint.formats._tf_kinds import KINDS, Out, finish
from auditor.lint.key_rules import rules_reading
from auditor.lint.model import INT32_MAX, INT32_MIN, FileRows, LintInputError, Source

NAME = "terraform plan"
UNIT = "file"
SUFFIXES = (".json",)
MAX_BYTES = 256 * 1024 * 1024
_MARK = re.compile(r'"format_version"\s*:')


def recognise(src: Source) -> bool:
    if src.suffix not in SUFFIXES:
        return False
    head = src.head(64 * 1024)
    return bool(_MARK.search(head)) and ("resource_changes" in head or "planned_values" in head)


def _changes(plan: dict) -> list[tuple[str, str, dict, dict]]:
    """(address, type, after, after_unknown) of every resource created or updated."""
    out = []
    for rc in plan.get("resource_changes") or []:
        change = rc.get("change") or {}
        actions = change.get("actions") or []
        if actions == ["delete"] or not isinstance(change.get("after"), dict):
            continue
        out.append(
            (rc.get("address", "?"), rc.get("type", ""), change["after"], change.get("after_unknown") or {})
        )
    if out or plan.get("resource_changes"):
        return out

    def walk(module: dict):
        for r in module.get("resources") or []:
            if r.get("mode", "managed") == "managed" and isinstance(r.get("values"), dict):
                out.append((r.get("address", "?"), r.get("type", ""), r["values"], {}))
        for child in module.get("child_modules") or []:
            walk(child)

    walk((plan.get("planned_values") or {}).get("root_module") or {})
    return out


def _first(v):
    """A nested block in a plan is a list of objects: its first, or None."""
    if isinstance(v, list):
        v = v[0] if v else None
    return v if isinstance(v, dict) else None


class PlanBody:
    """One resource of a plan (or a nested block of it) for the kinds table (_tf_kinds.Body):
    values from ``change.after``, every one at the line of the resource's address."""

    def __init__(self, file: str, address: str, line: int, after: dict, unknown, out: Out):
        self.file, self.address, self.line, self.after, self.out = file, address, line, after, out
        self.unknown = unknown if isinstance(unknown, dict) else {}

    def has(self, attr: str) -> bool:
        return self.after.get(attr) is not None or self.unknown.get(attr) is True

    def attr_line(self, attr: str) -> int:
        return self.line

    def value(self, attr: str, needed: str):
        if self.unknown.get(attr) is True:
            consequence = f"{needed} not applied to it" if needed else "the resource is not linted"
            self.out.warn(self.line, f"{self.address} {attr} is known only after apply: {consequence}")
            return None
        return self.after.get(attr)

    def integer(self, attr: str, needed: str) -> int | None:
        v = self.value(attr, needed)
        if v is None:
            return None
        try:
            number = int(str(v)) if not isinstance(v, bool | list | dict) else None
        except ValueError:
            number = None
        if number is None:
            raise LintInputError(f"{self.file}:{self.line}: {self.address}: {v!r} is not an integer"[:300])
        if not INT32_MIN <= number <= INT32_MAX:
            raise LintInputError(f"{self.file}:{self.line}: {self.address}: {number} is out of range")
        return number

    def text(self, attr: str, needed: str) -> str | None:
        v = self.value(attr, needed)
        return None if v is None else _text(v)

    def block(self, name: str) -> PlanBody | None:
        after = _first(self.after.get(name))
        if after is None:
            return None
        return PlanBody(
            self.file, self.address, self.line, after, _first(self.unknown.get(name)) or {}, self.out
        )

    def reference(self, block: str, attr: str) -> str | None:
        b = _first(self.after.get(block))
        present = b is not None or self.unknown.get(block) is not None
        return "linked" if present else None

    def entries(self, attr: str, scope: str, underscore: bool = False):
        out: dict[str, tuple[str, int]] = {}
        unevaluated: dict[str, int] = {}
        if attr == "":
            values, unknown = self.after, self.unknown
        else:
            values = self.value(attr, f"the rules on its {scope} configuration")
            unknown = self.unknown.get(attr) if isinstance(self.unknown.get(attr), dict) else {}
            if isinstance(values, str):  # aws_msk_topic: jsonencode({...})
                try:
                    values = json.loads(values)
                except ValueError:
                    values = None
        for key, value in (values or {}).items() if isinstance(values, dict) else ():
            name = str(key).replace("_", ".") if underscore else str(key)
            if isinstance(value, list | dict):
                continue  # a nested block (Aiven's kafka_user_config siblings), not a setting
            if unknown.get(key) is True:
                self.out.warn(
                    self.line,
                    f"{self.address} {attr or 'config'} {name} is known only after apply: "
                    f"{rules_reading(name, scope)} not applied to it",
                )
                unevaluated[name] = self.line
            elif value is not None:
                out[name] = (_text(value), self.line)
        for key, flag in unknown.items():  # unknown keys with no value yet
            name = str(key).replace("_", ".") if underscore else str(key)
            if flag is True and name not in unevaluated and key not in (values or {}):
                unevaluated[name] = self.line
        return out, unevaluated

    def properties(self, attr: str):
        props = self.value(attr, "the broker rules")
        if props is None:
            return None
        entries, problems = parse_properties(str(props))
        if problems:
            raise LintInputError(f"{self.file}:{self.line}: {self.address} {attr}: {problems[0].message}")
        return {e.key: (e.value, self.line) for e in entries}, {}


def read(src: Source) -> FileRows:
    from auditor import safe_io

    try:
        text = safe_io.read_text(src.path, limit=MAX_BYTES)
    except safe_io.FileRefused as e:
        raise LintInputError(str(e).replace(str(src.path), src.file, 1)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise LintInputError(f"{src.file}: unreadable ({getattr(e, 'strerror', None) or e})") from None
    try:
        plan = safe_json.loads(text, src.file)
    except safe_json.JSONTooDeep as e:
        raise LintInputError(str(e)) from None
    except json.JSONDecodeError as e:
        raise LintInputError(f"{src.file}:{e.lineno}: not valid JSON: {e.msg}") from None
    if not isinstance(plan, dict):
        raise LintInputError(f"{src.file}:1: a Terraform plan is a JSON object")
    rows = FileRows()
    out = Out(src.file, rows, kind="terraform-plan")
    lines = _address_lines(text)
    kafka_seen = False
    for address, rtype, after, unknown in _changes(plan):
        kind = KINDS.get(rtype)
        if kind is None:
            continue
        kafka_seen = True
        kind.read(PlanBody(src.file, address, lines.get(address, 1), after, unknown, out), out)
    finish(out, plan=True)
    if not kafka_seen:
        rows.skipped = f"{src.file}: skipped: a Terraform plan without a Kafka resource lint reads"
        rows.nothing_kafka = True
    return rows


def _address_lines(text: str) -> dict[str, int]:
    """address -> the line of its first ``"address": "..."`` (resource_changes come after
    planned_values in Terraform's output, so the planned value's line is the one given)."""
    out: dict[str, int] = {}
    for m in re.finditer(r'"address"\s*:\s*"((?:[^"\\]|\\.)*)"', text):
        address = json.loads(f'"{m.group(1)}"')
        out.setdefault(address, text.count("\n", 0, m.start()) + 1)
    return out


def _text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)
