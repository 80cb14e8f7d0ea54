"""The ``evora`` command line: one click group, one sub-command per job.

User mistakes (bad player count, unknown strategy, malformed file) end with one line on
stderr and exit status 2, never a traceback.
"""
from __future__ import annotations

import sys

import click


class UserError(click.ClickException):
    """A mistake in the user's input: printed as one line, exit status 2."""

    exit_code = 2

    def show(self, file=None):
        click.echo(f"evora: error: {self.format_message()}", err=True, file=file or sys.stderr)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="evora-sim")
def main():
    """Simulate Évora and analyse its balance."""


if __name__ == "__main__":  # pragma: no cover
    main()
