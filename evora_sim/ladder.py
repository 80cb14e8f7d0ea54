"""A skill ladder, played: the same seeds at every rung, and duels between the rungs at the
ladder's own player count.

``evora skill`` answers "does this finding hold for stronger players?". Every rung is an ordinary
run folder (``OUT/r1``, ``OUT/r2``, ...) played with the same run seed, number of seeds and rules,
so game ``i`` of every rung is dealt the same stacks (common random numbers) and the rungs differ
only in their players. The duels (``OUT/duels/rI-rJ...``) place the rungs on one strength scale
(:func:`analysis.skill.rung_ratings`). A duel is played at the ladder's player count, the seats
shared between the two rungs (:func:`duel_fields`): a player's strength at 2 players says little
of its strength at 4 (the expert looks a round ahead at 2 and plans one turn at 4), so a rung is
rated as it plays in its own games.

The plan (sizes, rungs, seed, rules) is written to ``OUT/ladder.json`` before the first game. A
second call with the same arguments reads it and plays only what is missing (each run resumes
as ``evora simulate`` does); different arguments are refused, so a ladder never mixes two
designs. Without ``--games``, a short timed pilot of every rung and duel sizes the ladder to the
time budget; the sizes are then fixed in the plan, so a resumed ladder does not depend on the
speed of the machine that resumes it.
"""
from __future__ import annotations

import math
import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .fields import DEFAULT_FIELD
from .manifest import RunError

PLAN_FILE = "ladder.json"
PLAN_FORMAT = "evora-sim skill ladder"
MCTS_BUDGET = 100            # k of the default ladder's search rungs, mcts(k) and mcts(4k)
DEFAULT_BUDGET = 15.0        # minutes
MIN_SEEDS = 40               # the fewest seeds a rung plays when sized by the budget
MIN_DUEL_SEEDS = 20          # per pair of rungs
PILOT_SEEDS = 1            # a rung's pilot: one seed (every rotation of it)
DUEL_SHARE = 0.4             # of the playing time, spent on the duels
EFFICIENCY = 0.85            # of the cores, kept busy by the runner (chunks end unevenly)
RESERVE = 75.0               # seconds of the budget kept for the report


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
    from strategies.registry import parse_spec, resolve_each, split_specs

    items = split_specs(rung)
    if len(items) not in (1, players):
        raise RunError(f"rung {rung!r} names {len(items)} strategies; give one (for every seat) or "
                       f"{players} (one per seat)")
    return resolve_each(items, parse_spec)


def rung_played(rung: str, strategies: list) -> bool:
    """Whether a run whose seats (rotation 0) hold ``strategies`` is the rung ``rung``, decided
    without running any code (``registry.names_strategy``): a report checks the plan's rung
    names against what its runs played, so an edited ladder.json cannot mislabel them."""
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
    from .jsonfile import read_json

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
    from .manifest import MAX_GAMES

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
    import json

    from .fsutil import write_bytes_atomic

    folder.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(folder / PLAN_FILE, (json.dumps(plan.as_json(), indent=1) + "\n").encode("utf-8"))


def same_design(old: dict, players: int, rungs: list, seed: int, rules_hash: str) -> str | None:
    """Why an existing plan is not this ladder (None when it is)."""
    for key, mine in (("players", players), ("rungs", rungs), ("seed", seed), ("rules_hash", rules_hash)):
        if old.get(key) != mine:
            return f"its {key.replace('_', ' ')} {old.get(key)!r}, not {mine!r}"
    return None


# ---------------------------------------------------------------------------------------------
# sizing by a timed pilot
# ---------------------------------------------------------------------------------------------
def _cpu_per_seed(players: int, spec, seed: int, rules, seeds: int = PILOT_SEEDS) -> float:
    """CPU seconds one seed (every seat rotation of it) takes, from a short in-process run (the
    compiled driver already loaded: :func:`pilot` plays one warm-up game first)."""
    from .runner import make_config, play_chunk

    config = make_config(players, seeds, spec, seed + 1, None, seeds, rules)
    t0 = time.process_time()
    play_chunk(config, rules, 0)
    return (time.process_time() - t0) / seeds


class PilotOverrun(RunError):
    """The timing pilot used up its share of the budget before it had timed every step."""

    def __init__(self, done: int, total: int):
        super().__init__(f"the timing pilot ran out of its share of the budget after {done} of {total} steps")
        self.done, self.total = done, total


def duel_members(rungs: list, players: int) -> list[str]:
    """Every strategy a duel of the ladder seats, once each (in the order the duels meet them)."""
    names = []
    for d in duel_plan(rungs, players, 1):
        names += [x for x in d.field if x not in names]
    return names


def duel_seed_cost(players: int, cost_x: float, cost_y: float) -> float:
    """CPU seconds of one duel seed of ``x`` against ``y`` (:func:`duel_fields`, every rotation),
    from the cost of one ``players``-player game with ``x`` (``y``) in every seat: a game costs
    about the sum of its seats' costs, and over a seed's games each side holds half the seats."""
    return duel_games_per_seed(players) / 2 * (cost_x + cost_y)


