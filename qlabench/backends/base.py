"""What a backend is: a name, what it supports (with reasons), and how it runs a point.

A backend turns (mode, inputs) into a zero-argument callable. Calling it once runs exactly the work
that is timed for that mode and returns the tensors the correctness check compares:
    fwd        o, ht                          (no autograd graph is built)
    fwd_bwd    o, ht, dq, dk, dv, dg, dbeta[, dh0]   forward and backward together
    decode/mtp o, ht (the batch's final states) and pool (the slots outside the batch): a serving step
               against a state pool (backends/decode.py)
    bwd        the same gradients, with the forward run once beforehand and only the backward timed,
               as FlashQLA's published table times it: the backward is handed the forward's outputs
               (for FlashQLA its g-cumsum and A) and nothing else
    bwd_train  the same gradients, the backward alone as autograd runs it in a training step: it is
               also handed whatever the forward keeps for it (FlashQLA: the intra-card CP context and
               the CP cache, so the backward does not redo the forward's CP pre-pass)
The two backward modes differ only for backends whose forward keeps more than its outputs for the
backward (FlashQLA's CP); each library backend's docstring says what its two modes run. Backends
whose forward is differentiable get fwd_bwd, bwd and bwd_train from autograd for free (bwd and
bwd_train are then the same call); others override `prepare`.

A backend that can also run distributed (inter-card context-parallel) points lists its CP modes in
`cp_modes` and implements `cp_setup` and `cp_forward` (the protocol is in backends/cp/__init__.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import torch

from qlabench.backends.cp import CP_TIMED_MODES, RankSetup
from qlabench.backends.first_use import first_use_note
from qlabench.core import kernel_event
from qlabench.core.backend_decl import BackendDecl, declarations, find
from qlabench.core.modes import BY_NAME
from qlabench.core.point import Point
from qlabench.measure.inputs import GDNInputs

Outputs = dict[str, torch.Tensor]


@dataclass(frozen=True)
class JitBuild:
    """A library build that a backend's first call would otherwise do inside a timed point's first call
    (FlashInfer's module): `qlabench warmup` runs it ahead. `run(on_step)` builds, reporting
    on_step(done, total, what), and returns its wall seconds."""

    label: str
    run: Callable[[Callable[[int, int, str], None] | None], float]


def _decl_of_class(cls: type) -> BackendDecl:
    """The declaration of a Backend class built without one: the one its `impl` names, or for a stand-in
    class that sets its own `name`, that name's declaration, else one made from its nearest declared
    ancestor (its modes, description and role; no library call of its own)."""
    by_impl = {d.impl: d for d in declarations().values()}
    name = next((c.__dict__["name"] for c in cls.__mro__ if isinstance(c.__dict__.get("name"), str)), None)
    impl = f"{cls.__module__}:{cls.__qualname__}"
    own = by_impl.get(impl)
    if own is not None and (name is None or name == own.name):
        return own
    if name is None:
        raise TypeError(f"{cls.__qualname__} is no declared backend and sets no `name`")
    declared = find(name)
    if declared is not None:
        return declared
    ancestors = (f"{c.__module__}:{c.__qualname__}" for c in cls.__mro__[1:])
    parent = next((by_impl[k] for k in ancestors if k in by_impl), None)
    if parent is None:
        return BackendDecl(name=name, label=name, impl=impl)
    return BackendDecl(name=name, label=name, impl=impl, description=parent.description, modes=parent.modes,
                       roles=parent.roles & frozenset({"testing"}), dtypes=parent.dtypes, devices=parent.devices,
                       cp_modes=parent.cp_modes, needs=parent.needs, first_use=parent.first_use)


def backward_outputs(o, ht, dq, dk, dv, dg, dbeta, dh0=None) -> Outputs:
    """The outputs dict of a backward-only call (the libraries return dbeta before dg: name, don't order)."""
    out = {"o": o, "ht": ht, "dq": dq, "dk": dk, "dv": dv, "dg": dg, "dbeta": dbeta}
    if dh0 is not None:
        out["dh0"] = dh0
    return out


class Backend:
    """A backend's implementation. What it is (name, description, modes, test-only role, library call, ...)
    is its declaration (core/backend_decl.py), which the registry hands it; the class holds how it runs.
    A test's stand-in subclass may set any of those facts as class attributes instead."""

    def __init__(self, decl: BackendDecl | None = None):
        self._decl = decl

    # Kernel-name provenance: a row is an error if it launched none of `expect_kernels` (when set)
    # or any of `forbid_kernels`. Prefixes, matched case-sensitively against CUDA kernel names.
    expect_kernels: ClassVar[tuple[str, ...]] = ()
    forbid_kernels: ClassVar[tuple[str, ...]] = ()
    # Extra environment a backend needs before its library is imported (e.g. dispatch switches).
    env: ClassVar[dict[str, str]] = {}
    # False for a call that cannot be captured in a CUDA graph (it reads device data on the host, e.g.
    # FLA's intra-card CP): the run times it with CUDA events instead of the graph timer, and its row
    # says so (TimerPlan.for_backend).
    graph_capturable: ClassVar[bool] = True
    # Inter-card context parallelism (the CP modes it runs are its declaration's `cp_modes`): the single-device
    # backend rank 0 checks the gathered outputs against.
    cp_reference: ClassVar[str] = ""
    cp_reference_fp32: ClassVar[bool] = False  # run the CP reference on float32 copies of the inputs
    cp_final_state: ClassVar[bool] = True  # cp_forward returns the final state
    # What this backend's outputs are checked against: the reduced check's oracle ("" = the registry's
    # ORACLE) and the full-size check's reference ("" = run/point.py's FULL_SIZE_REFERENCE), both
    # prepared with `prepare_point` on this point's problem. A layer backend (backends/layer/) names the
    # same layer around the oracle's core, since its outputs are not a bare core's.
    oracle: ClassVar[str] = ""
    full_size_reference: ClassVar[str] = ""

    # -- what its declaration says (the meaning of each: core/backend_decl.py, BackendDecl) -------------
    @property
    def decl(self) -> BackendDecl:
        d = getattr(self, "_decl", None)
        if d is None:
            d = self._decl = _decl_of_class(type(self))
        return d

    @property
    def name(self) -> str:
        return self.decl.name

    @property
    def description(self) -> str:
        return self.decl.description

    @property
    def modes(self) -> frozenset[str]:
        return self.decl.modes

    @property
    def dtypes(self) -> frozenset[str]:
        return self.decl.dtypes

    @property
    def devices(self) -> frozenset[str]:
        return self.decl.devices

    @property
    def cp_modes(self) -> tuple[str, ...]:
        """The CP modes of Point.cp_mode it runs (none: it runs no distributed point)."""
        return self.decl.cp_modes

    @property
    def testing(self) -> bool:
        """Test-only (fault injection, synthetic slowdowns, deliberate mis-dispatch): never ranked."""
        return self.decl.testing

    @property
    def size_dependent_path(self) -> bool:
        return self.decl.size_dependent_path

    @property
    def autotune_modules(self) -> tuple[str, ...]:
        return self.decl.autotune_modules

    @property
    def call_signature(self) -> str:
        return self.decl.call

    @property
    def cp_kernel_mark(self) -> str:
        """Part of a kernel name that launches only when the backend splits a call (its intra-card CP):
        `call_path` reads a traced call's path from it."""
        return self.decl.cp_mark

    def call_path(self, kernel_names) -> str | None:
        """Which of its code paths a traced call took, from the kernels it launched: "cp" when the
        `cp_kernel_mark` kernel ran, else "unsplit"; None when there is no mark or no kernel to read."""
        if not self.cp_kernel_mark or not kernel_names:
            return None
        return "cp" if any(self.cp_kernel_mark in str(k) for k in kernel_names) else "unsplit"

    # -- capability ---------------------------------------------------------------------------
    def available(self) -> tuple[bool, str]:
        """Can this backend run at all here? (False, why) if not."""
        return True, ""

    def supports(self, point: Point, device: str) -> tuple[bool, str]:
        """Can it run this point on this device? Generic checks, then `check_point`.

        A distributed point is asked of the backend's context parallelism (`cp_supports`)."""
        if point.distributed:
            return self.cp_supports(point, device)
        dev = torch.device(device).type
        if dev not in self.devices:
            return False, f"{self.name} does not run on {dev} (runs on: {', '.join(sorted(self.devices))})"
        if point.mode not in self.modes:
            return False, f"{self.name} has no {point.mode} mode (has: {', '.join(sorted(self.modes))})"
        if point.dtype not in self.dtypes:
            return False, f"{self.name} does not support {point.dtype} (supports: {', '.join(sorted(self.dtypes))})"
        return self.check_point(point, device)

    def check_point(self, point: Point, device: str) -> tuple[bool, str]:
        return True, ""

    def first_use_note(self) -> str:
        """What the first call costs on a new host, when that is more than a per-point compile (shown by
        `qlabench backends`): its declaration's `first_use`."""
        return first_use_note(self.decl)

    def jit_build(self, points: list[Point]) -> JitBuild | None:
        """A build to run ahead of these points in warm-up, if the backend has one (most compile per call)."""
        return None

    def found_versions(self) -> dict[str, str]:
        """Versions of libraries its call uses that only the backend can read (core/versions.py: the row's record
        takes them before the environment's): an engine's kernels loaded from a kernel site name their wheel's
        version there. {} by default: the environment's installed distributions say it."""
        return {}

    def provenance_error(self, kernel_names: list[str]) -> str | None:
        """Why the kernels a call launched are not this backend's (None when they are)."""
        return kernel_event.provenance_error(kernel_names, self.expect_kernels, self.forbid_kernels)

    # -- running ------------------------------------------------------------------------------
    def prepare_point(self, point: Point, inp: GDNInputs) -> Callable[[], Outputs]:
        """`prepare(point.mode, inp)`: how run/point.py prepares a point. A backend whose work depends on
        more of the point than the inputs carry (a layer backend: the model's hidden size) overrides it."""
        return self.prepare(point.mode, inp)

    def point_details(self, fn: Callable[[], Outputs], kernels: tuple[str, ...], kernel_dur_us: tuple[float, ...],
                      median_ms: float, time_ms: Callable[[Callable[[], object]], float]) -> dict:
        """Backend-specific details of a measured point for its row's extra_json; none by default.

        `fn` is what `prepare_point` returned, `kernels`/`kernel_dur_us` its traced call's kernels (empty
        off CUDA), `median_ms` its timed median and `time_ms(g)` the run's timer applied to another call
        `g` (its median, ms). A layer backend records its core's share of the layer's time here."""
        return {}

    def forward(self, inp: GDNInputs) -> tuple[torch.Tensor, torch.Tensor]:
        """(o, final state). Differentiable if the backend relies on autograd for backward modes."""
        raise NotImplementedError

    def prepare(self, mode: str, inp: GDNInputs) -> Callable[[], Outputs]:
        if mode not in BY_NAME:
            raise ValueError(f"unknown mode {mode!r}")
        m = BY_NAME[mode]  # core/modes.py: what the mode's one call runs
        if m.serving:
            return self._prepare_serving(inp)
        if not m.backward:
            return self._prepare_fwd(inp)
        return self._prepare_autograd(inp, forward_each_call=m.forward)

    def _prepare_serving(self, inp: GDNInputs) -> Callable[[], Outputs]:
        """A serving step as the reference computes it: the forward from the batch's states (`inp.h0`, their
        float32 copy) and the pool outside the batch as drawn. Library serving backends step a pool in
        place instead (backends/decode.py)."""
        from qlabench.backends.decode import untouched_pool

        def run() -> Outputs:
            with torch.no_grad():
                o, ht = self.forward(inp)
            return {"o": o, "ht": ht, **untouched_pool(inp)}

        return run

    def _prepare_fwd(self, inp: GDNInputs) -> Callable[[], Outputs]:
        def run() -> Outputs:
            with torch.no_grad():
                o, ht = self.forward(inp)
            return {"o": o, "ht": ht}

        return run

    def _prepare_autograd(self, inp: GDNInputs, forward_each_call: bool) -> Callable[[], Outputs]:
        leaves = {
            "dq": inp.q, "dk": inp.k, "dv": inp.v, "dg": inp.g, "dbeta": inp.beta, "dh0": inp.h0,
        }
        leaves = {n: t.detach().requires_grad_(True) for n, t in leaves.items() if t is not None}
        ginp = GDNInputs(
            q=leaves["dq"], k=leaves["dk"], v=leaves["dv"], g=leaves["dg"], beta=leaves["dbeta"],
            h0=leaves.get("dh0"), cu_seqlens=inp.cu_seqlens, scale=inp.scale, do=inp.do, dht=inp.dht,
        )
        names = list(leaves)

        def backward(o, ht) -> Outputs:
            grads = torch.autograd.grad(
                (o, ht), [leaves[n] for n in names], (inp.do.to(o.dtype), inp.dht.to(ht.dtype)),
                retain_graph=not forward_each_call, allow_unused=True,
            )
            out = {"o": o.detach(), "ht": ht.detach()}
            out.update({n: g for n, g in zip(names, grads) if g is not None})
            return out

        if forward_each_call:
            def run() -> Outputs:
                return backward(*self.forward(ginp))
            return run

        o, ht = self.forward(ginp)  # once; the graph is kept and only the backward is timed

        def run_bwd() -> Outputs:
            return backward(o, ht)

        return run_bwd

    # -- inter-card context parallelism (distributed points; backends/cp/) ------------------------
    def cp_available(self) -> tuple[bool, str]:
        """Can this backend run distributed points here? By default: whenever it can run at all."""
        return self.available()

    def cp_supports(self, point: Point, device: str) -> tuple[bool, str]:
        """Can it run this distributed point with ranks on this device type? Then `cp_check_point`."""
        dev = torch.device(device).type
        if not self.cp_modes:
            return False, f"{self.name} has no context-parallel mode"
        if dev not in self.devices:
            return False, f"{self.name} CP does not run on {dev} (runs on: {', '.join(sorted(self.devices))})"
        if point.cp_mode not in self.cp_modes:
            return False, f"{self.name} has no CP mode {point.cp_mode!r} (has: {', '.join(self.cp_modes)})"
        if point.mode not in CP_TIMED_MODES:
            return False, f"CP points time {', '.join(sorted(CP_TIMED_MODES))}; not {point.mode}"
        if point.dtype not in self.dtypes:
            return False, f"{self.name} CP does not support {point.dtype}"
        why = point.cp_problem()
        if why:
            return False, why
        return self.cp_check_point(point, dev)

    def cp_check_point(self, point: Point, device: str) -> tuple[bool, str]:
        """Backend-specific CP limits; by default the single-device ones."""
        return self.check_point(point, device)

    def cp_setup(self, point: Point, rs: RankSetup) -> Any:
        """Build the CP context for this point on this rank (collective where the library needs it)."""
        raise NotImplementedError(f"{self.name} has no context parallelism")

    def cp_forward(self, inp: GDNInputs, ctx: Any) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(o, final state or None) of the rank's local inputs; differentiable (the worker runs the backward)."""
        raise NotImplementedError(f"{self.name} has no context parallelism")

    def cp_intra_active(self, ctx: Any) -> bool | None:
        """Dual mode: whether the intra-card split actually triggered on this rank (None: n/a)."""
        return None
