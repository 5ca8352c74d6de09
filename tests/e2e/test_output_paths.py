"""Every command that writes under -o/--out refuses an unusable place with one line and exit 2, before work:
a symlink loop, a place it cannot create (a read-only tree), a file where a folder goes or a folder where a
file goes."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from qlabench.cli import app

UNWRITABLE = "/sys/qlabench-no-such-folder/out"  # sysfs: not even root can create a folder there


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A small result file of CPU rows for the commands that read results."""
    from qlabench.core.result import ResultRow
    from qlabench.store.files import write_rows

    row = ResultRow(run_id="r", suite="t", timestamp="2025-01-01T00:00:00+00:00", host="h", device="cpu",
                    backend="naive-chunk", mode="fwd", layout="dense", batch=1, seqlens=(64,), num_seqs=1,
                    total_tokens=64, h_qk=2, h_v=4, K=16, V=16, dtype="float32", gate="flashqla", seed=0,
                    initial_state=True, status="ok", timer="wall", samples_ms=(1.0, 1.2, 1.1), n_samples=3,
                    median_ms=1.1)
    return str(write_rows(tmp_path_factory.mktemp("res") / "t.parquet", [row]))


FOLDER_OUTS = {  # command -> its arguments before the out option; the out option
    "run sweep": (["run", "sweep", "--suite", "{tiny}", "--device", "cpu"], "--out"),
    "ab": (["ab", "current", "current", "--suite", "{tiny}", "--no-warmup"], "--out"),
    "compare-study": (["compare-study", "--suite", "{tiny}"], "--out"),
    "plot": (["plot", "{results}"], "-o"),
    "plot-sm": (["plot-sm", "{results}"], "-o"),
    "report": (["report", "{results}"], "-o"),
    "profile": (["profile", "--backend", "naive-chunk"], "-o"),
}
FILE_OUTS = {
    "compare": (["compare", "{results}", "{results}"], "-o"),
    "kernels": (["kernels", "{results}"], "-o"),
    "ab": (["ab", "current", "current", "--suite", "{tiny}", "--no-warmup", "--out", "{tmp}/ab"], "-o"),
}


def _invoke(args, bad, data_dir, results, tmp_path):
    subst = {"tiny": str(data_dir / "tiny-cpu.toml"), "results": results, "tmp": str(tmp_path)}
    r = CliRunner().invoke(app, [a.format(**subst) for a in args] + [str(bad)])
    return r


def _one_line_exit_2(r, bad):
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr
    assert "Traceback" not in r.output and str(bad) in r.stderr.replace("\n", "")


@pytest.mark.parametrize("cmd", FOLDER_OUTS)
@pytest.mark.parametrize("kind", ["symlink loop", "unwritable", "a file"])
def test_a_bad_output_folder_is_one_line_and_exit_2(cmd, kind, tmp_path, data_dir, results):
    if kind == "symlink loop":
        bad = tmp_path / "loop"
        bad.symlink_to(bad)
    elif kind == "unwritable":
        bad = UNWRITABLE
    else:
        bad = tmp_path / "afile"
        bad.write_text("x")
    args, opt = FOLDER_OUTS[cmd]
    _one_line_exit_2(_invoke(args + [opt], bad, data_dir, results, tmp_path), bad)


@pytest.mark.parametrize("cmd", FILE_OUTS)
@pytest.mark.parametrize("kind", ["symlink loop", "unwritable", "a folder"])
def test_a_bad_output_file_is_one_line_and_exit_2(cmd, kind, tmp_path, data_dir, results):
    if kind == "symlink loop":
        bad = tmp_path / "loop.md"
        bad.symlink_to(bad)
    elif kind == "unwritable":
        bad = UNWRITABLE + ".md"
    else:
        bad = tmp_path / "afolder"
        bad.mkdir()
    args, opt = FILE_OUTS[cmd]
    _one_line_exit_2(_invoke(args + [opt], bad, data_dir, results, tmp_path), bad)


# Every option that writes a file: its arguments before the option ({victim}: the file to be written over).
OVERWRITES = {
    "compare -o": ["compare", "{results}", "{results}", "-f", "markdown", "-o"],
    "gate -o": ["gate", "--suite", "{tiny}", "--baseline", "{results}", "-o"],
    "ab -o": ["ab", "current", "current", "--suite", "{tiny}", "--no-warmup", "--out", "{tmp}/ab", "-o"],
    "kernels -o": ["kernels", "{results}", "-o"],
    "advise --suite-out --force": ["advise", "{results}", "--model", "qwen3.5-27b", "--seqlens", "64", "--force",
                                   "--suite-out"],
}


def _victim(kind, tmp_path, data_dir, results):
    """The file an output would write over."""
    import shutil

    if kind == "results file":
        return shutil.copy(results, tmp_path / "head.parquet")
    if kind == "results file named .md":
        return shutil.copy(results, tmp_path / "report.md")
    (tmp_path / "results").mkdir()
    return shutil.copy(data_dir.parents[1] / "results" / "catalog.toml", tmp_path / "results" / "catalog.toml")


@pytest.mark.parametrize("cmd", OVERWRITES)
@pytest.mark.parametrize("kind", ["results file", "results file named .md", "catalog"])
def test_no_output_option_writes_over_a_results_file_or_the_catalog(cmd, kind, tmp_path, data_dir, results):
    victim = _victim(kind, tmp_path, data_dir, results)
    before = open(victim, "rb").read()
    r = _invoke(OVERWRITES[cmd], victim, data_dir, results, tmp_path)
    _one_line_exit_2(r, victim)
    assert open(victim, "rb").read() == before


@pytest.mark.parametrize("cmd, args", [
    ("gate -o SUITE", ["gate", "--suite", "{victim}", "--baseline", "{results}", "-o"]),
    ("ab -o SUITE", ["ab", "current", "current", "--suite", "{victim}", "--no-warmup", "--out", "{tmp}/ab", "-o"]),
    ("compare --history H -o H", ["compare", "{results}", "{results}", "--history", "{victim}", "-o"]),
    ("advise --gate G --suite-out G --force", ["advise", "{results}", "--model", "qwen3.5-27b", "--seqlens", "64",
                                               "--gate", "{victim}", "--force", "--suite-out"]),
])
def test_no_output_option_writes_over_an_input_of_its_command(cmd, args, tmp_path, data_dir, results):
    import shutil

    victim = tmp_path / "input.toml"
    if cmd.startswith("advise"):
        victim.write_text("gate_zero_frac = 0.5\ngate_scale = 16\n")
    else:
        shutil.copy(data_dir / "tiny-cpu.toml", victim)
    before = victim.read_bytes()
    subst = {"tiny": str(data_dir / "tiny-cpu.toml"), "results": results, "tmp": str(tmp_path), "victim": str(victim)}
    r = CliRunner().invoke(app, [a.format(**subst) for a in args] + [str(victim)])
    _one_line_exit_2(r, victim)
    assert "is an input of this command" in r.stderr and victim.read_bytes() == before
