"""Strategy specs: the one parser from text to strategies, used by the command line and the
Python API alike.

A spec list is comma-separated at the top level only (commas inside parentheses belong to the
inline weights), in seat order, or a single spec for every seat::

    greedy
    greedy,random,greedy,random
    balanced(column=2, emperor=0.5),random

Each spec is one of:

- ``NAME``: a built-in (``evora strategies`` lists them), or failing that an entry point of the
  group ``evora_sim.strategies`` (a custom Python strategy of an installed package);
- ``NAME(feature=weight, ...)``: a built-in heuristic with some weights changed; the weight
  names are the features of :data:`strategies.compiled.FEATURES`. The option ``plan=turn``
  (the default: each decision valued by the best end of the turn it leads to) or
  ``plan=action`` (each decision valued alone, workers moved at random: the heuristics before
  turn planning) goes in the same parentheses: ``greedy(plan=action, column=2)``;
- ``FILE.toml:NAME``: the weight set ``[NAME]`` of a designer's TOML file, whose tables hold
  ``weights = {feature = number, ...}``, optionally ``description = "..."`` and
  ``base = "BUILTIN"`` (start from that built-in's weights; ``weights`` then changes some) and
  ``plan = "action"``; it too takes inline weights: ``FILE.toml:NAME(vp=2)``;
- ``FILE.py:NAME``: a custom Python strategy (:mod:`strategies.custom`).

A strategy's ``name`` is its spec normalised: built-in names in lower case, ``plan=action``
first when given (the default ``plan=turn`` is not written), inline weights in FEATURES order as
``feature=number``, a Python file by its absolute path. Run tables and
manifests use it, so ``balanced(column=2)`` is the name of that strategy everywhere.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from evora_sim.tomlfile import read_toml

from .builtin import BUILTINS, DEFAULT_PLAN, NAMES, PLANS, Strategy
from .compiled import FEATURES, KIND_RANDOM
from .custom import CustomStrategy, entry_points, from_entry_point, from_file
from .custom import from_resolved as _custom_from_resolved
from .errors import StrategyError
from .features import FEATURE_NAMES
from .learned import FORMAT as LEARNED_FORMAT
from .learned import LearnedWeights, check_table, is_learned_table, shipped_expert
from . import values
from .compiled import WIDTH
from .search_spec import NAME as SEARCH_NAME
from .search_spec import from_resolved_search, learned_row, parse_mcts, resolved_search, search_row, search_tree_size, split_options
from .search_spec import turn_tree_shape as search_turn_tree_shape

# built-in name -> compiled id (the id is the name's position in builtin.NAMES)
STRATEGY_IDS: dict[str, int] = {name: sid for sid, name in enumerate(NAMES)}
EXPERT_NAME = "expert"     # the learned player shipped in strategies/data/expert.toml

_FILE_KEYS = {"weights", "description", "base", "plan"}
FORMS = "NAME(feature=weight, ...), FILE.toml:NAME, FILE.py:NAME, mcts(option=value, ...)"
_HINTS = {"majority": "column (the column majorities)", "heights": "h1, h2, h3, h4 and capitals",
          "capital": "capitals", "card": "cards", "tile": "tiles", "part": "parts"}


def known_names() -> str:
    """The built-in names, then any installed entry-point strategies."""
    extra = sorted(n for n in _entry_point_names() if n not in STRATEGY_IDS)
    return ", ".join(sorted(list(STRATEGY_IDS) + [SEARCH_NAME, EXPERT_NAME]) + extra)


def _entry_point_names() -> list[str]:
    try:
        return list(entry_points())
    except Exception:       # a broken installation must not hide the built-ins
        return []


def format_number(x: float) -> str:
    """2.0 -> '2', 0.5 -> '0.5': the shortest text that reads back as the same float."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else repr(float(x))


def format_weights(weights: dict[str, float]) -> str:
    return ", ".join(f"{f}={format_number(weights[f])}" for f in FEATURES if f in weights)


