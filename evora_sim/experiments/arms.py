"""Arms: rules + strategies + player count, each played into its own run folder on common seeds.

Every arm of a set plays the same game seeds (the same run seed, the same number of seeds, every
seed under each cyclic seat rotation), so any two arms are compared paired by seed. The games are
ordinary runs of :func:`evora_sim.runner.simulate`: a set interrupted half way is finished by
playing it again (the finished chunks are kept), a run grows to more seeds (``extend``) without
changing the games it holds, and the Dask backend plays the chunks on a cluster.
"""
from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from ..fsutil import own_path
from ..manifest import RunError
from ..progress import Locked, Relay, Sent, bar
from ..rules import Rules
from ..runner import (
    MANIFEST, Execution, RunResult, growing_chunk, jobs_chunk, read_manifest, simulate,
)
from ..storage import n_games


@dataclass(frozen=True)
class Arm:
    """One run to play: ``folder`` its run folder; ``strategies`` one spec (or strategy object)
    per seat (rotation 0); ``seat_rotation``: every seed under every rotation (as an existing run
    it is paired with may not be)."""

    folder: str
    players: int
    strategies: tuple
    rules: Rules
    seat_rotation: bool = True

    @property
    def rotations(self) -> int:
        """Games a seed: one per seat rotation, or one."""
        return self.players if self.seat_rotation else 1


@dataclass(frozen=True)
class Backend:
    """Where the games are played: ``jobs`` local processes (arms in parallel) or a Dask
    cluster (``backend='dask'``, ``scheduler``: its address)."""

    jobs: int = 1
    backend: str = "loky"
    scheduler: str | None = None


def derive_seed(seed: int, *labels: int) -> int:
    """A seed for one purpose (a round, the confirmation, a sampler's draw) from the search seed:
    numpy's SeedSequence keyed by the labels, so purposes never share game seeds."""
    state = np.random.SeedSequence(int(seed), spawn_key=tuple(int(x) for x in labels)).generate_state(2, np.uint32)
    return int((int(state[0]) << 31) ^ int(state[1])) & ((1 << 63) - 1)


