"""Serving steps (modes decode and mtp): B sequences advance by T tokens against states kept in a pool.

Serving engines (vLLM, SGLang) keep every live sequence's recurrent state in one pool tensor and hand a
kernel the slot index of each sequence in the batch; the kernel reads those states and writes them back
in place. A serving backend mixes `ServingSteps` into its Backend and implements `step(args, pool,
slots)`: advance the batch whose states are pool[slots], in place, and return o [B, T, HV, V]. What an
engine would convert once, not per step (its gate space, token-major views), goes in `convert`, which
runs outside the timed call.

The prepared call:
- works on its own copy of the point's pool (made once), so every prepared point starts from the same
  states;
- its first call runs the batch at slots[0] and returns what the check compares: o, the final states of
  the batch (`ht`, float32 [B, HV, K, V] whatever the pool's dtype and layout) and every slot outside
  the batch (`pool`, which must come back bit for bit: tolerance 0);
- later calls (the timed ones) only step, rotating through the R disjoint slot sets of `inp.slots`, so a
  CUDA graph of n calls cycles through the pool (captured call i uses rotation i mod R) and a batch's
  states are not re-read from L2 where the pool is larger than L2. `point_details` records whether the
  whole rotation fits in L2 (then the time may be L2's, not HBM's).

The oracle (naive-recurrent) goes through `Backend`'s generic serving path: the fp32 recurrence from
`inp.h0`, which is pool[slots[0]] in float32, and the pool outside the batch as drawn.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, ClassVar

import torch

from qlabench.core.point import STATE_DTYPES, STATE_LAYOUTS, Point
from qlabench.measure.inputs import GDNInputs, canonical_states


def pool_rest(pool: torch.Tensor, batch_slots: torch.Tensor) -> torch.Tensor:
    """The pool's slots outside `batch_slots`, in slot order (what a step must leave untouched)."""
    keep = torch.ones(pool.shape[0], dtype=torch.bool, device=pool.device)
    keep[batch_slots.long()] = False
    return pool[keep]


def untouched_pool(inp: GDNInputs) -> dict[str, torch.Tensor]:
    """What a step of `inp`'s first batch must leave as drawn: the check's `pool` output, held bit for bit
    (tolerance 0) by every reference a serving point is checked against, the oracle's and fp64-full's."""
    return {"pool": pool_rest(inp.pool, inp.slots[0])}


class ServingSteps:
    """Mixin for a Backend with a slot-indexed serving step (see the module docstring)."""

    state_layouts: ClassVar[tuple[str, ...]] = STATE_LAYOUTS  # the pool layouts `step` takes
    state_dtypes: ClassVar[tuple[str, ...]] = STATE_DTYPES
    max_tokens_per_step: ClassVar[int] = 16  # T per sequence the kernel accepts
    slot_dtype: ClassVar[torch.dtype] = torch.int32  # the index dtype `step` is handed
    # Slots before the point's pool that no sequence owns: vLLM's kernels read slot 0 as "no state"
    # (NULL_BLOCK_ID) and skip it, so an engine never gives it out. `step` gets the engine's pool (these slots,
    # then the point's pool, then `scratch_slots`) and `kernel_slots`' indices into it; the check reads the
    # point's pool only.
    lead_slots: ClassVar[int] = 0

    def check_point(self, point: Point, device: str) -> tuple[bool, str]:
        if point.is_serving:
            if point.state_layout not in self.state_layouts:
                return False, (f"{self.name} keeps states as {'/'.join(self.state_layouts)}, not "
                               f"{point.state_layout} (state_layout)")
            if point.state_dtype not in self.state_dtypes:
                return False, f"{self.name} has no {point.state_dtype} state (has: {', '.join(self.state_dtypes)})"
            if point.tokens_per_seq > self.max_tokens_per_step:
                return False, (f"{self.name} steps at most {self.max_tokens_per_step} tokens per sequence, "
                               f"got {point.tokens_per_seq}")
        return super().check_point(point, device)

    def convert(self, inp: GDNInputs) -> Any:
        """The inputs as the kernel takes them, made once outside the timed call (default: as they are)."""
        return inp

    def step(self, args: Any, pool: torch.Tensor, slots: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def scratch_slots(self, batch: int, tokens: int) -> int:
        """Slots after the point's pool the step may write and nothing reads back (vLLM's verify stores every
        draft token's state in a slot of its own): not part of the check."""
        return 0

    def kernel_slots(self, slots: torch.Tensor, scratch_start: int, tokens: int) -> torch.Tensor:
        """The index tensor `step` hands the kernel for one rotation, made once outside the timed call: the
        rotation's slots in the engine's pool (shifted past `lead_slots`), in `slot_dtype`, in its own
        allocation, as an engine's index tensor is (a row of inp.slots starts i * B * 4 bytes into one tensor,
        and FlashInfer's CuTe DSL kernels refuse one that is not 16-byte aligned: "Misaligned Tensor data" at
        B = 1 on the H200)."""
        return (slots.long() + self.lead_slots).to(self.slot_dtype).contiguous().clone()

    def _prepare_serving(self, inp: GDNInputs) -> Callable[[], dict]:
        args = self.convert(inp)
        P, (B, T) = inp.pool.shape[0], inp.q.shape[:2]
        extra = self.scratch_slots(B, T)
        if self.lead_slots or extra:
            engine_pool = inp.pool.new_zeros(self.lead_slots + P + extra, *inp.pool.shape[1:])
            engine_pool[self.lead_slots:self.lead_slots + P] = inp.pool
        else:
            engine_pool = inp.pool.clone()
        pool = engine_pool[self.lead_slots:self.lead_slots + P]  # the point's pool, as the check reads it
        rotations = [r.long() for r in inp.slots]
        kernel_rotations = [self.kernel_slots(r, self.lead_slots + P, T) for r in inp.slots]
        layout = inp.state_layout
        calls = itertools.count()

        def run() -> dict:
            i = next(calls)
            r = i % len(rotations)
            with torch.no_grad():
                o = self.step(args, engine_pool, kernel_rotations[r])
            if i:
                return {"o": o}
            slots = rotations[r]
            return {"o": o, "ht": canonical_states(pool[slots], layout), "pool": pool_rest(pool, slots)}

        # read by point_details: the bytes of state one cycle through the rotations touches
        run.rotations = len(rotations)
        run.rotation_bytes = len(rotations) * len(rotations[0]) * pool[0].numel() * pool.element_size()
        return run

    def point_details(self, fn, kernels, kernel_dur_us, median_ms, time_ms) -> dict:
        details = super().point_details(fn, kernels, kernel_dur_us, median_ms, time_ms)
        rotations = getattr(fn, "rotations", None)
        if rotations is None:
            return details
        details.update(pool_rotations=rotations, rotation_bytes=fn.rotation_bytes)
        if torch.cuda.is_available():
            l2 = getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 0)
            # The states one cycle of the timed loop touches fit in L2: the step may read them from L2,
            # so its time (and its fraction of HBM bandwidth) is not HBM's. Size the pool up to avoid it.
            details.update(l2_bytes=int(l2), l2_resident=bool(l2) and fn.rotation_bytes <= l2)
        return details
