"""Fuzzing (hypothesis) of the parsers not covered elsewhere: znode JSON as the ZooKeeper
collector reads it, and snapshot files. No input may crash or hang them: bad input is a
source error (collector) or a one-line SnapshotError (snapshot), never another exception.
(The properties and Prometheus parsers are fuzzed in test_collect_files / test_collect_metrics.)"""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from auditor.collectors._common import CollectResult
from auditor.collectors.zookeeper import ZkAbort, _collect
from auditor.errors import SnapshotError
from auditor.snapshot.io import open_snapshot
from auditor.snapshot.schema import TABLES, python_check

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=5)
    ),
    max_leaves=12,
)
# What a znode may hold: valid Kafka-shaped JSON with wrong types, any JSON, or raw bytes.
znode_data = st.one_of(
    st.binary(max_size=80),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries(
        {},
        optional={
            "version": json_values,
            "brokerid": json_values,
            "leader": json_values,
            "isr": json_values,
            "leader_epoch": json_values,
            "controller_epoch": json_values,
            "partitions": json_values,
            "config": json_values,
            "host": json_values,
            "port": json_values,
            "rack": json_values,
            "endpoints": json_values,
            "id": json_values,
        },
    ).map(lambda d: json.dumps(d).encode()),
)


class FakeReader:
    """Answers the collector's pipelined reads from a dict: path -> bytes (get), or lists of
    children for the directory znodes. Every get returns (data, stat)."""

    def __init__(self, data: dict[str, bytes], children: dict[str, list[str]]):
        self.data, self.children = data, children
        self.denied: list[str] = []

    def run(self, ops, what: str = "znodes"):
        out = []
        for op in ops:
            if op.kind == "children":
                out.append(self.children.get(op.path))
            elif op.kind == "exists":
                out.append(object() if op.path in self.data or op.path in self.children else None)
            else:
                out.append((self.data[op.path], None) if op.path in self.data else None)
        return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "/controller",
                "/controller_epoch",
                "/cluster/id",
                "/brokers/ids/1",
                "/brokers/ids/2",
                "/brokers/topics/orders",
                "/brokers/topics/orders/partitions/0/state",
                "/brokers/topics/orders/partitions/1/state",
                "/config/topics/orders",
                "/config/brokers/1",
                "/config/brokers/<default>",
                "/log_dir_event_notification/n1",
            ]
        ),
        znode_data,
        max_size=12,
    ),
    st.sampled_from([["0", "1"], ["x"], []]),
)
def test_zookeeper_collector_survives_any_znode_content(data, partitions):
    children = {
        "/brokers/ids": ["1", "2"],
        "/brokers/topics": ["orders"],
        "/config/topics": ["orders"],
        "/config/brokers": ["1", "<default>"],
        "/log_dir_event_notification": ["n1"],
        "/brokers/topics/orders/partitions": partitions,
    }
    data = {"/brokers": b"", **data}
    result = CollectResult()
    try:
        _collect(FakeReader(data, children), result, "zk:2181", {})
    except ZkAbort:
        pass  # a whole-source failure the caller turns into one source error
    for table, rows in result.tables.items():
        declared = {c.name: c.type for c in TABLES[table].columns}
        for row in rows:
            for key, value in row.items():
                assert key in declared and python_check(declared[key], value), (table, key, value)
    for err in result.errors:
        assert "\n" not in err["message"]


manifest_text = st.one_of(
    st.text(max_size=200),
    json_values.map(json.dumps),
    st.fixed_dictionaries(
        {
            "schema_version": st.sampled_from([1, 1, "1", None, 2]),
            "cluster": st.one_of(json_values, st.fixed_dictionaries({"id": json_values})),
            "tables": st.one_of(json_values, st.just({"topics": "topics.jsonl"})),
        },
        optional={"errors": json_values, "sources": json_values},
    ).map(json.dumps),
)
jsonl_text = st.lists(
    st.one_of(
        st.text(max_size=60),
        json_values.map(json.dumps),
        st.dictionaries(
            st.sampled_from(["cluster_id", "topic", "partitions", "x"]), json_values, max_size=4
        ).map(json.dumps),
    ),
    max_size=6,
).map("\n".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(manifest_text, jsonl_text)
def test_snapshot_reader_gives_a_snapshot_or_one_line_error(tmp_path: Path, manifest, topics):
    (tmp_path / "manifest.json").write_text(manifest)
    (tmp_path / "topics.jsonl").write_text(topics)
    try:
        ref = open_snapshot(tmp_path)
    except SnapshotError as e:
        assert "\n" not in str(e) and str(tmp_path) in str(e)
        return
    assert ref.manifest.cluster_id
