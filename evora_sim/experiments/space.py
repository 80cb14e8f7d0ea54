"""What a search may change, as the command line names it: ``--param KEY=LO..HI`` (a range) or
``--param KEY=A,B,C`` (a list of values).

For ``evora balance`` a KEY is a rules key (``--set`` names the same keys): a range for a key
that takes a whole number, a list for any key (values of a list-valued key separated by ``;``,
as in ``evora sweep``: ``emperor_tile.values=3,5;4,6``). Every value is checked alone against
the rules before anything runs (its range, the D2 board check), so a range the rule cannot take
is refused naming the key and what it allows. For ``evora tune strategy`` a KEY is a feature
weight (``evora strategies`` lists the features); a range is searched on a grid of about 200
steps.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

from strategies.compiled import FEATURES
from strategies.registry import format_number
from strategies.values import WEIGHT_RANGE, weight_in_range

from ..rules import INT_RANGES, Rules, RulesError, allowed, apply_overrides, load_rules, rule_keys, validate
from ..sweep import parse_param
from ..wholenumber import is_whole_number, whole_number

_RANGE = re.compile(r"^\s*([+-]?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)\s*\.\.\s*([+-]?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)\s*$",
                    re.ASCII)


@dataclass(frozen=True)
class Dim:
    """One parameter of a search: ``kind`` int, float (a range) or choice (a list of values,
    text); ``base`` its value in the baseline (the rules or weights the search starts from)."""

    key: str
    kind: str
    lo: float | None = None
    hi: float | None = None
    step: float | None = None
    choices: tuple[str, ...] = ()
    base: object = None

    def distribution(self):
        if self.kind == "int":
            return IntDistribution(int(self.lo), int(self.hi))
        if self.kind == "float":
            return FloatDistribution(float(self.lo), float(self.hi), step=self.step)
        return CategoricalDistribution(list(self.choices))

    def text(self) -> str:
        """As ``--param`` gives it."""
        if self.kind == "choice":
            return f"{self.key}={','.join(self.choices)}"
        return f"{self.key}={_num(self.lo)}..{_num(self.hi)}"

    def as_dict(self) -> dict:
        return {"key": self.key, "kind": self.kind, "lo": self.lo, "hi": self.hi, "step": self.step,
                "choices": list(self.choices), "base": self.base}

    def value(self, raw):
        """A sampled value in plain form: an int, a float rounded to the grid, a choice's text."""
        if self.kind == "int":
            return int(raw)
        if self.kind == "float":
            digits = max(0, -int(math.floor(math.log10(self.step)))) if self.step else 6
            return round(float(raw), digits)
        return str(raw)


def _num(x) -> str:
    return format_number(x)


def split_param(text: str, option: str = "--param") -> tuple[str, str]:
    if not isinstance(text, str) or "=" not in text:
        raise RulesError(f"{option} {text!r}: expected KEY=LO..HI or KEY=A,B,C")
    key, values = (x.strip() for x in text.split("=", 1))
    if not key or not values:
        raise RulesError(f"{option} {text!r}: expected KEY=LO..HI or KEY=A,B,C")
    return key, values


def _range(text: str, values: str):
    m = _RANGE.match(values)
    return (m.group(1), m.group(2)) if m else None


def _check_unique(keys: list[str]) -> None:
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise RulesError(f"--param {dup[0]} is given twice; give its range or values in one --param")


# ---------------------------------------------------------------------------------------------
# rules keys (evora balance)
# ---------------------------------------------------------------------------------------------
def base_rules(rules_path=None, overrides=()) -> Rules:
    return load_rules(rules_path, overrides)


def variant(base: Rules, sets: list[str], rules_path=None, overrides=()) -> Rules:
    """The base rules with ``sets`` (``KEY=VALUE``) applied, validated as a whole (D2 included);
    the source records the --rules file and every --set, as a run manifest shows them."""
    rules = validate(apply_overrides(base.data, sets))
    return Rules(rules.data, rules.packed, rules.hash, source=str(rules_path) if rules_path else None,
                 overrides=tuple(overrides) + tuple(sets))


def _rules_value(data: dict, key: str):
    node = data
    for part in key.split("."):
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def value_text(value) -> str:
    """A rules value as ``--set`` writes it."""
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    return str(value)


