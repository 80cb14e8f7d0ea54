"""``evora balance --compensation``: the starting VP per seat (``players.start_vp``) that equalise
the seats' win rates at one player count, the first fix a designer tries for a first-player edge.

Each iteration plays the current rules (first: the base rules) on its own seeds and estimates by
re-scoring its games the offsets that would equalise the seats (:mod:`analysis.compensation_stats`,
with an interval per seat); the next iteration plays those offsets, rounded to half VP (a half is
V2's half point, which breaks ties only: as Go's komi, it is finer than a whole VP and leaves no
ties between the seats it separates), so that any change of play they cause is measured too. It
stops once an estimate rounds to the starting VP its iteration played (converged), or after
``iterations``; the budget is split evenly over the most iterations, so a resumed run plays the
same games.

**The final run (``final_seeds``).** An iteration's estimate is known to about +-0.25 VP (95%,
10,000 seeds at 4 players), which finds the neighbourhood but is as wide as the half-VP step, so
the point it rounds to is partly chance. With ``final_seeds`` the iterations find the
neighbourhood and one larger run picks the point: the starting VP the iterations settled on (or
their last estimate) play ``final_seeds`` seeds of their own (a run seed no iteration or
confirmation uses), and the final estimate and the half-VP values played are chosen from that
run alone. Its games are not pooled with the iterations': those chose the vector it plays, so
their noise would carry into its estimate (selection), while the final run's seeds are fresh for
the choice it makes and its interval keeps its coverage. If its estimate rounds to other half-VP
values than it played, those are played in the confirmation: re-scoring is exact for the final
scoring, and assumes only that half a VP does not change the play (as every iteration's choice
does). Its seeds come out of ``--budget``; the rest is split over the iterations.

Without a final run, the last iteration's estimate (its offsets over the VP it played) is the
reported estimate. Then the base rules and the compensated rules are played on fresh seeds: only
that confirmation says whether the seats are equal.

**At a ladder of rungs (``confirm_at``).** The seat edge depends on who plays (among the bots the
last seat is ahead at 2 players, among experts the first), so a compensation fitted on one field
can be wrong for another. With rungs, the compensated rules are also played by each rung's
players on the confirmation's fresh seeds (:mod:`.confirm`), and the summary says from which
rung up every seat's interval contains the fair share (:mod:`analysis.confirm_stats`). Every stage's
seeds are declared before any game (``summary/seeds.csv``) and the confirmation's are checked to
share no game seed with the fitting's.

The output folder holds the iterations' run folders (``iterations/i0``.., ``iterations/final``),
``confirm/`` (``confirm/rungs/rN`` with rungs), and ``summary/``: ``candidates.csv`` (each iteration's start VP, its estimate and
the start VP it leads to; ``stage`` final for the final run), ``compensation.csv`` (the estimate per seat with its
interval), ``confirmation.csv``, ``rungs.csv`` (with rungs), ``seeds.csv``, ``search.png``, ``report.md`` and ``rules.toml`` (the base rules
with the compensation; ``--rules`` reads it).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from analysis.compensation_stats import games_from_seats, needed_line, step
from analysis.confirm_stats import per_seed_wins, rotations_phrase, rung_lines, seat_rows, verdict
from analysis.fairness import change_words, compare_fairness
from analysis.markdown import md as md_text
from analysis.markdown import md_command, md_fenced
from analysis.numbers import bracket
from analysis.plots import COLOURS, save, tight_layout
from analysis.stats import p_exact
from strategies.registry import parse_spec

from ..fsutil import atomic_folder
from ..manifest import RunError
from ..rules import partial_toml, start_vp_text
from ..runner import rotation_for
from ..storage import open_run
from .arms import Arm, Backend, FirstSeeds, derive_seed, play_arms
from .confirm import check_fresh, confirm_at as confirm_at_rungs, rung_field, rung_folder, seed_table
from .search import ALPHA, SUMMARY_KIND, made_rotating as made_rotating_search, open_folder, rotating_doc
from .space import base_rules, variant

KIND = "compensation"


def _seat_rows(label: str, run, players: int, alpha: float) -> tuple[list[dict], np.ndarray]:
    """Per seat: win rate with a Wilson interval clustered by seed, simultaneous over the seats
    (Bonferroni: 'every seat contains 1/n' is one claim); then the seat unfairness."""
    per_seed = per_seed_wins(run.table("seats", ["game_id", "seat", "win"]), players, run.rotations)
    return seat_rows(label, per_seed, players, alpha, rotations=run.rotations), per_seed


MIN_SEEDS = 2_500     # per iteration (and final run): at 4 players its estimate is known to about
                      # +-0.5 VP, one half-VP step either way (10,000 seeds: +-0.25 VP); with fewer the
                      # iterations swing by whole VP and never settle on a half-VP point


def needed_budget(players: int, iterations: int, final_seeds: int = 0, rotations: int | None = None) -> int:
    """The smallest --budget (games) that gives every iteration (and the final run) ``MIN_SEEDS``
    seeds, each played ``rotations`` times (default: under every seat rotation)."""
    rotations = players if rotations is None else rotations
    return MIN_SEEDS * rotations * max(iterations, 1) + final_seeds * rotations


def check_budget(players: int, budget: int, iterations: int, final_seeds: int = 0,
                 rotations: int | None = None) -> None:
    """Refuse a budget too small to converge, naming the smallest that is enough: each iteration
    (and a final run) needs ``MIN_SEEDS`` seeds of its own, each played ``rotations`` times."""
    if final_seeds and final_seeds < MIN_SEEDS:
        raise RunError(f"--final-seeds {final_seeds:,} is too few to choose the half-VP values: give at least "
                       f"{MIN_SEEDS:,} (at 4 players they know the starting VP to about +-0.5 VP), or 0 for no "
                       "final run")
    rotations = players if rotations is None else rotations
    need = needed_budget(players, iterations, final_seeds, rotations)
    if iterations < 1 or budget < need:
        final = f" and {final_seeds:,} final seeds" if final_seeds else ""
        raise RunError(f"--budget {budget:,} is too small for {iterations} iteration(s){final} at {players} players "
                       f"to converge: an iteration needs at least {MIN_SEEDS:,} seeds ({MIN_SEEDS * rotations:,} "
                       f"games; fewer swing by whole VP from one iteration to the next); give --budget {need:,} "
                       "or more, or fewer --iterations")


@dataclass(frozen=True)
class Compensation:
    """Everything that decides a compensation's result, which its search file records: the
    ``players`` and their ``field`` (a strategy per seat), the base rules (the shipped ones with
    ``rules_path`` and ``overrides``), the seeds (``budget`` over the ``iterations``, a final run
    of ``final_seeds`` of its own, ``confirm_seeds`` fresh ones to confirm on), the search
    ``seed``, and the rungs it is also confirmed at (``confirm_at``, weakest first).

    ``every_rotation``: every seed under every seat rotation, whatever the field, as a folder made
    before fields of one player stopped rotating played it (:func:`made_rotating`). Otherwise a field of one
    player plays each seed once: its rotations are the same game (every seat holds the same
    player, and a seed deals the same stacks), so rotating would only repeat it."""

    players: int
    field: tuple
    budget: int
    iterations: int = 4
    confirm_seeds: int = 10_000
    seed: int = 1
    rules_path: str | None = None
    overrides: tuple = ()
    final_seeds: int = 0
    confirm_at: tuple = ()
    every_rotation: bool = False

    @property
    def seat_rotation(self) -> bool:
        """Whether the fitting field's runs rotate the seats."""
        return self.every_rotation or rotation_for(self.field, self.players)

    @property
    def rotations(self) -> int:
        """The fitting field's games a seed."""
        return self.players if self.seat_rotation else 1

    def doc(self) -> dict:
        """The search file (``final_seeds`` and ``confirm_at`` only when given, so folders made
        before they existed resume)."""
        config = {"players": self.players, "field": list(self.field),
                  "base_rules_hash": base_rules(self.rules_path, self.overrides).hash, "rules_file": self.rules_path,
                  "set": list(self.overrides), "budget": self.budget, "iterations": self.iterations,
                  "confirm_seeds": self.confirm_seeds, "seed": self.seed}
        if self.final_seeds:
            config["final_seeds"] = self.final_seeds
        if self.confirm_at:
            config["confirm_at"] = list(self.confirm_at)
        return rotating_doc(KIND, config, self.every_rotation)


