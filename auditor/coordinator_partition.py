"""Which __consumer_offsets / __transaction_state partition coordinates a group or transactional id.

Kafka maps an id to ``Utils.abs(id.hashCode()) % partitionCount``: Java's String.hashCode
over UTF-16 code units with 32-bit overflow, and Kafka's own abs, which maps
Integer.MIN_VALUE to 0 (Math.abs would leave it negative).
"""

from __future__ import annotations

INT_MIN = -(2**31)


def java_string_hashcode(s: str) -> int:
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - 2**32 if h >= 2**31 else h


def kafka_abs(n: int) -> int:
    return 0 if n == INT_MIN else abs(n)


def coordinator_partition(group_id: str, partition_count: int = 50) -> int:
    if partition_count <= 0:
        raise ValueError("partition_count must be positive")
    return kafka_abs(java_string_hashcode(group_id)) % partition_count
