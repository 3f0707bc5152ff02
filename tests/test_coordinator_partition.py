"""Group coordinator mapping: Java's String.hashCode and Kafka's Utils.abs, checked against a real JVM."""

from __future__ import annotations

import base64
import random
import shutil
import subprocess

import pytest

from auditor.coordinator_partition import (
    INT_MIN,
    coordinator_partition,
    java_string_hashcode,
    kafka_abs,
    share_state_partition,
)

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


def _run_java(classpath, main: str, lines_file, partitions: int) -> list[str]:
    """The lines ``main`` prints for the input file and partition count."""
    argv = ["java", "-Dfile.encoding=UTF-8", "-cp", str(classpath), main, str(lines_file), str(partitions)]
    return subprocess.run(argv, check=True, timeout=120, capture_output=True, text=True).stdout.splitlines()


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
    out = _run_java(java_classes, "HashCodes", tmp_path / "in.txt", partitions)
    assert len(out) == len(strings)
    java = [tuple(int(x) for x in line.split("\t")) for line in out]
    python = [(java_string_hashcode(s), coordinator_partition(s, partitions)) for s in strings]
    mismatches = [(s, j, p) for s, j, p in zip(strings, java, python, strict=True) if j != p]
    assert not mismatches


# A share group's state (KIP-932) maps by "groupId:topicId:partition" with the topic id as Kafka
# prints it (Uuid.toString: URL-safe base64 of the 16 bytes, no padding); the JVM builds that text
# from the UUID's two longs itself, as org.apache.kafka.common.Uuid does.
SHARE_JAVA_SOURCE = """
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.Base64;
public class ShareKeys {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[1]);
        for (String line : Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8)) {
            String[] f = line.split("\\t");
            ByteBuffer b = ByteBuffer.wrap(new byte[16]);
            b.putLong(Long.parseUnsignedLong(f[1], 16)).putLong(Long.parseUnsignedLong(f[2], 16));
            String topicId = Base64.getUrlEncoder().withoutPadding().encodeToString(b.array());
            int h = String.format("%s:%s:%d", f[0], topicId, Integer.parseInt(f[3])).hashCode();
            int abs = (h == Integer.MIN_VALUE) ? 0 : Math.abs(h);
            System.out.println(topicId + "\t" + (abs % n));
        }
    }
}
"""


def _share_keys() -> list[tuple[str, bytes, int]]:
    rng = random.Random(932)
    groups = ["orders-workers", "Grüße-Gruppe", "queue-🚀", "日本語グループ", "g"]
    return [(rng.choice(groups), rng.randbytes(16), rng.randrange(0, 200)) for _ in range(300)]


def _topic_id(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_share_state_partition_hashes_group_topic_id_and_partition():
    tid = _topic_id(bytes(range(16)))
    assert tid == "AAECAwQFBgcICQoLDA0ODw"
    assert share_state_partition("g", tid, 3) == coordinator_partition(f"g:{tid}:3")
    # not the group's own coordinator partition: the topic partition is part of the key
    assert {share_state_partition("orders-workers", tid, p, 50) for p in range(20)} != {
        coordinator_partition("orders-workers", 50)
    }
    for wrong in ("000102030405060708090a0b0c0d0e0f", "00010203-0405-0607-0809-0a0b0c0d0e0f", tid + "=="):
        with pytest.raises(ValueError, match="Kafka's form"):
            share_state_partition("g", wrong, 0)


@pytest.mark.parametrize("partitions", [50, 7])
def test_share_state_partition_matches_the_jvm(tmp_path, partitions):
    if not (shutil.which("javac") and shutil.which("java")):
        pytest.skip("needs a JDK (javac, java)")
    (tmp_path / "ShareKeys.java").write_text(SHARE_JAVA_SOURCE)
    subprocess.run(["javac", "-d", str(tmp_path), str(tmp_path / "ShareKeys.java")], check=True, timeout=120)
    keys = _share_keys()
    lines = [f"{g}\t{raw[:8].hex()}\t{raw[8:].hex()}\t{p}" for g, raw, p in keys]
    (tmp_path / "in.txt").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    out = _run_java(tmp_path, "ShareKeys", tmp_path / "in.txt", partitions)
    java = [(tid, int(n)) for tid, n in (line.split("\t") for line in out)]
    python = [(_topic_id(raw), share_state_partition(g, _topic_id(raw), p, partitions)) for g, raw, p in keys]
    assert len(java) == len(keys) and java == python
