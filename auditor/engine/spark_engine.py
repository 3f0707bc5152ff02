"""Spark through sqlframe's Spark session: local[*], a cluster master, or spark-submit's session.

pyspark is imported here and nowhere else, so the embedded path never starts a JVM.
"""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

from auditor.engine.base import Engine, fused_by_default
from auditor.engine.jobs import SMALL_DATA_PARTITIONS, Jobs
from auditor.engine.plans import PlanCache
from auditor.engine.tables import VIEW_PREFIX
from auditor.snapshot.schema import TABLES, Table, spark_ddl

LOG_CONFIG = Path(__file__).resolve().parent.parent / "data" / "spark-log4j2.properties"
PER_PARTITION_TABLES = frozenset({"partitions", "zk_state"})
ONE_PARTITION = os.environ.get("KAFKA_AUDIT_SPARK_ONE_PARTITION") == "1"  # experiment
# A fleet of at most SMALL_DATA_PARTITIONS (auditor/engine/jobs.py) runs with
# SMALL_DATA_SETTINGS, a larger one with the session's own. Counted before reading anything,
# from the sizes of the partitions files as Spark lists them (any file system), at the bytes
# per partition of each format: 211 in the sample fleet's JSON Lines, 5.4 in the bench's 1M
# fleet's Parquet (bench/fleetgen.py; real assignments compress less, which errs towards the
# large settings).
BYTES_PER_PARTITION = {"parquet": 5, "jsonl": 200}
# Small data: every exchange in one task, no adaptive re-planning between stages, no broadcast
# jobs. With adaptive execution each shuffle and each broadcast is a job of its own (the root
# causes stage on the sample fleet: 79 jobs and 130 stages, 6.9 s; this way 1 job of 17 stages,
# 3.8 s), and a job costs ~50 ms of scheduling whatever its rows; nor code generation, whose
# compiling is most of a query's cost on a few thousand rows in a JVM not warmed up yet. The
# sample fleet in one warm JVM: 24.2 s against 16.2 s; its first run in a JVM (the CLI's),
# 36.7 / 40.0 s with code generation, 27.8 / 31.2 s without (bench/RESULTS.md). Not for large
# data: one task per exchange would do all of 10M partitions' shuffles on one core, and there
# adaptive execution and generated code pay.
SMALL_DATA_SETTINGS = {
    "spark.sql.adaptive.enabled": "false",
    "spark.sql.shuffle.partitions": "1",
    "spark.sql.autoBroadcastJoinThreshold": "-1",
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}


# What the JVM and Spark print on every start: not for a user watching the audit's progress.
START_UP_NOISE = re.compile(
    rb"^(WARNING: Using incubator modules|Using Spark's default log4j profile"
    rb"|Setting default log level|To adjust logging level)"
)


def _start_quiet_jvm(settings: dict) -> None:
    """Start the driver JVM, unless spark-submit (PYSPARK_GATEWAY_PORT) or an earlier session
    in this process did: with ``settings`` (the memory and Java options take effect only at
    start), logging nothing (LOG_CONFIG; Spark's own logging with KAFKA_AUDIT_DEBUG=1: a
    failed job is reported as one line by the command anyway), and its stderr forwarded without the start-up
    lines. pyspark's own launcher, with the pipe as the child's stderr; the forwarding thread
    runs before the launch, so a JVM that fails to start has its last words shown."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if "PYSPARK_GATEWAY_PORT" in os.environ or SparkContext._gateway is not None:
        return
    log_conf = f"-Dlog4j2.configurationFile={LOG_CONFIG.as_uri()}"
    extra = settings.get("spark.driver.extraJavaOptions", "")
    if "log4j2.configurationFile" not in extra and not os.environ.get("KAFKA_AUDIT_DEBUG"):
        settings["spark.driver.extraJavaOptions"] = f"{extra} {log_conf}".strip()
    read_end, write_end = os.pipe()
    threading.Thread(target=_forward_stderr, args=(read_end,), name="spark-stderr", daemon=True).start()
    try:
        conf = SparkConf(loadDefaults=False).setAll(list(settings.items()))
        gateway = launch_gateway(conf, popen_kwargs={"stderr": write_end})
    except Exception as e:  # no Java, a bad option: the JVM's own words are above
        from auditor.errors import AuditorError

        raise AuditorError(
            f"could not start Spark's JVM ({str(e).strip().splitlines()[0][:200]}); "
            "--engine duckdb runs the same audit without one"
        ) from None
    finally:
        os.close(write_end)  # the JVM holds its own copy
    SparkContext._ensure_initialized(gateway=gateway)


def _submitted_settings() -> dict[str, str]:
    """Under spark-submit: the settings it was given (its --conf and spark-defaults.conf)."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return {}
    from pyspark import SparkConf, SparkContext

    SparkContext._ensure_initialized()  # connects to spark-submit's JVM
    return dict(SparkConf().getAll())


