"""evora skill: the verdict statistics (their level shown by simulation), the rungs' ratings, the
ladder's plan and resume, its bad input, and the report's Skill section."""
from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from analysis.skill_stats import half_width_se, ratings_from_wins, trend, verdict_words
from analysis.stats import ALPHA, wilson
from scipy import stats
from cli_results import ok, one_error_line
from evora_sim.cli import main
from evora_sim.ladderplan import default_ladder, parse_ladder
from evora_sim.manifest import RunError


# ---------------------------------------------------------------------------------------------
# the trend test keeps its level at "no trend", and finds a real one
# ---------------------------------------------------------------------------------------------
def _rates(p_by_rung, n, rng, sims=1):
    k = rng.binomial(n, p_by_rung, size=(sims, len(p_by_rung)))
    lo, hi = wilson(k, n)
    return k / n, lo, hi


def test_trend_test_rejects_at_most_its_level_when_skill_changes_nothing():
    """Five rungs with the same true win rate (at a fair 25% and at a skewed 10%): the slope's
    two-sided test rejects in about 5% of ladders, not more (binomial margin for 4,000)."""
    rng = np.random.default_rng(12)
    sims = 4000
    for p in (0.25, 0.10):
        v, lo, hi = _rates(np.full(5, p), 400, rng, sims)
        rate = (trend(v, half_width_se(lo, hi))[2] < ALPHA).mean()
        assert rate < ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / sims), (p, rate)
        assert rate > 0.02, (p, rate)            # a test that never rejects would also pass the line above


def test_trend_test_finds_a_rate_that_climbs_with_skill():
    rng = np.random.default_rng(13)
    v, lo, hi = _rates(np.linspace(0.25, 0.31, 5), 2000, rng, 300)
    assert (trend(v, half_width_se(lo, hi))[2] < ALPHA).mean() > 0.9


def test_heterogeneity_test_keeps_its_level_and_sees_a_rise_and_fall():
    from analysis.skill_stats import heterogeneity

    rng = np.random.default_rng(14)
    sims = 3000
    v, lo, hi = _rates(np.full(5, 0.4), 300, rng, sims)
    rejected = (heterogeneity(v, half_width_se(lo, hi)) < ALPHA).mean()
    assert 0.02 < rejected < ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / sims)
    bump = np.array([0.32, 0.44, 0.44, 0.44, 0.32])           # no linear trend, clearly not flat
    v, lo, hi = (x[0] for x in _rates(bump, 2000, rng))
    assert heterogeneity(v, half_width_se(lo, hi)) < 1e-6
    assert trend(v, half_width_se(lo, hi))[2] > 0.01


def test_the_tests_take_the_rungs_correlation_into_account():
    """Rungs whose errors share a part (the same deals): the trend and heterogeneity tests given
    that correlation keep their level where the same tests treating the rungs as independent
    are too timid (a shared error cancels from a contrast)."""
    from analysis.skill_stats import heterogeneity

    rng = np.random.default_rng(15)
    sims, k, rho, se = 4000, 5, 0.6, 0.01
    corr = np.full((k, k), rho) + (1 - rho) * np.eye(k)
    v = rng.multivariate_normal(np.zeros(k), se ** 2 * corr, size=sims)
    for test in (lambda c: trend(v, np.full(k, se), c)[2], lambda c: heterogeneity(v, np.full(k, se), c)):
        assert abs((test(corr) < ALPHA).mean() - ALPHA) < 3 * np.sqrt(ALPHA * (1 - ALPHA) / sims)
        assert (test(None) < ALPHA).mean() < 0.01


def test_trend_slope_is_the_weighted_least_squares_slope():
    slope, se, p = trend([1.0, 2.0, 3.0, 4.0], [0.5, 0.5, 0.5, 0.5])
    assert slope == pytest.approx(1.0)
    assert se == pytest.approx(0.5 / np.sqrt(5.0))         # sum of (x - mean)^2 = 5
    assert p == pytest.approx(2 * 3.87e-6, rel=0.01)          # z = 2 sqrt(5) = 4.47


# ---------------------------------------------------------------------------------------------
# verdicts in words
# ---------------------------------------------------------------------------------------------
def _v(values, significant, null=0.25, slope=0.0, trend_significant=False, half=0.02, varies=False,
       kind="rate", robust=True, found=False, consistent=True):
    values = np.asarray(values, dtype=float)[None, None]
    sig = np.array([[[bool(x) for x in significant]]])
    return verdict_words(values, np.full(values.shape, half / 1.96), np.array([null]), np.array([kind], dtype=object),
                         sig, np.array([[slope]]), np.array([[trend_significant]]), np.array([[robust]]),
                         np.array([[varies]]), np.array([[found]]), np.array([[consistent]]))[0, 0]


def test_each_verdict():
    assert _v([0.30, 0.31, 0.30], [True, True, True], found=True) == "holds at every rung"
    # the issue 49 case: pooled, it holds, though no single rung need be significant
    assert _v([0.28, 0.27, 0.29], [False, False, True], found=True) == "holds at every rung"
    assert _v([0.28, 0.27, 0.29], [False, False, True], found=True, consistent=False) == \
        "found, not shown at every rung"
    assert _v([0.27, 0.30, 0.33], [False, True, True], slope=0.03, trend_significant=True) == \
        "rises with skill, away from the fair share"
    assert _v([0.20, 0.22, 0.24], [True, True, False], slope=0.02, trend_significant=True) == \
        "rises with skill, toward the fair share"
    # the issue 49 wording fault: a seat's rate that falls below its fair share falls, away from it
    assert _v([0.252, 0.23, 0.203], [False, True, True], slope=-0.025, trend_significant=True) == \
        "falls with skill, away from the fair share"
    assert _v([0.30, 0.25, 0.20], [True, False, True], slope=-0.05, trend_significant=True) == "reverses"
    # a trend across "no effect" whose ends are not significant after the ladder's correction
    assert _v([0.21, 0.25, 0.29], [False, False, False], slope=0.04, trend_significant=True) != "reverses"
    # a trend one rung carries alone (issue 50: a part 'grows with skill' on the random rung alone)
    assert _v([0.10, 0.0, 0.0], [True, False, False], null=0.0, kind="rate change", slope=-0.05,
              trend_significant=True, robust=False) == "changes with skill, one rung carries it"
    assert _v([0.01, 0.03, 0.05], [False, True, True], null=0.0, kind="unfairness", slope=0.02,
              trend_significant=True) == "rises with skill, away from fair seats"
    assert _v([-0.05, -0.02, 0.0], [True, False, False], null=0.0, kind="rate change", slope=0.025,
              trend_significant=True) == "rises with skill, toward no effect"
    assert _v([0.26, 0.24, 0.25], [False, False, False]) == "no effect at any rung"
    assert _v([0.30, 0.24, 0.25], [True, False, False]) == "found, not shown at every rung"
    assert _v([0.30, 0.40, 0.30], [True, True, True], varies=True) == "varies with skill, no trend"
    # a figure without a no-effect value (game length): only its trend or difference is said
    assert _v([20.0, 15.0, 11.0], [False] * 3, null=np.nan, kind="mean", slope=-4.5,
              trend_significant=True) == "falls with skill"
    assert _v([20.0, 20.5, 19.8], [False] * 3, null=np.nan, kind="mean", found=True) == \
        "no difference found between rungs"
    assert _v([0.3, 0.45, 0.3], [False] * 3, null=np.nan, kind="share", varies=True) == "varies with skill, no trend"


