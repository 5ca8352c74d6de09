"""scripts/offline-host.sh on the GPU host: the site folder goes on PYTHONPATH with the folders its .pth files
name (Python reads .pth files only for site directories), so a package found only through one (the CuTe DSL
FlashInfer 0.7 imports) imports there too. Run through the script's `check` step, which needs no GPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run_check(tmp_path: Path, site: Path) -> tuple[subprocess.CompletedProcess, dict]:
    """The script's `check` step with `site` as its site folder and no PYTHONPATH of ours: (result, its env)."""
    env = {**os.environ, "QLABENCH_OFFLINE_SITE": str(site), "QLABENCH_OFFLINE_WORK": str(tmp_path / "work"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("PYTHONPATH", None)
    r = subprocess.run(["bash", str(REPO / "scripts" / "offline-host.sh"), "--out", str(tmp_path / "out"), "check"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    return r, env


def test_check_puts_the_site_and_its_pth_folders_on_the_path(tmp_path):
    site = tmp_path / "site"
    pkgs = site / "dsl" / "dsl_packages"
    pkgs.mkdir(parents=True)
    (pkgs / "pth_only_module.py").write_text("VALUE = 42\n")
    (site / "dsl.pth").write_text("# the DSL's packages\ndsl/dsl_packages\nnot_there\n")
    # nvidia-cutlass-dsl 4.8's own .pth is an import line: it counts too
    (site / "lib4" / "inner").mkdir(parents=True)
    (site / "lib4" / "__init__.py").write_text("")
    (site / "lib4.pth").write_text("import sys, os, lib4; sys.path.insert(0, os.path.join(lib4.__path__[0], 'inner'))\n")
    r, env = run_check(tmp_path, site)
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "out" / "env.txt").read_text()
    (line,) = [ln for ln in text.splitlines() if ln.startswith("python path: ")]
    parts = line.removeprefix("python path: ").split(":")
    assert parts[:2] == [str(REPO), str(site)]
    assert set(parts[2:4]) == {str(pkgs.resolve()), str((site / "lib4" / "inner").resolve())}
    assert not any(p.endswith("not_there") for p in parts)
    # and a Python started with that path imports the module only the .pth made reachable
    out = subprocess.run([sys.executable, "-c", "import pth_only_module; print(pth_only_module.VALUE)"],
                         env={**env, "PYTHONPATH": ":".join(parts)}, capture_output=True, text=True)
    assert out.stdout.strip() == "42"


def test_check_stops_on_a_site_whose_pth_stops_python(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "bad.pth").write_text("import sys; sys.exit(9)\n")
    r, _ = run_check(tmp_path, site)
    assert r.returncode == 2 and "fail when read as a site folder" in r.stderr


# -- a step's exit status is its command's ---------------------------------------------------------------


def run_step(tmp_path: Path, *args: str, **knobs: str) -> subprocess.CompletedProcess:
    """A step of the script, with a site of stand-in flash_qla/fla (so the GPU steps get past their
    import check on a machine without them) and `knobs` in its environment."""
    site = tmp_path / "site"
    for mod in ("flash_qla", "fla"):
        (site / mod).mkdir(parents=True, exist_ok=True)
        (site / mod / "__init__.py").write_text("")
    env = {**os.environ, "QLABENCH_OFFLINE_SITE": str(site), "QLABENCH_OFFLINE_WORK": str(tmp_path / "work"),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}", **knobs}
    env.pop("PYTHONPATH", None)
    return subprocess.run(["bash", str(REPO / "scripts" / "offline-host.sh"), "--out", str(tmp_path / "out"), *args],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("args, knobs", [
    (("warmup", "no-such-suite"), {}),
    (("study", "no-such-suite"), {}),
    (("selfbench", "no-such-suite"), {"WHAT": "cost"}),
    (("sweep", "quick-cpu"), {"MAX_TIME_S": "abc"}),
    (("sweep", "quick-cpu"), {"GPUS": "0"}),
    (("sweep", "flashqla-study"), {"SWEEP_ARGS": "--heads 3/9"}),
    (("warmup", "flashqla-study"), {"WARMUP_ARGS": "--heads 3/9"}),
], ids=["warmup-unknown-suite", "study-unknown-suite", "selfbench-unknown-suite",
        "sweep-max-time-abc", "sweep-gpus-0", "sweep-args-reach-the-sweep", "warmup-args-reach-the-warmup"])
def test_a_step_whose_qlabench_command_fails_exits_with_its_status_and_says_why(tmp_path, args, knobs):
    r = run_step(tmp_path, *args, **knobs)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert f"offline-host.sh {args[0]}: the command exited 2" in r.stderr
    # the end of the log, where qlabench says what was wrong, is shown
    said = {"no-such-suite": "no-such-suite", "3/9": "no head configuration '3/9'"}
    wanted = next((v for k, v in said.items() if k in " ".join(args) + " ".join(knobs.values())), None)
    assert (wanted in r.stderr) if wanted else ("--max-time" in r.stderr or "--gpus" in r.stderr), r.stderr


@pytest.mark.parametrize("value", ["abc", "0", "-5"])
def test_a_bad_step_timeout_is_refused_before_the_step_runs(tmp_path, value):
    r = run_step(tmp_path, "warmup", "no-such-suite", STEP_TIMEOUT_S=value)
    assert r.returncode == 2 and f"STEP_TIMEOUT_S={value}: must be a positive number of seconds" in r.stderr
    assert not (tmp_path / "out" / "warmup-no-such-suite.log").exists()
