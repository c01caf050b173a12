"""The output directory of a Ray run, and importing it into the workspace.

    OUT/manifest.json                 what ran: dataset identity, run configuration, block size
    OUT/dataset.json.gz               the canonical rows (what the workspace stores for a dataset)
    OUT/results/block-000000.parquet  per-row results, the local runner's columns: row, query_id,
                                      run, metric, score, reason_code, reason
    OUT/details/block-000000.parquet  row, metric, success, details, claims (JSON): what the
                                      dashboard draws, for `import_results`. `details` holds the
                                      bytes the workspace stores (`stored_details` reads them):
                                      packed focus-time details stay packed from the actor to
                                      the store (format 1 held them as JSON text)

A block is rows [i * block_size, (i + 1) * block_size). Its details file is written first, then
its results file, each to a temporary name and renamed into place, so a results file exists only
when the whole block is written: a block is done exactly when its results file exists, and a
resumed run skips it. `pandas.read_parquet("OUT/results")` reads every finished row.

A resumed run computes again the results of finished blocks that failed (NaN with a retryable
reason code, as the local runner's resume does: `failed_results`), and `merge_block` replaces
just those (row, metric) results in the block's two files, again each by one rename.

While a driver writes OUT it holds an exclusive lock on OUT/.lock (`claim`), so a second driver
started on the same directory stops with a message instead of writing the same blocks; the lock
dies with its process, so a killed driver never blocks the resume.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import math
import os
import socket
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from tempo_eval.common.packed_details import PackedDetails
from tempo_eval.common.schema import MetricResult, frame_of_result_rows, is_retryable
from tempo_eval.common.secrets import redact, secret_values
from tempo_eval.store.datasets import _frame_rows
from tempo_eval.store.packing import _unpack, dumps
from tempo_eval.store.results import RESULT_COLUMNS, RESULT_ROW_FIELDS, EncodedRows, encode_rows
from tempo_eval.store.runs import RunStore

MANIFEST = "manifest.json"
LOCK = ".lock"
DATASET = "dataset.json.gz"
FORMAT_NAME = "tempo-eval-ray-output"
FORMAT_VERSION = 2


class OutputMismatch(ValueError):
    """The output directory holds another run's results."""


def block_path(out: str | os.PathLike[str], kind: str, block: int) -> Path:
    return Path(out) / kind / f"block-{block:06d}.parquet"


def read_manifest(out: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The manifest of `out` (None when there is none); raises OutputMismatch when it is not a
    tempo-eval Ray output's manifest (too large, not JSON, no format marker)."""
    from tempo_eval.engine.distributed.checks import MAX_MANIFEST_BYTES

    path = Path(out) / MANIFEST
    if not path.exists():
        return None
    with open(path, "rb") as handle:
        data = handle.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise OutputMismatch(f"{path}: larger than {MAX_MANIFEST_BYTES // 2**20} MB; not a tempo-eval Ray output")
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        raise OutputMismatch(f"{path}: not JSON; expected the manifest a tempo-eval Ray run writes") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise OutputMismatch(f"{path}: not a tempo-eval Ray output (no {FORMAT_NAME!r} format marker)")
    return manifest


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)  # readers see the whole file or none


def write_manifest(out: str | os.PathLike[str], manifest: Mapping[str, Any]) -> None:
    _write_atomic(Path(out) / MANIFEST, json.dumps(manifest, ensure_ascii=False, indent=1).encode("utf-8"))


def prepare(out: str | os.PathLike[str], manifest: Mapping[str, Any]) -> set[int]:
    """Create or reopen `out` for the run `manifest` describes (status "running"); returns the
    blocks already done. A new output gets an `output_id`, kept through resumes, by which
    `import_results` knows it again. A streamed input's row count is not known yet (None): it
    is compared when both runs know it (the content hash says the same all the same).

    Raises OutputMismatch when `out` holds the output of another dataset, configuration or block
    size (resuming into it would mix two runs)."""
    out = Path(out)
    existing = read_manifest(out)
    if existing is not None:
        for key in ("config_hash", "content_hash", "mapping", "block_size", "n_rows"):
            if key == "n_rows" and None in (existing.get(key), manifest.get(key)):
                continue
            if existing.get(key) != manifest.get(key):
                raise OutputMismatch(
                    f"{out} holds the output of another run ({key} differs: {existing.get(key)!r} there, "
                    f"{manifest.get(key)!r} now); choose another output directory or delete this one"
                )
        write_manifest(out, {**existing, "status": "running",
                             "output_id": existing.get("output_id") or uuid.uuid4().hex})
    else:
        _check_foreign(out)
        out.mkdir(parents=True, exist_ok=True)
        write_manifest(out, {**manifest, "status": "running", "output_id": uuid.uuid4().hex})
    for leftover in [*out.glob("*.tmp"), *out.glob("*/*.tmp")]:  # being written when the driver was killed
        leftover.unlink()
    return done_blocks(out)


