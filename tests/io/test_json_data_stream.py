"""A JSON document `{"data": [...]}` is streamed an element at a time, and the stream collected is
the whole-file reader's read of the same bytes: the same rows, columns, mapping, warnings,
content hash and messages. Documents the whole-file reader reads another way (a DeepEval test
run, "data" twice, JSON Lines under a .json name) are still read whole."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.io._source import RawInput
from tempo_eval.io.errors import InputError
from tempo_eval.io.stream import open_stream, read_whole
from tests.io.test_stream import _peak_mb


def _collected(stream) -> tuple[pd.DataFrame, dict]:
    frames = [frame for _, frame in stream.batches()]
    frame = pd.concat(frames).reset_index(drop=True) if frames else pd.DataFrame()
    return frame, {"mapping": stream.mapping, "warnings": stream.warnings, "hash": stream.content_hash,
                   "rows": stream.n_rows, "columns": stream.columns, "format": stream.source_format}


def _both(path: Path, batch_rows: int = 2, mapping: dict | None = None):
    """(streamed, its frame and identity), (the whole-file read of the same bytes, the same)."""
    stream = open_stream(path, mapping, batch_rows=batch_rows)
    whole = read_whole(RawInput(path.name, path.read_bytes()), mapping, batch_rows=batch_rows)
    return (stream, *_collected(stream)), (whole, *_collected(whole))


def _message(call) -> str:
    with pytest.raises(InputError) as error:
        call()
    return str(error.value)


def _write(path: Path, text: str) -> Path:
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data) if path.suffix == ".gz" else data)
    return path


_ROWS = [
    {"query_id": "q1", "query": "When did it open?", "answer": "In 1990.", "contexts": ["It opened in 1990."]},
    {"query_id": "q2", "query": "Caf\u00e9 \u2014 o\u00f9? \U0001f600", "answer": "Paris\u2028\"quoted\"",
     "contexts": ["a", "b \\ c"], "metadata": {"nested": {"deep": [1, 2.5, None, True]}}},
    {"query_id": "q3", "query": "Where?", "answer": "", "gold_ids": ["d1", "d2"]},  # a key first seen late
    {"query_id": "q4", "query": "\u65e5\u672c\u8a9e?", "answer": "\\u00e9 as text", "contexts": []},
    {"query_id": "q5", "query": "Why?", "answer": "Because.", "metadata": {}},
]


def _data(rows: list, before: str = "", after: str = "", indent: int | None = None) -> str:
    return "{" + before + '"data": ' + json.dumps(rows, indent=indent, ensure_ascii=False) + after + "}"


STREAMED = {
    "data only": _data(_ROWS),
    "data after another key": _data(_ROWS, before='"version": 3, "meta": {"source": "x", "list": [1, {"a": []}]}, '),
    "data before other keys": _data(_ROWS, after=', "count": 5, "testCases": "not a list", "columns": ["query"]'),
    "ascii escapes, indented": json.dumps({"note": "\u00e9", "data": _ROWS}, indent=2),
    "key written with an escape": '{"d\\u0061ta": ' + json.dumps(_ROWS) + "}",
    "byte order mark": "\ufeff" + _data(_ROWS),
    "whitespace around": "\n\t " + _data(_ROWS[:2], indent=1) + " \r\n",
    "a DeepEval key that is not a test run": _data(_ROWS, before='"testRunData": {"name": "x"}, "testCases": [], '),
    "one row": _data(_ROWS[:1]),
}


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
@pytest.mark.parametrize("batch_rows", [1, 2, 1000])
@pytest.mark.parametrize("name", list(STREAMED))
def test_a_data_document_is_streamed_as_the_whole_file_reader_reads_it(tmp_path: Path, name: str,
                                                                       suffix: str, batch_rows: int) -> None:
    path = _write(tmp_path / f"d{suffix}", STREAMED[name])
    (stream, frame, identity), (_, whole_frame, whole_identity) = _both(path, batch_rows)
    assert not stream.read_whole  # streamed an element at a time, not read whole
    pd.testing.assert_frame_equal(frame, whole_frame)
    assert identity == whole_identity
    assert stream.n_rows == len(json.loads(STREAMED[name].lstrip("\ufeff"))["data"])


def test_a_data_document_with_a_mapping_keeps_the_whole_file_readers_columns(tmp_path: Path) -> None:
    rows = [{"id": f"q{i}", "question": f"Q{i}?", "response": f"A{i}."} for i in range(7)]
    rows[5]["truth"] = "late key"
    path = _write(tmp_path / "d.json", _data(rows, before='"name": "set", '))
    mapping = {"query_id": "id", "query": "question", "answer": "response", "reference": "truth"}
    (stream, frame, identity), (_, whole_frame, whole_identity) = _both(path, 3, mapping)
    assert not stream.read_whole
    pd.testing.assert_frame_equal(frame, whole_frame)
    assert identity == whole_identity


READ_WHOLE = {
    "a DeepEval test run after the data": _data(_ROWS, after=', "testCases": [{"input": "x"}]'),
    "a DeepEval test run under testRunData": _data(
        _ROWS, before='"testRunData": {"testCases": [{"input": "Q?", "actualOutput": "A."}]}, '),
    "data twice (the last one counts)": _data(_ROWS, after=', "data": ' + json.dumps(_ROWS[:2])),
    "JSON Lines whose first object has data": '{"data": [{"query": "x"}], "query": "Q?", "answer": "A."}\n'
                                                '{"query": "R?", "answer": "B."}\n',
    "pandas' column orient with a data column": '{"data": {"0": 1}, "query": {"0": "Q?"}, "answer": {"0": "A."}}',
    "pandas' split orient": '{"columns": ["query", "answer"], "data": [["Q?", "A."], ["R?", "B."]]}',
}


@pytest.mark.parametrize("name", list(READ_WHOLE))
def test_other_object_documents_are_still_read_whole(tmp_path: Path, name: str) -> None:
    path = _write(tmp_path / "d.json", READ_WHOLE[name])
    (stream, frame, identity), (_, whole_frame, whole_identity) = _both(path)
    assert stream.read_whole and stream.n_rows
    pd.testing.assert_frame_equal(frame, whole_frame)
    assert identity == whole_identity


_FIRST = json.dumps(_ROWS[:3])[1:-1]

BAD = {
    "an empty array": '{"data": []}',
    "an empty array and other keys": '{"name": "x", "data": [], "more": 1}',
    "an element that is not an object": '{"data": [' + _FIRST + ', 3]}',
    "a list element": '{"data": [' + _FIRST + ', ["a"]]}',
    "invalid JSON after element 3": '{"data": [' + _FIRST + ', {"query": tru}]}',
    "cut after element 3": '{"data": [' + _FIRST + ",",
    "a trailing comma": '{"data": [' + _FIRST + ",]}",
    "invalid JSON after the array": '{"data": [' + _FIRST + '], "x": nul}',
    "the object not closed": '{"data": [' + _FIRST + "]",
    "a second value after the closing brace": '{"data": [' + _FIRST + "]} []",
    "a second object after the brace, same line": '{"data": [' + _FIRST + ']} {"data": []}',
    "a duplicate query id in row 3": '{"data": [{"query_id": "a", "query": "Q?", "answer": "A."}, '
                                     '{"query_id": "b", "query": "R?", "answer": "B."}, '
                                     '{"query_id": "a", "query": "S?", "answer": "C."}]}',
    "a bad list cell in row 2": '{"data": [{"query": "Q?", "contexts": ["x"]}, {"query": "R?", "contexts": "[\\"a"}]}',
    "nested too deeply in element 2": '{"data": [{"query": "Q?", "answer": "A."}, {"query": "R?", "answer": '
                                      + "[" * 100_000 + "]" * 100_000 + "}]}",
    "no rows key": '{"rows": [{"query": "Q?"}]}',
    "data not a list": '{"data": {"query": "Q?"}}',
}


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_data_document_gets_the_whole_file_readers_message(tmp_path: Path, name: str, suffix: str) -> None:
    path = _write(tmp_path / f"d{suffix}", BAD[name])
    whole = _message(lambda: _collected(read_whole(RawInput(path.name, path.read_bytes()), batch_rows=1)))
    assert _message(lambda: _collected(open_stream(path, batch_rows=1))) == whole


def test_a_data_element_longer_than_the_limit_is_refused_naming_it(tmp_path: Path) -> None:
    # refused while read (the element spans chunks): before it is held whole
    rows = [{"query": "Q?", "answer": "A."}, {"query": "R?", "answer": "A" * (9 << 20)}]
    path = _write(tmp_path / "d.json.gz", _data(rows, before='"name": "x", '))
    message = _message(lambda: open_stream(path, max_line_bytes=1 << 20))
    assert message.startswith("d.json.gz") and "element 2" in message and "1,048,576 characters" in message


def test_a_data_document_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    # before: read whole, 277 MB at peak for this 51 MB file (the imports alone: about 110 MB);
    # streamed an element at a time: 138 MB. On 208 MB (180,000 rows): 830 MB before, 144 MB now.
    import random

    rng = random.Random(3)
    words = [f"w{rng.getrandbits(24):06x}" for _ in range(5000)]
    rows = (json.dumps({"query_id": f"q{i}", "query": f"When was {i}?", "answer": " ".join(rng.choices(words, k=150))})
            for i in range(40_000))
    path = tmp_path / "big.json"
    with path.open("w", encoding="utf-8") as out:
        out.write('{"version": 1, "data": [')
        out.writelines(f"{',' * bool(i)}{row}\n" for i, row in enumerate(rows))
        out.write('], "count": 40000}')
    imports = "import pandas, pyarrow\nfrom tempo_eval.io.stream import open_stream\n"
    read = f"stream = open_stream({str(path)!r})\nassert sum(len(f) for _, f in stream.batches()) == 40000\n"
    peaks = [_peak_mb(code, tmp_path / "ws") for code in (imports, imports + read + "assert not stream.read_whole")]
    assert peaks[1] - peaks[0] < 100, peaks


def test_the_rows_under_data_equal_json_loads_whatever_the_pieces() -> None:
    import random

    from tempo_eval.io.json_array import NotAnArray, array_elements

    rng = random.Random(1)

    def pieces(text: str):
        most, at = rng.choice([1, 3, 50, 10_000]), 0
        while at < len(text):
            size = rng.randint(1, most)
            yield text[at:at + size]
            at += size

    for _ in range(200):
        rows = [{"a": rng.random(), "b": 'x\u00e9\\"' * rng.randint(0, 3), "c": [1, {"d": None}]}
                for _ in range(rng.randint(0, 6))]
        others = {"n": 12, "t": True, "s": "data", "l": [1.5e-3, {"data": [1]}], "testRunData": {"x": 1}}
        keys = rng.sample(list(others), rng.randint(0, len(others)))
        document = {**{k: others[k] for k in keys[:2]}, "data": rows, **{k: others[k] for k in keys[2:]}}
        text = json.dumps(document, indent=rng.choice([None, 1]))
        assert list(array_elements(pieces(text))) == rows
    for bad in ['{"data": [1],}', '{"data": [] "x": 1}', '{"data": [], "x": tru}', '{"x": 1}', '{"data": {}}',
                '{"data": [], "data": []}', '{"data": []', '{"data": [{}]} 1', '{"testCases": [], "data": []}']:
        with pytest.raises(NotAnArray):
            list(array_elements(pieces(bad)))
