"""Card value by experiment (issue 14, part 4): the statistics on simulated paired data, where
the truth is known (coverage at "no effect", the power for a planted effect, the placebo
card's false-positive rate), then the command on real games.

The simulated design is the command's: per seed, every seat given the card in turn (G given
seats) under every seat rotation (R), each game paired with the same game without the card,
whose winner is one seat of the table.
"""
from __future__ import annotations

import numpy as np
import pytest

from analysis.cardvalue_stats import given_effect, paired_power, removal_table, seeds_for, strategy_change

N = 4                      # players: given seats = rotations = 4
NOT_EXERCISED = "not exercised: no game differed"      # what a card that changed no game reads


def _mc_band(rate: float, reps: int) -> float:
    """Three Monte Carlo standard errors of an observed rate."""
    return 3 * np.sqrt(rate * (1 - rate) / reps)


def _base_winners(rng, q, reps_shape):
    """The winner of each game without the card: seat k with the seed's chance q[..., k]."""
    u = rng.random(reps_shape)[..., None]
    return (u > np.cumsum(q, axis=-1)).sum(axis=-1)


def _paired(rng, seeds: int, kappa: float, stay: float, change: float = 0.0):
    """Paired outcomes (won_given, won_base), shape (seeds, N, N), of a clustered design: each seed
    deals its seats chances q ~ Dirichlet(kappa / N); the game without the card is won by seat k
    with chance q_k; the game with it is the same game (the same winner) with chance ``stay``,
    otherwise a new game in which the given seat g wins with chance q_g + change / (1 - stay)
    (the others in proportion). True change in the given seat's win rate: ``change``."""
    q = rng.dirichlet(np.full(N, kappa / N), size=seeds)                 # (seeds, N)
    base = _base_winners(rng, q[:, None, :], (seeds, N))                 # (seeds, rotation)
    won_base = base[:, None, :] == np.arange(N)[None, :, None]           # (seeds, g, r)
    boost = change / (1 - stay)
    p_g = np.clip(q + boost, 0, 1)                                       # (seeds, g)
    new_win = rng.random((seeds, N, N)) < p_g[:, :, None]
    kept = rng.random((seeds, N, N)) < stay
    return np.where(kept, won_base, new_win), won_base


def test_given_card_intervals_cover_no_effect_at_their_nominal_rate():
    """Shuffled labels: the card changes the game but not the odds (and the seeds deal unequal
    seats): the 95% interval of the change covers 0 in 95% of replicates."""
    rng = np.random.default_rng(11)
    reps, covered = 2000, 0
    for _ in range(reps):
        e = given_effect(*_paired(rng, 200, kappa=8.0, stay=0.3))
        covered += e["lo"] <= 0 <= e["hi"]
    assert abs(covered / reps - 0.95) < _mc_band(0.95, reps)


def test_given_card_planted_half_point_is_found_at_the_power_the_test_should_have():
    """A planted +0.5 point change, no clustering beyond the design (the given seat wins each of
    its games with chance 1/4 + 0.005): the detection rate equals the noncentral-t power computed
    from the design's own variance."""
    rng = np.random.default_rng(12)
    seeds, change, reps = 2400, 0.005, 1000
    p1 = 1 / N + change
    seed_sd = np.sqrt(p1 * (1 - p1) / (N * N))      # the baseline part of a seed is exactly 1/n
    expected = paired_power(change, seed_sd, seeds)
    assert 0.4 < expected < 0.8                      # a power the check can tell from 5% and 100%
    found = 0
    for _ in range(reps):
        base = rng.integers(0, N, size=(seeds, N))                           # (seeds, rotation)
        won_base = base[:, None, :] == np.arange(N)[None, :, None]
        won_given = rng.random((seeds, N, N)) < p1
        e = given_effect(won_given, won_base)
        found += e["p"] < 0.05 and e["change"] > 0
    assert abs(found / reps - expected) < _mc_band(expected, reps)


