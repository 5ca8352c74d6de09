"""Shared checks for the CUDA library backends: is CUDA here, which SM, is the package installed."""

from __future__ import annotations

import importlib.util

from qlabench.core.backend_needs import GPU_HINT as INSTALL_HINT, not_installed


def cuda_capability() -> tuple[int, int] | None:
    import torch

    if not torch.cuda.is_available():
        return None
    return torch.cuda.get_device_capability()


def package_missing(module: str, dist: str, hint: str = INSTALL_HINT) -> str | None:
    """A reason string when `module` cannot be imported because it is not installed."""
    if importlib.util.find_spec(module) is None:
        return not_installed(dist, hint)
    return None


def needs_cuda(allowed_sm: tuple[tuple[int, int], ...] | None = None) -> str | None:
    cap = cuda_capability()
    if cap is None:
        return "needs a CUDA GPU (none visible)"
    if allowed_sm is not None and cap not in allowed_sm:
        allowed = "/".join(f"SM{a}{b}" for a, b in allowed_sm)
        return f"needs CUDA {allowed}, this GPU is SM{cap[0]}{cap[1]}"
    return None
