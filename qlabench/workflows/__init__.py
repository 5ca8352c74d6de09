"""Workflows that run and then analyse: the regression gate, the gate's statistics study, the
harness's self-benchmarks and on-demand profiling of one point."""
