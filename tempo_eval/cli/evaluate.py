"""`tempo-eval evaluate`: score a dataset (or a conversation file) with chosen metrics, locally or
on Ray, write the results and exit 1 on a broken setup or a mean under --fail-under.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import math
import os
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tempo_eval.cli.common import (
    CONVERSATION_METRICS,
    DATASET_METRICS,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    METRIC_MODULES,
    CLIError,
    ProgressBar,
    acting_user,
    add_doc_dates_option,
    add_user_option,
    add_workspace_option,
    check_output,
    max_input_bytes,
)
from tempo_eval.cli.evaluate_out import ResultsOut, ScoresOf, StreamedOut
from tempo_eval.cli.gates import below_thresholds, check_gates, parse_fail_under
from tempo_eval.common.safe_text import one_line

if TYPE_CHECKING:
    import pandas as pd


def parse_mapping(items: Sequence[str]) -> dict[str, str]:
    """["query=question", ...] -> {"query": "question"} (canonical column = source column)."""
    mapping: dict[str, str] = {}
    for item in items:
        canonical, sep, source = item.partition("=")
        if not sep or not canonical.strip() or not source.strip():
            raise CLIError(f"--mapping {item!r}: expected CANONICAL=SOURCE, e.g. query=question")
        mapping[canonical.strip()] = source.strip()
    return mapping


def metric_names(repeated: Sequence[str] | None, listed: str | None) -> list[str]:
    """The metric names of `--metric NAME` (repeatable) and `--metrics a,b`, in order, each once."""
    names = [n.strip() for n in (repeated or []) if n.strip()]
    names += [n.strip() for n in (listed or "").split(",") if n.strip()]
    if not names:
        raise CLIError("name the metrics to compute: --metric NAME (repeatable) or --metrics a,b")
    return list(dict.fromkeys(names))


#: --ndcg-mode's words -> TemporalNDCG's mode
NDCG_MODES = {"gold": "gold", "focus": "focus_time", "judge": "llm"}


def build_metrics(
    names: Sequence[str], *, k: int | None = None, verifier: Any = None,
    max_age: float | None = None, half_life: float | None = None, ndcg_mode: str | None = None,
    doc_dates: Any = None,
) -> list[Any]:
    """Metric instances by name. `k` goes to metrics that take a cutoff, `verifier` to metrics that
    verify claims (temporal_faithfulness then runs in its verifier mode), `max_age` to
    stale_evidence and `half_life` to recency_ndcg (days), `ndcg_mode` (gold, focus or judge) to
    temporal_ndcg instead of its automatic choice, `doc_dates` (an `IdDates`, `--doc-dates`) to the
    as-of ranking metrics."""
    from tempo_eval.metrics.catalog import build_metric

    metrics = []
    for name in names:
        if name not in METRIC_MODULES:
            raise CLIError(f"unknown metric {name!r}; available: {', '.join(DATASET_METRICS)}")
        mode = NDCG_MODES[ndcg_mode] if ndcg_mode is not None and name == "temporal_ndcg" else None
        judge = _judge_of(verifier) if mode is not None and ndcg_mode == "judge" else None
        try:
            metrics.append(build_metric(name, k=k, verifier=verifier, max_age=max_age, half_life=half_life,
                                        doc_dates=doc_dates, mode=mode, llm=judge))
        except ValueError as error:
            raise CLIError(f"{name}: {error}") from None
    for option, value, flag, names_taking in (
        ("k", k, "--k", "takes a cutoff"),
        ("max_age", max_age, "--max-age", "takes a maximum age (stale_evidence does)"),
        ("half_life", half_life, "--half-life", "takes a half-life (recency_ndcg does)"),
        ("doc_dates", doc_dates, "--doc-dates", "dates documents (the as-of metrics do)"),
    ):
        if value is not None and not any(option in inspect.signature(type(m)).parameters for m in metrics):
            raise CLIError(f"{flag} was given but none of the chosen metrics {names_taking}")
    if ndcg_mode is not None and "temporal_ndcg" not in names:
        raise CLIError("--ndcg-mode sets temporal_ndcg's mode, but temporal_ndcg is not among the metrics")
    return metrics


def _doc_dates(path: str | None) -> Any:
    """The --doc-dates file, read as `compare` reads it (`read_id_dates`), named in the run's
    settings by its SHA-256; None without the option. Every date and id is checked here, before
    the first row (an error names the file and the line), not row by row."""
    if not path:
        return None
    from tempo_eval.core.pubdates import read_id_dates

    dates = read_id_dates(path, digest=True)
    dates.days_of(dates.ids)
    return dates


def _judge_of(verifier: Any) -> Any:
    """The judge (an LLM provider) behind `--verifier llm`; CLIError without one."""
    provider = getattr(getattr(verifier, "verifier", verifier), "provider", None)
    if provider is None:
        raise CLIError("--ndcg-mode judge grades documents with the judge: add --verifier llm "
                       "(with --model, --base-url and the API key)")
    return provider


def _api_key(env_name: str | None) -> str | None:
    name = env_name or "OPENAI_API_KEY"
    key = os.environ.get(name)
    if env_name and not key:
        raise CLIError(f"--api-key-env {env_name}: that environment variable is not set")
    return key


def cmd_evaluate(args: argparse.Namespace) -> int:
    with _library_progress_bars(args.verbose, _loads_a_model(args)):
        return _evaluate(args)


def _check_available(verifier: Any) -> None:
    """Fail before the first row, not once per row, when the verifier cannot run here (a model
    that cannot be loaded, the [nli] extra not installed)."""
    inner = getattr(verifier, "verifier", verifier)
    if hasattr(inner, "check_available"):
        available, why = inner.check_available()
        if not available:
            raise CLIError(why)


def _evaluate(args: argparse.Namespace) -> int:
    if args.run_name is not None and not args.run_name.split():
        raise CLIError(f"--run-name {args.run_name!r}: a run name must not be empty; leave the option out "
                       "for a name made from the file and the metrics")
    names = metric_names(args.metric, args.metrics)
    if args.engine != "ray" and not any(n in CONVERSATION_METRICS for n in names):
        _warm_up_workers(args, names)  # first: the server imports the scoring modules beside ours

    from tempo_eval.engine.pool import ScoringProcessError, default_processes
    from tempo_eval.engine.runner import evaluate
    from tempo_eval.engine.scoring import aggregate_frame
    from tempo_eval.io.conversation import load_conversations
    from tempo_eval.io.errors import InputError
    from tempo_eval.io.export import OUTPUT_FORMATS, write_frame, write_frames
    from tempo_eval.io.stream import open_stream
    from tempo_eval.store.runs import RunStore

    max_bytes = max_input_bytes(args)
    on_ray = args.engine == "ray"
    if not on_ray and re.match(r"[A-Za-z][A-Za-z0-9+.-]+://", args.data):
        raise CLIError(f"{args.data.split('?')[0]!r}: object-store URIs are read by the Ray engine; add "
                       "--engine ray --out DIR (or copy the file here first)")
    _check_engine_options(args)
    if not on_ray and args.out is not None and Path(args.out).suffix.lower() not in OUTPUT_FORMATS:
        raise CLIError(f"--out {args.out!r}: the extension must be one of {', '.join(OUTPUT_FORMATS)}")
    if args.k is not None and args.k < 1:
        raise CLIError(f"--k must be a positive integer, got {args.k}")
    thresholds = parse_fail_under(args.fail_under)
    maxima = parse_fail_under(args.fail_over, "--fail-over")
    check_gates(thresholds, maxima, names)
    if args.out is not None:
        check_output(args.out, "--out", [args.data, *([args.doc_dates] if args.doc_dates else [])])
    if args.timeout is not None and not args.timeout > 0:
        raise CLIError(f"--timeout must be a positive number of seconds, got {args.timeout:g}")
    if args.max_retries is not None and args.max_retries < 0:
        raise CLIError(f"--max-retries must be 0 or more, got {args.max_retries}")
    if args.deadline is not None and not args.deadline > 0:
        raise CLIError(f"--deadline must be a positive number of seconds, got {args.deadline:g}")

    on_conversations = [n for n in names if n in CONVERSATION_METRICS]
    if on_conversations:
        if on_ray:
            raise CLIError(f"{', '.join(on_conversations)} runs with the local engine only: leave out --engine ray")
        if len(on_conversations) != len(names):
            raise CLIError(
                f"{', '.join(on_conversations)} runs on a conversation file, the other metrics on dataset "
                "rows: evaluate them with separate commands"
            )
        if args.mapping:
            raise CLIError("--mapping applies to dataset files, not to conversation files")
        try:
            dataset = load_conversations(args.data, max_bytes=max_bytes)
        except ValueError as error:
            raise CLIError(
                f"turn_faithfulness runs on conversations: {error} (or use the dashboard's Conversation page)"
            ) from None
    elif not on_ray:  # the Ray engine reads the data with Ray Data, on the cluster
        try:
            # read in batches: no size limit unless one is asked for (--max-input-mb, or the
            # environment variable), since memory grows with the batch, not the file
            dataset = open_stream(args.data, parse_mapping(args.mapping or []), max_bytes=_stream_limit(max_bytes))
        except ValueError as error:
            raise CLIError(f"{error}{_conversation_hint(args.data, max_bytes)}") from None
    verifier = None
    if args.verifier:
        from tempo_eval.verify import make_verifier

        options: dict[str, Any] = {"model": args.model}
        if args.verifier == "llm":
            options.update(base_url=args.base_url, api_key=_api_key(args.api_key_env))
            if args.timeout is not None:
                options["timeout"] = args.timeout
            if args.max_retries is not None:
                options["max_retries"] = args.max_retries
        elif args.timeout is not None or args.max_retries is not None:
            raise CLIError("--timeout and --max-retries apply to the judge: they need --verifier llm")
        if args.batch_size is not None:
            if args.verifier != "nli":
                raise CLIError("--batch-size sets the NLI model's pairs per forward pass: it needs --verifier nli")
            if args.batch_size < 1:
                raise CLIError(f"--batch-size must be a positive integer, got {args.batch_size}")
            options["batch_size"] = args.batch_size
        verifier = make_verifier(args.verifier, **options)
        _check_available(verifier)
    elif args.model or args.base_url:
        raise CLIError("--model and --base-url need --verifier")
    elif args.batch_size is not None:
        raise CLIError("--batch-size sets the NLI model's pairs per forward pass: it needs --verifier nli")
    elif args.timeout is not None or args.max_retries is not None:
        raise CLIError("--timeout and --max-retries apply to the judge: they need --verifier llm")
    metrics = build_metrics(names, k=args.k, verifier=verifier, max_age=args.max_age, half_life=args.half_life,
                            ndcg_mode=args.ndcg_mode, doc_dates=_doc_dates(args.doc_dates))
    if verifier is None:  # metrics that verify claims by default do it with the lexical verifier
        for metric in metrics:
            if hasattr(metric, "_verifier"):
                _check_available(metric._verifier())
    if on_ray:
        return _evaluate_on_ray(args, metrics, thresholds, maxima)

    store = RunStore()
    bar = None if args.no_progress else ProgressBar(sys.stderr)
    inner = getattr(verifier, "verifier", verifier)
    if bar is not None and hasattr(inner, "on_pairs"):
        inner.on_pairs = bar.add_pairs  # the bar counts the (premise, claim) pairs verified
    # --out is written while the rows are scored, batch by batch in row order, into a file beside
    # it that replaces it once complete (an interrupted run leaves --out as it was); the summary's
    # scores are gathered on the way
    scores = ScoresOf()
    out = StreamedOut(args.out) if args.out is not None else None  # without --out: the workspace only
    result = None
    try:
        result = evaluate(
            dataset, metrics, store=store, run_name=args.run_name, reference_date=args.reference_date,
            user=acting_user(args), progress=bar, max_concurrency=args.concurrency, retry_failed=not args.no_retry_failed,
            deadline=args.deadline, processes=args.processes or default_processes(),
            on_results=ResultsOut(out, scores) if out is not None and StreamedOut.suits(args.out) else None,
        )
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()  # end the bar's line before the message
        print("interrupted: finished rows are stored; run the same command again to resume",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    except InputError as error:  # found in a later batch of a streamed file
        raise CLIError(str(error)) from None
    except ScoringProcessError as error:  # a worker process killed: the run is marked failed
        if bar is not None:
            bar.close()
        print(f"error: {error}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        if result is None and out is not None:
            out.discard()
        if bar is not None:
            bar.close()
    for warning in dataset.warnings:  # a streamed file's warnings are known once it is read
        print(f"warning: {one_line(warning)}", file=sys.stderr)

    if result.results_streamed:
        out.finish()
        frame = scores.frame()
    elif result.unstored is None or result.unstored.empty:
        if out is not None:
            out.discard()
        # a part at a time from the store, and the summary from the scores alone: the memory of
        # a part, whatever the size of the run; the results are read once, for both
        scores = ScoresOf()
        parts = scores.gather(store.results_frames(result.run_id))
        if args.out is not None:
            write_frames(parts, args.out)
        else:
            for _part in parts:  # the summary's scores only
                pass
        frame = scores.frame()
    else:
        frame = result.frame  # results this call gives without storing them (see RunResult.unstored)
        if out is not None:
            out.discard()
            write_frame(frame, args.out)
    # the summary is the command's answer: on stdout; progress, warnings and errors on stderr
    if result.resumed:
        name = one_line(store.run_info(result.run_id)["name"])
        print(f"resumed run #{result.run_id} {name!r} (same dataset and settings"
              f"{', same name' if args.run_name is not None else ''}): stored rows were reused; give another "
              "--run-name for a new run", file=sys.stderr)
    print(
        f"run {result.run_id}: {result.n_rows} rows, {result.computed} results computed, "
        f"{result.reused} reused -> "
        + (args.out if args.out is not None else f"the workspace (to write a file: tempo-eval runs export {result.run_id} --out FILE)")
    )
    aggregate = aggregate_frame(frame, metrics=result.metrics)
    print(_summary(aggregate), flush=True)
    if "answer_currency" in names:
        # the rows as stored: a streamed dataset is not held in memory
        print(_currency_summary(result.frame, store.dataset_frame(result.dataset_id)), flush=True)
    if result.deadline_rows:  # first: it explains the failures it caused
        print(
            f"error: the deadline of {args.deadline:g} s passed before {result.deadline_rows} of "
            f"{result.n_rows} rows were evaluated (stored as NaN judge_error); run the same "
            "command again to resume",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return _exit_code(frame, aggregate, thresholds, maxima)


def _exit_code(frame: pd.DataFrame, aggregate: pd.DataFrame, thresholds: dict[str, float],
               maxima: dict[str, float]) -> int:
    """EXIT_FAILED when a metric failed on every row, is below its --fail-under threshold or above
    its --fail-over one (one line per cause on stderr), else EXIT_OK; the same for both engines."""
    failure = _all_rows_failed(frame)
    below = below_thresholds(aggregate, thresholds, maxima)
    for line in below:
        print(line, file=sys.stderr)
    if failure is not None:
        print(f"error: {failure}", file=sys.stderr)
    return EXIT_FAILED if failure is not None or below else EXIT_OK


#: a dataset file smaller than this is not worth starting scoring processes for (at about a kilobyte
#: a row, it holds fewer than `tempo_eval.engine.pool.POOL_MIN_ROWS` rows)
_WORKERS_MIN_BYTES = 2_000_000


def _warm_up_workers(args: argparse.Namespace, names: list[str]) -> None:
    """Start the scoring processes' fork server while the file is read a first time, when the run
    may score in processes: a large file, more than one process, metrics that may be offline."""
    from tempo_eval.engine.pool import default_processes, warm_up

    with contextlib.suppress(OSError):
        if ((args.processes or default_processes()) > 1 and not args.verifier
                and os.path.getsize(args.data) >= _WORKERS_MIN_BYTES):
            warm_up(list(dict.fromkeys(METRIC_MODULES[name] for name in names if name in METRIC_MODULES)))


def _check_engine_options(args: argparse.Namespace) -> None:
    from tempo_eval.io.export import OUTPUT_FORMATS

    if args.engine == "ray":
        if args.out is None:
            raise CLIError("--engine ray writes its blocks to a directory: add --out DIR")
        if Path(args.out).suffix.lower() in OUTPUT_FORMATS:
            raise CLIError(f"--out {args.out!r}: with --engine ray, --out is a directory (one Parquet file "
                           "per block of rows), not a file")
        if args.num_workers < 1:
            raise CLIError(f"--num-workers must be a positive integer, got {args.num_workers}")
        if not args.gpus_per_worker >= 0:
            raise CLIError(f"--gpus-per-worker must be 0 or more, got {args.gpus_per_worker}")
        if args.block_size < 1:
            raise CLIError(f"--block-size must be a positive integer, got {args.block_size}")
        # not silently ignored: the Ray engine has no overall deadline (interrupt it and run the
        # same command again: finished blocks are kept), and Ray Data reads the dataset itself
        if args.deadline is not None:
            raise CLIError("--deadline applies to the local engine; with --engine ray, interrupt the run "
                           "and run the same command again to resume it from its finished blocks")
        if args.max_input_mb is not None:
            raise CLIError("--max-input-mb applies to the local engine; with --engine ray the dataset is "
                           "read by Ray Data, without a size limit")
        if args.processes is not None:
            raise CLIError("--processes applies to the local engine; with --engine ray, --num-workers "
                           "sets the scoring actors")
        return
    if args.processes is not None and args.processes < 1:
        raise CLIError(f"--processes must be a positive integer, got {args.processes}")
    for option in ("address", "num_workers", "gpus_per_worker", "block_size"):
        if getattr(args, option) != RAY_DEFAULTS[option]:
            raise CLIError(f"--{option.replace('_', '-')} needs --engine ray")


#: the Ray engine's option defaults (given with the local engine, they are refused)
RAY_DEFAULTS = {"address": None, "num_workers": 2, "gpus_per_worker": 0.0, "block_size": 1000}


def _evaluate_on_ray(args: argparse.Namespace, metrics: list[Any], thresholds: dict[str, float],
                     maxima: dict[str, float]) -> int:
    from tempo_eval.engine.distributed.engine import evaluate_ray
    from tempo_eval.store.db import describe_location

    bar = None if args.no_progress else ProgressBar(sys.stderr)
    try:
        run = evaluate_ray(
            args.data, metrics, out=args.out, mapping=parse_mapping(args.mapping or []),
            reference_date=args.reference_date, address=args.address, num_workers=args.num_workers,
            gpus_per_worker=args.gpus_per_worker, block_size=args.block_size,
            max_concurrency=args.concurrency, retry_failed=not args.no_retry_failed, progress=bar,
            run_name=args.run_name, user=acting_user(args),
        )
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
        print(f"interrupted: finished blocks are in {args.out} and in the workspace; run the same command "
              "again to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if bar is not None:
            bar.close()
    for warning in run.warnings:
        print(f"warning: {one_line(warning)}", file=sys.stderr)
    print(
        f"{run.n_rows} rows in {run.n_blocks} blocks: {run.computed_blocks} computed, "
        f"{run.skipped_blocks} already done"
        f"{f' ({run.retried_rows} rows with failed results computed again)' if run.retried_rows else ''}"
        f" -> {args.out}, and run {run.run_id} in the workspace {describe_location()}",
        file=sys.stderr,
    )
    aggregate = run.aggregate()
    print(_summary(aggregate), flush=True)  # the answer, on stdout
    return _exit_code(run.frame, aggregate, thresholds, maxima)


def _stream_limit(max_bytes: int | None) -> int | None:
    """The size limit for a streamed dataset: --max-input-mb, else the environment variable when
    it is set, else none."""
    from tempo_eval.io._source import MAX_INPUT_ENV, max_input_bytes

    if max_bytes is not None:
        return max_bytes
    return max_input_bytes() if os.environ.get(MAX_INPUT_ENV, "").strip() else None


def _conversation_hint(path: str, max_bytes: int | None = None) -> str:
    """"; this file holds N conversations: ..." when a file refused as a dataset is a conversation file."""
    from tempo_eval.io.conversation import load_conversations

    try:
        conversations = load_conversations(path, max_bytes=max_bytes)
    except (ValueError, OSError):
        return ""
    return (
        f"; this file holds {len(conversations)} conversation(s): evaluate it with --metrics turn_faithfulness"
    )


def _all_rows_failed(frame: pd.DataFrame) -> str | None:
    """The failure to report when some metric failed on every row, with any failure code
    (row_error, judge_error, verifier_error, ...: see `is_retryable`). Nothing about the data was
    measured: a broken setup, not a finding. "all N rows failed: METRIC: REASON"."""
    from tempo_eval.common.schema import is_retryable

    for metric, part in frame.groupby("metric", sort=False):
        if len(part) and part["score"].isna().all() and all(map(is_retryable, part["reason_code"])):
            reason = " ".join(str(part["reason"].iloc[0]).split())
            return f"all {len(part)} rows failed: {metric}: {reason}"
    return None


def _loads_a_model(args: argparse.Namespace) -> bool:
    """Whether this run may load a model through transformers: an NLI or lexical verifier, chosen
    or the default of factual_correctness and turn_faithfulness."""
    if args.verifier is not None:
        return args.verifier in ("nli", "lexical")
    chosen = args.metrics if isinstance(args.metrics, str) else ",".join(map(str, args.metrics or []))
    return "factual_correctness" in chosen or "turn_faithfulness" in chosen


@contextlib.contextmanager
def _library_progress_bars(verbose: bool, loads_a_model: bool) -> Iterator[None]:
    """Unless `verbose`, a run that loads a model (an NLI checkpoint, the lexical verifier's
    MiniLM) draws none of transformers' own bars ("Loading weights"); our progress bar is the one
    that says how far the run is. The setting is put back afterwards (it is process-wide)."""
    if verbose or not loads_a_model:
        yield
        return
    try:
        from transformers.utils import logging as transformers_logging
    except ImportError:  # no model can be loaded without it: nothing to hide
        yield
        return

    was_enabled = transformers_logging.is_progress_bar_enabled()
    transformers_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            transformers_logging.enable_progress_bar()


def _summary(aggregate: pd.DataFrame) -> str:
    lines = []
    for metric, row in aggregate.iterrows():
        if math.isnan(row["mean"]):
            score = "no measurable row"
        else:
            score = f"{row['mean']:.4f} (95% CI {row['ci_low']:.4f}-{row['ci_high']:.4f})"
        reasons = ", ".join(f"{code}: {n}" for code, n in row["nan_reasons"].items())
        lines.append(
            f"{metric}: {score}; measurable {row['n_measurable']}/{row['n_total']}"
            + (f"; NaN {reasons}" if reasons else "")
        )
    return "\n".join(lines)


def _currency_summary(results: pd.DataFrame, data: pd.DataFrame) -> str:
    """The three answer-currency counts and the outdated-answer rate (rows with outdated
    references), from the labels the results' reasons lead with."""
    from tempo_eval.metrics.answer_currency import label_from_reason
    from tempo_eval.metrics.asof import currency_counts

    part = results[results["metric"] == "answer_currency"]
    labels = [label_from_reason(reason) for reason in part["reason"]]
    outdated = data["outdated_references"] if "outdated_references" in data.columns else None
    has = [bool(outdated is not None and isinstance(outdated.iloc[row], list) and outdated.iloc[row])
           for row in part["row"]]
    counts = currency_counts(labels, has)
    rate = counts["outdated_rate"]
    return (
        f"answer_currency labels: current {counts['current']}, outdated {counts['outdated']}, "
        f"other {counts['other']}; outdated-answer rate "
        + (f"{rate:.4f} ({counts['outdated_among']} of {counts['with_outdated']} rows with outdated references)"
           if not math.isnan(rate) else "not measurable (no row has outdated references)")
    )


