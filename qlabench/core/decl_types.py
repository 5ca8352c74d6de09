"""The shape of a backend's declaration (`BackendDecl`) and of a plugin's provenance (`Provider`). Pure Python.

core/backend_decl.py is where declarations are gathered and asked (and re-exports these); the built-in ones
are core/builtin_backends.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from qlabench.core.backend_needs import Package
from qlabench.core.errors import BackendError

TRAINING_MODES = frozenset({"fwd", "bwd", "fwd_bwd", "bwd_train"})
WORKLOAD_ROLES = ("prefill", "train", "decode", "mtp")  # the questions a backend may be a candidate answer of
ROLES = frozenset({*WORKLOAD_ROLES, "oracle", "reference", "testing"})
CP_SETTINGS = ("auto", "nocp", "forcecp")
ALL_DTYPES = frozenset({"float64", "float32", "bfloat16", "float16"})
CPU_AND_CUDA = frozenset({"cpu", "cuda"})
# `pkg.module:function`: a module path, a colon, an attribute (a dotted one reaches into a class or object).
CALLABLE_NAME = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


@dataclass(frozen=True)
class Provider:
    """Where a backend's code came from, as its rows record it: the distribution that provided it and its
    version, and, when its module was imported from a git checkout, that checkout's commit and whether it had
    uncommitted changes. None where it is not known (a module on sys.path outside any distribution)."""

    dist: str | None = None
    version: str | None = None
    git_sha: str | None = None
    git_dirty: bool | None = None


@dataclass(frozen=True)
class BackendDecl:
    """One backend. `name` is what points and rows say; `impl` is what the backends layer imports to run it: a
    `Backend` subclass ('qlabench.backends.flash_qla:FlashQLANoCP') or a function of the FLA calling
    convention ('pkg.mod:fn', wrapped as a forward backend)."""

    name: str
    label: str  # the setting as views say it: 'FlashQLA, intra-card CP off'
    impl: str
    description: str = ""  # one line for `qlabench backends`
    library: str | None = None  # core.libraries Library.name whose version its rows record; None: none of them
    modes: frozenset[str] = TRAINING_MODES
    # The library call a user makes to get what this backend times, with the arguments that select it (and any
    # switch outside the call): `advise` tells the user to make it. "" for qlabench's own kernels.
    call: str = ""
    # Module prefixes of a library whose Triton kernels autotune (FLA's): such a backend's choice of configs
    # depends on the first shape its process met unless each point re-tunes (`[run] autotune`).
    autotune_modules: tuple[str, ...] = ()
    # Whether the code path a call takes depends on the problem's size, as an intra-card CP that splits only
    # long sequences does: the reduced-size check may then have run another path than the timed call
    # (run/point.py, check_timed_path).
    size_dependent_path: bool = False
    # For a library that decides per call whether to split it (intra-card CP): 'auto' leaves the decision to
    # the library, 'nocp' / 'forcecp' pin it. `auto_choices` groups them per library.
    cp_setting: str | None = None
    cp_mark: str = ""  # part of a kernel name launched only when the call split (core/kernel_event.py)
    pool_access: tuple[str, str] | None = None  # serving: (how the step reaches the pool, note) (core/pool_access.py)
    layer_core: bool = False  # a `layer:<name>` backend is made around it (backends/layer/)
    # Whether its first call at a new shape compiles or tunes (Triton, TileLang, nvcc): what a warm-up ahead of a
    # sweep pays for once, in parallel (run/warmup.py). False for plain PyTorch, whose first call costs no more.
    compiles: bool = True
    roles: frozenset[str] = frozenset()  # WORKLOAD_ROLES it may answer; 'oracle' / 'reference'; 'testing'
    # The serving engine whose own kernels it calls ('vllm', 'sglang': its distribution): its rows record the
    # engine's version as backend_version, not qlabench's (core/versions.py).
    engine: str | None = None
    order: int = 0  # its place in every view: the order of declarations()
    provider: Provider | None = None  # a plugin's distribution (and checkout); None: qlabench's own code
    # What it runs on and with: `qlabench backends` lists them without importing the implementation (torch).
    dtypes: frozenset[str] = ALL_DTYPES
    devices: frozenset[str] = CPU_AND_CUDA
    cp_modes: tuple[str, ...] = ()  # the Point.cp_mode values of the distributed points it runs (backends/cp/)
    # The packages it cannot run without (core/backend_needs.py): one missing is its reason to be unavailable,
    # found with find_spec alone. A backend that needs none runs wherever torch does (its available() is the
    # base's); one that needs some asks its implementation the rest (CUDA, SM, the installed library's API).
    needs: tuple[Package, ...] = ()
    # `module:function` of a torch-free function saying what its first call costs on a new host, when that is
    # more than a per-point compile (FlashInfer's nvcc build); "" for none. Shown by `qlabench backends`.
    first_use: str = ""

    def __post_init__(self):
        bad = set(self.roles) - ROLES
        if bad:
            raise BackendError(f"backend {self.name!r}: unknown role(s) {', '.join(sorted(bad))} "
                               f"(known: {', '.join(sorted(ROLES))})")
        if self.cp_setting is not None and self.cp_setting not in CP_SETTINGS:
            raise BackendError(f"backend {self.name!r}: cp_setting must be one of {', '.join(CP_SETTINGS)}")
        if self.engine and self.library:
            raise BackendError(f"backend {self.name!r}: calls either a library ({self.library}) or an engine's own "
                               f"kernels ({self.engine}), not both")
        if self.cp_setting and not self.library:
            raise BackendError(f"backend {self.name!r}: a cp_setting needs the library that decides the split")

    @property
    def testing(self) -> bool:
        return "testing" in self.roles

    @property
    def plugin(self) -> bool:
        return self.provider is not None or not self.impl.startswith("qlabench.")
