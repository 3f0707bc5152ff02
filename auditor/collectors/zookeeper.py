"""Collector for the ZooKeeper layout a ZooKeeper-mode Kafka cluster writes (read-only).

Reads, with chroot support (``host:port[,host:port]/chroot``):

* ``/brokers/ids/N``: registrations (JSON host, port, rack, endpoints, version) -> ``brokers``
* ``/brokers/topics/T``: the replica assignment (``partitions``, ``adding_replicas``,
  ``removing_replicas``, ``topic_id``) -> ``topics`` and the replicas of ``partitions``
* ``/brokers/topics/T/partitions/P/state``: leader, leader_epoch, isr, controller_epoch ->
  ``zk_state`` (with the znode version) and leader/isr of ``partitions``
* ``/controller`` (``{"brokerid": N}``), ``/controller_epoch``, ``/admin/reassign_partitions``
  -> ``controller``
* ``/config/topics/T`` -> TOPIC_CONFIG, ``/config/brokers/N`` -> DYNAMIC_BROKER_CONFIG,
  ``/config/brokers/<default>`` -> cluster_default DYNAMIC_DEFAULT_BROKER_CONFIG (``configs``)
* ``/cluster/id``: the cluster id (``CollectResult.meta["cluster_id"]``)
* ``/log_dir_event_notification/N``: pending log directory failure events (``{"version":1,
  "broker":B,"event":1}``) -> ``log_dir_events`` (DSK001), also listed on the manifest's
  source entry

Only ``get``, ``get_children`` and ``exists`` are called (their ``_async`` forms), in
pipelined batches: one round trip per batch of znodes, not per znode. A znode holding
garbage is reported as a source error and skipped; a lost connection ends the collection
with a source error, keeping only the tables whose reads completed.

Deadlines (``timeout`` = ``--timeout``, seconds). Every wait on kazoo is bounded whatever
state its connection is in (server killed, frozen, silent, kazoo's connection thread gone):

* connecting: the session must be established within ``timeout`` (``start_async`` and a
  bounded wait; kazoo's own ``start()`` is not used: its chroot check waits without a bound);
* sending a batch: the requests are handed to kazoo in a helper thread joined with a bound
  (kazoo wakes its connection thread through a blocking socket that nobody drains once
  that thread is gone or stuck reconnecting: a pipelined batch would block there forever);
* every answer: ``timeout`` at most, and never past the overall deadline;
* the whole read: an overall deadline of ``max(MIN_DEADLINE, DEADLINE_FACTOR * timeout)``
  (60 s, 30x: 300 s at the default 10 s timeout, 10-25 times what 100,000 partitions took
  in bench/RESULTS.md; ``collect_zookeeper(deadline=...)`` overrides it), checked with
  ``time.monotonic`` before each batch and bounding each wait;
* stopping the client: ``stop()``/``close()`` run in a daemon thread joined for at most
  ``STOP_WAIT`` seconds (they block when the connection thread is gone); a client that does
  not stop is abandoned (its sockets are closed when kazoo allows it, its exit hook removed).

Whichever bound hits ends the source with one error naming what was being read (the stage
and the znode), keeping the tables whose reads completed; the CLI then exits 3. The longest
a failing source can take is thus about ``timeout`` (connect) + the overall deadline +
``STOP_WAIT``; a server killed, frozen or silent ends it within about ``timeout + STOP_WAIT``
of the fault (tests/test_zk_deadlines.py, at ``--timeout 2``: killed mid-batch 0.5-2.4 s,
frozen 3.1 s, silent 2.2 s). auditor.collectors.collect guards the source from outside too.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
import time
from collections import Counter
from dataclasses import dataclass

from auditor.collectors._common import DEFAULT_TIMEOUT, Collector, CollectResult, config_row, one_line

SOURCE = "zookeeper"
DEFAULT_BATCH = 1000
DEADLINE_FACTOR = 30  # the whole read: DEADLINE_FACTOR * timeout ...
MIN_DEADLINE = 60.0  # ... but never less than this (seconds)
STOP_WAIT = 2.0  # seconds given to kazoo's stop()/close() before the client is abandoned
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
READ_METHODS = frozenset({"get", "get_children", "exists", "get_async", "get_children_async", "exists_async"})

log = logging.getLogger(__name__)
log.addHandler(
    logging.NullHandler()
)  # kazoo's reconnect chatter never reaches stderr by itself; errors are rows


class ZkAbort(Exception):
    """The ZooKeeper source failed as a whole (connection lost, timeout)."""


@dataclass
class _Op:
    kind: str  # get | children | exists
    path: str


class _Reader:
    """Pipelined reads: issue a batch of async requests, then wait for each; every wait is
    bounded by ``timeout`` and by the overall deadline (``deadline_at``, time.monotonic)."""

    def __init__(self, client, timeout: float, batch: int, deadline: float | None = None):
        self.client = client
        self.timeout = timeout
        self.batch = max(1, batch)
        self.deadline = overall_deadline(timeout) if deadline is None else deadline
        self.deadline_at = time.monotonic() + self.deadline
        self.round_trips = 0
        self.reads = 0
        self.denied: list[str] = []

    def _left(self) -> float:
        return self.deadline_at - time.monotonic()

    def _conn(self) -> str:
        state = getattr(self.client, "state", None)
        return f" (connection {str(state).lower()})" if state and str(state) != "CONNECTED" else ""

    def _past_deadline(self, what: str, path: str, done: int, total: int) -> ZkAbort:
        return ZkAbort(
            f"{what}: {path}: collection deadline of {self.deadline:g} s passed "
            f"({done} of {total} read){self._conn()}"
        )

    def run(self, ops: list[_Op], what: str = "znodes") -> list:
        """Results in order: (data, stat) for get, list for children, stat|None for exists;
        None for a missing znode. ``what``: the stage, named in errors. Raises ZkAbort when
        the connection fails or a deadline passes."""
        from kazoo.exceptions import NoAuthError, NoNodeError

        out: list = []
        for i in range(0, len(ops), self.batch):
            chunk = ops[i : i + self.batch]
            if self._left() <= 0:
                raise self._past_deadline(what, chunk[0].path, i, len(ops))
            pending = self._issue_batch(chunk, what, i, len(ops))
            self.round_trips += 1
            self.reads += len(chunk)
            for j, (op, res) in enumerate(zip(chunk, pending, strict=True)):
                left = self._left()
                try:
                    out.append(res.get(timeout=max(0.0, min(self.timeout, left))))
                except NoNodeError:
                    out.append(None)
                except NoAuthError:  # an ACL hides this znode: report it, read the rest
                    self.denied.append(op.path)
                    out.append(None)
                except Exception as e:  # ConnectionLoss, SessionExpired, timeouts
                    name = type(e).__name__
                    if "Timeout" in name:
                        if left < self.timeout:
                            raise self._past_deadline(what, op.path, i + j, len(ops)) from None
                        raise ZkAbort(
                            f"{what}: {op.path}: no answer within {self.timeout:g} s{self._conn()}"
                        ) from None
                    raise ZkAbort(f"{what}: {op.path}: {name} {one_line(e, 200)}".strip()) from None
        return out

    def _issue_batch(self, chunk: list[_Op], what: str, done: int, total: int) -> list:
        """Hand a batch to kazoo from a helper thread, joined with a bound: each request
        writes a byte to kazoo's wake-up socket, which blocks for good once kazoo's connection
        thread is gone or stuck (e.g. reconnecting to a server that was just killed)."""
        pending: list = []
        failed: list[BaseException] = []

        def issue():
            try:
                for op in chunk:
                    pending.append(self._issue(op))
            except BaseException as e:  # noqa: BLE001 (re-raised below as a source error)
                failed.append(e)

        wait = max(0.0, min(self.timeout, self._left()))
        t = threading.Thread(target=issue, name="zk-issue", daemon=True)
        t.start()
        t.join(wait)
        if failed:
            e = failed[0]
            raise ZkAbort(f"{what}: request failed: {type(e).__name__}: {one_line(e, 200)}")
        if t.is_alive():
            path = chunk[min(len(pending), len(chunk) - 1)].path
            if self._left() <= 0:
                raise self._past_deadline(what, path, done, total)
            raise ZkAbort(
                f"{what}: {path}: kazoo could not take the request within {wait:g} s "
                f"({len(pending)} of {len(chunk)} of the batch sent){self._conn()}"
            )
        return pending

    def _issue(self, op: _Op):
        if op.kind == "get":
            return self.client.get_async(op.path)
        if op.kind == "children":
            return self.client.get_children_async(op.path)
        if op.kind == "exists":
            return self.client.exists_async(op.path)
        raise ValueError(op.kind)


def _json(data, path: str, result: CollectResult, target: str, *, want=dict):
    """Decode a znode's JSON; garbage is reported (one source error) and None returned."""
    if data is None:
        return None
    try:
        value = json.loads(data.decode("utf-8") if isinstance(data, bytes | bytearray) else data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, TypeError) as e:
        result.error(
            SOURCE, target, f"{path}: not valid JSON ({one_line(getattr(e, 'msg', e), 120)}); skipped"
        )
        return None
    if want is not None and not isinstance(value, want):
        result.error(
            SOURCE, target, f"{path}: expected a JSON {want.__name__}, got {type(value).__name__}; skipped"
        )
        return None
    return value


