"""The command line: `python -m tempo_eval evaluate ...` and `python -m tempo_eval compare ...`.

    python -m tempo_eval evaluate data.csv --metrics temporal_faithfulness,temporal_ndcg --k 10 \\
        --out results.csv
    python -m tempo_eval evaluate s3://bucket/logs/ --metrics temporal_faithfulness --engine ray \\
        --num-workers 8 --out results/ && python -m tempo_eval import-results results/
    python -m tempo_eval compare bm25.run dense.run --qrels qrels.txt --metric ndcg@10 --test student

    python -m tempo_eval evaluate conversations.jsonl --metrics turn_faithfulness --out turns.csv
    python -m tempo_eval import ragas_results.csv          # foreign scores as an external run

Exit codes: 0 success; 1 a metric failed on every row with any failure code (row_error,
judge_error, verifier_error, ...), --deadline passed before every row was evaluated, or a metric's
mean is below its `--fail-under` threshold (the results are still written and stored; one line per
cause on stderr: "error: all N rows failed: ...", "error: the deadline ...", "fail: METRIC MEAN <
THRESHOLD"); 2 bad input or usage (one line "error: ..." on stderr, no traceback), including a
metric that needs a column the dataset lacks, an --out that names an input, and a damaged
workspace; 130 interrupted (every finished row is stored; the same command resumes).

API keys are read from the environment only (OPENAI_API_KEY, or the variable named by
--api-key-env), never from an argument value, and are never stored or logged.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import logging
import math
import os
import re
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    import pandas as pd

# pandas and the engine are imported inside the commands, so `--help` answers at once.
logger = logging.getLogger("tempo_eval.cli")

#: the module defining each metric the CLI can build, by metric name
METRIC_MODULES = {
    "temporal_faithfulness": "tempo_eval.metrics.temporal_faithfulness",
    "temporal_ndcg": "tempo_eval.metrics.temporal_ndcg",
    "factual_correctness": "tempo_eval.metrics.factual_correctness",
    "turn_faithfulness": "tempo_eval.metrics.turn_faithfulness",
}
#: the metrics `evaluate` offers on dataset rows; turn_faithfulness runs on a conversation file
#: (`load_conversations`), one conversation per row
DATASET_METRICS = tuple(name for name in METRIC_MODULES if name != "turn_faithfulness")
CONVERSATION_METRICS = ("turn_faithfulness",)

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INPUT = 2
EXIT_INTERRUPTED = 130


class CLIError(ValueError):
    """A usage problem found after argument parsing (reported like an input error)."""


# ---- progress -------------------------------------------------------------------------------

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


# ---- evaluate -------------------------------------------------------------------------------

def parse_mapping(items: Sequence[str]) -> dict[str, str]:
    """["query=question", ...] -> {"query": "question"} (canonical column = source column)."""
    mapping: dict[str, str] = {}
    for item in items:
        canonical, sep, source = item.partition("=")
        if not sep or not canonical.strip() or not source.strip():
            raise CLIError(f"--mapping {item!r}: expected CANONICAL=SOURCE, e.g. query=question")
        mapping[canonical.strip()] = source.strip()
    return mapping


def build_metrics(names: Sequence[str], *, k: int | None = None, verifier: Any = None) -> list[Any]:
    """Metric instances by name. `k` goes to metrics that take a cutoff, `verifier` to metrics that
    verify claims (temporal_faithfulness then runs in its verifier mode)."""
    import importlib

    from tempo_eval.metrics.base import METRICS

    metrics = []
    for name in names:
        if name not in METRIC_MODULES:
            raise CLIError(f"unknown metric {name!r}; available: {', '.join(DATASET_METRICS)}")
        importlib.import_module(METRIC_MODULES[name])
        cls = METRICS[name]
        accepted = inspect.signature(cls).parameters
        settings: dict[str, Any] = {}
        if k is not None and "k" in accepted:
            settings["k"] = k
        if verifier is not None and "verifier" in accepted:
            settings["verifier"] = verifier
        metrics.append(cls(**settings))
    if k is not None and not any("k" in inspect.signature(type(m)).parameters for m in metrics):
        raise CLIError("--k was given but none of the chosen metrics takes a cutoff")
    return metrics


def parse_fail_under(text: str | None) -> dict[str, float]:
    """"temporal_faithfulness=0.8,factual_correctness=0.7" -> {metric: threshold}."""
    if not text:
        return {}
    thresholds: dict[str, float] = {}
    for item in text.split(","):
        if not item.strip():
            continue
        metric, sep, value = item.partition("=")
        try:
            threshold = float(value)
        except ValueError:
            threshold = math.nan
        if not sep or not metric.strip() or math.isnan(threshold):
            raise CLIError(f"--fail-under {item.strip()!r}: expected METRIC=THRESHOLD, e.g. temporal_faithfulness=0.8")
        thresholds[metric.strip()] = threshold
    return thresholds


def below_thresholds(aggregate: pd.DataFrame, thresholds: dict[str, float]) -> list[str]:
    """One line per metric whose mean is below its threshold (or has no measurable row)."""
    lines = []
    for metric, threshold in thresholds.items():
        mean = float(aggregate.loc[metric, "mean"]) if metric in aggregate.index else math.nan
        if math.isnan(mean):
            lines.append(f"fail: {metric} has no measurable row (threshold {threshold:g})")
        elif mean < threshold:
            lines.append(f"fail: {metric} {mean:.4f} < {threshold:g}")
    return lines


def _max_input_bytes(args: argparse.Namespace) -> int | None:
    """--max-input-mb in bytes (None: the default limit); a value that is not positive is refused."""
    if args.max_input_mb is None:
        return None
    if not args.max_input_mb > 0:
        raise CLIError(f"--max-input-mb must be a positive number, got {args.max_input_mb:g}")
    return int(args.max_input_mb * 10**6)


def _api_key(env_name: str | None) -> str | None:
    name = env_name or "OPENAI_API_KEY"
    key = os.environ.get(name)
    if env_name and not key:
        raise CLIError(f"--api-key-env {env_name}: that environment variable is not set")
    return key


def cmd_evaluate(args: argparse.Namespace) -> int:
    with _library_progress_bars(not args.no_progress, args.verifier):
        return _evaluate(args)


def _evaluate(args: argparse.Namespace) -> int:
    from tempo_eval.io.conversation import load_conversations
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.io.export import OUTPUT_FORMATS, write_frame
    from tempo_eval.runner import evaluate
    from tempo_eval.store.runs import RunStore

    if args.workspace:
        os.environ["TEMPO_EVAL_HOME"] = str(args.workspace)
    max_bytes = _max_input_bytes(args)
    names = [n.strip() for n in args.metrics.split(",") if n.strip()]
    if not names:
        raise CLIError("--metrics needs at least one metric name")
    on_ray = args.engine == "ray"
    if not on_ray and re.match(r"[A-Za-z][A-Za-z0-9+.-]+://", args.data):
        raise CLIError(f"{args.data.split('?')[0]!r}: object-store URIs are read by the Ray engine; add "
                       "--engine ray --out DIR (or copy the file here first)")
    _check_engine_options(args)
    if not on_ray and Path(args.out).suffix.lower() not in OUTPUT_FORMATS:
        raise CLIError(f"--out {args.out!r}: the extension must be one of {', '.join(OUTPUT_FORMATS)}")
    if args.k is not None and args.k < 1:
        raise CLIError(f"--k must be a positive integer, got {args.k}")
    thresholds = parse_fail_under(args.fail_under)
    unknown = [metric for metric in thresholds if metric not in names]
    if unknown:
        raise CLIError(f"--fail-under names {', '.join(unknown)}, which --metrics does not compute ({', '.join(names)})")
    _check_out_is_not_an_input(Path(args.out), [Path(args.data)])
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
            dataset = load_dataset(args.data, parse_mapping(args.mapping or []), max_bytes=max_bytes)
        except ValueError as error:
            raise CLIError(f"{error}{_conversation_hint(args.data, max_bytes)}") from None
    if not on_ray:
        for warning in dataset.warnings:
            print(f"warning: {warning}", file=sys.stderr)
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
        verifier = make_verifier(args.verifier, **options)
        # Fail before the first row, not once per row, when the model cannot be loaded.
        inner = getattr(verifier, "verifier", verifier)
        if hasattr(inner, "check_available"):
            available, why = inner.check_available()
            if not available:
                raise CLIError(why)
    elif args.model or args.base_url:
        raise CLIError("--model and --base-url need --verifier")
    elif args.timeout is not None or args.max_retries is not None:
        raise CLIError("--timeout and --max-retries apply to the judge: they need --verifier llm")
    metrics = build_metrics(names, k=args.k, verifier=verifier)
    if on_ray:
        return _evaluate_on_ray(args, metrics, thresholds)

    store = RunStore()
    bar = None if args.no_progress else ProgressBar(sys.stderr)
    try:
        result = evaluate(
            dataset, metrics, store=store, run_name=args.run_name, reference_date=args.reference_date,
            progress=bar, max_concurrency=args.concurrency, retry_failed=not args.no_retry_failed,
            deadline=args.deadline,
        )
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()  # end the bar's line before the message
        print("interrupted: finished rows are stored; run the same command again to resume",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if bar is not None:
            bar.close()

    write_frame(result.frame, args.out)
    print(
        f"run {result.run_id}: {result.n_rows} rows, {result.computed} results computed, "
        f"{result.reused} reused -> {args.out}",
        file=sys.stderr,
    )
    aggregate = result.aggregate()
    print(_summary(aggregate), file=sys.stderr)
    if result.deadline_rows:  # first: it explains the failures it caused
        print(
            f"error: the deadline of {args.deadline:g} s passed before {result.deadline_rows} of "
            f"{result.n_rows} rows were evaluated (stored as NaN judge_error); run the same "
            "command again to resume",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return _exit_code(result.frame, aggregate, thresholds)


def _exit_code(frame: pd.DataFrame, aggregate: pd.DataFrame, thresholds: dict[str, float]) -> int:
    """EXIT_FAILED when a metric failed on every row or is below its --fail-under threshold (one
    line per cause on stderr), else EXIT_OK; the same for both engines."""
    failure = _all_rows_failed(frame)
    below = below_thresholds(aggregate, thresholds)
    for line in below:
        print(line, file=sys.stderr)
    if failure is not None:
        print(f"error: {failure}", file=sys.stderr)
    return EXIT_FAILED if failure is not None or below else EXIT_OK


def _check_engine_options(args: argparse.Namespace) -> None:
    from tempo_eval.io.export import OUTPUT_FORMATS

    if args.engine == "ray":
        if Path(args.out).suffix.lower() in OUTPUT_FORMATS:
            raise CLIError(f"--out {args.out!r}: with --engine ray, --out is a directory (one Parquet file "
                           "per block of rows), not a file")
        if args.run_name:
            raise CLIError("--run-name: with --engine ray, name the run when importing it: "
                           "import-results DIR --name NAME")
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
        return
    for option in ("address", "num_workers", "gpus_per_worker", "block_size"):
        if getattr(args, option) != RAY_DEFAULTS[option]:
            raise CLIError(f"--{option.replace('_', '-')} needs --engine ray")


#: the Ray engine's option defaults (given with the local engine, they are refused)
RAY_DEFAULTS = {"address": None, "num_workers": 2, "gpus_per_worker": 0.0, "block_size": 1000}


def _evaluate_on_ray(args: argparse.Namespace, metrics: list[Any], thresholds: dict[str, float]) -> int:
    from tempo_eval.distributed.engine import evaluate_ray

    bar = None if args.no_progress else ProgressBar(sys.stderr)
    try:
        run = evaluate_ray(
            args.data, metrics, out=args.out, mapping=parse_mapping(args.mapping or []),
            reference_date=args.reference_date, address=args.address, num_workers=args.num_workers,
            gpus_per_worker=args.gpus_per_worker, block_size=args.block_size,
            max_concurrency=args.concurrency, retry_failed=not args.no_retry_failed, progress=bar,
        )
    except KeyboardInterrupt:
        if bar is not None:
            bar.close()
        print(f"interrupted: finished blocks are in {args.out}; run the same command again to resume",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if bar is not None:
            bar.close()
    for warning in run.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(
        f"{run.n_rows} rows in {run.n_blocks} blocks: {run.computed_blocks} computed, "
        f"{run.skipped_blocks} already done"
        f"{f' ({run.retried_rows} rows with failed results computed again)' if run.retried_rows else ''}"
        f" -> {args.out}\n"
        f"load it into the workspace with: python -m tempo_eval import-results {args.out}",
        file=sys.stderr,
    )
    aggregate = run.aggregate()
    print(_summary(aggregate), file=sys.stderr)
    return _exit_code(run.frame, aggregate, thresholds)


def cmd_import_results(args: argparse.Namespace) -> int:
    from tempo_eval.distributed.output import import_results
    from tempo_eval.store.db import default_db_path
    from tempo_eval.store.runs import RunStore

    if args.workspace:
        os.environ["TEMPO_EVAL_HOME"] = str(args.workspace)
    if not Path(args.dir).is_dir():
        raise CLIError(f"{args.dir!r} is not a directory; expected the --out directory of an --engine ray run")
    store = RunStore()
    run_id = import_results(args.dir, store=store, name=args.name)
    info = store.run_summary(run_id)
    counts = ", ".join(f"{m}: {c['n']}" for m, c in info["metrics"].items())
    print(f"run {run_id} ({info['name']}, {info['status']}): imported {counts or 'no results'} "
          f"into {default_db_path()}", file=sys.stderr)
    return EXIT_OK


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
    from tempo_eval.store.runs import is_retryable

    for metric, part in frame.groupby("metric", sort=False):
        if len(part) and part["score"].isna().all() and all(map(is_retryable, part["reason_code"])):
            reason = " ".join(str(part["reason"].iloc[0]).split())
            return f"all {len(part)} rows failed: {metric}: {reason}"
    return None


def _check_out_is_not_an_input(out: Path, inputs: Sequence[Path], *, workspace: bool = True) -> None:
    """Refuse an --out that is one of the inputs (or, with `workspace`, the workspace database):
    writing the results would destroy it."""
    from tempo_eval.store.db import default_db_path

    for source in [*inputs, *([default_db_path()] if workspace else [])]:
        same = (
            os.path.samefile(out, source) if out.exists() and source.exists()
            else out.resolve() == source.resolve()
        )
        if same:
            raise CLIError(
                f"--out {str(out)!r} is the input {str(source)!r}; writing the results there would "
                "overwrite it: choose another --out file"
            )


@contextlib.contextmanager
def _library_progress_bars(enabled: bool, verifier: str | None) -> Iterator[None]:
    """With `enabled` False and a model-backed verifier (nli, or lexical with its MiniLM),
    transformers draws no "Loading weights" bar either; its setting is put back afterwards (it is
    process-wide)."""
    if enabled or verifier not in ("nli", "lexical"):
        yield
        return
    from transformers.utils import logging as transformers_logging  # nli imports it anyway

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


# ---- compare --------------------------------------------------------------------------------

def cmd_compare(args: argparse.Namespace) -> int:
    from tempo_eval.compare import compare_trec, parse_trec_metric
    from tempo_eval.io.export import to_csv_text
    from tempo_eval.io.trec import load_qrels, load_run

    metrics = args.metric or ["ndcg@10"]
    for metric in metrics:
        parse_trec_metric(metric)
    if args.depth is not None and args.depth < 1:
        raise CLIError(f"--depth must be a positive integer, got {args.depth}")
    max_bytes = _max_input_bytes(args)
    if args.out:  # compare does not use the workspace: only its inputs are guarded
        _check_out_is_not_an_input(Path(args.out), [Path(p) for p in [*args.runs, args.qrels]], workspace=False)
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
    if args.format == "latex":
        text = report.to_latex()
    elif args.format == "csv":
        text = to_csv_text(report.to_dataframe())
    else:
        text = report.to_markdown()
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return EXIT_OK


# ---- import ---------------------------------------------------------------------------------

def cmd_import(args: argparse.Namespace) -> int:
    from tempo_eval.io.foreign import import_foreign_results, load_foreign_results
    from tempo_eval.store.runs import RunStore

    if args.workspace:
        os.environ["TEMPO_EVAL_HOME"] = str(args.workspace)
    foreign = load_foreign_results(args.results)
    for warning in foreign.dataset.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    store = RunStore()
    run_id = import_foreign_results(foreign, store, run_name=args.run_name)
    dataset_id = store.run_info(run_id)["dataset_id"]
    print(
        f"run {run_id}: {foreign.tool} scores of {len(foreign.dataset)} rows imported as an external run "
        f"of dataset {dataset_id} ({foreign.dataset.name})",
        file=sys.stderr,
    )
    for metric, summary in store.run_summary(run_id)["metrics"].items():
        mean = "no score" if math.isnan(summary["mean"]) else f"{summary['mean']:.4f}"
        print(f"{metric}: {mean}; scored {summary['n_measurable']}/{summary['n']}", file=sys.stderr)
    return EXIT_OK


# ---- the parser -----------------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit code 2)."""

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
    ev.add_argument("--metrics", required=True,
                    help=f"comma-separated metric names: {', '.join(DATASET_METRICS)}; or "
                         "turn_faithfulness alone, on a conversation file (DeepEval conversational "
                         "goldens / test cases, RAGAS multi-turn samples), one result per conversation")
    ev.add_argument("--out", required=True, metavar="FILE",
                    help="where to write results; .csv, .jsonl or .parquet")
    ev.add_argument("--mapping", action="append", metavar="CANONICAL=SOURCE",
                    help="map a source column to a canonical one, e.g. query=question (repeatable)")
    ev.add_argument("--k", type=int, help="cutoff for ranking metrics (temporal_ndcg), default 10")
    ev.add_argument("--verifier", choices=("nli", "lexical", "llm"),
                    help="who verifies claims (temporal_faithfulness then checks claims instead of "
                         "year overlap; factual_correctness defaults to lexical)")
    ev.add_argument("--model", help="NLI checkpoint (hub id or directory) or the judge model for --verifier llm")
    ev.add_argument("--base-url", help="OpenAI-compatible endpoint for --verifier llm")
    ev.add_argument("--api-key-env", metavar="NAME",
                    help="environment variable holding the judge's API key (default OPENAI_API_KEY)")
    ev.add_argument("--reference-date", metavar="YYYY-MM-DD",
                    help="resolves 'last year' and the like in rows without a reference_date")
    ev.add_argument("--run-name", help="a name for the run in the workspace")
    ev.add_argument("--concurrency", type=int, default=4, help="rows evaluated at once (default 4)")
    ev.add_argument("--no-retry-failed", action="store_true",
                    help="when resuming, keep stored failures (row_error, judge_error, ...) instead "
                         "of computing them again")
    ev.add_argument("--workspace", metavar="DIR",
                    help="workspace directory holding the run store (default $TEMPO_EVAL_HOME or ~/.tempo_eval)")
    ev.add_argument("--max-input-mb", type=float, metavar="MB",
                    help="refuse a dataset larger than this (default 128, or $TEMPO_EVAL_MAX_INPUT_MB): "
                         "it is held in memory, about 10x its size")
    ev.add_argument("--timeout", type=float, metavar="SECONDS",
                    help="--verifier llm: seconds per judge request before it is retried (default 60)")
    ev.add_argument("--max-retries", type=int, metavar="N",
                    help="--verifier llm: retries of a failed judge request (default 4)")
    ev.add_argument("--deadline", type=float, metavar="SECONDS",
                    help="overall time limit: rows not finished by then are stored as NaN "
                         "judge_error (exit 1); running the same command again resumes them")
    ev.add_argument("--no-progress", action="store_true",
                    help="do not draw progress bars (ours, and the model-loading ones of transformers)")
    ev.add_argument("--fail-under", metavar="METRIC=T,...",
                    help="exit 1 when a metric's mean is below its threshold, e.g. "
                         "temporal_faithfulness=0.8,factual_correctness=0.7 (one line per metric below)")
    ray_ = ev.add_argument_group(
        "distributed (--engine ray)",
        "Score on a Ray cluster: DATA may be a file, a directory of part files or an object-store "
        "URI (s3://...), --out is a directory (one Parquet file per block of rows; the same command "
        "resumes into it); bring the results into the workspace with import-results.",
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

    imp = commands.add_parser(
        "import-results",
        help="load the output of an --engine ray run into the workspace as a normal run",
        description=(
            "Store a Ray run's dataset and per-row results (scores, reasons, claims) in the "
            "workspace, as a new run: it shows on the dashboard's Runs, Results, Compare and Claims "
            "pages. An unfinished output is imported as a cancelled run."
        ),
    )
    imp.add_argument("dir", help="the --out directory of the Ray run")
    imp.add_argument("--name", "--run-name", dest="name", help="the run's name (default 'ray: DIR')")
    imp.add_argument("--workspace", metavar="DIR",
                     help="workspace directory holding the run store (default $TEMPO_EVAL_HOME or ~/.tempo_eval)")
    imp.set_defaults(handler=cmd_import_results)

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
    cmp_.add_argument("--format", choices=("markdown", "latex", "csv"), default="markdown",
                      help="output format (default markdown)")
    cmp_.add_argument("--out", metavar="FILE", help="write the table here instead of stdout")
    cmp_.add_argument("--max-input-mb", type=float, metavar="MB",
                      help="refuse a run or qrels file larger than this (default 128, or "
                           "$TEMPO_EVAL_MAX_INPUT_MB)")
    cmp_.set_defaults(handler=cmd_compare)

    imp = commands.add_parser(
        "import",
        help="store a RAGAS results file or a DeepEval test run as an external run",
        description=(
            "Read a RAGAS EvaluationResult.to_pandas() file (CSV / JSONL / JSON / Parquet, one "
            "numeric column per metric) or a DeepEval test run JSON (testCases[].metricsData[]) and "
            "store its scores as a finished run of the dataset it describes, with metric names "
            "such as ragas:faithfulness and deepeval:Faithfulness. Evaluating the same file with "
            "our metrics uses the same stored dataset, so the dashboard's Agreement page can set "
            "the two side by side."
        ),
    )
    imp.add_argument("results", help="the results file")
    imp.add_argument("--run-name", help="a name for the run (default: 'TOOL: FILE')")
    imp.add_argument("--workspace", metavar="DIR",
                     help="workspace directory holding the run store (default $TEMPO_EVAL_HOME or ~/.tempo_eval)")
    imp.set_defaults(handler=cmd_import)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    from tempo_eval._secrets import mask_log_handlers

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    mask_log_handlers(_secrets)  # no key in any log line, whatever variable it came from
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.handler(args)
    except (ValueError, OSError) as exc:  # InputError is a ValueError
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"error: {_masked(message)}", file=sys.stderr)
        return EXIT_INPUT
    except RuntimeError as exc:
        from tempo_eval.store.db import WorkspaceError
        from tempo_eval.verify.base import VerifierUnavailable

        if not isinstance(exc, (VerifierUnavailable, WorkspaceError)):
            raise
        print(f"error: {_masked(' '.join(str(exc).split()))}", file=sys.stderr)
        return EXIT_INPUT


def _secrets() -> list[str]:
    from tempo_eval.store.runs import secret_values  # pandas: not imported for --help

    return secret_values()


def _masked(text: str) -> str:
    from tempo_eval._secrets import mask

    return mask(text, _secrets()) or text
