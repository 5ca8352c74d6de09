"""`qlabench cold-start`'s table: each backend's first calls in a fresh process, cold and warm caches (table.py;
the docs' `cold-start` block quoting it is this repository's publishing: publish/qlabench_publish/blocks/cold_start.py)."""
