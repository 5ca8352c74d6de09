"""`qlabench plot`: speedup curves per head configuration (speedups.py) and SM coverage against time (sm.py)."""
