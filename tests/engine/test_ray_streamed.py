"""The Ray engine without Ray Data's executor (issue 27.5): a file streamed a block at a time by
the local reader, actors driven directly, each block written into the workspace by the driver as
it comes back, in one transaction, with the local engine's bytes; a driver killed part way
resumes to the same stored bytes."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.cli import build_metrics
from tempo_eval.engine.distributed import output
from tempo_eval.engine.distributed.driver import blocks_of
from tempo_eval.engine.distributed.engine import evaluate_ray
from tempo_eval.engine.runner import evaluate
from tempo_eval.io.dataset import load_dataset
from tempo_eval.store.runs import RunStore
from tests.support.paths import ROOT
from tests.support.ray_data import generated_rows, write_dataset, write_jsonl

FOCUS = ["temporal_faithfulness", "temporal_ndcg"]


def _stored(store: RunStore, run_id: int) -> tuple[list[tuple], list[tuple]]:
    """Every stored column of the run's results and claims but the run id, in key order."""
    results = store.connection.execute(
        "SELECT row_idx, query_id, system, metric, score, reason, reason_code, success, details FROM results "
        "WHERE run_id = ? ORDER BY row_idx, metric", (run_id,)).fetchall()
    claims = store.connection.execute(
        "SELECT row_idx, metric, idx, claim, verdict, evidence, probabilities, reason, extra FROM claims "
        "WHERE run_id = ? ORDER BY row_idx, metric, idx", (run_id,)).fetchall()
    return results, claims


def _csv_with_blank_rows(path: Path, n_rows: int) -> Path:
    """A CSV of generated rows with a blank row every 150 rows: the reader's batches come out
    shorter than a block, so the driver re-cuts them."""
    rows = generated_rows(n_rows)
    frame = pd.DataFrame([{**r, "contexts": json.dumps(r["contexts"]), "retrieved_ids": json.dumps(r["retrieved_ids"]),
                           "gold_ids": json.dumps(r["gold_ids"])} for r in rows])
    lines = frame.to_csv(index=False).splitlines(keepends=True)
    blank = "," * (len(frame.columns) - 1) + "\n"
    text = lines[0] + "".join(line + (blank if i % 150 == 149 else "") for i, line in enumerate(lines[1:]))
    path.write_text(text, encoding="utf-8")
    return path


def test_blocks_of_cuts_the_readers_batches_into_whole_blocks() -> None:
    frame = pd.DataFrame({"x": range(23)})
    batches = [(0, frame.iloc[0:4]), (4, frame.iloc[4:9]), (9, frame.iloc[9:10]), (10, frame.iloc[10:23])]
    cut = list(blocks_of(iter(batches), 5))
    assert [offset for offset, _ in cut] == [0, 5, 10, 15, 20]
    assert [part["x"].tolist() for _, part in cut] == [list(range(k, min(k + 5, 23))) for k in range(0, 23, 5)]
    whole = [(0, frame.iloc[0:5]), (5, frame.iloc[5:10])]
    assert [b is a for (_, a), (_, b) in zip(whole, blocks_of(iter(whole), 5), strict=True)] == [True, True]


@pytest.mark.slow
def test_a_streamed_file_stores_the_local_engines_bytes_and_dataset(tmp_path: Path, ray_cluster: str) -> None:
    import ray

    data = _csv_with_blank_rows(tmp_path / "rows.csv", 1000)
    store = RunStore(tmp_path / "ws.sqlite")
    local = evaluate(str(data), build_metrics(FOCUS), store=store, processes=1)
    run = evaluate_ray(str(data), build_metrics(FOCUS), out=tmp_path / "out", block_size=200, store=store)
    # the call's actors are stopped: the joined cluster has its CPUs back for the next call
    deadline = time.monotonic() + 30
    while ray.available_resources().get("CPU", 0) < ray.cluster_resources()["CPU"]:
        assert time.monotonic() < deadline, ray.available_resources()
        time.sleep(0.1)
    assert (run.n_rows, run.n_blocks, run.computed_blocks) == (1000, 5, 5)
    assert run.warnings == local_warnings(data)
    assert _stored(store, run.run_id) == _stored(store, local.run_id)
    assert store.run_info(run.run_id)["dataset_id"] == local.dataset_id
    manifest = output.read_manifest(tmp_path / "out")
    assert (manifest["n_rows"], manifest["n_blocks"], manifest["status"]) == (1000, 5, "finished")
    # dataset.json.gz, written a block at a time, holds what `write_dataset` writes whole
    whole = tmp_path / "whole"
    whole.mkdir()
    write_dataset(whole, load_dataset(data).frame)
    assert gzip.decompress((tmp_path / "out" / output.DATASET).read_bytes()) == gzip.decompress(
        (whole / output.DATASET).read_bytes())
    imported = RunStore(tmp_path / "imported.sqlite")
    assert _stored(imported, output.import_results(tmp_path / "out", store=imported)) == _stored(store, local.run_id)


