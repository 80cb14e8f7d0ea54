"""The statistics every table in the report uses: one implementation of each.

Rates come with a 95% Wilson interval and their sample size; differences of two rates with
Newcombe's hybrid score interval (built from the two Wilson intervals); differences from a
reference rate are tested (exact binomial), families of tests are Holm-corrected, and
"significant" always means the (corrected, where a family is tested) p-value is below
``ALPHA``. Means come with a t interval. Strategy ratings are Bradley-Terry strengths on the
Elo scale with a bootstrap interval; adjusted effects are binomial GLMs (logistic regression)
fitted to cell counts, which gives exactly the row-level logistic fit at a fraction of the cost.

Seat-games are not independent trials: a game has one winner, and with seat rotation a seed's
games share its card stacks. Where that matters the seed is the unit: design effects widen
rates and differences (:func:`clustered_wilson`, :func:`newcombe_diff_clustered`), the
regression's covariance is cluster-robust (:func:`cluster_robust_cov`), and seat fairness has
its own module (:mod:`analysis.fairness`). A difference below ``MIN_EFFECT`` is called
negligible even when significant.
"""
from __future__ import annotations

import numpy as np
from scipy import special, stats

ALPHA = 0.05
MIN_EFFECT = 0.01                   # smallest difference in win rate that matters (1 pp)
MIN_USES = 100                      # seat-games that used a card or space before it is judged: fewer know a
                                    # win rate to no better than about +-10 pp (1.96 x 0.5 / sqrt(100))
FEW_CARD_PLAYS = 1.0                # card plays a game (instant tiles included) below which the players
                                    # "hardly play cards", and the report's answer says so
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


def newcombe_diff_clustered(k1, n1, k0, n0, z: float = Z95):
    """Difference of two rates k1/n1 - k0/n0 whose trials come in clusters (per-cluster
    arrays: successes and trials of each group in each cluster), e.g. seats that used a card
    vs seats that did not, clustered by seed: the seats of one game share one winner, so the two
    rates are not independent, and a seed's rotations share its stacks.

    The design effect of the difference is its cluster-robust variance (linearised ratio
    estimators, seed sums) over the variance of independent trials. Newcombe's hybrid interval
    is widened by its square root when it is above 1 (kept when below: conservative, as
    :func:`clustered_wilson`), and the two-proportion z statistic is divided by the same factor.
    (diff, lo, hi, p, design effect)."""
    k1, n1, k0, n0 = (np.asarray(a, dtype=float) for a in (k1, n1, k0, n0))
    K1, N1, K0, N0 = k1.sum(), n1.sum(), k0.sum(), n0.sum()
    d, lo, hi = (float(x) for x in newcombe_diff(K1, N1, K0, N0, z))
    p = float(two_prop_p(K1, N1, K0, N0))
    c = len(k1)
    deff = float("nan")
    if c >= 2 and N1 > 0 and N0 > 0:
        p1, p0 = K1 / N1, K0 / N0
        u = (k1 - p1 * n1) / N1 - (k0 - p0 * n0) / N0
        var_cluster = c / (c - 1) * float(u @ u)
        var_binom = p1 * (1 - p1) / N1 + p0 * (1 - p0) / N0
        if var_binom > 0:
            deff = var_cluster / var_binom
    if np.isfinite(deff) and deff > 1:
        root = np.sqrt(deff)
        lo, hi = d - root * (d - lo), d + root * (hi - d)
        with np.errstate(invalid="ignore"):
            p = float(2 * stats.norm.sf(stats.norm.isf(p / 2) / root))
    return d, lo, hi, p, deff


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
    return holm_rows(np.asarray(pvalues, dtype=float)[None, :])[0]


def holm_rows(pvalues) -> np.ndarray:
    """:func:`holm` of every row of a 2-D array at once (each row one family), so a simulation
    can correct thousands of families without a loop."""
    p = np.asarray(pvalues, dtype=float)
    order = np.argsort(np.where(np.isfinite(p), p, np.inf), axis=1, kind="stable")
    ranked = np.take_along_axis(p, order, axis=1)
    m = np.isfinite(p).sum(axis=1, keepdims=True)
    scaled = np.minimum(1.0, (m - np.arange(p.shape[1])) * ranked)
    scaled = np.maximum.accumulate(np.where(np.isfinite(scaled), scaled, -np.inf), axis=1)
    out = np.full(p.shape, np.nan)
    np.put_along_axis(out, order, np.where(np.isfinite(ranked), scaled, np.nan), axis=1)
    return out


