"""A suite that measures exactly the points a question is missing, written as a suite file.

It uses the study's method (packed varlen with cu_seqlens, h0 on, CUDA-graph timing; qlabench/suites/flashqla-study.toml)
in the timing regime the ranking reads (core/regimes.py: RECOMMENDED_REGIME) and with the check at the
point's own size, so advise ranks its rows without a regime or a reduced-check caveat. The user's current
choice, the baseline every speedup divides by, is measured beside the missing backends in the same run.
One `[[include]]` per case whose missing backends differ from the first's keeps the suite to those points.
"""

from __future__ import annotations

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from qlabench.analyze.answer.question import WORKLOAD_MODES, Case, Question
from qlabench.core.errors import ConfigError
from qlabench.core.names import default_name
from qlabench.core.regimes import RECOMMENDED_REGIME

# The study's sampling (qlabench/suites/flashqla-study.toml) in the regime a ranking reads, so the rows rank beside the
# committed evidence; the check at the point's own size, so no time is believed on a reduced problem's path.
_TIMING = {"timer": "graph", "warmup": 3, "min_samples": 10, "max_samples": 100, "min_time_s": 0.0,
           "max_time_s": 0.5, "target_rel_noise": 0.005, "l2_flush": True, "regime": RECOMMENDED_REGIME,
           "sustained_ms": 200}
_CHECK = {"oracle_max_tokens": 256, "full_size": True}


def suite_name(q: Question) -> str:
    return default_name(f"advise-{q.model}-tp{q.tp}-{q.workload}")


def _comment(text: str) -> str:
    """One comment line: a user's value (a gate file's name, a backend) never opens a line of its own."""
    return "# " + "".join(c if c.isprintable() else " " for c in text)


def missing_suite(q: Question, missing: dict[Case, list[str]]) -> str:
    """The TOML text of a suite whose points are the missing (backend, case) pairs of `q`, written with a
    TOML writer (every value quoted as TOML quotes it) and read back before it is returned."""
    modes = WORKLOAD_MODES[q.workload]
    groups: list[tuple[tuple[str, ...], list[Case]]] = []
    for case, backends in missing.items():
        # the baseline beside them, in the same run: a speedup then divides two times of one run
        key = tuple(dict.fromkeys([q.current, *backends]))
        for k, cases in groups:
            if k == key:
                cases.append(case)
                break
        else:
            groups.append((key, [case]))
    doc: dict = {"name": suite_name(q), "description": f"points missing from the answer for {q.model} TP{q.tp} "
                 f"{q.workload}", "device": "cuda", "baseline": q.current}
    for i, (backends, cases) in enumerate(groups):
        table = {"backends": list(backends), "modes": list(modes), "varlen": [list(c.seqlens) for c in cases]}
        if i == 0:
            table |= {"heads": [{"model": q.model, "tp": q.tp}], "K": q.head_dim, "V": q.head_dim, "dtype": q.dtype,
                      "gate": "flashqla", "initial_state": True}
            if q.sm_budget is not None:
                table["sm_budget"] = q.sm_budget
            if q.gate.name != "published":
                table |= {"gate_zero_frac": float(q.gate.zero_frac), "gate_scale": float(q.gate.scale)}
            doc["sweep"] = table
        else:
            doc.setdefault("include", []).append(table)
    doc["timing"], doc["check"] = dict(_TIMING), dict(_CHECK)
    header = [_comment(f"Written by `qlabench advise` for {q.model} at TP{q.tp}, {q.workload}, gate {q.gate.label}:"),
              _comment("the points its answer is missing. Run it on the GPU, then ask again with its results:"),
              _comment(f"  qlabench run sweep --suite THIS_FILE && qlabench advise ... results/{suite_name(q)}")]
    import tomli_w  # only a suite being written needs the writer; an answer alone does not

    text = "\n".join(header) + "\n" + tomli_w.dumps(doc)
    try:
        same = tomllib.loads(text) == doc
    except tomllib.TOMLDecodeError as e:  # a bug, said plainly rather than a file that cannot load
        raise ConfigError(f"advise could not write a suite that reads back: {e}") from None
    if not same:
        raise ConfigError("advise could not write a suite that reads back: it reads back differently")
    return text