def add_parser(commands: Any) -> None:
    """Add this subcommand to the `commands` of `tempo_eval.cli.parser.build_parser`."""
    ev = commands.add_parser(
        "evaluate",
        help="score a dataset (CSV / TSV / JSONL / JSON / Parquet) with chosen metrics",
        description=(
            "Score every row of a dataset and write one result per (row, metric). Results are "
            "stored in the workspace as each row finishes: running the same command again "
            "resumes an interrupted run and recomputes nothing that is stored, except rows that "
            "failed (see --no-retry-failed)."
        ),
    )
    ev.add_argument("data", help="the dataset file")
    ev.add_argument("--metric", action="append", metavar="NAME",
                    help=f"a metric to compute (repeatable): {', '.join(DATASET_METRICS)}; or "
                         "turn_faithfulness alone, on a conversation file (DeepEval conversational "
                         "goldens / test cases, RAGAS multi-turn samples), one result per conversation")
    ev.add_argument("--metrics", metavar="A,B",
                    help="comma-separated metric names (the same as --metric A --metric B)")
    ev.add_argument("--ndcg-mode", choices=tuple(NDCG_MODES),
                    help="temporal_ndcg's mode instead of the automatic choice (gold when the dataset "
                         "has retrieved_ids and gold_ids, else focus times): gold, focus (focus times "
                         "of query and contexts) or judge (needs --verifier llm's judge)")
    ev.add_argument("--out", metavar="FILE",
                    help="also write the results to this file (.csv, .jsonl or .parquet); they are "
                         "stored in the workspace either way (`runs export` writes them later)")
    ev.add_argument("--mapping", action="append", metavar="CANONICAL=SOURCE",
                    help="map a source column to a canonical one, e.g. query=question (repeatable)")
    ev.add_argument("--k", type=int, help="cutoff for ranking metrics (temporal_ndcg, future_leak, "
                                          "stale_evidence, median_evidence_age, recency_ndcg), default 10")
    ev.add_argument("--max-age", type=float, metavar="DAYS",
                    help="stale_evidence: a document older than this at the as-of date is stale (default 365)")
    ev.add_argument("--half-life", type=float, metavar="DAYS",
                    help="recency_ndcg: a document's gain halves every DAYS of age (default 365)")
    add_doc_dates_option(ev, "the as-of ranking metrics: dates a retrieved document the row leaves undated, "
                             "and recency_ndcg's relevant documents the row did not retrieve, as compare does")
    ev.add_argument("--verifier", choices=("nli", "lexical", "llm"),
                    help="who verifies claims (temporal_faithfulness then checks claims instead of "
                         "year overlap; factual_correctness defaults to lexical)")
    ev.add_argument("--model", help="NLI checkpoint (hub id or directory) or the judge model for --verifier llm")
    ev.add_argument("--base-url", help="OpenAI-compatible endpoint for --verifier llm")
    ev.add_argument("--batch-size", type=int, metavar="N",
                    help="--verifier nli: (premise, claim) pairs per forward pass (default 8); the pairs "
                         "of all rows in flight (--concurrency) go through the model together, sorted "
                         "by length")
    ev.add_argument("--api-key-env", metavar="NAME",
                    help="environment variable holding the judge's API key (default OPENAI_API_KEY)")
    ev.add_argument("--reference-date", metavar="YYYY-MM-DD",
                    help="resolves 'last year' and the like in rows without a reference_date")
    ev.add_argument("--run-name", metavar="NAME",
                    help="a name for the run in the workspace. A run of the same dataset and settings is "
                         "resumed (its stored rows reused, 'resumed run #N' on stderr): without --run-name "
                         "the newest such run, with it the newest such run of that NAME; a NAME no such run "
                         "has makes a new run. A run is never renamed here (the Runs page renames runs)")
    ev.add_argument("--concurrency", type=int, default=4, help="rows evaluated at once (default 4)")
    ev.add_argument("--processes", type=int, metavar="N",
                    help="processes that score the rows of the offline metrics (the focus-time metrics, "
                         "without --verifier): N worker processes score batches of rows while this one "
                         "reads the file and stores the results; 1 scores in this process. Default: the "
                         "CPUs this process may use, at most 4. A dataset under 5,000 rows, and a run with "
                         "a judge or an NLI model, is scored in this process")
    ev.add_argument("--no-retry-failed", action="store_true",
                    help="when resuming, keep stored failures (row_error, judge_error, ...) instead "
                         "of computing them again")
    add_workspace_option(ev)
    add_user_option(ev)
    ev.add_argument("--max-input-mb", type=float, metavar="MB",
                    help="refuse a dataset larger than this (default: no limit for a dataset file, which "
                         "is read in batches; 128 for a conversation file, held in memory; or "
                         "$TEMPO_EVAL_MAX_INPUT_MB)")
    ev.add_argument("--timeout", type=float, metavar="SECONDS",
                    help="--verifier llm: seconds per judge request before it is retried (default 60)")
    ev.add_argument("--max-retries", type=int, metavar="N",
                    help="--verifier llm: retries of a failed judge request (default 4)")
    ev.add_argument("--deadline", type=float, metavar="SECONDS",
                    help="overall time limit: rows not finished by then are stored as NaN "
                         "judge_error (exit 1); running the same command again resumes them")
    ev.add_argument("--no-progress", action="store_true", help="do not draw the progress bar")
    ev.add_argument("--verbose", action="store_true",
                    help="also show the libraries' own progress bars (transformers' \"Loading weights\")")
    ev.add_argument("--fail-under", metavar="METRIC=T,...",
                    help="exit 1 when a metric's mean is below its threshold, e.g. "
                         "temporal_faithfulness=0.8,factual_correctness=0.7 (one line per metric below); "
                         "for metrics where higher is better")
    ev.add_argument("--fail-over", metavar="METRIC=T,...",
                    help="exit 1 when a metric's mean is above its threshold, e.g. future_leak=0.05,"
                         "stale_evidence=0.3: the gate of a metric where lower is better (docs/metrics.md). "
                         "median_evidence_age has no better direction: neither option takes it")
    ray_ = ev.add_argument_group(
        "distributed (--engine ray)",
        "Score on a Ray cluster: DATA may be a file, a directory of part files or an object-store "
        "URI (s3://...), --out is a directory (one Parquet file per block of rows; the same command "
        "resumes into it); each block also goes into the workspace as it finishes, as a run beside "
        "local runs (--run-name names it): no import step.",
    )
    ray_.add_argument("--engine", choices=("local", "ray"), default="local",
                      help="where rows are scored (default local)")
    ray_.add_argument("--address", help="the Ray cluster to join (default: a local one started here)")
    ray_.add_argument("--num-workers", type=int, default=RAY_DEFAULTS["num_workers"],
                      help="scoring actors (default 2)")
    ray_.add_argument("--gpus-per-worker", type=float, default=RAY_DEFAULTS["gpus_per_worker"],
                      help="GPUs per actor; the NLI verifier then runs on its GPU (default 0)")
    ray_.add_argument("--block-size", type=int, default=RAY_DEFAULTS["block_size"],
                      help="rows per output file, the unit of resume (default 1000)")
    ev.set_defaults(handler=cmd_evaluate)
