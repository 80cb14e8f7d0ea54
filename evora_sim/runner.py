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
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import __version__
from .batch import play_batch
from .rules import Rules, load_rules
from .seeds import game_seeds
from .tables import TABLES, batch_tables, concat_tables

MANIFEST = "manifest.json"
FORMAT = "evora-sim run"
DEFAULT_CHUNK = 5_000


class RunError(ValueError):
    """A run that cannot start as asked (bad argument, clashing folder); nothing was written."""


@dataclass(frozen=True)
class RunConfig:
    """Everything that determines a run's results; a resumed run must match it exactly."""

    players: int
    games: int
    strategies: tuple[str, ...]
    strategy_ids: tuple[int, ...]
    seed: int
    seat_rotation: bool
    chunk_size: int
    rules_hash: str

    @property
    def rotations(self) -> int:
        return self.players if self.seat_rotation else 1

    @property
    def n_chunks(self) -> int:
        return math.ceil(self.games / self.chunk_size)

    def chunk_range(self, k: int) -> tuple[int, int]:
        return k * self.chunk_size, min(self.games, (k + 1) * self.chunk_size)

    def seat_ids(self, rotation: int) -> list[int]:
        """Rotation r seats strategy i at seat (i + r) mod n (common random numbers)."""
        n = self.players
        return [self.strategy_ids[(seat - rotation) % n] for seat in range(n)]

    def seat_names(self, rotation: int) -> list[str]:
        n = self.players
        return [self.strategies[(seat - rotation) % n] for seat in range(n)]

    def as_dict(self) -> dict:
        return {"players": self.players, "games": self.games, "strategies": list(self.strategies),
                "seed": self.seed, "seat_rotation": self.seat_rotation,
                "chunk_size": self.chunk_size, "rules_hash": self.rules_hash}


def play_chunk(config: RunConfig, rules: Rules, k: int) -> dict[str, pd.DataFrame]:
    """Play chunk ``k`` (every rotation of its seeds) and return its four tables."""
    start, stop = config.chunk_range(k)
    seeds = game_seeds(config.seed, start, stop)
    parts = []
    for r in range(config.rotations):
        res = play_batch(rules, config.players, seeds, config.seat_ids(r))
        game_ids = np.arange(start, stop, dtype=np.int64) * config.rotations + r
        parts.append(batch_tables(res, game_ids, r, config.seat_names(r)))
    return concat_tables(parts)


def chunk_file(out: Path, table: str, k: int) -> Path:
    return out / table / f"chunk-{k:06d}.parquet"


def write_chunk(out: Path, k: int, tables: dict[str, pd.DataFrame]) -> int:
    """Write the chunk's tables, each atomically (temporary name, then rename)."""
    for name in TABLES:
        final = chunk_file(out, name, k)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
        try:
            tables[name].to_parquet(tmp, index=False)
            os.replace(tmp, final)
        finally:
            if tmp.exists():
                tmp.unlink()
    return len(tables["games"])


def play_and_write(config: RunConfig, rules: Rules, out: str, k: int) -> tuple[int, int]:
    """Worker task for the local backend: play chunk ``k``, write it, report (k, games)."""
    return k, write_chunk(Path(out), k, play_chunk(config, rules, k))


