"""Distributed points: inter-card context parallelism (CP), one token stream split over several ranks.

A point with `cp_world_size` set (suites: the `cp` axis) is measured by `world_size` processes that
`torchrun` starts together (launch.py), one per GPU (NCCL) or, on CPU, over gloo. Each rank builds the
full inputs from the point's seed, takes its contiguous slice of the tokens (layout.py), builds the
backend's CP context and times its own share; rank 0 gathers outputs and per-rank times and returns the
row (worker.py). The CP backends are in backends.py. See docs/CONTEXT-PARALLEL.md.

Safety: every process started for a distributed point gets NCCL_NVLS_ENABLE=0,
TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and NVSHMEM_DISABLE_NVLS=1 (safety.SAFE_ENV): NVLink multicast
(cuMulticastCreate) must never be used on the lent hosts.

Only launch.py, layout.py and safety.py are imported by the sweep process; none imports torch at top level.
"""

from qlabench.run.distributed.safety import SAFE_ENV, safe_env

__all__ = ["SAFE_ENV", "safe_env"]
