"""`tempo-eval users`: who may sign in to the shared dashboard, and as what.

    tempo-eval users list [--format text|json]          # e-mail, role, added by, added at
    tempo-eval users add EMAIL --role viewer|analyst|admin   # add, or change a user's role
    tempo-eval users remove EMAIL                       # they are a viewer again when they sign in

Roles (`tempo_eval.common.access`): a viewer reads; an analyst also evaluates, uploads, compares files,
labels and deletes their own runs; an admin also deletes any run and manages users. A signed-in
user not listed is a viewer; the settings' TEMPO_EVAL_ADMIN is an admin whatever is listed. The
command line is run by whoever has the workspace's files, so it checks no role; it records the
operating-system user as the one who added a user. Exit 2, with one line, for a bad e-mail or
role, an unknown user, or removing or demoting the last admin while TEMPO_EVAL_ADMIN names none.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from tempo_eval.cli.common import EXIT_OK, CLIError, add_workspace_option, print_table
from tempo_eval.common.safe_text import json_safe
from tempo_eval.common.safe_text import one_line as _one_line

#: the roles (`tempo_eval.common.access.ROLES`, repeated here so `--help` imports nothing of the engine)
ROLE_CHOICES = ("viewer", "analyst", "admin")


def add_parser(commands: Any) -> None:
    """Add this subcommand to the `commands` of `tempo_eval.cli.parser.build_parser`."""
    users = commands.add_parser(
        "users",
        help="list, add or remove the users who may sign in to the dashboard, with their roles",
        description="The users of a shared workspace and their roles: viewer (reads), analyst (also "
                    "evaluates, uploads, compares files, labels, deletes own runs), admin (also deletes "
                    "any run, manages users). A signed-in user not listed is a viewer; TEMPO_EVAL_ADMIN "
                    "names the first admin.",
    )
    add_workspace_option(users)
    users.set_defaults(handler=cmd_users_list, format="text")
    actions = users.add_subparsers(dest="action", metavar="ACTION")

    listing = actions.add_parser("list", help="the users with their roles")
    listing.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    add_workspace_option(listing)
    listing.set_defaults(handler=cmd_users_list)

    add = actions.add_parser("add", help="add a user, or change a user's role")
    add.add_argument("email", help="the e-mail the user signs in with")
    add.add_argument("--role", required=True, choices=ROLE_CHOICES, help="what the user may do")
    add_workspace_option(add)
    add.set_defaults(handler=cmd_users_add)

    remove = actions.add_parser("remove", help="remove a user (a viewer again when they sign in)")
    remove.add_argument("email", help="the user's e-mail")
    add_workspace_option(remove)
    remove.set_defaults(handler=cmd_users_remove)


def _open(args: argparse.Namespace) -> Any:
    """The user store of the workspace (`main` has applied --workspace)."""
    from tempo_eval.store.users import UserStore

    return UserStore()


def cmd_users_list(args: argparse.Namespace) -> int:
    from tempo_eval.common.access import settings_admins

    users = _open(args).users()
    admins = sorted(settings_admins())
    if args.format == "json":
        document = {"users": users, "settings_admins": admins}
        sys.stdout.write(json_safe(json.dumps(document, ensure_ascii=False, indent=2)) + "\n")
        return EXIT_OK
    if admins:
        print("admin by TEMPO_EVAL_ADMIN: " + ", ".join(map(_one_line, admins)))
    if not users:
        print("No user added: whoever signs in is a viewer"
              + (" (and the admins above)." if admins else "; name an admin in TEMPO_EVAL_ADMIN or add one."))
        return EXIT_OK
    lines = [["email", "role", "added by", "added at"]]
    lines += [[_one_line(u["email"]), u["role"], _one_line(u["added_by"] or "—"), _one_line(u["added_at"])] for u in users]
    print_table(lines)
    return EXIT_OK


def cmd_users_add(args: argparse.Namespace) -> int:
    from tempo_eval.common.identity import os_user

    store = _open(args)
    before = store.add(args.email, args.role, added_by=os_user())
    email = _one_line(args.email.strip().lower())
    if before is None:
        print(f"Added {email} as {args.role}.", file=sys.stderr)
    elif before == args.role:
        print(f"{email} was already {args.role}.", file=sys.stderr)
    else:
        print(f"{email}: {before} -> {args.role}.", file=sys.stderr)
    return EXIT_OK


def cmd_users_remove(args: argparse.Namespace) -> int:
    store = _open(args)
    try:
        before = store.remove(args.email)
    except KeyError as unknown:
        raise CLIError(f"{unknown.args[0]} ('tempo-eval users list' lists them)") from None
    print(f"Removed {_one_line(args.email.strip().lower())} (was {before}); signing in they are a viewer.",
          file=sys.stderr)
    return EXIT_OK
