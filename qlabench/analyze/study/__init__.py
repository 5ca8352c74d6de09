"""The FlashQLA study: our results against FlashQLA's published H200 table, in one page.

Computing (`build_study`, `study_from_paths` -> `Study`) is apart from rendering (`figures` returns
matplotlib Figures, `write_report` writes the markdown page and its PNGs). Reads the store only. The docs'
`study-summary` and `auto-cp-regret` blocks quoting it are this repository's publishing
(publish/qlabench_publish/blocks/study.py).
"""

from qlabench.analyze.study.published import load_published
from qlabench.analyze.study.study import DEFAULT_TOLERANCE, Study, Summary, build_study, study_from_paths

__all__ = ["DEFAULT_TOLERANCE", "Study", "Summary", "build_study", "load_published", "study_from_paths",
           "write_report"]


def write_report(study, out_dir, layer_rows=None):
    """Write the study's page (report.md) and PNGs into out_dir; returns ReportFiles(page, figures)."""
    from qlabench.analyze.study.page import write_report as _write

    return _write(study, out_dir, layer_rows)
