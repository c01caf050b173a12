"""What the subcommands share: exit codes, the metrics the CLI builds, usage errors, the progress
bar, and the checks and options several commands use (input size, --out, --workspace).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

# the module defining each metric the CLI can build, by metric name
from tempo_eval.metrics.catalog import METRIC_MODULES

#: the metrics `evaluate` offers on dataset rows; turn_faithfulness runs on a conversation file
#: (`load_conversations`), one conversation per row
DATASET_METRICS = tuple(name for name in METRIC_MODULES if name != "turn_faithfulness")
CONVERSATION_METRICS = ("turn_faithfulness",)


#: how a run is chosen on the command line (`tempo_eval.compare.run_diff.resolve_run`), for help texts
RUN_REF_HELP = ("its id (12 or #12) or its name; name:NAME for the name alone (a name made of digits, "
                "say); 'tempo-eval runs' lists them")

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INPUT = 2
EXIT_INTERRUPTED = 130


class CLIError(ValueError):
    """A usage problem found after argument parsing (reported like an input error)."""


class ProgressBar:
    """A one-line progress bar on a text stream: `[#####.....] 50/100 rows  12.3 rows/s`.

    Redrawn at most every `interval` seconds (and always at the end)."""

    def __init__(self, stream: TextIO | None = None, *, width: int = 30, interval: float = 0.1) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.interval = interval
        self._start = time.monotonic()
        self._first_done: int | None = None
        self._last_draw = 0.0
        self._finished = False
        #: (premise, claim) pairs through the NLI model so far (`add_pairs`), shown when any
        self.pairs = 0

    def add_pairs(self, count: int) -> None:
        """Count pairs verified (called from the verifier's thread; drawn with the next row)."""
        self.pairs += count

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self._first_done is None:
            self._first_done, self._start = done, now
        if done < total and now - self._last_draw < self.interval:
            return
        self._last_draw = now
        filled = self.width if total == 0 else self.width * done // total
        rate = (done - self._first_done) / max(now - self._start, 1e-9)
        line = f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} rows  {rate:.1f} rows/s"
        if self.pairs:
            line += f"  {self.pairs:,} pairs"
        self.stream.write(line)
        if done >= total and not self._finished:
            self._finished = True
            self.stream.write("\n")
        self.stream.flush()

    def close(self) -> None:
        if not self._finished and self._first_done is not None:
            self.stream.write("\n")
            self.stream.flush()
            self._finished = True


def max_input_bytes(args: argparse.Namespace) -> int | None:
    """--max-input-mb in bytes (None: the default limit); a value that is not positive is refused."""
    if args.max_input_mb is None:
        return None
    if not args.max_input_mb > 0:
        raise CLIError(f"--max-input-mb must be a positive number, got {args.max_input_mb:g}")
    return int(args.max_input_mb * 10**6)


def check_output(out: str | os.PathLike[str], option: str = "--out", inputs: Sequence[str | os.PathLike[str]] = ()) -> None:
    """Refuse an output file (`option`: --out, --html, --per-query) that is one of the inputs or
    a file the workspace's store owns (its database, the database's -wal / -shm, its folders:
    `tempo_eval.store.db.owned_by_workspace`): writing there would destroy it. Every writer of
    the command line calls this before it writes; call it after --workspace is applied."""
    from tempo_eval.store.db import owned_by_workspace

    target = Path(out)
    for source in map(Path, inputs):
        try:
            same = (
                os.path.samefile(target, source) if target.exists() and source.exists()
                else target.resolve() == source.resolve()
            )
        except (OSError, RuntimeError):  # a symlink loop: not the same file; its reader says what it is
            same = False
        if same:
            raise CLIError(
                f"{option} {str(out)!r} is the input {str(source)!r}; writing there would "
                f"overwrite it: choose another {option} file"
            )
    owned = owned_by_workspace(target)
    if owned is not None:
        raise CLIError(
            f"{option} {str(out)!r} is {owned}; writing there would destroy what the workspace "
            f"stores: choose another {option} file outside the workspace's files"
        )


def add_workspace_option(parser: argparse.ArgumentParser) -> None:
    """The --workspace option of every command that uses the run store."""
    parser.add_argument("--workspace", metavar="DIR",
                        help="workspace directory holding the run store (default $TEMPO_EVAL_HOME or ~/.tempo_eval)")


def add_user_option(parser: argparse.ArgumentParser) -> None:
    """The --user option of every command that stores a run or a dataset: who made them."""
    parser.add_argument("--user", metavar="NAME",
                        help="the user recorded as who made the runs and datasets this command stores "
                             "(default: the operating-system user)")


def acting_user(args: argparse.Namespace) -> str:
    """Who a storing command acts as: --user, else the operating-system user
    (`tempo_eval.common.identity.os_user`). An empty --user is refused."""
    from tempo_eval.common.identity import os_user, user_name

    given = getattr(args, "user", None)
    if given is None:
        return os_user()
    name = user_name(given)
    if name is None:
        raise CLIError("--user must name a user; got an empty name (leave --user out to record the "
                       "operating-system user)")
    return name


def run_id_of(store: Any, ref: str) -> int:
    """The id of the run `ref` names (`RUN_REF_HELP`); CLIError naming it when there is none."""
    from tempo_eval.compare.run_diff import resolve_run

    try:
        return resolve_run(store, ref)
    except LookupError as unknown:
        raise CLIError(str(unknown.args[0])) from None


def print_table(lines: list[list[str]]) -> None:
    """Rows of cells as aligned columns, the header first; the last column is not padded."""
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]) - 1)]
    for line in lines:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=False)) + "  " + line[-1])


def add_doc_dates_option(parser: argparse.ArgumentParser, use: str) -> None:
    """--doc-dates FILE, the same option for `compare` and `evaluate` (`use`: what it is for)."""
    parser.add_argument("--doc-dates", metavar="FILE",
                        help=f"publication date of each document: docid<TAB>date lines ({use})")
