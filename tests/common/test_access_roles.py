"""The roles' rule (`tempo_eval.common.access`): what a viewer, an analyst and an admin may do, runs that
are one's own, nobody signed in, and the first admin named in the settings."""

from __future__ import annotations

import pytest

from tempo_eval.common.access import (
    ACTIONS,
    DEFAULT_ROLE,
    ROLES,
    PermissionDenied,
    check,
    denial,
    normal_email,
    settings_admins,
)


def may(role: str | None, action: str, *, user: str = "", owner: str | None = None) -> bool:
    """True when `denial` finds nothing against it."""
    return denial(role, action, user=user, owner=owner) is None

ANALYST_ACTIONS = ("evaluate", "upload", "compare_files", "label", "manage_jobs", "edit_dataset")


def test_a_viewer_reads_and_does_nothing_else() -> None:
    assert may("viewer", "read")
    for action in ACTIONS:
        if action != "read":
            assert not may("viewer", action, user="v@x.org", owner="v@x.org"), action


@pytest.mark.parametrize("action", ANALYST_ACTIONS)
def test_an_analyst_evaluates_uploads_compares_and_labels(action: str) -> None:
    assert may("analyst", action, user="a@x.org")


def test_an_analyst_deletes_and_edits_only_their_own_runs() -> None:
    for action in ("delete_run", "edit_run"):
        assert may("analyst", action, user="a@x.org", owner="A@x.org ")
        assert not may("analyst", action, user="a@x.org", owner="b@x.org")
        assert not may("analyst", action, user="a@x.org", owner=None)  # made before users were recorded
        assert not may("analyst", action, user="a@x.org", owner="")


def test_an_analyst_neither_deletes_datasets_nor_manages_users() -> None:
    assert not may("analyst", "delete_dataset", user="a@x.org")
    assert not may("analyst", "manage_users", user="a@x.org")


def test_an_admin_may_do_everything_on_anyones_runs() -> None:
    for action in ACTIONS:
        assert may("admin", action, user="root@x.org", owner="b@x.org"), action
        assert may("admin", action, user="root@x.org", owner=None), action


def test_nobody_signed_in_may_do_nothing_not_even_read() -> None:
    for action in ACTIONS:
        assert denial(None, action).startswith("Sign in to ")
        assert not may("", action)


def test_the_refusal_says_what_was_tried_the_role_and_whom_to_ask() -> None:
    with pytest.raises(PermissionDenied) as refused:
        check("viewer", "evaluate", user="v@x.org")
    assert str(refused.value) == ("You cannot start an evaluation: your role is viewer, and it needs an analyst "
                                  "(ask an admin of this workspace).")
    assert refused.value.action == "evaluate" and refused.value.role == "viewer"
    assert isinstance(refused.value, PermissionError)
    other = denial("analyst", "delete_run", user="a@x.org", owner="b@x.org")
    assert other is not None and "made by b@x.org" in other and "their own runs" in other


def test_an_unknown_action_is_an_error_not_a_permission() -> None:
    with pytest.raises(KeyError):
        may("admin", "delet_run")


def test_roles_are_ordered_and_unlisted_users_are_viewers() -> None:
    assert ROLES == ("viewer", "analyst", "admin") and DEFAULT_ROLE == "viewer"
    assert all(ACTIONS[a][0] in ROLES for a in ACTIONS)


def test_e_mails_are_normalised_and_non_addresses_refused() -> None:
    assert normal_email("  Ana@Example.ORG ") == "ana@example.org"
    for bad in ("", "ana", "@x.org", "ana@", "a b@x.org", "a@x.org,b@x.org", "a@b@c", "x" * 320 + "@x.org"):
        with pytest.raises(ValueError, match="not an e-mail address"):
            normal_email(bad)


def test_the_first_admins_are_named_in_the_settings() -> None:
    assert settings_admins({}) == frozenset()
    assert settings_admins({"TEMPO_EVAL_ADMIN": " Root@X.org , second@x.org,"}) == {"root@x.org", "second@x.org"}
    with pytest.raises(ValueError, match="TEMPO_EVAL_ADMIN: 'nobody' is not an e-mail"):
        settings_admins({"TEMPO_EVAL_ADMIN": "nobody"})
