"""The Ray engine on a real local Ray cluster (2 CPUs, no dashboard): reading, the same numbers as
the local runner, failures, resume after killing the driver, the verdict cache, import-results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.cli import build_metrics, main
from tempo_eval.engine.distributed import output
from tempo_eval.engine.distributed.engine import evaluate_ray
from tempo_eval.engine.distributed.reader import read_dataset
from tempo_eval.engine.distributed.shipping import (
    CacheSource,
    ship_metrics,
    unship_metrics,
    worker_device,
)
from tempo_eval.engine.runner import evaluate
from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.errors import InputError
from tempo_eval.store.runs import RunStore
from tempo_eval.store.verdict_cache import VerdictCache
from tests.support.paths import ROOT
from tests.support.ray_data import (
    FailsOnSomeRows,
    FailsWhileFlagged,
    generated_rows,
    write_dataset,
    write_jsonl,
)

SAMPLE = ROOT / "data" / "sample" / "temporal_qa.csv"
FOCUS = ["temporal_faithfulness", "temporal_ndcg"]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def rows_5000(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_jsonl(generated_rows(5000), tmp_path_factory.mktemp("ray_data") / "generated.jsonl")


@pytest.fixture(scope="module")
def local_5000(rows_5000: Path, tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    store = RunStore(tmp_path_factory.mktemp("local_5000") / "store.sqlite")
    metrics = [*build_metrics(FOCUS), FailsOnSomeRows()]
    return evaluate(load_dataset(rows_5000), metrics, store=store).frame


# ---- pure parts (no cluster) ----------------------------------------------------------------

def test_worker_device_uses_the_gpu_only_when_the_actor_has_one() -> None:
    assert worker_device("cpu", []) == "cpu"
    assert worker_device("cpu", ["0"]) == "cuda"
    assert worker_device("cuda:1", ["0"]) == "cuda:1"  # an explicit choice is kept


def test_shipped_nli_verifier_leaves_its_model_and_connection_behind(tmp_path: Path) -> None:
    from tempo_eval.metrics.factual_correctness import FactualCorrectness
    from tempo_eval.verify import make_verifier
    from tests.support.tiny_nli import build_tiny_nli

    verifier = make_verifier("nli", model=str(build_tiny_nli(tmp_path / "nli")))
    assert verifier.verifier.check_available()[0]  # loaded on the driver
    payload = ship_metrics([FactualCorrectness(verifier=verifier)], CacheSource(str(tmp_path / "db")))
    assert len(payload) < 100_000  # no weights in it
    (metric,) = unship_metrics(payload)
    assert metric.verifier.verifier._model is None and metric.verifier.verifier.device == "cpu"
    assert type(metric.verifier.cache).__name__ == "WorkerVerdictCache"


def test_a_worker_masks_the_judge_key_it_was_shipped(tmp_path: Path) -> None:
    # the key reached the driver as an argument (no secret-named variable holds it); a worker is a
    # fresh process, so only the shipped judge can tell it what to mask in what it writes
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.verify import make_verifier

    key = "sk-judge-key-given-as-an-argument"
    judge = make_verifier("llm", model="judge", base_url="http://127.0.0.1:9/v1", api_key=key)
    payload = tmp_path / "payload.bin"
    payload.write_bytes(ship_metrics([TemporalFaithfulness(verifier=judge)], CacheSource(None)))
    worker = f"""
import pandas as pd
from tempo_eval.engine.distributed import output
from tempo_eval.engine.distributed.engine import BlockScorer
from tempo_eval.engine.distributed.shipping import CacheSource
from tempo_eval.metrics.base import not_measurable

