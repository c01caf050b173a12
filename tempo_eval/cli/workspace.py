"""`tempo-eval workspace copy --to URL`: copy the whole workspace database into another one.

    TEMPO_EVAL_HOME=~/ws tempo-eval workspace copy --to postgresql://tempo@db.internal/tempo_eval
    tempo-eval workspace copy --from postgresql://tempo@db/tempo_eval --to backup.sqlite

The source is the current workspace (`TEMPO_EVAL_DB`, else the SQLite file of `--workspace` /
`TEMPO_EVAL_HOME`), or `--from`. The target (a postgresql:// URL or a SQLite file) gets the
newest schema and every row (`tempo_eval.store.copy`); it must hold no data. Prints, per table,
the rows and a checksum of both sides; exit 0 when every table is equal, 1 when one is not, 2
when the copy could not be made (a target that holds data, a server that cannot be reached).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from tempo_eval.cli.common import EXIT_FAILED, EXIT_OK, CLIError, add_workspace_option


def add_parser(commands: Any) -> None:
    """Add this subcommand to the `commands` of `tempo_eval.cli.parser.build_parser`."""
    workspace = commands.add_parser(
        "workspace", help="the workspace database: copy it into another (SQLite file or PostgreSQL)",
        description="Manage the workspace database.",
    )
    actions = workspace.add_subparsers(dest="action", metavar="ACTION", required=True)
    copy = actions.add_parser(
        "copy", help="copy every table of the workspace into another database; compare counts and checksums",
        description=("Copy datasets, runs, results, claims, labels, the verdict cache and the jobs' history into "
                     "another database (a postgresql:// URL or a SQLite file), which must hold no data. Prints "
                     "each table's rows and checksum on both sides; exit 1 unless they are all equal."),
    )
    copy.add_argument("--to", required=True, metavar="URL",
                      help="the target: postgresql://user:password@host:port/database, or a SQLite file path")
    copy.add_argument("--from", dest="source", metavar="URL",
                      help="the source (default: TEMPO_EVAL_DB, else the workspace's SQLite file)")
    add_workspace_option(copy)
    copy.set_defaults(handler=run_copy)


def _location(text: str) -> str:
    from tempo_eval.store.pg import is_postgres_url

    if "://" in text and not is_postgres_url(text):
        raise CLIError(f"{text.split('://')[0]}:// is not a database tempo-eval uses; give a postgresql:// URL "
                       "or a SQLite file path")
    return text if is_postgres_url(text) else os.path.abspath(os.path.expanduser(text))


def run_copy(args: argparse.Namespace) -> int:
    from tempo_eval.store.copy import TargetNotEmpty, copy_workspace
    from tempo_eval.store.db import database_location, describe_location

    source = _location(args.source) if args.source else database_location()
    target = _location(args.to)
    if source == target:
        raise CLIError("--to names the workspace being copied; give another database")
    print(f"copying {describe_location(source)} -> {describe_location(target)}", file=sys.stderr)
    try:
        copies = copy_workspace(source, target)
    except TargetNotEmpty as error:
        raise CLIError(f"{describe_location(target)}: {error}") from None
    width = max(len(c.table) for c in copies) if copies else 5
    print(f"{'table':<{width}}  {'rows':>10}  {'copied':>10}  {'checksum':<16}  {'copied':<16}  same")
    for c in copies:
        print(f"{c.table:<{width}}  {c.source_rows:>10}  {c.target_rows:>10}  {c.source_checksum:<16}  "
              f"{c.target_checksum:<16}  {'yes' if c.equal else 'NO'}")
    unequal = [c.table for c in copies if not c.equal]
    if unequal:
        print(f"error: the copy differs from the source in {', '.join(unequal)}", file=sys.stderr)
        return EXIT_FAILED
    print(f"copied {sum(c.source_rows for c in copies)} rows in {len(copies)} tables; every count and checksum "
          "is equal", file=sys.stderr)
    return EXIT_OK
