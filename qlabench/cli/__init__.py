"""The `qlabench` command line: thin commands over the library, registered here, one module per group.

    app.py        the Typer apps, the consoles, the error boundary (`command` registers behind it)
    options.py    options several commands share, declared once; checks of the paths commands write to
    run.py        run sweep
    info.py       backends, models, suites
    plot.py       plot, plot-sm
    report.py     report (the FlashQLA study page; --serving: the decode/mtp page)
    show.py       show (the speedup table of stored results)
    advise.py     advise (which kernel for a model, TP degree and sequence mix)
    site.py       site (a static HTML site of the evidence)
    profile.py    profile, kernels, _ncu-child
    compare.py    compare, gate
    baseline.py   baseline save
    gate_study.py compare-study
    ab.py         ab (two variants, interleaved rounds)
    merge.py      merge
    warmup.py     warmup, _warm-group
    autotune.py   autotune-regret
    cold_start.py cold-start (first calls in a fresh process, kernel caches empty and warm)
    views.py, listings.py, progress.py   rich renderings, listings and the sweep progress bar
    records.py    a table too wide for the console as one block per row

Every command is registered by name through `command()` and its module is imported only when it runs
(cli/lazy.py), behind the one error boundary: a QlabenchError becomes `error: ...` on stderr and exit code 2;
any other exception is a bug and keeps its traceback.

This repository's own publishing (the docs' blocks and their check, the harness's self-benchmarks) has no command
here: it is not installed with qlabench, and runs from a checkout as `python -m qlabench_publish` (publish/).
"""

from __future__ import annotations

from qlabench.cli.app import app, baseline_app, command, run_app, serve

app.add_typer(run_app, name="run")
command(run_app, "sweep", "run:sweep_cmd")
command(app, "warmup", "warmup:warmup_cmd")
command(app, "autotune-regret", "autotune:autotune_regret_cmd")
command(app, "_warm-group", "warmup:warm_group_cmd", hidden=True)
command(app, "backends", "info:backends_cmd")
command(app, "models", "info:models_cmd")
command(app, "suites", "info:suites_cmd")
command(app, "plot", "plot:plot_cmd")
command(app, "plot-sm", "plot:plot_sm_cmd")
command(app, "report", "report:report_cmd")
command(app, "show", "show:show_cmd")
command(app, "advise", "advise:advise_cmd")
command(app, "site", "site:site_cmd")
command(app, "profile", "profile:profile_cmd")
command(app, "kernels", "profile:kernels_cmd")
command(app, "_ncu-child", "profile:ncu_child_cmd", hidden=True)
command(app, "compare", "compare:compare_cmd")
command(app, "gate", "compare:gate_cmd")
app.add_typer(baseline_app, name="baseline")
command(baseline_app, "save", "baseline:baseline_save_cmd")
command(app, "compare-study", "gate_study:compare_study_cmd")
command(app, "ab", "ab:ab_cmd")
command(app, "merge", "merge:merge_cmd")
command(app, "cold-start", "cold_start:cold_start_cmd")


def main() -> None:
    """The console script (`qlabench`) and `python -m qlabench`."""
    serve(app)


__all__ = ["app", "main"]
