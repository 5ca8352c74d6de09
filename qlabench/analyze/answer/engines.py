"""Beside advise's library call: how to get the recommended kernel in vLLM and SGLang, or that no switch can.

Rendered from core/engine_switches.py (the engines' flags, their defaults per GPU, each read from the
engine's source at the pinned version): one line per engine, naming the switch, whether it is already the
default on the device the rows were measured on, how the engine's call differs from the one timed, and
the source line. A kernel no switch selects says so, with the engine's default beside it.
"""

from __future__ import annotations

from collections.abc import Sequence

from qlabench.core.engine_switches import ENGINES, NOT_SELECTABLE, PHASES, default_switch, sm_major, switches

# What advise's workloads are in an engine's terms: a training step is no engine's work.
TRAIN_LINE = ("vLLM and SGLang serve inference only: no engine switch applies to a training step "
              "(use the library call)")


def sm_label(sm: int | None) -> str:
    """'SM90', 'SM10x' (a family: 10.0 and 10.3 answer alike), 'an unknown GPU'."""
    if sm is None:
        return "an unknown GPU"
    return f"SM{sm}0" if sm in (8, 9) else f"SM{sm}x"


def engine_lines(backend: str | None, workload: str, device: str | None) -> list[str]:
    """One line per engine: how to select `backend`'s kernel for `workload` (prefill, decode, mtp; train has
    one line saying no engine applies) and whether the engine's default on `device` already is it."""
    if backend is None:
        return []
    if workload == "train":
        return [TRAIN_LINE]
    if workload not in PHASES:
        return []
    sm = sm_major(device)
    out = []
    for key, engine in ENGINES.items():
        head = f"{engine.name} {engine.version}"
        default = default_switch(key, workload, sm)
        mine = switches(key, workload, backend)
        if not mine:
            why = NOT_SELECTABLE.get(key, {}).get(backend, "the engine has no switch for it")
            out.append(f"{head}: no switch selects {backend} ({why}); {_default_text(default, sm)}")
            continue
        for s in mine:
            if default is s:
                status = f"the default on {sm_label(sm)} when {s.default_when}"
            elif sm is None and s.default_when:
                status = f"the default on {', '.join(sm_label(x) for x in s.default_sm) or 'no GPU'} when {s.default_when}"
            else:
                status = f"not the default on {sm_label(sm)}: {_default_text(default, sm)}"
            line = f"{head}: {s.select} ({status})"
            if s.differs:
                line += f"; the engine's call differs: {s.differs}"
            out.append(f"{line} [{s.source}]")
    return out


def _default_text(default, sm: int | None) -> str:
    """The engine's default in a few words (its condition is on its own line, where it is the answer)."""
    if default is None:
        return f"the table names no default on {sm_label(sm)}"
    runs = default.backend or f"{default.kernel}, which qlabench does not time"
    return f"its default on {sm_label(sm)}: {default.select} -> {runs}"


def engines_for(entries: Sequence, workload: str) -> list[str]:
    """`engine_lines` for the best timed entry of a case (advise's recommendation), on the device its rows
    were measured on; [] where nothing was timed correctly."""
    best = next((e for e in entries if e.ok), None)
    if best is None:
        return []
    return engine_lines(best.backend, workload, best.devices[0] if best.devices else None)


def engine_flags(backend: str | None, workload: str, device: str | None) -> list[str]:
    """`engine_lines` in a few words, one per engine: the switch that selects `backend` and whether it is the
    default on `device`'s GPU family, or that no switch does ('vLLM: no switch selects it'). The conditions, the
    ways the engine's call differs and the source lines are `engine_lines`'."""
    if backend is None or workload not in PHASES and workload != "train":
        return []
    if workload == "train":
        return ["vLLM, SGLang: none (inference only)"]
    sm = sm_major(device)
    out = []
    for key, engine in ENGINES.items():
        mine = switches(key, workload, backend)
        if not mine:
            out.append(f"{engine.name}: no switch selects it")
            continue
        default = default_switch(key, workload, sm)
        out += [f"{engine.name}: {s.select}" + (f" (its default on {sm_label(sm)})" if default is s else "")
                for s in mine]
    return out
