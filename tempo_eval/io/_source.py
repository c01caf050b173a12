"""Reading what the user gave us (a path, bytes or an uploaded file) into bytes, then text.

Every failure is an `InputError` naming the file; decoding failures also name the line and the
byte offset, and say to save the file as UTF-8.

Inputs larger than `max_input_bytes()` (default 128 MB, after gunzip) are refused before they are
read: loading keeps the whole table in memory, about ten bytes of memory per byte of CSV, so the
limit keeps a load under ~2 GB. Raise it with the environment variable TEMPO_EVAL_MAX_INPUT_MB
(or the CLI option --max-input-mb), or per call with `max_bytes=`.
"""

from __future__ import annotations

import errno
import gzip
import io
import os
import stat
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, BinaryIO

from tempo_eval.common.confine import PathRefused, confined_roots, open_confined
from tempo_eval.io.errors import InputError

#: the default input size limit, in megabytes (10**6 bytes)
DEFAULT_MAX_INPUT_MB = 128
MAX_INPUT_ENV = "TEMPO_EVAL_MAX_INPUT_MB"

_UTF8_BOM = b"\xef\xbb\xbf"
_GZIP_MAGIC = b"\x1f\x8b"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_PARQUET_MAGIC = b"PAR1"
_ZIP_MAGIC = b"PK\x03\x04"


@dataclass
class RawInput:
    """The bytes of one input and the name used in messages (a file name, not a full path)."""

    name: str
    data: bytes
    #: the size limit the bytes were read under; gunzip applies it to the decompressed size too
    limit: int | None = None


def source_name(source: Any, default: str) -> str:
    """The name used in messages: a path's file name, an upload's name, or `default`."""
    if isinstance(source, (str, os.PathLike)):
        return Path(source).name
    return Path(str(getattr(source, "name", "") or default)).name


