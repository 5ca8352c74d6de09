"""A suite that measures exactly the points a question is missing, written as a suite file.

It uses the study's method (packed varlen with cu_seqlens, h0 on, CUDA-graph timing, the reduced oracle
check; suites/flashqla-study.toml), so its rows sit beside the committed evidence. One `[[include]]` per
case whose missing backends differ from the first's keeps the suite to the missing points alone.
"""

from __future__ import annotations

from qlabench.analyze.advise.question import WORKLOAD_MODES, Case, Question
from qlabench.core.names import default_name

_TIMING = """[timing]
timer = "graph"
warmup = 3
min_samples = 10
max_samples = 100
min_time_s = 0.0
max_time_s = 0.5
target_rel_noise = 0.005
l2_flush = true

[check]
oracle_max_tokens = 256
full_size = false
"""


def _list(values) -> str:
    return "[" + ", ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in values) + "]"


def suite_name(q: Question) -> str:
    return default_name(f"advise-{q.model}-tp{q.tp}-{q.workload}")


def missing_suite(q: Question, missing: dict[Case, list[str]]) -> str:
    """The TOML text of a suite whose points are the missing (backend, case) pairs of `q`."""
    modes = WORKLOAD_MODES[q.workload]
    groups: list[tuple[tuple[str, ...], list[Case]]] = []
    for case, backends in missing.items():
        key = tuple(backends)
        for k, cases in groups:
            if k == key:
                cases.append(case)
                break
        else:
            groups.append((key, [case]))
    gate = ""
    if q.gate.name != "published":
        gate = f"gate_zero_frac = {q.gate.zero_frac:g}\ngate_scale = {q.gate.scale:g}\n"
    lines = [
        f"# Written by `qlabench advise` for {q.model} at TP{q.tp}, {q.workload}, gate {q.gate.label}:",
        "# the points its answer is missing. Run it on the GPU, then ask again with its results:",
        f"#   qlabench run sweep --suite THIS_FILE && qlabench advise ... results/{suite_name(q)}",
        f'name = "{suite_name(q)}"',
        f'description = "points missing from the answer for {q.model} TP{q.tp} {q.workload}"',
        'device = "cuda"',
        f'baseline = "{q.current}"',
        "",
    ]
    for i, (backends, cases) in enumerate(groups):
        lines.append("[sweep]" if i == 0 else "[[include]]")
        lines.append(f"backends = {_list(backends)}")
        lines.append(f"modes = {_list(modes)}")
        lines.append("varlen = [" + ", ".join(_list(c.seqlens) for c in cases) + "]")
        if i == 0:
            lines.append(f'heads = [{{ model = "{q.model}", tp = {q.tp} }}]')
            lines.append(f"K = {q.head_dim}\nV = {q.head_dim}")
            lines.append(f'dtype = "{q.dtype}"\ngate = "flashqla"\ninitial_state = true')
            if gate:
                lines.append(gate.rstrip())
        lines.append("")
    return "\n".join(lines) + "\n" + _TIMING