def test_every_verdict_word_is_listed_for_the_findings_count():
    """The Findings section counts verdicts in VERDICTS' order: a verdict missing from it would
    not be counted."""
    from analysis.verdicts import TOWARD, VERDICTS

    for null in TOWARD.values():
        for verb in ("rises", "falls"):
            for way in ("away from", "toward"):
                assert f"{verb} with skill, {way} {null}" in VERDICTS
    assert "grows with skill" not in VERDICTS and "shrinks with skill" not in VERDICTS


def test_equivalence_test_and_chained_holm():
    from analysis.stats import chained_holm, tost_p

    assert tost_p(0.0, 0.002, 0.01) < 1e-6                       # 5 errors inside the margin either way
    assert tost_p(0.012, 0.002, 0.01) > 0.5                      # outside it
    assert float(tost_p(0.0, 0.001, 0.0)) == 1.0                 # a margin of 0 is never shown
    # at the margin itself the test rejects in its 5%
    rng = np.random.default_rng(3)
    at_margin = tost_p(rng.normal(0.01, 0.004, 20000), 0.004, 0.01)
    assert abs((at_margin < ALPHA).mean() - ALPHA) < 0.006
    # three chains: the first rejected to its end hands its share to the others
    got = chained_holm(np.array([[0.001, 0.002], [0.02, 0.5], [0.03, 0.01]]))
    assert list(got) == [2, 1, 0]                                # 0.02 < 0.05 / 2 once the first is done
    assert list(chained_holm(np.array([[0.03, 0.001], [0.5, 0.5]]))) == [0, 0]   # the chain's order binds


# ---------------------------------------------------------------------------------------------
# the verdicts calibrated on simulated ladders (analysis.skill_stats.judge runs thousands at once)
# ---------------------------------------------------------------------------------------------
ITEMS, SE_ITEM_AT_4000 = 16, 0.01
QUIET_WORDS = ("no effect at any rung", "no difference found between rungs")


def _simulate(rng, last, seeds, sims, players=4, shared=0.0):
    """``sims`` simulated ladders, the arrays :func:`analysis.skill_stats.judge` takes, with the
    figures a real ladder's report has (tests/test_explain.py: every seat's why parts): each
    seat's win rate (one game a seed, the last seat winning ``last[rung]``, the others sharing
    the rest; Wilson intervals, score tests Holm-corrected over the seats, and the rungs'
    correlation measured from the seeds as seat_correlations does), the seat unfairness
    (analysis.fairness), game length and two end triggers' shares (the same at every rung), a
    final-round and a tie-break part per seat, and the 3 strongest of 16 cards and of 16 spaces
    (no effect; Holm over them, chosen over the rungs by the report's rule). ``shared``: the share
    of seeds whose deal decides the winner at every rung (common random numbers: the rungs'
    estimates correlate); else the rungs are independent and their measured correlation is the
    identity (what it is measured as, up to noise of 1 / sqrt(seeds))."""
    from analysis.fairness import seat_fairness
    from analysis.stats import holm_rows

    last = np.asarray(last, dtype=float)
    k = len(last)
    probs = np.column_stack([np.repeat(((1 - last) / (players - 1))[:, None], players - 1, axis=1), last])
    corr = np.full((sims, players, k, k), np.eye(k))
    if shared:
        cum = np.cumsum(probs[0])[:-1]
        winners = (rng.random((sims, k, seeds))[..., None] > cum).sum(-1)
        common = (rng.random((sims, seeds))[..., None] > cum).sum(-1)
        winners = np.where((rng.random((sims, seeds)) < shared)[:, None, :], common[:, None, :], winners)
        totals = np.stack([(winners == s).sum(-1) for s in range(players)], -1)
        for s in range(players):
            y = (winners == s).astype(float)
            y -= y.mean(-1, keepdims=True)
            c = np.einsum("lks,ljs->lkj", y, y)
            d = np.sqrt(np.diagonal(c, axis1=1, axis2=2))
            corr[:, s] = c / d[:, :, None] / d[:, None, :]
    else:
        totals = np.stack([rng.multinomial(seeds, probs[r], size=sims) for r in range(k)], 1)
    fair = 1 / players
    lo, hi = wilson(totals, seeds)
    p_seat = 2 * stats.norm.sf(np.abs(totals - seeds * fair) / np.sqrt(seeds * fair * (1 - fair)))
    p_seat = holm_rows(p_seat.reshape(-1, players)).reshape(p_seat.shape)
    unfair = np.array([[(f.rms, f.rms_lo, f.rms_hi, f.p) for f in
                        (seat_fairness(np.eye(players), counts=totals[i, r]) for r in range(k))] for i in range(sims)])
    se_item = SE_ITEM_AT_4000 * np.sqrt(4000 / seeds)
    why = rng.normal(0.0, se_item, (sims, 2 * players, k))
    items, items_p = [], []
    for _ in ("cards", "spaces"):
        est = rng.normal(0.0, se_item, (sims, k, ITEMS))
        p_adj = holm_rows((2 * stats.norm.sf(np.abs(est) / se_item)).reshape(-1, ITEMS)).reshape(est.shape)
        keep = np.argsort(-np.abs(est).mean(axis=1), axis=1)[:, None, :3]
        items.append(np.take_along_axis(est, keep, 2).transpose(0, 2, 1))
        items_p.append(np.take_along_axis(p_adj, keep, 2).transpose(0, 2, 1))
    shape_se = np.array([0.1, 0.01, 0.01])
    shape = rng.normal(np.array([20.0, 0.6, 0.4])[None, :, None], shape_se[None, :, None], (sims, 3, k))
    z = stats.norm.ppf(0.975)
    value = np.concatenate([totals.transpose(0, 2, 1) / seeds, unfair[None, ..., 0].transpose(1, 0, 2), shape, why,
                            *items], axis=1)
    se = np.concatenate([((hi - lo) / (2 * z)).transpose(0, 2, 1),
                         ((unfair[..., 2] - unfair[..., 1]) / (2 * z))[:, None], np.broadcast_to(
                             shape_se[None, :, None], shape.shape), np.full((sims, 2 * players + 6, k), se_item)], 1)
    p = np.concatenate([p_seat.transpose(0, 2, 1), unfair[:, None, :, 3], np.full(shape.shape, np.nan),
                        2 * stats.norm.sf(np.abs(why) / se_item), *items_p], 1)
    kind = ["rate"] * players + ["unfairness", "mean", "share", "share"] + ["rate change"] * (2 * players + 6)
    null = [fair] * players + [0.0] + [np.nan] * 3 + [0.0] * (2 * players + 6)
    full = np.full((sims, len(kind), k, k), np.nan)
    full[:, :players] = corr
    return {"value": value, "se": se, "p": p, "null": np.array(null), "kind": np.array(kind, dtype=object),
            "corr": full}


def _judge(ladders, min_effect=0.01, **change):
    from analysis.skill_stats import judge

    a = {**ladders, **change}
    return judge(a["value"], a["se"], a["p"], a["null"], a["kind"], a["corr"], min_effect)


def _states_finding(got):
    """Per ladder and figure: a verdict that states a finding ("still moving at the top" too;
    "stops moving" is a claim of agreement, calibrated on its own below)."""
    return ~np.isin(got["verdict"], QUIET_WORDS) | (got["settles"] == "still moving at the top")


def _at_most(rate, sims, level=ALPHA):
    """The binomial band of a rate whose truth is at most ``level`` (one in a thousand above)."""
    return rate <= stats.binom.ppf(0.999, sims, level) / sims


def _at_least(count, sims, level):
    return count >= stats.binom.ppf(0.001, sims, level)


