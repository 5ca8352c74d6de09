"""A reduced check that ran another code path than the timed call is followed by a full-size check
(run/point.py, check_timed_path): a CP path seen only at full size is never timed unchecked."""

from __future__ import annotations

import torch

from qlabench.backends import REGISTRY
from qlabench.backends.naive import NaiveChunk
from qlabench.core.point import Point
from qlabench.core.spec import CheckSpec, Suite, TimingSpec
from qlabench.measure import env as envmod
from qlabench.measure.inputs import make_inputs
from qlabench.measure.timing import TimerPlan
from qlabench.run.point import MeasureContext, PointRow, check_timed_path


class SplitsWhenLong(NaiveChunk):
    """naive-chunk's outputs, with a path read from kernel names as a CP backend's is."""
    name = "splits-when-long"
    size_dependent_path = True

    def call_path(self, kernel_names):
        return "cp" if any("split" in k for k in kernel_names) else "unsplit"


def _setup(seqlens=(1024,)):
    p = Point(backend="naive-chunk", mode="fwd", layout="dense", batch=1, seqlens=seqlens, h_qk=2, h_v=4, K=16,
              V=16, dtype="float32")
    suite = Suite(name="t", path="<t>", points=(), timing=TimingSpec(),
                  check=CheckSpec(oracle_max_tokens=256, full_size=False))
    ctx = MeasureContext(suite=suite, device="cpu", env=envmod.capture("cpu"), run_id="r",
                         timer=TimerPlan.resolve("wall", "cpu", suite.timing), registry=REGISTRY, check=True)
    inp = make_inputs(p, "cpu")
    got = REGISTRY["naive-chunk"].prepare_point(p, inp)()
    row = PointRow(p, ctx)
    row.fields["oracle"] = "naive-recurrent float32 @256 tokens"
    return p, ctx, inp, got, row


def test_a_path_the_check_did_not_run_is_checked_at_full_size():
    p, ctx, inp, got, row = _setup()
    row.details["check_path"] = {"checked": "unsplit"}
    row.fields["kernels"] = ("gdn_split_prescan", "gdn_fwd")
    assert check_timed_path(p, SplitsWhenLong(), ctx, row, got, inp) is None
    assert row.details["check_path"]["timed"] == "cp"
    assert row.details["check_path"]["full_size_check"] == "naive-chunk float32 @1024 tokens"
    assert row.fields["oracle"].endswith("; naive-chunk float32 @1024 tokens")  # the accuracy mark reads it as full
    assert row.fields["err_o"] is not None and row.fields["err_o"] < 1e-5


def test_wrong_outputs_on_the_unchecked_path_fail_the_row():
    p, ctx, inp, got, row = _setup()
    row.details["check_path"] = {"checked": "unsplit"}
    row.fields["kernels"] = ("gdn_split_prescan",)
    bad = dict(got, o=got["o"] + 0.5 * got["o"].abs().max())
    failure = check_timed_path(p, SplitsWhenLong(), ctx, row, bad, inp)
    assert failure is not None
    assert failure.startswith("the timed call ran its cp path, the reduced check its unsplit one")
    assert "full size vs naive-chunk" in failure


def test_the_same_path_needs_no_second_check():
    p, ctx, inp, got, row = _setup()
    row.details["check_path"] = {"checked": "unsplit"}
    row.fields["kernels"] = ("gdn_fwd",)
    bad = dict(got, o=torch.full_like(got["o"], float("nan")))  # not looked at: the check covered this path
    assert check_timed_path(p, SplitsWhenLong(), ctx, row, bad, inp) is None
    assert row.details["check_path"] == {"checked": "unsplit", "timed": "unsplit"}
    assert row.fields["oracle"] == "naive-recurrent float32 @256 tokens"


def test_an_unknown_checked_path_counts_as_another_path():
    # the check's kernels said nothing (None): the timed CP call is not taken as covered
    p, ctx, inp, got, row = _setup()
    row.details["check_path"] = {"checked": None}
    row.fields["kernels"] = ("gdn_split_prescan",)
    assert check_timed_path(p, SplitsWhenLong(), ctx, row, got, inp) is None
    assert "full_size_check" in row.details["check_path"]


def test_a_row_whose_check_traced_no_path_is_left_alone():
    p, ctx, inp, got, row = _setup()
    row.fields["kernels"] = ("gdn_split_prescan",)
    assert check_timed_path(p, SplitsWhenLong(), ctx, row, got, inp) is None
    assert "check_path" not in row.details and row.fields["oracle"] == "naive-recurrent float32 @256 tokens"
