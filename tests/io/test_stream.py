"""Reading a dataset in batches (issue 27.1): the same rows, identity, warnings and error
messages as the whole-file reader, whatever the batch size."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.errors import InputError
from tempo_eval.io.stream import open_stream
from tests.io.test_malformed import CASES
from tests.support.paths import ROOT


def _read_whole(path: Path, mapping: dict | None = None):
    """The file read whole (its bytes, as an upload is read), the reference for the stream."""
    return load_dataset(Path(path).read_bytes(), mapping, name=Path(path).name)

def _streamed(path: Path, mapping: dict[str, str] | None = None, batch_rows: int = 2, **options):
    stream = open_stream(path, mapping, batch_rows=batch_rows, **options)
    frames = [frame for _, frame in stream.batches()]
    return stream, pd.concat(frames).reset_index(drop=True)


def _message(call) -> str:
    with pytest.raises(InputError) as error:
        call()
    return str(error.value)


def _rows(n: int) -> list[dict]:
    return [{"query_id": f"q{i}", "query": f"What happened in {1990 + i % 30}?",
             "answer": f"In {1990 + i % 30} it rose.", "contexts": [f"In {1990 + i % 30} it rose.", "Nothing."],
             "retrieved_ids": ["d1", "d2"], "notes": f"n{i}"} for i in range(n)]


def _write(path: Path, rows: list[dict]) -> Path:
    frame = pd.DataFrame(rows)
    if path.suffix == ".parquet":
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=7)
    elif path.name.endswith(".jsonl"):
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    elif path.name.endswith(".json"):
        path.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    else:
        for column in ("contexts", "retrieved_ids"):
            if column in frame.columns:
                frame[column] = frame[column].map(lambda v: v if isinstance(v, str) else json.dumps(v))
        frame.to_csv(path, index=False, sep="\t" if path.suffix == ".tsv" else ",")
    return path


@pytest.mark.parametrize("name", ["d.csv", "d.tsv", "d.jsonl", "d.parquet", "d.csv.gz", "d.jsonl.zst",
                                  "d.parquet.gz", "d.parquet.zst", "d.json", "d.json.gz"])
def test_streamed_rows_identity_and_warnings_equal_the_whole_file(tmp_path: Path, name: str) -> None:
    rows = _rows(23)
    if "parquet" not in name:
        rows[5]["retrieved_ids"] = "d1, d2"  # a comma-separated id: a warning naming row 6
    plain = _write(tmp_path / name.removesuffix(".gz").removesuffix(".zst"), rows)
    path = plain
    if name.endswith(".gz"):
        path = tmp_path / name
        path.write_bytes(gzip.compress(plain.read_bytes()))
    elif name.endswith(".zst"):
        path = tmp_path / name
        sink = pa.BufferOutputStream()
        with pa.CompressedOutputStream(sink, "zstd") as out:
            out.write(plain.read_bytes())
        path.write_bytes(sink.getvalue().to_pybytes())
    whole = _read_whole(path)
    stream, frame = _streamed(path, batch_rows=4)
    pd.testing.assert_frame_equal(frame, whole.frame.reset_index(drop=True), check_dtype=False)
    assert stream.content_hash == whole.content_hash
    assert stream.mapping == whole.mapping
    assert stream.n_rows == len(whole.frame) == 23
    assert stream.warnings == whole.warnings
    assert "parquet" in name or any("d1, d2" in w for w in whole.warnings)
    assert not stream.read_whole  # streamed, not read whole (compressed Parquet, JSON arrays too, issue 27.1)


def test_warnings_spanning_batches_are_counted_once_for_the_file(tmp_path: Path) -> None:
    # pipe-separated lists in rows of several batches: one warning, with the count of all of them;
    # an empty row skipped in each of two batches: one note with both
    lines = ["query_id,query,contexts,answer"]
    for i in range(12):
        lines.append(f"q{i},What in {2000 + i}?,a {i}|b {i},In {2000 + i}." if i % 5 == 1 else
                     f'q{i},What in {2000 + i}?,"[""a""]",In {2000 + i}.')
        if i in (2, 9):
            lines.append(",,,")
    path = tmp_path / "d.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    whole = _read_whole(path)
    stream, frame = _streamed(path, batch_rows=3)
    pd.testing.assert_frame_equal(frame, whole.frame, check_dtype=False)
    assert stream.warnings == whole.warnings
    assert any("skipped 2 row(s)" in w for w in whole.warnings)


DATASET_CASES = [c for c in CASES if c.kind == "dataset" and c.id != "missing file"]


@pytest.mark.parametrize("case", DATASET_CASES, ids=[c.id for c in DATASET_CASES])
def test_every_malformed_input_gets_the_whole_file_readers_message(tmp_path: Path, case) -> None:
    path = tmp_path / case.name
    path.write_bytes(case.data)
    expected = _message(lambda: _read_whole(path, case.mapping))
    assert _message(lambda: _streamed(path, case.mapping, batch_rows=1)) == expected


@pytest.mark.parametrize("name", ["d.csv", "d.jsonl"])
@pytest.mark.parametrize("problem", ["bad date", "duplicate id", "empty id", "bad list"])
def test_a_problem_in_a_later_batch_names_the_same_row_line_and_column(tmp_path: Path, name: str, problem: str) -> None:
    rows = [{"query_id": f"q{i}", "query": f"Q {i}\nsecond line", "answer": "a", "contexts": ["c"],
             "reference_date": "2024-01-01"} for i in range(40)]
    if problem == "bad date":
        rows[33]["reference_date"] = "the 45th of May"
    elif problem == "duplicate id":
        rows[37]["query_id"] = "q3"
    elif problem == "empty id":
        rows[29]["query_id"] = ""
    else:
        rows[31]["contexts"] = "[broken"
    path = _write(tmp_path / name, rows)
    expected = _message(lambda: _read_whole(path))
    assert "row " in expected
    assert _message(lambda: _streamed(path, batch_rows=5)) == expected


def test_a_fifo_is_refused_as_the_whole_file_reader_refuses_it(tmp_path: Path) -> None:
    fifo = tmp_path / "data.csv"
    os.mkfifo(fifo)
    assert _message(lambda: open_stream(fifo)) == _message(lambda: load_dataset(fifo))


def test_no_size_limit_by_default_and_one_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPO_EVAL_MAX_INPUT_MB", "0.001")  # the whole-file reader's limit: 1 kB
    path = _write(tmp_path / "d.csv", _rows(50))
    assert "the limit is" in _message(lambda: load_dataset(path))
    stream, frame = _streamed(path, batch_rows=10)
    assert len(frame) == 50
    assert "the limit is" in _message(lambda: open_stream(path, max_bytes=1000))


@pytest.mark.parametrize("name", ["d.jsonl", "d.jsonl.gz", "d.json"])
def test_a_key_first_seen_on_row_2500_is_mapped_as_the_whole_file_reader_maps_it(tmp_path: Path, name: str) -> None:
    # before: an error ("'gold_ids' first appears here, after the first 2,000 rows"); the first
    # pass now collects every key, so each batch has the whole file's columns and mapping
    rows = [{"query_id": f"q{i}", "query": f"What happened in {1990 + i % 30}?", "answer": "In 1990."}
            for i in range(3100)]
    rows[2499]["gold_ids"] = ["d1"]  # row 2,500
    rows[2999]["comment"] = "late"  # unmapped, kept
    text = (json.dumps(rows) if name.endswith(".json") else "".join(json.dumps(r) + "\n" for r in rows)).encode()
    path = tmp_path / name
    path.write_bytes(gzip.compress(text) if name.endswith(".gz") else text)
    whole = _read_whole(path)
    assert whole.mapping["gold_ids"] == "gold_ids"
    stream = open_stream(path, batch_rows=1000)
    assert stream.mapping == whole.mapping and "gold_ids" in stream.columns
    frames = [frame for _, frame in stream.batches()]
    assert all(list(frame.columns) == list(whole.frame.columns) for frame in frames)
    pd.testing.assert_frame_equal(pd.concat(frames).reset_index(drop=True), whole.frame.reset_index(drop=True),
                                  check_dtype=False)
    assert stream.warnings == whole.warnings and stream.content_hash == whole.content_hash


def test_an_unmapped_key_first_seen_late_is_kept(tmp_path: Path) -> None:
    rows = [{"query": f"q{i}", "answer": "a"} for i in range(10)]
    rows[7]["comment"] = "late"
    path = _write(tmp_path / "d.jsonl", rows)
    stream, frame = _streamed(path, batch_rows=3)
    assert frame["comment"].tolist()[7] == "late"


# ---- compressed Parquet: streamed from a decompressed copy --------------------------------------

def _parquet_gz(path: Path, n_rows: int) -> Path:
    """A gzip-compressed Parquet file of `n_rows` rows with about 1 kB of text each, row groups of
    2,000 rows, stored without Parquet's own compression (as some exporters write it)."""
    import random

    rng = random.Random(1)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
             for _ in range(20000)]
    table = pa.table({
        "query_id": [f"q{i}" for i in range(n_rows)],
        "query": [f"What happened in {1900 + i % 100}?" for i in range(n_rows)],
        "answer": [f"In {1900 + i % 100} " + " ".join(rng.choices(words, k=150)) for i in range(n_rows)],
    })
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, row_group_size=2000, compression="none")
    path.write_bytes(gzip.compress(sink.getvalue().to_pybytes(), 1))
    return path


