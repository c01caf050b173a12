"""What `import_results` checks in a Ray output directory before it writes anything.

The directory may come from anywhere (copied from a cluster, edited, damaged), so nothing in it is
trusted: the manifest's keys and types, the number of blocks it claims, the size of the dataset
once decompressed, and every result (its row, metric, score and reason code) are checked first,
and the first problem ends the import with an `InvalidOutput` naming the file and the field
(`check_manifest`, `read_stored_rows`, `read_block`).

Scores are in [0, 1] (every metric's range, `MetricResult`); a missing score (NaN) carries a
reason code. A block holds at most one result per (row, metric) of its own rows.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

#: the largest manifest read (a real one is a few kilobytes)
MAX_MANIFEST_BYTES = 16 * 2**20
#: a block file's name: block-000042.parquet
BLOCK_NAME = re.compile(r"block-(\d{6,})\.parquet")
SCORE_RANGE = (0.0, 1.0)


class InvalidOutput(ValueError):
    """The directory is not what a Ray run writes; the message names the file and the field."""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _int_field(manifest: Mapping[str, Any], key: str, path: Path, minimum: int) -> int:
    value = manifest.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise InvalidOutput(f"{path}: {key} is {_shown(value)}; expected a whole number >= {minimum}")
    return value


def check_manifest(manifest: Any, path: Path) -> dict[str, Any]:
    """The manifest, once its keys have the types and values a Ray run writes; raises InvalidOutput.

    `n_blocks` must be the number of blocks `n_rows` and `block_size` make, so it is bounded by
    the dataset (whose row count is checked against `n_rows` when it is read)."""
    if not isinstance(manifest, dict):
        raise InvalidOutput(f"{path}: expected a JSON object, found {type(manifest).__name__}")
    texts = {"dataset_name": "the dataset's name", "content_hash": "the dataset's content hash",
             "source_format": "the dataset's format"}
    for key, what in texts.items():
        if not isinstance(manifest.get(key), str):
            raise InvalidOutput(f"{path}: {key} is {_shown(manifest.get(key))}; expected text ({what})")
    mapping = manifest.get("mapping")
    if not isinstance(mapping, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in mapping.items()):
        raise InvalidOutput(f"{path}: mapping is {_shown(mapping)}; expected an object of column names")
    warnings = manifest.get("warnings", [])
    if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
        raise InvalidOutput(f"{path}: warnings is {_shown(warnings)}; expected a list of texts")
    output_id = manifest.get("output_id")
    if output_id is not None and not isinstance(output_id, str):
        raise InvalidOutput(f"{path}: output_id is {_shown(output_id)}; expected text")
    n_rows = _int_field(manifest, "n_rows", path, 0)
    block_size = _int_field(manifest, "block_size", path, 1)
    n_blocks = _int_field(manifest, "n_blocks", path, 1)
    expected = max(1, math.ceil(n_rows / block_size))
    if n_blocks != expected:
        raise InvalidOutput(f"{path}: n_blocks is {n_blocks}; {n_rows} rows in blocks of {block_size} "
                            f"make {expected}")
    config = manifest.get("config")
    entries = config.get("metrics") if isinstance(config, dict) else None
    if not isinstance(entries, list) or not all(isinstance(m, dict) and isinstance(m.get("name"), str)
                                                 for m in entries):
        raise InvalidOutput(f"{path}: config is {_shown(config)}; expected the run configuration "
                            '({"metrics": [{"name": ...}, ...], ...})')
    metrics = manifest.get("metrics")
    names = [m["name"] for m in entries]
    if metrics != names or len(set(names)) != len(names):
        raise InvalidOutput(f"{path}: metrics is {_shown(metrics)}; expected the distinct metric names of "
                            f"its config, {_shown(names)}")
    return manifest


def read_stored_rows(path: Path, n_rows: int) -> dict[str, Any]:
    """{"columns": [...], "rows": [[...], ...]} from dataset.json.gz, decompressed no further than
    the input size limit (`max_input_bytes`), with `n_rows` rows as wide as the columns."""
    from tempo_eval.io._source import gunzip_if_needed, read_input
    from tempo_eval.io.errors import InputError

    try:
        raw = read_input(path, name=str(path))
        if not raw.data.startswith(b"\x1f\x8b"):
            raise InvalidOutput(f"{path}: not gzip; expected the gzip-compressed rows a Ray run writes")
        stored = json.loads(gunzip_if_needed(raw).decode("utf-8"))
    except InputError as error:
        raise InvalidOutput(str(error)) from None
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise InvalidOutput(f"{path}: not the JSON a Ray run writes ({type(error).__name__})") from None
    columns = stored.get("columns") if isinstance(stored, dict) else None
    rows = stored.get("rows") if isinstance(stored, dict) else None
    if (not isinstance(columns, list) or not all(isinstance(c, str) for c in columns)
            or len(set(columns)) != len(columns) or not isinstance(rows, list)):
        raise InvalidOutput(f'{path}: expected {{"columns": [distinct names], "rows": [[...], ...]}}')
    if len(rows) != n_rows:
        raise InvalidOutput(f"{path}: holds {len(rows)} rows; the manifest says n_rows is {n_rows}")
    for number, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != len(columns):
            raise InvalidOutput(f"{path}: row {number} is not a list of {len(columns)} values, one per column")
    return stored


def block_files(folder: Path, n_blocks: int) -> dict[int, Path]:
    """{block: file} of the block files in `folder`; a block number outside the manifest's
    `n_blocks`, or a file of another name, raises InvalidOutput. Unfinished writes (.tmp) are
    left out."""
    if not folder.is_dir():
        return {}
    files: dict[int, Path] = {}
    for path in folder.iterdir():
        if path.name.endswith(".tmp"):
            continue
        match = BLOCK_NAME.fullmatch(path.name)
        if match is None:
            raise InvalidOutput(f"{path}: unexpected file; expected only block-NNNNNN.parquet files")
        block = int(match.group(1))
        if block >= n_blocks or block in files:
            raise InvalidOutput(f"{path}: block {block} is outside the manifest's {n_blocks} blocks")
        files[block] = path
    return files


def _read_table(path: Path, columns: Sequence[str], max_rows: int) -> dict[str, list[Any]]:
    """The named columns of a Parquet file as lists, once its row count is at most `max_rows` and
    its size once decompressed at most the input limit (`max_input_bytes`)."""
    import pyarrow.parquet as pq

    from tempo_eval.io._source import max_input_bytes

    try:
        parquet = pq.ParquetFile(path)
        metadata = parquet.metadata
        n = metadata.num_rows
        if n > max_rows:
            raise InvalidOutput(f"{path}: holds {n} results; its block has room for at most {max_rows} "
                                "(one per row and metric)")
        size, limit = sum(metadata.row_group(i).total_byte_size for i in range(metadata.num_row_groups)), max_input_bytes()
        if size > limit:
            raise InvalidOutput(f"{path}: holds {size / 1e6:,.1f} MB once decompressed; the limit is "
                                f"{limit / 1e6:,.1f} MB (TEMPO_EVAL_MAX_INPUT_MB)")
        missing = [c for c in columns if c not in parquet.schema_arrow.names]
        if missing:
            raise InvalidOutput(f"{path}: no column(s) {', '.join(missing)}; expected {', '.join(columns)}")
        table = parquet.read(columns=list(columns))
    except InvalidOutput:
        raise
    except Exception as error:  # pyarrow raises its own error types for a damaged file
        raise InvalidOutput(f"{path}: not a readable Parquet file ({type(error).__name__}: {error})") from None
    return {c: table.column(c).to_pylist() for c in columns}


def _score(value: Any, code: Any, where: str) -> float:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        if not isinstance(code, str) or not code.strip():
            raise InvalidOutput(f"{where}: no score and no reason_code; a missing score needs a reason code")
        return math.nan
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise InvalidOutput(f"{where}: score is {_shown(value)}; expected a number")
    low, high = SCORE_RANGE
    if not low <= float(value) <= high:  # False for inf
        raise InvalidOutput(f"{where}: score is {value!r}; expected a number in [{low:g}, {high:g}]")
    return float(value)


def _json(text: Any, kind: type, where: str, field: str) -> Any:
    if text is None:
        return None
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, kind):
        raise InvalidOutput(f"{where}: {field} is not a JSON {'object' if kind is dict else 'list'}")
    return value


class _Inflated:
    """How much the details of one block have decompressed to: at most the input limit in all."""

    def __init__(self) -> None:
        from tempo_eval.io._source import max_input_bytes

        self.left = max_input_bytes()

    def inflate(self, body: bytes, zdict: bytes | None, where: str) -> bytes:
        unpacker = zlib.decompressobj(15, zdict) if zdict is not None else zlib.decompressobj()
        try:
            text = unpacker.decompress(body, self.left + 1)
        except zlib.error:
            raise InvalidOutput(f"{where}: details are not the compressed JSON the store writes") from None
        if len(text) > self.left or unpacker.unconsumed_tail:
            raise InvalidOutput(f"{where}: the block's details hold more than the input limit once "
                                "decompressed (TEMPO_EVAL_MAX_INPUT_MB)")
        self.left -= len(text)
        return text


def _stored_details(cell: Any, where: str, inflated: _Inflated) -> str | bytes:
    """The stored form of a details cell, once it reads back as a details dict: format 2's bytes
    (`output.details_cell`) as they are, format 1's JSON text packed as the store packs it.
    Packed focus-time details are checked by expanding them, as the store's readers will."""
    from tempo_eval.common.packed_details import expand
    from tempo_eval.store.packing import (
        _TAG_LAYOUT,
        _TAG_ZDICT_1,
        _TAG_ZLIB,
        _ZDICT_1,
        _pack_details,
    )

    if cell is None or isinstance(cell, str):  # format 1: the details' JSON
        return _pack_details(_json(cell, dict, where, "details") or {}, ())
    if not isinstance(cell, bytes):
        raise InvalidOutput(f"{where}: details are {type(cell).__name__}; expected the bytes the store keeps")
    tag, body = cell[:1], cell[1:]
    if tag == _TAG_LAYOUT:
        try:
            packed = json.loads(body)
            if not isinstance(packed, list) or not packed or not isinstance(packed[0], str):
                raise ValueError(packed)
            expand(packed[0], packed[1:])
        except (ValueError, TypeError, RecursionError, LookupError, AttributeError, ArithmeticError):
            raise InvalidOutput(f"{where}: packed details that do not expand (a layout and its values "
                                "expected)") from None
        return cell
    if tag in (_TAG_ZDICT_1, _TAG_ZLIB):
        text = inflated.inflate(body, _ZDICT_1 if tag == _TAG_ZDICT_1 else None, where)
    elif tag == b"{":
        text = cell
    else:
        raise InvalidOutput(f"{where}: details start with {_shown(tag)}; expected JSON or a store packing tag")
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidOutput(f"{where}: details are not UTF-8") from None
    _json(decoded, dict, where, "details")
    return decoded if tag == b"{" else cell  # a short JSON text is stored as text (`output.stored_details`)


