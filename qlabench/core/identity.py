"""A point's identity, defined once: its axes and what each changes, its key, and its labels.

A point is the backend plus the workload axes below. Everything that keys, matches, caches, groups
or names points reads `AXES`: the result row's key columns (store/keys.py), resume and merge, compare's
pairing, the oracle cache, compile and warm-up groups, and the study's point key. Pure Python: values
read through pandas are normalised by store/keys.py before they are keyed.

Where a new axis goes: a field on `Point` (core/point.py), a column on `ResultRow` (core/result.py),
and an `Axis` in `AXES` saying whether it changes the correctness check's inputs and the compiled
kernels. A new axis is assumed to change both (it splits the oracle cache and the compile groups)
until it says otherwise: a wrong `False` would reuse outputs or kernels that do not fit it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Axis:
    name: str
    nullable: bool = False  # may be null in a stored row (optional, or added after the first schema)
    inputs: bool = True  # changes the inputs of the reduced correctness check (measure/oracle_cache.py)
    kernels: bool = True  # may change what a backend compiles (Point.compile_group, run/warmup.py)
    # part of the problem a kernel solves: rows equal on these axes answer one question whatever else
    # they differ in (analyze/evidence: newer evidence, numerics evidence, advise). A new axis is assumed
    # to change the problem until it says otherwise: a wrong False would pair two problems as one.
    problem: bool = True


BACKEND = "backend"

# The backend, then every workload axis, in display order; the order of every key built from them.
AXES: tuple[Axis, ...] = (
    Axis(BACKEND, inputs=False),
    Axis("mode", inputs=False, kernels=False),  # warm-up splits modes on purpose (run/warmup.py)
    Axis("model", nullable=True, inputs=False, kernels=False, problem=False),  # where h_qk/h_v came from
    Axis("tp", nullable=True, inputs=False, kernels=False, problem=False),
    # One dense sequence of 32768 tokens and the same sequence packed as varlen compute the same thing:
    # the problem is the lengths (`seqlens`, one per sequence in either layout), not how they are laid out.
    Axis("layout", kernels=False, problem=False),
    Axis("batch", inputs=False, kernels=False, problem=False),  # follows from layout and seqlens
    Axis("seqlens", kernels=False),  # the check replaces them with its reduced lengths
    Axis("h_qk"),
    Axis("h_v"),
    Axis("K"),
    Axis("V"),
    Axis("dtype"),  # the check replaces it with its compute dtype
    Axis("gate", kernels=False),
    Axis("gate_zero_frac", nullable=True, kernels=False),
    Axis("gate_scale", nullable=True, kernels=False),
    Axis("seed", kernels=False, problem=False),  # another draw of the same problem
    Axis("initial_state", kernels=False),
    Axis("cp_world_size", nullable=True, inputs=False),
    Axis("cp_mode", nullable=True, inputs=False),
    # Serving points (modes decode/mtp, core/point.py). The oracle starts from the pool's states in
    # float32 and the canonical layout whatever the pool holds, yet the inputs are drawn per pool, so the
    # dtype, layout and size of the pool all split the oracle cache (a False here would reuse outputs).
    Axis("state_dtype", nullable=True),
    Axis("state_layout", nullable=True),
    Axis("pool", nullable=True, kernels=False),
    Axis("beta_regime", nullable=True, kernels=False),
    # The SMs the point may use (a CUDA green context of that size; null: the whole GPU). The same kernels
    # on the same inputs, but another question: a time at 16 SMs never answers for the whole GPU.
    Axis("sm_budget", nullable=True, inputs=False, kernels=False),
)

# Named groups of axes that code reasons about as a whole.
CP_AXES = ("cp_world_size", "cp_mode")  # a context-parallel point's split; null on one device
GATE_PARAMS = ("gate_zero_frac", "gate_scale")  # the flashqla gate profile's parameters
SERVING_AXES = ("state_dtype", "state_layout", "pool")  # a serving point's state pool; null on prefill


def key_axes() -> tuple[str, ...]:
    """A result row's key columns: the backend and every workload axis."""
    return tuple(a.name for a in AXES)


