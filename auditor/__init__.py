"""kafka-auditor: a Kafka cluster configuration linter and static auditor."""

__version__ = "0.1.0"