def test_placebo_card_false_positive_rate_is_five_percent():
    """A placebo card: its game is played anew (every game may change) but its holder's chance is
    the seat's own. p < 0.05 in 5% of replicates, within Monte Carlo error."""
    rng = np.random.default_rng(13)
    reps, hits = 2000, 0
    for _ in range(reps):
        hits += given_effect(*_paired(rng, 150, kappa=4.0, stay=0.0))["p"] < 0.05
    assert abs(hits / reps - 0.05) < _mc_band(0.05, reps)


def test_removed_card_strategy_intervals_cover_no_effect():
    """Taking out a card that changes games but not the odds: each strategy's paired interval
    covers 0 at its nominal rate."""
    rng = np.random.default_rng(14)
    reps, covered = 1500, 0
    for _ in range(reps):
        q = rng.dirichlet(np.full(N, 2.0), size=300)                       # per seed, per strategy
        w = _base_winners(rng, q[:, None, :], (300, N))                    # (seeds, rotation): strategy
        wo = np.where(rng.random((300, N)) < 0.2, w, _base_winners(rng, q[:, None, :], (300, N)))
        wins_w = (w[:, :, None] == np.arange(N)).sum(axis=1)               # (seeds, strategy)
        wins_wo = (wo[:, :, None] == np.arange(N)).sum(axis=1)
        e = strategy_change(wins_w[:, 0], wins_wo[:, 0], N)
        covered += e["lo"] <= 0 <= e["hi"]
    assert abs(covered / reps - 0.95) < _mc_band(0.95, reps)


def test_given_effect_reads_the_design():
    won_given = np.zeros((3, N, N), dtype=bool)
    won_given[:, 0, :] = True                        # seat 0, given the card, wins all its games
    won_base = np.zeros((3, N, N), dtype=bool)
    won_base[:, 1, :] = True                         # without it seat 1 wins every game
    e = given_effect(won_given, won_base)
    assert e["rate_given"] == pytest.approx(0.25) and e["rate_without"] == pytest.approx(0.25)
    assert e["change"] == 0 and e["games"] == 3 * N * N and e["seeds"] == 3
    assert e["discordance"] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="share one shape"):
        given_effect(won_given, won_base[:2])


def test_given_value_by_the_strategy_holding_the_card():
    """Rotation r seats strategy i at seat (i + r) mod n: a card that only strategy 0 turns into
    wins shows in position 0 alone."""
    from analysis.cardvalue_stats import given_by_position

    seeds = 40
    pos = (np.arange(N)[:, None] - np.arange(N)[None, :]) % N              # (given seat, rotation)
    won_given = np.broadcast_to(pos == 0, (seeds, N, N)).copy()
    base = np.random.default_rng(1).integers(0, N, size=(seeds, N))
    won_base = base[:, None, :] == np.arange(N)[None, :, None]
    rows = given_by_position(won_given, won_base)
    assert [r["position"] for r in rows] == list(range(N)) and all(r["games"] == seeds * N for r in rows)
    assert rows[0]["change"] == pytest.approx(1 - won_base[:, pos == 0].mean())
    for r in rows[1:]:
        assert r["change"] == pytest.approx(-won_base[:, pos == r["position"]].mean())


def test_removal_table_holm_over_every_strategy_and_card():
    rng = np.random.default_rng(3)
    wins = {c: (rng.integers(0, 2, (50, N)), rng.integers(0, 2, (50, N))) for c in ("a", "b")}
    per_seat = {c: (np.eye(N)[rng.integers(0, N, 50)] * N, np.eye(N)[rng.integers(0, N, 50)] * N) for c in wins}
    strat, fair = removal_table(wins, per_seat, ["s0", "s1", "s2", "s3"], N)
    assert len(strat) == 2 * N and len(fair) == 2
    assert (strat["p_holm"] >= strat["p"]).all() and strat["p_holm"].max() <= 1
    assert list(fair.columns[:3]) == ["card", "unfairness_with", "unfairness_without"]


