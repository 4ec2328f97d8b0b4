#!/usr/bin/env python3
"""warmup_compare.py: `report warmup`'s detector against MSER and the PELT change-point detector
of ruptures, on the real cases of a database (docs/performance.md, "Warm-up").

    python3 configs/perf/warmup_compare.py REPORT DB [DB ...]

REPORT: the report binary (the detector's answers come from `report warmup --format csv`).
Needs numpy and ruptures (PyPI). Per case: where each method puts the end of the warm-up, on the
log of the per-iteration time (phases summed, warm-up iterations included):
  - MSER (White 1997): the truncation d <= n/2 that minimises the marginal standard error of the
    mean of what follows, sum((y[d:] - mean)^2) / (n - d)^2;
  - PELT (ruptures.Pelt, model l2, min_size 1, penalty 3 sigma^2 log n, sigma from the median
    absolute successive difference): the change points; the warm-up ends after the leading
    segments whose mean lies more than 2 sigma above the steady level (the median of the last
    half), so that like the detector it only counts a slow start;
and how often the detector agrees with each within +-1 iteration. Not a truth: on real series
nothing is; the planted series of tests/test_stats.c are the truth."""
import csv
import math
import sqlite3
import subprocess
import sys

import numpy as np
import ruptures as rpt


def series(db, case_id):
    rows = sqlite3.connect(db).execute(
        "select iter, sum(ns) from samples where case_id = ? group by iter order by iter",
        (case_id,)).fetchall()
    return np.log(np.array([r[1] for r in rows], dtype=float))


def mser(y):
    n = len(y)
    best, d_best = math.inf, 0
    for d in range(n // 2 + 1):
        t = y[d:]
        v = np.sum((t - t.mean()) ** 2) / len(t) ** 2
        if v < best:
            best, d_best = v, d
    return d_best


def pelt(y):
    n = len(y)
    sigma = max(np.median(np.abs(np.diff(y))) / 0.6745 / math.sqrt(2), 1e-4)
    ends = rpt.Pelt(model="l2", min_size=1, jump=1).fit(y.reshape(-1, 1)).predict(
        pen=3 * sigma * sigma * math.log(n))
    level, d = np.median(y[n // 2:]), 0
    for e in ends[:-1]:
        if np.mean(y[d:e]) > level + 2 * sigma:
            d = e
        else:
            break
    return d


def main():
    report, dbs = sys.argv[1], sys.argv[2:]
    agree = {"MSER": 0, "PELT": 0}
    total = 0
    for db in dbs:
        runs = [r[0] for r in sqlite3.connect(db).execute("select id from runs order by id")]
        for run in runs:
            out = subprocess.run([report, "warmup", "--db", db, "--run", str(run), "--format",
                                  "csv"], capture_output=True, text=True, check=True).stdout
            steady = {row["case"]: row["steady_from_iter"] for row in csv.DictReader(out.splitlines())}
            cases = sqlite3.connect(db).execute(
                "select id, name, cpu_wait from cases where run_id = ? and status = 'ok' order by ord",
                (run,)).fetchall()
            for case_id, name, wait in cases:
                y = series(db, case_id)
                ours = steady.get(name, "")
                d = len(y) if ours == "never" else int(float(ours)) if ours else -1
                m, p = mser(y), pelt(y)
                total += 1
                agree["MSER"] += abs(d - m) <= 1
                agree["PELT"] += abs(d - p) <= 1
                print(f"{db} run {run} {name:44s} cpu_wait {wait if wait is not None else -1:.2f}"
                      f"  detector {d:3d}  MSER {m:3d}  PELT {p:3d}")
    for k, v in agree.items():
        print(f"detector within +-1 of {k}: {v} of {total} cases")


if __name__ == "__main__":
    main()