def read_block(
    results_path: Path, details_path: Path, rows: range, metrics: Sequence[str], query_ids: Sequence[Any] | None,
) -> list[tuple[tuple[int, str, str | None], list[dict[str, Any]]]]:
    """One block's results, checked, as [((row, query_id, system), [result record, ...]), ...] in
    row order. A record has metric, score (NaN when missing), reason, reason_code, success,
    details (as the store keeps them: `_stored_details`) and claims (a list or None)."""
    max_rows = len(rows) * len(metrics)
    results = _read_table(results_path, ["row", "query_id", "run", "metric", "score", "reason_code", "reason"],
                          max_rows)
    details = _read_table(details_path, ["row", "metric", "success", "details", "claims"], max_rows)
    inflated = _Inflated()
    known = set(metrics)
    extra: dict[tuple[int, str], dict[str, Any]] = {}
    for i, (row, metric) in enumerate(zip(details["row"], details["metric"], strict=True)):
        if (row, metric) in extra:
            raise InvalidOutput(f"{details_path}: row {row}, metric {metric!r} appears twice")
        where = f"{details_path}: row {row}, metric {metric!r}"
        success = details["success"][i]
        if success is not None and not isinstance(success, bool):
            raise InvalidOutput(f"{where}: success is {_shown(success)}; expected true, false or null")
        extra[(row, metric)] = {
            "success": success,
            "details": _stored_details(details["details"][i], where, inflated),
            "claims": _json(details["claims"][i], list, where, "claims"),
        }
    grouped: dict[int, tuple[tuple[int, str, str | None], list[dict[str, Any]]]] = {}
    seen: set[tuple[int, str]] = set()
    for i, row in enumerate(results["row"]):
        metric = results["metric"][i]
        where = f"{results_path}: row {row}, metric {metric!r}"
        if not isinstance(row, int) or row not in rows:
            raise InvalidOutput(f"{results_path}: row {_shown(row)}; this block holds rows "
                                f"{rows.start} to {rows.stop - 1}")
        if metric not in known:
            raise InvalidOutput(f"{where}: not one of the run's metrics ({', '.join(metrics)})")
        if (row, metric) in seen:
            raise InvalidOutput(f"{where}: appears twice; expected one result per row and metric")
        seen.add((row, metric))
        if (row, metric) not in extra:
            raise InvalidOutput(f"{where}: no details in {details_path}")
        query_id, system = results["query_id"][i], results["run"][i]
        if query_ids is not None and str(query_id) != str(query_ids[row]):
            raise InvalidOutput(f"{where}: query_id is {_shown(query_id)}; the dataset's row {row} has "
                                f"{_shown(query_ids[row])}")
        code, reason = results["reason_code"][i], results["reason"][i]
        if code is not None and not isinstance(code, str) or reason is not None and not isinstance(reason, str):
            raise InvalidOutput(f"{where}: reason_code and reason must be text")
        record = {"metric": metric, "score": _score(results["score"][i], code, where),
                  "reason_code": code, "reason": reason or "", **extra[(row, metric)]}
        key = (row, str(query_id), None if system is None else str(system))
        grouped.setdefault(row, (key, []))[1].append(record)
    if len(extra) != len(seen):
        raise InvalidOutput(f"{details_path}: holds details of results {results_path} does not have")
    return [grouped[row] for row in sorted(grouped)]


def all_blocks(out: Path, n_blocks: int) -> Iterable[tuple[int, Path, Path]]:
    """(block, results file, details file) of every finished block: a results file needs its
    details file."""
    results = block_files(out / "results", n_blocks)
    details = block_files(out / "details", n_blocks)
    for block in sorted(results):
        if block not in details:
            raise InvalidOutput(f"{results[block]}: no details file for block {block} in {out / 'details'}")
        yield block, results[block], details[block]
