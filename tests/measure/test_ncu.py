"""Nsight Compute: the command line, CSV parsing of both page layouts, sm_active_pct, and profile_point
driven end to end by a stand-in `ncu` script (the real one is not on this machine)."""

from __future__ import annotations

import os
import stat
import sys
import textwrap

import pytest

from qlabench.measure.probes.ncu import (
    NCU_METRICS,
    child_command,
    find_ncu,
    ncu_command,
    parse_ncu_csv,
    per_kernel_rows,
    point_from_json,
    point_to_json,
    profile_point,
    sm_active_pct,
)
from qlabench.core.point import Point

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
          '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')


def _details(rows) -> str:
    """A details-page CSV as `ncu --csv` prints it: program and ==PROF== lines first, then one line per metric."""
    lines = ["==PROF== Connected to process 4242 (/usr/bin/python3.12)",
             "profiling naive point",  # the child's own stdout
             HEADER]
    for kid, kname, grid, block, metric, unit, value in rows:
        lines.append(f'"{kid}","4242","python3.12","h200","{kname}","1","7","{block}","{grid}","0","9.0",'
                     f'"Command line profiler metrics","{metric}","{unit}","{value}"')
    lines.append("==PROF== Disconnected from process 4242")
    return "\n".join(lines) + "\n"


