"""Read a dataset with Ray Data's readers into the canonical columns of `tempo_eval.io.dataset`.

    dataset = read_dataset("s3://bucket/logs/", mapping={"query": "question"})

`paths` is a file, a directory (every file in it with a dataset extension, in name order) or a
list of them, local or any URI pyarrow's file systems open (s3://, gs://, ...). Parquet is read
with `ray.data.read_parquet`, CSV/TSV with `ray.data.read_csv` (every cell as text, as the local
fast path reads it) and JSON Lines with `ray.data.read_binary_files` (each file's bytes, decoded
and parsed line by line by the local loader's own functions: `read_text`'s one Arrow row per line
cost 0.8 s per 200,000 lines and gave nothing the decoding needs). The tables then go through the
local loader's own mapping, conversion and checks, so the canonical frame, the warnings and every
error message are the local loader's.

When the Ray readers refuse a file (a malformed CSV the Arrow parser rejects) or a check fails,
the file is read again by the local loader on the driver, whose message names the file, row, line
and column; a file it reads without complaint is used as it reads it. Gzip files and JSON (not
JSON Lines) files are read by the local loader on the driver. The local loader's size limit
(--max-input-mb) does not apply here: the Ray engine reads any size.

Several files must share one format (and, for CSV, one header); their rows are concatenated in
file order, query ids must be unique across them, and generated ids run on across files. The
content hash of one file is the sha256 of its bytes, as locally (so a Ray run and a local run of
the same file are runs of the same dataset); of several files, the sha256 of their names and hashes.
"""

from __future__ import annotations

import hashlib
import logging
import posixpath
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from tempo_eval.common.process import gc_paused
from tempo_eval.io._source import decode_text
from tempo_eval.io.batches import canonical_frame, generated_ids
from tempo_eval.io.dataset import (
    _EXTENSIONS,
    FORMATS,
    Dataset,
    load_dataset,
)
from tempo_eval.io.delimited import (
    _check_cell_sizes,
    _check_header,
    delimited_table,
    misplaced_quote,
)
from tempo_eval.io.errors import InputError
from tempo_eval.io.jsonfiles import _read_jsonl, parquet_columns, parquet_table

logger = logging.getLogger(__name__)

#: formats read by Ray Data's readers; the others are read by the local loader on the driver
RAY_FORMATS = ("parquet", "csv", "tsv", "jsonl")
_HASH_CHUNK = 1 << 20
#: text files starting like this (UTF-8 / UTF-16 byte order marks, Parquet, zip) go to the local loader
_LOCAL_STARTS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff", b"PAR1", b"PK\x03\x04")
#: "scheme://" (two letters at least: "C:/data" is a Windows path), and the credentials a URI may hold
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+://")
_USERINFO = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+://)[^/?#@]*@")


@dataclass
class _File:
    path: str  # as the file system names it (no scheme)
    name: str  # the base name, used in messages as the local loader does
    size: int
    sha256: str = ""
    first_line: bytes = b""
    odd_quotes: bool = False
    #: a quote away from any cell edge, which Arrow's parser reads differently (`misplaced_quote`)
    stray_quote: bool = False


def read_dataset(paths: str | Sequence[str], mapping: Mapping[str, str] | None = None, *,
                 format: str | None = None) -> Dataset:
    """Read `paths` (see the module docstring) into a Dataset; raises InputError as the local
    loader does."""
    filesystem, files = list_files(paths)
    fmt = _common_format(files, format)
    _hash_files(filesystem, files, fmt)
    gzipped = any(f.first_line.startswith(b"\x1f\x8b") for f in files)
    tables, failure = (None, None) if fmt not in RAY_FORMATS or gzipped else _read_with_ray(filesystem, files, fmt)
    warnings: list[str] = []
    frames: list[pd.DataFrame] = []
    used: dict[str, str] | None = None
    for index, file in enumerate(files):
        if tables is None or tables[index] is None:
            dataset = _load_locally(filesystem, file, mapping, fmt)
            frame, file_mapping = dataset.frame, dataset.mapping
            warnings.extend(dataset.warnings)
            if failure is not None:  # read all the same, but on the driver alone: say why
                warnings.append(f"{file.name}: read by the local loader on the driver (Ray Data could not "
                                f"read the input: {failure})")
        else:
            try:
                frame, file_mapping = _canonical(tables[index], file, fmt, mapping, warnings)
            except InputError as error:
                # the local loader's message: it knows the line of each row
                dataset = _load_locally(filesystem, file, mapping, fmt, fallback=error)
                frame, file_mapping = dataset.frame, dataset.mapping
        if used is not None and file_mapping != used:
            raise InputError(
                f"the columns map differently from the first file's ({_show(used)} there, "
                f"{_show(file_mapping)} here); expected every file to have the same columns",
                source=file.name,
            )
        used = file_mapping
        frames.append(frame)
    assert used is not None
    frame = frames[0] if len(frames) == 1 else _concatenate(frames, files, used)
    if len(files) == 1:
        name, content_hash = files[0].name, files[0].sha256
    else:
        name = f"{files[0].name} (+{len(files) - 1} files)"
        content_hash = hashlib.sha256(
            "".join(f"{f.name}:{f.sha256}\n" for f in files).encode("utf-8")
        ).hexdigest()
    return Dataset(frame=frame, name=name, mapping=used, content_hash=content_hash,
                   source_format=fmt, warnings=warnings)


