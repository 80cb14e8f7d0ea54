"""The learned evaluation (issue 40): its features, its weight files, the fit and the rows it
learns from."""
from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from evora_sim import api
from evora_sim import layout as L
from evora_sim.batch import game_decisions, play_batch, play_game
from evora_sim.rules import load_rules
from strategies import learned
from strategies.builtin import BUILTINS, PLANS, Strategy
from strategies.compiled import AHEAD_FROM, LEARNED_W, REPLIES, evaluate
from strategies.errors import StrategyError
from strategies.features import FEATURE_NAMES, NB, NL, features_of, progress
from strategies.fit import conditional_logit
from strategies.learned import as_learned, from_hand
from strategies.registry import parse_spec, seat_arrays
from helpers import reorder_hidden

RULES = load_rules()
HEURISTICS = [s for s in BUILTINS if s.is_heuristic]


def restated(strategy) -> Strategy:
    return Strategy(strategy.name + "-learned", PLANS["turn"], learned=as_learned(from_hand(strategy.weights)))


@pytest.mark.parametrize("players, seed", [(2, 401), (4, 402)])
def test_every_built_in_restated_in_learned_features_values_positions_as_before(players, seed):
    """A hand weight set restated in the learned features (``learned.from_hand``) values every
    position as the hand evaluation does, up to one constant: the learned evaluation holds
    every hand feature, so the fit can start from a built-in and is the same evaluation."""
    rows = {s.name: seat_arrays([s, restated(s)])[1] for s in HEURISTICS}
    gaps = {s.name: [] for s in HEURISTICS}
    for k, (arr, _, _, _) in enumerate(game_decisions(RULES, players, seed, ["balanced"] * players)):
        if k % 2:
            continue
        for p in range(players):
            for name, W in rows.items():
                hand = evaluate(arr.copy(), RULES.packed, np.int32(p), W, np.int32(0))
                mine = evaluate(arr.copy(), RULES.packed, np.int32(p), W, np.int32(1))
                gaps[name].append(hand - mine)
    for name, g in gaps.items():
        assert len(g) > 120 and np.ptp(g) < 1e-9, f"{name}: the two evaluations differ by more than a constant"


def test_a_restated_built_in_plays_as_strongly_as_itself():
    """Played, the restated cardheights is the same player (only near-ties are broken apart by
    rounding): against the original it wins about half of 400 seeds x 2 seats."""
    ch = parse_spec("cardheights")
    seeds = np.arange(403_000, 403_400)
    wins = 0
    for r in range(2):
        seats = [ch, ch]
        seats[r] = restated(ch)
        wins += (play_batch(RULES, 2, seeds, seats).games[:, 3] == r).sum()
    rate = wins / 800
    assert 0.44 < rate < 0.56, rate


@pytest.mark.parametrize("players, seed", [(2, 404), (4, 405)])
def test_no_feature_reads_the_order_below_a_stack_top(players, seed):
    """P10: the features of a position are the same whatever the order of each stack's cards
    below its top (that order is hidden from every player)."""
    rng = np.random.default_rng(seed)
    checked = 0
    for arr, _, _, _ in game_decisions(RULES, players, seed, ["cards"] * players):
        other = reorder_hidden(arr, rng)
        if (other == arr).all():
            continue
        for p in range(players):
            assert (features_of(arr, RULES.packed, p) == features_of(other, RULES.packed, p)).all()
        checked += 1
    assert checked > 50


def test_progress_runs_from_zero_to_one_and_scales_the_second_half():
    """The second half of the feature row is the first times the game's progress: 0 at the
    start, 1 once the end is triggered."""
    state = api.new_game(RULES, 3, 406)
    start = features_of(state.arr, RULES.packed, 0)
    assert (start[NB:] == 0).all()
    final, _ = play_game(RULES, 3, 406, ["greedy"] * 3)
    end = features_of(final, RULES.packed, 0)
    assert (end[NB:] == end[:NB]).all()


