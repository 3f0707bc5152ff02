"""The options several commands share, declared once: the report options, rule choice,
baselines, and the sources of a live cluster (``with_sources``).

Typer reads a command's options from its function's signature. ``with_sources`` adds the
source options (auditor/sources.py) to a command's signature and hands the command one
``Sources`` value instead, so every command that reads a live cluster offers the same sources
with the same help, and a new source is one entry in ``SOURCE_OPTIONS``.
"""

from __future__ import annotations

import functools
import inspect
import typing
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from auditor.render import FORMATS
from auditor.sources import DEFAULT_TIMEOUT, MSK_TOPICS, Sources

# --format choices: the renderers' list (auditor/render/__init__.py), never a copy of it.
OutputFormat = Enum("OutputFormat", {name: name for name in FORMATS}, type=str)


MskTopics = Enum("MskTopics", {name: name for name in MSK_TOPICS}, type=str)


class FailOn(str, Enum):
    info = "info"
    warning = "warning"
    error = "error"
    critical = "critical"
    never = "never"


class EngineName(str, Enum):
    duckdb = "duckdb"
    spark = "spark"


FormatOpt = Annotated[
    OutputFormat | None,
    typer.Option(
        "--format",
        "-f",
        help="Output format (default: from -o's extension .json .sarif .html .md .xml .txt, else text).",
    ),
]
OutputOpt = Annotated[
    Path | None, typer.Option("--output", "-o", help="Write the report here instead of stdout.")
]
FailOnOpt = Annotated[
    FailOn | None,
    typer.Option(
        help="Lowest severity that fails the run (exit 1). Default: the config's fail_on, else error."
    ),
]
ConfigOpt = Annotated[
    str | None,
    typer.Option(
        "--config",
        help="kafka-audit.toml (default: ./kafka-audit.toml or [tool.kafka-audit] in ./pyproject.toml).",
    ),
]
EngineOpt = Annotated[EngineName, typer.Option(help="duckdb (embedded, default) or spark.")]
SelectOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--select",
        help="Rules to run (codes, names or prefixes, comma-separated, repeatable): replaces the config file's select.",
    ),
]
IgnoreOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--ignore",
        help="Rules not to run (codes, names or prefixes, comma-separated, repeatable): added to the config file's ignore.",
    ),
]
StatisticsOpt = Annotated[
    bool,
    typer.Option(
        "--statistics", help="Print the number of findings per rule (most first) instead of the report."
    ),
]
BaselineOpt = Annotated[
    Path | None,
    typer.Option(
        "--baseline",
        help="Fail only on findings not in this baseline file; says how many matched and which are stale.",
    ),
]
WriteBaselineOpt = Annotated[
    Path | None,
    typer.Option("--write-baseline", help="Write the current findings as a baseline file and exit 0."),
]
RunDateOpt = Annotated[
    str | None, typer.Option("--run-date", help="Date of this run (YYYY-MM-DD); default today.")
]