def _int(v) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int) and -(2**31) <= v < 2**31:
        return v
    if isinstance(v, str) and v.strip().lstrip("-").isascii() and v.strip().lstrip("-").isdigit():
        return _int(int(v))
    return None


def _int_list(v) -> list[int] | None:
    if not isinstance(v, list):
        return None
    out = [_int(x) for x in v]
    return None if any(x is None for x in out) else out


def _endpoint(ep: str) -> tuple[str | None, int | None]:
    # "SASL_SSL://b-1.example:9096", "[::1]:9092"
    rest = ep.split("://", 1)[-1]
    host, _, port = rest.rpartition(":")
    return (host.strip("[]") or None), _int(port)


def split_hosts(hosts: str) -> tuple[str, str]:
    """("h1:2181,h2:2181", "/chroot" or "")"""
    slash = hosts.find("/")
    if slash < 0:
        return hosts, ""
    return hosts[:slash], hosts[slash:].rstrip("/")


def overall_deadline(timeout: float) -> float:
    """Seconds the whole ZooKeeper read may take: ``max(MIN_DEADLINE, DEADLINE_FACTOR * timeout)``."""
    return max(MIN_DEADLINE, DEADLINE_FACTOR * timeout)


def source_bound(timeout: float, deadline: float | None = None) -> float:
    """The longest :func:`collect_zookeeper` can take (connect + overall read deadline +
    stopping the client), for a caller that guards it from outside."""
    return timeout + (overall_deadline(timeout) if deadline is None else deadline) + STOP_WAIT


