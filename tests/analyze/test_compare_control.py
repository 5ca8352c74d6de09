"""A gate that cannot see its threshold does not pass: inconclusive points exit 3 (unless accepted), and a control
timed on both sides refuses or normalises a host shift (analyze/compare/control.py).

The hostile cases of issue 51, on synthetic rows with run-level offsets (as separate processes give): a ~30% slower
plugin on a noisy box once passed `compare` ("PASS: 4 not gateable") and `ab` (a green comment), and against a
baseline saved while the box was loaded it passed as "faster" (the unchanged naive backend had moved 80%).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from qlabench.analyze.compare import CompareOptions, Verdict
from qlabench.analyze.compare.comment import comment
from qlabench.analyze.compare.comparison import compare_frames
from qlabench.analyze.compare.control import control_shift
from qlabench.analyze.compare.render import markdown, summary_line, to_json
from qlabench.analyze.compare.verdict import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_NOT_COMPARED
from qlabench.core.errors import StoreError

PLUGIN, CONTROL = "naive-chunk", "naive-recurrent"  # a kernel under test, and one the change leaves alone


def rows(make_row, rng, backend, medians, *, reps=3, sigma_run=0.01, factor=1.0, run_id="r", n=30):
    """`reps` replicates of each point, each with its own run-level offset exp(N(0, sigma_run)), 1% per call."""
    out = []
    for r in range(reps):
        for i, m in enumerate(medians):
            s = m * factor * math.exp(rng.normal(0.0, sigma_run)) * np.exp(rng.normal(0.0, 0.01, n))
            out.append(make_row(run_id=run_id, backend=backend, seed=i, replicate=r,
                                timestamp=f"2025-01-01T00:{r:02d}:00+00:00", samples_ms=tuple(s),
                                median_ms=float(np.median(s)), n_samples=n).as_dict())
    return pd.DataFrame(out)


@pytest.fixture
def rng():
    return np.random.default_rng(51)


def test_a_thirty_percent_slower_plugin_on_a_noisy_box_is_inconclusive_not_a_pass(make_row, rng):
    medians = [0.4, 0.8, 1.2, 1.6, 2.0, 2.4]  # five or more: no point's noise is taken below the suite's median
    base = rows(make_row, rng, PLUGIN, medians, sigma_run=0.20, run_id="b")
    head = rows(make_row, rng, PLUGIN, medians, sigma_run=0.20, factor=1.3, run_id="h")
    c = compare_frames(base, head)
    # was "PASS: 4 not gateable", exit 0
    assert c.counts["inconclusive"] == 6 and c.exit_code == EXIT_INCONCLUSIVE
    assert summary_line(c).startswith("INCONCLUSIVE (exit 3): 6 inconclusive")
    md = markdown(c, command="qlabench compare")
    assert md.startswith("### :grey_question: qlabench compare: INCONCLUSIVE") and ":white_check_mark:" not in md
    assert to_json(c).count('"exit_code": 3') == 1
    accepted = compare_frames(base, head, accept_inconclusive=True)
    assert accepted.exit_code == 0 and summary_line(accepted).startswith("PASS, 6 inconclusive accepted")


def test_an_ab_comment_of_a_noisy_slowdown_is_headed_inconclusive_not_a_green_pass(make_row, rng):
    medians = [0.4, 0.8, 1.2, 1.6, 2.0, 2.4]
    a = rows(make_row, rng, PLUGIN, medians, sigma_run=0.20, run_id="ab-a")
    b = rows(make_row, rng, PLUGIN, medians, sigma_run=0.20, factor=1.3, run_id="ab-b")
    c = compare_frames(a, b, paired=True, allow_env_mismatch=True, base_label="A = v1", head_label="B = v2")
    assert c.exit_code == EXIT_INCONCLUSIVE and all(p.stats.paired for p in c.pairs)
    headline = comment(c, "qlabench ab").splitlines()[1]
    assert headline.startswith("### :grey_question: qlabench ab: INCONCLUSIVE (exit 3)"), headline


def _host_shift(make_row, rng, *, plugin=1.3, load=1.8, sigma_run=0.01, control_sigma=None):
    """Base saved while the box was loaded (every time x `load`), head on the quiet box with the plugin
    `plugin` times slower; the control's code is unchanged."""
    medians = [0.4, 0.8, 1.2, 1.6]
    cs = sigma_run if control_sigma is None else control_sigma
    base = pd.concat([rows(make_row, rng, PLUGIN, medians, sigma_run=sigma_run, factor=load, run_id="b"),
                      rows(make_row, rng, CONTROL, medians, sigma_run=cs, factor=load, run_id="b")])
    head = pd.concat([rows(make_row, rng, PLUGIN, medians, sigma_run=sigma_run, factor=plugin, run_id="h"),
                      rows(make_row, rng, CONTROL, medians, sigma_run=cs, run_id="h")])
    return base, head


