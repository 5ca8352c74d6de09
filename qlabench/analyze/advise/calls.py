"""The call to make: each ranked backend's library call with the arguments that select it.

The calls are the backends' own declarations (`Backend.call_signature`, backends/), handed in as a plain
mapping by the command that asks (analyze does not import the backends): `{backend name: call}`. A backend
with no declared call (qlabench's own kernels) gets none, and the answer then names the backend alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from qlabench.analyze.advise.ranking import Entry


def attach_calls(entries: list[Entry], calls: Mapping[str, str] | None) -> list[Entry]:
    """Set each entry's `call` from `calls` (left None where the backend declares none)."""
    for e in entries:
        e.call = (calls or {}).get(e.backend) or None
    return entries


def known_candidates(candidates: tuple[str, ...], calls: Mapping[str, str] | None) -> tuple[str, ...]:
    """The candidates a suite can measure here: all of them when no registry was handed in, else those it has
    (a variant another qlabench registers, e.g. flashinfer-forcecp, is not asked for where it is unknown)."""
    if calls is None:
        return candidates
    return tuple(b for b in candidates if b in calls)
