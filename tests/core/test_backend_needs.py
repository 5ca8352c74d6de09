"""A backend's packages are found without importing them, and one missing says how to install it."""

from __future__ import annotations

import sys

from qlabench.core.backend_needs import ENGINE_SITE_HINT, Package, first_missing


def test_an_installed_package_is_no_reason():
    sys.modules.pop("colorsys", None)
    assert Package("colorsys", "colorsys").missing() is None and "colorsys" not in sys.modules  # found, not imported


def test_a_missing_package_says_its_distribution_and_how_to_install_it():
    p = Package("qlabench_no_such_module", "no-such-dist", "pip install no-such-dist")
    assert p.missing() == "no-such-dist is not installed (pip install no-such-dist)"
    assert first_missing((Package("email", "email"), p, Package("qlabench_nor_this", "x"))) == p.missing()


def test_a_kernel_site_leaves_the_answer_to_the_implementation(monkeypatch):
    p = Package("qlabench_no_engine", "engine", ENGINE_SITE_HINT, "QLABENCH_TEST_SITE")
    monkeypatch.delenv("QLABENCH_TEST_SITE", raising=False)
    assert p.missing() == f"qlabench_no_engine is not installed and no kernel site provides it: {ENGINE_SITE_HINT}"
    monkeypatch.setenv("QLABENCH_TEST_SITE", "/somewhere")
    assert p.missing() is None
