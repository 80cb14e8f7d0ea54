"""The strategy system: specs, the built-in family, custom Python strategies, `evora duel` and
`evora strategies`.

- Spec grammar: built-ins, inline weights, weight files, custom `.py` strategies, entry points,
  and every bad input as one clear StrategyError.
- The built-ins play differently (each pair differs in some per-game statistic; the issue's
  named comparisons) and each heuristic beats random in >= 90% of 2,000 seat-rotated 2-player
  games.
- Custom Python strategies: the worked example, mixed tables, reproducibility, the runner with
  worker processes, illegal actions and exceptions (one line, exit status 2).
"""
from __future__ import annotations

import importlib.metadata
import itertools
import json
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from evora_sim import api
from evora_sim import layout as L
from evora_sim.batch import play_batch, play_game
from evora_sim.gameloop import GAME_COLUMNS, SEAT_COLUMNS
from evora_sim.cli import main
from evora_sim.mixed import play_mixed_batch
from evora_sim.rules import load_rules
from evora_sim.runner import Execution, RunError, simulate
from strategies.builtin import BUILTINS, NAMES, Strategy
from strategies.compiled import FEATURES, KIND_RANDOM
from strategies.custom import GROUP, CustomStrategy
from strategies.registry import (StrategyError, as_strategy, from_resolved, parse_spec, parse_strategies, resolved,
                                 split_specs)
from cli_results import ok
from cli_results import one_error_line as _one_error_line


def one_error_line(result) -> str:
    """This file's errors must also print nothing on stdout."""
    return _one_error_line(result, no_stdout=True)


RULES = load_rules()
EXAMPLE = Path(__file__).resolve().parents[1] / "strategies" / "examples" / "cautious.py"
CAUTIOUS = f"{EXAMPLE}:Cautious"
HEURISTICS = [n for n in NAMES if n != "random"]
COL = {name: i for i, name in enumerate(SEAT_COLUMNS)}


def builtin(name: str) -> Strategy:
    return BUILTINS[NAMES.index(name)]


def weights(strategy) -> dict[str, float]:
    return dict(zip(FEATURES, strategy.weights))


def write(tmp_path, name, text) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


@pytest.fixture
def cli():
    return CliRunner()


# ---------------------------------------------------------------------------------------------
# spec grammar
# ---------------------------------------------------------------------------------------------
def test_top_level_commas_only_split_the_list():
    assert split_specs("balanced(column=2, emperor=0.5),random") == ["balanced(column=2, emperor=0.5)", "random"]
    assert split_specs(" greedy , a.toml:x(vp=1,h1=2) ") == ["greedy", "a.toml:x(vp=1,h1=2)"]
    seats = parse_strategies("balanced(column=2, emperor=0.5),random", 2)
    assert [s.name for s in seats] == ["balanced(column=2, emperor=0.5)", "random"]


def test_a_builtin_name_is_the_builtin_itself():
    assert parse_spec("majority") is builtin("majority")
    assert parse_spec(" Majority ") is builtin("majority")
    assert parse_spec("balanced()") is builtin("balanced")
    assert parse_spec("random()") is builtin("random")
    assert as_strategy("greedy") is builtin("greedy") and as_strategy(1) is builtin("greedy")


def test_inline_weights_change_only_the_named_features():
    s = parse_spec("balanced(column=2, emperor=0.5)")
    assert s.plan == "turn" and s.name == "balanced(column=2, emperor=0.5)"
    expect = weights(builtin("balanced")) | {"column": 2.0, "emperor": 0.5}
    assert weights(s) == expect
    assert s.description == builtin("balanced").description
    # the name is the spec normalised: lower case, FEATURES order, shortest numbers
    assert parse_spec("Balanced( emperor = .50 , COLUMN=2.0 )").name == s.name
    assert parse_spec("greedy(denial=-1e-1)").name == "greedy(denial=-0.1)"
    assert parse_spec("greedy(empty_stack=+3)").weights[FEATURES.index("empty_stack")] == 3.0


def test_inline_weights_play_as_a_strategy_everywhere():
    seeds = np.arange(30)
    res = play_batch(RULES, 2, seeds, ["balanced(column=2, emperor=0.5)", "random"])
    same = play_batch(RULES, 2, seeds, [parse_spec("balanced(column=2, emperor=0.5)"), builtin("random")])
    assert (res.seats == same.seats).all() and (res.games == same.games).all()
    # a weight that changes the evaluation changes the games
    other = play_batch(RULES, 2, seeds, ["balanced(column=9, emperor=0)", "random"])
    assert not (res.seats == other.seats).all()
    # identical weights under another name play identical games
    alias = play_batch(RULES, 2, seeds, ["greedy(vp=1)", "random"])
    plain = play_batch(RULES, 2, seeds, ["greedy", "random"])
    assert (alias.seats == plain.seats).all()


def test_plan_is_an_option_of_every_heuristic():
    """plan=turn (the default) plans the whole turn; plan=action values each decision alone."""
    for st in BUILTINS:
        assert st.plan == ("turn" if st.is_heuristic else None)
    assert parse_spec("greedy(plan=turn)") is builtin("greedy")
    s = parse_spec("greedy(plan=action)")
    assert s.plan == "action" and s.name == "greedy(plan=action)" and s.weights == builtin("greedy").weights
    # the name is normalised: the plan first, then the weights in FEATURES order
    assert parse_spec("Greedy( column=2, PLAN = Action )").name == "greedy(plan=action, column=2)"
    assert parse_spec("greedy(plan=turn, column=2)").name == "greedy(column=2)"
    # the two plans play different games, and plan=action is the heuristic of before turn
    # planning (the golden games recorded then replay with it: tests/test_golden.py)
    seeds = np.arange(20)
    turn = play_batch(RULES, 2, seeds, ["greedy", "random"])
    action = play_batch(RULES, 2, seeds, ["greedy(plan=action)", "random"])
    assert not (turn.seats == action.seats).all()
    # a manifest entry says which, and reads back to the same strategy
    info = resolved(s)
    assert info["plan"] == "action" and from_resolved(s.name, info) == Strategy(s.name, s.kind, s.weights)
    old = {"kind": "heuristic", "weights": dict(zip(FEATURES, s.weights))}     # before plans existed
    assert from_resolved("greedy", old).plan == "action"


