#!/usr/bin/env python3
"""Extract the broker and topic configuration keys of every Apache Kafka release from
Kafka's own sources, and write ``auditor/data/kafka_configs.json``.

What it reads
-------------
For each release (final tags only, 0.10.0.0 up to the newest 4.x) it reads, at that
release's commit, the Java/Scala sources that define Kafka's ``ConfigDef``s and resolves
them the way the JVM would, without building or running anything:

- broker keys: ``KafkaConfig.configDef`` (``core/.../kafka/server/KafkaConfig.scala``; 4.x
  points it at ``AbstractKafkaConfig.CONFIG_DEF``, a merge of ``ServerConfigs``,
  ``KRaftConfigs``, ``ReplicationConfigs``, ``SocketServerConfigs``, ``GroupCoordinatorConfig``,
  ``BrokerSecurityConfigs``, ``RemoteLogManagerConfig`` ...). Every ``ConfigDef`` the root
  refers to (``X.CONFIG_DEF``, ``X.configDef()``, ``Utils.mergeConfigs(...)``, a
  ``forEach(key => configDef.define(key))`` copy ...) is followed, so the ssl./sasl. keys the
  broker defines are included. Plus the dynamic-only broker keys of ``DynamicConfig.Broker``
  (``leader.replication.throttled.rate``, ``follower.replication.throttled.rate``,
  ``replica.alter.log.dirs.io.max.bytes.per.second``; 4.x: ``QuotaConfig.brokerQuotaConfigs()``);
- topic keys: ``LogConfig``'s config definition (``core/.../kafka/log/LogConfig.scala``, later
  ``storage/.../LogConfig.java``, member ``configDef`` / ``CONFIG``), names from
  ``TopicConfig.java``.

Every ``define(NAME, TYPE, [DEFAULT,] ...)`` and ``defineInternal(...)`` call gives a key: its
name (constant expressions resolved across files: ``"log." + X``, ``SslConfigs.SSL_..._CONFIG``,
``ServerTopicConfigSynonyms.serverSynonym(...)``), its ``ConfigDef.Type`` and its default when
the default is a literal or a constant expression made of literals (arithmetics,
``TimeUnit.X.toMillis(n)``, ``Long.MAX_VALUE``, lists); anything else (an enum's name, a
method's result) is kept as null. Only facts (names, types, defaults, versions) are written;
no Kafka code is copied.

Releases and commits
--------------------
Releases are the final release tags (``X.Y.Z``, ``0.X.Y.Z``; no ``-rc``), 0.10.0.0 and
newer, of the first git directory given (the apache/kafka clone). A release whose tag is
missing there is read at its pinned commit in ``PINNED_RELEASES`` below: the commit Kafka's
release manager tagged (the last "Bump version to X" commit of the release branch, i.e. the
final release candidate), found in any of the git directories given.

Why pinned commits (and the 4.4 branch): the apache/kafka snapshot this was first run on (fetched in 2026) stops
at October 2024 (newest tag 3.8.0). The later release commits were read from a snapshot of
confluentinc/kafka, which carries Apache Kafka's release branches with Apache's own commits
(same SHAs: apache's 3.8.0 tag, 771b9576b00e, is the "Bump version to 3.8.0" commit there
too). 4.0.0's release-candidate commit is in neither, so 4.0.0 is read from the 4.0 branch
at 4ae681446f18, the last commit before "Bump to 4.0.1-SNAPSHOT" (2025-03-16, two days
before the 4.0.0 announcement); the config-definition commits of March 2025 on that branch
only reword documentation, and the keys read there equal those of 4.0.1 and 4.0.2.

Rerun
-----
::

    # an apache/kafka clone (bare is fine) with its tags; add more git dirs when the clone
    # lacks newer release tags (their pinned commits are looked up in every dir given)
    python tools/extract_kafka_configs.py /path/to/kafka.git [/path/to/other.git ...] \\
        [--out auditor/data/kafka_configs.json] [--check-html DIR] [-v]

With a fresh apache/kafka clone holding every release tag, one git dir is enough; to add a
release, nothing needs to change unless its tag is missing (then add it to PINNED_RELEASES).
``--check-html DIR`` compares the documented (non-internal) keys of each minor release with
kafka-site's generated ``DIR/<NN>/generated/{kafka,topic}_config.html`` (ConfigDef's own
``toHtml`` output) and prints the differences.

Checked: ``--check-html`` against kafka-site's generated pages of every minor release from
0.10.0 to 3.9 (4.x pages were not in the kafka-site snapshot at hand): the documented key
sets match exactly; the only differences are keys the pages do not document (the
dynamic-only keys, and keys added by patch releases after the page was generated, e.g.
``sasl.server.max.receive.size`` in 2.8.2/3.0.2/3.1.2/3.2.2). Defaults computed at run time
(``inter.broker.protocol.version``, ``ssl.keymanager.algorithm``, the security protocol map,
compression levels) are null. Versions are ordered numerically, so a key backported to
patch releases of several lines gets several ``ranges``.

Output (``auditor/data/kafka_configs.json``): ``versions`` (every release read, ascending),
``releases`` (version -> commit and how it was found), ``counts`` (version -> keys per scope)
and per scope (``broker``, ``topic``) per key: ``type`` (latest), ``default`` (latest,
null when none or not a literal), ``since`` (first release defining it), ``removed`` (first
release after ``since`` without it, or null), ``ranges`` (only when the key was removed and
re-added: [[since, removed], ...]), ``internal`` (true when the latest release defining it
uses ``defineInternal``: accepted but undocumented), ``dynamic_only`` (broker keys of
DynamicConfig.Broker), ``defaults`` (only when the default changed: [[release, default], ...],
the default from each release where it changed; null where it is not a literal).

Unreleased: a release whose tag does not exist yet is read from its release branch when it is
listed in ``PRERELEASES`` (4.4.0: apache/kafka's 4.4 branch, see below); its ``releases`` entry
says ``"from": "release branch (unreleased)"`` with a note naming the commit. Kafka's 4.4
documentation was published from that branch before the release.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

OLDEST = (0, 10, 0, 0)

# Releases whose tag may be missing from the git dirs: version -> commit (see module doc).
PINNED_RELEASES: dict[str, str] = {
    "3.8.1": "70d6ff42debf7e17478beb899fb5756bfbdbfbb5",
    "3.9.0": "cc53a632edcf78dc8b2a4c2c502c654950744e1e",
    "3.9.1": "c0b64c2273c8c647aa8a70b54c3031b67a561cce",
    "3.9.2": "5e9866f43ab8e7e41ef39e5584ac50019381328d",
    "4.0.0": "4ae681446f18f9a6d7a59f317013ef82379a4ba4",
    "4.0.1": "b31ce61fd68c51d1b9b964b09874148f14b75964",
    "4.0.2": "5d0fe56677f97d9525843963f1ffe329d2b69433",
    "4.1.0": "13f70256db3c994c590e5d262a7cc50b9e973204",
    "4.1.1": "be816b82d25370ceac697ccf7c88cea873e9b4e3",
    "4.1.2": "c82fd9b934b4c1e6fa799e3f1dcc8f08d997740c",
    "4.2.0": "a18251bae0b825c69794a50dffd4c3100cf5ca5b",
    "4.2.1": "18d5ecd939c8d510fdd72d0abb1f7099659dcd58",
    "4.3.0": "a9ce3221537b8653448750697915607dc7936cf3",
    "4.3.1": "26b251a451ce941d3d7a55e6487bcb7f16b5ad48",
}

# Releases not tagged yet, read from their release branch: version -> (commit, what it is). The
# release is recorded with ``"from": "release branch (unreleased)"`` and this note, so nothing
# reading the table mistakes it for a release. Replace the entry by the tag (or a PINNED_RELEASES
# commit) once the release is out, and rerun.
PRERELEASES: dict[str, tuple[str, str]] = {
    "4.4.0": (
        "87943b2ff874f7186a7a091f7fad13d1ca62fc42",
        "apache/kafka's 4.4 release branch at 87943b2ff874 (2026-08-21, version 4.4.0-SNAPSHOT; the "
        "first parent of confluentinc/kafka's 4.4 merges): 4.4.0 was not tagged when this was read",
    ),
}

TYPES = {"BOOLEAN", "STRING", "INT", "SHORT", "LONG", "DOUBLE", "LIST", "CLASS", "PASSWORD"}
IMPORTANCE = {"HIGH", "MEDIUM", "LOW"}
# Classes whose members are never followed as ConfigDef sources.
LIBRARY = {
    "ConfigDef",
    "Utils",
    "AbstractConfig",
    "Collections",
    "List",
    "Arrays",
    "Set",
    "Map",
    "Optional",
    "String",
    "Integer",
    "Long",
    "Math",
    "System",
    "JavaConverters",
    "Seq",
}
DEF_TOKENS = {"define", "defineInternal", "ConfigDef", "LogConfigDef", "mergeConfigs"}


def vtuple(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


# ---------------------------------------------------------------------------------------
# git access


class Git:
    def __init__(self, git_dir: str):
        self.dir = git_dir
        self._cat = subprocess.Popen(
            ["git", "-C", git_dir, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def run(self, *args: str) -> str:
        return subprocess.run(
            ["git", "-C", self.dir, *args], check=True, capture_output=True, text=True
        ).stdout

    def has(self, rev: str) -> bool:
        r = subprocess.run(["git", "-C", self.dir, "cat-file", "-e", rev + "^{commit}"], capture_output=True)
        return r.returncode == 0

    def blob(self, sha: str) -> str:
        self._cat.stdin.write((sha + "\n").encode())
        self._cat.stdin.flush()
        header = self._cat.stdout.readline().decode().split()
        size = int(header[2])
        data = self._cat.stdout.read(size)
        self._cat.stdout.read(1)
        return data.decode("utf-8", errors="replace")

    def tree(self, rev: str) -> dict[str, str]:
        out = {}
        for line in self.run("ls-tree", "-r", rev).splitlines():
            meta, path = line.split("\t", 1)
            if path.endswith((".java", ".scala")) and "/src/main/" in path:
                out[path] = meta.split()[2]
        return out


# ---------------------------------------------------------------------------------------
# tokenizer (Java and Scala)

_TOKEN = re.compile(
    r"""
    (?P<nl>\n)
  | (?P<ws>[ \t\r\f]+)
  | (?P<lcom>//[^\n]*)
  | (?P<bcom>/\*.*?\*/)
  | (?P<tstr>[A-Za-z]*\"\"\".*?\"\"\"+)
  | (?P<str>[A-Za-z]?\"(?:\\.|\$\{[^}]*\}|[^"\\\n])*\")
  | (?P<chr>'(?:\\.|[^'\\\n])')
  | (?P<num>0[xX][0-9a-fA-F_]+[lL]?|(?:\d[\d_]*\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)[lLfFdD]?)
  | (?P<id>[A-Za-z_$][A-Za-z0-9_$]*|`[^`]+`)
  | (?P<op>=>|->|<-|==|!=|<=|>=|&&|\|\||::|\+\+|\+=|-=|<<|>>>|>>|[-+*/%=<>!&|^~?:;,.(){}\[\]@#])
  | (?P<other>.)
""",
    re.S | re.X,
)


@dataclass
class Tok:
    kind: str
    val: str
    line: int = 0


def tokenize(text: str) -> list[Tok]:
    out: list[Tok] = []
    line, pos = 1, 0
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        val = m.group()
        line += text.count("\n", pos, m.start())
        pos = m.start()
        if kind in ("ws", "lcom"):
            continue
        if kind == "bcom":
            if "\n" in val:
                out.append(Tok("nl", "\n", line))
            continue
        if kind == "tstr":
            prefix = re.match(r"[A-Za-z]*", val).group()
            body = val[len(prefix) + 3 : -3]
            out.append(Tok("str", ("\x00" if prefix and "$" in body else "") + body, line))
            continue
        if kind == "str":
            prefix = val[0] if val[0] != '"' else ""
            body = val[len(prefix) + 1 : -1]
            if prefix and "$" in body:
                out.append(Tok("str", "\x00" + body, line))  # interpolated: not a constant
            else:
                out.append(Tok("str", _unescape(body), line))
            continue
        if kind == "id" and val.startswith("`"):
            val = val[1:-1]
        out.append(Tok(kind, val, line))
    return out


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    return re.sub(
        r"\\(u[0-9a-fA-F]{4}|.)",
        lambda m: (
            chr(int(m.group(1)[1:], 16))
            if m.group(1)[0] == "u"
            else {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}.get(m.group(1), m.group(1))
        ),
        s,
    )


