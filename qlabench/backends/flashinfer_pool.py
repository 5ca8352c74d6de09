"""FlashInfer 0.7.2's prefill into a state pool: the call a serving engine makes for chunked prefill.

An engine keeps every live sequence's recurrent state in one pool and prefills a batch of prompts (or the
next chunk of each) from the states at their slots, writing the final states back to the same slots.
FlashInfer 0.7.2.post1 takes that pool directly (flashinfer/gdn_prefill.py):

    chunk_gated_delta_rule(q, k, v, g, beta, scale, initial_state=pool, output_final_state=True,
                           cu_seqlens=cu_seqlens, output_state=pool, state_indices=slots, use_cp="auto",
                           backend="flashinfer", max_seqlen=max_seqlen)

`state_indices` [num_seqs] int32/int64 (SM90/SM100/SM103/SM120): sequence i reads its initial state from
`initial_state[state_indices[i]]` and writes its final state to `output_state[state_indices[i]]`, in place
when `output_state is initial_state`; the ids must be unique (not checked at launch), the output pool must
be passed (FlashInfer refuses to allocate one), and its CP path takes the indices too, so `use_cp` stays
FlashInfer's own choice as in `flashinfer`.

`flashinfer-pool` is `flashinfer` (same conversions, same kernels, same provenance) with the states in a
float32 pool [P, HV, V, K] of P = POOL_FACTOR x num_seqs slots: the point's h0 (zeros without one) at
random distinct slots, the other slots random states no sequence owns. Its first call returns what the
check compares: o, the final states read back from the batch's slots (`ht`), and every slot outside the
batch (`pool`), which must come back bit for bit: the prepared call carries the slots as drawn
(`untouched`), and run/point.py checks them beside the oracle's outputs at tolerance 0. Later calls (the
timed ones) only run the prefill, in place on the same slots, as an engine's next chunk would.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable

import torch

from qlabench.backends.base import Outputs
from qlabench.backends.decode import pool_rest
from qlabench.backends import flashinfer as fi_prefill
from qlabench.backends.flashinfer import FlashInfer, flashinfer_args, version_args
from qlabench.measure.inputs import GDNInputs

POOL_FACTOR = 2  # pool slots per sequence of the call (the serving suites' pool_factor default)
POOL_SEED = 0  # the slots and the states no sequence owns: the same for every point


def has_state_indices(prefill: Callable | None) -> bool:
    """Whether this FlashInfer's prefill takes a state pool through slot indices (0.7.2 added them)."""
    return prefill is not None and {"state_indices", "output_state"} <= set(inspect.signature(prefill).parameters)


def state_pool(h0: torch.Tensor, factor: int = POOL_FACTOR, seed: int = POOL_SEED) -> tuple[torch.Tensor, torch.Tensor]:
    """(pool, slots): a float32 pool [factor x N, HV, V, K] holding `h0` [N, HV, V, K] (FlashInfer's layout)
    at N distinct random slots, random states elsewhere; slots [N] int32 in their own allocation (FlashInfer's
    CuTe DSL kernels refuse an index tensor that is not 16-byte aligned)."""
    n = h0.shape[0]
    gen = torch.Generator(device=h0.device).manual_seed(seed)
    pool = torch.randn((factor * n, *h0.shape[1:]), generator=gen, device=h0.device, dtype=torch.float32)
    slots = torch.randperm(factor * n, generator=gen, device=h0.device)[:n].to(torch.int32).contiguous().clone()
    pool[slots.long()] = h0.float()
    return pool, slots


class FlashInferPool(FlashInfer):

    def available(self) -> tuple[bool, str]:
        ok, why = super().available()
        if ok and not has_state_indices(fi_prefill._import()[0]):
            return False, ("this flashinfer's chunk_gated_delta_rule has no state_indices / output_state (FlashInfer "
                           "0.7.2 has them): it cannot prefill into a state pool")
        return ok, why

    def _prepare_fwd(self, inp: GDNInputs) -> Callable[[], Outputs]:
        prefill = self._prefill()
        args = flashinfer_args(inp) | version_args(prefill, inp, self.use_cp)
        B, T, HV, V = inp.v.shape
        n, K = args["cu_seqlens"].numel() - 1, inp.q.shape[-1]
        h0 = args.pop("initial_state")
        if h0 is None:  # a new sequence: its slot holds zeros, as an engine clears a freed slot
            h0 = torch.zeros(n, HV, V, K, dtype=torch.float32, device=inp.q.device)
        pool, slots = state_pool(h0)
        batch = slots.long()
        args.update(initial_state=pool, output_state=pool, state_indices=slots)
        calls = itertools.count()

        def run() -> Outputs:
            first = next(calls) == 0
            with torch.no_grad():
                o, _ = prefill(**args)
            if not first:
                return {"o": o.view(B, T, HV, V)}
            return {"o": o.view(B, T, HV, V), "ht": pool[batch].transpose(-1, -2), "pool": pool_rest(pool, batch)}

        # the slots outside the batch as drawn, taken before any call: the check holds "pool" to them exactly
        run.untouched = {"pool": pool_rest(pool, batch).clone()}
        return run