def test_a_weight_file_may_set_the_plan(tmp_path):
    path = write(tmp_path, "w.toml", '[fast]\nbase = "balanced"\nplan = "action"\n'
                                     '[odd]\nbase = "greedy"\nplan = "later"\n')
    fast = parse_spec(f"{path}:fast")
    assert fast.plan == "action" and fast.weights == builtin("balanced").weights
    assert parse_spec(f"{path}:fast(plan=turn)").name == f"{path}:fast(plan=turn)"
    with pytest.raises(StrategyError, match=r"plan='later' is not allowed \(plan is one of: turn, action\)"):
        parse_spec(f"{path}:odd")


@pytest.mark.parametrize("spec, message", [
    ("balanced(colum=2)", "strategy 'balanced(colum=2)': unknown weight 'colum' (weights are the features: vp, column,"),
    ("greedy(vp=lots)", "strategy 'greedy(vp=lots)': weight vp='lots' is not a number"),
    ("greedy(vp=nan)", "weight vp='nan' is not a number"),
    ("greedy(vp=)", "weight vp='' is not a number"),
    ("greedy(vp=1e999)", "weight vp='1e999' is out of range"),
    ("greedy(vp=1, vp=2)", "weight 'vp' given twice"),
    ("greedy(vp)", "'vp' is not feature=weight"),
    ("greedy(vp=1", "'(' without ')'"),
    ("greedy)", "')' without '('"),
    ("greedy(vp=1)x", "inline weights are written NAME(feature=weight, ...)"),
    ("(vp=1)", "no strategy name before '('"),
    ("random(vp=1)", "random has no weights or plan to change"),
    ("random(plan=action)", "random has no weights or plan to change"),
    ("greedy(plan=fast)", "strategy 'greedy(plan=fast)': plan='fast' is not allowed (plan is one of: turn, action)"),
    ("greedy(plan=turn, plan=action)", "plan given twice"),
    ("greedy(plan=action, vp=inf)", "weight vp='inf' is not a number"),
    ("nonesuch", "unknown strategy 'nonesuch' (known strategies: balanced, blocker,"),
    ("nonesuch(vp=1)", "unknown strategy 'nonesuch'"),
    ("mine.json:x", "expected FILE.toml:NAME (a weight set) or FILE.py:NAME (a Python strategy)"),
    ("", "empty strategy name"),
])
def test_bad_specs_name_the_strategy_and_the_problem(spec, message):
    with pytest.raises(StrategyError) as info:
        parse_strategies(spec, 2) if spec else parse_spec(spec)
    assert message in str(info.value)
    assert isinstance(info.value, ValueError)


def test_a_bad_spec_in_a_list_says_which(tmp_path):
    with pytest.raises(StrategyError, match=r"strategy 2 of 3: strategy 'greedy\(x=1\)': unknown weight 'x'"):
        parse_strategies("random,greedy(x=1),random", 3)
    with pytest.raises(StrategyError, match="2 strategies given for 4 seats"):
        parse_strategies("random,greedy(vp=2, h1=1)", 4)


WEIGHTS_TOML = """
    # a designer's weight sets
    [aggressive]
    description = "Columns above all."
    weights = { vp = 2, column = 3.5, denial = 1 }

    [tuned]
    base = "greedy"
    weights = { denial = 0.5, h1 = 0 }

    [plain]
    base = "emperor"
"""


def test_weight_sets_from_a_designers_file(tmp_path):
    path = write(tmp_path, "mystrats.toml", WEIGHTS_TOML)
    s = parse_spec(f"{path}:aggressive")
    assert s.name == f"{path}:aggressive" and s.is_heuristic
    assert weights(s) == {f: 0.0 for f in FEATURES} | {"vp": 2.0, "column": 3.5, "denial": 1.0}
    assert s.description == "Columns above all."
    tuned = parse_spec(f"{path}:tuned")
    assert weights(tuned) == weights(builtin("greedy")) | {"denial": 0.5, "h1": 0.0}
    assert parse_spec(f"{path}:plain").weights == builtin("emperor").weights
    # a file's set takes inline weights too
    more = parse_spec(f"{path}:aggressive(vp=1)")
    assert more.name == f"{path}:aggressive(vp=1)" and weights(more)["vp"] == 1.0
    assert weights(more)["column"] == 3.5
    # relative to the working directory, as typed
    res = play_batch(RULES, 2, np.arange(10), [f"{path}:aggressive", "random"])
    assert res.games.shape == (10, len(GAME_COLUMNS))


