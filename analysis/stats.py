"""The statistics every table in the report uses: one implementation of each.

Rates come with a 95% Wilson interval and their sample size; differences of two rates with
Newcombe's hybrid score interval (built from the two Wilson intervals); differences from a
reference rate are tested (exact binomial), families of tests are Holm-corrected, and
"significant" always means the (corrected, where a family is tested) p-value is below
``ALPHA``. Means come with a t interval. Strategy ratings are Bradley-Terry strengths on the
Elo scale with a bootstrap interval; adjusted effects are binomial GLMs (logistic regression)
fitted to cell counts, which gives exactly the row-level logistic fit at a fraction of the cost.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

ALPHA = 0.05
Z95 = float(stats.norm.ppf(0.975))
ELO = 400.0 / np.log(10.0)          # natural-log strength -> Elo points


# ---------------------------------------------------------------------------------------------
# rates
# ---------------------------------------------------------------------------------------------
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


def newcombe_diff(k1, n1, k2, n2, z: float = Z95):
    """Difference of two independent rates k1/n1 - k2/n2 with Newcombe's hybrid score interval
    (his method 10, from the two Wilson intervals); arrays broadcast. (diff, lo, hi)."""
    k1, n1, k2, n2 = (np.asarray(a, dtype=float) for a in (k1, n1, k2, n2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p1, p2 = k1 / n1, k2 / n2
        l1, u1 = wilson(k1, n1, z)
        l2, u2 = wilson(k2, n2, z)
        d = p1 - p2
        lo = d - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
        hi = d + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return d, lo, hi


def two_prop_p(k1, n1, k2, n2):
    """Two-sided p-value of the pooled z test (= Pearson chi-square on the 2x2 table) that two
    rates are equal; arrays broadcast."""
    k1, n1, k2, n2 = (np.asarray(a, dtype=float) for a in (k1, n1, k2, n2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = (k1 + k2) / (n1 + n2)
        se = np.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
        zval = (k1 / n1 - k2 / n2) / se
    return 2 * stats.norm.sf(np.abs(zval))


def binom_p(k: int, n: int, p0: float) -> float:
    """Two-sided exact binomial test of k in n against rate p0."""
    if n == 0:
        return float("nan")
    return float(stats.binomtest(int(k), int(n), p0).pvalue)


def holm(pvalues) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (controls the family-wise error rate); NaNs stay NaN
    and do not count as tests."""
    p = np.asarray(pvalues, dtype=float)
    adjusted = np.full(len(p), np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m = len(ok)
    order = ok[np.argsort(p[ok], kind="stable")]
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


# ---------------------------------------------------------------------------------------------
# means and distributions
# ---------------------------------------------------------------------------------------------
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


def mean_ci_from(mean, sd, n):
    """The same t interval from summaries (arrays broadcast: groupby mean, std(ddof=1), count);
    (lo, hi)."""
    mean, sd, n = (np.asarray(a, dtype=float) for a in (mean, sd, n))
    with np.errstate(invalid="ignore", divide="ignore"):
        df = np.where(n > 1, n - 1, np.nan)
        half = stats.t.ppf(0.975, df) * sd / np.sqrt(n)
    return mean - half, mean + half


def quantiles_from_counts(values, counts, qs) -> np.ndarray:
    """Quantiles (lower, like numpy's 'inverted_cdf') of a distribution given as distinct
    values and their counts."""
    values = np.asarray(values)
    counts = np.asarray(counts, dtype=float)
    order = np.argsort(values)
    values, cum = values[order], np.cumsum(counts[order])
    total = cum[-1]
    idx = np.searchsorted(cum, np.asarray(qs, dtype=float) * total, side="left")
    return values[np.minimum(idx, len(values) - 1)]


def cluster_design_effect(k_per_cluster, m: int) -> float:
    """Design effect of a rate estimated from equal clusters of ``m`` trials each (k successes
    per cluster): the variance of the cluster means over the binomial variance. Below 1 the
    clustering (here: one seed played under every seat rotation) makes the binomial interval
    conservative; above 1 it makes it too narrow by a factor sqrt(deff)."""
    k = np.asarray(k_per_cluster, dtype=float)
    c = len(k)
    if c < 2:
        return float("nan")
    p = k.sum() / (c * m)
    if p <= 0 or p >= 1:
        return float("nan")
    var_cluster = np.var(k / m, ddof=1) / c
    var_binom = p * (1 - p) / (c * m)
    return float(var_cluster / var_binom)


def clustered_wilson(k_per_cluster, m: int, z: float = Z95) -> tuple[float, float, float]:
    """Wilson interval of a rate from equal clusters of ``m`` trials (``k`` successes each),
    with the trials' correlation inside a cluster accounted for: when the design effect is
    above 1 the interval uses the effective sample (successes and trials divided by it); below
    1 the plain interval is kept (conservative). (lo, hi, design effect)."""
    k = np.asarray(k_per_cluster, dtype=float)
    deff = cluster_design_effect(k, m)
    shrink = deff if np.isfinite(deff) and deff > 1 else 1.0
    lo, hi = wilson(k.sum() / shrink, len(k) * m / shrink, z)
    return float(lo), float(hi), deff


# ---------------------------------------------------------------------------------------------
# ratings: Bradley-Terry
# ---------------------------------------------------------------------------------------------
def bradley_terry(wins, tol: float = 1e-10, max_iter: int = 10_000) -> np.ndarray:
    """Bradley-Terry log-strengths (mean 0) from ``wins[i, j]`` = times i beat j, by Hunter's
    MM algorithm (the maximum-likelihood fit). A strategy that never won or never lost a
    comparison has no finite strength: 0.5 is then added to both directions of every pair that
    met (a standard small-sample correction), which moves large samples negligibly."""
    w = np.asarray(wins, dtype=float)
    s = w.shape[0]
    if s < 2:
        return np.zeros(s)
    games = w + w.T
    won, lost = w.sum(axis=1), w.sum(axis=0)
    if np.any(won == 0) or np.any(lost == 0):
        w = w + 0.5 * (games > 0)
        games = w + w.T
        won = w.sum(axis=1)
    p = np.ones(s)
    for _ in range(max_iter):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = won / denom
        new /= np.exp(np.log(new).mean())
        if np.max(np.abs(np.log(new) - np.log(p))) < tol:
            p = new
            break
        p = new
    lp = np.log(p)
    return lp - lp.mean()


def bt_bootstrap(group_wins, n_boot: int = 1000, seed: int = 0) -> np.ndarray:
    """Bootstrap log-strengths: ``group_wins[g, i, j]`` holds the comparisons of group g (a
    set of whole games; games of one seed stay together); every replicate redraws the groups
    with replacement. Returns (n_boot, S)."""
    gw = np.asarray(group_wins, dtype=float)
    g = gw.shape[0]
    rng = np.random.default_rng(seed)
    out = np.empty((n_boot, gw.shape[1]))
    flat = gw.reshape(g, -1)
    for b in range(n_boot):
        weights = np.bincount(rng.integers(0, g, g), minlength=g)
        out[b] = bradley_terry((weights @ flat).reshape(gw.shape[1:]), tol=1e-7, max_iter=2000)
    return out


def expected_score(elo_a, elo_b):
    """Bradley-Terry chance that a finishes ahead of b, from Elo-scale ratings."""
    return 1.0 / (1.0 + 10.0 ** ((np.asarray(elo_b) - np.asarray(elo_a)) / 400.0))


# ---------------------------------------------------------------------------------------------
# adjusted effects: logistic regression on cell counts
# ---------------------------------------------------------------------------------------------
def logistic_effect(cells, exposure: str, covariates: list[str]) -> dict:
    """Effect of the 0/1 column ``exposure`` on the win chance, adjusted for the categorical
    ``covariates``, from a binomial GLM (logit link) fitted to cell counts ``cells`` (columns
    ``wins``, ``n``, the exposure, the covariates). Returns the odds ratio with its Wald 95%
    interval and p-value, and the average marginal effect (the mean over every row of the change
    in win chance between exposure 1 and 0) with a delta-method interval."""
    import pandas as pd
    import statsmodels.api as sm

    nan = {"odds_ratio": np.nan, "or_lo": np.nan, "or_hi": np.nan, "p_adj": np.nan,
           "adj_diff": np.nan, "adj_lo": np.nan, "adj_hi": np.nan}
    cells = cells[cells["n"] > 0]
    if cells[exposure].nunique() < 2:
        return nan
    parts = [pd.Series(1.0, index=cells.index, name="const"), cells[exposure].astype(float)]
    for c in covariates:
        if cells[c].nunique() > 1:
            parts.append(pd.get_dummies(cells[c].astype(str), prefix=c, drop_first=True, dtype=float))
    X = pd.concat(parts, axis=1)
    y = np.column_stack([cells["wins"].to_numpy(float), (cells["n"] - cells["wins"]).to_numpy(float)])
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = sm.GLM(y, X, family=sm.families.Binomial()).fit()
    except Exception:          # perfect separation, singular design: no adjusted estimate
        return nan
    b, se = float(fit.params[exposure]), float(fit.bse[exposure])
    if not (np.isfinite(se) and fit.converged) or abs(b) > 15 or se > 50:
        return nan             # (quasi-)separation in a small sample: no finite estimate
    # average marginal effect over all rows (cells weighted by their size)
    w = cells["n"].to_numpy(float) / cells["n"].sum()
    X1, X0 = X.copy(), X.copy()
    X1[exposure], X0[exposure] = 1.0, 0.0
    beta = fit.params.to_numpy()
    p1 = 1 / (1 + np.exp(-(X1.to_numpy() @ beta)))
    p0 = 1 / (1 + np.exp(-(X0.to_numpy() @ beta)))
    ame = float(w @ (p1 - p0))
    grad = (w * p1 * (1 - p1)) @ X1.to_numpy() - (w * p0 * (1 - p0)) @ X0.to_numpy()
    ame_se = float(np.sqrt(grad @ fit.cov_params().to_numpy() @ grad))
    return {"odds_ratio": np.exp(b), "or_lo": np.exp(b - Z95 * se), "or_hi": np.exp(b + Z95 * se),
            "p_adj": float(fit.pvalues[exposure]),
            "adj_diff": ame, "adj_lo": ame - Z95 * ame_se, "adj_hi": ame + Z95 * ame_se}


# ---------------------------------------------------------------------------------------------
# words
# ---------------------------------------------------------------------------------------------
def p_text(p: float) -> str:
    if not np.isfinite(p):
        return "p = n/a"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def verdict(p: float, alpha: float = ALPHA) -> str:
    return "significant" if np.isfinite(p) and p < alpha else "not significant"
