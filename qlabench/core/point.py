"""One point of a sweep: a backend, a mode and the problem it runs. Pure Python, no torch.

A point is immutable and validated on construction. Its `workload_key` leaves out the backend, so
rows of different backends on the same problem can be matched for speedups and comparisons.

A point with `cp_world_size` set is *distributed*: one sequence stream split over that many ranks by
inter-card context parallelism (`cp_mode`; see docs/CONTEXT-PARALLEL.md). It runs through
qlabench/run/distributed/, not a single-device worker.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from qlabench.core import identity
from qlabench.core.errors import PointError
from qlabench.core.identity import GATE_PARAMS, gate_label
from qlabench.core.modes import MODES, SERVING_MODES, mode_of
from qlabench.core.tolerances import tolerance_dtype

# The modes and what each times: core/modes.py (bwd: the backward kernels alone, as FlashQLA's published
# table times them; bwd_train: the backward as autograd runs it in a training step; see backends/base.py).
# Serving modes: a step of B sequences against their recurrent states, which live in a pool of `pool` slots
# addressed by slot indices as serving engines keep them (docs/SERVING.md). decode: one token per
# sequence; mtp: multi-token verify (speculative decoding), T = 2..MTP_MAX_T tokens per sequence.
MTP_MAX_T = 16
STATE_DTYPES = ("float32", "bfloat16")
# The pool's per-slot state layout: [HV, K, V] (FLA's, FlashQLA's) or [HV, V, K] (FlashInfer's).
STATE_LAYOUTS = ("kv", "vk")
# beta: None is sigmoid(randn) (centred on 0.5); "low" puts it near 0 (the delta rule barely writes, long
# memory), "high" near 1 (each token overwrites its key's slot): the numerics' extremes.
BETA_REGIMES = ("low", "high")
DTYPES = ("float64", "float32", "bfloat16", "float16")
GATES = ("flashqla", "fla", "strong")
# The `flashqla` gate profile (FlashQLA's benchmark): g = logsigmoid(randn) / GATE_SCALE, then
# h_v - ceil((1 - GATE_ZERO_FRAC) * h_v) random value heads get g = 0. A point's `gate_zero_frac` and
# `gate_scale` override these; None means these defaults.
FLASHQLA_GATE_ZERO_FRAC = 0.25
FLASHQLA_GATE_SCALE = 16.0
LAYOUTS = ("dense", "varlen")
# Inter-card context parallel modes: FlashQLA inter / inter+intra ("dual"), FLA's own CP ("fla-cp").
CP_MODES = ("inter", "dual", "fla-cp")


def gva_error(h_qk: int, h_v: int) -> str | None:
    """The grouped value attention (GVA) rule: value head i reads q/k head i // (h_v // h_qk), so h_qk
    must divide h_v. None when the pair obeys it, else why not. The one copy of the rule: points,
    suites and backends all ask here."""
    if h_v % h_qk:
        return f"h_v={h_v} is not a multiple of h_qk={h_qk}"
    return None


@dataclass(frozen=True)
class Point:
    """One point; its fields are the identity's axes (core/identity.py), which say how it is keyed."""

    backend: str
    mode: str
    layout: str
    batch: int
    seqlens: tuple[int, ...]
    h_qk: int
    h_v: int
    K: int = 128
    V: int = 128
    dtype: str = "bfloat16"
    gate: str = "flashqla"
    # flashqla gate profile only: fraction of value heads with g = 0, and the divisor of
    # logsigmoid(randn). None (and a value equal to the default, which is stored as None) means the
    # profile's default, so the same problem always has one key.
    gate_zero_frac: float | None = None
    gate_scale: float | None = None
    seed: int = 0
    initial_state: bool = True
    model: str | None = None
    tp: int | None = None
    cp_world_size: int | None = None  # ranks of inter-card context parallelism; None: one device
    cp_mode: str | None = None  # one of CP_MODES when cp_world_size is set
    # Serving points only (modes decode, mtp): the state pool's dtype, layout and number of slots.
    state_dtype: str | None = None
    state_layout: str | None = None
    pool: int | None = None
    beta_regime: str | None = None  # None: sigmoid(randn); else one of BETA_REGIMES
    # The SMs the point may use (a CUDA green context of that many SMs, measure/sm_budget.py); None: the whole GPU.
    sm_budget: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "seqlens", tuple(int(s) for s in self.seqlens))
        # (field, problem): the field says which axis of a suite made the point (core/spec.py names it)
        problems = _gate_param_problems(self)
        if not problems:
            for name, default in (("gate_zero_frac", FLASHQLA_GATE_ZERO_FRAC), ("gate_scale", FLASHQLA_GATE_SCALE)):
                v = getattr(self, name)
                object.__setattr__(self, name, None if v is None or float(v) == default else float(v))
        for name, allowed in (("mode", MODES), ("dtype", DTYPES), ("gate", GATES), ("layout", LAYOUTS)):
            if getattr(self, name) not in allowed:
                problems.append((name, f"{name} {getattr(self, name)!r} not in {allowed}"))
        if not self.seqlens or min(self.seqlens) < 1:
            problems.append(("seqlens", "seqlens must be a non-empty list of positive lengths"))
        if self.layout == "dense" and len(self.seqlens) != self.batch:
            problems.append(("batch", "dense layout: one length per batch element"))
        if self.layout == "dense" and len(set(self.seqlens)) > 1:
            problems.append(("seqlens", "dense layout: all sequences have one length"))
        if self.layout == "varlen" and self.batch != 1:
            problems.append(("batch", "varlen layout packs its sequences into batch 1"))
        if min(self.h_qk, self.h_v, self.K, self.V) < 1:
            problems.append(("h_v", "head counts and dims must be positive"))
        elif gva := gva_error(self.h_qk, self.h_v):
            problems.append(("h_v", gva))
        if (self.cp_world_size is None) != (self.cp_mode is None):
            problems.append(("cp_mode", "cp_world_size and cp_mode go together (both set, or neither)"))
        elif self.cp_world_size is not None:
            if isinstance(self.cp_world_size, bool) or not isinstance(self.cp_world_size, int) \
                    or self.cp_world_size < 2:
                problems.append(("cp_world_size", f"cp_world_size must be an integer >= 2, got {self.cp_world_size!r}"))
            if self.cp_mode not in CP_MODES:
                problems.append(("cp_mode", f"cp_mode {self.cp_mode!r} not in {CP_MODES}"))
        problems += _serving_problems(self)
        if self.beta_regime is not None and self.beta_regime not in BETA_REGIMES:
            problems.append(("beta_regime", f"beta_regime {self.beta_regime!r} not in {BETA_REGIMES} (or null: "
                                            "sigmoid(randn))"))
        if self.sm_budget is not None:
            if isinstance(self.sm_budget, bool) or not isinstance(self.sm_budget, int) or self.sm_budget < 1:
                problems.append(("sm_budget", f"sm_budget must be a positive number of SMs (or null: the whole "
                                              f"GPU), got {self.sm_budget!r}"))
            elif self.cp_world_size is not None:
                problems.append(("sm_budget", "an SM budget holds one device's points; a distributed (cp) point runs "
                                              "on whole GPUs"))
        if problems:
            raise PointError("invalid point: " + "; ".join(m for _, m in problems), problems=problems)

    # -- derived ------------------------------------------------------------------------------
    @property
    def gva_error(self) -> str | None:
        """`gva_error(h_qk, h_v)` for this point's heads (None for any point that passed validation)."""
        return gva_error(self.h_qk, self.h_v)

    @property
    def total_tokens(self) -> int:
        return sum(self.seqlens)

    @property
    def num_seqs(self) -> int:
        return len(self.seqlens)

    @property
    def seq_len(self) -> int:
        """Length of the padded time axis: T for dense, the packed total for varlen."""
        return self.seqlens[0] if self.layout == "dense" else self.total_tokens

    @property
    def is_serving(self) -> bool:
        """A decode or multi-token-verify step against a state pool (SERVING_MODES)."""
        return mode_of(self.mode).serving

    @property
    def has_backward(self) -> bool:
        """The timed call runs a backward: its gradients are checked (core/modes.py)."""
        return mode_of(self.mode).backward

    @property
    def tolerance_dtype(self) -> str:
        """The dtype whose tolerances the check applies (measure/correctness.py): the input dtype, or a
        serving point's state dtype where that is the less precise (a bfloat16 pool rounds every step's state)."""
        return tolerance_dtype(self.dtype, self.state_dtype if self.is_serving else None)

    @property
    def tokens_per_seq(self) -> int:
        """T of each sequence of a dense point (a serving step's tokens per sequence)."""
        return self.seqlens[0]

    @property
    def distributed(self) -> bool:
        """True for a context-parallel point (several ranks); it runs through qlabench/run/distributed/."""
        return self.cp_world_size is not None

    @property
    def cp_label(self) -> str:
        return identity.cp_label(self.cp_world_size, self.cp_mode)

    def cp_problem(self) -> str | None:
        """Why this distributed point cannot run at all (whatever the backend), or None.

        Inter-card CP splits one batch-1 token stream into `cp_world_size` equal contiguous slices.
        """
        if not self.distributed:
            return None
        if self.batch != 1:
            return f"context parallelism needs batch 1 (one token stream), got batch {self.batch}"
        if self.total_tokens % self.cp_world_size:
            return (f"context parallelism needs total tokens divisible by the world size: "
                    f"{self.total_tokens} % {self.cp_world_size} != 0")
        return None

    def gate_params_effective(self) -> dict[str, float | None]:
        """gate_zero_frac and gate_scale with the profile's defaults filled in (None for other profiles)."""
        return gate_params_effective(self.gate, self.gate_zero_frac, self.gate_scale)

    @property
    def gate_label(self) -> str:
        return gate_label(self.gate, self.gate_zero_frac, self.gate_scale)

    @property
    def heads_label(self) -> str:
        return identity.heads_label(self.h_qk, self.h_v, self.model, self.tp)

    @property
    def layout_label(self) -> str:
        return identity.layout_label(self.layout, self.batch, self.seqlens)

    @property
    def compile_group(self) -> tuple:
        """Points sharing this key reuse the same compiled kernels (JIT is per head config); backend first."""
        return identity.values(self, identity.kernel_axes())

    def workload_key(self) -> tuple:
        return identity.values(self, identity.workload_axes())

    def key(self) -> tuple:
        return identity.values(self, identity.key_axes())

    @classmethod
    def from_row(cls, row, clean=lambda v: v) -> Point:
        """The point a result row measured: a ResultRow or a mapping of its columns; `clean` normalises
        each value (store/keys.key_value for values read through pandas)."""
        get = row.get if isinstance(row, Mapping) else (lambda a: getattr(row, a))
        return cls(**{a: clean(get(a)) for a in identity.key_axes()})

    def with_(self, **changes) -> Point:
        d = asdict(self)
        d.update(changes)
        return type(self)(**d)

    def label(self) -> str:
        backend = identity.backend_label(self.backend, self.cp_world_size, self.cp_mode)
        out = f"{backend} {self.mode} {self.heads_label} {self.layout_label} {self.dtype} gate={self.gate_label}"
        if self.beta_regime:
            out += f" beta={self.beta_regime}"
        if self.is_serving:
            out += " " + identity.state_label(self.state_dtype, self.state_layout, self.pool)
        if self.sm_budget is not None:
            out += " " + identity.budget_label(self.sm_budget)
        return out


