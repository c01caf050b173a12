"""The command line: `python -m tempo_eval evaluate ...` and `python -m tempo_eval compare ...`.

One module per subcommand (`evaluate`, `import_results`, `compare`, `import_scores`, `diff`,
`runs`), each with its `add_parser`; `parser` puts them together and `common` holds what they share.

    python -m tempo_eval evaluate data.csv --metrics temporal_faithfulness,temporal_ndcg --k 10 \\
        --out results.csv
    python -m tempo_eval evaluate s3://bucket/logs/ --metrics temporal_faithfulness --engine ray \\
        --num-workers 8 --out results/ && python -m tempo_eval import-results results/
    python -m tempo_eval compare bm25.run dense.run --qrels qrels.txt --metric ndcg@10 --test student

    python -m tempo_eval evaluate conversations.jsonl --metrics turn_faithfulness --out turns.csv
    python -m tempo_eval import ragas_results.csv          # foreign scores as an external run
    python -m tempo_eval runs                              # the stored runs with their means
    python -m tempo_eval diff 12 15 --fail-on-regression 1 # which rows got worse (see cli/diff.py)

Exit codes: 0 success; 1 a metric failed on every row with any failure code (row_error,
judge_error, verifier_error, ...), --deadline passed before every row was evaluated, or a metric's
mean is below its `--fail-under` threshold or above its `--fail-over` one (a lower-is-better metric's
gate; the results are still written and stored; one line per cause on stderr: "error: all N rows
failed: ...", "error: the deadline ...", "fail: METRIC MEAN < THRESHOLD"); 2 bad input or usage (one line "error: ..." on stderr, no traceback), including a
metric that needs a column the dataset lacks, an --out that names an input, and a damaged
workspace; 130 interrupted (every finished row is stored; the same command resumes).

API keys are read from the environment only (OPENAI_API_KEY, or the variable named by
--api-key-env), never from an argument value, and are never stored or logged.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence

from tempo_eval.cli.common import EXIT_INPUT
from tempo_eval.cli.evaluate import build_metrics
from tempo_eval.cli.parser import build_parser
from tempo_eval.common.safe_text import one_line

__all__ = ["EXIT_INPUT", "build_metrics", "build_parser", "main"]

# pandas and the engine are imported inside the commands, so `--help` answers at once.
logger = logging.getLogger("tempo_eval.cli")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code."""
    from tempo_eval.common.secrets import mask_log_handlers

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    mask_log_handlers(_secrets)  # no key in any log line, whatever variable it came from
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["job"]:  # the dashboard's worker (tempo_eval.cli.job); not listed in --help
        from tempo_eval.cli import job

        return job.main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    nul = _with_nul_byte(args)
    if nul is not None:  # refused before any path is touched: no file name holds a NUL byte
        print(f"error: {_masked(nul)}", file=sys.stderr)
        return EXIT_INPUT
    if getattr(args, "workspace", None):  # --workspace: the run store every command opens
        os.environ["TEMPO_EVAL_HOME"] = str(args.workspace)
    try:
        return args.handler(args)
    except (ValueError, OSError) as exc:  # InputError is a ValueError
        message = one_line(exc) or type(exc).__name__
        print(f"error: {_masked(message)}", file=sys.stderr)
        return EXIT_INPUT
    except RuntimeError as exc:
        from tempo_eval.store.db import WorkspaceError
        from tempo_eval.verify.base import VerifierUnavailable

        if not isinstance(exc, (VerifierUnavailable, WorkspaceError)):
            raise
        print(f"error: {_masked(one_line(exc))}", file=sys.stderr)
        return EXIT_INPUT


def _with_nul_byte(args: object) -> str | None:
    """The refusal of the first argument holding a NUL byte (a path, a name), None when none does."""
    for name, value in vars(args).items():
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, str) and "\x00" in item:
                return (f"{item!r} (given as {name.replace('_', '-')}) contains a NUL byte, which no file "
                        "name holds; give it without the NUL byte")
    return None


def _secrets() -> list[str]:
    from tempo_eval.common.secrets import secret_values

    return secret_values()


def _masked(text: str) -> str:
    from tempo_eval.common.secrets import mask

    return mask(text, _secrets()) or text
