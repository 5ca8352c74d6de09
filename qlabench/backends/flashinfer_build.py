"""Building FlashInfer's SM90 GDN prefill module: only the kernel variants qlabench can call, with progress.

FlashInfer JIT-builds `gdn_prefill_sm90` on its first call: 64 kernel files (2 dtypes x 2^5 template
flags: GVA, beta, alpha, initial state, checkpointing), each a CUTLASS instantiation that takes nvcc
~2.5-3 minutes. That is 11-12 minutes on 16 cores, once per host and cache folder. qlabench always
passes beta and the gate (alpha) and never asks for state checkpoints, so it can only ever call 8 of
them: {bf16, fp16} x {GVA, not} x {initial state, not}. Building just those (plus the launcher) takes
about as long as one file on a machine with 10 cores, and a user who needs one configuration can ask
for one variant (QLABENCH_FLASHINFER_VARIANTS=bf16-gva-h0).

How: FlashInfer's own JitSpec for the module, with the instantiation files we do not need left out,
under its own name (so it never clashes with FlashInfer's full build in the same cache). The launcher
still references the other variants; the module is loaded lazily (tvm-ffi dlopens with RTLD_LAZY), so
they stay unresolved and are never called: `FlashInfer.check_point` refuses a point whose variant was
not built. FlashInfer's `chunk_gated_delta_rule` finds the module through the name
`gen_gdn_prefill_sm90_module` in its `gdn_prefill` namespace, which `install` points at this spec.

FlashInfer 0.7 dropped that module: its SM90 prefill is a CuTe DSL kernel (`gdn_kernels/delta_rule_dsl/
delta_rule_sm90.py`) that the DSL compiles per configuration at its first call, into FlashInfer's cache.
There is nothing to build ahead or to trim, and `has_cutlass_module()` says which case this install is.

QLABENCH_FLASHINFER_VARIANTS: unset or "qlabench" (the 8), "all" (FlashInfer's stock 64-variant
module, untouched), or a comma list of variant tags such as "bf16-gva-h0,bf16-mha-h0".
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

from qlabench.core.errors import ConfigError
from qlabench.core.point import Point

VARIANTS_ENV = "QLABENCH_FLASHINFER_VARIANTS"
MODULE = "gdn_prefill_sm90"  # FlashInfer's name for the full module
INSTANCE_PREFIX = "gdn_prefill_kernel_"  # its per-variant instantiation files
_DTYPES = {"bfloat16": "bf16", "float16": "fp16"}
_FILE_DTYPE = {"bf16": "bf16", "fp16": "half"}  # FlashInfer's file names say "half"


@dataclass(frozen=True, order=True)
class Variant:
    """One instantiation of FlashInfer's GDN prefill kernel that qlabench calls (beta and gate always on,
    no checkpoints)."""

    dtype: str  # "bf16" or "fp16"
    gva: bool  # more value heads than q/k heads (FlashInfer: num_v_heads > num_q_heads)
    h0: bool  # an initial state is passed

    @property
    def tag(self) -> str:
        return f"{self.dtype}-{'gva' if self.gva else 'mha'}-{'h0' if self.h0 else 'noh0'}"

    @property
    def source_name(self) -> str:
        """FlashInfer's instantiation file for this variant (g: GVA, b: beta, a: alpha, i: init state, c: ckpt)."""
        return f"{INSTANCE_PREFIX}{_FILE_DTYPE[self.dtype]}_g{int(self.gva)}b1a1i{int(self.h0)}c0.cu"

    @classmethod
    def parse(cls, tag: str) -> Variant:
        parts = tag.strip().split("-")
        if len(parts) != 3 or parts[0] not in _FILE_DTYPE or parts[1] not in ("gva", "mha") \
                or parts[2] not in ("h0", "noh0"):
            raise ConfigError(f"{VARIANTS_ENV}: bad FlashInfer variant {tag!r}; a variant is "
                              "DTYPE-HEADS-STATE with DTYPE bf16|fp16, HEADS gva|mha, STATE h0|noh0 "
                              "(e.g. bf16-gva-h0), or use 'qlabench' (all 8) or 'all' (FlashInfer's 64)")
        return cls(parts[0], parts[1] == "gva", parts[2] == "h0")


QLABENCH_VARIANTS = tuple(Variant(d, g, i) for d in ("bf16", "fp16") for g in (True, False) for i in (True, False))


def has_cutlass_module(version: str | None = None) -> bool:
    """Whether this flashinfer builds its SM90 GDN prefill as the C++ module qlabench can trim: 0.6.x (and
    no flashinfer at all, so the variant checks still speak); 0.7 and later compile a CuTe DSL kernel."""
    from qlabench.measure.env import dist_version

    version = dist_version("flashinfer-python") if version is None else version
    m = re.match(r"(\d+)\.(\d+)", version or "")
    return m is None or (int(m.group(1)), int(m.group(2))) < (0, 7)


def no_module_reason() -> str:
    """What a FlashInfer without the C++ module (0.7.x) does instead, for notes and refusals."""
    return ("this FlashInfer (0.7.x) has no gdn_prefill_sm90 C++ module to build: its SM90 prefill is a CuTe DSL "
            f"kernel compiled at its first call, so {VARIANTS_ENV} and the lean build do not apply")


def variant_of(point: Point) -> Variant | None:
    """The kernel variant a point needs (None for a dtype FlashInfer has no kernel for)."""
    d = _DTYPES.get(point.dtype)
    return None if d is None else Variant(d, point.h_v > point.h_qk, bool(point.initial_state))


