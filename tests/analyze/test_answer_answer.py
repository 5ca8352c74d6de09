"""The answer from stored rows (analyze/answer/): ranking, correctness, versions, caveats from data, missing points;
and the suite `advise` writes for the missing points (analyze/advise/suite.py)."""

from __future__ import annotations

import pytest

from qlabench.analyze.advise import advise
from qlabench.analyze.answer import answer_question, make_question
from qlabench.core.backend_decl import candidates, decl_of
from qlabench.core.spec import parse_suite
from qlabench.store.files import write_rows

import tomllib

H = dict(h_qk=2, h_v=8, K=128, V=128, dtype="bfloat16", model="qwen3.5-397b", tp=8, layout="varlen", batch=1,
         seqlens=(32768,), num_seqs=1, total_tokens=32768, timer="graph", rel_noise=0.003)


def rows(make_row, *specs, run="r1", ts="2026-01-01T00:00:00+00:00", **common):
    out = []
    for backend, ms, *rest in specs:
        extra = rest[0] if rest else {}
        fields = {**H, **common, "backend": backend, "run_id": run, "timestamp": ts, "median_ms": ms,
                  "samples_ms": (ms,) * 3 if ms else (), "flash_qla_version": "0.1.3", "fla_version": "0.6.0",
                  **extra}
        if ms is None:
            fields.setdefault("status", "incorrect")
        out.append(make_row(**fields))
    return out


def elsewhere(make_row, *backends):
    """Rows of `backends` at another case (one 8192-token prompt): the evidence holds them, so each is a candidate
    of every answer drawn from it (a backend with no row anywhere, e.g. an installed plugin, is not)."""
    return rows(make_row, *[(b, 0.5) for b in backends], run="other", seqlens=(8192,), total_tokens=8192)


def ask(tmp_path, rs, seqlens="32768", gate=None, current="fla", answer=answer_question):
    write_rows(tmp_path / "r.parquet", rs)
    return answer(make_question("qwen3.5-397b", 8, "prefill", seqlens, gate, current), [tmp_path / "r.parquet"])


def test_ranked_fastest_first_with_speedups_against_the_current_choice(tmp_path, make_row):
    ans = ask(tmp_path, rows(make_row, ("fla", 0.9), ("flash_qla", 0.4), ("flashinfer", 1.6)))
    c = ans.cases[0]
    assert [e.backend for e in c.entries] == ["flash_qla", "fla", "flashinfer"]
    assert c.fastest.backend == "flash_qla" and c.entries[0].speedup == pytest.approx(0.9 / 0.4)
    assert c.entries[1].speedup == pytest.approx(1.0)


def test_an_incorrect_kernel_is_never_ranked_with_a_time(tmp_path, make_row):
    ans = ask(tmp_path, rows(make_row, ("fla", 0.9), ("flash_qla", None, {"reason": "err_o 0.9 > 0.02"})))
    c = ans.cases[0]
    assert c.fastest.backend == "fla"
    bad = next(e for e in c.entries if e.backend == "flash_qla")
    assert bad.status == "incorrect" and bad.time_ms is None and bad.speedup is None and "err_o" in bad.reason


def test_rows_of_two_library_versions_are_not_mixed_the_older_is_a_caveat(tmp_path, make_row):
    new = rows(make_row, ("fla", 0.9), ("flash_qla", 0.4), run="new", ts="2026-01-01T00:00:00+00:00")
    # The older stack's run is the newer file: "newest per point" alone would pick it.
    old = rows(make_row, ("flash_qla", 0.3, {"flash_qla_version": "0.1.2"}), run="old", ts="2026-02-01T00:00:00+00:00")
    c = ask(tmp_path, new + old).cases[0]
    fq = next(e for e in c.entries if e.backend == "flash_qla")
    assert fq.time_ms == 0.4 and fq.version == "0.1.3"
    assert any(n.startswith("version: flash_qla on flash-qla 0.1.2 measured 0.300 ms") for n in c.caveats)


def test_a_gate_caveat_only_from_rows_at_another_gate(tmp_path, make_row):
    base = rows(make_row, ("fla", 0.9), ("flash_qla", 0.4))
    c = ask(tmp_path, base).cases[0]
    assert not any(n.startswith("gate:") for n in c.caveats)
    other = rows(make_row, ("fla", 0.9), ("flash_qla", 0.24), gate_zero_frac=0.0)
    c = ask(tmp_path, base + other).cases[0]
    gate = [n for n in c.caveats if n.startswith("gate:")]
    assert len(gate) == 1 and "flash_qla 0.240 ms (1.67x)" in gate[0] and "fla " not in gate[0]
    # Asked at that other gate, the answer uses those rows.
    c = ask(tmp_path, base + other, gate="none").cases[0]
    assert c.fastest.time_ms == 0.24


