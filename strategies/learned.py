"""Learned evaluations as data: hand weights restated in the learned features, and the weight
files ``evora train`` writes (TOML tables of ``kind = "learned"``, validated whole on load).

Why restate hand weights: the learned features (``strategies.features``) hold every hand
feature of ``compiled.FEATURES``, or an exact linear form of it, so any hand-weighted player is
also a learned one. That is the fit's starting point (the search player's choices are explained
as a change from ``cardheights``), and the check that the learned evaluation is the same
evaluation: restated, a heuristic values every position as before, up to a constant.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import numpy as np

from evora_sim.tomlfile import parse_toml
from evora_sim.tomltext import toml_key, toml_string

from .compiled import FEATURES
from .features import FEATURE_NAMES, HAND_FEATURES, NL
from . import values

# hand feature -> (learned feature, coefficient) pairs whose sum is that feature up to a
# constant: tiles = placed + flipped = 2 - unplaced + flipped; parts placed = stones and
# capitals a seat starts with minus those left; secured = safe columns + safe heights; denial
# is minus the best other seat's total
HAND_AS_LEARNED = {
    "vp": (("scored", 1.0),),
    "empty_stack": (("empty_stack", 1.0),),
    "column": (("column", 1.0),),
    "h1": (("h1", 1.0),), "h2": (("h2", 1.0),), "h3": (("h3", 1.0),), "h4": (("h4", 1.0),),
    "capitals": (("capitals", 1.0),),
    "emperor": (("emperor", 1.0),),
    "tiles": (("tiles_unplaced", -1.0), ("tiles_flipped", 1.0)),
    "cards": tuple((f, 1.0) for f in HAND_FEATURES),
    "parts": (("stones_left", -1.0), ("capitals_left", -1.0)),
    "denial": (("best_other", -1.0),),
    "secured": (("column_safe", 1.0), ("heights_safe", 1.0)),
}
assert set(HAND_AS_LEARNED) | {"win"} == set(FEATURES)


def as_learned(vector) -> tuple[tuple[int, tuple[float, ...]], ...]:
    """One learned weight vector (``NL`` + the win weight) for every player count, as
    ``Strategy.learned`` holds it."""
    w = tuple(float(x) for x in vector)
    return tuple((n, w) for n in PLAYER_COUNTS)


def from_hand(weights) -> np.ndarray:
    """The learned weights (``NL`` feature weights and the win weight) that value positions as
    the hand ``weights`` do (a dict by feature, or a vector in ``FEATURES`` order), up to a
    constant; the weights times progress are zero."""
    if not isinstance(weights, dict):
        weights = dict(zip(FEATURES, weights))
    out = np.zeros(NL + 1)
    for hand, terms in HAND_AS_LEARNED.items():
        for name, coefficient in terms:
            out[FEATURE_NAMES.index(name)] += coefficient * float(weights.get(hand, 0.0))
    out[NL] = float(weights.get("win", 0.0))
    return out


# ---------------------------------------------------------------------------------------------
# weight files
# ---------------------------------------------------------------------------------------------
FORMAT = 1
PLAYER_COUNTS = (2, 3, 4)
_TABLE_KEYS = {"format", "kind", "description", "features", "players", "made_by", "rules_hash"}
_PLAYERS_KEYS = {"weights", "win", "games", "fit", "replies", "ahead_from"}


@dataclass(frozen=True)
class LearnedWeights:
    """A learned evaluation for each player count it was trained for: ``weights[n]`` holds the
    ``NL`` feature weights and the win weight; ``replies`` (n, k): at ``n`` players its ``k`` best
    turns are valued by the next seat's reply (``planner``; counts not named: none), from progress
    ``ahead_from`` (n, t) of the game on (counts not named: from the start). ``made_by`` says how
    (the command, its seed, the teacher, the games), ``rules_hash`` for which rules."""

    name: str
    weights: tuple[tuple[int, tuple[float, ...]], ...]
    description: str = ""
    made_by: str = ""
    rules_hash: str = ""
    replies: tuple[tuple[int, int], ...] = ()
    ahead_from: tuple[tuple[int, float], ...] = ()

    def for_players(self, n: int) -> tuple[float, ...] | None:
        return dict(self.weights).get(n)

    @property
    def counts(self) -> tuple[int, ...]:
        return tuple(n for n, _ in self.weights)


def is_learned_table(entry) -> bool:
    """Whether a TOML table holds learned weights (rather than a hand weight set)."""
    return isinstance(entry, dict) and entry.get("kind") == "learned"


def check_table(entry: dict, where: str, error) -> LearnedWeights:
    """The learned weights of TOML table ``entry`` (named ``where`` in messages), every value
    checked (:mod:`strategies.values`); ``error`` is the exception to raise with one line."""
    unknown = sorted(set(entry) - _TABLE_KEYS)
    if unknown:
        raise error(f"{where}: unknown key(s) {', '.join(unknown)} (a learned weight set has "
                    f"{', '.join(sorted(_TABLE_KEYS))})")
    version = entry.get("format")
    if type(version) is not int or version != FORMAT:      # not True, not 1.0: a format is a whole number
        raise error(f"{where}: format {values.show(version)}, this version reads format {FORMAT}")
    features = entry.get("features", [])
    if features != list(FEATURE_NAMES):
        named = f"{len(features)} named" if isinstance(features, list) else f"features = {values.show(features)}"
        raise error(f"{where}: it was trained on other features than this version computes "
                    f"({named}, {len(FEATURE_NAMES)} here); train it again with evora train")
    players = entry.get("players")
    if not isinstance(players, dict) or not players:
        raise error(f"{where}: 'players' must hold the weights of at least one player count")
    out, replies, ahead = [], [], []
    for key, table in sorted(players.items()):
        if key not in tuple(str(n) for n in PLAYER_COUNTS) or not isinstance(table, dict):
            raise error(f"{where}: players.{key if len(key) <= 20 else values.show(key)} is not a player count "
                        f"({', '.join(map(str, PLAYER_COUNTS))})")
        bad = sorted(set(table) - _PLAYERS_KEYS)
        if bad:
            raise error(f"{where}: players.{key}: unknown key(s) {', '.join(bad)}")
        w = table.get("weights")
        if not isinstance(w, list) or len(w) != NL:
            raise error(f"{where}: players.{key}.weights must be a list of {NL} numbers")
        names = [f"{where}: players.{key}.weights[{i}]" for i in range(NL)] + [f"{where}: players.{key}.win"]
        row = [values.weight(x, name, error, sep=" = ", text=False)
               for x, name in zip([*w, table.get("win", 0.0)], names)]
        out.append((int(key), tuple(row)))
        k = values.replies(table.get("replies", 0), f"{where}: players.{key}.replies", error, sep=" = ")
        if k:
            replies.append((int(key), k))
        t = values.ahead_from(table.get("ahead_from", 0.0), f"{where}: players.{key}.ahead_from", error, sep=" = ",
                              text=False)
        if t:
            ahead.append((int(key), t))
    for key in ("description", "made_by", "rules_hash"):
        if not isinstance(entry.get(key, ""), str):
            raise error(f"{where}: {key} must be text")
    return LearnedWeights("", tuple(out), entry.get("description", ""), entry.get("made_by", ""),
                          entry.get("rules_hash", ""), tuple(replies), tuple(ahead))


def to_table(weights: LearnedWeights) -> str:
    """``weights`` as the TOML table ``[NAME]`` that :func:`check_table` reads back."""
    lines = [f"[{toml_key(weights.name)}]", f"format = {FORMAT}", 'kind = "learned"',
             f"description = {toml_string(weights.description)}", f"made_by = {toml_string(weights.made_by)}",
             f"rules_hash = {toml_string(weights.rules_hash)}",
             "features = [" + ", ".join(toml_string(f) for f in FEATURE_NAMES) + "]"]
    replies, ahead = dict(weights.replies), dict(weights.ahead_from)
    for n, w in weights.weights:
        lines += ["", f"[{toml_key(weights.name)}.players.{n}]", f"win = {float(w[NL])!r}"]
        if replies.get(n, 0):
            lines.append(f"replies = {int(replies[n])}")
        if ahead.get(n, 0.0):
            lines.append(f"ahead_from = {float(ahead[n])!r}")
        lines.append("weights = [" + ", ".join(repr(float(x)) for x in w[:NL]) + "]")
    return "\n".join(lines) + "\n"


SHIPPED = "data/expert.toml"      # the built-in expert's weights, in the strategies package
_shipped: list[LearnedWeights] = []


def shipped_expert(error) -> LearnedWeights:
    """The built-in ``expert``'s weights (read and checked once per process)."""
    if not _shipped:
        where = f"strategies/{SHIPPED}"
        text = (resources.files("strategies") / SHIPPED).read_text(encoding="utf-8")
        _shipped.append(check_table(parse_toml(text, where, error)["expert"], f"{where} [expert]", error))
    return _shipped[0]
