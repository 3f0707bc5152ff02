"""Templates of Kafka configuration: lint what is literal, report every placeholder.

A file kept as a template (``kafka.yaml.tpl`` rendered by Terraform's ``templatefile`` or
``envsubst``, a Helm chart's ``templates/kafka.yaml``, an Ansible ``server.properties.j2``)
is read as the file it renders to, without rendering it:

- a line that holds nothing but template actions (``{{- if .Values.x }}``, ``{% for %}``,
  ``%{ if ... }``, ``{{- toYaml . | nindent 6 }}``) is blanked, so the rest parses and keeps its
  line numbers; one that outputs something (not a control action) is reported as not
  evaluated, named by the YAML key it sits under (``spec.kafka.config``);
- each inline placeholder (``{{ ... }}``, ``{% ... %}``, ``${...}``, ``$VAR``, ``<%= ... %>``,
  by the template language the suffix names) is replaced by a token before parsing, and every
  value holding one is reported as not evaluated, naming its field, and read as absent. Under
  a Kubernetes resource's ``metadata`` the text is kept as written (a name, a label: an
  identifier, and the same placeholder renders the same everywhere), still reported;
- Kafka's own ``${provider:path:key}`` references (config providers, KIP-297) are not
  placeholders: Kafka resolves them at runtime.

A file whose Kafka keys are all templated (nothing literal left to judge) is refused: a
warning naming it and its placeholders, an error under ``--strict``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

TOKEN = re.compile(r"__kafka_audit_tpl_(\d+)__")

# Inline placeholders by template language. ``${...}`` excludes Kafka's config-provider syntax
# ``${name:path:key}``; a bare ``$NAME`` (envsubst) only in .tpl files.
_GO = r"\{\{-?.*?-?\}\}"
_JINJA = r"\{%-?.*?-?%\}|\{#.*?#\}"
_TF = r"%\{.*?\}|\$\{(?![A-Za-z0-9_.-]+:)[^}\n]*\}"
_ENVSUBST = r"\$[A-Za-z_][A-Za-z0-9_]*"
_ERB = r"<%.*?%>"
LANGUAGES = {
    ".tpl": ("template", f"{_GO}|{_TF}|{_ENVSUBST}"),  # Terraform templatefile, envsubst, Helm
    ".tmpl": ("Go template", _GO),
    ".gotmpl": ("Go template", _GO),
    ".j2": ("Jinja template", f"{_GO}|{_JINJA}"),
    ".jinja": ("Jinja template", f"{_GO}|{_JINJA}"),
    ".jinja2": ("Jinja template", f"{_GO}|{_JINJA}"),
    ".erb": ("ERB template", _ERB),
    ".yaml": ("Helm template", _GO),  # a chart's templates/*.yaml: {{ }} only
    ".yml": ("Helm template", _GO),
}
# Actions that only steer rendering: blanked without a note.
_CONTROL = re.compile(
    r"^(\{\{-?\s*(if|else|end|with|range|define|block|/\*)|\{%-?\s*(if|elif|else|endif|for|endfor|set|"
    r"macro|endmacro|raw|endraw|block|endblock|with|endwith)|\{#|%\{|<%\s*(end|if|else|elsif|unless|"
    r"[a-z_.]+\.each)|<%#)"
)


@dataclass
class Template:
    """What neutralising a template left behind: the language, each token's expression, and
    the notes (line, message) on what is not evaluated."""

    language: str
    expressions: dict[str, str] = field(default_factory=dict)
    notes: list[tuple[int, str]] = field(default_factory=list)
    kafka_key_notes: list[tuple[int, str]] = field(
        default_factory=list
    )  # (line, templated Kafka key or block)

    def has_token(self, text: str | None) -> bool:
        return bool(text) and TOKEN.search(text) is not None

    def restore(self, text: str) -> str:
        """The text as written in the template (tokens back to their expressions)."""
        return TOKEN.sub(lambda m: self.expressions.get(m.group(0), m.group(0)), text)

    def note(self, file: str, line: int, what: str, expression: str, secret: bool = False) -> None:
        shown = " ".join(self.restore(expression).split())
        shown = shown if len(shown) <= 80 else shown[:77] + "..."
        if secret:  # a Kafka key whose value Kafka masks: only the placeholders are shown
            shown = " ".join(self.expressions.get(t.group(0), "") for t in TOKEN.finditer(expression))
            shown += " (the rest of a secret's value not shown)"
        self.notes.append(
            (line, f"{file}:{line}: {what} = {shown} is a {self.language} placeholder: not evaluated")
        )

    def notes_between(self, first: int, last: int) -> list[str]:
        return [m for line, m in self.notes if first <= line <= last]


def language_of(suffixes: list[str]) -> tuple[str, str] | None:
    """The template language of a file by its suffixes (``kafka.yaml.tpl`` -> .tpl), or None."""
    for s in reversed([s.lower() for s in suffixes[-2:]]):
        if s in LANGUAGES and s not in (".yaml", ".yml"):
            return LANGUAGES[s]
    return None


def inner_suffix(suffixes: list[str]) -> str | None:
    """The suffix of what a template renders to: ``kafka.yaml.tpl`` -> .yaml; None when the
    name does not say (``zone.tpl``)."""
    lowered = [s.lower() for s in suffixes]
    if len(lowered) >= 2 and lowered[-1] in LANGUAGES:
        return lowered[-2]
    return None


def neutralise(text: str, language: tuple[str, str], file: str) -> tuple[str, Template]:
    """The template's text with directive-only lines blanked and inline placeholders replaced
    by tokens (same lines), and the Template recording them."""
    name, pattern = language
    template = Template(name)
    inline = re.compile(pattern)
    out, blocks = [], []
    for number, raw in enumerate(text.split("\n"), 1):
        body = raw.strip()
        if body and not body.startswith("#") and not inline.sub("", body).strip():
            # Only template actions on this line: what it outputs cannot be known here.
            first = inline.search(body)
            if first is not None and not _CONTROL.match(first.group(0)):
                blocks.append((number, len(raw) - len(raw.lstrip()), body))
            out.append("")
            continue

        def token(m: re.Match) -> str:
            key = f"__kafka_audit_tpl_{len(template.expressions)}__"
            template.expressions[key] = m.group(0)
            return key

        out.append(inline.sub(token, raw))
    for number, indent, body in blocks:
        where = _enclosing_keys(out, number, indent)
        template.note(file, number, where, body)
        if where.rsplit(".", 1)[-1] in _CONFIG_BLOCKS:
            template.kafka_key_notes.append((number, where))
    return "\n".join(out), template


_KEY = re.compile(r"^(\s*)(?:-\s+)?([^\s#:][^:#]*?)\s*:(\s|$)")
_CONFIG_BLOCKS = ("config", "configs", "configOverrides", "server", "configurationOverrides")


def _enclosing_keys(lines: list[str], number: int, indent: int) -> str:
    """The YAML keys above line ``number`` at decreasing indentation (``spec.kafka.config``)."""
    path, limit = [], indent
    for candidate in reversed(lines[: number - 1]):
        m = _KEY.match(candidate)
        if m is None or candidate.lstrip().startswith("#"):
            continue
        depth = len(m.group(1))
        if depth < limit:
            path.insert(0, m.group(2).strip("\"'"))
            limit = depth
            if depth == 0:
                break
    return ".".join(path) or "the document"


def _secret(key: str) -> bool:
    from auditor.collectors._common import is_sensitive_key

    return is_sensitive_key(key)


def neutralise_nodes(docs: list, template: Template, file: str) -> None:
    """Every scalar holding a token: reported, then read as absent (null), or kept as written
    under ``metadata``; a mapping key holding one is reported and its entry dropped."""
    import yaml

    def walk(node, path: list[str], keep: bool) -> None:
        if isinstance(node, yaml.MappingNode):
            kept = []
            for k, v in node.value:
                key = str(getattr(k, "value", ""))
                if isinstance(k, yaml.ScalarNode) and template.has_token(key):
                    where = ".".join([*path, template.restore(key)])
                    template.note(file, k.start_mark.line + 1, where + " (a templated key)", key)
                    template.kafka_key_notes.append((k.start_mark.line + 1, where))
                    continue
                walk(v, [*path, key], keep or (not path and key == "metadata"))
                kept.append((k, v))
            node.value = kept
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, [*path[:-1], f"{path[-1]}[{i}]"] if path else [f"[{i}]"], keep)
        elif isinstance(node, yaml.ScalarNode) and template.has_token(node.value):
            where = ".".join(path) or "the document"
            in_config = any(p.split("[")[0] in _CONFIG_BLOCKS for p in path[-2:])
            template.note(file, node.start_mark.line + 1, where, node.value, in_config and _secret(path[-1]))
            if keep:
                node.value, node.tag, node.style = template.restore(node.value), "tag:yaml.org,2002:str", "'"
            else:
                node.value, node.tag, node.style = "", "tag:yaml.org,2002:null", None
                if any(p.split("[")[0] in _CONFIG_BLOCKS for p in path[-2:]):  # a Kafka key's value
                    template.kafka_key_notes.append((node.start_mark.line + 1, where))

    for doc in docs:
        if doc is not None:
            walk(doc, [], False)
