"""Large runs: chunks of seeded games played in parallel, written to Parquet, resumable.

A run folder holds ``manifest.json`` and one Parquet file per chunk and table
(``games/``, ``seats/``, ``cards/``, ``spaces/``). A chunk's files are each written to a
temporary name and renamed into place, and the chunk counts as done only once the manifest
(also replaced atomically) says so: an interrupted run keeps every finished chunk, and
running the same command again plays only the missing ones. Game seeds depend only on the run
seed and the game index (:mod:`evora_sim.seeds`), so results are identical for any number of
jobs and either backend.
"""
from __future__ import annotations

import json
import math
import numbers
import os
import queue
import shutil
import sys
import threading
import time
import uuid
from concurrent.futures import CancelledError
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from joblib import Parallel, delayed

from strategies.custom import is_custom
from strategies.registry import (as_strategy, describe, from_resolved, parse_strategies, per_seat, resolve_each,
                                 resolved)

from . import __version__
from .api import check_players
from .batch import play_batch
from .cluster import connect_scheduler
from .compact import AUTO_COMPACT_GAMES
from .compact import compact as pack
from .compact import loose_games, remove_leftovers
from .fsutil import check_folder_kind, check_out_path, is_leftover, write_bytes_atomic
from .manifest import (FORMAT, MANIFEST, MAX_CHUNK_GAMES, MAX_CHUNKS, MAX_GAMES, VERSION, RunError,  # noqa: F401
                       RunFailed, chunk_file, damaged_chunks, describe_damaged, file_record, forget_chunks,
                       read_manifest, record_done, record_unrecorded, write_manifest)
from .progress import Chunks, Relay
from .progress import bar as progress_bar
from .progress import slices
from .rules import Rules, load_rules, player_count_problem
from .runlock import LOCK_FILE, folder_lock
from .seeds import game_seeds
from .storage import (RunResult, TableTooLarge, misplaced,  # noqa: F401  (a run's results, read back: public here too)
                      open_run)
from .result_tables import TABLES, batch_tables, concat_tables
from .warmup import cores, ensure_compiled  # cores: tests stand in for runner.cores

DEFAULT_CHUNK = 5_000


@dataclass(frozen=True)
class RunConfig:
    """Everything that determines a run's results; a resumed run must match it exactly."""

    players: int
    games: int
    strategies: tuple[str, ...]          # each seat's strategy (rotation 0): its normalised spec
    resolved: tuple[str, ...]            # what each resolved to (JSON of registry.resolved)
    seed: int
    seat_rotation: bool
    chunk_size: int
    rules_hash: str
    record_actions: bool = False         # the games table keeps every game's actions (training)

    @property
    def rotations(self) -> int:
        return self.players if self.seat_rotation else 1

    @property
    def n_chunks(self) -> int:
        return math.ceil(self.games / self.chunk_size)

    def chunk_range(self, k: int) -> tuple[int, int]:
        return k * self.chunk_size, min(self.games, (k + 1) * self.chunk_size)

    def seat_strategies(self, rotation: int) -> list:
        """Rotation r seats strategy i at seat (i + r) mod n (common random numbers). The
        strategies are rebuilt from what they resolved to, so every worker plays the weights
        recorded in the manifest (a weight file is not read again)."""
        n = self.players
        return [from_resolved(self.strategies[i], json.loads(self.resolved[i]))
                for i in ((seat - rotation) % n for seat in range(n))]

    def seat_names(self, rotation: int) -> list[str]:
        n = self.players
        return [self.strategies[(seat - rotation) % n] for seat in range(n)]

    def resolved_strategies(self) -> dict:
        return {name: json.loads(info) for name, info in zip(self.strategies, self.resolved)}

    def as_dict(self) -> dict:
        return {"players": self.players, "games": self.games, "strategies": list(self.strategies),
                "resolved_strategies": self.resolved_strategies(),
                "seed": self.seed, "seat_rotation": self.seat_rotation,
                "chunk_size": self.chunk_size, "rules_hash": self.rules_hash,
                # written only when set, so every other run's configuration reads as before
                **({"record_actions": True} if self.record_actions else {})}


