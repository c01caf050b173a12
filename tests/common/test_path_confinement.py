"""A path typed on a page is checked when it is typed and again where the worker opens it: a file
swapped for a link (or a hard link) to a file outside the allowed folders while its job waits,
or before a Resume, is refused by the worker, and nothing of it is read or stored."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tempo_eval.cli import job as job_cli
from tempo_eval.common import confine as _confine
from tempo_eval.store.jobs import JobQueue
from tempo_eval.store.runs import RunStore

SETTINGS = {"tf": True, "tf_mode": "focus_time", "ndcg": False, "ndcg_mode": "gold", "fc": False, "k": 10,
            "verifier": "lexical", "nli_model": "", "judge_url": "", "judge_model": "", "run_name": "",
            "reference_date": None}


def _workspace() -> Path:
    return Path(os.environ["TEMPO_EVAL_HOME"]).resolve()


def _rows(path: Path, n: int, word: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"query_id": f"{word}{i}", "query": f"What happened in {1900 + i}?",
             "answer": f"In {1900 + i} a {word} opened.", "contexts": [f"The {word} opened in {1900 + i}."]}
            for i in range(n)]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _stored() -> tuple[list[str], int]:
    store = RunStore()
    try:
        return store.list_datasets()["name"].tolist(), len(store.list_runs())
    finally:
        store.close()


def _evaluate(path: Path) -> dict:
    """Queue an evaluation of the file `path` as the Evaluate page does (its path checked), run the
    worker in this process; the job as it ended."""
    queue = JobQueue()
    try:
        job_id = queue.submit("evaluate", {**SETTINGS, "dataset_id": None, "path": str(path)})
        job_cli.run_worker(queue, limit=1)
        return queue.get(job_id)
    finally:
        queue.close()


def test_a_queued_file_swapped_for_a_link_outside_is_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    inside = _rows(_workspace() / "data" / "rows.jsonl", 3, "bridge")
    checked = _confine.confine(str(inside))  # the page's check when the path is typed
    secret = _rows(tmp_path / "secret.jsonl", 3, "secret")
    inside.unlink()
    inside.symlink_to(secret)  # while the job is queued
    ended = _evaluate(checked)
    assert ended["status"] == "failed"
    assert "outside the folders the app may read" in ended["error"] and "secret.jsonl" in ended["error"]
    assert _stored() == ([], 0)


def test_a_hard_link_to_a_file_outside_is_refused_by_the_page_and_by_the_worker(tmp_path: Path) -> None:
    secret = _rows(tmp_path / "secret.jsonl", 3, "secret")
    linked = _workspace() / "data" / "linked.jsonl"
    linked.parent.mkdir(parents=True)
    os.link(secret, linked)
    with pytest.raises(_confine.PathRefused, match="2 hard links"):
        _confine.confine(str(linked))
    inside = _rows(_workspace() / "data" / "rows.jsonl", 3, "bridge")
    checked = _confine.confine(str(inside))
    inside.unlink()
    os.link(secret, inside)  # swapped after the check, for a second name of the file outside
    ended = _evaluate(checked)
    assert ended["status"] == "failed" and "hard links" in ended["error"], ended["error"]
    assert _stored() == ([], 0)


def test_resume_after_the_file_was_swapped_is_refused(tmp_path: Path) -> None:
    inside = _rows(_workspace() / "data" / "rows.jsonl", 4, "bridge")
    checked = _confine.confine(str(inside))
    first = _evaluate(checked)
    assert first["status"] == "finished", first["error"]
    before = _stored()
    secret = _rows(tmp_path / "secret.jsonl", 5, "secret")
    inside.unlink()
    inside.symlink_to(secret)  # after the run ended (or its worker died), before Resume
    queue = JobQueue()
    try:
        assert queue.requeue(first["id"])
        job_cli.run_worker(queue, limit=1)
        resumed = queue.get(first["id"])
    finally:
        queue.close()
    assert resumed["status"] == "failed" and "outside the folders" in resumed["error"]
    assert _stored() == before


def test_compares_scoring_job_refuses_a_run_file_swapped_for_a_link(tmp_path: Path) -> None:
    from tempo_eval.compare import saved as saved_comparisons

    folder = _workspace() / "runs"
    folder.mkdir()
    (folder / "a.run").write_text("q1 Q0 d1 1 3 alpha\n")
    (folder / "b.run").write_text("q1 Q0 d2 1 3 beta\n")
    (folder / "qrels.txt").write_text("q1 0 d1 1\n")
    (tmp_path / "secret.run").write_text("q1 Q0 d9 1 3 secret\n")
    arguments = {"runs": [str(folder / "a.run"), str(folder / "b.run")], "qrels": str(folder / "qrels.txt"),
                 "missing": "zero", "precision": "float32"}
    (folder / "b.run").unlink()
    (folder / "b.run").symlink_to(tmp_path / "secret.run")
    queue = JobQueue()
    try:
        job_id = queue.submit("compare_runs", arguments)
        job_cli.run_worker(queue, limit=1)
        ended = queue.get(job_id)
    finally:
        queue.close()
    assert ended["status"] == "failed" and "outside the folders" in ended["error"], ended["error"]
    assert not saved_comparisons.cache_root().exists() or not any(saved_comparisons.cache_root().iterdir())


def test_a_folder_that_becomes_a_link_between_the_check_and_the_open_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race itself: the path is resolved inside, then a folder of it becomes a link before the
    open; the open follows no link, so it fails rather than read the file outside."""
    inside = _rows(_workspace() / "data" / "sub" / "rows.jsonl", 2, "bridge")
    outside = tmp_path / "elsewhere"
    _rows(outside / "rows.jsonl", 2, "secret")
    resolved = _confine._resolved

    def swap_after_resolving(typed: str, roots: list[Path]) -> tuple[Path, Path]:
        found = resolved(typed, roots)
        inside.unlink()
        inside.parent.rmdir()
        inside.parent.symlink_to(outside)
        return found

    monkeypatch.setattr(_confine, "_resolved", swap_after_resolving)
    from tempo_eval.io.errors import InputError
    from tempo_eval.io.stream import open_stream

    with _confine.reads_confined_to(_confine.allowed_roots()), pytest.raises(InputError, match="became a link"):
        open_stream(str(inside))


