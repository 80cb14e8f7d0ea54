"""Rules as data: load, validate and pack the rules file into an immutable parameters object.

The rules (every number and the board) live in ``data/rules.toml``. A designer's file may be
complete or partial: it is merged over the shipped default, then validated as a whole, so a
variant never runs on a half-understood file. The result, :class:`Rules`, is kept apart from
any game state (TAG style) and carries the packed int32 array the compiled engine reads.
"""
from __future__ import annotations

import copy
import difflib
import hashlib
import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from . import layout as L
from .names import space_words
from .tomltext import toml_comment, toml_key, toml_value
from .tomlfile import read_toml
from .wholenumber import is_whole_number, whole_number


class RulesError(ValueError):
    """A rules file or override that cannot be played; the message names the key."""


HEIGHT_KEYS = ("h1", "h2", "h3", "h4", "capitals")

# key path -> (minimum, maximum) for every integer of the rules; lists/tables checked below.
INT_RANGES: dict[str, tuple[int, int]] = {
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
    "experiment.give_seat": (0, L.MAXP - 1),
}
for _h in range(1, 6):
    INT_RANGES[f"height_vp.{_h}"] = (0, 99)
for _k in HEIGHT_KEYS:
    for _sec in ("height_majority", "height_majority_tie"):
        INT_RANGES[f"{_sec}.{_k}"] = (0, 999)
    for _sub in ("column_vp", "height_vp", "height_tie_vp"):
        INT_RANGES[f"governor.{_sub}.{_k}"] = (0, 999)
for _n in ("2", "3", "4"):
    INT_RANGES[f"temple.columns.{_n}"] = (1, L.MAXC)
    INT_RANGES[f"players.workers_on_site.{_n}"] = (1, 2)


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
    if not isinstance(name, str) or name not in L.TYPE_NAMES:
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
        if not isinstance(action, str) or action not in L.SITE_ACTIONS:
            raise RulesError(f"{where}.action: unknown action {action!r} (expected one of {', '.join(L.SITE_ACTIONS)})")
        kind, pattern = L.SITE_ACTIONS[action]
        for key, owner in _LIST_KEYS.items():
            if key in sp and action != owner:
                raise RulesError(f"{where}: only a {owner} space has '{key}'; this space is {action!r}")
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


# The [experiment] table (P11, P12) at its shipped values: rules holding it so hash as if it
# were not there, so every run made before the table existed keeps its hash and resumes.
EXPERIMENT_DEFAULTS = {"give": "", "give_seat": 0, "remove": ""}
CARD_KEYS = ("experiment.give", "experiment.remove")


def _card_index(data: dict, dotted: str) -> int:
    """The card (effect, or 12 + tile) a card key names, -1 for none."""
    name = _get(data, dotted)
    if name == "":
        return -1
    if not isinstance(name, str) or name not in L.CARD_NAMES:
        raise RulesError(f"rules key '{dotted}' must be {allowed(dotted)}, got {name!r}")
    return L.CARD_NAMES.index(name)


def _validate_experiment(data: dict) -> tuple[int, int, int]:
    """(card given, its seat, card removed) of the [experiment] table."""
    give, remove = (_card_index(data, key) for key in CARD_KEYS)
    if give >= 0 and give == remove:
        raise RulesError(f"rules keys 'experiment.give' and 'experiment.remove' both name "
                         f"{L.CARD_NAMES[give]!r}: a card cannot be given and taken out of the game at once")
    return give, data["experiment"]["give_seat"], remove


# Mechanism switches (docs/RULES.md V3-V5): rules key -> its values, the rulebook's first (the
# names live in layout, beside the codes the engine reads). Rules written before a switch existed
# (a run's manifest) read it at the rulebook's value, and a switch at that value is left out of the
# rules hash, so every run made before it keeps its hash and resumes.
SWITCHES = {
    "end.after_trigger": L.AFTER_TRIGGER_NAMES,
    "end.tie_break": L.TIE_BREAK_NAMES,
    "setup.placement_order": L.PLACEMENT_ORDER_NAMES,
}
SWITCH_WORDS = {
    "end.after_trigger": {"finish_round": "the rulebook's D16: the round is finished",
                          "finish_turn": "the game ends with the triggering turn",
                          "one_more_turn": "every player plays one more turn, the triggering seat last"},
    "end.tie_break": {"rulebook": "the rulebook's D18: fewer parts left, then the later seat",
                      "shared": "seats tied on VP share the victory, recorded by lot"},
    "setup.placement_order": {"seat_order": "the rulebook's D20: the start player places first",
                              "reverse": "the last seat places first"},
}


