"""A function of FLA's calling convention as a backend (backends/function.py), its loading and provenance
(backends/plugin.py): dense and packed inputs, wrong returns named, a failed import kept as the reason."""

from __future__ import annotations

import subprocess

import pytest
import torch
from plugin_fixture import EXAMPLE, dist_info, on_path

from qlabench.backends.function import FunctionBackend
from qlabench.backends.naive import NaiveRecurrent
from qlabench.backends.plugin import Unloadable, load
from qlabench.core import backend_decl
from qlabench.core.errors import BackendError
from qlabench.core.point import Point
from qlabench.measure.inputs import make_inputs


def _point(layout: str) -> Point:
    lens = (24,) * 2 if layout == "dense" else (16, 40)
    return Point(backend="x", mode="fwd", layout=layout, batch=len(lens) if layout == "dense" else 1, seqlens=lens,
                 h_qk=2, h_v=4, K=16, V=16, dtype="float32")


@pytest.mark.parametrize("layout", ["dense", "varlen"])
def test_the_example_kernel_matches_the_oracle_in_the_dense_and_the_packed_form(layout, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))
    from gdn_example.kernel import chunk_gated_delta_rule

    inp = make_inputs(_point(layout), "cpu")
    b = FunctionBackend(backend_decl.plugin_decl("ex", "gdn_example.kernel:chunk_gated_delta_rule", None),
                        chunk_gated_delta_rule)
    o, ht = b.prepare("fwd", inp)().values()
    want_o, want_ht = NaiveRecurrent().forward(inp)
    torch.testing.assert_close(o, want_o, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(ht, want_ht, rtol=1e-4, atol=1e-5)


def test_a_function_returning_something_else_fails_with_the_convention_named():
    inp = make_inputs(_point("varlen"), "cpu")
    decl = backend_decl.plugin_decl("bad", "m:f", None)
    with pytest.raises(BackendError, match=r"returned a torch.Tensor, not a tuple; .* returns \(o, final_state\)"):
        FunctionBackend(decl, lambda *a, **k: a[0]).forward(inp)
    with pytest.raises(BackendError, match="final_state of shape"):  # one state for the packed batch, not per sequence
        FunctionBackend(decl, lambda q, k, v, *a, **kw: (v, torch.zeros(1, 4, 16, 16))).forward(inp)


def test_a_plugin_that_fails_to_import_is_unavailable_with_the_reason():
    b = load(backend_decl.plugin_decl("gone", "no_such_module_x:fn", None))
    assert isinstance(b, Unloadable)
    assert b.available() == (False, "no_such_module_x:fn failed to import: ModuleNotFoundError: No module named "
                                    "'no_such_module_x'")


def test_a_plugin_installed_from_a_checkout_records_its_commit(tmp_path, monkeypatch):
    repo = tmp_path / "kernels"
    (repo / "my_gdn").mkdir(parents=True)
    (repo / "my_gdn" / "__init__.py").write_text("def fwd(*a, **k):\n    return None\n")
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "."], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "k"], check=True)
    sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    on_path(monkeypatch, dist_info(tmp_path / "site", "my-gdn", "2.1.0", {"my-gdn": "my_gdn:fwd"}, source=repo), repo)
    try:
        b = load(backend_decl.decl_of("my-gdn"))
        assert isinstance(b, FunctionBackend)
        pv = backend_decl.decl_of("my-gdn").provider
        assert (pv.dist, pv.version, pv.git_sha, pv.git_dirty) == ("my-gdn", "2.1.0", sha, False)
        (repo / "my_gdn" / "__init__.py").write_text("def fwd(*a, **k):\n    return 1\n")
        assert load(backend_decl.decl_of("my-gdn")).decl.provider.git_dirty is True
    finally:
        backend_decl.unregister("my-gdn")


@pytest.mark.parametrize("ret,said", [
    (lambda q, k, v, *a, **kw: (v, None), "returned a tuple of 2 whose final_state is None, not a torch.Tensor"),
    (lambda q, k, v, *a, **kw: v.numpy(), "returned a numpy.ndarray, not a tuple"),
    (lambda q, k, v, *a, **kw: (v.numpy(), None), "returned a tuple of 2 whose o is a numpy.ndarray and final_state "
                                                  "is None, not a torch.Tensor"),
    (lambda q, k, v, *a, **kw: [v, v, v], "returned a list of 3 item(s), not 2"),
])
def test_a_wrong_return_is_said_of_what_was_returned(ret, said):
    # was: "returned tuple, not (o, final_state)" for (o, None), and likewise for a numpy array inside a tuple
    decl = backend_decl.plugin_decl("bad", "m:f", None)
    with pytest.raises(BackendError) as e:
        FunctionBackend(decl, ret).forward(make_inputs(_point("dense"), "cpu"))
    assert said in str(e.value), str(e.value)


def test_an_output_in_another_dtype_than_the_points_is_refused():
    # was: a float32 o of a bfloat16 point checked and timed as if the kernel computed in bfloat16
    p = Point(backend="x", mode="fwd", layout="dense", batch=1, seqlens=(16,), h_qk=2, h_v=4, K=16, V=16,
              dtype="bfloat16")
    inp = make_inputs(p, "cpu")
    decl = backend_decl.plugin_decl("f32", "m:f", None)
    ht = torch.zeros(1, 4, 16, 16)
    with pytest.raises(BackendError, match="returned o of dtype float32, expected bfloat16, the point's dtype"):
        FunctionBackend(decl, lambda q, k, v, *a, **kw: (v.float(), ht)).forward(inp)
    o, _ = FunctionBackend(decl, lambda q, k, v, *a, **kw: (v.clone(), ht)).forward(inp)  # its own dtype: taken
    assert o.dtype == torch.bfloat16
