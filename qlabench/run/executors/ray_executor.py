"""The Ray executor: compile groups spread over the GPUs of a Ray cluster, one or many nodes.

Each Ray actor holds one GPU (`num_gpus=1`; Ray sets its CUDA_VISIBLE_DEVICES, so it measures on
"cuda:0") and, like a local slot, takes a whole compile group at a time. Inside the actor the points
run in the usual worker subprocess (workers.WorkerPool with one slot), not in the actor itself: a
segfault, abort or hang costs its row and a fresh worker exactly as in a local sweep, and the actor,
which holds the GPU reservation, survives it. The driver sends one point per actor call, so every
row comes back as soon as it is measured and is written by the sweep's sink (the same atomic part
files as a local sweep); a Ray failure never reaches the store.

A lost actor (its process or its node died) costs only the point it had in flight: that point gets
an `error` row (`ray worker lost: ...`), which `--resume` measures again since it is not ok; the rest
of the actor's compile group moves to a fresh actor, which Ray places wherever the resource is free.
Ray's own retries are off (max_restarts=0, max_task_retries=0) so that no point is measured twice.

The driver needs no GPU of its own for scheduling, but the sweep resolves the device and captures
the environment fingerprint (for --resume) in the driver process: run the driver on a node with the
cluster's GPU model (e.g. the head node). qlabench must be installed, at the same version, on every
node. Requires `pip install 'qlabench[ray]'`.
"""

from __future__ import annotations

import collections
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from qlabench.core.errors import QlabenchError
from qlabench.core.point import Point
from qlabench.core.result import ENV_FIELDS, ResultRow
from qlabench.run.job import RowSink, WorkerJob, point_to_dict, unmeasured_row
from qlabench.run.pool import take_next

# Slack on top of the worker's own limits before the driver gives up on an actor call: the worker
# enforces the real limits; this only catches an actor that stopped answering altogether.
CALL_SLACK_S = 60.0


def _import_ray():
    try:
        import ray
    except ImportError:
        raise QlabenchError("the ray executor needs Ray: pip install 'qlabench[ray]'") from None
    return ray


def default_resources(device: str) -> dict[str, float]:
    """What one actor holds: a GPU for CUDA suites, a CPU core for CPU suites."""
    return {"GPU": 1.0} if device.startswith("cuda") else {"CPU": 1.0}


def actor_options(resources: dict[str, float]) -> dict:
    """Ray actor options for `resources` ({"GPU": 1}, {"CPU": 1}, or custom names like {"gpu_slot": 1})."""
    opts: dict = {"max_restarts": 0, "max_task_retries": 0}
    custom = {k: v for k, v in resources.items() if k not in ("GPU", "CPU")}
    if "GPU" in resources:
        opts["num_gpus"] = resources["GPU"]
    if "CPU" in resources:
        opts["num_cpus"] = resources["CPU"]
    if custom:
        opts["resources"] = custom
    return opts