# ---------------------------------------------------------------------------------------------
# splitting
# ---------------------------------------------------------------------------------------------
def split_specs(text: str) -> list[str]:
    """The specs of a comma-separated list; commas inside parentheses stay with their spec."""
    if not isinstance(text, str) or not text.strip():
        raise StrategyError(f"no strategy given (known strategies: {known_names()})")
    items, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise StrategyError(f"strategies {text.strip()!r}: ')' without '(' at character {i + 1}")
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    if depth:
        raise StrategyError(f"strategies {text.strip()!r}: '(' without ')'")
    items.append(text[start:])
    return [item.strip() for item in items]


def _split_call(spec: str) -> tuple[str, str | None]:
    """('base', 'k=v, ...') for ``base(k=v, ...)``, ('base', None) without parentheses."""
    if "(" not in spec and ")" not in spec:
        return spec, None
    open_ = spec.find("(")
    if not spec.endswith(")") or open_ < 0 or spec.count("(") != 1 or spec.count(")") != 1:
        raise StrategyError(f"strategy {spec!r}: inline weights are written NAME(feature=weight, ...)")
    return spec[:open_].strip(), spec[open_ + 1:-1]


def _parse_options(spec: str, body: str) -> tuple[dict[str, float], str | None]:
    """The inline ``feature=weight`` pairs and the ``plan=`` option (None if not given)."""
    out: dict[str, float] = {}
    plan = None
    for part in body.split(","):
        part = part.strip()
        if not part:
            if body.strip():
                raise StrategyError(f"strategy {spec!r}: empty weight between commas")
            continue
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key:
            raise StrategyError(f"strategy {spec!r}: {part!r} is not feature=weight")
        if key.lower() == "plan":
            if plan is not None:
                raise StrategyError(f"strategy {spec!r}: plan given twice")
            plan = _plan(spec, value)
            continue
        out_key = _feature(spec, key)
        if out_key in out:
            raise StrategyError(f"strategy {spec!r}: weight {out_key!r} given twice")
        out[out_key] = _number(spec, out_key, value)
    return out, plan


def _plan(spec: str, value) -> str:
    name = value.strip().lower() if isinstance(value, str) else value
    if name not in PLANS:
        raise StrategyError(f"strategy {spec!r}: plan={value!r} is not allowed (plan is one of: "
                            f"{', '.join(PLANS)})")
    return name


def _feature(spec: str, key) -> str:
    name = str(key).strip().lower()
    if name not in FEATURES:
        hint = f"; did you mean {_HINTS[name]}?" if name in _HINTS else ""
        raise StrategyError(f"strategy {spec!r}: unknown weight {str(key)!r} (weights are the "
                            f"features: {', '.join(FEATURES)}{hint})")
    return name



def _number(spec: str, key: str, value, text: bool = True) -> float:
    """A weight: a number, or with ``text`` the text of one (an inline spec); ``values.WEIGHT_RANGE``."""
    return values.weight(value, f"strategy {spec!r}: weight {key}", StrategyError, text=text)


# ---------------------------------------------------------------------------------------------
# one spec
# ---------------------------------------------------------------------------------------------
def _heuristic(name: str, base: Strategy | None, weights: dict[str, float], description: str,
               plan: str | None) -> Strategy:
    """A heuristic from ``base``'s weights with ``weights`` changed; ``plan`` None keeps the
    base's plan (the default plan without a base)."""
    vec = list(base.weights) if base is not None else [0.0] * len(FEATURES)
    for f, w in weights.items():
        vec[FEATURES.index(f)] = w
    if plan is None:
        plan = base.plan if base is not None else DEFAULT_PLAN
    return Strategy(name, PLANS[plan], tuple(float(x) for x in vec), description)


def _builtin(spec: str, name: str) -> Strategy | None:
    key = name.strip().lower()
    return BUILTINS[STRATEGY_IDS[key]] if key in STRATEGY_IDS else None