def max_input_bytes() -> int:
    """The input size limit in bytes: TEMPO_EVAL_MAX_INPUT_MB megabytes, default 128."""
    text = os.environ.get(MAX_INPUT_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_INPUT_MB * 10**6
    try:
        megabytes = float(text)
    except ValueError:
        megabytes = float("nan")
    if not megabytes > 0:
        raise InputError(f"{MAX_INPUT_ENV}={text!r}; expected a positive number of megabytes")
    return int(megabytes * 10**6)


def _too_large(size: int, limit: int, label: str, what: str = "the file holds") -> InputError:
    return InputError(
        f"{what} {size / 1e6:,.1f} MB; the limit is {limit / 1e6:,.1f} MB, because the whole table "
        f"is held in memory (about 10x its size): split the file, or raise the limit with "
        f"--max-input-mb or the environment variable {MAX_INPUT_ENV}",
        source=label,
    )


def read_input(
    source: Any, *, name: str | None = None, default_name: str = "data", max_bytes: int | None = None
) -> RawInput:
    """Bytes from a path (str or PathLike), bytes, or a binary file-like object.

    A file-like object may offer `getvalue()` (Streamlit's UploadedFile, BytesIO) or `read()`;
    its `.name` is used when `name` is not given. Text (str) from a text-mode file is encoded back
    to UTF-8. A missing file, a path that is not a regular file (`read_regular_file`) or an input
    over `max_bytes` (default `max_input_bytes()`; a file is counted as it is read) raises
    InputError; any other type raises TypeError.
    """
    limit = max_input_bytes() if max_bytes is None else max_bytes
    label = name or source_name(source, default_name)
    if isinstance(source, (str, os.PathLike)):
        raw = RawInput(label, read_regular_file(source, limit, label))
    elif isinstance(source, (bytes, bytearray, memoryview)):
        raw = RawInput(label, bytes(source))
    elif hasattr(source, "getvalue") or hasattr(source, "read"):
        # a stream is read no further than the limit allows (one byte more tells it is over)
        data = source.getvalue() if hasattr(source, "getvalue") else source.read(limit + 1)
        if isinstance(data, str):
            data = data.encode("utf-8")
        raw = RawInput(label, bytes(data))
    else:
        raise TypeError(
            "expected a path (str or Path), bytes, or a binary file-like object with .read() or "
            f".getvalue(), got {type(source).__name__}"
        )
    if len(raw.data) > limit:
        raise _too_large(len(raw.data), limit, raw.name)
    raw.limit = limit
    return raw


#: how much of a file is read at a time; the count of bytes read is checked after each chunk
_CHUNK = 1 << 20


def open_regular(path: str | os.PathLike[str], label: str | None = None) -> int:
    """An open, blocking descriptor of the regular file at `path` (links followed); InputError
    naming the path for a missing file, a directory, a FIFO, a device, a socket or a link loop
    (see `read_regular_file`). The caller closes it. Inside a dashboard job
    (`tempo_eval.common.confine.reads_confined_to`) the path is confined to the allowed folders and
    opened without following links (`open_confined`): InputError with the refusal otherwise."""
    label = label or Path(path).name
    shown = str(path)
    roots = confined_roots()
    try:
        if roots is not None:  # a dashboard job: confined again where the file is opened
            fd = open_confined(path, roots)
        else:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except PathRefused as refused:
        raise InputError(str(refused), source=label) from None
    except ValueError:  # an embedded NUL byte
        raise InputError(f"{shown!r} contains a NUL byte, which no file name holds; expected a file's path",
                         source=label) from None
    except FileNotFoundError:
        raise InputError(f"file not found: {shown!r}; expected an existing file", source=label) from None
    except IsADirectoryError:
        raise InputError(f"{shown!r} is a directory; expected a file", source=label) from None
    except OSError as error:
        raise InputError(f"could not open {shown!r}: {_os_reason(error)}; expected a regular file",
                         source=label) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise InputError(f"{shown!r} is a directory; expected a file", source=label)
        if not stat.S_ISREG(mode):
            kind = _FILE_KINDS.get(stat.S_IFMT(mode), "not a plain file")
            raise InputError(f"{shown!r} is {kind}, not a regular file; expected a regular file "
                             "(copy the data into a file first)", source=label)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular_file(
    path: str | os.PathLike[str], label: str | None = None, *, limit: int | None = None
) -> BinaryIO:
    """The regular file at `path` open for reading (binary), with `open_regular`'s checks, and
    refused (InputError) when it holds more than `limit` bytes (None: no limit). The streaming
    reader (`tempo_eval.io.stream`) reads a file of any size through here."""
    label = label or Path(path).name
    fd = open_regular(path, label)
    try:
        size = os.fstat(fd).st_size
        if limit is not None and size > limit:
            raise _too_large(size, limit, label)
        return os.fdopen(fd, "rb", closefd=True)
    except OSError as error:
        os.close(fd)
        raise InputError(f"could not read {str(path)!r}: {_os_reason(error)}", source=label) from None
    except BaseException:
        os.close(fd)
        raise


def open_dataset_file(
    path: str | os.PathLike[str], label: str, format: str | None, limit: int | None
) -> tuple[str, BinaryIO, str | None]:
    """(format, the file open at its start, its compression: "gzip", "zstd" or None) of a dataset
    file to stream, in one call: the format as `_format_of` finds it (InputError first), the file
    as `open_regular_file` opens it (`limit`: bytes it may hold, None for any), the compression
    from its first bytes. The caller closes the file."""
    source_format = _format_of(RawInput(label, b""), format)
    raw = open_regular_file(path, label, limit=limit)
    try:
        head = raw.read(4)
        raw.seek(0)
        magics = {_GZIP_MAGIC: "gzip", _ZSTD_MAGIC: "zstd"}
        compression = next((name for magic, name in magics.items() if head.startswith(magic)), None)
    except BaseException:
        raw.close()
        raise
    return source_format, raw, compression


def read_regular_file(path: str | os.PathLike[str], limit: int, label: str | None = None) -> bytes:
    """The bytes of the regular file at `path` (links followed), at most `limit` bytes.

    Only a regular file is read: a FIFO, a device (a link to /dev/zero or /dev/urandom), a socket or
    a directory raises InputError naming the path, and so does a symbolic-link loop. The file is
    opened without blocking (a FIFO with no writer would wait forever), checked with fstat on the
    open descriptor (no race with a file swapped after the check), and its bytes are counted as
    they are read: a file that grows past `limit` while it is read is refused too, never held.
    Every path the command line and the dashboard read (datasets, conversations, run files,
    qrels, foreign results) goes through here, by way of `read_input`.
    """
    label = label or Path(path).name
    with open_regular_file(path, label, limit=limit) as stream:
        try:
            what = "read so far, the file holds more than"
            return _read_limited(stream, limit, label, what, _CHUNK)
        except OSError as error:
            reason = _os_reason(error)
            raise InputError(f"could not read {str(path)!r}: {reason}", source=label) from None


def _read_limited(stream: Any, limit: int | None, label: str, what: str, chunk_size: int = 1 << 22
                  ) -> bytes:
    """All of `stream`, refused with `_too_large(..., what)` as soon as it passes `limit` bytes."""
    out = bytearray()
    while chunk := stream.read(chunk_size):
        out += chunk
        if limit is not None and len(out) > limit:
            raise _too_large(len(out), limit, label, what)
    return bytes(out)


def _os_reason(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "too many levels of symbolic links (a symbolic-link loop)"
    return error.strerror.lower() if error.strerror else str(error)


_FILE_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device (such as /dev/zero or /dev/urandom)",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def gunzip_if_needed(raw: RawInput) -> bytes:
    """The bytes, decompressed when they are gzip or Zstandard (recognised by content, not by
    extension).

    The decompressed size is held to the limit the bytes were read under (`RawInput.limit`):
    decompression stops, with an InputError, as soon as it passes it."""
    if raw.data.startswith(_ZSTD_MAGIC):
        return _unzstd(raw)
    if not raw.data.startswith(_GZIP_MAGIC):
        return raw.data
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw.data)) as stream:
            return _read_limited(stream, raw.limit, raw.name, _DECOMPRESSED)
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(
            f"the file starts like gzip but could not be decompressed ({error}); expected a complete "
            ".gz file or plain text",
            source=raw.name,
        ) from None


