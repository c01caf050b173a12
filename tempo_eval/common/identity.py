"""Who is acting, for the record of who did what.

The command line and a local single-user app act as the operating-system user (`os_user`), unless
a name is given (`--user`); a signed-in app acts as the signed-in user's e-mail
(`tempo_eval_app/identity.py`). The store records the name it is handed and never guesses one.
"""

from __future__ import annotations

import getpass
import os


def os_user() -> str:
    """The operating-system user running this process (`uid-N` when the uid has no name, as in some
    containers)."""
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = ""
    name = name.strip()
    if name:
        return name
    return f"uid-{os.getuid()}" if hasattr(os, "getuid") else "unknown"