def _forward_stderr(read_end: int) -> None:
    shown = StderrFilter(debug=bool(os.environ.get("KAFKA_AUDIT_DEBUG")))
    with os.fdopen(read_end, "rb") as pipe:
        for line in pipe:
            for out in shown.feed(line):
                os.write(2, out)
    for out in shown.finish():
        os.write(2, out)


_LOG_RECORD = b"kafka-audit: spark: "  # how LOG_CONFIG starts each record
_UNREADABLE_FILE = re.compile(rb"error while reading file (\S+?)\.?(?:\s|$)")


class StderrFilter:
    """What of the driver JVM's stderr reaches the user: not the start-up lines, and not Java
    stack traces. A task that cannot read a file (a corrupt Parquet page) makes Spark log the
    same ~100-line trace once per job that reads it (318 lines for one file); instead, one line
    per file: ``kafka-audit: spark: cannot read FILE``, the command then names the snapshot
    (AUD001) as it does on DuckDB. Any other record is shown as its first line, once. With
    KAFKA_AUDIT_DEBUG=1 everything but the start-up lines passes."""

    def __init__(self, debug: bool = False):
        self.debug = debug
        self.pending: bytes | None = None  # a record's first line, shown unless it was a read failure
        self.in_record = False
        self.seen: set[bytes] = set()

    def feed(self, line: bytes) -> list[bytes]:
        if START_UP_NOISE.match(line):
            return []
        if self.debug:
            return [line]
        if line.startswith(_LOG_RECORD):
            out = self._flush()
            self.pending, self.in_record = line, True
            if b"Exception in task" in line or b"aborting job" in line:
                self.pending = None  # what failed is on the lines below (or already said)
            return out
        if self.in_record or line.startswith((b"\tat ", b"\t... ", b"Caused by: ")):
            m = _UNREADABLE_FILE.search(line)
            if m:
                self.pending = None
                path = m.group(1).removeprefix(b"file://")  # a local file, named as DuckDB's error names it
                return self._once(_LOG_RECORD + b"cannot read " + path + b"\n")
            return []  # an exception's message and stack frames
        return self._flush() + [line]  # the JVM's own words (it failed to start ...)

    def finish(self) -> list[bytes]:
        return [] if self.debug else self._flush()

    def _flush(self) -> list[bytes]:
        pending, self.pending, self.in_record = self.pending, None, False
        return self._once(pending) if pending else []

    def _once(self, line: bytes) -> list[bytes]:
        if line in self.seen:
            return []
        self.seen.add(line)
        return [line]


