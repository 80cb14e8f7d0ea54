"""Fewer, larger files: a run's finished chunks packed into parts.

A run of 4 million games at the default chunk size is 200 to 800 Parquet files per table, each a
few hundred kilobytes: slow to list, to copy and to open, and far below the size a Parquet reader
works best at. :func:`compact` packs the finished chunks that are still in their own files into
parts of up to ``PART_GAMES`` games, one file per table, whose row groups hold whole consecutive
chunks of about ``ROW_GROUP_GAMES`` games (a row group is what a reader decodes at once, so it is
what bounds the report's memory: 100,000 games are about 3.6 million Construction Site rows).

It is atomic and keeps resume intact:
- it holds the run folder's lock, so no run writes meanwhile;
- every chunk is checked against its recorded size and SHA-256 before its bytes are copied, so a
  damaged chunk is never laundered into a part with a fresh checksum (it stays where it is, and
  the next run of the command replays it);
- a part's files are written under temporary names and renamed into place, then the manifest
  (replaced atomically) records the part with its files' sizes and SHA-256 and the chunk files
  are deleted. A crash before the manifest is replaced leaves the chunk files in charge and an
  unrecorded part file; a crash after it leaves chunk files the manifest no longer names. Both are
  removed the next time the folder is opened (:func:`remove_leftovers`).
A resumed or extended run plays its missing chunks into chunk files as before; a part found
damaged has all its chunks played again. Parts are never rewritten: compacting again packs only
the chunks that are still in their own files.

``simulate`` compacts a finished run at the end once its loose chunks hold ``AUTO_COMPACT_GAMES``
games or more; ``evora compact RUN`` compacts any run, finished or not.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from .fsutil import check_out_path
from .manifest import (MANIFEST, TABLES, RunError, chunk_file, chunk_ids, chunk_parts, chunk_problem, file_sha256,
                       part_file, read_manifest, write_manifest)
from .runlock import folder_lock
from .storage import misplaced

ROW_GROUP_GAMES = 100_000
PART_GAMES = 1_000_000
AUTO_COMPACT_GAMES = 200_000


@dataclass
class Compacted:
    """What :func:`compact` did."""

    chunks: int = 0                                  # chunks moved into new parts
    parts: list[int] = field(default_factory=list)   # the new parts
    files_before: int = 0                            # Parquet files holding finished games
    files_after: int = 0
    skipped: dict = field(default_factory=dict)      # damaged chunks left in their files: reason


def _games(cfg: dict, k: int) -> int:
    lo, hi = chunk_ids(cfg, k)
    return hi - lo


def plan(manifest: dict, chunks: list[int], row_group_games: int = ROW_GROUP_GAMES,
         part_games: int = PART_GAMES, schema_of=None) -> list[list[list[int]]]:
    """Chunks grouped into parts (lists of row groups, each a list of consecutive chunks): a part
    ends at ``part_games`` games or where the tables' columns change (a run resumed by a later
    version), a row group at ``row_group_games`` games or a gap in the chunks."""
    cfg = manifest["config"]
    parts: list[list[list[int]]] = []
    part_size = group_size = 0
    last_schema = object()
    for k in sorted(chunks):
        g = _games(cfg, k)
        schema = schema_of(k) if schema_of else None
        if not parts or part_size + g > part_games or schema != last_schema:
            parts.append([[k]])
            part_size, group_size = g, g
        elif group_size >= row_group_games or parts[-1][-1][-1] != k - 1:
            parts[-1].append([k])
            group_size = g
            part_size += g
        else:
            parts[-1][-1].append(k)
            group_size += g
            part_size += g
        last_schema = schema
    return parts


def _columns(out: Path, k: int) -> tuple:
    return tuple(tuple(pq.read_schema(chunk_file(out, t, k)).names) for t in TABLES)


def _write_part(out: Path, p: int, groups: list[list[int]]) -> dict:
    """Write part ``p``'s four files (temporary names, then renamed); their [size, sha256]."""
    records = {}
    for table in TABLES:
        final = part_file(out, table, p)
        tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
        tmp.unlink(missing_ok=True)            # never written through a link left under its name
        writer = None
        try:
            for group in groups:
                data = pa.concat_tables([pq.read_table(chunk_file(out, table, k)) for k in group])
                if writer is None:
                    writer = pq.ParquetWriter(tmp, data.schema)
                writer.write_table(data, row_group_size=max(len(data), 1))
            writer.close()
            writer = None
            if pq.ParquetFile(tmp).metadata.num_row_groups != len(groups):
                raise RunError(f"compacting {out}: {final.name} did not get one row group per group of chunks")
            records[table] = [tmp.stat().st_size, file_sha256(tmp)]
            os.replace(tmp, final)
        finally:
            if writer is not None:
                writer.close()
            if tmp.exists():
                tmp.unlink()
    return records


