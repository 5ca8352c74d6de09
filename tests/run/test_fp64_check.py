"""`[check] reference = "fp64-full"`: each point's errors at its real size against the float64 reference,
in the row's err_* columns, with `oracle` naming the reference; parsed and validated in the suite file."""

from __future__ import annotations

import math

import pytest
import torch
from typer.testing import CliRunner

from qlabench.run.options import InProcess, RunOptions
from qlabench.backends import REGISTRY
from qlabench.backends.base import Backend
from qlabench.backends.naive import NaiveStep
from qlabench.backends.reference import recurrent_gated_delta_rule
from qlabench.backends.reference.fp64_full import reference_outputs
from qlabench.cli import app
from qlabench.core.errors import SpecError
from qlabench.core.spec import CheckSpec, load_suite, parse_suite
from qlabench.measure.correctness import rel_l2
from qlabench.measure.inputs import make_inputs
from qlabench.run.sweep import run_sweep
from qlabench.store.files import read_results

GRADS = ("err_dq", "err_dk", "err_dv", "err_dg", "err_dbeta", "err_dh0")


def suite_dict(backends, seqlen, check, modes=("fwd",)):
    return {"name": "fp64", "device": "cpu",
            "sweep": {"backends": list(backends), "modes": list(modes), "seqlen": [seqlen],
                      "heads": [{"h_qk": 1, "h_v": 2}], "K": 8, "V": 8, "dtype": "float32"},
            "timing": {"timer": "wall", "warmup": 0, "min_samples": 1, "max_samples": 1},
            "check": check}


# -- the suite table ---------------------------------------------------------------------------------


def test_the_default_reference_is_the_oracle():
    assert CheckSpec().reference == "oracle"
    assert parse_suite(suite_dict(["naive-chunk"], 8, {})).check.reference == "oracle"
    assert parse_suite(suite_dict(["naive-chunk"], 8, {"reference": "fp64-full"})).check.reference == "fp64-full"


@pytest.mark.parametrize("check, key", [({"reference": "fp64"}, "check.reference"),
                                        ({"reference": 64}, "check.reference"),
                                        ({"reference": "fp64-full", "full_size": True}, "check.full_size")])
def test_a_bad_reference_is_refused_with_its_key(check, key):
    with pytest.raises(SpecError) as e:
        parse_suite(suite_dict(["naive-chunk"], 8, check), "<p>")
    assert e.value.key == key


# -- end to end: the CPU numerics suite through `run sweep` -------------------------------------------


def test_numerics_cpu_rows_carry_full_size_float64_errors(tmp_path):
    out = tmp_path / "r"
    r = CliRunner().invoke(app, ["run", "sweep", "--suite", "numerics-cpu", "--out", str(out), "--no-isolate"])
    assert r.exit_code == 0, r.output
    df = read_results([out])
    suite = load_suite("numerics-cpu")
    assert len(df) == len(suite.points)
    assert (df["status"] == "ok").all(), df[df["status"] != "ok"][["backend", "reason"]]
    assert (df["oracle"] == df["total_tokens"].map(lambda n: f"fp64-full float64 @{n} tokens")).all()
    assert (df["check_tokens"] == df["total_tokens"]).all()
    assert df["err_o"].notna().all() and df["err_ht"].notna().all()
    bwd = df["mode"] != "fwd"
    assert df.loc[bwd, list(GRADS)].notna().all().all()
    assert df.loc[~bwd, list(GRADS)].isna().all().all()
    # The recorded error is the one against float64 at the real size: recompute one row's.
    row = df[(df["backend"] == "naive-chunk") & (df["mode"] == "fwd") & (df["layout"] == "varlen")
             & (df["dtype"] == "float16")].iloc[0]
    p = next(p for p in suite.points if p.backend == "naive-chunk" and p.mode == "fwd" and p.layout == "varlen"
             and p.dtype == "float16")
    inp = make_inputs(p)
    got = REGISTRY["naive-chunk"].prepare("fwd", inp)()
    assert row["err_o"] == pytest.approx(rel_l2(got["o"], reference_outputs(inp, grads=False)["o"]), rel=1e-9)
    assert 1e-5 < row["err_o"] < 1e-3  # fp16 outputs: rounding, and nothing more


# -- a kernel wrong only at long T ----------------------------------------------------------------------


class LateDrift(Backend):
    """Exact for the first 64 tokens of a sequence, then forgets its state (a kernel wrong at long T only)."""

    name = "late-drift"

    def forward(self, inp):
        T = inp.v.shape[1]
        args = (inp.q, inp.k, inp.v, inp.g, inp.beta)
        head = recurrent_gated_delta_rule(*(x[:, :64] for x in args), scale=inp.scale, initial_state=inp.h0)
        if T <= 64:
            return head
        tail = recurrent_gated_delta_rule(*(x[:, 64:] for x in args), scale=inp.scale)
        return torch.cat([head[0], tail[0]], dim=1), tail[1]


