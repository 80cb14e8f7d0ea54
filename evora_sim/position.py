"""Positions: a Temple described in JSON, turned into an engine state to be scored.

A designer or analyst writes down a Temple ("who has which part where") and asks the engine for
the final scoring. The position is validated against the rules first, so an impossible position
(5 stones in a column, a capital on 3 stones, a seat that is not playing) is refused by name
rather than scored.
"""
from __future__ import annotations

from pathlib import Path

from . import engine as E
from . import layout as L
from .api import State, check_players, engine_state, start_vp_entry
from .jsonfile import read_json
from .rules import Rules, load_rules
from .statecheck import MAX_VP


class PositionError(ValueError):
    """A position that cannot exist under the rules; the message says where."""


def _seat(value, n, where):
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
        raise PositionError(f"{where}: seat must be 0..{n - 1} for {n} players, got {value!r}")
    return value


def position_state(pos: dict, rules: Rules | None = None) -> State:
    """Build a state holding the position ``pos`` (the documented JSON form)."""
    rules = rules or load_rules()
    if not isinstance(pos, dict):
        raise PositionError("a position must be a JSON object with 'players' and 'columns'")
    for key in pos:
        if key not in ("players", "columns", "vp", "parts_left"):
            raise PositionError(f"unknown position key {key!r} (expected players, columns, vp, parts_left)")
    try:
        n = check_players(pos.get("players"))
    except ValueError as exc:
        raise PositionError(str(exc)) from None
    R = rules.packed
    ncols = rules.columns(n)
    columns = pos.get("columns")
    if not isinstance(columns, list):
        raise PositionError("'columns' must be a list with one entry per available column")
    if len(columns) > ncols:
        raise PositionError(f"'columns' has {len(columns)} entries, but {n} players have {ncols} column spaces")
    s = E.new_state()
    E.init_game(s, R, n, 0)
    emp_values = rules.data["emperor_tile"]["values"]
    placed_stones = [0] * n
    placed_caps = [0] * n
    whites = 0
    for c, col in enumerate(columns):
        where = f"columns[{c}]"
        if not isinstance(col, dict):
            raise PositionError(f"{where} must be an object with 'parts'")
        for key in col:
            if key not in ("parts", "capital", "emperor"):
                raise PositionError(f"{where}: unknown key {key!r} (expected parts, capital, emperor)")
        parts = col.get("parts", [])
        if not isinstance(parts, list):
            raise PositionError(f"{where}.parts must be a list, bottom to top")
        if len(parts) > 4:
            raise PositionError(f"{where}: {len(parts)} stones, but a column holds at most 4")
        for h, part in enumerate(parts):
            if part == "W":
                owner = L.WHITE
                whites += 1
            else:
                owner = _seat(part, n, f"{where}.parts[{h}]")
                placed_stones[owner] += 1
            s[L.COL_PART + c * L.COLPARTS + h] = owner
        height = len(parts)
        cap = col.get("capital")
        if cap is not None:
            owner = _seat(cap, n, f"{where}.capital")
            if height != 4:
                raise PositionError(f"{where}: a capital needs 4 stones below it, the column has {height}")
            s[L.COL_PART + c * L.COLPARTS + 4] = owner
            placed_caps[owner] += 1
            height = 5
        s[L.COL_H + c] = height
        emp = col.get("emperor")
        if emp is not None:
            if not isinstance(emp, dict) or set(emp) != {"seat", "value"}:
                raise PositionError(f"{where}.emperor must be {{\"seat\": S, \"value\": V}}, got {emp!r}")
            seat = _seat(emp["seat"], n, f"{where}.emperor.seat")
            if isinstance(emp["value"], bool) or not isinstance(emp["value"], int) or emp["value"] not in emp_values:
                raise PositionError(f"{where}.emperor.value must be one of {emp_values}, got {emp['value']!r}")
            b = L.PLAYERS + seat * L.PSTRIDE
            k = 0 if s[b + L.P_TPOS] < 0 else 1
            if s[b + L.P_TPOS + k] >= 0:
                raise PositionError(f"{where}.emperor: seat {seat} has only 2 Emperor tiles")
            s[b + L.P_TPOS + k] = c
            s[b + L.P_TVAL + k] = emp_values.index(emp["value"])
            s[L.COL_TILE + c] = seat * 2 + k
    supply = rules.data["supply"]
    if whites > supply["white_stones"]:
        raise PositionError(f"{whites} white stones placed, but the Quarry has {supply['white_stones']}")
    s[L.G_WHITE_LEFT] = supply["white_stones"] - whites
    for p in range(n):
        b = L.PLAYERS + p * L.PSTRIDE
        if placed_stones[p] > supply["stones"]:
            raise PositionError(f"seat {p} has {placed_stones[p]} stones placed, but owns {supply['stones']}")
        if placed_caps[p] > supply["capitals"]:
            raise PositionError(f"seat {p} has {placed_caps[p]} capitals placed, but owns {supply['capitals']}")
        s[b + L.P_STONES] = supply["stones"] - placed_stones[p]
        s[b + L.P_CAPS] = supply["capitals"] - placed_caps[p]
    E.count_heights(s)
    for c in range(len(columns)):
        E.update_column_holder(s, R, c)
    _apply_list(pos, "vp", n, lambda p: MAX_VP, "at most {hi:,} VP (no game scores more)",
                lambda p, v: s.__setitem__(L.PLAYERS + p * L.PSTRIDE + L.P_SCORE, v))

    def unplaced(p):
        b = L.PLAYERS + p * L.PSTRIDE
        return int(s[b + L.P_STONES] + s[b + L.P_CAPS])

    def set_left(p, v):
        b = L.PLAYERS + p * L.PSTRIDE
        caps = min(int(s[b + L.P_CAPS]), v)
        s[b + L.P_CAPS] = caps
        s[b + L.P_STONES] = v - caps
    _apply_list(pos, "parts_left", n, unplaced,
                "at most {hi}: the seat's stones and capitals not on the Temple", set_left)
    E.final_scoring(s, R)
    return engine_state(s, rules, 0)


