"""The command-line reference page (docs/reference/cli.md), generated from the argparse
definitions so that it cannot drift from what `--help` prints.

    .venv/bin/python -m tempo_eval.cli.reference > docs/reference/cli.md

The page holds, for the top-level parser and every subcommand (nested ones included, such as
`runs show`), exactly the text its `--help` prints, at a fixed width of 100 columns and with the
program named `tempo-eval` (a checkout runs the same commands as `.venv/bin/python -m tempo_eval`).
tests/docs/test_docs_site.py compares the committed page with this output.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator

WIDTH = 100
PROGRAM = "tempo-eval"

HEADER = f"""# Command-line reference

Every command and option of `{PROGRAM}`, as its `--help` prints it. In a checkout the same commands
run as `.venv/bin/python -m tempo_eval COMMAND ...`. This page is generated from the program itself
(`.venv/bin/python -m tempo_eval.cli.reference > docs/reference/cli.md`) and a test checks that it
is current. What each metric, mode and reason code means: [Metrics](../metrics.md).
"""


@contextlib.contextmanager
def _fixed_terminal() -> Iterator[None]:
    """argparse wraps help at the terminal's width (COLUMNS) and names the program after
    sys.argv[0]: fix both so the page is the same on every machine."""
    saved_columns, saved_argv = os.environ.get("COLUMNS"), list(sys.argv)
    os.environ["COLUMNS"] = str(WIDTH + 2)  # argparse keeps two columns of margin
    sys.argv[:] = [PROGRAM, *saved_argv[1:]]
    try:
        yield
    finally:
        sys.argv[:] = saved_argv
        if saved_columns is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved_columns


def _subparsers(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    """The subcommands of `parser` in the order they were declared (aliases left out)."""
    found: dict[int, tuple[str, argparse.ArgumentParser]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.setdefault(id(sub), (name, sub))  # an alias names a parser already found
    return list(found.values())


def _sections(parser: argparse.ArgumentParser, path: list[str]) -> Iterator[tuple[str, str]]:
    yield " ".join([PROGRAM, *path]), parser.format_help()
    for name, sub in _subparsers(parser):
        yield from _sections(sub, [*path, name])


def cli_reference() -> str:
    """The Markdown page: a header, then one section per command with its help text."""
    from tempo_eval.cli.parser import build_parser

    with _fixed_terminal():
        parser = build_parser()
        sections = list(_sections(parser, []))
    parts = [HEADER]
    for title, text in sections:
        parts.append(f"\n## `{title}`\n\n```text\n{text.rstrip()}\n```\n")
    return "".join(parts)


if __name__ == "__main__":
    sys.stdout.write(cli_reference())
