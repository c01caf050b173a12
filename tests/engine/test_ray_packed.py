"""Packed focus-time details stay packed on the Ray path (issue 27.5): the actor writes the bytes
the store keeps into the details file, the driver and `import-results` store those bytes as they
are, and they read back to the local engine's details. Forged packed details are refused before
anything is stored; an output written by format 1 (details as JSON text) still imports."""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tempo_eval.cli import build_metrics
from tempo_eval.common.packed_details import PackedDetails
from tempo_eval.engine.distributed import checks, output
from tempo_eval.engine.distributed.engine import evaluate_ray
from tempo_eval.engine.runner import evaluate, run_config
from tempo_eval.io.dataset import load_dataset
from tempo_eval.metrics.base import MetricResult
from tempo_eval.store.packing import _unpack_details
from tempo_eval.store.runs import RunStore, config_hash
from tests.support.paths import ROOT
from tests.support.ray_data import generated_rows, write_dataset, write_jsonl

SAMPLE = ROOT / "data" / "sample" / "temporal_qa.csv"
FOCUS = ["temporal_faithfulness", "temporal_ndcg"]


def _stored(store: RunStore, run_id: int) -> dict[tuple[int, str], str | bytes]:
    return dict(((row, metric), details) for row, metric, details in store.connection.execute(
        "SELECT row_idx, metric, details FROM results WHERE run_id = ?", (run_id,)))


def _tf_details(row: int) -> PackedDetails:
    return PackedDetails("tf/1", [None, [1990 + row], [[1990 + row]], [[f"in {1990 + row}"]], [[[f"y{row}"]]]])


def _write_output(out: Path, rows: list[tuple[int, str, None, list[MetricResult]]], n_rows: int) -> None:
    dataset = load_dataset(SAMPLE)
    config = run_config(build_metrics(["temporal_faithfulness"]))
    manifest = {"format": output.FORMAT_NAME, "format_version": output.FORMAT_VERSION,
                "dataset_name": dataset.name, "content_hash": dataset.content_hash, "mapping": {},
                "source_format": dataset.source_format, "warnings": [], "n_rows": n_rows, "config": config,
                "config_hash": config_hash(config), "metrics": ["temporal_faithfulness"], "block_size": n_rows,
                "n_blocks": 1}
    frame = dataset.frame.iloc[:n_rows]
    output.prepare(out, manifest)
    write_dataset(out, frame)
    output.write_block(out, 0, *output.encode_block_rows(rows, [])[:2])


def _rows(n_rows: int) -> list[tuple[int, str, None, list[MetricResult]]]:
    frame = load_dataset(SAMPLE).frame
    return [(row, str(frame["query_id"].iloc[row]), None,
             [MetricResult(metric="temporal_faithfulness", score=1.0, reason="ok", details=_tf_details(row))])
            for row in range(n_rows)]