def play_chunk(config: RunConfig, rules: Rules, k: int,
               decision_timeout: float | None = None, on_games=None) -> dict[str, pd.DataFrame]:
    """Play chunk ``k`` (every rotation of its seeds) and return its four tables. The seeds are
    played in slices (:func:`evora_sim.progress.slices`; the same games as in one call), and
    ``on_games(k, n)`` is told after each, so progress moves within a chunk."""
    start, stop = config.chunk_range(k)
    seeds = game_seeds(config.seed, start, stop)
    parts = []
    for r in range(config.rotations):
        for a, b in slices(len(seeds)) if on_games is not None else [(0, len(seeds))]:
            res = play_batch(rules, config.players, seeds[a:b], config.seat_strategies(r),
                             decision_timeout=decision_timeout, record_actions=config.record_actions)
            game_ids = np.arange(start + a, start + b, dtype=np.int64) * config.rotations + r
            parts.append(batch_tables(res, game_ids, r, config.seat_names(r), rules.half_points(config.players),
                                      rules.shared_victory))
            if on_games is not None:
                on_games(k, b - a)
    return concat_tables(parts)


def write_chunk(out: Path, k: int, tables: dict[str, pd.DataFrame]) -> tuple[int, dict]:
    """Write the chunk's tables, each atomically (temporary name, then rename); return its games
    and, per table, the size and SHA-256 of the bytes written (recorded in the manifest)."""
    files = {}
    for name in TABLES:
        final = chunk_file(out, name, k)
        final.parent.mkdir(parents=True, exist_ok=True)
        sink = pa.BufferOutputStream()
        pq.write_table(pa.Table.from_pandas(tables[name], preserve_index=False), sink)
        data = sink.getvalue().to_pybytes()
        files[name] = file_record(data)
        write_bytes_atomic(final, data)
    return len(tables["games"]), files


def play_and_write(config: RunConfig, rules: Rules, out: str, k: int, parent: int | None = None,
                   decision_timeout: float | None = None, on_games=None) -> tuple[int, int, dict]:
    """Worker task for the local backend: play chunk ``k``, write it, report (k, games, files).
    ``parent``: the run's process; a worker process exits once it is gone. ``on_games``: told
    of the games as they are played (a :class:`evora_sim.progress.Relay`'s sender)."""
    if parent is not None and parent != os.getpid():
        watch_parent(parent)
    return (k, *write_chunk(Path(out), k, play_chunk(config, rules, k, decision_timeout, on_games)))


_WATCHED: set[int] = set()


def watch_parent(parent: int) -> None:
    """In a worker process: a daemon thread that ends the process as soon as ``parent`` (the run's
    process) is gone, so a killed run leaves no workers behind (loky's own would idle 300 s)."""
    if parent in _WATCHED:
        return
    _WATCHED.add(parent)
    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="evora-parent-watch", daemon=True).start()


# ---------------------------------------------------------------------------------------------
# the run folder
# ---------------------------------------------------------------------------------------------
SHOWN_DIFFERENCES = 4          # a refusal is one line: the first few differences, then a count
SHOWN_VALUE = 40               # characters of a value shown before it is cut


def run_differences(old: dict, new: dict) -> str:
    """The first differences between two run configurations, ``key: old -> new``, and how many
    more. Nested tables (the strategies' weights) are compared key by key and lists of one length
    item by item, so the message names the weight that changed (``...players.3[12]``) instead of
    printing every weight of a player: retrained weights differ in nearly all of them. Public for
    the tests, which check the line's shape on configurations no command makes cheaply."""
    diffs = list(_each_difference(old, new, ""))
    more = len(diffs) - SHOWN_DIFFERENCES
    return "; ".join(diffs[:SHOWN_DIFFERENCES]) + (f"; and {more} more" if more > 0 else "")


