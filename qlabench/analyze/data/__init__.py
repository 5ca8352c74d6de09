"""Data shipped with qlabench (read with importlib.resources): see README.md in this folder."""
