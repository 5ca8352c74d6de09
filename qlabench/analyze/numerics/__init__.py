"""The numerics report: each backend's error against float64 at full size (table.py) and its page (page.py)."""
