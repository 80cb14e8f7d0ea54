"""Rules as data: load, validate and pack the rules file into an immutable parameters object.

The rules (every number and the board) live in ``data/rules.toml``. A designer's file may be
complete or partial: it is merged over the shipped default, then validated as a whole, so a
variant never runs on a half-understood file. The result, :class:`Rules`, is kept apart from
any game state (TAG style) and carries the packed int32 array the compiled engine reads.
"""
from __future__ import annotations

import copy
import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from . import layout as L


class RulesError(ValueError):
    """A rules file or override that cannot be played; the message names the key."""


HEIGHT_KEYS = ("h1", "h2", "h3", "h4", "capitals")

# key path -> (minimum, maximum) for every integer of the rules; lists/tables checked below.
_INT_RANGES: dict[str, tuple[int, int]] = {
    "players.min": (2, 4),
    "players.max": (2, 4),
    "supply.stones": (1, 99),
    "supply.capitals": (0, 99),
    "supply.workers": (1, 99),
    "supply.emperor_tiles": (2, 2),
    "supply.white_stones": (0, 99),
    "white_stone.vp": (0, 99),
    "draw.empty_stack_vp": (0, 99),
    "majority.column_vp": (0, 99),
    "majority.min_parts": (1, 5),
    "governor.worker_vp": (0, 99),
    "governor.worker_cap": (0, 999),
    "cards.copies": (1, L.MAXSTACK // 3),
    "limits.max_rounds": (1, 10_000),
}
for _h in range(1, 6):
    _INT_RANGES[f"height_vp.{_h}"] = (0, 99)
for _k in HEIGHT_KEYS:
    for _sec in ("height_majority", "height_majority_tie"):
        _INT_RANGES[f"{_sec}.{_k}"] = (0, 999)
    for _sub in ("column_vp", "height_vp", "height_tie_vp"):
        _INT_RANGES[f"governor.{_sub}.{_k}"] = (0, 999)
for _n in ("2", "3", "4"):
    _INT_RANGES[f"temple.columns.{_n}"] = (1, L.MAXC)
    _INT_RANGES[f"players.workers_on_site.{_n}"] = (1, 2)


def default_rules_path() -> Path:
    return Path(str(resources.files("evora_sim") / "data" / "rules.toml"))


def _deep_merge(base: dict, over: dict, path: str = "") -> dict:
    out = dict(base)
    for key, value in over.items():
        where = f"{path}{key}"
        if key not in base:
            raise RulesError(f"unknown rules key '{where}'")
        if isinstance(base[key], dict):
            if not isinstance(value, dict):
                raise RulesError(f"rules key '{where}' must be a table, got {value!r}")
            out[key] = _deep_merge(base[key], value, where + ".")
        else:
            out[key] = value
    return out


def _get(data: dict, dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise RulesError(f"rules key '{dotted}' is missing")
        node = node[part]
    return node


def _check_int(data: dict, dotted: str, lo: int, hi: int) -> int:
    value = _get(data, dotted)
    if isinstance(value, bool) or not isinstance(value, int):
        raise RulesError(f"rules key '{dotted}' must be a whole number from {lo} to {hi}, got {value!r}")
    if not lo <= value <= hi:
        raise RulesError(f"rules key '{dotted}' must be from {lo} to {hi}, got {value}")
    return value


def _type_index(name: Any, where: str) -> int:
    if name not in L.TYPE_NAMES:
        raise RulesError(f"{where}: unknown card type or colour {name!r} (expected one of {', '.join(L.TYPE_NAMES)})")
    return L.TYPE_NAMES.index(name)


def _validate_board(data: dict) -> list[tuple[int, int, int, int]]:
    """Return (colour, site action, argument) per space; D2 checks included."""
    spaces = _get(data, "board.spaces")
    if not isinstance(spaces, list) or not spaces:
        raise RulesError("rules key 'board.spaces' must be a non-empty list of spaces")
    if len(spaces) > L.MAXS:
        raise RulesError(f"board has {len(spaces)} spaces; the engine supports at most {L.MAXS}")
    out = []
    for i, sp in enumerate(spaces):
        where = f"board.spaces.{i}"
        if not isinstance(sp, dict):
            raise RulesError(f"{where} must be a table with 'colour' and 'action'")
        for key in ("colour", "action"):
            if key not in sp:
                raise RulesError(f"{where}.{key} is missing (each space needs a colour and an action)")
        for key in sp:
            if key not in ("colour", "action", "stacks", "types"):
                raise RulesError(f"{where}: unknown key '{key}' (expected colour, action, stacks, types)")
        colour = _type_index(sp.get("colour"), f"{where}.colour")
        action = sp.get("action")
        if action not in L.SITE_ACTIONS:
            raise RulesError(f"{where}.action: unknown action {action!r} (expected one of {', '.join(L.SITE_ACTIONS)})")
        kind, pattern = L.SITE_ACTIONS[action]
        arg = pattern
        if kind == L.SA_DRAW2:
            stacks = sp.get("stacks")
            if not isinstance(stacks, list) or len(stacks) != 2:
                raise RulesError(f"{where}.stacks: draw2 needs a list of 2 stacks, got {stacks!r}")
            a, b = (_type_index(s, f"{where}.stacks") for s in stacks)
            arg = a * L.NTYPES + b
        elif kind == L.SA_TEMPLE:
            types = sp.get("types")
            if not isinstance(types, list) or not 1 <= len(types) <= L.NTYPES:
                raise RulesError(f"{where}.types: temple needs a list of 1 to 4 card types, got {types!r}")
            arg = 0
            for t in types:
                arg |= 1 << _type_index(t, f"{where}.types")
        out.append((colour, kind, arg))
    return out


@dataclass(frozen=True)
class Rules:
    """Immutable, validated rules: the resolved data, its hash and the packed engine array."""

    data: dict = field(repr=False)
    packed: np.ndarray = field(repr=False)
    hash: str

    def columns(self, n_players: int) -> int:
        return int(self.packed[L.R_NCOLS + n_players])

    @property
    def n_spaces(self) -> int:
        return int(self.packed[L.R_NSPACES])

    def space_name(self, s: int) -> str:
        sp = self.data["board"]["spaces"][s]
        extra = sp.get("stacks") or sp.get("types")
        suffix = f"({'+'.join(extra)})" if extra else ""
        return f"{s}:{sp['colour']}/{sp['action']}{suffix}"

    def to_json(self) -> str:
        return json.dumps(self.data, sort_keys=True, ensure_ascii=False)


def _pack(data: dict, spaces: list[tuple[int, int, int]]) -> np.ndarray:
    P = np.zeros(L.RULES_SIZE, dtype=np.int32)
    P[L.R_NSPACES] = len(spaces)
    for i, (colour, kind, arg) in enumerate(spaces):
        P[L.R_SPACE_COLOUR + i] = colour
        P[L.R_SPACE_ACTION + i] = kind
        P[L.R_SPACE_ARG + i] = arg
    for h in range(1, 6):
        P[L.R_HEIGHT_VP + h] = data["height_vp"][str(h)]
        key = HEIGHT_KEYS[h - 1]
        P[L.R_HMAJ + h] = data["height_majority"][key]
        P[L.R_HMAJ_TIE + h] = data["height_majority_tie"][key]
        P[L.R_GOV_COL + h] = data["governor"]["column_vp"][key]
        P[L.R_GOV_H + h] = data["governor"]["height_vp"][key]
        P[L.R_GOV_H_TIE + h] = data["governor"]["height_tie_vp"][key]
    P[L.R_WHITE_VP] = data["white_stone"]["vp"]
    P[L.R_EMPTY_VP] = data["draw"]["empty_stack_vp"]
    P[L.R_EMP_VALUES:L.R_EMP_VALUES + 2] = data["emperor_tile"]["values"]
    P[L.R_COLMAJ_VP] = data["majority"]["column_vp"]
    P[L.R_MIN_PARTS] = data["majority"]["min_parts"]
    P[L.R_GOV_WORKER_VP] = data["governor"]["worker_vp"]
    P[L.R_GOV_WORKER_CAP] = data["governor"]["worker_cap"]
    P[L.R_STONES] = data["supply"]["stones"]
    P[L.R_CAPS] = data["supply"]["capitals"]
    P[L.R_WHITES] = data["supply"]["white_stones"]
    P[L.R_WORKERS] = data["supply"]["workers"]
    P[L.R_COPIES] = data["cards"]["copies"]
    for n in range(2, L.MAXP + 1):
        P[L.R_NCOLS + n] = data["temple"]["columns"][str(n)]
        P[L.R_SITE_WORKERS + n] = data["players"]["workers_on_site"][str(n)]
    P[L.R_MAX_ROUNDS] = data["limits"]["max_rounds"]
    P.setflags(write=False)
    return P


def validate(data: dict) -> Rules:
    """Check every key of a complete rules table and build the :class:`Rules`."""
    for dotted, (lo, hi) in _INT_RANGES.items():
        _check_int(data, dotted, lo, hi)
    values = _get(data, "emperor_tile.values")
    if (not isinstance(values, list) or len(values) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 99 for v in values)):
        raise RulesError(f"rules key 'emperor_tile.values' must be 2 whole numbers (front, back) from 0 to 99, got {values!r}")
    if data["players"]["min"] > data["players"]["max"]:
        raise RulesError("rules key 'players.min' is larger than 'players.max'")
    spaces = _validate_board(data)
    for n in range(2, L.MAXP + 1):
        pieces = n * data["players"]["workers_on_site"][str(n)] + 1
        need = 3 * pieces + 1
        if len(spaces) < need:
            raise RulesError(
                f"board too small: {len(spaces)} spaces, but {n} players put {pieces} pieces on the site "
                f"(workers + Centurion) and D2 needs at least 3 * {pieces} + 1 = {need}")
    packed = _pack(data, spaces)
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]
    return Rules(data=copy.deepcopy(data), packed=packed, hash=digest)


def _read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise RulesError(f"rules file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"rules file {path} is not valid TOML: {exc}") from None


_DEFAULT: Rules | None = None


def load_rules(path: str | Path | None = None) -> Rules:
    """The shipped rules, or a designer's full or partial file merged over them."""
    global _DEFAULT
    if path is None:
        if _DEFAULT is None:
            _DEFAULT = validate(_read_toml(default_rules_path()))
        return _DEFAULT
    base = _read_toml(default_rules_path())
    return validate(_deep_merge(base, _read_toml(Path(path))))