def _weight_file(spec: str, path: str, set_name: str) -> tuple[Strategy, str]:
    """The weight set ``set_name`` of TOML file ``path``, and its description."""
    p = Path(path).expanduser()
    if not p.is_file():
        raise StrategyError(f"strategy {spec!r}: weight file {path} not found" if not p.exists()
                            else f"strategy {spec!r}: weight file {path} is not a file")
    data = read_toml(p, "weight file", lambda line: StrategyError(f"strategy {spec!r}: {line}"))
    sets = {k: v for k, v in data.items() if isinstance(v, dict)}
    if set_name not in sets:
        raise StrategyError(f"strategy {spec!r}: weight file {path} has no weight set [{set_name}] "
                            f"(it has: {', '.join(sets) or 'none'})")
    entry = sets[set_name]
    where = f"weight file {path} [{set_name}]"
    if is_learned_table(entry):
        return learned_strategy(spec, f"{path}:{set_name}", _learned(spec, entry, where)), entry.get("description", "")
    unknown = sorted(set(entry) - _FILE_KEYS)
    if unknown:
        raise StrategyError(f"strategy {spec!r}: {where}: unknown key(s) {', '.join(unknown)} "
                            f"(a weight set has weights, description, base)")
    base = None
    if "base" in entry:
        b = entry["base"]
        base = _builtin(spec, b) if isinstance(b, str) else None
        if base is None:
            raise StrategyError(f"strategy {spec!r}: {where}: base {b!r} is not a built-in "
                                f"(built-ins: {', '.join(NAMES)})")
        if not base.is_heuristic:
            raise StrategyError(f"strategy {spec!r}: {where}: base {b!r} has no weights to start from")
    weights = entry.get("weights")
    if weights is None and base is None:
        raise StrategyError(f"strategy {spec!r}: {where} has no weights = {{feature = number, ...}}")
    if weights is not None and not isinstance(weights, dict):
        raise StrategyError(f"strategy {spec!r}: {where}: weights must be a table "
                            "{feature = number, ...}")
    parsed = {}
    for k, v in (weights or {}).items():
        f = _feature(spec, k)
        parsed[f] = _number(spec, f, v, text=False)
    description = entry.get("description", "")
    if not isinstance(description, str):
        raise StrategyError(f"strategy {spec!r}: {where}: description must be text")
    plan = _plan(f"{spec}: {where}", entry["plan"]) if "plan" in entry else None
    return _heuristic(spec, base, parsed, description, plan), description


def _learned(spec: str, entry: dict, where: str) -> LearnedWeights:
    def error(line):
        return StrategyError(f"strategy {spec!r}: {line}")
    return check_table(entry, where, error)


def learned_strategy(spec: str, name: str, weights: LearnedWeights) -> Strategy:
    """A turn planner valuing positions by the learned ``weights`` (its player counts')."""
    return Strategy(name, PLANS[DEFAULT_PLAN], description=weights.description, learned=weights.weights,
                    replies=weights.replies, ahead_from=weights.ahead_from, rules_hash=weights.rules_hash or "")


def _expert(spec: str, body: str | None) -> Strategy:
    """The built-in expert; ``expert(replies=K)`` looks a round ahead from its K best turns at every
    player count (0: plans one ply), and ``ahead_from=T`` only once the game's progress is T
    (default 0: from the start), instead of what its weights file says per count."""
    def error(line):
        return StrategyError(f"strategy {spec!r}: {line}")

    weights = shipped_expert(error)
    if body is None:
        return learned_strategy(spec, EXPERT_NAME, weights)
    options = split_options(spec, body)
    keys = [key for key, _ in options]
    unknown = [key for key in keys if key not in ("replies", "ahead_from")]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if unknown or twice or "replies" not in keys:
        cause = (f"unknown option {', '.join(unknown)}" if unknown else f"{', '.join(twice)} given twice" if twice
                 else f"ahead_from needs replies=K beside it ({EXPERT_NAME}(replies=4, ahead_from=0.5))")
        raise error(f"{cause}: {EXPERT_NAME} takes replies=K (its K best turns looked at a round ahead), and with "
                    f"it ahead_from=T (only from progress T of the game on, 0 to 1); its weights are learned: "
                    f"train other ones with evora train and name their file: FILE.toml:{EXPERT_NAME}")
    given = dict(options)
    k = values.replies(given["replies"], "replies", error)
    t = values.ahead_from(given.get("ahead_from", 0), "ahead_from", error)
    name = f"{EXPERT_NAME}(replies={k}" + (f", ahead_from={t:g})" if k and t else ")")
    return replace(learned_strategy(spec, name, weights), replies=tuple((n, k) for n in weights.counts if k),
                   ahead_from=tuple((n, t) for n in weights.counts if k and t))


