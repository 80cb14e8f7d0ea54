"""``evora train``: a learned turn-planner evaluation fitted to the search player's choices.

The recipe (expert iteration's imitation step, Anthony et al. 2017):
1. **Teacher games**: the teacher (by default the search player) plays itself through
   ``runner.simulate`` with the actions recorded, so the games resume, run on Dask and are
   checked like every run folder (``DIR/teacher``).
2. **Rows**: every teacher turn is replayed (``strategies.imitation.turn_rows``): the ``want``
   best turns the planner lists under the starting weights, and the turn the teacher took.
3. **Fit**: a conditional logit (``strategies.fit``) moves the starting weights (the previous
   expert's, or ``cardheights`` restated) until the teacher's turns rank first.
4. **Check**: the candidate duels the player it would replace, in the target rules, on fresh
   seeds (seat rotation, its interval): the weights already in ``DIR/expert.toml`` for these
   players, else the built-in expert, each as it plays (its own depth). Only a candidate whose
   interval lies above the fair share replaces it; otherwise it goes to ``DIR/candidate.toml``.
   Beating the weights it started from is not enough: started from ``cardheights`` for a variant,
   a candidate beat it (67%) and lost to the built-in expert in the same variant (35%).
5. **Write** ``DIR/expert.toml`` (other player counts already there are kept), with the command,
   seed, teacher and games that made it, and the rules hash it was trained for.

Why imitation and not outcomes: see ``strategies.imitation``. The features never read the order
below a stack's top (P10), and neither does the planner that lists the alternatives.
"""
from __future__ import annotations

import hashlib
import json
import math
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

from evora_sim.rng import new_stream
from strategies import values
from strategies.builtin import PLANS, Strategy
from strategies.errors import StrategyError
from strategies.features import NL
from strategies.fit import conditional_logit
from strategies.imitation import OTHER, check_want, new_buffers, new_rows, turn_rows
from strategies.learned import LearnedWeights, check_table, from_hand, to_table
from strategies.planner import new_plan_work
from strategies.registry import EXPERT_NAME, learned_strategy, parse_spec, resolved, seat_arrays, shipped_expert

from ..fields import DEFAULT_DUEL_GAMES, DEFAULT_GAMES, DEFAULT_TEACHER  # noqa: F401  (the command's defaults)
from ..fsutil import check_folder_kind, is_leftover, own_path, write_bytes_atomic
from ..manifest import MAX_CHUNKS, MAX_GAMES, RunError
from ..rules import Rules, load_rules
from ..runner import Execution, check_jobs, simulate
from ..tomlfile import read_toml
from .arms import Backend

WANT = 32                                        # the planner's best turns listed beside the teacher's
RIDGE = 1e-4
BASELINE = "cardheights"                         # the start where no previous weights exist
TRAINED_NAME = "expert"                          # the table name in DIR/expert.toml
TEACHER_CHUNK = 10                               # teacher games per chunk: progress and resume at this grain
MAX_ROWS_PER_GAME = 40_000


@dataclass(frozen=True)
class TrainPlan:
    players: int
    games: int
    teacher: str
    seed: int
    duel_games: int
    rules: Rules
    previous: object            # the Strategy the candidate starts from (at ``replies``)
    previous_label: str
    replies: int = 0            # best turns the trained expert values by the next seat's reply
    ahead_from: float = 0.0     # ... from this progress of the game on (the built-in expert's at the count)
    rival: object = None        # the player DIR/expert.toml would replace, as it plays: the one to beat
    rival_label: str = ""


@dataclass(frozen=True)
class TrainResult:
    weights: tuple[float, ...]
    turns: int
    agreement: float
    duel: object                # evora_sim.duel.DuelResult
    kept: bool                  # the candidate beat the player it replaces, and was written
    file: Path
    lines: list[str]