# ---------------------------------------------------------------------------------------
# file structure: classes, members, bare statements


@dataclass
class Member:
    name: str
    kind: str  # field | method
    start: int  # initializer / body token range [start, end)
    end: int


@dataclass
class ClassInfo:
    name: str
    chain: tuple[str, ...]
    start: int  # body tokens [start, end)
    end: int
    supers: list[str] = field(default_factory=list)
    kind: str = "class"
    members: dict[str, list[Member]] = field(default_factory=dict)
    statements: list[tuple[int, int]] = field(default_factory=list)


OPENERS = {"(": ")", "[": "]", "{": "}"}


class SourceFile:
    def __init__(self, path: str, text: str):
        self.path = path
        self.lang = "scala" if path.endswith(".scala") else "java"
        self.toks = tokenize(text)
        self.match = self._match_brackets()
        self.package = ""
        self.imports: list[tuple[list[str], str | None, bool]] = []  # (path, alias, static)
        self.classes: list[ClassInfo] = []
        self._header()
        self._classes(0, len(self.toks), ())

    def _match_brackets(self) -> dict[int, int]:
        stack, out = [], {}
        for i, t in enumerate(self.toks):
            if t.kind == "op" and t.val in OPENERS:
                stack.append(i)
            elif t.kind == "op" and t.val in (")", "]", "}"):
                while stack and OPENERS[self.toks[stack[-1]].val] != t.val:
                    stack.pop()
                if stack:
                    out[stack.pop()] = i
        return out

    def _header(self):
        toks = self.toks
        i = 0
        while i < len(toks):
            t = toks[i]
            if t.kind == "id" and t.val == "package" and (i == 0 or toks[i - 1].kind in ("nl", "op")):
                j, parts = i + 1, []
                while j < len(toks) and (toks[j].kind == "id" or toks[j].val == "."):
                    if toks[j].kind == "id":
                        parts.append(toks[j].val)
                    j += 1
                self.package = ".".join(parts) if not self.package else self.package + "." + ".".join(parts)
                i = j
                continue
            if t.kind == "id" and t.val == "import":
                j = i + 1
                static = False
                if j < len(toks) and toks[j].val == "static":
                    static, j = True, j + 1
                parts: list[str] = []
                while (
                    j < len(toks)
                    and toks[j].kind in ("id", "op")
                    and toks[j].val not in (";", "{")
                    and toks[j].kind != "nl"
                ):
                    if toks[j].kind == "id" or toks[j].val == "*":
                        parts.append("_" if toks[j].val == "*" else toks[j].val)
                    elif toks[j].val == ",":
                        break
                    j += 1
                if j < len(toks) and toks[j].val == "{":  # scala selector import a.b.{X, Y => Z, _}
                    end = self.match.get(j, j)
                    sel = toks[j + 1 : end]
                    k = 0
                    while k < len(sel):
                        if sel[k].kind == "id" or sel[k].val == "_":
                            name = sel[k].val
                            alias = None
                            if k + 2 < len(sel) and sel[k + 1].val == "=>":
                                alias = sel[k + 2].val
                                k += 2
                            self.imports.append((parts + [name], alias, True))
                        k += 1
                    j = end
                elif parts:
                    self.imports.append((parts, None, static or self.lang == "scala"))
                i = j + 1
                continue
            i += 1

    def _classes(self, start: int, end: int, chain: tuple[str, ...]):
        toks = self.toks
        i = start
        while i < end:
            t = toks[i]
            if (
                t.kind == "id"
                and t.val in ("class", "object", "interface", "trait", "enum", "record")
                and i + 1 < end
                and toks[i + 1].kind == "id"
                and not (i > 0 and toks[i - 1].val == ".")
            ):
                name = toks[i + 1].val
                j = i + 2
                supers = []
                while (
                    j < end
                    and toks[j].val not in ("{", ";")
                    and not (self.lang == "scala" and toks[j].kind == "nl" and not self._continues(j))
                ):
                    if toks[j].val in OPENERS and toks[j].val != "{":
                        j = self.match.get(j, j) + 1
                        continue
                    if toks[j].kind == "id" and toks[j].val not in (
                        "extends",
                        "implements",
                        "with",
                        "public",
                        "final",
                    ):
                        if toks[j - 1].val in ("extends", "implements", "with", ","):
                            supers.append(toks[j].val)
                    j += 1
                if j < end and toks[j].val == "{":
                    close = self.match.get(j, end)
                    ci = ClassInfo(name, chain + (name,), j + 1, close, supers, t.val)
                    self.classes.append(ci)
                    self._members(ci)
                    self._classes(j + 1, close, chain + (name,))
                    i = close + 1
                    continue
                i = j
                continue
            i += 1

    def _continues(self, nl_index: int) -> bool:
        """Scala: does the statement go on after the newline at nl_index?"""
        toks = self.toks
        p = nl_index - 1
        while p >= 0 and toks[p].kind == "nl":
            p -= 1
        if (
            p >= 0
            and toks[p].kind == "op"
            and toks[p].val
            in ("+", "-", "*", "/", ".", "=", ",", "(", "=>", "&&", "||", "++", "::", "->", "%")
        ):
            return True
        n = nl_index + 1
        while n < len(toks) and toks[n].kind == "nl":
            n += 1
        return (
            n < len(toks)
            and toks[n].kind == "op"
            and toks[n].val in (".", "+", "*", "/", "++", "&&", "||", "::")
        )

    def statement_end(self, i: int, end: int) -> int:
        """End (exclusive) of the statement or expression starting at i, within [i, end)."""
        toks = self.toks
        while i < end:
            t = toks[i]
            if t.kind == "op" and t.val in OPENERS:
                i = self.match.get(i, end - 1) + 1
                continue
            if t.kind == "op" and t.val in (";", "}", ")", "]"):
                return i
            if t.kind == "nl" and self.lang == "scala" and not self._continues(i):
                return i
            if t.kind == "op" and t.val == "," and self.lang == "java":
                return i
            i += 1
        return end

    def _members(self, ci: ClassInfo):
        toks = self.toks
        i = ci.start
        end = ci.end
        if ci.kind == "enum" and self.lang == "java":  # constants: NAME[(args)][{body}], ... ;
            while i < end and toks[i].val != ";":
                if toks[i].kind == "id":
                    name, s, e = toks[i].val, i + 1, i + 1
                    i += 1
                    if i < end and toks[i].val == "(":
                        s, e = i + 1, self.match.get(i, i)
                        i = e + 1
                    if i < end and toks[i].val == "{":
                        i = self.match.get(i, i) + 1
                    self._add(ci, name, "enum", s, e)
                    continue
                i += 1
        while i < end:
            t = toks[i]
            if t.kind == "nl" or (t.kind == "op" and t.val in (";", ",")):
                i += 1
                continue
            if (
                t.kind == "id"
                and t.val in ("class", "object", "interface", "trait", "enum", "record")
                and i + 1 < end
                and toks[i + 1].kind == "id"
            ):
                j = i + 2
                while j < end and toks[j].val != "{" and toks[j].val != ";":
                    if toks[j].kind == "nl" and self.lang == "scala" and not self._continues(j):
                        break
                    if toks[j].val in ("(", "["):
                        j = self.match.get(j, j)
                    j += 1
                if j < end and toks[j].val == "{":
                    j = self.match.get(j, j)
                i = j + 1
                continue
            if self.lang == "scala":
                i = self._scala_member(ci, i, end)
            else:
                i = self._java_member(ci, i, end)

    def _add(self, ci: ClassInfo, name: str, kind: str, s: int, e: int):
        ci.members.setdefault(name, []).append(Member(name, kind, s, e))

    def _scala_member(self, ci: ClassInfo, i: int, end: int) -> int:
        toks = self.toks
        j = i
        while (
            j < end
            and toks[j].kind == "id"
            and toks[j].val
            in ("private", "protected", "override", "final", "lazy", "implicit", "sealed", "abstract")
        ):
            j += 1
            if j < end and toks[j].val == "[":
                j = self.match.get(j, j) + 1
        if j < end and toks[j].val == "@":  # annotation
            j += 2
            if j < end and toks[j].val == "(":
                j = self.match.get(j, j) + 1
            return j
        if j < end and toks[j].kind == "id" and toks[j].val in ("val", "var", "def"):
            kind = "method" if toks[j].val == "def" else "field"
            j += 1
            if j >= end or toks[j].kind not in ("id", "op"):
                return j
            name = toks[j].val
            j += 1
            # params, type ascription up to '=' or '{'
            while j < end and not (toks[j].kind == "op" and toks[j].val in ("=", "{")):
                if toks[j].val in ("(", "["):
                    j = self.match.get(j, j) + 1
                    continue
                if toks[j].kind == "nl" and not self._continues(j):
                    return j  # abstract declaration
                j += 1
            if j < end and toks[j].val == "=":
                s = j + 1
                while s < end and toks[s].kind == "nl":
                    s += 1
                e = self.statement_end(s, end)
                self._add(ci, name, kind, s, e)
                return e
            if j < end and toks[j].val == "{":
                e = self.match.get(j, end)
                self._add(ci, name, kind, j + 1, e)
                return e + 1
            return j
        if j < end and toks[j].kind == "id" and toks[j].val in ("import",):
            while j < end and toks[j].kind != "nl":
                if toks[j].val == "{":
                    j = self.match.get(j, j)
                j += 1
            return j
        e = self.statement_end(j, end)
        if e == j:
            return j + 1
        ci.statements.append((j, e))
        return e

    def _java_member(self, ci: ClassInfo, i: int, end: int) -> int:
        toks = self.toks
        j = i
        if toks[j].val == "@":  # annotation
            j += 2
            while j < end and toks[j].val == ".":
                j += 2
            if j < end and toks[j].val == "(":
                j = self.match.get(j, j) + 1
            return j
        if toks[j].val == "static" and j + 1 < end and toks[j + 1].val == "{":
            close = self.match.get(j + 1, end)
            k = j + 2
            while k < close:
                if toks[k].val == ";":
                    k += 1
                    continue
                e = self.statement_end(k, close)
                if e == k:
                    k += 1
                    continue
                ci.statements.append((k, e))
                k = e
            return close + 1
        if toks[j].val == "{":  # instance initializer
            return self.match.get(j, end) + 1
        # modifiers + type + name, then '=' / '(' / ';'
        k = j
        last_id = None
        while k < end:
            tv = toks[k].val
            if toks[k].kind == "op" and tv in ("=", "(", ";", "{", ","):
                break
            if toks[k].kind == "op" and tv in ("<", "["):
                depth = 0
                while k < end:
                    if toks[k].val in ("<", "["):
                        depth += 1
                    elif toks[k].val in (">", "]"):
                        depth -= 1
                    elif toks[k].val == ">>":
                        depth -= 2
                    elif toks[k].val == ">>>":
                        depth -= 3
                    k += 1
                    if depth <= 0:
                        break
                continue
            if toks[k].kind == "id":
                last_id = tv
            k += 1
        if k >= end or last_id is None:
            return k + 1
        tv = toks[k].val
        if tv == "=":
            s = k + 1
            e = self.statement_end(s, end)
            self._add(ci, last_id, "field", s, e)
            # further declarators: , NAME = expr
            while e < end and toks[e].val == ",":
                if e + 2 < end and toks[e + 1].kind == "id" and toks[e + 2].val == "=":
                    s2 = e + 3
                    e = self.statement_end(s2, end)
                    self._add(ci, toks[s2 - 2].val, "field", s2, e)
                else:
                    break
            return e + 1
        if tv == "(":
            close = self.match.get(k, end)
            m = close + 1
            while m < end and toks[m].val not in ("{", ";"):
                m += 1
            if m < end and toks[m].val == "{":
                body_end = self.match.get(m, end)
                self._add(ci, last_id, "method", m + 1, body_end)
                return body_end + 1
            return m + 1
        return k + 1

    def class_by_chain(self, chain: tuple[str, ...]) -> list[ClassInfo]:
        return [c for c in self.classes if c.chain == chain]


