"""A skill ladder's plan: its rungs, its duels, its sizes and seed, and the ``ladder.json`` that
holds them; read by the ladder that plays it (:mod:`evora_sim.ladder`) and by the analysis that
reports it (:mod:`analysis.skill_stats`).

Kept apart from the playing so that the statistics layer can read a ladder's folders without
importing the runner (the layers are in ``.importlinter``; see docs/code.md).
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .fields import DEFAULT_FIELD
from .fsutil import own_path, write_bytes_atomic
from .jsonfile import read_json
from .manifest import MAX_GAMES, RunError

PLAN_FILE = "ladder.json"
PLAN_FORMAT = "evora-sim skill ladder"
MCTS_BUDGET = 100            # k of the default ladder's search rungs, mcts(k) and mcts(4k)


def default_ladder(players: int) -> list[str]:
    """Weakest first: moves at random; picks each action greedily without planning its moves;
    the main job's turn-planning field; the expert (a turn planner with the evaluation learned
    from the search player); the search player at k and 4k iterations. Each step is measured in
    the ladder's duels (docs/commands/skill.md: the default ladder's ratings)."""
    return ["random", "greedy(plan=action)", DEFAULT_FIELD[players], "expert",
            f"mcts(iterations={MCTS_BUDGET})", f"mcts(iterations={4 * MCTS_BUDGET})"]


def parse_ladder(text: str) -> list[str]:
    """``SPEC;SPEC;...`` (weakest first; a rung is one strategy for every seat, or a field
    ``A,B,...`` with one strategy per seat) as its rungs, or RunError naming the problem."""
    if text is None or not text.strip():
        raise RunError("--ladder is empty; give rungs weakest first, e.g. "
                       "--ladder 'random;greedy;mcts(iterations=100)'")
    rungs = [part.strip() for part in text.split(";")]
    for i, r in enumerate(rungs):
        if not r:
            raise RunError(f"--ladder {text!r}: rung {i + 1} is empty (two ';' in a row, or one at an end)")
    if len(rungs) < 2:
        raise RunError(f"--ladder {text!r} has one rung; a ladder needs at least two, separated by ';'")
    if len(set(rungs)) < len(rungs):
        twice = next(r for r in rungs if rungs.count(r) > 1)
        raise RunError(f"--ladder {text!r}: the rung {twice!r} is given twice")
    return rungs


def rung_members(rung: str, players: int) -> list:
    """The strategies of one rung (StrategyError or RunError naming the rung when it cannot
    seat ``players``)."""
    from strategies.registry import parse_spec, resolve_each, split_specs  # lazy: 0.3 s (measured), see rung_played

    items = split_specs(rung)
    if len(items) not in (1, players):
        raise RunError(f"rung {rung!r} names {len(items)} strategies; give one (for every seat) or "
                       f"{players} (one per seat)")
    return resolve_each(items, parse_spec)


def rung_played(rung: str, strategies: list) -> bool:
    """Whether a run whose seats (rotation 0) hold ``strategies`` is the rung ``rung``, decided
    without running any code (``registry.names_strategy``): a report checks the plan's rung
    names against what its runs played, so an edited ladder.json cannot mislabel them."""
    # lazy: the command line reads this module at start-up (MAX_BUDGET); the players would add 0.3 s
    # to `evora --help`'s 1.2 s (measured)
    from strategies.registry import StrategyError, names_strategy, split_specs

    try:
        items = split_specs(rung)
    except StrategyError:
        return False
    if len(items) == 1:
        items = items * len(strategies)
    return len(items) == len(strategies) and all(names_strategy(i, s) for i, s in zip(items, strategies))


def _distinct(members: list) -> list:
    seen = {}
    for m in members:
        seen.setdefault(m.name, m)
    return list(seen.values())


def duel_fields(players: int, x: str, y: str) -> list[list[str]]:
    """The fields (seats at rotation 0) of the runs in which ``x`` duels ``y`` at ``players``: the
    seats split between them, each run seat-rotated, so that over the runs each side holds half
    the seats and its fair share of the games is 1/2 when the two are equally strong. An even
    count is one run (``[x, y]``, ``[x, x, y, y]``); 3 players are two runs of the same seeds,
    ``[x, x, y]`` and ``[x, y, y]``. A game is won by the side whose player wins it."""
    half = players // 2
    if players % 2 == 0:
        return [[x] * half + [y] * half]
    return [[x] * (half + 1) + [y] * half, [x] * half + [y] * (half + 1)]


def duel_games_per_seed(players: int) -> int:
    """Games a duel seed is played as: every rotation of each run of :func:`duel_fields` (2 at 2
    players, 6 at 3, 4 at 4). ``--duel-games`` counts these games."""
    return players * len(duel_fields(players, "x", "y"))


@dataclass
class Duel:
    """A run of one member of rung ``a`` against one of rung ``b`` at the ladder's player count,
    the seats shared between them (:func:`duel_fields`; at 3 players a pair plays two such runs
    of the same seeds). A mixed rung plays each of its members in turn, the pair's seeds shared
    between them."""

    a: int
    b: int
    field: list              # the seats at rotation 0: a's member first, then b's (duel_fields)
    seeds: int
    folder: str              # relative to the ladder folder

    @property
    def key(self) -> str:
        """The pair of members as the pilot's costs name it: ``A|B``."""
        return f"{self.field[0]}|{self.field[-1]}"


