"""The shape of every manifest.json field the tool reads, checked where the manifest is read.

A manifest is outside input (a snapshot from another machine, another version, an edit): a
field of another type (MSK's ``operations_in_progress`` an integer, a source entry's
``message`` a list) broke `check`, `preflight` and `fleet` with "internal error: TypeError".
:func:`check` names the file and the field in one line (auditor/snapshot/io.py raises it as a
SnapshotError: exit 2 for check and preflight, the snapshot incomplete (AUD001) in a fleet).

A shape is a type name (:data:`STR` ...), a list of one shape (every item has it), or a dict of
field -> shape (an object; fields not named are not read by anything, so they are kept as
they are). ``None`` is always allowed: every field is optional. :data:`ANY_KEY` in a dict
gives the shape of every value of a map whose keys are data (broker ids, config keys).
"""

from __future__ import annotations

STR, INT, BOOL, NUMBER, OBJECT = "a string", "an integer", "true or false", "a number", "an object"
ANY_KEY = "*"

# What the AWS MSK source writes in ``cluster.msk`` (auditor/collectors/msk.py, msk_cloudwatch.py).
MSK = {
    "cluster_arn": STR,
    "region": STR,
    "cluster_name": STR,
    "cluster_type": STR,
    "state": STR,
    "state_code": STR,
    "active_operation_arn": STR,
    "kafka_version": STR,
    "instance_type": STR,
    "broker_count": INT,
    "client_subnets": [STR],
    "storage_mode": STR,
    "configuration": {"arn": STR, "revision": INT, "default": BOOL, "source": STR},
    "open_monitoring": {"jmx_exporter": BOOL, "node_exporter": BOOL},
    "client_authentication": {"iam": BOOL, "scram": BOOL, "tls": BOOL, "unauthenticated": BOOL},
    "zookeeper_connect": STR,
    "enhanced_monitoring": STR,
    "customer_action_status": STR,
    "operations_in_progress": [{"arn": STR, "type": STR, "state": STR, "start_time": STR}],
    "broker_subnets": {ANY_KEY: STR},
    "controller_endpoints": [STR],
    "racks": STR,
    "bootstrap": {"listeners": [STR], "chosen": STR, "servers": STR},
    "express_read_only": {"values": {ANY_KEY: STR}, "source": STR},
    "topics_source": STR,
    "topics_api": {"calls": INT, "topics": INT, "out_of_sync_replicas": INT, "vanished": INT},
    "cloudwatch": {
        "enhanced_monitoring": STR,
        "levels_source": STR,
        "calls": INT,
        "not_collected": [{"metric": STR, "cloudwatch": STR, "needs": STR}],
        "no_data": [{"metric": STR, "cloudwatch": STR, "brokers": [INT]}],
    },
}

# A source entry (what each collector read, auditor/collectors/*.py) and a source error.
SOURCE = {
    "source": STR,
    "target": STR,
    "status": STR,
    "reason": STR,
    "kind": STR,
    "metrics": [STR],  # the canonical metric names the source collected (auditor/coverage.py)
}
ERROR = {"source": STR, "target": STR, "message": STR, "aws": {"action": STR, "resource": STR, "kind": STR}}

MANIFEST = {
    "tool": {"name": STR, "version": STR},
    "collected_at": STR,
    "cluster": {"msk": MSK},  # the scalar cluster fields are checked by io.parse_manifest
    "sources": [SOURCE],
    "errors": [ERROR],
}


def check(value, shape, where: str = "") -> str | None:
    """The first place ``value`` differs from ``shape`` ('cluster.msk.cloudwatch.calls must be
    an integer, not str'), or None. Iterative: a manifest nested 10,000 deep costs no stack."""
    stack = [(value, shape, where)]
    while stack:
        v, s, at = stack.pop()
        if v is None:
            continue
        if isinstance(s, list):
            if not isinstance(v, list):
                return f"{at} must be a list, not {_kind(v)}"
            stack.extend((item, s[0], f"{at}[{i}]") for i, item in reversed(list(enumerate(v))))
        elif isinstance(s, dict):
            if not isinstance(v, dict):
                return f"{at} must be an object, not {_kind(v)}"
            for key in reversed(list(v)):
                inner = s.get(key, s.get(ANY_KEY))
                if inner is not None:
                    stack.append((v[key], inner, f"{at}.{key}" if at else str(key)))
        elif not _fits(v, s):
            return f"{at} must be {s}, not {_kind(v)}"
    return None


def _fits(value, kind: str) -> bool:
    if kind == STR:
        return isinstance(value, str)
    if kind == INT:
        return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63
    if kind == BOOL:
        return isinstance(value, bool)
    if kind == NUMBER:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, dict)


def _kind(value) -> str:
    names = {str: "a string", bool: "true/false", int: "an integer", float: "a number"}
    names |= {list: "a list", dict: "an object"}
    return names.get(type(value), type(value).__name__)
