"""A point's identity is defined once (core/identity.py): every place that keys, groups or labels points
follows it, so a new axis is a change to the core alone."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap

from qlabench.core import identity
from qlabench.core.point import Point
from qlabench.core.result import ResultRow


def test_the_axes_are_the_points_fields_and_the_rows_key_columns():
    point_fields = {f.name: f for f in dataclasses.fields(Point)}
    assert set(identity.key_axes()) == set(point_fields)
    assert set(identity.key_axes()) <= {f.name for f in dataclasses.fields(ResultRow)}
    # nullable in a stored row exactly where a point may leave the axis unset
    optional = {name for name, f in point_fields.items() if f.default is None}
    assert set(identity.key_axes()) - set(identity.required_axes()) == optional


def test_point_and_stored_row_get_the_same_labels(make_row):
    import pandas as pd

    from qlabench.analyze.kit.labels import backend_label, gate_label_of, heads_label, layout_label

    p = Point(backend="flash_qla", mode="fwd", layout="varlen", batch=1, seqlens=(4096, 8192), h_qk=8, h_v=32,
              model="qwen3.5-27b", tp=2, gate_scale=64.0, cp_world_size=2, cp_mode="inter")
    row = pd.DataFrame([make_row(**identity.columns(p), num_seqs=p.num_seqs, total_tokens=p.total_tokens)]).iloc[0]
    assert heads_label(row) == p.heads_label == "qwen3.5-27b TP2 (h8/32)"
    assert layout_label(row) == p.layout_label == "4096+8192"
    assert gate_label_of(row) == p.gate_label == "flashqla(/64)"
    assert backend_label(row) == f"flash_qla [{p.cp_label}]" == "flash_qla [cp2 inter]"
    assert p.label() == "flash_qla [cp2 inter] fwd qwen3.5-27b TP2 (h8/32) 4096+8192 bfloat16 gate=flashqla(/64)"


def test_a_packed_batch_of_one_length_is_named_by_its_count_not_every_length(make_row):
    """256 sequences of 512 tokens read '256x512 packed', not 256 numbers; a dense batch keeps 'BxT' and
    sequences of different lengths are still spelled out, so no two layouts share a label."""
    import pandas as pd

    from qlabench.analyze.kit.labels import layout_label

    p = Point(backend="fla", mode="fwd", layout="varlen", batch=1, seqlens=(512,) * 256, h_qk=2, h_v=8)
    row = pd.DataFrame([make_row(**identity.columns(p), num_seqs=p.num_seqs, total_tokens=p.total_tokens)]).iloc[0]
    assert layout_label(row) == p.layout_label == "256x512 packed"
    assert identity.layout_label("dense", 4, (512,) * 4) == "4x512"
    assert identity.layout_label("varlen", 1, (512,)) == "512"
    assert identity.layout_label("varlen", 1, (512, 1024)) == "512+1024"


def test_a_point_read_back_from_its_row_is_the_same_point(make_row):
    p = Point(backend="naive-chunk", mode="bwd", layout="dense", batch=2, seqlens=(64, 64), h_qk=2, h_v=4,
              gate_zero_frac=0.5, seed=3, initial_state=False)
    row = make_row(**identity.columns(p), num_seqs=p.num_seqs, total_tokens=p.total_tokens)
    assert Point.from_row(row) == p
    assert Point.from_row(row.as_dict()) == p


def test_the_problem_axes_are_every_axis_but_those_that_say_otherwise():
    # layout, batch: one dense sequence and the same lengths packed are one problem; seed: another draw of
    # it; model, tp: labels of the heads (analyze/evidence/problem.py)
    assert identity.problem_axes() == tuple(a.name for a in identity.AXES if a.problem)
    assert {a.name for a in identity.AXES} - set(identity.problem_axes()) == {"model", "tp", "layout", "batch", "seed"}


# A new axis, added the way core/identity.py says (an Axis, a Point field, a ResultRow column) before
# anything above the core is imported; then every place that keys points must keep two points apart
# that differ only in it. A subprocess, so the patched core is the one the other layers import.
NEW_AXIS = textwrap.dedent('''
    import dataclasses, json, sys
    from pathlib import Path

    from qlabench.core import identity, point as core_point, result as core_result

    identity.AXES = identity.AXES + (identity.Axis("variant"),)

    @dataclasses.dataclass(frozen=True)
    class Point(core_point.Point):
        variant: int = 0

    @dataclasses.dataclass(frozen=True)
    class ResultRow(core_result.ResultRow):
        variant: int = core_result.col("int64", "an axis added by a test")

    core_point.Point, core_result.ResultRow = Point, ResultRow

    from qlabench.analyze.compare.match import match_rows, normalized_rows
    from qlabench.analyze.evidence import problem_keys, read_evidence
    from qlabench.analyze.study.prepare import prepare
    from qlabench.core.result import make_row
    from qlabench.measure.oracle_cache import oracle_key
    from qlabench.run.sweep import group_points
    from qlabench.run.warmup import head_groups
    from qlabench.store.files import read_results, write_rows
    from qlabench.store.keys import key_value, workload_keys
    from qlabench.store.merge import merge_results
    from qlabench.store.resume import done_keys, remaining

    out = Path(sys.argv[1])
    a = Point(backend="naive-chunk", mode="fwd", layout="dense", batch=1, seqlens=(64,), h_qk=2, h_v=4, K=16, V=16,
              dtype="float32")
    b, c = a.with_(variant=1), a.with_(variant=2)
    rows = [make_row(p, run_id="r1", suite="s", env={"env_fingerprint": "fp"}, status="ok", timer="wall",
                     samples_ms=(1.0,), median_ms=1.0) for p in (a, b)]
    write_rows(out / "s" / "r1.parquet", rows)
    df = read_results([out])
    merged = merge_results([out])
    pairs = match_rows(df, df)
    checks = {
        "store": sorted(df["variant"]) == [0, 1] and workload_keys(df).nunique() == 2,
        "merge": merged.ok and sorted(Point.from_row(r).variant for r in merged.rows) == [0, 1],
        "gate": sorted(Point.from_row(r, key_value).variant for r in normalized_rows(df)) == [0, 1],
        "resume": remaining((a, b, c), done_keys(out, "s", "fp")) == [c],
        "compare": len(pairs) == 2 and all(p.base is not None and p.head is not None for p in pairs),
        "oracle cache": oracle_key(a, (64,), "float32") != oracle_key(b, (64,), "float32"),
        "compile groups": len(group_points((a, b))) == 2,
        "warm-up": len(head_groups((a, b))) == 2,
        "study": prepare(df)["study_key"].nunique() == 2,
        "evidence problems": problem_keys(df).nunique() == 2,
        "evidence newest per point": len(read_evidence([out]).rows) == 2,
    }
    print(json.dumps(checks))
''')


def test_a_new_axis_in_the_core_is_carried_everywhere(tmp_path):
    proc = subprocess.run([sys.executable, "-c", NEW_AXIS, str(tmp_path)], capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    checks = json.loads(proc.stdout.strip().splitlines()[-1])
    assert [place for place, ok in checks.items() if not ok] == []
