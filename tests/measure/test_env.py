"""Which commit a run records (env.git_sha_of): the checkout's own, or the one a shipped copy names."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from qlabench.measure.env import git_sha_of

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path, monkeypatch):
    monkeypatch.delenv("QLABENCH_GIT_SHA", raising=False)
    _git(tmp_path, "init", "-q")
    (tmp_path / "f.txt").write_text("a\n")
    _git(tmp_path, "add", "f.txt")
    _git(tmp_path, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "one")
    return tmp_path


def test_a_checkout_records_its_head_and_whether_it_is_dirty(repo, monkeypatch):
    head = _git(repo, "rev-parse", "HEAD")
    assert git_sha_of(repo) == head
    (repo / "f.txt").write_text("b\n")
    assert git_sha_of(repo) == head + "+dirty"
    monkeypatch.setenv("QLABENCH_GIT_SHA", "stale")  # a real checkout knows better than a leftover variable
    assert git_sha_of(repo) == head + "+dirty"


def test_a_copy_nested_in_another_checkout_does_not_take_its_commit(repo, monkeypatch):
    snap = repo / ".snap"  # a `git archive` snapshot unpacked inside the outer repository
    snap.mkdir()
    assert git_sha_of(snap) is None
    monkeypatch.setenv("QLABENCH_GIT_SHA", "285ab58d121859a5a3370975cecd67bd0d6aff7d")
    assert git_sha_of(snap) == "285ab58d121859a5a3370975cecd67bd0d6aff7d"


def test_outside_any_repository_only_the_variable_counts(tmp_path, monkeypatch):
    monkeypatch.delenv("QLABENCH_GIT_SHA", raising=False)
    assert git_sha_of(tmp_path) is None
    monkeypatch.setenv("QLABENCH_GIT_SHA", "abc123")
    assert git_sha_of(tmp_path) == "abc123"


def test_rows_record_flashinfers_version_and_old_fingerprints_stay():
    from qlabench.measure import env as envmod

    e = envmod.capture("cpu")
    assert "flashinfer_version" in e  # None here (not installed); its version on a host that has it
    without = dict(e, flashinfer_version=None)
    assert envmod.fingerprint(without) == envmod.fingerprint({k: v for k, v in without.items()
                                                              if k != "flashinfer_version"})
    assert envmod.fingerprint(dict(e, flashinfer_version="0.6.13")) != envmod.fingerprint(without)


def test_an_engine_backends_row_records_the_engines_version_not_qlabenchs(monkeypatch):
    import dataclasses
    from importlib import metadata

    from qlabench.core.point import Point
    from qlabench.core.result import Status, make_row
    from qlabench.core.versions import ENGINE_KEY
    from qlabench.measure import env as envmod

    real = metadata.version

    def version(name):  # vLLM installed at 0.34.0; SGLang not
        if name == "vllm":
            return "0.34.0"
        if name == "sglang":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(envmod.metadata, "version", version)
    e = envmod.capture("cpu")
    assert e[ENGINE_KEY] == {"vllm": "0.34.0"}
    p = Point(backend="vllm-decode", mode="decode", layout="dense", batch=4, seqlens=(1,) * 4, h_qk=2, h_v=4, K=16,
              V=16, dtype="bfloat16", state_dtype="float32", state_layout="vk", pool=8)
    row = make_row(p, run_id="r", suite="s", env=e, status=Status.SKIPPED, reason="backend unavailable: no CUDA")
    assert (row.backend_dist, row.backend_version) == ("vllm", "0.34.0") != ("qlabench", e["qlabench_version"])
    assert row.versions["vllm"] == "0.34.0" and list(row.versions)[0] == "vllm"
    sgl = make_row(dataclasses.replace(p, backend="sglang-decode"), run_id="r", suite="s", env=e,
                   status=Status.SKIPPED, reason="backend unavailable: no CUDA")
    assert sgl.backend_dist == "sglang" and sgl.backend_version is None and "sglang" not in sgl.versions


def test_a_copy_that_names_no_commit_records_the_digest_of_its_sources(tmp_path):
    """A row made by a copy that is no checkout and names no commit still says which code made it."""
    from qlabench.measure.env import source_digest

    pkg = tmp_path / "qlabench"
    pkg.mkdir()
    (pkg / "a.py").write_text("x = 1\n")
    first = source_digest(pkg)
    assert first.startswith("src:") and len(first) == 20
    other = tmp_path / "other" / "qlabench"
    other.mkdir(parents=True)
    (other / "a.py").write_text("x = 2\n")
    assert source_digest(other) != first
