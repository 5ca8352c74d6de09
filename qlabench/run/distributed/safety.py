"""Environment every distributed process gets: NVLink multicast (NVLS) off, everywhere, always.

NCCL's NVLS algorithms, torch's symmetric-memory multicast and NVSHMEM's NVLS all create multicast
objects (cuMulticastCreate); on the lent multi-GPU hosts that must never happen. These three variables
are set in the environment of every process qlabench starts (torchrun, its ranks, single-GPU workers)
and again by each rank before torch is imported. They are forced, not defaulted: a caller's
NCCL_NVLS_ENABLE=1 is overridden.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

SAFE_ENV: dict[str, str] = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}


def safe_env(base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """A child environment: `base` (default os.environ), then `extra`, then SAFE_ENV on top."""
    env = dict(os.environ if base is None else base)
    env.update(extra)
    env.update(SAFE_ENV)
    return env


def apply_to_this_process() -> None:
    """Force SAFE_ENV into os.environ (a rank calls this before importing torch)."""
    os.environ.update(SAFE_ENV)


def missing(env: Mapping[str, str] | None = None) -> list[str]:
    """Names of SAFE_ENV variables absent from, or different in, `env` (default os.environ)."""
    env = os.environ if env is None else env
    return [k for k, v in SAFE_ENV.items() if env.get(k) != v]
