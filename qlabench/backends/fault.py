"""A test backend that misbehaves on purpose, to prove a sweep survives its points.

The fault is chosen by the point's value head dim V (it is the one axis visible both to `supports`
and to the inputs `forward` receives, and it is part of the compile group, so each fault is its own
group). Any V not listed runs the exact fp32 recurrence and is `ok`.

    V   fault          what happens                                     expected row
    17  raise          RuntimeError from the kernel                     error: RuntimeError: ...
    18  nan            outputs are NaN                                  incorrect: o has NaN/Inf ...
    19  inf            outputs are +Inf                                 incorrect: o has NaN/Inf ...
    20  segfault       SIGSEGV sent to the process                      error: worker died: SIGSEGV ...
    21  abort          os.abort() (SIGABRT, as a failed C assert)       error: worker died: SIGABRT ...
    22  hang           never returns (a hung kernel)                    error: timeout ...
    23  oom            allocates until MemoryError, bounded (below)     error: MemoryError
    24  kill           SIGKILL, as the kernel's OOM killer does         error: worker died: SIGKILL
    25  unsupported    check_point says no                              skipped: unsupported: ...
    26  slow           exact, but sleeps SLOW_S per call (a long kernel) ok
    27  hang-long      hangs on sequences longer than 8 tokens, else ok  error: timeout (on the long ones)

Process-level faults (segfault, abort, hang, oom, kill) fire only inside an isolated worker
(QLABENCH_WORKER set); in-process they raise instead, so a test run without isolation is not killed.
The oom fault lowers the worker's address-space limit to its current size plus OOM_HEADROOM_BYTES
before allocating, so it never takes more than that from the machine.
"""

from __future__ import annotations

import os
import resource
import signal
import time

import torch

from qlabench.measure.inputs import GDNInputs
from qlabench.backends.reference import recurrent_gated_delta_rule
from qlabench.core.point import Point
from qlabench.backends.base import Backend

FAULT_BY_V = {
    17: "raise",
    18: "nan",
    19: "inf",
    20: "segfault",
    21: "abort",
    22: "hang",
    23: "oom",
    24: "kill",
    25: "unsupported",
    26: "slow",
    27: "hang-long",
}
PROCESS_FAULTS = frozenset({"segfault", "abort", "hang", "hang-long", "oom", "kill"})
HANG_LONG_ABOVE_TOKENS = 8
OOM_HEADROOM_BYTES = 256 << 20
SLOW_S = 0.05
WORKER_ENV = "QLABENCH_WORKER"  # set by qlabench.run.pool in every worker process


def fault_for(V: int) -> str:
    return FAULT_BY_V.get(V, "ok")


class FaultBackend(Backend):
    def check_point(self, point: Point, device: str) -> tuple[bool, str]:
        if fault_for(point.V) == "unsupported":
            return False, f"fault backend: V={point.V} is the 'unsupported' fault"
        return True, ""

    def forward(self, inp: GDNInputs) -> tuple[torch.Tensor, torch.Tensor]:
        fault = fault_for(inp.v.shape[-1])
        if fault in PROCESS_FAULTS and not os.environ.get(WORKER_ENV):
            raise RuntimeError(f"fault {fault!r} only fires inside an isolated worker")
        if fault == "raise":
            raise RuntimeError("injected fault: kernel raised")
        if fault == "segfault":
            os.kill(os.getpid(), signal.SIGSEGV)
        if fault == "abort":
            os.abort()
        if fault == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if fault == "hang-long" and inp.v.shape[1] > HANG_LONG_ABOVE_TOKENS:
            fault = "hang"
        if fault == "hang":
            while True:
                time.sleep(1)
        if fault == "oom":
            _allocate_until_memory_error()
        if fault == "slow":
            time.sleep(SLOW_S)
        o, ht = recurrent_gated_delta_rule(
            inp.q, inp.k, inp.v, inp.g, inp.beta, scale=inp.scale, initial_state=inp.h0,
            cu_seqlens=inp.cu_seqlens, compute_dtype=torch.float32,
        )
        if fault in ("nan", "inf"):
            bad = float(fault)
            o, ht = torch.full_like(o, bad), torch.full_like(ht, bad)
        return o, ht


def _vm_size_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


def _allocate_until_memory_error() -> None:
    """Raise MemoryError the way a real allocation failure does, touching at most OOM_HEADROOM_BYTES."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _vm_size_bytes() + OOM_HEADROOM_BYTES
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard))
    blocks = []
    try:
        while True:
            blocks.append(bytearray(16 << 20))
    finally:
        blocks.clear()
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
