"""The analysis layer: each statistic against known values, planted effects found, fair data not
flagged more often than alpha, the report from a small real run, and bad input."""
from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from analysis import stats as S
from analysis import tables as T
from evora_sim.cli import main


# ---------------------------------------------------------------------------------------------
# statistics against known values
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k,n", [(0, 10), (1, 10), (5, 10), (10, 10), (81, 263), (2102, 8000), (1, 1)])
def test_wilson_matches_statsmodels(k, n):
    lo, hi = S.wilson(k, n)
    ref = proportion_confint(k, n, alpha=0.05, method="wilson")
    assert lo == pytest.approx(ref[0], abs=1e-12) and hi == pytest.approx(ref[1], abs=1e-12)


def test_wilson_textbook_value():
    # Newcombe (1998), Statistics in Medicine 17:857, example 81/263: 0.2553 to 0.3662
    lo, hi = S.wilson(81, 263)
    assert round(float(lo), 4) == 0.2553 and round(float(hi), 4) == 0.3662


def test_newcombe_difference_textbook_value():
    # Newcombe (1998), Statistics in Medicine 17:873, example 56/70 - 48/80, method 10:
    # difference 0.2000, interval 0.0524 to 0.3339
    d, lo, hi = S.newcombe_diff(56, 70, 48, 80)
    assert float(d) == pytest.approx(0.2)
    assert round(float(lo), 4) == 0.0524 and round(float(hi), 4) == 0.3339


def test_two_prop_p_is_pearson_chi_square():
    table = np.array([[56, 14], [48, 32]])
    chi2, p, _, _ = sps.chi2_contingency(table, correction=False)
    assert float(S.two_prop_p(56, 70, 48, 80)) == pytest.approx(p, rel=1e-10)


def test_holm_matches_statsmodels():
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.5, 0.2])
    ref = multipletests(p, method="holm")[1]
    assert np.allclose(S.holm(p), ref)
    with_nan = S.holm(np.array([0.01, np.nan, 0.04]))
    assert np.isnan(with_nan[1]) and np.allclose(with_nan[[0, 2]], multipletests([0.01, 0.04], method="holm")[1])


def test_binomial_and_chi_square_known_values():
    # two-sided exact binomial, 7 of 20 at 0.5: 0.26318...
    assert S.binom_p(7, 20, 0.5) == pytest.approx(0.263176, abs=1e-6)
    # 30 vs 20 wins against equal shares: chi-square 2.0, p = 0.157299...
    chi, p = S.chi_square_uniform([30, 20])
    assert chi == pytest.approx(2.0) and p == pytest.approx(0.1572992, abs=1e-6)


def test_mean_intervals():
    rng = np.random.default_rng(3)
    v = rng.normal(10, 2, 50)
    m, lo, hi = S.mean_ci(v)
    ref = sps.t.interval(0.95, len(v) - 1, loc=v.mean(), scale=sps.sem(v))
    assert (lo, hi) == pytest.approx(ref)
    lo2, hi2 = S.mean_ci_from(v.mean(), v.std(ddof=1), len(v))
    assert (float(lo2), float(hi2)) == pytest.approx(ref)


def test_quantiles_from_counts_match_numpy():
    rng = np.random.default_rng(4)
    v = rng.integers(0, 30, 1001)
    values, counts = np.unique(v, return_counts=True)
    qs = [0.1, 0.25, 0.5, 0.75, 0.9]
    assert list(S.quantiles_from_counts(values, counts, qs)) == list(np.quantile(v, qs, method="inverted_cdf"))


def test_bradley_terry_is_the_logistic_maximum_likelihood():
    import statsmodels.api as sm

    wins = np.array([[0, 30, 45], [20, 0, 33], [15, 27, 0]], dtype=float)
    est = S.bradley_terry(wins)
    rows, y = [], []
    for i in range(3):
        for j in range(i + 1, 3):
            x = np.zeros(3)
            x[i], x[j] = 1, -1
            rows.append(x[1:])                      # strategy 0 is the reference
            y.append([wins[i, j], wins[j, i]])
    fit = sm.GLM(np.array(y), np.array(rows), family=sm.families.Binomial()).fit()
    ref = np.concatenate([[0.0], fit.params])
    assert np.allclose(est, ref - ref.mean(), atol=1e-6)
    # and the Elo reading: a 60% head-to-head is 400*log10(1.5) = 70.4 points
    two = S.bradley_terry(np.array([[0, 600], [400, 0]])) * S.ELO
    assert two[0] - two[1] == pytest.approx(400 * np.log10(1.5))
    assert float(S.expected_score(two[0], two[1])) == pytest.approx(0.6)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")   # MM on the never-played rung
