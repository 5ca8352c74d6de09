"""The call to make: each ranked backend's library call with the arguments that select it.

The calls are the backends' declarations (core/backend_decl.py: `BackendDecl.call`), read here directly
(torch-free). A backend with no declared call (qlabench's own kernels) gets none, and the answer then names
the backend alone.
"""

from __future__ import annotations

from qlabench.analyze.answer.ranking import Entry
from qlabench.core.backend_decl import find


def attach_calls(entries: list[Entry]) -> list[Entry]:
    """Set each entry's `call` from its declaration (left None where the backend declares none)."""
    for e in entries:
        d = find(e.backend)
        e.call = (d.call if d is not None else "") or None
    return entries
