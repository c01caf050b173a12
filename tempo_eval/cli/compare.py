"""`tempo-eval compare`: compare TREC run files against qrels with significance tests.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tempo_eval.cli.common import EXIT_OK, CLIError, check_out_is_not_an_input, max_input_bytes

if TYPE_CHECKING:
    pass


def cmd_compare(args: argparse.Namespace) -> int:
    from tempo_eval.compare import compare_trec, parse_trec_metric
    from tempo_eval.io.export import to_csv_text
    from tempo_eval.io.trec import load_qrels, load_run

    metrics = args.metric or ["ndcg@10"]
    for metric in metrics:
        parse_trec_metric(metric)
    if args.depth is not None and args.depth < 1:
        raise CLIError(f"--depth must be a positive integer, got {args.depth}")
    max_bytes = max_input_bytes(args)
    if args.out:  # compare does not use the workspace: only its inputs are guarded
        check_out_is_not_an_input(Path(args.out), [Path(p) for p in [*args.runs, args.qrels]], workspace=False)
    runs = load_run(args.runs, max_bytes=max_bytes)
    for note in dict.fromkeys(note for run in runs.values() for note in run.notes):
        print(f"note: {note}", file=sys.stderr)
    if len(runs) < 2:
        raise CLIError(f"compare needs at least two runs; the run files hold {len(runs)}")
    qrels = load_qrels(args.qrels, max_bytes=max_bytes)
    report = compare_trec(
        runs, qrels, metrics=metrics, missing=args.missing, test=args.test, alpha=args.alpha,
        correction=args.correction, n_permutations=args.permutations, seed=args.seed,
        depth=args.depth, precision=args.score_precision,
    )
    if args.format == "html":
        from tempo_eval.report_html import comparison_html

        text = comparison_html(report)
    elif args.format == "latex":
        text = report.to_latex()
    elif args.format == "csv":
        text = to_csv_text(report.to_dataframe())
    else:
        text = report.to_markdown()
    if args.out:
        from tempo_eval.io.export import write_text_output

        write_text_output(text, args.out)  # a full disk is a clear "could not write" message
    else:
        sys.stdout.write(text)
    return EXIT_OK


def add_parser(commands: Any) -> None:
    """Add this subcommand to the `commands` of `tempo_eval.cli.parser.build_parser`."""
    cmp_ = commands.add_parser(
        "compare",
        help="compare TREC run files against qrels with significance tests",
        description=(
            "Per-query NDCG@k (trec_eval's ndcg_cut) for each run, then paired significance "
            "tests between every pair of runs, Holm-corrected, in a table that marks each run's "
            "score with the letters of the runs it beats significantly."
        ),
    )
    cmp_.add_argument("runs", nargs="+", metavar="RUN_FILE", help="TREC run files (two or more runs)")
    cmp_.add_argument("--qrels", required=True, help="TREC qrels file")
    cmp_.add_argument("--metric", action="append", metavar="ndcg@K",
                      help="metric to compare (repeatable; default ndcg@10)")
    cmp_.add_argument("--test", choices=("fisher", "student"), default="fisher",
                      help="Fisher's randomisation test (default) or the paired t-test")
    cmp_.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    cmp_.add_argument("--correction", choices=("holm", "none"), default="holm",
                      help="multiple-comparison correction over run pairs (default holm)")
    cmp_.add_argument("--permutations", type=int, default=10_000,
                      help="random sign flips for the Fisher test (exact when 2^n is smaller)")
    cmp_.add_argument("--seed", type=int, default=42, help="seed of the Fisher test (default 42)")
    cmp_.add_argument("--missing", choices=("zero", "drop"), default="zero",
                      help="a judged query a run has no results for: scored 0 for that run, as "
                           "trec_eval -c (default), or dropped from every run's comparison")
    cmp_.add_argument("--depth", type=int, metavar="M",
                      help="evaluate only each query's top M documents, as trec_eval -M (default: all)")
    cmp_.add_argument("--score-precision", choices=("float32", "double"), default="float32",
                      help="how run scores are compared when ranking: float32 as trec_eval <= 9 and "
                           "pytrec_eval-terrier (default), or double as trec_eval 10.0; they differ "
                           "only for scores equal in float32")
    cmp_.add_argument("--format", choices=("markdown", "latex", "csv", "html"), default="markdown",
                      help="output format (default markdown); html: one standalone file with a chart, "
                           "opens offline")
    cmp_.add_argument("--out", metavar="FILE", help="write the table here instead of stdout")
    cmp_.add_argument("--max-input-mb", type=float, metavar="MB",
                      help="refuse a run or qrels file larger than this (default 128, or "
                           "$TEMPO_EVAL_MAX_INPUT_MB)")
    cmp_.set_defaults(handler=cmd_compare)