def test_null_ladders_state_a_finding_in_at_most_5_percent():
    """No effect anywhere (fair seats, null cards and parts, the same game at every rung), five
    rungs, 22 figures: the share of ladders that state any finding stays within the binomial
    band of 5% (so the share of figures, far below). Measured on 400 ladders at 1,500 seeds a
    rung (seed 42): 4.75% of ladders (19), 0.23% of figures."""
    sims = 400
    got = _judge(_simulate(np.random.default_rng(42), np.full(5, 0.25), 1500, sims))
    stated = _states_finding(got)
    assert stated.shape[1] == 22
    assert _at_most(stated.any(axis=1).mean(), sims), stated.any(axis=1).mean()
    assert stated.mean() <= ALPHA


def test_null_ladders_keep_their_level_when_the_rungs_share_their_deals():
    """A deal that decides the winner at every rung (half the seeds here) correlates the rungs:
    a pooled value whose error ignored it would find effects in fair seats. With the correlation
    measured from the seeds the ladders keep the 5% level; judged as if independent (the
    correlation measured as none), they do not (measured, seed 44: 4.7% against 15.7% of 300)."""
    sims = 300
    ladders = _simulate(np.random.default_rng(44), np.full(5, 0.25), 1500, sims, shared=0.5)
    got = _judge(ladders)
    assert _at_most(_states_finding(got).any(axis=1).mean(), sims), _states_finding(got).any(axis=1).mean()
    blind = ladders["corr"].copy()
    blind[:, :4] = np.eye(5)
    naive = _states_finding(_judge(ladders, corr=blind)).any(axis=1).mean()
    assert not _at_most(naive, sims), naive


@pytest.mark.parametrize("players", [4, 2])
def test_a_constant_edge_of_3_points_holds_at_every_rung(players):
    """Issue 49: the last seat 3 pp above its fair share at every rung, 1,500 seeds a rung; with
    each rung's own test it was called 'holds at every rung' in 29 of 60 ladders. Pooled over
    the rungs it is called so in at least 80% (measured, seed 45: 90.0% at 4 players, 88.7% at 2,
    of 300 ladders), and never anything that says it moves."""
    sims = 300
    fair = 1 / players
    got = _judge(_simulate(np.random.default_rng(45), np.full(5, fair + 0.03), 1500, sims, players=players))
    words = got["verdict"][:, players - 1]
    assert _at_least((words == "holds at every rung").sum(), sims, 0.8), Counter(words)
    assert not any(w.startswith(("rises", "falls", "reverses")) for w in words), Counter(words)


def test_an_effect_absent_at_one_rung_can_hide_among_the_rungs():
    """What 'holds at every rung' cannot promise at this precision: the last seat at its fair share
    at the weakest rung and 3 pp above it at the other four, 1,500 seeds a rung. The rungs'
    consistency is tested at the plain 5% and every rung's estimate must lie above the fair share,
    yet a 3 pp gap at one rung is within the noise of two rungs' difference (1.6 pp), so some
    ladders still say it holds: measured 33% of 300 (seed 46). Bounded here so that a change that
    makes it worse is seen; the docs say it."""
    sims = 300
    got = _judge(_simulate(np.random.default_rng(46), [0.25, 0.28, 0.28, 0.28, 0.28], 1500, sims))
    assert (got["verdict"][:, 3] == "holds at every rung").mean() < 0.45


@pytest.mark.parametrize("min_effect, seeds", [(0.01, 100_000), (0.02, 25_000)])
def test_a_settling_effect_is_said_to_stop_moving(min_effect, seeds):
    """The last seat 0, 3, 5, 5, 5 pp above its fair share: its verdict rises away from the fair
    share and 'stops moving above rung 3' (or above rung 4, the top two shown to agree but not
    the third) in at least 80% of ladders. Agreement within the designer's smallest effect needs
    the top rungs' difference known to a fraction of it: within 1 pp (the default) 70,000 to
    100,000 seeds a rung (measured, seed 47: 82% of 300 ladders at 70,000, 95% at 100,000),
    within 2 pp a quarter of that (96% at 25,000). At 1,500 seeds a rung it is never shown, and
    the report says about 70,000 would show it."""
    sims = 300
    got = _judge(_simulate(np.random.default_rng(47), [0.25, 0.28, 0.30, 0.30, 0.30], seeds, sims), min_effect)
    words = got["settles"][:, 3]
    right = np.isin(words, ["stops moving above rung 3", "stops moving above rung 4"])
    assert _at_least(right.sum(), sims, 0.8), Counter(words)
    assert (words == "stops moving above rung 3").mean() > 0.5
    # rung 2 is 2 pp below the top: agreement there is false, at the edge of the 2-pp margin
    assert _at_most(np.isin(words, ["stops moving above rung 2", "steady at every rung"]).mean(), sims)
    assert (got["verdict"][:, 3] == "rises with skill, away from the fair share").mean() > 0.95
    few = _judge(_simulate(np.random.default_rng(48), [0.25, 0.28, 0.30, 0.30, 0.30], 1500, 50), min_effect)
    assert (few["settles"][:, 3] == "not shown to settle").all()
    assert np.all(few["more_seeds"][:, 3] * 1500 > seeds / 4)     # and says more seeds are needed


def _false_agreement(got, truth, min_effect):
    """Per ladder: whether any figure is said to agree with its top rung at a rung where the truth
    (``truth``: figures x rungs, nan where not known) differs from the top by the smallest effect
    or more."""
    k = truth.shape[1]
    off = np.abs(truth - truth[:, -1:]) >= min_effect - 1e-12          # rungs truly not within the margin
    false = np.zeros(got["agreed"].shape, dtype=bool)
    for a in range(1, k):
        rungs = off[:, k - 1 - a:k - 1].any(axis=1)                      # the rungs the claim covers
        false |= (got["agreed"] == a) & rungs[None, :]
    return false.any(axis=1)


def test_a_ladder_still_moving_is_not_said_to_settle():
    """The last seat rises by exactly the smallest effect (1 pp) at every step, so no rung is
    within it of the top: 'stops moving' is false for it, and for the other seats (falling by a
    third of a point a step) below rung 3; its seat unfairness rises by 0.58 pp a step. At
    100,000 seeds a rung, the ladders that claim any false agreement stay within the 5% band
    (measured, seed 49: 2%, 6 of 300, each at the margin's edge: a rung exactly 1 pp from the
    top); the last seat is mostly 'still moving at the top' (87%)."""
    sims, k, me = 300, 5, 0.01
    last = 0.25 + me * np.arange(k)
    got = _judge(_simulate(np.random.default_rng(49), last, 100_000, sims), me)
    others = (1 - last) / 3
    seats = np.vstack([others, others, others, last])
    truth = np.full((got["agreed"].shape[1], k), np.nan)
    truth[:4] = seats
    truth[4] = np.sqrt(((seats - 0.25) ** 2).mean(axis=0))
    truth[8:] = 0.0                                                    # the parts, cards and spaces
    assert _at_most(_false_agreement(got, truth, me).mean(), sims)
    assert (got["settles"][:, 3] == "still moving at the top").mean() > 0.5


def test_a_trend_one_rung_carries_is_not_called_a_trend_with_skill():
    """Issue 50: a part 'grew with skill' on the random rung alone (without it p 0.39). The last
    seat 8 pp above its fair share at the weakest rung and fair at the other four: the trend is
    significant, but left out of it, the weakest rung leaves none, so the verdict says one rung
    carries it and not that the seat's edge falls with skill, save in the 5% of ladders where the
    flat rungs show a trend by chance (measured, seed 50: 2.3% of 300; one rung carries it: 68%)."""
    sims = 300
    got = _judge(_simulate(np.random.default_rng(50), [0.33, 0.25, 0.25, 0.25, 0.25], 1500, sims))
    words = got["verdict"][:, 3]
    called = np.char.startswith(words.astype(str), "rises") | np.char.startswith(words.astype(str), "falls")
    assert _at_most(called.mean(), sims), Counter(words)
    assert (words == "changes with skill, one rung carries it").mean() > 0.5, Counter(words)
    assert (got["carried_by"][words == "changes with skill, one rung carries it", 3] == 0).all()


