"""`qlabench show`: the speedup table of stored rows, and what its numbers stand on (view.py)."""

from qlabench.analyze.show.view import Shown, show_rows

__all__ = ["Shown", "show_rows"]