def test_a_card_that_changed_no_game_is_not_exercised_and_not_among_holms_tests(tmp_path):
    """A card whose given copy changed no game (an instant tile never taken) has no estimate:
    not '+0.00 (+0.00 to +0.00), p 1', but 'not exercised: no game differed', and the other
    cards' p-values are corrected over the cards that were exercised only. Likewise a card
    whose removal changed no strategy's wins in any seed, and tables written before this."""
    from analysis.cardvalue_stats import given_table, shown_by_strategy, shown_given

    rng = np.random.default_rng(5)
    effects = {"a": given_effect(*_paired(rng, 200, 2.0, 0.6, 0.05)),
               "b": given_effect(*_paired(rng, 200, 2.0, 0.6, 0.05))}
    same = np.zeros((200, N, N), dtype=bool)
    same[:, 0, :] = True
    effects["tile"] = given_effect(same, same)
    table = given_table(effects)
    tile = shown_given(table).iloc[-1]
    assert tile["Change in the given seat's win rate"] == NOT_EXERCISED and tile["p (Holm)"] == ""
    raw, holm = table.set_index("card")["p"], table.set_index("card")["p_holm"]
    assert holm[["a", "b"]].max() == pytest.approx(min(1.0, 2 * raw[["a", "b"]].max()))   # two tests
    assert np.isnan(holm["tile"]) and not table.set_index("card").loc["tile", "significant"]
    assert not effects["tile"]["exercised"] and effects["a"]["exercised"] and effects["b"]["exercised"]
    assert all(np.isnan(effects["tile"][k]) for k in ("change", "lo", "hi", "p"))
    # the removal table
    w = rng.integers(0, 3, (50, N))
    assert np.isnan(strategy_change(w[:, 0], w[:, 0], N)["p"])
    strat, _ = removal_table({"tile": (w, w)}, {"tile": (np.eye(N)[w[:, 0]] * N, np.eye(N)[w[:, 0]] * N)},
                             ["s0", "s1", "s2", "s3"], N)
    assert (shown_by_strategy(strat).iloc[0, 1:] == NOT_EXERCISED).all()
    # a folder written before: the tile read back without its estimate, Holm counted again
    import json

    from analysis.cardvalue_stats import SUMMARY_FILES, read_summary

    old = table.drop(columns="exercised")
    old.loc[old["card"] == "tile", ["change", "lo", "hi", "p"]] = [0.0, 0.0, 0.0, 1.0]
    old["p_holm"] = np.minimum(1.0, 3 * old["p"])
    (tmp_path / "summary").mkdir()
    old.to_csv(tmp_path / "summary" / SUMMARY_FILES["given"], index=False)
    (tmp_path / "search.json").write_text(json.dumps({"config": {}}), encoding="utf-8")
    again = read_summary(tmp_path)["given"].set_index("card")
    assert not again.loc["tile", "exercised"] and np.isnan(again.loc["tile", "p_holm"])
    assert again["p_holm"][["a", "b"]].tolist() == pytest.approx(holm[["a", "b"]].tolist())


def test_seeds_for_a_half_width():
    n = seeds_for(0.01, 0.1)
    assert 380 <= n <= 390                          # (1.96 x 0.1 / 0.01)^2 = 384, t a little wider