def _each_difference(a, b, key: str):
    if a == b:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            name = "seeds" if k == "games" and not key else k   # a configuration's games counts seeds
            yield from _each_difference(a.get(k), b.get(k), f"{key}.{name}" if key else name)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):                    # cut, two long lists would look the same
            yield f"{key}: {len(a)} items -> {len(b)} items"
            return
        for i, (x, y) in enumerate(zip(a, b)):
            yield from _each_difference(x, y, f"{key}[{i}]")
    else:
        yield f"{key}: {_shown(a)} -> {_shown(b)}"


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN_VALUE else text[:SHOWN_VALUE - 3] + "..."


def _extendable(manifest: dict, config: RunConfig) -> bool:
    """Whether a run can grow to ``config.games`` seeds: that is the only difference and every
    chunk keeps its games (the old size is a whole number of chunks). Used by ``--until-ci``,
    which adds games look by look."""
    old = manifest["config"]
    new = config.as_dict()
    if {k: v for k, v in old.items() if k != "games"} != {k: v for k, v in new.items() if k != "games"}:
        return False
    return new["games"] >= old["games"] and not old["games"] % config.chunk_size


def _extend(manifest: dict, config: RunConfig) -> None:
    """The new chunks are added as missing."""
    old_chunks = manifest["chunks"]
    manifest["config"] = config.as_dict()
    manifest["chunks"] = {str(k): old_chunks.get(str(k), "missing") for k in range(config.n_chunks)}


def _check_same_run(out: Path, manifest: dict, config: RunConfig, extend: bool) -> None:
    diff = run_differences(manifest["config"], config.as_dict())
    if diff and not (extend and _extendable(manifest, config)):
        raise RunError(f"--out {out} holds a different run ({diff}); choose another --out")


