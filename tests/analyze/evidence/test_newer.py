"""Newer evidence elsewhere: a folder beside the shown one that measured the same problem later is named,
with how far it disagrees and what the rows recorded differently; `qlabench show` prints it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from qlabench.analyze.evidence.newer import DISAGREE, newer_evidence
from qlabench.cli import app
from qlabench.store.files import read_results, write_rows

OLD, NEW = "2026-11-29T18:00:00+00:00", "2026-11-30T16:00:00+00:00"
KKT, STATE = "chunk_gated_delta_rule_fwd_kkt_solve_kernel", "chunk_gated_delta_rule_fwd_kernel_h_blockdim64"


@pytest.fixture
def tree(tmp_path, make_row):
    """results/README.md, results/smoke (older, dense) and results/study (newer, the same lengths packed)."""
    root = tmp_path / "results"
    root.mkdir()
    (root / "README.md").write_text("committed results\n")
    common = dict(backend="fla", h_qk=2, h_v=8, seqlens=(4096,), total_tokens=4096, timer="graph",
                  kernels=(KKT, STATE))
    ms_old, ms_new = 1.127, 0.927
    assert abs(ms_new / ms_old - 1) > DISAGREE
    old = [make_row(run_id="smoke", timestamp=OLD, layout="dense", median_ms=ms_old, samples_ms=(ms_old,) * 3,
                    kernel_dur_us=(293.0, 599.0), **common),
           make_row(run_id="smoke", timestamp=OLD, layout="dense", h_qk=4, h_v=16, median_ms=2.0,
                    samples_ms=(2.0,) * 3, backend="fla", seqlens=(4096,), total_tokens=4096, timer="graph")]
    new = [make_row(run_id="study", timestamp=NEW, layout="varlen", median_ms=ms_new, samples_ms=(ms_new,) * 3,
                    kernel_dur_us=(89.0, 594.0), **common),
           make_row(run_id="study", timestamp=NEW, layout="varlen", h_qk=4, h_v=16, median_ms=2.01,
                    samples_ms=(2.01,) * 3, backend="fla", seqlens=(4096,), total_tokens=4096, timer="graph")]
    write_rows(root / "smoke" / "smoke.parquet", old)
    write_rows(root / "study" / "study.parquet", new)
    return root


def test_a_newer_disagreeing_folder_is_named_with_what_differs(tree):
    shown = read_results([tree / "smoke"])
    check = newer_evidence(shown, [tree / "smoke"])
    (found,) = check.newer
    assert found.folder.endswith("study") and found.n_points == 2 and found.n_disagree == 1
    why = dict(found.differences)
    assert why["layout dense here, varlen there"] == 1
    assert why[f"the kernel that moved most: {KKT}"] == 1
    assert found.ratio_range == pytest.approx((0.927 / 1.127,) * 2)
    assert "newer evidence: 2 of these points were measured again in" in check.lines[0]


def test_the_newer_folder_is_not_marked_by_the_older_one(tree):
    shown = read_results([tree / "study"])
    assert newer_evidence(shown, [tree / "study"]).newer == ()


def test_folders_outside_an_evidence_root_are_not_searched(tree):
    (tree / "README.md").unlink()
    shown = read_results([tree / "smoke"])
    assert newer_evidence(shown, [tree / "smoke"]).newer == ()


def test_show_marks_the_older_evidence(tree):
    result = CliRunner().invoke(app, ["show", str(tree / "smoke"), "--format", "markdown"])
    assert result.exit_code == 0, result.output
    assert "newer evidence: 2 of these points were measured again in" in result.output
    assert "layout dense here, varlen there" in result.output
    quiet = CliRunner().invoke(app, ["show", str(tree / "smoke"), "--no-other-evidence"])
    assert quiet.exit_code == 0 and "newer evidence" not in quiet.output


def test_each_folder_is_paired_with_its_own_newest_row_of_a_problem(tree, make_row):
    # The scan narrows every folder at once: a problem measured again in two folders is still answered per
    # folder, each by its own newest row (an older row of the same folder never answers).
    LATER, LATEST = "2026-12-01T10:00:00+00:00", "2026-12-01T12:00:00+00:00"
    common = dict(backend="fla", h_qk=2, h_v=8, seqlens=(4096,), total_tokens=4096, timer="graph", layout="dense")
    write_rows(tree / "again" / "again.parquet",
               [make_row(run_id="again", timestamp=LATER, median_ms=5.0, samples_ms=(5.0,) * 3, **common),
                make_row(run_id="again2", timestamp=LATEST, median_ms=1.13, samples_ms=(1.13,) * 3, **common)])
    shown = read_results([tree / "smoke"])
    found = {n.folder.rsplit("/", 1)[-1]: n for n in newer_evidence(shown, [tree / "smoke"]).newer}
    assert set(found) == {"again", "study"}
    again = found["again"]
    assert again.n_points == 1 and again.n_disagree == 0 and again.newest == LATEST  # 1.13 against 1.127
    assert found["study"].n_points == 2 and found["study"].n_disagree == 1


def test_a_folder_the_catalog_calls_cold_start_is_no_newer_evidence(tree):
    """A cold-start run times a point right after the first calls that compiled it, for 50 ms: beside the
    shown rows it is no re-measurement of their steady time."""
    (tree / "catalog.toml").write_text(
        'format = 1\n[[entry]]\npath = "study"\nkind = "cold-start"\nstatus = "current"\ndate = 2026-11-30\n'
        'question = "first calls"\nstack = {}\n')
    shown = read_results([tree / "smoke"])
    assert newer_evidence(shown, [tree / "smoke"]).newer == ()
    (tree / "catalog.toml").write_text((tree / "catalog.toml").read_text().replace("cold-start", "kernel-timings"))
    assert len(newer_evidence(shown, [tree / "smoke"]).newer) == 1


def test_a_newer_row_no_view_believes_is_no_newer_evidence(tree, make_row):
    # a newer folder whose rows are impossible (over an hour a call, or unchecked) names nothing
    common = dict(backend="fla", h_qk=2, h_v=8, seqlens=(4096,), total_tokens=4096, timer="graph", layout="dense",
                  timestamp="2026-12-01T00:00:00+00:00")
    write_rows(tree / "zz-bad" / "bad.parquet", [make_row(run_id="bad", median_ms=1e29, **common),
                                                 make_row(run_id="bad", median_ms=0.5, oracle=None, err_o=None,
                                                          **{**common, "h_qk": 4, "h_v": 16})])
    (tree / "study" / "study.parquet").unlink()
    check = newer_evidence(read_results([tree / "smoke"]), [tree / "smoke"])
    assert check.newer == () and check.lines == [], check.lines


def test_a_refused_newest_row_gives_way_to_the_next_newest_of_its_folder(tree, make_row):
    # the folder's newest row of the problem is impossible (over an hour a call); its row before that, still
    # measured after the shown one, is the newer evidence. Rows of other problems come first in the folder, so
    # the refused row is not the scan's first row (the refusal once dropped rows by their rank: a KeyError).
    common = dict(backend="fla", h_qk=2, h_v=8, seqlens=(4096,), total_tokens=4096, timer="graph", layout="dense")
    rows = [make_row(run_id=f"other{i}", median_ms=9.0, timestamp=f"2026-11-30T0{i}:00:00+00:00",
                     **{**common, "h_qk": 8, "h_v": 32}) for i in range(5)]
    rows += [make_row(run_id="good", median_ms=0.5, timestamp="2026-11-30T10:00:00+00:00", **common),
             make_row(run_id="bad", median_ms=1e29, timestamp="2026-12-01T00:00:00+00:00", **common)]
    write_rows(tree / "zz" / "z.parquet", rows)
    (tree / "study" / "study.parquet").unlink()
    (found,) = newer_evidence(read_results([tree / "smoke"]), [tree / "smoke"]).newer
    assert found.folder.endswith("zz") and found.newest.startswith("2026-11-30T10") and found.n_points == 1
    assert found.n_disagree == 1 and found.ratio_range == pytest.approx((0.5 / 1.127,) * 2)
