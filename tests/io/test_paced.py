"""A streamed CSV file is read only a few blocks ahead of the rows taken (issue 27: the reading
thread of pyarrow's streaming reader ran 32 blocks, 130 MB, ahead of a slow consumer)."""

from __future__ import annotations

import contextlib
import io
import threading
import time
from pathlib import Path

import pandas as pd

from tempo_eval.io import stream as stream_module
from tempo_eval.io._paced import AHEAD, PacedReader
from tempo_eval.io.stream import open_stream

BLOCK = 1 << 22  # the streaming CSV reader's block size


def _big_csv(path: Path, blocks: int) -> Path:
    row = "q{},What happened to the bridge in 1990?,It was rebuilt in 1991.,\"[\"\"In 1991 it was rebuilt.\"\"]\"\n"
    with path.open("w", encoding="utf-8") as out:
        out.write("query_id,query,answer,contexts\n")
        i = 0
        while out.tell() < blocks * BLOCK:
            out.write("".join(row.format(i + k) for k in range(1000)))
            i += 1000
    return path


def test_a_streamed_csv_is_read_only_a_few_blocks_ahead_of_the_first_batch(tmp_path, monkeypatch) -> None:
    path = _big_csv(tmp_path / "big.csv", blocks=14)
    opened: list = []
    real = stream_module._decompressed

    @contextlib.contextmanager
    def recorded(*args):
        with real(*args) as text:
            opened.append(text)
            yield text

    monkeypatch.setattr(stream_module, "_decompressed", recorded)
    stream = open_stream(path, batch_rows=1000)
    batches = stream.batches()
    offset, frame = next(batches)
    assert offset == 0 and len(frame) == 1000
    time.sleep(1.0)  # time for the reading thread to run ahead, were it free to
    read = opened[-1].tell()  # the file the streaming reader reads
    assert read <= (AHEAD + 2) * BLOCK, f"{read / BLOCK:.1f} blocks read for the first batch"
    rows = sum(len(f) for _, f in batches) + len(frame)  # and every row still comes
    assert rows == stream.n_rows == len(pd.read_csv(path))


def test_paced_reader_waits_for_a_batch_then_for_nothing_once_finished() -> None:
    paced = PacedReader(io.BytesIO(b"abcdef"), ahead=1)
    assert paced.read(2) == b"ab"
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(paced.read(2)))
    reader.start()
    reader.join(0.3)
    assert reader.is_alive() and not got  # waits: no batch taken since the first read
    paced.taken()
    reader.join(5)
    assert got == [b"cd"]
    paced.finish()
    assert paced.read(2) == b""  # abandoned: the thread finds the end at once


def test_paced_reader_reads_on_once_the_caller_has_waited_for_a_batch() -> None:
    # a batch that needs more blocks than `ahead`, or a block that gives no batch: no deadlock
    paced = PacedReader(io.BytesIO(b"abcdef"), ahead=1, stuck_s=0.2)
    assert paced.read(2) == b"ab"
    paced.asking(True)
    start = time.perf_counter()
    assert paced.read(2) == b"cd"
    assert 0.15 <= time.perf_counter() - start < 5


ABANDON = """
import sys
from tempo_eval.io.stream import open_stream
batches = open_stream(sys.argv[1], batch_rows=1000).batches()
next(batches)
print("one batch")
"""


def test_a_stream_abandoned_part_way_lets_the_process_exit_cleanly(tmp_path) -> None:
    # an error in a later batch ends the command with the reading thread waiting: it must not
    # be inside Python when the interpreter ends (that aborts the process: exit status 134)
    import subprocess
    import sys

    path = _big_csv(tmp_path / "big.csv", blocks=12)
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", ABANDON, str(path)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip() == "one batch"
