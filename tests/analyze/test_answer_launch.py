"""The answer in the launch regime its workload's users run (issue 51): eager and graph rankings, a training step
as one fwd_bwd call, ties from the measured same-call spread and from another run's order."""

from __future__ import annotations

import json

from qlabench.analyze.answer import answer_question, make_question
from qlabench.analyze.answer.launch_probe import BETWEEN_PROCESSES
from qlabench.analyze.answer.spread import same_call_floor
from qlabench.store.files import write_rows

H = dict(h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16", model="qwen3.5-397b", tp=8, layout="varlen", batch=1,
         seqlens=(32768,), num_seqs=1, total_tokens=32768, timer="graph", rel_noise=0.003, eager_rel_noise=0.01,
         flash_qla_version="0.1.3", fla_version="0.6.0")


def row(make_row, backend, device_ms, eager_ms, run="r1", mode="fwd", **extra):
    return make_row(**{**H, "backend": backend, "run_id": run, "mode": mode, "median_ms": device_ms,
                       "device_ms": device_ms, "eager_ms": eager_ms, "host_ms": eager_ms * 0.9, **extra})


def ask(tmp_path, rows, workload="prefill", launch=None, seqlens="32768"):
    write_rows(tmp_path / "r.parquet", rows)
    q = make_question("qwen3.5-397b", 8, workload, seqlens, None, "fla", launch=launch)
    return answer_question(q, [tmp_path / "r.parquet"])


def test_a_prefill_ranks_on_the_eager_time_by_default_and_on_the_device_time_when_asked(tmp_path, make_row):
    rs = [row(make_row, "fla", 0.9, 1.5), row(make_row, "flash_qla", 0.39, 0.47),
          row(make_row, "flash_qla-nocp", 0.99, 1.1)]
    eager = ask(tmp_path, rs).cases[0]
    assert eager.launch == "eager" and eager.fastest.backend == "flash_qla" and eager.fastest.time_ms == 0.47
    assert eager.fastest.device_ms == 0.39 and eager.fastest.launch_bound is None  # not recorded in these rows
    assert BETWEEN_PROCESSES in eager.caveats
    graph = ask(tmp_path, rs, launch="graph").cases[0]
    assert graph.launch == "graph" and graph.fastest.time_ms == 0.39


def test_the_unverified_eager_note_is_for_launch_bound_calls_only(tmp_path, make_row):
    """A call whose eager time is its device time (not launch-bound) is checked by that device time: its eager
    ranking says nothing of the launch probe; one launch-bound candidate brings the note back."""
    bound = [row(make_row, "fla", 3.6, 3.62, launch_bound=False),
             row(make_row, "flash_qla", 1.05, 1.06, launch_bound=False)]
    assert not any(n.startswith("eager:") for n in ask(tmp_path, bound).cases[0].caveats)
    bound[1] = row(make_row, "flash_qla", 1.05, 2.6, launch_bound=True)
    assert BETWEEN_PROCESSES in ask(tmp_path, bound).cases[0].caveats


def _launch(calls, **more):
    return json.dumps({"eager_launch": {"calls_per_burst": calls, "bursts": 15, "timer": "events", **more}})


def test_an_eager_time_from_the_unprimed_probe_is_named_and_unverified(tmp_path, make_row):
    """Rows of the probe before it primed its bursts (one to three calls a burst) read high: the answer names those
    entries; a launch-bound entry of the primed probe keeps the between-process note; a graph ranking needs
    neither."""
    rs = [row(make_row, "fla", 3.6, 4.8, launch_bound=True, extra_json=_launch(1)),
          row(make_row, "flash_qla", 1.05, 1.8, launch_bound=True, extra_json=_launch(4, primed=True)),
          row(make_row, "flash_qla-nocp", 7.0, 7.8, launch_bound=True, extra_json=_launch(3))]
    notes = ask(tmp_path, rs).cases[0].caveats
    stale = [n for n in notes if n.startswith("eager: ")]
    assert stale[0].startswith("eager: fla, flash_qla-nocp: measured before qlabench's probe primed its bursts")
    assert BETWEEN_PROCESSES in notes  # flash_qla's own time is the primed probe's
    rs[1] = row(make_row, "flash_qla", 1.05, 1.8, launch_bound=True, extra_json=_launch(2))
    notes = ask(tmp_path, rs).cases[0].caveats
    assert BETWEEN_PROCESSES not in notes
    assert any(n.startswith("eager: every launch-bound time here: measured before") for n in notes)
    assert not any(n.startswith("eager:") for n in ask(tmp_path, rs, launch="graph").cases[0].caveats)


