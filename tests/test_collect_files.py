"""server.properties collector: Java properties syntax, broker ids, secrets, malformed files."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.collectors.files import collect_broker_configs, parse_properties


def _kv(text):
    entries, problems = parse_properties(text)
    assert not problems
    return {e.key: (e.value, e.line) for e in entries}


def test_separators_comments_and_lines():
    text = (
        "# a comment\n"
        "! another comment\n"
        "\n"
        "broker.id=1\n"
        "num.network.threads : 8\n"
        "num.io.threads 16\n"
        "   log.dirs = /data/a,/data/b   \n"
        "empty.value=\n"
        "bare.key\n"
    )
    kv = _kv(text)
    assert kv["broker.id"] == ("1", 4)
    assert kv["num.network.threads"] == ("8", 5)
    assert kv["num.io.threads"] == ("16", 6)
    assert kv["log.dirs"] == ("/data/a,/data/b", 7)
    assert kv["empty.value"] == ("", 8)
    assert kv["bare.key"] == ("", 9)


def test_continuations_and_escapes():
    text = (
        "listeners=PLAINTEXT://a:9092,\\\n"
        "          SSL://a:9093\n"
        "key\\:with\\=seps\\ and\\ space=v\n"
        "unicode=caf\\u00e9\\tx\n"
        "two.backslashes=a\\\\\n"
        "next=1\n"
        "# comment with trailing backslash \\\n"
        "after.comment=2\r\n"
        "cr.only=3\rlast=4"
    )
    kv = _kv(text)
    assert kv["listeners"] == ("PLAINTEXT://a:9092,SSL://a:9093", 1)
    assert kv["key:with=seps and space"] == ("v", 3)
    assert kv["unicode"] == ("café\tx", 4)
    assert kv["two.backslashes"] == ("a\\", 5)
    assert kv["next"] == ("1", 6)
    assert kv["after.comment"] == ("2", 8)
    assert kv["cr.only"] == ("3", 9)
    assert kv["last"] == ("4", 10)


def test_duplicate_key_last_wins_and_continuation_at_eof():
    kv = _kv("a=1\na=2\nb=x\\")
    assert kv["a"] == ("2", 2)
    assert kv["b"] == ("x", 3)


def test_malformed_unicode_escape_is_a_problem():
    entries, problems = parse_properties("ok=1\nbad=\\u12\n")
    assert [e.key for e in entries] == ["ok"]
    assert problems[0].line == 2


def test_collect_rows_and_secrets(tmp_path):
    f = tmp_path / "server.properties"
    f.write_text(
        "broker.id=3\nlog.dirs=/d1, /d2\nbroker.rack=az-1\n"
        "ssl.keystore.password=hunter2\nssl.key.password=x\n"
        'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache...ScramLoginModule required password="p";\n'
        "zookeeper.ssl.truststore.password=y\nnum.io.threads=8\n"
    )
    r = collect_broker_configs([str(f)])
    assert r.errors == []
    rows = {c["key"]: c for c in r.tables["configs"]}
    assert rows["num.io.threads"] == {
        "entity_type": "broker",
        "entity_name": "3",
        "key": "num.io.threads",
        "value": "8",
        "source": "STATIC_BROKER_CONFIG",
        "is_sensitive": False,
        "file": str(f),
        "line": 8,
    }
    for key in (
        "ssl.keystore.password",
        "ssl.key.password",
        "zookeeper.ssl.truststore.password",
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config",
    ):
        assert rows[key]["value"] is None and rows[key]["is_sensitive"] is True
    assert "hunter2" not in repr(r.tables)
    (b,) = r.tables["brokers"]
    assert b["broker_id"] == 3 and b["log_dirs"] == ["/d1", "/d2"] and b["rack"] == "az-1"


def test_directory_and_kraft_node_id(tmp_path):
    (tmp_path / "b1.properties").write_text("broker.id=1\n")
    (tmp_path / "b2.properties").write_text("process.roles=broker\nnode.id=2\n")
    (tmp_path / "b3.properties").write_text("process.roles=broker,controller\nnode.id=3\n")
    (tmp_path / "c1.properties").write_text("process.roles=controller\nnode.id=3001\n")
    (tmp_path / "notes.txt").write_text("ignored")
    r = collect_broker_configs([str(tmp_path)])
    assert r.errors == []
    assert sorted(b["broker_id"] for b in r.tables["brokers"]) == [1, 2, 3]
    assert {c["entity_name"] for c in r.tables["configs"] if c["entity_type"] == "broker"} == {"1", "2", "3"}
    # the controller's settings are its own (CFG006 reads auto.leader.rebalance.enable there), never a broker's
    assert {
        (c["entity_type"], c["entity_name"], c["key"])
        for c in r.tables["configs"]
        if c["entity_name"] == "3001"
    } == {
        ("controller", "3001", "process.roles"),
        ("controller", "3001", "node.id"),
    }
    assert [(s["status"], s["kind"]) for s in r.sources] == [
        ("ok", "broker"),
        ("ok", "broker"),
        ("ok", "combined"),
        ("ok", "controller"),
    ]
    # The controller's quorum settings (tests/test_collect_kraft.py).
    assert sorted((n["node_id"], n["process_roles"]) for n in r.tables["kraft_nodes"]) == [
        (2, ["broker"]),
        (3, ["broker", "controller"]),
        (3001, ["controller"]),
    ]


def test_malformed_files_give_one_line_errors(tmp_path):
    missing = tmp_path / "none.properties"
    noid = tmp_path / "noid.properties"
    noid.write_text("num.io.threads=8\n")
    badid = tmp_path / "badid.properties"
    badid.write_text("# x\n\nbroker.id=one\n")
    binary = tmp_path / "bin.properties"
    binary.write_bytes(b"broker.id=1\nx=\x00\x01\x02\n")
    badesc = tmp_path / "esc.properties"
    badesc.write_text("broker.id=1\nk=\\uZZZZ\n")
    dup = tmp_path / "dup.properties"
    dup.write_text("broker.id=1\n")
    good = tmp_path / "good.properties"
    good.write_text("broker.id=1\n")
    r = collect_broker_configs([str(p) for p in (missing, noid, badid, binary, badesc, good, dup)])
    msgs = {e["target"]: e["message"] for e in r.errors}
    assert "unreadable" in msgs[str(missing)]
    assert msgs[str(noid)] == f"{noid}: no broker.id (or node.id for KRaft) set"
    assert msgs[str(badid)].startswith(f"{badid}:3: broker.id 'one'")
    assert msgs[str(binary)].startswith(f"{binary}:2: binary file")
    assert msgs[str(badesc)].startswith(f"{badesc}:2: malformed")
    assert "also declared by" in msgs[str(dup)]
    assert all("\n" not in m for m in msgs.values())
    assert [b["broker_id"] for b in r.tables["brokers"]] == [1]


def test_empty_directory_is_an_error(tmp_path):
    r = collect_broker_configs([str(tmp_path)])
    assert len(r.errors) == 1 and "no *.properties" in r.errors[0]["message"]


_chars = st.sampled_from(list("ab=:# !\\\t\f\r\nu0fé") + ["\\u", "\\\n", "\r\n", "\x00", "z"])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=200), st.lists(_chars, max_size=120).map("".join)))
def test_fuzz_parser_never_crashes(text):
    entries, problems = parse_properties(text)
    assert len({e.key for e in entries}) == len(entries)
    for e in entries:
        assert isinstance(e.key, str) and isinstance(e.value, str) and e.line >= 1


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_fuzz_collector_on_bytes(tmp_path_factory, data):
    f = tmp_path_factory.mktemp("fz") / "x.properties"
    f.write_bytes(data)
    r = collect_broker_configs([str(f)])
    assert len(r.errors) + len(r.tables.get("brokers", [])) == 1
    for e in r.errors:
        assert "\n" not in e["message"] and e["message"].startswith(str(f))


def test_parser_is_linear_on_long_continuations():
    import time

    text = "k=" + "x\\\n" * 200_000 + "end\n" + "a" * 1_000_000
    t0 = time.perf_counter()
    kv = _kv(text)
    assert time.perf_counter() - t0 < 5
    assert kv["k"][0].endswith("end")


_JAVA = r"""
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

