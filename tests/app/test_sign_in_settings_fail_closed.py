"""Settings that could let the wrong person in close the door instead, saying which setting to
correct: a settings file (`.streamlit/secrets.toml`) that is there but cannot be read (it may be
the one that configures sign-in: the app must not fall back to the local single-user tool, whose
user is an admin, on 127.0.0.1 behind a proxy meant for a team), and Streamlit's options that copy
request headers into the signed-in user or publish who signed in. A readable settings file
without `[auth]` leaves the local tool as it was."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import streamlit as st
from streamlit import config
from streamlit.testing.v1 import AppTest

from tests.app.test_pages import APP, TIMEOUT
from tests.app.test_roles_in_pages import DOOR_PAGES, opened


@pytest.fixture
def settings_file(tmp_path: Path) -> Iterator[Path]:
    """The one settings file the app reads (Streamlit's `secrets.files`), written by the test."""
    path = tmp_path / ".streamlit" / "secrets.toml"
    path.parent.mkdir()
    before = config.get_option("secrets.files")
    config.set_option("secrets.files", [str(path)])
    st.secrets._reset()
    try:
        yield path
    finally:
        config.set_option("secrets.files", before)
        st.secrets._reset()


def plain(text: str) -> str:
    return text.replace("\\", "").replace("\u2060", "")


def test_an_unreadable_settings_file_lets_nobody_in(settings_file: Path) -> None:
    from tempo_eval_app import permissions

    settings_file.write_text('[auth]\nclient_id = tempo-eval\ncookie_secret = "x"\n', encoding="utf-8")
    for page in DOOR_PAGES:
        at = opened(page)
        assert not at.exception
        assert [t.value for t in at.title] == ["tempo-eval"]
        [error] = at.error
        said = plain(error.value)
        assert "The app's settings are wrong" in said and str(settings_file) in said and "line 2" in said
        assert not at.button and not at.sidebar.selectbox and not at.dataframe
    # where the work is done too (a callback runs before the page's door)
    assert permissions.current_role() is None
    assert permissions.blocked("delete_run", owner="") is not None


def test_a_readable_settings_file_without_sign_in_leaves_the_local_tool(settings_file: Path) -> None:
    from tempo_eval_app import permissions

    settings_file.write_text('some_service_url = "http://127.0.0.1:9"\n', encoding="utf-8")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception and not at.error
    assert "Sign in" not in [b.label for b in at.button]
    assert at.sidebar.selectbox  # the shared sidebar: the app itself
    assert permissions.current_role() == "admin"


@pytest.mark.parametrize(("option", "value", "said"), [
    # request headers written over the sign-in's user: a browser sending one chooses its e-mail, and role
    ("server.trustedUserHeaders", {"X-Forwarded-Email": "email"}, "could act as anyone"),
    # the signed-in users' e-mails on /_stcore/metrics, which answers before sign-in
    ("server.unsafeMetricsUserAttributes", ["email"], "publishes who signed in"),
])
def test_streamlit_options_that_undo_the_sign_in_are_refused_with_it(option: str, value, said: str) -> None:
    before = config.get_option(option)
    config.set_option(option, value)
    try:
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.secrets["auth"] = {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "x" * 32,
                              "client_id": "c", "client_secret": "s" * 16,
                              "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}
        at.run()
    finally:
        config.set_option(option, before)
    assert not at.exception and not at.button
    [error] = at.error
    assert option in plain(error.value) and said in plain(error.value) and "leave it unset" in plain(error.value)
