"""The registry of declarations (core/backend_decl.py): what every layer reads backend facts through."""

from __future__ import annotations

import subprocess
import sys
import pytest

from qlabench.core import backend_decl as bd
from qlabench.core.decl_types import BackendDecl, Provider
from qlabench.core.errors import BackendError


def _dist_info(root, dist: str, version: str, entry_points: dict[str, str]):
    """A distribution importlib.metadata finds on sys.path: a `.dist-info` with entry points, nothing else."""
    d = root / f"{dist.replace('-', '_')}-{version}.dist-info"
    d.mkdir(parents=True)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (d / "entry_points.txt").write_text(f"[{bd.ENTRY_POINT_GROUP}]\n{lines}")
    return root


def test_reading_the_declarations_imports_no_torch():
    code = ("import sys, qlabench.core.backend_decl as d; d.declarations(); d.candidates('prefill'); "
            "d.auto_choices(); print('torch' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_the_builtins_come_first_in_order_and_layers_last():
    decls = bd.declarations()
    names = list(decls)
    assert names[:3] == ["naive-recurrent", "naive-chunk", "naive-step"]
    assert [d.order for d in decls.values()] == list(range(len(decls)))
    layers = [n for n in names if n.startswith("layer:")]
    assert names[-len(layers):] == layers and layers == [f"layer:{c}" for c in bd.layer_cores()]
    assert bd.view_order() == tuple(names)


def test_candidates_are_the_roles_in_view_order():
    assert bd.candidates("prefill") == ("flash_qla", "flash_qla-nocp", "flash_qla-forcecp", "fla", "fla-intracp",
                                        "flashinfer", "flashinfer-nocp", "flashinfer-forcecp")
    assert bd.candidates("train") == ("flash_qla", "flash_qla-nocp", "fla", "flashinfer-train")
    assert not any(bd.is_testing(n) for n in bd.candidates("prefill"))
    assert bd.is_testing("fault") and bd.is_testing("fla-dispatch-on") and not bd.is_testing("fla")


def test_labels_libraries_and_stacks():
    assert bd.label_of("flash_qla-nocp") == "FlashQLA, intra-card CP off"
    assert bd.label_of("not-declared") == "not-declared"
    assert bd.library_of("fla-intracp").name == "fla" and bd.library_of("flashinfer-pool").name == "flashinfer"
    assert bd.library_of("naive-chunk") is None and bd.library_of("layer:flash_qla") is None
    assert bd.stack_columns("flash_qla") == ("flash_qla_version", "tilelang_version")


def test_auto_choices_are_derived_from_the_cp_settings():
    choices = {c.library: c for c in bd.auto_choices()}
    assert list(choices) == ["flash-qla", "flashinfer"]
    assert choices["flash-qla"].variants == {"flash_qla": "auto", "flash_qla-nocp": "nocp",
                                             "flash_qla-forcecp": "forcecp"}
    assert choices["flashinfer"].cp_mark == "CPDeltaRule"
    assert bd.AUTO_CHOICE_OF["flashinfer"].settings == ("nocp", "forcecp")


def test_pool_access_and_layer_cores():
    assert bd.pool_access_of("vllm-decode")[0] == "slot indices in the kernel"
    assert bd.pool_access_of("fla") is None
    assert set(bd.POOL_ACCESS) >= {"fla-recurrent", "flashinfer-decode", "sglang-mtp", "naive-recurrent"}
    assert bd.layer_cores() == ("naive-recurrent", "naive-chunk", "flash_qla", "flash_qla-nocp",
                                "flash_qla-forcecp", "fla", "fla-recurrent", "flashinfer")
    assert bd.decl_of("layer:fla").autotune_modules == ("fla.",)


def test_an_unknown_name_lists_the_known_ones():
    with pytest.raises(BackendError, match="unknown backend 'nope'.*naive-recurrent"):
        bd.decl_of("nope")
    with pytest.raises(BackendError, match="no layer backend is made around 'fault'"):
        bd.decl_of("layer:fault")


def test_a_module_function_name_is_declared_on_first_use():
    try:
        d = bd.decl_of("some_pkg.kernels:chunk_fwd")
        assert d.impl == "some_pkg.kernels:chunk_fwd" and d.modes == frozenset({"fwd"}) and "prefill" in d.roles
        assert "some_pkg.kernels:chunk_fwd" in bd.candidates("prefill")
    finally:
        bd.unregister("some_pkg.kernels:chunk_fwd")
    for bad in ("pkg.mod", "pkg mod:fn", "pkg.mod:", ":fn", "layer:fla"):
        with pytest.raises(BackendError):
            bd.declare_callable(bad)


def test_a_registered_declaration_is_found_by_every_function():
    dummy = BackendDecl("dummy-kernel", "Dummy, my own", "tests.x:Y", library="fla", roles=frozenset({"train"}),
                        cp_setting="auto", layer_core=True, pool_access=("x", "y"))
    bd.register(dummy)
    try:
        assert "dummy-kernel" in bd.candidates("train") and bd.label_of("dummy-kernel") == "Dummy, my own"
        assert bd.library_of("dummy-kernel").name == "fla" and "layer:dummy-kernel" in bd.declarations()
        assert any(c.auto == "dummy-kernel" for c in bd.auto_choices()) and bd.pool_access_of("dummy-kernel")
    finally:
        bd.unregister("dummy-kernel")
    assert "dummy-kernel" not in bd.declarations()


def test_a_declaration_is_checked():
    with pytest.raises(BackendError, match="unknown role"):
        BackendDecl("x", "x", "m:x", roles=frozenset({"prefil"}))
    with pytest.raises(BackendError, match="needs the library"):
        BackendDecl("x", "x", "m:x", cp_setting="auto")


def test_plugins_are_read_from_entry_points_without_importing_them(tmp_path, monkeypatch):
    root = _dist_info(tmp_path, "my-gdn-kernels", "1.2.3", {"my-kernel": "my_gdn_never_imported:chunk",
                                                              "fla": "my_gdn_never_imported:other"})
    monkeypatch.syspath_prepend(str(root))
    decls = bd.declarations()
    d = decls["my-kernel"]
    assert d.impl == "my_gdn_never_imported:chunk" and d.provider == Provider("my-gdn-kernels", "1.2.3")
    assert d.plugin and d.order > decls["synthetic"].order  # after the built-ins, before the layers
    assert decls["fla"].impl.startswith("qlabench.")  # a plugin never replaces a built-in...
    assert "'fla' is the name of a built-in backend" in bd.plugin_problems()["fla"]  # ...and says so
    assert "my_gdn_never_imported" not in sys.modules
    assert "my-kernel" in bd.candidates("prefill")



@pytest.mark.parametrize("name,said", [
    ("[x](javascript:alert(1))", "holds ':', which marks a `module:function` name"),
    ("fla", "'fla' is the name of a built-in backend"),
    ("layer:mine", "begins with 'layer:', which names the layer backends"),
    ("ok\x1b[2Jname", r"its name 'ok\\x1b[2Jname' holds a control or format character"),
    (" ", "its name is empty"),
])
def test_an_entry_point_refused_says_what_is_wrong_with_its_name(name, said, tmp_path, monkeypatch):
    # was: "is a built-in or reserved name" for every one of them (a markdown link is neither)
    root = _dist_info(tmp_path, "odd-names", "0.1", {"fine-one": "odd_never_imported:f"})
    ep = root / "odd_names-0.1.dist-info" / "entry_points.txt"
    ep.write_text(ep.read_text() + f"{name} = odd_never_imported:g\n")
    monkeypatch.syspath_prepend(str(root))
    problems = bd.plugin_problems()
    key = name.strip() or next(k for k in problems if not k.strip())
    assert key in problems and said in problems[key], problems
    assert "built-in or reserved" not in problems[key]
    assert "fine-one" in bd.declarations()
