"""The turn planner (``plan=turn``, strategies/planner.py) against an independent brute force.

The brute force below walks every sequence of the player's own decisions to the end of the
turn through the public api (``api.legal_actions`` / ``api.apply_action`` on clones), with no
pruning, and scores each end of turn with the same evaluation. The planner's pruning
(interchangeable columns, builds of alike groups in one column order, one choice of the cards
paid for a tile, no play after the draw) must never change the value it finds; what it may not
see (the card under a stack's top, exposed by a draw this turn) it must never use.
"""
from __future__ import annotations

import numpy as np
import pytest

from evora_sim import api
from evora_sim import engine as E
from evora_sim import layout as L
from evora_sim.batch import game_decisions, play_game
from evora_sim.gameloop import buffers
from evora_sim.rng import new_stream
from evora_sim.rules import load_rules
from strategies import planner as P
from strategies.builtin import BUILTINS
from strategies.compiled import KIND_PLANNER, evaluate
from strategies.decide import choose
from strategies.policy import new_policy_work as new_buffers
from strategies.policy import PLANNER_WORK, plan_meta
from strategies.registry import parse_spec, seat_arrays
from helpers import reorder_hidden, to_move
from script_modules import load_script

RULES = load_rules()
MAX_LEAVES = 4000          # positions whose brute force would be slower are skipped


def weights(spec: str, n: int) -> np.ndarray:
    """The weights matrix the compiled players read (a row of every column: seat_arrays)."""
    return seat_arrays([parse_spec(spec)] * n)[1]


def seen_actions(state: api.State, tops) -> list[int]:
    """The legal actions the player can take on what it saw when its search began (stack tops
    ``tops``): all but a Temple card of a stack whose top has changed since."""
    arr = state.arr
    temple = arr[L.G_SP] > 0 and arr[L.FRAMES + (arr[L.G_SP] - 1) * L.FW] == L.F_TEMPLE
    return [a for a in api.legal_actions(state)
            if not (temple and L.A_STACK <= a < L.A_STACK + L.NTYPES
                    and arr[L.STACK_TOP + a - L.A_STACK] != tops[a - L.A_STACK])]


def passed(state: api.State) -> api.State:
    """The position after its open frame is passed without a choice (``engine.pass_frame``)."""
    out = state.clone()
    E.pass_frame(out.arr, RULES.packed, np.empty(L.N_ACTIONS, dtype=np.int32))
    return out


def brute_force(state: api.State, W: np.ndarray, tops, budget: list) -> float:
    """The best end-of-turn evaluation for the seat to move, over every decision sequence on
    what it has seen: a Temple frame offering only unseen cards is passed (P10)."""
    p = api.current_player(state)
    seen = seen_actions(state, tops)
    children = [passed(state)] if not seen else []
    for a in seen:
        children.append(state.clone())
        api.apply_action(children[-1], a)
    best = -np.inf
    for child in children:
        if api.is_terminal(child) or api.current_player(child) != p:
            budget[0] -= 1
            if budget[0] < 0:
                raise OverflowError
            v = evaluate(child.arr, RULES.packed, np.int32(p), W, np.int32(p))
        else:
            v = brute_force(child, W, tops, budget)
        best = max(best, v)
    return best


def planner_value(state: api.State, W: np.ndarray, seed: int = 1) -> float:
    work = P.new_plan_work()
    legal = np.array(api.legal_actions(state), dtype=np.int32)
    return P.search_turn(state.arr.copy(), RULES.packed, W, to_move(state.arr), legal, len(legal),
                         new_stream(seed), work.search, work.meta, work.top)


def decision_states(players: int, seed: int, spec: str, every: int = 7):
    """States of one seeded game at many of its decisions (not setup), in order."""
    final, log = play_game(RULES, players, seed, [spec] * players)
    state = api.new_game(RULES, players, seed)
    out = []
    for i, a in enumerate(log):
        if i % every == 0 and state.get(L.G_PHASE) != L.PH_SETUP and len(api.legal_actions(state)) > 1:
            out.append(state.clone())
        api.apply_action(state, int(a))
    return out


CASES = [(2, 31, "greedy"), (2, 32, "balanced"), (3, 33, "cards"), (4, 34, "emperor"),
         (4, 35, "blocker"), (4, 36, "builder")]