def check_folder(out: Path, config: RunConfig, extend: bool = False) -> None:
    """Refuse an ``--out`` that cannot hold this run, writing nothing: a file, a folder holding
    something else (:func:`fsutil.check_folder_kind`), another run, a place that cannot be written."""
    out = Path(out)
    check_out_path(out, "--out", RunError)
    if check_folder_kind(out, lambda f: (f / MANIFEST).exists(), "a run folder", "--out", RunError):
        _check_same_run(out, read_manifest(out), config, extend)
        return
    full = out.absolute()
    probe = next((p for p in (full, *full.parents) if p.exists()), None)
    if probe is None or not probe.is_dir():
        raise RunError(f"--out {out}: {probe} is not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise RunError(f"--out {out}: cannot write in {probe}")


def _new_manifest(config: RunConfig, rules: Rules, command: str, strategy_info: dict) -> dict:
    return {
        "format": FORMAT, "version": VERSION, "package_version": __version__,
        "command": command, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": config.as_dict(), "strategies": strategy_info,
        "rules_hash": rules.hash, "rules": rules.data,
        "rules_source": {"file": getattr(rules, "source", None),
                         "set": list(getattr(rules, "overrides", ()))},
        "python": sys.version.split()[0], "numpy": np.__version__, "pandas": pd.__version__,
        "chunks": {str(k): "missing" for k in range(config.n_chunks)}, "chunk_files": {},
    }


def _remove_temporary(out: Path) -> None:
    """Temporary files of an interrupted write (``.NAME.PID.tmp``): never content, so removed
    once this run holds the folder's lock."""
    for folder in (out, *(out / t for t in TABLES)):
        if folder.is_dir():
            for p in folder.iterdir():
                if is_leftover(p) and p.name != LOCK_FILE:
                    p.unlink(missing_ok=True)


@contextmanager
def run_folder(out: Path, config: RunConfig, rules: Rules, command: str, strategy_info: dict,
               extend: bool = False, notice=None):
    """Create the run folder, or open the same run to resume it (``extend``: or the same run with
    fewer games, grown to this one), and hold its lock until the block ends. Yields the manifest
    (journal folded in; damaged chunks marked missing, with one ``notice`` line); on leaving, the
    journal is folded into the manifest."""
    out = Path(out)
    check_folder(out, config, extend)
    full = out.absolute()
    created = next((p for p in reversed((full, *full.parents)) if not p.exists()), None)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunError(f"--out {out}: cannot write: {exc.strerror or exc}") from None
    with folder_lock(out, RunError):
        if (out / MANIFEST).exists():           # checked again: another run may have just made it
            manifest = read_manifest(out)
            _check_same_run(out, manifest, config, extend)
            if manifest["config"] != config.as_dict():
                _extend(manifest, config)
            _remove_temporary(out)
            remove_leftovers(out, manifest)
            damaged = damaged_chunks(out, manifest)
            damaged.update(misplaced(out, manifest, skip=damaged))     # checksums can be rewritten: content too
            forget_chunks(manifest, damaged)
            if damaged and notice is not None:
                notice(describe_damaged(out, damaged) + ": played again")
            record_unrecorded(out, manifest)
        else:
            manifest = _new_manifest(config, rules, command, strategy_info)
        try:
            write_manifest(out, manifest)
        except OSError as exc:
            if created is not None:
                shutil.rmtree(created, ignore_errors=True)
            raise RunError(f"--out {out}: cannot write: {exc.strerror or exc}") from None
        try:
            yield manifest
        finally:
            try:
                write_manifest(out, manifest)
            except OSError:                  # a full disk: the journal keeps what finished
                pass


def missing_chunks(manifest: dict, out: Path) -> list[int]:
    """Chunks not marked done, or marked done but with a file missing or damaged (a run opened
    by :func:`run_folder` has its damaged chunks already marked missing)."""
    todo = [int(k) for k, status in manifest["chunks"].items() if status != "done"]
    return sorted(todo + list(damaged_chunks(out, manifest)))


# ---------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------
def run_local(config, rules, out, todo, jobs, on_done, decision_timeout=None, on_games=None):
    """Play ``todo``'s chunks here (``jobs`` 1) or in loky's processes; ``on_games(k, n)``, if
    given, hears of the games as they are played (from the workers through a Relay). Public: the
    seam at which a test sees how many processes the command asked for."""
    if jobs == 1:
        for k in todo:
            on_done(*play_and_write(config, rules, str(out), k, decision_timeout=decision_timeout,
                                    on_games=on_games))
        return
    parallel = Parallel(n_jobs=min(jobs, len(todo)) or 1, backend="loky", return_as="generator_unordered",
                        pre_dispatch="2*n_jobs")
    me = os.getpid()
    with Relay(on_games) if on_games is not None else nullcontext() as relay:
        send = relay.send if relay is not None else None
        for k, n, files in parallel(delayed(play_and_write)(config, rules, str(out), k, me, decision_timeout, send)
                                    for k in todo):
            on_done(k, n, files)


NO_WORKERS_ENV = "EVORA_DASK_NO_WORKERS_SECONDS"
NO_WORKERS_SECONDS = 120.0    # a cluster without a worker this long is given up (workers restarting take less)
_POLL_SECONDS = 1.0


def no_workers_limit() -> float:
    """Seconds a run waits on a Dask cluster that has no worker left: ``EVORA_DASK_NO_WORKERS_SECONDS``
    if set, else ``NO_WORKERS_SECONDS``."""
    value = os.environ.get(NO_WORKERS_ENV)
    if not value:
        return NO_WORKERS_SECONDS
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds >= 0):
        raise RunError(f"{NO_WORKERS_ENV}={value!r} is not a number of seconds (0 or more)")
    return seconds


