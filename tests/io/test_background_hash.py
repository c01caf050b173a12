"""The streamed reader's first pass hashes the file in a thread beside its checks
(`tempo_eval.io._prepass.BackgroundHash`): the same content hash as before, and no thread left
behind when the pass refuses the file."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import threading

import pytest

from tempo_eval.io import _prepass
from tempo_eval.io.dataset import load_dataset
from tempo_eval.io.errors import InputError
from tempo_eval.io.stream import open_stream


def _csv_bytes(n: int) -> bytes:
    lines = ["query_id,query,answer,contexts"]
    lines += [f'q{i},What happened in {1990 + i % 20}?,It opened in {1991 + i % 9}.,"{json.dumps(["Built in 1990."]).replace(chr(34), chr(34) * 2)}"'
              for i in range(n)]
    return ("\n".join(lines) + "\n").encode()


def _hash_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "content-hash"]


@pytest.mark.parametrize("compressed", [False, True])
def test_the_streamed_content_hash_is_the_files_sha256_and_load_datasets(tmp_path, compressed):
    data = _csv_bytes(3000)
    path = tmp_path / ("d.csv.gz" if compressed else "d.csv")
    path.write_bytes(gzip.compress(data) if compressed else data)
    stream = open_stream(path)
    assert stream.content_hash == hashlib.sha256(path.read_bytes()).hexdigest()
    assert stream.content_hash == load_dataset(path.read_bytes(), name=path.name).content_hash
    assert sum(len(frame) for _, frame in stream.batches()) == 3000
    assert _hash_threads() == []


def test_a_file_the_first_pass_refuses_leaves_no_hashing_thread(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(b"query_id,query\n" + bytes(range(256)) * 40_000)  # binary after the header
    with pytest.raises(InputError):
        open_stream(path)
    assert _hash_threads() == []


def test_a_cancelled_hash_stops_reading():
    class Endless(io.RawIOBase):
        reads = 0

        def readable(self):
            return True

        def readinto(self, buffer):
            Endless.reads += 1
            buffer[:] = b"x" * len(buffer)
            return len(buffer)

    hashing = _prepass.BackgroundHash(io.BufferedReader(Endless()))
    hashing.cancel()
    reads = Endless.reads
    assert _hash_threads() == [] and reads < 1000


def test_a_read_error_is_raised_by_result():
    class Broken(io.RawIOBase):
        def readable(self):
            return True

        def readinto(self, buffer):
            raise OSError("the disk went away")

    hashing = _prepass.BackgroundHash(io.BufferedReader(Broken()))
    with pytest.raises(OSError, match="went away"):
        hashing.result()
