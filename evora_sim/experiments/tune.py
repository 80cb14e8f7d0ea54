"""``evora tune strategy BASE --against FIELD``: search the weights of a built-in or a weight set
for the highest win rate against a field (``--against self``: against BASE itself), and write
the best as a TOML weight set usable as ``FILE.toml:NAME``.

The candidate sits in one seat, the field in the others; every seed is played under each seat
rotation, so the candidate plays every seat against the same stacks. Only the ratios of the
weights change play, so ``vp`` keeps its weight as the scale (and ``win``, the value of winning
at the end, is kept too) unless ``--param`` names them.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from analysis.search_stats import candidate_wins, games_of, rate_confirmation, win_rate
from analysis.stats import p_exact
from strategies.builtin import BUILTINS, NAMES
from strategies.compiled import FEATURES
from strategies.registry import StrategyError, format_number, parse_spec, resolved, split_specs

from ..rules import Rules, RulesError
from .arms import Arm
from .search import Problem
from .space import weight_dims, weight_spec

NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")


def field_of(base_name: str, against: str, players: int) -> list[str]:
    """The other seats' strategies: ``self`` (BASE in every other seat), one spec for every other
    seat, or one per other seat."""
    if against.strip().lower() == "self":
        return [base_name] * (players - 1)
    items = split_specs(against)
    if len(items) == 1:
        items = items * (players - 1)
    if len(items) != players - 1:
        raise StrategyError(f"--against {against}: give one strategy for every other seat, or one per other "
                            f"seat ({players - 1} at {players} players), or 'self'")
    return [parse_spec(x).name for x in items]


class TuneProblem(Problem):
    kind = "tune"
    direction = "maximize"
    score_name = "win rate"

    def __init__(self, base_spec: str, against: str, players: int, rules: Rules, params=(), name=None):
        self.base = parse_spec(base_spec)
        if not getattr(self.base, "is_heuristic", False):
            raise StrategyError(f"strategy {base_spec!r} has no weights to tune; start from a heuristic "
                                "(evora strategies lists them) or a weight set FILE.toml:NAME")
        self.players = players
        self.rules = rules
        self.field = field_of(self.base.name, against, players)
        self.against = against
        self.dims = weight_dims(self.base, list(params))
        self.games_per_seed = players
        root = re.split(r"[(:]", self.base.name.rsplit("/", 1)[-1])[0].replace(".toml", "")
        self.name = name or f"tuned_{re.sub(r'[^A-Za-z0-9_-]', '_', root)}"
        if not NAME.fullmatch(self.name):
            raise RulesError(f"--name {self.name!r}: a weight set's name is a letter, then letters, digits, "
                             "'_' or '-' (at most 64)")

    def config(self) -> dict:
        return {"base": self.base.name, "base_resolved": resolved(self.base), "field": self.field,
                "field_resolved": [resolved(parse_spec(x)) for x in self.field], "players": self.players,
                "rules_hash": self.rules.hash, "name": self.name}

    def spec(self, values: dict) -> str:
        return weight_spec(self.base.name, self.dims, values)

    def arms(self, values: dict, folder: Path) -> list[Arm]:
        return [Arm(str(folder), self.players, (self.spec(values), *self.field), self.rules)]

    def score(self, runs: list, values: dict) -> tuple[float, dict]:
        rate = win_rate(games_of(runs[0]), self.players)
        return rate, {"win_rate": rate}

    def confirm(self, baseline_runs, finalists, alpha):
        base = candidate_wins(games_of(baseline_runs[0]), self.players)
        wins = [candidate_wins(games_of(runs[0]), self.players) for _, runs in finalists]
        labels = [self.base.name] + [self.spec(v) for v, _ in finalists]
        table, chosen = rate_confirmation(base, wins, labels, self.players, alpha)
        lines = []
        if chosen is None:
            return table, None, lines
        r = table.iloc[chosen + 1]
        better = bool(r.p_holm < alpha and r["diff"] > 0)
        verdict = ("better than the baseline" if better else
                   "worse than the baseline" if r.p_holm < alpha else "not clearly different from the baseline")
        figures = (f"win rate {100 * r.value:.1f}% [{100 * r.lo:.1f}%, {100 * r.hi:.1f}%] against "
                   f"{', '.join(self.field)} at {self.players} players over {int(r.seeds):,} fresh seeds x "
                   f"{self.players} rotations ({verdict}: {100 * r['diff']:+.1f} pp [{100 * r.diff_lo:+.1f}, "
                   f"{100 * r.diff_hi:+.1f}], Holm p {p_exact(r.p_holm)}); fair share {100 / self.players:.1f}%.")
        if better:
            lines.append(f"Chosen: finalist {chosen + 1}, {figures}")
            return table, chosen, lines
        # a recommendation must beat what the user already has: otherwise keep the baseline
        table["chosen"] = False
        lines.append(f"No finalist beat the baseline on fresh seeds. The best, finalist {chosen + 1}: {figures}")
        lines.append(f"Keep the baseline, {self.base.name}: no weight set is written. A larger --budget or "
                     "other --param ranges may find one that is better.")
        return table, None, lines

    def weight_set(self, values: dict) -> dict:
        """The weight set as the registry reads it: the base built-in and the weights that differ
        from it, or every weight when the base is not a plain built-in."""
        cand = parse_spec(self.spec(values))
        entry = {"description": f"{self.base.name} with weights tuned by evora tune strategy against "
                                f"{', '.join(self.field)} at {self.players} players"}
        weights = dict(zip(FEATURES, cand.weights))
        if self.base.name in NAMES:
            ref = dict(zip(FEATURES, BUILTINS[NAMES.index(self.base.name)].weights))
            entry["base"] = self.base.name
            entry["weights"] = {f: w for f, w in weights.items() if w != ref[f]}
        else:
            entry["weights"] = {f: w for f, w in weights.items() if w}
            if cand.plan != "turn":
                entry["plan"] = cand.plan
        return entry

    def write_result(self, values: dict, folder: Path) -> list[str]:
        entry = self.weight_set(values)
        weights = ", ".join(f"{k} = {format_number(v)}" for k, v in entry["weights"].items())
        text = [f"# Written by evora tune strategy: use it as strategy.toml:{self.name}",
                f"[{self.name}]", f'description = {json.dumps(entry["description"])}']
        if "base" in entry:
            text.append(f'base = "{entry["base"]}"')
        if "plan" in entry:
            text.append(f'plan = "{entry["plan"]}"')
        text.append(f"weights = {{ {weights} }}")
        path = Path(folder) / "strategy.toml"
        path.write_text("\n".join(text) + "\n", encoding="utf-8")
        return ["strategy.toml"]

    def report_lines(self, values: dict) -> list[str]:
        return [f"Use it: `--strategies summary/strategy.toml:{self.name}` (the weights: "
                f"`{self.spec(values)}`)."]
