"""Seed 000's NumPy-over-pure-Python ratio, timed two ways on the same host, repeated.

    python3 tools/diag/seed000_interleave.py [SECONDS]

ch6 (the run of 28 November 2026) timed pure Python on 2,000 rows (scaled to 900,000) in
one cell and NumPy's whole-population row sum in a later one, so a change of the host's
speed between the two moved the ratio (11.2x and 14.2x in two runs of that code).
`tools/next-run7.patch` interleaves them: one call of each per round, the ratio taken
round by round (median). This script repeats both ways for SECONDS (default 60) and
prints each repeat's ratio and the spread of each way. NumPy only (no torch), so it runs
anywhere.
"""

import statistics
import sys
import time

import numpy as np

budget = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
rng = np.random.default_rng(0)
population = rng.integers(1, 25, size=(900_000, 1000), dtype=np.int8)
rows = population[:2_000].tolist()
scale = population.shape[0] / len(rows)


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_of_calls(fn, at_least=5, seconds=0.5):
    """gpubook.latency(repeats=5, min_run_time=0.5), as ch6 timed the subsample: calls
    until there are at least five and they add up to half a second; their median."""
    times = []
    while len(times) < at_least or sum(times) < seconds:
        times.append(timed(fn))
    return statistics.median(times)


def python_sum():
    return [sum(row) for row in rows]


def numpy_sum():
    return np.sum(population, axis=1)


numpy_sum(), python_sum()  # warm-up
apart, together = [], []
end = time.perf_counter() + budget
while time.perf_counter() < end:
    # as the run of 28 November: pure Python's calls, then four NumPy calls, medians
    py = median_of_calls(python_sum)
    npy = statistics.median(timed(numpy_sum) for _ in range(4))
    apart.append(py * scale / npy)
    # as the patch: seven rounds of one call each, alternating who goes first
    per_round = []
    for r in range(7):
        if r % 2:
            n = timed(numpy_sum)
            p = timed(python_sum)
        else:
            p = timed(python_sum)
            n = timed(numpy_sum)
        per_round.append(p * scale / n)
    together.append(statistics.median(per_round))
    print(f"apart {apart[-1]:5.1f}x   interleaved {together[-1]:5.1f}x", flush=True)
for name, values in (("apart", apart), ("interleaved", together)):
    print(
        f"{name}: {len(values)} repeats, {min(values):.1f}x to {max(values):.1f}x, "
        f"median {statistics.median(values):.1f}x"
    )
