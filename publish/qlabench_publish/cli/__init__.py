"""The command line of this repository's publishing: `python -m qlabench_publish docs render|check` and
`python -m qlabench_publish selfbench`. Three commands, so registered plainly (qlabench's lazy registry exists
to keep its two dozen commands' imports off `--help`; each module here imports its work inside the command);
each is put behind qlabench's own error boundary, so a QlabenchError is one line and exit 2 here as there.

    docs.py             docs render, docs check (the generated blocks of README.md, docs/*.md, results/README.md)
    blocks_registry.py  every block the docs may hold (what docs render|check renders with)
    selfbench.py        selfbench (the harness's precision, cost, agreement and timing regimes)
"""

from __future__ import annotations


import typer

from qlabench.cli.app import exits_on_error, serve
from qlabench_publish.cli.docs import check_cmd, render_cmd
from qlabench_publish.cli.selfbench import selfbench_cmd

app = typer.Typer(help="This repository's publishing: its docs' generated blocks and the harness's self-benchmarks.",
                  no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False)
docs_app = typer.Typer(help="The docs' generated blocks: figures rendered from the current evidence.",
                       no_args_is_help=True)
app.add_typer(docs_app, name="docs")
docs_app.command("render")(exits_on_error(render_cmd))
docs_app.command("check")(exits_on_error(check_cmd))
app.command("selfbench")(exits_on_error(selfbench_cmd))


def main() -> None:
    """`python -m qlabench_publish`."""
    serve(app)


__all__ = ["app", "main"]