def finish(out: str | os.PathLike[str], *, n_rows: int, n_blocks: int, warnings: list[str]) -> None:
    """Mark the run finished, with what reading the whole input told: its rows, blocks and the
    reader's warnings."""
    manifest = read_manifest(out)
    if manifest is None:
        raise OutputMismatch(f"{out}: no {MANIFEST}")
    write_manifest(out, {**manifest, "n_rows": n_rows, "n_blocks": n_blocks, "warnings": warnings,
                         "status": "finished"})


def _check_foreign(out: Path) -> None:
    if out.exists() and read_manifest(out) is None and any(p.name != LOCK for p in out.iterdir()):
        raise OutputMismatch(f"{out} is not empty and holds no tempo-eval Ray output; choose an empty "
                             "or new directory")


class OutputBusy(ValueError):
    """Another driver is writing the output directory."""


@contextlib.contextmanager
def claim(out: str | os.PathLike[str]) -> Iterator[None]:
    """Hold OUT/.lock (created with OUT) for the duration of the `with`; raises OutputBusy when another
    process holds it, OutputMismatch when OUT is somebody else's non-empty directory."""
    out = Path(out)
    _check_foreign(out)  # before anything is created in it
    out.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks here; one driver per directory is up to you
        yield
        return
    with open(out / LOCK, "a+", encoding="utf-8") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another process"
            raise OutputBusy(
                f"{out} is being written by another evaluation ({holder}); wait for it to finish, or "
                "choose another output directory"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"process {os.getpid()} on {socket.gethostname()}")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class DatasetWriter:
    """OUT/dataset.json.gz written a batch of rows at a time (`add`): the store's own encoding of
    the rows (`frame_rows_json`'s text, gzipped), so the imported dataset is the one a local run
    stores; under a temporary name until `finish`. Nothing is written when the file is there
    already (a finished run resumed)."""

    def __init__(self, out: str | os.PathLike[str], columns: Sequence[str]) -> None:
        self.path = Path(out) / DATASET
        self.file: Any = None
        self.first = True
        if not self.path.exists():
            self.tmp = self.path.with_name(self.path.name + ".tmp")
            self.file = gzip.open(self.tmp, "wb", compresslevel=3)  # noqa: SIM115 - closed by finish / abandon
            # dumps({"columns": ..., "rows": [...]}) in pieces: sorted keys, json's separators
            self.file.write(f'{{"columns": {dumps([str(c) for c in columns])}, "rows": ['.encode())

    def add(self, frame: pd.DataFrame) -> None:
        if self.file is None or not len(frame):
            return
        rows = dumps(_frame_rows(frame))[1:-1]
        self.file.write(((", " if not self.first else "") + rows).encode("utf-8"))
        self.first = False

    def finish(self) -> None:
        if self.file is None:
            return
        self.file.write(b"]}")
        self.file.close()
        self.file = None
        os.replace(self.tmp, self.path)

    def abandon(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
            self.tmp.unlink(missing_ok=True)


def done_blocks(out: str | os.PathLike[str], n_blocks: int | None = None) -> set[int]:
    """The blocks whose results file exists (of the first `n_blocks`, when given)."""
    from tempo_eval.engine.distributed.checks import BLOCK_NAME

    found = set()
    for path in (Path(out) / "results").glob("block-*.parquet"):
        match = BLOCK_NAME.fullmatch(path.name)
        if match and (n_blocks is None or int(match.group(1)) < n_blocks):
            found.add(int(match.group(1)))
    return found


def write_block(out: str | os.PathLike[str], block: int, results: bytes, details: bytes) -> None:
    """Store one block's two files; the results file, written last, marks the block done."""
    _write_atomic(block_path(out, "details", block), details)
    _write_atomic(block_path(out, "results", block), results)


def failed_results(out: str | os.PathLike[str], blocks: Iterable[int]) -> dict[int, dict[int, list[str]]]:
    """{block: {row: [metric, ...]}} of the finished `blocks`' results that failed: NaN with a
    retryable reason code (`is_retryable`: row_error, judge_error, ...). Blocks without any are
    left out."""
    import pyarrow.parquet as pq

    failed: dict[int, dict[int, list[str]]] = {}
    for block in sorted(blocks):
        table = pq.read_table(block_path(out, "results", block), columns=["row", "metric", "score", "reason_code"])
        columns = (table.column(c).to_pylist() for c in ("row", "metric", "score", "reason_code"))
        for row, metric, score, code in zip(*columns, strict=True):
            if score is None and is_retryable(code):
                failed.setdefault(block, {}).setdefault(int(row), []).append(metric)
    return failed


def merge_block(out: str | os.PathLike[str], block: int, results: bytes, details: bytes) -> None:
    """Put the (row, metric) results in `results` / `details` (Parquet bytes, `encode_block_rows`)
    in place of the finished block's results for the same pairs; the others stay as they are."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    def merged(kind: str, new_bytes: bytes) -> bytes:
        new = pq.read_table(io.BytesIO(new_bytes))
        old = pq.read_table(block_path(out, kind, block))
        if kind == "details" and old.schema.field("details").type != new.schema.field("details").type:
            # a block written by format 1 (the details' JSON text) keeps its format
            texts = pa.array([None if v is None else _unpack(stored_details(v))
                              for v in new.column("details").to_pylist()], type=pa.string())
            new = new.set_column(new.schema.get_field_index("details"), "details", texts)
        replaced = pc.is_in(_pair_keys(old), value_set=_pair_keys(new))
        table = pa.concat_tables([old.filter(pc.invert(replaced)), new.cast(old.schema)])
        return _parquet_bytes(table.sort_by([("row", "ascending"), ("metric", "ascending")]), pq)

    # both files rebuilt before either is replaced; replacing the details first (as a new block's
    # are written) leaves, if stopped between the two, a block that the next resume merges again
    details_bytes, results_bytes = merged("details", details), merged("results", results)
    _write_atomic(block_path(out, "details", block), details_bytes)
    _write_atomic(block_path(out, "results", block), results_bytes)


def _pair_keys(table: Any) -> Any:
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(pc.cast(table.column("row"), "string"), table.column("metric"), "\x00")


# ---- encoding a block (in the actor) ----------------------------------------------------------

def encode_block_rows(rows: Sequence[tuple[int, str, str | None, Sequence[Any]]],
                      secrets: Iterable[str], run_id: int = 0) -> tuple[bytes, bytes, EncodedRows]:
    """(results, details, store rows) for scored rows: (row, query_id, system, [MetricResult]).

    The store rows are what the workspace stores for them (`tempo_eval.store.results.encode_rows`,
    for run `run_id`); the two Parquet files hold the same values (the details as the store's
    encoding, `details_cell`, claims as the store's claim records), so each result is encoded once
    and packed details are never expanded. Reasons, details
    and claims are redacted as the run store redacts them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tempo_eval.store.results import _claim_record

    secrets = list(secrets)
    ordered = [(row, query_id, sorted(results, key=lambda r: r.metric), system)
               for row, query_id, system, results in rows]
    encoded = encode_rows(run_id, ordered, secrets)
    field = {name: i for i, name in enumerate(RESULT_ROW_FIELDS)}
    res = {c: [r[field[f]] for r in encoded.results] for c, f in _RESULT_FIELDS.items()}
    success = [r[field["success"]] for r in encoded.results]
    # packed details hold no claims (`encode_rows`): asking them would expand them
    claims = [redact(dumps([_claim_record(c) for c in found]), secrets) if found else None
              for _, _, results, _ in ordered
              for found in (None if type(r.details) is PackedDetails else (r.details or {}).get("claims")
                            for r in results)]
    det = {"row": res["row"], "metric": res["metric"], "success": [None if v is None else bool(v) for v in success],
           "details": [details_cell(r[field["details"]]) for r in encoded.results], "claims": claims}
    types = {"row": pa.int64(), "score": pa.float64(), "success": pa.bool_(), "details": pa.binary()}
    results_bytes, details_bytes = (
        _parquet_bytes(pa.table({c: pa.array(v, type=types.get(c, pa.string())) for c, v in cols.items()}), pq)
        for cols in (res, det)
    )
    return results_bytes, details_bytes, encoded


def details_cell(stored: str | bytes) -> bytes:
    """A result's details as the details file holds them: the bytes the store keeps (`_pack_details`:
    tagged bytes, or the UTF-8 of a short JSON text, which starts with "{")."""
    return stored if isinstance(stored, bytes) else stored.encode("utf-8")


def stored_details(cell: bytes) -> str | bytes:
    """What the store keeps for a details file's cell (`details_cell` undone)."""
    return cell.decode("utf-8") if cell[:1] == b"{" else cell


def mask_encoded(encoded: EncodedRows, secrets: Sequence[str]) -> EncodedRows:
    """`encoded` with `secrets` masked in its texts (the reason, the stored details, the claims'
    texts); rows without any are kept as they are, so the common case costs a scan. Packed
    details are masked in their values where that masks the expanded details too (as the store
    packs them, `_pack_details`), so they stay packed."""
    from tempo_eval.store.packing import _TAG_LAYOUT, _maskable_when_packed, _pack

    if not secrets:
        return encoded
    maskable = _maskable_when_packed(secrets)
    reason, details = RESULT_ROW_FIELDS.index("reason"), RESULT_ROW_FIELDS.index("details")

    def has_secret(text: Any) -> bool:
        return isinstance(text, str) and any(s in text for s in secrets)

    def masked_details(stored: str | bytes) -> str | bytes:
        if maskable and isinstance(stored, bytes) and stored[:1] == _TAG_LAYOUT:
            text = stored[1:].decode("utf-8")
            return _TAG_LAYOUT + redact(text, secrets).encode("utf-8") if has_secret(text) else stored
        text = _unpack(stored)
        return _pack(redact(text, secrets), details=True) if has_secret(text) else stored

    results = []
    for values in encoded.results:
        stored = masked_details(values[details])
        if stored is not values[details] or has_secret(values[reason]):
            values = list(values)
            values[reason] = redact(values[reason], secrets)
            values[details] = stored
            values = tuple(values)
        results.append(values)
    claims = [tuple(redact(v, secrets) if has_secret(v) else v for v in values) for values in encoded.claims]
    return EncodedRows(encoded.run_id, results, claims)


#: the results file's columns (RESULT_COLUMNS), from the store's fields
_RESULT_FIELDS = {"row": "row_idx", "query_id": "query_id", "run": "system", "metric": "metric", "score": "score",
                  "reason_code": "reason_code", "reason": "reason"}


def _parquet_bytes(table: Any, pq: Any) -> bytes:
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


# ---- reading and importing --------------------------------------------------------------------

def read_results(out: str | os.PathLike[str]) -> pd.DataFrame:
    """Every finished row's results (the local runner's columns), ordered by row and metric: the
    store's own frame of result rows (`RunStore.results_frame`), so the two have the same types."""
    files = sorted((Path(out) / "results").glob("block-*.parquet"))
    if not files:
        return frame_of_result_rows([])
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.concat_tables([pq.read_table(f) for f in files])
    table = table.sort_by([("row", "ascending"), ("metric", "ascending")])
    columns = (table.column(c).to_pylist() for c in RESULT_COLUMNS)
    return frame_of_result_rows(list(zip(*columns, strict=True)))


def encoded_block(run_id: int, rows: Sequence[tuple[tuple[int, str, str | None], list[dict[str, Any]]]],
                  secrets: Sequence[str]) -> EncodedRows:
    """The workspace's rows (`RunStore.write_encoded`) of a block read by `checks.read_block`, for
    run `run_id`, `secrets` masked: the details go in as the file holds them (no decoding)."""
    encoded = EncodedRows(run_id)
    for (row, query_id, system), records in rows:
        for r in records:
            score = None if math.isnan(r["score"]) else r["score"]
            encoded.results.append((run_id, row, str(query_id), system, r["metric"], score, r["reason"],
                                    r["reason_code"], None if r["success"] is None else int(r["success"]),
                                    r["details"]))
            if r["claims"]:  # the claims table's rows, as the store makes them from claim records
                carrier = MetricResult(metric=r["metric"], score=math.nan, details={"claims": r["claims"]})
                encoded.claims += encode_rows(run_id, [(row, query_id, [carrier], system)], ()).claims
    return mask_encoded(encoded, secrets)


def import_results(out: str | os.PathLike[str], *, store: RunStore | None = None,
                   name: str | None = None, user: str | None = None) -> int:
    """Load a Ray run's output into the workspace as a normal run; returns its run id.

    The dataset is stored as the local loader's would be (the same file gives the same dataset, so
    the run sits beside local runs of it); the run gets the same configuration as a local run,
    named "NAME" or "ray: OUT". Importing the same output again (after resuming it, say) updates
    that run rather than adding another, unless it was deleted meanwhile. Its status is
    "finished" when every block is there, else "cancelled" (an interrupted Ray run: resume it,
    then import again). Raises RunInUse while a local evaluation is resuming the imported run.
    `user` is recorded as who made the run (and the dataset) when new."""
    from tempo_eval.engine.distributed import checks
    from tempo_eval.io.dataset import Dataset

    out = Path(out)
    manifest = read_manifest(out)
    if manifest is None:
        raise ValueError(f"{out}: no {MANIFEST}; expected the --out directory of a Ray run")
    if isinstance(manifest, dict) and "n_rows" in manifest and manifest["n_rows"] is None:
        # a streamed input's row count is written when the input has been read to the end
        raise ValueError(f"{out / MANIFEST}: n_rows is not known yet: the run was stopped before its whole input "
                         "was read; run the same evaluate command again to finish it, then import")
    manifest = checks.check_manifest(manifest, out / MANIFEST)
    if not (out / DATASET).exists():
        raise ValueError(f"{out}: no {DATASET} (the run was stopped before writing it); run the same "
                         "evaluate command again to finish it, then import")
    # everything is read and checked before the first write: a bad directory stores nothing
    n_rows, block_size, n_blocks = manifest["n_rows"], manifest["block_size"], manifest["n_blocks"]
    stored = checks.read_stored_rows(out / DATASET, n_rows)
    frame = pd.DataFrame(stored["rows"], columns=stored["columns"], dtype=object)
    query_ids = frame["query_id"].tolist() if "query_id" in frame.columns else None
    blocks = [
        (block, checks.read_block(results, details, range(block * block_size, min(n_rows, (block + 1) * block_size)),
                                  manifest["metrics"], query_ids))
        for block, results, details in checks.all_blocks(out, n_blocks)
    ]
    dataset = Dataset(frame=frame, name=manifest["dataset_name"], mapping=manifest["mapping"],
                      content_hash=manifest["content_hash"], source_format=manifest["source_format"],
                      warnings=list(manifest.get("warnings") or []))
    store = store if store is not None else RunStore()
    dataset_id = store.save_dataset(dataset, user=user)
    # the lock is taken with the run, and held while the rows go in: a local evaluation of the
    # same configuration (which resumes the newest such run, this one) waits for the import
    # instead of writing into it meanwhile. An output written before output ids: a new run.
    origin = f"ray-output:{manifest.get('output_id') or uuid.uuid4().hex}"
    run_id, _ = store.import_run(dataset_id, manifest["config"], origin=origin, name=name,
                                 default_name=f"ray: {out.name}", user=user)
    secrets = secret_values()
    try:
        for _, rows in blocks:  # a block per transaction, not a row (issue 27.5)
            store.write_encoded(encoded_block(run_id, rows, secrets))
        complete = len(blocks) == n_blocks
        store.set_status(run_id, "finished" if complete else "cancelled",
                         None if complete else f"imported {len(blocks)} of {n_blocks} blocks")
    except BaseException as exc:
        store.set_status(run_id, "failed", f"import stopped: {type(exc).__name__}: {exc}")
        raise
    finally:
        store.release_run(run_id)
    return run_id