def _with_switches(data: dict) -> dict:
    """``data`` with every mechanism switch it lacks at the rulebook's value (its table too)."""
    out = dict(data)
    for dotted, values in SWITCHES.items():
        table, key = dotted.split(".")
        node = out.get(table)
        if node is None:
            node = {}
        elif not isinstance(node, dict):
            raise RulesError(f"rules key '{table}' must be a table, got {node!r}")
        if key not in node:
            out[table] = {**node, key: values[0]}
    return out


def _validate_switches(data: dict) -> tuple[int, ...]:
    """The code of each mechanism switch (in ``SWITCHES`` order)."""
    codes = []
    for dotted, values in SWITCHES.items():
        value = _get(data, dotted)
        if value not in values:
            raise RulesError(f"rules key '{dotted}' must be {allowed(dotted)}, got {value!r}")
        codes.append(values.index(value))
    return tuple(codes)


def switch_value(rules: "Rules", dotted: str) -> str:
    """A mechanism switch's value in ``rules`` (``end.tie_break`` ...)."""
    table, key = dotted.split(".")
    return rules.data[table][key]


def gift_seat_problem(rules: "Rules", n_players: int) -> str | None:
    """Why rules that give a card to a seat cannot be played by ``n_players`` (the seat is not
    at the table), or None."""
    exp = rules.data["experiment"]
    if exp["give"] and exp["give_seat"] >= n_players:
        return (f"rules key 'experiment.give_seat' is {exp['give_seat']}, but {n_players} players sit in "
                f"seats 0 to {n_players - 1}")
    return None


def player_count_problem(rules: "Rules", n_players: int) -> str | None:
    """Why ``rules`` cannot be played by ``n_players`` (a count the engine takes, 2 to 4): outside
    their players.min..players.max, or a gift to a seat not at the table; or None. The one
    player-count check of the command line and the runner."""
    lo, hi = rules.data["players"]["min"], rules.data["players"]["max"]
    if not lo <= n_players <= hi:
        return f"player count {n_players} is outside the rules' players.min..players.max ({lo} to {hi})"
    return gift_seat_problem(rules, n_players)


@dataclass(frozen=True)
class Rules:
    """Immutable, validated rules: the resolved data, its hash and the packed engine array."""

    data: dict = field(repr=False)
    packed: np.ndarray = field(repr=False)
    hash: str
    # where the rules came from: the --rules file and the --set overrides (not part of the hash)
    source: str | None = field(default=None, compare=False)
    overrides: tuple[str, ...] = field(default=(), compare=False)

    def columns(self, n_players: int) -> int:
        return int(self.packed[L.R_NCOLS + n_players])

    @property
    def shared_victory(self) -> bool:
        """V4: seats tied on VP share the victory (``end.tie_break = "shared"``)."""
        return int(self.packed[L.R_TIE_BREAK]) == L.TIE_SHARED

    def half_points(self, n_players: int) -> np.ndarray:
        """Per seat of an ``n_players`` game: 1 when its starting VP carry the half point (V2)."""
        return self.packed[L.R_START_HALF:L.R_START_HALF + n_players].astype(np.int64)

    @property
    def n_spaces(self) -> int:
        return int(self.packed[L.R_NSPACES])

    def space_name(self, s: int) -> str:
        """Space ``s`` as a sentence names it, in the rulebook's words (``names.space_words``)."""
        return space_words(s, self.data["board"]["spaces"][s])

    def to_json(self) -> str:
        return json.dumps(self.data, sort_keys=True, ensure_ascii=False)


