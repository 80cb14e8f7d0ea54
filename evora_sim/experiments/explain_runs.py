"""``evora explain RUN``: why the run's seats win what they win, and what each rule change would do.

Reads the run folder RUN (an ordinary ``evora simulate`` run) and plays, as arms on its own seeds
(:mod:`.arms`: the run's seed, its strategies as recorded, its seat rotation, its first
``seeds`` seeds), the run's rules with one change each:

- ``arms/<key>=<value>/``: every value of every mechanism switch (docs/RULES.md V3-V5) other than
  the run's own: how the game ends once triggered, the tie-break after VP, the setup order;
- ``arms/compensation/``: the starting VP per seat (V1, V2) that re-scoring the run's games says
  would equalise the seats (:func:`analysis.compensation_stats.step`), estimated on the run's seeds past
  the replayed ones where it has more (so the arm is not judged on the games that chose it);
- ``baseline/``: only for a run played before the game loop recorded where games are decided
  (its games are replayed to get those facts, and paired with the arms instead of the run's);
- ``confirm/``: the fix the ranking puts first (the fairest of those significantly fairer than
  the run's rules) and the run's rules, played again on ``confirm_seeds`` fresh seeds (a run seed
  of their own, checked to share no game seed with the run: :func:`.confirm.check_fresh`) by the
  run's own players and at each ``confirm_at`` rung (:mod:`.confirm`), each seed under every seat
  rotation where the rung's seats hold different players and once where they hold one (its
  rotations would be the same game; a folder made before this resumes as it was made). The ranking chooses the
  fix on the replayed seeds, so its figures there are biased toward it (the winner's curse); only
  this confirmation is quoted.

Each arm's game of a seed and rotation is paired with the run's game of the same seed and
rotation (common random numbers); the statistics are :mod:`analysis.explain_stats`. ``summary/`` holds
the tables (CSV; what the report's "Why" part reads, :func:`analysis.explain_stats.read_summary`) and
``report.md``.
Playing the same command again finishes an interrupted experiment (the arms are resumable runs).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from analysis import explain_stats as X
from analysis.brief import strongest, strongest_lines
from analysis.compensation_stats import games_from_seats, step
from analysis.confirm_stats import fix_holds, fix_quote, rung_lines
from analysis.markdown import md as md_text
from analysis.markdown import md_command, md_fenced
from analysis.numbers import ranged
from analysis.scan import has_column, has_facts, has_play_states
from analysis.tables import card_value, scan
from strategies.registry import from_resolved

from .. import layout as L
from ..fsutil import atomic_folder
from ..ladderplan import own_folder
from ..manifest import MANIFEST, RunError
from ..rules import SWITCHES, Rules, start_vp_text, switch_value, validate
from ..runner import RunResult, open_run
from .arms import Arm, Backend, derive_seed, play_arms
from .confirm import check_fresh, parse_rungs
from .confirm import confirm_at as confirm_at_rungs
from .search import SUMMARY_KIND, check_search_folder, made_rotating, open_folder, rotating_doc
from .space import variant

KIND = "explain"
CHUNK = 1000                    # seeds per chunk of an arm: the unit of resuming
MIN_SEEDS = 10
DEFAULT_SEEDS = 2500            # seeds replayed per arm by default (docs/explain.md: the intervals they gave)
SWITCH_LABELS = {
    "end.after_trigger=finish_round": "finish the round (rulebook)",
    "end.after_trigger=finish_turn": "end at once (with the triggering turn)",
    "end.after_trigger=one_more_turn": "one more turn for every player",
    "end.tie_break=rulebook": "tie-break by the rulebook",
    "end.tie_break=shared": "shared victory on a tie",
    "setup.placement_order=seat_order": "setup in seat order (rulebook)",
    "setup.placement_order=reverse": "last seat places first",
}
COMPENSATION = "compensation"
CONFIRM_LABEL = 49      # the confirmation's run seed: derive_seed(the run's seed, CONFIRM_LABEL)
RUN_RULES = "the run's rules"


@dataclass(frozen=True)
class Plan:
    """What decides an explanation's games: the run (its folder, configuration and rules), the
    seeds replayed, whether a seat compensation is among the fixes."""

    run: RunResult
    rules: Rules
    seeds: int
    compensation: bool
    confirm_seeds: int = 0
    confirm_at: tuple = ()
    every_rotation: bool = False

    @property
    def config(self) -> dict:
        return self.run.manifest["config"]

    @property
    def players(self) -> int:
        return int(self.config["players"])

    @property
    def rotations(self) -> int:
        return self.players if self.config["seat_rotation"] else 1


def open_plan(run_path, seeds: int | None, compensation: bool = True, confirm_seeds: int | None = None,
              confirm_at: str | None = None, *, made_in=None) -> Plan:
    """The plan for the run folder ``run_path``: every input checked (RunError, one line).
    ``confirm_seeds``: fresh seeds the best fix is confirmed on (default: as many as replayed;
    0: none, and no fix is quoted); ``confirm_at``: rungs (``SPEC;SPEC;...``) it is also confirmed at.
    ``made_in``: the explanation's folder; one made before the confirmation stopped rotating
    fields of one player resumes as it was made (``every_rotation``, :func:`.search.made_rotating`)."""
    path = Path(run_path)
    if not (path / MANIFEST).is_file():
        raise RunError(f"RUN {run_path} is not a run folder (no {MANIFEST}); give the folder of an evora simulate run")
    run = open_run(path)
    cfg = run.manifest["config"]
    rules = validate(run.manifest["rules"])
    if rules.hash != cfg["rules_hash"]:
        raise RunError(f"run {run_path}: its manifest's rules do not have the rules hash it records "
                       f"({rules.hash} against {cfg['rules_hash']}); the folder was changed")
    present = _leading_seeds(run)
    if present < MIN_SEEDS:
        raise RunError(f"run {run_path} has {present:,} finished seeds from its first on; explain needs at least "
                       f"{MIN_SEEDS} (finish the run: run its command again)")
    if seeds is None:
        seeds = min(present, DEFAULT_SEEDS)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not MIN_SEEDS <= seeds <= present:
        raise RunError(f"--seeds must be a whole number from {MIN_SEEDS} to the {present:,} finished seeds of run "
                       f"{run_path} (from its first on), got {seeds!r}")
    if confirm_seeds is None:
        confirm_seeds = seeds
    if isinstance(confirm_seeds, bool) or not isinstance(confirm_seeds, int) or not (
            confirm_seeds == 0 or MIN_SEEDS <= confirm_seeds <= 10_000_000):
        raise RunError(f"--confirm-seeds must be 0 (no confirmation: no fix is quoted) or a whole number from "
                       f"{MIN_SEEDS} to 10,000,000, got {confirm_seeds!r}")
    rungs = ()
    if confirm_at is not None:
        if not confirm_seeds:
            raise RunError(f"--confirm-at {confirm_at!r} needs fresh seeds to play: drop --confirm-seeds 0")
        rungs = tuple(parse_rungs(confirm_at, int(cfg["players"])))
    every_rotation = made_in is not None and made_rotating(made_in, KIND)
    return Plan(run, rules, seeds, compensation, confirm_seeds, rungs, every_rotation)


def _leading_seeds(run: RunResult) -> int:
    """Seeds of the run finished from its first on (the arms replay a prefix of them)."""
    cfg = run.manifest["config"]
    done = set(run.done_chunks())
    k = 0
    while k in done:
        k += 1
    return min(cfg["games"], k * cfg["chunk_size"])


def explain_doc(plan: Plan, out) -> dict:
    """What decides the experiment in ``out`` (its search file; a resume must match it). The run is
    named by its path from ``out``, never an absolute one: a folder moved whole (a skill ladder
    with its rungs' explanations) is still the same experiment."""
    cfg = plan.config
    run = Path(os.path.relpath(Path(plan.run.out).absolute(), Path(out).absolute())).as_posix()
    config = {"run": run, "run_config": cfg, "seeds": plan.seeds, "compensation": plan.compensation,
              "confirm_seeds": plan.confirm_seeds, "confirm_at": list(plan.confirm_at)}
    return rotating_doc(KIND, config, plan.every_rotation)


def _strategies(plan: Plan) -> tuple:
    """The run's strategies of rotation 0 as it recorded them (a custom Python strategy is never
    run from a folder: refused, one line)."""
    cfg = plan.config
    info = cfg.get("resolved_strategies") or {}
    missing = [name for name in cfg["strategies"] if name not in info]
    if missing:
        raise RunError(f"run {plan.run.out} records no description of strategy {missing[0]!r}, so its games "
                       "cannot be replayed; play the run again with this version")
    return tuple(from_resolved(name, info[name], run_code=False) for name in cfg["strategies"])


def switch_sets(rules: Rules) -> list[str]:
    """Every ``KEY=VALUE`` of a mechanism switch other than the rules' own value."""
    return [f"{key}={v}" for key, values in SWITCHES.items() for v in values if v != switch_value(rules, key)]


GAME_COLUMNS = ("winner_seat", "turns", "lead_changes", "decided_by", "leader_at_trigger", "trigger_seat")
SEAT_COLUMNS = ("seat", "score", "leader_before_final_turn", *L.MAJORITY_NAMES)


def _games(run, seeds: int, rotations: int, seats: bool = False) -> pd.DataFrame:
    """The first ``seeds`` seeds' games (or seat rows) of a run, by game id: the columns the
    explanation reads that the run holds, from the blocks that hold those seeds only."""
    name = "seats" if seats else "games"
    cols = ["game_id"] + [c for c in (SEAT_COLUMNS if seats else GAME_COLUMNS) if has_column(run, name, c)]
    cut, frames = seeds * rotations, []
    for block in run.iter_table(name, cols):
        ids = block["game_id"].to_numpy()
        frames.append(block[ids < cut])
        if len(ids) and ids.max() >= cut - 1:
            break
    df = pd.concat(frames, ignore_index=True)
    return df.sort_values(["game_id", "seat"] if seats else "game_id").reset_index(drop=True)


def compensation_values(plan: Plan) -> tuple[np.ndarray | None, str]:
    """The starting VP the compensation arm plays (half VP steps), estimated by re-scoring the
    run's games past the replayed seeds (all of them when it has no others), and how."""
    if plan.rules.shared_victory:
        return None, "no compensation: the run's rules share tied victories (V4), which re-scoring does not model"
    n, rot = plan.players, plan.rotations
    seats = plan.run.table("seats", ["game_id", "seat", "score", "parts_left"])
    later = seats[seats["game_id"].to_numpy() >= plan.seeds * rot]
    fresh = len(later) >= MIN_SEEDS * rot * n
    played = np.asarray(plan.rules.data["players"]["start_vp"][:n], dtype=float)
    _, values = step(games_from_seats(later if fresh else seats, n, plan.rules.half_points(n), rot), played)
    where = ("estimated on the run's seeds past the replayed ones" if fresh else
             "estimated on the replayed seeds themselves (the run has no others), so it is judged on the games "
             "that chose it: optimistic")
    return values, where


def arms_of(plan: Plan, out: Path) -> tuple[list[Arm], list[tuple[str, str]], str]:
    """The arms (the baseline replay first when the run lacks the facts), their (label, change),
    and how the compensation was found."""
    n, strategies, rotated = plan.players, _strategies(plan), bool(plan.config["seat_rotation"])
    arms, labels = [], []
    if not has_facts(plan.run):
        arms.append(Arm(str(out / "baseline"), n, strategies, plan.rules, rotated))
        labels.append(("baseline", "the run's rules, replayed"))
    for change in switch_sets(plan.rules):
        arms.append(Arm(str(out / "arms" / change), n, strategies, variant(plan.rules, [change]), rotated))
        labels.append((SWITCH_LABELS[change], change))
    note = ""
    if plan.compensation:
        values, note = compensation_values(plan)
        if values is not None:
            change = f"players.start_vp={start_vp_text(values)}"
            arms.append(Arm(str(out / "arms" / COMPENSATION), n, strategies, variant(plan.rules, [change]), rotated))
            labels.append(("seat compensation (starting VP)", change))
    return arms, labels, note


def run_explain(plan: Plan, out, *, backend: Backend = Backend(), command: str = "", notice=None) -> dict:
    """Play (or finish) every arm, then write ``summary/``; returns the tables and the lines to print.
    The run's own tables are read (and their values checked: ``storage.value_problem``) before
    anything is written or played, so a damaged run costs nothing."""
    out = Path(out)
    doc = explain_doc(plan, out)
    check_search_folder(out, doc)
    arms, labels, comp_note = arms_of(plan, out)
    n, rot, k = plan.players, plan.rotations, plan.seeds
    replayed = bool(labels) and labels[0][0] == "baseline"
    if not replayed:
        parts = _facts(plan, lambda: _run_parts(plan.run, n, rot))
        decomposed = f"all {parts.seeds:,} finished seeds of the run"
        base_games, base_seats = _games(plan.run, k, rot), _games(plan.run, k, rot, seats=True)
    cards = card_findings(plan.run)
    open_folder(out, doc)
    if notice is not None:
        notice(f"explain: {len(arms)} arms of {k:,} seeds x {rot} rotations ({len(arms) * k * rot:,} games) into {out}")
    runs = [r.run for r in play_arms(arms, k, int(plan.config["seed"]), min(CHUNK, k), backend, command,
                                     root=out)]
    if replayed:
        base_run, runs, labels = runs[0], runs[1:], labels[1:]
        base_games, base_seats = _games(base_run, k, rot), _games(base_run, k, rot, seats=True)
        parts = _facts(plan, lambda: X.seed_parts(base_games, base_seats, n, rot))
        decomposed = f"the run's first {k:,} seeds replayed (the run was played before these facts were recorded)"
    table = X.parts_table(parts)
    base = X.Arm("the run's rules", "", X.seed_wins(base_games, n, rot),
                 X.game_measures(base_games, base_seats, n, rot))
    cf = [X.Arm(label, change, X.seed_wins(_games(r, k, rot), n, rot),
                X.game_measures(_games(r, k, rot), _games(r, k, rot, seats=True), n, rot))
          for (label, change), r in zip(labels, runs)]
    result = X.counterfactuals(base, cf, rot)
    result["confirmation"], result["fairness"] = confirm_best(plan, out, result["fairness"], backend, command, notice)
    lines = summary_lines(plan, table, parts, result, decomposed, comp_note) + card_lines(cards, n)
    summary = _write(out, doc, command, plan, table, parts, result, lines, decomposed, comp_note, cards)
    return {"parts": table, "turns": parts.turns, **result, "cards": cards, "lines": lines, "summary": summary}


def confirm_best(plan: Plan, out: Path, fair: pd.DataFrame, backend: Backend, command: str, notice):
    """The best fix (the fairest significantly fairer than the run's rules) and the run's rules on
    fresh seeds, by the run's players and at each ``confirm_at`` rung; the table
    (:func:`.confirm.confirm_at`, or None when there is nothing to confirm) and the fixes with a
    ``confirmed`` column: "confirmed" (fairer on the fresh seeds among the run's players),
    "not confirmed", or empty (not played again)."""
    fair = fair.assign(confirmed="")
    better = X.fairer_fixes(fair)
    if better.empty or not plan.confirm_seeds:
        return None, fair
    best = better.iloc[0]
    run_seed = int(plan.config["seed"])
    fresh = (derive_seed(run_seed, CONFIRM_LABEL), plan.confirm_seeds)
    check_fresh([(run_seed, int(plan.config["games"]))], fresh, "explain's confirmation")
    own = (f"the run's players ({', '.join(dict.fromkeys(plan.config['strategies']))})", _strategies(plan))
    arms = [(RUN_RULES, plan.rules), (best["arm"], variant(plan.rules, [best["change_made"]]))]
    if notice is not None:
        notice(f"confirming the best fix, {best['arm']}, on {plan.confirm_seeds:,} fresh seeds at "
               f"{1 + len(plan.confirm_at)} rung(s)")
    table = confirm_at_rungs(out / "confirm", plan.players, [own, *plan.confirm_at], arms, fresh, backend, command,
                             root=out, paired_with=RUN_RULES, seat_rotation=True if plan.every_rotation else None)
    fair.loc[fair["arm"] == best["arm"], "confirmed"] = "confirmed" if fix_holds(table, best["arm"]) else "not confirmed"
    return table, fair


def _facts(plan: Plan, decompose):
    """``decompose()``, a table the run's files hold but no game writes (a name changed by hand)
    named in one line (RunError)."""
    try:
        return decompose()
    except ValueError as exc:
        raise RunError(f"run {plan.run.out}: {exc}") from None


def explain_ladder(out: Path, plan, seeds: int, backend: Backend = Backend(), command: str = "",
                   notice=None) -> list[dict]:
    """``evora explain`` at every rung of the ladder ``evora skill`` played into ``out`` (its
    ``plan``): each rung's first ``seeds`` seeds replayed under every switch and the rung's own
    seat compensation, into ``out/why/rN`` (resumable like any explain folder). Whether a fix
    found among weak players still fixes the game among strong ones is the question."""
    results = []
    for i, rung in enumerate(plan.rungs):
        why = own_folder(out, plan.why_folder(i))
        rung_plan = open_plan(own_folder(out, plan.rung_folder(i)), seeds, True, made_in=why)
        check_search_folder(why, explain_doc(rung_plan, why))
        if notice is not None:
            notice(f"explain rung {i + 1}/{len(plan.rungs)} ({rung}) -> {why}")
        results.append(run_explain(rung_plan, why, backend=backend, command=command, notice=notice))
    return results


def card_findings(run):
    """The run's card table with when each card is played (``analysis.playstates``), or None for a
    run played before that was recorded: one pass over the run's tables."""
    if not has_play_states(run):
        return None
    return card_value(scan([run]))


def card_lines(cards, n: int) -> list[str]:
    """The strongest card findings in the report's words (associations), each with when the card
    is played; or why there are none."""
    head = "Cards (associations, not the cards' effects; each with when it is played):"
    if cards is None:
        return [head, "  not recorded: the run was played before the state of each card play was recorded"]
    return [head, "  " + strongest_lines(strongest(cards, None), [n])[0]]


def _run_parts(run, n: int, rot: int):
    """The decomposition's statistics of every finished game of the run, block by block."""
    parts = X.SeatParts(n)
    games = run.iter_table("games", ["game_id", *X.GAME_FACTS])
    seats = run.iter_table("seats", ["game_id", "seat", *X.SEAT_FACTS])
    for g, s in zip(games, seats):
        parts.merge(X.seed_parts(g, s, n, rot))
    return parts


def _signed(v: float, lo: float, hi: float, scale: float = 100.0, unit: str = " pp") -> str:
    return ranged(v, lo, hi, scale=scale, unit=unit, signed=True)


def summary_lines(plan: Plan, table, parts, result, decomposed: str, comp_note: str) -> list[str]:
    n = plan.players
    seat = X.largest_seat(table)
    lines = [f"Why the seats win what they win ({n} players, {', '.join(plan.config['strategies'])}; from {decomposed}):",
             "  " + X.why_sentence(table, seat, n, parts.turns)]
    for p in range(n):
        if p != seat:
            lines.append("  " + X.why_sentence(table, p, n, parts.turns))
    fair = result["fairness"]
    lines.append(f"Fixes ranked by the seat unfairness they leave (the same {plan.seeds:,} seeds replayed under each, "
                 "paired with the run's games; * = its change significant after Holm over the changes):")
    for r in fair.itertuples():
        shown = ranged(r.unfairness, r.lo, r.hi, unit=" pp")
        change = "" if r.arm == "the run's rules" else (
            ", a significant change" if r.significant else ", no significant change")
        lines.append(f"  {r.rank}. {r.arm}: {shown}{change}")
    better = X.fairer_fixes(fair)
    confirmed = X.confirmed_fixes(fair)
    if len(confirmed):
        best = confirmed.iloc[0]
        lines.append(f"What would fix it? {best.arm} ({best.change_made}), confirmed: "
                     + fix_quote(result["confirmation"], best.arm, RUN_RULES, n) + ".")
    elif len(better):
        best = better.iloc[0]
        why = ("not played again on fresh seeds (--confirm-seeds 0)" if not best.confirmed else
               f"not confirmed on {plan.confirm_seeds:,} fresh seeds: there no paired test finds it fairer than the "
               "run's rules")
        lines.append(f"What would fix it? No fix is confirmed. The fairest on the replayed seeds, {best.arm}, was "
                     f"{why}; its figures on the seeds that ranked it first are biased toward it, so none is quoted.")
    if len(better) and result["confirmation"] is not None:
        lines += rung_lines_of(result["confirmation"], better.iloc[0].arm, n)
    if better.empty:
        lines.append("What would fix it? None of the changes tried makes the seats significantly fairer than the "
                     "run's rules (paired test, Holm over the changes).")
    seats_t = result["seats"]
    if len(seats_t):
        lines.append(f"Change of {X.seat_words(seat, n)}'s win rate under each (95% interval; * = significant after "
                     "Holm over every change and seat):")
        for r in seats_t[seats_t["seat"] == seat].itertuples():
            lines.append(f"  {r.arm}: {_signed(r.change, r.lo, r.hi)}{' *' if r.significant else ''}")
    if comp_note:
        lines.append(f"Seat compensation: {comp_note}.")
    return lines


def rung_lines_of(table, arm: str, n: int) -> list[str]:
    """The confirmation at every rung in lines; the verdict over the ``confirm_at`` rungs only
    (rung 0 is the run's own players, which need not sit in the ladder's order)."""
    lines = [f"Confirmation of {arm} on fresh seeds:"] + rung_lines(table[table["rung"] == 0], arm, n)[:-1]
    ladder = table[table["rung"] > 0]
    if len(ladder):
        lines += ["At the rungs of --confirm-at:", *rung_lines(ladder.assign(rung=ladder["rung"] - 1), arm, n)]
    return lines


def _write(out: Path, doc, command, plan, table, parts, result, lines, decomposed, comp_note, cards=None) -> Path:
    final = out / "summary"
    fair = result["fairness"]
    with atomic_folder(final, SUMMARY_KIND) as tmp:
        table.to_csv(tmp / "decomposition.csv", index=False)
        pd.DataFrame([{"winner_seat": w, "turn_of_seat": t, "games": int(parts.turns[w, t])}
                      for w in range(plan.players) for t in range(plan.players)]).to_csv(
            tmp / "final_round_turns.csv", index=False)
        result["seats"].to_csv(tmp / "counterfactual_seats.csv", index=False)
        fair.to_csv(tmp / "fixes.csv", index=False)
        result["measures"].to_csv(tmp / "side_effects.csv", index=False)
        if result.get("confirmation") is not None:
            result["confirmation"].to_csv(tmp / "confirmation.csv", index=False)
        if cards is not None:
            cards.to_csv(tmp / "cards.csv", index=False)
        pd.DataFrame([{"players": plan.players, "seeds_replayed": plan.seeds, "decomposed": decomposed,
                       "largest_seat": X.largest_seat(table), "compensation_note": comp_note}]).to_csv(
            tmp / "about.csv", index=False)
        md = ["## Why: where the seats' edges come from, and what would fix them", "",
              md_command(command), "", *(md_text(x) for x in lines), "", X.METHOD, "",
              "### The decomposition (pp of win rate, 95% interval over seeds)", "",
              X.shown_parts(table).to_markdown(index=False), "",
              "### The fixes, ranked by the seat unfairness they leave", "",
              X.shown_fixes(fair).to_markdown(index=False), "",
              "### What else each changes (paired with the run's games)", "",
              X.shown_measures(result["measures"]).to_markdown(index=False), "",
              *md_fenced(json.dumps({k: v for k, v in doc["config"].items() if k != "run_config"}, indent=1),
                         "json"), ""]
        (tmp / "report.md").write_text("\n".join(md), encoding="utf-8")
    return final


__all__ = ["Plan", "open_plan", "run_explain", "explain_ladder", "switch_sets"]
