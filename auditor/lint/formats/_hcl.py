"""HCL (Terraform) read into located blocks and attributes, and the static part of its
expressions evaluated.

The parser is python-hcl2 (a maintained, pure-Python HCL2 grammar on lark; see the README
for why): its raw lark tree keeps the line of every token, which the dict API it also offers
does not. Evaluated statically, and nothing else: literals, lists and maps, a string's
``${...}`` parts when each is evaluable, ``var.NAME`` (its ``default``, or a ``.tfvars``
given on the command line), ``local.NAME`` (when the local is itself evaluable),
``merge()`` of maps, ``jsonencode``/``tostring``/``tonumber``/``lower``/``upper``/
``length``, unary minus and arithmetic on numbers. Anything else (``module.x``, ``each.value``,
a resource attribute, a conditional, a ``for`` expression, another function) is an
:class:`Unevaluated` naming the expression as written and its line: never guessed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

MAX_DEPTH = 64  # local -> local -> ... chains and nested calls: refused past this


class HclError(ValueError):
    """Not valid HCL: ``line``, and one line saying what."""

    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line, self.message = line, message


@dataclass(frozen=True)
class Unevaluated:
    text: str  # the expression as written (shortened)
    line: int
    why: str = ""  # what stopped it: "var.x has no default" ...

    def describe(self) -> str:
        return self.text + (f" ({self.why})" if self.why else "")


@dataclass
class Attribute:
    name: str
    expr: object  # the lark tree of the expression
    line: int


@dataclass
class Block:
    type: str
    labels: list[str]
    line: int
    attributes: dict[str, Attribute] = field(default_factory=dict)
    blocks: list[Block] = field(default_factory=list)

    def block(self, type_: str) -> Block | None:
        return next((b for b in self.blocks if b.type == type_), None)


def parse(text: str) -> list[Block]:
    """The top-level blocks of an HCL file (its top-level attributes, as in a .tfvars file,
    are one Block of type ``""``). HclError on bad HCL."""
    import hcl2
    from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput

    try:
        tree = hcl2.parses_to_tree(text if text.endswith("\n") else text + "\n")
    except UnexpectedCharacters as e:
        raise HclError(e.line, f"unexpected character {text_at(text, e.line, e.column)!r}") from None
    except UnexpectedInput as e:
        token = getattr(e, "token", None)
        shown = (
            f"unexpected {str(token)[:30]!r}"
            if token is not None and str(token)
            else "unexpected end of file"
        )
        raise HclError(getattr(e, "line", 1) or 1, shown) from None
    except (LarkError, RecursionError) as e:
        raise HclError(1, " ".join(str(e).split())[:160] or "syntax error") from None
    body = tree.children[0]
    top = Block("", [], 1)
    _fill(top, body, text, 0)
    return [top, *top.blocks]


def text_at(text: str, line: int, column: int) -> str:
    lines = text.splitlines()
    if 1 <= line <= len(lines) and 1 <= column <= len(lines[line - 1]):
        return lines[line - 1][column - 1 : column + 9]
    return ""


def _name(tree) -> str:
    """An identifier, keyword or string label as text."""
    from lark import Token, Tree

    if isinstance(tree, Token):
        return str(tree)
    if isinstance(tree, Tree):
        if tree.data == "string":
            return "".join(str(c.children[0]) for c in tree.children if isinstance(c, Tree))
        return "".join(_name(c) for c in tree.children)
    return str(tree)


def _fill(block: Block, body, text: str, depth: int) -> None:
    from lark import Tree

    if depth > MAX_DEPTH:
        raise HclError(block.line, f"blocks nested deeper than {MAX_DEPTH} levels: refused")
    for child in body.children:
        if not isinstance(child, Tree):
            continue
        if child.data == "attribute":
            name = _name(child.children[0])
            expr = child.children[-1]
            block.attributes[name] = Attribute(name, expr, child.meta.line)
        elif child.data == "block":
            parts = [c for c in child.children if isinstance(c, Tree)]
            inner = next(c for c in parts if c.data == "body")
            labels = [_name(c) for c in parts if c is not inner and c.data != "new_line_or_comment"]
            sub = Block(labels[0], labels[1:], child.meta.line)
            _fill(sub, inner, text, depth + 1)
            block.blocks.append(sub)


@dataclass
class Scope:
    """What ``var.`` and ``local.`` stand for in one module (a directory of .tf files)."""

    text: dict[str, str] = field(default_factory=dict)  # file -> its text, for quoting expressions
    variables: dict[str, object] = field(default_factory=dict)  # name -> value (tfvars win over defaults)
    undefined: set[str] = field(default_factory=set)  # declared without a default, no tfvars value
    locals: dict[str, Attribute] = field(default_factory=dict)
    local_files: dict[str, str] = field(default_factory=dict)


class Evaluator:
    def __init__(self, scope: Scope, file: str):
        self.scope, self.file = scope, file
        self.text = scope.text.get(file, "")
        self._busy: set[str] = set()

    def source(self, tree, limit: int = 80) -> str:
        """The expression as written."""
        meta = getattr(tree, "meta", None)
        if meta is None or getattr(meta, "empty", True):
            return "?"
        shown = " ".join(self.text[meta.start_pos : meta.end_pos].split())
        return shown if len(shown) <= limit else shown[: limit - 3] + "..."

    def _un(self, tree, why: str = "") -> Unevaluated:
        return Unevaluated(self.source(tree), getattr(tree.meta, "line", 0) or 0, why)

    def value(self, tree, depth: int = 0):
        """The expression's value, or an Unevaluated."""
        from lark import Token, Tree

        if depth > MAX_DEPTH:
            return self._un(tree, "nested too deep")
        if isinstance(tree, Token):
            return self._un_token(tree)
        data = tree.data
        kids = [c for c in tree.children if not (isinstance(c, Tree) and c.data == "new_line_or_comment")]
        if data == "expr_term":
            inner = [c for c in kids if not (isinstance(c, Token) and c.type in ("LPAR", "RPAR"))]
            return self.value(inner[0], depth + 1) if inner else self._un(tree)
        if data == "int_lit":
            return int(str(kids[0]))
        if data == "float_lit":
            return float(str(kids[0]))
        if data == "literal_value":
            return {"true": True, "false": False, "null": None}[str(kids[0])]
        if data == "string":
            return self._string(tree, kids, depth)
        if data in ("heredoc_template", "heredoc_template_trim"):
            body = heredoc_body(str(kids[0]), trim=data == "heredoc_template_trim")
            if "${" in body or "%{" in body:
                return self._un(tree, "a template with interpolations")
            return body
        if data == "tuple":
            items = [self.value(c, depth + 1) for c in kids if isinstance(c, Tree)]
            bad = next((i for i in items if isinstance(i, Unevaluated)), None)
            return bad if bad is not None else items
        if data == "object":
            return self._object(tree, kids, depth)
        if data == "unary_op":
            v = self.value(kids[1], depth + 1)
            op = str(kids[0])
            if isinstance(v, Unevaluated):
                return v
            if op == "-" and isinstance(v, int | float) and not isinstance(v, bool):
                return -v
            if op == "!" and isinstance(v, bool):
                return not v
            return self._un(tree)
        if data == "binary_op":
            return self._binary(tree, kids, depth)
        if data == "get_attr_expr_term":
            return self._reference(tree, kids, depth)
        if data == "function_call":
            return self._call(tree, kids, depth)
        return self._un(tree)

    def _un_token(self, token) -> Unevaluated:
        return Unevaluated(str(token)[:80], getattr(token, "line", 0) or 0)

    def _string(self, tree, kids, depth):
        from lark import Tree

        out = []
        for part in kids:
            if not isinstance(part, Tree):
                continue  # the quotes
            inner = part.children[0]
            if isinstance(inner, Tree) and inner.data == "interpolation":
                expr = next(c for c in inner.children if isinstance(c, Tree))
                v = self.value(expr, depth + 1)
                if isinstance(v, Unevaluated):
                    return Unevaluated(self.source(tree), tree.meta.line, v.why)
                if isinstance(v, list | dict):
                    return self._un(tree)
                out.append(_as_text(v))
            elif isinstance(inner, Tree):
                return self._un(tree, "a template directive")
            else:
                raw = str(inner)
                if raw.startswith("$${") or raw.startswith("%%{"):
                    raw = raw[1:]
                out.append(_unescape(raw))
        return "".join(out)

    def _object(self, tree, kids, depth):
        from lark import Tree

        out = {}
        for elem in kids:
            if not isinstance(elem, Tree) or elem.data != "object_elem":
                continue
            parts = [c for c in elem.children if isinstance(c, Tree)]
            key_tree, val_tree = parts[0], parts[-1]
            key = self._key(key_tree, depth)
            if isinstance(key, Unevaluated):
                return key
            v = self.value(val_tree, depth + 1)
            if isinstance(v, Unevaluated):
                return v
            out[key] = v
        return out

    def _key(self, key_tree, depth):
        """An object key: a bare name is the name itself (not a variable)."""
        from lark import Tree

        inner = key_tree.children[0]
        if isinstance(inner, Tree) and inner.data == "expr_term":
            first = inner.children[0]
            if isinstance(first, Tree) and first.data == "identifier":
                return _name(first)
        if isinstance(inner, Tree) and inner.data == "keyword":
            return _name(inner)
        v = self.value(inner, depth + 1)
        return v if isinstance(v, Unevaluated) else _as_text(v)

    def _binary(self, tree, kids, depth):
        left = self.value(kids[0], depth + 1)
        term = kids[1]
        op = _name(term.children[0])
        right = self.value([c for c in term.children[1:] if hasattr(c, "data")][-1], depth + 1)
        for v in (left, right):
            if isinstance(v, Unevaluated):
                return Unevaluated(self.source(tree), tree.meta.line, v.why or f"{v.text} is not evaluated")
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (left, right))
        if numbers and op in ("+", "-", "*"):
            return {"+": left + right, "-": left - right, "*": left * right}[op]
        if op == "==":
            return left == right
        if op == "!=":
            return left != right
        return self._un(tree)

    def _reference(self, tree, kids, depth):
        """var.NAME, local.NAME; anything else (module.x, each.value, a resource's attribute) is
        not evaluated."""
        from lark import Tree

        base, attr = kids[0], kids[1]
        first = base.children[0] if isinstance(base, Tree) and base.data == "expr_term" else None
        root = _name(first) if isinstance(first, Tree) and first.data == "identifier" else None
        name = _name(next(c for c in attr.children if isinstance(c, Tree)))
        if root == "var":
            if name in self.scope.variables:
                return self.scope.variables[name]
            why = (
                f"var.{name} has no default and no .tfvars value was given"
                if name in self.scope.undefined
                else f"var.{name} is declared in no .tf file of this directory and no .tfvars value was given"
            )
            return self._un(tree, why)
        if root == "local":
            local = self.scope.locals.get(name)
            if local is None:
                return self._un(tree, f"local.{name} is not defined here")
            if name in self._busy:
                return self._un(tree, f"local.{name} refers to itself")
            self._busy.add(name)
            try:
                other = Evaluator(self.scope, self.scope.local_files.get(name, self.file))
                other._busy = self._busy
                v = other.value(local.expr, depth + 1)
            finally:
                self._busy.discard(name)
            if isinstance(v, Unevaluated):
                return self._un(tree, f"local.{name} = {v.text}")
            return v
        return self._un(tree, f"{root or 'it'} is known only when Terraform runs" if root else "")

    def _call(self, tree, kids, depth):
        from lark import Tree

        fname = _name(kids[0])
        args_tree = next((c for c in kids[1:] if isinstance(c, Tree) and c.data == "arguments"), None)
        arg_trees = (
            [c for c in args_tree.children if isinstance(c, Tree) and c.data != "new_line_or_comment"]
            if args_tree
            else []
        )
        if fname not in _FUNCTIONS:
            return self._un(tree, f"{fname}() is not evaluated statically")
        args = [self.value(a, depth + 1) for a in arg_trees]
        bad = next((a for a in args if isinstance(a, Unevaluated)), None)
        if bad is not None:
            return Unevaluated(self.source(tree), tree.meta.line, bad.why or f"{bad.text} is not evaluated")
        try:
            return _FUNCTIONS[fname](*args)
        except (TypeError, ValueError, KeyError):
            return self._un(tree, f"{fname}() of these arguments")