def parse_spec(text: str):
    """One spec -> a :class:`~strategies.builtin.Strategy` (compiled) or a
    :class:`~strategies.custom.CustomStrategy` (Python), named by its normalised spec."""
    if isinstance(text, (Strategy, CustomStrategy)):
        return text
    if not isinstance(text, str):
        raise StrategyError(f"not a strategy spec: {text!r}")
    spec = text.strip()
    if not spec:
        raise StrategyError(f"empty strategy name (known strategies: {known_names()})")
    head = spec.split("(", 1)[0].strip()
    if head.lower() == SEARCH_NAME:
        if "(" in spec and not spec.endswith(")"):
            raise StrategyError(f"strategy {spec!r}: options are written mcts(option=value, ...)")
        return parse_mcts(spec, spec[spec.index("(") + 1:-1] if "(" in spec else None, parse_spec)
    base_text, body = _split_call(spec)
    if not base_text:
        raise StrategyError(f"strategy {spec!r}: no strategy name before '('")
    if base_text.lower() == EXPERT_NAME:
        return _expert(spec, body)

    if ":" in base_text:
        path, _, obj_name = base_text.rpartition(":")
        path, obj_name = path.strip(), obj_name.strip()
        if not path or not obj_name:
            raise StrategyError(f"strategy {spec!r}: expected FILE.toml:NAME or FILE.py:NAME")
        suffix = Path(path).suffix.lower()
        if suffix == ".py":
            if body is not None:
                raise StrategyError(f"strategy {spec!r}: a Python strategy takes no weights")
            return from_file(spec, path, obj_name)
        if suffix != ".toml":
            raise StrategyError(f"strategy {spec!r}: expected FILE.toml:NAME (a weight set) or "
                                f"FILE.py:NAME (a Python strategy), got a {suffix or 'file'} without "
                                ".toml or .py")
        base, description = _weight_file(spec, path, obj_name)
        label = f"{path}:{obj_name}"
        if base.is_learned:
            if body is not None:
                raise StrategyError(f"strategy {spec!r}: learned weights take no inline weights or plan")
            return base
    else:
        base = _builtin(spec, base_text)
        if base is None:
            eps = _entry_point_names()
            if base_text in eps:
                if body is not None:
                    raise StrategyError(f"strategy {spec!r}: a Python strategy takes no weights")
                return from_entry_point(spec, base_text)
            raise StrategyError(f"unknown strategy {base_text!r} (known strategies: {known_names()}); "
                                f"other forms: {FORMS}")
        description = base.description
        label = base.name

    weights, plan = _parse_options(spec, body) if body is not None else ({}, None)
    if (weights or plan is not None) and not base.is_heuristic:
        raise StrategyError(f"strategy {spec!r}: {label} has no weights or plan to change (it "
                            "evaluates nothing); start from a heuristic, e.g. greedy(...)")
    if plan is None or plan == base.plan:
        if not weights:
            return base if ":" not in base_text else Strategy(label, base.kind, base.weights, description)
        plan = None
    options = ([f"plan={plan}"] if plan is not None else []) + (
        [format_weights(weights)] if weights else [])
    name = f"{label}({', '.join(options)})" if options else label
    return _heuristic(name, base, weights, description, plan)


