"""The keys (query ids, or run and query id) of the rows read so far, kept compactly, so a file
streamed in batches is checked for a key seen twice with memory that does not grow ~180 bytes a
row (a dict of the id strings: 130 MB at 750,000 rows), but 24.

Each key is kept as two independent 64-bit hashes (Python's hash of the key, and of its repr: a
different string, hashed again) and the row it was first seen on. A key counts as seen when both
hashes match one kept before: two different keys match with a probability of about 2**-128 a
pair. The hashes are kept in sorted numpy arrays, merged as they grow (a batch becomes a level;
two levels of about the same size are merged), so a batch is looked up with one binary search
per level, of which there are about log2(batches).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

_NO_LINE = -1


class SeenKeys:
    """Keys seen so far, each with the row (and line, where given) it was first seen on."""

    def __init__(self) -> None:
        # each level: first hashes (sorted), second hashes, rows, lines (-1: none), aligned
        self._levels: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def __len__(self) -> int:
        return sum(len(level[0]) for level in self._levels)

    def add_batch(
        self, keys: Sequence[Any], rows: Sequence[int], lines: Sequence[int | None] | None = None
    ) -> tuple[int, int, int | None] | None:
        """Record a batch's keys, in order; the first one seen before (in an earlier batch or
        earlier in this batch) gives (its index in the batch, the row it was first seen on, that
        row's line or None), and then nothing of the batch is recorded."""
        within: dict[Any, int] = {}
        repeated_at: int | None = None  # the first index whose key came earlier in this batch
        for index, key in enumerate(keys):
            if within.setdefault(key, index) != index:
                repeated_at = index
                break
        first_hashes = np.fromiter(map(hash, keys), dtype=np.int64, count=len(keys))
        second_hashes = np.fromiter(map(hash, map(repr, keys)), dtype=np.int64, count=len(keys))
        order = np.argsort(first_hashes, kind="stable")
        earlier = self._find(first_hashes[order], order, second_hashes)
        if earlier is not None and (repeated_at is None or earlier[0] < repeated_at):
            return earlier
        if repeated_at is not None:
            first = within[keys[repeated_at]]
            return repeated_at, int(rows[first]), None if lines is None else lines[first]
        self._add(order, first_hashes, second_hashes, rows, lines)
        return None

    def _find(self, sorted_firsts: np.ndarray, order: np.ndarray,
              second_hashes: np.ndarray) -> tuple[int, int, int | None] | None:
        """The batch's first key (by index) kept before; the needles are sorted, which makes the
        binary searches walk the level in order."""
        found: tuple[int, int, int | None] | None = None
        for firsts, seconds, rows, lines in self._levels:
            starts = np.searchsorted(firsts, sorted_firsts)
            hits = firsts[np.minimum(starts, len(firsts) - 1)] == sorted_firsts
            for position in np.flatnonzero(hits):  # first hash matched: rare unless repeated
                index = int(order[position])
                if found is not None and index >= found[0]:
                    continue
                at = int(starts[position])
                while at < len(firsts) and firsts[at] == sorted_firsts[position]:
                    if seconds[at] == second_hashes[index]:
                        line = int(lines[at])
                        found = index, int(rows[at]), None if line == _NO_LINE else line
                        break
                    at += 1
        return found

    def _add(self, order: np.ndarray, first_hashes: np.ndarray, second_hashes: np.ndarray,
             rows: Sequence[int], lines: Sequence[int | None] | None) -> None:
        row_array = np.asarray(rows, dtype=np.int64)
        line_array = (np.full(len(row_array), _NO_LINE, dtype=np.int64) if lines is None else
                      np.fromiter((_NO_LINE if line is None else line for line in lines), dtype=np.int64,
                                  count=len(row_array)))
        self._levels.append((first_hashes[order], second_hashes[order], row_array[order], line_array[order]))
        # merge the newest levels while the last is at least half the one before: about log2 levels
        while len(self._levels) > 1 and len(self._levels[-1][0]) * 2 >= len(self._levels[-2][0]):
            newer, older = self._levels.pop(), self._levels.pop()
            merged = [np.concatenate((a, b)) for a, b in zip(older, newer, strict=True)]
            merge_order = np.argsort(merged[0], kind="stable")  # two sorted runs: a linear merge
            self._levels.append(tuple(part[merge_order] for part in merged))  # type: ignore[arg-type]
