"""``evora card-value``: each card's value by intervention, on common seeds.

Arms (ordinary run folders, :mod:`.arms`; all on the same game seeds, every seed under every seat
rotation where the seats hold different players, once where every seat holds the same player: its
rotations would be the same game; a folder made before this resumes as it was made):

- ``baseline/``: the rules as given;
- ``given/CARD/seatG/``: seat G holds one more CARD from the start (P11, ``experiment.give``),
  for every card and every seat: each seed's games with the card are paired with the same
  games of the baseline;
- ``removed/CARD/``: CARD taken out of the game (P12, ``experiment.remove``: an effect's copies
  become the other two effects of its type, a tile leaves the Temple).

The statistics are :mod:`analysis.cardvalue_stats`; ``summary/`` holds the tables (CSV), the figure and
``report.md``, next to the observational card table of the baseline games. Playing the same
command again finishes an interrupted experiment (finished chunks are kept).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import numbers
from analysis import tables as T
from analysis.cardvalue_stats import (NOT_EXERCISED, card_value_figure, given_by_position, given_effect, given_strategy_table,
                                given_table, removal_table, shown_by_strategy, shown_fairness, shown_given)
from analysis.markdown import md as md_text
from analysis.markdown import md_command, md_fenced
from analysis.labels import card_title
from analysis.plots import save
from analysis.scan import scan
from analysis.search_stats import seat_wins, strategy_wins

from .. import layout as L
from ..fsutil import atomic_folder
from ..manifest import RunError
from ..rules import EXPERIMENT_DEFAULTS, Rules
from ..runner import open_run
from .arms import Arm, Backend, derive_seed, play_arms
from .search import SUMMARY_KIND, open_folder, rotating_doc
from .space import variant

KIND = "card-value"
CARDS = L.CARD_NAMES
CHUNK = 1000             # seeds per chunk: the unit of resuming
MIN_SEEDS = 10


@dataclass(frozen=True)
class Plan:
    """What decides an experiment's games: the table, the field (one strategy per seat,
    rotation 0), the games per card of each measure (0: the removal measure is not played).
    ``seat_rotation``: every seed under every rotation (the default; ``runner.rotation_for`` says
    whether the field needs it); ``every_rotation``: a folder made before a field of one player
    stopped rotating (its search file records no ``rotation``, :func:`.search.made_rotating`)."""

    players: int
    field: tuple[str, ...]
    games: int
    remove_games: int
    seed: int
    seat_rotation: bool = True
    every_rotation: bool = False

    @property
    def rotations(self) -> int:
        """Games a seed of each arm: one per seat rotation, or one."""
        return self.players if self.seat_rotation else 1

    @property
    def given_seeds(self) -> int:
        """Seeds of each card's given arms: every seed is played n x rotations times (given seat x rotation)."""
        return math.ceil(self.games / (self.players * self.rotations))

    @property
    def removed_seeds(self) -> int:
        return math.ceil(self.remove_games / self.rotations)

    def check(self) -> None:
        n, r = self.players, self.rotations
        each = f"{n} x {n} times: every seat given the card, every rotation" if r > 1 else \
            f"{n} times: every seat given the card; every seat holds one player, so once a rotation"
        if self.games < MIN_SEEDS * n * r:
            raise RunError(f"--games must be at least {MIN_SEEDS * n * r:,} at {n} players ({MIN_SEEDS} seeds, "
                           f"each played {each}), got {self.games:,}")
        if self.remove_games and self.remove_games < MIN_SEEDS * r:
            raise RunError(f"--remove-games must be 0 (no removal measure) or at least {MIN_SEEDS * r:,} at {n} "
                           f"players ({MIN_SEEDS} seeds x {r} rotation{'s' if r > 1 else ''}), got {self.remove_games:,}")

    def total_games(self) -> int:
        n, r = self.players, self.rotations
        base = max(self.given_seeds, self.removed_seeds) * r
        return len(CARDS) * (self.given_seeds * n * r + self.removed_seeds * r) + base


def check_base_rules(rules: Rules) -> None:
    """The experiment sets the [experiment] keys itself: base rules must leave them alone."""
    if rules.data["experiment"] != EXPERIMENT_DEFAULTS:
        changed = sorted(k for k, v in rules.data["experiment"].items() if EXPERIMENT_DEFAULTS[k] != v)
        raise RunError("card-value gives and removes each card itself: drop "
                       + ", ".join(f"experiment.{k}" for k in changed) + " from --rules/--set")


def card_value_doc(plan: Plan, base: Rules, rules_path=None, overrides=()) -> dict:
    config = {"players": plan.players, "field": list(plan.field), "games": plan.games,
              "remove_games": plan.remove_games, "seed": plan.seed, "base_rules_hash": base.hash,
              "rules_file": rules_path, "set": list(overrides)}
    return rotating_doc(KIND, config, plan.every_rotation)


