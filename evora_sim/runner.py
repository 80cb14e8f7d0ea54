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
import shutil
import sys
import time
import uuid
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


class RunFailed(RunError):
    """A run that stopped part-way (a full disk, a lost cluster): finished chunks are kept."""


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
        from strategies.registry import from_resolved

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
                "chunk_size": self.chunk_size, "rules_hash": self.rules_hash}


def play_chunk(config: RunConfig, rules: Rules, k: int) -> dict[str, pd.DataFrame]:
    """Play chunk ``k`` (every rotation of its seeds) and return its four tables."""
    start, stop = config.chunk_range(k)
    seeds = game_seeds(config.seed, start, stop)
    parts = []
    for r in range(config.rotations):
        res = play_batch(rules, config.players, seeds, config.seat_strategies(r))
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
    try:
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


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


def _differences(old: dict, new: dict, prefix: str = "") -> str:
    """``key: old -> new`` for every differing key; nested tables (the strategies' weights) are
    compared key by key, so the message names the weight that changed."""
    keys = sorted(set(old) | set(new))
    diffs = []
    for k in keys:
        a, b = old.get(k), new.get(k)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            diffs.append(_differences(a, b, f"{prefix}{k}."))
        else:
            diffs.append(f"{prefix}{k}: {a!r} -> {b!r}")
    return "; ".join(diffs)


def _extend(out: Path, manifest: dict, config: RunConfig) -> bool:
    """Grow a run to ``config.games`` seeds when that is the only difference and every chunk
    keeps its games (the old size is a whole number of chunks): the new chunks are added as
    missing. Used by ``--until-ci``, which adds games look by look."""
    old = manifest["config"]
    new = config.as_dict()
    if {k: v for k, v in old.items() if k != "games"} != {k: v for k, v in new.items() if k != "games"}:
        return False
    if new["games"] < old["games"] or old["games"] % config.chunk_size:
        return False
    old_chunks = manifest["chunks"]
    manifest["config"] = new
    manifest["chunks"] = {str(k): old_chunks.get(str(k), "missing") for k in range(config.n_chunks)}
    _write_json_atomic(Path(out) / MANIFEST, manifest)
    return True


def prepare_folder(out: Path, config: RunConfig, rules: Rules, command: str, strategy_info: dict,
                   extend: bool = False) -> dict:
    """Create the run folder, or check that an existing one holds this same run (``extend``:
    or the same run with fewer games, which is grown to this one)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise RunError(f"--out {out} exists and is not a folder")
    if out.is_dir() and (out / MANIFEST).exists():
        manifest = read_manifest(out)
        diff = _differences(manifest["config"], config.as_dict())
        if diff and extend and _extend(out, manifest, config):
            diff = ""
        if diff:
            raise RunError(f"--out {out} holds a different run ({diff}); choose another --out")
        return manifest
    if out.is_dir() and any(not _is_temporary(p) for p in out.iterdir()):
        raise RunError(f"--out {out} is not empty and is not a run folder; choose another --out")
    full = out.absolute()
    probe = next((p for p in (full, *full.parents) if p.exists()), None)
    if probe is None or not probe.is_dir():
        raise RunError(f"--out {out}: {probe} is not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise RunError(f"--out {out}: cannot write in {probe}")
    manifest = {
        "format": FORMAT, "version": 1, "package_version": __version__,
        "command": command, "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": config.as_dict(), "strategies": strategy_info,
        "rules_hash": rules.hash, "rules": rules.data,
        "rules_source": {"file": getattr(rules, "source", None),
                         "set": list(getattr(rules, "overrides", ()))},
        "python": sys.version.split()[0], "numpy": np.__version__, "pandas": pd.__version__,
        "chunks": {str(k): "missing" for k in range(config.n_chunks)},
    }
    # the first folder this run creates: removed again if the manifest cannot be written
    full = out.absolute()
    created = next((p for p in reversed((full, *full.parents)) if not p.exists()), None)
    try:
        out.mkdir(parents=True, exist_ok=True)
        _write_json_atomic(out / MANIFEST, manifest)
    except OSError as exc:
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        raise RunError(f"--out {out}: cannot write: {exc.strerror or exc}") from None
    return manifest


def _is_temporary(path: Path) -> bool:
    """A leftover of an interrupted write (``.NAME.PID.tmp``): never a chunk, never content."""
    return path.is_file() and path.name.startswith(".") and path.name.endswith(".tmp")


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

    @property
    def n_games(self) -> int:
        """Games in the finished chunks, from the Parquet footers (no table is read)."""
        import pyarrow.parquet as pq

        return sum(pq.ParquetFile(chunk_file(self.out, "games", k)).metadata.num_rows
                   for k in self.done_chunks())

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
class _NoBar:
    def update(self, n):
        pass

    def close(self):
        pass


def _progress(total_games: int, done_games: int, quiet: bool):
    """tqdm's bar (games done, games/s, time left) on a terminal; nothing if quiet or piped."""
    if quiet or not sys.stderr.isatty():
        return _NoBar()
    try:
        from tqdm import tqdm
    except ImportError:                      # tqdm is optional: no bar without it
        return _NoBar()
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