def test_the_learned_value_is_the_feature_order_sum_to_the_last_bit():
    """The learned value adds up only the features that are not zero, for speed
    (``features.learned_value``): that must be the sum of every term in feature order, bit for
    bit, or near-ties between turns, and so the expert's choices, would change. Checked with the
    shipped 3-player weights and with random weights of both signs."""
    rng = np.random.default_rng(407)
    seats = ["expert", Strategy("random-weights", PLANS["turn"], learned=as_learned(rng.normal(size=NL + 1)))]
    W = seat_arrays(seats + ["expert"])[1]
    checked = 0
    for arr, _, _, _ in game_decisions(RULES, 3, 407, ["cardheights"] * 3):
        t = progress(arr.copy(), RULES.packed)
        for p in range(3):
            x = features_of(arr, RULES.packed, p)[:NB]
            for me in range(2):
                w = W[me, LEARNED_W:LEARNED_W + NL]
                want = 0.0
                for k in range(NB):
                    want += (w[k] + t * w[NB + k]) * x[k]
                got = evaluate(arr.copy(), RULES.packed, np.int32(p), W, np.int32(me))
                assert got == want, (p, me, got, want)
        checked += (x == 0).any()
    assert checked > 50


# ---------------------------------------------------------------------------------------------
# weight files
# ---------------------------------------------------------------------------------------------
def _weights(vector=None, counts=(2, 4), replies=((2, 5),)) -> learned.LearnedWeights:
    w = tuple(float(x) for x in (vector if vector is not None else np.arange(NL + 1) / 10))
    return learned.LearnedWeights("mine", tuple((n, w) for n in counts), "test weights", "a test", "abc",
                                  replies)