@pytest.mark.parametrize("text, spec, message", [
    (WEIGHTS_TOML, "{tmp}/nope.toml:aggressive", "weight file {tmp}/nope.toml not found"),
    (WEIGHTS_TOML, "{file}:calm", "has no weight set [calm] (it has: aggressive, tuned, plain)"),
    ("[a]\nweights = { vp = 'high' }\n", "{file}:a", "weight vp='high' is not a number"),
    ("[a]\nweights = { vp = true }\n", "{file}:a", "weight vp=True is not a number"),
    ("[a]\nweights = { speed = 1 }\n", "{file}:a", "unknown weight 'speed'"),
    ("[a]\nweights = 3\n", "{file}:a", "weights must be a table"),
    ("[a]\ndescription = 'x'\n", "{file}:a", "has no weights = {feature = number, ...}"),
    ("[a]\nbase = 'random'\n", "{file}:a", "base 'random' has no weights to start from"),
    ("[a]\nbase = 'nonesuch'\n", "{file}:a", "base 'nonesuch' is not a built-in"),
    ("[a]\nweight = { vp = 1 }\n", "{file}:a", "unknown key(s) weight"),
    ("[a\n", "{file}:a", "is not valid TOML"),
])
def test_bad_weight_files(tmp_path, text, spec, message):
    path = write(tmp_path, "w.toml", text)
    spec = spec.format(tmp=tmp_path, file=path)
    with pytest.raises(StrategyError) as info:
        parse_spec(spec)
    assert message.replace("{tmp}", str(tmp_path)) in str(info.value)
    assert f"strategy {spec!r}" in str(info.value)


def test_custom_python_strategy_from_a_file(tmp_path, monkeypatch):
    s = parse_spec(CAUTIOUS)
    assert isinstance(s, CustomStrategy) and s.name == CAUTIOUS
    assert s.description.startswith("Builds where it holds the column majority")
    # a relative path is recorded absolute, so worker processes find the same file
    monkeypatch.chdir(EXAMPLE.parent)
    rel = parse_spec("cautious.py:Cautious")
    assert rel.name == CAUTIOUS and rel.digest == s.digest
    # a plain function works as well
    path = write(tmp_path, "bots.py", """
        def first(state, legal_actions, rng):
            '''Always the first legal action.'''
            return legal_actions[0]
    """)
    fn = parse_spec(f"{path}:first")
    assert fn.description == "Always the first legal action."
    res = play_batch(RULES, 3, np.arange(5), [f"{path}:first", "greedy", "random"])
    assert (res.games[:, 3] >= 0).all()


@pytest.mark.parametrize("text, attr, message", [
    (None, "Cautious", "file {file} not found"),
    ("class A:\n    def choose(self, s, l, r):\n        return l[0]\n", "Nope",
     "{file} has no class or function 'Nope' (it defines: A)"),
    ("X = 3\n", "X", "defines it as a int, not a class with a choose(state, legal_actions, rng) method"),
    ("class A:\n    pass\n", "A", "class A in {file} has no choose(self, state, legal_actions, rng) method"),
    ("def f(state):\n    return 0\n", "f", "choose in {file} must take (state, legal_actions, rng)"),
    ("def f(:\n", "f", "cannot load {file}: SyntaxError"),
    ("import nonesuch_module_xyz\n", "f", "cannot load {file}: ModuleNotFoundError"),
])
def test_bad_custom_files(tmp_path, text, attr, message):
    path = tmp_path / "bot.py"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    spec = f"{path}:{attr}"
    with pytest.raises(StrategyError) as info:
        parse_spec(spec)
    assert message.replace("{file}", str(path)) in str(info.value)
    assert str(info.value).startswith(f"strategy {spec!r}")
    with pytest.raises(StrategyError):
        parse_spec(f"{path}:{attr}(vp=1)")


def test_a_custom_strategy_takes_no_weights():
    with pytest.raises(StrategyError, match="a Python strategy takes no weights"):
        parse_spec(f"{CAUTIOUS}(vp=1)")


@pytest.fixture
def entry_point(monkeypatch):
    """An installed package's entry point `cautious_ep` in the group evora_sim.strategies."""
    ep = importlib.metadata.EntryPoint(name="cautious_ep", value="strategies.examples.cautious:Cautious",
                                       group=GROUP)
    real = importlib.metadata.entry_points

    def fake(**kw):
        if kw.get("group") == GROUP:
            return importlib.metadata.EntryPoints([ep])
        return real(**kw)

    monkeypatch.setattr(importlib.metadata, "entry_points", fake)
    return ep


def test_entry_point_strategies(entry_point, cli):
    s = parse_spec("cautious_ep")
    assert isinstance(s, CustomStrategy) and s.name == "cautious_ep" and s.source == "entry_point"
    res = play_batch(RULES, 2, np.arange(4), ["cautious_ep", "random"])
    ref = play_batch(RULES, 2, np.arange(4), [CAUTIOUS, "random"])
    assert (res.seats == ref.seats).all()            # the same class, however it is named
    assert "known strategies: balanced, blocker, builder, cardheights, cards, emperor, expert, greedy, heights, " \
           "majority, mcts, random, cautious_ep" in str(pytest.raises(StrategyError, parse_spec, "nonesuch").value)
    out = ok(cli.invoke(main, ["strategies"]))
    assert "cautious_ep  = strategies.examples.cautious:Cautious" in out
    with pytest.raises(StrategyError, match="a Python strategy takes no weights"):
        parse_spec("cautious_ep(vp=1)")


def test_a_builtin_name_wins_over_an_entry_point(monkeypatch):
    ep = importlib.metadata.EntryPoint(name="greedy", value="strategies.examples.cautious:Cautious", group=GROUP)
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda **kw: importlib.metadata.EntryPoints([ep]))
    assert parse_spec("greedy") is builtin("greedy")


def test_a_broken_entry_point_is_one_clear_error(monkeypatch):
    ep = importlib.metadata.EntryPoint(name="broken", value="nonesuch_pkg_xyz.bots:Bot", group=GROUP)
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda **kw: importlib.metadata.EntryPoints([ep]))
    with pytest.raises(StrategyError, match=r"strategy 'broken': cannot load entry point broken = "
                                            r"nonesuch_pkg_xyz.bots:Bot: ModuleNotFoundError"):
        parse_spec("broken")


