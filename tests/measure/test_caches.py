"""Kernel-cache configuration: every JIT library is pointed under one qlabench folder."""

import os

from qlabench.measure import caches as cache


def test_configure_points_each_library_under_the_root(tmp_path, monkeypatch):
    for var in (*cache.CACHE_VARS, cache.ENV_VAR):
        monkeypatch.delenv(var, raising=False)
    chosen = cache.configure(tmp_path / "c")
    assert chosen["TILELANG_CACHE_DIR"] == str(tmp_path / "c" / "tilelang")
    assert chosen["TRITON_CACHE_DIR"] == str(tmp_path / "c" / "triton")
    # FlashInfer 0.7's CuTe DSL compiles too: carried with the folder, emptied with it for a cold start
    assert chosen["CUTE_DSL_CACHE_DIR"] == str(tmp_path / "c" / "cute-dsl")
    assert all(os.path.isdir(p) for p in chosen.values())


def test_a_user_setting_wins_unless_overridden(tmp_path, monkeypatch):
    for var in ("TILELANG_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", cache.ENV_VAR):
        monkeypatch.delenv(var, raising=False)  # registered, so monkeypatch restores them afterwards
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "mine"))
    assert cache.configure(tmp_path / "c")["TRITON_CACHE_DIR"] == str(tmp_path / "mine")
    cache.use_cache_dir(tmp_path / "forced")
    assert os.environ["TRITON_CACHE_DIR"] == str(tmp_path / "forced" / "triton")
    assert os.environ[cache.ENV_VAR] == str(tmp_path / "forced")
