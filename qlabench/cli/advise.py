"""`qlabench advise`: the ranked answer for a model, TP degree and sequence mix (analyze/advise/)."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from rich.markup import escape

from qlabench.cli.app import console
from qlabench.cli.answers import advise_table, case_runs, run_tag
from qlabench.core.regimes import RECOMMENDED_REGIME

FORMATS = ("table", "json")


def advise_cmd(
    results: list[Path] = typer.Argument(None, help="Result files or folders (default: the current evidence "
                                         "that results/catalog.toml names)"),
    model: str = typer.Option(..., "--model", help="Model from the catalogue, e.g. qwen3.5-397b"),
    tp: int = typer.Option(1, "--tp", min=1, max=1024, help="Tensor-parallel degree the heads are divided by"),
    workload: str = typer.Option("prefill", "--workload", help="prefill (forward) or train (forward + backward)"),
    seqlens: str = typer.Option(..., "--seqlens", help="Cases, comma-separated: N (one sequence), AxN (A packed "
                                "sequences of N), N+M (packed), e.g. 32768,4x8192"),
    gate: str = typer.Option("published", "--gate", help="published (25%% zero-gate heads, /16), none (no "
                             "zero-gate heads), zero=F[,scale=S], or a TOML/JSON file with gate_zero_frac, gate_scale"),
    current: str = typer.Option("fla", "--current", help="Your current backend: speedups are against it"),
    sm_budget: int = typer.Option(None, "--sm-budget", min=1, help="Rank the rows held to this many SMs (a share "
                                  "of the GPU: docs/SM-BUDGET.md); default: the whole-GPU rows"),
    fmt: str = typer.Option("table", "--format", "-f", help="table or json"),
    suite_out: Path = typer.Option(None, "--suite-out", help="Write a suite measuring the missing points here"),
    force: bool = typer.Option(False, "--force", help="Let --suite-out replace an existing file (never a results "
                               "file)"),
    gpu: str = typer.Option(None, "--gpu", help="The GPU model the question is about (H200, GB200, \"RTX 5090\"): "
                            "its rows only, and where it has none, what FlashQLA published for that card, marked as "
                            "published, not measured (default: this machine's GPU where CUDA is present, else every "
                            "GPU of the evidence)"),
):
    """Which GDN kernel is fastest for this model, TP degree and sequence mix, with the caveats that
    change the answer; or which points are missing and a suite that measures them."""
    from qlabench.analyze.advise import advise
    from qlabench.analyze.answer import make_question
    from qlabench.core.errors import ConfigError

    if fmt not in FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if suite_out is not None:  # before any work: never replace a file silently, never a results file or an input
        _check_suite_out(suite_out, force, [*(results or ()), Path(gate)])
    if gpu is None:
        from qlabench.measure.env import local_gpu

        gpu = local_gpu()
    q = make_question(model, tp, workload, seqlens, gate, current, sm_budget, gpu)
    ans = advise(q, results or ())  # the declarations (core): no torch, no backend imported
    if suite_out is not None and ans.suite_toml:
        try:
            suite_out.write_text(ans.suite_toml)
        except OSError as e:
            raise ConfigError(f"--suite-out {suite_out}: cannot write it: {e.strerror or e}") from None
    if fmt == "json":
        print(json.dumps(ans.as_dict(), indent=2, allow_nan=False))  # NaN is no JSON: never emitted
        return
    _print(ans, suite_out)
    if ans.published is not None:
        from qlabench.cli.published_advice import print_published

        print_published(ans.published, "the current evidence" if ans.from_catalog else "these results")


def _check_suite_out(path: Path, force: bool, inputs: list[Path]) -> None:
    """Refuse a folder, a results file, the catalog and an input always (the shared rule of every output), and
    an existing file without --force (as `merge --into` does)."""
    from qlabench.cli.options import writable_file
    from qlabench.core.errors import ConfigError

    if path.is_dir():
        raise ConfigError(f"--suite-out {path} is a folder; give a file name ending in .toml")
    writable_file(path, "--suite-out", inputs=inputs)
    if path.exists() and not force:
        raise ConfigError(f"--suite-out {path} exists; pass --force to overwrite it, or choose another file")


def _verdict(case, where: str) -> list[str]:
    """What was not measured first, then the winner, a provisional one, or none; and the call to make."""
    best, prov, title = case.best, case.provisional, f"[bold]{escape(case.title)}:[/bold]"
    out = [f"{title} no winner: {escape(', '.join(case.missing))} not measured here (no row at this point and gate "
           f"in {where})"] if case.missing else []
    if best or prov:
        e = best or prov
        out.append(f"{title} use {escape(e.backend)} ({escape(e.setting)})" if best else
                   f"  provisional, among those measured only: {escape(e.backend)} ({escape(e.setting)})")
        out += [f"  call: {escape(e.call)}"] if e.call else []
        out += [f"  engine: {escape(line)}" for line in case.engines]
    elif not case.missing:
        out.append(f"{title} no backend has a correct time here")
    return out


def _print(ans, suite_out: Path | None) -> None:
    q = ans.question
    h_qk, h_v = q.heads
    console.print(f"{q.model} TP{q.tp} (h {h_qk}/{h_v}, K=V={q.head_dim}, {q.dtype}), {q.workload}, "
                  f"gate {q.gate.label}; speedups vs {q.current}"
                  + (f"; held to {q.sm_budget} SMs" if q.sm_budget else "")
                  + f"; from {', '.join(ans.sources)} ({', '.join(ans.devices) or 'no rows'})", soft_wrap=True)
    for note in ans.notes:
        console.print(f"note: {escape(note)}", soft_wrap=True)
    console.print("first call: each backend's first calls in a fresh process, kernel caches empty (cold) and as the "
                  f"cold process left them (warm), at the point named, from {escape(', '.join(ans.first_call_sources))}"
                  if ans.first_call_sources else "first call: not measured (no cold-start results: `qlabench "
                  "cold-start`, a catalog entry of kind cold-start)", soft_wrap=True, highlight=False)
    console.print(f"regime: times are read in the {RECOMMENDED_REGIME} regime where a backend has rows in it (the "
                  "regime docs/BENCHMARKS.md recommends: its calls back to back for 200 ms before the samples, as an "
                  "engine under load); a time in another regime is marked in the run column and named in a note",
                  soft_wrap=True, highlight=False)
    if any(e.extra_mem_mib is not None for c in ans.cases for e in c.entries):
        console.print("extra MiB: the most device memory a call took beyond its inputs and outputs, through torch's "
                      "allocator (the rows' extra_mem_mib; docs/SM-BUDGET.md)", soft_wrap=True, highlight=False)
    for case in ans.cases:
        console.print()
        if case.entries:
            console.print(advise_table(case))
            console.print("  runs: " + ", ".join(f"{run_tag(case, r)} = {r}" for r in case_runs(case)), soft_wrap=True)
        for line in _verdict(case, "the current evidence" if ans.from_catalog else "these results"):
            console.print(line, soft_wrap=True)
        for e in case.entries:
            if not e.ok:
                console.print(f"  {escape(e.backend)} {e.status}: {escape(str(e.reason))}", soft_wrap=True)
        for c in case.caveats:
            console.print(f"  - {escape(c)}", soft_wrap=True)
    if ans.suite_toml:
        console.print()
        if suite_out is not None:
            console.print(f"wrote a suite for the missing points to {suite_out}; measure them with:\n"
                          f"  qlabench run sweep --suite {suite_out}", soft_wrap=True)
        else:
            console.print("to measure the missing points: add --suite-out advise.toml, then\n"
                          "  qlabench run sweep --suite advise.toml", soft_wrap=True)
