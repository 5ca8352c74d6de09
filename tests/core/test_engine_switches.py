"""The engines' switch table holds its shape: every backend it names is registered, every entry cites the
engine source it was read from, and the automatic rules answer per GPU as the engines' sources say."""

from __future__ import annotations

import re

import pytest

from qlabench.core.backend_facts import FACTS
from qlabench.core.engine_switches import (ENGINES, NOT_SELECTABLE, PHASES, SWITCHES, default_switch, sm_major,
                                           switches)

# a path inside the engine's wheel, then line numbers or ranges ('a.py:12-20, 40-41; b.py:7')
CITE = re.compile(r"^[\w/.]+\.py:\d+(-\d+)?(, \d+(-\d+)?)*(; [\w/.]+\.py:\d+(-\d+)?(, \d+(-\d+)?)*)*$")


def test_every_backend_the_table_names_is_registered():
    named = {s.backend for s in SWITCHES if s.backend} | {b for m in NOT_SELECTABLE.values() for b in m}
    assert named <= set(FACTS), named - set(FACTS)


def test_every_switch_cites_its_source_and_names_a_known_engine_and_phase():
    for s in SWITCHES:
        assert s.engine in ENGINES and s.phase in PHASES, s
        assert CITE.match(s.source), s.source
        assert s.select and s.kernel, s
        assert s.default_when or not s.default_sm, s  # a default says when it holds


def test_engines_name_the_wheel_and_its_hash():
    for e in ENGINES.values():
        assert e.version in e.wheel and re.fullmatch(r"[0-9a-f]{64}", e.sha256)


def test_no_backend_is_both_selectable_and_not():
    for engine, reasons in NOT_SELECTABLE.items():
        for backend in reasons:
            assert not [s for p in PHASES for s in switches(engine, p, backend)], (engine, backend)


def test_flashqla_has_no_switch_in_either_engine():
    for engine in ENGINES:
        assert not [s for p in PHASES for s in switches(engine, p, "flash_qla")]
        assert "FlashQLA" in NOT_SELECTABLE[engine]["flash_qla"]


@pytest.mark.parametrize("engine,phase,sm,backend", [
    ("vllm", "prefill", 9, "flashinfer"), ("sglang", "prefill", 9, "flashinfer"),
    ("vllm", "prefill", 8, None),  # no automatic FlashInfer on Ampere: the table names no default there
    ("vllm", "decode", 9, "vllm-decode"), ("sglang", "decode", 9, "sglang-decode"),
    ("sglang", "decode", 10, "sglang-decode"),  # the first rule: FlashInfer's needs --mamba-ssm-dtype bfloat16
    ("vllm", "mtp", 9, None),  # the fused CUDA verify kernel, which qlabench does not time
    ("sglang", "mtp", 9, "sglang-mtp"),
])
def test_the_default_per_gpu_is_the_engines_rule(engine, phase, sm, backend):
    d = default_switch(engine, phase, sm)
    if engine == "vllm" and phase == "prefill" and sm == 8:
        assert d is None
    else:
        assert d is not None and d.backend == backend


def test_gpu_names_map_to_their_sm_family():
    assert sm_major("NVIDIA H200") == 9 and sm_major("NVIDIA B200") == 10 and sm_major("NVIDIA GB200") == 10
    assert sm_major("NVIDIA A100-SXM4-80GB") == 8 and sm_major("cpu") is None and sm_major(None) is None
    assert default_switch("vllm", "prefill", None) is None
