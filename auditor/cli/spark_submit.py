"""Entry point for spark-submit: the fleet job with Spark's own master and settings.

    spark-submit --master spark://HOST:7077 --conf spark.executor.memory=4g \\
        $(python -c 'import auditor.cli.spark_submit as m; print(m.__file__)') \\
        s3a://bucket/snapshots --out s3a://bucket/findings --previous s3a://bucket/findings

Arguments are those of `kafka-audit fleet` (the engine is always Spark, the master is the
one spark-submit was given). Only the driver needs kafka-auditor installed: the checks
compile to Spark SQL, with no Python UDFs, so executors run plain Spark.
"""

import sys
from pathlib import Path

from auditor.cli.main import main


def hadoop_version() -> str:
    """The Hadoop version inside the installed pyspark (its hadoop-client-api jar): the version the
    object-store connector (hadoop-aws) must have. Found without starting a JVM."""
    import pyspark

    jars = sorted((Path(pyspark.__file__).parent / "jars").glob("hadoop-client-api-*.jar"))
    if not jars:
        raise SystemExit("kafka-audit: no hadoop-client-api jar in this pyspark installation")
    return jars[-1].stem.removeprefix("hadoop-client-api-")


def run(argv: list[str]) -> None:
    sys.argv = ["kafka-audit", "fleet", *argv, "--engine", "spark"]
    main()


if __name__ == "__main__":
    run(sys.argv[1:])
