"""This repository's publishing: what keeps its own docs and evidence honest, apart from what a user installs.

qlabench (the package `pip install qlabench` installs) measures, stores and shows kernels for whoever runs it.
This package exists for this repository alone: the generated blocks of README.md, docs/*.md and results/README.md
and the check that holds every decimal of their prose to the committed rows (`blocks/`), and the harness's
benchmarks of itself that docs/BENCHMARKS.md reports (`selfbench/`). It imports qlabench and qlabench never
imports it; pyproject.toml packages `qlabench` only, so no wheel carries it. From a checkout:

    PYTHONPATH=publish python -m qlabench_publish docs check      # what CI holds the docs to
    PYTHONPATH=publish python -m qlabench_publish docs render     # rewrite the blocks from the current evidence
    PYTHONPATH=publish python -m qlabench_publish selfbench all   # the harness measured (docs/BENCHMARKS.md)

The tests (tests/publish/) find it through pytest's `pythonpath`, so README.md's test command runs them.
"""