H_KERNEL = "chunk_gated_delta_rule_fwd_kernel_h_blockdim64"
O_KERNEL = "chunk_fwd_kernel_o"
DETAILS = _details([
    (0, H_KERNEL, "(2, 8, 1)", "(128, 1, 1)", "gpu__time_duration.sum", "usecond", "201.50"),
    (0, H_KERNEL, "(2, 8, 1)", "(128, 1, 1)", "launch__grid_size", "", "16"),
    (0, H_KERNEL, "(2, 8, 1)", "(128, 1, 1)", "launch__waves_per_multiprocessor", "", "0.12"),
    (0, H_KERNEL, "(2, 8, 1)", "(128, 1, 1)", "sm__cycles_active.avg", "cycle", "48,000"),
    (0, H_KERNEL, "(2, 8, 1)", "(128, 1, 1)", "sm__cycles_elapsed.avg", "cycle", "400,000"),
    (0, H_KERNEL, "(2, 8, 1)", "(128, 1, 1)", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", "3.91"),
    (0, H_KERNEL, "(2, 8, 1)", "(128, 1, 1)", "sm__warps_active.avg.pct_of_peak_sustained_active", "%", "6.25"),
    (1, O_KERNEL, "(2, 128, 8)", "(128, 1, 1)", "gpu__time_duration.sum", "nsecond", "40,100"),
    (1, O_KERNEL, "(2, 128, 8)", "(128, 1, 1)", "launch__grid_size", "", "2,048"),
    (1, O_KERNEL, "(2, 128, 8)", "(128, 1, 1)", "launch__waves_per_multiprocessor", "", "3.88"),
    (1, O_KERNEL, "(2, 128, 8)", "(128, 1, 1)", "sm__cycles_active.avg", "cycle", "76,000"),
    (1, O_KERNEL, "(2, 128, 8)", "(128, 1, 1)", "sm__cycles_elapsed.avg", "cycle", "80,000"),
    (1, O_KERNEL, "(2, 128, 8)", "(128, 1, 1)", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "%", "61.2"),
    (1, O_KERNEL, "(2, 128, 8)", "(128, 1, 1)", "sm__warps_active.avg.pct_of_peak_sustained_active", "%", "n/a"),
])

RAW = textwrap.dedent('''\
    ==PROF== Connected to process 4242
    "ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","gpu__time_duration.sum","sm__cycles_active.avg","sm__cycles_elapsed.avg"
    "","","","","","","","","","","","msecond","cycle","cycle"
    "0","4242","python3.12","h200","tilelang_fused_chunk_gdr_fwd_kernel_kernel","1","7","(384, 1, 1)","(64, 1, 1)","0","9.0","0.25","300,000","330,000"
    "1","4242","python3.12","h200","tilelang_kkt_solve_kernel_kernel","1","7","(128, 1, 1)","(1024, 1, 1)","0","9.0","0.01","9,000","10,000"
    ''')


def test_parse_details_page():
    ks = parse_ncu_csv(DETAILS)
    assert [k.id for k in ks] == [0, 1]
    h, o = ks
    assert h.name == H_KERNEL and h.grid == "(2, 8, 1)" and h.block == "(128, 1, 1)"
    assert h.get("gpu__time_duration.sum") == pytest.approx(201_500.0)  # usecond -> ns
    assert o.get("gpu__time_duration.sum") == 40_100.0  # thousands separator stripped
    assert o.get("launch__grid_size") == 2048.0
    assert h.get("sm__cycles_active.avg") == 48_000.0
    assert o.get("sm__warps_active.avg.pct_of_peak_sustained_active") is None  # "n/a"
    assert set(h.metrics) == set(NCU_METRICS)


def test_parse_raw_page_with_units_line():
    ks = parse_ncu_csv(RAW)
    assert [k.name for k in ks] == ["tilelang_fused_chunk_gdr_fwd_kernel_kernel", "tilelang_kkt_solve_kernel_kernel"]
    assert ks[0].get("gpu__time_duration.sum") == pytest.approx(250_000.0)  # msecond -> ns
    assert ks[1].get("sm__cycles_elapsed.avg") == 10_000.0


def test_sm_active_pct_is_cycle_weighted_over_kernels():
    ks = parse_ncu_csv(DETAILS)
    # (48k + 76k) / (400k + 80k): the long, under-filled state kernel dominates
    assert sm_active_pct(ks) == pytest.approx(100 * 124_000 / 480_000)
    rows = per_kernel_rows(ks)
    assert rows[0]["sm_active_pct"] == pytest.approx(12.0)
    assert rows[1]["sm_active_pct"] == pytest.approx(95.0)
    assert sm_active_pct(parse_ncu_csv(RAW)) == pytest.approx(100 * 309_000 / 340_000)
    assert sm_active_pct([]) is None


def test_output_without_a_report_or_with_a_foreign_header():
    assert parse_ncu_csv("==PROF== Connected\n==WARNING== No kernels were profiled.\n") == []
    with pytest.raises(ValueError):
        parse_ncu_csv('"ID","Something"\n"0","1"\n')


def _point() -> Point:
    return Point(backend="naive-chunk", mode="fwd", layout="varlen", batch=1, seqlens=(100, 28), h_qk=2, h_v=8,
                 K=32, V=32, model="m", tp=8)


def test_command_lines():
    child = child_command(_point(), "cuda:1")
    assert child[:4] == [sys.executable, "-m", "qlabench", "_ncu-child"]
    assert point_from_json(child[child.index("--point-json") + 1]) == _point()
    assert child[-2:] == ["--device", "cuda:1"]
    cmd = ncu_command(child, ncu="/opt/ncu", log_file="/tmp/x.csv")
    assert cmd[0] == "/opt/ncu"
    assert cmd[cmd.index("--clock-control") + 1] == "none"  # never lock the clocks
    assert cmd[cmd.index("--profile-from-start") + 1] == "off"  # only the cudaProfilerStart/Stop region
    assert cmd[cmd.index("--metrics") + 1].split(",") == list(NCU_METRICS)
    assert "--csv" in cmd and cmd[cmd.index("--log-file") + 1] == "/tmp/x.csv"
    assert cmd[-len(child):] == child


def test_point_json_round_trip():
    assert point_from_json(point_to_json(_point())) == _point()


def test_missing_ncu_is_a_reason_not_a_crash(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("QLABENCH_NCU", raising=False)
    path, why = find_ncu()
    assert path is None and "not found" in why
    prof, why = profile_point(_point())
    assert prof is None and "Nsight Compute not found" in why


def _fake_ncu(tmp_path, body: str) -> str:
    """An executable stand-in for ncu: writes `body` to --log-file, records its argv, exits as told."""
    script = tmp_path / "ncu"
    script.write_text(textwrap.dedent(f'''\
        #!{sys.executable}
        import sys
        argv = sys.argv[1:]
        open({str(tmp_path / "argv.txt")!r}, "w").write("\\n".join(argv))
        if "--log-file" in argv:
            open(argv[argv.index("--log-file") + 1], "w").write({body!r})
        sys.exit(int({str(tmp_path / "rc")!r} and open({str(tmp_path / "rc")!r}).read() or 0))
        '''))
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    (tmp_path / "rc").write_text("0")
    return str(script)


def test_profile_point_runs_ncu_and_parses_its_report(tmp_path):
    ncu = _fake_ncu(tmp_path, DETAILS)
    prof, why = profile_point(_point(), device="cuda", ncu=ncu, env={"FLA_FLASH_QLA": "0"})
    assert why is None
    assert [k.name for k in prof.kernels] == [H_KERNEL, O_KERNEL]
    assert prof.sm_active_pct == pytest.approx(100 * 124_000 / 480_000)
    argv = (tmp_path / "argv.txt").read_text().splitlines()
    assert "_ncu-child" in argv and argv[argv.index("--clock-control") + 1] == "none"
    assert prof.as_dict()["kernels"][0]["metrics"]["launch__grid_size"] == 16.0


def test_profile_point_reports_ncu_failures(tmp_path):
    ncu = _fake_ncu(tmp_path, "==ERROR== The application returned an error code (1).\n")
    (tmp_path / "rc").write_text("1")
    prof, why = profile_point(_point(), ncu=ncu)
    assert prof is None and "exited with 1" in why
    (tmp_path / "rc").write_text("0")
    prof, why = profile_point(_point(), ncu=ncu)
    assert prof is None and "no kernel" in why


@pytest.mark.gpu
def test_profile_point_on_the_gpu():
    if find_ncu()[0] is None:
        pytest.skip("ncu not on PATH")
    p = Point(backend="naive-chunk", mode="fwd", layout="dense", batch=1, seqlens=(256,), h_qk=2, h_v=8,
              K=64, V=64, dtype="float32")
    prof, why = profile_point(p, device="cuda", env=dict(os.environ))
    assert why is None and prof.kernels and 0 < prof.sm_active_pct <= 100


def test_profile_command_on_cpu_reports_reasons_and_ncu_table(tmp_path, monkeypatch):
    import json

    from typer.testing import CliRunner

    from qlabench.cli import app

    monkeypatch.setenv("QLABENCH_NCU", _fake_ncu(tmp_path, DETAILS))
    out = tmp_path / "prof"
    r = CliRunner().invoke(app, ["profile", "--backend", "naive-chunk", "--heads", "2/8", "--seqlens", "128",
                                 "--device", "cpu", "--out", str(out)], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    assert "no kernel breakdown" in r.output and "no CUDA device" in r.output
    assert "sm_active_pct 25.8" in r.output  # 124k / 480k cycles
    (js,) = out.glob("*.profile.json")
    data = json.loads(js.read_text())
    assert data["point"]["h_v"] == 8 and data["sm_coverage"] is None
    assert data["sm_active_pct"] == pytest.approx(100 * 124_000 / 480_000)
    assert [k["name"] for k in data["ncu"]["kernels"]] == [H_KERNEL, O_KERNEL]
    bad = CliRunner().invoke(app, ["profile", "--backend", "naive-chunk", "--heads", "x", "--no-ncu"])
    assert bad.exit_code == 2 and "--heads" in bad.output