def _sole_members(rungs: list, players: int) -> dict:
    """Strategy name -> index of a rung that is that one strategy in every seat: a seed of such a
    rung is one game with it in every seat, the game a duel member's cost is told from."""
    out = {}
    for i, r in enumerate(rungs):
        members = rung_members(r, players)
        if len(members) == 1:
            out.setdefault(members[0].name, i)
    return out


def _duel_timings(rungs: list, players: int) -> list[str]:
    """The duel members the pilot times on their own: those no rung of one strategy has timed."""
    sole = _sole_members(rungs, players)
    return [m for m in duel_members(rungs, players) if m not in sole]


def pilot(players: int, rungs: list, rules, seed: int, on_step=None, deadline: float | None = None,
          clock=time.monotonic, timer=_cpu_per_seed) -> dict:
    """CPU seconds per seed of each rung and of each pair of members a duel plays (both at
    ``players``), keyed as in the plan: ``r1``, ... and ``A|B``. Small and bounded: one seed a
    rung, and one game of each duel member in every seat that no rung of it alone has timed (a
    duel seed's cost follows from its two members': :func:`duel_seed_cost`), after one warm-up
    game that loads the compiled driver. Past ``deadline`` (a time of ``clock``) it stops with
    :class:`PilotOverrun`, so the pilot never takes more than its share of the budget."""
    from .warmup import compile_now

    compile_now()                              # loads the compiled driver into this process
    members = _duel_timings(rungs, players)
    steps = [(f"r{i + 1}", r, f"rung {i + 1} of {len(rungs)}: {r}") for i, r in enumerate(rungs)]
    steps += [(m, m, f"duel player {j + 1} of {len(members)}: {m}") for j, m in enumerate(members)]
    timed = {}
    for k, (key, spec, what) in enumerate(steps):
        if deadline is not None and clock() > deadline:
            raise PilotOverrun(k, len(steps))
        if on_step:
            on_step(f"timing {what}")
        timed[key] = timer(players, spec, seed, rules)
    out = {f"r{i + 1}": timed[f"r{i + 1}"] for i in range(len(rungs))}
    timed.update({m: out[f"r{i + 1}"] for m, i in _sole_members(rungs, players).items()})
    for d in duel_plan(rungs, players, 1):
        out[d.key] = duel_seed_cost(players, timed[d.field[0]], timed[d.field[-1]])
    return out


MCTS_FLOOR = 0.0025          # CPU seconds per iteration per search seat in a game: the README's 2.7 s for a
                             # 4-player game at 1,000 iterations (the machine's normal speed), rounded down
PILOT_SHARE = 0.25           # of the budget, the most the timing pilot may take


def _floor_per_game(spec: str) -> float:
    """A lower bound on the CPU seconds one seat of ``spec`` costs a game: a search player's
    iterations times ``MCTS_FLOOR``; nothing for the others (far cheaper, and not bounded here)."""
    from strategies.registry import parse_spec

    strategy = parse_spec(spec)
    return float(strategy.search[0]) * MCTS_FLOOR if getattr(strategy, "search", ()) else 0.0


def floor_costs(players: int, rungs: list) -> tuple[dict, float]:
    """Before any game: lower bounds on the pilot's costs (keyed as :func:`pilot`'s) and on the
    pilot's own CPU seconds. A rung's seed is one game a seat for every member seat (under
    every rotation for a mixed rung); a duel seed is priced as :func:`duel_seed_cost` does."""
    costs, pilot_cpu = {}, 0.0
    for i, r in enumerate(rungs):
        members = [m.name for m in rung_members(r, players)]
        seats = members if len(members) > 1 else members * players
        rotations = players if len(set(seats)) > 1 else 1
        costs[f"r{i + 1}"] = rotations * sum(_floor_per_game(m) for m in seats)
        pilot_cpu += costs[f"r{i + 1}"]
    for m in _duel_timings(rungs, players):
        pilot_cpu += players * _floor_per_game(m)
    for d in duel_plan(rungs, players, 1):
        costs[d.key] = duel_seed_cost(players, players * _floor_per_game(d.field[0]),
                                      players * _floor_per_game(d.field[-1]))
    return costs, pilot_cpu


def smallest_budget(players: int, rungs: list, cores: int) -> float:
    """A lower bound, known before any game, on the minutes a ladder sized by its budget needs:
    the smallest ladder (``MIN_SEEDS`` a rung, ``MIN_DUEL_SEEDS`` a duel pair) at the search
    players' floor cost, and a budget of which the pilot takes at most ``PILOT_SHARE``."""
    costs, pilot_cpu = floor_costs(players, rungs)
    _, need = _ladder_cost(costs, rungs, players, cores)
    pilot_minutes = pilot_cpu / 60 / PILOT_SHARE
    return max(need / 60 + pilot_cpu / 60, pilot_minutes)