def collect_zookeeper(
    hosts: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    batch: int = DEFAULT_BATCH,
    client=None,
    deadline: float | None = None,
) -> CollectResult:
    """Collect a snapshot from ZooKeeper. ``client``: an already started KazooClient (tests,
    benchmarks); otherwise one is started (read-only) and stopped here. ``deadline``: seconds
    the reads may take in all (default :func:`overall_deadline` of ``timeout``)."""
    result = CollectResult()
    target = hosts
    own = client is None
    status = "error"
    extra: dict = {}
    try:
        if own:
            client = _start_client(hosts, timeout)
        reader = _Reader(client, timeout, batch, deadline)
        try:
            _collect(reader, result, target, extra)
        finally:
            if reader.denied:
                more = f" and {len(reader.denied) - 3} more" if len(reader.denied) > 3 else ""
                result.error(
                    SOURCE,
                    target,
                    f"not authorized to read {', '.join(reader.denied[:3])}{more} (ZooKeeper ACL); skipped",
                )
        extra.update(round_trips=reader.round_trips, znodes=reader.reads)
        status = "error" if result.errors else "ok"
    except ZkAbort as e:
        result.error(SOURCE, target, f"{target}: {e}")
    except Exception as e:  # never let one source crash the collection
        result.error(SOURCE, target, f"{target}: {type(e).__name__}: {one_line(e, 300)}")
    finally:
        if own and client is not None:
            _stop_client(client)
    result.sources.append({"source": SOURCE, "target": target, "status": status, **extra})
    return result


