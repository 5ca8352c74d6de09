"""Analysis of stored results: comparisons and verdicts (`compare/`), speedup tables and plots, the
FlashQLA study against the published H200 table (`study/`). Reads the store only: nothing here imports
torch, a backend or the run layer."""
