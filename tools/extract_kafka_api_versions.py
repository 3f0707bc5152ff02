#!/usr/bin/env python3
"""Derive, from Kafka's own message definitions, the lowest version of each protocol API a
Kafka 4.0 broker still accepts, and write ``auditor/data/kafka4_api_versions.json``.

What it reads
-------------
The request definitions ``clients/src/main/resources/common/message/*Request.json`` at two
release commits: 3.9.0 (the last 3.x line a 4.0 upgrade starts from) and 4.0.0. Of each file
it reads only ``apiKey``, ``name``, ``listeners``, ``validVersions`` and (3.7-3.9)
``deprecatedVersions`` (JSON with ``//`` comments, as Kafka's generator reads it). No Kafka
code is copied: the output holds facts (names, keys, version numbers, file paths, commits).

- ``request``: the API's name as the brokers' ``kafka.network:type=RequestMetrics`` tag
  ``request`` spells it: the message name without ``Request`` (Kafka's ``ApiKeys.name``, from
  the generated ``ApiMessageType``), e.g. ``Produce``, ``ListOffsets``.
- ``request_tags``: every ``request`` tag whose ``version`` tag counts this API: the name,
  and for Fetch ``FetchConsumer`` / ``FetchFollower``, for AddPartitionsToTxn
  ``AddPartitionsToTxnVerification`` (``RequestMetrics`` in
  core/src/main/scala/kafka/network/RequestChannel.scala marks these names' RequestsPerSec
  with the request's version too).
- ``min_version``: the lowest version of 4.0's ``validVersions``; null when 4.0 has no such
  request (the API was removed: the ZooKeeper-mode inter-broker APIs).
- ``removed_versions``: the versions valid in 3.9 below ``min_version`` ([low, high], or null
  when none), i.e. what a 3.9 broker accepts and a 4.0 broker rejects.
- ``by_release``: per 4.x line, the lowest version its newest release accepts (``LINE_RELEASES``:
  4.0.2, 4.1.2, 4.2.1, 4.3.1 and the unreleased 4.4 branch), null when it has no such API: what
  ``--target-version 4.N`` compares with (JoinGroup: 2 in 4.0.0, 0 again from 4.0.1, KAFKA-19444;
  the share group RPCs' v0 of the 4.0 early access is gone from 4.1). APIs new after 4.0 are
  listed too (their ``min_version`` is null: 4.0 has none).
- ``deprecated_versions_3_9``: 3.9's ``deprecatedVersions`` (the versions a 3.7-3.9 broker
  counts in ``DeprecatedRequestsPerSec``). It can be wider than ``removed_versions``: Produce
  v3-v6 were deprecated in 3.7 but kept in 4.0 (KAFKA-18659).

Releases and commits
--------------------
The commits are those of tools/extract_kafka_configs.py's ``PINNED_RELEASES`` (see its module
doc): 3.9.0 at cc53a632edcf (the "Bump version to 3.9.0" commit) and 4.0.0 at 4ae681446f18
(the last commit of the 4.0 branch before "Bump to 4.0.1-SNAPSHOT"); both are in a snapshot of
confluentinc/kafka, which carries Apache Kafka's release branches with Apache's own commits.

Cross-checked against KIP-896 and Kafka 4.0's generated protocol guide (kafka.apache.org/40
/protocol.html, whose first Produce request version is 3): Produce 3 (KIP-896 removed v0-v2
after KAFKA-18659), Fetch 4, ListOffsets 1, Metadata 0, OffsetCommit 2, OffsetFetch 1,
FindCoordinator 0, JoinGroup 2 (see tests/test_kafka4_readiness.py).

Rerun
-----
::

    python tools/extract_kafka_api_versions.py /path/to/kafka.git [--out auditor/data/kafka4_api_versions.json]
    python tools/extract_kafka_api_versions.py /path/to/kafka.git --check   # compare with the checked-in file
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

RELEASES = {
    "3.9.0": "cc53a632edcf78dc8b2a4c2c502c654950744e1e",
    "4.0.0": "4ae681446f18f9a6d7a59f317013ef82379a4ba4",
}
# The newest release of each 4.x line (a target of `--target-version 4.N`), read for
# ``by_release``: what that release accepts (4.0.1 brought JoinGroup v0-v1 back, KAFKA-19444;
# 4.1 dropped the share group RPCs' early-access v0). 4.4.0 is not released: its release branch
# (tools/extract_kafka_configs.py PRERELEASES).
LINE_RELEASES = {
    "4.0.2": "5d0fe56677f97d9525843963f1ffe329d2b69433",
    "4.1.2": "c82fd9b934b4c1e6fa799e3f1dcc8f08d997740c",
    "4.2.1": "18d5ecd939c8d510fdd72d0abb1f7099659dcd58",
    "4.3.1": "26b251a451ce941d3d7a55e6487bcb7f16b5ad48",
    "4.4.0": "87943b2ff874f7186a7a091f7fad13d1ca62fc42",
}
MESSAGE_DIR = "clients/src/main/resources/common/message"
# RequestMetrics names that also carry the request's version (RequestChannel.scala).
EXTRA_REQUEST_TAGS = {
    "Fetch": ["FetchConsumer", "FetchFollower"],
    "AddPartitionsToTxn": ["AddPartitionsToTxnVerification"],
}
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "auditor" / "data" / "kafka4_api_versions.json"


def git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "-C", git_dir, *args], check=True, capture_output=True, text=True).stdout


def strip_comments(text: str) -> str:
    """JSON with ``//`` line comments (outside strings) -> JSON."""
    out, in_string, escaped, i = [], False, False, 0
    while i < len(text):
        c = text[i]
        if in_string:
            out.append(c)
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", i):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


