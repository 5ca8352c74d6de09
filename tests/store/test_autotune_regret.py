"""The autotune-regret table's files (store/autotune_regret.py) and the study page's section that shows them."""

from __future__ import annotations

from qlabench.analyze.study.page import autotune_regret_section
from qlabench.store.autotune_regret import CSV_NAME, RegretCell, find_regret_files, read_regret, write_regret


def _cells():
    own = {"1x32768": 0.9, "8x1024": 0.2}
    cells = []
    for timed, own_ms in own.items():
        for tuned_on in own:
            t = own_ms * (1.0 if tuned_on == timed else 1.3)
            cells.append(RegretCell(heads="2/8 K128 V128 bfloat16", tuned_on=tuned_on, timed=timed, median_ms=t,
                                    own_ms=own_ms, regret=round(t / own_ms, 4), backend="fla",
                                    configs_differ=tuned_on != timed))
    return cells


def test_files_round_trip_and_are_found_below_a_results_folder(tmp_path):
    folder = tmp_path / "results" / "h200-x" / "autotune-regret"
    csv_path, md_path = write_regret(_cells(), folder)
    assert read_regret(csv_path) == _cells()
    assert find_regret_files([tmp_path / "results" / "h200-x"]) == [csv_path]
    assert find_regret_files([csv_path]) == [csv_path]
    assert find_regret_files([tmp_path / "nowhere"]) == []
    assert "| 2/8 K128 V128 bfloat16 | 1x32768 | 0.900 | 1.30x | 1.30x | 8x1024 | 1 of 1 |" in md_path.read_text()


def test_the_study_page_shows_every_table_among_its_sources_and_says_when_there_is_none(tmp_path):
    write_regret(_cells(), tmp_path / "run" / "autotune-regret")
    shown = "\n".join(autotune_regret_section((str(tmp_path / "run"),)))
    assert "| 2/8 K128 V128 bfloat16 | 8x1024 | 0.200 | 1.30x |" in shown
    assert CSV_NAME in shown
    none = "\n".join(autotune_regret_section((str(tmp_path / "empty"),)))
    assert "No autotune-regret table" in none
