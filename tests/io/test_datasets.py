"""Loading datasets: every format, every naming convention, every list-cell style."""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tempo_eval.io.dataset import detect_mapping, load_dataset
from tempo_eval.io.delimited import _read_delimited_csv, _read_delimited_fast
from tempo_eval.io.errors import InputError

ROWS = [
    {
        "query_id": "a1",
        "query": "What happened in 1989?",
        "contexts": ["The Berlin Wall fell in 1989.", "Germany reunified in 1990."],
        "answer": "The Berlin Wall fell.",
        "reference": "The wall fell in 1989.",
        "retrieved_ids": ["d1", "d2"],
        "gold_ids": ["d1"],
    },
    {
        "query_id": "a2",
        "query": "When did it end, \"officially\"?",
        "contexts": ["It ended in 1991, | after talks."],
        "answer": "In 1991.",
        "reference": "1991",
        "retrieved_ids": ["d3"],
        "gold_ids": {"d3": 2, "d4": 1},
    },
]


def _csv_bytes(rows: list[dict], delimiter: str = ",") -> bytes:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), delimiter=delimiter, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in row.items()})
    return buffer.getvalue().encode()


def _records(dataset) -> list[dict]:
    return dataset.frame.to_dict("records")


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "json", "json-data", "parquet"])
def test_every_format_loads_the_same_canonical_rows(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / f"data.{fmt.split('-')[0]}"
    if fmt == "csv":
        path.write_bytes(_csv_bytes(ROWS))
    elif fmt == "tsv":
        path.write_bytes(_csv_bytes(ROWS, "\t"))
    elif fmt == "jsonl":
        path.write_text("\n".join(json.dumps(row) for row in ROWS) + "\n")
    elif fmt == "json":
        path.write_text(json.dumps(ROWS, indent=2))
    elif fmt == "json-data":
        path.write_text(json.dumps({"data": ROWS}))
    else:
        table = pa.table({
            "query_id": [r["query_id"] for r in ROWS],
            "query": [r["query"] for r in ROWS],
            "contexts": pa.array([r["contexts"] for r in ROWS], type=pa.list_(pa.string())),
            "answer": [r["answer"] for r in ROWS],
            "reference": [r["reference"] for r in ROWS],
            "retrieved_ids": pa.array([r["retrieved_ids"] for r in ROWS], type=pa.list_(pa.string())),
            "gold_ids": [json.dumps(r["gold_ids"]) for r in ROWS],
        })
        pq.write_table(table, path)
    dataset = load_dataset(path)
    assert _records(dataset) == ROWS
    assert dataset.source_format == fmt.split("-")[0]
    assert dataset.name == path.name
    assert dataset.mapping == {name: name for name in ROWS[0]}
    assert dataset.content_hash == hashlib.sha256(path.read_bytes()).hexdigest()
    assert dataset.warnings == []


def test_ragas_column_names_are_mapped() -> None:
    rows = [{
        "user_input": "When?", "retrieved_contexts": ["In 1990."], "response": "1990.",
        "reference": "1990", "retrieved_context_ids": ["d1"], "reference_context_ids": ["d1"],
    }]
    dataset = load_dataset(json.dumps(rows).encode(), name="ragas.json")
    assert dataset.mapping == {
        "query": "user_input", "contexts": "retrieved_contexts", "answer": "response",
        "reference": "reference", "retrieved_ids": "retrieved_context_ids", "gold_ids": "reference_context_ids",
    }
    assert _records(dataset) == [{
        "query_id": "q1", "query": "When?", "contexts": ["In 1990."], "answer": "1990.",
        "reference": "1990", "retrieved_ids": ["d1"], "gold_ids": ["d1"],
    }]


def test_legacy_ragas_names_question_and_ground_truth_are_mapped() -> None:
    data = b'question,contexts,answer,ground_truth\nWhen?,"[""x""]",1990,1990\n'
    assert load_dataset(data, name="d.csv").mapping == {
        "query": "question", "contexts": "contexts", "answer": "answer", "reference": "ground_truth"
    }


def test_deepeval_column_names_are_mapped() -> None:
    line = {"input": "When?", "actual_output": "In 1990.", "expected_output": "1990",
            "retrieval_context": ["It was 1990."], "context": ["ideal"]}
    dataset = load_dataset((json.dumps(line) + "\n").encode(), name="goldens.jsonl")
    assert dataset.mapping == {
        "query": "input", "contexts": "retrieval_context", "answer": "actual_output", "reference": "expected_output"
    }
    record = _records(dataset)[0]
    assert record["contexts"] == ["It was 1990."]
    # DeepEval's `context` (ideal context) is not the retrieved context: kept under its own name
    assert record["context"] == ["ideal"]


def test_detect_mapping_ignores_case_spaces_and_hyphens() -> None:
    assert detect_mapping(["Question ID", "User Input", "Retrieved-Contexts", "RESPONSE", "notes"]) == {
        "query_id": "Question ID", "query": "User Input", "contexts": "Retrieved-Contexts", "answer": "RESPONSE",
    }


def test_detect_mapping_prefers_our_own_name_and_warns_about_the_other() -> None:
    data = b"query,user_input,answer\nours,theirs,a\n"
    dataset = load_dataset(data, name="d.csv")
    assert dataset.mapping["query"] == "query"
    assert _records(dataset)[0]["user_input"] == "theirs"
    assert any("'user_input' also looks like 'query'" in w for w in dataset.warnings)


def test_explicit_mapping_maps_other_names_and_keeps_automatic_ones() -> None:
    data = b"Frage,Antwort,reference,notes\nWann?,1990,1990,x\n"
    dataset = load_dataset(data, {"query": "Frage", "answer": "Antwort"}, name="d.csv")
    assert dataset.mapping == {"query": "Frage", "answer": "Antwort", "reference": "reference"}
    assert _records(dataset) == [
        {"query_id": "q1", "query": "Wann?", "answer": "1990", "reference": "1990", "notes": "x"}
    ]


def test_explicit_mapping_wins_and_the_displaced_column_is_ignored_with_a_warning() -> None:
    data = b"query,better_query,answer\nold,new,a\n"
    dataset = load_dataset(data, {"query": "better_query"}, name="d.csv")
    assert _records(dataset) == [{"query_id": "q1", "query": "new", "answer": "a"}]
    assert any("column 'query' ignored" in w for w in dataset.warnings)


def test_automatic_mapping_uses_the_columns_an_explicit_mapping_left_free() -> None:
    data = b"query,answer,response\nq,gold answer,model answer\n"
    dataset = load_dataset(data, {"reference": "answer"}, name="d.csv")
    assert dataset.mapping == {"query": "query", "answer": "response", "reference": "answer"}


def test_a_query_id_without_query_text_is_enough_with_an_answer() -> None:
    dataset = load_dataset(b"qid,answer\n7,In 1990\n", name="d.csv")
    assert _records(dataset) == [{"query_id": "7", "answer": "In 1990"}]


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ('["a", "b, c"]', ["a", "b, c"]),
        ("['it\\'s', \"b\"]", ["it's", "b"]),
        ("('a', 'b')", ["('a', 'b')"]),  # not a list: it does not start with "[", so one value
        ("a | b |c", ["a", "b", "c"]),
        ("only one", ["only one"]),
        ("[]", []),
        ("", None),
        ("   ", None),
    ],
)
def test_list_cells_in_every_style(cell: str, expected: list[str] | None) -> None:
    data = _csv_bytes([{"query": "q", "contexts": cell}])
    assert _records(load_dataset(data, name="d.csv"))[0]["contexts"] == expected


