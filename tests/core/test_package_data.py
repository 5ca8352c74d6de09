"""The files commands read at run time ship inside the package: the bundled suites are found through
importlib.resources (not the source tree), every data file of the package is package data in pyproject.toml,
and a user's own suite, named by its path, wins over a bundled one of the same name."""

from __future__ import annotations

import fnmatch
import sys
from pathlib import Path

import pytest

import qlabench
from qlabench.core.package_data import SUITES_DIR
from qlabench.core.spec import DEFAULT_SUITE, load_suite, resolve_suite_path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PACKAGE = Path(qlabench.__file__).resolve().parent
REPO = PACKAGE.parent


def test_the_bundled_suites_are_a_folder_of_the_package():
    assert SUITES_DIR == PACKAGE / "suites"
    assert (SUITES_DIR / f"{DEFAULT_SUITE}.toml").is_file()
    assert resolve_suite_path(DEFAULT_SUITE) == SUITES_DIR / f"{DEFAULT_SUITE}.toml"


def test_every_data_file_of_the_package_is_package_data():
    """A file under qlabench/ that is not Python must be listed in [tool.setuptools.package-data], or the
    wheel leaves it out and a command that reads it fails only once installed."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    missing = []
    for f in PACKAGE.rglob("*"):
        if not f.is_file() or f.suffix in (".py", ".pyc") or "__pycache__" in f.parts:
            continue
        rel = f.relative_to(REPO)
        shipped = any(fnmatch.fnmatch(rel.relative_to(Path(*pkg.split("."))).as_posix(), glob)
                      for pkg, globs in declared.items() if rel.is_relative_to(Path(*pkg.split(".")))
                      for glob in globs)
        if not shipped:
            missing.append(rel.as_posix())
    assert not missing, f"not package data in pyproject.toml: {missing}"


def test_a_users_own_suite_path_wins_over_the_bundled_suite_of_that_name(tmp_path, monkeypatch):
    mine = tmp_path / f"{DEFAULT_SUITE}.toml"
    mine.write_text('description = "mine"\n[sweep]\nbackends = ["naive-chunk"]\nseqlen = [64]\nheads = [{ h_qk = 1, h_v = 1 }]\n')
    monkeypatch.chdir(tmp_path)
    for given in (str(mine), f"{DEFAULT_SUITE}.toml", f"./{DEFAULT_SUITE}.toml"):
        assert load_suite(given).description == "mine", given
    assert load_suite(DEFAULT_SUITE).description != "mine"  # a bare name is the bundled suite


def test_an_unknown_suite_name_lists_the_bundled_ones():
    with pytest.raises(qlabench.core.errors.SpecError, match=f"unknown suite 'nope'.*{DEFAULT_SUITE}"):
        resolve_suite_path("nope")