# ---------------------------------------------------------------------------------------
# one release: lazy file loading and resolution


class Unresolved(Exception):
    pass


NO_DEFAULT = object()


class Release:
    def __init__(self, version: str, git: Git, commit: str, cache: dict):
        self.version = version
        self.git = git
        self.commit = commit
        self.cache = cache  # blob sha -> SourceFile, shared across releases
        self.files = git.tree(commit)
        self.by_name: dict[str, list[str]] = {}
        self.by_pkg: dict[str, list[str]] = {}
        for p in self.files:
            m = re.search(r"/src/main/(?:java|scala)/(.*)/([^/]+)\.(?:java|scala)$", p)
            if not m:
                continue
            self.by_name.setdefault(m.group(2), []).append(p)
            self.by_pkg.setdefault(m.group(1).replace("/", "."), []).append(p)
        self.values: dict = {}
        self.warnings: list[str] = []

    def load(self, path: str) -> SourceFile:
        sha = self.files[path]
        sf = self.cache.get(sha)
        if sf is None:
            sf = SourceFile(path, self.git.blob(sha))
            self.cache[sha] = sf
        return sf

    # -- class lookup --------------------------------------------------------------------

    def classes_in_pkg(self, pkg: str, name: str) -> list[tuple[SourceFile, ClassInfo]]:
        out = []
        paths = self.by_pkg.get(pkg, [])
        preferred = [p for p in paths if Path(p).stem == name]
        for p in preferred + [p for p in paths if p not in preferred and p.endswith(".scala")]:
            sf = self.load(p)
            out += [(sf, c) for c in sf.classes if c.chain == (name,)]
            if out and p in preferred:
                break
        return out

    def find_class(
        self, name: str, sf: SourceFile, chain: tuple[str, ...]
    ) -> list[tuple[SourceFile, ClassInfo]]:
        # nested or same-file classes, innermost scope first
        for k in range(len(chain), -1, -1):
            hits = sf.class_by_chain(chain[:k] + (name,))
            if hits:
                return [(sf, c) for c in hits]
        hits = [c for c in sf.classes if c.name == name]
        if hits:
            return [(sf, c) for c in hits]
        for parts, alias, _static in sf.imports:
            if (alias or parts[-1]) == name and parts[-1] != "_":
                got = self.resolve_qualified_class(parts)
                if got:
                    return got
        got = self.classes_in_pkg(sf.package, name)
        if got:
            return got
        for parts, _alias, _static in sf.imports:
            if parts[-1] == "_":
                got = self.classes_in_pkg(".".join(parts[:-1]), name)
                if got:
                    return got
                outer = self.resolve_qualified_class(parts[:-1])  # import Outer._ / Outer.*
                for osf, oc in outer:
                    nested = osf.class_by_chain(oc.chain + (name,))
                    if nested:
                        return [(osf, c) for c in nested]
        for p in self.by_name.get(name, []):
            sf2 = self.load(p)
            hits = sf2.class_by_chain((name,))
            if hits:
                return [(sf2, c) for c in hits]
        return []

    def resolve_qualified_class(self, parts: list[str]) -> list[tuple[SourceFile, ClassInfo]]:
        # package prefix + class + nested classes
        for k in range(len(parts) - 1, -1, -1):
            pkg = ".".join(parts[:k])
            if k < len(parts) and (pkg in self.by_pkg or k == 0):
                base = self.classes_in_pkg(pkg, parts[k]) if pkg else []
                if not base:
                    continue
                out = []
                for sf, c in base:
                    chain = c.chain + tuple(parts[k + 1 :])
                    out += [(sf, x) for x in sf.class_by_chain(chain)]
                if out:
                    return out
        return []

    def supers_of(self, sf: SourceFile, ci: ClassInfo):
        out = []
        for s in ci.supers:
            out += self.find_class(s, sf, ci.chain[:-1])
        return out

    # -- member lookup -------------------------------------------------------------------

    def member_in(self, sf: SourceFile, ci: ClassInfo, name: str, depth: int = 0):
        """(sf, ci, Member) for member `name` of class ci (companions, supertypes)."""
        for c in sf.class_by_chain(ci.chain):
            if name in c.members:
                return sf, c, c.members[name][0]
        if depth < 4:
            for c in sf.class_by_chain(ci.chain):
                for ssf, sci in self.supers_of(sf, c):
                    got = self.member_in(ssf, sci, name, depth + 1)
                    if got:
                        return got
        return None

    def resolve_unqualified(self, name: str, sf: SourceFile, chain: tuple[str, ...]):
        for k in range(len(chain), 0, -1):
            for c in sf.class_by_chain(chain[:k]):
                got = self.member_in(sf, c, name)
                if got:
                    return got
        for parts, alias, static in sf.imports:
            if not static:
                continue
            if parts[-1] == name or alias == name:
                for csf, c in self.resolve_qualified_class(parts[:-1]):
                    got = self.member_in(csf, c, parts[-1])
                    if got:
                        return got
            if parts[-1] == "_":
                targets = self.resolve_qualified_class(parts[:-1])
                if not targets and len(parts) == 2:  # scala relative import X._
                    targets = self.find_class(parts[0], sf, chain)
                for csf, c in targets:
                    got = self.member_in(csf, c, name)
                    if got:
                        return got
        for c in sf.classes:
            if name in c.members:
                return sf, c, c.members[name][0]
        return None

    def resolve_path(self, parts: list[str], sf: SourceFile, chain: tuple[str, ...]):
        """A dotted reference -> (sf, ci, Member) or None."""
        if len(parts) == 1:
            return self.resolve_unqualified(parts[0], sf, chain)
        member = parts[-1]
        owners = parts[:-1]
        if owners[0] in LIBRARY:
            return None
        targets = []
        if owners[0][:1].islower() and len(owners) > 1:
            targets = self.resolve_qualified_class(owners)
        if not targets:
            first = self.find_class(owners[0], sf, chain)
            for fsf, fc in first:
                nested = fsf.class_by_chain(fc.chain + tuple(owners[1:]))
                targets += [(fsf, c) for c in nested]
        if not targets and len(owners) == 1:
            # a field holding an object (rare): give up
            return None
        for tsf, tc in targets:
            got = self.member_in(tsf, tc, member)
            if got:
                return got
        return None

    # -- expression evaluation -----------------------------------------------------------

    def value_of(self, sf: SourceFile, ci: ClassInfo, m: Member, stack=()):
        if m.kind == "enum":
            return _EnumConst(sf, m)
        key = (sf.path, ci.chain, m.name, m.start)
        if key in self.values:
            v = self.values[key]
            if isinstance(v, Unresolved):
                raise v
            return v
        if key in stack:
            raise Unresolved("cycle")
        if m.kind == "method":
            # `def X = expr` / `static T x() { return expr; }`
            toks = sf.toks[m.start : m.end]
            if sf.lang == "java":
                if len(toks) >= 2 and toks[0].val == "return":
                    e = sf.statement_end(m.start + 1, m.end)
                    if e >= m.end - 1 or sf.toks[e].val == ";":
                        try:
                            v = Expr(self, sf, ci.chain, m.start + 1, e, stack + (key,)).parse()
                        except Unresolved as ex:
                            self.values[key] = ex
                            raise
                        self.values[key] = v
                        return v
                raise Unresolved("method " + m.name)
        try:
            v = Expr(self, sf, ci.chain, m.start, m.end, stack + (key,)).parse()
        except Unresolved as ex:
            self.values[key] = ex
            raise
        self.values[key] = v
        return v