def workload_axes() -> tuple[str, ...]:
    """The axes of the problem, without the backend: rows of several backends on one problem share them."""
    return tuple(a.name for a in AXES if a.name != BACKEND)


def required_axes() -> tuple[str, ...]:
    """Key columns every stored row must have a value in."""
    return tuple(a.name for a in AXES if not a.nullable)


def input_axes() -> tuple[str, ...]:
    """Axes the reduced correctness check's inputs are made from (measure/inputs.py: make_inputs)."""
    return tuple(a.name for a in AXES if a.inputs)


def kernel_axes() -> tuple[str, ...]:
    """Axes that may change what a backend compiles: points equal on them share one compile group."""
    return tuple(a.name for a in AXES if a.kernels)


def problem_axes() -> tuple[str, ...]:
    """The axes of the problem a kernel solves (the backend included): two rows equal on them measured the
    same thing, whatever their layout, seed or model label."""
    return tuple(a.name for a in AXES if a.problem)


def values(point, axes: Sequence[str], **replaced) -> tuple:
    """`point`'s values on `axes`, in order; `replaced` substitutes some (e.g. the check's reduced seqlens)."""
    return tuple(replaced[a] if a in replaced else getattr(point, a) for a in axes)


def columns(point) -> dict:
    """The key columns of a result row for `point` (a nullable axis it lacks reads as null)."""
    return {a.name: getattr(point, a.name, None) if a.nullable else getattr(point, a.name) for a in AXES}


# -- labels: how a point is named in tables, logs and figures -------------------------------------

def heads_pair(h_qk, h_v) -> str:
    """'8/32': q/k heads over value heads."""
    return f"{h_qk}/{h_v}"


def heads_label(h_qk, h_v, model: str | None = None, tp: int | None = None) -> str:
    """'h8/32', or 'Qwen3-Next TP2 (h8/32)' when the heads came from a model of the catalogue."""
    base = f"h{heads_pair(h_qk, h_v)}"
    return f"{model} TP{int(tp or 1)} ({base})" if model else base


def layout_label(layout: str, batch, seqlens) -> str:
    """'1x32768' for a dense batch, '4096+8192' for packed sequences, '64x512 packed' for packed sequences of one
    length (a batch of many requests would otherwise spell out every length)."""
    lens = [int(x) for x in seqlens]
    if layout == "dense":
        return f"{batch}x{lens[0]}"
    if len(lens) > 1 and len(set(lens)) == 1:
        return f"{len(lens)}x{lens[0]} packed"
    return "+".join(map(str, lens))


def gate_label(gate: str, gate_zero_frac: float | None = None, gate_scale: float | None = None) -> str:
    """`flashqla`, or `flashqla(zero=0.5,/64)` when a parameter differs from the profile's default."""
    parts = []
    if gate_zero_frac is not None:
        parts.append(f"zero={float(gate_zero_frac):g}")
    if gate_scale is not None:
        parts.append(f"/{float(gate_scale):g}")
    return f"{gate}({','.join(parts)})" if parts else gate


def state_label(state_dtype, state_layout, pool) -> str:
    """'state=float32/kv pool=512' for a serving point's state pool, '' for a prefill point."""
    return f"state={state_dtype}/{state_layout} pool={pool}" if state_dtype else ""


def cp_label(cp_world_size, cp_mode) -> str:
    """'cp2 inter' for a context-parallel point, '' on one device."""
    return f"cp{cp_world_size} {cp_mode}" if cp_world_size else ""


def budget_label(sm_budget) -> str:
    """'sm32' for a point held to 32 SMs, '' for the whole GPU."""
    return f"sm{int(sm_budget)}" if sm_budget is not None and sm_budget == sm_budget else ""


def backend_label(backend: str, cp_world_size=None, cp_mode=None) -> str:
    """The backend, with its context-parallel setting for a distributed point: 'flash_qla [cp2 inter]'."""
    cp = cp_label(cp_world_size, cp_mode)
    return f"{backend} [{cp}]" if cp else str(backend)
