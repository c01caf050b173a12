"""Reading inputs safely (issue 11): NUL bytes anywhere, Excel's sep= line, "nested too deeply", no
"at at", wide files, the input size limit and huge cells (located errors, bounded memory)."""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import pytest

from tempo_eval.io.cells import MAX_CELL_CHARS
from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.errors import InputError, json_error_text
from tests.support.paths import ROOT


def test_a_nul_byte_after_the_first_64_kib_is_refused_with_its_place() -> None:
    body = "".join(f"q{i},answer {i}\n" for i in range(8000))
    data = ("query,answer\n" + body + "late,bad\x00value\n").encode()
    assert data.index(b"\x00") > 1 << 16
    with pytest.raises(InputError, match="NUL byte at byte offset") as caught:
        load_dataset(data, name="d.csv")
    assert caught.value.line == 8002


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_excel_sep_line_sets_the_delimiter_and_keeps_line_numbers(newline: str) -> None:
    text = newline.join(["sep=;", "query;answer", "q1;a;b", ""])
    with pytest.raises(InputError) as caught:
        load_dataset(text.encode(), name="d.csv")
    assert caught.value.line == 3 and caught.value.row == 1  # the sep= line still counts
    good = load_dataset(newline.join(["sep=;", "query;answer", "q1;first, with a comma", ""]).encode(), name="d.csv")
    assert good.frame["answer"].tolist() == ["first, with a comma"]
    assert any("sep=;" in w for w in good.warnings)
    assert load_dataset(b"sep=,\nquery,answer\nq,a\n", name="d.csv").frame["query"].tolist() == ["q"]


def test_an_unknown_sep_line_is_refused() -> None:
    with pytest.raises(InputError, match="names the separator"):
        load_dataset(b"sep=#\nquery#answer\nq#a\n", name="d.csv")


def test_a_deeply_nested_json_cell_says_nested_too_deeply() -> None:
    cell = '{""a"":' * 5000 + "1" + "}" * 5000
    with pytest.raises(InputError, match="nested too deeply") as caught:
        load_dataset(f'query,answer,gold_ids\nq,a,"{cell}"\n'.encode(), name="d.csv")
    assert caught.value.column == "gold_ids"


def test_json_messages_never_say_at_at() -> None:
    assert json_error_text("Unterminated string starting at", 5) == "Unterminated string starting at character 5"
    for data, name in ((b'{"query": "q", "answer": "open\n', "d.jsonl"), (b'[{"query": "q, "answer": 1}]', "d.json"),
                       (b'query,answer,contexts\nq,a,"[""open]"\n', "d.csv")):
        with pytest.raises(InputError) as caught:
            load_dataset(data, name=name)
        assert "at at" not in str(caught.value), str(caught.value)


def test_a_wide_csv_loads_without_a_warning_per_column_and_errors_list_few_columns() -> None:
    n = 3000
    header = ",".join(["query", "answer", *(f"c{i}" for i in range(n))])
    row = ",".join(["q", "a", *("v" for _ in range(n))])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dataset = load_dataset(f"{header}\n{row}\n{row.replace('q', 'q2', 1)}\n".encode(), name="w.csv")
    assert len(dataset.frame.columns) == n + 3
    assert len(caught) <= 1, [str(w.message) for w in caught[:3]]
    with pytest.raises(InputError) as error:
        load_dataset(f"{header.replace('query', 'qq').replace('answer', 'aa')}\n{row}\n".encode(), name="w.csv")
    assert len(str(error.value)) < 1000 and f"({n + 2} in all)" in str(error.value)


def test_an_input_over_the_size_limit_is_refused_before_reading(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(b"query,answer\n" + b"q,a\n" * 100_000)  # 400 kB
    monkeypatch.setenv("TEMPO_EVAL_MAX_INPUT_MB", "0.1")
    with pytest.raises(InputError, match=r"0\.4 MB; the limit is 0\.1 MB.*--max-input-mb.*TEMPO_EVAL_MAX_INPUT_MB"):
        load_dataset(path)
    with pytest.raises(InputError, match="the limit is 0.1 MB"):
        load_dataset(path.read_bytes(), name="d.csv")
    assert len(load_dataset(path, max_bytes=10**6)) == 100_000  # the limit can be raised per call
    monkeypatch.setenv("TEMPO_EVAL_MAX_INPUT_MB", "1")
    assert len(load_dataset(path)) == 100_000


def test_a_gzip_that_inflates_past_the_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "d.csv.gz"
    path.write_bytes(gzip.compress(b"query,answer\n" + b"q,a\n" * 1_000_000))  # 4 MB in ~10 kB
    monkeypatch.setenv("TEMPO_EVAL_MAX_INPUT_MB", "1")
    with pytest.raises(InputError, match="decompressed, the file holds more than"):
        load_dataset(path)


@pytest.mark.parametrize("quoted", [True, False])
def test_a_cell_over_the_limit_is_located_by_row_and_column(quoted: bool) -> None:
    big = "x" * (MAX_CELL_CHARS + 1)
    cell = f'"{big}, with a comma"' if quoted else big
    data = f"query,answer,reference\nq1,a,b\nq2,{cell},r\n".encode()
    with pytest.raises(InputError, match="1,000,000") as caught:
        load_dataset(data, name="d.csv")
    assert (caught.value.row, caught.value.line, caught.value.column) == (2, 3, "answer")
    ok = "y" * MAX_CELL_CHARS
    assert load_dataset(f"query,answer\nq1,{ok}\n".encode(), name="d.csv").frame["answer"][0] == ok


def test_reading_parquet_starts_no_arrow_worker_thread(tmp_path: Path) -> None:
    """An Arrow worker still starting when the process exits aborts it (exit 134); reading
    Parquet must not start one (bench/parquet_exit.py runs the CLI probe itself)."""
    import subprocess
    import sys

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "wrong.parquet"
    pq.write_table(pa.table({"query": ["q1"], "answer": ["a"], "ctx": [1.5], "extra": [{"a": 1}]}), path)
    script = f"""
import os, pyarrow
from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.errors import InputError
before = len(os.listdir('/proc/self/task'))
try:
    load_dataset({str(path)!r})
except InputError as error:
    raise SystemExit(f"unexpected: {{error}}")
print(len(os.listdir('/proc/self/task')) - before)
"""
    repo = ROOT
    done = subprocess.run([sys.executable, "-c", script], cwd=repo, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"
