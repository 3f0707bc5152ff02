"""The one regular-expression dialect of exemption patterns (``cluster`` and ``resource``).

Exemptions are matched in one place for every command: the final stage of the runner
(auditor/engine/runner.py, ``findings_table``: the ``exempted_by`` column, ``rlike``), which
`check`, `fleet`, `lint` and `preflight` all go through. That stage runs on DuckDB, whose
regexes are RE2, or on Spark, whose regexes are java.util.regex; the file is read by Python.
A pattern is therefore refused at config load (exit 2, one line naming the file and the
exemption) unless it is in the subset the three agree on, so that a file either fails the
same way for every command or exempts the same findings on either engine. Allowed:

* literals; ``.``; ``^`` ``$``; ``|``; groups ``(...)`` and ``(?:...)``;
* quantifiers ``* + ? {n} {n,} {n,m}`` (n, m <= 1000, RE2's limit), each optionally lazy, but
  not nested: a group repeated more than once (``*``, ``+``, ``{2,}`` ...) holding a quantifier
  or alternatives (``(a+)+``, ``(x*y)*``, ``(a|aa)+``) backtracks exponentially on a JVM before
  17, where Spark executors may run (RE2 is linear on it); a class (``[ab]+``) or one repeat says
  the same;
* character classes ``[...]`` / ``[^...]`` of literals, ranges and the escapes below;
* escapes ``\\d \\D \\w \\W`` (ASCII on both engines), ``\\A`` (not in a class),
  ``\\t \\n \\r \\f``, ``\\xHH``, and a backslash before any ASCII punctuation;
* flags ``(?i)``, ``(?m)``, ``(?s)`` at the start, or scoped ``(?i:...)``; ``(?i)`` only in an
  ASCII pattern (Java folds ASCII case only, RE2 all of Unicode).

Refused, because at least one dialect rejects it or reads it differently: lookaround
``(?=`` ``(?!`` ``(?<=`` ``(?<!`` (not in RE2), backreferences, named groups (``(?P<`` is not
Java, ``(?<`` not Python), atomic groups and possessive quantifiers, comments ``(?#``,
``(?x)`` and other flags, ``\\b \\B`` (Unicode-aware in Java 17), ``\\s \\S`` (vertical tab),
``\\Z \\z \\G \\Q \\p \\u \\v \\h \\R``... and octal escapes, ``{``
that is not a quantifier and ``{,n}`` (a literal in RE2, an error in Java), nested classes,
class intersections ``&&`` and POSIX classes ``[[:alpha:]]`` (RE2 only).

What remains different: names holding line terminators (``$`` before a final line feed,
``.`` and ``\\r``), and under ``(?i)`` the two non-ASCII letters RE2 folds onto ASCII ones
(the Kelvin sign, long s); cluster and resource names carry neither in practice.
"""

from __future__ import annotations

import re
import warnings

MAX_REPEAT = 1000
_SIMPLE_ESCAPES = set("dDwWtnrf")
_ANCHOR_ESCAPES = set("A")  # not inside a class
_QUANTIFIER = re.compile(r"\{([0-9]{1,9})(,([0-9]{0,9}))?\}")  # (more digits: not a count RE2 reads)
_FLAGS = re.compile(r"\(\?([ims]+)(\)|:)|\(\?(-[ims]+|[ims]+-[ims]+):")


def refusal(pattern: str) -> str | None:
    """Why ``pattern`` is outside the common dialect, or None when every engine reads it alike."""
    problem = _lexical(pattern)
    if problem:
        return problem
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Python's "possible nested set" / set-operation warnings
        try:
            re.compile(pattern)
        except (re.error, FutureWarning, DeprecationWarning) as e:
            return f"is not a valid regular expression ({e})"
    if re.search(r"\(\?[ims]*i", pattern) and not pattern.isascii():
        return "uses (?i) with non-ASCII characters (Spark folds ASCII case only, DuckDB all of Unicode)"
    return None


