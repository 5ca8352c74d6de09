"""The float64 reference at a point's real size, one block of value heads at a time.

Value heads are independent, so the reference runs on a block of them at a time (`chunk_gated_delta_rule_fp64`,
with autograd for the gradients) and each block's outputs can be compared and dropped before the next
one: at 128k tokens the float64 graph of one value head takes several GB, of 64 of them more than an
H200 holds. The block size comes from a memory budget (`block_heads`). A block is whole GVA groups or a
part of one group, so its q/k heads are a contiguous range; their gradients dq, dk are partial sums
(a q/k head's gradient sums over the value heads that read it) that the caller adds up across blocks.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from qlabench.backends.reference.fp64_chunk import F64, chunk_gated_delta_rule_fp64
from qlabench.measure.correctness import RelL2Sums, failure_reason
from qlabench.core.point import Point
from qlabench.measure.inputs import GDNInputs

CHUNK = 64
# The head axis of each compared tensor: o, dv, dg, dbeta are [B, T, H, ...], ht, dh0 [N, H, K, V],
# dq, dk [B, T, h_qk, K].
HEAD_DIM = {"o": 2, "ht": 1, "dq": 2, "dk": 2, "dv": 2, "dg": 2, "dbeta": 2, "dh0": 1}
QK_GRADS = ("dq", "dk")
CPU_BUDGET_BYTES = 2 * 2**30
GPU_FREE_FRACTION = 0.5  # of the free device memory, the rest left to the checked backend's tensors


@dataclass
class HeadBlock:
    """The reference's outputs for value heads `v_heads`: o, ht, dv, dg, dbeta, dh0 over those heads, and
    the partial dq, dk over q/k heads `qk_heads` (the value heads' share of them)."""

    v_heads: slice
    qk_heads: slice
    outputs: dict[str, torch.Tensor]


def bytes_per_head(tokens: int, K: int, V: int, grads: bool, chunk_size: int = CHUNK) -> int:
    """An upper estimate of the float64 working set of one value head over `tokens` (padded) tokens.

    In words per token: the in-chunk C x C matrices, the q/k/v-sized tensors and the per-chunk K x K
    transitions and K x V states; measured on CPU (tensors autograd keeps, at K = 64-256) as about
    80% of this, and the backward's transients are taken as half as much again.
    """
    C = chunk_size
    words = 6 * C + 4 * K + 4 * V + 4 * (K * K + K * V) / C
    return int(8 * tokens * words * (1.5 if grads else 1.0))


def budget_bytes(device: torch.device, reserve: int = 0) -> int:
    """How much memory the reference may use: half of what is free on CUDA (counting what torch's caching
    allocator holds unused, which it hands out again) once `reserve` more bytes are taken, 2 GiB on CPU."""
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        cached = torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device)
        return max(0, int((free + cached - reserve) * GPU_FREE_FRACTION))
    return CPU_BUDGET_BYTES


def point_head_bytes(point: Point) -> int:
    """`bytes_per_head` of a point's problem: the least the reference needs, one value head at a time."""
    tokens = sum(math.ceil(n / CHUNK) * CHUNK for n in point.seqlens)  # as _padded_tokens pads them
    return bytes_per_head(tokens, point.K, point.V, grads=point.has_backward)


def _size(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.1f} MiB"


def refusal(point: Point, device: torch.device, reserve: int = 0) -> str | None:
    """Why the reference cannot check `point` on `device`, before anything runs: one value head's working set
    over the budget (`reserve`: the point's own tensors, allocated before the reference runs). The reference
    splits the heads, never one head, so such a point would end as an allocation error after its run."""
    need, budget = point_head_bytes(point), budget_bytes(device, reserve)
    if need <= budget:
        return None
    where = "half the device's free memory after the point's own tensors" if device.type == "cuda" else "on CPU"
    grads = point.has_backward
    return (f"fp64-full reference: one value head needs about {_size(need)} ({point.total_tokens} tokens, "
            f"K={point.K}, V={point.V}{', with gradients' if grads else ''}), over its budget of {_size(budget)} "
            f"({where}); it works a value head at a time and cannot split one, so the point was not run")


