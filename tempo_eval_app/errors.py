"""Logging and error messages of the dashboard: every page error is one readable line, never a traceback."""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Iterator

import streamlit as st

from tempo_eval.common.access import PermissionDenied
from tempo_eval.common.secrets import (
    mask_every_log_record,
    mask_log_handlers,
    named_secrets,
    redact,
    register_secret,
    secret_values,
)
from tempo_eval.io.errors import InputError
from tempo_eval.store.db import WorkspaceError
from tempo_eval.verify.base import VerifierUnavailable
from tempo_eval_app.formatting import md_escape

logger = logging.getLogger("tempo_eval_app")


def configure_logging() -> None:
    """Log to stderr once per process (the "details in the log" of every error message)."""
    root = logging.getLogger()
    if not any(getattr(h, "_tempo_eval", False) for h in root.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        handler._tempo_eval = True  # type: ignore[attr-defined]
        root.addHandler(handler)
        if root.level > logging.INFO or root.level == logging.NOTSET:
            root.setLevel(logging.INFO)
    # no key in any log line or traceback, whatever variable it came from (the CLI does the same),
    # nor a secret of the settings file (the sign-in's client_secret and cookie_secret), in our
    # log lines or Streamlit's own (its loggers write with their own handlers)
    register_settings_secrets()
    mask_log_handlers(secret_values)
    mask_every_log_record(secret_values)


def register_settings_secrets() -> None:
    """Mask from now on the secret-named values of `.streamlit/secrets.toml` (`[auth]`'s
    client_secret and cookie_secret, a provider section's client_secret): nothing to do without
    a secrets file."""
    try:
        settings = st.secrets.to_dict()
    except (FileNotFoundError, KeyError, OSError, ValueError):  # no secrets file, or one unreadable
        return
    for value in named_secrets(settings):
        register_secret(value)


#: how the engine's messages, written for Python users, name things, and what the app calls them
APP_TERMS = {
    "read_runs": "upload it under Run files on Datasets",
    "read_qrels": "upload it as Qrels on Datasets",
    "load_dataset": "upload it as a dataset on Datasets",
    "load_conversations": "paste or upload it on the Conversation page",
    "parse_conversation": "paste or upload it on the Conversation page",
}
_LOAD_WITH = re.compile(r"load (?:it|them) with (?:tempo_eval\.io\.)?(\w+)(?:\(\))?")


def in_app_terms(text: str) -> str:
    """An engine message with its Python names ("load it with read_qrels") said in the app's terms
    ("upload it as Qrels on Datasets"), and any secret masked (`redact`: a judge's key, the
    sign-in's client_secret or cookie_secret); any other text is left as it is."""
    text = _LOAD_WITH.sub(lambda m: APP_TERMS.get(m.group(1), m.group(0)), text)
    text = _MAPPING.sub(lambda m: f"{m.group(1) or ''}to choose column {m.group(3)} for {m.group(2)} under Column "
                        "mapping" if m.group(1) else f"column {m.group(3)} chosen for {m.group(2)}", text)
    return redact(text) or ""


#: the loader's suggestion in Python syntax, `mapping={'query': 'question_text'}`
_MAPPING = re.compile(r"(did you mean )?mapping=\{'(\w+)': ('[^']*'|\"[^\"]*\")\}")


def error_message(exc: BaseException) -> str:
    """What the user reads: an InputError or an unavailable verifier as it is (in the app's terms,
    see `in_app_terms`); anything else as one line plus "details in the log"."""
    if isinstance(exc, (InputError, VerifierUnavailable, WorkspaceError, PermissionDenied)):
        return in_app_terms(str(exc))
    said = redact(str(exc)) or ""
    first = said.strip().splitlines()[0] if said.strip() else ""
    line = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    if len(line) > 300:
        line = line[:297] + "..."
    return f"Something went wrong: {line} (details in the log)."


@contextlib.contextmanager
def page_guard(where: str = "page") -> Iterator[None]:
    """Catch any error of a page body and show it as `st.error`; never a traceback.

    Streamlit's own control flow (st.stop, st.rerun) derives from BaseException and passes.
    """
    try:
        yield
    except (InputError, VerifierUnavailable, PermissionDenied) as exc:
        logger.info("%s: %s", where, exc)
        show_error(exc)
    except Exception as exc:
        logger.exception("unexpected error in %s", where)
        show_error(exc)


def show_error(exc: BaseException) -> None:
    """`st.error` with `error_message(exc)`, markdown-escaped (messages quote user input)."""
    st.error(md_escape(error_message(exc)), icon=":material/error:")
