"""The Ray engine reading object-store URIs, against a real S3 server on 127.0.0.1 (moto's): the
reader gives the local loader's dataset, errors name the URI, and a run (API and CLI) gives the
local runner's numbers. A user names the store the way pyarrow's `FileSystem.from_uri` reads it:
s3://bucket/key?endpoint_override=HOST:PORT&scheme=http (credentials from the environment)."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tempo_eval.engine.distributed import reader
from tempo_eval.engine.distributed.engine import evaluate_ray
from tempo_eval.engine.distributed.reader import read_dataset
from tempo_eval.engine.runner import evaluate
from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.errors import InputError
from tempo_eval.metrics.temporal_faithfulness import TemporalFaithfulness
from tempo_eval.store.runs import RunStore
from tests.support.cli import run_cli
from tests.support.paths import ROOT
from tests.support.ray_data import generated_rows, write_jsonl
from tests.support.s3_server import FAKE_AWS, S3Store, s3_server

SAMPLE = ROOT / "data" / "sample"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Store]:
    env = pytest.MonkeyPatch()
    for name, value in FAKE_AWS.items():
        env.setenv(name, value)
    try:
        with s3_server() as store:
            yield store
    finally:
        env.undo()


@pytest.fixture(scope="module")
def ray_cluster(s3: S3Store, ray_cluster: str) -> str:
    """The session's cluster (tests/engine/conftest.py), whose workers have the fake credentials,
    once the S3 server runs."""
    return ray_cluster


@pytest.fixture
def local_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the reader leaves to the local loader on the driver: a Ray read that failed on
    the store would go unseen otherwise (the local loader gives the same dataset)."""
    names: list[str] = []
    load = reader._load_locally

    def recorded(filesystem: object, file: reader._File, *args: object, **kwargs: object) -> object:
        names.append(file.name)
        return load(filesystem, file, *args, **kwargs)

    monkeypatch.setattr(reader, "_load_locally", recorded)
    return names


def _same_dataset(ours: object, theirs: object) -> None:
    pd.testing.assert_frame_equal(ours.frame, theirs.frame)
    assert (ours.name, ours.mapping, ours.content_hash, ours.source_format, ours.warnings) == (
        theirs.name, theirs.mapping, theirs.content_hash, theirs.source_format, theirs.warnings)


# ---- reading ----------------------------------------------------------------------------------

def test_s3_objects_read_as_the_local_loader_reads_the_files(ray_cluster: None, s3: S3Store, tmp_path: Path,
                                                             local_reads: list[str]) -> None:
    parquet = tmp_path / "temporal_qa.parquet"
    pd.read_csv(SAMPLE / "temporal_qa.csv", dtype=str, keep_default_na=False).to_parquet(parquet)
    generated = write_jsonl(generated_rows(500), tmp_path / "generated.jsonl")
    for path in (SAMPLE / "temporal_qa.jsonl", SAMPLE / "temporal_qa.csv", parquet, generated):
        uri = s3.put(f"data/single/{path.name}", path.read_bytes())
        _same_dataset(read_dataset(uri), load_dataset(path))
    # a mapping applies as locally
    uri = s3.uri("data/single/temporal_qa.csv")
    mapping = {"query_id": "query_id", "reference_date": "reference_date"}
    _same_dataset(read_dataset(uri, mapping), load_dataset(SAMPLE / "temporal_qa.csv", mapping))
    assert local_reads == []  # Ray Data read every object


def test_a_gzipped_file_or_object_is_the_same_dataset_as_locally(ray_cluster: None, s3: S3Store, tmp_path: Path,
                                                                 local_reads: list[str]) -> None:
    # pyarrow's streams gunzip a ".gz" name by default: the hash was the sha256 of the
    # uncompressed text, so a Ray run and a local run of one file were runs of two datasets
    for name in ("temporal_qa.jsonl", "temporal_qa.csv"):
        path = tmp_path / f"{name}.gz"
        path.write_bytes(gzip.compress((SAMPLE / name).read_bytes(), mtime=0))
        uri = s3.put(f"gzipped/{path.name}", path.read_bytes())
        for given in (str(path), uri):
            _same_dataset(read_dataset(given), load_dataset(path))
    # read by the local loader on the driver, as the module says
    assert local_reads == ["temporal_qa.jsonl.gz"] * 2 + ["temporal_qa.csv.gz"] * 2


