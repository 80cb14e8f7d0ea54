"""When cards are played (issue 41: a card finding explained by the game states it is played in).

- The game loop's counts (the cards table's plays_leading, plays_final_round, play_round_sum;
  the seats table's turns_leading) equal the same counts made in Python by re-stepping each
  game from its action log, for the compiled driver and for a table with a custom Python seat.
- The ratio intervals cover at their nominal rate, and the leader test holds its size at "no
  difference" (seeded simulation).
- The report's card sentence says "more" or "fewer" only when Holm's test does, and a run
  without the columns (an earlier version's) is still reported, without them.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evora_sim import api
from evora_sim import engine as E
from evora_sim import layout as L
from evora_sim.batch import play_batch
from evora_sim.recorded import PLAY_STATES
from evora_sim.rules import load_rules
from evora_sim.runner import Execution, simulate
from evora_sim.result_tables import batch_tables

from analysis import scan as S
from analysis.playstates import EXACT_PLAYS, timing_clause
from analysis.report import analyse
from analysis.stats import clustered_share, conditional_share_p, ratio_ci, ratio_diff
from analysis.tables import card_value, open_runs, scan

RULES = load_rules()
EXAMPLES = "strategies/examples"


def recount(n: int, seed: int, log: np.ndarray):
    """Re-step the game of ``seed`` from ``log``: per seat the turns begun leading outright on the
    totals of the final scoring as if the game ended then, and per (seat, card) the plays made in
    such a turn, after the end was triggered, and the rounds they were played in."""
    state = api.new_game(RULES, n, seed)
    s = state.arr
    totals = np.zeros(L.MAXP, dtype=np.int64)
    turns_leading = np.zeros(n, dtype=np.int64)
    counts = {name: np.zeros((n, L.NTRACK), dtype=np.int64) for name in PLAY_STATES}
    seen_turn, leads = -1, False
    for a in log:
        a = int(a)
        if s[L.G_PHASE] != L.PH_SETUP and s[L.G_NTURNS] != seen_turn:
            seen_turn = int(s[L.G_NTURNS])
            p = int(s[L.G_CUR])
            E.leader_now(s.copy(), RULES.packed, totals, 0)
            mine = totals[p]
            leads = all(totals[q] < mine for q in range(n) if q != p)
            turns_leading[p] += leads
        if L.A_PLAY <= a < L.A_PLAY + L.NTRACK:
            p, c = int(s[L.G_CUR]), a - L.A_PLAY
            counts["plays_leading"][p, c] += leads
            counts["plays_final_round"][p, c] += s[L.G_END_TRIGGER] != 0
            counts["play_round_sum"][p, c] += int(s[L.G_ROUND])
        api.apply_action(state, a)
    assert api.is_terminal(state)
    return turns_leading, counts


def check_tables(n, seeds, field):
    res = play_batch(RULES, n, seeds, field, record_actions=True)
    t = batch_tables(res, np.arange(len(seeds)), 0, [str(x) for x in field])
    cards, seats, games = t["cards"], t["seats"], t["games"]
    plays_seen = 0
    for g, seed in enumerate(seeds):
        turns_leading, counts = recount(n, int(seed), games["actions"][g])
        mine = seats[seats.game_id == g].sort_values("seat")
        np.testing.assert_array_equal(mine["turns_leading"].to_numpy(), turns_leading)
        rows = cards[cards.game_id == g]
        got = {name: np.zeros((n, L.NTRACK), dtype=np.int64) for name in PLAY_STATES}
        card = rows["card"].cat.codes.to_numpy()
        for name in PLAY_STATES:
            got[name][rows["seat"].to_numpy(), card] = rows[name].to_numpy()
        for name in PLAY_STATES:
            np.testing.assert_array_equal(got[name], counts[name], err_msg=f"{name}, seed {seed}")
        plays_seen += int(rows["plays"].sum())
        # every play is counted in exactly one round, and no more often "leading" than played
        assert (rows["plays_leading"] <= rows["plays"]).all() and (rows["plays_final_round"] <= rows["plays"]).all()
        assert (rows["play_round_sum"] >= rows["plays"]).all()
        assert (rows["play_round_sum"] <= rows["plays"] * int(games["rounds"][g])).all()
    assert plays_seen > 0, "the games played no card: nothing was checked"


@pytest.mark.parametrize("n", [2, 3, 4])
def test_the_loop_counts_when_cards_are_played_as_a_python_recount_does(n):
    check_tables(n, np.arange(100 + n, 112 + n), ["cardheights"] * n)


def test_random_players_and_a_custom_python_seat_are_counted_alike(monkeypatch):
    monkeypatch.syspath_prepend(".")
    check_tables(4, np.arange(30, 36), ["random", f"{EXAMPLES}/cautious.py:Cautious", "cardheights", "random"])


# ---------------------------------------------------------------------------------------------
# the intervals
# ---------------------------------------------------------------------------------------------
def _expected(draw, f=lambda r: r) -> float:
    """The population value of a group-level rate (what a new set of seeds estimates)."""
    return float(f(draw(np.random.default_rng(0), 4_000_000)).mean())


@pytest.mark.parametrize("p", [0.005, 0.02, 0.12, 0.5, 0.9])
@pytest.mark.parametrize("groups", [60, 300])
def test_the_share_interval_covers_at_its_nominal_rate(p, groups):
    """Over 2,000 seeded simulations the 95% interval of a share (hits among plays, the plays of
    a group sharing a random rate, so not independent) holds the population share 93-97.5% of the
    time, from a rare share to a common one. The t interval of ``ratio_ci`` does not at 0.5-2%
    (82-92%), hence the Wilson form for shares."""
    def draw(rng, k):
        return np.clip(rng.normal(p, p * 0.3, k), 0, 1)

    truth = _expected(draw)
    rng = np.random.default_rng(4101)
    reps, hits = 2000, 0
    for _ in range(reps):
        x = rng.poisson(rng.gamma(2.0, 3.0, groups))
        y = rng.binomial(x, draw(rng, groups))
        _, lo, hi = clustered_share(y, x)
        hits += lo <= truth <= hi
    assert 0.93 <= hits / reps <= 0.975, hits / reps


def test_the_mean_place_interval_covers_at_its_nominal_rate():
    """The t interval of a ratio of sums (the plays' mean place in the game) covers 93-97%."""
    rng = np.random.default_rng(4103)
    reps, hits = 2000, 0
    for _ in range(reps):
        x = rng.poisson(rng.gamma(2.0, 3.0, 80))
        centre = rng.uniform(0.4, 0.8, 80)                 # a seed's plays come at its own pace
        y = np.array([np.clip(rng.normal(c, 0.15, k), 0.05, 1).sum() for c, k in zip(centre, x)])
        _, lo, hi = ratio_ci(y, x)
        hits += lo <= 0.6 <= hi
    assert 0.93 <= hits / reps <= 0.97, hits / reps


@pytest.mark.parametrize("effect", [0.0, 0.05])
def test_the_leader_difference_covers_and_holds_its_size(effect):
    """A card played by leaders at the rate they take turns (no effect) is called different in
    3-7% of 2,000 simulations, and the interval covers the population difference 93-97% of the
    time, with and without an effect; a group's plays and turns share its rate, as in a game."""
    def draw(rng, k):
        return np.clip(rng.normal(0.12, 0.04, k), 0.01, 0.5)

    truth = _expected(draw, lambda r: np.clip(r + effect, 0, 1)) - _expected(draw)
    rng = np.random.default_rng(4102 + int(effect * 100))
    reps, covered, rejected = 2000, 0, 0
    for _ in range(reps):
        lead_rate = draw(rng, 80)
        t = rng.poisson(60, 80) + 1
        b = rng.binomial(t, lead_rate)
        x = rng.poisson(3, 80)
        y = rng.binomial(x, np.clip(lead_rate + effect, 0, 1))
        d, lo, hi, pv = ratio_diff(y, x, b, t)
        covered += lo <= truth <= hi
        rejected += pv < 0.05
    assert 0.93 <= covered / reps <= 0.97, covered / reps
    if effect == 0.0:
        assert 0.03 <= rejected / reps <= 0.07, rejected / reps


# ---------------------------------------------------------------------------------------------
# the words
# ---------------------------------------------------------------------------------------------
def _row(**kw):
    row = {"mean_place": 0.7, "mean_place_lo": 0.68, "mean_place_hi": 0.72, "share_leading": 0.3,
           "share_leading_lo": 0.25, "share_leading_hi": 0.35, "turns_leading": 0.12, "turns_leading_lo": 0.11,
           "turns_leading_hi": 0.13, "leading_diff": 0.18, "leading_p_holm": 0.001}
    row.update(kw)
    return row


def test_the_sentence_says_more_or_fewer_only_when_holm_does():
    assert "more than the 12.0% (11.0–13.0) of all turns (Holm p = 0.001)" in timing_clause(_row())
    assert "played late, at 70.0% (68.0–72.0) of the game on average" in timing_clause(_row())
    assert "fewer than" in timing_clause(_row(leading_diff=-0.05, share_leading=0.07))
    quiet = timing_clause(_row(leading_p_holm=0.2))
    assert "no significant difference" in quiet and "more" not in quiet
    assert "early" in timing_clause(_row(mean_place=0.4, mean_place_lo=0.38, mean_place_hi=0.42))
    assert timing_clause(_row(mean_place=np.nan)) == ""           # a run that does not record it


def test_a_run_without_the_columns_is_reported_without_them(tmp_path, monkeypatch):
    run = simulate(4, 40, "cardheights", seed=3, out=tmp_path / "run",
                   execution=Execution(chunk_size=40, command="test")).out
    runs = open_runs([run])
    assert "mean_place" in card_value(scan(runs)).columns
    names = [t.name for sec in analyse(runs, n_boot=20).sections for t in sec.tables]
    assert "card_timing" in names
    monkeypatch.setattr(S, "has_play_states", lambda r: False)
    assert "mean_place" not in card_value(scan(runs)).columns
    names = [t.name for sec in analyse(runs, n_boot=20).sections for t in sec.tables]
    assert "card_value" in names and "card_timing" not in names


@pytest.mark.parametrize("plays, groups, clumping", [(108, 1000, 0.05), (170, 2000, 0.02)])
def test_the_leader_test_holds_its_size_for_rarely_played_cards(plays, groups, clumping):
    """Issue 50: placebo cards played about 100-170 times, most seed groups holding no play and a
    few several, each play begun leading at its group's own rate of turns begun leading: the t test
    on the ratio difference rejected 6.5-8%; the exact conditional test the table uses below
    EXACT_PLAYS rejects 4-6% of 2,000 simulations at a nominal 5%."""
    assert plays < EXACT_PLAYS
    rng = np.random.default_rng(5000 + plays)
    reps, exact, t_test = 2000, 0, 0
    for _ in range(reps):
        rate = np.clip(rng.normal(0.2, 0.25, groups), 0.0, 0.9)
        t = rng.poisson(60, groups) + 1
        b = rng.binomial(t, rate)
        x = rng.negative_binomial(clumping, clumping / (clumping + plays / groups), groups)
        y = rng.binomial(x, b / t)                      # a play is one of its group's turns, at random
        exact += conditional_share_p(y, x, b, t) < 0.05
        t_test += ratio_diff(y, x, b, t)[3] < 0.05
    print(f"{plays} plays: exact {exact / reps:.4f}, t {t_test / reps:.4f}")
    assert 0.04 <= exact / reps <= 0.06, exact / reps


def test_the_exact_leader_test_is_the_binomial_mid_p_when_every_group_shares_a_rate():
    x = np.array([1, 0, 2, 3, 1, 0, 5, 8])               # 20 plays
    t, b = np.full(8, 50), np.full(8, 15)                  # every group leads 30% of its turns
    for k in (0, 3, 6, 11, 20):
        y = np.zeros(8)
        y[6] = min(k, 5)
        y[7] = k - y[6]
        law = stats.binom(20, 0.3)
        mid = min(1.0, 2 * min(law.cdf(k - 1) + 0.5 * law.pmf(k), law.sf(k) + 0.5 * law.pmf(k)))
        assert conditional_share_p(y, x, b, t) == pytest.approx(mid, abs=1e-12)
