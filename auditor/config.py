"""The configuration file: ``kafka-audit.toml`` or ``[tool.kafka-audit]`` in pyproject.toml.

    select = ["REP", "PAR001"]          # codes, names or code prefixes (default: all)
    ignore = ["PAR007"]
    fail_on = "error"                   # default for --fail-on

    [severity]
    REP004 = "error"

    [params.THR003]                     # or [params.network-threads-low]
    cores_per_network_thread = 4

    [[exemptions]]
    rules = ["REP003"]                  # optional: all rules when absent
    cluster = "^dev-"                   # regex (search) on the cluster name; optional (dialect: auditor/exemptions.py)
    resource = "^scratch\\."            # regex (search) on the resource name; optional
    reason = "dev clusters run RF 1 by design"   # mandatory
    expires = 2027-01-31                # optional; an expired exemption no longer applies

Every rule reference is checked: an unknown one is a usage error (exit 2).
"""

from __future__ import annotations

import datetime as dt
import math
import re
import tomllib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType

from auditor import safe_io
from auditor.errors import UsageError
from auditor.exemptions import refusal
from auditor.findings import FAIL_ON, SEVERITIES
from auditor.registry import Rule, load_rules, resolve

MAX_CONFIG_BYTES = 16 * 1024 * 1024
# Rule parameters reach the engines as SQL literals compared with int columns: an integer
# parameter must fit a 32-bit int (every one is a count or a percentage), a float be finite.
PARAM_INT_MIN, PARAM_INT_MAX = -(2**31), 2**31 - 1
_KEYS = {"select", "ignore", "fail_on", "severity", "params", "exemptions"}


@dataclass(frozen=True)
class Exemption:
    reason: str
    rules: tuple[str, ...] = ()  # codes; empty = every rule
    cluster: str | None = None
    resource: str | None = None
    expires: dt.date | None = None

    def active(self, today: dt.date) -> bool:
        return self.expires is None or today <= self.expires


@dataclass
class AuditConfig:
    source: str = "defaults"
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    fail_on: str = "error"
    severity: dict[str, str] = field(default_factory=dict)  # code -> severity
    params: dict[str, dict] = field(default_factory=dict)  # code -> overrides
    exemptions: list[Exemption] = field(default_factory=list)
    # Each rule's parameters once bound (params_of); a replaced configuration starts empty.
    _bound: dict[str, MappingProxyType] = field(default_factory=dict, init=False, repr=False, compare=False)

    @cached_property
    def selected(self) -> tuple[str, ...]:
        """The codes select and ignore leave, in code order: resolved once per configuration
        (a changed selection is a new configuration: dataclasses.replace)."""
        all_rules = load_rules()
        chosen = (
            {r.code for ref in self.select for r in resolve(ref, self.source)}
            if self.select
            else set(all_rules)
        )
        chosen -= {r.code for ref in self.ignore for r in resolve(ref, self.source)}
        return tuple(sorted(chosen))

    def rules(self, scopes: tuple[str, ...] = ("cluster",)) -> list[Rule]:
        """Selected rules of the given scopes, in code order."""
        all_rules = load_rules()
        return [all_rules[c] for c in self.selected if all_rules[c].scope in scopes]

    def severity_of(self, rule: Rule) -> str:
        return self.severity.get(rule.code, rule.severity)

    def params_of(self, rule: Rule) -> MappingProxyType:
        """The rule's parameters for this configuration, bound (and validated) once."""
        if rule.code not in self._bound:
            self._bound[rule.code] = rule.bind(self.params.get(rule.code), self.source)
        return self._bound[rule.code]

    def active_exemptions(self, today: dt.date | None = None) -> tuple[list[Exemption], list[Exemption]]:
        today = today or dt.date.today()
        active = [e for e in self.exemptions if e.active(today)]
        return active, [e for e in self.exemptions if not e.active(today)]