def made_rotating(out) -> bool:
    """Whether ``out`` holds a compensation made before fields of one player stopped rotating
    (:func:`.search.made_rotating`)."""
    return made_rotating_search(out, KIND)


def _estimate_at(out, name, current, seeds, run_seed, *, plan: Compensation, base, backend, command, quiet=True):
    """Play ``current`` starting VP on ``seeds`` seeds into ``iterations/NAME`` and estimate the
    further offsets there; the estimate and the half-VP values it rounds to (smallest 0)."""
    rules = _with_start(base, current, plan.rules_path, plan.overrides)
    run = play_arms([Arm(str(out / "iterations" / name), plan.players, tuple(plan.field), rules, plan.seat_rotation)],
                    seeds, run_seed, min(seeds, 5000), backend, command, quiet=quiet, root=out)[0]
    games = games_from_seats(run.table("seats", ["game_id", "seat", "score", "parts_left", "win"]), plan.players,
                             rules.half_points(plan.players), run.rotations)
    return step(games, current, ALPHA)


def _history_row(it, stage, current, seeds, plan, est, nxt) -> dict:
    relative = current - current[0] + est.offsets
    players = plan.players
    return {"iteration": it, "stage": stage, "start_vp": start_vp_text(current), "seeds": seeds,
            "games": seeds * plan.rotations, **{f"offset_seat{k}": est.offsets[k] for k in range(players)},
            **{f"total_seat{k}": relative[k] for k in range(players)}, "next_start_vp": start_vp_text(nxt)}