public class PropDump {
    static String esc(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c < 0x20 || c > 0x7e || c == '\\') b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.toString();
    }
    public static void main(String[] args) throws Exception {
        for (String f : args) {
            Properties p = new Properties();
            try (Reader r = Files.newBufferedReader(Paths.get(f), StandardCharsets.UTF_8)) {
                p.load(r);
                System.out.println("FILE\t" + f);
                for (String k : p.stringPropertyNames()) System.out.println(esc(k) + "\t" + esc(p.getProperty(k).trim()));
            } catch (IllegalArgumentException e) {
                System.out.println("ERROR\t" + f);
            }
        }
    }
}
"""


@pytest.mark.slow
def test_parser_agrees_with_java_util_properties(tmp_path):
    """Differential test: the same random inputs through java.util.Properties.load."""
    import random
    import shutil
    import subprocess

    if shutil.which("java") is None:
        pytest.skip("needs java")
    rng = random.Random(511)
    alphabet = list("ab=:#! \t\f\\\n\rué0") + ["\\u0041", "\\u00", "\r\n", "\\\n", "\\\r\n", "key", "=v"]
    inputs = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 60))) for _ in range(1500)]
    files = []
    for i, text in enumerate(inputs):
        f = tmp_path / f"p{i}"
        f.write_bytes(text.encode("utf-8"))
        files.append(f)
    (tmp_path / "PropDump.java").write_text(_JAVA)
    out = subprocess.run(
        ["java", "-Xshare:auto", str(tmp_path / "PropDump.java"), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    java: dict[str, dict | None] = {}
    current = None
    for line in out.split("\n"):
        if line.startswith("FILE\t"):
            current = java[line[5:]] = {}
        elif line.startswith("ERROR\t"):
            java[line[6:]] = None
            current = None
        elif line:
            k, v = line.split("\t")
            current[k.encode().decode("unicode_escape")] = v.encode().decode("unicode_escape")
    assert len(java) == len(files)
    for f, text in zip(files, inputs, strict=True):
        entries, problems = parse_properties(text)
        if java[str(f)] is None:
            assert problems, repr(text)
        else:
            assert not problems, repr(text)
            assert {e.key: e.value for e in entries} == java[str(f)], repr(text)


def test_sensitive_keys():
    """Kafka's rule (KafkaConfig.maybeSensitive): PASSWORD-typed keys and keys Kafka has no
    type for are masked; keys of a known non-secret type are kept."""
    from auditor.collectors._common import config_row, is_sensitive_key

    for key in (
        "sasl.jaas.config",
        "listener.name.sasl_ssl.plain.sasl.jaas.config",
        "ssl.key.password",
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config",
        "ssl.keystore.password",
        "ssl.keystore.key",
        "ssl.keystore.certificate.chain",
        "zookeeper.ssl.truststore.password",
        "listener.name.internal.ssl.keystore.password",
        "ssl.truststore.certificates",
        "password.encoder.secret",
        "delegation.token.secret.key",
        "sasl.oauthbearer.client.credentials.client.secret",
        "SSL.TRUSTSTORE.PASSWORD",
        # no type in Kafka: a plugin's keys, a vendor's, a typo
        "rsm.config.storage.aws.secret.access.key",
        "rsm.config.storage.s3.bucket.name",
        "ldap.java.naming.security.credentials",
        "confluent.basic.auth.user.info",
        "num.io.thread",
    ):
        assert is_sensitive_key(key), key
    for key in (
        "num.io.threads",
        "ssl.truststore.location",
        "sasl.enabled.mechanisms",
        "log.dirs",
        "ssl.keystore.location",
        "listener.name.internal.ssl.keystore.location",
        "ssl.enabled.protocols",
        "authorizer.class.name",
        "password.encoder.keyfactory.algorithm",
        "leader.replication.throttled.rate",
        "advertised.listeners",
        "remote.log.storage.manager.impl.prefix",
    ):
        assert not is_sensitive_key(key), key
    assert is_sensitive_key("retension.ms", "topic") and not is_sensitive_key("retention.ms", "topic")
    row = config_row("broker", "1", "num.io.threads", "8", "DYNAMIC_BROKER_CONFIG", sensitive=True)
    assert row["value"] is None and row["is_sensitive"] is True  # Kafka said so (DescribeConfigs isSensitive)
