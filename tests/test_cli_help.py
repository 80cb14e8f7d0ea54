"""The command line without traps: every --help ends with examples, one --jobs default, --games
counts games on every command (--seeds the other count), seat rotation on by default for a mixed
field, and `evora rules` lists every key."""
from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from evora_sim.cli import main
from evora_sim.cli.group import COMMANDS, JOBS_DEFAULT
from evora_sim.runner import Execution, open_run

from cli_results import ok, one_error_line

NAMES = sorted(COMMANDS)


def command(name):
    return main.get_command(None, name)


@pytest.mark.parametrize("name", NAMES)
def test_every_help_ends_with_one_to_three_examples(name):
    text = ok(CliRunner().invoke(main, [name, "--help"]))
    tail = text.rstrip().split("Examples:")
    assert len(tail) == 2, f"evora {name} --help has no Examples block"
    examples = [x.strip() for x in tail[1].strip().splitlines()]
    assert 1 <= len(examples) <= 3 and all(x.startswith(f"evora {name}") or x.startswith("evora ")
                                           for x in examples)


def test_every_command_is_a_row_of_the_lazy_table():
    """Each row of ``group.COMMANDS`` names a command of that name, and every click command the
    command modules define is a row (one the table missed would never be reachable)."""
    import importlib

    import click

    defined = set()
    for module in {m for m, _, _ in COMMANDS.values()}:
        values = list(vars(importlib.import_module(f"evora_sim.cli.{module}")).values())
        subcommands = {id(c) for g in values if isinstance(g, click.Group) for c in g.commands.values()}
        defined |= {(module, c.name) for c in values if isinstance(c, click.Command) and id(c) not in subcommands}
    assert defined == {(m, name) for name, (m, _, _) in COMMANDS.items()}
    for name in NAMES:
        assert command(name).name == name


