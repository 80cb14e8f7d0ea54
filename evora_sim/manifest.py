"""A run folder's manifest: what it may hold, how it is read and written, and how a chunk's files
are checked against it.

``manifest.json`` holds the configuration, the rules and each chunk's status; for each finished
chunk, the size and SHA-256 of its four Parquet files as written (``chunk_files``). A compacted
run (:mod:`evora_sim.compact`) keeps finished chunks in larger files instead: each *part* holds
several whole chunks, one Parquet file per table, with the size and SHA-256 of those files and
how many chunks each row group holds (``parts``); a chunk is in a part or in its own files, never
both. The format version is 3 once a run has parts (earlier versions, which would not find those
chunks, refuse it), 2 otherwise. While a run
plays, a finished chunk is recorded by appending one line to ``chunks.jsonl`` (the journal), not
by rewriting the manifest, so recording costs the same for the thousandth chunk as for the first;
the journal is folded into the manifest when a run starts and when it stops. A torn last line
(a crash while appending) only costs that chunk being played again.

Everything read from disk is checked: a manifest of the wrong shape is refused with one line
(:class:`RunError`), never a ``KeyError``. A manifest written before checksums existed (version
1) still opens: its finished chunks carry no checksum, so they are checked by what can be checked
without one (the files exist, are readable Parquet and hold the chunk's number of games); a
resumed run records their checksums from then on.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
import shlex
import stat
from pathlib import Path

from .fsutil import write_bytes_atomic
from .jsonfile import parse_json_bytes
from .rules import RulesError, validate

MANIFEST = "manifest.json"
JOURNAL = "chunks.jsonl"
FORMAT = "evora-sim run"
VERSION = 2                 # a manifest without parts
PARTS_VERSION = 3           # a manifest with compacted parts
TABLES = ("games", "seats", "cards", "spaces")

# What a run may ask for: the manifest lists every chunk, so their number is bounded (a 100,000
# chunk manifest is about 30 MB); games (seeds x rotations) are bounded so that no count can
# exhaust memory before the first game (a chunk is played in memory).
MAX_CHUNKS = 100_000
MAX_GAMES = 10**10
MAX_CHUNK_GAMES = 1_000_000            # seeds x rotations of one chunk
_HEX64 = re.compile(r"[0-9a-f]{64}")


class RunError(ValueError):
    """A run that cannot start as asked (bad argument, clashing folder); nothing was written."""


class RunFailed(RunError):
    """A run that stopped part-way (a full disk, a lost cluster): finished chunks are kept."""


def chunk_file(out: Path, table: str, k: int) -> Path:
    return Path(out) / table / f"chunk-{k:06d}.parquet"


def part_file(out: Path, table: str, p: int) -> Path:
    return Path(out) / table / f"part-{p:06d}.parquet"


def chunk_parts(manifest: dict) -> dict[int, int]:
    """Chunk -> the part that holds it, for every compacted chunk."""
    return {int(k): int(p) for p, part in manifest.get("parts", {}).items() for k in part["chunks"]}


# ---------------------------------------------------------------------------------------------
# reading and checking
# ---------------------------------------------------------------------------------------------
def parse_json_text(raw: bytes, path, error: type[Exception] = RunError):
    return parse_json_bytes(raw, str(path), error)


def read_plan(out, name: str, what: str) -> dict | None:
    """The JSON object ``out/name`` that says what an experiment folder holds (a sweep's
    sweep.json, a search's search.json); None if it has none. A RunError if ``out`` is a file or
    the file cannot be read or is not an object."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise RunError(f"--out {out} exists and is not a folder")
    path = out / name
    if not path.is_file():
        return None
    try:
        doc = parse_json_text(path.read_bytes(), path)
    except OSError as exc:
        raise RunError(f"{path} cannot be read: {exc.strerror or exc}") from None
    if not isinstance(doc, dict):
        raise RunError(f"{path} is not an evora-sim {what} file")
    return doc


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _need(cond: bool, path, what: str) -> None:
    if not cond:
        raise RunError(f"{path} is not a valid run manifest: {what}")


def n_chunks(config: dict) -> int:
    return math.ceil(config["games"] / config["chunk_size"])


def _check_config(cfg, path) -> None:
    _need(isinstance(cfg, dict), path, "'config' must be an object")
    players = cfg.get("players")
    _need(_is_int(players) and 2 <= players <= 4, path, f"config.players must be 2 to 4, got {players!r}")
    for key, hi in (("games", MAX_GAMES), ("chunk_size", MAX_GAMES)):
        v = cfg.get(key)
        _need(_is_int(v) and 1 <= v <= hi, path, f"config.{key} must be a whole number from 1 to {hi}, got {v!r}")
    seed = cfg.get("seed")
    _need(_is_int(seed) and 0 <= seed < 2**63, path, f"config.seed must be 0 to 2**63-1, got {seed!r}")
    _need(isinstance(cfg.get("seat_rotation"), bool), path, "config.seat_rotation must be true or false")
    strategies = cfg.get("strategies")
    _need(isinstance(strategies, list) and len(strategies) == players
          and all(isinstance(s, str) and s for s in strategies), path,
          f"config.strategies must be {players} strategy names")
    resolved = cfg.get("resolved_strategies")
    _need(isinstance(resolved, dict) and all(isinstance(resolved.get(s), dict) for s in strategies), path,
          "config.resolved_strategies must describe every strategy")
    _need(isinstance(cfg.get("rules_hash"), str), path, "config.rules_hash must be a string")
    _need(cfg.get("record_actions", True) is True, path, "config.record_actions must be true when given")
    k = n_chunks(cfg)
    _need(k <= MAX_CHUNKS, path, f"{k} chunks, more than a run holds ({MAX_CHUNKS:,})")


def _check_record(rec) -> bool:
    return (isinstance(rec, dict) and set(rec) == set(TABLES)
            and all(isinstance(v, list) and len(v) == 2 and _is_int(v[0]) and v[0] >= 0
                    and isinstance(v[1], str) and _HEX64.fullmatch(v[1]) for v in rec.values()))


def _check_rules(data: dict, path) -> None:
    rules = data.get("rules")
    _need(isinstance(rules, dict), path, "'rules' must be an object")
    try:
        got = validate(rules).hash
    except (RulesError, KeyError, TypeError, AttributeError, ValueError) as exc:
        raise RunError(f"{path} is not a valid run manifest: its rules are not valid ({exc})") from None
    _need(got == data.get("rules_hash") == data["config"]["rules_hash"], path,
          "its rules do not match their recorded hash")


def check_manifest(data, path) -> dict:
    """``data`` if it has the shape of a run manifest (every field any reader uses); otherwise a
    RunError naming the first problem. Chunk statuses are normalised to 'done' / 'missing'."""
    _need(isinstance(data, dict), path, f"it is a JSON {type(data).__name__}, not an object")
    if data.get("format") != FORMAT:
        raise RunError(f"{path} is not an evora-sim run manifest")
    _need(data.get("version") in (1, VERSION, PARTS_VERSION), path,
          f"format version {data.get('version')!r}; this version reads 1 to {PARTS_VERSION}")
    _check_config(data.get("config"), path)
    _check_rules(data, path)
    chunks = data.get("chunks")
    _need(isinstance(chunks, dict), path, "'chunks' must be an object of chunk statuses")
    want = n_chunks(data["config"])
    for key, status in chunks.items():
        _need(re.fullmatch(r"0|[1-9][0-9]{0,8}", key) is not None and int(key) < want, path,
              f"chunk key {key!r} is not a chunk of this run (0 to {want - 1})")
        _need(status in ("done", "missing"), path, f"chunk {key} has status {status!r} (done or missing)")
    _need(len(chunks) == want, path,
          f"it lists {len(chunks)} chunks, but its configuration makes {want}")
    files = data.setdefault("chunk_files", {})
    _need(isinstance(files, dict) and all(k in chunks and _check_record(v) for k, v in files.items()),
          path, "'chunk_files' must hold the size and SHA-256 of each finished chunk's files")
    _check_parts(data, path)
    _check_sequential(data.get("sequential"), path)
    return data


def _finite(x, lo: float, hi: float) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and lo <= x <= hi


def _check_sequential(seq, path) -> None:
    """The record of a run played with --until-ci, as the report and the sweep summary read it
    (the method, the looks, the level of each), or none (null or {})."""
    if seq is None or seq == {}:
        return
    _need(isinstance(seq, dict), path, "'sequential' must be an object")
    looks = seq.get("looks_planned")
    history = seq.get("history")
    ok = (isinstance(seq.get("method"), str) and isinstance(seq.get("reason"), str)
          and _finite(seq.get("width"), 1e-12, 1e12) and _finite(seq.get("alpha_per_look"), 1e-12, 1.0)
          and isinstance(seq.get("metrics"), list) and all(isinstance(m, str) for m in seq["metrics"])
          and isinstance(looks, list) and looks and all(_is_int(n) and n > 0 for n in looks)
          and _is_int(seq.get("looks_done")) and 1 <= seq["looks_done"] <= len(looks)
          and _is_int(seq.get("stopped_at_seeds")) and seq["stopped_at_seeds"] > 0
          and isinstance(history, list) and history
          and all(isinstance(h, dict) and isinstance(h.get("max_half_width"), (int, float))
                  and not isinstance(h["max_half_width"], bool) and h["max_half_width"] >= 0 for h in history))
    _need(ok, path, "'sequential' must be the record of a run played with --until-ci")


def _check_parts(data: dict, path) -> None:
    """Each part holds finished chunks that no other part and no chunk file holds, in row groups
    of whole chunks, with the size and SHA-256 of its files."""
    parts = data.get("parts")
    if parts is None:           # never compacted: the key stays absent, so resuming rewrites nothing
        return
    _need(isinstance(parts, dict), path, "'parts' must be an object of compacted parts")
    seen: set[str] = set()
    for key, part in parts.items():
        _need(re.fullmatch(r"0|[1-9][0-9]{0,8}", key) is not None and isinstance(part, dict), path,
              f"part {key!r} is not a part record")
        chunks, groups = part.get("chunks"), part.get("row_groups")
        _need(isinstance(chunks, list) and chunks and all(_is_int(k) for k in chunks)
              and chunks == sorted(set(chunks)), path, f"part {key}: 'chunks' must list its chunks in order")
        ids = {str(k) for k in chunks}
        _need(all(data["chunks"].get(k) == "done" for k in ids), path,
              f"part {key} holds a chunk that is not marked done")
        _need(not ids & seen and not ids & set(data["chunk_files"]), path,
              f"part {key} holds a chunk that another part or a chunk file also holds")
        seen |= ids
        _need(isinstance(groups, list) and all(_is_int(g) and g > 0 for g in groups)
              and sum(groups) == len(chunks), path, f"part {key}: 'row_groups' must count its chunks")
        _need(_check_record(part.get("files")), path, f"part {key}: 'files' must hold the size and SHA-256 "
              "of its files")


def _fold_journal(out: Path, manifest: dict) -> None:
    """Apply the journal's chunk records; lines that are not a whole record (a torn write) are
    skipped, so their chunks count as missing."""
    try:
        raw = (Path(out) / JOURNAL).read_bytes()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise RunError(f"{Path(out) / JOURNAL} cannot be read: {exc.strerror or exc}") from None
    for line in raw.split(b"\n"):
        try:
            entry = json.loads(line.decode("utf-8"))
        except (ValueError, RecursionError):
            continue
        if not isinstance(entry, dict) or not _is_int(entry.get("chunk")):
            continue
        key = str(entry["chunk"])
        if key in manifest["chunks"] and _check_record(entry.get("files")):
            manifest["chunks"][key] = "done"
            manifest["chunk_files"][key] = entry["files"]


def _check_table_folders(out: Path) -> None:
    """A run's table folders are its own: a link there would have resume write, and clean up
    leftovers, in a folder outside the run."""
    for table in TABLES:
        folder = Path(out) / table
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            raise RunError(f"run {out}: {table} is {'a link' if folder.is_symlink() else 'not a folder'}, not the "
                           f"run's own folder of {table} tables; nothing is read or written there")


def read_manifest(out) -> dict:
    """The manifest of run folder ``out`` with its journal folded in, checked; or a RunError."""
    path = Path(out) / MANIFEST
    if not path.is_file():
        raise RunError(f"{out} is not a run folder (no {MANIFEST})")
    _check_table_folders(Path(out))
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RunError(f"{path} cannot be read: {exc.strerror or exc}") from None
    manifest = check_manifest(parse_json_text(raw, path), path)
    _fold_journal(Path(out), manifest)
    return manifest


# ---------------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------------
def write_json_atomic(path: Path, data: dict) -> None:
    """Replace ``path`` by ``data`` as JSON (temporary file, then rename); left untouched if it
    already holds exactly that."""
    text = json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False).encode("utf-8")
    try:
        if path.read_bytes() == text:
            return
    except OSError:
        pass
    write_bytes_atomic(path, text)


