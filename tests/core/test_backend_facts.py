"""The backends' declared facts as the views read them: without torch, and as advise is handed them."""

from __future__ import annotations

import subprocess
import sys

from qlabench.core.backend_facts import FACTS, facts_of, view_facts
from qlabench.core.backend_decl import LAYER_CORES
from qlabench.core.layer_shapes import layer_backend_name


def test_reading_the_facts_imports_no_torch():
    code = "import sys, qlabench.core.backend_facts as f; f.view_facts(); print('torch' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "False"


def test_view_facts_are_the_table_as_advise_takes_it():
    facts = view_facts()
    assert facts["calls"] == {n: f.call_signature for n, f in FACTS.items()}
    assert facts["autotuning"] == {n for n, f in FACTS.items() if f.autotune_modules}
    assert facts["size_dependent"] == {n for n, f in FACTS.items() if f.size_dependent_path}
    assert "fla" in facts["autotuning"] and "flash_qla" in facts["size_dependent"]
    assert facts["calls"]["naive-recurrent"] == ""  # qlabench's own kernel: no library call


def test_every_layer_backend_is_declared_with_its_cores_tuning_and_no_call_of_its_own():
    for core in LAYER_CORES:
        layer = FACTS[layer_backend_name(core)]
        assert layer.autotune_modules == FACTS[core].autotune_modules
        assert layer.call_signature == "" and not layer.size_dependent_path


def test_an_undeclared_backend_declares_nothing():
    f = facts_of("a-test-stand-in")
    assert (f.call_signature, f.autotune_modules, f.size_dependent_path) == ("", (), False)
