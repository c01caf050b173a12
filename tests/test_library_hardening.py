"""Issue 28: secrets in tracebacks of log records, a dead lock holder whose pid was reused."""

from __future__ import annotations

import io
import logging
import os
import socket
import time
from pathlib import Path

import pandas as pd

from tempo_eval.common.process import own_start_time, process_start_time
from tempo_eval.common.secrets import _MaskingFilter
from tempo_eval.io.dataset import Dataset
from tempo_eval.store.db import DB_FILENAME
from tempo_eval.store.runs import RunStore

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


def _dataset() -> Dataset:
    frame = pd.DataFrame({"query_id": ["q1"], "answer": ["In 2001."]})
    return Dataset(frame=frame, name="d.csv", mapping={}, content_hash="h-lock", source_format="csv", warnings=[])


def test_a_lock_whose_holder_had_this_very_pid_but_another_start_time_is_taken_over(tmp_path: Path) -> None:
    # a restarted container's app often gets the pid of the process that was killed
    store = RunStore(tmp_path / DB_FILENAME)
    run_id, _ = store.create_or_resume_run(store.save_dataset(_dataset()), {"metrics": ["x"]})
    with store.connection:
        store.connection.execute(
            "INSERT OR REPLACE INTO run_locks (run_id, token, pid, host, heartbeat, started)"
            " VALUES (?, 'killed', ?, ?, ?, ?)",
            (run_id, os.getpid(), socket.gethostname(), time.time(), own_start_time() - 1000),
        )
    assert store.acquire_run(run_id) is None  # the holder is dead: taken over


def test_a_lock_held_by_a_live_store_of_this_process_is_still_respected(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    holder = RunStore(path)
    run_id, _ = holder.create_or_resume_run(holder.save_dataset(_dataset()), {"metrics": ["x"]})
    assert holder.acquire_run(run_id) is None
    other = RunStore(path)
    assert other.acquire_run(run_id) == {"pid": os.getpid(), "host": socket.gethostname(),
                                         "heartbeat": other.connection.execute(
                                             "SELECT heartbeat FROM run_locks").fetchone()[0]}


def test_process_start_time_tells_processes_apart() -> None:
    import subprocess
    import sys

    assert own_start_time() == process_start_time(os.getpid()) is not None
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(5)"])
    try:
        assert process_start_time(child.pid) is not None
    finally:
        child.kill()
        child.wait()
    assert process_start_time(child.pid) is None


def test_exported_labels_with_a_line_separator_in_a_claim_import_again() -> None:
    from tempo_eval.store.labels import LabelStore

    labels = LabelStore()
    claim = "The tower\u2028was built in 1889.\u2029"
    labels.set_label(claim, ["It was completed in 1889."], "SUPPORTED")
    exported = labels.export("jsonl")
    assert "\u2028".encode() in exported  # written raw (ensure_ascii=False)
    fresh = labels
    assert fresh.import_labels(exported, "labels.jsonl") == 1
    assert list(fresh.frame()["claim"]) == [claim]


def test_every_json_lines_reader_splits_on_newlines_only() -> None:
    from tempo_eval.io.conversation import load_conversations
    from tempo_eval.io.dataset import load_dataset
    from tempo_eval.io.trec_dataset import load_corpus

    row = '{"query": "When?", "answer": "In 2001.\\u2028Then 2002.", "contexts": ["It was 2001.\u2028 Later 2002."]}\n'
    frame = load_dataset(row.encode(), name="d.jsonl").frame
    assert frame["contexts"][0] == ["It was 2001.\u2028 Later 2002."]
    conversation = ('{"id": "c1", "turns": [{"role": "user", "content": "When?\u2028"}, '
                    '{"role": "assistant", "content": "In 2001.", "retrieval_context": ["It was 2001."]}]}\n')
    assert len(load_conversations(conversation.encode(), name="c.jsonl")) == 1
    corpus = load_corpus('{"doc_id": "d1", "text": "a\u2028b"}\n'.encode(), "corpus.jsonl")
    assert corpus == {"d1": "a\u2028b"}


def test_parquet_converts_only_the_columns_that_are_read(tmp_path: Path, monkeypatch) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    import tempo_eval.io.jsonfiles as jsonfiles
    from tempo_eval.io.dataset import load_dataset

    table = pa.table({
        "query": ["When?", "Who?"], "answer": ["In 2001.", "Bob"],
        "embedding": [[0.1] * 384, [0.2] * 384],
    })
    path = tmp_path / "d.parquet"
    pq.write_table(table, path)
    converted: list[str] = []
    real = jsonfiles.arrow_values
    monkeypatch.setattr(jsonfiles, "arrow_values", lambda column, name, source: converted.append(name) or real(column, name, source))
    dataset = load_dataset(path.read_bytes(), name="d.parquet")
    assert "embedding" not in converted and {"query", "answer"} <= set(converted)
    # not read at all since issue 38 (tests/test_parquet_unmapped_columns.py), and said
    assert "embedding" not in dataset.frame.columns
    assert any("'embedding'" in w and "not read" in w for w in dataset.warnings)
