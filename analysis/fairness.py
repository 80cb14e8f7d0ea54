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
- **Interval, near fair.** Scaled to (seeds - n + 1) / (seeds - 1) T^2 (n - 1 times the F
  statistic), the statistic is X / V: X noncentral chi-square with n - 1 degrees of freedom and
  noncentrality the squared Mahalanobis length of the deviations times the seeds, V an
  independent chi-square over its seeds - n + 1 degrees of freedom (the seeds' covariance
  estimated): a noncentral F. Its interval is the Feldman-Cousins (unified, likelihood-ratio
  ordered) Neyman construction of X, carried to the noncentral F by giving each noncentrality's
  acceptance region the same tail probabilities, so it covers at its nominal rate at every
  noncentrality including 0, goes smoothly from an upper limit to a two-sided interval, and
  excludes 0 exactly when the F test rejects at the same level. The noncentrality is turned into
  the mean square deviation with the seeds' variance in the observed direction of the
  deviations (|mean|^2 over its squared Mahalanobis length; their average over directions when
  the mean is 0): exact when the covariance is the same in every direction, as it nearly is
  near fair. The upper limit takes at least the average over directions: an observed direction
  off the true one only lowers that variance when the truth lies along the covariance's largest
  axis (one seat ahead: 93% coverage at 30 seeds with the observed direction alone). (The
  smallest and largest eigenvalue of the covariance, used until issue 50, made the interval 2 to
  50 times wider than the estimate's own spread far from fair, covering 99-100%, and kept it
  from shrinking with the seeds.)
- **Interval, far from fair.** Once T^2 reaches ``SWITCH`` (30; the test then rejects with p
  below 1e-4 at 30 seeds or more) the interval is the estimate plus or minus t (seeds - 1
  degrees of freedom) times its delta-method standard error, the U-statistic's variance (below)
  over twice the estimate: the Mahalanobis statistic carries the noise of the seeds' estimated
  covariance, which the estimate itself does not, and far from fair the seats' variances differ.
  It is taken only where it excludes 0 and the test rejects, so interval and test still agree.
  By seeded simulation (tests/test_fairness.py; scripts/check_intervals.py --unfairness-grid for
  the full grid) the two together cover 93% to 97% in every cell of 2 to 4 players, 0 to 30
  points and 30 to 20,000 seeds, and from 2,000 seeds on are at most about 1.4 times as wide as
  the estimate's own 95% spread.
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

import hashlib
import io
import math
from dataclasses import dataclass
from functools import lru_cache, wraps
from pathlib import Path

import numpy as np
import scipy
from scipy import optimize, special, stats

from evora_sim import NUMBA_CACHE
from evora_sim.fsutil import write_bytes_atomic

from .numbers import bracket
from .stats import ALPHA, p_exact


@dataclass(frozen=True)
class SeatFairness:
    """How fair the seats of one run are. Rates as fractions (x 100 = points of win rate)."""

    seats: int
    seeds: int
    games: int
    deviations: np.ndarray      # per seat: observed win rate - 1/n
    mean_square: float          # unbiased estimate of mean_k (p_k - 1/n)^2; may be below 0
    rms: float                  # seat unfairness: sqrt(max(mean_square, 0))
    rms_lo: float               # its 1 - alpha interval (see the module)
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


