"""The `advise` block: `qlabench advise`'s answer for one model, TP degree and list of cases, as a table.

    <!-- qlabench:block advise model=qwen3.5-397b tp=8 seqlens=32768,4x8192,8x1024 -->
    <!-- qlabench:block advise model=qwen3.5-397b tp=8 seqlens=32768,8192 workload=train gpu=H200 -->

`workload` is `prefill` (the default: the forward) or `train` (a training step: forward and backward). `gpu`, as
`advise --gpu`: the rows of that GPU model only (a page about one card's evidence names it); the table's first
line names the GPU model(s) its answers come from either way.
Each case's recommendation, its time and speedup over FLA, the runner-up, the runs the times come from,
and the caveats that say a library's own choice is the wrong one or that rows are missing; the same
`answer_case` the command runs, on the current evidence.
"""

from __future__ import annotations

from qlabench.analyze.answer.answer import answer_case, of_gpu
from qlabench.analyze.answer.launch_probe import between_processes_note, eager_unverified
from qlabench.analyze.answer.question import make_question
from qlabench_publish.blocks.context import BlockContext
from qlabench_publish.blocks.params import int_param
from qlabench.analyze.evidence.problem import cards
from qlabench.core.errors import ConfigError
from qlabench.core.text import md_code


def advise_block(ctx: BlockContext, model: str, tp: str, seqlens: str, current: str = "fla",
                 workload: str = "prefill", gpu: str | None = None) -> str:
    if workload not in ("prefill", "train"):  # decode is the serving page's (serving-against), by batch not seqlens
        raise ConfigError(f"parameter workload={workload}: must be prefill or train")
    q = make_question(model, int_param("tp", tp), workload, seqlens, None, current, gpu=gpu)
    cases = [_answered(ctx, q, c) for c in q.cases]
    devices = sorted({c.device for c in cases if c.device})
    runs = sorted({r for c in cases for e in c.entries for r in e.runs})
    tag = {r: chr(ord("A") + i) for i, r in enumerate(runs)}
    h_qk, h_v = q.heads
    asked = "" if workload == "prefill" else f" --workload {workload}"
    what = "prefill" if workload == "prefill" else "a training step (forward + backward)"
    launched = sorted({c.launch for c in cases if any(e.ok for e in c.entries)}) or [q.launch_regime]
    how = " and ".join({"eager": f"launched eagerly{_eager_standing(cases)}",
                        "graph": "replayed in a CUDA graph"}[x] for x in launched)
    asked += f' --gpu "{gpu}"' if gpu else ""
    on_gpu = f" on {' and '.join(devices)}" if devices else ""
    lines = [f"{q.model} at TP{q.tp} (h {h_qk}/{h_v}){on_gpu}, {what}, the published gate, times of the call {how}; "
             f"`qlabench advise --model {q.model} --tp {q.tp} --seqlens {seqlens}{asked}` on the current evidence:", "",
             f"| case | use | ms | x vs {current} | runner-up | runs (use, runner-up; {current}) |",
             "|---|---|---:|---:|---|---|"]
    notes = []
    for c in cases:
        timed = [e for e in c.entries if e.ok]
        if not timed:
            lines.append(f"| {c.case.label} | no backend has a correct time here | - | - | - | - |")
        else:
            best, second = timed[0], (timed[1] if len(timed) > 1 else None)
            runner = f"{second.backend} ({second.time_ms:.3f})" if second else "-"
            x = f"{best.speedup:.2f}x" if best.speedup else "-"
            used = sorted({tag[r] for r in best.runs + (second.runs if second else ())})
            base = next((e for e in c.entries if e.backend == current and e.ok), None)
            base_runs = f"; {', '.join(sorted({tag[r] for r in base.runs}))}" if base else ""
            use = (f"tie: {', '.join(md_code(e.backend) for e in c.tie_set)}" if c.tied else md_code(best.backend)) \
                if c.best else f"none yet; provisional {md_code(best.backend)}"
            lines.append(f"| {c.case.label} | {use} | {best.time_ms:.3f} | {x} | {runner} | "
                         f"{', '.join(used)}{base_runs} |")
        # the between-process notes are the header's (_eager_standing); one naming rows of the unprimed probe says
        # which times read high
        notes += [f"- {c.case.label}: {n}" for n in c.caveats
                  if n.startswith(("unmeasured:", "unranked:", "launch:", "auto CP:", "tie:", "check:", "order:",
                                   "eager:")) and not between_processes_note(n)]
    # the card of each run: a time that sums or compares runs of two cards (a training step's forward and backward,
    # a speedup) holds the cards' difference too, and the reader must be able to see it
    on = {r: cards(ctx.rows[ctx.rows["run_id"] == r]) for r in runs}
    lines += ["", "Runs: " + "; ".join(f"{tag[r]} = {ctx.run_label(r)}"
                                       + (f" on {', '.join(c[:12] for c in on[r])}" if on[r] else "")
                                       for r in runs) + "."]
    if len({c for r in runs for c in on[r]}) > 1:
        lines.append("These runs ran on more than one card: a time or ratio across runs of two cards also holds the "
                     "cards' and the runs' difference.")
    recommended = {c.best.backend: c.best.call for c in cases if c.best and c.best.call}
    if recommended:
        lines += ["", "The calls:", "", *(f"- `{b}`: `{call}`" for b, call in recommended.items())]
    if notes:
        lines += ["", *notes]
    return "\n".join(lines)