@pytest.mark.parametrize("k", [2, 3, 5])
def test_bootstraps_batched_fit_equals_one_fit_per_replicate(k, monkeypatch):
    """bradley_terry_many is bradley_terry replicate by replicate, bit for bit: lopsided
    replicates (a strategy that never won: the 0.5 correction), far stronger ones (Newton's
    capped steps), a singular one (a strategy that never played), and ordinary ones, in one
    batch. Only the singular one is left to MM."""
    rng = np.random.default_rng(40 + k)
    wins = rng.poisson(rng.uniform(0.3, 15, (60, 1, 1)), (60, k, k)).astype(float)
    wins[:, np.arange(k), np.arange(k)] = 0
    wins[::7, 0, :] = 0                         # never won
    wins[5::9, 1, 0], wins[5::9, 0, 1] = 400, 1  # a strength gap of six: steps above the cap of 2
    wins[3, 1, :] = wins[3, :, 1] = 0           # never played: Newton's step is singular
    one_by_one = np.array([S.bradley_terry(w, tol=1e-8, max_iter=300) for w in wins])
    alone = []
    mm = S.bradley_terry_mm
    monkeypatch.setattr(S, "bradley_terry_mm", lambda *a: alone.append(1) or mm(*a))
    together = S.bradley_terry_many(wins, tol=1e-8, max_iter=300)
    np.testing.assert_array_equal(together, one_by_one)
    assert len(alone) == 1


def test_logistic_effect_on_cells_equals_the_row_level_fit():
    import statsmodels.api as sm

    rng = np.random.default_rng(5)
    rows = 4000
    strat = rng.integers(0, 3, rows)
    seat = rng.integers(0, 4, rows)
    used = rng.random(rows) < 0.3 + 0.1 * strat
    logit = -1.2 + 0.5 * used + 0.3 * strat - 0.1 * seat
    win = rng.random(rows) < 1 / (1 + np.exp(-logit))
    X = pd.concat([pd.Series(1.0, index=range(rows), name="const"), pd.Series(used.astype(float), name="used"),
                   pd.get_dummies(pd.Series(strat).astype(str), prefix="strategy", drop_first=True, dtype=float),
                   pd.get_dummies(pd.Series(seat).astype(str), prefix="seat", drop_first=True, dtype=float)], axis=1)
    ref = sm.Logit(win.astype(float), X).fit(disp=0)
    cells = (pd.DataFrame({"used": used.astype(int), "strategy": strat, "seat": seat, "win": win})
             .groupby(["used", "strategy", "seat"]).agg(wins=("win", "sum"), n=("win", "size")).reset_index())
    got = S.logistic_effect(cells, "used", ["strategy", "seat"])
    assert np.log(got["odds_ratio"]) == pytest.approx(ref.params["used"], rel=1e-6)
    assert got["p_adj"] == pytest.approx(ref.pvalues["used"], rel=1e-4)
    # the average marginal effect: statsmodels' own computation on the row-level model
    ame = ref.get_margeff(at="overall", method="dydx", dummy=True).summary_frame().loc["used"]
    assert got["adj_diff"] == pytest.approx(ame["dy/dx"], rel=1e-6)
    assert got["adj_hi"] - got["adj_lo"] == pytest.approx(2 * S.Z95 * ame["Std. Err."], rel=1e-3)


def test_design_effect_of_independent_clusters_is_near_one():
    rng = np.random.default_rng(6)
    k = rng.binomial(4, 0.25, 20_000)
    assert S.cluster_design_effect(k, 4) == pytest.approx(1.0, abs=0.05)


def test_clustered_wilson_widens_for_correlated_clusters_only():
    rng = np.random.default_rng(7)
    # every trial of a cluster has the same outcome: 500 clusters of 4 carry the information
    # of 500 trials, so the interval is Wilson's on 500, twice as wide as on 2,000
    k = 4 * rng.binomial(1, 0.3, 500)
    lo, hi, deff = S.clustered_wilson(k, 4)
    assert deff == pytest.approx(4.0 * 500 / 499, rel=1e-9)      # cluster variance with ddof=1
    assert (lo, hi) == pytest.approx(tuple(S.wilson(k.sum() / deff, 2000 / deff)))
    plain_lo, plain_hi = S.wilson(k.sum(), 2000)
    assert hi - lo == pytest.approx(2 * (plain_hi - plain_lo), rel=0.02)
    # negatively correlated clusters (deff < 1): the plain, conservative interval
    k = np.full(500, 2)
    k[:10] = 1
    lo, hi, deff = S.clustered_wilson(k, 4)
    assert deff < 1 and (lo, hi) == pytest.approx(tuple(S.wilson(k.sum(), 2000)))