def run_compensation(plan: Compensation, out, *, backend: Backend = Backend(), command: str = "", notice=None) -> dict:
    """Fit (the iterations, the final run), confirm at the fitting field against the base rules,
    then, with ``plan.confirm_at`` (rungs, weakest first), play the compensation at every rung on the
    confirmation's fresh seeds (:mod:`.confirm`): where it holds."""
    players, field, iterations, seed = plan.players, plan.field, plan.iterations, plan.seed
    confirm_seeds, final_seeds, confirm_at = plan.confirm_seeds, plan.final_seeds, plan.confirm_at
    out = Path(out)
    base = base_rules(plan.rules_path, plan.overrides)
    rotations = plan.rotations
    check_budget(players, plan.budget, iterations, final_seeds, rotations)
    seeds = (plan.budget - final_seeds * rotations) // (iterations * rotations)
    start = list(base.data["players"]["start_vp"][:players])
    doc = plan.doc()
    stages = seed_stages(seed, seeds, iterations, final_seeds, confirm_seeds)
    check_fresh([(s, k) for name, s, k in stages if name != "confirmation"], (derive_seed(seed, 2), confirm_seeds),
                "the confirmation")
    open_folder(out, doc)
    current = np.array(start, dtype=float)
    history = []
    at = partial(_estimate_at, out, plan=plan, base=base, backend=backend, command=command, quiet=notice is None)
    for it in range(iterations):
        est, nxt = at(f"i{it}", current, seeds, derive_seed(seed, 4, it))
        history.append(_history_row(it, "iterate", current, seeds, plan, est, nxt))
        if notice is not None:
            notice(f"iteration {it + 1} of at most {iterations}: start VP {start_vp_text(current)}, further offsets "
                   f"over seat 0 {', '.join(f'{x:+.2f}' for x in est.offsets)} VP")
        played = current - current.min()
        if np.array_equal(nxt, played):
            break                                   # the estimate rounds to what was played: converged
        current = nxt
    converged = bool(np.array_equal(nxt, played))
    iterated = len(history)
    if final_seeds:
        current = nxt
        if notice is not None:
            notice(f"final run: start VP {start_vp_text(current)} on {final_seeds:,} seeds of its own")
        est, nxt = at("final", current, final_seeds, derive_seed(seed, 5))
        history.append(_history_row(iterated, "final", current, final_seeds, plan, est, nxt))
        played = current - current.min()
    final = nxt
    settled = bool(np.array_equal(final, played))
    estimate_rows = [{"seat": k, "start_vp_over_seat0": history[-1][f"total_seat{k}"],
                      "lo": played[k] - played[0] + est.lo[k], "hi": played[k] - played[0] + est.hi[k],
                      "level": est.level, "seeds": est.seeds, "played_vp": final[k], "base_start_vp": start[k],
                      "change_from_base": final[k] - start[k]} for k in range(players)]
    if notice is not None:
        notice(f"confirming the base rules and start VP {start_vp_text(final)} on {confirm_seeds:,} fresh seeds")
    comp_rules = _with_start(base, final, plan.rules_path, plan.overrides)
    arms = [Arm(str(out / "confirm" / "baseline"), players, tuple(field), base, plan.seat_rotation),
            Arm(str(out / "confirm" / "compensated"), players, tuple(field), comp_rules, plan.seat_rotation)]
    runs = play_arms(arms, confirm_seeds, derive_seed(seed, 2), min(confirm_seeds, 1000), backend, command,
                     quiet=notice is None, root=out)
    rows_b, wins_b = _seat_rows("baseline", runs[0], players, ALPHA)
    rows_c, wins_c = _seat_rows("compensated", runs[1], players, ALPHA)
    cmp = compare_fairness(wins_b, wins_c, paired=True)
    confirmation = pd.DataFrame(rows_b + rows_c)
    lines = summary_lines(players, estimate_rows, confirmation, cmp, final, start)
    lines.insert(len(estimate_rows) + 2, _settling_line(iterated, converged, final_seeds, played, final, settled))
    rungs = None
    if confirm_at:
        if notice is not None:
            notice(f"confirming start VP {start_vp_text(final)} at {len(confirm_at)} rung(s) on the same "
                   f"{confirm_seeds:,} fresh seeds")
        # a rung of the fitting's own players is the confirmation's compensated run: read, not played again
        ladder = [(r, tuple(field) if _same_players(r, field) else rung_field(r, players)) for r in confirm_at]
        same = {(i, 0): arms[1].folder for i, r in enumerate(confirm_at) if _same_players(r, field)}
        rungs = confirm_at_rungs(out / "confirm" / "rungs", players, ladder, [("compensated", comp_rules)],
                                 (derive_seed(seed, 2), confirm_seeds), backend, command, notice is None, root=out,
                                 reuse=same, seat_rotation=True if plan.every_rotation else None)
        def run_at(i):
            return FirstSeeds(open_run(rung_folder(out / "confirm" / "rungs", i, 0, same)), confirm_seeds)

        lines += ["At each rung of --confirm-at (weakest first), the compensated rules:",
                  *rung_lines(rungs, "compensated", players), *_needed_lines(rungs, run_at, final, comp_rules, players)]
    tables = Tables(pd.DataFrame(history), pd.DataFrame(estimate_rows), confirmation, rungs, seed_table(stages))
    summary = write_compensation_summary(out, doc, command, tables, lines, comp_rules, final, players, final_seeds)
    return {"start_vp": final.tolist(), "estimate": estimate_rows, "confirmation": confirmation,
            "comparison": cmp, "lines": lines, "summary": summary, "rungs": rungs}