def test_document_ids_written_as_numbers_become_text() -> None:
    data = _csv_bytes([{"query": "q", "retrieved_ids": "[3, 1, 2]", "gold_ids": "{'3': 2, 7: 1}"}])
    record = _records(load_dataset(data, name="d.csv"))[0]
    assert record["retrieved_ids"] == ["3", "1", "2"]
    assert record["gold_ids"] == {"3": 2, "7": 1}


def test_gold_ids_are_a_list_for_binary_and_a_dict_for_graded_relevance() -> None:
    rows = [{"query": "a", "retrieved_ids": ["d1"], "gold_ids": ["d1", "d2"]},
            {"query": "b", "retrieved_ids": ["d1"], "gold_ids": {"d1": 3, "d2": 0}},
            {"query": "c", "retrieved_ids": ["d1"], "gold_ids": "d1|d5"}]
    gold = [r["gold_ids"] for r in _records(load_dataset(json.dumps(rows).encode(), name="d.json"))]
    assert gold == [["d1", "d2"], {"d1": 3, "d2": 0}, ["d1", "d5"]]


def test_missing_cells_are_none_and_numbers_in_text_columns_become_text() -> None:
    rows = [{"id": 7, "query": "a", "answer": None}, {"id": 8.0, "query": "b", "answer": 42}, {"id": 9, "query": "c"}]
    records = _records(load_dataset(json.dumps(rows).encode(), name="d.json"))
    assert [(r["query_id"], r["answer"]) for r in records] == [("7", None), ("8", "42"), ("9", None)]


def test_query_ids_are_generated_by_row_when_absent() -> None:
    dataset = load_dataset(b"query,answer\na,x\nb,y\nc,z\n", name="d.csv")
    assert dataset.frame["query_id"].tolist() == ["q1", "q2", "q3"]
    assert "query_id" not in dataset.mapping