def find_config(explicit: str | None, cwd: Path | None = None) -> AuditConfig:
    if explicit:
        path = Path(explicit)
        if not path.exists():
            raise UsageError(f"{path}: config file not found")
        return load_config(path)
    cwd = cwd or Path.cwd()
    if (cwd / "kafka-audit.toml").is_file():
        return load_config(cwd / "kafka-audit.toml")
    if (cwd / "pyproject.toml").is_file():
        try:
            data = _load_toml(safe_io.read_text(cwd / "pyproject.toml", limit=MAX_CONFIG_BYTES))
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError, TomlTooDeep):
            return AuditConfig()  # not ours to judge when it has no section for us
        section = data.get("tool", {}).get("kafka-audit")
        if isinstance(section, dict):
            return parse_config(section, f"{cwd / 'pyproject.toml'} [tool.kafka-audit]")
    return AuditConfig()


MAX_TOML_DEPTH = 32  # arrays and tables within one another; a configuration needs 4


class TomlTooDeep(ValueError):
    pass


def _load_toml(text: str) -> dict:
    """tomllib recurses once per nested array or inline table: 50,000 of them raised
    RecursionError, a traceback. Refused, as is anything nested deeper than MAX_TOML_DEPTH
    (which the code reading the values may recurse into)."""
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise TomlTooDeep(f"arrays or tables nested more than {MAX_TOML_DEPTH} deep: refused") from None
    stack = [(data, 1)]
    while stack:  # (measured without recursing)
        value, depth = stack.pop()
        if depth > MAX_TOML_DEPTH:
            raise TomlTooDeep(f"arrays or tables nested more than {MAX_TOML_DEPTH} deep: refused")
        children = value.values() if isinstance(value, dict) else value
        stack.extend((v, depth + 1) for v in children if isinstance(v, dict | list))
    return data


def load_config(path: Path) -> AuditConfig:
    try:
        data = _load_toml(safe_io.read_text(path, limit=MAX_CONFIG_BYTES))
    except TomlTooDeep as e:
        raise UsageError(f"{path}: {e}") from None
    except safe_io.FileRefused as e:  # a FIFO or a device (also behind a symlink), or huge
        raise UsageError(str(e)) from None
    except tomllib.TOMLDecodeError as e:
        raise UsageError(f"{path}: not valid TOML ({e})") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"{path}: unreadable ({e})") from None
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("kafka-audit", {})
    return parse_config(data, str(path))


def parse_config(data: dict, where: str) -> AuditConfig:
    unknown = set(data) - _KEYS
    if unknown:
        raise UsageError(f"{where}: unknown setting(s) {', '.join(sorted(unknown))}")
    cfg = AuditConfig(source=where)
    cfg.select = _str_list(data.get("select", []), where, "select")
    cfg.ignore = _str_list(data.get("ignore", []), where, "ignore")
    for ref in cfg.select + cfg.ignore:
        resolve(ref, where)
    cfg.fail_on = data.get("fail_on", cfg.fail_on)
    if cfg.fail_on not in FAIL_ON:
        raise UsageError(f"{where}: fail_on must be one of {', '.join(FAIL_ON)}")
    for ref, sev in _table(data, "severity", where).items():
        if sev not in SEVERITIES:
            raise UsageError(f"{where}: severity of {ref} must be one of {', '.join(SEVERITIES)}")
        for r in resolve(ref, where):
            cfg.severity[r.code] = sev
    for ref, overrides in _table(data, "params", where).items():
        rules = resolve(ref, where)
        if len(rules) != 1 or not isinstance(overrides, dict):
            raise UsageError(f"{where}: [params.{ref}] must name one rule and hold its parameters")
        rules[0].bind(overrides, where)  # validate now, not mid-run
        for key, value in overrides.items():
            _check_param_range(value, f"{where}: [params.{ref}] {key}")
        cfg.params[rules[0].code] = dict(overrides)
    exemptions = data.get("exemptions", [])
    if not isinstance(exemptions, list):
        raise UsageError(f"{where}: exemptions must be an array of tables ([[exemptions]])")
    cfg.exemptions = [_exemption(e, i, where) for i, e in enumerate(exemptions, 1)]
    return cfg


