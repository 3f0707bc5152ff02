from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_FLEET = ROOT / "sample_configs" / "fleet"
ARTIFACTS = ROOT / "test-artifacts"

os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")


def cluster_dir(name: str) -> Path:
    (match,) = SAMPLE_FLEET.glob(f"dt=*/cluster={name}")
    return match


@pytest.fixture(scope="session")
def spark_engine():
    """One local Spark session for the whole run (cold start is 5-10 s here)."""
    from auditor.engine.spark_engine import SparkEngine

    engine = SparkEngine(master="local[2]", conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "2",
                                                   "spark.driver.memory": "1g"})
    yield engine
    engine.close()