def _merge(*maps):
    out = {}
    for m in maps:
        if m is None:
            continue
        if not isinstance(m, dict):
            raise TypeError("merge() of a non-map")
        out.update(m)
    return out


def _tonumber(v):
    if isinstance(v, int | float) and not isinstance(v, bool):
        return v
    text = str(v)
    return int(text) if text.lstrip("-").isdigit() else float(text)


_FUNCTIONS = {
    "merge": _merge,
    "jsonencode": lambda v: json.dumps(v, separators=(",", ":")),
    "tostring": lambda v: _as_text(v),
    "tonumber": _tonumber,
    "lower": lambda v: str(v).lower(),
    "upper": lambda v: str(v).upper(),
    "length": lambda v: len(v),
    "tomap": lambda v: dict(v),
    "tolist": lambda v: list(v),
}


def _as_text(v) -> str:
    """A value as Terraform turns it into a string (true, 3, 0.5)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return "" if v is None else str(v)


def _unescape(raw: str) -> str:
    if "\\" not in raw:
        return raw
    out, i = [], 0
    simple = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
    while i < len(raw):
        c = raw[i]
        if c == "\\" and i + 1 < len(raw) and raw[i + 1] in simple:
            out.append(simple[raw[i + 1]])
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def heredoc_body(token: str, trim: bool) -> str:
    """The text of a heredoc token (``<<EOT\\n...\\nEOT\\n``), the common indentation removed
    for ``<<-``. Its first line is the line after the one holding ``<<``."""
    lines = token.split("\n")
    body = lines[1:-2] if len(lines) >= 3 else []
    if trim:
        indents = [len(x) - len(x.lstrip(" \t")) for x in body if x.strip()]
        cut = min(indents, default=0)
        body = [x[cut:] for x in body]
    return "\n".join(body) + ("\n" if body else "")


def heredoc_token(tree):
    """The heredoc token of an expression that is only a heredoc, else None."""
    from lark import Token, Tree

    node = tree
    while isinstance(node, Tree) and node.data == "expr_term" and len(node.children) == 1:
        node = node.children[0]
    if isinstance(node, Tree) and node.data in ("heredoc_template", "heredoc_template_trim"):
        token = node.children[0]
        if isinstance(token, Token):
            return token, node.data == "heredoc_template_trim"
    return None
