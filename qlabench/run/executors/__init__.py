"""Where a sweep's points run: the GPUs of this machine, a Ray cluster, or one shard of a batch job.

- `local_executor`: one worker subprocess per visible GPU (the default; one worker on CPU).
- `ray_executor.ray_executor`: compile groups on Ray actors holding one GPU each (`pip install 'qlabench[ray]'`).
- `shard_points`: the deterministic, cost-balanced share I of N of a suite's points, for SLURM
  array and Kubernetes indexed jobs; `qlabench merge` puts the shards back together.
See docs/SCALE-OUT.md. Ray is imported only by ray_executor.py, an optional extra.
"""

from qlabench.run.executors.local import local_executor, local_slots, visible_gpus
from qlabench.run.executors.shard import Shard, parse_shard, point_cost, shard_points

__all__ = ["Shard", "local_executor", "local_slots", "parse_shard", "point_cost", "shard_points", "visible_gpus"]