def _needed_lines(rungs: pd.DataFrame, run_at, final, rules, players: int) -> list[str]:
    """At each rung where a seat's interval excludes the fair share under the compensation, what
    that rung's own games (``run_at(rung)``, opened only there) say it would need instead
    (re-scored, no game played)."""
    rates = rungs[(rungs["arm"] == "compensated") & (rungs["measure"] == "win rate")]
    lines = []
    for r, g in rates.groupby("rung", sort=True):
        if g["contains_fair_share"].all():
            continue
        run = run_at(int(r))
        games = games_from_seats(run.table("seats", ["game_id", "seat", "score", "parts_left", "win"]), players,
                                 rules.half_points(players), run.rotations)
        lines.append(needed_line(str(g["label"].iloc[0]), int(r), games, final, ALPHA))
    if lines:
        lines.insert(0, "Where it does not hold, what that rung's own games say it would need, by re-scoring them "
                        "(an estimate, not played or confirmed):")
    return lines


def _same_players(rung: str, field) -> bool:
    """Whether a rung seats the fitting field's players (its strategies' full names, seat by seat)."""
    return [parse_spec(x).name for x in rung_field(rung, len(field))] == list(field)


def seed_stages(seed: int, seeds: int, iterations: int, final_seeds: int, confirm_seeds: int) -> list[tuple]:
    """Every stage's (name, run seed, seeds), declared before any game: the iterations (each may
    stop early, never play more), the final run, the confirmation (also the rungs')."""
    stages = [(f"iteration {it}", derive_seed(seed, 4, it), seeds) for it in range(iterations)]
    if final_seeds:
        stages.append(("final run", derive_seed(seed, 5), final_seeds))
    return stages + [("confirmation", derive_seed(seed, 2), confirm_seeds)]


