"""`tempo-eval runs`: the stored runs, as the dashboard's Runs page lists and manages them.

    tempo-eval runs [list] [--format text|json] [--dataset ID] [--user NAME | --mine]
                                                          # id, name, dataset, metrics, verifier,
                                                          # status, rows, created, by, means
    tempo-eval runs show RUN [--format text|json]         # settings, means with CI, NaN reasons
    tempo-eval runs export RUN --out results.csv          # per-row results (.csv, .jsonl, .parquet)
    tempo-eval runs delete RUN --yes                      # with its results and claims

RUN is a run's id (12 or #12) or its name (name:NAME for the name alone: "name:1" is the run named
"1"); a number that is both one run's id and another run's name is refused, naming both. Exit 2 for an unknown run (one line naming it), a delete without
--yes, or a run being evaluated by a live process.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from tempo_eval.cli.common import (
    EXIT_OK,
    RUN_REF_HELP,
    CLIError,
    add_workspace_option,
    check_output,
    print_table,
    run_id_of,
)
from tempo_eval.common.safe_text import json_safe
from tempo_eval.common.safe_text import one_line as _one_line


def add_parser(commands: Any) -> None:
    """Add this subcommand to the `commands` of `tempo_eval.cli.parser.build_parser`."""
    runs = commands.add_parser(
        "runs",
        help="list, show, export or delete the stored runs",
        description="The stored runs, as the dashboard's Runs page lists them; show, export or delete one.",
    )
    _list_options(runs)
    runs.set_defaults(handler=cmd_runs_list)
    actions = runs.add_subparsers(dest="action", metavar="ACTION")

    listing = actions.add_parser("list", help="the stored runs (the same as 'runs' alone)")
    _list_options(listing)
    listing.set_defaults(handler=cmd_runs_list)

    show = actions.add_parser("show", help="one run: settings, means with their CI, NaN reasons")
    show.add_argument("run", help=f"the run: {RUN_REF_HELP}")
    show.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    add_workspace_option(show)
    show.set_defaults(handler=cmd_runs_show)

    export = actions.add_parser("export", help="write one run's per-row results to a file")
    export.add_argument("run", help=f"the run: {RUN_REF_HELP}")
    export.add_argument("--out", required=True, metavar="FILE", help="where to write: .csv, .jsonl or .parquet")
    export.add_argument("--claims", action="store_true", help="write the run's verified claims instead")
    add_workspace_option(export)
    export.set_defaults(handler=cmd_runs_export)

    delete = actions.add_parser("delete", help="delete one run with its results and claims")
    delete.add_argument("run", help=f"the run: {RUN_REF_HELP}")
    delete.add_argument("--yes", action="store_true", help="delete without asking (required when not on a terminal)")
    add_workspace_option(delete)
    delete.set_defaults(handler=cmd_runs_delete)


def _list_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    parser.add_argument("--dataset", type=int, metavar="ID", help="only the runs of this dataset")
    made = parser.add_mutually_exclusive_group()
    made.add_argument("--user", metavar="NAME",
                      help="only the runs NAME made ('unknown': the runs made before users were recorded)")
    made.add_argument("--mine", action="store_true", help="only the runs the operating-system user made")
    add_workspace_option(parser)


def _open(args: argparse.Namespace, *, out: str | None = None) -> Any:
    """The run store of --workspace; an output file `out` is checked first (`check_output`)."""
    from tempo_eval.store.runs import RunStore

    if out is not None:
        check_output(out, "--out")
    return RunStore()


def _records(store: Any, runs: Any) -> list[dict[str, Any]]:
    from tempo_eval.compare.leaderboard import leaderboard, run_records, run_setup

    ids = [int(i) for i in runs["id"]]
    setups = {run_id: run_setup(config) for run_id, config in store.run_configs(ids).items()}
    return run_records(runs, leaderboard(store.run_scores(ids)), setups)


def _mean_text(summary: dict[str, Any] | None) -> str:
    if not summary or summary["mean"] is None:
        return "—"
    return f"{summary['mean']:.3f}"


def _made_by(args: argparse.Namespace) -> str | None:
    """Whose runs `runs list` shows: --user (as shown: 'unknown' for none), the operating-system
    user with --mine, else None (everyone's)."""
    from tempo_eval.common.identity import os_user, shown_user, user_name

    if args.mine:
        return os_user()
    if args.user is None:
        return None
    if user_name(args.user) is None:
        raise CLIError("--user must name a user; got an empty name")
    return shown_user(user_name(args.user))


def cmd_runs_list(args: argparse.Namespace) -> int:
    from tempo_eval.common.identity import shown_user

    whose = _made_by(args)
    store = _open(args)
    runs = store.list_runs(args.dataset)
    if whose is not None:
        runs = runs[[shown_user(user) == whose for user in runs["created_by"]]]
    records = _records(store, runs)
    if args.format == "json":
        sys.stdout.write(json_safe(json.dumps(records, ensure_ascii=False, indent=2)) + "\n")
        return EXIT_OK
    if not records:
        print("No run stored" + (f" for dataset {args.dataset}" if args.dataset is not None else "")
              + (f" made by {_one_line(whose)}" if whose is not None else "") + ".")
        return EXIT_OK
    header = ["id", "name", "dataset", "status", "rows", "created", "by", "verifier", "means"]
    lines = [header]
    for r in records:
        means = ", ".join(f"{_one_line(m)} {_mean_text(s)} ({s['n_measurable']}/{s['n_total']})" for m, s in r["means"].items())
        lines.append([str(r["id"]), _one_line(r["name"]), _one_line(r["dataset"]), r["status"], str(r["rows"]),
                      str(r["created"]), _one_line(shown_user(r["created_by"])), _one_line(r["verifier"] or "—"),
                      means or "—"])
    print_table(lines)
    return EXIT_OK


def cmd_runs_show(args: argparse.Namespace) -> int:
    from tempo_eval.compare.leaderboard import flatten_config

    store = _open(args)
    run_id = run_id_of(store, args.run)
    runs = store.list_runs()
    record = _records(store, runs[runs["id"] == run_id])[0]
    info = store.run_info(run_id)
    record.update(note=info["note"], tags=info["tags"], usage=info["usage"], error=info["error"],
                  finished=info["finished_at"], settings=flatten_config(info["config"]))
    if args.format == "json":
        sys.stdout.write(json_safe(json.dumps(record, ensure_ascii=False, indent=2, default=str)) + "\n")
        return EXIT_OK
    print(f"run #{record['id']} {_one_line(record['name'])}: {record['status']}, dataset #{record['dataset_id']} "
          f"{_one_line(record['dataset'])}, {record['rows']} rows, created {record['created']} "
          f"by {_one_line(record['created_by'] or 'unknown')}")
    for label in ("verifier", "note", "error"):
        if record[label]:
            print(f"{label}: {_one_line(record[label])}")
    if record["tags"]:
        print("tags: " + ", ".join(map(_one_line, record["tags"])))
    for metric, s in record["means"].items():
        ci = "" if s["ci_low"] is None else f", 95% CI {s['ci_low']:.3f}–{s['ci_high']:.3f}"
        reasons = ", ".join(f"{_one_line(code)}: {n}" for code, n in sorted(s["nan_reasons"].items()))
        print(f"{_one_line(metric)}: mean {_mean_text(s)}{ci}, {s['n_measurable']}/{s['n_total']} measurable"
              + (f"; NaN: {reasons}" if reasons else ""))
    print("settings:")
    for key, value in record["settings"].items():
        print(f"  {_one_line(key)} = {_one_line(json.dumps(value, default=str) if not isinstance(value, str) else value)}")
    return EXIT_OK


def cmd_runs_export(args: argparse.Namespace) -> int:
    from tempo_eval.io.export import write_frame

    store = _open(args, out=args.out)
    run_id = run_id_of(store, args.run)
    frame = store.claims_frame(run_id) if args.claims else store.results_frame(run_id)
    if args.claims:
        frame = frame.assign(probabilities=[None if p is None else json.dumps(p) for p in frame["probabilities"]])
    kind = write_frame(frame, args.out)
    print(f"run {run_id}: {len(frame)} {'claims' if args.claims else 'results'} written to "
          f"{_one_line(os.path.abspath(args.out))} ({kind})", file=sys.stderr)
    return EXIT_OK


def cmd_runs_delete(args: argparse.Namespace) -> int:
    store = _open(args)
    run_id = run_id_of(store, args.run)
    info = store.run_info(run_id)
    counts = store.run_dependents(run_id)
    question = (f"Delete run #{run_id} {_one_line(info['name'])} with its {counts['results']} results and "
                f"{counts['claims']} claims? Cached verdicts stay.")
    if not args.yes:
        if not sys.stdin.isatty():
            raise CLIError(f"{question} Not deleted: add --yes to delete without asking")
        if input(question + " [y/N] ").strip().lower() not in ("y", "yes"):
            print("Not deleted.", file=sys.stderr)
            return EXIT_OK
    store.delete_run(run_id)
    print(f"Deleted run #{run_id} ({counts['results']} results, {counts['claims']} claims).", file=sys.stderr)
    return EXIT_OK