def _ladder_cost(costs: dict, rungs: list, players: int, cores: int) -> tuple[tuple[float, float], float]:
    """((CPU seconds a seed of every rung, of every duel pair), wall seconds of the smallest
    ladder, the report's reserve included)."""
    rung_cost = sum(costs[f"r{i + 1}"] for i in range(len(rungs)))
    pairs = {}
    for d in duel_plan(rungs, players, 1):
        pairs.setdefault((d.a, d.b), []).append(costs[d.key])
    duel_cost = sum(sum(v) / len(v) for v in pairs.values())      # a pair's seeds are shared by its members
    need = (MIN_SEEDS * rung_cost + MIN_DUEL_SEEDS * duel_cost) / (cores * EFFICIENCY) + RESERVE
    return (rung_cost, duel_cost), need


def size_to_budget(costs: dict, rungs: list, players: int, minutes: float, cores: int,
                   spent: float = 0.0) -> tuple[int, int, float]:
    """Seeds per rung and per duel pair that fill the ``minutes`` of wall time left on ``cores``
    once ``spent`` (the pilot's minutes) is taken from them (``DUEL_SHARE`` of it on the duels),
    and the minutes they are expected to take, the pilot's included; RunError naming the budget
    when even the smallest ladder does not fit."""
    (rung_cost, duel_cost), need = _ladder_cost(costs, rungs, players, cores)
    cpu = max(0.0, (minutes - spent) * 60 - RESERVE) * cores * EFFICIENCY
    seeds = int(cpu * (1 - DUEL_SHARE) / rung_cost) if rung_cost > 0 else 10**6
    duel_seeds = int(cpu * DUEL_SHARE / duel_cost) if duel_cost > 0 else 10**6
    if seeds < MIN_SEEDS or duel_seeds < MIN_DUEL_SEEDS:
        need = max(1, math.ceil((need + spent * 60) / 60))
        raise RunError(f"--budget {minutes:g} minutes is too short for this ladder on {cores} core"
                       f"{'s' if cores > 1 else ''}: it needs about {need} minute{'s' if need > 1 else ''} for "
                       f"{MIN_SEEDS} seeds a rung and {MIN_DUEL_SEEDS} a duel; give a larger --budget, fewer or "
                       "cheaper rungs, or --games")
    expected = (seeds * rung_cost + duel_seeds * duel_cost) / (cores * EFFICIENCY) + RESERVE
    return min(seeds, 10**6), min(duel_seeds, 10**6), expected / 60 + spent


def default_duel_seeds(seeds: int, players: int) -> int:
    """Seeds per pair of rungs when the user sizes the ladder with --games: about as many duel
    games a pair as the rung plays seeds (a duel game, won by one side or the other, tells about
    as much at any player count)."""
    return max(MIN_DUEL_SEEDS, seeds // duel_games_per_seed(players))


def chunk_for(seeds: int) -> int:
    """Chunks small enough to keep 8 cores busy on a short, expensive rung (and the same on any
    machine, so a ladder resumes anywhere)."""
    return max(1, min(5000, math.ceil(seeds / 32)))


def play(plan: Plan, out: Path, rules, jobs: int, backend: str = "loky", scheduler: str | None = None,
         quiet: bool = True, command: str = "", on_step=None) -> None:
    """Play (or finish) every rung and duel of ``plan`` into ``out``: each an ordinary run folder
    that resumes as ``evora simulate`` does."""
    from .runner import simulate

    steps = _steps(plan)
    for k, (players, spec, seeds, rotate, folder) in enumerate(steps):
        if on_step:
            what = spec if isinstance(spec, str) else " vs ".join(", ".join(x for x in spec if x == side)
                                                                  for side in (spec[0], spec[-1]))
            kind = "rung" if k < len(plan.rungs) else "duel"
            on_step(f"[{k + 1}/{len(steps)}] {kind} {what}: {seeds:,} seeds at {players} players -> {out / folder}")
        simulate(players, seeds, spec, seed=plan.seed, out=out / folder, jobs=jobs, seat_rotation=rotate,
                 rules=rules, backend=backend, scheduler=scheduler, chunk_size=chunk_for(seeds),
                 quiet=quiet, command=command)


def _steps(plan: Plan) -> list:
    """(players, strategies, seeds, seat rotation, folder) of every run of the plan, rungs first."""
    return ([(plan.players, plan.rungs[i], plan.seeds, None, plan.rung_folder(i)) for i in range(len(plan.rungs))]
            + [(plan.players, d.field, d.seeds, True, d.folder) for d in plan.duels])


def own_folder(out: Path, folder: str) -> Path:
    """``out / folder``, a run folder of the ladder in ``out``, unless a part of it below ``out``
    is a link (RunError): the plan's folders are the ladder's own, so a link put in their place
    would have the ladder write, or its report read, outside it (:func:`fsutil.own_path`)."""
    from .fsutil import own_path

    return own_path(out, folder, error=RunError)


def check_folders(plan: Plan, out: Path, rules) -> None:
    """Every run folder of the plan is the ladder's own (:func:`own_folder`), new or holding the
    same run (RunError otherwise): checked before the first game, so a clash costs nothing."""
    from .runner import check_folder, make_config

    for players, spec, seeds, rotate, folder in _steps(plan):
        check_folder(own_folder(out, folder), make_config(players, seeds, spec, plan.seed, rotate, chunk_for(seeds),
                                                          rules))
