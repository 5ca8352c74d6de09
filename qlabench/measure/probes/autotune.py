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
from collections.abc import Callable, Iterator
from contextlib import contextmanager

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


# -- the correctness check's own choices ----------------------------------------------------------------
# A point's check calls the library on a reduced problem (256 tokens) before the point's timed call. Two things
# made each FLA backward check cost 3 s on the H200 (its first call, which tunes for the point, took 6):
# - every timed call forgets all choices first (`retune`), so a check met its keys untuned and benchmarked them
#   again, in the backward's own forward too (the forward a backward is prepared with runs in the check's
#   `prepare_point`, which is therefore inside `check_choices`);
# - FLA's keys leave out the length, so a key the last timed call tuned held that point's configs, a different set
#   at every point, each of which the check's reduced shape may need compiled anew (not measured apart).
# So a check runs with what the worker's earlier checks tuned, on every key they tuned (in place of a timed
# call's choice), and keeps what it still had to tune. No timed call runs with these choices: the timed call
# still forgets them and tunes for its own point.

@contextmanager
def check_choices(prefixes: tuple[str, ...], mode: str, kept: dict) -> Iterator[dict]:
    """Around a correctness check (its inputs' preparation and its call), for the autotuners of the modules under
    `prefixes` (none, or `[run] autotune` = `mode` "process", where the library keeps its own choices and nothing
    is forgotten: nothing is done): give each the choices earlier checks in this process tuned (`kept`,
    id(tuner) -> {key: config}) on every key they hold, in place of what the tuner holds there, and keep in `kept`
    what this check tuned. Yields {"installed", "tuned"}: choices handed in, and choices the check still had to
    tune (filled on exit)."""
    info = {"installed": 0, "tuned": 0}
    if not prefixes or mode == "process":
        yield info
        return
    before = {}
    for tuner in loaded_autotuners(prefixes):
        mine = kept.get(id(tuner), {})
        tuner.cache.update(mine)
        info["installed"] += len(mine)
        before[id(tuner)] = set(tuner.cache)
    yield info
    for tuner in loaded_autotuners(prefixes):  # a library the check imported first is loaded only now
        new = {k: tuner.cache[k] for k in set(tuner.cache) - before.get(id(tuner), set())}
        if new:
            kept.setdefault(id(tuner), {}).update(new)
            info["tuned"] += len(new)


# -- choices kept across processes (measure/tuning_store.py) ---------------------------------------------
# A stored choice is written as JSON and, on the way back, matched against the configs the loaded
# autotuner offers: the config installed is always the library's own object (its pre_hook included), never
# one rebuilt from the file, and a choice the library no longer offers is refused rather than forced on it.

_SCALARS = (str, int, float, bool, type(None))
HOOK = "<callable>"  # a config's hook in its fields: configs with and without one never match each other


def tuner_identity(tuner) -> str:
    """Where the function an autotuner wraps is defined ('fla.ops.utils.cumsum.chunk_local_cumsum_kernel'): the
    same in every process of one library version, unlike the module attribute a tuner is reached through."""
    fn = getattr(tuner, "base_fn", None)
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    return f"{module}.{qualname}" if module and qualname else kernel_name(tuner)


def config_fields(config) -> dict | None:
    """Every field a config carries (Triton's: kwargs, num_warps, num_stages, num_ctas, maxnreg, pre_hook,
    ir_override, and whatever a newer Triton adds), as JSON; None when one cannot be written down. A plain
    value (a stand-in's) is {'value': it}."""
    if isinstance(config, _SCALARS):
        return {"value": config}
    out = {}
    for name, value in sorted(getattr(config, "__dict__", {}).items()):
        if name.startswith("_"):
            continue
        if callable(value):
            value = HOOK
        elif isinstance(value, dict):
            if not all(isinstance(k, str) and isinstance(v, _SCALARS) for k, v in value.items()):
                return None
            value = dict(sorted(value.items()))
        elif not isinstance(value, _SCALARS):
            return None
        out[name] = value
    return out or None