def test_auto_cp_regret_tie_and_mixed_runs_are_stated(tmp_path, make_row):
    rs = rows(make_row, ("fla", 0.9), ("flash_qla", 0.5), ("flash_qla-nocp", 0.4), run="a") + \
        rows(make_row, ("flash_qla-forcecp", 0.402, {"device_index": 1, "rel_noise": 0.006}), run="b")
    c = ask(tmp_path, rs).cases[0]
    assert any(n.startswith("auto CP:") and "1.25x slower than flash_qla-nocp" in n for n in c.caveats)
    assert any(n.startswith("tie: flash_qla-nocp, flash_qla-forcecp: the same within 0.5%") for n in c.caveats)
    assert any(n.startswith("mixed runs: these times come from 2 runs") for n in c.caveats)


def test_no_current_choice_means_no_speedups(tmp_path, make_row):
    c = ask(tmp_path, rows(make_row, ("flash_qla", 0.4)), current="fla").cases[0]
    assert c.entries[0].speedup is None and any(n.startswith("current:") for n in c.caveats)


def test_missing_points_come_with_a_suite_that_measures_exactly_them(tmp_path, make_row):
    ans = ask(tmp_path, rows(make_row, ("fla", 0.9), ("flash_qla", 0.4)), seqlens="32768,4x8192", gate="zero=0.5",
              answer=advise)
    assert not ans.complete
    suite = parse_suite(tomllib.loads(ans.suite_toml))
    want = {(b, c.case.seqlens) for c in ans.cases for b in c.missing}
    assert {(p.backend, p.seqlens) for p in suite.points} == want  # fla is missing here too: it is the baseline
    assert all(p.h_qk == 2 and p.h_v == 8 and p.mode == "fwd" and p.gate_zero_frac == 0.5 for p in suite.points)
    # no row at gate zero=0.5: every candidate of both cases, i.e. each backend these rows measured
    assert len(want) == 2 * 2


FI7 = {"flashinfer_version": "0.7.2.post1"}


def test_a_library_auto_choice_slower_than_its_pinned_setting_says_so_with_the_call(tmp_path, make_row):
    rs = rows(make_row, ("fla", 0.137), ("flashinfer", 0.125, FI7), ("flashinfer-nocp", 0.052, FI7))
    c = ask(tmp_path, rs).cases[0]
    assert c.fastest.backend == "flashinfer-nocp" and c.fastest.call == decl_of("flashinfer-nocp").call
    auto = [n for n in c.caveats if n.startswith("auto CP:")]
    assert len(auto) == 1 and "flashinfer's own CP decision (flashinfer, 0.125 ms)" in auto[0]
    assert f"{0.125 / 0.052:.2f}x slower than flashinfer-nocp" in auto[0] and "(one run)" in auto[0]


def test_no_auto_caveat_where_the_library_choice_is_within_noise_of_the_pinned_one(tmp_path, make_row):
    noisy = {**FI7, "rel_noise": 0.015}
    c = ask(tmp_path, rows(make_row, ("flashinfer", 0.100, noisy), ("flashinfer-nocp", 0.099, noisy))).cases[0]
    assert not any(n.startswith("auto CP:") for n in c.caveats)


def test_the_candidates_and_calls_are_the_declarations(tmp_path, make_row):
    c = ask(tmp_path, rows(make_row, ("fla", 0.9)) + elsewhere(make_row, *candidates("prefill"))).cases[0]
    assert c.missing == [b for b in candidates("prefill") if b != "fla"]
    assert c.entries[0].call == decl_of("fla").call


