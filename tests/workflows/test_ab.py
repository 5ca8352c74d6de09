"""`qlabench ab`: two variants measured alternately in fresh workers, compared by round (CPU, tiny suite)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from typer.testing import CliRunner

from qlabench.backends.synthetic import SLOWDOWN_ENV
from qlabench.cli import app
from qlabench.core.errors import ConfigError
from qlabench.store.files import read_results
from qlabench.workflows import ab
from qlabench.workflows.ab import CURRENT, variant, worker_pythonpath

SUITE_TOML = """name = "ab-tiny"
device = "cpu"
[sweep]
backends = ["synthetic"]
modes = ["fwd"]
seqlen = [64, 128]
heads = [{ h_qk = 1, h_v = 1 }]
K = 32
V = 32
dtype = "float32"
[timing]
timer = "wall"
warmup = 2
min_samples = 25
max_samples = 25
max_time_s = 5.0
[check]
oracle_max_tokens = 64
"""


def git(repo, *args):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def lib_repo(tmp_path):
    """A tiny 'library' repository: v1 leaves the synthetic backend alone, v2 makes it 10x slower
    (10x, not 3x: with three copies of this test on 2 cores the paired run-to-run noise reached 34%, a
    noise floor of 141%, and the honest verdict on a 3x change was "not gateable")."""
    repo = tmp_path / "lib"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@t")
    git(repo, "config", "user.name", "t")
    for tag, factor in (("v1", "1.0"), ("v2", "10.0")):
        (repo / "sitecustomize.py").write_text(f"import os\nos.environ[{SLOWDOWN_ENV!r}] = {factor!r}\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", tag)
        git(repo, "tag", tag)
    return repo


def test_variants_resolve_and_clean_up(lib_repo, tmp_path):
    with variant(CURRENT) as v:
        assert v.pythonpath == ()
    site = tmp_path / "site"
    site.mkdir()
    with variant(str(site)) as v:
        assert v.pythonpath == (str(site.resolve()),)
    venv = tmp_path / "venv"
    (venv / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr\n")
    with variant(str(venv)) as v:
        assert v.pythonpath == (str(venv / "lib" / "python3.11" / "site-packages"),)
    with variant("v1", lib_repo) as v:
        tree = v.pythonpath[0]
        assert "'1.0'" in open(os.path.join(tree, "sitecustomize.py")).read()
        old, cwd = os.environ.get("PYTHONPATH"), os.getcwd()
        with worker_pythonpath(v):
            assert os.environ["PYTHONPATH"].split(os.pathsep)[0] == tree
            assert os.listdir(os.getcwd()) == []  # workers start where no checkout can shadow the variant
        assert os.environ.get("PYTHONPATH") == old and os.getcwd() == cwd
    assert not os.path.exists(tree)  # the worktree is removed
    with pytest.raises(ConfigError, match="neither"):
        with variant("no-such-ref", lib_repo):
            pass


def test_ab_of_two_git_refs_finds_the_slower_one(lib_repo, tmp_path, monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # one torch thread per worker (docs/GATING.md)
    suite = tmp_path / "ab-tiny.toml"
    suite.write_text(SUITE_TOML)
    out = tmp_path / "out"
    r = CliRunner().invoke(app, ["ab", "v1", "v2", "--suite", str(suite), "--repo", str(lib_repo), "--rounds", "4",
                                 "--out", str(out), "--format", "json"])
    doc = json.loads(r.output[r.output.index("{\n"):])  # progress lines (stderr) come first
    verdicts = [p["verdict"] for p in doc["pairs"]]
    # B (v2) is 10x slower on both points; a busy neighbour may blur one of them, not both.
    assert verdicts.count("slower") >= 1 and "faster" not in verdicts and "same" not in verdicts, [(p["verdict"], p["reason"]) for p in doc["pairs"]]
    assert r.exit_code == 1 and doc["base"] == "A = v1" and doc["head"] == "B = v2"
    assert all(p["paired"] and p["runs_base"] == 4 for p in doc["pairs"] if p["verdict"] == "slower")
    a = read_results([out / "a.parquet"])
    assert sorted(a["replicate"]) == [0, 0, 1, 1, 2, 2, 3, 3] and set(a["run_id"]) == {"ab-a"}
    assert len(list((out / "a" / "ab-tiny").glob("*.parquet"))) == 4  # one sweep per round and variant


def test_each_variant_with_a_path_has_its_own_kernel_caches(tmp_path, monkeypatch):
    from qlabench.measure import caches

    monkeypatch.setenv(caches.ENV_VAR, str(tmp_path / "cache"))
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "cache" / "triton"))
    before = {k: os.environ.get(k) for k in ("TRITON_CACHE_DIR", "TILELANG_CACHE_DIR", "FLASHINFER_WORKSPACE_BASE")}
    seen = {}
    for name in ("old", "new"):
        site = tmp_path / name / "site"
        site.mkdir(parents=True)
        with variant(str(site)) as v, worker_pythonpath(v):
            seen[name] = os.environ["TRITON_CACHE_DIR"]
            assert os.environ["TILELANG_CACHE_DIR"].startswith(str(tmp_path / "cache" / "variants" / v.cache_name))
            assert v.cache_name.startswith("site-")
    assert seen["old"] != seen["new"] and all("variants" in p for p in seen.values())
    with variant(CURRENT) as v, worker_pythonpath(v):
        assert os.environ["TRITON_CACHE_DIR"] == str(tmp_path / "cache" / "triton")  # current keeps its caches
    assert {k: os.environ.get(k) for k in before} == before


def test_ab_warms_both_variants_first(lib_repo, tmp_path, monkeypatch):
    from qlabench.core.spec import load_suite
    from qlabench.workflows import ab

    suite = tmp_path / "ab-tiny.toml"
    suite.write_text(SUITE_TOML)
    calls = []

    def fake_warm(s, v, jobs, device):
        calls.append((v.label, jobs))
        return (1, 0, 0.1)

    import qlabench.run.sweep as sweep_mod

    def first_sweep(*a, **k):  # stop at the first round: only what came before it matters here
        raise RuntimeError(f"round 0 started after {calls}")

    monkeypatch.setattr(ab, "warm_variant", fake_warm)
    monkeypatch.setattr(sweep_mod, "run_sweep", first_sweep)
    with variant("v1", lib_repo) as va, variant("v2", lib_repo) as vb:
        with pytest.raises(RuntimeError, match=r"round 0 started after \[\('v1', 3\), \('v2', 3\)\]"):
            ab.run_ab(load_suite(str(suite)), va, vb, tmp_path / "out", rounds=2, warmup_jobs=3)


@pytest.fixture
def qlabench_repo(tmp_path):
    """A repository holding this qlabench under pkg/ at three refs: whole ("full"), without
    qlabench/workflows ("no-workflows"), and without qlabench/run ("no-run", where no worker can start)."""
    import shutil
    from pathlib import Path

    import qlabench

    src = Path(qlabench.__file__).resolve().parents[1]
    repo = tmp_path / "qrepo"
    (repo / "pkg").mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(src), "archive", "HEAD", "qlabench"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(repo / "pkg")], input=archive.stdout, check=True)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "t@t")
    git(repo, "config", "user.name", "t")
    for tag, drop in (("full", None), ("no-workflows", "workflows"), ("no-run", "run")):
        if drop:
            shutil.rmtree(repo / "pkg" / "qlabench" / drop)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", tag)
        git(repo, "tag", tag)
    return repo


_PROBE = ("import importlib.util, qlabench; from qlabench.measure.env import git_sha; "
          "print(qlabench.__file__); print(git_sha()); print(importlib.util.find_spec('qlabench.workflows'))")


def test_a_ref_of_qlabench_imports_only_its_own_tree_and_records_its_own_sha(qlabench_repo, monkeypatch):
    import sys

    monkeypatch.setenv("QLABENCH_GIT_SHA", "the-drivers-sha")  # as scripts/h200.sh sets it for today's copy
    sha = subprocess.run(["git", "-C", str(qlabench_repo), "rev-parse", "no-workflows"], capture_output=True,
                         text=True, check=True).stdout.strip()
    with variant("no-workflows", qlabench_repo, "pkg") as v, worker_pythonpath(v):
        root = v.pythonpath[-1]
        out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True).stdout
    file, recorded, workflows = out.strip().splitlines()
    assert file.startswith(os.path.realpath(root) + os.sep) or file.startswith(root + os.sep)
    assert recorded == sha
    # the current checkout's editable install must not fill in a package the ref does not have
    assert workflows == "None"


def test_a_ref_where_qlabench_does_not_import_is_a_clear_error(qlabench_repo):
    with pytest.raises(ConfigError, match=r"'no-run' \(\w+\): qlabench does not import from its own tree: "
                                          r"ModuleNotFoundError: No module named 'qlabench.run'"):
        with variant("no-run", qlabench_repo, "pkg"):
            pass


def _worktrees(repo) -> list[str]:
    out = subprocess.run(["git", "-C", str(repo), "worktree", "list", "--porcelain"], capture_output=True,
                         text=True, check=True).stdout
    return [line.split(" ", 1)[1] for line in out.splitlines() if line.startswith("worktree ")]


def test_a_killed_ab_leaves_nothing_after_the_next_one_and_a_finished_ab_leaves_nothing(lib_repo):
    import signal
    import sys
    from pathlib import Path

    code = (f"import os, signal\nfrom qlabench.workflows.ab import variant\n"
            f"with variant('v1', {str(lib_repo)!r}) as v:\n    print(v.pythonpath[0], flush=True)\n"
            f"    os.kill(os.getpid(), signal.SIGKILL)\n")
    killed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL
    stale = Path(killed.stdout.strip())
    assert stale.exists() and len(_worktrees(lib_repo)) == 2  # what kill -9 leaves
    with variant("v1", lib_repo) as v:
        tree = Path(v.pythonpath[0])
        assert not stale.parent.exists() and len(_worktrees(lib_repo)) == 2  # the stale one gone, ours there
    assert _worktrees(lib_repo) == [str(lib_repo.resolve())]
    assert not tree.parent.exists()  # the variant's temp folder too, not only its worktree


@pytest.mark.parametrize("kw", [{"rounds": 10**6}, {"rounds": 1}, {"warmup_jobs": 10**6}, {"warmup_jobs": -1}])
def test_ab_bounds_its_numeric_options(tmp_path, kw):
    from qlabench.core.spec import load_suite
    from qlabench.workflows.ab import Variant, run_ab

    suite = tmp_path / "ab-tiny.toml"
    suite.write_text(SUITE_TOML)
    kw = {"rounds": 2, **kw}
    with pytest.raises(ConfigError, match="must be between"):
        run_ab(load_suite(str(suite)), Variant(CURRENT), Variant(CURRENT), tmp_path / "out", **kw)


def test_a_site_folder_variant_carries_the_folders_its_pth_files_name(tmp_path):
    """`pip install --target` keeps .pth files that Python reads only for site directories: the variant puts
    the folders they add on PYTHONPATH after the site folder, a plain path line and an `import` line alike
    (nvidia-cutlass-dsl 4.8's .pth is `import sys, os, nvidia_cutlass_dsl; sys.path.insert(...)`)."""
    site = tmp_path / "site"
    (site / "pkg_dsl" / "dsl_packages").mkdir(parents=True)
    (site / "pkg_dsl" / "__init__.py").write_text("")
    (site / "plain" / "extra").mkdir(parents=True)
    (site / "a.pth").write_text("# a plain path\nplain/extra\nmissing_dir\n")
    (site / "dsl.pth").write_text("import sys, os, pkg_dsl; sys.path.insert(0, os.path.join(pkg_dsl.__path__[0], "
                                  "'dsl_packages'))\n")
    with variant(str(site)) as v:
        root = site.resolve()
        assert v.pythonpath[0] == str(root)
        assert set(v.pythonpath[1:]) == {str(root / "pkg_dsl" / "dsl_packages"), str(root / "plain" / "extra")}


def test_a_warm_up_that_failed_says_why_never_that_the_points_will(tmp_path):
    # was: "2 compile groups ..., 2 failed (their points will say why)" while every point was ok and none said why
    from qlabench.core.spec import load_suite

    broken = tmp_path / "broken" / "qlabench"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise RuntimeError('this qlabench is broken on purpose')\n")
    (broken / "__main__.py").write_text("")
    suite = tmp_path / "s.toml"
    suite.write_text(SUITE_TOML)
    v = ab.Variant("broken", (str(tmp_path / "broken"),))
    groups, failed, wall, why = ab.warm_variant(load_suite(str(suite)), v, 2, "cpu")
    assert groups >= 1 and failed == groups and "this qlabench is broken on purpose" in why
    line = ab.warmup_line("broken", (groups, failed, wall, why))
    assert f"{failed} did not warm up (RuntimeError: this qlabench is broken on purpose)" in line
    assert "will say why" not in line and "the rounds still measure every point" in line
    assert ab.warmup_line("ok", (2, 0, 1.0, "")) == "warm-up ok: 2 compile groups in 1 s"


def test_a_git_ref_on_a_dirty_tree_says_the_uncommitted_changes_are_not_measured(tmp_path):
    import subprocess

    repo = tmp_path / "r"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "k.py").write_text("x = 1\n")
    subprocess.run([*git, "add", "k.py"], check=True)
    subprocess.run([*git, "commit", "-qm", "k"], check=True)
    assert ab.dirty_tree_note("HEAD", repo) is None  # clean: nothing to say
    (repo / "k.py").write_text("x = 2\n")
    note = ab.dirty_tree_note("HEAD", repo)
    assert note and "1 uncommitted change(s)" in note and "not measured" in note and "`current`" in note
    assert ab.dirty_tree_note("current", repo) is None and ab.dirty_tree_note(str(tmp_path), repo) is None