def block_heads(h_qk: int, h_v: int, per_head: int, budget: int) -> int:
    """Value heads per block: as many as the budget holds (at least 1), rounded down to whole GVA groups
    when it holds a group, else to a divisor of the group size, so a block never straddles two groups
    (the last block may be smaller)."""
    group = h_v // h_qk
    fit = max(1, min(h_v, budget // max(per_head, 1)))
    if fit >= group:
        return fit // group * group
    return max(d for d in range(1, fit + 1) if group % d == 0)


def _padded_tokens(inp: GDNInputs, C: int) -> int:
    B, T = inp.v.shape[:2]
    if inp.cu_seqlens is None:
        return B * math.ceil(T / C) * C
    lens = inp.cu_seqlens.diff().tolist()
    return sum(math.ceil(n / C) * C for n in lens)


def reference_blocks(inp: GDNInputs, grads: bool, budget: int | None = None,
                     chunk_size: int = CHUNK) -> Iterator[HeadBlock]:
    """The float64 reference of `inp`, block by block of value heads (see the module's docstring).

    With `grads`, the gradients for inp.do and inp.dht (as a backward mode's check uses them) too.
    """
    h_qk, K = inp.q.shape[2:]
    h_v, V = inp.v.shape[2:]
    group = h_v // h_qk
    per_head = bytes_per_head(_padded_tokens(inp, chunk_size), K, V, grads, chunk_size)
    nb = block_heads(h_qk, h_v, per_head, budget_bytes(inp.v.device) if budget is None else budget)
    for h in range(0, h_v, nb):
        vh = slice(h, min(h + nb, h_v))
        qh = slice(h // group, (vh.stop - 1) // group + 1)
        yield HeadBlock(vh, qh, _block(inp, vh, qh, grads, chunk_size))


def _block(inp: GDNInputs, vh: slice, qh: slice, grads: bool, C: int) -> dict[str, torch.Tensor]:
    leaves = {"dq": inp.q[:, :, qh], "dk": inp.k[:, :, qh], "dv": inp.v[:, :, vh], "dg": inp.g[:, :, vh],
              "dbeta": inp.beta[:, :, vh]}
    if inp.h0 is not None:
        leaves["dh0"] = inp.h0[:, vh]
    leaves = {n: t.detach().to(F64).requires_grad_(grads) for n, t in leaves.items()}
    with torch.set_grad_enabled(grads):
        o, ht = chunk_gated_delta_rule_fp64(
            leaves["dq"], leaves["dk"], leaves["dv"], leaves["dg"], leaves["dbeta"], scale=inp.scale,
            initial_state=leaves.get("dh0"), cu_seqlens=inp.cu_seqlens, chunk_size=C,
        )
    out = {"o": o.detach(), "ht": ht.detach()}
    if grads:
        names = list(leaves)
        got = torch.autograd.grad((o, ht), [leaves[n] for n in names],
                                  (inp.do[:, :, vh].to(F64), inp.dht[:, vh].to(F64)))
        out.update(zip(names, got))
    return out


def reference_outputs(inp: GDNInputs, grads: bool, budget: int | None = None,
                      chunk_size: int = CHUNK) -> dict[str, torch.Tensor]:
    """The whole reference at once (the blocks put together): for tests and small problems."""
    full: dict[str, torch.Tensor] = {}
    for block in reference_blocks(inp, grads, budget, chunk_size):
        for name, t in block.outputs.items():
            heads = block.qk_heads if name in QK_GRADS else block.v_heads
            if name not in full:
                shape = list(t.shape)
                shape[HEAD_DIM[name]] = (inp.q if name in QK_GRADS else inp.v).shape[2]
                full[name] = t.new_zeros(shape)
            full[name].narrow(HEAD_DIM[name], heads.start, t.shape[HEAD_DIM[name]]).add_(t)
    return full


def fp64_errors(got: dict[str, torch.Tensor], inp: GDNInputs, grads: bool, dtype: str,
                budget: int | None = None) -> tuple[dict[str, float], str | None]:
    """`correctness.compare` of a backend's full-size outputs with the float64 reference, block by block.

    Each block's value-head tensors are compared as soon as it is computed and then dropped; dq and dk
    are summed over the blocks (float64, their full size) and compared at the end. A tensor of the wrong
    shape gets error inf, as in `rel_l2`.
    """
    full_heads = {"o": inp.v.shape[2], "dq": inp.q.shape[2], "dk": inp.q.shape[2]}
    sums = RelL2Sums()
    qk_sums: dict[str, torch.Tensor] = {}
    for block in reference_blocks(inp, grads, budget):
        for name, ref in block.outputs.items():
            if name not in got:
                continue
            d = HEAD_DIM[name]
            want = list(ref.shape)
            want[d] = full_heads.get(name, inp.v.shape[2])
            if list(got[name].shape) != want:
                sums.set(name, math.inf)
            elif name in QK_GRADS:
                acc = qk_sums.setdefault(name, ref.new_zeros(want))
                acc.narrow(d, block.qk_heads.start, ref.shape[d]).add_(ref)
            else:
                sums.add(name, got[name].narrow(d, block.v_heads.start, ref.shape[d]), ref)
        del block
    for name, ref in qk_sums.items():
        sums.add(name, got[name], ref)
    errors = sums.errors()
    missing = [n for n in ("o", "ht") if n not in got]
    return errors, failure_reason(errors, dtype, missing)
