"""Findings against skill: the headline figures of runs that form a skill ladder, a verdict per
finding, and the rungs' strength on one scale.

A **ladder** is a list of runs of the same player count, rules, run seed and seeds (common
random numbers: game ``i`` of every rung is dealt the same stacks), each with its seats filled by
one rung's players, weakest first. For each headline figure (every seat's win rate, the seat
unfairness, the strongest cards and spaces, the majorities' share of the score, game length, the
end triggers' shares) :func:`figure_table` gives its value at each rung with its 95% interval,
and :func:`verdicts` says how it moves with skill (:func:`judge` does it for many ladders at
once, which is how the tests calibrate it):

- **rises / falls with skill**: the weighted least-squares slope of the figure on the rung's
  place in the ladder (0, 1, 2, ...) is significant, and stays significant (at the plain 5%)
  with any one rung left out. For a figure with a "no effect" value (a fair share for a seat's
  win rate, fair seats for the seat unfairness, no effect for a card) the words say which way:
  "away from" or "toward" it, judged at the rung where the figure is furthest from it.
- **changes with skill, one rung carries it**: the trend is significant, but not without one
  of the rungs (named in the findings): one rung that differs is not a trend with skill.
- **reverses**: the effect is significant in one direction at one rung and in the other at
  another.
- **varies with skill, no trend**: the rungs differ (Cochran's heterogeneity test) without a
  trend (a figure that rises and falls again).
- **holds at every rung**: the pooled figure over the rungs differs from "no effect", and the
  rungs are consistent with one value: neither the heterogeneity test nor the trend is
  significant even at the plain 5% (uncorrected, so stricter than the verdicts above), and every
  rung's estimate is on the same side. The pooled figure and its interval are given. A rung where
  the effect is absent can hide in the rungs' noise: the tests measure how often (module tests).
- **found, not shown at every rung**: the pooled figure, or some rung's, differs from "no
  effect", but the rungs are not shown consistent with one value.
- **no effect at any rung** (a figure with a "no effect" value) or **no difference found between
  rungs** (game length, shares): none of the above; this says no test found an effect or a
  difference, not that there is none.

**Where it settles**, for every figure measured in win rate (seats, seat unfairness, why parts,
cards, spaces), against the designer's smallest effect that matters (``--min-effect``, default
:data:`analysis.stats.MIN_EFFECT`): each rung below the top is tested for agreement with the top
rung within that effect (two one-sided tests), from the rung below the top downward, stopping
at the first that is not shown to agree. "stops moving above rung k": rungs k up to the top are
all shown within the smallest effect of the top rung (every rung: "steady at every rung").
Otherwise "still moving at the top" when the top step is itself a significant change (a rung
above the top would tell where it settles), else "not shown to settle", with the seeds a rung
that would show it. Agreement is hard to show: the top two rungs' difference must be known to a
fraction of the smallest effect (at 1 pp, a 4-player seat needs 70,000 to 100,000 seeds a rung;
see the tests). The equivalence tests are a family of their own, corrected by Holm's procedure over
the figures with each figure's rungs in a fixed sequence (:func:`analysis.stats.chained_holm`),
so a ladder claims any figure settled where it has not in at most 5% of ladders.

**The rungs share their deals.** A deal that favours a seat can favour it at every rung, so the
rungs' estimates are correlated. For the seats' win rates the correlation is measured from the
seeds (:func:`seat_correlations`) and every test uses it (generalised least squares: a shared
error does not average out of the pooled value, and cancels from a difference). For the other
figures it is not measured: the pooled value is given the error it has at any correlation (as if
perfectly correlated: conservative), and the contrasts (trend, heterogeneity, the steps) treat
the rungs as independent, which a positive correlation shared by the rungs makes conservative;
the seat unfairness, whose estimate is biased up by noise, is pooled by twice the mean of the
rungs' own p-values, a test at any dependence.

Every test behind a verdict is Holm-corrected in one family: each figure's trend, its
heterogeneity, its pooled test, its top step, and its test at each rung. So a ladder in which
skill changes nothing and nothing has an effect states a finding (any verdict but "no effect at
any rung" and "no difference found between rungs", or "still moving at the top") in at most 5%
of ladders, however many figures and rungs it has (tests/test_skill.py measures it, with the
rungs independent and with a deal shared by the rungs).

A figure's test at a rung starts from the p-value its rung's report gives (the seat tests
Holm-corrected over the seats, the seat unfairness's test of "all seats fair", the card and
space effects Holm-corrected over all cards, spaces, so that picking the strongest over the
rungs (below) does not pick noise), which the ladder's family then corrects again.

The strongest cards and spaces are chosen by their mean absolute adjusted effect over all rungs,
so no rung's noise decides alone which findings are followed (the choice inflates every rung's
effect a little, not one rung's).

**Strength on one scale** (:func:`rung_ratings`): duels between the rungs at the ladder's player
count (:func:`evora_sim.ladder.duel_fields`: the seats split between the two rungs, each pair
seat-rotated over the same seeds; a game is won by the rung whose player wins it; a rung holding
a mixed field plays each of its members in turn) fitted by Bradley-Terry on the Elo scale, with
a bootstrap over seeds, stratified by duel
(seeds resampled within each duel run, as duels are independent experiments). A ladder's rungs
are meant to be far apart, so a weak rung may never beat a strong one, and then no finite rating
fits: half a win is added to both directions of every pair of rungs that met (the usual
small-sample correction), which pulls the ratings together a little and so only makes a step
harder to call significant. A range resting on that correction would be false precision (a
bootstrap over a perfect record resamples the same record): where a rung lost, or won, in few
seeds its range is open on that side, or exact from its record (:func:`analysis.stats.rating_ranges`,
:func:`analysis.stats.step_range`). A step up the ladder is significant when the bootstrap p-value of
"the upper rung is no stronger", Holm-corrected over the steps, is below ``ALPHA``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

from evora_sim.ladderplan import load_plan, own_folder, read_plan, rung_played
from evora_sim.manifest import RunError

from . import tables as T
from .explain_stats import read_summary, seat_words
from .scan import scan
from .stats import (ALPHA, ELO, MIN_EFFECT, bradley_terry, bradley_terry_many, chained_holm, holm, holm_rows,
                    rating_ranges, seed_records, step_range, tost_p)
from .tables import open_runs
from .verdicts import HOLDS, MOVING, ONE_RUNG, STEADY, TOWARD, UNEVEN, UNKNOWN, VARIES

TOP_CARDS = 3                      # cards, and spaces, followed up the ladder
WIN_RATE_KINDS = ("rate", "unfairness", "rate change")     # figures in win rate: the smallest effect applies


class LadderError(RunError):
    """Runs that cannot be read as a ladder: the message names the problem in one line."""


@dataclass
class DuelRun:
    """One duel between two rungs: its runs (one, or at 3 players the two runs of the same seeds
    that together give each side half the seats) and which strategy name (as the runs record
    it) stands for which rung."""

    runs: list                     # evora_sim.runner.RunResult, of the same seeds
    rung_of: dict                  # strategy name -> rung index


@dataclass
class Ladder:
    labels: list                   # each rung's players, as the user gave them
    runs: list                     # RunResult per rung, weakest first
    duels: list = field(default_factory=list)   # DuelRun
    explained: list = field(default_factory=list)   # per rung: its evora explain summary, or None

    @property
    def fixes(self) -> list:
        """Per rung: the fixes its evora explain ranked, or None."""
        return [s["fixes"] if s is not None else None for s in self.explained]

    @property
    def players(self) -> int:
        return int(self.runs[0].manifest["config"]["players"])


def rung_label(manifest: dict) -> str:
    """A run's players in one phrase: its strategy when every seat holds the same, else the field."""
    names = manifest["config"]["strategies"]
    return names[0] if len(set(names)) == 1 else ",".join(names)


