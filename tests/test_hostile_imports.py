"""Hostile imports (issue 19, points 3, 4, 9, 13): a Ray output directory, CSV quoting, labels
files and foreign result files that lie. Each ends in a clear error within seconds, with nothing
stored, or in the right result."""

from __future__ import annotations

import gzip
import json
import math
import time
from pathlib import Path

import pytest

from tempo_eval.cli import build_metrics, main
from tempo_eval.engine.distributed import output
from tempo_eval.engine.runner import run_config
from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.errors import InputError
from tempo_eval.io.foreign import load_foreign_results
from tempo_eval.metrics.base import MetricResult
from tempo_eval.store.labels import LabelStore, premises_hash
from tempo_eval.store.runs import RunStore, config_hash

ROOT = Path(__file__).resolve().parents[1]
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
    output.prepare(out, manifest, frame)
    output.write_dataset(out, frame)
    scored = scored if scored is not None else [(row, 0.5, None) for row in range(n_rows)]
    by_block: dict[int, list] = {}
    for row, score, code in scored:
        query_id = frame["query_id"].iloc[row] if row < n_rows else f"q{row}"
        result = MetricResult(metric=METRIC, score=score, reason="given", reason_code=code)
        by_block.setdefault(min(row // block_size, n_blocks - 1), []).append((row, query_id, None, [result]))
    for block, rows in by_block.items():
        output.write_block(out, block, *output.encode_block(rows, []))
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


# ---- points 4 and 9: labels CSV --------------------------------------------------------------

def _labels(tmp_path: Path) -> LabelStore:
    return LabelStore(tmp_path / "labels.sqlite")


DIGEST = premises_hash(["The war ended in 1945."])
HEADER = "claim,premises_hash,label,note\n"


def test_labels_csv_export_guards_formulas_and_imports_back_unchanged(tmp_path: Path) -> None:
    store = _labels(tmp_path)
    claims = ['=HYPERLINK("http://evil/")', "+1+1", "-2", "@SUM(A1)", "'quoted", "plain"]
    for claim in claims:
        store.set_label(claim, ["The war ended in 1945."], "SUPPORTED")
    exported = store.export("csv").decode("utf-8")
    cells = [line.split(",")[0].strip('"') for line in exported.splitlines()[1:]]
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in cells)
    again = _labels(tmp_path / "again")
    assert again.import_labels(exported.encode("utf-8"), "labels.csv") == len(claims)
    assert sorted(again.frame()["claim"]) == sorted(claims)


def test_labels_csv_with_an_unclosed_quote_and_a_later_stray_quote_is_refused(tmp_path: Path) -> None:
    text = (HEADER + f'"A,{DIGEST},SUPPORTED,\nB,{DIGEST},NEUTRAL,\nC",{DIGEST},CONTRADICTED,\n'
            f"D,{DIGEST},NEUTRAL,\n")
    store = _labels(tmp_path)
    with pytest.raises(InputError, match=r"labels.csv, row 1 \(line 2\), column 'claim'.*quote"):
        store.import_labels(text.encode("utf-8"), "labels.csv")
    assert store.frame().empty


def test_labels_csv_with_an_unclosed_quote_is_refused_naming_its_line(tmp_path: Path) -> None:
    text = HEADER + f'A,{DIGEST},SUPPORTED,\n"B,{DIGEST},NEUTRAL,\nC,{DIGEST},NEUTRAL,\n'
    store = _labels(tmp_path)
    with pytest.raises(InputError, match=r"labels.csv, line 3: .*quot"):
        store.import_labels(text.encode("utf-8"), "labels.csv")
    assert store.frame().empty


def test_labels_csv_with_cr_line_ends_imports(tmp_path: Path) -> None:
    text = HEADER.replace("\n", "\r") + f"A,{DIGEST},SUPPORTED,\rB,{DIGEST},NEUTRAL,\r"
    store = _labels(tmp_path)
    assert store.import_labels(text.encode("utf-8"), "labels.csv") == 2
    assert sorted(store.frame()["claim"]) == ["A", "B"]


@pytest.mark.parametrize("digest", ["garbage", "0" * 63, "g" * 64, DIGEST + "0", "1945"])
def test_labels_with_a_garbage_premises_hash_are_refused(tmp_path: Path, digest: str) -> None:
    store = _labels(tmp_path)
    with pytest.raises(InputError, match=r"labels.csv, row 2, column 'premises_hash'.*64"):
        store.import_labels((HEADER + f"A,{DIGEST},SUPPORTED,\nB,{digest},NEUTRAL,\n").encode(), "labels.csv")
    line = json.dumps({"claim": "B", "premises_hash": digest, "label": "NEUTRAL"})
    with pytest.raises(InputError, match=r"labels.jsonl, row 1, column 'premises_hash'"):
        store.import_labels(line.encode(), "labels.jsonl")
    assert store.frame().empty


def test_labels_without_a_premises_hash_get_it_from_their_premises(tmp_path: Path) -> None:
    store = _labels(tmp_path)
    text = 'claim,premises_hash,label,note,premises\nA,,SUPPORTED,,"[""The war ended in 1945.""]"\n'
    assert store.import_labels(text.encode(), "labels.csv") == 1
    assert store.frame()["premises_hash"].tolist() == [DIGEST]


# ---- point 13: foreign results ---------------------------------------------------------------

RAGAS_HEAD = "user_input,response,retrieved_contexts"
RAGAS_ROW = "When did the war end?,In 1945.,\"['The war ended in 1945.']\""


def _deepeval(metrics: list[str]) -> bytes:
    case = ('{"input": "When did the war end?", "actualOutput": "In 1945.", '
            '"retrievalContext": ["The war ended in 1945."], "metricsData": [' + ", ".join(metrics) + "]}")
    return ('{"testCases": [' + case + "]}").encode("utf-8")


def test_a_metric_column_given_twice_is_refused(tmp_path: Path) -> None:
    text = f"{RAGAS_HEAD},faithfulness,Faithfulness \n{RAGAS_ROW},0.5,0.9\n"
    with pytest.raises(InputError, match=r"r.csv, column 'Faithfulness': the metric column .* twice"):
        load_foreign_results(text.encode(), name="r.csv")


def test_a_deepeval_metric_given_twice_in_a_test_case_is_refused() -> None:
    data = _deepeval(['{"name": "Faithfulness", "score": 0.5}', '{"name": "Faithfulness", "score": 0.9}'])
    with pytest.raises(InputError, match=r"run.json, test case 1, .*'Faithfulness' is given twice"):
        load_foreign_results(data, name="run.json")


@pytest.mark.parametrize("score", ["inf", "-7", "1.5", "-inf"])
def test_a_ragas_score_outside_its_range_is_refused(score: str) -> None:
    text = f"{RAGAS_HEAD},faithfulness\n{RAGAS_ROW},0.5\n{RAGAS_ROW},{score}\n"
    with pytest.raises(InputError, match=r"r.csv, row 2, column 'faithfulness': .*\[0, 1\]"):
        load_foreign_results(text.encode(), name="r.csv")


@pytest.mark.parametrize("score", ["1e999", "-7", "1.5"])
def test_a_deepeval_score_outside_its_range_is_refused(score: str) -> None:
    data = _deepeval(['{"name": "Faithfulness", "score": ' + score + "}"])
    with pytest.raises(InputError, match=r"run.json, test case 1, .*Faithfulness.*\[0, 1\]"):
        load_foreign_results(data, name="run.json")


def test_a_rubric_score_keeps_its_own_range() -> None:
    text = f"{RAGAS_HEAD},domain_specific_rubrics\n{RAGAS_ROW},4\n"
    assert [s.score for s in load_foreign_results(text.encode(), name="r.csv").scores] == [4.0]


def test_a_numeric_column_without_a_metric_name_stays_a_dataset_column() -> None:
    text = f"{RAGAS_HEAD},year,faithfulness\n{RAGAS_ROW},1945,0.5\n"
    foreign = load_foreign_results(text.encode(), name="r.csv")
    assert foreign.metrics == ["ragas:faithfulness"]
    assert "year" in foreign.dataset.frame.columns
    assert any("'year'" in warning and "not a RAGAS metric" in warning for warning in foreign.dataset.warnings)


@pytest.mark.parametrize("name, data", [
    ("r.jsonl", b'{"user_input": "q", "response": "a", "faithfulness": 0.5, "faithfulness": 0.9}\n'),
    ("r.json", b'[{"user_input": "q", "response": "a", "faithfulness": 0.5, "faithfulness": 0.9}]'),
    ("run.json", _deepeval(['{"name": "Faithfulness", "score": 0.5, "score": 0.9}'])),
])
def test_json_with_a_key_given_twice_is_refused(name: str, data: bytes) -> None:
    with pytest.raises(InputError, match=rf"{name}.*'(faithfulness|score)' appears twice"):
        load_foreign_results(data, name=name)


# ---- point 4: the fast CSV path ----------------------------------------------------------------

@pytest.mark.parametrize("name, sep", [("data.csv", ","), ("data.tsv", "\t")])
def test_an_unclosed_quote_evened_by_a_stray_quote_is_refused_naming_the_line(name: str, sep: str) -> None:
    # pyarrow read the four rows as two, the first cell holding rows 1-3; the csv module stops
    text = f'query{sep}answer\n"When did it end{sep}1990\nWho won{sep}2000\nWh"at happened{sep}2010\nWhere{sep}2020\n'
    with pytest.raises(InputError, match=rf"{name}, row 1 \(line 4\): found text right after a closing"):
        load_dataset(text.encode("utf-8"), name=name)


def test_well_formed_quoting_still_loads() -> None:
    text = 'query,answer\n"When, did ""it"" end",in 1990\n"Who\nwon",in 2000\nA 5"" screen?,in 2010\n'
    frame = load_dataset(text.encode("utf-8"), name="data.csv").frame
    assert frame["query"].tolist() == ['When, did "it" end', "Who\nwon", 'A 5"" screen?']


def test_a_block_larger_than_the_input_limit_once_decompressed_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    _write_output(out)
    rows = [(0, "q", None, [MetricResult(metric=METRIC, score=0.5, reason="x" * 200_000)])]
    output.write_block(out, 0, *output.encode_block(rows, []))
    monkeypatch.setenv("TEMPO_EVAL_MAX_INPUT_MB", "0.1")
    _refused(out, tmp_path, "block-000000.parquet", "decompressed", "limit")
