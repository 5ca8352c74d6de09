"""The modes a point can time, in one table: what one timed call is, whether it runs the forward and the
backward, whether it is a serving step, and so which FLOP and byte model counts its work. The point's
validation, the run's check (which gradients to compare), the FLOP/byte models, the backends and the
views read it instead of comparing mode strings.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mode:
    name: str
    times: str  # what one timed call is
    forward: bool  # the call runs the chunked forward (its FLOPs and bytes count; core/flops.py)
    backward: bool  # the call runs a backward: its gradients are checked, its FLOPs and bytes count
    serving: bool = False  # a decode/mtp step against a slot-indexed state pool

    @property
    def work_model(self) -> str:
        """Which model counts the call's work: 'chunked' (core/flops.py: the chunked algorithm, forward and
        backward) or 'step' (core/bytes_model.py: a step of the token recurrence against a state pool)."""
        return "step" if self.serving else "chunked"


MODE_TABLE: tuple[Mode, ...] = (
    Mode("fwd", "the forward", forward=True, backward=False),
    Mode("bwd", "the backward alone, handed only the forward's outputs (FlashQLA's published table)",
         forward=False, backward=True),
    Mode("fwd_bwd", "the forward and the backward as one call", forward=True, backward=True),
    Mode("bwd_train", "the backward as autograd runs it in training (the forward's context handed over)",
         forward=False, backward=True),
    # A serving step is a step of the token recurrence, not the chunked algorithm: its work is counted by
    # core/bytes_model.py (`work_model`), so the chunked forward's FLOPs and bytes do not apply.
    Mode("decode", "one token per sequence against the state pool", forward=False, backward=False, serving=True),
    Mode("mtp", "a few tokens per sequence (multi-token verify) against the state pool", forward=False,
         backward=False, serving=True),
)
BY_NAME = {m.name: m for m in MODE_TABLE}
MODES = tuple(m.name for m in MODE_TABLE)
SERVING_MODES = tuple(m.name for m in MODE_TABLE if m.serving)
BACKWARD_MODES = tuple(m.name for m in MODE_TABLE if m.backward)
FORWARD_MODES = tuple(m.name for m in MODE_TABLE if m.forward)


def mode_of(name: str) -> Mode:
    """The table's entry for a mode name (KeyError for an unknown one; core/point.py validates first)."""
    return BY_NAME[name]