def _in_thread(fn, seconds: float, name: str) -> tuple[bool, object, BaseException | None]:
    """Run ``fn`` in a daemon thread for at most ``seconds``: (finished, value, error)."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001 (handed back to the caller)
            box["error"] = e

    t = threading.Thread(target=run, name=name, daemon=True)
    t.start()
    t.join(max(0.0, seconds))
    if t.is_alive():
        return False, None, None
    return True, box.get("value"), box.get("error")


def _start_client(hosts: str, timeout: float):
    from kazoo.client import KazooClient
    from kazoo.retry import KazooRetry

    servers, _chroot = split_hosts(hosts)
    if not servers:
        raise ZkAbort("no ZooKeeper host given (expected HOST:PORT[,HOST:PORT][/chroot])")
    client = KazooClient(
        hosts=hosts,
        timeout=timeout,
        read_only=True,
        connection_retry=KazooRetry(max_tries=2, delay=0.2, max_delay=1.0, ignore_expire=False),
        command_retry=None,
        logger=log,
    )
    # Not client.start(): after connecting it checks the chroot with a get() that has no
    # timeout, and on failure it calls stop() unbounded. A missing chroot shows as a missing
    # /brokers (checked first thing).
    t0 = time.monotonic()
    done, event, err = _in_thread(client.start_async, timeout, "zk-start")
    if done and err is None:
        event.wait(max(0.0, timeout - (time.monotonic() - t0)))
    if not (done and err is None and client.connected):
        _stop_client(client)
        why = type(err).__name__ if err is not None else f"connection {str(client.state).lower()}"
        raise ZkAbort(f"cannot connect within {timeout:g} s ({why})") from None
    return client


def _stop_client(client, wait: float | None = None) -> bool:
    """Stop and close the client, waiting at most ``wait`` (default STOP_WAIT) seconds. Both
    block for good when kazoo's connection thread is gone (stop() writes to its wake-up
    socket, which nobody drains any more): once that thread has ended, the sockets are
    closed under the blocked writer (which wakes it). A client that still does not stop in
    time is abandoned, and kazoo's exit hook removed (it would join the same threads at
    interpreter exit). True when it stopped."""
    wait = STOP_WAIT if wait is None else wait
    t0 = time.monotonic()

    def stop():
        try:
            client.stop()
        finally:
            client.close()

    t = threading.Thread(target=_quiet(stop), name="zk-stop", daemon=True)
    t.start()
    t.join(min(0.2, wait))
    if t.is_alive():
        _close_if_dead(client)
        t.join(max(0.0, wait - (time.monotonic() - t0)))
    if not t.is_alive():
        return True
    try:
        atexit.unregister(client.handler.stop)
    except Exception:  # noqa: BLE001
        pass
    log.warning("ZooKeeper client did not stop within %s s; abandoned", wait)
    return False


def _quiet(fn):
    def run():
        try:
            fn()
        except Exception:  # noqa: BLE001 (closing a dead connection must not mask the real error)
            pass

    return run


def _close_if_dead(client) -> None:
    """Close kazoo's wake-up sockets if its connection thread has ended (kazoo internals,
    touched only to free a thread blocked writing to them)."""
    try:
        conn = client._connection
        if conn.connection_stopped.is_set():
            conn.close()
    except Exception:  # noqa: BLE001
        pass


def _collect(reader: _Reader, result: CollectResult, target: str, extra: dict) -> None:
    """Three pipelined stages: the roots; the registrations, assignments, configs and
    notifications they list; the partition states the assignments name."""
    # Stage A: the roots.
    (
        brokers_root,
        ids,
        topics,
        controller,
        controller_epoch,
        reassign,
        cfg_topics,
        cfg_brokers,
        logdir_events,
        cluster_id,
    ) = reader.run(
        what="the root znodes",
        ops=[
            _Op("exists", "/brokers"),
            _Op("children", "/brokers/ids"),
            _Op("children", "/brokers/topics"),
            _Op("get", "/controller"),
            _Op("get", "/controller_epoch"),
            _Op("exists", "/admin/reassign_partitions"),
            _Op("children", "/config/topics"),
            _Op("children", "/config/brokers"),
            _Op("children", "/log_dir_event_notification"),
            _Op("get", "/cluster/id"),
        ],
    )
    if brokers_root is None:
        raise ZkAbort("no /brokers znode: not a Kafka ZooKeeper (wrong chroot?)")
    cid = _json(cluster_id[0], "/cluster/id", result, target) if cluster_id and cluster_id[0] else None
    if cid and isinstance(cid.get("id"), str) and cid["id"]:
        result.meta["cluster_id"] = cid["id"]
    ids = sorted(ids or [], key=lambda s: (len(s), s))
    topics = sorted(topics or [])
    cfg_topics = sorted(cfg_topics or [])
    cfg_brokers = sorted(cfg_brokers or [])
    logdir_events = sorted(logdir_events or [])

    # Stage B: registrations, assignments, configs, notifications.
    ops = (
        [_Op("get", f"/brokers/ids/{b}") for b in ids]
        + [_Op("get", f"/brokers/topics/{t}") for t in topics]
        + [_Op("get", f"/config/topics/{t}") for t in cfg_topics]
        + [_Op("get", f"/config/brokers/{b}") for b in cfg_brokers]
        + [_Op("get", f"/log_dir_event_notification/{n}") for n in logdir_events]
    )
    res = iter(reader.run(ops, "registrations, assignments and configs"))
    registrations = {b: next(res) for b in ids}
    assignments = {t: next(res) for t in topics}
    topic_cfgs = {t: next(res) for t in cfg_topics}
    broker_cfgs = {b: next(res) for b in cfg_brokers}
    events = {n: next(res) for n in logdir_events}

    live = _registered_brokers(registrations, result, target)
    replicas_of, moving = _assigned_topics(assignments, result, target)
    _dynamic_configs(topic_cfgs, broker_cfgs, result, target)
    _log_dir_events(events, result, target, extra)
    _controller(controller, controller_epoch, reassign, result, target)

    # Stage C: the partition states.
    _partition_states(reader, replicas_of, moving, live, result, target)


def _registered_brokers(registrations: dict, result: CollectResult, target: str) -> set[int]:
    """``brokers`` rows from /brokers/ids/N; the ids registered (live)."""
    live: set[int] = set()
    for b, got in registrations.items():
        path = f"/brokers/ids/{b}"
        bid = _int(b)
        if got is None:
            continue  # the broker went away between the listing and the read
        if bid is None:
            result.error(SOURCE, target, f"{path}: broker id is not an integer; skipped")
            continue
        reg = _json(got[0], path, result, target)
        if reg is None:
            continue
        live.add(bid)
        host, port = reg.get("host"), _int(reg.get("port"))
        endpoints = reg.get("endpoints") if isinstance(reg.get("endpoints"), list) else []
        if (not host or port is None or port < 0) and endpoints and isinstance(endpoints[0], str):
            host, port = _endpoint(endpoints[0])
        result.rows("brokers").append(
            {
                "broker_id": bid,
                "host": host if isinstance(host, str) else None,
                "port": port if port is not None and port >= 0 else None,
                "rack": reg.get("rack") if isinstance(reg.get("rack"), str) else None,
                "cores": None,
                "log_dirs": None,
                "version": None,
            }
        )
    return live


def _assigned_topics(assignments: dict, result: CollectResult, target: str):
    """``topics`` rows from /brokers/topics/T; each partition's replicas and the replicas being
    added or removed by a reassignment."""
    replicas_of: dict[tuple[str, int], list[int]] = {}
    moving: dict[tuple[str, int], tuple[list[int], list[int]]] = {}
    for t, got in assignments.items():
        path = f"/brokers/topics/{t}"
        if got is None:
            continue
        doc = _json(got[0], path, result, target)
        parts = doc.get("partitions") if doc else None
        if doc is not None and not isinstance(parts, dict):
            result.error(SOURCE, target, f"{path}: no 'partitions' object; skipped")
            continue
        if doc is None:
            continue
        assignment = {}
        for p, reps in parts.items():
            pi, rl = _int(p), _int_list(reps)
            if pi is None or rl is None:
                result.error(SOURCE, target, f"{path}: partition {p!r}: malformed replica list; skipped")
                continue
            assignment[pi] = rl
        adding = doc.get("adding_replicas") if isinstance(doc.get("adding_replicas"), dict) else {}
        removing = doc.get("removing_replicas") if isinstance(doc.get("removing_replicas"), dict) else {}
        for pi, rl in assignment.items():
            replicas_of[(t, pi)] = rl
            moving[(t, pi)] = (_int_list(adding.get(str(pi))) or [], _int_list(removing.get(str(pi))) or [])
        rf = Counter(len(r) for r in assignment.values()).most_common(1)
        result.rows("topics").append(
            {
                "topic": t,
                "partitions": len(assignment),
                "replication_factor": rf[0][0] if rf else None,
                "is_internal": t in INTERNAL_TOPICS,
                "topic_id": doc.get("topic_id") if isinstance(doc.get("topic_id"), str) else None,
            }
        )
    return replicas_of, moving


def _dynamic_configs(topic_cfgs: dict, broker_cfgs: dict, result: CollectResult, target: str) -> None:
    """The dynamic overrides ZooKeeper holds: per topic, per broker, and the cluster default."""
    for t, got in topic_cfgs.items():
        _configs(got, f"/config/topics/{t}", "topic", t, "TOPIC_CONFIG", result, target)
    for b, got in broker_cfgs.items():
        if b == "<default>":
            _configs(
                got,
                f"/config/brokers/{b}",
                "cluster_default",
                "",
                "DYNAMIC_DEFAULT_BROKER_CONFIG",
                result,
                target,
            )
        else:
            _configs(got, f"/config/brokers/{b}", "broker", b, "DYNAMIC_BROKER_CONFIG", result, target)


def _log_dir_events(events: dict, result: CollectResult, target: str, extra: dict) -> None:
    """Pending /log_dir_event_notification entries: a broker reported a failed log dir."""
    failed_dirs = set()
    for n, got in events.items():
        ev = _json(got[0], f"/log_dir_event_notification/{n}", result, target) if got else None
        broker = _int(ev.get("broker")) if ev else None
        if broker is not None:
            failed_dirs.add(broker)
            result.rows("log_dir_events").append(
                {"broker_id": broker, "event": n, "event_type": _int(ev.get("event"))}
            )
    if failed_dirs:
        extra["log_dir_event_brokers"] = sorted(failed_dirs)


def _controller(controller, controller_epoch, reassign, result: CollectResult, target: str) -> None:
    """The ``controller`` row: /controller's broker id, /controller_epoch, a pending reassignment."""
    ctl = _json(controller[0], "/controller", result, target) if controller else None
    epoch_text = (
        controller_epoch[0].decode("utf-8", "replace").strip()
        if controller_epoch and controller_epoch[0]
        else None
    )
    epoch = _int(epoch_text) if epoch_text is not None else None
    if epoch_text is not None and epoch is None:
        result.error(SOURCE, target, f"/controller_epoch: {epoch_text[:40]!r} is not an integer; skipped")
    ctl_id = _int(ctl.get("brokerid")) if ctl else None
    result.rows("controller").append(
        {
            "mode": "zookeeper",
            "controller_id": ctl_id if ctl_id is not None else -1,
            "controller_epoch": epoch,
            "voters": [],
            "reassignment_pending": reassign is not None,
        }
    )


