"""The corpus of malformed inputs: each raises InputError naming the place and what was expected.

One table; each case gives the input, the file name, the fragments its message must contain
(what was found and what was expected) and the place it must name (attributes the dashboard
uses to highlight the spot).
"""

from __future__ import annotations

import gzip
import io
import json
import pickle
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tempo_eval.io.cells import MAX_CELL_CHARS
from tempo_eval.io.conversation import parse_conversation
from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.errors import InputError
from tests.support.trec import load_qrels, load_run


@dataclass
class Case:
    id: str
    kind: str  # dataset | run | runs | qrels | conversation
    data: Any
    name: str
    fragments: tuple[str, ...]
    place: dict[str, Any] = field(default_factory=dict)  # expected InputError attributes
    mapping: dict[str, str] | None = None


def _parquet_bytes() -> bytes:
    buffer = io.BytesIO()
    pq.write_table(pa.table({"query": ["q"], "answer": ["a"]}), buffer)
    return buffer.getvalue()


HUGE = "x" * (MAX_CELL_CHARS + 1)

CASES = [
    # ---- datasets: the file as a whole ----
    Case("empty file", "dataset", b"", "data.csv", ("the file is empty", "expected a header line")),
    Case("blank file", "dataset", b"\n  \n\n", "data.csv", ("the file is empty",)),
    Case("header only", "dataset", b"query,answer\n", "data.csv", ("no data rows", "expected one row per query"), {"line": 2}),
    Case("semicolon delimiter", "dataset", b"query;answer\nq;a\n", "data.csv",
         ("contains semicolons", "expected columns separated by commas"), {"line": 1}),
    Case("tab-separated named .csv", "dataset", b"query\tanswer\nq\ta\n", "data.csv",
         ("contains tabs", "expected columns separated by commas", ".tsv"), {"line": 1}),
    Case("comma-separated named .tsv", "dataset", b"query,answer\nq,a\n", "data.tsv",
         ("contains commas", "expected columns separated by tabs", ".csv"), {"line": 1}),
    Case("non-UTF-8 byte", "dataset", b"query,answer\nq1,ok\nq2,caf\xe9\n", "data.csv",
         ("0xe9", "byte offset 25", "not valid UTF-8", "save the file as UTF-8"), {"line": 3}),
    Case("UTF-16 file", "dataset", "query,answer\nq,a\n".encode("utf-16"), "data.csv",
         ("UTF-16", "expected UTF-8")),
    Case("Excel workbook named .csv", "dataset", b"PK\x03\x04rest-of-zip", "data.csv",
         ("Excel workbook", "expected UTF-8 text")),
    Case("Parquet named .csv", "dataset", _parquet_bytes(), "data.csv",
         ("this is a Parquet file", "format='parquet'")),
    Case("text named .parquet", "dataset", b"query,answer\nq,a\n", "data.parquet",
         ("not a Parquet file", "expected a Parquet file")),
    Case("truncated Parquet", "dataset", _parquet_bytes()[:40], "data.parquet",
         ("could not read the Parquet file", "expected a complete Parquet file")),
    Case("unknown extension", "dataset", b"query,answer\nq,a\n", "data.txt",
         ("cannot tell the format", "expected a name ending in .csv")),
    Case("broken gzip", "dataset", b"\x1f\x8b\x08\x00broken", "data.csv.gz",
         ("could not be decompressed", "expected a complete .gz file")),
    Case("missing file", "dataset", "/nonexistent/dir/data.csv", "data.csv", ("file not found",)),
    # ---- datasets: the header and the columns ----
    Case("missing query column", "dataset", b"a,b,c\n1,2,3\n", "data.csv",
         ("no column for 'query'", "found columns: a, b, c", "mapping={'query': '...'}")),
    Case("nothing to evaluate", "dataset", b"query,notes\nq,n\n", "data.csv",
         ("no column for 'answer', 'contexts' or 'retrieved_ids'", "expected at least one of them",
          "found columns: query, notes")),
    Case("misspelt column", "dataset", b"querry,answer\nq,a\n", "data.csv",
         ("no column for 'query'", "did you mean mapping={'query': 'querry'}")),
    Case("mapping names a missing column", "dataset", b"frage,answer\nq,a\n", "data.csv",
         ("mapping={'query': 'question_text'}", "does not exist", "expected one of the columns found: frage, answer"),
         mapping={"query": "question_text"}),
    Case("mapping with an unknown key", "dataset", b"frage,answer\nq,a\n", "data.csv",
         ("mapping key 'qurey'", "expected one of query_id, query"), mapping={"qurey": "frage"}),
    Case("duplicate header name", "dataset", b"query,answer,answer\nq,a,b\n", "data.csv",
         ("'answer' appears twice in the header", "columns 2 and 3", "expected unique column names"), {"line": 1}),
    # ---- datasets: rows and cells ----
    Case("ragged row, too many values", "dataset", b"query,answer\nq1,a\nq2,a,b\n", "data.csv",
         ("found 3 values", "expected 2", "without double quotes"), {"row": 2, "line": 3}),
    Case("ragged row, too few values", "dataset", b"query,answer,reference\nq1,a,r\nq2,a\n", "data.csv",
         ("found 2 values", "expected 3", "is a value missing"), {"row": 2, "line": 3}),
    Case("unclosed quote", "dataset", b'query,answer\nq1,a\nq2,"never closed\nq3,a\n', "data.csv",
         ("never closed", "expected a closing double quote"), {"row": 2, "line": 3}),
    Case("unparseable list cell", "dataset", b'query,contexts\nq1,"[""a"", "\n', "data.csv",
         ("could not read a list", "unclosed bracket",
          "expected a JSON list, a Python list literal or values separated by '|'"),
         {"row": 1, "line": 2, "column": "contexts"}),
    Case("list cell after a multi-line cell", "dataset",
         b'query,contexts\n"two\nlines",[]\nq2,"[1, 2"\n', "data.csv",
         ("could not read a list", "expected a JSON list"), {"row": 2, "line": 4, "column": "contexts"}),
    Case("deeply nested list cell", "dataset", ("query,contexts\nq,\"" + "[" * 50_000 + "\"\n").encode(), "data.csv",
         ("could not read a list", "expected a JSON list"), {"row": 1, "column": "contexts"}),
    Case("deeply nested JSON Lines", "dataset", ("[" * 50_000 + "\n").encode(), "data.jsonl",
         ("nested too deeply", "expected one flat JSON object per line"), {"line": 1}),
    Case("number inside contexts", "dataset", b'query,contexts\nq1,"[""a"", 3]"\n', "data.csv",
         ("item 2 of the list is a number (3)", "expected text"), {"row": 1, "column": "contexts"}),
    Case("object where a list belongs", "dataset", b'query,retrieved_ids\nq1,"{""d1"": 1}"\n', "data.csv",
         ("found an object", "expected a JSON list"), {"column": "retrieved_ids"}),
    Case("non-integer grade", "dataset", b'query,retrieved_ids,gold_ids\nq,d1,"{""d1"": ""high""}"\n', "data.csv",
         ("the grade of 'd1' is the text 'high'", "integer grades"), {"row": 1, "column": "gold_ids"}),
    Case("bad reference date", "dataset", b"query,answer,reference_date\nq,a,31/05/2024\n", "data.csv",
         ("'31/05/2024'", "expected an ISO date like 2024-05-31"), {"column": "reference_date"}),
    Case("huge cell", "dataset", f"query,answer\nq,{HUGE}\n".encode(), "data.csv",
         ("1,000,001 characters", "expected at most 1,000,000"), {"row": 1, "line": 2, "column": "answer"}),
    Case("huge cell in JSON Lines", "dataset", json.dumps({"query": "q", "answer": HUGE}).encode(), "data.jsonl",
         ("1,000,001 characters", "expected at most 1,000,000"), {"line": 1, "column": "answer"}),
    Case("duplicate query id", "dataset", b"id,query,answer\n7,a,x\n8,b,y\n7,c,z\n", "data.csv",
         ("query id '7' appears twice", "first in row 1 (line 2)", "expected each query once"),
         {"row": 3, "line": 4, "column": "id"}),
    Case("duplicate query in one run", "dataset", b"query,answer,run\nq,a,bm25\nq,b,bm25\n", "data.csv",
         ("appears twice in run 'bm25'", "first in row 1", "expected each query once per run"), {"row": 2}),
    Case("empty query id", "dataset", b"qid,query,answer\n1,a,x\n,b,y\n", "data.csv",
         ("the query id is empty", "expected an id in every row"), {"row": 2, "column": "qid"}),
    Case("JSON Lines syntax error", "dataset", b'{"query": "a", "answer": "x"}\n{"query": "b" "answer": "y"}\n',
         "data.jsonl", ("not valid JSON", "expected one JSON object per line"), {"line": 2}),
    Case("JSON Lines line is a list", "dataset", b'{"query": "a", "answer": "x"}\n\n["b", "y"]\n', "data.jsonl",
         ("found a JSON list", "expected one JSON object per line"), {"line": 3}),
    Case("JSON array named .jsonl", "dataset", b'[{"query": "a",\n "answer": "x"}]\n', "data.jsonl",
         ("not valid JSON", "name the file .json"), {"line": 1}),
    Case("JSON object without data", "dataset", b'{"rows": [{"query": "a"}]}', "data.json",
         ("found an object with keys rows", '{"data": [...]}')),
    Case("JSON syntax error", "dataset", b'[\n {"query": "a", "answer": "x"},\n {"query": "b" "answer": "y"}\n]',
         "data.json", ("not valid JSON", "expected a list of objects"), {"line": 3}),
    Case("JSON item not an object", "dataset", b'[{"query": "a", "answer": "x"}, "b"]', "data.json",
         ("found a JSON string 'b'", "expected an object"), {"row": 2}),
    Case("text where a list of ids belongs (JSON)", "dataset", b'[{"query": "a", "retrieved_ids": {"d1": 1}}]',
         "data.json", ("found an object", "expected a JSON list"), {"row": 1, "column": "retrieved_ids"}),
    # ---- TREC runs and qrels ----
    Case("5-field run line", "run", b"q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5\n", "bm25.run",
         ("found 5 fields", "expected 6 fields", "qid Q0 docid rank score tag"), {"line": 2}),
    Case("non-numeric score", "run", b"# comment\nq1 Q0 d1 1 high bm25\n", "bm25.run",
         ("found 'high'", "expected a number as the score"), {"line": 2, "column": "score"}),
    Case("NaN score", "run", b"q1 Q0 d1 1 nan bm25\n", "bm25.run", ("found 'nan'", "expected a number"), {"line": 1}),
    Case("non-integer rank", "run", b"q1 Q0 d1 0.9 1 bm25\n", "bm25.run",
         ("found '0.9'", "expected an integer rank"), {"line": 1, "column": "rank"}),
    Case("duplicate document in a run", "run", b"q1 Q0 d1 1 2 bm25\nq1 Q0 d2 2 1 bm25\n\nq1 Q0 d1 3 0.5 bm25\n",
         "bm25.run", ("'d1' appears twice for query 'q1'", "at line 1 and at line 4", "expected each (query, document) pair once"),
         {"line": 4}),
    Case("qrels line given as a run", "run", b"q1 0 d1 1\n", "bm25.run",
         ("found 4 fields", "expected 6 fields", "read_qrels"), {"line": 1}),
    Case("run with only comments", "run", b"# nothing here\n\n", "bm25.run", ("no run lines found", "expected 6 fields")),
    Case("non-UTF-8 run", "run", b"q1 Q0 d1 1 1 bm25\nq1 Q0 caf\xe9 2 0.5 bm25\n", "bm25.run",
         ("not valid UTF-8", "save the file as UTF-8"), {"line": 2}),
    Case("non-numeric relevance", "qrels", b"q1 0 d1 1\nq1 0 d2 yes\n", "qrels.txt",
         ("found 'yes'", "expected an integer relevance grade"), {"line": 2, "column": "rel"}),
    Case("fractional relevance", "qrels", b"q1 0 d1 1.5\n", "qrels.txt", ("found '1.5'", "expected an integer"), {"line": 1}),
    Case("run line given as qrels", "qrels", b"q1 Q0 d1 1 2.5 bm25\n", "qrels.txt",
         ("found 6 fields", "expected 4 fields", "read_runs"), {"line": 1}),
    Case("duplicate judgement", "qrels", b"q1 0 d1 1\nq1 0 d1 2\n", "qrels.txt",
         ("at line 1 and at line 2",), {"line": 2}),
    Case("empty qrels", "qrels", b"", "qrels.txt", ("no judgements found", "expected 4 fields")),
    # ---- conversations ----
    Case("conversation with no assistant turn", "conversation", "User: hello\nUser: anyone?", "conversation",
         ("no assistant turn", "expected at least one assistant turn")),
    Case("conversation starting with nothing parseable", "conversation", "Hello there\nUser: hi\nAssistant: yo",
         "conversation", ("found 'Hello there' before any turn label", "'User:' and 'Assistant:'"), {"line": 1}),
    Case("empty conversation", "conversation", "  \n ", "conversation", ("the conversation is empty", "expected JSON turns")),
    Case("context block with no answer after it", "conversation",
         "User: when?\nAssistant: 1990.\nContext:\n- doc", "conversation",
         ("no assistant turn after it", "before the 'Assistant:' turn"), {"line": 3}),
    Case("empty assistant turn", "conversation", "User: when?\nAssistant:\n\nUser: hello?", "conversation",
         ("the Assistant turn is empty",), {"line": 2}),
    Case("system turn", "conversation", "System: be nice\nUser: hi\nAssistant: hello", "conversation",
         ("found a system turn", "expected only 'User:' and 'Assistant:'"), {"line": 1}),
    Case("JSON turn with a wrong role", "conversation",
         '[{"role": "user", "content": "hi"}, {"role": "system", "content": "x"}]', "conversation",
         ("found 'system'", 'expected "user" or "assistant"'), {"row": 2, "column": "role"}),
    Case("JSON turn without content", "conversation", '[{"role": "assistant"}]', "conversation",
         ("found nothing", "expected the text of the turn"), {"row": 1, "column": "content"}),
    Case("JSON retrieval_context as text", "conversation",
         '{"turns": [{"role": "assistant", "content": "x", "retrieval_context": "doc"}]}', "conversation",
         ("found the text 'doc'", "expected a list of texts"), {"row": 1, "column": "retrieval_context"}),
    Case("conversation JSON syntax error", "conversation", '[{"role": "user",\n "content": "hi"', "conversation",
         ("not valid JSON", "expected JSON turns"), {"line": 2}),
]


