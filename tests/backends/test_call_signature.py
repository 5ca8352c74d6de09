"""Each library backend a user can be advised to use declares the call that gets what it times."""

from __future__ import annotations

import pytest

from qlabench.backends.registry import REGISTRY

# The library backends advise ranks, and what tells each apart from its siblings in the call.
SELECTS = {
    "flash_qla": "auto_cp=True)",
    "flash_qla-nocp": "auto_cp=False",
    "flash_qla-forcecp": "force_intra_cp=True",
    "fla": "FLA_INTRACARD_CP=0",
    "fla-intracp": "FLA_INTRACARD_CP=1",
    "flashinfer": "use_cp left to FlashInfer",
    "flashinfer-nocp": "use_cp=False",
    "flashinfer-forcecp": "use_cp=True",
}


@pytest.mark.parametrize("name, switch", SELECTS.items())
def test_a_library_backend_declares_its_call_with_the_switch_that_selects_it(name, switch):
    sig = REGISTRY[name].call_signature
    assert sig.split("(")[0].endswith("chunk_gated_delta_rule"), sig
    assert switch in sig


def test_siblings_declare_different_calls():
    sigs = [REGISTRY[n].call_signature for n in SELECTS]
    assert len(set(sigs)) == len(sigs)


def test_qlabench_own_kernels_declare_no_library_call():
    assert REGISTRY["naive-recurrent"].call_signature == ""