def test_a_planted_trend_is_found_at_the_power_its_test_has():
    """The last seat's win rate climbs from 25% to 28.6% over five rungs, 4,000 seeds a rung: a
    trend is found (its verdict rises, or one rung carries it) at least as often as the trend
    test alone would reject at the family's strictest Holm level (alpha over every test of the
    ladder), and the seat is never called anything that contradicts the rise."""
    sims = 200
    rates = np.linspace(0.25, 0.286, 5)
    ladders = _simulate(np.random.default_rng(43), rates, 4000, sims)
    got = _judge(ladders)
    slope, se, _ = trend(rates, np.sqrt(rates * (1 - rates) / 4000))
    tests = sum(np.isfinite(got[t][0]).sum() for t in ("p_trend", "p_same", "p_pooled", "p_step"))
    tests += np.isfinite(np.where(np.isfinite(ladders["null"])[:, None], ladders["p"][0], np.nan)).sum()
    bound = stats.norm.sf(stats.norm.isf(ALPHA / (2 * tests)) - slope / se)
    assert 0.4 < bound < 0.9                              # a region where the check is sharp
    words = got["verdict"][:, 3]
    found = got["trend_significant"][:, 3]
    assert _at_least(found.sum(), sims, bound), (found.mean(), bound)
    assert set(words) <= {"rises with skill, away from the fair share", "changes with skill, one rung carries it",
                          "holds at every rung", "found, not shown at every rung", "no effect at any rung"}, \
        Counter(words)


def test_verdicts_of_a_table_are_judge_on_its_arrays():
    """The report's path (a figure table, one row per figure and rung) gives what judge gives on
    the same ladder."""
    from analysis.skill_stats import verdicts

    ladders = _simulate(np.random.default_rng(51), [0.25, 0.28, 0.30, 0.30, 0.30], 20_000, 1)
    got = _judge(ladders, 0.02)
    z = stats.norm.ppf(0.975)
    rows = []
    for f, (kind, null) in enumerate(zip(ladders["kind"], ladders["null"])):
        for r in range(5):
            v, s = ladders["value"][0, f, r], ladders["se"][0, f, r]
            rows.append({"figure": f"f{f}", "label": f"figure {f}", "kind": kind, "null": null, "value": v,
                         "lo": v - z * s, "hi": v + z * s, "n": 20_000, "p": ladders["p"][0, f, r], "rung": r})
    corr = {f"f{f}": ladders["corr"][0, f] for f in range(4)}
    table = verdicts(pd.DataFrame(rows), 0.02, corr)
    assert list(table["verdict"]) == list(got["verdict"][0])
    assert list(table["settles"]) == list(got["settles"][0])
    assert np.allclose(table["p_pooled_holm"], got["p_pooled_holm"][0], equal_nan=True)
    assert table.loc[3, "settles"].startswith("stops moving above rung")


# ---------------------------------------------------------------------------------------------
# ratings of the rungs from duels
# ---------------------------------------------------------------------------------------------
def _duels(strength, seeds, rng):
    """Per-seed win matrices of every pair's duel (2 games a seed, as with seat rotation), the
    rungs' true Bradley-Terry strengths given (natural log)."""
    k = len(strength)
    out = []
    for a in range(k):
        for b in range(a + 1, k):
            p = 1 / (1 + np.exp(strength[b] - strength[a]))
            w = np.zeros((seeds, k, k))
            won = rng.binomial(2, p, seeds)
            w[:, a, b], w[:, b, a] = won, 2 - won
            out.append(w)
    return out


def test_rating_steps_keep_their_level_when_two_rungs_are_equal():
    """Rungs 1 and 2 equally strong: the step between them is called significant in at most about
    5% of ladders (one-sided bootstrap test; Holm over the steps only lowers it)."""
    rng = np.random.default_rng(7)
    sims, called = 200, 0
    for i in range(sims):
        _, steps = ratings_from_wins(_duels([0.0, 0.0, 1.0], 60, rng), ["a", "b", "c"], n_boot=300, seed=i)
        called += bool(steps["significant"].iloc[0])
    assert called / sims < ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / sims)


def test_ratings_recover_the_order_and_say_every_step_is_significant():
    rng = np.random.default_rng(8)
    ratings, steps = ratings_from_wins(_duels([-1.5, -0.5, 0.5, 1.5], 150, rng), list("abcd"), n_boot=500)
    assert list(np.argsort(ratings["elo"].to_numpy())) == [0, 1, 2, 3]
    assert steps["significant"].all()
    assert (ratings["ci_lo"] < ratings["elo"]).all() and (ratings["elo"] < ratings["ci_hi"]).all()


def test_a_perfect_record_gets_an_open_range_from_an_exact_bound():
    """Rung b wins all 304 games of 152 seeds against rung a. The bootstrap resamples that
    record only, and the small-sample correction decided the range (+738.792 (738.787 to
    738.796) in issue 50): now b's rating has no upper limit and a lower one from the exact
    binomial bound on a seed with a loss, u = 1 - 0.025^(1/152) (its log-odds halved: the
    mean over the two rungs), a's the mirror image, and the step the same bound undivided."""
    from analysis.skill_report import shown_ratings, shown_steps
    from analysis.stats import ELO

    w = np.zeros((152, 2, 2))
    w[:, 1, 0] = 2
    ratings, steps = ratings_from_wins([w], ["a", "b"], n_boot=200)
    u = 1 - 0.025 ** (1 / 152)
    gain = ELO * np.log((1 - u) / u)
    assert ratings["ci_hi"].iloc[1] == np.inf and ratings["ci_lo"].iloc[1] == pytest.approx(gain / 2, rel=1e-6)
    assert ratings["ci_lo"].iloc[0] == -np.inf and ratings["ci_hi"].iloc[0] == pytest.approx(-gain / 2, rel=1e-6)
    assert steps["ci_lo"].iloc[0] == pytest.approx(gain, rel=1e-6) and steps["ci_hi"].iloc[0] == np.inf
    assert steps["significant"].iloc[0]
    shown = shown_ratings(ratings)["Rating, Elo (95% range)"].tolist()
    assert shown == [f"< {-gain / 2:+.1f}", f"> {gain / 2:+.1f}"]
    assert shown_steps(steps)["Elo gain (95% range)"].iloc[0] == f"> {gain:+.1f}"


@pytest.mark.parametrize("strength, seeds", [([0.0, 5.5], 30), ([0.0, 1.0, 6.0], 60), ([0.0, 1.0, 2.0, 7.0], 150)])
def test_ratings_from_near_perfect_records_cover_their_truth(strength, seeds):
    """A top rung that loses a game to a rung below in about 1 seed of 100 (or never): every
    rung's rating (mean 0) and every step must hold the truth in at least 95% of ladders (the
    lower end of its binomial band, Bonferroni over the figures). The plain bootstrap covered
    the top rung's rating in about a quarter of such ladders."""
    from analysis.stats import ELO

    rng = np.random.default_rng(int(10 * sum(strength)) + seeds)
    strength = np.asarray(strength)
    truth, gains = ELO * (strength - strength.mean()), ELO * np.diff(strength)
    sims, k = 200, len(strength)
    covered, steps_covered = np.zeros(k), np.zeros(k - 1)
    for i in range(sims):
        ratings, steps = ratings_from_wins(_duels(strength, seeds, rng), list("abcd")[:k], n_boot=200, seed=i)
        covered += (ratings["ci_lo"] <= truth) & (truth <= ratings["ci_hi"])
        steps_covered += (steps["ci_lo"] <= gains) & (gains <= steps["ci_hi"])
    least = stats.binom.ppf(0.001 / (2 * k - 1), sims, 0.95) / sims
    assert (covered / sims >= least).all(), covered / sims
    assert (steps_covered / sims >= least).all(), steps_covered / sims