def _peak_mb(code: str, home: Path) -> float:
    """Peak resident memory (VmHWM) of `code` in a fresh interpreter, in MB."""
    import subprocess
    import sys

    probe = code + "\nimport re; print(re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read())[1])"
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "TEMPO_EVAL_HOME": str(home)})
    assert done.returncode == 0, done.stderr[-2000:]
    return int(done.stdout.split()[-1]) / 1024


def test_a_compressed_parquet_file_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    # before: read whole by load_dataset, 457 MB at peak for this 65 MB file (the imports alone:
    # 113 MB); streamed from its decompressed copy, a row group at a time: 153 MB
    path = _parquet_gz(tmp_path / "big.parquet.gz", 60_000)
    imports = "import pandas, pyarrow.parquet\nfrom tempo_eval.io.stream import open_stream\n"
    read = imports + (f"stream = open_stream({str(path)!r})\nrows = sum(len(f) for _, f in stream.batches())\n"
                      "assert rows == 60000 and not stream.read_whole\n")
    baseline = _peak_mb(imports, tmp_path / "ws")
    streamed = _peak_mb(read, tmp_path / "ws")
    assert streamed - baseline < 100, (baseline, streamed)
    assert not list((tmp_path / "ws" / "tmp").iterdir())  # the copy had no name, and is gone


