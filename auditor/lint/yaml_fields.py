"""Typed fields of lint's YAML inputs, located: the context one YAML file is read in.

A :class:`YamlFile` is made per file read and passed to every format reader (no module
state): it names the file in errors and holds the file's scalar constructor
(:class:`auditor.safe_yaml.Scalars`)."""

from __future__ import annotations

from auditor import safe_io, safe_yaml
from auditor.lint.model import INT32_MAX, INT32_MIN, LintInputError
from auditor.safe_yaml import line, mapping

__all__ = ["YamlDoc", "YamlFile", "key_line", "line", "mapping", "read_yaml_text", "source_documents"]

MAX_YAML_BYTES = 64 * 1024 * 1024


def read_yaml_text(path, file: str) -> str:
    """A YAML file's text; LintInputError (one line naming the file) when it cannot be read."""
    try:
        return safe_io.read_text(path, limit=MAX_YAML_BYTES)
    except safe_io.FileRefused as e:  # a FIFO or a device (also behind a symlink), or huge
        raise LintInputError(str(e).replace(str(path), file, 1)) from None
    except UnicodeDecodeError as e:
        raise LintInputError(f"{file}: not UTF-8 text ({e.reason})") from None
    except OSError as e:
        raise LintInputError(f"{file}: unreadable ({e.strerror or e})") from None


def read_yaml_documents(path, file: str) -> tuple[str, list]:
    """A YAML file's text and its documents as node trees, empty documents left out
    (auditor/safe_yaml.py: depth, alias and tag guards); one-line LintInputError otherwise."""
    text = read_yaml_text(path, file)
    try:
        docs = safe_yaml.compose_all(text, file)
    except safe_yaml.YAMLInputError as e:
        raise LintInputError(str(e)) from None
    return text, [d for d in docs if d is not None]


def source_documents(src) -> tuple[str, list]:
    """A lint Source's text and YAML documents: read from its file, or from the text it holds
    (standard input, a neutralised template: then every placeholder left in a value is
    reported and read as absent, auditor/lint/templating.py)."""
    if src.text is None:
        return read_yaml_documents(src.path, src.file)
    try:
        docs = safe_yaml.compose_all(src.text, src.file)
    except safe_yaml.YAMLInputError as e:
        raise LintInputError(str(e)) from None
    docs = [d for d in docs if d is not None]
    if src.template is not None:
        from auditor.lint.templating import neutralise_nodes

        neutralise_nodes(docs, src.template, src.file)
    return src.text, docs


def key_line(parent, key: str, default: int) -> int:
    """The line of ``key:`` in a mapping node (where a finding about a key left unset points)."""
    for k, _v in getattr(parent, "value", []) if mapping(parent) is not None else []:
        if str(getattr(k, "value", "")) == key:
            return line(k)
    return default


class YamlFile:
    def __init__(self, file: str):
        self.file = file
        self._scalars = safe_yaml.Scalars(file)

    def scalar(self, node):
        """A scalar node's value as YAML 1.1 reads it (int, bool, null, str)."""
        try:
            return self._scalars.value(node)
        except safe_yaml.YAMLInputError as e:
            raise LintInputError(str(e)) from None

    def text(self, node) -> str | None:
        """A scalar as the tools' Java and Go readers see it as text (true, 3, 0.5); None if absent."""
        try:
            return self._scalars.text(node)
        except safe_yaml.YAMLInputError as e:
            raise LintInputError(str(e)) from None

    def int_field(self, node, what: str) -> int | None:
        import yaml

        file = self.file
        if node is None:
            return None
        value = self.scalar(node)
        if value is None:
            return None
        if isinstance(value, bool) or isinstance(value, yaml.Node) or not isinstance(value, int | str):
            raise LintInputError(f"{file}:{line(node)}: {what} must be an integer")
        text = str(value).strip() if isinstance(value, str) else None
        if text is not None and len(text) > 40:  # (int() refuses 4300+ digits with a ValueError of its own)
            raise LintInputError(
                f"{file}:{line(node)}: {what} must be an integer from {INT32_MIN} to {INT32_MAX}, "
                f"not {text[:40] + '...'!r}"
            )
        try:
            number = int(text) if text is not None else value
        except ValueError:
            raise LintInputError(f"{file}:{line(node)}: {what} must be an integer, not {value!r}") from None
        if not INT32_MIN <= number <= INT32_MAX:  # the snapshot column is an int (Kafka's: an int32 too)
            shown = str(number) if len(str(number)) <= 40 else str(number)[:40] + "..."
            raise LintInputError(
                f"{file}:{line(node)}: {what} {shown} is out of range "
                f"(an integer from {INT32_MIN} to {INT32_MAX})"
            )
        return number

    def config_value(self, node, key: str) -> str | None:
        import yaml

        if isinstance(node, yaml.SequenceNode):  # cleanup.policy: [compact, delete]
            return ",".join(self.config_value(n, key) or "" for n in node.value)
        if isinstance(node, yaml.MappingNode):
            raise LintInputError(f"{self.file}:{line(node)}: config {key} must be a value, not a mapping")
        return self.text(node)

    def configs(self, node) -> dict[str, tuple[str, int]]:
        if node is None or self.scalar(node) is None:
            return {}
        m = mapping(node)
        if m is None:
            raise LintInputError(f"{self.file}:{line(node)}: topic configs must be a mapping of key: value")
        out = {}
        key_lines = {str(k.value): line(k) for k, _v in node.value}
        for key, vnode in m.items():
            value = self.config_value(vnode, key)
            if value is not None:
                out[key] = (value, key_lines[key])
        return out

    def name_of(self, node, where_line: int, what: str) -> str:
        name = self.scalar(node)
        if not isinstance(name, str | int) or isinstance(name, bool) or str(name) == "":
            raise LintInputError(f"{self.file}:{where_line}: {what}")
        return str(name)


class YamlDoc:
    """One document of a YAML file, as the document formats see it: the node, its mapping
    (None for a list or a scalar), its apiVersion and kind ("" when absent), and the file's
    context."""

    def __init__(self, node, ctx: YamlFile):
        import yaml

        self.node, self.ctx = node, ctx
        self.m = None if isinstance(node, yaml.SequenceNode) else mapping(node)
        self.api = str(ctx.scalar(self.m.get("apiVersion")) or "") if self.m is not None else ""
        self.kind = str(ctx.scalar(self.m.get("kind")) or "") if self.m is not None else ""

    @property
    def line(self) -> int:
        return line(self.node)

    @property
    def file(self) -> str:
        return self.ctx.file

    def is_sequence(self) -> bool:
        import yaml

        return isinstance(self.node, yaml.SequenceNode)
