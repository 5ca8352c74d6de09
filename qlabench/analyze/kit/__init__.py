"""The views' shared kit: what every view draws with, and nothing a single view owns.

    labels.py   a row's heads, layout, sequences, gate and backend as tables and figures name them
    tables.py   md_table: a frame as a markdown table
    figures.py  png_path (a figure's safe file name), finish_figure (title, one legend, panels)
    backends.py how a backend is drawn, all from core/backend_decl.py: label_of, place / in_view_order,
                backend_style (one colour and marker per backend on every figure), library_name
    ties.py     the tie rule from measured noise (tie_noise, is_tie, faster_beyond_noise)
    speedups.py the speedup table per workload and GPU model, its baseline rule and noise marks

The kit imports only the evidence layer, store and core; no view is imported here, and the evidence layer
never imports the kit (tests/test_layers.py: ANALYZE_FLOORS).
"""
