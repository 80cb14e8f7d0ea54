"""Golden playthroughs: seeded games whose every action and final scoring are stored.

``tests/golden/<name>.json`` (written by ``scripts/regen_golden.py``) holds a game played by
``batch.play_game``: players, seed, strategy names, the action log, the ``describe_action`` text
and acting seat of every step, and the final scoring. Any change of the engine's rules, of a
strategy's choices or of the random streams changes some game; these tests then say at which
step the game first differs. If the change is intended, regenerate the files on purpose and
review their diff:

    python scripts/regen_golden.py
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evora_sim import api
from evora_sim.batch import play_game
from evora_sim.rules import load_rules
from strategies.registry import parse_spec
from script_modules import load_script

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
FILES = sorted(GOLDEN_DIR.glob("*.json"))
RULES = load_rules()


def _rules(rec: dict):
    """The rules a golden game was played with: the shipped ones, with its mechanism switch set
    (docs/RULES.md V3-V5) where the file records one."""
    return load_rules(overrides=rec["set"]) if rec.get("set") else RULES
REGEN = "If this change of behaviour is intended, regenerate on purpose with `python scripts/regen_golden.py` and review the diff of tests/golden/."


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _regen_script():
    """scripts/regen_golden.py as a module (for its sources hash)."""
    return load_script("regen_golden")


def _hints(rec: dict) -> str:
    """Why a golden game may have changed: the rules data or the engine sources."""
    hints = []
    if rec.get("rules_hash") != _rules(rec).hash:
        hints.append(f"the rules data changed since generation (rules hash {rec.get('rules_hash')} -> "
                     f"{_rules(rec).hash})")
    try:
        now = _regen_script().sources_hash()
    except Exception:   # pragma: no cover - the hint is optional
        now = rec.get("sources_hash")
    if rec.get("sources_hash") != now:
        hints.append(f"engine/strategy sources changed since generation (sources hash "
                     f"{rec.get('sources_hash')} -> {now})")
    return ("; ".join(hints) + ". ") if hints else ""


def _sids(rec: dict) -> list:
    return [parse_spec(s) for s in rec["strategies"]]


def _state_at(rec: dict, steps: int) -> api.State:
    """The api state after the first ``steps`` stored actions."""
    state = api.new_game(_rules(rec), rec["players"], rec["seed"])
    for a in rec["log"][:steps]:
        api.apply_action(state, a)
    return state


def _scoring_diff(stored: dict, now: dict) -> str:
    out = []
    if stored["winner"] != now["winner"]:
        out.append(f"winner {stored['winner']} -> {now['winner']}")
    for p, (a, b) in enumerate(zip(stored["seats"], now["seats"])):
        for key in a.keys() | b.keys():
            if a.get(key) != b.get(key):
                out.append(f"seat {p} {key} {a.get(key)} -> {b.get(key)}")
    if len(stored["seats"]) != len(now["seats"]):
        out.append(f"{len(stored['seats'])} seats -> {len(now['seats'])}")
    return ", ".join(sorted(out))


def test_golden_files_cover_the_setups():
    recs = [load(p) for p in FILES]
    assert len(recs) >= 6, f"expected at least 6 golden games in {GOLDEN_DIR}; run python scripts/regen_golden.py"
    assert {r["players"] for r in recs} == {2, 3, 4}
    kinds = {frozenset(r["strategies"]) for r in recs}
    old = "greedy(plan=action, secured=0, win=0)"          # greedy as before turn planning
    assert frozenset({"random"}) in kinds and frozenset({old}) in kinds
    assert frozenset({"random", old}) in kinds, "no mixed random/greedy game"
    planners = {s for r in recs for s in r["strategies"] if parse_spec(s).plan == "turn"}
    assert {"greedy", "balanced", "cards", "emperor"} <= planners, "too few turn planners in golden games"
    assert {r["players"] for r in recs if set(r["strategies"]) & planners} == {2, 3, 4}
    # the learned expert's searches are tuned for speed: its choices are pinned at every count,
    # one ply and looking ahead (its 2-player built-in looks ahead; replies=2 at 3 players)
    assert {r["players"] for r in recs if any(x.split("(")[0] == "expert" for x in r["strategies"])} == {2, 3, 4}
    assert any("replies=" in x for r in recs if r["players"] == 3 for x in r["strategies"]), "no expert looking ahead"


def test_golden_games_cover_every_mechanism_switch():
    """Each value of a mechanism switch (V3-V5) other than the rulebook's has a golden game, and
    the games of the default rules record no switch (so they prove default play unchanged)."""
    from evora_sim.rules import SWITCHES

    recs = [load(p) for p in FILES]
    played = {s for r in recs for s in r.get("set", [])}
    wanted = {f"{key}={v}" for key, values in SWITCHES.items() for v in values[1:]}
    assert wanted <= played, f"no golden game for {sorted(wanted - played)}"
    assert sum(1 for r in recs if not r.get("set")) >= 11
    for r in recs:
        assert len(r["log"]) == len(r["describe"]) == len(r["seats"]) == r["steps"], r["name"]
        assert len(r["strategies"]) == r["players"], r["name"]


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_play_game_reproduces_golden(path):
    rec = load(path)
    final, log = play_game(_rules(rec), rec["players"], rec["seed"], _sids(rec))
    log = [int(a) for a in log]
    stored = rec["log"]
    if log != stored:
        i = next((k for k, (a, b) in enumerate(zip(stored, log)) if a != b), min(len(stored), len(log)))
        if i < min(len(stored), len(log)):
            state = _state_at(rec, i)
            what = (f"stored action {stored[i]} ({rec['describe'][i]!r}, seat {rec['seats'][i]}), "
                    f"play_game now chooses {log[i]} ({api.describe_action(state, log[i])!r}, "
                    f"decision: {api.decision_name(state)})")
        else:
            what = "one log is a prefix of the other"
        pytest.fail(f"golden game {rec['name']} (players={rec['players']}, seed={rec['seed']}, "
                    f"strategies={','.join(rec['strategies'])}): the action log first differs at step {i} "
                    f"of {len(stored)} stored / {len(log)} now: {what}. {_hints(rec)}{REGEN}")
    now = api.final_scoring(api.State(final, _rules(rec), rec["seed"]))
    assert now == rec["final_scoring"], (
        f"golden game {rec['name']}: same action log, but the final scoring differs: "
        f"{_scoring_diff(rec['final_scoring'], now)}. {_hints(rec)}{REGEN}")


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_api_replay_reaches_golden_scoring(path):
    rec = load(path)
    state = api.new_game(_rules(rec), rec["players"], rec["seed"])
    for i, a in enumerate(rec["log"]):
        where = (f"golden game {rec['name']} (players={rec['players']}, seed={rec['seed']}), step {i} "
                 f"of {rec['steps']}")
        seat = api.current_player(state)
        assert seat == rec["seats"][i], (
            f"{where}: seat {seat} is to act, the stored game has seat {rec['seats'][i]} "
            f"({rec['describe'][i]!r}). {_hints(rec)}{REGEN}")
        text = api.describe_action(state, a)
        assert text == rec["describe"][i], (
            f"{where}: stored action {a} was {rec['describe'][i]!r}, now reads {text!r}. {_hints(rec)}{REGEN}")
        try:
            api.apply_action(state, a)
        except api.IllegalActionError as exc:
            pytest.fail(f"{where}: stored action {a} ({rec['describe'][i]!r}) is not legal any more: {exc}. "
                        f"{_hints(rec)}{REGEN}")
    assert api.is_terminal(state), (
        f"golden game {rec['name']}: the stored log of {rec['steps']} actions no longer ends the game "
        f"(now at decision {api.decision_name(state)}, seat {api.current_player(state)}). {_hints(rec)}{REGEN}")
    now = api.final_scoring(state)
    assert now == rec["final_scoring"], (
        f"golden game {rec['name']}: re-stepping the stored log through the api gives a different "
        f"final scoring: {_scoring_diff(rec['final_scoring'], now)}. {_hints(rec)}{REGEN}")
