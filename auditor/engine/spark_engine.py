"""Spark through sqlframe's Spark session: local[*], a cluster master, or spark-submit's session.

pyspark is imported here and nowhere else, so the embedded path never starts a JVM.
"""

from __future__ import annotations

import os

from auditor.engine.base import VIEW_PREFIX, Engine
from auditor.engine.plans import PlanCache
from auditor.snapshot.schema import Table, spark_ddl

PER_PARTITION_TABLES = frozenset({"partitions", "zk_state"})


class SparkEngine(Engine):
    """Spark runs a fleet audit as a few dozen jobs, one per shared transform and rule.

    Each rule's findings are a checkpoint of their own (``rule_findings_as_tables``), not a
    view read by one final job: a single job over the union of 65 rules' plans ran 226 stages
    while adaptive execution re-planned the whole union as each finished (1M partitions: the
    union job 53 s, the same rules as separate jobs 40 s; tables of 6 rules each were no
    faster than one per rule). Running up to 3 of those jobs at once from threads was measured
    too and gained nothing on local[2] (10M: 138.4 s against 137.0 s): the JVM already uses
    both cores. bench/RESULTS.md has the figures.
    """

    name = "spark"
    rule_findings_as_tables = True

    def __init__(self, master: str | None = None, conf: dict | None = None, plan_cache: bool = True):
        if master is None or master.startswith("local"):
            # Otherwise Spark binds to the external interface.
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        from pyspark.sql import SparkSession as PySparkSession
        from sqlframe.spark import SparkSession

        builder = PySparkSession.builder.appName("kafka-auditor")
        if master:
            builder = builder.master(master)
        elif "PYSPARK_GATEWAY_PORT" not in os.environ and "spark.master" not in (conf or {}):
            # Under spark-submit (which sets the gateway variables) the master comes from
            # spark-submit's own --master; otherwise default to all local cores.
            builder = builder.master("local[*]")
        settings = {
            "spark.sql.shuffle.partitions": "16",  # snapshots are small per cluster; AQE coalesces further
            "spark.sql.adaptive.enabled": "true",
            "spark.sql.session.timeZone": "UTC",
            "spark.ui.showConsoleProgress": "false",
            # A checkpointed relation keeps the constraints of the plan it came from; Spark 4's
            # Union fails to remap them ("key not found: cluster_id#..." in
            # UnionBase.rewriteConstraints) once several checkpoints are unioned. Constraint
            # propagation only infers extra filters, which these plans do not need.
            "spark.sql.constraintPropagation.enabled": "false",
            # List a fleet's snapshot files on the driver: a listing job per table (Spark's
            # default above 32 paths) costs more than listing a few hundred paths.
            "spark.sql.sources.parallelPartitionDiscovery.threshold": "4096",
            # A join on (cluster_id, topic, partition) may reuse a clustering on (cluster_id,
            # topic): joining 10M partitions with their topics' settings and then with
            # ZooKeeper's state shuffles the partitions once instead of twice.
            "spark.sql.requireAllClusterKeysForCoPartition": "false",
        }
        settings.update(conf or {})
        for key, value in settings.items():
            builder = builder.config(key, value)
        self.spark = builder.getOrCreate()
        self.spark.sparkContext.setLogLevel("ERROR")
        self.session = SparkSession(self.spark)
        self.plan_cache = PlanCache("spark", enabled=plan_cache)

    def create(self, name: str, sql: str, *, reuse: bool = False) -> None:
        # Spark inlines temp views when it analyses a query, so a view over views over views
        # (findings over shared transforms over snapshot tables, for 60 rules) becomes one
        # enormous plan that exhausts the analyzer. A local checkpoint computes the result
        # once into the executors' block managers and cuts the lineage: every later plan
        # starts from it. (If an executor is lost the job fails rather than recomputes;
        # acceptable for a batch audit, and what keeps the driver's plans bounded.)
        from pyspark.sql import functions as SF

        if not reuse:
            # Read once, by the next stage (the union of the rules' findings, the check's final
            # stage): plain views. They read only checkpoints and snapshot tables, so the
            # inlined plan stays bounded.
            self.spark.sql(sql).createOrReplaceTempView(VIEW_PREFIX + name)
            return
        frame = self.spark.sql(sql)
        # A union of many rules' views has the partitions of all its inputs (~100 for the
        # 200-cluster bench fleet, ~1,000 before the snapshot tables were cached): every later
        # action on the checkpoint would pay a task per partition.
        most = max(16, 4 * self.spark.sparkContext.defaultParallelism)
        if frame.rdd.getNumPartitions() > most:
            frame = frame.coalesce(most)
        frame = frame.localCheckpoint(eager=True)
        # Re-alias every column: Spark 4 fails to analyse a union of two checkpointed
        # relations directly ("key not found: cluster_id#..."); a projection on top is fine.
        frame.select(*[SF.col(f"`{c}`").alias(c) for c in frame.columns]).createOrReplaceTempView(VIEW_PREFIX + name)

    def rows(self, table: str) -> list[dict]:
        return [r.asDict() for r in self.spark.table(table).collect()]

    def write_findings(self, table: str, directory: str) -> None:
        # One task per cluster's rows: one file per cluster directory, not one per input partition.
        frame = self.spark.table(table)
        frame.repartition("cluster").write.mode("overwrite").partitionBy("cluster").parquet(directory)

    def read_findings(self, path: str, name: str, exclude_run_date: str | None = None) -> str | None:
        from pyspark.sql import functions as SF

        from auditor.errors import UsageError

        try:
            frame = self.spark.read.parquet(path)
        except Exception as e:
            raise UsageError(f"{path}: no readable findings ({str(e).splitlines()[0][:300]})") from None
        if "run_date" not in frame.columns:
            frame.select("fingerprint").createOrReplaceTempView(VIEW_PREFIX + name)
            return path
        dates = sorted(str(r[0]) for r in frame.select("run_date").distinct().collect())
        earlier = [d for d in dates if d != exclude_run_date]
        if not earlier:
            return None
        chosen = earlier[-1]
        (frame.where(SF.col("run_date").cast("string") == chosen).select("fingerprint")
         .createOrReplaceTempView(VIEW_PREFIX + name))
        return chosen

    def load(self, refs):
        # Spark finds cached data by plan: a second audit in this session (spark-submit running
        # several, a notebook, the tests) reading the same paths would get the first audit's
        # rows back, however the files changed since. Each audit starts from the files.
        self.spark.catalog.clearCache()
        return super().load(refs)

    def _register_rows(self, table: Table, rows: list[dict]) -> None:
        df = self.spark.createDataFrame([[r.get(c.name) for c in table.columns] for r in rows], spark_ddl(table))
        df.createOrReplaceTempView(VIEW_PREFIX + table.name)

    def _register_files(self, table: Table, parquet: list[str], jsonl: list[str]) -> None:
        ddl = spark_ddl(table)
        frames = []
        if parquet:
            frames.append(self.spark.read.schema(ddl).parquet(*parquet))
        if jsonl:
            frames.append(self.spark.read.schema(ddl).option("mode", "FAILFAST").json(jsonl))
        if not frames:
            frames.append(self.spark.createDataFrame([], ddl))
        df = frames[0]
        for other in frames[1:]:
            df = df.unionByName(other)
        df = df.select(*table.names)
        # Cached: a fleet is thousands of small files (a table per cluster), and the rules scan
        # each table many times; opening every file again per scan cost more than the rules.
        # The first action fills the cache (memory, spilling to local disk). Except the tables
        # with a row per partition, when read from Parquet: Spark's vectorised Parquet reader
        # scans them faster than its in-memory cache (10M partitions: 0.76 s against 1.37 s per
        # scan), and filling the cache cost 10.9 s (zk_state: 3.2 s).
        if not (table.name in PER_PARTITION_TABLES and parquet and not jsonl):
            df = df.cache()
        df.createOrReplaceTempView(VIEW_PREFIX + table.name)

    def close(self) -> None:
        # The Spark session belongs to the process (tests and spark-submit reuse it), so it
        # keeps running; only sqlframe's process-wide active session is released.
        from sqlframe.base.session import _BaseSession

        if _BaseSession._instance is self.session:
            _BaseSession._instance = None