def _pack(data: dict, spaces: list[tuple[int, int, int]], experiment: tuple[int, int, int],
          switches: tuple[int, ...]) -> np.ndarray:
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
    for p, value in enumerate(data["players"]["start_vp"]):
        P[L.R_START_VP + p] = int(value)                   # the whole VP (values are at least 0)
        P[L.R_START_HALF + p] = value != int(value)        # x.5: the half point (V2)
    P[L.R_GIVE], P[L.R_GIVE_SEAT], P[L.R_REMOVE] = experiment
    P[L.R_AFTER_TRIGGER], P[L.R_TIE_BREAK], P[L.R_PLACEMENT_ORDER] = switches
    P.setflags(write=False)
    return P


START_VP_MAX = 999


def _start_vp_values(values) -> list[int | float] | None:
    """``players.start_vp`` as the rules hold it, or None if it is not 1 to 4 multiples of 0.5
    from 0 to ``START_VP_MAX``: whole values as ``int`` (``2.0`` too, so a whole-number variant
    keeps its rules hash however it is written), ``x.5`` as ``float`` (V2's half point)."""
    if not isinstance(values, list) or not 1 <= len(values) <= L.MAXP:
        return None
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= START_VP_MAX \
                or (2 * v) % 1 != 0:               # NaN fails the range, 2.3 the half steps
            return None
        out.append(int(v) if v == int(v) else float(v))
    return out


def start_vp_text(values) -> str:
    """Starting VP as ``--set players.start_vp=`` takes them: ``2.5,2.5,2.5,0``."""
    return ",".join(str(int(v)) if v == int(v) else str(float(v)) for v in values)


def _start_vp(data: dict) -> list[int | float]:
    """``players.start_vp``, a variant key (the rulebook gives no starting VP): the VP each seat
    starts with, seat 0 first. 1 to 4 multiples of 0.5 (``x.5``: x VP and a half point that breaks
    ties only, V2); seats past the list start with 0, and a game of n players reads the first n.
    Absent (a rules file or run from before the key existed): every seat starts with 0."""
    players = data.get("players") if isinstance(data.get("players"), dict) else {}
    given = players.get("start_vp", [0] * L.MAXP)
    values = _start_vp_values(given)
    if values is None:
        raise RulesError(f"rules key 'players.start_vp' must be {allowed('players.start_vp')}, got {given!r}")
    return values + [0] * (L.MAXP - len(values))


def _hashed(data: dict) -> dict:
    """What the rules hash covers: everything, but a variant key or the [experiment] table at its
    neutral value is left out, so rules (and run folders) from before it existed keep their hash."""
    out = data
    if not any(data["players"]["start_vp"]):
        out = dict(out, players={k: v for k, v in data["players"].items() if k != "start_vp"})
    if data.get("experiment") == EXPERIMENT_DEFAULTS:
        out = {k: v for k, v in out.items() if k != "experiment"}
    for dotted, values in SWITCHES.items():
        table, key = dotted.split(".")
        if out[table][key] == values[0]:
            rest = {k: v for k, v in out[table].items() if k != key}
            out = {k: v for k, v in out.items() if k != table}
            if rest:
                out[table] = rest
    return out


