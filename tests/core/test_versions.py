"""A row's one version record (core/versions.py): the libraries each backend's call uses, the record made from an
environment (a library backend's stack, an engine's version, a plugin's distribution and commit), the record
derived from an older row's columns, and what views read of it."""

from __future__ import annotations

import pytest

from qlabench.core import backend_decl, versions
from qlabench.core.decl_types import BackendDecl, Provider
from qlabench.core.errors import BackendError
from qlabench.core.result import backend_provenance

ENV = {"torch_version": "2.11.0", "triton_version": "3.6.0", "tilelang_version": "0.1.15", "fla_version": "0.6.0",
       "flash_qla_version": "0.1.3", "flashinfer_version": "0.7.4", "qlabench_version": "0.1.0",
       "git_sha": "abc+dirty", versions.ENGINE_KEY: {"vllm": "0.34.0"}}


@pytest.fixture
def plugin():
    """A plugin backend as the measuring process holds it once loaded: its distribution, version and checkout."""
    d = BackendDecl("my-gdn", "my kernel", "my_gdn.kernel:fn", roles=frozenset({"prefill"}),
                    provider=Provider("my-gdn-kernels", "1.2.0", "0123456789abcdef0123", True))
    backend_decl.register(d)
    yield d
    backend_decl.unregister(d.name)


def test_each_backend_names_the_libraries_its_call_uses_its_own_first():
    assert versions.call_libraries("flash_qla-nocp") == ("flash-qla", "tilelang", "torch")
    assert versions.call_libraries("fla") == ("fla", "triton", "torch")
    assert versions.call_libraries("flashinfer") == ("flashinfer", "torch")
    assert versions.call_libraries("vllm-decode") == ("vllm", "triton", "torch")
    assert versions.call_libraries("sglang-mtp") == ("sglang", "triton", "torch")
    assert versions.call_libraries("layer:flash_qla") == ("flash-qla", "tilelang", "torch")  # a layer runs its core
    assert versions.call_libraries("naive-chunk") == ("qlabench", "torch")
    assert versions.call_libraries("no-such-backend") == ()


def test_a_library_backend_records_its_stack_and_its_own_version():
    got = backend_provenance("flash_qla", ENV)
    assert got["versions"] == {"flash-qla": "0.1.3", "tilelang": "0.1.15", "torch": "2.11.0"}
    assert (got["backend_dist"], got["backend_version"]) == ("flash-qla", "0.1.3")
    # a library that is not installed has no entry: never a guess
    got = backend_provenance("fla", {**ENV, "triton_version": None})
    assert got["versions"] == {"fla": "0.6.0", "torch": "2.11.0"}


def test_an_engine_backend_records_the_engine_not_qlabench():
    got = backend_provenance("vllm-decode", ENV)
    assert got["versions"] == {"vllm": "0.34.0", "triton": "3.6.0", "torch": "2.11.0"}
    assert (got["backend_dist"], got["backend_version"]) == ("vllm", "0.34.0")
    assert "backend_git_sha" not in got  # qlabench's commit is not the engine's
    # a kernel site is no installed distribution: the version its backend read at the call comes first
    got = backend_provenance("sglang-decode", ENV, found={"sglang": "0.5.23"})
    assert (got["backend_dist"], got["backend_version"]) == ("sglang", "0.5.23")
    # neither installed nor found: no version, not qlabench's
    got = backend_provenance("sglang-mtp", ENV)
    assert got["versions"] == {"triton": "3.6.0", "torch": "2.11.0"}
    assert (got["backend_dist"], got["backend_version"]) == ("sglang", None)


def test_a_plugin_records_its_distribution_version_and_commit(plugin):
    got = backend_provenance("my-gdn", ENV)
    assert got["versions"] == {"my-gdn-kernels": "1.2.0", "torch": "2.11.0",
                               "my-gdn-kernels commit": "0123456789abcdef0123+dirty"}
    assert (got["backend_dist"], got["backend_version"]) == ("my-gdn-kernels", "1.2.0")
    row = {"backend": "my-gdn", "backend_dist": "my-gdn-kernels", "versions": got["versions"]}
    assert versions.own_version(row) == "1.2.0"
    assert versions.stack_text(row) == "my-gdn-kernels 1.2.0 + my-gdn-kernels commit 0123456789ab+dirty"


def test_qlabench_own_kernels_record_qlabench_and_torch():
    got = backend_provenance("naive-chunk", ENV)
    assert got["versions"] == {"qlabench": "0.1.0", "torch": "2.11.0"}
    assert (got["backend_dist"], got["backend_version"], got["backend_git_sha"]) == ("qlabench", "0.1.0", "abc")
    assert versions.stack_text({"backend": "naive-chunk", "versions": got["versions"]}) == "torch 2.11.0"


def test_an_older_row_has_its_record_derived_from_its_columns():
    old = {**{k: v for k, v in ENV.items() if k != versions.ENGINE_KEY}, "backend": "flash_qla"}
    assert versions.derived(old) == {"flash-qla": "0.1.3", "tilelang": "0.1.15", "torch": "2.11.0"}
    # an engine's row named qlabench: its version comes from the kernel source its details record
    engine = {**old, "backend": "vllm-decode", "backend_dist": "qlabench", "backend_version": "0.1.0",
              "extra_json": '{"engine": {"engine": "vllm", "version": "0.33.0", "from": "kernel site"}}'}
    assert versions.derived(engine) == {"vllm": "0.33.0", "triton": "3.6.0", "torch": "2.11.0"}
    # a plugin this process does not know: read off its backend_* columns
    plugin = {"backend": "their-kernel", "backend_dist": "their-dist", "backend_version": "2.0", "torch_version": "2.9",
              "backend_git_sha": "feed", "backend_git_dirty": False}
    assert versions.derived(plugin) == {"their-dist": "2.0", "torch": "2.9", "their-dist commit": "feed"}
    assert versions.own_version(plugin) == "2.0"  # what advise prints: never "not recorded"
    # a row without the column reads its derived record; a NaN (pandas' null) is no version
    assert versions.versions_of({"backend": "fla", "fla_version": float("nan"), "versions": None}) == {}


def test_a_record_reads_back_as_arrow_gives_it():
    row = {"backend": "fla", "versions": [("fla", "0.6.0"), ("triton", "3.6.0")]}
    assert versions.versions_of(row) == {"fla": "0.6.0", "triton": "3.6.0"}
    assert versions.versions_text(versions.versions_of(row)) == "fla 0.6.0, triton 3.6.0"
    assert versions.stack_text({"backend": "fla", "versions": [("torch", "2.11.0")]}) == "fla (version not recorded)"


def test_a_backend_calls_a_library_or_an_engine_not_both():
    with pytest.raises(BackendError, match="not both"):
        BackendDecl("x", "x", "qlabench.backends.naive:NaiveChunk", library="fla", engine="vllm")
