"""The SM-budget study (issue 43; docs/SM-BUDGET.md): rows held to shares of one GPU's SMs, per budget the
winner, each library's auto-CP regret against its pinned settings, time against SMs per backend, and each
call's extra device memory beside its time. Pure pandas and matplotlib; reads the store.

Computing (`build_budget_study`, `budget_from_paths` -> `BudgetStudy`) is apart from rendering (`figures.py`,
`write_budget_page`: the markdown page and its PNGs).
"""

from qlabench.analyze.sm_budget.study import BudgetStudy, budget_from_paths, build_budget_study

__all__ = ["BudgetStudy", "budget_from_paths", "build_budget_study", "write_budget_page"]


def write_budget_page(study, out_dir, command=None):
    """Write the SM-budget page (sm-budget.md) and its PNGs into out_dir; returns PageFiles(page, figures)."""
    from qlabench.analyze.sm_budget.page import write_budget_page as _write

    return _write(study, out_dir, command)