def _eager_standing(cases) -> str:
    """What the header says of the eager times, from the cases' own eager notes: unverified where a launch-bound
    call was measured in one process only or by the unprimed probe, ranked on its range where each was measured in
    several, nothing where no ranked call is launch-bound."""
    notes = [n for c in cases for n in c.caveats]
    if any(eager_unverified(n) for n in notes):
        return " (unverified: docs/BENCHMARKS.md, 'Three times')"
    if any(between_processes_note(n) for n in notes):
        return (" (launch-bound calls ranked on the range of their times in fresh processes: docs/BENCHMARKS.md, "
                "'Three times')")
    return ""


def answer_runs_block(ctx: BlockContext, models: str, seqlens: str, workload: str = "prefill",
                      gpu: str | None = None) -> str:
    """`<!-- qlabench:block answer-runs models=qwen3.5-397b:8+4,sym-h32:1 seqlens=32768,4x8192 -->`: for each model
    at each TP degree, how many runs and cards the times of its answer come from (every candidate with a time, every
    case): an answer is one run's when that is 1, and the count says how far each is from it. `gpu`: the answers
    on that GPU model (as `advise --gpu`); None: each case's largest problem, whichever GPU model holds it."""
    out = ["| model at TP | heads | runs | cards | one run |", "|---|---|---:|---:|---|"]
    asked = one = mixing = 0
    for model, tps in _models(models):
        for tp in tps:
            q = make_question(model, tp, workload, seqlens, None, "fla", gpu=gpu)
            per_case = [{r for e in _answered(ctx, q, c).entries if e.ok for r in e.runs} for c in q.cases]
            runs = sorted(set().union(*per_case))
            # an answer whose cases each rank one run's times, from different runs, compares no two runs; one
            # whose case holds times of several runs does
            mixing += any(len(rs) > 1 for rs in per_case)
            per_run = [cards(ctx.rows[ctx.rows["run_id"] == r]) for r in runs]
            on, unknown = {c for cs in per_run for c in cs}, sum(not cs for cs in per_run)
            # a run that recorded no card may have run on any: it is counted apart, never as one of the others
            where = f"{len(on)}" + (f" (+ {unknown} run{'s' * (unknown > 1)} without one recorded)" if unknown else "")
            asked, one = asked + 1, one + (len(runs) == 1)
            out.append(f"| {q.model} TP{q.tp} | {q.heads[0]}/{q.heads[1]} | {len(runs)} | {where} | "
                       f"{'yes' if len(runs) == 1 else 'no'} |")
    mixed = "sum or rank times of several runs (`advise`'s `mixed runs` caveat names them)"
    apart = "rank each case on one run's times, their cases from different runs"
    spread = asked - one - mixing
    if mixing and spread:
        others = f"; of the others, {mixing} {mixed} and {spread} {apart}"
    elif mixing or spread:
        others = f"; the others {mixed if mixing else apart}"
    else:
        others = ""
    on = f" on {gpu}" if gpu else ""
    return "\n".join([f"{one} of {asked} answers ({workload}, cases {seqlens}){on} cite one run{others}:", "", *out])


def _answered(ctx: BlockContext, q, case):
    """`answer_case` on the context's rows, once per render for each question and case: a page's `advise` and
    `answer-runs` blocks ask the same ones."""
    seen = ctx.derived(_no_answers)
    if (q, case) not in seen:
        rows = ctx.rows
        if q.gpu is not None:  # as `advise --gpu`: that GPU model's rows, its same-call floor read from them too
            if ("rows", q.gpu) not in seen:
                seen[("rows", q.gpu)] = of_gpu(ctx.rows, q.gpu)[0]
            rows = seen[("rows", q.gpu)]
        seen[(q, case)] = answer_case(rows, q, case)
    return seen[(q, case)]


def _no_answers(ctx: BlockContext) -> dict:
    return {}


def _models(value: str) -> list[tuple[str, list[int]]]:
    """'qwen3.5-397b:8+4,sym-h32:1' -> [('qwen3.5-397b', [8, 4]), ('sym-h32', [1])]."""
    out = []
    for part in value.split(","):
        model, _, tps = part.partition(":")
        if not model or not tps:
            raise ConfigError(f"parameter models={value}: each entry is MODEL:TP[+TP...], got {part!r}")
        out.append((model, [int_param("models", t) for t in tps.split("+")]))
    return out
