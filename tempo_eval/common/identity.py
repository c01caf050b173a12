"""Who is acting, for the record of who did what.

The command line and a local single-user app act as the operating-system user (`os_user`), unless
a name is given (`--user`); a signed-in app acts as the signed-in user's e-mail
(`tempo_eval_app/identity.py`). The store records the name it is handed and never guesses one.
"""

from __future__ import annotations

import getpass
import os

#: how a record with no user (made before users were recorded, or by code that named none) is shown
UNKNOWN_USER = "unknown"


def os_user() -> str:
    """The operating-system user running this process (`uid-N` when the uid has no name, as in some
    containers)."""
    try:
        name = getpass.getuser().strip()
    except (KeyError, OSError):
        name = ""
    return name or (f"uid-{os.getuid()}" if hasattr(os, "getuid") else "unknown")


def user_name(user: str | None) -> str | None:
    """The name to record for `user`: its text with surrounding spaces dropped, None (unknown) for
    None or a blank name. The store records what it is handed, through this, and guesses none."""
    if user is None:
        return None
    name = " ".join(str(user).split())  # one line: a name is shown in tables and terminals
    return name or None


def shown_user(name: object) -> str:
    """A recorded user as every page and the command line show it: `UNKNOWN_USER` for none (SQL
    NULL, which pandas may hold as NaN or None, or the labels' '' key)."""
    return name if isinstance(name, str) and name else UNKNOWN_USER