def write_manifest(out: Path, manifest: dict) -> None:
    """Replace the manifest (journal folded in), then drop the journal: a crash in between
    leaves a journal whose records the manifest already holds, which is harmless."""
    manifest["version"] = PARTS_VERSION if manifest.get("parts") else VERSION
    write_json_atomic(Path(out) / MANIFEST, manifest)
    try:
        (Path(out) / JOURNAL).unlink()
    except FileNotFoundError:
        pass


def record_done(out: Path, manifest: dict, k: int, files: dict) -> None:
    """Mark chunk ``k`` done: one journal line (its files' sizes and checksums)."""
    key = str(k)
    manifest["chunks"][key] = "done"
    manifest["chunk_files"][key] = files
    line = json.dumps({"chunk": k, "files": files}, separators=(",", ":")) + "\n"
    with open(Path(out) / JOURNAL, "a", encoding="utf-8") as fh:
        fh.write(line)


def file_record(data: bytes) -> list:
    """[size, sha256] of a chunk file's bytes, as recorded in the manifest."""
    return [len(data), hashlib.sha256(data).hexdigest()]


# ---------------------------------------------------------------------------------------------
# checking chunk files
# ---------------------------------------------------------------------------------------------
def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_problem(f: Path, name: str, want: list | None, full: bool = True) -> str | None:
    """Why the file ``f`` (shown as ``name``) is not what was written (``want``: [size,
    sha256]), or None; ``full=False`` compares the size only (no byte is read)."""
    try:
        info = f.stat()
    except OSError:
        return f"{name} is missing"
    if not stat.S_ISREG(info.st_mode):        # a pipe or a device would block or never end a read
        return f"{name} is not a regular file"
    size = info.st_size
    if want is None:
        return None
    want_size, want_sha = want
    if size != want_size:
        return f"{name} has {size:,} bytes, {want_size:,} were written"
    if full:
        try:
            if file_sha256(f) != want_sha:
                return f"{name} differs from what was written (SHA-256)"
        except OSError as exc:
            return f"{name} cannot be read ({exc.strerror or exc})"
    return None