def list_files(paths: str | Sequence[str]) -> tuple[Any, list[_File]]:
    """The file system and the files `paths` names (directories expanded, in name order).
    Every path must be on one file system; a URI pyarrow refuses is an InputError, not a local path."""
    import pyarrow.fs as pafs

    items = [paths] if isinstance(paths, str) else list(paths)
    if not items:
        raise InputError("no input path given; expected a file, a directory or a list of them", source="input")
    filesystem = None
    first = ""
    files: list[_File] = []
    for item in items:
        shown = _shown(str(item))
        try:
            fs, path = pafs.FileSystem.from_uri(str(item))
        except Exception as error:
            if _URI.match(str(item)):  # a URI pyarrow refuses (a mistyped option): not a local path
                problem = str(error).replace(str(item), shown)
                raise InputError(f"cannot open this URI ({problem}); expected a local path or a URI pyarrow "
                                 "opens, such as s3://bucket/key?endpoint_override=host:port&scheme=http",
                                 source=shown) from None
            import os  # a plain local path (relative, or with characters a URI forbids)

            fs, path = pafs.LocalFileSystem(), os.path.abspath(str(item))
        if filesystem is None:
            filesystem, first = fs, shown
        elif not fs.equals(filesystem):  # the files are all read through the first one
            raise InputError(f"this path is on another file system than {first!r}; expected every path on "
                             "one file system (one store, or the local disk)", source=shown)
        info = fs.get_file_info(path)
        if info.type == pafs.FileType.NotFound:
            raise InputError("no such file or directory; expected a dataset file or a directory of them",
                             source=shown)
        if info.type == pafs.FileType.Directory:
            found = [
                i for i in fs.get_file_info(pafs.FileSelector(path, recursive=True))
                if i.type == pafs.FileType.File and _extension(i.path) in _EXTENSIONS
                and not posixpath.basename(i.path).startswith((".", "_"))
            ]
            if not found:
                raise InputError(
                    "the directory holds no dataset file; expected files ending in .parquet, .csv, "
                    ".tsv, .jsonl or .json", source=shown)
            files.extend(_File(i.path, posixpath.basename(i.path), i.size) for i in sorted(found, key=lambda i: i.path))
        else:
            files.append(_File(path, posixpath.basename(path), info.size))
    return filesystem, files


def _shown(item: str) -> str:
    """`item` for messages: credentials in a URI (s3://KEY:SECRET@bucket/...) become ***."""
    return _USERINFO.sub(r"\1***@", item)


def _extension(path: str) -> str:
    parts = posixpath.basename(path).lower().split(".")
    if len(parts) > 2 and parts[-1] == "gz":
        return "." + parts[-2]
    return "." + parts[-1] if len(parts) > 1 else ""


def _common_format(files: list[_File], requested: str | None) -> str:
    if requested is not None:
        fmt = requested.lower().lstrip(".")
        if fmt not in FORMATS:
            raise InputError(f"format={requested!r} is not supported; expected one of {', '.join(FORMATS)}",
                             source=files[0].name)
        return fmt
    formats = []
    for file in files:
        fmt = _EXTENSIONS.get(_extension(file.path))
        if fmt is None:
            raise InputError(
                f"cannot tell the format from the name {file.name!r}; expected a name ending in .csv, "
                ".tsv, .jsonl, .json or .parquet (optionally .gz), or pass format=...", source=file.name)
        formats.append(fmt)
    if len(set(formats)) > 1:
        other = next(f for f, fmt in zip(files, formats, strict=True) if fmt != formats[0])
        raise InputError(f"this file is {_EXTENSIONS[_extension(other.path)]!r} but {files[0].name!r} is "
                         f"{formats[0]!r}; expected every file in one format", source=other.name)
    return formats[0]