# ---------------------------------------------------------------------------------------------
# the built-in family: each heuristic beats random; each plays differently
# ---------------------------------------------------------------------------------------------
SEEDS_VS_RANDOM = np.arange(1000, dtype=np.int64)        # x 2 seat rotations = 2,000 games


def seat_game_stats(res, seat: int) -> dict[str, np.ndarray]:
    """Per-game statistics of one seat, from play_batch's arrays."""
    s, st = res.seats[:, seat], res.stats[:, seat]
    out = {name: s[:, COL[name]].astype(float) for name in SEAT_COLUMNS if name.startswith("vp_")}
    out["score"] = s[:, COL["score"]].astype(float)
    out["vp_heights"] = sum(out[f"vp_height_{k}"] for k in range(1, 5)) + out["vp_capitals"]
    out["parts_placed"] = (RULES.data["supply"]["stones"] + RULES.data["supply"]["capitals"]
                           - s[:, COL["parts_left"]]).astype(float)
    out["seat_turns"] = s[:, COL["seat_turns"]].astype(float)
    out["cards_played"] = st[:, L.S_PLAYS:L.S_PLAYS + L.NEFF].sum(axis=1).astype(float)
    out["instant_tiles"] = st[:, L.S_PLAYS + L.NEFF:L.S_PLAYS + L.NTRACK].sum(axis=1).astype(float)
    out["temple_uses"] = st[:, L.S_TEMPLE_USES:L.S_TEMPLE_USES + L.NEFF].sum(axis=1).astype(float)
    out["site_actions"] = st[:, L.S_SPACE_USES:L.S_SPACE_USES + L.MAXS].sum(axis=1).astype(float)
    return out


@pytest.fixture(scope="module")
def versus_random():
    """Each heuristic against random in 2-player games: 1,000 seeds x 2 seat rotations. Per
    heuristic: its wins and its per-game statistics (2,000 seat-games)."""
    out = {}
    for name in HEURISTICS:
        wins, parts = 0, []
        for seat in (0, 1):
            field = [name, "random"] if seat == 0 else ["random", name]
            res = play_batch(RULES, 2, SEEDS_VS_RANDOM, field)
            wins += int((res.games[:, 3] == seat).sum())
            parts.append(seat_game_stats(res, seat))
        stats = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
        out[name] = (wins, stats)
    return out


@pytest.mark.parametrize("name", HEURISTICS)
def test_each_heuristic_beats_random_in_90_percent_of_2000_seat_rotated_games(versus_random, name):
    wins, _ = versus_random[name]
    assert wins / 2000 >= 0.90, f"{name} won {wins} of 2,000 games against random"


def z_score(a: np.ndarray, b: np.ndarray) -> float:
    """Welch z of the difference of two means (the seat-games are independent games)."""
    se = np.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    return float((a.mean() - b.mean()) / se) if se > 0 else 0.0


# The comparisons, and one signature statistic per heuristic: (more, less, statistic).
# Measured per game against random (the same opponent and seeds for every heuristic).
NAMED = [
    ("majority", "builder", "vp_column_majority"),     # majority wins more column majorities
    ("emperor", "greedy", "vp_emperor"),               # emperor scores more Emperor bonus
    ("cards", "builder", "cards_played"),              # cards plays more cards
    ("builder", "greedy", "vp_build"),                 # builder scores more VP from its parts
    ("heights", "builder", "vp_heights"),              # heights wins more height majorities
    ("balanced", "greedy", "vp_emperor"),              # balanced values its Emperor tiles more
    ("blocker", "greedy", "vp_height_1"),              # blocker contests the cheap majorities
    ("cardheights", "balanced", "cards_played"),       # cardheights plays its cards,
    ("cardheights", "balanced", "vp_capitals"),        # and takes the top height majorities
]


@pytest.mark.parametrize("more, less, stat", NAMED, ids=[f"{a}>{b}:{s}" for a, b, s in NAMED])
def test_named_behaviour_differences(versus_random, more, less, stat):
    a, b = versus_random[more][1][stat], versus_random[less][1][stat]
    z = z_score(a, b)
    assert z > 5, f"{more} {stat} {a.mean():.2f} per game vs {less} {b.mean():.2f} (z = {z:.1f})"


@pytest.mark.parametrize("a, b", list(itertools.combinations(HEURISTICS, 2)))
def test_every_pair_of_heuristics_plays_differently(versus_random, a, b):
    sa, sb = versus_random[a][1], versus_random[b][1]
    zs = {k: z_score(sa[k], sb[k]) for k in sa}
    best = max(zs, key=lambda k: abs(zs[k]))
    assert abs(zs[best]) > 5, (f"{a} and {b} differ in no per-game statistic by more than 5 "
                               f"standard errors (largest: {best}, z = {zs[best]:.1f})")


def test_the_builtin_family_and_its_file():
    assert NAMES[:2] == ("random", "greedy")
    assert set(NAMES) == {"random", "greedy", "builder", "majority", "heights", "emperor", "cards",
                          "blocker", "balanced", "cardheights"}
    assert builtin("random").kind == KIND_RANDOM
    for s in BUILTINS:
        assert s.description and len(s.description.splitlines()) == 1
        assert s.kind == KIND_RANDOM or any(s.weights)
    assert len({s.weights for s in BUILTINS}) == len(BUILTINS)       # no two share weights


# ---------------------------------------------------------------------------------------------
# custom Python strategies at the table
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("field", [["greedy", "random"], ["balanced", "random", "cards"],
                                   ["random", "majority", "emperor", "blocker"],
                                   ["balanced(column=2)", "heights", "random", "builder"]])