def test_outside_a_job_the_readers_follow_links_as_before(tmp_path: Path) -> None:
    from tempo_eval.io.dataset import load_dataset

    secret = _rows(tmp_path / "secret.jsonl", 2, "secret")
    link = tmp_path / "link.jsonl"
    link.symlink_to(secret)
    assert len(load_dataset(link).frame) == 2  # the command line reads what its user names


def test_the_compare_pages_corpus_swapped_for_a_link_outside_is_refused_where_it_is_opened(tmp_path: Path) -> None:
    """The corpus path typed on Compare is read by the page for each opened query: it is opened
    confined too (a file swapped for a link after the typed check is not read)."""
    from tempo_eval.io.trec_dataset import corpus_texts

    allowed, outside = tmp_path / "allowed", tmp_path / "outside"
    allowed.mkdir()
    outside.mkdir()
    corpus = allowed / "corpus.jsonl"
    corpus.write_text('{"doc_id": "d1", "text": "inside"}\n', encoding="utf-8")
    secret = outside / "secret.jsonl"
    secret.write_text('{"doc_id": "d1", "text": "the secret"}\n', encoding="utf-8")
    with _confine.reads_confined_to([allowed]):
        assert corpus_texts(corpus, ["d1"]) == {"d1": "inside"}
    corpus.unlink()
    corpus.symlink_to(secret)
    with _confine.reads_confined_to([allowed]), pytest.raises(ValueError):
        corpus_texts(corpus, ["d1"])
