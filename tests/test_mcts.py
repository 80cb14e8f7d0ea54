"""The search player (``mcts(...)``, strategies/mcts.py): its spec, what it may know, and that
it plays through every part of the toolkit like any strategy."""
from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from evora_sim import api
from evora_sim import engine as E
from evora_sim import layout as L
from evora_sim.batch import play_batch, play_game
from evora_sim.gameloop import buffers
from evora_sim.cli import main
from evora_sim.replay import replay_lines
from evora_sim.rules import load_rules
from evora_sim.runner import Execution, simulate
from strategies.compiled import KIND_MCTS
from strategies.decide import choose, new_game
from strategies.mcts import REUSE_TREES, search_counts, tree_bytes
from strategies.unseen import determinize
from strategies.turn_search import turn_tree_bytes
from strategies.registry import StrategyError, from_resolved, parse_spec, resolved, seat_arrays, tree_nodes
from cli_results import one_error_line
from helpers import reorder_hidden, to_move

RULES = load_rules()
SMALL = "mcts(iterations=60, rollout=greedy(plan=action), horizon=4, leaf=score, root=decision)"


# ---------------------------------------------------------------------------------------------
# the spec
# ---------------------------------------------------------------------------------------------
def test_the_spec_and_its_name():
    s = parse_spec("mcts")
    assert s.kind == KIND_MCTS and s.search[0] == 1000
    # tables and manifests name the full spec, every option in a fixed order
    assert s.name == "mcts(iterations=1000, c=0.7, rollout=cardheights, reward=margin, horizon=auto, leaf=eval, finish=rollout, reuse=turn, root=turn, candidates=8, depth=0, others=tree)"
    t = parse_spec("MCTS( reward=WIN, iterations=250 , rollout = balanced( plan=action ) )")
    assert t.name == "mcts(iterations=250, c=0.7, rollout=balanced(plan=action), reward=win, horizon=auto, leaf=eval, finish=rollout, reuse=turn, root=turn, candidates=8, depth=0, others=tree)"
    assert parse_spec(t.name) == t and parse_spec(s.name) == s
    assert t.rollout == "balanced(plan=action)" and t.weights == parse_spec("balanced").weights
    # a manifest's description reads back to the same player
    info = resolved(t)
    assert info["kind"] == "mcts" and info["iterations"] == 250 and info["rollout"] == "balanced(plan=action)"
    assert info["tree_bytes"] == tree_bytes(250, "turn") + turn_tree_bytes(250, 8)   # setup's tree, the turns'
    assert from_resolved(t.name, json.loads(json.dumps(info))) == t


def test_the_stated_memory_of_the_turn_tree_is_what_it_allocates():
    """The docs' bound (``turn_tree_bytes``) is the tree's arrays to the byte, up to TREE_CAP."""
    from strategies.turn_search import TREE_CAP, new_turn_tree, turn_tree_nodes
    for iterations, candidates in ((1, 1), (250, 8), (1000, 32), (10 ** 6, 8)):
        nodes = turn_tree_nodes(iterations)
        assert nodes == min(iterations + 1, TREE_CAP)
        allocated = sum(a.nbytes for a in new_turn_tree(nodes, candidates))
        assert allocated == turn_tree_bytes(iterations, candidates)


def test_leaf_and_finish_options_read_back_and_old_manifests_mean_the_old_search():
    s = parse_spec("mcts(leaf=EVAL, finish=Plan, rollout=cardheights(plan=action), root=decision)")
    assert s.name.endswith("horizon=auto, leaf=eval, finish=plan, reuse=turn, root=decision)")
    info = json.loads(json.dumps(resolved(s)))
    assert info["leaf"] == "eval" and info["finish"] == "plan"
    assert from_resolved(s.name, info) == s
    # a manifest written before the options existed (reuse came later still) describes
    # leaf=score, finish=rollout, reuse=none
    old = resolved(parse_spec("mcts(iterations=250)"))
    del old["leaf"], old["finish"], old["reuse"], old["root"], old["candidates"]
    assert from_resolved("mcts(iterations=250)", old).search == \
        parse_spec("mcts(iterations=250, leaf=score, finish=rollout, reuse=none, root=decision)").search


