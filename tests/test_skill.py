"""evora skill: the verdict statistics (their level shown by simulation), the rungs' ratings, the
ladder's plan and resume, its bad input, and the report's Skill section."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from analysis.skill import half_width_se, ratings_from_wins, trend, verdict
from analysis.stats import ALPHA, wilson
from scipy import stats
from cli_results import ok, one_error_line
from evora_sim.cli import main
from evora_sim.ladder import default_ladder, parse_ladder
from evora_sim.manifest import RunError


# ---------------------------------------------------------------------------------------------
# the trend test keeps its level at "no trend", and finds a real one
# ---------------------------------------------------------------------------------------------
def _rates(p_by_rung, n, rng):
    k = rng.binomial(n, p_by_rung)
    lo, hi = wilson(k, n)
    return k / n, lo, hi


def test_trend_test_rejects_at_most_its_level_when_skill_changes_nothing():
    """Five rungs with the same true win rate (at a fair 25% and at a skewed 10%): the slope's
    two-sided test rejects in about 5% of ladders, not more (binomial margin for 4,000)."""
    rng = np.random.default_rng(12)
    for p in (0.25, 0.10):
        rejected = 0
        sims = 4000
        for _ in range(sims):
            v, lo, hi = _rates(np.full(5, p), 400, rng)
            rejected += trend(v, half_width_se(lo, hi))[2] < ALPHA
        rate = rejected / sims
        assert rate < ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / sims), (p, rate)
        assert rate > 0.02, (p, rate)            # a test that never rejects would also pass the line above


def test_trend_test_finds_a_rate_that_climbs_with_skill():
    rng = np.random.default_rng(13)
    found = 0
    for _ in range(300):
        v, lo, hi = _rates(np.linspace(0.25, 0.31, 5), 2000, rng)
        found += trend(v, half_width_se(lo, hi))[2] < ALPHA
    assert found / 300 > 0.9


def test_heterogeneity_test_keeps_its_level_and_sees_a_rise_and_fall():
    from analysis.skill import heterogeneity

    rng = np.random.default_rng(14)
    sims = 3000
    rejected = sum(heterogeneity(v, half_width_se(lo, hi)) < ALPHA
                   for v, lo, hi in (_rates(np.full(5, 0.4), 300, rng) for _ in range(sims)))
    assert 0.02 < rejected / sims < ALPHA + 3 * np.sqrt(ALPHA * (1 - ALPHA) / sims)
    bump = np.array([0.32, 0.44, 0.44, 0.44, 0.32])           # no linear trend, clearly not flat
    v, lo, hi = _rates(bump, 2000, rng)
    assert heterogeneity(v, half_width_se(lo, hi)) < 1e-6
    assert trend(v, half_width_se(lo, hi))[2] > 0.01


def test_trend_slope_is_the_weighted_least_squares_slope():
    slope, se, p = trend([1.0, 2.0, 3.0, 4.0], [0.5, 0.5, 0.5, 0.5])
    assert slope == pytest.approx(1.0)
    assert se == pytest.approx(0.5 / np.sqrt(5.0))         # sum of (x - mean)^2 = 5
    assert p == pytest.approx(2 * 3.87e-6, rel=0.01)          # z = 2 sqrt(5) = 4.47


# ---------------------------------------------------------------------------------------------
# verdicts
# ---------------------------------------------------------------------------------------------
def _v(values, significant, null=0.25, slope=0.0, trend_significant=False, half=0.02, varies=False):
    values = np.asarray(values, dtype=float)
    return verdict(values, values - half, values + half, significant, null, slope, trend_significant, varies)


def test_each_verdict():
    assert _v([0.30, 0.31, 0.30], [True, True, True]) == "holds at every rung"
    assert _v([0.27, 0.30, 0.33], [False, True, True], slope=0.03, trend_significant=True) == "grows with skill"
    assert _v([0.20, 0.22, 0.24], [True, True, False], slope=0.02, trend_significant=True) == "shrinks with skill"
    assert _v([0.30, 0.25, 0.20], [True, False, True], slope=-0.05, trend_significant=True) == "reverses"
    # a trend across "no effect" whose ends are not significant after the ladder's correction
    assert _v([0.21, 0.25, 0.29], [False, False, False], slope=0.04, trend_significant=True) != "reverses"
    assert _v([0.24, 0.27, 0.30], [False, True, True], slope=0.03, trend_significant=True) == "grows with skill"
    assert _v([0.26, 0.24, 0.25], [False, False, False]) == "no effect at any rung"
    assert _v([0.30, 0.24, 0.25], [True, False, False]) == "some rungs only"
    assert _v([0.30, 0.28, 0.31], [True, False, True]) == "some rungs only"
    assert _v([0.24, 0.26, 0.25], [False, False, False]) == "no effect at any rung"
    # a figure without a no-effect value (game length): only its trend is said
    assert _v([20.0, 15.0, 11.0], [None] * 3, null=np.nan, slope=-4.5, trend_significant=True) == "shrinks with skill"
    # ... and without a trend or a difference, no claim that it holds
    assert _v([20.0, 20.5, 19.8], [None] * 3, null=np.nan, slope=0.0) == "no difference found between rungs"
    assert _v([0.3, 0.45, 0.3], [None] * 3, null=np.nan, slope=0.0, varies=True) == "varies with skill, no trend"


# ---------------------------------------------------------------------------------------------
# the ladder's verdicts together: their level under no effect anywhere, their power at a trend
# ---------------------------------------------------------------------------------------------
CARDS, SE_CARD = 16, 0.01
STATES_NOTHING = ("no effect at any rung", "no difference found between rungs")


def _ladder_table(rng, seat0, rungs=5, seeds=1000):
    """A simulated ladder's figure table (:func:`analysis.skill.figure_table`'s rows) with eleven
    figures, built as the rungs' reports build them: 4 seats' win rates (``seeds`` seeds of 4
    games, seat 0 winning ``seat0[rung]``, the others the rest equally; Wilson intervals, exact
    tests, Holm over the seats), the seat unfairness, the 3 strongest of 16 cards of no effect
    (normal estimates, Holm over the cards, chosen over the rungs by the report's own rule), game length and two end triggers' shares (the same at
    every rung). The rungs are independent (no shared deals: the tests' worst case)."""
    import pandas as pd

    from analysis.fairness import seat_fairness
    from analysis.skill import _row, _strongest
    from analysis.stats import binom_p, holm

    rows, cards = [], []
    for r in range(rungs):
        p = np.r_[seat0[r], np.full(3, (1 - seat0[r]) / 3)]
        wins = rng.multinomial(4, p, size=seeds)
        total, games = wins.sum(axis=0), 4 * seeds
        lo, hi = wilson(total, games)
        adj = holm([binom_p(k, games, 0.25) for k in total])
        here = [{**_row(f"seat {s}", f"Seat {s}", "rate", 0.25, total[s] / games, lo[s], hi[s], games,
                        adj[s] < ALPHA), "p": adj[s]} for s in range(4)]
        f = seat_fairness(wins)
        here.append({**_row("unfairness", "Seat unfairness", "unfairness", 0.0, f.rms, f.rms_lo, f.rms_hi, seeds,
                             f.p < ALPHA), "p": f.p})
        for fig, mean, se in (("rounds", 20.0, 0.1), ("end a", 0.6, 0.01), ("end b", 0.4, 0.01)):
            v = rng.normal(mean, se)
            here.append({**_row(fig, fig, "share", np.nan, v, v - 1.96 * se, v + 1.96 * se, games), "p": np.nan})
        est = rng.normal(0.0, SE_CARD, CARDS)
        p_adj = holm(2 * stats.norm.sf(np.abs(est) / SE_CARD))
        cards.append(pd.DataFrame({"card": np.arange(CARDS), "name": [f"card {c}" for c in range(CARDS)],
                                   "adj_diff": est, "adj_lo": est - 1.96 * SE_CARD, "adj_hi": est + 1.96 * SE_CARD,
                                   "seat_games_used": games, "significant": p_adj < ALPHA, "p_adj_holm": p_adj}))
        rows += [{**x, "rung": r} for x in here]
    return pd.DataFrame(rows + _strongest(cards, "card", "card"))


def test_a_ladder_where_nothing_has_an_effect_states_a_finding_in_at_most_5_percent():
    """No effect anywhere (fair seats, null cards, the same game at every rung), five rungs,
    eleven figures: the share of ladders that state any finding stays within the binomial band
    of 5%. Tested one rung at a time, uncorrected across the rungs, most such ladders stated one
    ('some rungs only', 'reverses')."""
    from analysis.skill import verdicts

    rng = np.random.default_rng(42)
    sims, stated = 300, 0
    for _ in range(sims):
        v = verdicts(_ladder_table(rng, np.full(5, 0.25)))
        assert len(v) == 11
        stated += bool((~v["verdict"].isin(STATES_NOTHING)).any())
    assert stated / sims <= stats.binom.ppf(0.999, sims, ALPHA) / sims, stated / sims


def test_a_planted_trend_is_found_at_the_power_its_test_has():
    """Seat 0's win rate climbs from 25% to 28.6% over five rungs: its verdict is 'grows with
    skill' at least as often as the trend test alone would reject at the family's strictest
    Holm level (alpha over every test of the ladder), and it is never called anything that
    contradicts the trend."""
    from analysis.skill import verdicts

    rng = np.random.default_rng(43)
    rates = np.linspace(0.25, 0.286, 5)
    ses = np.sqrt(rates * (1 - rates) / 4000)
    slope, se, _ = trend(rates, ses)
    sims, grows, tests = 200, 0, []
    for _ in range(sims):
        table = _ladder_table(rng, rates)
        v = verdicts(table).set_index("figure")
        tests.append(int(np.isfinite(v[["p_trend", "p_same"]].to_numpy()).sum()
                         + np.isfinite(table.loc[np.isfinite(table["null"]), "p"]).sum()))
        assert v.loc["seat 0", "verdict"] in ("grows with skill", "some rungs only", "no effect at any rung")
        grows += v.loc["seat 0", "verdict"] == "grows with skill"
    bound = stats.norm.sf(stats.norm.isf(ALPHA / (2 * max(tests))) - slope / se)
    assert 0.5 < bound < 0.9                              # a region where the check is sharp
    assert grows / sims >= stats.binom.ppf(0.001, sims, bound) / sims, (grows / sims, bound)


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
            "--out", str(base / "runs"), "--report-dir", str(base / "rep"), "-q"]
    result = CliRunner().invoke(main, args)
    ok(result)
    return base, args


def test_skill_writes_a_report_with_the_skill_section(small_ladder):
    base, _ = small_ladder
    page = (base / "rep" / "report.md").read_text(encoding="utf-8")
    assert "## Skill" in page and "Skill ladder" in page and "Against skill" in page
    for name in ("skill_verdicts", "skill_figures", "skill_ratings", "skill_steps"):
        assert (base / "rep" / f"{name}.csv").is_file()
    plan = json.loads((base / "runs" / "ladder.json").read_text())
    assert plan["rungs"] == CHEAP.split(";") and plan["seeds"] == 40 and plan["duel_seeds"] == 20
    configs = [json.loads((base / "runs" / f"r{i}" / "manifest.json").read_text())["config"] for i in (1, 2, 3)]
    assert len({(c["seed"], c["games"], c["rules_hash"]) for c in configs}) == 1      # common random numbers


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
    # the sections after Skill describe the top rung: the answer quotes its best fix
    assert "What would fix it? Best of the rule changes replayed on the same seeds" in page


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
    from analysis.skill import Ladder, check_ladder, figure_table, verdicts
    from analysis.tables import open_runs
    from evora_sim.rules import load_rules
    from evora_sim.runner import simulate

    rules = load_rules(None, overrides) if overrides else load_rules()
    for i, rung in enumerate(CHEAP.split(";")):
        simulate(4, 300, rung, seed=515, out=tmp_path / name / f"r{i}", jobs=1, rules=rules)
    ladder: Ladder = check_ladder(open_runs([tmp_path / name / f"r{i}" for i in range(3)]))
    table = verdicts(figure_table(ladder, min_effect=0.01)).set_index("figure")
    return table.loc["seat 0"]


def test_planted_first_seat_edge_that_needs_planning_grows_with_skill(tmp_path):
    planted = _seat0_verdict(tmp_path, PLANTED, "planted")
    assert planted["verdict"] == "grows with skill", planted.to_dict()
    plain = _seat0_verdict(tmp_path, (), "plain")          # the same seeds under the default rules
    assert plain["verdict"] != "grows with skill", plain.to_dict()


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

    for run in ("r1", "r2", "duels/r1-r2"):
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

    monkeypatch.setattr(ladder, "default_ladder", lambda n: ["random", "balanced", "greedy"])
    monkeypatch.setattr(ladder, "size_to_budget", lambda *a, **k: (24, 12, 0.1))
    result = CliRunner().invoke(main, ["run", "--games", "12", "--skill", "--jobs", "1", "-q",
                                       "--out", str(tmp_path / "runs"), "--report-dir", str(tmp_path / "rep")])
    ok(result)
    plan = json.loads((tmp_path / "runs" / "skill" / "ladder.json").read_text())
    assert plan["rungs"] == ["random", "balanced"] and plan["seeds"] == 24
    page = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "## Skill" in page and "### 2 players" in page and "### 4 players" in page


def test_rules_without_two_players_are_refused_before_any_game(tmp_path):
    result = CliRunner().invoke(main, ["skill", "-n", "3", "--ladder", "random;greedy", "--games", "4",
                                       "--set", "players.min=3", "--out", str(tmp_path / "o"),
                                       "--report-dir", str(tmp_path / "r")])
    assert "2-player duels" in one_error_line(result)
    assert list(tmp_path.iterdir()) == []


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


def test_the_pilot_stops_at_its_deadline_and_times_each_duel_player_once():
    """The pilot is bounded: past its deadline (an injected clock: no sleeping) it stops with the
    steps it had timed. A duel pair's cost comes from its two players' own games."""
    import evora_sim.ladder as ladder
    from evora_sim import warmup
    from evora_sim.rules import load_rules

    rungs = ["random", "greedy(plan=action)", "balanced"]
    now, calls = [0.0], []

    def timer(n, spec, seed, rules):
        calls.append((n, spec))
        now[0] += 10.0                      # every step "takes" 10 s of the clock
        return {"random": 1.0, "greedy(plan=action)": 2.0, "balanced": 4.0}[spec]

    real = warmup.compile_now
    warmup.compile_now = lambda: None
    try:
        costs = ladder.pilot(2, rungs, load_rules(), 1, clock=lambda: now[0], timer=timer)
        assert len(calls) == 3 + 3                     # a seed a rung, a game a duel player: not one per pair
        assert costs["random|balanced"] == 5.0 and costs["greedy(plan=action)|balanced"] == 6.0
        calls.clear()
        now[0] = 0.0
        with pytest.raises(ladder.PilotOverrun) as stop:
            ladder.pilot(2, rungs, load_rules(), 1, deadline=25.0, clock=lambda: now[0], timer=timer)
        assert len(calls) == 3 and (stop.value.done, stop.value.total) == (3, 6)
    finally:
        warmup.compile_now = real


def test_the_fixes_sentence_names_a_fix_only_when_its_change_is_significant():
    from analysis.skill_report import fixes_line

    def rung(i, comp_sig):
        return pd.DataFrame([
            {"rung": i, "rank": 1, "arm": "seat compensation (starting VP)", "unfairness": 0.005, "lo": 0.001,
             "hi": 0.011, "significant": comp_sig},
            {"rung": i, "rank": 2, "arm": "the run's rules", "unfairness": 0.024, "lo": 0.018, "hi": 0.029,
             "significant": False}])

    line = fixes_line(pd.concat([rung(0, False), rung(1, True)], ignore_index=True), ["greedy", "expert"])
    assert "at rung 1 (greedy) the rules' seat unfairness is 2.4 pp (1.8–2.9) and no rule change lowers it " \
           "significantly" in line
    assert "at rung 2 (expert) the rules' seat unfairness is 2.4 pp (1.8–2.9) and the best fix, seat compensation " \
           "(starting VP), leaves 0.5 pp (0.1–1.1)" in line
