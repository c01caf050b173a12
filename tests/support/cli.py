"""Run the CLI in-process from a test (fast): (exit code, stderr)."""

from __future__ import annotations

import pytest

from tempo_eval.cli import main


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """The CLI's exit code and what it wrote to stderr; argparse's own errors exit through
    SystemExit, whose code is returned the same way."""
    try:
        code = main(args)
    except SystemExit as exit_:
        code = exit_.code
    return code, capsys.readouterr().err


def run_cli_streams(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the CLI: `evaluate` prints its summary on stdout."""
    try:
        code = main(args)
    except SystemExit as exit_:
        code = exit_.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err
