"""The first pass over a file to be streamed: its content hash, and whether the streaming reader
may read it (the checks the whole-file reader makes on all the bytes at once), with an estimate
of its row count for progress and, for JSON Lines and JSON documents, the keys of all its
objects (the whole-file reader's columns: a key first seen on row 2,500 is a column from the
first batch on, mapped as the whole-file reader maps it).

One sequential read, in chunks: memory stays at a chunk whatever the file's size. The hash is
the sha256 of the bytes as stored (compressed ones too), as `load_dataset` computes it, so a file
streamed and the same file loaded whole are the same dataset in the workspace.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from tempo_eval.io._source import check_text_bytes
from tempo_eval.io.errors import InputError

#: bytes read at a time
CHUNK = 1 << 22
#: the longest line (a CSV or JSON Lines row), or element of a JSON array, the streaming reader
#: takes, in bytes: a row's cells hold at most `MAX_CELL_CHARS` (1,000,000) characters each, so
#: a longer line is a broken quote or a bomb (a few KB of .zst that decompress to a 1 GB line).
#: It is refused while it is read, after at most a chunk past this limit: memory stays bounded.
MAX_LINE_BYTES = 32 << 20

_NEWLINE, _QUOTE = ord("\n"), ord('"')


@dataclass
class Scan:
    """What the first pass found. `streamable` False: the whole-file reader must read the file
    (it finds and names the problem, or reads what the fast reader would not)."""

    content_hash: str
    streamable: bool = True
    estimated_rows: int = 0
    #: the byte order mark's warning, as the whole-file reader gives it
    warnings: list[str] = field(default_factory=list)
    #: the decompressed size, for the disk-space check
    size: int = 0
    #: JSON Lines and JSON: every key of the file's objects, in the order they first appear (None otherwise)
    keys: list[str] | None = None


class BackgroundHash:
    """The sha256 of everything left in `stream`, computed in a thread while the caller makes the
    first pass's checks: reading and sha256 release the GIL, so on two cores the hash adds no time
    to the pass (it took as long as the checks: 0.3 s each for 60,000 rows of the issue-27 bench,
    80 MB, measured). `cancel` stops it after the chunk it is reading."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stop = threading.Event()
        self._digest = ""
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(stream,), name="content-hash", daemon=True)
        self._thread.start()

    def _run(self, stream: BinaryIO) -> None:
        digest = hashlib.sha256()
        try:
            while not self._stop.is_set() and (chunk := stream.read(CHUNK)):
                digest.update(chunk)
            self._digest = digest.hexdigest()
        except BaseException as error:  # raised in the caller's thread, by `result`
            self._error = error

    def result(self) -> str:
        """The hash, once the whole stream is read; raises what reading it raised."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._digest

    def cancel(self) -> None:
        """Stop hashing (the caller failed): the thread ends after the chunk it is reading."""
        self._stop.set()
        self._thread.join()


class FedHash:
    """The sha256 of a stream the first pass reads itself: `chunks()` reads the stream a chunk at
    a time for the pass's checks and hands each chunk to a hashing thread too (sha256 releases
    the GIL: on two cores the hash still adds no time), so the file is read once, not once for
    the checks and again for the hash. `result()` hashes what the pass left unread, then gives the
    hash. The same interface as `BackgroundHash` otherwise."""

    def __init__(self, stream: BinaryIO) -> None:
        import queue

        self._stream = stream
        self._digest = hashlib.sha256()
        self._queue: queue.Queue[bytes | None] = queue.Queue(maxsize=4)  # at most 4 chunks held
        self._thread = threading.Thread(target=self._run, name="content-hash", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (chunk := self._queue.get()) is not None:
            self._digest.update(chunk)

    def chunks(self) -> Iterator[bytes]:
        """The stream's chunks (each hashed too), from where it stands to its end."""
        while chunk := self._stream.read(CHUNK):
            self._queue.put(chunk)
            yield bytes(chunk)

    def result(self) -> str:
        """The hash of the whole stream: the chunks the pass read, then the rest."""
        for _ in self.chunks():
            pass
        self._queue.put(None)
        self._thread.join()
        return self._digest.hexdigest()

    def cancel(self) -> None:
        """Stop hashing (the caller failed)."""
        self._queue.put(None)
        self._thread.join()