# ---------------------------------------------------------------------------------------------
# manifest
# ---------------------------------------------------------------------------------------------
def _write_json_atomic(path: Path, data: dict) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def read_manifest(out: Path) -> dict:
    path = Path(out) / MANIFEST
    if not path.is_file():
        raise RunError(f"{out} is not a run folder (no {MANIFEST})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RunError(f"{path} cannot be read: {exc}") from None
    if data.get("format") != FORMAT:
        raise RunError(f"{path} is not an evora-sim run manifest")
    return data


def _differences(old: dict, new: dict) -> str:
    keys = sorted(set(old) | set(new))
    diffs = [f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in keys if old.get(k) != new.get(k)]
    return "; ".join(diffs)


def prepare_folder(out: Path, config: RunConfig, rules: Rules, command: str, strategy_info: dict) -> dict:
    """Create the run folder, or check that an existing one holds this same run."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise RunError(f"--out {out} exists and is not a folder")
    if out.is_dir() and (out / MANIFEST).exists():
        manifest = read_manifest(out)
        diff = _differences(manifest["config"], config.as_dict())
        if diff:
            raise RunError(f"--out {out} holds a different run ({diff}); choose another --out")
        return manifest
    if out.is_dir() and any(out.iterdir()):
        raise RunError(f"--out {out} is not empty and is not a run folder; choose another --out")
    parent = out.parent if out.parent != Path("") else Path(".")
    probe = parent if parent.exists() else next((p for p in parent.parents if p.exists()), Path("."))
    if not os.access(probe, os.W_OK):
        raise RunError(f"--out {out}: cannot write in {probe}")
    manifest = {
        "format": FORMAT, "version": 1, "package_version": __version__,
        "command": command, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": config.as_dict(), "strategies": strategy_info,
        "rules_hash": rules.hash, "rules": rules.data,
        "python": sys.version.split()[0], "numpy": np.__version__, "pandas": pd.__version__,
        "chunks": {str(k): "missing" for k in range(config.n_chunks)},
    }
    out.mkdir(parents=True, exist_ok=True)
    _write_json_atomic(out / MANIFEST, manifest)
    return manifest


def mark_done(out: Path, manifest: dict, k: int) -> None:
    manifest["chunks"][str(k)] = "done"
    _write_json_atomic(Path(out) / MANIFEST, manifest)


def missing_chunks(manifest: dict, out: Path) -> list[int]:
    """Chunks not marked done, or marked done but with a table file gone."""
    todo = []
    for key, status in manifest["chunks"].items():
        k = int(key)
        if status != "done" or not all(chunk_file(out, t, k).is_file() for t in TABLES):
            todo.append(k)
    return sorted(todo)


# ---------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------
@dataclass
class RunResult:
    """A run folder's tables, read on first use (only chunks the manifest marks done)."""

    out: Path
    manifest: dict
    _cache: dict = field(default_factory=dict, repr=False)

    def done_chunks(self) -> list[int]:
        return [int(k) for k, v in self.manifest["chunks"].items() if v == "done"]

    def table(self, name: str, columns: list[str] | None = None) -> pd.DataFrame:
        key = (name, tuple(columns) if columns else None)
        if key not in self._cache:
            files = [chunk_file(self.out, name, k) for k in sorted(self.done_chunks())]
            frames = [pd.read_parquet(f, columns=columns) for f in files]
            self._cache[key] = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        return self._cache[key]

    games = property(lambda self: self.table("games"))
    seats = property(lambda self: self.table("seats"))
    cards = property(lambda self: self.table("cards"))
    spaces = property(lambda self: self.table("spaces"))


def open_run(out: str | Path) -> RunResult:
    out = Path(out)
    return RunResult(out, read_manifest(out))


# ---------------------------------------------------------------------------------------------
# the run
# ---------------------------------------------------------------------------------------------
def _progress(total_games: int, done_games: int, quiet: bool):
    from tqdm import tqdm

    return tqdm(total=total_games, initial=done_games, unit="game", unit_scale=True,
                disable=quiet or not sys.stderr.isatty(), dynamic_ncols=True, smoothing=0.1)


def _run_local(config, rules, out, todo, jobs, on_done):
    from joblib import Parallel, delayed

    if jobs == 1:
        for k in todo:
            on_done(*play_and_write(config, rules, str(out), k))
        return
    parallel = Parallel(n_jobs=jobs, backend="loky", return_as="generator_unordered",
                        pre_dispatch="2*n_jobs")
    for k, n in parallel(delayed(play_and_write)(config, rules, str(out), k) for k in todo):
        on_done(k, n)


def connect_scheduler(address: str):
    """A dask.distributed client, or a RunError naming the address that did not answer."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise RunError("--backend dask needs dask.distributed: pip install 'dask[distributed]'") from None
    try:
        return Client(address, timeout="10s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise RunError(f"cannot reach the Dask scheduler at {address}: {exc}") from None


def _run_dask(config, rules, out, todo, client, on_done):
    """Chunks are played on the cluster and their tables written here, so workers need no
    shared file system; at most 2 chunks per worker thread are in flight at once."""
    from dask.distributed import as_completed

    window = max(2, 2 * sum(client.nthreads().values()))
    pending = list(todo)
    ac = as_completed()
    for _ in range(min(window, len(pending))):
        k = pending.pop(0)
        ac.add(client.submit(play_chunk, config, rules, k, key=f"evora-chunk-{k}-{config.rules_hash}", pure=False))
    for fut in ac:
        k = int(fut.key.split("-")[2])
        tables = fut.result()
        fut.release()
        on_done(k, write_chunk(out, k, tables))
        if pending:
            k2 = pending.pop(0)
            ac.add(client.submit(play_chunk, config, rules, k2, key=f"evora-chunk-{k2}-{config.rules_hash}", pure=False))


def make_config(players: int, games: int, strategy_spec: str, seed: int, seat_rotation: bool,
                chunk_size: int | None, rules: Rules) -> RunConfig:
    from strategies.registry import parse_strategies, strategy_name

    from .api import check_players

    players = check_players(players)
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise RunError(f"--games must be a positive whole number, got {games!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise RunError(f"--seed must be a whole number from 0 to 2**63-1, got {seed!r}")
    chunk = chunk_size or min(DEFAULT_CHUNK, games)
    if chunk < 1:
        raise RunError(f"--chunk-size must be a positive whole number, got {chunk_size!r}")
    lo, hi = rules.data["players"]["min"], rules.data["players"]["max"]
    if not lo <= players <= hi:
        raise RunError(f"these rules allow {lo} to {hi} players, got {players}")
    ids = parse_strategies(strategy_spec, players)
    return RunConfig(players, games, tuple(strategy_name(i) for i in ids), tuple(ids), seed,
                     bool(seat_rotation), chunk, rules.hash)


def simulate(players: int, games: int, strategies: str, seed: int = 1, out: str | Path = "runs/run",
             jobs: int = 1, seat_rotation: bool = False, rules: Rules | str | Path | None = None,
             backend: str = "loky", scheduler: str | None = None, chunk_size: int | None = None,
             quiet: bool = True, command: str = "") -> RunResult:
    """Run (or finish) an experiment into ``out`` and return its tables."""
    if not isinstance(rules, Rules):
        rules = load_rules(rules)
    config = make_config(players, games, strategies, seed, seat_rotation, chunk_size, rules)
    if backend not in ("loky", "dask"):
        raise RunError(f"--backend must be loky or dask, got {backend!r}")
    if backend == "dask" and not scheduler:
        raise RunError("--backend dask needs --scheduler ADDRESS (for example tcp://HOST:8786)")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs == 0 or jobs < -1:
        raise RunError(f"--jobs must be a positive number of processes or -1 for all cores, got {jobs!r}")
    jobs = os.cpu_count() or 1 if jobs == -1 else jobs
    client = connect_scheduler(scheduler) if backend == "dask" else None
    out = Path(out)
    info = {name: {"id": sid} for name, sid in zip(config.strategies, config.strategy_ids)}
    manifest = prepare_folder(out, config, rules, command, info)
    todo = missing_chunks(manifest, out)
    total = config.games * config.rotations
    done_games = total - sum(
        (config.chunk_range(k)[1] - config.chunk_range(k)[0]) * config.rotations for k in todo)
    bar = _progress(total, done_games, quiet)

    def on_done(k, n):
        mark_done(out, manifest, k)
        bar.update(n)

    try:
        if client is not None:
            _run_dask(config, rules, out, todo, client, on_done)
        else:
            _run_local(config, rules, out, todo, jobs, on_done)
    finally:
        bar.close()
        if client is not None:
            client.close()
    return RunResult(out, manifest)