def chunk_problem(out: Path, manifest: dict, k: int, full: bool = True) -> str | None:
    """Why finished chunk ``k``'s files cannot be trusted, or None. With a recorded size and
    checksum, the files must match them (``full=False``: their sizes only); a chunk of a
    version-1 manifest (none recorded) must be readable Parquet holding the chunk's number of
    games. A compacted chunk is checked through its part (:func:`part_problem`)."""
    part = chunk_parts(manifest).get(int(k))
    if part is not None:
        return part_problem(out, manifest, part, full)
    record = manifest["chunk_files"].get(str(k))
    for table in TABLES:
        f = chunk_file(out, table, k)
        name = f"{table}/{f.name}"
        problem = file_problem(f, name, None if record is None else record[table], full)
        if problem is None and record is None:
            problem = _legacy_problem(f, name, table, manifest["config"], k)
        if problem:
            return problem
    return None


def part_problem(out: Path, manifest: dict, p: int, full: bool = True) -> str | None:
    """Why compacted part ``p``'s files cannot be trusted (see :func:`chunk_problem`), or None."""
    record = manifest["parts"][str(p)]["files"]
    for table in TABLES:
        f = part_file(out, table, p)
        problem = file_problem(f, f"{table}/{f.name}", record[table], full)
        if problem:
            return problem
    return None


