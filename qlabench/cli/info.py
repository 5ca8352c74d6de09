"""`qlabench backends`, `qlabench models` and `qlabench suites`: what this installation can run, and on which
model shapes."""

from __future__ import annotations

from qlabench.cli.app import console


def backends_cmd():
    """List every registered backend (plugins included), available or not, with the reason."""
    from qlabench.backends.declared import listed  # torch only where a backend's answer needs its library
    from qlabench.cli.listings import backends_table
    from qlabench.core.backend_decl import plugin_problems

    console.print(backends_table(listed(), width=console.width, problems=plugin_problems()))


def models_cmd():
    """List the model catalogue: each model's GDN heads, and its heads on one GPU at every TP degree it allows."""
    from qlabench.cli.listings import models_table
    from qlabench.core.models import CATALOGUE

    console.print(models_table(CATALOGUE, width=console.width))


def suites_cmd():
    """List the suites in qlabench/suites/ with their point counts."""
    from qlabench.cli.listings import suites_table
    from qlabench.core.errors import QlabenchError
    from qlabench.core.spec import list_suites, load_suite

    entries = []
    for path in list_suites():
        try:  # one broken suite is listed as invalid, with why; it does not hide the others
            s = load_suite(str(path))
            entries.append((path.stem, len(s.points), s.description))
        except QlabenchError as e:
            entries.append((path.stem, None, str(e)))
    console.print(suites_table(entries))