# ---------------------------------------------------------------------------------------------
# the command, on real games (2 players, 10 seeds a measure: seconds)
# ---------------------------------------------------------------------------------------------
SMALL = ["card-value", "-n", "2", "--strategies", "balanced,greedy", "--games", "40", "--remove-games", "20",
         "--jobs", "1", "-q"]


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A finished small experiment: (its folder, what the command printed)."""
    from click.testing import CliRunner

    from cli_results import ok
    from evora_sim.cli import main

    out = tmp_path_factory.mktemp("cardvalue") / "cv"
    return out, ok(CliRunner().invoke(main, SMALL + ["--out", str(out)]))


def test_card_value_command_writes_both_measures_beside_the_observed_table_and_resumes(small):
    import pandas as pd
    from click.testing import CliRunner

    from cli_results import ok
    from evora_sim.cli import main
    from evora_sim.layout import CARD_NAMES

    out, first = small
    assert "Change in the given seat's win rate" in first and "Each card removed" in first
    summary = out / "summary"
    given = pd.read_csv(summary / "card_value_given.csv")
    assert list(given["card"]) == list(CARD_NAMES)
    assert (given["seeds"] == 10).all() and (given["games"] == 40).all()
    measured = given[given["exercised"]]
    assert ((measured["lo"] <= measured["change"]) & (measured["change"] <= measured["hi"])).all()
    assert given.loc[~given["exercised"], "change"].isna().all()
    # the game without the card is the baseline's: its seat wins exactly 1 game in n
    assert np.allclose(given["rate_without"], 0.5)
    removed = pd.read_csv(summary / "card_value_removed.csv")
    assert len(removed) == 2 * len(CARD_NAMES) and set(removed["strategy"]) == {"balanced", "greedy"}
    assert len(pd.read_csv(summary / "card_value_removed_fairness.csv")) == len(CARD_NAMES)
    assert len(pd.read_csv(summary / "card_value_observed.csv")) == len(CARD_NAMES)
    by_strategy = pd.read_csv(summary / "card_value_given_by_strategy.csv")
    assert len(by_strategy) == 2 * len(CARD_NAMES) and (by_strategy["games"] == 20).all()
    md = (summary / "report.md").read_text()
    assert "Observed: played vs. not, adjusted" in md and "association" in md and "![card value](card_value.png)" in md
    assert (summary / "card_value.png").stat().st_size > 0
    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("*.parquet")}
    again = ok(CliRunner().invoke(main, SMALL + ["--out", str(out)]))      # finished: nothing replayed
    assert again == first
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.parquet")} == stamps


MIRRORED = ["card-value", "-n", "2", "--strategies", "greedy(plan=action)", "--games", "40", "--remove-games", "20",
            "--jobs", "1", "-q"]


def test_card_value_plays_a_field_of_one_player_once_a_seed_and_an_old_folder_as_it_was_made(tmp_path, monkeypatch):
    """Every seat holding one player, a seed's rotations are the same game
    (test_search's test of the rotations): the same --games buy twice the seeds at 2 players,
    played once each. A folder made before this (no ``rotation`` in its search file) resumes as it
    was made, every seed under both rotations, its finished games kept."""
    import json

    import pandas as pd
    from click.testing import CliRunner

    from cli_results import ok
    from evora_sim.cli import main
    from evora_sim.experiments import search
    from evora_sim.runner import read_manifest

    out = tmp_path / "new"
    printed = ok(CliRunner().invoke(main, MIRRORED + ["--out", str(out)]))
    assert "each seed once, as its rotations would be the same game" in printed
    given = pd.read_csv(out / "summary" / "card_value_given.csv")
    assert (given["seeds"] == 20).all() and (given["games"] == 40).all()
    removed = pd.read_csv(out / "summary" / "card_value_removed.csv")
    assert (removed["seeds"] == 20).all()
    for arm in ("baseline", "given/gov_column/seat1", "removed/gov_column"):
        assert read_manifest(out / arm)["config"]["seat_rotation"] is False, arm
    assert json.loads((out / "search.json").read_text())["config"]["rotation"] == "as the players need"

    old = tmp_path / "old"
    real = search.made_rotating
    monkeypatch.setattr(search, "made_rotating", lambda out, kind: True)     # as the earlier version wrote it
    ok(CliRunner().invoke(main, MIRRORED + ["--out", str(old)]))
    monkeypatch.setattr(search, "made_rotating", real)
    assert "rotation" not in json.loads((old / "search.json").read_text())["config"]
    assert search.made_rotating(old, "card-value")
    stamps = {p: p.stat().st_mtime_ns for p in old.rglob("*.parquet")}
    again = ok(CliRunner().invoke(main, MIRRORED + ["--out", str(old)]))
    assert {p: p.stat().st_mtime_ns for p in old.rglob("*.parquet")} == stamps     # resumed, nothing replayed
    assert "10 seeds x 2 seats x 2 rotations = 40 paired games a card" in again
    assert read_manifest(old / "baseline")["config"]["seat_rotation"] is True


def test_card_value_prints_the_rulebooks_names_and_pp(small):
    """Issue 44: card-value printed internal codes (`cent_any`, `emp_flip`) and "points" for
    percentage points. Its lines name every card as the rulebook does and write rates in pp."""
    from evora_sim.layout import CARD_NAMES
    from evora_sim.names import card_title

    _, first = small
    for code in CARD_NAMES:
        assert code not in first, code
        assert card_title(code) in first, code
    assert " pp" in first and "points" not in first


def test_report_shows_the_experiment_after_the_observational_card_table(small, tmp_path):
    from click.testing import CliRunner

    from cli_results import ok, one_error_line
    from evora_sim.cli import main

    out, _ = small
    ok(CliRunner().invoke(main, ["report", str(out / "baseline"), "--out", str(tmp_path / "r"),
                                 "--card-value", str(out)]))
    md = (tmp_path / "r" / "report.md").read_text()
    assert md.index("## Card value") < md.index("## Card value by experiment") < md.index("## Construction Site")
    assert "causal value of holding one more" in md and "association" in md
    assert "beside this report's observational estimate" in md        # the same field's games
    for name in ("card_value_given.csv", "card_value_given_by_strategy.csv", "card_value_removed.csv",
                 "card_value_removed_fairness.csv", "card_value_experiment.png"):
        assert (tmp_path / "r" / name).is_file()
    line = one_error_line(CliRunner().invoke(main, ["report", str(out / "baseline"), "--out", str(tmp_path / "s"),
                                                    "--card-value", str(out / "baseline")]))
    assert "--card-value" in line and "no finished evora card-value experiment" in line
    assert not (tmp_path / "s").exists()


def test_card_value_given_arm_is_the_baseline_when_the_card_changes_nothing(tmp_path):
    """The placebo on real games: arms that are the same games give a change of exactly 0."""
    from evora_sim.experiments.cardvalue_runs import given_outcomes

    base = np.random.default_rng(0).integers(0, N, size=(30, N))
    e = given_effect(*given_outcomes(base, [base] * N))
    assert e["discordance"] == 0 and not e["exercised"] and np.isnan(e["change"])    # no measurement


@pytest.mark.parametrize("args, message", [
    (["-n", "5"], "player count must be 2, 3 or 4, got 5"),
    (["--games", "39"], "--games must be at least 40 at 2 players"),
    (["--remove-games", "5"], "--remove-games must be 0"),
    (["--strategies", "balanced,greedy,cards"], "3 strategies for 2 seats"),
    (["--strategies", "nosuch"], "nosuch"),
    (["--set", "experiment.give=emp_flip"], "drop experiment.give"),
    (["--set", "experiment.remove=nothing"], "experiment.remove"),
    (["--seed", "-1"], "seed"),
    (["--jobs", "0"], "jobs"),
])
def test_card_value_bad_input_is_one_line_and_writes_nothing(tmp_path, args, message):
    from click.testing import CliRunner

    from cli_results import one_error_line
    from evora_sim.cli import main

    base = ["card-value", "-n", "2", "--strategies", "balanced,greedy", "--games", "40", "--remove-games", "20"]
    out = tmp_path / "cv"
    line = one_error_line(CliRunner().invoke(main, base + args + ["--out", str(out)]))
    assert message in line
    assert not out.exists()


def test_a_run_from_before_the_new_keys_reads_as_the_default_rules():
    """A run played before players.start_vp and the [experiment] table existed holds rules
    without them: the report's header must still call them the default rules, not a variant."""
    import copy
    from types import SimpleNamespace

    from analysis.labels import rules_differences
    from analysis.scan import Scan
    from evora_sim.rules import load_rules

    older = copy.deepcopy(load_rules().data)
    del older["experiment"], older["players"]["start_vp"]
    data = Scan([SimpleNamespace(manifest={"config": {"players": 4}, "rules": older})])
    assert rules_differences(older) != []                      # read raw, it looks like a variant
    assert rules_differences(data.rules()) == rules_differences(data.rules(4)) == []
