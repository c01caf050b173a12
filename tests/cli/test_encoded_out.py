"""--out and the summary taken from the rows as written (issue 27): the batches scored by worker
processes reach the command line as `EncodedRows` (`on_results.take_encoded`), written to --out
and gathered for the summary without a frame made of them; the file and the scores are those the
frames of the same results give, byte for byte."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from tempo_eval.cli.evaluate_out import ResultsOut, ScoresOf, StreamedOut
from tempo_eval.common.schema import MetricResult, not_measurable
from tempo_eval.engine.runner import evaluate
from tempo_eval.engine.scoring import aggregate_frame
from tempo_eval.io.export import PartsWriter
from tempo_eval.store.results import encode_rows, encoded_columns, encoded_frame
from tempo_eval.store.runs import RunStore
from tests.engine import test_scoring_pool
from tests.engine.test_scoring_pool import _dataset, _metrics, _Pools, _stream

pools = test_scoring_pool.pools


def _encoded(first: int, n: int, *, runs: bool = False):
    rows = []
    for i in range(first, first + n):
        a = (not_measurable("a_metric", "row_error", f"boom {i}") if i % 4 == 0
             else MetricResult(metric="a_metric", score=i / 7, reason=f"a of row {i}", details={"years": [1990 + i]}))
        b = (MetricResult(metric="b_metric", score=float("nan"), reason="no code") if i % 5 == 0
             else MetricResult(metric="b_metric", score=1.0 - i / 100, reason=f"b of row {i} \u00e9"))
        rows.append((i, f"q{i}", [b, a], (f"run {i % 2}" if i % 3 else None) if runs else None))
    return encode_rows(1, rows, [])


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
@pytest.mark.parametrize("runs", [False, True])
def test_parts_written_from_columns_are_the_file_their_frames_write(tmp_path: Path, suffix: str, runs: bool) -> None:
    parts = [_encoded(0, 30, runs=runs), _encoded(30, 1, runs=runs), _encoded(31, 45, runs=runs)]
    by_frames, by_columns, mixed = (tmp_path / f"{name}{suffix}" for name in ("frames", "columns", "mixed"))
    with PartsWriter(by_frames) as writer:
        for part in parts:
            writer.write(encoded_frame(part))
    with PartsWriter(by_columns) as writer:
        for part in parts:
            writer.write_columns(encoded_columns(part))
    with PartsWriter(mixed) as writer:  # a resumed run: parts read from the store, then scored ones
        writer.write(encoded_frame(parts[0]))
        for part in parts[1:]:
            writer.write_columns(encoded_columns(part))
    assert by_columns.read_bytes() == by_frames.read_bytes()
    assert mixed.read_bytes() == by_frames.read_bytes()


def test_scores_gathered_from_columns_are_those_of_the_frames() -> None:
    parts = [_encoded(0, 30), _encoded(30, 17, runs=True)]
    from_frames, from_columns = ScoresOf(), ScoresOf()
    for part in parts:
        from_frames.add(encoded_frame(part))
        columns = encoded_columns(part)
        from_columns.add_columns(columns["metric"], columns["score"], columns["reason_code"], columns["reason"].__getitem__)
    expected, found = from_frames.frame(), from_columns.frame()
    # a NaN result without a reason code: missing either way (None here, NaN where a frame's text
    # column holds it), the same summary
    assert found["reason_code"].isna().tolist() == expected["reason_code"].isna().tolist()
    found_codes = found["reason_code"].where(found["reason_code"].notna(), None)
    expected_codes = expected["reason_code"].where(expected["reason_code"].notna(), None)
    assert found_codes.tolist() == expected_codes.tolist()
    assert_frame_equal(found.drop(columns="reason_code"), expected.drop(columns="reason_code"))
    assert found["reason_code"].notna().sum() == 12 and math.isnan(found["score"].iloc[1])
    assert_frame_equal(aggregate_frame(found, metrics=["a_metric", "b_metric"]),
                       aggregate_frame(expected, metrics=["a_metric", "b_metric"]))


class _Taker(list):
    """An `on_results` that also takes the rows as written: what it got, as frames."""

    def __init__(self) -> None:
        super().__init__()
        self.encoded = 0

    def __call__(self, part: pd.DataFrame) -> None:
        self.append(part)

    def take_encoded(self, rows) -> None:
        self.encoded += 1
        self.append(encoded_frame(rows))


def test_the_pools_batches_are_taken_as_written_and_are_the_runs_results(tmp_path: Path, pools: _Pools) -> None:
    taker = _Taker()
    result = evaluate(_stream(_dataset(300), 20), _metrics(), store=RunStore(tmp_path / "ws.sqlite"),
                      processes=2, on_results=taker)
    assert pools and result.results_streamed and taker.encoded == 15
    assert_frame_equal(pd.concat(taker, ignore_index=True), result.frame)


def test_the_command_lines_results_out_writes_what_the_frames_write(tmp_path: Path) -> None:
    parts = [_encoded(0, 12), _encoded(12, 12, runs=True)]
    out = StreamedOut(str(tmp_path / "taken.parquet"))
    taking = ResultsOut(out, ScoresOf())
    taking(encoded_frame(parts[0]))
    taking.take_encoded(parts[1])
    out.finish()
    with PartsWriter(tmp_path / "frames.parquet") as writer:
        for part in parts:
            writer.write(encoded_frame(part))
    assert (tmp_path / "taken.parquet").read_bytes() == (tmp_path / "frames.parquet").read_bytes()
    assert len(taking.scores.frame()) == 48