def seat_deviations(wins, games=None, counts=None) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-seed deviation vectors (win counts minus the fair share of the seed's games, over the
    mean games per seed: their mean is exactly the observed deviation of the win rates), their
    coordinates on the sum-0 basis, and the number of games. ``counts``: seeds per row. Public,
    with :func:`u_statistic_variance`: the tests' every-seed oracle of :func:`compare_fairness`
    is built of the same pieces, so that it checks the distinct-row form alone."""
    w = np.asarray(wins, dtype=float)
    if w.ndim != 2 or w.shape[1] < 2:
        raise ValueError(f"win counts must have shape (seeds, seats >= 2), got {w.shape}")
    m = w.sum(axis=1) if games is None else np.asarray(games, dtype=float)
    n = w.shape[1]
    seeds = len(m) if counts is None else counts.sum()
    mbar = _total(m, counts) / seeds if seeds else 1.0
    d = (w - m[:, None] / n) / (mbar if mbar > 0 else 1.0)
    return d, d @ _helmert(n), int(round(_total(m, counts)))


def _runs(rows: int, counts=None) -> np.ndarray:
    """``counts`` as (runs, rows) seeds per row: None is one run holding every row once, a
    vector one run; a matrix holds many runs on the same distinct rows (calibration)."""
    if counts is None:
        return np.ones((1, rows))
    counts = np.asarray(counts, dtype=float)
    return counts[None, :] if counts.ndim == 1 else counts


def _moments(x: np.ndarray, runs: np.ndarray):
    """Per run: its seeds, and the mean and covariance of the rows of ``x``, row i taken
    ``runs[r, i]`` times (centred before the products, as np.cov)."""
    c = runs.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = runs @ x / c[:, None]
        centred = x[None, :, :] - mean[:, None, :]
        cov = np.einsum("rn,rni,rnj->rij", runs, centred, centred) / (c - 1)[:, None, None]
    return c, mean, cov


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


def u_statistic_variance(g: np.ndarray, metric: np.ndarray, counts=None):
    """Variance of the U-statistic mean_{i != j} g_i' M g_j over independent rows g_i with mean
    mu and covariance Sigma: 4 mu'M Sigma M mu / C + 2 tr((M Sigma)^2) / (C (C - 1)). The second,
    degenerate term is all that is left when mu = 0 (both runs fair), where a variance from the
    first alone would be near 0 and a test on it invalid. Estimated with the sample covariance;
    the first term's plug-in loses its bias, tr((M S)^2) / C, and is kept at 0 or above. A float,
    or one per run when ``counts`` is a matrix (:func:`_runs`)."""
    c, mean, cov = _moments(g, _runs(len(g), counts))
    ms = np.einsum("ij,rjk->rik", metric, cov)
    second = np.maximum(np.einsum("rij,rji->r", ms, ms), 0.0)     # >= 0 but for rounding (equal runs)
    first = np.einsum("ri,rij,rj->r", mean, ms @ metric, mean) - second / c
    with np.errstate(invalid="ignore", divide="ignore"):
        var = 4 * np.maximum(first, 0.0) / c + 2 * second / (c * (c - 1))
    return var if np.ndim(counts) == 2 else float(var[0])


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


BANDS = Path(NUMBA_CACHE).parent / "bands"      # the tool's own cache folder (EVORA_CACHE_DIR)


def _kept(band):
    """Keep a band (three arrays worked out in a second or more of arithmetic, the same every
    time) in the tool's cache folder, named after this module's text and the versions of NumPy
    and SciPy that work it out: every process that tests seat fairness (each dashboard start, each
    report) reads it instead of working it out again. A plain .npy array (no pickle); a band
    that cannot be read or written is worked out as before."""
    code = hashlib.sha256(Path(__file__).read_bytes() + f"{np.__version__} {scipy.__version__}".encode())

    @wraps(band)
    def kept(*args):
        f = BANDS / f"{band.__name__.strip('_')}-{code.hexdigest()[:16]}-{'-'.join(map(str, args))}.npy"
        try:
            got = np.load(f, allow_pickle=False)
            return got[0], got[1], got[2]
        except (OSError, ValueError, IndexError):
            pass
        out = band(*args)
        try:
            BANDS.mkdir(parents=True, exist_ok=True)
            buf = io.BytesIO()
            np.save(buf, np.stack(out), allow_pickle=False)
            write_bytes_atomic(f, buf.getvalue())
        except OSError:
            pass
        return out

    return kept


@lru_cache(maxsize=32)
@_kept
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
@_kept
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
    lo, hi = _noncentrality_intervals(np.array([x], dtype=float), k, alpha, df2)
    return float(lo[0]), float(hi[0])


def _noncentrality_intervals(x: np.ndarray, k: int, alpha: float, df2: int | None):
    """:func:`noncentrality_interval` of every observation in ``x`` (an array): (lo, hi)."""
    delta, x_lo, x_hi = _fc_band(int(k), float(alpha)) if df2 is None else _f_band(int(k), float(alpha), int(df2))
    finite = np.isfinite(x)
    x = np.where(finite, x, 0.0)
    flat = np.searchsorted(x_lo, 0.0, side="right") - 1          # x_lo is 0 up to here
    hi = np.where(x > 0, np.interp(x, x_lo[flat:], delta[flat:]), delta[flat])
    lo = np.where(x <= x_hi[0], 0.0, np.interp(x, x_hi, delta))
    for i in np.flatnonzero(x > x_lo[-1]):                         # beyond the tabulated band
        hi[i] = _equal_tailed(x[i], k, alpha / 2, df2)
    for i in np.flatnonzero(x > x_hi[-1]):
        lo[i] = _equal_tailed(x[i], k, 1 - alpha / 2, df2)
    nan = np.full(len(x), np.nan)
    return np.where(finite, lo, nan), np.where(finite, np.maximum(hi, lo), nan)


# ---------------------------------------------------------------------------------------------
# the measure
# ---------------------------------------------------------------------------------------------
SWITCH = 30.0    # Hotelling's T^2 from which the interval is the delta-method one (see the module)


def _rms_interval(ms, var_ms, t2, p, rho, average, c, k: int, n: int, alpha: float):
    """The 1 - alpha interval of the seat unfairness of each run (see the module): far from fair
    (T^2 at least ``SWITCH``, the test rejecting, and the interval clear of 0) the estimate plus
    or minus t times its delta-method standard error (from ``var_ms``, the mean square's
    U-statistic variance); otherwise the Feldman-Cousins interval of the noncentrality, turned
    into the mean square with ``rho``, the seeds' variance in the observed direction (the upper
    limit with at least ``average``, their variance averaged over the directions)."""
    theta = np.sqrt(np.maximum(ms, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        half = stats.t.isf(alpha / 2, c - 1) * np.sqrt(var_ms) / (2 * theta)
    lo, hi = theta - half, theta + half
    near = ~((t2 >= SWITCH) & (p < alpha) & (lo > 0))
    for seeds in np.unique(c[near]):
        idx = np.flatnonzero(near & (c == seeds))
        df2 = int(seeds) - k
        lam_lo, lam_hi = _noncentrality_intervals(t2[idx] * df2 / (seeds - 1), k, alpha, df2)   # k F
        lo[idx] = np.sqrt(lam_lo * rho[idx] / seeds / n)
        hi[idx] = np.sqrt(lam_hi * np.maximum(rho[idx], average[idx]) / seeds / n)
    return lo, hi


def _fairness(wins, games, counts, alpha: float) -> dict:
    """The figures of :func:`seat_fairness`, one per run (``counts``: see :func:`_runs`), as
    arrays; ``valid`` is False where a run has too few seeds or a direction without variance."""
    w = np.asarray(wins, dtype=float)
    if w.ndim != 2 or w.shape[1] < 2:
        raise ValueError(f"win counts must have shape (seeds, seats >= 2), got {w.shape}")
    n = w.shape[1]
    k = n - 1
    m = w.sum(axis=1) if games is None else np.asarray(games, dtype=float)
    runs = _runs(len(w), counts)
    fair = w - m[:, None] / n                 # wins over the fair share of the seed's games
    coords = fair @ _helmert(n)
    c, ebar, cov = _moments(coords, runs)
    with np.errstate(invalid="ignore", divide="ignore"):
        mbar = runs @ m / c
        scale = np.where(mbar > 0, mbar, 1.0)           # per-seed deviations over the mean games
        dev = runs @ fair / c[:, None] / scale[:, None]
        ebar, cov = ebar / scale[:, None], cov / scale[:, None, None] ** 2
        trace = np.trace(cov, axis1=1, axis2=2)
        # the U-statistic over pairs of distinct seeds (module): |mean|^2 less its variance
        ms = (np.einsum("ri,ri->r", ebar, ebar) - trace / c) / n
        var_ms = u_statistic_variance(coords, np.eye(k), runs) / scale ** 4 / n ** 2
    ms = np.where(c >= 2, ms, np.nan)
    enough = c > k + 1
    safe = np.where(enough[:, None, None], cov, np.eye(k))
    eig = np.linalg.eigvalsh(safe)
    valid = enough & (eig[:, 0] > 1e-12 * np.maximum(eig[:, -1], 1e-300))
    safe = np.where(valid[:, None, None], safe, np.eye(k))
    t2 = c * np.einsum("ri,ri->r", ebar, np.linalg.solve(safe, ebar[:, :, None])[:, :, 0])
    t2 = np.where(valid, t2, np.nan)
    df2 = c - k
    p = np.where(valid, stats.f.sf(t2 * df2 / (k * (c - 1)), k, np.maximum(df2, 1)), np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.where(t2 > 0, c * np.einsum("ri,ri->r", ebar, ebar) / t2, trace / k)
    lo, hi = np.full(len(c), np.nan), np.full(len(c), np.nan)
    if valid.any():
        lo[valid], hi[valid] = _rms_interval(ms[valid], var_ms[valid], t2[valid], p[valid], rho[valid],
                                             trace[valid] / k, c[valid], k, n, alpha)
    return {"seats": n, "seeds": c, "games": runs @ m, "deviations": dev, "mean_square": ms,
            "rms": np.sqrt(np.maximum(ms, 0.0)), "rms_lo": lo, "rms_hi": hi, "statistic": t2,
            "df2": df2, "p": p, "design_effect": eig.mean(axis=1) * n * mbar, "valid": valid}


def seat_fairness_many(wins, counts, alpha: float = ALPHA, games=None) -> dict:
    """:func:`seat_fairness` of many runs at once, each a number of seeds with each distinct row
    of ``wins`` (``counts[run, row]``): a dict of arrays (``rms``, ``rms_lo``, ``rms_hi``, ``p``,
    ``mean_square``, ...; NaN where a run gets no interval). The same computation as for one
    run, vectorised, so the interval's coverage can be simulated over thousands of runs fast."""
    counts = np.asarray(counts, dtype=float)
    if counts.ndim != 2 or counts.shape[1] != len(wins):
        raise ValueError(f"counts must have shape (runs, {len(wins)} rows), got {counts.shape}")
    return _fairness(wins, games, counts, alpha)


