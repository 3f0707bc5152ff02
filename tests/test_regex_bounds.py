"""Issue 37, class 4: no pattern run on outside text can backtrack, and values are bounded
where they enter. Each case is timed on the size the attack used (60 KB), or, where a value is
bounded, on the largest value accepted; each took seconds to minutes before (quadratic or
exponential), and takes milliseconds now."""

from __future__ import annotations

import time

import pytest

from auditor.errors import UsageError

BUDGET = 1.0  # seconds: each case is milliseconds now; before, 3 s to minutes
KB60 = 60 * 1024


def _timed(fn):
    start = time.perf_counter()
    try:
        result = fn()
    except UsageError as e:
        result = e
    return result, time.perf_counter() - start


def _inventory(tmp_path, key: str, value: str):
    from auditor.collectors.inventory import load_inventory

    f = tmp_path / "fleet.yaml"
    f.write_text(f"clusters:\n  - name: a\n    {key}: '{value}'\n    broker_configs: [.]\n")
    return lambda: load_inventory(f)


@pytest.mark.parametrize(
    "key, value",
    [
        ("metrics", "http://" + ":" * (KB60 - 7)),  # 27-50 s before, then accepted
        ("metrics", "broker_id=1:http://" + "a:" * (KB60 // 2)),
        ("zookeeper", "a:1," * (KB60 // 4)),
        ("bootstrap_servers", "h:" * (KB60 // 2)),
    ],
    ids=["metrics-colons", "metrics-prefixed", "zookeeper", "bootstrap"],
)
def test_a_60_kb_inventory_value_is_refused_at_once_naming_file_and_line(tmp_path, key, value):
    if key == "zookeeper":
        value = value.rstrip(",")
    got, seconds = _timed(_inventory(tmp_path, key, value))
    assert isinstance(got, UsageError) and "fleet.yaml:3:" in str(got) and "longer than" in str(got)
    assert seconds < BUDGET, seconds


@pytest.mark.parametrize(
    "key, value, accepted",
    [
        ("metrics", "http://" + ":" * 4000, True),  # no @: no password
        ("metrics", "http://" + "u:" * 2000 + "@h/m", False),  # a password in the URL
        ("zookeeper", "a:1," * 1020 + "a:1 ", False),  # exponential in the old pattern (2^1021 paths)
        ("zookeeper", "a:1," * 1020 + "a:1/chroot", True),
    ],
    ids=["metrics-no-at", "metrics-password", "zookeeper-space", "zookeeper-chroot"],
)
def test_the_longest_accepted_values_validate_in_linear_time(tmp_path, key, value, accepted):
    got, seconds = _timed(_inventory(tmp_path, key, value.replace("'", "")))
    assert seconds < BUDGET, seconds
    assert isinstance(got, UsageError) != accepted, got


def test_urls_in_60_kb_of_text_are_found_in_linear_time():
    from auditor.collectors.urls import redact_url, scrub

    for text in ("a" * KB60, "a1" * (KB60 // 2), "1" * KB60 + "a", "x://" * (KB60 // 4)):
        for fn in (lambda t=text: redact_url(t), lambda t=text: scrub(t, "http://u:p@h/")):
            _, seconds = _timed(fn)
            assert seconds < BUDGET, (text[:10], seconds)
    # ... and still found after letters, digits or other scheme characters
    assert (
        redact_url("see 1http://u:pw@h/x?t=1, x-https://a:b@c.")
        == "see 1http://***@h/x?t=***, x-https://***@c."
    )


def test_a_60_kb_jaas_config_parses_in_linear_time():
    from auditor.collectors.client_config import parse_jaas

    got, seconds = _timed(lambda: parse_jaas("M required " + "a" * KB60 + ' username="u" password="p";'))
    assert seconds < BUDGET and got[1] == {"username": "u", "password": "p"}


def test_a_60_kb_suppression_comment_line_is_read_in_linear_time(tmp_path):
    from auditor.lint.inputs import find_suppressions

    # quadratic before: 1 s for 60 KB, 16 s for this line
    text = "- name: t  " + "# kafka-audit: ignore[" * (4 * KB60 // 22) + "\n  partitions: 1\n"
    _, seconds = _timed(lambda: find_suppressions(text, "topics.yaml", True))
    assert seconds < BUDGET, seconds


@pytest.mark.parametrize(
    "text", [" " * KB60 + "#", "a" + " " * 4000 + "#", "!" + " " * 4000 + "#"], ids=["60kb", "4k", "not"]
)
def test_a_label_selector_is_bounded_and_parsed_in_linear_time(text):
    from auditor.collectors.inventory import parse_selector

    got, seconds = _timed(lambda: parse_selector(text))
    assert seconds < BUDGET and isinstance(got, UsageError), (seconds, got)
    assert parse_selector("  ! pci , environment = prod ")  # spaces around terms still read
