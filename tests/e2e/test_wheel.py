"""qlabench as a user installs it: the wheel, built from this checkout and installed into a fresh virtual
environment in a temporary folder outside the checkout, runs the README's main job (`qlabench run sweep` of the
default suite, then `qlabench plot`), lists its suites, and runs `show` and `advise` on a results folder it is
handed; a kernel package installed beside it (examples/gdn-plugin, as a wheel too) is found through its entry point.
Every file a command reads must ship in the wheel: nothing here can reach the checkout.

The fresh environment takes torch, pandas and the other dependencies from the one running the tests (a `.pth`
line naming its site-packages, whose own `.pth` files, an editable install's finder among them, are not run),
so building and installing need no network: `pip wheel --no-deps --no-build-isolation`, `pip install --no-deps`.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pandas as pd
import pytest
from plugin_fixture import EXAMPLE, suite_beside_naive_chunk

REPO = Path(__file__).resolve().parents[2]
PLUGIN_SUITE = suite_beside_naive_chunk("plugin-cpu", "the example plugin's two kernels beside the naive chunked form",
                                        ["gdn-example", "gdn-example-off"], max_samples=5)

pytestmark = pytest.mark.slow


def _pip(*args: str, cwd: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args], cwd=cwd, check=True)


def _wheel(source: Path, copy: list[str], work: Path, name: str) -> Path:
    """The wheel of `source`, built from a copy of its `copy` entries (a build writes build/ and *.egg-info
    beside its sources: never into the checkout)."""
    tree = work / f"src-{name}"
    for name in copy:
        src = source / name
        if src.is_dir():
            shutil.copytree(src, tree / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "build"))
        else:
            tree.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, tree / name)
    _pip("wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(work / name), str(tree), cwd=work)
    (built,) = (work / name).glob("*.whl")
    return built


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    assert REPO not in work.parents
    return work


@pytest.fixture(scope="module")
def ours(work) -> Path:
    """qlabench's wheel, built from a tree that holds this repository's publishing package beside it (publish/), as
    the checkout does: pyproject.toml must leave it out."""
    return _wheel(REPO, ["pyproject.toml", "README.md", "qlabench", "publish"], work, "qlabench")


def test_the_wheel_carries_qlabench_and_not_this_repositorys_publishing(ours):
    import zipfile

    tops = {name.split("/")[0] for name in zipfile.ZipFile(ours).namelist()}
    assert "qlabench" in tops and not any(t.startswith(("qlabench_publish", "publish")) for t in tops), sorted(tops)


@pytest.fixture(scope="module")
def installed(work, ours):
    """(bin folder of the fresh environment, a folder outside the checkout to work in, its environment variables)."""
    plugin = _wheel(EXAMPLE, ["pyproject.toml", "gdn_example"], work, "plugin")
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    deps = dict.fromkeys([*site.getsitepackages(), sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (Path(purelib) / "test-environment.pth").write_text("".join(f"{d}\n" for d in deps))
    _pip("--python", str(py), "install", "--no-deps", "--no-index", str(ours), str(plugin), cwd=work)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "QLABENCH_GIT_SHA")}
    env.update(COLUMNS="200", PYTHONNOUSERSITE="1")
    home = work / "user"
    home.mkdir()
    return venv / "bin", home, env


def _run(installed, *args, ok: bool = True) -> subprocess.CompletedProcess:
    bin_dir, home, env = installed
    r = subprocess.run([str(bin_dir / "qlabench"), *map(str, args)], cwd=home, env=env, capture_output=True,
                       text=True, timeout=600)
    assert (r.returncode == 0) == ok, f"qlabench {' '.join(map(str, args))}: exit {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def test_the_installed_wheel_runs_the_readme_job_and_reads_nothing_of_the_checkout(installed):
    bin_dir, home, env = installed
    where = subprocess.run([str(bin_dir / "python"), "-c", "import qlabench, gdn_example; "
                            "print(qlabench.__file__); print(gdn_example.__file__)"],
                           cwd=home, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert all(Path(w).is_relative_to(bin_dir.parent) for w in where), where  # the wheels, not the checkout

    listed = _run(installed, "suites").stdout
    bundled = sorted(p.stem for p in (REPO / "qlabench" / "suites").glob("*.toml"))
    assert all(name in listed for name in bundled) and "invalid" not in listed

    _run(installed, "run", "sweep")  # the README's main job: the default suite, then its plot
    rows = list((home / "results" / "quick-cpu").glob("*.parquet"))
    assert len(rows) == 1
    _run(installed, "plot", "results/quick-cpu", "--out", "plots")
    assert list((home / "plots").glob("*.png"))
    shown = _run(installed, "show", "results/quick-cpu", "--format", "csv").stdout
    assert float(pd.read_csv(io.StringIO(shown))["naive-chunk"].iloc[0]) > 0


def test_a_plugin_installed_beside_the_wheel_is_listed_swept_shown_and_advised(installed):
    _, home, _ = installed
    assert "plugin: qlabench-gdn-example 0.1.0" in _run(installed, "backends").stdout
    (home / "plugin-cpu.toml").write_text(PLUGIN_SUITE)  # a user's own suite, by its path
    _run(installed, "run", "sweep", "--suite", "plugin-cpu.toml", "--out", "mine")
    shown = pd.read_csv(io.StringIO(_run(installed, "show", "mine/plugin-cpu", "--format", "csv").stdout))
    assert float(shown["gdn-example"].iloc[0]) > 0 and shown["gdn-example-off"].iloc[0] == "incorrect"

    adv = _run(installed, "advise", "mine/plugin-cpu", "--model", "qwen3.5-0.8b", "--tp", "8", "--seqlens", "64",
               "--gate", "published", "--current", "gdn-example", "--format", "json").stdout
    (case,) = json.loads(adv)["cases"]
    by = {e["backend"]: e for e in case["entries"]}
    assert by["gdn-example"]["status"] == "ok" and by["gdn-example-off"]["status"] == "incorrect"
    assert (case["recommended"] or case["provisional"]) in ("gdn-example", "naive-chunk")
