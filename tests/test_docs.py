"""The README and the documentation site cannot rot (issue 44): the site builds with
``mkdocs build --strict`` (a broken link or anchor fails), the README's links resolve, and every
command of the README and of ``docs/`` is run, page by page in order, in a scratch folder; every
Python block is executed. So that the suite stays short, sizes are made tiny by the substitutions
``docs/index.md`` states ("How these pages are tested"), and commands sized by a ``--budget``
are run through every argument check with the search, the pilot and the play replaced by
stand-ins. A command of any other kind in a page fails the test until it is classified here.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from evora_sim.cli import main
from script_modules import load_script

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md"] + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").rglob("*.md"))
BLOCK = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.M | re.S)
README_LIMIT = 250
QUESTIONS = ["Is my game fair? Which seat, how sure?", "Which card is too strong?", "Does it hold for good players?",
             "What rule change fixes it?", "Is my change better?", "Play my own strategy"]

# tiny sizes (docs/index.md, "How these pages are tested")
TINY = {"--games": "8", "--seeds": "10", "--max-games": "32", "--duel-games": "4", "--remove-games": "40",
        "--explain-seeds": "10"}
CARD_VALUE_GAMES = "160"
RUN_GAMES = "40"                          # 10 seeds at 4 players: the least evora explain reads                  # its least at 4 players: 10 seeds, each with every seat given each card
PLAYS = {"simulate", "run", "duel", "sweep", "card-value", "skill", "tune", "balance", "train", "explain"}
TRAIN = {"--games": "10", "--duel-games": "8", "--teacher": "mcts(iterations=20)"}   # its least, and a quick teacher
RUN_BY_CI = {"python3 -m venv .venv", ". .venv/bin/activate", "pip install .", "pip install '.[test]'", "pytest"}


def blocks(page: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer((ROOT / page).read_text(encoding="utf-8"))]


def commands(text: str) -> list[str]:
    """The commands of a shell block: continuation lines joined, comments dropped, ``&&`` split."""
    out = []
    for line in text.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        part = []
        for w in words + ["&&"]:
            if w == "&&":
                if part:
                    out.append(shlex.join(part))
                part = []
            else:
                part.append(w)
    return out


def tiny(args: list[str]) -> list[str]:
    """The command at the test's size: every substitution of docs/index.md, nothing else."""
    args = list(args)
    command = args[0] if args else ""
    for i, a in enumerate(args[:-1]):
        if a in TINY and not (a == "--remove-games" and args[i + 1] == "0"):
            args[i + 1] = CARD_VALUE_GAMES if (a == "--games" and command == "card-value") else TINY[a]
    if command in ("run", "card-value") and "--games" not in args:
        args += ["--games", CARD_VALUE_GAMES if command == "card-value" else RUN_GAMES]
    if command == "train":
        for key, value in TRAIN.items():
            if key in args:
                args[args.index(key) + 1] = value
            else:
                args += [key, value]
    if "--explain-seeds" in args and "--games" in args:     # explain reads at least 10 seeds of each rung
        args[args.index("--games") + 1] = TINY["--explain-seeds"]
    if command == "card-value" and "--remove-games" not in args:
        args += ["--remove-games", TINY["--remove-games"]]
    if command in PLAYS:
        if "--jobs" in args:
            args[args.index("--jobs") + 1] = "1"
        else:
            args += ["--jobs", "1"]
    return args


def stand_in(args: list[str]) -> bool:
    """Commands sized by a --budget: checked up to the first game, then stand-ins play."""
    return args[0] in ("tune", "balance") or (args[0] == "skill" and "--games" not in args) or (
        args[0] == "dashboard" and "--export" not in args)       # checked up to serving the page


