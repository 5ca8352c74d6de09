"""advise's default `--gpu` on a CUDA host: the GPU model NVML reports without torch is the one torch names, so
a question asked here is about the rows this machine would write (qlabench/measure/env.py: local_gpu).

Run with `pytest -m gpu` on a CUDA host; skipped elsewhere."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu


def test_the_local_gpu_is_the_one_torch_runs_on():
    from qlabench.core.gpu_names import same_gpu
    from qlabench.measure.env import local_gpu

    here = local_gpu()
    assert here is not None and same_gpu(here, torch.cuda.get_device_name(0)), (here, torch.cuda.get_device_name(0))
