"""The roles enforced in the dashboard, where each action happens (`tempo_eval.common.access` is the rule).

Every place that writes (queues an evaluation, stores or uploads a dataset, compares run files,
labels, edits or deletes a run or a dataset, cancels or resumes a job) calls `require` just before
the store or job call, so a viewer gets the refusal whatever way they got there: a hidden button,
a crafted URL, a stale page. The pages also show what the role cannot do: `blocked` gives the
one-line reason to disable a button with and `explain` writes it under the disabled control.

Without sign-in the app is the local single-user tool and its user an admin: nothing is refused.
"""

from __future__ import annotations

import streamlit as st

from tempo_eval.common import access
from tempo_eval.common.access import PermissionDenied
from tempo_eval_app.formatting import md_escape
from tempo_eval_app.identity import current_role, current_user

__all__ = ["PermissionDenied", "blocked", "explain", "require"]


def blocked(action: str, *, owner: str | None = None) -> str | None:
    """Why the acting user may not do `action` (one line), or None when they may."""
    return access.denial(current_role(), action, user=current_user(), owner=owner)


def require(action: str, *, owner: str | None = None) -> None:
    """Raise PermissionDenied (its message in the user's words) unless the acting user may do
    `action`; `owner` is who made the run the action is on."""
    access.check(current_role(), action, user=current_user(), owner=owner)


def explain(reason: str | None) -> None:
    """The one-line reason a control is disabled, under it (nothing when `reason` is None)."""
    if reason:
        st.caption(md_escape(reason))
