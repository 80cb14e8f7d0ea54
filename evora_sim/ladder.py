"""A skill ladder, played: the same seeds at every rung, and duels between the rungs at the
ladder's own player count.

``evora skill`` answers "does this finding hold for stronger players?". Every rung is an ordinary
run folder (``OUT/r1``, ``OUT/r2``, ...) played with the same run seed, number of seeds and rules,
so game ``i`` of every rung is dealt the same stacks (common random numbers) and the rungs differ
only in their players. The duels (``OUT/duels/rI-rJ...``) place the rungs on one strength scale
(:func:`analysis.skill_stats.rung_ratings`). A duel is played at the ladder's player count, the seats
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
import time
from pathlib import Path

from strategies.registry import parse_spec

from .ladderplan import Plan, duel_games_per_seed, duel_plan, own_folder, rung_members
from .manifest import RunError
from .runner import Execution, check_folder, make_config, play_chunk, simulate
from . import warmup  # compile_now through the module: a test that stands in for it reaches this caller too

DEFAULT_BUDGET = 15.0        # minutes
MIN_SEEDS = 40               # the fewest seeds a rung plays when sized by the budget
MIN_DUEL_SEEDS = 20          # per pair of rungs
PILOT_SEEDS = 1            # a rung's pilot: one seed (every rotation of it)
DUEL_SHARE = 0.4             # of the playing time, spent on the duels
EFFICIENCY = 0.85            # of the cores, kept busy by the runner (chunks end unevenly)
RESERVE = 75.0               # seconds of the budget kept for the report


# ---------------------------------------------------------------------------------------------
# sizing by a timed pilot
# ---------------------------------------------------------------------------------------------
def _cpu_per_seed(players: int, spec, seed: int, rules, seeds: int = PILOT_SEEDS) -> float:
    """CPU seconds one seed (every seat rotation of it) takes, from a short in-process run (the
    compiled driver already loaded: :func:`pilot` plays one warm-up game first)."""
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
    warmup.compile_now()                       # loads the compiled driver into this process
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


def smallest_ladder(costs: dict, rungs: list, players: int, cores: int, spent: float = 0.0) -> tuple[int, int, float]:
    """``size_to_budget``'s answer for the smallest ladder (``MIN_SEEDS`` a rung, ``MIN_DUEL_SEEDS``
    a duel pair): what the default budget plays when it is too short for the ladder, so that the
    command's own example runs on any machine rather than stopping at a budget nobody gave."""
    _, need = _ladder_cost(costs, rungs, players, cores)
    return MIN_SEEDS, MIN_DUEL_SEEDS, need / 60 + spent


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
    steps = _steps(plan)
    for k, (players, spec, seeds, rotate, folder) in enumerate(steps):
        if on_step:
            what = spec if isinstance(spec, str) else " vs ".join(", ".join(x for x in spec if x == side)
                                                                  for side in (spec[0], spec[-1]))
            kind = "rung" if k < len(plan.rungs) else "duel"
            on_step(f"[{k + 1}/{len(steps)}] {kind} {what}: {seeds:,} seeds at {players} players -> {out / folder}")
        simulate(players, seeds, spec, seed=plan.seed, out=out / folder, seat_rotation=rotate, rules=rules,
                 execution=Execution(jobs=jobs, backend=backend, scheduler=scheduler, chunk_size=chunk_for(seeds),
                                     quiet=quiet, command=command))


def _steps(plan: Plan) -> list:
    """(players, strategies, seeds, seat rotation, folder) of every run of the plan, rungs first."""
    return ([(plan.players, plan.rungs[i], plan.seeds, None, plan.rung_folder(i)) for i in range(len(plan.rungs))]
            + [(plan.players, d.field, d.seeds, True, d.folder) for d in plan.duels])


def check_folders(plan: Plan, out: Path, rules) -> None:
    """Every run folder of the plan is the ladder's own (:func:`own_folder`), new or holding the
    same run (RunError otherwise): checked before the first game, so a clash costs nothing."""
    for players, spec, seeds, rotate, folder in _steps(plan):
        check_folder(own_folder(out, folder), make_config(players, seeds, spec, plan.seed, rotate, chunk_for(seeds),
                                                          rules))
