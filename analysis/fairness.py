"""Seat fairness: how far a game's seats are from equal win chances, with an interval and a
test that stay valid at and near "fair".

The measure is the **seat unfairness**: the root mean square of the seats' deviations from the
fair share, ``sqrt(mean_k (p_k - 1/n)^2)``, a win rate (x 100: points of win rate). 0 means
every seat wins 1/n of the games; a game whose seats win 26%, 25%, 25%, 24% has 0.71 points.
It is a smooth function of every seat (unlike best-minus-worst), so "is B fairer than A" has an
unbiased paired estimate.

Why not the best seat's win rate minus the worst's with a bootstrap: that statistic is biased
up by noise (the largest of several noisy deviations) and its percentile interval never covers
0, so a fair game could never be shown fair. Here:

- **The independent units are seeds.** With seat rotation a seed's games share its card stacks,
  so its rotations are one cluster: every function takes per-seed win counts, an array of shape
  (seeds, seats) (with rotation: ``game_id // rotations`` is the seed index).
- **Estimate.** The mean square deviation is estimated without bias by the U-statistic over
  pairs of distinct seeds (the plug-in square of the mean deviation minus its variance); it can
  be negative when the seats are fair or nearly so, and the root is taken of it truncated at 0.
- **Test of "all seats fair".** Hotelling's T^2 on the per-seed deviation vectors (n - 1 free
  coordinates, as they sum to 0) with the seeds' own covariance, so any correlation between the
  games of a seed is accounted for; an F test on (n - 1, seeds - n + 1) degrees of freedom. At 2
  players it is the t test of seat 0's deviation (one test, not one per seat).
- **Interval.** Scaled to (seeds - n + 1) / (seeds - 1) T^2 (n - 1 times the F statistic), the
  statistic is X / V: X noncentral chi-square with n - 1 degrees of freedom and noncentrality the
  squared Mahalanobis length of the deviations times the seeds, V an independent chi-square over
  its seeds - n + 1 degrees of freedom (the seeds' covariance estimated): a noncentral F. Its
  interval is the Feldman-Cousins (unified, likelihood-ratio ordered) Neyman construction of X,
  carried to the noncentral F by giving each noncentrality's acceptance region the same tail
  probabilities, so it covers at its nominal rate at every noncentrality including 0, goes
  smoothly from an upper limit to a two-sided interval, and excludes 0 exactly when the F test
  rejects at the same level. Far from fair V matters as much as X (with few seeds, more): an
  interval from X alone, or from the statistic moved to X's scale by matching null p-values,
  misses the truth there. The noncentrality is turned into the mean square deviation with the
  smallest and largest eigenvalue of the seeds' covariance: exact when the covariance is the
  same in every direction (near-fair, rotated games are close to that), conservative otherwise
  (far from fair, where seats' win rates and so their variances differ, markedly so).
- **B fairer than A.** The difference of the two unbiased estimates is itself a U-statistic
  over seeds (paired: each seed's deviation vectors in both runs, which removes the variation
  they share). Its variance is estimated with its second-order term, so the test keeps its
  level even when both runs are fair and the estimate is degenerate (it is conservative there);
  a t test on seeds - 1 degrees of freedom.

:func:`seat_fairness` also takes the per-seed win counts as their distinct rows and how many
seeds have each (``counts``): every figure above is a function of the rows' sums and cross
products, so the result is the same (to rounding) while a report of tens of millions of seeds
holds a few dozen rows instead of float copies of every seed's.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import optimize, special, stats

from .stats import ALPHA


@dataclass(frozen=True)
class SeatFairness:
    """How fair the seats of one run are. Rates as fractions (x 100 = points of win rate)."""

    seats: int
    seeds: int
    games: int
    deviations: np.ndarray      # per seat: observed win rate - 1/n
    mean_square: float          # unbiased estimate of mean_k (p_k - 1/n)^2; may be below 0
    rms: float                  # seat unfairness: sqrt(max(mean_square, 0))
    rms_lo: float               # its 1 - alpha interval (Feldman-Cousins, see the module)
    rms_hi: float
    statistic: float            # Hotelling's T^2 of "all seats fair"
    df: tuple[int, int]         # of its F form
    p: float                    # p-value of "all seats fair"
    alpha: float
    design_effect: float        # seeds' variance over independent games' (mean over directions)

    @property
    def max_deviation(self) -> float:
        """The largest |win rate - 1/n| over the seats (descriptive: biased up by noise)."""
        return float(np.max(np.abs(self.deviations))) if self.seats else float("nan")

    @property
    def consistent_with_fair(self) -> bool:
        """The test of "all seats fair" does not reject at ``alpha`` (the interval holds 0)."""
        return not (self.p < self.alpha)


@dataclass(frozen=True)
class FairnessComparison:
    """Run B against run A: the change in the mean square seat deviation (B - A)."""

    a: SeatFairness
    b: SeatFairness
    paired: bool
    seeds: int                  # seeds in the comparison (paired: the shared ones)
    diff: float                 # mean_square(B) - mean_square(A), unbiased
    lo: float                   # its 1 - alpha interval
    hi: float
    p: float                    # two-sided: equally fair
    p_b_fairer: float           # one-sided: B is fairer than A (small = evidence that it is)
    alpha: float

    @property
    def b_fairer(self) -> bool:
        return bool(self.p_b_fairer < self.alpha)

    @property
    def method(self) -> str:
        return ("paired by seed (U-statistic variance over shared seeds, t test)" if self.paired else
                "independent runs (U-statistic variances added, Welch t test)")


# ---------------------------------------------------------------------------------------------
# per-seed deviation vectors
# ---------------------------------------------------------------------------------------------
def _helmert(n: int) -> np.ndarray:
    """An orthonormal basis (n x (n - 1)) of the vectors that sum to 0."""
    q, _ = np.linalg.qr(np.eye(n) - 1.0 / n)
    return q[:, : n - 1]


def _total(x: np.ndarray, counts=None):
    """Sum over rows, each row taken ``counts`` times (None: once)."""
    return x.sum(axis=0) if counts is None else counts @ x


def _deviations(wins, games=None, counts=None) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-seed deviation vectors (win counts minus the fair share of the seed's games, over the
    mean games per seed: their mean is exactly the observed deviation of the win rates), their
    coordinates on the sum-0 basis, and the number of games. ``counts``: seeds per row."""
    w = np.asarray(wins, dtype=float)
    if w.ndim != 2 or w.shape[1] < 2:
        raise ValueError(f"win counts must have shape (seeds, seats >= 2), got {w.shape}")
    m = w.sum(axis=1) if games is None else np.asarray(games, dtype=float)
    n = w.shape[1]
    seeds = len(m) if counts is None else counts.sum()
    mbar = _total(m, counts) / seeds if seeds else 1.0
    d = (w - m[:, None] / n) / (mbar if mbar > 0 else 1.0)
    return d, d @ _helmert(n), int(round(_total(m, counts)))


