"""SeenKeys (the compact record of query ids read so far) finds the same first repeated key, and
the row and line it was first seen on, as a plain dict of every key does."""

from __future__ import annotations

import random
import tracemalloc

from tempo_eval.io.seen_keys import SeenKeys


def _first_repeat_by_dict(batches):
    seen = {}
    for keys, rows, lines in batches:
        for index, key in enumerate(keys):
            if key in seen:
                return index, *seen[key]
            seen[key] = (rows[index], None if lines is None else lines[index])
    return None


def _first_repeat(batches):
    seen = SeenKeys()
    for keys, rows, lines in batches:
        found = seen.add_batch(keys, rows, lines)
        if found is not None:
            return found
    return None


def _batches(keys, sizes, with_lines):
    out, offset = [], 0
    for size in sizes:
        part = keys[offset:offset + size]
        rows = list(range(offset, offset + len(part)))
        lines = [2 * row + 3 for row in rows] if with_lines else None
        out.append((part, rows, lines))
        offset += size
    return out


def test_no_repeat_in_many_batches_is_none_and_everything_is_kept():
    keys = [f"q{i}" for i in range(20_000)]
    seen = SeenKeys()
    for part, rows, lines in _batches(keys, [997] * 21, False):
        assert seen.add_batch(part, rows, lines) is None
    assert len(seen) == 20_000


def test_random_repeats_match_a_dict():
    rng = random.Random(5)
    for trial in range(300):
        n = rng.randint(1, 400)
        pool = rng.randint(1, 2 * n)  # a small pool repeats often, a large one rarely
        keys = [f"id-{rng.randrange(pool)}" for _ in range(n)]
        if trial % 3 == 0:  # run and query id pairs
            keys = [(rng.choice(["bm25", "dense", None]), key) for key in keys]
        sizes = [rng.randint(1, 60) for _ in range(n)]
        batches = _batches(keys, sizes, with_lines=trial % 2 == 0)
        batches = [b for b in batches if b[0]]
        assert _first_repeat(batches) == _first_repeat_by_dict(batches), trial


def test_a_repeat_within_the_batch_before_one_across_batches_is_reported_first():
    batches = _batches(["a", "b", "c", "x", "x", "a"], [3, 3], with_lines=True)
    assert _first_repeat(batches) == (1, 3, 9)  # "x" at row 4 repeats row 3 (line 9)


def test_keys_of_other_types_are_not_confused_with_their_text():
    seen = SeenKeys()
    assert seen.add_batch([("run", "1")], [0]) is None
    assert seen.add_batch([("run", 1), "run1", ("run1",)], [1, 2, 3]) is None
    assert seen.add_batch([("run", "1")], [4]) == (0, 0, None)


def test_memory_per_key_is_a_small_fraction_of_a_dict():
    tracemalloc.start()
    try:
        seen = SeenKeys()
        for start in range(0, 200_000, 1_000):
            keys = [f"q{i}" for i in range(start, start + 1_000)]
            assert seen.add_batch(keys, range(start, start + 1_000)) is None
        del keys
        kept = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert kept / 200_000 < 40  # a dict of the id strings keeps ~180 bytes a key