class SparkEngine(Engine):
    """Spark runs a fleet audit as a few dozen jobs: one per shared transform, and one per
    ``rules_per_table`` rules (the union of their findings, checkpointed).

    Not one job for every rule: a single job over the union of 65 rules' plans ran 226 stages
    while adaptive execution re-planned the whole union as each finished (1M partitions: the
    union job 53 s, the same rules as separate jobs 40 s), and on the sample fleet it was the
    slowest too. Not a job per rule either: on a small fleet each job is ~1.7 s of fixed cost
    (planning, code generation, scheduling, the checkpoint) whatever its data: the sample
    fleet's 52 rules in tables of 16 (4 jobs) halved its warm CLI run (215 s to 126 s on a
    loaded machine; tables of 8 or of 52 were slower: bench/RESULTS.md; at 1M, tables of 6
    were no slower than one per rule). Rule jobs run two
    at a time (``create(deferred=True)``): on a small fleet each is mostly driver work that
    overlaps with another's execution; at 10M the JVM already uses both cores of local[2]
    with one job (138.4 s with three at a time against 137.0 s), so it neither gains nor
    costs there. A small fleet (``SMALL_DATA_SETTINGS``) runs its shared transforms two at a
    time too, each after the transforms it reads (the sample fleet, warm: 16.4 s to 11.1 s).
    """

    name = "spark"
    rules_per_table = 16

    def __init__(
        self,
        master: str | None = None,
        conf: dict | None = None,
        plan_cache: bool = True,
        fused: bool | None = None,
    ):
        self.fused = fused_by_default() if fused is None else fused
        if master is None or master.startswith("local"):
            # Otherwise Spark binds to the external interface.
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        from pyspark.sql import SparkSession as PySparkSession
        from sqlframe.spark import SparkSession

        if not master and "PYSPARK_GATEWAY_PORT" not in os.environ and "spark.master" not in (conf or {}):
            # Under spark-submit (which sets the gateway variables) the master comes from
            # spark-submit's own --master; otherwise default to all local cores.
            master = "local[*]"
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
        # The user's settings win: ``conf``, and spark-submit's --conf (ours would override them).
        explicit = {**_submitted_settings(), **(conf or {})}
        settings.update(explicit)
        if master:
            settings["spark.master"] = master
        settings["spark.app.name"] = settings.get("spark.app.name", "kafka-auditor")
        _start_quiet_jvm(settings)
        builder = PySparkSession.builder
        for key, value in settings.items():
            builder = builder.config(key, value)
        self.spark = builder.getOrCreate()
        self.spark.sparkContext.setLogLevel("ERROR")
        self._parallelism = self.spark.sparkContext.defaultParallelism
        self.jobs = Jobs()
        self.session = SparkSession(self.spark)
        self.plan_cache = PlanCache("spark", enabled=plan_cache)
        # (small data, large data) for each sized setting the user did not set: large data
        # runs with ours above, or Spark's default (None: unset, whatever an earlier audit in
        # this session set).
        self._sized_settings = {
            key: (small, settings.get(key))
            for key, small in SMALL_DATA_SETTINGS.items()
            if key not in explicit
        }
        self.small_data: bool | None = None  # decided per load
        # Building the plan bundle (auditor/engine/plan_bundle.py): compile every plan, run none.
        self.plan_only = os.environ.get("KAFKA_AUDIT_PLAN_ONLY") == "1"

    def create(
        self, name: str, sql: str, *, reuse: bool = False, deferred: bool = False, awaited: bool = False
    ) -> None:
        # Spark inlines temp views when it analyses a query, so a view over views over views
        # (findings over shared transforms over snapshot tables, for 60 rules) becomes one
        # enormous plan that exhausts the analyzer. A local checkpoint computes the result
        # once into the executors' block managers and cuts the lineage: every later plan
        # starts from it. (If an executor is lost the job fails rather than recomputes;
        # acceptable for a batch audit, and what keeps the driver's plans bounded.)
        if self.plan_only:
            # Only what the next plans' compiling reads of it: its columns and their types (an
            # analysis of this statement over the empty tables before it, no job).
            # An empty relation of that schema made in the JVM: not from JSON text, which cannot
            # hold every type a transform makes (a map with integer keys: cluster_brokers).
            schema = self.spark.sql(sql)._jdf.schema()
            empty = self.spark._jsparkSession.createDataFrame(self.spark._jvm.java.util.ArrayList(), schema)
            empty.createOrReplaceTempView(VIEW_PREFIX + name)
            return
        if not reuse:
            # Read once, by the next stage (the union of the rules' findings, the check's final
            # stage): plain views. They read only checkpoints and snapshot tables, so the
            # inlined plan stays bounded.
            self.jobs.run(sql, lambda: self.spark.sql(sql).createOrReplaceTempView(VIEW_PREFIX + name))
            return
        if not (deferred or (awaited and self.small_data)):
            # A large fleet's shared transforms one at a time: each job already keeps every
            # core busy, and two at once would hold two of the partitions' shuffles in memory.
            self.jobs.run(sql, self._checkpoint, name, sql)
            return
        # Run beside the next jobs (auditor/engine/jobs.py): a rule's findings (``deferred``:
        # read only by the final stage, after ``settle``) and a shared transform (read by the
        # rules and transforms after it, which wait for it). On small data each job is mostly
        # driver work (parsing, analysis, planning) that one thread does; two overlap on two cores.
        self.jobs.submit(name, sql, self._checkpoint, name, sql, deferred=deferred)

    def _checkpoint(self, name: str, sql: str) -> None:
        # A union of many rules' views has the partitions of all its inputs (~100 for the
        # 200-cluster bench fleet, ~1,000 before the snapshot tables were cached): every later
        # action on the checkpoint would pay a task per partition. Coalescing to more
        # partitions than there are keeps them as they are. (Not `frame.rdd.getNumPartitions()`
        # first: with adaptive execution that runs the whole query once more, which was half
        # of the sample fleet's time.)
        most = 1 if ONE_PARTITION and self.small_data else max(16, 4 * self._parallelism)
        frame = self.spark.sql(sql).coalesce(most).localCheckpoint(eager=True)
        # Re-alias every column (one call): Spark 4 fails to analyse a union of two
        # checkpointed relations directly ("key not found: cluster_id#..."); a projection on
        # top is fine.
        frame.toDF(*frame.columns).createOrReplaceTempView(VIEW_PREFIX + name)

    def sql_of(self, df) -> str:
        """sqlframe's SQL with its common table expressions written as subqueries (``inline_ctes``)."""
        sql = super().sql_of(df)
        return sql if os.environ.get("KAFKA_AUDIT_SPARK_INLINE") == "0" else inline_ctes(sql)  # experiment

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
        (
            frame.where(SF.col("run_date").cast("string") == chosen)
            .select("fingerprint")
            .createOrReplaceTempView(VIEW_PREFIX + name)
        )
        return chosen

    def load(self, refs):
        # Spark finds cached data by plan: a second audit in this session (spark-submit running
        # several, a notebook, the tests) reading the same paths would get the first audit's
        # rows back, however the files changed since. Each audit starts from the files.
        self.spark.catalog.clearCache()
        self.small_data = self._partitions_estimate_of(refs) <= SMALL_DATA_PARTITIONS
        tables = super().load(refs)
        for key, (small, large) in self._sized_settings.items():
            if self.small_data or large is not None:
                self.spark.conf.set(key, small if self.small_data else large)
            else:
                self.spark.conf.unset(key)
        return tables

    def _partitions_estimate_of(self, refs) -> int:
        """How many partitions the snapshots hold, from the sizes of their partitions files as
        Spark lists them (no job): decided before any table is registered, which it shapes."""
        files = {"parquet": [], "jsonl": []}
        for ref in refs:
            if "partitions" in ref.files:
                path, kind = ref.files["partitions"]
                files[kind].append(str(path))
        ddl = spark_ddl(TABLES["partitions"])
        total = 0
        if files["parquet"]:
            total += (
                self._size_of(self.spark.read.schema(ddl).parquet(*files["parquet"]))
                // BYTES_PER_PARTITION["parquet"]
            )
        if files["jsonl"]:
            total += (
                self._size_of(self.spark.read.schema(ddl).json(files["jsonl"]))
                // BYTES_PER_PARTITION["jsonl"]
            )
        return total

    @staticmethod
    def _size_of(frame) -> int:
        """Spark's size estimate of a DataFrame read from files: their sizes, known from the
        listing (no job)."""
        plan = frame._jdf.queryExecution().optimizedPlan()
        return int(str(plan.stats().sizeInBytes()))  # a Scala BigInt, or an int from py4j

    def _register_rows(self, table: Table, rows: list[dict]) -> None:
        self._rows_frame(
            spark_ddl(table), [{c.name: r.get(c.name) for c in table.columns} for r in rows]
        ).createOrReplaceTempView(VIEW_PREFIX + table.name)

    def _rows_frame(self, ddl: str, rows: list[dict]):
        """A DataFrame of ``rows`` made in the JVM: their JSON, one literal, split into lines and
        parsed with the declared schema. Not ``createDataFrame`` of a Python list: that is a
        Python RDD, and every scan of it runs Python worker processes (pyspark.daemon, forked on
        the driver's machine or each executor's) to unpickle its rows."""
        import json

        from pyspark.sql import functions as SF

        text = "\n".join(json.dumps(row) for row in rows)
        lines = self.spark.range(1 if rows else 0).select(
            SF.explode(SF.split(SF.lit(text), "\n")).alias("line")
        )
        frame = lines.select(SF.from_json("line", ddl).alias("row")).select("row.*")
        return frame.coalesce(1) if ONE_PARTITION and self.small_data else frame

    def _register_files(self, table: Table, parquet: list[str], jsonl: list[str]) -> None:
        ddl = spark_ddl(table)
        frames = []
        if parquet:
            frames.append(("parquet", self.spark.read.schema(ddl).parquet(*parquet)))
        if jsonl:
            frames.append(("jsonl", self.spark.read.schema(ddl).option("mode", "FAILFAST").json(jsonl)))
        frames = [frame for _kind, frame in frames]
        if not frames:
            frames.append(self._rows_frame(ddl, []))
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
        if ONE_PARTITION and self.small_data:
            df = df.coalesce(1).cache()
        elif not (table.name in PER_PARTITION_TABLES and parquet and not jsonl):
            df = df.cache()
        df.createOrReplaceTempView(VIEW_PREFIX + table.name)

    def close(self) -> None:
        self.jobs.close()
        # The Spark session belongs to the process (tests and spark-submit reuse it), so it
        # keeps running; only sqlframe's process-wide active session is released.
        from sqlframe.base.session import _BaseSession

        if _BaseSession._instance is self.session:
            _BaseSession._instance = None