def test_where_the_two_regimes_have_different_winners_the_answer_says_so_in_one_line(tmp_path, make_row):
    # a fast kernel behind a costly launch: fastest on the device, slowest eagerly (FlashQLA's auto CP at 1x8192)
    rs = [row(make_row, "fla", 0.9, 1.0), row(make_row, "flash_qla", 0.163, 0.539),
          row(make_row, "flash_qla-nocp", 0.254, 0.323)]
    c = ask(tmp_path, rs).cases[0]
    assert c.fastest.backend == "flash_qla-nocp"
    lines = [n for n in c.caveats if n.startswith("launch: replayed in a CUDA graph, flash_qla is fastest")]
    assert len(lines) == 1 and "(--launch graph)" in lines[0]


def test_no_launch_line_where_the_other_regimes_winner_ties_this_regimes_winner(tmp_path, make_row):
    """FlashQLA fastest in a graph, and eagerly the same as its -nocp within their noise (27B TP1 8192 on an H100):
    the winner does not depend on the launch, whichever of the tie is listed first."""
    rs = [row(make_row, "fla", 1.0, 3.1), row(make_row, "flash_qla", 0.5, 2.058, eager_rel_noise=0.02),
          row(make_row, "flash_qla-nocp", 0.9, 2.05, eager_rel_noise=0.02)]
    c = ask(tmp_path, rs).cases[0]
    assert c.fastest.backend == "flash_qla-nocp"
    assert not any(n.startswith("launch: replayed in a CUDA graph") for n in c.caveats)
    rs[1] = row(make_row, "flash_qla", 0.5, 2.3, eager_rel_noise=0.02)  # beyond the noise: the line comes back
    assert any(n.startswith("launch: replayed in a CUDA graph, flash_qla is fastest")
               for n in ask(tmp_path, rs).cases[0].caveats)


def test_rows_without_an_eager_time_are_ranked_on_their_device_time_and_the_answer_says_so(tmp_path, make_row):
    rs = [make_row(**{**H, "backend": b, "run_id": "old", "median_ms": ms}) for b, ms in (("fla", 0.9),
                                                                                        ("flash_qla", 0.4))]
    c = ask(tmp_path, rs).cases[0]
    assert c.launch == "graph" and c.fastest.backend == "flash_qla"
    assert any(n.startswith("launch: these rows recorded no eager time") for n in c.caveats)
    # asked for explicitly, the regime is never swapped: nothing is ranked, each entry says why
    asked = ask(tmp_path, rs, launch="eager").cases[0]
    assert asked.fastest is None and set(asked.unranked) == {"fla", "flash_qla"}


def test_a_training_step_is_one_fwd_bwd_call_never_a_forward_and_a_backward_added_up(tmp_path, make_row):
    rs = [row(make_row, "flash_qla", 0.39, 0.47), row(make_row, "flash_qla", 0.6, 0.9, mode="bwd_train"),
          row(make_row, "fla", 0.9, 1.5), row(make_row, "fla", 2.7, 3.1, mode="bwd_train"),
          row(make_row, "fla", 3.6, 4.8, mode="fwd_bwd", run="steps")]
    c = ask(tmp_path, rs, workload="train").cases[0]
    assert [e.backend for e in c.entries] == ["fla"] and c.entries[0].modes == ("fwd_bwd",)
    assert c.entries[0].time_ms == 4.8 and c.launch == "eager"


def test_two_times_within_the_measured_same_call_spread_are_a_tie(tmp_path, make_row):
    # pairs of one call under two names (the auto setting took the pinned one's path) measured apart by ~1.5%
    same = {"extra_json": json.dumps({"call_path": "cp"})}
    rs = []
    for i in range(6):
        T = 4096 * (i + 2)
        shape = dict(seqlens=(T,), total_tokens=T)
        rs += [row(make_row, "flashinfer", 0.2, 0.3, flashinfer_version="0.7.4", **shape, **same),
               row(make_row, "flashinfer-forcecp", 0.203, 0.5, flashinfer_version="0.7.4", **shape, **same)]
    rs += [row(make_row, "fla", 0.9, 1.0), row(make_row, "flash_qla", 0.4, 0.47),
           row(make_row, "flash_qla-nocp", 0.405, 0.476)]
    floor = same_call_floor(__import__("pandas").DataFrame([r.as_dict() for r in rs]), "eager")
    assert floor.pairs == 6 and 0.014 < floor.floor < 0.016  # read off the device times: the eager gap is host work
    c = ask(tmp_path, rs, launch="graph").cases[0]
    assert c.tied and [e.backend for e in c.tie_set] == ["flash_qla", "flash_qla-nocp"]
    assert any(n.startswith("tie: flash_qla, flash_qla-nocp: the same within 1.2%") for n in c.caveats)


