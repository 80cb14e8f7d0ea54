"""Where a run's finished games are on disk, and reading them back block by block.

A finished chunk is in its own four files (``TABLE/chunk-K.parquet``) or, once the run is
compacted (:mod:`evora_sim.compact`), in a *part*: one larger file per table whose row groups each
hold whole, consecutive chunks. Either way the unit read at once is a *block* (a chunk, or a row
group of a part): every block holds whole games, the same games in every table, so a reader can
fold one block into its totals and drop it. A *piece* is the unit of checking and of work: a
chunk's files or a part's files, checked against the sizes and SHA-256 the manifest recorded
before any of its blocks is read (:func:`verify`), by whoever reads them - this process, or a
cluster worker that reads the run folder where it lies.

Every block read is checked as a chunk always was: each game id inside the block's range, each
game once in ``games`` and ``players`` times in ``seats``, and each game's seed the one the run
seed gives it (:func:`identity_problem`). A file that is missing, damaged, truncated or copied
from elsewhere is refused with one line naming the chunk and the file. A checksum only says the
bytes are the ones recorded, and whoever edits a folder can record new ones: so opening a run to
resume or compact it checks the content too (:func:`misplaced`), and a chunk that holds other
games than its own is played again, never kept. What a block holds is checked too: a seat, a
rank or a name that no game of the run can produce (:func:`value_problem`) is refused like a
block of other games.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from . import layout as L
from . import metrics
from .manifest import TABLES, RunError, chunk_file, chunk_ids, chunk_parts, file_problem, part_file, read_manifest
from .ranking import DECIDED_BY
from .seeds import game_seeds

REPLAY = "run the run's command again to replay it"


@dataclass(frozen=True)
class Block:
    """Whole consecutive chunks read at once: a chunk file, or row group ``row_group`` of a part."""

    chunks: tuple[int, ...]
    lo: int                          # game ids lo (inclusive) .. hi (exclusive)
    hi: int
    part: int | None = None
    row_group: int = 0

    def file(self, out: Path, table: str) -> Path:
        return chunk_file(out, table, self.chunks[0]) if self.part is None else part_file(out, table, self.part)

    def name(self, out: Path, table: str) -> str:
        f = self.file(out, table)
        ks = f"chunk {self.chunks[0]}" if len(self.chunks) == 1 else f"chunks {self.chunks[0]}-{self.chunks[-1]}"
        where = f"{table}/{f.name}" + ("" if self.part is None else f", row group {self.row_group}")
        return f"run {out}: {ks} ({where})"


@dataclass(frozen=True)
class Piece:
    """A chunk's files or a part's files, and the blocks they hold."""

    blocks: tuple[Block, ...]
    records: dict | None             # table -> [size, sha256] as written (None: a version-1 chunk)
    part: int | None = None

    @property
    def chunks(self) -> list[int]:
        return [k for b in self.blocks for k in b.chunks]

    @property
    def label(self) -> str:
        ks = self.chunks
        return f"chunk {ks[0]}" if self.part is None else f"part {self.part} (chunks {ks[0]}-{ks[-1]})"


def _part_piece(cfg: dict, p: int, part: dict) -> Piece:
    blocks, i = [], 0
    for g, size in enumerate(part["row_groups"]):
        ks = tuple(part["chunks"][i:i + size])
        i += size
        blocks.append(Block(ks, chunk_ids(cfg, ks[0])[0], chunk_ids(cfg, ks[-1])[1], int(p), g))
    return Piece(tuple(blocks), part["files"], int(p))


def _chunk_piece(manifest: dict, k: int) -> Piece:
    return Piece((Block((k,), *chunk_ids(manifest["config"], k)),), manifest["chunk_files"].get(str(k)))


def pieces(out: Path, manifest: dict) -> list[Piece]:
    """The finished games of a run as pieces, in chunk order."""
    found = [_part_piece(manifest["config"], int(p), part) for p, part in manifest.get("parts", {}).items()]
    in_parts = chunk_parts(manifest)
    found += [_chunk_piece(manifest, int(key)) for key, status in manifest["chunks"].items()
              if status == "done" and int(key) not in in_parts]
    return sorted(found, key=lambda piece: piece.chunks[0])


def verify(out: Path, piece: Piece, tables=TABLES) -> None:
    """Refuse a piece whose files are not the bytes written (size and SHA-256), naming it."""
    if piece.records is None:
        return                       # a version-1 chunk: checked when read (its games counted)
    for table in tables:
        f = piece.blocks[0].file(out, table)
        problem = file_problem(f, f"{table}/{f.name}", piece.records[table])
        if problem:
            raise RunError(f"run {out}: {piece.label} is damaged ({problem}); {REPLAY}")


def identity_problem(data, config: dict, block: Block, table: str) -> str | None:
    """Why the rows ``data`` (a pyarrow Table of ``table`` with ``game_id``, and ``seed`` for
    ``games``) are not the games of ``block`` in this run, or None: each game id inside the
    block's range, each game once in ``games`` and ``players`` times in ``seats``, each game's
    seed the one the run seed gives it (game id = seed index x rotations + rotation)."""
    lo, hi = block.lo, block.hi
    ids = data["game_id"].to_numpy() if "game_id" in data.column_names else np.empty(0, dtype=np.int64)
    if len(ids) and (ids.min() < lo or ids.max() >= hi):
        return f"holds game ids outside its range {lo}..{hi - 1} (a file copied from elsewhere?)"
    want = {"games": 1, "seats": config["players"]}.get(table)
    if want is not None and not (len(ids) == want * (hi - lo)
                                 and (np.bincount(ids - lo, minlength=hi - lo) == want).all()):
        return (f"does not hold each of its {hi - lo:,} games exactly "
                f"{'once' if want == 1 else f'{want} times'} (duplicate or missing game ids)")
    if table == "games":
        rot = config["players"] if config["seat_rotation"] else 1
        first = lo // rot
        seeds = game_seeds(config["seed"], first, -(-hi // rot))
        if "seed" not in data.column_names or not (data["seed"].to_numpy() == seeds[ids // rot - first]).all():
            return (f"holds games of other seeds than run seed {config['seed']} gives them (the manifest or the "
                    "file was changed)")
    return None


def seat_ranges(n: int) -> dict:
    """(table, column) -> the smallest and largest value a game of ``n`` players can write there
    (``tables.batch_tables``: a seat 0..n-1, -1 where there is none; the recorded metrics'
    columns as they declare them, :class:`evora_sim.metrics.slots.Column`). Public: the one list
    of what reading checks, which a test holds every declared seat column against."""
    out = {("games", "n_players"): (n, n), ("games", "winner_seat"): (0, n - 1),
           ("seats", "seat"): (0, n - 1), ("seats", "rank"): (1, n),
           ("cards", "seat"): (0, n - 1), ("spaces", "seat"): (0, n - 1)}
    for table in ("games", "seats", "cards"):
        for c in metrics.columns(table):
            if c.seat:
                out[(table, c.name)] = (0 if c.seat == "seat" else -1, n - 1)
    return out


def _names() -> dict:
    """(table, column) -> the names a categorical column can hold."""
    return {("games", "decided_by"): DECIDED_BY, ("games", "end_trigger"): L.END_NAMES,
            ("cards", "card"): L.EFFECT_NAMES + L.ITILE_NAMES}


def value_problem(data, config: dict, table: str) -> str | None:
    """Why a column of ``data`` (a pyarrow Table of ``table``) holds a value no game of this run
    can produce (a seat outside 0..n-1, a name outside its list), or None. Checksums can be
    rewritten with the file, so what is read back is checked as well as where it came from: a
    value the game cannot produce would otherwise move games between causes without a word."""
    for (t, col), (lo, hi) in seat_ranges(int(config["players"])).items():
        if t != table or col not in data.column_names or not len(data):
            continue
        found = pc.min_max(data[col]).as_py()
        if data[col].null_count or found["min"] < lo or found["max"] > hi:
            bad = "a missing value" if data[col].null_count else (
                found["min"] if found["min"] < lo else found["max"])
            return (f"holds {col} = {bad}, which no game of {config['players']} players can produce "
                    f"({lo} to {hi}; the file was changed)")
    for (t, col), names in _names().items():
        if t != table or col not in data.column_names or not len(data):
            continue
        values = pc.unique(data[col]).to_pylist()
        odd = [v for v in values if v not in names]
        if odd:
            return f"holds {col} = {odd[0]!r}, not one of {', '.join(names)} (the file was changed)"
    return None


def _read(out: Path, config: dict, block: Block, table: str, columns):
    """(the block's rows of ``table``, None) or (None, why they cannot be trusted)."""
    f = block.file(out, table)
    need = ["game_id", "seed"] if table == "games" else ["game_id"]
    cols = None if columns is None else list(dict.fromkeys([*need, *columns]))
    try:
        if block.part is None:
            data = pq.read_table(f, columns=cols)
        else:
            data = pq.ParquetFile(f).read_row_group(block.row_group, columns=cols)
    except FileNotFoundError:
        return None, "is missing although the manifest marks it done"
    except Exception as exc:         # a truncated or foreign file: pyarrow raises several kinds
        return None, f"cannot be read as a run table ({type(exc).__name__})"
    problem = identity_problem(data, config, block, table) or value_problem(data, config, table)
    if problem:
        return None, problem
    if table == "games" and columns is not None and "seed" not in columns:
        data = data.drop_columns(["seed"])
    return data, None


def read_block(out: Path, config: dict, block: Block, table: str, columns=None):
    """Table ``table`` of ``block`` as a pyarrow Table (``columns`` and always ``game_id``), its
    games checked against the block's identity (:func:`identity_problem`)."""
    data, problem = _read(out, config, block, table, columns)
    if problem:
        raise RunError(f"{block.name(out, table)} {problem}; {REPLAY}")
    return data


def _checked_columns(f: Path, table: str) -> list[str]:
    """The columns of ``table`` whose values :func:`value_problem` checks that file ``f`` holds
    (a run of an older version may lack some); [] when its footer cannot be read (the read
    itself then says why)."""
    checked = {c for t, c in (*seat_ranges(2), *_names()) if t == table}
    try:
        return [c for c in pq.read_schema(f).names if c in checked]
    except Exception:                # missing or damaged: _read names it
        return []


def misplaced(out: Path, manifest: dict, skip=()) -> dict[int, str]:
    """Every finished chunk whose files hold other games than its own (:func:`identity_problem`,
    every table) or values no game can produce (:func:`value_problem`), with the reason; every
    chunk of such a part. Pieces holding a chunk of ``skip`` (already known damaged) are not read.
    Reads the game ids, the games' seeds and the checked columns only."""
    found = {}
    cfg = manifest["config"]
    skip = set(skip)
    for piece in pieces(out, manifest):
        if skip & set(piece.chunks):
            continue
        problem = next((f"{t}/{b.file(out, t).name} {why}" for b in piece.blocks for t in TABLES
                        if (why := _read(out, cfg, b, t, _checked_columns(b.file(out, t), t))[1])), None)
        if problem:
            found.update({k: problem for k in piece.chunks})
    return found


def find_block(manifest: dict, k: int) -> Block:
    """The block that holds finished chunk ``k``."""
    p = chunk_parts(manifest).get(int(k))
    if p is None:
        return _chunk_piece(manifest, int(k)).blocks[0]
    piece = _part_piece(manifest["config"], p, manifest["parts"][str(p)])
    return next(b for b in piece.blocks if int(k) in b.chunks)


def read_chunk(out: Path, manifest: dict, table: str, k: int, columns=None):
    """Table ``table`` of finished chunk ``k`` as a DataFrame (in a part: its rows of the block
    holding it), its game ids checked."""
    block = find_block(manifest, k)
    data = read_block(out, manifest["config"], block, table, columns)
    if len(block.chunks) > 1:
        lo, hi = chunk_ids(manifest["config"], k)
        ids = data["game_id"]
        data = data.filter(pc.and_(pc.greater_equal(ids, lo), pc.less(ids, hi)))
    df = data.to_pandas()
    return df if columns is None or "game_id" in columns else df.drop(columns="game_id")


def schema(out: Path, manifest: dict, table: str):
    """The Parquet schema of the run's ``table`` (from its first finished piece), or None."""
    found = pieces(out, manifest)
    return pq.read_schema(found[0].blocks[0].file(out, table)) if found else None


def n_games(out: Path, manifest: dict) -> int:
    """Games in the finished chunks (from the manifest's configuration: no file is read)."""
    cfg = manifest["config"]
    total = 0
    for key, status in manifest["chunks"].items():
        if status == "done":
            lo, hi = chunk_ids(cfg, int(key))
            total += hi - lo
    return total


def files(out: Path, manifest: dict, table: str) -> list[Path]:
    """Every file holding finished games of ``table`` (for a lazy reader: pyarrow.dataset)."""
    return [p.blocks[0].file(out, table) for p in pieces(out, manifest)]


__all__ = ["Block", "Piece", "pieces", "verify", "read_block", "read_chunk", "misplaced", "identity_problem",
           "value_problem",
           "schema", "n_games", "files", "TABLES"]


# ---------------------------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------------------------
class TableTooLarge(RunError):
    """A table too large to load as one DataFrame here: the message names the lazy forms."""


TABLE_LIMIT_ENV = "EVORA_TABLE_LIMIT_MB"


def table_limit() -> int:
    """Bytes a whole table may take as a DataFrame: ``EVORA_TABLE_LIMIT_MB`` if set, else a third
    of the memory available now (loading holds the pieces and the joined frame at once)."""
    value = os.environ.get(TABLE_LIMIT_ENV)
    if value:
        try:
            return int(float(value) * 2**20)
        except ValueError:
            raise RunError(f"{TABLE_LIMIT_ENV}={value!r} is not a number of megabytes") from None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            info = dict(line.split(":", 1) for line in fh)
        available = int(info["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return available // 3


def _frame_bytes(schema, columns) -> int:
    """Bytes per row of a DataFrame of ``columns`` read with ``schema`` (categories: 1 byte)."""
    total = 0
    for f in schema:
        if columns is not None and f.name not in columns:
            continue
        t = f.type
        if pa.types.is_dictionary(t):
            total += 1
        elif pa.types.is_list(t):               # recorded actions: about 700 of 2 bytes a game
            total += 2048
        else:
            total += t.bit_width // 8 if t.bit_width and t.bit_width >= 8 else 8
    return max(total, 1)


@dataclass
class RunResult:
    """A run folder's tables. ``run.seats`` (``games``, ``cards``, ``spaces``) is the whole table
    as a pandas DataFrame, read on first use, for runs whose table fits in memory; larger ones
    raise :class:`TableTooLarge` (one line) instead of running out of memory, and are read lazily:
    ``run.dataset("seats")`` is a ``pyarrow.dataset`` over the finished files (select columns and
    filter rows before loading, or hand it to DuckDB or Dask), ``run.iter_table("seats",
    columns)`` yields DataFrames block by block (a chunk, or a row group of a compacted part),
    each checked against the manifest. Only finished chunks are read."""

    out: Path
    manifest: dict
    _cache: dict = field(default_factory=dict, repr=False)

    def done_chunks(self) -> list[int]:
        return [int(k) for k, v in self.manifest["chunks"].items() if v == "done"]

    def iter_table(self, name: str, columns: list[str] | None = None):
        """Table ``name`` as DataFrames, one block at a time, in chunk order; each piece's files
        checked against their recorded size and SHA-256 before they are read."""
        for piece in pieces(self.out, self.manifest):
            verify(self.out, piece, (name,))
            for block in piece.blocks:
                df = read_block(self.out, self.manifest["config"], block, name, columns).to_pandas()
                yield df if columns is None or "game_id" in columns else df.drop(columns="game_id")

    def dataset(self, name: str):
        """Table ``name`` as a lazy ``pyarrow.dataset.Dataset`` over the run's finished files."""
        return ds.dataset([str(f) for f in files(self.out, self.manifest, name)], format="parquet")

    def table_rows(self, name: str) -> int:
        """Rows of table ``name`` in the finished chunks, from the Parquet footers."""
        return sum(pq.ParquetFile(f).metadata.num_rows for f in files(self.out, self.manifest, name))

    def table(self, name: str, columns: list[str] | None = None) -> pd.DataFrame:
        key = (name, tuple(columns) if columns else None)
        if key not in self._cache:
            rows = self.table_rows(name)
            found = schema(self.out, self.manifest, name)
            need = rows * (_frame_bytes(found, columns) if found is not None else 1)
            limit = table_limit()
            if need > limit:
                raise TableTooLarge(
                    f"the {name} table of run {self.out} holds {rows:,} rows, about {need / 2**30:.1f} GB as a "
                    f"DataFrame, more than the {limit / 2**30:.1f} GB allowed in memory here ({TABLE_LIMIT_ENV}); "
                    f"read it lazily: open_run(RUN).dataset('{name}') (a pyarrow.dataset) or "
                    f"open_run(RUN).iter_table('{name}', columns) (DataFrames block by block)")
            frames = list(self.iter_table(name, columns))
            self._cache[key] = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        return self._cache[key]

    @property
    def n_games(self) -> int:
        """Games in the finished chunks (from the configuration: no file is read)."""
        return n_games(self.out, self.manifest)

    games = property(lambda self: self.table("games"))
    seats = property(lambda self: self.table("seats"))
    cards = property(lambda self: self.table("cards"))
    spaces = property(lambda self: self.table("spaces"))


def open_run(out: str | Path) -> RunResult:
    out = Path(out)
    return RunResult(out, read_manifest(out))
