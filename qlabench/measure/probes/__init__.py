"""Probes of the device around a point: Kineto kernel lists, GPU clocks and state (NVML), measured
peaks, Nsight Compute."""
