"""Every JSON Lines reader splits on newlines only (not on Unicode line separators), and Parquet converts
only the columns that are read (issue 28)."""

from __future__ import annotations

from pathlib import Path


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
    # not read at all since issue 38 (tests/io/test_parquet_unmapped_columns.py), and said
    assert "embedding" not in dataset.frame.columns
    assert any("'embedding'" in w and "not read" in w for w in dataset.warnings)