def version_range(spec: str | None) -> tuple[int, int] | None:
    """``"3-12"`` -> (3, 12); ``"0"`` -> (0, 0); ``"none"`` / None -> None."""
    if not spec or spec.strip() == "none":
        return None
    low, _, high = spec.strip().partition("-")
    return int(low), int(high or low)


def read_requests(git_dir: str, commit: str) -> dict[int, dict]:
    """apiKey -> the request definition's facts at ``commit``."""
    paths = [
        p
        for p in git(git_dir, "ls-tree", "--name-only", f"{commit}:{MESSAGE_DIR}").split()
        if p.endswith("Request.json")
    ]
    out = {}
    for name in paths:
        path = f"{MESSAGE_DIR}/{name}"
        try:
            spec = json.loads(strip_comments(git(git_dir, "show", f"{commit}:{path}")))
        except (json.JSONDecodeError, subprocess.CalledProcessError) as e:
            raise SystemExit(f"{path} at {commit[:12]}: not readable: {str(e).splitlines()[0]}") from None
        if spec.get("type") != "request":
            continue
        out[int(spec["apiKey"])] = {
            "request": spec["name"].removesuffix("Request"),
            "path": path,
            "valid": version_range(spec.get("validVersions")),
            "deprecated": version_range(spec.get("deprecatedVersions")),
            "listeners": spec.get("listeners", []),
        }
    return out


def extract(git_dir: str, releases: dict[str, str] = RELEASES, lines: dict[str, str] = LINE_RELEASES) -> dict:
    """The data file's content from ``git_dir`` at ``releases`` ({"3.9.0": commit, "4.0.0": commit})
    and, per API, ``by_release``: the lowest version each release of ``lines`` accepts (null: it
    has no such API)."""
    old, new = (read_requests(git_dir, releases[v]) for v in ("3.9.0", "4.0.0"))
    per_line = {v: read_requests(git_dir, c) for v, c in lines.items()}
    apis = []
    for key in sorted(old.keys() | new.keys()):
        before, after = old.get(key), new.get(key)
        cur = after or before
        low = after["valid"][0] if after and after["valid"] else None
        removed = None
        if before and before["valid"]:
            top = before["valid"][1] if low is None else min(low - 1, before["valid"][1])
            removed = [before["valid"][0], top] if top >= before["valid"][0] else None
        apis.append(
            {
                "request": cur["request"],
                "api_key": key,
                "request_tags": [cur["request"], *EXTRA_REQUEST_TAGS.get(cur["request"], [])],
                "min_version": low,
                "max_version": after["valid"][1] if after and after["valid"] else None,
                "removed_versions": removed,
                "deprecated_versions_3_9": list(before["deprecated"])
                if before and before["deprecated"]
                else None,
                "listeners": cur["listeners"],
                "source": {"path": cur["path"], "commit": releases["4.0.0" if after else "3.9.0"]},
                "by_release": {
                    v: (defs[key]["valid"][0] if key in defs and defs[key]["valid"] else None)
                    for v, defs in per_line.items()
                },
            }
        )
    for key in sorted(set().union(*per_line.values()) - old.keys() - new.keys()):
        cur = next(defs[key] for defs in per_line.values() if key in defs)
        v0 = next(v for v, defs in per_line.items() if key in defs)
        apis.append(
            {
                "request": cur["request"],
                "api_key": key,
                "request_tags": [cur["request"], *EXTRA_REQUEST_TAGS.get(cur["request"], [])],
                "min_version": None,
                "max_version": None,
                "removed_versions": None,
                "deprecated_versions_3_9": None,
                "listeners": cur["listeners"],
                "source": {"path": cur["path"], "commit": lines[v0]},
                "by_release": {
                    v: (defs[key]["valid"][0] if key in defs and defs[key]["valid"] else None)
                    for v, defs in per_line.items()
                },
            }
        )
    apis.sort(key=lambda a: a["api_key"])
    return {
        "about": (
            "The lowest version of each Kafka protocol API a Kafka 4.0 broker accepts (KIP-896), read from "
            "Kafka's message definitions (validVersions of " + MESSAGE_DIR + "/*Request.json at 4.0.0; "
            "removed_versions: valid at 3.9.0 and not at 4.0.0; deprecated_versions_3_9: 3.9.0's "
            "deprecatedVersions). min_version null: the API does not exist in 4.0. by_release: the lowest "
            "version the newest release of each 4.x line accepts (4.4.0: its unreleased release branch). "
            "Generated by tools/extract_kafka_api_versions.py."
        ),
        "target": "4.0",
        "lines": {v: {"commit": c} for v, c in lines.items()},
        "releases": {
            v: {
                "commit": c,
                "repository": "apache/kafka (read from a confluentinc/kafka snapshot, same commits)",
            }
            for v, c in releases.items()
        },
        "apis": apis,
    }


def render(data: dict) -> str:
    return json.dumps(data, indent=1) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("git_dir", help="a Kafka git directory holding the pinned commits")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = ap.parse_args(argv)
    text = render(extract(args.git_dir))
    if args.check:
        if args.out.read_text(encoding="utf-8") != text:
            print(
                f"{args.out}: differs from what the message definitions give; rerun without --check",
                file=sys.stderr,
            )
            return 1
        print(f"{args.out}: up to date")
        return 0
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out} ({len(json.loads(text)['apis'])} APIs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