def _exemption(raw, index: int, where: str) -> Exemption:
    at = f"{where}: exemption #{index}"
    if not isinstance(raw, dict):
        raise UsageError(f"{at} must be a table")
    unknown = set(raw) - {"rules", "cluster", "resource", "reason", "expires"}
    if unknown:
        raise UsageError(f"{at}: unknown key(s) {', '.join(sorted(unknown))}")
    reason = raw.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise UsageError(f"{at} needs a reason")
    codes = tuple(
        sorted({r.code for ref in _str_list(raw.get("rules", []), at, "rules") for r in resolve(ref, at)})
    )
    for key in ("cluster", "resource"):
        pattern = raw.get(key)
        if pattern is not None:
            if not isinstance(pattern, str):
                raise UsageError(f"{at}: {key} must be a regular expression string")
            problem = refusal(pattern)
            if problem:
                raise UsageError(f"{at}: {key} {problem}: {pattern!r} (see auditor/exemptions.py)")
    expires = raw.get("expires")
    if isinstance(expires, dt.datetime):  # (a datetime is a date too): which day would 23:30-05:00 be?
        raise UsageError(
            f"{at}: expires must be a date (YYYY-MM-DD), not a date and time ({expires.isoformat()[:40]})"
        )
    if isinstance(expires, str):
        try:  # (fromisoformat alone also reads 20270131 and 2027-W05-1)
            if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", expires):
                raise ValueError(expires)
            expires = dt.date.fromisoformat(expires)
        except ValueError:
            raise UsageError(f"{at}: expires must be a date (YYYY-MM-DD)") from None
    if expires is not None and not isinstance(expires, dt.date):
        raise UsageError(f"{at}: expires must be a date (YYYY-MM-DD), not {_toml_type(expires)}")
    return Exemption(reason.strip(), codes, raw.get("cluster"), raw.get("resource"), expires)


def _toml_type(value) -> str:
    if isinstance(value, dt.time):
        return f"a time of day ({value.isoformat()})"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"a number ({value!r})"[:60]
    return {list: "an array", dict: "a table"}.get(type(value), type(value).__name__)


def _check_param_range(value, what: str) -> None:
    """A rule parameter value (or each element of an array) within what the engines compare."""
    if isinstance(value, list | tuple):
        for v in value:
            _check_param_range(v, what)
    elif isinstance(value, bool):
        return
    elif isinstance(value, int):
        if not PARAM_INT_MIN <= value <= PARAM_INT_MAX:
            shown = str(value) if len(str(value)) <= 30 else str(value)[:30] + "..."
            raise UsageError(
                f"{what} = {shown} is out of range (an integer from {PARAM_INT_MIN} to {PARAM_INT_MAX})"
            )
    elif isinstance(value, float) and not math.isfinite(value):
        raise UsageError(f"{what} = {value!r} must be a finite number")


def _str_list(value, where: str, key: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{where}: {key} must be a list of rule codes or names")
    return tuple(value)


def _table(data: dict, key: str, where: str) -> dict:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise UsageError(f"{where}: [{key}] must be a table")
    return value


def with_rule_choice(
    cfg: AuditConfig, select: list[str] | None, ignore: list[str] | None, where: str
) -> AuditConfig:
    """The config with --select / --ignore applied as ruff does: --select replaces the config
    file's select, --ignore adds to its ignore (ignore wins over select). Values are
    comma-separated codes, names or code prefixes, as in the config file. The command line's
    options and the MCP server's arguments go through this."""
    import dataclasses

    def refs(values):
        return tuple(r.strip() for v in values or () for r in v.split(",") if r.strip())

    chosen, dropped = refs(select), refs(ignore)
    for ref in chosen + dropped:
        resolve(ref, where)  # an unknown code or name: one usage line
    if not (chosen or dropped):
        return cfg
    return dataclasses.replace(cfg, select=chosen or cfg.select, ignore=tuple(cfg.ignore) + dropped)