def _open_files(folder: Path) -> list[str]:
    """The files this process holds open in `folder` (an unnamed one shows as "... (deleted)")."""
    links = []
    for fd in Path("/proc/self/fd").iterdir():
        try:
            links.append(os.readlink(fd))
        except OSError:  # closed meanwhile (the listing's own descriptor)
            continue
    return [link for link in links if link.startswith(str(folder))]


def test_the_decompressed_copy_is_gone_when_a_stream_is_abandoned_and_a_damaged_file_is_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "ws"
    monkeypatch.setenv("TEMPO_EVAL_HOME", str(home))
    path = _parquet_gz(tmp_path / "d.parquet.gz", 5000)
    stream = open_stream(path, batch_rows=1000)
    copies = lambda: _open_files(home / "tmp")  # noqa: E731
    assert len(copies()) == 1 and not list((home / "tmp").iterdir())  # open, unnamed
    batches = stream.batches()
    next(batches)
    batches.close()  # abandoned after the first batch
    assert copies() == []

    damaged = tmp_path / "damaged.parquet.gz"
    damaged.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    assert _message(lambda: open_stream(damaged)) == _message(lambda: _read_whole(damaged))
    assert copies() == []


def test_a_copy_that_would_fill_the_disk_stops_with_a_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from tempo_eval.io import stream as stream_module

    monkeypatch.setenv("TEMPO_EVAL_HOME", str(tmp_path / "ws"))
    path = _parquet_gz(tmp_path / "d.parquet.gz", 200)
    free = shutil.disk_usage(tmp_path).free
    monkeypatch.setattr(stream_module, "MIN_FREE_BYTES", free)  # no room left for any copy
    with pytest.raises(OSError, match=r"d.parquet.gz: decompressing it for reading needs more disk space than is "
                                      r"free in .*ws/tmp \(0 MB written"):
        open_stream(path)


# ---- JSON: an array of objects streamed, other documents read whole ------------------------------