def _legacy_problem(f: Path, name: str, table: str, cfg: dict, k: int) -> str | None:
    import pyarrow.parquet as pq  # lazy: 0.1 s (measured); every command reads this module at start-up

    try:
        rows = pq.ParquetFile(f).metadata.num_rows
    except Exception:                # pyarrow raises several kinds for a damaged file
        return f"{name} is not a readable Parquet file"
    if table == "games":
        size = cfg["chunk_size"]
        seeds = min(cfg["games"], (k + 1) * size) - k * size
        want = seeds * (cfg["players"] if cfg["seat_rotation"] else 1)
        if rows != want:
            return f"{name} holds {rows:,} games, the chunk has {want:,}"
    return None


def damaged_chunks(out: Path, manifest: dict, full: bool = True) -> dict[int, str]:
    """Every chunk marked done whose files fail :func:`chunk_problem`, with the reason (every
    chunk of a damaged part). ``full=False``: sizes only, no byte read (the checksums are then
    checked by whoever reads the bytes, :mod:`evora_sim.storage`)."""
    found = {}
    in_parts = chunk_parts(manifest)
    for p, part in manifest.get("parts", {}).items():
        problem = part_problem(out, manifest, int(p), full)
        if problem:
            found.update({int(k): problem for k in part["chunks"]})
    for key, status in manifest["chunks"].items():
        if status == "done" and int(key) not in in_parts:
            problem = chunk_problem(out, manifest, int(key), full)
            if problem:
                found[int(key)] = problem
    return found