def _settling_line(iterated, converged, final_seeds, played, final, settled) -> str:
    """How the starting VP played were reached: the iterations, then the final run if any."""
    steps = (f"Converged after {iterated} iteration(s): the last one played these starting VP and its estimate "
             "rounds to them." if converged else
             f"Not converged in {iterated} iteration(s): the last estimate rounds to other starting VP than it "
             "played (a larger --iterations or --budget may settle it).")
    if not final_seeds:
        return steps + ("" if converged else " The confirmation plays the last estimate.")
    if settled:
        return steps + (f" The final run ({final_seeds:,} seeds of its own) played {start_vp_text(played)} and "
                        "its estimate (above) rounds to them.")
    return steps + (f" The final run ({final_seeds:,} seeds of its own) played {start_vp_text(played)}; its "
                    f"estimate (above) rounds to {start_vp_text(final)}, chosen by re-scoring its games (exact "
                    "for the final scoring; assumes the play does not change between the two) and confirmed.")


def _with_start(base, start, rules_path, overrides):
    full = list(start) + list(base.data["players"]["start_vp"][len(start):])
    return variant(base, [f"players.start_vp={start_vp_text(full)}"], rules_path, overrides)


def confirms(confirmation: pd.DataFrame) -> bool:
    """Whether the confirmation supports "equalises the seats": every seat's win rate under the
    compensation has an interval (simultaneous over the seats) that contains the fair share."""
    comp = confirmation[(confirmation["arm"] == "compensated") & (confirmation["measure"] == "win rate")]
    return bool(len(comp)) and bool(comp["contains_fair_share"].all())


def told_apart(confirmation: pd.DataFrame) -> bool:
    """Whether the confirmation's seeds show the base rules unfair (a seat's interval excludes the
    fair share): without that, a compensation that passes shows nothing the base rules do not."""
    base = confirmation[(confirmation["arm"] == "baseline") & (confirmation["measure"] == "win rate")]
    return not bool(base["contains_fair_share"].all())


