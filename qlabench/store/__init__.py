"""Results on disk: the parquet schema and its history, result files, point keys, baselines, merging,
resume and the per-kernel tables. pandas and pyarrow, never torch."""
