"""The instruments of a measurement, none of which knows a backend: deterministic inputs, correctness
against a reference, the oracle cache, the environment record, compile caches, timers (`timing/`) and
probes of the device (`probes/`: Kineto launch shapes, clocks, peaks, Nsight Compute)."""
