"""What a faster core is worth in a whole Qwen3.5 GDN layer (gain.py; docs/LAYER.md)."""