@pytest.mark.parametrize("players, seed, spec", CASES)
def test_the_search_finds_the_best_end_of_turn(players, seed, spec):
    W = weights(spec, players)
    checked = 0
    for state in decision_states(players, seed, spec):
        tops = [state.get(L.STACK_TOP + t) for t in range(L.NTYPES)]
        try:
            want = brute_force(state, W, tops, [MAX_LEAVES])
        except OverflowError:
            continue
        got = planner_value(state, W)
        assert got == pytest.approx(want, abs=1e-9), (
            f"players={players} seed={seed} {spec}: round {state.get(L.G_ROUND)}, seat "
            f"{api.current_player(state)}, decision {api.decision_name(state)}: search {got}, brute force {want}")
        checked += 1
    assert checked >= 8


def _mid_build_out_of_order(state: api.State) -> bool:
    """A later group of a build of alike groups, whose earlier groups took a column above every
    column still open to this one (as a player who builds in any order leaves it)."""
    arr = state.arr
    if arr[L.G_SP] == 0 or not P.transposable(arr):
        return False
    used = arr[L.FRAMES + (arr[L.G_SP] - 1) * L.FW + 3]
    columns = [a - L.A_COLUMN for a in api.legal_actions(state) if L.A_COLUMN <= a < L.A_SKIP]
    return bool(columns) and max(c for c in range(L.MAXC) if (used >> c) & 1) > max(columns)


def test_a_search_that_starts_in_the_middle_of_a_build_takes_a_column():
    """A plan may end in the middle of a build (the game then asks the planner again). Seen
    from there, the build's earlier groups may stand in any column order, and ordering the
    alike groups' columns against them once pruned every column left: the search found no
    line and the planner chose action -1 (found with a learned evaluation, issue 40). Such
    positions, from games of random builders, get the brute force's value and a legal action."""
    W = weights("cardheights", 2)
    checked = 0
    for seed in range(60, 90):
        for state in decision_states(2, seed, "random", every=1):
            if not _mid_build_out_of_order(state):
                continue
            tops = [state.get(L.STACK_TOP + t) for t in range(L.NTYPES)]
            assert planner_value(state, W) == pytest.approx(brute_force(state, W, tops, [10**6]), abs=1e-9)
            buf = new_buffers()
            legal = np.array(api.legal_actions(state), dtype=np.int32)
            a = P.plan_choose(state.arr.copy(), RULES.packed, W, legal, len(legal), new_stream(1), buf[0], buf[2],
                              buf[4])
            assert a in legal
            checked += 1
    assert checked >= 5


def _best_turns(state: api.State, W: np.ndarray, want: int, seed: int = 1):
    """The planner's ``want`` best turns from ``state``: (value, line of actions) pairs."""
    work = P.new_plan_work()
    meta, top = work.meta, work.top
    legal = np.array(api.legal_actions(state), dtype=np.int32)
    meta[P.M_WANT] = want
    best = P.search_turn(state.arr.copy(), RULES.packed, W, to_move(state.arr), legal, len(legal),
                         new_stream(seed), work.search, meta, top)
    lines, values, lengths, _ = top
    kept = [(float(values[i]), [int(a) for a in lines[i, :lengths[i], P.L_ACT]]) for i in range(meta[P.M_NTOP])]
    return best, kept


def _play_line(state: api.State, line: list[int]) -> api.State:
    """The position a kept turn reaches: its decisions, and between them what the search does
    without a decision (a single choice it has seen applied, a frame of unseen cards passed)."""
    s = state.clone()
    p = api.current_player(s)
    tops = [s.get(L.STACK_TOP + t) for t in range(L.NTYPES)]

    def forced(s):
        while not api.is_terminal(s) and api.current_player(s) == p and len(seen_actions(s, tops)) < 2:
            seen = seen_actions(s, tops)
            if seen:
                api.apply_action(s, seen[0])
            else:
                s = passed(s)
        return s

    for a in line:
        s = forced(s)
        assert a in seen_actions(s, tops)
        api.apply_action(s, a)
    return forced(s)


@pytest.mark.parametrize("players, seed, spec", [(2, 41, "cardheights"), (4, 42, "cards"), (3, 43, "greedy")])
def test_the_search_keeps_its_best_distinct_turns(players, seed, spec):
    """Asked for its best turns (``M_WANT``, for the search player's root=turn), the planner
    keeps distinct turns, each worth what its end position evaluates to, the best of them the
    search's value, and the best k of them the best k of a longer list."""
    W = weights(spec, players)
    checked = 0
    for state in decision_states(players, seed, spec, every=5):
        p = api.current_player(state)
        best, kept = _best_turns(state, W, P.TOP_MAX)
        assert best == planner_value(state, W)
        assert kept and max(v for v, _ in kept) == best
        ends = set()
        for v, line in kept:
            end = _play_line(state, line)
            if api.is_terminal(end) or api.current_player(end) != p:      # a whole turn
                assert evaluate(end.arr, RULES.packed, np.int32(p), W, np.int32(p)) == pytest.approx(v, abs=1e-9)
            ends.add(end.arr[:L.CORE].tobytes())
        assert len(ends) == len(kept)                  # no end of turn kept twice
        for k in (1, 3, 8):
            few = sorted(v for v, _ in _best_turns(state, W, k)[1])
            assert few == sorted(v for v, _ in kept)[::-1][:k][::-1]
        checked += len(kept) > 3
    assert checked >= 5


