"""Every page that reads the workspace renders without an error when the workspace database is
PostgreSQL (`TEMPO_EVAL_DB`), with runs in it: the store's statements as the pages run them."""

from __future__ import annotations

from tests.app.test_pages import (  # noqa: F401 - worker_in_this_process: the pages' jobs run here
    PAGES,
    assert_clean,
    evaluate_with_lexical,
    goto,
    open_app,
    worker_in_this_process,
)


def test_every_page_renders_over_runs_stored_in_postgresql(postgres_url) -> None:
    at = open_app()
    first = evaluate_with_lexical(at, run_name="first")
    second = evaluate_with_lexical(at, fc=True, run_name="second")
    assert second != first
    for page in [*PAGES, "review"]:
        goto(at, page)
        assert_clean(at)