def hashed_scan(stream: BinaryIO, source: str, source_format: str, delimiter: str | None, *,
                max_line_bytes: int = MAX_LINE_BYTES) -> Scan:
    """The first pass over an uncompressed text file open at its start, in one call: its checks
    (`scan_json_array` for "json", else `scan_text`) on the chunks it reads, hashed as they are
    read (`FedHash`), so the file is read once; `content_hash` is the sha256 of all its bytes."""
    hashing = FedHash(stream)
    try:
        if source_format == "json":
            scan = scan_json_array(hashing.chunks(), source, max_line_bytes=max_line_bytes)
        else:
            scan = scan_text(hashing.chunks(), source, delimiter, json_lines=source_format == "jsonl",
                             max_line_bytes=max_line_bytes)
        scan.content_hash = hashing.result()
    except BaseException:
        hashing.cancel()
        raise
    return scan


def line_too_long(source: str, line: int, limit: int, *, element: bool = False) -> InputError:
    """The refusal of a line longer than `limit` bytes (or of a JSON array's `element`, counted
    from 1, longer than `limit` characters), naming the file and the line (element)."""
    what = "the array's element" if element else "the line"
    unit = "characters" if element else "bytes"
    return InputError(
        f"{what} is longer than {limit:,} {unit}; expected at most {limit:,} (a cell holds at most "
        "1,000,000 characters: is a closing quote missing, or a whole document in one cell?)",
        source=source, line=None if element else line, row=line if element else None, row_label="element",
    )


class LineLengths:
    """Lines longer than `limit` bytes found chunk by chunk, before anything holds them: `check`
    takes each chunk with the positions of its line ends and raises `line_too_long`."""

    def __init__(self, source: str, limit: int) -> None:
        self.source, self.limit = source, limit
        self.since = 0  # bytes of the line not ended yet
        self.lines = 0  # line ends before this chunk

    def check(self, chunk: bytes, ends: Any) -> None:
        first = self.since + (int(ends[0]) if len(ends) else len(chunk))  # the line going on
        if first > self.limit:
            raise line_too_long(self.source, self.lines + 1, self.limit)
        if not len(ends):
            self.since = first
            return
        if len(chunk) > self.limit and len(ends) > 1:  # a line inside the chunk may be longer
            import numpy as np

            inner = np.diff(ends) - 1
            longest = int(inner.argmax())
            if inner[longest] > self.limit:
                raise line_too_long(self.source, self.lines + longest + 2, self.limit)
        self.since = len(chunk) - int(ends[-1]) - 1
        self.lines += len(ends)
        if self.since > self.limit:
            raise line_too_long(self.source, self.lines + 1, self.limit)

    def rest(self, chunks: Iterator[bytes], scan: Scan) -> Scan:
        """`scan` (not streamable) once the lines of the remaining `chunks` are checked: the
        whole-file reader that reads it then holds no line longer than the limit either."""
        import numpy as np

        for chunk in chunks:
            self.check(chunk, np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == _NEWLINE))
        return scan


def scan_text(chunks: Iterator[bytes], source: str, delimiter: str | None, *, json_lines: bool = False,
              max_line_bytes: int = MAX_LINE_BYTES) -> Scan:
    """Check decompressed text the way the whole-file reader does, chunk by chunk: the first chunk
    through `check_text_bytes` (binary files, other encodings, a NUL byte: the same InputError),
    every chunk for NUL bytes and UTF-8; for CSV/TSV (`delimiter` given) a header line the fast
    reader takes, an even count of quotes and no misplaced quote. Rows are estimated from line
    ends (a cell with a line break counts more than once: an estimate, for progress). With
    `json_lines`, `keys` collects the keys of every line's object (a line that is not one is
    passed over here: the streaming reader names it). A line longer than `max_line_bytes` raises
    InputError naming it (`LineLengths`), before the line is held."""
    import numpy as np

    scan = Scan(content_hash="")
    decoder = codecs.getincrementaldecoder("utf-8")()
    keys: dict[str, None] | None = {} if json_lines else None
    partial = ""
    quotes = rows = 0
    tail = last = b""
    misplaced = _misplaced_pattern(delimiter) if delimiter is not None else None
    lengths = LineLengths(source, max_line_bytes)
    for index, chunk in enumerate(chunks):
        if index == 0:
            chunk = check_text_bytes(chunk, source, scan.warnings)
            if delimiter is not None and not _fast_header(chunk):
                scan.streamable = False
        elif b"\x00" in chunk:
            scan.streamable = False
        counted = np.frombuffer(chunk, dtype=np.uint8)  # counted by numpy: 3x faster than bytes.count
        ends = np.flatnonzero(counted == _NEWLINE)
        lengths.check(chunk, ends)
        if not scan.streamable:
            return lengths.rest(chunks, scan)
        scan.size += len(chunk)
        # ASCII is UTF-8: decoded only to be checked, such a chunk is not (when no character
        # started in the chunk before is left unfinished); JSON Lines need the text for keys
        if keys is not None or not chunk.isascii() or decoder.getstate()[0]:
            try:
                text = decoder.decode(chunk)
            except UnicodeDecodeError:
                scan.streamable = False
                return lengths.rest(chunks, scan)
            if keys is not None:
                lines = (partial + text).split("\n")
                partial = lines.pop()
                _collect_keys(lines, keys)
        rows += len(ends)
        if delimiter is not None:
            if misplaced is not None and misplaced.search(tail + chunk):
                scan.streamable = False
                return lengths.rest(chunks, scan)
            quotes += int(np.count_nonzero(counted == _QUOTE))
            tail = chunk[-2:]
        last = chunk[-1:] or last
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        scan.streamable = False
    if keys is not None:
        _collect_keys([partial], keys)
        scan.keys = list(keys)
    if quotes % 2:
        scan.streamable = False
    if last and last != b"\n":
        rows += 1
    scan.estimated_rows = max(rows - (1 if delimiter is not None else 0), 0)  # the header line
    return scan