def names_strategy(spec: str, name: str) -> bool:
    """Whether the spec ``spec`` (as typed) resolves to the strategy recorded as ``name``, decided
    without running any code, for readers of folders someone else wrote: built-ins, inline
    weights and search players by parsing them, a weight set by parsing it (or, its file out of
    reach, by its text), a Python file or an entry point by its name alone (a relative file
    path matches the absolute path it was recorded as)."""
    if not isinstance(spec, str) or not isinstance(name, str):
        return False
    text = spec.strip()
    try:
        base_text = _split_call(text)[0]
    except StrategyError:
        return False
    head = base_text.split("(", 1)[0].strip().lower()
    if ":" in base_text and head != SEARCH_NAME:
        path, _, attr = base_text.rpartition(":")
        path, attr = Path(path.strip()).expanduser(), attr.strip()
        if path.suffix.lower() == ".py":
            return name == f"{path.absolute()}:{attr}" or (
                not path.is_absolute() and name.endswith(f"/{path}:{attr}"))
    elif head != SEARCH_NAME and head not in STRATEGY_IDS:
        return text == name                   # an entry point: loading it would run its code
    try:
        return parse_spec(text).name == name
    except StrategyError:
        return text == name


def resolve_each(items: list, resolve) -> list:
    """``resolve`` applied to each item; an error says which item of the list it is about."""
    out = []
    for i, item in enumerate(items):
        try:
            out.append(resolve(item))
        except StrategyError as exc:
            where = f"strategy {i + 1} of {len(items)}: " if len(items) > 1 else ""
            raise StrategyError(f"{where}{exc}") from None
    return out


def parse_strategies(text: str, n_players: int) -> list:
    """One strategy per seat from ``text``: a single spec (every seat plays it) or one spec per
    seat in seat order."""
    return per_seat(resolve_each(split_specs(text), parse_spec), n_players)


def per_seat(strategies: list, n_players: int) -> list:
    """One strategy per seat: a single strategy fills every seat, otherwise one per seat."""
    if len(strategies) == 1:
        return strategies * n_players
    if len(strategies) != n_players:
        raise StrategyError(
            f"{len(strategies)} strategies given for {n_players} seats: give one per seat "
            f"(comma-separated, in seat order) or a single one for every seat")
    return strategies


# ---------------------------------------------------------------------------------------------
# what a strategy resolved to (manifests), and back (runner workers)
# ---------------------------------------------------------------------------------------------
def resolved(strategy) -> dict:
    """What a strategy is, in plain data: kind, and its weights or code. Two specs that resolve
    differently (a weight file edited, a Python file changed) give different dicts."""
    if isinstance(strategy, CustomStrategy):
        return strategy.resolved()
    if strategy.kind == KIND_RANDOM:
        return {"kind": "random"}
    if strategy.search:
        return resolved_search(strategy, resolved)
    if strategy.is_learned:
        out = {"kind": "learned", "plan": strategy.plan,
               "players": {str(n): list(w) for n, w in strategy.learned}}
        if any(k for _, k in strategy.replies):
            out["replies"] = {str(n): k for n, k in strategy.replies if k}
        if any(t for _, t in strategy.ahead_from):
            out["ahead_from"] = {str(n): t for n, t in strategy.ahead_from if t}
        return out
    return {"kind": "heuristic", "plan": strategy.plan, "weights": dict(zip(FEATURES, strategy.weights))}