@pytest.mark.parametrize("text", [
    '[{"query": "When?", "answer": "In 1990."}, {"query": "Where?", "answer": "In 2001."}]',
    '\ufeff[{"query": "When?", "answer": "In 1990."}]',  # a byte order mark: the same warning
    '{"data": [{"query": "When?", "answer": "In 1990."}]}',  # streamed too
    '{"columns": ["query", "answer"], "data": [["When?", "In 1990."]]}',  # pandas' split orient, whole
    '{"query": "When?", "answer": "In 1990."}\n{"query": "Where?", "answer": "In 2001."}\n',  # JSON Lines
])
def test_every_form_of_json_document_reads_as_the_whole_file_reader_reads_it(tmp_path: Path, text: str) -> None:
    path = tmp_path / "d.json"
    path.write_text(text, encoding="utf-8")
    whole = _read_whole(path)
    stream, frame = _streamed(path, batch_rows=1)
    pd.testing.assert_frame_equal(frame, whole.frame.reset_index(drop=True), check_dtype=False)
    assert (stream.mapping, stream.warnings, stream.content_hash) == (whole.mapping, whole.warnings,
                                                                        whole.content_hash)
    assert (not stream.read_whole) == text.lstrip("\ufeff").startswith(("[", '{"data"'))


@pytest.mark.parametrize("text", [
    '[{"query": "When?"}, 3]', '[{"query": "When?"},]', '[]', '[{"query": "When?"}] x', '[{"query": "When?"',
    '[{"query": "When?", "query_id": "a"}, {"query": "Then?", "query_id": "a"}]',  # a duplicate id, row 2
    '[{"query": "When?", "contexts": "[\\"a\\""}]',
])
def test_a_bad_json_array_gets_the_whole_file_readers_message(tmp_path: Path, text: str) -> None:
    path = tmp_path / "d.json"
    path.write_text(text, encoding="utf-8")
    assert _message(lambda: _streamed(path, batch_rows=1)) == _message(lambda: _read_whole(path))


def test_a_json_array_is_streamed_in_bounded_memory(tmp_path: Path) -> None:
    # before: read whole, 332 MB at peak for this 67 MB file (the imports alone: about 110 MB);
    # streamed an element at a time: 141 MB
    import random

    rng = random.Random(2)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(6)) for _ in range(5000)]
    path = tmp_path / "big.json"
    with path.open("w", encoding="utf-8") as out:
        out.write("[")
        for i in range(60_000):
            row = {"query_id": f"q{i}", "query": f"What happened in {1900 + i % 100}?",
                   "answer": " ".join(rng.choices(words, k=150))}
            out.write(("," if i else "") + json.dumps(row))
        out.write("]")
    imports = "import pandas, pyarrow\nfrom tempo_eval.io.stream import open_stream\n"
    read = imports + (f"stream = open_stream({str(path)!r})\nrows = sum(len(f) for _, f in stream.batches())\n"
                      "assert rows == 60000 and not stream.read_whole\n")
    baseline = _peak_mb(imports, tmp_path / "ws")
    streamed = _peak_mb(read, tmp_path / "ws")
    assert streamed - baseline < 100, (baseline, streamed)


def test_array_elements_equal_json_loads_whatever_the_pieces() -> None:
    import random

    from tempo_eval.io.json_array import NotAnArray, array_elements

    rng = random.Random(0)

    def pieces(text: str, most: int):
        at = 0
        while at < len(text):
            size = rng.randint(1, most)
            yield text[at:at + size]
            at += size

    for _ in range(200):
        document = [{"a": rng.random(), "b": 'x\u00e9\\"' * rng.randint(0, 3), "c": [1, {"d": None}], "e": True}
                    for _ in range(rng.randint(0, 8))]
        document += [123, -4.5e-3, 1e21, "s", None, False, []][: rng.randint(0, 7)]
        text = json.dumps(document, indent=rng.choice([None, 1]))
        assert list(array_elements(pieces(text, rng.choice([1, 3, 50, 10_000])))) == json.loads(text)
    for bad in ["", "{}", "[1,", "[1 2]", "[1] x", '[{"a": tru}]', '["abc', "[1,]", "[", "[1}"]:
        with pytest.raises(NotAnArray):
            list(array_elements(pieces(bad, 2)))