def test_cluster_robust_logistic_matches_statsmodels_on_the_rows():
    import statsmodels.api as sm

    rng = np.random.default_rng(8)
    games, n = 1500, 2
    seed = np.repeat(np.arange(games) // 2, n)                # 2 games (rotations) per seed
    seat = np.tile(np.arange(n), games)
    strat = np.tile([0, 1], games) ^ np.repeat(np.arange(games) % 2, n)
    winner = rng.random(games) < 0.55
    win = np.where(seat == 0, winner.repeat(n), ~winner.repeat(n))
    used = rng.random(games * n) < 0.4
    X = pd.DataFrame({"const": 1.0, "used": used.astype(float), "strategy_1": strat.astype(float),
                      "seat_1": seat.astype(float)})
    ref = sm.GLM(win.astype(float), X, family=sm.families.Binomial()).fit(
        cov_type="cluster", cov_kwds={"groups": seed})
    key = used.astype(int) * 4 + strat * 2 + seat
    cells = pd.DataFrame({"used": np.repeat([0, 1], 4), "strategy": np.tile(np.repeat([0, 1], 2), 2),
                          "seat": np.tile([0, 1], 4), "wins": np.bincount(key, weights=win, minlength=8),
                          "n": np.bincount(key, minlength=8)})
    per_seed = (np.bincount(seed * 8 + key, weights=win, minlength=750 * 8).reshape(750, 8),
                np.bincount(seed * 8 + key, minlength=750 * 8).reshape(750, 8))
    got = S.logistic_effect(cells, "used", ["strategy", "seat"], clusters=per_seed)
    assert np.log(got["odds_ratio"]) == pytest.approx(ref.params["used"], rel=1e-6)
    assert got["p_adj"] == pytest.approx(ref.pvalues["used"], rel=1e-4)
    se = (np.log(got["or_hi"]) - np.log(got["or_lo"])) / (2 * S.Z95)
    assert se == pytest.approx(ref.bse["used"], rel=1e-6)
    # without the rows: the model's own (independent seat-games) standard error
    plain = S.logistic_effect(cells, "used", ["strategy", "seat"])
    assert plain["odds_ratio"] == pytest.approx(got["odds_ratio"]) and plain["p_adj"] != got["p_adj"]


def test_clustered_newcombe_is_newcombe_for_independent_trials_and_widens_for_shared_games():
    rng = np.random.default_rng(9)
    # one trial per cluster: the design effect is about 1, Newcombe's interval is kept
    used = rng.random(4000) < 0.3
    win = rng.random(4000) < 0.25
    ones = np.ones(4000)
    d, lo, hi, p, deff = S.newcombe_diff_clustered(win * used, used * ones, win * ~used, ~used * ones)
    ref = S.newcombe_diff(win[used].sum(), used.sum(), win[~used].sum(), (~used).sum())
    assert deff == pytest.approx(1.0, abs=0.1)
    if deff <= 1:
        assert (d, lo, hi) == pytest.approx(tuple(float(x) for x in ref))
    # 2 seats, one user per game, one winner: the two rates are tied together (design effect 2)
    games = 4000
    winner, user = rng.integers(0, 2, games), rng.integers(0, 2, games)
    k1, k0 = (winner == user).astype(float), (winner != user).astype(float)
    d, lo, hi, p, deff = S.newcombe_diff_clustered(k1, np.ones(games), k0, np.ones(games))
    assert deff == pytest.approx(2.0, rel=0.1)
    _, plo, phi = S.newcombe_diff(k1.sum(), games, k0.sum(), games)
    assert hi - lo == pytest.approx(np.sqrt(deff) * (phi - plo), rel=1e-6)


def test_a_seat_rate_test_keeps_the_exact_binomial_unless_clusters_inflate_it():
    k = np.full(500, 2)
    k[:10] = 1                                      # design effect below 1
    p, deff = S.clustered_rate_p(k, 4, 0.5)
    assert deff < 1 and p == pytest.approx(S.binom_p(int(k.sum()), 2000, 0.5))
    rng = np.random.default_rng(10)
    k = 4 * rng.binomial(1, 0.5, 500)                # every cluster all or nothing
    p, deff = S.clustered_rate_p(k, 4, 0.5)
    z = (k.sum() / 2000 - 0.5) / np.sqrt(0.25 * deff / 2000)
    assert deff > 3 and p == pytest.approx(2 * sps.norm.sf(abs(z)))


# ---------------------------------------------------------------------------------------------
# synthetic results: planted effects are found, fair ones are not flagged too often
# ---------------------------------------------------------------------------------------------
def synthetic_seats(n, games, seat_p=None, strategies=None, strength=None, seed=0):
    """Seat rows as the loader makes them: one block of n seats per game. The winner is drawn
    from ``seat_p`` (default fair) or from the seats' strategies' ``strength``; the other seats
    are ranked at random below it."""
    rng = np.random.default_rng(seed)
    strategies = strategies or ["a"] * n
    strat = np.array([strategies[(s - g) % n] for g in range(games) for s in range(n)]).reshape(games, n)
    if strength is not None:
        w = np.vectorize(strength.get)(strat).astype(float)
    else:
        w = np.broadcast_to(np.asarray(seat_p or [1 / n] * n, float), (games, n))
    # Plackett-Luce order: Gumbel trick, so every pair also follows Bradley-Terry
    key = np.log(w) + rng.gumbel(size=(games, n))
    rank = (-key).argsort(axis=1).argsort(axis=1) + 1
    score = 100 - 5 * rank + rng.integers(0, 5, (games, n))      # strictly falls with rank
    return pd.DataFrame({
        "run": np.int8(0), "n_players": np.int8(n),
        "game_id": np.repeat(np.arange(games), n), "seat": np.tile(np.arange(n, dtype=np.int8), games),
        "strategy": pd.Categorical(strat.reshape(-1)), "score": score.reshape(-1).astype(np.int16),
        "rank": rank.reshape(-1).astype(np.int8), "win": (rank == 1).reshape(-1),
        "seat_rotation": strength is not None, "cluster": np.repeat(np.arange(games) // n, n),
    })


def test_a_planted_seat_advantage_is_detected():
    seats = synthetic_seats(4, 20_000, seat_p=[0.28, 0.24, 0.24, 0.24], seed=1)
    adv, tests = T.seat_advantage(T.frame_stats(seats))
    first = adv[adv["seat"] == 0].iloc[0]
    assert first["significant"] and first["ci_lo"] > 0.25 and first["ci_lo"] <= 0.28 <= first["ci_hi"]
    assert tests.iloc[0]["significant"]
    assert not adv[adv["seat"] != 0]["diff"].gt(0).any()


def test_fair_results_are_not_flagged_more_often_than_alpha():
    reps = 200
    chi_hits = family_hits = 0
    for r in range(reps):
        adv, tests = T.seat_advantage(T.frame_stats(synthetic_seats(4, 1000, seed=100 + r)))
        chi_hits += bool(tests.iloc[0]["significant"])
        family_hits += bool(adv["significant"].any())
    # with alpha 0.05, 200 fair replicates exceed 18 rejections with probability < 0.5%
    bound = sps.binom.ppf(0.995, reps, S.ALPHA)
    assert chi_hits <= bound, chi_hits
    assert family_hits <= bound, family_hits            # Holm keeps the family-wise rate


def placebo_cards(rng, seats: pd.DataFrame, n: int, cards: int) -> np.ndarray:
    """Per seat row, ``cards`` fake cards each "played" by one random seat of every game: they
    cannot change who wins."""
    games = len(seats) // n
    counts = np.zeros((len(seats), cards), dtype=np.int16)
    for c in range(cards):
        counts[np.arange(games) * n + rng.integers(0, n, games), c] = 1
    return counts


def test_a_placebo_card_is_significant_at_its_nominal_rate():
    """2 players, seat rotation (a seed's 2 games share it), one random seat per game holds the
    card. Counting seat-games as independent, p < 0.05 comes up about 16% of the time (the two
    seats of a game share one winner); with the seed as the unit it must be 5% within its
    Monte-Carlo error, for the raw difference and for the adjusted one; and Holm's flag over the
    16 cards of a report may fire in at most 5% of reports."""
    rng = np.random.default_rng(11)
    reports, cards = 60, 16
    raw, adjusted, naive, flagged = [], [], [], 0
    for r in range(reports):
        seats = synthetic_seats(2, 2000, strategies=["a", "b"], strength={"a": 0.55, "b": 0.45}, seed=200 + r)
        t = T.exposure_table(T.frame_stats(seats, uses={"cards": placebo_cards(rng, seats, 2, cards)}), "cards",
                             [f"fake{c}" for c in range(cards)])
        raw += list(t["p_raw"])
        adjusted += list(t["p_adj"])
        naive += [float(S.two_prop_p(x.win_used * x.seat_games_used, x.seat_games_used,
                                     x.win_not * (4000 - x.seat_games_used), 4000 - x.seat_games_used))
                  for x in t.itertuples()]
        flagged += bool(t["significant"].any())
    tests = reports * cards
    lo, hi = sps.binom.ppf([0.0005, 0.9995], tests, S.ALPHA) / tests
    for p in (raw, adjusted):
        rate = np.mean(np.array(p) < S.ALPHA)
        assert lo <= rate <= hi, rate
    assert np.mean(np.array(naive) < S.ALPHA) > 2 * hi              # the old method's failure
    assert flagged <= sps.binom.ppf(0.999, reports, S.ALPHA), flagged


def test_two_players_have_one_seat_test_and_intervals_clustered_by_seed():
    seats = synthetic_seats(2, 4000, strategies=["a", "b"], strength={"a": 0.6, "b": 0.4}, seed=12)
    adv, tests = T.seat_advantage(T.frame_stats(seats))
    assert adv["p_holm"].iloc[0] == adv["p_holm"].iloc[1] == adv["p_binom"].iloc[0] == tests["p"].iloc[0]
    # a seed's two games are not independent: each seat's interval carries the design effect
    per_seed = T.frame_stats(seats).counts[2].seed_wins()
    lo, hi, deff = S.clustered_wilson(per_seed[:, 0], 2)
    assert adv["design_effect"].iloc[0] == pytest.approx(deff)
    assert (adv["ci_lo"].iloc[0], adv["ci_hi"].iloc[0]) == pytest.approx((lo, hi))
    # the fairness test at 2 players is the t test of seat 0's per-seed deviation
    ref = sps.ttest_1samp(per_seed[:, 0] / 2 - 0.5, 0.0)
    assert tests["p"].iloc[0] == pytest.approx(ref.pvalue)


def test_negligible_marks_significant_findings_below_the_smallest_difference_that_matters():
    seats = synthetic_seats(4, 200_000, seat_p=[0.256, 0.25, 0.25, 0.244], seed=13)
    adv, tests = T.seat_advantage(T.frame_stats(seats))
    first = adv[adv["seat"] == 0].iloc[0]
    assert first["significant"] and first["negligible"]              # 0.6 points: real, small
    assert S.verdict(first["p_holm"], size=first["diff"]) == "significant but negligible"
    adv2, _ = T.seat_advantage(T.frame_stats(seats), min_effect=0.005)
    assert not adv2[adv2["seat"] == 0].iloc[0]["negligible"]
    assert tests.iloc[0]["significant"] and tests.iloc[0]["negligible"]


def test_a_planted_strategy_edge_is_rated_and_matched_up():
    seats = synthetic_seats(2, 20_000, strategies=["strong", "weak"], strength={"strong": 0.6, "weak": 0.4}, seed=2)
    mu = T.matchups(T.frame_stats(seats))
    row = mu[mu["strategy"] == "strong"].iloc[0]
    assert row["ci_lo"] <= 0.6 <= row["ci_hi"] and row["significant"]
    rat = T.ratings(T.frame_stats(seats), n_boot=200).set_index("strategy")
    gap = rat.loc["strong", "elo"] - rat.loc["weak", "elo"]
    assert gap == pytest.approx(400 * np.log10(1.5), abs=10)
    assert rat.loc["strong", "ci_lo"] < rat.loc["strong", "elo"] < rat.loc["strong", "ci_hi"]
    # 4-player mixed field: the "finished ahead" rate of a vs b follows Bradley-Terry
    seats4 = synthetic_seats(4, 5000, strategies=["a", "b", "c", "d"],
                             strength={"a": 4, "b": 2, "c": 1, "d": 1}, seed=3)
    mu4 = T.matchups(T.frame_stats(seats4))
    ab = mu4[(mu4["strategy"] == "a") & (mu4["opponent"] == "b")].iloc[0]
    assert ab["ci_lo"] <= 2 / 3 <= ab["ci_hi"]
    r4 = T.ratings(T.frame_stats(seats4), n_boot=100).set_index("strategy")["elo"]
    assert r4["a"] - r4["b"] == pytest.approx(400 * np.log10(2), abs=25)


def test_a_perfect_record_is_rated_with_an_open_range_not_a_bootstrap_point():
    """Issue 50, item 13: the report's strategy ratings. A strategy that never lost has no upper
    limit (the bootstrap resampled one record: '+738.792 (738.787 to 738.796)'), its opponent no
    lower one, and the range is printed open; a record with losses keeps a two-sided range."""
    from analysis import display

    seats = synthetic_seats(2, 400, strategies=["strong", "weak"], strength={"strong": 1e9, "weak": 1e-9}, seed=4)
    rat = T.ratings(T.frame_stats(seats), n_boot=100).set_index("strategy")
    assert rat.loc["strong", "ci_hi"] == np.inf and np.isfinite(rat.loc["strong", "ci_lo"])
    assert rat.loc["weak", "ci_lo"] == -np.inf
    assert rat.loc["strong", "ci_lo"] < rat.loc["strong", "elo"]
    shown = display.ratings(rat.reset_index()).set_index("Strategy")["Elo (95% range)"]
    assert shown["strong"].startswith("> +") and shown["weak"].startswith("< ")
    close = synthetic_seats(2, 400, strategies=["strong", "weak"], strength={"strong": 0.6, "weak": 0.4}, seed=4)
    assert np.isfinite(T.ratings(T.frame_stats(close), n_boot=100)[["ci_lo", "ci_hi"]].to_numpy()).all()


def test_margin_and_majority_share_known_values():
    seats = pd.DataFrame({"n_players": np.int8(2), "game_id": [0, 0, 1, 1], "seat": [0, 1, 0, 1],
                          "strategy": pd.Categorical(["a", "b", "b", "a"]), "score": [50, 40, 30, 30],
                          "rank": [1, 2, 2, 1], "win": [True, False, False, True],
                          **{c: 0 for c in T.MAJORITY_CATEGORIES}})
    seats.loc[0, "vp_column_majority"] = 25
    assert list(T.score_margin(seats["score"].to_numpy().reshape(-1, 2)).reshape(-1)) == [10, -10, 0, 0]
    seats["cluster"] = seats["game_id"]
    m = T.victory_margin(T.frame_stats(seats)).iloc[0]
    assert m["mean_margin"] == 5 and m["share_tiebreak"] == 0.5
    share = T.majority_share(T.frame_stats(seats)).set_index("group")
    assert share.loc["all seats", "pooled_share"] == pytest.approx(25 / 150)
    assert share.loc["winners", "mean_share"] == pytest.approx((0.5 + 0) / 2)


# ---------------------------------------------------------------------------------------------
# a small real run: the tables and the report
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real_runs(tmp_path_factory):
    from evora_sim.runner import Execution, simulate

    base = tmp_path_factory.mktemp("runs")
    a = simulate(4, 60, "greedy,majority,emperor,random", seed=3, out=base / "p4", seat_rotation=True,
                 execution=Execution(chunk_size=30, command="test p4"))
    b = simulate(2, 120, "greedy,random", seed=4, out=base / "p2", seat_rotation=True,
                 execution=Execution(chunk_size=60, command="test p2"))
    return [a.out, b.out]


def test_columns_held_are_left_out_where_a_column_scores_nothing(tmp_path, recwarn):
    """With majority.column_vp = 0 no column's holder can be read off the seat tables (they
    hold VP): the report's "columns held" rows for that run are left out, not computed by a
    division by zero (a RuntimeWarning, and a histogram of garbage)."""
    from evora_sim.rules import load_rules
    from evora_sim.runner import Execution, simulate

    run = simulate(2, 8, "greedy,random", seed=5, out=tmp_path / "r", seat_rotation=True,
                   rules=load_rules(overrides=["majority.column_vp=0"]),
                   execution=Execution(command="test"))
    data = T.scan(T.open_runs([run.out]))
    assert T.columns_held(data).empty
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_tables_from_a_real_run(real_runs):
    runs = T.open_runs(real_runs)
    data = T.scan(runs)
    assert data.player_counts == [2, 4] and data.counts[4].games == 240 and data.counts[2].games == 240
    adv, tests = T.seat_advantage(data)
    assert set(adv["n_players"]) == {2, 4} and (adv.groupby("n_players")["wins"].sum() == 240).all()
    assert adv["seat_rotation"].all()
    cards = T.card_value(data)
    assert len(cards) == 2 * 16
    # the card-use counts agree with the cards table
    total = sum(pd.read_parquet(p, columns=["plays"])["plays"].sum() for r in runs for p in sorted((r.out / "cards").glob("*.parquet")))
    assert total == cards["times"].sum()
    outcomes = T.majority_outcomes(data)
    assert np.allclose(outcomes.groupby(["n_players", "majority"])["share"].sum(), 1.0)
    held = T.columns_held(data)
    by_seat = held[held["by"] == "seat"]
    assert np.allclose(by_seat[[f"share_{h}" for h in range(4)] + ["share_4+"]].sum(axis=1), 1.0)
    vp = T.vp_by_category(data)
    four = vp[(vp["n_players"] == 4) & (vp["by"] == "strategy")]
    parts = four[four["category"] != "score"].groupby("group")["mean"].sum()
    total_score = four[four["category"] == "score"].set_index("group")["mean"]
    assert np.allclose(parts.sort_index(), total_score.sort_index())      # categories add up
    shape = T.game_shape(data)
    assert list(shape["games"]) == [240, 240]


def test_report_builds_with_every_section(real_runs, tmp_path):
    out = tmp_path / "rep"
    res = CliRunner().invoke(main, ["report", *map(str, real_runs), "--out", str(out)])
    assert res.exit_code == 0, res.output
    html = (out / "report.html").read_text(encoding="utf-8")
    md = (out / "report.md").read_text(encoding="utf-8")
    sections = ["The answer", "Findings", "Seat advantage", "Strategy match-ups", "Card value",
                "Construction Site spaces", "Majority scoring", "Game shape", "A sample game", "Runs"]
    for s in sections:
        assert f"## {s}" in md and f">{s}</h2>" in html
    # the answer first, the manifests last (command, seed, versions, rules hash), folded in the page
    assert md.index("## The answer") < md.index("## Findings") < md.index("## Seat advantage") < md.index("## Runs")
    runs_part = md[md.index("## Runs"):]
    for key in ("test p4", '"seed": 3', "package_version", "rules_hash", "numpy", "pandas", "python"):
        assert key in runs_part
    assert html.count("<details><summary>") >= 2 and html.index("<details><summary>/") > html.index("id='runs'")
    # a designer's first screen: the seat furthest from a fair share first, named in words, its rate,
    # its range, the fair share, the players; then why, and where the fixes are
    lead = re.search(r"\*\*The (first|second|third|last) player wins \d+\.\d% of 4-player games \(95% range "
                     r"\d+\.\d+–\d+\.\d+\) instead of 25%", md)
    adv = pd.read_csv(out / "seat_advantage.csv").query("n_players == 4")
    furthest = int(adv.loc[adv["diff"].abs().idxmax(), "seat"])
    assert lead and ["first", "second", "third", "last"][furthest] == lead.group(1)
    after = md[md.index(lead.group(0)):]
    assert after.index("Why? ") < after.index("](#why-the-seats-win-what-they-win)") < after.index("###")
    assert "Measured among these bots, not people." in md and "Is it fair? Seat unfairness" in md
    assert "greedy (turn planner)" in md and "default rules" in md
    # the invented board: said in the header and in the space section
    assert md.count("reconstruction (decision D1)") >= 2 and "KNOWN BIAS" in md
    # readable tables: human names, estimates with their ranges, p-values in words, rulebook names
    assert "Win rate (95% range)" in md and "p (Holm)" in md
    assert "Governor: score a height majority" in md and "Space 0 (Architect): 2 stones" in md
    cards = pd.read_csv(out / "card_value.csv")
    assert {"card", "name"} <= set(cards.columns) and "gov_height" in set(cards["card"])
    # self-contained: every image is a data URI, nothing is fetched; the sample game's log beside it
    assert "<img" in html and not re.search(r"src=['\"](?!data:)", html) and "<link" not in html
    figures = ["seat_deviation", "score_by_seat", "score_breakdown", "card_value", "space_value", "matchups",
               "majority_outcomes", "game_length", "victory_margin", "tension", "sample_game"]
    for f in figures:
        assert (out / f"{f}.png").stat().st_size > 0 and (out / f"{f}.svg").stat().st_size > 0
        assert f"({f}.png)" in md
    log = (out / "sample_game.txt").read_text(encoding="utf-8")
    assert log.startswith("$ evora replay -n 4 --seed ") and "Final scoring" in log
    assert "href='sample_game.txt'" in html
    csvs = {p.stem for p in out.glob("*.csv")}
    assert {"seat_advantage", "seat_test", "strategy_win_rates", "matchups", "ratings", "card_value",
            "space_value", "vp_by_category", "majority_outcomes", "columns_held", "majority_share",
            "victory_margin", "game_shape", "end_triggers", "tension"} <= csvs
    for c in csvs:
        assert len(pd.read_csv(out / f"{c}.csv")) > 0
    assert not any(p.name.startswith(".") for p in tmp_path.iterdir())     # no temporary left


# ---------------------------------------------------------------------------------------------
# bad input: one line, exit status 2
# ---------------------------------------------------------------------------------------------
def _one_line_error(res, *fragments):
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("evora: error:"), res.output
    for f in fragments:
        assert f in lines[0], lines[0]


def test_a_folder_that_is_not_a_run(tmp_path):
    res = CliRunner().invoke(main, ["report", str(tmp_path), "--out", str(tmp_path / "r")])
    _one_line_error(res, "not a run folder")
    res = CliRunner().invoke(main, ["report", str(tmp_path / "nowhere"), "--out", str(tmp_path / "r")])
    _one_line_error(res, "not a run folder")
    assert not (tmp_path / "r").exists()


def test_an_incomplete_run_needs_allow_partial(real_runs, tmp_path):
    run = tmp_path / "p4"
    shutil.copytree(real_runs[0], run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["chunks"]["1"] = "missing"
    (run / "manifest.json").write_text(json.dumps(manifest))
    res = CliRunner().invoke(main, ["report", str(run), "--out", str(tmp_path / "r")])
    _one_line_error(res, "incomplete", "1 of 2 chunks missing (1)", "--allow-partial")
    # a chunk marked done whose file is gone counts as missing too
    manifest["chunks"]["1"] = "done"
    (run / "manifest.json").write_text(json.dumps(manifest))
    (run / "seats" / "chunk-000001.parquet").unlink()
    res = CliRunner().invoke(main, ["report", str(run), "--out", str(tmp_path / "r")])
    _one_line_error(res, "incomplete", "(1)")
    res = CliRunner().invoke(main, ["report", str(run), "--out", str(tmp_path / "r"), "--allow-partial"])
    assert res.exit_code == 0, res.output
    md = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert "PARTIAL RUN" in md and "1 of 2 chunks" in md
    assert (pd.read_csv(tmp_path / "r" / "seat_advantage.csv")["games"] == 120).all()
    # a damaged table file: one line naming it
    (run / "cards" / "chunk-000000.parquet").write_bytes(b"not parquet")
    res = CliRunner().invoke(main, ["report", str(run), "--out", str(tmp_path / "r2"), "--allow-partial"])
    _one_line_error(res, "chunk 0 is damaged", "cards/chunk-000000.parquet", "were written")
    assert not (tmp_path / "r2").exists()


def test_an_empty_selection_and_a_bad_out(real_runs, tmp_path):
    res = CliRunner().invoke(main, ["report", *map(str, real_runs), "--players", "3", "--out", str(tmp_path / "r")])
    _one_line_error(res, "selection is empty", "3 players")
    res = CliRunner().invoke(main, ["report", str(real_runs[0]), "--out", str(real_runs[1])])
    _one_line_error(res, "not an evora report", "nothing is deleted")
    assert (real_runs[1] / "manifest.json").exists()
    res = CliRunner().invoke(main, ["report", str(real_runs[1]), "--players", "2", "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    assert set(pd.read_csv(tmp_path / "r" / "seat_advantage.csv")["n_players"]) == {2}


def test_the_main_job_plays_every_field_under_seat_rotation(tmp_path):
    from evora_sim.cli import DEFAULT_FIELD

    res = CliRunner().invoke(main, ["run", "--games", "8", "--jobs", "1", "--out", str(tmp_path / "runs"),
                                    "--report-dir", str(tmp_path / "rep"), "-q"])
    assert res.exit_code == 0, res.output
    for n, spec in DEFAULT_FIELD.items():
        m = json.loads((tmp_path / "runs" / f"p{n}" / "manifest.json").read_text())
        assert m["config"]["seat_rotation"] and m["config"]["strategies"] == spec.split(",")
        assert len(set(spec.split(","))) == n                       # distinct strategies
        assert m["config"]["games"] * n >= 8
    assert (tmp_path / "rep" / "report.html").exists()
    adv = pd.read_csv(tmp_path / "rep" / "seat_advantage.csv")
    assert set(adv["n_players"]) == {2, 3, 4} and adv["seat_rotation"].all()
    # the answer is printed where the run ends, before the report's path, as the report states it
    answer = (tmp_path / "rep" / "answer.txt").read_text(encoding="utf-8")
    assert res.stdout == answer + f"report: {tmp_path / 'rep' / 'report.html'}\n"
    paragraphs = []
    for line in answer.splitlines():
        if line.startswith("  "):
            paragraphs[-1] += " " + line.strip()
        else:
            paragraphs.append(line)
    assert [p.split(":")[0] for p in paragraphs] == ["2 players", "3 players", "4 players"]
    page = " ".join((tmp_path / "rep" / "report.md").read_text(encoding="utf-8").split())
    for p in paragraphs:
        assert f"**{p.split(': ', 1)[1]}**" in page, p
    assert max(len(line) for line in answer.splitlines()) <= 100


def test_the_answer_leads_with_the_largest_seat_deviation_named_in_words():
    """Issue 41: the answer led with the first seat even when the last deviated three times as much."""
    from types import SimpleNamespace

    from analysis.brief import answers

    rates = [0.232, 0.232, 0.238, 0.298]
    adv = pd.DataFrame({"n_players": 4, "seat": range(4), "win_rate": rates, "ci_lo": [r - 0.004 for r in rates],
                        "ci_hi": [r + 0.004 for r in rates], "diff": [r - 0.25 for r in rates], "significant": True,
                        "negligible": False, "mean_score": [86.4, 86.2, 86.4, 86.5], "games": 10_000})
    tests = pd.DataFrame({"n_players": [4], "unfairness": [0.028], "unfairness_lo": [0.025], "unfairness_hi": [0.031],
                          "significant": [True], "p": [1e-9], "negligible": [False]})
    run = SimpleNamespace(manifest={"config": {"players": 4}})
    a = answers(adv, tests, [run], {})[0]
    assert a.lead.startswith("The last player wins 29.8% of 4-player games")
    assert a.details[0].startswith("The first player wins 23.2%")
    assert a.why.startswith("Why? ") and a.fix.startswith("What would fix it? evora explain RUN")
    three = answers(adv.query("seat < 3").assign(n_players=3, diff=[0.02, -0.05, 0.03]), tests.assign(n_players=3),
                    [SimpleNamespace(manifest={"config": {"players": 3}})], {})[0]
    assert three.lead.startswith("The second player wins")


def test_a_seeds_games_split_over_blocks_are_summed_in_seed_order():
    """seed_wins when a seed's rotations lie in different blocks (as the dashboard's statistics
    per kind of game hold them): each seed's wins summed, seeds in cluster order."""
    seats = synthetic_seats(2, 600, strategies=["a", "b"], strength={"a": 0.6, "b": 0.4}, seed=21)
    whole = T.frame_stats(seats).counts[2]
    parts = [T.frame_stats(seats[seats["game_id"] % 2 == rotation]).counts[2] for rotation in (1, 0)]
    merged = parts[0].merge(parts[1])
    assert len(merged.segments) == 2 and not merged._each_cluster_once()
    reference = seats.pivot_table(index="cluster", columns="seat", values="win", aggfunc="sum").to_numpy()
    np.testing.assert_array_equal(merged.seed_wins(), reference)
    np.testing.assert_array_equal(whole.seed_wins(), reference)
