"""Secrets in tracebacks of log records are masked, in the library's filter and the dashboard's log
handler (issue 28)."""

from __future__ import annotations

import io
import logging

from tempo_eval.common.secrets import _MaskingFilter

KEY = "sk-test-0123456789abcdef"


def test_a_logged_traceback_is_masked_too() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(_MaskingFilter(lambda: [KEY]))
    logger = logging.getLogger("tempo_eval.test_masking")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        try:
            raise RuntimeError(f"request to https://judge/v1 with Authorization: Bearer {KEY} failed")
        except RuntimeError:
            logger.exception("the judge failed")
        logger.warning("stack", stack_info=True, extra={"key": KEY})
    finally:
        logger.removeHandler(handler)
    written = stream.getvalue()
    assert "Authorization: Bearer ***" in written
    assert KEY not in written


def test_the_dashboards_log_handler_masks_secrets(monkeypatch) -> None:
    from tempo_eval_app.errors import configure_logging

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    configure_logging()
    ours = [h for h in logging.getLogger().handlers if getattr(h, "_tempo_eval", False)]
    assert ours and all(any(isinstance(f, _MaskingFilter) for f in h.filters) for h in ours)