def test_a_winner_another_run_orders_the_other_way_is_a_tie(tmp_path, make_row):
    rs = [row(make_row, "fla", 0.9, 1.0, run="a", timestamp="2026-01-02T00:00:00+00:00"),
          row(make_row, "flash_qla", 0.40, 0.45, run="a", timestamp="2026-01-02T00:00:00+00:00"),
          row(make_row, "flash_qla-nocp", 0.50, 0.55, run="a", timestamp="2026-01-02T00:00:00+00:00"),
          row(make_row, "flash_qla", 0.52, 0.60, run="b", timestamp="2026-01-01T00:00:00+00:00"),
          row(make_row, "flash_qla-nocp", 0.50, 0.56, run="b", timestamp="2026-01-01T00:00:00+00:00")]
    c = ask(tmp_path, rs).cases[0]
    assert c.fastest.backend == "flash_qla" and c.flips == ["b"] and c.tied and c.tie_set[1].backend == "flash_qla-nocp"
    # run b measured both again in fresh processes: their ranges overlap, so the tie line names the range (the
    # line naming the run that ordered them the other way is for a runner-up the range does not already tie)
    assert any(n.startswith("tie: flash_qla, flash_qla-nocp") for n in c.caveats)
    assert any(n.startswith("spread: measured in fresh processes here, flash_qla 0.450-0.600 ms in 2")
               for n in c.caveats)


def test_a_call_measured_in_fresh_processes_ranks_inside_the_range_they_span(tmp_path, make_row):
    """FlashQLA's launch-bound training step read 1.19-1.68 ms eagerly in four processes on one H100: one run's
    row alone (its own noise a few percent) would call it faster than a rival inside that range. Measured again in
    fresh processes (another run's replicates), the entry's noise is the range, the two are a tie, and the eager
    note says the ranking stands on the range rather than calling it unverified."""
    t = dict(timestamp="2026-01-02T00:00:00+00:00")
    rs = [row(make_row, "flash_qla", 1.05, 1.30, run="a", launch_bound=True, eager_rel_noise=0.02, **t),
          row(make_row, "fla", 1.30, 1.40, run="a", launch_bound=True, eager_rel_noise=0.02, **t),
          row(make_row, "flash_qla-nocp", 7.0, 7.1, run="a", launch_bound=False, eager_rel_noise=0.02, **t)]
    c = ask(tmp_path, rs).cases[0]
    assert c.fastest.backend == "flash_qla" and not c.tied and c.fastest.processes == 1
    assert BETWEEN_PROCESSES in c.caveats
    later = dict(timestamp="2026-01-03T00:00:00+00:00")
    rs += [row(make_row, b, d, e, run="reps", replicate=i, launch_bound=True, eager_rel_noise=0.02, **later)
           for i, (e_q, e_f) in enumerate([(1.2, 1.38), (1.6, 1.41)])
           for b, d, e in (("flash_qla", 1.05, e_q), ("fla", 1.3, e_f))]
    c = ask(tmp_path, rs).cases[0]
    q = next(e for e in c.entries if e.backend == "flash_qla")
    # the run of every candidate is still the answer's (the replicates' run lacks -nocp): the others widen its noise
    assert q.time_ms == 1.30 and q.runs == ("a",)
    assert q.processes == 3 and q.process_range == (1.2, 1.6) and abs(q.rel_noise - 0.4 / 1.3) < 1e-9
    assert c.tied and {e.backend for e in c.tie_set} == {"flash_qla", "fla"}
    assert any(n.startswith("spread: measured in fresh processes here, flash_qla 1.200-1.600 ms in 3")
               for n in c.caveats)
    assert BETWEEN_PROCESSES not in c.caveats
    assert any(n.startswith("eager: the launch-bound calls here were each measured in fresh processes")
               for n in c.caveats)


def test_the_unprimed_probe_and_other_versions_never_widen_a_range(tmp_path, make_row):
    """An eager time of the probe before it primed its bursts reads high for a reason of the method, and a row of
    another version is another call: neither is a re-measurement of the ranked call."""
    rs = [row(make_row, "flash_qla", 1.05, 1.30, run="a", launch_bound=True, timestamp="2026-01-02T00:00:00+00:00",
              extra_json=_launch(4, primed=True)),
          row(make_row, "flash_qla", 1.05, 2.60, run="old", launch_bound=True, timestamp="2026-01-01T00:00:00+00:00",
              extra_json=_launch(1)),
          row(make_row, "fla", 3.6, 3.62, run="a", launch_bound=False, timestamp="2026-01-02T00:00:00+00:00")]
    c = ask(tmp_path, rs).cases[0]
    q = next(e for e in c.entries if e.backend == "flash_qla")
    assert q.processes == 1 and not any(n.startswith("spread:") for n in c.caveats)
    graph = ask(tmp_path, rs, launch="graph").cases[0]  # the device times of both runs agree: nothing to widen
    assert next(e for e in graph.entries if e.backend == "flash_qla").processes == 2
    assert not any(n.startswith("spread:") for n in graph.caveats)
