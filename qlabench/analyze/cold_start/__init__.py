"""`qlabench cold-start`'s table: each backend's first calls in a fresh process, cold and warm caches (table.py), and
the docs' `cold-start` block quoting it (blocks.py)."""