def remove_leftovers(out: Path, manifest: dict) -> None:
    """What an interrupted compaction may leave: a part file the manifest does not record, chunk
    files of chunks that are now in a part. Only to be called while holding the folder's lock."""
    in_parts = chunk_parts(manifest)
    recorded = set(manifest.get("parts", {}))
    for table in TABLES:
        folder = Path(out) / table
        if not folder.is_dir():
            continue
        for f in folder.iterdir():
            name = f.name
            if name.startswith("part-") and name.endswith(".parquet"):
                stem = name[5:-8]
                if stem.isdigit() and str(int(stem)) not in recorded:
                    f.unlink(missing_ok=True)
            elif name.startswith("chunk-") and name.endswith(".parquet"):
                stem = name[6:-8]
                if stem.isdigit() and int(stem) in in_parts:
                    f.unlink(missing_ok=True)


def loose_games(manifest: dict) -> int:
    """Games of the finished chunks still in their own files."""
    in_parts = chunk_parts(manifest)
    cfg = manifest["config"]
    return sum(_games(cfg, int(k)) for k, v in manifest["chunks"].items()
               if v == "done" and int(k) not in in_parts)


def compact(out: str | Path, row_group_games: int = ROW_GROUP_GAMES, part_games: int = PART_GAMES) -> Compacted:
    """Pack run ``out``'s finished chunks that are in their own files into parts (see the
    module); RunError (one line) for a folder that is not a run, or one in use."""
    check_out_path(out, "RUN_DIR", RunError, "evora compact runs/NAME")     # '' before Path makes it '.'
    out = Path(out)
    if not (out / MANIFEST).is_file():
        raise RunError(f"{out} is not a run folder (no {MANIFEST})")
    with folder_lock(out, RunError, "run"):
        manifest = read_manifest(out)
        remove_leftovers(out, manifest)
        in_parts = chunk_parts(manifest)
        loose = [int(k) for k, v in manifest["chunks"].items() if v == "done" and int(k) not in in_parts]
        result = Compacted(files_before=len(manifest.get("parts", {})) + len(loose))
        for k in loose:
            problem = chunk_problem(out, manifest, k)
            if problem:
                result.skipped[k] = problem
        # a checksum can be rewritten by whoever edits the folder: a chunk holding other games
        # than its own is never packed either (parts, checked when made, are not read again)
        loose_only = {**manifest, "parts": {}, "chunks": {str(k): "done" for k in loose}}
        result.skipped.update(misplaced(out, loose_only, skip=result.skipped))
        good = [k for k in loose if k not in result.skipped]
        parts = plan(manifest, good, row_group_games, part_games, schema_of=lambda k: _columns(out, k))
        next_id = max((int(p) for p in manifest.get("parts", {})), default=-1) + 1
        written = {}
        for i, groups in enumerate(parts):
            p = next_id + i
            written[p] = (groups, _write_part(out, p, groups))
        for p, (groups, records) in written.items():
            chunks = [k for g in groups for k in g]
            manifest.setdefault("parts", {})[str(p)] = {"chunks": chunks, "row_groups": [len(g) for g in groups],
                                                        "files": records}
            for k in chunks:
                manifest["chunk_files"].pop(str(k), None)
            result.chunks += len(chunks)
            result.parts.append(p)
        if written:
            write_manifest(out, manifest)
            remove_leftovers(out, manifest)
        result.files_after = len(manifest.get("parts", {})) + len(loose) - result.chunks
    return result