def forget_chunks(manifest: dict, chunks) -> None:
    """Mark ``chunks`` missing (to be played again): their records go, and so does every part
    holding one of them, whose other chunks are then missing too (a part is checked whole)."""
    chunks = {int(k) for k in chunks}
    for p, part in list(manifest.get("parts", {}).items()):
        if chunks & set(part["chunks"]):
            chunks |= set(part["chunks"])
            del manifest["parts"][p]
    for k in chunks:
        manifest["chunks"][str(k)] = "missing"
        manifest["chunk_files"].pop(str(k), None)


def record_unrecorded(out: Path, manifest: dict) -> None:
    """Record the size and checksum of finished chunks that have none (a version-1 manifest),
    once they passed :func:`chunk_problem`: from then on they are checked like any other."""
    in_parts = chunk_parts(manifest)
    for key, status in manifest["chunks"].items():
        if status == "done" and key not in manifest["chunk_files"] and int(key) not in in_parts:
            manifest["chunk_files"][key] = {t: file_record(chunk_file(out, t, int(key)).read_bytes())
                                            for t in TABLES}


def describe_damaged(out, damaged: dict[int, str]) -> str:
    ks = sorted(damaged)
    names = ", ".join(str(k) for k in ks[:5]) + (" ..." if len(ks) > 5 else "")
    if len(ks) == 1:
        return f"run {out}: chunk {names} is damaged ({damaged[ks[0]]})"
    return f"run {out}: chunks {names} are damaged (chunk {ks[0]}: {damaged[ks[0]]})"


def chunk_ids(config: dict, k: int) -> tuple[int, int]:
    """The game ids chunk ``k`` holds: ``lo`` (inclusive) to ``hi`` (exclusive)."""
    rot = config["players"] if config["seat_rotation"] else 1
    size = config["chunk_size"]
    return k * size * rot, min(config["games"], (k + 1) * size) * rot


def replay_command(manifest: dict, n: int, seed: int, names: list[str]) -> str:
    """The ``evora replay`` command that plays game ``seed`` of the run ``manifest`` describes
    again, its rules options included (shell-quoted: a run folder may name anything)."""
    src = manifest.get("rules_source") or {}
    parts = ["evora", "replay", "-n", str(n), "--seed", str(seed), "--strategies", ",".join(names)]
    if src.get("file"):
        parts += ["--rules", str(src["file"])]
    for item in src.get("set") or []:
        parts += ["--set", str(item)]
    return " ".join(shlex.quote(p) for p in parts)