def test_the_command_list_imports_no_command_module():
    """``evora --help`` lists every command with its summary from the table, without importing
    a command's module (each loads the runner, the statistics or the players when it runs)."""
    import subprocess
    import sys

    code = ("import sys; from evora_sim.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith(('evora_sim.cli.', 'analysis', "
            "'evora_sim.runner', 'strategies.registry'))))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    listing, loaded = res.stdout.rsplit("\n", 2)[0], res.stdout.strip().splitlines()[-1]
    assert loaded == "['evora_sim.cli.group']"
    for name, (_, _, summary) in COMMANDS.items():
        assert re.search(rf"^  {re.escape(name)}\s+{re.escape(summary.split()[0])}", listing, re.M), name


def test_one_jobs_default_everywhere():
    defaults = {name: p.default for name in NAMES for p in command(name).params if p.name == "jobs"}
    assert set(defaults) >= {"simulate", "sweep", "run", "duel"} and set(defaults.values()) == {JOBS_DEFAULT}


def test_rules_lists_every_key_with_its_value_and_what_it_allows():
    from evora_sim.rules import rule_keys

    text = ok(CliRunner().invoke(main, ["rules"]))
    for key in rule_keys():
        assert re.search(rf"^{re.escape(key)}\s", text, re.M), key
    line = next(x for x in text.splitlines() if x.startswith("white_stone.vp "))
    assert re.search(r"\s2\s+a whole number from 0 to 99$", line)
    changed = ok(CliRunner().invoke(main, ["rules", "--set", "white_stone.vp=6", "--grep", "white_stone"]))
    assert re.search(r"white_stone\.vp\s+\* 6\s", changed)
    assert "evora: error:" in one_error_line(CliRunner().invoke(main, ["rules", "--set", "white_stone.vp=x"]))


def test_rules_says_what_every_key_means_in_the_rulebooks_words():
    """Issue 44: `evora rules` gave each key's range, not what it means. Every key (board spaces
    by their pattern) has a meaning under it, quoting the rulebook where the rulebook says it."""
    from evora_sim.cli.rules_list import meaning_pattern, meanings
    from evora_sim.rules import rule_keys

    words = meanings()
    missing = sorted({meaning_pattern(k, words) for k in rule_keys()} - set(words))
    assert not missing, missing
    text = ok(CliRunner().invoke(main, ["rules", "--grep", "white_stone.vp"]))
    assert "you always receive 2 VP instead of the normal victory points for that height" in text
    text = ok(CliRunner().invoke(main, ["rules", "--grep", "temple.columns"]))
    assert text.count("Available column spaces in the Temple") == 1      # said once for the three keys


def test_rules_gives_the_rulebooks_own_tie_break():
    """Issue 50, item 8: `evora rules` said the rulebook is silent on a tie for the most VP. It
    is not: fewer parts left, then the later seat, as the engine's order of the seats has it
    (``ranking.order_key``); no meaning calls the rulebook silent."""
    from evora_sim.cli.rules_list import meanings
    from evora_sim.ranking import order_key

    text = ok(CliRunner().invoke(main, ["rules", "--grep", "end.tie_break"]))
    assert "fewer column parts remaining" in text and "further back in turn order" in text
    assert not [k for k, v in meanings().items() if "silent" in v]
    # the same order in the engine: on equal VP, fewer parts left first, then the later seat
    assert order_key(50, 0, 3, 0) > order_key(50, 0, 4, 3)
    assert order_key(50, 0, 3, 2) > order_key(50, 0, 3, 1)


def test_games_counts_games_seeds_counts_seeds_and_a_mixed_field_rotates(tmp_path):
    cli = CliRunner()
    base = ["simulate", "-n", "4", "--strategies", "greedy(plan=action),random,random,random", "--jobs", "1", "-q"]
    ok(cli.invoke(main, base + ["--games", "10", "--out", str(tmp_path / "a")]))
    a = open_run(tmp_path / "a")
    assert a.manifest["config"]["seat_rotation"] and a.n_games == 12        # 3 seeds x 4 rotations
    ok(cli.invoke(main, base + ["--seeds", "2", "--out", str(tmp_path / "b")]))
    assert open_run(tmp_path / "b").n_games == 8
    ok(cli.invoke(main, base + ["--games", "5", "--no-seat-rotation", "--out", str(tmp_path / "c")]))
    c = open_run(tmp_path / "c")
    assert not c.manifest["config"]["seat_rotation"] and c.n_games == 5
    ok(cli.invoke(main, ["simulate", "-n", "2", "--strategies", "random", "--games", "4", "--jobs", "1", "-q",
                         "--out", str(tmp_path / "d")]))
    assert not open_run(tmp_path / "d").manifest["config"]["seat_rotation"]   # a mirror field: no rotation
    line = one_error_line(cli.invoke(main, base + ["--games", "4", "--seeds", "1", "--out", str(tmp_path / "e")]))
    assert "--games" in line and "--seeds" in line and not (tmp_path / "e").exists()
    line = one_error_line(cli.invoke(main, base + ["--out", str(tmp_path / "e")]))
    assert "--games N (games in all) or --seeds N" in line


def test_compare_pairs_the_player_counts_of_two_run_folders_and_draws_the_change(tmp_path):
    from evora_sim.rules import load_rules
    from evora_sim.runner import simulate

    for name, sets in (("base", []), ("white6", ["white_stone.vp=6"])):
        for n in (2, 3):
            simulate(n, 20, "greedy(plan=action)," + ",".join(["random"] * (n - 1)), seed=4,
                     out=tmp_path / name / f"p{n}", rules=load_rules(overrides=sets),
                     execution=Execution(chunk_size=20))
    out = ok(CliRunner().invoke(main, ["compare", str(tmp_path / "base"), str(tmp_path / "white6"),
                                       "--out", str(tmp_path / "cmp")]))
    assert "== 2 players ==" in out and "== 3 players ==" in out and "white_stone.vp: 2 -> 6" in out
    import pandas as pd

    table = pd.read_csv(tmp_path / "cmp" / "compare.csv")
    assert set(table["n_players"]) == {2, 3} and table["paired"].all()
    assert (tmp_path / "cmp" / "compare.png").stat().st_size > 5_000
    ok(CliRunner().invoke(main, ["compare", str(tmp_path / "base" / "p2"), str(tmp_path / "white6" / "p2"),
                                 "--out", str(tmp_path / "one.csv")]))
    assert (tmp_path / "one.png").is_file()
    line = one_error_line(CliRunner().invoke(main, ["compare", str(tmp_path / "base" / "p2"),
                                                    str(tmp_path / "white6" / "p3")]))
    assert "no player count in common" in line
