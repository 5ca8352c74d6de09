"""Commands are imported when run (qlabench/cli/lazy.py): the help and the listings start light (no torch, no
pandas, no command module but the one that runs), and what a user sees is what registering every command eagerly
gave: the same help, each command behind the error boundary."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from qlabench.cli import app
from qlabench.cli.app import baseline_app, exits_on_error, run_app
from qlabench.cli.lazy import registered

HEAVY = ("torch", "pandas", "pyarrow", "numpy", "matplotlib", "scipy")

# Runs one command line in a fresh interpreter and prints which heavy libraries and command modules it imported.
_PROBE = """
import json, sys
sys.argv = ["qlabench", *sys.argv[1:]]
from qlabench.cli import main
try:
    main()
except SystemExit:
    pass
heavy = sorted(m for m in %r if m in sys.modules)
commands = sorted(m for m in sys.modules if m.startswith("qlabench.cli.") and m not in ("qlabench.cli.app", "qlabench.cli.lazy"))
print(json.dumps({"heavy": heavy, "commands": commands}), file=sys.stderr)
""" % (HEAVY,)


def _imported(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "120"})
    return json.loads(proc.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("args", [("--help",), ("run", "--help"), ("suites",), ("models",)])
def test_the_help_and_the_listings_import_neither_torch_nor_pandas(args):
    assert _imported(*args)["heavy"] == []


def test_the_help_imports_no_command_module():
    assert _imported("--help")["commands"] == []


def test_a_listing_imports_its_own_command_module_only():
    assert _imported("models")["commands"] == ["qlabench.cli.info", "qlabench.cli.listings"]


def _plugins_installed() -> bool:
    from importlib.metadata import entry_points

    return bool(entry_points(group="qlabench.backends"))


@pytest.mark.skipif(_plugins_installed(), reason="a plugin is installed: its module is loaded to list it, and may "
                                                 "import torch (backends/declared.py); .ci/run installs it after")
def test_backends_imports_neither_torch_nor_pandas():
    # no GPU library is installed here: every backend is listed from its declaration (backends/declared.py)
    assert _imported("backends")["heavy"] == []


def _eager(lazy: typer.Typer, **kwargs) -> typer.Typer:
    """The same group with every command registered as before: imported at start, behind the boundary."""
    eager = typer.Typer(help=lazy.info.help, no_args_is_help=True, **kwargs)
    for name, entry in registered(lazy).items():
        eager.command(name, **entry.settings)(exits_on_error(entry.function()))
    return eager


def test_the_help_is_what_eager_registration_printed():
    eager = _eager(app, pretty_exceptions_enable=False, add_completion=False)
    for sub, name in ((run_app, "run"), (baseline_app, "baseline")):
        eager.add_typer(_eager(sub), name=name)
    for args in (["--help"], [], ["run", "--help"], ["baseline", "--help"],
                 ["run", "sweep", "--help"], ["advise", "--help"], ["nosuch"], ["run", "nosuch"]):
        lazy_out = CliRunner().invoke(app, args, env={"COLUMNS": "120"})
        eager_out = CliRunner().invoke(eager, args, env={"COLUMNS": "120"})
        assert (lazy_out.output, lazy_out.exit_code) == (eager_out.output, eager_out.exit_code), args


def test_a_listed_help_line_is_the_functions_docstring():
    for group in (app, run_app, baseline_app):
        for name, entry in registered(group).items():
            assert entry.doc() == inspect.getdoc(entry.function()), name


def test_an_answer_needs_no_toml_writer():
    # tomli_w writes the suite `advise --suite-out/--measure` makes; an answer alone must run on a host without it
    probe = ("import sys; import qlabench.analyze.advise.suite, qlabench.cli.advise; "
             "print('tomli_w' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