def check_ladder(runs, labels=None) -> Ladder:
    """The runs as a ladder, weakest first, or :class:`LadderError` naming what breaks common
    random numbers: a different player count, run seed, number of seeds or rules."""
    runs = list(runs)
    if len(runs) < 2:
        raise LadderError(f"a skill ladder needs at least two rungs (runs), got {len(runs)}")
    first = runs[0].manifest["config"]
    for r in runs[1:]:
        c = r.manifest["config"]
        for key, what in (("players", "player count"), ("seed", "run seed"), ("games", "number of seeds"),
                          ("rules_hash", "rules")):
            if c[key] != first[key]:
                shown = (f"{first[key]} and {c[key]}" if key != "rules_hash"
                         else f"rules hash {first[key][:12]} and {c[key][:12]}")
                raise LadderError(f"{runs[0].out} and {r.out} cannot be rungs of one ladder: their {what} "
                                  f"differ ({shown}); a ladder plays the same seeds under the same rules")
    return Ladder(list(labels) if labels else [rung_label(r.manifest) for r in runs], runs)


# ---------------------------------------------------------------------------------------------
# the figures at each rung
# ---------------------------------------------------------------------------------------------
def _row(figure, label, kind, null, value, lo, hi, n, significant=None, p=np.nan) -> dict:
    """One figure at one rung; ``significant`` and ``p``: its test as the rung's report gives it."""
    return {"figure": figure, "label": label, "kind": kind, "null": null, "value": float(value),
            "lo": float(lo), "hi": float(hi), "n": int(n),
            "significant": (bool(significant) if significant is not None else None), "p": float(p)}


