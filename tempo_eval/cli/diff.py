"""`tempo-eval diff BASELINE CANDIDATE`: two stored runs side by side (`tempo_eval.compare.run_diff`).

    tempo-eval diff "prompt v1" "prompt v2" --format markdown          # a pull-request comment
    tempo-eval diff 12 15 --metric temporal_faithfulness --fail-on-regression 1   # CI gate
    tempo-eval diff 12 15 --format json --html diff.html
    tempo-eval diff name:1 name:2                                     # runs named "1" and "2"

A run is its id (12 or #12) or its name (name:NAME for the name alone); a number that is both one
run's id and another run's name is refused, naming both (`tempo_eval.compare.run_diff.resolve_run`).

Exit codes: 0, or 1 when at least N rows regressed on a chosen metric (--fail-on-regression N;
every metric both runs hold when no --metric is given); 2 on a usage error or an unknown run
(one line naming it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tempo_eval.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    RUN_REF_HELP,
    CLIError,
    add_workspace_option,
    check_output,
    run_id_of,
)

FORMATS = ("text", "markdown", "json", "csv")


def add_parser(commands: Any) -> None:
    """Add this subcommand to the `commands` of `tempo_eval.cli.parser.build_parser`."""
    diff = commands.add_parser(
        "diff",
        help="two stored evaluation runs side by side: which rows got better, which got worse",
        description=(
            "Match the rows of two stored runs (by query id, or by query text where the dataset "
            "had no ids) and, per metric both hold, give both means, the mean change with its 95% "
            "CI, the paired t-test's p-value, the rows improved / regressed / unchanged (|change| <= "
            "--tolerance) and those that became (not) measurable; then the worst regressions."
        ),
    )
    diff.add_argument("baseline", help=f"the baseline run: {RUN_REF_HELP}")
    diff.add_argument("candidate", help=f"the candidate run: {RUN_REF_HELP}")
    diff.add_argument("--metric", action="append", metavar="M",
                      help="a metric to diff (repeatable; default every metric both runs hold)")
    diff.add_argument("--tolerance", type=float, default=0.01, metavar="T",
                      help="a change of at most T counts as unchanged (default 0.01)")
    diff.add_argument("--fail-on-regression", type=int, metavar="N",
                      help="exit 1 when at least N rows regressed on a chosen metric")
    diff.add_argument("--test", choices=("student", "fisher"), default="student",
                      help="the paired test: the t-test (default, as on the Compare page) or Fisher's randomisation test")
    diff.add_argument("--format", choices=FORMATS, default="text",
                      help="text (default), markdown (ready to paste in a pull request), json (one "
                           "object) or csv (every matched row and metric)")
    diff.add_argument("--top", type=int, default=10, metavar="K",
                      help="worst regressions listed by text and markdown (default 10)")
    diff.add_argument("--html", metavar="FILE",
                      help="also write a standalone HTML report (charts embedded, opens offline)")
    add_workspace_option(diff)
    diff.set_defaults(handler=cmd_diff)


def cmd_diff(args: argparse.Namespace) -> int:
    from tempo_eval.compare.run_diff import diff_stored
    from tempo_eval.store.runs import RunStore

    if args.fail_on_regression is not None and args.fail_on_regression < 1:
        raise CLIError(f"--fail-on-regression must be at least 1, got {args.fail_on_regression}")
    if args.top < 0:
        raise CLIError(f"--top must be 0 or more, got {args.top}")
    if args.html:
        check_output(args.html, "--html")
    store = RunStore()
    baseline, candidate = run_id_of(store, args.baseline), run_id_of(store, args.candidate)
    report = diff_stored(store, baseline, candidate, metrics=args.metric, tolerance=args.tolerance, test=args.test)
    if args.html:
        from tempo_eval.compare.report_html import diff_html

        Path(args.html).write_text(diff_html(report), encoding="utf-8")
    if args.format == "json":
        sys.stdout.write(report.to_json() + "\n")
    elif args.format == "csv":
        sys.stdout.write(report.to_csv())
    elif args.format == "markdown":
        sys.stdout.write(report.to_markdown(top=args.top))
    else:
        sys.stdout.write(report.to_text(top=args.top))
    if not report.metrics:
        print("warning: the two runs hold no metric in common; nothing was compared", file=sys.stderr)
    if args.fail_on_regression is None:
        return EXIT_OK
    failing = [(m, report.regressed(m)) for m in report.metrics if report.regressed(m) >= args.fail_on_regression]
    for metric, count in failing:
        print(f"fail: {metric}: {count} rows regressed (at least {args.fail_on_regression})", file=sys.stderr)
    return EXIT_FAILED if failing else EXIT_OK
