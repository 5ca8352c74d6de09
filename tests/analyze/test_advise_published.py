"""advise's "published, not measured" section (qlabench/analyze/advise/published.py): FlashQLA's rows for the GPU a
question is about, at its heads and sequences, or the nearest ones, said to be the nearest."""

from __future__ import annotations

from qlabench.analyze.advise import advise
from qlabench.analyze.advise.published import published_answer
from qlabench.analyze.answer import make_question
from qlabench.analyze.data.published_tables import published_table, read_published_csv

import study_rows


def published_row(gpu: str, mode: str, h_qk: int, h_v: int, seqlens: str = "", total: int = 0, n: int = 0) -> dict:
    pub = read_published_csv(published_table(gpu).file)
    p = pub[(pub["mode"] == mode) & (pub["h_qk"] == h_qk) & (pub["h_v"] == h_v)]
    p = p[p["seqlens"] == seqlens] if seqlens else p[(p["total_tokens"] == total) & (p["num_seqs"] == n)]
    assert len(p) == 1
    return p.iloc[0].to_dict()


def test_the_exact_published_row_of_the_question_on_that_card():
    q = make_question("qwen3.5-397b", 8, "prefill", "32768,4x8192", gpu="RTX 5090")
    ans = published_answer(q, list(q.cases), measured_nothing=True)
    assert ans.table.gpu == "NVIDIA GeForce RTX 5090" and ans.measured_nothing
    (one,), (packed,) = (c.rows for c in ans.cases)
    want = published_row("RTX 5090", "fwd", 2, 8, "32768")
    assert one.times_ms == {"flash_qla": want["flash_qla_ms"], "flashinfer": want["flashinfer_ms"], "fla": want["fla_ms"]}
    assert one.nearest == () and ans.cases[0].exact and one.model_config == want["model_config"]
    assert packed.sequences == "4x8192" and packed.times_ms["flash_qla"] == published_row(
        "RTX 5090", "fwd", 2, 8, "+".join(["8192"] * 4))["flash_qla_ms"]


def test_heads_or_sequences_the_table_lacks_give_the_nearest_row_said_so():
    q = make_question("qwen3.5-27b", 4, "prefill", "20000", gpu="GB200")  # 27B at TP4: h 4/12, not published
    (case,) = published_answer(q, list(q.cases), measured_nothing=True).cases
    (r,) = case.rows
    assert not case.exact and r.nearest == ("heads 4/12", "sequences 20000")
    assert r.heads != (4, 12) and r.times_ms["flash_qla"] == published_row("GB200", "fwd", *r.heads,
                                                                            r.sequences)["flash_qla_ms"]


def test_a_training_question_gets_the_forward_and_the_published_backward():
    q = make_question("qwen3.5-35b", 2, "train", "8192", gpu="GB200")  # h 8/16: a published backward head pair
    (case,) = published_answer(q, list(q.cases), measured_nothing=True).cases
    fwd, bwd = case.rows
    assert (fwd.mode, bwd.mode) == ("fwd", "bwd") and bwd.nearest == () and "flashinfer" not in bwd.times_ms
    assert bwd.times_ms["fla"] == published_row("GB200", "bwd", 8, 16, total=8192, n=1)["fla_ms"]
    # the RTX 5090's table has no backward: the section shows its forward only
    q5090 = make_question("qwen3.5-35b", 2, "train", "8192", gpu="RTX 5090")
    assert [r.mode for r in published_answer(q5090, list(q5090.cases), True).cases[0].rows] == ["fwd"]


def test_a_gpu_flashqla_publishes_nothing_for_says_which_it_does():
    q = make_question("qwen3.5-397b", 8, "prefill", "32768", gpu="B200")
    ans = published_answer(q, list(q.cases), measured_nothing=True)
    assert ans.table is None and ans.cases == () and "GB200" in ans.tables and ans.as_dict()["table"] is None


def test_advise_shows_published_rows_only_for_a_gpu_with_no_rows_of_the_case():
    q = make_question("qwen3.5-397b", 8, "prefill", "32768", gpu="RTX 5090")
    ans = advise(q, [study_rows.FIXTURE])  # the fixture's rows ran on an H200
    assert ans.devices == [] and all(not c.entries for c in ans.cases)
    assert ans.published is not None and ans.published.measured_nothing
    assert any("left out" in n and "NVIDIA H200" in n for n in ans.notes)
    d = ans.as_dict()
    assert d["question"]["gpu"] == "RTX 5090" and d["published"]["measured_by_qlabench"] is False
    on_h200 = advise(make_question("qwen3.5-397b", 8, "prefill", "32768", gpu="H200"), [study_rows.FIXTURE])
    assert on_h200.published is None and on_h200.devices == ["NVIDIA H200"] and on_h200.cases[0].entries
    everyone = advise(make_question("qwen3.5-397b", 8, "prefill", "32768"), [study_rows.FIXTURE])
    assert everyone.published is None  # no GPU asked about: no published section