def params_key(params: dict) -> str:
    """A short name for a candidate's values: candidates with equal values share their run
    folders within a round (the same games, played once)."""
    text = repr(sorted((k, repr(v)) for k, v in params.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:10]


class FirstSeeds:
    """A run's tables cut to its first ``seeds`` seeds: a search resumed half way finds some runs
    already grown past the rung it is replaying, and must score the rung on its own seeds."""

    def __init__(self, run: RunResult, seeds: int):
        self.run, self.seeds = run, seeds
        self.out, self.manifest = run.out, run.manifest

    @property
    def rotations(self) -> int:
        """The run's games a seed: one per seat rotation, or one (its manifest says which)."""
        cfg = self.manifest["config"]
        return int(cfg["players"]) if cfg["seat_rotation"] else 1

    def table(self, name: str, columns: list[str] | None = None):
        cols = None if columns is None else list(dict.fromkeys(["game_id", *columns]))
        df = self.run.table(name, cols)
        df = df[df["game_id"].to_numpy() < self.seeds * self.rotations]
        return df.reset_index(drop=True) if columns is None else df[list(columns)].reset_index(drop=True)


def inside(root, folder) -> Path:
    """``folder``, an arm's run folder, checked to be the experiment's own: inside ``root`` with no
    link below it (RunError)."""
    try:
        rel = Path(folder).relative_to(root)
    except ValueError:
        raise RunError(f"{folder} is not inside the experiment's folder {root}") from None
    return own_path(root, rel, error=RunError)


def _played(folder: str) -> int:
    """Seeds a run folder was asked for so far (0 if none)."""
    path = Path(folder)
    return int(read_manifest(path)["config"]["games"]) if (path / MANIFEST).is_file() else 0


def _alike(arms: list[Arm], most: dict) -> bool:
    """Whether the arms are about the same work, so that one process an arm keeps every process
    busy to the end: the same players in the same seats, as many seeds asked and as many games
    finished (none, or a set stopped evenly). Rules may differ (a round's candidates): they change a
    game's cost far less than the players do."""
    return len({(repr(a.strategies), a.players, a.seat_rotation, most[a.folder], _games_done(a.folder))
                for a in arms}) == 1


def _games_done(folder: str) -> int:
    """Games in a run folder's finished chunks (0 if there is no run yet)."""
    path = Path(folder)
    return n_games(path, read_manifest(path)) if (path / MANIFEST).is_file() else 0


def _shared_chunk(folder, seeds: int, chunk: int, jobs: int) -> int:
    """The chunks of one arm played by ``jobs`` processes: a folder made before keeps its own;
    else about as many a process as the runner gives (``runner.jobs_chunk``), but a divisor of
    the caller's ``chunk``: the arm may grow later in steps of it (a search's next rung), and
    a run grows only by whole chunks. (The runner's own chunk did not divide it, and a round
    whose two candidates drew the same values could not grow to its second rung.)"""
    return growing_chunk([folder], chunk, jobs_chunk(seeds, jobs)) or chunk


def _play(arm: Arm, seeds: int, run_seed: int, chunk: int | None, backend: Backend, command: str,
          progress=None, jobs: int = 1) -> FirstSeeds:
    run = simulate(arm.players, max(seeds, _played(arm.folder)), list(arm.strategies), seed=run_seed,
                   out=arm.folder, seat_rotation=arm.seat_rotation, rules=arm.rules, extend=True,
                   execution=Execution(jobs=jobs, backend=backend.backend, scheduler=backend.scheduler,
                                       chunk_size=chunk, quiet=True, command=command, progress=progress))
    return FirstSeeds(run, seeds)


def play_arms(arms: list[Arm], seeds: int | list[int], run_seed: int, chunk: int, backend: Backend,
              command: str = "", quiet: bool = True, *, root) -> list[FirstSeeds]:
    """Play (or finish, or grow to ``seeds``) every arm on game seeds ``0 .. seeds - 1`` of
    ``run_seed``, each under every seat rotation, in chunks of ``chunk`` seeds; the runs (their
    first ``seeds`` seeds) in the order of ``arms``. ``seeds`` may give each arm its own count
    (a list, one per arm: the shorter arms play the first seeds of the longer). Arms sharing a
    folder are played once (to the most seeds asked of it). Unless ``quiet``, one bar (or
    progress lines off a terminal) counts the games of every arm as they are played. ``root``:
    the experiment's folder; every arm's folder must lie inside it with no link on the way
    (:func:`fsutil.own_path`), checked before any game."""

    for a in arms:
        inside(root, a.folder)
    sizes = [seeds] * len(arms) if isinstance(seeds, int) else list(seeds)
    most: dict[str, int] = {}
    for a, k in zip(arms, sizes):
        most[a.folder] = max(k, most.get(a.folder, 0))
    unique = list({a.folder: a for a in arms}.values())
    total = sum(most[a.folder] * a.rotations for a in unique)
    done = sum(min(_played(a.folder), most[a.folder]) * a.rotations for a in unique)
    shown = bar(total, done, quiet)
    try:
        if backend.backend == "dask":
            # each arm's chunks go to the cluster; the threads only wait and write the tables
            with ThreadPoolExecutor(max(1, min(8, len(unique)))) as pool:
                done_runs = list(pool.map(lambda a: _play(a, most[a.folder], run_seed, chunk, backend, command,
                                                          None if quiet else Locked(shown)), unique))
        elif backend.jobs > 1 and len(unique) % backend.jobs == 0 and _alike(unique, most):
            # the arms share the processes evenly: one process an arm, each in one chunk stream
            with Relay(lambda key, n: shown.update(n)) if not quiet else nullcontext() as relay:
                done_runs = Parallel(n_jobs=min(backend.jobs, len(unique)), backend="loky")(
                    delayed(_play)(a, most[a.folder], run_seed, chunk, backend, command,
                                   Sent(relay.send) if relay is not None else None) for a in unique)
        elif backend.jobs > 1:
            # fewer arms than processes (one arm: an iteration of balance --compensation, or a round
            # whose candidates share one folder), a number that does not divide among them (3 arms
            # on 2 cores left one idle for the last arm), or arms of unlike work (a confirmation's
            # expert rung beside its search-player rung left one core idle for the hour the search
            # players took): each arm in turn, played by every process
            done_runs = [_play(a, most[a.folder], run_seed, _shared_chunk(a.folder, most[a.folder], chunk, backend.jobs),
                               backend, command, None if quiet else shown, jobs=backend.jobs) for a in unique]
        else:
            done_runs = [_play(a, most[a.folder], run_seed, chunk, backend, command, None if quiet else shown)
                         for a in unique]
    finally:
        shown.close()
    by_folder = {str(Path(a.folder)): r for a, r in zip(unique, done_runs)}
    return [FirstSeeds(by_folder[str(Path(a.folder))].run, k) for a, k in zip(arms, sizes)]

