"""The search engine: noisy optimisation over parameters (rules values or strategy weights), each
candidate scored by simulated games. ``evora tune strategy`` and ``evora balance`` are recipes
(a :class:`Problem`) over it.

- **Optimiser.** optuna's TPE sampler, driven ask-and-tell, so this loop owns the seeds and the
  games. TPE handles the mixed spaces both recipes need (whole numbers, ranges of weights, lists
  of values) and is robust to noisy scores. Each draw uses a sampler seeded from the search seed,
  the round and the slot, so a candidate depends only on the trials before it: the study rebuilt
  from the journal draws the same candidates, and a resumed search is the same search.
- **Rounds on common random numbers.** A round asks ``batch`` candidates; all of them play the
  same game seeds (the round's run seed), every seed under each seat rotation, so they are
  compared paired by seed.
- **Successive halving.** Every candidate plays ``seeds`` seeds; the better half plays on to
  twice as many (the same seeds, then new ones, common to the survivors), and so on until one is
  left, the round's winner. Games go to the promising candidates; the sampler is told each
  candidate's score on all the seeds it played.
- **Winner's curse.** The best of many noisy scores is biased up. The best few round winners
  (``finalists``) and the baseline are played again on fresh seeds (a run seed no round used);
  only that confirmation is reported, with intervals adjusted for the number of finalists
  (Bonferroni), so the one chosen among them keeps its coverage.
- **Behaviour.** Every game is a run folder under ``--out`` (:mod:`.arms`), the journal holds
  one line per finished round: an interrupted search run again with the same command plays only
  what is missing and ends with the same result; the Dask backend plays the chunks on a cluster.
- **Output** (``--out/summary``, replaced whole): ``candidates.csv`` (every candidate and its
  score), ``search.png`` (the search), ``confirmation.csv``, ``report.md`` (the report section)
  and the result as a file the toolkit reads (the recipe's).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import optuna
from optuna.samplers import TPESampler
from optuna.trial import TrialState, create_trial

from analysis.plots import save
from analysis.search_stats import candidates_table, report_section, search_figure

from ..fsutil import atomic_folder, check_folder_kind, check_output_folder, write_bytes_atomic
from ..manifest import RunError, read_plan, write_json_atomic
from ..rules import RulesError
from .arms import Arm, Backend, derive_seed, params_key, play_arms
from .space import Dim

SEARCH = "search.json"
JOURNAL = "journal.jsonl"
FORMAT = "evora-sim search"
SUMMARY_KIND = "search summary"
MAX_ATTEMPTS = 50          # draws per slot before a space with too few playable candidates is refused
ALPHA = 0.05


@dataclass(frozen=True)
class Settings:
    """How the search spends its games: ``budget`` games for the rounds (the confirmation comes
    on top: ``confirm_seeds`` seeds per arm), ``batch`` candidates a round, ``seeds`` seeds each
    at the first rung, ``finalists`` confirmed, ``seed`` the search seed."""

    budget: int
    batch: int = 8
    seeds: int = 50
    finalists: int = 3
    confirm_seeds: int = 2000
    seed: int = 1

    def rungs(self) -> list[tuple[int, int]]:
        """(candidates, seeds each) per rung of a round: halving, seeds doubling, down to one."""
        out, m, n = [], self.batch, self.seeds
        while True:
            out.append((m, n))
            if m == 1:
                return out
            m, n = (m + 1) // 2, 2 * n

    def round_seeds(self) -> int:
        """Seeds one round plays, over its candidates (each seed under every rotation)."""
        total, before = 0, 0
        for m, n in self.rungs():
            total += m * (n - before)
            before = n
        return total

    def as_dict(self) -> dict:
        return {"budget": self.budget, "batch": self.batch, "seeds": self.seeds,
                "finalists": self.finalists, "confirm_seeds": self.confirm_seeds, "seed": self.seed}


class Problem:
    """A recipe: what a candidate is and how it is played and scored. Subclasses set ``kind``,
    ``direction`` ('maximize' or 'minimize'), ``dims`` and ``games_per_seed`` (the games one
    candidate plays per seed: seat rotations over its arms)."""

    kind = ""
    direction = "maximize"
    dims: list[Dim] = []
    games_per_seed = 1
    score_name = "score"

    def config(self) -> dict:                       # everything that decides the results
        raise NotImplementedError

    def check(self, values: dict) -> None:          # RulesError: this candidate cannot be played
        return None

    def arms(self, values: dict, folder: Path) -> list[Arm]:
        raise NotImplementedError

    def score(self, runs: list, values: dict) -> tuple[float, dict]:
        raise NotImplementedError

    def baseline(self) -> dict:
        return {d.key: d.base for d in self.dims}

    def confirm(self, baseline_runs: list, finalists: list[tuple[dict, list]], alpha: float):
        """(table: one row per arm and measure, index of the chosen finalist, lines to print)."""
        raise NotImplementedError

    def write_result(self, values: dict, folder: Path) -> list[str]:
        raise NotImplementedError

    def report_lines(self, values: dict) -> list[str]:
        return []

    def better(self, a: float, b: float) -> bool:
        return a > b if self.direction == "maximize" else a < b


@dataclass
class SearchResult:
    out: Path
    trials: list = field(default_factory=list)       # every candidate, as the journal holds it
    confirmation: object = None                      # the problem's confirmation table
    chosen: dict | None = None                       # the chosen finalist's values
    lines: list[str] = field(default_factory=list)
    summary: Path | None = None


# ---------------------------------------------------------------------------------------------
# the search folder
# ---------------------------------------------------------------------------------------------
def n_rounds(problem: Problem, settings: Settings) -> int:
    return settings.budget // round_games(problem, settings)


def round_games(problem: Problem, settings: Settings) -> int:
    return settings.round_seeds() * problem.games_per_seed


def check_budget(problem: Problem, settings: Settings) -> None:
    cost = round_games(problem, settings)
    if settings.budget < cost:
        raise RunError(f"--budget {settings.budget:,} is too small for one round: a round of "
                       f"{settings.batch} candidates starting at {settings.seeds} seeds each costs "
                       f"{cost:,} games; give --budget {cost:,} or more (or a smaller --batch or --seeds)")


def check_search_folder(out: Path, doc: dict) -> None:
    """Refuse an ``--out`` that is not this search's folder (another search, a folder holding
    something else, a file: :func:`fsutil.check_folder_kind`) before anything is written."""
    out = Path(out)

    def holds_search(folder: Path) -> bool:
        return (folder / SEARCH).exists() or (folder / SEARCH).is_symlink()

    if not check_folder_kind(out, holds_search, _folder_name(doc.get("kind")), "--out", RunError):
        return
    old = read_plan(out, SEARCH, "search")
    if old is None or old.get("format") != FORMAT:
        raise RunError(f"{out / SEARCH} is not an evora-sim search file")
    if not isinstance(old.get("config"), dict):
        raise RunError(f"{out / SEARCH} is not an evora-sim search file: its config is not a table "
                       f"(it is {type(old.get('config')).__name__}); choose another --out")
    if old["config"] != doc["config"]:
        diff = [k for k in sorted(set(old["config"]) | set(doc["config"]))
                if old["config"].get(k) != doc["config"].get(k)]
        raise RunError(f"--out {out} holds a different search ({', '.join(diff)} differ); "
                       "choose another --out")
    check_output_folder(out / "summary", SUMMARY_KIND, "--out", RunError)


ROTATION_AS_NEEDED = "as the players need"     # a search file's mark of a folder that rotates only mixed fields


def rotating_doc(kind: str, config: dict, every_rotation: bool) -> dict:
    """The search file of a ``kind`` whose fields of one player play each seed once: ``config``
    marked so (``rotation``), unless the folder was made before that (``every_rotation``,
    :func:`made_rotating`), whose file must stay as it was for the folder to resume."""
    mark = {} if every_rotation else {"rotation": ROTATION_AS_NEEDED}
    return {"format": FORMAT, "version": 1, "kind": kind, "config": {**config, **mark}}


def made_rotating(out, kind: str) -> bool:
    """Whether ``out`` holds a search of ``kind`` made before fields of one player stopped
    rotating (its search file's config has no ``rotation``): it resumes as it was made, every
    seed under every rotation, so its finished runs are kept. No folder, another kind: False,
    checked later (:func:`check_search_folder`, which also refuses a linked search file: never
    read here); an unreadable search file: RunError, as that check would say."""
    if (Path(out) / SEARCH).is_symlink():
        return False
    old = read_plan(out, SEARCH, "search")
    config = old.get("config") if old is not None else None
    return isinstance(config, dict) and old.get("kind") == kind and "rotation" not in config


def _folder_name(kind) -> str:
    """What a folder of ``kind`` is called in a message (tune and balance are searches)."""
    return {"card-value": "a card-value folder", "compensation": "a compensation folder",
            "explain": "an explain folder"}.get(kind, "a search folder")


def open_folder(out: Path, doc: dict) -> None:
    check_search_folder(out, doc)
    if not (out / SEARCH).is_file():
        try:
            out.mkdir(parents=True, exist_ok=True)
            write_json_atomic(out / SEARCH, doc)
        except OSError as exc:
            raise RunError(f"--out {out}: cannot write: {exc.strerror or exc}") from None


def read_journal(out: Path) -> list[dict]:
    """The finished rounds, in order. A last line cut short by an interruption is dropped (its
    round is played again: its run folders are finished, so it costs nothing)."""
    path = Path(out) / JOURNAL
    if not path.is_file():
        return []
    rounds = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        try:
            rec = json.loads(line)
        except ValueError:
            break
        if not isinstance(rec, dict) or rec.get("round") != i:
            break
        rounds.append(rec)
    return rounds


def _write_journal(out: Path, rounds: list[dict]) -> None:
    """Rewrite the journal whole (atomically): a cut line never stays in it."""
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rounds)
    write_bytes_atomic(Path(out) / JOURNAL, text.encode("utf-8"))


# ---------------------------------------------------------------------------------------------
# the optimiser
# ---------------------------------------------------------------------------------------------
def _study(direction: str):
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    return optuna.create_study(direction=direction)


def _distributions(dims: list[Dim]) -> dict:
    return {d.key: d.distribution() for d in dims}


def _rebuild(study, dims: list[Dim], rounds: list[dict]) -> None:
    """The study as it was after the journal's rounds: every trial in the order it was drawn."""
    dist = _distributions(dims)
    for rec in rounds:
        for t in rec["trials"]:
            if t["state"] == "complete":
                study.add_trial(create_trial(params=t["raw"], distributions=dist, value=t["score"]))
            else:
                study.add_trial(create_trial(params=t["raw"], distributions=dist, state=TrialState.FAIL))


def _draw(study, dims: list[Dim], seed: int, r: int, slot: int, attempt: int):
    study.sampler = TPESampler(seed=derive_seed(seed, 3, r, slot, attempt) % 2**32, constant_liar=True)
    trial = study.ask(_distributions(dims))
    return trial, {d.key: d.value(trial.params[d.key]) for d in dims}


# ---------------------------------------------------------------------------------------------
# a round
# ---------------------------------------------------------------------------------------------
def _ask_round(study, problem: Problem, settings: Settings, r: int):
    """The round's candidates (trial, values) and the unplayable draws (trial, values, reason)."""
    asked, order = [], []
    for slot in range(settings.batch):
        for attempt in range(MAX_ATTEMPTS):
            trial, values = _draw(study, problem.dims, settings.seed, r, slot, attempt)
            try:
                problem.check(values)
            except RulesError as exc:
                study.tell(trial, state=TrialState.FAIL)
                order.append({"slot": slot, "raw": dict(trial.params), "values": values,
                              "state": "fail", "reason": str(exc)})
                continue
            asked.append((trial, values))
            order.append({"slot": slot, "raw": dict(trial.params), "values": values, "state": "complete"})
            break
        else:
            raise RunError(f"the search drew {MAX_ATTEMPTS} unplayable candidates in a row: the --param "
                           "ranges together make rules that cannot be played; narrow them")
    return asked, order


def _play_round(problem: Problem, settings: Settings, out: Path, r: int, candidates: list[dict],
                backend: Backend, command: str, notice) -> list[dict]:
    """Successive halving on the round's common seeds; per candidate the rungs it played."""
    run_seed = derive_seed(settings.seed, 1, r)
    folder = Path(out) / "rounds" / f"r{r:04d}"
    alive = list(range(len(candidates)))
    history: list[list] = [[] for _ in candidates]
    rungs = settings.rungs()
    for j, (m, n) in enumerate(rungs):
        arms = {i: problem.arms(candidates[i], folder / f"c-{params_key(candidates[i])}") for i in alive}
        runs = play_arms([a for i in alive for a in arms[i]], n, run_seed, settings.seeds, backend, command,
                         quiet=notice is None, root=out)
        k = 0
        for i in alive:
            mine = runs[k:k + len(arms[i])]
            k += len(arms[i])
            score, details = problem.score(mine, candidates[i])
            history[i].append({"rung": j, "seeds": n, "score": score, "details": details})
        if notice is not None:
            best = max(alive, key=lambda i: _rank_key(problem, history[i][-1]["score"], i))
            notice(f"round {r + 1}, rung {j + 1} of {len(rungs)}: {len(alive)} candidate(s) x {n} seeds; "
                   f"best {problem.score_name} {history[best][-1]['score']:.4g}")
        if j + 1 < len(rungs):
            ranked = sorted(alive, key=lambda i: _rank_key(problem, history[i][-1]["score"], i), reverse=True)
            alive = sorted(ranked[:rungs[j + 1][0]])
    return history


def _rank_key(problem: Problem, score: float, slot: int):
    """Higher is better; equal scores: the earlier slot."""
    s = score if math.isfinite(score) else -math.inf if problem.direction == "maximize" else math.inf
    return (s if problem.direction == "maximize" else -s, -slot)


def _round(study, problem, settings, out, r, backend, command, notice) -> dict:
    asked, order = _ask_round(study, problem, settings, r)
    history = _play_round(problem, settings, out, r, [v for _, v in asked], backend, command, notice)
    slots = [t for t in order if t["state"] == "complete"]
    for (trial, _), rec, hist in zip(asked, slots, history):
        last = hist[-1]
        study.tell(trial, last["score"])
        rec.update(score=last["score"], seeds=last["seeds"], rung=last["rung"], details=last["details"],
                   history=[[h["seeds"], h["score"]] for h in hist])
    winner = max(range(len(slots)), key=lambda i: (slots[i]["rung"], _rank_key(problem, slots[i]["score"], i)))
    for i, rec in enumerate(slots):
        rec["round_winner"] = i == winner
    for rec in order:
        rec["round"] = r
    return {"round": r, "run_seed": derive_seed(settings.seed, 1, r), "trials": order}


# ---------------------------------------------------------------------------------------------
# the whole search
# ---------------------------------------------------------------------------------------------
def search_doc(problem: Problem, settings: Settings) -> dict:
    """The search file: everything that decides the result, the optimiser's version included (a
    resumed search must draw the candidates the interrupted one would have)."""
    return {"format": FORMAT, "version": 1, "kind": problem.kind,
            "config": {"problem": problem.config(), "settings": settings.as_dict(),
                       "dims": [d.as_dict() for d in problem.dims], "optuna": optuna.__version__}}


def finalists(problem: Problem, rounds: list[dict], count: int) -> list[dict]:
    """The best ``count`` round winners (each scored on the most seeds of its round), distinct."""
    winners = [t for rec in rounds for t in rec["trials"] if t.get("round_winner")]
    winners.sort(key=lambda t: _rank_key(problem, t["score"], 0), reverse=True)
    out, seen = [], set()
    for t in winners:
        key = params_key(t["values"])
        if key not in seen:
            seen.add(key)
            out.append(t)
        if len(out) == count:
            break
    return out


def run_search(problem: Problem, settings: Settings, out, backend: Backend = Backend(),
               command: str = "", notice=None) -> SearchResult:
    """Search, confirm the finalists, write the summary; resumes the search in ``out``."""
    out = Path(out)
    check_budget(problem, settings)
    doc = search_doc(problem, settings)
    open_folder(out, doc)
    rounds = read_journal(out)
    total = n_rounds(problem, settings)
    rounds = rounds[:total]
    study = _study(problem.direction)
    _rebuild(study, problem.dims, rounds)
    for r in range(len(rounds), total):
        rounds.append(_round(study, problem, settings, out, r, backend, command, notice))
        _write_journal(out, rounds)
    chosen_trials = finalists(problem, rounds, settings.finalists)
    if notice is not None:
        notice(f"confirming {len(chosen_trials)} finalist(s) and the baseline on {settings.confirm_seeds:,} "
               "fresh seeds")
    base_values = problem.baseline()
    confirm_seed = derive_seed(settings.seed, 2)
    folder = out / "confirm"
    arm_sets = [problem.arms(base_values, folder / "baseline")]
    arm_sets += [problem.arms(t["values"], folder / f"f{j}-{params_key(t['values'])}")
                 for j, t in enumerate(chosen_trials)]
    flat = [a for arms in arm_sets for a in arms]
    runs = play_arms(flat, settings.confirm_seeds, confirm_seed, min(settings.confirm_seeds, 1000),
                     backend, command, quiet=notice is None, root=out)
    split, k = [], 0
    for arms in arm_sets:
        split.append(runs[k:k + len(arms)])
        k += len(arms)
    table, best, lines = problem.confirm(split[0], [(t["values"], r) for t, r in zip(chosen_trials, split[1:])],
                                         ALPHA)
    chosen = chosen_trials[best]["values"] if best is not None else None
    result = SearchResult(out, [t for rec in rounds for t in rec["trials"]], table, chosen, lines)
    result.summary = write_summary(problem, settings, result, doc, command)
    return result


def write_summary(problem: Problem, settings: Settings, result: SearchResult, doc: dict, command: str) -> Path:
    """``out/summary``: candidates.csv, search.png, confirmation.csv, report.md and the result."""

    final = result.out / "summary"
    trials = candidates_table(result.trials, problem.dims)
    with atomic_folder(final, SUMMARY_KIND) as tmp:
        trials.to_csv(tmp / "candidates.csv", index=False)
        result.confirmation.to_csv(tmp / "confirmation.csv", index=False)
        png = save(search_figure(trials, result.confirmation, problem.direction, problem.score_name,
                                 problem.kind), tmp, "search")
        files = problem.write_result(result.chosen, tmp) if result.chosen is not None else []
        text = report_section(problem.kind, command, doc, trials, result.confirmation, result.lines,
                              png.name, files, problem.report_lines(result.chosen) if result.chosen else [])
        (tmp / "report.md").write_text(text, encoding="utf-8")
    return final
