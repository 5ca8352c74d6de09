"""Which config each Triton autotuned kernel ran with in one call (FLA's kernels are `@triton.autotune`d).

An autotuner benchmarks its configs the first time it meets a key (the shapes), keeps the winner in its
`.cache`, and on every call `Autotuner.run` sets `.best_config` to the config it launches. Two runs of
one point can differ because the autotuner chose differently (a close benchmark, other processes on
the same GPU while it tuned); the choice recorded per row lets `compare` name the kernel that moved.

The probe never imports triton: where no code has loaded it (CPU runs, backends that are not Triton)
nothing can have been autotuned, and it records nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from qlabench.core.result import autotune_choice

AUTOTUNER_MODULE = "triton.runtime.autotuner"


def autotune_choices(fn: Callable[[], object]) -> tuple[dict, ...]:
    """Call `fn` once (after its first call, so nothing is tuned here) and return, in launch order, each
    autotuned kernel it ran with the config it ran with (`autotune` column entries); () without triton."""
    cls = getattr(sys.modules.get(AUTOTUNER_MODULE), "Autotuner", None)
    if cls is None:
        return ()
    seen: dict[tuple, dict] = {}
    original = cls.run

    def recording_run(self, *args, **kwargs):
        out = original(self, *args, **kwargs)
        choice = describe(self)
        if choice is not None:
            seen.setdefault(_identity(choice), choice)
        return out

    # Patched on the class for the one call: a kernel reaches its autotuner through a JIT function or a
    # heuristics wrapper, and every path ends in Autotuner.run.
    cls.run = recording_run
    try:
        fn()
    finally:
        cls.run = original
    return tuple(seen.values())


def describe(tuner) -> dict | None:
    """The kernel behind an autotuner and the config its last call launched, or None before any call."""
    config = getattr(tuner, "best_config", None)
    if config is None:
        return None
    return autotune_choice({"kernel": kernel_name(tuner), "num_warps": getattr(config, "num_warps", None),
                            "num_stages": getattr(config, "num_stages", None),
                            "num_ctas": getattr(config, "num_ctas", None),
                            "kwargs": dict(getattr(config, "kwargs", None) or {})})


def kernel_name(tuner) -> str:
    """The Python name of the @triton.jit function an autotuner (possibly over heuristics) wraps."""
    fn = getattr(tuner, "base_fn", None) or getattr(tuner, "fn", None)
    while fn is not None and not hasattr(fn, "__name__") and hasattr(fn, "fn"):
        fn = fn.fn
    return getattr(fn, "__name__", None) or type(tuner).__name__


def _identity(choice: dict) -> tuple:
    return (choice["kernel"], choice["num_warps"], choice["num_stages"], choice["num_ctas"],
            tuple(sorted(choice["kwargs"].items())))