# ---------------------------------------------------------------------------------------------
# the ladder's spec
# ---------------------------------------------------------------------------------------------
def test_parse_ladder_and_the_default():
    assert parse_ladder(" random ; greedy(plan=action);balanced,greedy ") == ["random", "greedy(plan=action)",
                                                                              "balanced,greedy"]
    for bad in ("", "  ", "random", "random;;greedy", "random;greedy;", "random;random"):
        with pytest.raises(RunError):
            parse_ladder(bad)
    assert default_ladder(4)[0] == "random" and default_ladder(4)[-1].startswith("mcts(")


# ---------------------------------------------------------------------------------------------
# the command: a small ladder end to end, resumed, and its report
# ---------------------------------------------------------------------------------------------
CHEAP = "random;greedy(plan=action);balanced"


@pytest.fixture(scope="module")
def small_ladder(tmp_path_factory):
    base = tmp_path_factory.mktemp("skill")
    args = ["skill", "-n", "3", "--ladder", CHEAP, "--games", "40", "--duel-games", "40", "--jobs", "1",
            "--min-effect", "2", "--out", str(base / "runs"), "--report-dir", str(base / "rep"), "-q"]
    result = CliRunner().invoke(main, args)
    ok(result)
    return base, args


def test_skill_writes_a_report_with_the_skill_section(small_ladder):
    base, _ = small_ladder
    page = (base / "rep" / "report.md").read_text(encoding="utf-8")
    assert "## Skill" in page and "Skill ladder" in page and "Against skill" in page
    for name in ("skill_verdicts", "skill_figures", "skill_ratings", "skill_steps"):
        assert (base / "rep" / f"{name}.csv").is_file()
    # where each finding in win rate settles, against the --min-effect given (2 pp)
    assert "Where the findings in win rate settle (each rung shown within ±2 pp of the top rung" in page
    verdicts = pd.read_csv(base / "rep" / "skill_verdicts.csv")
    judged = verdicts[verdicts["kind"].isin(["rate", "unfairness", "rate change"])]
    assert judged["settles"].notna().all() and verdicts.loc[verdicts["kind"] == "mean", "settles"].isna().all()
    assert "grows with skill" not in page and "shrinks with skill" not in page
    plan = json.loads((base / "runs" / "ladder.json").read_text())
    # --duel-games 40 at 3 players: 7 seeds, each 6 games ([A,A,B] and [A,B,B], 3 rotations each)
    assert plan["rungs"] == CHEAP.split(";") and plan["seeds"] == 40 and plan["duel_seeds"] == 7
    configs = [json.loads((base / "runs" / f"r{i}" / "manifest.json").read_text())["config"] for i in (1, 2, 3)]
    assert len({(c["seed"], c["games"], c["rules_hash"]) for c in configs}) == 1      # common random numbers


def test_a_3_player_ladder_rates_its_rungs_in_3_player_games(small_ladder):
    """Each pair of rungs plays two 3-player runs of the same seeds, [A,A,B] and [A,B,B], seats
    rotated; the ratings count each seed's 6 games, won by one rung or the other."""
    from analysis.skill_stats import duel_wins, open_ladder

    base, args = small_ladder
    for tail, field in (("-1", ["random", "random", "greedy(plan=action)"]),
                        ("-2", ["random", "greedy(plan=action)", "greedy(plan=action)"])):
        c = json.loads((base / "runs" / "duels" / f"r1-r2{tail}" / "manifest.json").read_text())["config"]
        assert (c["players"], c["strategies"], c["games"], c["seat_rotation"]) == (3, field, 7, True)
    ladder = open_ladder(base / "runs")
    assert len(ladder.duels) == 2 and all(len(d.runs) == 2 for d in ladder.duels)     # neighbours only
    for d in ladder.duels:
        wins = duel_wins(d, 3)
        assert wins.shape == (7, 3, 3) and (wins.sum(axis=(1, 2)) == 6).all()
        a, b = sorted(d.rung_of.values())
        assert wins[:, a, b].sum() + wins[:, b, a].sum() == 42
    other = list(args)
    other[other.index("--duel-games") + 1] = "48"              # 8 seeds: not this ladder's
    line = one_error_line(CliRunner().invoke(main, other))
    assert "holds this ladder with --duel-games 42 (7 seeds, 6 games each at 3 players)" in line, line


def test_skill_resumes_without_playing_again(small_ladder, tmp_path):
    base, args = small_ladder
    before = {p: p.stat().st_mtime_ns for p in (base / "runs").rglob("*.parquet")}
    args = args[:-3] + ["--report-dir", str(tmp_path / "rep2"), "-q"]
    ok(CliRunner().invoke(main, args))
    after = {p: p.stat().st_mtime_ns for p in (base / "runs").rglob("*.parquet")}
    assert before == after


def test_explain_seeds_explain_every_rung_and_the_report_ranks_the_fixes_at_each(small_ladder, tmp_path):
    """--explain-seeds runs evora explain on every rung (the ladder itself is not played again)
    and the Skill section then shows each fix's seat unfairness at every rung, with a finding
    that names the best fix at the weakest and at the strongest rung."""
    import shutil

    base, args = small_ladder
    runs = tmp_path / "runs"
    shutil.copytree(base / "runs", runs)
    before = {p: p.stat().st_mtime_ns for p in runs.rglob("*.parquet")}
    args = [*args[:args.index("--out")], "--out", str(runs), "--report-dir", str(tmp_path / "rep"),
            "--explain-seeds", "10", "-q"]
    ok(CliRunner().invoke(main, args))
    assert {p: p.stat().st_mtime_ns for p in runs.rglob("*.parquet") if "why" not in p.parts} == before
    for i in (1, 2, 3):
        assert (runs / "why" / f"r{i}" / "summary" / "fixes.csv").is_file()
    fixes = pd.read_csv(tmp_path / "rep" / "skill_fixes.csv")
    assert sorted(fixes["rung"].unique()) == [0, 1, 2]
    assert (fixes.groupby("rung")["arm"].apply(lambda a: "the run's rules" in set(a))).all()
    page = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "Fixes at every rung (evora explain on each rung's seeds): at rung 1 (random) the rules' seat " \
           "unfairness is" in page and "; at rung 3 (balanced) the rules' seat unfairness is" in page
    # the sections after Skill describe the top rung: the answer quotes its best fix only when one is
    # significantly fairer than the rules (issue 50) and confirmed on fresh seeds (issue 49)
    from analysis.explain_stats import confirmed_fixes, fairer_fixes

    top = fairer_fixes(fixes[fixes["rung"] == 2])
    sure = confirmed_fixes(fixes[fixes["rung"] == 2])
    assert (", confirmed: on 10 fresh seeds x 3 rotations among" in page) == (len(sure) > 0)
    assert ("What would fix it? No fix is confirmed" in page) == (len(top) > 0 and len(sure) == 0)
    assert ("makes the seats significantly fairer than the run's rules" in page) == (len(top) == 0)