def test_without_results_the_catalogs_current_rows_answer(tmp_path, make_row, monkeypatch):
    res = tmp_path / "results"
    (res / "s").mkdir(parents=True)
    (res / "i").mkdir()
    write_rows(res / "s" / "cur.parquet", rows(make_row, ("fla", 0.9), ("flash_qla", 0.4), run="cur"))
    # a history run inside the current folder, newer: never read by default
    write_rows(res / "s" / "old.parquet", rows(make_row, ("flash_qla", 0.1), run="old", ts="2026-03-01T00:00:00+00:00"))
    # a folder current for one backend only: its other rows are left out
    write_rows(res / "i" / "x.parquet", rows(make_row, ("fla-intracp", 3.0), ("fla", 0.5), run="i",
                                             ts="2026-02-01T00:00:00+00:00"))
    (res / "catalog.toml").write_text("""format = 1
[[entry]]
path = "s"
kind = "kernel-timings"
status = "current"
date = 2026-01-01
question = "q"
stack = {}
[[entry]]
path = "s/old.parquet"
kind = "kernel-timings"
status = "history"
date = 2026-03-01
question = "q"
stack = {}
superseded_by = "s"
[[entry]]
path = "i"
kind = "kernel-timings"
status = "current"
date = 2026-02-01
question = "q"
stack = {}
backends = ["fla-intracp"]
""")
    monkeypatch.chdir(tmp_path)
    ans = answer_question(make_question("qwen3.5-397b", 8, "prefill", "32768", None, "fla"))
    assert ans.from_catalog and ans.sources == ["results/s", "results/i"]
    times = {e.backend: e.time_ms for e in ans.cases[0].entries}
    assert times == {"flash_qla": 0.4, "fla": 0.9, "fla-intracp": 3.0}


def test_a_time_checked_on_a_reduced_problem_only_is_shown_unranked_and_names_no_winner(tmp_path, make_row):
    # issue 51: a kernel right on the check's 256 tokens may be wrong beyond; its time gets no rank and no speedup
    reduced = {"oracle": "naive-recurrent float32 @256 tokens", "check_tokens": 256, "err_o": 1e-3}
    full = {"oracle": "fp64-full float64 @32768 tokens", "err_o": 1e-3}
    c = ask(tmp_path, rows(make_row, ("fla", 0.9, full), ("flashinfer", 0.2, {**reduced, **FI7}))).cases[0]
    fi = next(e for e in c.entries if e.backend == "flashinfer")
    assert fi.status == "unranked" and fi.time_ms is None and fi.speedup is None
    assert "not checked at this call's size (checked on 256 tokens)" in fi.reason
    assert c.fastest.backend == "fla" and c.best is None and c.provisional.backend == "fla"
    assert any(n.startswith("unranked: flashinfer: not checked at this call's size") for n in c.caveats)
    c = ask(tmp_path, rows(make_row, ("fla", 0.9, reduced), ("flashinfer", 0.2, {**full, **FI7}))).cases[0]
    assert c.fastest.backend == "flashinfer" and c.unranked == ["fla"]


def test_a_traced_path_the_reduced_check_shared_does_not_stand_for_a_check_at_size(tmp_path, make_row):
    import json

    reduced = {"oracle": "naive-recurrent float32 @256 tokens", "check_tokens": 256, "err_o": 1e-3}
    same = {**reduced, "extra_json": json.dumps({"check_path": {"checked": "cp", "timed": "cp"}})}
    at_size = {**reduced, "oracle": "naive-recurrent float32 @256 tokens; naive-chunk float32 @32768 tokens",
               "extra_json": json.dumps({"check_path": {"checked": "unsplit", "timed": "cp",
                                                        "full_size_check": "naive-chunk float32 @32768 tokens"}})}
    c = ask(tmp_path, rows(make_row, ("fla", 0.9, at_size), ("flashinfer", 0.2, {**same, **FI7}))).cases[0]
    assert c.unranked == ["flashinfer"] and c.fastest.backend == "fla"
    c = ask(tmp_path, rows(make_row, ("fla", 0.9, at_size), ("flashinfer", 0.2, {**at_size, **FI7}))).cases[0]
    assert c.fastest.backend == "flashinfer" and not c.unranked


def test_a_time_of_an_autotuning_library_not_tuned_for_its_point_is_marked_order_dependent(tmp_path, make_row):
    import json

    c = ask(tmp_path, rows(make_row, ("fla", 0.9, {}), ("flash_qla", 0.4, {}))).cases[0]  # fla declares autotuning
    assert any(n.startswith("order: fla autotuned on whatever shape") and "divides by fla's time" in n
               for n in c.caveats)
    for where in ("point", "point-cached"):  # tuned for the point in its run, or in an earlier one (the store)
        tuned = {"extra_json": json.dumps({"autotune_tuned_for": where})}
        c = ask(tmp_path, rows(make_row, ("fla", 0.9, tuned), ("flash_qla", 0.4, {}))).cases[0]
        assert not any(n.startswith("order:") for n in c.caveats), where