def _hash_files(filesystem: Any, files: list[_File], fmt: str) -> None:
    """sha256 of each file (its identity, as locally), its first line (the CSV header) and, for
    CSV, whether it has an odd number of double quotes (an unclosed quote, which Arrow's parser
    reads silently to the end of the file: the local loader reports it) or a stray quote."""
    for file in files:
        digest = hashlib.sha256()
        quotes = 0
        stray = False
        tail = b""  # the end of the previous chunk: a stray quote may straddle two
        head = b""
        # compression=None: pyarrow would gunzip a ".gz" name; the hash is of the file's bytes
        with filesystem.open_input_stream(file.path, compression=None) as stream:
            while chunk := stream.read(_HASH_CHUNK):
                digest.update(chunk)
                if len(head) < _HASH_CHUNK and b"\n" not in head:
                    head += chunk
                if fmt in ("csv", "tsv"):
                    quotes += chunk.count(b'"')
                    stray = stray or misplaced_quote(tail + chunk, "," if fmt == "csv" else "\t")
                    tail = chunk[-2:]
        file.sha256 = digest.hexdigest()
        end = head.find(b"\n")
        file.first_line = (head[:end] if end >= 0 else head).rstrip(b"\r")
        file.odd_quotes = bool(quotes % 2)
        file.stray_quote = stray


def _read_with_ray(filesystem: Any, files: list[_File], fmt: str) -> tuple[list[Any] | None, str | None]:
    """(one pyarrow Table per file, None for a file left to the local loader; None) as read by
    Ray Data. (None, None) for files the local loader's checks should see first; (None, the
    error) when the Ray readers fail: every file then goes to the local loader."""
    import pyarrow as pa
    import ray.data

    paths = [f.path for f in files]
    if fmt != "parquet" and any(f.first_line.startswith(_LOCAL_STARTS) or b"\x00" in f.first_line for f in files):
        return None, None  # a byte order mark, binary or UTF-16 text: the local loader's checks say what to do
    header: list[str] | None = None
    if fmt in ("csv", "tsv"):
        if any(f.odd_quotes or f.stray_quote or not f.first_line.strip() or b'"' in f.first_line for f in files):
            return None, None  # what the local fast path also leaves to the csv module
        if len({f.first_line for f in files}) > 1:
            other = next(f for f in files if f.first_line != files[0].first_line)
            raise InputError(f"the header differs from {files[0].name!r}'s; expected every file to have "
                             "the same columns", source=other.name, line=1)
        try:
            header_line = files[0].first_line.decode("utf-8")
        except UnicodeDecodeError:
            return None, None
        delimiter = "," if fmt == "csv" else "\t"
        header = _check_header(header_line.split(delimiter), files[0].name, delimiter, 1, [])
    context = ray.data.DataContext.get_current()
    preserve_order = context.execution_options.preserve_order
    context.execution_options.preserve_order = True  # rows in file order
    # Ray Data logs a failed read with its full traceback; the local loader's message follows
    ray_logger = logging.getLogger("ray.data")
    level = ray_logger.level
    ray_logger.setLevel(logging.CRITICAL)
    try:
        if fmt == "parquet":
            ds = ray.data.read_parquet(paths, filesystem=filesystem, include_paths=True, partitioning=None)
        elif fmt == "jsonl":
            ds = ray.data.read_binary_files(paths, filesystem=filesystem, include_paths=True)
        else:
            import pyarrow.csv as pa_csv

            assert header is not None
            ds = ray.data.read_csv(
                paths, filesystem=filesystem, include_paths=True, partitioning=None,
                read_options=pa_csv.ReadOptions(column_names=header, skip_rows=1),
                parse_options=pa_csv.ParseOptions(delimiter=delimiter, newlines_in_values=True,
                                                  ignore_empty_lines=True),
                convert_options=pa_csv.ConvertOptions(
                    column_types={name: pa.string() for name in header},
                    strings_can_be_null=False, quoted_strings_can_be_null=False,
                ),
            )
        parts: dict[str, list[Any]] = {path: [] for path in paths}
        for batch in ds.iter_batches(batch_format="pyarrow", batch_size=None):
            if batch.num_rows == 0:
                continue
            for path in pa.compute.unique(batch.column("path")).to_pylist():
                mask = pa.compute.equal(batch.column("path"), path)
                parts[_own_path(path, parts)].append(batch.filter(mask).drop_columns(["path"]))
    except Exception as error:  # Arrow's parse errors name no row: the local loader will
        cause = getattr(error, "cause", None) or error  # a task's error arrives wrapped, with its traceback
        first_line = (str(cause).strip().splitlines() or [""])[0][:300]
        logger.debug("Ray Data could not read %s (%s); reading it on the driver", files[0].name, first_line)
        return None, f"{type(cause).__name__}: {first_line}"
    finally:
        ray_logger.setLevel(level)
        context.execution_options.preserve_order = preserve_order
    return [pa.concat_tables(parts[path]) if parts[path] else None for path in paths], None


