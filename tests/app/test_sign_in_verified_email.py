"""A signed-in account is its e-mail, and the e-mail decides the role: one whose provider says
the e-mail is not verified (`email_verified` false: a provider that lets an account name any
address, unchecked) is refused with the reason and Sign out, never let in as whoever owns that
address, an admin included. A verified e-mail, or a provider that sends no such claim, gets in."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.app.test_pages import APP, TIMEOUT
from tests.app.test_roles_in_pages import AUTH, plain

ADMIN = "boss@example.org"


def signed_in_as(claims: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.secrets["auth"] = AUTH
    at.user = {"is_logged_in": True, **claims}
    return at.run()


@pytest.fixture(autouse=True)
def first_admin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPO_EVAL_ADMIN", ADMIN)


@pytest.mark.parametrize("verified", [False, "false"])
def test_an_unverified_e_mail_is_refused_even_the_admins(verified) -> None:
    at = signed_in_as({"email": ADMIN, "email_verified": verified})
    assert not at.exception
    [error] = at.error
    assert f"has not verified the e-mail address {ADMIN}" in plain(error.value)
    assert [b.label for b in at.button] == ["Sign out"]
    assert not at.sidebar.selectbox and not at.dataframe


@pytest.mark.parametrize("claims", [{"email_verified": True}, {}])
def test_a_verified_e_mail_or_a_provider_without_the_claim_gets_in(claims: dict) -> None:
    at = signed_in_as({"email": ADMIN, **claims})
    assert not at.exception and not at.error
    assert at.sidebar.selectbox  # the shared sidebar: the app itself
    assert any(f"Signed in as {ADMIN} · admin" in plain(c.value) for c in at.sidebar.caption)
