"""When a library's own choice is the wrong one: its auto setting against the variants that pin it.

FlashQLA (`flash_qla`: auto_cp) and FlashInfer 0.7 (`flashinfer`: use_cp left to it) each decide per call
whether to split it (intra-card CP); qlabench also times each decision pinned (`-nocp`, `-forcecp`). Where
a pinned variant is faster than the library's own choice beyond both times' noise, in the rows of this
answer, the caveat says by how much and which call to make instead. Nothing here is asserted: a library
whose auto and pinned variants are not both timed gets no caveat.

Where the rows traced which path each call took (`check_path`: split or not), an auto setting that took the
pinned variant's own path ran the same kernels (FlashQLA 0.1.3's `force_intra_cp` and FlashInfer 0.7.2's
`use_cp=True` only overrule a decision not to split, with the split the auto decision would make): a
difference between the two is two measurements of one call (points measured apart differ by about 1% in the
sustained regime, more than one point's own noise), never a wrong decision. Such a pair gets no "slower"
caveat, and where the pinned one is the fastest, a caveat says its library's own choice is the same call.
"""

from __future__ import annotations

from qlabench.analyze.answer.ranking import Entry
from qlabench.analyze.kit.backends import library_name
from qlabench.analyze.kit.ties import tie_noise
from qlabench.core.backend_decl import AUTO_CHOICES

# Which libraries decide their own CP and which backends pin it: the declarations' AUTO_CHOICES (the study's
# regret reads them too), named by their library (analyze/kit/backends.py).


def auto_slowdowns(entries: list[Entry]) -> list[tuple[Entry, Entry, float]]:
    """(auto, pinned, auto time / pinned time) for every pinned variant faster than its library's auto
    choice beyond noise, largest first."""
    timed = {e.backend: e for e in entries if e.ok}
    out = []
    for choice in AUTO_CHOICES:
        auto = timed.get(choice.auto)
        if auto is None:
            continue
        for _, pinned_name in choice.pinned:
            pinned = timed.get(pinned_name)
            if pinned is None or same_call(auto, pinned):
                continue
            if auto.time_ms > pinned.time_ms * (1 + tie_noise(auto.rel_noise, pinned.rel_noise)):
                out.append((auto, pinned, auto.time_ms / pinned.time_ms))
    return sorted(out, key=lambda t: -t[2])


def same_call(auto: Entry, pinned: Entry) -> bool:
    """Whether the library's own choice took the pinned variant's path in every timed call (both traced)."""
    return auto.path is not None and auto.path == pinned.path


def _same_call_caveats(entries: list[Entry]) -> list[str]:
    """The fastest entry is a pinned variant whose library's own choice took its path: the same call."""
    best = next((e for e in entries if e.ok), None)
    timed = {e.backend: e for e in entries if e.ok}
    for choice in AUTO_CHOICES:
        auto = timed.get(choice.auto)
        if best is None or auto is None or best.backend not in {name for _, name in choice.pinned}:
            continue
        if same_call(auto, best):
            return [f"auto CP: {library_name(auto.backend)}'s own choice ({auto.backend}, {auto.time_ms:.3f} ms) took "
                    f"the same path ({auto.path}) as {best.backend} ({best.time_ms:.3f} ms) here: the same call "
                    f"measured twice, so its own choice is as good"]
    return []


def _times(ratio: float) -> str:
    """'2.41x'; '1.005x' where two decimals would read as no difference at all."""
    return f"{ratio:.2f}x" if round(ratio, 2) != 1.0 else f"{ratio:.3f}x"


def auto_choice_caveats(entries: list[Entry]) -> list[str]:
    out = []
    best = next((e for e in entries if e.ok), None)
    for auto, pinned, ratio in auto_slowdowns(entries):
        runs = "one run" if set(auto.runs) == set(pinned.runs) else f"runs {', '.join(auto.runs)} and {', '.join(pinned.runs)}"
        # The recommended entry's call is printed with the answer; another pinned variant's is given here.
        call = f": call {pinned.call}" if pinned.call and pinned is not best else f" ({pinned.backend})"
        out.append(f"auto CP: {library_name(auto.backend)}'s own CP decision ({auto.backend}, {auto.time_ms:.3f} ms) is "
                   f"{_times(ratio)} slower than {pinned.backend} ({pinned.time_ms:.3f} ms) here ({runs}); choose the "
                   f"setting explicitly{call}")
    return out + _same_call_caveats(entries)