def test_reuse_option_reads_back_and_sizes_the_tree():
    s = parse_spec("mcts(iterations=250, reuse=TURN, root=decision)")
    assert s.name.endswith("finish=rollout, reuse=turn, root=decision)") and parse_spec(s.name) == s
    info = json.loads(json.dumps(resolved(s)))
    assert info["reuse"] == "turn" and from_resolved(s.name, info) == s
    # room for REUSE_TREES searches of 250 iterations, one after the other, and the root
    assert info["tree_bytes"] == tree_bytes(250, "turn") == REUSE_TREES * 250 * (tree_bytes(1) // 2) + tree_bytes(1) // 2
    assert tree_nodes([s, "greedy"]) == REUSE_TREES * 250 + 1
    assert tree_nodes(["mcts(iterations=250, reuse=none)", "greedy"]) == 251 and tree_nodes(["greedy"]) == 1
    # a manifest written before the option existed describes reuse=none
    old = resolved(parse_spec("mcts(iterations=250)"))
    del old["reuse"]
    assert from_resolved("mcts(iterations=250)", old).search == parse_spec("mcts(iterations=250, reuse=none)").search


def _search_once(spec_text, players=4, seed=21, skip=5):
    """The search's tree (parents, visits) after the first searched decision past the
    ``skip``-th of a game of balanced seats, searched by ``spec_text`` with fresh buffers."""
    spec = parse_spec(spec_text)
    final, log = play_game(RULES, players, seed, ["balanced"] * players)
    state = api.new_game(RULES, players, seed)
    for i, a in enumerate(log):
        legal = api.legal_actions(state)
        if i >= skip and len(legal) > 2:
            kinds, W = seat_arrays([spec] * players)
            _, _, rs, work, _ = buffers(players, [spec])
            choose(kinds[0], W, to_move(state.arr), state.arr.copy(), RULES.packed,
                   np.array(legal, dtype=np.int32), len(legal), rs, work)
            tree = work[1]
            if tree[4][0] > 0:                      # searched (not a choice of alike columns)
                return tree[0], tree[4]
        api.apply_action(state, int(a))
    raise AssertionError("no searched decision found")


def test_finish_plan_keeps_the_tree_to_the_decision_at_hand():
    """With finish=plan every iteration's turn is finished by the planner, so the tree holds
    the decision at hand only; with finish=rollout it grows below it."""
    for finish, flat in (("plan", True), ("rollout", False)):
        parent, visits = _search_once(f"mcts(iterations=200, rollout=cardheights(plan=action), finish={finish}, "
                                      "root=decision)")
        used = visits > 0
        used[0] = False
        assert used.sum() >= 2
        assert ((parent[used] == 0).all()) == flat, finish


@pytest.mark.parametrize("spec, message", [
    ("mcts(iterations=0)", "iterations='0' is out of range"),
    ("mcts(iterations=-5)", "iterations='-5' is out of range"),
    ("mcts(iterations=many)", "iterations='many' is not a whole number"),
    ("mcts(iterations=10000000)", "is out of range (iterations: search iterations per decision, 1 to 1,000,000"),
    ("mcts(c=nan)", "c='nan' is not a number (c: exploration constant"),
    ("mcts(c=inf)", "c='inf' is not a number"),
    ("mcts(c=-1)", "c='-1' is out of range"),
    ("mcts(reward=points)", "reward='points' is not allowed (reward is one of: win, margin, rank)"),
    ("mcts(rollout=mcts)", "rollout='mcts' is a search player"),
    ("mcts(rollout=mcts(iterations=5))", "is a search player"),
    ("mcts(rollout=bots.py:Bot)", "rollout='bots.py:Bot' is not a built-in"),
    ("mcts(rollout=nonesuch)", "rollout: unknown strategy 'nonesuch'"),
    ("mcts(rollout=)", "rollout= needs a spec"),
    ("mcts(width=3)", "unknown option 'width' (mcts takes: iterations, c, rollout, reward, horizon, leaf, finish, "
                      "reuse, root, candidates, depth, others)"),
    ("mcts(iterations=5, iterations=6)", "option 'iterations' given twice"),
    ("mcts(horizon=-1)", "horizon='-1' is out of range"),
    ("mcts(leaf=guess)", "leaf='guess' is not allowed (leaf is one of: score, eval)"),
    ("mcts(leaf=eval, rollout=random)", "leaf=eval values positions with the rollout's weights"),
    ("mcts(finish=never)", "finish='never' is not allowed (finish is one of: rollout, plan)"),
    ("mcts(finish=plan, rollout=random)", "finish=plan plans with the rollout's weights"),
    ("mcts(reuse=game)", "reuse='game' is not allowed (reuse is one of: none, turn)"),
    ("mcts(root=game)", "root='game' is not allowed (root is one of: decision, turn)"),
    ("mcts(root=turn, rollout=random)", "root=turn plans with the rollout's weights"),
    ("mcts(root=turn, candidates=0)", "candidates='0' is out of range"),
    ("mcts(root=turn, candidates=33)", "candidates='33' is out of range"),
    ("mcts(root=turn, candidates=2.5)", "candidates='2.5' is not a whole number"),
    ("mcts(root=turn, depth=-1)", "depth='-1' is out of range (depth: with root=turn, how many turns of its own"),
    ("mcts(root=turn, depth=65)", "depth='65' is out of range"),
    ("mcts(others=all)", "others='all' is not allowed (others is one of: rollout, tree)"),
    ("mcts(root=turn, depth=deep)", "depth='deep' is not a whole number"),
    # options of the tree over whole turns do nothing in a decision tree: refused, never silently idle
    ("mcts(root=decision, candidates=4)", "candidates= does nothing with root=decision"),
    ("mcts(rollout=random, others=rollout)", "others= does nothing with root=decision"),
    ("mcts(root=decision, depth=1)", "depth= does nothing with root=decision"),
])
def test_bad_search_specs(spec, message):
    with pytest.raises(StrategyError) as info:
        parse_spec(spec)
    assert message in str(info.value), str(info.value)


@pytest.mark.parametrize("args, message", [
    (["duel", "mcts(iterations=0)", "greedy"], "iterations='0' is out of range"),
    (["simulate", "-n", "2", "--games", "2", "--strategies", "mcts(c=x),greedy", "--out", "{tmp}/r"],
     "c='x' is not a number"),
    (["replay", "-n", "2", "--seed", "1", "--strategies", "mcts(rollout=mcts),greedy"], "is a search player"),
    (["duel", "mcts(reuse=always)", "greedy", "--players", "2"], "reuse='always' is not allowed"),
])
def test_bad_search_specs_on_the_command_line(tmp_path, args, message):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    line = one_error_line(CliRunner().invoke(main, args))
    assert message in line
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------------------------------------
# what the search may know
# ---------------------------------------------------------------------------------------------
def _hidden(arr, t):
    base = L.STACK_CARDS + t * L.MAXSTACK
    return arr[base + arr[L.STACK_TOP + t] + 1:base + arr[L.STACK_LEN + t]]


def test_determinize_shuffles_only_below_the_tops():
    state = api.new_game(RULES, 3, 5)
    rs = np.array([7], dtype=np.uint64)
    orders = set()
    for _ in range(20):
        arr = state.arr.copy()
        determinize(arr, rs)
        same = np.ones(L.STATE_SIZE, bool)
        for t in range(L.NTYPES):
            base = L.STACK_CARDS + t * L.MAXSTACK
            lo, hi = arr[L.STACK_TOP + t] + 1, arr[L.STACK_LEN + t]
            same[base + lo:base + hi] = False
            assert sorted(_hidden(arr, t)) == sorted(_hidden(state.arr, t))   # the same cards
        assert (arr[same] == state.arr[same]).all()                          # tops and all else kept
        orders.add(tuple(arr[L.STACK_CARDS:L.STACK_CARDS + L.NTYPES * L.MAXSTACK]))
    assert len(orders) > 10


@pytest.mark.parametrize("players, seed", [(2, 11), (4, 12)])
def test_no_peeking_at_the_hidden_order(players, seed):
    """Two states that differ only in the order below the stacks' tops get the same decision
    from the same random stream, at decisions all through a game."""
    spec = parse_spec("mcts(iterations=80, rollout=greedy(plan=action), horizon=4)")
    final, log = play_game(RULES, players, seed, ["balanced"] * players)
    state = api.new_game(RULES, players, seed)
    rng = np.random.default_rng(seed)
    compared = differed = 0
    for i, a in enumerate(log):
        legal = api.legal_actions(state)
        if i % 9 == 0 and len(legal) > 1:
            other = reorder_hidden(state, rng)
            differed += bool((other.arr != state.arr).any())
            picks = []
            for s in (state, other):
                kinds, W = seat_arrays([spec] * players)
                _, _, rs, work, _ = buffers(players, [spec])
                rs[0] = np.uint64(99)
                picks.append(int(choose(kinds[0], W, to_move(s.arr), s.arr.copy(), RULES.packed,
                                        np.array(legal, dtype=np.int32), len(legal), rs, work)))
            assert picks[0] == picks[1], f"decision {i}: {picks}"
            compared += 1
        api.apply_action(state, int(a))
    assert compared >= 10 and differed >= 8


# ---------------------------------------------------------------------------------------------
# like any strategy
# ---------------------------------------------------------------------------------------------
def test_search_games_are_reproducible_and_pass_through_the_runner(tmp_path):
    field = [SMALL, "balanced", "greedy(plan=action)", "random"]
    a = play_batch(RULES, 4, np.arange(3), field)
    b = play_batch(RULES, 4, np.arange(3), field)
    assert (a.seats == b.seats).all() and (a.games == b.games).all()
    one = simulate(4, 4, field, seed=3, out=tmp_path / "one", seat_rotation=True,
                   execution=Execution(jobs=1, chunk_size=2))
    two = simulate(4, 4, field, seed=3, out=tmp_path / "two", seat_rotation=True,
                   execution=Execution(jobs=2, chunk_size=2))
    assert one.seats.equals(two.seats)
    names = set(one.seats["strategy"].astype(str))
    assert parse_spec(SMALL).name in names
    m = json.loads((tmp_path / "one" / "manifest.json").read_text(encoding="utf-8"))
    entry = m["config"]["resolved_strategies"][parse_spec(SMALL).name]
    assert entry["kind"] == "mcts" and entry["iterations"] == 60 and entry["horizon"] == 4


def test_replay_shows_what_the_search_saw():
    lines = replay_lines(RULES, 2, 4, [SMALL, "balanced"])
    searched = [x for x in lines if x.strip().startswith("search")]
    assert len(searched) >= 20
    assert any("distinct actions, most visited:" in x and "visits, mean reward" in x for x in searched)
    # one note per decision of the search seat that had a choice, none for the other seat
    assert len(searched) == _choices_of_seat_0(4, [SMALL, "balanced"])


def _choices_of_seat_0(seed, field):
    """How many decisions with a choice seat 0 met in the seeded game of ``field``."""
    final, log = play_game(RULES, len(field), seed, field)
    state = api.new_game(RULES, len(field), seed)
    choices = 0
    for a in log:
        choices += state.get(L.G_CUR) == 0 and len(api.legal_actions(state)) > 1
        api.apply_action(state, int(a))
    return choices


def test_a_forced_decision_is_not_searched():
    notes = []
    play_game(RULES, 4, 9, [SMALL] + ["greedy"] * 3, notes=notes)
    assert notes and all(n["actions"] >= 1 for n in notes)
    assert all(n["seat"] == 0 for n in notes)


# ---------------------------------------------------------------------------------------------
# reuse=turn: the next decision of a turn continues the subtree of the action taken
# ---------------------------------------------------------------------------------------------
REUSE = "mcts(iterations=80, rollout=greedy(plan=action), horizon=4, leaf=score, reuse=turn, root=decision)"


def _tops(arr):
    return arr[L.STACK_TOP:L.STACK_TOP + L.NTYPES].copy()


def _searched_turn(arr, spec, players, stream=99):
    """The searched decisions of the turn of the seat to move at ``arr`` (a copy is played),
    one set of buffers and one random stream for the whole turn, up to the turn's end or the
    first new top card (after it, positions that differed only in the hidden order differ in
    what is seen); and the buffers' counts of searches and continued searches."""
    kinds, W = seat_arrays([spec] * players)
    _, _, rs, work, _ = buffers(players, [spec])
    rs[0] = np.uint64(stream)
    s = arr.copy()
    turn, tops = s[L.G_NTURNS], _tops(s)
    leg = np.empty(L.N_ACTIONS, dtype=np.int32)
    picks = []
    k = E.legal_actions(s, RULES.packed, leg)
    while k > 0 and s[L.G_NTURNS] == turn and (_tops(s) == tops).all():
        if k == 1:
            a = int(leg[0])
        else:
            p = to_move(s)
            a = int(choose(kinds[p], W, p, s, RULES.packed, leg[:k].copy(), k, rs, work))
            picks.append(a)
        k = E.step(s, RULES.packed, np.int64(a), leg)
    return picks, search_counts(work[1])


@pytest.mark.parametrize("players, seed", [(2, 13), (4, 14)])
def test_no_peeking_with_reuse_across_whole_turns(players, seed):
    """With reuse=turn, two positions that differ only in the order below the tops get the same
    decisions from the same random stream through a whole turn: what a search keeps, and
    whether the next decision continues it, never depends on the hidden order."""
    final, log = play_game(RULES, players, seed, ["balanced"] * players)
    state = api.new_game(RULES, players, seed)
    rng = np.random.default_rng(seed)
    turns = continued = 0
    last_turn = -1
    for a in log:
        if state.get(L.G_NTURNS) != last_turn and state.get(L.G_NTURNS) % 3 == 0:
            other = reorder_hidden(state, rng)
            mine, counts = _searched_turn(state.arr, REUSE, players)
            theirs, _ = _searched_turn(other.arr, REUSE, players)
            assert mine == theirs, f"turn {state.get(L.G_NTURNS)}: {mine} != {theirs}"
            turns += len(mine) >= 2
            continued += counts[1]
        last_turn = state.get(L.G_NTURNS)
        api.apply_action(state, int(a))
    assert turns >= 5 and continued >= 5, (turns, continued)


def test_reuse_continues_the_subtree_and_adds_its_iterations():
    """A continued search's root holds the visits of the earlier search below the action taken
    plus its own iterations; without reuse no root holds more than the iterations."""
    most = {}
    for reuse in ("none", "turn"):
        notes = []
        play_game(RULES, 2, 15, [REUSE.replace("turn", reuse), "cardheights"], notes=notes)
        most[reuse] = max(sum(v for _, v, _ in n["top"]) for n in notes)
    assert most["none"] <= 80 < most["turn"]


def test_a_new_game_forgets_the_kept_subtree():
    """A subtree kept at a game's last search is not continued in the next game, even at the
    very position it expects."""
    spec = parse_spec(REUSE)
    final, log = play_game(RULES, 2, 16, ["balanced"] * 2)
    state = api.new_game(RULES, 2, 16)
    kinds, W = seat_arrays([spec] * 2)
    for a in log:
        legal = api.legal_actions(state)
        if len(legal) > 2:
            results = []
            for forget in (False, True):
                _, _, rs, work, _ = buffers(2, [spec])
                s = state.arr.copy()
                p = to_move(s)
                leg = np.empty(L.N_ACTIONS, dtype=np.int32)
                b = choose(kinds[p], W, p, s, RULES.packed, np.array(legal, dtype=np.int32), len(legal), rs, work)
                k = E.step(s, RULES.packed, np.int64(b), leg)
                while k == 1:
                    k = E.step(s, RULES.packed, np.int64(leg[0]), leg)
                if forget:
                    new_game(work)
                if k > 1:
                    choose(kinds[to_move(s)], W, to_move(s), s, RULES.packed, leg[:k].copy(), k, rs, work)
                results.append(search_counts(work[1]))
            if results[0][1] == 1:                  # the second search continued the first one
                assert results[1] == (2, 0)
                return
        api.apply_action(state, int(a))
    raise AssertionError("no continued search found")


def test_reuse_games_do_not_depend_on_the_games_before_them():
    field = [REUSE, "cardheights"]
    both = play_batch(RULES, 2, [31, 32], field)
    for g, seed in enumerate((31, 32)):
        alone = play_batch(RULES, 2, [seed], field)
        assert (alone.games[0] == both.games[g]).all() and (alone.seats[0] == both.seats[g]).all()
        assert (alone.stats[0] == both.stats[g]).all()


# ---------------------------------------------------------------------------------------------
# root=turn: the search chooses among the turn planner's best whole turns
# ---------------------------------------------------------------------------------------------
TURNS = "mcts(iterations=40, rollout=cardheights(plan=action), horizon=4, leaf=eval, root=turn, candidates=5)"


def test_root_option_reads_back_and_old_manifests_search_decisions():
    s = parse_spec("mcts(root=TURN, candidates=5, rollout=cardheights)")
    assert s.name.endswith("reuse=turn, root=turn, candidates=5, depth=0, others=tree)") and parse_spec(s.name) == s
    info = json.loads(json.dumps(resolved(s)))
    assert info["root"] == "turn" and info["candidates"] == 5 and info["depth"] == 0
    assert from_resolved(s.name, info) == s
    old = resolved(parse_spec("mcts(iterations=250)"))
    del old["root"], old["candidates"], old["depth"]
    assert from_resolved("mcts(iterations=250)", old).search == \
        parse_spec("mcts(iterations=250, root=decision)").search
    # before depth=, a search over whole turns chose among the candidates of the turn at hand
    flat = parse_spec("mcts(root=turn, rollout=cardheights, depth=1)")
    old = resolved(parse_spec("mcts(root=turn, rollout=cardheights, depth=3)"))
    del old["depth"]
    assert from_resolved(flat.name, old) == flat


@pytest.mark.parametrize("players, seed, spec", [(2, 17, TURNS), (4, 18, TURNS),
                                                (4, 19, TURNS[:-1] + ", others=rollout)")])
def test_no_peeking_with_root_turn(players, seed, spec):
    """With root=turn, two positions that differ only in the order below the tops get the same
    decisions from the same random stream through a whole turn: the candidate turns are
    searched on a sample, and the turn chosen is followed the same way (with others=tree, the
    default, the other seats' nodes are keyed and searched on what is visible too)."""
    final, log = play_game(RULES, players, seed, ["cardheights"] * players)
    state = api.new_game(RULES, players, seed)
    rng = np.random.default_rng(seed)
    turns = 0
    last_turn = -1
    for a in log:
        if state.get(L.G_NTURNS) != last_turn and state.get(L.G_NTURNS) % 3 == 0 \
                and state.get(L.G_PHASE) != L.PH_SETUP:
            other = reorder_hidden(state, rng)
            mine, counts = _searched_turn(state.arr, spec, players)
            theirs, _ = _searched_turn(other.arr, spec, players)
            assert mine == theirs, f"turn {state.get(L.G_NTURNS)}: {mine} != {theirs}"
            turns += len(mine) >= 2
        last_turn = state.get(L.G_NTURNS)
        api.apply_action(state, int(a))
    assert turns >= 5, turns


def test_root_turn_replay_notes_and_reproducible_games():
    """One note per decision with a choice: a search among whole turns, or a step of the turn
    it chose; and a batch plays each game as it would alone."""
    field = [TURNS, "cardheights"]
    lines = replay_lines(RULES, 2, 5, field)
    searched = [x for x in lines if x.strip().startswith("search")]
    assert len(searched) == _choices_of_seat_0(5, field)
    turns = [x for x in searched if "candidate turns, most visited:" in x]
    follows = [x for x in searched if "follows the turn it chose" in x]
    assert len(turns) >= 10 and len(follows) >= 10, (len(turns), len(follows))
    both = play_batch(RULES, 2, [33, 34], field)
    for g, seed in enumerate((33, 34)):
        alone = play_batch(RULES, 2, [seed], field)
        assert (alone.games[0] == both.games[g]).all()


def _turn_tree_after_one_search(spec, players=4, seed=19, skip=40):
    """The tree over whole turns a search of ``spec`` leaves at a position of a cardheights
    game: its nodes' keys and how many candidate turns each holds."""
    from strategies.planner import visible_hash
    final, log = play_game(RULES, players, seed, ["cardheights"] * players)
    state = api.new_game(RULES, players, seed)
    for a in log[:skip]:
        api.apply_action(state, int(a))
    while state.get(L.G_PHASE) != L.PH_MOVE or len(api.legal_actions(state)) < 2:
        api.apply_action(state, api.legal_actions(state)[0])
    kinds, W = seat_arrays([spec] * players)
    _, _, rs, work, _ = buffers(players, [spec])
    legal = np.array(api.legal_actions(state), dtype=np.int32)
    p = to_move(state.arr)
    choose(kinds[p], W, p, state.arr.copy(), RULES.packed, legal, len(legal), rs, work)
    keys, nvisits, nedges, *_, TC, seat = work[2][3]
    used = int(TC[0])
    assert keys[0] == visible_hash(state.arr) and seat[0] == p
    _turn_tree_after_one_search.seats = seat[:used].copy()
    return keys[:used].copy(), nedges[:used].copy(), nvisits[:used].copy()


def test_the_turn_tree_grows_below_the_root_only_when_deep():
    """depth=1 chooses among the candidate turns at hand: one node. With others=rollout, depth=0
    adds a node for each new visible position at the start of the seat's own later turns, each
    holding the planner's candidates from there; every node is a distinct position, and the
    root's visits are the iterations."""
    spec = "mcts(iterations=120, rollout=cardheights, horizon=9, leaf=eval, root=turn, candidates=4, depth={}, " \
           "others=rollout)"
    keys, edges, visits = _turn_tree_after_one_search(spec.format(1))
    assert len(keys) == 1 and visits[0] == 120
    keys, edges, visits = _turn_tree_after_one_search(spec.format(0))
    assert len(keys) >= 10 and len(set(keys.tolist())) == len(keys)
    assert visits[0] == 120 and (edges >= 1).all() and (edges <= 4).all()
    assert visits[1:].sum() < 120                      # below the root, only iterations that reached them
    assert set(_turn_tree_after_one_search.seats.tolist()) == {_turn_tree_after_one_search.seats[0]}


def test_with_others_in_the_tree_every_seats_turn_is_a_node():
    """others=tree: the other seats' turns are nodes of their own (their planner's best turns
    as edges, each chosen for that seat's reward), so the first level below the root is the
    next seat's, and at four seats, with a horizon of two rounds, every seat moves at some
    node. depth then counts every seat's turns: depth=2 holds the root and the next seat's."""
    spec = "mcts(iterations=120, horizon=9, candidates=4, others=tree, depth={})"
    keys, edges, visits = _turn_tree_after_one_search(spec.format(0))
    seats = _turn_tree_after_one_search.seats
    assert set(seats.tolist()) == {0, 1, 2, 3} and len(set(keys.tolist())) == len(keys)
    assert visits[0] == 120 and (edges >= 1).all() and (edges <= 4).all()
    keys, edges, visits = _turn_tree_after_one_search(spec.format(2))
    seats = _turn_tree_after_one_search.seats
    assert len(keys) > 1 and (seats[1:] == (seats[0] + 1) % 4).all()


def test_plan_census_counts_the_work_of_the_planner_inside_a_search():
    """``batch.plan_census`` also reports, per game, the turn planner's work inside the search
    players' searches (what ``bench_mcts`` prints as the cost of a game): with a turn-planning
    rollout it searches turns and evaluates their ends, and the plan cache supplies part of the
    plans; a table without a search player reports none."""
    from evora_sim.batch import plan_census
    seeds = np.array([6101], dtype=np.int64)
    spec = "mcts(iterations=40, rollout=cards, horizon=3, candidates=3)"
    c = plan_census(RULES, 4, seeds, [spec, "greedy", "greedy", "greedy"])["search"]
    assert c["searches"] > 0
    assert c["positions"] > c["searches"]
    assert 0 < c["cache_hits"] < c["searches"]
    none = plan_census(RULES, 4, seeds, ["greedy"] * 4)["search"]
    assert none == {"searches": 0, "positions": 0, "cache_hits": 0}
