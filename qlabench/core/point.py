"""One point of a sweep: a backend, a mode and the problem it runs. Pure Python, no torch.

A point is immutable and validated on construction. Its `workload_key` leaves out the backend, so
rows of different backends on the same problem can be matched for speedups and comparisons.

A point with `cp_world_size` set is *distributed*: one sequence stream split over that many ranks by
inter-card context parallelism (`cp_mode`; see docs/CONTEXT-PARALLEL.md). It runs through
qlabench/run/distributed/, not a single-device worker.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from qlabench.core.errors import PointError

MODES = ("fwd", "bwd", "fwd_bwd")
DTYPES = ("float64", "float32", "bfloat16", "float16")
GATES = ("flashqla", "fla", "strong")
LAYOUTS = ("dense", "varlen")
# Inter-card context parallel modes: FlashQLA inter / inter+intra ("dual"), FLA's own CP ("fla-cp").
CP_MODES = ("inter", "dual", "fla-cp")
CP_AXES = ("cp_world_size", "cp_mode")

# Axes that identify a workload (everything but the backend). Order is the display order.
WORKLOAD_AXES = (
    "mode", "model", "tp", "layout", "batch", "seqlens", "h_qk", "h_v", "K", "V",
    "dtype", "gate", "seed", "initial_state", "cp_world_size", "cp_mode",
)


@dataclass(frozen=True)
class Point:
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
    seed: int = 0
    initial_state: bool = True
    model: str | None = None
    tp: int | None = None
    cp_world_size: int | None = None  # ranks of inter-card context parallelism; None: one device
    cp_mode: str | None = None  # one of CP_MODES when cp_world_size is set

    def __post_init__(self) -> None:
        object.__setattr__(self, "seqlens", tuple(int(s) for s in self.seqlens))
        problems = []
        if self.mode not in MODES:
            problems.append(f"mode {self.mode!r} not in {MODES}")
        if self.dtype not in DTYPES:
            problems.append(f"dtype {self.dtype!r} not in {DTYPES}")
        if self.gate not in GATES:
            problems.append(f"gate {self.gate!r} not in {GATES}")
        if self.layout not in LAYOUTS:
            problems.append(f"layout {self.layout!r} not in {LAYOUTS}")
        if not self.seqlens or min(self.seqlens) < 1:
            problems.append("seqlens must be a non-empty list of positive lengths")
        if self.layout == "dense" and len(self.seqlens) != self.batch:
            problems.append("dense layout: one length per batch element")
        if self.layout == "dense" and len(set(self.seqlens)) > 1:
            problems.append("dense layout: all sequences have one length")
        if self.layout == "varlen" and self.batch != 1:
            problems.append("varlen layout packs its sequences into batch 1")
        if min(self.h_qk, self.h_v, self.K, self.V) < 1:
            problems.append("head counts and dims must be positive")
        elif self.h_v % self.h_qk:
            problems.append(f"h_v={self.h_v} is not a multiple of h_qk={self.h_qk}")
        if (self.cp_world_size is None) != (self.cp_mode is None):
            problems.append("cp_world_size and cp_mode go together (both set, or neither)")
        elif self.cp_world_size is not None:
            if isinstance(self.cp_world_size, bool) or not isinstance(self.cp_world_size, int) \
                    or self.cp_world_size < 2:
                problems.append(f"cp_world_size must be an integer >= 2, got {self.cp_world_size!r}")
            if self.cp_mode not in CP_MODES:
                problems.append(f"cp_mode {self.cp_mode!r} not in {CP_MODES}")
        if problems:
            raise PointError("invalid point: " + "; ".join(problems))

    # -- derived ------------------------------------------------------------------------------
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
    def distributed(self) -> bool:
        """True for a context-parallel point (several ranks); it runs through qlabench/run/distributed/."""
        return self.cp_world_size is not None

    @property
    def cp_label(self) -> str:
        return f"cp{self.cp_world_size} {self.cp_mode}" if self.distributed else ""

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

    @property
    def heads_label(self) -> str:
        base = f"h{self.h_qk}/{self.h_v}"
        if self.model:
            return f"{self.model} TP{self.tp or 1} ({base})"
        return base

    @property
    def layout_label(self) -> str:
        if self.layout == "dense":
            return f"{self.batch}x{self.seqlens[0]}"
        return "+".join(str(s) for s in self.seqlens)

    @property
    def compile_group(self) -> tuple:
        """Points sharing this key reuse the same compiled kernels (JIT is per head config)."""
        base = (self.backend, self.h_qk, self.h_v, self.K, self.V, self.dtype)
        return base + ((self.cp_world_size, self.cp_mode),) if self.distributed else base

    def workload_key(self) -> tuple:
        return tuple(getattr(self, a) for a in WORKLOAD_AXES)

    def key(self) -> tuple:
        return (self.backend,) + self.workload_key()

    def with_(self, **changes) -> Point:
        d = asdict(self)
        d.update(changes)
        return Point(**d)

    def label(self) -> str:
        cp = f" [{self.cp_label}]" if self.distributed else ""
        return (f"{self.backend}{cp} {self.mode} {self.heads_label} {self.layout_label} {self.dtype} "
                f"gate={self.gate}")