def _run_dask(config, rules, out, todo, client, on_done, decision_timeout=None):
    """Chunks are played on the cluster and their tables written here, so workers need no
    shared file system; at most 2 chunks per worker thread are in flight at once. A cluster
    whose every worker is gone for ``no_workers_limit()`` seconds ends the run with
    :class:`RunFailed` (the chunks written so far are kept, and the same command resumes):
    waiting on it would wait forever, whether for a chunk to finish or for a finished one's
    tables to arrive (:func:`_fetch`). A slow chunk on a live worker is waited for."""
    limit = no_workers_limit()
    # keys unique to this run: two runs on one cluster (another seed, the same rules) must never
    # share a task result
    token = uuid.uuid4().hex
    window = max(2, 2 * sum(client.nthreads().values()))
    pending = list(todo)
    chunk_of = {}
    finished = queue.Queue()

    def submit(k):
        fut = client.submit(play_chunk, config, rules, k, decision_timeout, key=f"evora-chunk-{k}-{token}",
                            pure=False)
        chunk_of[fut.key] = (k, fut)
        fut.add_done_callback(finished.put)         # called from the client's thread, or at once

    for _ in range(min(window, len(pending))):
        submit(pending.pop(0))
    alone = _Alone(client, limit)
    poll = min(_POLL_SECONDS, max(limit, 0.01))

    def give_up(fetching=()):
        client.cancel([f for _, f in chunk_of.values()] + list(fetching))
        left = len(chunk_of) + len(pending) + len(fetching)
        raise RunFailed(f"the Dask cluster has had no workers for {limit:g} s with {left:,} chunks still to "
                        f"play; the finished chunks are kept in {out}: start workers and run the same command "
                        "again to play only the missing ones") from None

    while chunk_of:
        try:
            fut = finished.get(timeout=poll)
        except queue.Empty:
            if alone.too_long():
                give_up()
            continue
        k, _ = chunk_of.pop(fut.key)
        try:
            tables = _fetch(fut, alone, poll, give_up)
        except CancelledError:               # the cluster dropped the chunk (never this run's cancel): again
            pending.insert(0, k)
        else:
            fut.release()
            on_done(k, *write_chunk(out, k, tables))
            del tables
        if pending:
            submit(pending.pop(0))


class _Alone:
    """How long a Dask cluster has had no worker: :func:`_run_dask` gives up at ``limit`` seconds."""

    def __init__(self, client, limit: float):
        self.client, self.limit, self.since = client, limit, None

    def too_long(self) -> bool:
        if self.client.nthreads():
            self.since = None
            return False
        now = time.monotonic()
        self.since = self.since or now
        return now - self.since >= self.limit


def _fetch(fut, alone: _Alone, poll: float, give_up):
    """A finished chunk's tables. Its worker may die while they are fetched ("Couldn't gather 1
    keys"): the cluster then plays the chunk again on a worker that is left, so the fetch waits
    as the run does, and gives up (``give_up``) at the same limit when no worker is left."""
    while True:
        try:
            return fut.result(timeout=poll)
        except TimeoutError:
            if alone.too_long():
                give_up([fut])


def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def resolve_strategies(strategies, players: int) -> list:
    """One strategy object per seat from a spec list (``"greedy,balanced(column=2)"``) or a
    list of specs / strategy objects; a single one fills every seat."""
    if isinstance(strategies, str):
        return parse_strategies(strategies, players)
    return per_seat(resolve_each(list(strategies), as_strategy), players)


def default_rotation(seats) -> bool:
    """Seat rotation is on by default wherever the seats hold different strategies: without it a
    seat's win rate is also its strategy's, and a strong bot in seat 0 reads as a first-player
    advantage. Seats that all hold one strategy gain nothing from rotating (every rotation
    is the same game), so it stays off there."""
    return len({x.name for x in seats}) > 1


def rotation_for(strategies, players: int, seat_rotation: bool | None = None) -> bool:
    """``seat_rotation`` as given, or (None) the default for these strategies
    (:func:`default_rotation`)."""
    if seat_rotation is not None:
        return bool(seat_rotation)
    return default_rotation(resolve_strategies(strategies, players))


def make_config(players: int, games: int, strategy_spec, seed: int, seat_rotation: bool | None,
                chunk_size: int | None, rules: Rules, record_actions: bool = False) -> RunConfig:
    """The run's configuration, every argument checked (RunError / StrategyError)."""
    return _make_config(players, games, strategy_spec, seed, seat_rotation, chunk_size, rules, record_actions)[0]


