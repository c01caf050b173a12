"""`tempo-eval slices RUN [RUN ...]`: a metric of stored runs over time (`tempo_eval.slices`).

    tempo-eval slices 3 --metric temporal_faithfulness --by as_of --bin quarter --changepoint
    tempo-eval slices 3 4 --metric answer_currency --by evidence_year --bin year --format json

Per bin of the rows' as-of date, focus year or evidence year: n, mean, 95% interval (Wilson for
0/1 scores, else the percentile bootstrap), rows not measured; with --changepoint, where the level
changes; with two or more runs of one dataset, each run minus the first over the rows measured in
both. Exit 2 on an unknown run or metric (one line naming it).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tempo_eval.cli.common import EXIT_OK, CLIError, add_workspace_option


def add_parser(commands: Any) -> None:
    """Add this subcommand to the `commands` of `tempo_eval.cli.parser.build_parser`."""
    slices = commands.add_parser(
        "slices",
        help="a metric of stored runs over time: per bin of as-of date, focus year or evidence year",
        description=(
            "Per bin of the rows' as-of date (reference_date), the years their query is about "
            "(focus_year) or the publication years of their top-k documents (evidence_year): n, "
            "mean, 95% interval (Wilson for 0/1 scores, else bootstrap) and the rows not measured; "
            "where the level changes (--changepoint); each run minus the first, per bin."
        ),
    )
    slices.add_argument("runs", nargs="+", metavar="RUN", help="run ids or names, as 'tempo-eval runs' lists them")
    slices.add_argument("--metric", required=True, metavar="M", help="the per-row metric to slice")
    slices.add_argument("--by", choices=("as_of", "focus_year", "evidence_year"), default="as_of",
                        help="the time of a row (default as_of)")
    slices.add_argument("--bin", choices=("week", "month", "quarter", "year"), default="year",
                        help="bin width (default year; focus_year and evidence_year bin by year)")
    slices.add_argument("--changepoint", action="store_true",
                        help="find where the level changes (at most one change point, with a permutation p-value)")
    slices.add_argument("--penalty", type=float, metavar="P",
                        help="with --changepoint: several change points, P per change point (log(rows) is BIC-like)")
    slices.add_argument("--k", type=int, default=10, metavar="K",
                        help="top documents read for --by evidence_year (default 10)")
    slices.add_argument("--format", choices=("text", "csv", "json"), default="text", help="output format (default text)")
    add_workspace_option(slices)
    slices.set_defaults(handler=cmd_slices)


def cmd_slices(args: argparse.Namespace) -> int:
    from tempo_eval.slices.report import slices
    from tempo_eval.store.runs import RunStore

    if args.penalty is not None and (not args.changepoint or args.penalty <= 0):
        raise CLIError("--penalty needs --changepoint and a positive number")
    if args.k < 1:
        raise CLIError(f"--k must be at least 1, got {args.k}")
    store = RunStore()
    try:
        report = slices(args.runs, args.metric, by=args.by, bin=args.bin, changepoint=args.changepoint,
                        penalty=args.penalty, store=store, k=args.k)
    except LookupError as unknown:
        raise CLIError(str(unknown.args[0])) from None
    text = {"json": lambda: report.to_json() + "\n", "csv": report.to_csv, "text": report.to_text}[args.format]()
    sys.stdout.write(text)
    return EXIT_OK
