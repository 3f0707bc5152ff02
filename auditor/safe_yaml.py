"""Reading YAML that nobody here wrote, safely: composed to located nodes, never constructed
into objects by tag.

Used by lint (auditor/lint) and the inventory (auditor/inventory.py). The public API:

- :func:`compose_all` (text, file) -> the documents' node trees, after :func:`check_shape`
  has refused, from the parser's events, nesting deeper than :data:`MAX_YAML_DEPTH` and
  alias bombs; bad YAML is a :class:`YAMLInputError` ``FILE:LINE: not valid YAML: what``;
- :func:`mapping`, :func:`line`: a mapping node as {key: node}, a node's 1-based line;
- :class:`Scalars`: a scalar node's value as YAML 1.1 reads it, one constructor per file
  read (no module state: two files may be read at once).

Composing never runs a constructor, so a tag (``!Ref``, ``!!python/object``) is only a name
on a node here; :meth:`Scalars.value` refuses tags it does not know, and a reader that knows
a dialect's tags (CloudFormation's) looks at ``node.tag`` before asking for a value.
"""

from __future__ import annotations

MAX_YAML_DEPTH = 100  # nested sequences/mappings: composing deeper ones recurses (libyaml: a segfault)
MAX_ALIAS_VALUES = 100_000  # values aliases stand for, all expanded: a billion-laughs bomb is refused


