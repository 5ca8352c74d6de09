"""The local executor: one worker subprocess per visible GPU of this machine, each pinned to its GPU.

Each slot's worker gets `CUDA_VISIBLE_DEVICES=<its GPU>` and measures on "cuda:0" inside, so a kernel
can never touch another worker's GPU, and an idle slot takes the next whole compile group (kernels
compile once per worker that needs them; see workers.WorkerPool). With one GPU, an explicit
"cuda:N", or on CPU there is exactly one slot on the suite's device: the single-worker sweep of
before. GPUs are counted with torch.cuda.device_count (the call resolve_device already makes; it
creates no CUDA context), so the workers are the only processes that hold one.
"""

from __future__ import annotations

import os

from qlabench.core.errors import QlabenchError
from qlabench.run.job import WorkerJob
from qlabench.run.pool import Slot, WorkerPool

VISIBLE_ENV = "CUDA_VISIBLE_DEVICES"


def visible_gpus() -> list[str]:
    """The GPU ids this process may use, as CUDA_VISIBLE_DEVICES would name them to a child.

    With CUDA_VISIBLE_DEVICES set, its entries (indices, UUIDs or MIG ids) in order; otherwise
    "0".."n-1" for the n GPUs the driver reports. An empty list on a machine without CUDA.
    """
    import torch

    n = torch.cuda.device_count()
    listed = os.environ.get(VISIBLE_ENV)
    if listed is not None:
        ids = [s.strip() for s in listed.split(",") if s.strip()]
        return ids[:n]
    return [str(i) for i in range(n)]


def local_slots(device: str, gpus: int | None = None) -> list[Slot]:
    """Worker slots for a sweep on `device`: one per visible GPU for "cuda", else one on `device`.

    gpus: use at most this many of the visible GPUs (the first ones); default all of them.
    """
    if gpus is not None and gpus < 1:
        raise QlabenchError(f"--gpus must be at least 1, got {gpus}")
    if device != "cuda":  # "cpu" or an explicit "cuda:N": the caller picked one device
        return [Slot(device)]
    ids = visible_gpus()
    if gpus is not None:
        if gpus > len(ids):
            raise QlabenchError(f"--gpus {gpus} asked for, but {len(ids)} GPU(s) are visible here")
        ids = ids[:gpus]
    if len(ids) <= 1:
        return [Slot(device)]  # one GPU: no pinning, exactly the single-worker sweep
    return [Slot("cuda:0", env={VISIBLE_ENV: gid}, name=f"gpu{gid}") for gid in ids]


def local_executor(job: WorkerJob, device: str, env: dict | None = None, *, gpus: int | None = None) -> WorkerPool:
    """A WorkerPool over `local_slots(device, gpus)`; `env` (the driver's) is unused here."""
    return WorkerPool(job, local_slots(device, gpus))