def _key_json(key):
    """An autotune key (Triton's: a tuple of the key arguments' values and the tensors' dtypes) as JSON, or
    None when a value is not a plain scalar."""
    if isinstance(key, tuple):
        return list(key) if all(isinstance(v, _SCALARS) for v in key) else None
    return key if isinstance(key, _SCALARS) else None


def _key_back(value):
    return tuple(value) if isinstance(value, list) else value


def _source_hash(tuner) -> str | None:
    """A hash of the @triton.jit function's source (JITFunction.src), when the chain of `.fn` reaches one."""
    import hashlib

    fn = getattr(tuner, "fn", None)
    for _ in range(4):
        src = getattr(fn, "src", None)
        if isinstance(src, str):
            return hashlib.sha256(src.encode()).hexdigest()[:16]
        fn = getattr(fn, "fn", None)
    return None


def _signature(tuner) -> dict:
    """What must not have changed for a stored choice to apply to `tuner`: its key's argument names, its
    arguments and its source."""
    return {"keys": [str(k) for k in getattr(tuner, "keys", None) or ()],
            "arg_names": [str(a) for a in getattr(tuner, "arg_names", None) or ()],
            "source": _source_hash(tuner)}


def saved_choices(prefixes: tuple[str, ...] = ()) -> tuple[list[dict], list[str]]:
    """Every tuned choice of the loaded autotuners (of modules under `prefixes`) as JSON entries, one per
    kernel ({kernel, keys, arg_names, source, choices: [{key, config}]}), and a note per kernel left out."""
    tuners = loaded_autotuners(prefixes)
    names = [tuner_identity(t) for t in tuners]
    entries, notes = [], []
    for name, tuner in zip(names, tuners):
        if not tuner.cache:
            continue
        if names.count(name) > 1:
            notes.append(f"{name}: {names.count(name)} autotuners of one name, not kept")
            continue
        choices = [{"key": _key_json(k), "config": config_fields(c)} for k, c in tuner.cache.items()]
        if any(c["config"] is None or (c["key"] is None and k is not None) for c, k in zip(choices, tuner.cache)):
            notes.append(f"{name}: a key or config that cannot be written down, not kept")
            continue
        entries.append({"kernel": name, **_signature(tuner), "choices": choices})
    return entries, notes


def install_saved(entries: list[dict], prefixes: tuple[str, ...] = ()) -> tuple[int, list[str]]:
    """Give each loaded autotuner the choices `saved_choices` wrote for it, where the entry still fits it:
    one loaded autotuner of that name, the same key, arguments and source, and every stored config one it
    offers. Returns the choices installed and a note per entry refused (that kernel tunes on its next call)."""
    by_name: dict[str, list] = {}
    for tuner in loaded_autotuners(prefixes):
        by_name.setdefault(tuner_identity(tuner), []).append(tuner)
    installed, notes = 0, []
    for entry in entries:
        try:
            name = str(entry["kernel"])
            found = by_name.get(name, [])
            if len(found) != 1:
                notes.append(f"{name}: {'no' if not found else len(found)} loaded autotuner(s) of that name")
                continue
            tuner = found[0]
            now = _signature(tuner)
            if changed := [k for k in now if entry.get(k) != now[k]]:
                notes.append(f"{name}: its {', '.join(changed)} changed since it was stored")
                continue
            offered = [(config_fields(c), c) for c in getattr(tuner, "configs", None) or ()]
            picked = {}
            for choice in entry["choices"]:
                match = next((c for fields, c in offered if fields == choice["config"]), None)
                if match is None:
                    break
                picked[_key_back(choice["key"])] = match
            else:
                tuner.cache.clear()
                tuner.cache.update(picked)
                tuner.cache_results = False
                installed += len(picked)
                continue
            notes.append(f"{name}: a stored config is none of the configs it offers now")
        except (KeyError, TypeError, AttributeError):
            notes.append(f"{entry.get('kernel') if isinstance(entry, dict) else '?'}: malformed entry")
    return installed, notes