def test_bad_explain_seeds_are_one_line_and_write_nothing(tmp_path):
    for value, games in (("5", "40"), ("41", "40")):
        result = CliRunner().invoke(main, ["skill", "-n", "2", "--ladder", "random;greedy", "--games", games,
                                           "--explain-seeds", value, "--out", str(tmp_path / "o"),
                                           "--report-dir", str(tmp_path / "r")])
        assert (f"--explain-seeds must be 0 (none) or a whole number from 10 to the 40 seeds a rung plays, "
                f"got {value}") in one_error_line(result)
        assert list(tmp_path.iterdir()) == []


def test_report_reads_a_ladder_folder(small_ladder, tmp_path):
    base, _ = small_ladder
    ok(CliRunner().invoke(main, ["report", str(base / "runs"), "--out", str(tmp_path / "r")]))
    assert "## Skill" in (tmp_path / "r" / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("ladder, needle", [
    ("", "--ladder is empty"),
    ("random", "has one rung"),
    ("random;nosuchbot", "nosuchbot"),
    ("random;greedy(plan=", "greedy(plan="),
])
def test_bad_ladders_are_one_line_and_write_nothing(tmp_path, ladder, needle):
    result = CliRunner().invoke(main, ["skill", "-n", "2", "--ladder", ladder, "--games", "4",
                                       "--out", str(tmp_path / "o"), "--report-dir", str(tmp_path / "r")])
    assert needle in one_error_line(result)
    assert list(tmp_path.iterdir()) == []


def test_runs_of_different_seeds_or_rules_are_no_ladder(tmp_path):
    runner = CliRunner()
    common = ["simulate", "-n", "2", "--seeds", "6", "--jobs", "1", "-q"]
    ok(runner.invoke(main, common + ["--strategies", "random", "--out", str(tmp_path / "a")]))
    ok(runner.invoke(main, common + ["--strategies", "greedy", "--seed", "2", "--out", str(tmp_path / "b")]))
    ok(runner.invoke(main, common + ["--strategies", "greedy", "--set", "white_stone.vp=3",
                                     "--out", str(tmp_path / "c")]))
    for other, needle in (("b", "run seed"), ("c", "rules")):
        result = runner.invoke(main, ["report", "--ladder", str(tmp_path / "a"), str(tmp_path / other),
                                      "--out", str(tmp_path / "rep")])
        assert needle in one_error_line(result)
        assert not (tmp_path / "rep").exists()
    result = runner.invoke(main, ["report", "--ladder", str(tmp_path / "a"), "--out", str(tmp_path / "rep")])
    assert "at least two" in one_error_line(result)
    assert not (tmp_path / "rep").exists()


def test_a_folder_with_another_ladder_is_refused(small_ladder):
    base, args = small_ladder
    other = list(args)
    other[other.index("--ladder") + 1] = "random;balanced"
    result = CliRunner().invoke(main, other)
    assert "holds another ladder" in one_error_line(result)


# ---------------------------------------------------------------------------------------------
# the planted check: a variant that helps the first seat only when it plans its moves
# ---------------------------------------------------------------------------------------------
# One white stone in the game, worth 40 VP, placed by the first player to use one of two spaces
# (2 and 14, turned from "build 1 stone" into "build a stone and a white stone"). The start player
# places its worker first and moves first: a turn planner puts its worker where its first move
# reaches a white-stone space and takes the 40 VP on turn 1; players that move at random win the
# race only by chance, so the first seat's edge grows with skill by construction.
PLANTED = ("supply.white_stones=1", "white_stone.vp=40", "board.spaces.2.action=build_stone_and_white",
           "board.spaces.14.action=build_stone_and_white")


def _seat0_verdict(tmp_path, overrides, name):
    from analysis.skill_stats import Ladder, check_ladder, figure_table, seat_correlations, verdicts
    from analysis.tables import open_runs
    from evora_sim.rules import load_rules
    from evora_sim.runner import Execution, simulate

    rules = load_rules(None, overrides) if overrides else load_rules()
    for i, rung in enumerate(CHEAP.split(";")):
        simulate(4, 300, rung, seed=515, out=tmp_path / name / f"r{i}", rules=rules, execution=Execution(jobs=1))
    ladder: Ladder = check_ladder(open_runs([tmp_path / name / f"r{i}" for i in range(3)]))
    table = verdicts(figure_table(ladder, min_effect=0.01), 0.01, seat_correlations(ladder)).set_index("figure")
    return table.loc["seat 0"]


def test_planted_first_seat_edge_that_needs_planning_grows_with_skill(tmp_path):
    """The planted edge moves with skill, and it is the planning rung (balanced) that takes it: at
    300 seeds a rung the step from random to greedy(plan=action) (31.0% to 37.8% at 4,000 seeds)
    is within the noise, so the verdict is a rise away from the fair share that the planning rung
    carries (or a rise, were the first step clear); under the default rules, on the same seeds,
    no trend at all."""
    planted = _seat0_verdict(tmp_path, PLANTED, "planted")
    assert planted["trend_significant"] and planted["slope"] > 0, planted.to_dict()
    assert planted["verdict"] == "rises with skill, away from the fair share" or (
        planted["verdict"] == "changes with skill, one rung carries it" and planted["carried_by"] == 2), \
        planted.to_dict()
    plain = _seat0_verdict(tmp_path, (), "plain")          # the same seeds under the default rules
    assert not plain["trend_significant"], plain.to_dict()


def test_skill_on_a_dask_cluster_plays_the_same_games(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    import pandas as pd

    args = ["skill", "-n", "3", "--ladder", "random;balanced", "--games", "12", "--duel-games", "8", "-q"]
    ok(CliRunner().invoke(main, args + ["--jobs", "1", "--out", str(tmp_path / "local"),
                                        "--report-dir", str(tmp_path / "rl")]))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        where = ["--backend", "dask", "--scheduler", cluster.scheduler_address]
        ok(CliRunner().invoke(main, args + where + ["--out", str(tmp_path / "dask"),
                                                    "--report-dir", str(tmp_path / "rd")]))
    from evora_sim.runner import open_run

    for run in ("r1", "r2", "duels/r1-r2-1", "duels/r1-r2-2"):
        here, there = (open_run(tmp_path / side / run).seats for side in ("local", "dask"))
        pd.testing.assert_frame_equal(here.sort_values(["game_id", "seat"]).reset_index(drop=True),
                                      there.sort_values(["game_id", "seat"]).reset_index(drop=True))
    assert "## Skill" in (tmp_path / "rd" / "report.md").read_text(encoding="utf-8")


def test_a_damaged_ladder_plan_is_one_line(small_ladder, tmp_path):
    base, args = small_ladder
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(base / "runs", copy)
    plan = json.loads((copy / "ladder.json").read_text())
    del plan["seeds"]
    (copy / "ladder.json").write_text(json.dumps(plan))
    result = CliRunner().invoke(main, ["report", str(copy), "--out", str(tmp_path / "rep")])
    assert "damaged" in one_error_line(result)
    assert not (tmp_path / "rep").exists()


def test_run_with_skill_adds_a_short_ladder_and_its_section(tmp_path, monkeypatch):
    """The main job's --skill wiring; the ladder is made cheap here (the real one is sized to
    about 5 minutes by its pilot)."""
    import evora_sim.ladder as ladder
    import evora_sim.ladderplan as ladderplan

    monkeypatch.setattr(ladderplan, "default_ladder", lambda n: ["random", "balanced", "greedy"])
    monkeypatch.setattr(ladder, "size_to_budget", lambda *a, **k: (24, 12, 0.1))
    result = CliRunner().invoke(main, ["run", "--games", "12", "--skill", "--jobs", "1", "-q",
                                       "--out", str(tmp_path / "runs"), "--report-dir", str(tmp_path / "rep")])
    ok(result)
    plan = json.loads((tmp_path / "runs" / "skill" / "ladder.json").read_text())
    assert plan["rungs"] == ["random", "balanced"] and plan["seeds"] == 24
    page = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "## Skill" in page and "### 2 players" in page and "### 4 players" in page


@pytest.mark.parametrize("options, needle", [
    (["-n", "2", "--min-effect", "-1"], "--min-effect must be a number of percentage points from 0 to 100, got -1"),
])
def test_bad_options_are_refused_before_any_game(tmp_path, options, needle):
    result = CliRunner().invoke(main, ["skill", *options, "--ladder", "random;greedy", "--games", "4",
                                       "--out", str(tmp_path / "o"), "--report-dir", str(tmp_path / "r")])
    assert needle in one_error_line(result)
    assert list(tmp_path.iterdir()) == []


def test_a_3_player_ladder_needs_no_2_player_games(tmp_path):
    """Its duels are 3-player games, so rules that forbid 2 players do not stop it."""
    from evora_sim.cli.skill_work import prepare_ladder
    from evora_sim.rules import load_rules

    rules = load_rules(overrides=["players.min=3"])
    plan = prepare_ladder(tmp_path / "o", 3, ["random", "greedy"], 1, rules, 4, 12, 15.0, 1, quiet=True)
    assert plan.duel_seeds == 2 and [len(d.field) for d in plan.duels] == [3, 3]


# ---------------------------------------------------------------------------------------------
# a budget that cannot work is refused before any game; the pilot fits inside the budget
# ---------------------------------------------------------------------------------------------
def test_a_budget_too_short_is_refused_before_any_game_with_the_smallest_that_would(tmp_path, monkeypatch):
    """Issue 44: `evora skill -n 4 --budget 5` spent 11 minutes in its timing pilot, then failed
    writing nothing. The default 4-player ladder's search rungs alone cannot fit in 5 minutes on
    2 cores: that is said before any game (every way to play one fails the test here), with
    the smallest budget that would do."""
    import evora_sim.batch as batch
    import evora_sim.runner as runner
    from evora_sim import warmup

    def no_game(*a, **k):
        pytest.fail("a game was played")

    for module, name in ((runner, "play_chunk"), (batch, "play_batch"), (warmup, "compile_now")):
        monkeypatch.setattr(module, name, no_game)
    monkeypatch.setattr(runner, "cores", lambda: 2)
    result = CliRunner().invoke(main, ["skill", "-n", "4", "--budget", "5", "--out", str(tmp_path / "sk"),
                                       "--report-dir", str(tmp_path / "rep")])
    line = one_error_line(result)
    assert "--budget 5 minutes is too short" in line, line
    need = int(line.split("give --budget ")[1].split()[0])
    assert need > 5
    assert list(tmp_path.iterdir()) == []


def test_the_default_budget_plays_the_smallest_ladder_when_15_minutes_are_too_short(tmp_path, monkeypatch, capsys):
    """`evora skill --players 4`, the command's own example, once stopped at a budget nobody
    gave: its 4-player duels made the default ladder need about 17 minutes on 2 cores. Without
    --budget the smallest ladder is played, and said; a budget the user gives is still refused."""
    import click
    import evora_sim.ladder as ladder
    from evora_sim import warmup
    from evora_sim.cli.skill_work import prepare_ladder
    from evora_sim.rules import load_rules

    rungs = ["random", "greedy(plan=action)"]
    costs = {"r1": 30.0, "r2": 30.0, **{d.key: 30.0 for d in ladder.duel_plan(rungs, 2, 1)}}
    monkeypatch.setattr(ladder, "pilot", lambda *a, **k: dict(costs))
    monkeypatch.setattr(warmup, "compile_now", lambda *a, **k: None)
    rules = load_rules()
    plan = prepare_ladder(tmp_path / "o", 2, rungs, 1, rules, None, None, None, 1)
    assert (plan.seeds, plan.duel_seeds) == (ladder.MIN_SEEDS, ladder.MIN_DUEL_SEEDS)
    said = capsys.readouterr().err
    assert "the default budget of 15 minutes is too short" in said and "40 seeds a rung" in said, said
    _, _, smallest_minutes = ladder.smallest_ladder(costs, rungs, 2, 1)
    assert plan.budget_minutes >= smallest_minutes
    with pytest.raises(click.ClickException, match="--budget 15 minutes is too short"):
        prepare_ladder(tmp_path / "p", 2, rungs, 1, rules, None, None, 15.0, 1, quiet=True)
    assert not (tmp_path / "p").exists()


def test_the_pilot_stops_at_its_deadline_and_times_each_duel_player_once():
    """The pilot is bounded: past its deadline (an injected clock: no sleeping) it stops with the
    steps it had timed. A duel pair's cost comes from its two players' own games at the ladder's
    player count; a player that is a rung on its own is not timed twice. A duel seed is 2 games
    at 2 players (one seat each), 6 at 3 and 4 at 4 (half the seats each): 1, 3 and 2 times the
    cost of a game of each player."""
    import evora_sim.ladder as ladder
    from evora_sim import warmup
    from evora_sim.rules import load_rules

    rungs = ["random", "greedy(plan=action)", "balanced,greedy"]
    cost = {"random": 1.0, "greedy(plan=action)": 2.0, "balanced": 4.0, "greedy": 8.0, "balanced,greedy": 24.0}
    now, calls = [0.0], []

    def timer(n, spec, seed, rules):
        calls.append((n, spec))
        now[0] += 10.0                      # every step "takes" 10 s of the clock
        return cost[spec]

    real = warmup.compile_now
    warmup.compile_now = lambda: None
    try:
        costs = ladder.pilot(2, rungs, load_rules(), 1, clock=lambda: now[0], timer=timer)
        assert calls == [(2, r) for r in rungs] + [(2, "balanced"), (2, "greedy")]
        assert costs["r3"] == 24.0 and costs["random|balanced"] == 5.0 and costs["greedy(plan=action)|greedy"] == 10.0
        for n, per_game in ((3, 3.0), (4, 2.0)):
            calls.clear()
            costs = ladder.pilot(n, ["random", "balanced"], load_rules(), 1, clock=lambda: now[0], timer=timer)
            assert calls == [(n, "random"), (n, "balanced")]
            assert costs["random|balanced"] == per_game * 5.0
        calls.clear()
        now[0] = 0.0
        with pytest.raises(ladder.PilotOverrun) as stop:
            ladder.pilot(2, rungs, load_rules(), 1, deadline=25.0, clock=lambda: now[0], timer=timer)
        assert len(calls) == 3 and (stop.value.done, stop.value.total) == (3, 5)
    finally:
        warmup.compile_now = real


def test_the_fixes_sentence_names_a_fix_only_when_its_change_is_significant_and_confirmed():
    from analysis.confirm_stats import seat_rows
    from analysis.skill_report import fixes_line

    def rung(i, comp_sig):
        return pd.DataFrame([
            {"rung": i, "rank": 1, "arm": "seat compensation (starting VP)", "unfairness": 0.005, "lo": 0.001,
             "hi": 0.011, "change_ms": -0.0005, "significant": comp_sig},
            {"rung": i, "rank": 2, "arm": "the run's rules", "unfairness": 0.024, "lo": 0.018, "hi": 0.029,
             "change_ms": 0.0, "significant": False},
            # significant, but less fair: never the fix (issue 50)
            {"rung": i, "rank": 3, "arm": "end at once", "unfairness": 0.031, "lo": 0.023, "hi": 0.037,
             "change_ms": 0.0004, "significant": True}]).assign(confirmed=["confirmed", "", ""])

    rng = np.random.default_rng(3)
    first = rng.binomial(2, 0.5, size=(400, 1)).astype(float)
    even = np.hstack([first, 2 - first])
    conf = pd.DataFrame(seat_rows("the run's rules", even + 0, 2, rung=0, label="expert (own)")
                        + seat_rows("seat compensation (starting VP)", even, 2, rung=0, label="expert (own)")
                        + [{"rung": 0, "arm": "seat compensation (starting VP)", "measure": "change of unfairness",
                            "fairer": True}])
    line = fixes_line(pd.concat([rung(0, False), rung(1, True)], ignore_index=True), ["greedy", "expert"],
                      [None, conf], 2)
    assert "at rung 1 (greedy) the rules' seat unfairness is 2.4 pp (1.8–2.9) and no rule change is confirmed " \
           "to lower it" in line
    assert "at rung 2 (expert) the rules' seat unfairness is 2.4 pp (1.8–2.9) and the best fix, seat compensation " \
           "(starting VP), is confirmed: on 400 fresh seeds x 2 rotations among expert (own)" in line
    # a significant fix its rung's explain did not confirm on fresh seeds is not named
    unconfirmed = fixes_line(pd.concat([rung(0, False), rung(1, True).assign(confirmed="not confirmed")],
                                       ignore_index=True), ["greedy", "expert"], [None, conf], 2)
    assert "seat compensation" not in unconfirmed and unconfirmed.count("no rule change is confirmed") == 2


# ---------------------------------------------------------------------------------------------
# strength rated at the ladder's own player count (issue 49, item 4)
# ---------------------------------------------------------------------------------------------
def _ladder_ratings(out, players, rungs, games, duel_games):
    """A ladder played into ``out`` (rungs and duels, no report) and its rungs' ratings."""
    from analysis.skill_stats import open_ladder, rung_ratings
    from evora_sim.cli.skill_work import play_ladder, prepare_ladder
    from evora_sim.rules import load_rules

    rules = load_rules()
    plan = prepare_ladder(out, players, rungs, 5, rules, games, duel_games, 15.0, 1, quiet=True)
    play_ladder(out, plan, rules, 1, quiet=True)
    return plan, open_ladder(out), rung_ratings(open_ladder(out), n_boot=300)


def test_a_player_strong_only_at_2_players_is_not_rated_strong_at_4(tmp_path):
    """A weight file holding the built-in expert's 2-player weights (one turn planned) and, at 4
    players, the same player's weights negated: a 2-player ladder rates it far above
    greedy(plan=action), a 4-player ladder does not rate it above. Rated by 2-player duels (the
    earlier design), the 4-player ladder rated it as the 2-player one does."""
    from dataclasses import replace

    from strategies.learned import shipped_expert, to_table

    expert = shipped_expert(ValueError)
    w = dict(expert.weights)
    two_only = replace(expert, name="two_only", weights=((2, w[2]), (4, tuple(-x for x in w[4]))), replies=())
    path = tmp_path / "two_only.toml"
    path.write_text(to_table(two_only), encoding="utf-8")
    rungs = ["greedy(plan=action)", f"{path}:two_only"]
    for players, duel_games in ((2, 40), (4, 80)):
        plan, _, (ratings, steps) = _ladder_ratings(tmp_path / f"p{players}", players, rungs, 4, duel_games)
        assert plan.duel_seeds == 20 and {len(d.field) for d in plan.duels} == {players}
        gain, significant = steps["elo_gain"].iloc[0], bool(steps["significant"].iloc[0])
        if players == 2:
            assert gain > 300 and significant, steps.to_dict("records")
        else:
            assert gain < 0 and not significant, steps.to_dict("records")


PLAN_2P = [  # the duels the earlier version planned for this 2-player ladder at --duel-games 10
    {"a": 0, "b": 1, "field": ["random", "greedy(plan=action)"], "seeds": 5, "folder": "duels/r1-r2"},
    {"a": 0, "b": 2, "field": ["random", "balanced"], "seeds": 3, "folder": "duels/r1-r3-1"},
    {"a": 0, "b": 2, "field": ["random", "greedy"], "seeds": 3, "folder": "duels/r1-r3-2"},
    {"a": 1, "b": 2, "field": ["greedy(plan=action)", "balanced"], "seeds": 3, "folder": "duels/r2-r3-1"},
    {"a": 1, "b": 2, "field": ["greedy(plan=action)", "greedy"], "seeds": 3, "folder": "duels/r2-r3-2"},
]


def test_a_2_player_ladder_keeps_its_duels_and_their_counts(tmp_path):
    """2 players: the plan, its duel runs and what the ratings count are those of the earlier
    version. The plan (its text) as that version wrote it; each duel one 2-player run of the
    plan's field, seats rotated; each seed's two games counted as the earlier version counted
    them, winner's rung over loser's rung (an oracle written apart from ``duel_wins``)."""
    from analysis.skill_stats import duel_wins
    from evora_sim.rules import load_rules

    rungs = ["random", "greedy(plan=action)", "balanced,greedy"]
    _, ladder, _ = _ladder_ratings(tmp_path / "p2", 2, rungs, 6, 10)
    text = (tmp_path / "p2" / "ladder.json").read_text(encoding="utf-8")
    want = {"format": "evora-sim skill ladder", "version": 1, "players": 2, "rungs": rungs, "seed": 5, "seeds": 6,
            "duel_seeds": 5, "rules_hash": load_rules().hash, "budget_minutes": None, "pilot": {}, "duels": PLAN_2P}
    assert text == json.dumps(want, indent=1) + "\n"
    assert len(ladder.duels) == len(PLAN_2P)
    for d, planned in zip(ladder.duels, PLAN_2P):
        (run,) = d.runs
        c = run.manifest["config"]
        assert (c["players"], c["strategies"], c["games"], c["seat_rotation"]) == (2, planned["field"],
                                                                                     planned["seeds"], True)
        seats = run.seats.sort_values(["game_id", "win"], ascending=[True, False])
        want_wins = np.zeros((planned["seeds"], 3, 3))
        for game, g in seats.groupby("game_id"):
            winner, loser = (d.rung_of[name] for name in g["strategy"])
            want_wins[game // 2, winner, loser] += 1
        assert np.array_equal(duel_wins(d, 3), want_wins)


def test_a_ladder_rated_by_2_player_duels_at_more_players_is_refused_in_one_line(small_ladder, tmp_path):
    """A 3-player ladder.json of the earlier version (2-player duels) is neither reported nor
    resumed: one line says so, and nothing is written or re-planned."""
    import shutil

    base, args = small_ladder
    copy = tmp_path / "old"
    shutil.copytree(base / "runs", copy)
    plan = json.loads((copy / "ladder.json").read_text())
    plan["duels"] = [{"a": a, "b": b, "field": [plan["rungs"][a], plan["rungs"][b]], "seeds": 20,
                      "folder": f"duels/r{a + 1}-r{b + 1}"} for a, b in ((0, 1), (0, 2), (1, 2))]
    (copy / "ladder.json").write_text(json.dumps(plan))
    before = (copy / "ladder.json").read_bytes()
    for command in (["report", str(copy), "--out", str(tmp_path / "rep")],
                    [*args[:args.index("--out")], "--out", str(copy), "--report-dir", str(tmp_path / "rep"), "-q"]):
        line = one_error_line(CliRunner().invoke(main, command))
        assert "made by an earlier version of evora skill, which rated a 3-player ladder by 2-player duels" in line
        assert "play the ladder again into a new --out" in line
        assert not (tmp_path / "rep").exists() and (copy / "ladder.json").read_bytes() == before