def stand_ins(monkeypatch):
    import evora_sim.cli.analyse_work as analyse_work
    import evora_sim.cli.dashboard_work as dashboard
    import evora_sim.cli.skill_work as skill_work
    import evora_sim.experiments.compensation as compensation
    import evora_sim.experiments.search as search
    import evora_sim.ladder as ladder

    def fake_search(problem, settings, out, *a, **k):
        return SimpleNamespace(lines=["(the search: a stand-in in tests/test_docs.py)"], summary=Path(out) / "summary")

    def fake_pilot(players, rungs, *a, **k):
        costs = {f"r{i + 1}": 0.01 for i in range(len(rungs))}
        costs.update({d.key: 0.01 for d in ladder.duel_plan(rungs, players, 1)})
        return costs

    monkeypatch.setattr(search, "run_search", fake_search)
    monkeypatch.setattr(compensation, "run_compensation",
                        lambda plan, out, **k: {"lines": [], "summary": Path(out) / "summary"})
    monkeypatch.setattr(ladder, "pilot", fake_pilot)
    monkeypatch.setattr(skill_work, "play_ladder", lambda *a, **k: None)
    monkeypatch.setattr(dashboard, "serve_dashboard", lambda *a, **k: None)
    monkeypatch.setattr(analyse_work, "write_ladder_report", lambda out, report_dir, **k: Path(report_dir))


class _Parsed(Exception):
    """Raised once a script has parsed its arguments: a benchmark is checked, not run."""


def parse_script(words: list[str], monkeypatch) -> None:
    script = Path(words[1])
    assert script.parts[0] == "scripts" and (ROOT / script).is_file(), words
    module = load_script(script.stem)
    real = argparse.ArgumentParser.parse_args

    def parse(self, args=None, namespace=None):
        real(self, args, namespace)
        raise _Parsed

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse)
    monkeypatch.setattr(sys, "argv", [str(script), *words[2:]])
    try:
        module.main()
    except _Parsed:
        return
    except SystemExit as exc:                 # --help
        assert exc.code in (0, None), words
        return
    pytest.fail(f"{shlex.join(words)}: the script ran past its arguments")


# Commands whose folders follow from their words alone (they read no folder of the page). A page
# that shows one an earlier page ran with the same words (the README and the card-value page
# both show the 4-player experiment, the README and runs.md the main job) gets the earlier
# page's folders copied rather than played again, when none of them is in its scratch yet: the
# same files, a minute less of the suite.
SELF_CONTAINED = {"run", "card-value", "simulate", "train"}
PLAYED: dict[tuple, tuple[Path, set[str], str]] = {}


def scratch_files() -> set[str]:
    """Every file under the working folder, not following the links to the repository."""
    here = Path.cwd()
    return {str(Path(d, f).relative_to(here)) for d, _, fs in os.walk(here) for f in fs}


def written_folders(files: set[str]) -> set[Path]:
    return {Path(*Path(f).parts[:2]) for f in files}