def test_dataset_file_written_in_blocks_is_the_whole_files_and_abandoned_leaves_nothing(tmp_path: Path, ray_cluster: str) -> None:
    frame = load_dataset(write_jsonl(generated_rows(25), tmp_path / "rows.jsonl")).frame
    whole, parts, stopped = tmp_path / "whole", tmp_path / "parts", tmp_path / "stopped"
    for folder in (whole, parts, stopped):
        folder.mkdir()
    write_dataset(whole, frame)
    writer = output.DatasetWriter(parts, list(frame.columns))
    for start in range(0, 25, 10):
        writer.add(frame.iloc[start:start + 10])
    writer.finish()
    assert gzip.decompress((parts / output.DATASET).read_bytes()) == gzip.decompress(
        (whole / output.DATASET).read_bytes())
    again = output.DatasetWriter(parts, list(frame.columns))  # a finished run resumed: kept as it is
    again.add(frame.iloc[:3])
    again.finish()
    assert gzip.decompress((parts / output.DATASET).read_bytes()) == gzip.decompress(
        (whole / output.DATASET).read_bytes())
    cut = output.DatasetWriter(stopped, list(frame.columns))
    cut.add(frame.iloc[:10])
    cut.abandon()  # a run stopped part way: no dataset file, no leftover
    assert list(stopped.iterdir()) == []


def local_warnings(data: Path) -> list[str]:
    return list(load_dataset(data).warnings)


@pytest.mark.slow
def test_a_killed_driver_resumes_to_the_local_engines_stored_bytes(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_jsonl(generated_rows(4000), tmp_path / "rows.jsonl")
    home = tmp_path / "home"
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TEMPO_EVAL_HOME": str(home)}
    command = [sys.executable, "-m", "tempo_eval", "evaluate", str(data), "--metrics", ",".join(FOCUS),
               "--engine", "ray", "--block-size", "100", "--num-workers", "2", "--out", str(out), "--no-progress"]
    # the driver starts its own cluster (no --address): killing it with -9 leaves that cluster's
    # processes to exit on their own, as a user's Ctrl-\ would
    driver = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              start_new_session=True)
    deadline = time.monotonic() + 240
    try:
        while len(output.done_blocks(out)) < 4:
            assert driver.poll() is None, driver.stderr.read().decode()[-2000:]
            assert time.monotonic() < deadline, "no block written in 240 s"
            time.sleep(0.05)
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        with contextlib.suppress(ProcessLookupError):  # the cluster it started, in its session
            os.killpg(driver.pid, signal.SIGKILL)
    done_before = output.done_blocks(out)
    assert 4 <= len(done_before) < 40
    with pytest.raises(ValueError, match="stopped before its whole input was read; run the same evaluate command"):
        output.import_results(out, store=RunStore(tmp_path / "elsewhere.sqlite"))

    resumed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"{len(done_before)} already done" in resumed.stderr

    monkeypatch.setenv("TEMPO_EVAL_HOME", str(home))
    store = RunStore()
    runs = store.list_runs()
    assert len(runs) == 1 and runs["status"].tolist() == ["finished"]
    ray_run = int(runs["id"].iloc[0])
    local_store = RunStore(tmp_path / "local.sqlite")
    local = evaluate(str(data), build_metrics(FOCUS), store=local_store)
    assert _stored(store, ray_run) == _stored(local_store, local.run_id)
    pd.testing.assert_frame_equal(store.dataset_frame(store.run_info(ray_run)["dataset_id"]), load_dataset(data).frame)
    assert not list(out.glob("*.tmp")) and not list(out.glob("*/*.tmp"))

