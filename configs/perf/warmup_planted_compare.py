#!/usr/bin/env python3
"""warmup_planted_compare.py: MSER and ruptures' PELT on the planted warm-up series of
tests/test_stats.c (docs/performance.md, "Warm-up"), beside a Python port of `report warmup`'s
detector (report/stats.c steady_state_index), so that the three are read on one generator.

    python3 configs/perf/warmup_planted_compare.py [TRIALS] [NOISE ...]

Needs numpy and ruptures. The generator follows plant_start() of tests/test_stats.c (its own
random numbers: the C test's figures are the detector's, asserted there)."""
import math
import sys

import numpy as np

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from warmup_compare import mser, pelt  # noqa: E402  (the same MSER and PELT as on real cases)


def detector(y, band=0.0):
    """report/stats.c steady_state_index on log times y."""
    n = len(y)
    if n < 4:
        return 0
    start, d = n // 2, 0
    for _ in range(4):
        q1, q3 = np.quantile(y[start:], [0.25, 0.75])
        level, spread = (q1 + q3) / 2, max((q3 - q1) / 1.3489795, 1e-3)
        z = np.minimum((y - level - math.log1p(band)) / spread, 2.8)
        score = np.concatenate([[0], np.cumsum(np.where(z > 0, z * z / 2 - 2, -2))])
        d = int(np.argmax(score))
        if score[d] <= 1.0:
            d = 0
        if n - d < 8 or d == start:
            break
        start = d
    return d


def plant(rng, kind, sd, residue, n=64):
    y = sd * rng.standard_normal(n)
    d = 0
    if kind in ("slow", "spikes"):
        d = int(rng.integers(2, 12))
        first, last = rng.uniform(0.5, 2.0), rng.uniform(0.10, 0.30)
        for i in range(d):
            y[i] += math.log1p(first * (last / first) ** (i / (d - 1)))
    if kind == "spikes":
        for _ in range(int(rng.integers(1, 4))):
            at, length = int(rng.integers(d + 3, n - 1)), int(rng.integers(1, 3))
            y[at:at + length] += math.log(rng.uniform(1.5, 3.0))
    if kind == "residue":
        d = int(rng.integers(3, 16))
        y[0] += math.log1p(rng.uniform(0.5, 2.0))
        y[1:d] += math.log1p(residue)
    if kind == "fast":
        y[:int(rng.integers(1, 10))] += math.log(rng.uniform(0.3, 0.9))
    return y, d


def main():
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    noises = [float(a) for a in sys.argv[2:]] or [0.005, 0.01, 0.02]
    cells = [("slow", 0), ("residue", 0.03), ("residue", 0.05), ("residue", 0.10), ("spikes", 0),
             ("fast", 0), ("none", 0)]
    rng = np.random.default_rng(2026)
    methods = (("detector", lambda y: detector(y)), ("MSER", mser), ("PELT", pelt))
    for sd in noises:
        for kind, residue in cells:
            hits = {name: 0 for name, _ in methods}
            for _ in range(trials):
                y, truth = plant(rng, kind, sd, residue)
                for name, f in methods:
                    d = f(y)
                    hits[name] += abs(d - truth) <= 1 if truth else d == 0
            label = f"{kind} {100 * residue:.0f}%" if kind == "residue" else kind
            print(f"noise {100 * sd:.1f}% {label:12s} " +
                  "  ".join(f"{k} {v}/{trials}" for k, v in hits.items()), flush=True)


if __name__ == "__main__":
    main()