def _own_path(path: str, parts: Mapping[str, Any]) -> str:
    # Ray may report a path with or without its scheme
    if path in parts:
        return path
    return next(p for p in parts if path.endswith(p) or p.endswith(path))


def _canonical(table: Any, file: _File, fmt: str, mapping: Mapping[str, str] | None,
               warnings: list[str]) -> tuple[pd.DataFrame, dict[str, str]]:
    notes: list[str] = []
    with gc_paused():  # as the local loader reads: see there why
        if fmt == "parquet":  # unmapped list, struct and binary columns left out, as the local reader does
            keep = parquet_columns(table.schema, mapping, file.name, notes)
            raw = parquet_table(table if keep is None else table.select(keep), file.name)
        elif fmt == "jsonl":
            data = b"".join(chunk.as_py() for chunk in table.column("bytes"))
            raw = _read_jsonl(decode_text(data, file.name, notes), file.name)
        else:
            raw = delimited_table(table, list(table.column_names), file.name, notes)
            if raw is None:
                raise InputError("no data rows", source=file.name)  # the local loader says it better
            _check_cell_sizes(raw, file.name)
        frame, used = canonical_frame(raw, mapping, file.name, notes)
    warnings.extend(notes)
    return frame, used


def _load_locally(filesystem: Any, file: _File, mapping: Mapping[str, str] | None, fmt: str,
                  fallback: InputError | None = None) -> Dataset:
    with filesystem.open_input_stream(file.path, compression=None) as stream:  # the loader gunzips
        data = stream.read()
    # no size limit, as for the files Ray reads (the CLI refuses --max-input-mb with --engine ray)
    dataset = load_dataset(data, mapping, name=file.name, format=fmt, max_bytes=sys.maxsize)
    if fallback is not None:
        # The local loader read what the Ray path refused: its reading wins, but say so.
        dataset.warnings.append(f"{file.name}: read by the local loader ({fallback})")
    return dataset


def _concatenate(frames: list[pd.DataFrame], files: list[_File], mapping: Mapping[str, str]) -> pd.DataFrame:
    frame = pd.concat(frames, ignore_index=True)
    if "query_id" not in mapping:
        data = {c: list(frame[c]) for c in ("run", "query") if c in frame.columns}
        frame["query_id"] = pd.Series(generated_ids(data, len(frame)), dtype=object)
    runs = frame["run"] if "run" in frame.columns else None
    keys = list(zip(runs, frame["query_id"], strict=True)) if runs is not None else list(frame["query_id"])
    seen: dict[Any, int] = {}
    starts = [0]
    for part in frames:
        starts.append(starts[-1] + len(part))
    for index, key in enumerate(keys):
        first = seen.setdefault(key, index)
        if first != index:
            def place(i: int) -> tuple[str, int]:
                k = next(n for n in range(len(frames)) if starts[n] <= i < starts[n + 1])
                return files[k].name, i - starts[k] + 1

            first_file, first_row = place(first)
            file_name, row = place(index)
            raise InputError(
                f"query id {frame['query_id'][index]!r} appears twice: first in {first_file}, row "
                f"{first_row}, again here; expected each query once across the files",
                source=file_name, row=row, column=mapping.get("query_id"),
            )
    return frame


def _show(mapping: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in mapping.items())
