"""``evora balance --param KEY=LO..HI|A,B,C ... --target ...``: search rules values toward a fair
game, at every player count asked at once, and write the best variant as a rules file.

What is minimised (lower is better), averaged over the ``--players`` counts:

- **seat fairness** (always): the seat unfairness's unbiased mean square (points squared) from
  :mod:`analysis.fairness`, the honest measure (an unbiased estimate, so noise does not pass for
  unfairness, and a paired test of "fairer than the baseline" for the confirmation);
- optional ``--target`` terms, each its weight times the square of its miss outside a range:
  ``length=LO..HI`` (mean rounds), ``spread=LO..HI`` (strategy spread: the same measure over the
  field's strategies, in points), ``trigger.NAME=LO..HI`` (the share of games ending by NAME, in
  points: temple_full, out_of_stones, round_limit); ``:W`` after the range sets the weight
  (default 1: a miss of 1 round or 1 point costs as much as 1 point squared of unfairness);
- ``--penalty P`` for each key changed from the base rules, so that small changes win ties.
"""
from __future__ import annotations

import re
from pathlib import Path

from analysis.fairness import change_words
from analysis.search_stats import balance_measures, balance_objective, fairness_confirmation, games_of
from strategies.registry import parse_spec, resolved, split_specs

from ..layout import END_NAMES
from ..rules import RulesError, partial_toml
from .arms import Arm
from .search import Problem
from .space import base_rules, changed_keys, rules_dims, rules_sets, variant

TARGET_FORMS = ("fairness (always on), length=LO..HI (mean rounds), spread=LO..HI (the strategies' "
                "RMS deviation from the fair share, pp), trigger.NAME=LO..HI (share of games ending "
                f"by NAME, %; NAME: {', '.join(END_NAMES[1:])}); add :WEIGHT after a range")
_TARGET = re.compile(r"^([a-z_.]+)=\s*([0-9.]+)\s*\.\.\s*([0-9.]+)\s*(?::\s*([0-9.eE+-]+))?$")


def parse_target(text: str, fields: dict[int, list[str]]) -> tuple[str, float, float, float] | None:
    """(name, lo, hi, weight), or None for ``fairness`` (always on); refused if it cannot be
    computed from the tables of these runs."""
    t = text.strip()
    if t == "fairness":
        return None
    m = _TARGET.match(t)
    name = m.group(1) if m else t.split("=", 1)[0]
    known = name in ("length", "spread") or (name.startswith("trigger.") and name[8:] in END_NAMES[1:])
    if not known:
        raise RulesError(f"--target {text}: unknown target {name!r} (targets: {TARGET_FORMS})")
    if m is None:
        raise RulesError(f"--target {text}: give {name}=LO..HI (numbers, LO <= HI), optionally :WEIGHT")
    try:
        lo, hi = float(m.group(2)), float(m.group(3))
        weight = float(m.group(4)) if m.group(4) else 1.0
    except ValueError:
        raise RulesError(f"--target {text}: LO, HI and WEIGHT must be numbers") from None
    if not (lo <= hi) or not weight > 0:
        raise RulesError(f"--target {text}: give LO <= HI and a positive WEIGHT")
    if name.startswith("trigger.") and hi > 100:
        raise RulesError(f"--target {text}: a share is in %, 0 to 100")
    if name == "spread":
        for n, field in fields.items():
            if len(set(field)) != n:
                raise RulesError(f"--target {text}: the strategy spread cannot be computed at {n} players: "
                                 f"the field {','.join(field)} repeats a strategy (give {n} different ones)")
    return name, lo, hi, weight


