"""GPU model names as typed and as reported (qlabench/core/gpu_names.py): one rule for advise --gpu and
report --published."""

from __future__ import annotations

import pytest

from qlabench.core.gpu_names import gpu_words, names_gpu, same_gpu, short_gpu_name


@pytest.mark.parametrize("typed, gpu", [
    ("RTX 5090", "NVIDIA GeForce RTX 5090"), ("5090", "NVIDIA GeForce RTX 5090"), ("h200", "NVIDIA H200"),
    ("GB200", "NVIDIA GB200"), ("pro6000", "NVIDIA RTX PRO 6000 Blackwell Server Edition"),
    ("RTX PRO 6000", "NVIDIA RTX PRO 6000 Blackwell Server Edition"), ("NVIDIA H200", "NVIDIA H200"),
])
def test_a_typed_name_names_its_gpu(typed, gpu):
    assert names_gpu(typed, gpu)


@pytest.mark.parametrize("typed, gpu", [
    ("H200", "NVIDIA GB200"), ("GB200", "NVIDIA H200"), ("B200", "NVIDIA GB200"), ("RTX 5090", "NVIDIA H200"),
    ("NVIDIA", "NVIDIA H200"), ("", "NVIDIA H200"), ("RTX 6000", "NVIDIA GeForce RTX 5090"),
])
def test_a_typed_name_does_not_name_another_gpu(typed, gpu):
    assert not names_gpu(typed, gpu)


def test_the_same_model_is_one_and_a_variant_is_another():
    assert same_gpu("NVIDIA H200", "H200") and not same_gpu("NVIDIA H200", "NVIDIA H200 NVL")
    assert gpu_words("NVIDIA GeForce RTX 5090") == ("rtx", "5090")


def test_a_short_name_drops_the_vendor_only():
    assert short_gpu_name("NVIDIA GeForce RTX 5090") == "RTX 5090" and short_gpu_name("NVIDIA GB200") == "GB200"