def _load(case: Case) -> Any:
    if case.kind == "dataset":
        if case.id == "missing file":
            return load_dataset(case.data)
        return load_dataset(case.data, case.mapping, name=case.name)
    if case.kind == "run":
        return load_run(_named(case.data, case.name))
    if case.kind == "runs":
        return load_run([_named(data, name) for name, data in case.data])
    if case.kind == "qrels":
        return load_qrels(_named(case.data, case.name))
    return parse_conversation(case.data)


def _named(data: bytes, name: str) -> io.BytesIO:
    buffer = io.BytesIO(data)
    buffer.name = name
    return buffer


def test_the_corpus_has_at_least_thirty_malformed_inputs() -> None:
    assert len(CASES) >= 30
    assert len({case.id for case in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_malformed_input_raises_input_error_naming_place_and_expectation(case: Case) -> None:
    with pytest.raises(InputError) as caught:
        _load(case)
    error = caught.value
    message = str(error)
    # the place comes first: the file (or "conversation"), then line / row / column
    assert error.source == case.name
    assert message.startswith(case.name)
    for attribute, value in case.place.items():
        assert getattr(error, attribute) == value, (attribute, message)
    if error.line is not None:
        assert f"line {error.line}" in message
    if error.column is not None:
        assert repr(error.column) in message
    for fragment in case.fragments:
        assert fragment in message, (fragment, message)
    assert "expected" in message
    # a clean error: no chained exception (and so no second traceback) behind it
    assert error.__cause__ is None
    assert error.__context__ is None or error.__suppress_context__
    assert "Traceback" not in message


def test_input_error_is_a_value_error_that_survives_pickling() -> None:
    error = InputError("found 'x'; expected y", source="data.csv", row=7, line=8, column="contexts")
    assert isinstance(error, ValueError)
    assert str(error) == "data.csv, row 7 (line 8), column 'contexts': found 'x'; expected y"
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.source, copy.row, copy.line, copy.column, str(copy)) == (
        "data.csv", 7, 8, "contexts", str(error)
    )


def test_input_error_without_a_place_is_just_the_problem() -> None:
    assert str(InputError("no run files given")) == "no run files given"


def test_gzip_dataset_with_an_error_names_the_gz_file() -> None:
    data = gzip.compress(b"query,answer\nq1,a\nq2,a,b\n")
    with pytest.raises(InputError, match=r"^data\.csv\.gz, row 2 \(line 3\): found 3 values"):
        load_dataset(data, name="data.csv.gz")
