"""Rich renderings of `advise`'s answers: one case as a table, its runs tagged A, B, ... (cli/advise.py prints them)."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from qlabench.core.regimes import RECOMMENDED_REGIME


def advise_table(case) -> Table:
    """One case of `advise`'s answer as a terminal table: each backend's time, speedup, noise, the device memory
    its call takes beyond its inputs and outputs, check, version, run (tagged A, B, ...) and first-call cost."""
    t = Table(title=f"{escape(case.title)} ({case.case.total_tokens} tokens)", title_justify="left")
    for c, j in (("backend", "left"), ("ms", "right"), ("speedup", "right"), ("noise", "right"),
                 ("extra MiB", "right"), ("check", "left"), ("version", "left"), ("run", "left"), ("first call", "left")):
        t.add_column(c, justify=j, overflow="fold")
    for e in case.entries:
        run = ", ".join(run_tag(case, r) for r in e.runs)  # each row says its run: a ranking may mix runs
        if e.regime and e.regime != RECOMMENDED_REGIME:  # and its regime, where it is not the one ranked on
            run += f" ({e.regime})"
        if e.ok:
            t.add_row(escape(e.backend), f"{e.time_ms:.3f}", f"{e.speedup:.2f}x" if e.speedup else "-",
                      f"{e.rel_noise:.1%}" if e.rel_noise is not None else "-",
                      f"{e.extra_mem_mib:.0f}" if e.extra_mem_mib is not None else "-",
                      "ok" + (f" {e.max_err:.0e}" if e.max_err is not None else "") + (f" {escape(e.check)}" if e.check else ""),
                      escape(e.version or "not recorded"), run, escape(e.first_call or "-"))
        else:
            t.add_row(escape(e.backend), "-", "-", "-", "-", f"[red]{e.status}[/red]", escape(e.version or "not recorded"),
                      run, escape(e.first_call or "-"))
    return t


def case_runs(case) -> list[str]:
    return sorted({r for e in case.entries for r in e.runs})


def run_tag(case, run: str) -> str:
    """A short tag per run of this case (A, B, ...), spelled out under its table."""
    return chr(ord("A") + case_runs(case).index(run))