class YAMLInputError(ValueError):
    """YAML that cannot be read: one line, ``FILE:LINE: what``."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))


def loader():
    """The safe loader class (libyaml's when built with it)."""
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def check_shape(text: str, file: str) -> None:
    """Refuse, from the YAML events (the parser is iterative: any depth is safe to scan), a
    document nested deeper than MAX_YAML_DEPTH and aliases that stand for more than
    MAX_ALIAS_VALUES values in all (counting what an alias of an alias expands to): composing
    the first overflows the stack, walking the second (a billion laughs) never ends."""
    if plainly_shallow(text):
        return
    import yaml

    sizes: dict[str, int] = {}  # anchor -> how many values the anchored node holds, expanded
    stack: list[list] = []  # open collections: [anchor, values so far]
    expanded = 0
    try:
        for ev in yaml.parse(text, Loader=loader()):
            if isinstance(ev, yaml.CollectionStartEvent):
                if len(stack) >= MAX_YAML_DEPTH:
                    raise YAMLInputError(
                        f"{file}:{ev.start_mark.line + 1}: nesting deeper than {MAX_YAML_DEPTH} levels: refused"
                    )
                stack.append([ev.anchor, 1])
                continue
            if isinstance(ev, yaml.CollectionEndEvent):
                anchor, size = stack.pop()
            elif isinstance(ev, yaml.ScalarEvent):
                anchor, size = ev.anchor, 1
            elif isinstance(ev, yaml.AliasEvent):
                anchor, size = None, sizes.get(ev.anchor, 1)
                expanded += size
                if expanded > MAX_ALIAS_VALUES:
                    raise YAMLInputError(
                        f"{file}:{ev.start_mark.line + 1}: aliases expand to more than "
                        f"{MAX_ALIAS_VALUES} values: refused"
                    )
            else:
                continue  # stream and document events
            if anchor is not None:
                sizes[anchor] = size
            if stack:
                stack[-1][1] = min(stack[-1][1] + size, 1 << 62)

    except yaml.MarkedYAMLError as e:
        # PyYAML 6.0.4's libyaml has a nesting limit of its own (1000) that its scanner hits while
        # reading ahead, before the events reach the check above (MAX_YAML_DEPTH, lower): the same
        # refusal, said the same way whichever PyYAML parses.
        if "nesting depth" not in str(e.problem or ""):
            raise
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 1
        raise YAMLInputError(f"{file}:{line}: nesting deeper than {MAX_YAML_DEPTH} levels: refused") from None


def plainly_shallow(text: str) -> bool:
    """True when the text alone shows it holds no alias bomb and no nesting near
    MAX_YAML_DEPTH, so the event scan (as long as composing: the YAML read twice) is not
    needed. No anchor (``&``): nothing an alias can expand. Depth, bounded from above: a block
    collection nests in a more indented one, or a sequence in a mapping at the same indent
    (2 levels per column at most); on one line, a compact collection opens at each ``- ``,
    ``? `` or ``: `` (``? ? ? a`` nests three mappings without a dash or an indent), so every
    such character counts; and a flow collection opens at each bracket anywhere. Anything
    over the bound is scanned, never refused here."""
    if "&" in text:
        return False
    flows = text.count("[") + text.count("{")
    if flows >= MAX_YAML_DEPTH:
        return False
    deepest = 0
    for text_line in text.splitlines():
        body = text_line.lstrip(" ")
        indent = len(text_line) - len(body)
        compact = body.count("-") + body.count("?") + body.count(":")
        deepest = max(deepest, 2 * (indent + 1) + compact + 1)
        if deepest + flows >= MAX_YAML_DEPTH:
            return False
    return True


def compose_all(text: str, file: str) -> list:
    """The documents of ``text`` as node trees (an empty document: None), shape-checked
    first (the composer recurses per level). YAMLInputError on anything unreadable."""
    import yaml

    try:
        check_shape(text, file)
        docs = list(yaml.compose_all(text, Loader=loader()))
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = mark.line + 1 if mark else 1
        what = " ".join(str(e.problem or e.context or "syntax error").split())
        raise YAMLInputError(f"{file}:{where}: not valid YAML: {what}") from None
    except yaml.YAMLError as e:
        raise YAMLInputError(f"{file}:1: not valid YAML: {' '.join(str(e).split())}") from None
    refuse_python_tags(docs, file)
    return docs


def refuse_python_tags(docs, file: str) -> None:
    """A ``!!python/...`` tag (an object to construct, a function to call) is never
    configuration; composing never builds it, but a file of nothing else would read as a green
    "nothing recognised". YAMLInputError naming file:line."""
    import yaml

    stack = [d for d in docs if d is not None]
    while stack:  # iterative: no recursion is needed (the depth was bounded before composing)
        node = stack.pop()
        if str(node.tag).startswith("tag:yaml.org,2002:python/"):
            shown = "!!" + node.tag.removeprefix("tag:yaml.org,2002:")
            raise YAMLInputError(
                f"{file}:{node.start_mark.line + 1}: a Python tag ({shown[:80]}) is not configuration: refused"
            )
        if isinstance(node, yaml.MappingNode):
            stack.extend(x for kv in node.value for x in kv)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def mapping(node) -> dict | None:
    """A MappingNode as {key string: value node}; None for other nodes."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        return None
    out = {}
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode):
            out[str(k.value)] = v
    return out


def line(node) -> int:
    """The 1-based line a node starts on."""
    return node.start_mark.line + 1


class Scalars:
    """Scalar values of one file's nodes, as YAML 1.1 reads them (int, bool, null, str).

    One per file read: the constructor and the file named in errors belong to the read, not
    to the module."""

    def __init__(self, file: str):
        self.file = file
        self._constructor = None

    def value(self, node):
        """A scalar node's value; a non-scalar node is returned as it is (callers reject
        it); None for no node. YAMLInputError for an unknown tag or a value Python cannot
        hold (an int of 5000 digits, a date like 2026-02-30)."""
        import yaml

        if node is None:
            return None
        if not isinstance(node, yaml.ScalarNode):
            return node
        if node.tag == "tag:yaml.org,2002:str":
            return node.value
        if self._constructor is None:
            self._constructor = yaml.constructor.SafeConstructor()
        try:
            return self._constructor.construct_object(node)
        except yaml.YAMLError as e:  # an unknown tag (!Ref ...), a malformed timestamp
            what = " ".join(str(getattr(e, "problem", None) or e).split())
            raise YAMLInputError(f"{self.file}:{line(node)}: not valid YAML here: {what}") from None
        except (ValueError, OverflowError) as e:
            shown = node.value if len(node.value) <= 40 else node.value[:40] + "..."
            what = "more than 4300 digits" if "digits" in str(e) else " ".join(str(e).split())[:120]
            raise YAMLInputError(
                f"{self.file}:{line(node)}: value {shown!r} cannot be read ({what})"
            ) from None

    def text(self, node) -> str | None:
        """A scalar as Java and Go readers see it as text (true, 3, 0.5); None if absent or
        not a scalar."""
        import yaml

        if node is None or not isinstance(node, yaml.ScalarNode):
            return None
        value = self.value(node)
        if value is None:
            return None
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)
