"""`advise`'s answer as a terminal or a pipe reads it: each case's answer first, in a few lines that fit 80 columns
(the winner or the tie set, its time and speedup, the call, each engine's switch), then each case's ranking
(cli/answers.py) with its notes, then what the numbers stand on."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from qlabench.cli.answers import case_runs, leaders, ranking, run_tag, wrapped
from qlabench.core.regimes import RECOMMENDED_REGIME


def answer_lines(case, q, where: str) -> list[tuple[str, str]]:
    """The case's answer in a few (text, continuation indent) lines: the winner or the tie set with its time and
    speedup, or what is missing; the call to make, and each engine's switch."""
    from qlabench.analyze.answer.calls import short_call
    from qlabench.analyze.answer.engines import engine_flags

    lead = leaders(case)
    best = lead[0] if lead else None
    title = case.title
    if best is None:
        text = (f"{title}: no winner: {', '.join(case.missing)} not measured here (no row at this point and gate in "
                f"{where})" if case.missing else f"{title}: no backend has a correct time here")
        return [(text, "    ")]
    ratio = f", {best.speedup:.2f}x vs {q.current}" if best.speedup else ""
    launch = case.launch  # the time a caller pays launching it this way (core/launch.py)
    if len(lead) > 1:
        times = f"{lead[0].time_ms:.3f}-{lead[-1].time_ms:.3f} ms {launch}"
        what = f"tie: {', '.join(e.backend for e in lead)}, {times}{ratio} (within the measured spread)"
    else:
        what = f"{best.backend}, {best.time_ms:.3f} ms {launch}{ratio}"
    if case.missing or case.unranked:
        short = ([f"{len(case.missing)} not measured"] if case.missing else []) + (
            [f"{len(case.unranked)} unranked"] if case.unranked else [])
        among = "ranked" if case.unranked else "measured"
        text = f"{title}: provisional, among those {among} only: {what}; {', '.join(short)}"
    else:
        text = f"{title}: " + ("" if len(lead) > 1 else "use ") + what
    out = [(text, "    ")]
    if call := short_call(best.backend):
        out.append((f"  call: {call}", "        "))
    out += [(f"  {line}", "      ") for line in engine_flags(best.backend, q.workload, case.device)]
    return out


def print_answer(console: Console, ans, suite_out: Path | None) -> None:
    """The answer first (a few lines per case), then each case's ranking with its notes, then what the
    numbers stand on."""
    def _say(text: str, indent: str = "") -> None:
        # plain text (never markup) wrapped at spaces, later lines after `indent`: a name is never cut
        for line in wrapped(text, console.width, indent):
            console.print(line, markup=False, highlight=False, soft_wrap=True)

    q = ans.question
    h_qk, h_v = q.heads
    where = "the current evidence" if ans.from_catalog else "these results"
    _say(f"{q.model} TP{q.tp} (h {h_qk}/{h_v}, K=V={q.head_dim}, {q.dtype}), {q.workload}, gate {q.gate.name}"
         + (f", held to {q.sm_budget} SMs" if q.sm_budget else ""), "  ")
    for case in ans.cases:
        for text, indent in answer_lines(case, q, where):
            _say(text, indent)
    first_calls: dict[str, str | None] = {}
    for case in ans.cases:
        console.print()
        if case.entries:
            console.print(ranking(console, case))
            _say("  runs: " + ", ".join(f"{run_tag(case, r)} = {r}" for r in case_runs(case)), "    ")
        for e in case.entries:
            if not e.ok:
                _say(f"  {e.backend} {e.status}: {e.reason}", "    ")
            first_calls.setdefault(e.backend, e.first_call if e.first_call != "not measured" else None)
        for c in case.caveats:
            _say(f"  - {c}", "    ")
        best = leaders(case)[:1]
        for e in best:
            if e.call:
                _say(f"  call: {e.call}", "    ")
            for line in case.engines:
                _say(f"  engine: {line}", "    ")
    console.print()
    if any(first_calls.values()):
        _say("first call: each backend's first calls in a fresh process, kernel caches empty (cold) and as the cold "
             f"process left them (warm), at the point named, from {', '.join(ans.first_call_sources)}:", "  ")
        for b, text in first_calls.items():
            if text:
                _say(f"  {b}: {text}", "    ")
        if unmeasured := [b for b, text in first_calls.items() if not text]:
            _say(f"  not measured: {', '.join(unmeasured)}", "    ")
    elif not ans.first_call_sources:
        _say("first call: not measured (no cold-start results: `qlabench cold-start`, a catalog entry of kind "
             "cold-start)", "  ")
    _say(f"gate: {q.gate.label}", "  ")
    _say(f"from: {', '.join(ans.sources)} ({', '.join(ans.devices) or 'no rows'})", "  ")
    for note in ans.notes:
        _say(f"note: {note}", "  ")
    _say(f"regime: times are read in the {RECOMMENDED_REGIME} regime where a backend has rows in it (the regime "
         "docs/BENCHMARKS.md recommends: its calls back to back for 200 ms before the samples, as an engine under "
         "load); a time in another regime is marked in the run column and named in a note", "  ")
    _say("times: ms is the time of the launch regime ranked on; device ms, the call replayed in a CUDA graph; eager "
         "ms, calls launched back to back from Python; host ms, the launching thread's own time per call; "
         "launch-bound, eager beyond device by more than noise (docs/BENCHMARKS.md, 'Three times')", "  ")
    if any(e.extra_mem_mib is not None for c in ans.cases for e in c.entries):
        _say("extra MiB: the most device memory a call took beyond its inputs and outputs, through torch's "
             "allocator (the rows' extra_mem_mib; docs/SM-BUDGET.md)", "  ")
    if ans.suite_toml:
        console.print()
        if suite_out is not None:
            _say(f"wrote a suite for the missing points to {suite_out}; measure them with:")
            _say(f"  qlabench run sweep --suite {suite_out}")
        else:
            _say("to measure the missing points here: add --measure (on the GPU), or --suite-out advise.toml, then")
            _say("  qlabench run sweep --suite advise.toml")