def test_the_local_loaders_size_limit_does_not_apply_to_the_ray_engine(
    ray_cluster: None, s3: S3Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The CLI refuses --max-input-mb with --engine ray ("read by Ray Data, without a size limit"),
    # yet the files the reader leaves to the local loader were held to it: a large .gz file, or a
    # bad row in a large file, got "the limit is 1.0 MB ... raise the limit with --max-input-mb".
    monkeypatch.setenv("TEMPO_EVAL_MAX_INPUT_MB", "1")
    text = "".join(json.dumps(row) + "\n" for row in generated_rows(3000))
    assert len(text) > 10**6
    path = tmp_path / "large.jsonl.gz"
    path.write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    _same_dataset(read_dataset(s3.put("large/large.jsonl.gz", path.read_bytes())),
                  load_dataset(path, max_bytes=10**8))
    bad = tmp_path / "large_bad.jsonl"
    bad.write_text(text + '{"query": "b", "answer": \n', encoding="utf-8")
    with pytest.raises(InputError) as local:
        load_dataset(bad, max_bytes=10**8)
    with pytest.raises(InputError) as ours:
        read_dataset(s3.put("large/large_bad.jsonl", bad.read_bytes()))
    assert str(ours.value) == str(local.value) and ours.value.line == 3001


@pytest.mark.parametrize("prefix", ["parts/", "parts"])
def test_a_prefix_of_part_objects_reads_as_their_concatenation_in_name_order(
    ray_cluster: None, s3: S3Store, tmp_path: Path, prefix: str, local_reads: list[str]
) -> None:
    rows = generated_rows(40)
    local = tmp_path / "parts"
    local.mkdir()
    # uploaded out of name order, with the markers a writer leaves beside its parts
    for name, part in (("part-2.jsonl", rows[30:]), ("part-0.jsonl", rows[:12]), ("part-1.jsonl", rows[12:30])):
        s3.put(f"prefix/parts/{name}", write_jsonl(part, local / name).read_bytes())
    s3.put("prefix/parts/_SUCCESS", b"")
    s3.put("prefix/parts/.part-0.jsonl.crc", b"\x00\x01")
    s3.put("prefix/parts-other/part-9.jsonl", (local / "part-0.jsonl").read_bytes())  # a sibling prefix

    dataset = read_dataset(s3.uri(f"prefix/{prefix}"))
    expected = load_dataset(write_jsonl(rows, tmp_path / "all.jsonl")).frame
    pd.testing.assert_frame_equal(dataset.frame, expected)
    _same_dataset(dataset, read_dataset(str(local)))  # the same directory on disk: the same dataset
    assert dataset.name == "part-0.jsonl (+2 files)"
    assert local_reads == []


def test_a_missing_object_or_bucket_names_the_uri(ray_cluster: None, s3: S3Store) -> None:
    s3.put("data/present.jsonl", (SAMPLE / "temporal_qa.jsonl").read_bytes())
    for key in ("data/absent.jsonl", "no-such-bucket/qa.jsonl", "data/absent-prefix/"):
        uri = s3.uri(key)
        with pytest.raises(InputError) as error:
            read_dataset(uri)
        assert str(error.value) == f"{uri}: no such file or directory; expected a dataset file or a directory of them"


def test_an_empty_prefix_names_the_uri(ray_cluster: None, s3: S3Store) -> None:
    s3.put("empty/notes/readme.txt", b"nothing to evaluate")
    uri = s3.uri("empty/notes/")
    with pytest.raises(InputError, match=r"^s3://empty/notes/\?endpoint_override=.*: the directory holds no dataset file"):
        read_dataset(uri)


@pytest.mark.parametrize("name, text", [
    ("bad.jsonl", '{"query": "a", "answer": "in 1990"}\n{"query": "b", "answer": \n'),
    ("ragged.csv", "query,answer\nq a,in 1990\nq b,in 1991,extra\n"),
    ("duplicate.csv", "query_id,query,answer\nq1,a,in 1990\nq1,b,in 1991\n"),
])
def test_a_bad_row_in_an_object_gets_the_local_loaders_located_error(
    ray_cluster: None, s3: S3Store, tmp_path: Path, name: str, text: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    uri = s3.put(f"bad/{name}", path.read_bytes())
    with pytest.raises(InputError) as local:
        load_dataset(path)
    with pytest.raises(InputError) as ours:
        read_dataset(uri)
    assert str(ours.value) == str(local.value)
    assert ours.value.source == name and (ours.value.row is not None or ours.value.line is not None)


# ---- naming the store: mistakes get a message, not a wrong guess -----------------------------

def test_a_mistyped_query_parameter_is_reported_not_read_as_a_local_path(s3: S3Store) -> None:
    # pyarrow refuses the URI; it used to be taken for a local path that did not exist
    uri = f"s3://data/qa.jsonl?endpoint={s3.endpoint}&scheme=http"
    with pytest.raises(InputError) as error:
        read_dataset(uri)
    assert str(error.value) == (
        f"{uri}: cannot open this URI (Unexpected query parameter in S3 URI: 'endpoint'); expected a "
        "local path or a URI pyarrow opens, such as s3://bucket/key?endpoint_override=host:port&scheme=http"
    )
    with pytest.raises(InputError, match=r"^nosuch://x/qa.jsonl: cannot open this URI \(Unrecognized"):
        read_dataset("nosuch://x/qa.jsonl")


def test_paths_on_two_file_systems_are_refused(s3: S3Store) -> None:
    uri = s3.put("mixed/qa.jsonl", (SAMPLE / "temporal_qa.jsonl").read_bytes())
    local = str(SAMPLE / "temporal_qa.jsonl")
    for paths, other in (([uri, local], local), ([local, uri], uri)):
        with pytest.raises(InputError) as error:
            read_dataset(paths)
        assert str(error.value) == (
            f"{other}: this path is on another file system than {paths[0]!r}; expected every path "
            "on one file system (one store, or the local disk)"
        )


def test_credentials_in_a_uri_are_not_repeated_in_messages(s3: S3Store) -> None:
    uri = f"s3://AKIDEXAMPLE:wJalrXUtnFEMI@data/absent.jsonl?endpoint_override={s3.endpoint}&scheme=http"
    with pytest.raises(InputError) as error:
        read_dataset(uri)
    assert "wJalrXUtnFEMI" not in str(error.value) and "AKIDEXAMPLE" not in str(error.value)
    assert str(error.value).startswith(f"s3://***@data/absent.jsonl?endpoint_override={s3.endpoint}&scheme=http: ")


# ---- the same numbers -------------------------------------------------------------------------

def test_evaluate_ray_on_an_s3_uri_gives_the_local_runners_frame(ray_cluster: None, s3: S3Store, tmp_path: Path,
                                                                 local_reads: list[str]) -> None:
    uri = s3.put("runs/temporal_qa.jsonl", (SAMPLE / "temporal_qa.jsonl").read_bytes())
    run = evaluate_ray(uri, [TemporalFaithfulness()], out=tmp_path / "out", num_workers=1, block_size=16)
    assert (run.n_rows, run.n_blocks, run.computed_blocks) == (30, 2, 2) and local_reads == []
    local = evaluate(load_dataset(SAMPLE / "temporal_qa.jsonl"), [TemporalFaithfulness()], store=RunStore())
    pd.testing.assert_frame_equal(run.frame, local.frame)
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["dataset_name"] == "temporal_qa.jsonl"
    assert manifest["content_hash"] == load_dataset(SAMPLE / "temporal_qa.jsonl").content_hash


def test_cli_evaluates_an_s3_uri_with_the_ray_engine(ray_cluster: None, s3: S3Store, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    uri = s3.put("cli/temporal_qa.csv", (SAMPLE / "temporal_qa.csv").read_bytes())
    out = tmp_path / "out"
    code, err = run_cli(["evaluate", uri, "--metrics", "temporal_faithfulness,temporal_ndcg", "--engine", "ray",
                         "--out", str(out), "--num-workers", "1", "--no-progress"], capsys)
    assert code == 0, err
    assert f"-> {out}" in err
    local = evaluate(load_dataset(SAMPLE / "temporal_qa.csv"),
                     [TemporalFaithfulness(), *_metrics(["temporal_ndcg"])], store=RunStore())
    from tempo_eval.engine.distributed.output import read_results

    pd.testing.assert_frame_equal(read_results(out), local.frame)
    # into the workspace as a normal run of the same dataset
    code, err = run_cli(["import-results", str(out), "--name", "from s3"], capsys)
    assert code == 0, err

    code, err = run_cli(["evaluate", s3.uri("cli/absent.csv"), "--metrics", "temporal_ndcg", "--engine", "ray",
                         "--out", str(tmp_path / "out2"), "--no-progress"], capsys)
    assert code == 2
    assert err.strip().endswith(f"error: {s3.uri('cli/absent.csv')}: no such file or directory; expected a "
                                "dataset file or a directory of them")


def _metrics(names: list[str]) -> list[object]:
    from tempo_eval.cli import build_metrics

    return build_metrics(names)
