"""Group coordinator mapping: Java's String.hashCode and Kafka's Utils.abs, checked against a real JVM."""

from __future__ import annotations

import random
import shutil
import subprocess

import pytest

from auditor.coordinator_partition import INT_MIN, coordinator_partition, java_string_hashcode, kafka_abs

# Values printed by Java 17 ("s".hashCode()); see test_matches_the_jvm for the live comparison.
KNOWN = {
    "": 0,
    "a": 97,
    "abc": 96354,
    "hello": 99162322,
    "hello world": 1794106052,
    "Aa": 2112,
    "BB": 2112,
    "polygenelubricants": INT_MIN,
    "é": 233,
    "€": 8364,
    "😀": 1772899,  # outside the BMP: two UTF-16 code units (a surrogate pair)
    "consumer-group-🚀": 278777832,
    "Grüße-Gruppe": -671543439,
    "日本語グループ": -305235731,
    "console-consumer-12345": 158455506,
}


@pytest.mark.parametrize("s,expected", sorted(KNOWN.items()))
def test_java_string_hashcode_known_values(s, expected):
    assert java_string_hashcode(s) == expected


def test_min_value_maps_to_partition_zero():
    # Math.abs(Integer.MIN_VALUE) stays negative; Kafka's Utils.abs returns 0 for it.
    assert java_string_hashcode("polygenelubricants") == INT_MIN
    assert kafka_abs(INT_MIN) == 0
    assert coordinator_partition("polygenelubricants") == 0
    assert coordinator_partition("polygenelubricants", 7) == 0


def test_negative_hashes_use_abs():
    assert coordinator_partition("Grüße-Gruppe") == 671543439 % 50 == 39
    assert coordinator_partition("日本語グループ", 50) == 31


def test_partition_count():
    assert coordinator_partition("hello", 1) == 0
    assert coordinator_partition("hello", 17) == 99162322 % 17
    with pytest.raises(ValueError):
        coordinator_partition("hello", 0)


def _sample_strings() -> list[str]:
    """~20 chosen ids plus seeded random ones over ASCII, Latin-1, CJK and astral planes."""
    chosen = list(KNOWN) + [
        "bid-optimizer-76",
        "budget-pacer-40",
        "ÄÖÜ",
        "zażółć-gęślą-jaźń",
        "группа-потребителей",
        "x" * 200,
        "🎉🎉🎉",
        "tab\tseparated",
    ]
    rng = random.Random(20261122)
    ranges = [(0x20, 0x7E), (0xA0, 0xFF), (0x4E00, 0x9FFF), (0x1F300, 0x1FAFF)]
    for _ in range(200):
        chars = []
        for _ in range(rng.randrange(0, 40)):
            lo, hi = rng.choice(ranges)
            chars.append(chr(rng.randint(lo, hi)))
        chosen.append("".join(chars))
    return chosen


JAVA_SOURCE = """
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
public class HashCodes {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[1]);
        for (String s : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            int h = s.hashCode();
            int abs = (h == Integer.MIN_VALUE) ? 0 : Math.abs(h);  // org.apache.kafka.common.utils.Utils.abs
            System.out.println(h + "\\t" + (abs % n));
        }
    }
}
"""


@pytest.fixture(scope="module")
def java_classes(tmp_path_factory):
    if not (shutil.which("javac") and shutil.which("java")):
        pytest.skip("needs a JDK (javac, java)")
    d = tmp_path_factory.mktemp("java")
    (d / "HashCodes.java").write_text(JAVA_SOURCE)
    subprocess.run(["javac", "-d", str(d), str(d / "HashCodes.java")], check=True, timeout=120)
    return d


@pytest.mark.parametrize("partitions", [50, 17])
def test_matches_the_jvm(java_classes, tmp_path, partitions):
    strings = _sample_strings()
    assert not any("\n" in s or "\r" in s for s in strings)
    (tmp_path / "in.txt").write_text("".join(s + "\n" for s in strings), encoding="utf-8")
    out = subprocess.run(
        [
            "java",
            "-Dfile.encoding=UTF-8",
            "-cp",
            str(java_classes),
            "HashCodes",
            str(tmp_path / "in.txt"),
            str(partitions),
        ],
        check=True,
        timeout=120,
        capture_output=True,
        text=True,
    ).stdout.splitlines()
    assert len(out) == len(strings)
    java = [tuple(int(x) for x in line.split("\t")) for line in out]
    python = [(java_string_hashcode(s), coordinator_partition(s, partitions)) for s in strings]
    mismatches = [(s, j, p) for s, j, p in zip(strings, java, python, strict=True) if j != p]
    assert not mismatches