def test_the_python_loop_plays_exactly_the_compiled_games(field):
    """With built-ins only, the mixed driver is the batch driver: same forced-move rule, same
    random stream, same arrays."""
    seeds = np.arange(40, dtype=np.int64) * 7919
    a = play_batch(RULES, len(field), seeds, field)
    b = play_mixed_batch(RULES, len(field), seeds, field)
    for x, y in ((a.games, b.games), (a.seats, b.seats), (a.stats, b.stats)):
        assert (x == y).all()


def test_cautious_example_beats_random_and_is_reproducible():
    seeds = np.arange(100, dtype=np.int64)
    wins = 0
    for seat in (0, 1):
        field = [CAUTIOUS, "random"] if seat == 0 else ["random", CAUTIOUS]
        res = play_batch(RULES, 2, seeds, field)
        wins += int((res.games[:, 3] == seat).sum())
    assert wins / 200 >= 0.9, wins
    # mixed with three built-ins: every game ends normally; rerunning or splitting the batch
    # gives the same games (a fresh instance and a seeded Generator per game and seat)
    field = [CAUTIOUS, "greedy", "balanced", "random"]
    whole = play_batch(RULES, 4, seeds[:30], field)
    assert set(whole.games[:, 2]) <= {L.END_TEMPLE_FULL, L.END_OUT_OF_STONES}
    parts = [play_batch(RULES, 4, seeds[i:i + 10], field) for i in (0, 10, 20)]
    assert (np.concatenate([p.seats for p in parts]) == whole.seats).all()
    assert (np.concatenate([p.stats for p in parts]) == whole.stats).all()


def test_custom_strategies_get_a_copy_and_their_own_stream(tmp_path):
    path = write(tmp_path, "bots.py", """
        import numpy as np
        from evora_sim import api

        def first(state, legal_actions, rng):
            return legal_actions[0]

        def vandal(state, legal_actions, rng):
            state.arr[:] = 0                       # its own copy: the game is not affected
            return legal_actions[0]

        def lookahead(state, legal_actions, rng):
            api.apply_action(state, legal_actions[-1])   # changing the copy is allowed
            return legal_actions[0]

        def dice(state, legal_actions, rng):
            return rng.choice(legal_actions)        # a numpy integer is a fine answer

        class Counter:
            calls = []                             # instances are per game and seat
            def __init__(self):
                self.n = 0
                Counter.calls.append(self)
            def choose(self, state, legal_actions, rng):
                self.n += 1
                return legal_actions[-1]
    """)
    seeds = np.arange(20)
    ref = play_batch(RULES, 3, seeds, [f"{path}:first", "greedy", "random"])
    for other in ("vandal", "lookahead"):
        res = play_batch(RULES, 3, seeds, [f"{path}:{other}", "greedy", "random"])
        assert (res.seats == ref.seats).all() and (res.stats == ref.stats).all()
    a = play_batch(RULES, 2, seeds, [f"{path}:dice", f"{path}:dice"])
    b = play_batch(RULES, 2, seeds, [f"{path}:dice", f"{path}:dice"])
    assert (a.seats == b.seats).all()
    c = play_batch(RULES, 2, seeds + 1000, [f"{path}:dice", f"{path}:dice"])
    assert not (a.seats == c.seats).all()
    s = parse_spec(f"{path}:Counter")
    mod_counter = s.obj()
    mod_counter.calls.clear()
    play_batch(RULES, 2, np.arange(3), [s, s])
    assert len(mod_counter.calls) == 6 and all(c.n > 0 for c in mod_counter.calls)


def test_replay_with_a_custom_strategy(cli):
    out = ok(cli.invoke(main, ["replay", "-n", "2", "--seed", "5", "--strategies", f"{CAUTIOUS},greedy"]))
    assert f"Seats: 0 {CAUTIOUS}, 1 greedy" in out
    assert out.splitlines()[-1].startswith("Winner: seat ")
    final, log = play_game(RULES, 2, 5, [CAUTIOUS, "greedy"])
    assert f"{len(log)} decisions" in out
    assert api.is_terminal(api.State(final, RULES, 5))


BAD_BOTS = """
    from evora_sim import api

    def illegal(state, legal_actions, rng):
        return 999

    def not_an_action(state, legal_actions, rng):
        return "build"

    def boolean(state, legal_actions, rng):
        return True

    def late_illegal(state, legal_actions, rng):
        if api.decision_name(state) == "build":
            return max(legal_actions) + 1
        return legal_actions[0]

    def raises(state, legal_actions, rng):
        return legal_actions[0] // 0
"""


@pytest.mark.parametrize("name, pieces", [
    ("illegal", ["(seat 1) chose action 999 (no such action code), which is not legal at decision 2",
                 "('setup', round 0, turn 1, seat 1 to decide) of the game with seed 7",
                 "legal actions: action "]),
    ("not_an_action", ["chose 'build' (not an action code)"]),
    ("boolean", ["chose True (not an action code)"]),
    ("late_illegal", ["which is not legal at decision", "('build', round", "seed 7"]),
    ("raises", ["(seat 1) raised ZeroDivisionError: integer division or modulo by zero (at ",
                "bots.py:19) at decision 2 ('setup', round 0, turn 1, seat 1 to decide) of the game "
                "with seed 7"]),
])
def test_a_failing_custom_strategy_is_one_clear_error(tmp_path, cli, name, pieces):
    path = write(tmp_path, "bots.py", BAD_BOTS)
    spec = f"{path}:{name}"
    with pytest.raises(StrategyError) as info:
        play_batch(RULES, 2, np.array([7]), ["greedy", spec])
    msg = str(info.value)
    assert msg.startswith(f"strategy {spec!r} (seat 1) ")
    for piece in pieces:
        assert piece in msg
    line = one_error_line(cli.invoke(main, ["replay", "-n", "2", "--seed", "7", "--strategies",
                                            f"greedy,{spec}"]))
    assert msg in line
    line = one_error_line(cli.invoke(main, ["duel", "greedy", spec, "--games", "4"]))
    assert f"strategy {spec!r}" in line