def check_size(players: int, games: int, seat_rotation: bool, chunk_size: int | None) -> int:
    """The chunk size, once the run's size is within what a run folder holds (a bounded number of
    games and of chunks, a chunk that fits in memory): a huge count is refused at once, before
    anything is allocated. Without ``chunk_size``, 5,000 seeds, or more for very long runs."""
    rotations = players if seat_rotation else 1
    if games * rotations > MAX_GAMES:
        what = f" ({games:,} seeds x {rotations} rotations)" if rotations > 1 else ""
        raise RunError(f"--games {games * rotations:,}{what} is more than a run holds ({MAX_GAMES:,} "
                       "games); split it into several runs")
    if chunk_size is None:
        return min(games, max(DEFAULT_CHUNK, math.ceil(games / MAX_CHUNKS)))
    if chunk_size * rotations > MAX_CHUNK_GAMES:
        raise RunError(f"--chunk-size {chunk_size:,} makes chunks of more than {MAX_CHUNK_GAMES:,} games "
                       f"(seeds x rotations), which would not fit in memory; give a smaller --chunk-size")
    chunks = math.ceil(games / chunk_size)
    if chunks > MAX_CHUNKS:
        raise RunError(f"--games {games:,} in chunks of {chunk_size:,} makes {chunks:,} chunks, more than a "
                       f"run holds ({MAX_CHUNKS:,}); give a --chunk-size of at least "
                       f"{math.ceil(games / MAX_CHUNKS):,}")
    return int(chunk_size)


# chunks each process plays when no chunk size is asked: a run in one chunk is played by one
# process whatever --jobs says, and says nothing off a terminal until it ends (600 seeds of the
# search player at 4 players: two and a half hours on one core of two, silent)
CHUNKS_PER_JOB = 8


def jobs_chunk(seeds: int, jobs: int, most: int = DEFAULT_CHUNK) -> int:
    """Seeds in each chunk when ``jobs`` processes play ``seeds``: ``CHUNKS_PER_JOB`` chunks a
    process, so every one gets work and none waits long on another's last chunk, at most
    ``most``."""
    return max(1, min(most, math.ceil(seeds / (max(1, jobs) * CHUNKS_PER_JOB))))