def test_generated_ids_follow_the_query_text_across_runs() -> None:
    data = b"query,answer,run\nA?,x,bm25\nB?,y,bm25\nB?,y2,dense\nA?,x2,dense\n"
    frame = load_dataset(data, name="d.csv").frame
    assert list(zip(frame["run"], frame["query_id"], frame["query"], strict=True)) == [
        ("bm25", "q1", "A?"), ("bm25", "q2", "B?"), ("dense", "q2", "B?"), ("dense", "q1", "A?"),
    ]


def test_the_same_query_id_in_two_runs_is_allowed() -> None:
    data = b"qid,answer,run\n1,x,bm25\n1,y,dense\n"
    assert len(load_dataset(data, name="d.csv")) == 2


def test_reference_dates_are_normalised_to_iso_dates() -> None:
    data = b"query,answer,reference_date\na,x,2024-05-31\nb,y,2024-05-31T10:00:00\nc,z,\n"
    assert load_dataset(data, name="d.csv").frame["reference_date"].tolist() == ["2024-05-31", "2024-05-31", None]


def test_unmapped_columns_are_kept_under_their_own_names() -> None:
    frame = load_dataset(b"query,answer,latency_ms,model\nq,a,120,gpt\n", name="d.csv").frame
    assert list(frame.columns) == ["query_id", "query", "answer", "latency_ms", "model"]
    assert frame.loc[0, "model"] == "gpt"


def test_parquet_keeps_the_types_of_unmapped_columns(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"qid": [1, 2], "answer": ["x", "y"], "latency": [0.5, 1.5]}), path)
    dataset = load_dataset(path)
    assert dataset.frame["query_id"].tolist() == ["1", "2"]
    assert dataset.frame["latency"].tolist() == [0.5, 1.5]


def test_a_utf8_bom_is_removed_with_a_warning() -> None:
    dataset = load_dataset(b"\xef\xbb\xbfquery,answer\nq,a\n", name="d.csv")
    assert dataset.mapping["query"] == "query"
    assert any("byte order mark" in w for w in dataset.warnings)


def test_crlf_quoted_line_breaks_blank_lines_and_empty_rows() -> None:
    data = b'query,answer\r\n"first\r\nline, with comma","say ""hi"""\r\n\r\n,\r\nq2,b\r\n'
    dataset = load_dataset(data, name="d.csv")
    assert dataset.frame[["query", "answer"]].values.tolist() == [
        ["first\r\nline, with comma", 'say "hi"'], ["q2", "b"]
    ]
    assert any("skipped 1 row(s) with every cell empty" in w for w in dataset.warnings)


def test_a_column_without_a_name_is_a_saved_index_and_dropped_with_a_note() -> None:
    dataset = load_dataset(b",query,answer\n0,q,a\n", name="d.csv")
    assert "Unnamed: 0" not in dataset.frame.columns  # issue 24.1: an index is never data
    assert any("column 1 has no name" in w for w in dataset.warnings)
    assert any("saved row index" in w for w in dataset.warnings)


TRICKY = (
    'id,query,contexts,answer\n'
    '1,"multi\nline ""quoted""",[],x\n'
    '2,a 5"" screen,"[""a""]",y\r\n'
    '\n'
    '3,unicode é ü 年,a|b,\n'
    ',,,\n'
    '4,"",,"z"\n'
    '5,"trailing quote pair ""x""",[],w\n'
)


def test_fast_reader_and_csv_module_reader_agree_on_tricky_files() -> None:
    data = TRICKY.encode()
    slow_warnings: list[str] = []
    fast_warnings: list[str] = []
    slow = _read_delimited_csv(data.decode(), "d.csv", ",", slow_warnings)
    fast = _read_delimited_fast(data, "d.csv", ",", fast_warnings)
    assert fast is not None
    assert fast.columns == slow.columns
    assert {k: list(v) for k, v in fast.values.items()} == {k: list(v) for k, v in slow.values.items()}
    assert list(fast.lines) == list(slow.lines) == [2, 4, 6, 8, 9]
    assert fast_warnings == slow_warnings == ["d.csv: skipped 1 row(s) with every cell empty"]
    assert slow.values["query"] == ("multi\nline \"quoted\"", 'a 5"" screen', "unicode é ü 年", "", 'trailing quote pair "x"')


def test_a_stray_quote_inside_a_value_is_read_literally() -> None:
    # an odd number of quotes makes the fast reader decline; the csv module reads it
    data = b'query,answer\n5" screen,a\n'
    assert _read_delimited_fast(data, "d.csv", ",", []) is None
    assert _records(load_dataset(data, name="d.csv")) == [{"query_id": "q1", "query": '5" screen', "answer": "a"}]


