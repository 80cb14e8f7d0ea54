#!/usr/bin/env python
"""Regenerate the golden playthroughs in ``tests/golden/<name>.json``.

Each file is one seeded game played by ``evora_sim.batch.play_game`` (the compiled driver the
batch runs use): the player count, seed and strategy names, the full action log, the
``describe_action`` text and acting seat of every step (read by re-stepping the log through the
public api), and the final scoring in ``api.final_scoring`` form.

``tests/test_golden.py`` replays every file and fails on any difference. Run this script only
when a change of the engine's or the strategies' behaviour is intended, and review the diff of
``tests/golden/`` before committing it:

    python scripts/regen_golden.py            # all games
    python scripts/regen_golden.py p3_mixed   # some of them
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))     # this checkout's engine, also without an installed package
GOLDEN_DIR = ROOT / "tests" / "golden"

# name -> (players, seed, strategy spec per seat[, rules overrides]). Covers 2, 3 and 4 players,
# random, the heuristics as they were before turn planning (plan=action without the features
# secured and win: these games were recorded then and still play out identically) and the turn
# planners, alone and mixed; and one game for each value of a mechanism switch (docs/RULES.md
# V3-V5) that is not the rulebook's, played with its --set (the file records it as "set"); and the
# learned expert at each player count.
OLD_GREEDY = "greedy(plan=action, secured=0, win=0)"
SHARED_SEED = 31  # a seed whose game ends tied on VP (seats 0 and 1), so that V4's lot decides it
GAMES = {
    "p2_random": (2, 11, ("random", "random")),
    "p2_greedy": (2, 12, (OLD_GREEDY, OLD_GREEDY)),
    "p3_random": (3, 13, ("random", "random", "random")),
    "p3_mixed": (3, 14, (OLD_GREEDY, "random", OLD_GREEDY)),
    "p4_random": (4, 15, ("random", "random", "random", "random")),
    "p4_mixed": (4, 16, ("random", OLD_GREEDY, "random", OLD_GREEDY)),
    "p4_greedy": (4, 17, (OLD_GREEDY,) * 4),
    "p2_turn": (2, 21, ("greedy", "balanced")),
    "p3_turn": (3, 22, ("cards", "random", "emperor")),
    "p4_turn": (4, 23, ("balanced", "cards", "emperor", "greedy")),
    "p4_turn_mixed": (4, 24, ("builder", "majority(plan=action)", "heights", "blocker")),
    "p4_v3_finish_turn": (4, 31, ("balanced", "cards", "emperor", "greedy"), ("end.after_trigger=finish_turn",)),
    "p4_v3_one_more_turn": (4, 32, ("balanced", "cards", "emperor", "greedy"), ("end.after_trigger=one_more_turn",)),
    "p3_v4_shared": (3, SHARED_SEED, ("random",) * 3, ("end.tie_break=shared",)),
    "p2_v5_reverse": (2, 35, ("greedy", "random"), ("setup.placement_order=reverse",)),
    "p4_v5_reverse": (4, 36, ("balanced", "cards", "emperor", "greedy"), ("setup.placement_order=reverse",)),
    # the learned expert: its one-ply search (3 and 4 players) and its look-ahead (2 players' built-in
    # replies, and replies=2 at 3): a faster search must make every one of these choices again
    "p2_expert": (2, 41, ("expert", "expert")),
    "p3_expert": (3, 42, ("expert", "expert", "expert")),
    "p3_expert_replies": (3, 43, ("expert(replies=2)", "cardheights", "expert(replies=2)")),
    "p4_expert": (4, 44, ("expert", "cardheights", "expert", "expert")),
}
# Files whose behaviour the golden games pin down; their hash is stored as a hint only.
SOURCES = ("evora_sim/engine.py", "evora_sim/layout.py", "evora_sim/batch.py", "evora_sim/rules.py",
           "evora_sim/rng.py", "evora_sim/data/rules.toml", "strategies/compiled.py",
           "strategies/planner.py", "strategies/decide.py", "strategies/builtin.toml")


def sources_hash() -> str:
    import evora_sim
    import strategies
    pkg = Path(evora_sim.__file__).resolve().parent
    roots = {"evora_sim": pkg, "strategies": Path(strategies.__file__).resolve().parent}
    digest = hashlib.sha256()
    for rel in SOURCES:
        top, _, rest = rel.partition("/")
        path = roots[top] / rest
        digest.update(rel.encode())
        digest.update(path.read_bytes() if path.exists() else b"<missing>")
    return digest.hexdigest()[:16]


def replay_steps(rules, players: int, seed: int, log) -> tuple[list[int], list[str], dict]:
    """Re-step ``log`` through the api: acting seat and describe_action text of every step,
    and the final scoring."""
    from evora_sim import api
    state = api.new_game(rules, players, seed)
    seats, texts = [], []
    for a in log:
        a = int(a)
        seats.append(api.current_player(state))
        texts.append(api.describe_action(state, a))
        api.apply_action(state, a)
    if not api.is_terminal(state):
        raise RuntimeError(f"the log of {len(log)} actions does not end the game")
    return seats, texts, api.final_scoring(state)


def game_rules(sets=()):
    """The rules a golden game is played with: the shipped ones with its ``set`` overrides."""
    from evora_sim.rules import load_rules
    return load_rules(overrides=list(sets))


def golden_record(name: str) -> dict:
    from evora_sim import api
    from evora_sim.batch import play_game
    players, seed, strategies, *sets = GAMES[name]
    sets = list(sets[0]) if sets else []
    rules = game_rules(sets)
    final, log = play_game(rules, players, seed, list(strategies))
    scoring = api.final_scoring(api.State(final, rules, seed))
    seats, texts, replayed = replay_steps(rules, players, seed, log)
    if replayed != scoring:
        raise RuntimeError(f"{name}: re-stepping the log through the api gives a different scoring")
    return {
        "name": name,
        "players": players,
        "seed": seed,
        "strategies": list(strategies),
        **({"set": sets} if sets else {}),
        "rules_hash": rules.hash,
        "sources_hash": sources_hash(),
        "steps": len(log),
        "final_scoring": scoring,
        "log": [int(a) for a in log],
        "seats": seats,
        "describe": texts,
    }


def dumps(rec: dict) -> str:
    """JSON with one line per step description and the log in short rows (readable diffs)."""
    out = ["{"]
    keys = list(rec)
    for i, key in enumerate(keys):
        comma = "," if i < len(keys) - 1 else ""
        value = rec[key]
        if key in ("log", "seats"):
            rows = [", ".join(str(v) for v in value[j:j + 25]) for j in range(0, len(value), 25)]
            body = ",\n    ".join(rows)
            out.append(f'  "{key}": [\n    {body}\n  ]{comma}')
        elif key == "describe":
            body = ",\n    ".join(json.dumps(t, ensure_ascii=False) for t in value)
            out.append(f'  "{key}": [\n    {body}\n  ]{comma}')
        elif key == "final_scoring":
            seats = ",\n      ".join(json.dumps(s, ensure_ascii=False) for s in value["seats"])
            out.append(f'  "{key}": {{\n    "seats": [\n      {seats}\n    ],\n'
                       f'    "winner": {value["winner"]}\n  }}{comma}')
        else:
            out.append(f'  "{key}": {json.dumps(value, ensure_ascii=False)}{comma}')
    out.append("}")
    text = "\n".join(out) + "\n"
    assert json.loads(text) == rec
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help=f"games to regenerate (default: all of {', '.join(GAMES)})")
    args = ap.parse_args(argv)
    unknown = [n for n in args.names if n not in GAMES]
    if unknown:
        print(f"regen_golden: error: unknown golden game(s) {', '.join(unknown)}; known: {', '.join(GAMES)}",
              file=sys.stderr)
        return 2
    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    for name in args.names or GAMES:
        rec = golden_record(name)
        path = GOLDEN_DIR / f"{name}.json"
        text = dumps(rec)
        old = path.read_text(encoding="utf-8") if path.exists() else None
        path.write_text(text, encoding="utf-8")
        status = "new" if old is None else ("unchanged" if old == text else "CHANGED")
        sc = rec["final_scoring"]
        print(f"{path.relative_to(ROOT)}: {rec['players']} players, seed {rec['seed']}, "
              f"{'/'.join(rec['strategies'])}: {rec['steps']} steps, totals "
              f"{[s['total'] for s in sc['seats']]}, winner {sc['winner']} [{status}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
