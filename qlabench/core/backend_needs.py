"""The packages a backend cannot run without, declared with it (`BackendDecl.needs`), and the one text that says
one is missing. Pure Python: whether a package is installed is `importlib.util.find_spec`, which imports nothing
of it (nor torch), so `qlabench backends` says why a library backend cannot run without loading the backend.

What needs the package imported (CUDA, the GPU's SM, the installed version's API) stays with the implementation
(backends/); it says the same text for a missing package (backends/_gpu.py: package_missing).
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass

GPU_HINT = "pip install 'qlabench[gpu]'"
FLASHINFER_HINT = "pip install 'qlabench[flashinfer]'"
# The engines' own decode kernels may come from a kernel site instead of the engine (backends/engine_decode.py).
ENGINE_SITE_ENV = "QLABENCH_ENGINE_KERNELS"
ENGINE_SITE_HINT = (f"install the engine, or build its kernel site (scripts/engine-kernels-site.sh) and set "
                    f"{ENGINE_SITE_ENV} to it (docs/SERVING.md, \"The engines' own kernels\")")


def not_installed(dist: str, hint: str) -> str:
    return f"{dist} is not installed ({hint})"


@dataclass(frozen=True)
class Package:
    """A top-level module a backend imports, the distribution that provides it and how to install it. With
    `site_env`, a folder that environment variable names may provide the module instead (an engine's kernel
    site): whether it does is the implementation's to say."""

    module: str
    dist: str
    hint: str = GPU_HINT
    site_env: str | None = None

    def missing(self) -> str | None:
        """Why a backend needing it cannot run here, when that is already known: None when it is installed,
        or when a site may provide it."""
        if self.site_env is not None and os.environ.get(self.site_env):
            return None
        if importlib.util.find_spec(self.module) is not None:
            return None
        if self.site_env is not None:
            return f"{self.module} is not installed and no kernel site provides it: {self.hint}"
        return not_installed(self.dist, self.hint)


def first_missing(needs: tuple[Package, ...]) -> str | None:
    """The reason of the first package missing, in the order declared (the order the implementation checks)."""
    return next((why for p in needs if (why := p.missing()) is not None), None)


FLA = (Package("fla", "fla-core"), Package("triton", "triton"))
FLASH_QLA = (Package("flash_qla", "flash-qla"),)
FLASHINFER = (Package("flashinfer", "flashinfer-python", FLASHINFER_HINT),)
VLLM = (Package("vllm", "vllm", ENGINE_SITE_HINT, ENGINE_SITE_ENV),)
SGLANG = (Package("sglang", "sglang", ENGINE_SITE_HINT, ENGINE_SITE_ENV),)

__all__ = ["ENGINE_SITE_ENV", "ENGINE_SITE_HINT", "FLA", "FLASHINFER", "FLASHINFER_HINT", "FLASH_QLA", "GPU_HINT",
           "Package", "SGLANG", "VLLM", "first_missing", "not_installed"]
