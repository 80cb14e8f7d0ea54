"""Checks on click results shared by the CLI tests: success, and the one-line user error."""


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
