"""Checking a distributed point: the ranks' outputs stitched on rank 0 and compared with one device.

The local outputs (o, the final state, and for fwd_bwd the gradients) are gathered to rank 0 and stitched
back into the whole stream: token-wise tensors in rank order, the final state of a sequence from the
rank holding its end, dh0 from the rank holding its start. Rank 0 then runs the backend's single-device
reference (`Backend.cp_reference`) on the full inputs, as a single-device point's full-size check does
(run.point.reference_outputs), and compares one tensor at a time (measure.correctness.compare_lean).
"""

from __future__ import annotations

import os

import torch

from qlabench.backends import Backend, get_backend
from qlabench.backends.cp.layout import owners
from qlabench.core.point import Point
from qlabench.measure.correctness import compare_lean
from qlabench.measure.inputs import GDNInputs
from qlabench.run.distributed.rank import Rank
from qlabench.run.point import reference_outputs


def gather_outputs(p: Point, rk: Rank, local_out: dict) -> dict | None:
    """Rank 0: the whole stream's outputs from every rank's local ones (None on other ranks).

    Collectives inside: every rank must call it.
    """
    first, last = owners(p.seqlens, p.cp_world_size)
    got = {}
    for name in ("o", "dq", "dk", "dv", "dg", "dbeta"):
        if name not in local_out:
            continue
        parts = rk.gather_tensor(local_out[name])
        if parts is not None:
            got[name] = torch.cat(parts, dim=1)
        del parts
    for name, where in (("ht", last), ("dh0", first)):
        if name not in local_out:
            continue
        mine = local_out[name].detach().cpu()
        every = rk.gather_all(mine)
        if rk.rank == 0:
            got[name] = torch.stack([every[r][j] for r, j in (where[n] for n in range(p.num_seqs))]).to(rk.device)
    return got if rk.rank == 0 else None


def reference_check(p: Point, backend: Backend, got: dict, full: GDNInputs) -> tuple[dict, str, str | None]:
    """Rank 0 alone: (relative errors per tensor, oracle label, failure or None) of the gathered outputs `got`
    against the backend's single-device reference on the full inputs. `got` is emptied."""
    reference = get_backend(backend.cp_reference)
    ref = reference_outputs(reference, p.mode, full, fp32=backend.cp_reference_fp32)
    os.environ.update(backend.env)  # back to the CP backend's switches for its timing
    if not backend.cp_final_state:
        ref.pop("ht", None)
    errors, failure = compare_lean(got, ref, p.dtype)
    rdt = "float32" if backend.cp_reference_fp32 else p.dtype
    oracle = f"{backend.cp_reference} {rdt} @{p.total_tokens} tokens (one device, no CP)"
    return errors, oracle, failure
