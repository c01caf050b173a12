"""The sign-in's secrets (`[auth]`'s client_secret and cookie_secret, a provider section's
client_secret) never appear in a log line, the app's or Streamlit's own (whose loggers write with
their own handlers, not the root logger's), nor in an error message a page shows."""

from __future__ import annotations

import io
import logging
import os

from streamlit.testing.v1 import AppTest

from tests.app.test_pages import APP, TIMEOUT


def _signed_in_app() -> tuple[AppTest, dict[str, str]]:
    """The app run once with an `[auth]` section of fresh secrets (one provider section too)."""
    secrets = {name: f"{name}-{os.urandom(12).hex()}" for name in ("client", "cookie", "provider")}
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.secrets["auth"] = {
        "redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": secrets["cookie"],
        "client_id": "tempo-eval", "client_secret": secrets["client"],
        "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration",
        "okta": {"client_id": "okta", "client_secret": secrets["provider"],
                 "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"},
    }
    at.run()
    assert not at.exception
    return at, secrets


def test_the_sign_in_secrets_never_reach_a_log_line() -> None:
    from streamlit.logger import get_logger

    _, secrets = _signed_in_app()
    streamlits = get_logger("streamlit.auth_util")  # Streamlit's: its own handler, not propagated
    ours = next(h for h in logging.getLogger().handlers if getattr(h, "_tempo_eval", False))
    written = io.StringIO()
    handlers = [streamlits.streamlit_console_handler, ours]
    before = [handler.setStream(written) for handler in handlers]
    try:
        streamlits.error("the provider refused client_secret=%s", secrets["client"])
        streamlits.warning(f"cookie signed with {secrets['cookie']}")
        try:
            raise RuntimeError(f"token request with {secrets['provider']} failed")
        except RuntimeError:
            streamlits.exception("sign-in failed")
            logging.getLogger("tempo_eval_app").exception("sign-in failed")
        logging.getLogger("tempo_eval_app").error("cookie %s", secrets["cookie"])
    finally:
        for handler, stream in zip(handlers, before, strict=True):
            handler.setStream(stream)
    text = written.getvalue()
    assert "the provider refused client_secret=***" in text and "token request with *** failed" in text
    for value in secrets.values():
        assert value not in text


def test_an_error_quoting_a_sign_in_secret_is_shown_masked() -> None:
    from tempo_eval_app.errors import error_message, in_app_terms

    _, secrets = _signed_in_app()
    shown = error_message(RuntimeError(f"the provider answered 401 for {secrets['client']}"))
    assert secrets["client"] not in shown and "401 for ***" in shown
    assert secrets["cookie"] not in in_app_terms(f"The job failed: {secrets['cookie']}")
    assert secrets["provider"] not in error_message(ValueError(secrets["provider"]))


def test_without_a_secrets_file_the_app_logs_as_before() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    record = logging.getLogger("tempo_eval_app").makeRecord("tempo_eval_app", logging.INFO, __file__, 1,
                                                             "ordinary words %s", ("stay",), None)
    assert record.getMessage() == "ordinary words stay"
