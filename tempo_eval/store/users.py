"""The users of a shared workspace and their roles (table `users`; the rule is `tempo_eval.common.access`).

A user is an e-mail (lower-cased, as the sign-in gives it) with a role (viewer, analyst, admin),
who added them and when. `role_of` answers what a signed-in user is: an admin when the settings
name them (`TEMPO_EVAL_ADMIN`), else their row's role, else `access.DEFAULT_ROLE` (a viewer).
The table never loses its last admin while the settings name none: removing or demoting them is
refused, so someone can always manage users.

Plain SQL that PostgreSQL runs as well as SQLite; `added_at` is ISO text written here.
"""

from __future__ import annotations

import datetime as _dt
import os
import threading
from typing import Any

from tempo_eval.common.access import (
    DEFAULT_ROLE,
    article,
    check_role,
    normal_email,
    settings_admins,
)
from tempo_eval.store.db import connect


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


class UserStore:
    """Read and write the users of the workspace database (or the file at `path`)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self._conn = connect(path)
        self._lock = threading.Lock()

    def close(self) -> None:
        self._conn.close()

    def add(self, email: str, role: str, *, added_by: str) -> str | None:
        """Add `email` with `role`, or change the role of a user already there; returns the role
        they had before (None for a new user). ValueError for a bad e-mail or role, and for
        demoting the last admin while TEMPO_EVAL_ADMIN names none."""
        email, role = normal_email(email), check_role(role)
        with self._lock, self._conn:
            before = self._role_in_table(email)
            if before == "admin" and role != "admin":
                self._refuse_last_admin(email, f"making {email} {article(role)} {role}")
            sql = ("UPDATE users SET role = ?, added_by = ?, added_at = ? WHERE email = ?" if before
                   else "INSERT INTO users (role, added_by, added_at, email) VALUES (?, ?, ?, ?)")
            self._conn.execute(sql, (role, str(added_by or ""), _now(), email))
        return before

    def remove(self, email: str) -> str:
        """Remove `email`; returns the role they had. KeyError (naming them) when they are not a
        user; ValueError for removing the last admin while TEMPO_EVAL_ADMIN names none."""
        email = normal_email(email)
        with self._lock, self._conn:
            before = self._role_in_table(email)
            if before is None:
                raise KeyError(f"{email} is not a user of this workspace")
            if before == "admin":
                self._refuse_last_admin(email, f"removing {email}")
            self._conn.execute("DELETE FROM users WHERE email = ?", (email,))
        return before

    def users(self) -> list[dict[str, Any]]:
        """Every user of the table, by e-mail: email, role, added_by, added_at."""
        with self._lock:
            rows = self._conn.execute("SELECT email, role, added_by, added_at FROM users ORDER BY email").fetchall()
        return [dict(zip(("email", "role", "added_by", "added_at"), row, strict=True)) for row in rows]

    def role_of(self, email: str) -> str | None:
        """The role `email` acts as: admin when TEMPO_EVAL_ADMIN names them, else the table's,
        else DEFAULT_ROLE; None for no e-mail (nobody signed in) or one that is not an address."""
        try:
            email = normal_email(email)
        except ValueError:
            return None
        if email in settings_admins():
            return "admin"
        with self._lock:
            found = self._role_in_table(email)
        return found or DEFAULT_ROLE

    def _role_in_table(self, email: str) -> str | None:
        row = self._conn.execute("SELECT role FROM users WHERE email = ?", (email,)).fetchone()
        return None if row is None else str(row[0])

    def _refuse_last_admin(self, email: str, what: str) -> None:
        if settings_admins():
            return
        others = self._conn.execute("SELECT COUNT(*) FROM users WHERE role = 'admin' AND email <> ?",
                                    (email,)).fetchone()[0]
        if not others:
            raise ValueError(f"{what} would leave the workspace without an admin: add another admin first, "
                             "or name one in the setting TEMPO_EVAL_ADMIN")