@pytest.mark.parametrize("args, message", [
    (["replay", "-n", "2", "--seed", "1", "--strategies", "greedy(vp=x)"], "weight vp='x' is not a number"),
    (["replay", "-n", "2", "--seed", "1", "--strategies", "greedy(speed=1)"], "unknown weight 'speed'"),
    (["replay", "-n", "2", "--seed", "1", "--strategies", "{tmp}/none.py:Bot"], "file {tmp}/none.py not found"),
    (["replay", "-n", "2", "--seed", "1", "--strategies", f"{EXAMPLE}:Nope"],
     f"{EXAMPLE} has no class or function 'Nope' (it defines: Cautious)"),
    (["replay", "-n", "2", "--seed", "1", "--strategies", "{tmp}/none.toml:x"], "weight file {tmp}/none.toml not found"),
    (["simulate", "-n", "2", "--games", "3", "--strategies", "greedy(vp=x)", "--out", "{tmp}/run"],
     "weight vp='x' is not a number"),
    (["duel", "greedy", "nonesuch"], "strategy 2 of 2: unknown strategy 'nonesuch'"),
    (["duel", "greedy(plan=slow)", "random"], "plan='slow' is not allowed (plan is one of: turn, action)"),
    (["simulate", "-n", "2", "--games", "3", "--strategies", "greedy(cards=1e999)", "--out", "{tmp}/run"],
     "weight cards='1e999' is out of range"),
    (["duel", "greedy"], "a duel needs at least two strategies, got 1"),
    (["duel", "greedy", "random", "random", "-n", "4"], "3 strategies given for 4 players"),
    (["duel", "greedy", "random", "-n", "5"], "player count must be 2, 3 or 4, got 5"),
    (["duel", "greedy", "random", "--games", "0"], "--games must be a positive whole number"),
])
def test_bad_strategy_input_on_the_command_line(tmp_path, cli, args, message):
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    line = one_error_line(cli.invoke(main, args))
    assert message.replace("{tmp}", str(tmp_path)) in line
    assert not (tmp_path / "run").exists()


# ---------------------------------------------------------------------------------------------
# runs: the manifest records the strategies and their weights; workers load custom files
# ---------------------------------------------------------------------------------------------
def test_run_manifest_holds_specs_and_weights_and_resume_checks_them(tmp_path, cli):
    wfile = write(tmp_path, "mine.toml", "[calm]\nbase = 'greedy'\nweights = { denial = 0.5 }\n")
    spec = f"balanced(column=2),{wfile}:calm"
    run = simulate(2, 6, spec, seed=3, out=tmp_path / "run", seat_rotation=False, execution=Execution(chunk_size=3))
    m = json.loads((tmp_path / "run" / "manifest.json").read_text(encoding="utf-8"))
    names = ["balanced(column=2)", f"{wfile}:calm"]
    assert m["config"]["strategies"] == names
    res = m["config"]["resolved_strategies"]
    assert res["balanced(column=2)"] == {"kind": "heuristic", "plan": "turn",
                                         "weights": weights(parse_spec("balanced(column=2)"))}
    assert res[f"{wfile}:calm"]["weights"]["denial"] == 0.5
    assert m["strategies"][f"{wfile}:calm"]["kind"] == "heuristic"
    assert m["strategies"]["balanced(column=2)"]["description"] == builtin("balanced").description
    assert sorted(run.seats["strategy"].astype(str).unique()) == sorted(names)
    # the same command again: nothing to do
    again = simulate(2, 6, spec, seed=3, out=tmp_path / "run", seat_rotation=False, execution=Execution(chunk_size=3))
    assert again.n_games == 6
    # the weight file edited: the run is a different run
    wfile.write_text("[calm]\nbase = 'greedy'\nweights = { denial = 0.7 }\n", encoding="utf-8")
    with pytest.raises(RunError, match=r"different run \(resolved_strategies\..*calm\.weights\.denial: 0\.5 -> 0\.7\)"):
        simulate(2, 6, spec, seed=3, out=tmp_path / "run", seat_rotation=False, execution=Execution(chunk_size=3))
    line = one_error_line(cli.invoke(main, ["simulate", "-n", "2", "--games", "6", "--strategies", spec,
                                            "--seed", "3", "--chunk-size", "3", "--jobs", "1",
                                            "--out", str(tmp_path / "run"), "--quiet", "--no-seat-rotation"]))
    assert "denial: 0.5 -> 0.7" in line