@dataclass
class Plan:
    players: int
    rungs: list
    seed: int
    seeds: int                       # per rung
    duel_seeds: int                  # per pair of rungs (each seed played as duel_games_per_seed games)
    rules_hash: str
    budget_minutes: float | None
    pilot: dict = field(default_factory=dict)     # rung or duel folder -> CPU seconds per seed
    duels: list = field(default_factory=list)     # Duel

    def rung_folder(self, i: int) -> str:
        return f"r{i + 1}"

    def why_folder(self, i: int) -> str:
        """Where ``evora skill --explain-seeds`` explains rung ``i`` (an evora explain folder)."""
        return f"why/{self.rung_folder(i)}"

    def as_json(self) -> dict:
        return {"format": PLAN_FORMAT, "version": 1, **asdict(self)}


def duel_plan(rungs: list, players: int, duel_seeds: int) -> list[Duel]:
    """The duels at ``players`` (:func:`duel_fields`): at 2 players every pair of rungs, at 3 and
    4 neighbouring rungs only. A duel game there seats two of each side's players, so a seed (4
    or 6 games) costs about four times a 2-player one; a far pair (random against the search
    player) is all but decided before it is played, and costs the most; the steps the report
    tests are the neighbours' duels. A pair of mixed rungs plays each pair of distinct members,
    the pair's seeds shared between them (a member both rungs hold teaches nothing about the
    difference)."""
    members = [_distinct(rung_members(r, players)) for r in rungs]
    out = []
    for i in range(len(rungs)):
        for j in range(i + 1, len(rungs)):
            pairs = [(x.name, y.name) for x in members[i] for y in members[j] if x.name != y.name]
            if not pairs:
                raise RunError(f"rungs {rungs[i]!r} and {rungs[j]!r} hold the same players; every rung "
                               "must differ from the others")
            if players > 2 and j > i + 1:
                continue
            each = max(1, math.ceil(duel_seeds / len(pairs)))
            fields = [f for x, y in pairs for f in duel_fields(players, x, y)]
            for k, f in enumerate(fields):
                tail = f"-{k + 1}" if len(fields) > 1 else ""
                out.append(Duel(i, j, f, each, f"duels/r{i + 1}-r{j + 1}{tail}"))
    return out


def read_plan(folder: str | Path) -> dict | None:
    """The plan in ``folder`` (None when there is none), or RunError when it cannot be read."""
    path = Path(folder) / PLAN_FILE
    if not path.exists() and not path.is_symlink():
        return None
    if not path.is_file():                    # a link to a device or a pipe: a read that never ends
        raise RunError(f"{path} is not a regular file, so not a ladder plan; play the ladder into a new --out")
    doc = read_json(path, "ladder plan", RunError)
    if not isinstance(doc, dict) or doc.get("format") != PLAN_FORMAT:
        raise RunError(f"{path} is not an evora skill ladder plan")
    load_plan(doc, str(path))                 # refused here, whole, if any field is damaged
    return doc


