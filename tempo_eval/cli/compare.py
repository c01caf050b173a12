"""`tempo-eval compare`: compare TREC run files against qrels with significance tests.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tempo_eval.cli.common import (
    EXIT_OK,
    CLIError,
    add_doc_dates_option,
    check_output,
    max_input_bytes,
)
from tempo_eval.common.safe_text import one_line
from tempo_eval.common.schema import DEFAULT_SIGNIFICANCE_TEST


def cmd_compare(args: argparse.Namespace) -> int:
    from tempo_eval.compare.statistics import parse_trec_metric
    from tempo_eval.compare.trec_scores import compare_scores, per_query_lines, score_trec_files
    from tempo_eval.io.export import to_csv_text
    from tempo_eval.metrics.asof_columns import parse_run_metric

    metrics = args.metric or ["ndcg@10"]
    as_of = [metric for metric in metrics if parse_run_metric(metric)]
    for metric in metrics:
        if metric not in as_of:
            try:
                parse_trec_metric(metric)
            except ValueError as exc:
                raise CLIError(f"{exc}, or an as-of metric: future_leak@k, stale_evidence@k, median_age@k, "
                               "recency_ndcg@k") from None
    if as_of and not (args.doc_dates and args.query_dates):
        raise CLIError(f"{', '.join(as_of)} need --doc-dates FILE and --query-dates FILE (id<TAB>date lines)")
    if not as_of and (args.max_age is not None or args.half_life is not None):
        raise CLIError("--max-age and --half-life apply to the as-of metrics (stale_evidence@K, recency_ndcg@K)")
    if as_of and args.engine == "ray":
        raise CLIError(f"{', '.join(as_of)} are computed by the local engine: leave out --engine ray")
    for name, value in (("--max-age", args.max_age), ("--half-life", args.half_life)):
        if value is not None and not (value > 0 and value != float("inf")):
            raise CLIError(f"{name} must be a positive number of days, got {value}")
    dated = {"doc_dates": args.doc_dates, "query_dates": args.query_dates,
             "max_age": args.max_age, "half_life": args.half_life} if as_of else {}
    if args.depth is not None and args.depth < 1:
        raise CLIError(f"--depth must be a positive integer, got {args.depth}")
    max_bytes = max_input_bytes(args)
    for option, output in (("--out", args.out), ("--per-query", args.per_query)):
        if output:
            inputs = [*args.runs, args.qrels, *(p for p in (args.doc_dates, args.query_dates) if p)]
            check_output(output, option, inputs)
    # TREC lines are streamed (each query's top documents kept): no size limit; JSON is held whole
    if args.engine == "ray":
        from tempo_eval.engine.distributed.compare import score_trec_files_ray

        scores = score_trec_files_ray(
            args.runs, args.qrels, metrics=metrics, missing=args.missing, depth=args.depth,
            precision=args.score_precision, address=args.address, max_json_bytes=max_bytes,
        )
    else:
        if args.address:
            raise CLIError("--address needs --engine ray")
        scores = score_trec_files(
            args.runs, args.qrels, metrics=metrics, missing=args.missing, depth=args.depth,
            precision=args.score_precision, max_json_bytes=max_bytes, **dated,
        )
    for note in scores.notes:
        print(f"note: {one_line(note)}", file=sys.stderr)
    if len(scores.runs) < 2:
        raise CLIError(f"compare needs at least two runs; the run files hold {len(scores.runs)}")
    print(f"note: {one_line(scores.missing_summary())}", file=sys.stderr)
    from tempo_eval.io.export import write_text_output

    if args.per_query:
        write_text_output("".join(per_query_lines(scores)), args.per_query)
    report = compare_scores(
        scores, test=args.test, alpha=args.alpha, correction=args.correction,
        n_permutations=args.permutations, seed=args.seed,
    )
    if args.format == "html":
        from tempo_eval.compare.report_html import comparison_html

        text = comparison_html(report)
    elif args.format == "latex":
        text = report.to_latex()
    elif args.format == "csv":
        text = to_csv_text(report.to_dataframe())
    else:
        text = report.to_markdown()
    if args.out:
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
            "Per-query NDCG@k (trec_eval's ndcg_cut), and the as-of metrics with dates, for each run, then paired significance "
            "tests between every pair of runs, Holm-corrected, in a table that marks each run's "
            "score with the letters of the runs it beats significantly."
        ),
    )
    cmp_.add_argument("runs", nargs="+", metavar="RUN_FILE", help="TREC run files (two or more runs)")
    cmp_.add_argument("--qrels", required=True, help="TREC qrels file")
    add_doc_dates_option(cmp_, "for the as-of metrics")
    cmp_.add_argument("--query-dates", metavar="FILE",
                      help="as-of date of each query: qid<TAB>date lines (for the as-of metrics)")
    cmp_.add_argument("--metric", action="append", metavar="METRIC@K",
                      help="metric to compare (repeatable; default ndcg@10): ndcg@K, or the as-of metrics "
                           "future_leak@K, stale_evidence@K, median_age@K, recency_ndcg@K (with --doc-dates "
                           "and --query-dates)")
    cmp_.add_argument("--max-age", type=float, metavar="DAYS",
                      help="stale_evidence@K: a document older than this at the as-of date is stale (default 365)")
    cmp_.add_argument("--half-life", type=float, metavar="DAYS",
                      help="recency_ndcg@K: a document's gain halves every DAYS of age (default 365)")
    cmp_.add_argument("--test", choices=("fisher", "student"), default=DEFAULT_SIGNIFICANCE_TEST,
                      help="the paired t-test (default, as on the dashboard's Compare page) or Fisher's "
                           "randomisation test")
    cmp_.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    cmp_.add_argument("--correction", choices=("holm", "none"), default="holm",
                      help="multiple-comparison correction over run pairs (default holm)")
    cmp_.add_argument("--permutations", type=int, default=10_000,
                      help="random sign flips for the Fisher test (exact when 2^n is smaller)")
    cmp_.add_argument("--seed", type=int, default=42, help="seed of the Fisher test (default 42)")
    cmp_.add_argument("--missing", choices=("zero", "drop"), default="zero",
                      help="a judged query a run has no results for: scored 0 for that run, as "
                           "trec_eval -c (default), or dropped from every run's comparison; "
                           "how many there were is printed either way")
    cmp_.add_argument("--engine", choices=("local", "ray"), default="local",
                      help="where run files are read: here (default) or one Ray task per run file (the "
                           "paths must be readable on every node); the results are the same")
    cmp_.add_argument("--address", help="with --engine ray: the Ray cluster to join (default: a local one)")
    cmp_.add_argument("--per-query", metavar="FILE",
                      help="also write every run's per-query values as CSV lines run,query_id,metric,value "
                           "(like trec_eval -q)")
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
                      help="refuse a JSON run or qrels file larger than this (default 128, or "
                           "$TEMPO_EVAL_MAX_INPUT_MB); TREC lines are streamed and have no limit")
    cmp_.set_defaults(handler=cmd_compare)