def from_resolved(name: str, info: dict, run_code: bool = True):
    """The strategy :func:`resolved` described (no file is read for a weight set), every value
    checked as the spec parser checks it (a manifest may have been edited by anyone).
    ``run_code=False`` (a report, which reads folders it did not write): a custom Python
    strategy is refused, never loaded, whatever file or checksum the description names."""
    if not isinstance(info, dict):
        raise StrategyError(f"strategy {name!r}: its recorded description is not an object")
    kind = info.get("kind")
    try:
        if kind == "custom":
            if not run_code:
                raise StrategyError(f"strategy {name!r} is custom Python code, which is run only when named on "
                                    "the command line (evora replay --strategies FILE.py:NAME), never from a "
                                    "run folder")
            return _custom_from_resolved(name, info)
        if kind == "random":
            return Strategy(name, KIND_RANDOM)
        if kind == "mcts":
            return from_resolved_search(name, info, lambda n, i: from_resolved(n, i, run_code))
        if kind == "learned":
            replies, ahead = info.get("replies", {}), info.get("ahead_from", {})
            players = {n: {"weights": w[:-1], "win": w[-1], "replies": replies.get(n, 0),
                           "ahead_from": ahead.get(n, 0.0)} for n, w in info["players"].items()}
            weights = _learned(name, {"format": LEARNED_FORMAT, "kind": "learned", "features": list(FEATURE_NAMES),
                                      "players": players}, "its recorded learned weights")
            return Strategy(name, PLANS[_plan(name, info["plan"])], learned=weights.weights,
                            replies=weights.replies, ahead_from=weights.ahead_from)
        if kind == "heuristic":
            weights = info["weights"]
            unknown = sorted(set(weights) - set(FEATURES))
            if unknown:
                raise StrategyError(f"strategy {name!r}: unknown weight {unknown[0]!r}")
            plan = _plan(name, info.get("plan", "action"))     # written before turn planning: plan=action
            return Strategy(name, PLANS[plan], tuple(_number(name, f, weights.get(f, 0.0), text=False)
                                                     for f in FEATURES))
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        if isinstance(exc, StrategyError):
            raise
        raise StrategyError(f"strategy {name!r}: its recorded description is damaged ({type(exc).__name__}: "
                            f"{exc})") from None
    raise StrategyError(f"strategy {name!r}: cannot rebuild a strategy of kind {kind!r}")


def other_rules(strategy, rules_hash: str) -> str | None:
    """One line when ``strategy``'s learned weights record that they were trained for other rules
    than ``rules_hash``'s, else None: they still play, but were not fitted to this game."""
    trained = getattr(strategy, "rules_hash", "")
    if not trained or trained == rules_hash:
        return None
    return (f"{strategy.name}'s weights were trained for other rules (rules hash {trained}; these are "
            f"{rules_hash}): it plays, but not as weights trained for these rules would (evora train)")


def is_shipped_expert(name: str, info) -> bool:
    """Whether a run's recorded strategy ``name`` with description ``info`` (:func:`resolved`) is
    this version's built-in expert. The name proves nothing (a weight file's player may be called
    expert, a manifest may be edited): the recorded weights must be the shipped ones."""
    return name == EXPERT_NAME and info == resolved(parse_spec(EXPERT_NAME))


def describe(strategy) -> dict:
    """Manifest entry of a strategy: what it resolved to, its description, and the built-in
    id of a plain built-in."""
    info = resolved(strategy)
    if getattr(strategy, "description", ""):
        info["description"] = strategy.description
    if isinstance(strategy, Strategy) and strategy.name in STRATEGY_IDS \
            and BUILTINS[STRATEGY_IDS[strategy.name]] == strategy:
        info["id"] = STRATEGY_IDS[strategy.name]
    return info


# ---------------------------------------------------------------------------------------------
# strategies for the compiled driver
# ---------------------------------------------------------------------------------------------
def as_strategy(item):
    """A strategy from a Strategy or CustomStrategy, a built-in id, or a spec string (a
    built-in name, ``balanced(column=2)``, ``FILE.toml:NAME``, ``FILE.py:NAME``)."""
    if isinstance(item, Strategy):
        return checked_strategy(item)
    if isinstance(item, CustomStrategy):
        return item
    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        if not 0 <= int(item) < len(BUILTINS):
            raise ValueError(f"not a strategy id: {item!r} (built-ins: 0..{len(BUILTINS) - 1})")
        return BUILTINS[int(item)]
    if isinstance(item, str):
        if item in NAMES:
            return BUILTINS[NAMES.index(item)]
        return parse_spec(item)
    raise ValueError(f"not a strategy: {item!r} (built-ins: {', '.join(NAMES)})")


