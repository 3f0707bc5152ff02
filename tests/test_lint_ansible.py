"""kafka-audit lint on cp-ansible inventories (issue 49 item 4): kafka_broker_custom_properties at
all, group and host level with Ansible's precedence, cp-ansible's own defaults for the keys left
unset, Jinja reported as not evaluated.

The three real inventories of ../shared/real-inputs/ansible/ are read in place; precedence across
group_vars/ and host_vars/ and Jinja values are own inputs in tmp_path (no real repository of
the corpus has those files beside its inventory)."""

from __future__ import annotations

from pathlib import Path

from auditor.lint import run_lint
from auditor.lint.inputs import read_inputs
from tests.conftest import real_input
from tests.test_lint import cli


def line_of(path, number: int) -> str:
    return Path(path).read_text(encoding="utf-8").splitlines()[number - 1].strip()


def test_group_level_custom_properties_three_brokers_clean():
    """lucia-son: RF 3 / min ISR 2 and transaction RF 3 / min ISR 2 at group level, CP 7.4.0."""
    f = real_input("ansible/lucia-son-confluent-ansible-files-hosts.yml")
    inputs = read_inputs([f])
    assert [b.broker_id for b in inputs.brokers] == [1, 2, 3]  # broker_id per host
    entries = inputs.brokers[0].entries
    assert entries["min.insync.replicas"] == ("2", 172)
    assert line_of(f, 172) == "min.insync.replicas: 2"
    assert entries["unclean.leader.election.enable"] == ("false", 174)
    assert entries["log.dirs"] == ("/data/kafka", 164)
    assert entries["num.io.threads"] == ("16", 163)  # cp-ansible's default, at the dictionary's line
    (facts,) = inputs.clusters
    assert (facts.platform, facts.kafka_version, facts.metadata_mode) == ("cp-ansible", "3.4", "zookeeper")
    result = run_lint([f])
    assert {x.severity for x in result.findings} == {"info"}  # DSK005: one log dir
    assert [n for n in result.notes if n.startswith("warning: ")] == []


def test_host_level_dicts_replace_the_group_level_one():
    """albefaedda: each host sets kafka_broker_custom_properties: {broker.rack: ...}; Ansible
    replaces the group's dictionary whole, so its default.replication.factor: 3 (and the misspelt
    min.insync.replica) never reach a broker: Kafka's defaults apply, said where they show."""
    f = real_input("ansible/albefaedda-cp-ansible-installations-gssapi-rbac-kraft-hosts.yaml")
    inputs = read_inputs([f])
    assert [b.entries["broker.rack"] for b in inputs.brokers] == [
        ("<az-1>", 160),
        ("<az-2>", 164),
        ("<az-3>", 168),
    ]
    assert all("default.replication.factor" not in b.entries for b in inputs.brokers)
    (replaced,) = [w for w in inputs.unevaluated if "is replaced" in w]
    assert replaced.startswith(
        f"{f}:116: kafka_broker_custom_properties of group kafka_broker is replaced on host"
    )
    assert "hash_behaviour=replace" in replaced
    # the group's Jinja values are not reported: they do not apply
    assert not any("{{" in w for w in inputs.unevaluated)
    assert inputs.clusters[0].metadata_mode == "kraft"  # a kafka_controller group
    result = run_lint([f])
    cfg004 = {x.resource_name: x.location["line"] for x in result.findings if x.rule == "CFG004"}
    assert cfg004 == {"default.replication.factor": 159, "min.insync.replicas": 159}


def test_official_single_node_sample():
    """cp-ansible's own single_dev_node.yml: kafka_broker_custom_properties under all.vars and
    kafka_broker.vars (the group's wins, the other is said), the deprecated kafka_broker.properties
    host variable is said to be ignored; one broker: RF 1 internals are what cp-ansible computes."""
    f = real_input("ansible/confluentinc-cp-ansible-single_dev_node.yml")
    inputs = read_inputs([f])
    (broker,) = inputs.brokers
    assert broker.entries["offsets.topic.replication.factor"][0] == "1"  # min(1 broker, 3)
    assert broker.entries["confluent.support.metrics.enable"] == ("false", 298)
    assert "enable.fips" not in broker.entries
    assert any(
        w.startswith(f"{f}:206: kafka_broker_custom_properties of all vars is replaced")
        for w in inputs.unevaluated
    )
    assert any(
        w.startswith(
            f"{f}:378: host big-host-1.datadisorder.dev kafka_broker.properties is not read by cp-ansible"
        )
        for w in inputs.unevaluated
    )
    result = run_lint([f])
    assert {x.severity for x in result.findings} == {"info"}


