#!/usr/bin/env python3
"""tests/scipy/mannwhitney_goldens.py: the independent reference for report/stats.c's
Mann-Whitney U p-values, computed once with scipy and stored (tests/golden/mannwhitney_scipy.txt),
so that the test needs no scipy. Rerun (pip install scipy) to regenerate:

    python3 tests/scipy/mannwhitney_goldens.py > tests/golden/mannwhitney_scipy.txt

Each line: method nx ny p_two_sided p_greater | x values | y values. method 'exact' rows have no
ties and n <= 50 (report's exact range, scipy method='exact'); 'asymptotic' rows have n > 50
(scipy method='asymptotic', tie and continuity corrected, as report uses there); the last rows
have ties on purpose in the asymptotic range."""
import numpy as np
import scipy
from scipy.stats import mannwhitneyu

rng = np.random.default_rng(20261124)
print(f"# scipy {scipy.__version__}, numpy {np.__version__}; see tests/scipy/mannwhitney_goldens.py")
sizes = [(2, 3, 'exact'), (3, 3, 'exact'), (4, 5, 'exact'), (5, 5, 'exact'), (8, 7, 'exact'),
         (10, 12, 'exact'), (20, 25, 'exact'), (25, 25, 'exact'), (6, 40, 'exact'),
         (30, 31, 'asymptotic'), (40, 50, 'asymptotic'), (100, 80, 'asymptotic')]
for shift in (0.0, 0.03, 0.15):
    for nx, ny, method in sizes:
        x = np.round(rng.lognormal(0.0, 0.05, nx) * (1 + shift), 7)
        y = np.round(rng.lognormal(0.0, 0.05, ny), 7)
        assert len(set(x) | set(y)) == nx + ny
        p2 = mannwhitneyu(x, y, alternative='two-sided', method=method).pvalue
        pg = mannwhitneyu(x, y, alternative='greater', method=method).pvalue
        print(method, nx, ny, repr(float(p2)), repr(float(pg)), '|',
              ' '.join(repr(float(v)) for v in x), '|', ' '.join(repr(float(v)) for v in y))
for nx, ny in ((30, 31), (60, 45)):
    x = np.round(rng.lognormal(0.0, 0.05, nx), 2)
    y = np.round(rng.lognormal(0.02, 0.05, ny), 2)
    p2 = mannwhitneyu(x, y, alternative='two-sided', method='asymptotic').pvalue
    pg = mannwhitneyu(x, y, alternative='greater', method='asymptotic').pvalue
    print('asymptotic', nx, ny, repr(float(p2)), repr(float(pg)), '|',
          ' '.join(repr(float(v)) for v in x), '|', ' '.join(repr(float(v)) for v in y))