def growing_chunk(outs, grid: int, target: int, most: int = DEFAULT_CHUNK) -> int | None:
    """The chunk of a run that grows in steps of ``grid`` seeds (the looks of ``--until-ci``, the
    rungs of a search): the chunk of the first of the folders ``outs`` that already holds a run (a
    run resumes in its own chunks), else the divisor of ``grid`` nearest ``target`` by ratio, at
    most ``most``, so every step is whole chunks; None if no divisor lies within a factor of 16
    below ``target`` (a prime ``grid``: thousands of one-seed chunks, each a file, would cost
    more than they save)."""
    for out in outs:
        kept = kept_chunk(out)
        if kept is not None:
            return kept
    divisors = set()
    for d in range(1, math.isqrt(grid) + 1):
        if grid % d == 0:
            divisors.update((d, grid // d))
    fitting = [d for d in divisors if target / 16 <= d <= most]
    return min(fitting, key=lambda d: (abs(math.log(d / target)), -d)) if fitting else None


def kept_chunk(out) -> int | None:
    """The chunk size of the run already in folder ``out`` (None: no run there yet). A run
    resumed with other ``--jobs`` keeps its chunks, so it resumes instead of clashing."""
    folder = Path(out)
    if not (folder / MANIFEST).is_file():
        return None
    return read_manifest(folder)["config"]["chunk_size"]      # checked by read_manifest


def chunk_for(out, config: RunConfig, jobs: int) -> RunConfig:
    """``config`` (made without a chunk size) with the chunks a run into ``out`` by ``jobs``
    processes plays: the run's own if ``out`` holds one, else :func:`jobs_chunk`'s. How a run
    is chunked changes none of its games."""
    kept = kept_chunk(out)
    return replace(config, chunk_size=kept if kept is not None else jobs_chunk(config.games, jobs, config.chunk_size))


MAX_JOBS = 1024




def check_jobs(jobs) -> int:
    """The number of processes ``--jobs`` asks for (-1: every core), checked before anything runs
    and capped at the cores: each process holds a compiled engine and a chunk's tables (a few
    hundred MB), so more processes than cores only add memory (1024 of them: about 264 GB),
    never speed."""
    if not _is_int(jobs) or not (jobs == -1 or 1 <= jobs <= MAX_JOBS):
        raise RunError(f"--jobs must be -1 (every core) or a number of processes from 1 to {MAX_JOBS}, "
                       f"got {jobs!r}")
    return cores() if jobs == -1 else min(int(jobs), cores())


def check_strategies(config: RunConfig, rules: Rules, decision_timeout: float | None = None) -> None:
    """Custom Python strategies are instantiated and play the run's first game before anything is
    written, so one that fails in ``__init__``, raises or returns an illegal action is refused
    without leaving a run folder behind."""
    seats = config.seat_strategies(0)
    if any(is_custom(x) for x in seats):
        play_batch(rules, config.players, game_seeds(config.seed, 0, 1), seats,
                   decision_timeout=decision_timeout)


def _make_config(players, games, strategy_spec, seed, seat_rotation, chunk_size, rules, record_actions=False):
    players = check_players(players)
    problem = player_count_problem(rules, players)
    if problem:
        raise RunError(problem)
    if not _is_int(games) or games < 1:
        raise RunError(f"--games must be a positive whole number, got {games!r}")
    if not _is_int(seed) or not 0 <= seed < 2**63:
        raise RunError(f"--seed must be a whole number from 0 to 2**63-1, got {seed!r}")
    if chunk_size is not None and (not _is_int(chunk_size) or chunk_size < 1):
        raise RunError(f"--chunk-size must be a positive whole number, got {chunk_size!r}")
    games, seed = int(games), int(seed)
    seats = resolve_strategies(strategy_spec, players)
    if seat_rotation is None:
        seat_rotation = default_rotation(seats)
    chunk = check_size(players, games, seat_rotation, chunk_size)
    config = RunConfig(players, games, tuple(x.name for x in seats),
                       tuple(json.dumps(resolved(x), sort_keys=True) for x in seats), seed,
                       bool(seat_rotation), chunk, rules.hash, bool(record_actions))
    return config, seats


@dataclass(frozen=True)
class Execution:
    """How a run is played out, apart from what it plays: the same games come out whatever
    these say (game seeds depend only on the run seed and the game's index), so they travel
    together and are not part of what a run is. ``jobs``: local processes (-1: one per core);
    ``backend``: ``"loky"`` (this machine) or ``"dask"`` (a cluster at ``scheduler``, waited
    for ``scheduler_timeout``); ``chunk_size``: seeds per chunk file (None: the run's own when its folder holds one, else
    several chunks a process, :func:`jobs_chunk`);
    ``decision_timeout``: seconds a custom strategy may take for one decision (default 60);
    ``quiet``: no progress bar; ``command``: the command line the manifest records;
    ``notice``: called with a line to show the user (damaged chunks played again; default:
    stderr); ``progress``: an object whose ``update(n)`` is told of the games as they are
    played (several runs sharing one bar: :func:`evora_sim.experiments.arms.play_arms`;
    default: this run's own bar or lines, :mod:`evora_sim.progress`, none when ``quiet``)."""

    jobs: int = 1
    backend: str = "loky"
    scheduler: str | None = None
    scheduler_timeout: str | float = "10s"
    chunk_size: int | None = None
    decision_timeout: float | None = None
    quiet: bool = True
    command: str = ""
    notice: object = None
    progress: object = None


def simulate(players: int, games: int, strategies, seed: int = 1, out: str | Path = "runs/run",
             seat_rotation: bool | None = None, rules: Rules | str | Path | None = None, extend: bool = False,
             record_actions: bool = False, compact: bool | None = None,
             execution: Execution = Execution()) -> RunResult:
    """Run (or finish) an experiment into ``out`` and return its tables. ``strategies``: a spec
    list (``"greedy,random"``, ``"balanced(column=2)"``, ``"mine.toml:aggressive"``,
    ``"bots.py:Cautious"``) or a list of specs / strategy objects, one per seat or one for all.
    ``games``: the seeds to play; with seat rotation each is played once under every rotation
    (``players`` games per seed). ``seat_rotation``: None (the default) rotates whenever the
    seats hold different strategies (:func:`default_rotation`); True or False forces it.
    ``extend``: an existing run of the same games may be grown to ``games`` seeds.
    ``record_actions``: the games table also holds each game's actions (column ``actions``), so
    its positions can be replayed (``evora train`` learns from them).
    ``compact``: pack the finished chunks into parts at the end (:mod:`evora_sim.compact`); None
    (the default) does so for a finished run whose chunk files hold ``AUTO_COMPACT_GAMES`` games.
    ``execution``: how the games are played out (:class:`Execution`: jobs, backend, chunk size,
    progress, ...), which changes none of them."""
    jobs, backend, scheduler = execution.jobs, execution.backend, execution.scheduler
    chunk_size, quiet, progress = execution.chunk_size, execution.quiet, execution.progress
    decision_timeout, notice = execution.decision_timeout, execution.notice
    if not isinstance(rules, Rules):
        rules = load_rules(rules)
    config, seats = _make_config(players, games, strategies, seed, seat_rotation, chunk_size, rules,
                                 record_actions)
    if backend not in ("loky", "dask"):
        raise RunError(f"--backend must be loky or dask, got {backend!r}")
    if backend == "dask" and not scheduler:
        raise RunError("--backend dask needs --scheduler ADDRESS (for example tcp://HOST:8786)")
    if backend == "dask":
        no_workers_limit()                   # a bad setting is refused before anything is written
    jobs = check_jobs(jobs)
    out = Path(out)
    if chunk_size is None:
        config = chunk_for(out, config, jobs)
    check_folder(out, config, extend)
    check_strategies(config, rules, decision_timeout)

    info = {x.name: describe(x) for x in seats}
    if notice is None:
        def notice(line):
            print(f"evora: {line}", file=sys.stderr)
    client = connect_scheduler(scheduler, execution.scheduler_timeout) if backend == "dask" else None
    try:
        with run_folder(out, config, rules, execution.command, info, extend=extend, notice=notice) as manifest:
            todo = sorted(int(k) for k, status in manifest["chunks"].items() if status != "done")
            total = config.games * config.rotations
            done_games = total - sum(
                (config.chunk_range(k)[1] - config.chunk_range(k)[0]) * config.rotations for k in todo)
            if todo and client is None:
                # the compile, if the cache lacks it, is said and done here, before the bar starts
                ensure_compiled(None if quiet and progress is None else notice)
            bar = progress if progress is not None else progress_bar(total, done_games, quiet)
            counted = Chunks(bar)

            def on_done(k, n, files):
                record_done(out, manifest, k, files)
                counted.chunk(k, n)

            try:
                if client is not None:
                    _run_dask(config, rules, out, todo, client, on_done, decision_timeout)
                else:
                    live = progress is not None or not quiet
                    run_local(config, rules, out, todo, jobs, on_done, decision_timeout,
                              counted.games if live else None)
            except OSError as exc:
                raise RunFailed(f"the run stopped: {exc}; the finished chunks are kept in {out}: run the "
                                "same command again to play only the missing ones") from exc
            finally:
                if progress is None:
                    bar.close()
    finally:
        if client is not None:
            client.close()

    finished = all(v == "done" for v in manifest["chunks"].values())
    if compact or (compact is None and finished and loose_games(manifest) >= AUTO_COMPACT_GAMES):
        pack(out)
        return open_run(out)
    return RunResult(out, manifest)