def test_a_learned_weight_file_reads_back_as_written(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text(learned.to_table(_weights()), encoding="utf-8")
    s = parse_spec(f"{path}:mine")
    assert s.is_learned and s.plan == "turn" and s.learned == _weights().weights
    assert s.description == "test weights"
    assert s.replies == ((2, 5),) and s.replies_for(2) == 5 and s.replies_for(4) == 0
    _, W = seat_arrays([s, s])
    assert (W[:, REPLIES] == 5).all()


@pytest.mark.parametrize("edit, named", [
    (lambda t: t.replace('format = 1', 'format = 7'), "format 7"),
    (lambda t: t.replace('"scored", ', ''), "other features"),
    (lambda t: t.replace('win = 7.6', 'win = 1e308'), "a weight is a number from"),
    (lambda t: t.replace('win = 7.6', 'win = "7.6"'), "win"),
    (lambda t: t.replace('[mine.players.4]', '[mine.players.5]'), "players.5"),
    (lambda t: t.replace('weights = [0.0, ', 'weights = ['), f"list of {NL} numbers"),
    (lambda t: t + 'extra = 1\n', "unknown key"),
    (lambda t: t.replace('replies = 5', 'replies = 33'), "replies = 33 is out of range (a whole number from 0 to 32)"),
    (lambda t: t.replace('replies = 5', 'replies = -1'), "replies = -1"),
    (lambda t: t.replace('replies = 5', 'replies = 2.5'), "replies = 2.5"),
    (lambda t: t.replace('replies = 5', 'replies = "many"'), "replies = 'many'"),
    (lambda t: t.replace('replies = 5', 'replies = true'), "replies = True"),
    (lambda t: t.replace('replies = 5', 'replies = 5\nahead_from = 1.5'), "ahead_from = 1.5 is out of range"),
    (lambda t: t.replace('replies = 5', 'replies = 5\nahead_from = -0.5'), "ahead_from = -0.5"),
    (lambda t: t.replace('replies = 5', 'replies = 5\nahead_from = nan'), "ahead_from = nan"),
    (lambda t: t.replace('replies = 5', 'replies = 5\nahead_from = "0.5"'), "ahead_from = '0.5'"),
    (lambda t: t.replace('replies = 5', 'replies = 5\nahead_from = true'), "ahead_from = True"),
])
def test_a_bad_learned_weight_file_is_refused_in_one_line(tmp_path, edit, named):
    path = tmp_path / "w.toml"
    path.write_text(edit(learned.to_table(_weights())), encoding="utf-8")
    with pytest.raises(StrategyError) as err:
        parse_spec(f"{path}:mine")
    assert named in str(err.value) and "\n" not in str(err.value)


def test_a_player_count_without_weights_is_refused_before_play(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text(learned.to_table(_weights(counts=(2,))), encoding="utf-8")
    with pytest.raises(StrategyError, match="no learned weights for 3 players"):
        seat_arrays([parse_spec(f"{path}:mine")] * 3)


def test_the_shipped_expert_loads_for_every_player_count():
    expert = parse_spec("expert")
    assert expert.is_learned and {n for n, _ in expert.learned} == {2, 3, 4}
    for n in (2, 3, 4):
        seat_arrays([expert] * n)
    # a round ahead where it paid: all game at 2 players, late in the game at 3 and 4
    assert expert.replies_for(2) > 0 and expert.ahead_from_for(2) == 0
    assert all(expert.replies_for(n) > 0 and 0 < expert.ahead_from_for(n) < 1 for n in (3, 4))
    for bad in ("expert(vp=2)", "expert(replies=4, vp=2)", "expert(replies=40)", "expert(replies=x)",
                "expert(replies=1.5)", "expert(ahead_from=0.5)", "expert(replies=2, ahead_from=1.5)",
                "expert(replies=2, ahead_from=-0.1)", "expert(replies=2, ahead_from=nan)",
                "expert(replies=2, replies=3)"):
        with pytest.raises(StrategyError) as err:
            parse_spec(bad)
        assert repr(bad) in str(err.value) and "\n" not in str(err.value)
    # each refusal names its own cause first
    for bad, cause in (("expert(vp=2)", "unknown option vp:"), ("expert(replies=4, vp=2, x=1)", "unknown option vp, x:"),
                       ("expert(replies=2, replies=3)", "replies given twice:"),
                       ("expert(ahead_from=0.5)", "ahead_from needs replies=K beside it")):
        with pytest.raises(StrategyError, match=re.escape(f"strategy {bad!r}: {cause}")):
            parse_spec(bad)
    four = parse_spec("expert(replies=4)")
    assert four.name == "expert(replies=4)" and all(four.replies_for(n) == 4 for n in (2, 3, 4))
    assert parse_spec("expert(replies=0)").replies_for(2) == 0 and four.learned == expert.learned
    # a spec's replies hold at every count from the start, unless it says from where
    assert all(four.ahead_from_for(n) == 0 for n in (2, 3, 4))
    late = parse_spec("expert(replies=4,ahead_from=0.80)")
    assert late.name == "expert(replies=4, ahead_from=0.8)" and all(late.ahead_from_for(n) == 0.8 for n in (2, 3, 4))
    _, W = seat_arrays([late, late, four])
    assert W[:, AHEAD_FROM].tolist() == [0.8, 0.8, 0.0]


def test_a_learned_strategy_reads_back_from_a_manifest():
    from strategies.registry import from_resolved, resolved

    for spec in ("expert", "expert(replies=0)", "expert(replies=3)", "expert(replies=3, ahead_from=0.5)"):
        s = parse_spec(spec)
        again = from_resolved(s.name, resolved(s), run_code=False)
        assert again.learned == s.learned and again.kind == s.kind and again.replies == s.replies
        assert again.ahead_from == s.ahead_from
    # a one-ply player's description is what it was before replies existed: resumes stay valid
    assert "replies" not in resolved(parse_spec("expert(replies=0)"))
    damaged = resolved(parse_spec("expert")) | {"replies": {"2": 99}}
    with pytest.raises(StrategyError, match="replies = 99"):
        from_resolved("expert", damaged, run_code=False)
    damaged = resolved(parse_spec("expert")) | {"ahead_from": {"3": 7}}
    with pytest.raises(StrategyError, match="ahead_from = 7"):
        from_resolved("expert", damaged, run_code=False)


def test_ahead_from_reads_back_from_a_weight_file(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text(learned.to_table(replace(_weights(), ahead_from=((2, 0.75),))), encoding="utf-8")
    assert "ahead_from = 0.75" in path.read_text(encoding="utf-8")
    s = parse_spec(f"{path}:mine")
    assert s.ahead_from == ((2, 0.75),) and seat_arrays([s, s])[1][:, AHEAD_FROM].tolist() == [0.75, 0.75]


@pytest.mark.parametrize("seed", [5, 6])
def test_looking_ahead_from_progress_t_plays_one_ply_until_then(seed):
    """``ahead_from=T``: the expert's games are the one-ply expert's, action for action, until the
    game's progress reaches T (the first differing action comes at a position of progress >= T),
    and they do differ after (the option is live)."""
    field = ["cardheights", "cardheights"]
    late = play_game(RULES, 3, seed, ["expert(replies=4, ahead_from=0.6)", *field])[1].tolist()
    one = play_game(RULES, 3, seed, ["expert(replies=0)", *field])[1].tolist()
    first = next(i for i, (a, b) in enumerate(zip(late, one)) if a != b)
    arr = [d[0] for k, d in enumerate(game_decisions(RULES, 3, seed, ["expert(replies=0)", *field])) if k == first][0]
    assert progress(arr, RULES.packed) >= 0.6


def test_a_weight_file_written_before_replies_plans_one_ply(tmp_path):
    path = tmp_path / "w.toml"
    path.write_text(learned.to_table(_weights(replies=())), encoding="utf-8")
    assert "replies" not in path.read_text(encoding="utf-8")
    s = parse_spec(f"{path}:mine")
    assert s.replies == () and seat_arrays([s, s])[1][:, REPLIES].tolist() == [0.0, 0.0]


def test_no_replies_plays_exactly_as_the_one_ply_planner(tmp_path):
    """``replies=0`` is the planner before two plies existed: the same games, action for action;
    and the two-ply expert plays other games (the option is live)."""
    path = tmp_path / "w.toml"
    path.write_text(learned.to_table(learned.LearnedWeights(
        "plain", parse_spec("expert").learned, "one ply", "", "")), encoding="utf-8")
    games = [play_game(RULES, 2, seed, [spec, "cardheights"])[1].tolist()
             for spec in (f"{path}:plain", "expert(replies=0)", "expert") for seed in (3, 4)]
    assert games[0:2] == games[2:4] and games[4:6] != games[0:2]


# ---------------------------------------------------------------------------------------------
# the fit
# ---------------------------------------------------------------------------------------------
def test_the_conditional_logit_recovers_the_weights_that_made_the_choices():
    """Choices drawn from a known conditional logit are fitted back to its weights (within a
    few standard errors), whatever the starting point."""
    rng = np.random.default_rng(407)
    k, turns, per = 4, 3000, 6
    truth = np.array([1.5, -0.8, 0.3, 0.0])
    X = rng.normal(size=(turns * per, k))
    group = np.repeat(np.arange(turns), per)
    u = (X @ truth).reshape(turns, per)
    p = np.exp(u - u.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    pick = np.array([rng.choice(per, p=row) for row in p])
    chosen = np.zeros(turns * per, dtype=bool)
    chosen[np.arange(turns) * per + pick] = True
    fit = conditional_logit(X, group, chosen, np.zeros(k), ridge=0.0)
    assert np.abs(fit.weights - truth).max() < 0.12, fit.weights
    soft = conditional_logit(X, group, p.reshape(-1), np.zeros(k), ridge=0.0)   # shares, not picks
    assert np.abs(soft.weights - truth).max() < 0.05, soft.weights


# ---------------------------------------------------------------------------------------------
# what the fit learns from
# ---------------------------------------------------------------------------------------------
def test_a_run_can_keep_every_game_s_actions(tmp_path):
    """``record_actions``: the games table holds each game's actions, which replay the game;
    the manifest says so, and a run without it keeps its configuration as before."""
    from evora_sim.runner import Execution, open_run, simulate

    simulate(2, 6, "greedy", seed=408, out=tmp_path / "kept", record_actions=True, execution=Execution(chunk_size=3))
    run = open_run(tmp_path / "kept")
    assert run.manifest["config"]["record_actions"] is True
    for _, row in run.games.iterrows():
        _, log = play_game(RULES, 2, int(row.seed), ["greedy"] * 2)
        assert np.array_equal(np.asarray(row.actions, dtype=np.int64), log)
    simulate(2, 3, "greedy", seed=408, out=tmp_path / "plain")
    plain = open_run(tmp_path / "plain")
    assert "record_actions" not in plain.manifest["config"] and "actions" not in plain.games.columns


def test_the_rows_of_a_planner_s_own_games_rank_its_own_turns_first():
    """``imitation.turn_rows`` on games the planner itself played, listing turns under its own
    weights: every turn's end is found among the listed ones (labelled CHOSEN), and it is the
    best-valued of its group (the game's last turn aside: a won game is valued with the win
    weight, which is not a feature)."""
    from evora_sim.rng import new_stream
    from strategies import imitation as I
    from strategies.planner import new_plan_work

    ch = restated(parse_spec("cardheights"))
    _, W = seat_arrays([ch] * 2)
    found = total = 0
    for seed in (409, 410, 411):
        _, log = play_game(RULES, 2, seed, [ch, ch])
        out = I.new_rows(4000)
        feats, group, label = out
        rows, groups = I.turn_rows(RULES.packed, 2, seed, log, W, 32, out, new_plan_work(), new_stream(seed),
                                   I.new_buffers())
        value = feats[:rows] @ np.asarray(ch.learned_for(2))[:NL]
        for g in range(groups):
            mine = group[:rows] == g
            total += 1
            if (label[:rows][mine] == I.CHOSEN).any():
                found += 1
                if g < groups - 1:
                    assert value[:rows][mine][label[:rows][mine] == I.CHOSEN][0] >= value[mine].max() - 1e-9
    assert total > 40 and found >= 0.95 * total
