"""Importing a Ray engine's output directory (`import-results`, issue 19.3): a real output imports; a
manifest, a block or a dataset that lies (wrong types, counts, ranges, duplicates, sizes) is refused with a
clear error within seconds and nothing stored."""

from __future__ import annotations

import gzip
import math
import time
from pathlib import Path

import pytest

from tempo_eval.cli import build_metrics, main
from tempo_eval.engine.distributed import output
from tempo_eval.engine.runner import run_config
from tempo_eval.io.dataset import load_dataset
from tempo_eval.metrics.base import MetricResult
from tempo_eval.store.runs import RunStore, config_hash
from tests.support.paths import ROOT
from tests.support.ray_data import write_dataset

SAMPLE = ROOT / "data" / "sample" / "temporal_qa.csv"
METRIC = "temporal_ndcg"


# ---- point 3: import-results -----------------------------------------------------------------

def _write_output(out: Path, scored: list[tuple[int, float, str | None]] | None = None, *,
                  n_rows: int = 3, block_size: int = 2) -> dict:
    """A Ray output directory as `evaluate_ray` writes it (manifest, rows, blocks), for the first
    `n_rows` sample rows; `scored` gives (row, score, reason_code) per result (default: 0.5 each)."""
    dataset = load_dataset(SAMPLE)
    frame = dataset.frame.iloc[:n_rows]
    config = run_config(build_metrics([METRIC]))
    n_blocks = max(1, math.ceil(n_rows / block_size))
    manifest = {"format": output.FORMAT_NAME, "format_version": output.FORMAT_VERSION,
                "dataset_name": dataset.name, "content_hash": dataset.content_hash, "mapping": {},
                "source_format": dataset.source_format, "warnings": [], "n_rows": n_rows, "config": config,
                "config_hash": config_hash(config), "metrics": [METRIC], "block_size": block_size,
                "n_blocks": n_blocks}
    output.prepare(out, manifest)
    write_dataset(out, frame)
    scored = scored if scored is not None else [(row, 0.5, None) for row in range(n_rows)]
    by_block: dict[int, list] = {}
    for row, score, code in scored:
        query_id = frame["query_id"].iloc[row] if row < n_rows else f"q{row}"
        result = MetricResult(metric=METRIC, score=score, reason="given", reason_code=code)
        by_block.setdefault(min(row // block_size, n_blocks - 1), []).append((row, query_id, None, [result]))
    for block, rows in by_block.items():
        output.write_block(out, block, *output.encode_block_rows(rows, [])[:2])
    return output.read_manifest(out)


def _stored(store: RunStore) -> tuple[int, int, int]:
    count = lambda table: store.connection.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]  # noqa: E731
    return count("datasets"), count("runs"), count("results")


def _refused(out: Path, tmp_path: Path, *expected: str) -> str:
    store = RunStore(tmp_path / "ws.sqlite")
    started = time.monotonic()
    with pytest.raises(ValueError) as caught:
        output.import_results(out, store=store)
    assert time.monotonic() - started < 10
    assert _stored(store) == (0, 0, 0)
    message = str(caught.value)
    for part in expected:
        assert part in message
    return message


def test_a_real_output_imports(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write_output(out)
    store = RunStore(tmp_path / "ws.sqlite")
    run_id = output.import_results(out, store=store)
    assert store.run_info(run_id)["status"] == "finished"
    assert _stored(store) == (1, 1, 3)


def test_a_huge_n_blocks_is_refused_at_once(tmp_path: Path) -> None:
    out = tmp_path / "out"
    manifest = _write_output(out)
    output.write_manifest(out, {**manifest, "n_blocks": 10**15})
    _refused(out, tmp_path, "manifest.json", "n_blocks", "make 2")


@pytest.mark.parametrize("change", [
    {"n_rows": "3"}, {"n_rows": -1}, {"block_size": 0}, {"block_size": True}, {"mapping": ["query"]},
    {"config": None}, {"config": {"metrics": "temporal_ndcg"}}, {"metrics": ["other"]},
    {"dataset_name": 7}, {"warnings": "x"}
])
def test_a_manifest_with_wrong_types_or_values_is_refused(tmp_path: Path, change: dict) -> None:
    out = tmp_path / "out"
    manifest = _write_output(out)
    output.write_manifest(out, {**manifest, **change})
    _refused(out, tmp_path, "manifest.json", next(iter(change)))


def test_a_manifest_row_count_other_than_the_datasets_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    manifest = _write_output(out)
    output.write_manifest(out, {**manifest, "n_rows": 5, "n_blocks": 3})
    _refused(out, tmp_path, "dataset.json.gz", "holds 3 rows", "n_rows is 5")


@pytest.mark.parametrize("missing", ["n_rows", "block_size", "n_blocks", "config", "metrics", "content_hash",
                                     "mapping", "source_format", "dataset_name"])
def test_a_manifest_missing_a_key_is_refused(tmp_path: Path, missing: str) -> None:
    out = tmp_path / "out"
    manifest = _write_output(out)
    output.write_manifest(out, {k: v for k, v in manifest.items() if k != missing})
    _refused(out, tmp_path, "manifest.json", missing)


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '"format"', "\xff\xfe", "[" * 100_000])
def test_a_manifest_that_is_not_a_json_object_is_refused(tmp_path: Path, text: str) -> None:
    out = tmp_path / "out"
    _write_output(out)
    (out / output.MANIFEST).write_bytes(text.encode("utf-8", "surrogateescape"))
    _refused(out, tmp_path, "manifest.json")