def _repeats(p: str, j: int) -> bool:
    """Whether the quantifier at ``p[j]`` (if any) repeats what precedes it more than once."""
    if p.startswith(("*", "+"), j):
        return True
    m = _QUANTIFIER.match(p, j) if p.startswith("{", j) else None
    if m is None:
        return False
    upper = m.group(3) if m.group(2) else m.group(1)
    return upper == "" or int(upper) > 1


def _lexical(p: str) -> str | None:
    i, in_class, n = 0, False, len(p)
    groups: list[bool] = []  # per open group: whether a quantifier or "|" is inside it
    while i < n:
        c = p[i]
        if c == "\\":
            if i + 1 >= n:
                return "ends with a lone backslash"
            e = p[i + 1]
            if e == "x":
                if not re.fullmatch(r"[0-9A-Fa-f]{2}", p[i + 2 : i + 4]):
                    return "uses \\x without two hex digits (write \\xHH)"
                i += 4
                continue
            if e in _ANCHOR_ESCAPES and in_class:
                return f"uses \\{e} inside a character class"
            if not (
                e in _SIMPLE_ESCAPES
                or e in _ANCHOR_ESCAPES
                or (e.isascii() and not e.isalnum() and not e.isspace())
            ):
                return f"uses the escape \\{e}, which the engines read differently (or not at all)"
            i += 2
            continue
        if in_class:
            if c == "[":
                return "nests '[' inside a character class (write \\[)"
            if p.startswith("&&", i):
                return "uses '&&' inside a character class (a Java intersection)"
            if c == "]":
                in_class = False
            i += 1
            continue
        if c == "[":
            in_class = True
            i += 1
            if p.startswith("^", i):
                i += 1
            if p.startswith("]", i):
                return "starts a character class with ']' (write \\])"
            continue
        if c == "(" and p.startswith("(?:", i):
            groups.append(False)
            i += 3
            continue
        if c == "(" and p.startswith("(?", i):
            m = _FLAGS.match(p, i)
            if m is None:
                ahead = p[i : i + 4]
                if ahead[2:3] in ("=", "!") or ahead[2:4] in ("<=", "<!"):
                    return f"uses lookaround '{ahead}...', which DuckDB (RE2) does not support"
                return f"uses '{ahead}...', a construct outside the dialect every engine shares"
            if m.group(2) == ")" and i != 0:
                return "sets flags in the middle of the pattern (put (?i) first, or use (?i:...))"
            if m.group(2) == ":" or m.group(3):
                groups.append(False)  # (?i:...): a group
            i = m.end()
            continue
        if c == "(":
            groups.append(False)
            i += 1
            continue
        if c == ")":
            inner = groups.pop() if groups else False
            if inner and _repeats(p, i + 1):
                # (a+)+ is exponential on a backtracking engine: harmless on RE2 and JDK 17,
                # not on the older JVMs Spark executors may run.
                return (
                    "nests quantifiers (a repeated group holding a quantifier or alternatives, such as "
                    "(a+)+ or (a|aa)+)"
                )
            if groups:
                groups[-1] = groups[-1] or inner
            i += 1
            continue
        if c in "*+?{|" and groups:
            groups[-1] = True  # a quantifier, or alternatives (a|a): each can match in many ways
        if c == "{":
            m = _QUANTIFIER.match(p, i)
            if m is None:
                return "uses '{' that is not a quantifier {n}, {n,} or {n,m} (write \\{)"
            if any(int(g) > MAX_REPEAT for g in (m.group(1), m.group(3)) if g):
                return f"repeats more than {MAX_REPEAT} times"
            i = m.end()
            if p.startswith("+", i):
                return "uses a possessive quantifier"
            continue
        if c in "*+?" and p.startswith("+", i + 1) and not (c == "?" and i > 0 and p[i - 1] in "*+?}"):
            return "uses a possessive quantifier"
        i += 1
    return None
