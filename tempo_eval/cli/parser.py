"""The argument parser: one-line usage errors, and each subcommand's options from its module.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tempo_eval.cli import (
    compare,
    diff,
    evaluate,
    import_results,
    import_scores,
    runs,
    slices,
    users,
    workspace,
)
from tempo_eval.cli.common import EXIT_INPUT


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit code 2) and no abbreviations of long options:
    `--metric` must never silently stand for `--metrics`. Subcommand parsers are made of this
    class too (argparse builds them with the parent's class), so the rule holds in every command."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_INPUT, f"error: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    invoked = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    parser = _Parser(
        prog="tempo-eval" if invoked.startswith("tempo-eval") else "python -m tempo_eval",
        description="Evaluate retrieval-augmented generation with time as a first-class dimension.",
        epilog="Run 'tempo-eval COMMAND --help' (or 'python -m tempo_eval COMMAND --help') for the "
               "options of a command.",
    )
    # the docs ship with the repository, not with the package: say where they are
    parser.epilog += " What every metric, mode and NaN reason code means: docs/metrics.md in the repository."
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    for command in (evaluate, import_results, compare, import_scores, diff, runs, slices, users, workspace):
        command.add_parser(commands)
    return parser
