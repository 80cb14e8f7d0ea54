"""The statistics every table in the report uses: one implementation of each.

Rates come with a 95% Wilson interval and their sample size; differences from a reference
rate are tested (exact binomial), families of tests are Holm-corrected, and "significant"
always means the corrected p-value is below ``ALPHA``.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

ALPHA = 0.05
Z95 = stats.norm.ppf(0.975)


def wilson(k, n, z: float = Z95):
    """Wilson score interval for k successes in n trials (arrays broadcast); (lo, hi)."""
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return centre - half, centre + half


def binom_p(k: int, n: int, p0: float) -> float:
    """Two-sided exact binomial test of k in n against rate p0."""
    if n == 0:
        return float("nan")
    return float(stats.binomtest(int(k), int(n), p0).pvalue)


def holm(pvalues) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (controls the family-wise error rate)."""
    p = np.asarray(pvalues, dtype=float)
    m = len(p)
    order = np.argsort(p)
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def chi_square_uniform(counts) -> tuple[float, float]:
    """Chi-square goodness of fit of win counts per seat against equal shares; (stat, p)."""
    counts = np.asarray(counts, dtype=float)
    if counts.sum() == 0:
        return float("nan"), float("nan")
    res = stats.chisquare(counts)
    return float(res.statistic), float(res.pvalue)


def mean_ci(values) -> tuple[float, float, float]:
    """Mean with a 95% t interval; (mean, lo, hi)."""
    v = np.asarray(values, dtype=float)
    n = len(v)
    if n < 2:
        m = float(v.mean()) if n else float("nan")
        return m, float("nan"), float("nan")
    m = float(v.mean())
    half = float(stats.t.ppf(0.975, n - 1) * v.std(ddof=1) / np.sqrt(n))
    return m, m - half, m + half


def p_text(p: float) -> str:
    if not np.isfinite(p):
        return "p = n/a"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"
