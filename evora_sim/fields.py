"""The built-in fields of players: who sits at the table when the user names no one.

Kept apart from the command line so that the runners (the main job, the skill ladder) and the
analysis can share them without importing the CLI.
"""
from __future__ import annotations

# The main job's fields: the strongest turn-planning built-ins of a 2-player round robin
# (1,000 games a pair, seeds 930001..: balanced beat every other; greedy and blocker next, even
# with each other; then cards), so seats are measured in competent, varied play (its own total;
# denying the leader; cards and tiles). Seat rotation puts every strategy in every seat on the
# same seeds, so seat effects are not strategy effects. random and the weakest specialists stay
# out: a weak seat-mate hands wins to the others and blurs seat effects.
DEFAULT_FIELD = {2: "balanced,greedy", 3: "balanced,greedy,blocker", 4: "balanced,greedy,blocker,cards"}

# evora train's defaults (evora_sim.experiments.train_runs): here so that the command line shows them
# at start-up without loading the trainer (the players, the runner, SciPy: about 2 s)
DEFAULT_TEACHER = "mcts(iterations=300)"
DEFAULT_GAMES = {2: 240, 3: 120, 4: 90}        # the default fits 30 minutes on 2 cores (docs/commands/train.md)
DEFAULT_DUEL_GAMES = 2000

# evora run's strong-play runs and short ladder: here so that the command's help shows them and
# its work (evora_sim.cli.runs_work) plays them, without either importing the other
EXPERT_GAMES = 8_000        # per player count: the expert field's seat rates within about +-1 pp
SHORT_BUDGET = 5.0          # minutes: evora run --skill's ladder
