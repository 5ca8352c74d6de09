"""Orchestration: run one point (`point.py`), a pool of worker processes (`pool.py`), a sweep
(`sweep.py`), where workers run (`executors/`), distributed context-parallel points (`distributed/`)
and ahead-of-time compilation (`warmup.py`)."""