class Expr:
    """A small evaluator for constant expressions (strings, numbers, lists, references)."""

    def __init__(self, rel: Release, sf: SourceFile, chain, start: int, end: int, stack=()):
        self.rel, self.sf, self.chain, self.stack = rel, sf, chain, stack
        self.toks = [t for t in sf.toks[start:end] if t.kind != "nl"]
        self.i = 0

    def peek(self, k: int = 0):
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else Tok("eof", "")

    def take(self, val=None):
        t = self.peek()
        if val is not None and t.val != val:
            raise Unresolved(f"expected {val}, got {t.val}")
        self.i += 1
        return t

    def parse(self):
        if not self.toks:
            raise Unresolved("empty")
        v = self.ternary()
        if self.peek().kind != "eof":
            raise Unresolved("trailing " + self.peek().val)
        return v

    def ternary(self):
        c = self.additive()
        if self.peek().val == "?":
            self.take()
            a = self.ternary()
            self.take(":")
            b = self.ternary()
            return a if c else b
        return c

    def additive(self):
        v = self.multiplicative()
        while self.peek().val in ("+", "-", "++"):
            op = self.take().val
            r = self.multiplicative()
            if op in ("+", "++"):
                if isinstance(v, str) or isinstance(r, str):
                    v = _jstr(v) + _jstr(r)
                elif isinstance(v, list) and isinstance(r, list):
                    v = v + r
                else:
                    v = _num(v) + _num(r)
            else:
                v = _num(v) - _num(r)
        return v

    def multiplicative(self):
        v = self.unary()
        while self.peek().val in ("*", "/", "%"):
            op = self.take().val
            r = _num(self.unary())
            v = _num(v)
            if op == "*":
                v = v * r
            elif op == "/":
                v = int(v / r) if isinstance(v, int) and isinstance(r, int) else v / r
            else:
                v = v % r
        return v

    def unary(self):
        t = self.peek()
        if t.val == "-":
            self.take()
            return -_num(self.unary())
        if t.val == "+":
            self.take()
            return _num(self.unary())
        if t.val == "!":
            self.take()
            return not self.unary()
        if (
            t.val == "("
            and self.peek(1).kind == "id"
            and self.peek(1).val in ("int", "long", "short", "double", "float")
            and self.peek(2).val == ")"
        ):
            cast = self.peek(1).val
            self.i += 3
            v = _num(self.unary())
            return float(v) if cast in ("double", "float") else int(v)
        return self.postfix(self.primary())

    def postfix(self, v):
        while True:
            t = self.peek()
            if t.val == "." and self.peek(1).kind == "id":
                name = self.peek(1).val
                self.i += 2
                args = None
                if self.peek().val == "(":
                    args = self.args()
                v = self.method(v, name, args)
                continue
            if t.val == "[" and self.sf.lang == "scala":  # type args
                self.skip_brackets()
                continue
            return v

    def skip_brackets(self):
        depth = 0
        while self.peek().kind != "eof":
            v = self.take().val
            if v in ("(", "[", "{"):
                depth += 1
            elif v in (")", "]", "}"):
                depth -= 1
                if depth == 0:
                    return

    def args(self):
        self.take("(")
        out = []
        if self.peek().val == ")":
            self.take()
            return out
        while True:
            out.append(self.ternary())
            if self.peek().val == ",":
                self.take()
                continue
            self.take(")")
            return out

    def method(self, v, name, args):
        if isinstance(v, _Unit):
            return v.call(name, args)
        if isinstance(v, _EnumConst):
            return v.access(name, args)
        if name in ("toInt", "toLong", "intValue", "longValue", "toShort", "shortValue") and not args:
            return int(_num(v))
        if name in ("toDouble", "doubleValue") and not args:
            return float(_num(v))
        if name in ("toString", "name") and not args and isinstance(v, (int, float, str)):
            return _jstr(v)
        if name in ("mkString",) and isinstance(v, list):
            return (args[0] if args else "").join(_jstr(x) for x in v)
        if name in ("asJava", "toList", "toSeq") and isinstance(v, list):
            return v
        if name == "toLowerCase" and isinstance(v, str):
            return v.lower()
        raise Unresolved(f"method {name}")

    def primary(self):
        t = self.take()
        if t.kind == "str":
            if t.val.startswith("\x00"):
                raise Unresolved("interpolated string")
            return t.val
        if t.kind == "num":
            return _parse_num(t.val)
        if t.kind == "chr":
            return _unescape(t.val[1:-1])
        if t.val == "(":
            v = self.ternary()
            self.take(")")
            return v
        if t.kind == "id":
            if t.val in ("true", "false"):
                return t.val == "true"
            if t.val == "null":
                return None
            if t.val == "Nil":
                return []
            if t.val == "new":
                parts = [self.take().val]
                while self.peek().val == ".":
                    self.take()
                    parts.append(self.take().val)
                if self.peek().val in ("<", "["):
                    self.skip_generic()
                a = self.args() if self.peek().val == "(" else []
                if parts[-1] in ("ArrayList", "HashSet", "LinkedList") and len(a) <= 1:
                    return list(a[0]) if a else []
                raise Unresolved("new " + parts[-1])
            parts = [t.val]
            while self.peek().val == "." and self.peek(1).kind == "id":
                parts.append(self.peek(1).val)
                self.i += 2
                # stop at the first resolvable member so calls on it are handled by postfix
            if self.peek().val == "[" and self.sf.lang == "scala":
                self.skip_brackets()
            if (
                self.peek().val == "<"
                and self.sf.lang == "java"
                and parts[-1] in ("emptyList", "of", "asList")
            ):
                self.skip_generic()
            args = self.args() if self.peek().val == "(" else None
            return self.call(parts, args)
        raise Unresolved("token " + t.val)

    def skip_generic(self):
        depth = 0
        while self.peek().kind != "eof":
            v = self.take().val
            if v in ("<", "["):
                depth += 1
            elif v in (">", "]"):
                depth -= 1
            elif v == ">>":
                depth -= 2
            if depth <= 0:
                return

    def call(self, parts: list[str], args):
        name = parts[-1]
        joined = ".".join(parts)
        # well-known library values
        consts = {
            "Long.MAX_VALUE": 2**63 - 1,
            "Long.MaxValue": 2**63 - 1,
            "Long.MIN_VALUE": -(2**63),
            "Integer.MAX_VALUE": 2**31 - 1,
            "Int.MaxValue": 2**31 - 1,
            "Integer.MIN_VALUE": -(2**31),
            "Short.MAX_VALUE": 2**15 - 1,
            "Short.MaxValue": 2**15 - 1,
            "Double.MAX_VALUE": 1.7976931348623157e308,
            "ConfigDef.NO_DEFAULT_VALUE": NO_DEFAULT,
        }
        if args is None and joined in consts:
            return consts[joined]
        if "TimeUnit" in parts:
            k = parts.index("TimeUnit")
            rest = parts[k + 1 :]
            if len(rest) == 1 and args is None:
                return _Unit(rest[0])
            if len(rest) == 2 and args is not None:
                return _Unit(rest[0]).call(rest[1], args)
        if args is not None:
            if name in ("emptyList", "emptySet", "empty") or joined in (
                "List",
                "Seq",
                "Set",
                "List.of",
                "Set.of",
                "Arrays.asList",
                "Collections.singletonList",
                "util.Arrays.asList",
                "Collections.singleton",
                "Seq.empty",
                "List.empty",
            ):
                return list(args)
            if name in ("asList", "of", "singletonList", "singleton", "listOf") and parts[0] in (
                "Arrays",
                "List",
                "Collections",
                "Set",
                "util",
                "java",
            ):
                return list(args)
            if joined in ("Math.max", "math.max", "Math.min", "math.min"):
                return (max if name == "max" else min)(_num(args[0]), _num(args[1]))
            if joined in ("String.join",) and len(args) == 2:
                return args[0].join(_jstr(x) for x in (args[1] if isinstance(args[1], list) else args[1:]))
            if joined in ("Utils.join",) and len(args) == 2:
                return args[1].join(_jstr(x) for x in args[0])
            if joined in (
                "String.valueOf",
                "Integer.toString",
                "Long.toString",
                "Double.toString",
                "Boolean.toString",
            ):
                return _jstr(args[0])
            if joined in (
                "Integer.valueOf",
                "Long.valueOf",
                "Short.valueOf",
                "Integer.parseInt",
                "Long.parseLong",
            ):
                return int(args[0])
            if joined in ("Double.valueOf",):
                return float(args[0])
            if name == "serverSynonym" and len(args) == 1:
                return self.rel_server_synonym(args[0])
            if name in ("toMillis", "toHours", "toMinutes", "toSeconds") and len(parts) >= 2:
                return _Unit(parts[-2]).call(name, args)
            # a constant-returning method of the project: `def X = "..."`
            got = self.rel.resolve_path(parts, self.sf, self.chain)
            if got and not args:
                return self.rel.value_of(*got, stack=self.stack)
            raise Unresolved("call " + joined)
        # reference: longest prefix that is a member, the rest are member accesses
        for k in range(len(parts), 0, -1):
            got = self.rel.resolve_path(parts[:k], self.sf, self.chain)
            if got:
                v = self.rel.value_of(*got, stack=self.stack)
                for rest in parts[k:]:
                    v = self.method(v, rest, None)
                return v
        raise Unresolved("ref " + joined)

    def rel_server_synonym(self, topic_key: str):
        return server_synonym(self.rel, topic_key)


