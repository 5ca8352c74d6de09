"""Timing regimes (qlabench/core/regimes.py): the lead-in each regime asks for."""

from __future__ import annotations

from qlabench.core.regimes import RECOMMENDED_REGIME, REGIMES, UNRECORDED_REGIME, lead_in_ms


def test_only_the_sustained_regime_leads_in():
    assert lead_in_ms("sustained", 150.0) == 150.0
    assert lead_in_ms("burst", 150.0) == 0.0
    assert {RECOMMENDED_REGIME, UNRECORDED_REGIME} <= set(REGIMES)
