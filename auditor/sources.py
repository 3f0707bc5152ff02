"""What to collect a cluster's snapshot from: one ``Sources`` value.

Every command that reads a live cluster takes one (``collect``, ``check``, ``preflight``,
``wait``), built from the command line (auditor/cli/options.py ``with_sources``) or from an
inventory entry (auditor/collectors/inventory.py ``ClusterEntry.sources``); the collectors
read it (auditor/collectors/collect.py). So a source added here is offered by every command
and every inventory at once, and the commands cannot drift apart on which sources they take.
"""

from __future__ import annotations

from dataclasses import dataclass

from auditor.errors import UsageError

DEFAULT_TIMEOUT = 10.0  # seconds, every network call
MAX_TIMEOUT = 3600.0  # an hour per call at most (inf would overflow socket and thread timeouts)
MSK_TOPICS = ("auto", "api", "admin")


@dataclass(frozen=True)
class Sources:
    """The sources of one cluster. Paths are as given (the CLI) or resolved (an inventory)."""

    bootstrap_servers: str | None = None  # the Kafka Admin API (and the KRaft source on it)
    command_config: str | None = None  # client.properties: security settings of the Admin API
    zookeeper: str | None = None  # HOST:PORT[,HOST:PORT][/chroot]
    broker_configs: tuple[str, ...] = ()  # server.properties files or directories
    metrics: tuple[str, ...] = ()  # Prometheus text, each optionally 'broker_id=N:'-prefixed
    msk_cluster_arn: str | None = None  # the AWS MSK API
    msk_region: str | None = None  # None: the ARN's region
    # Where an MSK cluster's topics come from: the Kafka Admin API (admin), the MSK topic APIs with
    # CloudWatch metrics, the brokers not contacted (api), or auto (admin when bootstrap servers are
    # given or MSK's listener is reachable, else api): auditor/collectors/msk.py.
    msk_topics: str = "auto"
    cluster_name: str | None = None
    timeout: float = DEFAULT_TIMEOUT

    # The command-line spelling of each source, for messages (and the order they are listed in).
    OPTIONS = {
        "bootstrap_servers": "--bootstrap-servers",
        "command_config": "--command-config",
        "zookeeper": "--zookeeper",
        "broker_configs": "--broker-config",
        "metrics": "--metrics",
        "msk_cluster_arn": "--msk-cluster-arn",
        "msk_region": "--msk-region",
    }

    # What a message lists as the sources to give (a client config and a region only qualify one).
    LISTED = ("--bootstrap-servers", "--zookeeper", "--broker-config", "--metrics", "--msk-cluster-arn")

    def given(self) -> list[str]:
        """The options of the sources that are set (cluster name and timeout are not sources)."""
        return [option for name, option in self.OPTIONS.items() if getattr(self, name)]

    @property
    def any(self) -> bool:
        return bool(self.given())

    def checked(self, command: str) -> Sources:
        """These sources, if a collect can start from them; else a usage error naming the command."""
        if not self.any:
            raise UsageError(f"{command}: give at least one source ({', '.join(self.LISTED)})")
        if self.msk_region and not self.msk_cluster_arn:
            raise UsageError(
                f"{command}: --msk-region names the region of --msk-cluster-arn: give the ARN too"
            )
        if self.msk_topics not in MSK_TOPICS:
            raise UsageError(f"{command}: --msk-topics is {', '.join(MSK_TOPICS)}, not {self.msk_topics}")
        if self.msk_topics != "auto" and not self.msk_cluster_arn:
            raise UsageError(f"{command}: --msk-topics only with --msk-cluster-arn")
        if not (0 < self.timeout <= MAX_TIMEOUT):  # also nan (no comparison holds) and inf
            raise UsageError(
                f"{command}: --timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}, "
                f"not {self.timeout:g}"
            )
        return self