def selected(value: str | None = None) -> tuple[Variant, ...] | None:
    """The variants to build, from `value` or $QLABENCH_FLASHINFER_VARIANTS; None means FlashInfer's full module."""
    value = (os.environ.get(VARIANTS_ENV, "") if value is None else value).strip()
    if value in ("", "qlabench"):
        return QLABENCH_VARIANTS
    if value == "all":
        return None
    return tuple(sorted({Variant.parse(t) for t in value.split(",") if t.strip()}))


def variant_count(variants: tuple[Variant, ...] | None) -> int:
    """Instantiations a module of `variants` builds (None: FlashInfer's full 64)."""
    return 64 if variants is None else len(variants)


def first_use_note() -> str:
    """What the prefill's first call builds on a new host (its declaration's `first_use`: `qlabench backends`
    shows it without importing flashinfer or torch)."""
    if not has_cutlass_module():
        return no_module_reason()
    try:
        variants = selected()
    except ConfigError as e:
        return str(e)
    n = variant_count(variants)
    which = {None: "FlashInfer's full set", QLABENCH_VARIANTS: "all qlabench can call"}.get(variants, "as chosen")
    return (f"first use builds {n} of FlashInfer's 64 kernel variants ({which}; {VARIANTS_ENV}), one nvcc "
            "job of ~2-3 min each, in parallel; all 64 take 11-12 min on 16 cores. `qlabench warmup` builds "
            "them ahead; one variant (e.g. bf16-gva-h0) is the shortest build")


def module_name(variants: tuple[Variant, ...] | None) -> str:
    if variants is None:
        return MODULE
    if set(variants) == set(QLABENCH_VARIANTS):
        return f"{MODULE}_qlabench"
    return f"{MODULE}_" + "_".join(v.tag.replace("-", "") for v in sorted(variants))


def lean_sources(sources: list, variants: tuple[Variant, ...]) -> list:
    """FlashInfer's module sources without the instantiation files of variants not asked for."""
    keep = {v.source_name for v in variants}
    kept = [s for s in sources if not s.name.startswith(INSTANCE_PREFIX) or s.name in keep]
    missing = keep - {s.name for s in kept}
    if missing:  # a FlashInfer version that names its files differently: say so instead of building nothing
        raise ConfigError(f"FlashInfer's gdn_prefill_sm90 sources have no {sorted(missing)}; "
                          f"set {VARIANTS_ENV}=all to build its stock module")
    return kept


def spec(variants: tuple[Variant, ...] | None = None):
    """FlashInfer's JitSpec for the module holding `variants` (default: the selected ones)."""
    from qlabench.measure import caches

    caches.configure()  # FLASHINFER_WORKSPACE_BASE before flashinfer reads it at import
    if not has_cutlass_module():
        raise ConfigError(no_module_reason())
    from flashinfer.jit.gdn import gen_gdn_prefill_sm90_module

    variants = selected() if variants is None else variants
    full = gen_gdn_prefill_sm90_module()
    if variants is None:
        return full
    return dataclasses.replace(full, name=module_name(variants), sources=lean_sources(list(full.sources), variants))


def install(variants: tuple[Variant, ...] | None = None) -> None:
    """Make FlashInfer's chunk_gated_delta_rule load the lean module (before its first call in this process)."""
    import flashinfer.gdn_prefill as gp

    lean = spec(variants)
    if lean.name != MODULE:
        gp.gen_gdn_prefill_sm90_module = lambda: lean


_STEP = re.compile(r"^\[(\d+)/(\d+)\]")


def run_ninja(cmd: list[str], cwd: str, on_step: Callable[[int, int, str], None] | None = None) -> str:
    """Run a ninja build, reporting each '[k/n] ...' line; returns its output, raises with its tail on failure."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        m = _STEP.match(line)
        if m and on_step:
            on_step(int(m.group(1)), int(m.group(2)), line[m.end():].strip())
    if proc.wait():
        tail = "".join(lines[-40:])
        raise RuntimeError(f"building FlashInfer's {MODULE} failed (ninja exit {proc.returncode}):\n{tail}")
    return "".join(lines)


@dataclass(frozen=True)
class BuildResult:
    module: str
    variants: int  # instantiation files built (64 for FlashInfer's full module)
    steps: int  # ninja edges that ran (0: already built)
    wall_s: float


def build(variants: tuple[Variant, ...] | None = None,
          on_step: Callable[[int, int, str], None] | None = None) -> BuildResult:
    """Build (or find up to date) the module under qlabench's cache, holding FlashInfer's own build lock,
    so a point that needs it meanwhile waits instead of building it a second time."""
    from filelock import FileLock

    s = spec(variants)
    t0 = time.perf_counter()
    steps = 0

    def step(k: int, n: int, what: str) -> None:
        nonlocal steps
        steps = k
        if on_step:
            on_step(k, n, what)

    with FileLock(s.lock_path, thread_local=False):
        s.write_ninja()
        cmd = ["ninja", "-C", str(s.build_dir), "-f", str(s.ninja_path)]
        if os.environ.get("MAX_JOBS"):  # FlashInfer's own knob for ninja's parallelism
            cmd += ["-j", os.environ["MAX_JOBS"]]
        run_ninja(cmd, str(s.build_dir), step)
    n_inst = sum(1 for p in s.sources if p.name.startswith(INSTANCE_PREFIX))  # what was built, whatever asked
    return BuildResult(s.name, n_inst, steps, time.perf_counter() - t0)