@pytest.mark.parametrize("reference, status", [("oracle", "incorrect"), ("fp64-full", "incorrect")])
def test_a_kernel_wrong_only_at_full_size_is_caught_by_the_fp64_reference(tmp_path, reference, status):
    check = {"oracle_max_tokens": 64, "reference": reference}
    suite = parse_suite(suite_dict(["late-drift"], 256, check))
    registry = {**REGISTRY, "late-drift": LateDrift()}
    (row,) = run_sweep(suite, tmp_path, RunOptions(executor=InProcess(registry))).rows
    assert row.status == status, row.reason
    if reference == "fp64-full":
        assert row.reason.startswith("vs fp64-full: o rel err") and row.err_o > 0.01
        assert row.oracle == "fp64-full float64 @256 tokens" and row.check_tokens == 256
        assert row.median_ms is None  # an incorrect point is never timed
    else:  # the oracle on 64 tokens cannot see it; every row is also checked at its own size, in fp32
        assert row.reason.startswith("full size vs naive-chunk: o rel err") and row.median_ms is None


def test_float64_points_agree_with_the_reference_to_round_off(tmp_path):
    d = suite_dict(["naive-recurrent", "naive-chunk"], 100, {"reference": "fp64-full"}, modes=("fwd_bwd",))
    d["sweep"]["dtype"] = "float64"
    rows = run_sweep(parse_suite(d), tmp_path, RunOptions(executor=InProcess(REGISTRY))).rows
    assert [r.status for r in rows] == ["ok", "ok"]
    for r in rows:
        errs = [getattr(r, c) for c in ("err_o", "err_ht", *GRADS)]
        assert all(e is not None and e < 1e-12 for e in errs), (r.backend, errs)
        assert not any(math.isnan(e) for e in errs)



# -- a serving step keeps its pool invariant under every reference ------------------------------------


class ZeroTheRest(NaiveStep):
    """Steps the batch right, then zeroes every slot outside it: o and ht exact, other sequences' states lost."""

    name = "zero-the-rest"

    def step(self, inp, pool, slots):
        o = super().step(inp, pool, slots)
        keep = pool.index_select(0, slots).clone()
        pool.zero_()
        pool.index_copy_(0, slots, keep)
        return o


def serving_suite(backends, check):
    return parse_suite({"name": "fp64-serving", "device": "cpu",
                        "sweep": {"backends": list(backends), "modes": ["decode"], "batch": [2],
                                  "seqlen": [1], "heads": [{"h_qk": 1, "h_v": 2}], "K": 8, "V": 8, "dtype": "float32",
                                  "pool_factor": [2]},
                        "include": [{"modes": ["mtp"], "seqlen": [3]}],
                        "timing": {"timer": "wall", "warmup": 0, "min_samples": 1, "max_samples": 1},
                        "check": check})


@pytest.mark.parametrize("reference", ["oracle", "fp64-full"])
def test_a_step_that_clobbers_the_pool_is_incorrect_under_every_reference(tmp_path, reference):
    registry = {**REGISTRY, "zero-the-rest": ZeroTheRest()}
    rows = run_sweep(serving_suite(["zero-the-rest"], {"reference": reference}), tmp_path,
                     RunOptions(executor=InProcess(registry))).rows
    assert rows and all(r.status == "incorrect" for r in rows), [(r.mode, r.status, r.reason) for r in rows]
    assert all("pool rel err 1 > 0" in r.reason and r.err_pool == 1.0 and r.median_ms is None for r in rows)


def test_a_correct_step_keeps_its_pool_under_the_fp64_reference(tmp_path):
    rows = run_sweep(serving_suite(["naive-step"], {"reference": "fp64-full"}), tmp_path,
                     RunOptions(executor=InProcess(REGISTRY))).rows
    assert [r.status for r in rows] == ["ok", "ok"], [r.reason for r in rows]
    assert all(r.err_pool == 0.0 and r.oracle.startswith("fp64-full") for r in rows)


# -- the reference's memory is estimated before the point runs ----------------------------------------


def test_a_point_whose_one_head_exceeds_the_reference_budget_is_refused_before_it_runs(tmp_path, monkeypatch):
    import qlabench.backends.reference.fp64_full as fp64

    calls = []

    class Counting(LateDrift):
        name = "counting"

        def forward(self, inp):
            calls.append(1)
            return super().forward(inp)

    suite = parse_suite(suite_dict(["counting"], 256, {"reference": "fp64-full"}, modes=("fwd", "fwd_bwd")))
    p_fwd, p_bwd = suite.points
    need_fwd, need_bwd = fp64.point_head_bytes(p_fwd), fp64.point_head_bytes(p_bwd)
    assert 0 < need_fwd < need_bwd  # the backward keeps autograd's graph too
    monkeypatch.setattr(fp64, "CPU_BUDGET_BYTES", (need_fwd + need_bwd) // 2)  # fwd fits, fwd_bwd does not
    fwd, bwd = run_sweep(suite, tmp_path, RunOptions(executor=InProcess({**REGISTRY, "counting": Counting()}))).rows
    assert fwd.mode == "fwd" and fwd.status == "incorrect"  # it ran (LateDrift is wrong past 64 tokens)
    assert bwd.status == "skipped" and bwd.median_ms is None, bwd.reason
    assert "fp64-full reference" in bwd.reason and "budget" in bwd.reason
    assert f"{need_bwd / 2**20:.1f} MiB" in bwd.reason and f"{(need_fwd + need_bwd) // 2 / 2**20:.1f} MiB" in bwd.reason
    assert len(calls) == 1  # the refused point never called the backend