def previous_weights(players: int, rules: Rules, out: Path, error, start: str | None = None):
    """What a new fit starts from, with a label (what it must beat is :func:`rival_player`).
    ``start``: a spec (a hand-weighted player, restated as learned weights, or learned weights);
    None: the weights already in ``out/expert.toml`` for these players, else the built-in expert
    when the rules are the rulebook's, else ``cardheights`` restated."""
    if start is not None:
        s = parse_spec(start)
        if getattr(s, "is_learned", False):
            w = s.learned_for(players)
            if w is None:
                raise error(f"--start {start!r} holds no weights for {players} players")
        elif isinstance(s, Strategy) and s.is_heuristic:
            w = from_hand(s.weights)
        else:
            raise error(f"--start {start!r}: a weighted player (cardheights, balanced(...), FILE.toml:NAME) "
                        "or learned weights (expert); random, mcts and Python strategies have no weights to start from")
        return Strategy("previous", PLANS["turn"], learned=((players, tuple(w)),)), start
    mine = _folder_player(out, players, "previous", error)
    if mine is not None:
        return mine
    if rules.hash == load_rules().hash:
        shipped = shipped_expert(error)
        if shipped.for_players(players) is not None:
            return learned_strategy("previous", "previous", _only(shipped, players)), "the built-in expert"
    w = from_hand(parse_spec(BASELINE).weights)
    return Strategy("previous", PLANS["turn"], learned=((players, tuple(w)),)), f"{BASELINE} (restated)"


def _only(weights, players: int):
    """``weights`` of one player count, with the depth it plays at."""
    return LearnedWeights(weights.name, ((players, weights.for_players(players)),), weights.description,
                          weights.made_by, weights.rules_hash, tuple((n, k) for n, k in weights.replies if n == players),
                          tuple((n, t) for n, t in weights.ahead_from if n == players))


def rival_player(players: int, out: Path, error):
    """The player ``DIR/expert.toml`` would replace, as it plays (its recorded depth), with a label:
    the weights already there for these players, else the built-in expert (whatever the rules:
    it is what a user plays a variant with when no trained weights exist)."""
    return (_folder_player(out, players, "incumbent", error)
            or (learned_strategy(EXPERT_NAME, EXPERT_NAME, _only(shipped_expert(error), players)), "the built-in expert"))


def _folder_player(out: Path, players: int, name: str, error):
    """(the weights in ``out/expert.toml`` for these players as a player called ``name``, a label),
    or None where it holds none."""
    mine = read_weights(out, error)
    if mine is None or mine.for_players(players) is None:
        return None
    return learned_strategy(name, name, _only(mine, players)), f"the weights in {out / 'expert.toml'}"


# what a training folder holds: its teacher runs, its duels and its weight files (nothing else)
_OWN_ENTRY = re.compile(r"teacher-[234]p|duel-[234]p-[0-9a-f]{10}|expert\.toml|candidate\.toml")
MAX_TEACHER_GAMES = MAX_CHUNKS * TEACHER_CHUNK       # a teacher run's chunks stay within what a run holds


def _holds_training(folder: Path) -> bool:
    """Whether ``folder`` holds only what ``evora train`` writes (an older training, resumed)."""
    return all(_OWN_ENTRY.fullmatch(p.name) or is_leftover(p) for p in folder.iterdir())


def check_train_folder(out) -> bool:
    """Refuse an ``--out`` that is a file or holds anything but a training (one line, RunError,
    nothing written: :func:`fsutil.check_folder_kind`); whether it holds an earlier training."""
    return check_folder_kind(Path(out), _holds_training, "a training folder (evora train)", "--out", RunError)


def read_weights(out: Path, error):
    """DIR/expert.toml as learned weights, or None where there is none yet; a damaged one is
    refused, never overwritten. The reading half of :func:`write_weights`, public so that what
    one writes is checked by reading it back the way training does."""
    path = own_path(out, "expert.toml", error=error)
    if not path.exists():
        return None
    if not path.is_file():
        raise error(f"{path} is not a file, so not a weight file this version wrote; move it away to train here")
    doc = read_toml(path, "the weight file", lambda line: error(f"{line}; it is not one this version wrote: "
                                                                "move it away to train here"))
    if set(doc) != {TRAINED_NAME}:
        raise error(f"{path}: expected one table [{TRAINED_NAME}], found {', '.join(sorted(doc)) or 'none'}")
    return check_table(doc[TRAINED_NAME], f"{path} [{TRAINED_NAME}]", error)


