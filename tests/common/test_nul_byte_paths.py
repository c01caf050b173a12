"""A NUL byte in a typed path (a page's path box, a command-line argument, a reader's path) is
refused like any other path the app will not read: the reason, no traceback, nothing logged as
an exception."""

from __future__ import annotations

import logging

import pytest
from streamlit.testing.v1 import AppTest

from tempo_eval.cli import EXIT_INPUT, main
from tempo_eval.io.errors import InputError
from tempo_eval_app import paths
from tests.support.paths import ROOT

TIMEOUT = 120
TYPED = "/data/answers\x00.jsonl"


def _no_exception_logged(caplog: pytest.LogCaptureFixture) -> None:
    logged = [r for r in caplog.records if r.exc_info or "embedded null byte" in r.getMessage()]
    assert not logged, [r.getMessage() for r in logged]


def test_the_path_check_refuses_a_nul_byte_with_its_reason() -> None:
    with pytest.raises(paths.PathRefused, match="contains a NUL byte"):
        paths.confine(TYPED)
    with pytest.raises(paths.PathRefused, match="contains a NUL byte"):
        paths.files_named("\x00")


def test_a_reader_given_a_nul_byte_names_the_path() -> None:
    from tempo_eval.io.dataset import load_dataset

    with pytest.raises(InputError, match="contains a NUL byte"):
        load_dataset(TYPED)


def test_evaluate_page_refuses_a_typed_path_with_a_nul_byte(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    at = AppTest.from_file(str(ROOT / "views" / "evaluate.py"), default_timeout=TIMEOUT)
    at.session_state["keep_ev_source"] = "path"
    at.session_state["keep_ev_path"] = TYPED
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [e.value.replace("\\", "") for e in at.error]
    assert any("Refused" in m and "NUL byte" in m for m in shown), shown
    assert not any("Something went wrong" in m for m in shown)
    _no_exception_logged(caplog)


@pytest.mark.parametrize("key", ["compare_run_paths", "compare_qrels_path", "compare_corpus_path",
                                 "compare_doc_dates_path"])
def test_compare_page_refuses_a_typed_path_with_a_nul_byte(key: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    at = AppTest.from_file(str(ROOT / "views" / "compare.py"), default_timeout=TIMEOUT)
    at.session_state["compare_source"] = "TREC run files (paths on this machine, a folder of runs, or uploads)"
    at.session_state[key] = TYPED
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [e.value.replace("\\", "") for e in at.error]
    assert any("NUL byte" in m for m in shown), shown
    _no_exception_logged(caplog)


@pytest.mark.parametrize("argv", [
    ["evaluate", TYPED, "--out", "out.csv", "--metrics", "future_leak"],
    ["evaluate", "data.csv", "--out", "out\x00.csv", "--metrics", "future_leak"],
    ["compare", TYPED, "b.run", "--qrels", "qrels.txt"],
    ["diff", "1", "2", "--html", "diff\x00.html"],
    ["runs", "export", "1", "--out", "x\x00.csv"],
])
def test_the_command_line_refuses_an_argument_with_a_nul_byte(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == EXIT_INPUT
    said = capsys.readouterr().err
    assert "contains a NUL byte" in said and "embedded null byte" not in said and "Traceback" not in said
