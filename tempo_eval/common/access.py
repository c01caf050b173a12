"""Who may do what in a shared workspace: the roles, the actions, and the one rule between them.

Three roles, each with everything of the one before it:

- `viewer` reads everything (every page, every download);
- `analyst` also evaluates, uploads and stores datasets, compares run files, labels verdicts,
  edits and deletes the runs they made, and cancels or resumes the jobs they may start;
- `admin` also edits and deletes any run, deletes datasets (with every run of them) and manages
  users.

The rule is pure (`denial`, `check`): the caller says which role acts, as whom, and, for an
action on a run, who made the run. A run whose maker is not recorded (made before the workspace
recorded users) is nobody's own: only an admin deletes it. `PermissionDenied` says in the user's
words what they tried, what their role allows and whom to ask.

The first admin is named in the settings, `TEMPO_EVAL_ADMIN` (an e-mail, or several separated by
commas: `settings_admins`); they are an admin whatever the users table says, so a workspace is
never left without one. A signed-in user missing from the users table is a viewer
(`DEFAULT_ROLE`): signing in through the organisation's provider lets a person read, and an admin
grants more (`tempo-eval users add EMAIL --role analyst`).
"""

from __future__ import annotations

import os

#: the roles, least first; each may do everything the ones before it may
ROLES = ("viewer", "analyst", "admin")
#: what a signed-in user not in the users table is
DEFAULT_ROLE = "viewer"
#: the role of the local single-user app and of the command line (whoever runs them owns the files)
LOCAL_ROLE = "admin"

#: action -> (the least role that may do it, what it is in the user's words)
ACTIONS: dict[str, tuple[str, str]] = {
    "read": ("viewer", "read the workspace"),
    "evaluate": ("analyst", "start an evaluation"),
    "upload": ("analyst", "upload or store a dataset"),
    "compare_files": ("analyst", "compare run files"),
    "label": ("analyst", "label verdicts"),
    "manage_jobs": ("analyst", "cancel or resume a job"),
    "edit_dataset": ("analyst", "rename a dataset"),
    "edit_run": ("analyst", "rename or annotate a run"),
    "delete_run": ("analyst", "delete a run"),
    "delete_dataset": ("admin", "delete a dataset with its runs"),
    "manage_users": ("admin", "manage users"),
}
#: the actions an analyst may only do on a run they made (an admin on any)
OWN_RUN_ACTIONS = ("edit_run", "delete_run")


class PermissionDenied(PermissionError):
    """An action the acting user's role does not allow; `str(error)` is one line for the user."""

    def __init__(self, message: str, *, action: str = "", role: str = "") -> None:
        self.action, self.role = action, role
        super().__init__(message)


def check_role(role: str) -> str:
    """`role` lower-cased when it is one of ROLES; ValueError naming the roles otherwise."""
    cleaned = str(role or "").strip().lower()
    if cleaned not in ROLES:
        raise ValueError(f"unknown role {role!r}: expected one of {', '.join(ROLES)}")
    return cleaned


def rank(role: str | None) -> int:
    """The role's place in ROLES (viewer 0 .. admin 2); -1 for no role (nobody signed in)."""
    return ROLES.index(role) if role in ROLES else -1


def denial(role: str | None, action: str, *, user: str = "", owner: str | None = None) -> str | None:
    """Why `user` acting as `role` may not do `action` (one sentence in the user's words), or None
    when they may. `owner` is who made the run an OWN_RUN_ACTIONS action is on (None: unknown).
    An unknown action is a programming error (KeyError): nothing is allowed by a misspelling."""
    least, words = ACTIONS[action]
    if role not in ROLES:
        return f"Sign in to {words}."
    if rank(role) < rank(least):
        return (f"You cannot {words}: your role is {role}, and it needs {article(least)} {least} "
                f"(ask an admin of this workspace).")
    if action in OWN_RUN_ACTIONS and role != "admin":
        if owner is None or not str(owner).strip():
            return (f"You cannot {words} here: nobody is recorded as having made it, so only an admin "
                    f"may (your role is {role}).")
        if str(owner).strip().lower() != str(user or "").strip().lower():
            return f"You cannot {words} made by {owner}: an {role} may only for their own runs; an admin may for any."
    return None


def check(role: str | None, action: str, *, user: str = "", owner: str | None = None) -> None:
    """Raise PermissionDenied (with `denial`'s sentence) unless `role` may do `action`."""
    reason = denial(role, action, user=user, owner=owner)
    if reason is not None:
        raise PermissionDenied(reason, action=action, role=str(role or ""))


def normal_email(email: str) -> str:
    """An e-mail as users are keyed: stripped and lower-cased. ValueError, naming what was given,
    for anything that is not one address (no `@`, spaces, a comma, over 320 characters)."""
    cleaned = str(email or "").strip().lower()
    local, at, domain = cleaned.partition("@")
    if (not at or not local or not domain or "@" in domain or len(cleaned) > 320
            or any(ch.isspace() or ch in ",;<>\"'" for ch in cleaned)):
        raise ValueError(f"{email!r} is not an e-mail address (expected one address such as ana@example.org)")
    return cleaned


def settings_admins(environ: dict[str, str] | None = None) -> frozenset[str]:
    """The e-mails TEMPO_EVAL_ADMIN names (comma-separated; lower-cased). ValueError naming the
    setting for a value that is not e-mails."""
    value = (os.environ if environ is None else environ).get("TEMPO_EVAL_ADMIN", "")
    try:
        return frozenset(normal_email(part) for part in value.split(",") if part.strip())
    except ValueError as error:
        raise ValueError(f"TEMPO_EVAL_ADMIN: {error}") from None


def article(word: str) -> str:
    """"a" or "an" before a role's name."""
    return "an" if word[:1] in "aeiou" else "a"
