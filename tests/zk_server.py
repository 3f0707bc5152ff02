"""A real Apache ZooKeeper for tests and benchmarks (see shared/TESTING.md).

Standalone server on 127.0.0.1 and a free port, started from the Debian ``zookeeper``
package jars (/usr/share/java) or, failing that, from the jars inside pyspark's package
directory. Readiness: ``srvr`` answers "Zookeeper version" (never trust ``ruok``), with a
deadline. Always stop it in a ``finally`` (the fixtures do).

``load_dump`` creates the znodes of a ZooKeeper dump (``sample_configs/sources/<cluster>/
zookeeper.json``, format in sample_configs/generate_sources.py). From the shell:

    python -m tests.zk_server sample_configs/sources/ads-zk-legacy/zookeeper.json [--zookeeper HOST:PORT]

loads it into the given ZooKeeper, or (without ``--zookeeper``) into a throwaway one started
on 127.0.0.1 that serves until Ctrl-C; it prints the ``--zookeeper`` argument to collect it.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

DEBIAN = "/usr/share/java"


def classpath() -> str | None:
    jars = [f"{DEBIAN}/zookeeper.jar", f"{DEBIAN}/zookeeper-jute.jar"]
    if all(os.path.exists(j) for j in jars):
        extra = [
            f"{DEBIAN}/{n}"
            for n in ("slf4j-api.jar", "slf4j-nop.jar", "netty-all.jar", "commons-io.jar", "commons-cli.jar")
            if os.path.exists(f"{DEBIAN}/{n}")
        ]
        return ":".join(jars + extra)
    try:
        import pyspark
    except ImportError:
        return None
    jar_dir = Path(pyspark.__file__).parent / "jars"
    names = (
        "zookeeper-[0-9]*.jar",
        "zookeeper-jute-*.jar",
        "slf4j-api-*.jar",
        "log4j-slf4j2-impl-*.jar",
        "log4j-api-*.jar",
        "log4j-core-*.jar",
        "commons-io-*.jar",
        "metrics-core-*.jar",
        "snappy-java-*.jar",
        "netty-*.jar",
    )
    found = [j for n in names for j in sorted(glob.glob(str(jar_dir / n)))]
    return ":".join(found) if any("zookeeper-jute" in j for j in found) else None


def available() -> bool:
    return shutil.which("java") is not None and classpath() is not None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def four_letter(port: int, cmd: str = "srvr", timeout: float = 1.0) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(cmd.encode())
        chunks = []
        while True:
            data = s.recv(4096)
            if not data:
                break
            chunks.append(data)
    return b"".join(chunks).decode("utf-8", "replace")


class ZkServer:
    def __init__(self, ready_timeout: float = 30.0, die_with_parent: bool = False):
        self.ready_timeout = ready_timeout
        # Run by hand (python -m tests.zk_server): the JVM must not outlive this process, even
        # when it is killed (SIGKILL runs no cleanup): Linux's parent-death signal ends it too.
        self.die_with_parent = die_with_parent
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.dir: str | None = None

    @property
    def hosts(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> ZkServer:
        cp = classpath()
        if cp is None:
            raise RuntimeError("no ZooKeeper jars (apt-get install zookeeper, or pip install pyspark)")
        self.dir = tempfile.mkdtemp(prefix="zk-test-")
        self.port = free_port()
        cfg = Path(self.dir) / "zoo.cfg"
        cfg.write_text(
            f"tickTime=2000\ndataDir={self.dir}/data\nclientPort={self.port}\nclientPortAddress=127.0.0.1\n"
            "admin.enableServer=false\n4lw.commands.whitelist=srvr,envi\nmaxClientCnxns=0\n"
        )
        self.log = open(Path(self.dir) / "zk.log", "wb")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            [
                "java",
                "-Xmx256m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-cp",
                cp,
                "-Dzookeeper.admin.enableServer=false",
                "-Dzookeeper.4lw.commands.whitelist=srvr,envi",
                "org.apache.zookeeper.server.ZooKeeperServerMain",
                str(cfg),
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            preexec_fn=_parent_death_signal if self.die_with_parent else None,
        )
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                break
            try:
                if "Zookeeper version" in four_letter(self.port):
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        tail = (Path(self.dir) / "zk.log").read_text(errors="replace")[-2000:]
        self.stop()
        raise RuntimeError(f"ZooKeeper not ready within {self.ready_timeout} s:\n{tail}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None
        if getattr(self, "log", None):
            self.log.close()
            self.log = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def kill(self) -> None:
        """SIGKILL the JVM (no goodbye on its connections) and reap it; stop() still cleans up."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def pause(self) -> None:
        """SIGSTOP the JVM: its connections stay open and nothing answers. Always resume() in a
        finally before stop() (a stopped process ignores SIGTERM until continued)."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGSTOP)

    def resume(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGCONT)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


class SilentServer:
    """A TCP server on 127.0.0.1 that accepts every connection and never sends a byte (a
    hung ZooKeeper as its clients see it). ``with SilentServer() as s: s.hosts``."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted: list[socket.socket] = []
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="silent-server", daemon=True)

    @property
    def hosts(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._done.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted.append(conn)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join(timeout=5)
        for c in self.accepted:
            c.close()
        self.sock.close()


def client(hosts: str, timeout: float = 10.0):
    from kazoo.client import KazooClient

    c = KazooClient(hosts=hosts, timeout=timeout)
    c.start(timeout=timeout)
    return c


def write_layout(zk, nodes: dict[str, bytes | str | dict | int | None], batch: int = 2000) -> None:
    """Create znodes (parents first, pipelined per depth level). dict values are JSON-encoded."""

    def enc(v):
        if v is None:
            return b""
        if isinstance(v, bytes):
            return v
        if isinstance(v, str):
            return v.encode()
        return json.dumps(v).encode()

    all_paths = set()
    for p in nodes:
        parts = p.strip("/").split("/")
        for i in range(1, len(parts) + 1):
            all_paths.add("/" + "/".join(parts[:i]))
    by_depth: dict[int, list[str]] = {}
    for p in all_paths:
        by_depth.setdefault(p.count("/"), []).append(p)
    for depth in sorted(by_depth):
        paths = sorted(by_depth[depth])
        for i in range(0, len(paths), batch):
            chunk = paths[i : i + batch]
            pending = [zk.create_async(p, enc(nodes.get(p))) for p in chunk]
            for p, r in zip(chunk, pending, strict=True):
                try:
                    r.get(timeout=30)
                except Exception as e:
                    if type(e).__name__ != "NodeExistsError":
                        raise
                    if p in nodes:
                        zk.set(p, enc(nodes[p]))


def kafka_layout(
    *,
    brokers=(1, 2, 3),
    topics: dict[str, tuple[int, int]] | None = None,
    controller=1,
    controller_epoch=7,
    racks=("az-a", "az-b", "az-c"),
    live=None,
    cluster_id: str = "Zk7estCluster0000000000",
) -> dict:
    """The znodes a ZooKeeper-mode Kafka cluster writes, healthy: every partition led by its
    first replica with a full ISR. ``topics``: name -> (partitions, replication factor)."""
    topics = topics if topics is not None else {"orders": (6, 3), "__consumer_offsets": (50, 3)}
    live = brokers if live is None else live
    nodes: dict = {
        "/admin/delete_topics": None,
        "/isr_change_notification": None,
        "/log_dir_event_notification": None,
        "/config/changes": None,
        "/config/clients": None,
        "/config/users": None,
        "/cluster/id": {"version": "1", "id": cluster_id},
    }
    for i, b in enumerate(live):
        host = f"kafka-{b}.test.internal"
        nodes[f"/brokers/ids/{b}"] = {
            "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
            "endpoints": [f"PLAINTEXT://{host}:9092"],
            "jmx_port": -1,
            "features": {},
            "host": host,
            "timestamp": "1763790000000",
            "port": 9092,
            "version": 5,
            "rack": racks[i % len(racks)] if racks else None,
        }
    nodes["/controller"] = {
        "version": 2,
        "brokerid": controller,
        "timestamp": "1763790000000",
        "kraftControllerEpoch": -1,
    }
    nodes["/controller_epoch"] = str(controller_epoch)
    bl = list(brokers)
    for ti, (t, (parts, rf)) in enumerate(sorted(topics.items())):
        assignment = {str(p): [bl[(ti + p + k) % len(bl)] for k in range(rf)] for p in range(parts)}
        nodes[f"/brokers/topics/{t}"] = {
            "partitions": assignment,
            "topic_id": f"id-{t}"[:22],
            "adding_replicas": {},
            "removing_replicas": {},
            "version": 3,
        }
        for p, reps in assignment.items():
            nodes[f"/brokers/topics/{t}/partitions/{p}/state"] = {
                "controller_epoch": controller_epoch,
                "leader": reps[0],
                "version": 1,
                "leader_epoch": 3,
                "isr": reps,
            }
    return nodes


def incident3_layout() -> dict:
    """ads-zk-legacy (DESIGN.md incident 3) as ZooKeeper holds it: broker 5 down (its
    registration gone, out of every ISR, leadership moved), __consumer_offsets-17 left at
    leader -1 by the split-brain, and ads.impressions-4 rewritten by a zombie controller
    (its controller_epoch 42 is greater than /controller_epoch 41)."""
    nodes = kafka_layout(
        brokers=(1, 2, 3, 4, 5),
        live=(1, 2, 3, 4),
        controller=2,
        controller_epoch=41,
        racks=("r1", "r2", "r3"),
        cluster_id="AdZk2x0LegacyQ5Tq3pWnA",
        topics={"__consumer_offsets": (50, 3), "ads.impressions": (24, 3), "ads.clicks": (12, 3)},
    )
    for path, value in list(nodes.items()):
        if path.endswith("/state") and 5 in value["isr"]:
            isr = [b for b in value["isr"] if b != 5]
            nodes[path] = {
                **value,
                "isr": isr,
                "leader": isr[0] if value["leader"] == 5 else value["leader"],
                "leader_epoch": value["leader_epoch"] + 1,
            }
    off17 = nodes["/brokers/topics/__consumer_offsets"]["partitions"]["17"]
    nodes["/brokers/topics/__consumer_offsets/partitions/17/state"] = {
        "controller_epoch": 41,
        "leader": -1,
        "version": 1,
        "leader_epoch": 9,
        "isr": [off17[0]],
    }
    nodes["/brokers/topics/ads.impressions/partitions/4/state"] = {
        "controller_epoch": 42,
        "leader": 5,
        "version": 1,
        "leader_epoch": 12,
        "isr": [5],
    }
    for t in ("__consumer_offsets",):
        nodes[f"/config/topics/{t}"] = {"version": 1, "config": {"cleanup.policy": "compact"}}
    return nodes


def load_dump(zk, dump, chroot: str | None = None, batch: int = 2000) -> str:
    """Create the znodes of a ZooKeeper dump (a ``zookeeper.json`` path or its parsed dict)
    under ``chroot`` (default: the dump's own, "" = the root) and give every znode listed in
    ``versions`` that data version, by rewriting its data that many times (each write
    conditional on the previous version, pipelined). Returns the chroot used."""
    if not isinstance(dump, dict):
        dump = json.loads(Path(dump).read_text())
    root = (dump.get("chroot", "") if chroot is None else chroot).rstrip("/")
    if root:
        zk.ensure_path(root)
    znodes = dump["znodes"]
    write_layout(zk, {root + p: v for p, v in znodes.items()}, batch=batch)
    writes = []  # (path, data, expected version), in version order per znode
    for p, n in sorted(dump.get("versions", {}).items()):
        data = (znodes[p] or "").encode()
        writes += [(root + p, data, v) for v in range(n)]
    for i in range(0, len(writes), batch):
        chunk = writes[i : i + batch]
        pending = [zk.set_async(p, data, version=v) for p, data, v in chunk]
        for r in pending:
            r.get(timeout=30)
    return root


def _parent_death_signal() -> None:
    """In the child, before exec: SIGTERM it when its parent dies (prctl PR_SET_PDEATHSIG, Linux)."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG


def _stop_on_signal(signum, _frame) -> None:
    raise SystemExit(128 + signum)  # unwinds through _main's finally, which stops the JVM


def _main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m tests.zk_server",
        description="Load ZooKeeper dumps (sample_configs/sources/*/zookeeper.json) into a real ZooKeeper.",
    )
    ap.add_argument("dumps", nargs="+", help="zookeeper.json files (each goes under its own chroot)")
    ap.add_argument(
        "--zookeeper",
        metavar="HOST:PORT",
        help="load into this ZooKeeper and exit (default: start one on 127.0.0.1 and serve until Ctrl-C)",
    )
    args = ap.parse_args(argv)
    # SIGTERM (kill, a CI runner's timeout) and SIGHUP (a closed terminal) stop the server as
    # Ctrl-C does; without this the JVM outlived the Python process (issue 38).
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _stop_on_signal)
    server = None if args.zookeeper else ZkServer(die_with_parent=True).start()
    hosts = args.zookeeper or server.hosts
    try:
        c = client(hosts)
        try:
            for d in args.dumps:
                print(f"{d}: --zookeeper {hosts}{load_dump(c, d)}", flush=True)
        finally:
            c.stop()
            c.close()
        if server is not None:
            print("serving; Ctrl-C stops the server", flush=True)
            try:
                server.proc.wait()
            except KeyboardInterrupt:
                pass
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
