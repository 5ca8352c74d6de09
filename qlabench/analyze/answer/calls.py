"""The call to make: each ranked backend's library call with the arguments that select it.

The calls are the backends' declarations (core/backend_decl.py: `BackendDecl.call`), read here directly
(torch-free). A backend with no declared call (qlabench's own kernels) gets none, and the answer then names
the backend alone.
"""

from __future__ import annotations

import re

from qlabench.analyze.answer.ranking import Entry
from qlabench.core.backend_decl import declarations, find


def attach_calls(entries: list[Entry]) -> list[Entry]:
    """Set each entry's `call` from its declaration (left None where the backend declares none)."""
    for e in entries:
        d = find(e.backend)
        e.call = (d.call if d is not None else "") or None
    return entries


def _split_call(call: str) -> tuple[str, list[str], str] | None:
    """'fn(a, b=f(x, y)) tail' -> ('fn', ['a', 'b=f(x, y)'], 'tail'); None where the text is no call."""
    open_at = call.find("(")
    if open_at <= 0:
        return None
    depth, args, start = 0, [], open_at + 1
    for i in range(open_at, len(call)):
        ch = call[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                args.append(call[start:i].strip())
                return call[:open_at], [a for a in args if a], call[i + 1:].strip()
        elif ch == "," and depth == 1:
            args.append(call[start:i].strip())
            start = i + 1
    return None


# a switch: a keyword set to a constant (use_cp=True, backend="flashinfer"), not a tensor handed over another way
_LITERAL = re.compile(r"\w+=(True|False|None|-?\d+(\.\d+)?|\"[^\"]*\"|'[^']*')")


def short_call(backend: str) -> str | None:
    """The backend's call with only the switches that tell it from the other declared calls of the same function
    (keywords set to a constant: 'flashinfer.gdn_prefill.chunk_gated_delta_rule(..., use_cp=True)'), and what it
    says after the call (an environment, a comment); None where it declares no call. The whole call is
    `Entry.call`."""
    d = find(backend)
    parts = _split_call(d.call) if d is not None and d.call else None
    if parts is None:
        return (d.call or None) if d is not None else None
    fn, args, tail = parts
    others = [p[1] for x in declarations().values() if x.call and (p := _split_call(x.call)) and p[0] == fn]
    shared = set.intersection(*(set(a) for a in others)) if others else set(args)
    own = [a for a in args if a not in shared and _LITERAL.fullmatch(a)]
    return f"{fn}({', '.join(['...', *own])})" + (f" {tail}" if tail else "")