def test_runs_with_a_custom_strategy_in_worker_processes(tmp_path):
    bot = tmp_path / "bot.py"
    bot.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    spec = f"{bot}:Cautious,greedy,random"
    one = simulate(3, 8, spec, seed=2, out=tmp_path / "one", seat_rotation=True,
                   execution=Execution(chunk_size=4, jobs=1))
    two = simulate(3, 8, spec, seed=2, out=tmp_path / "two", seat_rotation=True,
                   execution=Execution(chunk_size=4, jobs=2))
    key = ["game_id", "seat"]
    a = one.seats.sort_values(key).reset_index(drop=True)
    b = two.seats.sort_values(key).reset_index(drop=True)
    assert a.equals(b) and len(a) == 8 * 3 * 3
    assert one.manifest["config"]["resolved_strategies"][f"{bot}:Cautious"]["sha256"]
    # the custom file changed: resuming is refused
    bot.write_text(bot.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    with pytest.raises(RunError, match="different run .*sha256"):
        simulate(3, 8, spec, seed=2, out=tmp_path / "one", seat_rotation=True,
                 execution=Execution(chunk_size=4, jobs=1))


# ---------------------------------------------------------------------------------------------
# evora duel / evora strategies
# ---------------------------------------------------------------------------------------------
def parse_duel(out: str) -> dict[str, dict]:
    rows = {}
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("strategy "))
    for line in lines[start + 1:]:
        if not line.strip():
            break
        m = re.match(r"(.+?)\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)%\s+\[([\d.]+)%, ([\d.]+)%\]\s+([\d.]+)"
                     r"\s+([\d.]+|-)$", line)
        assert m, line
        rows[m.group(1)] = {"per_game": int(m.group(2)), "seat_games": int(m.group(3)),
                            "wins": int(m.group(4)), "rate": float(m.group(5)),
                            "lo": float(m.group(6)), "hi": float(m.group(7)),
                            "deff": float("nan") if m.group(9) == "-" else float(m.group(9))}
    return rows


def test_duel_two_players(cli):
    # plan=action loses some games to random, so the design effect of the per-seed wins is defined
    out = ok(cli.invoke(main, ["duel", "greedy(plan=action)", "random", "--games", "200", "--seed", "4"]))
    assert "Duel: 2 players, field greedy(plan=action), random" in out
    assert "200 games = 100 seeds x 2 seat rotations (run seed 4)" in out
    rows = parse_duel(out)
    assert set(rows) == {"greedy(plan=action)", "random"}
    assert rows["greedy(plan=action)"]["seat_games"] == rows["random"]["seat_games"] == 200
    assert rows["greedy(plan=action)"]["wins"] + rows["random"]["wins"] == 200      # one winner per game
    g = rows["greedy(plan=action)"]
    assert g["rate"] == pytest.approx(100 * g["wins"] / 200, abs=0.05)
    assert g["lo"] <= g["rate"] <= g["hi"] and g["rate"] > 80
    assert "clustered by seed" in out and np.isfinite(g["deff"])
    assert "ties: " in out and ("D18" in out or "none of the 200 games" in out)
    # the same duel again: the same table (seeded)
    assert ok(cli.invoke(main, ["duel", "greedy(plan=action)", "random", "--games", "200", "--seed", "4"])) == out


def test_duel_fields_for_three_and_four_players(cli):
    out = ok(cli.invoke(main, ["duel", "balanced(column=2, emperor=0.5)", "greedy", "-n", "4", "--games", "40"]))
    assert "field balanced(column=2, emperor=0.5), greedy, greedy, greedy" in out
    rows = parse_duel(out)
    assert rows["balanced(column=2, emperor=0.5)"]["seat_games"] == 40
    assert rows["greedy"]["per_game"] == 3 and rows["greedy"]["seat_games"] == 120
    assert sum(r["wins"] for r in rows.values()) == 40
    out = ok(cli.invoke(main, ["duel", "greedy,random,random", "--games", "30"]))
    assert "Duel: 3 players" in out and "30 games = 10 seeds x 3 seat rotations" in out
    rows = parse_duel(out)
    assert rows["random"]["seat_games"] == 60 and rows["greedy"]["seat_games"] == 30
    # rounded up to whole seeds x rotations
    out = ok(cli.invoke(main, ["duel", "greedy", "random", "--games", "5"]))
    assert "6 games = 3 seeds x 2 seat rotations" in out


def test_a_duel_comes_in_chunks_and_they_do_not_change_its_games(monkeypatch):
    """A duel plays several chunks a job, so progress lines come during a long duel (a search
    player's duel runs for an hour); how it is chunked never changes a game."""
    from evora_sim import duel as D
    from evora_sim import runner as R
    assert R.jobs_chunk(1000, 2) == 63 and R.jobs_chunk(1000, 1) == 125 and R.jobs_chunk(3, 2) == 1
    assert R.jobs_chunk(10**7, 1) == R.DEFAULT_CHUNK
    field = D.duel_field(["greedy(plan=action)", "random"], 2)
    many = D.duel(field, 60, seed=9)
    monkeypatch.setattr(R, "CHUNKS_PER_JOB", 1)
    one = D.duel(field, 60, seed=9)
    assert many.rows == one.rows


def test_a_duel_kept_in_a_folder_resumes_after_a_stop(tmp_path, monkeypatch):
    """``--out``: a stopped duel replays only its unfinished chunks, even with another --jobs
    (it keeps the folder's chunks), and its table is the one an uninterrupted duel gives."""
    from evora_sim import duel as D
    from evora_sim import runner as R
    field = D.duel_field(["greedy(plan=action)", "random"], 2)
    ref = D.duel(field, 60, seed=9)
    out = tmp_path / "duel"
    kept = D.duel(field, 60, seed=9, out=out)
    assert kept.rows == ref.rows and kept.out == str(out)
    assert "games kept in" in "\n".join(D.duel_lines(kept))
    chunk = R.kept_chunk(out)
    m = json.loads((out / "manifest.json").read_text())
    assert chunk == m["config"]["chunk_size"] and len(m["chunks"]) > 2
    # stopped before its chunk 1 was written
    R.chunk_file(out, "seats", 1).unlink()
    m["chunks"]["1"] = "missing"
    (out / "manifest.json").write_text(json.dumps(m))
    played = []
    original = R.play_chunk
    monkeypatch.setattr(R, "play_chunk", lambda config, rules, k, *a: played.append(k) or original(config, rules, k, *a))
    monkeypatch.setattr(R, "CHUNKS_PER_JOB", 1)         # another chunking than the folder's
    assert D.duel(field, 60, seed=9, out=out).rows == ref.rows
    assert played == [1]
    played.clear()
    assert D.duel(field, 60, seed=9, out=out).rows == ref.rows and played == []   # finished: nothing
    with pytest.raises(RunError, match="holds a different run"):
        D.duel(field, 120, seed=9, out=out)