scorer = BlockScorer(open({str(payload)!r}, "rb").read(), None, 1, CacheSource(None), 0)
failed = not_measurable("temporal_faithfulness", "row_error", "request with Bearer {key} failed")
results, _, _ = output.encode_block_rows([(0, "q1", None, [failed])], scorer.secrets)
open({str(tmp_path / "results.parquet")!r}, "wb").write(results)
"""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY",)}
    env["PYTHONPATH"] = str(ROOT)
    subprocess.run([sys.executable, "-c", worker], check=True, env=env, cwd=tmp_path, timeout=120)
    reason = pd.read_parquet(tmp_path / "results.parquet")["reason"].iloc[0]
    assert key not in reason and "Bearer ***" in reason


def test_the_driver_masks_its_own_secrets_in_the_rows_an_actor_encoded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # an actor masks the secrets of its own environment; one only the driver knows is masked
    # when the driver writes the block into the workspace
    from tempo_eval.engine.distributed.workspace import WorkspaceRun
    from tempo_eval.engine.runner import run_config
    from tempo_eval.metrics.base import MetricResult

    secret = "sk-only-the-driver-knows-this"
    config = run_config(build_metrics(["temporal_ndcg"]))
    manifest = {"dataset_name": "d", "content_hash": "h", "mapping": {}, "source_format": "csv", "warnings": [],
                "n_rows": 2, "block_size": 2, "metrics": ["temporal_ndcg"], "config": config, "output_id": "o1"}
    failed = MetricResult(metric="temporal_ndcg", score=float("nan"), reason=f"request with {secret} failed",
                          reason_code="row_error", details={"request": f"Bearer {secret}",
                                                            "claims": [{"claim": f"{secret} said so"}]})
    fine = MetricResult(metric="temporal_ndcg", score=0.5, reason="ok", details={"k": 10})
    _, _, encoded = output.encode_block_rows([(0, "q1", None, [failed]), (1, "q2", None, [fine])], [], 1)
    assert secret in str(encoded.results)  # the actor did not know it

    monkeypatch.setenv("DRIVER_API_KEY", secret)
    store = RunStore(tmp_path / "ws.sqlite")
    workspace = WorkspaceRun.open(store, manifest, name=None, default_name="ray")
    assert workspace.run_id == 1
    workspace.record(encoded)
    frame = store.results_frame(1)
    assert frame["reason"].tolist() == ["request with *** failed", "ok"]
    assert store.get_result(1, 0, "temporal_ndcg").details["request"] == "Bearer ***"
    assert store.claims_frame(1)["claim"].tolist() == ["*** said so"]
    assert store.get_result(1, 1, "temporal_ndcg").details == {"k": 10}
    with pytest.raises(ValueError, match="rows encoded for run 7, not run 1"):
        workspace.record(output.encode_block_rows([(0, "q1", None, [fine])], [], 7)[2])


def test_import_results_holds_the_run_lock_while_it_writes(tmp_path: Path) -> None:
    # a local evaluation of the same dataset and configuration started meanwhile would resume the
    # half-imported run; with the lock held it waits, then reuses the imported rows
    from tempo_eval.engine.runner import run_config
    from tempo_eval.metrics.base import MetricResult
    from tempo_eval.store.runs import config_hash

    dataset = load_dataset(SAMPLE)
    config = run_config(build_metrics(["temporal_ndcg"]))
    manifest = {"format": output.FORMAT_NAME, "format_version": output.FORMAT_VERSION,
                "dataset_name": dataset.name, "content_hash": dataset.content_hash, "mapping": {},
                "source_format": dataset.source_format, "warnings": [], "n_rows": 2, "config": config,
                "config_hash": config_hash(config), "metrics": ["temporal_ndcg"], "block_size": 1, "n_blocks": 2}
    out = tmp_path / "out"
    frame = dataset.frame.iloc[:2]
    output.prepare(out, manifest)
    write_dataset(out, frame)
    for row in range(2):
        scored = [(row, f"q{row + 1}", None, [MetricResult(metric="temporal_ndcg", score=1.0, reason="ok")])]
        output.write_block(out, row, *output.encode_block_rows(scored, [])[:2])

    class Watching(RunStore):
        locked: list[bool] = []

        def write_encoded(self, encoded) -> None:  # one call per block
            held = self.connection.execute("SELECT COUNT(*) FROM run_locks WHERE run_id = ?",
                                           (encoded.run_id,)).fetchone()[0]
            self.locked.append(bool(held))
            super().write_encoded(encoded)

    store = Watching(tmp_path / "ws.sqlite")
    run_id = output.import_results(out, store=store)
    assert store.locked == [True, True]
    assert store.connection.execute("SELECT COUNT(*) FROM run_locks").fetchone()[0] == 0  # released
    assert store.run_info(run_id)["status"] == "finished"


def test_merge_block_replaces_only_the_recomputed_pairs(tmp_path: Path) -> None:
    from tempo_eval.metrics.base import MetricResult

    def result(metric: str, score: float, code: str | None = None) -> MetricResult:
        return MetricResult(metric=metric, score=score, reason=f"{metric} {score}", reason_code=code,
                            details={"claims": [{"claim": f"c{score}", "verdict": "SUPPORTED"}]})

    out = tmp_path / "out"
    first = [(0, "q1", None, [result("a", 1.0), result("b", float("nan"), "judge_error")]),
             (1, "q2", None, [result("a", 0.5), result("b", 0.25)])]
    output.write_block(out, 0, *output.encode_block_rows(first, [])[:2])
    assert output.failed_results(out, [0]) == {0: {0: ["b"]}}
    output.merge_block(out, 0, *output.encode_block_rows([(0, "q1", None, [result("b", 0.75)])], [])[:2])
    results = pd.read_parquet(output.block_path(out, "results", 0))
    assert list(zip(results["row"], results["metric"], results["score"], strict=True)) == [
        (0, "a", 1.0), (0, "b", 0.75), (1, "a", 0.5), (1, "b", 0.25)]
    details = pd.read_parquet(output.block_path(out, "details", 0))
    assert "c0.75" in details.loc[1, "claims"] and "c1.0" in details.loc[0, "claims"]
    assert output.failed_results(out, [0]) == {}


def test_claim_refuses_a_held_or_foreign_directory(tmp_path: Path) -> None:
    out = tmp_path / "out"
    with output.claim(out), pytest.raises(output.OutputBusy, match=f"process {os.getpid()} on "), output.claim(out):
        pass
    with output.claim(out):  # released
        pass
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "cat.jpg").write_bytes(b"\xff\xd8")
    with pytest.raises(output.OutputMismatch, match="is not empty and holds no tempo-eval Ray output"), \
            output.claim(foreign):
        pass
    assert [p.name for p in foreign.iterdir()] == ["cat.jpg"]  # nothing left in it


def test_evaluate_names_its_engines_and_refuses_ray_options_for_the_local_one() -> None:
    dataset = load_dataset(SAMPLE)
    with pytest.raises(ValueError, match="engine must be 'local' or 'ray', got 'spark'"):
        evaluate(dataset, build_metrics(["temporal_ndcg"]), engine="spark")
    with pytest.raises(TypeError, match="num_workers, out: only for engine='ray'"):
        evaluate(dataset, build_metrics(["temporal_ndcg"]), out="x", num_workers=2)


@pytest.mark.parametrize("option", [{"deadline": 5}, {"resume": False}, {"cancel": object()}])
def test_evaluate_refuses_local_engine_options_with_the_ray_engine(option: dict, tmp_path: Path) -> None:
    # refused before Ray starts, instead of silently ignored
    with pytest.raises(TypeError, match=f"{next(iter(option))}: only for engine='local'"):
        evaluate(load_dataset(SAMPLE), build_metrics(["temporal_ndcg"]), engine="ray", out=tmp_path / "o", **option)
    assert not (tmp_path / "o").exists()


def test_cli_refuses_ray_options_without_the_ray_engine(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "r.csv")
    assert main(["evaluate", str(SAMPLE), "--metrics", "temporal_ndcg", "--out", out, "--num-workers", "4"]) == 2
    assert "--num-workers needs --engine ray" in capsys.readouterr().err
    assert main(["evaluate", str(SAMPLE), "--metrics", "temporal_ndcg", "--out", out, "--engine", "ray"]) == 2
    assert "--out is a directory" in capsys.readouterr().err
    assert main(["import-results", str(tmp_path)]) == 2
    assert "manifest.json" in capsys.readouterr().err


# ---- reading ----------------------------------------------------------------------------------

def test_ray_readers_give_the_local_loaders_frame(ray_cluster: str, tmp_path: Path, rows_5000: Path) -> None:
    parquet = tmp_path / "sample.parquet"
    sample = pd.read_csv(SAMPLE, dtype=str, keep_default_na=False)
    # an unmapped list column is left out by both readers, with the same warning (issue 38)
    sample.assign(embedding=[[0.5] * 8] * len(sample)).to_parquet(parquet)
    bom = tmp_path / "bom.csv"
    bom.write_bytes(b"\xef\xbb\xbf" + SAMPLE.read_bytes())
    for path in (SAMPLE, ROOT / "data" / "sample" / "temporal_qa.jsonl", parquet, rows_5000, bom):
        ours, theirs = read_dataset(str(path)), load_dataset(path)
        pd.testing.assert_frame_equal(ours.frame, theirs.frame)
        assert (ours.content_hash, ours.mapping, ours.name) == (theirs.content_hash, theirs.mapping, theirs.name)
        assert ours.warnings == theirs.warnings


def test_a_directory_of_parts_reads_as_one_dataset(ray_cluster: str, tmp_path: Path) -> None:
    rows = generated_rows(30)
    parts = tmp_path / "parts"
    parts.mkdir()
    write_jsonl(rows[:12], parts / "part-0.jsonl")
    write_jsonl(rows[12:], parts / "part-1.jsonl")
    dataset = read_dataset(str(parts))
    expected = load_dataset(write_jsonl(rows, tmp_path / "all.jsonl")).frame
    pd.testing.assert_frame_equal(dataset.frame, expected)
    write_jsonl(rows[:3], parts / "part-2.jsonl")
    with pytest.raises(InputError, match=r"part-2.jsonl, row 1.*query id 'q1' appears twice: first in part-0.jsonl, row 1"):
        read_dataset(str(parts))


@pytest.mark.parametrize("name, text", [
    ("bad_list.csv", 'query,answer,gold_ids\nq a,in 1990,"[""a"""\nq b,in 1991,"{""d1"": ""high""}"\n'),
    ("ragged.csv", "query,answer\nq a,in 1990\nq b,in 1991,extra\n"),
    ("duplicate.csv", "query_id,query,answer\nq1,a,in 1990\nq1,b,in 1991\n"),
    ("bad.jsonl", '{"query": "a", "answer": "in 1990"}\n{"query": "b", "answer": \n'),
    # an unclosed quote, then a stray one: Arrow would read the rows between as one cell (issue 19.4)
    ("stray_quote.csv", 'query,answer\n"q a,in 1990\nq b,in 1991\nq "c,in 1992\nq d,in 1993\n'),
])
def test_a_bad_row_gets_the_local_loaders_located_error(ray_cluster: str, tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as local:
        load_dataset(path)
    with pytest.raises(InputError) as ours:
        read_dataset(str(path))
    assert str(ours.value) == str(local.value)
    assert ours.value.row is not None or ours.value.line is not None


# ---- the same numbers -------------------------------------------------------------------------

def test_sample_scores_claims_and_verdict_cache_match_the_local_runner(ray_cluster: str, tmp_path: Path) -> None:
    names = [*FOCUS, "factual_correctness"]  # factual_correctness verifies claims (lexical, cached)
    cache = VerdictCache()
    run = evaluate(str(SAMPLE), build_metrics(names), engine="ray", out=tmp_path / "out", block_size=16)
    assert (run.n_blocks, run.computed_blocks, run.skipped_blocks) == (2, 2, 0)
    # every new verdict came back from the workers and was stored once
    assert run.cache_misses > 0 and run.verdicts_added == len(cache) > 0
    # a second run: the workers find every verdict in the cache, nothing new to store
    again = evaluate_ray(str(SAMPLE), build_metrics(names), out=tmp_path / "again", num_workers=1)
    assert again.cache_misses == 0 and again.cache_hits >= run.cache_misses
    assert again.verdicts_added == 0 and len(cache) == run.verdicts_added

    store = RunStore()
    # not resumed from the Ray runs of the same configuration, which are in this workspace already
    local = evaluate(load_dataset(SAMPLE), build_metrics(names), store=store, resume=False)
    assert local.computed == len(local.frame) and local.run_id not in (run.run_id, again.run_id)
    assert len(cache) == run.verdicts_added  # the local run found every verdict in the cache
    pd.testing.assert_frame_equal(run.frame, local.frame)
    pd.testing.assert_frame_equal(again.frame, local.frame)

    # back to the dashboard: a normal run beside the local one, on the same dataset; importing
    # the output adds nothing (its blocks went in as they finished), --name renames its run
    assert main(["import-results", str(tmp_path / "out"), "--name", "from ray"]) == 0
    runs = store.list_runs()
    assert len(runs) == 3
    imported = int(runs.loc[runs["name"] == "from ray", "id"].iloc[0])
    assert imported == run.run_id
    assert store.run_info(imported)["dataset_id"] == local.dataset_id
    assert store.run_info(imported)["status"] == "finished"
    assert store.run_info(imported)["config_hash"] == store.run_info(local.run_id)["config_hash"]
    pd.testing.assert_frame_equal(store.results_frame(imported), local.frame)
    claims = store.claims_frame(imported)
    assert len(claims) > 0
    pd.testing.assert_frame_equal(claims, local.claims)
    row = 1
    assert store.get_result(imported, row, "temporal_faithfulness") == local.result(row, "temporal_faithfulness")

    # the dashboard opens the imported run beside the local one: its claims and a comparison
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params["runs"] = f"{imported},{local.run_id}"
    at.run()
    assert at.session_state["run_ids"] == [imported, local.run_id]
    at.switch_page("views/claims.py").run()
    assert not at.exception and not at.error
    assert len(at.dataframe(key="claims_table").value) == 2 * len(claims)
    at.switch_page("views/compare.py").run()
    assert not at.exception and not at.error


def test_fail_under_gates_a_ray_run_as_it_gates_a_local_one(ray_cluster: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "out")
    args = ["evaluate", str(SAMPLE), "--metrics", "temporal_ndcg", "--engine", "ray", "--out", out,
            "--num-workers", "1", "--no-progress", "--fail-under"]
    assert main([*args, "temporal_ndcg=1.01"]) == 1  # no mean reaches 1.01
    fails = [line for line in capsys.readouterr().err.splitlines() if line.startswith("fail:")]
    assert len(fails) == 1 and fails[0].startswith("fail: temporal_ndcg ") and fails[0].endswith(" < 1.01")
    assert main([*args, "temporal_ndcg=0"]) == 0  # resumed: every block done, the gate passes
    assert "fail:" not in capsys.readouterr().err


def test_5000_generated_rows_match_the_local_runner(ray_cluster: str, tmp_path: Path, rows_5000: Path,
                                                    local_5000: pd.DataFrame) -> None:
    run = evaluate_ray(str(rows_5000), [*build_metrics(FOCUS), FailsOnSomeRows()], out=tmp_path / "out",
                       num_workers=2, block_size=1000)
    frame = run.frame
    pd.testing.assert_frame_equal(frame, local_5000)
    reasons = set(frame["reason_code"].dropna())
    assert {"row_error", "missing_input", "no_temporal_claims"} <= reasons  # failures isolated per row
    assert pd.read_parquet(tmp_path / "out" / "results").columns.tolist() == list(local_5000.columns)


# ---- into the workspace, no import step ---------------------------------------------------------

def test_a_ray_evaluation_is_a_run_of_the_workspace_without_an_import_step(
        ray_cluster: str, tmp_path: Path, rows_5000: Path, local_5000: pd.DataFrame,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tests.support.cli import run_cli_streams

    code, _, err = run_cli_streams(["evaluate", str(rows_5000), "--metrics", ",".join(FOCUS), "--engine", "ray",
                                    "--out", str(tmp_path / "out"), "--block-size", "1000", "--run-name", "nightly",
                                    "--no-progress"], capsys)
    assert code == 0, err
    assert "import-results" not in err and "run 1 in the workspace" in err
    code, listed, err = run_cli_streams(["runs", "--format", "json"], capsys)
    assert code == 0, err
    runs = json.loads(listed)
    assert [(r["id"], r["name"], r["status"]) for r in runs] == [(1, "nightly", "finished")]
    store = RunStore()
    expected = local_5000[local_5000["metric"].isin(FOCUS)].reset_index(drop=True)
    pd.testing.assert_frame_equal(store.results_frame(1), expected)
    # the same dataset as a local run of the file: the local run sits beside the Ray one
    local = evaluate(str(rows_5000), build_metrics(FOCUS), store=store, resume=False)
    assert local.dataset_id == store.run_info(1)["dataset_id"]
    pd.testing.assert_frame_equal(local.frame, store.results_frame(1))


def test_finished_blocks_missing_from_the_workspace_are_written_from_their_files(
        ray_cluster: str, tmp_path: Path) -> None:
    # as if the driver was killed between a block's files and its transaction, or the output was
    # written without a workspace: the next call writes those blocks from their files
    data = write_jsonl(generated_rows(300), tmp_path / "rows.jsonl")
    out = tmp_path / "out"
    first = evaluate_ray(str(data), build_metrics(FOCUS), out=out, block_size=100, store=False)
    assert first.run_id is None and RunStore().list_runs().empty
    resumed = evaluate_ray(str(data), build_metrics(FOCUS), out=out, block_size=100)
    assert resumed.computed_blocks == 0
    store = RunStore()
    pd.testing.assert_frame_equal(store.results_frame(resumed.run_id), first.frame)

    store.connection.execute("DELETE FROM results WHERE run_id = ? AND row_idx >= 200", (resumed.run_id,))
    store.connection.commit()
    again = evaluate_ray(str(data), build_metrics(FOCUS), out=out, block_size=100)
    assert (again.run_id, again.computed_blocks) == (resumed.run_id, 0)
    pd.testing.assert_frame_equal(store.results_frame(resumed.run_id), first.frame)


# ---- resume -----------------------------------------------------------------------------------

def test_a_killed_driver_resumes_without_writing_a_row_twice(ray_cluster: str, tmp_path: Path, rows_5000: Path,
                                                            local_5000: pd.DataFrame) -> None:
    out = tmp_path / "out"
    command = [sys.executable, "-m", "tempo_eval", "evaluate", str(rows_5000), "--metrics", ",".join(FOCUS),
               "--engine", "ray", "--address", ray_cluster, "--block-size", "100", "--num-workers", "1",
               "--out", str(out), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    driver = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while len(output.done_blocks(out, 50)) < 3:
        assert driver.poll() is None, driver.stderr.read().decode()[-2000:]
        assert time.monotonic() < deadline, "no block written in 120 s"
        time.sleep(0.05)
    driver.send_signal(signal.SIGKILL)
    driver.wait()
    done_before = output.done_blocks(out, 50)
    assert 3 <= len(done_before) < 50

    resumed = evaluate_ray(str(rows_5000), build_metrics(FOCUS), out=out, block_size=100)
    assert resumed.skipped_blocks == len(done_before)
    assert resumed.computed_blocks == 50 - len(done_before)
    frame = resumed.frame
    assert not frame.duplicated(["row", "metric"]).any()
    expected = local_5000[local_5000["metric"].isin(FOCUS)].reset_index(drop=True)
    pd.testing.assert_frame_equal(frame, expected)
    assert not list(out.glob("*/*.tmp"))

    # the workspace holds one run with every row, written block by block by the two drivers
    # (a block the killed one had written to `out` but not yet to the workspace is written from
    # its file by the resume)
    store = RunStore()
    assert store.list_runs()["id"].tolist() == [resumed.run_id]
    assert store.run_info(resumed.run_id)["status"] == "finished"
    pd.testing.assert_frame_equal(store.results_frame(resumed.run_id), expected)
    dataset_id = store.run_info(resumed.run_id)["dataset_id"]
    pd.testing.assert_frame_equal(store.dataset_frame(dataset_id), load_dataset(rows_5000).frame)

    # finished: the same call computes nothing; another configuration is refused, not mixed in
    assert evaluate_ray(str(rows_5000), build_metrics(FOCUS), out=out, block_size=100).computed_blocks == 0
    with pytest.raises(output.OutputMismatch, match="config_hash differs"):
        evaluate_ray(str(rows_5000), build_metrics(["temporal_ndcg"]), out=out, block_size=100)


def test_a_resume_computes_the_failed_results_again_as_a_local_resume_does(
        ray_cluster: str, tmp_path: Path) -> None:
    data = write_jsonl(generated_rows(450), tmp_path / "rows.jsonl")  # rows 11, 222, 433 fail
    flag = tmp_path / "judge-down"
    flag.touch()

    def metrics() -> list:
        return [*build_metrics(["temporal_faithfulness"]), FailsWhileFlagged(str(flag))]

    out = tmp_path / "out"
    first = evaluate_ray(str(data), metrics(), out=out, block_size=100)
    failed = first.frame[first.frame["reason_code"] == "row_error"]
    assert sorted(failed["row"]) == [11, 222, 433]
    assert evaluate_ray(str(data), metrics(), out=out, block_size=100, retry_failed=False).retried_rows == 0

    flag.unlink()  # the cause is gone: a resume computes the failed results, and only those
    blocks_before = {b: output.block_path(out, "results", b).stat().st_mtime_ns for b in range(5)}
    resumed = evaluate_ray(str(data), metrics(), out=out, block_size=100)
    assert (resumed.computed_blocks, resumed.skipped_blocks, resumed.retried_rows) == (0, 5, 3)
    rewritten = {b for b in range(5) if output.block_path(out, "results", b).stat().st_mtime_ns != blocks_before[b]}
    assert rewritten == {0, 2, 4}

    store = RunStore(tmp_path / "local.sqlite")
    flag.touch()
    evaluate(load_dataset(data), metrics(), store=store)
    flag.unlink()
    local = evaluate(load_dataset(data), metrics(), store=store)
    assert local.computed == 3
    pd.testing.assert_frame_equal(resumed.frame, local.frame)
    details = pd.read_parquet(out / "details")
    assert len(details) == len(resumed.frame) and not details.duplicated(["row", "metric"]).any()
    assert evaluate_ray(str(data), metrics(), out=out, block_size=100).retried_rows == 0


def test_a_second_driver_on_the_same_output_is_refused_while_the_first_runs(
        ray_cluster: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nfrom tempo_eval.engine.distributed import output\n"
         f"with output.claim({str(out)!r}):\n    print('held', flush=True)\n    time.sleep(60)"],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(output.OutputBusy, match=rf"{out} is being written by another evaluation \(process "
                           rf"{holder.pid} on .*\); wait for it to finish, or choose another output directory"):
            evaluate_ray(str(SAMPLE), build_metrics(["temporal_ndcg"]), out=out)
        code = main(["evaluate", str(SAMPLE), "--metrics", "temporal_ndcg", "--engine", "ray", "--out", str(out),
                     "--no-progress"])
        assert code == 2 and "is being written by another evaluation" in capsys.readouterr().err
    finally:
        holder.kill()
        holder.wait()
    # the lock died with its holder (as with a killed driver): the run goes ahead
    assert evaluate_ray(str(SAMPLE), build_metrics(["temporal_ndcg"]), out=out).n_rows > 0


def test_importing_an_output_again_updates_its_run(ray_cluster: str, tmp_path: Path) -> None:
    out = tmp_path / "out"
    evaluate_ray(str(SAMPLE), build_metrics(["temporal_ndcg"]), out=out, block_size=2)
    last = max(output.done_blocks(out, 100))
    output.block_path(out, "results", last).unlink()  # as if stopped before the last block
    store = RunStore(tmp_path / "ws.sqlite")
    run_id = output.import_results(out, store=store)
    assert store.run_info(run_id)["status"] == "cancelled"

    evaluate_ray(str(SAMPLE), build_metrics(["temporal_ndcg"]), out=out, block_size=2)  # resumed
    assert output.import_results(out, store=store) == run_id
    assert output.import_results(out, store=store, name="nightly") == run_id
    info = store.run_info(run_id)
    assert (info["status"], info["name"]) == ("finished", "nightly")
    assert len(store.list_runs()) == 1
    pd.testing.assert_frame_equal(store.results_frame(run_id), output.read_results(out))


def test_nli_actor_loads_the_model_on_its_device_and_matches_local(ray_cluster: str, tmp_path: Path) -> None:
    from tempo_eval.metrics.factual_correctness import FactualCorrectness
    from tempo_eval.verify import make_verifier
    from tests.support.tiny_nli import build_tiny_nli

    model = str(build_tiny_nli(tmp_path / "nli"))
    metric = FactualCorrectness(verifier=make_verifier("nli", model=model))
    run = evaluate_ray(str(SAMPLE), [metric], out=tmp_path / "out", num_workers=1, gpus_per_worker=0)
    local = evaluate(load_dataset(SAMPLE), [FactualCorrectness(verifier=make_verifier("nli", model=model))],
                     store=RunStore())
    pd.testing.assert_frame_equal(run.frame, local.frame)
    assert run.frame["score"].notna().sum() > 0


def test_worker_cache_reads_the_file_or_the_shipped_snapshot_and_hands_back_new_verdicts(
    ray_cluster: str, tmp_path: Path
) -> None:
    import ray

    from tempo_eval.engine.distributed.shipping import WorkerVerdictCache

    stored = VerdictCache(tmp_path / "ws.sqlite")
    stored.put_many({"k1": {"claim": "a"}})
    snapshot = ray.put({"k2": {"claim": "b"}})
    on_file = WorkerVerdictCache(CacheSource(str(tmp_path / "ws.sqlite"), snapshot))
    elsewhere = WorkerVerdictCache(CacheSource(str(tmp_path / "not-on-this-machine.sqlite"), snapshot))
    assert on_file.get_many(["k1", "k2"]) == {"k1": {"claim": "a"}}  # the file, when it can open it
    assert elsewhere.get_many(["k1", "k2"]) == {"k2": {"claim": "b"}}  # else the snapshot
    elsewhere.put_many({"k3": {"claim": "c"}})
    assert elsewhere.get_many(["k3"]) == {"k3": {"claim": "c"}}
    assert elsewhere.drain() == ({"k3": {"claim": "c"}}, 2, 1)
    assert elsewhere.drain() == ({}, 0, 0)
    # the driver stores them once, whoever reports them
    assert stored.add_many({"k3": {"claim": "c"}, "k1": {"claim": "other"}}) == 1
    assert stored.get_many(["k1", "k3"]) == {"k1": {"claim": "a"}, "k3": {"claim": "c"}}
    assert not (tmp_path / "not-on-this-machine.sqlite").exists()


def test_llm_judge_called_from_the_workers_gives_the_local_numbers(ray_cluster: str, tmp_path: Path) -> None:
    from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
    from tempo_eval.verify import make_verifier
    from tests.verify.test_llm_verifier import judge_servers

    with judge_servers() as start:
        server = start()

        def metric() -> TemporalFaithfulness:
            judge = make_verifier("llm", model="judge", base_url=server.base_url, api_key="sk-ray-test-key")
            return TemporalFaithfulness(verifier=judge)

        run = evaluate_ray(str(SAMPLE), [metric()], out=tmp_path / "out", num_workers=1)
        calls = len(server.requests)
        assert calls > 0  # the actor asked the judge over HTTP
        local = evaluate(load_dataset(SAMPLE), [metric()], store=RunStore())
        assert len(server.requests) == calls  # the local run found every verdict in the cache
    pd.testing.assert_frame_equal(run.frame, local.frame)
    assert run.frame["score"].notna().sum() > 0
    assert "sk-ray-test-key" not in (tmp_path / "out" / "manifest.json").read_text()


def test_cli_prints_the_readers_warnings_and_refuses_a_uri_for_the_local_engine(
        ray_cluster: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "blank.csv"
    data.write_text("query,answer,contexts\nWhen?,In 1990.,It opened in 1990.\n,,\nWhere?,In 2001.,Built in 2001.\n",
                    encoding="utf-8")
    code = main(["evaluate", str(data), "--metrics", "temporal_faithfulness", "--engine", "ray",
                 "--out", str(tmp_path / "out"), "--no-progress"])
    assert code == 0
    assert "warning: blank.csv: skipped 1 row(s) with every cell empty" in capsys.readouterr().err

    code = main(["evaluate", "s3://bucket/logs.jsonl?endpoint_override=127.0.0.1:9", "--metrics",
                 "temporal_faithfulness", "--out", str(tmp_path / "r.csv")])
    err = capsys.readouterr().err
    assert code == 2
    assert "'s3://bucket/logs.jsonl': object-store URIs are read by the Ray engine; add --engine ray --out DIR" in err


def test_a_file_ray_data_cannot_read_is_read_on_the_driver_and_says_why(
        ray_cluster: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ray.data

    def refuse(*args: object, **kwargs: object) -> None:  # as workers without the store's credentials
        raise OSError("When reading information for key 'logs.jsonl': AWS Error ACCESS_DENIED\nmore detail")

    monkeypatch.setattr(ray.data, "read_binary_files", refuse)
    data = write_jsonl(generated_rows(20), tmp_path / "logs.jsonl")
    dataset = read_dataset(str(data))
    pd.testing.assert_frame_equal(dataset.frame, load_dataset(data).frame)
    assert dataset.warnings == ["logs.jsonl: read by the local loader on the driver (Ray Data could not read the "
                                "input: OSError: When reading information for key 'logs.jsonl': AWS Error "
                                "ACCESS_DENIED)"]


def test_few_blocks_are_not_queued_two_to_an_actor() -> None:
    from tempo_eval.engine.distributed.driver import _in_flight

    assert [_in_flight(n, 2) for n in (1, 2, 4, 5, 100)] == [1, 1, 1, 2, 2]