def rung_figures(data, n: int, min_effect: float) -> tuple[list[dict], pd.DataFrame, pd.DataFrame]:
    """The headline figures of one rung's scan (``analysis.scan``): rows for
    :func:`figure_table`, and the card and space tables (their strongest are chosen over all
    rungs later)."""
    adv, tests = T.seat_advantage(data, min_effect)
    rows = []
    for _, r in adv[adv["n_players"] == n].iterrows():
        seat = int(r["seat"])
        rows.append(_row(f"seat {seat}", f"Seat {seat}{' (first)' if seat == 0 else ''} win rate", "rate",
                         r["fair_share"], r["win_rate"], r["ci_lo"], r["ci_hi"], r["games"], r["significant"],
                         r["p_holm"]))
    t = tests[tests["n_players"] == n].iloc[0]
    rows.append(_row("unfairness", "Seat unfairness", "unfairness", 0.0, t["unfairness"], t["unfairness_lo"],
                     t["unfairness_hi"], t["seeds"], t["significant"], t["p"]))
    share = T.majority_share(data)
    s = share[(share["n_players"] == n) & (share["group"] == "all seats")].iloc[0]
    rows.append(_row("majority share", "Majorities' share of the score", "share", np.nan, s["mean_share"],
                     s["ci_lo"], s["ci_hi"], s["seat_games"]))
    g = T.game_shape(data)
    g = g[g["n_players"] == n].iloc[0]
    rows.append(_row("rounds", "Game length (rounds)", "mean", np.nan, g["rounds_mean"], g["rounds_lo"],
                     g["rounds_hi"], g["games"]))
    for _, e in T.end_triggers(data).query("n_players == @n").iterrows():
        rows.append(_row(f"end {e['end_trigger']}", f"Games ended by {e['end_trigger'].replace('_', ' ')}", "share",
                         np.nan, e["share"], e["ci_lo"], e["ci_hi"], e["games"]))
    rows += why_rows(T.why(data).get(n), n)
    cards = T.card_value(data, min_effect).query("n_players == @n")
    spaces = T.space_value(data, min_effect).query("n_players == @n")
    return rows, cards, spaces


def why_rows(why, n: int) -> list[dict]:
    """Where each seat's deviation comes from, at one rung (:mod:`analysis.explain_stats`): the part won
    in the final round after the end was triggered and the part won by the tie-break, so the
    verdicts say whether a mechanism rises with skill (the last turn played better by better
    players). None (a rung played before these facts were recorded): no rows."""
    if why is None:
        return []
    table, _ = why
    rows = []
    for cause, what in (("final_round", "won in the final round"), ("tie_break", "won by the tie-break")):
        for r in table[table["cause"] == cause].itertuples():
            rows.append(_row(f"why {cause} seat {r.seat}", f"{seat_words(r.seat, n).capitalize()}: part of its "
                             f"deviation {what}", "rate change", 0.0, r.part, r.lo, r.hi, r.seeds,
                             r.lo > 0 or r.hi < 0, r.p))
    return rows


def _strongest(tables: list, key: str, what: str) -> list[dict]:
    """Rows for the ``TOP_CARDS`` cards (spaces) of largest mean |adjusted effect| over the rungs."""
    both = pd.concat([t.assign(rung=i) for i, t in enumerate(tables)], ignore_index=True)
    both = both[np.isfinite(both["adj_diff"])]
    if both.empty:
        return []
    size = both.groupby(key)["adj_diff"].apply(lambda x: np.abs(x).mean())
    seen = both.groupby(key)["rung"].nunique()
    keep = size[seen == len(tables)].sort_values(ascending=False).index[:TOP_CARDS]
    rows = []
    for k in keep:
        for _, r in both[both[key] == k].iterrows():
            rows.append({**_row(f"{what} {k}", f"{r['name']}: win rate when {'played' if what == 'card' else 'used'}"
                                " (adjusted difference, an association)", "rate change", 0.0, r["adj_diff"],
                                r["adj_lo"], r["adj_hi"], r["seat_games_used"], r["significant"], r["p_adj_holm"]),
                         "rung": int(r["rung"])})
    return rows


def figure_table(ladder: Ladder, min_effect: float, backend: str = "local",
                 scheduler: str | None = None) -> pd.DataFrame:
    """Every headline figure at every rung: one row per (figure, rung) with value, 95% interval,
    sample size, and the rung's own significance where the figure has a "no effect" value."""
    n = ladder.players
    rows, cards, spaces = [], [], []
    for i, run in enumerate(ladder.runs):
        data = scan([run], report=True, backend=backend, scheduler=scheduler)
        got, c, s = rung_figures(data, n, min_effect)
        rows += [{**r, "rung": i} for r in got]
        cards.append(c)
        spaces.append(s)
    rows += _strongest(cards, "card", "card") + _strongest(spaces, "space", "space")
    out = pd.DataFrame(rows)
    out["rung_label"] = [ladder.labels[i] for i in out["rung"]]
    order = {f: k for k, f in enumerate(dict.fromkeys(out["figure"]))}
    out = out.sort_values(["figure", "rung"], key=lambda c: c.map(order) if c.name == "figure" else c)
    return out.reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# verdicts
# ---------------------------------------------------------------------------------------------
def half_width_se(lo, hi) -> np.ndarray:
    """A standard error from a 95% interval (its half-width over 1.96): exact for the t and
    normal intervals, close for Wilson's away from 0 and 1."""
    return (np.asarray(hi, dtype=float) - np.asarray(lo, dtype=float)) / (2 * sps.norm.ppf(0.975))


def _normal_p(z) -> np.ndarray:
    """Two-sided normal p-value of a z statistic."""
    return 2 * sps.norm.sf(np.abs(z))


