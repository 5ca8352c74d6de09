"""A kernel's name as views print it: the C++ or CuTe DSL name a profiler records, shortened to what it is."""

from __future__ import annotations

import re

from qlabench.core.kernel_event import DSL_PREFIX

DSL_CHARS = 60


def short_name(name: str) -> str:
    """'void at::native::vectorized_elementwise_kernel<8, ...>(int, ...)' -> 'vectorized_elementwise_kernel'.

    CuTe DSL names run to 180 characters with no delimiter: a kernel that is a class's method reads as its
    class ('kernel_cutlass_kernel_<module path>CPDeltaRuleFixupSimtSm90_object_at_...' ->
    'CPDeltaRuleFixupSimtSm90.kernel'), a function as its head."""
    name = str(name).strip()
    if name.startswith(DSL_PREFIX):
        head = name[len(DSL_PREFIX):]
        if "_object_at_" in head:
            cls = re.search(r"[A-Z][A-Za-z0-9]*$", head.split("_object_at_", 1)[0])
            if cls:
                return f"{cls.group(0)}.{head.split('_', 1)[0]}"
        return head if len(head) <= DSL_CHARS else head[: DSL_CHARS - 1] + "…"
    s = re.sub(r"^void\s+", "", name).replace("(anonymous namespace)::", "")
    s = s.split("<", 1)[0].split("(", 1)[0]
    return s.rsplit("::", 1)[-1] or str(name)