def test_a_ranking_reads_the_sustained_regime_and_names_any_time_timed_otherwise(tmp_path, make_row):
    """A backend's sustained rows answer even where a newer burst run exists; a backend with only burst rows
    stays ranked, its regime on the entry and in a `regime:` note."""
    sustained = rows(make_row, ("fla", 0.9, {"timing_regime": "sustained"}),
                     ("flashinfer", 0.26, {"timing_regime": "sustained"}), run="s", ts="2026-01-01T00:00:00+00:00")
    burst = rows(make_row, ("flashinfer", 0.24, {"timing_regime": "burst"}),
                 ("flash_qla", 0.39, {"timing_regime": None}), run="b", ts="2026-02-01T00:00:00+00:00")
    c = ask(tmp_path, sustained + burst).cases[0]
    fi = next(e for e in c.entries if e.backend == "flashinfer")
    assert fi.time_ms == 0.26 and fi.runs == ("s",) and fi.regime == "sustained"
    fq = next(e for e in c.entries if e.backend == "flash_qla")
    assert fq.regime == "burst"  # recorded before the column existed: a burst
    notes = [n for n in c.caveats if n.startswith("regime:")]
    assert len(notes) == 1 and "flash_qla (burst)" in notes[0] and "flashinfer" not in notes[0]

    all_sustained = ask(tmp_path, sustained).cases[0]
    assert not any(n.startswith("regime:") for n in all_sustained.caveats)


def test_a_test_only_backend_is_never_recommended(tmp_path, make_row):
    ans = ask(tmp_path, rows(make_row, ("fla", 0.9), ("synthetic", 0.1), ("fault", 0.05), ("fla-dispatch-on", 0.2)))
    c = ans.cases[0]
    assert (c.best or c.provisional).backend == "fla" and [e.backend for e in c.entries] == ["fla"]
    assert any("fault, fla-dispatch-on, synthetic: test-only" in n for n in c.caveats)


def test_the_gate_studys_deliberate_slowdowns_recommend_nothing():
    from pathlib import Path

    results = Path(__file__).resolve().parents[2] / "results" / "h200-gate-study"
    ans = answer_question(make_question("qwen3.5-397b", 8, "prefill", "8192", None, "fla"), [results])
    assert ans.cases[0].best is None and not ans.cases[0].entries  # was: "use synthetic"


# -- one problem on one GPU model per answer; no winner over what was not measured (issue: every answer knows
#    what it stands on)

ALL_PREFILL = ("fla", "fla-intracp", "flash_qla", "flash_qla-nocp", "flash_qla-forcecp", "flashinfer",
               "flashinfer-nocp", "flashinfer-forcecp")


def every_candidate(make_row, fastest="flash_qla", **kw):
    return rows(make_row, *[(b, 0.4 if b == fastest else 0.9, FI7) for b in ALL_PREFILL], **kw)


def test_rows_of_two_gpu_models_are_never_ranked_together(tmp_path, make_row):
    h200 = every_candidate(make_row, device="NVIDIA H200")
    # the same rows relabelled as an H100's, three times the time, in another run
    h100 = rows(make_row, ("flash_qla", 1.2), ("flash_qla-forcecp", 0.4), run="copy", device="NVIDIA H100 80GB HBM3")
    ans = ask(tmp_path, h200 + h100)
    by_device = {c.device: c for c in ans.cases}
    assert set(by_device) == {"NVIDIA H200", "NVIDIA H100 80GB HBM3"}
    h200_answer = by_device["NVIDIA H200"]
    assert {e.devices for e in h200_answer.entries} == {("NVIDIA H200",)}
    assert not any("3.00x slower" in n for n in h200_answer.caveats)  # no H100 time against an H200 time
    assert h200_answer.best.backend == "flash_qla" and h200_answer.best.time_ms == 0.4
    assert any("NVIDIA H100 80GB HBM3" in n for n in ans.notes)  # says the rows hold another GPU
    assert ans.as_dict()["cases"][0]["device"] == "NVIDIA H200"


def test_rows_of_two_beta_regimes_are_two_problems_never_one_median(tmp_path, make_row):
    rs = rows(make_row, ("fla", 0.9), ("flash_qla", 0.81, {"beta_regime": "high"}),
              ("flash_qla", 0.41, {"beta_regime": "low"}))
    ans = ask(tmp_path, rs)
    times = sorted(e.time_ms for c in ans.cases for e in c.entries if e.backend == "flash_qla")
    assert times == [0.41, 0.81]  # each problem its own time, never the median of the two
    assert all(e.rel_noise < 0.1 for c in ans.cases for e in c.entries if e.ok)
    assert {c.problem for c in ans.cases} >= {"beta_regime=high", "beta_regime=low"}