def cluster_slots(cluster: dict[str, float], resources: dict[str, float]) -> int:
    """How many actors holding `resources` the cluster fits at once."""
    fits = [int(cluster.get(name, 0.0) // amount) for name, amount in resources.items() if amount > 0]
    return min(fits) if fits else 0


class _PointRunner:
    """The actor body: a one-slot WorkerPool on this actor's device, kept across calls."""

    def __init__(self, job: WorkerJob, device: str):
        from qlabench.run.pool import Slot, WorkerPool

        self.pool = WorkerPool(job, [Slot(device, name="ray")])

    def where(self) -> dict:
        import socket

        return {"host": socket.gethostname(), "pid": os.getpid()}

    def measure(self, point: dict) -> dict:
        class _One:
            row: ResultRow | None = None

            def started(self, p: Point) -> None:
                pass

            def done(self, p: Point, r: ResultRow) -> None:
                self.row = r

        sink = _One()
        self.pool.run([[Point(**point)]], sink, lambda: False)
        return sink.row.as_dict()

    def close(self) -> None:
        self.pool.close()


@dataclass
class _ActorSlot:
    actor: object | None = None
    queue: collections.deque = field(default_factory=collections.deque)
    current: Point | None = None
    ref: object | None = None
    deadline: float = 0.0
    where: object | None = None  # ref to the actor's host and pid, asked for when it is created
    env: dict | None = None  # environment fields of the last row this slot returned


class RayExecutor:
    """Runs compile groups on Ray actors (see the module doc). One actor per free resource unit."""

    def __init__(self, job: WorkerJob, device: str, env: dict, *, address: str | None = None,
                 resources: dict[str, float] | None = None, max_workers: int | None = None,
                 multi_node: bool = False):
        self.ray = _import_ray()
        self.job = job
        self.env = env  # the driver's: used for a lost point when its actor never returned a row
        # Inside an actor Ray has set CUDA_VISIBLE_DEVICES to the GPU it holds.
        self.device = "cuda:0" if device.startswith("cuda") else device
        self.resources = resources or default_resources(device)
        address = address or os.environ.get("RAY_ADDRESS")
        self._owns_ray = not self.ray.is_initialized()
        self._reaper = None
        if self._owns_ray:
            from qlabench.run.reaper import children_of, start_reaper

            before = children_of(os.getpid())
            self.ray.init(**ray_init_kwargs(address, multi_node))
            # A local cluster's GCS and raylet are ours: killed with the driver even by kill -9.
            self._reaper = start_reaper(children_of(os.getpid()) - before) if address is None else None
        n = cluster_slots(self.ray.cluster_resources(), self.resources)
        if n < 1:
            raise QlabenchError(f"the Ray cluster has no room for one worker holding {self.resources} "
                                f"(cluster: {self.ray.cluster_resources()})")
        self.n_slots = n if max_workers is None else min(n, max_workers)
        self._actor_cls = self.ray.remote(**actor_options(self.resources))(_PointRunner)
        self.slots: list[_ActorSlot] = []
        self.workers_started = 0
        self.actors_lost = 0

    # -- scheduling -----------------------------------------------------------------------------
    def run(self, groups: Sequence[Sequence[Point]], sink: RowSink, should_stop: Callable[[], bool]) -> None:
        pending = collections.deque(list(g) for g in groups if g)
        self.slots = [_ActorSlot() for _ in range(min(self.n_slots, len(pending)))]
        limit_s = self.job.start_timeout_s + self.job.compile_timeout_s + CALL_SLACK_S
        while True:
            for st in self.slots:
                if st.current is None:
                    p = take_next(st, pending, should_stop)
                    if p is not None:
                        self._begin(st, p, sink, limit_s)
            busy = [st for st in self.slots if st.current is not None]
            if not busy:
                return
            timeout = max(0.0, min(st.deadline for st in busy) - time.monotonic())
            ready, _ = self.ray.wait([st.ref for st in busy], num_returns=1, timeout=timeout)
            ready_ids = {r.hex() for r in ready}
            for st in busy:
                if st.ref.hex() in ready_ids:
                    self._collect(st, sink)
                elif time.monotonic() >= st.deadline:
                    self._lose(st, f"ray worker lost: no answer within {limit_s:g}s; actor killed", sink)

    def _begin(self, st: _ActorSlot, p: Point, sink: RowSink, limit_s: float) -> None:
        sink.started(p)
        st.current = p
        if st.actor is None:
            st.actor = self._actor_cls.remote(self.job, self.device)
            st.where = st.actor.where.remote()  # answered before the first point: calls run in order
            self.workers_started += 1
        st.ref = st.actor.measure.remote(point_to_dict(p))
        st.deadline = time.monotonic() + limit_s

    def _collect(self, st: _ActorSlot, sink: RowSink) -> None:
        try:
            payload = self.ray.get(st.ref)
        except self.ray.exceptions.RayError as e:
            first = (str(e).strip().splitlines() or [""])[0]
            self._lose(st, f"ray worker lost: {type(e).__name__}: {first}", sink)
            return
        row = ResultRow(**payload)
        st.env = {k: payload[k] for k in ENV_FIELDS}
        p, st.current, st.ref = st.current, None, None
        sink.done(p, row)

    def _lose(self, st: _ActorSlot, reason: str, sink: RowSink) -> None:
        """The actor died or hung: its in-flight point gets an error row; a fresh actor takes the rest."""
        self.actors_lost += 1
        env = st.env or self.env
        row = unmeasured_row(st.current, self.job, env, reason)
        self._drop_actor(st)
        p, st.current, st.ref = st.current, None, None
        sink.done(p, row)

    def _drop_actor(self, st: _ActorSlot) -> None:
        if st.actor is not None:
            try:
                self.ray.kill(st.actor, no_restart=True)
            except self.ray.exceptions.RayError:  # already gone with its node: nothing left to kill
                pass
            st.actor = None
            st.where = None

    def actor_pids(self) -> list[int | None]:
        """Process ids of the live actors, one per slot (None for a slot without one); for tests."""
        return [self.ray.get(st.where)["pid"] if st.actor is not None else None for st in self.slots]

    def close(self) -> None:
        closing = [st.actor.close.remote() for st in self.slots if st.actor is not None]
        if closing:
            try:
                self.ray.get(closing, timeout=30)
            except self.ray.exceptions.RayError:  # one that cannot close cleanly (or in time) is killed below
                pass
        for st in self.slots:
            self._drop_actor(st)
        if self._owns_ray:
            from qlabench.run.reaper import stop_reaper

            self.ray.shutdown()
            stop_reaper(self._reaper)


def ray_executor(job: WorkerJob, device: str, env: dict, *, address: str | None = None,
                 resources: dict[str, float] | None = None, max_workers: int | None = None,
                 multi_node: bool = False) -> RayExecutor:
    return RayExecutor(job, device, env, address=address, resources=resources, max_workers=max_workers,
                       multi_node=multi_node)


_LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1", "[::1]")


def ray_init_kwargs(address: str | None, multi_node: bool = False) -> dict:
    """`ray.init` arguments. No address: a fresh local Ray whose node IP is 127.0.0.1, so its GCS, raylet
    and actors serve on loopback and nothing else can join. An address on another machine joins a
    cluster across the network: only with `multi_node` (the CLI's --multi-node; docs/SCALE-OUT.md)."""
    base = {"include_dashboard": False, "log_to_driver": False}
    if address is None:
        return {**base, "_node_ip_address": "127.0.0.1"}
    host = address.split("://", 1)[-1].rsplit(":", 1)[0] if address not in ("auto", "local") else "127.0.0.1"
    if host not in _LOCAL_HOSTS and not multi_node:
        raise QlabenchError(f"Ray address {address!r} is another machine: joining a cluster across the network "
                            "needs --multi-node (see docs/SCALE-OUT.md for what it exposes)")
    return {**base, "address": address}
