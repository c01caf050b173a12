"""Packed details: what `_pack` writes `_unpack` reads, including details packed before the
compressor's window and memory level were made small (the stored data of older workspaces)."""

from __future__ import annotations

import json
import zlib

from tempo_eval.store.packing import _TAG_ZDICT_1, _ZDICT_1, _pack, _unpack


def _details(n_years: int) -> str:
    return json.dumps({
        "mode": "focus_time", "aft": list(range(1900, 1900 + n_years)),
        "years": [{"year": 1900 + i, "grounded": i % 2 == 0, "answer_spans": [f"in {1900 + i}"]}
                  for i in range(n_years)],
    }, ensure_ascii=False)


def test_details_of_any_length_round_trip():
    for n in (0, 3, 40, 2000):  # from short text to far past the compressor's window
        text = _details(n) + " ünïcode"
        assert _unpack(_pack(text, details=True)) == text


def test_details_packed_with_zlibs_default_window_still_read():
    text = _details(30)
    packer = zlib.compressobj(6, zlib.DEFLATED, 15, 9, zlib.Z_DEFAULT_STRATEGY, _ZDICT_1)
    stored = _TAG_ZDICT_1 + packer.compress(text.encode("utf-8")) + packer.flush()
    assert _unpack(stored) == text


def test_packed_details_are_compressed():
    text = _details(30)
    assert len(_pack(text, details=True)) < len(text) / 3