def run_evora(words: list[str], monkeypatch) -> str:
    args = tiny(words[1:])
    key = tuple(args)
    if key in PLAYED:
        source, written, output = PLAYED[key]
        if not any(folder.exists() for folder in written_folders(written)):
            for f in written:
                Path(f).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source / f, f)
            return output
    before = scratch_files()
    with monkeypatch.context() as m:
        if stand_in(args):
            stand_ins(m)
        result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, f"{shlex.join(words)} -> evora {shlex.join(args)}:\n{result.output}"
    written = scratch_files() - before
    if args[0] in SELF_CONTAINED and written and not any(
            str(f).startswith(tuple(f"{folder}/" for folder in written_folders(written))) for f in before):
        PLAYED[key] = (Path.cwd(), written, result.output)
    return result.output


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A folder where docs/, strategies/ and scripts/ are the repository's, and runs/ and
    reports/ are the page's own."""
    for name in ("docs", "strategies", "scripts"):
        (tmp_path / name).symlink_to(ROOT / name, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("page", PAGES)
def test_every_command_and_python_block_of_the_page_runs(page, scratch, monkeypatch):
    namespace: dict = {"__name__": f"docs:{page}"}
    ran = 0
    for lang, text in blocks(page):
        if lang == "python":
            exec(compile(text, f"{page} (a python block)", "exec"), namespace)
            ran += 1
            continue
        if lang not in ("bash", "sh", "console"):
            continue
        for command in commands(text):
            words = shlex.split(command)
            if words[0] == "evora":
                run_evora(words, monkeypatch)
            elif words[0] in ("python", "python3") and words[1].startswith("scripts/"):
                parse_script(words, monkeypatch)
            elif command in RUN_BY_CI:
                assert command in (ROOT / ".ci" / "run").read_text() or command.startswith("pip install ."), command
            else:
                pytest.fail(f"{page}: the command {command!r} is neither run nor classified by tests/test_docs.py")
            ran += 1
    if page not in ("docs/RULES.md", "docs/index.md", "docs/statistics.md") and not page.startswith("docs/history/"):
        assert ran, f"{page} shows no command"


def test_ci_runs_the_readmes_install_and_test_line():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = "python3 -m venv .venv && . .venv/bin/activate && pip install '.[test]' && pytest"
    assert line in readme and line in (ROOT / ".ci" / "run").read_text()


def test_the_site_builds_with_every_link_and_anchor_checked(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    # issue 51: the site reads offline: no script, stylesheet or font is fetched from elsewhere
    # (highlight.js came from a CDN); the code is coloured when the site is built
    pages = list((tmp_path / "site").rglob("*.html"))
    fetched = [(p.name, m) for p in pages for m in re.findall(
        r"<(?:script|link|img)\b[^>]*\b(?:src|href)=[\"'](?:https?:)?//[^\"']+", p.read_text(encoding="utf-8"))]
    assert pages and not fetched, fetched[:3]
    assert any('class="codehilite"' in p.read_text(encoding="utf-8") for p in pages)


def test_the_readmes_links_resolve():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    assert links and not [x for x in links if not x.startswith("http") and not (ROOT / x).exists()]


def test_the_readme_is_a_guide_by_question():
    """At most 250 lines; the two commands first; the six questions, each with a command; one
    measured first-run time."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_LIMIT
    first = readme.index("```bash")
    assert "evora run" in readme[first:readme.index("```", first + 3)]
    for q in QUESTIONS:
        section = readme.split(f"### {q}", 1)[1].split("\n### ", 1)[0]
        assert "```bash\nevora " in section, q
    measured = re.findall(r"<!-- first-run -->(.*?)<!-- /first-run -->", readme, re.S)
    assert len(measured) == 1 and re.search(r"\d+ min", measured[0]) and re.search(r"20\d\d-\d\d-\d\d", measured[0])
    assert not re.search(r"\b\d+ (to|-) \d+ min(utes)?\b.*first", readme.replace(measured[0], ""))


# ---- the documentation stands on its own (issue 50, item 8) ---------------------------------
# split: not a hit itself; "end.tie_break=shared/..." (an explain arm's folder) is no such pointer
OUTSIDE = re.compile(r"(?<![\w/=])(?:\.\./)?shar" r"ed/|DECISIONS\.md|evora-rule" r"book")


def test_no_page_or_source_points_to_a_rules_text_outside_the_repository():
    """docs/RULES.md named a rulebook text and a decisions file that were never in the
    repository; neither the pages nor the code point outside it."""
    files = [ROOT / p for p in PAGES] + [p for pkg in ("evora_sim", "strategies", "analysis", "tests")
                                         for p in sorted((ROOT / pkg).rglob("*")) if p.suffix in (".py", ".toml", ".md")]
    assert not [f"{f.relative_to(ROOT)}: {m.group(0)}" for f in files
                for m in OUTSIDE.finditer(f.read_text(encoding="utf-8"))]


def test_the_rules_page_holds_the_rulebook_points_it_relies_on():
    """docs/RULES.md states the rulebook in brief, including its own tie-break for the win (D18:
    fewer parts left, then the later seat; the rulebook is not silent there), and every reading
    D1-D20; P10's hidden information names the lot of a shared victory (V4) beside the stacks'
    order."""
    text = (ROOT / "docs" / "RULES.md").read_text(encoding="utf-8")
    brief = text.split("## The game in brief (the rulebook)", 1)[1].split("\n## ", 1)[0]
    for point in ("**Setup.**", "**A turn.**", "**Building.**", "**Column majorities.**", "**Playing cards.**",
                  "**The end.**", "**Final scoring.**", "**Who wins.**"):
        assert point in brief, point
    wins = " ".join(brief.split("**Who wins.**", 1)[1].split())
    assert "fewer parts left" in wins and "later in turn order" in wins
    assert "silent on a tie" not in text
    for d in range(1, 21):
        assert re.search(rf"^- \*\*D{d} ", text, re.M), f"D{d}"
    p10 = " ".join(text.split("**P10 ", 1)[1].split("\n- **", 1)[0].split())
    assert "Two things are hidden" in p10 and "lot" in p10 and "below its top card" in p10
