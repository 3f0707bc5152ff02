"""Which lint rules read a setting: named in the warning about a value lint could not
evaluate (``FILE:LINE: ... is not evaluated: RULES not applied to it``).

A value lint cannot evaluate is unknown to the rules (a null value in the tables, never Kafka's
default: auditor/lint/change_tables.py), so the rules that read it are not evaluated for it, and
the warning says which. tests/test_lint_platforms.py checks that every rule declaring the
setting it points at (``lint_key``) or the default it inherits (``cause=Inherits(key)``) is
named here for that key.
"""

from __future__ import annotations

BROKER_KEY_RULES: dict[str, str] = {
    "min.insync.replicas": "REP001-REP004 (for the topics inheriting it), CFG004",
    "default.replication.factor": "REP001, REP002 (the defaults new topics get), CFG004",
    "unclean.leader.election.enable": "REP005",
    "offsets.topic.replication.factor": "REP006",
    "transaction.state.log.replication.factor": "REP006",
    "transaction.state.log.min.isr": "REP006",
    "broker.rack": "REP011",
    "replica.lag.time.max.ms": "REP012",
    "num.network.threads": "THR003, THR005",
    "num.io.threads": "THR004, THR005",
    "queued.max.requests": "THR006",
    "log.dirs": "DSK004, DSK005",
    "log.dir": "DSK004, DSK005",
    "controlled.shutdown.enable": "CFG005",
    "auto.leader.rebalance.enable": "CFG006",
    "auto.create.topics.enable": "CFG007",
    "socket.request.max.bytes": "CFG008",
    "process.roles": "CTL006, CTL007, CTL012",
    "controller.quorum.voters": "CTL006, CTL008, CTL012",
    "controller.quorum.bootstrap.servers": "CTL008, CTL012",
    "controller.listener.names": "CTL012",
    "listeners": "CTL012",
    "advertised.listeners": "CTL012",
    "node.id": "CTL012",
}
TOPIC_KEY_RULES: dict[str, str] = {
    "min.insync.replicas": "REP001-REP004",
    "unclean.leader.election.enable": "REP005",
    "retention.ms": "DSK008, DSK009",
    "retention.bytes": "DSK008, DSK009",
    "segment.ms": "DSK008",
    "segment.bytes": "DSK008",
    "max.message.bytes": "CFG008",
    "remote.storage.enable": "DSK007",
}


def rules_reading(key: str, scope: str = "broker") -> str:
    """The rules that read ``key`` (scope ``broker`` or ``topic``), as the warning names them."""
    table = TOPIC_KEY_RULES if scope == "topic" else BROKER_KEY_RULES
    named = table.get(key)
    return f"{named}, CFG001" if named else "CFG001 (its type) and every rule reading it"
