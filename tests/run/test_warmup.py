"""Warm-up groups (run/warmup.py): one per backend, mode and head config; backward groups start first."""

from __future__ import annotations

from qlabench.core.point import Point
from qlabench.run.warmup import head_groups


def _p(mode: str, h_v: int, backend: str = "naive-chunk", T: int = 8) -> Point:
    return Point(backend=backend, mode=mode, layout="dense", batch=1, seqlens=(T,), h_qk=1, h_v=h_v, K=16, V=16,
                 dtype="float32")


def test_groups_split_by_mode_and_heads_with_backward_groups_first():
    points = (_p("fwd", 2), _p("fwd", 2, T=16), _p("fwd", 4), _p("fwd_bwd", 2), _p("bwd", 4), _p("fwd", 2, "synthetic"))
    groups = head_groups(points)
    assert [[points[i].mode for i in g] for g in groups] == [["fwd_bwd"], ["bwd"], ["fwd", "fwd"], ["fwd"], ["fwd"]]
    assert groups[2] == [0, 1]  # the 8- and 16-token forward points share one process
    assert sorted(i for g in groups for i in g) == list(range(len(points)))


def test_a_groups_process_reports_each_point_as_it_is_warmed(data_dir):
    from qlabench.core.spec import load_suite
    from qlabench.run.warmup import warm_suite

    path = str(data_dir / "tiny-cpu.toml")
    suite = load_suite(path)
    heard = []
    results = warm_suite(path, suite.points, jobs=2, device="cpu", only={0, 1},
                         on_point=lambda i, status: heard.append(("point", i, status)),
                         on_done=lambda r: heard.append(("group", r.points, r.returncode)))
    assert [r.returncode for r in results] == [0] * len(results)
    points = [h for h in heard if h[0] == "point"]
    assert sorted(points) == [("point", 0, "ok"), ("point", 1, "ok")]
    for i, h in enumerate(heard):  # a group's points are heard before the group's end
        if h[0] == "group":
            assert sum(1 for x in heard[:i] if x[0] == "point") >= h[1]


def test_a_point_line_reads_back_and_other_output_is_not_one():
    from qlabench.run.warmup import parse_point_line, point_line

    status = "error: RuntimeError: boom: x"
    assert parse_point_line(point_line(12, status) + "\n") == (12, status)
    assert parse_point_line("ptxas info: 0 bytes spill stores\n") is None
    assert parse_point_line("qlabench-warmed x ok") is None
