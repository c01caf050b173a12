"""`tempo-eval import`: store a RAGAS results file or a DeepEval test run as an external run.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from tempo_eval.cli.common import EXIT_OK, acting_user, add_user_option, add_workspace_option
from tempo_eval.common.safe_text import one_line


def cmd_import(args: argparse.Namespace) -> int:
    from tempo_eval.io.foreign import import_foreign_results, load_foreign_results
    from tempo_eval.store.runs import RunStore

    foreign = load_foreign_results(args.results)
    for warning in foreign.dataset.warnings:
        print(f"warning: {one_line(warning)}", file=sys.stderr)
    store = RunStore()
    run_id = import_foreign_results(foreign, store, run_name=args.run_name, user=acting_user(args))
    dataset_id = store.run_info(run_id)["dataset_id"]
    print(
        f"run {run_id}: {foreign.tool} scores of {len(foreign.dataset)} rows imported as an external run "
        f"of dataset {dataset_id} ({one_line(foreign.dataset.name)})",
        file=sys.stderr,
    )
    for metric, summary in store.run_summary(run_id)["metrics"].items():
        mean = "no score" if math.isnan(summary["mean"]) else f"{summary['mean']:.4f}"
        print(f"{one_line(metric)}: {mean}; scored {summary['n_measurable']}/{summary['n']}", file=sys.stderr)
    return EXIT_OK


def add_parser(commands: Any) -> None:
    """Add this subcommand to the `commands` of `tempo_eval.cli.parser.build_parser`."""
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
    add_workspace_option(imp)
    add_user_option(imp)
    imp.set_defaults(handler=cmd_import)
