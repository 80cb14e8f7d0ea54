"""The one error type of the strategy system."""
from __future__ import annotations


class StrategyError(ValueError):
    """A strategy that cannot be used as given (an unknown name or weight, a weight that is not
    a number, a missing file or class, a spec that does not fit the seats), or a custom
    strategy that failed during a game (an illegal action, an exception). The message names the
    strategy and the problem; the command line prints it as one line (exit status 2)."""


__all__ = ["StrategyError"]
