"""evora skill: the same seeds at every rung of a skill ladder, the rungs' strength from duels at
the ladder's player count, and a report that says which findings hold for stronger players. The
work is :mod:`evora_sim.cli.skill_work`, imported when the command runs."""
from __future__ import annotations

import click

from .group import check_out_arg, examples, jobs_option, min_effect_option, set_option


@click.command(epilog=examples(
    "evora skill --players 4",
    "evora skill --players 4 --set emperor_tile.values=12,12 --out runs/skill-emp --report-dir reports/skill-emp",
    "evora skill -n 2 --ladder 'random;greedy;mcts(iterations=300)' --games 400 --out runs/sk2"))
@click.option("--players", "-n", "n_players", type=int, default=4, show_default=True, metavar="N", help="2, 3 or 4.")
@click.option("--ladder", "ladder_text", default=None, metavar="SPEC;SPEC;...",
              help="The rungs, weakest first, ';' between them; a rung is one strategy for every seat or a "
                   "field A,B,... with one per seat. Default: random; greedy(plan=action); the main job's "
                   "field; expert; mcts(iterations=100); mcts(iterations=400).")
@click.option("--games", type=int, default=None, metavar="N",
              help="Games per rung (seeds: a mixed field plays each seed once per seat rotation). Default: "
                   "as many as --budget allows.")
@click.option("--duel-games", "duel_games", type=int, default=None, metavar="N",
              help="Games per pair of rungs (every pair at 2 players, neighbouring rungs at 3 and 4), for "
                   "the ratings, at the ladder's player count with the seats split between the two rungs, "
                   "seats rotated: a seed is 2 games at 2 players, 4 at 4 ([A,A,B,B]), 6 at 3 ([A,A,B] and "
                   "[A,B,B]); rounded up to whole seeds. Default: as many as --budget allows (about --games, "
                   "at least 20 seeds, when --games is given).")
@click.option("--budget", type=float, default=None, metavar="MINUTES",
              help="Without --games: the wall time the ladder may take here, report included; a timed pilot "
                   "of every rung sizes it. Default: 15 minutes, or the smallest ladder (40 seeds a rung, 20 a "
                   "duel pair) when that takes longer on this machine (it says so).")
@click.option("--seed", type=int, default=1, show_default=True, help="The run seed, shared by every rung.")
@click.option("--explain-seeds", "explain_seeds", type=int, default=0, show_default=True, metavar="N",
              help="Also explain every rung (evora explain): its first N seeds replayed under each rule change "
                   "and its own seat compensation, the best fix confirmed on N fresh seeds, so the report says "
                   "whether a fix holds for stronger players. 0: none. Costs about 8 x N games a rung (x its "
                   "rotations), outside --budget.")
@jobs_option
@click.option("--out", default="runs/skill", show_default=True, metavar="DIR", callback=check_out_arg,
              help="The ladder's run folders go here (created, or resumed).")
@click.option("--report-dir", default="reports/skill", show_default=True, metavar="DIR", callback=check_out_arg,
              help="The report goes here.")
@click.option("--rules", "rules_path", metavar="FILE", help="Rules file merged over the shipped rules.")
@set_option
@click.option("--backend", type=click.Choice(["loky", "dask"]), default="loky", show_default=True,
              help="loky: processes on this machine; dask: a dask.distributed cluster.")
@click.option("--scheduler", metavar="ADDRESS", help="Dask scheduler, e.g. tcp://HOST:8786.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines or bars.")
@min_effect_option
def skill(**options):
    """Play the same seeds at every rung of a skill ladder (every seat filled by the rung's
    players), measure the rungs' strength in duels at the ladder's player count (the seats
    split between two rungs), and write a report whose Skill section says, finding by finding,
    whether it holds for stronger players. Resumable: run the same command again to finish an
    interrupted ladder."""
    from . import skill_work  # lazy: the runner, the ladder and the experiments, 2.5 s (measured); --help needs none

    skill_work.skill(skill_work.SkillOptions(**options))
