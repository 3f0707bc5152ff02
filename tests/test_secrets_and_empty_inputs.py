"""Issue-16 classes 9 and 12: secrets outside any denylist never reach a snapshot (from
server.properties and from a real ZooKeeper's /config/brokers), and inputs that give
nothing are never a silent green audit."""

from __future__ import annotations

import itertools
import subprocess
import sys

import pytest

from auditor.sources import Sources
from tests.conftest import ROOT

# Keys Kafka has no type for (plugins, vendors, login modules): Kafka's DescribeConfigs
# reports them as sensitive; so do we. Values chosen to be findable.
PLUGIN_SECRETS = {
    "ldap.java.naming.security.credentials": "ldap-cred-7f3a",
    "confluent.basic.auth.user.info": "alice:basic-pass-9c1d",
    "rsm.config.storage.aws.secret.access.key": "aws-secret-5e2b",
    "listener.name.internal.ssl.key.passphrase": "passphrase-8d4e",
    "some.vendor.token": "vendor-token-3a9f",
}


def _cli(*args, timeout=120):
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
    )


def _all_text(directory) -> str:
    return "".join(p.read_text(errors="replace") for p in directory.rglob("*") if p.is_file())


def test_plugin_secrets_in_server_properties_are_masked(tmp_path):
    props = tmp_path / "server.properties"
    props.write_text(
        "broker.id=1\nlog.dirs=/data/k1\nnum.io.threads=8\n"
        + "".join(f"{k}={v}\n" for k, v in PLUGIN_SECRETS.items())
    )
    snap = tmp_path / "snap"
    done = _cli("collect", "--broker-config", str(props), "-o", str(snap), "--format", "jsonl")
    assert done.returncode == 0, done.stderr
    written = _all_text(snap) + done.stdout + done.stderr
    linted = _cli("lint", str(props), "--format", "json")
    for secret in PLUGIN_SECRETS.values():
        assert secret not in written and secret not in linted.stdout + linted.stderr
    assert '"num.io.threads"' in (snap / "configs.jsonl").read_text()  # known, non-secret keys are kept
    assert '"8"' in (snap / "configs.jsonl").read_text()


_chroots = itertools.count()


@pytest.mark.slow
def test_plugin_secrets_in_zookeeper_dynamic_configs_are_masked(zk, writer, tmp_path):
    """/config/brokers/N and /config/brokers/<default> of a real ZooKeeper."""
    from auditor.collectors.collect import collect
    from auditor.snapshot.io import write_snapshot
    from tests.zk_server import kafka_layout, write_layout

    nodes = kafka_layout(topics={"orders": (1, 3)})
    nodes["/config/brokers/1"] = {"version": 1, "config": {**PLUGIN_SECRETS, "num.io.threads": "16"}}
    nodes["/config/brokers/<default>"] = {
        "version": 1,
        "config": {"confluent.basic.auth.user.info": "bob:default-pass-1b"},
    }
    chroot = f"/secrets-{next(_chroots)}"
    writer.create(chroot)
    write_layout(writer, {chroot + path: value for path, value in nodes.items()})
    manifest, tables = collect(Sources(zookeeper=zk.hosts + chroot, cluster_name="secrets", timeout=5))
    write_snapshot(tmp_path / "snap", manifest, tables, fmt="jsonl")
    written = _all_text(tmp_path / "snap")
    for secret in [*PLUGIN_SECRETS.values(), "bob:default-pass-1b"]:
        assert secret not in written
    by_key = {(r["entity_name"], r["key"]): r for r in tables["configs"]}
    assert by_key[("1", "num.io.threads")]["value"] == "16"
    assert all(by_key[("1", k)]["is_sensitive"] and by_key[("1", k)]["value"] is None for k in PLUGIN_SECRETS)


def test_an_empty_metrics_file_is_a_failed_source_not_silence(tmp_path):
    """(A warning and exit 0 until issue 37: a green audit of the rules that needed it.)"""
    empty = tmp_path / "metrics.prom"
    empty.write_text("")
    done = _cli("collect", "--metrics", f"broker_id=1:{empty}", "-o", str(tmp_path / "snap"))
    assert done.returncode == 3
    assert f"kafka-audit: collect incomplete: metrics: {empty}: no samples: nothing read" in done.stderr


def test_a_misspelled_top_level_key_is_not_a_green_lint(tmp_path):
    """`topic:` instead of `topics:` holding an RF 1 topic: before, '0 topics', exit 0, no word."""
    bad = tmp_path / "topics.yaml"
    bad.write_text("topic:\n  - name: payments\n    partitions: 3\n    replication_factor: 1\n")
    done = _cli("lint", str(bad))
    assert (
        done.returncode == 3  # and, nothing linted, not green either (issue 33)
        and f"{bad}: no topic or broker definition recognised" in done.stdout + done.stderr
    )
    strict = _cli("lint", str(bad), "--strict")
    assert strict.returncode == 2 and f"{bad}: no topic or broker definition recognised" in strict.stderr


def test_a_fifo_as_a_metrics_file_is_refused_not_waited_on(tmp_path):
    import os

    fifo = tmp_path / "metrics.prom"
    os.mkfifo(fifo)
    done = _cli("collect", "--metrics", f"broker_id=1:{fifo}", "-o", str(tmp_path / "snap"), timeout=60)
    assert done.returncode == 3 and "not a regular file (a FIFO)" in done.stderr


def test_stderr_lines_show_control_characters_escaped(tmp_path):
    """A snapshot path holding ESC reaches stderr in an error line: made visible, never raw."""
    evil = tmp_path / "snap\x1b]52;c;ZXZpbA==\x07"
    evil.mkdir()
    done = _cli("check", str(evil))
    assert done.returncode == 2 and "\x1b" not in done.stderr and "\x07" not in done.stderr
    assert "\\x1b]52;c;ZXZpbA==\\x07" in done.stderr