def test_no_winner_where_a_candidate_that_runs_here_has_no_row(tmp_path, make_row):
    rs = rows(make_row, *[(b, 0.4 if b == "flash_qla" else 0.9) for b in ALL_PREFILL if not b.startswith("flashinfer")])
    c = ask(tmp_path, rs + elsewhere(make_row, *(b for b in ALL_PREFILL if b.startswith("flashinfer")))).cases[0]
    assert c.best is None and c.provisional.backend == "flash_qla"
    assert c.caveats[0].startswith("unmeasured: flashinfer, flashinfer-nocp, flashinfer-forcecp not measured here")
    d = c.as_dict()
    assert d["recommended"] is None and d["provisional"] == "flash_qla"
    assert d["unmeasured"] == ["flashinfer", "flashinfer-nocp", "flashinfer-forcecp"]
    # with every candidate measured, the winner is named
    assert ask(tmp_path, every_candidate(make_row)).cases[0].best.backend == "flash_qla"


def test_the_unmeasured_caveat_names_the_variants_without_rows_never_a_library_that_was_measured(tmp_path, make_row):
    """fla measured and its variant fla-intracp not: the caveat names fla-intracp, and never says fla (the library,
    whose fla backend has a time here) was not measured."""
    rs = rows(make_row, *[(b, 0.4 if b == "flash_qla" else 0.9, FI7) for b in ALL_PREFILL
                          if b not in ("fla-intracp", "flashinfer-forcecp")])
    c = ask(tmp_path, rs + elsewhere(make_row, "fla-intracp", "flashinfer-forcecp")).cases[0]
    assert c.missing == ["fla-intracp", "flashinfer-forcecp"]
    unmeasured = c.caveats[0]
    assert unmeasured.startswith("unmeasured: fla-intracp, flashinfer-forcecp not measured here: no winner is named")
    assert "fla not measured" not in unmeasured and "flashinfer not measured" not in unmeasured


def test_a_candidate_skipped_as_unavailable_on_the_host_is_unmeasured_not_absent(tmp_path, make_row):
    """FlashInfer installed but failing to import leaves skipped rows: it measured nothing, so it is named
    among the unmeasured (a backend skipped because it does not run the point is not)."""
    down = {"status": "skipped", "reason": "backend unavailable: import flashinfer.gdn_prefill failed"}
    rs = rows(make_row, *[(b, 0.4 if b == "flash_qla" else 0.9, FI7) for b in ALL_PREFILL if not b.startswith("flashinfer")],
              *[(b, 0.3, {**FI7, **down}) for b in ALL_PREFILL if b.startswith("flashinfer")])
    c = ask(tmp_path, rs).cases[0]
    assert c.best is None and c.provisional.backend == "flash_qla"
    assert c.missing == ["flashinfer", "flashinfer-nocp", "flashinfer-forcecp"]


def test_a_tie_is_read_from_the_measured_noise_not_a_fixed_floor(tmp_path, make_row):
    quiet = rows(make_row, ("flash_qla", 0.400, {"rel_noise": 0.001}), ("fla", 0.404, {"rel_noise": 0.001}))
    assert not any(n.startswith("tie:") for n in ask(tmp_path, quiet).cases[0].caveats)  # 1% apart, 0.1% noise
    noisy = rows(make_row, ("flash_qla", 0.400, {"rel_noise": 0.02}), ("fla", 0.404, {"rel_noise": 0.02}))
    assert any(n.startswith("tie:") for n in ask(tmp_path, noisy).cases[0].caveats)


def test_a_version_caveat_compares_rows_of_one_timing_regime_only(tmp_path, make_row):
    new = rows(make_row, ("fla", 1.10, {"timing_regime": "sustained", "fla_version": "0.6.0"}),
               ("flash_qla", 0.4, {"timing_regime": "sustained"}), run="new")
    old_burst = rows(make_row, ("fla", 1.00, {"timing_regime": "burst", "fla_version": "0.5.1"}), run="old",
                     ts="2025-12-01T00:00:00+00:00")
    c = ask(tmp_path, new + old_burst).cases[0]
    assert not any(n.startswith("version:") for n in c.caveats)  # burst against sustained is no version effect
    old_sustained = rows(make_row, ("fla", 1.00, {"timing_regime": "sustained", "fla_version": "0.5.1"}), run="old",
                         ts="2025-12-01T00:00:00+00:00")
    assert any(n.startswith("version: fla on fla 0.5.1") for n in ask(tmp_path, new + old_sustained).cases[0].caveats)


