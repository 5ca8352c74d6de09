"""`qlabench backends` and `qlabench suites`: what this installation can run."""

from __future__ import annotations

from qlabench.cli.app import console


def backends_cmd():
    """List every registered backend (plugins included), available or not, with the reason."""
    from qlabench.backends import REGISTRY
    from qlabench.cli.listings import backends_table
    from qlabench.core.backend_decl import plugin_problems

    console.print(backends_table(REGISTRY.refresh().values(), width=console.width, problems=plugin_problems()))


def suites_cmd():
    """List the suites in suites/ with their point counts."""
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
