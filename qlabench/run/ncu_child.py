"""The child process that Nsight Compute profiles (`qlabench _ncu-child`): one point, one call.

The parent side (command line, parsing, `sm_active_pct`) is `qlabench.measure.probes.ncu`; this half
needs a backend, so it sits in the run layer.
"""

from __future__ import annotations

from qlabench.core.errors import QlabenchError
from qlabench.core.point import Point


def run_child(point: Point, device: str = "cuda") -> None:
    """The child's work: prepare the point, warm up once, then profile exactly one call."""
    import torch

    from qlabench.backends import runnable_backend
    from qlabench.measure.inputs import make_inputs

    if torch.device(device).type != "cuda" or not torch.cuda.is_available():
        raise QlabenchError(f"the ncu child needs a CUDA device, got {device!r}")
    backend = runnable_backend(point, device)
    fn = backend.prepare_point(point, make_inputs(point, device))
    fn()  # compile / autotune outside the profiled region
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    fn()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
