"""Distributed points: inter-card context parallelism (CP), one token stream split over several ranks.

A point with `cp_world_size` set (suites: the `cp` axis) is measured by `world_size` processes that
`torchrun` starts together (launch.py), one per GPU (NCCL) or, on CPU, over gloo. Each rank (worker.py,
rank.py) builds the full inputs from the point's seed, takes its contiguous slice of the tokens
(local.py, by backends/cp/layout.py), builds the backend's CP context and times its own share
(timing.py); rank 0 gathers the outputs, checks them (check.py) and the per-rank times and returns the
row (point.py). Backends declare what they run distributed (`Backend.cp_modes`, the one registry in
qlabench.backends; backends/cp/). See docs/CONTEXT-PARALLEL.md.

Safety: every process started for a distributed point gets NCCL_NVLS_ENABLE=0,
TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and NVSHMEM_DISABLE_NVLS=1 (safety.SAFE_ENV): NVLink multicast
(cuMulticastCreate) must never be used on the lent hosts.

Only launch.py and safety.py are imported by the sweep process; neither imports torch at top level.
"""

from qlabench.run.distributed.safety import SAFE_ENV, safe_env

__all__ = ["SAFE_ENV", "safe_env"]