def plan_training(players: int, games: int | None, teacher: str, seed: int, duel_games: int,
                  rules, out, start: str | None = None, replies: int | None = None) -> TrainPlan:
    """Every argument checked (one line each) before anything is played or written. ``replies``
    (None: the built-in expert's at this player count) is how far the trained expert looks: how
    many of its best turns it values by the next seat's reply. Not a matter of the rules, so a
    variant's expert looks as far as the built-in one it is compared with."""

    if players not in (2, 3, 4):
        raise RunError(f"--players must be 2, 3 or 4, got {players!r}")
    games = DEFAULT_GAMES[players] if games is None else games
    if isinstance(games, bool) or not isinstance(games, int) or not 10 <= games <= MAX_TEACHER_GAMES:
        raise RunError(f"--games must be a whole number of teacher games from 10 to {MAX_TEACHER_GAMES:,}, "
                       f"got {games!r}")
    if (isinstance(duel_games, bool) or not isinstance(duel_games, int)
            or not 2 * players <= duel_games <= MAX_GAMES):
        raise RunError(f"--duel-games must be a whole number from {2 * players} (one seed under every seat "
                       f"order) to {MAX_GAMES:,} (what a run holds), got {duel_games!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63 - 1:
        raise RunError(f"--seed must be a whole number from 0 to 2**63-2 (the duel plays seed+1), got {seed!r}")
    check_train_folder(out)
    if not isinstance(rules, Rules):
        rules = load_rules(rules)
    try:
        parse_spec(teacher)
    except StrategyError as exc:
        raise StrategyError(f"--teacher: {exc}") from None
    mine = read_weights(Path(out), RunError)
    if mine is not None and mine.rules_hash != rules.hash:
        raise RunError(f"{Path(out) / 'expert.toml'} holds weights trained for other rules (hash {mine.rules_hash}, "
                       f"these are {rules.hash}); train into another --out")
    shipped = shipped_expert(RunError)
    if replies is None:
        replies = dict(shipped.replies).get(players, 0)
    replies = values.replies(replies, "--replies", RunError, sep=" ")
    ahead = dict(shipped.ahead_from).get(players, 0.0) if replies else 0.0
    previous, label = previous_weights(players, rules, Path(out), RunError, start)
    previous = replace(previous, replies=((players, replies),) if replies else (),
                       ahead_from=((players, ahead),) if ahead else ())
    rival, rival_label = rival_player(players, Path(out), RunError)
    return TrainPlan(players, games, teacher, seed, duel_games, rules, previous, label, replies, ahead, rival,
                     rival_label)


def teacher_games(plan: TrainPlan, out: Path, jobs: int, backend, quiet: bool, command: str):
    """The teacher's self-play games, actions recorded (``out/teacher``, resumable)."""
    return simulate(plan.players, plan.games, [plan.teacher] * plan.players, seed=plan.seed,
                    out=own_path(out, f"teacher-{plan.players}p", error=RunError), extend=True,
                    seat_rotation=False, rules=plan.rules, record_actions=True,
                    execution=Execution(jobs=jobs, backend=backend.backend, scheduler=backend.scheduler,
                                        chunk_size=TEACHER_CHUNK, quiet=quiet, command=command))


def teacher_rows(players: int, rules: Rules, start, items):
    """The rows of some teacher games (one worker's share): features, turn number, label. Public:
    the work one process does for :func:`training_rows`, checked on its own (its bounds are
    refused before any row)."""
    want = check_want(WANT)
    _, W = seat_arrays([start] * players)
    work = new_plan_work()
    scratch = new_buffers()
    out = new_rows(MAX_ROWS_PER_GAME)
    feats, group, label = out
    out_x, out_g, out_l = [], [], []
    offset = 0
    for seed, actions in items:
        rows, groups = turn_rows(rules.packed, players, int(seed), np.asarray(actions, dtype=np.int64), W, want,
                                 out, work, new_stream(int(seed)), scratch)
        out_x.append(feats[:rows].copy())
        out_g.append(group[:rows] + offset)
        out_l.append(label[:rows].copy())
        offset += groups
    if not out_x:
        return np.zeros((0, NL)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 0
    return np.vstack(out_x), np.concatenate(out_g), np.concatenate(out_l), offset


def training_rows(plan: TrainPlan, run, jobs: int, progress=None):
    """Every teacher turn as a group of rows, split over ``jobs`` processes."""
    games = run.table("games", columns=["seed", "actions"])
    items = list(zip(games["seed"].to_numpy(), games["actions"]))
    n_jobs = min(check_jobs(jobs), max(1, len(items)))
    pieces = max(n_jobs * 4, 1)
    size = math.ceil(len(items) / pieces)
    shares = [items[i:i + size] for i in range(0, len(items), size)]
    parts, done, t0 = [], 0, time.monotonic()
    runner = Parallel(n_jobs=n_jobs, return_as="generator") if n_jobs > 1 else None
    jobs_iter = (runner(delayed(teacher_rows)(plan.players, plan.rules, plan.previous, s) for s in shares)
                 if runner else (teacher_rows(plan.players, plan.rules, plan.previous, s) for s in shares))
    for share, part in zip(shares, jobs_iter):
        parts.append(part)
        done += len(share)
        if progress:
            rate = done / max(time.monotonic() - t0, 1e-9)
            progress(f"turns of {done:,} of {len(items):,} teacher games listed, "
                     f"about {(len(items) - done) / rate:.0f} s left")
    X, G, L, offset = [], [], [], 0
    for x, g, lab, groups in parts:
        X.append(x)
        G.append(g + offset)
        L.append(lab)
        offset += groups
    return np.vstack(X), np.concatenate(G), np.concatenate(L)


def fit_candidate(plan: TrainPlan, X, G, L):
    """The conditional-logit fit from the previous weights (the win weight is kept)."""
    start = np.asarray(plan.previous.learned_for(plan.players))
    fit = conditional_logit(X, G, L != OTHER, start[:NL], ridge=RIDGE)
    return tuple(float(x) for x in fit.weights) + (float(start[NL]),), fit


def candidate_player(plan: TrainPlan, weights):
    """The candidate as it would play: the fitted weights at the depth the file records."""
    return Strategy("candidate", PLANS["turn"], learned=((plan.players, tuple(weights)),),
                    replies=((plan.players, plan.replies),) if plan.replies else (),
                    ahead_from=((plan.players, plan.ahead_from),) if plan.ahead_from else ())


def duel_folder(plan: TrainPlan, weights) -> str:
    """The check's folder, named by both players: another candidate, or another player to
    replace, is another duel."""

    text = json.dumps([resolved(candidate_player(plan, weights)), resolved(plan.rival)], sort_keys=True)
    return f"duel-{plan.players}p-{hashlib.sha256(text.encode()).hexdigest()[:10]}"


def check_candidate(plan: TrainPlan, weights, out: Path, jobs: int, quiet: bool):
    """The candidate against the player it would replace (``plan.rival``), in the target rules,
    every seed under every seat order; the candidate sits in one seat, the rival in the others."""
    # lazy: `evora strategies` imports this module (made_by_counts), and the duel's statistics (SciPy,
    # statsmodels) would add 2 s to its 3.5 s (measured)
    from evora_sim.duel import duel

    field = [candidate_player(plan, weights)] + [plan.rival] * (plan.players - 1)
    return duel(field, plan.duel_games, seed=plan.seed + 1, jobs=jobs, rules=plan.rules, quiet=quiet,
                out=own_path(out, duel_folder(plan, weights), error=RunError))


def write_weights(out: Path, plan: TrainPlan, weights, made_by: str, description: str, replies: int = 0,
                  ahead_from: float = 0.0) -> Path:
    """DIR/expert.toml with these players' weights (and ``replies``, ``ahead_from``) beside the counts already
    trained there for the same rules (written whole, never through a link:
    ``fsutil.write_bytes_atomic``)."""
    old = read_weights(out, RunError)
    same = old is not None and old.rules_hash == plan.rules.hash
    kept = dict(old.weights) if same else {}
    kept[plan.players] = tuple(weights)
    kept_replies = {n: k for n, k in old.replies if n != plan.players} if same else {}
    kept_ahead = {n: t for n, t in old.ahead_from if n != plan.players} if same else {}
    if replies:
        kept_replies[plan.players] = int(replies)
    if replies and ahead_from:
        kept_ahead[plan.players] = float(ahead_from)
    made = {} if old is None or old.rules_hash != plan.rules.hash else made_by_counts(old.made_by)
    made[plan.players] = made_by
    text = to_table(LearnedWeights(TRAINED_NAME, tuple(sorted(kept.items())), description,
                                   " | ".join(f"{n} players: {m}" for n, m in sorted(made.items())),
                                   plan.rules.hash, tuple(sorted(kept_replies.items())),
                                   tuple(sorted(kept_ahead.items()))))
    path = out / "expert.toml"
    write_bytes_atomic(path, text.encode("utf-8"))
    return path


def made_by_counts(made_by: str) -> dict[int, str]:
    out = {}
    for part in made_by.split(" | "):
        head, _, rest = part.partition(" players: ")
        if head.strip().isdigit() and rest:
            out[int(head)] = rest
    return out


def run_training(plan: TrainPlan, out, jobs: int = -1, backend=None, command: str = "evora train",
                 quiet: bool = False, notice=None) -> TrainResult:
    """The whole recipe; every stage resumes (teacher games and the duel are run folders). A
    training refused before it wrote anything leaves no folder behind."""

    out = Path(out)
    backend = backend or Backend(check_jobs(jobs), "loky", None)
    check_train_folder(out)
    made = [p for p in (out.absolute(), *out.absolute().parents) if not p.exists()]
    out.mkdir(parents=True, exist_ok=True)
    try:
        return _train(plan, out, jobs, backend, command, quiet, notice)
    except BaseException:
        for folder in made:                  # only folders this call made, and only while empty
            try:
                folder.rmdir()
            except OSError:
                break
        raise


def _train(plan: TrainPlan, out: Path, jobs: int, backend, command: str, quiet: bool, notice) -> TrainResult:
    say = notice or (lambda line: None)
    t0 = time.monotonic()
    say(f"1/4 teacher games: {plan.games:,} games of {plan.teacher} at {plan.players} players -> {out / f'teacher-{plan.players}p'}")
    run = teacher_games(plan, out, jobs, backend, quiet, command)
    say(f"2/4 rows: the planner's {WANT} best turns beside each turn the teacher took")
    X, G, L = training_rows(plan, run, jobs, progress=None if quiet else say)
    say(f"3/4 fit: {int(G.max()) + 1 if len(G) else 0:,} turns, {len(X):,} rows, starting from {plan.previous_label}")
    weights, fit = fit_candidate(plan, X, G, L)
    say(f"4/4 check: the candidate against {plan.rival_label}, the player it would replace, in these rules, "
        f"{plan.duel_games:,} games")
    res = check_candidate(plan, weights, out, jobs, quiet)
    row = next(r for r in res.rows if r.strategy == "candidate")
    share = 1 / plan.players
    lo, hi = row.interval
    rate = row.win_rate
    kept = lo > share
    verdict = (f"the new weights win {100 * rate:.1f}% (95% range {100 * lo:.1f}-{100 * hi:.1f}, "
               f"{row.seat_games:,} seat-games) against {plan.rival_label} in these rules, fair share "
               f"{100 * share:.0f}%")
    made_by = (f"{command} (teacher {plan.teacher}, {plan.games} games, seed {plan.seed}; "
               f"{fit.turns:,} turns, agreement {100 * fit.agreement:.1f}%)")
    lines = [f"Trained at {plan.players} players on {fit.turns:,} teacher turns: the fitted value ranks the "
             f"teacher's turn first in {100 * fit.agreement:.1f}% of them."]
    if kept:
        path = write_weights(out, plan, weights, f"{made_by}; checked by duel: {verdict}",
                             "A turn planner valuing positions by weights fitted to the search player's turns "
                             "(evora train).", plan.replies, plan.ahead_from)
        lines.append(f"Better than {plan.rival_label}: {verdict}.")
        lines.append(f"Written: {path}; use it as --strategies {path}:{TRAINED_NAME}")
    else:
        path = out / "candidate.toml"
        write_bytes_atomic(path, to_table(LearnedWeights("candidate", ((plan.players, tuple(weights)),),
                                                         f"Not better than {plan.rival_label}: {verdict}.",
                                                         made_by, plan.rules.hash,
                                                         candidate_player(plan, weights).replies,
                                                         candidate_player(plan, weights).ahead_from)).encode("utf-8"))
        lines.append(f"Not written: {verdict}, not significantly more than a fair share, so {plan.rival_label} "
                     f"stays the player to use for these rules. The new weights are in {path} (more teacher "
                     "games, --games, usually help).")
    lines.append(f"Took {(time.monotonic() - t0) / 60:.1f} min.")
    return TrainResult(tuple(weights), fit.turns, fit.agreement, res, kept, path, lines)
