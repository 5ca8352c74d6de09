"""The one table of libraries (core/libraries.py): version columns, which backend runs which library, and
the one order of versions."""

from __future__ import annotations

from qlabench.core.backend_decl import library_of, stack_columns
from qlabench.core.libraries import LIBRARIES, package_name, version_columns, version_key
from qlabench.core.result import ResultRow


def test_every_version_column_is_a_result_column():
    fields = set(ResultRow.__dataclass_fields__)
    assert set(version_columns()) <= fields
    assert len(set(version_columns())) == len(LIBRARIES)


def test_a_backend_variant_runs_its_family_library_and_a_reference_none():
    assert library_of("flash_qla-forcecp").name == "flash-qla" and library_of("fla-intracp").name == "fla"
    assert library_of("flashinfer").column == "flashinfer_version"
    assert library_of("naive-recurrent") is None and library_of("flash") is None  # a prefix is no family
    assert stack_columns("flash_qla-nocp") == ("flash_qla_version", "tilelang_version")
    assert package_name("flash_qla_version") == "flash-qla" and package_name("other_version") == "other"


def test_versions_order_numerically_and_a_missing_one_first():
    ordered = [None, "0.1.2", "0.1.3", "0.1.13", "0.6.13", "0.7.2", "2.9.1", "2.9.1+cu128"]
    assert sorted(reversed(ordered), key=version_key) == ordered
    assert version_key(float("nan")) == version_key("") == ()
