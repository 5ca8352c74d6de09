"""How each serving backend's step reaches the state pool: a fact of the library behind it, said beside its
rows wherever they are shown (the serving page). Pure Python. Each backend declares its own
(`pool_access` in core/builtin_backends.py); this module holds the words they use.

A kernel that takes slot indices reads and writes the batch's states in the pool itself; a library without a
pool argument makes its caller gather the batch's states into a dense tensor and scatter them back, which is
traffic and time an engine using that library pays, but not the kernel's. Upstream FLA is such a library,
while vLLM and SGLang run their own FLA-derived kernels that index the pool: the FLA rows are not FLA as an
engine runs it.
"""

from __future__ import annotations

IN_KERNEL = "slot indices in the kernel"
GATHER_SCATTER = "gather + kernel + scatter"
REFERENCE = "reference"


