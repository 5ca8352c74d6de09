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


# -- tuned for the point --------------------------------------------------------------------------------
# Triton's autotuner keys its choice on the arguments a kernel names in `key=` (FLA's leave out the
# sequence length and the number of sequences) and keeps it for the life of the process, and on disk too
# when `cache_results` is on (FLA turns it on). So the first shape a worker runs decides the configs of
# every later point of the same heads: 2/8 1x32768 took 0.921 ms tuned for itself and 1.210 ms after
# 8x1024 on the H200 (/shared/gpu/README.md). `retune` forgets every choice, memory and disk lookups
# alike, so that the next call tunes for the point about to be timed.

def loaded_autotuners(prefixes: tuple[str, ...] = ()) -> list:
    """Every Triton autotuner defined at module level in the loaded modules (whose names start with one of
    `prefixes`, when given): the `@triton.autotune` objects, also under `@triton.heuristics`."""
    cls = getattr(sys.modules.get(AUTOTUNER_MODULE), "Autotuner", None)
    if cls is None:
        return []
    found: dict[int, object] = {}
    for name, module in list(sys.modules.items()):
        if module is None or (prefixes and not name.startswith(prefixes)):
            continue
        for value in list(getattr(module, "__dict__", {}).values()):
            for _ in range(4):  # heuristics -> autotune -> jit: a short chain of `.fn`
                if isinstance(value, cls):
                    found[id(value)] = value
                    break
                try:  # any attribute look-up may run code (a ctypes library resolves `fn` as a symbol)
                    value = getattr(value, "fn", None)
                except Exception:
                    value = None
                if value is None:
                    break
    return list(found.values())


def retune(prefixes: tuple[str, ...] = ()) -> int:
    """Forget every tuned choice of the loaded autotuners (of modules under `prefixes`), in memory and as a
    source of disk look-ups, so that each re-tunes on its next call; returns how many were reset.

    The disk cache is keyed like the memory one (no sequence length), so it is turned off on the tuner
    rather than cleared: a choice read back from it would be another shape's again."""
    tuners = loaded_autotuners(prefixes)
    for tuner in tuners:
        tuner.cache.clear()
        tuner.cache_results = False
    return len(tuners)


def tuned_choices(prefixes: tuple[str, ...] = ()) -> dict[int, dict]:
    """A copy of every loaded autotuner's current choices (id(tuner) -> {key: config}): what `install`
    puts back to time one shape under the configs another shape picked (the autotune-regret table)."""
    return {id(t): dict(t.cache) for t in loaded_autotuners(prefixes)}


def install(choices: dict[int, dict], prefixes: tuple[str, ...] = ()) -> None:
    """Give each loaded autotuner the choices `tuned_choices` saved for it, in place of its own."""
    for tuner in loaded_autotuners(prefixes):
        if id(tuner) in choices:
            tuner.cache.clear()
            tuner.cache.update(choices[id(tuner)])
            tuner.cache_results = False