class _EnumConst:
    """A Java enum constant: `.name()` is its identifier, the `.name` field the first string
    literal among its constructor arguments (Kafka's enums keep their config value there)."""

    def __init__(self, sf: SourceFile, m: Member):
        self.sf, self.m = sf, m

    def access(self, name, args):
        if name == "name" and args is not None and not args:
            return self.m.name
        if name == "name" and args is None:
            for t in self.sf.toks[self.m.start : self.m.end]:
                if t.kind == "str" and not t.val.startswith("\x00"):
                    return t.val
        raise Unresolved("enum access " + name)


class _Unit:
    SECONDS = {
        "NANOSECONDS": 1e-9,
        "MICROSECONDS": 1e-6,
        "MILLISECONDS": 1e-3,
        "SECONDS": 1,
        "MINUTES": 60,
        "HOURS": 3600,
        "DAYS": 86400,
    }
    TARGET = {
        "toNanos": 1e-9,
        "toMicros": 1e-6,
        "toMillis": 1e-3,
        "toSeconds": 1,
        "toMinutes": 60,
        "toHours": 3600,
        "toDays": 86400,
    }

    def __init__(self, unit: str):
        if unit not in self.SECONDS:
            raise Unresolved("unit " + unit)
        self.unit = unit

    def call(self, name, args):
        if name not in self.TARGET or not args:
            raise Unresolved("unit call " + name)
        n = _num(args[0])
        src, dst = self.SECONDS[self.unit], self.TARGET[name]
        # integer arithmetic like java.util.concurrent.TimeUnit (truncating)
        if src >= dst:
            return int(n * round(src / dst))
        return int(n // round(dst / src))


def _parse_num(s: str):
    s = s.replace("_", "")
    if s[:2].lower() == "0x":
        return int(s[2:].rstrip("lL"), 16)
    if s[-1] in "lL":
        return int(s[:-1])
    if s[-1] in "fFdD" or "." in s or "e" in s.lower():
        return float(s.rstrip("fFdD"))
    return int(s)


def _num(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise Unresolved("not a number")
    return v


def _jstr(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_jstr(x) for x in v) + "]"
    return str(v)


# ---------------------------------------------------------------------------------------
# ServerTopicConfigSynonyms.serverSynonym: the broker name of a topic key (3.x+)

_SYNONYM_HELPERS = {
    "sameName": lambda k, a: k,
    "sameNameWithLogPrefix": lambda k, a: "log." + k,
    "sameNameWithLogCleanerPrefix": lambda k, a: "log.cleaner." + k,
    "singleWithLogPrefix": lambda k, a: "log." + a,
    "singleWithLogCleanerPrefix": lambda k, a: "log.cleaner." + a,
    "single": lambda k, a: a,
    "listWithLogPrefix": lambda k, a: "log." + a,
}


def server_synonym(rel: Release, topic_key: str) -> str:
    table = getattr(rel, "_synonyms", None)
    if table is None:
        table = {}
        for path in rel.by_name.get("ServerTopicConfigSynonyms", []):
            sf = rel.load(path)
            for ci in sf.classes:
                for name, members in ci.members.items():
                    m = members[0]
                    if name != "ALL_TOPIC_CONFIG_SYNONYMS":
                        continue
                    toks = sf.toks
                    i = m.start
                    while i < m.end:
                        t = toks[i]
                        if t.kind == "id" and t.val in _SYNONYM_HELPERS and toks[i + 1].val == "(":
                            close = sf.match[i + 1]
                            args = split_args(sf, i + 2, close)
                            key = Expr(rel, sf, ci.chain, *args[0]).parse()
                            second = None
                            if len(args) > 1:
                                s, e = args[1]
                                if toks[s].val == "new":  # new ConfigSynonym("roll.ms")
                                    inner = s + 2
                                    while toks[inner].val != "(":
                                        inner += 1
                                    second = Expr(
                                        rel, sf, ci.chain, *split_args(sf, inner + 1, sf.match[inner])[0]
                                    ).parse()
                                else:
                                    second = Expr(rel, sf, ci.chain, s, e).parse()
                            table[key] = _SYNONYM_HELPERS[t.val](key, second)
                            i = close + 1
                            continue
                        i += 1
        rel._synonyms = table
    if topic_key not in table:
        raise Unresolved("no server synonym for " + str(topic_key))
    return table[topic_key]


def split_args(sf: SourceFile, start: int, end: int) -> list[tuple[int, int]]:
    out, i, s = [], start, start
    toks = sf.toks
    while i < end:
        t = toks[i]
        if t.kind == "op" and t.val in OPENERS:
            i = sf.match.get(i, end) + 1
            continue
        if t.kind == "op" and t.val == ",":
            out.append((s, i))
            s = i + 1
        i += 1
    if s < end:
        out.append((s, end))
    trimmed = []
    for s, e in out:
        while s < e and toks[s].kind == "nl":
            s += 1
        while e > s and toks[e - 1].kind == "nl":
            e -= 1
        trimmed.append((s, e))
    return trimmed


# ---------------------------------------------------------------------------------------
# collecting define() calls from a ConfigDef root


@dataclass
class Key:
    name: str
    type: str
    default: object
    internal: bool
    where: str


class Collector:
    def __init__(self, rel: Release):
        self.rel = rel
        self.keys: dict[str, Key] = {}
        self.visited: set = set()

    def member_ranges(self, sf: SourceFile, ci: ClassInfo, m: Member) -> list[tuple[int, int]]:
        """The token ranges defining member m: its initializer/body, plus bare statements of
        the class (Scala object bodies, Java static blocks) that mention it."""
        out = [(m.start, m.end)]
        for c in sf.class_by_chain(ci.chain):
            for s, e in c.statements:
                toks = [t for t in sf.toks[s:e] if t.kind != "nl"]
                for k, t in enumerate(toks):
                    if t.kind != "id" or t.val != m.name or (k and toks[k - 1].val == "."):
                        continue
                    target = (
                        k + 2 < len(toks)
                        and toks[k + 1].val == "."
                        and toks[k + 2].val in ("define", "defineInternal")
                    )
                    argument = 0 < k < len(toks) - 1 and toks[k - 1].val == "(" and toks[k + 1].val == ")"
                    if target or argument:
                        out.append((s, e))
                        break
        return out

    def follow(self, sf: SourceFile, ci: ClassInfo, m: Member):
        key = (sf.path, ci.chain, m.name)
        if key in self.visited:
            return
        self.visited.add(key)
        for s, e in self.member_ranges(sf, ci, m):
            self.scan(sf, ci.chain, s, e)

    def scan(self, sf: SourceFile, chain, start: int, end: int):
        toks = sf.toks
        i = start
        while i < end:
            t = toks[i]
            if (
                t.kind == "id"
                and t.val in ("define", "defineInternal")
                and i + 1 < end
                and toks[i + 1].val == "("
            ):
                close = sf.match.get(i + 1, end)
                self.define(sf, chain, t.val == "defineInternal", i + 2, close)
                i += 2  # also scan inside (nested refs are rare but harmless)
                continue
            if t.kind == "id" and not (i > 0 and toks[i - 1].val == ".") and t.val not in DEF_TOKENS:
                parts = [t.val]
                j = i + 1
                while (
                    j + 1 < end
                    and toks[j].val == "."
                    and toks[j + 1].kind == "id"
                    and toks[j + 1].val not in DEF_TOKENS
                ):
                    parts.append(toks[j + 1].val)
                    j += 2
                if parts[0] not in LIBRARY:
                    self.reference(sf, chain, parts)
                i = j
                continue
            i += 1

    def reference(self, sf, chain, parts):
        for k in range(len(parts), 0, -1):
            try:
                got = self.rel.resolve_path(parts[:k], sf, chain)
            except RecursionError:
                got = None
            if got:
                tsf, tci, tm = got
                if self.defines_config(tsf, tci, tm):
                    self.follow(tsf, tci, tm)
                return

    def defines_config(self, sf: SourceFile, ci: ClassInfo, m: Member) -> bool:
        for s, e in self.member_ranges(sf, ci, m):
            for t in sf.toks[s:e]:
                if t.kind == "id" and t.val in DEF_TOKENS:
                    return True
        return False

    def define(self, sf: SourceFile, chain, internal: bool, start: int, end: int):
        args = split_args(sf, start, end)
        if len(args) < 3:
            return  # define(ConfigKey): a copy, its source is followed as a reference
        where = f"{sf.path}:{sf.toks[start].line}"
        try:
            name = Expr(self.rel, sf, chain, *args[0]).parse()
        except Unresolved as ex:
            self.rel.warnings.append(f"{self.rel.version}: unresolved key name at {where}: {ex}")
            return
        if not isinstance(name, str):
            self.rel.warnings.append(f"{self.rel.version}: non-string key name at {where}")
            return
        typ_toks = [t.val for t in sf.toks[args[1][0] : args[1][1]] if t.kind == "id"]
        typ = typ_toks[-1] if typ_toks else ""
        if typ not in TYPES:
            self.rel.warnings.append(f"{self.rel.version}: {name}: unknown type {typ!r} at {where}")
            return
        third = [t.val for t in sf.toks[args[2][0] : args[2][1]] if t.kind != "nl"]
        default = None
        if third and third[-1] in IMPORTANCE and (len(third) == 1 or third[-2] == "."):
            default = NO_DEFAULT
        else:
            try:
                default = Expr(self.rel, sf, chain, *args[2]).parse()
            except (Unresolved, RecursionError, ZeroDivisionError, ValueError, TypeError):
                default = _UNRESOLVED
        prev = self.keys.get(name)
        if prev and prev.internal and not internal:
            prev = None
        if prev is None or not internal:
            self.keys[name] = Key(name, typ.lower(), default, internal, where)


_UNRESOLVED = object()


def render_default(v, typ: str):
    if v is NO_DEFAULT or v is _UNRESOLVED or v is None:
        return None
    if isinstance(v, _Unit):
        return None
    if isinstance(v, list):
        return ",".join(_jstr(x) for x in v)
    if typ in ("int", "long", "short") and isinstance(v, float) and v.is_integer():
        return int(v)
    if typ == "double" and isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if typ == "boolean" and isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    if typ in ("string", "class", "password", "list") and not isinstance(v, str):
        return _jstr(v)
    return v


# ---------------------------------------------------------------------------------------
# per release


ROOTS = {
    "broker": [("KafkaConfig", "configDef")],
    "dynamic": [("DynamicConfig.Broker", None)],
    "topic": [("LogConfig", "configDef"), ("LogConfig", "CONFIG")],
}


def find_root_classes(rel: Release, dotted: str):
    parts = dotted.split(".")
    out = []
    for path in rel.by_name.get(parts[0], []):
        if "/core/" not in "/" + path and not path.startswith(("core/", "storage/", "server/")):
            continue
        sf = rel.load(path)
        out += [(sf, c) for c in sf.class_by_chain(tuple(parts))]
    return out


def extract_release(rel: Release) -> dict[str, dict[str, Key]]:
    result = {}
    for scope in ("broker", "dynamic", "topic"):
        col = Collector(rel)
        for cls, member in ROOTS[scope]:
            for sf, ci in find_root_classes(rel, cls):
                if member is None:
                    for ms in ci.members.values():
                        for m in ms:
                            if col.defines_config(sf, ci, m):
                                col.follow(sf, ci, m)
                    for s, e in ci.statements:
                        col.scan(sf, ci.chain, s, e)
                else:
                    got = rel.member_in(sf, ci, member)
                    if got:
                        col.follow(*got)
            if col.keys:
                break
        result[scope] = col.keys
    return result


def discover_releases(gits: list[Git]) -> list[tuple[str, Git, str, str]]:
    found: dict[str, tuple[Git, str, str]] = {}
    for g in gits[:1]:  # release tags: the apache/kafka clone only
        for tag in g.run("tag", "--list").split():
            if re.fullmatch(r"\d+\.\d+\.\d+(\.\d+)?", tag) and vtuple(tag) >= OLDEST and tag not in found:
                if tag.startswith("0.") and len(vtuple(tag)) != 4:
                    continue
                found[tag] = (g, g.run("rev-parse", tag + "^{commit}").strip(), "tag")
    for version, commit in PINNED_RELEASES.items():
        if version in found:
            continue
        for g in gits:
            if g.has(commit):
                found[version] = (g, commit, "pinned commit")
                break
        else:
            print(
                f"warning: release {version}: commit {commit} not in any git dir given; skipped",
                file=sys.stderr,
            )
    for version, (commit, _note) in PRERELEASES.items():
        if version in found:
            continue
        for g in gits:
            if g.has(commit):
                found[version] = (g, commit, "release branch (unreleased)")
                break
        else:
            print(
                f"warning: pre-release {version}: commit {commit} not in any git dir given; skipped",
                file=sys.stderr,
            )
    return [(v, *found[v]) for v in sorted(found, key=vtuple)]


def build(gits: list[Git], verbose: bool = False):
    cache: dict = {}
    releases = discover_releases(gits)
    per_version: dict[str, dict[str, dict[str, Key]]] = {}
    meta = {}
    for version, git, commit, how in releases:
        rel = Release(version, git, commit, cache)
        keys = extract_release(rel)
        broker = dict(keys["broker"])
        dynamic_only = set()
        for k, v in keys["dynamic"].items():
            if k not in broker:
                broker[k] = v
                dynamic_only.add(k)
        for k in dynamic_only:
            broker[k].dynamic_only = True
        per_version[version] = {"broker": broker, "topic": keys["topic"]}
        meta[version] = {"commit": commit, "from": how, "repo": Path(git.dir).as_posix()}
        print(
            f"{version:10s} broker={len(broker):4d} topic={len(keys['topic']):3d}  {how} {commit[:12]}",
            file=sys.stderr,
        )
        if verbose:
            for w in rel.warnings:
                print("  " + w, file=sys.stderr)
        elif rel.warnings:
            print(f"  {len(rel.warnings)} warnings (-v to list)", file=sys.stderr)
    return per_version, meta


def summarize(per_version, meta) -> dict:
    versions = list(per_version)
    out: dict = {
        "generated_by": "tools/extract_kafka_configs.py",
        "source": (
            "Apache Kafka's ConfigDef definitions (KafkaConfig, DynamicConfig.Broker, LogConfig) at each "
            "release's commit: apache/kafka release tags, or the pinned release commit (see the script)"
        ),
        "versions": versions,
        "releases": {
            v: {"commit": meta[v]["commit"], "from": meta[v]["from"]}
            | ({"note": PRERELEASES[v][1]} if meta[v]["from"] == "release branch (unreleased)" else {})
            for v in versions
        },
        "counts": {v: {s: len(per_version[v][s]) for s in ("broker", "topic")} for v in versions},
    }
    for scope in ("broker", "topic"):
        names = sorted({k for v in versions for k in per_version[v][scope]})
        table = {}
        for name in names:
            present = [v for v in versions if name in per_version[v][scope]]
            latest = per_version[present[-1]][scope][name]
            ranges = []
            inside = False
            for v in versions:
                has = name in per_version[v][scope]
                if has and not inside:
                    ranges.append([v, None])
                    inside = True
                elif not has and inside:
                    ranges[-1][1] = v
                    inside = False
            entry = {
                "type": latest.type,
                "default": render_default(latest.default, latest.type),
                "since": ranges[0][0],
                "removed": ranges[-1][1],
            }
            if len(ranges) > 1:
                entry["ranges"] = ranges
            history = default_history(name, present, per_version, scope)
            if history:
                entry["defaults"] = history
            if latest.internal:
                entry["internal"] = True
            if getattr(latest, "dynamic_only", False):
                entry["dynamic_only"] = True
            table[name] = entry
        out[scope] = table
    return out


def default_history(name: str, present: list[str], per_version, scope: str) -> list[list] | None:
    """[[release, default], ...]: the default of ``name`` from each release where it changed (the
    first entry is the release defining it), or None when it never changed. A default that is not a
    literal (null) counts as a value: a change to or from null is recorded too, and a reader
    comparing defaults skips the null side."""
    out: list[list] = []
    for v in present:
        key = per_version[v][scope][name]
        value = render_default(key.default, key.type)
        if not out or out[-1][1] != value:
            out.append([v, value])
    return out if len(out) > 1 else None


def check_html(per_version, site_dir: Path):
    """Compare documented keys with kafka-site's generated HTML (DIR/<NN>/generated/...)."""
    by_minor: dict[str, str] = {}
    for v in per_version:
        t = vtuple(v)
        minor = f"0{t[1]}{t[2]}" if t[0] == 0 else f"{t[0]}{t[1]}"
        by_minor[minor] = v  # newest release of the minor
    is_git = (site_dir / "HEAD").exists() and (site_dir / "objects").is_dir()
    for minor, v in by_minor.items():
        for scope, page in (("broker", "kafka_config.html"), ("topic", "topic_config.html")):
            rel = f"{minor}/generated/{page}"
            if is_git:
                r = subprocess.run(
                    ["git", "-C", str(site_dir), "show", "HEAD:" + rel], capture_output=True, text=True
                )
                if r.returncode:
                    continue
                html = r.stdout
            else:
                if not (site_dir / rel).exists():
                    continue
                html = (site_dir / rel).read_text(errors="replace")
            doc = set(re.findall(r'<h4><a id="[^"]*" href="#[^"]*">([^<]+)</a></h4>', html)) or set(
                re.findall(r"<tr>\s*<td>([a-z0-9.]+)</td>", html)
            )
            doc |= set(re.findall(r'id="(?:brokerconfigs|topicconfigs)_([^"]+)"', html))
            ours = {k for k, key in per_version[v][scope].items() if not key.internal}
            print(
                f"{minor} ({v}) {scope}: site {len(doc)} ours {len(ours)}; missing {sorted(doc - ours)} "
                f"extra {sorted(ours - doc)}",
                file=sys.stderr,
            )


def dumps(data: dict) -> str:
    """Compact JSON with one line per release and per key, so a regeneration diffs well."""

    def one(v):
        return json.dumps(v, separators=(",", ":"))

    lines = ["{"]
    items = list(data.items())
    for n, (k, v) in enumerate(items):
        end = "," if n < len(items) - 1 else ""
        if isinstance(v, dict) and v:
            lines.append(f"{one(k)}:{{")
            sub = list(v.items())
            for m, (k2, v2) in enumerate(sub):
                lines.append(f"{one(k2)}:{one(v2)}" + ("," if m < len(sub) - 1 else ""))
            lines.append("}" + end)
        else:
            lines.append(f"{one(k)}:{one(v)}{end}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("git_dirs", nargs="+", help="apache/kafka git dir(s) (bare is fine)")
    ap.add_argument(
        "--out",
        default=str(Path(__file__).resolve().parent.parent / "auditor" / "data" / "kafka_configs.json"),
    )
    ap.add_argument("--check-html", help="kafka-site checkout: compare with <NN>/generated/*_config.html")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    sys.setrecursionlimit(10000)
    gits = [Git(d) for d in a.git_dirs]
    per_version, meta = build(gits, a.verbose)
    if a.check_html:
        check_html(per_version, Path(a.check_html))
    data = summarize(per_version, meta)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "w") as f:
        f.write(dumps(data))
    print(
        f"wrote {a.out}: {len(data['broker'])} broker keys, {len(data['topic'])} topic keys, "
        f"{len(data['versions'])} releases",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
