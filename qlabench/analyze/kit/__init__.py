"""The views' shared kit: what every view draws with, and nothing a single view owns.

    ties.py     the tie rule from measured noise (tie_noise, is_tie, faster_beyond_noise)
    backends.py how a backend is drawn, all from core/backend_decl.py: label_of, place / in_view_order,
                backend_style (one colour and marker per backend on every figure), library_name

The kit imports only the evidence layer, store and core; no view is imported here, and the evidence layer
never imports the kit.
"""
