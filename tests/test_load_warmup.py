"""The server's warm-up (tempo_eval_app/warmup.py): started once per process by the first script
run, it imports the pages' modules and fills the caches a new session reads first, with the keys
the pages use, so sessions opening together do not each wait for a first computation (issue 29)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tempo_eval_app import focus_scores, selection, store_reads, warmup

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def test_the_first_script_run_starts_the_warm_up_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warmup, "_thread", None)
    started: list[str] = []
    monkeypatch.setattr(warmup, "warm", lambda db: started.append(db))
    at = AppTest.from_file(APP, default_timeout=180).run()
    assert not at.exception
    assert warmup.wait(60)
    at.run()
    AppTest.from_file(APP, default_timeout=180).run()  # another session, same process
    assert warmup.wait(60)
    assert started == [store_reads.db_path()]


def test_the_warm_up_fills_the_overviews_focus_time_scores_under_the_pages_key(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    AppTest.from_file(APP, default_timeout=180).run()  # stores the sample: the default dataset
    assert warmup.wait(120)
    db = store_reads.db_path()
    _, _, default = selection._dataset_choices(db)
    focus_scores._focus_time_scores.clear()
    with caplog.at_level(logging.INFO, logger="tempo_eval_app"):
        warmup.warm(db)
    assert any("dashboard warm" in r.getMessage() for r in caplog.records), caplog.text

    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness

    def fail(*args, **kwargs):
        raise AssertionError("computed again: the warm-up did not fill the page's cache entry")

    monkeypatch.setattr(TemporalFaithfulness, "measure", fail)
    scores = focus_scores.focus_time_scores(default, 10)  # what the Overview calls
    assert scores["temporal_faithfulness"].notna().any()
    assert not scores["tf_reason"].str.contains("computed again").any()


def test_a_failing_warm_up_is_logged_and_changes_nothing(monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(warmup, "PAGE_MODULES", ("tempo_eval_app.no_such_module",))
    with caplog.at_level(logging.WARNING, logger="tempo_eval_app"):
        warmup.warm(store_reads.db_path())
    assert "warm-up of the dashboard stopped" in caplog.text
