"""Prose that cannot drift (qlabench_publish/blocks/prose.py): every decimal a page states outside its generated blocks is a
block's, or what the runs and files its dated section cites hold, or sits in an unchecked section that says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlabench_publish.blocks.prose import check_prose, unchecked_lines
from qlabench.store.files import write_rows

REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
BLOCK = ["<!-- qlabench:block flashinfer-cp -->", "auto / unsplit is 0.42 in geometric mean",
         "<!-- /qlabench:block -->"]


@pytest.fixture
def tree(tmp_path, make_row):
    """A checkout: run R1 (two backends at one shape, one at another), run R2 in its own folder, a log, a csv."""
    rows = [make_row(run_id="R1", backend="fla", median_ms=0.2371, samples_ms=(0.2301, 0.2371, 0.2502)),
            make_row(run_id="R1", backend="flash_qla", median_ms=0.1302, sm_coverage=0.8312, compile_s=75.04),
            make_row(run_id="R1", backend="fla", seqlens=(128,), total_tokens=128, median_ms=0.91)]
    write_rows(tmp_path / "results" / "study" / "R1.parquet", rows)
    write_rows(tmp_path / "results" / "other" / "R2.parquet", [make_row(run_id="R2", median_ms=3.5)])
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "run.log").write_text("wall 67.74 s, noise 0.0049, speedup 1.48\nerr 4.3612e-03\n")
    (tmp_path / "docs").mkdir()
    return tmp_path


def check(tree: Path, *lines: str, name: str = "P.md"):
    page = tree / "docs" / name
    page.write_text("\n".join(["# P", "", *lines, ""]))
    return check_prose(tree, [page])


def drift(tree: Path, *lines: str) -> list[str]:
    return [d.text for d in check(tree, *lines).drift]


def dated(cite: str, *lines: str) -> list[str]:
    return [f"<!-- qlabench:dated {cite} -->", *lines, "<!-- /qlabench:dated -->"]


# -- (a) a block's number, anywhere on any page ---------------------------------------------------------------

def test_a_number_a_block_prints_may_be_repeated_anywhere_and_no_other(tree):
    assert drift(tree, *BLOCK, "", "## Later", "", "In short: 0.42; FlashInfer 0.7.2, torch 2.13 and vLLM 0.33 "
                 "(versions), qwen3.5-0.8b (a name), `--threshold 0.03` (code), K^-0.5 (an exponent), on 0.6.x.") == []
    (d,) = drift(tree, *BLOCK, "", "## Later", "", "FlashInfer is 1.82x FLA here.")
    assert d.startswith("docs/P.md:9: 1.82x is stated outside the generated blocks")


def test_fences_indented_code_comments_and_code_spans_state_no_number(tree):
    assert drift(tree, "```", "0.5 s", "```", "", "    --rep-ms 0.25", "", "<!-- 0.7 -->",
                 "text `0.9 over", "two lines` end") == []


# -- (b) runs --------------------------------------------------------------------------------------------------

def test_a_dated_sections_times_are_its_runs_medians_fastest_slowest_samples_or_deciles(tree):
    assert drift(tree, *dated("run=R1", "fla at 0.237 ms (fastest 0.230, slowest 0.250 ms)")) == []
    (d,) = drift(tree, *dated("run=R1", "fla at 0.255 ms"))  # above the slowest sample
    assert "docs/P.md:4: 0.255 ms is no time of run(s) R1" in d


def test_a_ratio_or_a_change_is_that_of_two_medians_of_one_problem(tree):
    assert drift(tree, *dated("run=R1", "FLA is 1.82x FlashQLA here (+82.1%), a row over itself 1.00x")) == []
    (d,) = drift(tree, *dated("run=R1", "FLA is 7.0x FlashQLA here"))  # 0.91 / 0.1302: two problem shapes
    assert "7.0x is no ratio of the medians of two rows of one problem in run(s) R1" in d


def test_a_named_column_or_a_unit_checks_the_value_of_that_column(tree):
    assert drift(tree, *dated("run=R1", "its `sm_coverage` is 0.83; `compile_s` 75.0 s for its group")) == []
    (d,) = drift(tree, *dated("run=R1", "its `sm_coverage` is 0.91 s"))
    assert "0.91 s is no value of run(s) R1 in a s column" in d


def test_a_table_column_named_in_code_in_its_header_checks_that_columns_values(tree):
    """A header cell may name its column in code, as prose does ('FlashQLA (`sm_coverage`)'): the code span is no
    prose, but the name it holds still says which column the cells below quote."""
    table = ["| backend | FlashQLA (`sm_coverage`) |", "|---|---:|", "| flash_qla | 0.83 |"]
    assert drift(tree, *dated("run=R1", *table)) == []
    (d,) = drift(tree, *dated("run=R1", *table[:2], "| flash_qla | 0.77 |"))
    assert "0.77 is no time of run(s) R1" in d


def test_a_run_is_cited_by_id_or_by_results_path_and_must_exist(tree):
    assert drift(tree, *dated("run=results/other", "it took 3.5 ms")) == []
    (d,) = drift(tree, *dated("run=R9", "it took 3.5 ms"))
    assert d == "docs/P.md:3: the dated section cites run R9, which no results file holds"
    (d,) = drift(tree, *dated("run=results/none", "it took 3.5 ms"))
    assert "cites run results/none, which does not exist" in d


def test_a_run_id_two_files_hold_must_be_cited_by_its_path(tree, make_row):
    write_rows(tree / "results" / "copy" / "R1.parquet", [make_row(run_id="R1", median_ms=9.9)])
    (d,) = drift(tree, *dated("run=R1", "0.237 ms"))
    assert "cites run R1, which 2 results files hold" in d and "cite the file or folder" in d


# -- (c) files -------------------------------------------------------------------------------------------------

def test_a_file_dated_section_quotes_the_file_at_the_decimals_shown(tree):
    assert drift(tree, *dated("file=logs/run.log", "67.7 s wall; noise 0.49%; 4.36e-3 and 4.4e-3")) == []
    (d,) = drift(tree, *dated("file=logs/run.log", "67.9 s wall"))
    assert d == "docs/P.md:4: 67.9 s is in none of the file(s) logs/run.log at the decimals shown"
    (d,) = drift(tree, *dated("file=logs/run.log", "a speedup of 1.480x"))  # the log shows 2 decimals, not 3
    assert "1.480x is in none of the file(s)" in d


def test_a_cited_file_must_exist_be_text_and_not_a_checked_page(tree):
    (tree / "docs" / "Q.md").write_text("# Q\n")
    for cite, says in (("file=logs/none.log", "which does not exist"),
                       ("file=results/study/R1.parquet", "a results file: cite it as run="),
                       ("file=../x.log", "outside the checkout")):
        (d,) = drift(tree, *dated(cite, "67.7 s"))
        assert d.startswith("docs/P.md:3: the dated section cites file") and says in d, d
    page = tree / "docs" / "P.md"
    page.write_text("\n".join(dated("file=docs/Q.md", "67.7 s")))
    (d,) = check_prose(tree, [page, tree / "docs" / "Q.md"]).drift
    assert "a page docs check reads" in d.text


def test_a_ratio_beside_the_two_numbers_it_divides_is_checked_by_arithmetic(tree):
    assert drift(tree, *dated("file=logs/run.log", "| 67.74 | 45.7<!-- qlabench:unchecked why=\"w\" --> | 1.48 |")) \
        == []
    (d,) = drift(tree, *dated("file=logs/run.log", "67.74 s against 45.7<!-- qlabench:unchecked why=\"w\" --> s: "
                              "2.2x"))
    assert "2.2x is in none of the file(s)" in d


# -- how sharp a check is -------------------------------------------------------------------------------------

def test_a_number_whose_neighbours_pass_too_is_counted_blurred_and_one_held_alone_is_not(tree):
    # R1's fla row samples 0.2301, 0.2371 and 0.2502: its deciles fill 0.23-0.25, so at two decimals 0.23 and 0.25
    # pass beside 0.24, while at three no row holds 0.238 beside 0.237
    report = check(tree, *dated("run=R1", "FLA at 0.24 ms", "FLA at 0.237 ms"))
    assert report.drift == []
    assert report.blurred["docs/P.md"] == [2, 1]
    assert unchecked_lines(report)[-2:] == [
        "numbers checked against cited runs and files: 2; blurred (their last digit one up and one down would pass "
        "too, so the check cannot tell them from a neighbour): 1 (50%)",
        "  docs/P.md: 1 of 2 blurred; most in the dated section at line 3 (1 of 2, its runs holding 3 rows)"]


def test_a_drift_is_not_counted_as_checked(tree):
    report = check(tree, *dated("run=R1", "FLA at 0.301 ms"))
    assert len(report.drift) == 1 and report.blurred["docs/P.md"] == [0, 0]


# -- (d) unchecked ---------------------------------------------------------------------------------------------

def test_an_unchecked_section_is_counted_with_its_reason(tree):
    report = check(tree, '<!-- qlabench:unchecked why="FLA\'s own test tolerances" -->', "0.005 on o, 0.007 on dq",
                   "<!-- /qlabench:unchecked -->")
    assert report.drift == []
    assert unchecked_lines(report)[1] == '  docs/P.md: 1 unchecked: "FLA\'s own test tolerances" (line 4)'


def test_an_inline_mark_exempts_the_number_or_range_right_before_it(tree):
    report = check(tree, *dated("file=logs/run.log", 'wall 67.7 s; at most 1.05-1.45x<!-- qlabench:unchecked '
                                'why="the Amdahl bound" --> here'))
    assert report.drift == [] and report.unchecked[0].why == "the Amdahl bound" and report.unchecked[0].inline
    marked, loose = drift(tree, "text <!-- qlabench:unchecked why=\"w\" --> 1.5")
    assert "an inline unchecked mark follows no decimal number on its line" in marked
    assert loose.startswith("docs/P.md:3: 1.5 is stated outside")  # a mark speaks of the number before it only


def test_an_unchecked_section_needs_a_reason_and_a_number(tree):
    ds = drift(tree, '<!-- qlabench:unchecked why=" " -->', "0.5 s", "<!-- /qlabench:unchecked -->")
    assert ds == ['docs/P.md:3: an unchecked section gives no reason: <!-- qlabench:unchecked why="the reason" -->']
    (d,) = drift(tree, '<!-- qlabench:unchecked why="w" -->', "no number", "<!-- /qlabench:unchecked -->")
    assert "holds no decimal number: remove its markers" in d


# -- the markers -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lines, says", [
    (["<!-- qlabench:dated run=R1 -->", "0.237 ms"], "3: the dated section opened here is never closed"),
    (['<!-- qlabench:unchecked why="w" -->', "0.5"], "3: the unchecked section opened here is never closed"),
    (["0.237 ms", "<!-- /qlabench:dated -->"], "4: a closing dated marker without an opening one"),
    (["<!-- qlabench:dated run=R1 -->", '<!-- qlabench:unchecked why="w" -->', "0.5", "<!-- /qlabench:unchecked -->",
      "<!-- /qlabench:dated -->"], "4: a unchecked section opens inside the dated section opened at line 3"),
    (["<!-- qlabench:dated runs=R1 -->", "text"], "3: this line reads like a dated or unchecked marker but is not"),
    (["<!-- qlabench:unchecked -->", "text"], "3: this line reads like a dated or unchecked marker but is not"),
])
def test_a_malformed_marker_is_a_drift_naming_its_line(tree, lines, says):
    assert any(d.startswith(f"docs/P.md:{says}") for d in drift(tree, *lines)), drift(tree, *lines)


def test_a_marker_in_a_code_fence_is_example_text(tree):
    assert drift(tree, "```", "<!-- qlabench:dated run=R9 -->", "```") == []


# -- the committed docs ----------------------------------------------------------------------------------------

def test_the_committed_pages_hold_the_rule():
    from qlabench_publish.blocks.files import doc_files

    report = check_prose(REPO, doc_files(REPO))
    assert not report.drift, "; ".join(p.text for p in report.drift)
    assert report.numeric_lines["docs/FLASHINFER.md"]["dated"] > 0


def test_flashinfer_page_claims_only_what_its_blocks_show():
    """The sentences that outran their blocks: 'ahead of FlashQLA on every layout above' over a table where
    FlashQLA wins a layout, 'at every head configuration' over a one-heads block, a superseded run's counts."""
    text = (REPO / "docs" / "FLASHINFER.md").read_text()
    assert "on every layout above" not in text and "at every head configuration of the study:" not in text
    assert "# the run above: 114 rows" not in text
    # the count is the block's, from the rows (3 layouts since FlashInfer 0.7.4: the TP8 answers run is the one run
    # with FlashQLA beside it; 19 while the study run of 0.7.2 was current)
    assert "Fastest beyond the noise, of 3 layouts:" in text