def _covariance(se, corr, seen):
    """The rungs' covariance (the errors ``se`` and correlation ``corr``; a rung not ``seen`` gets
    variance 1 and no correlation, so it drops out of :func:`_precision`). A rung with no
    variation (error 0) is given the smallest positive error of the others."""
    k = se.shape[-1]
    pos = np.where(seen & (se > 0), se, np.inf).min(axis=-1, keepdims=True)
    s = np.where(seen, np.where(se > 0, se, pos), 1.0)
    s = np.where(np.isfinite(s), s, 1.0)
    both = seen[..., :, None] & seen[..., None, :]
    r = np.where(both, corr, np.eye(k))
    r = np.where(np.eye(k, dtype=bool), 1.0, r)
    return r * s[..., :, None] * s[..., None, :]


def _precision(cov, seen):
    """Inverse covariance of the seen rungs, zero at the others (their block is apart)."""
    both = seen[..., :, None] & seen[..., None, :]
    return np.linalg.pinv(cov, hermitian=True) * both


def _gls(x, v, prec):
    """Generalised least squares of the rungs' values on the columns of ``x`` (rungs x p), many
    figures at once: (coefficients, their covariance, the residuals' chi-square)."""
    xtp = np.einsum("kp,...kj->...pj", x, prec)
    a = np.linalg.pinv(xtp @ x)
    beta = np.einsum("...pq,...qj,...j->...p", a, xtp, v)
    res = v - beta @ x.T
    return beta, a, np.einsum("...k,...kj,...j->...", res, prec, res)