def summary_lines(players, estimate_rows, confirmation, cmp, final, start) -> list[str]:
    level = 100 * estimate_rows[0]["level"]
    lines = [f"Starting VP over seat 0's estimated to bring every seat to the fair share ({level:.0f}% intervals):"]
    lines += [f"  seat {r['seat']}: " + ("+0 VP (the reference)" if r["seat"] == 0 else
                                          bracket(r["start_vp_over_seat0"], r["lo"], r["hi"], 1.0, " VP", signed=True))
              for r in estimate_rows]
    lines.append(f"Played in steps of half a VP (x.5: x VP and a half point that breaks ties only, V2): "
                 f"players.start_vp={start_vp_text(final)} (base rules: {start_vp_text(start)}).")
    comp = confirmation[(confirmation["arm"] == "compensated") & (confirmation["measure"] == "win rate")]
    base = confirmation[(confirmation["arm"] == "baseline") & (confirmation["measure"] == "win rate")]
    sim = 100 * float(comp["level"].iloc[0])
    lines.append(f"Confirmation on {int(comp['seeds'].iloc[0]):,} fresh seeds{rotations_phrase(comp)} "
                 f"(win rates with {sim:.4g}% intervals, simultaneous over the {players} seats):")
    for b, c in zip(base.itertuples(), comp.itertuples()):
        lines.append(f"  seat {c.seat}: base rules {bracket(b.value, b.lo, b.hi)} -> "
                     f"compensated {bracket(c.value, c.lo, c.hi)}"
                     f"{'' if c.contains_fair_share else ' (excludes the fair share)'}")
    pp = (lambda f: (100 * f.rms, 100 * f.rms_lo, 100 * f.rms_hi))
    if confirms(confirmation) and not told_apart(confirmation):
        # the same test passes without the compensation: these seeds are too few to tell
        verdict = (f"Not told apart: every seat's interval contains the fair share {100 / players:.1f}% with "
                   "these starting VP, but also under the base rules, so these seeds are too few to show "
                   "that the compensation is needed or that it works; more --confirm-seeds would tell.")
    elif confirms(confirmation):
        verdict = (f"Confirmed: every seat's interval contains the fair share {100 / players:.1f}%, so these "
                   "starting VP equalise the seats as far as these games can tell.")
    else:
        verdict = (f"Best found, not confirmed: the interval of {_excluded(comp)} excludes the fair share "
                   f"{100 / players:.1f}%, so the seats stay unequal with these starting VP; a larger --budget or "
                   "--final-seeds may find values that do.")
    lines.append(verdict)
    lines.append(change_words(pp(cmp.a), pp(cmp.b), cmp.diff, cmp.p, ALPHA, "the base rules")
                 + f"; all seats fair after compensation: p {p_exact(cmp.b.p)}.")
    return lines


def _excluded(comp: pd.DataFrame) -> str:
    seats = [str(int(s)) for s, ok in zip(comp["seat"], comp["contains_fair_share"]) if not ok]
    return ("seat " if len(seats) == 1 else "seats ") + ", ".join(seats)


class Tables(NamedTuple):
    """A compensation's tables, each written to the summary: its iterations (``history``), the
    offsets estimated, the ``confirmation`` on fresh seeds, and, when there are any, the
    ``rungs`` it was confirmed at and the ``seeds`` of each stage."""

    history: pd.DataFrame
    estimates: pd.DataFrame
    confirmation: pd.DataFrame
    rungs: pd.DataFrame | None = None
    seeds: pd.DataFrame | None = None


