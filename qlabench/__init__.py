"""qlabench: benchmark and profile Gated DeltaNet (gated delta rule) kernels across backends.

The library works without the CLI: load a suite, run it, read and plot the results.

    from qlabench import load_suite, run_sweep, read_results
"""

__version__ = "0.1.0"

from .errors import QlabenchError, SpecError, StoreError  # noqa: E402
from .point import Point  # noqa: E402
from .result import ResultRow, Status  # noqa: E402
from .spec import Suite, load_suite  # noqa: E402
from .store import read_results  # noqa: E402


def run_sweep(*args, **kwargs):
    """See `qlabench.runner.run_sweep` (imported lazily: it needs torch)."""
    from .runner import run_sweep as _run

    return _run(*args, **kwargs)


__all__ = ["Point", "QlabenchError", "ResultRow", "SpecError", "Status", "StoreError", "Suite",
           "load_suite", "read_results", "run_sweep", "__version__"]