def _trend(v, se, corr, seen):
    """Slope per rung, its error and the two-sided p of "no slope" (nan below two rungs)."""
    k = v.shape[-1]
    x = np.column_stack([np.ones(k), np.arange(k, dtype=float)])
    prec = _precision(_covariance(se, corr, seen), seen)
    beta, a, _ = _gls(x, np.where(seen, v, 0.0), prec)
    ok = (seen.sum(axis=-1) >= 2) & np.any(seen & (se > 0), axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.sqrt(a[..., 1, 1])
        slope = beta[..., 1]
        p = _normal_p(slope / s)
    nan = np.full(ok.shape, np.nan)
    return np.where(ok, slope, nan), np.where(ok, s, nan), np.where(ok, p, nan)


def _figure_arrays(values, ses, corr=None):
    """One figure's rungs (or many ladders' of it: leading axes) as the core's arrays: values,
    errors, correlation, seen, each (ladders, 1, rungs[, rungs])."""
    v = np.asarray(values, dtype=float)
    k = v.shape[-1]
    v = v.reshape(-1, 1, k)
    se = np.broadcast_to(np.asarray(ses, dtype=float), np.asarray(values).shape).reshape(-1, 1, k)
    r = np.eye(k) if corr is None else np.nan_to_num(np.asarray(corr, dtype=float))
    return v, se, np.broadcast_to(r, (len(v), 1, k, k)), np.isfinite(v) & np.isfinite(se)


def _shaped(a, values):
    """A core result (ladders, 1) back in the shape of ``values`` without its rungs: a float
    for one figure."""
    a = a.reshape(np.shape(values)[:-1])
    return float(a) if a.ndim == 0 else a


def trend(values, ses, corr=None):
    """Weighted least-squares slope of ``values`` on their place (0, 1, ...) with known standard
    errors ``ses`` (and, given, the rungs' correlation ``corr``: generalised least squares):
    (slope per rung, its standard error, two-sided p of "no slope"); leading axes: many at once.
    A rung with no variation (standard error 0) is given the smallest positive error of the
    others."""
    return tuple(_shaped(a, values) for a in _trend(*_figure_arrays(values, ses, corr)))


def _heterogeneity(v, se, corr, seen):
    k = v.shape[-1]
    prec = _precision(_covariance(se, corr, seen), seen)
    q = _gls(np.ones((k, 1)), np.where(seen, v, 0.0), prec)[2]
    n = seen.sum(axis=-1)
    ok = (n >= 2) & np.any(seen & (se > 0), axis=-1)
    return np.where(ok, sps.chi2.sf(q, np.maximum(n - 1, 1)), np.nan)


def heterogeneity(values, ses, corr=None):
    """p-value of "the figure is the same at every rung" (Cochran's Q: weighted squared deviations
    from the weighted mean, chi-square on rungs - 1 degrees of freedom; leading axes: many at
    once). It catches a figure that rises and falls again, which a linear trend misses."""
    return _shaped(_heterogeneity(*_figure_arrays(values, ses, corr)), values)


def _pooled(v, se, corr, seen, measured):
    """The figure's one value over the rungs and its standard error. With the rungs' correlation
    ``measured``: the generalised least-squares mean. Without it, the inverse-variance weighted
    mean with the error it has whatever the correlation (the weighted sum of the errors, as if the
    rungs were perfectly correlated): the rungs share their deals, so their errors cannot be
    assumed to average out."""
    k = v.shape[-1]
    cov = _covariance(se, corr, seen)
    beta, a, _ = _gls(np.ones((k, 1)), np.where(seen, v, 0.0), _precision(cov, seen))
    s = np.sqrt(np.diagonal(cov, axis1=-2, axis2=-1))
    w = np.where(seen, s ** -2.0, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        w = w / w.sum(axis=-1, keepdims=True)
    bound_m, bound_se = (w * np.where(seen, v, 0.0)).sum(axis=-1), (w * s).sum(axis=-1)
    m = np.where(measured, beta[..., 0], bound_m)
    err = np.where(measured, np.sqrt(a[..., 0, 0]), bound_se)
    ok = np.any(seen & (se > 0), axis=-1)            # a figure never measured with any spread: no test
    return np.where(ok, m, np.nan), np.where(ok, err, np.nan)


def judge(value, se, p, null, kind, corr=None, min_effect: float = MIN_EFFECT) -> dict:
    """The verdicts of many ladders at once: ``value``, ``se`` (standard errors) and ``p`` (each
    rung's own test) of shape (ladders, figures, rungs), ``null`` and ``kind`` per figure,
    ``corr`` (ladders, figures, rungs, rungs) the rungs' correlation where measured (nan where
    not). Returns arrays per (ladder, figure), the verdict and where it settles among them; see
    the module for the method. :func:`verdicts` is this for one ladder's table; the tests run it
    on thousands of simulated ladders."""
    value, se, p = (np.asarray(a, dtype=float) for a in (value, se, p))
    n_lad, n_fig, k = value.shape
    null = np.asarray(null, dtype=float)
    kind = np.asarray(kind, dtype=object)
    if corr is None:
        corr = np.full((n_lad, n_fig, k, k), np.nan)
    corr = np.asarray(corr, dtype=float)
    measured = np.isfinite(corr).all(axis=(-2, -1))
    corr = np.where(np.isfinite(corr), corr, np.eye(k))
    seen = np.isfinite(value) & np.isfinite(se)
    has_null = np.isfinite(null)[None, :]
    out = {}
    out["slope"], out["slope_se"], out["p_trend"] = _trend(value, se, corr, seen)
    out["p_same"] = _heterogeneity(value, se, corr, seen)
    # the trend with each rung left out: one that a single rung carries is not a trend with skill
    worst, carried = np.full((n_lad, n_fig), -np.inf), np.full((n_lad, n_fig), -1)
    for i in range(k):
        s_i, _, p_i = _trend(value, se, corr, seen & (np.arange(k) != i))
        p_i = np.where(np.sign(s_i) == np.sign(out["slope"]), p_i, 1.0)
        better = np.nan_to_num(p_i, nan=-np.inf) > worst
        worst, carried = np.where(better, p_i, worst), np.where(better, i, carried)
    three = seen.sum(axis=-1) >= 3
    out["p_without"] = np.where(three & np.isfinite(worst), worst, np.nan)
    out["carried_by"] = np.where(three, carried, -1)
    # the pooled value against no effect (the seat unfairness: see below)
    m, m_se = _pooled(value, se, corr, seen, measured)
    rate_like = has_null & (kind != "unfairness")[None, :]
    half = sps.norm.ppf(1 - ALPHA / 2) * m_se
    with np.errstate(invalid="ignore", divide="ignore"):
        p_wald = _normal_p((m - null) / m_se)
        # a root mean square is biased up by noise, so pooling rungs would find unfairness in fair
        # seats: twice the mean of the rungs' own p-values is a test at any dependence between the
        # rungs (Rueschendorf 1982), small only when every rung's p-value is small
        has_p = seen & np.isfinite(p)
        p_mean = np.minimum(1.0, 2 * np.where(has_p, p, 0.0).sum(axis=-1) / has_p.sum(axis=-1))
    out["pooled"] = np.where(rate_like, m, np.nan)
    out["pooled_lo"], out["pooled_hi"] = np.where(rate_like, m - half, np.nan), np.where(rate_like, m + half, np.nan)
    out["p_pooled"] = np.where(rate_like, p_wald, np.where(has_null, p_mean, np.nan))
    # the top step, and each rung against the top one within the smallest effect (figures in win rate)
    cov = _covariance(se, corr, seen)
    judged = np.isin(kind, WIN_RATE_KINDS)[None, :] & seen.all(axis=-1) & np.any(se > 0, axis=-1) & (k >= 2)
    top = k - 1
    diff = value - value[..., top:]
    with np.errstate(invalid="ignore"):
        diff_se = np.sqrt(np.maximum(np.diagonal(cov, axis1=-2, axis2=-1) + cov[..., top:, top]
                                     - 2 * cov[..., :, top], 0.0))
    out["step"] = np.where(judged, -diff[..., top - 1], np.nan)
    out["step_se"] = np.where(judged, diff_se[..., top - 1], np.nan)
    with np.errstate(invalid="ignore", divide="ignore"):
        out["p_step"] = np.where(judged, _normal_p(out["step"] / out["step_se"]), np.nan)
    chain = tost_p(diff[..., :top][..., ::-1], diff_se[..., :top][..., ::-1], min_effect)
    chain = np.where(judged[..., None], chain, np.nan)
    # the ladder's family: every test behind a verdict, Holm-corrected together
    tests = ("p_trend", "p_same", "p_pooled", "p_step")
    at_rungs = np.where(has_null[..., None], p, np.nan)
    family = holm_rows(np.concatenate([*(out[t] for t in tests), at_rungs.reshape(n_lad, -1)], axis=1))
    for i, t in enumerate(tests):
        out[f"{t}_holm"] = family[:, i * n_fig:(i + 1) * n_fig]
    rung_sig = np.nan_to_num(family[:, len(tests) * n_fig:], nan=1.0).reshape(n_lad, n_fig, k) < ALPHA
    out["rung_significant"] = rung_sig

    def below(a, level=ALPHA):
        return np.nan_to_num(a, nan=1.0) < level

    out["trend_significant"] = below(out["p_trend_holm"])
    # "holds" asks more than the corrected tests' silence: no sign at the plain 5% of the rungs
    # differing or trending, and every rung's estimate on the side of no effect the figure is on
    side = np.where(rate_like, np.sign(np.nan_to_num(out["pooled"] - null)), 1.0)
    same_side = np.all(~seen | (np.sign(value - null[None, :, None]) == side[..., None]), axis=-1)
    out["verdict"] = verdict_words(value, se, null, kind, rung_sig, out["slope"], out["trend_significant"],
                                    robust=~(np.nan_to_num(out["p_without"], nan=0.0) >= ALPHA),
                                    varies=below(out["p_same_holm"]), found=below(out["p_pooled_holm"]),
                                    consistent=~below(out["p_same"]) & ~below(out["p_trend"]) & same_side)
    # where each figure in win rate settles: the equivalence tests, a family of their own
    columns = np.flatnonzero(np.isin(kind, WIN_RATE_KINDS))
    agreed = np.zeros((n_lad, n_fig), dtype=int)
    agreed[:, columns] = chained_holm(chain[:, columns], ALPHA)
    unfinished = (agreed[:, columns] < top) | ~judged[:, columns]
    out["settle_level"] = ALPHA / np.maximum(unfinished.sum(axis=1), 1)
    out["agreed"] = agreed
    moving = below(out["p_step_holm"])
    words = np.where(agreed >= top, STEADY,
                     np.where(agreed > 0, np.char.add("stops moving above rung ", (k - agreed).astype(str)),
                              np.where(moving, MOVING, UNKNOWN))).astype(object)
    out["settles"] = np.where(judged, words, "")
    out["more_seeds"] = np.where(judged & (out["settles"] == UNKNOWN),
                                 seeds_to_settle(out["step_se"], min_effect, out["settle_level"][:, None]), np.nan)
    return out


def verdict_words(value, se, null, kind, sig, slope, trend_significant, robust, varies, found, consistent):
    """The verdicts (ladders x figures) from the tests after the ladder's correction (the
    module): ``robust`` (the trend stays significant, at the plain 5%, with any one rung left
    out) and ``consistent`` (neither the rungs' difference nor the trend significant at the
    plain 5%, a stricter condition for "holds" than the ladder's corrected level, and every rung
    on the figure's side of no effect)."""
    e = value - null[None, :, None]
    has_null = np.isfinite(null)[None, :]
    reverses = np.any(sig & (e > 0), axis=-1) & np.any(sig & (e < 0), axis=-1)
    z = np.where(np.isfinite(e), np.abs(e) / np.maximum(np.nan_to_num(se, nan=np.inf), 1e-12), -np.inf)
    strongest = np.take_along_axis(e, np.argmax(z, axis=-1)[..., None], axis=-1)[..., 0]
    direction = np.where(np.nan_to_num(np.sign(strongest)) != 0, np.sign(strongest), np.sign(slope))
    rises = np.where(slope > 0, "rises", "falls").astype(object)
    way = np.where(direction * slope > 0, "away from", "toward").astype(object)
    toward = np.array([TOWARD.get(x, "no effect") for x in kind], dtype=object)[None, :]
    moved = rises + " with skill" + np.where(has_null, ", " + way + " " + toward, "")
    quiet = np.where(has_null, "no effect at any rung", "no difference found between rungs").astype(object)
    level = np.select([has_null & found & consistent, has_null & (found | sig.any(axis=-1))], [HOLDS, UNEVEN],
                      quiet)
    return np.select([has_null & reverses, trend_significant & ~robust, trend_significant, varies],
                     ["reverses", ONE_RUNG, moved, VARIES], level).astype(object)


def seeds_to_settle(step_se, min_effect: float, level, power: float = 0.8):
    """How many times the rungs' seeds the top two rungs would need for their equivalence test
    (at ``level``) to show, with chance ``power``, that they agree within ``min_effect`` if they
    are equal: the standard error of their difference shrinks as one over the root of the
    seeds, and both one-sided tests pass together at that power when the margin is the test's
    critical value plus the power's two-sided quantile of standard errors."""
    step_se = np.asarray(step_se, dtype=float)
    if not min_effect > 0:
        return np.full(step_se.shape, np.inf)
    need = sps.norm.isf(np.asarray(level, dtype=float)) + sps.norm.isf((1 - power) / 2)
    return np.maximum(1.0, (need * step_se / min_effect) ** 2)


def verdicts(table: pd.DataFrame, min_effect: float = MIN_EFFECT, corr: dict | None = None) -> pd.DataFrame:
    """Per figure of one ladder's :func:`figure_table`, in its order: the tests and verdict of
    :func:`judge`, the rungs (0 the weakest) where its own test is significant after the
    ladder's correction, and where it settles within ``min_effect`` (a win rate). ``corr``:
    per figure, the rungs' correlation where it was measured (:func:`seat_correlations`)."""
    figures = list(dict.fromkeys(table["figure"]))
    k = int(table["rung"].max()) + 1
    at = {f: i for i, f in enumerate(figures)}
    grid = {c: np.full((1, len(figures), k), np.nan) for c in ("value", "lo", "hi", "p")}
    f_idx, r_idx = table["figure"].map(at).to_numpy(), table["rung"].to_numpy(dtype=int)
    for c in grid:
        grid[c][0, f_idx, r_idx] = table[c].to_numpy(dtype=float)
    first = table.drop_duplicates("figure").set_index("figure").loc[figures]
    r = np.full((1, len(figures), k, k), np.nan)
    for f, m in (corr or {}).items():
        if f in at:
            r[0, at[f]] = m
    got = judge(grid["value"], half_width_se(grid["lo"], grid["hi"]), grid["p"], first["null"].to_numpy(dtype=float),
                first["kind"].to_numpy(), r, min_effect)
    out = pd.DataFrame({"figure": figures, "label": first["label"].to_numpy(), "kind": first["kind"].to_numpy(),
                        "null": first["null"].to_numpy(dtype=float),
                        "rungs": np.isfinite(grid["value"][0]).sum(axis=1)})
    for key, a in got.items():
        if key in ("rung_significant", "settle_level"):
            continue
        out[key] = a[0]
    out["settle_level"] = float(got["settle_level"][0])
    out["significant_rungs"] = [[int(i) for i in np.flatnonzero(s)] for s in got["rung_significant"][0]]
    return out


def seat_correlations(ladder: Ladder) -> dict:
    """Per seat figure: the correlation between the rungs of the seat's per-seed win rate. The
    rungs play the same deals, so a deal that favours a seat can favour it at every rung: such a
    shared error does not average out over the rungs (the pooled value's error takes it in) and
    cancels from a difference between them (the trend, heterogeneity and equivalence tests)."""
    n = ladder.players
    per_rung = []
    for run in ladder.runs:
        cfg = run.manifest["config"]
        rotations = n if cfg["seat_rotation"] else 1
        seeds = int(cfg["games"])
        s = run.table("seats", ["game_id", "seat", "win"])
        at = (s["game_id"].to_numpy() // rotations) * n + s["seat"].to_numpy(dtype=np.int64)
        won = np.bincount(at, weights=s["win"].to_numpy(dtype=float), minlength=seeds * n)
        per_rung.append(won.reshape(seeds, n) / rotations)
    out = {}
    for seat in range(n):
        with np.errstate(invalid="ignore", divide="ignore"):
            out[f"seat {seat}"] = np.nan_to_num(np.corrcoef(np.stack([w[:, seat] for w in per_rung])))
    return out


# ---------------------------------------------------------------------------------------------
# strength on one scale
# ---------------------------------------------------------------------------------------------
def duel_wins(duel: DuelRun, k: int) -> np.ndarray:
    """Per seed of a duel: wins[seed, a, b] = games of the seed (over its runs and rotations) won
    by a player of rung a, with rung b's players at the table. The seed, not the game, is the
    unit: a seed's games share their deals, and the runs of one duel share their seeds."""
    both = sorted(set(duel.rung_of.values()))
    seeds, winners = [], []
    for run in duel.runs:
        cfg = run.manifest["config"]
        rotations = int(cfg["players"]) if cfg["seat_rotation"] else 1
        s = run.table("seats", ["game_id", "strategy", "win"])
        rung = s["strategy"].map(duel.rung_of)
        if rung.isna().any():
            bad = sorted(set(s["strategy"][rung.isna()]))
            raise LadderError(f"duel run {run.out} holds {', '.join(bad)}, which is no rung of the ladder")
        won = s["win"].to_numpy(dtype=bool)
        game = s["game_id"].to_numpy()
        if len(np.unique(game[won])) != won.sum() or won.sum() != len(np.unique(game)):
            raise LadderError(f"duel run {run.out} does not record one winner a game; play the ladder into a new --out")
        seeds.append(game[won] // rotations)
        winners.append(rung.to_numpy(dtype=int)[won])
    seeds, winners = np.concatenate(seeds), np.concatenate(winners)
    if not len(seeds):
        return np.zeros((0, k, k))
    losers = both[0] + both[1] - winners                   # the other rung at the table
    idx, seed_row = np.unique(seeds, return_inverse=True)
    out = np.zeros((len(idx), k, k))
    np.add.at(out, (seed_row, winners, losers), 1)
    return out


def rung_ratings(ladder: Ladder, n_boot: int = 2000, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Bradley-Terry ratings of the rungs on the Elo scale (mean 0) with 95% bootstrap intervals,
    and each step up the ladder with its difference, interval and Holm-corrected p-value."""
    k = len(ladder.labels)
    return ratings_from_wins([duel_wins(d, k) for d in ladder.duels], ladder.labels, n_boot, seed)


def ratings_from_wins(per_duel: list, labels: list, n_boot: int = 2000,
                      seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`rung_ratings` from each duel's per-seed win matrices (seeds, k, k)."""
    k = len(labels)
    per_duel = [np.asarray(w, dtype=float) for w in per_duel if len(w)]
    if not per_duel:
        return pd.DataFrame(), pd.DataFrame()
    total = sum(w.sum(axis=0) for w in per_duel)
    met = (total + total.T) > 0
    prior = 0.5 * met           # see the module: a rung that never lost to another stays finite
    est = bradley_terry(total + prior) * ELO
    rng = np.random.default_rng(seed)
    tots = np.empty((n_boot, k, k))
    for b in range(n_boot):
        tot = np.zeros((k, k))
        for w in per_duel:
            weights = np.bincount(rng.integers(0, len(w), len(w)), minlength=len(w))
            tot += np.tensordot(weights, w, axes=1)
        tots[b] = tot + prior
    boot = bradley_terry_many(tots, tol=1e-8, max_iter=5000) * ELO
    lost, met, games = seed_records(per_duel)
    lo, hi = (ELO * x for x in rating_ranges(*np.percentile(boot, [2.5, 97.5], axis=0) / ELO, lost, met))
    comps = (total + total.T).sum(axis=1)
    ratings = pd.DataFrame({"rung": np.arange(k), "players": list(labels), "elo": est, "ci_lo": lo,
                            "ci_hi": hi, "games": comps.astype(int), "wins": total.sum(axis=1).astype(int),
                            "opponents": met.sum(axis=1)})
    steps = []
    for i in range(k - 1):
        d = boot[:, i + 1] - boot[:, i]
        p = (1 + np.count_nonzero(d <= 0)) / (n_boot + 1)          # one-sided: upper no stronger
        step_lo, step_hi = step_range(*np.percentile(d, [2.5, 97.5]) / ELO, i + 1, i, lost, met, games)
        steps.append({"step": f"{i} -> {i + 1}", "lower": labels[i], "upper": labels[i + 1],
                      "elo_gain": est[i + 1] - est[i], "ci_lo": float(ELO * step_lo),
                      "ci_hi": float(ELO * step_hi), "p": p})
    steps = pd.DataFrame(steps)
    steps["p_holm"] = holm(steps["p"].to_numpy())
    steps["significant"] = steps["p_holm"] < ALPHA
    return ratings, steps


def open_ladder(folder) -> Ladder:
    """The ladder ``evora skill`` played into ``folder``: its rungs' runs (finished) and duels."""

    doc = read_plan(folder)
    if doc is None:
        raise LadderError(f"{folder} holds no skill ladder (no ladder.json): play one with evora skill")
    plan = load_plan(doc)
    folder = Path(folder)
    runs = open_runs([own_folder(folder, plan.rung_folder(i)) for i in range(len(plan.rungs))])
    ladder = check_ladder(runs, plan.rungs)
    duels = open_runs([own_folder(folder, d.folder) for d in plan.duels])
    _check_played(plan, runs, duels, folder / "ladder.json")
    together = {}                  # a pair of members' runs (two at 3 players) are one duel of shared seeds
    for d, r in zip(plan.duels, duels):
        together.setdefault((d.a, d.b, d.key), DuelRun([], {d.field[0]: d.a, d.field[-1]: d.b})).runs.append(r)
    ladder.duels = list(together.values())
    ladder.explained = [rung_summary(own_folder(folder, plan.why_folder(i))) for i in range(len(plan.rungs))]
    return ladder


def rung_summary(why):
    """What ``evora skill --explain-seeds`` found for a rung (its explain folder's summary), or
    None when the rung was not explained (or its summary is not finished)."""
    if not why.exists():
        return None
    try:
        return read_summary(why)
    except ValueError:
        return None


def _check_played(plan, runs, duels, where) -> None:
    """Each run is what the plan says it is (its size, seed, rules and players), so a label in the
    report is never one an edited ladder.json gave another rung's games."""
    def same(run, want: dict) -> None:
        cfg = run.manifest["config"]
        for key, value in want.items():
            if cfg[key] != value:
                raise LadderError(f"{where} does not describe its run {run.out}: the plan says {key} {value!r}, "
                                  f"the run has {cfg[key]!r}; play the ladder into a new --out")

    for i, (rung, run) in enumerate(zip(plan.rungs, runs)):
        same(run, {"players": plan.players, "seed": plan.seed, "games": plan.seeds, "rules_hash": plan.rules_hash})
        if not rung_played(rung, run.manifest["config"]["strategies"]):
            raise LadderError(f"{where} names rung {i + 1} {rung!r}, but its run {run.out} played "
                              f"{rung_label(run.manifest)!r}; play the ladder into a new --out")
    for d, run in zip(plan.duels, duels):
        same(run, {"players": plan.players, "seed": plan.seed, "games": d.seeds, "rules_hash": plan.rules_hash,
                   "strategies": d.field, "seat_rotation": True})
        for name, rung in zip((d.field[0], d.field[-1]), (d.a, d.b)):
            if name not in runs[rung].manifest["config"]["strategies"]:
                raise LadderError(f"{where}: duel {d.folder} plays {name!r} for rung {rung + 1}, which does not "
                                  "hold it; play the ladder into a new --out")
