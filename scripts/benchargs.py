"""Argument parsing shared by the benchmark scripts: mistakes end in one line, exit status 2."""
from __future__ import annotations

import argparse


class UsageError(Exception):
    """A mistake in a script's arguments."""


class Parser(argparse.ArgumentParser):
    def error(self, message):          # one line, exit 2 (argparse would print the usage too)
        raise UsageError(message)


def positive_int(text: str) -> int:
    try:
        value = int(text)               # accepts 1_000_000
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def players(text: str) -> int:
    if text.strip() not in ("2", "3", "4"):
        raise argparse.ArgumentTypeError(f"must be 2, 3 or 4, got {text!r}")
    return int(text)