def test_an_actor_writes_packed_details_as_the_store_keeps_them_and_they_import_unexpanded(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write_output(out, _rows(3), 3)
    cells = pq.read_table(output.block_path(out, "details", 0)).column("details").to_pylist()
    assert all(cell[:1] == b"l" for cell in cells)  # packed: the layout's values, not the expanded JSON
    store = RunStore(tmp_path / "ws.sqlite")
    run_id = output.import_results(out, store=store)
    stored = _stored(store, run_id)
    assert [stored[(row, "temporal_faithfulness")] for row in range(3)] == cells
    for row in range(3):
        assert store.get_result(run_id, row, "temporal_faithfulness").details == dict(_tf_details(row))


def test_a_driver_secret_is_masked_in_packed_details_which_stay_packed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-only-the-driver-knows-this"
    details = PackedDetails("tf/1", [None, [1990], [[1990]], [[f"{secret} in 1990"]], [[["1990"]]]])
    result = MetricResult(metric="temporal_faithfulness", score=1.0, reason="ok", details=details)
    _, _, encoded = output.encode_block_rows([(0, "q1", None, [result])], [], 1)
    masked = output.mask_encoded(encoded, [secret])
    cell = masked.results[0][-1]
    assert cell[:1] == b"l" and secret.encode() not in cell
    assert _unpack_details(cell)["years"][0]["answer_spans"] == ["*** in 1990"]
    assert output.mask_encoded(encoded, ["absent-secret-value"]).results == encoded.results  # untouched


@pytest.mark.parametrize("cell, expected", [
    (b'l["tf/1", 5]', "do not expand"),
    (b'l["no-such-layout/9"]', "do not expand"),
    (b"l{}", "do not expand"),
    (b"lnot json", "do not expand"),
    (b"z\x00\x01", "compressed JSON"),
    (b"[1, 2]", "expected JSON or a store packing tag"),
    (b"{not json", "details is not a JSON object"),
])
def test_forged_details_bytes_are_refused_with_nothing_stored(tmp_path: Path, cell: bytes, expected: str) -> None:
    out = tmp_path / "out"
    _write_output(out, _rows(2), 2)
    path = output.block_path(out, "details", 0)
    table = pq.read_table(path)
    forged = pa.array([cell, *table.column("details").to_pylist()[1:]], type=pa.binary())
    pq.write_table(table.set_column(table.schema.get_field_index("details"), "details", forged), path)
    store = RunStore(tmp_path / "ws.sqlite")
    with pytest.raises(checks.InvalidOutput, match=expected):
        output.import_results(out, store=store)
    assert store.connection.execute("SELECT COUNT(*) FROM results").fetchone()[0] == 0


def test_a_zlib_bomb_in_the_details_stops_at_the_input_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import zlib

    monkeypatch.setenv("TEMPO_EVAL_MAX_INPUT_MB", "1")
    out = tmp_path / "out"
    _write_output(out, _rows(2), 2)
    path = output.block_path(out, "details", 0)
    table = pq.read_table(path)
    bomb = b"z" + zlib.compress(b'{"a": "' + b"x" * 8_000_000 + b'"}', 9)
    forged = pa.array([bomb, *table.column("details").to_pylist()[1:]], type=pa.binary())
    pq.write_table(table.set_column(table.schema.get_field_index("details"), "details", forged), path)
    with pytest.raises(checks.InvalidOutput, match="more than the input limit"):
        output.import_results(out, store=RunStore(tmp_path / "ws.sqlite"))


def test_an_output_of_format_1_with_json_details_still_imports_and_merges(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write_output(out, _rows(2), 2)
    path = output.block_path(out, "details", 0)
    table = pq.read_table(path)
    texts = pa.array([output._unpack(output.stored_details(c)) for c in table.column("details").to_pylist()],
                     type=pa.string())
    pq.write_table(table.set_column(table.schema.get_field_index("details"), "details", texts), path)
    fixed = MetricResult(metric="temporal_faithfulness", score=0.5, reason="again", details=_tf_details(7))
    output.merge_block(out, 0, *output.encode_block_rows([(1, _rows(2)[1][1], None, [fixed])], [])[:2])
    merged = pq.read_table(path)
    assert merged.schema.field("details").type == pa.string()  # the block keeps its format
    store = RunStore(tmp_path / "ws.sqlite")
    run_id = output.import_results(out, store=store)
    assert store.get_result(run_id, 0, "temporal_faithfulness").details == dict(_tf_details(0))
    assert store.get_result(run_id, 1, "temporal_faithfulness").details == dict(_tf_details(7))


@pytest.mark.slow
def test_ray_stores_the_local_engines_bytes_into_the_workspace_and_by_import(tmp_path: Path, ray_cluster: str) -> None:

    data = write_jsonl(generated_rows(400), tmp_path / "rows.jsonl")
    store = RunStore(tmp_path / "ws.sqlite")
    local = evaluate(str(data), build_metrics(FOCUS), store=store)
    run = evaluate_ray(str(data), build_metrics(FOCUS), out=tmp_path / "out", block_size=150, store=store)
    imported_store = RunStore(tmp_path / "imported.sqlite")
    imported = output.import_results(tmp_path / "out", store=imported_store)
    expected = _stored(store, local.run_id)
    assert sum(isinstance(v, bytes) and v[:1] == b"l" for v in expected.values()) > 300  # Temporal Faithfulness
    assert _stored(store, run.run_id) == expected  # byte for byte: packed end to end
    assert _stored(imported_store, imported) == expected
    for row in (0, 5, 7, 11, 399):
        for metric in FOCUS:
            want = store.get_result(local.run_id, row, metric).to_dict()
            for got in (store.get_result(run.run_id, row, metric), imported_store.get_result(imported, row, metric)):
                got = got.to_dict()
                assert got["details"] == want["details"] and got["reason_code"] == want["reason_code"]
                assert got["score"] == want["score"] or math.isnan(got["score"]) and math.isnan(want["score"])