def test_a_gate_caveat_names_the_fastest_there_only_over_what_was_measured_there(tmp_path, make_row):
    here = rows(make_row, ("fla", 0.9), ("flashinfer", 0.3, FI7), ("flash_qla", 0.5))
    there = rows(make_row, ("fla", 0.9), ("flash_qla", 0.2), gate_zero_frac=0.0)  # FlashInfer has no row there
    gate = [n for n in ask(tmp_path, here + there).cases[0].caveats if n.startswith("gate:")]
    assert gate and "the fastest there is" not in gate[0]
    assert "the fastest measured there is flash_qla, where flashinfer has no row" in gate[0]


def test_the_suite_measures_in_the_regime_and_check_size_the_ranking_reads_with_its_baseline(tmp_path, make_row):
    """Following advise's own advice yields rows it ranks without discounting them: sustained, checked at full
    size, and the baseline of every speedup in the same run (its rows elsewhere are another run)."""
    ans = ask(tmp_path, rows(make_row, ("fla", 0.9), ("flash_qla", 0.4)) + elsewhere(make_row, "flashinfer"),
              answer=advise)
    doc = tomllib.loads(ans.suite_toml)
    assert doc["timing"]["regime"] == "sustained" and doc["check"]["full_size"] is True
    suite = parse_suite(doc)
    assert "fla" in {p.backend for p in suite.points} and "flash_qla" not in {p.backend for p in suite.points}
    assert suite.timing.regime == "sustained"


def test_times_from_two_cards_of_one_model_say_which_cards(tmp_path, make_row):
    """Every row says host = vm: the mixed-runs caveat names the physical cards the ranked times ran on."""
    rs = rows(make_row, ("fla", 0.9, {"gpu_uuid": "GPU-aaaaaaaa-1111"}), run="a", host="vm") + \
        rows(make_row, ("flash_qla", 0.4, {"gpu_uuid": "GPU-bbbbbbbb-2222"}), run="b", host="vm")
    mixed = [n for n in ask(tmp_path, rs).cases[0].caveats if n.startswith("mixed runs:")]
    assert mixed and "GPU-aaaaaaa" in mixed[0] and "GPU-bbbbbbb" in mixed[0]
    # and how to get an answer from one run: every candidate at these heads in one sweep, not a resume
    assert "one sweep of every candidate at these heads without --resume (`qlabench run sweep --heads 2/8` of" \
        in mixed[0] and mixed[0].endswith("answers from one run")


def _path(timed):
    return {"extra_json": '{"check_path": {"checked": "%s", "timed": "%s"}}' % (timed, timed)}


def test_an_auto_choice_on_the_pinned_path_is_the_same_call_not_a_slower_decision(tmp_path, make_row):
    # FlashInfer's own choice split the call (cp), as use_cp=True does: 0.8% between them is the same kernels
    # measured twice, not a wrong decision, however small each point's own noise
    rs = rows(make_row, ("fla", 0.93), ("flashinfer", 0.241, {**FI7, **_path("cp")}),
              ("flashinfer-forcecp", 0.239, {**FI7, **_path("cp")}), ("flashinfer-nocp", 0.40, {**FI7, **_path("unsplit")}))
    c = ask(tmp_path, rs).cases[0]
    assert c.fastest.backend == "flashinfer-forcecp" and c.fastest.path == "cp"
    auto = [n for n in c.caveats if n.startswith("auto CP:")]
    assert len(auto) == 1 and "took the same path (cp) as flashinfer-forcecp" in auto[0] and "slower" not in auto[0]
    # the same times where the auto call left the call unsplit: a different decision, and a slower one
    rs = rows(make_row, ("fla", 0.93), ("flashinfer", 0.241, {**FI7, **_path("unsplit")}),
              ("flashinfer-forcecp", 0.239, {**FI7, **_path("cp")}))
    auto = [n for n in ask(tmp_path, rs).cases[0].caveats if n.startswith("auto CP:")]
    assert len(auto) == 1 and "1.01x slower than flashinfer-forcecp" in auto[0]
    # untraced paths: nothing is known, and the times decide as before
    rs = rows(make_row, ("fla", 0.93), ("flashinfer", 0.241, FI7), ("flashinfer-forcecp", 0.239, FI7))
    c = ask(tmp_path, rs).cases[0]
    assert c.fastest.path is None and any("slower than flashinfer-forcecp" in n for n in c.caveats)