def test_a_turn_ends_where_its_plan_said():
    """The turn's first search predicts the value the turn reaches: later decisions follow its
    line (unless a draw showed a new card, when the player plans again)."""
    players, seed, spec = 4, 41, "balanced"
    W = weights(spec, players)
    final, log = play_game(RULES, players, seed, [spec] * players)
    state = api.new_game(RULES, players, seed)
    predicted, turn, compared = None, None, 0
    tops_then = None
    for a in log:
        a = int(a)
        arr = state.arr
        if arr[L.G_PHASE] != L.PH_SETUP and arr[L.G_NTURNS] != turn:
            turn = int(arr[L.G_NTURNS])
            predicted = planner_value(state, W) if len(api.legal_actions(state)) > 1 else None
            tops_then = arr[L.STACK_TOP:L.STACK_TOP + L.NTYPES].copy()
            seat = api.current_player(state)
        api.apply_action(state, a)
        ended = api.is_terminal(state) or (turn is not None and state.get(L.G_NTURNS) != turn)
        if ended and predicted is not None:
            drew = (state.arr[L.STACK_TOP:L.STACK_TOP + L.NTYPES] != tops_then).any()
            if not drew:
                assert evaluate(state.arr, RULES.packed, np.int32(seat), W, np.int32(seat)) == pytest.approx(predicted), \
                    f"turn {turn} (seat {seat}) ended below its plan"
                compared += 1
            predicted = None
    assert compared >= 10


@pytest.mark.parametrize("players, seed, spec", [(2, 51, "cards"), (4, 52, "balanced"), (3, 53, "emperor")])
def test_no_peeking_below_the_top_cards(players, seed, spec):
    """Two states that differ only in the order below the stacks' tops get the same decision and
    the same value from the same random stream, at every decision of a game."""
    W = weights(spec, players)
    rng = np.random.default_rng(seed)
    differed = 0
    for state in decision_states(players, seed, spec, every=3):
        other = reorder_hidden(state, rng)
        differed += bool((other.arr != state.arr).any())
        choices = []
        for s in (state, other):
            t, _, legal2, _, work = new_buffers()
            legal = np.array(api.legal_actions(s), dtype=np.int32)
            a = P.plan_choose(s.arr.copy(), RULES.packed, W, legal, len(legal), new_stream(7), t, legal2, work)
            search = work.search
            choices.append((int(a), search.lines[0, :search.nodes[0, P.B_PVLEN], 0].tolist()))
        assert choices[0] == choices[1], f"round {state.get(L.G_ROUND)}: {choices[0]} != {choices[1]}"
    assert differed >= 10


# the learned one too, and looking a round ahead (the turns it foresees must be played on a
# sample of the unseen order, never the true one: this test fails without that)
PLANNERS = [s.name for s in BUILTINS if s.kind == KIND_PLANNER] + ["expert", "expert(replies=4)"]
PEEK_GAMES = 180           # 4-player games of four different planners, every planner in 64 to 66


def _decide(kinds, W, arr, legal, n, rs, work):
    """The seat to move's decision through the game loop's own dispatch, and its planner's
    search count and last searched value then."""
    p = to_move(arr)
    a = int(choose(kinds[p], W, p, arr.copy(), RULES.packed, legal[:n].copy(), n, rs, work))
    planner = work[0][PLANNER_WORK]                   # policy work: t, t2, legal2, memo, the planner's
    return a, int(plan_meta(work[0])[P.M_SEARCHES]), float(planner.search.node_values[0, P.V_BEST])


