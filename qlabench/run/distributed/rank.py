"""One rank of a launch: its process group, the collectives the worker agrees through, and its end.

`Rank` is what a rank shares across the points of one launch (NCCL on CUDA, one GPU per rank; gloo on
CPU). `fatal` ends a rank that failed inside a phase with collectives.
"""

from __future__ import annotations

import os
import sys
import traceback
from datetime import timedelta
from typing import NoReturn

import torch
import torch.distributed as dist

from qlabench.run.point import error_line, pin_cpu_threads


def fatal(rank: int, phase: str, e: BaseException) -> NoReturn:
    """End this rank at once after an exception in a phase with collectives in it.

    The first call, the gathering of the outputs and the timing run collectives (the library's, ours)
    that every rank must enter in the same order. A rank that raised there cannot agree with the
    others: they may be blocked inside a collective it will never join (NCCL waits until its
    timeout), or its next collective would be paired with a different one of theirs (mismatched
    sizes: a hang or garbage). So it prints its error and exits; torchrun then ends the other ranks
    and the launcher records the point in flight as `error` with this line (launch.last_error_line).
    """
    # This line first: the launcher reports the first exception line of the ranks' log.
    print(f"[rank{rank}]: {error_line(e)} (during {phase}; this rank exits, the launch ends)",
          file=sys.stderr, flush=True)
    traceback.print_exc(file=sys.stderr)
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(1)


class Rank:
    """Everything one rank shares across the points of a launch (a run/point.PointSession)."""

    def __init__(self, job, device_type: str):
        self.job = job  # the sweep's WorkerJob
        self.suite = job.suite
        self.run_id = job.run_id
        self.timer = job.timer  # the sweep's TimerPlan: the warm-up and sample bounds (timing.py)
        self.rank = int(os.environ["RANK"])
        self.world = int(os.environ["WORLD_SIZE"])
        self.local_rank = int(os.environ.get("LOCAL_RANK", self.rank))
        self.on_cuda = device_type == "cuda"
        if self.on_cuda:
            torch.cuda.set_device(self.local_rank)
            self.device = f"cuda:{self.local_rank}"
        else:
            self.device = "cpu"
            pin_cpu_threads(self.suite.run.cpu_threads)  # as a single-device CPU worker does
        kwargs = {"backend": "nccl" if self.on_cuda else "gloo",
                  "timeout": timedelta(seconds=max(60.0, job.compile_timeout_s))}
        if self.on_cuda:
            kwargs["device_id"] = torch.device(self.device)
        if init := os.environ.get("QLABENCH_DIST_INIT"):  # spawn.py: a FileStore, no listening rendezvous
            kwargs.update(init_method=init, rank=self.rank, world_size=self.world)
        dist.init_process_group(**kwargs)
        self.group = dist.group.WORLD
        self.groups_seen: set = set()  # compile groups measured in this launch (compile_s once each)
        self.env: dict = {}  # rank 0's environment fields for the rows (measure.env.capture)

    # -- collectives over plain Python objects ------------------------------------------------------
    def gather_all(self, obj) -> list:
        out = [None] * self.world
        dist.all_gather_object(out, obj, group=self.group)
        return out

    def agree(self, err: str | None) -> str | None:
        """The first rank's error, on every rank (None when no rank failed)."""
        errs = self.gather_all(err)
        for r, e in enumerate(errs):
            if e:
                return e if self.world == 1 else f"rank {r}: {e}"
        return None

    def from_rank0(self, obj):
        box = [obj]
        dist.broadcast_object_list(box, src=0, group=self.group)
        return box[0]

    def sync(self) -> None:
        if self.on_cuda:
            torch.cuda.synchronize()

    def barrier(self) -> None:
        dist.barrier(group=self.group)
        self.sync()

    def gather_tensor(self, t):
        """`t` of every rank, on rank 0 (a list in rank order); None elsewhere. Same shape on every rank."""
        t = t.contiguous()
        parts = [torch.empty_like(t) for _ in range(self.world)]
        dist.all_gather(parts, t, group=self.group)
        if self.rank != 0:
            del parts
            return None
        return parts

    def close(self) -> None:
        """Leave the process group together (best effort: a peer may already be gone)."""
        try:
            dist.barrier(group=self.group)
            dist.destroy_process_group()
        except Exception:
            pass