class BalanceProblem(Problem):
    kind = "balance"
    direction = "minimize"
    score_name = "objective"

    def __init__(self, counts: list[int], fields: dict[int, str], params, targets=(), penalty: float = 0.25,
                 rules_path=None, overrides=()):
        self.rules_path, self.overrides = rules_path, tuple(overrides)
        self.base = base_rules(rules_path, overrides)
        self.counts = sorted(counts)
        self.fields = {n: [parse_spec(x).name for x in _per_seat(fields[n], n)] for n in self.counts}
        self.dims = rules_dims(list(params), rules_path, overrides)
        self.targets = [t for t in (parse_target(x, self.fields) for x in targets) if t is not None]
        names = [t[0] for t in self.targets]
        if len(set(names)) != len(names):
            raise RulesError(f"--target {sorted(n for n in names if names.count(n) > 1)[0]} is given twice")
        self.penalty = float(penalty)
        self.games_per_seed = sum(self.counts)

    def config(self) -> dict:
        return {"players": self.counts, "fields": {str(n): f for n, f in self.fields.items()},
                "fields_resolved": {str(n): [resolved(parse_spec(x)) for x in f] for n, f in self.fields.items()},
                "base_rules_hash": self.base.hash, "rules_file": self.rules_path, "set": list(self.overrides),
                "targets": [list(t) for t in self.targets], "penalty": self.penalty}

    def rules_for(self, values: dict):
        return variant(self.base, rules_sets(self.dims, values), self.rules_path, self.overrides)

    def check(self, values: dict) -> None:
        self.rules_for(values)

    def arms(self, values: dict, folder: Path) -> list[Arm]:
        rules = self.rules_for(values)
        return [Arm(str(Path(folder) / f"p{n}"), n, tuple(self.fields[n]), rules) for n in self.counts]

    def _measures(self, runs: list, alpha: float = 0.05) -> list[dict]:
        return [balance_measures(games_of(run), n, self.targets, alpha) for run, n in zip(runs, self.counts)]

    def objective(self, runs: list, values: dict) -> float:
        return balance_objective(self._measures(runs), self.targets, len(changed_keys(self.dims, values)),
                                 self.penalty)

    def score(self, runs: list, values: dict) -> tuple[float, dict]:
        measures = self._measures(runs)
        details = {"changed_keys": len(changed_keys(self.dims, values))}
        for n, m in zip(self.counts, measures):
            details[f"unfairness_p{n}"] = m["unfairness"]
            for name, *_ in self.targets:
                details[f"{name}_p{n}"] = m[name]
        return balance_objective(measures, self.targets, details["changed_keys"], self.penalty), details

    def label(self, values: dict) -> str:
        changed = changed_keys(self.dims, values)
        return " ".join(f"{k}={values[k]}" for k in changed) or "(no change)"

    def confirm(self, baseline_runs, finalists, alpha):
        base = {n: games_of(r) for n, r in zip(self.counts, baseline_runs)}
        fins = [{n: games_of(r) for n, r in zip(self.counts, runs)} for _, runs in finalists]
        objectives = [self.objective(baseline_runs, self.baseline())]
        objectives += [self.objective(runs, v) for v, runs in finalists]
        labels = ["base rules"] + [self.label(v) for v, _ in finalists]
        table, chosen = fairness_confirmation(base, fins, labels, alpha, objectives, self.targets)
        lines = []
        if chosen is None:
            return table, None, lines
        better = objectives[chosen + 1] < objectives[0]
        lines.append(f"{'Chosen' if better else 'Best'}: finalist {chosen + 1}, {labels[chosen + 1]} (lowest "
                     f"confirmed objective, {objectives[chosen + 1]:.3g} against the base rules' "
                     f"{objectives[0]:.3g}; lower is better).")
        arm = f"finalist {chosen + 1}"
        rows = table[(table["arm"].isin(["baseline", arm])) & table["headline"]]
        for n in self.counts:
            b = rows[(rows["arm"] == "baseline") & (rows["players"] == n)].iloc[0]
            c = rows[(rows["arm"] == arm) & (rows["players"] == n)].iloc[0]
            lines.append(f"{n} players: " + change_words((b.value, b.lo, b.hi), (c.value, c.lo, c.hi), c["diff"],
                                                         c.p_holm, alpha, "the base rules", "paired by seed, Holm"))
        if not better:
            # a recommendation must beat what the user already has: otherwise keep the base rules
            table["chosen"] = False
            lines.append("No finalist did better than the base rules on the confirmation: keep the base rules "
                         "(no rules file is written).")
            return table, None, lines
        return table, chosen, lines

    def write_result(self, values: dict, folder: Path) -> list[str]:
        rules = self.rules_for(values)
        changed = set(changed_keys(self.dims, values))
        sets = " ".join(f"--set {s}" for s in rules_sets(self.dims, values) if s.split("=", 1)[0] in changed)
        header = (f"Written by evora balance: the chosen variant (use it with --rules rules.toml).\n"
                  f"The base rules{' ' + str(self.rules_path) if self.rules_path else ''}"
                  f"{' with --set ' + ' '.join(self.overrides) if self.overrides else ''}, then: {sets}")
        (Path(folder) / "rules.toml").write_text(partial_toml(rules, header), encoding="utf-8")
        return ["rules.toml"]

    def report_lines(self, values: dict) -> list[str]:
        changed = set(changed_keys(self.dims, values))
        sets = [s for s in rules_sets(self.dims, values) if s.split("=", 1)[0] in changed]
        return ["Use it: `--rules summary/rules.toml`" + (", or " + " ".join(f"`--set {s}`" for s in sets)
                                                         if sets else "") + "."]


def _per_seat(spec: str, n: int) -> list[str]:
    items = split_specs(spec)
    if len(items) == 1:
        return items * n
    if len(items) != n:
        raise RulesError(f"--strategies {spec}: give one strategy for every seat or one per seat ({n})")
    return items