def write_compensation_summary(out, doc, command, tables: Tables, lines, rules, final, players, final_seeds) -> Path:
    """``out/summary``; the rules file says "equalise" only when the confirmation supports it, and
    where it holds when it was confirmed at rungs. Public: a test writes it from planted tables to
    check what is called confirmed, without the games behind them."""
    history, estimates, confirmation, rungs, seeds = tables
    final_dir = Path(out) / "summary"
    confirmed = confirms(confirmation)
    with atomic_folder(final_dir, SUMMARY_KIND) as tmp:
        history.to_csv(tmp / "candidates.csv", index=False)
        estimates.to_csv(tmp / "compensation.csv", index=False)
        confirmation.to_csv(tmp / "confirmation.csv", index=False)
        if rungs is not None:
            rungs.to_csv(tmp / "rungs.csv", index=False)
        if seeds is not None:
            seeds.to_csv(tmp / "seeds.csv", index=False)
        png = save(_figure(estimates, confirmation, players), tmp, "search")
        if confirmed and not told_apart(confirmation):
            header = (f"Written by evora balance --compensation: starting VP fitted at {players} players, not told "
                      "apart from the base rules on fresh seeds (every seat's interval holds the fair share under "
                      "both; more --confirm-seeds would tell).")
            use = "Not told apart from the base rules; to play it anyway: "
        elif confirmed:
            header = (f"Written by evora balance --compensation: starting VP that equalise the seats at {players} "
                      "players, confirmed on fresh seeds (use it with --rules rules.toml).")
            use = "Use it: "
        else:
            comp = confirmation[(confirmation["arm"] == "compensated") & (confirmation["measure"] == "win rate")]
            rates = ", ".join(f"seat {int(r.seat)} {bracket(r.value, r.lo, r.hi)}"
                              for r in comp.itertuples())
            header = (f"Written by evora balance --compensation: best found, not confirmed: these starting VP at "
                      f"{players} players leave the seats unequal on fresh seeds (win rates {rates}; fair share "
                      f"{100 / players:.1f}%).")
            use = "Best found, not confirmed; to play it anyway: "
        if rungs is not None:
            header += (f" At the rungs {'; '.join(rungs.drop_duplicates('rung')['label'])} on fresh seeds it "
                       f"{verdict(rungs, 'compensated')}.")
        (tmp / "rules.toml").write_text(partial_toml(rules, header), encoding="utf-8")
        md = ["## Seat compensation", "", md_command(command), "",
              f"![compensation]({png.name})", "", *(md_text(x) for x in lines), "",
              f"Estimates re-score {'the final run' if final_seeds else 'the last iteration'}'s games "
              "(analysis/compensation_stats.py: exact at every "
              "half VP, a value between two half VP a coin flip between them; sandwich interval with seeds "
              "as the units). The starting VP played are the half-VP values next to the estimate whose "
              "re-scored win rates are closest to 1/n. Only the confirmation on fresh seeds is a result.", "",
              estimates.to_markdown(index=False), "", confirmation.to_markdown(index=False), "",
              *(["### At each rung, on the confirmation's fresh seeds", "", rungs.to_markdown(index=False), ""]
                if rungs is not None else []),
              *(["### The seeds of each stage (disjoint: checked before any game)", "", seeds.to_markdown(index=False), ""]
                if seeds is not None else []),
              use + "`--rules summary/rules.toml` or `--set players.start_vp=" + start_vp_text(final) + "`.", "",
              *md_fenced(json.dumps(doc["config"], indent=1), "json"), ""]
        (tmp / "report.md").write_text("\n".join(md), encoding="utf-8")
    return final_dir


def _bars(value, lo, hi):
    """Error-bar lengths; an interval ending at its estimate (a seat that won every game) may end a
    rounding error short of it, which matplotlib refuses as a negative length."""
    return [np.clip(value - lo, 0, None), np.clip(hi - value, 0, None)]


def _figure(estimates, confirmation, players):
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4))
    e = estimates
    ax.errorbar(e["seat"], e["start_vp_over_seat0"], yerr=_bars(e["start_vp_over_seat0"], e["lo"], e["hi"]),
                fmt="o", capsize=4, color=COLOURS[0], label="estimate")
    ax.scatter(e["seat"], e["played_vp"] - e["played_vp"].iloc[0], marker="x", color=COLOURS[1], zorder=3,
               label="starting VP played (half VP steps)")
    ax.set_xlabel("seat")
    ax.set_ylabel("starting VP over seat 0")
    ax.set_xticks(range(players))
    ax.legend(fontsize=8)
    ax.set_title("Compensation per seat (95% intervals)", fontsize=9)
    for j, arm in enumerate(("baseline", "compensated")):
        c = confirmation[(confirmation["arm"] == arm) & (confirmation["measure"] == "win rate")]
        x = c["seat"].to_numpy() + (j - 0.5) * 0.2
        bx.errorbar(x, 100 * c["value"], yerr=_bars(100 * c["value"], 100 * c["lo"], 100 * c["hi"]),
                    fmt="o", capsize=3, color=COLOURS[j], label="base rules" if j == 0 else "compensated")
    bx.axhline(100 / players, color="grey", lw=0.8, ls="--")
    bx.set_xticks(range(players))
    bx.set_xlabel("seat")
    bx.set_ylabel("win rate (%)")
    bx.legend(fontsize=8)
    bx.set_title("Confirmation on fresh seeds (simultaneous intervals)", fontsize=9)
    tight_layout(fig)
    return fig