def test_a_host_shift_no_longer_passes_a_slower_plugin_as_faster(make_row, rng):
    base, head = _host_shift(make_row, rng)
    blind = compare_frames(base, head)  # without a control: what the gate said before ("PASS: 4 faster")
    assert {p.verdict for p in blind.pairs if p.backend == PLUGIN} == {Verdict.FASTER} and blind.exit_code == 0
    c = compare_frames(base, head, CompareOptions(control=CONTROL))
    assert c.control.action == "normalised" and c.control.ratio == pytest.approx(1 / 1.8, rel=0.03)
    mine = [p for p in c.pairs if p.backend == PLUGIN]
    assert {p.verdict for p in mine} == {Verdict.SLOWER} and c.exit_code == EXIT_FAIL
    assert all(p.change == pytest.approx(0.3, abs=0.05) for p in mine)
    assert all(p.reason.startswith(f"relative to the host shift its control {CONTROL} measured -44") for p in mine)
    # it says what it did, with the measured shift, in the notes and the headline
    assert any(n.startswith(f"host shift: control {CONTROL} moved -44") and "divided by 0.5" in n for n in c.notes)
    assert f"host shift -44" in summary_line(c) and "normalised" in summary_line(c)


def test_a_refused_host_shift_is_not_a_pass_and_judges_no_time(make_row, rng):
    base, head = _host_shift(make_row, rng, plugin=1.0)
    c = compare_frames(base, head, CompareOptions(control=CONTROL, host_shift="refuse"))
    assert c.refused and c.exit_code == EXIT_NOT_COMPARED
    assert {p.verdict for p in c.pairs} == {Verdict.INCONCLUSIVE} and not c.failures
    assert all(p.reason.startswith("not judged: the host moved") for p in c.pairs)
    assert summary_line(c).startswith("NOT A PASS (exit 2)") and "refused" in summary_line(c)
    # --accept-inconclusive accepts noisy points, never a comparison refused for a host shift
    assert compare_frames(base, head, CompareOptions(control=CONTROL, host_shift="refuse"),
                          accept_inconclusive=True).exit_code == EXIT_NOT_COMPARED


def test_an_unchanged_host_changes_nothing_and_a_control_too_noisy_to_see_one_passes_nothing(make_row, rng):
    base, head = _host_shift(make_row, rng, plugin=1.0, load=1.0, sigma_run=0.005)  # floors under the 3% threshold
    c = compare_frames(base, head, CompareOptions(control=CONTROL))
    assert c.control.action == "none" and c.exit_code == 0
    assert {p.verdict for p in c.pairs} == {Verdict.SAME}
    assert any(n.startswith(f"no host shift seen: control {CONTROL} moved") for n in c.notes)
    # the plugin's points are quiet and 20% faster, but the control is too noisy to rule out a shift that large
    base, head = _host_shift(make_row, rng, plugin=0.8, load=1.0, sigma_run=0.005, control_sigma=0.3)
    c = compare_frames(base, head, CompareOptions(control=CONTROL))
    mine = [p for p in c.pairs if p.backend == PLUGIN]
    assert c.control.unseen > 0.25 and {p.verdict for p in mine} == {Verdict.INCONCLUSIVE}
    assert all(f"a host shift control {CONTROL} cannot rule out" in p.reason for p in mine)
    assert c.exit_code == EXIT_INCONCLUSIVE


def test_a_named_control_with_no_time_on_both_sides_is_refused(make_row, rng):
    base = rows(make_row, rng, PLUGIN, [0.4, 0.8], run_id="b")
    head = rows(make_row, rng, PLUGIN, [0.4, 0.8], run_id="h")
    with pytest.raises(StoreError, match=f"control {CONTROL}: no point of it has an ok time on both sides"):
        compare_frames(base, head, CompareOptions(control=CONTROL))


def test_the_control_shift_uses_the_larger_of_its_noise_and_the_spread_between_its_points():
    # replicates agree to 0.1%, but the points moved -40% and -10%: a load change need not slow every shape alike
    cs = control_shift(CONTROL, [([1.0, 1.001, 0.999], [0.6, 0.6006, 0.5994]),
                                 ([2.0, 2.002, 1.998], [1.8, 1.8018, 1.7982])], 0.01)
    assert cs.points == 2 and cs.ratio == pytest.approx(math.sqrt(0.6 * 0.9), rel=1e-3)
    assert not cs.beyond_noise and cs.ci_low < 0.3 and cs.noise == pytest.approx(0.001, rel=0.2)
    same = control_shift(CONTROL, [([1.0, 1.0], [1.0, 1.0])], 0.01)
    assert same.ratio == 1.0 and not same.beyond_noise and same.unseen == 0.0
    unknown = control_shift(CONTROL, [([1.0], [2.0])], 0.01)
    assert unknown.noise is None and unknown.unseen == math.inf and not unknown.beyond_noise
    assert control_shift(CONTROL, [([], [1.0])], 0.01) is None


def test_the_control_options_are_checked():
    from qlabench.core.errors import QlabenchError

    with pytest.raises(QlabenchError, match="--host-shift"):
        CompareOptions(host_shift="ignore")
    with pytest.raises(QlabenchError, match="choose one"):
        CompareOptions(control=CONTROL, drift=True)