def scan_json_array(chunks: Iterator[bytes], source: str, *, max_line_bytes: int = MAX_LINE_BYTES) -> Scan:
    """`scan_text` for a JSON document: streamable when it is one array of objects (at least one),
    or an object with such an array under "data" as the whole-file reader reads it, read to its
    end (`tempo_eval.io.json_array`), with `keys` the keys of all its objects and
    `estimated_rows` their count. Any other document (pandas' split and column orients, a
    DeepEval test run, JSON Lines under a .json name, text that is not valid JSON) is left to
    the whole-file reader."""
    from tempo_eval.io.json_array import ElementTooLong, NotAnArray, array_elements

    scan = Scan(content_hash="")
    keys: dict[str, None] = {}

    def texts() -> Iterator[str]:
        decoder = codecs.getincrementaldecoder("utf-8")()
        for index, chunk in enumerate(chunks):
            if index == 0:
                chunk = check_text_bytes(chunk, source, scan.warnings)  # InputError for binary files
            elif b"\x00" in chunk:
                raise NotAnArray("a NUL byte")
            scan.size += len(chunk)
            yield decoder.decode(chunk)
        yield decoder.decode(b"", final=True)

    try:
        for element in array_elements(texts(), max_element=max_line_bytes):
            if type(element) is not dict:
                raise NotAnArray("an element is not an object")
            scan.estimated_rows += 1
            if len(element) > len(keys) or not keys.keys() >= element.keys():
                keys.update(dict.fromkeys(element))
    except ElementTooLong as long:
        raise line_too_long(source, long.index, max_line_bytes, element=True) from None
    except (NotAnArray, UnicodeDecodeError, RecursionError):
        scan.streamable = False
    scan.streamable = scan.streamable and scan.estimated_rows > 0
    scan.keys = list(keys)
    return scan


_decode = json.JSONDecoder().decode


def _collect_keys(lines: list[str], keys: dict[str, None]) -> None:
    """Add the keys of each line's JSON object to `keys` (first seen first)."""
    decode = _decode
    for line in lines:
        if not line or line.isspace():
            continue
        try:
            record = decode(line)
        except (ValueError, RecursionError):  # the streaming reader names the line
            continue
        if type(record) is dict and (len(record) > len(keys) or not keys.keys() >= record.keys()):
            keys.update(dict.fromkeys(record))


def _fast_header(head: bytes) -> bool:
    """True when the first line is one the fast CSV reader takes (not empty, no quote, UTF-8, not
    Excel's `sep=` line): otherwise the whole-file reader decides."""
    if head[:4].lower() == b"sep=":
        return False
    end = head.find(b"\n")
    first = head[:end].rstrip(b"\r") if end > 0 else b""
    if not first.strip() or b'"' in first:
        return False
    try:
        first.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _misplaced_pattern(delimiter: str) -> re.Pattern[bytes]:
    # the test of tempo_eval.io.delimited.misplaced_quote (a quote with a character other than a
    # line end, a quote or the delimiter on each side), made once for every chunk. Written to
    # start at the quote, so the regex engine skips ahead to each quote: 20x faster than starting
    # with the character before it (which made this check cost 29 us a row of the issue-27 bench).
    edge = re.escape(delimiter.encode("utf-8"))
    return re.compile(rb'"(?<=[^\r\n"' + edge + rb']")(?=[^\r\n"' + edge + rb"])")
