"""`tempo-eval import-results`: load the output of an --engine ray run into the workspace.

An --engine ray run writes its blocks into the driver's workspace as they finish; this command
is for an output directory brought from elsewhere (another machine's driver, a copy), or made
with `evaluate_ray(..., store=False)`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from tempo_eval.cli.common import (
    EXIT_OK,
    CLIError,
    acting_user,
    add_user_option,
    add_workspace_option,
)
from tempo_eval.common.safe_text import one_line


def cmd_import_results(args: argparse.Namespace) -> int:
    from tempo_eval.engine.distributed.output import import_results
    from tempo_eval.store.db import describe_location
    from tempo_eval.store.runs import RunStore

    if not Path(args.dir).is_dir():
        raise CLIError(f"{args.dir!r} is not a directory; expected the --out directory of an --engine ray run")
    store = RunStore()
    run_id = import_results(args.dir, store=store, name=args.name, user=acting_user(args))
    info = store.run_summary(run_id)
    counts = ", ".join(f"{one_line(m)}: {c['n']}" for m, c in info["metrics"].items())
    print(f"run {run_id} ({one_line(info['name'])}, {info['status']}): imported {counts or 'no results'} "
          f"into {describe_location()}", file=sys.stderr)
    return EXIT_OK


def add_parser(commands: Any) -> None:
    """Add this subcommand to the `commands` of `tempo_eval.cli.parser.build_parser`."""
    imp = commands.add_parser(
        "import-results",
        help="load the output of an --engine ray run into the workspace as a normal run",
        description=(
            "Store a Ray run's dataset and per-row results (scores, reasons, claims) in the "
            "workspace, as a new run: it shows on the dashboard's Runs, Results, Compare and Claims "
            "pages. An unfinished output is imported as a cancelled run. An --engine ray run is in "
            "its driver's workspace already; this is for an output directory from elsewhere."
        ),
    )
    imp.add_argument("dir", help="the --out directory of the Ray run")
    imp.add_argument("--name", "--run-name", dest="name", help="the run's name (default 'ray: DIR')")
    add_workspace_option(imp)
    add_user_option(imp)
    imp.set_defaults(handler=cmd_import_results)