def arms_of(plan: Plan, base: Rules, out: Path, rules_path=None, overrides=()) -> tuple[list[Arm], list[int]]:
    """Every arm and the seeds it plays: the baseline first, then each card's given arms (seat
    0 first), then the removed arms."""
    n, field = plan.players, tuple(plan.field)
    rotate = plan.seat_rotation
    arms = [Arm(str(out / "baseline"), n, field, base, rotate)]
    seeds = [max(plan.given_seeds, plan.removed_seeds)]
    for card in CARDS:
        for g in range(n):
            rules = variant(base, [f"experiment.give={card}", f"experiment.give_seat={g}"], rules_path, overrides)
            arms.append(Arm(str(out / "given" / card / f"seat{g}"), n, field, rules, rotate))
            seeds.append(plan.given_seeds)
    if plan.remove_games:
        for card in CARDS:
            arms.append(Arm(str(out / "removed" / card), n, field,
                            variant(base, [f"experiment.remove={card}"], rules_path, overrides), rotate))
            seeds.append(plan.removed_seeds)
    return arms, seeds


def _winners(run, rotations: int) -> np.ndarray:
    """Winner seat per (seed, rotation) of a run's first seeds (``rotations`` games a seed)."""
    games = run.table("games", ["game_id", "winner_seat"]).sort_values("game_id")
    return games["winner_seat"].to_numpy().reshape(-1, rotations)