def test_the_cli_reports_a_bad_manifest_without_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEMPO_EVAL_HOME", str(tmp_path / "ws"))
    out = tmp_path / "out"
    manifest = _write_output(out)
    output.write_manifest(out, {**manifest, "block_size": "two"})
    assert main(["import-results", str(out), "--workspace", str(tmp_path / "ws")]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "block_size" in err and "Traceback" not in err


def test_a_gzip_bomb_dataset_stops_at_the_input_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEMPO_EVAL_MAX_INPUT_MB", "1")
    out = tmp_path / "out"
    _write_output(out)
    # 64 MB of spaces in 64 kB: the real bomb (8.5 GB) stops at the same place, after the limit
    (out / output.DATASET).write_bytes(gzip.compress(b" " * (64 << 20), compresslevel=9))
    _refused(out, tmp_path, "dataset.json.gz", "decompressed", "limit")


@pytest.mark.parametrize("content", [
    b"not gzip", gzip.compress(b"{broken"), gzip.compress(b'{"columns": ["a"], "rows": [[1, 2]]}'),
    gzip.compress(b'{"columns": ["a", "a"], "rows": []}'), gzip.compress(b"[]"),
])
def test_a_damaged_dataset_file_is_refused(tmp_path: Path, content: bytes) -> None:
    out = tmp_path / "out"
    _write_output(out)
    (out / output.DATASET).write_bytes(content)
    _refused(out, tmp_path, "dataset.json.gz")


@pytest.mark.parametrize("score, code", [(5.0, None), (-3.0, None), (math.inf, None), (-math.inf, None),
                                         (math.nan, None)])
def test_a_score_outside_the_metric_range_or_nan_without_reason_is_refused(
    tmp_path: Path, score: float, code: str | None
) -> None:
    out = tmp_path / "out"
    _write_output(out, [(0, 0.5, None), (1, 0.5, None), (2, score, code)])
    _refused(out, tmp_path, "block-000001.parquet", "row 2", METRIC)


def test_a_nan_with_a_reason_code_is_imported(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write_output(out, [(0, 0.5, None), (1, 0.0, None), (2, math.nan, "no_gold")])
    store = RunStore(tmp_path / "ws.sqlite")
    output.import_results(out, store=store)
    assert _stored(store) == (1, 1, 3)


@pytest.mark.parametrize("scored, expected", [
    ([(0, 0.5, None), (1, 0.5, None), (7, 0.5, None)], "row 7"),        # past the dataset
    ([(0, 0.5, None), (0, 0.7, None), (2, 0.5, None)], "twice"),
])
def test_rows_out_of_range_and_duplicates_are_refused(tmp_path: Path, scored: list, expected: str) -> None:
    out = tmp_path / "out"
    _write_output(out, scored)
    _refused(out, tmp_path, expected)


def test_more_results_than_rows_times_metrics_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write_output(out, [(row % 2, 0.5, None) for row in range(6000)])
    _refused(out, tmp_path, "6000 results", "at most 2")


def test_a_block_number_past_the_manifest_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write_output(out)
    for kind in ("results", "details"):
        output.block_path(out, kind, 1).rename(output.block_path(out, kind, 99))
    _refused(out, tmp_path, "block-000099", "outside")


def test_a_block_larger_than_the_input_limit_once_decompressed_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    _write_output(out)
    rows = [(0, "q", None, [MetricResult(metric=METRIC, score=0.5, reason="x" * 200_000)])]
    output.write_block(out, 0, *output.encode_block_rows(rows, [])[:2])
    monkeypatch.setenv("TEMPO_EVAL_MAX_INPUT_MB", "0.1")
    _refused(out, tmp_path, "block-000000.parquet", "decompressed", "limit")
