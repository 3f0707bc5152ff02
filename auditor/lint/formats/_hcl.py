"""HCL (Terraform) read into located blocks and attributes, and the static part of its
expressions evaluated.

The parser is python-hcl2 (a maintained, pure-Python HCL2 grammar on lark; see the README
for why): its raw lark tree keeps the line of every token, which the dict API it also offers
does not. Terraform's JSON syntax (``.tf.json``) is read into the same blocks
(:func:`parse_json`), each value a :class:`JsonExpr` at its line, whose strings are templates
as in Terraform. Evaluated statically, and nothing else: literals, lists and maps, a string's
``${...}`` parts when each is evaluable, ``var.NAME`` (its ``default``, or a ``.tfvars``
given on the command line), ``local.NAME`` (when the local is itself evaluable),
``path.module``, ``each.key``/``each.value``/``count.index`` of the instance being read,
attribute and index access into evaluated maps and lists, ``for`` expressions and
conditionals over evaluated values, ``merge()`` of maps, ``jsonencode``/``jsondecode``/
``tostring``/``tonumber``/``lower``/``upper``/``length``/``keys``/``values``/``lookup``/
``try``-free conversions, ``file()`` of a file inside the directories given to lint (regular
files only, size-limited: auditor/safe_io.py), unary minus and arithmetic on numbers.
Anything else (``module.x``, a resource attribute, a data source, another function) is an
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


def parse_json(root, ctx) -> list[Block]:
    """The blocks of a ``.tf.json`` file (Terraform's JSON configuration syntax), from its
    composed document: ``resource``/``data`` (TYPE -> NAME -> body), ``module``/``variable``
    /``output``/``provider`` (NAME -> body), ``locals``; each value a :class:`JsonExpr` at
    its key's line. An object (or a list of objects) in a body is also a nested block of
    that name (JSON cannot tell a block from a map: the reader asks for the one it needs).
    HclError when the document is not a JSON object."""
    import yaml

    from auditor.safe_yaml import line

    if not isinstance(root, yaml.MappingNode):
        raise HclError(
            getattr(getattr(root, "start_mark", None), "line", 0) + 1, "a .tf.json file is a JSON object"
        )
    top = Block("", [], 1)

    def bodies(node):
        return node.value if isinstance(node, yaml.SequenceNode) else [node]

    def fill(block: Block, node, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise HclError(block.line, f"blocks nested deeper than {MAX_DEPTH} levels: refused")
        if not isinstance(node, yaml.MappingNode):
            return
        for k, v in node.value:
            name = str(k.value)
            if name == "//":
                continue  # a comment
            block.attributes[name] = Attribute(name, JsonExpr(v, ctx), line(k))
            for body in bodies(v):
                if isinstance(body, yaml.MappingNode):
                    sub = Block(name, [], line(k))
                    fill(sub, body, depth + 1)
                    block.blocks.append(sub)

    for k, v in root.value:
        kind = str(k.value)
        if kind in ("resource", "data"):
            for type_node, names in v.value if isinstance(v, yaml.MappingNode) else []:
                for name_node, body in names.value if isinstance(names, yaml.MappingNode) else []:
                    for one in bodies(body):
                        b = Block(kind, [str(type_node.value), str(name_node.value)], line(name_node))
                        fill(b, one, 1)
                        top.blocks.append(b)
        elif kind in ("module", "variable", "output", "provider"):
            for name_node, body in v.value if isinstance(v, yaml.MappingNode) else []:
                for one in bodies(body):
                    b = Block(kind, [str(name_node.value)], line(name_node))
                    fill(b, one, 1)
                    top.blocks.append(b)
        elif kind == "locals":
            for one in bodies(v):
                b = Block("locals", [], line(k))
                if isinstance(one, yaml.MappingNode):
                    for name_node, value in one.value:
                        b.attributes[str(name_node.value)] = Attribute(
                            str(name_node.value), JsonExpr(value, ctx), line(name_node)
                        )
                top.blocks.append(b)
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
    """What ``var.``, ``local.`` and ``path.module`` stand for in one module (a directory of
    .tf files), and where ``file()`` may read."""

    text: dict[str, str] = field(default_factory=dict)  # file -> its text, for quoting expressions
    variables: dict[str, object] = field(default_factory=dict)  # name -> value (tfvars win over defaults)
    undefined: set[str] = field(default_factory=set)  # declared without a default, no tfvars value
    locals: dict[str, Attribute] = field(default_factory=dict)
    local_files: dict[str, str] = field(default_factory=dict)
    module_dir: str | None = None  # path.module, as lint names the directory
    cwd: str | None = None  # the root module's directory: file() paths are relative to it
    roots: tuple[str, ...] = ()  # absolute directories file() may read under (lint's inputs)
    why: dict[str, str] = field(default_factory=dict)  # variable -> why it has no value (module inputs)


@dataclass(frozen=True)
class JsonExpr:
    """A value of Terraform's JSON syntax (``.tf.json``): a node of the composed JSON document
    (auditor/safe_yaml.py) and the file's scalar reader. Strings are templates (``${...}``)."""

    node: object
    ctx: object  # auditor.lint.yaml_fields.YamlFile

    @property
    def line(self) -> int:
        return getattr(getattr(self.node, "start_mark", None), "line", 0) + 1


MAX_FILE_BYTES = 16 * 1024 * 1024  # file(): what Terraform itself would read into memory


class Evaluator:
    def __init__(self, scope: Scope, file: str, bindings: dict | None = None, text: str | None = None):
        self.scope, self.file = scope, file
        self.text = text if text is not None else scope.text.get(file, "")
        self.bindings: dict[str, object] = dict(bindings or {})  # each, count, for-expression symbols
        self._busy: set[str] = set()

    def bound(self, **symbols) -> Evaluator:
        """The same evaluator with more symbols bound (each, count.index, a for's variables)."""
        other = Evaluator(self.scope, self.file, {**self.bindings, **symbols}, self.text)
        other._busy = self._busy
        return other

    def source(self, tree, limit: int = 80) -> str:
        """The expression as written."""
        if isinstance(tree, JsonExpr):
            shown = str(getattr(tree.node, "value", "{...}"))
            shown = shown if isinstance(getattr(tree.node, "value", None), str) else "{...}"
        else:
            meta = getattr(tree, "meta", None)
            if meta is None or getattr(meta, "empty", True):
                return "?"
            shown = self.text[meta.start_pos : meta.end_pos]
        shown = " ".join(shown.split())
        return shown if len(shown) <= limit else shown[: limit - 3] + "..."

    def _un(self, tree, why: str = "") -> Unevaluated:
        line = tree.line if isinstance(tree, JsonExpr) else getattr(getattr(tree, "meta", None), "line", 0)
        return Unevaluated(self.source(tree), line or 0, why)

    def value(self, tree, depth: int = 0):
        """The expression's value, or an Unevaluated."""
        from lark import Token, Tree

        if depth > MAX_DEPTH:
            return self._un(tree, "nested too deep")
        if isinstance(tree, JsonExpr):
            return self._json(tree, depth)
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
                return self.template(body, tree, depth)
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
        if data == "conditional":
            parts = [c for c in kids if isinstance(c, Tree)]
            cond = self.value(parts[0], depth + 1)
            if isinstance(cond, Unevaluated):
                return Unevaluated(
                    self.source(tree), tree.meta.line, cond.why or f"{cond.text} is not evaluated"
                )
            if not isinstance(cond, bool):
                return self._un(tree, "a condition that is not a boolean")
            return self.value(parts[1] if cond else parts[2], depth + 1)
        if data == "get_attr_expr_term":
            return self._get_attr(tree, kids, depth)
        if data == "index_expr_term":
            return self._index(tree, kids, depth)
        if data == "identifier":
            name = _name(tree)
            if name in self.bindings:
                return self.bindings[name]
            return self._un(tree, f"{name} is not a value lint knows here")
        if data in ("for_tuple_expr", "for_object_expr"):
            return self._for(tree, kids, depth)
        if data == "function_call":
            return self._call(tree, kids, depth)
        return self._un(tree)

    def _un_token(self, token) -> Unevaluated:
        return Unevaluated(str(token)[:80], getattr(token, "line", 0) or 0)

    def template(self, text: str, where=None, depth: int = 0):
        """A string template (``...${expr}...``: a heredoc line, a .tf.json string) evaluated
        as Terraform would, or an Unevaluated showing it as written."""
        import hcl2
        from lark.exceptions import LarkError

        line = (
            where.line if isinstance(where, JsonExpr) else getattr(getattr(where, "meta", None), "line", 0)
        ) or 0
        shown = " ".join(text.split())[:80]
        if "%{" in text:
            return Unevaluated(shown, line, "a template directive")
        quoted = '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
        source = f"x = {quoted}\n"
        try:
            tree = hcl2.parses_to_tree(source)
        except (LarkError, RecursionError):
            return Unevaluated(shown, line, "not a template lint can read")
        attr = next(c for c in tree.children[0].children if getattr(c, "data", None) == "attribute")
        sub = Evaluator(self.scope, self.file, self.bindings, source)
        sub._busy = self._busy
        v = sub.value(attr.children[-1], depth + 1)
        if isinstance(v, Unevaluated):
            return Unevaluated(shown, line, v.why)
        return v

    def _json(self, expr: JsonExpr, depth: int):
        import yaml

        node = expr.node
        if isinstance(node, yaml.SequenceNode):
            items = [self._json(JsonExpr(n, expr.ctx), depth + 1) for n in node.value]
            bad = next((i for i in items if isinstance(i, Unevaluated)), None)
            return bad if bad is not None else items
        if isinstance(node, yaml.MappingNode):
            out = {}
            for k, v in node.value:
                key = self._json(JsonExpr(k, expr.ctx), depth + 1)
                value = self._json(JsonExpr(v, expr.ctx), depth + 1)
                for x in (key, value):
                    if isinstance(x, Unevaluated):
                        return x
                out[_as_text(key)] = value
            return out
        value = expr.ctx.scalar(node)
        if isinstance(value, str) and ("${" in value or "%{" in value):
            return self.template(value, expr, depth)
        if isinstance(value, str):
            return value.replace("$${", "${").replace("%%{", "%{")
        return value

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

        if isinstance(key_tree, JsonExpr):
            v = self.value(key_tree, depth + 1)
            return v if isinstance(v, Unevaluated) else _as_text(v)
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
        if numbers and op in ("<", "<=", ">", ">="):
            return {"<": left < right, "<=": left <= right, ">": left > right, ">=": left >= right}[op]
        if op == "==":
            return left == right
        if op == "!=":
            return left != right
        if op in ("&&", "||") and isinstance(left, bool) and isinstance(right, bool):
            return (left and right) if op == "&&" else (left or right)
        return self._un(tree)

    def _root(self, tree) -> str | None:
        """The identifier an attribute chain starts from (var, local, each ...), else None."""
        from lark import Tree

        first = tree.children[0] if isinstance(tree, Tree) and tree.data == "expr_term" else None
        return _name(first) if isinstance(first, Tree) and first.data == "identifier" else None

    def _get_attr(self, tree, kids, depth):
        """var.NAME, local.NAME, path.module, each.key/value, count.index, a bound symbol's
        attribute, an attribute of an evaluated map; anything else (module.x, data.x, a
        resource's attribute) is not evaluated."""
        from lark import Tree

        base, attr = kids[0], kids[1]
        name = _name(next(c for c in attr.children if isinstance(c, Tree)))
        root = self._root(base)
        if root == "var":
            if name in self.scope.variables:
                return self.scope.variables[name]
            why = self.scope.why.get(name) or (
                f"var.{name} has no default and no .tfvars value was given"
                if name in self.scope.undefined
                else f"var.{name} is declared in no .tf file of this directory and no .tfvars value was given"
            )
            return self._un(tree, why)
        if root == "local":
            return self._local(tree, name, depth)
        if root == "path":
            if name in ("module", "root") and self.scope.module_dir is not None:
                return self.scope.module_dir
            return self._un(tree, f"path.{name} is known only when Terraform runs")
        if root in ("each", "count") and root not in self.bindings:
            return self._un(tree, f"{root}.{name} is known only for the instances Terraform makes")
        if root is not None and root not in self.bindings:
            return self._un(tree, f"{root} is known only when Terraform runs")
        v = self.value(base, depth + 1)
        if isinstance(v, Unevaluated):
            return Unevaluated(self.source(tree), tree.meta.line, v.why or f"{v.text} is not evaluated")
        if isinstance(v, dict) and name in v:
            return v[name]
        return self._un(tree, f"it has no attribute {name}")

    def _index(self, tree, kids, depth):
        from lark import Tree

        base = self.value(kids[0], depth + 1)
        index_tree = (
            next((c for c in kids[1].children if isinstance(c, Tree)), None) if len(kids) > 1 else None
        )
        if index_tree is None:
            return self._un(tree)
        index = self.value(index_tree, depth + 1)
        for v in (base, index):
            if isinstance(v, Unevaluated):
                return Unevaluated(self.source(tree), tree.meta.line, v.why or f"{v.text} is not evaluated")
        try:
            if isinstance(base, dict):
                return base[_as_text(index)]
            if isinstance(base, list) and isinstance(index, int) and not isinstance(index, bool):
                return base[index]
        except (KeyError, IndexError):
            pass
        return self._un(tree, "no such element")

    def _local(self, tree, name: str, depth: int):
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
            return self._un(tree, f"local.{name} = {v.text}" + (f" ({v.why})" if v.why else ""))
        return v

    def _for(self, tree, kids, depth):
        """``[for x in C : V if COND]`` and ``{for k, v in C : K => V if COND}`` over an
        evaluated collection (no ``...`` grouping)."""
        from lark import Token, Tree

        if any(isinstance(c, Token) and str(c) == "..." for c in tree.children):
            return self._un(tree, "grouping (...) in a for expression")
        intro = next(c for c in kids if isinstance(c, Tree) and c.data == "for_intro")
        names = [_name(c) for c in intro.children if isinstance(c, Tree) and c.data == "identifier"]
        source = next(c for c in intro.children if isinstance(c, Tree) and c.data != "identifier")
        collection = self.value(source, depth + 1)
        if isinstance(collection, Unevaluated):
            return Unevaluated(
                self.source(tree), tree.meta.line, collection.why or f"{collection.text} is not evaluated"
            )
        body = [c for c in kids if isinstance(c, Tree) and c.data not in ("for_intro", "for_cond")]
        cond = next((c for c in kids if isinstance(c, Tree) and c.data == "for_cond"), None)
        cond_expr = (
            next((c for c in cond.children if isinstance(c, Tree)), None) if cond is not None else None
        )
        pairs = (
            list(collection.items()) if isinstance(collection, dict) else list(enumerate(collection or []))
        )
        out_list, out_map = [], {}
        for k, v in pairs:
            symbols = {names[0]: k, names[1]: v} if len(names) == 2 else {names[0]: v}
            ev = self.bound(**symbols)
            if cond_expr is not None:
                keep = ev.value(cond_expr, depth + 1)
                if isinstance(keep, Unevaluated) or not isinstance(keep, bool):
                    return self._un(tree, "its condition is not evaluated")
                if not keep:
                    continue
            values = [ev.value(b, depth + 1) for b in body]
            bad = next((x for x in values if isinstance(x, Unevaluated)), None)
            if bad is not None:
                return Unevaluated(
                    self.source(tree), tree.meta.line, bad.why or f"{bad.text} is not evaluated"
                )
            if tree.data == "for_object_expr":
                out_map[_as_text(values[0])] = values[1]
            else:
                out_list.append(values[0])
        return out_map if tree.data == "for_object_expr" else out_list

    def _call(self, tree, kids, depth):
        from lark import Tree

        fname = _name(kids[0])
        args_tree = next((c for c in kids[1:] if isinstance(c, Tree) and c.data == "arguments"), None)
        arg_trees = (
            [c for c in args_tree.children if isinstance(c, Tree) and c.data != "new_line_or_comment"]
            if args_tree
            else []
        )
        if fname not in _FUNCTIONS and fname != "file":
            return self._un(tree, f"{fname}() is not evaluated statically")
        args = [self.value(a, depth + 1) for a in arg_trees]
        bad = next((a for a in args if isinstance(a, Unevaluated)), None)
        if bad is not None:
            return Unevaluated(self.source(tree), tree.meta.line, bad.why or f"{bad.text} is not evaluated")
        if fname == "file":
            return self._file(tree, args)
        try:
            return _FUNCTIONS[fname](*args)
        except (TypeError, ValueError, KeyError, IndexError, RecursionError):
            return self._un(tree, f"{fname}() of these arguments")

    def _file(self, tree, args):
        """file(PATH): a regular file inside the directories lint was given, relative to the
        module's directory; otherwise not evaluated, saying why (never read)."""
        import os

        from auditor import safe_io

        if len(args) != 1 or not isinstance(args[0], str):
            return self._un(tree, "file() takes one path")
        base = self.scope.cwd or self.scope.module_dir or "."
        path = os.path.normpath(os.path.join(os.path.abspath(base), args[0]))
        roots = [os.path.abspath(r) for r in self.scope.roots]
        if not any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots):
            return self._un(tree, f"{args[0]} is outside the files and directories given to lint: not read")
        try:
            return safe_io.read_text(path, limit=MAX_FILE_BYTES)
        except (OSError, UnicodeDecodeError) as e:
            reason = getattr(e, "reason", None) or getattr(e, "strerror", None) or "unreadable"
            return self._un(tree, f"{args[0]}: {reason}")


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


def _jsondecode(text):
    import json

    from auditor import safe_json

    if not isinstance(text, str):
        raise TypeError("jsondecode() of a non-string")
    try:
        return safe_json.loads(text, "jsondecode()")
    except (json.JSONDecodeError, safe_json.JSONTooDeep) as e:
        raise ValueError(str(e)) from None


def _lookup(m, key, *default):
    if not isinstance(m, dict):
        raise TypeError("lookup() of a non-map")
    if key in m:
        return m[key]
    if default:
        return default[0]
    raise KeyError(key)


_FUNCTIONS = {
    "merge": _merge,
    "jsonencode": lambda v: json.dumps(v, separators=(",", ":")),
    "jsondecode": _jsondecode,
    "tostring": lambda v: _as_text(v),
    "tonumber": _tonumber,
    "lower": lambda v: str(v).lower(),
    "upper": lambda v: str(v).upper(),
    "length": lambda v: len(v),
    "tomap": lambda v: dict(v),
    "tolist": lambda v: list(v),
    "toset": lambda v: list(dict.fromkeys(v)),
    "keys": lambda m: sorted(m),
    "values": lambda m: [m[k] for k in sorted(m)],
    "lookup": _lookup,
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