INVENTORY = """\
all:
  vars:
    kafka_broker_custom_properties:
      min.insync.replicas: 1
kafka_broker:
  vars:
    kafka_broker_custom_properties:
      default.replication.factor: 3
      min.insync.replicas: 3
      num.io.threads: "{{ io_threads }}"
  hosts:
    b1:
      broker_id: 11
    b2:
      broker_id: 12
    b3:
      broker_id: 13
      kafka_broker_custom_properties:
        default.replication.factor: 3
        min.insync.replicas: 2
"""


def test_precedence_jinja_and_rep002_at_the_group_line(tmp_path):
    """Own input: all < group < host; a Jinja value is not evaluated; min ISR = RF = 3 on the
    group's hosts is REP002 at its line."""
    f = tmp_path / "hosts.yml"
    f.write_text(INVENTORY)
    inputs = read_inputs([f])
    by_id = {b.broker_id: b for b in inputs.brokers}
    assert by_id[11].entries["min.insync.replicas"] == ("3", 9)
    assert by_id[13].entries["min.insync.replicas"] == ("2", 20)
    assert "num.io.threads" in by_id[13].entries  # cp-ansible's 16: b3's own dictionary has none
    assert by_id[11].entries["num.io.threads"][0] == "16"  # the Jinja value is left out, the default stays
    assert any(
        w.startswith(f"{f}:10: kafka_broker_custom_properties num.io.threads = {{{{ io_threads }}}}")
        and "Jinja" in w
        for w in inputs.unevaluated
    )
    result = run_lint([f])
    rep002 = [(x.location["file"], x.location["line"]) for x in result.findings if x.rule == "REP002"]
    assert rep002 == [(str(f), 9)]


def test_group_vars_and_host_vars_beside_the_inventory(tmp_path):
    """Own input: group_vars/kafka_broker.yml over the inventory's group vars, host_vars/b3.yml
    over everything for b3; a group_vars file met alone names its inventory. Two of three brokers
    take min ISR = RF = 3 from group_vars: REP002 at that file's line."""
    f = tmp_path / "hosts.yml"
    f.write_text(INVENTORY)
    (tmp_path / "group_vars").mkdir()
    gv = tmp_path / "group_vars" / "kafka_broker.yml"
    gv.write_text(
        "kafka_broker_custom_properties:\n  default.replication.factor: 3\n  min.insync.replicas: 3\n"
    )
    (tmp_path / "host_vars").mkdir()
    (tmp_path / "host_vars" / "b3.yml").write_text(
        "kafka_broker_custom_properties:\n  unclean.leader.election.enable: true\n"
    )
    inputs = read_inputs([tmp_path])
    by_id = {b.broker_id: b for b in inputs.brokers}
    assert by_id[11].file == str(gv) and by_id[11].entries["min.insync.replicas"] == ("3", 3)
    assert by_id[13].entries["unclean.leader.election.enable"] == ("true", 2)
    assert "min.insync.replicas" not in by_id[13].entries
    assert any(
        n.startswith(f"{gv}: skipped: cp-ansible group_vars (read with the inventory") for n in inputs.notes
    )
    assert any(
        w.startswith(f"{f}:18: kafka_broker_custom_properties of host b3 is replaced")
        for w in inputs.unevaluated
    )
    result = run_lint([tmp_path])
    rep002 = {
        (Path(x.location["file"]).name, x.location["line"]) for x in result.findings if x.rule == "REP002"
    }
    assert rep002 == {("kafka_broker.yml", 3)}


def test_an_inventory_without_brokers_and_a_malformed_one(tmp_path, capsys):
    zk = tmp_path / "zk.yml"
    zk.write_text("zookeeper:\n  hosts:\n    z1:\nkafka_broker:\n  hosts: {}\n")
    code, out, _err = cli(capsys, "lint", zk)
    assert code == 3 and "skipped: an Ansible inventory without kafka_broker hosts" in out
    bad = tmp_path / "bad.yml"
    bad.write_text("kafka_broker:\n  hosts:\n    b1: [unclosed\n")
    code, _out, err = cli(capsys, "lint", bad)
    assert code == 2 and err.count("\n") == 1 and str(bad) in err
