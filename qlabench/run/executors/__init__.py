"""Where a sweep's points run: the GPUs of this machine, a Ray cluster, or one shard of a batch job.

- `local_executor`: one worker subprocess per visible GPU (the default; one worker on CPU).
- `ray_executor.ray_executor`: compile groups on Ray actors holding one GPU each (`pip install 'qlabench[ray]'`).
- `shard_points`: the deterministic, cost-balanced share I of N of a suite's points, for SLURM
  array and Kubernetes indexed jobs; `qlabench merge` puts the shards back together.
- `executor_factory`: a sweep's `RunOptions.executor` for an executor named on the command line.
See docs/SCALE-OUT.md. Ray is imported only by ray_executor.py, an optional extra.
"""

from __future__ import annotations

import functools

from qlabench.core.errors import ConfigError
from qlabench.run.executors.local import local_executor, local_slots, visible_gpus
from qlabench.run.executors.shard import Shard, parse_shard, point_cost, shard_points

EXECUTORS = ("local", "ray")


def executor_factory(kind: str, *, ray_address: str | None = None, gpus: int | None = None, isolate: bool = True,
                     multi_node: bool = False):
    """RunOptions.executor for executor `kind` (local or ray); None keeps the default (local, all GPUs)."""
    if kind == "local":
        return None if gpus is None else functools.partial(local_executor, gpus=gpus)
    if kind == "ray":
        if not isolate:
            raise ConfigError("--executor ray runs points in worker subprocesses; drop --no-isolate")
        import os

        from qlabench.run.executors.ray_executor import ray_executor, ray_init_kwargs

        ray_init_kwargs(ray_address or os.environ.get("RAY_ADDRESS"), multi_node)  # refused here, before any work
        return functools.partial(ray_executor, address=ray_address, max_workers=gpus, multi_node=multi_node)
    raise ConfigError(f"--executor {kind!r}: expected {' or '.join(EXECUTORS)}")


__all__ = ["EXECUTORS", "Shard", "executor_factory", "local_executor", "local_slots", "parse_shard", "point_cost",
           "shard_points", "visible_gpus"]
