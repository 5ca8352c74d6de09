"""An example Gated DeltaNet kernel package for qlabench's plugin interface (see kernel.py)."""
