"""Issue 40: the main report states the seat finding at expert skill beside the field's: evora run
plays the expert in every seat, evora report --expert-run quotes it; bad expert runs are one line."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from evora_sim.cli import main
from evora_sim.ladderplan import default_ladder
from evora_sim.manifest import read_manifest
from evora_sim.runner import Execution, simulate

from cli_results import one_error_line


@pytest.fixture
def cli():
    return CliRunner()



@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("expert_field")
    simulate(2, 30, "balanced,greedy", seed=3, out=root / "p2", seat_rotation=True)
    simulate(2, 40, "expert", seed=3, out=root / "e2")
    simulate(2, 20, "balanced,greedy", seed=3, out=root / "mixed", seat_rotation=True)
    simulate(3, 10, "expert", seed=3, out=root / "e3")
    return root


def test_the_answer_quotes_the_expert_field_beside_the_planners(runs, cli, tmp_path):
    res = cli.invoke(main, ["report", str(runs / "p2"), "--expert-run", str(runs / "e2"), "--out", str(tmp_path / "r")])
    assert res.exit_code == 0, res.output
    md = (tmp_path / "r" / "report.md").read_text()
    answer = md[:md.index("\n## ", md.index("## The answer") + 1)] if "## The answer" in md else md
    # issue 49: the strong field leads, the bots' figures follow
    assert "**Among good players " in answer and "; among the simple bots (balanced, greedy) " in answer
    assert "Who: good players (the built-in expert, trained from the search player, in every seat); 40 games" in answer
    assert "Among the simple bots (balanced, greedy), 60 games per seat: " in answer
    assert "of 2-player games (95% range" in answer
    plain = cli.invoke(main, ["report", str(runs / "p2"), "--out", str(tmp_path / "plain")])
    assert plain.exit_code == 0 and "good players" not in (tmp_path / "plain" / "report.md").read_text()


@pytest.mark.parametrize("which, words", [
    ("mixed", "its seats hold balanced, greedy; a strong-play run has one strategy in every seat"),
    ("e3", "3 players (the report's runs are of 2 players)"),
])
def test_a_strong_play_run_that_does_not_fit_is_one_line(runs, cli, tmp_path, which, words):
    line = one_error_line(cli.invoke(main, ["report", str(runs / "p2"), "--expert-run", str(runs / which),
                                      "--out", str(tmp_path / "r")]))
    assert words in line
    assert not (tmp_path / "r").exists()


def test_evora_run_refuses_a_negative_expert_field(cli, tmp_path):
    line = one_error_line(cli.invoke(main, ["run", "--expert-games", "-1", "--out", str(tmp_path / "o"),
                                      "--report-dir", str(tmp_path / "r")]))
    assert "--expert-games must be 0 (none) or a positive whole number, got -1" in line
    assert not (tmp_path / "o").exists()


def test_evora_run_plays_the_expert_fields_in_several_chunks_a_core_and_resumes_an_older_folder(cli, tmp_path):
    """The 2-player expert field takes minutes: in the default chunks of 5,000 seeds one core
    played the long chunk alone while the other stood idle. Its chunks are now a duel's (several
    a core); a folder made before, in other chunks, resumes with its own instead of clashing."""
    # a folder in the old default chunk (5,000 seeds, here all 4 in one)
    simulate(3, 4, "expert", seed=1, out=tmp_path / "o" / "expert" / "p3", execution=Execution(chunk_size=4))
    res = cli.invoke(main, ["run", "--games", "4", "--jobs", "1", "--out", str(tmp_path / "o"),
                            "--report-dir", str(tmp_path / "r"), "-q"])
    assert res.exit_code == 0, res.output
    chunks = {n: read_manifest(tmp_path / "o" / "expert" / f"p{n}")["config"]["chunk_size"] for n in (2, 3, 4)}
    assert chunks == {2: 1, 3: 4, 4: 1}, chunks


def test_the_default_ladder_holds_the_expert_between_the_planners_and_the_search_player():
    for n in (2, 3, 4):
        rungs = default_ladder(n)
        assert rungs.index("expert") == rungs.index("mcts(iterations=100)") - 1
        assert rungs.index("expert") > rungs.index("greedy(plan=action)")


def test_the_behaviour_table_counts_cards_tiles_temple_uses_and_turns_per_game(runs, capsys, monkeypatch):
    import sys

    from evora_sim.runner import open_run
    from script_modules import load_script

    script = load_script("behaviour_table")
    got = script.row(str(runs / "e2"))
    run = open_run(runs / "e2")
    cards = run.table("cards")
    hand = cards[~cards["card"].astype(str).str.startswith("tile_")]["plays"].sum() / 40
    def shown(cell):        # the estimate as printed, with the digits its interval needs
        head = cell.split(" (")[0]
        return float(head), 10.0 ** -len(head.partition(".")[2])

    for cell, mean in ((got["cards played a game"], hand), (got["turns a game"], run.table("games")["turns"].mean())):
        value, step = shown(cell)
        assert got["games"] == 40 and abs(value - mean) <= step / 2 + 1e-9 and "–" in cell, cell
    monkeypatch.setattr(sys, "argv", ["behaviour_table.py", str(runs / "mixed")])
    with pytest.raises(SystemExit, match="give runs of one strategy in every seat"):
        script.main()
