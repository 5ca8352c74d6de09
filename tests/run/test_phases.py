"""Where a run's time went: the rows' phases summed by kind (run/phases.py), and the line every sweep ends with."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.cli.run_time import time_line
from qlabench.run.phases import TimeBreakdown, phase_kind


def test_phases_sum_by_kind_and_what_no_point_holds_is_idle(make_row):
    rows = [make_row(phases_s={"check": 2.0, "inputs": 0.5, "first_call": 10.0, "full_size_check": 1.0},
                     sampling_s=0.25),
            make_row(phases_s={"check": 3.0, "first_call": 1.0, "kernel_capture": 0.5}, sampling_s=0.75),
            make_row(status="skipped", reason="no GPU", median_ms=None, samples_ms=(), n_samples=0)]
    b = TimeBreakdown.of(rows, wall_s=25.0, warmup_s=4.0)
    assert (b.first_calls_s, b.checks_s, b.sampling_s, b.other_s) == (11.0, 6.0, 1.0, 1.0)
    assert b.outside_s == 25.0 - 19.0 and b.unrecorded == 1 and b.total_s == 29.0
    assert time_line(b) == "time 29 s: warm-up 4.0, first calls 11, checks 6.0, sampling 1.0, other 1.0, idle 6.0"


def test_several_workers_leave_idle_seconds_of_all_of_them(make_row):
    rows = [make_row(phases_s={"first_call": 30.0}, sampling_s=0.0)] * 2  # two GPUs, 30 s each, in 40 s of wall
    b = TimeBreakdown.of(rows, wall_s=40.0, workers=2)
    assert b.outside_s == 20.0 and "2 workers" in time_line(b) and "warm-up" not in time_line(b)


def test_a_check_phase_of_any_name_is_a_check():
    assert {phase_kind(n) for n in ("check", "fp64_check", "timed_path_check", "shape_check")} == {"checks"}
    assert phase_kind("first_call") == "first calls" and phase_kind("inputs") == "other"


def test_a_cpu_sweep_ends_with_where_its_time_went(tmp_path):
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", "quick-cpu", "--out", str(tmp_path), "--backends",
                                 "naive-chunk", "--modes", "fwd", "--no-isolate"], env={"COLUMNS": "120"})
    assert r.exit_code == 0, r.output
    last = r.output.strip().splitlines()[-1]
    m = re.fullmatch(r"time ([\d.]+) s: first calls ([\d.]+), checks ([\d.]+), sampling ([\d.]+), other ([\d.]+), "
                     r"idle ([\d.]+)", last)
    assert m, last
    total, *parts = map(float, m.groups())
    assert float(m.group(4)) > 0 and float(m.group(3)) > 0  # the rows' sampling and checks were counted
    assert abs(sum(parts) - total) <= 0.1 * len(parts)  # the parts add up to the run's time (to their rounding)
