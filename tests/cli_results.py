"""Checks on click results shared by the CLI tests: success, and the one-line user error; and
the command a test runs in a process of its own."""
import sys
from pathlib import Path


def ok(result) -> str:
    """The standard output of a command that must succeed."""
    assert result.exit_code == 0, (result.exit_code, result.output, result.exception)
    return result.stdout


def one_error_line(result, *, no_stdout: bool = False) -> str:
    """The single ``evora: error: ...`` line of a user mistake (exit status 2, no traceback)."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    if no_stdout:
        assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("evora: error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


def evora_command() -> list[str]:
    """The installed ``evora`` command, for tests that need a process of its own.

    Why not ``python -m evora_sim.cli``: run from a checkout, ``-m`` puts the checkout first on
    the path, so the child imports the checkout's source while the tests import the installed
    package. Numba keys its cache by source path, so every child compiled the whole engine and
    all players again from cold (minutes each on CI, where the install is not editable), and two
    children started together outran their timeout. The console script imports what the tests
    import, as a user's ``evora`` does.
    """
    exe = Path(sys.executable).with_name("evora")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "evora_sim.cli"]
