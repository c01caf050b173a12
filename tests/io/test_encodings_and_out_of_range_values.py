"""Encodings and values at the edge of what a reader takes (issue 19.14-16): UTF-32 and UTF-16 named as
such, Parquet dates past 9999 and out-of-range timestamps named by row and column, a TREC tag shared by
two files of the same name."""

from __future__ import annotations

from pathlib import Path

import pytest

from tempo_eval.io.errors import InputError
from tests.support.cli import run_cli

# ---- 16: messages that mislead -----------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-32-le", "utf-32-be", "utf-32"])
def test_utf32_is_named_utf32(tmp_path: Path, encoding: str) -> None:
    from tempo_eval.io.dataset import load_dataset

    path = tmp_path / "data.csv"
    bom = {"utf-32-le": b"\xff\xfe\x00\x00", "utf-32-be": b"\x00\x00\xfe\xff", "utf-32": b""}[encoding]
    path.write_bytes(bom + "query,answer\nq,a\n".encode(encoding))
    with pytest.raises(InputError, match="UTF-32") as caught:
        load_dataset(path)
    assert "UTF-16" not in str(caught.value)


def test_utf16_is_still_named_utf16(tmp_path: Path) -> None:
    from tempo_eval.io.dataset import load_dataset

    path = tmp_path / "data.csv"
    path.write_bytes("query,answer\nq,a\n".encode("utf-16"))
    with pytest.raises(InputError, match="UTF-16"):
        load_dataset(path)


# ---- 14: Parquet dates Python cannot hold ------------------------------------------------------


def _parquet_with(tmp_path: Path, column: str, array: object) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "data.parquet"
    pq.write_table(pa.table({"query": ["a", "b"], "answer": ["In 2001.", "In 2002."], column: array}), path)
    return path


@pytest.mark.parametrize(
    ("days", "shown"), [(3_000_000, "10183-09-21"), (-800_000, "-0221-09-04")]
)
def test_arrow_values_names_the_row_column_and_date(tmp_path: Path, days: int, shown: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tempo_eval.io.cells import arrow_values

    path = _parquet_with(tmp_path, "reference_date", pa.array([0, days], type=pa.date32()))
    table = pq.read_table(path)
    with pytest.raises(InputError) as caught:
        arrow_values(table.column(2), "reference_date", "data.parquet")
    message = str(caught.value)
    assert message.startswith("data.parquet, row 2, column 'reference_date'") and shown in message
    assert arrow_values(table.column(0), "query", "data.parquet") == ["a", "b"]


# io/dataset.parquet_table: values through cells.arrow_values(column, name, source), not to_pylist
def test_a_parquet_date32_past_9999_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import pyarrow as pa

    from tempo_eval.io.dataset import load_dataset

    path = _parquet_with(tmp_path, "reference_date", pa.array([0, 3_000_000], type=pa.date32()))
    with pytest.raises(InputError, match=r"data.parquet, row 2, column 'reference_date': found '10183-09-21'"):
        load_dataset(path)
    code, err = run_cli(["evaluate", str(path), "--metrics", "temporal_faithfulness", "--out",
                         str(tmp_path / "o.csv"), "--no-progress"], capsys)
    assert code == 2 and "row 2" in err and "10183-09-21" in err and "Traceback" not in err


def test_a_parquet_timestamp_out_of_range_is_a_clear_error(tmp_path: Path) -> None:
    import pyarrow as pa

    from tempo_eval.io.dataset import load_dataset

    stamp = 400_000 * 365 * 86_400 * 1000  # about the year 401,700, in milliseconds
    path = _parquet_with(tmp_path, "reference_date", pa.array([0, stamp], type=pa.timestamp("ms")))
    with pytest.raises(InputError, match=r"row 2, column 'reference_date': found .*about the year 401,70"):
        load_dataset(path)
    # a column nobody reads keeps its Arrow type through pandas (which holds such years): no error
    other = _parquet_with(tmp_path, "when", pa.array([0, stamp], type=pa.timestamp("ms")))
    assert str(load_dataset(other).frame["when"][1]).startswith("401704-")


def test_a_tag_shared_by_two_files_of_the_same_name_reads_without_a_doubled_space(tmp_path: Path) -> None:
    from tests.support.trec import load_run

    for folder in ("x", "y"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "run.txt").write_text("q1 Q0 d1 1 1.0 bm25\n", encoding="utf-8")
    runs = load_run([tmp_path / "x" / "run.txt", tmp_path / "y" / "run.txt"])
    notes = [note for run in runs.values() for note in run.notes]
    assert notes and not any("  " in note for note in notes)
    assert any("bm25" in note and "another file named run.txt" in note for note in notes)