def _serving_problems(p: Point) -> list[tuple[str, str]]:
    """(field, problem) for a serving point's shape and pool, or for serving fields on a prefill point."""
    fields = {"state_dtype": p.state_dtype, "state_layout": p.state_layout, "pool": p.pool}
    if p.mode not in SERVING_MODES:
        given = [k for k, v in fields.items() if v is not None]
        return [(given[0], f"{', '.join(given)} appl{'y' if len(given) > 1 else 'ies'} to serving modes "
                 f"({', '.join(SERVING_MODES)}) only")] if given else []
    out = []
    if p.layout != "dense":
        out.append(("layout", f"{p.mode} points are dense: B sequences of T tokens each, against their states"))
    elif p.seqlens:
        T = p.seqlens[0]
        if p.mode == "decode" and T != 1:
            out.append(("seqlens", f"decode is one token per sequence (seqlen 1), got {T}; use mode mtp for "
                                   f"T = 2..{MTP_MAX_T}"))
        if p.mode == "mtp" and not 2 <= T <= MTP_MAX_T:
            out.append(("seqlens", f"mtp verifies 2..{MTP_MAX_T} tokens per sequence, got {T}"))
    if not p.initial_state:
        out.append(("initial_state", "a serving step always starts from its sequences' states (initial_state must "
                                     "be true)"))
    if p.state_dtype not in STATE_DTYPES:
        out.append(("state_dtype", f"state_dtype {p.state_dtype!r} not in {STATE_DTYPES}"))
    if p.state_layout not in STATE_LAYOUTS:
        out.append(("state_layout", f"state_layout {p.state_layout!r} not in {STATE_LAYOUTS}"))
    if isinstance(p.pool, bool) or not isinstance(p.pool, int) or p.pool < p.batch:
        out.append(("pool", f"pool must be an integer number of state slots >= batch ({p.batch}), got {p.pool!r}"))
    if p.distributed:
        out.append(("cp_world_size", "serving points run on one device (no context parallelism)"))
    return out