def _unzstd(raw: RawInput) -> bytes:
    import pyarrow as pa

    try:
        stream = pa.CompressedInputStream(pa.BufferReader(raw.data), "zstd")
        return _read_limited(stream, raw.limit, raw.name, _DECOMPRESSED)
    except (OSError, pa.ArrowException) as error:
        raise InputError(
            f"the file starts like Zstandard but could not be decompressed ({error}); expected a "
            "complete .zst file or plain text",
            source=raw.name,
        ) from None


_DECOMPRESSED = "decompressed, the file holds more than"


#: byte order marks of the encodings we refuse; UTF-32 first, as its little-endian mark starts
#: with UTF-16's
_OTHER_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def check_text_bytes(data: bytes, source: str, warnings: list[str]) -> bytes:
    """The bytes of a text file, without a UTF-8 byte order mark (removed with a warning).

    Binary files (Parquet, Excel/zip) and UTF-16 or UTF-32 text raise InputError, and so does a NUL byte
    anywhere: no text format we read holds one, and a text cell must not carry it on. Validity as UTF-8 is checked by `decode_utf8`.
    """
    if data.startswith(_PARQUET_MAGIC):
        raise InputError(
            "this is a Parquet file, not text; expected UTF-8 text for this name: name the file "
            ".parquet or pass format='parquet'",
            source=source,
        )
    if data.startswith(_ZIP_MAGIC):
        raise InputError(
            "this is a zip archive or an Excel workbook, not text; expected UTF-8 text "
            "(in Excel: Save As 'CSV UTF-8')",
            source=source,
        )
    encoding = next((name for mark, name in _OTHER_BOMS if data.startswith(mark)), None)
    if encoding is not None:
        raise InputError(
            f"the file is {encoding} text (it starts with a {encoding} byte order mark); expected "
            "UTF-8: save the file as UTF-8",
            source=source,
        )
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM):]
        warnings.append(f"{source}: removed the UTF-8 byte order mark (BOM) at the start of the file")
    nul = data.find(b"\x00")  # memchr: a scan of the whole file costs little
    if nul >= 0:
        looks = "this looks like a binary file" if nul < 1 << 16 else "a NUL byte is not text"
        raise InputError(
            f"found a NUL byte at byte offset {nul}: {looks}; expected UTF-8 text (remove the NUL "
            "bytes, or save the file as UTF-8 text)",
            source=source,
            line=data.count(b"\n", 0, nul) + 1,
        )
    return data


def decode_utf8(data: bytes, source: str) -> str:
    """Strict UTF-8; the error names the line and byte offset of the first invalid byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        start = error.start
        bad = data[start:max(error.end, start + 1)]
        line = data.count(b"\n", 0, start) + 1
        line_start = data.rfind(b"\n", 0, start) + 1
        before = data[line_start:start].decode("utf-8", errors="replace")[-30:]
        raise InputError(
            f"byte 0x{bad.hex()} at byte offset {start} (after {before!r}) is not valid UTF-8; "
            "expected UTF-8 text: save the file as UTF-8 (in Excel: 'CSV UTF-8'); "
            "it may be Latin-1 or Windows-1252",
            source=source, line=line,
        ) from None


def decode_text(data: bytes, source: str, warnings: list[str]) -> str:
    """`check_text_bytes` then `decode_utf8`: strict UTF-8 text without a byte order mark."""
    return decode_utf8(check_text_bytes(data, source, warnings), source)


# ---- the format of a dataset file --------------------------------------------------------

FORMATS: tuple[str, ...] = ("csv", "tsv", "jsonl", "json", "parquet")
_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".parquet": "parquet",
    ".pq": "parquet",
}


def _format_of(raw: RawInput, requested: str | None) -> str:
    """The format of a dataset input: `requested`, else from the name's extension (a .gz / .zst
    suffix skipped); InputError naming the input otherwise."""
    if requested is not None:
        fmt = requested.lower().lstrip(".")
        if fmt not in FORMATS:
            raise InputError(
                f"format={requested!r} is not supported; expected one of {', '.join(FORMATS)}",
                source=raw.name,
            )
        return fmt
    suffixes = [s.lower() for s in PurePath(raw.name).suffixes]
    if suffixes and suffixes[-1] in (".gz", ".zst"):
        suffixes.pop()
    ext = suffixes[-1] if suffixes else ""
    if ext in _EXTENSIONS:
        return _EXTENSIONS[ext]
    hint = " Excel workbooks are not read directly: save as 'CSV UTF-8'." if ext in (".xlsx", ".xls") else ""
    raise InputError(
        f"cannot tell the format from the name {raw.name!r}; expected a name ending in .csv, .tsv, "
        f".jsonl, .json or .parquet (optionally .gz or .zst), or pass format=...{hint}",
        source=raw.name,
    )