def rules_dims(params: list[str], rules_path=None, overrides=()) -> list[Dim]:
    """The rules keys of ``--param`` with their ranges or values, every value checked alone."""
    base = base_rules(rules_path, overrides)
    keys = rule_keys(base.data)
    fixed = {o.split("=", 1)[0].strip() for o in overrides}
    dims = []
    for text in params:
        key, values = split_param(text)
        if key not in keys:
            try:
                load_rules(overrides=[f"{key}=0"])
            except RulesError as exc:
                msg = str(exc)
                raise RulesError("--param " + msg[len("--set "):] if msg.startswith("--set ") else msg) from None
        if key in fixed:
            raise RulesError(f"--param {key} is also fixed by --set; drop one of them")
        current = value_text(_rules_value(base.data, key))
        bounds = _range(text, values)
        if bounds is not None:
            if key not in INT_RANGES:
                raise RulesError(f"--param {text}: a range needs a key that takes one whole number; "
                                 f"{key} takes {allowed(key)}: give its values as a list, "
                                 f"{key}=A;B (';' between values)")
            lo_t, hi_t = bounds
            if not (is_whole_number(lo_t) and is_whole_number(hi_t)):
                raise RulesError(f"--param {key}: {key} takes {allowed(key)}; give LO..HI as whole numbers "
                                 "(ASCII digits, at most 18)")
            lo, hi = whole_number(lo_t), whole_number(hi_t)
            rlo, rhi = INT_RANGES[key]
            if not (rlo <= lo < hi <= rhi):
                raise RulesError(f"--param {text}: {key} takes {allowed(key)}; give LO..HI with LO < HI "
                                 f"inside it")
            candidates = [str(v) for v in range(lo, hi + 1)]
            dim = Dim(key, "int", lo, hi, base=int(current))
        else:
            try:
                _, items = parse_param(f"{key}={values}", keys)
            except RulesError as exc:
                raise RulesError(str(exc).replace("--param ", "--param ", 1)) from None
            candidates = items
            dim = Dim(key, "choice", choices=tuple(items), base=current)
        for v in candidates:                       # each value alone: its range, the D2 board check
            try:
                variant(base, [f"{key}={v}"])
            except RulesError as exc:
                msg = str(exc)
                msg = msg[msg.index(":") + 2:] if msg.startswith("--set ") else msg
                raise RulesError(f"--param {text}: {key}={v} cannot be played: {msg}") from None
        dims.append(dim)
    if not dims:
        raise RulesError("--param is required: at least one KEY=LO..HI or KEY=A,B,C to search")
    _check_unique([d.key for d in dims])
    return dims


def rules_sets(dims: list[Dim], values: dict) -> list[str]:
    """A candidate's values as ``--set`` assignments."""
    return [f"{d.key}={value_text(values[d.key])}" for d in dims]


def changed_keys(dims: list[Dim], values: dict) -> list[str]:
    """The keys whose value differs from the baseline's."""
    return [d.key for d in dims if str(values[d.key]) != str(d.base)]


# ---------------------------------------------------------------------------------------------
# feature weights (evora tune strategy)
# ---------------------------------------------------------------------------------------------
SCALE_FEATURE = "vp"         # only the ratios of the weights matter: vp keeps its weight as the scale
DEFAULT_SPAN = 5.0            # the default range of a weight: 0 to 5 times the base's


def _grid(lo: float, hi: float) -> tuple[float, float, float]:
    """A step of about (hi - lo) / 200, a power of ten, and hi moved onto the grid."""
    step = 10.0 ** math.floor(math.log10((hi - lo) / 200))
    n = math.floor(round((hi - lo) / step, 9))
    return lo, round(lo + n * step, 12), step


def weight_dims(base, params: list[str]) -> list[Dim]:
    """The weights to search: those named by ``--param FEATURE=LO..HI`` (or ``=A,B,C``), or by
    default every weight the base gives a value, except ``vp`` (the scale) and ``win``, from 0
    to 5 times its value."""
    weights = dict(zip(FEATURES, base.weights))
    dims = []
    if not params:
        for f in FEATURES:
            w = weights[f]
            if f in (SCALE_FEATURE, "win") or w <= 0:
                continue
            lo, hi, step = _grid(0.0, DEFAULT_SPAN * w)
            dims.append(Dim(f, "float", lo, hi, step, base=w))
        if not dims:
            raise RulesError(f"strategy {base.name} has no positive weight to search besides vp and win; "
                             "name the weights with --param FEATURE=LO..HI")
        return dims
    for text in params:
        key, values = split_param(text)
        if key not in FEATURES:
            raise RulesError(f"--param {text}: unknown weight {key!r} (weights are the features: "
                             f"{', '.join(FEATURES)})")
        bounds = _range(text, values)
        if bounds is not None:
            lo, hi = float(bounds[0]), float(bounds[1])
            if not (weight_in_range(lo) and weight_in_range(hi) and lo < hi):
                raise RulesError(f"--param {text}: a weight's range is LO..HI with LO < HI; {WEIGHT_RANGE}")
            lo, hi, step = _grid(lo, hi)
            dims.append(Dim(key, "float", lo, hi, step, base=weights[key]))
            continue
        items = [v.strip() for v in values.split(",")]
        try:
            numbers = [float(v) for v in items]
        except ValueError:
            raise RulesError(f"--param {text}: a weight takes numbers, LO..HI or A,B,C") from None
        if len(set(numbers)) != len(numbers) or not all(weight_in_range(x) for x in numbers):
            raise RulesError(f"--param {text}: give distinct numbers; {WEIGHT_RANGE}")
        dims.append(Dim(key, "choice", choices=tuple(format_number(x) for x in numbers), base=weights[key]))
    _check_unique([d.key for d in dims])
    return dims


def weight_spec(base_spec: str, dims: list[Dim], values: dict) -> str:
    """The strategy spec of a candidate: the base with the searched weights changed."""
    head, body = base_spec, ""
    if base_spec.endswith(")") and "(" in base_spec:
        head, body = base_spec[:-1].split("(", 1)
    searched = {d.key for d in dims}
    kept = [p.strip() for p in body.split(",") if p.strip() and p.split("=", 1)[0].strip() not in searched]
    inner = ", ".join(kept + [f"{d.key}={format_number(float(values[d.key]))}" for d in dims])
    return f"{head}({inner})"