def _gate_param_problems(p: Point) -> list[tuple[str, str]]:
    out = []
    for name in GATE_PARAMS:
        v = getattr(p, name)
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            out.append((name, f"{name} must be a finite number, got {v!r}"))
        elif p.gate != "flashqla":
            out.append((name, f"{name} applies to the flashqla gate profile only (gate={p.gate!r})"))
        elif name == "gate_zero_frac" and not 0 <= v <= 1:
            out.append((name, f"gate_zero_frac must be in [0, 1], got {v}"))
        elif name == "gate_scale" and not v > 0:
            out.append((name, f"gate_scale must be positive, got {v}"))
    return out


def gate_params_effective(gate: str, zero_frac: float | None, scale: float | None) -> dict[str, float | None]:
    """A gate profile's gate_zero_frac and gate_scale with its defaults filled in (None for other profiles)."""
    if gate != "flashqla":
        return {"gate_zero_frac": None, "gate_scale": None}
    return {"gate_zero_frac": FLASHQLA_GATE_ZERO_FRAC if zero_frac is None else zero_frac,
            "gate_scale": FLASHQLA_GATE_SCALE if scale is None else scale}


def flashqla_zero_heads(h_v: int, zero_frac: float | None = None) -> int:
    """How many of h_v value heads get g = 0: h_v - ceil((1 - zero_frac) * h_v), as FlashQLA's benchmark."""
    f = FLASHQLA_GATE_ZERO_FRAC if zero_frac is None else float(zero_frac)
    # round() first so that e.g. (1 - 0.1) * 10 = 9.000000000000002 keeps 9 heads, not 10.
    return h_v - math.ceil(round((1.0 - f) * h_v, 9))
