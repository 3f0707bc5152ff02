"""What lint reads out of a change's files: located rows, whatever the format.

Every value keeps the file and line it came from, so a finding can be reported where the
reviewer can fix it. The readers of each format (auditor/lint/formats/) produce these; the
reader (auditor/lint/inputs.py) gathers them into one :class:`LintInputs`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from auditor.collectors.files import BROKER
from auditor.errors import UsageError

UNRECOGNISED = "no topic or broker definition recognised"
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1  # partitions, replication factor: int columns


class LintInputError(UsageError):
    """A lint input that cannot be read: one line naming the file and line (exit 2)."""


@dataclass
class Suppression:
    file: str
    line: int  # the comment's line
    codes: tuple[str, ...]
    reason: str
    own_line: bool  # a comment alone on its line covers the next line; a trailing one its own
    used: int = 0

    def covers(self, line: int) -> bool:
        return line == (self.line + 1 if self.own_line else self.line)


@dataclass
class BrokerFile:
    file: str
    broker_id: int
    entries: dict[str, tuple[str, int]]  # key -> (value, line)
    declared_id: bool  # broker.id / node.id was in the file
    kind: str = BROKER  # BROKER or COMBINED (auditor.collectors.files.classify)
    # A broker configuration resource (a Terraform aws_msk_configuration, a Strimzi Kafka CR):
    # its address; every broker it configures is linted with it, reported once at its lines.
    group: str | None = None
    line: int = 1  # where a finding about a key the resource leaves unset points (the resource's line)
    cluster: ClusterFacts | None = None  # the MSK cluster resource running this configuration
    brokers: int | None = None  # how many brokers run it, when the resource says (replicas)
    log_dirs: tuple[str, ...] | None = (
        None  # when the resource says instead of log.dirs (JBOD volumes; MSK: ())
    )


@dataclass
class ClusterFacts:
    """A cluster as its resource declares it: an MSK cluster in Terraform or CloudFormation
    (what the MSK API collector, auditor/collectors/msk.py, reads from DescribeClusterV2), a
    Strimzi or CFK Kafka resource (version, metadata mode)."""

    address: str  # aws_msk_cluster.NAME, module.NAME, the CloudFormation logical id, Kafka/NAME
    file: str
    line: int
    platform: str = "msk"  # msk | strimzi | cfk
    metadata_mode: str | None = None  # kraft | zookeeper, when the resource says
    brokers: int | None = None
    instance_type: str | None = None
    azs: int | None = None  # distinct client subnets: MSK puts each in its own AZ
    kafka_version: str | None = None
    storage_mode: str | None = None
    configuration: str | None = None  # the configuration_info.arn expression as written


@dataclass
class TopicDef:
    name: str
    file: str
    line: int  # the topic's line (its name)
    anchors: tuple[int, ...]  # lines a suppression may sit on: the item or document start, the name
    partitions: int | None
    replication_factor: int | None
    configs: dict[str, tuple[str, int]] = field(default_factory=dict)  # key -> (value, line)
    kind: str = (
        "list"  # list | strimzi | jikkou | topicctl | kafka-gitops | julieops | terraform | cfk | helm ...
    )
    # The cluster resource it names (Strimzi's strimzi.io/cluster label, CFK's kafkaClusterRef):
    # linted with that cluster when the files hold it (not part of what the topic asks for).
    cluster_ref: str | None = None

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    def content(self) -> tuple:
        """What the definition asks for, locations aside: equal contents are one definition."""
        return (
            self.partitions,
            self.replication_factor,
            tuple(sorted((k, v) for k, (v, _line) in self.configs.items())),
        )


@dataclass
class NodePool:
    """A Strimzi KafkaNodePool: its brokers count towards the Kafka resource it names."""

    cluster: str  # the strimzi.io/cluster label
    name: str
    replicas: int | None
    roles: tuple[str, ...]
    log_dirs: tuple[str, ...] | None
    file: str
    line: int


@dataclass
class Source:
    """One file being read: where it is, how it is named in messages, and whether it was
    named on the command line (True) or found in a given directory (False).

    ``text`` holds the content when it is not read from ``path``: standard input (``lint -``),
    or a template with its placeholders neutralised (auditor/lint/templating.py, whose
    ``Template`` is ``template``); ``as_suffix`` is then the suffix it is read as (.yaml)."""

    path: Path
    file: str
    explicit: bool
    session: ReadSession | None = None  # what the whole run knows (Terraform variables ...)
    text: str | None = None
    as_suffix: str | None = None
    template: object = None

    @property
    def suffix(self) -> str:
        return self.as_suffix or self.path.suffix.lower()

    @property
    def stdin(self) -> bool:
        return self.file == STDIN_NAME

    def head(self, limit: int = 256 * 1024) -> str:
        """The start of the file as text, for recognising it by content: "" for anything but
        a regular file (a FIFO would block; the format's own read refuses it with a message),
        a binary file or an unreadable one."""
        from auditor import safe_io

        if self.text is not None:
            return self.text[:limit]
        try:
            with safe_io.open_regular(self.path, limit=None) as fh:
                raw = fh.read(limit)
        except (OSError, safe_io.FileRefused):
            return ""
        if b"\0" in raw[:8192]:
            return ""
        return raw.decode("utf-8", errors="replace")


STDIN_NAME = "<stdin>"  # how findings and messages name what `lint -` read


@dataclass
class FileRows:
    """What one format read out of one file. A file with rows (or a recognised format with
    none, such as an empty topic list) is linted; ``skipped`` (a note: a client config, a
    controller) or ``unrecognised`` (a warning: nothing lint knows in it) say why not."""

    brokers: list[BrokerFile] = field(default_factory=list)
    topics: list[TopicDef] = field(default_factory=list)
    suppressions: list[Suppression] = field(default_factory=list)
    clusters: list[ClusterFacts] = field(default_factory=list)
    node_pools: list[NodePool] = field(default_factory=list)
    # 'FILE:LINE: what was not evaluated, and so not linted'
    unevaluated: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the reader assumed, one line each (a note)
    skipped: str | None = None
    unrecognised: str | None = None
    nothing_kafka: bool = False  # a file of a format lint reads, with nothing Kafka in it: a walk counts it


@dataclass
class LintInputs:
    files: list[str] = field(default_factory=list)  # the files linted (a broker or topic definitions)
    brokers: list[BrokerFile] = field(default_factory=list)
    topics: list[TopicDef] = field(default_factory=list)
    suppressions: list[Suppression] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # files read and passed over (a client config ...)
    notes: list[str] = field(default_factory=list)  # one line each: why a file was skipped
    # 'FILE: no topic or broker definition recognised ...': a warning, an error under --strict
    unrecognised: list[str] = field(default_factory=list)
    unevaluated: list[str] = field(default_factory=list)  # expressions left as written: warnings
    clusters: list[ClusterFacts] = field(default_factory=list)
    node_pools: list[NodePool] = field(default_factory=list)
    other_files: int = 0  # files met in a directory walk with nothing Kafka in them


@dataclass
class ReadSession:
    """The context of one lint run's reading, passed to every format (no module state):
    Terraform variable values and directory scopes (auditor/lint/formats/terraform.py), and
    the directories the run may read beside its files (``roots``: the directories given and
    those of the files given; a compose file's ``env_file`` must lie inside one)."""

    terraform: object = None
    roots: tuple[Path, ...] = ()

    def may_read(self, path: Path) -> bool:
        try:
            real = path.resolve()
        except OSError:
            return False
        return any(real == r or r in real.parents for r in self.roots)