# Functions whose value differs between two evaluations: a CTE holding one is computed once and
# read by all its references, so writing it twice would change the result (Spark keeps such a
# CTE whole too). No check calls one; a plan that does keeps its CTEs.
NONDETERMINISTIC = frozenset({"RAND", "RANDN", "RANDOM", "UUID", "SHUFFLE", "MONOTONICALLY_INCREASING_ID"})


def inline_ctes(sql: str) -> str:
    """``sql`` (Spark SQL) with every common table expression replaced by the subquery it names.

    Why: sqlframe writes a CTE for each DataFrame operation, and Spark's analysis of a query of
    many CTEs costs far more than of the same query as nested subqueries: checking the analysed
    plan inlines every CTE again (CheckAnalysis with InlineCTE(alwaysInline)), re-deduplicating
    the relations of each one read twice. A Java Flight Recorder profile of `check` on Spark:
    17% of the driver's samples in that check alone; the catalogue's 66 rule plans in a warm
    JVM analysed in 4.8 s instead of 9.4 s and optimised in 2.4 s instead of 4.2 s, same rows
    (bench/RESULTS.md, issue 46). The optimiser inlines deterministic CTEs anyway, so the
    executed plan is the same."""
    import sqlglot
    from sqlglot import exp

    tree = sqlglot.parse_one(sql, read="spark")
    names = {
        (f.name if isinstance(f, exp.Anonymous) else f.sql_name()).upper() for f in tree.find_all(exp.Func)
    }
    if names & NONDETERMINISTIC:
        return sql
    for with_ in reversed(list(tree.find_all(exp.With))):  # the innermost first
        scope = with_.parent
        bodies: dict[str, exp.Expression] = {}
        for cte in with_.expressions:
            _replace_references(cte.this, bodies)  # a CTE reads the ones before it
            bodies[cte.alias_or_name] = cte.this
        with_.pop()
        _replace_references(scope, bodies)
    inlined = tree.sql(dialect="spark")
    # A CTE read twice is written twice (as Spark's analysis copies it anyway): a chain of such
    # CTEs would double at every step, so a plan that grows much stays as it was.
    return inlined if len(inlined) <= MAX_GROWTH * len(sql) else sql


MAX_GROWTH = 4


def _replace_references(node, bodies: dict) -> None:
    from sqlglot import exp

    if not bodies:
        return
    for table in list(node.find_all(exp.Table)):
        if table.db or table.catalog or table.name not in bodies or table.find_ancestor(exp.Hint):
            continue  # (a join hint names a relation: the subquery below keeps that name)
        named = exp.Subquery(
            this=bodies[table.name].copy(),
            alias=exp.TableAlias(this=exp.to_identifier(table.name, quoted=True)),
        )
        if table.alias and table.alias != table.name:  # both names, as a CTE read under an alias has
            named = exp.Subquery(
                this=exp.select("*").from_(named),
                alias=exp.TableAlias(this=exp.to_identifier(table.alias, quoted=True)),
            )
        table.replace(named)
