"""The README's worked example: a custom strategy that judges each action by where it leaves
the player once its turn is over.

A position is worth judging only at the end of a turn: in the middle of one, the VP an open
effect or the coming option will score are not on the board yet. So each legal action is
tried on a copy, the rest of the turn is played out by ``api.finish`` (here with the compiled
``greedy`` turn planner), and the action whose turn ends with the best ``score_now`` is taken.
"""
from evora_sim import api


class Steady:
    """Takes the action that leaves it best placed when its turn is over, if the game ended then."""

    def choose(self, state, legal_actions, rng):
        me = api.current_player(state)

        def value(action):
            after = state.clone()
            api.apply_action(after, action)
            api.finish(after, "greedy", rng=rng)      # the rest of the turn, planned
            return api.score_now(after, me)

        values = [value(a) for a in legal_actions]
        best = [a for a, v in zip(legal_actions, values) if v == max(values)]
        return best[rng.integers(len(best))]