def tost_p(diff, se, margin: float) -> np.ndarray:
    """p-value of "the true difference is at least ``margin`` away from 0" by two one-sided
    tests (TOST, normal): small only when the estimate ``diff`` (standard error ``se``) is shown
    to lie inside (-margin, +margin). This is how agreement is shown; a difference test that
    fails to reject shows nothing of the kind. A margin of 0 can never be shown (p = 1)."""
    diff, se = np.asarray(diff, dtype=float), np.asarray(se, dtype=float)
    if margin <= 0:
        return np.ones(np.broadcast(diff, se).shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.maximum(stats.norm.sf((diff + margin) / se), stats.norm.cdf((diff - margin) / se))


def chained_holm(chains, alpha: float = ALPHA) -> np.ndarray:
    """Holm's procedure over families of hypotheses each tested in a fixed order.
    ``chains[..., f, j]``: family f's p-values in the order they may be rejected (nan: cannot
    be), a hypothesis being tested only once every one before it in its chain is rejected;
    leading axes are independent ladders. Each unfinished chain is tested at alpha over the
    number of unfinished chains, and a chain rejected to its end hands its share to the others
    (Holm's step). This is the graphical procedure of Bretz et al. (2009) with the chains' heads
    joined in a complete graph of equal weights and each chain a fixed sequence, so the chance of
    rejecting any true hypothesis stays at most alpha. Returns, per chain, how many of its
    hypotheses are rejected (from its start)."""
    p = np.asarray(chains, dtype=float)
    length = p.shape[-1]
    done = np.zeros(p.shape[:-1], dtype=int)
    while True:
        unfinished = done < length
        level = alpha / np.maximum(unfinished.sum(axis=-1, keepdims=True), 1)
        before = done.copy()
        for j in range(length):
            done += (done == j) & (np.nan_to_num(p[..., j], nan=1.0) < level)
        if np.array_equal(done, before):
            return done


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


def ratio_ci(y, x) -> tuple[float, float, float]:
    """A ratio of sums ``sum(y) / sum(x)`` over independent groups (``y``, ``x``: one value per
    group: seeds, or sums of whole seeds) with a 95% t interval on groups - 1 degrees of freedom
    from the linearised (delta-method) variance; (ratio, lo, hi). Why not a Wilson interval on
    the plays: the plays of one seed share its stacks and players, so they are not independent
    trials; the group is the unit (``tests/test_playstates.py`` shows the coverage)."""
    y, x = np.asarray(y, dtype=float), np.asarray(x, dtype=float)
    total = x.sum()
    if total <= 0:
        return float("nan"), float("nan"), float("nan")
    r = float(y.sum() / total)
    g = len(x)
    if g < 2:
        return r, float("nan"), float("nan")
    e = y - r * x
    se = float(np.sqrt(g / (g - 1) * (e @ e)) / total)
    half = float(stats.t.ppf(0.975, g - 1)) * se
    return r, r - half, r + half


def clustered_share(y, x) -> tuple[float, float, float]:
    """A share of sums, ``sum(y) / sum(x)`` with ``y <= x`` (hits among trials) in independent
    groups, with a 95% Wilson interval on the effective sample size (Kish): the trials divided by
    the design effect, the linearised variance over groups against the binomial one (never below
    1). Why Wilson and not :func:`ratio_ci`'s t: a rare share (a card a leader seldom plays) has
    few hits, and a symmetric interval then undercovers (``tests/test_playstates.py``)."""
    y, x = np.asarray(y, dtype=float), np.asarray(x, dtype=float)
    n = x.sum()
    g = len(x)
    if n <= 0:
        return float("nan"), float("nan"), float("nan")
    p = float(y.sum() / n)
    binomial = p * (1 - p) / n
    deff = 1.0
    if g > 1 and binomial > 0:
        e = y - p * x
        deff = max(g / (g - 1) * (e @ e) / n ** 2 / binomial, 1.0)
    lo, hi = wilson(p * n / deff, n / deff)
    return p, float(lo), float(hi)


def ratio_diff(y, x, b, t) -> tuple[float, float, float, float]:
    """The difference of two ratios of sums over the same independent groups,
    ``sum(y)/sum(x) - sum(b)/sum(t)``, with a 95% t interval and a two-sided p-value (t on groups -
    1 degrees of freedom, linearised variance: both ratios' errors move together within a group);
    (difference, lo, hi, p)."""
    y, x, b, t = (np.asarray(a, dtype=float) for a in (y, x, b, t))
    X, T = x.sum(), t.sum()
    g = len(x)
    if X <= 0 or T <= 0 or g < 2:
        return float("nan"), float("nan"), float("nan"), float("nan")
    r1, r2 = y.sum() / X, b.sum() / T
    e = (y - r1 * x) / X - (b - r2 * t) / T
    se = float(np.sqrt(g / (g - 1) * (e @ e)))
    d = float(r1 - r2)
    if se == 0:
        return d, d, d, (1.0 if d == 0 else 0.0)
    q = float(stats.t.ppf(0.975, g - 1))
    return d, d - q * se, d + q * se, float(2 * stats.t.sf(abs(d) / se, g - 1))


def conditional_share_p(y, x, b, t) -> float:
    """Two-sided mid-p of ``sum(y)`` leading plays among ``sum(x)`` when each of a group's ``x``
    plays begins a turn led at that group's own rate of turns begun leading, ``b / t`` (the null of
    "played by leaders as often as they take turns"): the exact Poisson-binomial law of the sum,
    by the discrete Fourier transform of its characteristic function. The t test on the ratio
    difference (:func:`ratio_diff`) rejected 7-8% at a nominal 5% for cards played a hundred or a
    few hundred times, most groups holding none and a few several (tests/test_playstates.py)."""
    y, x, b, t = (np.asarray(a, dtype=float) for a in (y, x, b, t))
    keep = x > 0
    if not keep.any() or (t[keep] <= 0).any():
        return float("nan")
    n, p = x[keep], b[keep] / t[keep]
    m = int(round(n.sum())) + 1
    z = np.exp(-2j * np.pi * np.arange(m) / m)
    log_phi = np.zeros(m, complex)
    with np.errstate(divide="ignore"):
        for s in range(0, len(n), 256):           # bounded memory: 256 groups x m points at a time
            log_phi += (n[s:s + 256, None] * np.log(1 - p[s:s + 256, None] + p[s:s + 256, None] * z)).sum(axis=0)
    pmf = np.clip(np.fft.ifft(np.exp(log_phi)).real, 0.0, None)
    k = int(round(y.sum()))
    below, above = pmf[:k].sum() + 0.5 * pmf[k], pmf[k + 1:].sum() + 0.5 * pmf[k]
    return float(min(1.0, 2 * min(below, above)))


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


def clustered_rate_p(k_per_cluster, m: int, p0: float) -> tuple[float, float]:
    """Two-sided test of a rate against ``p0`` from equal clusters of ``m`` trials: the exact
    binomial test on the trials when the design effect is 1 or below (conservative there), else
    the score test on the effective sample (trials / design effect), the test the
    :func:`clustered_wilson` interval inverts. (p, design effect)."""
    k = np.asarray(k_per_cluster, dtype=float)
    deff = cluster_design_effect(k, m)
    trials = len(k) * m
    if not (np.isfinite(deff) and deff > 1):
        return binom_p(int(round(k.sum())), trials, p0), deff
    zval = (k.sum() / trials - p0) / np.sqrt(p0 * (1 - p0) * deff / trials)
    return float(2 * stats.norm.sf(abs(zval))), deff


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
def _bt_corrected(w):
    """Each matrix of ``w`` (B, S, S) with 0.5 added to both directions of every pair that met
    when one of its strategies never won or never lost (see :func:`bradley_terry`); the games
    and wins of each strategy."""
    games = w + w.transpose(0, 2, 1)
    lopsided = (w.sum(axis=2) == 0).any(axis=1) | (w.sum(axis=1) == 0).any(axis=1)
    w = w + 0.5 * (games > 0) * lopsided[:, None, None]
    return w + w.transpose(0, 2, 1), w.sum(axis=2)


def _bt_newton(games, won, tol: float, max_iter: int = 100):
    """Newton's method on the Bradley-Terry log-likelihood (log-strengths, the first held at 0)
    for every matrix of ``games`` (B, S, S) at once (numpy's batched solve), steps capped at 2
    so a lopsided comparison cannot overshoot. Each matrix takes the steps it would take alone
    and stops where it would. Returns (theta, converged): not converged where the comparisons do
    not connect every strategy (a singular step) or the steps do not settle (then the MM
    algorithm decides)."""
    n, s = won.shape
    theta = np.zeros((n, s))
    converged = np.zeros(n, dtype=bool)
    active = np.ones(n, dtype=bool)
    diagonal = np.arange(s)
    for _ in range(max_iter):
        idx = np.flatnonzero(active)
        if len(idx) == 0:
            break
        th, g = theta[idx], games[idx]
        p = 1.0 / (1.0 + np.exp(th[:, None, :] - th[:, :, None]))
        grad = won[idx] - (g * p).sum(axis=2)
        v = g * p * (1 - p)
        info = -v
        info[:, diagonal, diagonal] += v.sum(axis=2)
        a, rhs = info[:, 1:, 1:], grad[:, 1:]
        try:
            step = np.linalg.solve(a, rhs[..., None])[..., 0]
        except np.linalg.LinAlgError:               # a singular matrix: solved one by one, so
            step = np.full(rhs.shape, np.nan)       # only it is left to MM
            for j in range(len(idx)):
                try:
                    step[j] = np.linalg.solve(a[j], rhs[j])
                except np.linalg.LinAlgError:
                    pass
        finite = np.isfinite(step).all(axis=1)
        active[idx[~finite]] = False
        idx, step = idx[finite], step[finite]
        big = np.abs(step).max(axis=1)
        step *= np.where(big > 2.0, 2.0 / np.where(big > 0, big, 1.0), 1.0)[:, None]
        theta[idx, 1:] += step
        done = big < tol
        converged[idx[done]] = True
        active[idx[done]] = False
    return theta, converged


def bradley_terry_mm(games, won, tol: float, max_iter: int) -> np.ndarray:
    """Hunter's MM algorithm for one matrix: slow, but it needs no connected comparisons. Public:
    a test counts the matrices that fall back to it (only the ones Newton cannot decide)."""
    p = np.ones(len(won))
    for _ in range(max_iter):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = won / denom
        new /= np.exp(np.log(new).mean())
        if np.max(np.abs(np.log(new) - np.log(p))) < tol:
            p = new
            break
        p = new
    return np.log(p)


def bradley_terry(wins, tol: float = 1e-10, max_iter: int = 10_000) -> np.ndarray:
    """Bradley-Terry log-strengths (mean 0) from ``wins[i, j]`` = times i beat j: the
    maximum-likelihood fit, by Newton's method (a few steps, however lopsided the strengths), or
    Hunter's MM algorithm when Newton cannot decide. A strategy that never won or never lost a
    comparison has no finite strength: 0.5 is then added to both directions of every pair that
    met (a standard small-sample correction), which moves large samples negligibly."""
    w = np.asarray(wins, dtype=float)
    return bradley_terry_many(w[None], tol, max_iter)[0]


def bradley_terry_many(wins, tol: float = 1e-10, max_iter: int = 10_000) -> np.ndarray:
    """:func:`bradley_terry` of every matrix ``wins[b]`` (B, S, S) at once, for bootstraps:
    Newton's steps for all the replicates in one Python loop, instead of a fit per replicate,
    which made the bootstrap the slowest part of a report's ratings. Returns (B, S)."""
    w = np.asarray(wins, dtype=float)
    n, s = w.shape[0], w.shape[1]
    if s < 2 or n == 0:
        return np.zeros((n, s))
    games, won = _bt_corrected(w)
    theta, converged = _bt_newton(games, won, tol)
    for b in np.flatnonzero(~converged):
        theta[b] = bradley_terry_mm(games[b], won[b], tol, max_iter)
    return theta - theta.mean(axis=1, keepdims=True)


def bt_bootstrap(group_wins, n_boot: int = 1000, seed: int = 0) -> np.ndarray:
    """Bootstrap log-strengths: ``group_wins[g, i, j]`` holds the comparisons of group g (a
    set of whole games; games of one seed stay together); every replicate redraws the groups
    with replacement. Returns (n_boot, S)."""
    gw = np.asarray(group_wins, dtype=float)
    g = gw.shape[0]
    rng = np.random.default_rng(seed)
    flat = gw.reshape(g, -1)
    weights = np.empty((n_boot, g))
    for b in range(n_boot):
        weights[b] = np.bincount(rng.integers(0, g, g), minlength=g)
    return bradley_terry_many((weights @ flat).reshape((n_boot,) + gw.shape[1:]), tol=1e-7, max_iter=2000)


# ---------------------------------------------------------------------------------------------
# honest ranges for ratings from perfect or near-perfect records
# ---------------------------------------------------------------------------------------------
FEW_SEEDS = 10      # a player that lost (or won) in this many seeds or fewer has a near-perfect record


def seed_records(per_seed_wins) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """From per-seed win matrices (a list of (seeds, S, S) arrays, ``w[seed, i, j]`` = games of
    the seed in which i beat j): ``lost[i, j]``, the seeds in which j beat i at least once;
    ``met[i, j]``, the seeds in which i and j played; ``games[i, j]``, the most games they
    played in one seed. Seeds are the independent units (their games share the cards)."""
    s = per_seed_wins[0].shape[1]
    lost, met, games = np.zeros((s, s)), np.zeros((s, s)), np.zeros((s, s))
    for w in per_seed_wins:
        both = w + w.transpose(0, 2, 1)
        lost += (w > 0).sum(axis=0).T
        met += (both > 0).sum(axis=0)
        games = np.maximum(games, both.max(axis=0, initial=0))
    return lost, met, games


def _rate_bounds(events: float, trials: float, alpha: float) -> tuple[float, float]:
    """Clopper-Pearson one-sided 1 - alpha lower and upper bounds of a rate (events of trials).
    Exact whatever the chances of the trials, as long as they are independent: too few events
    are no likelier than with every trial at their mean chance (Hoeffding 1956)."""
    lo = 0.0 if events <= 0 else float(stats.beta.ppf(alpha, events, trials - events + 1))
    hi = 1.0 if events >= trials else float(stats.beta.ppf(1 - alpha, events + 1, trials - events))
    return lo, hi


def _least_total_logit(seeds: np.ndarray, budget: float) -> float:
    """The smallest sum of log-odds d_j over opponents that keeps the expected number of seeds
    lost, sum_j seeds_j / (1 + e^d_j), within ``budget`` (which must be below half the fewest
    seeds, so every d_j is positive and the problem convex). Lagrange: seeds_j q_j (1 - q_j) is
    the same for every j, q_j = 1 / (1 + e^d_j); the multiplier is found by bisection."""
    seeds = np.asarray(seeds, dtype=float)

    def q(log_lam):
        x = 4.0 / (np.exp(log_lam) * seeds)
        return x / (2.0 * (1.0 + np.sqrt(np.maximum(1.0 - x, 0.0))))

    lo = np.log(4.0 / seeds.min())
    hi = lo + 80.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if seeds @ q(mid) > budget else (lo, mid)
    qq = q(hi)
    return float(np.log((1 - qq) / qq).sum())


def rating_ranges(lo, hi, lost, met, alpha: float = ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap ranges of Bradley-Terry ratings (log-strength scale, mean 0 over the players;
    ``lo``, ``hi``) made honest where a record is near-perfect (:data:`FEW_SEEDS`; ``lost``,
    ``met``: :func:`seed_records`). A bootstrap over seeds of a record a player never lost
    resamples the same record, and the small-sample correction decides its rating: the range
    was false precision (+738.792 (738.787 to 738.796) from 304 duels won of 304). Then:

    - its rating has no upper limit, and, as the mean of all the ratings then has none either,
      every other rating no lower limit (and the other way round for a player that nearly
      never won);
    - its lower limit is exact: with L of its S seeds holding a loss, the mean chance q of
      losing a seed is below the Clopper-Pearson bound u (a seed with two games is lost at
      least as often as one game), and the rating, the mean over the opponents j of its
      log-odds d_j against them over the number of players, is at least the least such mean
      with sum_j S_j / (1 + e^d_j) <= S u (it must have met every opponent, and S u be below
      half the seeds against any of them, or no exact limit is taken and the bootstrap's
      stands). The smaller of that and the bootstrap's limit is kept."""
    lo, hi = np.array(lo, dtype=float), np.array(hi, dtype=float)
    k = len(lo)
    losses, wins = lost.sum(axis=1), lost.sum(axis=0)
    near_unbeaten, near_winless = losses <= FEW_SEEDS, wins <= FEW_SEEDS
    for i in range(k):
        others = np.arange(k) != i
        if near_unbeaten[i] or near_winless[others].any():
            hi[i] = np.inf
        if near_winless[i] or near_unbeaten[others].any():
            lo[i] = -np.inf
        seeds = met[i, others]
        if not (seeds > 0).all():
            continue
        for few, side in ((losses[i], 1.0), (wins[i], -1.0)):
            if few > FEW_SEEDS:
                continue
            budget = seeds.sum() * _rate_bounds(few, seeds.sum(), alpha / 2)[1]
            if budget < seeds.min() / 2:
                bound = side * _least_total_logit(seeds, budget) / k
                lo[i], hi[i] = (min(lo[i], bound), hi[i]) if side > 0 else (lo[i], max(hi[i], bound))
    return lo, hi


def step_range(lo: float, hi: float, upper: int, lower: int, lost, met, games, alpha: float = ALPHA):
    """A bootstrap range of the log-strength gain from player ``lower`` to ``upper`` made
    honest where their own duel is near-perfect (one won in :data:`FEW_SEEDS` seeds or fewer):
    then the range is the exact one from that duel alone. The weaker won at least once in W of
    its S seeds; the chance q of it winning a game lies between a seed's chance of holding a
    win over its m games and that over m (Clopper-Pearson bounds of W of S), and the gain is
    log((1 - q) / q); no upper limit when W is 0."""
    s = met[lower, upper]
    for weak, strong, sign in ((lower, upper, 1.0), (upper, lower, -1.0)):
        upsets = lost[strong, weak]            # seeds in which the weaker won a game
        if s == 0 or upsets > FEW_SEEDS:
            continue
        least, most = _rate_bounds(upsets, s, alpha / 2)
        q_hi, q_lo = most, least / max(games[lower, upper], 1.0)
        gain_lo = np.log((1 - q_hi) / q_hi) if q_hi < 1 else -np.inf
        gain_hi = np.log((1 - q_lo) / q_lo) if q_lo > 0 else np.inf
        return (gain_lo, gain_hi) if sign > 0 else (-gain_hi, -gain_lo)
    return lo, hi


def expected_score(elo_a, elo_b):
    """Bradley-Terry chance that a finishes ahead of b, from Elo-scale ratings."""
    return 1.0 / (1.0 + 10.0 ** ((np.asarray(elo_b) - np.asarray(elo_a)) / 400.0))


# ---------------------------------------------------------------------------------------------
# adjusted effects: logistic regression on cell counts
# ---------------------------------------------------------------------------------------------
def _design(cells, exposure: str, covariates: list[str]) -> tuple[np.ndarray, list[str]]:
    """Intercept, the exposure, and one 0/1 column per level of each covariate but its first
    (levels in sorted order)."""
    cols, names = [np.ones(len(cells)), cells[exposure].to_numpy(float)], ["const", exposure]
    for c in covariates:
        values = cells[c].astype(str).to_numpy()
        for level in np.unique(values)[1:]:
            cols.append((values == level).astype(float))
            names.append(f"{c}_{level}")
    return np.column_stack(cols), names


def _logit_fit(X, wins, n, max_iter: int = 50):
    """Binomial GLM with logit link fitted by Newton-Raphson (= IRLS) on cell counts; (beta,
    inverse information, fitted rates) or None when the fit does not converge (separation) or
    the design is singular."""
    beta = np.zeros(X.shape[1])
    for _ in range(max_iter):
        p = special.expit(X @ beta)
        info = X.T @ (X * (n * p * (1 - p))[:, None])
        try:
            step = np.linalg.solve(info, X.T @ (wins - n * p))
        except np.linalg.LinAlgError:
            return None
        beta = beta + step
        if np.max(np.abs(step)) < 1e-10:
            p = special.expit(X @ beta)
            info = X.T @ (X * (n * p * (1 - p))[:, None])
            if np.linalg.cond(info) > 1e12:
                return None
            return beta, np.linalg.inv(info), p
    return None


def cluster_robust_cov(X, fitted, bread, wins, n) -> np.ndarray:
    """Cluster-robust (sandwich, CRV1) covariance of a binomial GLM fitted on cells (design
    ``X``, fitted rates ``fitted``, inverse information ``bread``): ``wins`` and ``n`` hold each
    cluster's wins and trials in each cell (clusters x cells; here the clusters are seeds: the
    seats of a game share one winner and a seed's rotations its stacks). A cluster's score is
    the sum over its cells of x (wins - n p). The small-sample factor G/(G-1) (N-1)/(N-K) is
    statsmodels' and Stata's."""
    wins, n = np.asarray(wins, dtype=float), np.asarray(n, dtype=float)
    scores = (wins - n * fitted[None, :]) @ X
    n_groups = int(np.count_nonzero(n.sum(axis=1)))
    rows, k = n.sum(), X.shape[1]
    factor = n_groups / (n_groups - 1) * (rows - 1) / (rows - k)
    return factor * bread @ (scores.T @ scores) @ bread


def logistic_effect(cells, exposure: str, covariates: list[str], clusters=None) -> dict:
    """Win rate when exposed (the 0/1 column ``exposure``), adjusted for the categorical
    ``covariates``, from a binomial GLM (logit link) fitted to cell counts ``cells`` (columns
    ``wins``, ``n``, the exposure, the covariates): the odds ratio with its 95% interval and
    p-value, and the average difference in win rate between exposure 1 and 0 over every row (the
    average marginal effect) with a delta-method interval.

    ``clusters``: ``(wins, n)``, each cluster's wins and seat-games in each of ``cells``' rows
    (arrays clusters x cells). With them the covariance is cluster-robust with the clusters as
    the independent units (the seeds: one winner per game, and a seed's rotations share its
    stacks); without them it is the model's, which treats every seat-game as independent."""
    nan = {"odds_ratio": np.nan, "or_lo": np.nan, "or_hi": np.nan, "p_adj": np.nan,
           "adj_diff": np.nan, "adj_lo": np.nan, "adj_hi": np.nan}
    keep = np.flatnonzero(cells["n"].to_numpy() > 0)
    used = cells.iloc[keep]
    if used[exposure].nunique() < 2:
        return nan
    X, _ = _design(used, exposure, covariates)
    wins, n = used["wins"].to_numpy(float), used["n"].to_numpy(float)
    fit = _logit_fit(X, wins, n)
    if fit is None:
        return nan                 # perfect separation, singular design: no adjusted estimate
    beta, cov, fitted = fit
    if clusters is not None:
        cluster_wins, cluster_n = clusters
        cov = cluster_robust_cov(X, fitted, cov, np.asarray(cluster_wins)[:, keep], np.asarray(cluster_n)[:, keep])
    b, se = float(beta[1]), float(np.sqrt(cov[1, 1]))
    if not np.isfinite(se) or se <= 0 or abs(b) > 15 or se > 50:
        # (quasi-)separation in a small sample, or a cluster-robust variance of 0 (a handful of
        # seeds that all agree): no finite estimate, and no test
        return nan
    # average marginal effect over all rows (cells weighted by their size)
    w = n / n.sum()
    X1, X0 = X.copy(), X.copy()
    X1[:, 1], X0[:, 1] = 1.0, 0.0
    p1, p0 = special.expit(X1 @ beta), special.expit(X0 @ beta)
    ame = float(w @ (p1 - p0))
    grad = (w * p1 * (1 - p1)) @ X1 - (w * p0 * (1 - p0)) @ X0
    ame_se = float(np.sqrt(grad @ cov @ grad))
    return {"odds_ratio": np.exp(b), "or_lo": np.exp(b - Z95 * se), "or_hi": np.exp(b + Z95 * se),
            "p_adj": float(2 * stats.norm.sf(abs(b / se))),
            "adj_diff": ame, "adj_lo": ame - Z95 * ame_se, "adj_hi": ame + Z95 * ame_se}


# ---------------------------------------------------------------------------------------------
# words
# ---------------------------------------------------------------------------------------------
def p_text(p: float) -> str:
    if not np.isfinite(p):
        return "p = n/a"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def p_exact(p: float) -> str:
    """A p-value to 3 significant figures for the tuning commands, which report tiny ones:
    below the smallest double it is ``< 1e-300`` (it underflowed), never ``0``."""
    if not np.isfinite(p):
        return "n/a"
    return "< 1e-300" if p < 1e-300 else f"{p:.3g}"


def verdict(p: float, alpha: float = ALPHA, size: float | None = None,
            min_effect: float = MIN_EFFECT) -> str:
    """'significant' or 'not significant'; 'significant but negligible' when ``size`` (a
    difference in win rate) is below the smallest difference that matters: at a million games
    everything is significant, not everything matters."""
    if not (np.isfinite(p) and p < alpha):
        return "not significant"
    if size is not None and negligible(size, min_effect):
        return "significant but negligible"
    return "significant"


def negligible(size, min_effect: float = MIN_EFFECT):
    """|size| below the smallest difference that matters (arrays broadcast)."""
    return np.abs(np.asarray(size, dtype=float)) < min_effect