def _apply_list(pos, key, n, highest, why, setter):
    """Set one number per seat, each from 0 to ``highest(seat)`` (``why`` says what bounds it)."""
    values = pos.get(key)
    if values is None:
        return
    if not isinstance(values, list) or len(values) != n:
        raise PositionError(f"'{key}' must be a list of {n} whole numbers, one per seat, got {_short(values)}")
    for p, v in enumerate(values):
        hi = highest(p)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= hi:
            raise PositionError(f"'{key}'[{p}] must be a whole number from 0 to {hi:,} "
                                f"({why.format(hi=hi)}), got {_short(v)}")
        setter(p, v)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def load_position(path: str | Path, rules: Rules | None = None) -> State:
    return position_state(read_json(path, "position file", PositionError), rules)


def scoring_table(state: State) -> dict:
    """The ``evora score --json`` form: per seat the end-of-game categories and the total."""
    arr = state.arr
    seats = []
    for p in range(state.n_players):
        b = L.PLAYERS + p * L.PSTRIDE
        row = {"seat": p, "vp": int(arr[b + L.P_SCORE]),
               "emperor": int(arr[b + L.P_VP_EMPEROR]),
               "column_majority": int(arr[b + L.P_VP_COLMAJ])}
        for k in range(4):
            row[f"height_{k + 1}"] = int(arr[b + L.P_VP_HEIGHT + k])
        row["capitals"] = int(arr[b + L.P_VP_HEIGHT + 4])
        row["parts_left"] = int(arr[b + L.P_STONES] + arr[b + L.P_CAPS])
        row.update(start_vp_entry(state.rules, state.n_players, p))
        row["total"] = int(arr[b + L.P_FINAL])
        seats.append(row)
    # V4: seats tied on VP share the victory, one of them recorded by lot (said only when so)
    shared = {"shared_victory": True} if state.rules.shared_victory else {}
    return {"seats": seats, "winner": int(arr[L.G_WINNER]), **shared}


__all__ = ["PositionError", "position_state", "load_position", "scoring_table"]