def test_a_file_the_fast_reader_declines_loads_the_same() -> None:
    plain = b"query,answer\nq,a\n"
    quoted_header = b'"query","answer"\nq,a\n'
    assert _read_delimited_fast(quoted_header, "d.csv", ",", []) is None
    assert _records(load_dataset(plain, name="d.csv")) == _records(load_dataset(quoted_header, name="d.csv"))


def test_error_lines_are_right_after_multi_line_cells_on_the_fast_path() -> None:
    data = b'query,contexts\n"a\nb\nc",[]\nq2,[]\nq3,"[oops"\n'
    with pytest.raises(InputError) as caught:
        load_dataset(data, name="d.csv")
    assert (caught.value.row, caught.value.line, caught.value.column) == (3, 6, "contexts")


def test_uploaded_file_objects_bytes_and_paths_give_the_same_dataset(tmp_path: Path) -> None:
    data = _csv_bytes(ROWS)
    path = tmp_path / "up.csv"
    path.write_bytes(data)

    class Upload:  # shaped like streamlit's UploadedFile
        name = "up.csv"

        def getvalue(self) -> bytes:
            return data

    buffer = io.BytesIO(data)
    buffer.name = str(tmp_path / "up.csv")
    loaded = [load_dataset(path), load_dataset(str(path)), load_dataset(Upload()), load_dataset(buffer),
              load_dataset(data, name="up.csv")]
    assert {d.name for d in loaded} == {"up.csv"}
    assert {d.content_hash for d in loaded} == {hashlib.sha256(data).hexdigest()}
    assert all(_records(d) == ROWS for d in loaded)


def test_identical_content_under_another_name_has_the_same_hash() -> None:
    data = _csv_bytes(ROWS)
    assert load_dataset(data, name="a.csv").content_hash == load_dataset(data, name="b.csv").content_hash


def test_format_argument_overrides_the_extension() -> None:
    dataset = load_dataset(b'{"query": "q", "answer": "a"}\n', name="export.txt", format="jsonl")
    assert dataset.source_format == "jsonl"


def test_gzipped_datasets_are_read_transparently(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"query": "q", "answer": "a"}\n'))
    dataset = load_dataset(path)
    assert dataset.source_format == "jsonl"
    assert _records(dataset) == [{"query_id": "q1", "query": "q", "answer": "a"}]


def test_a_cell_at_the_size_limit_is_accepted() -> None:
    from tempo_eval.io.cells import MAX_CELL_CHARS

    data = ("query,answer\nq," + "x" * MAX_CELL_CHARS + "\n").encode()
    assert len(_records(load_dataset(data, name="d.csv"))[0]["answer"]) == MAX_CELL_CHARS


def test_a_wrong_argument_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="expected a path"):
        load_dataset(12345)


def comma_separated_ids_warning(
    values: list, *, source: str, column: str, place: Callable[[int], dict]
) -> str | None:
    """The warning for the first id cell that looks like several ids separated by commas, with
    its place (`place(index)` gives its row and line), as the readers give it; None when none."""
    from tempo_eval.io.cells import comma_separated_problem

    found = comma_separated_problem(values)
    if found is None:
        return None
    index, problem = found
    return str(InputError(problem, source=source, column=column, **place(index)))


def test_an_id_cell_that_looks_comma_separated_gets_a_warning_naming_its_place() -> None:
    from tempo_eval.io.cells import list_cell

    values = ['["d1", "d2"]', "d1 | d2", "doc-7", "d1, d2, d3", "d4,d5"]
    lines = [2, 3, 4, 5, 7]
    warning = comma_separated_ids_warning(
        values, source="data.csv", column="retrieved_ids",
        place=lambda i: {"row": i + 1, "line": lines[i]},
    )
    assert warning is not None
    assert warning.startswith("data.csv, row 4 (line 5), column 'retrieved_ids': ")
    assert "'d1, d2, d3'" in warning and "'|'" in warning and "JSON list" in warning
    assert list_cell("d1, d2, d3", ids=True) == ["d1, d2, d3"]  # parsing itself is unchanged


@pytest.mark.parametrize(
    "values", [["d1 | d2", '["a, b"]', '{"d1, x": 1}', "plain"], [["d1, d2"], None, float("nan")], []]
)
def test_lists_written_properly_get_no_comma_warning(values: list) -> None:
    assert comma_separated_ids_warning(
        values, source="d.csv", column="gold_ids", place=lambda i: {"row": i + 1, "line": None}
    ) is None


def test_comma_separated_id_cells_are_kept_but_warned_about():
    from tempo_eval.io import load_dataset

    dataset = load_dataset(b'query,answer,retrieved_ids\nq?,a,"d1, d2, d3"\n', name="d.csv")
    assert dataset.frame["retrieved_ids"][0] == ["d1, d2, d3"]
    assert any("row 1" in w and "retrieved_ids" in w and "'|'" in w for w in dataset.warnings), dataset.warnings
