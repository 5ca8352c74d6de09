"""Analysis of stored results: comparisons and verdicts (`compare/`), speedup tables and plots.
Reads the store only: nothing here imports torch, a backend or a runner."""