def test_no_planner_peeks_below_the_top_cards_at_any_decision():
    """Every built-in planner, at every decision its seats make in many seeded games: the same
    position with the unseen cards below each stack's top put in another order gets the same
    decision, and every search the same value, from the same random stream. Each side keeps its
    own buffers through the game, so following a plan made earlier in the turn is checked too.
    Hidden cards matter rarely (a draw, then a Temple card in the same turn: about one decision
    in 3,000), so the check needs every decision of many games."""
    R = RULES.packed
    rng = np.random.default_rng(4242)
    compared = reordered = 0
    for g in range(PEEK_GAMES):
        field = [PLANNERS[(g + j * 2) % len(PLANNERS)] for j in range(4)]
        kinds, W = seat_arrays(field)
        sides = []
        for _ in range(2):
            _, _, rs, work, _ = buffers(4, field)
            rs[0] = np.uint64(1000 + g)
            sides.append((rs, work))
        for arr, legal, n, _ in game_decisions(RULES, 4, 500 + g, field):
            if n < 2:
                continue                              # forced: the game loop asks no player
            other = reorder_hidden(arr, rng)
            reordered += bool((other != arr).any())
            mine, theirs = (_decide(kinds, W, x, legal, n, rs, work) for x, (rs, work) in zip((arr, other), sides))
            assert mine == theirs, (f"{field[to_move(arr)]}, game {g}, round {arr[L.G_ROUND]}: "
                                    f"{mine} != {theirs} (action, searches, value)")
            compared += 1
    assert compared > 25_000 and reordered > compared // 2, (compared, reordered)


def test_a_setup_placement_and_a_move_reach_the_arrival_position():
    """The planner values a placement by the best turn from each space the worker can move to,
    searched once per space: placing on x and moving to y leaves exactly the position of placing
    on y (with the move made), whatever x was."""
    for players, seed in ((2, 61), (4, 62)):
        state = api.new_game(RULES, players, seed)
        checked = 0
        while state.get(L.G_PHASE) == L.PH_SETUP:
            p = api.current_player(state)
            for x_action in api.legal_actions(state):
                placed = state.clone()
                api.apply_action(placed, x_action)
                k = next(k for k in range(2)
                         if placed.player(p, L.P_WPOS + k) == x_action - L.A_SPACE)
                moving = placed.clone()
                arr = moving.arr
                arr[L.G_CUR], arr[L.G_MOVED], arr[L.G_PHASE] = p, k, L.PH_MOVE
                arr[L.G_CARD_SPACE], arr[L.G_CARD_PLAYED] = -1, 0
                # a move during setup: the planner's own what-if, a position no game reaches
                for y_action in api.legal_actions(api.assume_reachable(moving)):
                    moved = moving.clone()
                    api.apply_action(moved, y_action)
                    direct = state.clone()
                    api.apply_action(direct, y_action)
                    d = direct.arr
                    d[L.G_CUR], d[L.G_MOVED], d[L.G_PHASE] = p, k, L.PH_MAIN
                    d[L.G_CARD_SPACE], d[L.G_CARD_PLAYED] = y_action - L.A_SPACE, 0
                    assert (moved.arr[:L.CORE] == d[:L.CORE]).all()
                    checked += 1
            api.apply_action(state, api.legal_actions(state)[0])
        assert checked > 20


def test_turn_planners_place_their_workers_where_the_best_turn_is():
    """Setup placements are chosen, not random: a placement the planner takes is one of the
    best by its own valuation (the value of its best reachable turn)."""
    players, seed, spec = 4, 71, "greedy"
    W = weights(spec, players)
    final, log = play_game(RULES, players, seed, [spec] * players)
    state = api.new_game(RULES, players, seed)
    spread = 0.0
    for a in log[:players]:
        legal = np.array(api.legal_actions(state), dtype=np.int32)
        t, _, legal2, _, work = new_buffers()
        values = np.zeros(L.MAXS + 1)
        P.placement_values(state.arr.copy(), RULES.packed, W, legal, len(legal), new_stream(1), t, legal2, work,
                           values)
        chosen = values[list(legal).index(int(a))]
        assert chosen == values[:len(legal)].max()
        spread = max(spread, chosen - values[:len(legal)].min())
        api.apply_action(state, int(a))
    assert spread > 0                                  # the placements are not all alike


def test_api_finish_plays_on_to_the_end_of_the_turn_or_effect():
    state = api.new_game(RULES, 4, 81)
    while state.get(L.G_PHASE) == L.PH_SETUP:
        api.apply_action(state, api.legal_actions(state)[0])
    seat, turn = api.current_player(state), state.get(L.G_NTURNS)
    done = api.finish(state.clone(), "greedy", rng=np.random.default_rng(1))
    assert done.get(L.G_NTURNS) == turn + 1 and api.current_player(done) == (seat + 1) % 4
    # the same rng, the same turn; a function as policy; the original state is untouched
    again = api.finish(state.clone(), "greedy", rng=np.random.default_rng(1))
    assert (again.arr[:L.CORE] == done.arr[:L.CORE]).all()
    first = api.finish(state.clone(), lambda s, legal, rng: legal[0])
    assert first.get(L.G_NTURNS) == turn + 1 and state.get(L.G_NTURNS) == turn
    # until="effect": stops once the effect the site action opened is resolved
    mid = state.clone()
    api.apply_action(mid, api.legal_actions(mid)[0])          # the move
    api.apply_action(mid, L.A_SITE)
    if api.in_effect(mid):
        api.finish(mid, "random", until="effect", rng=np.random.default_rng(2))
        assert not api.in_effect(mid) or api.current_player(mid) != seat
    with pytest.raises(ValueError, match="until must be 'turn' or 'effect'"):
        api.finish(state.clone(), "greedy", until="round")


