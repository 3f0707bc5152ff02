"""Which __consumer_offsets / __transaction_state partition coordinates a group or transactional id,
and which __share_group_state partition holds a share group's state for one topic partition.

Kafka maps an id to ``Utils.abs(id.hashCode()) % partitionCount``: Java's String.hashCode
over UTF-16 code units with 32-bit overflow, and Kafka's own abs, which maps
Integer.MIN_VALUE to 0 (Math.abs would leave it negative). Share groups (KIP-932, Kafka 4.0+)
hash a share-partition key instead of the group id: "groupId:topicId:partition", the topic id
in Kafka's text form (apache/kafka SharePartitionKey.asCoordinatorKey,
ShareCoordinatorService.partitionFor), so one share group's state spreads over many partitions.
"""

from __future__ import annotations

import re

INT_MIN = -(2**31)
# Kafka's Uuid.toString: the 16 bytes in URL-safe base64 without padding (22 characters).
KAFKA_TOPIC_ID = re.compile(r"[A-Za-z0-9_-]{22}")


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


def share_state_partition(group_id: str, topic_id: str, partition: int, partition_count: int = 50) -> int:
    """The __share_group_state partition (share.coordinator.state.topic.num.partitions, default
    50) holding ``group_id``'s state for partition ``partition`` of the topic ``topic_id``."""
    if not KAFKA_TOPIC_ID.fullmatch(topic_id):
        raise ValueError(f"topic id {topic_id!r} is not in Kafka's form (22 URL-safe base64 characters)")
    return coordinator_partition(f"{group_id}:{topic_id}:{partition}", partition_count)