def validate(data: dict) -> Rules:
    """Check every key of a complete rules table and build the :class:`Rules`. Rules written
    before the [experiment] table existed (a run's manifest) get it at its shipped values."""
    if isinstance(data.get("players"), dict):
        data = dict(data, players=dict(data["players"], start_vp=_start_vp(data)))
    if isinstance(data, dict) and "experiment" not in data:
        data = {**data, "experiment": dict(EXPERIMENT_DEFAULTS)}
    data = _with_switches(data)
    for dotted, (lo, hi) in INT_RANGES.items():
        _check_int(data, dotted, lo, hi)
    values = _get(data, "emperor_tile.values")
    if (not isinstance(values, list) or len(values) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 99 for v in values)):
        raise RulesError(f"rules key 'emperor_tile.values' must be 2 whole numbers (front, back) from 0 to 99, got {values!r}")
    if data["players"]["min"] > data["players"]["max"]:
        raise RulesError("rules key 'players.min' is larger than 'players.max'")
    experiment = _validate_experiment(data)
    switches = _validate_switches(data)
    spaces = _validate_board(data)
    for n in range(2, L.MAXP + 1):
        pieces = n * data["players"]["workers_on_site"][str(n)] + 1
        need = 3 * pieces + 1
        if len(spaces) < need:
            raise RulesError(
                f"board too small: {len(spaces)} spaces, but {n} players put {pieces} pieces on the site "
                f"(workers + Centurion) and D2 needs at least 3 * {pieces} + 1 = {need}")
    packed = _pack(data, spaces, experiment, switches)
    digest = hashlib.sha256(json.dumps(_hashed(data), sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]
    return Rules(data=copy.deepcopy(data), packed=packed, hash=digest)


def _read_toml(path: Path) -> dict:
    return read_toml(path, "rules file", RulesError)


_DEFAULT: Rules | None = None


def load_rules(path: str | Path | None = None, overrides=()) -> Rules:
    """The shipped rules, or a designer's full or partial file merged over them, then the
    ``KEY=VALUE`` overrides (:func:`apply_overrides`); the result is validated as a whole."""
    global _DEFAULT
    overrides = tuple(overrides or ())
    if path is None and not overrides:
        if _DEFAULT is None:
            _DEFAULT = validate(_read_toml(default_rules_path()))
        return _DEFAULT
    data = _read_toml(default_rules_path())
    if path is not None:
        data = _deep_merge(data, _read_toml(Path(path)))
    if overrides:
        data = apply_overrides(data, overrides)
    rules = validate(data)
    return Rules(rules.data, rules.packed, rules.hash,
                 source=str(path) if path is not None else None, overrides=overrides)


# ---------------------------------------------------------------------------------------------
# KEY=VALUE overrides (--set)
# ---------------------------------------------------------------------------------------------
SPACE_KEYS = ("colour", "action", "stacks", "types")
_LIST_KEYS = {"stacks": "draw2", "types": "temple"}


def flatten(node, prefix: str = "", spaces: tuple | None = None):
    """(dotted key, value) of every leaf of a rules table, board spaces by index: the keys
    ``--set`` and ``evora rules`` name. The one walk over a rules table (the key list, the
    differences from the shipped rules and the report's names all read it). ``spaces``: the keys
    of every board space, whether the space holds them or not (None for a key it does not hold)."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from flatten(v, f"{prefix}{k}.", spaces)
    elif isinstance(node, list) and node and all(isinstance(x, dict) for x in node):
        for i, x in enumerate(node):
            if spaces is not None and prefix == "board.spaces.":
                for k in spaces:
                    yield f"{prefix}{i}.{k}", x.get(k)
            else:
                yield from flatten(x, f"{prefix}{i}.", spaces)
    else:
        yield prefix[:-1], node


def rule_keys(data: dict | None = None) -> list[str]:
    """Every key ``--set`` accepts, as dotted paths (board spaces by index: board.spaces.5.action)."""
    if data is None:
        data = load_rules().data
    return [key for key, _ in flatten(data, spaces=SPACE_KEYS)]


def differences(data: dict, default: dict | None = None) -> list[tuple[str, Any, Any]]:
    """(key, default value, this value) of every rules key whose value in ``data`` differs from
    ``default`` (the shipped rules), in the order of ``data``'s keys, then those only ``default``
    holds. The one rules diff: the variant titles of the reports and the partial rules file of
    :func:`partial_toml` are both made from it."""
    if default is None:
        default = load_rules().data
    a, b = dict(flatten(default)), dict(flatten(data))
    return [(k, a.get(k), b.get(k)) for k in list(b) + [k for k in a if k not in b] if a.get(k) != b.get(k)]


def allowed(dotted: str) -> str:
    """What a key accepts, in words (for messages)."""
    generic = re.sub(r"^board\.spaces\.\d+\.", "board.spaces.N.", dotted)
    if dotted in INT_RANGES:
        lo, hi = INT_RANGES[dotted]
        return f"a whole number from {lo} to {hi}"
    if dotted == "players.start_vp":
        return (f"1 to {L.MAXP} numbers from 0 to {START_VP_MAX} in steps of 0.5, comma-separated: the VP each "
                "seat starts with, seat 0 first (seats past the list start with 0; x.5 is x VP and a half "
                "point that breaks ties only), e.g. 0,0,0,8 or 2.5,2.5,2.5,0")
    if dotted in CARD_KEYS:
        return "a card effect or instant tile, or \"\" for none: " + ", ".join(L.CARD_NAMES)
    if dotted in SWITCHES:
        return "one of " + "; ".join(f"{v} ({SWITCH_WORDS[dotted][v]})" for v in SWITCHES[dotted])
    if dotted == "emperor_tile.values":
        return "2 whole numbers from 0 to 99, comma-separated (front,back), e.g. 3,5"
    if generic == "board.spaces.N.colour":
        return "one of " + ", ".join(L.TYPE_NAMES)
    if generic == "board.spaces.N.action":
        return "one of " + ", ".join(L.SITE_ACTIONS)
    if generic == "board.spaces.N.stacks":
        return "2 card types, comma-separated, e.g. governor,emperor; types: " + ", ".join(L.TYPE_NAMES)
    if generic == "board.spaces.N.types":
        return "1 to 4 card types, comma-separated, e.g. governor,architect; types: " + ", ".join(L.TYPE_NAMES)
    return "text"


def _unknown_key(dotted: str, keys: list[str]) -> RulesError:
    m = re.fullmatch(r"board\.spaces\.([0-9]+)\.(\w+)", dotted, re.ASCII)
    n_spaces = sum(1 for k in keys if k.startswith("board.spaces.") and k.endswith(".action"))
    if m and not (is_whole_number(m.group(1)) and whole_number(m.group(1)) < n_spaces):
        return RulesError(f"--set {_shown(dotted)}: the board has {n_spaces} spaces, numbered 0 to {n_spaces - 1} "
                          f"(a --rules file can give another board)")
    if m and m.group(2) not in SPACE_KEYS:
        return RulesError(f"--set {dotted}: unknown key '{m.group(2)}' of a board space "
                          f"(expected {', '.join(SPACE_KEYS)})")
    # a table named instead of one of its keys: list that table's keys
    inside = [k for k in keys if k.startswith(dotted + ".")]
    if inside:
        shown = ", ".join(inside[:8]) + (" ..." if len(inside) > 8 else "")
        return RulesError(f"--set {dotted}: '{dotted}' is a table, not a value; set one of its keys: {shown}")
    near = difflib.get_close_matches(dotted, keys, n=4, cutoff=0.5)
    if not near:
        top = sorted({k.split(".")[0] for k in keys})
        return RulesError(f"--set {dotted}: unknown rules key '{dotted}' (the rules' tables: {', '.join(top)})")
    return RulesError(f"--set {dotted}: unknown rules key '{dotted}'; nearest valid keys: {', '.join(near)}")


def _parse_int(text: str, dotted: str) -> int:
    try:
        return whole_number(text)
    except ValueError:
        raise RulesError(f"--set {dotted}={_shown(text)}: rules key '{dotted}' takes {allowed(dotted)}, "
                         f"got {_shown(text)!r}") from None


def _shown(text: str) -> str:
    """A value as a message shows it: a value of thousands of characters is cut."""
    return text if len(text) <= 40 else f"{text[:20]}...({len(text):,} characters)"


def _parse_half(text: str, dotted: str) -> int | float:
    """A whole number or one with a decimal point (``2.5``); whether it is a multiple of 0.5 in
    range is :func:`_start_vp_values`'s to say."""
    t = text.strip()
    whole, point, tenths = t.partition(".")
    if not is_whole_number(whole) or (point and not re.fullmatch(r"[0-9]{1,6}", tenths, re.ASCII)):
        raise RulesError(f"--set {dotted}={_shown(text)}: rules key '{dotted}' takes {allowed(dotted)}, "
                         f"got {_shown(text)!r}")
    return float(t) if tenths else whole_number(whole)


def _parse_value(dotted: str, text: str, current: Any) -> Any:
    """``text`` read by the type of the value it replaces (or, for a board space's stacks or
    types, as a list of names)."""
    leaf = dotted.rsplit(".", 1)[-1]
    if dotted.startswith("board.spaces.") and leaf in _LIST_KEYS:
        items = [x.strip() for x in text.split(",") if x.strip()]
        if not items:
            raise RulesError(f"--set {dotted}={text}: rules key '{dotted}' takes {allowed(dotted)}")
        return items
    if isinstance(current, bool):
        raise RulesError(f"--set {dotted}: not a settable key")
    if isinstance(current, int):
        return _parse_int(text, dotted)
    if dotted == "players.start_vp":
        return [_parse_half(x, dotted) for x in text.split(",")]
    if isinstance(current, list):
        items = [x for x in text.split(",")]
        return [_parse_int(x, dotted) for x in items]
    return text


def apply_overrides(data: dict, assignments) -> dict:
    """A copy of the rules ``data`` with each ``KEY=VALUE`` of ``assignments`` applied: KEY a
    dotted path into the tables (``height_vp.3``, ``majority.column_vp``) with list indexes for
    board spaces (``board.spaces.5.action``); VALUE read by the type of the value it replaces
    (a whole number, numbers ``4,6``, a name, names ``governor,emperor``). Every key and value
    is checked here; the whole result is checked by :func:`validate`. Setting a space's action
    drops its ``stacks``/``types`` when the new action does not use them."""
    if isinstance(assignments, str):
        assignments = [assignments]
    out = copy.deepcopy(data)
    keys = rule_keys(data)
    keyset = set(keys)
    explicit: set[str] = set()
    touched: set[int] = set()
    for item in assignments:
        if not isinstance(item, str) or "=" not in item:
            raise RulesError(f"--set {item!r}: expected KEY=VALUE, e.g. height_vp.3=2")
        dotted, text = item.split("=", 1)
        dotted = dotted.strip()
        if dotted not in keyset:
            raise _unknown_key(dotted, keys)
        parts = dotted.split(".")
        node: Any = out
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        leaf = parts[-1]
        value = _parse_value(dotted, text, node.get(leaf))
        if dotted in INT_RANGES:
            lo, hi = INT_RANGES[dotted]
            if not lo <= value <= hi:
                raise RulesError(f"--set {item}: rules key '{dotted}' takes {allowed(dotted)}, got {value}")
        if dotted == "players.start_vp" and _start_vp_values(value) is None:
            raise RulesError(f"--set {item}: rules key '{dotted}' takes {allowed(dotted)}")
        node[leaf] = value
        explicit.add(dotted)
        if dotted.startswith("board.spaces."):
            touched.add(int(parts[2]))
    for i in sorted(touched):
        sp = out["board"]["spaces"][i]
        for key, action in _LIST_KEYS.items():
            if key in sp and sp.get("action") != action:
                where = f"board.spaces.{i}.{key}"
                if where in explicit:
                    raise RulesError(f"--set {where}: only a {action} space has {key}; space {i} is "
                                     f"{sp.get('action')!r} (set board.spaces.{i}.action={action} too)")
                del sp[key]                   # left over from the action this space had before
        needed = {"draw2": "stacks", "temple": "types"}.get(sp.get("action"))
        if needed and needed not in sp:
            where = f"board.spaces.{i}.{needed}"
            raise RulesError(f"--set board.spaces.{i}.action={sp['action']} needs {where} too: "
                             f"--set {where}=... ({allowed(where)})")
    return out


# ---------------------------------------------------------------------------------------------
# a variant as a rules file
# ---------------------------------------------------------------------------------------------
def partial_toml(rules: Rules, header: str = "") -> str:
    """The rules as a partial rules file over the shipped ones: only what differs (the board's
    spaces whole, as a rules file replaces that list whole), so ``--rules FILE`` gives back rules
    with the same hash."""
    default = validate(_read_toml(default_rules_path())).data
    lines = toml_comment(header)
    for table, value in rules.data.items():
        if table == "board":
            if value.get("spaces") != default["board"]["spaces"]:
                for space in value["spaces"]:
                    lines += ["", "[[board.spaces]]"] + [f"{k} = {toml_value(v)}" for k, v in space.items()]
            continue
        diffs = [(key.split(".")[1:], v) for key, _, v in differences({table: value}, {table: default.get(table)})
                 if key.startswith(f"{table}.") and v is not None] if isinstance(value, dict) else []
        if diffs:
            lines += ["", f"[{toml_key(table)}]"] + [f"{'.'.join(map(toml_key, k))} = {toml_value(v)}" for k, v in diffs]
    return "\n".join(lines).lstrip("\n") + "\n"