MAX_BUDGET = 7 * 24 * 60.0                    # minutes: a week of playing, far beyond any ladder's need
_PLAN_KEYS = {"format", "version", "players", "rungs", "seed", "seeds", "duel_seeds", "rules_hash",
              "budget_minutes", "pilot", "duels"}
_DUEL_KEYS = {"a", "b", "field", "seeds", "folder"}


def _whole_in(x, lo: int, hi: int) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and lo <= x <= hi


def _finite_in(x, lo: float, hi: float) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and lo <= x <= hi


def plan_problem(doc: dict) -> str | None:
    """What makes a parsed ladder.json not a plan this tool wrote, or None. It is read back from
    a folder anyone may have edited, so every field is checked, not only its type: ranges, the
    duels' rung indexes, and their folders, which must be the ones the plan's own layout names
    (``duels/rI-rJ`` or ``duels/rI-rJ-K`` inside the ladder's folder), never a path of its own."""
    if set(doc) != _PLAN_KEYS:
        extra, missing = sorted(set(doc) - _PLAN_KEYS), sorted(_PLAN_KEYS - set(doc))
        return f"unknown field {extra[0]!r}" if extra else f"field {missing[0]!r} is missing"
    rungs = doc["rungs"]
    checks = [
        (doc["version"] == 1 and not isinstance(doc["version"], bool), "version must be 1"),
        (_whole_in(doc["players"], 2, 4), "players must be 2 to 4"),
        (isinstance(rungs, list) and len(rungs) >= 2 and all(isinstance(r, str) and r.strip() for r in rungs)
         and len(set(rungs)) == len(rungs), "rungs must be two or more different strategy specs"),
        (_whole_in(doc["seed"], 0, 2**63 - 1), "seed must be a whole number from 0 to 2**63-1"),
        (_whole_in(doc["seeds"], 1, MAX_GAMES), f"seeds must be a whole number from 1 to {MAX_GAMES:,}"),
        (_whole_in(doc["duel_seeds"], 1, MAX_GAMES), f"duel_seeds must be a whole number from 1 to {MAX_GAMES:,}"),
        (isinstance(doc["rules_hash"], str) and re.fullmatch(r"[0-9a-f]{1,64}", doc["rules_hash"]) is not None,
         "rules_hash must be a rules hash"),
        (doc["budget_minutes"] is None or _finite_in(doc["budget_minutes"], 1e-9, MAX_BUDGET),
         f"budget_minutes must be null or minutes above 0 and at most {MAX_BUDGET:g}"),
        (isinstance(doc["pilot"], dict) and all(isinstance(k, str) and _finite_in(v, 0, 1e9)
                                                for k, v in doc["pilot"].items()),
         "pilot must map rungs and duels to CPU seconds per seed"),
        (isinstance(doc["duels"], list), "duels must be a list"),
    ]
    for ok, what in checks:
        if not ok:
            return what
    folders = set()
    for i, d in enumerate(doc["duels"]):
        where = f"duels[{i}]"
        if not isinstance(d, dict) or set(d) != _DUEL_KEYS:
            return f"{where} must hold exactly {', '.join(sorted(_DUEL_KEYS))}"
        a, b = d["a"], d["b"]
        if not (_whole_in(a, 0, len(rungs) - 1) and _whole_in(b, 0, len(rungs) - 1) and a < b):
            return f"{where}: a and b must be rung indexes 0 to {len(rungs) - 1}, a below b"
        f = d["field"]
        if not (isinstance(f, list) and len(f) == doc["players"] and all(isinstance(x, str) and x.strip() for x in f)
                and f[0] != f[-1] and f in duel_fields(doc["players"], f[0], f[-1])):
            return (f"{where}: field must seat two different strategies as a {doc['players']}-player duel does "
                    f"({', '.join(' '.join(x) for x in duel_fields(doc['players'], 'A', 'B'))})")
        if not _whole_in(d["seeds"], 1, MAX_GAMES):
            return f"{where}: seeds must be a whole number from 1 to {MAX_GAMES:,}"
        folder = d["folder"]
        if not (isinstance(folder, str) and re.fullmatch(rf"duels/r{a + 1}-r{b + 1}(-[1-9][0-9]{{0,3}})?", folder)
                and folder not in folders):
            return (f"{where}: folder must be duels/r{a + 1}-r{b + 1} (or with -K), inside the ladder's "
                    f"folder and used once, got {folder!r}")
        folders.add(folder)
    together = {}
    for d in doc["duels"]:
        together.setdefault((d["a"], d["b"], d["field"][0], d["field"][-1]), []).append(d)
    for (a, b, x, y), runs in together.items():
        if [d["field"] for d in runs] != duel_fields(doc["players"], x, y) or len({d["seeds"] for d in runs}) > 1:
            return (f"the duel of {x!r} and {y!r} (rungs {a + 1} and {b + 1}) must be the runs "
                    f"{' and '.join(' '.join(f) for f in duel_fields(doc['players'], 'A', 'B'))}, of the same seeds")
    return None