def _u_statistic(e: np.ndarray, counts=None) -> float:
    """Unbiased estimate of |E e|^2 from independent rows: mean of e_i . e_j over i != j."""
    c = len(e) if counts is None else int(counts.sum())
    total = _total(e, counts)
    squares = np.einsum("ij,ij->", e, e) if counts is None else counts @ np.einsum("ij,ij->i", e, e)
    return float((total @ total - squares) / (c * (c - 1)))


def distinct_rows(*parts) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of per-seed win counts (``parts`` side by side: one run's, or two runs'
    on the same seeds) and how many seeds have each (see the module). Whole counts are coded as
    one integer a row, so no float copy of every seed's row is made."""
    parts = [np.asarray(p) for p in parts]
    whole = all(len(p) == 0 or (np.issubdtype(p.dtype, np.integer) or (p == np.floor(p)).all()) and p.min() >= 0
                for p in parts)
    cols = sum(p.shape[1] for p in parts)
    base = max((int(p.max()) + 1 for p in parts if len(p)), default=1)
    if not whole or base ** cols >= 2 ** 62:
        return np.unique(np.hstack(parts), axis=0, return_counts=True)
    code = np.zeros(len(parts[0]), np.int64)
    place = 1
    for p in parts:
        for j in range(p.shape[1]):
            code += p[:, j].astype(np.int64) * place
            place *= base
    codes, counts = np.unique(code, return_counts=True)
    return (codes[:, None] // base ** np.arange(cols, dtype=np.int64)) % base, counts


def _u_variance(g: np.ndarray, metric: np.ndarray, counts=None) -> float:
    """Variance of the U-statistic mean_{i != j} g_i' M g_j over independent rows g_i with mean
    mu and covariance Sigma: 4 mu'M Sigma M mu / C + 2 tr((M Sigma)^2) / (C (C - 1)). The second,
    degenerate term is all that is left when mu = 0 (both runs fair), where a variance from the
    first alone would be near 0 and a test on it invalid. Estimated with the sample covariance;
    the first term's plug-in loses its bias, tr((M S)^2) / C, and is kept at 0 or above."""
    c = len(g) if counts is None else int(counts.sum())
    cov = np.atleast_2d(np.cov(g, rowvar=False, fweights=counts))
    ms = metric @ cov
    second = float(np.trace(ms @ ms))
    mean = _total(g, counts) / c
    first = float(mean @ metric @ cov @ metric @ mean) - second / c
    return 4 * max(first, 0.0) / c + 2 * second / (c * (c - 1))


# ---------------------------------------------------------------------------------------------
# Feldman-Cousins intervals for a noncentral chi-square's noncentrality
# ---------------------------------------------------------------------------------------------
_DELTA_MAX = 200.0       # beyond it the unified interval equals the equal-tailed one (to <0.1%)


def _log_ive(v: float, z):
    """log of the exponentially scaled modified Bessel function I_v(z) e^-z, z > 0; closed forms
    for the orders 2-4 players need (scipy's general one is ten times slower)."""
    with np.errstate(divide="ignore"):
        if v == -0.5:
            return 0.5 * np.log(2 / (np.pi * z)) + np.log1p(np.exp(-2 * z)) - np.log(2)
        if v == 0.5:
            return 0.5 * np.log(2 / (np.pi * z)) + np.log(-np.expm1(-2 * z)) - np.log(2)
        if v == 0:
            return np.log(special.i0e(z))
        if v == 1:
            return np.log(special.i1e(z))
        return np.log(special.ive(v, z))


def _logpdf_root(y, k: int, delta: float):
    """Log density of Y = sqrt(X), X ~ noncentral chi-square(k, delta), at y > 0 (delta >= 0 a
    number or an array broadcasting with y). On the root scale the density is finite at 0 for
    every k, so cell masses are accurate."""
    y = np.asarray(y, dtype=float)
    x = y * y
    v = k / 2.0 - 1.0
    if np.ndim(delta) == 0 and delta == 0:
        return v * np.log(x) - x / 2 - (k / 2) * np.log(2.0) - special.gammaln(k / 2) + np.log(2 * y)
    z = np.sqrt(delta * x)
    return (np.log(0.5) - (x + delta) / 2 + (v / 2) * (np.log(x) - np.log(delta))
            + _log_ive(v, z) + z + np.log(2 * y))


def _mle(x: np.ndarray, k: int) -> np.ndarray:
    """Maximum-likelihood noncentrality of one observation x of a noncentral chi-square(k): 0
    for x <= k, else the root of sqrt(x/d) I_{k/2}(sqrt(dx)) / I_{k/2-1}(sqrt(dx)) = 1 in (0, x)."""
    lo, hi = np.zeros_like(x), np.maximum(x, 1e-300)
    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(64):
            mid = (lo + hi) / 2
            z = np.sqrt(mid * x)
            up = np.sqrt(x / mid) * special.ive(k / 2, z) / special.ive(k / 2 - 1, z) > 1
            lo, hi = np.where(up, mid, lo), np.where(up, hi, mid)
    return np.where(x > k, (lo + hi) / 2, 0.0)


@lru_cache(maxsize=32)
def _fc_band(k: int, alpha: float, n_delta: int = 500, n_y: int = 5000):
    """The Feldman-Cousins acceptance region [x_lo, x_hi] of the statistic for each
    noncentrality on a grid up to _DELTA_MAX: the values of highest likelihood ratio against the
    best-fitting noncentrality, holding probability 1 - alpha. (delta, x_lo, x_hi)."""
    delta = np.linspace(0.0, np.sqrt(_DELTA_MAX), n_delta) ** 2
    y_max = np.sqrt(_DELTA_MAX + k) + 10.0
    dy = y_max / n_y
    y = (np.arange(n_y) + 0.5) * dy
    mle = _mle(y * y, k)
    best = np.where(mle > 0, _logpdf_root(y, k, np.maximum(mle, 1e-300)), _logpdf_root(y, k, 0.0))
    logf = np.empty((n_y, n_delta))
    logf[:, 0] = _logpdf_root(y, k, 0.0)
    logf[:, 1:] = _logpdf_root(y[:, None], k, delta[None, 1:])
    ratio = logf - best[:, None]
    order = np.argsort(-ratio, axis=0, kind="stable")
    mass = np.take_along_axis(np.exp(logf) * dy, order, axis=0)
    inside = np.cumsum(mass, axis=0) < (1 - alpha) * mass.sum(axis=0)
    last = inside.sum(axis=0)                            # the cell that completes 1 - alpha
    cut = np.take_along_axis(ratio, order, axis=0)[last, np.arange(n_delta)]
    accept = ratio >= cut[None, :]
    lo_i = np.argmax(accept, axis=0)
    hi_i = n_y - 1 - np.argmax(accept[::-1], axis=0)
    x_lo = np.where(lo_i == 0, 0.0, (y[lo_i] - dy / 2) ** 2)
    x_hi = (y[hi_i] + dy / 2) ** 2
    # at 0 the region is exactly [0, central 1 - alpha quantile] (the ratio falls for x > k)
    x_lo[0], x_hi[0] = 0.0, float(stats.chi2.isf(alpha, k))
    return delta, np.maximum.accumulate(x_lo), np.maximum.accumulate(x_hi)


@lru_cache(maxsize=64)
def _f_band(k: int, alpha: float, df2: int):
    """The acceptance band of X / V (the module's noncentral F, on X's scale) with ``df2``
    degrees of freedom in V: at each noncentrality, the region between the same quantiles as
    :func:`_fc_band`'s region of X. Each region holds 1 - alpha exactly; at 0 it is [0, the
    F test's critical value]; as df2 grows it becomes X's own band. (delta, x_lo, x_hi)."""
    delta, x_lo, x_hi = _fc_band(k, alpha)
    p_lo, p_hi = stats.ncx2.cdf(x_lo, k, delta), stats.ncx2.cdf(x_hi, k, delta)
    f_lo = np.where(p_lo > 0, k * stats.ncf.ppf(p_lo, k, df2, delta), 0.0)
    f_hi = k * stats.ncf.ppf(p_hi, k, df2, delta)
    f_lo[0], f_hi[0] = 0.0, k * float(stats.f.isf(alpha, k, df2))
    return delta, np.maximum.accumulate(f_lo), np.maximum.accumulate(f_hi)


NORMAL_FROM = 1e5    # beyond this x the noncentral chi-square is taken as normal
_HERMITE = np.polynomial.hermite_e.hermegauss(40)


def _cdf(x: float, k: int, d: float, df2: int | None) -> float:
    """P(statistic <= x) at noncentrality ``d``: X's (df2 None) or X / V's (see the module).
    Far out (x > ``NORMAL_FROM``, a run so one-sided that one seat almost always wins) scipy's
    cdfs return NaN, and X is normal to far better than the band's resolution there (mean
    k + d, variance 2(k + 2d)); X / V is then integrated over that normal X."""
    if x <= NORMAL_FROM:
        return float(stats.ncx2.cdf(x, k, d) if df2 is None else stats.ncf.cdf(x / k, k, df2, d))
    mean, sd = k + d, np.sqrt(2.0 * (k + 2.0 * d))
    if df2 is None:
        return float(stats.norm.cdf((x - mean) / sd))
    z, w = _HERMITE
    return float(w @ stats.chi2.sf(df2 * np.maximum(mean + sd * z, 0.0) / x, df2) / w.sum())


def _equal_tailed(x: float, k: int, q: float, df2: int | None = None) -> float:
    """The noncentrality at which P(statistic <= x) = q (q small: upper limit; large: lower)."""
    f = lambda d: _cdf(x, k, d, df2) - q       # noqa: E731  (decreasing in d)
    if f(0.0) <= 0:
        return 0.0
    hi = max(x, 1.0)
    while f(hi) > 0:
        hi *= 2
    return float(optimize.brentq(f, 0.0, hi, xtol=1e-10, rtol=1e-12))


def noncentrality_interval(x: float, k: int, alpha: float = ALPHA, df2: int | None = None) -> tuple[float, float]:
    """1 - alpha Feldman-Cousins interval of the noncentrality from one observation ``x`` of a
    noncentral chi-square with ``k`` degrees of freedom (``df2`` None), or of k times a
    noncentral F with (k, ``df2``) (see the module); (lo, hi). Exact coverage for every
    noncentrality (to the grid's resolution); lo > 0 exactly when x is beyond the central
    1 - alpha quantile."""
    if not np.isfinite(x):
        return float("nan"), float("nan")
    delta, x_lo, x_hi = _fc_band(int(k), float(alpha)) if df2 is None else _f_band(int(k), float(alpha), int(df2))
    if x <= x_lo[-1]:
        flat = np.searchsorted(x_lo, 0.0, side="right") - 1          # x_lo is 0 up to here
        hi = float(np.interp(x, x_lo[flat:], delta[flat:])) if x > 0 else float(delta[flat])
    else:
        hi = _equal_tailed(x, k, alpha / 2, df2)
    if x <= x_hi[0]:
        lo = 0.0
    elif x <= x_hi[-1]:
        lo = float(np.interp(x, x_hi, delta))
    else:
        lo = _equal_tailed(x, k, 1 - alpha / 2, df2)
    return lo, max(hi, lo)


# ---------------------------------------------------------------------------------------------
# the measure
# ---------------------------------------------------------------------------------------------
def _nan_fairness(n, c, games, dev, ms, alpha) -> SeatFairness:
    nan = float("nan")
    rms = float(np.sqrt(max(ms, 0.0))) if np.isfinite(ms) else nan
    return SeatFairness(n, c, games, dev, ms, rms, nan, nan, nan, (n - 1, max(c - n + 1, 0)), nan,
                        alpha, nan)


def seat_fairness(wins, games=None, alpha: float = ALPHA, counts=None) -> SeatFairness:
    """Seat unfairness of one run from ``wins[seed, seat]`` (each seed's wins per seat, summed
    over its rotations). ``games`` (per seed) defaults to the row sums, as every game has exactly
    one winner. ``counts``: ``wins`` holds distinct rows, row i for ``counts[i]`` seeds (see the
    module). See the module for the method."""
    if counts is not None:
        counts = np.asarray(counts, dtype=np.int64)
    d, e, n_games = _deviations(wins, games, counts)
    n = d.shape[1]
    c = len(d) if counts is None else int(counts.sum())
    k = n - 1
    dev = _total(d, counts) / c if c else np.full(n, np.nan)
    ms = _u_statistic(e, counts) / n if c >= 2 else float("nan")
    if c <= k + 1:
        return _nan_fairness(n, c, n_games, dev, ms, alpha)
    cov = np.atleast_2d(np.cov(e, rowvar=False, fweights=counts))
    eig = np.linalg.eigvalsh(cov)
    if eig[0] <= 1e-12 * max(eig[-1], 1e-300):
        return _nan_fairness(n, c, n_games, dev, ms, alpha)   # a direction without variance
    ebar = _total(e, counts) / c
    t2 = float(c * ebar @ np.linalg.solve(cov, ebar))
    df2 = c - k
    f = t2 * df2 / (k * (c - 1))
    p = float(stats.f.sf(f, k, df2))
    lam_lo, lam_hi = noncentrality_interval(k * f, k, alpha, df2)   # k F is X / V (module)
    rms_lo = np.sqrt(lam_lo * eig[0] / c / n)
    rms_hi = np.sqrt(lam_hi * eig[-1] / c / n)
    mbar = n_games / c if games is None else float(_total(np.asarray(games, dtype=float), counts) / c)
    deff = float(eig.mean() * n * mbar)                 # independent fair games: 1 / (n m)
    rms = float(np.sqrt(max(ms, 0.0)))
    return SeatFairness(n, c, n_games, dev, ms, rms, float(rms_lo), float(rms_hi), t2, (k, df2), p,
                        alpha, deff)


def compare_fairness(wins_a, wins_b, paired: bool, alpha: float = ALPHA) -> FairnessComparison:
    """Is B fairer than A? ``wins_a`` and ``wins_b`` are per-seed win counts; ``paired``: row i
    of both is the same seed (common random numbers), which removes the variation the two runs
    share. The difference of the unbiased mean square deviations with its interval and tests.
    Computed on the distinct rows (:func:`distinct_rows`; paired: of both runs' rows side by side)."""
    wins_a, wins_b = np.asarray(wins_a), np.asarray(wins_b)
    seeds_a, seeds_b = len(wins_a), len(wins_b)
    if paired and seeds_a != seeds_b:
        raise ValueError("paired comparison: both runs need the same seeds, row for row")
    if paired:
        rows, counts_a = distinct_rows(wins_a, wins_b)
        rows_a, rows_b, counts_b = rows[:, :wins_a.shape[1]], rows[:, wins_a.shape[1]:], counts_a
    else:
        (rows_a, counts_a), (rows_b, counts_b) = distinct_rows(wins_a), distinct_rows(wins_b)
    fa, fb = seat_fairness(rows_a, alpha=alpha, counts=counts_a), seat_fairness(rows_b, alpha=alpha, counts=counts_b)
    _, ea, _ = _deviations(rows_a, counts=counts_a)
    _, eb, _ = _deviations(rows_b, counts=counts_b)
    n = ea.shape[1] + 1
    nan = float("nan")
    diff = (fb.mean_square - fa.mean_square)
    if min(seeds_a, seeds_b) < 3:
        return FairnessComparison(fa, fb, paired, min(seeds_a, seeds_b), diff, nan, nan, nan, nan, alpha)
    if paired:
        c, k = seeds_a, ea.shape[1]
        metric = np.diag(np.r_[np.ones(k), -np.ones(k)])          # b.b' - a.a'
        var = _u_variance(np.hstack([eb, ea]), metric, counts_a) / n ** 2
        df = c - 1
    else:
        va = _u_variance(ea, np.eye(ea.shape[1]), counts_a) / n ** 2
        vb = _u_variance(eb, np.eye(eb.shape[1]), counts_b) / n ** 2
        var = va + vb
        c = seeds_a + seeds_b
        # Welch-Satterthwaite degrees of freedom
        df = var ** 2 / (va ** 2 / (seeds_a - 1) + vb ** 2 / (seeds_b - 1)) if var > 0 else c - 2
    se = float(np.sqrt(var))
    if not se > 0:
        return FairnessComparison(fa, fb, paired, c, diff, diff, diff, nan, nan, alpha)
    t = diff / se
    half = float(stats.t.isf(alpha / 2, df)) * se
    return FairnessComparison(fa, fb, paired, seeds_a if paired else c, diff, diff - half, diff + half,
                              float(2 * stats.t.sf(abs(t), df)), float(stats.t.cdf(t, df)), alpha)


def fairness_power(deviations, seed_cov, seeds: int, alpha: float = ALPHA) -> float:
    """The chance that the "all seats fair" test rejects at ``alpha`` with ``seeds`` seeds, when
    the seats' win rates deviate from 1/n by ``deviations`` (they sum to 0) and one seed's
    deviation vector has covariance ``seed_cov`` (seats x seats; for m independent games per
    seed, (diag(p) - p p') / m). Hotelling's T^2 follows a noncentral F then, with noncentrality
    seeds x the squared Mahalanobis length of the deviations. For planning runs and for checking
    the test's power by simulation."""
    dev = np.asarray(deviations, dtype=float)
    n = len(dev)
    h = _helmert(n)
    mu, cov = h.T @ dev, h.T @ np.asarray(seed_cov, dtype=float) @ h
    k, df2 = n - 1, seeds - n + 1
    lam = float(seeds * mu @ np.linalg.solve(cov, mu))
    crit = stats.f.isf(alpha, k, df2)
    # scipy's ncf gives nonsense at a noncentrality of exactly 0: the central F there
    return float(stats.ncf.sf(crit, k, df2, lam) if lam > 0 else stats.f.sf(crit, k, df2))


def change_words(a: tuple[float, float, float], b: tuple[float, float, float], mean_square_change: float,
                 p: float, alpha: float = ALPHA, base: str = "A", test: str = "paired by seed") -> str:
    """B's seat unfairness against ``base``'s (A), both as (value, lo, hi) in percentage points,
    and what the test of the change says. The test is on the mean square (its estimate is
    unbiased there), but a designer reads the unfairness itself: the difference of the two in pp,
    never a squared unit (the mean square's change stays in the CSV tables)."""
    from .stats import p_exact

    if p < alpha:
        verdict = f"fairer than {base}" if mean_square_change < 0 else f"less fair than {base}"
    else:
        verdict = f"not clearly fairer than {base}"
    return (f"seat unfairness {b[0]:.2f} pp [{b[1]:.2f}, {b[2]:.2f}] against {base}'s {a[0]:.2f} pp "
            f"[{a[1]:.2f}, {a[2]:.2f}] ({b[0] - a[0]:+.2f} pp; {test}, p {p_exact(p)}): {verdict}")
