"""A report's sample game: one game of a run, replayed from its seed, with its full ``evora replay``
log; :mod:`analysis.game_picture` draws it (the Temple at the end, the Construction Site loop with
the workers, each seat's score by round) and the report writes the log beside itself.

DominionSim's "sample game" is the precedent: a reader who sees one real game understands the
numbers better. The game is the run's first (game 0: the first seed, rotation 0), so the same
command replays it.

A report reads folders anyone may have written, so the game is replayed only with the compiled
built-in players its manifest describes (every value checked as the spec parser checks it); a
custom Python strategy is never loaded from a run folder, whatever file and checksum the manifest
names, and the report says so instead of showing the game.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strategies.errors import StrategyError
from strategies.registry import from_resolved

from . import api
from . import layout as L
from .batch import play_game
from .manifest import replay_command
from .replay import replay_lines
from .rules import Rules, validate
from .seeds import game_seeds


@dataclass
class SampleGame:
    players: int
    seed: int
    names: list[str]
    rules: Rules
    state: np.ndarray           # the final state
    scores: np.ndarray          # (rounds, seats): score after each round; the last row the final score
    command: str                # the evora replay command that prints this game
    log: list[str]              # its lines


def score_rows(rules: Rules, n: int, seed: int, log) -> np.ndarray:
    """The score of every seat after each round of the game ``log`` plays (the last row: the
    final score), re-stepped through the api."""
    state = api.new_game(rules, n, seed)
    rows, rnd = [], int(state.arr[L.G_ROUND])
    for a in log:
        api.apply_action(state, int(a))
        now = int(state.arr[L.G_ROUND])
        if now != rnd and rnd >= 1 and not api.is_terminal(state):
            rows.append([int(state.arr[L.PLAYERS + p * L.PSTRIDE + L.P_SCORE]) for p in range(n)])
        rnd = now
    rows.append([int(state.arr[L.PLAYERS + p * L.PSTRIDE + L.P_FINAL]) for p in range(n)])
    return np.array(rows)


def recorded_players(cfg: dict, names: list[str]) -> list:
    """The players a run's manifest (its ``config``) recorded, by name in seat order, rebuilt from
    their recorded description: a custom Python strategy is refused (StrategyError), never loaded
    from a folder someone else may have written."""
    return [from_resolved(x, (cfg.get("resolved_strategies") or {}).get(x), run_code=False) for x in names]


def game_log(manifest: dict, n: int, seed: int, names: list[str]) -> list[str]:
    """The ``evora replay`` log of the game of ``seed`` a run (its manifest) played with ``names``
    in seat order, under the run's recorded rules (checked as a rules file is)."""
    return replay_lines(validate(manifest["rules"]), n, seed, recorded_players(manifest["config"], names))


def sample_game(run) -> SampleGame:
    """Game 0 of ``run`` (a RunResult), replayed."""
    m = run.manifest
    cfg = m["config"]
    n = int(cfg["players"])
    rules = validate(m["rules"])
    seed = int(game_seeds(int(cfg["seed"]), 0, 1)[0])
    names = list(cfg["strategies"])
    seats = recorded_players(cfg, names)
    state, log = play_game(rules, n, seed, seats)
    return SampleGame(n, seed, names, rules, state, score_rows(rules, n, seed, log),
                      replay_command(m, n, seed, names), replay_lines(rules, n, seed, seats))


def report_sample(runs) -> tuple[SampleGame | None, str]:
    """The sample game a report shows, from its run with the most players (the first such), and
    the note said in its place when it cannot be replayed from the run folder."""
    try:
        biggest = max(runs, key=lambda r: (r.manifest["config"]["players"], -runs.index(r)))
        return sample_game(biggest), ""
    except StrategyError as exc:          # a custom strategy (never run from a folder), a damaged one
        return None, f"No sample game: it cannot be replayed from the run folder: {exc}."
