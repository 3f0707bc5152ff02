"""Benchmark: `kafka-audit lint` end to end on a change of 200 files.

    python bench/bench_lint.py [--files 200] [--runs 7] [--against SNAPSHOT_DIR] [--keep DIR]
    python bench/bench_lint.py --monorepo --files 2000 [--runs 5]   # issue 33: mixed formats, ratio to --version
    python bench/bench_lint.py --monorepo --sizes 650,1300,2600 --runs 3  # issue 49: seconds per file, size by size

Generates a realistic repository of Kafka configuration: 20% server.properties files (one
per broker), the rest topic definitions, a third each plain YAML topic lists, Strimzi
KafkaTopic and jikkou KafkaTopic documents (5 topics per file, a few typos, min ISR equal
to replicas, a suppression here and there). Then times the console script as CI runs it:
process start to exit, `runs` times, and prints min and median. The first run also warms
the compiled-plan cache (~/.cache/kafka-auditor/plans), as a CI cache or pre-commit's
second run would.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def generate(root: Path, files: int) -> None:
    brokers = max(1, files // 5)
    for b in range(1, brokers + 1):
        typo = "num.io.thread=32\n" if b % 7 == 0 else ""
        (root / "brokers").mkdir(parents=True, exist_ok=True)
        (root / "brokers" / f"broker-{b}.properties").write_text(
            f"# broker {b}\nbroker.id={b}\nbroker.rack=az-{b % 3}\nlog.dirs=/data/a,/data/b\n"
            f"num.network.threads={6 + b % 3}\nnum.io.threads={12 + b % 5}\nqueued.max.requests=1000\n"
            f"default.replication.factor=3\nmin.insync.replicas=2\nunclean.leader.election.enable=false\n{typo}"
        )
    (root / "topics").mkdir(parents=True, exist_ok=True)
    for i in range(files - brokers):
        kind = i % 3
        topics = [f"team{i}.stream{j}" for j in range(5)]
        if kind == 0:
            body = []
            for j, t in enumerate(topics):
                isr = 3 if j == 0 and i % 4 == 0 else 2
                typo = "    retension.ms: 86400000\n" if j == 1 and i % 5 == 0 else ""
                sup = '# kafka-audit: ignore[REP003] reason="scratch"\n' if j == 4 and i % 6 == 0 else ""
                rf = 1 if sup else 3
                body.append(
                    f"{sup}- name: {t}\n  partitions: {6 + j}\n  replication_factor: {rf}\n  configs:\n"
                    f"    min.insync.replicas: {isr if rf > 1 else 1}\n    retention.ms: 604800000\n{typo}"
                )
            (root / "topics" / f"list-{i}.yaml").write_text("".join(body))
        else:
            api, cfg = (
                ("kafka.strimzi.io/v1beta2", "config")
                if kind == 1
                else ("kafka.jikkou.io/v1beta2", "configs")
            )
            docs = []
            for j, t in enumerate(topics):
                isr = 3 if j == 0 and i % 4 == 1 else 2
                docs.append(
                    f"apiVersion: {api}\nkind: KafkaTopic\nmetadata:\n  name: {t}\n  labels:\n"
                    f"    strimzi.io/cluster: prod\nspec:\n  partitions: {12 + j}\n  replicas: 3\n"
                    f"  {cfg}:\n    min.insync.replicas: {isr}\n    cleanup.policy: delete\n"
                )
            (root / "topics" / f"{'strimzi' if kind == 1 else 'jikkou'}-{i}.yaml").write_text(
                "---\n".join(docs)
            )


def generate_monorepo(root: Path, files: int) -> None:
    """A mixed config-as-code monorepo of ``files`` files (issue 33): per team a Terraform
    module (Mongey kafka_topic resources, one with RF 1; an aws_msk_configuration heredoc
    and an aws_msk_cluster linked to it), a Strimzi Kafka CR and its node pool,
    a CFK KafkaTopic, Bitnami Helm values, a CloudFormation MSK template, plain topic lists and
    server.properties files; since issue 49 also a compose file (three Bitnami brokers from a
    YAML anchor, an env_file, interpolation), a cp-ansible inventory with group_vars/, a Strimzi
    KafkaTopic kept as a templatefile (``*.yaml.tpl``) and an umbrella chart's values; plus what a
    real repository also holds and lint must pass over: READMEs, scripts, unrelated Terraform,
    GitHub workflows (hidden: not walked)."""
    kinds = (
        "tf", "strimzi", "cfk", "helm", "cfn", "topics", "props",
        "compose", "ansible", "tpl", "umbrella", "readme", "script", "s3tf",
    )  # fmt: skip
    for i in range(files):
        kind = kinds[i % len(kinds)]
        team = root / f"team-{i // len(kinds)}"
        team.mkdir(parents=True, exist_ok=True)
        if kind == "tf":
            body = "".join(
                f'resource "kafka_topic" "t{j}" {{\n  name               = "team{i}.t{j}"\n'
                f"  partitions         = {6 + j}\n  replication_factor = {1 if j == 0 and i % 3 == 0 else 3}\n"
                f'  config = {{\n    "min.insync.replicas" = "2"\n    "retention.ms" = var.retention\n  }}\n}}\n'
                for j in range(4)
            )
            body += 'variable "retention" {\n  default = "604800000"\n}\n'
            # every module: its MSK cluster and the configuration it runs
            body += (
                'resource "aws_msk_configuration" "c" {\n  name = "c"\n  server_properties = <<-EOT\n'
                "    min.insync.replicas = 2\n    default.replication.factor = 3\n"
                "    unclean.leader.election.enable = false\n  EOT\n}\n"
                'resource "aws_msk_cluster" "k" {\n  cluster_name = "k"\n  kafka_version = "3.6.0"\n'
                "  number_of_broker_nodes = 3\n  broker_node_group_info {\n"
                '    instance_type = "kafka.m5.large"\n    client_subnets = ["a", "b", "c"]\n  }\n'
                "  configuration_info {\n    arn = aws_msk_configuration.c.arn\n    revision = 1\n  }\n}\n"
            )
            (team / "kafka.tf").write_text(body)
        elif kind == "strimzi":
            (team / "kafka.yaml").write_text(
                f"apiVersion: kafka.strimzi.io/v1beta2\nkind: Kafka\nmetadata:\n  name: c{i}\nspec:\n  kafka:\n"
                f"    version: 3.9.0\n    config:\n      default.replication.factor: 3\n"
                f"      min.insync.replicas: {3 if i % 4 == 1 else 2}\n---\n"
                f"apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaNodePool\nmetadata:\n  name: b\n"
                f"  labels:\n    strimzi.io/cluster: c{i}\nspec:\n  replicas: 3\n  roles: [broker]\n"
                f"  storage:\n    type: jbod\n    volumes:\n      - id: 0\n        type: persistent-claim\n"
            )
        elif kind == "cfk":
            (team / "topic.yaml").write_text(
                f"apiVersion: platform.confluent.io/v1beta1\nkind: KafkaTopic\nmetadata:\n  name: cfk{i}\n"
                f'spec:\n  replicas: 3\n  partitionCount: 6\n  configs:\n    min.insync.replicas: "2"\n'
            )
        elif kind == "helm":
            (team / "values.yaml").write_text(
                f"replicaCount: 3\ndefaultReplicationFactor: 3\noffsetsTopicReplicationFactor: 3\n"
                f"transactionStateLogMinIsr: 2\nnumIoThreads: 8\nnumNetworkThreads: 3\n"
                f"provisioning:\n  enabled: true\n  replicationFactor: 3\n  topics:\n    - name: h{i}\n"
                f"      partitions: 6\n      config:\n        min.insync.replicas: 2\n"
            )
        elif kind == "cfn":
            (team / "msk.yaml").write_text(
                "AWSTemplateFormatVersion: '2010-09-09'\nParameters:\n  Subnets:\n    Type: CommaDelimitedList\n"
                "Resources:\n  Config:\n    Type: AWS::MSK::Configuration\n    Properties:\n      Name: c\n"
                "      ServerProperties: |\n        min.insync.replicas=2\n        default.replication.factor=3\n"
                "  Cluster:\n    Type: AWS::MSK::Cluster\n    Properties:\n      ClusterName: !Sub '${AWS::StackName}'\n"
                "      KafkaVersion: 3.6.0\n      NumberOfBrokerNodes: 3\n      BrokerNodeGroupInfo:\n"
                "        InstanceType: kafka.m5.large\n        ClientSubnets: [!Select [0, !Ref Subnets], "
                "!Select [1, !Ref Subnets], !Select [2, !Ref Subnets]]\n"
                "      ConfigurationInfo:\n        Arn: !GetAtt Config.Arn\n        Revision: 1\n"
            )
        elif kind == "topics":
            (team / "topics.yaml").write_text(
                "".join(
                    f"- name: list{i}.{j}\n  partitions: 6\n  replication_factor: 3\n"
                    f"  configs:\n    min.insync.replicas: 2\n"
                    for j in range(5)
                )
            )
        elif kind == "props":
            (team / "server.properties").write_text(
                f"broker.id={i}\nlog.dirs=/data/a,/data/b\nnum.network.threads=6\nnum.io.threads=12\n"
                "default.replication.factor=3\nmin.insync.replicas=2\n"
            )
        elif kind == "compose":
            (team / "kafka.env").write_text("KAFKA_CFG_NUM_IO_THREADS=16\nKAFKA_CFG_LOG_RETENTION_HOURS=72\n")
            services = "".join(
                f"  kafka-{n}:\n    <<: *kafka\n    environment:\n      <<: *env\n      KAFKA_CFG_NODE_ID: {n}\n"
                for n in (1, 2, 3)
            )
            (team / "docker-compose.yml").write_text(
                "x-kafka: &kafka\n  image: bitnami/kafka:3.7.0\n  env_file: [kafka.env]\n  environment: &env\n"
                "    KAFKA_CFG_PROCESS_ROLES: broker,controller\n"
                "    KAFKA_CFG_CONTROLLER_QUORUM_VOTERS: 1@kafka-1:9093,2@kafka-2:9093,3@kafka-3:9093\n"
                "    KAFKA_CFG_DEFAULT_REPLICATION_FACTOR: 3\n    KAFKA_CFG_MIN_INSYNC_REPLICAS: ${MIN_ISR:-2}\n"
                f"    KAFKA_CFG_OFFSETS_TOPIC_REPLICATION_FACTOR: {1 if i % 3 == 0 else 3}\n"
                f"services:\n{services}  ui:\n    image: provectuslabs/kafka-ui:latest\n"
            )
        elif kind == "ansible":
            inv = team / "ansible"
            (inv / "group_vars").mkdir(parents=True, exist_ok=True)
            (inv / "hosts.yml").write_text(
                "all:\n  vars:\n    confluent_package_version: 7.6.1\nkafka_broker:\n  hosts:\n"
                + "".join(f"    b{n}.example.com:\n      broker_id: {n}\n" for n in (1, 2, 3))
            )
            (inv / "group_vars" / "kafka_broker.yml").write_text(
                "kafka_broker_custom_properties:\n  default.replication.factor: 3\n"
                f'  min.insync.replicas: {3 if i % 4 == 0 else 2}\n  num.io.threads: "{{{{ io_threads }}}}"\n'
            )
        elif kind == "tpl":
            (team / "topic.yaml.tpl").write_text(
                f"apiVersion: kafka.strimzi.io/v1beta2\nkind: KafkaTopic\nmetadata:\n  name: ${{prefix}}.events{i}\n"
                "  labels:\n    strimzi.io/cluster: ${cluster}\nspec:\n  partitions: 12\n"
                f"  replicas: 3\n  config:\n    min.insync.replicas: {3 if i % 5 == 0 else 2}\n"
            )
        elif kind == "umbrella":
            (team / "values.yaml").write_text(
                "cp-zookeeper:\n  servers: 3\ncp-kafka:\n  enabled: true\n  brokers: 3\n  image: confluentinc/cp-kafka\n"
                "  imageTag: 7.6.1\n  configurationOverrides:\n    default.replication.factor: 3\n"
                "    min.insync.replicas: 2\ncp-schema-registry:\n  enabled: true\n"
            )
        elif kind == "readme":
            (team / "README.md").write_text(f"# team {i}\n\nKafka topics for team {i}.\n")
        elif kind == "script":
            (team / "deploy.sh").write_text("#!/bin/sh\nterraform apply\n")
        else:
            (team / "s3.tf").write_text(f'resource "aws_s3_bucket" "b" {{\n  bucket = "team-{i}"\n}}\n')
    (root / ".github" / "workflows").mkdir(parents=True, exist_ok=True)
    (root / ".github" / "workflows" / "ci.yml").write_text("on: push\njobs: {}\n")


def time_runs(args: list[str], runs: int, env: dict) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        p = subprocess.run(args, capture_output=True, text=True, env=env)
        out.append(time.perf_counter() - start)
        if p.returncode not in (0, 1):
            raise SystemExit(f"lint failed ({p.returncode}): {p.stderr.strip()}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--against", help="also time lint --against this snapshot directory")
    ap.add_argument("--keep", help="write the generated files here and keep them")
    ap.add_argument(
        "--sizes",
        help="with --monorepo: comma-separated file counts, each generated and timed, to show how lint "
        "scales (seconds per file should not grow with the size)",
    )
    ap.add_argument(
        "--monorepo",
        action="store_true",
        help="a mixed config-as-code monorepo (Terraform, Strimzi, CFK, Helm, CloudFormation, "
        "topic lists, properties, and files to pass over) instead; also times --version in the same run",
    )
    a = ap.parse_args()
    if a.sizes:
        return scaling([int(n) for n in a.sizes.split(",")], a.runs)

    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="bench-lint-"))
    try:
        (generate_monorepo if a.monorepo else generate)(work, a.files)
        exe = shutil.which("kafka-audit") or sys.executable
        base = [exe] if exe.endswith("kafka-audit") else [exe, "-m", "auditor.cli.main"]
        env = dict(os.environ)
        cmd = [*base, "lint", str(work)]
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)  # warm-up (plan cache, page cache)
        print(p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.stderr.strip())
        results = {"lint": cmd}
        if a.against:
            results["lint --against"] = [*cmd, "--against", a.against]
        if a.monorepo:  # the process start-up floor, measured in the same run
            results["--version"] = [*base, "--version"]
        medians = {}
        for label, args in results.items():
            times = time_runs(args, a.runs, env)
            medians[label] = statistics.median(times)
            print(
                f"{label}: {a.files} files, {a.runs} runs: min {min(times):.2f} s, "
                f"median {statistics.median(times):.2f} s (python {platform.python_version()}, "
                f"load average {os.getloadavg()[0]:.2f})"
            )
        if "--version" in medians:
            print(f"lint / --version (medians): {medians['lint'] / medians['--version']:.2f}")
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)


def scaling(sizes: list[int], runs: int) -> None:
    """lint of a generated monorepo at each size: median seconds and milliseconds per file."""
    exe = shutil.which("kafka-audit") or sys.executable
    base = [exe] if exe.endswith("kafka-audit") else [exe, "-m", "auditor.cli.main"]
    env = dict(os.environ)
    start_up = statistics.median(time_runs([*base, "--version"], runs, env))
    print(f"--version: median {start_up:.2f} s")
    for size in sizes:
        work = Path(tempfile.mkdtemp(prefix="bench-lint-"))
        try:
            generate_monorepo(work, size)
            cmd = [*base, "lint", str(work)]
            p = subprocess.run(cmd, capture_output=True, text=True, env=env)  # warm-up
            summary = next((x for x in p.stdout.splitlines() if "file(s) linted" in x), p.stderr.strip())
            median = statistics.median(time_runs(cmd, runs, env))
            print(
                f"{size} files: median {median:.2f} s, {1000 * (median - start_up) / size:.2f} ms per file "
                f"beyond start-up (load average {os.getloadavg()[0]:.2f}); {summary}"
            )
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