_CHECKED: set = set()          # strategies known to be what their description says


def checked_strategy(strategy: Strategy) -> Strategy:
    """``strategy``, once it is known to hold what a spec could give it. The Python API takes
    Strategy objects, and one built by hand may hold values no spec allows (a search's candidate
    turns beyond the planner's buffer crashed the interpreter): it is rebuilt from its
    description (``resolved`` then ``from_resolved``: every value through the same checks as a
    spec's) and must match what compiled code reads of it. Once per strategy. Public: the first
    of two guards, which a test sets aside to show the compiled driver's own refusal behind it."""
    try:
        if strategy in _CHECKED:
            return strategy
    except TypeError:                   # a field that is not a tuple: the rebuild refuses it
        pass
    try:
        same = _compiled_fields(from_resolved(strategy.name, resolved(strategy), run_code=False)) == \
            _compiled_fields(strategy)
    except StrategyError:
        raise
    except (TypeError, ValueError, IndexError, KeyError, OverflowError, AttributeError) as exc:
        raise StrategyError(f"strategy {strategy.name!r}: its fields are not those of a strategy "
                            f"({type(exc).__name__}: {exc})") from None
    if not same:
        raise StrategyError(f"strategy {strategy.name!r}: its fields (kind, weights, options) do not match what it "
                            "describes; make it with parse_spec")
    if len(_CHECKED) > 1000:
        _CHECKED.clear()
    try:
        _CHECKED.add(strategy)
    except TypeError:
        pass
    return strategy


def _compiled_fields(s: Strategy) -> tuple:
    """What compiled code reads of a strategy (``seat_arrays``), in one comparable form."""
    return (s.kind, tuple(s.weights), tuple(s.search), tuple(sorted((n, tuple(w)) for n, w in s.learned)),
            tuple(sorted((n, k) for n, k in s.replies if k)), tuple(sorted((n, t) for n, t in s.ahead_from if t)))


def seat_arrays(items) -> tuple[np.ndarray, np.ndarray]:
    """(kinds int64[n], W float64[n, WIDTH]) for the compiled driver, one row per seat: the
    feature weights, then a search player's options, then a learned evaluation's (a custom
    Python strategy's row is never read by compiled code)."""
    strategies = [as_strategy(x) for x in items]
    kinds = np.array([s.kind for s in strategies], dtype=np.int64)
    n = len(strategies)
    rows = [list(s.weights) + search_row(s) + learned_row(s, n) if isinstance(s, Strategy) else [0.0] * WIDTH
            for s in strategies]
    return kinds, np.array(rows, dtype=np.float64).reshape(len(strategies), WIDTH)


def tree_nodes(items) -> int:
    """The most search-tree nodes a decision of these seats needs (``search_tree_size``; 1
    without a search player)."""
    return max([search_tree_size(s) for s in map(as_strategy, items) if getattr(s, "search", ())] or [1])


def turn_tree_shape(items) -> tuple[int, int]:
    """The most nodes, and candidate turns a node, a search over whole turns of these seats
    needs (1, 1 without one)."""
    shapes = [search_turn_tree_shape(s) for s in map(as_strategy, items) if getattr(s, "search", ())] or [(1, 1)]
    return max(n for n, _ in shapes), max(k for _, k in shapes)


__all__ = ["StrategyError", "as_strategy", "seat_arrays", "tree_nodes", "turn_tree_shape", "STRATEGY_IDS", "FORMS", "known_names", "split_specs", "parse_spec",
           "parse_strategies", "resolved", "from_resolved", "names_strategy", "describe", "format_weights",
           "format_number"]