def given_outcomes(base_winners: np.ndarray, given_winners: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(won_given, won_base) of shape (seeds, seats, rotations) from the winners per (seed,
    rotation) of the baseline and of the arm giving the card to each seat g (in seat order)."""
    seeds = min(len(w) for w in given_winners)
    won_given = np.stack([w[:seeds] == g for g, w in enumerate(given_winners)], axis=1)
    won_base = np.stack([base_winners[:seeds] == g for g in range(len(given_winners))], axis=1)
    return won_given, won_base


def run_card_value(plan: Plan, out, base: Rules, *, rules_path=None, overrides=(), backend: Backend = Backend(),
                   command: str = "", notice=None) -> dict:
    """Play (or finish) every arm, then write ``summary/``; returns the tables and the lines to print."""
    out = Path(out)
    plan.check()
    check_base_rules(base)
    doc = card_value_doc(plan, base, rules_path, overrides)
    open_folder(out, doc)
    arms, seeds = arms_of(plan, base, out, rules_path, overrides)
    if notice is not None:
        notice(f"card-value: {len(arms)} arms, {plan.total_games():,} games in all, into {out}")
    runs = play_arms(arms, seeds, derive_seed(plan.seed, 14), CHUNK, backend, command, quiet=notice is None,
                     root=out)
    n, rot = plan.players, plan.rotations
    base_run, rest = runs[0], runs[1:]
    base_winners = _winners(base_run, rot)
    effects, by_position = {}, {}
    for i, card in enumerate(CARDS):
        outcomes = given_outcomes(base_winners, [_winners(r, rot) for r in rest[i * n:(i + 1) * n]])
        effects[card] = given_effect(*outcomes)
        by_position[card] = given_by_position(*outcomes)
    given = given_table(effects)
    by_strategy = given_strategy_table(by_position, list(plan.field))
    strategy_rows = fairness_rows = None
    if plan.remove_games:
        removed = rest[len(CARDS) * n:]
        cut = base_run.run.table("games", ["game_id", "rotation", "winner_seat"])
        cut = cut[cut["game_id"].to_numpy() < plan.removed_seeds * rot].sort_values("game_id")
        s_with, w_with = strategy_wins(cut, n, rot), seat_wins(cut, n, rot)
        s_wins, w_wins = {}, {}
        for card, run in zip(CARDS, removed):
            games = run.table("games", ["game_id", "rotation", "winner_seat"])
            s_wins[card] = (s_with, strategy_wins(games, n, rot))
            w_wins[card] = (w_with, seat_wins(games, n, rot))
        strategy_rows, fairness_rows = removal_table(s_wins, w_wins, list(plan.field), rot)
    observed = _observed(out / "baseline")
    lines = summary_lines(plan, given, strategy_rows, fairness_rows)
    summary = _write(out, doc, command, plan, given, by_strategy, strategy_rows, fairness_rows, observed, lines)
    return {"given": given, "given_by_strategy": by_strategy, "removed": strategy_rows, "fairness": fairness_rows, "observed": observed,
            "lines": lines, "summary": summary}


def _observed(folder: Path) -> pd.DataFrame:
    """The report's observational card table (win rate when played, adjusted) of the baseline games."""

    return T.card_value(scan([open_run(folder)]))


def _points(x: float) -> str:
    return f"{100 * x:+.2f}"


def widest_half(table: pd.DataFrame) -> float:
    """The widest half-width of a table's intervals (an interval may be off-centre by rounding;
    a card not exercised has none)."""
    half = np.maximum(table["hi"] - table["change"], table["change"] - table["lo"]).to_numpy(dtype=float)
    half = half[np.isfinite(half)]
    return float(half.max()) if len(half) else float("nan")


def summary_lines(plan: Plan, given: pd.DataFrame, strategy_rows, fairness_rows) -> list[str]:
    n, rot = plan.players, plan.rotations
    g = given.iloc[0]
    times = f" x {rot} rotations" if rot > 1 else " (every seat holds one player: each seed once, as its rotations would be the same game)"
    lines = [f"Card value by experiment at {n} players ({', '.join(plan.field)}): each card given to one seat "
             f"at the start, against the same games without it; {int(g['seeds']):,} seeds x {n} seats{times}"
             f" = {int(g['games']):,} paired games a card.",
             "Change in the given seat's win rate, pp (95% interval; * = significant after Holm over the "
             f"{int(given['exercised'].sum())} cards exercised):"]
    for r in given.sort_values("change", ascending=False).itertuples():
        if not r.exercised:
            lines.append(f"  {card_title(r.card):38s} {NOT_EXERCISED} (the given copy was never the one taken)")
            continue
        lines.append(f"  {card_title(r.card):38s} {_points(r.change)} [{_points(r.lo)}, {_points(r.hi)}]"
                     f"{' *' if r.significant else ''}")
    lines.append(f"Widest half-width: {100 * widest_half(given):.2f} pp.")
    if strategy_rows is not None:
        s = strategy_rows
        half = widest_half(s)
        sig = s[s["significant"]]
        lines.append(f"Each card removed: {int(s['seeds'].iloc[0]):,} seeds x {rot} rotation{'s' if rot > 1 else ''} a card; each strategy's "
                     f"change in win rate" + (f" (widest half-width {100 * half:.2f} pp); " if np.isfinite(half) else "; ")
                     + (f"{len(sig)} of {int(s['exercised'].sum())} significant after Holm: "
                        + "; ".join(f"{card_title(r.card)} -> {r.strategy} {_points(r.change)} pp"
                                    for r in sig.itertuples())
                        if len(sig) else f"none of the {int(s['exercised'].sum())} is significant after Holm.")
                     + (f" {int((~s['exercised']).sum())} not exercised (no game differed)."
                        if not s["exercised"].all() else ""))
        fsig = fairness_rows[fairness_rows["significant"]]
        lines.append("Seat fairness when a card is removed: "
                     + (", ".join(f"{card_title(r.card)}: seat unfairness {100 * r.unfairness_with:.2f} -> "
                                  f"{100 * r.unfairness_without:.2f} pp" for r in fsig.itertuples())
                        if len(fsig) else "no change significant after Holm over the "
                        f"{int(np.isfinite(fairness_rows['p']).sum())} cards that changed a game."))
    return lines


REPORT_NOTE = ("The observational table (the report's Card value) compares seats that played a card with "
               "seats that did not: an association, since a seat that is doing well both plays more cards "
               "and wins. Here the card is the only difference between two games on the same seed: the "
               "given-card table is the causal value of holding one more of it at the start, and the "
               "removed-card tables what the game loses without it.")


def _write(out: Path, doc, command, plan, given, by_strategy, strategy_rows, fairness_rows, observed, lines) -> Path:
    final = out / "summary"
    with atomic_folder(final, SUMMARY_KIND) as tmp:
        given.to_csv(tmp / "card_value_given.csv", index=False)
        by_strategy.to_csv(tmp / "card_value_given_by_strategy.csv", index=False)
        observed.to_csv(tmp / "card_value_observed.csv", index=False)
        if strategy_rows is not None:
            strategy_rows.to_csv(tmp / "card_value_removed.csv", index=False)
            fairness_rows.to_csv(tmp / "card_value_removed_fairness.csv", index=False)
        png = save(card_value_figure(given, strategy_rows, observed), tmp, "card_value")
        obs = observed.set_index("card").reindex(given["card"])
        side = shown_given(given)
        side["Observed: played vs. not, adjusted (association)"] = [
            numbers.bracket(r.adj_diff, r.adj_lo, r.adj_hi, 100, numbers.PP, signed=True) for r in obs.itertuples()]
        md = ["## Card value by experiment", "", md_command(command), "",
              f"![card value]({png.name})", "", *(md_text(x) for x in lines), "", REPORT_NOTE, "",
              "### The card given, and the observational estimate of the same games", "",
              side.to_markdown(index=False), "",
              "### The card given, by the strategy holding it (pp; a quarter of the games each, wider "
              "intervals; * = significant after Holm over every card and strategy)", "",
              shown_by_strategy(by_strategy).to_markdown(index=False), ""]
        if strategy_rows is not None:
            md += ["### The card removed: change in each strategy's win rate (pp; * = significant after Holm)",
                   "", shown_by_strategy(strategy_rows).to_markdown(index=False), "",
                   "### The card removed: change in seat fairness", "",
                   shown_fairness(fairness_rows).to_markdown(index=False), ""]
        md += [*md_fenced(json.dumps(doc["config"], indent=1), "json"), ""]
        (tmp / "report.md").write_text("\n".join(md), encoding="utf-8")
    return final