def test_a_duel_refuses_an_out_it_cannot_use(cli, tmp_path):
    file = tmp_path / "notes.txt"
    file.write_text("keep me")
    line = one_error_line(cli.invoke(main, ["duel", "greedy", "random", "--games", "4", "--out", str(file)]))
    assert str(file) in line and "not a folder" in line
    assert file.read_text() == "keep me"
    out = tmp_path / "d"
    ok(cli.invoke(main, ["duel", "greedy", "random", "--games", "4", "--out", str(out)]))
    before = sorted(p.name for p in out.rglob("*"))
    line = one_error_line(cli.invoke(main, ["duel", "greedy", "random", "--games", "4", "--seed", "2",
                                            "--out", str(out)]))
    assert "holds a different run" in line and "seed" in line
    assert sorted(p.name for p in out.rglob("*")) == before


def test_duel_with_a_custom_strategy(cli):
    out = ok(cli.invoke(main, ["duel", CAUTIOUS, "random", "--games", "20"]))
    rows = parse_duel(out)
    assert rows[CAUTIOUS]["seat_games"] == 20 and rows[CAUTIOUS]["wins"] >= 15


def test_strategies_lists_the_builtins(cli):
    out = ok(cli.invoke(main, ["strategies"]))
    lines = out.splitlines()
    for s in BUILTINS:
        i = next(k for k, line in enumerate(lines) if line.split()[:1] == [s.name])
        assert s.description in lines[i]
        if s.is_heuristic:
            text = lines[i + 1].split("weights: ")[1]
            listed = {k: float(v) for k, v in (kv.split("=") for kv in text.split(", "))}
            assert listed == s.weight_dict()
        else:
            assert "weights: none" in lines[i + 1]
    for f in FEATURES:
        assert any(line.split()[:1] == [f] for line in lines)
    assert "balanced(column=2, emperor=0.5)" in out and "FILE.toml:NAME" in out and "FILE.py:NAME" in out


def test_strategies_lists_the_expert_and_how_it_was_made(cli):
    """Issue 50, item 10: the expert was missing from the listing a designer reads to learn the
    players. It is there, with how far it looks at each player count and, for each count, the
    command that made its weights (from its weights file)."""
    from strategies.errors import StrategyError
    from strategies.learned import shipped_expert

    out = ok(cli.invoke(main, ["strategies"]))
    section = out.split("The expert: expert, or expert(replies=K)\n")[1].split("\n\n")[0]
    flat = " ".join(section.split())
    weights = shipped_expert(StrategyError)
    assert weights.description in flat and "under the shipped rules" in flat
    for part in weights.made_by.split(" | "):
        assert part.startswith(tuple(f"{n} players: evora train --players {n} " for n in weights.counts))
        assert " ".join(part.split()) in flat
    looks, late = dict(weights.replies), dict(weights.ahead_from)
    for n in weights.counts:
        said = re.search(rf"at ([\d and]*\b{n}\b[\d and]*) players (it [^;]*)", flat, re.I).group(2)
        when = f" from {100 * late[n]:g}% of the game's progress on (before: one turn)" if n in late else ""
        assert said == (f"it looks a round ahead from its {looks[n]} best turns{when}" if n in looks else
                        "it plans one turn")


def test_the_duels_tie_line_says_what_its_games_did_with_ties(tmp_path):
    """The duel's last line is counted from its own games' ``decided_by``, so it holds under every
    tie-break rule: under V4's shared victory a tie is a lot, never 'broken by the later seat'."""
    from evora_sim import duel as D
    from evora_sim.rules import load_rules
    from evora_sim.runner import open_run
    ties = ([f"height_vp.{h}=0" for h in range(1, 6)]          # no VP but the white stones': most games tie
            + ["draw.empty_stack_vp=0", "emperor_tile.values=0,0", "majority.column_vp=0",
               "governor.worker_vp=0", "supply.stones=1", "supply.capitals=0"]
            + [f"{t}.{k}=0" for t in ("height_majority", "height_majority_tie", "governor.column_vp",
                                      "governor.height_vp", "governor.height_tie_vp")
               for k in ("h1", "h2", "h3", "h4", "capitals")])
    field = D.duel_field(["greedy(plan=action)", "random"], 2)
    for tie_break, word in (("rulebook", "broken by"), ("shared", "shared victories")):
        res = D.duel(field, 100, seed=3, rules=load_rules(overrides=ties + [f"end.tie_break={tie_break}"]),
                     out=tmp_path / tie_break)
        games = open_run(tmp_path / tie_break).table("games", columns=["decided_by"])["decided_by"].astype(str)
        assert res.decided == games.value_counts().to_dict() and sum(res.decided.values()) == 100
        assert (res.decided.get("lot", 0) > 0) == (tie_break == "shared")      # the planted rules tie often
        last = D.duel_lines(res)[-1]
        assert word in last, last
        assert ("lot" in last) == (tie_break == "shared") and ("D18" in last) == ("parts_left" in res.decided
                                                                                or "seat_order" in res.decided)
    assert D.ties_line({"vp": 10}, 10) == "ties: none of the 10 games was tied on VP, so every game has exactly one winner"