def load_plan(doc: dict, where="the ladder plan") -> Plan:
    """The plan of a parsed ladder.json (see :func:`plan_problem`); RunError naming the first
    field that is missing, malformed or out of range."""
    if rated_in_pairs(doc):
        raise RunError(f"{where} was made by an earlier version of evora skill, which rated a {doc['players']}-player "
                       f"ladder by 2-player duels; this one rates it in {doc['players']}-player games: play the "
                       "ladder again into a new --out")
    problem = plan_problem(doc) if isinstance(doc, dict) else "it is not an object"
    if problem:
        raise RunError(f"{where} is damaged ({problem}); play the ladder into a new --out")
    keep = {k: doc[k] for k in ("players", "rungs", "seed", "seeds", "duel_seeds", "rules_hash",
                                "budget_minutes", "pilot")}
    return Plan(**keep, duels=[Duel(**d) for d in doc["duels"]])


def rated_in_pairs(doc) -> bool:
    """Whether a parsed ladder.json is a 3- or 4-player plan of the earlier version, whose duels
    were 2-player games: its ratings describe players that never sit at its rungs' tables, so it
    is refused whole, never re-planned around its games."""
    duels = doc.get("duels") if isinstance(doc, dict) else None
    return (_whole_in(doc.get("players"), 3, 4) and isinstance(duels, list) and len(duels) > 0
            and all(isinstance(d, dict) and isinstance(d.get("field"), list) and len(d["field"]) == 2 for d in duels))


def check_duels(plan: Plan, where: str) -> None:
    """The plan's duels must be the ones its rungs make (:func:`duel_plan`): an edited field or
    folder is refused, never played. For a plan whose rungs the user has just named again."""
    want = [asdict(d) for d in duel_plan(plan.rungs, plan.players, plan.duel_seeds)]
    if [asdict(d) for d in plan.duels] != want:
        raise RunError(f"{where} is damaged (its duels are not the ones its rungs make); play the ladder "
                       "into a new --out")


def write_plan(folder: Path, plan: Plan) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(folder / PLAN_FILE, (json.dumps(plan.as_json(), indent=1) + "\n").encode("utf-8"))


def same_design(old: dict, players: int, rungs: list, seed: int, rules_hash: str) -> str | None:
    """Why an existing plan is not this ladder (None when it is)."""
    for key, mine in (("players", players), ("rungs", rungs), ("seed", seed), ("rules_hash", rules_hash)):
        if old.get(key) != mine:
            return f"its {key.replace('_', ' ')} {old.get(key)!r}, not {mine!r}"
    return None


def own_folder(out: Path, folder: str) -> Path:
    """``out / folder``, a run folder of the ladder in ``out``, unless a part of it below ``out``
    is a link (RunError): the plan's folders are the ladder's own, so a link put in their place
    would have the ladder write, or its report read, outside it (:func:`fsutil.own_path`)."""
    return own_path(out, folder, error=RunError)
