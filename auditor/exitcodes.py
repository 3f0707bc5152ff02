"""Exit codes of every kafka-audit command, defined once (shared/DESIGN.md)."""

OK = 0  # nothing at or above --fail-on
# findings at or above --fail-on; preflight: not safe to roll as is (a broker or controller unsafe, a
# blocker, or a planned metadata outage: a KRaft quorum of one or two controllers; its verdict says which)
FINDINGS = 1
USAGE = 2  # usage or config error, unreadable or corrupt input
INCOMPLETE = 3  # a source failed: the audit is incomplete; wins over 0 and 1
WAIT_TIMEOUT = 4  # kafka-audit wait: the cluster was not healthy again within --max-wait


def for_result(*, failing: bool, incomplete: bool) -> int:
    if incomplete:
        return INCOMPLETE
    return FINDINGS if failing else OK
