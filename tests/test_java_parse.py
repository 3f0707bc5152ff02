"""How Kafka parses a config value is how Java parses it (ConfigDef.parseType: String.trim, then
Integer.parseInt, Long.parseLong, equalsIgnoreCase, Double.parseDouble): checks/transforms.py and
CFG001 (checks/hygiene.py), on DuckDB, against a real JVM (issue 47)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from checks.transforms import JAVA_DIGIT_ZEROS

# Named cases: what trim strips (every char up to U+0020) and keeps (NBSP, DEL), Unicode digits
# of the BMP (Arabic-Indic, Devanagari, NKo, fullwidth) and outside it (not read), signs, ranges,
# booleans (equalsIgnoreCase: 'ſ' upper-cases to 'S'), doubles (hexadecimal, suffixes).
VALUES = {
    "plain": "16",
    "spaces": " 16 ",
    "tab-and-newlines": "\t16\r\n",
    "control-characters": "\x0b16\x1f",
    "nul-and-unit-separator": "\x00 8\x01",
    "nbsp-is-not-trimmed": "\u00a08",
    "del-is-not-trimmed": "8\x7f",
    "arabic-indic": "١٦",
    "devanagari-negative": "-१२",
    "nko": "߁߂",
    "fullwidth-plus": "+３",
    "mixed-scripts": "1٢३",
    "supplementary-digit": "𝟖",
    "superscript": "²",
    "underscore": "1_0",
    "lone-sign": "+",
    "double-sign": "+-1",
    "decimal": "2.0",
    "int-max": "2147483647",
    "int-max-plus-one": "2147483648",
    "int-min-arabic": "-٢١٤٧٤٨٣٦٤٨",
    "long-max": "9223372036854775807",
    "long-overflow": "9223372036854775808",
    "empty": "",
    "only-control": "\t\n",
    "true-mixed-case": " TrUe\t",
    "false-long-s": "falſe",
    "true-fullwidth": "ｔｒｕｅ",
    "yes": "yes",
    "double-exponent": "1e7",
    "double-hex": "0x1p-1",
    "double-suffix": ".5f",
    "double-nan": "-NaN",
    "double-infinity-d": "Infinityd",
    "double-arabic": "٠.٥",
    "double-hex-no-exponent": "0x1.8",
}


def _jvm(tmp_path, source: str, main: str, stdin: str) -> list[str]:
    if not (shutil.which("javac") and shutil.which("java")):
        pytest.skip("needs a JDK (javac, java)")
    (tmp_path / f"{main}.java").write_text(source)
    subprocess.run(["javac", "-d", str(tmp_path), str(tmp_path / f"{main}.java")], check=True, timeout=120)
    out = subprocess.run(
        ["java", "-cp", str(tmp_path), main],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return out.stdout.splitlines()


JAVA = """
import java.io.*;
public class Parse {
    public static void main(String[] a) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        String line;
        while ((line = in.readLine()) != null) {
            StringBuilder sb = new StringBuilder();  // the value as hex UTF-16 code units
            if (!line.isEmpty()) for (String h : line.split(",")) sb.append((char) Integer.parseInt(h, 16));
            String t = sb.toString().trim();  // ConfigDef.parseType
            String i, l, b, d;
            try { i = Integer.toString(Integer.parseInt(t)); } catch (NumberFormatException e) { i = "-"; }
            try { l = Long.toString(Long.parseLong(t)); } catch (NumberFormatException e) { l = "-"; }
            b = t.equalsIgnoreCase("true") ? "true" : t.equalsIgnoreCase("false") ? "false" : "-";
            try { Double.parseDouble(t); d = "ok"; } catch (NumberFormatException e) { d = "-"; }
            System.out.println(i + " " + l + " " + b + " " + d);
        }
        StringBuilder digits = new StringBuilder();  // every char Character.digit reads as a decimal digit
        for (int c = 0; c <= 0xFFFF; c++) if (Character.digit((char) c, 10) >= 0) digits.append(Integer.toHexString(c)).append(",");
        System.out.println(digits);
    }
}
"""


def _utf16_hex(value: str) -> str:
    units = value.encode("utf-16-be")
    return ",".join(f"{int.from_bytes(units[i : i + 2], 'big'):x}" for i in range(0, len(units), 2))


@pytest.fixture(scope="module")
def java_answers(tmp_path_factory):
    lines = _jvm(
        tmp_path_factory.mktemp("java"), JAVA, "Parse", "".join(_utf16_hex(v) + "\n" for v in VALUES.values())
    )
    *answers, digits = lines
    return dict(zip(VALUES, answers, strict=True)), {int(h, 16) for h in digits.split(",") if h}


def test_the_digits_are_the_ones_javas_character_digit_reads(java_answers):
    _, digits = java_answers
    ours = set(range(0x30, 0x3A)) | {zero + i for zero in JAVA_DIGIT_ZEROS for i in range(10)}
    assert ours == digits


def _ours() -> dict[str, str]:
    """try_int, try_long, try_bool and CFG001's double check, on DuckDB."""
    from sqlframe.duckdb import DuckDBSession

    from auditor.frames import F
    from checks.hygiene import _valid
    from checks.transforms import java_integer_sql, java_trim, try_bool, try_int, try_long

    session = DuckDBSession()
    df = session.createDataFrame([(k, v) for k, v in VALUES.items()], ["name", "value"])
    df = df.withColumn("_trimmed", java_trim("value")).withColumn(
        "_digits", F.expr(java_integer_sql("value"))
    )
    rows = df.select(
        "name",
        try_int("value").alias("i"),
        try_long("value").alias("l"),
        try_bool("value").alias("b"),
        _valid(F.lit("double"), F.lit("x")).alias("d"),
        _valid(F.lit("int"), F.lit("x")).alias("int_ok"),
        _valid(F.lit("long"), F.lit("x")).alias("long_ok"),
        _valid(F.lit("boolean"), F.lit("x")).alias("bool_ok"),
    ).collect()

    def show(v):
        return "-" if v is None else str(v).lower() if isinstance(v, bool) else str(v)

    out = {}
    for r in rows:
        out[r["name"]] = f"{show(r['i'])} {show(r['l'])} {show(r['b'])} {'ok' if r['d'] else '-'}"
        # CFG001's int/long/boolean verdicts are the parsers' (a value either reads, or is refused)
        assert r["int_ok"] == (r["i"] is not None) and r["long_ok"] == (r["l"] is not None), r
        assert r["bool_ok"] == (r["b"] is not None), r
    return out


@pytest.fixture(scope="module")
def our_answers():
    return _ours()


@pytest.mark.parametrize("name", list(VALUES))
def test_parsing_matches_the_jvm(java_answers, our_answers, name):
    assert our_answers[name] == java_answers[0][name], (name, VALUES[name])
