"""Credentials in URLs: shown and stored only redacted, sent only as an Authorization header.

A metrics URL may carry credentials: ``http://user:pass@host:7071/metrics`` (userinfo) or
``https://host/metrics?token=abc`` (a query parameter). Neither may reach a snapshot's manifest,
a source error, stderr or a report. :func:`redact_url` replaces the userinfo with ``***`` and
*every* query value (and a fragment) with ``***`` (a scrape URL needs none of them shown):
``http://***@host:7071/metrics?token=***``. It takes a single URL or a free text, in which every
``scheme://...`` URL is redacted.

:func:`split_credentials` gives the URL to request (no userinfo: urllib would otherwise take
``user:pass@host`` as the host and resolve it) and the Basic ``Authorization`` header value, and
:func:`url_secrets` the secret strings of a URL, to scrub from an error message that quotes
pieces of the URL (``nonnumeric port: 'pass'``).
"""

from __future__ import annotations

import base64
import re
from urllib.parse import unquote

MASK = "***"

# A URL in a text: the scheme is the run of scheme characters before "://" from its first letter
# (group 2; group 1 is what precedes that letter in the run). Tried only where a run starts (the
# lookbehind), so a long run of letters is scanned once, not once per starting position (which
# made a 60 KB text quadratic).
_URL_IN_TEXT = re.compile(r"(?<![A-Za-z0-9+.-])([0-9+.-]*)([A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+)")
_TRAILING = ".,:;)]"  # punctuation after a URL in a text, not part of it
_WHOLE_URL = re.compile(r"^\s*[A-Za-z][A-Za-z0-9+.-]*://")
_QUERY_SEP = re.compile(r"([&;])")
# Secrets shorter than this are not scrubbed from free text (they would mangle it); they are
# still redacted wherever they appear inside a URL.
_MIN_SCRUB = 3


def _split(url: str) -> tuple[str, str, str, str, str] | None:
    """(scheme://, userinfo, hostport+path, query, fragment) -- userinfo / query / fragment
    without their ``@`` / ``?`` / ``#``; None when ``url`` has no ``scheme://``."""
    m = _WHOLE_URL.match(url)
    if not m:
        return None
    head, rest = url[: m.end()], url[m.end() :]
    end = len(rest)
    for sep in "/?#":
        i = rest.find(sep)
        if i != -1:
            end = min(end, i)
    authority = rest[:end]
    userinfo = ""
    if "@" in authority:
        userinfo, _, hostport = authority.rpartition("@")
        rest = hostport + rest[end:]
    else:
        # A password with an unescaped "/", "?" or "#" ends the authority early
        # ("http://u:pa/ss@host/"): a non-numeric "port" followed by an "@" before any query
        # is taken as userinfo, so that it is never shown.
        before_query = re.split(r"[?#]", rest, maxsplit=1)[0]
        _host, colon, port = authority.rpartition(":")
        if "@" in before_query and colon and not port.isdigit() and not authority.startswith("["):
            userinfo, _, hostpath = before_query.rpartition("@")
            rest = hostpath + rest[len(before_query) :]
    fragment = ""
    if "#" in rest:
        rest, _, fragment = rest.partition("#")
        fragment = fragment or "\0"  # present but empty
    query = ""
    if "?" in rest:
        rest, _, query = rest.partition("?")
        query = query or "\0"
    return head, userinfo, rest, query, fragment


def _redact_query(query: str) -> str:
    out = []
    for part in _QUERY_SEP.split(query):
        if part in ("&", ";", ""):
            out.append(part)
        elif "=" in part:
            out.append(part.split("=", 1)[0] + "=" + MASK)
        else:
            out.append(MASK)  # a bare value (``?abc123``)
    return "".join(out)


def _redact_one(url: str) -> str:
    parts = _split(url)
    if parts is None:
        return url
    head, userinfo, rest, query, fragment = parts
    text = head + (MASK + "@" if userinfo else "") + rest
    if query:
        text += "?" + ("" if query == "\0" else _redact_query(query))
    if fragment:
        text += "#" + ("" if fragment == "\0" else MASK)
    return text


def redact_url(text: str | None) -> str | None:
    """``text`` with the credentials of every URL in it replaced by ``***``: the userinfo
    (``user:pass@`` -> ``***@``), every query value (``?token=abc`` -> ``?token=***``) and the
    fragment. A text that is one URL is redacted as a whole (even with spaces in it); a file
    path is returned as is."""
    if not text:
        return text
    if _WHOLE_URL.match(text):
        return _redact_one(text)
    return _URL_IN_TEXT.sub(_redact_match, text)


def _redact_match(m: re.Match) -> str:
    url = m.group(2)
    bare = url.rstrip(_TRAILING)
    return m.group(1) + _redact_one(bare) + url[len(bare) :]


def url_secrets(url: str) -> list[str]:
    """The secret pieces of ``url`` (userinfo, its password, query values, fragment),
    raw and percent-decoded, longest first: strings to scrub from a message quoting them."""
    parts = _split(url)
    if parts is None:
        return []
    _head, userinfo, _rest, query, fragment = parts
    found: set[str] = set()
    if userinfo:
        found.add(userinfo)  # and, with a password, the password (a user name alone is no secret)
        if ":" in userinfo:
            found.add(userinfo.split(":", 1)[1])
    if query and query != "\0":
        for part in re.split(r"[&;]", query):
            found.add(part.split("=", 1)[1] if "=" in part else part)
    if fragment and fragment != "\0":
        found.add(fragment)
    found |= {unquote(s) for s in found}
    return sorted((s for s in found if len(s) >= _MIN_SCRUB), key=len, reverse=True)


def scrub(message: str, url: str) -> str:
    """``message`` with every URL in it redacted and every secret of ``url`` replaced by ``***``."""
    text = _URL_IN_TEXT.sub(_redact_match, message or "")
    for secret in url_secrets(url):
        text = text.replace(secret, MASK)
    return text


def split_credentials(url: str) -> tuple[str, str | None]:
    """(the URL without its userinfo, the Basic ``Authorization`` header value or None)."""
    parts = _split(url)
    if parts is None or not parts[1]:
        return url, None
    head, userinfo, rest, query, fragment = parts
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")
    bare = head + rest + ("?" + ("" if query == "\0" else query) if query else "")
    return bare, f"Basic {token}"
