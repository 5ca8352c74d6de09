"""The `qlabench` command line."""

from qlabench.cli.main import app, main

__all__ = ["app", "main"]
