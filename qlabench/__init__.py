"""qlabench: benchmark and profile Gated DeltaNet (gated delta rule) kernels across backends.

The library works without the CLI: load a suite, run it, read and plot the results.

    from qlabench import load_suite, run_sweep, RunOptions, read_results

The names below are loaded on first use (PEP 562), so `import qlabench.core` stays cheap: the data
model must not pull in pandas, pyarrow or torch. The layers are described in docs/ARCHITECTURE.md.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS = {
    "QlabenchError": "qlabench.core.errors",
    "SpecError": "qlabench.core.errors",
    "StoreError": "qlabench.core.errors",
    "Point": "qlabench.core.point",
    "ResultRow": "qlabench.core.result",
    "Status": "qlabench.core.result",
    "Suite": "qlabench.core.spec",
    "load_suite": "qlabench.core.spec",
    "read_results": "qlabench.store.files",
    "run_sweep": "qlabench.run.sweep",
    "RunOptions": "qlabench.run.options",
    "InProcess": "qlabench.run.options",
    "narrow_suite": "qlabench.run.options",
}


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'qlabench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(_EXPORTS))


__all__ = sorted(_EXPORTS) + ["__version__"]