# The sources of a live cluster: (parameter, annotation, default), in the order --help lists them.
SOURCE_OPTIONS = (
    (
        "bootstrap_servers",
        Annotated[
            str | None,
            typer.Option(
                "--bootstrap-servers",
                "--bootstrap-server",
                help="HOST:PORT[,HOST:PORT] of the Kafka Admin API (read-only calls).",
            ),
        ],
        None,
    ),
    (
        "command_config",
        Annotated[
            Path | None,
            typer.Option(
                "--command-config",
                help="Kafka CLI client.properties: security.protocol, SSL, SASL (PLAIN, SCRAM, AWS MSK IAM).",
            ),
        ],
        None,
    ),
    (
        "zookeeper",
        Annotated[
            str | None,
            typer.Option(
                "--zookeeper",
                help="HOST:PORT (comma-separated for an ensemble, optional /chroot) of a ZooKeeper-mode cluster.",
            ),
        ],
        None,
    ),
    (
        "broker_config",
        Annotated[
            list[str] | None,
            typer.Option(
                "--broker-config", help="server.properties file or a directory of *.properties (repeatable)."
            ),
        ],
        None,
    ),
    (
        "metrics",
        Annotated[
            list[str] | None,
            typer.Option(
                "--metrics",
                help="Prometheus text: file or http(s) URL, optionally 'broker_id=N:' first (repeatable).",
            ),
        ],
        None,
    ),
    (
        "msk_cluster_arn",
        Annotated[
            str | None,
            typer.Option(
                "--msk-cluster-arn",
                help="AWS MSK source: the cluster's ARN (read-only API calls; boto3, the msk extra).",
            ),
        ],
        None,
    ),
    (
        "msk_region",
        Annotated[
            list[str] | None,
            typer.Option(
                "--msk-region",
                help="AWS region of --msk-cluster-arn (default: the ARN's). collect: without an ARN, discover every MSK cluster of the region(s) into --out.",
            ),
        ],
        None,
    ),
    (
        "msk_topics",
        Annotated[
            MskTopics,
            typer.Option(
                "--msk-topics",
                help="With --msk-cluster-arn: topics, partitions and topic configs from the Kafka Admin API "
                "(admin), the MSK topic APIs with metrics from CloudWatch, the brokers not contacted (api), or "
                "auto: admin when --bootstrap-servers is given or MSK's listener is reachable, else api.",
            ),
        ],
        "auto",
    ),
    (
        "cluster_name",
        Annotated[
            str | None,
            typer.Option("--cluster-name", help="Cluster name (also the id when ZooKeeper gives none)."),
        ],
        None,
    ),
    (
        "timeout",
        Annotated[float, typer.Option(help="Timeout of every network call, seconds.")],
        DEFAULT_TIMEOUT,
    ),
)


def sources_of(values: dict) -> tuple[Sources, list[str]]:
    """The Sources of the source options' values, and the --msk-region values as given (collect
    discovers the clusters of several regions; every other use takes one)."""
    regions = list(values.get("msk_region") or [])
    return (
        Sources(
            bootstrap_servers=values.get("bootstrap_servers"),
            command_config=str(values["command_config"]) if values.get("command_config") else None,
            zookeeper=values.get("zookeeper"),
            broker_configs=tuple(values.get("broker_config") or ()),
            metrics=tuple(values.get("metrics") or ()),
            msk_cluster_arn=values.get("msk_cluster_arn"),
            msk_region=regions[0] if len(regions) == 1 else None,
            msk_topics=getattr(values.get("msk_topics"), "value", values.get("msk_topics") or "auto"),
            cluster_name=values.get("cluster_name"),
            timeout=values.get("timeout", DEFAULT_TIMEOUT),
        ),
        regions,
    )


def with_sources(command):
    """Give ``command`` the source options: it declares a ``sources: Sources`` parameter (and,
    if it wants the --msk-region values as given, ``msk_regions: list[str]``) and receives them
    built from the options; the options are appended to its signature for typer."""
    own = inspect.signature(command)
    hints = typing.get_type_hints(command, include_extras=True)  # (annotations are strings here)
    wants_regions = "msk_regions" in own.parameters
    kept = [
        p.replace(annotation=hints.get(name, p.annotation), kind=inspect.Parameter.KEYWORD_ONLY)
        for name, p in own.parameters.items()
        if name not in ("sources", "msk_regions")
    ]
    added = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
        for name, annotation, default in SOURCE_OPTIONS
    ]
    names = [name for name, _, _ in SOURCE_OPTIONS]

    @functools.wraps(command)
    def with_sources_given(**values):
        sources, regions = sources_of({name: values.pop(name) for name in names})
        if len(regions) > 1 and not wants_regions:
            from auditor.errors import UsageError

            raise UsageError(f"{command.__name__}: --msk-cluster-arn takes one --msk-region")
        extra = {"msk_regions": regions} if wants_regions else {}
        return command(sources=sources, **extra, **values)

    params = kept + added
    with_sources_given.__signature__ = own.replace(
        parameters=params, return_annotation=inspect.Signature.empty
    )
    with_sources_given.__annotations__ = {p.name: p.annotation for p in params}
    return with_sources_given