def connect_scheduler(address: str, timeout: str | float = "10s"):
    """A dask.distributed client, or a RunError naming the address that did not answer."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise RunError("--backend dask needs dask.distributed: pip install 'dask[distributed]'") from None
    try:
        return Client(address, timeout=timeout, set_as_default=False)
    except Exception as exc:  # OSError / TimeoutError (no answer), ValueError (bad address), ...
        raise RunError(f"cannot reach the Dask scheduler at {address}: {exc or type(exc).__name__}") from None


def _run_dask(config, rules, out, todo, client, on_done):
    """Chunks are played on the cluster and their tables written here, so workers need no
    shared file system; at most 2 chunks per worker thread are in flight at once."""
    from dask.distributed import as_completed

    # keys unique to this run: two runs on one cluster (another seed, the same rules) must never
    # share a task result
    token = uuid.uuid4().hex
    window = max(2, 2 * sum(client.nthreads().values()))
    pending = list(todo)
    chunk_of = {}
    ac = as_completed(loop=client.loop)

    def submit(k):
        fut = client.submit(play_chunk, config, rules, k, key=f"evora-chunk-{k}-{token}", pure=False)
        chunk_of[fut.key] = k
        ac.add(fut)

    for _ in range(min(window, len(pending))):
        submit(pending.pop(0))
    for fut in ac:
        k = chunk_of.pop(fut.key)
        tables = fut.result()
        fut.release()
        on_done(k, write_chunk(out, k, tables))
        del tables
        if pending:
            submit(pending.pop(0))


def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def resolve_strategies(strategies, players: int) -> list:
    """One strategy object per seat from a spec list (``"greedy,balanced(column=2)"``) or a
    list of specs / strategy objects; a single one fills every seat."""
    from strategies.registry import as_strategy
    from strategies.registry import parse_strategies, per_seat, resolve_each

    if isinstance(strategies, str):
        return parse_strategies(strategies, players)
    return per_seat(resolve_each(list(strategies), as_strategy), players)


def make_config(players: int, games: int, strategy_spec, seed: int, seat_rotation: bool,
                chunk_size: int | None, rules: Rules) -> RunConfig:
    """The run's configuration, every argument checked (RunError / StrategyError)."""
    return _make_config(players, games, strategy_spec, seed, seat_rotation, chunk_size, rules)[0]


def _make_config(players, games, strategy_spec, seed, seat_rotation, chunk_size, rules):
    from strategies.registry import resolved

    from .api import check_players

    players = check_players(players)
    if not _is_int(games) or games < 1:
        raise RunError(f"--games must be a positive whole number, got {games!r}")
    if not _is_int(seed) or not 0 <= seed < 2**63:
        raise RunError(f"--seed must be a whole number from 0 to 2**63-1, got {seed!r}")
    if chunk_size is not None and (not _is_int(chunk_size) or chunk_size < 1):
        raise RunError(f"--chunk-size must be a positive whole number, got {chunk_size!r}")
    games, seed = int(games), int(seed)
    chunk = int(chunk_size) if chunk_size is not None else min(DEFAULT_CHUNK, games)
    lo, hi = rules.data["players"]["min"], rules.data["players"]["max"]
    if not lo <= players <= hi:
        raise RunError(f"these rules allow {lo} to {hi} players, got {players}")
    seats = resolve_strategies(strategy_spec, players)
    config = RunConfig(players, games, tuple(x.name for x in seats),
                       tuple(json.dumps(resolved(x), sort_keys=True) for x in seats), seed,
                       bool(seat_rotation), chunk, rules.hash)
    return config, seats


def simulate(players: int, games: int, strategies, seed: int = 1, out: str | Path = "runs/run",
             jobs: int = 1, seat_rotation: bool = False, rules: Rules | str | Path | None = None,
             backend: str = "loky", scheduler: str | None = None, chunk_size: int | None = None,
             quiet: bool = True, command: str = "",
             scheduler_timeout: str | float = "10s", extend: bool = False) -> RunResult:
    """Run (or finish) an experiment into ``out`` and return its tables. ``strategies``: a spec
    list (``"greedy,random"``, ``"balanced(column=2)"``, ``"mine.toml:aggressive"``,
    ``"bots.py:Cautious"``) or a list of specs / strategy objects, one per seat or one for all."""
    if not isinstance(rules, Rules):
        rules = load_rules(rules)
    config, seats = _make_config(players, games, strategies, seed, seat_rotation, chunk_size, rules)
    if backend not in ("loky", "dask"):
        raise RunError(f"--backend must be loky or dask, got {backend!r}")
    if backend == "dask" and not scheduler:
        raise RunError("--backend dask needs --scheduler ADDRESS (for example tcp://HOST:8786)")
    if not _is_int(jobs) or jobs == 0 or jobs < -1:
        raise RunError(f"--jobs must be a positive number of processes or -1 for all cores, got {jobs!r}")
    jobs = (os.cpu_count() or 1) if jobs == -1 else int(jobs)
    out = Path(out)
    from strategies.registry import describe

    info = {x.name: describe(x) for x in seats}
    client = connect_scheduler(scheduler, scheduler_timeout) if backend == "dask" else None
    try:
        manifest = prepare_folder(out, config, rules, command, info, extend=extend)
    except BaseException:
        if client is not None:
            client.close()
        raise
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
    except OSError as exc:
        raise RunFailed(f"the run stopped: {exc}; the finished chunks are kept in {out}: run the "
                        "same command again to play only the missing ones") from exc
    finally:
        bar.close()
        if client is not None:
            client.close()
    return RunResult(out, manifest)
