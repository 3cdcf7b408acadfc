"""Interleaved timing shared by the benchmark scripts: only ratios of measurements taken side
by side in one run mean anything on a shared, noisy machine."""

from __future__ import annotations

from collections.abc import Callable
import statistics
import time


def _time(fn: Callable[[], object], n: int, sync: Callable[[], object] | None) -> float:
    if sync:
        sync()
    start = time.perf_counter()
    for _ in range(n):
        fn()
    if sync:
        sync()
    return (time.perf_counter() - start) / n


def interleaved(fns: dict, n: int, repeats: int, sync: Callable[[], object] | None = None) -> dict:
    """Median seconds per call of each function, the functions alternating in every repeat;
    ``sync`` (e.g. torch.cuda.synchronize) is called before and after each timed block."""
    samples = {k: [] for k in fns}
    for _ in range(repeats):
        for k, f in fns.items():
            samples[k].append(_time(f, n, sync))
    return {k: statistics.median(v) for k, v in samples.items()}