def _partition_states(
    reader: _Reader, replicas_of: dict, moving: dict, live: set[int], result: CollectResult, target: str
) -> None:
    """``zk_state`` and ``partitions`` rows from each /brokers/topics/T/partitions/P/state."""
    keys = sorted(replicas_of)
    states = reader.run(
        [_Op("get", f"/brokers/topics/{t}/partitions/{p}/state") for t, p in keys], "partition states"
    )
    for (t, p), got in zip(keys, states, strict=True):
        path = f"/brokers/topics/{t}/partitions/{p}/state"
        replicas = replicas_of[(t, p)]
        state = _json(got[0], path, result, target) if got else None
        leader = leader_epoch = isr = None
        if state is not None:
            leader, leader_epoch, isr = (
                _int(state.get("leader")),
                _int(state.get("leader_epoch")),
                _int_list(state.get("isr")),
            )
            if leader is None or isr is None:
                result.error(SOURCE, target, f"{path}: malformed state (leader/isr); skipped")
                state = None
        if state is not None:
            result.rows("zk_state").append(
                {
                    "topic": t,
                    "partition": p,
                    "leader": leader,
                    "leader_epoch": leader_epoch,
                    "isr": isr,
                    "controller_epoch": _int(state.get("controller_epoch")),
                    "zk_version": got[1].version,
                }
            )
        adding, removing = moving[(t, p)]
        result.rows("partitions").append(
            {
                "topic": t,
                "partition": p,
                "leader": leader if state is not None else -1,
                "leader_epoch": leader_epoch,
                "replicas": replicas,
                "isr": isr if state is not None else [],
                "offline_replicas": [r for r in replicas if r not in live],
                "adding_replicas": adding,
                "removing_replicas": removing,
            }
        )


def _configs(got, path, entity_type, entity_name, source, result, target) -> None:
    if got is None:
        return
    doc = _json(got[0], path, result, target)
    if doc is None:
        return
    cfg = doc.get("config", {})
    if not isinstance(cfg, dict):
        result.error(SOURCE, target, f"{path}: 'config' is not an object; skipped")
        return
    for key, value in sorted(cfg.items()):
        result.rows("configs").append(
            config_row(
                entity_type,
                entity_name,
                str(key),
                value if isinstance(value, str) or value is None else json.dumps(value),
                source,
            )
        )


COLLECTOR = Collector(
    name="zookeeper",
    wanted=lambda ctx: bool(ctx.sources.zookeeper),
    target=lambda ctx: ctx.sources.zookeeper,
    collect=lambda ctx: collect_zookeeper(ctx.sources.zookeeper, timeout=ctx.sources.timeout),
)