def test_plan_census_counts_the_turn_searches_work():
    """``batch.plan_census`` (the benchmark's cost line) reads the planner's counters: every
    turn of a planner game is searched, and the distinct end-of-turn positions are among those
    evaluated."""
    from evora_sim.batch import plan_census
    c = plan_census(RULES, 4, np.arange(3, dtype=np.int64) + 5100, ["cards"] * 4)
    assert c["turns"] > 0
    assert c["searches"] >= 1.0
    assert 0 < c["distinct"] <= c["leaves"]


def test_the_plan_cache_gives_the_plan_searched_at_the_same_visible_position():
    """A search player's rollouts cache their turn plans by the visible position
    (``planner.visible_hash``). A position met again with another order below the tops gets the
    plan the search made the first time, which is the plan a search would make there (the
    planner never reads that order); a position that differs in what is visible is searched
    again, and a new cache generation (the next search) uses nothing cached before it."""
    players, seed, spec = 4, 71, "cardheights"
    W = weights(spec, players)
    rng = np.random.default_rng(seed)
    states = [s for s in decision_states(players, seed, spec, every=5) if s.get(L.G_PHASE) == L.PH_MOVE]
    t, _, legal2, _, work = new_buffers()
    plan, meta = work.plan, work.meta
    P.new_cache_generation(meta)

    def choose(s, stream=7):
        legal = np.array(api.legal_actions(s), dtype=np.int32)
        P.forget_plan(meta)
        P.plan_choose(s.arr.copy(), RULES.packed, W, legal, len(legal), new_stream(stream), t, legal2, work)
        return plan[:meta[P.M_LEN], 0].tolist()

    reordered = 0
    for state in states:
        first = choose(state)
        hits = meta[P.M_CACHE_HITS]
        searches = meta[P.M_SEARCHES]
        other = reorder_hidden(state, rng)
        reordered += bool((other.arr != state.arr).any())
        assert P.visible_hash(other.arr) == P.visible_hash(state.arr)
        assert choose(other, stream=8) == first                     # found, not searched
        assert meta[P.M_CACHE_HITS] == hits + 1 and meta[P.M_SEARCHES] == searches
    assert reordered >= 5
    # what is visible is in the key: each of these positions was searched once
    assert meta[P.M_SEARCHES] == len(states)
    assert len({P.visible_hash(s.arr) for s in states}) == len(states)
    P.new_cache_generation(meta)
    searches = meta[P.M_SEARCHES]
    choose(states[0])
    assert meta[P.M_SEARCHES] == searches + 1                       # the old generation is not used


def test_the_plan_cache_is_off_for_the_seats_at_the_table():
    """Only a search player's rollouts turn the cache on: a turn planner seated at the table
    searches every turn (its games are those of the goldens)."""
    from strategies.policy import new_policy_work, plan_meta
    assert plan_meta(new_policy_work())[P.M_CACHE] == 0


def test_the_speed_floor_times_legal_steps_of_the_planners_own_games():
    """scripts/planner_floor.py (the floor bench_engine prints): every (position, action) pair it
    times is a decision point of the strategy's own game with an action legal there, and the
    floor is the games/s of one step and one evaluation per distinct end-of-turn position."""
    F = load_script("planner_floor")
    sids = ["cards"] * 3
    S, A = F.sample_pairs(RULES, 3, [11], sids, max_pairs=300)
    assert 0 < len(S) <= 300 and len(S) == len(A)
    for arr, a in zip(S, A):
        st = api.new_game(RULES, 3, 11)
        st.arr[:] = arr
        assert int(a) in api.legal_actions(st)
    assert len({arr.tobytes() for arr in S}) > 10       # positions from across the game
    # 200 positions a turn, 50 turns, 150 + 50 ns each: 2 ms a game
    assert F.floor_games_per_second(200, 50, 150, 50) == pytest.approx(500.0)
    assert F.floor_games_per_second(0, 50, 150, 50) == float("inf")