def seat_fairness(wins, games=None, alpha: float = ALPHA, counts=None) -> SeatFairness:
    """Seat unfairness of one run from ``wins[seed, seat]`` (each seed's wins per seat, summed
    over its rotations). ``games`` (per seed) defaults to the row sums, as every game has exactly
    one winner. ``counts``: ``wins`` holds distinct rows, row i for ``counts[i]`` seeds (see the
    module). See the module for the method."""
    if counts is not None:
        counts = np.asarray(counts, dtype=np.int64)
    r = {key: (v[0] if isinstance(v, np.ndarray) else v) for key, v in _fairness(wins, games, counts, alpha).items()}
    n, c = r["seats"], int(r["seeds"])
    nan = float("nan")
    dev = r["deviations"] if c else np.full(n, nan)
    if not r["valid"]:
        return SeatFairness(n, c, int(round(r["games"])), dev, float(r["mean_square"]), float(r["rms"]), nan, nan,
                            nan, (n - 1, max(c - n + 1, 0)), nan, alpha, nan)
    return SeatFairness(n, c, int(round(r["games"])), dev, float(r["mean_square"]), float(r["rms"]),
                        float(r["rms_lo"]), float(r["rms_hi"]), float(r["statistic"]), (n - 1, int(r["df2"])),
                        float(r["p"]), alpha, float(r["design_effect"]))


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
    _, ea, _ = seat_deviations(rows_a, counts=counts_a)
    _, eb, _ = seat_deviations(rows_b, counts=counts_b)
    n = ea.shape[1] + 1
    nan = float("nan")
    diff = (fb.mean_square - fa.mean_square)
    if min(seeds_a, seeds_b) < 3:
        return FairnessComparison(fa, fb, paired, min(seeds_a, seeds_b), diff, nan, nan, nan, nan, alpha)
    if paired:
        c, k = seeds_a, ea.shape[1]
        metric = np.diag(np.r_[np.ones(k), -np.ones(k)])          # b.b' - a.a'
        var = u_statistic_variance(np.hstack([eb, ea]), metric, counts_a) / n ** 2
        df = c - 1
    else:
        va = u_statistic_variance(ea, np.eye(ea.shape[1]), counts_a) / n ** 2
        vb = u_statistic_variance(eb, np.eye(eb.shape[1]), counts_b) / n ** 2
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
    if p < alpha:
        verdict = f"fairer than {base}" if mean_square_change < 0 else f"less fair than {base}"
    else:
        verdict = f"not clearly fairer than {base}"
    def shown(x):           # in pp already; an unfairness cannot fall below 0
        return bracket(x[0], x[1], x[2], 1.0, " pp", bounds=(0.0, math.inf))
    return (f"seat unfairness {shown(b)} against {base}'s {shown(a)} ({b[0] - a[0]:+.2f} pp; {test}, "
            f"p {p_exact(p)}): {verdict}")
